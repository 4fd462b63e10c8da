/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester and the completer together (both real), driven step by
 * step on the fake clock with the fake link of ut_engine_stubs.h: what
 * one side's state does to the other's across go-backs and ACKs.
 */
/* verbs_mr_key_live() answers what the test says (ut_engine_stubs.h). */
#define VERBS_MR_KEY_LIVE_STUB
#include "lib/engine/requester.c"
#include "lib/engine/completer.c"
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

static struct drnic_wire_pkt
ut_ack(uint32_t psn)
{
	struct drnic_wire_pkt p;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = DRNIC_WIRE_OP_RC_ACKNOWLEDGE;
	p.bth.psn = psn;
	p.aeth.syndrome = drnic_aeth_syndrome(DRNIC_AETH_ACK, 31);
	return p;
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

static uint8_t src[16384];

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
	comp_timeout(eq);
	CU_ASSERT_EQUAL(eq->req.npsn, 100);
	CU_ASSERT_EQUAL(req_step(eq, 2), 2);       /* 100, 101 resent */
	CU_ASSERT_EQUAL(ut_sent_since(&mark, &first), 2);
	CU_ASSERT_EQUAL(first, 100);
	/* The late ACK of the whole WRITE (the first pass's last packet). */
	p = ut_ack(107);
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
	comp_timeout(eq);
	CU_ASSERT_EQUAL(req_step(eq, 1), 1);
	CU_ASSERT_EQUAL(ut_sent_since(&mark, &first), 1);
	CU_ASSERT_EQUAL(first, 0xFFFFFE);
	/* The responder has A up to PSN 0 (its third packet). */
	p = ut_ack(0);
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
	p = ut_ack(3);
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
	comp_timeout(eq);
	CU_ASSERT_EQUAL(eq->req.npsn, 10);                 /* from the READ */
	/* ACK 12 (the WRITE's) arrives first, before anything is resent: it
	 * is believed (what was sent before the go-back is outstanding), and
	 * the READ's response is still owed. */
	p = ut_ack(12);
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
	s = CU_add_suite("transport", NULL, NULL);
	CU_ADD_TEST(s, test_ack_during_resend);
	CU_ADD_TEST(s, test_ack_mid_resend);
	CU_ADD_TEST(s, test_skip_stops_at_read);
	return ut_run_all();
}
