/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_IBV_EXPORT_H
#define DRNIC_IBV_EXPORT_H

/*
 * What the drop-in libibverbs.so.1 exports to the drop-in librdmacm.so.1,
 * its one other user, in the version node DRNIC_PRIVATE_1.0
 * (libibverbs.map): these helpers and the connection manager's API
 * (drnic_ibcm.h, linked into this library with the rest of drnic). So a
 * process holds one copy of drnic, and librdmacm only translates.
 *
 * Not an API for programs: the node's name says so, and it may change
 * with any build.
 */

#include <infiniband/verbs.h>

#include "drnic_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The drnic device behind an open context of the drop-in.
 * @return the device; NULL (errno EINVAL) for a context that is not live.
 */
struct drnic_device *drnic_ibv_context_device(struct ibv_context *context);

/**
 * Open the connection manager on @p context's device
 * (drnic_ibcm_add_device()): idempotent. The drop-in removes it from the
 * CM (drnic_ibcm_remove_device()) before it closes the device, when the
 * device's last context is closed.
 * @return 0, or a positive errno (also in errno).
 */
int drnic_ibv_cm_open(struct ibv_context *context);

/** rte_errno of the calling thread: why a drnic constructor returned NULL. */
int drnic_ibv_rte_errno(void);

/** An address vector of drnic as verbs has it (the MAC is dropped). */
void drnic_ibv_ah_attr_from_drnic(const struct drnic_ah_attr *s, struct ibv_ah_attr *d);

/** QP attributes of drnic as verbs has them (the mask bits are equal). */
void drnic_ibv_qp_attr_from_drnic(const struct drnic_qp_attr *s, struct ibv_qp_attr *d);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_IBV_EXPORT_H */
