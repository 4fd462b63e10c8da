/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/wire/wire_build.c: exact frame layout, round trips
 * through the parser for every opcode, IPv4/IPv6, tagged or not, payload 0..4096,
 * multi-segment frames, and every error.
 */
#include "lib/wire/wire_build.c"

#include "ut_common.h"
#include "../wire_ut.h"

static struct rte_mempool *ut_small_pool;   /* 256-byte segments: forces chains */
static uint8_t ut_payload[8192];
static uint8_t ut_frame[16384];

static void
test_lengths(void)
{
	struct drnic_wire_pkt p;

	drnic_wire_pkt_init(&p);
	CU_ASSERT_EQUAL(p.ip.version, 4);
	CU_ASSERT_EQUAL(p.ip.ttl, 64);
	CU_ASSERT_TRUE(p.ip.df);
	CU_ASSERT_EQUAL(p.bth.pkey, 0xFFFF);
	CU_ASSERT_EQUAL(p.udp.dport, 4791);

	CU_ASSERT_EQUAL(drnic_wire_hdr_len(DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false), 54);
	CU_ASSERT_EQUAL(drnic_wire_hdr_len(DRNIC_WIRE_OP_RC_SEND_ONLY, 6, true), 78);
	CU_ASSERT_EQUAL(drnic_wire_hdr_len(DRNIC_WIRE_OP_XRC_COMPARE_SWAP, 6, true),
			DRNIC_WIRE_MAX_HDR_LEN);
	CU_ASSERT_EQUAL(drnic_wire_hdr_len(DRNIC_WIRE_OP_XRC_SEND_ONLY, 4, false), 58);
	CU_ASSERT_EQUAL(drnic_wire_hdr_len(DRNIC_WIRE_OP_XRC_ACKNOWLEDGE, 4, false), 58);
	CU_ASSERT_EQUAL(drnic_wire_hdr_len(0x15, 4, false), 0);
	CU_ASSERT_EQUAL(drnic_wire_hdr_len(DRNIC_WIRE_OP_RC_SEND_ONLY, 5, false), 0);
	/* 58-byte frame padded to 60; ACK is 62. */
	CU_ASSERT_EQUAL(drnic_wire_frame_len(DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0), 60);
	CU_ASSERT_EQUAL(drnic_wire_frame_len(DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0), 62);
	CU_ASSERT_EQUAL(drnic_wire_frame_len(DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 1), 62);
	CU_ASSERT_EQUAL(drnic_wire_frame_len(DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 5), 66);
	CU_ASSERT_EQUAL(drnic_wire_frame_len(DRNIC_WIRE_OP_RC_SEND_FIRST, 4, false, 1024), 1082);
	CU_ASSERT_EQUAL(drnic_wire_frame_len(0x15, 4, false, 0), 0);

	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(1500, 4), DRNIC_WIRE_MTU_1024);
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(1500, 6), DRNIC_WIRE_MTU_1024);
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(9000, 4), DRNIC_WIRE_MTU_4096);
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(4096, 4), DRNIC_WIRE_MTU_2048);
	/* 20 + 8 + 12 + 20 + 4 = 64 bytes of overhead on IPv4. */
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(2048 + 64, 4), DRNIC_WIRE_MTU_2048);
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(2048 + 63, 4), DRNIC_WIRE_MTU_1024);
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(2048 + 84, 6), DRNIC_WIRE_MTU_2048);
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(2048 + 83, 6), DRNIC_WIRE_MTU_1024);
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(300, 4), 0);
	CU_ASSERT_EQUAL(drnic_wire_mtu_for_ip_mtu(9000, 5), 0);
}

/* Byte by byte: a tagged IPv4 RC SEND_ONLY with 5 payload bytes. */
static void
test_exact_layout(void)
{
	static const uint8_t expect_hdr[] = {
		/* Ethernet: dst, src, 802.1Q tag (PCP 3, VID 100), IPv4 */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x81, 0x00, 0x60, 0x64, 0x08, 0x00,
		/* IPv4: 20 + 8 + 12 + 5 + 3 pad + 4 ICRC = 52, id 0x1234, DF, TTL 64, UDP */
		0x45, 0x02, 0x00, 0x34, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
		192, 168, 1, 1, 192, 168, 1, 2,
		/* UDP: 0xC123 -> 4791, length 32, checksum 0 */
		0xC1, 0x23, 0x12, 0xB7, 0x00, 0x20, 0x00, 0x00,
		/* BTH: SEND_ONLY, SE, PadCnt 3, P_Key 0xFFFF, QP 0x000011, AckReq, PSN 0x000100 */
		0x04, 0xB0, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x01, 0x00,
	};
	struct drnic_wire_pkt p;
	struct drnic_wire_sge sg = { .addr = "hello", .len = 5 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(ut_big_pool);
	const uint8_t *f;
	uint16_t csum;
	uint32_t icrc, n = sizeof(expect_hdr);
	uint8_t hdr[sizeof(expect_hdr)];

	CU_ASSERT_FATAL(m != NULL);
	drnic_wire_pkt_init(&p);
	memcpy(p.eth.dst, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(p.eth.src, "\x02\x00\x00\x00\x00\x01", 6);
	p.eth.has_vlan = true;
	p.eth.vlan_tci = 0x6064;
	p.ip.tos = DRNIC_WIRE_ECN_ECT0;
	p.ip.id = 0x1234;
	memcpy(p.ip.src, "\xC0\xA8\x01\x01", 4);
	memcpy(p.ip.dst, "\xC0\xA8\x01\x02", 4);
	p.udp.sport = 0xC123;
	p.udp.dport = 1;               /* ignored */
	p.bth.opcode = DRNIC_WIRE_OP_RC_SEND_ONLY;
	p.bth.se = true;
	p.bth.padcnt = 1;              /* ignored: computed */
	p.bth.dqpn = 0x11;
	p.bth.ackreq = true;
	p.bth.psn = 0x100;
	p.sg = &sg;
	p.sg_cnt = 1;
	CU_ASSERT_EQUAL_FATAL(drnic_wire_build(m, &p), 0);
	CU_ASSERT_EQUAL(m->pkt_len, 18 + 52);
	CU_ASSERT_EQUAL(m->nb_segs, 1);
	CU_ASSERT_EQUAL(m->l2_len, 18);
	CU_ASSERT_EQUAL(m->l3_len, 20);
	CU_ASSERT_EQUAL(m->l4_len, 8);
	f = rte_pktmbuf_mtod(m, const uint8_t *);
	/* IPv4 checksum: the header sums to 0xFFFF. */
	csum = (uint16_t)(f[28] << 8 | f[29]);
	CU_ASSERT_NOT_EQUAL(csum, 0);
	memcpy(hdr, f, n);
	hdr[28] = hdr[29] = 0;
	CU_ASSERT(memcmp(hdr, expect_hdr, n) == 0);
	{
		uint32_t sum = 0, i;

		for (i = 0; i < 20; i += 2)
			sum += (uint32_t)(f[18 + i] << 8 | f[18 + i + 1]);
		while (sum >> 16)
			sum = (sum & 0xFFFF) + (sum >> 16);
		CU_ASSERT_EQUAL(sum, 0xFFFF);
	}
	CU_ASSERT(memcmp(f + n, "hello\0\0\0", 8) == 0);
	icrc = ut_ref_icrc(f + 18, 52);
	CU_ASSERT_EQUAL(ut_get_le32(f + n + 8), icrc);
	rte_pktmbuf_free(m);
}

/* Build @p with @len bytes of ut_payload gathered from @nsg pieces, parse, compare. */
static void
ut_roundtrip(struct rte_mempool *mp, struct drnic_wire_pkt *p, uint32_t len, unsigned int nsg)
{
	struct drnic_wire_sge sg[8];
	struct drnic_wire_pkt q;
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint32_t i, off = 0, flen, want;
	enum drnic_wire_drop rc;

	CU_ASSERT_FATAL(m != NULL);
	if (nsg > 8)
		nsg = 8;
	if (nsg == 0 && len > 0)
		nsg = 1;
	for (i = 0; i < nsg; i++) {
		uint32_t n = i + 1 == nsg ? len - off : (len - off) / 2;

		sg[i].addr = ut_payload + off;
		sg[i].len = n;
		off += n;
	}
	p->sg = len > 0 || nsg > 0 ? sg : NULL;
	p->sg_cnt = len > 0 || nsg > 0 ? nsg : 0;
	CU_ASSERT_EQUAL_FATAL(drnic_wire_build(m, p), 0);
	want = drnic_wire_frame_len(p->bth.opcode, p->ip.version, p->eth.has_vlan, len);
	CU_ASSERT_EQUAL(m->pkt_len, want);
	rc = drnic_wire_parse(m, &q);
	CU_ASSERT_EQUAL(rc, DRNIC_WIRE_OK);
	if (rc != DRNIC_WIRE_OK) {
		printf("\n  %s v%u vlan %d len %u: %s\n", drnic_wire_opcode_name(p->bth.opcode),
		       p->ip.version, p->eth.has_vlan, len, drnic_wire_drop_name(rc));
		rte_pktmbuf_free(m);
		return;
	}
	ut_pkt_check(&q, p, len);
	flen = ut_mbuf_bytes(m, ut_frame);
	CU_ASSERT(memcmp(ut_frame + q.payload_off, ut_payload, len) == 0);
	/* Pad bytes and Ethernet padding are zero; ICRC matches the reference. */
	for (i = q.payload_off + len; i < q.frame_len - 4; i++)
		CU_ASSERT_EQUAL(ut_frame[i], 0);
	for (i = q.frame_len; i < flen; i++)
		CU_ASSERT_EQUAL(ut_frame[i], 0);
	CU_ASSERT_EQUAL(q.icrc, ut_ref_icrc(ut_frame + q.l3_off, q.frame_len - q.l3_off));
	rte_pktmbuf_free(m);
}

static const uint32_t ut_sizes[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 13, 60, 255, 256, 257, 1023, 1024, 1025, 2048, 4093,
	4094, 4095, 4096,
};

/* XRC: the XRCETH (8 reserved bits, the 24-bit SRQ number) sits right after
 * the BTH and before the RETH and ImmDt; it is covered by the ICRC. */
static void
test_xrceth_layout(void)
{
	struct drnic_wire_pkt p, q;
	struct rte_mbuf *m = rte_pktmbuf_alloc(ut_big_pool);
	uint32_t flen;

	CU_ASSERT_FATAL(m != NULL);
	drnic_wire_pkt_init(&p);
	p.bth.opcode = DRNIC_WIRE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	p.bth.dqpn = 0x000042;
	p.xrceth.srqn = 0xFFABCDEF;     /* 24 bits go on the wire */
	p.reth.va = 0x1122334455667788ull;
	p.reth.rkey = 0x99AABBCC;
	p.reth.dmalen = 0;
	p.imm = rte_cpu_to_be_32(0xDEADBEEF);
	CU_ASSERT_EQUAL_FATAL(drnic_wire_build(m, &p), 0);
	flen = ut_mbuf_bytes(m, ut_frame);
	/* Ethernet 14, IPv4 20, UDP 8, BTH 12: the XRCETH at 54. */
	CU_ASSERT_EQUAL(ut_frame[42], 0xAB);
	CU_ASSERT(memcmp(ut_frame + 54, "\x00\xAB\xCD\xEF", 4) == 0);
	CU_ASSERT(memcmp(ut_frame + 58, "\x11\x22\x33\x44\x55\x66\x77\x88", 8) == 0);
	CU_ASSERT(memcmp(ut_frame + 66, "\x99\xAA\xBB\xCC\x00\x00\x00\x00", 8) == 0);
	CU_ASSERT(memcmp(ut_frame + 74, "\xDE\xAD\xBE\xEF", 4) == 0);
	CU_ASSERT_EQUAL(flen, 78 + 4);
	CU_ASSERT_EQUAL_FATAL(drnic_wire_parse(m, &q), DRNIC_WIRE_OK);
	CU_ASSERT_EQUAL(q.xrceth.srqn, 0xABCDEF);
	CU_ASSERT_EQUAL(q.reth.rkey, 0x99AABBCC);
	CU_ASSERT_EQUAL(q.payload_off, 78);
	CU_ASSERT_EQUAL(q.icrc, ut_ref_icrc(ut_frame + q.l3_off, q.frame_len - q.l3_off));
	/* The ICRC covers the XRCETH: another SRQ number fails the check. */
	rte_pktmbuf_mtod(m, uint8_t *)[57] ^= 1;
	CU_ASSERT_EQUAL(drnic_wire_parse(m, &q), DRNIC_WIRE_DROP_BAD_ICRC);
	rte_pktmbuf_free(m);
}

/* @fn for every supported opcode, both IP versions, with and without a
 * tag; returns the sum of what it returns. */
static unsigned int
ut_each_path(unsigned int (*fn)(uint8_t op, const struct drnic_wire_opinfo *oi, uint8_t v,
				bool vlan))
{
	unsigned int op, v, vlan, n = 0;

	for (op = 0; op < 256; op++) {
		const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info((uint8_t)op);

		if (!(oi->flags & DRNIC_WIRE_OPF_SUPPORTED))
			continue;
		for (v = 4; v <= 6; v += 2)
			for (vlan = 0; vlan < 2; vlan++)
				n += fn((uint8_t)op, oi, (uint8_t)v, vlan);
	}
	return n;
}

static unsigned int
ut_roundtrip_path(uint8_t op, const struct drnic_wire_opinfo *oi, uint8_t v, bool vlan)
{
	struct drnic_wire_pkt p;
	unsigned int i, n = 0;

	for (i = 0; i < RTE_DIM(ut_sizes); i++) {
		uint32_t len = ut_sizes[i];

		if (!(oi->flags & DRNIC_WIRE_OPF_PAYLOAD) && len > 0)
			break;
		if ((oi->flags & DRNIC_WIRE_OPF_PAYLOAD_REQ) && len == 0)
			continue;
		if ((oi->flags & DRNIC_WIRE_OPF_FULL_MTU) && len % 4 != 0)
			continue;
		ut_pkt_random(&p, op, v, vlan);
		ut_roundtrip(ut_big_pool, &p, len, 1 + i % 3);
		n++;
	}
	return n;
}

/* Every supported opcode, both IP versions, with and without a tag. */
static void
test_roundtrip_opcodes(void)
{
	printf("\n  %u opcode round trips\n", ut_each_path(ut_roundtrip_path));
}

/* Every payload size 0..4096 (all PadCnt values), alternating versions and tags. */
static void
test_roundtrip_sizes(void)
{
	struct drnic_wire_pkt p;
	uint32_t len;

	for (len = 0; len <= 4096; len++) {
		ut_pkt_random(&p, len & 4 ? DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
					    DRNIC_WIRE_OP_RC_SEND_ONLY,
			      len & 1 ? 6 : 4, len & 2);
		ut_roundtrip(ut_big_pool, &p, len, len % 4);
	}
}

/* Small segments: payload, pad and ICRC continue across segment boundaries. */
static void
test_multiseg(void)
{
	struct drnic_wire_pkt p;
	struct rte_mbuf *m;
	uint32_t len;

	for (len = 0; len <= 1100; len++) {
		ut_pkt_random(&p, len & 1 ? DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY :
					    DRNIC_WIRE_OP_UC_SEND_LAST_WITH_IMMEDIATE + 0,
			      len & 2 ? 6 : 4, len & 4);
		if (len == 0)
			p.bth.opcode = DRNIC_WIRE_OP_RC_SEND_ONLY;
		ut_roundtrip(ut_small_pool, &p, len, 1 + len % 5);
	}
	for (len = 4000; len <= 4096; len++) {
		ut_pkt_random(&p, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, len & 1 ? 6 : 4, len & 2);
		ut_roundtrip(ut_small_pool, &p, len, 1 + len % 7);
	}
	/*
	 * A 4096-byte MIDDLE: 256 bytes after the headroom of the first segment,
	 * continuations use their whole 384-byte room.
	 */
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_SEND_MIDDLE, 4, false);
	m = rte_pktmbuf_alloc(ut_small_pool);
	p.sg = &(struct drnic_wire_sge){ .addr = ut_payload, .len = 4096 };
	p.sg_cnt = 1;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), 0);
	CU_ASSERT_EQUAL(m->nb_segs, 1 + (54 + 4096 + 4 - 256 + 383) / 384);
	CU_ASSERT_EQUAL(rte_pktmbuf_pkt_len(m), 54 + 4096 + 4);
	rte_pktmbuf_free(m);
}

/*
 * Long payload in one segment starts 64-byte aligned (the frame moved into
 * the headroom); short payload and chained frames keep the default start.
 */
static void
test_payload_aligned(void)
{
	static const uint32_t lens[] = { 513, 1024, 2000, 4093, 4096 };
	struct drnic_wire_pkt p, q;
	struct drnic_wire_sge sg;
	struct rte_mbuf *m;
	unsigned int i, v, first;

	for (i = 0; i < RTE_DIM(lens); i++) {
		for (v = 4; v <= 6; v += 2) {
			for (first = 0; first < 2; first++) {
				ut_pkt_random(&p, first ? DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY :
						  DRNIC_WIRE_OP_RC_SEND_LAST, (uint8_t)v, i & 1);
				sg.addr = ut_payload;
				sg.len = lens[i];
				p.sg = &sg;
				p.sg_cnt = 1;
				m = rte_pktmbuf_alloc(ut_big_pool);
				CU_ASSERT_FATAL(m != NULL);
				CU_ASSERT_EQUAL_FATAL(drnic_wire_build(m, &p), 0);
				CU_ASSERT_EQUAL_FATAL(drnic_wire_parse(m, &q), DRNIC_WIRE_OK);
				CU_ASSERT_EQUAL(m->nb_segs, 1);
				CU_ASSERT_EQUAL((m->data_off + q.payload_off) % 64, 0);
				CU_ASSERT(m->data_off <= RTE_PKTMBUF_HEADROOM &&
					  m->data_off > RTE_PKTMBUF_HEADROOM - 64);
				CU_ASSERT(memcmp(rte_pktmbuf_mtod_offset(m, uint8_t *, q.payload_off),
						 ut_payload, lens[i]) == 0);
				rte_pktmbuf_free(m);
			}
		}
	}
	/* 512 bytes or less: where it always was. */
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false);
	sg.addr = ut_payload;
	sg.len = 512;
	p.sg = &sg;
	p.sg_cnt = 1;
	m = rte_pktmbuf_alloc(ut_big_pool);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_EQUAL_FATAL(drnic_wire_build(m, &p), 0);
	CU_ASSERT_EQUAL(m->data_off, RTE_PKTMBUF_HEADROOM);
	rte_pktmbuf_free(m);
}

static void
test_errors(void)
{
	struct drnic_wire_pkt p;
	struct drnic_wire_sge sg = { .addr = ut_payload, .len = 16 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(ut_big_pool);
	struct rte_mempool *tiny, *few;

	CU_ASSERT_FATAL(m != NULL);
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false);

	/* Not empty. */
	rte_pktmbuf_append(m, 1);
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	rte_pktmbuf_reset(m);
	/* Undefined, reserved and unsupported opcodes. */
	p.bth.opcode = 0x15;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	p.bth.opcode = 0x44;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	p.bth.opcode = DRNIC_WIRE_OP_RC_SEND_ONLY;
	/* IP version. */
	p.ip.version = 5;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	p.ip.version = 0;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	p.ip.version = 4;
	/* sg NULL with a count. */
	p.sg_cnt = 1;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	p.sg = &sg;
	/* Payload on an opcode without one. */
	p.bth.opcode = DRNIC_WIRE_OP_RC_ACKNOWLEDGE;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	/* No payload where one is required. */
	sg.len = 0;
	p.bth.opcode = DRNIC_WIRE_OP_RC_SEND_LAST;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	p.sg_cnt = 0;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	/* FIRST/MIDDLE carry a full MTU: never a pad. */
	p.sg_cnt = 1;
	sg.len = 255;
	p.bth.opcode = DRNIC_WIRE_OP_RC_SEND_FIRST;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -EINVAL);
	CU_ASSERT_EQUAL(m->pkt_len, 0);
	/* Too long for IP. */
	sg.len = 70000;
	p.bth.opcode = DRNIC_WIRE_OP_RC_SEND_ONLY;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -ENOSPC);
	sg.len = 65535 - 20 - 8 - 12 - 4 + 1;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -ENOSPC);
	p.ip.version = 6;     /* IPv6 counts only the payload: the same size fits */
	sg.len = 0;
	p.ip.version = 4;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), 0);
	rte_pktmbuf_free(m);

	/* Headers must fit in the first segment. */
	tiny = rte_pktmbuf_pool_create("ut_tiny", 8, 0, 0, RTE_PKTMBUF_HEADROOM + 64,
				       SOCKET_ID_ANY);
	CU_ASSERT_FATAL(tiny != NULL);
	m = rte_pktmbuf_alloc(tiny);
	ut_pkt_random(&p, DRNIC_WIRE_OP_XRC_COMPARE_SWAP, 6, true);
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -ENOSPC);
	CU_ASSERT_EQUAL(m->pkt_len, 0);
	/* 62 header bytes in a 64-byte room: the ICRC is split over two segments. */
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, true);
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), 0);
	CU_ASSERT_EQUAL(m->nb_segs, 2);
	CU_ASSERT_EQUAL(m->pkt_len, 66);
	CU_ASSERT_EQUAL(m->data_len, 64);
	{
		struct drnic_wire_pkt q;

		CU_ASSERT_EQUAL(drnic_wire_parse(m, &q), DRNIC_WIRE_OK);
		ut_pkt_check(&q, &p, 0);
	}
	rte_pktmbuf_free(m);
	rte_mempool_free(tiny);

	/* The pool runs dry: -ENOMEM, and everything taken is given back. */
	few = rte_pktmbuf_pool_create("ut_few", 4, 0, 0, RTE_PKTMBUF_HEADROOM + 256,
				      SOCKET_ID_ANY);
	CU_ASSERT_FATAL(few != NULL);
	m = rte_pktmbuf_alloc(few);
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false);
	sg.len = 4096;
	p.sg = &sg;
	p.sg_cnt = 1;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), -ENOMEM);
	CU_ASSERT_EQUAL(m->pkt_len, 0);
	CU_ASSERT_EQUAL(m->data_len, 0);
	CU_ASSERT_EQUAL(m->nb_segs, 1);
	CU_ASSERT_PTR_NULL(m->next);
	CU_ASSERT_EQUAL(rte_mempool_avail_count(few), 3);
	/* And the same mbuf can then be used for a frame that fits. */
	sg.len = 600;
	CU_ASSERT_EQUAL(drnic_wire_build(m, &p), 0);
	CU_ASSERT_EQUAL(m->nb_segs, 3);
	rte_pktmbuf_free(m);
	CU_ASSERT_EQUAL(rte_mempool_avail_count(few), 4);
	rte_mempool_free(few);
}

/*
 * DRNIC_WIRE_BUILD_DEFER_ICRC: a short one-segment frame comes back with
 * its ICRC zero (1), anything else complete (0); drnic_wire_icrc_fill_burst()
 * over a burst of the left ones makes every frame what drnic_wire_build()
 * writes, byte for byte.
 */
static void
test_defer_fill(void)
{
	static const uint32_t sizes[] = { 0, 1, 2, 3, 4, 13, 16, 17, 20, 64, 100, 180, 181, 200,
					  255, 256, 300, 512, 1024 };
	static uint8_t want[64][2048], got[2048];
	struct rte_mbuf *a[64], *b[64], *left[64];
	struct drnic_wire_pkt p;
	struct drnic_wire_sge sg;
	unsigned int round, j, cnt, nl, total_left = 0, total = 0;
	uint32_t wl;

	for (round = 0; round < 300; round++) {
		cnt = 1 + ut_rand() % 64;
		nl = 0;
		for (j = 0; j < cnt; j++) {
			uint8_t op = ut_rand() & 1 ? DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY :
				     ut_rand() & 1 ? DRNIC_WIRE_OP_RC_SEND_ONLY :
						     DRNIC_WIRE_OP_RC_ACKNOWLEDGE;
			uint32_t len = op == DRNIC_WIRE_OP_RC_ACKNOWLEDGE ? 0 :
				       sizes[ut_rand() % RTE_DIM(sizes)];
			int rc;

			ut_pkt_random(&p, op, ut_rand() & 1 ? 6 : 4, ut_rand() & 1);
			sg = (struct drnic_wire_sge){ .addr = ut_payload + ut_rand() % 64, .len = len };
			p.sg = len > 0 ? &sg : NULL;
			p.sg_cnt = len > 0 ? 1 : 0;
			a[j] = rte_pktmbuf_alloc(ut_big_pool);
			b[j] = rte_pktmbuf_alloc(round % 3 == 0 ? ut_small_pool : ut_big_pool);
			CU_ASSERT_FATAL(a[j] != NULL && b[j] != NULL);
			if (round % 5 == 0)   /* little room: no deferral where the trailer
					       * would not fit in place */
				b[j]->data_off = (uint16_t)(b[j]->buf_len - 128 - ut_rand() % 64);
			CU_ASSERT_EQUAL_FATAL(drnic_wire_build(a[j], &p), 0);
			rc = drnic_wire_build_flags(b[j], &p, DRNIC_WIRE_BUILD_DEFER_ICRC);
			CU_ASSERT(rc == 0 || rc == 1);
			CU_ASSERT_EQUAL(b[j]->pkt_len, a[j]->pkt_len);
			wl = ut_mbuf_bytes(a[j], want[j]);
			if (rc == 1) {
				CU_ASSERT_EQUAL(b[j]->nb_segs, 1);
				ut_mbuf_bytes(b[j], got);
				/* Everything but the ICRC, which is zero. */
				CU_ASSERT(memcmp(got, want[j], wl - 4) == 0);
				CU_ASSERT_EQUAL(ut_get_le32(got + wl - 4), 0);
				left[nl++] = b[j];
			}
		}
		drnic_wire_icrc_fill_burst(left, (uint16_t)nl);
		for (j = 0; j < cnt; j++) {
			wl = ut_mbuf_bytes(b[j], got);
			CU_ASSERT_EQUAL(wl, a[j]->pkt_len);
			if (memcmp(got, want[j], wl) != 0)
				CU_FAIL("filled frame differs");
			rte_pktmbuf_free(a[j]);
			rte_pktmbuf_free(b[j]);
		}
		total_left += nl;
		total += cnt;
	}
	printf("\n  %u of %u frames left their ICRC\n", total_left, total);
	CU_ASSERT(total_left > total / 4);
	CU_ASSERT(total_left < total);
}

/*
 * @p built from the template of its own path fields and from the fields
 * themselves: the same bytes, lengths, segments and start. @p room, when not
 * zero, leaves only that much tailroom in the first segment.
 */
static void
ut_tmpl_same(struct rte_mempool *mp, struct drnic_wire_pkt *p, uint32_t len, uint16_t room,
	     uint32_t flags)
{
	static uint8_t other[16384];
	struct drnic_wire_sge sg[2] = {
		{ .addr = ut_payload, .len = len / 3 },
		{ .addr = ut_payload + len / 3, .len = len - len / 3 },
	};
	struct rte_mbuf *a = rte_pktmbuf_alloc(mp), *b = rte_pktmbuf_alloc(mp);
	struct drnic_wire_tmpl t;
	struct drnic_wire_pkt q;
	int ra, rb;

	CU_ASSERT_FATAL(a != NULL && b != NULL);
	if (room != 0) {
		a->data_off = (uint16_t)(a->buf_len - room);
		b->data_off = a->data_off;
	}
	p->sg = len > 0 ? sg : NULL;
	p->sg_cnt = len > 0 ? 2 : 0;
	CU_ASSERT_EQUAL_FATAL(drnic_wire_tmpl_make(&t, p), 0);
	CU_ASSERT_EQUAL(t.len, drnic_wire_hdr_len(DRNIC_WIRE_OP_RC_SEND_MIDDLE, p->ip.version,
						  p->eth.has_vlan));
	/* What the peer check reads of it. */
	CU_ASSERT_EQUAL(drnic_wire_tmpl_ip_version(&t), p->ip.version);
	CU_ASSERT(memcmp(drnic_wire_tmpl_smac(&t), p->eth.src, 6) == 0);
	CU_ASSERT(memcmp(drnic_wire_tmpl_ip_src(&t), p->ip.src, p->ip.version == 4 ? 4 : 16) == 0);
	CU_ASSERT(memcmp(drnic_wire_tmpl_ip_dst(&t), p->ip.dst, p->ip.version == 4 ? 4 : 16) == 0);
	CU_ASSERT_EQUAL(drnic_wire_tmpl_pkey(&t), p->bth.pkey);
	/* The path fields come from the template, not from the packet. */
	q = *p;
	memset(&q.eth, 0, sizeof(q.eth));
	memset(&q.ip, 0, sizeof(q.ip));
	q.udp.sport = 0;
	q.bth.pkey = 0;
	q.bth.dqpn = 0;
	q.bth.m = !p->bth.m;
	q.bth.fecn = !p->bth.fecn;
	q.bth.becn = !p->bth.becn;
	ra = drnic_wire_build_flags(a, p, flags);
	rb = drnic_wire_build_tmpl(b, &t, &q, flags);
	CU_ASSERT_EQUAL(rb, ra);
	if (ra == 0 && rb == 0) {
		CU_ASSERT_EQUAL(b->pkt_len, a->pkt_len);
		CU_ASSERT_EQUAL(b->nb_segs, a->nb_segs);
		CU_ASSERT_EQUAL(b->data_off, a->data_off);
		CU_ASSERT_EQUAL(b->l2_len, a->l2_len);
		CU_ASSERT_EQUAL(b->l3_len, a->l3_len);
		CU_ASSERT_EQUAL(b->l4_len, a->l4_len);
		CU_ASSERT_EQUAL(ut_mbuf_bytes(a, ut_frame), ut_mbuf_bytes(b, other));
		if (memcmp(ut_frame, other, a->pkt_len) != 0) {
			CU_FAIL("template frame differs");
			printf("\n  %s v%u vlan %d len %u room %u\n",
			       drnic_wire_opcode_name(p->bth.opcode), p->ip.version,
			       p->eth.has_vlan, len, room);
		}
	}
	rte_pktmbuf_free(a);
	rte_pktmbuf_free(b);
}

static unsigned int
ut_tmpl_path(uint8_t op, const struct drnic_wire_opinfo *oi, uint8_t v, bool vlan)
{
	static const uint32_t sizes[] = { 0, 1, 2, 3, 4, 5, 13, 64, 255, 511, 512, 513, 1024,
					  2047, 4096 };
	struct drnic_wire_pkt p;
	unsigned int i;

	RTE_SET_USED(oi);
	for (i = 0; i < RTE_DIM(sizes); i++) {
		ut_pkt_random(&p, op, v, vlan);
		ut_tmpl_same(ut_big_pool, &p, sizes[i], 0, 0);
		ut_tmpl_same(ut_small_pool, &p, sizes[i], 0, DRNIC_WIRE_BUILD_DEFER_ICRC);
	}
	/* Headers only just fit: less than the template's 80. */
	ut_pkt_random(&p, op, v, vlan);
	ut_tmpl_same(ut_big_pool, &p, 0, (uint16_t)drnic_wire_hdr_len(op, v, vlan), 0);
	return 2 * RTE_DIM(sizes) + 1;
}

/* drnic_wire_build_tmpl() writes what drnic_wire_build() writes: every
 * opcode, both IP versions, tagged or not, payload sizes across every
 * PadCnt, one segment or chained, little tailroom; and its errors. */
static void
test_tmpl(void)
{
	struct drnic_wire_pkt p;
	struct drnic_wire_tmpl t;
	struct rte_mbuf *m;
	unsigned int n = ut_each_path(ut_tmpl_path);

	printf("\n  %u template builds\n", n);
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false);
	p.ip.version = 5;
	CU_ASSERT_EQUAL(drnic_wire_tmpl_make(&t, &p), -EINVAL);
	/* An unsupported opcode, and a non-empty mbuf. */
	p.ip.version = 4;
	CU_ASSERT_EQUAL_FATAL(drnic_wire_tmpl_make(&t, &p), 0);
	m = rte_pktmbuf_alloc(ut_big_pool);
	CU_ASSERT_FATAL(m != NULL);
	p.sg = NULL;
	p.sg_cnt = 0;
	p.bth.opcode = 0x15;
	CU_ASSERT_EQUAL(drnic_wire_build_tmpl(m, &t, &p, 0), -EINVAL);
	p.bth.opcode = DRNIC_WIRE_OP_RC_SEND_ONLY;
	CU_ASSERT_EQUAL(drnic_wire_build_tmpl(m, &t, &p, 0), 0);
	CU_ASSERT_EQUAL(drnic_wire_build_tmpl(m, &t, &p, 0), -EINVAL);
	rte_pktmbuf_free(m);
}

int
main(void)
{
	CU_pSuite s;

	if (ut_eal_init() != 0)
		return 1;
	ut_small_pool = rte_pktmbuf_pool_create("ut_small", 512, 0, 0, RTE_PKTMBUF_HEADROOM + 256,
						SOCKET_ID_ANY);
	if (ut_small_pool == NULL)
		return 1;
	ut_fill(ut_payload, sizeof(ut_payload));
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("wire_build", NULL, NULL);
	CU_add_test(s, "lengths", test_lengths);
	CU_add_test(s, "exact_layout", test_exact_layout);
	CU_add_test(s, "xrceth_layout", test_xrceth_layout);
	CU_add_test(s, "roundtrip_opcodes", test_roundtrip_opcodes);
	CU_add_test(s, "roundtrip_sizes", test_roundtrip_sizes);
	CU_add_test(s, "multiseg", test_multiseg);
	CU_add_test(s, "payload_aligned", test_payload_aligned);
	CU_add_test(s, "errors", test_errors);
	CU_add_test(s, "defer_fill", test_defer_fill);
	CU_add_test(s, "tmpl", test_tmpl);
	return ut_run_all();
}
