/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NEIGH_INTERNAL_H
#define NEIGH_INTERNAL_H

/* Frame layouts of lib/neigh (private). */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>

#define NEIGH_ETH_LEN 14
#define NEIGH_MIN_FRAME 60      /* Ethernet minimum without the FCS */
#define NEIGH_ND_LEN 24         /* NS/NA without options */
#define NEIGH_OPT_SLLA 1        /* source link-layer address option */
#define NEIGH_OPT_TLLA 2        /* target link-layer address option */

/* ARP for Ethernet/IPv4 (RFC 826), 28 bytes. */
struct neigh_arp {
	uint16_t htype;
	uint16_t ptype;
	uint8_t hlen;
	uint8_t plen;
	uint16_t op;
	uint8_t sha[6];
	uint32_t spa;
	uint8_t tha[6];
	uint32_t tpa;
} __rte_packed;

/* IPv6 header (RFC 8200), 40 bytes. */
struct neigh_ip6 {
	uint8_t vtc_flow[4];
	uint16_t plen;
	uint8_t nh;
	uint8_t hlim;
	uint8_t src[16];
	uint8_t dst[16];
} __rte_packed;

static inline bool
neigh_ip_unspecified(const uint8_t ip[16])
{
	static const uint8_t zero[16];

	return memcmp(ip, zero, 16) == 0;
}

#endif /* NEIGH_INTERNAL_H */
