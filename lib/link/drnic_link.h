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

/** Why a link dropped a frame; each reason has a counter. */
enum drnic_link_drop {
	DRNIC_LINK_DROP_NO_PEER = 0,  /**< nobody on the other end */
	DRNIC_LINK_DROP_DOWN,         /**< link not up */
	DRNIC_LINK_DROP_TX_ERROR,     /**< the engine gave up a frame the link refused */
	DRNIC_LINK_DROP_RX_ERROR,     /**< a received frame that could not be delivered */
	DRNIC_LINK_DROP_MAX,          /**< number of reasons */
};

/** Counters of a link, summed over its queues. */
struct drnic_link_stats {
	uint64_t tx_packets;   /**< frames the link accepted */
	uint64_t tx_bytes;
	uint64_t rx_packets;   /**< frames the link delivered */
	uint64_t rx_bytes;
	uint64_t tx_busy;      /**< frames refused for now (queue full); retried */
	uint64_t drops[DRNIC_LINK_DROP_MAX]; /**< by enum drnic_link_drop */
};

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
 * Zero a link's counters. Not atomic with respect to a running engine:
 * call it while the link is quiet.
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

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_LINK_H */
