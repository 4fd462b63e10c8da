/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_LINK_H
#define DRNIC_LINK_H

/**
 * @file
 * Links: how a drnic device's frames leave and arrive (user-facing part).
 *
 * A link is an instance of a link driver (drivers/link/<name>), opened by a
 * device from its configuration (`link = loopback`, `link_args = ...`).
 * Applications read its counters here; drivers implement link_driver.h.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct drnic_link;

/**
 * Why a link dropped a frame; each reason has a counter, named by
 * drnic_link_drop_name() (the names telemetry's /drnic/links shows as
 * "drop_<name>"). New reasons are appended: existing values never change.
 *
 * The receive classifier of ports shared with other traffic (ethdev) drops
 * what no engine could use before it reaches one, each by its reason
 * (SHORT_FRAME .. NEIGH_VLAN). The PORT_* reasons are what the port itself
 * reports lost or refused (rte_eth_stats) before drnic sees a frame or
 * after the port took it: the link only reads them.
 */
enum drnic_link_drop {
	DRNIC_LINK_DROP_NO_PEER = 0,  /**< nobody on the other end */
	DRNIC_LINK_DROP_DOWN,         /**< link not up */
	DRNIC_LINK_DROP_TX_ERROR,     /**< a frame the link refused: the engine's
				       *   given up, or an ARP/ND frame of the link's */
	DRNIC_LINK_DROP_RX_ERROR,     /**< a received frame that could not be delivered
				       *   (ethdev: its engine's dispatch ring was full) */
	DRNIC_LINK_DROP_SHORT_FRAME,  /**< shorter than the headers it announces */
	DRNIC_LINK_DROP_NOT_ROCE,     /**< neither RoCEv2 nor ARP/ND: another
				       *   ethertype, or IP that is not UDP */
	DRNIC_LINK_DROP_BAD_IP_HEADER,/**< IP version nibble not the ethertype's,
				       *   or IPv4 header length under 20 bytes */
	DRNIC_LINK_DROP_IPV6_EXT,     /**< IPv6 with extension headers (RoCEv2 has none) */
	DRNIC_LINK_DROP_VLAN_STACKED, /**< two or more VLAN tags (QinQ) */
	DRNIC_LINK_DROP_UDP_PORT,     /**< UDP to a port other than 4791 */
	DRNIC_LINK_DROP_IP_FRAGMENT,  /**< a UDP fragment: IPv4 with MF set or a fragment
				       *   offset, or IPv6 with a Fragment header */
	DRNIC_LINK_DROP_NEIGH_VLAN,   /**< ARP or ICMPv6 inside a VLAN tag (the link's
				       *   neighbour discovery is untagged) */
	DRNIC_LINK_DROP_PORT_RX_MISSED, /**< port: frames the hardware or kernel lost
					 *   before they reached a receive queue (imissed) */
	DRNIC_LINK_DROP_PORT_RX_ERRORS, /**< port: erroneous frames received (ierrors) */
	DRNIC_LINK_DROP_PORT_RX_NOMBUF, /**< port: no mbuf to receive into (rx_nombuf) */
	DRNIC_LINK_DROP_PORT_TX_ERRORS, /**< port: frames it took and failed to send (oerrors) */
	DRNIC_LINK_DROP_MAX,          /**< number of reasons */
};

/**
 * Counters of a link, summed over its queues. The array grows when reasons
 * are appended: a program compiled against an older header must be
 * rebuilt (the struct is the caller's).
 */
struct drnic_link_stats {
	uint64_t tx_packets;   /**< frames the link accepted */
	uint64_t tx_bytes;
	uint64_t rx_packets;   /**< frames the link delivered */
	uint64_t rx_bytes;
	uint64_t tx_busy;      /**< frames refused for now (queue full); retried */
	uint64_t drops[DRNIC_LINK_DROP_MAX]; /**< by enum drnic_link_drop */
};

/**
 * The queue that serves QP @p qpn on a link of @p nb_queues queues, one per
 * engine of its device: a link steers each received frame to the queue of
 * its destination QPN, and a device gives a QP only a QPN whose queue is
 * the QP's engine. So frames for a QP reach only the engine that owns it.
 */
static inline uint16_t
drnic_link_qpn_queue(uint32_t qpn, uint16_t nb_queues)
{
	return nb_queues <= 1 ? 0 : (uint16_t)(qpn % nb_queues);
}

/**
 * Counter name of a drop reason, e.g. "no_peer".
 * @return a static string; "invalid" for a value out of range; never NULL.
 */
const char *drnic_link_drop_name(enum drnic_link_drop reason);

/**
 * Read a link's counters.
 * @return 0; -EINVAL when an argument is NULL.
 */
int drnic_link_stats_get(const struct drnic_link *link, struct drnic_link_stats *stats);

/**
 * Zero a link's counters, the port's (PORT_* reasons) included: those are
 * counted from here on, the port's own counters are left as they are. Not
 * atomic with respect to a running engine: call it while the link is quiet.
 * @return 0; -EINVAL when @p link is NULL.
 */
int drnic_link_stats_reset(struct drnic_link *link);

/** @return the link's name ("<device>.<driver>"), or NULL for NULL. */
const char *drnic_link_name(const struct drnic_link *link);

/** @return the link's driver name, or NULL for NULL. */
const char *drnic_link_driver_name(const struct drnic_link *link);

/**
 * Copy the link's MAC address.
 * @return 0; -EINVAL when an argument is NULL.
 */
int drnic_link_mac(const struct drnic_link *link, uint8_t mac[6]);

/**
 * Receive wake-up: a file descriptor that polls readable (POLLIN) when
 * frames may have arrived on link queue @p queue, so that a thread running
 * that queue's engine with inline progress can sleep in poll()/epoll until
 * there is work, instead of spinning or napping. Drivers may not have one
 * (it is an optional driver op): callers then keep polling.
 *
 * Protocol, for the one thread that waits on a queue:
 * @code
 *   fd = drnic_link_rx_wait_fd(link, q);            // once
 *   for (;;) {
 *       ... run the engine until it is idle ...
 *       if (drnic_link_rx_wait_arm(link, q) < 0)     // -EAGAIN: frames held
 *           { nap; continue; }
 *       if (drnic_device_progress(dev) == 0)        // the last look, armed
 *           poll(&(struct pollfd){ fd, POLLIN }, 1, timeout_ms);
 *       drnic_link_rx_wait_disarm(link, q);
 *   }
 * @endcode
 * Arming before the last look is what closes the race with a frame that
 * arrives between that look and poll(). Wake-ups may be spurious (frames
 * that turn out not to be RoCEv2 for us, frames already received by a
 * poller): run the engine and wait again. The descriptor only wakes: never
 * read from it, never close it (the link does).
 *
 * ethdev: net_af_packet ports (a second packet socket on the interface that
 * only wakes), and ports opened with link_args rx_intr=1 whose PMD has
 * receive interrupts (DPDK's rte_eth_dev_rx_intr_*); queue 0 only (the
 * port's one receive queue; queue 0's poller feeds the others). DPDK 22.11's
 * net_memif has no receive interrupts: -ENOTSUP. loopback: none.
 *
 * @return the descriptor (>= 0); -EINVAL when @p link is NULL or @p queue
 *         is not below its queue count; -ENOTSUP when the driver or port
 *         has no wake-up for that queue.
 */
int drnic_link_rx_wait_fd(struct drnic_link *link, uint16_t queue);

/**
 * Arm the receive wake-up of @p queue (see drnic_link_rx_wait_fd()): drop
 * wake-ups that are already pending and make the next frame wake the fd.
 * Then look for work once more before sleeping.
 *
 * @return 0; -EINVAL (NULL link, queue out of range); -ENOTSUP (no wake-up);
 *         -EAGAIN when fault injection holds frames of the queue on timers
 *         the wake-up cannot see (delay, reorder): do not sleep on the fd,
 *         poll; or the driver's error.
 */
int drnic_link_rx_wait_arm(struct drnic_link *link, uint16_t queue);

/**
 * Disarm the receive wake-up of @p queue after poll() returned (readable or
 * not): consume the wake-up and stop asking for new ones.
 *
 * @return 0; -EINVAL; -ENOTSUP; or the driver's error.
 */
int drnic_link_rx_wait_disarm(struct drnic_link *link, uint16_t queue);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_LINK_H */
