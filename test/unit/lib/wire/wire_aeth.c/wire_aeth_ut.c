/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/wire/wire_aeth.c (AETH syndromes, RNR timer and credit
 * tables) and the inline helpers of drnic_wire.h (PSN arithmetic, header
 * accessors, UDP source port, MTU).
 */
#include "lib/wire/wire_aeth.c"

#include "ut_common.h"

/* The RNR NAK timer table of IBA (ms), as given in the issue. */
static const double ut_rnr_ms[32] = {
	655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12,
	0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92,
	2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72,
	40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52,
};

static void
test_rnr_table(void)
{
	uint8_t code;

	for (code = 0; code < 32; code++) {
		uint32_t us = (uint32_t)(ut_rnr_ms[code] * 1000.0 + 0.5);

		CU_ASSERT_EQUAL(drnic_aeth_rnr_timer_us(code), us);
		/* The smallest code reaching a table value is that code. */
		if (code > 0)
			CU_ASSERT_EQUAL(drnic_aeth_rnr_code(us), code);
		/* Just above a value needs the next code (or 0 after the last). */
		if (code > 0 && code < 31)
			CU_ASSERT_EQUAL(drnic_aeth_rnr_code(us + 1), code + 1);
	}
	CU_ASSERT_EQUAL(drnic_aeth_rnr_timer_us(32), drnic_aeth_rnr_timer_us(0));
	CU_ASSERT_EQUAL(drnic_aeth_rnr_code(0), 1);
	CU_ASSERT_EQUAL(drnic_aeth_rnr_code(1), 1);
	CU_ASSERT_EQUAL(drnic_aeth_rnr_code(491521), 0);
	CU_ASSERT_EQUAL(drnic_aeth_rnr_code(655360), 0);
	CU_ASSERT_EQUAL(drnic_aeth_rnr_code(UINT32_MAX), 0);
}

static void
test_credits(void)
{
	static const int32_t expect[32] = {
		0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
		16384, 24576, 32768, -1,
	};
	uint8_t code;
	uint32_t n;

	for (code = 0; code < 32; code++)
		CU_ASSERT_EQUAL(drnic_aeth_credits(code), expect[code]);
	for (code = 0; code < 31; code++)
		CU_ASSERT_EQUAL(drnic_aeth_credit_code((uint32_t)expect[code]), code);
	/* Never advertise more than there is. */
	for (n = 0; n < 40000; n += 7)
		CU_ASSERT((uint32_t)drnic_aeth_credits(drnic_aeth_credit_code(n)) <= n);
	CU_ASSERT_EQUAL(drnic_aeth_credit_code(5), 4);
	CU_ASSERT_EQUAL(drnic_aeth_credit_code(UINT32_MAX), 30);
}

static void
test_syndrome(void)
{
	unsigned int type, v;
	struct drnic_wire_aeth a;

	for (type = 0; type < 4; type++) {
		for (v = 0; v < 32; v++) {
			uint8_t s = drnic_aeth_syndrome((enum drnic_aeth_type)type, (uint8_t)v);

			CU_ASSERT_EQUAL(s & 0x80, 0);
			CU_ASSERT_EQUAL(drnic_aeth_type(s), type);
			CU_ASSERT_EQUAL(drnic_aeth_value(s), v);
			drnic_wire_aeth_set(&a, s, 0xABCDEF + v);
			CU_ASSERT_EQUAL(drnic_wire_aeth_syndrome(&a), s);
			CU_ASSERT_EQUAL(drnic_wire_aeth_msn(&a), (0xABCDEF + v) & DRNIC_MSN_MASK);
		}
	}
	/* Known encodings (IBA 9.7.5.1): ACK 0x00-0x1F, RNR 0x20-0x3F, NAK 0x60-0x64. */
	CU_ASSERT_EQUAL(drnic_aeth_syndrome(DRNIC_AETH_ACK, DRNIC_AETH_CREDIT_INVALID), 0x1F);
	CU_ASSERT_EQUAL(drnic_aeth_syndrome(DRNIC_AETH_RNR_NAK, 14), 0x2E);
	CU_ASSERT_EQUAL(drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR), 0x60);
	CU_ASSERT_EQUAL(drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0x61);
	CU_ASSERT_EQUAL(drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_ACCESS), 0x62);
	CU_ASSERT_EQUAL(drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_OP), 0x63);
	CU_ASSERT_EQUAL(drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_RD_REQ), 0x64);
	/* On the wire: syndrome in the top byte, MSN below. */
	drnic_wire_aeth_set(&a, 0x62, 0x1123456);
	CU_ASSERT_EQUAL(((uint8_t *)&a)[0], 0x62);
	CU_ASSERT_EQUAL(((uint8_t *)&a)[1], 0x12);
	CU_ASSERT_EQUAL(((uint8_t *)&a)[3], 0x56);

	CU_ASSERT_STRING_EQUAL(drnic_aeth_name(0x1F), "ACK");
	CU_ASSERT_STRING_EQUAL(drnic_aeth_name(0x21), "RNR_NAK");
	CU_ASSERT_STRING_EQUAL(drnic_aeth_name(0x60), "NAK_PSN_SEQ_ERR");
	CU_ASSERT_STRING_EQUAL(drnic_aeth_name(0x63), "NAK_REMOTE_OP");
	CU_ASSERT_STRING_EQUAL(drnic_aeth_name(0x64), "NAK_INVALID_RD_REQ");
	CU_ASSERT_STRING_EQUAL(drnic_aeth_name(0x65), "NAK_RESERVED");
	CU_ASSERT_STRING_EQUAL(drnic_aeth_name(0x40), "RESERVED");
}

static void
test_psn(void)
{
	CU_ASSERT_EQUAL(drnic_psn_mask(0x1000000), 0);
	CU_ASSERT_EQUAL(drnic_psn_mask(0xFFFFFFFF), 0xFFFFFF);
	CU_ASSERT_EQUAL(drnic_psn_add(0xFFFFFF, 1), 0);
	CU_ASSERT_EQUAL(drnic_psn_add(0xFFFFFE, 5), 3);
	CU_ASSERT_EQUAL(drnic_psn_add(5, 0xFFFFFF), 4);   /* adding 2^24-1 steps back one */
	CU_ASSERT_EQUAL(drnic_psn_sub(0, 1), 0xFFFFFF);
	CU_ASSERT_EQUAL(drnic_psn_sub(3, 0xFFFFFE), 5);
	CU_ASSERT_EQUAL(drnic_psn_sub(10, 4), 6);

	CU_ASSERT_EQUAL(drnic_psn_diff(0, 0xFFFFFF), 1);
	CU_ASSERT_EQUAL(drnic_psn_diff(0xFFFFFF, 0), -1);
	CU_ASSERT_EQUAL(drnic_psn_diff(5, 5), 0);
	CU_ASSERT_EQUAL(drnic_psn_diff(0x7FFFFF, 0), 0x7FFFFF);      /* largest ahead */
	CU_ASSERT_EQUAL(drnic_psn_diff(0x800000, 0), -0x800000);     /* half way is behind */
	CU_ASSERT_EQUAL(drnic_psn_diff(0, 0x800000), -0x800000);
	CU_ASSERT_EQUAL(drnic_psn_diff(0x100, 0xFFFF00), 0x200);
	CU_ASSERT_EQUAL(drnic_psn_diff(0xFFFF00, 0x100), -0x200);
	/* Bits above 24 are ignored. */
	CU_ASSERT_EQUAL(drnic_psn_diff(0xFF000001, 0x00000000), 1);

	CU_ASSERT_TRUE(drnic_psn_lt(0xFFFFFF, 0));
	CU_ASSERT_FALSE(drnic_psn_lt(0, 0xFFFFFF));
	CU_ASSERT_TRUE(drnic_psn_gt(2, 0xFFFFF0));
	CU_ASSERT_TRUE(drnic_psn_le(7, 7));
	CU_ASSERT_TRUE(drnic_psn_ge(7, 7));
	CU_ASSERT_FALSE(drnic_psn_lt(7, 7));
	CU_ASSERT_TRUE(drnic_psn_lt(0x123456, 0x123457));
	CU_ASSERT_TRUE(drnic_psn_ge(0x123457, 0x123456));
}

/* Every pair around the wrap point agrees with a model on 64-bit integers. */
static void
test_psn_model(void)
{
	static const int64_t pts[] = { 0, 1, 2, 0x7FFFFE, 0x7FFFFF, 0x800000, 0x800001,
				       0xFFFFFE, 0xFFFFFF };
	unsigned int i, j;

	for (i = 0; i < RTE_DIM(pts); i++) {
		for (j = 0; j < RTE_DIM(pts); j++) {
			int64_t d = (pts[i] - pts[j]) & 0xFFFFFF;

			if (d >= 0x800000)
				d -= 0x1000000;
			CU_ASSERT_EQUAL(drnic_psn_diff((uint32_t)pts[i], (uint32_t)pts[j]), d);
			CU_ASSERT_EQUAL(drnic_psn_lt((uint32_t)pts[i], (uint32_t)pts[j]), d < 0);
			CU_ASSERT_EQUAL(drnic_psn_add((uint32_t)pts[j], (uint32_t)(d & 0xFFFFFF)),
					(uint32_t)pts[i]);
		}
	}
}

static void
test_bth_accessors(void)
{
	struct drnic_wire_bth b;
	const uint8_t *raw = (const uint8_t *)&b;

	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_bth) != DRNIC_WIRE_BTH_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_reth) != DRNIC_WIRE_RETH_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_atomiceth) != DRNIC_WIRE_ATOMICETH_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_atomicacketh) != DRNIC_WIRE_ATOMICACKETH_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_deth) != DRNIC_WIRE_DETH_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_ipv4) != DRNIC_WIRE_IPV4_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_ipv6) != DRNIC_WIRE_IPV6_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_eth) != DRNIC_WIRE_ETH_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct drnic_wire_udp) != DRNIC_WIRE_UDP_LEN);

	drnic_wire_bth_set(&b, 0x0A, true, false, 2, 0, 0xFFFF, false, true, 0x1234567,
			   true, 0xABCDEF12);
	CU_ASSERT_EQUAL(raw[0], 0x0A);
	CU_ASSERT_EQUAL(raw[1], 0xA0);
	CU_ASSERT_EQUAL(raw[2], 0xFF);
	CU_ASSERT_EQUAL(raw[4], 0x40);
	CU_ASSERT_EQUAL(raw[5], 0x23);
	CU_ASSERT_EQUAL(raw[7], 0x67);
	CU_ASSERT_EQUAL(raw[8], 0x80);
	CU_ASSERT_EQUAL(raw[9], 0xCD);
	CU_ASSERT_EQUAL(raw[11], 0x12);
	CU_ASSERT_EQUAL(drnic_wire_bth_opcode(&b), 0x0A);
	CU_ASSERT_TRUE(drnic_wire_bth_se(&b));
	CU_ASSERT_FALSE(drnic_wire_bth_m(&b));
	CU_ASSERT_EQUAL(drnic_wire_bth_padcnt(&b), 2);
	CU_ASSERT_EQUAL(drnic_wire_bth_tver(&b), 0);
	CU_ASSERT_EQUAL(drnic_wire_bth_pkey(&b), 0xFFFF);
	CU_ASSERT_FALSE(drnic_wire_bth_fecn(&b));
	CU_ASSERT_TRUE(drnic_wire_bth_becn(&b));
	CU_ASSERT_EQUAL(drnic_wire_bth_dqpn(&b), 0x234567);
	CU_ASSERT_TRUE(drnic_wire_bth_ackreq(&b));
	CU_ASSERT_EQUAL(drnic_wire_bth_psn(&b), 0xCDEF12);

	drnic_wire_bth_set_psn(&b, 0x1000005);
	CU_ASSERT_EQUAL(drnic_wire_bth_psn(&b), 5);
	CU_ASSERT_TRUE(drnic_wire_bth_ackreq(&b));
	drnic_wire_bth_set_ackreq(&b, false);
	CU_ASSERT_FALSE(drnic_wire_bth_ackreq(&b));
	CU_ASSERT_EQUAL(drnic_wire_bth_psn(&b), 5);
	drnic_wire_bth_set_becn(&b, false);
	CU_ASSERT_FALSE(drnic_wire_bth_becn(&b));
	CU_ASSERT_EQUAL(drnic_wire_bth_dqpn(&b), 0x234567);
}

static void
test_other_accessors(void)
{
	struct drnic_wire_deth d;
	struct drnic_wire_reth r;
	const uint8_t *raw = (const uint8_t *)&r;

	drnic_wire_deth_set(&d, 0x80010000, 0xFF000001);
	CU_ASSERT_EQUAL(drnic_wire_deth_qkey(&d), 0x80010000);
	CU_ASSERT_EQUAL(drnic_wire_deth_sqpn(&d), 1);
	CU_ASSERT_EQUAL(((const uint8_t *)&d)[4], 0);   /* reserved byte */

	drnic_wire_reth_set(&r, 0x0102030405060708ull, 0xAABBCCDD, 4096);
	CU_ASSERT_EQUAL(raw[0], 0x01);
	CU_ASSERT_EQUAL(raw[7], 0x08);
	CU_ASSERT_EQUAL(raw[8], 0xAA);
	CU_ASSERT_EQUAL(raw[14], 0x10);
	CU_ASSERT_EQUAL(drnic_wire_reth_va(&r), 0x0102030405060708ull);
	CU_ASSERT_EQUAL(drnic_wire_reth_rkey(&r), 0xAABBCCDD);
	CU_ASSERT_EQUAL(drnic_wire_reth_dmalen(&r), 4096);
}

static void
test_udp_sport_and_mtu(void)
{
	uint32_t e, seen_low = 0, seen_high = 0;

	for (e = 0; e < 200000; e++) {
		uint16_t p = drnic_wire_udp_sport(e * 2654435761u);

		CU_ASSERT_FATAL(p >= 0xC000);
		seen_low |= p == 0xC000 ? 1 : 0;
		seen_high |= p == 0xFFFF ? 1 : 0;
	}
	CU_ASSERT_TRUE(seen_low && seen_high);
	/* Neighbouring QP numbers get different ports. */
	CU_ASSERT_NOT_EQUAL(drnic_wire_udp_sport(0x11), drnic_wire_udp_sport(0x12));

	CU_ASSERT_EQUAL(drnic_wire_mtu_bytes(DRNIC_WIRE_MTU_256), 256);
	CU_ASSERT_EQUAL(drnic_wire_mtu_bytes(DRNIC_WIRE_MTU_1024), 1024);
	CU_ASSERT_EQUAL(drnic_wire_mtu_bytes(DRNIC_WIRE_MTU_4096), 4096);
	CU_ASSERT_EQUAL(drnic_wire_mtu_bytes((enum drnic_wire_mtu)0), 0);
	CU_ASSERT_EQUAL(drnic_wire_mtu_bytes((enum drnic_wire_mtu)6), 0);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("wire_aeth", NULL, NULL);
	CU_add_test(s, "rnr_table", test_rnr_table);
	CU_add_test(s, "credits", test_credits);
	CU_add_test(s, "syndrome", test_syndrome);
	s = CU_add_suite("wire_inline", NULL, NULL);
	CU_add_test(s, "psn", test_psn);
	CU_add_test(s, "psn_model", test_psn_model);
	CU_add_test(s, "bth_accessors", test_bth_accessors);
	CU_add_test(s, "other_accessors", test_other_accessors);
	CU_add_test(s, "udp_sport_and_mtu", test_udp_sport_and_mtu);
	return ut_run_all();
}
