/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery: when to send again and how much may be in flight. The
 * retransmit timer (4.096 us * 2^timeout) and the early retransmit that
 * goes back after a few round trips of silence; the congestion window,
 * shrunk once per round of losses and grown by what is acknowledged; the
 * round-trip estimate (Jacobson, one AckReq packet timed at a time, none
 * across a go-back). State in eq->rec, written here and, for the retry
 * and RNR budgets, by the completer's timeout and RNR handling.
 */
#include "engine_priv.h"

/* Arm the early retransmit, when a round-trip estimate says when and it
 * comes at least half a probe interval before the retransmit timeout (after
 * a probe the estimate has doubled: a few probes per timeout at most). */
void
rec_probe_arm(struct engine_qp *eq, uint64_t now)
{
	uint64_t probe;
	const struct verbs_send_wqe *w;

	eq->rec.probe_deadline_ns = 0;
	if (eq->rec.srtt_ns == 0 || eq->rec.retry_deadline_ns == 0)
		return;
	w = engine_sq_wqe(eq, eq->comp.idx);
	if (eq->comp.idx != eq->req.idx && w->opcode == DRNIC_WR_RDMA_READ &&
	    w->state == WQE_SENT && engine_inflight(eq) == 0) {
		/* Only (the rest of) a READ's response is missing, everything
		 * after it is acknowledged: the responder is done with it. Ask
		 * again after a round trip: one request packet, so a spurious
		 * one costs little. */
		probe = RTE_MAX(eq->rec.srtt_ns, (uint64_t)ENGINE_PROBE_MIN_NS);
	} else {
		probe = RTE_MAX(eq->rec.srtt_ns + 4 * eq->rec.rttvar_ns, eq->rec.srtt_ns * 2);
		probe = RTE_MAX(probe, (uint64_t)ENGINE_PROBE_MIN_NS);
		/* Never sooner than an eighth of the QP's timeout: with
		 * thousands of QPs in flight one QP's samples trail the
		 * queue's growth, and a spurious go-back on each of them
		 * would feed it. */
		if (eq->qp->attr.timeout != 0)
			probe = RTE_MAX(probe, (4096ull << eq->qp->attr.timeout) / 8);
	}
	if (now + probe + probe / 2 <= eq->rec.retry_deadline_ns)
		eq->rec.probe_deadline_ns = now + probe;
}

/*
 * (Re)start the retransmit timer: 4.096 us * 2^timeout; timeout 0 = none.
 * With a round-trip estimate, the early retransmit deadline too, when it
 * comes well before the timeout.
 */
void
engine_retry_arm(struct engine_qp *eq)
{
	uint8_t t = eq->qp->attr.timeout;
	uint64_t now, to;

	if (t == 0) {
		eq->rec.retry_deadline_ns = 0;
		eq->rec.probe_deadline_ns = 0;
		return;
	}
	now = engine_now_ns(eq->eng);
	to = 4096ull << t;
	eq->rec.retry_deadline_ns = now + to;
	rec_probe_arm(eq, now);
}

/*
 * Loss seen: shrink the congestion window, once per round (a loss of a PSN
 * sent before the last shrink was answered by it). A timeout starts over
 * from ENGINE_MIN_CWND whatever the round.
 */
void
rec_loss(struct engine_qp *eq, bool timeout)
{
	uint32_t half = RTE_MAX(engine_inflight(eq) / 2, (uint32_t)ENGINE_MIN_CWND);

	if (timeout) {
		eq->rec.ssthresh = RTE_MAX(half, eq->rec.cwnd / 2);
		eq->rec.cwnd = ENGINE_MIN_CWND;
	} else if (eq->rec.in_recovery &&
		   (!eq->comp.any_acked || drnic_psn_lt(eq->comp.acked_psn, eq->rec.recover_psn))) {
		return;
	} else {
		eq->rec.ssthresh = RTE_MAX(RTE_MIN(half, eq->rec.cwnd / 2),
					   (uint32_t)ENGINE_MIN_CWND);
		eq->rec.cwnd = eq->rec.ssthresh;
	}
	eq->rec.cwnd_acc = 0;
	eq->rec.in_recovery = true;
	eq->rec.recover_psn = eq->req.npsn;
	eq->rec.rtt_pending = false;     /* Karn: no sample across a go-back */
}
