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
 */
#define WIRE_ICRC_HEAD 448

uint32_t
wire_crc_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint32_t crc)
{
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && len > 0) {
		uint32_t n = RTE_MIN((uint32_t)m->data_len - off, len);

		crc = crc32_gzip_refl(crc, rte_pktmbuf_mtod_offset(m, const unsigned char *, off), n);
		len -= n;
		off = 0;
		m = m->next;
	}
	return crc;
}

uint32_t
wire_crc_masked_hdrs_more(uint8_t *buf, uint32_t ip_hlen, uint32_t more)
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
	return crc32_gzip_refl(0, buf, 8 + ip_hlen + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN + more);
}

uint32_t
wire_crc_masked_hdrs(uint8_t *buf, uint32_t ip_hlen)
{
	return wire_crc_masked_hdrs_more(buf, ip_hlen, 0);
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
	first = rte_pktmbuf_read(m, l3_off, 1, buf);
	hlen = wire_icrc_ip_hlen(*first);
	if (hlen == 0)
		return -EINVAL;
	covered = hlen + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN;
	if (l3_len < covered + DRNIC_WIRE_ICRC_LEN)
		return -EINVAL;
	rest = l3_len - covered - DRNIC_WIRE_ICRC_LEN;
	head = RTE_MIN(rest, (uint32_t)WIRE_ICRC_HEAD);
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
	hlen = wire_icrc_ip_hlen(p[0]);
	if (hlen == 0)
		return -EINVAL;
	covered = hlen + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN;
	if (l3_len < covered + DRNIC_WIRE_ICRC_LEN)
		return -EINVAL;
	rest = l3_len - covered - DRNIC_WIRE_ICRC_LEN;
	head = RTE_MIN(rest, (uint32_t)WIRE_ICRC_HEAD);
	memcpy(buf + 8, p, covered + head);
	crc = wire_crc_masked_hdrs_more(buf, hlen, head);
	*icrc = rest > head ? crc32_gzip_refl(crc, p + covered + head, rest - head) : crc;
	return 0;
}
