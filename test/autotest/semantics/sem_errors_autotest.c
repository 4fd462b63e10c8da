/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error completions (issue 3; seed 000 §3.4.3: "强制检查status，并打印详细的
 * wr_id和qp_num"): each case on a fresh connected QP pair, every completion
 * checked for its exact status, wr_id and qp_num, and every remote target
 * checked byte by byte to be untouched when access is refused.
 *
 * Statuses per the InfiniBand Architecture spec (Vol. 1), as libibverbs
 * reports them (ibv_poll_cq(3) / ibv_wc_status_str):
 *  - receive buffer too small for a SEND: the responder completes its receive
 *    WQE with Local Length Error, NAKs with "Invalid Request" and goes to ERR
 *    (IBA §9.9.3 responder errors, class "length error"); the requester turns
 *    NAK-Invalid Request into Remote Invalid Request Error (IBA §9.9.2 and
 *    §11.6.2 completion status) and goes to ERR;
 *  - a local key that is invalid (stale after deregistration), an SGE outside
 *    its MR, a local MR without LOCAL_WRITE as RDMA READ sink: Local
 *    Protection Error on the requester, nothing sent (IBA §10.6.3 memory
 *    access checks, §11.6.2);
 *  - a bad rkey, an access beyond the MR, an MR without REMOTE_WRITE /
 *    REMOTE_READ: the responder NAKs "Remote Access Error" (IBA §9.7.5.2.4,
 *    §9.7.4.1.5 R_Key checks) and touches no memory; the requester reports
 *    Remote Access Error;
 *  - an RDMA WRITE (READ) to a QP whose qp_access_flags lack REMOTE_WRITE
 *    (REMOTE_READ), the MR allowing it: the operation is not enabled on the
 *    responder QP, which is an invalid request, not an R_Key violation:
 *    NAK-Invalid Request, Remote Invalid Request Error at the requester
 *    (ibv_poll_cq(3) on IBV_WC_REM_INV_REQ_ERR: "qp_access_flags in remote
 *    QP wasn't configured to support this operation"; Linux rxe and the
 *    rdmavt drivers answer it the same way); no memory touched;
 *  - an RDMA READ on a QP whose max_rd_atomic (initiator depth) is 0: the QP
 *    cannot carry the operation: Local QP Operation Error (the one way the
 *    public API can produce LOC_QP_OP_ERR);
 *  - everything outstanding on a QP in ERR, and everything posted to it
 *    afterwards, completes with Work Request Flushed Error, in order
 *    (IBA §10.3.1 / drnic_modify_qp()).
 */
#include <errno.h>
#include <string.h>

#include "sem_common.h"

#define ER_BUF 8192u
#define ER_MR 4096u          /* target MRs cover the first half; the rest is a guard */
#define ER_FILL 0x5A

struct er_state {
	struct drnic_cq *scq, *ccq;
	struct drnic_mr *smr;        /* client source/sink, LOCAL_WRITE */
	uint8_t *sbuf;
	struct drnic_mr *rmr;        /* server receive buffers */
	uint8_t *rbuf;
	struct drnic_mr *tmr;        /* server target: LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ */
	uint8_t *tbuf;
	uint32_t psn;
};

static int
er_pair(struct sem_ctx *c, struct er_state *s, unsigned int srv_access, int cli_rd_atomic,
	struct drnic_qp **sqp, struct drnic_qp **cqp)
{
	const unsigned int all = DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
				 DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC;
	uint32_t ps = s->psn, pc = s->psn + 0x1000;

	s->psn += 0x20000;
	*sqp = sem_qp(c, SEM_SRV, s->scq, s->scq, 16, 16, 1);
	*cqp = sem_qp(c, SEM_CLI, s->ccq, s->ccq, 16, 16, 1);
	if (*sqp == NULL || *cqp == NULL)
		return -1;
	if (sem_qp_init(*sqp, srv_access) != 0 || sem_qp_init(*cqp, all) != 0 ||
	    sem_qp_rtr(c, *sqp, SEM_CLI, drnic_qp_num(*cqp), pc) != 0 ||
	    sem_qp_rtr(c, *cqp, SEM_SRV, drnic_qp_num(*sqp), ps) != 0 ||
	    sem_qp_rts(c, *sqp, ps, c->max_rd_atomic) != 0 ||
	    sem_qp_rts(c, *cqp, pc, cli_rd_atomic) != 0)
		return -1;
	return 0;
}

/* Take exactly one completion and check it. */
static int
er_expect(struct sem_ctx *c, struct drnic_cq *cq, uint64_t wr_id, enum drnic_wc_status st,
	  int opcode, uint32_t qpn, const char *what)
{
	struct drnic_wc wc;
	int n = sem_poll_n(c, cq, &wc, 1, 5000);

	if (n != 1) {
		printf("%s: no completion within 5 s (expected wr_id %llu %s on qp %u)\n", what,
		       (unsigned long long)wr_id, drnic_wc_status_str(st), qpn);
		return TEST_FAILED;
	}
	if (wc.wr_id != wr_id || wc.status != st || wc.qp_num != qpn ||
	    (opcode >= 0 && (int)wc.opcode != opcode)) {
		printf("%s: expected wr_id %llu status %s opcode %d qp_num %u\n", what,
		       (unsigned long long)wr_id, drnic_wc_status_str(st), opcode, qpn);
		sem_print_wc("got", &wc);
		return TEST_FAILED;
	}
	return TEST_SUCCESS;
}

static int
er_quiet(struct sem_ctx *c, struct drnic_cq *cq, const char *what)
{
	struct drnic_wc wc[4];
	int n = sem_poll_quiet(c, cq, wc, 4, 20), i;

	for (i = 0; i < n; i++)
		sem_print_wc("unexpected", &wc[i]);
	TEST_ASSERT_EQUAL(n, 0, "%s: extra completions", what);
	return TEST_SUCCESS;
}

#define ER_CHECK(expr) do { if ((expr) != TEST_SUCCESS) return TEST_FAILED; } while (0)

static int
er_post_write(struct drnic_qp *qp, uint64_t wr_id, enum drnic_wr_opcode op, void *laddr,
	      uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	return sem_post_send(qp, wr_id, op, laddr, len, lkey, DRNIC_SEND_SIGNALED, raddr, rkey);
}

/* 1. LOC_LEN_ERR at the receiver, REM_INV_REQ_ERR at the sender, flushes. */
static int
er_loc_len(struct sem_ctx *c, struct er_state *s)
{
	struct drnic_qp *sqp, *cqp;
	uint32_t sqpn, cqpn;

	TEST_ASSERT_SUCCESS(er_pair(c, s, DRNIC_ACCESS_LOCAL_WRITE, c->max_rd_atomic, &sqp, &cqp),
			    "pair");
	sqpn = drnic_qp_num(sqp);
	cqpn = drnic_qp_num(cqp);
	TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 501, s->rbuf, 64, drnic_mr_lkey(s->rmr)), "recv");
	TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 502, s->rbuf + 1024, 1024, drnic_mr_lkey(s->rmr)),
			    "recv");
	TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 503, s->rbuf + 2048, 1024, drnic_mr_lkey(s->rmr)),
			    "recv");
	sem_fill(s->sbuf, 256, 9);
	TEST_ASSERT_SUCCESS(sem_post_send(cqp, 601, DRNIC_WR_SEND, s->sbuf, 256,
					  drnic_mr_lkey(s->smr), 0, 0, 0), "send 256 B");
	TEST_ASSERT_SUCCESS(sem_post_send(cqp, 602, DRNIC_WR_SEND, s->sbuf, 16,
					  drnic_mr_lkey(s->smr), 0, 0, 0), "send 16 B");
	ER_CHECK(er_expect(c, s->scq, 501, DRNIC_WC_LOC_LEN_ERR, -1, sqpn,
			   "receiver: 256 B SEND into a 64 B receive"));
	ER_CHECK(er_expect(c, s->scq, 502, DRNIC_WC_WR_FLUSH_ERR, -1, sqpn,
			   "receiver: next receive flushed"));
	ER_CHECK(er_expect(c, s->scq, 503, DRNIC_WC_WR_FLUSH_ERR, -1, sqpn,
			   "receiver: last receive flushed"));
	ER_CHECK(er_expect(c, s->ccq, 601, DRNIC_WC_REM_INV_REQ_ERR, -1, cqpn,
			   "sender of the too-long SEND (NAK-Invalid Request)"));
	ER_CHECK(er_expect(c, s->ccq, 602, DRNIC_WC_WR_FLUSH_ERR, -1, cqpn,
			   "sender: the SEND after it flushed"));
	TEST_ASSERT_SUCCESS(sem_wait_qp_state(c, sqp, DRNIC_QPS_ERR, 1000), "receiver QP in ERR (%s)",
			    drnic_qp_state_str(drnic_qp_state(sqp)));
	TEST_ASSERT_SUCCESS(sem_wait_qp_state(c, cqp, DRNIC_QPS_ERR, 1000), "sender QP in ERR (%s)",
			    drnic_qp_state_str(drnic_qp_state(cqp)));
	ER_CHECK(er_quiet(c, s->scq, "LOC_LEN receiver"));
	ER_CHECK(er_quiet(c, s->ccq, "LOC_LEN sender"));
	return TEST_SUCCESS;
}

/* 2. LOC_PROT_ERR: stale lkey, SGE beyond the MR, READ into a read-only MR. */
static int
er_loc_prot(struct sem_ctx *c, struct er_state *s)
{
	struct drnic_qp *sqp, *cqp;
	struct drnic_mr *mr;
	uint32_t cqpn, stale;
	void *b;
	int k;

	for (k = 0; k < 3; k++) {
		const char *what[] = { "SEND with the lkey of a deregistered MR",
				       "SEND with an SGE reaching past its MR",
				       "RDMA READ into an MR without LOCAL_WRITE" };
		uint8_t *ro = NULL;

		TEST_ASSERT_SUCCESS(er_pair(c, s, DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_READ |
						  DRNIC_ACCESS_REMOTE_WRITE, c->max_rd_atomic,
					    &sqp, &cqp), "pair");
		cqpn = drnic_qp_num(cqp);
		TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 510, s->rbuf, 1024, drnic_mr_lkey(s->rmr)),
				    "recv");
		if (k == 0) {
			b = drnic_alloc(256, 0, SOCKET_ID_ANY);
			TEST_ASSERT(b != NULL, "alloc");
			mr = drnic_reg_mr(c->pd[SEM_CLI], b, 256, DRNIC_ACCESS_LOCAL_WRITE);
			TEST_ASSERT(mr != NULL, "reg_mr");
			stale = drnic_mr_lkey(mr);
			TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg_mr");
			TEST_ASSERT_SUCCESS(sem_post_send(cqp, 611, DRNIC_WR_SEND, b, 64, stale, 0, 0,
							  0), "post with a stale lkey (checked at "
					    "execution, drnic_post_send())");
			ER_CHECK(er_expect(c, s->ccq, 611, DRNIC_WC_LOC_PROT_ERR, -1, cqpn, what[k]));
			drnic_free(b);
		} else if (k == 1) {
			TEST_ASSERT_SUCCESS(sem_post_send(cqp, 612, DRNIC_WR_SEND,
							  s->sbuf + ER_MR - 16, 64,
							  drnic_mr_lkey(s->smr), 0, 0, 0),
					    "post an SGE crossing the MR's end");
			ER_CHECK(er_expect(c, s->ccq, 612, DRNIC_WC_LOC_PROT_ERR, -1, cqpn, what[k]));
		} else {
			mr = sem_mr(c, SEM_CLI, 1024, 0, &b);
			TEST_ASSERT(mr != NULL, "read-only local MR");
			ro = b;
			memset(ro, 0x11, 1024);
			memset(s->tbuf, 0x77, ER_MR);
			TEST_ASSERT_SUCCESS(er_post_write(cqp, 613, DRNIC_WR_RDMA_READ, ro, 512,
							  drnic_mr_lkey(mr), (uintptr_t)s->tbuf,
							  drnic_mr_rkey(s->tmr)), "post READ");
			ER_CHECK(er_expect(c, s->ccq, 613, DRNIC_WC_LOC_PROT_ERR, -1, cqpn, what[k]));
			TEST_ASSERT_EQUAL(sem_check_byte(ro, 1024, 0x11), -1,
					  "READ sink without LOCAL_WRITE modified (first offset)");
		}
		/* The next WR of the same QP is flushed; the server got nothing. */
		TEST_ASSERT_SUCCESS(sem_post_send(cqp, 620 + (uint64_t)k, DRNIC_WR_SEND, s->sbuf, 8,
						  drnic_mr_lkey(s->smr), 0, 0, 0), "post after");
		ER_CHECK(er_expect(c, s->ccq, 620 + (uint64_t)k, DRNIC_WC_WR_FLUSH_ERR, -1, cqpn,
				   "the send after a LOC_PROT_ERR"));
		TEST_ASSERT_EQUAL(drnic_qp_state(cqp), DRNIC_QPS_ERR, "requester QP in ERR after %s",
				  what[k]);
		ER_CHECK(er_quiet(c, s->scq, "server after a local protection error"));
		ER_CHECK(er_quiet(c, s->ccq, "client after a local protection error"));
	}
	return TEST_SUCCESS;
}

/* 3. REM_ACCESS_ERR: bad rkey, out of bounds, MR without remote access. */
static int
er_rem_access(struct sem_ctx *c, struct er_state *s)
{
	struct drnic_qp *sqp, *cqp;
	struct drnic_mr *nowr, *nord;
	uint8_t *nowr_buf, *nord_buf;
	uint32_t cqpn;
	int k;

	nowr = sem_mr(c, SEM_SRV, ER_BUF, DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_READ,
		      (void **)&nowr_buf);
	nord = sem_mr(c, SEM_SRV, ER_BUF, DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE,
		      (void **)&nord_buf);
	TEST_ASSERT(nowr != NULL && nord != NULL, "MRs");
	for (k = 0; k < 5; k++) {
		const char *what[] = {
			"RDMA WRITE with a bad rkey (wrong generation)",
			"RDMA WRITE reaching past the MR (4 packets, the end out of bounds)",
			"RDMA WRITE to an MR without REMOTE_WRITE",
			"RDMA READ with a bad rkey",
			"RDMA READ from an MR without REMOTE_READ",
		};
		uint8_t *target = k == 2 ? nowr_buf : k == 4 ? nord_buf : s->tbuf;
		uint64_t raddr = (uintptr_t)target;
		uint32_t rkey = drnic_mr_rkey(k == 2 ? nowr : k == 4 ? nord : s->tmr);
		uint32_t len = 512;
		bool is_read = k >= 3;

		if (k == 0 || k == 3)
			rkey ^= 0x5A;           /* same slot, another generation */
		if (k == 1) {
			raddr += 1024;          /* 1024 + 3200 > 4096 */
			len = 3200;
		}
		memset(target, ER_FILL, ER_BUF);
		memset(s->sbuf, 0x33, ER_BUF);
		TEST_ASSERT_SUCCESS(er_pair(c, s, DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_READ |
						  DRNIC_ACCESS_REMOTE_WRITE, c->max_rd_atomic,
					    &sqp, &cqp), "pair");
		cqpn = drnic_qp_num(cqp);
		if (!is_read)
			sem_fill(s->sbuf, len, 40 + (uint32_t)k);
		TEST_ASSERT_SUCCESS(er_post_write(cqp, 630 + (uint64_t)k,
						  is_read ? DRNIC_WR_RDMA_READ : DRNIC_WR_RDMA_WRITE,
						  s->sbuf, len, drnic_mr_lkey(s->smr), raddr, rkey),
				    "post");
		TEST_ASSERT_SUCCESS(sem_post_send(cqp, 640 + (uint64_t)k, DRNIC_WR_SEND, s->sbuf, 8,
						  drnic_mr_lkey(s->smr), 0, 0, 0), "post after");
		ER_CHECK(er_expect(c, s->ccq, 630 + (uint64_t)k, DRNIC_WC_REM_ACCESS_ERR, -1, cqpn,
				   what[k]));
		ER_CHECK(er_expect(c, s->ccq, 640 + (uint64_t)k, DRNIC_WC_WR_FLUSH_ERR, -1, cqpn,
				   "the send after a REM_ACCESS_ERR"));
		TEST_ASSERT_EQUAL(sem_check_byte(target, ER_BUF, ER_FILL), -1,
				  "%s: target memory modified (first changed offset)", what[k]);
		if (is_read)
			TEST_ASSERT_EQUAL(sem_check_byte(s->sbuf, ER_BUF, 0x33), -1,
					  "%s: local READ sink modified (first changed offset)",
					  what[k]);
		TEST_ASSERT_SUCCESS(sem_wait_qp_state(c, cqp, DRNIC_QPS_ERR, 1000),
				    "requester QP in ERR after %s", what[k]);
		ER_CHECK(er_quiet(c, s->ccq, "client after a remote access error"));
		ER_CHECK(er_quiet(c, s->scq, "server after a remote access error"));
	}
	return TEST_SUCCESS;
}

/* 4. REM_INV_REQ_ERR: RDMA WRITE / READ to a QP without REMOTE_WRITE /
 * REMOTE_READ in its qp_access_flags (the MR would allow it). */
static int
er_rem_inv_req(struct sem_ctx *c, struct er_state *s)
{
	struct drnic_qp *sqp, *cqp;
	uint32_t cqpn;
	int k, rc = TEST_SUCCESS;

	for (k = 0; k < 2; k++) {
		const char *what[] = {
			"RDMA WRITE to a QP without REMOTE_WRITE in qp_access_flags",
			"RDMA READ from a QP without REMOTE_READ in qp_access_flags",
		};
		bool is_read = k == 1;

		memset(s->tbuf, ER_FILL, ER_BUF);
		memset(s->sbuf, 0x33, ER_BUF);
		TEST_ASSERT_SUCCESS(er_pair(c, s, DRNIC_ACCESS_LOCAL_WRITE |
					    (is_read ? DRNIC_ACCESS_REMOTE_WRITE :
						       DRNIC_ACCESS_REMOTE_READ),
					    c->max_rd_atomic, &sqp, &cqp), "pair");
		cqpn = drnic_qp_num(cqp);
		if (!is_read)
			sem_fill(s->sbuf, 256, 77);
		TEST_ASSERT_SUCCESS(er_post_write(cqp, 650 + (uint64_t)k,
						  is_read ? DRNIC_WR_RDMA_READ : DRNIC_WR_RDMA_WRITE,
						  s->sbuf, 256, drnic_mr_lkey(s->smr),
						  (uintptr_t)s->tbuf, drnic_mr_rkey(s->tmr)), "post");
		if (er_expect(c, s->ccq, 650 + (uint64_t)k, DRNIC_WC_REM_INV_REQ_ERR, -1, cqpn,
			      what[k]) != TEST_SUCCESS)
			rc = TEST_FAILED;  /* go on: the memory checks matter too */
		TEST_ASSERT_EQUAL(sem_check_byte(s->tbuf, ER_BUF, ER_FILL), -1,
				  "%s: target memory modified (first changed offset)", what[k]);
		if (is_read)
			TEST_ASSERT_EQUAL(sem_check_byte(s->sbuf, ER_BUF, 0x33), -1,
					  "%s: local sink modified (first changed offset)", what[k]);
		TEST_ASSERT_SUCCESS(sem_wait_qp_state(c, cqp, DRNIC_QPS_ERR, 1000),
				    "requester in ERR");
		ER_CHECK(er_quiet(c, s->ccq, "client after REM_INV_REQ"));
		ER_CHECK(er_quiet(c, s->scq, "server after REM_INV_REQ"));
	}
	return rc;
}

/* 5. LOC_QP_OP_ERR: RDMA READ on a QP with max_rd_atomic 0. */
static int
er_loc_qp_op(struct sem_ctx *c, struct er_state *s)
{
	struct drnic_qp *sqp, *cqp;
	uint32_t cqpn;

	memset(s->sbuf, 0x33, ER_BUF);
	TEST_ASSERT_SUCCESS(er_pair(c, s, DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_READ, 0,
				    &sqp, &cqp), "pair with client max_rd_atomic 0");
	cqpn = drnic_qp_num(cqp);
	TEST_ASSERT_SUCCESS(er_post_write(cqp, 660, DRNIC_WR_RDMA_READ, s->sbuf, 256,
					  drnic_mr_lkey(s->smr), (uintptr_t)s->tbuf,
					  drnic_mr_rkey(s->tmr)), "post READ");
	ER_CHECK(er_expect(c, s->ccq, 660, DRNIC_WC_LOC_QP_OP_ERR, -1, cqpn,
			   "RDMA READ on a QP with max_rd_atomic 0"));
	TEST_ASSERT_EQUAL(sem_check_byte(s->sbuf, ER_BUF, 0x33), -1, "READ sink modified");
	ER_CHECK(er_quiet(c, s->ccq, "client after LOC_QP_OP"));
	return TEST_SUCCESS;
}

/* 6. WR_FLUSH_ERR for everything outstanding once a QP is in ERR. */
static int
er_flush(struct sem_ctx *c, struct er_state *s)
{
	struct drnic_qp *sqp, *cqp;
	struct drnic_qp_attr a;
	struct drnic_wc wc[16];
	uint32_t sqpn, cqpn, i;
	int n;

	TEST_ASSERT_SUCCESS(er_pair(c, s, DRNIC_ACCESS_LOCAL_WRITE, c->max_rd_atomic, &sqp, &cqp),
			    "pair");
	sqpn = drnic_qp_num(sqp);
	cqpn = drnic_qp_num(cqp);

	/* Client sends outstanding: the server has no receive (RNR, retried
	 * for ever with rnr_retry 7), so none can complete. */
	for (i = 0; i < 4; i++)
		TEST_ASSERT_SUCCESS(sem_post_send(cqp, 801 + i, DRNIC_WR_SEND, s->sbuf, 32,
						  drnic_mr_lkey(s->smr), 0, 0, 0), "send");
	n = sem_poll_quiet(c, s->ccq, wc, 8, 30);
	TEST_ASSERT_EQUAL(n, 0, "sends completed although the receiver has no receive (RNR)");

	/* Receives outstanding on a QP that we move to ERR. */
	for (i = 0; i < 5; i++)
		TEST_ASSERT_SUCCESS(sem_post_recv(cqp, 701 + i, s->sbuf + 1024 + i * 64, 64,
						  drnic_mr_lkey(s->smr)), "recv");
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_ERR;
	TEST_ASSERT_SUCCESS(drnic_modify_qp(cqp, &a, DRNIC_QP_STATE), "client QP to ERR");
	TEST_ASSERT_EQUAL(drnic_qp_state(cqp), DRNIC_QPS_ERR, "state after modify");

	/* 4 sends and 5 receives flushed, each queue in order. */
	n = sem_poll_n(c, s->ccq, wc, 9, 5000);
	TEST_ASSERT_EQUAL(n, 9, "flushed completions within 5 s");
	{
		uint32_t ns = 0, nr = 0;

		for (i = 0; i < 9; i++) {
			if (wc[i].wr_id >= 801 && wc[i].wr_id <= 804) {
				SEM_ASSERT_WC(&wc[i], 801 + ns, DRNIC_WC_WR_FLUSH_ERR, -1, cqpn);
				ns++;
			} else {
				SEM_ASSERT_WC(&wc[i], 701 + nr, DRNIC_WC_WR_FLUSH_ERR, -1, cqpn);
				nr++;
			}
		}
		TEST_ASSERT(ns == 4 && nr == 5, "4 sends and 5 receives flushed (%u, %u)", ns, nr);
	}
	/* WRs posted in ERR complete with WR_FLUSH_ERR too. */
	TEST_ASSERT_SUCCESS(sem_post_recv(cqp, 901, s->sbuf, 64, drnic_mr_lkey(s->smr)),
			    "post_recv in ERR");
	ER_CHECK(er_expect(c, s->ccq, 901, DRNIC_WC_WR_FLUSH_ERR, -1, cqpn, "receive posted in ERR"));
	TEST_ASSERT_SUCCESS(sem_post_send(cqp, 902, DRNIC_WR_SEND, s->sbuf, 8,
					  drnic_mr_lkey(s->smr), 0, 0, 0), "post_send in ERR");
	ER_CHECK(er_expect(c, s->ccq, 902, DRNIC_WC_WR_FLUSH_ERR, -1, cqpn, "send posted in ERR"));
	ER_CHECK(er_quiet(c, s->ccq, "client after flush"));
	/* The server never got a message. */
	ER_CHECK(er_quiet(c, s->scq, "server of the flushed sends"));
	RTE_SET_USED(sqpn);
	return TEST_SUCCESS;
}

static int
er_body(struct sem_ctx *c)
{
	struct er_state s;

	memset(&s, 0, sizeof(s));
	s.psn = 0x100;
	s.scq = sem_cq(c, SEM_SRV, 256, NULL, NULL);
	s.ccq = sem_cq(c, SEM_CLI, 256, NULL, NULL);
	TEST_ASSERT(s.scq != NULL && s.ccq != NULL, "CQs");
	/* The client MR and the target MR cover the first 4 KiB of their
	 * 8 KiB buffers: the rest is a guard that must stay untouched. */
	s.smr = sem_mr_part(c, SEM_CLI, ER_BUF, ER_MR, DRNIC_ACCESS_LOCAL_WRITE, (void **)&s.sbuf);
	s.rmr = sem_mr(c, SEM_SRV, ER_BUF, DRNIC_ACCESS_LOCAL_WRITE, (void **)&s.rbuf);
	s.tmr = sem_mr_part(c, SEM_SRV, ER_BUF, ER_MR, DRNIC_ACCESS_LOCAL_WRITE |
			    DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ, (void **)&s.tbuf);
	TEST_ASSERT(s.smr != NULL && s.rmr != NULL && s.tmr != NULL, "MRs");

	{
		static const struct {
			const char *name;
			int (*fn)(struct sem_ctx *c, struct er_state *s);
		} cases[] = {
			{ "LOC_LEN_ERR / REM_INV_REQ_ERR (too-long SEND)", er_loc_len },
			{ "LOC_PROT_ERR", er_loc_prot },
			{ "REM_ACCESS_ERR", er_rem_access },
			{ "REM_INV_REQ_ERR (operation not enabled on the QP)", er_rem_inv_req },
			{ "LOC_QP_OP_ERR", er_loc_qp_op },
			{ "WR_FLUSH_ERR", er_flush },
		};
		unsigned int i, failed = 0;

		/* Independent cases (each on fresh QPs): run them all. */
		for (i = 0; i < RTE_DIM(cases); i++) {
			struct drnic_wc wc[16];
			int n, rc;

			/* Start from empty CQs even after a failed case. */
			n = sem_poll_quiet(c, s.scq, wc, 16, 5);
			n += sem_poll_quiet(c, s.ccq, wc, 16, 5);
			rc = cases[i].fn(c, &s);
			printf("  %-52s %s\n", cases[i].name, rc == TEST_SUCCESS ? "ok" : "FAILED");
			if (rc != TEST_SUCCESS)
				failed++;
			RTE_SET_USED(n);
		}
		TEST_ASSERT_EQUAL(failed, 0, "error cases failed");
	}
	return TEST_SUCCESS;
}

static int
test_errors_inline(void)
{
	return sem_run(DRNIC_PROGRESS_INLINE, "error completions", er_body);
}

static int
test_errors_dedicated(void)
{
	return sem_run(DRNIC_PROGRESS_DEDICATED, "error completions", er_body);
}

DRNIC_TEST_REGISTER(sem_wc_errors_inline_autotest, DRNIC_TEST_FAST, test_errors_inline);
DRNIC_TEST_REGISTER(sem_wc_errors_dedicated_autotest, DRNIC_TEST_FAST, test_errors_dedicated);
