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
rnic_sqd(void)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE };
	struct drnic_qp_attr at;
	struct drnic_async_event ev;
	struct drnic_async_queue *aq;
	struct rnic_pair p;
	struct drnic_sge sge;
	struct drnic_send_wr wr, *bad;
	struct drnic_wc wc;
	int i, rc = TEST_FAILED;

	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	aq = drnic_device_async_queue(p.a.dev);
	memset(&at, 0, sizeof(at));
	at.qp_state = DRNIC_QPS_SQD;
	at.en_sqd_async_notify = 1;
	if (drnic_modify_qp(p.a.qp, &at, DRNIC_QP_STATE | DRNIC_QP_EN_SQD_ASYNC_NOTIFY) != 0) {
		printf("modify to SQD failed\n");
		goto out;
	}
	if (drnic_qp_state(p.a.qp) != DRNIC_QPS_SQD)
		goto out;
	/* A WRITE posted in SQD waits. */
	memset(p.a.buf, 0x3C, 512);
	memset(p.b.buf, 0, 512);
	sge = (struct drnic_sge){ (uintptr_t)p.a.buf, 512, drnic_mr_lkey(p.a.mr) };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_RDMA_WRITE;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf;
	wr.wr.rdma.rkey = drnic_mr_rkey(p.b.mr);
	if (drnic_post_send(p.a.qp, &wr, &bad) != 0) {
		printf("post_send in SQD refused\n");
		goto out;
	}
	for (i = 0; i < 1000 && drnic_try_get_async_event(aq, &ev) != 0; i++)
		drnic_device_progress(p.a.dev);
	if (i == 1000 || ev.event_type != DRNIC_EVENT_SQ_DRAINED ||
	    ev.qp_num != drnic_qp_num(p.a.qp)) {
		printf("no SQ_DRAINED event\n");
		goto out;
	}
	drnic_ack_async_event(aq, &ev);
	if (rnic_poll_none(&p.a, 20) != 0 || p.b.buf[0] != 0) {
		printf("a WR went out in SQD\n");
		goto out;
	}
	at.qp_state = DRNIC_QPS_RTS;
	if (drnic_modify_qp(p.a.qp, &at, DRNIC_QP_STATE) != 0)
		goto out;
	if (rnic_poll(&p.a, &wc, 1) != 1 || wc.status != DRNIC_WC_SUCCESS || wc.wr_id != 77) {
		printf("WRITE after SQD -> RTS did not complete\n");
		goto out;
	}
	if (memcmp(p.b.buf, p.a.buf, 512) != 0) {
		printf("bytes differ\n");
		goto out;
	}
	rc = TEST_SUCCESS;
out:
	rnic_pair_close(&p);
	return rc;
}

DRNIC_TEST_REGISTER(rnic_sqd_inline_autotest, DRNIC_TEST_FAST, rnic_sqd);
