/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic_progress_cq_wait() on a live pair (two devices on a loopback wire):
 * a thread asleep in the wait (its sleep counted before B sends) is woken by the completion of the peer's SEND and returns it; with nothing
 * to wait for, the wait returns 0 at its timeout, not before. In dedicated
 * mode (the engine lcore fires the channel), in inline mode with the
 * progress helper running (it runs the engine; the wait sleeps on the
 * channel alone), and in inline mode without a helper (the wait runs the
 * engine itself between naps: the loopback has no receive wake-up).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>

#include "test.h"
#include "rnic_fixture.h"
#include "drnic_progress.h"

struct waiter {
	struct rnic_side *s;
	struct drnic_wc wc[4];
	int rc;
};

static void *
waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->rc = drnic_progress_cq_wait(w->s->dev, w->s->cq, w->wc, 4, 10000);
	return NULL;
}

/* Until the wait has gone to sleep (armed the CQ, looked once more and
 * counted a sleep; ppoll() on the level-triggered channel follows): 0, or
 * -1 when it did not within 10 s. */
static int
wait_asleep(uint64_t sleeps_before)
{
	uint64_t t0 = rnic_now_ms();
	struct drnic_progress_stats st;

	do {
		drnic_progress_stats_get(&st);
		if (st.wait_sleeps > sleeps_before)
			return 0;
		sched_yield();
	} while (rnic_now_ms() - t0 < 10000);
	return -1;
}

static int
wait_case(enum drnic_progress_mode mode, bool helper)
{
	struct rnic_pair_opts o = { .mode = mode, .channel = true };
	struct drnic_progress_stats st0, st;
	struct drnic_recv_wr rwr = { 0 }, *rbad;
	struct drnic_send_wr swr = { 0 }, *sbad;
	struct drnic_sge rsge, ssge;
	struct drnic_config cfg;
	struct rnic_pair p;
	struct waiter w = { 0 };
	struct drnic_wc wc[4];
	pthread_t th;
	uint64_t t0, t1;
	int rc, ok = TEST_FAILED;

	printf("  %s, %s\n", mode == DRNIC_PROGRESS_INLINE ? "inline" : "dedicated",
	       helper ? "helper running" : "no helper");
	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	drnic_config_init(&cfg);
	if (helper && drnic_progress_start(p.a.dev, &cfg.progress_opts) != 0) {
		printf("progress_start failed\n");
		goto out;
	}
	drnic_progress_stats_get(&st0);

	/* Nothing to wait for: 0 at the timeout, not before. */
	t0 = rnic_now_ms();
	rc = drnic_progress_cq_wait(p.a.dev, p.a.cq, wc, 4, 50);
	t1 = rnic_now_ms();
	if (rc != 0 || t1 - t0 < 50 || t1 - t0 > 5000) {
		printf("%s:%d: an idle wait returned %d after %" PRIu64 " ms (0 after 50)\n",
		       __FILE__, __LINE__, rc, t1 - t0);
		goto stop;
	}
	drnic_progress_stats_get(&st);
	if (st.wait_timeouts != st0.wait_timeouts + 1 || st.wait_sleeps == st0.wait_sleeps) {
		printf("%s:%d: timeouts %" PRIu64 " -> %" PRIu64 ", sleeps %" PRIu64 " -> %" PRIu64
		       "\n", __FILE__, __LINE__, st0.wait_timeouts, st.wait_timeouts,
		       st0.wait_sleeps, st.wait_sleeps);
		goto stop;
	}

	/* A receive on A; a thread waits for it, asleep; B sends. */
	rsge = (struct drnic_sge){ (uint64_t)(uintptr_t)p.a.buf, 4096, drnic_mr_lkey(p.a.mr) };
	rwr.wr_id = 7;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	if (drnic_post_recv(p.a.qp, &rwr, &rbad) != 0) {
		printf("%s:%d: post_recv\n", __FILE__, __LINE__);
		goto stop;
	}
	drnic_progress_stats_get(&st0);
	w.s = &p.a;
	if (pthread_create(&th, NULL, waiter_main, &w) != 0)
		goto stop;
	if (wait_asleep(st0.wait_sleeps) != 0) {
		printf("%s:%d: the waiter never slept\n", __FILE__, __LINE__);
		pthread_join(th, NULL);
		goto stop;
	}
	rnic_fill(p.b.buf, 100, 3);
	ssge = (struct drnic_sge){ (uint64_t)(uintptr_t)p.b.buf, 100, drnic_mr_lkey(p.b.mr) };
	swr.wr_id = 8;
	swr.sg_list = &ssge;
	swr.num_sge = 1;
	swr.opcode = DRNIC_WR_SEND;
	swr.send_flags = DRNIC_SEND_SIGNALED;
	t0 = rnic_now_ms();
	rc = drnic_post_send(p.b.qp, &swr, &sbad);
	if (rc == 0)
		rc = rnic_poll(&p.b, wc, 1) == 1 && wc[0].status == DRNIC_WC_SUCCESS ? 0 : -EIO;
	pthread_join(th, NULL);
	t1 = rnic_now_ms();
	drnic_progress_stats_get(&st);
	if (rc != 0 || w.rc != 1 || w.wc[0].wr_id != 7 || w.wc[0].status != DRNIC_WC_SUCCESS ||
	    w.wc[0].opcode != DRNIC_WC_RECV || w.wc[0].byte_len != 100 ||
	    memcmp(p.a.buf, p.b.buf, 100) != 0) {
		printf("%s:%d: send %d; wait returned %d (wr_id %" PRIu64 ", status %s, "
		       "opcode %d, %u bytes)\n", __FILE__, __LINE__, rc, w.rc, w.wc[0].wr_id,
		       drnic_wc_status_str(w.wc[0].status), (int)w.wc[0].opcode,
		       w.wc[0].byte_len);
		goto stop;
	}
	/* Woken by the completion, well before its 10 s timeout. */
	if (t1 - t0 > 5000 || st.wait_sleeps == st0.wait_sleeps ||
	    st.wait_timeouts != st0.wait_timeouts) {
		printf("%s:%d: %" PRIu64 " ms; sleeps %" PRIu64 " -> %" PRIu64 ", timeouts %"
		       PRIu64 " -> %" PRIu64 "\n", __FILE__, __LINE__, t1 - t0, st0.wait_sleeps,
		       st.wait_sleeps, st0.wait_timeouts, st.wait_timeouts);
		goto stop;
	}
	/* Where only the channel can end the sleep, it did. */
	if ((mode == DRNIC_PROGRESS_DEDICATED || helper) && st.wait_events == st0.wait_events) {
		printf("%s:%d: the completion event did not end the sleep\n", __FILE__, __LINE__);
		goto stop;
	}
	ok = TEST_SUCCESS;
stop:
	if (helper)
		drnic_progress_stop();
out:
	rnic_pair_close(&p);
	return ok;
}

static int
test_progress_cq_wait(void)
{
	if (wait_case(DRNIC_PROGRESS_INLINE, true) != TEST_SUCCESS)
		return TEST_FAILED;
	if (wait_case(DRNIC_PROGRESS_INLINE, false) != TEST_SUCCESS)
		return TEST_FAILED;
	if (rte_lcore_count() > 1 && wait_case(DRNIC_PROGRESS_DEDICATED, false) != TEST_SUCCESS)
		return TEST_FAILED;
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(rnic_progress_wait_autotest, DRNIC_TEST_FAST, test_progress_cq_wait);
