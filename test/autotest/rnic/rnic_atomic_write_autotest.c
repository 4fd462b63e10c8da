/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ATOMIC WRITE (IBA 1.5, IBV_WR_ATOMIC_WRITE) on the loopback wire, in both
 * progress modes: 8 bytes from an SGE and 8 inline bytes land at B, the
 * bytes around them untouched; every field of A's completion; a batch of
 * them in order among WRITEs; what post_send refuses (a length other than 8,
 * a misaligned address); and the responder's refusals, each with A's status,
 * B's async event and B's memory untouched: B's QP without remote writes
 * (REM_INV_REQ_ERR) and B's MR without remote writes (REM_ACCESS_ERR), both
 * while the QP and MR allow remote atomics.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "rnic_fixture.h"

#define AW_TARGET 8192   /* offset of the 8-byte word in B's buffer */

static int
aw_post(struct rnic_side *s, uint64_t wr_id, struct drnic_sge *sge, bool inl, uint64_t raddr,
	uint32_t rkey)
{
	struct drnic_send_wr wr = { 0 }, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_ATOMIC_WRITE;
	wr.send_flags = DRNIC_SEND_SIGNALED | (inl ? DRNIC_SEND_INLINE : 0);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return drnic_post_send(s->qp, &wr, &bad);
}

/* Every field of a successful ATOMIC WRITE completion. */
static int
aw_check_wc(const struct drnic_wc *wc, uint64_t wr_id, const struct rnic_pair *p)
{
	TEST_ASSERT_EQUAL(wc->status, DRNIC_WC_SUCCESS, "status %s", drnic_wc_status_str(wc->status));
	TEST_ASSERT_EQUAL(wc->wr_id, wr_id, "wr_id");
	TEST_ASSERT_EQUAL(wc->opcode, DRNIC_WC_ATOMIC_WRITE, "opcode %d", wc->opcode);
	TEST_ASSERT_EQUAL(wc->byte_len, 8, "byte_len %u", wc->byte_len);
	TEST_ASSERT_EQUAL(wc->qp_num, drnic_qp_num(p->a.qp), "qp_num");
	TEST_ASSERT_EQUAL(wc->src_qp, drnic_qp_num(p->b.qp), "src_qp");
	TEST_ASSERT_EQUAL(wc->wc_flags, 0, "wc_flags");
	TEST_ASSERT_EQUAL(wc->imm_data, 0, "imm_data");
	TEST_ASSERT_EQUAL(wc->vendor_err, 0, "vendor_err");
	return TEST_SUCCESS;
}

static int
aw_data(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode };
	struct rnic_pair p;
	struct drnic_wc wc[8];
	uint8_t *t;
	uint64_t v = 0x0123456789ABCDEFull, inl = 0xFEDCBA9876543210ull;
	struct drnic_sge sge;
	int rc = TEST_FAILED, i;

	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	t = p.b.buf + AW_TARGET;
	memset(t - 8, 0x5A, 24);

	/* From an SGE of A's MR. */
	memcpy(p.a.buf + 64, &v, 8);
	sge = (struct drnic_sge){ (uintptr_t)(p.a.buf + 64), 8, drnic_mr_lkey(p.a.mr) };
	if (aw_post(&p.a, 1, &sge, false, (uintptr_t)t, drnic_mr_rkey(p.b.mr)) != 0) {
		printf("post ATOMIC_WRITE failed\n");
		goto out;
	}
	if (rnic_poll(&p.a, wc, 1) != 1 || aw_check_wc(&wc[0], 1, &p) != TEST_SUCCESS)
		goto out;
	if (memcmp(t, &v, 8) != 0 || t[-1] != 0x5A || t[8] != 0x5A) {
		printf("B's word or its neighbours wrong after ATOMIC_WRITE\n");
		goto out;
	}
	/* Inline: the bytes are taken at post time; the source changes after. */
	sge = (struct drnic_sge){ (uintptr_t)&inl, 8, 0 };
	if (aw_post(&p.a, 2, &sge, true, (uintptr_t)t, drnic_mr_rkey(p.b.mr)) != 0) {
		printf("post inline ATOMIC_WRITE failed\n");
		goto out;
	}
	inl = 0;
	if (rnic_poll(&p.a, wc, 1) != 1 || aw_check_wc(&wc[0], 2, &p) != TEST_SUCCESS)
		goto out;
	v = 0xFEDCBA9876543210ull;
	if (memcmp(t, &v, 8) != 0 || t[-1] != 0x5A || t[8] != 0x5A) {
		printf("B's word wrong after the inline ATOMIC_WRITE\n");
		goto out;
	}
	/* Eight in a row to eight words: in order, each lands. */
	for (i = 0; i < 8; i++) {
		uint64_t x = 0x1000 + (uint64_t)i;

		memcpy(p.a.buf + 128 + 8 * i, &x, 8);
		sge = (struct drnic_sge){ (uintptr_t)(p.a.buf + 128 + 8 * i), 8,
					  drnic_mr_lkey(p.a.mr) };
		if (aw_post(&p.a, 10 + (uint64_t)i, &sge, false, (uintptr_t)(t + 64 + 8 * i),
			    drnic_mr_rkey(p.b.mr)) != 0) {
			printf("post %d failed\n", i);
			goto out;
		}
	}
	if (rnic_poll(&p.a, wc, 8) != 8) {
		printf("batch: completions missing\n");
		goto out;
	}
	for (i = 0; i < 8; i++) {
		uint64_t x;

		if (aw_check_wc(&wc[i], 10 + (uint64_t)i, &p) != TEST_SUCCESS)
			goto out;
		memcpy(&x, t + 64 + 8 * i, 8);
		if (x != 0x1000 + (uint64_t)i) {
			printf("batch word %d is %#lx\n", i, (unsigned long)x);
			goto out;
		}
	}

	/* Refused at post time: EINVAL, nothing sent. */
	sge = (struct drnic_sge){ (uintptr_t)(p.a.buf + 64), 4, drnic_mr_lkey(p.a.mr) };
	if (aw_post(&p.a, 3, &sge, false, (uintptr_t)t, drnic_mr_rkey(p.b.mr)) != -EINVAL) {
		printf("4 bytes not refused\n");
		goto out;
	}
	sge.length = 16;
	if (aw_post(&p.a, 3, &sge, false, (uintptr_t)t, drnic_mr_rkey(p.b.mr)) != -EINVAL) {
		printf("16 bytes not refused\n");
		goto out;
	}
	sge.length = 8;
	if (aw_post(&p.a, 3, &sge, false, (uintptr_t)t + 4, drnic_mr_rkey(p.b.mr)) != -EINVAL) {
		printf("misaligned address not refused\n");
		goto out;
	}
	if (rnic_poll_none(&p.a, 20) != 0) {
		printf("a refused WR completed\n");
		goto out;
	}
	rc = TEST_SUCCESS;
out:
	rnic_pair_close(&p);
	return rc;
}

/* B refuses: A's completion status, B's event, B's word untouched. */
static int
aw_refused(enum drnic_progress_mode mode, bool qp_refuses)
{
	struct rnic_pair_opts o = { .mode = mode };
	enum drnic_wc_status want = qp_refuses ? DRNIC_WC_REM_INV_REQ_ERR : DRNIC_WC_REM_ACCESS_ERR;
	enum drnic_event_type ev_want = qp_refuses ? DRNIC_EVENT_QP_REQ_ERR :
						     DRNIC_EVENT_QP_ACCESS_ERR;
	struct drnic_async_event ev;
	struct rnic_pair p;
	struct drnic_wc wc;
	struct drnic_sge sge;
	uint64_t v = 0x1111111111111111ull, before = 0x2222222222222222ull;
	int rc = TEST_FAILED;

	if (qp_refuses)
		o.qp_access = DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC;
	else
		o.mr_access = DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_READ |
			      DRNIC_ACCESS_REMOTE_ATOMIC;
	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	memcpy(p.b.buf + AW_TARGET, &before, 8);
	memcpy(p.a.buf + 64, &v, 8);
	sge = (struct drnic_sge){ (uintptr_t)(p.a.buf + 64), 8, drnic_mr_lkey(p.a.mr) };
	if (aw_post(&p.a, 5, &sge, false, (uintptr_t)(p.b.buf + AW_TARGET),
		    drnic_mr_rkey(p.b.mr)) != 0) {
		printf("post failed\n");
		goto out;
	}
	if (rnic_poll(&p.a, &wc, 1) != 1) {
		printf("no completion\n");
		goto out;
	}
	if (wc.status != want || wc.wr_id != 5 || wc.qp_num != drnic_qp_num(p.a.qp)) {
		printf("completion: status %s wr_id %lu\n", drnic_wc_status_str(wc.status),
		       (unsigned long)wc.wr_id);
		goto out;
	}
	if (memcmp(p.b.buf + AW_TARGET, &before, 8) != 0) {
		printf("B's word changed\n");
		goto out;
	}
	if (drnic_qp_state(p.a.qp) != DRNIC_QPS_ERR || drnic_qp_state(p.b.qp) != DRNIC_QPS_ERR) {
		printf("QPs not in ERR\n");
		goto out;
	}
	/* Raised before B's NAK left, so before A's completion. */
	if (drnic_try_get_async_event(drnic_device_async_queue(p.b.dev), &ev) != 0 ||
	    ev.event_type != ev_want) {
		printf("B's async event missing or wrong\n");
		goto out;
	}
	drnic_ack_async_event(drnic_device_async_queue(p.b.dev), &ev);
	rc = TEST_SUCCESS;
out:
	rnic_pair_close(&p);
	return rc;
}

static int
aw_all(enum drnic_progress_mode mode)
{
	TEST_ASSERT_SUCCESS(aw_data(mode), "data and completions");
	TEST_ASSERT_SUCCESS(aw_refused(mode, true), "QP without remote write");
	TEST_ASSERT_SUCCESS(aw_refused(mode, false), "MR without remote write");
	return TEST_SUCCESS;
}

static int
rnic_atomic_write_inline(void)
{
	return aw_all(DRNIC_PROGRESS_INLINE);
}

static int
rnic_atomic_write_dedicated(void)
{
	return aw_all(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_atomic_write_inline_autotest, DRNIC_TEST_FAST, rnic_atomic_write_inline);
DRNIC_TEST_REGISTER(rnic_atomic_write_dedicated_autotest, DRNIC_TEST_FAST,
		    rnic_atomic_write_dedicated);
