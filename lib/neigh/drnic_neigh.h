/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_NEIGH_H
#define DRNIC_NEIGH_H

/**
 * @file
 * Neighbours: ARP (RFC 826) and IPv6 neighbour discovery (RFC 4861) for the
 * addresses of a drnic port, and a table of peers' MAC addresses.
 *
 * Addresses are 16-byte IPv6 addresses; an IPv4 address is IPv4-mapped
 * (::ffff:a.b.c.d), which is also its RoCEv2 GID, so a GID can be resolved
 * as it is.
 *
 * Pure code over mbufs: no threads, no locks, no clock of its own (callers
 * pass the time in nanoseconds). A table has one user at a time; a link
 * driver that uses one table from several threads serialises the calls.
 *
 * Typical use by a link driver:
 *  - every received ARP or ICMPv6 frame goes to drnic_neigh_input(), which
 *    learns the sender and may build a reply to transmit;
 *  - drnic_neigh_resolve() answers a peer's MAC, or queues a request and
 *    returns -EAGAIN;
 *  - drnic_neigh_poll() builds the requests (and retries) that are due.
 *
 * Limits: untagged frames only (no 802.1Q), Ethernet hardware addresses only.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mbuf;
struct rte_mempool;
struct drnic_neigh;

/** Ethernet frame type of ARP. */
#define DRNIC_NEIGH_ETHER_ARP 0x0806
/** Ethernet frame type of IPv6. */
#define DRNIC_NEIGH_ETHER_IPV6 0x86DD
/** IPv6 next header of ICMPv6. */
#define DRNIC_NEIGH_PROTO_ICMPV6 58
/** ICMPv6 type of a neighbour solicitation. */
#define DRNIC_NEIGH_ND_NS 135
/** ICMPv6 type of a neighbour advertisement. */
#define DRNIC_NEIGH_ND_NA 136

/** Neighbour advertisement flags (first word of the NA, host order). */
#define DRNIC_NEIGH_NA_ROUTER    0x80000000u
#define DRNIC_NEIGH_NA_SOLICITED 0x40000000u
#define DRNIC_NEIGH_NA_OVERRIDE  0x20000000u

/** What a parsed frame is. */
enum drnic_neigh_kind {
	DRNIC_NEIGH_ARP_REQUEST = 1,
	DRNIC_NEIGH_ARP_REPLY,
	DRNIC_NEIGH_ND_SOLICIT,
	DRNIC_NEIGH_ND_ADVERT,
};

/** A parsed ARP or neighbour discovery message. */
struct drnic_neigh_msg {
	enum drnic_neigh_kind kind;
	uint8_t eth_dst[6];
	uint8_t eth_src[6];
	/** ARP: sender protocol address (mapped); ND: IPv6 source address. */
	uint8_t sender_ip[16];
	/** ARP: target protocol address (mapped); ND: the target address. */
	uint8_t target_ip[16];
	/** ND: IPv6 destination address (zero for ARP). */
	uint8_t dst_ip[16];
	/**
	 * ARP: sender hardware address; NS: source link-layer address option;
	 * NA: target link-layer address option. Valid when has_lladdr.
	 */
	uint8_t lladdr[6];
	bool has_lladdr;
	/** ARP: target hardware address. */
	uint8_t arp_tha[6];
	/** NA: the R/S/O flags (DRNIC_NEIGH_NA_*). */
	uint32_t na_flags;
};

/* ------------------------------------------------------------------------ */
/* Addresses                                                                */
/* ------------------------------------------------------------------------ */

/**
 * Write the IPv4-mapped address (= RoCEv2 GID) of an IPv4 address.
 * @param ip   IPv4 address in network byte order.
 * @param gid  receives ::ffff:a.b.c.d.
 */
static inline void
drnic_neigh_gid_from_ipv4(uint32_t ip, uint8_t gid[16])
{
	memset(gid, 0, 10);
	gid[10] = 0xFF;
	gid[11] = 0xFF;
	memcpy(gid + 12, &ip, 4);
}

/** @return true when @p gid is an IPv4-mapped address (::ffff:0:0/96). */
static inline bool
drnic_neigh_gid_is_ipv4(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

/**
 * The IPv4 address of an IPv4-mapped GID.
 * @param ip  receives the address in network byte order.
 * @return 0; -EINVAL when @p gid is not IPv4-mapped.
 */
int drnic_neigh_gid_to_ipv4(const uint8_t gid[16], uint32_t *ip);

/* ------------------------------------------------------------------------ */
/* Codec                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * Parse an ARP or neighbour discovery frame (single-segment mbuf). ND
 * messages are checked as RFC 4861 section 7.1.1/7.1.2 asks: hop limit 255,
 * code 0, valid ICMPv6 checksum, length, no zero-length option, target not
 * multicast; ARP as RFC 826 (Ethernet/IPv4 lengths, opcode 1 or 2).
 *
 * @return 0 and @p msg filled;
 *         -ENOTSUP when the frame is neither ARP nor an NS/NA (e.g. RoCE);
 *         -EBADMSG when it is one of them but malformed;
 *         -EINVAL for a NULL argument.
 */
int drnic_neigh_parse(const struct rte_mbuf *m, struct drnic_neigh_msg *msg);

/**
 * Append an ARP frame (Ethernet header included, padded to 60 bytes) to an
 * empty mbuf.
 *
 * @param op       1 (request) or 2 (reply).
 * @param eth_dst  Ethernet destination (broadcast for a request).
 * @param sha,spa  sender MAC and IPv4 address (network order).
 * @param tha,tpa  target MAC (zero in a request) and IPv4 address.
 * @return 0; -EINVAL (NULL argument, bad opcode); -ENOSPC (mbuf too small).
 */
int drnic_neigh_arp_build(struct rte_mbuf *m, uint16_t op, const uint8_t eth_dst[6],
			  const uint8_t sha[6], uint32_t spa, const uint8_t tha[6], uint32_t tpa);

/**
 * Append a neighbour solicitation for @p target from @p src, sent to the
 * target's solicited-node multicast group (ff02::1:ffXX:XXXX, MAC
 * 33:33:ff:XX:XX:XX), hop limit 255, with a source link-layer address option.
 *
 * @return 0; -EINVAL (NULL argument); -ENOSPC (mbuf too small).
 */
int drnic_neigh_ns_build(struct rte_mbuf *m, const uint8_t smac[6], const uint8_t src[16],
			 const uint8_t target[16]);

/**
 * Append a neighbour advertisement for @p target (with a target link-layer
 * address option = @p smac), hop limit 255.
 *
 * @param flags  DRNIC_NEIGH_NA_* bits.
 * @return 0; -EINVAL (NULL argument); -ENOSPC (mbuf too small).
 */
int drnic_neigh_na_build(struct rte_mbuf *m, const uint8_t smac[6], const uint8_t dmac[6],
			 const uint8_t src[16], const uint8_t dst[16], const uint8_t target[16],
			 uint32_t flags);

/**
 * ICMPv6 checksum (RFC 4443 section 2.3: one's complement sum over the
 * pseudo-header of RFC 8200 section 8.1 and the message, whose checksum field
 * the caller has zeroed — or left as is, to verify: 0 then means valid).
 *
 * @param src,dst  IPv6 source and destination.
 * @param msg      the ICMPv6 message, @p len bytes.
 * @return the checksum to store (network order when stored as bytes hi, lo).
 */
uint16_t drnic_neigh_icmp6_cksum(const uint8_t src[16], const uint8_t dst[16], const void *msg,
				 uint32_t len);

/* ------------------------------------------------------------------------ */
/* Table                                                                    */
/* ------------------------------------------------------------------------ */

/** Table parameters; zero means default for every field but @p mac. */
struct drnic_neigh_params {
	uint8_t mac[6];            /**< our MAC: the answer to requests */
	unsigned int size;         /**< entries; default 64 */
	unsigned int max_tries;    /**< requests before giving up; default 3 */
	uint32_t retry_ms;         /**< between requests; default 1000 */
	uint32_t fail_ms;          /**< life of a negative entry; default 3000 */
	/** Life of a learned entry before it is refreshed; default 0 = forever. */
	uint32_t reachable_ms;
	int socket_id;             /**< memory; default (0) = SOCKET_ID_ANY */
};

/** Counters of a table. */
struct drnic_neigh_stats {
	uint64_t arp_req_rx;       /**< ARP requests received */
	uint64_t arp_rep_rx;       /**< ARP replies received */
	uint64_t arp_req_tx;       /**< ARP requests built */
	uint64_t arp_rep_tx;       /**< ARP replies built */
	uint64_t ns_rx;            /**< neighbour solicitations received */
	uint64_t na_rx;            /**< neighbour advertisements received */
	uint64_t ns_tx;            /**< solicitations built */
	uint64_t na_tx;            /**< advertisements built */
	uint64_t bad;              /**< malformed ARP/ND frames */
	uint64_t not_ours;         /**< requests for other addresses */
	uint64_t learned;          /**< entries created or changed */
	uint64_t resolved;         /**< pending entries that got an answer */
	uint64_t failed;           /**< pending entries that gave up */
	uint64_t nomem;            /**< replies or requests lost for want of an mbuf */
};

/**
 * Create a table.
 * @return the table, or NULL with rte_errno EINVAL (NULL @p p, a size above
 *         65536) or ENOMEM.
 */
struct drnic_neigh *drnic_neigh_create(const struct drnic_neigh_params *p);

/** Free a table (NULL ignored). */
void drnic_neigh_free(struct drnic_neigh *t);

/**
 * Add one of our own addresses (requests for it are answered).
 * @param ip  IPv4-mapped or IPv6 address.
 * @return 0; -EINVAL (NULL argument, unspecified or multicast address);
 *         -EEXIST (already ours); -ENOSPC (8 addresses already).
 */
int drnic_neigh_addr_add(struct drnic_neigh *t, const uint8_t ip[16]);

/** @return true when @p ip is one of our addresses. */
bool drnic_neigh_is_local(const struct drnic_neigh *t, const uint8_t ip[16]);

/**
 * Take a received frame: learn from it, and when it asks for one of our
 * addresses build the reply. The caller keeps (and frees) @p m.
 *
 * @param mp     pool for the reply.
 * @param reply  receives the reply to transmit, or NULL when there is none.
 * @return 0 (an ARP/ND frame, handled);
 *         -ENOTSUP (not ARP/ND: the caller handles the frame);
 *         -EBADMSG (malformed, counted); -ENOMEM (no mbuf for the reply,
 *         counted); -EINVAL (NULL argument).
 */
int drnic_neigh_input(struct drnic_neigh *t, const struct rte_mbuf *m, uint64_t now_ns,
		      struct rte_mempool *mp, struct rte_mbuf **reply);

/**
 * Resolve a peer's MAC.
 * @param ip   IPv4-mapped or IPv6 address (a RoCEv2 GID).
 * @param mac  receives the MAC on success.
 * @return 0; -EAGAIN (a request is queued or outstanding: call
 *         drnic_neigh_poll() to send it, then ask again);
 *         -EHOSTUNREACH (no answer after max_tries; asked again after
 *         fail_ms, or when the peer speaks first);
 *         -EADDRNOTAVAIL (no address of ours of that family to ask from);
 *         -ENOSPC (table full of pending entries); -EINVAL (NULL argument,
 *         multicast or unspecified address).
 */
int drnic_neigh_resolve(struct drnic_neigh *t, const uint8_t ip[16], uint64_t now_ns,
			uint8_t mac[6]);

/**
 * Look up a peer's MAC without side effects.
 * @return 0; -ENOENT (not known, or pending, or failed); -EINVAL.
 */
int drnic_neigh_lookup(const struct drnic_neigh *t, const uint8_t ip[16], uint8_t mac[6]);

/**
 * Add a permanent entry (never refreshed or replaced by learning).
 * @return 0; -EINVAL; -ENOSPC (table full of permanent entries).
 */
int drnic_neigh_add_static(struct drnic_neigh *t, const uint8_t ip[16], const uint8_t mac[6]);

/** @return true when some entry waits for an answer (poll it). */
bool drnic_neigh_pending(const struct drnic_neigh *t);

/**
 * Build the requests that are due at @p now_ns (first tries and retries);
 * entries that used up their tries become negative.
 *
 * @param out  receives up to @p max frames to transmit.
 * @return how many frames were stored in @p out.
 */
unsigned int drnic_neigh_poll(struct drnic_neigh *t, uint64_t now_ns, struct rte_mempool *mp,
			      struct rte_mbuf **out, unsigned int max);

/**
 * Read the counters.
 * @return 0; -EINVAL for a NULL argument.
 */
int drnic_neigh_stats_get(const struct drnic_neigh *t, struct drnic_neigh_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_NEIGH_H */
