/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receiver not ready: a SEND that finds no receive WQE is RNR-NAKed; with
 * rnr_retry 7 the requester waits and retries until a receive is posted,
 * then the message arrives intact; with rnr_retry 0 it fails at once with
 * RNR_RETRY_EXC_ERR. A peer that stopped answering (QP in ERR) ends the
 * sender's WR with RETRY_EXC_ERR after retry_cnt timeouts.
 */
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

static int
rnr_forever(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode };
	struct drnic_engine_stats st;
	struct drnic_wc wc;
	struct rnic_pair p;
	int rc = TEST_FAILED;

	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	rnic_fill(p.a.buf, 3000, 9);
	memset(p.b.buf, 0, 3000);
	if (post_send(&p.a, 1, 3000) != 0)
		goto out;
	/* No receive for a while: nothing completes. */
	if (rnic_poll_none(&p.a, 30) != 0 || rnic_poll_none(&p.b, 1) != 0) {
		printf("a completion without a receive WQE\n");
		goto out;
	}
	drnic_engine_stats_get(p.b.dev, 0, &st);
	if (st.drops[DRNIC_ENGINE_DROP_RNR] == 0) {
		printf("no RNR NAK was sent\n");
		goto out;
	}
	if (post_recv(&p.b, 2, 4096) != 0)
		goto out;
	if (rnic_poll(&p.a, &wc, 1) != 1 || wc.status != DRNIC_WC_SUCCESS || wc.wr_id != 1) {
		printf("send after the receive was posted: %s\n", drnic_wc_status_str(wc.status));
		goto out;
	}
	if (rnic_poll(&p.b, &wc, 1) != 1 || wc.status != DRNIC_WC_SUCCESS || wc.byte_len != 3000 ||
	    memcmp(p.a.buf, p.b.buf, 3000) != 0) {
		printf("receive after RNR: wrong completion or bytes\n");
		goto out;
	}
	printf("RNR NAKs before the receive was posted: %llu\n",
	       (unsigned long long)st.drops[DRNIC_ENGINE_DROP_RNR]);
	{
		struct drnic_qp_stats qa, qb;

		drnic_qp_stats_get(p.a.qp, &qa);
		drnic_qp_stats_get(p.b.qp, &qb);
		if (qa.rnr_naks_rx == 0 || qa.retransmits < qa.rnr_naks_rx ||
		    qb.naks_tx < qa.rnr_naks_rx || qb.drops[DRNIC_ENGINE_DROP_RNR] == 0 ||
		    qa.wqes != 1 + qa.retransmits || qa.acks_rx == 0) {
			printf("QP counters: rnr_naks_rx %llu retransmits %llu naks_tx %llu\n",
			       (unsigned long long)qa.rnr_naks_rx,
			       (unsigned long long)qa.retransmits,
			       (unsigned long long)qb.naks_tx);
			goto out;
		}
	}
	rc = TEST_SUCCESS;
out:
	rnic_pair_close(&p);
	return rc;
}

static int
rnr_none(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode, .rnr_retry = -1 };
	struct drnic_wc wc;
	struct rnic_pair p;
	int rc = TEST_FAILED;

	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	memset(&wc, 0, sizeof(wc));
	if (post_send(&p.a, 5, 100) == 0 && rnic_poll(&p.a, &wc, 1) == 1 &&
	    wc.status == DRNIC_WC_RNR_RETRY_EXC_ERR && wc.wr_id == 5 &&
	    wc.qp_num == drnic_qp_num(p.a.qp) && drnic_qp_state(p.a.qp) == DRNIC_QPS_ERR)
		rc = TEST_SUCCESS;
	else
		printf("rnr_retry 0: expected RNR_RETRY_EXC_ERR, got wr_id %llu %s, QP %s\n",
		       (unsigned long long)wc.wr_id, drnic_wc_status_str(wc.status),
		       drnic_qp_state_str(drnic_qp_state(p.a.qp)));
	rnic_pair_close(&p);
	return rc;
}

static int
peer_gone(enum drnic_progress_mode mode)
{
	/* timeout 10: 4.2 ms; 7 retries: about 34 ms. */
	struct rnic_pair_opts o = { .mode = mode, .timeout = 10 };
	struct drnic_qp_attr at = { .qp_state = DRNIC_QPS_ERR };
	struct drnic_wc wc[2];
	struct timespec t0, t1;
	struct rnic_pair p;
	double ms;
	int rc = TEST_FAILED;

	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	drnic_modify_qp(p.b.qp, &at, DRNIC_QP_STATE);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	post_send(&p.a, 7, 100);
	post_send(&p.a, 8, 100);
	if (rnic_poll(&p.a, wc, 2) == 2 && wc[0].wr_id == 7 &&
	    wc[0].status == DRNIC_WC_RETRY_EXC_ERR && wc[1].wr_id == 8 &&
	    wc[1].status == DRNIC_WC_WR_FLUSH_ERR) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		struct drnic_qp_stats qs;

		printf("RETRY_EXC_ERR after %.1f ms (8 x 4.2 ms expected)\n", ms);
		drnic_qp_stats_get(p.a.qp, &qs);
		rc = ms >= 30.0 && qs.timeouts == 8 && qs.retransmits == 7 ? TEST_SUCCESS :
		     TEST_FAILED;
		if (rc != TEST_SUCCESS)
			printf("timeouts %llu retransmits %llu\n", (unsigned long long)qs.timeouts,
			       (unsigned long long)qs.retransmits);
	} else {
		printf("peer gone: expected RETRY_EXC_ERR then WR_FLUSH_ERR\n");
	}
	rnic_pair_close(&p);
	return rc;
}

static int
rnic_rnr(void)
{
	if (rnr_forever(DRNIC_PROGRESS_INLINE) != TEST_SUCCESS ||
	    rnr_none(DRNIC_PROGRESS_INLINE) != TEST_SUCCESS ||
	    peer_gone(DRNIC_PROGRESS_INLINE) != TEST_SUCCESS)
		return TEST_FAILED;
	if (rte_lcore_count() < 2)
		return TEST_SUCCESS;
	if (rnr_forever(DRNIC_PROGRESS_DEDICATED) != TEST_SUCCESS ||
	    rnr_none(DRNIC_PROGRESS_DEDICATED) != TEST_SUCCESS ||
	    peer_gone(DRNIC_PROGRESS_DEDICATED) != TEST_SUCCESS)
		return TEST_FAILED;
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(rnic_rnr_retry_autotest, DRNIC_TEST_FAST, rnic_rnr);
