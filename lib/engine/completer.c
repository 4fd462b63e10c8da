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
 */
#include <errno.h>
#include <string.h>

#include "engine_priv.h"

const char *const comp_state_names[COMP_STATE_MAX] = {
	[COMP_IDLE] = "IDLE",
	[COMP_WAIT] = "WAIT",
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
	wc->src_qp = eq->qp->attr.dest_qp_num;
}

/* Forward progress: the retry budget is whole again; the timer restarts
 * while something is outstanding; a requester waiting for window room may
 * have some. */
static void
comp_progress(struct engine_qp *eq)
{
	eq->rec.retry_left = eq->qp->attr.retry_cnt;
	eq->rec.alive_retries = 0;
	if (eq->comp.idx != eq->req.idx || eq->req.off > 0) {
		engine_retry_arm(eq);
	} else {
		eq->rec.retry_deadline_ns = 0;
		eq->rec.probe_deadline_ns = 0;
	}
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
			 * (the responder may forget it once retired). */
			eq->req.rd_outstanding--;
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
	eq->comp.state = eq->comp.idx == eq->req.idx ? COMP_IDLE : COMP_WAIT;
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

/* A NAK that ends the WQE holding @p psn with @p status. */
static void
comp_nak_error(struct engine_qp *eq, uint32_t psn, enum drnic_wc_status status)
{
	int64_t idx;

	comp_ack_upto(eq, drnic_psn_sub(psn, 1));
	comp_retire(eq);
	idx = comp_find_wqe(eq, psn);
	if (idx < 0) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_RESP);
		return;
	}
	/* Nothing after the failed WQE is sent again. */
	req_stop_at(eq, (uint32_t)idx, status);
	comp_retire(eq);
}

/* RNR NAK: wait the timer the responder asked for, then resend from the
 * WQE holding @p psn; or fail it when the retries are used up. */
static void
comp_rnr(struct engine_qp *eq, uint32_t psn, uint8_t timer)
{
	int64_t idx;

	if (eq->rec.rnr_retry_left == 0) {
		comp_nak_error(eq, psn, DRNIC_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (eq->rec.rnr_retry_left != 7)  /* 7: retry for ever */
		eq->rec.rnr_retry_left--;
	comp_ack_upto(eq, drnic_psn_sub(psn, 1));
	comp_retire(eq);
	idx = comp_find_wqe(eq, psn);
	if (idx < 0) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_RESP);
		return;
	}
	req_rewind(eq, (uint32_t)idx);
	req_wait_rnr(eq, engine_now_ns(eq->eng) +
			 (uint64_t)drnic_aeth_rnr_timer_us(timer) * 1000);
}

static void comp_implied_nak(struct engine_qp *eq, uint32_t psn);

static void
comp_ack(struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	uint8_t syn = pkt->aeth.syndrome;
	uint32_t psn = pkt->bth.psn;

	switch (drnic_aeth_type(syn)) {
	case DRNIC_AETH_ACK:
		eq->stats.acks_rx++;
		comp_ack_upto(eq, psn);
		eq->rec.rnr_retry_left = eq->qp->attr.rnr_retry;
		comp_retire(eq);
		comp_implied_nak(eq, psn);
		break;
	case DRNIC_AETH_RNR_NAK:
		eq->stats.rnr_naks_rx++;
		comp_rnr(eq, psn, drnic_aeth_value(syn));
		break;
	case DRNIC_AETH_NAK:
		eq->stats.naks_rx++;
		switch (drnic_aeth_value(syn)) {
		case DRNIC_NAK_PSN_SEQ_ERR: {
			/* Go back to the PSN the responder expects. */
			uint64_t now;
			int64_t idx;

			comp_ack_upto(eq, drnic_psn_sub(psn, 1));
			comp_retire(eq);
			comp_implied_nak(eq, psn);
			idx = comp_find_wqe(eq, psn);
			now = engine_now_ns(eq->eng);
			/* The same NAK within half a round trip of going back
			 * answers packets sent before the go-back (reordered
			 * or duplicated): going back again would only resend
			 * what is on its way. */
			if (idx >= 0 && psn == eq->rec.nak_psn &&
			    now - eq->rec.nak_ns < eq->rec.srtt_ns / 2) {
				engine_qp_drop(eq, DRNIC_ENGINE_DROP_STALE_NAK);
				break;
			}
			if (idx >= 0) {
				eq->rec.nak_psn = psn;
				eq->rec.nak_ns = now;
				rec_loss(eq, false);
				req_rewind_psn(eq, (uint32_t)idx, psn);
				req_resume(eq, false);  /* after an RNR wait in progress */
			}
			break;
		}
		case DRNIC_NAK_INVALID_REQ:
			comp_nak_error(eq, psn, DRNIC_WC_REM_INV_REQ_ERR);
			break;
		case DRNIC_NAK_REMOTE_ACCESS:
			comp_nak_error(eq, psn, DRNIC_WC_REM_ACCESS_ERR);
			break;
		case DRNIC_NAK_REMOTE_OP:
			comp_nak_error(eq, psn, DRNIC_WC_REM_OP_ERR);
			break;
		case DRNIC_NAK_INVALID_RD_REQ:
			comp_nak_error(eq, psn, DRNIC_WC_REM_INV_RD_REQ_ERR);
			break;
		default:
			comp_nak_error(eq, psn, DRNIC_WC_BAD_RESP_ERR);
			break;
		}
		break;
	default:
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_RESP);
		break;
	}
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
 * READ response @p psn is not the one expected. When it is well past the
 * missing one (not merely reordered), ask for the rest of the READ from the
 * missing PSN, once per gap, without going back: later requests are not
 * affected. A lost re-read is recovered by the retransmit timer.
 */
static void
comp_read_gap(struct engine_qp *eq, const struct verbs_send_wqe *w, uint32_t psn)
{
	struct drnic_wire_pkt pkt;
	uint32_t from;

	from = engine_read_partial(w) ? w->rd_next : w->first_psn;
	if (drnic_psn_diff(psn, from) < ENGINE_READ_GAP ||
	    (eq->comp.reread_sent && eq->comp.reread_psn == from) ||
	    engine_port_room(eq->port) == 0)
		return;
	engine_read_request(eq, w, from, &pkt);
	if (engine_qp_tx(eq, &pkt) < 0)
		return;
	eq->comp.reread_sent = true;
	eq->comp.reread_psn = from;
	eq->stats.retransmits++;
	rec_loss(eq, false);
}

/*
 * A response for PSN @p psn arrived: the responder answers in order, so
 * every READ or atomic before that PSN was answered before it. One still
 * waiting for (part of) its response lost it (an implied NAK): ask for it
 * again at once (an atomic is answered from the responder's saved result,
 * a READ from the first PSN missing), once per PSN, without going back:
 * later requests are not resent. A lost re-request is recovered by the
 * early retransmit or the retransmit timer.
 */
static void
comp_implied_nak(struct engine_qp *eq, uint32_t psn)
{
	struct drnic_wire_pkt pkt;
	uint32_t i, from;

	for (i = eq->comp.idx; i != eq->req.idx; i++) {
		const struct verbs_send_wqe *w = engine_sq_wqe(eq, i);

		if (drnic_psn_ge(w->last_psn, psn))
			return;
		if (!engine_wqe_is_rd_atomic(w) || w->state != WQE_SENT)
			continue;
		/* A READ whose response is partly here lost the rest of it
		 * (its tail, or the rest after a gap): ask for the rest, once
		 * per missing PSN. */
		from = engine_read_partial(w) ? w->rd_next : w->first_psn;
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
		return;
	}
}

static void
comp_read_resp(struct engine_qp *eq, const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	const struct drnic_wire_opinfo *op = drnic_wire_opcode_info(pkt->bth.opcode);
	uint32_t psn = pkt->bth.psn, off;
	struct verbs_send_wqe *w;
	int64_t idx;

	if (op->pos & DRNIC_WIRE_POS_FIRST) {
		/* Everything before the READ is acknowledged. */
		comp_ack_upto(eq, drnic_psn_sub(psn, 1));
		comp_retire(eq);
		comp_implied_nak(eq, psn);
	}
	idx = comp_find_wqe(eq, psn);
	if (idx < 0) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_GHOST_RESP);
		return;
	}
	w = engine_sq_wqe(eq, (uint32_t)idx);
	if (w->opcode != DRNIC_WR_RDMA_READ || w->state != WQE_SENT) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_RESP);
		return;
	}
	/* In sequence for this READ (each keeps its own progress, so a later
	 * READ's response is taken while an older one waits for the rest of
	 * its own): the PSN it waits for, or a FIRST (ONLY) that starts it
	 * again from the beginning. */
	if (psn != w->rd_next &&
	    (!(op->pos & DRNIC_WIRE_POS_FIRST) || psn != w->first_psn)) {
		comp_read_gap(eq, w, psn);
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_RESP);
		return;
	}
	off = drnic_psn_sub(psn, w->first_psn) * eq->mtu;
	if ((op->pos & DRNIC_WIRE_POS_LAST) ?
	    (psn != w->last_psn || off + pkt->payload_len != w->length) :
	    pkt->payload_len != eq->mtu) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_RESP);
		return;
	}
	if (pkt->payload_len > 0 &&
	    comp_scatter(eq, w, off, m, pkt->payload_off, pkt->payload_len) < 0) {
		/* The sink was deregistered while the READ ran. */
		comp_nak_error(eq, psn, DRNIC_WC_LOC_PROT_ERR);
		return;
	}
	w->rd_next = drnic_psn_add(psn, 1);
	rec_rtt_sample(eq, psn);
	rec_grow(eq, 1);
	comp_progress(eq);
	if (op->pos & DRNIC_WIRE_POS_LAST) {
		w->state = WQE_DONE;
		comp_ack_upto(eq, psn);
		comp_retire(eq);
		req_wake(eq);
	}
}

static void
comp_atomic_ack(struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	uint32_t psn = pkt->bth.psn;
	struct verbs_send_wqe *w;
	int64_t idx;

	if (drnic_aeth_type(pkt->aeth.syndrome) != DRNIC_AETH_ACK) {
		comp_ack(eq, pkt);
		return;
	}
	comp_ack_upto(eq, drnic_psn_sub(psn, 1));
	comp_retire(eq);
	comp_implied_nak(eq, psn);
	idx = comp_find_wqe(eq, psn);
	if (idx < 0) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_GHOST_RESP);
		return;
	}
	w = engine_sq_wqe(eq, (uint32_t)idx);
	if (!(verbs_wr_info(w->opcode)->flags & VERBS_WR_ATOMIC) || w->state != WQE_SENT) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_RESP);
		return;
	}
	if (unlikely(!verbs_mr_key_live(eq->qp->dev, w->sge[0].lkey))) {
		comp_nak_error(eq, psn, DRNIC_WC_LOC_PROT_ERR);
		return;
	}
	/* The original value lands in the local buffer in host order. */
	memcpy((void *)(uintptr_t)w->sge[0].addr, &pkt->atomic_orig, sizeof(uint64_t));
	w->state = WQE_DONE;
	comp_ack_upto(eq, psn);
	comp_retire(eq);
	req_wake(eq);
}

/*
 * The requester's response check (IBA 9.7.5.1): a response is believed only
 * for a PSN in [oldest unacknowledged, last sent]. One below answers what
 * is acknowledged already (a duplicate: nothing to do); one past the last
 * PSN ever sent answers nothing (a ghost: a forged or stale packet, which
 * must never retire a WQE or move what is acknowledged). The oldest
 * unacknowledged PSN is the oldest unretired WQE's first, or, for a SEND or
 * WRITE acknowledged part of the way, the one after the ACK (a READ or an
 * atomic is answered only by its response, whatever ACK came after it: its
 * PSNs stay open until it retires). Returns the drop reason, or
 * DRNIC_ENGINE_DROP_MAX.
 */
static enum drnic_engine_drop
comp_check_psn(const struct engine_qp *eq, uint32_t psn)
{
	const struct verbs_send_wqe *w;
	uint32_t una;

	/* Nothing outstanding: every WQE started is retired. (Right after a
	 * go-back, req.idx is back at comp.idx, but what was sent before it
	 * is still outstanding: npsn is behind psn_hi.) */
	if (eq->comp.idx == eq->req.idx && eq->req.off == 0 &&
	    !drnic_psn_lt(eq->req.npsn, eq->req.psn_hi))
		return DRNIC_ENGINE_DROP_GHOST_RESP;
	w = engine_sq_wqe(eq, eq->comp.idx);
	una = w->first_psn;
	if (!engine_wqe_is_rd_atomic(w) && eq->comp.any_acked &&
	    drnic_psn_gt(drnic_psn_add(eq->comp.acked_psn, 1), una))
		una = drnic_psn_add(eq->comp.acked_psn, 1);
	if (drnic_psn_ge(psn, eq->req.psn_hi))
		return DRNIC_ENGINE_DROP_GHOST_RESP;
	if (drnic_psn_lt(psn, una))
		return DRNIC_ENGINE_DROP_DUP_RESP;
	return DRNIC_ENGINE_DROP_MAX;
}

void
comp_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	enum drnic_qp_state st = verbs_qp_state(eq->qp);
	enum drnic_engine_drop why;

	if (!eq->req_init || (st != DRNIC_QPS_RTS && st != DRNIC_QPS_SQD && st != DRNIC_QPS_SQE)) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_QP_STATE);
		return;
	}
	why = comp_check_psn(eq, pkt->bth.psn);
	if (why != DRNIC_ENGINE_DROP_MAX) {
		engine_qp_drop(eq, why);
		if (why == DRNIC_ENGINE_DROP_DUP_RESP) {
			/* A duplicate still tells the peer is alive, and
			 * that a resend of what it acknowledged arrived:
			 * the WQE it finished may retire now. */
			eq->rec.peer_heard = true;
			if (eq->comp.any_acked)
				req_skip_acked(eq, eq->comp.acked_psn);
			comp_retire(eq);
		}
		return;
	}
	eq->rec.peer_heard = true;
	switch (pkt->bth.opcode) {
	case DRNIC_WIRE_OP_RC_ACKNOWLEDGE:
		comp_ack(eq, pkt);
		break;
	case DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE:
		comp_atomic_ack(eq, pkt);
		break;
	case DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST:
	case DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE:
	case DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST:
	case DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY:
		comp_read_resp(eq, m, pkt);
		break;
	default:
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_RESP);
		break;
	}
}

/* Resend from the oldest unretired WQE: a SEND or WRITE from after what the
 * responder acknowledged (nothing it acknowledged is sent again); a READ
 * with part of its response asks for the rest only (the requester looks at
 * its rd_next). */
static void
comp_go_back(struct engine_qp *eq)
{
	eq->comp.reread_sent = false;
	req_rewind(eq, eq->comp.idx);
	if (eq->comp.any_acked)
		req_skip_acked(eq, eq->comp.acked_psn);
	req_resume(eq, true);
}

/* The retransmit timer expired: resend from the oldest unretired WQE, or
 * fail it with RETRY_EXC_ERR once retry_cnt retries are used. */
void
comp_timeout(struct engine_qp *eq)
{
	struct verbs_send_wqe *w;

	if (eq->comp.idx == eq->req.idx && eq->req.off == 0) {
		eq->rec.retry_deadline_ns = 0;
		eq->rec.probe_deadline_ns = 0;
		return;
	}
	eq->stats.timeouts++;
	/* A peer that keeps answering (duplicate ACKs, replays) is alive: an
	 * engine short of CPU, or a long replay, made this timeout, not a
	 * lost peer. Bounded, so a peer that never makes progress still ends
	 * the WQE. A gone peer answers nothing: retry_cnt applies exactly. */
	if (eq->rec.peer_heard && eq->rec.alive_retries < ENGINE_ALIVE_RETRIES) {
		eq->rec.alive_retries++;
		eq->rec.retry_left++;     /* taken again below */
	}
	eq->rec.peer_heard = false;
	if (eq->rec.retry_left == 0) {
		w = engine_sq_wqe(eq, eq->comp.idx);
		req_stop_at(eq, eq->comp.idx, DRNIC_WC_RETRY_EXC_ERR);
		eq->rec.retry_deadline_ns = 0;
		eq->rec.probe_deadline_ns = 0;
		ENGINE_QP_LOG(DEBUG, eq, "retries exhausted at PSN %u", w->first_psn);
		comp_retire(eq);
		return;
	}
	eq->rec.retry_left--;
	rec_loss(eq, true);
	comp_go_back(eq);
	engine_retry_arm(eq);
}

/*
 * Early retransmit: nothing heard for several round trips, well inside the
 * QP's timeout. Go back once, as a timeout would, without using up
 * retry_cnt; the retransmit timer keeps running, so a silent peer still
 * gets exactly retry_cnt timeouts. The estimate doubles (backs off) so an
 * engine short of CPU does not probe every round trip.
 */
void
comp_probe(struct engine_qp *eq)
{
	eq->rec.probe_deadline_ns = 0;
	if ((eq->comp.idx == eq->req.idx && eq->req.off == 0) || eq->req.state == REQ_WAIT_RNR ||
	    eq->req.state == REQ_STOPPED)
		return;
	eq->stats.early_retransmits++;
	eq->rec.srtt_ns *= 2;
	eq->rec.rttvar_ns *= 2;
	rec_loss(eq, false);
	comp_go_back(eq);
	rec_probe_arm(eq, engine_now_ns(eq->eng));
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
