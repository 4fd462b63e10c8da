/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC end to end on the loopback wire. B has an XRC domain with two XRC SRQs
 * completing on B's CQ, and one XRC target QP per XRC initiator QP of A
 * (XRC_NQP of them). Each initiator sends to both SRQs by number: every
 * message lands whole in a buffer of the SRQ it named, and every CQE says
 * which target QP received it (qp_num) from which initiator (src_qp). A WRITE
 * with immediate goes through an SRQ's PD and takes a WQE of it; a READ and
 * an atomic go through the reliable machines too. An empty XRC SRQ draws RNR
 * NAKs until a receive is posted. An SRQ of another XRC domain, or no SRQ
 * at all, is an invalid request: the initiator's WQE completes
 * REM_INV_REQ_ERR and the target QP goes to ERR. XRC domains of a file are
 * shared (O_CREAT, O_EXCL), a target QP is opened by number, a domain with
 * SRQs in it does not close, the masks of modify_qp are the XRC ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "drnic_cq.h"
#include "drnic_event.h"

#include "test.h"
#include "rnic_fixture.h"

#define XRC_NQP 3             /* initiators on A, targets on B */
#define XRC_NSRQ 2
#define XRC_SLOT 8192         /* bytes of B's buffer per receive WQE */
#define XRC_SLOTS 16          /* per SRQ */
#define XRC_WR_BASE (1u << 20) /* B's buffer from here on: WRITE and READ targets */

struct xrc_rig {
	struct rnic_pair p;
	/* B's CQ of the XRC SRQs: no QP uses it, so with inline progress only
	 * its SRQs can make polling it run the engines. */
	struct drnic_cq *cq;
	struct drnic_xrcd *xrcd, *other;
	struct drnic_srq *srq[XRC_NSRQ];
	struct drnic_srq *stranger;     /* an XRC SRQ of the other domain */
	uint32_t srqn[XRC_NSRQ];
	struct drnic_qp *ini[XRC_NQP];  /* A */
	struct drnic_qp *tgt[XRC_NQP];  /* B */
};

/* Receive slot @p k of SRQ @p s: its place in B's buffer; wr_id s << 8 | k. */
static uint8_t *
xrc_slot(struct xrc_rig *r, int s, int k)
{
	return r->p.b.buf + ((size_t)s * XRC_SLOTS + (size_t)k) * XRC_SLOT;
}

static int
xrc_post(struct xrc_rig *r, int s, int k)
{
	struct drnic_sge sge = { (uintptr_t)xrc_slot(r, s, k), XRC_SLOT, drnic_mr_lkey(r->p.b.mr) };
	struct drnic_recv_wr wr = { .wr_id = (uint64_t)s << 8 | (uint64_t)k, .sg_list = &sge,
				    .num_sge = 1 }, *bad;

	return drnic_post_srq_recv(r->srq[s], &wr, &bad);
}

/* The masks each XRC side takes (IBA's XRC attributes): an initiator is a
 * requester only, a target a responder only, which still takes TIMEOUT and
 * SQ_PSN for the ACKs it sends (ibv_xsrq_pingpong's masks). */
#define XRC_RTR (DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU | DRNIC_QP_DEST_QPN | \
		 DRNIC_QP_RQ_PSN)
#define XRC_RTR_TGT (XRC_RTR | DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER)
#define XRC_RTS_TGT (DRNIC_QP_STATE | DRNIC_QP_TIMEOUT | DRNIC_QP_SQ_PSN)
#define XRC_RTS_INI (XRC_RTS_TGT | DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | \
		     DRNIC_QP_MAX_QP_RD_ATOMIC)

/*
 * Take XRC QP @p q (initiator when @p ini) to RTS towards QP @p peer of
 * @p peer_dev, with the masks of its side; first check that the other
 * side's extra attribute is refused (-EPROTO when it is not).
 */
static int
xrc_connect(struct drnic_qp *q, bool ini, struct drnic_device *peer_dev, struct drnic_qp *peer)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = ini ? 0 : DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
				      DRNIC_ACCESS_REMOTE_ATOMIC;
	rc = drnic_modify_qp(q, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_ACCESS_FLAGS);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = DRNIC_MTU_1024;
	a.dest_qp_num = drnic_qp_num(peer);
	a.rq_psn = 0x00FFF0 + drnic_qp_num(ini ? q : peer);   /* wraps past 2^24 - 1 */
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	drnic_query_gid(peer_dev, 1, 0, &a.ah_attr.grh.dgid);
	if (ini && drnic_modify_qp(q, &a, XRC_RTR | DRNIC_QP_MIN_RNR_TIMER) != -EINVAL)
		return -EPROTO;
	rc = drnic_modify_qp(q, &a, ini ? XRC_RTR : XRC_RTR_TGT);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = ini ? a.rq_psn : 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (!ini && (drnic_modify_qp(q, &a, XRC_RTS_TGT | DRNIC_QP_RETRY_CNT) != -EINVAL ||
		     drnic_modify_qp(q, &a, XRC_RTS_TGT & ~DRNIC_QP_TIMEOUT) != -EINVAL))
		return -EPROTO;
	return drnic_modify_qp(q, &a, ini ? XRC_RTS_INI : XRC_RTS_TGT);
}

/* Post one WR on initiator @p i for SRQ number @p srqn. */
static int
xrc_send(struct xrc_rig *r, int i, enum drnic_wr_opcode op, uint32_t srqn, uint64_t wr_id,
	 uint8_t *src, uint32_t len, uint32_t imm)
{
	struct drnic_sge sge = { (uintptr_t)src, len, drnic_mr_lkey(r->p.a.mr) };
	struct drnic_send_wr wr = { 0 }, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.imm_data = rte_cpu_to_be_32(imm);
	wr.qp_type.xrc.remote_srqn = srqn;
	return drnic_post_send(r->ini[i], &wr, &bad);
}

static uint32_t
xrc_len(int i, int s)
{
	return 100 + (uint32_t)i * 1500 + (uint32_t)s * 900;   /* 1 to 5 packets at MTU 1024 */
}

/* Objects and their rules, before any traffic. */
static int
xrc_objects(struct xrc_rig *r)
{
	char path[] = "/tmp/drnic-xrcd-XXXXXX";
	struct drnic_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct drnic_qp_init_attr qa = { 0 };
	struct drnic_xrcd *x1, *x2;
	struct drnic_srq *basic;
	struct drnic_qp *q, *o;
	uint32_t n;
	int fd;

	/* Domains of a file: shared, O_EXCL refuses a second, no O_CREAT
	 * needs one. */
	fd = mkstemp(path);
	TEST_ASSERT(fd >= 0, "mkstemp");
	unlink(path);
	TEST_ASSERT(drnic_open_xrcd(r->p.b.dev, fd, 0) == NULL && rte_errno == ENOENT,
		    "open without O_CREAT of a file with no domain");
	x1 = drnic_open_xrcd(r->p.b.dev, fd, O_CREAT);
	TEST_ASSERT(x1 != NULL, "open_xrcd O_CREAT: %s", rte_strerror(rte_errno));
	x2 = drnic_open_xrcd(r->p.b.dev, fd, O_CREAT);
	TEST_ASSERT(x2 == x1, "a second open of the file is the same domain");
	TEST_ASSERT(drnic_open_xrcd(r->p.b.dev, fd, O_CREAT | O_EXCL) == NULL &&
		    rte_errno == EEXIST, "O_EXCL with a domain there");
	TEST_ASSERT(drnic_open_xrcd(r->p.b.dev, -1, 0) == NULL && rte_errno == EINVAL,
		    "fd -1 without O_CREAT");
	TEST_ASSERT(drnic_open_xrcd(r->p.b.dev, 12345, O_CREAT) == NULL && rte_errno == EBADF,
		    "a closed fd");
	TEST_ASSERT(drnic_open_xrcd(r->p.b.dev, -1, O_CREAT | O_APPEND) == NULL &&
		    rte_errno == EINVAL, "a flag other than O_CREAT, O_EXCL");
	close(fd);
	TEST_ASSERT_SUCCESS(drnic_close_xrcd(x2), "first close");
	TEST_ASSERT_SUCCESS(drnic_close_xrcd(x1), "last close");
	TEST_ASSERT_EQUAL(drnic_close_xrcd(x1), -EINVAL, "close of a closed domain");

	r->xrcd = drnic_open_xrcd(r->p.b.dev, -1, O_CREAT);
	r->other = drnic_open_xrcd(r->p.b.dev, -1, O_CREAT);
	TEST_ASSERT(r->xrcd != NULL && r->other != NULL && r->xrcd != r->other,
		    "two domains of their own");

	/* SRQs: an XRC one has a number, a basic one none. */
	basic = drnic_create_srq(r->p.b.pd, &sia);
	TEST_ASSERT(basic != NULL, "basic SRQ");
	TEST_ASSERT_EQUAL(drnic_srq_num(basic, &n), -EINVAL, "a basic SRQ has no number");
	sia.srq_type = DRNIC_SRQT_XRC;
	sia.xrcd = r->xrcd;
	TEST_ASSERT(drnic_create_srq(r->p.b.pd, &sia) == NULL && rte_errno == EINVAL,
		    "an XRC SRQ without a CQ");
	sia.cq = r->cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.send_cq = qa.recv_cq = r->p.b.cq;
	qa.cap.max_send_wr = 1;
	qa.srq = basic;
	q = drnic_create_qp(r->p.b.pd, &qa);
	TEST_ASSERT(q != NULL, "an RC QP on the basic SRQ");
	TEST_ASSERT_SUCCESS(drnic_destroy_qp(q), "destroy it");
	TEST_ASSERT_SUCCESS(drnic_destroy_srq(basic), "destroy the basic SRQ");
	sia.attr.max_wr = XRC_SLOTS;
	for (n = 0; n < XRC_NSRQ; n++) {
		r->srq[n] = drnic_create_srq(r->p.b.pd, &sia);
		TEST_ASSERT(r->srq[n] != NULL, "XRC SRQ %u: %s", n, rte_strerror(rte_errno));
		TEST_ASSERT_SUCCESS(drnic_srq_num(r->srq[n], &r->srqn[n]), "srq_num");
		TEST_ASSERT(r->srqn[n] != 0 && r->srqn[n] <= 0xFFFFFF, "SRQ number %u", r->srqn[n]);
	}
	TEST_ASSERT(r->srqn[0] != r->srqn[1], "two SRQs, two numbers");
	sia.xrcd = r->other;
	r->stranger = drnic_create_srq(r->p.b.pd, &sia);
	TEST_ASSERT(r->stranger != NULL, "the other domain's SRQ");
	/* An RC QP does not take an XRC SRQ. */
	qa.srq = r->srq[0];
	TEST_ASSERT(drnic_create_qp(r->p.b.pd, &qa) == NULL && rte_errno == EINVAL,
		    "RC QP on an XRC SRQ");

	/* QPs: initiators on A (send queue only), targets on B (no queue). */
	for (n = 0; n < XRC_NQP; n++) {
		memset(&qa, 0, sizeof(qa));
		qa.qp_type = DRNIC_QPT_XRC_SEND;
		qa.send_cq = r->p.a.cq;
		qa.cap.max_send_wr = 16;
		qa.cap.max_send_sge = 1;
		r->ini[n] = drnic_create_qp(r->p.a.pd, &qa);
		TEST_ASSERT(r->ini[n] != NULL, "XRC_SEND %u: %s", n, rte_strerror(rte_errno));
		memset(&qa, 0, sizeof(qa));
		qa.qp_type = DRNIC_QPT_XRC_RECV;
		TEST_ASSERT(drnic_create_qp(NULL, &qa) == NULL && rte_errno == EINVAL,
			    "XRC_RECV without a domain");
		qa.xrcd = r->xrcd;
		r->tgt[n] = drnic_create_qp(NULL, &qa);
		TEST_ASSERT(r->tgt[n] != NULL, "XRC_RECV %u: %s", n, rte_strerror(rte_errno));
		TEST_ASSERT(qa.cap.max_send_wr == 0 && qa.cap.max_recv_wr == 0, "no queues");
	}
	/* Opened by number: the same QP, one more reference. */
	o = drnic_open_qp(r->xrcd, drnic_qp_num(r->tgt[0]));
	TEST_ASSERT(o == r->tgt[0], "open_qp finds the target QP");
	TEST_ASSERT(drnic_open_qp(r->other, drnic_qp_num(r->tgt[0])) == NULL &&
		    rte_errno == ENOENT, "not in the other domain");
	TEST_ASSERT(drnic_open_qp(r->xrcd, drnic_qp_num(r->ini[0])) == NULL &&
		    rte_errno == ENOENT, "an initiator is not opened");
	TEST_ASSERT_SUCCESS(drnic_destroy_qp(o), "destroy of the opened reference");
	TEST_ASSERT_EQUAL(drnic_qp_state(r->tgt[0]), DRNIC_QPS_RESET, "the QP is still there");
	TEST_ASSERT_EQUAL(drnic_close_xrcd(r->xrcd), -EBUSY, "a domain with SRQs and QPs in it");

	for (n = 0; n < XRC_NQP; n++) {
		TEST_ASSERT_SUCCESS(xrc_connect(r->ini[n], true, r->p.b.dev, r->tgt[n]),
				    "connect initiator %u", n);
		TEST_ASSERT_SUCCESS(xrc_connect(r->tgt[n], false, r->p.a.dev, r->ini[n]),
				    "connect target %u", n);
	}
	return TEST_SUCCESS;
}

/* Poll @p n completions from B's SRQ CQ within @p ms, with nothing but
 * drnic_cq_poll(): in inline mode the CQ runs the engines itself. */
static int
xrc_poll_ms(struct xrc_rig *r, struct drnic_wc *wc, int n, unsigned int ms)
{
	uint64_t deadline = rnic_now_ms() + ms;
	int got = 0, rc;

	while (got < n && rnic_now_ms() < deadline) {
		rc = drnic_cq_poll(r->cq, n - got, wc + got);
		if (rc < 0)
			return rc;
		got += rc;
	}
	return got;
}

static int
xrc_poll(struct xrc_rig *r, struct drnic_wc *wc, int n)
{
	return xrc_poll_ms(r, wc, n, 5000);
}

/* Every initiator SENDs to both SRQs (with immediate to the second). */
static int
xrc_sends(struct xrc_rig *r)
{
	struct drnic_wc wc[XRC_NQP * XRC_NSRQ];
	uint8_t used[XRC_NSRQ][XRC_SLOTS] = { { 0 } };
	int i, s, k, n;

	for (s = 0; s < XRC_NSRQ; s++)
		for (k = 0; k < XRC_NQP; k++)
			TEST_ASSERT_SUCCESS(xrc_post(r, s, k), "post_srq_recv %d.%d", s, k);
	for (i = 0; i < XRC_NQP; i++) {
		for (s = 0; s < XRC_NSRQ; s++) {
			uint8_t *src = r->p.a.buf + ((size_t)i * XRC_NSRQ + (size_t)s) * XRC_SLOT;
			uint32_t len = xrc_len(i, s);

			rnic_fill(src, len, (uint32_t)(i * 10 + s));
			src[0] = (uint8_t)i;
			src[1] = (uint8_t)s;
			TEST_ASSERT_SUCCESS(xrc_send(r, i, s ? DRNIC_WR_SEND_WITH_IMM : DRNIC_WR_SEND,
						     r->srqn[s], (uint64_t)(i * 10 + s), src, len,
						     0xC0DE0000u + (uint32_t)(i * 10 + s)),
					    "send %d -> SRQ %d", i, s);
		}
	}
	n = xrc_poll(r, wc, XRC_NQP * XRC_NSRQ);
	TEST_ASSERT_EQUAL(n, XRC_NQP * XRC_NSRQ, "receive completions on the SRQs' CQ");
	for (k = 0; k < n; k++) {
		uint8_t want[XRC_SLOT];
		const uint8_t *got;
		int from, to, slot = (int)(wc[k].wr_id & 0xFF);

		s = (int)(wc[k].wr_id >> 8);
		TEST_ASSERT(wc[k].status == DRNIC_WC_SUCCESS, "receive %d: %s", k,
			    drnic_wc_status_str(wc[k].status));
		TEST_ASSERT(s < XRC_NSRQ && slot < XRC_NQP, "wr_id %" PRIx64, wc[k].wr_id);
		TEST_ASSERT_EQUAL(used[s][slot], 0, "WQE %d.%d used twice", s, slot);
		used[s][slot] = 1;
		got = xrc_slot(r, s, slot);
		from = got[0];
		to = got[1];
		TEST_ASSERT(from < XRC_NQP, "payload header %d", from);
		TEST_ASSERT_EQUAL(to, s, "a message for SRQ %d landed in SRQ %d", to, s);
		TEST_ASSERT_EQUAL(wc[k].opcode, DRNIC_WC_RECV, "opcode");
		TEST_ASSERT_EQUAL(wc[k].byte_len, xrc_len(from, s), "byte_len");
		TEST_ASSERT_EQUAL(wc[k].qp_num, drnic_qp_num(r->tgt[from]), "qp_num: the target QP");
		TEST_ASSERT_EQUAL(wc[k].src_qp, drnic_qp_num(r->ini[from]), "src_qp: the initiator");
		TEST_ASSERT_EQUAL(wc[k].wc_flags, s ? DRNIC_WC_WITH_IMM : 0u, "wc_flags");
		if (s)
			TEST_ASSERT_EQUAL(rte_be_to_cpu_32(wc[k].imm_data),
					  0xC0DE0000u + (uint32_t)(from * 10 + s), "imm_data");
		TEST_ASSERT_EQUAL(wc[k].vendor_err, 0, "vendor_err");
		rnic_fill(want, wc[k].byte_len, (uint32_t)(from * 10 + s));
		want[0] = (uint8_t)from;
		want[1] = (uint8_t)s;
		TEST_ASSERT(memcmp(got, want, wc[k].byte_len) == 0, "bytes of %d -> %d", from, s);
	}
	n = rnic_poll(&r->p.a, wc, XRC_NQP * XRC_NSRQ);
	TEST_ASSERT_EQUAL(n, XRC_NQP * XRC_NSRQ, "send completions");
	for (k = 0; k < n; k++) {
		i = (int)(wc[k].wr_id / 10);
		s = (int)(wc[k].wr_id % 10);
		TEST_ASSERT(wc[k].status == DRNIC_WC_SUCCESS && i < XRC_NQP && s < XRC_NSRQ,
			    "send %" PRIu64 ": %s", wc[k].wr_id, drnic_wc_status_str(wc[k].status));
		TEST_ASSERT_EQUAL(wc[k].opcode, DRNIC_WC_SEND, "send opcode");
		TEST_ASSERT_EQUAL(wc[k].qp_num, drnic_qp_num(r->ini[i]), "send qp_num");
		TEST_ASSERT_EQUAL(wc[k].byte_len, xrc_len(i, s), "send byte_len");
	}
	return TEST_SUCCESS;
}

/* RDMA through XRC: keys are the SRQ's PD's; WRITE with immediate takes a
 * WQE of the SRQ named; READ and atomics are answered. */
static int
xrc_rdma(struct xrc_rig *r)
{
	uint8_t *src = r->p.a.buf, *dst = r->p.b.buf + XRC_WR_BASE;
	uint8_t *rd = r->p.a.buf + XRC_WR_BASE;
	uint64_t *ctr = (uint64_t *)(void *)(r->p.b.buf + XRC_WR_BASE + 3 * XRC_SLOT);
	struct drnic_sge sge;
	struct drnic_send_wr wr, *bad;
	struct drnic_wc wc[3];
	int n;

	TEST_ASSERT_SUCCESS(xrc_post(r, 1, 8), "post for the WRITE's immediate");
	rnic_fill(src, 3000, 77);
	memset(&wr, 0, sizeof(wr));
	sge = (struct drnic_sge){ (uintptr_t)src, 3000, drnic_mr_lkey(r->p.a.mr) };
	wr.wr_id = 100;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.imm_data = rte_cpu_to_be_32(0x1234);
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = drnic_mr_rkey(r->p.b.mr);
	wr.qp_type.xrc.remote_srqn = r->srqn[1];
	TEST_ASSERT_SUCCESS(drnic_post_send(r->ini[2], &wr, &bad), "post WRITE with imm");
	TEST_ASSERT_EQUAL(xrc_poll(r, wc, 1), 1, "the WRITE's completion");
	TEST_ASSERT(wc[0].status == DRNIC_WC_SUCCESS, "%s", drnic_wc_status_str(wc[0].status));
	TEST_ASSERT_EQUAL(wc[0].opcode, DRNIC_WC_RECV_RDMA_WITH_IMM, "opcode");
	TEST_ASSERT_EQUAL(wc[0].wr_id, (uint64_t)(1 << 8 | 8), "the SRQ's WQE");
	TEST_ASSERT_EQUAL(wc[0].byte_len, 3000, "byte_len");
	TEST_ASSERT_EQUAL(wc[0].qp_num, drnic_qp_num(r->tgt[2]), "qp_num");
	TEST_ASSERT_EQUAL(wc[0].src_qp, drnic_qp_num(r->ini[2]), "src_qp");
	TEST_ASSERT_EQUAL(wc[0].wc_flags, DRNIC_WC_WITH_IMM, "wc_flags");
	TEST_ASSERT_EQUAL(rte_be_to_cpu_32(wc[0].imm_data), 0x1234, "imm_data");
	TEST_ASSERT(memcmp(dst, src, 3000) == 0, "the WRITE's bytes");

	/* READ them back, and an atomic, through the other initiator. */
	memset(rd, 0, 3000);
	sge = (struct drnic_sge){ (uintptr_t)rd, 3000, drnic_mr_lkey(r->p.a.mr) };
	wr.wr_id = 101;
	wr.opcode = DRNIC_WR_RDMA_READ;
	wr.qp_type.xrc.remote_srqn = r->srqn[0];
	TEST_ASSERT_SUCCESS(drnic_post_send(r->ini[1], &wr, &bad), "post READ");
	*ctr = 40;
	memset(&wr, 0, sizeof(wr));
	sge = (struct drnic_sge){ (uintptr_t)(rd + 4096), 8, drnic_mr_lkey(r->p.a.mr) };
	wr.wr_id = 102;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)ctr;
	wr.wr.atomic.rkey = drnic_mr_rkey(r->p.b.mr);
	wr.wr.atomic.compare_add = 2;
	wr.qp_type.xrc.remote_srqn = r->srqn[0];
	TEST_ASSERT_SUCCESS(drnic_post_send(r->ini[1], &wr, &bad), "post FETCH_ADD");
	n = rnic_poll(&r->p.a, wc, 3);
	TEST_ASSERT_EQUAL(n, 3, "WRITE, READ and atomic completions");
	/* Two QPs share the CQ: in wr_id order (READ and atomic of one QP
	 * complete in order; the WRITE's may come anywhere). */
	while (wc[0].wr_id != 100) {
		struct drnic_wc t = wc[0];

		wc[0] = wc[1];
		wc[1] = wc[2];
		wc[2] = t;
	}
	TEST_ASSERT(wc[0].wr_id == 100 && wc[0].status == DRNIC_WC_SUCCESS &&
		    wc[0].opcode == DRNIC_WC_RDMA_WRITE && wc[0].qp_num == drnic_qp_num(r->ini[2]),
		    "WRITE: wr_id %" PRIu64 " %s", wc[0].wr_id, drnic_wc_status_str(wc[0].status));
	TEST_ASSERT(wc[1].wr_id == 101 && wc[1].status == DRNIC_WC_SUCCESS &&
		    wc[1].opcode == DRNIC_WC_RDMA_READ && wc[1].byte_len == 3000 &&
		    wc[1].qp_num == drnic_qp_num(r->ini[1]),
		    "READ: wr_id %" PRIu64 " %s", wc[1].wr_id, drnic_wc_status_str(wc[1].status));
	TEST_ASSERT(memcmp(rd, src, 3000) == 0, "the READ's bytes");
	TEST_ASSERT(wc[2].wr_id == 102 && wc[2].status == DRNIC_WC_SUCCESS &&
		    wc[2].opcode == DRNIC_WC_FETCH_ADD && wc[2].byte_len == 8,
		    "atomic: wr_id %" PRIu64 " %s", wc[2].wr_id, drnic_wc_status_str(wc[2].status));
	TEST_ASSERT_EQUAL(*(uint64_t *)(void *)(rd + 4096), 40, "the original value");
	TEST_ASSERT_EQUAL(*ctr, 42, "the added value");
	return TEST_SUCCESS;
}

/* An empty XRC SRQ: RNR NAKs until a receive is posted. */
static int
xrc_rnr(struct xrc_rig *r)
{
	uint64_t deadline = rnic_now_ms() + 5000;
	struct drnic_qp_stats st;
	struct drnic_wc wc;

	rnic_fill(r->p.a.buf, 64, 5);
	TEST_ASSERT_SUCCESS(xrc_send(r, 0, DRNIC_WR_SEND, r->srqn[0], 200, r->p.a.buf, 64, 0),
			    "send into an empty SRQ");
	do {
		drnic_device_progress(r->p.a.dev);
		drnic_qp_stats_get(r->ini[0], &st);
	} while (st.rnr_naks_rx == 0 && rnic_now_ms() < deadline);
	TEST_ASSERT(st.rnr_naks_rx > 0, "no RNR NAK for an empty XRC SRQ");
	TEST_ASSERT_EQUAL(drnic_cq_poll(r->cq, 1, &wc), 0, "a completion with no receive");
	TEST_ASSERT_SUCCESS(xrc_post(r, 0, 9), "post after RNR");
	TEST_ASSERT_EQUAL(xrc_poll(r, &wc, 1), 1, "the SEND after the post");
	TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS && wc.wr_id == 9 && wc.byte_len == 64 &&
		    wc.qp_num == drnic_qp_num(r->tgt[0]) && wc.src_qp == drnic_qp_num(r->ini[0]),
		    "receive after RNR: %s wr_id %" PRIu64, drnic_wc_status_str(wc.status),
		    wc.wr_id);
	TEST_ASSERT(memcmp(xrc_slot(r, 0, 9), r->p.a.buf, 64) == 0, "bytes after RNR");
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, &wc, 1), 1, "send completion after RNR");
	TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS && wc.wr_id == 200, "%s",
		    drnic_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

/* Wait for async event @p type about target QP @p qp on B's queue. */
static int
xrc_wait_qp_event(struct xrc_rig *r, struct drnic_qp *qp, enum drnic_event_type type)
{
	struct drnic_async_queue *aq = drnic_device_async_queue(r->p.b.dev);
	uint64_t deadline = rnic_now_ms() + 5000;
	struct drnic_async_event ev;

	while (rnic_now_ms() < deadline) {
		if (drnic_try_get_async_event(aq, &ev) != 0) {
			drnic_device_progress(r->p.a.dev);
			continue;
		}
		drnic_ack_async_event(aq, &ev);
		if (ev.event_type == type && ev.qp_num == drnic_qp_num(qp))
			return 0;
	}
	return -ETIMEDOUT;
}

/* An SRQ of another domain, and a number no SRQ has: invalid requests. */
static int
xrc_wrong_srq(struct xrc_rig *r)
{
	uint32_t other, none = 0xFFFFFE;
	struct drnic_wc wc;

	TEST_ASSERT_SUCCESS(drnic_srq_num(r->stranger, &other), "the stranger's number");
	TEST_ASSERT_SUCCESS(xrc_send(r, 1, DRNIC_WR_SEND, other, 300, r->p.a.buf, 64, 0),
			    "send to another domain's SRQ");
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, &wc, 1), 1, "its completion");
	TEST_ASSERT_EQUAL(wc.wr_id, 300, "wr_id");
	TEST_ASSERT(wc.status == DRNIC_WC_REM_INV_REQ_ERR, "wrong domain: %s",
		    drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(r->ini[1]), "qp_num");
	TEST_ASSERT_EQUAL(drnic_qp_state(r->ini[1]), DRNIC_QPS_ERR, "initiator in ERR");
	TEST_ASSERT_SUCCESS(xrc_wait_qp_event(r, r->tgt[1], DRNIC_EVENT_QP_REQ_ERR),
			    "no QP_REQ_ERR on the target");
	TEST_ASSERT_EQUAL(drnic_qp_state(r->tgt[1]), DRNIC_QPS_ERR, "target in ERR");

	TEST_ASSERT_SUCCESS(xrc_send(r, 2, DRNIC_WR_SEND, none, 301, r->p.a.buf, 64, 0),
			    "send to no SRQ");
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, &wc, 1), 1, "its completion");
	TEST_ASSERT(wc.wr_id == 301 && wc.status == DRNIC_WC_REM_INV_REQ_ERR, "no SRQ: %s",
		    drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(xrc_poll_ms(r, &wc, 1, 50), 0, "no receive completion for either");
	/* The third pair still works. */
	TEST_ASSERT_SUCCESS(xrc_post(r, 1, 10), "post");
	TEST_ASSERT_SUCCESS(xrc_send(r, 0, DRNIC_WR_SEND, r->srqn[1], 302, r->p.a.buf, 32, 0),
			    "send on the healthy pair");
	TEST_ASSERT_EQUAL(xrc_poll(r, &wc, 1), 1, "received");
	TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS && wc.wr_id == (1 << 8 | 10) &&
		    wc.qp_num == drnic_qp_num(r->tgt[0]), "%s", drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, &wc, 1), 1, "sent");
	TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS && wc.wr_id == 302, "%s",
		    drnic_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

static void
xrc_close(struct xrc_rig *r)
{
	struct drnic_async_event ev;
	int i;

	for (i = 0; i < XRC_NQP; i++) {
		if (r->ini[i] != NULL)
			drnic_destroy_qp(r->ini[i]);
		if (r->tgt[i] != NULL)
			drnic_destroy_qp(r->tgt[i]);
	}
	for (i = 0; i < XRC_NSRQ; i++)
		if (r->srq[i] != NULL && drnic_destroy_srq(r->srq[i]) != 0)
			printf("destroy_srq %d failed\n", i);
	if (r->stranger != NULL)
		drnic_destroy_srq(r->stranger);
	if (r->xrcd != NULL && drnic_close_xrcd(r->xrcd) != 0)
		printf("close_xrcd failed after its SRQs and QPs\n");
	if (r->other != NULL)
		drnic_close_xrcd(r->other);
	if (r->cq != NULL)
		drnic_cq_destroy(r->cq);
	while (r->p.b.dev != NULL &&
	       drnic_try_get_async_event(drnic_device_async_queue(r->p.b.dev), &ev) == 0)
		drnic_ack_async_event(drnic_device_async_queue(r->p.b.dev), &ev);
	rnic_pair_close(&r->p);
}

static int
xrc_run(enum drnic_progress_mode mode)
{
	static struct xrc_rig r;
	struct rnic_pair_opts o = { .mode = mode };
	int rc;

	memset(&r, 0, sizeof(r));
	if (mode == DRNIC_PROGRESS_DEDICATED && rte_get_next_lcore(-1, 1, 0) >= RTE_MAX_LCORE)
		TEST_SKIP("dedicated mode needs an EAL worker lcore for the engine");
	TEST_ASSERT_SUCCESS(rnic_pair_open(&r.p, &o), "pair open");
	{
		struct drnic_cq_attr ca = { .cqe = 256, .socket_id = -1 };

		r.cq = drnic_cq_create(&ca);
		TEST_ASSERT(r.cq != NULL, "the SRQs' CQ: %s", rte_strerror(rte_errno));
	}
	rc = xrc_objects(&r);
	if (rc == TEST_SUCCESS)
		rc = xrc_sends(&r);
	if (rc == TEST_SUCCESS)
		rc = xrc_rdma(&r);
	if (rc == TEST_SUCCESS)
		rc = xrc_rnr(&r);
	if (rc == TEST_SUCCESS)
		rc = xrc_wrong_srq(&r);
	xrc_close(&r);
	return rc;
}

static int
rnic_xrc_inline(void)
{
	return xrc_run(DRNIC_PROGRESS_INLINE);
}

static int
rnic_xrc_dedicated(void)
{
	return xrc_run(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_xrc_inline_autotest, DRNIC_TEST_FAST, rnic_xrc_inline);
DRNIC_TEST_REGISTER(rnic_xrc_dedicated_autotest, DRNIC_TEST_FAST, rnic_xrc_dedicated);
