/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_IBCM_H
#define DRNIC_IBCM_H

/**
 * @file
 * drnic's connection manager: the RDMA CM (as librdmacm's rdma_cm(7)) over
 * the IB CM on QP 1. Not to be confused with drnic_cm.h, the TCP exchange
 * of perftest and ibv_rc_pingpong.
 *
 * A program registers its open devices (drnic_ibcm_add_device()): each gets
 * a GSI agent on QP 1 and an agent thread that receives MADs, runs the CM
 * timers and queues events. It then works as with rdma_cm: an event
 * channel (an fd for poll/epoll), ids in a port space, bind / resolve /
 * listen / connect / accept / reject / disconnect, events with their
 * private data. A device is chosen by the local address it owns (its
 * IPv4 or IPv6 GIDs).
 *
 * The QP: as librdmacm, a program either attaches its QP to the id
 * (drnic_ibcm_attach_qp(): the CM moves it INIT -> RTR -> RTS itself and
 * reports ESTABLISHED) or moves it with drnic_ibcm_init_qp_attr() and
 * drnic_modify_qp() (then the active side gets CONNECT_RESPONSE and calls
 * drnic_ibcm_establish(), as rdma_establish(3)).
 *
 * Return values: 0 or a negative errno; constructors NULL with rte_errno.
 * Every call is thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "drnic_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Port spaces (enum rdma_port_space). */
enum drnic_ibcm_ps {
	DRNIC_IBCM_PS_IPOIB = 0x0002,
	DRNIC_IBCM_PS_TCP   = 0x0106,
	DRNIC_IBCM_PS_UDP   = 0x0111,
	DRNIC_IBCM_PS_IB    = 0x013F,
};

/** Events; the values are enum rdma_cm_event_type's. */
enum drnic_ibcm_event_type {
	DRNIC_IBCM_EVENT_ADDR_RESOLVED,
	DRNIC_IBCM_EVENT_ADDR_ERROR,
	DRNIC_IBCM_EVENT_ROUTE_RESOLVED,
	DRNIC_IBCM_EVENT_ROUTE_ERROR,
	DRNIC_IBCM_EVENT_CONNECT_REQUEST,
	DRNIC_IBCM_EVENT_CONNECT_RESPONSE,
	DRNIC_IBCM_EVENT_CONNECT_ERROR,
	DRNIC_IBCM_EVENT_UNREACHABLE,
	DRNIC_IBCM_EVENT_REJECTED,
	DRNIC_IBCM_EVENT_ESTABLISHED,
	DRNIC_IBCM_EVENT_DISCONNECTED,
	DRNIC_IBCM_EVENT_DEVICE_REMOVAL,
	DRNIC_IBCM_EVENT_MULTICAST_JOIN,
	DRNIC_IBCM_EVENT_MULTICAST_ERROR,
	DRNIC_IBCM_EVENT_ADDR_CHANGE,
	DRNIC_IBCM_EVENT_TIMEWAIT_EXIT,
};

/** Name of an event ("RDMA_CM_EVENT_ESTABLISHED" ...); never NULL. */
const char *drnic_ibcm_event_str(enum drnic_ibcm_event_type t);

#define DRNIC_IBCM_PDATA_MAX 256  /**< room for any message's private data */
#define DRNIC_IBCM_UDP_QKEY  0x01234567u  /**< RDMA_UDP_QKEY */

/** Connection parameters (struct rdma_conn_param). */
struct drnic_ibcm_conn_param {
	const void *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;       /**< ignored on accept */
	uint8_t rnr_retry_count;
	uint8_t srq;               /**< ignored when a QP is attached */
	uint32_t qp_num;           /**< ignored when a QP is attached */
};

/** UD parameters of an event (struct rdma_ud_param). */
struct drnic_ibcm_ud_param {
	const void *private_data;
	uint8_t private_data_len;
	struct drnic_ah_attr ah_attr;
	uint32_t qp_num;
	uint32_t qkey;
};

struct drnic_ibcm_channel;
struct drnic_ibcm_id;

/**
 * An event, copied out to the caller (no ack needed). param's
 * private_data points into @p pdata of the same struct.
 */
struct drnic_ibcm_event {
	enum drnic_ibcm_event_type event;
	struct drnic_ibcm_id *id;        /**< new id for CONNECT_REQUEST */
	struct drnic_ibcm_id *listen_id; /**< CONNECT_REQUEST: the listener */
	/**
	 * 0, or: REJECTED the IBA reject reason (e.g. 8 no listener, 28
	 * consumer reject); UNREACHABLE / ADDR_ERROR / ROUTE_ERROR /
	 * CONNECT_ERROR a negative errno (-ETIMEDOUT, -EHOSTUNREACH ...).
	 */
	int status;
	union {
		struct drnic_ibcm_conn_param conn;
		struct drnic_ibcm_ud_param ud;
	} param;
	uint8_t pdata[DRNIC_IBCM_PDATA_MAX];
};

/* ---- devices ----------------------------------------------------------- */

/**
 * Make @p dev's addresses reachable through the CM: opens its GSI agent on
 * QP 1 and starts its agent thread. Idempotent per device.
 * @return 0; -EINVAL; -EBUSY (QP 1 taken by someone else); -ENOMEM.
 */
int drnic_ibcm_add_device(struct drnic_device *dev);

/**
 * Remove @p dev: ids on it get DEVICE_REMOVAL, the agent stops. Call
 * before drnic_device_close().
 * @return 0; -ENOENT (not added).
 */
int drnic_ibcm_remove_device(struct drnic_device *dev);

/* ---- event channels ------------------------------------------------------ */

/** @return a channel, or NULL with rte_errno ENOMEM / EMFILE. */
struct drnic_ibcm_channel *drnic_ibcm_create_channel(void);
/** Destroyed channels whose memory and fd are kept (drnic_ibcm_destroy_channel). */
#define DRNIC_IBCM_CHANNELS_KEPT 16

/**
 * Destroy @p ch. A thread waiting in drnic_ibcm_get_event() on it stays
 * blocked, as a reader of a kernel rdma_cm channel whose fd another thread
 * closed does. Its memory and fd are kept until DRNIC_IBCM_CHANNELS_KEPT
 * more are destroyed, so a get_event that comes after the destroy (an
 * event thread never joined, as rping's) waits in the same way rather than
 * read freed memory (a timeout is waited out: -EAGAIN).
 * @return 0; -EBUSY while ids use it.
 */
int drnic_ibcm_destroy_channel(struct drnic_ibcm_channel *ch);
/**
 * Call @p fn(@p arg) when @p ch's memory is given back, some time after
 * its destroy: a wrapper of the channel (the drop-in librdmacm's) then
 * lives as long as it. Set it before @p ch is shared.
 */
void drnic_ibcm_channel_on_release(struct drnic_ibcm_channel *ch, void (*fn)(void *), void *arg);
/**
 * The channel's fd: readable while events are queued (poll/epoll). The
 * caller may set O_NONBLOCK on it; it must not read or close it.
 */
int drnic_ibcm_channel_fd(const struct drnic_ibcm_channel *ch);

/**
 * Take the oldest event of @p ch into @p ev.
 * @param timeout_ms  -1: wait; 0: do not wait; else wait that long.
 * @return 0; -EAGAIN (none, or the timeout passed); -EINVAL.
 */
int drnic_ibcm_get_event(struct drnic_ibcm_channel *ch, struct drnic_ibcm_event *ev,
			 int timeout_ms);

/* ---- ids ----------------------------------------------------------------- */

/**
 * A new id reporting to @p ch, in port space @p ps (TCP and IB: RC; UDP and
 * IPOIB: UD). @p qp_type: DRNIC_QPT_RC, _UC or _UD (the port space's
 * default when 0 is not meaningful: pass the type).
 * @return the id, or NULL with rte_errno EINVAL / ENOMEM.
 */
struct drnic_ibcm_id *drnic_ibcm_create_id(struct drnic_ibcm_channel *ch, void *context,
					   enum drnic_ibcm_ps ps, enum drnic_qp_type qp_type);

/**
 * Destroy @p id: a connection still up is disconnected (DREQ), a request
 * unanswered is rejected, its queued events are dropped. Its QP is not
 * destroyed (the caller owns it).
 */
int drnic_ibcm_destroy_id(struct drnic_ibcm_id *id);

void *drnic_ibcm_id_context(const struct drnic_ibcm_id *id);
void drnic_ibcm_id_set_context(struct drnic_ibcm_id *id, void *context);
/** The device the id is bound to, NULL before bind / resolve. */
struct drnic_device *drnic_ibcm_id_device(const struct drnic_ibcm_id *id);
enum drnic_ibcm_ps drnic_ibcm_id_ps(const struct drnic_ibcm_id *id);
enum drnic_qp_type drnic_ibcm_id_qp_type(const struct drnic_ibcm_id *id);
/** Copy the local / peer address (sockaddr_in or sockaddr_in6, port set). */
int drnic_ibcm_id_src_addr(const struct drnic_ibcm_id *id, struct sockaddr_storage *ss);
int drnic_ibcm_id_dst_addr(const struct drnic_ibcm_id *id, struct sockaddr_storage *ss);

/** The route of a resolved / connected id (struct rdma_route's content). */
struct drnic_ibcm_route {
	union drnic_gid sgid;
	union drnic_gid dgid;
	uint8_t sgid_index;
	uint8_t dmac[6];
	enum drnic_mtu mtu;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t packet_life_time;
	uint16_t pkey;
	int num_paths;             /**< 0 before route resolution, then 1 */
};
int drnic_ibcm_id_route(const struct drnic_ibcm_id *id, struct drnic_ibcm_route *route);

/**
 * Move @p id (and its future events) to channel @p ch (rdma_migrate_id).
 * @return 0; -EINVAL.
 */
int drnic_ibcm_migrate_id(struct drnic_ibcm_id *id, struct drnic_ibcm_channel *ch);

/* ---- addresses and routes ----------------------------------------------- */

/**
 * Bind to a local address (port 0: pick a free one; the wildcard address:
 * every device). @return 0; -EADDRNOTAVAIL (no device owns it);
 * -EADDRINUSE (port taken in that port space, without REUSEADDR); -EINVAL.
 */
int drnic_ibcm_bind_addr(struct drnic_ibcm_id *id, const struct sockaddr *addr);

/**
 * Resolve @p dst (and bind to @p src, or to the device whose subnet holds
 * @p dst when NULL): ADDR_RESOLVED once the peer's MAC is known (ARP /
 * neighbour discovery), ADDR_ERROR (-EHOSTUNREACH, -ETIMEDOUT) when not
 * within @p timeout_ms.
 */
int drnic_ibcm_resolve_addr(struct drnic_ibcm_id *id, const struct sockaddr *src,
			    const struct sockaddr *dst, int timeout_ms);

/** Fill the route (MTU, hop limit, traffic class): ROUTE_RESOLVED. */
int drnic_ibcm_resolve_route(struct drnic_ibcm_id *id, int timeout_ms);

/* ---- connections --------------------------------------------------------- */

/**
 * Let the CM drive @p qp through INIT -> RTR -> RTS for this id (moves it
 * to INIT now). @return 0; -EINVAL (not RESET, wrong type, another device).
 */
int drnic_ibcm_attach_qp(struct drnic_ibcm_id *id, struct drnic_qp *qp);

/** @return 0; -EINVAL (not bound), -EADDRINUSE. */
int drnic_ibcm_listen(struct drnic_ibcm_id *id, int backlog);

/**
 * Active side: REQ (connected port spaces) or SIDR_REQ (UD), with the RDMA
 * CM IP header in front of @p param's private data (at most 56 bytes
 * after it for a REQ, 180 for a SIDR_REQ: -EINVAL above).
 */
int drnic_ibcm_connect(struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param);

/** Passive side: REP (or SIDR_REP with the QPN and Q_Key). */
int drnic_ibcm_accept(struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param);

/** Reject a CONNECT_REQUEST: REJ reason 28 (consumer) with @p pdata. */
int drnic_ibcm_reject(struct drnic_ibcm_id *id, const void *pdata, uint8_t len);

/** Active side without an attached QP: send the RTU (rdma_establish). */
int drnic_ibcm_establish(struct drnic_ibcm_id *id);

/** DREQ (or DREP to a received DREQ); the QP goes to ERROR when attached. */
int drnic_ibcm_disconnect(struct drnic_ibcm_id *id);

/**
 * Attributes to move a QP of this id to @p attr->qp_state (INIT, RTR,
 * RTS), as rdma_init_qp_attr(3): fills @p attr and @p mask (DRNIC_QP_*
 * attribute mask bits).
 */
int drnic_ibcm_init_qp_attr(struct drnic_ibcm_id *id, struct drnic_qp_attr *attr, int *mask);

/** Options (rdma_set_option): */
enum drnic_ibcm_option {
	DRNIC_IBCM_OPT_TOS,          /**< uint8_t: traffic class of the path */
	DRNIC_IBCM_OPT_REUSEADDR,    /**< int */
	DRNIC_IBCM_OPT_ACK_TIMEOUT,  /**< uint8_t: local ACK timeout exponent */
	DRNIC_IBCM_OPT_AFONLY,       /**< int */
};
int drnic_ibcm_set_option(struct drnic_ibcm_id *id, enum drnic_ibcm_option opt,
			  const void *val, size_t len);

/**
 * Join the multicast group @p addr on a UD id (MULTICAST_JOIN with the
 * group's AH, QPN 0xFFFFFF and the Q_Key; the attached QP is attached to
 * the group).
 */
int drnic_ibcm_join_multicast(struct drnic_ibcm_id *id, const struct sockaddr *addr,
			      void *context);
int drnic_ibcm_leave_multicast(struct drnic_ibcm_id *id, const struct sockaddr *addr);

/** Counters of a device's CM (MADs by type, retransmits, drops). */
struct drnic_ibcm_stats {
	uint64_t rx_mads, tx_mads;
	uint64_t rx_by_attr[16], tx_by_attr[16]; /**< attribute ID - 0x10 */
	uint64_t retransmits, dup_answered, dropped, timeouts;
	uint64_t rej_no_listener, rej_stale;
	uint64_t rx_unknown_class, rx_malformed;
};
int drnic_ibcm_stats_get(struct drnic_device *dev, struct drnic_ibcm_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_IBCM_H */
