/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 invariant CRC (IBA annex A17.3.3): CRC-32 as zlib's crc32 over
 * 8 bytes of 0xFF, the IP/UDP/BTH headers with their variant fields set to
 * ones, and the rest of the packet up to the ICRC.
 */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_mbuf.h>

#include "drnic_wire.h"
#include "wire_internal.h"

/* 8 x 0xFF, IPv4 header with the longest options, UDP, BTH. */
#define WIRE_ICRC_HDR_MAX (8 + 60 + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN)

/*
 * Bytes after the fixed headers copied behind them so that one CRC call
 * covers both. ISA-L's crc32_gzip_refl() folds long buffers fast but pays a
 * fixed cost per call and crawls through short ones: a separate call for the
 * ~56 bytes of masked headers cost about 25 ns a frame (wire_perf_autotest).
 * A longer rest is not copied at all: its CRC runs in place (wire_crc32),
 * where one long call beats copying part of it.
 */
#define WIRE_ICRC_HEAD 448

/*
 * The ICRC's ones over the variant fields of IPv4 (20-byte header) and IPv6
 * packets, as wire_crc32_or() patterns: the short CRC of a received frame
 * reads the headers in place instead of copying them to mask them, and the
 * builder CRCs a frame it just wrote without masking it in place.
 */
const uint8_t wire_icrc_pat4[192] = {
	[64 + 1] = 0xFF, [64 + 8] = 0xFF, [64 + 10] = 0xFF, [64 + 11] = 0xFF,  /* TOS, TTL, csum */
	[64 + 26] = 0xFF, [64 + 27] = 0xFF,                                    /* UDP csum */
	[64 + 32] = 0xFF,                                                      /* BTH byte 4 */
};
const uint8_t wire_icrc_pat6[192] = {
	[64 + 0] = 0x0F, [64 + 1] = 0xFF, [64 + 2] = 0xFF, [64 + 3] = 0xFF,  /* class, flow */
	[64 + 7] = 0xFF,                                                      /* hop limit */
	[64 + 46] = 0xFF, [64 + 47] = 0xFF,                                   /* UDP csum */
	[64 + 52] = 0xFF,                                                     /* BTH byte 4 */
};

/* Packets up to this long (without the ICRC) are CRCed in place, masked in registers. */
#define WIRE_ICRC_INPLACE_MAX 256

/*
 * The wire_crc32_or() pattern that masks a contiguous IP packet of @l3_len
 * bytes (with the ICRC) for its ICRC in place: when its header is 20-byte
 * IPv4 or IPv6 and its length one where that pays; else NULL.
 */
static inline const uint8_t *
wire_icrc_inplace_pat(const uint8_t *l3, uint32_t l3_len)
{
	if (l3_len < WIRE_CRC_OR_MIN + DRNIC_WIRE_ICRC_LEN ||
	    l3_len > WIRE_ICRC_INPLACE_MAX + DRNIC_WIRE_ICRC_LEN)
		return NULL;
	if (l3[0] == 0x45)
		return wire_icrc_pat4;
	if ((l3[0] >> 4) == 6 && l3_len >= DRNIC_WIRE_IPV6_LEN + DRNIC_WIRE_UDP_LEN +
					   DRNIC_WIRE_BTH_LEN + DRNIC_WIRE_ICRC_LEN)
		return wire_icrc_pat6;
	return NULL;
}

/* The ICRC of such a packet, in place; false when it is not one. */
static inline bool
wire_icrc_inplace(const uint8_t *l3, uint32_t l3_len, uint32_t *icrc)
{
	const uint8_t *pat = wire_icrc_inplace_pat(l3, l3_len);

	if (pat == NULL)
		return false;
	*icrc = wire_crc32_or(wire_crc_ones8, l3, l3_len - DRNIC_WIRE_ICRC_LEN, pat);
	return true;
}

uint32_t
wire_crc_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint32_t crc)
{
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && len > 0) {
		uint32_t n = RTE_MIN((uint32_t)m->data_len - off, len);

		crc = wire_crc32(crc, rte_pktmbuf_mtod_offset(m, const unsigned char *, off), n);
		len -= n;
		off = 0;
		m = m->next;
	}
	return crc;
}

uint32_t
wire_icrc_mask_hdrs(uint8_t *buf, uint32_t ip_hlen)
{
	uint8_t *ip = buf + 8;
	uint8_t *udp = ip + ip_hlen;
	uint8_t *bth = udp + DRNIC_WIRE_UDP_LEN;

	memset(buf, 0xFF, 8);
	if ((ip[0] >> 4) == 4) {
		ip[1] = 0xFF;                 /* TOS */
		ip[8] = 0xFF;                 /* TTL */
		ip[10] = 0xFF;                /* header checksum */
		ip[11] = 0xFF;
	} else {
		ip[0] |= 0x0F;                /* traffic class ... */
		ip[1] = 0xFF;                 /* ... and flow label */
		ip[2] = 0xFF;
		ip[3] = 0xFF;
		ip[7] = 0xFF;                 /* hop limit */
	}
	udp[6] = 0xFF;                        /* UDP checksum */
	udp[7] = 0xFF;
	bth[4] = 0xFF;                        /* FECN, BECN, reserved */
	return 8 + ip_hlen + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN;
}

uint32_t
wire_crc_masked_hdrs_more(uint8_t *buf, uint32_t ip_hlen, uint32_t more)
{
	return wire_crc32(0, buf, wire_icrc_mask_hdrs(buf, ip_hlen) + more);
}

/* Header length of the IP packet starting with @first (its first byte), or 0. */
static uint32_t
wire_icrc_ip_hlen(uint8_t first)
{
	if ((first >> 4) == 4)
		return (first & 0xF) >= 5 ? (uint32_t)(first & 0xF) * 4 : 0;
	if ((first >> 4) == 6)
		return DRNIC_WIRE_IPV6_LEN;
	return 0;
}

int
drnic_wire_icrc(const struct rte_mbuf *m, uint32_t l3_off, uint32_t l3_len, uint32_t *icrc)
{
	uint8_t buf[WIRE_ICRC_HDR_MAX + WIRE_ICRC_HEAD];
	const uint8_t *first;
	uint32_t hlen, covered, rest, head;
	uint32_t crc;

	if (l3_off >= m->pkt_len || l3_len > m->pkt_len - l3_off)
		return -EINVAL;
	if (l3_off + l3_len <= m->data_len &&
	    wire_icrc_inplace(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off), l3_len, icrc))
		return 0;
	first = rte_pktmbuf_read(m, l3_off, 1, buf);
	hlen = wire_icrc_ip_hlen(*first);
	if (hlen == 0)
		return -EINVAL;
	covered = hlen + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN;
	if (l3_len < covered + DRNIC_WIRE_ICRC_LEN)
		return -EINVAL;
	rest = l3_len - covered - DRNIC_WIRE_ICRC_LEN;
	head = rest <= WIRE_ICRC_HEAD ? rest : 0;
	/* rte_pktmbuf_read() copies only when the range spans segments. */
	first = rte_pktmbuf_read(m, l3_off, covered + head, buf + 8);
	if (first != buf + 8)
		memcpy(buf + 8, first, covered + head);
	crc = wire_crc_masked_hdrs_more(buf, hlen, head);
	*icrc = wire_crc_mbuf(m, l3_off + covered + head, rest - head, crc);
	return 0;
}

int
drnic_wire_icrc_buf(const void *l3, uint32_t l3_len, uint32_t *icrc)
{
	uint8_t buf[WIRE_ICRC_HDR_MAX + WIRE_ICRC_HEAD];
	const uint8_t *p = l3;
	uint32_t hlen, covered, rest, head;
	uint32_t crc;

	if (l3_len == 0)
		return -EINVAL;
	if (wire_icrc_inplace(p, l3_len, icrc))
		return 0;
	hlen = wire_icrc_ip_hlen(p[0]);
	if (hlen == 0)
		return -EINVAL;
	covered = hlen + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN;
	if (l3_len < covered + DRNIC_WIRE_ICRC_LEN)
		return -EINVAL;
	rest = l3_len - covered - DRNIC_WIRE_ICRC_LEN;
	head = rest <= WIRE_ICRC_HEAD ? rest : 0;
	memcpy(buf + 8, p, covered + head);
	crc = wire_crc_masked_hdrs_more(buf, hlen, head);
	*icrc = rest > head ? wire_crc32(crc, p + covered + head, rest - head) : crc;
	return 0;
}

int
drnic_wire_icrc_check(const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	uint32_t calc;
	int rc;

	if (pkt->l3_off >= pkt->frame_len)
		return -EINVAL;
	rc = drnic_wire_icrc(m, pkt->l3_off, pkt->frame_len - pkt->l3_off, &calc);
	if (rc < 0)
		return rc;
	return calc == pkt->icrc ? 0 : -EBADMSG;
}

int
drnic_wire_copy_out_verify(const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt, void *dst)
{
	uint8_t buf[WIRE_ICRC_HDR_MAX + DRNIC_WIRE_ATOMICETH_LEN];
	const struct rte_mbuf *seg = m;
	const uint8_t *first;
	uint32_t hlen, covered, ext, off, len, tail, crc;
	uint8_t *d = dst;

	if (pkt->frame_len > m->pkt_len || pkt->l3_off >= pkt->frame_len ||
	    pkt->bth_off + DRNIC_WIRE_BTH_LEN > pkt->payload_off ||
	    pkt->payload_off > pkt->frame_len - DRNIC_WIRE_ICRC_LEN ||
	    pkt->payload_len > pkt->frame_len - DRNIC_WIRE_ICRC_LEN - pkt->payload_off)
		return -EINVAL;
	first = rte_pktmbuf_read(m, pkt->l3_off, 1, buf);
	hlen = wire_icrc_ip_hlen(*first);
	covered = hlen + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN;
	if (hlen == 0 || pkt->l3_off + covered != pkt->bth_off + DRNIC_WIRE_BTH_LEN)
		return -EINVAL;
	ext = pkt->payload_off - (pkt->bth_off + DRNIC_WIRE_BTH_LEN);
	if (ext > DRNIC_WIRE_ATOMICETH_LEN)
		return -EINVAL;
	first = rte_pktmbuf_read(m, pkt->l3_off, covered + ext, buf + 8);
	if (first != buf + 8)
		memcpy(buf + 8, first, covered + ext);
	hlen = wire_icrc_mask_hdrs(buf, hlen) + ext;
	off = pkt->payload_off;
	len = pkt->payload_len;
	while (seg != NULL && off >= seg->data_len) {
		off -= seg->data_len;
		seg = seg->next;
	}
	tail = pkt->frame_len - DRNIC_WIRE_ICRC_LEN - pkt->payload_off - pkt->payload_len;
	if (seg != NULL && len <= seg->data_len - off && tail == 0) {
		/* Headers and payload in one pass (the usual full-MTU
		 * continuation: one segment, no pad). */
		crc = wire_crc32_hdr_copy(buf, hlen, d,
					  rte_pktmbuf_mtod_offset(seg, const uint8_t *, off), len);
		return crc == pkt->icrc ? 0 : -EBADMSG;
	}
	/* Masked headers and extension headers: one CRC call. */
	crc = wire_crc32(0, buf, hlen);
	/* The payload, copied as it is folded in, segment by segment. */
	while (seg != NULL && len > 0) {
		uint32_t n = RTE_MIN((uint32_t)seg->data_len - off, len);

		crc = wire_crc32_copy(crc, d, rte_pktmbuf_mtod_offset(seg, const uint8_t *, off), n);
		d += n;
		len -= n;
		off = 0;
		seg = seg->next;
	}
	if (len > 0)
		return -EINVAL;         /* pkt_len claims more than the chain has */
	/* Pad bytes up to the ICRC. */
	if (tail > 0)
		crc = wire_crc_mbuf(m, pkt->payload_off + pkt->payload_len, tail, crc);
	return crc == pkt->icrc ? 0 : -EBADMSG;
}

uint64_t
drnic_wire_icrc_burst(struct rte_mbuf *const m[], struct drnic_wire_pkt pkt[], uint16_t n)
{
	struct wire_crc_job job[64];
	uint8_t idx[64];
	unsigned int k = 0;
	uint64_t bad = 0;
	uint16_t j;

	RTE_VERIFY(n <= 64);    /* one bit each in the answer */
	/* Frames whose ICRC runs in place go to one loop of short CRCs, with
	 * nothing depending on them in between; the others one at a time. */
	for (j = 0; j < n; j++) {
		uint32_t l3_len = pkt[j].frame_len - pkt[j].l3_off, calc;
		const uint8_t *l3, *pat = NULL;

		if (!pkt[j].icrc_batch)
			continue;
		pkt[j].icrc_batch = false;
		l3 = rte_pktmbuf_mtod_offset(m[j], const uint8_t *, pkt[j].l3_off);
		if (pkt[j].frame_len <= m[j]->data_len)
			pat = wire_icrc_inplace_pat(l3, l3_len);
		if (pat != NULL) {
			job[k] = (struct wire_crc_job){ .buf = l3, .pat = pat,
							.len = l3_len - DRNIC_WIRE_ICRC_LEN,
							.crc = wire_crc_ones8 };
			idx[k++] = (uint8_t)j;
		} else if (drnic_wire_icrc(m[j], pkt[j].l3_off, l3_len, &calc) != 0 ||
			   calc != pkt[j].icrc) {
			bad |= (uint64_t)1 << j;
		}
	}
	wire_crc32_or_burst(job, k);
	while (k-- > 0)
		if (job[k].crc != pkt[idx[k]].icrc)
			bad |= (uint64_t)1 << idx[k];
	return bad;
}
