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

#include <rte_hash_crc.h>

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
	uint64_t now = engine_step_ns(eq->eng);
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
	uint64_t now = engine_step_ns(eq->eng);
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
 * The responder's checks, in the order of the IBA's responder flow (IBA
 * 9.7.5): a request is acted on only when every check has passed. Each check
 * returns the next one to run, or an outcome: execute, drop, answer a
 * duplicate, NAK a gap, RNR, or one of the errors at the end, which
 * resp_err_tab maps to what the responder does. resp_rx() runs them.
 */
enum resp_check {
	RESP_CHK_QP_STATE,       /* the QP takes requests */
	RESP_CHK_PSN,            /* the PSN expected, a duplicate, or a gap */
	RESP_CHK_OP_SEQ,         /* the opcode may follow the one before */
	RESP_CHK_XRC,            /* XRC: an XRC SRQ of the QP's domain is named */
	RESP_CHK_OP_VALID,       /* an operation drnic does and the QP enables */
	RESP_CHK_RESOURCE,       /* a receive WQE, a READ/atomic resource */
	RESP_CHK_LENGTH,         /* payload against MTU, message, receive WQE */
	RESP_CHK_KEY,            /* rkey, bounds and access; receive SGE lkeys */
	/* Outcomes: resp_rx() acts on them. */
	RESP_EXECUTE,            /* every check passed */
	RESP_DROP,               /* no requests in this QP state: counted */
	RESP_DUPLICATE,          /* seen before: answered again (resp_duplicate()) */
	RESP_OUT_OF_SEQ,         /* beyond a gap: a PSN-sequence NAK, once */
	RESP_RNR,                /* no receive WQE: an RNR NAK */
	RESP_BAD_ICRC,           /* a deferred ICRC was bad: a wire drop, nothing moves */
	RESP_UC_DROP,            /* UC: the message is dropped whole, silently */
	RESP_UC_STALE,           /* UC: a PSN already passed (a duplicate, or late): dropped */
	/* Errors (IBA 9.7.5.2): a NAK and the QP to ERR (resp_fatal()). */
	RESP_ERR_INVALID_REQ,    /* malformed, out of sequence, too long, not allowed */
	RESP_ERR_REMOTE_ACCESS,  /* a key, bounds or MR access check failed */
	RESP_ERR_RECV_LEN,       /* a SEND longer than its receive WQE */
	RESP_ERR_RECV_PROT,      /* a receive SGE failed its key check */
	RESP_CHECK_MAX,
};

static const char *const resp_check_names[RESP_CHECK_MAX] = {
	[RESP_CHK_QP_STATE] = "CHK_QP_STATE",
	[RESP_CHK_PSN] = "CHK_PSN",
	[RESP_CHK_OP_SEQ] = "CHK_OP_SEQ",
	[RESP_CHK_XRC] = "CHK_XRC",
	[RESP_CHK_OP_VALID] = "CHK_OP_VALID",
	[RESP_CHK_RESOURCE] = "CHK_RESOURCE",
	[RESP_CHK_LENGTH] = "CHK_LENGTH",
	[RESP_CHK_KEY] = "CHK_KEY",
	[RESP_EXECUTE] = "EXECUTE",
	[RESP_DROP] = "DROP",
	[RESP_DUPLICATE] = "DUPLICATE",
	[RESP_OUT_OF_SEQ] = "OUT_OF_SEQ",
	[RESP_RNR] = "RNR",
	[RESP_BAD_ICRC] = "BAD_ICRC",
	[RESP_UC_DROP] = "UC_DROP",
	[RESP_UC_STALE] = "UC_STALE",
	[RESP_ERR_INVALID_REQ] = "ERR_INVALID_REQ",
	[RESP_ERR_REMOTE_ACCESS] = "ERR_REMOTE_ACCESS",
	[RESP_ERR_RECV_LEN] = "ERR_RECV_LEN",
	[RESP_ERR_RECV_PROT] = "ERR_RECV_PROT",
};

/*
 * What the responder does about each error: the NAK it sends, the async
 * event it raises, and the status of the receive WQE the request was
 * filling, if the error is the receive's.
 */
static const struct {
	uint8_t nak;             /* enum drnic_nak_code */
	uint8_t event;           /* enum drnic_event_type */
	uint8_t recv_status;     /* enum drnic_wc_status; SUCCESS: no receive completes */
} resp_err_tab[RESP_CHECK_MAX] = {
	[RESP_ERR_INVALID_REQ] = { DRNIC_NAK_INVALID_REQ, DRNIC_EVENT_QP_REQ_ERR,
				   DRNIC_WC_SUCCESS },
	[RESP_ERR_REMOTE_ACCESS] = { DRNIC_NAK_REMOTE_ACCESS, DRNIC_EVENT_QP_ACCESS_ERR,
				     DRNIC_WC_SUCCESS },
	[RESP_ERR_RECV_LEN] = { DRNIC_NAK_INVALID_REQ, DRNIC_EVENT_QP_REQ_ERR,
				DRNIC_WC_LOC_LEN_ERR },
	[RESP_ERR_RECV_PROT] = { DRNIC_NAK_REMOTE_OP, DRNIC_EVENT_QP_ACCESS_ERR,
				 DRNIC_WC_LOC_PROT_ERR },
};

/* The SRQ receives come from: the QP's, or for an XRC target the XRC SRQ
 * the request names (resp_chk_xrc()); NULL: the QP's own receive queue. */
static inline struct drnic_srq *
resp_srq(const struct engine_qp *eq)
{
	return eq->qp->srq != NULL ? eq->qp->srq : eq->xrc ? eq->resp.xrc_srq : NULL;
}

/* The PD memory is checked against: the QP's, or an XRC target's SRQ's. */
static inline const struct drnic_pd *
resp_pd(const struct engine_qp *eq)
{
	return eq->xrc ? eq->resp.xrc_srq->pd : eq->qp->pd;
}

/* The CQ receives complete on: the QP's, or an XRC target's SRQ's. */
static inline struct drnic_cq *
resp_recv_cq(const struct engine_qp *eq)
{
	return eq->xrc ? eq->resp.xrc_srq->cq : eq->qp->recv_cq;
}

/* The receive WQE the current message fills: the copy taken from the SRQ,
 * or the QP's own at rq_idx. */
static inline const struct verbs_recv_wqe *
resp_recv_wqe(const struct engine_qp *eq)
{
	return resp_srq(eq) != NULL ? eq->resp.srq_wqe : engine_rq_wqe(eq, eq->resp.rq_idx);
}

static void resp_complete_recv(struct engine_qp *eq, enum drnic_wc_status status,
			       enum drnic_wc_opcode op, uint32_t byte_len,
			       const struct drnic_wire_pkt *pkt, bool imm);

/*
 * Request PSN @p psn cannot be accepted: NAK it and move the QP to ERR, as
 * resp_err_tab says for error @p err; the receive WQE it was filling
 * completes in error after that. Responses owed for the requests before it
 * are still sent first (IBA 9.7.5.2: the requester is owed them; the NAK
 * follows them in PSN order). @p pkt may be NULL for an error that
 * completes no receive.
 */
static void
resp_fatal(struct engine_qp *eq, enum resp_check err, uint32_t psn,
	   const struct drnic_wire_pkt *pkt)
{
	uint8_t code = resp_err_tab[err].nak;

	RTE_ASSERT(err >= RESP_ERR_INVALID_REQ && err < RESP_CHECK_MAX);
	if (!eq->uc && !eq->ud)   /* UC and UD answer nothing */
		resp_owe_nak_now(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, code), psn);
	eq->resp.drain_rtx = eq->resp.rtx_head != eq->resp.rtx_tail;
	eq->resp.state = RESP_ERROR;
	if (verbs_qp_set_error(eq->qp))
		verbs_qp_event(eq->qp, (enum drnic_event_type)resp_err_tab[err].event);
	ENGINE_QP_LOG(DEBUG, eq, "request PSN %u refused (%s, NAK %u): QP to ERR", psn,
		      resp_check_names[err], code);
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
	const struct verbs_recv_wqe *w = resp_recv_wqe(eq);
	struct drnic_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = w->wr_id;
	wc.status = status;
	wc.opcode = op;
	wc.byte_len = byte_len;
	wc.qp_num = qp->qp_num;
	wc.src_qp = eq->path.dest_qp_num;
	if (eq->ud) {
		/* The sender's QP, and the GRH area filled (RoCEv2 always
		 * has one); P_Key index 0 (the port's only entry). RoCE has no
		 * SL; sl carries what IBA A17.4.5.1 says a RoCEv2 UD CQE must
		 * tell, the frame's network header, as ConnectX reports it
		 * (UCX's ud_verbs reads it to find the GRH's destination):
		 * bit 3 a UDP header, bits 2:0 IPv6 (1) or IPv4 (2). */
		wc.src_qp = pkt->deth.sqpn;
		wc.wc_flags = DRNIC_WC_GRH;
		wc.sl = pkt->ip.version == 4 ? DRNIC_WC_SL_ROCE_V2_IPV4 : DRNIC_WC_SL_ROCE_V2_IPV6;
	}
	if (imm && status == DRNIC_WC_SUCCESS) {
		wc.imm_data = pkt->imm;
		wc.wc_flags |= DRNIC_WC_WITH_IMM;
	} else if (status == DRNIC_WC_SUCCESS &&
		   (drnic_wire_opcode_info(pkt->bth.opcode)->flags & DRNIC_WIRE_OPF_INV)) {
		wc.invalidated_rkey = pkt->ieth_rkey;
		wc.wc_flags |= DRNIC_WC_WITH_INV;
	}
	eq->resp.recv_taken = false;
	eq->resp.recv_off = 0;
	if (resp_srq(eq) == NULL) {
		/* Release: the poster may reuse the slot. (An SRQ's was free
		 * when it was taken.) */
		eq->resp.rq_idx++;
		verbs_wq_retire(&qp->rq, eq->resp.rq_idx);
	}
	(void)engine_push_cqe(eq, resp_recv_cq(eq), &wc,
			      pkt->bth.se || status != DRNIC_WC_SUCCESS);
}

/*
 * A receive WQE for the message arriving: the QP's next one (taken when the
 * message starts), or one taken now from its SRQ (a copy; kept across a
 * retransmission of the same packet). False: none posted.
 */
static bool
resp_recv_get(struct engine_qp *eq)
{
	struct drnic_srq *srq = resp_srq(eq);

	if (srq == NULL)
		return verbs_wq_posted(&eq->qp->rq, eq->resp.rq_idx) != 0;
	if (eq->resp.recv_taken)
		return true;
	if (!verbs_srq_take(srq, eq->resp.srq_wqe))
		return false;
	eq->resp.recv_taken = true;
	eq->resp.recv_off = 0;
	return true;
}

/* Room for one more new READ/atomic request (max_dest_rd_atomic). */
static bool
resp_rd_room(const struct engine_qp *eq)
{
	uint32_t max = eq->path.max_dest_rd_atomic;

	return eq->resp.rd_pending < RTE_MIN(max, (eq->resp.rd_mask + 1) / 2) &&
	       eq->resp.rtx_tail - eq->resp.rtx_head <= eq->resp.rtx_mask;
}

/* One request on its way through the checks. */
struct resp_req {
	struct rte_mbuf *m;
	const struct drnic_wire_pkt *pkt;
	const struct drnic_wire_opinfo *op;
	uint8_t *va;     /* CHK_KEY: where the remote address is in memory */
};

static enum resp_check
resp_chk_qp_state(const struct engine_qp *eq)
{
	enum drnic_qp_state st = verbs_qp_state(eq->qp);

	if (!eq->resp_init || st == DRNIC_QPS_ERR || st < DRNIC_QPS_RTR ||
	    eq->resp.state == RESP_ERROR)
		return RESP_DROP;
	return RESP_CHK_PSN;
}

/* UC: the message in progress is given up. A SEND's receive WQE is not
 * completed: the next message fills it; a WRITE's other bytes never land. */
static void
resp_uc_abandon(struct engine_qp *eq)
{
	eq->resp.state = RESP_IDLE;
	eq->resp.recv_off = 0;
	if (eq->qp->srq == NULL)
		eq->resp.recv_taken = false;   /* rq_idx stays: used again */
}

/*
 * UC's answer to what the checks decided: no NAK and no QP error for a
 * request it cannot take (an operation it does not enable, a bad key, no
 * receive WQE): the message is dropped whole. A receive WQE the message
 * overflows or cannot write still completes in error (and the QP goes to
 * ERR), as on RC.
 */
static enum resp_check
resp_uc_outcome(enum resp_check s)
{
	switch (s) {
	case RESP_ERR_INVALID_REQ:
	case RESP_ERR_REMOTE_ACCESS:
	case RESP_RNR:
		return RESP_UC_DROP;
	default:
		return s;
	}
}

static enum resp_check
resp_chk_psn(struct engine_qp *eq, const struct resp_req *rq)
{
	int32_t d = drnic_psn_diff(rq->pkt->bth.psn, eq->resp.epsn);

	if (eq->uc) {
		/* UC (IBA 9.7.5.1.2): nothing is resent, so a PSN behind the
		 * expected one is a duplicate or a packet overtaken on the way:
		 * dropped, and the message in progress goes on. After a gap,
		 * or while a message is being dropped, only a FIRST or ONLY is
		 * taken: it starts a new message at its PSN. */
		if (d < 0)
			return RESP_UC_STALE;
		if (d == 0 && !eq->resp.uc_drop)
			return RESP_CHK_OP_SEQ;
		if (!(rq->op->pos & DRNIC_WIRE_POS_FIRST))
			return RESP_UC_DROP;
		resp_uc_abandon(eq);
		eq->resp.uc_drop = false;
		eq->resp.epsn = rq->pkt->bth.psn;
		return RESP_CHK_OP_SEQ;
	}

	if (d < 0)
		return RESP_DUPLICATE;
	if (d > 0)
		return RESP_OUT_OF_SEQ;
	return RESP_CHK_OP_SEQ;
}

/* Opcode sequence: what may arrive in each responder state. */
static enum resp_check
resp_chk_op_seq(const struct engine_qp *eq, const struct resp_req *rq)
{
	const struct drnic_wire_opinfo *op = rq->op;
	bool ok;

	switch (eq->resp.state) {
	case RESP_IDLE:
		ok = (op->pos & DRNIC_WIRE_POS_FIRST) != 0;
		break;
	case RESP_IN_SEND:
		ok = (op->flags & DRNIC_WIRE_OPF_SEND) && !(op->pos & DRNIC_WIRE_POS_FIRST);
		break;
	case RESP_IN_WRITE:
		ok = (op->flags & DRNIC_WIRE_OPF_WRITE) && !(op->pos & DRNIC_WIRE_POS_FIRST);
		break;
	default:
		ok = false;
		break;
	}
	return ok ? RESP_CHK_XRC : RESP_ERR_INVALID_REQ;
}

/*
 * An XRC target takes a request only for an XRC SRQ of its own domain (the
 * IBA's XRC checks: an XRCETH naming no such SRQ is an invalid request),
 * and a SEND's later packets for the SRQ its first one took a WQE from.
 * The SRQ is looked up for every request: destroying it clears it from
 * the device's table and fences the engines, so a pointer kept from an
 * earlier packet is never followed.
 */
static enum resp_check
resp_chk_xrc(struct engine_qp *eq, const struct resp_req *rq)
{
	struct drnic_srq *srq;

	if (!eq->xrc)
		return RESP_CHK_OP_VALID;
	srq = verbs_srq_lookup(eq->qp->dev, rq->pkt->xrceth.srqn);
	if (srq == NULL || srq->xrcd != eq->qp->xrcd ||
	    (eq->resp.recv_taken && srq != eq->resp.xrc_srq)) {
		ENGINE_QP_LOG(DEBUG, eq, "XRC SRQ %u: %s", rq->pkt->xrceth.srqn,
			      srq == NULL ? "none" : srq->xrcd != eq->qp->xrcd ?
			      "another XRC domain's" : "not the one the message started in");
		return RESP_ERR_INVALID_REQ;
	}
	eq->resp.xrc_srq = srq;
	eq->resp.xrc_srqn = srq->srq_num;
	return RESP_CHK_OP_VALID;
}

/*
 * An operation drnic executes and the QP enables: anything else is an
 * invalid request (IBA 9.7.5.2), not a key error.
 */
static enum resp_check
resp_chk_op_valid(const struct engine_qp *eq, const struct resp_req *rq)
{
	uint32_t acc = eq->path.access_flags;
	uint32_t f = rq->op->flags;

	if (f & DRNIC_WIRE_OPF_SEND)   /* with Invalidate too */
		return RESP_CHK_RESOURCE;
	if (f & DRNIC_WIRE_OPF_WRITE)
		return (acc & DRNIC_ACCESS_REMOTE_WRITE) ? RESP_CHK_RESOURCE : RESP_ERR_INVALID_REQ;
	if (f & DRNIC_WIRE_OPF_READ)
		return (acc & DRNIC_ACCESS_REMOTE_READ) ? RESP_CHK_RESOURCE : RESP_ERR_INVALID_REQ;
	if (f & DRNIC_WIRE_OPF_ATOMIC)
		return (acc & DRNIC_ACCESS_REMOTE_ATOMIC) ? RESP_CHK_RESOURCE :
							    RESP_ERR_INVALID_REQ;
	return RESP_ERR_INVALID_REQ;
}

/*
 * A SEND's first packet and a WRITE with immediate take a receive WQE (none:
 * RNR); a READ or atomic takes a resource, and more of them outstanding than
 * max_dest_rd_atomic allows is an invalid request (IBA 9.7.5.2.8).
 */
static enum resp_check
resp_chk_resource(struct engine_qp *eq, const struct resp_req *rq)
{
	uint32_t f = rq->op->flags;

	if ((f & DRNIC_WIRE_OPF_SEND) ? (rq->op->pos & DRNIC_WIRE_POS_FIRST) != 0 :
	    (f & DRNIC_WIRE_OPF_WRITE) && (f & DRNIC_WIRE_OPF_IMM)) {
		if (!resp_recv_get(eq))
			return RESP_RNR;
	} else if ((f & (DRNIC_WIRE_OPF_READ | DRNIC_WIRE_OPF_ATOMIC)) && !resp_rd_room(eq)) {
		return RESP_ERR_INVALID_REQ;
	}
	return RESP_CHK_LENGTH;
}

/* An ATOMIC WRITE names and carries exactly 8 bytes, at an 8-aligned
 * address (IBA 1.5); its key is checked as an RDMA WRITE's. */
static enum resp_check
resp_chk_atomic_write(const struct drnic_wire_pkt *pkt)
{
	if (pkt->reth.dmalen != sizeof(uint64_t) || pkt->payload_len != sizeof(uint64_t) ||
	    (pkt->reth.va & 7) != 0)
		return RESP_ERR_INVALID_REQ;
	return RESP_CHK_KEY;
}

/*
 * Every packet but a message's last (or only) carries exactly one MTU; a
 * SEND fits its receive WQE; a WRITE's packets add up to its DMA length; no
 * message is longer than 2^31 bytes (IBA 9.4.3: an invalid request, not a
 * packet count that wraps); an atomic's address is 8-byte aligned.
 */
static enum resp_check
resp_chk_length(const struct engine_qp *eq, const struct resp_req *rq)
{
	const struct drnic_wire_pkt *pkt = rq->pkt;
	uint32_t f = rq->op->flags, pos = rq->op->pos, len = pkt->payload_len;

	if (len > eq->path.mtu || ((pos == DRNIC_WIRE_POS_FIRST || pos == DRNIC_WIRE_POS_MIDDLE) &&
			      len != eq->path.mtu))
		return RESP_ERR_INVALID_REQ;
	if (unlikely(f & DRNIC_WIRE_OPF_ATOMIC_WRITE))
		return resp_chk_atomic_write(pkt);
	if (f & DRNIC_WIRE_OPF_SEND) {
		uint32_t off = (pos & DRNIC_WIRE_POS_FIRST) ? 0 : eq->resp.recv_off;

		if (off + len > resp_recv_wqe(eq)->length)
			return RESP_ERR_RECV_LEN;
	} else if (f & DRNIC_WIRE_OPF_WRITE) {
		uint64_t resid = eq->resp.wr_resid;

		if (pos & DRNIC_WIRE_POS_FIRST) {
			if (pkt->reth.dmalen > VERBS_MAX_MSG_SZ)
				return RESP_ERR_INVALID_REQ;
			resid = pkt->reth.dmalen;
		}
		if ((pos & DRNIC_WIRE_POS_LAST) ? len != resid : len > resid)
			return RESP_ERR_INVALID_REQ;
	} else if (f & DRNIC_WIRE_OPF_READ) {
		if (pkt->reth.dmalen > VERBS_MAX_MSG_SZ)
			return RESP_ERR_INVALID_REQ;
	} else if ((pkt->atomic.va & 7) != 0) {
		return RESP_ERR_INVALID_REQ;
	}
	return RESP_CHK_KEY;
}

/* The receive SGEs a SEND's @p len bytes at @p off land in: keys and bounds. */
static int
resp_recv_sge_check(const struct engine_qp *eq, const struct verbs_recv_wqe *w, uint32_t off,
		    uint32_t len)
{
	/* An SRQ's WQEs were posted with its PD's keys. */
	const struct drnic_pd *pd = resp_srq(eq) != NULL ? resp_srq(eq)->pd : eq->qp->pd;
	uint32_t i;
	uint8_t *va;

	for (i = 0; i < w->num_sge && len > 0; i++) {
		uint32_t sl = w->sge[i].length;

		if (off >= sl) {
			off -= sl;
			continue;
		}
		if (verbs_mr_check(eq->qp->dev, pd, w->sge[i].lkey, w->sge[i].addr, sl,
				   DRNIC_ACCESS_LOCAL_WRITE, &va) < 0)
			return -EPERM;
		len -= RTE_MIN(sl - off, len);
		off = 0;
	}
	return len == 0 ? 0 : -ERANGE;
}

/*
 * Memory the request names is registered now, with this QP's PD, covers
 * the range and allows the access (an MR's rkey, or a window's, bound now,
 * with its own bounds and rights: verbs_rkey_check()): else a remote
 * access error (a receive SGE's: a receive protection error). A WRITE's
 * continuation lands only while the key its FIRST named is still
 * registered (or its window still bound).
 */
static enum resp_check
resp_chk_key(const struct engine_qp *eq, struct resp_req *rq)
{
	const struct drnic_wire_pkt *pkt = rq->pkt;
	struct drnic_qp *qp = eq->qp;
	uint32_t f = rq->op->flags;

	/* The address the peer names, in the MR's iova space, is rq->va in
	 * memory (the same unless the MR has an iova of its own). */
	rq->va = (uint8_t *)(uintptr_t)((f & DRNIC_WIRE_OPF_ATOMIC) ? pkt->atomic.va :
					pkt->reth.va);
	if (f & DRNIC_WIRE_OPF_SEND) {
		uint32_t off = (rq->op->pos & DRNIC_WIRE_POS_FIRST) ? 0 : eq->resp.recv_off;

		if (pkt->payload_len > 0 &&
		    resp_recv_sge_check(eq, resp_recv_wqe(eq), off, pkt->payload_len) < 0)
			return RESP_ERR_RECV_PROT;
	} else if (f & DRNIC_WIRE_OPF_WRITE) {
		if (rq->op->pos & DRNIC_WIRE_POS_FIRST) {
			if (pkt->reth.dmalen > 0 &&
			    verbs_rkey_check(qp, resp_pd(eq), pkt->reth.rkey, pkt->reth.va, pkt->reth.dmalen,
					     DRNIC_ACCESS_REMOTE_WRITE, &rq->va) < 0)
				return RESP_ERR_REMOTE_ACCESS;
		} else if (pkt->payload_len > 0 && !verbs_mr_key_live(qp->dev, eq->resp.wr_rkey)) {
			return RESP_ERR_REMOTE_ACCESS;
		}
	} else if (f & DRNIC_WIRE_OPF_READ) {
		if (pkt->reth.dmalen > 0 &&
		    verbs_rkey_check(qp, resp_pd(eq), pkt->reth.rkey, pkt->reth.va, pkt->reth.dmalen,
				     DRNIC_ACCESS_REMOTE_READ, &rq->va) < 0)
			return RESP_ERR_REMOTE_ACCESS;
	} else if (verbs_rkey_check(qp, resp_pd(eq), pkt->atomic.rkey, pkt->atomic.va, 8,
				    DRNIC_ACCESS_REMOTE_ATOMIC, &rq->va) < 0) {
		return RESP_ERR_REMOTE_ACCESS;
	}
	return RESP_EXECUTE;
}

/* Execute a SEND packet (checked): into the receive WQE's SGEs. */
static enum resp_check
resp_exec_send(struct engine_qp *eq, const struct resp_req *rq)
{
	const struct drnic_wire_pkt *pkt = rq->pkt;
	const struct verbs_recv_wqe *w = resp_recv_wqe(eq);

	if (rq->op->pos & DRNIC_WIRE_POS_FIRST) {
		eq->resp.recv_taken = true;
		eq->resp.recv_off = 0;
	}
	if (pkt->payload_len > 0 &&
	    engine_sge_scatter(w->sge, w->num_sge, eq->resp.recv_off, rq->m, pkt->payload_off,
			       pkt->payload_len) < 0)
		return RESP_ERR_RECV_PROT;
	eq->resp.recv_off += pkt->payload_len;
	/* SEND with Invalidate: the window named by the IETH is invalidated
	 * before the receive completes (a key this QP cannot invalidate is an
	 * invalid request). */
	if ((rq->op->flags & DRNIC_WIRE_OPF_INV) &&
	    verbs_mw_invalidate(eq->qp, pkt->ieth_rkey, true) < 0)
		return RESP_ERR_INVALID_REQ;
	if (rq->op->pos & DRNIC_WIRE_POS_LAST) {
		resp_complete_recv(eq, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, eq->resp.recv_off, pkt,
				   (rq->op->flags & DRNIC_WIRE_OPF_IMM) != 0);
		eq->resp.state = RESP_IDLE;
	} else {
		eq->resp.state = RESP_IN_SEND;
	}
	return RESP_EXECUTE;
}

/*
 * Execute a WRITE packet (checked). The expected continuation whose ICRC
 * the parser deferred is copied and verified in one pass: its bytes land in
 * this WRITE's next range before the ICRC is known; a bad frame changes no
 * state (RESP_BAD_ICRC), and the retransmission writes that range again before
 * anything can complete.
 */
static enum resp_check
resp_exec_write(struct engine_qp *eq, const struct resp_req *rq)
{
	const struct drnic_wire_pkt *pkt = rq->pkt;
	void *dst;
	int rc = 0;

	if (rq->op->pos & DRNIC_WIRE_POS_FIRST) {
		eq->resp.wr_va = (uintptr_t)rq->va;
		eq->resp.wr_len = pkt->reth.dmalen;
		eq->resp.wr_resid = pkt->reth.dmalen;
		eq->resp.wr_rkey = pkt->reth.rkey;
	}
	dst = (void *)(uintptr_t)eq->resp.wr_va;
	if (pkt->icrc_deferred)
		rc = drnic_wire_copy_out_verify(rq->m, pkt, dst);
	else if (pkt->payload_len > 0)
		rc = drnic_wire_copy_out(rq->m, pkt->payload_off, pkt->payload_len, dst);
	if (rc == -EBADMSG)
		return RESP_BAD_ICRC;
	if (rc < 0)
		return RESP_ERR_INVALID_REQ;
	eq->resp.wr_va += pkt->payload_len;
	eq->resp.wr_resid -= pkt->payload_len;
	if (rq->op->pos & DRNIC_WIRE_POS_LAST) {
		if (rq->op->flags & DRNIC_WIRE_OPF_IMM) {
			eq->resp.recv_off = 0;
			resp_complete_recv(eq, DRNIC_WC_SUCCESS, DRNIC_WC_RECV_RDMA_WITH_IMM,
					   eq->resp.wr_len, pkt, true);
		}
		eq->resp.state = RESP_IDLE;
	} else {
		eq->resp.state = RESP_IN_WRITE;
	}
	return RESP_EXECUTE;
}

/*
 * Execute an ATOMIC WRITE (checked): its 8 bytes, as they came, stored in
 * one atomic access (against every other engine and the CPUs). Acknowledged
 * as a WRITE; a duplicate is acknowledged again, not stored again.
 */
static enum resp_check
resp_exec_atomic_write(const struct resp_req *rq)
{
	const struct drnic_wire_pkt *pkt = rq->pkt;
	uint64_t v;

	if (drnic_wire_copy_out(rq->m, pkt->payload_off, sizeof(v), &v) < 0)
		return RESP_ERR_INVALID_REQ;
	__atomic_store_n((uint64_t *)(void *)rq->va, v, __ATOMIC_SEQ_CST);
	return RESP_EXECUTE;
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

/* Execute a READ (checked): a resource, and its response queued. */
static enum resp_check
resp_exec_read(struct engine_qp *eq, const struct resp_req *rq)
{
	const struct drnic_wire_pkt *pkt = rq->pkt;
	struct resp_rd *r = resp_rd_new(eq);

	r->atomic = 0;
	r->psn = pkt->bth.psn;
	r->npkts = engine_npkts(pkt->reth.dmalen, eq->path.mtu);
	r->va = (uintptr_t)rq->va;
	r->len = pkt->reth.dmalen;
	r->rkey = pkt->reth.rkey;
	resp_replay_earn(eq, r->npkts);
	resp_tx_queue(eq, eq->resp.rd_tail - 1, 0, true);
	return RESP_EXECUTE;
}

/* Execute an atomic (checked) once; its result is kept for duplicates. */
static enum resp_check
resp_exec_atomic(struct engine_qp *eq, const struct resp_req *rq)
{
	const struct drnic_wire_pkt *pkt = rq->pkt;
	uint64_t *p = (uint64_t *)(void *)rq->va, orig;
	struct resp_rd *r;

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
	r->psn = pkt->bth.psn;
	r->npkts = 1;
	r->orig = orig;
	resp_replay_earn(eq, 1);
	resp_tx_queue(eq, eq->resp.rd_tail - 1, 0, true);
	return RESP_EXECUTE;
}

/*
 * Execute a checked request, then acknowledge it: the next PSN expected, a
 * message ends (MSN), an ACK owed when the requester asks for one (READ and
 * atomic responses are their acknowledgement).
 */
static enum resp_check
resp_execute(struct engine_qp *eq, const struct resp_req *rq)
{
	const struct drnic_wire_pkt *pkt = rq->pkt;
	uint32_t f = rq->op->flags, npsn = 1;
	enum resp_check s;

	if (f & DRNIC_WIRE_OPF_SEND) {
		s = resp_exec_send(eq, rq);
	} else if (f & DRNIC_WIRE_OPF_WRITE) {
		s = unlikely(f & DRNIC_WIRE_OPF_ATOMIC_WRITE) ? resp_exec_atomic_write(rq) :
								resp_exec_write(eq, rq);
	} else if (f & DRNIC_WIRE_OPF_READ) {
		npsn = engine_npkts(pkt->reth.dmalen, eq->path.mtu);
		s = resp_exec_read(eq, rq);
	} else {
		s = resp_exec_atomic(eq, rq);
	}
	if (s != RESP_EXECUTE)
		return s;
	eq->resp.epsn = drnic_psn_add(pkt->bth.psn, npsn);
	eq->resp.nak_seq_sent = false;
	if (rq->op->pos & DRNIC_WIRE_POS_LAST)
		eq->resp.msn = (eq->resp.msn + 1) & DRNIC_MSN_MASK;
	if (pkt->bth.ackreq && (f & (DRNIC_WIRE_OPF_SEND | DRNIC_WIRE_OPF_WRITE)) &&
	    !eq->uc)
		resp_owe_ack(eq, pkt->bth.psn);
	return RESP_EXECUTE;
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

/*
 * A request beyond a gap: one PSN-sequence NAK per gap and round. A PSN not
 * above the last out-of-sequence one means the requester went back and lost
 * the expected packet again; without a NAK of its own that round would wait
 * for the requester's timer.
 */
static void
resp_out_of_seq(struct engine_qp *eq, uint32_t psn)
{
	if (!eq->resp.nak_seq_sent || drnic_psn_le(psn, eq->resp.oos_psn)) {
		eq->resp.nak_seq_sent = true;
		resp_owe_nak(eq, drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_PSN_SEQ_ERR),
			     eq->resp.epsn);
	}
	eq->resp.oos_psn = psn;
}

/* No receive WQE: an RNR NAK. The rest of the message is out of sequence
 * now; the RNR NAK is the one NAK it gets. */
static void
resp_rnr(struct engine_qp *eq, uint32_t psn)
{
	engine_qp_drop(eq, DRNIC_ENGINE_DROP_RNR);
	resp_owe_nak(eq, drnic_aeth_syndrome(DRNIC_AETH_RNR_NAK, eq->path.min_rnr_timer),
		     psn);
	eq->resp.nak_seq_sent = true;
	eq->resp.oos_psn = psn;
}

/* The responder of a QP entering RTR: expecting @p epsn, full buckets. */
void
resp_setup(struct engine_qp *eq, uint32_t epsn)
{
	eq->resp.epsn = epsn;
	eq->resp.msn = 0;
	eq->resp.state = RESP_IDLE;
	eq->resp.replay_credit = ENGINE_REPLAY_CREDIT_INIT;
	eq->resp.replay_ns = engine_step_ns(eq->eng);
	eq->resp.nak_tokens = ENGINE_NAK_BURST;
	eq->resp.nak_refill_ns = eq->resp.replay_ns;
	eq->resp.nak_any = false;
}

/*
 * A request for this QP (from its peer: engine_pkt_from_peer()). The checks
 * run in order until one decides; then the outcome is acted on. A frame
 * whose ICRC the parser deferred is verified before any outcome but the
 * execution of the WRITE continuation it is (resp_exec_write() copies and
 * verifies in one pass): this is the one place that rule is kept.
 */
void
resp_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	struct resp_req rq = { m, pkt, drnic_wire_opcode_info(pkt->bth.opcode) };
	enum resp_check s = RESP_CHK_QP_STATE;

	while (s < RESP_EXECUTE) {
		switch (s) {
		case RESP_CHK_QP_STATE:
			s = resp_chk_qp_state(eq);
			break;
		case RESP_CHK_PSN:
			s = resp_chk_psn(eq, &rq);
			break;
		case RESP_CHK_OP_SEQ:
			s = resp_chk_op_seq(eq, &rq);
			break;
		case RESP_CHK_XRC:
			s = resp_chk_xrc(eq, &rq);
			break;
		case RESP_CHK_OP_VALID:
			s = resp_chk_op_valid(eq, &rq);
			break;
		case RESP_CHK_RESOURCE:
			s = resp_chk_resource(eq, &rq);
			break;
		case RESP_CHK_LENGTH:
			s = resp_chk_length(eq, &rq);
			break;
		default:
			s = resp_chk_key(eq, &rq);
			break;
		}
	}
	if (eq->uc)
		s = resp_uc_outcome(s);
	if (pkt->icrc_deferred && (s != RESP_EXECUTE || !(rq.op->flags & DRNIC_WIRE_OPF_WRITE)) &&
	    drnic_wire_icrc_check(m, pkt) != 0)
		s = RESP_BAD_ICRC;
	if (s == RESP_EXECUTE) {
		s = resp_execute(eq, &rq);
		if (eq->uc)
			s = resp_uc_outcome(s);
	}
	switch (s) {
	case RESP_EXECUTE:
		break;
	case RESP_BAD_ICRC:
		eq->eng->stats.wire_drops[DRNIC_WIRE_DROP_BAD_ICRC]++;
		break;
	case RESP_DROP:
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_QP_STATE);
		break;
	case RESP_DUPLICATE:
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_PSN_DUP);
		resp_duplicate(eq, pkt, rq.op);
		break;
	case RESP_OUT_OF_SEQ:
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_PSN_OOS);
		resp_out_of_seq(eq, pkt->bth.psn);
		break;
	case RESP_RNR:
		resp_rnr(eq, pkt->bth.psn);
		break;
	case RESP_UC_STALE:
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_PSN_DUP);
		break;
	case RESP_UC_DROP:
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_UC_MSG);
		eq->resp.uc_drop = true;
		resp_uc_abandon(eq);
		break;
	default:
		resp_fatal(eq, s, pkt->bth.psn, pkt);
		break;
	}
}

/* UD: has this datagram (its sender and PSN) been taken before? If not, it
 * is noted as taken. */
static bool
resp_ud_seen(struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	uint32_t ip = rte_hash_crc(pkt->ip.src, pkt->ip.version == 4 ? 4 : 16, 0);
	struct resp_ud_src *u;
	uint32_t d;

	if (eq->resp.ud_src == NULL)
		return false;
	u = &eq->resp.ud_src[(ip ^ pkt->deth.sqpn) & (ENGINE_UD_SRC - 1)];
	if (!u->used || u->ip != ip || u->sqpn != pkt->deth.sqpn) {
		*u = (struct resp_ud_src){ .ip = ip, .sqpn = pkt->deth.sqpn, .top = pkt->bth.psn,
					   .used = true, .seen = 1 };
		return false;
	}
	if (drnic_psn_gt(pkt->bth.psn, u->top)) {
		d = drnic_psn_sub(pkt->bth.psn, u->top);
		u->seen = d >= 64 ? 1 : (u->seen << d) | 1;
		u->top = pkt->bth.psn;
		return false;
	}
	d = drnic_psn_sub(u->top, pkt->bth.psn);
	if (d >= 64) {
		/* Far behind: a sender that started again. */
		u->top = pkt->bth.psn;
		u->seen = 1;
		return false;
	}
	if (u->seen & (1ull << d))
		return true;
	u->seen |= 1ull << d;
	return false;
}

/*
 * UD: a datagram for this QP (from anyone with the P_Key: engine_rx checked
 * it). No PSN, no sequence, no answer. Taken in RTR, RTS, SQD and SQE with
 * the QP's Q_Key, into the next receive WQE (none: lost and counted): the
 * 40-byte GRH area first (RoCEv2, as Linux rxe and ConnectX fill it: an
 * IPv4 header in its last 20 bytes, an IPv6 header in all 40), then the
 * payload. A WQE too short for both completes with LOC_LEN_ERR, one with a
 * bad key with LOC_PROT_ERR, and the QP goes to ERR (IBA 10.8.3.3). A copy
 * of a datagram already taken (the same sender and PSN: resp_ud_seen()) is
 * dropped: UD loses datagrams, it does not duplicate them.
 */
void
resp_ud_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	uint8_t grh[DRNIC_WIRE_GRH_LEN];
	const struct verbs_recv_wqe *w;
	uint32_t len = pkt->payload_len;

	if (!engine_pkt_verify(eq->eng, m, pkt))
		return;
	if (resp_chk_qp_state(eq) == RESP_DROP) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_QP_STATE);
		return;
	}
	if (pkt->deth.qkey != eq->path.qkey) {
		/* The port's counter first: whoever sees the QP's drop then
		 * sees the violation counted (a full barrier: the QP's count
		 * is a plain store). */
		atomic_fetch_add_explicit(&eq->qp->dev->qkey_viol, 1, memory_order_seq_cst);
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_BAD_QKEY);
		return;
	}
	if (len > eq->path.mtu) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_UD_LEN);
		return;
	}
	if (resp_ud_seen(eq, pkt)) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_PSN_DUP);
		return;
	}
	if (!resp_recv_get(eq)) {
		engine_qp_drop(eq, DRNIC_ENGINE_DROP_UD_NO_WQE);
		return;
	}
	w = resp_recv_wqe(eq);
	eq->resp.recv_off = 0;
	if (DRNIC_WIRE_GRH_LEN + len > w->length) {
		resp_fatal(eq, RESP_ERR_RECV_LEN, pkt->bth.psn, pkt);
		return;
	}
	if (resp_recv_sge_check(eq, w, 0, DRNIC_WIRE_GRH_LEN + len) < 0) {
		resp_fatal(eq, RESP_ERR_RECV_PROT, pkt->bth.psn, pkt);
		return;
	}
	memset(grh, 0, sizeof(grh));
	if (pkt->ip.version == 4)
		(void)drnic_wire_copy_out(m, pkt->l3_off, 20, grh + 20);
	else
		(void)drnic_wire_copy_out(m, pkt->l3_off, 40, grh);
	(void)engine_sge_copy(w->sge, w->num_sge, 0, NULL, 0, grh, sizeof(grh));
	if (len > 0 && engine_sge_scatter(w->sge, w->num_sge, DRNIC_WIRE_GRH_LEN, m,
					  pkt->payload_off, len) < 0) {
		resp_fatal(eq, RESP_ERR_RECV_PROT, pkt->bth.psn, pkt);
		return;
	}
	resp_complete_recv(eq, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, DRNIC_WIRE_GRH_LEN + len, pkt,
			   pkt->bth.opcode == DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE);
}

/* Send the owed ACK/NAK, if any. */
int
resp_send_ack(struct engine_qp *eq)
{
	struct drnic_wire_pkt pkt;

	if (!eq->resp.ack_pending || engine_port_room(eq->port) == 0)
		return 0;
	engine_pkt_init(eq, &pkt);
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
	struct drnic_wire_pkt pkt;
	struct drnic_wire_sge sg;
	uint8_t pos = 0;

	engine_pkt_init(eq, &pkt);
	pkt.bth.psn = drnic_psn_add(r->psn, t->next);
	pkt.aeth.syndrome = RESP_ACK_SYNDROME;
	pkt.aeth.msn = eq->resp.msn;
	if (r->atomic) {
		pkt.bth.opcode = DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE;
		pkt.atomic_orig = r->orig;
	} else {
		uint32_t off = t->next * eq->path.mtu;
		uint32_t plen = RTE_MIN(eq->path.mtu, r->len - off);

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

/* An XRC target entering ERR in the middle of a SEND: the WQE it took
 * completes flushed on its SRQ's CQ, if that SRQ is still there. */
static int
resp_xrc_flush(struct engine_qp *eq)
{
	struct drnic_srq *srq = eq->resp.xrc_srq;
	struct drnic_wc wc;

	/* Compared, not followed: a destroyed SRQ's memory is gone. */
	if (!eq->resp.recv_taken || srq == NULL ||
	    verbs_srq_lookup(eq->qp->dev, eq->resp.xrc_srqn) != srq)
		return 0;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = eq->resp.srq_wqe->wr_id;
	wc.status = DRNIC_WC_WR_FLUSH_ERR;
	wc.opcode = DRNIC_WC_RECV;
	wc.qp_num = eq->qp->qp_num;
	wc.src_qp = eq->path.dest_qp_num;
	eq->resp.recv_taken = false;
	(void)engine_push_cqe(eq, srq->cq, &wc, true);
	return 1;
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
		wc.src_qp = eq->path.dest_qp_num;
		eq->resp.rq_idx++;
		n++;
		verbs_wq_retire(&qp->rq, eq->resp.rq_idx);
		(void)engine_push_cqe(eq, qp->recv_cq, &wc, true);
	}
	if (n > 0)
		verbs_wq_retire(&qp->rq, eq->resp.rq_idx);
	if (eq->xrc)
		n += resp_xrc_flush(eq);
	if (qp->srq != NULL && !eq->resp.last_wqe_raised) {
		/* On an SRQ only the WQE the QP took completes (flushed); the
		 * rest stay for the other QPs. Then no WQE of the SRQ will be
		 * taken by this QP any more: QP_LAST_WQE_REACHED, once. */
		if (eq->resp.recv_taken) {
			memset(&wc, 0, sizeof(wc));
			wc.wr_id = eq->resp.srq_wqe->wr_id;
			wc.status = DRNIC_WC_WR_FLUSH_ERR;
			wc.opcode = DRNIC_WC_RECV;
			wc.qp_num = qp->qp_num;
			wc.src_qp = eq->path.dest_qp_num;
			n++;
			(void)engine_push_cqe(eq, qp->recv_cq, &wc, true);
		}
		eq->resp.last_wqe_raised = true;
		verbs_qp_event(qp, DRNIC_EVENT_QP_LAST_WQE_REACHED);
	}
	eq->resp.rtx_head = eq->resp.rtx_tail;
	eq->resp.rd_pending = 0;
	eq->resp.state = RESP_ERROR;
	eq->resp.recv_taken = false;
	return n;
}
