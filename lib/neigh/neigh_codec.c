/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP (RFC 826) and IPv6 neighbour discovery (RFC 4861) frames: parse with the
 * receive checks of RFC 4861 section 7.1, build requests and replies.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "drnic_neigh.h"
#include "neigh_internal.h"

int
drnic_neigh_gid_to_ipv4(const uint8_t gid[16], uint32_t *ip)
{
	if (gid == NULL || ip == NULL || !drnic_neigh_gid_is_ipv4(gid))
		return -EINVAL;
	memcpy(ip, gid + 12, 4);
	return 0;
}

uint16_t
drnic_neigh_icmp6_cksum(const uint8_t src[16], const uint8_t dst[16], const void *msg,
			uint32_t len)
{
	/* Pseudo-header: source, destination, 32-bit upper-layer length,
	 * three zero bytes, next header 58. */
	struct {
		uint8_t src[16];
		uint8_t dst[16];
		rte_be32_t len;
		uint8_t zero[3];
		uint8_t nh;
	} __rte_packed ph;
	uint32_t sum;
	uint16_t c;

	memcpy(ph.src, src, 16);
	memcpy(ph.dst, dst, 16);
	ph.len = rte_cpu_to_be_32(len);
	memset(ph.zero, 0, sizeof(ph.zero));
	ph.nh = DRNIC_NEIGH_PROTO_ICMPV6;
	sum = __rte_raw_cksum(&ph, sizeof(ph), 0);
	sum = __rte_raw_cksum(msg, len, sum);
	c = (uint16_t)~__rte_raw_cksum_reduce(sum);
	/* The raw sum works on host-order 16-bit words: the result is in the
	 * byte order of the data, i.e. ready to be stored as it is. Return it
	 * in host order of the big-endian field. */
	return rte_be_to_cpu_16(c);
}

static int
neigh_parse_arp(const uint8_t *p, uint32_t len, struct drnic_neigh_msg *msg)
{
	const struct neigh_arp *a = (const struct neigh_arp *)(p + NEIGH_ETH_LEN);
	uint16_t op;

	if (len < NEIGH_ETH_LEN + sizeof(*a))
		return -EBADMSG;
	if (rte_be_to_cpu_16(a->htype) != 1 || rte_be_to_cpu_16(a->ptype) != 0x0800)
		return -ENOTSUP;
	if (a->hlen != 6 || a->plen != 4)
		return -EBADMSG;
	op = rte_be_to_cpu_16(a->op);
	if (op == 1)
		msg->kind = DRNIC_NEIGH_ARP_REQUEST;
	else if (op == 2)
		msg->kind = DRNIC_NEIGH_ARP_REPLY;
	else
		return -ENOTSUP;
	memcpy(msg->lladdr, a->sha, 6);
	msg->has_lladdr = true;
	memcpy(msg->arp_tha, a->tha, 6);
	drnic_neigh_gid_from_ipv4(a->spa, msg->sender_ip);
	drnic_neigh_gid_from_ipv4(a->tpa, msg->target_ip);
	return 0;
}

static int
neigh_parse_nd(const uint8_t *p, uint32_t len, struct drnic_neigh_msg *msg)
{
	const struct neigh_ip6 *ip = (const struct neigh_ip6 *)(p + NEIGH_ETH_LEN);
	const uint8_t *icmp, *opt;
	uint32_t plen, olen;

	if (len < NEIGH_ETH_LEN + sizeof(*ip) + 4)
		return -ENOTSUP;
	if ((ip->vtc_flow[0] >> 4) != 6 || ip->nh != DRNIC_NEIGH_PROTO_ICMPV6)
		return -ENOTSUP;
	icmp = (const uint8_t *)(ip + 1);
	if (icmp[0] == DRNIC_NEIGH_ND_NS)
		msg->kind = DRNIC_NEIGH_ND_SOLICIT;
	else if (icmp[0] == DRNIC_NEIGH_ND_NA)
		msg->kind = DRNIC_NEIGH_ND_ADVERT;
	else
		return -ENOTSUP;
	plen = rte_be_to_cpu_16(ip->plen);
	/* RFC 4861 7.1.1 / 7.1.2: hop limit 255, code 0, at least 24 bytes,
	 * valid checksum, target not multicast, options of non-zero length. */
	if (plen < NEIGH_ND_LEN || NEIGH_ETH_LEN + sizeof(*ip) + plen > len)
		return -EBADMSG;
	if (ip->hlim != 255 || icmp[1] != 0)
		return -EBADMSG;
	if (drnic_neigh_icmp6_cksum(ip->src, ip->dst, icmp, plen) != 0)
		return -EBADMSG;
	memcpy(msg->target_ip, icmp + 8, 16);
	if (msg->target_ip[0] == 0xFF)
		return -EBADMSG;
	memcpy(msg->sender_ip, ip->src, 16);
	memcpy(msg->dst_ip, ip->dst, 16);
	if (msg->kind == DRNIC_NEIGH_ND_ADVERT) {
		msg->na_flags = (uint32_t)icmp[4] << 24;
		if (ip->dst[0] == 0xFF && (msg->na_flags & DRNIC_NEIGH_NA_SOLICITED))
			return -EBADMSG;
	}
	for (opt = icmp + NEIGH_ND_LEN, olen = plen - NEIGH_ND_LEN; olen > 0;) {
		uint32_t ol;

		if (olen < 2)
			return -EBADMSG;
		ol = opt[1] * 8u;
		if (ol == 0 || ol > olen)
			return -EBADMSG;
		if (ol >= 8 && ((msg->kind == DRNIC_NEIGH_ND_SOLICIT && opt[0] == NEIGH_OPT_SLLA) ||
				(msg->kind == DRNIC_NEIGH_ND_ADVERT && opt[0] == NEIGH_OPT_TLLA))) {
			memcpy(msg->lladdr, opt + 2, 6);
			msg->has_lladdr = true;
		}
		opt += ol;
		olen -= ol;
	}
	if (msg->kind == DRNIC_NEIGH_ND_SOLICIT && neigh_ip_unspecified(msg->sender_ip)) {
		/* DAD probe: to a solicited-node group, no source LLA. */
		if (msg->has_lladdr || ip->dst[0] != 0xFF)
			return -EBADMSG;
	}
	return 0;
}

int
drnic_neigh_parse(const struct rte_mbuf *m, struct drnic_neigh_msg *msg)
{
	const uint8_t *p;
	uint32_t len;
	uint16_t type;

	if (m == NULL || msg == NULL)
		return -EINVAL;
	p = rte_pktmbuf_mtod(m, const uint8_t *);
	len = m->data_len;
	if (len < NEIGH_ETH_LEN)
		return -ENOTSUP;
	memset(msg, 0, sizeof(*msg));
	memcpy(msg->eth_dst, p, 6);
	memcpy(msg->eth_src, p + 6, 6);
	type = (uint16_t)(p[12] << 8 | p[13]);
	if (type == DRNIC_NEIGH_ETHER_ARP)
		return neigh_parse_arp(p, len, msg);
	if (type == DRNIC_NEIGH_ETHER_IPV6)
		return neigh_parse_nd(p, len, msg);
	return -ENOTSUP;
}

static uint8_t *
neigh_eth_put(struct rte_mbuf *m, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
	      uint16_t type)
{
	uint8_t *p;

	if (rte_pktmbuf_data_len(m) != 0)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL)
		return NULL;
	memset(p, 0, len);
	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	p[12] = (uint8_t)(type >> 8);
	p[13] = (uint8_t)type;
	return p;
}

int
drnic_neigh_arp_build(struct rte_mbuf *m, uint16_t op, const uint8_t eth_dst[6],
		      const uint8_t sha[6], uint32_t spa, const uint8_t tha[6], uint32_t tpa)
{
	struct neigh_arp *a;
	uint8_t *p;

	if (m == NULL || eth_dst == NULL || sha == NULL || tha == NULL || (op != 1 && op != 2))
		return -EINVAL;
	/* Ethernet's minimum frame (60 bytes before the FCS): pad with zeros. */
	p = neigh_eth_put(m, NEIGH_MIN_FRAME, eth_dst, sha, DRNIC_NEIGH_ETHER_ARP);
	if (p == NULL)
		return -ENOSPC;
	a = (struct neigh_arp *)(p + NEIGH_ETH_LEN);
	a->htype = rte_cpu_to_be_16(1);
	a->ptype = rte_cpu_to_be_16(0x0800);
	a->hlen = 6;
	a->plen = 4;
	a->op = rte_cpu_to_be_16(op);
	memcpy(a->sha, sha, 6);
	a->spa = spa;
	memcpy(a->tha, tha, 6);
	a->tpa = tpa;
	return 0;
}

/* Build Ethernet + IPv6 + an ND message with one link-layer address option. */
static int
neigh_nd_build(struct rte_mbuf *m, const uint8_t smac[6], const uint8_t dmac[6],
	       const uint8_t src[16], const uint8_t dst[16], uint8_t type, uint32_t flags,
	       const uint8_t target[16], uint8_t opt_type)
{
	const uint32_t plen = NEIGH_ND_LEN + 8;
	struct neigh_ip6 *ip;
	uint8_t *p, *icmp;
	uint16_t c;

	p = neigh_eth_put(m, NEIGH_ETH_LEN + sizeof(*ip) + plen, dmac, smac,
			  DRNIC_NEIGH_ETHER_IPV6);
	if (p == NULL)
		return -ENOSPC;
	ip = (struct neigh_ip6 *)(p + NEIGH_ETH_LEN);
	ip->vtc_flow[0] = 0x60;
	ip->plen = rte_cpu_to_be_16((uint16_t)plen);
	ip->nh = DRNIC_NEIGH_PROTO_ICMPV6;
	ip->hlim = 255;
	memcpy(ip->src, src, 16);
	memcpy(ip->dst, dst, 16);
	icmp = (uint8_t *)(ip + 1);
	icmp[0] = type;
	icmp[4] = (uint8_t)(flags >> 24);
	memcpy(icmp + 8, target, 16);
	icmp[24] = opt_type;
	icmp[25] = 1;            /* 8 bytes */
	memcpy(icmp + 26, smac, 6);
	c = drnic_neigh_icmp6_cksum(src, dst, icmp, plen);
	icmp[2] = (uint8_t)(c >> 8);
	icmp[3] = (uint8_t)c;
	return 0;
}

int
drnic_neigh_ns_build(struct rte_mbuf *m, const uint8_t smac[6], const uint8_t src[16],
		     const uint8_t target[16])
{
	uint8_t dst[16] = { 0xFF, 0x02, [11] = 0x01, [12] = 0xFF };
	uint8_t dmac[6] = { 0x33, 0x33, 0xFF };

	if (m == NULL || smac == NULL || src == NULL || target == NULL)
		return -EINVAL;
	/* Solicited-node group ff02::1:ff00:0/104 | low 24 bits of the target;
	 * its MAC is 33:33 and the group's low 32 bits (RFC 2464 section 7). */
	memcpy(dst + 13, target + 13, 3);
	memcpy(dmac + 3, target + 13, 3);
	return neigh_nd_build(m, smac, dmac, src, dst, DRNIC_NEIGH_ND_NS, 0, target,
			      NEIGH_OPT_SLLA);
}

int
drnic_neigh_na_build(struct rte_mbuf *m, const uint8_t smac[6], const uint8_t dmac[6],
		     const uint8_t src[16], const uint8_t dst[16], const uint8_t target[16],
		     uint32_t flags)
{
	if (m == NULL || smac == NULL || dmac == NULL || src == NULL || dst == NULL ||
	    target == NULL)
		return -EINVAL;
	return neigh_nd_build(m, smac, dmac, src, dst, DRNIC_NEIGH_ND_NA, flags, target,
			      NEIGH_OPT_TLLA);
}
