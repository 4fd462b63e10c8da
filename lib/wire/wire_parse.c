/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Strict parser. All headers are looked at through one window of the frame's
 * first bytes (a pointer into the first segment, or a copy when the headers
 * span segments); every access is checked against the window and against the
 * lengths the frame itself declares, so no input makes it read outside the
 * frame. Checks run in wire order; the first failure is the drop reason.
 */
#include <errno.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "drnic_wire.h"
#include "wire_internal.h"

/* The longest header stack the parser looks at: tag, IPv4 with options,
 * XRCETH and AtomicETH. */
#define WIRE_PARSE_WINDOW \
	(DRNIC_WIRE_ETH_LEN + DRNIC_WIRE_VLAN_LEN + 60 + DRNIC_WIRE_UDP_LEN + \
	 DRNIC_WIRE_BTH_LEN + DRNIC_WIRE_XRCETH_LEN + DRNIC_WIRE_ATOMICETH_LEN)

static const char *const wire_drop_names[DRNIC_WIRE_DROP_MAX] = {
	[DRNIC_WIRE_OK] = "ok",
	[DRNIC_WIRE_DROP_TRUNCATED_ETH] = "truncated_eth",
	[DRNIC_WIRE_DROP_NOT_IP] = "not_ip",
	[DRNIC_WIRE_DROP_TRUNCATED_IP] = "truncated_ip",
	[DRNIC_WIRE_DROP_BAD_IP_VERSION] = "bad_ip_version",
	[DRNIC_WIRE_DROP_BAD_IHL] = "bad_ihl",
	[DRNIC_WIRE_DROP_BAD_IP_LENGTH] = "bad_ip_length",
	[DRNIC_WIRE_DROP_BAD_IP_CHECKSUM] = "bad_ip_checksum",
	[DRNIC_WIRE_DROP_IP_FRAGMENT] = "ip_fragment",
	[DRNIC_WIRE_DROP_NOT_UDP] = "not_udp",
	[DRNIC_WIRE_DROP_TRUNCATED_UDP] = "truncated_udp",
	[DRNIC_WIRE_DROP_NOT_ROCEV2_PORT] = "not_rocev2_port",
	[DRNIC_WIRE_DROP_UDP_LENGTH_MISMATCH] = "udp_length_mismatch",
	[DRNIC_WIRE_DROP_TRUNCATED_BTH] = "truncated_bth",
	[DRNIC_WIRE_DROP_UNKNOWN_OPCODE] = "unknown_opcode",
	[DRNIC_WIRE_DROP_UNSUPPORTED_OPCODE] = "unsupported_opcode",
	[DRNIC_WIRE_DROP_BAD_TVER] = "bad_tver",
	[DRNIC_WIRE_DROP_TRUNCATED_EXT_HEADER] = "truncated_ext_header",
	[DRNIC_WIRE_DROP_BAD_PADCNT] = "bad_padcnt",
	[DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH] = "bad_payload_length",
	[DRNIC_WIRE_DROP_BAD_ICRC] = "bad_icrc",
};

const char *
drnic_wire_drop_name(enum drnic_wire_drop reason)
{
	if ((unsigned int)reason >= DRNIC_WIRE_DROP_MAX)
		return "invalid";
	return wire_drop_names[reason];
}

int
drnic_wire_copy_out(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *dst)
{
	uint8_t *d = dst;

	if (off > m->pkt_len || len > m->pkt_len - off)
		return -EINVAL;
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && len > 0) {
		uint32_t n = RTE_MIN((uint32_t)m->data_len - off, len);

		/* Inline: small payloads are most of a message-rate load. */
		rte_memcpy(d, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		d += n;
		len -= n;
		off = 0;
		m = m->next;
	}
	return 0;
}

static inline uint16_t
wire_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
wire_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
wire_get64(const uint8_t *p)
{
	return (uint64_t)wire_get32(p) << 32 | wire_get32(p + 4);
}

/*
 * Does IPv4 header @h of @hlen bytes (20..60, a multiple of 4) sum to all
 * ones? The one's complement sum is taken in 32-bit words of host order
 * and folded: the same as the 16-bit big-endian words' sum with its bytes
 * swapped (RFC 1071's byte order independence and parallel summation),
 * and all ones either way.
 */
static bool
wire_ipv4_cksum_ok(const uint8_t *h, uint32_t hlen)
{
	uint64_t sum = 0;
	uint32_t w, i;

	for (i = 0; i < hlen; i += 4) {
		memcpy(&w, h + i, sizeof(w));
		sum += w;
	}
	/* At most 15 words: under 2^36; 33 bits after one fold, 32 after two. */
	sum = (sum & 0xFFFFFFFF) + (sum >> 32);
	sum = (sum & 0xFFFFFFFF) + (sum >> 32);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return sum == 0xFFFF;
}

static void
wire_get_ext(const uint8_t *bth, const struct drnic_wire_opinfo *oi, struct drnic_wire_pkt *p)
{
	const uint8_t *off = oi->ext_off;
	const uint8_t *h;

	if (oi->ext & DRNIC_WIRE_EXT_DETH) {
		h = bth + off[DRNIC_WIRE_EXT_IDX_DETH];
		p->deth.qkey = wire_get32(h);
		p->deth.sqpn = wire_get32(h + 4) & DRNIC_QPN_MASK;
	}
	if (oi->ext & DRNIC_WIRE_EXT_XRCETH)
		p->xrceth.srqn = wire_get32(bth + off[DRNIC_WIRE_EXT_IDX_XRCETH]) & DRNIC_QPN_MASK;
	if (oi->ext & DRNIC_WIRE_EXT_RETH) {
		h = bth + off[DRNIC_WIRE_EXT_IDX_RETH];
		p->reth.va = wire_get64(h);
		p->reth.rkey = wire_get32(h + 8);
		p->reth.dmalen = wire_get32(h + 12);
	}
	if (oi->ext & DRNIC_WIRE_EXT_ATOMICETH) {
		h = bth + off[DRNIC_WIRE_EXT_IDX_ATOMICETH];
		p->atomic.va = wire_get64(h);
		p->atomic.rkey = wire_get32(h + 8);
		p->atomic.swap_add = wire_get64(h + 12);
		p->atomic.cmp = wire_get64(h + 20);
	}
	if (oi->ext & DRNIC_WIRE_EXT_AETH) {
		uint32_t v = wire_get32(bth + off[DRNIC_WIRE_EXT_IDX_AETH]);

		p->aeth.syndrome = (uint8_t)(v >> 24);
		p->aeth.msn = v & DRNIC_MSN_MASK;
	}
	if (oi->ext & DRNIC_WIRE_EXT_ATOMICACKETH)
		p->atomic_orig = wire_get64(bth + off[DRNIC_WIRE_EXT_IDX_ATOMICACKETH]);
	if (oi->ext & DRNIC_WIRE_EXT_IMMDT)
		memcpy(&p->imm, bth + off[DRNIC_WIRE_EXT_IDX_IMMDT], 4);
	if (oi->ext & DRNIC_WIRE_EXT_IETH)
		p->ieth_rkey = wire_get32(bth + off[DRNIC_WIRE_EXT_IDX_IETH]);
}

/* Payload and PadCnt rules of the opcode for @area bytes of payload + pad. */
static enum drnic_wire_drop
wire_check_payload(const struct drnic_wire_opinfo *oi, uint32_t area, uint32_t padcnt)
{
	if (!(oi->flags & DRNIC_WIRE_OPF_PAYLOAD)) {
		if (padcnt != 0)
			return DRNIC_WIRE_DROP_BAD_PADCNT;
		return area == 0 ? DRNIC_WIRE_OK : DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH;
	}
	if (area % 4 != 0)
		return DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH;
	if (padcnt > area || (padcnt != 0 && (oi->flags & DRNIC_WIRE_OPF_FULL_MTU)))
		return DRNIC_WIRE_DROP_BAD_PADCNT;
	if (area - padcnt == 0 && (oi->flags & DRNIC_WIRE_OPF_PAYLOAD_REQ))
		return DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH;
	return DRNIC_WIRE_OK;
}

/* Is @icrc the ICRC of the IP packet at @l3_off (@l3_len bytes) of @m? */
static inline bool
wire_icrc_ok(const struct rte_mbuf *m, uint32_t l3_off, uint32_t l3_len, uint32_t icrc)
{
	uint32_t calc;

	/* The window may be a copy: hand the mbuf, not the window. */
	return drnic_wire_icrc(m, l3_off, l3_len, &calc) == 0 && calc == icrc;
}

/*
 * The checks of a BTH of opcode @oi after the ICRC (TVer, opcode, the
 * extension headers' and the payload's lengths in a UDP payload of @ulen
 * bytes); sets the payload area (with pad) and PadCnt.
 */
static inline enum drnic_wire_drop
wire_check_bth(const struct drnic_wire_opinfo *oi, const uint8_t *bth, uint32_t ulen,
	       uint32_t *area, uint32_t *padcnt)
{
	if ((bth[1] & 0xF) != 0)
		return DRNIC_WIRE_DROP_BAD_TVER;
	if (oi->name == NULL)
		return DRNIC_WIRE_DROP_UNKNOWN_OPCODE;
	if (!(oi->flags & DRNIC_WIRE_OPF_SUPPORTED))
		return DRNIC_WIRE_DROP_UNSUPPORTED_OPCODE;
	if (ulen < (uint32_t)DRNIC_WIRE_UDP_LEN + oi->hdr_len + DRNIC_WIRE_ICRC_LEN)
		return DRNIC_WIRE_DROP_TRUNCATED_EXT_HEADER;
	*area = ulen - DRNIC_WIRE_UDP_LEN - oi->hdr_len - DRNIC_WIRE_ICRC_LEN;
	*padcnt = (bth[1] >> 4) & 3;
	return wire_check_payload(oi, *area, *padcnt);
}

/*
 * DRNIC_WIRE_PARSE_DEFER_ICRC: an RDMA WRITE continuation (its payload lands
 * where the responder's state says) with a payload worth copying and
 * verifying in one pass; @ulen is the UDP length.
 */
static inline bool
wire_icrc_deferrable(uint8_t opcode, uint32_t ulen)
{
	uint32_t hdrs = DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN + DRNIC_WIRE_ICRC_LEN;

	if (opcode == DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE)
		hdrs += DRNIC_WIRE_IMMDT_LEN;
	else if (opcode != DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE &&
		 opcode != DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST)
		return false;
	return ulen >= hdrs + DRNIC_WIRE_DEFER_MIN_PAYLOAD;
}

enum drnic_wire_drop
drnic_wire_parse_flags(const struct rte_mbuf *m, uint32_t flags, struct drnic_wire_pkt *out)
{
	uint8_t copy[WIRE_PARSE_WINDOW], tbuf[DRNIC_WIRE_ICRC_LEN];
	const struct drnic_wire_opinfo *oi;
	const uint8_t *h, *ip, *udp, *bth, *tail;
	uint32_t plen = m->pkt_len;
	uint32_t win, l2, l3_len, ip_hlen, ip_payload, ulen, area, padcnt, icrc;
	bool deferred, batch;
	uint16_t type;
	enum drnic_wire_drop rc;

	/* Before any return: a refused frame leaves nothing to the burst's
	 * ICRC check (icrc_batch false) and no stale offsets. */
	memset(out, 0, sizeof(*out));
	win = RTE_MIN(plen, (uint32_t)WIRE_PARSE_WINDOW);
	if (win < DRNIC_WIRE_ETH_LEN)
		return DRNIC_WIRE_DROP_TRUNCATED_ETH;
	h = rte_pktmbuf_read(m, 0, win, copy);
	if (h == NULL)
		return DRNIC_WIRE_DROP_TRUNCATED_ETH;  /* pkt_len larger than the chain */

	memcpy(out->eth.dst, h, 6);
	memcpy(out->eth.src, h + 6, 6);
	type = wire_get16(h + 12);
	l2 = DRNIC_WIRE_ETH_LEN;
	if (type == DRNIC_WIRE_ETHERTYPE_VLAN) {
		if (win < DRNIC_WIRE_ETH_LEN + DRNIC_WIRE_VLAN_LEN)
			return DRNIC_WIRE_DROP_TRUNCATED_ETH;
		out->eth.has_vlan = true;
		out->eth.vlan_tci = wire_get16(h + 14);
		type = wire_get16(h + 16);
		l2 += DRNIC_WIRE_VLAN_LEN;
	}

	/* IP: the frame must hold the whole IP packet (the ICRC is its last 4 bytes). */
	ip = h + l2;
	if (type == DRNIC_WIRE_ETHERTYPE_IPV4) {
		if (win < l2 + DRNIC_WIRE_IPV4_LEN)
			return DRNIC_WIRE_DROP_TRUNCATED_IP;
		if (ip[0] >> 4 != 4)
			return DRNIC_WIRE_DROP_BAD_IP_VERSION;
		ip_hlen = (uint32_t)(ip[0] & 0xF) * 4;
		if (ip_hlen < DRNIC_WIRE_IPV4_LEN)
			return DRNIC_WIRE_DROP_BAD_IHL;
		if (win < l2 + ip_hlen)
			return DRNIC_WIRE_DROP_TRUNCATED_IP;
		l3_len = wire_get16(ip + 2);
		if (l3_len < ip_hlen)
			return DRNIC_WIRE_DROP_BAD_IP_LENGTH;
		if (l3_len > plen - l2)
			return DRNIC_WIRE_DROP_TRUNCATED_IP;
		if (!(flags & DRNIC_WIRE_PARSE_SKIP_IP_CSUM) && !wire_ipv4_cksum_ok(ip, ip_hlen))
			return DRNIC_WIRE_DROP_BAD_IP_CHECKSUM;
		if (wire_get16(ip + 6) & (DRNIC_WIRE_IPV4_MF | DRNIC_WIRE_IPV4_OFFMASK))
			return DRNIC_WIRE_DROP_IP_FRAGMENT;
		if (ip[9] != DRNIC_WIRE_IPPROTO_UDP)
			return DRNIC_WIRE_DROP_NOT_UDP;
		out->ip.version = 4;
		out->ip.tos = ip[1];
		out->ip.id = wire_get16(ip + 4);
		out->ip.df = (wire_get16(ip + 6) & DRNIC_WIRE_IPV4_DF) != 0;
		out->ip.ttl = ip[8];
		memcpy(out->ip.src, ip + 12, 4);
		memcpy(out->ip.dst, ip + 16, 4);
	} else if (type == DRNIC_WIRE_ETHERTYPE_IPV6) {
		uint32_t vtf;

		if (win < l2 + DRNIC_WIRE_IPV6_LEN)
			return DRNIC_WIRE_DROP_TRUNCATED_IP;
		if (ip[0] >> 4 != 6)
			return DRNIC_WIRE_DROP_BAD_IP_VERSION;
		ip_hlen = DRNIC_WIRE_IPV6_LEN;
		l3_len = ip_hlen + wire_get16(ip + 4);
		if (l3_len > plen - l2)
			return DRNIC_WIRE_DROP_TRUNCATED_IP;
		/* Extension headers are not UDP either: RoCEv2 does not use them. */
		if (ip[6] != DRNIC_WIRE_IPPROTO_UDP)
			return DRNIC_WIRE_DROP_NOT_UDP;
		vtf = wire_get32(ip);
		out->ip.version = 6;
		out->ip.tos = (uint8_t)(vtf >> 20);
		out->ip.flow_label = vtf & 0xFFFFF;
		out->ip.ttl = ip[7];
		memcpy(out->ip.src, ip + 8, 16);
		memcpy(out->ip.dst, ip + 24, 16);
	} else {
		return DRNIC_WIRE_DROP_NOT_IP;
	}

	/*
	 * UDP. From here on l2 + l3_len <= plen, and every header we touch ends
	 * before l2 + l3_len and inside the window (its size covers the longest
	 * stack), so the checks below are against the declared lengths only.
	 */
	ip_payload = l3_len - ip_hlen;
	if (ip_payload < DRNIC_WIRE_UDP_LEN)
		return DRNIC_WIRE_DROP_TRUNCATED_UDP;
	udp = ip + ip_hlen;
	if (wire_get16(udp + 2) != DRNIC_ROCEV2_UDP_PORT)
		return DRNIC_WIRE_DROP_NOT_ROCEV2_PORT;
	ulen = wire_get16(udp + 4);
	if (ulen != ip_payload)
		return DRNIC_WIRE_DROP_UDP_LENGTH_MISMATCH;
	out->udp.sport = wire_get16(udp);
	out->udp.dport = DRNIC_ROCEV2_UDP_PORT;

	/* BTH and ICRC */
	if (ulen < DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN + DRNIC_WIRE_ICRC_LEN)
		return DRNIC_WIRE_DROP_TRUNCATED_BTH;
	bth = udp + DRNIC_WIRE_UDP_LEN;
	tail = rte_pktmbuf_read(m, l2 + l3_len - DRNIC_WIRE_ICRC_LEN, DRNIC_WIRE_ICRC_LEN, tbuf);
	icrc = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
	       (uint32_t)tail[3] << 24;
	deferred = (flags & (DRNIC_WIRE_PARSE_DEFER_ICRC | DRNIC_WIRE_PARSE_SKIP_ICRC)) ==
		   DRNIC_WIRE_PARSE_DEFER_ICRC && wire_icrc_deferrable(bth[0], ulen);
	batch = !deferred && (flags & (DRNIC_WIRE_PARSE_BATCH_ICRC | DRNIC_WIRE_PARSE_SKIP_ICRC)) ==
			     DRNIC_WIRE_PARSE_BATCH_ICRC;
	if (!(flags & DRNIC_WIRE_PARSE_SKIP_ICRC) && !deferred && !batch &&
	    !wire_icrc_ok(m, l2, l3_len, icrc))
		return DRNIC_WIRE_DROP_BAD_ICRC;
	oi = drnic_wire_opcode_info(bth[0]);
	rc = wire_check_bth(oi, bth, ulen, &area, &padcnt);
	if (rc != DRNIC_WIRE_OK) {
		/* Left to the burst: the ICRC's verdict comes first. */
		if (batch && !wire_icrc_ok(m, l2, l3_len, icrc))
			return DRNIC_WIRE_DROP_BAD_ICRC;
		return rc;
	}

	out->bth.opcode = bth[0];
	out->bth.se = (bth[1] & 0x80) != 0;
	out->bth.m = (bth[1] & 0x40) != 0;
	out->bth.padcnt = (uint8_t)padcnt;
	out->bth.tver = 0;
	out->bth.pkey = wire_get16(bth + 2);
	out->bth.fecn = (bth[4] & 0x80) != 0;
	out->bth.becn = (bth[4] & 0x40) != 0;
	out->bth.dqpn = wire_get32(bth + 4) & DRNIC_QPN_MASK;
	out->bth.ackreq = (bth[8] & 0x80) != 0;
	out->bth.psn = wire_get32(bth + 8) & DRNIC_PSN_MASK;
	wire_get_ext(bth, oi, out);

	out->l3_off = l2;
	out->l4_off = l2 + ip_hlen;
	out->bth_off = out->l4_off + DRNIC_WIRE_UDP_LEN;
	out->payload_off = out->bth_off + oi->hdr_len;
	out->payload_len = area - padcnt;
	out->frame_len = l2 + l3_len;
	out->icrc = icrc;
	out->icrc_deferred = deferred;
	out->icrc_batch = batch;
	return DRNIC_WIRE_OK;
}

int
drnic_wire_peek_dqpn(const struct rte_mbuf *m, uint32_t *dqpn)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, off = 12, l3;
	uint16_t type;

	if (len < off + 2)
		return -EINVAL;
	type = (uint16_t)(p[off] << 8 | p[off + 1]);
	off += 2;
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (len < off + 4)
			return -EINVAL;
		type = (uint16_t)(p[off + 2] << 8 | p[off + 3]);
		off += 4;
	}
	if (type == RTE_ETHER_TYPE_IPV4 && len > off)
		l3 = (p[off] & 0xFu) * 4u;
	else if (type == RTE_ETHER_TYPE_IPV6)
		l3 = 40;
	else
		return -EINVAL;
	off += l3 + 8 + 5;  /* UDP, then BTH bytes 5..7 hold the QPN */
	if (len < off + 3)
		return -EINVAL;
	*dqpn = (uint32_t)p[off] << 16 | (uint32_t)p[off + 1] << 8 | p[off + 2];
	return 0;
}

enum drnic_wire_drop
drnic_wire_parse(const struct rte_mbuf *m, struct drnic_wire_pkt *out)
{
	return drnic_wire_parse_flags(m, 0, out);
}
