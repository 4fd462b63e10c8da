/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/wire/wire_opcode.c: the opcode table. */
#include "lib/wire/wire_opcode.c"

#include "ut_common.h"

static const uint8_t ut_ext_lens[DRNIC_WIRE_EXT_IDX_NUM] = {
	[DRNIC_WIRE_EXT_IDX_DETH] = 8,
	[DRNIC_WIRE_EXT_IDX_XRCETH] = 4,
	[DRNIC_WIRE_EXT_IDX_RETH] = 16,
	[DRNIC_WIRE_EXT_IDX_ATOMICETH] = 28,
	[DRNIC_WIRE_EXT_IDX_AETH] = 4,
	[DRNIC_WIRE_EXT_IDX_ATOMICACKETH] = 8,
	[DRNIC_WIRE_EXT_IDX_IMMDT] = 4,
	[DRNIC_WIRE_EXT_IDX_IETH] = 4,
	[DRNIC_WIRE_EXT_IDX_CNP] = 16,
};

/* Every supported entry is self-consistent: lengths, offsets, flags. */
static void
test_table_consistent(void)
{
	unsigned int op, i, supported = 0;

	for (op = 0; op < 256; op++) {
		const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info((uint8_t)op);
		uint32_t len = 0, next = DRNIC_WIRE_BTH_LEN;

		CU_ASSERT_PTR_EQUAL(oi, &drnic_wire_opcodes[op]);
		if (oi->name == NULL) {
			CU_ASSERT_EQUAL(oi->flags, 0);
			CU_ASSERT_EQUAL(oi->transport, DRNIC_WIRE_TR_NONE);
			CU_ASSERT_STRING_EQUAL(drnic_wire_opcode_name((uint8_t)op), "UNKNOWN");
			continue;
		}
		CU_ASSERT_STRING_EQUAL(drnic_wire_opcode_name((uint8_t)op), oi->name);
		CU_ASSERT_NOT_EQUAL(oi->transport, DRNIC_WIRE_TR_NONE);
		if (!(oi->flags & DRNIC_WIRE_OPF_SUPPORTED))
			continue;
		supported++;
		CU_ASSERT_NOT_EQUAL(oi->pos, 0);
		for (i = 0; i < DRNIC_WIRE_EXT_IDX_NUM; i++) {
			if (oi->ext & (1u << i)) {
				/* Headers follow each other in bit order, no gaps. */
				CU_ASSERT_EQUAL(oi->ext_off[i], next);
				next += ut_ext_lens[i];
				len += ut_ext_lens[i];
			} else {
				CU_ASSERT_EQUAL(oi->ext_off[i], 0);
			}
		}
		CU_ASSERT_EQUAL(oi->ext_len, len);
		CU_ASSERT_EQUAL(oi->hdr_len, DRNIC_WIRE_BTH_LEN + len);
		/* Flag rules. */
		CU_ASSERT_EQUAL(!!(oi->flags & DRNIC_WIRE_OPF_ACK), !!(oi->ext & DRNIC_WIRE_EXT_AETH));
		CU_ASSERT_EQUAL(!!(oi->flags & DRNIC_WIRE_OPF_IMM), !!(oi->ext & DRNIC_WIRE_EXT_IMMDT));
		CU_ASSERT_EQUAL(!!(oi->flags & DRNIC_WIRE_OPF_INV), !!(oi->ext & DRNIC_WIRE_EXT_IETH));
		if (oi->flags & DRNIC_WIRE_OPF_PAYLOAD_REQ)
			CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_PAYLOAD);
		/* FIRST and MIDDLE carry exactly one MTU; LAST at least a byte. */
		CU_ASSERT_EQUAL(!!(oi->flags & DRNIC_WIRE_OPF_FULL_MTU),
				oi->pos == DRNIC_WIRE_POS_FIRST || oi->pos == DRNIC_WIRE_POS_MIDDLE);
		if (oi->pos == DRNIC_WIRE_POS_LAST)
			CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_PAYLOAD_REQ);
		if (oi->pos == DRNIC_WIRE_POS_ONLY)
			CU_ASSERT_FALSE(oi->flags & DRNIC_WIRE_OPF_PAYLOAD_REQ);
		if (oi->transport != DRNIC_WIRE_TR_CNP)
			CU_ASSERT_EQUAL(!!(oi->flags & DRNIC_WIRE_OPF_REQUEST),
					!(oi->flags & DRNIC_WIRE_OPF_RESPONSE));
	}
	/* RC 0x00-0x14 + 0x16, 0x17, 0x1D (24), UC 12, UD 2, CNP 1, XRC as RC
	 * without ATOMIC WRITE (23). */
	CU_ASSERT_EQUAL(supported, 24 + 12 + 2 + 1 + 23);
}

static void
test_table_entries(void)
{
	const struct drnic_wire_opinfo *oi;
	unsigned int op;

	for (op = 0x00; op <= 0x17; op++) {
		oi = drnic_wire_opcode_info((uint8_t)op);
		CU_ASSERT_EQUAL(!!(oi->flags & DRNIC_WIRE_OPF_SUPPORTED), op != 0x15);
		if (op != 0x15)
			CU_ASSERT_EQUAL(oi->transport, DRNIC_WIRE_TR_RC);
	}
	CU_ASSERT_PTR_NULL(drnic_wire_opcode_info(0x15)->name);
	for (op = 0x20; op < 0x40; op++) {
		oi = drnic_wire_opcode_info((uint8_t)op);
		CU_ASSERT_EQUAL(!!(oi->flags & DRNIC_WIRE_OPF_SUPPORTED), op <= 0x2B);
		CU_ASSERT_EQUAL(oi->name != NULL, op <= 0x2B);
		/* UC shares the SEND/WRITE rows of RC. */
		if (op <= 0x2B) {
			CU_ASSERT_EQUAL(oi->ext, drnic_wire_opcodes[op - 0x20].ext);
			CU_ASSERT_EQUAL(oi->flags, drnic_wire_opcodes[op - 0x20].flags);
			CU_ASSERT_EQUAL(oi->transport, DRNIC_WIRE_TR_UC);
			CU_ASSERT_STRING_EQUAL(oi->name + 2, drnic_wire_opcodes[op - 0x20].name + 2);
		}
	}

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_SEND_FIRST);
	CU_ASSERT_STRING_EQUAL(oi->name, "RC_SEND_FIRST");
	CU_ASSERT_EQUAL(oi->hdr_len, 12);
	CU_ASSERT_EQUAL(oi->pos, DRNIC_WIRE_POS_FIRST);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	CU_ASSERT_EQUAL(oi->ext, DRNIC_WIRE_EXT_RETH | DRNIC_WIRE_EXT_IMMDT);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_RETH], 12);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_IMMDT], 28);
	CU_ASSERT_EQUAL(oi->hdr_len, 32);
	CU_ASSERT_EQUAL(oi->pos, DRNIC_WIRE_POS_ONLY);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_EQUAL(oi->ext, DRNIC_WIRE_EXT_RETH);
	CU_ASSERT_FALSE(oi->flags & DRNIC_WIRE_OPF_PAYLOAD);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_READ);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_REQUEST);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
	CU_ASSERT_EQUAL(oi->ext, 0);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_RESPONSE);
	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY);
	CU_ASSERT_EQUAL(oi->ext, DRNIC_WIRE_EXT_AETH);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_PAYLOAD);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_ACKNOWLEDGE);
	CU_ASSERT_EQUAL(oi->hdr_len, 16);
	CU_ASSERT_FALSE(oi->flags & DRNIC_WIRE_OPF_PAYLOAD);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_AETH], 12);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_ATOMICACKETH], 16);
	CU_ASSERT_EQUAL(oi->hdr_len, 24);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_COMPARE_SWAP);
	CU_ASSERT_EQUAL(oi->hdr_len, 40);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_ATOMIC);
	CU_ASSERT_EQUAL(drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_FETCH_ADD)->hdr_len, 40);

	/* IBA 1.5 ATOMIC WRITE: RETH, then a payload (8 bytes: the responder checks it). */
	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_ATOMIC_WRITE);
	CU_ASSERT_STRING_EQUAL(oi->name, "RC_ATOMIC_WRITE");
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_SUPPORTED);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_REQUEST);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_WRITE);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_ATOMIC_WRITE);
	CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_PAYLOAD);
	CU_ASSERT_FALSE(oi->flags & DRNIC_WIRE_OPF_ATOMIC);
	CU_ASSERT_EQUAL(oi->ext, DRNIC_WIRE_EXT_RETH);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_RETH], 12);
	CU_ASSERT_EQUAL(oi->hdr_len, 28);
	CU_ASSERT_EQUAL(oi->pos, DRNIC_WIRE_POS_ONLY);
	CU_ASSERT_FALSE(drnic_wire_opcode_info(0x1C)->flags & DRNIC_WIRE_OPF_SUPPORTED);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_INVALIDATE);
	CU_ASSERT_EQUAL(oi->ext, DRNIC_WIRE_EXT_IETH);
	CU_ASSERT_EQUAL(oi->hdr_len, 16);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE);
	CU_ASSERT_EQUAL(oi->transport, DRNIC_WIRE_TR_UD);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_DETH], 12);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_IMMDT], 20);
	CU_ASSERT_EQUAL(oi->hdr_len, 24);
	CU_ASSERT_EQUAL(drnic_wire_opcode_info(0x66)->name, NULL);

	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_CNP);
	CU_ASSERT_STRING_EQUAL(oi->name, "CNP");
	CU_ASSERT_EQUAL(oi->transport, DRNIC_WIRE_TR_CNP);
	CU_ASSERT_EQUAL(oi->hdr_len, 28);
	CU_ASSERT_FALSE(oi->flags & DRNIC_WIRE_OPF_PAYLOAD);

	/* Defined but not supported: named, not buildable or parseable. */
	oi = drnic_wire_opcode_info(0x44);
	CU_ASSERT_STRING_EQUAL(oi->name, "RD_SEND_ONLY");
	CU_ASSERT_EQUAL(oi->transport, DRNIC_WIRE_TR_RD);
	CU_ASSERT_FALSE(oi->flags & DRNIC_WIRE_OPF_SUPPORTED);
	CU_ASSERT_STRING_EQUAL(drnic_wire_opcode_name(0xB7), "XRC_SEND_ONLY_WITH_INVALIDATE");
	CU_ASSERT_STRING_EQUAL(drnic_wire_opcode_name(0x1C), "RC_FLUSH");
	CU_ASSERT_STRING_EQUAL(drnic_wire_opcode_name(0xFF), "UNKNOWN");
	CU_ASSERT_STRING_EQUAL(drnic_wire_opcode_name(0xB5), "UNKNOWN");
	CU_ASSERT_STRING_EQUAL(drnic_wire_opcode_name(0x80), "UNKNOWN");
}

/* XRC is RC's operations at 0xA0; its requests carry the XRCETH right
 * after the BTH, before RETH / AtomicETH / ImmDt / IETH; responses do not. */
static void
test_xrc_entries(void)
{
	const struct drnic_wire_opinfo *oi, *rc;
	unsigned int op;

	for (op = 0xA0; op <= 0xB7; op++) {
		oi = drnic_wire_opcode_info((uint8_t)op);
		rc = drnic_wire_opcode_info((uint8_t)(op - 0xA0));
		CU_ASSERT_EQUAL(oi->name != NULL, op != 0xB5);
		if (op == 0xB5)
			continue;
		CU_ASSERT(oi->flags & DRNIC_WIRE_OPF_SUPPORTED);
		CU_ASSERT_EQUAL(oi->transport, DRNIC_WIRE_TR_XRC);
		CU_ASSERT_EQUAL(oi->flags, rc->flags);
		CU_ASSERT_EQUAL(oi->pos, rc->pos);
		CU_ASSERT_STRING_EQUAL(oi->name + 3, rc->name + 2);
		CU_ASSERT_EQUAL(DRNIC_WIRE_OP_XRC_OF(op - 0xA0), op);
		if (oi->flags & DRNIC_WIRE_OPF_REQUEST) {
			CU_ASSERT_EQUAL(oi->ext, rc->ext | DRNIC_WIRE_EXT_XRCETH);
			CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_XRCETH], 12);
			CU_ASSERT_EQUAL(oi->hdr_len, rc->hdr_len + DRNIC_WIRE_XRCETH_LEN);
		} else {
			CU_ASSERT_EQUAL(oi->ext, rc->ext);
			CU_ASSERT_EQUAL(oi->hdr_len, rc->hdr_len);
		}
	}
	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	CU_ASSERT_STRING_EQUAL(oi->name, "XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_RETH], 16);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_IMMDT], 32);
	CU_ASSERT_EQUAL(oi->hdr_len, 36);
	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_XRC_COMPARE_SWAP);
	CU_ASSERT_EQUAL(oi->ext_off[DRNIC_WIRE_EXT_IDX_ATOMICETH], 16);
	CU_ASSERT_EQUAL(oi->hdr_len, 44);
	oi = drnic_wire_opcode_info(DRNIC_WIRE_OP_XRC_ACKNOWLEDGE);
	CU_ASSERT_EQUAL(oi->ext, DRNIC_WIRE_EXT_AETH);
	CU_ASSERT_EQUAL(oi->hdr_len, 16);
	CU_ASSERT_STRING_EQUAL(drnic_wire_opcode_name(0xB7), "XRC_SEND_ONLY_WITH_INVALIDATE");
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("wire_opcode", NULL, NULL);
	CU_add_test(s, "table_consistent", test_table_consistent);
	CU_add_test(s, "table_entries", test_table_entries);
	CU_add_test(s, "xrc_entries", test_xrc_entries);
	return ut_run_all();
}
