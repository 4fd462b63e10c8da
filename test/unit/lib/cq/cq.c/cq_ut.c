/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/cq/cq.c: the CQ ring, overflow, notification, channels,
 * resize, life cycle. The real async queue (event.c) receives CQ_ERR events.
 */
#include "lib/cq/cq.c"
#include "lib/cq/event.c"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>

#include "test/unit/lib/cq/ut_malloc_stub.h"
#include "ut_common.h"

static struct drnic_wc
ut_wc(uint64_t wr_id)
{
	struct drnic_wc wc = {
		.wr_id = wr_id,
		.status = DRNIC_WC_SUCCESS,
		.opcode = DRNIC_WC_RECV,
		.byte_len = (uint32_t)(wr_id * 7),
		.qp_num = (uint32_t)(wr_id % 1000) + 1,
		.imm_data = (uint32_t)~wr_id,
		.wc_flags = DRNIC_WC_WITH_IMM,
	};
	return wc;
}

/* Field by field: the two bytes of tail padding are not copied reliably. */
static bool
ut_wc_equal(const struct drnic_wc *a, const struct drnic_wc *b)
{
	return a->wr_id == b->wr_id && a->status == b->status && a->opcode == b->opcode &&
		a->vendor_err == b->vendor_err && a->byte_len == b->byte_len &&
		a->imm_data == b->imm_data && a->qp_num == b->qp_num &&
		a->src_qp == b->src_qp && a->wc_flags == b->wc_flags &&
		a->pkey_index == b->pkey_index && a->slid == b->slid && a->sl == b->sl &&
		a->dlid_path_bits == b->dlid_path_bits;
}

static int
ut_push(struct drnic_cq *cq, uint64_t wr_id)
{
	struct drnic_wc wc = ut_wc(wr_id);

	return cq_push(cq, &wc, false);
}

static struct drnic_cq *
ut_cq(uint32_t depth, struct drnic_comp_channel *ch, struct drnic_async_queue *q)
{
	struct drnic_cq_attr attr = {
		.cqe = depth, .channel = ch, .comp_vector = 1,
		.socket_id = SOCKET_ID_ANY, .cq_context = &ut_malloc_live,
		.async_queue = q,
	};
	struct drnic_cq *cq = drnic_cq_create(&attr);

	CU_ASSERT_PTR_NOT_NULL_FATAL(cq);
	return cq;
}

static bool
ut_fd_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

static struct drnic_cq_stats
ut_stats(const struct drnic_cq *cq)
{
	struct drnic_cq_stats st;

	CU_ASSERT_EQUAL(drnic_cq_query_stats(cq, &st), 0);
	return st;
}

static void
test_bad_args(void)
{
	struct drnic_cq_attr attr = { .cqe = 0, .socket_id = SOCKET_ID_ANY };
	struct drnic_cq *cq;
	struct drnic_wc wc;
	struct drnic_cq_stats st;
	void *ctx;
	long live = ut_malloc_live;

	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_cq_create(NULL));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_cq_create(&attr));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	attr.cqe = DRNIC_CQ_MAX_DEPTH + 1;
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_cq_create(&attr));
	CU_ASSERT_EQUAL(rte_errno, ERANGE);
	attr.cqe = 16;
	ut_malloc_fail_in = 0;		/* the CQ */
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_cq_create(&attr));
	CU_ASSERT_EQUAL(rte_errno, ENOMEM);
	ut_malloc_fail_in = 1;		/* its ring */
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_cq_create(&attr));
	CU_ASSERT_EQUAL(rte_errno, ENOMEM);
	CU_ASSERT_EQUAL(ut_malloc_live, live);

	cq = ut_cq(16, NULL, NULL);
	CU_ASSERT_EQUAL(drnic_cq_poll(NULL, 1, &wc), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, -1, &wc), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 1, NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 0, NULL), 0);
	CU_ASSERT_EQUAL(drnic_cq_req_notify(NULL, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), -EINVAL);	/* no channel */
	CU_ASSERT_EQUAL(drnic_cq_resize(NULL, 4), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, DRNIC_CQ_MAX_DEPTH + 1), -ERANGE);
	ut_malloc_fail_in = 0;
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 32), -ENOMEM);
	CU_ASSERT_EQUAL(ut_stats(cq).depth, 16);
	CU_ASSERT_EQUAL(drnic_cq_query_stats(NULL, &st), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cq_query_stats(cq, NULL), -EINVAL);
	CU_ASSERT_EQUAL(cq_push(NULL, &wc, false), -EINVAL);
	CU_ASSERT_EQUAL(cq_push(cq, NULL, false), -EINVAL);
	CU_ASSERT_EQUAL(cq_push_burst(cq, NULL, 4, false), 0);
	CU_ASSERT_EQUAL(cq_get(NULL), -EINVAL);
	cq_put(NULL);
	drnic_ack_cq_events(NULL, 1);
	CU_ASSERT_EQUAL(drnic_cq_destroy(NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_comp_channel_fd(NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_get_cq_event(NULL, &cq, &ctx), -EINVAL);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(NULL, &cq, &ctx), -EINVAL);
	CU_ASSERT_EQUAL(cq_comp_vector(cq), 1);
	CU_ASSERT_EQUAL(cq_socket(cq), SOCKET_ID_ANY);
	CU_ASSERT_PTR_EQUAL(cq_context(cq), &ut_malloc_live);
	CU_ASSERT_FALSE(cq_in_error(cq));
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(ut_malloc_live, live);
}

static void
test_max_depth(void)
{
	struct drnic_cq *cq = ut_cq(DRNIC_CQ_MAX_DEPTH, NULL, NULL);
	struct drnic_wc wc;

	CU_ASSERT_EQUAL(ut_stats(cq).depth, DRNIC_CQ_MAX_DEPTH);
	CU_ASSERT_EQUAL(ut_push(cq, 42), 0);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 1, &wc), 1);
	CU_ASSERT_EQUAL(wc.wr_id, 42);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
}

/* The 1001/1002/1003 receive life cycle of the user's chapter. */
static void
test_receive_lifecycle(void)
{
	struct drnic_cq *cq = ut_cq(1024, NULL, NULL);
	struct drnic_wc in = {
		.wr_id = 1001, .status = DRNIC_WC_SUCCESS, .opcode = DRNIC_WC_RECV,
		.byte_len = 4096, .qp_num = 0x11,
	};
	struct drnic_wc out[4];

	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 4, out), 0);
	CU_ASSERT_EQUAL(cq_push(cq, &in, false), 0);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 4, out), 1);
	CU_ASSERT_EQUAL(out[0].wr_id, 1001);
	CU_ASSERT_EQUAL(out[0].byte_len, 4096);
	CU_ASSERT_EQUAL(out[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(out[0].opcode, DRNIC_WC_RECV);
	CU_ASSERT_EQUAL(out[0].qp_num, 0x11);
	CU_ASSERT_TRUE(ut_wc_equal(&out[0], &in));
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 4, out), 0);
	in.wr_id = 1002;
	in.status = DRNIC_WC_REM_ACCESS_ERR;
	CU_ASSERT_EQUAL(cq_push(cq, &in, false), 0);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 4, out), 1);
	CU_ASSERT_EQUAL(out[0].wr_id, 1002);
	CU_ASSERT_STRING_EQUAL(drnic_wc_status_str(out[0].status), "remote access error");
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
}

/* Wrap-around over many laps, with a depth that is not a power of two. */
/* DRNIC_CQ_TIMESTAMP: each CQE carries when it was pushed (ns of
 * drnic_cq_clock_ns(), between the clock read before and after the push),
 * in push order, across ring laps; a CQ without the flag refuses
 * drnic_cq_poll_ts(); unknown flags are refused. */
static void
test_timestamps(void)
{
	struct drnic_cq_attr attr = { .cqe = 4, .socket_id = SOCKET_ID_ANY,
				      .flags = DRNIC_CQ_TIMESTAMP };
	struct drnic_cq *cq, *plain = ut_cq(4, NULL, NULL);
	uint64_t before[3], after[3], ts[4], last = 0;
	struct drnic_wc out[4];
	int lap, i, n;

	attr.flags = 1u << 5;
	CU_ASSERT_PTR_NULL(drnic_cq_create(&attr));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	attr.flags = DRNIC_CQ_TIMESTAMP;
	cq = drnic_cq_create(&attr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cq);
	CU_ASSERT_EQUAL(drnic_cq_poll_ts(plain, 4, out, ts), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cq_poll_ts(cq, 4, out, NULL), -EINVAL);
	for (lap = 0; lap < 5; lap++) {
		for (i = 0; i < 3; i++) {
			before[i] = drnic_cq_clock_ns();
			CU_ASSERT_EQUAL_FATAL(ut_push(cq, (uint64_t)(lap * 3 + i)), 0);
			after[i] = drnic_cq_clock_ns();
		}
		n = drnic_cq_poll_ts(cq, 4, out, ts);
		CU_ASSERT_EQUAL_FATAL(n, 3);
		for (i = 0; i < n; i++) {
			struct drnic_wc want = ut_wc((uint64_t)(lap * 3 + i));

			CU_ASSERT_TRUE(ut_wc_equal(&out[i], &want));
			CU_ASSERT(ts[i] >= before[i] && ts[i] <= after[i]);
			CU_ASSERT(ts[i] >= last);
			last = ts[i];
		}
	}
	/* The plain poll still works on a stamping CQ. */
	CU_ASSERT_EQUAL(ut_push(cq, 99), 0);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 4, out), 1);
	CU_ASSERT_EQUAL(out[0].wr_id, 99);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(drnic_cq_destroy(plain), 0);
}

static void
test_wrap_many_laps(void)
{
	static const uint32_t depths[] = { 1, 5, 8, 33 };
	struct drnic_wc out[40];
	unsigned int d, lap;
	uint64_t next_push, next_poll;
	int i, k, n;

	for (d = 0; d < RTE_DIM(depths); d++) {
		struct drnic_cq *cq = ut_cq(depths[d], NULL, NULL);

		srand(d + 1);
		next_push = next_poll = 0;
		for (lap = 0; lap < 3000; lap++) {
			k = rand() % (int)(depths[d] - (next_push - next_poll) + 1);
			for (i = 0; i < k; i++)
				CU_ASSERT_EQUAL_FATAL(ut_push(cq, next_push++), 0);
			n = drnic_cq_poll(cq, 1 + rand() % 40, out);
			CU_ASSERT_FATAL(n >= 0);
			for (i = 0; i < n; i++) {
				struct drnic_wc want = ut_wc(next_poll++);

				CU_ASSERT_TRUE_FATAL(ut_wc_equal(&out[i], &want));
			}
		}
		while ((n = drnic_cq_poll(cq, 40, out)) > 0)
			next_poll += n;
		CU_ASSERT_EQUAL(next_poll, next_push);
		/* Many laps of the ring really happened. */
		CU_ASSERT(next_push > 100 * (uint64_t)(cq->cons_ring->mask + 1));
		CU_ASSERT_EQUAL(ut_stats(cq).completions, next_push);
		CU_ASSERT_EQUAL(ut_stats(cq).occupancy, 0);
		CU_ASSERT_EQUAL(ut_stats(cq).overflows, 0);
		CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	}
}

static void
test_poll_batches(void)
{
	struct drnic_cq *cq = ut_cq(128, NULL, NULL);
	struct drnic_wc out[128], in[100];
	uint64_t next = 0;
	int i, n, batch;

	for (i = 0; i < 100; i++)
		in[i] = ut_wc((uint64_t)i);
	CU_ASSERT_EQUAL(cq_push_burst(cq, in, 60, false), 60);
	CU_ASSERT_EQUAL(cq_push_burst(cq, in + 60, 40, false), 40);
	for (batch = 1; next < 100; batch++) {
		n = drnic_cq_poll(cq, batch, out);
		CU_ASSERT_EQUAL(n, (int)RTE_MIN((uint64_t)batch, 100 - next));
		for (i = 0; i < n; i++)
			CU_ASSERT_EQUAL(out[i].wr_id, next++);
		CU_ASSERT_EQUAL(drnic_cq_poll(cq, 0, out), 0);
	}
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 128, out), 0);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
}

static void
test_high_water(void)
{
	struct drnic_cq *cq = ut_cq(16, NULL, NULL);
	struct drnic_wc out[16];
	struct drnic_cq_stats st;
	int i;

	st = ut_stats(cq);
	CU_ASSERT_EQUAL(st.high_water, 0);
	CU_ASSERT_EQUAL(st.occupancy, 0);
	for (i = 0; i < 3; i++)
		ut_push(cq, (uint64_t)i);
	CU_ASSERT_EQUAL(ut_stats(cq).high_water, 3);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 2, out), 2);
	ut_push(cq, 3);
	st = ut_stats(cq);
	CU_ASSERT_EQUAL(st.occupancy, 2);
	CU_ASSERT_EQUAL(st.high_water, 3);
	for (i = 4; i < 9; i++)
		ut_push(cq, (uint64_t)i);
	st = ut_stats(cq);
	CU_ASSERT_EQUAL(st.occupancy, 7);
	CU_ASSERT_EQUAL(st.high_water, 7);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 16, out), 7);
	/* Stale cached consumer index must not inflate the mark. */
	for (i = 0; i < 100; i++) {
		ut_push(cq, 100);
		CU_ASSERT_EQUAL(drnic_cq_poll(cq, 16, out), 1);
	}
	st = ut_stats(cq);
	CU_ASSERT_EQUAL(st.high_water, 7);
	CU_ASSERT_EQUAL(st.occupancy, 0);
	CU_ASSERT_EQUAL(st.completions, 109);
	CU_ASSERT_EQUAL(st.depth, 16);
	/* Filling exactly to the depth is no overflow. */
	for (i = 0; i < 16; i++)
		CU_ASSERT_EQUAL(ut_push(cq, (uint64_t)i), 0);
	st = ut_stats(cq);
	CU_ASSERT_EQUAL(st.high_water, 16);
	CU_ASSERT_EQUAL(st.occupancy, 16);
	CU_ASSERT_EQUAL(st.in_error, 0);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
}

static void
test_overflow(void)
{
	struct drnic_async_queue *q = drnic_async_queue_create(8);
	struct drnic_cq *cq = ut_cq(5, NULL, q);
	struct drnic_async_event ev;
	struct drnic_wc out[10], burst[3];
	struct drnic_cq_stats st;
	int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(ut_push(cq, (uint64_t)i), 0);
	CU_ASSERT_FALSE(cq_in_error(cq));
	CU_ASSERT_FALSE(ut_fd_readable(drnic_async_queue_fd(q)));
	/* depth + 1 */
	CU_ASSERT_EQUAL(ut_push(cq, 5), -EOVERFLOW);
	CU_ASSERT_TRUE(cq_in_error(cq));
	st = ut_stats(cq);
	CU_ASSERT_EQUAL(st.overflows, 1);
	CU_ASSERT_EQUAL(st.in_error, 1);
	CU_ASSERT_EQUAL(st.completions, 5);
	CU_ASSERT_EQUAL(st.high_water, 5);
	/* Sticky: later pushes are refused and counted, nothing is raised again. */
	CU_ASSERT_EQUAL(ut_push(cq, 6), -EOVERFLOW);
	for (i = 0; i < 3; i++)
		burst[i] = ut_wc(7 + (uint64_t)i);
	CU_ASSERT_EQUAL(cq_push_burst(cq, burst, 3, true), 0);
	CU_ASSERT_EQUAL(ut_stats(cq).overflows, 3);
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), -EINVAL);	/* no channel */
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 64), -EOVERFLOW);

	/* CQ_ERR raised exactly once. */
	CU_ASSERT_TRUE(ut_fd_readable(drnic_async_queue_fd(q)));
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), 0);
	CU_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_CQ_ERR);
	CU_ASSERT_PTR_EQUAL(ev.element.cq, cq);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), -EAGAIN);

	/* Nothing was overwritten: the five are still there, in order. */
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 3, out), 3);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 10, out + 3), 2);
	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(out[i].wr_id, (uint64_t)i);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 10, out), -EOVERFLOW);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 10, out), -EOVERFLOW);
	CU_ASSERT_EQUAL(ut_push(cq, 10), -EOVERFLOW);	/* room now, still refused */

	/* The CQ_ERR event holds the CQ until acknowledged. */
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), -EBUSY);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), -EBUSY);
	drnic_ack_async_event(q, &ev);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), 0);
}

static void
test_overflow_burst_and_undelivered_err(void)
{
	struct drnic_async_queue *q = drnic_async_queue_create(8);
	struct drnic_comp_channel *ch = drnic_create_comp_channel();
	struct drnic_cq *cq = ut_cq(5, ch, q);
	struct drnic_async_event ev;
	struct drnic_wc in[8], out[8];
	int i;

	for (i = 0; i < 8; i++)
		in[i] = ut_wc((uint64_t)i);
	CU_ASSERT_PTR_EQUAL(drnic_cq_channel(cq), ch);
	CU_ASSERT_PTR_NULL(drnic_cq_channel(NULL));
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), 0);
	CU_ASSERT_EQUAL(cq_push_burst(cq, in, 8, false), 5);
	CU_ASSERT_TRUE(cq_in_error(cq));
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), -EOVERFLOW);
	CU_ASSERT_EQUAL(ut_stats(cq).events, 1);	/* the 5 published fired it */
	drnic_ack_cq_events(cq, 0);
	CU_ASSERT_EQUAL(ut_stats(cq).overflows, 1);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 8, out), 5);
	CU_ASSERT_EQUAL(out[4].wr_id, 4);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 8, out), -EOVERFLOW);
	/* CQ_ERR taken and not acknowledged: destroy refused (verbs' rule). */
	CU_ASSERT_EQUAL(drnic_get_async_event(q, &ev), 0);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), -EBUSY);
	drnic_ack_async_event(q, &ev);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);	/* its completion event purged */
	/* CQ_ERR never taken (issue 13, defect 14): no hold, and dropped. */
	cq = ut_cq(2, ch, q);
	CU_ASSERT_EQUAL(cq_push_burst(cq, in, 3, false), 2);
	CU_ASSERT_TRUE(cq_in_error(cq));
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(drnic_try_get_async_event(q, &ev), -EAGAIN);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), 0);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), 0);
}

/* A full async queue: the CQ still goes to error; the loss is counted. */
static void
test_overflow_async_queue_full(void)
{
	struct drnic_async_queue *q = drnic_async_queue_create(2);
	struct drnic_async_event other = { .event_type = DRNIC_EVENT_PORT_ERR };
	struct drnic_async_stats ast;
	struct drnic_cq *cq = ut_cq(1, NULL, q);

	CU_ASSERT_EQUAL(async_raise(q, &other), 0);
	CU_ASSERT_EQUAL(async_raise(q, &other), 0);
	CU_ASSERT_EQUAL(ut_push(cq, 0), 0);
	CU_ASSERT_EQUAL(ut_push(cq, 1), -EOVERFLOW);
	CU_ASSERT_TRUE(cq_in_error(cq));
	CU_ASSERT_EQUAL(drnic_async_queue_query_stats(q, &ast), 0);
	CU_ASSERT_EQUAL(ast.events_lost, 1);
	CU_ASSERT_EQUAL(ast.raised, 2);
	/* Nothing of this CQ waits in the queue, so it can go. */
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(drnic_async_queue_destroy(q), 0);
}

static void
test_arm_next(void)
{
	struct drnic_comp_channel *ch = drnic_create_comp_channel();
	struct drnic_cq *cq, *got;
	struct drnic_wc out[4];
	void *ctx = NULL;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	fd = drnic_comp_channel_fd(ch);
	CU_ASSERT(fd >= 0);
	cq = ut_cq(16, ch, NULL);

	/* Not armed: no event. */
	ut_push(cq, 0);
	CU_ASSERT_FALSE(ut_fd_readable(fd));
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, &ctx), -EAGAIN);

	/* A CQE already present does not fire a later arm: poll after arming. */
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), 0);
	CU_ASSERT_FALSE(ut_fd_readable(fd));
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 4, out), 1);

	/* Armed: the next CQE fires exactly one event. */
	ut_push(cq, 1);
	CU_ASSERT_TRUE(ut_fd_readable(fd));
	ut_push(cq, 2);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, &ctx), 0);
	CU_ASSERT_PTR_EQUAL(got, cq);
	CU_ASSERT_PTR_EQUAL(ctx, &ut_malloc_live);
	CU_ASSERT_FALSE(ut_fd_readable(fd));
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(ut_stats(cq).events, 1);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 4, out), 2);

	/* Two arms, two events before the application looks: both delivered. */
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), 0);
	ut_push(cq, 3);
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), 0);
	ut_push(cq, 4);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), 0);
	CU_ASSERT_TRUE(ut_fd_readable(fd));	/* one more waits */
	CU_ASSERT_EQUAL(drnic_get_cq_event(ch, &got, NULL), 0);
	CU_ASSERT_PTR_EQUAL(got, cq);
	CU_ASSERT_FALSE(ut_fd_readable(fd));
	CU_ASSERT_EQUAL(ut_stats(cq).events, 3);

	/* Unacknowledged events keep the CQ; the CQ keeps the channel. */
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), -EBUSY);
	drnic_ack_cq_events(cq, 2);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), -EBUSY);
	drnic_ack_cq_events(cq, 1);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), -EBUSY);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), 0);
}

static void
test_arm_solicited(void)
{
	struct drnic_comp_channel *ch = drnic_create_comp_channel();
	struct drnic_cq *cq = ut_cq(64, ch, NULL), *got;
	struct drnic_wc wc = ut_wc(0);
	int fd = drnic_comp_channel_fd(ch);

	/* Solicited-only: an ordinary success does not fire ... */
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 1), 0);
	CU_ASSERT_EQUAL(cq_push(cq, &wc, false), 0);
	CU_ASSERT_FALSE(ut_fd_readable(fd));
	/* ... a solicited one does, once. */
	CU_ASSERT_EQUAL(cq_push(cq, &wc, true), 0);
	CU_ASSERT_TRUE(ut_fd_readable(fd));
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), 0);
	CU_ASSERT_EQUAL(cq_push(cq, &wc, true), 0);
	CU_ASSERT_FALSE(ut_fd_readable(fd));

	/* An error completion fires a solicited-only arm too. */
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 1), 0);
	wc.status = DRNIC_WC_RETRY_EXC_ERR;
	CU_ASSERT_EQUAL(cq_push(cq, &wc, false), 0);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), 0);
	wc.status = DRNIC_WC_SUCCESS;

	/* Solicited then next: next wins. Next then solicited: next stays. */
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 1), 0);
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), 0);
	CU_ASSERT_EQUAL(cq_push(cq, &wc, false), 0);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), 0);
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), 0);
	CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 1), 0);
	CU_ASSERT_EQUAL(cq_push(cq, &wc, false), 0);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), 0);

	/* A burst fires a solicited-only arm if any CQE is solicited or failed. */
	{
		struct drnic_wc b[4] = { ut_wc(1), ut_wc(2), ut_wc(3), ut_wc(4) };

		CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 1), 0);
		CU_ASSERT_EQUAL(cq_push_burst(cq, b, 4, false), 4);
		CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), -EAGAIN);
		b[2].status = DRNIC_WC_LOC_LEN_ERR;
		CU_ASSERT_EQUAL(cq_push_burst(cq, b, 4, false), 4);
		CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), 0);
		CU_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), 0);
		CU_ASSERT_EQUAL(cq_push_burst(cq, b, 1, false), 1);
		CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), 0);
	}
	CU_ASSERT_EQUAL(ut_stats(cq).events, 6);
	drnic_ack_cq_events(cq, 6);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), 0);
}

/* Several CQs share a channel; events come out oldest first. */
static void
test_channel_shared(void)
{
	struct drnic_comp_channel *ch = drnic_create_comp_channel();
	struct drnic_cq *cq[3], *got;
	void *ctx;
	int i;

	for (i = 0; i < 3; i++) {
		struct drnic_cq_attr attr = { .cqe = 8, .channel = ch,
			.socket_id = SOCKET_ID_ANY, .cq_context = &cq[i] };

		cq[i] = drnic_cq_create(&attr);
		CU_ASSERT_PTR_NOT_NULL_FATAL(cq[i]);
		CU_ASSERT_EQUAL(drnic_cq_req_notify(cq[i], 0), 0);
	}
	ut_push(cq[2], 0);
	ut_push(cq[0], 0);
	ut_push(cq[1], 0);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, &ctx), 0);
	CU_ASSERT_PTR_EQUAL(got, cq[2]);
	CU_ASSERT_PTR_EQUAL(ctx, &cq[2]);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, &ctx), 0);
	CU_ASSERT_PTR_EQUAL(got, cq[0]);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, &ctx), 0);
	CU_ASSERT_PTR_EQUAL(got, cq[1]);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, &ctx), -EAGAIN);
	for (i = 0; i < 3; i++)
		drnic_ack_cq_events(cq[i], 1);

	/* Undelivered events are dropped with their CQ; the others stay. */
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(drnic_cq_req_notify(cq[i], 0), 0);
		ut_push(cq[i], 1);
	}
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq[1]), 0);
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), 0);
	CU_ASSERT_PTR_EQUAL(got, cq[0]);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq[2]), 0);	/* last in the FIFO */
	CU_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &got, NULL), -EAGAIN);
	drnic_ack_cq_events(cq[0], 1);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), -EBUSY);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq[0]), 0);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), 0);
}

static void
test_users(void)
{
	struct drnic_cq *cq = ut_cq(8, NULL, NULL);

	CU_ASSERT_EQUAL(cq_get(cq), 0);
	CU_ASSERT_EQUAL(cq_get(cq), 0);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), -EBUSY);
	cq_put(cq);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), -EBUSY);
	cq_put(cq);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
}

static void
test_resize(void)
{
	long live = ut_malloc_live;
	struct drnic_cq *cq = ut_cq(4, NULL, NULL);
	struct drnic_wc out[32];
	uint64_t next_push = 0, next_poll = 0;
	int i, n;

	for (i = 0; i < 3; i++)
		ut_push(cq, next_push++);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 1, out), 1);
	next_poll++;
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 1), -EINVAL);	/* 2 waiting */
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 2), 0);		/* shrink to fit */
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 7), 0);		/* replaces it */
	CU_ASSERT_EQUAL(ut_malloc_live, live + 3);
	CU_ASSERT_EQUAL(ut_stats(cq).depth, 7);
	/* 2 old + 5 new = the new depth; one more would overflow. */
	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(ut_push(cq, next_push++), 0);
	CU_ASSERT_EQUAL(ut_stats(cq).occupancy, 7);
	/* Resize again while the old ring is not drained: a chain of three. */
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 20), 0);
	for (i = 0; i < 13; i++)
		CU_ASSERT_EQUAL(ut_push(cq, next_push++), 0);
	CU_ASSERT_EQUAL(ut_malloc_live, live + 4);
	n = drnic_cq_poll(cq, 32, out);
	CU_ASSERT_EQUAL(n, 20);
	for (i = 0; i < n; i++)
		CU_ASSERT_EQUAL(out[i].wr_id, next_poll++);
	CU_ASSERT_EQUAL(ut_malloc_live, live + 2);	/* old rings freed */
	CU_ASSERT_EQUAL(ut_stats(cq).high_water, 20);
	CU_ASSERT_EQUAL(ut_push(cq, next_push++), 0);
	/* Shrink below what arrives afterwards: the new depth is enforced. */
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 2), 0);
	CU_ASSERT_EQUAL(ut_push(cq, next_push++), 0);
	CU_ASSERT_EQUAL(ut_push(cq, next_push++), -EOVERFLOW);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 32, out), 2);
	CU_ASSERT_EQUAL(out[1].wr_id, next_poll + 1);
	CU_ASSERT_EQUAL(drnic_cq_poll(cq, 32, out), -EOVERFLOW);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(ut_malloc_live, live);

	/* A resize the producer never took is freed by destroy. */
	cq = ut_cq(4, NULL, NULL);
	CU_ASSERT_EQUAL(drnic_cq_resize(cq, 9), 0);
	CU_ASSERT_EQUAL(drnic_cq_destroy(cq), 0);
	CU_ASSERT_EQUAL(ut_malloc_live, live);
}

struct ut_progress {
	struct drnic_cq *cq;
	int calls;
};

static int
ut_progress_fn(void *arg)
{
	struct ut_progress *p = arg;

	p->calls++;
	if (p->calls % 2)
		ut_push(p->cq, (uint64_t)p->calls);
	return 1;
}

static void
test_inline_progress(void)
{
	struct ut_progress p = { .cq = ut_cq(8, NULL, NULL) };
	struct drnic_wc out[4];

	cq_set_progress(p.cq, ut_progress_fn, &p);
	CU_ASSERT_EQUAL(drnic_cq_poll(p.cq, 4, out), 1);
	CU_ASSERT_EQUAL(out[0].wr_id, 1);
	CU_ASSERT_EQUAL(drnic_cq_poll(p.cq, 4, out), 0);
	CU_ASSERT_EQUAL(drnic_cq_poll(p.cq, 4, out), 1);
	CU_ASSERT_EQUAL(out[0].wr_id, 3);
	CU_ASSERT_EQUAL(p.calls, 3);
	cq_set_progress(p.cq, NULL, NULL);
	CU_ASSERT_EQUAL(drnic_cq_poll(p.cq, 4, out), 0);
	CU_ASSERT_EQUAL(p.calls, 3);
	CU_ASSERT_EQUAL(drnic_cq_destroy(p.cq), 0);
}

/* ---- two threads -------------------------------------------------------- */

#define UT_RACE_N 100000u
#define UT_TIMEOUT_MS 5000

struct ut_race {
	struct drnic_cq *cq;
	uint32_t limit;              /* CQEs the producer may have outstanding */
	bool drain;                  /* after each batch, wait until all are polled */
	_Atomic uint64_t consumed;
	_Atomic bool stop;
	uint64_t n;
	int push_errors;
};

static void
ut_pause_random(unsigned int *seed)
{
	unsigned int r = rand_r(seed) % 64;

	if (r == 0) {
		struct timespec ts = { 0, (long)(rand_r(seed) % 20000) };

		nanosleep(&ts, NULL);
	} else if (r < 8) {
		sched_yield();
	}
}

static void *
ut_race_producer(void *arg)
{
	struct ut_race *r = arg;
	struct drnic_wc b[8];
	unsigned int seed = 12345, k, i;
	uint64_t next = 0;

	while (next < r->n && !atomic_load(&r->stop)) {
		uint64_t room = r->limit - (next - atomic_load(&r->consumed));

		if (room == 0) {
			sched_yield();
			continue;
		}
		k = 1 + rand_r(&seed) % 8;
		k = (unsigned int)RTE_MIN((uint64_t)k, RTE_MIN(room, r->n - next));
		if (k == 1) {
			if (ut_push(r->cq, next) != 0)
				r->push_errors++;
			next++;
		} else {
			for (i = 0; i < k; i++)
				b[i] = ut_wc(next + i);
			if (cq_push_burst(r->cq, b, k, false) != k)
				r->push_errors++;
			next += k;
		}
		ut_pause_random(&seed);
		/* Without this a lost wake-up would be hidden by the next push;
		 * with it, the consumer must wake for this very batch. */
		while (r->drain && atomic_load(&r->consumed) != next && !atomic_load(&r->stop))
			sched_yield();
	}
	return NULL;
}

/* Arm, poll, epoll, get, ack: every CQE exactly once, no wake-up lost. */
static void
test_race_arm_poll_two_threads(void)
{
	struct drnic_comp_channel *ch = drnic_create_comp_channel();
	struct ut_race r = { .limit = 64, .n = UT_RACE_N, .drain = true };
	struct epoll_event eev = { .events = EPOLLIN }, got_ev;
	struct drnic_wc out[32];
	struct drnic_cq *got;
	uint64_t next = 0, sleeps = 0, unacked = 0;
	pthread_t th;
	int epfd, n, i, rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	r.cq = ut_cq(64, ch, NULL);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	CU_ASSERT_FATAL(epfd >= 0);
	CU_ASSERT_FATAL(epoll_ctl(epfd, EPOLL_CTL_ADD, drnic_comp_channel_fd(ch), &eev) == 0);
	CU_ASSERT_FATAL(pthread_create(&th, NULL, ut_race_producer, &r) == 0);

	while (next < r.n) {
		n = drnic_cq_poll(r.cq, 32, out);
		if (n == 0) {
			CU_ASSERT_EQUAL(drnic_cq_req_notify(r.cq, 0), 0);
			n = drnic_cq_poll(r.cq, 32, out);
		}
		if (n == 0) {
			rc = epoll_wait(epfd, &got_ev, 1, UT_TIMEOUT_MS);
			if (rc == 0) {
				CU_FAIL("lost wake-up: no event within the timeout");
				break;
			}
			if (rc < 0)
				continue;
			rc = drnic_try_get_cq_event(ch, &got, NULL);
			if (rc == -EAGAIN)
				continue;	/* spurious readiness */
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT_PTR_EQUAL(got, r.cq);
			sleeps++;
			if (++unacked == 16) {
				drnic_ack_cq_events(r.cq, 16);
				unacked = 0;
			}
			continue;
		}
		CU_ASSERT_FATAL(n > 0);
		for (i = 0; i < n; i++) {
			if (out[i].wr_id != next) {
				CU_FAIL("CQE out of order, lost or duplicated");
				next = r.n;
				break;
			}
			next++;
		}
		atomic_store(&r.consumed, next);
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(next, r.n);
	CU_ASSERT_EQUAL(r.push_errors, 0);
	CU_ASSERT_EQUAL(drnic_cq_poll(r.cq, 32, out), 0);
	printf("\n    %" PRIu64 " CQEs, %" PRIu64 " sleeps, %" PRIu64 " events signalled ",
			next, sleeps, ut_stats(r.cq).events);
	CU_ASSERT(sleeps > 0);
	CU_ASSERT_EQUAL(ut_stats(r.cq).overflows, 0);
	/* Events signalled but not yet taken are dropped by destroy. */
	while (drnic_try_get_cq_event(ch, &got, NULL) == 0)
		unacked++;
	drnic_ack_cq_events(r.cq, (unsigned int)unacked);
	CU_ASSERT_EQUAL(drnic_cq_destroy(r.cq), 0);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), 0);
	close(epfd);
}

/* Resize under a live producer: order kept, nothing lost or duplicated. */
static void
test_race_resize_two_threads(void)
{
	static const uint32_t sizes[] = { 16, 1000, 17, 64, 16, 4096 };
	struct ut_race r = { .limit = 16, .n = 200000 };
	struct drnic_wc out[32];
	uint64_t next = 0, last_resize = 0;
	unsigned int resizes = 0;
	pthread_t th;
	int n, i;

	r.cq = ut_cq(16, NULL, NULL);
	CU_ASSERT_FATAL(pthread_create(&th, NULL, ut_race_producer, &r) == 0);
	while (next < r.n) {
		n = drnic_cq_poll(r.cq, 1 + (int)(next % 32), out);
		CU_ASSERT_FATAL(n >= 0);
		if (n == 0) {
			sched_yield();
			continue;
		}
		for (i = 0; i < n; i++) {
			if (out[i].wr_id != next) {
				CU_FAIL("CQE out of order, lost or duplicated across resize");
				next = r.n;
				break;
			}
			next++;
		}
		atomic_store(&r.consumed, next);
		if (next - last_resize >= 1000) {
			CU_ASSERT_EQUAL(drnic_cq_resize(r.cq, sizes[resizes % RTE_DIM(sizes)]), 0);
			resizes++;
			last_resize = next;
		}
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(next, r.n);
	CU_ASSERT_EQUAL(r.push_errors, 0);
	CU_ASSERT(resizes >= 100);
	CU_ASSERT_FALSE(cq_in_error(r.cq));
	CU_ASSERT_EQUAL(drnic_cq_destroy(r.cq), 0);
}

static struct drnic_cq *ut_late_cq;

static pid_t ut_waiter;        /* the thread that must block first */

static void *
ut_late_producer(void *arg)
{
	(void)arg;
	/* Only once the waiter sleeps in the kernel. */
	CU_ASSERT_EQUAL(ut_wait_blocked(ut_waiter), 0);
	ut_push(ut_late_cq, 7);
	return NULL;
}

/* drnic_get_cq_event() blocks until the producer fires the event. */
static void
test_get_cq_event_blocks(void)
{
	struct drnic_comp_channel *ch = drnic_create_comp_channel();
	struct drnic_cq *got = NULL;
	struct drnic_wc out[2];
	pthread_t th;

	ut_late_cq = ut_cq(4, ch, NULL);
	CU_ASSERT_EQUAL(drnic_cq_req_notify(ut_late_cq, 0), 0);
	CU_ASSERT_EQUAL(drnic_cq_poll(ut_late_cq, 2, out), 0);
	ut_waiter = gettid();
	CU_ASSERT_FATAL(pthread_create(&th, NULL, ut_late_producer, NULL) == 0);
	CU_ASSERT_EQUAL(drnic_get_cq_event(ch, &got, NULL), 0);
	CU_ASSERT_PTR_EQUAL(got, ut_late_cq);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(drnic_cq_poll(ut_late_cq, 2, out), 1);
	CU_ASSERT_EQUAL(out[0].wr_id, 7);
	drnic_ack_cq_events(ut_late_cq, 1);
	CU_ASSERT_EQUAL(drnic_cq_destroy(ut_late_cq), 0);
	CU_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), 0);
}

static void
test_status_str(void)
{
	CU_ASSERT_STRING_EQUAL(drnic_wc_status_str(DRNIC_WC_SUCCESS), "success");
	CU_ASSERT_STRING_EQUAL(drnic_wc_status_str(DRNIC_WC_WR_FLUSH_ERR),
			"Work Request Flushed Error");
	CU_ASSERT_STRING_EQUAL(drnic_wc_status_str(DRNIC_WC_RETRY_EXC_ERR),
			"transport retry counter exceeded");
	CU_ASSERT_STRING_EQUAL(drnic_wc_status_str((enum drnic_wc_status)24), "unknown");
	CU_ASSERT_STRING_EQUAL(drnic_wc_status_str((enum drnic_wc_status)-1), "unknown");
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("cq", NULL, NULL);
	CU_ADD_TEST(s, test_bad_args);
	CU_ADD_TEST(s, test_max_depth);
	CU_ADD_TEST(s, test_receive_lifecycle);
	CU_ADD_TEST(s, test_wrap_many_laps);
	CU_ADD_TEST(s, test_timestamps);
	CU_ADD_TEST(s, test_poll_batches);
	CU_ADD_TEST(s, test_high_water);
	CU_ADD_TEST(s, test_overflow);
	CU_ADD_TEST(s, test_overflow_burst_and_undelivered_err);
	CU_ADD_TEST(s, test_overflow_async_queue_full);
	CU_ADD_TEST(s, test_arm_next);
	CU_ADD_TEST(s, test_arm_solicited);
	CU_ADD_TEST(s, test_channel_shared);
	CU_ADD_TEST(s, test_users);
	CU_ADD_TEST(s, test_resize);
	CU_ADD_TEST(s, test_inline_progress);
	CU_ADD_TEST(s, test_race_arm_poll_two_threads);
	CU_ADD_TEST(s, test_race_resize_two_threads);
	CU_ADD_TEST(s, test_get_cq_event_blocks);
	CU_ADD_TEST(s, test_status_str);
	return ut_run_all();
}
