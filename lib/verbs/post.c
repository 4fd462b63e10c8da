/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * post_send / post_recv: check each work request, copy it into the next WQE
 * slot, publish the producer index once, ring the doorbell on idle->busy.
 */
#include <errno.h>
#include <string.h>

#include <rte_memcpy.h>

#include "verbs_objects.h"

/*
 * An ATOMIC WRITE: exactly 8 bytes (SGEs or inline) to an 8-aligned remote
 * address. Its 8 inline bytes always fit a WQE slot (the header leaves room
 * behind it), whatever max_inline_data is. 0 or -EINVAL; sets *len_out.
 */
static int
post_check_atomic_write(const struct drnic_send_wr *wr, uint64_t len, uint64_t *len_out)
{
	RTE_BUILD_BUG_ON(RTE_ALIGN_CEIL(sizeof(struct verbs_send_wqe), 64) -
			 sizeof(struct verbs_send_wqe) < sizeof(uint64_t));
	if (len != sizeof(uint64_t) || (wr->wr.rdma.remote_addr & 7) != 0)
		return -EINVAL;
	*len_out = len;
	return 0;
}

/* Check one send WR against the QP; 0 or -EINVAL. Sets *len_out. */
static int
post_check_send(const struct drnic_qp *qp, const struct drnic_send_wr *wr, uint64_t *len_out)
{
	const struct verbs_wr_info *op;
	uint64_t len = 0;
	int i;

	if ((unsigned int)wr->opcode >= VERBS_WR_OPCODE_MAX)
		return -EINVAL;
	op = verbs_wr_info((uint8_t)wr->opcode);
	if (op->flags == 0)
		return -EINVAL;   /* an opcode drnic does not offer */
	/* UC: SEND and RDMA WRITE (with immediate), and the local operations. */
	if (qp->type == DRNIC_QPT_UC &&
	    (op->flags & (VERBS_WR_RD_ATOMIC | VERBS_WR_INV | VERBS_WR_ATOMIC_WRITE)))
		return -EINVAL;
	/* XRC has no ATOMIC WRITE opcode in drnic's table. */
	if (qp->type == DRNIC_QPT_XRC_SEND && (op->flags & VERBS_WR_ATOMIC_WRITE))
		return -EINVAL;
	/* XRC: the target's SRQ number is 24 bits. */
	if (qp->type == DRNIC_QPT_XRC_SEND && wr->qp_type.xrc.remote_srqn > 0xFFFFFFu)
		return -EINVAL;
	/* UD: SEND (with immediate) to a live AH of the QP's device and a
	 * QPN; the AH is checked before it is followed. */
	if (qp->type == DRNIC_QPT_UD &&
	    (!(op->flags & VERBS_WR_SEND) || (op->flags & VERBS_WR_INV) ||
	     wr->wr.ud.remote_qpn > 0xFFFFFF ||
	     !handle_live(wr->wr.ud.ah, HANDLE_AH) || wr->wr.ud.ah->dev != qp->dev))
		return -EINVAL;
	if (op->flags & VERBS_WR_LOCAL) {
		/* No data: the SGEs are not read (ibv_post_send(3)). A bind
		 * names a live window and only remote rights; the rules are
		 * the engine's, when it executes (MW_BIND_ERR). */
		if (wr->opcode == DRNIC_WR_BIND_MW &&
		    (!handle_live(wr->bind_mw.mw, HANDLE_MW) ||
		     (wr->bind_mw.bind_info.mw_access_flags & ~(unsigned int)(
			     DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
			     DRNIC_ACCESS_REMOTE_ATOMIC)) != 0))
			return -EINVAL;
		*len_out = 0;
		return 0;
	}
	/* The count before the list: never read past what the caller has. As
	 * mlx5, max_send_sge bounds inline data's buffers too. */
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (op->flags & VERBS_WR_ATOMIC_WRITE)
		return post_check_atomic_write(wr, len, len_out);
	if ((wr->send_flags & DRNIC_SEND_INLINE) &&
	    (!(op->flags & VERBS_WR_INLINE) || len > qp->sq.max_inline))
		return -EINVAL;
	if (op->flags & VERBS_WR_ATOMIC) {
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
		    (wr->wr.atomic.remote_addr & 7) != 0)
			return -EINVAL;
	}
	if (len > VERBS_MAX_MSG_SZ)
		return -EINVAL;
	*len_out = len;
	return 0;
}

/* The binding of BIND_MW @p wr into WQE @p w (struct verbs_send_wqe). */
static void
post_bind_wqe(struct verbs_send_wqe *w, const struct drnic_send_wr *wr)
{
	const struct drnic_mw_bind_info *b = &wr->bind_mw.bind_info;
	/* An MR that is not registered binds nothing (MW_BIND_ERR when the
	 * WQE executes); its pointer is not followed. */
	uint32_t lkey = handle_live(b->mr, HANDLE_MR) ? b->mr->lkey : 0;

	w->imm_data = wr->bind_mw.mw->rkey;
	w->rkey = wr->bind_mw.rkey;
	w->remote_addr = b->addr;
	w->compare_add = b->length;
	w->swap = (uint64_t)b->mw_access_flags << 32 | lkey;
}

/* drnic_post_send(); @p mw_type1: drnic_bind_mw() posts its BIND_MW. */
static int
post_send(struct drnic_qp *qp, struct drnic_send_wr *wr, struct drnic_send_wr **bad_wr,
	  bool mw_type1)
{
	struct verbs_wq *sq;
	enum drnic_qp_state state;
	uint32_t prod, cons;
	uint64_t len;
	int rc = 0, i;

	if (bad_wr != NULL)
		*bad_wr = wr;
	if (qp == NULL || wr == NULL || bad_wr == NULL)
		return -EINVAL;
	state = verbs_qp_state(qp);
	if (state == DRNIC_QPS_RESET || state == DRNIC_QPS_INIT || state == DRNIC_QPS_RTR ||
	    qp->type == DRNIC_QPT_XRC_RECV)
		return -EINVAL;   /* an XRC target has no send queue */

	sq = &qp->sq;
	prod = atomic_load_explicit(&sq->prod, memory_order_relaxed);
	cons = sq->cons_seen;
	for (; wr != NULL; wr = wr->next) {
		struct verbs_send_wqe *w;

		rc = post_check_send(qp, wr, &len);
		if (rc < 0)
			break;
		if (prod - cons >= sq->size) {
			/* Acquire: slots below cons were retired by the engine. */
			cons = atomic_load_explicit(&sq->cons, memory_order_acquire);
			sq->cons_seen = cons;
			if (prod - cons >= sq->size) {
				rc = -ENOMEM;
				break;
			}
		}
		w = verbs_wq_slot(sq, prod);
		w->wr_id = wr->wr_id;
		w->opcode = (uint8_t)wr->opcode;
		w->send_flags = wr->send_flags;
		w->imm_data = wr->imm_data;
		w->length = (uint32_t)len;
		w->state = WQE_POSTED;
		w->status = 0;
		w->mw_type1 = mw_type1;
		w->rd_next = VERBS_WQE_NO_PSN;
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn;
		if (w->opcode == DRNIC_WR_BIND_MW) {
			post_bind_wqe(w, wr);
			w->inl = 0;
			w->num_sge = 0;
			prod++;
			continue;
		}
		if (qp->type == DRNIC_QPT_UD) {
			w->remote_addr = 0;
			w->rkey = 0;
			w->ud.ah = wr->wr.ud.ah;
			w->ud.remote_qpn = wr->wr.ud.remote_qpn;
			/* A controlled Q_Key in the WR means the QP's own. */
			w->ud.remote_qkey = (wr->wr.ud.remote_qkey & VERBS_QKEY_CONTROLLED) ?
					    qp->attr.qkey : wr->wr.ud.remote_qkey;
			atomic_fetch_add_explicit(&wr->wr.ud.ah->busy, 1, memory_order_relaxed);
		} else if (verbs_wr_info(w->opcode)->flags & VERBS_WR_ATOMIC) {
			w->remote_addr = wr->wr.atomic.remote_addr;
			w->rkey = wr->wr.atomic.rkey;
			w->compare_add = wr->wr.atomic.compare_add;
			w->swap = wr->wr.atomic.swap;
		} else {
			w->remote_addr = wr->wr.rdma.remote_addr;
			w->rkey = wr->wr.rdma.rkey;
			w->compare_add = 0;
			w->swap = 0;
		}
		if (wr->send_flags & DRNIC_SEND_INLINE) {
			uint8_t *dst = (uint8_t *)w->sge;

			w->inl = 1;
			w->num_sge = 0;
			for (i = 0; i < wr->num_sge; i++) {
				rte_memcpy(dst, (const void *)(uintptr_t)wr->sg_list[i].addr,
					   wr->sg_list[i].length);
				dst += wr->sg_list[i].length;
			}
		} else {
			w->inl = 0;
			w->num_sge = (uint16_t)wr->num_sge;
			for (i = 0; i < wr->num_sge; i++)
				w->sge[i] = wr->sg_list[i];
			verbs_sges_fix(qp->dev, w->sge, w->num_sge);
		}
		prod++;
	}
	if (rc == 0)
		*bad_wr = NULL;
	else
		*bad_wr = wr;
	if (prod != atomic_load_explicit(&sq->prod, memory_order_relaxed)) {
		/* Release: the WQEs are written before the engine sees prod. */
		atomic_store_explicit(&sq->prod, prod, memory_order_release);
		verbs_qp_doorbell(qp);
		if (qp->dev->cfg.progress == DRNIC_PROGRESS_INLINE)
			verbs_engine_ops()->progress();
	}
	return rc;
}

int
drnic_post_send(struct drnic_qp *qp, struct drnic_send_wr *wr, struct drnic_send_wr **bad_wr)
{
	return post_send(qp, wr, bad_wr, false);
}

int
drnic_bind_mw(struct drnic_qp *qp, struct drnic_mw *mw, const struct drnic_mw_bind *bind)
{
	struct drnic_send_wr wr, *bad;
	uint32_t rkey;
	int rc;

	if (qp == NULL || bind == NULL || !handle_live(mw, HANDLE_MW))
		return -EINVAL;
	/* The new rkey: the next key byte, as ibv_inc_rkey(). */
	rkey = (mw->rkey & ~0xFFu) | ((mw->rkey + 1) & 0xFFu);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = bind->wr_id;
	wr.opcode = DRNIC_WR_BIND_MW;
	wr.send_flags = bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = bind->bind_info;
	rc = post_send(qp, &wr, &bad, true);
	if (rc == 0)
		mw->rkey = rkey;
	return rc;
}

int
verbs_rq_post(struct verbs_wq *rq, struct drnic_recv_wr *wr, struct drnic_recv_wr **bad_wr)
{
	uint32_t prod = atomic_load_explicit(&rq->prod, memory_order_relaxed), first = prod;
	uint32_t cons = rq->cons_seen;
	int rc = 0, i;

	for (; wr != NULL; wr = wr->next) {
		struct verbs_recv_wqe *w;
		uint64_t len = 0;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge ||
		    (wr->num_sge > 0 && wr->sg_list == NULL)) {
			rc = -EINVAL;
			break;
		}
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > VERBS_MAX_MSG_SZ) {
			rc = -EINVAL;
			break;
		}
		if (prod - cons >= rq->size) {
			cons = atomic_load_explicit(&rq->cons, memory_order_acquire);
			rq->cons_seen = cons;
			if (prod - cons >= rq->size) {
				rc = -ENOMEM;
				break;
			}
		}
		w = verbs_wq_slot(rq, prod);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->length = (uint32_t)len;
		for (i = 0; i < wr->num_sge; i++)
			w->sge[i] = wr->sg_list[i];
		verbs_sges_fix(rq->dev, w->sge, w->num_sge);
		prod++;
	}
	*bad_wr = rc == 0 ? NULL : wr;
	if (prod == first)
		return rc;
	/* Release: the WQEs are written before the engine sees prod. */
	atomic_store_explicit(&rq->prod, prod, memory_order_release);
	return rc < 0 ? rc : (int)(prod - first);
}

int
drnic_post_recv(struct drnic_qp *qp, struct drnic_recv_wr *wr, struct drnic_recv_wr **bad_wr)
{
	enum drnic_qp_state state;
	uint32_t before;
	int rc;

	if (bad_wr != NULL)
		*bad_wr = wr;
	if (qp == NULL || wr == NULL || bad_wr == NULL)
		return -EINVAL;
	state = verbs_qp_state(qp);
	if (state == DRNIC_QPS_RESET || qp->srq != NULL || qp->rq.buf == NULL)
		return -EINVAL;   /* a QP on an SRQ, or an XRC QP, has no receive queue */
	before = atomic_load_explicit(&qp->rq.prod, memory_order_relaxed);
	rc = verbs_rq_post(&qp->rq, wr, bad_wr);
	if (atomic_load_explicit(&qp->rq.prod, memory_order_relaxed) != before) {
		/* The responder reads the RQ when a message arrives; only a QP
		 * in error needs the engine now (to flush). */
		if (verbs_qp_state(qp) == DRNIC_QPS_ERR)
			verbs_qp_doorbell(qp);
		if (qp->dev->cfg.progress == DRNIC_PROGRESS_INLINE)
			verbs_engine_ops()->progress();
	}
	return rc < 0 ? rc : 0;
}
