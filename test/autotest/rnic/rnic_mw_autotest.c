/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows end to end on the loopback wire, in both progress modes.
 * B owns the memory and binds windows on it; A reaches it through the
 * windows' rkeys. Type 1 (drnic_bind_mw()) and type 2 (BIND_MW work
 * requests): WRITE, READ and atomics inside a window land (every byte and
 * every WC field checked); outside its bounds or rights, through an old
 * rkey, after LOCAL_INV, after a SEND with Invalidate, or after the window
 * is deallocated, A's WQE completes REM_ACCESS_ERR and B's memory is
 * untouched. A SEND with Invalidate gives B's receive WC_WITH_INV and the
 * rkey. Binds and invalidations that break the rules complete
 * MW_BIND_ERR. Each case runs on a pair of its own (an error ends a pair).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>

#include "drnic_cq.h"

#include "test.h"
#include "rnic_fixture.h"

#define MW_OFF 4096u          /* the window's start in B's buffer */
#define MW_LEN 8192u
#define MW_MAX 4
#define ALL_REMOTE (DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ | \
		    DRNIC_ACCESS_REMOTE_ATOMIC)

struct mw_rig;

/* A case, on a pair of its own; the refused-access cases' parameters. */
struct mw_case {
	const char *name;
	int (*fn)(struct mw_rig *r, const struct mw_case *c);
	unsigned int rights;
	enum drnic_wr_opcode op;
	uint32_t off;
	uint32_t len;
};

struct mw_rig {
	struct rnic_pair p;
	struct rnic_pair_opts o;
	struct drnic_mw *mw[MW_MAX];
	unsigned int nb_mw;
	struct drnic_mr *mr[MW_MAX];   /* extra MRs of B */
	unsigned int nb_mr;
};

static struct drnic_mw *
mw_alloc(struct mw_rig *r, struct drnic_pd *pd, enum drnic_mw_type type)
{
	struct drnic_mw *mw = drnic_alloc_mw(pd, type);

	if (mw != NULL)
		r->mw[r->nb_mw++] = mw;
	return mw;
}

static struct drnic_mr *
mw_extra_mr(struct mw_rig *r, struct drnic_pd *pd, unsigned int access)
{
	struct drnic_mr *mr = drnic_reg_mr(pd, r->p.b.buf, RNIC_BUF_SIZE, access);

	if (mr != NULL)
		r->mr[r->nb_mr++] = mr;
	return mr;
}

/* The binding of the usual window: B's [MW_OFF, MW_OFF + MW_LEN). */
static struct drnic_mw_bind_info
mw_info(struct mw_rig *r, struct drnic_mr *mr, unsigned int rights)
{
	return (struct drnic_mw_bind_info){ mr, (uintptr_t)r->p.b.buf + MW_OFF, MW_LEN, rights };
}

/* Type 1 bind on B's QP; its completion is checked. */
static int mw_bind1(struct mw_rig *r, struct drnic_mw *mw, struct drnic_mw_bind_info bi,
		    uint64_t wr_id, enum drnic_wc_status status);

/* A type 1 window of B, bound over the usual range with @p rights. */
static int
mw_new1(struct mw_rig *r, unsigned int rights, struct drnic_mw **out)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_1);

	TEST_ASSERT(mw != NULL, "alloc_mw");
	*out = mw;
	return mw_bind1(r, mw, mw_info(r, r->p.b.mr, rights), 1, DRNIC_WC_SUCCESS);
}

/* Type 1 bind on B's QP; its completion is checked. */
static int
mw_bind1(struct mw_rig *r, struct drnic_mw *mw, struct drnic_mw_bind_info bi, uint64_t wr_id,
	 enum drnic_wc_status status)
{
	struct drnic_mw_bind b = { .wr_id = wr_id, .send_flags = DRNIC_SEND_SIGNALED,
				   .bind_info = bi };
	struct drnic_wc wc;

	TEST_ASSERT_SUCCESS(drnic_bind_mw(r->p.b.qp, mw, &b), "bind_mw");
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.b, &wc, 1), 1, "bind completion");
	TEST_ASSERT_EQUAL(wc.wr_id, wr_id, "wr_id");
	TEST_ASSERT(wc.status == status, "bind status %s", drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.opcode, DRNIC_WC_BIND_MW, "opcode");
	TEST_ASSERT_EQUAL(wc.byte_len, 0, "byte_len");
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(r->p.b.qp), "qp_num");
	TEST_ASSERT_EQUAL(wc.wc_flags, 0, "wc_flags");
	return TEST_SUCCESS;
}

/* A local WR on B's QP (BIND_MW for a type 2 window, LOCAL_INV); its
 * completion is checked. */
static int
mw_local(struct mw_rig *r, struct drnic_send_wr *wr, enum drnic_wc_status status)
{
	struct drnic_send_wr *bad;
	struct drnic_wc wc;

	wr->send_flags |= DRNIC_SEND_SIGNALED;
	TEST_ASSERT_SUCCESS(drnic_post_send(r->p.b.qp, wr, &bad), "post local WR");
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.b, &wc, 1), 1, "local WR completion");
	TEST_ASSERT_EQUAL(wc.wr_id, wr->wr_id, "wr_id");
	TEST_ASSERT(wc.status == status, "status %s", drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.opcode, wr->opcode == DRNIC_WR_BIND_MW ? DRNIC_WC_BIND_MW :
			  DRNIC_WC_LOCAL_INV, "opcode");
	TEST_ASSERT_EQUAL(wc.byte_len, 0, "byte_len");
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(r->p.b.qp), "qp_num");
	TEST_ASSERT_EQUAL(wc.wc_flags, 0, "wc_flags");
	if (status != DRNIC_WC_SUCCESS)
		TEST_ASSERT_EQUAL(drnic_qp_state(r->p.b.qp), DRNIC_QPS_ERR, "B's QP state");
	return TEST_SUCCESS;
}

static int
mw_bind2(struct mw_rig *r, struct drnic_mw *mw, uint32_t rkey, struct drnic_mw_bind_info bi,
	 uint64_t wr_id, enum drnic_wc_status status)
{
	struct drnic_send_wr wr = { .wr_id = wr_id, .opcode = DRNIC_WR_BIND_MW };

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = bi;
	return mw_local(r, &wr, status);
}

static int
mw_local_inv(struct mw_rig *r, uint32_t rkey, uint64_t wr_id, enum drnic_wc_status status)
{
	struct drnic_send_wr wr = { .wr_id = wr_id, .opcode = DRNIC_WR_LOCAL_INV };

	wr.invalidate_rkey = rkey;
	return mw_local(r, &wr, status);
}

static uint32_t
mw_inc(uint32_t rkey)
{
	return (rkey & ~0xFFu) | ((rkey + 1) & 0xFFu);
}

/*
 * A does @p op (WRITE, READ, FETCH_AND_ADD) of @p len bytes at B's buffer
 * offset @p off through @p rkey; its completion is checked against
 * @p status, and the bytes: on success the data moved, on failure B's
 * buffer is what it was.
 */
static int
mw_access(struct mw_rig *r, enum drnic_wr_opcode op, uint32_t off, uint32_t len, uint32_t rkey,
	  enum drnic_wc_status status)
{
	static uint64_t wr_id = 100;
	uint8_t *src = r->p.a.buf + 8192, *dst = r->p.b.buf + off;
	struct drnic_sge sge = { (uintptr_t)src, len, drnic_mr_lkey(r->p.a.mr) };
	struct drnic_send_wr wr = { 0 }, *bad;
	static uint8_t before[MW_LEN * 2];
	uint64_t old = 0;
	struct drnic_wc wc;

	TEST_ASSERT(len <= sizeof(before), "test length");
	rnic_fill(src, len, (uint32_t)wr_id);
	rnic_fill(dst, len, (uint32_t)wr_id + 7);
	memcpy(before, dst, len);
	wr.wr_id = ++wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	if (op == DRNIC_WR_ATOMIC_FETCH_AND_ADD) {
		memcpy(&old, dst, 8);
		wr.wr.atomic.remote_addr = (uintptr_t)dst;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = rkey;
	}
	TEST_ASSERT_SUCCESS(drnic_post_send(r->p.a.qp, &wr, &bad), "post");
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, &wc, 1), 1, "A's completion");
	TEST_ASSERT_EQUAL(wc.wr_id, wr_id, "wr_id");
	TEST_ASSERT(wc.status == status, "A's status %s, expected %s",
		    drnic_wc_status_str(wc.status), drnic_wc_status_str(status));
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(r->p.a.qp), "qp_num");
	TEST_ASSERT_EQUAL(wc.wc_flags, 0, "wc_flags");
	if (status != DRNIC_WC_SUCCESS) {
		TEST_ASSERT(memcmp(dst, before, len) == 0, "B's memory changed by a refused %d",
			    op);
		TEST_ASSERT_EQUAL(drnic_qp_state(r->p.a.qp), DRNIC_QPS_ERR, "A's QP state");
		return TEST_SUCCESS;
	}
	switch (op) {
	case DRNIC_WR_RDMA_WRITE:
		TEST_ASSERT_EQUAL(wc.opcode, DRNIC_WC_RDMA_WRITE, "opcode");
		TEST_ASSERT_EQUAL(wc.byte_len, len, "byte_len");
		TEST_ASSERT(memcmp(dst, src, len) == 0, "WRITE data");
		break;
	case DRNIC_WR_RDMA_READ:
		TEST_ASSERT_EQUAL(wc.opcode, DRNIC_WC_RDMA_READ, "opcode");
		TEST_ASSERT_EQUAL(wc.byte_len, len, "byte_len");
		TEST_ASSERT(memcmp(dst, src, len) == 0, "READ data");
		break;
	default: {
		uint64_t now, got;

		memcpy(&now, dst, 8);
		memcpy(&got, src, 8);
		TEST_ASSERT_EQUAL(wc.opcode, DRNIC_WC_FETCH_ADD, "opcode");
		TEST_ASSERT_EQUAL(wc.byte_len, 8, "byte_len");
		TEST_ASSERT_EQUAL(got, old, "atomic original value");
		TEST_ASSERT_EQUAL(now, old + 5, "atomic result");
		break;
	}
	}
	return TEST_SUCCESS;
}

/* A sends @p len bytes with Invalidate of @p rkey; B's receive is checked
 * (WITH_INV and the rkey), or on @p status A's error and B's flush. */
static int
mw_send_inv(struct mw_rig *r, uint32_t rkey, enum drnic_wc_status status)
{
	const uint32_t len = 3000;   /* three packets at MTU 1024 */
	uint8_t *src = r->p.a.buf + 65536, *dst = r->p.b.buf + (1u << 20);
	struct drnic_sge ss = { (uintptr_t)src, len, drnic_mr_lkey(r->p.a.mr) };
	struct drnic_sge rs = { (uintptr_t)dst, 4096, drnic_mr_lkey(r->p.b.mr) };
	struct drnic_recv_wr rwr = { .wr_id = 77, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct drnic_send_wr wr = { 0 }, *bad;
	struct drnic_wc wc;

	rnic_fill(src, len, 31);
	memset(dst, 0, 4096);
	TEST_ASSERT_SUCCESS(drnic_post_recv(r->p.b.qp, &rwr, &rbad), "post_recv");
	wr.wr_id = 66;
	wr.sg_list = &ss;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_SEND_WITH_INV;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	TEST_ASSERT_SUCCESS(drnic_post_send(r->p.a.qp, &wr, &bad), "post SEND_WITH_INV");
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.a, &wc, 1), 1, "A's completion");
	TEST_ASSERT_EQUAL(wc.wr_id, 66, "wr_id");
	TEST_ASSERT(wc.status == status, "A's status %s", drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(r->p.a.qp), "qp_num");
	TEST_ASSERT_EQUAL(wc.wc_flags, 0, "wc_flags");
	if (status == DRNIC_WC_SUCCESS) {
		TEST_ASSERT_EQUAL(wc.opcode, DRNIC_WC_SEND, "A's opcode");
		TEST_ASSERT_EQUAL(wc.byte_len, len, "A's byte_len");
	}
	TEST_ASSERT_EQUAL(rnic_poll(&r->p.b, &wc, 1), 1, "B's receive completion");
	TEST_ASSERT_EQUAL(wc.wr_id, 77, "receive wr_id");
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(r->p.b.qp), "receive qp_num");
	if (status != DRNIC_WC_SUCCESS) {
		/* Refused: the receive is flushed, not completed. */
		TEST_ASSERT(wc.status == DRNIC_WC_WR_FLUSH_ERR, "receive status %s",
			    drnic_wc_status_str(wc.status));
		TEST_ASSERT_EQUAL(drnic_qp_state(r->p.b.qp), DRNIC_QPS_ERR, "B's QP state");
		return TEST_SUCCESS;
	}
	TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS, "receive status %s",
		    drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.opcode, DRNIC_WC_RECV, "receive opcode");
	TEST_ASSERT_EQUAL(wc.byte_len, len, "receive byte_len");
	TEST_ASSERT_EQUAL(wc.src_qp, drnic_qp_num(r->p.a.qp), "src_qp");
	TEST_ASSERT_EQUAL(wc.wc_flags, DRNIC_WC_WITH_INV, "receive wc_flags");
	TEST_ASSERT_EQUAL(wc.invalidated_rkey, rkey, "invalidated_rkey");
	TEST_ASSERT(memcmp(dst, src, len) == 0, "SEND data");
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/* Type 1: bind, use, rebind elsewhere (the old rkey then fails), dereg of
 * the bound MR refused, and deallocation while bound (its rkey fails). */
static int
mw_type1(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_1);
	struct drnic_mw_bind_info bi;
	uint32_t k0, k1, k2;

	TEST_ASSERT(mw != NULL, "alloc_mw");
	TEST_ASSERT_EQUAL(drnic_mw_type(mw), DRNIC_MW_TYPE_1, "type");
	k0 = drnic_mw_rkey(mw);
	TEST_ASSERT(k0 & 0x80000000u, "a window's rkey has bit 31");
	TEST_ASSERT_SUCCESS(mw_bind1(r, mw, mw_info(r, r->p.b.mr, DRNIC_ACCESS_REMOTE_WRITE |
						     DRNIC_ACCESS_REMOTE_READ),
				     1, DRNIC_WC_SUCCESS), "bind");
	k1 = drnic_mw_rkey(mw);
	TEST_ASSERT_EQUAL(k1, mw_inc(k0), "the bind takes the next key byte");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_WRITE, MW_OFF, MW_LEN, k1,
				      DRNIC_WC_SUCCESS), "WRITE of the whole window");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_READ, MW_OFF + 100, 3000, k1,
				      DRNIC_WC_SUCCESS), "READ inside");
	TEST_ASSERT_EQUAL(drnic_dereg_mr(r->p.b.mr), -EBUSY, "dereg of a bound MR");
	/* Rebind to the next 8 KiB with atomics: the old rkey is gone. */
	bi = mw_info(r, r->p.b.mr, ALL_REMOTE);
	bi.addr += MW_LEN;
	TEST_ASSERT_SUCCESS(mw_bind1(r, mw, bi, 2, DRNIC_WC_SUCCESS), "rebind");
	k2 = drnic_mw_rkey(mw);
	TEST_ASSERT(k2 != k1, "rebind keeps the rkey");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_ATOMIC_FETCH_AND_ADD, MW_OFF + MW_LEN + 64, 8,
				      k2, DRNIC_WC_SUCCESS), "atomic in the new window");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_WRITE, MW_OFF + MW_LEN, 64, k2,
				      DRNIC_WC_SUCCESS), "WRITE in the new window");
	/* Deallocated while bound: its rkey fails. */
	TEST_ASSERT_SUCCESS(drnic_dealloc_mw(mw), "dealloc while bound");
	r->nb_mw = 0;
	TEST_ASSERT_EQUAL(drnic_dealloc_mw(mw), -EINVAL, "second dealloc");
	return mw_access(r, DRNIC_WR_RDMA_WRITE, MW_OFF + MW_LEN, 64, k2,
			 DRNIC_WC_REM_ACCESS_ERR);
}

static int
mw_type1_old_rkey(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw;
	uint32_t k1;

	TEST_ASSERT_SUCCESS(mw_new1(r, ALL_REMOTE, &mw), "bound window");
	k1 = drnic_mw_rkey(mw);
	TEST_ASSERT_SUCCESS(mw_bind1(r, mw, mw_info(r, r->p.b.mr, ALL_REMOTE), 2,
				     DRNIC_WC_SUCCESS), "rebind");
	return mw_access(r, DRNIC_WR_RDMA_WRITE, MW_OFF, 64, k1, DRNIC_WC_REM_ACCESS_ERR);
}

/* Zero length unbinds a type 1 window. */
static int
mw_type1_unbind(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw;
	struct drnic_mw_bind_info bi = { NULL, 0, 0, 0 };

	TEST_ASSERT_SUCCESS(mw_new1(r, ALL_REMOTE, &mw), "bound window");
	TEST_ASSERT_SUCCESS(mw_bind1(r, mw, bi, 2, DRNIC_WC_SUCCESS), "unbind");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(r->p.b.mr), "dereg once unbound");
	r->p.b.mr = drnic_reg_mr(r->p.b.pd, r->p.b.buf, RNIC_BUF_SIZE, r->o.mr_access);
	TEST_ASSERT(r->p.b.mr != NULL, "reg again");
	return mw_access(r, DRNIC_WR_RDMA_READ, MW_OFF, 64, drnic_mw_rkey(mw),
			 DRNIC_WC_REM_ACCESS_ERR);
}

/*
 * An access a type 1 window refuses (bounds or rights; the MR around it
 * allows everything): the case's window rights, operation and range.
 */
static int
mw_type1_refused(struct mw_rig *r, const struct mw_case *c)
{
	struct drnic_mw *mw;

	TEST_ASSERT_SUCCESS(mw_new1(r, c->rights, &mw), "bound window");
	if (c->rights & DRNIC_ACCESS_REMOTE_READ)
		TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_READ, MW_OFF, 64,
					      drnic_mw_rkey(mw), DRNIC_WC_SUCCESS), "READ");
	return mw_access(r, c->op, c->off, c->len, drnic_mw_rkey(mw), DRNIC_WC_REM_ACCESS_ERR);
}

/* Type 2: bind, use, rebind after LOCAL_INV with another key byte; then
 * the invalidated rkey fails. */
static int
mw_type2_local_inv(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_2);
	uint32_t k0, k1, k2;

	TEST_ASSERT(mw != NULL, "alloc_mw");
	TEST_ASSERT_EQUAL(drnic_mw_type(mw), DRNIC_MW_TYPE_2, "type");
	k0 = drnic_mw_rkey(mw);
	k1 = mw_inc(k0);
	TEST_ASSERT_SUCCESS(mw_bind2(r, mw, k1, mw_info(r, r->p.b.mr, ALL_REMOTE), 1,
				     DRNIC_WC_SUCCESS), "bind");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_WRITE, MW_OFF + 1000, 5000, k1,
				      DRNIC_WC_SUCCESS), "WRITE");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_READ, MW_OFF, MW_LEN, k1,
				      DRNIC_WC_SUCCESS), "READ");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_ATOMIC_FETCH_AND_ADD, MW_OFF + 8, 8, k1,
				      DRNIC_WC_SUCCESS), "atomic");
	TEST_ASSERT_SUCCESS(mw_local_inv(r, k1, 2, DRNIC_WC_SUCCESS), "LOCAL_INV");
	k2 = (k0 & ~0xFFu) | 0x5A;
	TEST_ASSERT_SUCCESS(mw_bind2(r, mw, k2, mw_info(r, r->p.b.mr, DRNIC_ACCESS_REMOTE_WRITE),
				     3, DRNIC_WC_SUCCESS), "bind again");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_WRITE, MW_OFF, 64, k2,
				      DRNIC_WC_SUCCESS), "WRITE with the new key");
	TEST_ASSERT_SUCCESS(mw_local_inv(r, k2, 4, DRNIC_WC_SUCCESS), "LOCAL_INV");
	return mw_access(r, DRNIC_WR_RDMA_WRITE, MW_OFF, 64, k2, DRNIC_WC_REM_ACCESS_ERR);
}

/* A SEND with Invalidate from A invalidates B's type 2 window. */
static int
mw_type2_send_inv(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_2);
	uint32_t k1;

	TEST_ASSERT(mw != NULL, "alloc_mw");
	k1 = mw_inc(drnic_mw_rkey(mw));
	TEST_ASSERT_SUCCESS(mw_bind2(r, mw, k1, mw_info(r, r->p.b.mr, ALL_REMOTE), 1,
				     DRNIC_WC_SUCCESS), "bind");
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_WRITE, MW_OFF, 64, k1,
				      DRNIC_WC_SUCCESS), "WRITE");
	TEST_ASSERT_SUCCESS(mw_send_inv(r, k1, DRNIC_WC_SUCCESS), "SEND with Invalidate");
	/* Freed: B may bind it again (it could not while bound). */
	TEST_ASSERT_SUCCESS(mw_access(r, DRNIC_WR_RDMA_READ, MW_OFF, 64, k1,
				      DRNIC_WC_REM_ACCESS_ERR), "READ after invalidation");
	return TEST_SUCCESS;
}

/* Remote invalidation of a key that cannot be: an invalid request. */
static int
mw_send_inv_type1(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw;

	TEST_ASSERT_SUCCESS(mw_new1(r, ALL_REMOTE, &mw), "bound window");
	return mw_send_inv(r, drnic_mw_rkey(mw), DRNIC_WC_REM_INV_REQ_ERR);
}

static int
mw_send_inv_mr(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	return mw_send_inv(r, drnic_mr_rkey(r->p.b.mr), DRNIC_WC_REM_INV_REQ_ERR);
}

/* Bind and invalidation errors: MW_BIND_ERR, the QP to ERR. */
static int
mw_err_no_mw_bind(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_1);
	struct drnic_mr *mr = mw_extra_mr(r, r->p.b.pd, DRNIC_ACCESS_LOCAL_WRITE | ALL_REMOTE);

	TEST_ASSERT(mw != NULL && mr != NULL, "alloc_mw, reg_mr");
	return mw_bind1(r, mw, mw_info(r, mr, DRNIC_ACCESS_REMOTE_READ), 1,
			DRNIC_WC_MW_BIND_ERR);
}

static int
mw_err_range(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_2);
	struct drnic_mw_bind_info bi = mw_info(r, r->p.b.mr, DRNIC_ACCESS_REMOTE_READ);

	TEST_ASSERT(mw != NULL, "alloc_mw");
	bi.addr = (uintptr_t)r->p.b.buf + RNIC_BUF_SIZE - 100;
	bi.length = 200;
	return mw_bind2(r, mw, mw_inc(drnic_mw_rkey(mw)), bi, 1, DRNIC_WC_MW_BIND_ERR);
}

/* Remote write on an MR without local write (C10-74). */
static int
mw_err_rights(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_1);
	struct drnic_mr *mr = mw_extra_mr(r, r->p.b.pd, DRNIC_ACCESS_MW_BIND |
					  DRNIC_ACCESS_REMOTE_READ);

	TEST_ASSERT(mw != NULL && mr != NULL, "alloc_mw, reg_mr");
	return mw_bind1(r, mw, mw_info(r, mr, DRNIC_ACCESS_REMOTE_WRITE), 1,
			DRNIC_WC_MW_BIND_ERR);
}

static int
mw_err_type1_wr(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_1);

	TEST_ASSERT(mw != NULL, "alloc_mw");
	return mw_bind2(r, mw, mw_inc(drnic_mw_rkey(mw)), mw_info(r, r->p.b.mr, ALL_REMOTE), 1,
			DRNIC_WC_MW_BIND_ERR);
}

static int
mw_err_type2_call(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc_mw");
	return mw_bind1(r, mw, mw_info(r, r->p.b.mr, ALL_REMOTE), 1, DRNIC_WC_MW_BIND_ERR);
}

/* A bound type 2 window is bound again only after invalidation. */
static int
mw_err_type2_bound(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_2);
	uint32_t k = drnic_mw_rkey(mw);

	TEST_ASSERT(mw != NULL, "alloc_mw");
	TEST_ASSERT_SUCCESS(mw_bind2(r, mw, mw_inc(k), mw_info(r, r->p.b.mr, ALL_REMOTE), 1,
				     DRNIC_WC_SUCCESS), "bind");
	return mw_bind2(r, mw, mw_inc(mw_inc(k)), mw_info(r, r->p.b.mr, ALL_REMOTE), 2,
			DRNIC_WC_MW_BIND_ERR);
}

/* Only the key byte of a type 2 window's rkey is the consumer's. */
static int
mw_err_type2_tag(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = mw_alloc(r, r->p.b.pd, DRNIC_MW_TYPE_2);

	TEST_ASSERT(mw != NULL, "alloc_mw");
	return mw_bind2(r, mw, drnic_mw_rkey(mw) ^ 0x100, mw_info(r, r->p.b.mr, ALL_REMOTE), 1,
			DRNIC_WC_MW_BIND_ERR);
}

static int
mw_err_pd(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_pd *pd = drnic_alloc_pd(r->p.b.dev);
	struct drnic_mw *mw;
	int rc;

	TEST_ASSERT(pd != NULL, "alloc_pd");
	mw = drnic_alloc_mw(pd, DRNIC_MW_TYPE_1);
	TEST_ASSERT(mw != NULL, "alloc_mw");
	TEST_ASSERT_EQUAL(drnic_dealloc_pd(pd), -EBUSY, "dealloc_pd with a window");
	rc = mw_bind1(r, mw, mw_info(r, r->p.b.mr, ALL_REMOTE), 1, DRNIC_WC_MW_BIND_ERR);
	TEST_ASSERT_SUCCESS(drnic_dealloc_mw(mw), "dealloc_mw");
	TEST_ASSERT_SUCCESS(drnic_dealloc_pd(pd), "dealloc_pd");
	return rc;
}

static int
mw_err_local_inv_type1(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw;

	TEST_ASSERT_SUCCESS(mw_new1(r, ALL_REMOTE, &mw), "bound window");
	return mw_local_inv(r, drnic_mw_rkey(mw), 2, DRNIC_WC_MW_BIND_ERR);
}

static int
mw_err_local_inv_mr(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	return mw_local_inv(r, drnic_mr_rkey(r->p.b.mr), 1, DRNIC_WC_MW_BIND_ERR);
}

static int
mw_err_dealloc_queued(struct mw_rig *r, const struct mw_case *c __rte_unused)
{
	struct drnic_mw *mw = drnic_alloc_mw(r->p.b.pd, DRNIC_MW_TYPE_2);
	uint32_t k;

	TEST_ASSERT(mw != NULL, "alloc_mw");
	k = drnic_mw_rkey(mw);
	TEST_ASSERT_SUCCESS(drnic_dealloc_mw(mw), "dealloc");
	/* A window that is gone: post refuses it; its rkey binds nothing. */
	{
		struct drnic_send_wr wr = { .wr_id = 1, .opcode = DRNIC_WR_BIND_MW }, *bad;

		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = mw_inc(k);
		TEST_ASSERT_EQUAL(drnic_post_send(r->p.b.qp, &wr, &bad), -EINVAL,
				  "bind of a freed window");
	}
	return mw_local_inv(r, k, 2, DRNIC_WC_MW_BIND_ERR);
}

static const struct mw_case mw_cases[] = {
	{ "type 1", mw_type1 },
	{ "type 1 old rkey", mw_type1_old_rkey },
	{ "type 1 unbind", mw_type1_unbind },
	/* The MR goes on around the window: the window's own bounds count. */
	{ "type 1 WRITE past the end", mw_type1_refused, ALL_REMOTE, DRNIC_WR_RDMA_WRITE,
	  MW_OFF + MW_LEN - 4, 8 },
	{ "type 1 READ before the start", mw_type1_refused, ALL_REMOTE, DRNIC_WR_RDMA_READ,
	  MW_OFF - 8, 16 },
	/* The window's rights, not the MR's, count. */
	{ "type 1 WRITE without the right", mw_type1_refused, DRNIC_ACCESS_REMOTE_READ,
	  DRNIC_WR_RDMA_WRITE, MW_OFF, 64 },
	{ "type 1 atomic without the right", mw_type1_refused, DRNIC_ACCESS_REMOTE_WRITE,
	  DRNIC_WR_ATOMIC_FETCH_AND_ADD, MW_OFF, 8 },
	{ "type 2 and LOCAL_INV", mw_type2_local_inv },
	{ "type 2 and SEND with Invalidate", mw_type2_send_inv },
	{ "SEND with Invalidate of a type 1 window", mw_send_inv_type1 },
	{ "SEND with Invalidate of an MR", mw_send_inv_mr },
	{ "bind on an MR without MW_BIND", mw_err_no_mw_bind },
	{ "bind outside the MR", mw_err_range },
	{ "remote write on an MR without local write", mw_err_rights },
	{ "type 1 window by BIND_MW", mw_err_type1_wr },
	{ "type 2 window by drnic_bind_mw", mw_err_type2_call },
	{ "type 2 window bound twice", mw_err_type2_bound },
	{ "type 2 rkey above the key byte", mw_err_type2_tag },
	{ "window of another PD", mw_err_pd },
	{ "LOCAL_INV of a type 1 window", mw_err_local_inv_type1 },
	{ "LOCAL_INV of an MR", mw_err_local_inv_mr },
	{ "deallocated window", mw_err_dealloc_queued },
};

static int
mw_run(enum drnic_progress_mode mode)
{
	unsigned int i, j;
	int rc = TEST_SUCCESS;

	if (mode == DRNIC_PROGRESS_DEDICATED && rte_get_next_lcore(-1, 1, 0) >= RTE_MAX_LCORE)
		TEST_SKIP("dedicated mode needs an EAL worker lcore for the engine");
	for (i = 0; i < RTE_DIM(mw_cases) && rc == TEST_SUCCESS; i++) {
		struct mw_rig r;

		memset(&r, 0, sizeof(r));
		r.o.mode = mode;
		r.o.mr_access = DRNIC_ACCESS_LOCAL_WRITE | ALL_REMOTE | DRNIC_ACCESS_MW_BIND;
		TEST_ASSERT_SUCCESS(rnic_pair_open(&r.p, &r.o), "pair open");
		rc = mw_cases[i].fn(&r, &mw_cases[i]);
		if (rc != TEST_SUCCESS)
			printf("case '%s' failed\n", mw_cases[i].name);
		for (j = 0; j < r.nb_mw; j++)
			if (drnic_dealloc_mw(r.mw[j]) != 0)
				rc = TEST_FAILED;
		for (j = 0; j < r.nb_mr; j++)
			if (drnic_dereg_mr(r.mr[j]) != 0)
				rc = TEST_FAILED;
		rnic_pair_close(&r.p);
	}
	return rc;
}

static int
rnic_mw_inline(void)
{
	return mw_run(DRNIC_PROGRESS_INLINE);
}

static int
rnic_mw_dedicated(void)
{
	return mw_run(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_mw_inline_autotest, DRNIC_TEST_FAST, rnic_mw_inline);
DRNIC_TEST_REGISTER(rnic_mw_dedicated_autotest, DRNIC_TEST_FAST, rnic_mw_dedicated);
