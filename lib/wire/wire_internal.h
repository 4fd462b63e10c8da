/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef WIRE_INTERNAL_H
#define WIRE_INTERNAL_H

/* Shared between the lib/wire sources; not installed. */

#include <stddef.h>
#include <stdint.h>

#include "drnic_wire.h"

struct rte_mbuf;

/*
 * CRC-32 as zlib's crc32() / ISA-L's crc32_gzip_refl(), chained the same
 * way: @crc is the value of the bytes before @buf (0 to start). Faster than
 * ISA-L on 72..256 bytes, ISA-L itself otherwise (wire_crc.c); any length,
 * any alignment.
 */
uint32_t wire_crc32(uint32_t crc, const void *buf, size_t len);
/*
 * Copy @len bytes from @src to @dst (not overlapping) and return
 * wire_crc32(@crc, @src, @len), reading the bytes once.
 */
uint32_t wire_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len);
/*
 * CRC-32 from 0 of @hlen bytes at @hdr followed by @len bytes at @src, which
 * are copied to @dst on the way. A header of 8..64 bytes that fits the first
 * of the 64-byte blocks the buffer is folded in (wire_crc.c) costs no call
 * of its own: 4 KiB frames took two short CRCs and a fold, now one fold.
 */
uint32_t wire_crc32_hdr_copy(const uint8_t *hdr, size_t hlen, void *dst, const void *src,
			     size_t len);
/*
 * wire_crc32() of the bytes at @buf with the first 64 of them ORed with
 * @pat[64..127] (@pat is 64 zero bytes, the pattern, 64 zero bytes), e.g.
 * the ICRC's ones over the variant header fields without copying the
 * headers to mask them. Reads nothing outside [buf, buf + len).
 */
uint32_t wire_crc32_or(uint32_t crc, const void *buf, size_t len, const uint8_t pat[192]);
/* One wire_crc32_or() of a burst: crc in, crc out. */
struct wire_crc_job {
	const uint8_t *buf;
	const uint8_t *pat;
	uint32_t len;
	uint32_t crc;
};

/*
 * wire_crc32_or() of each of @n jobs, in one loop where the short CRCs
 * inline: each then overlaps the one before instead of waiting out its
 * reduction behind a call.
 */
void wire_crc32_or_burst(struct wire_crc_job *job, unsigned int n);
/*
 * wire_crc32_or() patterns of the ICRC's variant fields for a packet with a
 * 20-byte IPv4 header (pat4) or an IPv6 header (pat6): ones over TOS, TTL
 * and checksum (IPv6: class, flow label, hop limit), the UDP checksum and
 * BTH byte 4 (wire_icrc.c).
 */
extern const uint8_t wire_icrc_pat4[192];
extern const uint8_t wire_icrc_pat6[192];

/* The pattern for a packet whose IP header is @ip_hlen bytes (20 or 40). */
static inline const uint8_t *
wire_icrc_pat(uint32_t ip_hlen)
{
	return ip_hlen == DRNIC_WIRE_IPV4_LEN ? wire_icrc_pat4 : wire_icrc_pat6;
}
/* The carry-less-multiply CRC of wire_crc.c is built (else ISA-L only). */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__VPCLMULQDQ__) && \
	defined(__GFNI__)
#define WIRE_CRC_FOLD 1
#define WIRE_CRC_OR_INREG 1
#else
#define WIRE_CRC_OR_INREG 0
#endif
/* Lengths for which wire_crc32_or() runs in registers (when
 * WIRE_CRC_OR_INREG); otherwise it copies, and masking the frame in place
 * is cheaper. From 44 bytes (an IPv4 ACK's IP header to AETH) an ICRC
 * region needs no Ethernet padding after its ICRC, which the build's
 * deferred ICRC and the receive burst's check count on. */
#define WIRE_CRC_OR_MIN 44
#define WIRE_CRC_OR_MAX 256
/* CRC-32 of 8 bytes of ones (the ICRC's start), from 0. */
extern uint32_t wire_crc_ones8;

/*
 * Continue CRC-32 @crc over @len bytes at @off of a segment chain. The range
 * must lie inside the chain (callers check).
 */
uint32_t wire_crc_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint32_t crc);

/*
 * The ICRC's fixed part in @buf: 8 bytes of ones written, then the copy of
 * the IP header (@ip_hlen bytes, its version in its first nibble), UDP
 * header and BTH the caller placed after them, masked in place. Returns
 * its length (8 + IP + UDP + BTH).
 */
uint32_t wire_icrc_mask_hdrs(uint8_t *buf, uint32_t ip_hlen);

/*
 * CRC-32 of the ICRC's fixed part and the @more bytes the caller placed right
 * after it in @buf. @buf holds 8 spare bytes, then a copy of the IP header
 * (@ip_hlen bytes), UDP header and BTH; they are masked in place.
 */
uint32_t wire_crc_masked_hdrs_more(uint8_t *buf, uint32_t ip_hlen, uint32_t more);

#endif /* WIRE_INTERNAL_H */
