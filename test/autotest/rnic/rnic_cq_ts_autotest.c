/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion timestamps (DRNIC_CQ_TIMESTAMP) with real engines, in both
 * progress modes: each CQE's time lies between the device clock read before
 * its WR was posted and after it was polled, the times of a QP's
 * completions increase, and causality holds across the two sides: B's
 * receive completes before the ACK that completes A's SEND, so its time is
 * earlier (one clock, the invariant TSC, in every engine and thread).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drnic_cq.h"

#include "test.h"
#include "rnic_fixture.h"

/* One completion of @p s's stamping CQ and its time, within 5 s. */
static int
ts_poll(struct rnic_side *s, struct drnic_wc *wc, uint64_t *ts)
{
	uint64_t deadline = rnic_now_ms() + 5000;
	int rc;

	do {
		rc = drnic_cq_poll_ts(s->cq, 1, wc, ts);
		if (rc != 0)
			return rc;
		drnic_device_progress(s->dev);
	} while (rnic_now_ms() < deadline);
	return 0;
}

static int
ts_body(struct rnic_pair *p)
{
	struct drnic_sge sge = { (uintptr_t)p->a.buf, 64, drnic_mr_lkey(p->a.mr) };
	struct drnic_sge rsge = { (uintptr_t)p->b.buf, 64, drnic_mr_lkey(p->b.mr) };
	struct drnic_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct drnic_send_wr wr = { 0 }, *bad;
	uint64_t before, after, ts, last = 0, rts;
	struct drnic_wc wc;
	int i;

	TEST_ASSERT_EQUAL(drnic_cq_poll_ts(p->a.cq, 1, &wc, NULL), -EINVAL, "NULL ts array");
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_RDMA_WRITE;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 4096;
	wr.wr.rdma.rkey = drnic_mr_rkey(p->b.mr);
	for (i = 0; i < 3; i++) {
		wr.wr_id = (uint64_t)i;
		before = drnic_cq_clock_ns();
		TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &wr, &bad), "post WRITE %d", i);
		TEST_ASSERT_EQUAL(ts_poll(&p->a, &wc, &ts), 1, "WRITE %d completion", i);
		after = drnic_cq_clock_ns();
		TEST_ASSERT(wc.wr_id == (uint64_t)i && wc.status == DRNIC_WC_SUCCESS, "WRITE %d: %s",
			    i, drnic_wc_status_str(wc.status));
		TEST_ASSERT(ts >= before && ts <= after, "WRITE %d at %lu, outside [%lu, %lu]", i,
			    (unsigned long)ts, (unsigned long)before, (unsigned long)after);
		TEST_ASSERT(ts > last, "WRITE %d's time does not increase", i);
		last = ts;
	}
	/* A SEND: B's receive completes before A's SEND does. */
	TEST_ASSERT_SUCCESS(drnic_post_recv(p->b.qp, &rwr, &rbad), "post_recv");
	wr.wr_id = 8;
	wr.opcode = DRNIC_WR_SEND;
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &wr, &bad), "post SEND");
	TEST_ASSERT_EQUAL(ts_poll(&p->a, &wc, &ts), 1, "SEND completion");
	TEST_ASSERT(wc.wr_id == 8 && wc.status == DRNIC_WC_SUCCESS, "SEND: %s",
		    drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(ts_poll(&p->b, &wc, &rts), 1, "receive completion");
	TEST_ASSERT(wc.wr_id == 9 && wc.opcode == DRNIC_WC_RECV, "receive");
	TEST_ASSERT(rts > last && rts < ts, "receive at %lu, SEND at %lu", (unsigned long)rts,
		    (unsigned long)ts);
	return TEST_SUCCESS;
}

static int
ts_run(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode, .cq_flags = DRNIC_CQ_TIMESTAMP };
	struct rnic_pair p;
	int rc;

	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	rc = ts_body(&p);
	rnic_pair_close(&p);
	return rc;
}

static int
rnic_cq_ts_inline(void)
{
	return ts_run(DRNIC_PROGRESS_INLINE);
}

static int
rnic_cq_ts_dedicated(void)
{
	return ts_run(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_cq_timestamp_inline_autotest, DRNIC_TEST_FAST, rnic_cq_ts_inline);
DRNIC_TEST_REGISTER(rnic_cq_timestamp_dedicated_autotest, DRNIC_TEST_FAST, rnic_cq_ts_dedicated);
