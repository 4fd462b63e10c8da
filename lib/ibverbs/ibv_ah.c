/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in's address handles and multicast (UD): ibv_create_ah,
 * ibv_destroy_ah, ibv_init_ah_from_wc, ibv_create_ah_from_wc,
 * ibv_attach_mcast, ibv_detach_mcast, over drnic_create_ah() and friends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "ibv_priv.h"

DIBV_EXPORT struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct dibv_pd *p = (struct dibv_pd *)(void *)pd;
	struct drnic_ah_attr a;
	struct dibv_ah *h;

	if (pd == NULL || attr == NULL || !handle_live(p, HANDLE_IBV_PD)) {
		errno = EINVAL;
		return NULL;
	}
	dibv_ah_to_drnic(attr, &a);
	dibv_fix_av(pd->context, &a);
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	h->dah = drnic_create_ah(p->dpd, &a);
	if (h->dah == NULL) {
		errno = rte_errno ? rte_errno : EINVAL;
		free(h);
		return NULL;
	}
	h->ah.context = pd->context;
	h->ah.pd = pd;
	h->ah.handle = 0;
	if (handle_add(h, HANDLE_IBV_AH) < 0) {
		drnic_destroy_ah(h->dah);
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	return &h->ah;
}

DIBV_EXPORT int
ibv_destroy_ah(struct ibv_ah *ah)
{
	struct dibv_ah *h = dibv_ah_of(ah);
	int rc;

	if (handle_take(h, HANDLE_IBV_AH) < 0)
		return DIBV_ERR(EINVAL);
	rc = drnic_destroy_ah(h->dah);
	if (rc < 0)
		return dibv_handle_undo(h, HANDLE_IBV_AH, dibv_errno(rc));
	free(h);
	return 0;
}

DIBV_EXPORT int
ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
		    struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	struct drnic_ah_attr a;
	int rc;

	if (context == NULL || wc == NULL || grh == NULL || ah_attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* struct drnic_wc is struct ibv_wc (lib/cq's ABI test). */
	rc = drnic_init_ah_from_wc(dibv_ctx(context)->d->dev, port_num,
				   (const struct drnic_wc *)(const void *)wc, grh, &a);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	dibv_ah_from_drnic(&a, ah_attr);
	return 0;
}

DIBV_EXPORT struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return ibv_create_ah(pd, &attr);
}

DIBV_EXPORT int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct dibv_qp *q = dibv_qp_of(qp);
	int rc;

	if (qp == NULL || !handle_live(q, HANDLE_IBV_QP))
		return DIBV_ERR(EINVAL);
	/* union drnic_gid is union ibv_gid. */
	rc = drnic_attach_mcast(q->dqp, (const union drnic_gid *)(const void *)gid, lid);
	return rc < 0 ? dibv_errno(rc) : 0;
}

DIBV_EXPORT int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct dibv_qp *q = dibv_qp_of(qp);
	int rc;

	if (qp == NULL || !handle_live(q, HANDLE_IBV_QP))
		return DIBV_ERR(EINVAL);
	rc = drnic_detach_mcast(q->dqp, (const union drnic_gid *)(const void *)gid, lid);
	return rc < 0 ? dibv_errno(rc) : 0;
}
