/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/engine/requester.c, driven step by step: segmentation
 * into path-MTU packets, opcodes, PSNs, gathers, READ/atomic requests,
 * fences and limits, local failures, budget, rewind, PSN wrap.
 */
/* verbs_mr_key_live() answers what the test says (ut_engine_stubs.h). */
#define VERBS_MR_KEY_LIVE_STUB
#include "lib/engine/requester.c"
#include "lib/engine/recovery.c"

#include "test/unit/lib/engine/ut_engine_stubs.h"
#include "ut_common.h"

static int ut_retired;

int
comp_retire(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	ut_retired++;
	return 0;
}

/* recovery.c's timer and probe act through the completer; these tests
 * never fire them. */
void
comp_go_back(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	CU_FAIL("comp_go_back() called");
}

void
comp_fail_oldest(struct engine_qp *eq, enum drnic_wc_status status)
{
	RTE_SET_USED(eq);
	RTE_SET_USED(status);
	CU_FAIL("comp_fail_oldest() called");
}

/* UC: the requester reports each WQE whose last packet has left. */
static uint32_t ut_unanswered[8];
static unsigned int ut_nunanswered;

void
comp_unanswered_sent(struct engine_qp *eq, uint32_t psn)
{
	RTE_SET_USED(eq);
	if (ut_nunanswered < RTE_DIM(ut_unanswered))
		ut_unanswered[ut_nunanswered] = psn;
	ut_nunanswered++;
}

static uint8_t src[8192];

static void
ut_fill(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 3);
}

static void
test_send_segments(void)
{
	struct engine_qp *eq = ut_qp_reset(100);
	struct drnic_sge sge[3] = { { (uintptr_t)src, 1000, 1 }, { (uintptr_t)src + 1000, 1000, 1 },
				    { (uintptr_t)src + 2000, 500, 1 } };
	struct verbs_send_wqe *w;

	ut_fill();
	w = ut_post_send(1, DRNIC_WR_SEND, sge, 3, DRNIC_SEND_SOLICITED);
	CU_ASSERT_EQUAL(req_step(eq, 32), 3);
	CU_ASSERT_EQUAL(ut_ntx, 3);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_FIRST);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_MIDDLE);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_LAST);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.psn, 100);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.psn, 101);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.psn, 102);
	CU_ASSERT_EQUAL(ut_tx[0].len, 1024);
	CU_ASSERT_EQUAL(ut_tx[1].len, 1024);
	CU_ASSERT_EQUAL(ut_tx[2].len, 452);
	CU_ASSERT_EQUAL(memcmp(ut_tx[0].data, src, 1024), 0);
	CU_ASSERT_EQUAL(memcmp(ut_tx[1].data, src + 1024, 1024), 0);
	CU_ASSERT_EQUAL(memcmp(ut_tx[2].data, src + 2048, 452), 0);
	/* AckReq and SE on the last packet only. */
	CU_ASSERT_FALSE(ut_tx[0].pkt.bth.ackreq);
	CU_ASSERT_FALSE(ut_tx[1].pkt.bth.ackreq);
	CU_ASSERT_TRUE(ut_tx[2].pkt.bth.ackreq);
	CU_ASSERT_FALSE(ut_tx[0].pkt.bth.se);
	CU_ASSERT_TRUE(ut_tx[2].pkt.bth.se);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.dqpn, 33);
	CU_ASSERT_EQUAL(w->first_psn, 100);
	CU_ASSERT_EQUAL(w->last_psn, 102);
	CU_ASSERT_EQUAL(w->state, WQE_SENT);
	CU_ASSERT_EQUAL(eq->req.npsn, 103);
	CU_ASSERT_EQUAL(eq->req.idx, 1);
	CU_ASSERT_EQUAL(eq->req.state, REQ_IDLE);
	CU_ASSERT_NOT_EQUAL(eq->rec.retry_deadline_ns, 0);   /* the timer runs */
	CU_ASSERT_EQUAL(req_step(eq, 32), 0);            /* nothing more */
}

/* UC: the same segments with UC's opcodes, no AckReq, no timer; each WQE
 * is complete when its last packet has left. */
static void
test_uc(void)
{
	struct engine_qp *eq = ut_qp_reset(100);
	struct drnic_sge sge = { (uintptr_t)src, 2500, 1 }, one = { (uintptr_t)src, 8, 1 };
	struct verbs_send_wqe *w;

	ut_qp.type = DRNIC_QPT_UC;
	eq->uc = true;
	eq->path.timeout = 0;
	ut_nunanswered = 0;
	ut_post_send(1, DRNIC_WR_SEND_WITH_IMM, &sge, 1, 0);
	w = ut_post_send(2, DRNIC_WR_RDMA_WRITE, &one, 1, 0);
	w->remote_addr = 0xABC000;
	w->rkey = 0x777;
	CU_ASSERT_EQUAL(req_step(eq, 32), 4);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, 4);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_UC_SEND_FIRST);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.opcode, DRNIC_WIRE_OP_UC_SEND_MIDDLE);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_UC_SEND_LAST_WITH_IMMEDIATE);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.bth.opcode, DRNIC_WIRE_OP_UC_RDMA_WRITE_ONLY);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.reth.rkey, 0x777);
	CU_ASSERT_FALSE(ut_tx[0].pkt.bth.ackreq || ut_tx[1].pkt.bth.ackreq ||
			ut_tx[2].pkt.bth.ackreq || ut_tx[3].pkt.bth.ackreq);
	CU_ASSERT_EQUAL(ut_nunanswered, 2);
	CU_ASSERT_EQUAL(ut_unanswered[0], 102);
	CU_ASSERT_EQUAL(ut_unanswered[1], 103);
	CU_ASSERT_EQUAL(eq->rec.retry_deadline_ns, 0);     /* no timer */
	ut_qp.type = DRNIC_QPT_RC;
}

static void
test_write_variants(void)
{
	struct engine_qp *eq = ut_qp_reset(5);
	struct drnic_sge sge = { (uintptr_t)src, 1024, 1 }, zero = { (uintptr_t)src, 0, 1 };
	struct verbs_send_wqe *w;

	w = ut_post_send(2, DRNIC_WR_RDMA_WRITE_WITH_IMM, &sge, 1, 0);
	w->remote_addr = 0xABC000;
	w->rkey = 0x777;
	w->imm_data = 0x11223344;
	w = ut_post_send(3, DRNIC_WR_RDMA_WRITE, &zero, 1, 0);
	w->remote_addr = 0xDEF000;
	w->rkey = 0x778;
	sge.length = 2049;
	w = ut_post_send(4, DRNIC_WR_RDMA_WRITE_WITH_IMM, &sge, 1, 0);
	w->remote_addr = 0x100000;
	w->rkey = 0x779;
	w->imm_data = 0x55;
	CU_ASSERT_EQUAL(req_step(eq, 32), 5);
	/* Exactly one MTU: ONLY with immediate, RETH carrying the length. */
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.reth.va, 0xABC000);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.reth.rkey, 0x777);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.reth.dmalen, 1024);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.imm, 0x11223344);
	/* Zero bytes: one ONLY packet, no payload. */
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY);
	CU_ASSERT_EQUAL(ut_tx[1].len, 0);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.reth.dmalen, 0);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.psn, 6);
	/* Three packets: RETH on the first only, immediate on the last only. */
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.reth.dmalen, 2049);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.reth.dmalen, 0);
	CU_ASSERT_EQUAL(ut_tx[4].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE);
	CU_ASSERT_EQUAL(ut_tx[4].pkt.imm, 0x55);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.imm, 0);
	CU_ASSERT_EQUAL(ut_tx[4].len, 1);
	CU_ASSERT_EQUAL(eq->req.npsn, 10);
}

static void
test_read_atomic(void)
{
	struct engine_qp *eq = ut_qp_reset(0xFFFFFE);
	struct drnic_sge sge = { (uintptr_t)src, 3000, 1 }, a8 = { (uintptr_t)src, 8, 1 };
	struct verbs_send_wqe *r, *c, *f;

	r = ut_post_send(5, DRNIC_WR_RDMA_READ, &sge, 1, 0);
	r->remote_addr = 0x4000;
	r->rkey = 0x99;
	c = ut_post_send(6, DRNIC_WR_ATOMIC_CMP_AND_SWP, &a8, 1, 0);
	c->remote_addr = 0x8000;
	c->rkey = 0x98;
	c->compare_add = 10;
	c->swap = 20;
	f = ut_post_send(7, DRNIC_WR_ATOMIC_FETCH_AND_ADD, &a8, 1, 0);
	f->compare_add = 5;
	CU_ASSERT_EQUAL(req_step(eq, 32), 3);
	/* One request for a 3-packet READ; it takes 3 PSNs (wrapping). */
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.psn, 0xFFFFFE);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.reth.dmalen, 3000);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.reth.va, 0x4000);
	CU_ASSERT_EQUAL(ut_tx[0].len, 0);
	CU_ASSERT_EQUAL(r->first_psn, 0xFFFFFE);
	CU_ASSERT_EQUAL(r->last_psn, 0);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.opcode, DRNIC_WIRE_OP_RC_COMPARE_SWAP);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.psn, 1);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.atomic.cmp, 10);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.atomic.swap_add, 20);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.atomic.va, 0x8000);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_FETCH_ADD);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.atomic.swap_add, 5);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.psn, 2);
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 3);
	CU_ASSERT_EQUAL(eq->req.npsn, 3);
}

/* One requester step that fails WQE @p w with @p status: @p ntx packets
 * sent in all, the requester stopped, the WQE retired once. */
static void
ut_step_fails(struct engine_qp *eq, const struct verbs_send_wqe *w, unsigned int ntx,
	      uint8_t status)
{
	ut_retired = 0;
	req_step(eq, 32);
	CU_ASSERT_EQUAL(ut_ntx, ntx);
	CU_ASSERT_EQUAL(w->state, WQE_FAILED);
	CU_ASSERT_EQUAL(w->status, status);
	CU_ASSERT_EQUAL(eq->req.state, REQ_STOPPED);
	CU_ASSERT_EQUAL(ut_retired, 1);
}

/* XRC initiator: every request packet names the WQE's target SRQ (the
 * XRCETH; engine_qp_tx turns RC's opcodes into XRC's), reliable as RC. */
static void
test_xrc_srqn(void)
{
	struct engine_qp *eq = ut_qp_reset(10);
	struct drnic_sge sge = { (uintptr_t)src, 2500, 1 }, a8 = { (uintptr_t)src, 8, 1 };
	struct verbs_send_wqe *w;
	unsigned int i;

	ut_qp.type = DRNIC_QPT_XRC_SEND;
	eq->xrc = true;
	w = ut_post_send(1, DRNIC_WR_SEND, &sge, 1, 0);
	w->xrc_srqn = 0x123456;
	w = ut_post_send(2, DRNIC_WR_RDMA_READ, &sge, 1, 0);
	w->xrc_srqn = 0x000042;
	w = ut_post_send(3, DRNIC_WR_ATOMIC_FETCH_AND_ADD, &a8, 1, 0);
	w->xrc_srqn = 0x000043;
	CU_ASSERT_EQUAL(req_step(eq, 32), 5);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, 5);
	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(ut_tx[i].pkt.xrceth.srqn, 0x123456);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_LAST);
	CU_ASSERT_TRUE(ut_tx[2].pkt.bth.ackreq);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.xrceth.srqn, 0x42);
	CU_ASSERT_EQUAL(ut_tx[4].pkt.bth.opcode, DRNIC_WIRE_OP_RC_FETCH_ADD);
	CU_ASSERT_EQUAL(ut_tx[4].pkt.xrceth.srqn, 0x43);
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 2);
	ut_qp.type = DRNIC_QPT_RC;
}

static void
test_fence_and_limits(void)
{
	struct engine_qp *eq = ut_qp_reset(0);
	struct drnic_sge sge = { (uintptr_t)src, 64, 1 };

	ut_eq.path.max_rd_atomic = 1;
	ut_post_send(1, DRNIC_WR_RDMA_READ, &sge, 1, 0);
	ut_post_send(2, DRNIC_WR_RDMA_READ, &sge, 1, 0);
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);
	CU_ASSERT_EQUAL(eq->req.state, REQ_WAIT_RD_ATOMIC);
	CU_ASSERT_EQUAL(req_step(eq, 32), 0);
	/* The completer finishes the first READ: the second goes. */
	eq->req.rd_outstanding = 0;
	eq->req.state = REQ_IDLE;
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);
	/* A fenced SEND waits for the outstanding READ. */
	ut_post_send(3, DRNIC_WR_SEND, &sge, 1, DRNIC_SEND_FENCE);
	CU_ASSERT_EQUAL(req_step(eq, 32), 0);
	CU_ASSERT_EQUAL(eq->req.state, REQ_WAIT_FENCE);
	eq->req.rd_outstanding = 0;
	eq->req.state = REQ_IDLE;
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_ONLY);
	/* SQD: nothing new starts. */
	atomic_store(&ut_qp.state, DRNIC_QPS_SQD);
	ut_post_send(4, DRNIC_WR_SEND, &sge, 1, 0);
	CU_ASSERT_EQUAL(req_step(eq, 32), 0);
	CU_ASSERT_EQUAL(eq->req.state, REQ_DRAINED);
}

static void
test_local_failures(void)
{
	struct engine_qp *eq = ut_qp_reset(0);
	struct drnic_sge sge = { (uintptr_t)src, 64, 1 };
	struct verbs_send_wqe *w;

	/* READ with max_rd_atomic 0: LOC_QP_OP_ERR, nothing sent. */
	ut_eq.path.max_rd_atomic = 0;
	w = ut_post_send(1, DRNIC_WR_RDMA_READ, &sge, 1, 0);
	ut_step_fails(eq, w, 0, DRNIC_WC_LOC_QP_OP_ERR);
	/* Stopped: later WQEs wait for the flush. */
	ut_post_send(2, DRNIC_WR_SEND, &sge, 1, 0);
	CU_ASSERT_EQUAL(req_step(eq, 32), 0);

	/* Bad lkey: LOC_PROT_ERR, nothing sent. */
	eq = ut_qp_reset(0);
	ut_key_rc = -ENOENT;
	w = ut_post_send(3, DRNIC_WR_SEND, &sge, 1, 0);
	req_step(eq, 32);
	CU_ASSERT_EQUAL(ut_ntx, 0);
	CU_ASSERT_EQUAL(w->state, WQE_FAILED);
	CU_ASSERT_EQUAL(w->status, DRNIC_WC_LOC_PROT_ERR);
	/* Inline data needs no key. */
	eq = ut_qp_reset(0);
	ut_key_rc = -ENOENT;
	w = ut_post_send(4, DRNIC_WR_SEND, NULL, 0, DRNIC_SEND_INLINE);
	w->inl = 1;
	w->length = 40;
	memcpy(w->sge, "inline payload, forty bytes long........", 40);
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);
	CU_ASSERT_EQUAL(ut_tx[0].len, 40);
	CU_ASSERT_EQUAL(memcmp(ut_tx[0].data, "inline payload", 14), 0);
}

/*
 * BIND_MW and LOCAL_INV are local: executed when the requester reaches
 * them, in order, no packet and no PSN (an empty range), retired at once;
 * one the rules refuse fails MW_BIND_ERR and stops the requester; a
 * go-back over an executed one does not execute it again. SEND with
 * Invalidate carries the IETH on its last packet only.
 */
static void
test_local_ops(void)
{
	struct engine_qp *eq = ut_qp_reset(500);
	struct drnic_sge sge = { (uintptr_t)src, 1500, 1 };
	struct verbs_send_wqe *w, *b, *inv;

	ut_fill();
	w = ut_post_send(1, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);   /* 2 packets */
	b = ut_post_send(2, DRNIC_WR_BIND_MW, NULL, 0, 0);
	inv = ut_post_send(3, DRNIC_WR_LOCAL_INV, NULL, 0, 0);
	inv->imm_data = 0x80001234;
	ut_post_send(4, DRNIC_WR_SEND_WITH_INV, &sge, 1, 0)->imm_data = 0x80005601;
	ut_retired = 0;
	/* WRITE 2 packets, the bind, LOCAL_INV, SEND 2 packets. */
	CU_ASSERT_EQUAL(req_step(eq, 32), 6);
	CU_ASSERT_EQUAL(ut_mw_binds, 1);
	CU_ASSERT_EQUAL(ut_mw_invs, 1);
	CU_ASSERT_EQUAL(ut_mw_inv_rkey, 0x80001234);
	CU_ASSERT_FALSE(ut_mw_inv_remote);
	CU_ASSERT_EQUAL(ut_retired, 2);
	CU_ASSERT_EQUAL(b->state, WQE_DONE);
	CU_ASSERT_EQUAL(inv->state, WQE_DONE);
	/* No PSN: the SEND's packets follow the WRITE's. */
	CU_ASSERT_EQUAL(b->first_psn, 502);
	CU_ASSERT_EQUAL(b->last_psn, 501);
	CU_ASSERT_EQUAL(ut_ntx, 4);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.psn, 502);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_FIRST);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_LAST_WITH_INVALIDATE);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.ieth_rkey, 0x80005601);
	/* Back to the WRITE (a NAK): the bind and LOCAL_INV are not again. */
	req_rewind(eq, 0);
	CU_ASSERT_EQUAL(b->state, WQE_DONE);
	ut_ntx = 0;
	CU_ASSERT_EQUAL(req_step(eq, 32), 6);
	CU_ASSERT_EQUAL(ut_mw_binds, 1);
	CU_ASSERT_EQUAL(ut_mw_invs, 1);
	CU_ASSERT_EQUAL(ut_ntx, 4);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.psn, 502);
	CU_ASSERT_EQUAL(w->first_psn, 500);

	/* Refused by the rules: MW_BIND_ERR, nothing sent, stopped. */
	eq = ut_qp_reset(0);
	ut_mw_rc = -EINVAL;
	b = ut_post_send(5, DRNIC_WR_BIND_MW, NULL, 0, 0);
	ut_post_send(6, DRNIC_WR_SEND, &sge, 1, 0);
	ut_step_fails(eq, b, 0, DRNIC_WC_MW_BIND_ERR);
	eq = ut_qp_reset(0);
	ut_mw_rc = -EINVAL;
	inv = ut_post_send(7, DRNIC_WR_LOCAL_INV, NULL, 0, 0);
	req_step(eq, 32);
	CU_ASSERT_EQUAL(inv->state, WQE_FAILED);
	CU_ASSERT_EQUAL(inv->status, DRNIC_WC_MW_BIND_ERR);

	/* A fenced bind waits for the READ before it. */
	eq = ut_qp_reset(0);
	ut_post_send(8, DRNIC_WR_RDMA_READ, &sge, 1, 0);
	b = ut_post_send(9, DRNIC_WR_BIND_MW, NULL, 0, DRNIC_SEND_FENCE);
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);
	CU_ASSERT_EQUAL(eq->req.state, REQ_WAIT_FENCE);
	CU_ASSERT_EQUAL(ut_mw_binds, 0);
	CU_ASSERT_EQUAL(b->state, WQE_POSTED);
}

/* A long message asks for an ACK every ENGINE_ACKREQ_EVERY packets. */
static void
test_ackreq_every(void)
{
	static uint8_t big[200 * 1024];
	struct engine_qp *eq = ut_qp_reset(0);
	struct drnic_sge sge = { (uintptr_t)big, sizeof(big), 1 };
	unsigned int i, n = 0;

	ut_post_send(1, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);
	while (req_step(eq, 32) > 0) {
		for (i = 0; i < ut_ntx; i++, n++)
			CU_ASSERT_EQUAL(ut_tx[i].pkt.bth.ackreq,
					n % ENGINE_ACKREQ_EVERY == ENGINE_ACKREQ_EVERY - 1 || n == 199);
		ut_ntx = 0;
	}
	CU_ASSERT_EQUAL(n, 200);
}

/* The congestion window: a long message stops mid-way when cwnd PSNs are
 * unacknowledged; the packet that fills the window asks for an ACK (it is
 * what reopens it), a small window asks every quarter of it; an ACK lets
 * the rest go. Round trips are timed one AckReq packet at a time. */
static void
test_cwnd_window(void)
{
	static uint8_t big[20 * 1024];
	struct engine_qp *eq = ut_qp_reset(300);
	struct drnic_sge sge = { (uintptr_t)big, sizeof(big), 1 };
	unsigned int i;

	eq->rec.cwnd = 8;
	ut_now = 1000;
	ut_post_send(1, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);        /* PSN 300..319 */
	CU_ASSERT_EQUAL(req_step(eq, 32), 8);
	CU_ASSERT_EQUAL(eq->req.state, REQ_WAIT_WINDOW);
	CU_ASSERT_EQUAL(engine_inflight(eq), 8);
	for (i = 0; i < 8; i++)                /* every 2nd (8 / 4), and the 8th */
		CU_ASSERT_EQUAL(ut_tx[i].pkt.bth.ackreq, i % 2 == 1);
	CU_ASSERT_TRUE(eq->rec.rtt_pending);
	CU_ASSERT_EQUAL(eq->rec.rtt_psn, 301);     /* the first AckReq packet */
	CU_ASSERT_EQUAL(eq->rec.rtt_sent_ns, 1000);
	/* Still full: nothing more. */
	CU_ASSERT_EQUAL(req_step(eq, 32), 0);
	/* 300..303 acknowledged: four more. */
	eq->comp.any_acked = true;
	eq->comp.acked_psn = 303;
	CU_ASSERT_EQUAL(req_step(eq, 32), 4);
	CU_ASSERT_EQUAL(ut_tx[11].pkt.bth.psn, 311);
	CU_ASSERT_TRUE(ut_tx[11].pkt.bth.ackreq);
	/* A go-back forgets the timed packet (Karn). */
	req_rewind(eq, 0);
	CU_ASSERT_FALSE(eq->rec.rtt_pending);
}

static void
test_budget_nomem_rewind(void)
{
	struct engine_qp *eq = ut_qp_reset(1000);
	struct drnic_sge sge = { (uintptr_t)src, 8192, 1 }, s2 = { (uintptr_t)src, 10, 1 };
	struct verbs_send_wqe *w;

	ut_fill();
	w = ut_post_send(1, DRNIC_WR_SEND, &sge, 1, 0);   /* 8 packets */
	ut_post_send(2, DRNIC_WR_SEND, &s2, 1, 0);
	CU_ASSERT_EQUAL(req_step(eq, 3), 3);
	CU_ASSERT_EQUAL(eq->req.off, 3072);
	CU_ASSERT_EQUAL(w->state, WQE_SENDING);
	/* No mbuf: nothing advances. */
	ut_tx_fail = 1;
	CU_ASSERT_EQUAL(req_step(eq, 3), 0);
	CU_ASSERT_EQUAL(eq->req.npsn, 1003);
	ut_tx_fail = 0;
	CU_ASSERT_EQUAL(req_step(eq, 32), 6);
	CU_ASSERT_EQUAL(ut_ntx, 9);
	CU_ASSERT_EQUAL(memcmp(ut_tx[7].data, src + 7 * 1024, 1024), 0);
	CU_ASSERT_FALSE(ut_tx[6].pkt.bth.ackreq);
	CU_ASSERT_TRUE(ut_tx[7].pkt.bth.ackreq);
	CU_ASSERT_EQUAL(ut_tx[8].pkt.bth.psn, 1008);
	/* Go back to the first WQE: the same PSNs and bytes again. */
	req_rewind(eq, 0);
	CU_ASSERT_EQUAL(eq->req.npsn, 1000);
	CU_ASSERT_EQUAL(w->state, WQE_POSTED);
	ut_ntx = 0;
	CU_ASSERT_EQUAL(req_step(eq, 32), 9);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.psn, 1000);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_FIRST);
	CU_ASSERT_EQUAL(memcmp(ut_tx[5].data, src + 5 * 1024, 1024), 0);
	CU_ASSERT_EQUAL(ut_tx[8].pkt.bth.psn, 1008);
	CU_ASSERT_EQUAL(ut_tx[8].pkt.bth.opcode, DRNIC_WIRE_OP_RC_SEND_ONLY);
	/* RNR wait: nothing until the clock passes the deadline. */
	req_rewind(eq, 1);
	eq->req.state = REQ_WAIT_RNR;
	eq->rec.rnr_deadline_ns = ut_now + 1000;
	ut_ntx = 0;
	CU_ASSERT_EQUAL(req_step(eq, 32), 0);
	ut_now += 1000;
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.psn, 1008);
}

/*
 * A message sent over several steps reads its SGEs only while their keys
 * live: its start checks them (verbs_mr_check), and each packet checks the
 * keys of the SGEs it reads again. Deregistered between two steps:
 * LOC_PROT_ERR, no packet more.
 */
static void
test_key_recheck_later_steps(void)
{
	struct engine_qp *eq = ut_qp_reset(300);
	struct drnic_sge sge = { (uintptr_t)src, 8192, 7 };
	struct verbs_send_wqe *w;

	ut_fill();
	w = ut_post_send(1, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);   /* 8 packets */
	CU_ASSERT_EQUAL(req_step(eq, 3), 3);
	CU_ASSERT_EQUAL(w->state, WQE_SENDING);
	/* The next step, its key still live: on with the message. */
	CU_ASSERT_EQUAL(req_step(eq, 2), 2);
	CU_ASSERT_EQUAL(ut_ntx, 5);
	CU_ASSERT_EQUAL(memcmp(ut_tx[4].data, src + 4 * 1024, 1024), 0);
	/* drnic_dereg_mr() between two steps. */
	ut_dead_key = 7;
	ut_step_fails(eq, w, 5, DRNIC_WC_LOC_PROT_ERR);
}

/* Going back to a PSN inside a SEND or WRITE resumes there (MIDDLE/LAST
 * packets with the right bytes, across SGEs); a READ after a timeout asks
 * for the part not yet received only. */
static void
test_rewind_psn(void)
{
	struct engine_qp *eq = ut_qp_reset(200);
	struct drnic_sge sge[2] = { { (uintptr_t)src, 1500, 1 }, { (uintptr_t)src + 1500, 2000, 1 } };
	struct drnic_sge rs = { (uintptr_t)src + 4096, 3000, 1 };
	struct verbs_send_wqe *w, *r;

	ut_fill();
	w = ut_post_send(1, DRNIC_WR_RDMA_WRITE, sge, 2, 0);   /* 3500 bytes: PSN 200..203 */
	w->remote_addr = 0x5000;
	CU_ASSERT_EQUAL(req_step(eq, 32), 4);
	req_rewind_psn(eq, 0, 202);
	CU_ASSERT_EQUAL(eq->req.npsn, 202);
	CU_ASSERT_EQUAL(eq->stats.retransmits, 1);
	ut_ntx = 0;
	CU_ASSERT_EQUAL(req_step(eq, 32), 2);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.psn, 202);
	CU_ASSERT_EQUAL(ut_tx[0].len, 1024);
	CU_ASSERT_EQUAL(memcmp(ut_tx[0].data, src + 2048, 1024), 0);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST);
	CU_ASSERT_EQUAL(ut_tx[1].len, 3500 - 3072);
	CU_ASSERT_EQUAL(memcmp(ut_tx[1].data, src + 3072, 3500 - 3072), 0);
	CU_ASSERT_EQUAL(w->state, WQE_SENT);
	CU_ASSERT_EQUAL(w->first_psn, 200);
	/* The first PSN: the whole WQE again, from FIRST. */
	req_rewind_psn(eq, 0, 200);
	ut_ntx = 0;
	CU_ASSERT_EQUAL(req_step(eq, 32), 4);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.reth.va, 0x5000);

	/* READ of 3 packets, the first received: asks from the second. */
	eq = ut_qp_reset(300);
	r = ut_post_send(2, DRNIC_WR_RDMA_READ, &rs, 1, 0);
	r->remote_addr = 0x9000;
	r->rkey = 9;
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 1);
	CU_ASSERT_EQUAL(r->rd_next, 300);           /* a fresh READ: from its first PSN */
	r->rd_next = 301;                 /* the completer got PSN 300 */
	req_rewind(eq, 0);
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 0);
	ut_ntx = 0;
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.psn, 301);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.reth.va, 0x9000 + 1024);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.reth.dmalen, 3000 - 1024);
	CU_ASSERT_EQUAL(r->rd_next, 301);           /* its progress kept */
	CU_ASSERT_EQUAL(eq->req.npsn, 303);
	CU_ASSERT_EQUAL(r->first_psn, 300);
	CU_ASSERT_EQUAL(r->last_psn, 302);
}

/* Every state has a name for the logs, each its own. */
static void
test_state_names(void)
{
	ut_check_name_table(req_state_names, REQ_STATE_MAX);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("requester", NULL, NULL);
	CU_ADD_TEST(s, test_state_names);
	CU_ADD_TEST(s, test_send_segments);
	CU_ADD_TEST(s, test_uc);
	CU_ADD_TEST(s, test_write_variants);
	CU_ADD_TEST(s, test_read_atomic);
	CU_ADD_TEST(s, test_fence_and_limits);
	CU_ADD_TEST(s, test_local_failures);
	CU_ADD_TEST(s, test_local_ops);
	CU_ADD_TEST(s, test_budget_nomem_rewind);
	CU_ADD_TEST(s, test_key_recheck_later_steps);
	CU_ADD_TEST(s, test_rewind_psn);
	CU_ADD_TEST(s, test_ackreq_every);
	CU_ADD_TEST(s, test_cwnd_window);
	CU_ADD_TEST(s, test_xrc_srqn);
	return ut_run_all();
}
