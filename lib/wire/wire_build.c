/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame builder: headers into the first segment, payload gathered after them
 * (continuing into segments from the mbuf's pool), pad, ICRC, Ethernet padding.
 * The ICRC is computed while the bytes are written, so nothing is read twice:
 * long payload is copied and folded into the CRC in one pass
 * (wire_crc32_copy); short payload is copied first and covered by the same
 * CRC call as the headers, because each CRC call has a fixed cost that
 * dominates at 64 bytes.
 */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "drnic_wire.h"
#include "wire_internal.h"

/* Where the builder writes next: the last segment of the chain. */
struct wire_cursor {
	struct rte_mbuf *head;
	struct rte_mbuf *seg;
	uint32_t crc;
};

void
drnic_wire_pkt_init(struct drnic_wire_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->ip.version = 4;
	p->ip.ttl = 64;
	p->ip.df = true;
	p->udp.dport = DRNIC_ROCEV2_UDP_PORT;
	p->bth.pkey = 0xFFFF;
}

static uint32_t
wire_ip_hdr_len(uint8_t ip_version)
{
	if (ip_version == 4)
		return DRNIC_WIRE_IPV4_LEN;
	if (ip_version == 6)
		return DRNIC_WIRE_IPV6_LEN;
	return 0;
}

uint32_t
drnic_wire_hdr_len(uint8_t opcode, uint8_t ip_version, bool has_vlan)
{
	const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(opcode);
	uint32_t ip = wire_ip_hdr_len(ip_version);

	if (oi->name == NULL || ip == 0)
		return 0;
	return DRNIC_WIRE_ETH_LEN + (has_vlan ? DRNIC_WIRE_VLAN_LEN : 0) + ip +
	       DRNIC_WIRE_UDP_LEN + oi->hdr_len;
}

uint32_t
drnic_wire_frame_len(uint8_t opcode, uint8_t ip_version, bool has_vlan, uint32_t payload_len)
{
	uint32_t hdr = drnic_wire_hdr_len(opcode, ip_version, has_vlan);
	uint32_t len;

	if (hdr == 0)
		return 0;
	len = hdr + RTE_ALIGN_CEIL(payload_len, 4) + DRNIC_WIRE_ICRC_LEN;
	return RTE_MAX(len, (uint32_t)DRNIC_WIRE_ETH_MIN_FRAME);
}

enum drnic_wire_mtu
drnic_wire_mtu_for_ip_mtu(uint32_t ip_mtu, uint8_t ip_version)
{
	/* The longest header a payload-carrying packet has: RETH + ImmDt. */
	uint32_t over = wire_ip_hdr_len(ip_version) + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN +
			DRNIC_WIRE_RETH_LEN + DRNIC_WIRE_IMMDT_LEN + DRNIC_WIRE_ICRC_LEN;
	int mtu;

	if (over == DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN + DRNIC_WIRE_RETH_LEN +
		    DRNIC_WIRE_IMMDT_LEN + DRNIC_WIRE_ICRC_LEN)
		return 0;       /* bad IP version */
	for (mtu = DRNIC_WIRE_MTU_4096; mtu >= DRNIC_WIRE_MTU_256; mtu--)
		if (over + drnic_wire_mtu_bytes((enum drnic_wire_mtu)mtu) <= ip_mtu)
			return (enum drnic_wire_mtu)mtu;
	return 0;
}

/*
 * IPv4 header checksum from the field values, not from the header just
 * written: reading back bytes still in the store buffer with wider loads
 * stalls (it was the largest single cost of building a 64 B frame).
 */
static uint16_t
wire_ipv4_cksum(const struct drnic_wire_pkt *p, uint32_t l3_len)
{
	const uint8_t *s = p->ip.src, *d = p->ip.dst;
	uint32_t sum;

	sum = (0x45u << 8 | p->ip.tos) + l3_len + p->ip.id + (p->ip.df ? DRNIC_WIRE_IPV4_DF : 0) +
	      ((uint32_t)p->ip.ttl << 8 | DRNIC_WIRE_IPPROTO_UDP) +
	      ((uint32_t)s[0] << 8 | s[1]) + ((uint32_t)s[2] << 8 | s[3]) +
	      ((uint32_t)d[0] << 8 | d[1]) + ((uint32_t)d[2] << 8 | d[3]);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline void
wire_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
wire_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
wire_put64(uint8_t *p, uint64_t v)
{
	wire_put32(p, (uint32_t)(v >> 32));
	wire_put32(p + 4, (uint32_t)v);
}

/* Write the extension headers of @oi for @p at @bth (the BTH start). */
static void
wire_put_ext(uint8_t *bth, const struct drnic_wire_opinfo *oi, const struct drnic_wire_pkt *p)
{
	const uint8_t *off = oi->ext_off;
	uint8_t *h;

	if (oi->ext & DRNIC_WIRE_EXT_DETH) {
		h = bth + off[DRNIC_WIRE_EXT_IDX_DETH];
		wire_put32(h, p->deth.qkey);
		wire_put32(h + 4, p->deth.sqpn & DRNIC_QPN_MASK);
	}
	if (oi->ext & DRNIC_WIRE_EXT_XRCETH)
		wire_put32(bth + off[DRNIC_WIRE_EXT_IDX_XRCETH], p->xrceth.srqn & DRNIC_QPN_MASK);
	if (oi->ext & DRNIC_WIRE_EXT_RETH) {
		h = bth + off[DRNIC_WIRE_EXT_IDX_RETH];
		wire_put64(h, p->reth.va);
		wire_put32(h + 8, p->reth.rkey);
		wire_put32(h + 12, p->reth.dmalen);
	}
	if (oi->ext & DRNIC_WIRE_EXT_ATOMICETH) {
		h = bth + off[DRNIC_WIRE_EXT_IDX_ATOMICETH];
		wire_put64(h, p->atomic.va);
		wire_put32(h + 8, p->atomic.rkey);
		wire_put64(h + 12, p->atomic.swap_add);
		wire_put64(h + 20, p->atomic.cmp);
	}
	if (oi->ext & DRNIC_WIRE_EXT_AETH) {
		h = bth + off[DRNIC_WIRE_EXT_IDX_AETH];
		wire_put32(h, (uint32_t)p->aeth.syndrome << 24 | (p->aeth.msn & DRNIC_MSN_MASK));
	}
	if (oi->ext & DRNIC_WIRE_EXT_ATOMICACKETH)
		wire_put64(bth + off[DRNIC_WIRE_EXT_IDX_ATOMICACKETH], p->atomic_orig);
	if (oi->ext & DRNIC_WIRE_EXT_IMMDT)
		memcpy(bth + off[DRNIC_WIRE_EXT_IDX_IMMDT], &p->imm, 4);
	if (oi->ext & DRNIC_WIRE_EXT_IETH)
		wire_put32(bth + off[DRNIC_WIRE_EXT_IDX_IETH], p->ieth_rkey);
	if (oi->ext & DRNIC_WIRE_EXT_CNP)
		memset(bth + off[DRNIC_WIRE_EXT_IDX_CNP], 0, DRNIC_WIRE_CNP_RSVD_LEN);
}

/*
 * Append @len bytes from @src (zeros when NULL) at the end of the chain,
 * adding segments from the head's pool as needed; fold them into the CRC when
 * @crc is set.
 */
static int
wire_append(struct wire_cursor *c, const void *src, uint32_t len, bool crc)
{
	static const uint8_t zeros[64];
	const uint8_t *s = src;

	while (len > 0) {
		struct rte_mbuf *seg = c->seg;
		uint32_t room = rte_pktmbuf_tailroom(seg);
		uint32_t n;
		uint8_t *dst;

		if (room == 0) {
			struct rte_mbuf *next = rte_pktmbuf_alloc(c->head->pool);

			if (next == NULL)
				return -ENOMEM;
			next->data_off = 0;   /* a continuation needs no headroom */
			seg->next = next;
			c->head->nb_segs++;
			c->seg = next;
			continue;
		}
		n = RTE_MIN(room, len);
		if (s == NULL)
			n = RTE_MIN(n, (uint32_t)sizeof(zeros));
		dst = rte_pktmbuf_mtod_offset(seg, uint8_t *, seg->data_len);
		if (crc)
			c->crc = wire_crc32_copy(c->crc, dst, s != NULL ? s : zeros, n);
		else
			rte_memcpy(dst, s != NULL ? s : zeros, n);
		seg->data_len += n;
		c->head->pkt_len += n;
		len -= n;
		if (s != NULL)
			s += n;
	}
	return 0;
}

static void
wire_build_reset(struct rte_mbuf *m)
{
	if (m->next != NULL) {
		rte_pktmbuf_free(m->next);
		m->next = NULL;
	}
	m->nb_segs = 1;
	m->data_len = 0;
	m->pkt_len = 0;
}

/*
 * Payload up to this size is copied before the CRC runs, so that one CRC
 * call covers headers, payload and pad (ISA-L's fixed cost per call is most
 * of the CRC time of a small frame).
 */
#define WIRE_BUILD_SMALL 512

/* The variant fields of the ICRC, as saved while they are masked in place. */
struct wire_icrc_mask {
	uint8_t ip[4];   /* IPv4: TOS, TTL, checksum; IPv6: first 4 bytes */
	uint8_t hop;     /* IPv6 hop limit */
	uint8_t bth4;
};

/*
 * Set the fields the ICRC does not cover to ones in the frame itself (IPv4:
 * TOS, TTL, checksum; IPv6: traffic class, flow label, hop limit; UDP
 * checksum; BTH byte 4), so the CRC runs over the frame in place; undone by
 * wire_icrc_unmask().
 */
static inline void
wire_icrc_mask(uint8_t *ip, uint32_t ip_hlen, struct wire_icrc_mask *sv)
{
	uint8_t *udp = ip + ip_hlen, *bth = udp + DRNIC_WIRE_UDP_LEN;

	if (ip_hlen == DRNIC_WIRE_IPV4_LEN) {
		sv->ip[0] = ip[1];
		sv->ip[1] = ip[8];
		sv->ip[2] = ip[10];
		sv->ip[3] = ip[11];
		ip[1] = 0xFF;
		ip[8] = 0xFF;
		ip[10] = 0xFF;
		ip[11] = 0xFF;
	} else {
		memcpy(sv->ip, ip, 4);
		ip[0] |= 0x0F;
		ip[1] = 0xFF;
		ip[2] = 0xFF;
		ip[3] = 0xFF;
		sv->hop = ip[7];
		ip[7] = 0xFF;
	}
	udp[6] = 0xFF;
	udp[7] = 0xFF;
	sv->bth4 = bth[4];
	bth[4] = 0xFF;
}

static inline void
wire_icrc_unmask(uint8_t *ip, uint32_t ip_hlen, const struct wire_icrc_mask *sv)
{
	uint8_t *udp = ip + ip_hlen, *bth = udp + DRNIC_WIRE_UDP_LEN;

	if (ip_hlen == DRNIC_WIRE_IPV4_LEN) {
		ip[1] = sv->ip[0];
		ip[8] = sv->ip[1];
		ip[10] = sv->ip[2];
		ip[11] = sv->ip[3];
	} else {
		memcpy(ip, sv->ip, 4);
		ip[7] = sv->hop;
	}
	udp[6] = 0;     /* drnic sends UDP checksum 0 */
	udp[7] = 0;
	bth[4] = sv->bth4;
}

/* BTH's third word: AckReq, PSN. */
static inline uint32_t
wire_bth_w2(const struct drnic_wire_pkt *p)
{
	return (p->bth.ackreq ? 1u << 31 : 0) | (p->bth.psn & DRNIC_PSN_MASK);
}

/* Ethernet, IP, UDP and BTH of @p at @h, from its fields, for an IP packet
 * of @l3_len bytes with @pad bytes of PadCnt. */
static void
wire_put_path(uint8_t *h, const struct drnic_wire_pkt *p, uint32_t l2_len, uint32_t ip_hlen,
	      uint32_t l3_len, uint32_t pad)
{
	uint8_t *ip, *udp, *bth;

	/* Ethernet and tag */
	memcpy(h, p->eth.dst, 6);
	memcpy(h + 6, p->eth.src, 6);
	if (p->eth.has_vlan) {
		wire_put16(h + 12, DRNIC_WIRE_ETHERTYPE_VLAN);
		wire_put16(h + 14, p->eth.vlan_tci);
	}
	wire_put16(h + l2_len - 2, p->ip.version == 4 ? DRNIC_WIRE_ETHERTYPE_IPV4 :
						       DRNIC_WIRE_ETHERTYPE_IPV6);

	/* IP */
	ip = h + l2_len;
	if (p->ip.version == 4) {
		ip[0] = 0x45;
		ip[1] = p->ip.tos;
		wire_put16(ip + 2, (uint16_t)l3_len);
		wire_put16(ip + 4, p->ip.id);
		wire_put16(ip + 6, p->ip.df ? DRNIC_WIRE_IPV4_DF : 0);
		ip[8] = p->ip.ttl;
		ip[9] = DRNIC_WIRE_IPPROTO_UDP;
		wire_put16(ip + 10, wire_ipv4_cksum(p, l3_len));
		memcpy(ip + 12, p->ip.src, 4);
		memcpy(ip + 16, p->ip.dst, 4);
	} else {
		wire_put32(ip, 6u << 28 | (uint32_t)p->ip.tos << 20 | (p->ip.flow_label & 0xFFFFF));
		wire_put16(ip + 4, (uint16_t)(l3_len - ip_hlen));
		ip[6] = DRNIC_WIRE_IPPROTO_UDP;
		ip[7] = p->ip.ttl;
		memcpy(ip + 8, p->ip.src, 16);
		memcpy(ip + 24, p->ip.dst, 16);
	}

	/* UDP */
	udp = ip + ip_hlen;
	wire_put16(udp, p->udp.sport);
	wire_put16(udp + 2, DRNIC_ROCEV2_UDP_PORT);
	wire_put16(udp + 4, (uint16_t)(l3_len - ip_hlen));
	wire_put16(udp + 6, 0);

	/* BTH and extension headers */
	bth = udp + DRNIC_WIRE_UDP_LEN;
	/* Whole words from the fields (as drnic_wire_bth_set(), whose bool
	 * arguments gcc spilled as bytes and reloaded as words, a store
	 * forwarding stall that cost a quarter of a 64 B build). */
	wire_put32(bth, (uint32_t)p->bth.opcode << 24 | (uint32_t)(p->bth.se ? 0x80 : 0) << 16 |
			(uint32_t)(p->bth.m ? 0x40 : 0) << 16 | (pad & 3) << 20 |
			(uint32_t)(p->bth.tver & 0xF) << 16 | p->bth.pkey);
	wire_put32(bth + 4, (p->bth.fecn ? 1u << 31 : 0) | (p->bth.becn ? 1u << 30 : 0) |
			    (p->bth.dqpn & DRNIC_QPN_MASK));
	wire_put32(bth + 8, wire_bth_w2(p));
}

static int wire_build(struct rte_mbuf *m, const struct drnic_wire_pkt *p,
		      const struct drnic_wire_tmpl *t, uint32_t flags);

int
drnic_wire_build(struct rte_mbuf *m, const struct drnic_wire_pkt *p)
{
	return wire_build(m, p, NULL, 0);
}

int
drnic_wire_build_flags(struct rte_mbuf *m, const struct drnic_wire_pkt *p, uint32_t flags)
{
	return wire_build(m, p, NULL, flags);
}

int
drnic_wire_build_tmpl(struct rte_mbuf *m, const struct drnic_wire_tmpl *t,
		      const struct drnic_wire_pkt *p, uint32_t flags)
{
	return wire_build(m, p, t, flags);
}

int
drnic_wire_tmpl_make(struct drnic_wire_tmpl *t, const struct drnic_wire_pkt *p)
{
	uint32_t ip_hlen = wire_ip_hdr_len(p->ip.version);
	struct drnic_wire_pkt v = *p;

	if (ip_hlen == 0)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	/* The frame's own fields zero, and its lengths (IP packet of the
	 * IP header alone: UDP and IPv6 lengths zero). */
	v.bth.opcode = 0;
	v.bth.se = false;
	v.bth.ackreq = false;
	v.bth.psn = 0;
	t->l2_len = (uint8_t)(DRNIC_WIRE_ETH_LEN + (p->eth.has_vlan ? DRNIC_WIRE_VLAN_LEN : 0));
	t->ip_hlen = (uint8_t)ip_hlen;
	t->len = (uint8_t)(t->l2_len + ip_hlen + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN);
	wire_put_path(t->hdr, &v, t->l2_len, ip_hlen, ip_hlen, 0);
	if (ip_hlen == DRNIC_WIRE_IPV4_LEN) {
		memset(t->hdr + t->l2_len + 2, 0, 2);    /* total length */
		memset(t->hdr + t->l2_len + 10, 0, 2);   /* checksum */
		/* The header's sum without its length: the checksum of a
		 * length of 0, complemented back. */
		t->ip_sum = (uint16_t)~wire_ipv4_cksum(&v, 0);
	}
	return 0;
}

void
drnic_wire_icrc_fill_burst(struct rte_mbuf *const m[], uint16_t n)
{
	struct wire_crc_job job[32];
	uint16_t i, k, nk;

	for (i = 0; i < n; i += nk) {
		nk = (uint16_t)RTE_MIN(n - i, (int)RTE_DIM(job));
		for (k = 0; k < nk; k++) {
			const struct rte_mbuf *f = m[i + k];

			/* As the build left it: one segment, no Ethernet padding. */
			job[k] = (struct wire_crc_job){
				.buf = rte_pktmbuf_mtod_offset(f, const uint8_t *, f->l2_len),
				.pat = wire_icrc_pat(f->l3_len),
				.len = f->pkt_len - f->l2_len - DRNIC_WIRE_ICRC_LEN,
				.crc = wire_crc_ones8,
			};
		}
		wire_crc32_or_burst(job, nk);
		for (k = 0; k < nk; k++) {
			uint32_t le = rte_cpu_to_le_32(job[k].crc);

			memcpy(rte_pktmbuf_mtod_offset(m[i + k], uint8_t *,
						       m[i + k]->pkt_len - DRNIC_WIRE_ICRC_LEN),
			       &le, sizeof(le));
		}
	}
}

/* A frame from @p p, its path from template @t when not NULL. */
static int
wire_build(struct rte_mbuf *m, const struct drnic_wire_pkt *p, const struct drnic_wire_tmpl *t,
	   uint32_t flags)
{
	const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(p->bth.opcode);
	struct wire_cursor c = { .head = m, .seg = m };
	struct wire_icrc_mask sv;
	uint32_t ip_hlen, l2_len, hdr_len, l3_len, pad, tpad = 0, i;
	uint64_t payload = 0;
	uint8_t *h, *ip, *bth, trailer[8];
	bool left = false;
	int rc;

	if (m->pkt_len != 0 || m->next != NULL || !(oi->flags & DRNIC_WIRE_OPF_SUPPORTED))
		return -EINVAL;
	ip_hlen = t != NULL ? t->ip_hlen : wire_ip_hdr_len(p->ip.version);
	if (ip_hlen == 0 || (p->sg == NULL && p->sg_cnt > 0))
		return -EINVAL;
	for (i = 0; i < p->sg_cnt; i++)
		payload += p->sg[i].len;
	if (payload > 0 && !(oi->flags & DRNIC_WIRE_OPF_PAYLOAD))
		return -EINVAL;
	if (payload == 0 && (oi->flags & DRNIC_WIRE_OPF_PAYLOAD_REQ))
		return -EINVAL;
	pad = (uint32_t)(-payload & 3);
	if (pad != 0 && (oi->flags & DRNIC_WIRE_OPF_FULL_MTU))
		return -EINVAL;

	l2_len = t != NULL ? t->l2_len :
		 DRNIC_WIRE_ETH_LEN + (p->eth.has_vlan ? DRNIC_WIRE_VLAN_LEN : 0);
	hdr_len = l2_len + ip_hlen + DRNIC_WIRE_UDP_LEN + oi->hdr_len;
	if (payload > UINT16_MAX)
		return -ENOSPC;
	l3_len = ip_hlen + DRNIC_WIRE_UDP_LEN + oi->hdr_len + (uint32_t)payload + pad +
		 DRNIC_WIRE_ICRC_LEN;
	if ((ip_hlen == DRNIC_WIRE_IPV4_LEN ? l3_len : l3_len - ip_hlen) > UINT16_MAX)
		return -ENOSPC;
	if (rte_pktmbuf_tailroom(m) < hdr_len)
		return -ENOSPC;
	/*
	 * A long payload that fits this segment starts on a 64-byte boundary:
	 * the frame moves down into the headroom by at most 63 bytes. Both
	 * the copy-and-CRC here and the receiver's copy out then move whole
	 * cache lines (about 7% faster per 4 KiB than straddling them).
	 */
	if (payload > WIRE_BUILD_SMALL &&
	    rte_pktmbuf_tailroom(m) >= l3_len + l2_len &&
	    (m->data_off + hdr_len) % 64 <= m->data_off)
		m->data_off = (uint16_t)(m->data_off - (m->data_off + hdr_len) % 64);

	h = rte_pktmbuf_mtod(m, uint8_t *);
	ip = h + l2_len;
	bth = ip + ip_hlen + DRNIC_WIRE_UDP_LEN;
	if (t == NULL) {
		wire_put_path(h, p, l2_len, ip_hlen, l3_len, pad);
	} else {
		uint32_t sum;

		/* The template whole (fixed sizes: vector moves; the frame's
		 * tail overwrites what lies past its headers), then the fields
		 * that change from frame to frame. */
		if (likely(rte_pktmbuf_tailroom(m) >= sizeof(t->hdr)))
			memcpy(h, t->hdr, sizeof(t->hdr));
		else
			memcpy(h, t->hdr, t->len);
		if (ip_hlen == DRNIC_WIRE_IPV4_LEN) {
			wire_put16(ip + 2, (uint16_t)l3_len);
			sum = t->ip_sum + l3_len;
			sum = (sum & 0xFFFF) + (sum >> 16);
			sum = (sum & 0xFFFF) + (sum >> 16);
			wire_put16(ip + 10, (uint16_t)~sum);
		} else {
			wire_put16(ip + 4, (uint16_t)(l3_len - ip_hlen));
		}
		wire_put16(ip + ip_hlen + 4, (uint16_t)(l3_len - ip_hlen));
		/* Opcode; SE and PadCnt beside the template's MigReq and TVer. */
		bth[0] = p->bth.opcode;
		bth[1] = (uint8_t)(t->hdr[t->len - DRNIC_WIRE_BTH_LEN + 1] |
				   (p->bth.se ? 0x80 : 0) | (pad & 3) << 4);
		wire_put32(bth + 8, wire_bth_w2(p));
	}
	wire_put_ext(bth, oi, p);

	m->data_len = (uint16_t)hdr_len;
	m->pkt_len = hdr_len;
	m->l2_len = l2_len;
	m->l3_len = ip_hlen;
	m->l4_len = DRNIC_WIRE_UDP_LEN;

	/*
	 * ICRC: the 8 bytes of ones are the seed; the variant header fields
	 * are ORed with ones in registers (short frames) or masked in place
	 * while the CRC runs over the frame.
	 */
	memset(trailer, 0, sizeof(trailer));
	if (payload <= WIRE_BUILD_SMALL && payload + pad <= rte_pktmbuf_tailroom(m)) {
		/* Short: payload and pad after the headers, then one CRC call. */
		uint8_t *d = h + hdr_len;
		size_t clen;

		for (i = 0; i < p->sg_cnt; i++) {
			if (p->sg[i].len == 0)
				continue;
			/* Inline (a library call costs more than the copy
			 * at message-rate sizes). */
			rte_memcpy(d, p->sg[i].addr, p->sg[i].len);
			d += p->sg[i].len;
		}
		memset(d, 0, pad);
		d += pad;
		clen = (size_t)(d - ip);
		RTE_BUILD_BUG_ON(DRNIC_WIRE_ETH_LEN + WIRE_CRC_OR_MIN + DRNIC_WIRE_ICRC_LEN <
				 DRNIC_WIRE_ETH_MIN_FRAME);
		if (WIRE_CRC_OR_INREG && clen >= WIRE_CRC_OR_MIN && clen <= WIRE_CRC_OR_MAX) {
			/* Left for drnic_wire_icrc_fill_burst(), zero now, when
			 * asked and its trailer is written in place below (at
			 * WIRE_CRC_OR_MIN bytes or more after the ones the
			 * frame needs no Ethernet padding: it ends with its
			 * ICRC). Else the
			 * variant fields ORed with ones in registers: no byte
			 * stores into the headers right before the CRC loads
			 * them (each such load waits for the stores to drain,
			 * store forwarding cannot merge them). */
			left = (flags & DRNIC_WIRE_BUILD_DEFER_ICRC) &&
			       rte_pktmbuf_tailroom(m) - (uint32_t)(d - h - hdr_len) >=
			       DRNIC_WIRE_ETH_MIN_FRAME + sizeof(trailer);
			c.crc = left ? 0 : wire_crc32_or(wire_crc_ones8, ip, clen,
							 wire_icrc_pat(ip_hlen));
		} else {
			wire_icrc_mask(ip, ip_hlen, &sv);
			c.crc = wire_crc32(wire_crc_ones8, ip, clen);
			wire_icrc_unmask(ip, ip_hlen, &sv);
		}
		m->data_len = (uint16_t)(d - h);
		m->pkt_len = m->data_len;
	} else {
		uint32_t done = 0;      /* SGEs in the frame already */

		if (p->sg_cnt > 0 && p->sg[0].len <= rte_pktmbuf_tailroom(m) &&
		    8 + hdr_len - l2_len <= 64) {
			/* The first SGE's payload with the headers in one
			 * pass (their CRC would be a short call of its own),
			 * from a masked copy of them behind the eight ones. */
			uint8_t hb[64];

			memcpy(hb + 8, ip, hdr_len - l2_len);
			wire_icrc_mask_hdrs(hb, ip_hlen);
			c.crc = wire_crc32_hdr_copy(hb, 8 + hdr_len - l2_len, h + hdr_len,
						    p->sg[0].addr, p->sg[0].len);
			m->data_len = (uint16_t)(m->data_len + p->sg[0].len);
			m->pkt_len += p->sg[0].len;
			done = 1;
		} else {
			wire_icrc_mask(ip, ip_hlen, &sv);
			c.crc = wire_crc32(wire_crc_ones8, ip, hdr_len - l2_len);
			wire_icrc_unmask(ip, ip_hlen, &sv);
		}
		for (i = done; i < p->sg_cnt; i++) {
			rc = wire_append(&c, p->sg[i].addr, p->sg[i].len, true);
			if (rc != 0)
				goto fail;
		}
		if (pad > 0)
			c.crc = crc32_gzip_refl(c.crc, trailer, pad);
		tpad = pad;
	}

	/* The pad bytes still to write (zero, under the ICRC), the ICRC (LSB
	 * first), Ethernet padding. */
	if (c.seg == m && rte_pktmbuf_tailroom(m) >= DRNIC_WIRE_ETH_MIN_FRAME + sizeof(trailer)) {
		/* One segment with room for any trailer: write it in place
		 * (the Ethernet padding, if any, is zeros after it). The
		 * eight bytes are made in a register: loading them back from
		 * byte stores into trailer[] waited for those stores to drain
		 * (a fifth of a 64 B build). Little-endian: the CRC's low byte
		 * goes first, after tpad zero bytes. */
		uint8_t *t = rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len);
		uint32_t n = tpad + DRNIC_WIRE_ICRC_LEN;
		uint64_t tw = rte_cpu_to_le_64((uint64_t)c.crc << (8 * tpad));

		memcpy(t, &tw, sizeof(tw));
		if (m->pkt_len + n < DRNIC_WIRE_ETH_MIN_FRAME) {
			memset(t + n, 0, DRNIC_WIRE_ETH_MIN_FRAME - m->pkt_len - n);
			n = DRNIC_WIRE_ETH_MIN_FRAME - m->pkt_len;
		}
		m->data_len = (uint16_t)(m->data_len + n);
		m->pkt_len += n;
		return left ? 1 : 0;
	}
	trailer[tpad + 0] = (uint8_t)c.crc;
	trailer[tpad + 1] = (uint8_t)(c.crc >> 8);
	trailer[tpad + 2] = (uint8_t)(c.crc >> 16);
	trailer[tpad + 3] = (uint8_t)(c.crc >> 24);
	rc = wire_append(&c, trailer, tpad + DRNIC_WIRE_ICRC_LEN, false);
	if (rc != 0)
		goto fail;
	if (m->pkt_len < DRNIC_WIRE_ETH_MIN_FRAME) {
		rc = wire_append(&c, NULL, DRNIC_WIRE_ETH_MIN_FRAME - m->pkt_len, false);
		if (rc != 0)
			goto fail;
	}
	return 0;

fail:
	wire_build_reset(m);
	return rc;
}
