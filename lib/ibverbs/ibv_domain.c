/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic's drop-in libibverbs: thread domains, parent domains, ODP advice and
 * capabilities, and what ibv_query_qp_data_in_order() answers. These are
 * verbs_context extension ops (ibv_alloc_td() and friends are inline
 * functions of <infiniband/verbs.h> that call them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "ibv_priv.h"

/* A zeroed object of @p size, registered as a live handle of @p kind; NULL
 * with errno ENOMEM. */
static void *
dibv_obj_new(size_t size, enum handle_kind kind)
{
	void *o = calloc(1, size);

	if (o == NULL || handle_add(o, kind) < 0) {
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

/* ------------------------------------------------------------------------ */
/* Thread domains                                                           */
/* ------------------------------------------------------------------------ */

/*
 * A thread domain promises that its objects are used by one thread at a
 * time, so a provider may drop its locks. drnic's data path takes none
 * (one poster per queue, one consumer per CQ, as DESIGN.md's engines
 * require), so a TD changes nothing but is honoured as the man page says:
 * any object may be created under it through a parent domain.
 */
static struct ibv_td *
dibv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *init_attr)
{
	struct dibv_td *t;

	if (context == NULL || init_attr == NULL || init_attr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	t = dibv_obj_new(sizeof(*t), HANDLE_IBV_TD);
	if (t == NULL)
		return NULL;
	t->td.context = context;
	return &t->td;
}

/* EINVAL (not a live TD), EBUSY (a parent domain uses it). */
static int
dibv_dealloc_td(struct ibv_td *td)
{
	struct dibv_td *t = (struct dibv_td *)(void *)td;

	if (handle_take(t, HANDLE_IBV_TD) < 0)
		return DIBV_ERR(EINVAL);
	if (atomic_load(&t->parents) != 0)
		return dibv_handle_undo(t, HANDLE_IBV_TD, DIBV_ERR(EBUSY));
	free(t);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Parent domains                                                           */
/* ------------------------------------------------------------------------ */

/*
 * A parent domain is an ibv_pd everywhere a PD is taken (QPs, SRQs, MRs,
 * and the CQ's parent_domain): it carries its PD's drnic PD. Custom
 * allocators are accepted and kept, and not called: the memory drnic's
 * objects need (rings, WQEs, CQEs) is hugepage memory its engines reach,
 * which an application allocator cannot provide; the man page lets a
 * provider fall back to its own allocation (IBV_ALLOCATOR_USE_DEFAULT).
 */
static struct ibv_pd *
dibv_alloc_parent_domain(struct ibv_context *context, struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct dibv_pd *pd, *p;
	struct dibv_td *t;

	if (context == NULL || attr == NULL || (attr->comp_mask & ~known) != 0) {
		errno = EINVAL;
		return NULL;
	}
	pd = (struct dibv_pd *)(void *)attr->pd;
	t = (struct dibv_td *)(void *)attr->td;
	if (!handle_live(pd, HANDLE_IBV_PD) || pd->parent_of != NULL ||
	    pd->pd.context != context ||
	    (t != NULL && (!handle_live(t, HANDLE_IBV_TD) || t->td.context != context)) ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (attr->alloc == NULL || attr->free == NULL))) {
		errno = EINVAL;
		return NULL;
	}
	p = dibv_obj_new(sizeof(*p), HANDLE_IBV_PD);
	if (p == NULL)
		return NULL;
	p->pd.context = context;
	p->pd.handle = pd->pd.handle;
	p->dpd = pd->dpd;
	p->parent_of = pd;
	p->td = t;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		p->pd_context = attr->pd_context;
	atomic_fetch_add(&pd->parents, 1);
	if (t != NULL)
		atomic_fetch_add(&t->parents, 1);
	return &p->pd;
}

bool
dibv_is_parent_domain(const struct ibv_pd *pd, const struct ibv_context *ctx)
{
	const struct dibv_pd *p = (const struct dibv_pd *)(const void *)pd;

	return handle_live(p, HANDLE_IBV_PD) && p->parent_of != NULL && p->pd.context == ctx;
}

void
dibv_parent_free(struct dibv_pd *p)
{
	atomic_fetch_sub(&p->parent_of->parents, 1);
	if (p->td != NULL)
		atomic_fetch_sub(&p->td->parents, 1);
	free(p);
}

/* ------------------------------------------------------------------------ */
/* On-demand paging                                                         */
/* ------------------------------------------------------------------------ */

/*
 * What drnic's engines honour of ODP: they reach an MR through the
 * process's page tables at each access, pinning nothing, for every
 * operation of RC and UC. Implicit ODP (the whole address space as one MR)
 * is not offered: an engine would meet unmapped addresses that it cannot
 * fault in safely.
 */
void
dibv_odp_caps(struct ibv_odp_caps *caps, uint32_t *xrc_odp_caps)
{
	memset(caps, 0, sizeof(*caps));
	caps->general_caps = IBV_ODP_SUPPORT;
	caps->per_transport_caps.rc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
					       IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
					       IBV_ODP_SUPPORT_ATOMIC |
					       IBV_ODP_SUPPORT_SRQ_RECV;
	caps->per_transport_caps.uc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
					       IBV_ODP_SUPPORT_WRITE;
	*xrc_odp_caps = 0;
}

/* ibv_advise_mr(3): drnic_advise_mr() (struct ibv_sge is struct drnic_sge). */
static int
dibv_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
	       struct ibv_sge *sg_list, uint32_t num_sges)
{
	struct dibv_pd *p = (struct dibv_pd *)(void *)pd;
	int rc;

	if (!handle_live(p, HANDLE_IBV_PD))
		return DIBV_ERR(EINVAL);
	rc = drnic_advise_mr(p->dpd, (int)advice, flags, (const struct drnic_sge *)sg_list,
			     num_sges);
	return rc < 0 ? dibv_errno(rc) : 0;
}

/* ------------------------------------------------------------------------ */
/* Data placement order                                                     */
/* ------------------------------------------------------------------------ */

/*
 * Not guaranteed for any operation, so 0: the engines copy each packet's
 * payload with rte_memcpy (and the copy that verifies a WRITE
 * continuation's ICRC), which may store a packet's tail before its head;
 * and a continuation with a bad ICRC may write its range before the frame
 * is dropped (design notes: "WRITE continuations are placed before their
 * ICRC is known"). A reader must poll the completion, not the data.
 */
DIBV_EXPORT int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Device memory                                                            */
/* ------------------------------------------------------------------------ */

/*
 * drnic's "device memory" is what its engines reach as a NIC reaches its
 * own: hugepage memory (drnic_alloc(), rte_malloc), up to DIBV_MAX_DM_SIZE
 * per device. ibv_memcpy_to/from_dm copy with the CPU; ibv_reg_dm_mr
 * registers a zero-based MR on it (drnic_reg_mr_iova() with iova 0), which
 * SGEs and peers address by offset.
 */
static int
dibv_memcpy_to_dm(struct ibv_dm *dm, uint64_t off, const void *host, size_t length)
{
	struct dibv_dm *d = (struct dibv_dm *)(void *)dm;

	if (!handle_live(d, HANDLE_IBV_DM) || off > d->length || length > d->length - off ||
	    (host == NULL && length != 0))
		return DIBV_ERR(EINVAL);
	memcpy(d->buf + off, host, length);
	return 0;
}

static int
dibv_memcpy_from_dm(void *host, struct ibv_dm *dm, uint64_t off, size_t length)
{
	struct dibv_dm *d = (struct dibv_dm *)(void *)dm;

	if (!handle_live(d, HANDLE_IBV_DM) || off > d->length || length > d->length - off ||
	    (host == NULL && length != 0))
		return DIBV_ERR(EINVAL);
	memcpy(host, d->buf + off, length);
	return 0;
}

/* EINVAL (no attributes, length 0, an unknown comp_mask, an alignment above
 * 1 GiB), ENOMEM (max_dm_size reached, no hugepage memory). */
static struct ibv_dm *
dibv_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	struct dibv_device *dev;
	struct dibv_dm *d;
	size_t used;

	if (context == NULL || attr == NULL || attr->length == 0 || attr->comp_mask != 0 ||
	    attr->log_align_req > 30) {
		errno = EINVAL;
		return NULL;
	}
	dev = dibv_ctx(context)->d;
	used = atomic_fetch_add(&dev->dm_used, attr->length);
	if (attr->length > DIBV_MAX_DM_SIZE || used > DIBV_MAX_DM_SIZE - attr->length) {
		atomic_fetch_sub(&dev->dm_used, attr->length);
		errno = ENOMEM;
		return NULL;
	}
	d = dibv_obj_new(sizeof(*d), HANDLE_IBV_DM);
	if (d != NULL)
		d->buf = drnic_alloc(attr->length,
				     RTE_MAX((size_t)64, (size_t)1 << attr->log_align_req), -1);
	if (d == NULL || d->buf == NULL) {
		if (d != NULL) {
			(void)handle_take(d, HANDLE_IBV_DM);
			free(d);
		}
		atomic_fetch_sub(&dev->dm_used, attr->length);
		errno = ENOMEM;
		return NULL;
	}
	d->length = attr->length;
	d->dm.context = context;
	d->dm.memcpy_to_dm = dibv_memcpy_to_dm;
	d->dm.memcpy_from_dm = dibv_memcpy_from_dm;
	d->dm.handle = (uint32_t)(uintptr_t)d;
	return &d->dm;
}

/* EINVAL (not a live DM), EBUSY (an MR is registered on it). */
static int
dibv_free_dm(struct ibv_dm *dm)
{
	struct dibv_dm *d = (struct dibv_dm *)(void *)dm;

	if (handle_take(d, HANDLE_IBV_DM) < 0)
		return DIBV_ERR(EINVAL);
	if (atomic_load(&d->mrs) != 0)
		return dibv_handle_undo(d, HANDLE_IBV_DM, DIBV_ERR(EBUSY));
	atomic_fetch_sub(&dibv_ctx(d->dm.context)->d->dm_used, d->length);
	drnic_free(d->buf);
	free(d);
	return 0;
}

void
dibv_dm_mr_gone(struct dibv_dm *dm)
{
	atomic_fetch_sub(&dm->mrs, 1);
}

/* A zero-based MR on [dm_offset, dm_offset + length) of @p dm: EINVAL
 * without IBV_ACCESS_ZERO_BASED (the man page requires it), for a bad PD or
 * DM, or a range outside the DM; EOPNOTSUPP for access bits drnic has not. */
static struct ibv_mr *
dibv_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset, size_t length,
	       unsigned int access)
{
	const unsigned int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_ZERO_BASED;
	struct dibv_pd *p = (struct dibv_pd *)(void *)pd;
	struct dibv_dm *d = (struct dibv_dm *)(void *)dm;
	struct dibv_mr *m;

	if (!handle_live(p, HANDLE_IBV_PD) || !handle_live(d, HANDLE_IBV_DM) ||
	    d->dm.context != pd->context || !(access & IBV_ACCESS_ZERO_BASED) ||
	    dm_offset > d->length || length > d->length - dm_offset) {
		errno = EINVAL;
		return NULL;
	}
	if (access & ~known & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	m = dibv_obj_new(sizeof(*m), HANDLE_IBV_MR);
	if (m == NULL)
		return NULL;
	m->dmr = drnic_reg_mr_iova(p->dpd, d->buf + dm_offset, length, 0,
				   access & (known & ~(unsigned int)IBV_ACCESS_ZERO_BASED));
	if (m->dmr == NULL) {
		(void)handle_take(m, HANDLE_IBV_MR);
		free(m);
		errno = rte_errno != 0 ? rte_errno : EINVAL;
		return NULL;
	}
	atomic_fetch_add(&d->mrs, 1);
	m->dm = d;
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = NULL;          /* zero-based: offsets from 0 */
	m->mr.length = length;
	m->mr.lkey = drnic_mr_lkey(m->dmr);
	m->mr.rkey = drnic_mr_rkey(m->dmr);
	m->mr.handle = m->mr.lkey;
	return &m->mr;
}

/* ------------------------------------------------------------------------ */
/* The device clock                                                         */
/* ------------------------------------------------------------------------ */

/*
 * IBV_VALUES_MASK_RAW_CLOCK: the clock completion timestamps are on
 * (drnic_cq_clock_ns(), nanoseconds: hca_core_clock is 1 GHz), as a
 * timespec (tv_sec * 10^9 + tv_nsec is the raw value). Other bits are left
 * out of the returned comp_mask, which says what was filled.
 */
static int
dibv_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	uint64_t ns;

	if (context == NULL || values == NULL)
		return DIBV_ERR(EINVAL);
	if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) {
		values->comp_mask = 0;
		return 0;
	}
	ns = drnic_cq_clock_ns();
	values->raw_clock.tv_sec = (time_t)(ns / 1000000000u);
	values->raw_clock.tv_nsec = (long)(ns % 1000000000u);
	values->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	return 0;
}

void
dibv_domain_ops_init(struct dibv_context *c)
{
	c->vctx.query_rt_values = dibv_query_rt_values;
	c->vctx.alloc_dm = dibv_alloc_dm;
	c->vctx.free_dm = dibv_free_dm;
	c->vctx.reg_dm_mr = dibv_reg_dm_mr;
	c->vctx.alloc_td = dibv_alloc_td;
	c->vctx.dealloc_td = dibv_dealloc_td;
	c->vctx.alloc_parent_domain = dibv_alloc_parent_domain;
	c->vctx.advise_mr = dibv_advise_mr;
}
