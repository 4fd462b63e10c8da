/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder: checks each inbound request (QP state, PSN, opcode sequence,
 * lengths, rkey/bounds/access), writes payload into memory, consumes receive
 * WQEs, executes atomics, and owes the requester ACKs, NAKs, READ responses
 * and atomic acknowledgements, which resp_step() sends when the port has room.
 *
 *   IDLE --SEND_FIRST--> IN_SEND --SEND_LAST--> IDLE
 *   IDLE --WRITE_FIRST--> IN_WRITE --WRITE_LAST--> IDLE
 *   IDLE --*_ONLY, READ, atomic--> IDLE;   any --error--> ERROR (QP in ERR)
 *
 * A failed check touches no memory. Receiving a request never needs transmit
 * room: what is owed is recorded on the QP and the QP goes on the active
 * list.
 *
 * ACK coalescing: an ACK is owed only for packets with AckReq (the requester
 * sets it on the last packet of each message and every ENGINE_ACKREQ_EVERY
 * packets of a long one), and owed ACKs coalesce into one (the highest PSN)
 * until the QP's step sends it: at most one ACK per QP per received burst.
 * A NAK owed wins over ACKs; a PSN-sequence NAK is sent once per gap and
 * requester round (see resp_rx()).
 *
 * READ and atomic resources (struct resp_rd) are kept for the last
 * rd_mask + 1 new requests; duplicates are answered from them (see
 * resp_duplicate()) and queued for sending in struct resp_tx order.
 */
#include <errno.h>
#include <string.h>

#include "engine_priv.h"

const char *const resp_state_names[RESP_STATE_MAX] = {
	[RESP_IDLE] = "IDLE",
	[RESP_IN_SEND] = "IN_SEND",
	[RESP_IN_WRITE] = "IN_WRITE",
	[RESP_ERROR] = "ERROR",
};

#define RESP_ACK_SYNDROME drnic_aeth_syndrome(DRNIC_AETH_ACK, DRNIC_AETH_CREDIT_INVALID)

/* Owe an ACK for @p psn (coalesces with an earlier one). */
static void
resp_owe_ack(struct engine_qp *eq, uint32_t psn)
{
	if (eq->resp.ack_pending && drnic_aeth_type(eq->resp.ack_syn) != DRNIC_AETH_ACK)
		return;  /* a NAK is owed: it goes first */
	eq->resp.ack_pending = true;
	eq->resp.ack_syn = RESP_ACK_SYNDROME;
	eq->resp.ack_psn = psn;
	engine_qp_activate(eq);
}

static void
resp_owe_nak_now(struct engine_qp *eq, uint8_t syn, uint32_t psn)
{
	eq->resp.ack_pending = true;
	eq->resp.ack_syn = syn;
	eq->resp.ack_psn = psn;
	engine_qp_activate(eq);
}

/* Take a token for a repeated NAK (ENGINE_NAK_*); false: none left. */
static bool
resp_nak_token(struct engine_qp *eq)
{
	uint64_t now = engine_now_ns(eq->eng);
	uint64_t add = (now - eq->resp.nak_refill_ns) / ENGINE_NAK_REFILL_NS;

	if (add > 0) {
		eq->resp.nak_tokens = (uint32_t)RTE_MIN((uint64_t)ENGINE_NAK_BURST,
							eq->resp.nak_tokens + add);
		eq->resp.nak_refill_ns = now;
	}
	if (eq->resp.nak_tokens == 0)
		return false;
	eq->resp.nak_tokens--;
	return true;
}

/*
 * Owe a NAK. A PSN-sequence NAK that repeats the last one sent is
 * rate-limited (ENGINE_NAK_*). RNR NAKs are not: a requester waits the RNR
 * timer before it asks again, and one that gets no answer would spend its
 * retry count on timeouts.
 */
static void
resp_owe_nak(struct engine_qp *eq, uint8_t syn, uint32_t psn)
{
	if (eq->resp.nak_any && syn == eq->resp.nak_last_syn && psn == eq->resp.nak_last_psn &&
	    drnic_aeth_type(syn) == DRNIC_AETH_NAK && !resp_nak_token(eq)) {
		eq->stats.naks_limited++;
		eq->eng->stats.naks_limited++;
		return;
	}
	resp_owe_nak_now(eq, syn, psn);
}

/* Replay credit earned by a new request of @p npkts response packets. */
static void
resp_replay_earn(struct engine_qp *eq, uint32_t npkts)
{
	int64_t c = eq->resp.replay_credit + (int64_t)npkts * ENGINE_REPLAY_PER_REQ;

	eq->resp.replay_credit = RTE_MIN(c, (int64_t)ENGINE_REPLAY_CREDIT_MAX);
}

/* Charge a replay of @p npkts packets; false (counted): no credit left. */
static bool
resp_replay_charge(struct engine_qp *eq, uint32_t npkts)
{
	uint64_t now = engine_now_ns(eq->eng);
	uint64_t add = (now - eq->resp.replay_ns) / ENGINE_REPLAY_REFILL_NS;

	if (add > 0) {
		int64_t c = eq->resp.replay_credit +
			    (int64_t)RTE_MIN(add, (uint64_t)ENGINE_REPLAY_CREDIT_MAX);

		eq->resp.replay_credit = RTE_MIN(c, (int64_t)ENGINE_REPLAY_CREDIT_MAX);
		eq->resp.replay_ns = now;
	}
	if (eq->resp.replay_credit <= 0) {
		eq->stats.replays_limited++;
		eq->eng->stats.replays_limited++;
		return false;
	}
	eq->resp.replay_credit -= npkts;
	eq->stats.replays++;
	eq->eng->stats.replays++;
	return true;
}

/*
 * What the responder does about a request it cannot accept (IBA 9.7.5.2):
 * the NAK it sends, the async event it raises, and the status of the
 * receive WQE the request was filling, if the error is the receive's.
 */
enum resp_err {
	RESP_ERR_INVALID_REQ,    /* malformed, out of sequence, too long, not allowed */
	RESP_ERR_REMOTE_ACCESS,  /* a key, bounds or MR access check failed */
	RESP_ERR_RECV_LEN,       /* a SEND longer than its receive WQE */
	RESP_ERR_RECV_PROT,      /* a receive SGE failed its key check */
	RESP_ERR_MAX,
};

static const struct {
	uint8_t nak;             /* enum drnic_nak_code */
	uint8_t event;           /* enum drnic_event_type */
	uint8_t recv_status;     /* enum drnic_wc_status; SUCCESS: no receive completes */
} resp_err_tab[RESP_ERR_MAX] = {
	[RESP_ERR_INVALID_REQ] = { DRNIC_NAK_INVALID_REQ, DRNIC_EVENT_QP_REQ_ERR,
				   DRNIC_WC_SUCCESS },
	[RESP_ERR_REMOTE_ACCESS] = { DRNIC_NAK_REMOTE_ACCESS, DRNIC_EVENT_QP_ACCESS_ERR,
				     DRNIC_WC_SUCCESS },
	[RESP_ERR_RECV_LEN] = { DRNIC_NAK_INVALID_REQ, DRNIC_EVENT_QP_REQ_ERR,
				DRNIC_WC_LOC_LEN_ERR },
	[RESP_ERR_RECV_PROT] = { DRNIC_NAK_REMOTE_OP, DRNIC_EVENT_QP_ACCESS_ERR,
				 DRNIC_WC_LOC_PROT_ERR },
};

static void resp_complete_recv(struct engine_qp *eq, enum drnic_wc_status status,
			       enum drnic_wc_opcode op, uint32_t byte_len,
			       const struct drnic_wire_pkt *pkt, bool imm);

/*
 * Request @p pkt (PSN @p psn) cannot be accepted: NAK it and move the QP
 * to ERR, as resp_err_tab says for @p err; the receive WQE it was filling
 * completes in error after that. Responses owed for the requests before it
 * are still sent first (IBA 9.7.5.2: the requester is owed them; the NAK
 * follows them in PSN order). @p pkt may be NULL for an error that
 * completes no receive.
 */
static void
resp_fatal(struct engine_qp *eq, enum resp_err err, uint32_t psn,
	   const struct drnic_wire_pkt *pkt)
{
	uint8_t code = resp_err_tab[err].nak;

	resp_owe_nak_now(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, code), psn);
	eq->resp.drain_rtx = eq->resp.rtx_head != eq->resp.rtx_tail;
	eq->resp.state = RESP_ERROR;
	if (verbs_qp_set_error(eq->qp))
		verbs_qp_event(eq->qp, (enum drnic_event_type)resp_err_tab[err].event);
	ENGINE_QP_LOG(DEBUG, eq, "request PSN %u refused (NAK %u): QP to ERR", psn, code);
	engine_qp_activate(eq);
	/* The QP is in ERR before the completion is visible. */
	if (resp_err_tab[err].recv_status != DRNIC_WC_SUCCESS)
		resp_complete_recv(eq, (enum drnic_wc_status)resp_err_tab[err].recv_status,
				   DRNIC_WC_RECV, eq->resp.recv_off, pkt, false);
}

/* Complete the current receive WQE. */
static void
resp_complete_recv(struct engine_qp *eq, enum drnic_wc_status status, enum drnic_wc_opcode op,
		   uint32_t byte_len, const struct drnic_wire_pkt *pkt, bool imm)
{
	struct drnic_qp *qp = eq->qp;
	const struct verbs_recv_wqe *w = engine_rq_wqe(eq, eq->resp.rq_idx);
	struct drnic_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = w->wr_id;
	wc.status = status;
	wc.opcode = op;
	wc.byte_len = byte_len;
	wc.qp_num = qp->qp_num;
	wc.src_qp = qp->attr.dest_qp_num;
	if (imm && status == DRNIC_WC_SUCCESS) {
		wc.imm_data = pkt->imm;
		wc.wc_flags = DRNIC_WC_WITH_IMM;
	}
	eq->resp.rq_idx++;
	eq->resp.recv_taken = false;
	eq->resp.recv_off = 0;
	/* Release: the poster may reuse the slot. */
	verbs_wq_retire(&qp->rq, eq->resp.rq_idx);
	(void)engine_push_cqe(eq, qp->recv_cq, &wc, pkt->bth.se || status != DRNIC_WC_SUCCESS);
}

static bool
resp_rq_empty(const struct engine_qp *eq)
{
	return verbs_wq_posted(&eq->qp->rq, eq->resp.rq_idx) == 0;
}

/* Check the receive SGEs the copy touches, then copy. */
static int
resp_scatter_recv(struct engine_qp *eq, const struct verbs_recv_wqe *w, uint32_t off,
		  const struct rte_mbuf *m, uint32_t moff, uint32_t len)
{
	uint32_t i, o = off, l = len;
	uint8_t *va;

	/* Check first: a failed check copies nothing. */
	for (i = 0; i < w->num_sge && l > 0; i++) {
		uint32_t sl = w->sge[i].length, take;

		if (o >= sl) {
			o -= sl;
			continue;
		}
		if (verbs_mr_check(eq->qp->dev, eq->qp->pd, w->sge[i].lkey, w->sge[i].addr, sl,
				   DRNIC_ACCESS_LOCAL_WRITE, &va) < 0)
			return -EPERM;
		take = RTE_MIN(sl - o, l);
		l -= take;
		o = 0;
	}
	if (l > 0)
		return -ERANGE;
	return engine_sge_scatter(w->sge, w->num_sge, off, m, moff, len);
}

static void
resp_send(struct engine_qp *eq, const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt,
	  const struct drnic_wire_opinfo *op)
{
	uint32_t psn = pkt->bth.psn;
	const struct verbs_recv_wqe *w;
	int rc;

	if (op->pos & DRNIC_WIRE_POS_FIRST) {
		if (resp_rq_empty(eq)) {
			engine_qp_drop(eq, DRNIC_ENGINE_DROP_RNR);
			resp_owe_nak(eq, drnic_aeth_syndrome(DRNIC_AETH_RNR_NAK,
							     eq->qp->attr.min_rnr_timer), psn);
			/* The rest of the message is out of sequence now; the
			 * RNR NAK is the one NAK it gets. */
			eq->resp.nak_seq_sent = true;
			eq->resp.oos_psn = psn;
			return;
		}
		eq->resp.recv_taken = true;
		eq->resp.recv_off = 0;
	}
	w = engine_rq_wqe(eq, eq->resp.rq_idx);
	if (eq->resp.recv_off + pkt->payload_len > w->length) {
		/* The message does not fit the receive buffer. */
		resp_fatal(eq, RESP_ERR_RECV_LEN, psn, pkt);
		return;
	}
	if (pkt->payload_len > 0) {
		rc = resp_scatter_recv(eq, w, eq->resp.recv_off, m, pkt->payload_off,
				       pkt->payload_len);
		if (rc < 0) {
			resp_fatal(eq, RESP_ERR_RECV_PROT, psn, pkt);
			return;
		}
	}
	eq->resp.recv_off += pkt->payload_len;
	eq->resp.epsn = drnic_psn_add(psn, 1);
	if (op->pos & DRNIC_WIRE_POS_LAST) {
		resp_complete_recv(eq, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, eq->resp.recv_off, pkt,
				   (op->flags & DRNIC_WIRE_OPF_IMM) != 0);
		eq->resp.msn = (eq->resp.msn + 1) & DRNIC_MSN_MASK;
		eq->resp.state = RESP_IDLE;
	} else {
		eq->resp.state = RESP_IN_SEND;
	}
	if (pkt->bth.ackreq)
		resp_owe_ack(eq, psn);
}

static void
resp_write(struct engine_qp *eq, const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt,
	   const struct drnic_wire_opinfo *op)
{
	struct drnic_qp *qp = eq->qp;
	uint32_t psn = pkt->bth.psn;
	bool imm = (op->flags & DRNIC_WIRE_OPF_IMM) != 0;
	uint8_t *va;

	/* WRITE with immediate consumes a receive WQE: RNR before anything. */
	if (imm && resp_rq_empty(eq)) {
		if (!engine_pkt_verify(eq->eng, m, pkt))
			return;
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_RNR);
		resp_owe_nak(eq, drnic_aeth_syndrome(DRNIC_AETH_RNR_NAK, qp->attr.min_rnr_timer), psn);
		eq->resp.nak_seq_sent = true;
		eq->resp.oos_psn = psn;
		return;
	}
	if (op->pos & DRNIC_WIRE_POS_FIRST) {
		/* An operation the QP does not enable is an invalid request
		 * (IBA 9.7.5.2); a key, bounds or MR access failure is a
		 * remote access error. */
		if ((qp->attr.qp_access_flags & DRNIC_ACCESS_REMOTE_WRITE) == 0 ||
		    pkt->reth.dmalen > VERBS_MAX_MSG_SZ) {
			resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
			return;
		}
		if (pkt->reth.dmalen > 0 &&
		    verbs_mr_check(qp->dev, qp->pd, pkt->reth.rkey, pkt->reth.va, pkt->reth.dmalen,
				   DRNIC_ACCESS_REMOTE_WRITE, &va) < 0) {
			resp_fatal(eq, RESP_ERR_REMOTE_ACCESS, psn, pkt);
			return;
		}
		eq->resp.wr_va = pkt->reth.va;
		eq->resp.wr_len = pkt->reth.dmalen;
		eq->resp.wr_resid = pkt->reth.dmalen;
		eq->resp.wr_rkey = pkt->reth.rkey;
	} else if (pkt->payload_len > 0 && !verbs_mr_key_live(qp->dev, eq->resp.wr_rkey)) {
		/* Deregistered since the FIRST: nothing more lands there. */
		if (engine_pkt_verify(eq->eng, m, pkt))
			resp_fatal(eq, RESP_ERR_REMOTE_ACCESS, psn, pkt);
		return;
	}
	if ((op->pos & DRNIC_WIRE_POS_LAST) ? pkt->payload_len != eq->resp.wr_resid :
	    pkt->payload_len > eq->resp.wr_resid) {
		if (engine_pkt_verify(eq->eng, m, pkt))
			resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
		return;
	}
	if (pkt->icrc_deferred) {
		/* The expected continuation: copy and verify in one pass. The
		 * bytes land in this WRITE's next range before the ICRC is
		 * known; a bad frame changes no state, and the retransmission
		 * writes that range again before anything can complete. */
		int rc = drnic_wire_copy_out_verify(m, pkt, (void *)(uintptr_t)eq->resp.wr_va);

		if (rc == -EBADMSG) {
			eq->eng->stats.wire_drops[DRNIC_WIRE_DROP_BAD_ICRC]++;
			return;
		}
		if (rc < 0) {
			resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
			return;
		}
		eq->resp.nak_seq_sent = false;
	} else if (pkt->payload_len > 0 &&
		   drnic_wire_copy_out(m, pkt->payload_off, pkt->payload_len,
				       (void *)(uintptr_t)eq->resp.wr_va) < 0) {
		resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
		return;
	}
	eq->resp.wr_va += pkt->payload_len;
	eq->resp.wr_resid -= pkt->payload_len;
	eq->resp.epsn = drnic_psn_add(psn, 1);
	if (op->pos & DRNIC_WIRE_POS_LAST) {
		if (imm) {
			eq->resp.recv_off = 0;
			resp_complete_recv(eq, DRNIC_WC_SUCCESS, DRNIC_WC_RECV_RDMA_WITH_IMM,
					   eq->resp.wr_len, pkt, true);
		}
		eq->resp.msn = (eq->resp.msn + 1) & DRNIC_MSN_MASK;
		eq->resp.state = RESP_IDLE;
	} else {
		eq->resp.state = RESP_IN_WRITE;
	}
	if (pkt->bth.ackreq)
		resp_owe_ack(eq, psn);
}

/* Room for one more new READ/atomic request (max_dest_rd_atomic). */
static bool
resp_rd_room(const struct engine_qp *eq)
{
	uint32_t max = eq->qp->attr.max_dest_rd_atomic;

	return eq->resp.rd_pending < RTE_MIN(max, (eq->resp.rd_mask + 1) / 2) &&
	       eq->resp.rtx_tail - eq->resp.rtx_head <= eq->resp.rtx_mask;
}

/* Queue the response of resource @p res from packet @p from on. */
static void
resp_tx_queue(struct engine_qp *eq, uint32_t res, uint32_t from, bool is_new)
{
	struct resp_tx *t = &eq->resp.rtx[eq->resp.rtx_tail & eq->resp.rtx_mask];

	t->res = res;
	t->psn = eq->resp.rd[res & eq->resp.rd_mask].psn;
	t->next = from;
	t->start = from;
	t->is_new = is_new;
	eq->resp.rtx_tail++;
	if (is_new)
		eq->resp.rd_pending++;
	engine_qp_activate(eq);
}

/* A new resource (the oldest one is forgotten). */
static struct resp_rd *
resp_rd_new(struct engine_qp *eq)
{
	return &eq->resp.rd[eq->resp.rd_tail++ & eq->resp.rd_mask];
}

static void
resp_read(struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	struct drnic_qp *qp = eq->qp;
	uint32_t psn = pkt->bth.psn;
	struct resp_rd *r;
	uint8_t *va;

	/* More READ/atomics outstanding than max_dest_rd_atomic allows: an
	 * invalid request (IBA 9.7.5.2.8). */
	if (!resp_rd_room(eq)) {
		resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
		return;
	}
	if ((qp->attr.qp_access_flags & DRNIC_ACCESS_REMOTE_READ) == 0) {
		resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
		return;
	}
	/* No message is longer than 2^31 bytes (IBA 9.4.3): an invalid
	 * request, not a packet count that wraps. */
	if (pkt->reth.dmalen > VERBS_MAX_MSG_SZ) {
		resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
		return;
	}
	if (pkt->reth.dmalen > 0 &&
	    verbs_mr_check(qp->dev, qp->pd, pkt->reth.rkey, pkt->reth.va, pkt->reth.dmalen,
			   DRNIC_ACCESS_REMOTE_READ, &va) < 0) {
		resp_fatal(eq, RESP_ERR_REMOTE_ACCESS, psn, pkt);
		return;
	}
	r = resp_rd_new(eq);
	r->atomic = 0;
	r->psn = psn;
	r->npkts = engine_npkts(pkt->reth.dmalen, eq->mtu);
	r->va = pkt->reth.va;
	r->len = pkt->reth.dmalen;
	r->rkey = pkt->reth.rkey;
	resp_replay_earn(eq, r->npkts);
	eq->resp.epsn = drnic_psn_add(psn, r->npkts);
	eq->resp.msn = (eq->resp.msn + 1) & DRNIC_MSN_MASK;
	resp_tx_queue(eq, eq->resp.rd_tail - 1, 0, true);
}

static void
resp_atomic(struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	struct drnic_qp *qp = eq->qp;
	uint32_t psn = pkt->bth.psn;
	struct resp_rd *r;
	uint64_t *p, orig;
	uint8_t *va;

	if (!resp_rd_room(eq) || (pkt->atomic.va & 7) != 0) {
		resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
		return;
	}
	if ((qp->attr.qp_access_flags & DRNIC_ACCESS_REMOTE_ATOMIC) == 0) {
		resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
		return;
	}
	if (verbs_mr_check(qp->dev, qp->pd, pkt->atomic.rkey, pkt->atomic.va, 8,
			   DRNIC_ACCESS_REMOTE_ATOMIC, &va) < 0) {
		resp_fatal(eq, RESP_ERR_REMOTE_ACCESS, psn, pkt);
		return;
	}
	p = (uint64_t *)(uintptr_t)pkt->atomic.va;
	/* Atomic against every other engine and the CPUs. */
	if (pkt->bth.opcode == DRNIC_WIRE_OP_RC_COMPARE_SWAP) {
		orig = pkt->atomic.cmp;
		__atomic_compare_exchange_n(p, &orig, pkt->atomic.swap_add, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(p, pkt->atomic.swap_add, __ATOMIC_SEQ_CST);
	}
	r = resp_rd_new(eq);
	r->atomic = 1;
	r->psn = psn;
	r->npkts = 1;
	r->orig = orig;
	resp_replay_earn(eq, 1);
	eq->resp.epsn = drnic_psn_add(psn, 1);
	eq->resp.msn = (eq->resp.msn + 1) & DRNIC_MSN_MASK;
	resp_tx_queue(eq, eq->resp.rd_tail - 1, 0, true);
}

/*
 * A request the responder has seen (the requester went back): SEND/WRITE
 * packets are acknowledged again; a READ is answered again from memory
 * (READs are idempotent), from the PSN asked for (a partial re-read from the
 * middle of an earlier READ too); an atomic is answered from its saved
 * result and never executed twice. A response still queued restarts there
 * instead of being queued twice.
 */
static void
resp_duplicate(struct engine_qp *eq, const struct drnic_wire_pkt *pkt,
	       const struct drnic_wire_opinfo *op)
{
	uint32_t psn = pkt->bth.psn, i, res = 0, from = 0;
	bool atomic = (op->flags & DRNIC_WIRE_OPF_ATOMIC) != 0, found = false;
	struct resp_rd *r;

	if (!(op->flags & (DRNIC_WIRE_OPF_READ | DRNIC_WIRE_OPF_ATOMIC))) {
		resp_owe_ack(eq, drnic_psn_sub(eq->resp.epsn, 1));
		return;
	}
	for (i = 1; i <= eq->resp.rd_mask + 1 && i <= eq->resp.rd_tail; i++) {
		r = &eq->resp.rd[(eq->resp.rd_tail - i) & eq->resp.rd_mask];
		if (r->atomic != atomic)
			continue;
		if (r->psn == psn ||
		    (!atomic && drnic_psn_gt(psn, r->psn) &&
		     drnic_psn_sub(psn, r->psn) < r->npkts)) {
			res = eq->resp.rd_tail - i;
			from = drnic_psn_sub(psn, r->psn);
			found = true;
			break;
		}
	}
	if (found) {
		for (i = eq->resp.rtx_head; i != eq->resp.rtx_tail; i++) {
			struct resp_tx *t = &eq->resp.rtx[i & eq->resp.rtx_mask];

			if (t->res == res && t->psn == eq->resp.rd[res & eq->resp.rd_mask].psn) {
				/* Queued: go back (what it sends again is charged). */
				if (from < t->next && resp_replay_charge(eq, t->next - from))
					t->next = t->start = from;
				return;
			}
		}
	} else {
		/* Older than any request a requester within max_rd_atomic can
		 * still ask for (a stale copy the network delivered late):
		 * ignored, and no resource is given up for it. */
		ENGINE_QP_LOG(DEBUG, eq, "duplicate %s PSN %u older than the resources: ignored",
			      atomic ? "atomic" : "READ", psn);
		return;
	}
	/* Replays wait while the queue is half full (new requests keep room). */
	if (eq->resp.rtx_tail - eq->resp.rtx_head > eq->resp.rtx_mask / 2)
		return;
	if (!resp_replay_charge(eq, eq->resp.rd[res & eq->resp.rd_mask].npkts - from))
		return;
	resp_tx_queue(eq, res, from, false);
}

/* The responder of a QP entering RTR: expecting @p epsn, full buckets. */
void
resp_setup(struct engine_qp *eq, uint32_t epsn)
{
	eq->resp.epsn = epsn;
	eq->resp.msn = 0;
	eq->resp.state = RESP_IDLE;
	eq->resp.replay_credit = ENGINE_REPLAY_CREDIT_INIT;
	eq->resp.replay_ns = engine_now_ns(eq->eng);
	eq->resp.nak_tokens = ENGINE_NAK_BURST;
	eq->resp.nak_refill_ns = eq->resp.replay_ns;
	eq->resp.nak_any = false;
}

/* Opcode sequence: what may arrive in each responder state. */
static bool
resp_seq_ok(const struct engine_qp *eq, const struct drnic_wire_opinfo *op)
{
	switch (eq->resp.state) {
	case RESP_IDLE:
		return (op->pos & DRNIC_WIRE_POS_FIRST) != 0;
	case RESP_IN_SEND:
		return (op->flags & DRNIC_WIRE_OPF_SEND) && !(op->pos & DRNIC_WIRE_POS_FIRST);
	case RESP_IN_WRITE:
		return (op->flags & DRNIC_WIRE_OPF_WRITE) && !(op->pos & DRNIC_WIRE_POS_FIRST);
	default:
		return false;
	}
}

void
resp_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	const struct drnic_wire_opinfo *op = drnic_wire_opcode_info(pkt->bth.opcode);
	enum drnic_qp_state st = verbs_qp_state(eq->qp);
	uint32_t psn = pkt->bth.psn;
	int32_t d;

	if (!eq->resp_init || st == DRNIC_QPS_ERR || st < DRNIC_QPS_RTR ||
	    eq->resp.state == RESP_ERROR) {
		if (engine_pkt_verify(eq->eng, m, pkt))
			engine_qp_drop(eq, DRNIC_ENGINE_DROP_QP_STATE);
		return;
	}
	/* Only the expected WRITE continuation is copied before its ICRC is
	 * known (resp_write()); every other outcome verifies first. */
	d = drnic_psn_diff(psn, eq->resp.epsn);
	if (d != 0 && !engine_pkt_verify(eq->eng, m, pkt))
		return;
	if (d < 0) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_PSN_DUP);
		resp_duplicate(eq, pkt, op);
		return;
	}
	if (d > 0) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_PSN_OOS);
		/* One NAK per gap and round: a PSN not above the last
		 * out-of-sequence one means the requester went back and lost
		 * the expected packet again; without a NAK of its own that
		 * round would wait for the requester's timer. */
		if (!eq->resp.nak_seq_sent || drnic_psn_le(psn, eq->resp.oos_psn)) {
			eq->resp.nak_seq_sent = true;
			resp_owe_nak(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR),
				     eq->resp.epsn);
		}
		eq->resp.oos_psn = psn;
		return;
	}
	if (!pkt->icrc_deferred)
		eq->resp.nak_seq_sent = false;   /* deferred: once verified (resp_write()) */
	if (!resp_seq_ok(eq, op) ||
	    ((op->pos == DRNIC_WIRE_POS_FIRST || op->pos == DRNIC_WIRE_POS_MIDDLE) &&
	     pkt->payload_len != eq->mtu) ||
	    pkt->payload_len > eq->mtu) {
		if (engine_pkt_verify(eq->eng, m, pkt))
			resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
		return;
	}
	if (op->flags & DRNIC_WIRE_OPF_INV)
		/* SEND with Invalidate needs memory windows or remote
		 * invalidation, which drnic does not offer (the device caps
		 * say so): an unsupported request, not a plain SEND. */
		resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
	else if (op->flags & DRNIC_WIRE_OPF_SEND)
		resp_send(eq, m, pkt, op);
	else if (op->flags & DRNIC_WIRE_OPF_WRITE)
		resp_write(eq, m, pkt, op);
	else if (op->flags & DRNIC_WIRE_OPF_READ)
		resp_read(eq, pkt);
	else if (op->flags & DRNIC_WIRE_OPF_ATOMIC)
		resp_atomic(eq, pkt);
	else
		resp_fatal(eq, RESP_ERR_INVALID_REQ, psn, pkt);
}

/* Send the owed ACK/NAK, if any. */
int
resp_send_ack(struct engine_qp *eq)
{
	struct drnic_wire_pkt pkt;

	if (!eq->resp.ack_pending || engine_port_room(eq->port) == 0)
		return 0;
	pkt = eq->tmpl;
	pkt.bth.opcode = DRNIC_WIRE_OP_RC_ACKNOWLEDGE;
	pkt.bth.psn = eq->resp.ack_psn;
	pkt.aeth.syndrome = eq->resp.ack_syn;
	pkt.aeth.msn = eq->resp.msn;
	if (engine_qp_tx(eq, &pkt) < 0)
		return 0;
	if (drnic_aeth_type(eq->resp.ack_syn) != DRNIC_AETH_ACK) {
		eq->stats.naks_tx++;
		eq->resp.nak_any = true;
		eq->resp.nak_last_syn = eq->resp.ack_syn;
		eq->resp.nak_last_psn = eq->resp.ack_psn;
	}
	eq->resp.ack_pending = false;
	return 1;
}

/* Next response packet of @p t (resource @p r). */
static int
resp_send_rd(struct engine_qp *eq, const struct resp_rd *r, struct resp_tx *t)
{
	struct drnic_wire_pkt pkt = eq->tmpl;
	struct drnic_wire_sge sg;
	uint8_t pos = 0;

	pkt.bth.psn = drnic_psn_add(r->psn, t->next);
	pkt.aeth.syndrome = RESP_ACK_SYNDROME;
	pkt.aeth.msn = eq->resp.msn;
	if (r->atomic) {
		pkt.bth.opcode = DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE;
		pkt.atomic_orig = r->orig;
	} else {
		uint32_t off = t->next * eq->mtu;
		uint32_t plen = RTE_MIN(eq->mtu, r->len - off);

		/* A re-read from the middle starts with a FIRST (ONLY). */
		if (t->next == t->start)
			pos |= DRNIC_WIRE_POS_FIRST;
		if (t->next + 1 == r->npkts)
			pos |= DRNIC_WIRE_POS_LAST;
		switch (pos) {
		case DRNIC_WIRE_POS_ONLY:
			pkt.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY;
			break;
		case DRNIC_WIRE_POS_FIRST:
			pkt.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST;
			break;
		case DRNIC_WIRE_POS_LAST:
			pkt.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST;
			break;
		default:
			pkt.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
			break;
		}
		sg.addr = (const void *)(uintptr_t)(r->va + off);
		sg.len = plen;
		pkt.sg = &sg;
		pkt.sg_cnt = plen > 0;
	}
	if (engine_qp_tx(eq, &pkt) < 0)
		return -ENOMEM;
	t->next++;
	return 0;
}

/* Response @p t is sent (or its resource was reused). */
static void
resp_tx_done(struct engine_qp *eq, const struct resp_tx *t)
{
	if (t->is_new)
		eq->resp.rd_pending--;
	eq->resp.rtx_head++;
}

int
resp_step(struct engine_qp *eq, int budget)
{
	int n = 0;

	while (eq->resp.rtx_head != eq->resp.rtx_tail && n < budget) {
		struct resp_tx *t = &eq->resp.rtx[eq->resp.rtx_head & eq->resp.rtx_mask];
		const struct resp_rd *r = &eq->resp.rd[t->res & eq->resp.rd_mask];

		if (r->psn != t->psn || t->next >= r->npkts) {
			resp_tx_done(eq, t);
			continue;
		}
		if (!r->atomic && r->len > 0 && !verbs_mr_key_live(eq->qp->dev, r->rkey)) {
			/* Deregistered since the request was accepted (or
			 * since the answer being replayed): nothing more is
			 * read from it. A remote-access NAK where the answer
			 * stops; nothing queued after it is sent. */
			uint32_t psn = drnic_psn_add(r->psn, t->next);

			eq->resp.rtx_head = eq->resp.rtx_tail;
			eq->resp.rd_pending = 0;
			resp_fatal(eq, RESP_ERR_REMOTE_ACCESS, psn, NULL);
			break;
		}
		if (resp_send_rd(eq, r, t) < 0)
			return n;
		n++;
		if (t->next == r->npkts)
			resp_tx_done(eq, t);
	}
	if (n < budget)
		n += resp_send_ack(eq);
	return n;
}

int
resp_flush(struct engine_qp *eq)
{
	struct drnic_qp *qp = eq->qp;
	uint32_t prod = atomic_load_explicit(&qp->rq.prod, memory_order_acquire);
	struct drnic_wc wc;
	int n = 0;

	while (eq->resp.rq_idx != prod && n < ENGINE_QP_BUDGET * 4) {
		const struct verbs_recv_wqe *w = engine_rq_wqe(eq, eq->resp.rq_idx);

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = DRNIC_WC_WR_FLUSH_ERR;
		wc.opcode = DRNIC_WC_RECV;
		wc.qp_num = qp->qp_num;
		wc.src_qp = qp->attr.dest_qp_num;
		eq->resp.rq_idx++;
		n++;
		verbs_wq_retire(&qp->rq, eq->resp.rq_idx);
		(void)engine_push_cqe(eq, qp->recv_cq, &wc, true);
	}
	if (n > 0)
		verbs_wq_retire(&qp->rq, eq->resp.rq_idx);
	eq->resp.rtx_head = eq->resp.rtx_tail;
	eq->resp.rd_pending = 0;
	eq->resp.state = RESP_ERROR;
	eq->resp.recv_taken = false;
	return n;
}
