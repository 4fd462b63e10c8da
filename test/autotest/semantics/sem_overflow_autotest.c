/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQ overflow (DESIGN.md "CQE hand-off"; issue 3; seed 000 §3.4.4 "过小则导致
 * QP错误"): a server CQ of depth 8 serving one QP, 16 receives posted, the
 * client sends 16 messages and nobody polls the server CQ. Expected:
 *  - a CQ_ERR async event on the server device's queue naming that CQ;
 *  - the CQ's QPs go to ERR (the busy one and an idle one sharing the CQ),
 *    with a QP_FATAL event for the busy one (IBA: a CQ overrun is a
 *    catastrophic error of the work queues completing into it);
 *  - the 8 CQEs that fit are still returned, in order, with their data, then
 *    drnic_cq_poll() says -EOVERFLOW (and keeps saying it);
 *  - nothing lost silently: completions (8) + overflows == every receive WR
 *    of both QPs (16 + 2); work posted afterwards is counted as refused too;
 *  - precise errors afterwards: req_notify and resize -EOVERFLOW, destroy
 *    -EBUSY while the QP uses the CQ and while CQ_ERR is unacknowledged;
 *  - every client WR completes exactly once (SUCCESS for what the server took,
 *    then an error: the server QP in ERR answers nothing, so the transport
 *    timer ends the next send with RETRY_EXC_ERR and the rest flush).
 */
#include <errno.h>
#include <string.h>

#include "sem_common.h"

#define OV_DEPTH 8u
#define OV_MSGS 16u
#define OV_LEN 128u
#define OV_IDLE_RECVS 2u

static int
ov_wait_total(struct sem_ctx *c, struct drnic_cq *cq, uint64_t total, struct drnic_cq_stats *st,
	      unsigned int ms)
{
	uint64_t end = sem_now_us() + (uint64_t)ms * 1000u;

	for (;;) {
		drnic_cq_query_stats(cq, st);
		if (st->completions + st->overflows >= total || sem_now_us() > end)
			return 0;
		sem_progress(c);
	}
}

/* Find (taking more events for up to @p ms) an event of @p type for QP @p qpn. */
static int
ov_wait_qp_event(struct sem_ctx *c, enum drnic_event_type type, uint32_t qpn, unsigned int ms)
{
	uint64_t end = sem_now_us() + (uint64_t)ms * 1000u;
	struct drnic_async_queue *q = drnic_device_async_queue(c->dev[SEM_SRV]);
	struct drnic_async_event ev;
	unsigned int i;

	for (;;) {
		for (i = 0; i < c->nb_ev[SEM_SRV]; i++)
			if (c->ev[SEM_SRV][i].event_type == type && c->ev[SEM_SRV][i].qp_num == qpn)
				return (int)i;
		if (sem_now_us() > end)
			return -1;
		if (drnic_try_get_async_event(q, &ev) == 0) {
			printf("async event: %s qp_num %u\n", drnic_event_type_str(ev.event_type),
			       ev.qp_num);
			if (c->nb_ev[SEM_SRV] < SEM_MAX_EV)
				c->ev[SEM_SRV][c->nb_ev[SEM_SRV]++] = ev;
			else
				drnic_ack_async_event(q, &ev);
		} else {
			sem_progress(c);
		}
	}
}

/* The CQ was destroyed behind the context's back (a failed EBUSY check). */
static void
ov_forget_cq(struct sem_ctx *c, struct drnic_cq *cq)
{
	unsigned int i;

	for (i = 0; i < c->nb_cq; i++)
		if (c->cq[i] == cq)
			c->cq[i] = NULL;
}

static int
ov_body(struct sem_ctx *c)
{
	struct drnic_comp_channel *ch = sem_channel(c);
	struct drnic_cq *scq, *ccq;
	struct drnic_qp *sqp, *cqp, *sqp_b, *cqp_b;
	struct drnic_mr *rmr, *smr;
	struct drnic_cq_stats st;
	struct drnic_wc wc[OV_MSGS + 4];
	struct drnic_async_queue *aq;
	uint8_t *rbuf, *sbuf;
	uint32_t sqpn, cqpn, i;
	int n, r, ev_cq, ev_qp, ok;
	uint64_t ov_before;

	TEST_ASSERT(ch != NULL, "channel");
	scq = sem_cq(c, SEM_SRV, OV_DEPTH, ch, NULL);
	ccq = sem_cq(c, SEM_CLI, 64, NULL, NULL);
	TEST_ASSERT(scq != NULL && ccq != NULL, "CQs");
	sqp = sem_qp(c, SEM_SRV, scq, scq, 32, 32, 1);
	cqp = sem_qp(c, SEM_CLI, ccq, ccq, 32, 32, 1);
	TEST_ASSERT(sqp != NULL && cqp != NULL, "QPs");
	sqp_b = sem_qp(c, SEM_SRV, scq, scq, 32, 32, 1);
	cqp_b = sem_qp(c, SEM_CLI, ccq, ccq, 32, 32, 1);
	TEST_ASSERT(sqp_b != NULL && cqp_b != NULL, "second QP pair");
	sqpn = drnic_qp_num(sqp);
	cqpn = drnic_qp_num(cqp);
	rmr = sem_mr(c, SEM_SRV, OV_MSGS * OV_LEN, DRNIC_ACCESS_LOCAL_WRITE, (void **)&rbuf);
	smr = sem_mr(c, SEM_CLI, OV_MSGS * OV_LEN, DRNIC_ACCESS_LOCAL_WRITE, (void **)&sbuf);
	TEST_ASSERT(rmr != NULL && smr != NULL, "MRs");
	TEST_ASSERT_SUCCESS(sem_connect(c, sqp, cqp, 0x10, 0x20), "connect");
	TEST_ASSERT_SUCCESS(sem_connect(c, sqp_b, cqp_b, 0x30, 0x40), "connect the second pair");
	/* The second server QP shares the CQ, idle with two receives. */
	for (i = 0; i < OV_IDLE_RECVS; i++)
		TEST_ASSERT_SUCCESS(sem_post_recv(sqp_b, 300 + i, rbuf, OV_LEN, drnic_mr_lkey(rmr)),
				    "post recv on the idle QP");

	for (i = 0; i < OV_MSGS; i++)
		TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 100 + i, rbuf + i * OV_LEN, OV_LEN,
						  drnic_mr_lkey(rmr)), "post recv %u", i);
	for (i = 0; i < OV_MSGS; i++) {
		sem_fill(sbuf + i * OV_LEN, OV_LEN, 500 + i);
		TEST_ASSERT_SUCCESS(sem_post_send(cqp, 200 + i, DRNIC_WR_SEND, sbuf + i * OV_LEN,
						  OV_LEN, drnic_mr_lkey(smr), 0, 0, 0),
				    "post send %u", i);
	}

	/* The overflow is detected and reported. */
	ev_cq = sem_wait_async(c, SEM_SRV, DRNIC_EVENT_CQ_ERR, 5000);
	TEST_ASSERT(ev_cq >= 0, "CQ_ERR async event on the server device within 5 s");
	TEST_ASSERT(c->ev[SEM_SRV][ev_cq].element.cq == scq,
		    "CQ_ERR names the overflowed CQ (%p, expected %p)",
		    (void *)c->ev[SEM_SRV][ev_cq].element.cq, (void *)scq);
	TEST_ASSERT_SUCCESS(sem_wait_qp_state(c, sqp, DRNIC_QPS_ERR, 2000),
			    "server QP in ERR after the overflow of its CQ (state %s)",
			    drnic_qp_state_str(drnic_qp_state(sqp)));
	{
		struct drnic_qp_attr qa;
		struct drnic_qp_init_attr ia;

		TEST_ASSERT_SUCCESS(drnic_query_qp(sqp, &qa, DRNIC_QP_STATE, &ia), "query_qp");
		TEST_ASSERT_EQUAL(qa.qp_state, DRNIC_QPS_ERR, "drnic_query_qp state");
	}
	TEST_ASSERT_SUCCESS(sem_wait_qp_state(c, sqp_b, DRNIC_QPS_ERR, 2000),
			    "the idle QP on the same CQ in ERR too (state %s)",
			    drnic_qp_state_str(drnic_qp_state(sqp_b)));
	ev_qp = ov_wait_qp_event(c, DRNIC_EVENT_QP_FATAL, sqpn, 2000);
	TEST_ASSERT(ev_qp >= 0, "QP_FATAL event for the server QP %u within 2 s", sqpn);

	/* Nothing lost silently: each of the 16 + 2 receive WRs is either a
	 * CQE or counted as refused. */
	ov_wait_total(c, scq, OV_MSGS + OV_IDLE_RECVS, &st, 2000);
	printf("server CQ after overflow: depth %u occupancy %u high_water %u completions %llu "
	       "overflows %llu in_error %u\n", st.depth, st.occupancy, st.high_water,
	       (unsigned long long)st.completions, (unsigned long long)st.overflows, st.in_error);
	TEST_ASSERT_EQUAL(st.in_error, 1, "CQ in error");
	TEST_ASSERT_EQUAL(st.completions, OV_DEPTH, "completions published: the CQ depth");
	TEST_ASSERT_EQUAL(st.completions + st.overflows, OV_MSGS + OV_IDLE_RECVS,
			  "completions + overflows account for every receive WR of both QPs");
	TEST_ASSERT_EQUAL(st.occupancy, OV_DEPTH, "occupancy: full");
	TEST_ASSERT(st.high_water >= OV_DEPTH - 1 && st.high_water <= OV_DEPTH,
		    "high_water %u: the CQ was full", st.high_water);

	/* The CQEs that fit are still there, oldest first, with their bytes. */
	n = 0;
	for (i = 0; i < 100 && n < (int)OV_DEPTH + 4; i++) {
		r = drnic_cq_poll(scq, (int)RTE_DIM(wc) - n, wc + n);
		if (r < 0)
			break;
		n += r;
	}
	TEST_ASSERT_EQUAL(n, OV_DEPTH, "CQEs returned after the overflow");
	for (i = 0; i < OV_DEPTH; i++) {
		long bad;

		SEM_ASSERT_WC(&wc[i], 100 + i, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn);
		TEST_ASSERT_EQUAL(wc[i].byte_len, OV_LEN, "byte_len of CQE %u", i);
		bad = sem_check(rbuf + i * OV_LEN, OV_LEN, 500 + i);
		TEST_ASSERT_EQUAL(bad, -1, "data of receive %u (first bad offset)", i);
	}
	r = drnic_cq_poll(scq, 4, wc);
	TEST_ASSERT_EQUAL(r, -EOVERFLOW, "poll of the drained CQ in error");
	r = drnic_cq_poll(scq, 4, wc);
	TEST_ASSERT_EQUAL(r, -EOVERFLOW, "poll again: still -EOVERFLOW");
	r = drnic_cq_poll(scq, 0, wc);
	TEST_ASSERT(r == 0 || r == -EOVERFLOW, "poll of 0 entries: %d", r);

	/* Precise errors afterwards. */
	TEST_ASSERT_EQUAL(drnic_cq_req_notify(scq, 0), -EOVERFLOW, "req_notify on a CQ in error");
	TEST_ASSERT_EQUAL(drnic_cq_req_notify(scq, 1), -EOVERFLOW,
			  "req_notify(solicited) on a CQ in error");
	TEST_ASSERT_EQUAL(drnic_cq_resize(scq, 64), -EOVERFLOW, "resize of a CQ in error");

	/* Work posted to the QP in ERR still completes (WR_FLUSH_ERR), and the
	 * CQ in error counts it as refused: never silently dropped. */
	drnic_cq_query_stats(scq, &st);
	ov_before = st.overflows;
	TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 150, rbuf, OV_LEN, drnic_mr_lkey(rmr)),
			    "post_recv on a QP in ERR is allowed");
	TEST_ASSERT_SUCCESS(sem_post_send(sqp, 151, DRNIC_WR_SEND, rbuf, OV_LEN,
					  drnic_mr_lkey(rmr), 0, 0, 0),
			    "post_send on a QP in ERR is allowed");
	ov_wait_total(c, scq, OV_MSGS + OV_IDLE_RECVS + 2, &st, 2000);
	TEST_ASSERT_EQUAL(st.overflows, ov_before + 2,
			  "the two flushed WRs are counted as refused CQEs");
	TEST_ASSERT_EQUAL(st.completions, OV_DEPTH, "nothing published into the CQ in error");

	/* Destruction: EBUSY while the QP uses the CQ, then while CQ_ERR is
	 * not acknowledged; fine after. */
	r = drnic_cq_destroy(scq);
	if (r == 0)
		ov_forget_cq(c, scq);
	TEST_ASSERT_EQUAL(r, -EBUSY, "destroy a CQ used by a QP");
	aq = drnic_device_async_queue(c->dev[SEM_SRV]);
	{
		struct drnic_async_event ev;
		unsigned int k, keep = 0;

		/* Take what is left; acknowledge all but the CQ_ERR. */
		while (drnic_try_get_async_event(aq, &ev) == 0) {
			if (c->nb_ev[SEM_SRV] < SEM_MAX_EV)
				c->ev[SEM_SRV][c->nb_ev[SEM_SRV]++] = ev;
			else
				drnic_ack_async_event(aq, &ev);
		}
		for (k = 0; k < c->nb_ev[SEM_SRV]; k++) {
			if (c->ev[SEM_SRV][k].event_type == DRNIC_EVENT_CQ_ERR)
				c->ev[SEM_SRV][keep++] = c->ev[SEM_SRV][k];
			else
				drnic_ack_async_event(aq, &c->ev[SEM_SRV][k]);
		}
		c->nb_ev[SEM_SRV] = keep;
		TEST_ASSERT_EQUAL(keep, 1, "exactly one CQ_ERR event");
		TEST_ASSERT_SUCCESS(sem_destroy_qp(c, sqp), "destroy the server QP");
		TEST_ASSERT_SUCCESS(sem_destroy_qp(c, sqp_b), "destroy the idle server QP");
		r = drnic_cq_destroy(scq);
		if (r == 0)
			ov_forget_cq(c, scq);
		TEST_ASSERT_EQUAL(r, -EBUSY, "destroy a CQ whose CQ_ERR is unacknowledged");
		sem_ack_async(c, SEM_SRV);
		TEST_ASSERT_SUCCESS(sem_destroy_cq(c, scq), "destroy after the acknowledgement");
	}

	/* Every client WR completes exactly once, in order: SUCCESS for the
	 * messages the server took (8, or 9 when the responder acknowledged
	 * the message whose CQE overflowed), an error after. */
	n = sem_poll_n(c, ccq, wc, OV_MSGS, 3000);
	if (n != (int)OV_MSGS)
		for (i = 0; i < (uint32_t)RTE_MAX(n, 0); i++)
			sem_print_wc("client", &wc[i]);
	/* The QP in ERR answers nothing: the client's later sends must end
	 * with RETRY_EXC_ERR after retry_cnt (7) retries of the 67 ms timeout
	 * (IBA 9.7.6.1.3), then the rest flush: well within 3 s. */
	TEST_ASSERT_EQUAL(n, OV_MSGS, "client completions within 3 s");
	ok = 0;
	for (i = 0; i < OV_MSGS; i++) {
		TEST_ASSERT_EQUAL(wc[i].wr_id, 200 + i, "client completion order");
		TEST_ASSERT_EQUAL(wc[i].qp_num, cqpn, "client completion qp_num");
		if (wc[i].status == DRNIC_WC_SUCCESS) {
			TEST_ASSERT_EQUAL(ok, (int)i, "SUCCESS after an error on the client");
			ok++;
		}
	}
	printf("client: %d sends succeeded; first failure: %s\n", ok,
	       ok < (int)OV_MSGS ? drnic_wc_status_str(wc[ok].status) : "none");
	TEST_ASSERT(ok == (int)OV_DEPTH || ok == (int)OV_DEPTH + 1,
		    "client sends reported delivered: %d, expected 8 (or 9)", ok);
	TEST_ASSERT_EQUAL(wc[ok].status, DRNIC_WC_RETRY_EXC_ERR,
			  "first failed client send (wr_id %llu): transport retries exhausted",
			  (unsigned long long)wc[ok].wr_id);
	for (i = (uint32_t)ok + 1; i < OV_MSGS; i++)
		TEST_ASSERT_EQUAL(wc[i].status, DRNIC_WC_WR_FLUSH_ERR, "client send %u flushed", i);
	n = sem_poll_quiet(c, ccq, wc, 4, 20);
	TEST_ASSERT_EQUAL(n, 0, "no extra client completion");

	return TEST_SUCCESS;
}

static int
test_overflow_inline(void)
{
	return sem_run(DRNIC_PROGRESS_INLINE, "CQ overflow", ov_body);
}

static int
test_overflow_dedicated(void)
{
	return sem_run(DRNIC_PROGRESS_DEDICATED, "CQ overflow", ov_body);
}

DRNIC_TEST_REGISTER(sem_cq_overflow_inline_autotest, DRNIC_TEST_FAST, test_overflow_inline);
DRNIC_TEST_REGISTER(sem_cq_overflow_dedicated_autotest, DRNIC_TEST_FAST, test_overflow_dedicated);
