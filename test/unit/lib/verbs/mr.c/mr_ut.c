/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/verbs/mr.c: PDs, MR registration, keys (not guessable,
 * stale keys fail and are not handed out again soon), the engine's
 * key/PD/access/bounds check.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "lib/verbs/mr.c"

#include "test/unit/lib/verbs/ut_verbs_stubs.h"
#include "ut_common.h"

static struct drnic_device *dev;
static uint8_t buf[8192];

/* Windows' keys are mw.c's (verbs_mw_ut): none here. */
bool
verbs_mw_key_live(const struct drnic_device *d, uint32_t key)
{
	RTE_SET_USED(d);
	RTE_SET_USED(key);
	return false;
}

static int
ut_setup(void)
{
	dev = ut_dev_new(1, 8);
	verbs_mr_table_setup(dev);
	return 0;
}

static int
ut_teardown(void)
{
	ut_dev_free(dev);
	return 0;
}

static void
test_pd(void)
{
	struct drnic_pd *pd[4], *extra;
	int i;

	for (i = 0; i < 4; i++) {
		pd[i] = drnic_alloc_pd(dev);
		CU_ASSERT_PTR_NOT_NULL_FATAL(pd[i]);
	}
	extra = drnic_alloc_pd(dev);    /* max_pd is 4 */
	CU_ASSERT_PTR_NULL(extra);
	CU_ASSERT_EQUAL(rte_errno, ENOMEM);
	CU_ASSERT_PTR_NULL(drnic_alloc_pd(NULL));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(drnic_dealloc_pd(pd[i]), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(NULL), -EINVAL);
	CU_ASSERT_EQUAL(dev->nb_pd, 0);
}

static void
test_keys(void)
{
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	struct drnic_mr *mr, *mr2;
	uint32_t key, key2;
	uint8_t *va;

	mr = drnic_reg_mr(pd, buf, sizeof(buf), DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_READ);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mr);
	key = drnic_mr_lkey(mr);
	CU_ASSERT_EQUAL(key, drnic_mr_rkey(mr));
	CU_ASSERT_NOT_EQUAL(key & dev->mr_idx_mask, 0);
	CU_ASSERT_EQUAL(drnic_mr_addr(mr), buf);
	CU_ASSERT_EQUAL(drnic_mr_length(mr), sizeof(buf));
	/* A PD in use cannot go. */
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), -EBUSY);

	/* The engine check: key, PD, access, bounds. */
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, (uintptr_t)buf, sizeof(buf),
				       DRNIC_ACCESS_REMOTE_READ, &va), 0);
	CU_ASSERT_EQUAL(va, buf);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, (uintptr_t)buf + 100, 0, 0, &va), 0);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, (uintptr_t)buf + 1, sizeof(buf), 0, &va),
			-ERANGE);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, (uintptr_t)buf - 1, 2, 0, &va), -ERANGE);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, (uintptr_t)buf + sizeof(buf), 1, 0, &va),
			-ERANGE);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, UINT64_MAX - 4, 8, 0, &va), -ERANGE);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, (uintptr_t)buf, 8,
				       DRNIC_ACCESS_REMOTE_WRITE, &va), -EPERM);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, (struct drnic_pd *)dev, key, (uintptr_t)buf, 8, 0, &va),
			-EPERM);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key ^ (dev->mr_idx_mask + 1), (uintptr_t)buf, 8, 0,
				       &va), -ENOENT);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, 0, (uintptr_t)buf, 8, 0, &va), -ENOENT);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, 0xFFFFFF00u, (uintptr_t)buf, 8, 0, &va), -ENOENT);

	/* Deregistered: the key fails; a new registration gets another key
	 * (another slot first: free slots are reused oldest first), and the
	 * old key still fails. */
	CU_ASSERT_EQUAL(drnic_dereg_mr(mr), 0);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, (uintptr_t)buf, 8, 0, &va), -ENOENT);
	mr2 = drnic_reg_mr(pd, buf, sizeof(buf), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mr2);
	key2 = drnic_mr_lkey(mr2);
	CU_ASSERT_NOT_EQUAL(key2, key);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key, (uintptr_t)buf, 8, 0, &va), -ENOENT);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, key2, (uintptr_t)buf, 8, 0, &va), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(mr2), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), 0);
}

static void
test_reg_errors(void)
{
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	struct drnic_mr *mrs[16];
	unsigned int i;

	CU_ASSERT_PTR_NULL(drnic_reg_mr(NULL, buf, 8, 0));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, NULL, 8, 0));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, buf, 8, 0x400));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	/* Remote write and atomic need local write (verbs rule). */
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, buf, 8, DRNIC_ACCESS_REMOTE_WRITE));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, buf, 8, DRNIC_ACCESS_REMOTE_ATOMIC));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, (void *)(UINTPTR_MAX - 4), 8, 0));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	/* max_mr (16), then ENOMEM; keys all distinct. */
	for (i = 0; i < 16; i++) {
		mrs[i] = drnic_reg_mr(pd, buf, 8, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mrs[i]);
		if (i > 0)
			CU_ASSERT_NOT_EQUAL(drnic_mr_lkey(mrs[i]), drnic_mr_lkey(mrs[i - 1]));
	}
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, buf, 8, 0));
	CU_ASSERT_EQUAL(rte_errno, ENOMEM);
	for (i = 0; i < 16; i++)
		CU_ASSERT_EQUAL(drnic_dereg_mr(mrs[i]), 0);
	CU_ASSERT_EQUAL(dev->nb_mr, 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), 0);
}

/*
 * Memory that is not mapped, or mapped read-only for a writable MR, is
 * refused with EFAULT (issue 13, defect 5): a peer's WRITE into it would
 * crash the engine. Length 0 stays allowed anywhere.
 */
static void
test_reg_unmapped(void)
{
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct drnic_mr *mr;

	CU_ASSERT_FATAL(m != MAP_FAILED);
	/* Pages 0 and 1 mapped read-write, page 2 a hole, page 3 read-only. */
	CU_ASSERT_EQUAL_FATAL(munmap(m + 2 * pg, pg), 0);
	CU_ASSERT_EQUAL_FATAL(mprotect(m + 3 * pg, pg, PROT_READ), 0);

	mr = drnic_reg_mr(pd, m, 2 * pg, DRNIC_ACCESS_LOCAL_WRITE);
	CU_ASSERT_PTR_NOT_NULL(mr);
	CU_ASSERT_EQUAL(drnic_dereg_mr(mr), 0);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, m + 2 * pg, pg, 0));
	CU_ASSERT_EQUAL(rte_errno, EFAULT);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, m + pg, 2 * pg, DRNIC_ACCESS_LOCAL_WRITE));
	CU_ASSERT_EQUAL(rte_errno, EFAULT);     /* runs into the hole */
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, m + 2 * pg - 1, 2, 0));
	CU_ASSERT_EQUAL(rte_errno, EFAULT);     /* its last byte is unmapped */
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, m, 4 * pg, 0));
	CU_ASSERT_EQUAL(rte_errno, EFAULT);
	/* Read-only: readable MRs yes, writable ones no. */
	mr = drnic_reg_mr(pd, m + 3 * pg, pg, DRNIC_ACCESS_REMOTE_READ);
	CU_ASSERT_PTR_NOT_NULL(mr);
	CU_ASSERT_EQUAL(drnic_dereg_mr(mr), 0);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, m + 3 * pg, pg, DRNIC_ACCESS_LOCAL_WRITE));
	CU_ASSERT_EQUAL(rte_errno, EFAULT);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, m + 3 * pg, 8, DRNIC_ACCESS_LOCAL_WRITE |
					DRNIC_ACCESS_REMOTE_WRITE));
	CU_ASSERT_EQUAL(rte_errno, EFAULT);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(drnic_reg_mr(pd, m + 3 * pg, 8, DRNIC_ACCESS_LOCAL_WRITE |
					DRNIC_ACCESS_REMOTE_ATOMIC));
	CU_ASSERT_EQUAL(rte_errno, EFAULT);
	/* Length 0: no memory to reach. */
	mr = drnic_reg_mr(pd, m + 2 * pg, 0, DRNIC_ACCESS_LOCAL_WRITE);
	CU_ASSERT_PTR_NOT_NULL(mr);
	CU_ASSERT_EQUAL(drnic_dereg_mr(mr), 0);
	CU_ASSERT_EQUAL(dev->nb_mr, 0);
	munmap(m, 2 * pg);
	munmap(m + 3 * pg, pg);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), 0);
}

/*
 * drnic_rereg_mr(): errors change nothing; each change gives new keys (the
 * old ones fail), fences the engines once, and moves the translation, the
 * PD (and its reference) or the access as asked.
 */
static void
test_rereg(void)
{
	struct drnic_pd *pd1 = drnic_alloc_pd(dev), *pd2 = drnic_alloc_pd(dev);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	unsigned int acc = DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_READ;
	struct drnic_mr *mr;
	uint32_t k0, k1, k2;
	uint8_t *va;
	int fences;

	CU_ASSERT_FATAL(m != MAP_FAILED);
	CU_ASSERT_EQUAL_FATAL(munmap(m + 2 * pg, pg), 0);     /* page 2: a hole */
	dev->engines_attached = true;
	mr = drnic_reg_mr(pd1, m, pg, acc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mr);
	k0 = drnic_mr_lkey(mr);
	fences = ut_fences;
	/* Refused: the MR and its key stay as they were, no fence. */
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, 0, NULL, NULL, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, 8, NULL, NULL, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_rereg_mr(NULL, DRNIC_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0),
			-EINVAL);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_PD, (struct drnic_pd *)buf, NULL,
				       0, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 8, 0),
			-EINVAL);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				       DRNIC_ACCESS_REMOTE_WRITE), -EINVAL);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 1u << 9),
			-EINVAL);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_TRANSLATION, NULL, m + pg,
				       2 * pg, 0), -EFAULT);
	CU_ASSERT_EQUAL(drnic_mr_lkey(mr), k0);
	CU_ASSERT_EQUAL(ut_fences, fences);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd1, k0, (uintptr_t)m, pg, DRNIC_ACCESS_REMOTE_READ,
				       &va), 0);

	/* Translation: page 1 instead of page 0. */
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_TRANSLATION, NULL, m + pg, pg, 0),
			0);
	k1 = drnic_mr_lkey(mr);
	CU_ASSERT_NOT_EQUAL(k1, k0);
	CU_ASSERT_EQUAL(drnic_mr_rkey(mr), k1);
	CU_ASSERT_EQUAL(k1 & dev->mr_idx_mask, k0 & dev->mr_idx_mask);   /* same slot */
	CU_ASSERT_EQUAL(ut_fences, fences + 1);
	CU_ASSERT_PTR_EQUAL(drnic_mr_addr(mr), m + pg);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd1, k0, (uintptr_t)m + pg, 8, 0, &va), -ENOENT);
	CU_ASSERT_FALSE(verbs_mr_key_live(dev, k0));
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd1, k1, (uintptr_t)m + pg, pg,
				       DRNIC_ACCESS_REMOTE_READ, &va), 0);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd1, k1, (uintptr_t)m, 8, 0, &va), -ERANGE);

	/* PD: the reference moves (pd1 may go, pd2 may not). */
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	k2 = drnic_mr_lkey(mr);
	CU_ASSERT_NOT_EQUAL(k2, k1);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd1, k2, (uintptr_t)m + pg, 8, 0, &va), -EPERM);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd2, k2, (uintptr_t)m + pg, 8, 0, &va), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd1), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd2), -EBUSY);

	/* Access: remote writes instead of reads. */
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				       DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE), 0);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd2, drnic_mr_lkey(mr), (uintptr_t)m + pg, 8,
				       DRNIC_ACCESS_REMOTE_WRITE, &va), 0);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd2, drnic_mr_lkey(mr), (uintptr_t)m + pg, 8,
				       DRNIC_ACCESS_REMOTE_READ, &va), -EPERM);
	/* Memory that becomes writable must be writable. */
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0), 0);
	CU_ASSERT_EQUAL_FATAL(mprotect(m + pg, pg, PROT_READ), 0);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				       DRNIC_ACCESS_LOCAL_WRITE), -EFAULT);
	CU_ASSERT_EQUAL(ut_fences, fences + 4);

	CU_ASSERT_EQUAL(drnic_dereg_mr(mr), 0);
	CU_ASSERT_EQUAL(drnic_rereg_mr(mr, DRNIC_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0),
			-EINVAL);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd2), 0);
	dev->engines_attached = false;
	munmap(m, 2 * pg);
}

/*
 * ODP: DRNIC_ACCESS_ON_DEMAND is taken (and kept in the MR's access), and
 * drnic_advise_mr() checks every SGE before it advises: errors by kind; a
 * PREFETCH_WRITE makes the pages of a fresh mapping resident.
 */
static void
test_odp_advise(void)
{
	struct drnic_pd *pd = drnic_alloc_pd(dev), *pd2 = drnic_alloc_pd(dev);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct drnic_mr *odp, *plain, *ro;
	struct drnic_sge sg[2];
	unsigned char vec[4];
	uint8_t *va;

	CU_ASSERT_FATAL(m != MAP_FAILED);
	odp = drnic_reg_mr(pd, m, 4 * pg, DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_ON_DEMAND);
	plain = drnic_reg_mr(pd, buf, sizeof(buf), DRNIC_ACCESS_LOCAL_WRITE);
	ro = drnic_reg_mr(pd, buf, sizeof(buf), DRNIC_ACCESS_ON_DEMAND);
	CU_ASSERT_PTR_NOT_NULL_FATAL(odp);
	CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ro);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, drnic_mr_lkey(odp), (uintptr_t)m, 8,
				       DRNIC_ACCESS_LOCAL_WRITE, &va), 0);
	/* Registered, not advised: the fresh pages are not resident. */
	CU_ASSERT_EQUAL_FATAL(mincore(m, 4 * pg, vec), 0);
	CU_ASSERT_EQUAL(vec[1] & 1, 0);
	CU_ASSERT_EQUAL(vec[2] & 1, 0);
	sg[0] = (struct drnic_sge){ (uintptr_t)m + pg, (uint32_t)(2 * pg), drnic_mr_lkey(odp) };
	sg[1] = sg[0];
	CU_ASSERT_EQUAL(drnic_advise_mr(NULL, DRNIC_ADVISE_MR_PREFETCH, 0, sg, 1), -EINVAL);
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH, 2, sg, 1), -EINVAL);
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH, 0, sg, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH, 0, NULL, 1), -EINVAL);
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, 3, 0, sg, 1), -EOPNOTSUPP);
	CU_ASSERT_EQUAL(drnic_advise_mr(pd2, DRNIC_ADVISE_MR_PREFETCH, 0, sg, 1), -EINVAL);
	sg[1].lkey ^= dev->mr_idx_mask + 1;            /* not registered */
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH, 0, sg, 2), -EFAULT);
	sg[1] = sg[0];
	sg[1].length = (uint32_t)(3 * pg + 1);          /* past the MR */
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH, 0, sg, 2), -EFAULT);
	sg[1] = (struct drnic_sge){ (uintptr_t)buf, 8, drnic_mr_lkey(plain) };   /* not ODP */
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH, 0, sg, 2), -EINVAL);
	sg[1] = (struct drnic_sge){ (uintptr_t)buf, 8, drnic_mr_lkey(ro) };      /* read-only */
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH, 0, sg, 2), 0);
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH_WRITE, 0, sg, 2), -EPERM);
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH_WRITE,
					DRNIC_ADVISE_MR_FLAG_FLUSH, sg, 1), 0);
	CU_ASSERT_EQUAL_FATAL(mincore(m, 4 * pg, vec), 0);
	CU_ASSERT_EQUAL(vec[1] & 1, 1);
	CU_ASSERT_EQUAL(vec[2] & 1, 1);
	CU_ASSERT_EQUAL(vec[3] & 1, 0);
	CU_ASSERT_EQUAL(drnic_advise_mr(pd, DRNIC_ADVISE_MR_PREFETCH_NO_FAULT, 0, sg, 1), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(odp), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(plain), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(ro), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd2), 0);
	munmap(m, 4 * pg);
}

/*
 * An MR with an iova of its own (zero-based): remote checks take the iova
 * and give the host address; local checks take host addresses, which posts
 * make of SGEs (verbs_sge_to_host(): in range translated, outside it 0,
 * other keys untouched).
 */
static void
test_iova(void)
{
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	struct drnic_mr *zb, *plain;
	struct drnic_sge sg[4];
	uint8_t *va;

	CU_ASSERT_PTR_NULL(drnic_reg_mr_iova(pd, buf, 64, UINT64_MAX - 8, 0));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_FALSE(atomic_load(&dev->mr_iova_any));
	plain = drnic_reg_mr(pd, buf, sizeof(buf), DRNIC_ACCESS_LOCAL_WRITE);
	zb = drnic_reg_mr_iova(pd, buf + 4096, 4096, 0, DRNIC_ACCESS_LOCAL_WRITE |
			       DRNIC_ACCESS_REMOTE_WRITE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(zb);
	CU_ASSERT_TRUE(atomic_load(&dev->mr_iova_any));
	CU_ASSERT_EQUAL(verbs_mr_check_remote(dev, pd, drnic_mr_rkey(zb), 16, 8,
					      DRNIC_ACCESS_REMOTE_WRITE, &va), 0);
	CU_ASSERT_PTR_EQUAL(va, buf + 4096 + 16);
	CU_ASSERT_EQUAL(verbs_mr_check_remote(dev, pd, drnic_mr_rkey(zb), 4090, 8,
					      DRNIC_ACCESS_REMOTE_WRITE, &va), -ERANGE);
	CU_ASSERT_EQUAL(verbs_mr_check_remote(dev, pd, drnic_mr_rkey(zb),
					      (uintptr_t)buf + 4096, 8, 0, &va), -ERANGE);
	CU_ASSERT_EQUAL(verbs_mr_check(dev, pd, drnic_mr_lkey(zb), (uintptr_t)buf + 4096 + 16, 8,
				       DRNIC_ACCESS_LOCAL_WRITE, &va), 0);
	/* A plain MR: remote and local agree. */
	CU_ASSERT_EQUAL(verbs_mr_check_remote(dev, pd, drnic_mr_rkey(plain), (uintptr_t)buf, 8, 0,
					      &va), 0);
	CU_ASSERT_PTR_EQUAL(va, buf);
	sg[0] = (struct drnic_sge){ 100, 8, drnic_mr_lkey(zb) };
	sg[1] = (struct drnic_sge){ 4092, 8, drnic_mr_lkey(zb) };       /* past its end */
	sg[2] = (struct drnic_sge){ (uintptr_t)buf + 8, 8, drnic_mr_lkey(plain) };
	sg[3] = (struct drnic_sge){ 100, 8, drnic_mr_lkey(zb) ^ (dev->mr_idx_mask + 1) };
	verbs_sges_fix(dev, sg, 4);
	CU_ASSERT_EQUAL(sg[0].addr, (uintptr_t)buf + 4096 + 100);
	CU_ASSERT_EQUAL(sg[1].addr, 0);
	CU_ASSERT_EQUAL(sg[2].addr, (uintptr_t)buf + 8);
	CU_ASSERT_EQUAL(sg[3].addr, 100);
	CU_ASSERT_EQUAL(drnic_dereg_mr(zb), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(plain), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), 0);
}

/* A device whose MR table has @p max_mr slots, keys from its own seed. */
static struct drnic_device *
ut_mr_dev(unsigned int max_mr)
{
	struct drnic_device *d = ut_dev_new(1, 8);

	free(d->mr_tab);
	d->cfg.max_mr = max_mr;
	d->mr_tab_size = max_mr + 1;
	d->mr_tab = calloc(d->mr_tab_size, sizeof(d->mr_tab[0]));
	verbs_mr_table_setup(d);
	return d;
}

/*
 * Issue 13, defect 10: a freed key is not handed out again soon. With one
 * MR slot, 10000 registrations in a row never repeat a key (the old 8-bit
 * generation came back after 256), each stale key fails the engine's
 * check and verbs_mr_key_live(), the live one passes.
 */
static void
test_key_not_reused(void)
{
	enum { N = 10000 };
	struct drnic_device *d = ut_mr_dev(1);
	struct drnic_pd *pd = drnic_alloc_pd(d);
	uint32_t *keys = calloc(N, sizeof(*keys));
	unsigned int i, j, repeats = 0;
	uint8_t *va;

	CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
	for (i = 0; i < N; i++) {
		struct drnic_mr *mr = drnic_reg_mr(pd, buf, 8, DRNIC_ACCESS_LOCAL_WRITE);

		CU_ASSERT_PTR_NOT_NULL_FATAL(mr);
		keys[i] = drnic_mr_lkey(mr);
		CU_ASSERT_NOT_EQUAL(keys[i], 0);
		CU_ASSERT(verbs_mr_key_live(d, keys[i]));
		if (i > 0) {
			CU_ASSERT_FALSE(verbs_mr_key_live(d, keys[i - 1]));
			CU_ASSERT_EQUAL(verbs_mr_check(d, pd, keys[i - 1], (uintptr_t)buf, 8, 0, &va),
					-ENOENT);
		}
		CU_ASSERT_EQUAL(verbs_mr_check(d, pd, keys[i], (uintptr_t)buf, 8, 0, &va), 0);
		CU_ASSERT_EQUAL(drnic_dereg_mr(mr), 0);
		CU_ASSERT_FALSE(verbs_mr_key_live(d, keys[i]));
	}
	/* Sorted, neighbours differ: no key twice. */
	for (i = 1; i < N; i++)
		for (j = i; j > 0 && keys[j - 1] > keys[j]; j--) {
			uint32_t t = keys[j];

			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	for (i = 1; i < N; i++)
		repeats += keys[i] == keys[i - 1];
	CU_ASSERT_EQUAL(repeats, 0);
	CU_ASSERT_FALSE(verbs_mr_key_live(d, 0));
	free(keys);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pd), 0);
	free(d->mr_tab);
	d->mr_tab = NULL;
	ut_dev_free(d);
}

/*
 * Keys are not sequential: the steps between one slot's keys, and between
 * the keys of fresh slots, are not one constant; two devices (two seeds)
 * hand out different keys for the same registrations. A freed slot waits
 * behind the other free ones (FIFO), so its next key comes as late as
 * possible.
 */
static void
test_key_unpredictable(void)
{
	struct drnic_device *a = ut_mr_dev(16), *b = ut_mr_dev(16);
	struct drnic_pd *pa = drnic_alloc_pd(a), *pb = drnic_alloc_pd(b);
	struct drnic_mr *ma[16], *mb[16], *mr;
	unsigned int i, same = 0, steps_equal = 0;
	uint32_t idx0, k[8];

	for (i = 0; i < 16; i++) {
		ma[i] = drnic_reg_mr(pa, buf, 8, 0);
		mb[i] = drnic_reg_mr(pb, buf, 8, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ma[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mb[i]);
		same += drnic_mr_lkey(ma[i]) == drnic_mr_lkey(mb[i]);
		if (i >= 2)
			steps_equal += drnic_mr_lkey(ma[i]) - drnic_mr_lkey(ma[i - 1]) ==
				       drnic_mr_lkey(ma[i - 1]) - drnic_mr_lkey(ma[i - 2]);
	}
	CU_ASSERT(same < 4);
	CU_ASSERT(steps_equal < 4);
	/* FIFO: slot of ma[0] freed first, then ma[1]; the next two
	 * registrations take them in that order. */
	idx0 = drnic_mr_lkey(ma[0]) & a->mr_idx_mask;
	CU_ASSERT_EQUAL(drnic_dereg_mr(ma[0]), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(ma[1]), 0);
	CU_ASSERT_EQUAL(drnic_dereg_mr(ma[2]), 0);
	ma[0] = drnic_reg_mr(pa, buf, 8, 0);
	CU_ASSERT_EQUAL(drnic_mr_lkey(ma[0]) & a->mr_idx_mask, idx0);
	ma[1] = drnic_reg_mr(pa, buf, 8, 0);
	ma[2] = drnic_reg_mr(pa, buf, 8, 0);
	/* One slot's successive keys. */
	for (i = 0; i < RTE_DIM(k); i++) {
		mr = drnic_reg_mr(pa, buf, 8, 0);
		CU_ASSERT_PTR_NULL(mr);               /* the table is full */
		CU_ASSERT_EQUAL(drnic_dereg_mr(ma[3]), 0);
		ma[3] = drnic_reg_mr(pa, buf, 8, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ma[3]);
		k[i] = drnic_mr_lkey(ma[3]);
	}
	for (i = 2, steps_equal = 0; i < RTE_DIM(k); i++)
		steps_equal += k[i] - k[i - 1] == k[i - 1] - k[i - 2];
	CU_ASSERT(steps_equal < 2);
	for (i = 0; i < 16; i++) {
		CU_ASSERT_EQUAL(drnic_dereg_mr(ma[i]), 0);
		CU_ASSERT_EQUAL(drnic_dereg_mr(mb[i]), 0);
	}
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pa), 0);
	CU_ASSERT_EQUAL(drnic_dealloc_pd(pb), 0);
	free(a->mr_tab);
	free(b->mr_tab);
	a->mr_tab = b->mr_tab = NULL;
	ut_dev_free(a);
	ut_dev_free(b);
}

static void
test_alloc(void)
{
	void *p;

	CU_ASSERT_PTR_NULL(drnic_alloc(0, 0, -1));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(drnic_alloc(64, 3, -1));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	p = drnic_alloc(100, 4096, -1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL((uintptr_t)p % 4096, 0);
	CU_ASSERT_EQUAL(((uint8_t *)p)[99], 0);
	drnic_free(p);
	drnic_free(NULL);
	CU_ASSERT_EQUAL(ut_live, 0);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("verbs_mr", ut_setup, ut_teardown);
	CU_ADD_TEST(s, test_pd);
	CU_ADD_TEST(s, test_keys);
	CU_ADD_TEST(s, test_reg_errors);
	CU_ADD_TEST(s, test_reg_unmapped);
	CU_ADD_TEST(s, test_rereg);
	CU_ADD_TEST(s, test_odp_advise);
	CU_ADD_TEST(s, test_iova);
	CU_ADD_TEST(s, test_key_not_reused);
	CU_ADD_TEST(s, test_key_unpredictable);
	CU_ADD_TEST(s, test_alloc);
	return ut_run_all();
}
