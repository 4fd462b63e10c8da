/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQ_PRIVATE_H
#define CQ_PRIVATE_H

/* Between the two halves of lib/cq: event.c tells cq.c a CQ_ERR was acked. */

struct drnic_cq;

void cq_ack_async(struct drnic_cq *cq);
/* event.c -> cq.c: a CQ_ERR event of @p cq was taken by the application. */
void cq_got_async(struct drnic_cq *cq);

#endif
