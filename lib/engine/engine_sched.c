/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scheduling: which QP runs when. Owns each port's active list
 * (engine_port::active, engine_qp::on_active, active_next), lingering
 * (engine_qp::linger, engine::nb_linger), the QPs' timers in the wheel
 * (engine_qp::tmr) and the engine's side of the doorbell (the doorbell ring
 * and the send queue's VERBS_DB_* flag).
 *
 * A QP gets on the active list by a doorbell (a post that found it idle),
 * its timer, or its own machines (engine_qp_activate()); each step gives
 * every active QP of a port one turn (engine_port_step()), after which a
 * QP still busy goes to the tail, one that just worked may linger, and an
 * idle one leaves the list, closing the race with a concurrent post.
 */
#include "engine_priv.h"

/* ------------------------------------------------------------------------ */
/* QPs: activation, errors, completions                                     */
/* ------------------------------------------------------------------------ */

/* Put a QP on the active list (engine thread). */
void
engine_qp_activate(struct engine_qp *eq)
{
	if (eq->on_active)
		return;
	eq->on_active = true;
	atomic_store_explicit(&eq->qp->sq.db, VERBS_DB_QUEUED, memory_order_relaxed);
	TAILQ_INSERT_TAIL(&eq->port->active, eq, active_next);
}

/* An idle QP on the active list: may it stay (RTS, within the limits)? */
static inline bool
engine_qp_linger(struct engine_qp *eq)
{
	RTE_BUILD_BUG_ON(ENGINE_LINGER_STEPS >= UINT16_MAX);   /* eq->linger's width */
	if (verbs_qp_state(eq->qp) != DRNIC_QPS_RTS)
		return false;
	if (eq->linger == 0) {
		if (eq->eng->nb_linger >= ENGINE_LINGER_MAX)
			return false;
		eq->eng->nb_linger++;
	} else if (eq->linger >= ENGINE_LINGER_STEPS) {
		return false;
	}
	eq->linger++;
	return true;
}

/*
 * A lingering QP with nothing to do, known without its turn: set up and
 * in RTS (drained-notice flag clear), no response, replay or ACK owed, no
 * deadline of its own, and its idle requester sees no new WQE. Its turn
 * would change nothing (engine_qp_step() then looks at all of that
 * again); the WQE it would take next is fetched with the index, as the
 * idle requester's turn does.
 */
static inline bool
engine_qp_quiet(const struct engine_qp *eq)
{
	if (eq->linger == 0 || !eq->req_init || !eq->resp_init || eq->req.state != REQ_IDLE ||
	    eq->resp.ack_pending || eq->resp.rtx_head != eq->resp.rtx_tail || eq->sqd_notified ||
	    (eq->rec.retry_deadline_ns | eq->rec.probe_deadline_ns) != 0 ||
	    verbs_qp_state(eq->qp) != DRNIC_QPS_RTS)
		return false;
	engine_sq_prefetch_head(eq, eq->req.idx);
	return atomic_load_explicit(&eq->qp->sq.prod, memory_order_acquire) == eq->req.idx;
}

/* The QP goes to ERR (engine-detected error); flushing follows. */
void
engine_qp_error(struct engine_qp *eq)
{
	(void)verbs_qp_set_error(eq->qp);
	engine_qp_activate(eq);
}

/* A CQ overflowed: every QP of this engine using it goes to ERR. */
static void
engine_cq_overflow(struct engine *eng, struct drnic_cq *cq)
{
	struct engine_qp *eq;

	TAILQ_FOREACH(eq, &eng->all, all_next) {
		if (eq->qp->send_cq != cq && eq->qp->recv_cq != cq)
			continue;
		if (verbs_qp_set_error(eq->qp)) {
			verbs_qp_event(eq->qp, DRNIC_EVENT_QP_FATAL);
			ENGINE_QP_LOG(WARNING, eq, "CQ overflow: QP to ERR");
		}
		engine_qp_activate(eq);
	}
}

/* The event checks the step left to its end (cq_push_quiet()): before the
 * engine answers a control call, ends a step, or could sleep. */
void
engine_cq_notify(struct engine *eng)
{
	unsigned int i;

	for (i = 0; i < eng->nb_notify; i++)
		cq_push_notify(eng->notify[i].cq, eng->notify[i].fire);
	eng->nb_notify = 0;
}

/* @p cq's event check at the end of the step (fire: @p fire). */
static inline void
engine_cq_notify_later(struct engine *eng, struct drnic_cq *cq, bool fire)
{
	unsigned int i;

	for (i = 0; i < eng->nb_notify; i++) {
		if (eng->notify[i].cq == cq) {
			eng->notify[i].fire |= fire;
			return;
		}
	}
	if (unlikely(eng->nb_notify == ENGINE_MAX_NOTIFY))
		engine_cq_notify(eng);
	eng->notify[eng->nb_notify].cq = cq;
	eng->notify[eng->nb_notify].fire = fire;
	eng->nb_notify++;
}

int
engine_push_cqe(struct engine_qp *eq, struct drnic_cq *cq, const struct drnic_wc *wc,
		bool solicited)
{
	int rc = cq_push_quiet(cq, wc);

	if (likely(rc == 0)) {
		engine_cq_notify_later(eq->eng, cq, solicited || wc->status != DRNIC_WC_SUCCESS);
		eq->eng->stats.cqes++;
		return 0;
	}
	if (rc == -EOVERFLOW)
		engine_cq_overflow(eq->eng, cq);
	return rc;
}

/* Timer wheel callback: the QP's deadline came; its step looks at it. */
static void
engine_qp_timer_fire(struct engine_timer *t, void *arg)
{
	struct engine_qp *eq = container_of(t, struct engine_qp, tmr);

	RTE_SET_USED(arg);
	engine_qp_activate(eq);
}

/* The QPs whose deadline came go on the active list; returns how many. */
unsigned int
engine_timers_run(struct engine *eng)
{
	unsigned int fired = timer_wheel_run(&eng->wheel, engine_step_ns(eng),
					     engine_qp_timer_fire, eng);

	eng->stats.timers += fired;
	return fired;
}

static int
engine_qp_step(struct engine_qp *eq, uint16_t room)
{
	enum drnic_qp_state st;
	int work = 0, budget = RTE_MIN((int)room, ENGINE_QP_BUDGET);

	engine_qp_sync(eq);
	st = verbs_qp_state(eq->qp);
	if (st == DRNIC_QPS_ERR) {
		/* A request the responder refused moved the QP here: the
		 * responses owed for the requests before it go first, then
		 * the NAK (resp_step sends both, in that order). */
		if (eq->resp.drain_rtx && eq->resp.rtx_head != eq->resp.rtx_tail)
			return resp_step(eq, budget);
		eq->resp.drain_rtx = false;
		work += resp_send_ack(eq);  /* the NAK that explains the error */
		work += comp_flush(eq);
		work += resp_flush(eq);
		return work;
	}
	if (eq->resp_init) {
		int n = resp_step(eq, budget);

		work += n;
		budget -= n;
	}
	if (st != DRNIC_QPS_SQD) {
		eq->sqd_notified = false;
	} else if (!eq->sqd_notified && eq->comp.idx == eq->req.idx && eq->req.off == 0) {
		/* Nothing in flight any more: the send queue is drained. */
		eq->sqd_notified = true;
		if (eq->path.en_sqd_async_notify)
			verbs_qp_event(eq->qp, DRNIC_EVENT_SQ_DRAINED);
	}
	if (eq->req_init && (st == DRNIC_QPS_RTS || st == DRNIC_QPS_SQD)) {
		if ((eq->rec.retry_deadline_ns | eq->rec.probe_deadline_ns) != 0 &&
		    !eq->eng->rx_backlog) {
			uint64_t now = engine_step_ns(eq->eng);

			if (eq->rec.retry_deadline_ns != 0 && now >= eq->rec.retry_deadline_ns) {
				rec_timeout(eq);
				work++;
			} else if (eq->rec.probe_deadline_ns != 0 &&
				   now >= eq->rec.probe_deadline_ns) {
				rec_probe(eq);
				work++;
			}
		}
		if (budget > 0)
			work += req_step(eq, budget);
	}
	return work;
}

/* ------------------------------------------------------------------------ */
/* Doorbells and the active list                                            */
/* ------------------------------------------------------------------------ */

/* Take the doorbells queued in @p r onto the active list (at most @p max,
 * rounded up to a burst). */
static unsigned int
engine_ring_doorbells(struct rte_ring *r, unsigned int max)
{
	struct drnic_qp *qps[ENGINE_BURST];
	unsigned int n, i, total = 0;

	if (rte_ring_empty(r))   /* most steps: a few loads, not a dequeue */
		return 0;
	while (total < max &&
	       (n = rte_ring_sc_dequeue_burst(r, (void **)qps, ENGINE_BURST, NULL)) > 0) {
		for (i = 0; i < n; i++) {
			struct engine_qp *eq = qps[i]->eng_priv;

			if (eq != NULL)
				engine_qp_activate(eq);
		}
		total += n;
	}
	return total;
}

/* Take every queued doorbell, of the engine's ring and of the attached
 * processes' rings, onto the active list (at most @p max from each,
 * rounded up to a burst). */
unsigned int
engine_doorbells(struct engine *eng, unsigned int max)
{
	unsigned int i, total = engine_ring_doorbells(eng->doorbell, max);

	for (i = 0; i < eng->nb_db_rings; i++)
		total += engine_ring_doorbells(eng->db_rings[i], max);
	eng->stats.doorbells += total;
	return total;
}

/* A doorbell waits in one of the engine's rings. */
bool
engine_doorbells_waiting(const struct engine *eng)
{
	unsigned int i;

	if (rte_ring_count(eng->doorbell) > 0)
		return true;
	for (i = 0; i < eng->nb_db_rings; i++)
		if (rte_ring_count(eng->db_rings[i]) > 0)
			return true;
	return false;
}

/* Fetch the engine state of @p eq a turn reads (the machines read most
 * of it, not the cold part at its end). */
static inline void
engine_qp_prefetch_eq(const struct engine_qp *eq)
{
	const uint8_t *e = (const uint8_t *)eq;
	unsigned int i;

	for (i = 0; i < ENGINE_QP_HOT_BYTES; i += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(e + i);
}

/* Fetch what a turn reads of @p eq's verbs QP: its state and the send
 * queue's producer and consumer lines (the ring's address is the engine
 * state's own copy). */
static inline void
engine_qp_prefetch_qp(const struct engine_qp *eq)
{
	const struct drnic_qp *qp = eq->qp;

	rte_prefetch0(&qp->state);
	rte_prefetch0(&qp->sq.prod);
	rte_prefetch0(&qp->sq.cons);
}

/*
 * QPs @p idle[0..n) of port @p p left the active list idle: clear each one's
 * doorbell flag, then look at its queues again, since a poster may have
 * posted after the QP's turn and seen the flag still set (its doorbell
 * then never came). A poster that sees the flag clear rings the doorbell;
 * one fence between the stores and the second looks closes that race for
 * every QP of the batch (as a fence each would), and their flags' lines,
 * which the posters' cores hold, are fetched together instead of one
 * after another. A QP put back on the list meanwhile (engine_qp_activate())
 * is left as it is.
 */
static void
engine_qps_idle(struct engine *eng, struct engine_port *p, struct engine_qp **idle,
		unsigned int n)
{
	unsigned int i;

	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		if (!idle[i]->on_active)
			atomic_store_explicit(&idle[i]->qp->sq.db, VERBS_DB_IDLE,
					      memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	for (i = 0; i < n; i++) {
		struct engine_qp *eq = idle[i];
		uint64_t d;

		if (eq->on_active)
			continue;
		if (engine_qp_busy(eq) &&
		    atomic_exchange_explicit(&eq->qp->sq.db, VERBS_DB_QUEUED, memory_order_seq_cst) ==
		    VERBS_DB_IDLE) {
			eq->on_active = true;
			TAILQ_INSERT_TAIL(&p->active, eq, active_next);
			continue;
		}
		/* Waits for a deadline: sleep in the wheel. */
		d = engine_qp_deadline(eq);
		if (d != 0)
			timer_arm(&eng->wheel, &eq->tmr, d);
	}
}

/*
 * One turn of each active QP of port @p p (see engine_run_once()).
 *
 * With thousands of active QPs each turn starts on cold lines, the WQE
 * that the application wrote on its core among them, so the walk fetches
 * ahead in stages: the engine state of the QP three ahead (which names its
 * verbs QP, the next QP and its send ring), the verbs QP of the one two
 * ahead (its state and the queue's indices), the next WQE of the next
 * one.
 */
int
engine_port_step(struct engine *eng, struct engine_port *p)
{
	struct engine_qp *eq, *tmp, *last = TAILQ_LAST(&p->active, engine_qp_list);
	struct engine_qp *idle[ENGINE_BURST];
	unsigned int nb_idle = 0;
	int work = 0;

	eq = TAILQ_FIRST(&p->active);
	if (eq != NULL) {
		engine_qp_prefetch_qp(eq);
		tmp = TAILQ_NEXT(eq, active_next);
		if (tmp != NULL) {
			engine_qp_prefetch_eq(tmp);
			engine_qp_prefetch_qp(tmp);
		}
	}
	for (; eq != NULL; eq = tmp) {
		bool end = eq == last;
		uint16_t room = engine_port_room(p);
		int step;

		if (room == 0)
			break;
		tmp = TAILQ_NEXT(eq, active_next);
		if (tmp != NULL && !end) {
			struct engine_qp *after = TAILQ_NEXT(tmp, active_next);

			engine_sq_prefetch_head(tmp, tmp->req.idx);
			if (after != NULL) {
				struct engine_qp *third = TAILQ_NEXT(after, active_next);

				engine_qp_prefetch_qp(after);
				if (third != NULL)
					engine_qp_prefetch_eq(third);
			}
		}
		if (!engine_qp_quiet(eq)) {
			step = engine_qp_step(eq, room);
			if (step > 0) {
				work += step;
				engine_qp_unlinger(eq);
			}
			if (engine_qp_busy(eq)) {
				if (end)
					break;
				TAILQ_REMOVE(&p->active, eq, active_next);
				TAILQ_INSERT_TAIL(&p->active, eq, active_next);
				continue;
			}
		}
		if (engine_qp_linger(eq)) {
			if (end)
				break;
			continue;
		}
		/* Idle: leave the list; the flag is cleared and the queue
		 * looked at again for a batch at once (engine_qps_idle()). */
		engine_qp_unlinger(eq);
		TAILQ_REMOVE(&p->active, eq, active_next);
		eq->on_active = false;
		idle[nb_idle++] = eq;
		if (nb_idle == RTE_DIM(idle)) {
			engine_qps_idle(eng, p, idle, nb_idle);
			nb_idle = 0;
		}
		if (end)
			break;
	}
	engine_qps_idle(eng, p, idle, nb_idle);
	return work;
}
