/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef WIRE_INTERNAL_H
#define WIRE_INTERNAL_H

/* Shared between the lib/wire sources; not installed. */

#include <stdint.h>

struct rte_mbuf;

/*
 * Continue CRC-32 @crc over @len bytes at @off of a segment chain. The range
 * must lie inside the chain (callers check).
 */
uint32_t wire_crc_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint32_t crc);

/*
 * CRC-32 of the ICRC's fixed part. @buf holds 8 spare bytes, then a copy of the
 * IP header (@ip_hlen bytes), UDP header and BTH; they are masked in place.
 */
uint32_t wire_crc_masked_hdrs(uint8_t *buf, uint32_t ip_hlen);
/*
 * The same, over the masked headers and the @more bytes the caller placed
 * right after them in @buf: one CRC call instead of two.
 */
uint32_t wire_crc_masked_hdrs_more(uint8_t *buf, uint32_t ip_hlen, uint32_t more);

#endif /* WIRE_INTERNAL_H */
