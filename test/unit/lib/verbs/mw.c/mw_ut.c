/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/verbs/mw.c: window keys, the bind rules a BIND_MW WQE
 * is held to (every one that is broken refuses the bind and changes
 * nothing), the access check of a window's rkey (bounds, rights, PD, the QP
 * of a type 2 window), local and remote invalidation, deallocation, and an
 * MR that stays registered while a window is bound to it. mr.c is the real
 * one: windows stand on its table.
 */
#include "lib/verbs/mr.c"
#include "lib/verbs/mw.c"

#include "test/unit/lib/verbs/ut_verbs_stubs.h"
#include "ut_common.h"

#define RW (DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_WRITE)
#define ALL (RW | DRNIC_ACCESS_REMOTE_ATOMIC)
#define MR_ALL (DRNIC_ACCESS_LOCAL_WRITE | ALL | DRNIC_ACCESS_MW_BIND)

static struct drnic_device *dev;
static struct drnic_pd *pd, *pd2;
static struct drnic_mr *mr;
static struct drnic_qp qa, qb, qc;   /* qa, qb: pd; qc: pd2 */
static uint8_t buf[16384];
static union {
	struct verbs_send_wqe w;
	uint8_t room[256];
} wqe;

static int
ut_setup(void)
{
	dev = ut_dev_new(1, 8);
	verbs_mr_table_setup(dev);
	dev->mw_tab_size = 9;           /* 8 windows */
	dev->mw_tab = calloc(dev->mw_tab_size, sizeof(dev->mw_tab[0]));
	verbs_mw_table_setup(dev);
	return 0;
}

static int
ut_teardown(void)
{
	free(dev->mw_tab);
	ut_dev_free(dev);
	return 0;
}

/* Each test: two PDs, an MR of pd over buf with every right, three QPs. */
static void
ut_begin(void)
{
	pd = drnic_alloc_pd(dev);
	pd2 = drnic_alloc_pd(dev);
	mr = drnic_reg_mr(pd, buf, sizeof(buf), MR_ALL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mr);
	qa = (struct drnic_qp){ .dev = dev, .pd = pd, .qp_num = 5 };
	qb = (struct drnic_qp){ .dev = dev, .pd = pd, .qp_num = 6 };
	qc = (struct drnic_qp){ .dev = dev, .pd = pd2, .qp_num = 7 };
}

static void
ut_end(void)
{
	CU_ASSERT_EQUAL(drnic_dereg_mr(mr), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd2), 0);
	CU_ASSERT_EQUAL(dev->nb_mw, 0);
}

static uint32_t
ut_inc(uint32_t rkey)
{
	return (rkey & ~0xFFu) | ((rkey + 1) & 0xFFu);
}

/* The BIND_MW WQE post_send would make (mw_type1: drnic_bind_mw()'s). */
static const struct verbs_send_wqe *
ut_bind(const struct drnic_mw *mw, uint32_t nkey, uint32_t lkey, uint64_t off, uint64_t len,
	uint32_t rights, bool type1)
{
	memset(&wqe, 0, sizeof(wqe));
	wqe.w.opcode = DRNIC_WR_BIND_MW;
	wqe.w.imm_data = mw->rkey;
	wqe.w.rkey = nkey;
	wqe.w.remote_addr = (uintptr_t)buf + off;
	wqe.w.compare_add = len;
	wqe.w.swap = (uint64_t)rights << 32 | lkey;
	wqe.w.mw_type1 = type1;
	return &wqe.w;
}

/* An access of @p len bytes at buf + @p off through @p key by @p qp. */
static int
ut_access(const struct drnic_qp *qp, uint32_t key, uint64_t off, uint64_t len, uint32_t access)
{
	uint8_t *va = NULL;
	int rc = verbs_rkey_check(qp, qp->pd, key, (uintptr_t)buf + off, len, access, &va);

	if (rc == 0)
		CU_ASSERT_PTR_EQUAL(va, buf + off);
	return rc;
}

static void
test_alloc(void)
{
	struct drnic_mw *mw[8], *extra;
	unsigned int i;

	ut_begin();
	for (i = 0; i < 8; i++) {
		mw[i] = drnic_alloc_mw(pd, i % 2 ? DRNIC_MW_TYPE_2 : DRNIC_MW_TYPE_1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mw[i]);
		CU_ASSERT_EQUAL(drnic_mw_type(mw[i]), i % 2 ? DRNIC_MW_TYPE_2 : DRNIC_MW_TYPE_1);
		/* Bit 31, the slot's index above the key byte, key byte 0. */
		CU_ASSERT(drnic_mw_rkey(mw[i]) & VERBS_MW_KEY_BIT);
		CU_ASSERT_EQUAL((drnic_mw_rkey(mw[i]) >> 8) & dev->mw_idx_mask, mw[i]->idx);
		CU_ASSERT_EQUAL(drnic_mw_rkey(mw[i]) & 0xFF, 0);
		/* Not bound: its rkey reaches nothing. */
		CU_ASSERT_EQUAL(ut_access(&qa, drnic_mw_rkey(mw[i]), 0, 8, 0), -ENOENT);
		CU_ASSERT_FALSE(verbs_mr_key_live(dev, drnic_mw_rkey(mw[i])));
	}
	extra = drnic_alloc_mw(pd, DRNIC_MW_TYPE_1);     /* 8 windows */
	CU_ASSERT_PTR_NULL(extra);
	CU_ASSERT_EQUAL(rte_errno, ENOMEM);
	CU_ASSERT_PTR_NULL(drnic_alloc_mw(pd, (enum drnic_mw_type)3));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(drnic_alloc_mw(NULL, DRNIC_MW_TYPE_1));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), -EBUSY);
	/* A freed slot comes back with another key. */
	{
		uint32_t old = drnic_mw_rkey(mw[0]);

		CU_ASSERT_EQUAL(drnic_dealloc_mw(mw[0]), 0);
		CU_ASSERT_EQUAL(drnic_dealloc_mw(mw[0]), -EINVAL);
		mw[0] = drnic_alloc_mw(pd, DRNIC_MW_TYPE_1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mw[0]);
		CU_ASSERT_NOT_EQUAL(drnic_mw_rkey(mw[0]), old);
	}
	for (i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(drnic_dealloc_mw(mw[i]), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_mw(NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mw_rkey(NULL), 0);
	ut_end();
}

/* A type 1 window: bound, its own bounds and rights; rebinding changes
 * the key; length 0 unbinds; the MR stays registered meanwhile. */
static void
test_type1(void)
{
	struct drnic_mw *mw;
	uint32_t k1, k2;

	ut_begin();
	mw = drnic_alloc_mw(pd, DRNIC_MW_TYPE_1);
	k1 = ut_inc(drnic_mw_rkey(mw));
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(mw, k1, mr->lkey, 1024, 4096, RW, true)), 0);
	CU_ASSERT_TRUE(verbs_mr_key_live(dev, k1));
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 1024, 4096, DRNIC_ACCESS_REMOTE_WRITE), 0);
	/* Any QP of the PD: a type 1 window is not tied to one. */
	CU_ASSERT_EQUAL(ut_access(&qb, k1, 2000, 8, DRNIC_ACCESS_REMOTE_READ), 0);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 1020, 8, DRNIC_ACCESS_REMOTE_READ), -ERANGE);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 5116, 8, DRNIC_ACCESS_REMOTE_READ), -ERANGE);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 1024, 4097, DRNIC_ACCESS_REMOTE_READ), -ERANGE);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 1024, 8, DRNIC_ACCESS_REMOTE_ATOMIC), -EPERM);
	CU_ASSERT_EQUAL(ut_access(&qc, k1, 1024, 8, DRNIC_ACCESS_REMOTE_READ), -EPERM);
	CU_ASSERT_EQUAL(ut_access(&qa, k1 ^ 0x10, 1024, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	/* Its MR stays registered while it is bound. */
	CU_ASSERT_EQUAL(drnic_dereg_mr(mr), -EBUSY);
	CU_ASSERT_EQUAL(ut_access(&qa, mr->rkey, 0, 8, DRNIC_ACCESS_REMOTE_READ), 0);
	/* Rebound: the old key fails, the new one has the new range. */
	k2 = ut_inc(k1);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(mw, k2, mr->lkey, 8192, 64, ALL, true)), 0);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 1024, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_FALSE(verbs_mr_key_live(dev, k1));
	CU_ASSERT_EQUAL(ut_access(&qa, k2, 8192 + 56, 8, DRNIC_ACCESS_REMOTE_ATOMIC), 0);
	CU_ASSERT_EQUAL(atomic_load(&dev->mr_tab[mr->lkey & dev->mr_idx_mask].mw_binds), 1);
	/* Length 0: unbound, the MR is free to go. */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(mw, ut_inc(k2), 0, 0, 0, 0, true)), 0);
	CU_ASSERT_EQUAL(ut_access(&qa, k2, 8192, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_EQUAL(atomic_load(&dev->mr_tab[mr->lkey & dev->mr_idx_mask].mw_binds), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_mw(mw), 0);
	ut_end();
}

/* A type 2 window: bound to the QP that bound it, invalidated locally or
 * by a SEND with Invalidate on that QP, bound again with another key byte. */
static void
test_type2(void)
{
	struct drnic_mw *mw;
	uint32_t k1, k2;

	ut_begin();
	mw = drnic_alloc_mw(pd, DRNIC_MW_TYPE_2);
	k1 = (drnic_mw_rkey(mw) & ~0xFFu) | 0x77;
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(mw, k1, mr->lkey, 0, 4096, ALL, false)), 0);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 0, 4096, DRNIC_ACCESS_REMOTE_WRITE), 0);
	/* Only through its QP (type 2B: QP number and PD). */
	CU_ASSERT_EQUAL(ut_access(&qb, k1, 0, 8, DRNIC_ACCESS_REMOTE_WRITE), -EPERM);
	CU_ASSERT_EQUAL(ut_access(&qc, k1, 0, 8, DRNIC_ACCESS_REMOTE_WRITE), -EPERM);
	/* Invalidation: the exact key, by the QP's PD; remotely, only
	 * through the QP it is bound to. */
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qa, k1 ^ 1, false), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qc, k1, false), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qb, k1, true), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qa, mr->rkey, false), -EINVAL);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 0, 8, DRNIC_ACCESS_REMOTE_READ), 0);
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qa, k1, true), 0);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 0, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_FALSE(verbs_mr_key_live(dev, k1));
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qa, k1, false), -EINVAL);   /* not bound */
	/* Free again: bound by another QP of the PD, invalidated locally by
	 * any QP of the PD. */
	k2 = ut_inc(k1);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qb, ut_bind(mw, k2, mr->lkey, 0, 64, RW, false)), 0);
	CU_ASSERT_EQUAL(ut_access(&qb, k2, 0, 64, DRNIC_ACCESS_REMOTE_READ), 0);
	CU_ASSERT_EQUAL(ut_access(&qa, k2, 0, 64, DRNIC_ACCESS_REMOTE_READ), -EPERM);
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qa, k2, false), 0);
	CU_ASSERT_EQUAL(ut_access(&qb, k2, 0, 64, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_EQUAL(drnic_dealloc_mw(mw), 0);
	ut_end();
}

/* A destroyed QP's type 2 windows are invalidated (its number may come
 * back with another QP); other QPs' windows and type 1 windows stay. */
static void
test_qp_destroyed(void)
{
	struct drnic_mw *wa, *wb, *w1;
	uint32_t ka, kb, k1;

	ut_begin();
	wa = drnic_alloc_mw(pd, DRNIC_MW_TYPE_2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(wa);
	wb = drnic_alloc_mw(pd, DRNIC_MW_TYPE_2);
	w1 = drnic_alloc_mw(pd, DRNIC_MW_TYPE_1);
	ka = ut_inc(wa->rkey);
	kb = ut_inc(wb->rkey);
	k1 = ut_inc(w1->rkey);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(wa, ka, mr->lkey, 0, 64, RW, false)), 0);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qb, ut_bind(wb, kb, mr->lkey, 0, 64, RW, false)), 0);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, mr->lkey, 0, 64, RW, true)), 0);
	verbs_mw_qp_destroyed(&qa);
	CU_ASSERT_EQUAL(ut_access(&qa, ka, 0, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_EQUAL(ut_access(&qb, kb, 0, 8, DRNIC_ACCESS_REMOTE_READ), 0);
	CU_ASSERT_EQUAL(ut_access(&qb, k1, 0, 8, DRNIC_ACCESS_REMOTE_READ), 0);
	CU_ASSERT_EQUAL(atomic_load(&dev->mr_tab[mr->lkey & dev->mr_idx_mask].mw_binds), 2);
	/* Free: it binds again. */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qb, ut_bind(wa, ut_inc(ka), mr->lkey, 0, 64, RW, false)),
			0);
	CU_ASSERT_EQUAL(drnic_dealloc_mw(wa), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_mw(wb), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_mw(w1), 0);
	ut_end();
}

/* Every rule broken refuses the bind, and the window is as it was. */
static void
test_bind_rules(void)
{
	struct drnic_mr *no_bind, *ro, *other_pd;
	struct drnic_mw *w1, *w2, *gone;
	uint32_t k1, k2, kg, stale;

	ut_begin();
	no_bind = drnic_reg_mr(pd, buf, sizeof(buf), DRNIC_ACCESS_LOCAL_WRITE | ALL);
	ro = drnic_reg_mr(pd, buf, sizeof(buf), DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_MW_BIND);
	other_pd = drnic_reg_mr(pd2, buf, sizeof(buf), MR_ALL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(no_bind);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ro);
	CU_ASSERT_PTR_NOT_NULL_FATAL(other_pd);
	w1 = drnic_alloc_mw(pd, DRNIC_MW_TYPE_1);
	w2 = drnic_alloc_mw(pd, DRNIC_MW_TYPE_2);
	gone = drnic_alloc_mw(pd, DRNIC_MW_TYPE_2);
	k1 = ut_inc(drnic_mw_rkey(w1));
	k2 = ut_inc(drnic_mw_rkey(w2));
	kg = ut_inc(drnic_mw_rkey(gone));
	{
		/* A stale lkey: a registration that is gone. */
		struct drnic_mr *tmp = drnic_reg_mr(pd, buf, sizeof(buf), MR_ALL);

		stale = tmp->lkey;
		CU_ASSERT_EQUAL(drnic_dereg_mr(tmp), 0);
	}
	/* MR without MW_BIND (C10-73). */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, no_bind->lkey, 0, 64, RW, true)),
			-EINVAL);
	/* Range outside the MR (C10-75). */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, mr->lkey, 16000, 1000, RW, true)),
			-EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w2, k2, mr->lkey, 0, sizeof(buf) + 1, RW,
						    false)), -EINVAL);
	/* Remote write or atomic over an MR without local write (C10-74). */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, ro->lkey, 0, 64,
						    DRNIC_ACCESS_REMOTE_WRITE, true)), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, ro->lkey, 0, 64,
						    DRNIC_ACCESS_REMOTE_ATOMIC, true)), -EINVAL);
	/* A right that is not a remote one. */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, mr->lkey, 0, 64,
						    DRNIC_ACCESS_LOCAL_WRITE, true)), -EINVAL);
	/* Type 1 by a BIND_MW WR; type 2 by drnic_bind_mw(). */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, mr->lkey, 0, 64, RW, false)), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w2, k2, mr->lkey, 0, 64, RW, true)), -EINVAL);
	/* Type 2: length 0 (o10-37.2.40), an rkey changed above its key byte. */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w2, k2, mr->lkey, 0, 0, RW, false)), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w2, k2 ^ 0x100, mr->lkey, 0, 64, RW, false)),
			-EINVAL);
	/* Another PD: the QP's, or the MR's (C10-72). */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qc, ut_bind(w1, k1, mr->lkey, 0, 64, RW, true)), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, other_pd->lkey, 0, 64, RW, true)),
			-EINVAL);
	/* An MR deregistered, an MR key that is a window's. */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, stale, 0, 64, RW, true)), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, k2, 0, 64, RW, true)), -EINVAL);
	/* A window deallocated since it was posted. */
	{
		const struct verbs_send_wqe *w = ut_bind(gone, kg, mr->lkey, 0, 64, RW, false);

		CU_ASSERT_EQUAL(drnic_dealloc_mw(gone), 0);
		CU_ASSERT_EQUAL(verbs_mw_bind(&qa, w), -EINVAL);
	}
	/* None took effect: no key reaches memory, no MR is held. */
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 0, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_EQUAL(ut_access(&qa, k2, 0, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_EQUAL(ut_access(&qa, kg, 0, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_EQUAL(drnic_dereg_mr(no_bind), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(ro), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(other_pd), 0);
	/* A bound type 2 window is bound again only once invalidated. */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w2, k2, mr->lkey, 0, 64, RW, false)), 0);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w2, ut_inc(k2), mr->lkey, 0, 64, RW, false)),
			-EINVAL);
	CU_ASSERT_EQUAL(ut_access(&qa, k2, 0, 8, DRNIC_ACCESS_REMOTE_READ), 0);
	/* A type 1 window is never invalidated (o10-37.2.26). */
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w1, k1, mr->lkey, 0, 64, RW, true)), 0);
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qa, k1, false), -EINVAL);
	CU_ASSERT_EQUAL(verbs_mw_invalidate(&qa, k1, true), -EINVAL);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 0, 8, DRNIC_ACCESS_REMOTE_READ), 0);
	/* Deallocated while bound: its key fails, its MR is let go. */
	CU_ASSERT_EQUAL(drnic_dealloc_mw(w1), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_mw(w2), 0);
	CU_ASSERT_EQUAL(ut_access(&qa, k1, 0, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_EQUAL(ut_access(&qa, k2, 0, 8, DRNIC_ACCESS_REMOTE_READ), -ENOENT);
	CU_ASSERT_EQUAL(atomic_load(&dev->mr_tab[mr->lkey & dev->mr_idx_mask].mw_binds), 0);
	ut_end();
}

/* An MR key never has bit 31; a window key never passes as an MR's. */
static void
test_key_spaces(void)
{
	struct drnic_mr *m[8];
	struct drnic_mw *w;
	uint8_t *va;
	unsigned int i, j;

	ut_begin();
	for (j = 0; j < 200; j++) {
		for (i = 0; i < 8 && (m[i] = drnic_reg_mr(pd, buf, 64, 0)) != NULL; i++)
			CU_ASSERT_EQUAL(m[i]->lkey & VERBS_MW_KEY_BIT, 0);
		while (i-- > 0)
			CU_ASSERT_EQUAL(drnic_dereg_mr(m[i]), 0);
	}
	w = drnic_alloc_mw(pd, DRNIC_MW_TYPE_1);
	CU_ASSERT_EQUAL(verbs_mw_bind(&qa, ut_bind(w, ut_inc(w->rkey), mr->lkey, 0, 64, ALL, true)),
			0);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, ut_inc(w->rkey), (uintptr_t)buf, 8, 0, &va),
			-ENOENT);
	CU_ASSERT_EQUAL(drnic_dealloc_mw(w), 0);
	ut_end();
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("verbs_mw", ut_setup, ut_teardown);
	CU_ADD_TEST(s, test_alloc);
	CU_ADD_TEST(s, test_type1);
	CU_ADD_TEST(s, test_type2);
	CU_ADD_TEST(s, test_bind_rules);
	CU_ADD_TEST(s, test_key_spaces);
	CU_ADD_TEST(s, test_qp_destroyed);
	return ut_run_all();
}
