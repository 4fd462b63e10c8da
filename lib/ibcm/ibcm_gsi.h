/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef IBCM_GSI_H
#define IBCM_GSI_H

/**
 * @file
 * The GSI agent of one device port: QP 1, a UD QP that receives and sends
 * MADs (IBA 13.5): destination QP 1, Q_Key 0x80010000, P_Key from the
 * port's table (index 0). It owns QP 1, its PD, CQ, completion channel and
 * the receive and send buffers (registered hugepage memory).
 *
 * MADs of the CM class (0x07) go to the owner's callback. Every other
 * class is answered or dropped as IBA 13.5.3 says: a request (Get, Set,
 * R bit clear) of a class no agent serves gets a GetResp with status
 * "unsupported class/version" (0x0004); responses, traps and sends of
 * unknown classes are dropped; all counted. A CM Get(ClassPortInfo) is
 * answered here (RespTimeValue, no redirection). Malformed datagrams (not
 * 256 bytes, base version not 1) are dropped and counted.
 *
 * Not thread-safe: the owner serialises ibcm_gsi_process() and
 * ibcm_gsi_send() (ibcm_rdma.c calls both under the CM's lock, from its
 * agent thread and from API calls); the fd may be polled anywhere.
 */

#include <stddef.h>
#include <stdint.h>

#include "drnic_verbs.h"
#include "ibcm_proto.h"

struct ibcm_gsi;

/** A received CM MAD: @p mad is 256 bytes, valid during the call. */
typedef void (*ibcm_gsi_rx_fn)(void *ctx, const uint8_t *mad, size_t len,
			       const struct ibcm_peer *src);

/**
 * Open QP 1 on port @p port_num of @p dev (a device has one GSI QP: a
 * second open is -EBUSY), post its receives, arm its CQ.
 * @return the agent, or NULL with rte_errno (EINVAL, EBUSY, ENOMEM).
 */
struct ibcm_gsi *ibcm_gsi_open(struct drnic_device *dev, uint8_t port_num,
			       ibcm_gsi_rx_fn rx, void *ctx);

/**
 * Close: destroy QP 1 and free everything. Nothing is called back after
 * it returns.
 */
void ibcm_gsi_close(struct ibcm_gsi *g);

/**
 * The fd to wait on (readable when a completion may be waiting: the CQ's
 * completion channel, armed). Never closed by the caller.
 */
int ibcm_gsi_fd(const struct ibcm_gsi *g);

/**
 * Take every completion: received MADs to the callback (CM class) or
 * handled here (others), receive buffers reposted, send buffers freed;
 * then re-arm. Runs the engine once when the device is in inline mode.
 * @return the number of MADs received; a negative errno on a fatal error.
 */
int ibcm_gsi_process(struct ibcm_gsi *g);

/**
 * Send a 256-byte MAD to @p dst's QP (normally 1) with the GSI Q_Key. The
 * destination MAC comes from @p dst->mac, else the device resolves the GID
 * (ARP / ND).
 * @return 0; -EINVAL (bad length, NULL); -ENOBUFS (every send buffer in
 *         flight: the caller's timers will resend); the post's errno.
 */
int ibcm_gsi_send(struct ibcm_gsi *g, const struct ibcm_peer *dst, const uint8_t *mad,
		  size_t len);

/** Counters of the agent. */
struct ibcm_gsi_stats {
	uint64_t rx_mads;          /**< MADs received (every class) */
	uint64_t rx_cm;            /**< ... of the CM class, given to the callback */
	uint64_t rx_malformed;     /**< not 256 bytes, bad base version */
	uint64_t rx_unknown_class; /**< another class: answered or dropped */
	uint64_t tx_unsupported;   /**< GetResp "unsupported class/version" sent */
	uint64_t tx_class_port_info; /**< CM ClassPortInfo answered */
	uint64_t tx_mads;          /**< MADs sent */
	uint64_t tx_errors;        /**< send completions in error, post failures */
	uint64_t tx_no_buf;        /**< sends refused: no free buffer */
};

void ibcm_gsi_stats_get(const struct ibcm_gsi *g, struct ibcm_gsi_stats *st);

#endif /* IBCM_GSI_H */
