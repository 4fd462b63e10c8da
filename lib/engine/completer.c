/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer: ACKs, NAKs, READ responses and atomic acknowledgements retire
 * send WQEs in order and produce their completions.
 *
 * Every response acknowledges the PSNs before it (READ responses and atomic
 * ACKs carry an AETH too), so the completer keeps the highest acknowledged
 * PSN and retires, from the oldest WQE: SEND/WRITE WQEs fully sent and
 * acknowledged, READ/atomic WQEs whose response is complete, and a WQE that
 * failed (which moves the QP to ERR). Unsignaled successes retire silently.
 *
 * Each response runs through the completer's states (comp_rx()):
 *
 *   GET_ACK -> CHECK_PSN -> CHECK_ACK -+-> UPDATE -> COMPLETE -> (then) -> GET_ACK
 *                  |                   +-> READ (a middle or last packet)
 *                  +-> DUPLICATE       then: READ, ATOMIC, RETRY, RNR or FAIL,
 *                  +-> DROP                  each ending in GET_ACK, or in
 *                                            UPDATE -> COMPLETE again
 *
 * Between responses the completer waits in GET_ACK; once a WQE failed it
 * stays in ERROR (nothing more is taken) until the QP is set up again.
 * Timeouts and probes are recovery's (recovery.c): it calls comp_go_back()
 * or comp_fail_oldest().
 */
#include <errno.h>
#include <string.h>

#include "engine_priv.h"

const char *const comp_state_names[COMP_STATE_MAX] = {
	[COMP_GET_ACK] = "GET_ACK",
	[COMP_CHECK_PSN] = "CHECK_PSN",
	[COMP_CHECK_ACK] = "CHECK_ACK",
	[COMP_UPDATE] = "UPDATE",
	[COMP_COMPLETE] = "COMPLETE",
	[COMP_READ] = "READ",
	[COMP_ATOMIC] = "ATOMIC",
	[COMP_RETRY] = "RETRY",
	[COMP_RNR] = "RNR",
	[COMP_FAIL] = "FAIL",
	[COMP_DUPLICATE] = "DUPLICATE",
	[COMP_DROP] = "DROP",
	[COMP_ERROR] = "ERROR",
};

static void
comp_fill_wc(const struct engine_qp *eq, const struct verbs_send_wqe *w,
	     enum drnic_wc_status status, struct drnic_wc *wc)
{
	const struct verbs_wr_info *op = verbs_wr_info(w->opcode);

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = status;
	wc->opcode = (enum drnic_wc_opcode)op->wc_opcode;
	wc->byte_len = op->wc_byte_len8 ? 8 : w->length;
	wc->qp_num = eq->qp->qp_num;
	wc->src_qp = eq->path.dest_qp_num;
}

/* Forward progress: recovery's budgets are whole again and its timer
 * restarts; a requester waiting for window room may have some. */
static void
comp_progress(struct engine_qp *eq)
{
	rec_progress(eq);
	if (eq->req.state == REQ_WAIT_WINDOW)
		req_wake(eq);
}

int
comp_retire(struct engine_qp *eq)
{
	struct drnic_qp *qp = eq->qp;
	struct drnic_wc wc;
	int n = 0;

	while (eq->comp.idx != eq->req.idx) {
		struct verbs_send_wqe *w = engine_sq_wqe(eq, eq->comp.idx);

		if (w->state == WQE_FAILED) {
			/* Copy, free the slot, then complete: a poller that
			 * sees the completion can post into the slot. */
			comp_fill_wc(eq, w, (enum drnic_wc_status)w->status, &wc);
			eq->comp.idx++;
			eq->comp.state = COMP_ERROR;
			verbs_wq_retire(&qp->sq, eq->comp.idx);
			/* The QP is in ERR before anyone sees the error. */
			engine_qp_error(eq);
			(void)engine_push_cqe(eq, qp->send_cq, &wc, false);
			ENGINE_QP_LOG(DEBUG, eq, "WQE failed: %s", drnic_wc_status_str(wc.status));
			return n + 1;
		}
		if (w->state == WQE_DONE) {
			/* READ or atomic with its response: no longer outstanding
			 * (the responder may forget it once retired); or a local
			 * operation, executed. */
			eq->req.rd_outstanding -= engine_wqe_is_rd_atomic(w);
		} else if (w->state == WQE_SENT && !engine_wqe_is_rd_atomic(w) &&
			   eq->comp.any_acked && drnic_psn_le(w->last_psn, eq->comp.acked_psn)) {
			/* SEND or WRITE acknowledged. */
		} else {
			break;
		}
		eq->comp.idx++;
		n++;
		if (qp->sq_sig_all || (w->send_flags & DRNIC_SEND_SIGNALED)) {
			/* Copy, free the slots (release), then complete: a
			 * poller that sees the completion finds room. */
			comp_fill_wc(eq, w, DRNIC_WC_SUCCESS, &wc);
			verbs_wq_retire(&qp->sq, eq->comp.idx);
			(void)engine_push_cqe(eq, qp->send_cq, &wc, false);
		}
	}
	if (n > 0) {
		/* Release: the poster may reuse the slots. */
		verbs_wq_retire(&qp->sq, eq->comp.idx);
		comp_progress(eq);
		req_wake(eq);
		if (verbs_qp_state(qp) == DRNIC_QPS_SQD)
			engine_qp_activate(eq);   /* may be drained now */
	}
	return n;
}

/* Everything up to and including @p psn is acknowledged. */
static void
comp_ack_upto(struct engine_qp *eq, uint32_t psn)
{
	uint32_t n = 1;

	if (eq->comp.any_acked && !drnic_psn_gt(psn, eq->comp.acked_psn))
		return;
	if (eq->comp.any_acked)
		n = drnic_psn_sub(psn, eq->comp.acked_psn);
	eq->comp.acked_psn = psn;
	eq->comp.any_acked = true;
	if (unlikely(!drnic_psn_gt(eq->req.npsn, psn)))
		req_skip_acked(eq, psn);    /* the requester is behind the ACK */
	rec_rtt_sample(eq, psn);
	if (eq->rec.in_recovery && drnic_psn_ge(psn, eq->rec.recover_psn))
		eq->rec.in_recovery = false;
	rec_grow(eq, RTE_MIN(n, (uint32_t)ENGINE_MAX_INFLIGHT_PSN));
	comp_progress(eq);
}

/* Index of the started WQE whose PSN range holds @p psn, or -1. */
static int64_t
comp_find_wqe(const struct engine_qp *eq, uint32_t psn)
{
	uint32_t end = eq->req.idx + (eq->req.off > 0 ? 1 : 0), i;

	for (i = eq->comp.idx; i != end; i++) {
		const struct verbs_send_wqe *w = engine_sq_wqe(eq, i);

		if (w->state == WQE_FAILED)
			continue;
		if (drnic_psn_ge(psn, w->first_psn) && drnic_psn_le(psn, w->last_psn))
			return i;
	}
	return -1;
}

/* Scatter @p len bytes of payload at message offset @p off into the WQE's
 * SGEs; -EPERM, with nothing written, when an SGE it touches was
 * deregistered since the WQE started. */
static int
comp_scatter(const struct engine_qp *eq, const struct verbs_send_wqe *w, uint32_t off,
	     const struct rte_mbuf *m, uint32_t moff, uint32_t len)
{
	uint32_t i, o = off, l = len;

	for (i = 0; i < w->num_sge && l > 0; i++) {
		uint32_t sl = w->sge[i].length;

		if (o >= sl) {
			o -= sl;
			continue;
		}
		if (unlikely(!verbs_mr_key_live(eq->qp->dev, w->sge[i].lkey)))
			return -EPERM;
		l -= RTE_MIN(sl - o, l);
		o = 0;
	}
	return engine_sge_scatter(w->sge, w->num_sge, off, m, moff, len);
}

/*
 * Ask again for what READ or atomic @p w is missing, from PSN @p from (an
 * atomic: its saved result), once per missing PSN, without going back:
 * later requests are not resent. Counted as a retransmission and a loss.
 */
static void
comp_rerequest(struct engine_qp *eq, const struct verbs_send_wqe *w, uint32_t from)
{
	struct drnic_wire_pkt pkt;

	if ((eq->comp.reread_sent && eq->comp.reread_psn == from) ||
	    engine_port_room(eq->port) == 0)
		return;
	if (w->opcode == DRNIC_WR_RDMA_READ)
		engine_read_request(eq, w, from, &pkt);
	else
		engine_atomic_request(eq, w, &pkt);
	if (engine_qp_tx(eq, &pkt) < 0)
		return;
	eq->comp.reread_sent = true;
	eq->comp.reread_psn = from;
	eq->stats.retransmits++;
	rec_loss(eq, false);
}

/*
 * READ response @p psn is not the one expected. When it is well past the
 * missing one (not merely reordered), ask for the rest of the READ from the
 * missing PSN. A lost re-read is recovered by the retransmit timer.
 */
static void
comp_read_gap(struct engine_qp *eq, const struct verbs_send_wqe *w, uint32_t psn)
{
	uint32_t from = engine_read_partial(w) ? w->rd_next : w->first_psn;

	if (drnic_psn_diff(psn, from) >= ENGINE_READ_GAP)
		comp_rerequest(eq, w, from);
}

/*
 * A response for PSN @p psn arrived: the responder answers in order, so
 * every READ or atomic before that PSN was answered before it. The oldest
 * one still waiting for (part of) its response lost it (an implied NAK):
 * ask for it again at once (a READ whose response is partly here, for the
 * rest after the gap). A lost re-request is recovered by the early
 * retransmit or the retransmit timer.
 */
static void
comp_implied_nak(struct engine_qp *eq, uint32_t psn)
{
	uint32_t i;

	for (i = eq->comp.idx; i != eq->req.idx; i++) {
		const struct verbs_send_wqe *w = engine_sq_wqe(eq, i);

		if (drnic_psn_ge(w->last_psn, psn))
			return;
		if (!engine_wqe_is_rd_atomic(w) || w->state != WQE_SENT)
			continue;
		comp_rerequest(eq, w, engine_read_partial(w) ? w->rd_next : w->first_psn);
		return;
	}
}

/* One response on its way through the completer's states. */
struct comp_resp {
	struct rte_mbuf *m;
	const struct drnic_wire_pkt *pkt;
	const struct drnic_wire_opinfo *op;
	uint32_t upto;                 /* UPDATE: acknowledged up to here */
	bool implied;                  /* COMPLETE: look for implied NAKs */
	enum comp_state then;          /* COMPLETE: where to go next */
	enum drnic_wc_status status;   /* FAIL: what the WQE fails with */
	enum drnic_engine_drop why;    /* DROP: the counter */
};

/* What a NAK code fails the WQE with (IBA 9.7.5.2); others: BAD_RESP_ERR. */
static const uint8_t comp_nak_status[] = {
	[DRNIC_NAK_INVALID_REQ] = DRNIC_WC_REM_INV_REQ_ERR,
	[DRNIC_NAK_REMOTE_ACCESS] = DRNIC_WC_REM_ACCESS_ERR,
	[DRNIC_NAK_REMOTE_OP] = DRNIC_WC_REM_OP_ERR,
	[DRNIC_NAK_INVALID_RD_REQ] = DRNIC_WC_REM_INV_RD_REQ_ERR,
};

static enum comp_state
comp_drop(struct comp_resp *c, enum drnic_engine_drop why)
{
	c->why = why;
	return COMP_DROP;
}

/* Everything before the response's PSN is acknowledged; then @p then. */
static enum comp_state
comp_ack_before(struct comp_resp *c, enum comp_state then)
{
	c->upto = drnic_psn_sub(c->pkt->bth.psn, 1);
	c->implied = then != COMP_FAIL && then != COMP_RNR;
	c->then = then;
	return COMP_UPDATE;
}

/* GET_ACK: a response is taken only while the QP sends (RTS, SQD, SQE). */
static enum comp_state
comp_get_ack(struct engine_qp *eq, struct comp_resp *c)
{
	enum drnic_qp_state st = verbs_qp_state(eq->qp);

	if (!eq->req_init || (st != DRNIC_QPS_RTS && st != DRNIC_QPS_SQD && st != DRNIC_QPS_SQE))
		return comp_drop(c, DRNIC_ENGINE_DROP_QP_STATE);
	return COMP_CHECK_PSN;
}

/*
 * CHECK_PSN, the requester's response check (IBA 9.7.5.1): a response is
 * believed only for a PSN in [oldest unacknowledged, last sent]. One below
 * answers what is acknowledged already (a duplicate); one past the last PSN
 * ever sent answers nothing (a ghost: a forged or stale packet, which must
 * never retire a WQE or move what is acknowledged). The oldest
 * unacknowledged PSN is the oldest unretired WQE's first, or, for a SEND or
 * WRITE acknowledged part of the way, the one after the ACK (a READ or an
 * atomic is answered only by its response, whatever ACK came after it: its
 * PSNs stay open until it retires).
 */
static enum comp_state
comp_check_psn(struct engine_qp *eq, struct comp_resp *c)
{
	uint32_t psn = c->pkt->bth.psn, una;
	const struct verbs_send_wqe *w;

	/* Nothing outstanding: every WQE started is retired. (Right after a
	 * go-back, req.idx is back at comp.idx, but what was sent before it
	 * is still outstanding: npsn is behind psn_hi.) */
	if (eq->comp.idx == eq->req.idx && eq->req.off == 0 &&
	    !drnic_psn_lt(eq->req.npsn, eq->req.psn_hi))
		return comp_drop(c, DRNIC_ENGINE_DROP_GHOST_RESP);
	w = engine_sq_wqe(eq, eq->comp.idx);
	una = w->first_psn;
	if (!engine_wqe_is_rd_atomic(w) && eq->comp.any_acked &&
	    drnic_psn_gt(drnic_psn_add(eq->comp.acked_psn, 1), una))
		una = drnic_psn_add(eq->comp.acked_psn, 1);
	if (drnic_psn_ge(psn, eq->req.psn_hi))
		return comp_drop(c, DRNIC_ENGINE_DROP_GHOST_RESP);
	if (drnic_psn_lt(psn, una))
		return COMP_DUPLICATE;
	rec_heard(eq);
	return COMP_CHECK_ACK;
}

/* CHECK_ACK: what the response says, by opcode and AETH. */
static enum comp_state
comp_check_ack(struct engine_qp *eq, struct comp_resp *c)
{
	uint8_t syn = c->pkt->aeth.syndrome, code;

	switch (c->pkt->bth.opcode) {
	case DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST:
	case DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY:
		return comp_ack_before(c, COMP_READ);
	case DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE:
	case DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST:
		return COMP_READ;
	case DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE:
		if (drnic_aeth_type(syn) == DRNIC_AETH_ACK)
			return comp_ack_before(c, COMP_ATOMIC);
		break;
	case DRNIC_WIRE_OP_RC_ACKNOWLEDGE:
		break;
	default:
		return comp_drop(c, DRNIC_ENGINE_DROP_BAD_RESP);
	}
	switch (drnic_aeth_type(syn)) {
	case DRNIC_AETH_ACK:
		eq->stats.acks_rx++;
		rec_rnr_reset(eq);
		c->upto = c->pkt->bth.psn;
		c->implied = true;
		c->then = COMP_GET_ACK;
		return COMP_UPDATE;
	case DRNIC_AETH_RNR_NAK:
		eq->stats.rnr_naks_rx++;
		if (!rec_rnr_retry(eq)) {
			c->status = DRNIC_WC_RNR_RETRY_EXC_ERR;
			return comp_ack_before(c, COMP_FAIL);
		}
		return comp_ack_before(c, COMP_RNR);
	case DRNIC_AETH_NAK:
		eq->stats.naks_rx++;
		code = drnic_aeth_value(syn);
		if (code == DRNIC_NAK_PSN_SEQ_ERR)
			return comp_ack_before(c, COMP_RETRY);
		c->status = code < RTE_DIM(comp_nak_status) && comp_nak_status[code] != 0 ?
			    (enum drnic_wc_status)comp_nak_status[code] : DRNIC_WC_BAD_RESP_ERR;
		return comp_ack_before(c, COMP_FAIL);
	default:
		return comp_drop(c, DRNIC_ENGINE_DROP_BAD_RESP);
	}
}

/* UPDATE: what the response acknowledges moves the acknowledged PSN. */
static enum comp_state
comp_update(struct engine_qp *eq, struct comp_resp *c)
{
	comp_ack_upto(eq, c->upto);
	return COMP_COMPLETE;
}

/* COMPLETE: retire what is done; then where the response goes next. */
static enum comp_state
comp_complete(struct engine_qp *eq, struct comp_resp *c)
{
	enum comp_state then = c->then;

	comp_retire(eq);
	if (c->implied)
		comp_implied_nak(eq, c->pkt->bth.psn);
	c->implied = false;
	c->then = COMP_GET_ACK;
	return then;
}

/* DUPLICATE: it still tells the peer is alive, and that a resend of what it
 * acknowledged arrived: the WQE it finished may retire now. */
static enum comp_state
comp_duplicate(struct engine_qp *eq, struct comp_resp *c)
{
	engine_qp_drop(eq, DRNIC_ENGINE_DROP_DUP_RESP);
	rec_heard(eq);
	if (eq->comp.any_acked)
		req_skip_acked(eq, eq->comp.acked_psn);
	c->then = COMP_GET_ACK;
	return COMP_COMPLETE;
}

/* READ/atomic WQE @p w has its whole response: it may retire, and its
 * response acknowledges everything up to its PSN. */
static enum comp_state
comp_answered(struct engine_qp *eq, struct comp_resp *c, struct verbs_send_wqe *w)
{
	w->state = WQE_DONE;
	req_wake(eq);
	c->upto = c->pkt->bth.psn;
	c->then = COMP_GET_ACK;
	return COMP_UPDATE;
}

/*
 * READ: a response packet in sequence for its READ (each READ keeps its own
 * progress, so a later READ's response is taken while an older one waits
 * for the rest of its own): the PSN it waits for, or a FIRST (ONLY) that
 * starts it again from the beginning. Its last packet completes the READ.
 */
static enum comp_state
comp_read(struct engine_qp *eq, struct comp_resp *c)
{
	const struct drnic_wire_pkt *pkt = c->pkt;
	uint32_t psn = pkt->bth.psn, off;
	struct verbs_send_wqe *w;
	int64_t idx;

	idx = comp_find_wqe(eq, psn);
	if (idx < 0)
		return comp_drop(c, DRNIC_ENGINE_DROP_GHOST_RESP);
	w = engine_sq_wqe(eq, (uint32_t)idx);
	if (w->opcode != DRNIC_WR_RDMA_READ || w->state != WQE_SENT)
		return comp_drop(c, DRNIC_ENGINE_DROP_BAD_RESP);
	if (psn != w->rd_next &&
	    (!(c->op->pos & DRNIC_WIRE_POS_FIRST) || psn != w->first_psn)) {
		comp_read_gap(eq, w, psn);
		return comp_drop(c, DRNIC_ENGINE_DROP_BAD_RESP);
	}
	off = drnic_psn_sub(psn, w->first_psn) * eq->path.mtu;
	if ((c->op->pos & DRNIC_WIRE_POS_LAST) ?
	    (psn != w->last_psn || off + pkt->payload_len != w->length) :
	    pkt->payload_len != eq->path.mtu)
		return comp_drop(c, DRNIC_ENGINE_DROP_BAD_RESP);
	if (pkt->payload_len > 0 &&
	    comp_scatter(eq, w, off, c->m, pkt->payload_off, pkt->payload_len) < 0) {
		/* The sink was deregistered while the READ ran. */
		c->status = DRNIC_WC_LOC_PROT_ERR;
		return COMP_FAIL;
	}
	w->rd_next = drnic_psn_add(psn, 1);
	rec_rtt_sample(eq, psn);
	rec_grow(eq, 1);
	comp_progress(eq);
	if (!(c->op->pos & DRNIC_WIRE_POS_LAST))
		return COMP_GET_ACK;
	return comp_answered(eq, c, w);
}

/* ATOMIC: the original value lands in the local buffer, in host order. */
static enum comp_state
comp_atomic(struct engine_qp *eq, struct comp_resp *c)
{
	int64_t idx = comp_find_wqe(eq, c->pkt->bth.psn);
	struct verbs_send_wqe *w;

	if (idx < 0)
		return comp_drop(c, DRNIC_ENGINE_DROP_GHOST_RESP);
	w = engine_sq_wqe(eq, (uint32_t)idx);
	if (!(verbs_wr_info(w->opcode)->flags & VERBS_WR_ATOMIC) || w->state != WQE_SENT)
		return comp_drop(c, DRNIC_ENGINE_DROP_BAD_RESP);
	if (unlikely(!verbs_mr_key_live(eq->qp->dev, w->sge[0].lkey))) {
		c->status = DRNIC_WC_LOC_PROT_ERR;
		return COMP_FAIL;
	}
	memcpy((void *)(uintptr_t)w->sge[0].addr, &c->pkt->atomic_orig, sizeof(uint64_t));
	return comp_answered(eq, c, w);
}

/* RETRY: a PSN-sequence NAK: go back to the PSN the responder expects. */
static enum comp_state
comp_retry(struct engine_qp *eq, struct comp_resp *c)
{
	uint32_t psn = c->pkt->bth.psn;
	int64_t idx = comp_find_wqe(eq, psn);

	if (idx < 0)
		return COMP_GET_ACK;
	/* The same NAK within half a round trip of going back answers packets
	 * sent before the go-back (reordered or duplicated): going back again
	 * would only resend what is on its way. */
	if (!rec_nak_fresh(eq, psn))
		return comp_drop(c, DRNIC_ENGINE_DROP_STALE_NAK);
	req_rewind_psn(eq, (uint32_t)idx, psn);
	req_resume(eq, false);  /* after an RNR wait in progress */
	return COMP_GET_ACK;
}

/* RNR: wait the timer the responder asked for, then resend from the WQE
 * holding the PSN (recovery allowed one more RNR retry). */
static enum comp_state
comp_rnr(struct engine_qp *eq, struct comp_resp *c)
{
	uint32_t psn = c->pkt->bth.psn;
	int64_t idx = comp_find_wqe(eq, psn);

	if (idx < 0)
		return comp_drop(c, DRNIC_ENGINE_DROP_BAD_RESP);
	req_rewind(eq, (uint32_t)idx);
	req_wait_rnr(eq, engine_step_ns(eq->eng) +
			 (uint64_t)drnic_aeth_rnr_timer_us(drnic_aeth_value(c->pkt->aeth.syndrome)) *
			 1000);
	return COMP_GET_ACK;
}

/* FAIL: the WQE holding the PSN ends with c->status; nothing after it is
 * sent again, and it completes (in error) when the WQEs before it have. */
static enum comp_state
comp_fail(struct engine_qp *eq, struct comp_resp *c)
{
	int64_t idx = comp_find_wqe(eq, c->pkt->bth.psn);

	if (idx < 0)
		return comp_drop(c, DRNIC_ENGINE_DROP_BAD_RESP);
	req_stop_at(eq, (uint32_t)idx, c->status);
	c->then = COMP_GET_ACK;
	return COMP_COMPLETE;
}

/*
 * A response for this QP (from its peer: engine_pkt_from_peer()). It runs
 * through the states from GET_ACK until it is used (GET_ACK again) or a
 * WQE failed (ERROR).
 */
void
comp_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	struct comp_resp c = { .m = m, .pkt = pkt, .op = drnic_wire_opcode_info(pkt->bth.opcode),
			       .then = COMP_GET_ACK };
	enum comp_state s;

	if (eq->comp.state == COMP_ERROR) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_QP_STATE);
		return;
	}
	s = comp_get_ack(eq, &c);
	while (s != COMP_GET_ACK && eq->comp.state != COMP_ERROR) {
		switch (s) {
		case COMP_CHECK_PSN:
			s = comp_check_psn(eq, &c);
			break;
		case COMP_CHECK_ACK:
			s = comp_check_ack(eq, &c);
			break;
		case COMP_UPDATE:
			s = comp_update(eq, &c);
			break;
		case COMP_COMPLETE:
			s = comp_complete(eq, &c);
			break;
		case COMP_READ:
			s = comp_read(eq, &c);
			break;
		case COMP_ATOMIC:
			s = comp_atomic(eq, &c);
			break;
		case COMP_RETRY:
			s = comp_retry(eq, &c);
			break;
		case COMP_RNR:
			s = comp_rnr(eq, &c);
			break;
		case COMP_FAIL:
			s = comp_fail(eq, &c);
			break;
		case COMP_DUPLICATE:
			s = comp_duplicate(eq, &c);
			break;
		default:  /* COMP_DROP */
			engine_qp_drop(eq, c.why);
			s = COMP_GET_ACK;
			break;
		}
	}
}

/* A QP starting to send: the completer waits for responses. */
void
comp_setup(struct engine_qp *eq)
{
	eq->comp.state = COMP_GET_ACK;
}

/* Resend from the oldest unretired WQE: a SEND or WRITE from after what the
 * responder acknowledged (nothing it acknowledged is sent again); a READ
 * with part of its response asks for the rest only (the requester looks at
 * its rd_next). Recovery's timeout and probe call it. */
void
comp_go_back(struct engine_qp *eq)
{
	eq->comp.reread_sent = false;
	req_rewind(eq, eq->comp.idx);
	if (eq->comp.any_acked)
		req_skip_acked(eq, eq->comp.acked_psn);
	req_resume(eq, true);
}

/* UC: nothing answers a request. The requester says a WQE's last packet,
 * PSN @p psn, has left: it is complete, as if acknowledged. */
void
comp_unanswered_sent(struct engine_qp *eq, uint32_t psn)
{
	comp_ack_upto(eq, psn);
	comp_retire(eq);
}

/* The oldest unretired WQE ends with @p status (recovery's retries are
 * used up); nothing after it is sent. */
void
comp_fail_oldest(struct engine_qp *eq, enum drnic_wc_status status)
{
	req_stop_at(eq, eq->comp.idx, status);
	comp_retire(eq);
}

int
comp_flush(struct engine_qp *eq)
{
	struct drnic_qp *qp = eq->qp;
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
	struct drnic_wc wc;
	int n = 0;

	while (eq->comp.idx != prod && n < ENGINE_QP_BUDGET * 4) {
		struct verbs_send_wqe *w = engine_sq_wqe(eq, eq->comp.idx);
		enum drnic_wc_status status = w->state == WQE_FAILED ?
					      (enum drnic_wc_status)w->status : DRNIC_WC_WR_FLUSH_ERR;

		comp_fill_wc(eq, w, status, &wc);
		if (eq->ud)
			verbs_wqe_ah_put(w);   /* never sent now */
		w->state = WQE_POSTED;
		eq->comp.idx++;
		n++;
		verbs_wq_retire(&qp->sq, eq->comp.idx);
		(void)engine_push_cqe(eq, qp->send_cq, &wc, false);
	}
	if (n > 0)
		verbs_wq_retire(&qp->sq, eq->comp.idx);
	req_flushed(eq, eq->comp.idx);
	eq->comp.state = COMP_ERROR;
	return n;
}
