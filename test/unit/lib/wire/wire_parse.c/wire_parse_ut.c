/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/wire/wire_parse.c: one exact drop reason for each kind
 * of bad frame, truncation at every length, segmentation at every byte,
 * random corruption, and the real captures (parse, ICRC, byte-identical
 * rebuild; bad-ICRC captures dropped frame by frame).
 *
 * Frames handed to the parser mostly live in exact-size heap segments
 * (ut_fake_chain), so under ASan any read past the frame is caught.
 */
#include "lib/wire/wire_parse.c"

#include "ut_common.h"
#include "../wire_ut.h"

static uint8_t ut_payload[8192];

/* Build a frame into @buf (flat) and return its length. */
static uint32_t
ut_build_flat(uint8_t *buf, struct drnic_wire_pkt *p, uint32_t len)
{
	struct drnic_wire_sge sg = { .addr = ut_payload, .len = len };
	struct rte_mbuf *m = rte_pktmbuf_alloc(ut_big_pool);
	uint32_t n;

	CU_ASSERT_FATAL(m != NULL);
	p->sg = len > 0 ? &sg : NULL;
	p->sg_cnt = len > 0 ? 1 : 0;
	CU_ASSERT_EQUAL_FATAL(drnic_wire_build(m, p), 0);
	n = ut_mbuf_bytes(m, buf);
	rte_pktmbuf_free(m);
	p->sg = NULL;
	p->sg_cnt = 0;
	return n;
}

/* Parse @len bytes of @f held in exact-size heap segments cut at @cut (0: one segment). */
static enum drnic_wire_drop
ut_parse_flat(const uint8_t *f, uint32_t len, uint32_t cut, uint32_t flags,
	      struct drnic_wire_pkt *out)
{
	struct ut_fake fk;
	struct rte_mbuf *m;
	enum drnic_wire_drop rc;

	m = ut_fake_chain(&fk, f, len, &cut, cut > 0 && cut < len ? 1 : 0);
	rc = drnic_wire_parse_flags(m, flags, out);
	ut_fake_free(&fk);
	return rc;
}

static uint32_t
ut_l2(const uint8_t *f)
{
	return f[12] == 0x81 && f[13] == 0x00 ? 18 : 14;
}

/* Recompute the IPv4 header checksum (no-op for IPv6). */
static void
ut_fix_csum(uint8_t *f)
{
	uint8_t *ip = f + ut_l2(f);
	uint32_t sum = 0, i, hl = (uint32_t)(ip[0] & 0xF) * 4;

	if (ip[0] >> 4 != 4)
		return;
	ip[10] = ip[11] = 0;
	for (i = 0; i < hl; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

/* IP packet length as the frame declares it. */
static uint32_t
ut_l3_len(const uint8_t *f)
{
	const uint8_t *ip = f + ut_l2(f);

	if (ip[0] >> 4 == 4)
		return (uint32_t)(ip[2] << 8 | ip[3]);
	return 40 + (uint32_t)(ip[4] << 8 | ip[5]);
}

static uint32_t
ut_ihl(const uint8_t *f)
{
	const uint8_t *ip = f + ut_l2(f);

	return ip[0] >> 4 == 4 ? (uint32_t)(ip[0] & 0xF) * 4 : 40;
}

/* Rewrite the ICRC at the end of the declared IP packet. */
static void
ut_fix_icrc(uint8_t *f)
{
	uint32_t l2 = ut_l2(f), l3_len = ut_l3_len(f);

	ut_put_le32(f + l2 + l3_len - 4, ut_ref_icrc(f + l2, l3_len));
}

/* Declare a new IP packet length (IP and UDP lengths), then fix checksum and ICRC. */
static void
ut_set_l3_len(uint8_t *f, uint32_t l3_len)
{
	uint8_t *ip = f + ut_l2(f);
	uint32_t ihl = ut_ihl(f);

	if (ip[0] >> 4 == 4) {
		ip[2] = (uint8_t)(l3_len >> 8);
		ip[3] = (uint8_t)l3_len;
	} else {
		ip[4] = (uint8_t)((l3_len - 40) >> 8);
		ip[5] = (uint8_t)(l3_len - 40);
	}
	ip[ihl + 4] = (uint8_t)((l3_len - ihl) >> 8);
	ip[ihl + 5] = (uint8_t)(l3_len - ihl);
	ut_fix_csum(f);
	if (l3_len >= ihl + 8 + 12 + 4)
		ut_fix_icrc(f);
}

static void
test_drop_names(void)
{
	int i, j;

	CU_ASSERT_STRING_EQUAL(drnic_wire_drop_name(DRNIC_WIRE_OK), "ok");
	CU_ASSERT_STRING_EQUAL(drnic_wire_drop_name(DRNIC_WIRE_DROP_BAD_ICRC), "bad_icrc");
	CU_ASSERT_STRING_EQUAL(drnic_wire_drop_name(DRNIC_WIRE_DROP_MAX), "invalid");
	CU_ASSERT_STRING_EQUAL(drnic_wire_drop_name((enum drnic_wire_drop)-1), "invalid");
	for (i = 0; i < DRNIC_WIRE_DROP_MAX; i++) {
		const char *a = drnic_wire_drop_name((enum drnic_wire_drop)i);

		CU_ASSERT_PTR_NOT_NULL_FATAL(a);
		CU_ASSERT_STRING_NOT_EQUAL(a, "invalid");
		for (j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(a, drnic_wire_drop_name((enum drnic_wire_drop)j));
	}
}

/* Expect @want from the frame in @f (and the same with ICRC checking skipped if asked). */
#define UT_EXPECT(f, len, want) \
	do { \
		struct drnic_wire_pkt _q; \
		enum drnic_wire_drop _rc = ut_parse_flat(f, len, 0, 0, &_q); \
		CU_ASSERT_EQUAL(_rc, want); \
		if (_rc != (want)) \
			printf("\n  line %d: got %s, want %s\n", __LINE__, \
			       drnic_wire_drop_name(_rc), drnic_wire_drop_name(want)); \
	} while (0)

/* A fresh valid frame of @op in @f: returns its length. */
static uint32_t
ut_base(uint8_t *f, uint8_t op, uint8_t v, bool vlan, uint32_t len)
{
	struct drnic_wire_pkt p;
	struct drnic_wire_pkt q;
	uint32_t n;

	ut_pkt_random(&p, op, v, vlan);
	n = ut_build_flat(f, &p, len);
	CU_ASSERT_EQUAL_FATAL(ut_parse_flat(f, n, 0, 0, &q), DRNIC_WIRE_OK);
	return n;
}

static void
test_each_drop_reason(void)
{
	static uint8_t f[512];
	uint32_t n, l2, ihl, bth;

	/* truncated_eth */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	UT_EXPECT(f, 13, DRNIC_WIRE_DROP_TRUNCATED_ETH);
	UT_EXPECT(f, 0, DRNIC_WIRE_DROP_TRUNCATED_ETH);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, true, 17);
	UT_EXPECT(f, 17, DRNIC_WIRE_DROP_TRUNCATED_ETH);

	/* not_ip: ARP, ARP behind a tag, a second (QinQ) tag */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[12] = 0x08, f[13] = 0x06;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_NOT_IP);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, true, 17);
	f[16] = 0x08, f[17] = 0x06;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_NOT_IP);
	f[12] = 0x88, f[13] = 0xA8;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_NOT_IP);

	/* truncated_ip: inside the IP header, and one byte short of the IP length */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	UT_EXPECT(f, 14 + 19, DRNIC_WIRE_DROP_TRUNCATED_IP);
	UT_EXPECT(f, n - 1, DRNIC_WIRE_DROP_TRUNCATED_IP);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 6, false, 17);
	UT_EXPECT(f, 14 + 39, DRNIC_WIRE_DROP_TRUNCATED_IP);
	UT_EXPECT(f, n - 1, DRNIC_WIRE_DROP_TRUNCATED_IP);
	/* IHL 15 but only 20 bytes of header present */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0);
	f[14] = 0x4F;
	UT_EXPECT(f, 14 + 40, DRNIC_WIRE_DROP_TRUNCATED_IP);

	/* bad_ip_version: the ethertype says one thing, the header another */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14] = 0x65;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_IP_VERSION);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 6, true, 17);
	f[18] = (uint8_t)(0x40 | (f[18] & 0xF));
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_IP_VERSION);

	/* bad_ihl */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14] = 0x44;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_IHL);

	/* bad_ip_length: total length below the header length */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[16] = 0, f[17] = 19;
	ut_fix_csum(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_IP_LENGTH);

	/* bad_ip_checksum */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14 + 10] ^= 0x01;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_IP_CHECKSUM);
	{
		struct drnic_wire_pkt q;

		CU_ASSERT_EQUAL(ut_parse_flat(f, n, 0, DRNIC_WIRE_PARSE_SKIP_IP_CSUM, &q),
				DRNIC_WIRE_OK);
	}
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14 + 12] ^= 0x80;   /* source address: the ICRC covers it too, the checksum comes first */
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_IP_CHECKSUM);

	/* ip_fragment: MF, and a fragment offset */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14 + 6] |= 0x20;
	ut_fix_csum(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_IP_FRAGMENT);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14 + 7] = 0x01;
	ut_fix_csum(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_IP_FRAGMENT);

	/* not_udp: TCP; IPv6 with a hop-by-hop extension header */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14 + 9] = 6;
	ut_fix_csum(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_NOT_UDP);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 6, false, 17);
	f[14 + 6] = 0;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_NOT_UDP);

	/* truncated_udp: IP payload of 7 bytes */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[16] = 0, f[17] = 27;
	ut_fix_csum(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_TRUNCATED_UDP);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 6, false, 17);
	f[18] = 0, f[19] = 0;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_TRUNCATED_UDP);

	/* not_rocev2_port */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14 + 20 + 3] ^= 0x01;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_NOT_ROCEV2_PORT);

	/* udp_length_mismatch: one more, one less */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[14 + 20 + 5]++;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_UDP_LENGTH_MISMATCH);
	f[14 + 20 + 5] -= 2;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_UDP_LENGTH_MISMATCH);

	/* truncated_bth: a UDP payload of 15 bytes cannot hold BTH + ICRC */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	ut_set_l3_len(f, 20 + 8 + 15);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_TRUNCATED_BTH);

	/* bad_icrc: payload bit, ICRC bit, header bit without fixing the ICRC */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[n - 10] ^= 0x10;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_ICRC);
	{
		struct drnic_wire_pkt q;

		CU_ASSERT_EQUAL(ut_parse_flat(f, n, 0, DRNIC_WIRE_PARSE_SKIP_ICRC, &q),
				DRNIC_WIRE_OK);
	}
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 6, true, 17);
	f[n - 1] ^= 0x01;
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_ICRC);
	n = ut_base(f, DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0);
	f[14 + 20 + 8 + 11] ^= 0x01;   /* PSN */
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_ICRC);
	/* ... but the variant fields are outside it: changing ECN and TTL is fine */
	n = ut_base(f, DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0);
	f[14 + 1] |= DRNIC_WIRE_ECN_CE;
	f[14 + 8]--;
	ut_fix_csum(f);
	f[14 + 20 + 8 + 4] |= 0x80;    /* FECN */
	UT_EXPECT(f, n, DRNIC_WIRE_OK);

	/* bad_tver */
	l2 = 14, ihl = 20, bth = l2 + ihl + 8;
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[bth + 1] |= 0x01;
	ut_fix_icrc(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_TVER);

	/* unknown_opcode: reserved RC, past UC, unassigned UD, manufacturer */
	{
		static const uint8_t unknown[] = { 0x15, 0x18, 0x2C, 0x3F, 0x60, 0x66, 0x80, 0x82,
						   0xC0, 0xFF };
		static const uint8_t unsupported[] = { 0x1C, 0x40, 0x44, 0x55, 0x4C, 0x53 };
		unsigned int i;

		for (i = 0; i < RTE_DIM(unknown); i++) {
			n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 16);
			f[bth] = unknown[i];
			ut_fix_icrc(f);
			UT_EXPECT(f, n, DRNIC_WIRE_DROP_UNKNOWN_OPCODE);
		}
		for (i = 0; i < RTE_DIM(unsupported); i++) {
			n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 16);
			f[bth] = unsupported[i];
			ut_fix_icrc(f);
			UT_EXPECT(f, n, DRNIC_WIRE_DROP_UNSUPPORTED_OPCODE);
		}
	}

	/* truncated_ext_header: an ACK's length relabelled as CMP_SWAP (needs 40 + 4) */
	n = ut_base(f, DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0);
	f[bth] = DRNIC_WIRE_OP_RC_COMPARE_SWAP;
	ut_fix_icrc(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_TRUNCATED_EXT_HEADER);
	/* a SEND_ONLY with 0 payload relabelled as UD (needs a DETH) */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0);
	f[bth] = DRNIC_WIRE_OP_UD_SEND_ONLY;
	ut_fix_icrc(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_TRUNCATED_EXT_HEADER);

	/* bad_padcnt: on an ACK; more pad than payload; on a FIRST (full MTU) */
	n = ut_base(f, DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0);
	f[bth + 1] |= 0x10;
	ut_fix_icrc(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_PADCNT);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0);
	f[bth + 1] |= 0x20;
	ut_fix_icrc(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_PADCNT);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_FIRST, 4, false, 256);
	f[bth + 1] |= 0x10;
	ut_fix_icrc(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_PADCNT);

	/* bad_payload_length: payload on an ACK; not 4-aligned; none on a LAST */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 4);
	f[bth] = DRNIC_WIRE_OP_RC_ACKNOWLEDGE;   /* 4 bytes of "payload" after the AETH */
	ut_set_l3_len(f, ut_l3_len(f) + 4);
	UT_EXPECT(f, n + 4, DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 8);
	ut_set_l3_len(f, ut_l3_len(f) - 1);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH);
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0);
	f[bth] = DRNIC_WIRE_OP_RC_SEND_LAST;
	ut_fix_icrc(f);
	UT_EXPECT(f, n, DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH);
	n = ut_base(f, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 6, true, 0);
	ut_set_l3_len(f, ut_l3_len(f) + 8);
	UT_EXPECT(f, n + 8, DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH);
	/* CNP: exactly 16 reserved bytes */
	n = ut_base(f, DRNIC_WIRE_OP_CNP, 4, false, 0);
	CU_ASSERT_EQUAL(n, 14 + 20 + 8 + 12 + 16 + 4);
	ut_set_l3_len(f, ut_l3_len(f) + 4);
	UT_EXPECT(f, n + 4, DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH);

	/* Frames shorter than 60 bytes: padding after the ICRC is not payload. */
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0);
	CU_ASSERT_EQUAL(n, 60);
	f[58] = 0xAA, f[59] = 0x55;
	UT_EXPECT(f, 60, DRNIC_WIRE_OK);
	UT_EXPECT(f, 58, DRNIC_WIRE_OK);
	UT_EXPECT(f, 57, DRNIC_WIRE_DROP_TRUNCATED_IP);
}

/*
 * Cut a valid frame at every length: the parser names the truncation (or
 * accepts it when only Ethernet padding was cut), in one segment or two.
 */
static void
ut_truncate_all(uint8_t op, uint8_t v, bool vlan, uint32_t len)
{
	static uint8_t f[8192];
	struct drnic_wire_pkt q;
	uint32_t n, l, l2 = vlan ? 18 : 14, ihl = v == 4 ? 20 : 40, frame_len;

	n = ut_base(f, op, v, vlan, len);
	frame_len = l2 + ut_l3_len(f);
	for (l = 0; l <= n; l++) {
		enum drnic_wire_drop want, rc;

		if (l < l2)
			want = DRNIC_WIRE_DROP_TRUNCATED_ETH;
		else if (l < frame_len)
			want = DRNIC_WIRE_DROP_TRUNCATED_IP;
		else
			want = DRNIC_WIRE_OK;
		(void)ihl;
		rc = ut_parse_flat(f, l, 0, 0, &q);
		CU_ASSERT_EQUAL(rc, want);
		rc = ut_parse_flat(f, l, l / 2, 0, &q);
		CU_ASSERT_EQUAL(rc, want);
		rc = ut_parse_flat(f, l, l > 1 ? l - 1 : 0, 0, &q);
		CU_ASSERT_EQUAL(rc, want);
	}
}

static void
test_truncation(void)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info((uint8_t)op);
		uint32_t len;

		if (!(oi->flags & DRNIC_WIRE_OPF_SUPPORTED))
			continue;
		len = oi->flags & DRNIC_WIRE_OPF_PAYLOAD ? 64 : 0;
		ut_truncate_all((uint8_t)op, op & 1 ? 6 : 4, op & 2, len);
	}
	ut_truncate_all(DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0);    /* padded to 60 */
	ut_truncate_all(DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 3);
	ut_truncate_all(DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 6, true, 4096);
}

/*
 * Shrink the declared lengths (IP and UDP agree, ICRC rewritten at the new end):
 * each length gives the reason for the first header that no longer fits.
 */
static void
ut_shrink_all(uint8_t op, uint8_t v, bool vlan)
{
	static uint8_t base[512], f[512];
	const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(op);
	uint32_t n, l3, l2 = vlan ? 18 : 14, ihl = v == 4 ? 20 : 40, full;

	n = ut_base(base, op, v, vlan, 0);
	full = ut_l3_len(base);
	for (l3 = v == 4 ? 0 : 40; l3 < full; l3++) {
		enum drnic_wire_drop want;

		memcpy(f, base, n);
		if (l3 < ihl) {
			f[l2 + 2] = 0, f[l2 + 3] = (uint8_t)l3;
			ut_fix_csum(f);
			want = DRNIC_WIRE_DROP_BAD_IP_LENGTH;
		} else {
			ut_set_l3_len(f, l3);
			if (l3 < ihl + 8)
				want = DRNIC_WIRE_DROP_TRUNCATED_UDP;
			else if (l3 < ihl + 8 + 12 + 4)
				want = DRNIC_WIRE_DROP_TRUNCATED_BTH;
			else if (l3 < ihl + 8 + oi->hdr_len + 4u)
				want = DRNIC_WIRE_DROP_TRUNCATED_EXT_HEADER;
			else if ((l3 - ihl - 8 - oi->hdr_len - 4) % 4 != 0)
				want = DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH;
			else
				want = DRNIC_WIRE_OK;   /* cannot happen: no payload to lose */
		}
		UT_EXPECT(f, n, want);
	}
}

static void
test_shrunk_lengths(void)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info((uint8_t)op);

		if (!(oi->flags & DRNIC_WIRE_OPF_SUPPORTED) || (oi->flags & DRNIC_WIRE_OPF_PAYLOAD_REQ))
			continue;
		ut_shrink_all((uint8_t)op, 4, op & 1);
		ut_shrink_all((uint8_t)op, 6, !(op & 1));
	}
}

/* The same answer whatever the segmentation, down to one byte per segment. */
static void
test_segmentation(void)
{
	static uint8_t f[512];
	struct drnic_wire_pkt ref, q;
	uint32_t n, cut, i;
	struct rte_mbuf *m;

	for (i = 0; i < 4; i++) {
		n = ut_base(f, i & 1 ? DRNIC_WIRE_OP_RC_COMPARE_SWAP : DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE,
			    i & 2 ? 6 : 4, true, i & 1 ? 0 : 101);
		CU_ASSERT_EQUAL_FATAL(ut_parse_flat(f, n, 0, 0, &ref), DRNIC_WIRE_OK);
		for (cut = 1; cut < n; cut++) {
			CU_ASSERT_EQUAL(ut_parse_flat(f, n, cut, 0, &q), DRNIC_WIRE_OK);
			CU_ASSERT(memcmp(&q, &ref, sizeof(q)) == 0);
		}
		m = ut_mbuf_from(f, n, 1);
		CU_ASSERT_FATAL(m != NULL);
		CU_ASSERT_EQUAL(m->nb_segs, n);
		CU_ASSERT_EQUAL(drnic_wire_parse(m, &q), DRNIC_WIRE_OK);
		CU_ASSERT(memcmp(&q, &ref, sizeof(q)) == 0);
		rte_pktmbuf_free(m);
	}
}

/*
 * drnic_wire_copy_out_verify(): for payload sizes around every PadCnt and
 * segment split, opcodes with and without extension headers, IPv4/IPv6,
 * tagged or not: the copy equals the payload and the verdict equals
 * drnic_wire_parse()'s; a flipped bit in the headers, payload or pad makes
 * it -EBADMSG, one in a masked (variant) field does not; nothing is written
 * past the payload.
 */
static void
test_copy_out_verify(void)
{
	static const uint8_t ops[] = {
		DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST,
		DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		DRNIC_WIRE_OP_RC_SEND_ONLY, DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE,
	};
	static const uint32_t sizes[] = {
		1, 2, 3, 4, 5, 63, 64, 65, 71, 72, 255, 256, 257, 1023, 1024, 1025, 4093, 4096,
	};
	static const uint32_t segs[] = { 0, 1, 7, 64, 100, 1000 };
	static uint8_t f[8192], dst[8192 + 64];
	struct drnic_wire_pkt p, q;
	unsigned int o, z, k, n_ok = 0;

	ut_fill(ut_payload, sizeof(ut_payload));
	for (o = 0; o < RTE_DIM(ops); o++) {
		for (z = 0; z < RTE_DIM(sizes); z++) {
			const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(ops[o]);
			uint32_t len = sizes[z], n, pos, bad;
			struct rte_mbuf *m;

			if ((oi->flags & DRNIC_WIRE_OPF_FULL_MTU) && len % 4 != 0)
				continue;
			ut_pkt_random(&p, ops[o], (z & 1) ? 6 : 4, z & 2);
			n = ut_build_flat(f, &p, len);
			for (k = 0; k < RTE_DIM(segs); k++) {
				/* At most ~64 segments: the pool is small. */
				m = ut_mbuf_from(f, n, segs[k] == 0 ? 0 :
						 RTE_MAX(segs[k], n / 64 + 1));
				CU_ASSERT_FATAL(m != NULL);
				CU_ASSERT_EQUAL_FATAL(drnic_wire_parse_flags(m, DRNIC_WIRE_PARSE_SKIP_ICRC,
									    &q), DRNIC_WIRE_OK);
				memset(dst, 0xA5, sizeof(dst));
				CU_ASSERT_EQUAL(drnic_wire_copy_out_verify(m, &q, dst), 0);
				CU_ASSERT(memcmp(dst, ut_payload, len) == 0);
				bad = 0;
				for (pos = len; pos < len + 64; pos++)
					bad += dst[pos] != 0xA5;
				CU_ASSERT_EQUAL(bad, 0);
				rte_pktmbuf_free(m);
				n_ok++;
			}
			/* One flipped bit anywhere in IP..pad: caught unless masked. */
			for (pos = q.l3_off; pos < q.frame_len - DRNIC_WIRE_ICRC_LEN;
			     pos += 1 + (pos < q.payload_off ? 0 : len / 7)) {
				uint32_t l3 = pos - q.l3_off;
				bool masked;

				/* Bit 0x10 of IPv6 byte 0 is in the version, not masked. */
				if (q.ip.version == 4)
					masked = l3 == 1 || l3 == 8 || l3 == 10 || l3 == 11;
				else
					masked = (l3 > 0 && l3 < 4) || l3 == 7;
				masked = masked || pos == q.l4_off + 6 || pos == q.l4_off + 7 ||
					 pos == q.bth_off + 4;
				f[pos] ^= 0x10;
				m = ut_mbuf_from(f, n, 0);
				CU_ASSERT_FATAL(m != NULL);
				/* Offsets from the clean parse: the frame may no longer
				 * parse. A flipped IP version is not an IP header at all. */
				CU_ASSERT_EQUAL(drnic_wire_copy_out_verify(m, &q, dst),
						masked ? 0 : pos == q.l3_off ? -EINVAL : -EBADMSG);
				rte_pktmbuf_free(m);
				f[pos] ^= 0x10;
			}
		}
	}
	/* Offsets outside the frame. */
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 4, false);
	{
		uint32_t n = ut_build_flat(f, &p, 100);
		struct rte_mbuf *m = ut_mbuf_from(f, n, 0);
		struct drnic_wire_pkt r;

		CU_ASSERT_FATAL(m != NULL);
		CU_ASSERT_EQUAL(drnic_wire_parse(m, &q), DRNIC_WIRE_OK);
		r = q;
		r.payload_len = q.payload_len + 8;
		CU_ASSERT_EQUAL(drnic_wire_copy_out_verify(m, &r, dst), -EINVAL);
		r = q;
		r.frame_len = m->pkt_len + 1;
		CU_ASSERT_EQUAL(drnic_wire_copy_out_verify(m, &r, dst), -EINVAL);
		r = q;
		r.payload_off = q.bth_off + 4;
		CU_ASSERT_EQUAL(drnic_wire_copy_out_verify(m, &r, dst), -EINVAL);
		rte_pktmbuf_free(m);
	}
	printf("\n  %u verified copies\n", n_ok);
}

/*
 * DRNIC_WIRE_PARSE_DEFER_ICRC: only RDMA WRITE continuations (MIDDLE, LAST,
 * LAST with immediate) of at least DRNIC_WIRE_DEFER_MIN_PAYLOAD bytes are
 * deferred. A deferred frame with a flipped payload bit parses (icrc_deferred
 * set) and drnic_wire_icrc_check() and drnic_wire_copy_out_verify() then
 * refuse it (a clean one passes the check); every other frame
 * with the same flip is refused by the parser itself, as without the flag;
 * a clean frame is never marked deferred without the flag.
 */
static void
test_defer_icrc(void)
{
	static const struct {
		uint8_t op;
		uint32_t len;
		bool deferred;
	} cases[] = {
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, 1024, true },
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST, 256, true },
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST, 252, false },
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 4096, true },
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 1024, false },   /* RETH: from the frame */
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 4096, false },
		{ DRNIC_WIRE_OP_RC_SEND_MIDDLE, 1024, false },
		{ DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 1024, false },
	};
	static uint8_t f[8192], dst[8192];
	struct drnic_wire_pkt p, q;
	unsigned int c, v;

	ut_fill(ut_payload, sizeof(ut_payload));
	for (c = 0; c < RTE_DIM(cases); c++) {
		for (v = 4; v <= 6; v += 2) {
			uint32_t n, flip;
			struct rte_mbuf *m;

			ut_pkt_random(&p, cases[c].op, (uint8_t)v, c & 1);
			n = ut_build_flat(f, &p, cases[c].len);
			/* Clean: parses either way, deferred only with the flag. */
			m = ut_mbuf_from(f, n, 0);
			CU_ASSERT_FATAL(m != NULL);
			CU_ASSERT_EQUAL(drnic_wire_parse(m, &q), DRNIC_WIRE_OK);
			CU_ASSERT_FALSE(q.icrc_deferred);
			CU_ASSERT_EQUAL(drnic_wire_parse_flags(m, DRNIC_WIRE_PARSE_DEFER_ICRC, &q),
					DRNIC_WIRE_OK);
			CU_ASSERT_EQUAL(q.icrc_deferred, cases[c].deferred);
			CU_ASSERT_EQUAL(drnic_wire_icrc_check(m, &q), 0);
			rte_pktmbuf_free(m);
			/* A flipped payload bit. */
			flip = q.payload_off + cases[c].len / 2;
			f[flip] ^= 0x04;
			m = ut_mbuf_from(f, n, 0);
			CU_ASSERT_FATAL(m != NULL);
			CU_ASSERT_EQUAL(drnic_wire_parse(m, &q), DRNIC_WIRE_DROP_BAD_ICRC);
			if (cases[c].deferred) {
				CU_ASSERT_EQUAL_FATAL(drnic_wire_parse_flags(m, DRNIC_WIRE_PARSE_DEFER_ICRC,
									    &q), DRNIC_WIRE_OK);
				CU_ASSERT_TRUE(q.icrc_deferred);
				CU_ASSERT_EQUAL(drnic_wire_icrc_check(m, &q), -EBADMSG);
				CU_ASSERT_EQUAL(drnic_wire_copy_out_verify(m, &q, dst), -EBADMSG);
			} else {
				CU_ASSERT_EQUAL(drnic_wire_parse_flags(m, DRNIC_WIRE_PARSE_DEFER_ICRC,
									    &q), DRNIC_WIRE_DROP_BAD_ICRC);
			}
			rte_pktmbuf_free(m);
			f[flip] ^= 0x04;
		}
	}
}

/*
 * DRNIC_WIRE_PARSE_BATCH_ICRC and drnic_wire_icrc_burst(): a burst of frames
 * of every kind (short ones checked in place four at a time, ACK-sized and
 * long ones, chained ones, a WRITE continuation the DEFER flag takes
 * instead), clean and with one bit flipped under the ICRC in some of them:
 * the parse accepts them all and leaves their check, the burst names
 * exactly the flipped ones, and each flag is cleared. A frame that also
 * fails a later check reports the ICRC first, as the parse without the flag.
 */
static void
test_batch_icrc(void)
{
	static const struct {
		uint8_t op;
		uint32_t len;
		uint32_t seg;      /* 0: one segment */
	} kinds[] = {
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 64, 0 },
		{ DRNIC_WIRE_OP_RC_SEND_ONLY, 2, 0 },
		{ DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 0, 0 },
		{ DRNIC_WIRE_OP_RC_SEND_ONLY, 200, 0 },
		{ DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 1024, 0 },
		{ DRNIC_WIRE_OP_RC_SEND_ONLY, 100, 64 },
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, 1024, 0 },   /* deferred, not batched */
		{ DRNIC_WIRE_OP_UD_SEND_ONLY, 120, 0 },
	};
	static uint8_t f[64][2048];
	struct drnic_wire_pkt p, q[64];
	struct rte_mbuf *m[64];
	uint32_t n[64];
	unsigned int round, j, cnt, batched = 0;

	ut_fill(ut_payload, sizeof(ut_payload));
	for (round = 0; round < 200; round++) {
		uint64_t flipped = 0, got;

		cnt = 1 + ut_rand() % 64;
		for (j = 0; j < cnt; j++) {
			unsigned int k = ut_rand() % RTE_DIM(kinds);
			enum drnic_wire_drop rc;
			bool defer = kinds[k].op == DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE;

			ut_pkt_random(&p, kinds[k].op, ut_rand() & 1 ? 6 : 4, ut_rand() & 1);
			n[j] = ut_build_flat(f[j], &p, kinds[k].len);
			if (!defer && ut_rand() % 3 == 0) {
				/* A bit under the ICRC: the PSN's last byte or the payload. */
				uint32_t at = ut_rand() & 1 && kinds[k].len > 0 ?
					      n[j] - 4 - 1 - ut_rand() % kinds[k].len :
					      ut_l2(f[j]) + ut_ihl(f[j]) + 8 + 11;

				f[j][at] ^= (uint8_t)(1u << (ut_rand() % 8));
				flipped |= (uint64_t)1 << j;
			}
			m[j] = ut_mbuf_from(f[j], n[j], kinds[k].seg);
			CU_ASSERT_FATAL(m[j] != NULL);
			rc = drnic_wire_parse_flags(m[j], DRNIC_WIRE_PARSE_DEFER_ICRC |
						    DRNIC_WIRE_PARSE_BATCH_ICRC, &q[j]);
			CU_ASSERT_EQUAL(rc, DRNIC_WIRE_OK);
			CU_ASSERT_EQUAL(q[j].icrc_batch, !defer);
			CU_ASSERT_EQUAL(q[j].icrc_deferred, defer);
			batched += q[j].icrc_batch;
			/* Without the flag the same frame is judged at once. */
			CU_ASSERT_EQUAL(drnic_wire_parse(m[j], &p), flipped >> j & 1 ?
					DRNIC_WIRE_DROP_BAD_ICRC : DRNIC_WIRE_OK);
		}
		got = drnic_wire_icrc_burst(m, q, (uint16_t)cnt);
		CU_ASSERT_EQUAL(got, flipped);
		for (j = 0; j < cnt; j++)
			CU_ASSERT_FALSE(q[j].icrc_batch);
		/* Checked and cleared: a second call finds nothing to do. */
		CU_ASSERT_EQUAL(drnic_wire_icrc_burst(m, q, (uint16_t)cnt), 0);
		for (j = 0; j < cnt; j++)
			rte_pktmbuf_free(m[j]);
	}
	CU_ASSERT(batched > 5000);

	/* Flags: SKIP wins over BATCH; a later fault waits for the ICRC's verdict. */
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false);
	n[0] = ut_build_flat(f[0], &p, 64);
	CU_ASSERT_EQUAL(ut_parse_flat(f[0], n[0], 0, DRNIC_WIRE_PARSE_SKIP_ICRC |
				      DRNIC_WIRE_PARSE_BATCH_ICRC, &q[0]), DRNIC_WIRE_OK);
	CU_ASSERT_FALSE(q[0].icrc_batch);
	f[0][ut_l2(f[0]) + 20 + 8 + 1] |= 0x01;     /* TVer 1 */
	CU_ASSERT_EQUAL(ut_parse_flat(f[0], n[0], 0, DRNIC_WIRE_PARSE_BATCH_ICRC, &q[0]),
			DRNIC_WIRE_DROP_BAD_ICRC);
	ut_fix_icrc(f[0]);
	CU_ASSERT_EQUAL(ut_parse_flat(f[0], n[0], 0, DRNIC_WIRE_PARSE_BATCH_ICRC, &q[0]),
			DRNIC_WIRE_DROP_BAD_TVER);
	CU_ASSERT_EQUAL(drnic_wire_icrc_burst(m, q, 0), 0);

	/*
	 * A frame refused before its headers are read (shorter than Ethernet)
	 * leaves nothing to the burst, whatever its drnic_wire_pkt held: here
	 * a batched frame's offsets, which the burst would otherwise follow
	 * past the short frame's end.
	 */
	ut_pkt_random(&p, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false);
	n[0] = ut_build_flat(f[0], &p, 1024);
	CU_ASSERT_EQUAL(ut_parse_flat(f[0], n[0], 0, DRNIC_WIRE_PARSE_BATCH_ICRC, &q[0]),
			DRNIC_WIRE_OK);
	CU_ASSERT_TRUE_FATAL(q[0].icrc_batch);
	m[0] = ut_mbuf_from(f[0], 10, 0);
	CU_ASSERT_FATAL(m[0] != NULL);
	CU_ASSERT_EQUAL(drnic_wire_parse_flags(m[0], DRNIC_WIRE_PARSE_DEFER_ICRC |
					       DRNIC_WIRE_PARSE_BATCH_ICRC, &q[0]),
			DRNIC_WIRE_DROP_TRUNCATED_ETH);
	CU_ASSERT_FALSE(q[0].icrc_batch);
	CU_ASSERT_FALSE(q[0].icrc_deferred);
	CU_ASSERT_EQUAL(drnic_wire_icrc_burst(m, q, 1), 0);
	rte_pktmbuf_free(m[0]);
}

/*
 * Random corruption: never a crash or a read past the frame (ASan), and an
 * accepted frame's offsets always lie inside it.
 */
static void
test_random_corruption(void)
{
	static uint8_t base[2048], f[2048];
	static const uint8_t ops[] = {
		DRNIC_WIRE_OP_RC_SEND_ONLY, DRNIC_WIRE_OP_RC_ACKNOWLEDGE,
		DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE,
		DRNIC_WIRE_OP_UD_SEND_ONLY, DRNIC_WIRE_OP_CNP, DRNIC_WIRE_OP_RC_FETCH_ADD,
	};
	struct drnic_wire_pkt q;
	unsigned int iter, accepted = 0, k;
	uint32_t counts[DRNIC_WIRE_DROP_MAX] = { 0 };

	for (iter = 0; iter < 20000; iter++) {
		uint8_t op = ops[iter % RTE_DIM(ops)];
		const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(op);
		uint32_t plen = oi->flags & DRNIC_WIRE_OPF_PAYLOAD ? ut_rand() % 300 : 0;
		uint32_t n = ut_base(base, op, iter & 1 ? 6 : 4, iter & 2, plen);
		uint32_t len = n, flips = 1 + ut_rand() % 4;
		enum drnic_wire_drop rc;

		memcpy(f, base, n);
		for (k = 0; k < flips; k++)
			f[ut_rand() % 100 % n] ^= (uint8_t)(1u << (ut_rand() % 8));
		if (iter & 4)
			len = ut_rand() % (n + 1);
		/* Half the time make the checksums right, so deeper checks are reached. */
		if (iter & 8 && len == n) {
			ut_fix_csum(f);
			if (ut_l2(f) + ut_l3_len(f) <= n && ut_l3_len(f) >= ut_ihl(f) + 24 &&
			    ((f[ut_l2(f)] >> 4) == 4 || (f[ut_l2(f)] >> 4) == 6))
				ut_fix_icrc(f);
		}
		rc = ut_parse_flat(f, len, ut_rand() % (len + 1), 0, &q);
		CU_ASSERT_FATAL((unsigned int)rc < DRNIC_WIRE_DROP_MAX);
		counts[rc]++;
		if (rc == DRNIC_WIRE_OK) {
			accepted++;
			CU_ASSERT(q.frame_len <= len);
			CU_ASSERT_EQUAL(q.payload_off + q.payload_len + q.bth.padcnt + 4, q.frame_len);
			CU_ASSERT(q.bth_off < q.payload_off);
		}
	}
	printf("\n  20000 corrupted frames: %u accepted;", accepted);
	for (k = 1; k < DRNIC_WIRE_DROP_MAX; k++)
		if (counts[k] > 0)
			printf(" %s %u", drnic_wire_drop_name((enum drnic_wire_drop)k), counts[k]);
	printf("\n");
}

/* One capture: RoCEv2 frames parse, ICRC checks, rebuild byte for byte. */
struct ut_cap_stats {
	unsigned int roce;
	unsigned int other;
	unsigned int rebuilt;
	unsigned int dropped[DRNIC_WIRE_DROP_MAX];
};

static void
ut_capture(const char *name, bool bad_icrc, struct ut_cap_stats *st)
{
	static uint8_t out[16384], pl[16384];
	struct ut_pcap pc;
	const uint8_t *f;
	uint32_t caplen, origlen, l3_len, l3;
	char path[512];
	unsigned int frame = 0;

	if (!ut_testdata(path, sizeof(path), name))
		return;
	CU_ASSERT_EQUAL_FATAL(ut_pcap_open(&pc, path), 0);
	CU_ASSERT_EQUAL(pc.linktype, 1);
	while (ut_pcap_next(&pc, &f, &caplen, &origlen)) {
		struct drnic_wire_pkt q, q2;
		struct drnic_wire_sge sg;
		struct rte_mbuf *m;
		enum drnic_wire_drop rc;

		frame++;
		CU_ASSERT_EQUAL(caplen, origlen);
		l3 = ut_rocev2_l3(f, caplen, &l3_len);
		rc = ut_parse_flat(f, caplen, 0, 0, &q);
		if (l3 == 0) {
			/* Not RoCEv2 (TCP, ICMP ...): counted and dropped, never accepted. */
			st->other++;
			CU_ASSERT(rc == DRNIC_WIRE_DROP_NOT_UDP || rc == DRNIC_WIRE_DROP_NOT_IP ||
				  rc == DRNIC_WIRE_DROP_NOT_ROCEV2_PORT);
			continue;
		}
		st->roce++;
		st->dropped[rc]++;
		if (bad_icrc) {
			CU_ASSERT_EQUAL(rc, DRNIC_WIRE_DROP_BAD_ICRC);
			CU_ASSERT_EQUAL(ut_parse_flat(f, caplen, 0, DRNIC_WIRE_PARSE_SKIP_ICRC, &q),
					DRNIC_WIRE_OK);
			continue;
		}
		CU_ASSERT_EQUAL(rc, DRNIC_WIRE_OK);
		if (rc != DRNIC_WIRE_OK) {
			printf("\n  %s frame %u: %s\n", name, frame, drnic_wire_drop_name(rc));
			continue;
		}
		CU_ASSERT_EQUAL(q.l3_off, l3);
		CU_ASSERT_EQUAL(q.frame_len, l3 + l3_len);
		CU_ASSERT_EQUAL(q.icrc, ut_get_le32(f + l3 + l3_len - 4));
		/* Same view from 64-byte pool segments and from a cut inside the BTH. */
		m = ut_mbuf_from(f, caplen, 64);
		CU_ASSERT_FATAL(m != NULL);
		CU_ASSERT_EQUAL(drnic_wire_parse(m, &q2), DRNIC_WIRE_OK);
		CU_ASSERT(memcmp(&q, &q2, sizeof(q)) == 0);
		CU_ASSERT_EQUAL(drnic_wire_copy_out(m, q.payload_off, q.payload_len, pl), 0);
		rte_pktmbuf_free(m);
		CU_ASSERT_EQUAL(ut_parse_flat(f, caplen, q.bth_off + 5, 0, &q2), DRNIC_WIRE_OK);
		CU_ASSERT(memcmp(&q, &q2, sizeof(q)) == 0);

		/* Rebuild from the parsed view: identical through the ICRC. */
		sg.addr = pl;
		sg.len = q.payload_len;
		q.sg = &sg;
		q.sg_cnt = q.payload_len > 0 ? 1 : 0;
		m = rte_pktmbuf_alloc(ut_big_pool);
		CU_ASSERT_FATAL(m != NULL);
		CU_ASSERT_EQUAL_FATAL(drnic_wire_build(m, &q), 0);
		CU_ASSERT_EQUAL(m->pkt_len, RTE_MAX(q.frame_len, 60u));
		ut_mbuf_bytes(m, out);
		if (memcmp(out, f, q.frame_len) == 0) {
			st->rebuilt++;
		} else {
			uint32_t i;

			for (i = 0; i < q.frame_len && out[i] == f[i]; i++)
				;
			printf("\n  %s frame %u (%s): rebuilt differs at byte %u\n", name, frame,
			       drnic_wire_opcode_name(q.bth.opcode), i);
			CU_FAIL("rebuilt frame differs");
		}
		rte_pktmbuf_free(m);
	}
	ut_pcap_close(&pc);
	CU_ASSERT(frame > 0);
}

static void
test_captures(void)
{
	struct ut_cap_stats cxs = { 0 }, rxe = { 0 }, bad = { 0 }, svc = { 0 };
	char path[512];
	unsigned int i;

	if (!ut_testdata(path, sizeof(path), ""))
		return;
	for (i = 0; i < RTE_DIM(ut_cx_captures); i++)
		ut_capture(ut_cx_captures[i], false, &cxs);
	ut_capture("rxe_linux61_mixed.pcap", false, &rxe);
	ut_capture("rxe_linux61_services.pcap", false, &svc);
	ut_capture("bad-icrc/rc-small.pcap", true, &bad);
	ut_capture("bad-icrc/uc-sg.pcap", true, &bad);
	printf("\n  %u cx frames, %u rxe frames verified (parsed, ICRC, rebuilt identical: %u + %u);"
	       "\n  %u bad-icrc frames dropped as bad_icrc; non-RoCEv2 frames dropped: %u cx, "
	       "%u rxe, %u bad-icrc\n",
	       cxs.dropped[DRNIC_WIRE_OK], rxe.dropped[DRNIC_WIRE_OK], cxs.rebuilt, rxe.rebuilt,
	       bad.dropped[DRNIC_WIRE_DROP_BAD_ICRC], cxs.other, rxe.other, bad.other);
	CU_ASSERT_EQUAL(cxs.roce, 898);
	CU_ASSERT_EQUAL(cxs.dropped[DRNIC_WIRE_OK], 898);
	CU_ASSERT_EQUAL(cxs.rebuilt, 898);
	CU_ASSERT_EQUAL(rxe.roce, 2671);
	CU_ASSERT_EQUAL(rxe.dropped[DRNIC_WIRE_OK], 2671);
	CU_ASSERT_EQUAL(rxe.rebuilt, 2671);
	printf("  %u rxe transport-service frames (UD, UC, SRQ, CM, multicast, atomics) verified,"
	       " %u rebuilt identical\n", svc.dropped[DRNIC_WIRE_OK], svc.rebuilt);
	CU_ASSERT_EQUAL(svc.roce, 3289);
	CU_ASSERT_EQUAL(svc.dropped[DRNIC_WIRE_OK], 3289);
	CU_ASSERT_EQUAL(svc.rebuilt, 3289);
	CU_ASSERT_EQUAL(bad.roce, 38);
	CU_ASSERT_EQUAL(bad.dropped[DRNIC_WIRE_DROP_BAD_ICRC], 38);
}

/*
 * drnic_wire_peek_dqpn(): the parser's destination QPN for both IP versions,
 * with and without a tag, at every frame length from where the QPN fits;
 * -EINVAL below that (the frame in an exact-size heap segment: no read past
 * it) and for a frame that is not IP.
 */
static void
test_peek_dqpn(void)
{
	static uint8_t f[512];
	struct drnic_wire_pkt q;
	struct ut_fake fk;
	struct rte_mbuf *m;
	uint32_t n, l, need, dqpn;
	uint8_t v;
	int vlan, rc;

	for (v = 4; v <= 6; v += 2) {
		for (vlan = 0; vlan < 2; vlan++) {
			n = ut_base(f, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, v, vlan, 64);
			CU_ASSERT_EQUAL_FATAL(ut_parse_flat(f, n, 0, 0, &q), DRNIC_WIRE_OK);
			need = ut_l2(f) + ut_ihl(f) + 8 + 8;   /* BTH bytes 5..7 */
			for (l = 0; l <= n; l++) {
				m = ut_fake_chain(&fk, f, l, NULL, 0);
				dqpn = UINT32_MAX;
				rc = drnic_wire_peek_dqpn(m, &dqpn);
				ut_fake_free(&fk);
				if (l < need) {
					CU_ASSERT_EQUAL(rc, -EINVAL);
					CU_ASSERT_EQUAL(dqpn, UINT32_MAX);
				} else {
					CU_ASSERT_EQUAL(rc, 0);
					CU_ASSERT_EQUAL(dqpn, q.bth.dqpn);
				}
			}
		}
	}
	n = ut_base(f, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 17);
	f[12] = 0x08, f[13] = 0x06;                     /* ARP */
	m = ut_fake_chain(&fk, f, n, NULL, 0);
	CU_ASSERT_EQUAL(drnic_wire_peek_dqpn(m, &dqpn), -EINVAL);
	ut_fake_free(&fk);
}

/*
 * The parser's IPv4 header check against a plain 16-bit big-endian sum, on
 * random headers of every length (options included) and on the ones whose
 * sums carry most (all 0xFF but the checksum): each correct checksum is
 * taken, and each header with one bit flipped is not.
 */
static void
test_ipv4_checksum(void)
{
	uint8_t f[14 + 60] = { 0 };     /* untagged Ethernet, then the header */
	uint8_t *h = f + 14;
	unsigned int round, hl, i, bit, bad = 0, good = 0;

	srand(4791);
	for (round = 0; round < 2000; round++) {
		for (hl = 20; hl <= 60; hl += 4) {
			for (i = 0; i < hl; i++)
				h[i] = round < 8 ? 0xFF : (uint8_t)rand();
			h[0] = (uint8_t)(0x40 | hl / 4);
			ut_fix_csum(f);
			good += wire_ipv4_cksum_ok(h, hl);
			bit = (unsigned int)rand() % (hl * 8);
			h[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			bad += !wire_ipv4_cksum_ok(h, hl);
		}
	}
	CU_ASSERT_EQUAL(good, 2000 * 11);
	CU_ASSERT_EQUAL(bad, 2000 * 11);
}

int
main(void)
{
	CU_pSuite s;

	if (ut_eal_init() != 0)
		return 1;
	ut_fill(ut_payload, sizeof(ut_payload));
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("wire_parse", NULL, NULL);
	CU_add_test(s, "drop_names", test_drop_names);
	CU_add_test(s, "each_drop_reason", test_each_drop_reason);
	CU_add_test(s, "truncation", test_truncation);
	CU_add_test(s, "shrunk_lengths", test_shrunk_lengths);
	CU_add_test(s, "segmentation", test_segmentation);
	CU_add_test(s, "random_corruption", test_random_corruption);
	CU_add_test(s, "copy_out_verify", test_copy_out_verify);
	CU_add_test(s, "defer_icrc", test_defer_icrc);
	CU_add_test(s, "batch_icrc", test_batch_icrc);
	CU_add_test(s, "captures", test_captures);
	CU_add_test(s, "peek_dqpn", test_peek_dqpn);
	CU_add_test(s, "ipv4_checksum", test_ipv4_checksum);
	return ut_run_all();
}
