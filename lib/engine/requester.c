/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester: turns send WQEs into request packets (path-MTU segments), in
 * order, one PSN per packet (a READ takes one PSN per response packet).
 *
 * WQEs stay in the send queue until the completer retires them, and each
 * keeps its first and last PSN, so the requester can be rewound to any
 * unretired WQE (RNR and PSN-sequence NAKs now; timeouts later) with
 * req_rewind().
 *
 *   IDLE -> SENDING -> (WAIT_FENCE | WAIT_RD_ATOMIC | WAIT_WINDOW |
 *   WAIT_RNR | DRAINED) -> SENDING ... ; STOPPED after a local failure.
 *
 * WAIT_WINDOW: the congestion window (eq->rec.cwnd PSNs unacknowledged) is
 * full; checked before every packet, so a long message waits mid-way.
 */
#include <errno.h>
#include <string.h>

#include "engine_priv.h"

const char *const req_state_names[REQ_STATE_MAX] = {
	[REQ_IDLE] = "IDLE",
	[REQ_SENDING] = "SENDING",
	[REQ_WAIT_FENCE] = "WAIT_FENCE",
	[REQ_WAIT_RD_ATOMIC] = "WAIT_RD_ATOMIC",
	[REQ_WAIT_WINDOW] = "WAIT_WINDOW",
	[REQ_WAIT_RNR] = "WAIT_RNR",
	[REQ_DRAINED] = "DRAINED",
	[REQ_STOPPED] = "STOPPED",
};

/* Opcode of packet @p pos (DRNIC_WIRE_POS_*) of a SEND or WRITE, as data:
 * [is_write][with_imm][pos]. */
static const uint8_t req_opcode[2][2][8] = {
	[0][0] = {
		[DRNIC_WIRE_POS_FIRST] = DRNIC_WIRE_OP_RC_SEND_FIRST,
		[DRNIC_WIRE_POS_MIDDLE] = DRNIC_WIRE_OP_RC_SEND_MIDDLE,
		[DRNIC_WIRE_POS_LAST] = DRNIC_WIRE_OP_RC_SEND_LAST,
		[DRNIC_WIRE_POS_ONLY] = DRNIC_WIRE_OP_RC_SEND_ONLY,
	},
	[0][1] = {
		[DRNIC_WIRE_POS_FIRST] = DRNIC_WIRE_OP_RC_SEND_FIRST,
		[DRNIC_WIRE_POS_MIDDLE] = DRNIC_WIRE_OP_RC_SEND_MIDDLE,
		[DRNIC_WIRE_POS_LAST] = DRNIC_WIRE_OP_RC_SEND_LAST_WITH_IMMEDIATE,
		[DRNIC_WIRE_POS_ONLY] = DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_IMMEDIATE,
	},
	[1][0] = {
		[DRNIC_WIRE_POS_FIRST] = DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST,
		[DRNIC_WIRE_POS_MIDDLE] = DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE,
		[DRNIC_WIRE_POS_LAST] = DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST,
		[DRNIC_WIRE_POS_ONLY] = DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY,
	},
	[1][1] = {
		[DRNIC_WIRE_POS_FIRST] = DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST,
		[DRNIC_WIRE_POS_MIDDLE] = DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE,
		[DRNIC_WIRE_POS_LAST] = DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		[DRNIC_WIRE_POS_ONLY] = DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	},
};

/* Complete @p w locally in error; the completer reports it in order. */
static void
req_fail_wqe(struct engine_qp *eq, struct verbs_send_wqe *w, enum drnic_wc_status status)
{
	if (eq->ud)
		verbs_wqe_ah_put(w);   /* never sent: its AH is free */
	/* One not started takes no PSN; one failing half-way keeps its own. */
	if (w->state == WQE_POSTED)
		w->first_psn = w->last_psn = eq->req.npsn;
	req_stop_at(eq, eq->req.idx, status);
	ENGINE_QP_LOG(DEBUG, eq, "WQE %u failed locally: %s", eq->req.idx - 1,
		      drnic_wc_status_str(status));
	comp_retire(eq);
}

/* Check the local keys of a WQE. READ and atomic results are written
 * locally, so they need LOCAL_WRITE. */
static int
req_check_keys(struct engine_qp *eq, const struct verbs_send_wqe *w)
{
	uint32_t access = engine_wqe_is_rd_atomic(w) ? DRNIC_ACCESS_LOCAL_WRITE : 0;
	uint8_t *va;
	uint16_t i;

	if (w->inl)
		return 0;
	for (i = 0; i < w->num_sge; i++)
		if (verbs_mr_check(eq->qp->dev, eq->qp->pd, w->sge[i].lkey, w->sge[i].addr,
				   w->sge[i].length, access, &va) < 0)
			return -EPERM;
	return 0;
}

/* May WQE @p w start now? Not in SQD (drained), nor while a fence waits
 * for the READ/atomics before it; the requester's state says why. */
static bool
req_may_start(struct engine_qp *eq, const struct verbs_send_wqe *w, enum drnic_qp_state st)
{
	if (st == DRNIC_QPS_SQD) {
		eq->req.state = REQ_DRAINED;
		return false;
	}
	if ((w->send_flags & DRNIC_SEND_FENCE) && eq->req.rd_outstanding > 0) {
		eq->req.state = REQ_WAIT_FENCE;
		return false;
	}
	return true;
}

/* Start WQE @p w: checks that may stop or fail it, then PSN assignment.
 * Returns 1 when it may be sent now, 0 when the requester must wait. */
static int
req_start_wqe(struct engine_qp *eq, struct verbs_send_wqe *w, enum drnic_qp_state st)
{
	uint32_t npkts;

	if (!req_may_start(eq, w, st))
		return 0;
	if (engine_wqe_is_rd_atomic(w)) {
		if (eq->path.max_rd_atomic == 0) {
			/* The QP may not initiate READ/atomics at all. */
			req_fail_wqe(eq, w, DRNIC_WC_LOC_QP_OP_ERR);
			return 0;
		}
		if (eq->req.rd_outstanding >= eq->path.max_rd_atomic) {
			eq->req.state = REQ_WAIT_RD_ATOMIC;
			return 0;
		}
	}
	if (req_check_keys(eq, w) < 0) {
		req_fail_wqe(eq, w, DRNIC_WC_LOC_PROT_ERR);
		return 0;
	}
	/* UD: a datagram is one packet (IBA 10.8.2.3: longer is a local
	 * length error). */
	if (eq->ud && w->length > eq->path.mtu) {
		req_fail_wqe(eq, w, DRNIC_WC_LOC_LEN_ERR);
		return 0;
	}
	if (verbs_wr_info(w->opcode)->flags & VERBS_WR_ATOMIC)
		npkts = 1;
	else
		npkts = engine_npkts(w->length, eq->path.mtu);
	w->first_psn = eq->req.npsn;
	w->last_psn = drnic_psn_add(eq->req.npsn, npkts - 1);
	w->state = WQE_SENDING;
	eq->req.off = 0;
	eq->req.sge = 0;
	eq->req.sge_off = 0;
	eq->eng->stats.wqes++;
	eq->stats.wqes++;
	return 1;
}

/*
 * Execute local WQE @p w (BIND_MW, LOCAL_INV) when the requester reaches
 * it, in order with the WQEs around it: it takes no PSN and waits for
 * nothing but a fence. A bind or invalidation that breaks the rules
 * completes it with MW_BIND_ERR (a memory management operation error) and
 * the QP goes to ERR. One executed before a go-back is not executed again.
 * Returns 1 when the requester goes on, 0 when it must wait or stopped.
 */
static int
req_local(struct engine_qp *eq, struct verbs_send_wqe *w, enum drnic_qp_state st)
{
	int rc;

	if (w->state == WQE_DONE) {
		eq->req.idx++;
		return 1;
	}
	if (!req_may_start(eq, w, st))
		return 0;
	if (w->opcode == DRNIC_WR_BIND_MW)
		rc = verbs_mw_bind(eq->qp, w);
	else
		rc = verbs_mw_invalidate(eq->qp, w->imm_data, false);
	if (rc < 0) {
		req_fail_wqe(eq, w, DRNIC_WC_MW_BIND_ERR);
		return 0;
	}
	w->first_psn = eq->req.npsn;
	w->last_psn = drnic_psn_sub(eq->req.npsn, 1);
	w->state = WQE_DONE;
	eq->req.idx++;
	eq->eng->stats.wqes++;
	eq->stats.wqes++;
	comp_retire(eq);
	return 1;
}

/* Gather @p len bytes from the SGE cursor into @p sg; returns the count and
 * the cursor after them in *@p sge_out / *@p off_out, or -EPERM when an SGE
 * it reads was deregistered since the WQE started (its key is checked again
 * before every packet: nothing is read from memory after drnic_dereg_mr()). */
static int
req_gather(const struct engine_qp *eq, const struct verbs_send_wqe *w, uint32_t len,
	   struct drnic_wire_sge *sg, uint32_t *sge_out, uint32_t *off_out)
{
	uint32_t idx = eq->req.sge, off = eq->req.sge_off, n = 0;

	if (w->inl) {
		sg[0].addr = (const uint8_t *)w->sge + eq->req.off;
		sg[0].len = len;
		*sge_out = idx;
		*off_out = off;
		return len > 0;
	}
	while (len > 0 && idx < w->num_sge) {
		uint32_t avail = w->sge[idx].length - off;
		uint32_t take = RTE_MIN(avail, len);

		if (take > 0) {
			if (unlikely(!verbs_mr_key_live(eq->qp->dev, w->sge[idx].lkey)))
				return -EPERM;
			sg[n].addr = (const void *)(uintptr_t)(w->sge[idx].addr + off);
			sg[n].len = take;
			n++;
		}
		len -= take;
		off += take;
		if (off == w->sge[idx].length) {
			idx++;
			off = 0;
		}
	}
	*sge_out = idx;
	*off_out = off;
	return (int)n;
}

/* Everything before npsn has been sent: the completer believes responses
 * up to it (see comp_check_psn()). */
static inline void
req_sent_upto(struct engine_qp *eq)
{
	if (drnic_psn_gt(eq->req.npsn, eq->req.psn_hi))
		eq->req.psn_hi = eq->req.npsn;
}

/* Send the next packet of a SEND or WRITE WQE; @p fills_window: it is the
 * last the congestion window lets out before an ACK. */
static int
req_send_data(struct engine_qp *eq, struct verbs_send_wqe *w, bool fills_window)
{
	struct drnic_wire_sge sg[VERBS_MAX_SGE + 1];
	struct drnic_wire_pkt pkt;
	uint16_t opf = verbs_wr_info(w->opcode)->flags;
	bool is_write = (opf & VERBS_WR_WRITE) != 0;
	bool imm = (opf & VERBS_WR_IMM) != 0;
	uint32_t plen = RTE_MIN(eq->path.mtu, w->length - eq->req.off);
	uint32_t sge_next, off_next, every;
	uint8_t pos = 0, opcode;
	int rc;

	if (eq->req.off == 0)
		pos |= DRNIC_WIRE_POS_FIRST;
	if (eq->req.off + plen == w->length)
		pos |= DRNIC_WIRE_POS_LAST;
	if (pos == 0)
		pos = DRNIC_WIRE_POS_MIDDLE;
	/* Looked up before the frame is zeroed: the flags stay in registers
	 * (spilled as bytes, they were reloaded whole right after the
	 * zeroing's stores, a load the store buffer cannot forward). */
	opcode = req_opcode[is_write][imm][pos];

	if (unlikely(eq->ud)) {
		/* One packet (req_start_wqe() checked), to the WQE's AH. */
		engine_ah_template(eq, w->ud.ah, &pkt);
		pkt.bth.opcode = imm ? DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
				       DRNIC_WIRE_OP_UD_SEND_ONLY;
		pkt.bth.dqpn = w->ud.remote_qpn;
		pkt.deth.qkey = w->ud.remote_qkey;
		pkt.deth.sqpn = eq->qp->qp_num;
	} else {
		engine_pkt_init(eq, &pkt);
		if (unlikely(opf & VERBS_WR_ATOMIC_WRITE))   /* 8 bytes: ONLY, RC */
			opcode = DRNIC_WIRE_OP_RC_ATOMIC_WRITE;
		if (eq->uc)   /* the same operation, UC's code */
			opcode = (uint8_t)((opcode & 0x1F) | DRNIC_WIRE_OP_UC_SEND_FIRST);
		pkt.bth.opcode = opcode;
	}
	pkt.bth.psn = eq->req.npsn;
	pkt.xrceth.srqn = w->xrc_srqn;   /* XRC only (engine_qp_tx) */
	/* AckReq on the last packet, every `every` packets of a long
	 * message (a quarter of a small window, so ACKs keep it open), and on
	 * the packet that fills the window (its ACK is what reopens it). */
	every = RTE_MIN((uint32_t)ENGINE_ACKREQ_EVERY, RTE_MAX(eq->rec.cwnd / 4, 1u));
	pkt.bth.ackreq = !eq->uc && !eq->ud &&
			 ((pos & DRNIC_WIRE_POS_LAST) != 0 ||
			  drnic_psn_sub(eq->req.npsn, w->first_psn) % every == every - 1 ||
			  fills_window);
	pkt.bth.se = (pos & DRNIC_WIRE_POS_LAST) && (w->send_flags & DRNIC_SEND_SOLICITED);
	if (is_write && (pos & DRNIC_WIRE_POS_FIRST)) {
		pkt.reth.va = w->remote_addr;
		pkt.reth.rkey = w->rkey;
		pkt.reth.dmalen = w->length;
	}
	if (imm && (pos & DRNIC_WIRE_POS_LAST))
		pkt.imm = w->imm_data;
	if (unlikely(opf & VERBS_WR_INV) && (pos & DRNIC_WIRE_POS_LAST)) {
		/* SEND with Invalidate: the IETH on its last packet. */
		pkt.bth.opcode = pos == DRNIC_WIRE_POS_ONLY ?
				 DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_INVALIDATE :
				 DRNIC_WIRE_OP_RC_SEND_LAST_WITH_INVALIDATE;
		pkt.ieth_rkey = w->imm_data;
	}
	pkt.sg = sg;
	rc = req_gather(eq, w, plen, sg, &sge_next, &off_next);
	if (unlikely(rc < 0)) {
		req_fail_wqe(eq, w, DRNIC_WC_LOC_PROT_ERR);
		return -EPERM;
	}
	pkt.sg_cnt = (uint32_t)rc;
	rc = engine_qp_tx(eq, &pkt);
	if (rc < 0)
		return rc;
	if (pkt.bth.ackreq)
		rec_rtt_time(eq, pkt.bth.psn);
	eq->req.sge = sge_next;
	eq->req.sge_off = off_next;
	eq->req.off += plen;
	eq->req.npsn = drnic_psn_add(eq->req.npsn, 1);
	req_sent_upto(eq);
	if (pos & DRNIC_WIRE_POS_LAST) {
		w->state = WQE_SENT;
		eq->req.idx++;
		eq->req.off = 0;
		/* UC, UD: complete once its last packet has left (nothing
		 * answers). */
		if (eq->ud)
			verbs_wqe_ah_put(w);
		if (eq->uc || eq->ud)
			comp_unanswered_sent(eq, w->last_psn);
	}
	return 0;
}

/* Send a READ request or an atomic request (one packet). */
static int
req_send_rd_atomic(struct engine_qp *eq, struct verbs_send_wqe *w)
{
	struct drnic_wire_pkt pkt;
	int rc;

	engine_pkt_init(eq, &pkt);
	pkt.bth.psn = eq->req.npsn;
	pkt.bth.ackreq = true;
	if (w->opcode == DRNIC_WR_RDMA_READ) {
		/* Sent again after a go-back, a READ with part of its response
		 * asks only for what is missing; otherwise for all of it. */
		if (!engine_read_partial(w))
			w->rd_next = w->first_psn;
		engine_read_request(eq, w, w->rd_next, &pkt);
	} else {
		engine_atomic_request(eq, w, &pkt);
	}
	rc = engine_qp_tx(eq, &pkt);
	if (rc < 0)
		return rc;
	rec_rtt_time(eq, pkt.bth.psn);
	eq->req.npsn = drnic_psn_add(w->last_psn, 1);
	req_sent_upto(eq);
	w->state = WQE_SENT;
	eq->req.rd_outstanding++;
	eq->req.idx++;
	eq->req.off = 0;
	return 0;
}

void
req_rewind(struct engine_qp *eq, uint32_t idx)
{
	uint32_t end = eq->req.idx + (eq->req.off > 0 ? 1 : 0), i;

	eq->stats.retransmits++;
	eq->rec.rtt_pending = false;   /* Karn: a resent packet's ACK times nothing */
	for (i = idx; i != end; i++) {
		struct verbs_send_wqe *w = engine_sq_wqe(eq, i);

		if (w->state == WQE_FAILED)
			break;
		if (engine_wqe_is_local(w))
			continue;     /* executed once: not again */
		if (engine_wqe_is_rd_atomic(w) && (w->state == WQE_SENT || w->state == WQE_DONE))
			eq->req.rd_outstanding--;
		w->state = WQE_POSTED;
	}
	if (idx != end)
		eq->req.npsn = engine_sq_wqe(eq, idx)->first_psn;
	eq->req.idx = idx;
	eq->req.off = 0;
	eq->req.sge = 0;
	eq->req.sge_off = 0;
}

/* Send SEND or WRITE WQE @p w (the one at req.idx) from its PSN @p psn on:
 * the message offset and the gather position of that packet. */
static void
req_resume_at(struct engine_qp *eq, struct verbs_send_wqe *w, uint32_t psn)
{
	uint32_t off = drnic_psn_sub(psn, w->first_psn) * eq->path.mtu;
	uint16_t i;

	w->state = WQE_SENDING;
	eq->req.npsn = psn;
	eq->req.off = off;
	eq->req.sge = 0;
	eq->req.sge_off = 0;
	if (w->inl)
		return;
	for (i = 0; i < w->num_sge && off >= w->sge[i].length; i++)
		off -= w->sge[i].length;
	eq->req.sge = i;
	eq->req.sge_off = off;
}

/*
 * Go back to PSN @p psn of WQE @p idx: a SEND or WRITE resumes there (a
 * MIDDLE or LAST packet: the responder is inside the message, expecting
 * that PSN); anything else, or the first PSN, restarts the WQE.
 */
void
req_rewind_psn(struct engine_qp *eq, uint32_t idx, uint32_t psn)
{
	struct verbs_send_wqe *w = engine_sq_wqe(eq, idx);

	req_rewind(eq, idx);
	if (engine_wqe_is_rd_atomic(w) || w->state != WQE_POSTED ||
	    !drnic_psn_gt(psn, w->first_psn) || !drnic_psn_le(psn, w->last_psn))
		return;
	req_resume_at(eq, w, psn);
}

/*
 * The responder acknowledged everything up to @p psn while the requester
 * was behind it, resending after a go-back: nothing it has is sent again.
 * A SEND or WRITE that ends at or before @p psn counts as sent (the
 * completer retires it: its ACK may never come again, since the responder
 * answers duplicates with what it acknowledged already, which the
 * completer drops as a duplicate response); one that holds the next PSN is
 * resumed there. Only PSNs sent before (below psn_hi) are skipped, and a
 * READ or an atomic stops the skip: only its response retires it.
 */
void
req_skip_acked(struct engine_qp *eq, uint32_t psn)
{
	uint32_t next = drnic_psn_add(psn, 1);

	if (eq->req.state == REQ_STOPPED)
		return;      /* a WQE failed: the rest is flushed, not sent */
	while (drnic_psn_lt(eq->req.npsn, next) && drnic_psn_lt(eq->req.npsn, eq->req.psn_hi)) {
		struct verbs_send_wqe *w = engine_sq_wqe(eq, eq->req.idx);

		if (w->state == WQE_FAILED || engine_wqe_is_rd_atomic(w))
			return;
		if (engine_wqe_is_local(w)) {
			eq->req.idx++;   /* executed, takes no PSN */
			continue;
		}
		if (drnic_psn_le(w->last_psn, psn)) {
			w->state = WQE_SENT;
			eq->req.idx++;
			eq->req.off = 0;
			eq->req.sge = 0;
			eq->req.sge_off = 0;
			eq->req.npsn = drnic_psn_add(w->last_psn, 1);
			continue;
		}
		/* Inside this WQE: resume at the next PSN, as a NAK would. */
		req_resume_at(eq, w, next);
		return;
	}
}

/*
 * The time the packet just sent left, for its retransmit deadline: the RTT
 * sample's reading when that packet is the one timed (taken nanoseconds
 * before, in the same send: a TSC read costs about 11 ns here, and a
 * ping-pong's every message took both), else 0 (rec_timer_arm_at() reads
 * the clock).
 */
static inline uint64_t
req_sent_ns(const struct engine_qp *eq)
{
	if (eq->rec.rtt_pending && eq->rec.rtt_psn == drnic_psn_sub(eq->req.npsn, 1))
		return eq->rec.rtt_sent_ns;
	return 0;
}

/* How far ahead of the WQE it sends the requester fetches the next. */
#define REQ_WQE_AHEAD 4

/* Fetch WQE @p idx of @p eq's send queue (its lines). */
static inline void
req_prefetch_wqe(const struct engine_qp *eq, uint32_t idx)
{
	const uint8_t *w = (const uint8_t *)engine_sq_wqe(eq, idx);
	uint32_t i, stride = eq->sq_stride;

	for (i = 0; i < stride; i += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(w + i);
}

int
req_step(struct engine_qp *eq, int budget)
{
	struct drnic_qp *qp = eq->qp;
	enum drnic_qp_state st = verbs_qp_state(qp);
	uint32_t prod;
	uint32_t inflight;
	int sent = 0;

	switch (eq->req.state) {
	case REQ_STOPPED:
		return 0;
	case REQ_WAIT_RNR:
		if (engine_step_ns(eq->eng) < eq->rec.rnr_deadline_ns)
			return 0;
		break;
	default:
		break;
	}
	/* Idle: the next WQE, if the poster wrote one, crosses from its core
	 * beside the producer index instead of after it. */
	if (eq->req.state == REQ_IDLE)
		engine_sq_prefetch_head(eq, eq->req.idx);
	eq->req.state = REQ_SENDING;
	prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
	while (sent < budget) {
		struct verbs_send_wqe *w;
		int rc;

		if (eq->req.idx == prod) {
			/* Read the poster's index again only here: its cache
			 * line moves between the cores each time it is read
			 * while the application posts. */
			prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
			if (eq->req.idx == prod) {
				eq->req.state = REQ_IDLE;
				break;
			}
		}
		/* The congestion window: wait for ACKs (the completer wakes
		 * us); something is outstanding, so the timer runs. */
		inflight = engine_inflight(eq);
		if (inflight >= eq->rec.cwnd) {
			eq->req.state = REQ_WAIT_WINDOW;
			break;
		}
		w = engine_sq_wqe(eq, eq->req.idx);
		/* The poster wrote the WQEs ahead on its core: fetch them
		 * while this one is sent. */
		if (prod - eq->req.idx > REQ_WQE_AHEAD)
			req_prefetch_wqe(eq, eq->req.idx + REQ_WQE_AHEAD);
		if (unlikely(engine_wqe_is_local(w))) {
			if (!req_local(eq, w, st)) {
				if (eq->req.state == REQ_STOPPED)
					return sent + 1;
				break;
			}
			sent++;
			continue;
		}
		if (w->state == WQE_POSTED && !req_start_wqe(eq, w, st)) {
			if (eq->req.state == REQ_STOPPED)
				return sent + 1;
			break;
		}
		if (engine_wqe_is_rd_atomic(w))
			rc = req_send_rd_atomic(eq, w);
		else
			rc = req_send_data(eq, w, inflight + 1 >= eq->rec.cwnd);
		if (rc == -EPERM)
			return sent + 1;  /* failed: the requester stopped */
		if (rc < 0)
			break;  /* no mbuf: try again next step */
		if (eq->rec.retry_deadline_ns == 0)
			rec_timer_arm_at(eq, req_sent_ns(eq));
		sent++;
	}
	return sent;
}
