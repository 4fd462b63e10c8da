/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/verbs/srq.c: create/modify/query/destroy checks, posting
 * (limits, a full queue, bad_wr), the engines' side verbs_srq_take() (order,
 * wrap-around, the limit event once, several takers at once with a poster),
 * and the QP side: a QP created on an SRQ holds it and has no receive queue.
 * XRC SRQs: their domain and CQ, their numbers in the device's table.
 */
#include <pthread.h>
#include <sched.h>

#include "lib/verbs/srq.c"
#include "lib/verbs/post.c"   /* verbs_rq_post() */
#include "lib/verbs/xrc.c"    /* XRC domains, for XRC SRQs */
#include "lib/verbs/mr.c"     /* verbs_sge_to_host() */

#include "test/unit/lib/verbs/ut_verbs_stubs.h"
#include "ut_common.h"

/* qp.c's CQ progress hook (qp.c is not in this binary). */
int
verbs_inline_progress(void *arg)
{
	RTE_SET_USED(arg);
	return 0;
}

static struct drnic_device *dev;
static struct drnic_pd pd;

static struct drnic_srq *
ut_srq_new(uint32_t max_wr, uint32_t max_sge, uint32_t limit)
{
	struct drnic_srq_init_attr ia = { .attr = { max_wr, max_sge, limit } };

	return drnic_create_srq(&pd, &ia);
}

static int
ut_post(struct drnic_srq *srq, uint64_t wr_id, uint32_t len)
{
	struct drnic_sge sge = { 0x1000 + wr_id, len, 7 };
	struct drnic_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return drnic_post_srq_recv(srq, &wr, &bad);
}

static void
test_create_checks(void)
{
	struct drnic_srq_init_attr ia = { .attr = { 10, 2, 0 }, .srq_context = &pd };
	struct drnic_srq_attr a = { 0 };
	struct drnic_srq *srq;
	long live = ut_live;

	CU_ASSERT_PTR_NULL(drnic_create_srq(NULL, &ia));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(drnic_create_srq(&pd, NULL));
	CU_ASSERT_PTR_NULL(ut_srq_new(0, 1, 0));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(ut_srq_new(dev->cfg.max_qp_wr + 1, 1, 0));
	CU_ASSERT_PTR_NULL(ut_srq_new(8, dev->cfg.max_sge + 1, 0));
	CU_ASSERT_PTR_NULL(ut_srq_new(8, 1, 9));
	CU_ASSERT_EQUAL(ut_live, live);
	srq = drnic_create_srq(&pd, &ia);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srq);
	CU_ASSERT_EQUAL(ia.attr.max_wr, 16);   /* rounded up */
	CU_ASSERT_EQUAL(ia.attr.max_sge, 2);
	CU_ASSERT_PTR_EQUAL(drnic_srq_context(srq), &pd);
	CU_ASSERT_EQUAL(drnic_query_srq(srq, &a), 0);
	CU_ASSERT_EQUAL(a.max_wr, 16);
	CU_ASSERT_EQUAL(a.max_sge, 2);
	CU_ASSERT_EQUAL(a.srq_limit, 0);
	CU_ASSERT_EQUAL(drnic_query_srq(srq, NULL), -EINVAL);
	/* A limit above max_wr is refused. */
	a.srq_limit = 17;
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_LIMIT), -EINVAL);
	a.srq_limit = 16;
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_LIMIT), 0);
	CU_ASSERT_EQUAL(drnic_query_srq(srq, &a), 0);
	CU_ASSERT_EQUAL(a.srq_limit, 16);
	CU_ASSERT_EQUAL(drnic_destroy_srq(srq), 0);
	CU_ASSERT_EQUAL(drnic_destroy_srq(srq), -EINVAL);
	CU_ASSERT_EQUAL(drnic_query_srq(srq, &a), -EINVAL);
	CU_ASSERT_EQUAL(ut_live, live);
	CU_ASSERT_EQUAL(atomic_load(&pd.refs), 0);
}

static void
test_post_and_take(void)
{
	struct drnic_srq *srq = ut_srq_new(4, 2, 0);
	struct drnic_sge sge[3] = { { 1, 10, 7 }, { 2, 20, 7 }, { 3, 30, 7 } };
	struct drnic_recv_wr wr[3], *bad;
	union {
		struct verbs_recv_wqe w;
		uint8_t room[sizeof(struct verbs_recv_wqe) + 4 * sizeof(struct drnic_sge)];
	} t;
	uint64_t next = 0;
	int i, round;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srq);
	CU_ASSERT_FALSE(verbs_srq_take(srq, &t.w));
	/* Three SGEs where two fit: -EINVAL, bad_wr at it, the one before posted. */
	memset(wr, 0, sizeof(wr));
	wr[0] = (struct drnic_recv_wr){ .wr_id = 100, .sg_list = sge, .num_sge = 2, .next = &wr[1] };
	wr[1] = (struct drnic_recv_wr){ .wr_id = 101, .sg_list = sge, .num_sge = 3 };
	CU_ASSERT_EQUAL(drnic_post_srq_recv(srq, wr, &bad), -EINVAL);
	CU_ASSERT_PTR_EQUAL(bad, &wr[1]);
	CU_ASSERT_TRUE_FATAL(verbs_srq_take(srq, &t.w));
	CU_ASSERT_EQUAL(t.w.wr_id, 100);
	CU_ASSERT_EQUAL(t.w.num_sge, 2);
	CU_ASSERT_EQUAL(t.w.length, 30);
	CU_ASSERT_EQUAL(t.w.sge[1].addr, 2);
	CU_ASSERT_FALSE(verbs_srq_take(srq, &t.w));
	CU_ASSERT_EQUAL(drnic_post_srq_recv(NULL, wr, &bad), -EINVAL);
	CU_ASSERT_EQUAL(drnic_post_srq_recv(srq, NULL, &bad), -EINVAL);
	/* Full at 4: the fifth is -ENOMEM. Taken in order across the wrap. */
	for (round = 0; round < 10; round++) {
		for (i = 0; i < 4; i++)
			CU_ASSERT_EQUAL(ut_post(srq, next + (uint64_t)i, 8), 0);
		CU_ASSERT_EQUAL(ut_post(srq, 999, 8), -ENOMEM);
		for (i = 0; i < 4; i++) {
			CU_ASSERT_TRUE_FATAL(verbs_srq_take(srq, &t.w));
			CU_ASSERT_EQUAL(t.w.wr_id, next + (uint64_t)i);
			CU_ASSERT_EQUAL(t.w.sge[0].addr, 0x1000 + next + (uint64_t)i);
		}
		CU_ASSERT_FALSE(verbs_srq_take(srq, &t.w));
		next += 4;
	}
	CU_ASSERT_EQUAL(drnic_destroy_srq(srq), 0);
}

/* The limit: raised once, when a take leaves fewer than it; then disarmed. */
static void
test_limit(void)
{
	struct drnic_srq *srq = ut_srq_new(8, 1, 3);
	struct drnic_srq_attr a;
	union {
		struct verbs_recv_wqe w;
		uint8_t room[sizeof(struct verbs_recv_wqe) + sizeof(struct drnic_sge)];
	} t;
	int i, raised = ut_async_raised;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srq);
	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(ut_post(srq, (uint64_t)i, 8), 0);
	CU_ASSERT_TRUE(verbs_srq_take(srq, &t.w));    /* 4 left */
	CU_ASSERT_TRUE(verbs_srq_take(srq, &t.w));    /* 3 left: not below 3 */
	CU_ASSERT_EQUAL(ut_async_raised, raised);
	CU_ASSERT_TRUE(verbs_srq_take(srq, &t.w));    /* 2 left */
	CU_ASSERT_EQUAL(ut_async_raised, raised + 1);
	CU_ASSERT_EQUAL(ut_last_event.event_type, DRNIC_EVENT_SRQ_LIMIT_REACHED);
	CU_ASSERT_PTR_EQUAL(ut_last_event.element.srq, srq);
	CU_ASSERT_EQUAL(drnic_query_srq(srq, &a), 0);
	CU_ASSERT_EQUAL(a.srq_limit, 0);
	CU_ASSERT_TRUE(verbs_srq_take(srq, &t.w));
	CU_ASSERT_EQUAL(ut_async_raised, raised + 1);
	/* Armed again: the next take below it raises it again. */
	a.srq_limit = 2;
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_LIMIT), 0);
	CU_ASSERT_TRUE(verbs_srq_take(srq, &t.w));    /* 0 left */
	CU_ASSERT_EQUAL(ut_async_raised, raised + 2);
	/* An event taken and not acknowledged holds the SRQ. */
	atomic_store(&srq->events_unacked, 1);
	CU_ASSERT_EQUAL(drnic_destroy_srq(srq), -EBUSY);
	atomic_store(&srq->events_unacked, 0);
	CU_ASSERT_EQUAL(drnic_destroy_srq(srq), 0);
}

/* Two engines take while the application posts: every WQE is taken exactly
 * once, and each taker sees its WQEs in posting order. */
#define UT_TAKE_N 200000u
static struct drnic_srq *ut_mt_srq;
static uint8_t ut_seen[UT_TAKE_N];
static atomic_uint ut_mt_taken;
static unsigned int ut_mt_n;              /* WRs the takers take in all */
static atomic_uint ut_taker_epoch[2];     /* takes tried by each taker */
static atomic_bool ut_takers_done;

/* Taker @p arg (0 or 1): takes until ut_mt_n are taken; each try is a step. */
static void *
ut_taker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	union {
		struct verbs_recv_wqe w;
		uint8_t room[sizeof(struct verbs_recv_wqe) + sizeof(struct drnic_sge)];
	} t;
	uint64_t last = 0;
	bool any = false;
	long bad = 0;

	while (atomic_load(&ut_mt_taken) < ut_mt_n) {
		bool got = verbs_srq_take(ut_mt_srq, &t.w);

		atomic_fetch_add(&ut_taker_epoch[me], 1);   /* a step ended */
		if (!got) {
			sched_yield();
			continue;
		}
		if (t.w.wr_id >= ut_mt_n || (any && t.w.wr_id <= last) ||
		    t.w.sge[0].addr != 0x1000 + t.w.wr_id)
			bad++;
		else
			ut_seen[t.w.wr_id]++;
		last = t.w.wr_id;
		any = true;
		atomic_fetch_add(&ut_mt_taken, 1);
	}
	return (void *)bad;
}

static void
test_takers_and_poster(void)
{
	pthread_t th[2];
	void *bad[2];
	uint64_t id = 0;
	unsigned int i, twice = 0, never = 0;

	ut_mt_srq = ut_srq_new(64, 1, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ut_mt_srq);
	memset(ut_seen, 0, sizeof(ut_seen));
	atomic_store(&ut_mt_taken, 0);
	ut_mt_n = UT_TAKE_N;
	for (i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, ut_taker,
						     (void *)(uintptr_t)i), 0);
	while (id < UT_TAKE_N) {
		int rc = ut_post(ut_mt_srq, id, 8);

		if (rc == 0)
			id++;
		else if (rc == -ENOMEM)
			sched_yield();
		else
			break;
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], &bad[i]);
	CU_ASSERT_EQUAL(id, UT_TAKE_N);
	CU_ASSERT_PTR_NULL(bad[0]);
	CU_ASSERT_PTR_NULL(bad[1]);
	for (i = 0; i < UT_TAKE_N; i++) {
		twice += ut_seen[i] > 1;
		never += ut_seen[i] == 0;
	}
	CU_ASSERT_EQUAL(twice, 0);
	CU_ASSERT_EQUAL(never, 0);
	CU_ASSERT_EQUAL(atomic_load(&ut_mt_taken), UT_TAKE_N);
	CU_ASSERT_EQUAL(drnic_destroy_srq(ut_mt_srq), 0);
}

/*
 * An XRC SRQ needs a live XRC domain of the device and a CQ on engine 0; it
 * gets a number (not 0) the engines find it by, holds its CQ and its
 * domain, and makes its CQ run the engines when polled in inline mode.
 * Destroying it takes it out of the table and fences the engines.
 */
static void
test_xrc_srq(void)
{
	struct ut_cq cq = { 0 }, cq1 = { .vector = 1 };
	struct drnic_srq_init_attr ia = { .attr = { 4, 1, 0 }, .srq_type = DRNIC_SRQT_XRC };
	struct drnic_srq *a, *b, *basic;
	struct drnic_xrcd *x;
	uint32_t na = 0, nb = 0;
	int fences;

	CU_ASSERT_EQUAL(handle_add(&cq, HANDLE_CQ), 0);
	CU_ASSERT_EQUAL(handle_add(&cq1, HANDLE_CQ), 0);
	x = drnic_open_xrcd(dev, -1, O_CREAT);
	CU_ASSERT_PTR_NOT_NULL_FATAL(x);
	CU_ASSERT_PTR_NULL(drnic_create_srq(&pd, &ia));       /* no domain */
	ia.xrcd = x;
	CU_ASSERT_PTR_NULL(drnic_create_srq(&pd, &ia));       /* no CQ */
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	ia.cq = (struct drnic_cq *)&cq1;
	dev->nb_engines = 2;
	CU_ASSERT_PTR_NULL(drnic_create_srq(&pd, &ia));       /* CQ not on engine 0 */
	dev->nb_engines = 1;
	ia.srq_type = (enum drnic_srq_type)2;
	ia.cq = (struct drnic_cq *)&cq;
	CU_ASSERT_PTR_NULL(drnic_create_srq(&pd, &ia));       /* tag matching */
	ia.srq_type = DRNIC_SRQT_XRC;
	CU_ASSERT_EQUAL(cq.users, 0);
	dev->cfg.progress = DRNIC_PROGRESS_INLINE;
	a = drnic_create_srq(&pd, &ia);
	b = drnic_create_srq(&pd, &ia);
	dev->cfg.progress = DRNIC_PROGRESS_DEDICATED;
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(cq.users, 2);
	CU_ASSERT_PTR_EQUAL(cq.progress, verbs_inline_progress);
	CU_ASSERT_EQUAL(drnic_srq_num(a, &na), 0);
	CU_ASSERT_EQUAL(drnic_srq_num(b, &nb), 0);
	CU_ASSERT_EQUAL(drnic_srq_num(a, NULL), -EINVAL);
	CU_ASSERT(na != 0 && nb != 0 && na != nb);
	CU_ASSERT_PTR_EQUAL(verbs_srq_lookup(dev, na), a);
	CU_ASSERT_PTR_EQUAL(verbs_srq_lookup(dev, nb), b);
	CU_ASSERT_PTR_NULL(verbs_srq_lookup(dev, na + dev->srq_tab_size));   /* same slot */
	CU_ASSERT_EQUAL(drnic_close_xrcd(x), -EBUSY);
	basic = ut_srq_new(4, 1, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(basic);
	CU_ASSERT_EQUAL(drnic_srq_num(basic, &nb), -EINVAL);
	CU_ASSERT_EQUAL(drnic_destroy_srq(basic), 0);
	fences = ut_fences;
	dev->engines_attached = true;
	CU_ASSERT_EQUAL(drnic_destroy_srq(a), 0);
	dev->engines_attached = false;
	CU_ASSERT_EQUAL(ut_fences, fences + 1);
	CU_ASSERT_PTR_NULL(verbs_srq_lookup(dev, na));
	CU_ASSERT_EQUAL(cq.users, 1);
	CU_ASSERT_EQUAL(drnic_destroy_srq(b), 0);
	CU_ASSERT_EQUAL(cq.users, 0);
	CU_ASSERT_EQUAL(drnic_close_xrcd(x), 0);
	CU_ASSERT_EQUAL(drnic_close_xrcd(x), -EINVAL);
	ia.xrcd = x;                                          /* closed */
	CU_ASSERT_PTR_NULL(drnic_create_srq(&pd, &ia));
	CU_ASSERT_EQUAL(atomic_load(&pd.refs), 0);
	handle_take(&cq, HANDLE_CQ);
	handle_take(&cq1, HANDLE_CQ);
}

/*
 * Resizing: only growing, to a power of two; never below the WRs posted and
 * not taken, nor above max_srq_wr; a limit against the new size; the WRs
 * waiting keep their order and contents; the old ring goes after a fence.
 */
static void
test_resize(void)
{
	union {
		struct verbs_recv_wqe w;
		uint8_t room[sizeof(struct verbs_recv_wqe) + 2 * sizeof(struct drnic_sge)];
	} t;
	struct drnic_srq *srq = ut_srq_new(4, 2, 0);
	struct drnic_srq_attr a = { 0 };
	int fences = ut_fences;
	uint64_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srq);
	/* Full at 4, with the ring wrapped: take 2, post 2 more. */
	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(ut_post(srq, i, 8), 0);
	CU_ASSERT_TRUE(verbs_srq_take(srq, &t.w));
	CU_ASSERT_TRUE(verbs_srq_take(srq, &t.w));
	CU_ASSERT_EQUAL(ut_post(srq, 4, 8), 0);
	CU_ASSERT_EQUAL(ut_post(srq, 5, 8), 0);
	CU_ASSERT_EQUAL(ut_post(srq, 6, 8), -ENOMEM);
	a.max_wr = 3;                   /* 4 are waiting */
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_MAX_WR), -EINVAL);
	a.max_wr = dev->cfg.max_qp_wr + 1;
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_MAX_WR), -EINVAL);
	a.max_wr = 0;
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_MAX_WR), -EINVAL);
	a.max_wr = 10;
	a.srq_limit = 17;               /* above the new size, 16 */
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_MAX_WR | DRNIC_SRQ_LIMIT), -EINVAL);
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, 1 << 2), -EINVAL);
	CU_ASSERT_EQUAL(ut_fences, fences);
	/* Same size or smaller (and not below what waits): nothing changes. */
	a.max_wr = 4;
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_MAX_WR), 0);
	CU_ASSERT_EQUAL(ut_fences, fences);
	/* Grow to 16 (10 rounded up) and arm the limit at 12 at once. */
	a.max_wr = 10;
	a.srq_limit = 12;
	dev->engines_attached = true;
	CU_ASSERT_EQUAL(drnic_modify_srq(srq, &a, DRNIC_SRQ_MAX_WR | DRNIC_SRQ_LIMIT), 0);
	dev->engines_attached = false;
	CU_ASSERT_EQUAL(ut_fences, fences + 1);
	CU_ASSERT_EQUAL(drnic_query_srq(srq, &a), 0);
	CU_ASSERT_EQUAL(a.max_wr, 16);
	CU_ASSERT_EQUAL(a.srq_limit, 12);
	CU_ASSERT_EQUAL(srq->rq.size, 16);
	/* Room for 12 more; the 4 waiting come first, in order, intact. */
	for (i = 6; i < 18; i++)
		CU_ASSERT_EQUAL(ut_post(srq, i, 8), 0);
	CU_ASSERT_EQUAL(ut_post(srq, 18, 8), -ENOMEM);
	for (i = 2; i < 18; i++) {
		CU_ASSERT_TRUE_FATAL(verbs_srq_take(srq, &t.w));
		CU_ASSERT_EQUAL(t.w.wr_id, i);
		CU_ASSERT_EQUAL(t.w.sge[0].addr, 0x1000 + i);
		CU_ASSERT_EQUAL(t.w.length, 8);
	}
	CU_ASSERT_FALSE(verbs_srq_take(srq, &t.w));
	CU_ASSERT_EQUAL(drnic_destroy_srq(srq), 0);
}

/* Takers running while the poster grows the SRQ step by step (4 to 1024):
 * every WR is taken exactly once, in order per taker, with its contents.
 * The fence waits until each taker has passed a take boundary, as
 * engine_dev_fence() waits for each engine's step to end. */
#define UT_RESIZE_N 100000u

static void
ut_wait_takers(void)
{
	unsigned int e[2] = { atomic_load(&ut_taker_epoch[0]), atomic_load(&ut_taker_epoch[1]) };
	unsigned int i;

	for (i = 0; i < 2; i++)
		while (atomic_load(&ut_taker_epoch[i]) == e[i] && !atomic_load(&ut_takers_done))
			sched_yield();
}

static void
test_resize_under_takers(void)
{
	struct drnic_srq_attr a = { 0 };
	unsigned int i, twice = 0, never = 0, resizes = 0;
	pthread_t th[2];
	void *bad[2];
	uint64_t id = 0;

	ut_mt_srq = ut_srq_new(4, 1, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ut_mt_srq);
	memset(ut_seen, 0, sizeof(ut_seen));
	atomic_store(&ut_mt_taken, 0);
	atomic_store(&ut_takers_done, false);
	ut_mt_n = UT_RESIZE_N;
	ut_fence_hook = ut_wait_takers;
	dev->engines_attached = true;
	for (i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, ut_taker,
						     (void *)(uintptr_t)i), 0);
	while (id < UT_RESIZE_N) {
		int rc = ut_post(ut_mt_srq, id, 8);

		if (rc == 0) {
			id++;
			if (id % 8000 == 0 && ut_mt_srq->max_wr < dev->cfg.max_qp_wr) {
				a.max_wr = ut_mt_srq->max_wr * 2;
				CU_ASSERT_EQUAL(drnic_modify_srq(ut_mt_srq, &a,
								 DRNIC_SRQ_MAX_WR), 0);
				resizes++;
			}
		} else if (rc == -ENOMEM) {
			sched_yield();
		} else {
			break;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], &bad[i]);
	atomic_store(&ut_takers_done, true);
	ut_fence_hook = NULL;
	dev->engines_attached = false;
	CU_ASSERT_EQUAL(id, UT_RESIZE_N);
	CU_ASSERT_EQUAL(resizes, 8);           /* 4 -> 1024, max_srq_wr */
	CU_ASSERT_EQUAL(ut_mt_srq->max_wr, 1024);
	CU_ASSERT_PTR_NULL(bad[0]);
	CU_ASSERT_PTR_NULL(bad[1]);
	for (i = 0; i < UT_RESIZE_N; i++) {
		twice += ut_seen[i] > 1;
		never += ut_seen[i] == 0;
	}
	CU_ASSERT_EQUAL(twice, 0);
	CU_ASSERT_EQUAL(never, 0);
	CU_ASSERT_EQUAL(drnic_destroy_srq(ut_mt_srq), 0);
}

static int
ut_setup(void)
{
	dev = ut_dev_new(1, 8);
	memset(&pd, 0, sizeof(pd));
	pd.dev = dev;
	return 0;
}

static int
ut_teardown(void)
{
	ut_dev_free(dev);
	return 0;
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("srq", ut_setup, ut_teardown);
	CU_ADD_TEST(s, test_create_checks);
	CU_ADD_TEST(s, test_post_and_take);
	CU_ADD_TEST(s, test_limit);
	CU_ADD_TEST(s, test_takers_and_poster);
	CU_ADD_TEST(s, test_xrc_srq);
	CU_ADD_TEST(s, test_resize);
	CU_ADD_TEST(s, test_resize_under_takers);
	return ut_run_all();
}
