/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peer gone (issue 4): the peer's link loses every frame, or the peer
 * device is closed. The sender's oldest WR completes with RETRY_EXC_ERR
 * within the bound its attributes give (4.096 us x 2^timeout x (retry_cnt +
 * 1), with slack for a loaded machine, and never before retry_cnt timeouts),
 * the rest with WR_FLUSH_ERR, the QP is in ERR, and once the devices are
 * closed every mbuf is back in the engine pool. Dedicated progress: the
 * engine waits on its timer wheel, this thread only polls.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "drnic_link.h"
#include "drnic_link_fault.h"
#include "rnic_fixture.h"

#define PG_TIMEOUT 12        /* 16.8 ms */
#define PG_RETRY_CNT 7       /* the fixture's */
#define PG_NWR 5

static double
pg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Post PG_NWR SENDs and WRITEs on a's QP; expect RETRY_EXC_ERR then flushes. */
static int
pg_expect_retry_exc(struct rnic_pair *p, uint64_t raddr, uint32_t rkey)
{
	double bound_ms = 4.096e-3 * (1u << PG_TIMEOUT) * (PG_RETRY_CNT + 1), t0, dt;
	double floor_ms = 4.096e-3 * (1u << PG_TIMEOUT) * PG_RETRY_CNT;
	struct drnic_sge sge = { (uintptr_t)p->a.buf, 3000, drnic_mr_lkey(p->a.mr) };
	struct drnic_send_wr wr, *bad;
	struct drnic_wc wc[PG_NWR];
	struct drnic_engine_stats es0, es1;
	int i, n = 0, rc;

	TEST_ASSERT_SUCCESS(drnic_engine_stats_get(p->a.dev, 0, &es0), "engine stats");
	t0 = pg_now_ms();
	for (i = 0; i < PG_NWR; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 100 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = DRNIC_SEND_SIGNALED;
		wr.opcode = i % 2 ? DRNIC_WR_RDMA_WRITE : DRNIC_WR_SEND;
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &wr, &bad), "post_send");
	}
	while (n < PG_NWR && pg_now_ms() - t0 < bound_ms * 3 + 5000) {
		rc = drnic_cq_poll(p->a.cq, PG_NWR - n, wc + n);
		TEST_ASSERT(rc >= 0, "poll");
		n += rc;
	}
	dt = pg_now_ms() - t0;
	TEST_ASSERT_EQUAL(n, PG_NWR, "every WR completes");
	TEST_ASSERT_EQUAL(wc[0].wr_id, 100, "oldest first");
	TEST_ASSERT_EQUAL(wc[0].status, DRNIC_WC_RETRY_EXC_ERR, "%s",
			  drnic_wc_status_str(wc[0].status));
	for (i = 1; i < PG_NWR; i++) {
		TEST_ASSERT_EQUAL(wc[i].wr_id, 100 + i, "in order");
		TEST_ASSERT_EQUAL(wc[i].status, DRNIC_WC_WR_FLUSH_ERR, "%s",
				  drnic_wc_status_str(wc[i].status));
	}
	TEST_ASSERT_EQUAL(drnic_qp_state(p->a.qp), DRNIC_QPS_ERR, "QP in ERR");
	/* The QP waited off the active list: the timer wheel woke it for
	 * each timeout (retry_cnt + 1 of them). */
	TEST_ASSERT_SUCCESS(drnic_engine_stats_get(p->a.dev, 0, &es1), "engine stats");
	TEST_ASSERT(es1.timers - es0.timers >= PG_RETRY_CNT + 1,
		    "woken by the timer wheel %" PRIu64 " times", es1.timers - es0.timers);
	printf("RETRY_EXC_ERR after %.1f ms (bound %.1f ms = timeout x (retry_cnt + 1))\n", dt,
	       bound_ms);
	TEST_ASSERT(dt >= floor_ms * 0.95, "not before retry_cnt timeouts (%.1f ms)", floor_ms);
	TEST_ASSERT(dt <= bound_ms * 3 + 2000, "within the bound, with slack");
	return TEST_SUCCESS;
}

static int
pg_mbufs_back(void)
{
	unsigned int avail, size;

	TEST_ASSERT_SUCCESS(drnic_engine_mbuf_count(&avail, &size), "pool");
	TEST_ASSERT_EQUAL(avail, size, "every mbuf back in the pool");
	return TEST_SUCCESS;
}

static int
rnic_peer_gone(void)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_DEDICATED, .timeout = PG_TIMEOUT };
	struct drnic_link_faults f;
	struct rnic_pair p;
	int rc;

	/* 1. The link to the peer loses everything. */
	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	drnic_link_faults_init(&f);
	f.drop = 1.0;
	rc = drnic_link_set_faults(drnic_device_link(p.a.dev), &f);
	if (rc == 0)
		rc = pg_expect_retry_exc(&p, (uintptr_t)p.b.buf, drnic_mr_rkey(p.b.mr));
	else
		printf("set_faults: %d\n", rc);
	rnic_pair_close(&p);
	TEST_ASSERT_SUCCESS(rc, "link dropping every frame");
	TEST_ASSERT_SUCCESS(pg_mbufs_back(), "after the lossy link");

	/* 2. The peer device is closed (its QP, memory and link gone). */
	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	{
		struct rnic_pair gone;
		uint64_t raddr = (uintptr_t)p.b.buf;
		uint32_t rkey = drnic_mr_rkey(p.b.mr);

		memset(&gone, 0, sizeof(gone));
		gone.b = p.b;
		memset(&p.b, 0, sizeof(p.b));
		rnic_pair_close(&gone);           /* closes b only */
		rc = pg_expect_retry_exc(&p, raddr, rkey);
	}
	rnic_pair_close(&p);
	TEST_ASSERT_SUCCESS(rc, "peer device closed");
	return pg_mbufs_back();
}

DRNIC_TEST_REGISTER(rnic_peer_gone_autotest, DRNIC_TEST_FAST, rnic_peer_gone);
