/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Async event queue: a bounded multi-producer queue (engines on any lcore
 * raise events) with one consumer at a time (the application, serialised by
 * a mutex), plus an eventfd for poll/epoll.
 *
 * Each cell carries a sequence number. A producer owns cell (pos & mask) when
 * its seq == pos: it claims pos by CAS on `tail`, writes the event, then stores
 * seq = pos + 1 (release). The consumer at `head` takes the cell when it reads
 * seq == head + 1 (acquire) and hands it back for the next lap with
 * seq = head + size (release). A producer that finds seq < pos sees a full
 * queue: it counts the event in events_lost and returns; it never waits.
 *
 * Destroying an object drops its unread events (async_purge()): under the
 * consumer mutex, published cells about it are marked dead, and the
 * consumer hands dead cells back without delivering them. The object has no
 * producer left by then (its engine is fenced), so nothing about it is
 * being written.
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "cq_engine.h"
#include "cq_private.h"
#include "handle.h"
#include "rpc.h"

RTE_LOG_REGISTER(async_logtype, drnic.async, NOTICE);
#define ASYNC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, async_logtype, "async: " fmt "\n", ##__VA_ARGS__)

#define ASYNC_USERS_DEAD (UINT32_C(1) << 31)

struct async_cell {
	_Atomic uint64_t seq;
	bool dead;                 /* purged: skip it (consumers, under lock) */
	struct drnic_async_event ev;
};

struct drnic_async_queue {
	uint64_t mask;
	uint32_t size;
	int fd;
	_Atomic uint32_t users;
	_Atomic uint64_t lost;
	_Atomic uint64_t raised;
	_Atomic uint64_t acked;

	alignas(RTE_CACHE_LINE_SIZE) _Atomic uint64_t tail;  /* producers */

	alignas(RTE_CACHE_LINE_SIZE) pthread_mutex_t lock;   /* the consumer */
	uint64_t head;
	_Atomic uint64_t delivered;
	_Atomic uint64_t purged;

	alignas(RTE_CACHE_LINE_SIZE) struct async_cell cells[];
};

static const char *const async_type_names[] = {
	[DRNIC_EVENT_CQ_ERR] = "CQ error",
	[DRNIC_EVENT_QP_FATAL] = "local work queue catastrophic error",
	[DRNIC_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
	[DRNIC_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
	[DRNIC_EVENT_COMM_EST] = "communication established",
	[DRNIC_EVENT_SQ_DRAINED] = "send queue drained",
	[DRNIC_EVENT_PATH_MIG] = "path migrated",
	[DRNIC_EVENT_PATH_MIG_ERR] = "path migration request error",
	[DRNIC_EVENT_DEVICE_FATAL] = "local catastrophic error",
	[DRNIC_EVENT_PORT_ACTIVE] = "port active",
	[DRNIC_EVENT_PORT_ERR] = "port error",
	[DRNIC_EVENT_LID_CHANGE] = "LID change",
	[DRNIC_EVENT_PKEY_CHANGE] = "P_Key change",
	[DRNIC_EVENT_SM_CHANGE] = "SM change",
	[DRNIC_EVENT_SRQ_ERR] = "SRQ catastrophic error",
	[DRNIC_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
	[DRNIC_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
	[DRNIC_EVENT_CLIENT_REREGISTER] = "client reregistration",
	[DRNIC_EVENT_GID_CHANGE] = "GID table change",
	[DRNIC_EVENT_WQ_FATAL] = "WQ fatal",
};

/* The device layer's hooks for events about its objects (QPs, SRQs). */
static _Atomic(const struct async_hooks *) async_hooks;

void
async_set_hooks(const struct async_hooks *hooks)
{
	atomic_store_explicit(&async_hooks, hooks, memory_order_release);
}

/* The object an event is about; NULL for device and port events. */
static const void *
async_event_object(const struct drnic_async_event *ev)
{
	if (drnic_event_type_is_qp(ev->event_type))
		return ev->element.qp;
	switch (ev->event_type) {
	case DRNIC_EVENT_CQ_ERR:
		return ev->element.cq;
	case DRNIC_EVENT_SRQ_ERR:
	case DRNIC_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case DRNIC_EVENT_WQ_FATAL:
		return ev->element.wq;
	default:
		return NULL;
	}
}

const char *
drnic_event_type_str(enum drnic_event_type type)
{
	unsigned int i = (unsigned int)type;

	if (i >= RTE_DIM(async_type_names) || async_type_names[i] == NULL)
		return "unknown";
	return async_type_names[i];
}

struct drnic_async_queue *
drnic_async_queue_create(uint32_t size)
{
	struct drnic_async_queue *q;
	uint32_t i;
	int err;

	if (rpc_attached())
		return cq_remote_create(RPC_ASYNC_CREATE, RPC_ASYNC_DESTROY, size,
					HANDLE_ASYNC_QUEUE);
	if (size == 0)
		size = DRNIC_ASYNC_QUEUE_DEFAULT_SIZE;
	if (size > DRNIC_ASYNC_QUEUE_MAX_SIZE) {
		rte_errno = ERANGE;
		return NULL;
	}
	/* A cell's "published" seq (pos + 1) must differ from its next-lap
	 * "free" seq (pos + size): at least two cells. */
	size = RTE_MAX(rte_align32pow2(size), 2u);
	q = rte_zmalloc_socket("drnic_async_queue",
			sizeof(*q) + size * sizeof(struct async_cell),
			RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (q == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	q->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->fd < 0) {
		err = errno;
		rte_free(q);
		rte_errno = err;
		return NULL;
	}
	err = pthread_mutex_init(&q->lock, NULL);
	if (err == 0 && handle_add(q, HANDLE_ASYNC_QUEUE) < 0) {
		pthread_mutex_destroy(&q->lock);
		err = ENOMEM;
	}
	if (err != 0) {
		close(q->fd);
		rte_free(q);
		rte_errno = err;
		return NULL;
	}
	q->size = size;
	q->mask = size - 1;
	for (i = 0; i < size; i++)
		atomic_init(&q->cells[i].seq, i);
	return q;
}

int
drnic_async_queue_destroy(struct drnic_async_queue *q)
{
	uint32_t zero = 0;

	if (rpc_attached())
		return cq_remote_destroy(q, RPC_ASYNC_DESTROY, HANDLE_ASYNC_QUEUE);
	/* Not live (NULL, destroyed already): nothing behind it is read. */
	if (handle_take(q, HANDLE_ASYNC_QUEUE) < 0)
		return -EINVAL;
	if (!atomic_compare_exchange_strong_explicit(&q->users, &zero, ASYNC_USERS_DEAD,
			memory_order_acq_rel, memory_order_relaxed)) {
		(void)handle_add(q, HANDLE_ASYNC_QUEUE);  /* cannot fail: its slot is free */
		return -EBUSY;
	}
	pthread_mutex_destroy(&q->lock);
	close(q->fd);
	rte_free(q);
	return 0;
}

int
drnic_async_queue_fd(const struct drnic_async_queue *q)
{
	return q == NULL ? -EINVAL : cq_remote_fd(q, q->fd);
}

int
async_get(struct drnic_async_queue *q)
{
	uint32_t u;

	if (q == NULL)
		return -EINVAL;
	u = atomic_load_explicit(&q->users, memory_order_relaxed);
	do {
		if (u & ASYNC_USERS_DEAD)
			return -EINVAL;
	} while (!atomic_compare_exchange_weak_explicit(&q->users, &u, u + 1,
			memory_order_acquire, memory_order_relaxed));
	return 0;
}

void
async_put(struct drnic_async_queue *q)
{
	if (q != NULL)
		atomic_fetch_sub_explicit(&q->users, 1, memory_order_release);
}

unsigned int
async_purge(struct drnic_async_queue *q, const void *obj)
{
	struct async_cell *cell;
	unsigned int n = 0;
	uint64_t pos, tail;

	if (q == NULL || obj == NULL)
		return 0;
	pthread_mutex_lock(&q->lock);
	tail = atomic_load_explicit(&q->tail, memory_order_acquire);
	for (pos = q->head; pos != tail; pos++) {
		cell = &q->cells[pos & q->mask];
		/* Acquire: a published cell's event is readable. A cell still
		 * being written is another object's (this one raises no more). */
		if (atomic_load_explicit(&cell->seq, memory_order_acquire) != pos + 1 ||
		    cell->dead || async_event_object(&cell->ev) != obj)
			continue;
		cell->dead = true;
		n++;
	}
	atomic_fetch_add_explicit(&q->purged, n, memory_order_relaxed);
	pthread_mutex_unlock(&q->lock);
	return n;
}

int
async_raise(struct drnic_async_queue *q, const struct drnic_async_event *ev)
{
	struct async_cell *cell;
	uint64_t pos, seq;

	if (q == NULL || ev == NULL)
		return -EINVAL;
	pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
	for (;;) {
		cell = &q->cells[pos & q->mask];
		seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
		if (seq == pos) {
			if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + 1,
					memory_order_relaxed, memory_order_relaxed))
				break;
			/* pos was reloaded by the failed CAS */
		} else if ((int64_t)(seq - pos) < 0) {
			if (atomic_fetch_add_explicit(&q->lost, 1, memory_order_relaxed) == 0)
				ASYNC_LOG(ERR, "queue full (%u events): %s lost; counting losses in events_lost",
						q->size, drnic_event_type_str(ev->event_type));
			return -ENOSPC;
		} else {
			pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
		}
	}
	cell->ev = *ev;
	atomic_fetch_add_explicit(&q->raised, 1, memory_order_relaxed);
	atomic_store_explicit(&cell->seq, pos + 1, memory_order_release);
	eventfd_write(cq_remote_fd(q, q->fd), 1);
	return 0;
}

/* An event is handed to the application: its object holds it until acked. */
static void
async_delivered(const struct drnic_async_event *ev)
{
	const struct async_hooks *h;

	if (ev->event_type == DRNIC_EVENT_CQ_ERR) {
		if (ev->element.cq != NULL)
			cq_got_async(ev->element.cq);
		return;
	}
	h = atomic_load_explicit(&async_hooks, memory_order_acquire);
	if (h != NULL && h->delivered != NULL)
		h->delivered(ev);
}

int
drnic_try_get_async_event(struct drnic_async_queue *q, struct drnic_async_event *ev)
{
	struct async_cell *cell;
	eventfd_t v;
	int rc = 0;

	if (q == NULL || ev == NULL)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	/* Clear first, then look: a later raise writes the fd again. */
	eventfd_read(cq_remote_fd(q, q->fd), &v);
	for (;;) {
		cell = &q->cells[q->head & q->mask];
		if (atomic_load_explicit(&cell->seq, memory_order_acquire) != q->head + 1) {
			rc = -EAGAIN;
			goto out;
		}
		if (!cell->dead)
			break;
		/* Purged (its object is destroyed): hand the cell back. */
		cell->dead = false;
		atomic_store_explicit(&cell->seq, q->head + q->size, memory_order_release);
		q->head++;
	}
	*ev = cell->ev;
	atomic_store_explicit(&cell->seq, q->head + q->size, memory_order_release);
	q->head++;
	atomic_fetch_add_explicit(&q->delivered, 1, memory_order_relaxed);
	/* Under the lock, as async_purge(): the object's owner counts the
	 * event as held until it is acknowledged. */
	async_delivered(ev);
	/* More waiting (or being written): keep the fd readable. */
	if (atomic_load_explicit(&q->tail, memory_order_relaxed) != q->head)
		eventfd_write(cq_remote_fd(q, q->fd), 1);
out:
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int
drnic_get_async_event(struct drnic_async_queue *q, struct drnic_async_event *ev)
{
	struct pollfd pfd;
	int rc;

	for (;;) {
		rc = drnic_try_get_async_event(q, ev);
		if (rc != -EAGAIN)
			return rc;
		pfd.fd = cq_remote_fd(q, q->fd);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			return -EINTR;
	}
}

void
drnic_ack_async_event(struct drnic_async_queue *q, const struct drnic_async_event *ev)
{
	const struct async_hooks *h;

	if (q == NULL || ev == NULL)
		return;
	atomic_fetch_add_explicit(&q->acked, 1, memory_order_relaxed);
	if (ev->event_type == DRNIC_EVENT_CQ_ERR) {
		if (ev->element.cq != NULL)
			cq_ack_async(ev->element.cq);
	} else {
		h = atomic_load_explicit(&async_hooks, memory_order_acquire);
		if (h != NULL && h->acked != NULL)
			h->acked(ev);
	}
}

int
drnic_async_queue_query_stats(const struct drnic_async_queue *q,
		struct drnic_async_stats *stats)
{
	if (q == NULL || stats == NULL)
		return -EINVAL;
	stats->raised = atomic_load_explicit(&q->raised, memory_order_relaxed);
	stats->delivered = atomic_load_explicit(&q->delivered, memory_order_relaxed);
	stats->acked = atomic_load_explicit(&q->acked, memory_order_relaxed);
	stats->events_lost = atomic_load_explicit(&q->lost, memory_order_relaxed);
	stats->events_purged = atomic_load_explicit(&q->purged, memory_order_relaxed);
	return 0;
}
