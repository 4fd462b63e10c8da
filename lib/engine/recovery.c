/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery: when to send again and how much may be in flight. The
 * retransmit timer (4.096 us * 2^timeout) and the early retransmit that
 * goes back after a few round trips of silence; the congestion window,
 * shrunk once per round of losses and grown by what is acknowledged; the
 * round-trip estimate (Jacobson, one AckReq packet timed at a time, none
 * across a go-back); the retry and RNR budgets. State in eq->rec, written
 * here and by the inline helpers in engine_priv.h (rec_grow(),
 * rec_progress(), ...), which the completer and requester call. When the
 * timer or a probe fires, recovery decides and the completer acts:
 * comp_go_back() or comp_fail_oldest().
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
		if (eq->path.timeout != 0)
			probe = RTE_MAX(probe, (4096ull << eq->path.timeout) / 8);
	}
	if (now + probe + probe / 2 <= eq->rec.retry_deadline_ns)
		eq->rec.probe_deadline_ns = now + probe;
}

/*
 * (Re)start the retransmit timer: 4.096 us * 2^timeout; timeout 0 = none.
 * With a round-trip estimate, the early retransmit deadline too, when it
 * comes well before the timeout. The requester passes the time it took
 * for its RTT sample when it has just taken one (req_sent_ns()); 0 reads
 * the clock.
 */
void
rec_timer_arm_at(struct engine_qp *eq, uint64_t now)
{
	uint8_t t = eq->path.timeout;
	uint64_t to;

	if (t == 0) {
		eq->rec.retry_deadline_ns = 0;
		eq->rec.probe_deadline_ns = 0;
		return;
	}
	if (now == 0)
		now = engine_step_ns(eq->eng);
	to = 4096ull << t;
	eq->rec.retry_deadline_ns = now + to;
	rec_probe_arm(eq, now);
}

void
rec_timer_arm(struct engine_qp *eq)
{
	rec_timer_arm_at(eq, 0);
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

/* A QP starting to send: full budgets and window, no timer. */
void
rec_setup(struct engine_qp *eq)
{
	eq->rec.rnr_retry_left = eq->path.rnr_retry;
	eq->rec.retry_left = eq->path.retry_cnt;
	eq->rec.retry_deadline_ns = 0;
	eq->rec.probe_deadline_ns = 0;
	eq->rec.cwnd = ENGINE_MAX_INFLIGHT_PSN;
	eq->rec.ssthresh = ENGINE_MAX_INFLIGHT_PSN;
}

/*
 * A PSN-sequence NAK for @p psn: false when the same NAK came within half
 * a round trip of the go-back it caused (it answers packets sent before
 * the go-back, reordered or duplicated: going back again would only resend
 * what is on its way); else true, the go-back is recorded and counted as a
 * loss.
 */
bool
rec_nak_fresh(struct engine_qp *eq, uint32_t psn)
{
	uint64_t now = engine_step_ns(eq->eng);

	if (psn == eq->rec.nak_psn && now - eq->rec.nak_ns < eq->rec.srtt_ns / 2)
		return false;
	eq->rec.nak_psn = psn;
	eq->rec.nak_ns = now;
	rec_loss(eq, false);
	return true;
}

/* The retransmit timer expired: go back to the oldest unretired WQE, or
 * fail it with RETRY_EXC_ERR once retry_cnt retries are used. */
void
rec_timeout(struct engine_qp *eq)
{
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
		eq->rec.retry_deadline_ns = 0;
		eq->rec.probe_deadline_ns = 0;
		ENGINE_QP_LOG(DEBUG, eq, "retries exhausted at PSN %u",
			      engine_sq_wqe(eq, eq->comp.idx)->first_psn);
		comp_fail_oldest(eq, DRNIC_WC_RETRY_EXC_ERR);
		return;
	}
	eq->rec.retry_left--;
	rec_loss(eq, true);
	comp_go_back(eq);
	rec_timer_arm(eq);
}

/*
 * Early retransmit: nothing heard for several round trips, well inside the
 * QP's timeout. Go back once, as a timeout would, without using up
 * retry_cnt; the retransmit timer keeps running, so a silent peer still
 * gets exactly retry_cnt timeouts. The estimate doubles (backs off) so an
 * engine short of CPU does not probe every round trip.
 */
void
rec_probe(struct engine_qp *eq)
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
	rec_probe_arm(eq, engine_step_ns(eq->eng));
}
