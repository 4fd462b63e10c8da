/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_TELEMETRY_H
#define DRNIC_TELEMETRY_H

/**
 * @file
 * drnic counters through DPDK telemetry (dpdk-telemetry.py, or any client
 * of the v2 socket under the EAL runtime directory).
 *
 * Commands (registered by drnic_telemetry_init()):
 *  - /drnic/devices          names of the registered devices
 *  - /drnic/engines[,DEV]    per device, per engine: loops, busy and idle
 *                            loops, rx/tx packets, doorbells, WQEs, CQEs,
 *                            mbuf shortages, drops by reason (engine and wire)
 *  - /drnic/links[,DEV]      per device link: driver, packets, bytes, tx_busy,
 *                            drops by reason ("drop_<name>" for every
 *                            enum drnic_link_drop, the port's losses too)
 *  - /drnic/qps              the registered QPs (numbers, at most 512);
 *    /drnic/qps,QPN          one QP: device, state, PSNs, destination QP,
 *                            path MTU, timeout, retry counts
 *  - /drnic/cqs              the registered CQs (ids, at most 512);
 *    /drnic/cqs,ID           one CQ: depth, occupancy, high-water mark,
 *                            overflows, completions, events, in_error
 *
 * The public drnic API has no way to enumerate objects, so applications
 * register what they want to show. Unregister an object before destroying
 * it: handlers run on DPDK's telemetry thread and read registered objects
 * under the registry lock.
 *
 * Errors: 0 or a negative errno.
 */

#include <stdint.h>

#include "drnic_cq.h"
#include "drnic_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most objects of each kind the registry holds. */
#define DRNIC_TELEMETRY_MAX_DEVICES 64
#define DRNIC_TELEMETRY_MAX_QPS 65536
#define DRNIC_TELEMETRY_MAX_CQS 65536

/**
 * Register the /drnic/ commands with DPDK telemetry (once; later calls do
 * nothing). Call after rte_eal_init().
 * @return 0; a negative errno from rte_telemetry_register_cmd().
 */
int drnic_telemetry_init(void);

/**
 * Show a device (its engines and link).
 * @return 0; -EINVAL (NULL); -EEXIST (already registered); -ENOSPC.
 */
int drnic_telemetry_add_device(struct drnic_device *dev);
/** Stop showing a device. @return 0; -ENOENT. */
int drnic_telemetry_remove_device(struct drnic_device *dev);

/** Show a QP under its number. @return 0; -EINVAL; -EEXIST; -ENOSPC. */
int drnic_telemetry_add_qp(struct drnic_qp *qp);
/** @return 0; -ENOENT. */
int drnic_telemetry_remove_qp(struct drnic_qp *qp);

/**
 * Show a CQ. @p name (may be NULL) is shown with it.
 * @return the CQ's telemetry id (>= 0); -EINVAL; -EEXIST; -ENOSPC.
 */
int drnic_telemetry_add_cq(struct drnic_cq *cq, const char *name);
/** @return 0; -ENOENT. */
int drnic_telemetry_remove_cq(struct drnic_cq *cq);

/** Forget every registered object (the commands stay registered). */
void drnic_telemetry_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_TELEMETRY_H */
