/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error completions over the loopback: each with its exact status, wr_id and
 * qp_num; a bad rkey touches no memory; everything after an error is flushed;
 * RESET brings a QP back. Both progress modes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>

#include "test.h"
#include "rnic_fixture.h"

static int
expect_wc(struct rnic_side *s, uint64_t wr_id, enum drnic_wc_status status, const char *what)
{
	struct drnic_wc wc;

	TEST_ASSERT_EQUAL(rnic_poll(s, &wc, 1), 1, "%s: no completion", what);
	TEST_ASSERT_EQUAL(wc.status, status, "%s: status %s", what, drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.wr_id, wr_id, "%s: wr_id", what);
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(s->qp), "%s: qp_num", what);
	return TEST_SUCCESS;
}

#define EXPECT_WC(s, id, st, what)                                              \
	do {                                                                    \
		if (expect_wc(s, id, st, what) != TEST_SUCCESS)                 \
			return TEST_FAILED;                                     \
	} while (0)

static int
post_one(struct rnic_side *s, uint64_t wr_id, enum drnic_wr_opcode op, void *laddr, uint32_t len,
	 uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct drnic_sge sge = { (uintptr_t)laddr, len, lkey };
	struct drnic_send_wr wr = { 0 }, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == DRNIC_WR_ATOMIC_FETCH_AND_ADD || op == DRNIC_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	}
	return drnic_post_send(s->qp, &wr, &bad);
}

static int
post_recv(struct rnic_side *s, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct drnic_sge sge = { (uintptr_t)addr, len, lkey };
	struct drnic_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return drnic_post_recv(s->qp, &wr, &bad);
}

/* Both QPs back to RESET, empty CQs, connect again. */
static int
pair_reset(struct rnic_pair *p, const struct rnic_pair_opts *o)
{
	struct drnic_qp_attr a = { .qp_state = DRNIC_QPS_RESET };
	struct drnic_async_event ev;
	struct drnic_wc wc[16];

	TEST_ASSERT_SUCCESS(drnic_modify_qp(p->a.qp, &a, DRNIC_QP_STATE), "A to RESET");
	TEST_ASSERT_SUCCESS(drnic_modify_qp(p->b.qp, &a, DRNIC_QP_STATE), "B to RESET");
	TEST_ASSERT_EQUAL(drnic_qp_state(p->a.qp), DRNIC_QPS_RESET, "A in RESET");
	while (drnic_cq_poll(p->a.cq, 16, wc) > 0)
		;
	while (drnic_cq_poll(p->b.cq, 16, wc) > 0)
		;
	while (drnic_try_get_async_event(drnic_device_async_queue(p->a.dev), &ev) == 0)
		drnic_ack_async_event(drnic_device_async_queue(p->a.dev), &ev);
	while (drnic_try_get_async_event(drnic_device_async_queue(p->b.dev), &ev) == 0)
		drnic_ack_async_event(drnic_device_async_queue(p->b.dev), &ev);
	TEST_ASSERT_SUCCESS(rnic_qp_connect(&p->a, &p->b, o), "reconnect A");
	TEST_ASSERT_SUCCESS(rnic_qp_connect(&p->b, &p->a, o), "reconnect B");
	return TEST_SUCCESS;
}

#define PAIR_RESET(p, o)                                                        \
	do {                                                                    \
		if (pair_reset(p, o) != TEST_SUCCESS)                           \
			return TEST_FAILED;                                     \
	} while (0)

static int
errors(struct rnic_pair *p, const struct rnic_pair_opts *o)
{
	uint32_t la = drnic_mr_lkey(p->a.mr), lb = drnic_mr_lkey(p->b.mr);
	uint32_t rb = drnic_mr_rkey(p->b.mr);
	uint8_t *a = p->a.buf, *b = p->b.buf;
	uint8_t snapshot[256];
	struct drnic_async_event ev;
	struct drnic_mr *ro, *stale;
	struct drnic_qp_stats qs0, qs1;
	struct drnic_wc wc1;

	/* LOC_LEN_ERR at the receiver, REM_INV_REQ_ERR at the sender; what
	 * follows is flushed on both sides. */
	TEST_ASSERT_SUCCESS(post_recv(&p->b, 1001, b, 100, lb), "post_recv");
	TEST_ASSERT_SUCCESS(post_recv(&p->b, 1002, b + 4096, 100, lb), "post_recv");
	TEST_ASSERT_SUCCESS(post_one(&p->a, 1, DRNIC_WR_SEND, a, 200, la, 0, 0), "send 200");
	TEST_ASSERT_SUCCESS(post_one(&p->a, 2, DRNIC_WR_SEND, a, 10, la, 0, 0), "send 10");
	EXPECT_WC(&p->b, 1001, DRNIC_WC_LOC_LEN_ERR, "receive too small");
	EXPECT_WC(&p->b, 1002, DRNIC_WC_WR_FLUSH_ERR, "next receive flushed");
	EXPECT_WC(&p->a, 1, DRNIC_WC_REM_INV_REQ_ERR, "sender of too long a message");
	EXPECT_WC(&p->a, 2, DRNIC_WC_WR_FLUSH_ERR, "next send flushed");
	TEST_ASSERT_EQUAL(drnic_qp_state(p->a.qp), DRNIC_QPS_ERR, "sender QP in ERR");
	TEST_ASSERT_EQUAL(drnic_qp_state(p->b.qp), DRNIC_QPS_ERR, "receiver QP in ERR");
	TEST_ASSERT_SUCCESS(drnic_try_get_async_event(drnic_device_async_queue(p->b.dev), &ev),
			    "receiver raised an async event");
	TEST_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_QP_REQ_ERR, "QP_REQ_ERR event");
	TEST_ASSERT_EQUAL(ev.qp_num, drnic_qp_num(p->b.qp), "event qp_num");
	drnic_ack_async_event(drnic_device_async_queue(p->b.dev), &ev);
	/* Posting in ERR completes with WR_FLUSH_ERR. */
	TEST_ASSERT_SUCCESS(post_one(&p->a, 3, DRNIC_WR_RDMA_WRITE, a, 10, la, (uintptr_t)b, rb),
			    "post in ERR");
	EXPECT_WC(&p->a, 3, DRNIC_WC_WR_FLUSH_ERR, "send posted in ERR");
	TEST_ASSERT_SUCCESS(post_recv(&p->b, 1003, b, 100, lb), "post_recv in ERR");
	EXPECT_WC(&p->b, 1003, DRNIC_WC_WR_FLUSH_ERR, "receive posted in ERR");
	PAIR_RESET(p, o);

	/* LOC_PROT_ERR: a bad lkey; a stale lkey; a READ into memory without
	 * LOCAL_WRITE. Nothing reaches the peer. */
	TEST_ASSERT_SUCCESS(post_recv(&p->b, 2001, b, 4096, lb), "post_recv");
	drnic_qp_stats_get(p->a.qp, &qs0);
	TEST_ASSERT_SUCCESS(post_one(&p->a, 10, DRNIC_WR_SEND, a, 64, la ^ 0x100, 0, 0), "bad lkey");
	EXPECT_WC(&p->a, 10, DRNIC_WC_LOC_PROT_ERR, "send with a bad lkey");
	/* The WQE failed before its first packet: nothing was sent. */
	drnic_qp_stats_get(p->a.qp, &qs1);
	TEST_ASSERT_EQUAL(qs1.tx_packets, qs0.tx_packets, "frames sent for a bad lkey");
	TEST_ASSERT_EQUAL(drnic_cq_poll(p->b.cq, 1, &wc1), 0, "a completion at the peer");
	PAIR_RESET(p, o);
	stale = drnic_reg_mr(p->a.pd, a, 4096, DRNIC_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(stale != NULL, "reg_mr");
	{
		uint32_t key = drnic_mr_lkey(stale);

		TEST_ASSERT_SUCCESS(drnic_dereg_mr(stale), "dereg_mr");
		TEST_ASSERT_SUCCESS(post_one(&p->a, 11, DRNIC_WR_SEND, a, 64, key, 0, 0), "stale lkey");
		EXPECT_WC(&p->a, 11, DRNIC_WC_LOC_PROT_ERR, "send with a stale lkey");
	}
	PAIR_RESET(p, o);
	ro = drnic_reg_mr(p->a.pd, a + 65536, 4096, 0);
	TEST_ASSERT(ro != NULL, "reg_mr read-only");
	TEST_ASSERT_SUCCESS(post_one(&p->a, 12, DRNIC_WR_RDMA_READ, a + 65536, 64, drnic_mr_lkey(ro),
				     (uintptr_t)b, rb), "read into read-only memory");
	EXPECT_WC(&p->a, 12, DRNIC_WC_LOC_PROT_ERR, "READ without LOCAL_WRITE");
	drnic_dereg_mr(ro);
	PAIR_RESET(p, o);

	/* REM_ACCESS_ERR: a bad rkey, out of bounds, no remote write access.
	 * The target bytes stay untouched. */
	memset(b, 0x5A, sizeof(snapshot));
	memcpy(snapshot, b, sizeof(snapshot));
	memset(a, 0x11, 256);
	TEST_ASSERT_SUCCESS(post_one(&p->a, 20, DRNIC_WR_RDMA_WRITE, a, 256, la, (uintptr_t)b,
				     rb ^ 0x100), "write with a bad rkey");
	EXPECT_WC(&p->a, 20, DRNIC_WC_REM_ACCESS_ERR, "WRITE with a bad rkey");
	TEST_ASSERT(memcmp(b, snapshot, sizeof(snapshot)) == 0, "bad rkey touched memory");
	TEST_ASSERT_EQUAL(drnic_qp_state(p->b.qp), DRNIC_QPS_ERR, "responder QP in ERR");
	PAIR_RESET(p, o);
	TEST_ASSERT_SUCCESS(post_one(&p->a, 21, DRNIC_WR_RDMA_WRITE, a, 256, la,
				     (uintptr_t)(b + RNIC_BUF_SIZE - 100), rb), "write past the end");
	EXPECT_WC(&p->a, 21, DRNIC_WC_REM_ACCESS_ERR, "WRITE out of bounds");
	PAIR_RESET(p, o);
	TEST_ASSERT_SUCCESS(post_one(&p->a, 22, DRNIC_WR_RDMA_READ, a, 256, la, (uintptr_t)b,
				     rb ^ 0x100), "read with a bad rkey");
	EXPECT_WC(&p->a, 22, DRNIC_WC_REM_ACCESS_ERR, "READ with a bad rkey");
	PAIR_RESET(p, o);
	ro = drnic_reg_mr(p->b.pd, b, 4096, DRNIC_ACCESS_REMOTE_READ);
	TEST_ASSERT(ro != NULL, "reg_mr remote read only");
	TEST_ASSERT_SUCCESS(post_one(&p->a, 23, DRNIC_WR_RDMA_WRITE, a, 256, la, (uintptr_t)b,
				     drnic_mr_rkey(ro)), "write without REMOTE_WRITE");
	EXPECT_WC(&p->a, 23, DRNIC_WC_REM_ACCESS_ERR, "WRITE without REMOTE_WRITE");
	TEST_ASSERT(memcmp(b, snapshot, sizeof(snapshot)) == 0, "refused WRITE touched memory");
	PAIR_RESET(p, o);
	TEST_ASSERT_SUCCESS(post_one(&p->a, 24, DRNIC_WR_ATOMIC_FETCH_AND_ADD, a, 8, la,
				     (uintptr_t)b, drnic_mr_rkey(ro)), "atomic without REMOTE_ATOMIC");
	EXPECT_WC(&p->a, 24, DRNIC_WC_REM_ACCESS_ERR, "atomic without REMOTE_ATOMIC");
	TEST_ASSERT(memcmp(b, snapshot, sizeof(snapshot)) == 0, "refused atomic touched memory");
	drnic_dereg_mr(ro);
	PAIR_RESET(p, o);

	/* Good, bad, good: success, the error, then a flush. */
	TEST_ASSERT_SUCCESS(post_one(&p->a, 30, DRNIC_WR_RDMA_WRITE, a, 64, la, (uintptr_t)b, rb),
			    "good write");
	TEST_ASSERT_SUCCESS(post_one(&p->a, 31, DRNIC_WR_RDMA_WRITE, a, 64, la, (uintptr_t)b,
				     rb + 0x100), "bad write");
	TEST_ASSERT_SUCCESS(post_one(&p->a, 32, DRNIC_WR_RDMA_WRITE, a, 64, la, (uintptr_t)b, rb),
			    "good write");
	EXPECT_WC(&p->a, 30, DRNIC_WC_SUCCESS, "write before the error");
	EXPECT_WC(&p->a, 31, DRNIC_WC_REM_ACCESS_ERR, "the bad write");
	EXPECT_WC(&p->a, 32, DRNIC_WC_WR_FLUSH_ERR, "write after the error");
	PAIR_RESET(p, o);

	/* Moving a QP to ERR flushes its posted receives. */
	TEST_ASSERT_SUCCESS(post_recv(&p->b, 3001, b, 64, lb), "post_recv");
	TEST_ASSERT_SUCCESS(post_recv(&p->b, 3002, b, 64, lb), "post_recv");
	{
		struct drnic_qp_attr at = { .qp_state = DRNIC_QPS_ERR };

		TEST_ASSERT_SUCCESS(drnic_modify_qp(p->b.qp, &at, DRNIC_QP_STATE), "to ERR");
	}
	EXPECT_WC(&p->b, 3001, DRNIC_WC_WR_FLUSH_ERR, "flushed receive");
	EXPECT_WC(&p->b, 3002, DRNIC_WC_WR_FLUSH_ERR, "flushed receive");
	PAIR_RESET(p, o);

	/* After all this the pair works again. */
	memset(a, 0x77, 128);
	TEST_ASSERT_SUCCESS(post_recv(&p->b, 4001, b + 8192, 128, lb), "post_recv");
	TEST_ASSERT_SUCCESS(post_one(&p->a, 40, DRNIC_WR_SEND, a, 128, la, 0, 0), "send");
	EXPECT_WC(&p->a, 40, DRNIC_WC_SUCCESS, "send after reset");
	EXPECT_WC(&p->b, 4001, DRNIC_WC_SUCCESS, "receive after reset");
	TEST_ASSERT(memcmp(b + 8192, a, 128) == 0, "bytes after reset");
	return TEST_SUCCESS;
}

static int
loc_qp_op_err(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode, .zero_rd_atomic = true };
	struct rnic_pair p;
	int rc;

	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	rc = post_one(&p.a, 50, DRNIC_WR_RDMA_READ, p.a.buf, 64, drnic_mr_lkey(p.a.mr),
		      (uintptr_t)p.b.buf, drnic_mr_rkey(p.b.mr));
	if (rc == 0)
		rc = expect_wc(&p.a, 50, DRNIC_WC_LOC_QP_OP_ERR, "READ with max_rd_atomic 0");
	rnic_pair_close(&p);
	return rc == 0 ? TEST_SUCCESS : TEST_FAILED;
}

static int
run(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode };
	struct rnic_pair p;
	int rc;

	if (mode == DRNIC_PROGRESS_DEDICATED && rte_lcore_count() < 2)
		TEST_SKIP("dedicated mode needs a worker lcore");
	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	rc = errors(&p, &o);
	rnic_pair_close(&p);
	if (rc != TEST_SUCCESS)
		return rc;
	return loc_qp_op_err(mode);
}

static int
rnic_errors_inline(void)
{
	return run(DRNIC_PROGRESS_INLINE);
}

static int
rnic_errors_dedicated(void)
{
	return run(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_errors_inline_autotest, DRNIC_TEST_FAST, rnic_errors_inline);
DRNIC_TEST_REGISTER(rnic_errors_dedicated_autotest, DRNIC_TEST_FAST, rnic_errors_dedicated);
