/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * API misuse through drnic's libibverbs.so.1, as a verbs program makes it
 * (issue 13): what each call returns and sets errno to, with nothing posted
 * or corrupted. Runs on a loopback device with two GIDs (the DRNIC_CONFIG
 * written here); a QP is connected to itself so that posts reach the count
 * checks. Exit 0 when every check holds, 1 otherwise (each failure named).
 * (Sanitizer builds do not build the drop-in; the native misuse autotests
 * run there.) XRC's calls are checked here too (check_xrc()), and one of
 * the drop-in librdmacm's (check_cm_destroy_waiter(), check_cm_late_waiter()).
 * "ibv_api_check port" checks device events instead, on an ethdev link over
 * a net_ring port that it takes down and up.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rte_ethdev.h>
#ifdef IBV_CHECK_RDMACM
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#endif

#include "ibv_check.h"

struct check_env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint32_t max_send_sge, max_recv_sge;
};

/* A QP connected to itself, in RTS. */
static struct ibv_qp *
check_qp_rts(struct check_env *e, uint32_t max_send_sge)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = max_send_sge,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	union ibv_gid gid;

	qp = ibv_create_qp(e->pd, &ia);
	if (qp == NULL)
		return NULL;
	e->max_send_sge = ia.cap.max_send_sge;
	e->max_recv_sge = ia.cap.max_recv_sge;
	if (ibv_query_gid(e->ctx, 1, 0, &gid) != 0)
		goto fail;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS) != 0)
		goto fail;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		goto fail;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		goto fail;
	return qp;
fail:
	ibv_destroy_qp(qp);
	return NULL;
}

/* Issue 13, defect 6: counts are checked before any list is read. */
static void
check_sge_counts(struct check_env *e)
{
	uint32_t max = e->max_send_sge;
	struct ibv_sge *list = calloc(max, sizeof(*list));      /* exactly max */
	struct ibv_sge *rlist = calloc(e->max_recv_sge, sizeof(*rlist));
	const int counts[] = { (int)max + 1, INT_MAX };
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc;
	unsigned int i;
	int rc;

	for (i = 0; i < max; i++)
		list[i] = (struct ibv_sge){ (uintptr_t)e->buf + i, 1, e->mr->lkey };
	for (i = 0; i < e->max_recv_sge; i++)
		rlist[i] = (struct ibv_sge){ (uintptr_t)e->buf, 1, e->mr->lkey };
	for (i = 0; i < 2; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1;
		wr.sg_list = list;
		wr.num_sge = counts[i];
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		bad = NULL;
		errno = 0;
		rc = ibv_post_send(e->qp, &wr, &bad);
		CHECK(rc == EINVAL && bad == &wr, "post_send num_sge %d (max %u): %s, bad_wr %s",
		      counts[i], max, strerror(rc), bad == &wr ? "the WR" : "wrong");
		wr.send_flags |= IBV_SEND_INLINE;
		bad = NULL;
		rc = ibv_post_send(e->qp, &wr, &bad);
		CHECK(rc == EINVAL && bad == &wr, "post_send INLINE num_sge %d (max %u): %s",
		      counts[i], max, strerror(rc));
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 2;
		rwr.sg_list = rlist;
		rwr.num_sge = i == 0 ? (int)e->max_recv_sge + 1 : INT_MAX;
		rbad = NULL;
		rc = ibv_post_recv(e->qp, &rwr, &rbad);
		CHECK(rc == EINVAL && rbad == &rwr, "post_recv num_sge %d (max %u): %s",
		      rwr.num_sge, e->max_recv_sge, strerror(rc));
	}
	/* ibv_wr_*: the QP's max_send_sge (above the old fixed 4) is taken,
	 * one more is EINVAL at ibv_wr_complete(). */
	qpx = ibv_qp_to_qp_ex(e->qp);
	ibv_wr_start(qpx);
	qpx->wr_id = 3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, e->mr->rkey, (uintptr_t)e->buf + 4096);
	ibv_wr_set_sge_list(qpx, max, list);
	rc = ibv_wr_complete(qpx);
	CHECK(rc == 0, "ibv_wr_set_sge_list(%u = max_send_sge): %s", max, strerror(rc));
	ibv_wr_start(qpx);
	qpx->wr_id = 4;
	ibv_wr_rdma_write(qpx, e->mr->rkey, (uintptr_t)e->buf + 4096);
	ibv_wr_set_sge_list(qpx, (size_t)max + 1, list);
	rc = ibv_wr_complete(qpx);
	CHECK(rc == EINVAL, "ibv_wr_set_sge_list(%u = max + 1): %s", max + 1, strerror(rc));
	ibv_wr_start(qpx);
	qpx->wr_id = 5;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, e->buf, SIZE_MAX);
	rc = ibv_wr_complete(qpx);
	CHECK(rc == EINVAL, "ibv_wr_set_inline_data(SIZE_MAX bytes): %s", strerror(rc));
	/* Only the one good WRITE completes. */
	for (i = 0, rc = 0; i < 100000 && rc == 0; i++)
		rc = ibv_poll_cq(e->cq, 1, &wc);
	CHECK(rc == 1 && wc.wr_id == 3 && wc.status == IBV_WC_SUCCESS,
	      "the max_send_sge WRITE completes (wr_id %llu, %s)",
	      rc == 1 ? (unsigned long long)wc.wr_id : 0ULL,
	      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	for (i = 0, rc = 0; i < 1000 && rc == 0; i++)
		rc = ibv_poll_cq(e->cq, 1, &wc);
	CHECK(rc == 0, "nothing else was posted");
	free(list);
	free(rlist);
}

/* One completion of @p cq within 5 s of polling (the engine runs in the
 * polls or in the helper); 1, or 0 when none came. */
static int
check_poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		rc = ibv_poll_cq(cq, 1, wc);
		if (rc != 0)
			return rc;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 5);
	return 0;
}

/* Issue 15: the device says SRQ_RESIZE; the SRQ (16 WRs) grows to hold 40
 * (posting them shows it); below what is posted is EINVAL. 0: all held. */
static int
check_srq_resize(struct ibv_context *ctx, struct ibv_srq *srq)
{
	struct ibv_device_attr da;
	struct ibv_srq_attr q = { .max_wr = 40 };
	struct ibv_sge sge = { 0, 8, 0 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc, i;

	if (ibv_query_device(ctx, &da) != 0 || !(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE))
		return -1;
	rc = ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR);
	if (rc != 0 || ibv_query_srq(srq, &q) != 0 || q.max_wr < 40)
		return -2;
	for (i = 0; i < 40; i++)
		if (ibv_post_srq_recv(srq, &wr, &bad) != 0)
			return -3;
	q.max_wr = 39;
	if (ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR) != EINVAL)
		return -4;
	return 0;
}

/* Post one signaled @p op (an RDMA operation: wr.rdma) of one SGE and wait
 * for its completion: 1, 0 when none came, or -errno when the post failed
 * (bad_wr the WR). */
static int
check_post1(struct ibv_qp *qp, struct ibv_cq *cq, uint64_t wr_id, enum ibv_wr_opcode op,
	    void *laddr, uint32_t lkey, uint32_t len, uint64_t raddr, uint32_t rkey,
	    struct ibv_wc *wc)
{
	struct ibv_sge sge = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad = NULL;
	int rc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	rc = ibv_post_send(qp, &wr, &bad);
	if (rc != 0)
		return bad == &wr ? -rc : -EFAULT;
	return check_poll1(cq, wc);
}

/* An RDMA WRITE of @p len bytes, as check_post1(). */
static int
check_write(struct ibv_qp *qp, struct ibv_cq *cq, uint64_t wr_id, void *src, uint32_t lkey,
	    uint32_t len, uint64_t raddr, uint32_t rkey, struct ibv_wc *wc)
{
	return check_post1(qp, cq, wr_id, IBV_WR_RDMA_WRITE, src, lkey, len, raddr, rkey, wc);
}

/* Issue 15: IBV_WR_ATOMIC_WRITE through ibv_wr_atomic_write() and
 * ibv_post_send(), its cap, its completion, and what is refused. */
static void
check_atomic_write(struct check_env *e)
{
	struct ibv_device_attr_ex ax;
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(e->qp);
	uint64_t v = 0x8877665544332211ull, got;
	uint8_t *t = e->buf + 6144;
	struct ibv_wc wc;
	int rc;

	rc = ibv_query_device_ex(e->ctx, NULL, &ax);
	CHECK(rc == 0 && (ax.device_cap_flags_ex & (1ull << 40)) != 0,
	      "device_cap_flags_ex has IB_UVERBS_DEVICE_ATOMIC_WRITE (1 << 40): %s",
	      strerror(rc));
	memset(t - 8, 0x5A, 24);
	ibv_wr_start(qpx);
	qpx->wr_id = 41;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, e->mr->rkey, (uintptr_t)t, &v);
	v = 0;     /* taken at the call */
	rc = ibv_wr_complete(qpx);
	CHECK(rc == 0, "ibv_wr_atomic_write: %s", strerror(rc));
	rc = check_poll1(e->cq, &wc);
	memcpy(&got, t, 8);
	CHECK(rc == 1 && wc.wr_id == 41 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_ATOMIC_WRITE && wc.byte_len == 8 && wc.qp_num == e->qp->qp_num &&
	      got == 0x8877665544332211ull && t[-1] == 0x5A && t[8] == 0x5A,
	      "ATOMIC_WRITE lands (%#llx) and completes (opcode %d, byte_len %u, %s)",
	      (unsigned long long)got, rc == 1 ? (int)wc.opcode : -1, rc == 1 ? wc.byte_len : 0,
	      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	/* ibv_post_send: the 8 bytes from an SGE, the address in wr.rdma. */
	v = 0x0102030405060708ull;
	memcpy(e->buf + 64, &v, 8);
	rc = check_post1(e->qp, e->cq, 42, IBV_WR_ATOMIC_WRITE, e->buf + 64, e->mr->lkey, 8,
			 (uintptr_t)t + 8, e->mr->rkey, &wc);
	memcpy(&got, t + 8, 8);
	CHECK(rc == 1 && wc.wr_id == 42 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_ATOMIC_WRITE && got == v,
	      "ibv_post_send(IBV_WR_ATOMIC_WRITE) lands and completes: %d", rc);
	/* Refused: misaligned, or not 8 bytes; nothing posted. */
	rc = check_post1(e->qp, e->cq, 43, IBV_WR_ATOMIC_WRITE, e->buf + 64, e->mr->lkey, 8,
			 (uintptr_t)t + 4, e->mr->rkey, &wc);
	CHECK(rc == -EINVAL, "ATOMIC_WRITE to a misaligned address: %s", strerror(-rc));
	rc = check_post1(e->qp, e->cq, 44, IBV_WR_ATOMIC_WRITE, e->buf + 64, e->mr->lkey, 4,
			 (uintptr_t)t, e->mr->rkey, &wc);
	CHECK(rc == -EINVAL, "ATOMIC_WRITE of 4 bytes: %s", strerror(-rc));
	ibv_wr_start(qpx);
	ibv_wr_atomic_write(qpx, e->mr->rkey, (uintptr_t)t + 4, &v);
	rc = ibv_wr_complete(qpx);
	CHECK(rc == EINVAL, "ibv_wr_atomic_write to a misaligned address: %s", strerror(rc));
	CHECK(check_poll1(e->cq, &wc) == 0, "nothing refused completes");
}

/* Issue 15: ibv_rereg_mr: a new translation used by an RDMA WRITE, the old
 * rkey refused, PD changes with their references, input errors. */
static void
check_rereg_mr(struct check_env *e)
{
	struct ibv_mr *mr = ibv_reg_mr(e->pd, e->buf + 1024, 1024,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_pd *pd2 = ibv_alloc_pd(e->ctx);
	struct ibv_async_event ev;
	struct ibv_qp *qp2;
	uint32_t old_rkey;
	struct ibv_wc wc;
	int rc;

	if (mr == NULL || pd2 == NULL) {
		CHECK(0, "rereg set-up: %s", strerror(errno));
		return;
	}
	old_rkey = mr->rkey;
	errno = 0;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 0, 0);
	CHECK(rc == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
	      "rereg TRANSLATION without an address: %d (%s)", rc, strerror(errno));
	errno = 0;
	rc = ibv_rereg_mr(mr, 1 << 3, NULL, NULL, 0, 0);
	CHECK(rc == IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg unknown flag: %d (%s)", rc,
	      strerror(errno));
	errno = 0;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0);
	CHECK(rc == IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg CHANGE_PD to NULL: %d (%s)",
	      rc, strerror(errno));
	CHECK(mr->rkey == old_rkey, "a refused rereg keeps the keys");

	memset(e->buf + 2048, 0, 64);
	memset(e->buf, 0xC3, 64);
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, e->buf + 2048, 1024, 0);
	CHECK(rc == 0 && mr->addr == e->buf + 2048 && mr->length == 1024 && mr->rkey != old_rkey,
	      "rereg TRANSLATION: %d, new address and keys", rc);
	rc = check_write(e->qp, e->cq, 51, e->buf, e->mr->lkey, 64, (uintptr_t)e->buf + 2048,
			 mr->rkey, &wc);
	CHECK(rc == 1 && wc.status == IBV_WC_SUCCESS && e->buf[2048] == 0xC3 &&
	      e->buf[2048 + 63] == 0xC3,
	      "RDMA WRITE into the new translation with the new rkey: %s",
	      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	/* The old rkey is refused, nothing written, on a QP of its own (it goes
	 * to ERR; being its own responder, its WRITE is flushed by the error the
	 * responder side raises: QP_ACCESS_ERR). */
	memset(e->buf + 1024, 0, 64);
	qp2 = check_qp_rts(e, 1);
	rc = qp2 != NULL ? check_write(qp2, e->cq, 52, e->buf, e->mr->lkey, 64,
				      (uintptr_t)e->buf + 1024, old_rkey, &wc) : 0;
	CHECK(rc == 1 && wc.wr_id == 52 &&
	      (wc.status == IBV_WC_REM_ACCESS_ERR || wc.status == IBV_WC_WR_FLUSH_ERR) &&
	      e->buf[1024] == 0, "RDMA WRITE with the old rkey fails: %s",
	      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	rc = qp2 != NULL ? ibv_get_async_event(e->ctx, &ev) : -1;
	CHECK(rc == 0 && ev.event_type == IBV_EVENT_QP_ACCESS_ERR && ev.element.qp == qp2,
	      "... and the responder raised QP_ACCESS_ERR (%s)",
	      rc == 0 ? ibv_event_type_str(ev.event_type) : "no event");
	if (rc == 0)
		ibv_ack_async_event(&ev);
	if (qp2 != NULL)
		ibv_destroy_qp(qp2);
	/* PD: the MR holds pd2 until it moves back. */
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, pd2, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE);
	CHECK(rc == 0 && mr->pd == pd2, "rereg CHANGE_PD | CHANGE_ACCESS: %d", rc);
	rc = ibv_dealloc_pd(pd2);
	CHECK(rc == EBUSY, "dealloc a PD an MR moved to: %s", strerror(rc));
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, e->pd, NULL, 0, 0);
	CHECK(rc == 0 && mr->pd == e->pd, "rereg back to the first PD: %d", rc);
	CHECK(ibv_dealloc_pd(pd2) == 0, "then the PD may go");
	CHECK(ibv_dereg_mr(mr) == 0, "dereg the re-registered MR");
}

static void *
check_pd_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
	       uint64_t resource_type)
{
	(void)pd, (void)pd_context, (void)size, (void)alignment, (void)resource_type;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void
check_pd_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type)
{
	(void)pd, (void)pd_context, (void)ptr, (void)resource_type;
}

/* Issue 15: a thread domain in a parent domain, used as the PD of a CQ, an
 * MR and a QP that moves data; the references that keep them; errors. */
static void
check_parent_domain(struct check_env *e)
{
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD };
	struct check_env e2 = *e;
	struct ibv_td *td;
	struct ibv_pd *par;
	struct ibv_cq_ex *cqx;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int rc;

	errno = 0;
	td = ibv_alloc_td(e->ctx, &ta);
	CHECK(td == NULL && errno == EINVAL, "ibv_alloc_td with an unknown comp_mask: %s",
	      strerror(errno));
	ta.comp_mask = 0;
	td = ibv_alloc_td(e->ctx, &ta);
	CHECK(td != NULL && td->context == e->ctx, "ibv_alloc_td: %s", strerror(errno));
	pa.pd = NULL;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(e->ctx, &pa) == NULL && errno == EINVAL,
	      "ibv_alloc_parent_domain without a PD: %s", strerror(errno));
	pa.pd = e->pd;
	pa.comp_mask = 1 << 5;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(e->ctx, &pa) == NULL && errno == EINVAL,
	      "ibv_alloc_parent_domain with an unknown comp_mask: %s", strerror(errno));
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(e->ctx, &pa) == NULL && errno == EINVAL,
	      "ibv_alloc_parent_domain: ALLOCATORS without functions: %s", strerror(errno));
	pa.td = td;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
		       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.alloc = check_pd_alloc;
	pa.free = check_pd_free;
	pa.pd_context = e;
	par = ibv_alloc_parent_domain(e->ctx, &pa);
	CHECK(par != NULL && par->context == e->ctx, "ibv_alloc_parent_domain(PD, TD, allocators): %s",
	      strerror(errno));
	if (par == NULL || td == NULL)
		return;
	pa.pd = par;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(e->ctx, &pa) == NULL && errno == EINVAL,
	      "a parent domain over a parent domain: %s", strerror(errno));
	CHECK(ibv_dealloc_td(td) == EBUSY, "ibv_dealloc_td while a parent domain uses it: EBUSY");
	CHECK(ibv_dealloc_pd(e->pd) == EBUSY, "ibv_dealloc_pd under a parent domain: EBUSY");
	ca.parent_domain = e->pd;
	errno = 0;
	CHECK(ibv_create_cq_ex(e->ctx, &ca) == NULL && errno == EINVAL,
	      "ibv_create_cq_ex with a PD that is not a parent domain: %s", strerror(errno));
	ca.parent_domain = par;
	cqx = ibv_create_cq_ex(e->ctx, &ca);
	CHECK(cqx != NULL, "ibv_create_cq_ex with the parent domain: %s", strerror(errno));
	mr = ibv_reg_mr(par, e->buf + 3072, 256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr != NULL && mr->pd == par, "ibv_reg_mr on the parent domain: %s", strerror(errno));
	e2.pd = par;
	e2.cq = cqx != NULL ? ibv_cq_ex_to_cq(cqx) : NULL;
	qp = cqx != NULL && mr != NULL ? check_qp_rts(&e2, 1) : NULL;
	CHECK(qp != NULL && qp->pd == par, "a QP on the parent domain, in RTS: %s",
	      strerror(errno));
	if (qp != NULL) {
		memset(e->buf + 3072, 0, 32);
		memset(e->buf, 0x3C, 32);
		rc = check_write(qp, e2.cq, 61, e->buf, e->mr->lkey, 32, (uintptr_t)e->buf + 3072,
				 mr->rkey, &wc);
		CHECK(rc == 1 && wc.status == IBV_WC_SUCCESS && e->buf[3072] == 0x3C &&
		      e->buf[3072 + 31] == 0x3C,
		      "RDMA WRITE on the parent domain's QP into its MR: %s",
		      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
		CHECK(ibv_destroy_qp(qp) == 0, "destroy the parent domain's QP");
	}
	if (mr != NULL)
		CHECK(ibv_dereg_mr(mr) == 0, "dereg the parent domain's MR");
	if (cqx != NULL)
		CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "destroy the parent domain's CQ");
	CHECK(ibv_dealloc_pd(par) == 0, "ibv_dealloc_pd of the parent domain");
	/* (Not twice: the inline ibv_dealloc_td() reads td->context first.) */
	CHECK(ibv_dealloc_td(td) == 0, "then ibv_dealloc_td");
}

/* Issue 15: ODP: the caps say what is honoured, ON_DEMAND MRs take RDMA,
 * implicit ODP is refused, ibv_advise_mr's errnos. */
static void
check_odp(struct check_env *e)
{
	struct ibv_device_attr_ex ax;
	struct ibv_sge sg[2];
	struct ibv_mr *odp, *implicit;
	struct ibv_wc wc;
	int rc;

	rc = ibv_query_device_ex(e->ctx, NULL, &ax);
	CHECK(rc == 0 && ax.odp_caps.general_caps == IBV_ODP_SUPPORT &&
	      (ax.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE) &&
	      (ax.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_SRQ_RECV),
	      "odp_caps: ODP, not implicit (general %#llx, rc %#x)",
	      (unsigned long long)ax.odp_caps.general_caps,
	      ax.odp_caps.per_transport_caps.rc_odp_caps);
	errno = 0;
	implicit = ibv_reg_mr(e->pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE);
	CHECK(implicit == NULL && errno == EINVAL, "implicit ODP refused: %s", strerror(errno));
	odp = ibv_reg_mr(e->pd, e->buf + 3584, 512, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	CHECK(odp != NULL, "ibv_reg_mr(IBV_ACCESS_ON_DEMAND): %s", strerror(errno));
	if (odp == NULL)
		return;
	memset(e->buf + 3584, 0, 16);
	memset(e->buf, 0x77, 16);
	rc = check_write(e->qp, e->cq, 71, e->buf, e->mr->lkey, 16, (uintptr_t)e->buf + 3584,
			 odp->rkey, &wc);
	CHECK(rc == 1 && wc.status == IBV_WC_SUCCESS && e->buf[3584] == 0x77 &&
	      e->buf[3584 + 15] == 0x77, "RDMA WRITE into an ODP MR");
	sg[0] = (struct ibv_sge){ (uintptr_t)e->buf + 3584, 512, odp->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)e->buf, 64, e->mr->lkey };
	CHECK(ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1) == 0,
	      "ibv_advise_mr PREFETCH");
	CHECK(ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, sg, 1) == 0,
	      "ibv_advise_mr PREFETCH_WRITE | FLUSH");
	CHECK(ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, sg, 1) == 0,
	      "ibv_advise_mr PREFETCH_NO_FAULT");
	rc = ibv_advise_mr(e->pd, (enum ibv_advise_mr_advice)7, 0, sg, 1);
	CHECK(rc == EOPNOTSUPP, "ibv_advise_mr unknown advice: %s", strerror(rc));
	rc = ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 1 << 4, sg, 1);
	CHECK(rc == EINVAL, "ibv_advise_mr unknown flag: %s", strerror(rc));
	rc = ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 0);
	CHECK(rc == EINVAL, "ibv_advise_mr no SGE: %s", strerror(rc));
	rc = ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2);
	CHECK(rc == EINVAL, "ibv_advise_mr on an MR without ON_DEMAND: %s", strerror(rc));
	sg[1] = (struct ibv_sge){ (uintptr_t)e->buf + 3584, 513, odp->lkey };
	rc = ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2);
	CHECK(rc == EFAULT, "ibv_advise_mr past the MR: %s", strerror(rc));
	sg[1] = (struct ibv_sge){ (uintptr_t)e->buf + 3584, 8, odp->lkey + 0x100000 };
	rc = ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2);
	CHECK(rc == EFAULT, "ibv_advise_mr with an lkey not registered: %s", strerror(rc));
	CHECK(ibv_query_qp_data_in_order(e->qp, IBV_WR_RDMA_WRITE, 0) == 0 &&
	      ibv_query_qp_data_in_order(e->qp, IBV_WR_SEND, 0) == 0 &&
	      ibv_query_qp_data_in_order(e->qp, IBV_WR_RDMA_READ, 0) == 0,
	      "ibv_query_qp_data_in_order: not guaranteed (0) for WRITE, SEND, READ");
	CHECK(ibv_dereg_mr(odp) == 0, "dereg the ODP MR");
}

/* Issue 15: device memory: its size cap, copies in and out, a zero-based
 * MR on it that a peer WRITEs into and READs from by offset, and that a
 * local SGE names by offset; the references that keep it. */
static void
check_dm(struct check_env *e)
{
	struct ibv_alloc_dm_attr da = { .length = 0 };
	struct ibv_device_attr_ex ax;
	uint8_t pat[256], back[256];
	struct ibv_dm *dm;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int rc, i;

	rc = ibv_query_device_ex(e->ctx, NULL, &ax);
	CHECK(rc == 0 && ax.max_dm_size == 16u << 20, "max_dm_size %llu",
	      (unsigned long long)ax.max_dm_size);
	errno = 0;
	CHECK(ibv_alloc_dm(e->ctx, &da) == NULL && errno == EINVAL, "ibv_alloc_dm of 0 bytes: %s",
	      strerror(errno));
	da.length = ax.max_dm_size + 1;
	errno = 0;
	CHECK(ibv_alloc_dm(e->ctx, &da) == NULL && errno == ENOMEM,
	      "ibv_alloc_dm above max_dm_size: %s", strerror(errno));
	da.length = 8192;
	da.log_align_req = 12;
	dm = ibv_alloc_dm(e->ctx, &da);
	CHECK(dm != NULL && dm->context == e->ctx, "ibv_alloc_dm(8 KiB, 4 KiB aligned): %s",
	      dm != NULL ? "ok" : strerror(errno));
	if (dm == NULL)
		return;
	for (i = 0; i < 256; i++)
		pat[i] = (uint8_t)(i * 7 + 3);
	rc = ibv_memcpy_to_dm(dm, 100, pat, sizeof(pat));
	memset(back, 0, sizeof(back));
	CHECK(rc == 0 && ibv_memcpy_from_dm(back, dm, 100, sizeof(back)) == 0 &&
	      memcmp(back, pat, sizeof(pat)) == 0, "ibv_memcpy_to_dm / _from_dm round trip");
	CHECK(ibv_memcpy_to_dm(dm, 8000, pat, sizeof(pat)) == EINVAL &&
	      ibv_memcpy_from_dm(back, dm, 8192, 1) == EINVAL, "copies past the DM: EINVAL");
	errno = 0;
	mr = ibv_reg_dm_mr(e->pd, dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr == NULL && errno == EINVAL, "ibv_reg_dm_mr without ZERO_BASED: %s",
	      strerror(errno));
	errno = 0;
	CHECK(ibv_reg_dm_mr(e->pd, dm, 4096, 4097, IBV_ACCESS_ZERO_BASED) == NULL &&
	      errno == EINVAL, "ibv_reg_dm_mr past the DM: %s", strerror(errno));
	mr = ibv_reg_dm_mr(e->pd, dm, 0, 4096, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr != NULL && mr->addr == NULL && mr->length == 4096, "ibv_reg_dm_mr(ZERO_BASED): %s",
	      mr != NULL ? "ok" : strerror(errno));
	if (mr == NULL)
		goto out;
	CHECK(ibv_free_dm(dm) == EBUSY, "ibv_free_dm with an MR on it: EBUSY");
	/* A peer's WRITE to offset 512. */
	memset(e->buf, 0x5D, 64);
	rc = check_write(e->qp, e->cq, 101, e->buf, e->mr->lkey, 64, 512, mr->rkey, &wc);
	memset(back, 0, sizeof(back));
	ibv_memcpy_from_dm(back, dm, 512, 64);
	CHECK(rc == 1 && wc.status == IBV_WC_SUCCESS && back[0] == 0x5D && back[63] == 0x5D,
	      "RDMA WRITE into the DM MR at offset 512: %s",
	      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	/* A peer's READ of offset 100 (the pattern). */
	memset(e->buf + 4096, 0, 256);
	rc = check_post1(e->qp, e->cq, 102, IBV_WR_RDMA_READ, e->buf + 4096, e->mr->lkey, 256,
			 100, mr->rkey, &wc);
	CHECK(rc == 1 && wc.status == IBV_WC_SUCCESS && memcmp(e->buf + 4096, pat, 256) == 0,
	      "RDMA READ from the DM MR at offset 100: %s",
	      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	/* A local SGE by offset: WRITE the DM's bytes 100.. into host memory. */
	memset(e->buf + 4096, 0, 256);
	rc = check_write(e->qp, e->cq, 103, (void *)(uintptr_t)100, mr->lkey, 256,
			 (uintptr_t)e->buf + 4096, e->mr->rkey, &wc);
	CHECK(rc == 1 && wc.status == IBV_WC_SUCCESS && memcmp(e->buf + 4096, pat, 256) == 0,
	      "RDMA WRITE from the DM MR (SGE at offset 100): %s",
	      rc == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	CHECK(ibv_dereg_mr(mr) == 0, "dereg the DM MR");
out:
	CHECK(ibv_free_dm(dm) == 0, "ibv_free_dm");
}

static uint64_t
check_raw_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v) != 0 || v.comp_mask != IBV_VALUES_MASK_RAW_CLOCK)
		return 0;
	return (uint64_t)v.raw_clock.tv_sec * 1000000000u + (uint64_t)v.raw_clock.tv_nsec;
}

static uint64_t
check_realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Issue 15: completion timestamps in an extended CQ, on the device clock
 * that ibv_query_rt_values_ex reads (each between the clock read before
 * the post and after the poll, increasing), and on the wall clock. */
static void
check_timestamps(struct check_env *e)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_values_ex v = { .comp_mask = 0 };
	struct ibv_device_attr_ex ax;
	struct check_env e2 = *e;
	uint64_t t0, t1, w0, w1, ts[3] = { 0 }, wall[3] = { 0 };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int rc, i, n = 0;

	rc = ibv_query_device_ex(e->ctx, NULL, &ax);
	CHECK(rc == 0 && ax.hca_core_clock == 1000000 && ax.completion_timestamp_mask == UINT64_MAX,
	      "hca_core_clock %llu kHz, completion_timestamp_mask %#llx",
	      (unsigned long long)ax.hca_core_clock,
	      (unsigned long long)ax.completion_timestamp_mask);
	rc = ibv_query_rt_values_ex(e->ctx, &v);
	CHECK(rc == 0 && v.comp_mask == 0, "ibv_query_rt_values_ex asking nothing: nothing");
	cqx = ibv_create_cq_ex(e->ctx, &ca);
	CHECK(cqx != NULL, "ibv_create_cq_ex with COMPLETION_TIMESTAMP(_WALLCLOCK): %s",
	      strerror(errno));
	if (cqx == NULL)
		return;
	e2.cq = ibv_cq_ex_to_cq(cqx);
	qp = check_qp_rts(&e2, 1);
	CHECK(qp != NULL, "a QP on the stamping CQ: %s", qp != NULL ? "ok" : strerror(errno));
	t0 = check_raw_clock(e->ctx);
	w0 = check_realtime_ns();
	for (i = 0; qp != NULL && i < 3; i++) {
		struct ibv_sge sge = { (uintptr_t)e->buf, 16, e->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 80 + (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)e->buf + 1024;
		wr.wr.rdma.rkey = e->mr->rkey;
		if (ibv_post_send(qp, &wr, &bad) != 0)
			break;
		/* Wait for it before the next: distinct times, in order. */
		rc = ENOENT;
		for (int k = 0; k < 2000000 && rc == ENOENT; k++)
			rc = ibv_start_poll(cqx, &pa);
		if (rc != 0)
			break;
		if (cqx->status == IBV_WC_SUCCESS && cqx->wr_id == 80 + (uint64_t)i) {
			ts[n] = ibv_wc_read_completion_ts(cqx);
			wall[n] = ibv_wc_read_completion_wallclock_ns(cqx);
			n++;
		}
		ibv_end_poll(cqx);
	}
	t1 = check_raw_clock(e->ctx);
	w1 = check_realtime_ns();
	CHECK(n == 3, "three stamped completions (%d)", n);
	for (i = 0; i < n; i++) {
		CHECK(t0 != 0 && ts[i] >= t0 && ts[i] <= t1 && (i == 0 || ts[i] > ts[i - 1]),
		      "completion %d at %llu, within the device clock's [%llu, %llu], increasing", i,
		      (unsigned long long)ts[i], (unsigned long long)t0, (unsigned long long)t1);
		/* The wall clock: the same instant, give or take the two clocks'
		 * reading apart (100 us). */
		CHECK(wall[i] + 100000 >= w0 && wall[i] <= w1 + 100000,
		      "completion %d at wall clock %llu within [%llu, %llu]", i,
		      (unsigned long long)wall[i], (unsigned long long)w0, (unsigned long long)w1);
	}
	/* ibv_poll_cq on the same CQ still works. */
	rc = qp != NULL ? check_write(qp, e2.cq, 90, e->buf, e->mr->lkey, 8,
				     (uintptr_t)e->buf + 1024, e->mr->rkey, &wc) : 0;
	CHECK(rc == 1 && wc.wr_id == 90 && wc.status == IBV_WC_SUCCESS,
	      "ibv_poll_cq on a stamping CQ");
	if (qp != NULL)
		ibv_destroy_qp(qp);
	CHECK(ibv_destroy_cq(e2.cq) == 0, "destroy the stamping CQ");
}

/* Issue 13, defect 5: unmapped memory, or read-only memory for a writable
 * MR, is refused with EFAULT, as ibv_reg_mr does. */
static void
check_reg_unmapped(struct check_env *e)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	if (m == MAP_FAILED || munmap(m + pg, pg) != 0) {
		CHECK(0, "mmap: %s", strerror(errno));
		return;
	}
	errno = 0;
	mr = ibv_reg_mr(e->pd, m + pg, pg, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr == NULL && errno == EFAULT, "reg_mr of an unmapped page: %s",
	      mr == NULL ? strerror(errno) : "registered");
	errno = 0;
	mr = ibv_reg_mr(e->pd, m, pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr == NULL && errno == EFAULT, "REMOTE_WRITE on read-only memory: %s",
	      mr == NULL ? strerror(errno) : "registered");
	mr = ibv_reg_mr(e->pd, m, pg, IBV_ACCESS_REMOTE_READ);
	CHECK(mr != NULL, "REMOTE_READ on read-only memory: %s",
	      mr != NULL ? "registered" : strerror(errno));
	if (mr != NULL)
		ibv_dereg_mr(mr);
	munmap(m, pg);
}

/* Issue 13, defect 15: a GID table array too small fails with EINVAL (as
 * rdma-core), not a partial table; the vendor id is not 0. */
static void
check_gid_table_and_vendor(struct check_env *e)
{
	struct ibv_gid_entry t[4];
	struct ibv_device_attr da;
	ssize_t n;

	n = ibv_query_gid_table(e->ctx, t, 4, 0);
	CHECK(n == 2, "query_gid_table(4 entries) of a 2-GID device: %zd", n);
	n = ibv_query_gid_table(e->ctx, t, 1, 0);
	CHECK(n == -EINVAL, "query_gid_table(1 entry) of a 2-GID device: %zd (want -EINVAL)", n);
	n = ibv_query_gid_table(e->ctx, t, 0, 0);
	CHECK(n == -EINVAL, "query_gid_table(0 entries): %zd (want -EINVAL)", n);
	CHECK(ibv_query_device(e->ctx, &da) == 0 && da.vendor_id == 0xFFFFFF,
	      "default vendor_id 0x%x (want 0xffffff)", da.vendor_id);
}

/* Issue 13, defect 11: a second destroy of each kind is EINVAL (errno too)
 * and touches no freed memory (ASan would report it). */
static void
check_double_destroy(struct check_env *e)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int rc;

#define CHECK_TWICE(call, what)                                                 \
	do {                                                                    \
		rc = call;                                                      \
		CHECK(rc == 0, "%s: %s", what, strerror(rc));                  \
		errno = 0;                                                      \
		rc = call;                                                      \
		CHECK(rc == EINVAL && errno == EINVAL, "%s again: %s (errno %s)", what, \
		      strerror(rc), strerror(errno));                           \
	} while (0)

	ctx = ibv_open_device(e->ctx->device);
	pd = ibv_alloc_pd(e->ctx);
	ch = ibv_create_comp_channel(e->ctx);
	cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
	mr = pd != NULL ? ibv_reg_mr(pd, e->buf, 64, IBV_ACCESS_LOCAL_WRITE) : NULL;
	ia.send_cq = ia.recv_cq = cq;
	qp = pd != NULL && cq != NULL ? ibv_create_qp(pd, &ia) : NULL;
	if (ctx == NULL || pd == NULL || ch == NULL || cq == NULL || mr == NULL || qp == NULL) {
		CHECK(0, "objects to destroy twice: %s", strerror(errno));
		return;
	}
	CHECK_TWICE(ibv_destroy_qp(qp), "ibv_destroy_qp");
	/* An SRQ: held by its QP (EBUSY), then destroyed once. */
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 10, .max_sge = 1 } };
		struct ibv_srq_attr q;
		struct ibv_srq *srq = ibv_create_srq(pd, &sa);

		CHECK(srq != NULL && sa.attr.max_wr >= 10, "ibv_create_srq: %s",
		      srq == NULL ? strerror(errno) : "ok");
		if (srq != NULL) {
			ia.srq = srq;
			qp = ibv_create_qp(pd, &ia);
			ia.srq = NULL;
			CHECK(qp != NULL && qp->srq == srq, "a QP on the SRQ: %s",
			      qp == NULL ? strerror(errno) : "ok");
			rc = ibv_destroy_srq(srq);
			CHECK(rc == EBUSY, "ibv_destroy_srq with a QP on it: %s", strerror(rc));
			rc = check_srq_resize(ctx, srq);
			CHECK(rc == 0, "ibv_modify_srq(MAX_WR) grows the SRQ: 40 WRs posted");
			q.srq_limit = 3;
			rc = ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT);
			CHECK(rc == 0 && ibv_query_srq(srq, &q) == 0 && q.srq_limit == 3,
			      "arm the limit, query it: %s", strerror(rc));
			if (qp != NULL)
				ibv_destroy_qp(qp);
			CHECK_TWICE(ibv_destroy_srq(srq), "ibv_destroy_srq");
		}
	}
	/* A channel's fd is blocking, as libibverbs' is: ibv_get_cq_event()
	 * sleeps; made non-blocking (UCX does), it answers EAGAIN at once. */
	{
		struct ibv_cq *ecq;
		void *ectx;

		CHECK(!(fcntl(ch->fd, F_GETFL) & O_NONBLOCK), "a new channel's fd is non-blocking");
		CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0,
		      "fcntl(O_NONBLOCK): %s", strerror(errno));
		errno = 0;
		rc = ibv_get_cq_event(ch, &ecq, &ectx);
		CHECK(rc == -1 && errno == EAGAIN, "ibv_get_cq_event, non-blocking, no event: %d (%s)",
		      rc, strerror(errno));
	}
	CHECK_TWICE(ibv_dereg_mr(mr), "ibv_dereg_mr");
	CHECK_TWICE(ibv_destroy_cq(cq), "ibv_destroy_cq");
	CHECK_TWICE(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	CHECK_TWICE(ibv_destroy_comp_channel(ch), "ibv_destroy_comp_channel");
	CHECK_TWICE(ibv_close_device(ctx), "ibv_close_device (a second context)");
#undef CHECK_TWICE
}

/* Take XRC QP @p qp to RTS towards QP @p dest of this device, with the
 * masks of its side (ibv_xsrq_pingpong's). */
static int
check_xrc_connect(struct check_env *e, struct ibv_qp *qp, uint32_t dest)
{
	bool tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_attr a;
	union ibv_gid gid;

	if (ibv_query_gid(e->ctx, 1, 0, &gid) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER : 0)) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN |
			     (tgt ? 0 : IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC));
}

/*
 * XRC through the drop-in (issue 15): the XRC cap, XRC domains of a file
 * (each open its own handle), ibv_create_srq_ex and ibv_get_srq_num, an XRC
 * target made by ibv_create_qp_ex and opened again by ibv_open_qp, an
 * initiator posting with ibv_wr_set_xrc_srqn; the SEND lands in the SRQ and
 * completes with the target's qp_num; a domain in use does not close.
 */
static void
check_xrc(struct check_env *e)
{
	char path[] = "/tmp/drnic-ibv-xrcd-XXXXXX";
	struct ibv_xrcd_init_attr xa = { IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, -1,
					 O_CREAT };
	struct ibv_srq_init_attr_ex sa = { 0 };
	struct ibv_qp_init_attr_ex qa = { 0 };
	struct ibv_qp_open_attr oa = { 0 };
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_sge sge = { (uintptr_t)e->buf, 64, e->mr->lkey };
	struct ibv_xrcd *x, *x2, *x3;
	struct ibv_srq *srq = NULL, *basic;
	struct ibv_qp *tgt, *ini, *open = NULL;
	struct ibv_qp_ex *qx;
	struct ibv_device_attr da;
	struct ibv_wc wc[2];
	uint32_t srqn = 0, n;
	int fd, rc, got = 0, i;
	time_t end;

	CHECK(ibv_query_device(e->ctx, &da) == 0 && (da.device_cap_flags & IBV_DEVICE_XRC),
	      "IBV_DEVICE_XRC in device_cap_flags");
	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	unlink(path);
	xa.fd = fd;
	x2 = ibv_open_xrcd(e->ctx, &xa);
	x3 = ibv_open_xrcd(e->ctx, &xa);
	CHECK(x2 != NULL && x3 != NULL && x2 != x3, "two opens of one file: two handles");
	xa.oflags = O_CREAT | O_EXCL;
	CHECK(ibv_open_xrcd(e->ctx, &xa) == NULL && errno == EEXIST, "O_EXCL: %s",
	      strerror(errno));
	/* (A second close is not tried: libibverbs' inline ibv_close_xrcd()
	 * reads the freed object's context before the drop-in sees it.) */
	CHECK(ibv_close_xrcd(x2) == 0 && ibv_close_xrcd(x3) == 0, "close both");
	close(fd);
	xa.fd = -1;
	xa.oflags = O_CREAT;
	x = ibv_open_xrcd(e->ctx, &xa);
	CHECK(x != NULL, "ibv_open_xrcd(-1, O_CREAT): %s", strerror(errno));
	if (x == NULL)
		return;

	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ;
	sa.srq_type = IBV_SRQT_BASIC;
	sa.pd = e->pd;
	sa.cq = e->cq;
	basic = ibv_create_srq_ex(e->ctx, &sa);
	CHECK(basic != NULL, "ibv_create_srq_ex(BASIC): %s", strerror(errno));
	rc = basic != NULL ? ibv_get_srq_num(basic, &n) : 0;
	CHECK(rc == EINVAL, "ibv_get_srq_num of a basic SRQ: %s", strerror(rc));
	if (basic != NULL)
		ibv_destroy_srq(basic);
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = x;
	srq = ibv_create_srq_ex(e->ctx, &sa);
	CHECK(srq != NULL && ibv_get_srq_num(srq, &srqn) == 0 && srqn != 0,
	      "ibv_create_srq_ex(XRC) and its number: %s", strerror(errno));

	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = x;
	tgt = ibv_create_qp_ex(e->ctx, &qa);
	CHECK(tgt != NULL, "ibv_create_qp_ex(XRC_RECV): %s", strerror(errno));
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.send_cq = e->cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.pd = e->pd;
	qa.send_ops_flags = IBV_QP_EX_WITH_SEND;
	ini = ibv_create_qp_ex(e->ctx, &qa);
	CHECK(ini != NULL, "ibv_create_qp_ex(XRC_SEND): %s", strerror(errno));
	if (srq == NULL || tgt == NULL || ini == NULL)
		goto out;
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = tgt->qp_num;
	oa.xrcd = x;
	oa.qp_type = IBV_QPT_XRC_RECV;
	open = ibv_open_qp(e->ctx, &oa);
	CHECK(open != NULL && open != tgt && open->qp_num == tgt->qp_num,
	      "ibv_open_qp of the target: %s", strerror(errno));
	oa.qp_num = ini->qp_num;
	CHECK(ibv_open_qp(e->ctx, &oa) == NULL && errno == ENOENT,
	      "ibv_open_qp of an initiator: %s", strerror(errno));
	CHECK(check_xrc_connect(e, tgt, ini->qp_num) == 0, "connect the target: %s",
	      strerror(errno));
	CHECK(check_xrc_connect(e, ini, tgt->qp_num) == 0, "connect the initiator: %s",
	      strerror(errno));

	rwr.wr_id = 77;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	sge.addr = (uintptr_t)e->buf + 4096;
	CHECK(ibv_post_srq_recv(srq, &rwr, &rbad) == 0, "post to the XRC SRQ");
	memset(e->buf, 0x5A, 64);
	memset(e->buf + 4096, 0, 64);
	sge.addr = (uintptr_t)e->buf;
	qx = ibv_qp_to_qp_ex(ini);
	ibv_wr_start(qx);
	qx->wr_id = 78;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_xrc_srqn(qx, srqn);
	ibv_wr_set_sge(qx, e->mr->lkey, (uintptr_t)e->buf, 64);
	rc = ibv_wr_complete(qx);
	CHECK(rc == 0, "ibv_wr_complete: %s", strerror(rc));
	for (end = time(NULL) + 5; got < 2 && time(NULL) <= end; got += rc > 0 ? rc : 0)
		rc = ibv_poll_cq(e->cq, 2 - got, wc + got);
	CHECK(got == 2, "two completions: %d", got);
	for (i = 0; i < got; i++) {
		if (wc[i].wr_id == 77)
			CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].opcode == IBV_WC_RECV &&
			      wc[i].byte_len == 64 && wc[i].qp_num == tgt->qp_num &&
			      wc[i].src_qp == ini->qp_num,
			      "receive: %s qp_num %u src_qp %u", ibv_wc_status_str(wc[i].status),
			      wc[i].qp_num, wc[i].src_qp);
		else
			CHECK(wc[i].wr_id == 78 && wc[i].status == IBV_WC_SUCCESS &&
			      wc[i].opcode == IBV_WC_SEND && wc[i].qp_num == ini->qp_num,
			      "send: wr_id %llu %s", (unsigned long long)wc[i].wr_id,
			      ibv_wc_status_str(wc[i].status));
	}
	CHECK(memcmp(e->buf + 4096, e->buf, 64) == 0, "the bytes in the SRQ's buffer");
	rc = ibv_close_xrcd(x);
	CHECK(rc == EBUSY, "close an XRCD with an SRQ and a QP in it: %s", strerror(rc));
	/* The creating handle goes first: the QP stays for the opened one,
	 * and an event about it (a SEND for no SRQ: QP_REQ_ERR) still names
	 * the creating handle, whose memory stays until the QP goes. */
	CHECK(ibv_destroy_qp(tgt) == 0, "destroy the creating handle of the target");
	if (open != NULL) {
		struct ibv_async_event ev;
		struct pollfd pfd = { e->ctx->async_fd, POLLIN, 0 };

		ibv_wr_start(qx);
		qx->wr_id = 79;
		ibv_wr_send(qx);
		ibv_wr_set_xrc_srqn(qx, srqn + 1000);
		ibv_wr_set_sge(qx, e->mr->lkey, (uintptr_t)e->buf, 8);
		CHECK(ibv_wr_complete(qx) == 0, "a SEND for no SRQ");
		for (end = time(NULL) + 5, got = 0; got < 1 && time(NULL) <= end;
		     got += rc > 0 ? rc : 0)
			rc = ibv_poll_cq(e->cq, 1, wc);
		CHECK(got == 1 && wc[0].wr_id == 79 && wc[0].status == IBV_WC_REM_INV_REQ_ERR,
		      "its completion: %s", got ? ibv_wc_status_str(wc[0].status) : "none");
		rc = poll(&pfd, 1, 5000) == 1 ? ibv_get_async_event(e->ctx, &ev) : -1;
		CHECK(rc == 0 && ev.event_type == IBV_EVENT_QP_REQ_ERR && ev.element.qp == tgt &&
		      ev.element.qp->qp_num == open->qp_num,
		      "QP_REQ_ERR about the target, naming its creating handle");
		if (rc == 0)
			ibv_ack_async_event(&ev);
	}
	CHECK(open == NULL || ibv_destroy_qp(open) == 0, "destroy the opened handle");
	tgt = NULL;
out:
	CHECK(ini == NULL || ibv_destroy_qp(ini) == 0, "destroy the initiator");
	CHECK(tgt == NULL || ibv_destroy_qp(tgt) == 0, "destroy the target");
	CHECK(srq == NULL || ibv_destroy_srq(srq) == 0, "destroy the XRC SRQ");
	rc = ibv_close_xrcd(x);
	CHECK(rc == 0, "close the XRCD: %s", strerror(rc));
}

static bool
check_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* RTS -> SQD with notification; run the engine (polling @p cq: inline
 * progress) until @p ctx's async fd is readable. */
static bool
check_drain(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_context *ctx)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct ibv_wc wc;
	int i;

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) != 0)
		return false;
	for (i = 0; i < 200000 && !check_readable(ctx->async_fd); i++)
		(void)ibv_poll_cq(cq, 1, &wc);
	return check_readable(ctx->async_fd);
}

/*
 * Issue 13, defect 14: each context sees the async events of its own
 * objects, not those of another context on the same device; a QP whose
 * event was never read is destroyed, and its CQ, PD and context close.
 */
static void
check_async_per_context(struct check_env *e)
{
	struct check_env e2 = { .buf = e->buf, .mr = e->mr };
	struct ibv_async_event ev;
	int rc;

	e2.ctx = ibv_open_device(e->ctx->device);
	e2.pd = e2.ctx != NULL ? ibv_alloc_pd(e2.ctx) : NULL;
	e2.cq = e2.pd != NULL ? ibv_create_cq(e2.ctx, 16, NULL, NULL, 0) : NULL;
	e2.qp = e2.cq != NULL ? check_qp_rts(&e2, 1) : NULL;
	if (e2.qp == NULL) {
		CHECK(0, "a second context with a QP in RTS: %s", strerror(errno));
		return;
	}
	CHECK(e2.ctx->async_fd != e->ctx->async_fd, "each context has its own async fd");
	CHECK(check_drain(e->qp, e->cq, e->ctx), "SQ_DRAINED of context 1's QP reaches it");
	CHECK(!check_readable(e2.ctx->async_fd), "... and not context 2");
	rc = ibv_get_async_event(e->ctx, &ev);
	CHECK(rc == 0 && ev.event_type == IBV_EVENT_SQ_DRAINED && ev.element.qp == e->qp,
	      "context 1 takes SQ_DRAINED of its QP (%s)",
	      rc == 0 ? ibv_event_type_str(ev.event_type) : strerror(errno));
	if (rc == 0)
		ibv_ack_async_event(&ev);
	CHECK(check_drain(e2.qp, e2.cq, e2.ctx), "SQ_DRAINED of context 2's QP reaches it");
	CHECK(!check_readable(e->ctx->async_fd), "... and not context 1");
	/* Never read: the destroy does not wait for it. */
	rc = ibv_destroy_qp(e2.qp);
	CHECK(rc == 0, "destroy a QP with an unread event: %s", strerror(rc));
	rc = ibv_destroy_cq(e2.cq);
	CHECK(rc == 0, "then its CQ: %s", strerror(rc));
	rc = ibv_dealloc_pd(e2.pd);
	CHECK(rc == 0, "its PD: %s", strerror(rc));
	rc = ibv_close_device(e2.ctx);
	CHECK(rc == 0, "its context: %s", strerror(rc));
}

/* Wait (running the engine through @p cq) for an async event on @p ctx;
 * 0 and its type in @p type, or -1. */
static int
check_port_event(struct ibv_context *ctx, struct ibv_cq *cq, enum ibv_event_type *type)
{
	struct ibv_async_event ev;
	struct timespec t0, t;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		(void)ibv_poll_cq(cq, 1, &wc);      /* its QP's: runs the engine */
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!check_readable(ctx->async_fd) && t.tv_sec - t0.tv_sec < 5);
	if (!check_readable(ctx->async_fd) || ibv_get_async_event(ctx, &ev) != 0)
		return -1;
	*type = ev.event_type;
	ibv_ack_async_event(&ev);
	return 0;
}

/*
 * "port" mode: a device on an ethdev link over a net_ring port (frames go
 * back to it); the port going down and up reaches both contexts of the
 * device as PORT_ERR and PORT_ACTIVE (issue 13, defect 14: device events
 * go to every context).
 */
static int
check_port_events(struct ibv_device *dev, const char *ring)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx[2];
	struct ibv_pd *pd = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	enum ibv_event_type t;
	uint16_t port;
	int i;

	ctx[0] = ibv_open_device(dev);
	ctx[1] = ibv_open_device(dev);
	if (ctx[0] != NULL) {
		pd = ibv_alloc_pd(ctx[0]);
		cq = ibv_create_cq(ctx[0], 4, NULL, NULL, 0);
	}
	ia.send_cq = ia.recv_cq = cq;
	if (pd != NULL && cq != NULL)
		qp = ibv_create_qp(pd, &ia);     /* polling its CQ runs the engine */
	if (ctx[1] == NULL || qp == NULL || rte_eth_dev_get_port_by_name(ring, &port) != 0) {
		printf("FAIL: two contexts, a QP, port %s: %s\n", ring, strerror(errno));
		return 1;
	}
	CHECK(rte_eth_dev_set_link_down(port) == 0, "set %s down", ring);
	for (i = 0; i < 2; i++)
		CHECK(check_port_event(ctx[i], cq, &t) == 0 && t == IBV_EVENT_PORT_ERR,
		      "context %d gets PORT_ERR", i + 1);
	CHECK(rte_eth_dev_set_link_up(port) == 0, "set %s up", ring);
	for (i = 0; i < 2; i++)
		CHECK(check_port_event(ctx[i], cq, &t) == 0 && t == IBV_EVENT_PORT_ACTIVE,
		      "context %d gets PORT_ACTIVE", i + 1);
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dealloc_pd(pd) == 0,
	      "destroy QP, CQ, PD");
	CHECK(ibv_close_device(ctx[1]) == 0 && ibv_close_device(ctx[0]) == 0, "close both");
	return failures == 0 ? 0 : 1;
}

/* One completion of extended CQ @p cq within 5 s, read with the
 * ibv_wc_read_*() calls into @p wc. */
static int
check_pollx(struct ibv_cq_ex *cq, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct timespec t0, t;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		rc = ibv_start_poll(cq, &pa);
		if (rc == 0) {
			memset(wc, 0, sizeof(*wc));
			wc->wr_id = cq->wr_id;
			wc->status = cq->status;
			wc->opcode = ibv_wc_read_opcode(cq);
			wc->byte_len = ibv_wc_read_byte_len(cq);
			wc->qp_num = ibv_wc_read_qp_num(cq);
			wc->wc_flags = ibv_wc_read_wc_flags(cq);
			if (wc->wc_flags & IBV_WC_WITH_INV)
				wc->invalidated_rkey = ibv_wc_read_invalidated_rkey(cq);
			ibv_end_poll(cq);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (rc == ENOENT && t.tv_sec - t0.tv_sec < 5);
	return 0;
}

/* WR @p id of @p op, one SGE, to @p raddr / @p rkey (0 when none). */
static void
check_wr1(struct ibv_send_wr *wr, uint64_t id, struct ibv_sge *sge, enum ibv_wr_opcode op,
	  uint64_t raddr, uint32_t rkey)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
}

/* Post @p wr (signaled) on @p qp; its completion's status and opcode. */
static bool
check_post_wc(struct check_env *m, struct ibv_send_wr *wr, enum ibv_wc_status status,
	      enum ibv_wc_opcode opcode, struct ibv_wc *wc)
{
	struct ibv_send_wr *bad = NULL;

	wr->send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(m->qp, wr, &bad) == 0 && check_poll1(m->cq, wc) == 1 &&
	       wc->wr_id == wr->wr_id && wc->status == status &&
	       (status != IBV_WC_SUCCESS || wc->opcode == opcode) &&
	       wc->qp_num == m->qp->qp_num;
}

/*
 * Memory windows through the drop-in (issue 15): the caps, ibv_alloc_mw,
 * ibv_bind_mw (type 1), IBV_WR_BIND_MW (type 2), remote access through the
 * windows' rkeys, IBV_WR_SEND_WITH_INV (the receive says WITH_INV and the
 * rkey) and ibv_wr_local_inv; the QP is connected to itself, so one QP
 * binds, accesses and receives.
 */
static void
check_memory_windows(struct check_env *e)
{
	struct check_env m = *e;
	uint8_t *buf = calloc(1, 16384);
	struct ibv_device_attr da;
	struct ibv_mr *mr = NULL;
	struct ibv_mw *mw1 = NULL, *mw2 = NULL;
	struct ibv_mw_bind b = { 0 };
	struct ibv_mw_bind_info bi2;
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				       IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_cq_ex *cqx;
	struct ibv_qp_ex *qx;
	struct ibv_wc wc;
	uint32_t k0, k2;

	CHECK(ibv_query_device(e->ctx, &da) == 0 &&
	      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
	      !(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2A) && da.max_mw > 0,
	      "caps: MEM_WINDOW, TYPE_2B (not 2A), max_mw %d", da.max_mw);
	/* An extended CQ: the invalidated rkey is read with
	 * ibv_wc_read_invalidated_rkey() (classic polls work on it too). */
	cqx = ibv_create_cq_ex(e->ctx, &ca);
	CHECK(cqx != NULL, "ibv_create_cq_ex for the windows' QP");
	if (cqx == NULL) {
		free(buf);
		return;
	}
	m.cq = ibv_cq_ex_to_cq(cqx);
	m.qp = check_qp_rts(&m, 2);
	if (buf != NULL && m.qp != NULL)
		mr = ibv_reg_mr(e->pd, buf, 16384, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	if (mr != NULL) {
		mw1 = ibv_alloc_mw(e->pd, IBV_MW_TYPE_1);
		mw2 = ibv_alloc_mw(e->pd, IBV_MW_TYPE_2);
	}
	CHECK(mw1 != NULL && mw2 != NULL && mw1->type == IBV_MW_TYPE_1 && mw1->pd == e->pd &&
	      mw2->type == IBV_MW_TYPE_2 && mw1->context == e->ctx,
	      "ibv_alloc_mw type 1 and 2");
	if (mw1 == NULL || mw2 == NULL)
		goto out;

	/* Type 1: ibv_bind_mw; the rkey takes the next key byte now. */
	k0 = mw1->rkey;
	b.wr_id = 1;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info = (struct ibv_mw_bind_info){ mr, (uintptr_t)buf + 1024, 4096,
						 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	CHECK(ibv_bind_mw(m.qp, mw1, &b) == 0 && mw1->rkey == ibv_inc_rkey(k0) &&
	      check_poll1(m.cq, &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_BIND_MW, "ibv_bind_mw: BIND_MW completion, rkey %#x",
	      mw1->rkey);
	CHECK(ibv_bind_mw(m.qp, mw2, &b) == EINVAL, "ibv_bind_mw of a type 2 window: EINVAL");
	memset(buf + 8192, 0xA5, 100);
	sge = (struct ibv_sge){ (uintptr_t)buf + 8192, 100, mr->lkey };
	check_wr1(&wr, 2, &sge, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 1024 + 3990, mw1->rkey);
	CHECK(check_post_wc(&m, &wr, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, &wc) &&
	      buf[1024 + 3990] == 0xA5 && buf[1024 + 4089] == 0xA5,
	      "RDMA WRITE through the type 1 window");

	/* Type 2: IBV_WR_BIND_MW with a key byte of ours. */
	k2 = (mw2->rkey & ~0xFFu) | 0x3C;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 3;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = k2;
	bi2 = (struct ibv_mw_bind_info){ mr, (uintptr_t)buf + 6144, 1024, IBV_ACCESS_REMOTE_READ };
	wr.bind_mw.bind_info = bi2;
	CHECK(check_post_wc(&m, &wr, IBV_WC_SUCCESS, IBV_WC_BIND_MW, &wc),
	      "IBV_WR_BIND_MW of a type 2 window");
	memset(buf + 6144, 0x5A, 1024);
	sge = (struct ibv_sge){ (uintptr_t)buf + 12288, 1024, mr->lkey };
	check_wr1(&wr, 4, &sge, IBV_WR_RDMA_READ, (uintptr_t)buf + 6144, k2);
	CHECK(check_post_wc(&m, &wr, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, &wc) &&
	      wc.byte_len == 1024 && buf[12288] == 0x5A && buf[12288 + 1023] == 0x5A,
	      "RDMA READ through the type 2 window");

	/* SEND with Invalidate of the type 2 window: the receive says so. */
	rsge = (struct ibv_sge){ (uintptr_t)buf + 14336, 64, mr->lkey };
	rwr.wr_id = 5;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	CHECK(ibv_post_recv(m.qp, &rwr, &rbad) == 0, "post_recv");
	sge = (struct ibv_sge){ (uintptr_t)buf + 8192, 16, mr->lkey };
	check_wr1(&wr, 6, &sge, IBV_WR_SEND_WITH_INV, 0, 0);
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = k2;
	{
		/* One CQ, one QP: the receive completes before the SEND's ACK. */
		struct ibv_send_wr *bad;
		struct ibv_wc sw;

		CHECK(ibv_post_send(m.qp, &wr, &bad) == 0 && check_pollx(cqx, &wc) == 1 &&
		      check_pollx(cqx, &sw) == 1 && wc.wr_id == 5 &&
		      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == 16 && wc.wc_flags == IBV_WC_WITH_INV &&
		      wc.invalidated_rkey == k2 && wc.qp_num == m.qp->qp_num &&
		      sw.wr_id == 6 && sw.status == IBV_WC_SUCCESS && sw.opcode == IBV_WC_SEND,
		      "IBV_WR_SEND_WITH_INV: receive WITH_INV, ibv_wc_read_invalidated_rkey %#x",
		      wc.invalidated_rkey);
	}

	/* Bound again through ibv_qp_ex, invalidated by ibv_wr_local_inv. */
	qx = ibv_qp_to_qp_ex(m.qp);
	ibv_wr_start(qx);
	qx->wr_id = 7;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qx, mw2, ibv_inc_rkey(k2), &bi2);
	qx->wr_id = 8;
	ibv_wr_local_inv(qx, ibv_inc_rkey(k2));
	CHECK(ibv_wr_complete(qx) == 0 && check_poll1(m.cq, &wc) == 1 && wc.wr_id == 7 &&
	      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW &&
	      check_poll1(m.cq, &wc) == 1 && wc.wr_id == 8 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_LOCAL_INV, "ibv_wr_bind_mw, ibv_wr_local_inv");
	CHECK(ibv_dereg_mr(mr) == EBUSY, "dereg of an MR with a bound window: EBUSY");

	/* The invalidated rkey reads nothing. (The QP is its own peer: its
	 * responder's access error moves it to ERR, so the READ is flushed
	 * rather than NAKed; rnic_mw_autotest sees REM_ACCESS_ERR with two.) */
	memset(buf + 12288, 0, 64);
	sge = (struct ibv_sge){ (uintptr_t)buf + 12288, 64, mr->lkey };
	check_wr1(&wr, 9, &sge, IBV_WR_RDMA_READ, (uintptr_t)buf + 6144, ibv_inc_rkey(k2));
	wr.send_flags = IBV_SEND_SIGNALED;
	{
		struct ibv_send_wr *bad;

		CHECK(ibv_post_send(m.qp, &wr, &bad) == 0 && check_poll1(m.cq, &wc) == 1 &&
		      wc.wr_id == 9 && (wc.status == IBV_WC_REM_ACCESS_ERR ||
					wc.status == IBV_WC_WR_FLUSH_ERR) &&
		      buf[12288] == 0 && buf[12288 + 63] == 0,
		      "READ through an invalidated window fails (%s), nothing read",
		      ibv_wc_status_str(wc.status));
	}
out:
	CHECK((mw1 == NULL || ibv_dealloc_mw(mw1) == 0) && (mw2 == NULL || ibv_dealloc_mw(mw2) == 0),
	      "ibv_dealloc_mw");
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg MR");
	while (m.qp != NULL && ibv_poll_cq(m.cq, 1, &wc) > 0)
		;
	CHECK(m.qp != NULL && ibv_destroy_qp(m.qp) == 0, "destroy the windows' QP");
	CHECK(ibv_destroy_cq(m.cq) == 0, "destroy the extended CQ");
	free(buf);
}

#ifdef IBV_CHECK_RDMACM
/*
 * A thread blocked in rdma_get_cm_event() while another destroys the last id
 * and the channel, then interrupted by a signal: with the kernel's rdma_cm
 * it stays blocked (its read holds the closed fd's file), so a program
 * whose event thread is never joined (rping's) exits 0. drnic's used to
 * return an error from it (attached to drnicd: the daemon's channel was
 * gone), and rping's event thread then called exit(-1) under main's
 * return: ibv_two_proc_drnicd failed about once in eight runs, rping's
 * client exiting 255 after its 100 pings.
 */
/* A thread in rdma_get_cm_event() on ch: its id, and what the call gave. */
struct cmw {
	struct rdma_event_channel *ch;
	atomic_int tid;
	atomic_bool returned;
	int rc, err;
};
static atomic_bool cmw_signalled;

static void
cmw_on_signal(int sig)
{
	(void)sig;
	atomic_store(&cmw_signalled, true);
}

static void *
cmw_wait(void *arg)
{
	struct cmw *w = arg;
	struct rdma_cm_event *ev;

	atomic_store(&w->tid, (int)syscall(SYS_gettid));
	w->rc = rdma_get_cm_event(w->ch, &ev);
	w->err = errno;
	if (w->rc == 0)
		rdma_ack_cm_event(ev);
	atomic_store(&w->returned, true);
	return NULL;
}

/* Is thread @p tid of this process in poll(2) (its syscall file)? */
static bool
cmw_in_poll(int tid)
{
	char path[64], line[128] = "";
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(line, sizeof(line), f) != NULL && line[0] >= '0' && line[0] <= '9')
		nr = strtol(line, NULL, 10);
	fclose(f);
	return nr == SYS_poll || nr == SYS_ppoll;
}

/* Polled, at most 5 s: until @p w's thread waits in poll (its tid; 0: it
 * did not, or returned). */
static int
cmw_until_in_poll(struct cmw *w)
{
	int i, tid;

	for (i = 0; i < 5000 && !atomic_load(&w->returned); i++) {
		tid = atomic_load(&w->tid);
		if (tid != 0 && cmw_in_poll(tid))
			return tid;
		usleep(1000);
	}
	return 0;
}

static void
check_cm_destroy_waiter(void)
{
	static struct cmw w;    /* its thread outlives this call */
	struct sigaction sa = { .sa_handler = cmw_on_signal };   /* no SA_RESTART */
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id = NULL;
	pthread_t t;
	int i, tid;

	w.ch = ch;
	CHECK(ch != NULL && rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0,
	      "rdma_cm: a channel and an id on it: %s", strerror(errno));
	if (id == NULL || sigaction(SIGUSR1, &sa, NULL) != 0 ||
	    pthread_create(&t, NULL, cmw_wait, &w) != 0)
		return;
	tid = cmw_until_in_poll(&w);
	CHECK(tid != 0, "rdma_cm: a thread blocks in rdma_get_cm_event()");
	CHECK(rdma_destroy_id(id) == 0, "rdma_cm: destroy the id under it");
	rdma_destroy_event_channel(ch);
	pthread_kill(t, SIGUSR1);
	for (i = 0; i < 5000; i++) {
		if (atomic_load(&w.returned) ||
		    (atomic_load(&cmw_signalled) && cmw_in_poll(tid)))
			break;
		usleep(1000);
	}
	CHECK(!atomic_load(&w.returned),
	      "rdma_cm: the waiter stays blocked once its channel is destroyed, a signal "
	      "notwithstanding, as on the kernel's rdma_cm (it returned %d, errno %d)",
	      w.rc, w.err);
	CHECK(atomic_load(&cmw_signalled) && i < 5000,
	      "rdma_cm: ... it took the signal and waits again");
	pthread_detach(t);      /* blocked until the process exits */
}

/*
 * rdma_get_cm_event() called after the channel's destroy has returned:
 * rping's event thread, back from its DISCONNECTED event while main
 * destroys the channel, frees its state and returns. drnic's drop-in read
 * the freed channel then, and Debian's rping died of SIGSEGV at exit in
 * the interop case cm.lost-rx (2 CI runs of 5). The call now waits as one
 * that was inside does (above), and with the fd O_NONBLOCK fails EAGAIN;
 * each before the fix followed a freed pointer.
 */
static void
check_cm_late_waiter(void)
{
	static struct cmw w;    /* its thread outlives this call */
	struct rdma_event_channel *nb = rdma_create_event_channel();
	struct rdma_cm_event *ev = NULL;
	pthread_t t;
	int fl, rc;

	w.ch = rdma_create_event_channel();
	CHECK(w.ch != NULL && nb != NULL, "rdma_cm: two channels: %s", strerror(errno));
	if (w.ch == NULL || nb == NULL)
		return;
	fl = fcntl(nb->fd, F_GETFL);
	CHECK(fl >= 0 && fcntl(nb->fd, F_SETFL, fl | O_NONBLOCK) == 0,
	      "rdma_cm: O_NONBLOCK on a channel's fd");
	rdma_destroy_event_channel(nb);
	errno = 0;
	rc = rdma_get_cm_event(nb, &ev);
	CHECK(rc == -1 && errno == EAGAIN && ev == NULL,
	      "rdma_cm: a nonblocking rdma_get_cm_event() after the channel's destroy fails "
	      "EAGAIN (%d, errno %d)", rc, errno);
	rdma_destroy_event_channel(w.ch);
	if (pthread_create(&t, NULL, cmw_wait, &w) != 0)
		return;
	CHECK(cmw_until_in_poll(&w) != 0 && !atomic_load(&w.returned),
	      "rdma_cm: a blocking rdma_get_cm_event() after the channel's destroy waits "
	      "(it returned: %d, rc %d, errno %d)", (int)atomic_load(&w.returned), w.rc, w.err);
	pthread_detach(t);      /* blocked until the process exits */
}
#else
static void
check_cm_destroy_waiter(void)
{
	printf("ok: rdma_cm: not built (no <rdma/rdma_cma.h>)\n");
}

static void
check_cm_late_waiter(void)
{
}
#endif

int
main(int argc, char **argv)
{
	bool port_mode = argc > 1 && strcmp(argv[1], "port") == 0;
	const char *ring = "net_ring_ibvapi";
	struct check_env e = { 0 };
	struct ibv_device **list;
	char cfg[64];
	FILE *f;
	int n;

	/* Two GIDs (IPv4 and IPv6), default [ibverbs] ids. */
	snprintf(cfg, sizeof(cfg), "/tmp/drnic-ibv-api.%d.ini", (int)getpid());
	f = fopen(cfg, "w");
	if (f == NULL) {
		printf("FAIL: %s: %s\n", cfg, strerror(errno));
		return 1;
	}
	if (port_mode)
		fprintf(f, "[device]\nname = drnic_apip\nprogress = inline\nlink = ethdev\n"
			"link_args = dev=%s\n[ibverbs]\nport_state = link\n"
			"progress_thread = off\n", ring);
	else
		fprintf(f, "[device]\nname = drnic_api\nipv4 = 10.9.0.1\nipv6 = fd00::9\n");
	fclose(f);
	setenv("DRNIC_CONFIG", cfg, 1);
	list = ibv_get_device_list(&n);
	unlink(cfg);
	if (port_mode && list != NULL && n > 0)
		return check_port_events(list[0], ring);
	if (list == NULL || n < 1) {
		printf("FAIL: no device\n");
		return 1;
	}
	e.ctx = ibv_open_device(list[0]);
	if (e.ctx == NULL) {
		printf("FAIL: open %s: %s\n", ibv_get_device_name(list[0]), strerror(errno));
		return 1;
	}
	e.buf = calloc(1, 8192);
	e.pd = ibv_alloc_pd(e.ctx);
	e.cq = e.pd != NULL ? ibv_create_cq(e.ctx, 64, NULL, NULL, 0) : NULL;
	e.mr = e.cq != NULL ? ibv_reg_mr(e.pd, e.buf, 8192, IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	e.qp = e.mr != NULL ? check_qp_rts(&e, 8) : NULL;
	if (e.qp == NULL) {
		printf("FAIL: set-up (PD, CQ, MR, QP in RTS): %s\n", strerror(errno));
		return 1;
	}
	check_sge_counts(&e);
	check_reg_unmapped(&e);
	check_gid_table_and_vendor(&e);
	check_atomic_write(&e);
	check_rereg_mr(&e);
	check_parent_domain(&e);
	check_odp(&e);
	check_timestamps(&e);
	check_dm(&e);
	check_double_destroy(&e);
	check_memory_windows(&e);
	check_xrc(&e);
	check_async_per_context(&e);     /* leaves e.qp in SQD */
	check_cm_destroy_waiter();
	check_cm_late_waiter();

	CHECK(ibv_destroy_qp(e.qp) == 0, "destroy QP");
	CHECK(ibv_dereg_mr(e.mr) == 0, "dereg MR");
	CHECK(ibv_destroy_cq(e.cq) == 0, "destroy CQ");
	CHECK(ibv_dealloc_pd(e.pd) == 0, "dealloc PD");
	CHECK(ibv_close_device(e.ctx) == 0, "close device");
	ibv_free_device_list(list);
	free(e.buf);
	return failures == 0 ? 0 : 1;
}
