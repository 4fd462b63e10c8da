/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef VERBS_REMOTE_H
#define VERBS_REMOTE_H

/*
 * An attached process's control verbs (remote.c): while rpc_attached(),
 * each public constructor and destructor of lib/verbs asks drnicd to do it
 * (lib/internal/rpc.h) and registers what it gets back as a live handle of
 * this process, so the checks before any pointer is followed stay the same.
 * Verbs not offered to attached processes yet fail with ENOTSUP.
 */

#include <stdbool.h>

#include "drnic_verbs.h"
#include "rpc.h"

/* True while this process is attached to a daemon. */
static inline bool
verbs_remote(void)
{
	return rpc_attached();
}

struct drnic_device *remote_device_open(const char *name);
int remote_device_close(struct drnic_device *dev);
struct drnic_async_queue *remote_device_async_queue(struct drnic_device *dev);
int remote_device_async_sub(struct drnic_device *dev, struct drnic_async_queue *q, bool on);
int remote_device_list(struct drnic_config *cfgs, unsigned int max);
void *remote_alloc(size_t size, size_t align, int socket_id);
void remote_free(void *buf);
struct drnic_pd *remote_alloc_pd(struct drnic_device *dev);
int remote_dealloc_pd(struct drnic_pd *pd);
struct drnic_mr *remote_reg_mr(struct drnic_pd *pd, void *addr, size_t length, uint64_t iova,
			       unsigned int access);
int remote_dereg_mr(struct drnic_mr *mr);
int remote_rereg_mr(struct drnic_mr *mr, unsigned int flags, struct drnic_pd *pd, void *addr,
		    size_t length, unsigned int access);
struct drnic_srq *remote_create_srq(struct drnic_pd *pd, struct drnic_srq_init_attr *attr);
int remote_modify_srq(struct drnic_srq *srq, struct drnic_srq_attr *attr, int mask);
int remote_destroy_srq(struct drnic_srq *srq);
struct drnic_ah *remote_create_ah(struct drnic_pd *pd, struct drnic_ah_attr *attr);
int remote_destroy_ah(struct drnic_ah *ah);
struct drnic_mw *remote_alloc_mw(struct drnic_pd *pd, enum drnic_mw_type type);
int remote_dealloc_mw(struct drnic_mw *mw);
int remote_mcast(struct drnic_qp *qp, const union drnic_gid *gid, bool attach);
struct drnic_xrcd *remote_open_xrcd(struct drnic_device *dev, int fd, int oflags);
int remote_close_xrcd(struct drnic_xrcd *x);
struct drnic_qp *remote_open_qp(struct drnic_xrcd *x, uint32_t qp_num);
struct drnic_qp *remote_create_qp(struct drnic_pd *pd, struct drnic_qp_init_attr *attr);
int remote_modify_qp(struct drnic_qp *qp, struct drnic_qp_attr *attr, int attr_mask);
int remote_destroy_qp(struct drnic_qp *qp);

#endif /* VERBS_REMOTE_H */
