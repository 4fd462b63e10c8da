/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic's drop-in libibverbs: XRC domains (ibv_open_xrcd, ibv_close_xrcd),
 * ibv_create_srq_ex (basic and XRC) and ibv_get_srq_num. libibverbs' inline
 * wrappers reach them through the verbs_context ops this file installs.
 * XRC QPs are ibv_create_qp_ex's and ibv_open_qp's (ibv_verbs.c).
 */
#include <errno.h>
#include <stdlib.h>

#include <rte_errno.h>

#include "ibv_priv.h"

static struct ibv_xrcd *
dibv_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *ia)
{
	const uint32_t need = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	struct dibv_xrcd *x;

	/* libibverbs' rule: both fields given, nothing else. */
	if (context == NULL || ia == NULL || (ia->comp_mask & need) != need ||
	    ia->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	x->dx = drnic_open_xrcd(dibv_ctx(context)->d->dev, ia->fd, ia->oflags);
	if (x->dx == NULL) {
		errno = rte_errno ? rte_errno : EINVAL;
		free(x);
		return NULL;
	}
	x->xrcd.context = context;
	if (handle_add(x, HANDLE_IBV_XRCD) < 0) {
		drnic_close_xrcd(x->dx);
		free(x);
		errno = ENOMEM;
		return NULL;
	}
	return &x->xrcd;
}

static int
dibv_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct dibv_xrcd *x = dibv_xrcd_of(xrcd);
	int rc;

	if (handle_take(x, HANDLE_IBV_XRCD) < 0)
		return DIBV_ERR(EINVAL);
	rc = drnic_close_xrcd(x->dx);
	if (rc < 0)
		return dibv_handle_undo(x, HANDLE_IBV_XRCD, dibv_errno(rc));
	free(x);
	return 0;
}

/* ibv_create_srq_ex(3): the basic type (which libibverbs' inline wrapper
 * sends to ibv_create_srq when only PD and TYPE are given) and XRC. */
static struct ibv_srq *
dibv_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *ax)
{
	struct drnic_srq_init_attr a = { 0 };
	enum ibv_srq_type type;

	if (context == NULL || ax == NULL || !(ax->comp_mask & IBV_SRQ_INIT_ATTR_PD) ||
	    ax->pd == NULL || ax->comp_mask >= IBV_SRQ_INIT_ATTR_RESERVED) {
		errno = EINVAL;
		return NULL;
	}
	type = (ax->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? ax->srq_type : IBV_SRQT_BASIC;
	if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC) {
		errno = EOPNOTSUPP;    /* tag matching */
		return NULL;
	}
	if (type == IBV_SRQT_XRC) {
		if ((ax->comp_mask & (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)) !=
		    (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ) ||
		    !handle_live(dibv_xrcd_of(ax->xrcd), HANDLE_IBV_XRCD) ||
		    !handle_live(dibv_cq_of(ax->cq), HANDLE_IBV_CQ)) {
			errno = EINVAL;
			return NULL;
		}
		a.srq_type = DRNIC_SRQT_XRC;
		a.xrcd = dibv_xrcd_of(ax->xrcd)->dx;
		a.cq = dibv_cq_of(ax->cq)->dcq;
	}
	return dibv_srq_new(ax->pd, &a, &ax->attr, ax->srq_context);
}

static int
dibv_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	struct dibv_srq *s = dibv_srq_of(srq);
	int rc;

	if (!handle_live(s, HANDLE_IBV_SRQ))
		return DIBV_ERR(EINVAL);
	rc = drnic_srq_num(s->dsrq, srq_num);
	return rc < 0 ? dibv_errno(rc) : 0;
}

void
dibv_xrc_ops_init(struct dibv_context *c)
{
	c->vctx.open_xrcd = dibv_open_xrcd;
	c->vctx.close_xrcd = dibv_close_xrcd;
	c->vctx.create_srq_ex = dibv_create_srq_ex;
	c->vctx.get_srq_num = dibv_get_srq_num;
}
