/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_ENGINE_H
#define DRNIC_ENGINE_H

/**
 * @file
 * Transport engines: counters and the clock hook.
 *
 * A device's QPs run on its engines (drnic_config::nb_engines): EAL lcores in
 * dedicated mode, or the application's own thread in inline mode. Engines are
 * started by drnic_device_open(); this header only reads their counters.
 */

#include <stdint.h>
#include <stdio.h>

#include "drnic_verbs.h"
#include "drnic_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Why an engine dropped a received packet that lib/wire accepted. */
enum drnic_engine_drop {
	DRNIC_ENGINE_DROP_NO_QP = 0,      /**< no QP with that number */
	DRNIC_ENGINE_DROP_QP_STATE,       /**< QP not in a state that takes it */
	DRNIC_ENGINE_DROP_WRONG_ENGINE,   /**< steered to another engine's queue */
	DRNIC_ENGINE_DROP_PSN_DUP,        /**< duplicate request (re-acknowledged) */
	DRNIC_ENGINE_DROP_PSN_OOS,        /**< request past the expected PSN (NAKed) */
	DRNIC_ENGINE_DROP_GHOST_RESP,     /**< response for a PSN never sent (or nothing outstanding) */
	DRNIC_ENGINE_DROP_BAD_RESP,       /**< response that matches no WQE */
	DRNIC_ENGINE_DROP_RNR,            /**< SEND without a receive WQE (RNR NAK) */
	/** An opcode the QP's transport does not take: not RC, UC or UD, or
	 * one service's to another's QP (counted by the engine only). */
	DRNIC_ENGINE_DROP_NOT_REQUEST,
	DRNIC_ENGINE_DROP_STALE_NAK,      /**< PSN-sequence NAK already answered by a go-back */
	/** Source or destination IP, or the IP version, is not the QP's
	 * address vector's (a stranger, or not addressed to this QP). */
	DRNIC_ENGINE_DROP_BAD_ADDR,
	DRNIC_ENGINE_DROP_BAD_DMAC,       /**< destination MAC is not the port's */
	DRNIC_ENGINE_DROP_BAD_PKEY,       /**< P_Key does not match the QP's entry of the port's table */
	DRNIC_ENGINE_DROP_BAD_VLAN,       /**< VLAN tag on a port without that VLAN */
	/** Response for a PSN already acknowledged (a duplicate): nothing to do. */
	DRNIC_ENGINE_DROP_DUP_RESP,
	/** UC: a packet of a message being dropped whole (a PSN gap, no
	 * receive WQE, a request the QP refuses); UC never NAKs. */
	DRNIC_ENGINE_DROP_UC_MSG,
	/** UD: the datagram's Q_Key is not the QP's (also in the port's
	 * qkey_viol_cntr). */
	DRNIC_ENGINE_DROP_BAD_QKEY,
	/** UD: no receive WQE posted: the datagram is lost (never retried). */
	DRNIC_ENGINE_DROP_UD_NO_WQE,
	/** UD: a payload longer than the port's MTU (no UD datagram is). */
	DRNIC_ENGINE_DROP_UD_LEN,
	/** UD: to a multicast group no QP of this engine is attached to. */
	DRNIC_ENGINE_DROP_NO_MCAST,
	DRNIC_ENGINE_DROP_MAX,
};

/** Counters of one engine. */
struct drnic_engine_stats {
	uint64_t loops;            /**< steps run */
	uint64_t busy_loops;       /**< steps that did work */
	uint64_t rx_packets;       /**< frames received from links */
	uint64_t tx_packets;       /**< frames handed to links */
	uint64_t doorbells;        /**< QPs taken from the doorbell ring */
	uint64_t wqes;             /**< send WQEs started */
	uint64_t cqes;             /**< completions produced */
	uint64_t nomem;            /**< mbuf allocation failures (retried) */
	/** QP deadlines (retransmit timeout, end of an RNR wait) that woke a
	 * QP sleeping in the engine's timer wheel, off the active list. */
	uint64_t timers;
	uint64_t busy_cycles;      /**< TSC cycles in steps that did work */
	uint64_t idle_cycles;      /**< TSC cycles otherwise (idle steps, back-off, preempted) */
	uint64_t wire_drops[DRNIC_WIRE_DROP_MAX];     /**< by enum drnic_wire_drop */
	uint64_t drops[DRNIC_ENGINE_DROP_MAX];        /**< by enum drnic_engine_drop */
	uint64_t replays;          /**< duplicate READ/atomic requests answered again */
	uint64_t replays_limited;  /**< duplicates not answered: the QP's replay credit was spent */
	uint64_t naks_limited;     /**< repeated NAKs not sent (rate limit) */
};

/** Counters of one QP (kept by its engine). */
struct drnic_qp_stats {
	uint64_t tx_packets;       /**< request and response frames sent */
	uint64_t rx_packets;       /**< frames received for the QP */
	uint64_t wqes;             /**< send WQEs started (again after going back) */
	uint64_t acks_rx;          /**< ACKs received */
	uint64_t naks_rx;          /**< NAKs received (all kinds) */
	uint64_t rnr_naks_rx;      /**< RNR NAKs received */
	uint64_t naks_tx;          /**< NAKs (and RNR NAKs) sent */
	uint64_t retransmits;      /**< times the requester went back */
	uint64_t timeouts;         /**< retransmit timer expiries */
	uint64_t early_retransmits; /**< go-backs after a few silent round trips (no retry used) */
	uint64_t drops[DRNIC_ENGINE_DROP_MAX];        /**< by enum drnic_engine_drop */
	uint64_t replays;          /**< duplicate READ/atomic requests answered again */
	uint64_t replays_limited;  /**< duplicates not answered: replay credit spent */
	uint64_t naks_limited;     /**< repeated NAKs not sent (rate limit) */
	/* The live transport state, a snapshot: */
	uint32_t next_psn;         /**< requester: next PSN to send */
	uint32_t expected_psn;     /**< responder: next PSN expected */
	uint32_t acked_psn;        /**< requester: highest PSN acknowledged */
	uint32_t cwnd;             /**< requester: congestion window, in packets */
	uint64_t srtt_ns;          /**< requester: smoothed round trip (0: none measured) */
};

/**
 * Read a QP's counters (a snapshot, from any thread).
 *
 * @return 0; -EINVAL when an argument is NULL.
 */
int drnic_qp_stats_get(const struct drnic_qp *qp, struct drnic_qp_stats *stats);

/**
 * Counter name of an engine drop reason, e.g. "psn_dup".
 * @return a static string; "invalid" for a value out of range; never NULL.
 */
const char *drnic_engine_drop_name(enum drnic_engine_drop reason);

/**
 * Read the counters of the @p index -th engine of a device (a snapshot; an
 * engine shared by several devices reports its totals).
 *
 * @return 0; -EINVAL when an argument is NULL or @p index is not below the
 *         device's engine count.
 */
int drnic_engine_stats_get(struct drnic_device *dev, unsigned int index,
			   struct drnic_engine_stats *stats);

/**
 * Print one line of a device's counters to @p f, for diagnosis: each
 * engine's loops, packets, doorbells, WQEs, CQEs and the drop reasons that
 * are not zero, then the link's packets, busy bursts and drops. Each line
 * starts with @p prefix (may be NULL).
 */
void drnic_device_stats_print(struct drnic_device *dev, const char *prefix, FILE *f);

/**
 * Print one line of a QP's counters (drnic_qp_stats_get()) to @p f, for
 * diagnosis: frames, WQEs, ACKs, NAKs, retransmits, timeouts, RNR NAKs,
 * congestion window and smoothed round trip. Starts with @p prefix (may be
 * NULL).
 */
void drnic_qp_stats_print(const struct drnic_qp *qp, const char *prefix, FILE *f);

/**
 * Print a QP's transport state (requester, completer, responder: states,
 * PSNs, indices, timers) to @p f, for diagnosis. Read without the engine's
 * cooperation: a snapshot that may be torn while the QP is busy.
 */
void drnic_qp_dump(const struct drnic_qp *qp, FILE *f);

/**
 * Count the mbufs of the engines' frame pool (one pool per process, made by
 * the first drnic_device_open() and kept until exit). Once every device is
 * closed, @p avail equals @p size: anything else is a leak.
 *
 * @param avail  receives the mbufs in the pool (including per-lcore caches).
 * @param size   receives the pool's size.
 * @return 0; -EINVAL when an argument is NULL; -ENOENT when no device was
 *         ever opened (no pool).
 */
int drnic_engine_mbuf_count(unsigned int *avail, unsigned int *size);

/**
 * How long the process's inline engines may go without a run, for a thread
 * that runs them (inline progress) and wants to sleep until a frame comes
 * (drnic_link_rx_wait_fd()) or something is due. Ask after a run that found
 * no work.
 *
 * @param wait_ns  receives 0 when a run is due now (active QPs, control
 *                 messages; an engine another thread is running is left to
 *                 it); else the nanoseconds until the earliest of: held
 *                 ACKs leaving, a QP timer within the next millisecond;
 *                 UINT64_MAX when nothing is due that soon (sleep on the
 *                 wake-up with a timeout of your choice, a millisecond or
 *                 so, for later timers).
 * @return 0; -EINVAL when @p wait_ns is NULL.
 */
int drnic_engine_idle_ns(uint64_t *wait_ns);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_ENGINE_H */
