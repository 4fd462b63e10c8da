/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receiver not ready: a SEND that finds no receive WQE is RNR-NAKed; with
 * rnr_retry 7 the requester waits and retries until a receive is posted,
 * then the message arrives intact; with rnr_retry 0 it fails at once with
 * RNR_RETRY_EXC_ERR. A peer that stopped answering (QP in ERR) ends the
 * sender's WR with RETRY_EXC_ERR after retry_cnt timeouts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_lcore.h>

#include "test.h"
#include "rnic_fixture.h"

static int
post_send(struct rnic_side *s, uint64_t id, uint32_t len)
{
	struct drnic_sge sge = { (uintptr_t)s->buf, len, drnic_mr_lkey(s->mr) };
	struct drnic_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				    .opcode = DRNIC_WR_SEND, .send_flags = DRNIC_SEND_SIGNALED };
	struct drnic_send_wr *bad;

	return drnic_post_send(s->qp, &wr, &bad);
}

static int
post_recv(struct rnic_side *s, uint64_t id, uint32_t len)
{
	struct drnic_sge sge = { (uintptr_t)s->buf, len, drnic_mr_lkey(s->mr) };
	struct drnic_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return drnic_post_recv(s->qp, &wr, &bad);
}

/*
 * Drive both sides until B has RNR-NAKed @p naks times, polling A's CQ all
 * along: 0 when it did with no completion at A, 1 when A completed
 * something, -ETIMEDOUT after 5 s.
 */
static int
rnr_naks_without_completion(struct rnic_pair *p, uint64_t naks)
{
	uint64_t deadline = rnic_now_ms() + 5000;
	struct drnic_qp_stats qb;
	struct drnic_wc wc;

	do {
		if (drnic_cq_poll(p->a.cq, 1, &wc) != 0)
			return 1;
		drnic_device_progress(p->a.dev);
		drnic_device_progress(p->b.dev);
		drnic_qp_stats_get(p->b.qp, &qb);
		if (qb.drops[DRNIC_ENGINE_DROP_RNR] >= naks)
			return drnic_cq_poll(p->a.cq, 1, &wc) != 0 ? 1 : 0;
	} while (rnic_now_ms() < deadline);
	return -ETIMEDOUT;
}

static int
rnr_forever_body(struct rnic_pair *p)
{
	struct drnic_qp_stats qa, qb;
	struct drnic_engine_stats st;
	struct drnic_wc wc;

	rnic_fill(p->a.buf, 3000, 9);
	memset(p->b.buf, 0, 3000);
	TEST_ASSERT_SUCCESS(post_send(&p->a, 1, 3000), "post_send");
	/* No receive: three RNR NAKs (three waits and resends), and nothing
	 * completes at either side meanwhile. */
	TEST_ASSERT_SUCCESS(rnr_naks_without_completion(p, 3),
			    "a completion (1) or no RNR NAKs (-ETIMEDOUT) without a receive WQE");
	TEST_ASSERT_EQUAL(drnic_cq_poll(p->b.cq, 1, &wc), 0, "a receive completion without a WQE");
	drnic_engine_stats_get(p->b.dev, 0, &st);
	TEST_ASSERT(st.drops[DRNIC_ENGINE_DROP_RNR] >= 3, "engine RNR count %llu",
		    (unsigned long long)st.drops[DRNIC_ENGINE_DROP_RNR]);
	TEST_ASSERT_SUCCESS(post_recv(&p->b, 2, 4096), "post_recv");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "the SEND after the receive was posted");
	TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "%s", drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.wr_id, 1, "wr_id");
	TEST_ASSERT_EQUAL(rnic_poll(&p->b, &wc, 1), 1, "the receive after RNR");
	TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "%s", drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.byte_len, 3000, "byte_len");
	TEST_ASSERT(memcmp(p->a.buf, p->b.buf, 3000) == 0, "received bytes differ");
	printf("RNR NAKs before the receive was posted: %llu\n",
	       (unsigned long long)st.drops[DRNIC_ENGINE_DROP_RNR]);
	drnic_qp_stats_get(p->a.qp, &qa);
	drnic_qp_stats_get(p->b.qp, &qb);
	TEST_ASSERT(qa.rnr_naks_rx > 0, "A heard no RNR NAK");
	TEST_ASSERT(qa.retransmits >= qa.rnr_naks_rx, "retransmits %llu < rnr_naks_rx %llu",
		    (unsigned long long)qa.retransmits, (unsigned long long)qa.rnr_naks_rx);
	TEST_ASSERT(qb.naks_tx >= qa.rnr_naks_rx, "naks_tx %llu < rnr_naks_rx %llu",
		    (unsigned long long)qb.naks_tx, (unsigned long long)qa.rnr_naks_rx);
	TEST_ASSERT(qb.drops[DRNIC_ENGINE_DROP_RNR] > 0, "B's QP counted no RNR drop");
	TEST_ASSERT_EQUAL(qa.wqes, 1 + qa.retransmits, "WQE starts");
	TEST_ASSERT(qa.acks_rx > 0, "A heard no ACK");
	return TEST_SUCCESS;
}

static int
rnr_none_body(struct rnic_pair *p)
{
	struct drnic_wc wc;

	memset(&wc, 0, sizeof(wc));
	TEST_ASSERT_SUCCESS(post_send(&p->a, 5, 100), "post_send");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "rnr_retry 0: no completion");
	TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_RNR_RETRY_EXC_ERR, "rnr_retry 0: %s",
			  drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.wr_id, 5, "wr_id");
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(p->a.qp), "qp_num");
	TEST_ASSERT_EQUAL(drnic_qp_state(p->a.qp), DRNIC_QPS_ERR, "QP %s",
			  drnic_qp_state_str(drnic_qp_state(p->a.qp)));
	return TEST_SUCCESS;
}

static int
peer_gone_body(struct rnic_pair *p)
{
	struct drnic_qp_attr at = { .qp_state = DRNIC_QPS_ERR };
	struct drnic_qp_stats qs;
	struct drnic_wc wc[2];
	struct timespec t0, t1;
	double ms;

	TEST_ASSERT_SUCCESS(drnic_modify_qp(p->b.qp, &at, DRNIC_QP_STATE), "B to ERR");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	TEST_ASSERT_SUCCESS(post_send(&p->a, 7, 100), "post_send");
	TEST_ASSERT_SUCCESS(post_send(&p->a, 8, 100), "post_send");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, wc, 2), 2, "peer gone: two completions");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	TEST_ASSERT_EQUAL(wc[0].wr_id, 7, "first completion");
	TEST_ASSERT_EQUAL(wc[0].status, DRNIC_WC_RETRY_EXC_ERR, "%s",
			  drnic_wc_status_str(wc[0].status));
	TEST_ASSERT_EQUAL(wc[1].wr_id, 8, "second completion");
	TEST_ASSERT_EQUAL(wc[1].status, DRNIC_WC_WR_FLUSH_ERR, "%s",
			  drnic_wc_status_str(wc[1].status));
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	printf("RETRY_EXC_ERR after %.1f ms (8 x 4.2 ms expected)\n", ms);
	drnic_qp_stats_get(p->a.qp, &qs);
	TEST_ASSERT(ms >= 30.0, "ended after %.1f ms, before 8 timeouts of 4.2 ms", ms);
	TEST_ASSERT_EQUAL(qs.timeouts, 8, "timeouts");
	TEST_ASSERT_EQUAL(qs.retransmits, 7, "retransmits");
	return TEST_SUCCESS;
}

/* Run @p body on a fresh pair opened with @p o, and close it. */
static int
with_pair(const struct rnic_pair_opts *o, int (*body)(struct rnic_pair *p))
{
	struct rnic_pair p;
	int rc;

	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, o), "pair open");
	rc = body(&p);
	rnic_pair_close(&p);
	return rc;
}

static int
rnr_all(enum drnic_progress_mode mode)
{
	/* timeout 10: 4.2 ms; 7 retries: about 34 ms. */
	struct rnic_pair_opts forever = { .mode = mode }, none = { .mode = mode, .rnr_retry = -1 },
			      gone = { .mode = mode, .timeout = 10 };

	TEST_ASSERT_SUCCESS(with_pair(&forever, rnr_forever_body), "rnr_retry 7 (%s)",
			    mode == DRNIC_PROGRESS_INLINE ? "inline" : "dedicated");
	TEST_ASSERT_SUCCESS(with_pair(&none, rnr_none_body), "rnr_retry 0");
	TEST_ASSERT_SUCCESS(with_pair(&gone, peer_gone_body), "peer gone");
	return TEST_SUCCESS;
}

static int
rnic_rnr(void)
{
	TEST_ASSERT_SUCCESS(rnr_all(DRNIC_PROGRESS_INLINE), "inline progress");
	if (rte_lcore_count() < 2)
		return TEST_SUCCESS;
	TEST_ASSERT_SUCCESS(rnr_all(DRNIC_PROGRESS_DEDICATED), "dedicated engine");
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(rnic_rnr_retry_autotest, DRNIC_TEST_FAST, rnic_rnr);
