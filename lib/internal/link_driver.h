/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LINK_DRIVER_H
#define LINK_DRIVER_H

/*
 * Link drivers (driver-facing part of lib/link; not installed).
 *
 * A driver is a `const struct link_ops` registered at load time with
 * DRNIC_LINK_REGISTER(ops). lib/verbs opens a link by driver name with
 * link_create(); the engines then move frames through link_tx_burst() and
 * link_rx_burst(), which count packets and bytes.
 *
 * Queues: a link has nb_queues queue pairs, one per engine of its device.
 * Queue q is used by exactly one engine thread at a time (tx and rx), so the
 * per-queue counters have one writer. A driver that has one real queue steers
 * received frames to the queue of the destination QP: queue = dest QPN %
 * nb_queues (QPNs are allocated so that this is the QP's engine).
 *
 * Burst convention (as rte_eth_tx_burst): tx_burst returns how many frames it
 * took, from the front; the caller still owns the rest and may retry later.
 * rx_burst returns how many frames it stored; the caller owns them.
 *
 * Between the wrappers below and the driver ops: fault injection
 * (link_fault.c, per queue and direction) then pcapng mirroring
 * (link_capture.c), so a capture shows what went on the wire (on receive:
 * what the driver returned, before the receive injector).
 */

#include <stdbool.h>
#include <stdint.h>

#include <netinet/in.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "drnic_capture.h"
#include "drnic_link.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rte_kvargs;

/** Most queues a link may have (= most engines of one device). */
#define LINK_MAX_QUEUES 16

/** Most addresses (IPv4 and IPv6 together) a link answers for. */
#define LINK_MAX_ADDRS 16

/**
 * What a link is opened with. Only read during link_create(): the arrays
 * may be the caller's. Zero/NULL/0-count fields are "not set"; drivers then
 * fall back to their link_args keys (ethdev: ipv4=, ipv6=, mtu=). When both
 * are given, the addresses of both are used and the configured MTU wins
 * (a different mtu= in link_args is logged and ignored).
 */
struct link_config {
	const char *name;        /**< link instance name, e.g. "drnic0.loopback" */
	const char *args;        /**< driver arguments "k=v,k=v" (may be NULL) */
	uint16_t nb_queues;      /**< 1..LINK_MAX_QUEUES */
	uint8_t mac[6];          /**< the device's MAC */
	int socket_id;
	unsigned int mtu;        /**< the device's Ethernet MTU (IP packet size); 0: unset */
	const struct in_addr *ipv4;  /**< the device's IPv4 addresses (network order) */
	unsigned int nb_ipv4;
	const struct in6_addr *ipv6; /**< the device's IPv6 addresses */
	unsigned int nb_ipv6;
};

/** Counters of one queue; written only by the queue's engine. */
struct link_queue_stats {
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_busy;
	uint64_t drops[DRNIC_LINK_DROP_MAX];
} __rte_cache_aligned;

struct link_ops;

/** A link instance. Drivers keep their state behind @p priv. */
struct drnic_link {
	const struct link_ops *ops;
	char name[64];
	uint16_t nb_queues;
	uint8_t mac[6];
	int socket_id;
	/** The device's Ethernet MTU from struct link_config (0: not set). */
	unsigned int mtu;
	/** The device's addresses from struct link_config, as 16-byte GIDs
	 * (IPv4 mapped, ::ffff:a.b.c.d), IPv4 first. */
	unsigned int nb_addrs;
	uint8_t addrs[LINK_MAX_ADDRS][16];
	/** Each transmit burst costs a system call (net_af_packet, net_tap):
	 * the engine holds a burst of lone ACKs a few microseconds for a
	 * data frame to go in the same call. Elsewhere (loopback, net_ring,
	 * memif, NICs) an ACK leaves at once, as a NIC's does. Set by the
	 * driver's create. */
	bool tx_hold_acks;
	void *priv;                           /**< driver state */
	struct link_queue_stats stats[LINK_MAX_QUEUES];
	/** Transmit fault injectors per queue (link_fault.c); NULL: none. */
	struct link_fault *fault[LINK_MAX_QUEUES];
	/** Receive fault injectors per queue (fault_dir=rx|both); NULL: none. */
	struct link_fault *fault_rx[LINK_MAX_QUEUES];
	/** pcapng mirror (link_capture.c); NULL: none. Used only under
	 * capture_lock; read without it only as a hint. */
	struct drnic_capture *capture;
	rte_spinlock_t capture_lock;
};

/** A link driver. Every op but the optional ones must be set. */
struct link_ops {
	const char *name;                     /**< driver name in configurations */
	/**
	 * Open a link: parse @p kv (may be NULL when no arguments were
	 * given), set link->priv. Return 0 or a negative errno.
	 */
	int (*create)(struct drnic_link *link, const struct rte_kvargs *kv);
	/** Close a link; free every frame it still holds. */
	void (*destroy)(struct drnic_link *link);
	/** Send frames on queue @p q; returns how many were taken. */
	uint16_t (*tx_burst)(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n);
	/** Receive up to @p n frames on queue @p q; returns how many. */
	uint16_t (*rx_burst)(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n);
	/** Optional: add driver-specific counters to @p stats. */
	void (*stats)(const struct drnic_link *link, struct drnic_link_stats *stats);
	/** Optional: zero what @p stats adds (drnic_link_stats_reset()). */
	void (*stats_reset)(struct drnic_link *link);
	/** Optional: is the link up (default: yes). */
	bool (*is_up)(const struct drnic_link *link);
	/**
	 * Optional: the MAC that frames for the 16-byte GID @p gid should be
	 * sent to. Runs on a control thread (e.g. drnic_modify_qp() to RTR)
	 * while the engines run; never blocks. Returns:
	 *  - 0 and @p mac filled: known;
	 *  - -EAGAIN: not known yet; a question (ARP request / neighbour
	 *    solicitation) is queued and the link's queue 0 sends it. Call
	 *    again later (the engine of queue 0 must be running, or with
	 *    inline progress someone must drive it) until another answer;
	 *  - -EHOSTUNREACH: asked, and the peer did not answer in time (a
	 *    later call asks again);
	 *  - -EADDRNOTAVAIL: the link has no address of @p gid's family (IPv4
	 *    / IPv6) to ask from;
	 *  - -ENOENT: nobody to send to (loopback without a peer).
	 * Without this op (or on -ENOENT) the caller leaves the destination
	 * MAC as the address vector gave it (possibly zero).
	 */
	int (*resolve)(const struct drnic_link *link, const uint8_t gid[16], uint8_t mac[6]);
	/**
	 * Optional, the receive wake-up (drnic_link_rx_wait_fd() and friends
	 * in drnic_link.h, which check the arguments and fault injection
	 * first). Either all three are set or none.
	 *
	 * rx_wait_fd: a descriptor that polls readable (POLLIN) when frames
	 * may have arrived for queue @p q since the last rx_wait_arm; the
	 * link owns it (destroy closes it). -ENOTSUP when this port has none.
	 * rx_wait_arm: forget old wake-ups and enable new ones; a frame that
	 * arrives after it returns makes the descriptor readable.
	 * rx_wait_disarm: consume the wake-up and stop asking for new ones
	 * (so that the data path does not pay for them while nobody sleeps).
	 * Called by the one waiting thread of the queue, possibly while the
	 * queue's engine runs rx_burst on another thread.
	 */
	int (*rx_wait_fd)(struct drnic_link *link, uint16_t q);
	int (*rx_wait_arm)(struct drnic_link *link, uint16_t q);
	int (*rx_wait_disarm)(struct drnic_link *link, uint16_t q);
};

/** Most link drivers one process registers. */
#define LINK_MAX_DRIVERS 16

/**
 * Add a driver to the registry (use DRNIC_LINK_REGISTER), before main().
 * The registry keeps the pointer; the table may be const.
 */
void link_register(const struct link_ops *ops);

/** Register a driver's ops table from a constructor. */
#define DRNIC_LINK_REGISTER(ops)                                                \
	static void __attribute__((constructor, used)) link_register_##ops(void) \
	{                                                                       \
		link_register(&(ops));                                          \
	}

/** @return the driver registered as @p name, or NULL. */
const struct link_ops *link_find(const char *name);

/**
 * Open a link of driver @p driver.
 * @return the link, or NULL with rte_errno: EINVAL (NULL argument, bad
 *         queue count, bad argument string), ENOENT (no such driver),
 *         ENOMEM, or the driver's error.
 */
struct drnic_link *link_create(const char *driver, const struct link_config *cfg);

/** Close a link (NULL ignored). */
void link_destroy(struct drnic_link *link);

/** Count @p n frames dropped on queue @p q for @p reason and free them. */
void link_drop(struct drnic_link *link, uint16_t q, enum drnic_link_drop reason,
	       struct rte_mbuf **pkts, uint16_t n);

/* Mirroring (link_capture.c): transmit @p n frames through the driver and
 * write those it took to the link's capture. */
uint16_t link_capture_tx(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n);

/**
 * Write frames to the link's capture, if one runs (no-op otherwise). The
 * caller keeps the frames. For drivers that send or consume frames of their
 * own (ethdev: ARP / neighbour discovery); never call it from inside the
 * driver's tx_burst.
 */
void link_capture_mirror(struct drnic_link *link, struct rte_mbuf *const *pkts, uint16_t n,
			 enum drnic_capture_dir dir);

/**
 * Hand frames to the driver (after fault injection): what goes on the wire.
 * Mirrors them when a capture runs. Returns how many the driver took.
 */
static inline uint16_t
link_driver_tx(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	if (unlikely(__atomic_load_n(&link->capture, __ATOMIC_RELAXED) != NULL))
		return link_capture_tx(link, q, pkts, n);
	return link->ops->tx_burst(link, q, pkts, n);
}

struct link_fault;
/* Transmit through queue @p q's fault injector (link_fault.c). */
uint16_t link_fault_tx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts,
			     uint16_t n);
/* Receive through queue @p q's receive fault injector (link_fault.c):
 * counts and mirrors what the driver returned, then returns the due frames. */
uint16_t link_fault_rx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts,
			     uint16_t n);

/**
 * Send a burst on queue @p q and count what was taken. Caller: the engine
 * owning queue @p q. Frames not taken stay the caller's (counted tx_busy).
 */
static inline uint16_t
link_tx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct link_queue_stats *st = &link->stats[q];
	uint64_t bytes = 0;
	uint16_t sent, i;

	if (unlikely(__atomic_load_n(&link->fault[q], __ATOMIC_RELAXED) != NULL))
		return link_fault_tx_burst(link, q, pkts, n);
	if (n == 0)
		return 0;
	/* Taken frames belong to the link (maybe another thread) afterwards:
	 * read every length first, then take back those not sent. */
	for (i = 0; i < n; i++)
		bytes += pkts[i]->pkt_len;
	sent = link_driver_tx(link, q, pkts, n);
	for (i = sent; i < n; i++)
		bytes -= pkts[i]->pkt_len;
	st->tx_bytes += bytes;
	st->tx_packets += sent;
	st->tx_busy += (uint16_t)(n - sent);
	return sent;
}

/**
 * Receive a burst on queue @p q and count it. Caller: the engine owning
 * queue @p q.
 */
static inline uint16_t
link_rx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct link_queue_stats *st = &link->stats[q];
	uint16_t got, i;

	/* Same thread as queue q's transmit: release frames faults held. */
	if (unlikely(__atomic_load_n(&link->fault[q], __ATOMIC_RELAXED) != NULL))
		link_fault_tx_burst(link, q, NULL, 0);
	if (unlikely(__atomic_load_n(&link->fault_rx[q], __ATOMIC_RELAXED) != NULL))
		return link_fault_rx_burst(link, q, pkts, n);
	got = link->ops->rx_burst(link, q, pkts, n);
	for (i = 0; i < got; i++)
		st->rx_bytes += pkts[i]->pkt_len;
	st->rx_packets += got;
	if (unlikely(got > 0 && __atomic_load_n(&link->capture, __ATOMIC_RELAXED) != NULL))
		link_capture_mirror(link, pkts, got, DRNIC_CAPTURE_DIR_RX);
	return got;
}

/** Whether the link is up. */
static inline bool
link_is_up(const struct drnic_link *link)
{
	return link->ops->is_up == NULL || link->ops->is_up(link);
}

#ifdef __cplusplus
}
#endif

#endif /* LINK_DRIVER_H */
