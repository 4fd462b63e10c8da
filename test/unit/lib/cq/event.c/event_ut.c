/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/cq/event.c: the async event queue. */
#include "lib/cq/event.c"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "test/unit/lib/cq/ut_malloc_stub.h"
#include "ut_common.h"

/* Stub of cq.c: record CQ_ERR deliveries and acknowledgements. */
static struct drnic_cq *ut_acked_cq;
static int ut_cq_acks, ut_cq_got;

void
cq_got_async(struct drnic_cq *cq)
{
	RTE_SET_USED(cq);
	ut_cq_got++;
}

void
cq_ack_async(struct drnic_cq *cq)
{
	ut_acked_cq = cq;
	ut_cq_acks++;
}

static bool
ut_fd_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

static struct drnic_async_stats
ut_stats(const struct drnic_async_queue *q)
{
	struct drnic_async_stats st;

	CU_ASSERT_EQUAL(drnic_async_queue_query_stats(q, &st), 0);
	return st;
}

static struct drnic_async_event
ut_ev(uint32_t qpn)
{
	struct drnic_async_event ev = {
		.event_type = DRNIC_EVENT_QP_FATAL,
		.element.qp = (void *)(uintptr_t)(qpn + 1),
		.qp_num = qpn,
	};
	return ev;
}

static void
test_create_destroy(void)
{
	struct drnic_async_queue *q;
	struct drnic_async_event ev = ut_ev(0);
	struct drnic_async_stats st;
	long live = ut_malloc_live;

	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_async_queue_create(DRNIC_ASYNC_QUEUE_MAX_SIZE + 1));
	CU_ASSERT_EQUAL(rte_errno, ERANGE);
	ut_malloc_fail_in = 0;
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_async_queue_create(0));
	CU_ASSERT_EQUAL(rte_errno, ENOMEM);
	CU_ASSERT_EQUAL(ut_malloc_live, live);

	q = drnic_async_queue_create(0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_EQUAL(q->size, DRNIC_ASYNC_QUEUE_DEFAULT_SIZE);
	CU_ASSERT(drnic_async_queue_fd(q) >= 0);
	CU_ASSERT_EQUAL(drnic_async_queue_fd(NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(NULL), -EINVAL);
	CU_ASSERT_EQUAL(async_raise(NULL, &ev), -EINVAL);
	CU_ASSERT_EQUAL(async_raise(q, NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(NULL, &ev), -EINVAL);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_get_async_event(NULL, &ev), -EINVAL);
	CU_ASSERT_EQUAL(drnic_async_queue_query_stats(NULL, &st), -EINVAL);
	CU_ASSERT_EQUAL(drnic_async_queue_query_stats(q, NULL), -EINVAL);
	CU_ASSERT_EQUAL(async_get(NULL), -EINVAL);
	drnic_ack_async_event(NULL, &ev);
	drnic_ack_async_event(q, NULL);
	async_put(NULL);

	CU_ASSERT_EQUAL(async_get(q), 0);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), -EBUSY);
	async_put(q);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), 0);

	/* Size 1 is raised to 2, the smallest queue that works. */
	q = drnic_async_queue_create(1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_EQUAL(async_raise(q, &ev), 0);
	CU_ASSERT_EQUAL(async_raise(q, &ev), 0);
	CU_ASSERT_EQUAL(async_raise(q, &ev), -ENOSPC);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
	CU_ASSERT_EQUAL(async_raise(q, &ev), 0);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), -EAGAIN);
	CU_ASSERT_EQUAL(ut_stats(q).events_lost, 1);
	CU_ASSERT_EQUAL(async_get(q), 0);
	async_put(q);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), 0);
	CU_ASSERT_EQUAL(ut_malloc_live, live);
}

static void
test_fifo_fd_and_full(void)
{
	struct drnic_async_queue *q = drnic_async_queue_create(5);	/* -> 8 */
	struct drnic_async_event ev;
	struct drnic_async_stats st;
	int fd = drnic_async_queue_fd(q);
	uint32_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_FALSE(ut_fd_readable(fd));
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), -EAGAIN);
	for (i = 0; i < 8; i++) {
		ev = ut_ev(i);
		CU_ASSERT_EQUAL(async_raise(q, &ev), 0);
	}
	CU_ASSERT_TRUE(ut_fd_readable(fd));
	ev = ut_ev(8);
	CU_ASSERT_EQUAL(async_raise(q, &ev), -ENOSPC);
	CU_ASSERT_EQUAL(async_raise(q, &ev), -ENOSPC);
	st = ut_stats(q);
	CU_ASSERT_EQUAL(st.raised, 8);
	CU_ASSERT_EQUAL(st.events_lost, 2);
	for (i = 0; i < 8; i++) {
		CU_ASSERT_TRUE(ut_fd_readable(fd));
		CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
		CU_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_QP_FATAL);
		CU_ASSERT_EQUAL(ev.qp_num, i);
		CU_ASSERT_PTR_EQUAL(ev.element.qp, (void *)(uintptr_t)(i + 1));
	}
	CU_ASSERT_FALSE(ut_fd_readable(fd));
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), -EAGAIN);
	st = ut_stats(q);
	CU_ASSERT_EQUAL(st.delivered, 8);
	CU_ASSERT_EQUAL(st.acked, 0);

	/* Many laps. */
	for (i = 0; i < 10000; i++) {
		ev = ut_ev(i);
		CU_ASSERT_EQUAL_FATAL(async_raise(q, &ev), 0);
		if (i % 3 == 2) {
			uint32_t k;

			for (k = i - 2; k <= i; k++) {
				CU_ASSERT_EQUAL_FATAL(drnic_try_get_async_event(q, &ev), 0);
				CU_ASSERT_EQUAL_FATAL(ev.qp_num, k);
			}
		}
	}
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
	CU_ASSERT_EQUAL(ev.qp_num, 9999);
	CU_ASSERT_EQUAL(ut_stats(q).events_lost, 2);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), 0);
}

struct ut_ack {
	int calls, delivered;
	enum drnic_event_type last;
};

static struct ut_ack ut_hook_seen;

static void
ut_hook_acked(const struct drnic_async_event *ev)
{
	ut_hook_seen.calls++;
	ut_hook_seen.last = ev->event_type;
}

static void
ut_hook_delivered(const struct drnic_async_event *ev)
{
	RTE_SET_USED(ev);
	ut_hook_seen.delivered++;
}

static const struct async_hooks ut_hooks = {
	.delivered = ut_hook_delivered,
	.acked = ut_hook_acked,
};

static void
test_ack(void)
{
	struct drnic_async_queue *q = drnic_async_queue_create(4);
	struct drnic_cq *fake_cq = (struct drnic_cq *)&ut_cq_acks;
	struct drnic_async_event cq_err = { .event_type = DRNIC_EVENT_CQ_ERR,
		.element.cq = fake_cq };
	struct drnic_async_event port = { .event_type = DRNIC_EVENT_PORT_ACTIVE,
		.element.port_num = 1 };
	struct drnic_async_event ev;
	struct ut_ack *a = &ut_hook_seen;

	/* Without hooks, non-CQ events are only counted. */
	drnic_ack_async_event(q, &port);
	CU_ASSERT_EQUAL(ut_stats(q).acked, 1);
	memset(a, 0, sizeof(*a));
	async_set_hooks(&ut_hooks);
	CU_ASSERT_EQUAL(async_raise(q, &cq_err), 0);
	CU_ASSERT_EQUAL(async_raise(q, &port), 0);
	CU_ASSERT_EQUAL(drnic_get_async_event(q, &ev), 0);
	drnic_ack_async_event(q, &ev);
	CU_ASSERT_EQUAL(ut_cq_acks, 1);
	CU_ASSERT_EQUAL(ut_cq_got, 1);
	CU_ASSERT_PTR_EQUAL(ut_acked_cq, fake_cq);
	CU_ASSERT_EQUAL(a->calls, 0);
	CU_ASSERT_EQUAL(a->delivered, 0);
	CU_ASSERT_EQUAL(drnic_get_async_event(q, &ev), 0);
	CU_ASSERT_EQUAL(ev.element.port_num, 1);
	CU_ASSERT_EQUAL(a->delivered, 1);
	drnic_ack_async_event(q, &ev);
	CU_ASSERT_EQUAL(a->calls, 1);
	CU_ASSERT_EQUAL(a->last, DRNIC_EVENT_PORT_ACTIVE);
	CU_ASSERT_EQUAL(ut_cq_acks, 1);
	CU_ASSERT_EQUAL(ut_stats(q).acked, 3);
	async_set_hooks(NULL);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), 0);
}

/*
 * Unread events of a destroyed object are dropped (issue 13, defect 14):
 * async_purge() marks them, the consumer skips them and the other objects'
 * events (and port events) still come, in order; events already taken are
 * not affected; the cells are reused afterwards.
 */
static void
test_purge(void)
{
	struct drnic_async_queue *q = drnic_async_queue_create(8);
	int qp1, qp2;
	struct drnic_async_event e1 = { .event_type = DRNIC_EVENT_QP_FATAL, .element.qp = &qp1,
					.qp_num = 1 };
	struct drnic_async_event e2 = { .event_type = DRNIC_EVENT_SQ_DRAINED, .element.qp = &qp2,
					.qp_num = 2 };
	struct drnic_async_event port = { .event_type = DRNIC_EVENT_PORT_ERR,
					  .element.port_num = 1 };
	struct drnic_async_event ev;
	unsigned int i;

	CU_ASSERT_EQUAL(async_raise(q, &e1), 0);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);      /* taken: stays */
	CU_ASSERT_EQUAL(async_raise(q, &e1), 0);
	CU_ASSERT_EQUAL(async_raise(q, &e2), 0);
	CU_ASSERT_EQUAL(async_raise(q, &port), 0);
	CU_ASSERT_EQUAL(async_raise(q, &e1), 0);
	CU_ASSERT_EQUAL(async_purge(q, &qp1), 2);
	CU_ASSERT_EQUAL(async_purge(q, &qp1), 0);
	CU_ASSERT_EQUAL(async_purge(q, NULL), 0);
	CU_ASSERT_EQUAL(ut_stats(q).events_purged, 2);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
	CU_ASSERT_PTR_EQUAL(ev.element.qp, &qp2);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
	CU_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_PORT_ERR);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), -EAGAIN);
	/* Every cell comes back: a full lap and more. */
	for (i = 0; i < 20; i++) {
		CU_ASSERT_EQUAL(async_raise(q, &e2), 0);
		CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
		CU_ASSERT_PTR_EQUAL(ev.element.qp, &qp2);
	}
	CU_ASSERT_EQUAL(ut_stats(q).events_lost, 0);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), 0);
}

static struct drnic_async_queue *ut_late_q;

static pid_t ut_waiter;        /* the thread that must block first */

static void *
ut_late_raise(void *arg)
{
	struct drnic_async_event ev = { .event_type = DRNIC_EVENT_DEVICE_FATAL };

	(void)arg;
	/* Only once the waiter sleeps in the kernel. */
	CU_ASSERT_EQUAL(ut_wait_blocked(ut_waiter), 0);
	async_raise(ut_late_q, &ev);
	return NULL;
}

static void
test_get_blocks(void)
{
	struct drnic_async_event ev = { .event_type = DRNIC_EVENT_CQ_ERR };
	pthread_t th;

	ut_late_q = drnic_async_queue_create(4);
	ut_waiter = gettid();
	CU_ASSERT_FATAL(pthread_create(&th, NULL, ut_late_raise, NULL) == 0);
	CU_ASSERT_EQUAL(drnic_get_async_event(ut_late_q, &ev), 0);
	CU_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_DEVICE_FATAL);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(ut_late_q), 0);
}

#define UT_MP_PER_THREAD 20000u

struct ut_mp {
	struct drnic_async_queue *q;
	uint32_t id;
	int errors;
};

static void *
ut_mp_producer(void *arg)
{
	struct ut_mp *m = arg;
	uint32_t i;

	for (i = 0; i < UT_MP_PER_THREAD; i++) {
		struct drnic_async_event ev = ut_ev(m->id << 24 | i);

		if (async_raise(m->q, &ev) != 0)
			m->errors++;
		if (i % 128 == 0)
			sched_yield();
	}
	return NULL;
}

/* Two producers and a consumer at once: each event exactly once, in order per producer. */
static void
test_multi_producer(void)
{
	struct ut_mp m[2];
	uint32_t next[2] = { 0, 0 };
	struct drnic_async_event ev;
	pthread_t th[2];
	unsigned int got = 0, spins = 0;
	int t;

	ut_late_q = drnic_async_queue_create(DRNIC_ASYNC_QUEUE_MAX_SIZE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ut_late_q);
	for (t = 0; t < 2; t++) {
		m[t] = (struct ut_mp){ .q = ut_late_q, .id = (uint32_t)t + 1 };
		CU_ASSERT_FATAL(pthread_create(&th[t], NULL, ut_mp_producer, &m[t]) == 0);
	}
	while (got < 2 * UT_MP_PER_THREAD && spins < 10000000) {
		if (drnic_try_get_async_event(ut_late_q, &ev) != 0) {
			spins++;
			sched_yield();
			continue;
		}
		t = (int)(ev.qp_num >> 24) - 1;
		CU_ASSERT_FATAL(t == 0 || t == 1);
		CU_ASSERT_EQUAL_FATAL(ev.qp_num & 0xffffff, next[t]);
		next[t]++;
		got++;
	}
	for (t = 0; t < 2; t++) {
		pthread_join(th[t], NULL);
		CU_ASSERT_EQUAL(m[t].errors, 0);
		CU_ASSERT_EQUAL(next[t], UT_MP_PER_THREAD);
	}
	CU_ASSERT_EQUAL(drnic_try_get_async_event(ut_late_q, &ev), -EAGAIN);
	CU_ASSERT_EQUAL(ut_stats(ut_late_q).raised, 2 * UT_MP_PER_THREAD);
	CU_ASSERT_EQUAL(ut_stats(ut_late_q).events_lost, 0);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(ut_late_q), 0);
}

static void
test_type_str(void)
{
	CU_ASSERT_STRING_EQUAL(drnic_event_type_str(DRNIC_EVENT_CQ_ERR), "CQ error");
	CU_ASSERT_STRING_EQUAL(drnic_event_type_str(DRNIC_EVENT_WQ_FATAL), "WQ fatal");
	CU_ASSERT_STRING_EQUAL(drnic_event_type_str((enum drnic_event_type)20), "unknown");
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("async_event", NULL, NULL);
	CU_ADD_TEST(s, test_create_destroy);
	CU_ADD_TEST(s, test_fifo_fd_and_full);
	CU_ADD_TEST(s, test_ack);
	CU_ADD_TEST(s, test_purge);
	CU_ADD_TEST(s, test_get_blocks);
	CU_ADD_TEST(s, test_multi_producer);
	CU_ADD_TEST(s, test_type_str);
	return ut_run_all();
}
