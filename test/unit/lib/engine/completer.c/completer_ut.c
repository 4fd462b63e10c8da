/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/engine/completer.c (with the real requester and
 * recovery, so go-backs and ACKs during a resend are tested across both),
 * driven step by step: ACKs retire
 * WQEs in order (unsignaled silently), READ responses and atomic ACKs, every
 * NAK, RNR, PSN-sequence go-back, retransmit timeout, flush.
 */
/* verbs_mr_key_live() answers what the test says (ut_engine_stubs.h). */
#define VERBS_MR_KEY_LIVE_STUB
#include "lib/engine/completer.c"
#include "lib/engine/requester.c"
#include "lib/engine/recovery.c"

#define UT_ENGINE_CQE_STUBS
#define UT_ENGINE_QP_ERROR_STUB
#include "test/unit/lib/engine/ut_engine_stubs.h"
#include "ut_common.h"

int
drnic_wire_copy_out(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *dst)
{
	memcpy(dst, (const uint8_t *)m + off, len);
	return 0;
}

/* The requester sent @p w: PSNs assigned, state SENT. */
static void
ut_sent(struct engine_qp *eq, struct verbs_send_wqe *w)
{
	uint32_t n = engine_wqe_is_rd_atomic(w) && w->opcode != DRNIC_WR_RDMA_READ ? 1 :
		     engine_npkts(w->length, eq->path.mtu);

	w->first_psn = eq->req.npsn;
	w->last_psn = drnic_psn_add(eq->req.npsn, n - 1);
	if (!engine_read_partial(w))      /* as the requester starts a READ */
		w->rd_next = w->first_psn;
	w->state = WQE_SENT;
	eq->req.npsn = drnic_psn_add(eq->req.npsn, n);
	if (drnic_psn_gt(eq->req.npsn, eq->req.psn_hi))   /* as req_sent_upto() */
		eq->req.psn_hi = eq->req.npsn;
	eq->req.idx++;
	if (engine_wqe_is_rd_atomic(w))
		eq->req.rd_outstanding++;
	rec_timer_arm(eq);
}

static struct drnic_wire_pkt
ut_ack(uint32_t psn, enum drnic_aeth_type type, uint8_t value)
{
	struct drnic_wire_pkt p;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = DRNIC_WIRE_OP_RC_ACKNOWLEDGE;
	p.bth.psn = psn;
	p.aeth.syndrome = drnic_aeth_syndrome(type, value);
	return p;
}

static uint8_t lbuf[8192], rsp[4096];

static void
test_ack_in_order(void)
{
	struct engine_qp *eq = ut_qp_reset(10);
	struct drnic_sge sge = { (uintptr_t)lbuf, 2000, 1 };
	struct drnic_wire_pkt p;
	struct verbs_send_wqe *w0, *w1, *w2;

	w0 = ut_post_send(100, DRNIC_WR_SEND, &sge, 1, DRNIC_SEND_SIGNALED);  /* PSN 10-11 */
	w1 = ut_post_send(101, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);              /* 12-13, unsignaled */
	w2 = ut_post_send(102, DRNIC_WR_SEND_WITH_IMM, &sge, 1, DRNIC_SEND_SIGNALED); /* 14-15 */
	ut_sent(eq, w0);
	ut_sent(eq, w1);
	ut_sent(eq, w2);
	/* ACK of a middle PSN retires nothing. */
	p = ut_ack(10, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	p = ut_ack(11, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 100);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_SEND);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 2000);
	CU_ASSERT_EQUAL(ut_wc[0].qp_num, 17);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.sq.cons), 1);
	CU_ASSERT_NOT_EQUAL(eq->rec.retry_deadline_ns, 0);
	/* One cumulative ACK: the unsignaled WRITE retires silently. */
	p = ut_ack(15, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 102);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.sq.cons), 3);
	CU_ASSERT_EQUAL(eq->comp.state, COMP_GET_ACK);
	CU_ASSERT_EQUAL(eq->rec.retry_deadline_ns, 0);   /* nothing outstanding */
	/* An old ACK now: nothing outstanding, a ghost. */
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_GHOST_RESP], 1);
	CU_ASSERT_EQUAL(ut_nwc, 2);
}

/* Only PSNs sent and not yet acknowledged are answered: an ACK or a NAK
 * for a PSN never sent is a ghost, one for what is acknowledged already a
 * duplicate; neither retires a WQE or moves what is acknowledged. */
static void
test_ghost_window(void)
{
	struct engine_qp *eq = ut_qp_reset(10);
	struct drnic_sge sge = { (uintptr_t)lbuf, 2000, 1 };
	struct drnic_wire_pkt p;
	struct verbs_send_wqe *w0, *w1;

	ut_qp.sq_sig_all = 1;
	w0 = ut_post_send(1, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);   /* PSN 10-11 */
	w1 = ut_post_send(2, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);   /* 12-13 */
	ut_sent(eq, w0);
	ut_sent(eq, w1);
	p = ut_ack(13 + 1000, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_GHOST_RESP], 1);
	CU_ASSERT_FALSE(eq->comp.any_acked);
	p = ut_ack(14, DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_ACCESS);     /* next PSN: unsent */
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_GHOST_RESP], 2);
	CU_ASSERT_NOT_EQUAL(eq->req.state, REQ_STOPPED);
	p = ut_ack(9, DRNIC_AETH_ACK, 31);                          /* before the first */
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_DUP_RESP], 1);
	/* The first WRITE is acknowledged; an ACK for it again is a duplicate. */
	p = ut_ack(11, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 1);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_DUP_RESP], 2);
	/* The last PSN sent is inside: the second WRITE retires. */
	p = ut_ack(13, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_SUCCESS);
}

static void
test_read_and_atomic(void)
{
	struct engine_qp *eq = ut_qp_reset(0xFFFFFF);
	struct drnic_sge w8 = { (uintptr_t)lbuf, 8, 1 };
	struct drnic_sge rs[2] = { { (uintptr_t)lbuf + 100, 1500, 1 },
				   { (uintptr_t)lbuf + 4000, 1000, 1 } };
	struct drnic_wire_pkt p;
	struct verbs_send_wqe *wa, *rd, *wb, *fa;
	unsigned int i;

	ut_qp.sq_sig_all = 1;
	for (i = 0; i < sizeof(rsp); i++)
		rsp[i] = (uint8_t)(i ^ 0x5A);
	memset(lbuf, 0, sizeof(lbuf));
	wa = ut_post_send(1, DRNIC_WR_RDMA_WRITE, &w8, 1, 0);         /* PSN FFFFFF */
	rd = ut_post_send(2, DRNIC_WR_RDMA_READ, rs, 2, 0);           /* 0..2 */
	wb = ut_post_send(3, DRNIC_WR_RDMA_WRITE, &w8, 1, 0);         /* 3 */
	fa = ut_post_send(4, DRNIC_WR_ATOMIC_FETCH_AND_ADD, &w8, 1, 0); /* 4 */
	ut_sent(eq, wa);
	ut_sent(eq, rd);
	ut_sent(eq, wb);
	ut_sent(eq, fa);
	CU_ASSERT_EQUAL(rd->first_psn, 0);
	CU_ASSERT_EQUAL(rd->last_psn, 2);
	/* The responder ACKs the second WRITE: only the first retires, the
	 * READ has no data yet. */
	p = ut_ack(3, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 1);
	/* A MIDDLE response before the FIRST: dropped. */
	memset(&p, 0, sizeof(p));
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
	p.bth.psn = 1;
	p.payload_len = 1024;
	comp_rx(eq, (struct rte_mbuf *)(uintptr_t)rsp, &p);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_BAD_RESP], 1);
	/* FIRST (1024), MIDDLE (1024), LAST (452): scattered over 2 SGEs. */
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST;
	p.bth.psn = 0;
	comp_rx(eq, (struct rte_mbuf *)(uintptr_t)rsp, &p);
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
	p.bth.psn = 1;
	comp_rx(eq, (struct rte_mbuf *)(uintptr_t)(rsp + 1024), &p);
	/* A LAST of the wrong length: dropped. */
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST;
	p.bth.psn = 2;
	p.payload_len = 453;
	comp_rx(eq, (struct rte_mbuf *)(uintptr_t)(rsp + 2048), &p);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_BAD_RESP], 2);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	p.payload_len = 452;
	comp_rx(eq, (struct rte_mbuf *)(uintptr_t)(rsp + 2048), &p);
	CU_ASSERT_EQUAL(memcmp(lbuf + 100, rsp, 1500), 0);
	CU_ASSERT_EQUAL(memcmp(lbuf + 4000, rsp + 1500, 1000), 0);
	CU_ASSERT_EQUAL(lbuf[99], 0);
	CU_ASSERT_EQUAL(lbuf[5000], 0);
	/* The READ and the WRITE acknowledged before it complete, in order. */
	CU_ASSERT_EQUAL(ut_nwc, 3);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(ut_wc[1].opcode, DRNIC_WC_RDMA_READ);
	CU_ASSERT_EQUAL(ut_wc[1].byte_len, 2500);
	CU_ASSERT_EQUAL(ut_wc[2].wr_id, 3);
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 1);
	/* Atomic ACK: the original value lands in the local buffer. */
	memset(&p, 0, sizeof(p));
	p.bth.opcode = DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE;
	p.bth.psn = 4;
	p.aeth.syndrome = drnic_aeth_syndrome(DRNIC_AETH_ACK, 31);
	p.atomic_orig = 0x1122334455667788ull;
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 4);
	CU_ASSERT_EQUAL(ut_wc[3].wr_id, 4);
	CU_ASSERT_EQUAL(ut_wc[3].opcode, DRNIC_WC_FETCH_ADD);
	CU_ASSERT_EQUAL(ut_wc[3].byte_len, 8);
	{
		uint64_t v;

		memcpy(&v, lbuf, 8);
		CU_ASSERT_EQUAL(v, 0x1122334455667788ull);
	}
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 0);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.sq.cons), 4);
}

static void
test_naks(void)
{
	static const struct {
		uint8_t code;
		enum drnic_wc_status status;
	} naks[] = {
		{ DRNIC_NAK_INVALID_REQ, DRNIC_WC_REM_INV_REQ_ERR },
		{ DRNIC_NAK_REMOTE_ACCESS, DRNIC_WC_REM_ACCESS_ERR },
		{ DRNIC_NAK_REMOTE_OP, DRNIC_WC_REM_OP_ERR },
		{ DRNIC_NAK_INVALID_RD_REQ, DRNIC_WC_REM_INV_RD_REQ_ERR },
	};
	struct drnic_sge sge = { (uintptr_t)lbuf, 100, 1 };
	unsigned int i;

	for (i = 0; i < RTE_DIM(naks); i++) {
		struct engine_qp *eq = ut_qp_reset(50);
		struct drnic_wire_pkt p;
		struct verbs_send_wqe *w[3];
		int k;

		for (k = 0; k < 3; k++) {
			w[k] = ut_post_send(10 + (uint64_t)k, DRNIC_WR_RDMA_WRITE, &sge, 1,
					    DRNIC_SEND_SIGNALED);
			ut_sent(eq, w[k]);
		}
		/* NAK of the second: the first is implicitly acknowledged. */
		p = ut_ack(51, DRNIC_AETH_NAK, naks[i].code);
		comp_rx(eq, NULL, &p);
		CU_ASSERT_EQUAL(ut_nwc, 2);
		CU_ASSERT_EQUAL(ut_wc[0].wr_id, 10);
		CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(ut_wc[1].wr_id, 11);
		CU_ASSERT_EQUAL(ut_wc[1].status, naks[i].status);
		CU_ASSERT_EQUAL(ut_wc[1].qp_num, 17);
		CU_ASSERT_EQUAL(ut_errors, 1);
		CU_ASSERT_EQUAL(eq->req.state, REQ_STOPPED);
		CU_ASSERT_EQUAL(eq->comp.state, COMP_ERROR);
		/* A late ACK of the third retires nothing now. */
		p = ut_ack(52, DRNIC_AETH_ACK, 31);
		comp_rx(eq, NULL, &p);
		CU_ASSERT_EQUAL(ut_nwc, 2);
		CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_QP_STATE], 1);
		/* The flush completes the third with WR_FLUSH_ERR. */
		CU_ASSERT_EQUAL(comp_flush(eq), 1);
		CU_ASSERT_EQUAL(ut_wc[2].wr_id, 12);
		CU_ASSERT_EQUAL(ut_wc[2].status, DRNIC_WC_WR_FLUSH_ERR);
		CU_ASSERT_EQUAL(atomic_load(&ut_qp.sq.cons), 3);
	}
}

static void
test_rnr_seq_timeout(void)
{
	struct engine_qp *eq = ut_qp_reset(7);
	struct drnic_sge sge = { (uintptr_t)lbuf, 100, 1 };
	struct drnic_wire_pkt p;
	struct verbs_send_wqe *w0, *w1;

	w0 = ut_post_send(1, DRNIC_WR_SEND, &sge, 1, DRNIC_SEND_SIGNALED);
	w1 = ut_post_send(2, DRNIC_WR_SEND, &sge, 1, DRNIC_SEND_SIGNALED);
	ut_sent(eq, w0);
	ut_sent(eq, w1);
	/* RNR NAK for the second (timer code 14 = 1.28 ms): the first is
	 * done, the requester goes back to the second after the wait. */
	ut_now = 1000000;
	p = ut_ack(8, DRNIC_AETH_RNR_NAK, 14);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 1);
	CU_ASSERT_EQUAL(eq->req.idx, 1);              /* back at the second */
	CU_ASSERT_EQUAL(eq->req.npsn, 8);
	CU_ASSERT_EQUAL(eq->req.state, REQ_WAIT_RNR);
	CU_ASSERT_EQUAL(eq->rec.rnr_deadline_ns, 1000000 + 1280000);
	CU_ASSERT_EQUAL(eq->rec.rnr_retry_left, 0);
	/* Resent; RNR again with no retries left: RNR_RETRY_EXC_ERR. */
	ut_sent(eq, w1);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_RNR_RETRY_EXC_ERR);

	/* PSN sequence NAK: go back to the PSN the responder expects. */
	eq = ut_qp_reset(20);
	w0 = ut_post_send(1, DRNIC_WR_SEND, &sge, 1, DRNIC_SEND_SIGNALED);
	w1 = ut_post_send(2, DRNIC_WR_SEND, &sge, 1, DRNIC_SEND_SIGNALED);
	ut_sent(eq, w0);
	ut_sent(eq, w1);
	p = ut_ack(21, DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(eq->req.idx, 1);
	CU_ASSERT_EQUAL(eq->req.npsn, 21);
	CU_ASSERT_EQUAL(eq->req.state, REQ_IDLE);

	/* Timeout: retry_cnt (2) resends of the oldest, then RETRY_EXC_ERR. */
	eq = ut_qp_reset(30);
	ut_now = 0;
	w0 = ut_post_send(9, DRNIC_WR_RDMA_WRITE, &sge, 1, DRNIC_SEND_SIGNALED);
	ut_sent(eq, w0);
	CU_ASSERT_EQUAL(eq->rec.retry_deadline_ns, 4096ull << 10);
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->req.idx, 0);
	CU_ASSERT_EQUAL(eq->req.npsn, 30);
	CU_ASSERT_EQUAL(eq->rec.retry_left, 1);
	ut_sent(eq, w0);
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->rec.retry_left, 0);
	ut_sent(eq, w0);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	rec_timeout(eq);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 9);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(ut_errors, 1);
	CU_ASSERT_EQUAL(eq->rec.retry_deadline_ns, 0);
	/* An ACK in time resets the budget. */
	eq = ut_qp_reset(40);
	w0 = ut_post_send(1, DRNIC_WR_SEND, &sge, 1, 0);
	w1 = ut_post_send(2, DRNIC_WR_SEND, &sge, 1, 0);
	ut_sent(eq, w0);
	ut_sent(eq, w1);
	eq->rec.retry_left = 0;
	p = ut_ack(40, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(eq->rec.retry_left, 2);
}

/* A READ response packet @p psn of @p len bytes from rsp + @p off. */
static void
ut_read_resp(struct engine_qp *eq, uint8_t opcode, uint32_t psn, uint32_t off, uint32_t len)
{
	struct drnic_wire_pkt p;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = opcode;
	p.bth.psn = psn;
	p.payload_len = len;
	p.aeth.syndrome = drnic_aeth_syndrome(DRNIC_AETH_ACK, 31);
	comp_rx(eq, (struct rte_mbuf *)(uintptr_t)(rsp + off), &p);
}

/*
 * A READ whose responses lose a packet: reordering by a few packets is
 * waited out; a gap well past the missing PSN asks once for the rest
 * (a READ request from the missing PSN, the address and length adjusted);
 * the rest then arrives as FIRST..LAST from that PSN; a timeout asks for
 * the rest only as well. Every byte lands where it belongs.
 */
static void
test_read_partial(void)
{
	struct engine_qp *eq = ut_qp_reset(1000);
	static uint8_t big[40 * 1024];
	struct drnic_sge sge = { (uintptr_t)big, sizeof(big), 1 };
	struct verbs_send_wqe *w;
	unsigned int i, ntx;

	for (i = 0; i < sizeof(rsp); i++)
		rsp[i] = (uint8_t)(i * 3 + 1);
	memset(big, 0, sizeof(big));
	w = ut_post_send(5, DRNIC_WR_RDMA_READ, &sge, 1, DRNIC_SEND_SIGNALED);
	w->remote_addr = 0x100000;
	w->rkey = 77;
	ut_sent(eq, w);                           /* PSN 1000..1039 */
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 1000, 0, 1024);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 1001, 0, 1024);
	CU_ASSERT_EQUAL(w->rd_next, 1002);
	/* 1002 is missing: 1003..1025 are reordering, no request yet. */
	ntx = ut_ntx;
	for (i = 1003; i < 1026; i++)
		ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, i, 0, 1024);
	CU_ASSERT_EQUAL(ut_ntx, ntx);
	/* 24 past it: one READ request for the rest, however many follow. */
	for (; i < 1039; i++)
		ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, i, 0, 1024);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, ntx + 1);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.bth.psn, 1002);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.va, 0x100000 + 2048);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.dmalen, sizeof(big) - 2048);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.rkey, 77);
	CU_ASSERT_EQUAL(w->state, WQE_SENT);
	/* The rest from 1002: FIRST, MIDDLEs, then a timeout (1020 lost). */
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 1002, 0, 1024);
	for (i = 1003; i < 1020; i++)
		ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, i, 0, 1024);
	CU_ASSERT_EQUAL(w->rd_next, 1020);
	rec_timeout(eq);
	CU_ASSERT_TRUE(engine_read_partial(w));  /* the requester asks from 1020 */
	CU_ASSERT_EQUAL(eq->req.idx, 0);
	ntx = ut_ntx;
	CU_ASSERT_EQUAL(req_step(eq, 32), 1);     /* the real requester asks again */
	CU_ASSERT_EQUAL_FATAL(ut_ntx, ntx + 1);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.bth.psn, 1020);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.va, 0x100000 + 20 * 1024);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.dmalen, sizeof(big) - 20 * 1024);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 1020, 0, 1024);
	for (i = 1021; i < 1039; i++)
		ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, i, 0, 1024);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, 1039, 0, 1024);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 5);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, sizeof(big));
	for (i = 0; i < 40; i++)
		CU_ASSERT_EQUAL(memcmp(big + i * 1024, rsp, 1024), 0);
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 0);
}

/* An ACK for a later PSN while a READ or an atomic before it has no response
 * (the responder answers in order: it was lost): asked again at once, once;
 * the replayed responses complete them. */
static void
test_implied_nak(void)
{
	struct engine_qp *eq = ut_qp_reset(500);
	static uint8_t r8[8], rb[100];
	struct drnic_sge s8 = { (uintptr_t)r8, 8, 1 }, sb = { (uintptr_t)rb, 100, 1 };
	struct verbs_send_wqe *rd, *fa, *wr;
	struct drnic_wire_pkt p;
	unsigned int ntx;

	ut_qp.sq_sig_all = 1;
	rd = ut_post_send(1, DRNIC_WR_RDMA_READ, &sb, 1, 0);              /* 500 */
	rd->remote_addr = 0x7000;
	fa = ut_post_send(2, DRNIC_WR_ATOMIC_FETCH_AND_ADD, &s8, 1, 0);  /* 501 */
	fa->remote_addr = 0x8000;
	fa->compare_add = 3;
	wr = ut_post_send(3, DRNIC_WR_RDMA_WRITE, &s8, 1, 0);            /* 502 */
	ut_sent(eq, rd);
	ut_sent(eq, fa);
	ut_sent(eq, wr);
	ntx = ut_ntx;
	p = ut_ack(502, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, ntx + 1);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.bth.psn, 500);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.va, 0x7000);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.dmalen, 100);
	comp_rx(eq, NULL, &p);                    /* the same again: once */
	CU_ASSERT_EQUAL(ut_ntx, ntx + 1);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	/* The READ's response: it completes; the atomic is asked again. */
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 500, 0, 100);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, ntx + 2);
	CU_ASSERT_EQUAL(ut_tx[ntx + 1].pkt.bth.opcode, DRNIC_WIRE_OP_RC_FETCH_ADD);
	CU_ASSERT_EQUAL(ut_tx[ntx + 1].pkt.bth.psn, 501);
	CU_ASSERT_EQUAL(ut_tx[ntx + 1].pkt.atomic.va, 0x8000);
	CU_ASSERT_EQUAL(ut_tx[ntx + 1].pkt.atomic.swap_add, 3);
	memset(&p, 0, sizeof(p));
	p.bth.opcode = DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE;
	p.bth.psn = 501;
	p.aeth.syndrome = drnic_aeth_syndrome(DRNIC_AETH_ACK, 31);
	p.atomic_orig = 42;
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 3);               /* FAA, then the WRITE */
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(ut_wc[2].wr_id, 3);
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 0);
}

/* Timeouts: retries exhausted complete the oldest with RETRY_EXC_ERR, the
 * QP goes to ERR, and the rest is flushed with WR_FLUSH_ERR; a SEND acked
 * halfway resumes after the acknowledged PSN. */
static void
test_timeout_exhaust_flush(void)
{
	struct engine_qp *eq = ut_qp_reset(50);
	static uint8_t b4[4096];
	struct drnic_sge sge = { (uintptr_t)b4, sizeof(b4), 1 };
	struct drnic_wire_pkt p;
	struct verbs_send_wqe *w[3];
	unsigned int i;

	ut_qp.sq_sig_all = 1;
	for (i = 0; i < 3; i++) {
		w[i] = ut_post_send(20 + i, DRNIC_WR_SEND, &sge, 1, 0);  /* 4 PSNs each */
		ut_sent(eq, w[i]);
	}
	/* The first two packets of the first SEND acknowledged. */
	p = ut_ack(51, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->req.idx, 0);
	CU_ASSERT_EQUAL(eq->req.npsn, 52);        /* resume after the ACK */
	CU_ASSERT_EQUAL(eq->req.off, 2048);
	/* The peer answered since: that timeout keeps retry_cnt whole. */
	CU_ASSERT_EQUAL(eq->rec.retry_left, 2);
	CU_ASSERT_EQUAL(eq->rec.alive_retries, 1);
	for (i = 0; i < 3; i++)
		ut_sent(eq, w[i]);
	rec_timeout(eq);                         /* silence: counted */
	CU_ASSERT_EQUAL(eq->rec.retry_left, 1);
	for (i = 0; i < 3; i++)
		ut_sent(eq, w[i]);
	rec_timeout(eq);
	for (i = 0; i < 3; i++)
		ut_sent(eq, w[i]);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	rec_timeout(eq);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 20);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(comp_flush(eq), 2);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 21);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(ut_wc[2].wr_id, 22);
	CU_ASSERT_EQUAL(ut_wc[2].status, DRNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.sq.cons), 3);
	CU_ASSERT_EQUAL(eq->rec.retry_deadline_ns, 0);
}

/* A peer that answers every retransmission with the same old ACK (alive,
 * no progress) still ends the WQE: after ENGINE_ALIVE_RETRIES lenient
 * timeouts, retry_cnt more. */
static void
test_timeout_alive_bound(void)
{
	struct engine_qp *eq = ut_qp_reset(70);
	struct drnic_sge sge = { (uintptr_t)lbuf, 2000, 1 };
	struct verbs_send_wqe *w;
	struct drnic_wire_pkt p;
	unsigned int n = 0;

	w = ut_post_send(1, DRNIC_WR_SEND, &sge, 1, DRNIC_SEND_SIGNALED);  /* 70..71 */
	ut_sent(eq, w);
	p = ut_ack(70, DRNIC_AETH_ACK, 31);
	while (ut_nwc == 0 && n < 1000) {
		comp_rx(eq, NULL, &p);            /* the same ACK again */
		rec_timeout(eq);
		if (ut_nwc == 0)
			ut_sent(eq, w);
		n++;
	}
	CU_ASSERT_EQUAL(n, ENGINE_ALIVE_RETRIES + 2 + 1);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_RETRY_EXC_ERR);
}

/* Round trips, early retransmit and the congestion window: an RTT sample
 * arms the early retransmit well before the timeout; it goes back without
 * using up retry_cnt and backs off; a silent peer still gets exactly
 * retry_cnt timeouts. */
static void
test_early_retransmit(void)
{
	struct engine_qp *eq = ut_qp_reset(10);
	struct drnic_sge sge = { (uintptr_t)lbuf, 2048, 1 };
	struct verbs_send_wqe *w1, *w2;
	struct drnic_wire_pkt p;
	uint64_t to = 4096ull << 6, deadline;   /* 262 us: its eighth is below 60 us */

	ut_qp.sq_sig_all = 1;
	ut_eq.path.timeout = 6;
	ut_now = 1000000;
	w1 = ut_post_send(1, DRNIC_WR_SEND, &sge, 1, 0);           /* 10..11 */
	ut_sent(eq, w1);
	CU_ASSERT_EQUAL(eq->rec.probe_deadline_ns, 0);    /* no estimate yet */
	eq->rec.rtt_pending = true;                        /* as the requester does */
	eq->rec.rtt_psn = 11;
	eq->rec.rtt_sent_ns = ut_now;
	ut_now += 20000;
	p = ut_ack(11, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(eq->rec.srtt_ns, 20000);
	CU_ASSERT_EQUAL(eq->rec.rttvar_ns, 10000);
	CU_ASSERT_FALSE(eq->rec.rtt_pending);
	/* Next WQE: timeout and early retransmit deadlines. srtt + 4 rttvar
	 * is 60 us. */
	w2 = ut_post_send(2, DRNIC_WR_SEND, &sge, 1, 0);           /* 12..13 */
	ut_sent(eq, w2);
	CU_ASSERT_EQUAL(eq->rec.retry_deadline_ns, ut_now + to);
	CU_ASSERT_EQUAL(eq->rec.probe_deadline_ns, ut_now + 60000);
	deadline = eq->rec.retry_deadline_ns;
	ut_now = eq->rec.probe_deadline_ns;
	rec_probe(eq);
	CU_ASSERT_EQUAL(eq->req.idx, 1);              /* went back to WQE 2 */
	CU_ASSERT_EQUAL(eq->req.npsn, 12);
	CU_ASSERT_EQUAL(eq->rec.retry_left, 2);           /* no retry used */
	CU_ASSERT_EQUAL(eq->stats.early_retransmits, 1);
	CU_ASSERT_EQUAL(eq->stats.timeouts, 0);
	CU_ASSERT_EQUAL(eq->rec.retry_deadline_ns, deadline);
	CU_ASSERT_EQUAL(eq->rec.srtt_ns, 40000);          /* backed off */
	CU_ASSERT_EQUAL(eq->rec.probe_deadline_ns, ut_now + 120000);
	/* The peer stays silent. The first timeout follows its last ACK (it
	 * was alive: no retry used); then exactly retry_cnt (2) timeouts, and
	 * RETRY_EXC_ERR; probes in between use nothing up. */
	ut_sent(eq, w2);
	ut_now = eq->rec.retry_deadline_ns;
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->rec.retry_left, 2);
	CU_ASSERT_EQUAL(eq->rec.cwnd, ENGINE_MIN_CWND);
	ut_sent(eq, w2);
	ut_now = eq->rec.retry_deadline_ns;
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->rec.retry_left, 1);
	ut_sent(eq, w2);
	CU_ASSERT_NOT_EQUAL_FATAL(eq->rec.probe_deadline_ns, 0);
	ut_now = eq->rec.probe_deadline_ns;
	rec_probe(eq);
	CU_ASSERT_EQUAL(eq->rec.retry_left, 1);
	CU_ASSERT_EQUAL(eq->stats.early_retransmits, 2);
	ut_sent(eq, w2);
	ut_now = eq->rec.retry_deadline_ns;
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->rec.retry_left, 0);
	ut_sent(eq, w2);
	ut_now = eq->rec.retry_deadline_ns;
	CU_ASSERT_EQUAL(ut_nwc, 1);
	rec_timeout(eq);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(eq->stats.timeouts, 4);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(eq->rec.probe_deadline_ns, 0);
	/* Never sooner than an eighth of the QP's timeout (with timeout 10,
	 * 4.19 ms: 524 us, however short the round trip). */
	ut_qp_reset(40);
	eq->rec.srtt_ns = 20000;
	eq->rec.rttvar_ns = 10000;
	ut_eq.path.timeout = 10;
	w1 = ut_post_send(3, DRNIC_WR_SEND, &sge, 1, 0);
	ut_sent(eq, w1);
	CU_ASSERT_EQUAL(eq->rec.probe_deadline_ns, ut_now + (4096ull << 10) / 8);
}

/* The window halves on a PSN-sequence NAK, once per round; the same NAK
 * again within half a round trip is stale (dropped, no second go-back); a
 * timeout starts over from ENGINE_MIN_CWND; ACKs grow it (doubling below
 * ssthresh). */
static void
test_cwnd_nak_timeout(void)
{
	struct engine_qp *eq = ut_qp_reset(0);
	static uint8_t b[100 * 1024];
	struct drnic_sge sge = { (uintptr_t)b, sizeof(b), 1 };
	struct verbs_send_wqe *w;
	struct drnic_wire_pkt p;

	ut_now = 5000000;
	eq->rec.srtt_ns = 10000;
	w = ut_post_send(1, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);      /* 0..99 */
	ut_sent(eq, w);
	CU_ASSERT_EQUAL(engine_inflight(eq), 100);
	p = ut_ack(40, DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(eq->req.npsn, 40);               /* resumes at 40 */
	CU_ASSERT_EQUAL(eq->rec.cwnd, 30);               /* (100 - 40) / 2 */
	CU_ASSERT_EQUAL(eq->rec.ssthresh, 30);
	/* Resent from 40 to the end (as the requester would). */
	eq->req.npsn = 100;
	eq->req.idx = 1;
	eq->req.off = 0;
	w->state = WQE_SENT;
	ut_now += 1000;
	comp_rx(eq, NULL, &p);                       /* stale: within srtt / 2 */
	CU_ASSERT_EQUAL(eq->req.npsn, 100);          /* no go-back */
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_STALE_NAK], 1);
	ut_now += 10000;
	comp_rx(eq, NULL, &p);                       /* lost again: goes back */
	CU_ASSERT_EQUAL(eq->req.npsn, 40);
	CU_ASSERT_EQUAL(eq->rec.cwnd, 30);               /* same round: once */
	eq->req.npsn = 100;
	eq->req.idx = 1;
	w->state = WQE_SENT;
	/* ACKs past the round: the window grows by what they acknowledge. */
	eq->rec.ssthresh = 64;
	p = ut_ack(49, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(eq->rec.cwnd, 40);
	/* A timeout: back to the smallest window. */
	ut_now = eq->rec.retry_deadline_ns;
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->rec.cwnd, ENGINE_MIN_CWND);
	CU_ASSERT_EQUAL(eq->rec.ssthresh, 25);           /* (100 - 50) / 2 */
}

/* A READ with part of its response, then an ACK for a later PSN: the rest
 * of the READ was lost (the responder answers in order): asked for from the
 * first missing PSN, once. */
static void
test_implied_nak_partial_read(void)
{
	struct engine_qp *eq = ut_qp_reset(1000);
	static uint8_t big[10 * 1024], r8[8];
	struct drnic_sge sb = { (uintptr_t)big, sizeof(big), 1 }, s8 = { (uintptr_t)r8, 8, 1 };
	struct verbs_send_wqe *rd, *wr;
	struct drnic_wire_pkt p;
	unsigned int i, ntx;

	for (i = 0; i < sizeof(rsp); i++)
		rsp[i] = (uint8_t)(i * 7 + 5);
	rd = ut_post_send(1, DRNIC_WR_RDMA_READ, &sb, 1, DRNIC_SEND_SIGNALED);  /* 1000..1009 */
	rd->remote_addr = 0x40000;
	rd->rkey = 9;
	wr = ut_post_send(2, DRNIC_WR_RDMA_WRITE, &s8, 1, DRNIC_SEND_SIGNALED); /* 1010 */
	ut_sent(eq, rd);
	ut_sent(eq, wr);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 1000, 0, 1024);
	for (i = 1001; i < 1005; i++)
		ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, i, 0, 1024);
	ntx = ut_ntx;
	p = ut_ack(1010, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, ntx + 1);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.bth.psn, 1005);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.va, 0x40000 + 5 * 1024);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.dmalen, 5 * 1024);
	comp_rx(eq, NULL, &p);                       /* once per missing PSN */
	CU_ASSERT_EQUAL(ut_ntx, ntx + 1);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 1005, 0, 1024);
	for (i = 1006; i < 1009; i++)
		ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, i, 0, 1024);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, 1009, 0, 1024);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);            /* the READ, then the WRITE */
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 1);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, sizeof(big));
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	for (i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(memcmp(big + i * 1024, rsp, 1024), 0);
}

/* A later READ's response while an older READ misses the rest of its own:
 * the later one is taken (each READ keeps its own progress), the rest of
 * the older is asked for at once, and both complete in order. With only
 * that READ outstanding, the early retransmit comes after one round trip
 * (no timeout floor: it is one request packet). */
static void
test_read_go_back(void)
{
	struct engine_qp *eq = ut_qp_reset(2000);
	static uint8_t a[6 * 1024], b[2 * 1024];
	struct drnic_sge sa = { (uintptr_t)a, sizeof(a), 1 }, sb = { (uintptr_t)b, sizeof(b), 1 };
	struct verbs_send_wqe *ra, *rb;
	unsigned int i, ntx;

	for (i = 0; i < sizeof(rsp); i++)
		rsp[i] = (uint8_t)(i * 5 + 3);
	ut_now = 7000000;
	eq->rec.srtt_ns = 80000;
	ut_eq.path.timeout = 12;                   /* 16.8 ms: its eighth is 2 ms */
	ra = ut_post_send(1, DRNIC_WR_RDMA_READ, &sa, 1, DRNIC_SEND_SIGNALED);  /* 2000..2005 */
	ra->remote_addr = 0x10000;
	rb = ut_post_send(2, DRNIC_WR_RDMA_READ, &sb, 1, DRNIC_SEND_SIGNALED);  /* 2006..2007 */
	rb->remote_addr = 0x20000;
	ut_sent(eq, ra);
	ut_sent(eq, rb);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 2000, 0, 1024);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 2001, 0, 1024);
	/* 2002..2005 lost; B's response begins. */
	ntx = ut_ntx;
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 2006, 0, 1024);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_BAD_RESP], 0);
	CU_ASSERT_EQUAL(ra->rd_next, 2002);        /* A's progress kept */
	CU_ASSERT_EQUAL(rb->rd_next, 2007);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, ntx + 1);    /* the rest of A, at once */
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.bth.psn, 2002);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.va, 0x10000 + 2048);
	CU_ASSERT_EQUAL(ut_tx[ntx].pkt.reth.dmalen, 4096);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, 2007, 0, 1024);
	CU_ASSERT_EQUAL(rb->state, WQE_DONE);      /* done, retired after A */
	CU_ASSERT_EQUAL(ut_nwc, 0);
	/* Everything after A acknowledged (as B's LAST would): one round trip
	 * and A's rest is asked for again, not after a 2 ms floor. */
	eq->comp.any_acked = true;
	eq->comp.acked_psn = 2007;
	rec_timer_arm(eq);
	CU_ASSERT_EQUAL(eq->rec.probe_deadline_ns, ut_now + 80000);
	/* The rest of A: A completes, then B. */
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 2002, 0, 1024);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 2003, 0, 1024);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 2004, 0, 1024);
	ut_read_resp(eq, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, 2005, 0, 1024);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 1);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, sizeof(a));
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	for (i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(memcmp(a + i * 1024, rsp, 1024), 0);
	CU_ASSERT_EQUAL(memcmp(b, rsp, 1024), 0);
	CU_ASSERT_EQUAL(memcmp(b + 1024, rsp, 1024), 0);
	CU_ASSERT_EQUAL(eq->req.rd_outstanding, 0);
}

/* Every state has a name for the logs, each its own. */
static void
test_state_names(void)
{
	ut_check_name_table(comp_state_names, COMP_STATE_MAX);
}

/* The requester's packets since the last call: first PSN and count. */
static unsigned int
ut_sent_since(unsigned int *from, uint32_t *first_psn)
{
	unsigned int n = ut_ntx - *from;

	if (n > 0 && first_psn != NULL)
		*first_psn = ut_tx[*from].pkt.bth.psn;
	*from = ut_ntx;
	return n;
}

static uint8_t src[16384];   /* the resend tests' WRITE sources */

/*
 * A WRITE fully received by the responder whose ACK came late: the
 * retransmit timer went back, and the ACK of its last PSN arrives while
 * the requester is resending it. The WRITE completes with SUCCESS at once
 * and nothing the responder acknowledged is sent again; the responder's
 * duplicate ACKs for the resent packets change nothing. (It stayed
 * outstanding: the go-back restarted it from its first PSN, the ACK moved
 * only the acknowledged PSN, every later duplicate ACK was dropped, and
 * ib_write_lat -a ended RETRY_EXC_ERR.)
 */
static void
test_ack_during_resend(void)
{
	struct engine_qp *eq = ut_qp_reset(100);
	struct drnic_sge sge = { (uintptr_t)src, 8192, 1 };   /* 8 PSNs: 100..107 */
	struct drnic_wire_pkt p;
	unsigned int mark = 0;
	uint32_t first = 0;

	ut_qp.sq_sig_all = 1;
	ut_now = 1000000;
	ut_post_send(7, DRNIC_WR_RDMA_WRITE, &sge, 1, 0);
	CU_ASSERT_EQUAL(req_step(eq, 64), 8);
	CU_ASSERT_EQUAL(ut_sent_since(&mark, &first), 8);
	CU_ASSERT_EQUAL(first, 100);
	/* No ACK: the timer goes back to the WRITE's first PSN. */
	ut_now = eq->rec.retry_deadline_ns;
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->req.npsn, 100);
	CU_ASSERT_EQUAL(req_step(eq, 2), 2);       /* 100, 101 resent */
	CU_ASSERT_EQUAL(ut_sent_since(&mark, &first), 2);
	CU_ASSERT_EQUAL(first, 100);
	/* The late ACK of the whole WRITE (the first pass's last packet). */
	p = ut_ack(107, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 7);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_RDMA_WRITE);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.sq.cons), 1);
	CU_ASSERT_EQUAL(eq->rec.retry_deadline_ns, 0);  /* nothing outstanding */
	/* Nothing more to send; the duplicate ACKs of the two resent packets
	 * are dropped as such and complete nothing twice. */
	CU_ASSERT_EQUAL(req_step(eq, 64), 0);
	CU_ASSERT_EQUAL(ut_sent_since(&mark, NULL), 0);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_GHOST_RESP], 1);
}

/*
 * An ACK for the middle of a WRITE being resent moves the requester on to
 * the next PSN (not the next WQE); a second WRITE behind it is sent after
 * it, once, with its own PSNs.
 */
static void
test_ack_mid_resend(void)
{
	struct engine_qp *eq = ut_qp_reset(0xFFFFFE);   /* across the wrap */
	struct drnic_sge a = { (uintptr_t)src, 4096, 1 };          /* 4 PSNs */
	struct drnic_sge b = { (uintptr_t)src + 4096, 2048, 1 };   /* 2 PSNs */
	struct drnic_wire_pkt p;
	unsigned int mark = 0;
	uint32_t first = 0;
	unsigned int i;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 13 + 1);
	ut_qp.sq_sig_all = 1;
	ut_now = 1000000;
	ut_post_send(1, DRNIC_WR_RDMA_WRITE, &a, 1, 0);   /* 0xFFFFFE..1 */
	ut_post_send(2, DRNIC_WR_RDMA_WRITE, &b, 1, 0);   /* 2..3 */
	CU_ASSERT_EQUAL(req_step(eq, 64), 6);
	ut_sent_since(&mark, NULL);
	ut_now = eq->rec.retry_deadline_ns;
	rec_timeout(eq);
	CU_ASSERT_EQUAL(req_step(eq, 1), 1);
	CU_ASSERT_EQUAL(ut_sent_since(&mark, &first), 1);
	CU_ASSERT_EQUAL(first, 0xFFFFFE);
	/* The responder has A up to PSN 0 (its third packet). */
	p = ut_ack(0, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	CU_ASSERT_EQUAL(eq->req.npsn, 1);
	/* The rest: A's last packet (with its payload), then B whole. */
	CU_ASSERT_EQUAL(req_step(eq, 64), 3);
	CU_ASSERT_EQUAL_FATAL(ut_sent_since(&mark, &first), 3);
	CU_ASSERT_EQUAL(first, 1);
	CU_ASSERT_EQUAL(ut_tx[ut_ntx - 3].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST);
	CU_ASSERT_EQUAL(ut_tx[ut_ntx - 3].len, 1024);
	CU_ASSERT_EQUAL(memcmp(ut_tx[ut_ntx - 3].data, src + 3072, 1024), 0);
	CU_ASSERT_EQUAL(ut_tx[ut_ntx - 2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST);
	CU_ASSERT_EQUAL(ut_tx[ut_ntx - 2].pkt.bth.psn, 2);
	CU_ASSERT_EQUAL(memcmp(ut_tx[ut_ntx - 2].data, src + 4096, 1024), 0);
	CU_ASSERT_EQUAL(ut_tx[ut_ntx - 1].pkt.bth.psn, 3);
	p = ut_ack(3, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 1);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_SUCCESS);
}

/*
 * A READ stops the skip: an ACK past it says nothing of its response. The
 * WRITE behind it, acknowledged, is resent after the READ (go-back from the
 * oldest WQE); the responder's duplicate ACK for it then retires both once
 * the READ's response has come.
 */
static void
test_skip_stops_at_read(void)
{
	struct engine_qp *eq = ut_qp_reset(10);
	static uint8_t rbuf[1024];
	struct drnic_sge r = { (uintptr_t)rbuf, sizeof(rbuf), 1 };   /* PSN 10 */
	struct drnic_sge w = { (uintptr_t)src, 2048, 1 };            /* 11..12 */
	struct drnic_wire_pkt p;
	unsigned int mark = 0;
	uint32_t first = 0;

	ut_qp.sq_sig_all = 1;
	ut_now = 1000000;
	ut_post_send(1, DRNIC_WR_RDMA_READ, &r, 1, 0);
	ut_post_send(2, DRNIC_WR_RDMA_WRITE, &w, 1, 0);
	CU_ASSERT_EQUAL(req_step(eq, 64), 3);          /* READ, then WRITE 11..12 */
	CU_ASSERT_EQUAL(ut_sent_since(&mark, NULL), 3);
	ut_now = eq->rec.retry_deadline_ns;
	rec_timeout(eq);
	CU_ASSERT_EQUAL(eq->req.npsn, 10);                 /* from the READ */
	/* ACK 12 (the WRITE's) arrives first, before anything is resent: it
	 * is believed (what was sent before the go-back is outstanding), and
	 * the READ's response is still owed. */
	p = ut_ack(12, DRNIC_AETH_ACK, 31);
	comp_rx(eq, NULL, &p);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_GHOST_RESP], 0);
	CU_ASSERT_EQUAL(eq->comp.acked_psn, 12);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	CU_ASSERT_EQUAL(eq->req.npsn, 10);                 /* the READ is asked again */
	CU_ASSERT_EQUAL(req_step(eq, 64), 3);
	CU_ASSERT_EQUAL(ut_sent_since(&mark, &first), 3);
	CU_ASSERT_EQUAL(first, 10);
	/* The READ's response retires the READ; the WRITE, acknowledged and
	 * resent, retires behind it. */
	memset(&p, 0, sizeof(p));
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY;
	p.bth.psn = 10;
	p.aeth.syndrome = drnic_aeth_syndrome(DRNIC_AETH_ACK, 31);
	p.payload_len = sizeof(rbuf);
	comp_rx(eq, (struct rte_mbuf *)(void *)src, &p);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 1);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(rbuf, src, sizeof(rbuf)), 0);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_SUCCESS);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("completer", NULL, NULL);
	CU_ADD_TEST(s, test_state_names);
	CU_ADD_TEST(s, test_ack_in_order);
	CU_ADD_TEST(s, test_read_and_atomic);
	CU_ADD_TEST(s, test_naks);
	CU_ADD_TEST(s, test_rnr_seq_timeout);
	CU_ADD_TEST(s, test_read_partial);
	CU_ADD_TEST(s, test_implied_nak);
	CU_ADD_TEST(s, test_timeout_alive_bound);
	CU_ADD_TEST(s, test_timeout_exhaust_flush);
	CU_ADD_TEST(s, test_early_retransmit);
	CU_ADD_TEST(s, test_cwnd_nak_timeout);
	CU_ADD_TEST(s, test_implied_nak_partial_read);
	CU_ADD_TEST(s, test_read_go_back);
	CU_ADD_TEST(s, test_ghost_window);
	CU_ADD_TEST(s, test_ack_during_resend);
	CU_ADD_TEST(s, test_ack_mid_resend);
	CU_ADD_TEST(s, test_skip_stops_at_read);
	return ut_run_all();
}
