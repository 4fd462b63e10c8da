/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef IBCM_PROTO_H
#define IBCM_PROTO_H

/**
 * @file
 * The IB Communication Manager protocol (IBA volume 1 chapter 12) as an
 * explicit state machine per connection: REQ, MRA, REJ, REP, RTU, DREQ,
 * DREP and, for UD, SIDR_REQ / SIDR_REP; the CM timers (retransmission from
 * the response timeouts of the messages, max retries, time-wait); duplicate
 * and stale messages answered from state.
 *
 * Pure: no threads, no clock, no I/O. The owner (ibcm_rdma.c, the unit
 * tests) feeds it received MADs and the time, calls it for what the
 * consumer wants, and gets MADs to send and events through its ops. Every
 * call takes @p now in nanoseconds of a monotonic clock (the tests' fake
 * clock). Not thread-safe: the owner serialises every call on one
 * ibcm_proto (ibcm_rdma.c holds its device's lock).
 *
 * Callbacks (ops) are made from inside the calls, with the protocol in a
 * consistent state: an event callback may call ibcm_send_*() and
 * ibcm_conn_destroy() for the event's own conn (e.g. reject a REQ whose
 * private data names no listener), nothing else of this ibcm_proto.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drnic_mad.h"
#include "drnic_verbs.h"

/** Where a MAD came from / goes to: the peer's GSI (QP 1) on RoCEv2. */
struct ibcm_peer {
	union drnic_gid gid;      /**< the peer port's GID (the GRH's SGID on receive) */
	union drnic_gid local_gid; /**< our GID the MAD came to (receive) / goes from */
	uint8_t mac[6];           /**< peer's MAC when known; all zero: resolve */
	uint32_t qpn;             /**< GSI: 1 */
	uint16_t pkey_index;      /**< 0 */
};

/** Connection states (IBA 12.9.6, plus the SIDR ones and IDLE / LISTEN). */
enum ibcm_state {
	IBCM_IDLE = 0,
	IBCM_LISTEN,
	IBCM_REQ_SENT,       /**< active: REQ out, waiting for REP / REJ / MRA */
	IBCM_REQ_RCVD,       /**< passive: REQ handed to the consumer */
	IBCM_MRA_REQ_SENT,   /**< passive: we MRA'd the REQ */
	IBCM_MRA_REQ_RCVD,   /**< active: peer MRA'd our REQ (longer timeout) */
	IBCM_REP_SENT,       /**< passive: REP out, waiting for RTU */
	IBCM_REP_RCVD,       /**< active: REP handed to the consumer (no RTU yet) */
	IBCM_MRA_REP_SENT,
	IBCM_MRA_REP_RCVD,
	IBCM_ESTABLISHED,
	IBCM_DREQ_SENT,
	IBCM_DREQ_RCVD,      /**< DREQ handed to the consumer, DREP not yet sent */
	IBCM_TIMEWAIT,
	IBCM_SIDR_REQ_SENT,
	IBCM_SIDR_REQ_RCVD,
	IBCM_STATE_COUNT,
};

/** Name of a state ("req_sent" ...); never NULL. */
const char *ibcm_state_str(enum ibcm_state s);

/** What the protocol tells its owner. */
enum ibcm_event_type {
	IBCM_EV_REQ_RCVD = 1,   /**< new conn on a listener: ev->req, ev->listen_user */
	IBCM_EV_REP_RCVD,       /**< ev->rep */
	IBCM_EV_RTU_RCVD,       /**< passive: established */
	IBCM_EV_REJ_RCVD,       /**< ev->rej (reason, ari, private data) */
	IBCM_EV_MRA_RCVD,       /**< informational: the peer needs more time */
	IBCM_EV_DREQ_RCVD,      /**< the DREP is sent by the protocol at once */
	IBCM_EV_DREP_RCVD,      /**< our DREQ answered: now in time-wait */
	IBCM_EV_TIMEOUT,        /**< REQ, REP, DREQ or SIDR_REQ retries exhausted */
	IBCM_EV_TIMEWAIT_EXIT,  /**< time-wait over; the conn is IDLE again */
	IBCM_EV_SIDR_REQ_RCVD,  /**< new conn on a listener: ev->sidr_req */
	IBCM_EV_SIDR_REP_RCVD,  /**< ev->sidr_rep */
};

struct ibcm_conn;
struct ibcm_proto;

/** An event: which conn, and the message that caused it (parsed). */
struct ibcm_event {
	enum ibcm_event_type type;
	struct ibcm_conn *conn;      /**< the conn it is about (new one for *_REQ_RCVD) */
	void *listen_user;           /**< *_REQ_RCVD: the listener's user pointer */
	struct ibcm_peer peer;       /**< the sender of the MAD */
	/** Which message timed out (IBCM_EV_TIMEOUT): DRNIC_MAD_CM_REQ ... */
	uint16_t timed_out;
	const struct drnic_mad_cm *mad; /**< the message received; NULL for timeouts */
};

/** What the owner provides. */
struct ibcm_proto_ops {
	/**
	 * Send @p mad (256 bytes) to @p dst. Return 0 or a negative errno;
	 * a failed send is retried by the timers as a lost one would be.
	 */
	int (*send)(void *ctx, const struct ibcm_peer *dst, const uint8_t *mad);
	/** Deliver an event. */
	void (*event)(void *ctx, const struct ibcm_event *ev);
};

/** Protocol settings (per device). */
struct ibcm_proto_cfg {
	uint64_t ca_guid;           /**< local CA GUID (REQ/REP local_ca_guid) */
	uint32_t comm_id_seed;      /**< first local communication ID (random) */
	uint64_t tid_seed;          /**< high 32 bits of our transaction IDs */
	/** CM response timeout we advertise (4.096 us * 2^x), 0..31. */
	uint8_t cm_response_timeout;
	uint8_t max_cm_retries;     /**< 0..15: resends of a REQ, REP, DREQ */
	/** Packet life time exponent used for time-wait and retransmits. */
	uint8_t packet_life_time;
};

/** Defaults: timeout 20 (~4.3 s, as Linux's rdma_cm), 15 retries, life 16. */
void ibcm_proto_cfg_default(struct ibcm_proto_cfg *cfg);

/** @return a protocol instance, or NULL (rte_errno/errno ENOMEM, EINVAL). */
struct ibcm_proto *ibcm_proto_create(const struct ibcm_proto_cfg *cfg,
				     const struct ibcm_proto_ops *ops, void *ctx);
/** Free it and every conn and listener (no MAD is sent). */
void ibcm_proto_destroy(struct ibcm_proto *p);

/**
 * A MAD of the CM class arrived from @p src. Parses and acts: new conns
 * on listeners, state transitions, duplicates re-answered from state, stale
 * or unknown ones answered with REJ as the IBA says, the rest dropped and
 * counted.
 * @return 0 when acted on; -EINVAL (not a CM MAD, bad length), -ENOENT (no
 *         conn for its comm ID), -EPROTO (not valid in the conn's state):
 *         dropped (counted in the stats).
 */
int ibcm_proto_rx(struct ibcm_proto *p, const uint8_t *mad, size_t len,
		  const struct ibcm_peer *src, uint64_t now);

/** Run the timers due at @p now (retransmits, timeouts, time-wait exits). */
void ibcm_proto_timer(struct ibcm_proto *p, uint64_t now);

/** @return when ibcm_proto_timer() must next run; UINT64_MAX: no timer. */
uint64_t ibcm_proto_next_timer(const struct ibcm_proto *p);

/* Listeners: by service ID (exact match). */

/**
 * Listen on @p service_id; REQs and SIDR_REQs to it make new conns,
 * reported with @p user as listen_user.
 * @return 0; -EADDRINUSE when someone listens there already; -ENOMEM.
 */
int ibcm_proto_listen(struct ibcm_proto *p, uint64_t service_id, void *user);
/** Stop listening. @return 0; -ENOENT. */
int ibcm_proto_unlisten(struct ibcm_proto *p, uint64_t service_id);

/* Connections. */

/** A new IDLE conn with @p user (ibcm_conn_user()). NULL: ENOMEM. */
struct ibcm_conn *ibcm_conn_create(struct ibcm_proto *p, void *user);
/**
 * The owner is done with @p conn. It leaves at once when IDLE or REQ_RCVD
 * (a REJ is sent for an unanswered REQ: consumer reject), else the protocol
 * finishes for it first (a REJ for REQ_SENT / REP_SENT, a DREQ for
 * ESTABLISHED, then time-wait), with no more events. Do not use @p conn
 * after this.
 */
void ibcm_conn_destroy(struct ibcm_conn *conn, uint64_t now);
void *ibcm_conn_user(const struct ibcm_conn *conn);
void ibcm_conn_set_user(struct ibcm_conn *conn, void *user);
enum ibcm_state ibcm_conn_state(const struct ibcm_conn *conn);
uint32_t ibcm_conn_local_id(const struct ibcm_conn *conn);
uint32_t ibcm_conn_remote_id(const struct ibcm_conn *conn);
/** The peer's GSI address (after a REQ or REP was exchanged). */
const struct ibcm_peer *ibcm_conn_peer(const struct ibcm_conn *conn);

/**
 * Active side: send @p req (its comm ID, and the TID, are filled in by the
 * protocol; the caller fills everything else: service ID, QPN, PSN,
 * paths, timeouts, private data) to @p dst. IDLE -> REQ_SENT.
 * @return 0; -EINVAL (not IDLE, a field out of range).
 */
int ibcm_send_req(struct ibcm_conn *conn, const struct ibcm_peer *dst,
		  const struct drnic_mad_cm_req *req, uint64_t now);
/** Passive: REQ_RCVD or MRA_REQ_SENT -> REP_SENT. Comm IDs filled in. */
int ibcm_send_rep(struct ibcm_conn *conn, const struct drnic_mad_cm_rep *rep, uint64_t now);
/** Active: REP_RCVD or MRA_REP_SENT -> ESTABLISHED. */
int ibcm_send_rtu(struct ibcm_conn *conn, const void *pdata, size_t len, uint64_t now);
/**
 * Reject: REQ_RCVD / MRA_REQ_SENT (msg REQ), REP_RCVD / MRA_REP_SENT (msg
 * REP), REQ_SENT / REP_SENT (abort). The conn goes IDLE (or time-wait after
 * a REP was exchanged).
 */
int ibcm_send_rej(struct ibcm_conn *conn, uint16_t reason, const void *ari, size_t ari_len,
		  const void *pdata, size_t len, uint64_t now);
/** MRA a received REQ or REP (service_timeout exponent). */
int ibcm_send_mra(struct ibcm_conn *conn, uint8_t service_timeout, const void *pdata,
		  size_t len, uint64_t now);
/** ESTABLISHED -> DREQ_SENT (a DREQ_RCVD conn sends a DREP instead). */
int ibcm_send_dreq(struct ibcm_conn *conn, const void *pdata, size_t len, uint64_t now);
/** DREQ_RCVD -> TIMEWAIT (the DREP). */
int ibcm_send_drep(struct ibcm_conn *conn, const void *pdata, size_t len, uint64_t now);
/**
 * A passive conn in REP_SENT / MRA_REP_RCVD saw traffic on its QP: the
 * IBA's implicit RTU. -> ESTABLISHED, no event. @return 0; -EINVAL.
 */
int ibcm_conn_established(struct ibcm_conn *conn, uint64_t now);

/** UD: IDLE -> SIDR_REQ_SENT (request_id filled in). */
int ibcm_send_sidr_req(struct ibcm_conn *conn, const struct ibcm_peer *dst,
		       const struct drnic_mad_cm_sidr_req *req, uint64_t now);
/** UD: SIDR_REQ_RCVD -> IDLE (request_id filled in). */
int ibcm_send_sidr_rep(struct ibcm_conn *conn, const struct drnic_mad_cm_sidr_rep *rep,
		       uint64_t now);

/** Counters of one protocol instance. */
struct ibcm_proto_stats {
	uint64_t rx[16];          /**< by attribute ID - 0x10 (REQ = 0 ... APR = 9) */
	uint64_t tx[16];
	uint64_t retransmits;     /**< timer resends */
	uint64_t dup_answered;    /**< duplicates answered from state */
	uint64_t dropped;         /**< malformed, unknown conn, wrong state */
	uint64_t rej_no_listener; /**< REJ invalid service ID / SIDR_REP status 1 sent */
	uint64_t rej_stale;       /**< REJ stale connection sent */
	uint64_t timeouts;        /**< retries exhausted */
};

void ibcm_proto_stats_get(const struct ibcm_proto *p, struct ibcm_proto_stats *st);

#endif /* IBCM_PROTO_H */
