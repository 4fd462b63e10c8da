/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_EVENT_H
#define DRNIC_EVENT_H

/**
 * @file
 * Asynchronous events: errors and state changes that are not completions
 * (a CQ overflowed, a QP hit a fatal error, a port went down, ...).
 *
 * Each device owns one async queue; more may be created (one per user of the
 * device, as each ibv_context has its own), given to the objects whose
 * events they should carry (drnic_cq_attr::async_queue,
 * drnic_qp_init_attr::async_queue) and subscribed to the device's own
 * events (drnic_device_async_subscribe()). Engines raise events into them
 * from any lcore (the queue is multi-producer and never blocks them); the
 * application
 * takes them with drnic_get_async_event() or, after epoll on
 * drnic_async_queue_fd(), with drnic_try_get_async_event(), and acknowledges
 * each with drnic_ack_async_event(). A full queue drops nothing silently: the
 * event is counted in events_lost (drnic_async_queue_query_stats()).
 *
 * Event type numbers are those of enum ibv_event_type.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Default number of events an async queue holds (size 0 at creation). */
#define DRNIC_ASYNC_QUEUE_DEFAULT_SIZE 256u
/** Largest async queue size accepted by drnic_async_queue_create(). */
#define DRNIC_ASYNC_QUEUE_MAX_SIZE (1u << 16)

/** Event types; the values of enum ibv_event_type. */
enum drnic_event_type {
	DRNIC_EVENT_CQ_ERR = 0,
	DRNIC_EVENT_QP_FATAL = 1,
	DRNIC_EVENT_QP_REQ_ERR = 2,
	DRNIC_EVENT_QP_ACCESS_ERR = 3,
	DRNIC_EVENT_COMM_EST = 4,
	DRNIC_EVENT_SQ_DRAINED = 5,
	DRNIC_EVENT_PATH_MIG = 6,
	DRNIC_EVENT_PATH_MIG_ERR = 7,
	DRNIC_EVENT_DEVICE_FATAL = 8,
	DRNIC_EVENT_PORT_ACTIVE = 9,
	DRNIC_EVENT_PORT_ERR = 10,
	DRNIC_EVENT_LID_CHANGE = 11,
	DRNIC_EVENT_PKEY_CHANGE = 12,
	DRNIC_EVENT_SM_CHANGE = 13,
	DRNIC_EVENT_SRQ_ERR = 14,
	DRNIC_EVENT_SRQ_LIMIT_REACHED = 15,
	DRNIC_EVENT_QP_LAST_WQE_REACHED = 16,
	DRNIC_EVENT_CLIENT_REREGISTER = 17,
	DRNIC_EVENT_GID_CHANGE = 18,
	DRNIC_EVENT_WQ_FATAL = 19,
};

struct drnic_cq;
struct drnic_async_queue;

/** One asynchronous event. */
struct drnic_async_event {
	enum drnic_event_type event_type;
	/** The object the event is about; which member depends on event_type. */
	union {
		struct drnic_cq *cq;  /**< CQ_ERR */
		void *qp;             /**< QP_* , COMM_EST, SQ_DRAINED, PATH_MIG* */
		void *srq;            /**< SRQ_* */
		void *wq;             /**< WQ_FATAL */
		uint32_t port_num;    /**< PORT_*, LID/PKEY/SM/GID_CHANGE, CLIENT_REREGISTER */
	} element;
	/** QP number for QP events (0 otherwise). */
	uint32_t qp_num;
};

/** Counters of an async queue. */
struct drnic_async_stats {
	uint64_t raised;       /**< events queued */
	uint64_t delivered;    /**< events returned to the application */
	uint64_t acked;        /**< events acknowledged */
	uint64_t events_lost;  /**< events not queued because the queue was full */
	/** unread events dropped because their object was destroyed */
	uint64_t events_purged;
};

/**
 * Describe an event type, with the strings of ibv_event_type_str().
 *
 * @return a static string; "unknown" for values outside the enum. Never NULL.
 */
const char *drnic_event_type_str(enum drnic_event_type type);

/**
 * Is an event of this type about a QP (element.qp, qp_num set)? QP_FATAL,
 * QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR,
 * QP_LAST_WQE_REACHED.
 *
 * @return true for those, false for every other value.
 */
static inline bool
drnic_event_type_is_qp(enum drnic_event_type type)
{
	switch (type) {
	case DRNIC_EVENT_QP_FATAL:
	case DRNIC_EVENT_QP_REQ_ERR:
	case DRNIC_EVENT_QP_ACCESS_ERR:
	case DRNIC_EVENT_COMM_EST:
	case DRNIC_EVENT_SQ_DRAINED:
	case DRNIC_EVENT_PATH_MIG:
	case DRNIC_EVENT_PATH_MIG_ERR:
	case DRNIC_EVENT_QP_LAST_WQE_REACHED:
		return true;
	default:
		return false;
	}
}

/**
 * Create an async event queue.
 *
 * @param size  events it can hold; 0 for DRNIC_ASYNC_QUEUE_DEFAULT_SIZE; rounded
 *              up to a power of two, at least 2.
 * @return the queue, or NULL with rte_errno set to ERANGE (size above
 *         DRNIC_ASYNC_QUEUE_MAX_SIZE), ENOMEM, or the errno of eventfd().
 */
struct drnic_async_queue *drnic_async_queue_create(uint32_t size);

/**
 * Destroy an async queue; events still in it are discarded.
 *
 * @return 0; -EINVAL when @p q is NULL or not a live queue (destroyed
 *         already: nothing behind it is read); -EBUSY while an object (CQ,
 *         QP, ...) created with this queue still exists.
 */
int drnic_async_queue_destroy(struct drnic_async_queue *q);

/**
 * The queue's file descriptor: a non-blocking eventfd, readable while events
 * wait. Use with poll()/epoll; do not read it yourself.
 *
 * @return the fd (>= 0), or -EINVAL when @p q is NULL.
 */
int drnic_async_queue_fd(const struct drnic_async_queue *q);

/**
 * Take the oldest event, waiting (in poll()) until there is one.
 *
 * @return 0 with @p ev filled; -EINVAL when @p q or @p ev is NULL;
 *         -EINTR when a signal interrupted the wait.
 */
int drnic_get_async_event(struct drnic_async_queue *q, struct drnic_async_event *ev);

/**
 * Take the oldest event without waiting.
 *
 * @return 0 with @p ev filled; -EINVAL when @p q or @p ev is NULL;
 *         -EAGAIN when the queue is empty.
 */
int drnic_try_get_async_event(struct drnic_async_queue *q, struct drnic_async_event *ev);

/**
 * Acknowledge an event taken from @p q. An object cannot be destroyed while
 * an event about it was taken and is not acknowledged (drnic_cq_destroy()
 * and drnic_destroy_qp() return -EBUSY then), as in libibverbs; events about
 * it that were never taken are dropped when it is destroyed (counted in
 * events_purged). Does nothing when @p q or @p ev is NULL.
 */
void drnic_ack_async_event(struct drnic_async_queue *q, const struct drnic_async_event *ev);

/**
 * Read the queue's counters (a snapshot; any thread).
 *
 * @return 0; -EINVAL when @p q or @p stats is NULL.
 */
int drnic_async_queue_query_stats(const struct drnic_async_queue *q,
		struct drnic_async_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
