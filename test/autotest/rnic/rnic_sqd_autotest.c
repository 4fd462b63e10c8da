/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send queue drain: RTS -> SQD with en_sqd_async_notify raises SQ_DRAINED
 * once nothing is in flight; WRs posted in SQD wait; SQD -> RTS sends them.
 */
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "rnic_fixture.h"

static int
rnic_sqd_body(struct rnic_pair *p)
{
	struct drnic_qp_stats before, after;
	struct drnic_async_queue *aq = drnic_device_async_queue(p->a.dev);
	struct drnic_async_event ev;
	struct drnic_send_wr wr, *bad;
	struct drnic_qp_attr at;
	struct drnic_sge sge;
	struct drnic_wc wc;
	int i;

	memset(&at, 0, sizeof(at));
	at.qp_state = DRNIC_QPS_SQD;
	at.en_sqd_async_notify = 1;
	TEST_ASSERT_SUCCESS(drnic_modify_qp(p->a.qp, &at,
					    DRNIC_QP_STATE | DRNIC_QP_EN_SQD_ASYNC_NOTIFY),
			    "modify to SQD");
	TEST_ASSERT_EQUAL(drnic_qp_state(p->a.qp), DRNIC_QPS_SQD, "QP %s",
			  drnic_qp_state_str(drnic_qp_state(p->a.qp)));
	/* A WRITE posted in SQD waits. */
	memset(p->a.buf, 0x3C, 512);
	memset(p->b.buf, 0, 512);
	sge = (struct drnic_sge){ (uintptr_t)p->a.buf, 512, drnic_mr_lkey(p->a.mr) };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_RDMA_WRITE;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	wr.wr.rdma.rkey = drnic_mr_rkey(p->b.mr);
	drnic_qp_stats_get(p->a.qp, &before);
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &wr, &bad), "post_send in SQD");
	for (i = 0; i < 1000 && drnic_try_get_async_event(aq, &ev) != 0; i++)
		drnic_device_progress(p->a.dev);
	TEST_ASSERT(i < 1000, "no async event after 1000 engine steps");
	TEST_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_SQ_DRAINED, "event %d", ev.event_type);
	TEST_ASSERT_EQUAL(ev.qp_num, drnic_qp_num(p->a.qp), "event's QP");
	drnic_ack_async_event(aq, &ev);
	/* Drained, with the WRITE posted: 1000 more steps of both engines
	 * send nothing and complete nothing. */
	for (i = 0; i < 1000; i++) {
		drnic_device_progress(p->a.dev);
		drnic_device_progress(p->b.dev);
	}
	drnic_qp_stats_get(p->a.qp, &after);
	TEST_ASSERT_EQUAL(after.tx_packets, before.tx_packets, "a frame went out in SQD");
	TEST_ASSERT_EQUAL(drnic_cq_poll(p->a.cq, 1, &wc), 0, "a completion in SQD");
	TEST_ASSERT_EQUAL(p->b.buf[0], 0, "the WRITE landed in SQD");
	at.qp_state = DRNIC_QPS_RTS;
	TEST_ASSERT_SUCCESS(drnic_modify_qp(p->a.qp, &at, DRNIC_QP_STATE), "SQD to RTS");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "the WRITE after SQD -> RTS");
	TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "%s", drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.wr_id, 77, "wr_id");
	TEST_ASSERT(memcmp(p->b.buf, p->a.buf, 512) == 0, "bytes differ");
	return TEST_SUCCESS;
}

static int
rnic_sqd(void)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE };
	struct rnic_pair p;
	int rc;

	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair open");
	rc = rnic_sqd_body(&p);
	rnic_pair_close(&p);
	return rc;
}

DRNIC_TEST_REGISTER(rnic_sqd_inline_autotest, DRNIC_TEST_FAST, rnic_sqd);
