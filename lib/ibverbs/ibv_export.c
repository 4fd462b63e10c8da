/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in's private exports to librdmacm.so.1 (ibv_export.h): the drnic
 * device behind a context, the connection manager on it, attribute
 * conversions.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>

#include "drnic_ibcm.h"
#include "ibv_export.h"
#include "ibv_priv.h"

DIBV_EXPORT struct drnic_device *
drnic_ibv_context_device(struct ibv_context *context)
{
	if (context == NULL || !handle_live(dibv_ctx(context), HANDLE_IBV_CONTEXT)) {
		errno = EINVAL;
		return NULL;
	}
	return dibv_ctx(context)->d->dev;
}

DIBV_EXPORT int
drnic_ibv_cm_open(struct ibv_context *context)
{
	struct dibv_device *d;
	int rc = 0;

	if (drnic_ibv_context_device(context) == NULL)
		return EINVAL;
	d = dibv_ctx(context)->d;
	pthread_mutex_lock(&d->lock);
	if (!d->cm_open) {
		rc = drnic_ibcm_add_device(d->dev);
		d->cm_open = rc == 0;
	}
	pthread_mutex_unlock(&d->lock);
	return rc < 0 ? dibv_errno(rc) : 0;
}

/* Called with d->lock held, before the device closes. */
void
dibv_cm_close(struct dibv_device *d)
{
	if (!d->cm_open)
		return;
	(void)drnic_ibcm_remove_device(d->dev);
	d->cm_open = false;
}

DIBV_EXPORT int
drnic_ibv_rte_errno(void)
{
	return rte_errno;
}

DIBV_EXPORT void
drnic_ibv_ah_attr_from_drnic(const struct drnic_ah_attr *s, struct ibv_ah_attr *d)
{
	dibv_ah_from_drnic(s, d);
}

DIBV_EXPORT void
drnic_ibv_qp_attr_from_drnic(const struct drnic_qp_attr *s, struct ibv_qp_attr *d)
{
	memset(d, 0, sizeof(*d));
	d->qp_state = (enum ibv_qp_state)s->qp_state;
	d->cur_qp_state = (enum ibv_qp_state)s->cur_qp_state;
	d->path_mtu = (enum ibv_mtu)s->path_mtu;
	d->path_mig_state = (enum ibv_mig_state)s->path_mig_state;
	d->qkey = s->qkey;
	d->rq_psn = s->rq_psn;
	d->sq_psn = s->sq_psn;
	d->dest_qp_num = s->dest_qp_num;
	d->qp_access_flags = s->qp_access_flags;
	d->cap.max_send_wr = s->cap.max_send_wr;
	d->cap.max_recv_wr = s->cap.max_recv_wr;
	d->cap.max_send_sge = s->cap.max_send_sge;
	d->cap.max_recv_sge = s->cap.max_recv_sge;
	d->cap.max_inline_data = s->cap.max_inline_data;
	dibv_ah_from_drnic(&s->ah_attr, &d->ah_attr);
	dibv_ah_from_drnic(&s->alt_ah_attr, &d->alt_ah_attr);
	d->pkey_index = s->pkey_index;
	d->alt_pkey_index = s->alt_pkey_index;
	d->en_sqd_async_notify = s->en_sqd_async_notify;
	d->sq_draining = s->sq_draining;
	d->max_rd_atomic = s->max_rd_atomic;
	d->max_dest_rd_atomic = s->max_dest_rd_atomic;
	d->min_rnr_timer = s->min_rnr_timer;
	d->port_num = s->port_num;
	d->timeout = s->timeout;
	d->retry_cnt = s->retry_cnt;
	d->rnr_retry = s->rnr_retry;
	d->alt_port_num = s->alt_port_num;
	d->alt_timeout = s->alt_timeout;
	d->rate_limit = s->rate_limit;
}
