/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table: what each BTH opcode carries, as data (IBA vol. 1,
 * section 9.2 and table "Opcode Field"; CNP from annex A17).
 */
#include "drnic_wire.h"

/* Bytes of the extension headers in mask @e. */
#define WIRE_EXT_LEN(e) \
	(((e) & DRNIC_WIRE_EXT_DETH ? DRNIC_WIRE_DETH_LEN : 0) + \
	 ((e) & DRNIC_WIRE_EXT_XRCETH ? DRNIC_WIRE_XRCETH_LEN : 0) + \
	 ((e) & DRNIC_WIRE_EXT_RETH ? DRNIC_WIRE_RETH_LEN : 0) + \
	 ((e) & DRNIC_WIRE_EXT_ATOMICETH ? DRNIC_WIRE_ATOMICETH_LEN : 0) + \
	 ((e) & DRNIC_WIRE_EXT_AETH ? DRNIC_WIRE_AETH_LEN : 0) + \
	 ((e) & DRNIC_WIRE_EXT_ATOMICACKETH ? DRNIC_WIRE_ATOMICACKETH_LEN : 0) + \
	 ((e) & DRNIC_WIRE_EXT_IMMDT ? DRNIC_WIRE_IMMDT_LEN : 0) + \
	 ((e) & DRNIC_WIRE_EXT_IETH ? DRNIC_WIRE_IETH_LEN : 0) + \
	 ((e) & DRNIC_WIRE_EXT_CNP ? DRNIC_WIRE_CNP_RSVD_LEN : 0))

/* Offset from the BTH of extension header @i in mask @e: headers go in bit order. */
#define WIRE_EXT_OFF(e, i) \
	((e) & (1u << (i)) ? DRNIC_WIRE_BTH_LEN + WIRE_EXT_LEN((e) & ((1u << (i)) - 1)) : 0)

#define WIRE_OP(code, nm, tr, p, fl, e) \
	[code] = { \
		.name = nm, \
		.flags = (fl) | DRNIC_WIRE_OPF_SUPPORTED, \
		.ext = (e), \
		.transport = (tr), \
		.pos = (p), \
		.ext_len = WIRE_EXT_LEN(e), \
		.hdr_len = DRNIC_WIRE_BTH_LEN + WIRE_EXT_LEN(e), \
		.ext_off = { WIRE_EXT_OFF(e, 0), WIRE_EXT_OFF(e, 1), WIRE_EXT_OFF(e, 2), \
			     WIRE_EXT_OFF(e, 3), WIRE_EXT_OFF(e, 4), WIRE_EXT_OFF(e, 5), \
			     WIRE_EXT_OFF(e, 6), WIRE_EXT_OFF(e, 7), WIRE_EXT_OFF(e, 8) }, \
	}

/* Defined by IBA, not implemented by drnic: a name, nothing else. */
#define WIRE_OP_UNSUPPORTED(code, nm, tr) [code] = { .name = nm, .transport = (tr) }

#define F_FIRST  DRNIC_WIRE_POS_FIRST
#define F_MIDDLE DRNIC_WIRE_POS_MIDDLE
#define F_LAST   DRNIC_WIRE_POS_LAST
#define F_ONLY   DRNIC_WIRE_POS_ONLY

#define REQ   DRNIC_WIRE_OPF_REQUEST
#define RESP  DRNIC_WIRE_OPF_RESPONSE
#define SEND  DRNIC_WIRE_OPF_SEND
#define WRITE DRNIC_WIRE_OPF_WRITE
#define READ  DRNIC_WIRE_OPF_READ
#define ATOM  DRNIC_WIRE_OPF_ATOMIC
#define ACK   DRNIC_WIRE_OPF_ACK
#define IMM   DRNIC_WIRE_OPF_IMM
#define INV   DRNIC_WIRE_OPF_INV
/* Payload: optional (ONLY), at least one byte (LAST), exactly path MTU (FIRST, MIDDLE). */
#define PL_OPT  DRNIC_WIRE_OPF_PAYLOAD
#define PL_REQ  (DRNIC_WIRE_OPF_PAYLOAD | DRNIC_WIRE_OPF_PAYLOAD_REQ)
#define PL_FULL (DRNIC_WIRE_OPF_PAYLOAD | DRNIC_WIRE_OPF_PAYLOAD_REQ | DRNIC_WIRE_OPF_FULL_MTU)

#define E_DETH   DRNIC_WIRE_EXT_DETH
#define E_XRC    DRNIC_WIRE_EXT_XRCETH
#define E_RETH   DRNIC_WIRE_EXT_RETH
#define E_ATOM   DRNIC_WIRE_EXT_ATOMICETH
#define E_AETH   DRNIC_WIRE_EXT_AETH
#define E_ATOMACK DRNIC_WIRE_EXT_ATOMICACKETH
#define E_IMM    DRNIC_WIRE_EXT_IMMDT
#define E_IETH   DRNIC_WIRE_EXT_IETH

/* The SEND and RDMA WRITE families, shared by RC, UC and XRC (base 0x00 /
 * 0x20 / 0xA0); @x: the headers every request of the transport carries
 * after the BTH (XRC's XRCETH). */
#define WIRE_SEND_WRITE_OPS_X(base, pfx, tr, x) \
	WIRE_OP(base + 0x00, pfx "_SEND_FIRST", tr, F_FIRST, REQ | SEND | PL_FULL, x), \
	WIRE_OP(base + 0x01, pfx "_SEND_MIDDLE", tr, F_MIDDLE, REQ | SEND | PL_FULL, x), \
	WIRE_OP(base + 0x02, pfx "_SEND_LAST", tr, F_LAST, REQ | SEND | PL_REQ, x), \
	WIRE_OP(base + 0x03, pfx "_SEND_LAST_WITH_IMMEDIATE", tr, F_LAST, \
		REQ | SEND | IMM | PL_REQ, (x) | E_IMM), \
	WIRE_OP(base + 0x04, pfx "_SEND_ONLY", tr, F_ONLY, REQ | SEND | PL_OPT, x), \
	WIRE_OP(base + 0x05, pfx "_SEND_ONLY_WITH_IMMEDIATE", tr, F_ONLY, \
		REQ | SEND | IMM | PL_OPT, (x) | E_IMM), \
	WIRE_OP(base + 0x06, pfx "_RDMA_WRITE_FIRST", tr, F_FIRST, REQ | WRITE | PL_FULL, \
		(x) | E_RETH), \
	WIRE_OP(base + 0x07, pfx "_RDMA_WRITE_MIDDLE", tr, F_MIDDLE, REQ | WRITE | PL_FULL, x), \
	WIRE_OP(base + 0x08, pfx "_RDMA_WRITE_LAST", tr, F_LAST, REQ | WRITE | PL_REQ, x), \
	WIRE_OP(base + 0x09, pfx "_RDMA_WRITE_LAST_WITH_IMMEDIATE", tr, F_LAST, \
		REQ | WRITE | IMM | PL_REQ, (x) | E_IMM), \
	WIRE_OP(base + 0x0A, pfx "_RDMA_WRITE_ONLY", tr, F_ONLY, REQ | WRITE | PL_OPT, \
		(x) | E_RETH), \
	WIRE_OP(base + 0x0B, pfx "_RDMA_WRITE_ONLY_WITH_IMMEDIATE", tr, F_ONLY, \
		REQ | WRITE | IMM | PL_OPT, (x) | E_RETH | E_IMM)
#define WIRE_SEND_WRITE_OPS(base, pfx, tr) WIRE_SEND_WRITE_OPS_X(base, pfx, tr, 0)

/* The rest of RC's operations, shared by RC and XRC (base 0x00 / 0xA0):
 * READ, its responses, ACKs, atomics, SEND with Invalidate. */
#define WIRE_RELIABLE_OPS(base, pfx, tr, x) \
	WIRE_OP(base + 0x0C, pfx "_RDMA_READ_REQUEST", tr, F_ONLY, REQ | READ, (x) | E_RETH), \
	WIRE_OP(base + 0x0D, pfx "_RDMA_READ_RESPONSE_FIRST", tr, F_FIRST, \
		RESP | READ | ACK | PL_FULL, E_AETH), \
	WIRE_OP(base + 0x0E, pfx "_RDMA_READ_RESPONSE_MIDDLE", tr, F_MIDDLE, \
		RESP | READ | PL_FULL, 0), \
	WIRE_OP(base + 0x0F, pfx "_RDMA_READ_RESPONSE_LAST", tr, F_LAST, \
		RESP | READ | ACK | PL_REQ, E_AETH), \
	WIRE_OP(base + 0x10, pfx "_RDMA_READ_RESPONSE_ONLY", tr, F_ONLY, \
		RESP | READ | ACK | PL_OPT, E_AETH), \
	WIRE_OP(base + 0x11, pfx "_ACKNOWLEDGE", tr, F_ONLY, RESP | ACK, E_AETH), \
	WIRE_OP(base + 0x12, pfx "_ATOMIC_ACKNOWLEDGE", tr, F_ONLY, RESP | ATOM | ACK, \
		E_AETH | E_ATOMACK), \
	WIRE_OP(base + 0x13, pfx "_COMPARE_SWAP", tr, F_ONLY, REQ | ATOM, (x) | E_ATOM), \
	WIRE_OP(base + 0x14, pfx "_FETCH_ADD", tr, F_ONLY, REQ | ATOM, (x) | E_ATOM), \
	WIRE_OP(base + 0x16, pfx "_SEND_LAST_WITH_INVALIDATE", tr, F_LAST, \
		REQ | SEND | INV | PL_REQ, (x) | E_IETH), \
	WIRE_OP(base + 0x17, pfx "_SEND_ONLY_WITH_INVALIDATE", tr, F_ONLY, \
		REQ | SEND | INV | PL_OPT, (x) | E_IETH)

/* Names of the 0x00..0x14 operations of RC, for the RD entries. */
#define WIRE_NAMED_OPS(base, pfx, tr) \
	WIRE_OP_UNSUPPORTED(base + 0x00, pfx "_SEND_FIRST", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x01, pfx "_SEND_MIDDLE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x02, pfx "_SEND_LAST", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x03, pfx "_SEND_LAST_WITH_IMMEDIATE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x04, pfx "_SEND_ONLY", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x05, pfx "_SEND_ONLY_WITH_IMMEDIATE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x06, pfx "_RDMA_WRITE_FIRST", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x07, pfx "_RDMA_WRITE_MIDDLE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x08, pfx "_RDMA_WRITE_LAST", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x09, pfx "_RDMA_WRITE_LAST_WITH_IMMEDIATE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x0A, pfx "_RDMA_WRITE_ONLY", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x0B, pfx "_RDMA_WRITE_ONLY_WITH_IMMEDIATE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x0C, pfx "_RDMA_READ_REQUEST", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x0D, pfx "_RDMA_READ_RESPONSE_FIRST", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x0E, pfx "_RDMA_READ_RESPONSE_MIDDLE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x0F, pfx "_RDMA_READ_RESPONSE_LAST", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x10, pfx "_RDMA_READ_RESPONSE_ONLY", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x11, pfx "_ACKNOWLEDGE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x12, pfx "_ATOMIC_ACKNOWLEDGE", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x13, pfx "_COMPARE_SWAP", tr), \
	WIRE_OP_UNSUPPORTED(base + 0x14, pfx "_FETCH_ADD", tr)

const struct drnic_wire_opinfo drnic_wire_opcodes[256] = {
	/* Reliable Connection */
	WIRE_SEND_WRITE_OPS(0x00, "RC", DRNIC_WIRE_TR_RC),
	WIRE_RELIABLE_OPS(0x00, "RC", DRNIC_WIRE_TR_RC, 0),
	/* IBA 1.5: FLUSH is not implemented (rdma-core 44 has no verb for it);
	 * ATOMIC WRITE is a one-packet RDMA WRITE of 8 bytes, acknowledged by
	 * an ACK (its payload length is the responder's check). */
	WIRE_OP_UNSUPPORTED(0x1C, "RC_FLUSH", DRNIC_WIRE_TR_RC),
	WIRE_OP(0x1D, "RC_ATOMIC_WRITE", DRNIC_WIRE_TR_RC, F_ONLY,
		REQ | WRITE | DRNIC_WIRE_OPF_ATOMIC_WRITE | PL_OPT, E_RETH),

	/* Unreliable Connection: SEND and RDMA WRITE only. */
	WIRE_SEND_WRITE_OPS(0x20, "UC", DRNIC_WIRE_TR_UC),

	/* Reliable Datagram: defined, not supported. */
	WIRE_NAMED_OPS(0x40, "RD", DRNIC_WIRE_TR_RD),
	WIRE_OP_UNSUPPORTED(0x55, "RD_RESYNC", DRNIC_WIRE_TR_RD),

	/* Unreliable Datagram */
	WIRE_OP(0x64, "UD_SEND_ONLY", DRNIC_WIRE_TR_UD, F_ONLY, REQ | SEND | PL_OPT, E_DETH),
	WIRE_OP(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", DRNIC_WIRE_TR_UD, F_ONLY,
		REQ | SEND | IMM | PL_OPT, E_DETH | E_IMM),

	/* RoCEv2 congestion notification: BTH, 16 reserved bytes, ICRC. */
	WIRE_OP(0x81, "CNP", DRNIC_WIRE_TR_CNP, F_ONLY, DRNIC_WIRE_OPF_CNP, DRNIC_WIRE_EXT_CNP),

	/* Extended Reliable Connection: RC's operations; every request
	 * carries the XRCETH (the target XRC SRQ) right after the BTH. */
	WIRE_SEND_WRITE_OPS_X(0xA0, "XRC", DRNIC_WIRE_TR_XRC, E_XRC),
	WIRE_RELIABLE_OPS(0xA0, "XRC", DRNIC_WIRE_TR_XRC, E_XRC),
};

const char *
drnic_wire_opcode_name(uint8_t opcode)
{
	const char *name = drnic_wire_opcodes[opcode].name;

	return name != NULL ? name : "UNKNOWN";
}
