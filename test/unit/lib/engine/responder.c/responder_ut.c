/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/engine/responder.c, driven packet by packet: PSN checks
 * (duplicates, gaps), opcode sequence, lengths, receive WQEs and RNR, keys
 * and access (a failed check copies nothing), WRITE, READ responses,
 * atomics executed once, ACK/NAK contents, flush.
 */
/* The ICRC of frames the parser deferred, as this test says (below). */
#define drnic_wire_icrc_check ut_wire_icrc_check
#define drnic_wire_copy_out_verify ut_wire_copy_out_verify
/* verbs_mr_key_live() answers what the test says (ut_engine_stubs.h). */
#define VERBS_MR_KEY_LIVE_STUB
#define UT_REAL_RESP_SETUP
#include "lib/engine/responder.c"

#define UT_ENGINE_CQE_STUBS
#include "test/unit/lib/engine/ut_engine_stubs.h"
#include "ut_common.h"

static unsigned int ut_copies;

bool
verbs_qp_set_error(struct drnic_qp *qp)
{
	ut_errors++;
	return atomic_exchange(&qp->state, DRNIC_QPS_ERR) != DRNIC_QPS_ERR;
}

void
verbs_qp_event(struct drnic_qp *qp, enum drnic_event_type type)
{
	RTE_SET_USED(qp);
	ut_events++;
	ut_last_event = type;
}

int
drnic_wire_copy_out(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *dst)
{
	ut_copies++;
	memcpy(dst, (const uint8_t *)m + off, len);
	return 0;
}

/* Frames whose ICRC the parser deferred: this test says whether it is good.
 * drnic_wire_icrc_check() answers it, and drnic_wire_copy_out_verify()
 * copies, then answers the same way (both are renamed to these stand-ins
 * above). */
static bool ut_icrc_bad;
static unsigned int ut_verifies, ut_copy_verifies;

int
drnic_wire_icrc_check(const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	RTE_SET_USED(m);
	RTE_SET_USED(pkt);
	ut_verifies++;
	return ut_icrc_bad ? -EBADMSG : 0;
}

int
drnic_wire_copy_out_verify(const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt, void *dst)
{
	ut_copy_verifies++;
	memcpy(dst, (const uint8_t *)m + pkt->payload_off, pkt->payload_len);
	return ut_icrc_bad ? -EBADMSG : 0;
}

static uint8_t payload[4096], mem[16384];

/* The SRQ a test gives the QP: verbs_srq_take() hands out its WQEs in order
 * (one SGE each). */
static struct drnic_srq ut_srq;
static struct {
	uint64_t wr_id;
	struct drnic_sge sge;
} ut_srq_q[8];
static unsigned int ut_srq_n, ut_srq_taken;

bool
verbs_srq_take(struct drnic_srq *srq, struct verbs_recv_wqe *w)
{
	CU_ASSERT_PTR_EQUAL(srq, &ut_srq);
	if (ut_srq_taken == ut_srq_n)
		return false;
	w->wr_id = ut_srq_q[ut_srq_taken].wr_id;
	w->num_sge = 1;
	w->sge[0] = ut_srq_q[ut_srq_taken].sge;
	w->length = w->sge[0].length;
	ut_srq_taken++;
	return true;
}

static void
ut_srq_post(uint64_t wr_id, uint64_t addr, uint32_t len)
{
	ut_srq_q[ut_srq_n].wr_id = wr_id;
	ut_srq_q[ut_srq_n].sge = (struct drnic_sge){ addr, len, 1 };
	ut_srq_n++;
}

static struct drnic_wire_pkt
ut_req(uint8_t opcode, uint32_t psn, uint32_t len)
{
	struct drnic_wire_pkt p;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = opcode;
	p.bth.psn = psn;
	p.payload_off = 0;
	p.payload_len = len;
	p.bth.ackreq = (drnic_wire_opcode_info(opcode)->pos & DRNIC_WIRE_POS_LAST) != 0;
	return p;
}

/* A WRITE continuation whose ICRC the parser deferred (good or bad: ut_icrc_bad). */
static struct drnic_wire_pkt
ut_deferred(uint8_t opcode, uint32_t psn, uint32_t len)
{
	struct drnic_wire_pkt p = ut_req(opcode, psn, len);

	p.icrc_deferred = true;
	return p;
}

static void
rx(struct engine_qp *eq, const struct drnic_wire_pkt *p, const uint8_t *data)
{
	resp_rx(eq, (struct rte_mbuf *)(uintptr_t)data, p);
}

static struct engine_qp *
ut_setup_qp(uint32_t epsn)
{
	unsigned int i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 1);
	memset(mem, 0, sizeof(mem));
	ut_copies = 0;
	return ut_qp_reset(epsn);
}

/* The ACK/NAK resp_step() sends now: its syndrome and PSN. */
static void
ut_expect_ack(struct engine_qp *eq, uint8_t syn, uint32_t psn)
{
	unsigned int n = ut_ntx;

	CU_ASSERT_TRUE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 1);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, n + 1);
	CU_ASSERT_EQUAL(ut_tx[n].pkt.bth.opcode, DRNIC_WIRE_OP_RC_ACKNOWLEDGE);
	CU_ASSERT_EQUAL(ut_tx[n].pkt.aeth.syndrome, syn);
	CU_ASSERT_EQUAL(ut_tx[n].pkt.bth.psn, psn);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
}

#define ACK drnic_aeth_syndrome(DRNIC_AETH_ACK, DRNIC_AETH_CREDIT_INVALID)

static void
test_send(void)
{
	struct engine_qp *eq = ut_setup_qp(100);
	struct drnic_sge rs[2] = { { (uintptr_t)mem, 1500, 1 }, { (uintptr_t)mem + 8192, 2000, 1 } };
	struct drnic_wire_pkt p;

	ut_post_recv(1001, rs, 2);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_FIRST, 100, 1024);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->resp.state, RESP_IN_SEND);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_MIDDLE, 101, 1024);
	rx(eq, &p, payload + 1024);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_LAST, 102, 952);
	p.bth.se = true;
	rx(eq, &p, payload + 2048);
	CU_ASSERT_EQUAL(eq->resp.state, RESP_IDLE);
	CU_ASSERT_EQUAL(eq->resp.epsn, 103);
	CU_ASSERT_EQUAL(eq->resp.msn, 1);
	CU_ASSERT_EQUAL(memcmp(mem, payload, 1500), 0);
	CU_ASSERT_EQUAL(memcmp(mem + 8192, payload + 1500, 1500), 0);
	CU_ASSERT_EQUAL(mem[8192 + 1500], 0);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 1001);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_RECV);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 3000);
	CU_ASSERT_EQUAL(ut_wc[0].qp_num, 17);
	CU_ASSERT_EQUAL(ut_wc[0].src_qp, 33);
	CU_ASSERT_EQUAL(ut_wc[0].wc_flags, 0);
	CU_ASSERT_TRUE(ut_wc_sol[0]);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.rq.cons), 1);
	ut_expect_ack(eq, ACK, 102);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.aeth.msn, 1);

	/* SEND with immediate, zero bytes. */
	ut_post_recv(1002, rs, 1);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_IMMEDIATE, 103, 0);
	p.imm = 0xA1B2C3D4;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 1002);
	CU_ASSERT_EQUAL(ut_wc[1].byte_len, 0);
	CU_ASSERT_EQUAL(ut_wc[1].wc_flags, DRNIC_WC_WITH_IMM);
	CU_ASSERT_EQUAL(ut_wc[1].imm_data, 0xA1B2C3D4);
	CU_ASSERT_FALSE(ut_wc_sol[1]);
}

/*
 * SEND with Invalidate: the window the IETH names is invalidated (for this
 * QP, remotely) as the last packet executes, and the receive completes
 * WITH_INV with that rkey; a duplicate does not invalidate again. A key the
 * QP cannot invalidate: NAK invalid request, QP to ERR, no receive
 * completion (it is flushed).
 */
static void
test_send_inv(void)
{
	struct engine_qp *eq = ut_setup_qp(40);
	struct drnic_sge rs = { (uintptr_t)mem, 4096, 1 };
	struct drnic_wire_pkt p;

	ut_post_recv(51, &rs, 1);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_FIRST, 40, 1024);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_mw_invs, 0);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_LAST_WITH_INVALIDATE, 41, 100);
	p.ieth_rkey = 0x80AB1207;
	rx(eq, &p, payload + 1024);
	CU_ASSERT_EQUAL(ut_mw_invs, 1);
	CU_ASSERT_EQUAL(ut_mw_inv_rkey, 0x80AB1207);
	CU_ASSERT_TRUE(ut_mw_inv_remote);
	CU_ASSERT_EQUAL(memcmp(mem, payload, 1124), 0);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 51);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_RECV);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 1124);
	CU_ASSERT_EQUAL(ut_wc[0].qp_num, 17);
	CU_ASSERT_EQUAL(ut_wc[0].src_qp, 33);
	CU_ASSERT_EQUAL(ut_wc[0].wc_flags, DRNIC_WC_WITH_INV);
	CU_ASSERT_EQUAL(ut_wc[0].invalidated_rkey, 0x80AB1207);
	ut_expect_ack(eq, ACK, 41);
	/* The same packet again (its ACK was lost): acknowledged, not run. */
	rx(eq, &p, payload + 1024);
	CU_ASSERT_EQUAL(ut_mw_invs, 1);
	CU_ASSERT_EQUAL(ut_nwc, 1);

	/* A key it cannot invalidate. */
	eq = ut_setup_qp(0);
	ut_post_recv(52, &rs, 1);
	ut_mw_rc = -EINVAL;
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_INVALIDATE, 0, 10);
	p.ieth_rkey = 0x1234;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_mw_invs, 1);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	CU_ASSERT_EQUAL(resp_flush(eq), 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 52);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_WR_FLUSH_ERR);
}

/* A peer that sends the same out-of-sequence PSN again and again, one per
 * step: the NAK goes, then ENGINE_NAK_BURST repeats of it, then one per
 * ENGINE_NAK_REFILL_NS of the (fake) clock; the others are counted. A NAK
 * for a new expected PSN always goes. */
static void
test_repeated_nak_limit(void)
{
	struct engine_qp *eq = ut_setup_qp(100);
	uint8_t seq = drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR);
	struct drnic_wire_pkt p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 105, 0);
	unsigned int i, sent = 0;

	p.reth.rkey = 5;
	for (i = 0; i < 40; i++) {
		rx(eq, &p, NULL);            /* the same PSN: each one a new "round" */
		if (eq->resp.ack_pending) {
			CU_ASSERT_EQUAL(resp_step(eq, 32), 1);
			CU_ASSERT_EQUAL(ut_tx[ut_ntx - 1].pkt.aeth.syndrome, seq);
			CU_ASSERT_EQUAL(ut_tx[ut_ntx - 1].pkt.bth.psn, 100);
			sent++;
		}
	}
	/* The first, then a bucket's worth of repeats. */
	CU_ASSERT_EQUAL(sent, 1 + ENGINE_NAK_BURST);
	CU_ASSERT_EQUAL(eq->stats.naks_limited, 40 - 1 - ENGINE_NAK_BURST);
	ut_now += ENGINE_NAK_REFILL_NS;          /* one more token */
	rx(eq, &p, NULL);
	CU_ASSERT_TRUE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 1);
	rx(eq, &p, NULL);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	/* The expected PSN moves: its NAK is new and goes at once. */
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 100, 0);
	rx(eq, &p, NULL);                        /* in order: epsn 101 */
	(void)resp_step(eq, 32);
	p.bth.psn = 110;
	rx(eq, &p, NULL);
	CU_ASSERT_TRUE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(eq->resp.ack_psn, 101);
	CU_ASSERT_EQUAL(eq->resp.ack_syn, seq);
}

static void
test_psn_and_sequence(void)
{
	struct engine_qp *eq = ut_setup_qp(0xFFFFFF);
	struct drnic_sge rs = { (uintptr_t)mem, 4096, 1 };
	struct drnic_wire_pkt p;

	ut_post_recv(1, &rs, 1);
	ut_post_recv(2, &rs, 1);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 0xFFFFFF, 10);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->resp.epsn, 0);          /* wrapped */
	ut_expect_ack(eq, ACK, 0xFFFFFF);
	/* Duplicate: acknowledged again, no second receive consumed. */
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_PSN_DUP], 1);
	ut_expect_ack(eq, ACK, 0xFFFFFF);
	/* A gap: one PSN-sequence NAK carrying the expected PSN. */
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 2, 10);
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR), 0);
	p.bth.psn = 3;
	rx(eq, &p, payload);
	CU_ASSERT_FALSE(eq->resp.ack_pending);      /* only one NAK per gap */
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_PSN_OOS], 2);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	/* The requester went back and lost PSN 0 again: 1 arrives, not above
	 * the last out-of-sequence PSN (3): a new round, a NAK of its own;
	 * then silence for the rest of that round. */
	p.bth.psn = 1;
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR), 0);
	p.bth.psn = 2;
	rx(eq, &p, payload);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_PSN_OOS], 4);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	/* Opcode sequence: a MIDDLE with no message open is an invalid
	 * request; the QP goes to ERR with QP_REQ_ERR. */
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_MIDDLE, 0, 1024);
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	CU_ASSERT_EQUAL(ut_copies, 1);
	/* In ERR everything is dropped. */
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 0, 10);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_QP_STATE], 1);

	/* A FIRST shorter than the path MTU is invalid. */
	eq = ut_setup_qp(5);
	ut_post_recv(1, &rs, 1);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_FIRST, 5, 1000);
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 5);
	CU_ASSERT_EQUAL(ut_copies, 0);
}

static void
test_recv_errors(void)
{
	struct engine_qp *eq = ut_setup_qp(0);
	struct drnic_sge rs = { (uintptr_t)mem, 100, 1 };
	struct drnic_wire_pkt p;

	/* No receive WQE: RNR NAK with min_rnr_timer; nothing consumed. */
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 0, 10);
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_RNR_NAK, 3), 0);
	CU_ASSERT_EQUAL(eq->resp.epsn, 0);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_RTS);
	/* Too long for the buffer: LOC_LEN_ERR here, NAK invalid request
	 * there, nothing written. */
	ut_post_recv(7, &rs, 1);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 0, 200);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 7);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(ut_wc[0].qp_num, 17);
	CU_ASSERT_EQUAL(ut_copies, 0);
	CU_ASSERT_EQUAL(mem[0], 0);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);

	/* A bad receive lkey: LOC_PROT_ERR, NAK remote operational error. */
	eq = ut_setup_qp(0);
	ut_post_recv(8, &rs, 1);
	ut_key_rc = -ENOENT;
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 0, 50);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_LOC_PROT_ERR);
	CU_ASSERT_EQUAL(ut_copies, 0);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_OP), 0);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_ACCESS_ERR);

	/* Flush: every posted receive completes with WR_FLUSH_ERR. */
	eq = ut_setup_qp(0);
	ut_post_recv(21, &rs, 1);
	ut_post_recv(22, &rs, 1);
	CU_ASSERT_EQUAL(resp_flush(eq), 2);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 21);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_RECV);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 22);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.rq.cons), 2);
}

static void
test_write(void)
{
	struct engine_qp *eq = ut_setup_qp(10);
	struct drnic_wire_pkt p;

	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 10, 1024);
	p.reth.va = (uintptr_t)mem + 16;
	p.reth.rkey = 0x100;
	p.reth.dmalen = 2100;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->resp.state, RESP_IN_WRITE);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, 11, 1024);
	rx(eq, &p, payload + 1024);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST, 12, 52);
	rx(eq, &p, payload + 2048);
	CU_ASSERT_EQUAL(memcmp(mem + 16, payload, 2100), 0);
	CU_ASSERT_EQUAL(mem[15], 0);
	CU_ASSERT_EQUAL(mem[16 + 2100], 0);
	CU_ASSERT_EQUAL(ut_nwc, 0);               /* no receive consumed */
	ut_expect_ack(eq, ACK, 12);

	/* WRITE with immediate consumes a receive WQE. */
	{
		struct drnic_sge rs = { (uintptr_t)mem, 0, 1 };

		ut_post_recv(55, &rs, 0);
	}
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 13, 8);
	p.reth.va = (uintptr_t)mem + 4000;
	p.reth.dmalen = 8;
	p.imm = 0x01020304;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 55);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_RECV_RDMA_WITH_IMM);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 8);
	CU_ASSERT_EQUAL(ut_wc[0].imm_data, 0x01020304);
	CU_ASSERT_EQUAL(memcmp(mem + 4000, payload, 8), 0);
	/* Without a receive WQE: RNR, and nothing written. */
	p.bth.psn = 14;
	p.reth.va = (uintptr_t)mem + 6000;
	ut_copies = 0;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_copies, 0);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_RNR_NAK, 3), 14);

	/* A LAST that does not end the DMA length: invalid request. */
	eq = ut_setup_qp(0);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 0, 1024);
	p.reth.va = (uintptr_t)mem;
	p.reth.dmalen = 3000;
	rx(eq, &p, payload);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST, 1, 100);
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 1);

	/* A bad rkey: NAK remote access, QP_ACCESS_ERR, no byte written. */
	eq = ut_setup_qp(0);
	ut_key_rc = -ENOENT;
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 0, 64);
	p.reth.va = (uintptr_t)mem;
	p.reth.dmalen = 64;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_copies, 0);
	CU_ASSERT_EQUAL(mem[0], 0);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_ACCESS), 0);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_ACCESS_ERR);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	/* The QP does not enable remote writes: an invalid request. */
	eq = ut_setup_qp(0);
	ut_eq.path.access_flags = DRNIC_ACCESS_REMOTE_READ;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_copies, 0);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	/* Nor remote reads. */
	eq = ut_setup_qp(0);
	ut_eq.path.access_flags = DRNIC_ACCESS_REMOTE_WRITE;
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 0, 0);
	p.reth.dmalen = 8;
	rx(eq, &p, NULL);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0);
	CU_ASSERT_EQUAL(eq->resp.rd_tail, 0);
}

static void
test_read(void)
{
	struct engine_qp *eq = ut_setup_qp(20);
	struct drnic_wire_pkt p;
	unsigned int i;

	memcpy(mem, payload, sizeof(payload));
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 20, 0);
	p.reth.va = (uintptr_t)mem + 1;
	p.reth.rkey = 5;
	p.reth.dmalen = 2500;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(eq->resp.epsn, 23);            /* 3 response PSNs */
	CU_ASSERT_EQUAL(eq->resp.rtx_tail - eq->resp.rtx_head, 1);
	CU_ASSERT_EQUAL(eq->resp.rd_pending, 1);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 23, 0);
	p.reth.va = (uintptr_t)mem;
	p.reth.dmalen = 0;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(eq->resp.epsn, 24);
	/* The responses, within the budget: 2 now, 2 later. */
	CU_ASSERT_EQUAL(resp_step(eq, 2), 2);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 2);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, 4);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY);
	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(ut_tx[i].pkt.bth.psn, 20 + i);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.bth.psn, 23);
	CU_ASSERT_EQUAL(ut_tx[0].len, 1024);
	CU_ASSERT_EQUAL(ut_tx[2].len, 452);
	CU_ASSERT_EQUAL(ut_tx[3].len, 0);
	CU_ASSERT_EQUAL(memcmp(ut_tx[0].data, payload + 1, 1024), 0);
	CU_ASSERT_EQUAL(memcmp(ut_tx[2].data, payload + 1 + 2048, 452), 0);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.aeth.syndrome, ACK);
	/* A duplicate READ is answered again. */
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 20, 0);
	p.reth.va = (uintptr_t)mem + 1;
	p.reth.dmalen = 2500;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 3);
	CU_ASSERT_EQUAL(ut_tx[4].pkt.bth.psn, 20);
	CU_ASSERT_EQUAL(eq->resp.epsn, 24);
	/* More READs than max_dest_rd_atomic (4) outstanding: invalid. */
	for (i = 0; i < 5; i++) {
		p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 24 + i, 0);
		p.reth.dmalen = 0;
		rx(eq, &p, NULL);
	}
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	/* A bad rkey. */
	eq = ut_setup_qp(0);
	ut_key_rc = -EPERM;
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 0, 0);
	p.reth.dmalen = 10;
	rx(eq, &p, NULL);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_ACCESS), 0);
}

static void
test_atomic(void)
{
	struct engine_qp *eq = ut_setup_qp(40);
	struct drnic_wire_pkt p;
	uint64_t v = 1000;

	memcpy(mem + 64, &v, 8);
	p = ut_req(DRNIC_WIRE_OP_RC_FETCH_ADD, 40, 0);
	p.atomic.va = (uintptr_t)mem + 64;
	p.atomic.swap_add = 5;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 1);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.opcode, DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.atomic_orig, 1000);
	CU_ASSERT_EQUAL(ut_tx[0].pkt.bth.psn, 40);
	memcpy(&v, mem + 64, 8);
	CU_ASSERT_EQUAL(v, 1005);
	/* The duplicate is answered from the saved result, not run again. */
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 1);
	CU_ASSERT_EQUAL(ut_tx[1].pkt.atomic_orig, 1000);
	memcpy(&v, mem + 64, 8);
	CU_ASSERT_EQUAL(v, 1005);
	/* Compare-and-swap: no match, then a match. */
	p = ut_req(DRNIC_WIRE_OP_RC_COMPARE_SWAP, 41, 0);
	p.atomic.va = (uintptr_t)mem + 64;
	p.atomic.cmp = 1;
	p.atomic.swap_add = 77;
	rx(eq, &p, NULL);
	p.bth.psn = 42;
	p.atomic.cmp = 1005;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 2);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.atomic_orig, 1005);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.atomic_orig, 1005);
	memcpy(&v, mem + 64, 8);
	CU_ASSERT_EQUAL(v, 77);
	/* Misaligned: invalid request, memory untouched. */
	p = ut_req(DRNIC_WIRE_OP_RC_FETCH_ADD, 43, 0);
	p.atomic.va = (uintptr_t)mem + 65;
	rx(eq, &p, NULL);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 43);
	memcpy(&v, mem + 64, 8);
	CU_ASSERT_EQUAL(v, 77);
	/* Atomics not enabled on the QP: invalid request, memory untouched. */
	eq = ut_setup_qp(0);
	ut_eq.path.access_flags = DRNIC_ACCESS_REMOTE_WRITE;
	v = 5;
	memcpy(mem + 64, &v, 8);
	p = ut_req(DRNIC_WIRE_OP_RC_FETCH_ADD, 0, 0);
	p.atomic.va = (uintptr_t)mem + 64;
	p.atomic.swap_add = 1;
	rx(eq, &p, NULL);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0);
	memcpy(&v, mem + 64, 8);
	CU_ASSERT_EQUAL(v, 5);
	/* A bad rkey: remote access error, memory untouched. */
	eq = ut_setup_qp(0);
	memcpy(mem + 64, &v, 8);
	ut_key_rc = -ENOENT;
	rx(eq, &p, NULL);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_ACCESS), 0);
	memcpy(&v, mem + 64, 8);
	CU_ASSERT_EQUAL(v, 5);
}

/* An ATOMIC WRITE of @p len bytes (DMA length @p dmalen) to mem + @p off on a
 * fresh QP allowing @p access, the key check answering @p key_rc: NAKed with
 * @p nak at PSN 0, nothing written. */
static void
ut_aw_refused(uint32_t off, uint32_t len, uint32_t dmalen, uint32_t access, int key_rc,
	      uint8_t nak)
{
	struct engine_qp *eq = ut_setup_qp(0);
	struct drnic_wire_pkt p = ut_req(DRNIC_WIRE_OP_RC_ATOMIC_WRITE, 0, len);

	ut_eq.path.access_flags = access;
	ut_key_rc = key_rc;
	p.reth.va = (uintptr_t)mem + off;
	p.reth.dmalen = dmalen;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(mem[off], 0);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, nak), 0);
}

/* An MR with an iova of its own (zero-based, as device memory's): the
 * WRITE, READ, atomic and ATOMIC WRITE land where the key check says the
 * peer's address is in memory, not at the address itself. */
static void
test_iova(void)
{
	struct engine_qp *eq = ut_setup_qp(0);
	struct drnic_wire_pkt p;
	uint64_t v = 40, nv = 77;

	ut_iova_delta = (uintptr_t)mem;       /* iova 0 is mem[0] */
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 0, 64);
	p.reth.va = 256;
	p.reth.dmalen = 64;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(memcmp(mem + 256, payload, 64), 0);
	memcpy(mem + 512, &v, 8);
	p = ut_req(DRNIC_WIRE_OP_RC_FETCH_ADD, 1, 0);
	p.atomic.va = 512;
	p.atomic.swap_add = 2;
	rx(eq, &p, NULL);
	memcpy(&v, mem + 512, 8);
	CU_ASSERT_EQUAL(v, 42);
	p = ut_req(DRNIC_WIRE_OP_RC_ATOMIC_WRITE, 2, 8);
	p.reth.va = 520;
	p.reth.dmalen = 8;
	rx(eq, &p, (const uint8_t *)&nv);
	CU_ASSERT_EQUAL(memcmp(mem + 520, &nv, 8), 0);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 3, 0);
	p.reth.va = 256;
	p.reth.dmalen = 64;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(eq->resp.rd_tail, 2);   /* the atomic's and the READ's */
	CU_ASSERT_EQUAL(eq->resp.rd[1].va, (uintptr_t)mem + 256);
	CU_ASSERT_EQUAL(eq->resp.epsn, 4);
}

/* ATOMIC WRITE: 8 bytes stored as they came, checked as a WRITE (the QP's
 * and the MR's REMOTE_WRITE), acknowledged by an ACK; a duplicate is
 * acknowledged again and not stored again; a misaligned address or a length
 * other than 8 is an invalid request that touches nothing. */
static void
test_atomic_write(void)
{
	struct engine_qp *eq = ut_setup_qp(50);
	static const uint8_t val[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t later[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	struct drnic_wire_pkt p;

	ut_eq.path.access_flags = DRNIC_ACCESS_REMOTE_WRITE;
	p = ut_req(DRNIC_WIRE_OP_RC_ATOMIC_WRITE, 50, 8);
	p.reth.va = (uintptr_t)mem + 128;
	p.reth.rkey = 0x100;
	p.reth.dmalen = 8;
	ut_key_access = 0;
	rx(eq, &p, val);
	CU_ASSERT_EQUAL(memcmp(mem + 128, val, 8), 0);
	CU_ASSERT_EQUAL(mem[127], 0);
	CU_ASSERT_EQUAL(mem[136], 0);
	CU_ASSERT_EQUAL(ut_key_access, DRNIC_ACCESS_REMOTE_WRITE);
	CU_ASSERT_EQUAL(eq->resp.state, RESP_IDLE);
	CU_ASSERT_EQUAL(eq->resp.epsn, 51);
	CU_ASSERT_EQUAL(eq->resp.rd_tail, 0);      /* no READ/atomic resource */
	CU_ASSERT_EQUAL(ut_nwc, 0);                /* no receive consumed */
	ut_expect_ack(eq, ACK, 50);
	/* The application writes the word again; the duplicate is only
	 * acknowledged. */
	memcpy(mem + 128, later, 8);
	rx(eq, &p, val);
	CU_ASSERT_EQUAL(memcmp(mem + 128, later, 8), 0);
	ut_expect_ack(eq, ACK, 50);

	/* Misaligned, four bytes, a DMA length of 16: invalid requests. */
	ut_aw_refused(132, 8, 8, DRNIC_ACCESS_REMOTE_WRITE, 0, DRNIC_NAK_INVALID_REQ);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	ut_aw_refused(128, 4, 8, DRNIC_ACCESS_REMOTE_WRITE, 0, DRNIC_NAK_INVALID_REQ);
	ut_aw_refused(128, 8, 16, DRNIC_ACCESS_REMOTE_WRITE, 0, DRNIC_NAK_INVALID_REQ);
	/* The QP enables atomics but not remote writes: invalid request. */
	ut_aw_refused(128, 8, 8, DRNIC_ACCESS_REMOTE_ATOMIC | DRNIC_ACCESS_REMOTE_READ, 0,
		      DRNIC_NAK_INVALID_REQ);
	/* The MR refuses the write: remote access error. */
	ut_aw_refused(128, 8, 8, DRNIC_ACCESS_REMOTE_WRITE, -EPERM, DRNIC_NAK_REMOTE_ACCESS);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_ACCESS_ERR);
}

/* READ resources: duplicates answered again (the exact bytes, also a
 * partial re-read from the middle), a queued response restarted rather than
 * queued twice, max_dest_rd_atomic enforced with an invalid request NAK. */
static void
test_read_replay(void)
{
	struct engine_qp *eq = ut_setup_qp(20);
	struct drnic_wire_pkt p;

	memcpy(mem, payload, sizeof(payload));
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 20, 0);
	p.reth.va = (uintptr_t)mem + 1;
	p.reth.dmalen = 2500;                     /* PSN 20..22 */
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 3);
	CU_ASSERT_EQUAL(ut_ntx, 3);
	/* The requester lost PSN 21 and asks for the rest from there. */
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 21, 0);
	p.reth.va = (uintptr_t)mem + 1 + 1024;
	p.reth.dmalen = 2500 - 1024;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(eq->resp.epsn, 23);            /* a duplicate: nothing new */
	CU_ASSERT_EQUAL(eq->resp.rd_tail, 1);          /* no new resource */
	CU_ASSERT_EQUAL(resp_step(eq, 32), 2);
	CU_ASSERT_EQUAL_FATAL(ut_ntx, 5);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST);
	CU_ASSERT_EQUAL(ut_tx[3].pkt.bth.psn, 21);
	CU_ASSERT_EQUAL(ut_tx[3].len, 1024);
	CU_ASSERT_EQUAL(memcmp(ut_tx[3].data, payload + 1 + 1024, 1024), 0);
	CU_ASSERT_EQUAL(ut_tx[4].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST);
	CU_ASSERT_EQUAL(ut_tx[4].pkt.bth.psn, 22);
	CU_ASSERT_EQUAL(ut_tx[4].len, 2500 - 2048);
	CU_ASSERT_EQUAL(memcmp(ut_tx[4].data, payload + 1 + 2048, 2500 - 2048), 0);
	/* The whole READ again: the same bytes as the first time. */
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 20, 0);
	p.reth.va = (uintptr_t)mem + 1;
	p.reth.dmalen = 2500;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 3);
	CU_ASSERT_EQUAL(ut_tx[5].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST);
	CU_ASSERT_EQUAL(memcmp(ut_tx[5].data, ut_tx[0].data, 1024), 0);
	CU_ASSERT_EQUAL(memcmp(ut_tx[6].data, ut_tx[1].data, 1024), 0);
	CU_ASSERT_EQUAL(memcmp(ut_tx[7].data, ut_tx[2].data, ut_tx[2].len), 0);
	/* A duplicate of a response still being sent restarts it. */
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 23, 0);
	p.reth.va = (uintptr_t)mem;
	p.reth.dmalen = 4096;                     /* PSN 23..26 */
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(resp_step(eq, 2), 2);     /* 23, 24 */
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(eq->resp.rtx_tail - eq->resp.rtx_head, 1);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 4);    /* 23 (FIRST) .. 26 */
	CU_ASSERT_EQUAL(ut_tx[10].pkt.bth.psn, 23);
	CU_ASSERT_EQUAL(ut_tx[10].pkt.bth.opcode, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST);
	CU_ASSERT_EQUAL(ut_tx[13].pkt.bth.psn, 26);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_RTS);

	/* max_dest_rd_atomic 2: a third READ before the first is answered
	 * is an invalid request; the QP goes to ERR. */
	eq = ut_setup_qp(0);
	ut_eq.path.max_dest_rd_atomic = 2;
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 0, 0);
	p.reth.va = (uintptr_t)mem;
	p.reth.dmalen = 8;
	rx(eq, &p, NULL);
	p.bth.psn = 1;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(eq->resp.rd_pending, 2);
	p.bth.psn = 2;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	CU_ASSERT_EQUAL(eq->resp.rd_tail, 2);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 3);    /* two responses, then the NAK */
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.opcode, DRNIC_WIRE_OP_RC_ACKNOWLEDGE);
	CU_ASSERT_EQUAL(ut_tx[2].pkt.aeth.syndrome,
			drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ));
	CU_ASSERT_EQUAL(ut_tx[2].pkt.bth.psn, 2);
}

/* Atomics: 16 executed (max_dest_rd_atomic 16), then every one of them
 * asked again, interleaved with READ duplicates: all answered from the
 * saved results, memory changed exactly once per atomic. */
static void
test_atomic_replay_window(void)
{
	struct engine_qp *eq = ut_setup_qp(100);
	struct drnic_wire_pkt p, rd;
	uint64_t v = 0, orig[16];
	unsigned int i, k;

	ut_eq.path.max_dest_rd_atomic = 16;
	memcpy(mem + 64, &v, 8);
	for (i = 0; i < 16; i++) {
		p = ut_req(DRNIC_WIRE_OP_RC_FETCH_ADD, 100 + i, 0);
		p.atomic.va = (uintptr_t)mem + 64;
		p.atomic.swap_add = 1u << i;
		rx(eq, &p, NULL);
		CU_ASSERT_EQUAL(resp_step(eq, 32), 1);
		orig[i] = ut_tx[ut_ntx - 1].pkt.atomic_orig;
		CU_ASSERT_EQUAL(orig[i], (1ull << i) - 1);
	}
	rd = ut_req(DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 116, 0);
	rd.reth.va = (uintptr_t)mem;
	rd.reth.dmalen = 8;
	rx(eq, &rd, NULL);                        /* a READ takes a resource */
	CU_ASSERT_EQUAL(resp_step(eq, 32), 1);
	for (k = 0; k < 3; k++)
		for (i = 0; i < 16; i++) {
			ut_ntx = 0;
			rx(eq, &rd, NULL);            /* READ duplicates */
			p = ut_req(DRNIC_WIRE_OP_RC_FETCH_ADD, 100 + i, 0);
			p.atomic.va = (uintptr_t)mem + 64;
			p.atomic.swap_add = 1u << i;
			rx(eq, &p, NULL);
			CU_ASSERT_EQUAL(resp_step(eq, 32), 2);
			CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.opcode,
					DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE);
			CU_ASSERT_EQUAL(ut_tx[1].pkt.bth.psn, 100 + i);
			CU_ASSERT_EQUAL(ut_tx[1].pkt.atomic_orig, orig[i]);
		}
	memcpy(&v, mem + 64, 8);
	CU_ASSERT_EQUAL(v, 0xFFFF);               /* each added once */
	CU_ASSERT_EQUAL(eq->resp.rd_tail, 17);
	CU_ASSERT_EQUAL(eq->resp.epsn, 117);
	/* A stale copy older than every resource: ignored, nothing given up. */
	ut_ntx = 0;
	rd.bth.psn = 90;
	rx(eq, &rd, NULL);
	p = ut_req(DRNIC_WIRE_OP_RC_FETCH_ADD, 99, 0);
	p.atomic.va = (uintptr_t)mem + 64;
	rx(eq, &p, NULL);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 0);
	CU_ASSERT_EQUAL(eq->resp.rd_tail, 17);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_RTS);
}

/*
 * WRITE continuations with a deferred ICRC: the expected one is copied and
 * verified in one pass, and advances the responder only when good; every
 * other outcome (a gap, a duplicate, a bad length, RNR) verifies first, so
 * a bad frame is a bad_icrc drop and nothing else: no NAK, no ACK, no state
 * change, no QP error.
 */
static void
test_write_deferred_icrc(void)
{
	struct engine_qp *eq = ut_setup_qp(10);
	struct drnic_wire_pkt p;

	ut_icrc_bad = false;
	ut_verifies = ut_copy_verifies = 0;
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 10, 1024);
	p.reth.va = (uintptr_t)mem + 16;
	p.reth.rkey = 0x100;
	p.reth.dmalen = 3072;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->resp.epsn, 11);
	/* The expected MIDDLE, bad: its bytes may land, nothing else moves. */
	p = ut_deferred(DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, 11, 1024);
	p.bth.ackreq = true;
	ut_icrc_bad = true;
	rx(eq, &p, payload + 1024);
	CU_ASSERT_EQUAL(ut_copy_verifies, 1);
	CU_ASSERT_EQUAL(eq->resp.epsn, 11);
	CU_ASSERT_EQUAL(eq->resp.wr_resid, 2048);
	CU_ASSERT_EQUAL(eq->resp.state, RESP_IN_WRITE);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(ut_eng.stats.wire_drops[DRNIC_WIRE_DROP_BAD_ICRC], 1);
	/* A bad one from beyond the gap: no NAK, no out-of-sequence count. */
	p.bth.psn = 12;
	rx(eq, &p, payload + 2048);
	CU_ASSERT_EQUAL(ut_verifies, 1);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_PSN_OOS], 0);
	CU_ASSERT_EQUAL(ut_eng.stats.wire_drops[DRNIC_WIRE_DROP_BAD_ICRC], 2);
	/* A bad duplicate: no ACK again. */
	p = ut_deferred(DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, 9, 1024);
	rx(eq, &p, payload);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_PSN_DUP], 0);
	CU_ASSERT_EQUAL(ut_eng.stats.wire_drops[DRNIC_WIRE_DROP_BAD_ICRC], 3);
	/* A bad LAST that would end the WRITE too early: no QP error. */
	p = ut_deferred(DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST, 11, 100);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_RTS);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(ut_eng.stats.wire_drops[DRNIC_WIRE_DROP_BAD_ICRC], 4);
	/* The retransmissions, good: the WRITE completes with the right bytes. */
	ut_icrc_bad = false;
	p = ut_deferred(DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, 11, 1024);
	rx(eq, &p, payload + 1024);
	CU_ASSERT_EQUAL(eq->resp.epsn, 12);
	p = ut_deferred(DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST, 12, 1024);
	rx(eq, &p, payload + 2048);
	CU_ASSERT_EQUAL(eq->resp.epsn, 13);
	CU_ASSERT_EQUAL(eq->resp.state, RESP_IDLE);
	CU_ASSERT_EQUAL(memcmp(mem + 16, payload, 3072), 0);
	CU_ASSERT_EQUAL(ut_copy_verifies, 3);
	ut_expect_ack(eq, ACK, 12);
	/* A good frame beyond a gap is verified, then NAKed as usual. */
	p = ut_deferred(DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, 20, 1024);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_PSN_OOS], 1);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR), 13);
}

/*
 * The checks run in the IBA's order, and the first that fails decides:
 * an operation the QP does not enable is an invalid request even when it
 * also lacks a receive WQE or names a bad key; a length error comes before
 * a key error; access is checked on every packet of a WRITE, not only its
 * first.
 */
static void
test_check_order(void)
{
	struct engine_qp *eq = ut_setup_qp(0);
	struct drnic_wire_pkt p;

	/* WRITE with immediate, no receive WQE, no remote write: not RNR. */
	ut_eq.path.access_flags = DRNIC_ACCESS_REMOTE_READ;
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0, 8);
	p.reth.va = (uintptr_t)mem;
	p.reth.rkey = 0x100;
	p.reth.dmalen = 8;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_RNR], 0);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	CU_ASSERT_EQUAL(ut_copies, 0);

	/* A WRITE ONLY whose payload is not its DMA length, with a bad key:
	 * the length decides (invalid request, not remote access). */
	eq = ut_setup_qp(0);
	ut_key_rc = -ENOENT;
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 0, 8);
	p.reth.va = (uintptr_t)mem;
	p.reth.rkey = 0x100;
	p.reth.dmalen = 16;
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 0);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	/* The same with the right length: the key decides. */
	eq = ut_setup_qp(0);
	ut_key_rc = -ENOENT;
	p.reth.dmalen = 8;
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_ACCESS), 0);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_ACCESS_ERR);
	CU_ASSERT_EQUAL(ut_copies, 0);

	/* Remote write taken away between a WRITE's FIRST and its LAST: the
	 * LAST is an invalid request and lands nowhere. */
	eq = ut_setup_qp(0);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 0, 1024);
	p.reth.va = (uintptr_t)mem;
	p.reth.rkey = 0x100;
	p.reth.dmalen = 2048;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->resp.state, RESP_IN_WRITE);
	ut_eq.path.access_flags = DRNIC_ACCESS_REMOTE_READ;
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST, 1, 1024);
	rx(eq, &p, payload + 1024);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 1);
	CU_ASSERT_EQUAL(ut_copies, 1);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
}

/*
 * A QP on an SRQ: a message takes the SRQ's oldest WQE when it starts (a
 * copy; the QP's own receive queue is not touched), an empty SRQ draws an
 * RNR NAK, a receive error completes the taken WQE, and entering ERR
 * flushes only the taken one, then raises QP_LAST_WQE_REACHED once.
 */
static void
test_srq(void)
{
	struct engine_qp *eq = ut_setup_qp(0);
	struct drnic_wire_pkt p;

	memset(&ut_srq, 0, sizeof(ut_srq));
	ut_srq.pd = ut_qp.pd;
	ut_qp.srq = &ut_srq;
	ut_srq_n = ut_srq_taken = 0;
	/* Empty: RNR, nothing taken. */
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 0, 100);
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_RNR_NAK, 3), 0);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	/* Two posted: a two-packet SEND takes the first, once. */
	ut_srq_post(501, (uintptr_t)mem, 4096);
	ut_srq_post(502, (uintptr_t)mem + 8192, 100);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_FIRST, 0, 1024);
	rx(eq, &p, payload);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_LAST, 1, 500);
	rx(eq, &p, payload + 1024);
	CU_ASSERT_EQUAL(ut_srq_taken, 1);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 501);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 1524);
	CU_ASSERT_EQUAL(memcmp(mem, payload, 1524), 0);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.rq.cons), 0);
	CU_ASSERT_EQUAL(eq->resp.rq_idx, 0);
	ut_expect_ack(eq, ACK, 1);
	/* Too long for the second: it completes with LOC_LEN_ERR. */
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 2, 200);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 502);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	/* The flush: nothing taken is left; the event, once. */
	ut_events = 0;
	CU_ASSERT_EQUAL(resp_flush(eq), 0);
	CU_ASSERT_EQUAL(ut_events, 1);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_LAST_WQE_REACHED);
	CU_ASSERT_EQUAL(resp_flush(eq), 0);
	CU_ASSERT_EQUAL(ut_events, 1);
	CU_ASSERT_EQUAL(ut_nwc, 2);

	/* A message cut by an error: its taken WQE is flushed, the rest of
	 * the SRQ stays for the other QPs. */
	eq = ut_setup_qp(0);
	ut_qp.srq = &ut_srq;
	ut_srq_n = ut_srq_taken = 0;
	ut_srq_post(601, (uintptr_t)mem, 4096);
	ut_srq_post(602, (uintptr_t)mem, 4096);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_FIRST, 0, 1024);
	rx(eq, &p, payload);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_MIDDLE, 1, 1000);   /* not a full MTU */
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	ut_events = 0;
	CU_ASSERT_EQUAL(resp_flush(eq), 1);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 601);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(ut_srq_taken, 1);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_LAST_WQE_REACHED);

	/* WRITE with immediate whose deferred ICRC is bad: the WQE it took
	 * waits for the retransmission, which completes it. */
	eq = ut_setup_qp(0);
	ut_qp.srq = &ut_srq;
	ut_srq_n = ut_srq_taken = 0;
	ut_srq_post(701, (uintptr_t)mem, 16);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 0, 1024);
	p.reth.va = (uintptr_t)mem + 64;
	p.reth.rkey = 0x100;
	p.reth.dmalen = 2048;
	rx(eq, &p, payload);
	p = ut_deferred(DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 1, 1024);
	p.imm = 0x55;
	ut_icrc_bad = true;
	rx(eq, &p, payload + 1024);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	CU_ASSERT_EQUAL(ut_srq_taken, 1);
	ut_icrc_bad = false;
	rx(eq, &p, payload + 1024);
	CU_ASSERT_EQUAL(ut_srq_taken, 1);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 701);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_RECV_RDMA_WITH_IMM);
	CU_ASSERT_EQUAL(ut_wc[0].imm_data, 0x55);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 2048);
	ut_qp.srq = NULL;
}

/*
 * An XRC target: each request names an XRC SRQ by number (XRCETH); it is
 * looked up in the device's table and must be of the target's XRC domain.
 * A SEND takes that SRQ's WQE and completes on that SRQ's CQ with qp_num
 * the target's and src_qp the initiator's; RDMA is checked against that
 * SRQ's PD; an empty one draws an RNR NAK. Another domain's SRQ, a number
 * with no SRQ, or a SEND continuing into another SRQ than it started in is
 * an invalid request. A WQE taken by a message cut off is flushed to its
 * SRQ's CQ, unless that SRQ is gone.
 */
static void
test_xrc(void)
{
	static _Atomic(struct drnic_srq *) tab[8];
	struct drnic_xrcd mine = { 0 }, theirs = { 0 };
	struct drnic_pd srq_pd = { 0 };
	struct drnic_srq twin, stranger;
	uint8_t cq_srq, cq_twin;
	struct drnic_wire_pkt p;
	struct engine_qp *eq;

	ut_dev.srq_tab = tab;
	ut_dev.srq_mask = RTE_DIM(tab) - 1;
	memset(&ut_srq, 0, sizeof(ut_srq));
	ut_srq.xrcd = &mine;
	ut_srq.srq_num = 5;
	ut_srq.pd = &srq_pd;
	ut_srq.cq = (struct drnic_cq *)&cq_srq;
	twin = ut_srq;                      /* the same domain, another SRQ */
	twin.srq_num = 7;
	twin.cq = (struct drnic_cq *)&cq_twin;
	stranger = ut_srq;
	stranger.srq_num = 6;
	stranger.xrcd = &theirs;
	atomic_store(&tab[5], &ut_srq);
	atomic_store(&tab[6], &stranger);
	atomic_store(&tab[7], &twin);

#define UT_XRC_QP(psn) do { \
		eq = ut_setup_qp(psn); \
		eq->xrc = true; \
		ut_qp.type = DRNIC_QPT_XRC_RECV; \
		ut_qp.xrcd = &mine; \
		ut_qp.recv_cq = NULL; \
		ut_srq_n = ut_srq_taken = 0; \
	} while (0)

	UT_XRC_QP(0);
	/* Empty SRQ: RNR NAK. */
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 0, 100);
	p.xrceth.srqn = 5;
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_RNR_NAK, 3), 0);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	/* Posted: the SEND lands in it and completes on its CQ. */
	ut_srq_post(801, (uintptr_t)mem, 4096);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_srq_taken, 1);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_PTR_EQUAL(ut_wc_cq[0], ut_srq.cq);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 801);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_RECV);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 100);
	CU_ASSERT_EQUAL(ut_wc[0].qp_num, 17);
	CU_ASSERT_EQUAL(ut_wc[0].src_qp, 33);
	CU_ASSERT_EQUAL(ut_wc[0].wc_flags, 0);
	CU_ASSERT_EQUAL(memcmp(mem, payload, 100), 0);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp.rq.cons), 0);
	ut_expect_ack(eq, ACK, 0);
	/* RDMA through it: the key is checked against its PD. */
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 1, 64);
	p.xrceth.srqn = 5;
	p.reth.va = (uintptr_t)mem + 1024;
	p.reth.rkey = 0x77;
	p.reth.dmalen = 64;
	ut_key_pd = NULL;
	rx(eq, &p, payload);
	CU_ASSERT_PTR_EQUAL(ut_key_pd, &srq_pd);
	CU_ASSERT_EQUAL(memcmp(mem + 1024, payload, 64), 0);
	ut_expect_ack(eq, ACK, 1);
	/* A SEND that started in SRQ 5 cannot go on in SRQ 7 (same domain):
	 * invalid request; the WQE it took is flushed to SRQ 5's CQ. */
	ut_srq_post(802, (uintptr_t)mem, 4096);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_FIRST, 2, 1024);
	p.xrceth.srqn = 5;
	rx(eq, &p, payload);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_LAST, 3, 10);
	p.xrceth.srqn = 7;
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 3);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(resp_flush(eq), 1);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_PTR_EQUAL(ut_wc_cq[1], ut_srq.cq);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 802);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(ut_wc[1].qp_num, 17);
	CU_ASSERT_EQUAL(resp_flush(eq), 0);      /* once */

	/* Another domain's SRQ: invalid request, nothing taken or written. */
	UT_XRC_QP(10);
	ut_srq_post(803, (uintptr_t)mem, 4096);
	memset(mem, 0, 200);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_ONLY, 10, 100);
	p.xrceth.srqn = 6;
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 10);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(ut_last_event, DRNIC_EVENT_QP_REQ_ERR);
	CU_ASSERT_EQUAL(ut_srq_taken, 0);
	CU_ASSERT_EQUAL(ut_nwc, 0);
	CU_ASSERT_EQUAL(mem[0], 0);
	CU_ASSERT_EQUAL(resp_flush(eq), 0);

	/* No SRQ of that number (and one that only matches modulo the
	 * table): invalid request. */
	UT_XRC_QP(20);
	p = ut_req(DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 20, 0);
	p.xrceth.srqn = 5 + RTE_DIM(tab);
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 20);
	CU_ASSERT_EQUAL(ut_srq_taken, 0);

	/* The SRQ is destroyed while a SEND that took its WQE is cut off:
	 * nothing is flushed to a CQ that may be gone. */
	UT_XRC_QP(30);
	ut_srq_post(804, (uintptr_t)mem, 4096);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_FIRST, 30, 1024);
	p.xrceth.srqn = 5;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_srq_taken, 1);
	atomic_store(&tab[5], NULL);
	p = ut_req(DRNIC_WIRE_OP_RC_SEND_LAST, 31, 10);
	p.xrceth.srqn = 5;
	rx(eq, &p, payload);
	ut_expect_ack(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_INVALID_REQ), 31);
	CU_ASSERT_EQUAL(resp_flush(eq), 0);
	CU_ASSERT_EQUAL(ut_nwc, 0);
#undef UT_XRC_QP
	ut_qp.type = DRNIC_QPT_RC;
	ut_qp.xrcd = NULL;
	ut_dev.srq_tab = NULL;
}

/*
 * UC: no ACK and no NAK ever. A gap drops the rest of that message, and
 * the next FIRST or ONLY starts a new one at its PSN, into the receive WQE
 * the dropped message was filling. A request the QP cannot take (a bad
 * key, no receive WQE) drops its message silently; the QP stays in RTS. A
 * SEND longer than its receive WQE completes it with LOC_LEN_ERR.
 */
static void
test_uc(void)
{
	struct engine_qp *eq = ut_setup_qp(10);
	struct drnic_sge rs = { (uintptr_t)mem, 4096, 1 };
	struct drnic_wire_pkt p;

	ut_qp.type = DRNIC_QPT_UC;
	eq->uc = true;
	ut_post_recv(41, &rs, 1);
	/* A whole SEND, AckReq set by a peer: completes, nothing owed. */
	p = ut_req(DRNIC_WIRE_OP_UC_SEND_FIRST, 10, 1024);
	p.bth.ackreq = true;
	rx(eq, &p, payload);
	p = ut_req(DRNIC_WIRE_OP_UC_SEND_LAST, 11, 100);
	p.bth.ackreq = true;
	rx(eq, &p, payload + 1024);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 41);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 1124);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	/* FIRST 12, MIDDLE 13 lost, LAST 14: the message is dropped. */
	ut_post_recv(42, &rs, 1);
	p = ut_req(DRNIC_WIRE_OP_UC_SEND_FIRST, 12, 1024);
	rx(eq, &p, payload);
	p = ut_req(DRNIC_WIRE_OP_UC_SEND_LAST, 14, 10);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_UC_MSG], 1);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	/* A MIDDLE while dropping: dropped too. */
	p = ut_req(DRNIC_WIRE_OP_UC_SEND_MIDDLE, 15, 1024);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_UC_MSG], 2);
	/* An ONLY at 20 starts over, into the WQE the dropped one had. */
	p = ut_req(DRNIC_WIRE_OP_UC_SEND_ONLY, 20, 64);
	rx(eq, &p, payload + 512);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 42);
	CU_ASSERT_EQUAL(ut_wc[1].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[1].byte_len, 64);
	CU_ASSERT_EQUAL(memcmp(mem, payload + 512, 64), 0);
	CU_ASSERT_EQUAL(eq->resp.epsn, 21);
	/* That ONLY again (a duplicate): not delivered twice. */
	rx(eq, &p, payload + 512);
	CU_ASSERT_EQUAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_PSN_DUP], 1);
	CU_ASSERT_EQUAL(eq->resp.epsn, 21);
	/* A WRITE with a bad key: dropped, no NAK, no error; the next lands. */
	ut_key_rc = -ENOENT;
	p = ut_req(DRNIC_WIRE_OP_UC_RDMA_WRITE_ONLY, 21, 16);
	p.reth.va = (uintptr_t)mem + 8192;
	p.reth.rkey = 0x100;
	p.reth.dmalen = 16;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_UC_MSG], 3);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_RTS);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(mem[8192], 0);
	ut_key_rc = 0;
	p.bth.psn = 22;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(memcmp(mem + 8192, payload, 16), 0);
	CU_ASSERT_EQUAL(eq->resp.epsn, 23);
	/* No receive WQE: dropped, no RNR NAK. */
	p = ut_req(DRNIC_WIRE_OP_UC_SEND_ONLY, 23, 8);
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_UC_MSG], 4);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_RNR], 0);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	/* Longer than the receive WQE: LOC_LEN_ERR, the QP to ERR, no NAK. */
	rs.length = 16;
	ut_post_recv(43, &rs, 1);
	p.bth.psn = 24;
	p.payload_len = 32;
	rx(eq, &p, payload);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 3);
	CU_ASSERT_EQUAL(ut_wc[2].wr_id, 43);
	CU_ASSERT_EQUAL(ut_wc[2].status, DRNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	ut_qp.type = DRNIC_QPT_RC;
}

/* Every check and outcome has a name for the logs, each its own. */
static void
test_check_names(void)
{
	ut_check_name_table(resp_check_names, RESP_CHECK_MAX);
}

/* Every state has a name for the logs, each its own. */
static void
test_state_names(void)
{
	ut_check_name_table(resp_state_names, RESP_STATE_MAX);
}

/* UD: a datagram with the QP's Q_Key lands after the 40-byte GRH area (its
 * IPv4 header in the last 20 bytes), completes with src_qp and GRH, and is
 * never answered; a wrong Q_Key, no receive WQE or a payload over the MTU
 * drops it and counts why; a buffer too short for GRH and payload fails the
 * receive (LOC_LEN_ERR) and the QP (ERR), without a NAK. */
static void
test_ud(void)
{
	struct engine_qp *eq = ut_setup_qp(0);
	struct drnic_sge rs = { (uintptr_t)mem, 4096, 1 };
	static uint8_t frame[2048];
	struct drnic_wire_pkt p;
	unsigned int i;

	static struct resp_ud_src src[ENGINE_UD_SRC];

	ut_qp.type = DRNIC_QPT_UD;
	eq->ud = true;
	eq->path.qkey = 0x42;
	memset(src, 0, sizeof(src));
	eq->resp.ud_src = src;
	for (i = 0; i < 20; i++)
		frame[i] = (uint8_t)(0x45 + i);     /* "the IPv4 header" */
	memcpy(frame + 64, payload, 1024);
	p = ut_req(DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 999, 100);
	p.ip.version = 4;
	p.l3_off = 0;
	p.payload_off = 64;
	p.deth.qkey = 0x42;
	p.deth.sqpn = 77;
	p.imm = 0x01020304;
	ut_post_recv(51, &rs, 1);
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(ut_wc[0].wr_id, 51);
	CU_ASSERT_EQUAL(ut_wc[0].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[0].opcode, DRNIC_WC_RECV);
	CU_ASSERT_EQUAL(ut_wc[0].byte_len, 140);
	CU_ASSERT_EQUAL(ut_wc[0].qp_num, 17);
	CU_ASSERT_EQUAL(ut_wc[0].src_qp, 77);
	CU_ASSERT_EQUAL(ut_wc[0].wc_flags, DRNIC_WC_GRH | DRNIC_WC_WITH_IMM);
	CU_ASSERT_EQUAL(ut_wc[0].sl, DRNIC_WC_SL_ROCE_V2_IPV4);
	CU_ASSERT_EQUAL(ut_wc[0].pkey_index, 0);
	CU_ASSERT_EQUAL(ut_wc[0].imm_data, 0x01020304);
	for (i = 0; i < 20; i++)
		CU_ASSERT_EQUAL(mem[i], 0);
	CU_ASSERT_EQUAL(memcmp(mem + 20, frame, 20), 0);
	CU_ASSERT_EQUAL(memcmp(mem + 40, payload, 100), 0);
	CU_ASSERT_EQUAL(mem[140], 0);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	CU_ASSERT_EQUAL(resp_step(eq, 32), 0);
	CU_ASSERT_EQUAL(ut_ntx, 0);
	/* The same datagram again (a copy the network made): dropped; the
	 * next PSN, or one reordered before it, is taken once. */
	ut_post_recv(52, &rs, 1);
	p.bth.opcode = DRNIC_WIRE_OP_UD_SEND_ONLY;
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL(ut_nwc, 1);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_PSN_DUP], 1);
	p.bth.psn = 1001;
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 2);
	CU_ASSERT_EQUAL(ut_wc[1].wr_id, 52);
	CU_ASSERT_EQUAL(ut_wc[1].wc_flags, DRNIC_WC_GRH);
	ut_post_recv(55, &rs, 1);
	p.bth.psn = 1000;                   /* overtaken on the way: new */
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 3);
	CU_ASSERT_EQUAL(ut_wc[2].wr_id, 55);
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);   /* and its copy */
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_PSN_DUP], 2);
	/* Another sender (QP 78) with the same PSN: its own datagram. */
	ut_post_recv(56, &rs, 1);
	p.deth.sqpn = 78;
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 4);
	CU_ASSERT_EQUAL(ut_wc[3].src_qp, 78);
	p.deth.sqpn = 77;
	p.bth.psn = 1002;
	/* Wrong Q_Key: dropped, counted on the QP and the port. */
	p.deth.qkey = 0x43;
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_BAD_QKEY], 1);
	CU_ASSERT_EQUAL(atomic_load(&ut_dev.qkey_viol), 1);
	/* No receive WQE: lost, counted. */
	p.deth.qkey = 0x42;
	p.bth.psn++;
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_UD_NO_WQE], 1);
	CU_ASSERT_EQUAL(ut_nwc, 4);
	/* Over the MTU: no datagram is; dropped before a WQE is taken. */
	ut_post_recv(53, &rs, 1);
	p.payload_len = 1025;
	p.bth.psn++;
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_UD_LEN], 1);
	CU_ASSERT_EQUAL(ut_nwc, 4);
	/* A buffer of 40 + 99 bytes for 100: LOC_LEN_ERR, QP to ERR, no NAK. */
	p.payload_len = 100;
	rs.length = 139;
	p.bth.psn++;
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);   /* takes WQE 53 (4096) */
	ut_post_recv(54, &rs, 1);
	p.bth.psn++;
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL_FATAL(ut_nwc, 6);
	CU_ASSERT_EQUAL(ut_wc[4].wr_id, 53);
	CU_ASSERT_EQUAL(ut_wc[4].status, DRNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(ut_wc[5].wr_id, 54);
	CU_ASSERT_EQUAL(ut_wc[5].status, DRNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp), DRNIC_QPS_ERR);
	CU_ASSERT_FALSE(eq->resp.ack_pending);
	(void)resp_step(eq, 32);
	CU_ASSERT_EQUAL(ut_ntx, 0);
	/* In ERR: dropped for the state. */
	resp_ud_rx(eq, (struct rte_mbuf *)(uintptr_t)frame, &p);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_QP_STATE], 1);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("responder", NULL, NULL);
	CU_ADD_TEST(s, test_state_names);
	CU_ADD_TEST(s, test_check_names);
	CU_ADD_TEST(s, test_check_order);
	CU_ADD_TEST(s, test_srq);
	CU_ADD_TEST(s, test_uc);
	CU_ADD_TEST(s, test_ud);
	CU_ADD_TEST(s, test_xrc);
	CU_ADD_TEST(s, test_send);
	CU_ADD_TEST(s, test_send_inv);
	CU_ADD_TEST(s, test_psn_and_sequence);
	CU_ADD_TEST(s, test_recv_errors);
	CU_ADD_TEST(s, test_write);
	CU_ADD_TEST(s, test_read);
	CU_ADD_TEST(s, test_atomic);
	CU_ADD_TEST(s, test_atomic_write);
	CU_ADD_TEST(s, test_iova);
	CU_ADD_TEST(s, test_read_replay);
	CU_ADD_TEST(s, test_atomic_replay_window);
	CU_ADD_TEST(s, test_write_deferred_icrc);
	CU_ADD_TEST(s, test_repeated_nak_limit);
	return ut_run_all();
}
