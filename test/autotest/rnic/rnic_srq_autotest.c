/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queue, end to end: four RC QPs on B share one SRQ, four on
 * A send to them. Every message lands whole in one of the SRQ's buffers,
 * each WQE is used once, every CQE names the QP that received and the QP
 * that sent; the armed limit raises SRQ_LIMIT_REACHED once; an empty SRQ
 * draws RNR NAKs until a receive is posted; a QP on the SRQ that enters ERR
 * raises QP_LAST_WQE_REACHED; the SRQ cannot go while QPs use it; it grows
 * while messages flow (drnic_modify_srq() with DRNIC_SRQ_MAX_WR).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>

#include "drnic_cq.h"
#include "drnic_event.h"

#include "test.h"
#include "rnic_fixture.h"

#define SRQ_QPS 4
#define SRQ_MSGS 2            /* per QP */
#define SRQ_SLOT 8192         /* bytes of B's buffer per receive WQE */

struct srq_rig {
	struct rnic_pair p;
	struct rnic_pair_opts o;
	struct drnic_srq *srq;
	struct rnic_side a[SRQ_QPS];   /* A's QPs (dev, pd, cq, buf shared with p.a) */
	struct rnic_side b[SRQ_QPS];   /* B's QPs on the SRQ */
};

static int
srq_post(struct srq_rig *r, uint64_t wr_id)
{
	struct drnic_sge sge = { (uintptr_t)r->p.b.buf + wr_id * SRQ_SLOT, SRQ_SLOT,
				 drnic_mr_lkey(r->p.b.mr) };
	struct drnic_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return drnic_post_srq_recv(r->srq, &wr, &bad);
}

/* SEND @p len bytes from A's QP @p i; the payload's first bytes say which
 * QP and which message. */
static int
srq_send(struct srq_rig *r, int i, uint32_t seq, uint32_t len)
{
	uint8_t *src = r->p.a.buf + ((size_t)i * SRQ_MSGS + seq) * SRQ_SLOT;
	struct drnic_sge sge = { (uintptr_t)src, len, drnic_mr_lkey(r->p.a.mr) };
	struct drnic_send_wr wr = { 0 }, *bad;

	rnic_fill(src, len, (uint32_t)(i * 100 + seq));
	src[0] = (uint8_t)i;
	src[1] = (uint8_t)seq;
	wr.wr_id = (uint64_t)i << 8 | seq;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_SEND;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	return drnic_post_send(r->a[i].qp, &wr, &bad);
}

/* Wait for an async event of @p type on @p dev's queue (driving inline
 * engines); acknowledges it and what came before it. */
static int
srq_wait_event(struct srq_rig *r, struct drnic_device *dev, enum drnic_event_type type,
	       struct drnic_async_event *out)
{
	struct drnic_async_queue *aq = drnic_device_async_queue(dev);
	uint64_t deadline = rnic_now_ms() + 5000;
	struct drnic_async_event ev;

	while (rnic_now_ms() < deadline) {
		if (drnic_try_get_async_event(aq, &ev) != 0) {
			drnic_device_progress(r->p.a.dev);
			continue;
		}
		drnic_ack_async_event(aq, &ev);
		if (ev.event_type == type) {
			*out = ev;
			return 0;
		}
	}
	return -ETIMEDOUT;
}

static uint32_t
srq_len(int i, uint32_t seq)
{
	return 100 + (uint32_t)i * 1500 + seq * 700;   /* 1 to 6 packets at MTU 1024 */
}

#define SRQ_GROW_MSGS 48

/* Growing the SRQ (16 -> 64) while messages flow: 4 receives waiting and 4
 * SENDs on their way when it grows, then 44 more receives (more than 16
 * could hold) and as many SENDs; each WQE is used once, every message lands
 * whole. */
static int
srq_grow_flowing(struct srq_rig *r)
{
	struct drnic_wc wc[SRQ_GROW_MSGS];
	uint8_t used[SRQ_GROW_MSGS] = { 0 };
	struct drnic_srq_attr sa = { .max_wr = SRQ_GROW_MSGS };
	int k, n, sent;

	for (k = 0; k < 4; k++) {
		TEST_ASSERT_SUCCESS(srq_post(r, 16 + (uint64_t)k), "post %d", k);
		TEST_ASSERT_SUCCESS(srq_send(r, 0, (uint32_t)k, 64 + (uint32_t)k), "send %d", k);
	}
	TEST_ASSERT_SUCCESS(drnic_modify_srq(r->srq, &sa, DRNIC_SRQ_MAX_WR), "grow the SRQ");
	TEST_ASSERT_SUCCESS(drnic_query_srq(r->srq, &sa), "query_srq");
	TEST_ASSERT_EQUAL(sa.max_wr, 64, "grown to %u", sa.max_wr);
	for (k = 4; k < SRQ_GROW_MSGS; k++)
		TEST_ASSERT_SUCCESS(srq_post(r, 16 + (uint64_t)k), "post %d after growing", k);
	for (sent = 4; sent < SRQ_GROW_MSGS; sent += n) {
		n = RTE_MIN(12, SRQ_GROW_MSGS - sent);
		for (k = sent; k < sent + n; k++)
			TEST_ASSERT_SUCCESS(srq_send(r, 0, (uint32_t)k, 64 + (uint32_t)k),
					    "send %d", k);
		TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, wc, n), n, "send completions");
	}
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, wc, 4), 4, "the first 4 send completions");
	n = rnic_poll(&r->p.b, wc, SRQ_GROW_MSGS);
	TEST_ASSERT_EQUAL(n, SRQ_GROW_MSGS, "receive completions");
	for (k = 0; k < n; k++) {
		const uint8_t *got = r->p.b.buf + wc[k].wr_id * SRQ_SLOT;
		uint8_t want[128];

		TEST_ASSERT(wc[k].status == DRNIC_WC_SUCCESS && wc[k].wr_id >= 16 &&
			    wc[k].wr_id < 16 + SRQ_GROW_MSGS && !used[wc[k].wr_id - 16],
			    "receive %d: %s, wr_id %" PRIu64, k, drnic_wc_status_str(wc[k].status),
			    wc[k].wr_id);
		used[wc[k].wr_id - 16] = 1;
		TEST_ASSERT_EQUAL(wc[k].byte_len, 64u + got[1], "byte_len");
		rnic_fill(want, wc[k].byte_len, got[1]);
		want[0] = 0;
		want[1] = got[1];
		TEST_ASSERT(memcmp(got, want, wc[k].byte_len) == 0, "bytes of message %d", got[1]);
	}
	return TEST_SUCCESS;
}

static int
srq_body(struct srq_rig *r)
{
	struct drnic_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1, .srq_limit = 0 } };
	struct drnic_qp_init_attr qa = { 0 };
	struct drnic_srq_attr sa;
	struct drnic_wc wc[SRQ_QPS * SRQ_MSGS];
	struct drnic_async_event ev;
	uint8_t used[SRQ_QPS * SRQ_MSGS] = { 0 };
	int i, n, k;

	r->srq = drnic_create_srq(r->p.b.pd, &sia);
	TEST_ASSERT(r->srq != NULL, "create_srq: %s", rte_strerror(rte_errno));
	qa.send_cq = r->p.b.cq;
	qa.recv_cq = r->p.b.cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_send_sge = 1;
	for (i = 0; i < SRQ_QPS; i++) {
		r->a[i] = r->p.a;
		r->b[i] = r->p.b;
		qa.srq = r->srq;
		r->b[i].qp = drnic_create_qp(r->p.b.pd, &qa);
		qa.srq = NULL;
		qa.send_cq = qa.recv_cq = r->p.a.cq;
		qa.cap.max_recv_wr = 1;
		r->a[i].qp = drnic_create_qp(r->p.a.pd, &qa);
		qa.send_cq = qa.recv_cq = r->p.b.cq;
		qa.cap.max_recv_wr = 0;
		TEST_ASSERT(r->a[i].qp != NULL && r->b[i].qp != NULL, "create_qp %d: %s", i,
			    rte_strerror(rte_errno));
		TEST_ASSERT_SUCCESS(rnic_qp_connect(&r->a[i], &r->b[i], &r->o), "connect A%d", i);
		TEST_ASSERT_SUCCESS(rnic_qp_connect(&r->b[i], &r->a[i], &r->o), "connect B%d", i);
	}
	TEST_ASSERT_EQUAL(drnic_destroy_srq(r->srq), -EBUSY, "destroy_srq with QPs on it");

	/* 8 receives, the limit at 2: taking the 7th leaves 1. */
	for (k = 0; k < SRQ_QPS * SRQ_MSGS; k++)
		TEST_ASSERT_SUCCESS(srq_post(r, (uint64_t)k), "post_srq_recv %d", k);
	sa.srq_limit = 2;
	TEST_ASSERT_SUCCESS(drnic_modify_srq(r->srq, &sa, DRNIC_SRQ_LIMIT), "arm the limit");
	for (i = 0; i < SRQ_QPS; i++)
		for (k = 0; k < SRQ_MSGS; k++)
			TEST_ASSERT_SUCCESS(srq_send(r, i, (uint32_t)k, srq_len(i, (uint32_t)k)),
					    "send %d.%d", i, k);
	n = rnic_poll(&r->p.b, wc, SRQ_QPS * SRQ_MSGS);
	TEST_ASSERT_EQUAL(n, SRQ_QPS * SRQ_MSGS, "receive completions");
	for (k = 0; k < n; k++) {
		const uint8_t *got;
		uint8_t want[SRQ_SLOT];
		int from, seq;

		TEST_ASSERT(wc[k].status == DRNIC_WC_SUCCESS, "receive %d: %s", k,
			    drnic_wc_status_str(wc[k].status));
		TEST_ASSERT_EQUAL(wc[k].opcode, DRNIC_WC_RECV, "opcode");
		TEST_ASSERT(wc[k].wr_id < (uint64_t)n, "wr_id %" PRIu64, wc[k].wr_id);
		TEST_ASSERT_EQUAL(used[wc[k].wr_id], 0, "WQE %" PRIu64 " used twice", wc[k].wr_id);
		used[wc[k].wr_id] = 1;
		got = r->p.b.buf + wc[k].wr_id * SRQ_SLOT;
		from = got[0];
		seq = got[1];
		TEST_ASSERT(from < SRQ_QPS && seq < SRQ_MSGS, "payload header %d.%d", from, seq);
		TEST_ASSERT_EQUAL(wc[k].byte_len, srq_len(from, (uint32_t)seq), "byte_len");
		TEST_ASSERT_EQUAL(wc[k].qp_num, drnic_qp_num(r->b[from].qp), "qp_num");
		TEST_ASSERT_EQUAL(wc[k].src_qp, drnic_qp_num(r->a[from].qp), "src_qp");
		rnic_fill(want, wc[k].byte_len, (uint32_t)(from * 100 + seq));
		want[0] = (uint8_t)from;
		want[1] = (uint8_t)seq;
		TEST_ASSERT(memcmp(got, want, wc[k].byte_len) == 0, "bytes of %d.%d", from, seq);
	}
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, wc, n), n, "send completions");
	TEST_ASSERT_SUCCESS(srq_wait_event(r, r->p.b.dev, DRNIC_EVENT_SRQ_LIMIT_REACHED, &ev),
			    "no SRQ_LIMIT_REACHED");
	TEST_ASSERT(ev.element.srq == r->srq, "the event's SRQ");
	TEST_ASSERT_SUCCESS(drnic_query_srq(r->srq, &sa), "query_srq");
	TEST_ASSERT_EQUAL(sa.srq_limit, 0, "the limit did not disarm");

	/* Empty: A's SEND draws RNR NAKs until B posts a receive. */
	TEST_ASSERT_SUCCESS(srq_send(r, 1, 0, 64), "send into an empty SRQ");
	{
		uint64_t deadline = rnic_now_ms() + 5000;
		struct drnic_qp_stats st;

		do {
			drnic_device_progress(r->p.a.dev);
			drnic_qp_stats_get(r->a[1].qp, &st);
		} while (st.rnr_naks_rx == 0 && rnic_now_ms() < deadline);
		TEST_ASSERT(st.rnr_naks_rx > 0, "no RNR NAK for an empty SRQ");
	}
	TEST_ASSERT_EQUAL(drnic_cq_poll(r->p.b.cq, 1, wc), 0, "a completion with no receive");
	TEST_ASSERT_SUCCESS(srq_post(r, 3), "post after RNR");
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.b, wc, 1), 1, "the SEND after the post");
	TEST_ASSERT(wc[0].status == DRNIC_WC_SUCCESS && wc[0].wr_id == 3 &&
		    wc[0].qp_num == drnic_qp_num(r->b[1].qp), "receive after RNR: %s wr_id %"
		    PRIu64, drnic_wc_status_str(wc[0].status), wc[0].wr_id);
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, wc, 1), 1, "send completion after RNR");
	TEST_ASSERT(wc[0].status == DRNIC_WC_SUCCESS, "%s", drnic_wc_status_str(wc[0].status));

	if (srq_grow_flowing(r) != TEST_SUCCESS)
		return TEST_FAILED;

	/* A QP on the SRQ to ERR: it will take no more of it. */
	{
		struct drnic_qp_attr at = { .qp_state = DRNIC_QPS_ERR };

		TEST_ASSERT_SUCCESS(drnic_modify_qp(r->b[2].qp, &at, DRNIC_QP_STATE), "to ERR");
	}
	TEST_ASSERT_SUCCESS(srq_wait_event(r, r->p.b.dev, DRNIC_EVENT_QP_LAST_WQE_REACHED, &ev),
			    "no QP_LAST_WQE_REACHED");
	TEST_ASSERT_EQUAL(ev.qp_num, drnic_qp_num(r->b[2].qp), "the event's QP");
	return TEST_SUCCESS;
}

static void
srq_close(struct srq_rig *r)
{
	int i;

	for (i = 0; i < SRQ_QPS; i++) {
		if (r->a[i].qp != NULL)
			drnic_destroy_qp(r->a[i].qp);
		if (r->b[i].qp != NULL)
			drnic_destroy_qp(r->b[i].qp);
	}
	if (r->srq != NULL && drnic_destroy_srq(r->srq) != 0)
		printf("destroy_srq failed after its QPs\n");
	rnic_pair_close(&r->p);
}

static int
srq_run(enum drnic_progress_mode mode)
{
	static struct srq_rig r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.o.mode = mode;
	if (mode == DRNIC_PROGRESS_DEDICATED && rte_get_next_lcore(-1, 1, 0) >= RTE_MAX_LCORE)
		TEST_SKIP("dedicated mode needs an EAL worker lcore for the engine");
	TEST_ASSERT_SUCCESS(rnic_pair_open(&r.p, &r.o), "pair open");
	rc = srq_body(&r);
	srq_close(&r);
	return rc;
}

static int
rnic_srq_inline(void)
{
	return srq_run(DRNIC_PROGRESS_INLINE);
}

static int
rnic_srq_dedicated(void)
{
	return srq_run(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_srq_inline_autotest, DRNIC_TEST_FAST, rnic_srq_inline);
DRNIC_TEST_REGISTER(rnic_srq_dedicated_autotest, DRNIC_TEST_FAST, rnic_srq_dedicated);
