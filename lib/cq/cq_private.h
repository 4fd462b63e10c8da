/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQ_PRIVATE_H
#define CQ_PRIVATE_H

/* Between the two halves of lib/cq: event.c tells cq.c a CQ_ERR was acked. */

struct drnic_cq;

void cq_ack_async(struct drnic_cq *cq);
/* event.c -> cq.c: a CQ_ERR event of @p cq was taken by the application. */
void cq_got_async(struct drnic_cq *cq);

/*
 * cq_remote.c: an attached process's completion channels and async queues
 * (the daemon's objects). cq_remote_fd(): this process's number for @p
 * obj's eventfd (@p shared_fd when not attached, the daemon's number in
 * the object). cq_remote_create(): @p op with arg[0] @p arg0, the object
 * registered as a live handle of @p kind with the eventfd the reply
 * carried; NULL with rte_errno. cq_remote_destroy(): @p op, then the
 * eventfd closed; 0 or a negative errno.
 */
#include <stdint.h>

#include "rpc.h"

int cq_remote_fd(const void *obj, int shared_fd);
void *cq_remote_create(enum rpc_op op, enum rpc_op undo, uint64_t arg0, int kind);
int cq_remote_destroy(void *obj, enum rpc_op op, int kind);

#endif
