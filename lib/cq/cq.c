/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues and completion channels.
 *
 * Ring protocol (one producer: the owning engine; one consumer: the polling
 * thread). Every slot carries an owner tag `seq`: the producer writes the CQE,
 * then stores seq = index + 1 with release; the consumer at index c takes the
 * slot when it reads seq == c + 1 with acquire. This is the hardware owner/phase
 * bit widened to 64 bits: a zeroed slot is never valid, so a fresh ring can be
 * swapped in at any index (resize) without initialising it. There is no shared
 * producer index on the data path.
 *
 * The consumer publishes its index `cons` (release) after each poll that took
 * something. The producer keeps a cached copy and reloads it (acquire) only
 * when its estimate of the occupancy (from that stale copy, so never too low)
 * reaches the high-water mark or the depth: so a full ring is always checked
 * against a fresh index, and the high-water mark is exact, at the price of one
 * load of the consumer's cache line per possible new peak. (With a tiny
 * high-water mark, as in ping-pong, that is one load per push; measure before
 * trading exactness for fewer loads.)
 *
 * Resize hands over without stopping the producer: the consumer allocates a new
 * ring and leaves it in `pending`; at its next push the producer takes it,
 * writes the old ring's end index, links old->next = new (release) and
 * continues in the new ring with the same index sequence. The consumer follows
 * the link when it reaches that end index, and frees the old ring.
 *
 * Notification: drnic_cq_req_notify() stores the arm state, then a seq_cst
 * fence, then the caller polls. The producer publishes, then a seq_cst fence,
 * then reads the arm state. With the two fences, at least one side sees the
 * other's store: either the poll finds the CQE or the producer sees the arm and
 * signals. No wake-up is lost.
 *
 * Channel: CQs with undelivered events sit on a lock-free stack (producers
 * push with CAS; the consumer takes the whole stack with one exchange) and then
 * on a FIFO private to the consumers, who serialise on a mutex. cq->ev_pending
 * counts undelivered events; only its 0 -> 1 transition puts the CQ on the
 * stack and writes the eventfd, so a CQ is on at most one list at a time.
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "cq_engine.h"
#include "cq_private.h"
#include "handle.h"
#include "rpc.h"

RTE_LOG_REGISTER(cq_logtype, drnic.cq, NOTICE);
#define CQ_LOG(level, cq, fmt, ...) \
	rte_log(RTE_LOG_ ## level, cq_logtype, "cq#%u: " fmt "\n", (cq)->id, ##__VA_ARGS__)

/* users counters: this bit marks an object being destroyed. */
#define CQ_USERS_DEAD (UINT32_C(1) << 31)

enum cq_arm {
	CQ_ARM_NONE = 0,
	CQ_ARM_SOLICITED = 1,
	CQ_ARM_NEXT = 2,
};

/* One CQE per cache line: the producer writing slot i never disturbs the
 * consumer reading slot i - 1. */
struct cq_slot {
	struct drnic_wc wc;
	_Atomic uint64_t seq;       /* index + 1 of the CQE in the slot; 0: never */
	uint64_t tsc;               /* DRNIC_CQ_TIMESTAMP: rte_rdtsc() at the push */
} __rte_cache_aligned;

struct cq_ring {
	uint64_t mask;              /* slots - 1; slots is a power of two >= depth */
	uint32_t depth;             /* CQEs that may be outstanding */
	uint64_t end;               /* first index not in this ring, once next is set */
	_Atomic(struct cq_ring *) next;
	struct cq_slot slots[];
};

struct drnic_comp_channel {
	_Atomic(struct drnic_cq *) stack;  /* producers push CQs with new events */
	int fd;                            /* eventfd */
	_Atomic uint32_t users;            /* CQs using the channel */
	pthread_mutex_t lock;              /* consumers: the FIFO below */
	struct drnic_cq *ready_head;
	struct drnic_cq *ready_tail;
};

struct drnic_cq {
	/* Set at creation, read by both sides. */
	struct drnic_comp_channel *channel;
	struct drnic_async_queue *async_queue;
	void *context;
	_Atomic(int (*)(void *arg)) progress; /* inline mode: run before polling */
	void *progress_arg;
	int comp_vector;
	int socket_id;
	uint32_t id;                       /* for logs: cq#id */
	_Atomic uint32_t depth;            /* as last created/resized */
	_Atomic uint32_t users;            /* QPs attached; CQ_USERS_DEAD */
	_Atomic int error;                 /* sticky overflow, set by the producer */
	_Atomic(struct cq_ring *) pending; /* resize: consumer -> producer */

	/* Producer. */
	alignas(RTE_CACHE_LINE_SIZE) struct cq_ring *prod_ring;
	bool stamp;                        /* DRNIC_CQ_TIMESTAMP */
	uint64_t prod;                     /* next index to write */
	uint64_t cons_cache;               /* last cons seen */
	_Atomic uint64_t prod_pub;         /* prod, for stats and resize only */
	_Atomic uint32_t high_water;
	_Atomic uint64_t overflows;
	_Atomic uint64_t events;
	_Atomic uint64_t async_raised;     /* CQ_ERR events queued */

	/* Consumer. */
	alignas(RTE_CACHE_LINE_SIZE) struct cq_ring *cons_ring;
	_Atomic uint64_t cons;             /* next index to read */

	/* Written by both sides, rarely. */
	alignas(RTE_CACHE_LINE_SIZE) _Atomic int armed;
	_Atomic uint32_t ev_pending;       /* signalled, not yet delivered */
	struct drnic_cq *ev_next;          /* link on the channel's stack/FIFO */
	_Atomic uint64_t events_got;       /* delivered by drnic_get_cq_event() */
	_Atomic uint64_t events_acked;
	_Atomic uint64_t async_got;        /* CQ_ERR events taken */
	_Atomic uint64_t async_acked;
};

static _Atomic uint32_t cq_next_id;

static const char *const cq_status_names[] = {
	[DRNIC_WC_SUCCESS] = "success",
	[DRNIC_WC_LOC_LEN_ERR] = "local length error",
	[DRNIC_WC_LOC_QP_OP_ERR] = "local QP operation error",
	[DRNIC_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
	[DRNIC_WC_LOC_PROT_ERR] = "local protection error",
	[DRNIC_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
	[DRNIC_WC_MW_BIND_ERR] = "memory management operation error",
	[DRNIC_WC_BAD_RESP_ERR] = "bad response error",
	[DRNIC_WC_LOC_ACCESS_ERR] = "local access error",
	[DRNIC_WC_REM_INV_REQ_ERR] = "remote invalid request error",
	[DRNIC_WC_REM_ACCESS_ERR] = "remote access error",
	[DRNIC_WC_REM_OP_ERR] = "remote operation error",
	[DRNIC_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	[DRNIC_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	[DRNIC_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
	[DRNIC_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
	[DRNIC_WC_REM_ABORT_ERR] = "aborted error",
	[DRNIC_WC_INV_EECN_ERR] = "invalid EE context number",
	[DRNIC_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
	[DRNIC_WC_FATAL_ERR] = "fatal error",
	[DRNIC_WC_RESP_TIMEOUT_ERR] = "response timeout error",
	[DRNIC_WC_GENERAL_ERR] = "general error",
	[DRNIC_WC_TM_ERR] = "TM error",
	[DRNIC_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
};

const char *
drnic_wc_status_str(enum drnic_wc_status status)
{
	unsigned int i = (unsigned int)status;

	if (i >= RTE_DIM(cq_status_names) || cq_status_names[i] == NULL)
		return "unknown";
	return cq_status_names[i];
}

/* Take a user reference unless the object is being destroyed. */
static int
cq_get_users(_Atomic uint32_t *users)
{
	uint32_t u = atomic_load_explicit(users, memory_order_relaxed);

	do {
		if (u & CQ_USERS_DEAD)
			return -EINVAL;
	} while (!atomic_compare_exchange_weak_explicit(users, &u, u + 1,
			memory_order_acquire, memory_order_relaxed));
	return 0;
}

/* Mark the object dead if it has no users. */
static int
cq_kill_users(_Atomic uint32_t *users)
{
	uint32_t zero = 0;

	if (!atomic_compare_exchange_strong_explicit(users, &zero, CQ_USERS_DEAD,
			memory_order_acq_rel, memory_order_relaxed))
		return -EBUSY;
	return 0;
}

/* ---- completion channel ---------------------------------------------- */

struct drnic_comp_channel *
drnic_create_comp_channel(void)
{
	struct drnic_comp_channel *ch;
	int err;

	if (rpc_attached())
		return cq_remote_create(RPC_CHANNEL_CREATE, RPC_CHANNEL_DESTROY, 0,
					HANDLE_COMP_CHANNEL);
	ch = rte_zmalloc_socket("drnic_comp_channel", sizeof(*ch), RTE_CACHE_LINE_SIZE,
			SOCKET_ID_ANY);
	if (ch == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ch->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ch->fd < 0) {
		err = errno;
		rte_free(ch);
		rte_errno = err;
		return NULL;
	}
	err = pthread_mutex_init(&ch->lock, NULL);
	if (err == 0 && handle_add(ch, HANDLE_COMP_CHANNEL) < 0) {
		pthread_mutex_destroy(&ch->lock);
		err = ENOMEM;
	}
	if (err != 0) {
		close(ch->fd);
		rte_free(ch);
		rte_errno = err;
		return NULL;
	}
	return ch;
}

int
drnic_comp_channel_fd(const struct drnic_comp_channel *ch)
{
	return ch == NULL ? -EINVAL : cq_remote_fd(ch, ch->fd);
}

int
drnic_destroy_comp_channel(struct drnic_comp_channel *ch)
{
	if (rpc_attached())
		return cq_remote_destroy(ch, RPC_CHANNEL_DESTROY, HANDLE_COMP_CHANNEL);
	/* Not live (NULL, destroyed already): nothing behind it is read. */
	if (handle_take(ch, HANDLE_COMP_CHANNEL) < 0)
		return -EINVAL;
	if (cq_kill_users(&ch->users) < 0) {
		(void)handle_add(ch, HANDLE_COMP_CHANNEL);  /* cannot fail: its slot is free */
		return -EBUSY;
	}
	pthread_mutex_destroy(&ch->lock);
	close(ch->fd);
	rte_free(ch);
	return 0;
}

/* Consumer side, under ch->lock. */
static void
channel_append(struct drnic_comp_channel *ch, struct drnic_cq *cq)
{
	cq->ev_next = NULL;
	if (ch->ready_tail != NULL)
		ch->ready_tail->ev_next = cq;
	else
		ch->ready_head = cq;
	ch->ready_tail = cq;
}

/* Under ch->lock: move the producers' stack to the FIFO, oldest first. */
static void
channel_collect(struct drnic_comp_channel *ch)
{
	struct drnic_cq *s, *rev = NULL, *next;

	s = atomic_exchange_explicit(&ch->stack, NULL, memory_order_acquire);
	while (s != NULL) {
		next = s->ev_next;
		s->ev_next = rev;
		rev = s;
		s = next;
	}
	while (rev != NULL) {
		next = rev->ev_next;
		channel_append(ch, rev);
		rev = next;
	}
}

/* Under ch->lock: forget every undelivered event of @cq (it has no producer). */
static void
channel_purge(struct drnic_comp_channel *ch, struct drnic_cq *cq)
{
	struct drnic_cq **pp, *prev = NULL;

	channel_collect(ch);
	for (pp = &ch->ready_head; *pp != NULL; prev = *pp, pp = &(*pp)->ev_next) {
		if (*pp == cq) {
			*pp = cq->ev_next;
			if (ch->ready_tail == cq)
				ch->ready_tail = prev;
			break;
		}
	}
	atomic_store_explicit(&cq->ev_pending, 0, memory_order_relaxed);
}

/* Producer: one completion event for @cq. */
static void
cq_signal(struct drnic_cq *cq)
{
	struct drnic_comp_channel *ch = cq->channel;
	struct drnic_cq *head;

	atomic_store_explicit(&cq->events,
			atomic_load_explicit(&cq->events, memory_order_relaxed) + 1,
			memory_order_relaxed);
	if (atomic_fetch_add_explicit(&cq->ev_pending, 1, memory_order_acq_rel) != 0)
		return;	/* already queued; the consumer delivers one per count */
	head = atomic_load_explicit(&ch->stack, memory_order_relaxed);
	do {
		cq->ev_next = head;
	} while (!atomic_compare_exchange_weak_explicit(&ch->stack, &head, cq,
			memory_order_release, memory_order_relaxed));
	/* Cannot fail: the counter would need 2^64 - 1 writes. */
	eventfd_write(ch->fd, 1);
}

int
drnic_try_get_cq_event(struct drnic_comp_channel *ch, struct drnic_cq **cq,
		void **cq_context)
{
	struct drnic_cq *c;
	eventfd_t v;

	if (ch == NULL || cq == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ch->lock);
	/* Clear the fd first, then look: an event queued after this read
	 * writes the fd again, so readiness is never lost. */
	eventfd_read(cq_remote_fd(ch, ch->fd), &v);
	channel_collect(ch);
	c = ch->ready_head;
	if (c == NULL) {
		pthread_mutex_unlock(&ch->lock);
		return -EAGAIN;
	}
	ch->ready_head = c->ev_next;
	if (ch->ready_head == NULL)
		ch->ready_tail = NULL;
	if (atomic_fetch_sub_explicit(&c->ev_pending, 1, memory_order_acq_rel) > 1)
		channel_append(ch, c);
	atomic_fetch_add_explicit(&c->events_got, 1, memory_order_relaxed);
	/* More waiting: keep the fd readable for epoll users. */
	if (ch->ready_head != NULL ||
	    atomic_load_explicit(&ch->stack, memory_order_relaxed) != NULL)
		eventfd_write(cq_remote_fd(ch, ch->fd), 1);
	pthread_mutex_unlock(&ch->lock);
	*cq = c;
	if (cq_context != NULL)
		*cq_context = c->context;
	return 0;
}

int
drnic_get_cq_event(struct drnic_comp_channel *ch, struct drnic_cq **cq,
		void **cq_context)
{
	struct pollfd pfd;
	int rc;

	for (;;) {
		rc = drnic_try_get_cq_event(ch, cq, cq_context);
		if (rc != -EAGAIN)
			return rc;
		if (rpc_attached() && rpc_daemon_gone())
			return -EIO;   /* no engine will signal it any more */
		pfd.fd = cq_remote_fd(ch, ch->fd);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			return -EINTR;
	}
}

void
drnic_ack_cq_events(struct drnic_cq *cq, unsigned int nevents)
{
	if (cq != NULL)
		atomic_fetch_add_explicit(&cq->events_acked, nevents, memory_order_relaxed);
}

/* ---- CQ life cycle ------------------------------------------------------ */

static struct cq_ring *
cq_ring_alloc(uint32_t depth, int socket_id)
{
	uint64_t slots = rte_align32pow2(depth);
	struct cq_ring *r;

	r = rte_zmalloc_socket("drnic_cq_ring",
			sizeof(*r) + slots * sizeof(struct cq_slot),
			RTE_CACHE_LINE_SIZE, socket_id);
	if (r == NULL)
		return NULL;
	r->mask = slots - 1;
	r->depth = depth;
	return r;
}

static void
cq_ring_free_chain(struct cq_ring *r)
{
	struct cq_ring *next;

	while (r != NULL) {
		next = atomic_load_explicit(&r->next, memory_order_acquire);
		rte_free(r);
		r = next;
	}
}

/* An attached process's CQ: the daemon creates it, in the memory both map. */
static struct drnic_cq *
cq_remote_new(const struct drnic_cq_attr *attr)
{
	struct rpc_msg m;
	int rc;

	RTE_BUILD_BUG_ON(sizeof(*attr) > RPC_BLOB_MAX);
	rpc_msg_init(&m, RPC_CQ_CREATE);
	memcpy(m.blob, attr, sizeof(*attr));
	m.blob_len = sizeof(*attr);
	rc = rpc_call(&m);
	if (rc < 0) {
		rte_errno = -rc;
		return NULL;
	}
	return rpc_adopt((void *)(uintptr_t)m.obj[0], HANDLE_CQ, RPC_CQ_DESTROY);
}

struct drnic_cq *
drnic_cq_create(const struct drnic_cq_attr *attr)
{
	struct drnic_cq *cq;
	struct cq_ring *ring;

	/* The timestamp fits the slot's cache line beside the CQE. */
	RTE_BUILD_BUG_ON(sizeof(struct cq_slot) != RTE_CACHE_LINE_SIZE);
	if (attr == NULL || attr->cqe == 0 || (attr->flags & ~DRNIC_CQ_TIMESTAMP) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (attr->cqe > DRNIC_CQ_MAX_DEPTH) {
		rte_errno = ERANGE;
		return NULL;
	}
	if (rpc_attached())
		return cq_remote_new(attr);
	cq = rte_zmalloc_socket("drnic_cq", sizeof(*cq), RTE_CACHE_LINE_SIZE,
			attr->socket_id);
	if (cq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ring = cq_ring_alloc(attr->cqe, attr->socket_id);
	if (ring == NULL) {
		rte_free(cq);
		rte_errno = ENOMEM;
		return NULL;
	}
	if (attr->channel != NULL && cq_get_users(&attr->channel->users) < 0)
		goto einval;
	if (attr->async_queue != NULL && async_get(attr->async_queue) < 0) {
		if (attr->channel != NULL)
			atomic_fetch_sub_explicit(&attr->channel->users, 1,
					memory_order_release);
		goto einval;
	}
	if (handle_add(cq, HANDLE_CQ) < 0) {
		if (attr->channel != NULL)
			atomic_fetch_sub_explicit(&attr->channel->users, 1,
					memory_order_release);
		async_put(attr->async_queue);
		rte_free(ring);
		rte_free(cq);
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->channel = attr->channel;
	cq->async_queue = attr->async_queue;
	cq->context = attr->cq_context;
	cq->stamp = (attr->flags & DRNIC_CQ_TIMESTAMP) != 0;
	cq->comp_vector = attr->comp_vector;
	cq->socket_id = attr->socket_id;
	cq->id = atomic_fetch_add_explicit(&cq_next_id, 1, memory_order_relaxed);
	atomic_init(&cq->depth, attr->cqe);
	cq->prod_ring = ring;
	cq->cons_ring = ring;
	return cq;

einval:
	rte_free(ring);
	rte_free(cq);
	rte_errno = EINVAL;
	return NULL;
}

int
drnic_cq_destroy(struct drnic_cq *cq)
{
	if (rpc_attached())
		return rpc_destroy(cq, HANDLE_CQ, RPC_CQ_DESTROY);
	/* Not live (NULL, destroyed already): nothing behind it is read. */
	if (handle_take(cq, HANDLE_CQ) < 0)
		return -EINVAL;
	/* Events taken and not acknowledged hold the CQ (as in verbs). */
	if (atomic_load_explicit(&cq->events_got, memory_order_relaxed) !=
	    atomic_load_explicit(&cq->events_acked, memory_order_relaxed) ||
	    atomic_load_explicit(&cq->async_got, memory_order_acquire) !=
	    atomic_load_explicit(&cq->async_acked, memory_order_relaxed) ||
	    cq_kill_users(&cq->users) < 0) {
		(void)handle_add(cq, HANDLE_CQ);  /* cannot fail: its slot is free */
		return -EBUSY;
	}
	/* No QP, so no producer: a CQ_ERR nobody took yet is dropped. */
	if (cq->async_queue != NULL)
		(void)async_purge(cq->async_queue, cq);
	if (cq->channel != NULL) {
		pthread_mutex_lock(&cq->channel->lock);
		channel_purge(cq->channel, cq);
		pthread_mutex_unlock(&cq->channel->lock);
		atomic_fetch_sub_explicit(&cq->channel->users, 1, memory_order_release);
	}
	if (cq->async_queue != NULL)
		async_put(cq->async_queue);
	cq_ring_free_chain(cq->cons_ring);
	rte_free(atomic_load_explicit(&cq->pending, memory_order_acquire));
	rte_free(cq);
	return 0;
}

int
cq_get(struct drnic_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	return cq_get_users(&cq->users);
}

void
cq_put(struct drnic_cq *cq)
{
	if (cq != NULL)
		atomic_fetch_sub_explicit(&cq->users, 1, memory_order_release);
}

void
cq_set_progress(struct drnic_cq *cq, int (*fn)(void *arg), void *arg)
{
	atomic_store_explicit(&cq->progress, NULL, memory_order_relaxed);
	cq->progress_arg = arg;
	atomic_store_explicit(&cq->progress, fn, memory_order_release);
}

int
cq_comp_vector(const struct drnic_cq *cq)
{
	return cq->comp_vector;
}

int
cq_socket(const struct drnic_cq *cq)
{
	return cq->socket_id;
}

void *
cq_context(const struct drnic_cq *cq)
{
	return cq->context;
}

bool
cq_in_error(const struct drnic_cq *cq)
{
	return atomic_load_explicit(&cq->error, memory_order_acquire) != 0;
}

void
cq_got_async(struct drnic_cq *cq)
{
	atomic_fetch_add_explicit(&cq->async_got, 1, memory_order_relaxed);
}

void
cq_ack_async(struct drnic_cq *cq)
{
	atomic_fetch_add_explicit(&cq->async_acked, 1, memory_order_release);
}

/* ---- producer ----------------------------------------------------------- */

/* Producer: continue in the ring a resize left in cq->pending. */
static void
cq_switch_ring(struct drnic_cq *cq)
{
	struct cq_ring *r, *old = cq->prod_ring;

	r = atomic_exchange_explicit(&cq->pending, NULL, memory_order_acq_rel);
	if (r == NULL)
		return;
	old->end = cq->prod;
	atomic_store_explicit(&old->next, r, memory_order_release);
	cq->prod_ring = r;
}

/* Producer: the CQ is full. Enter error (once), count, raise CQ_ERR (once). */
static void
cq_overflow(struct drnic_cq *cq)
{
	struct drnic_async_event ev = {
		.event_type = DRNIC_EVENT_CQ_ERR,
		.element.cq = cq,
	};

	atomic_store_explicit(&cq->overflows,
			atomic_load_explicit(&cq->overflows, memory_order_relaxed) + 1,
			memory_order_relaxed);
	if (atomic_load_explicit(&cq->error, memory_order_relaxed))
		return;
	atomic_store_explicit(&cq->error, 1, memory_order_release);
	CQ_LOG(ERR, cq, "overflow: %u CQEs unpolled at depth %u; CQ in error",
			(unsigned int)(cq->prod - cq->cons_cache), cq->prod_ring->depth);
	if (cq->async_queue == NULL)
		return;
	/* Count before raising, so an ack can never overtake the count. */
	atomic_fetch_add_explicit(&cq->async_raised, 1, memory_order_release);
	if (async_raise(cq->async_queue, &ev) < 0)
		atomic_fetch_sub_explicit(&cq->async_raised, 1, memory_order_release);
}

/*
 * Producer: write and publish one CQE. Returns -EOVERFLOW when the CQ is (or
 * now becomes) in error; nothing is written then.
 */
static inline int
cq_produce(struct drnic_cq *cq, const struct drnic_wc *wc)
{
	struct cq_ring *ring;
	struct cq_slot *slot;
	uint64_t p = cq->prod;
	uint64_t occ;
	uint32_t hwm;

	if (unlikely(atomic_load_explicit(&cq->error, memory_order_relaxed))) {
		cq_overflow(cq);
		return -EOVERFLOW;
	}
	if (unlikely(atomic_load_explicit(&cq->pending, memory_order_relaxed) != NULL))
		cq_switch_ring(cq);
	ring = cq->prod_ring;
	occ = p - cq->cons_cache;
	hwm = atomic_load_explicit(&cq->high_water, memory_order_relaxed);
	/* Reload at a possible new peak or a possibly full ring. */
	if (occ >= RTE_MIN(hwm, ring->depth)) {
		cq->cons_cache = atomic_load_explicit(&cq->cons, memory_order_acquire);
		occ = p - cq->cons_cache;
		if (unlikely(occ >= ring->depth)) {
			cq_overflow(cq);
			return -EOVERFLOW;
		}
		if (occ + 1 > hwm)
			atomic_store_explicit(&cq->high_water, (uint32_t)occ + 1,
					memory_order_relaxed);
	}
	slot = &ring->slots[p & ring->mask];
	slot->wc = *wc;
	if (unlikely(cq->stamp))
		slot->tsc = rte_rdtsc();
	cq->prod = p + 1;
	/* Before the release below: whoever saw this CQE sees prod_pub > p. */
	atomic_store_explicit(&cq->prod_pub, p + 1, memory_order_relaxed);
	atomic_store_explicit(&slot->seq, p + 1, memory_order_release);
	return 0;
}

/* Producer, after publishing: fire the event if the CQ is armed for it. */
static inline void
cq_notify(struct drnic_cq *cq, bool solicited_or_error)
{
	int a;

	atomic_thread_fence(memory_order_seq_cst);
	a = atomic_load_explicit(&cq->armed, memory_order_relaxed);
	while (a != CQ_ARM_NONE) {
		if (a == CQ_ARM_SOLICITED && !solicited_or_error)
			return;
		if (atomic_compare_exchange_weak_explicit(&cq->armed, &a, CQ_ARM_NONE,
				memory_order_acq_rel, memory_order_relaxed)) {
			cq_signal(cq);
			return;
		}
	}
}

int
cq_push(struct drnic_cq *cq, const struct drnic_wc *wc, bool solicited)
{
	int rc;

	if (unlikely(cq == NULL || wc == NULL))
		return -EINVAL;
	rc = cq_produce(cq, wc);
	if (unlikely(rc < 0))
		return rc;
	cq_notify(cq, solicited || wc->status != DRNIC_WC_SUCCESS);
	return 0;
}

int
cq_push_quiet(struct drnic_cq *cq, const struct drnic_wc *wc)
{
	if (unlikely(cq == NULL || wc == NULL))
		return -EINVAL;
	return cq_produce(cq, wc);
}

void
cq_push_notify(struct drnic_cq *cq, bool solicited_or_error)
{
	if (likely(cq != NULL))
		cq_notify(cq, solicited_or_error);
}

unsigned int
cq_push_burst(struct drnic_cq *cq, const struct drnic_wc *wc, unsigned int n,
		bool solicited)
{
	bool fire = solicited;
	unsigned int i;

	if (unlikely(cq == NULL || wc == NULL || n == 0))
		return 0;
	for (i = 0; i < n; i++) {
		if (unlikely(cq_produce(cq, &wc[i]) < 0))
			break;
		fire |= wc[i].status != DRNIC_WC_SUCCESS;
	}
	if (i > 0)
		cq_notify(cq, fire);
	return i;
}

/* ---- consumer ----------------------------------------------------------- */

/* drnic_cq_poll(), with the CQEs' TSC stamps into @p tsc when not NULL
 * (inlined twice: the plain poll keeps its code). */
static __rte_always_inline int
cq_poll(struct drnic_cq *cq, int num_entries, struct drnic_wc *wc, uint64_t *tsc)
{
	struct cq_ring *ring, *next;
	struct cq_slot *slot;
	int (*progress)(void *arg);
	bool err;
	uint64_t c;
	int n = 0;

	progress = atomic_load_explicit(&cq->progress, memory_order_acquire);
	if (progress != NULL)
		progress(cq->progress_arg);
	/* Read before the slots: if the error is seen here, every CQE published
	 * before it is visible below, so an empty slot means drained. */
	err = atomic_load_explicit(&cq->error, memory_order_acquire) != 0;
	ring = cq->cons_ring;
	c = atomic_load_explicit(&cq->cons, memory_order_relaxed);
	while (n < num_entries) {
		slot = &ring->slots[c & ring->mask];
		if (atomic_load_explicit(&slot->seq, memory_order_acquire) == c + 1) {
			if (tsc != NULL)
				tsc[n] = slot->tsc;
			wc[n++] = slot->wc;
			c++;
			continue;
		}
		next = atomic_load_explicit(&ring->next, memory_order_acquire);
		if (next != NULL && c == ring->end) {
			/* The producer moved to a resized ring at index c. */
			cq->cons_ring = next;
			rte_free(ring);
			ring = next;
			continue;
		}
		if (err && n == 0)
			return -EOVERFLOW;
		break;
	}
	if (n > 0)
		atomic_store_explicit(&cq->cons, c, memory_order_release);
	/* Attached, and the daemon (its engines) has gone: nothing will come,
	 * and a poller must hear so rather than spin for ever. */
	if (n == 0 && unlikely(rpc_attached()) && rpc_daemon_gone())
		return -EIO;
	return n;
}

int
drnic_cq_poll(struct drnic_cq *cq, int num_entries, struct drnic_wc *wc)
{
	if (unlikely(cq == NULL || num_entries < 0 || (wc == NULL && num_entries > 0)))
		return -EINVAL;
	return cq_poll(cq, num_entries, wc, NULL);
}

/* The TSC's rate: EAL's, or (before rte_eal_init(), as in unit tests)
 * measured against CLOCK_MONOTONIC over 10 ms, once. */
static uint64_t
cq_tsc_hz(void)
{
	static _Atomic uint64_t hz;
	uint64_t h = atomic_load_explicit(&hz, memory_order_relaxed);
	struct timespec t0, t1;
	uint64_t c0, c1, ns;

	if (likely(h != 0))
		return h;
	h = rte_get_tsc_hz();
	if (h == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		c0 = rte_rdtsc();
		do {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * NS_PER_S +
			     (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
		} while (ns < 10 * 1000 * 1000);
		c1 = rte_rdtsc();
		h = (c1 - c0) * NS_PER_S / ns;
	}
	atomic_store_explicit(&hz, h, memory_order_relaxed);
	return h;
}

/* TSC cycles to nanoseconds (without overflow for centuries of uptime). */
static uint64_t
cq_tsc_ns(uint64_t tsc)
{
	uint64_t hz = cq_tsc_hz();

	return tsc / hz * NS_PER_S + tsc % hz * NS_PER_S / hz;
}

uint64_t
drnic_cq_clock_ns(void)
{
	return cq_tsc_ns(rte_rdtsc());
}

int
drnic_cq_poll_ts(struct drnic_cq *cq, int num_entries, struct drnic_wc *wc, uint64_t *ts)
{
	int n, i;

	if (cq == NULL || num_entries < 0 || ((wc == NULL || ts == NULL) && num_entries > 0) ||
	    !cq->stamp)
		return -EINVAL;
	n = cq_poll(cq, num_entries, wc, ts);
	for (i = 0; i < n; i++)
		ts[i] = cq_tsc_ns(ts[i]);
	return n;
}

struct drnic_comp_channel *
drnic_cq_channel(const struct drnic_cq *cq)
{
	return cq != NULL ? cq->channel : NULL;
}

int
drnic_cq_req_notify(struct drnic_cq *cq, int solicited_only)
{
	int want = solicited_only ? CQ_ARM_SOLICITED : CQ_ARM_NEXT;
	int a;

	if (cq == NULL || cq->channel == NULL)
		return -EINVAL;
	if (atomic_load_explicit(&cq->error, memory_order_acquire))
		return -EOVERFLOW;
	a = atomic_load_explicit(&cq->armed, memory_order_relaxed);
	while (a < want && !atomic_compare_exchange_weak_explicit(&cq->armed, &a, want,
			memory_order_seq_cst, memory_order_relaxed))
		;
	/* Pairs with the fence in cq_notify(): the caller's next poll sees every
	 * CQE the producer published before it could have missed this arm. */
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}

int
drnic_cq_resize(struct drnic_cq *cq, uint32_t cqe)
{
	struct cq_ring *r;
	uint64_t occ;

	if (cq == NULL || cqe == 0)
		return -EINVAL;
	if (cqe > DRNIC_CQ_MAX_DEPTH)
		return -ERANGE;
	if (rpc_attached()) {
		struct rpc_msg m;

		/* The daemon allocates the new ring; this process, the
		 * consumer, follows the link to it and frees the old one, as
		 * below. */
		if (!handle_live(cq, HANDLE_CQ))
			return -EINVAL;
		rpc_msg_init(&m, RPC_CQ_RESIZE);
		m.obj[0] = (uintptr_t)cq;
		m.arg[0] = cqe;
		return rpc_call(&m);
	}
	if (atomic_load_explicit(&cq->error, memory_order_acquire))
		return -EOVERFLOW;
	/* The consumer has seen every CQE below cons, so prod_pub >= cons. */
	occ = atomic_load_explicit(&cq->prod_pub, memory_order_acquire) -
		atomic_load_explicit(&cq->cons, memory_order_relaxed);
	if (cqe < occ)
		return -EINVAL;
	r = cq_ring_alloc(cqe, cq->socket_id);
	if (r == NULL)
		return -ENOMEM;
	/* A resize the producer has not taken yet is replaced. */
	rte_free(atomic_exchange_explicit(&cq->pending, r, memory_order_acq_rel));
	atomic_store_explicit(&cq->depth, cqe, memory_order_relaxed);
	return 0;
}

int
drnic_cq_query_stats(const struct drnic_cq *cq, struct drnic_cq_stats *stats)
{
	uint64_t cons, prod;

	if (cq == NULL || stats == NULL)
		return -EINVAL;
	/* cons first: both only grow, and cons <= prod, so prod - cons >= 0. */
	cons = atomic_load_explicit(&cq->cons, memory_order_acquire);
	prod = atomic_load_explicit(&cq->prod_pub, memory_order_acquire);
	stats->depth = atomic_load_explicit(&cq->depth, memory_order_relaxed);
	stats->occupancy = prod > cons ? (uint32_t)(prod - cons) : 0;
	stats->high_water = atomic_load_explicit(&cq->high_water, memory_order_relaxed);
	stats->in_error = atomic_load_explicit(&cq->error, memory_order_relaxed) ? 1 : 0;
	stats->completions = prod;
	stats->overflows = atomic_load_explicit(&cq->overflows, memory_order_relaxed);
	stats->events = atomic_load_explicit(&cq->events, memory_order_relaxed);
	return 0;
}
