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
	c->vctx.alloc_td = dibv_alloc_td;
	c->vctx.dealloc_td = dibv_dealloc_td;
	c->vctx.alloc_parent_domain = dibv_alloc_parent_domain;
	c->vctx.advise_mr = dibv_advise_mr;
}
