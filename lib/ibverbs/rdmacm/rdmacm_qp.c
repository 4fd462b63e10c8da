/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm's QPs and SRQs, as librdmacm makes them: with
 * ibv_* calls on the id's context, on the program's PD or the context's
 * default one, with CQs (and completion channels) of the id's own when the
 * program gives none, the rdma_verbs.h helpers' id->send_cq / recv_cq. A
 * connected QP is moved to INIT at once with the CM's attributes
 * (drnic_ibcm_init_qp_attr()); a UD QP goes to RTS at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

int
rcm_qp_move(struct rcm_id *w, enum ibv_qp_state state, uint8_t resources)
{
	struct drnic_qp_attr da;
	struct ibv_qp_attr qa;
	int mask = 0, rc;

	memset(&da, 0, sizeof(da));
	da.qp_state = (enum drnic_qp_state)state;
	rc = drnic_ibcm_init_qp_attr(w->did, &da, &mask);
	if (rc < 0)
		return rcm_err(rc);
	drnic_ibv_qp_attr_from_drnic(&da, &qa);
	/* The CM knows XRC ids as RC ones: an XRC initiator takes none of the
	 * responder's attributes, a target none of the requester's. */
	if (w->id.qp->qp_type == IBV_QPT_XRC_SEND)
		mask &= ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	else if (w->id.qp->qp_type == IBV_QPT_XRC_RECV)
		mask &= ~(IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (resources != 0xFF && state == IBV_QPS_RTR && (mask & IBV_QP_MAX_DEST_RD_ATOMIC))
		qa.max_dest_rd_atomic = resources;
	if (resources != 0xFF && state == IBV_QPS_RTS && (mask & IBV_QP_MAX_QP_RD_ATOMIC))
		qa.max_rd_atomic = resources;
	rc = ibv_modify_qp(w->id.qp, &qa, mask);
	return rc != 0 ? rcm_seterr(rc) : 0;
}

void
rcm_qp_error(struct rcm_id *w)
{
	struct ibv_qp_attr qa;

	if (w->id.qp == NULL)
		return;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_ERR;
	(void)ibv_modify_qp(w->id.qp, &qa, IBV_QP_STATE);
}

int
rcm_qp_ud_ready(struct rcm_id *w)
{
	struct ibv_qp_attr qa;
	int rc;

	if (rcm_qp_move(w, IBV_QPS_INIT, 0xFF) < 0)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	rc = ibv_modify_qp(w->id.qp, &qa, IBV_QP_STATE);
	if (rc == 0) {
		qa.qp_state = IBV_QPS_RTS;
		qa.sq_psn = 0;
		rc = ibv_modify_qp(w->id.qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	return rc != 0 ? rcm_seterr(rc) : 0;
}

/** rdma_init_qp_attr(3): attributes for qp_attr->qp_state, from the CM. */
RCM_EXPORT int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct drnic_qp_attr da;
	int rc;

	if (id == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return rcm_seterr(EINVAL);
	memset(&da, 0, sizeof(da));
	da.qp_state = (enum drnic_qp_state)qp_attr->qp_state;
	rc = drnic_ibcm_init_qp_attr(rcm_id_of(id)->did, &da, qp_attr_mask);
	if (rc < 0)
		return rcm_err(rc);
	drnic_ibv_qp_attr_from_drnic(&da, qp_attr);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* CQs of the id's own                                                      */
/* ------------------------------------------------------------------------ */

static void
rcm_cqs_destroy(struct rcm_id *w)
{
	struct rdma_cm_id *id = &w->id;

	if (!w->own_cqs)
		return;
	if (id->recv_cq != NULL && id->recv_cq != id->send_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq != NULL)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq_channel != NULL)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
	w->own_cqs = false;
}

/* One CQ and its completion channel; @return 0 or -1/errno. */
static int
rcm_cq_new(struct ibv_context *ctx, uint32_t size, struct ibv_comp_channel **ch,
	   struct ibv_cq **cq)
{
	*ch = ibv_create_comp_channel(ctx);
	if (*ch == NULL)
		return -1;
	*cq = ibv_create_cq(ctx, size > 0 ? (int)size : 1, NULL, *ch, 0);
	if (*cq == NULL) {
		int e = errno;

		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		return rcm_seterr(e);
	}
	return 0;
}

/* The CQs the program did not give (librdmacm's rule: a send CQ sized by
 * max_send_wr, a receive CQ by max_recv_wr, each with its channel). */
static int
rcm_cqs_make(struct rcm_id *w, struct ibv_qp_init_attr_ex *attr)
{
	struct rdma_cm_id *id = &w->id;

	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return 0;
	w->own_cqs = true;
	if (attr->send_cq == NULL &&
	    rcm_cq_new(id->verbs, attr->cap.max_send_wr, &id->send_cq_channel, &id->send_cq) < 0)
		goto fail;
	if (attr->recv_cq == NULL && attr->qp_type != IBV_QPT_XRC_SEND &&
	    rcm_cq_new(id->verbs, attr->cap.max_recv_wr, &id->recv_cq_channel, &id->recv_cq) < 0)
		goto fail;
	if (attr->send_cq == NULL)
		attr->send_cq = id->send_cq;
	if (attr->recv_cq == NULL)
		attr->recv_cq = id->recv_cq;
	return 0;
fail:
	{
		int e = errno;

		rcm_cqs_destroy(w);
		return rcm_seterr(e);
	}
}

/* The PD to use: the program's (on the id's context), else the context's
 * default. */
static struct ibv_pd *
rcm_pd(struct rdma_cm_id *id, struct ibv_pd *pd)
{
	if (pd == NULL)
		pd = id->pd;
	if (pd == NULL)
		return rcm_default_pd(id->verbs);
	if (pd->context != id->verbs) {
		errno = EINVAL;
		return NULL;
	}
	return pd;
}

/** rdma_create_qp_ex(3). */
RCM_EXPORT int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct rcm_id *w;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	int rc;

	if (id == NULL || attr == NULL || id->qp != NULL || id->verbs == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	pd = rcm_pd(id, (attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? attr->pd : NULL);
	if (pd == NULL)
		return -1;
	attr->pd = pd;
	attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	if (attr->qp_type == IBV_QPT_XRC_RECV && !(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD)) {
		attr->xrcd = rcm_default_xrcd(id->verbs);
		if (attr->xrcd == NULL)
			return -1;
		attr->comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	}
	if (id->srq != NULL && attr->srq == NULL && attr->qp_type != IBV_QPT_XRC_RECV)
		attr->srq = id->srq;
	if (rcm_cqs_make(w, attr) < 0)
		return -1;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (qp == NULL) {
		rc = errno;
		rcm_cqs_destroy(w);
		return rcm_seterr(rc);
	}
	id->qp = qp;
	id->pd = pd;
	if (attr->qp_type == IBV_QPT_UD)
		rc = rcm_qp_ud_ready(w);
	else
		rc = rcm_qp_move(w, IBV_QPS_INIT, 0xFF);
	if (rc < 0) {
		rc = errno;
		ibv_destroy_qp(qp);
		id->qp = NULL;
		rcm_cqs_destroy(w);
		return rcm_seterr(rc);
	}
	return 0;
}

/** rdma_create_qp(3): on @p pd, or the id's, or the context's default. */
RCM_EXPORT int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	int rc;

	if (qp_init_attr == NULL)
		return rcm_seterr(EINVAL);
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	ex.pd = pd;
	rc = rdma_create_qp_ex(id, &ex);
	if (rc == 0)
		memcpy(qp_init_attr, &ex, sizeof(*qp_init_attr));
	return rc;
}

/** rdma_destroy_qp(3): the QP, and the CQs made for it. */
RCM_EXPORT void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id == NULL || id->qp == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	rcm_cqs_destroy(rcm_id_of(id));
}

/* ------------------------------------------------------------------------ */
/* SRQs                                                                     */
/* ------------------------------------------------------------------------ */

/* The CQ rdma_create_srq_ex() made. */
static void
rcm_srq_extras_free(struct rcm_id *w)
{
	struct rdma_cm_id *id = &w->id;

	if (w->own_srq_cq != NULL) {
		ibv_destroy_cq(w->own_srq_cq);
		ibv_destroy_comp_channel(id->recv_cq_channel);
		id->recv_cq = NULL;
		id->recv_cq_channel = NULL;
		w->own_srq_cq = NULL;
	}
}

/** rdma_create_srq_ex(3): an XRC SRQ gets the device's XRC domain and a CQ
 * of its own if none. */
RCM_EXPORT int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct rcm_id *w;
	struct ibv_srq *srq;
	struct ibv_pd *pd;
	int e;

	if (id == NULL || attr == NULL || id->srq != NULL || id->verbs == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	pd = rcm_pd(id, (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) ? attr->pd : NULL);
	if (pd == NULL)
		return -1;
	attr->pd = pd;
	attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) {
		attr->srq_type = IBV_SRQT_BASIC;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_TYPE;
	}
	if (attr->srq_type == IBV_SRQT_XRC) {
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || attr->xrcd == NULL) {
			attr->xrcd = rcm_default_xrcd(id->verbs);
			if (attr->xrcd == NULL)
				return -1;
			attr->comp_mask |= IBV_SRQ_INIT_ATTR_XRCD;
		}
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || attr->cq == NULL) {
			if (rcm_cq_new(id->verbs, attr->attr.max_wr, &id->recv_cq_channel,
				       &id->recv_cq) < 0)
				goto fail;
			w->own_srq_cq = id->recv_cq;
			attr->cq = id->recv_cq;
			attr->comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
		}
	}
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (srq == NULL)
		goto fail;
	id->srq = srq;
	w->own_srq = srq;
	return 0;
fail:
	e = errno;
	rcm_srq_extras_free(w);
	return rcm_seterr(e);
}

/** rdma_create_srq(3). */
RCM_EXPORT int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;
	int rc;

	if (attr == NULL)
		return rcm_seterr(EINVAL);
	memset(&ex, 0, sizeof(ex));
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | (pd != NULL ? IBV_SRQ_INIT_ATTR_PD : 0);
	ex.srq_type = id != NULL && id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC
								: IBV_SRQT_BASIC;
	ex.pd = pd;
	rc = rdma_create_srq_ex(id, &ex);
	if (rc == 0)
		attr->attr = ex.attr;
	return rc;
}

/** rdma_destroy_srq(3): and the CQ made for it. */
RCM_EXPORT void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	struct rcm_id *w;

	if (id == NULL || id->srq == NULL)
		return;
	w = rcm_id_of(id);
	ibv_destroy_srq(id->srq);
	if (w->own_srq == id->srq)
		w->own_srq = NULL;
	id->srq = NULL;
	rcm_srq_extras_free(w);
}
