/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/engine/engine_sched.c, driven step by step with the
 * machines stubbed (a requester that sends one packet per posted WQE) and
 * the fake clock: the idle -> busy doorbell race with a post landing at
 * each point of the engine's leaving (before its VERBS_DB_IDLE store,
 * between the store and the re-check, after), lingering QPs and their
 * limits, one clock read a step (engine_step_ns()), timers, doorbells of
 * deleted QPs, round robin and a full port, CQ overflow.
 *
 * The race is interleaved deterministically, without threads: the two
 * atomics of engine_port_step()'s leaving are wrapped (below) so that the
 * test's "poster" runs right before the store of VERBS_DB_IDLE or right
 * after the fence that follows it.
 */
#include <CUnit/Basic.h>
#include <stdlib.h>

#include "lib/engine/engine_priv.h"
#include "lib/engine/timer.c"

/* The poster's hooks: before the engine publishes VERBS_DB_IDLE, and
 * between its fence and its re-check. */
static void (*ut_before_idle)(void);
static void (*ut_after_fence)(void);
static struct drnic_qp *ut_hooked;   /* the QP whose leaving is hooked */

/* engine_sched.c's stores of a doorbell flag and its fences, with the
 * poster's hooks around them. */
static inline void
ut_db_store(atomic_uint *obj, unsigned int val, memory_order mo)
{
	void (*f)(void) = ut_before_idle;

	if (ut_hooked != NULL && obj == &ut_hooked->sq.db && val == VERBS_DB_IDLE && f != NULL) {
		ut_before_idle = NULL;
		f();
	}
	atomic_store_explicit(obj, val, mo);
}

static inline void
ut_fence(memory_order mo)
{
	void (*f)(void) = ut_after_fence;

	atomic_thread_fence(mo);
	if (f != NULL) {
		ut_after_fence = NULL;
		f();
	}
}

#undef atomic_store_explicit
#define atomic_store_explicit(obj, val, mo) ut_db_store((obj), (val), (mo))
#undef atomic_thread_fence
#define atomic_thread_fence(mo) ut_fence(mo)

#include "lib/engine/engine_sched.c"

#include "test/unit/lib/engine/ut_engine_clock.h"
#include "ut_common.h"


/* ---- the machines, stubbed ------------------------------------------- */

#define UT_NQP 40

static unsigned int ut_sent[UT_NQP];      /* packets each QP's requester sent */
static unsigned int ut_order[64];         /* QP index of each req_step call */
static unsigned int ut_norder;
static unsigned int ut_timeouts, ut_events, ut_cqe_rc_overflow;
/* Called at the requester's turn of each QP (its index), when set. */
static void (*ut_on_turn)(unsigned int i);
static struct engine_qp ut_eq[UT_NQP];
static struct drnic_qp ut_qp[UT_NQP];

/* The requester: one packet per WQE posted, within the budget. */
int
req_step(struct engine_qp *eq, int budget)
{
	uint32_t prod = atomic_load(&eq->qp->sq.prod);
	unsigned int i = (unsigned int)(eq - ut_eq);
	int n = 0;

	if (ut_norder < RTE_DIM(ut_order))
		ut_order[ut_norder++] = i;
	if (ut_on_turn != NULL)
		ut_on_turn(i);
	while (eq->req.idx != prod && n < budget) {
		eq->req.idx++;
		n++;
	}
	ut_sent[i] += (unsigned int)n;
	return n;
}

int
resp_step(struct engine_qp *eq, int budget)
{
	RTE_SET_USED(eq);
	RTE_SET_USED(budget);
	return 0;
}

int
resp_send_ack(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	return 0;
}

int
comp_flush(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	return 0;
}

/* The responder's flush: on an SRQ it raises QP_LAST_WQE_REACHED once, as
 * responder.c's does. */
static unsigned int ut_resp_flushes;

int
resp_flush(struct engine_qp *eq)
{
	ut_resp_flushes++;
	if (eq->qp->srq != NULL)
		eq->resp.last_wqe_raised = true;
	return 0;
}

void
rec_timeout(struct engine_qp *eq)
{
	ut_timeouts++;
	eq->rec.retry_deadline_ns = 0;
}

void
rec_probe(struct engine_qp *eq)
{
	eq->rec.probe_deadline_ns = 0;
}

void
resp_setup(struct engine_qp *eq, uint32_t epsn)
{
	RTE_SET_USED(eq);
	RTE_SET_USED(epsn);
	CU_FAIL("the QPs are set up already");
}

void
comp_setup(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	CU_FAIL("the QPs are set up already");
}

void
rec_setup(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	CU_FAIL("the QPs are set up already");
}

void
engine_qp_build_template(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	CU_FAIL("the QPs are set up already");
}

void
verbs_qp_event(struct drnic_qp *qp, enum drnic_event_type type)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(type);
	ut_events++;
}

bool
verbs_qp_set_error(struct drnic_qp *qp)
{
	return atomic_exchange(&qp->state, DRNIC_QPS_ERR) != DRNIC_QPS_ERR;
}

int
cq_push_quiet(struct drnic_cq *cq, const struct drnic_wc *wc)
{
	RTE_SET_USED(cq);
	RTE_SET_USED(wc);
	return ut_cqe_rc_overflow ? -EOVERFLOW : 0;
}

void
cq_push_notify(struct drnic_cq *cq, bool solicited_or_error)
{
	RTE_SET_USED(cq);
	RTE_SET_USED(solicited_or_error);
}

/* ---- the engine and its QPs ------------------------------------------ */

static struct engine ut_eng;
static struct drnic_device ut_dev;
static struct rte_ring *ut_ring;
static uint8_t ut_sq_buf[UT_NQP][64];

static struct engine_port *
ut_reset(void)
{
	struct engine_port *p = &ut_eng.port[0];
	void *db;
	unsigned int i;

	memset(&ut_eng, 0, sizeof(ut_eng));
	ut_eng.clock.now_ns = ut_clock;
	ut_now = 5000000;
	timer_wheel_init(&ut_eng.wheel, ut_now);
	TAILQ_INIT(&ut_eng.all);
	TAILQ_INIT(&p->active);
	p->dev = &ut_dev;
	ut_eng.nb_ports = 1;
	while (rte_ring_sc_dequeue(ut_ring, &db) == 0)
		;
	ut_eng.doorbell = ut_ring;
	memset(&ut_dev, 0, sizeof(ut_dev));
	ut_dev.eng[0].doorbell = ut_ring;
	for (i = 0; i < UT_NQP; i++) {
		struct drnic_qp *qp = &ut_qp[i];
		struct engine_qp *eq = &ut_eq[i];

		memset(qp, 0, sizeof(*qp));
		memset(eq, 0, sizeof(*eq));
		qp->dev = &ut_dev;
		qp->qp_num = 100 + i;
		qp->sq.size = 1u << 16;
		qp->sq.mask = qp->sq.size - 1;
		qp->sq.buf = ut_sq_buf[i];      /* never read by the stubs */
		atomic_store(&qp->state, DRNIC_QPS_RTS);
		qp->eng_priv = eq;
		engine_qp_bind(eq, qp);
		eq->eng = &ut_eng;
		eq->port = p;
		eq->req_init = true;
		eq->resp_init = true;
		eq->req.state = REQ_IDLE;
		TAILQ_INSERT_TAIL(&ut_eng.all, eq, all_next);
		ut_eng.nb_qp++;
		ut_sent[i] = 0;
	}
	ut_norder = 0;
	ut_resp_flushes = 0;
	ut_timeouts = ut_events = 0;
	ut_cqe_rc_overflow = 0;
	ut_before_idle = ut_after_fence = NULL;
	ut_on_turn = NULL;
	ut_hooked = NULL;
	return p;
}

/* The application posts one WQE on QP @p i and rings (post_send). */
static void
ut_post(unsigned int i)
{
	atomic_fetch_add(&ut_qp[i].sq.prod, 1);
	verbs_qp_doorbell(&ut_qp[i]);
}

/* Times QP @p i is on port @p p's active list (walked both ways). */
static unsigned int
ut_on_list(struct engine_port *p, unsigned int i)
{
	struct engine_qp *eq;
	unsigned int n = 0, back = 0;

	TAILQ_FOREACH(eq, &p->active, active_next)
		n += eq == &ut_eq[i];
	TAILQ_FOREACH_REVERSE(eq, &p->active, engine_qp_list, active_next)
		back += eq == &ut_eq[i];
	CU_ASSERT_EQUAL(n, back);
	return n;
}

/* One engine step as engine_run_once() makes it, without the link. */
static int
ut_step(struct engine_port *p)
{
	int work;

	engine_step_begin(&ut_eng);
	work = (int)engine_doorbells(&ut_eng, ENGINE_BURST * 4);
	if (ut_eng.wheel.armed > 0)
		work += (int)engine_timers_run(&ut_eng);
	work += engine_port_step(&ut_eng, p);
	engine_step_end(&ut_eng);
	return work;
}

/* Steps until QP @p i's requester has sent everything posted (at most
 * @p max steps); the steps it took, or max + 1 when it never did. */
static unsigned int
ut_steps_until_sent(struct engine_port *p, unsigned int i, unsigned int max)
{
	unsigned int s;

	for (s = 1; s <= max; s++) {
		ut_step(p);
		if (ut_eq[i].req.idx == atomic_load(&ut_qp[i].sq.prod))
			return s;
	}
	return max + 1;
}

/* ---- the doorbell race ------------------------------------------------ */

static void
ut_post_qp0(void)
{
	ut_post(0);
}

/* Make QP 0 idle on the active list, with no room to linger (other QPs
 * hold every lingering place), so its next step takes it off the list. */
static struct engine_port *
ut_race_setup(void)
{
	struct engine_port *p = ut_reset();

	ut_post(0);
	CU_ASSERT_EQUAL(ut_step(p), 2);            /* the doorbell, the packet */
	CU_ASSERT_EQUAL(ut_sent[0], 1);
	ut_eng.nb_linger = ENGINE_LINGER_MAX;      /* as if eight others lingered */
	ut_eq[0].linger = 0;
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 1);
	ut_hooked = &ut_qp[0];
	return p;
}

/* The post lands after the engine found the QP idle, before it stores
 * VERBS_DB_IDLE: the poster saw QUEUED and rang no doorbell, so only the
 * engine's re-check can find it. It must, and keep the QP on the list. */
static void
test_race_post_before_idle_store(void)
{
	struct engine_port *p = ut_race_setup();

	ut_before_idle = ut_post_qp0;
	ut_step(p);
	CU_ASSERT_PTR_NULL(ut_before_idle);               /* the hook ran */
	CU_ASSERT_EQUAL(rte_ring_count(ut_ring), 0);      /* no doorbell rung */
	CU_ASSERT_TRUE(ut_eq[0].on_active);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 1);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp[0].sq.db), VERBS_DB_QUEUED);
	/* Not lost: the next step sends it. */
	CU_ASSERT_EQUAL(ut_steps_until_sent(p, 0, 3), 1);
	CU_ASSERT_EQUAL(ut_sent[0], 2);
}

/* The post lands between the engine's store (and fence) and its re-check:
 * the poster saw IDLE and rang. The engine sees the post too and must not
 * take the QP twice; either way it is stepped again, once. */
static void
test_race_post_after_idle_store(void)
{
	struct engine_port *p = ut_race_setup();

	ut_after_fence = ut_post_qp0;
	ut_step(p);
	CU_ASSERT_PTR_NULL(ut_after_fence);
	CU_ASSERT_EQUAL(rte_ring_count(ut_ring), 1);      /* the poster rang */
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 0);             /* the doorbell has it */
	CU_ASSERT_FALSE(ut_eq[0].on_active);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp[0].sq.db), VERBS_DB_QUEUED);
	CU_ASSERT_EQUAL(ut_steps_until_sent(p, 0, 3), 1);
	CU_ASSERT_EQUAL(ut_eng.stats.doorbells, 2);
	CU_ASSERT_EQUAL(ut_sent[0], 2);
}

/* The post lands after the engine left the QP for good: the flag says
 * IDLE, the poster rings, the doorbell puts the QP back. */
static void
test_race_post_after_leaving(void)
{
	struct engine_port *p = ut_race_setup();

	ut_step(p);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 0);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp[0].sq.db), VERBS_DB_IDLE);
	ut_post(0);
	CU_ASSERT_EQUAL(rte_ring_count(ut_ring), 1);
	CU_ASSERT_EQUAL(ut_steps_until_sent(p, 0, 3), 1);
	CU_ASSERT_EQUAL(ut_eng.stats.doorbells, 2);
}

/* A QP on an SRQ moved to ERR while the engine leaves it idle: the
 * modify's doorbell saw the flag QUEUED and rang nothing. The re-check
 * must keep it (its flush, which raises QP_LAST_WQE_REACHED, is owed), and
 * the next step flushes it; then it may leave. */
static void
ut_to_err_qp0(void)
{
	atomic_store(&ut_qp[0].state, DRNIC_QPS_ERR);
	verbs_qp_doorbell(&ut_qp[0]);
}

static void
test_race_srq_qp_to_err(void)
{
	static struct drnic_srq srq;
	struct engine_port *p = ut_race_setup();

	ut_qp[0].srq = &srq;
	ut_eq[0].comp.idx = ut_eq[0].req.idx;             /* its WQE completed */
	ut_before_idle = ut_to_err_qp0;
	ut_step(p);
	CU_ASSERT_PTR_NULL(ut_before_idle);               /* the hook ran */
	CU_ASSERT_EQUAL(rte_ring_count(ut_ring), 0);      /* no doorbell rang */
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 1);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_resp_flushes, 1);
	CU_ASSERT_TRUE(ut_eq[0].resp.last_wqe_raised);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 0);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp[0].sq.db), VERBS_DB_IDLE);
	ut_qp[0].srq = NULL;
}

/* A doorbell for a QP deleted since it rang is ignored, and counted. */
static void
test_doorbell_of_deleted_qp(void)
{
	struct engine_port *p = ut_reset();

	ut_post(3);
	ut_qp[3].eng_priv = NULL;
	CU_ASSERT_EQUAL(engine_doorbells(&ut_eng, UINT32_MAX), 1);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&p->active));
	CU_ASSERT_EQUAL(ut_eng.stats.doorbells, 1);
}

/* ---- QPs leaving together --------------------------------------------- */

/* Every QP on the active list with nothing to do and no room to linger:
 * the next step takes them all off the list, in one batch or more
 * (engine_qps_idle()). */
static struct engine_port *
ut_all_active_setup(void)
{
	struct engine_port *p = ut_reset();
	unsigned int i;

	for (i = 0; i < UT_NQP; i++)
		engine_qp_activate(&ut_eq[i]);
	ut_eng.nb_linger = ENGINE_LINGER_MAX;      /* as if eight others lingered */
	return p;
}

static void
ut_post_qp3(void)
{
	ut_post(3);
}

static void
ut_post_qp35(void)
{
	ut_post(35);
}

/* Forty QPs leave in one step, in two batches (the first holds
 * ENGINE_BURST). A post on QP 35 lands before its flag is cleared, in the
 * second batch: its poster saw the flag set and rang nothing, so the
 * second batch's re-check must find it and keep the QP. A post on QP 3
 * lands after the first batch's fence: its poster saw the flag clear and
 * rang, so the doorbell brings QP 3 back, once. */
static void
test_leave_batches_posts_found(void)
{
	struct engine_port *p = ut_all_active_setup();
	unsigned int i;

	RTE_BUILD_BUG_ON(UT_NQP <= ENGINE_BURST + 4);
	ut_hooked = &ut_qp[35];
	ut_before_idle = ut_post_qp35;
	ut_after_fence = ut_post_qp3;
	ut_step(p);
	CU_ASSERT_PTR_NULL(ut_before_idle);
	CU_ASSERT_PTR_NULL(ut_after_fence);
	CU_ASSERT_EQUAL(rte_ring_count(ut_ring), 1);      /* QP 3's doorbell */
	for (i = 0; i < UT_NQP; i++) {
		CU_ASSERT_EQUAL(ut_on_list(p, i), i == 35 ? 1 : 0);
		CU_ASSERT_EQUAL(ut_eq[i].on_active, i == 35);
		CU_ASSERT_EQUAL(atomic_load(&ut_qp[i].sq.db),
				i == 3 || i == 35 ? VERBS_DB_QUEUED : VERBS_DB_IDLE);
	}
	ut_step(p);
	CU_ASSERT_EQUAL(ut_sent[3], 1);
	CU_ASSERT_EQUAL(ut_sent[35], 1);
	CU_ASSERT_EQUAL(ut_sent[4], 0);
}

/* QP 1's turn puts QP 0 back on the list (as its own machines, a timer or
 * a CQ overflow may) after QP 0 left it idle in the same step, before the
 * batch's flags are cleared: QP 0 stays on the list once, its flag set, so
 * a post rings no doorbell and is sent by the next step. */
static void
ut_activate_qp0(unsigned int i)
{
	if (i == 1)
		engine_qp_activate(&ut_eq[0]);
}

static void
test_leave_then_activated(void)
{
	struct engine_port *p = ut_all_active_setup();

	ut_on_turn = ut_activate_qp0;
	ut_step(p);
	ut_on_turn = NULL;
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 1);
	CU_ASSERT_TRUE(ut_eq[0].on_active);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp[0].sq.db), VERBS_DB_QUEUED);
	CU_ASSERT_EQUAL(ut_on_list(p, 1), 0);
	ut_post(0);
	CU_ASSERT_EQUAL(rte_ring_count(ut_ring), 0);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_sent[0], 1);
}

/* ---- lingering -------------------------------------------------------- */

/* A QP that just worked stays on the list for ENGINE_LINGER_STEPS idle
 * steps (its doorbell flag QUEUED), then leaves (flag IDLE). */
static void
test_linger_steps(void)
{
	struct engine_port *p = ut_reset();
	unsigned int s;

	ut_post(0);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_sent[0], 1);
	CU_ASSERT_EQUAL(ut_eq[0].linger, 1);
	CU_ASSERT_EQUAL(ut_eng.nb_linger, 1);
	for (s = 2; s <= ENGINE_LINGER_STEPS; s++) {
		ut_step(p);
		if (ut_on_list(p, 0) != 1)
			break;
	}
	CU_ASSERT_EQUAL(s, ENGINE_LINGER_STEPS + 1);    /* on the list all along */
	CU_ASSERT_EQUAL(ut_eq[0].linger, ENGINE_LINGER_STEPS);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp[0].sq.db), VERBS_DB_QUEUED);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 0);
	CU_ASSERT_FALSE(ut_eq[0].on_active);
	CU_ASSERT_EQUAL(ut_eq[0].linger, 0);
	CU_ASSERT_EQUAL(ut_eng.nb_linger, 0);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp[0].sq.db), VERBS_DB_IDLE);
}

/* A post while the QP lingers rings no doorbell (the flag is QUEUED) and
 * is sent at the next step; working again starts the linger over. */
static void
test_linger_post_without_doorbell(void)
{
	struct engine_port *p = ut_reset();
	unsigned int s;

	ut_post(0);
	ut_step(p);
	for (s = 0; s < 10; s++)
		ut_step(p);
	CU_ASSERT_EQUAL(ut_eq[0].linger, 11);
	ut_post(0);
	CU_ASSERT_EQUAL(rte_ring_count(ut_ring), 0);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_sent[0], 2);
	CU_ASSERT_EQUAL(ut_eng.stats.doorbells, 1);    /* the first post's only */
	CU_ASSERT_EQUAL(ut_eq[0].linger, 1);
	CU_ASSERT_EQUAL(ut_eng.nb_linger, 1);
}

/* At most ENGINE_LINGER_MAX QPs linger; one past that leaves at once; a
 * QP not in RTS does not linger. */
static void
test_linger_limits(void)
{
	struct engine_port *p = ut_reset();
	unsigned int i;

	for (i = 0; i <= ENGINE_LINGER_MAX; i++)
		ut_post(i);
	ut_step(p);
	for (i = 0; i < ENGINE_LINGER_MAX; i++)
		CU_ASSERT_EQUAL(ut_on_list(p, i), 1);
	CU_ASSERT_EQUAL(ut_on_list(p, ENGINE_LINGER_MAX), 0);
	CU_ASSERT_EQUAL(ut_eng.nb_linger, ENGINE_LINGER_MAX);
	CU_ASSERT_EQUAL(atomic_load(&ut_qp[ENGINE_LINGER_MAX].sq.db), VERBS_DB_IDLE);

	p = ut_reset();
	atomic_store(&ut_qp[0].state, DRNIC_QPS_SQD);
	engine_qp_activate(&ut_eq[0]);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 0);
	CU_ASSERT_EQUAL(ut_eng.nb_linger, 0);
}

/*
 * A lingering QP with nothing to do takes no turn (its machines are not
 * called); anything its turn would act on gives it one: a post, an ACK or
 * a response owed, a deadline of its own.
 */
static void
test_linger_quiet_no_turn(void)
{
	struct engine_port *p = ut_reset();
	unsigned int s;

	ut_post(0);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 1);
	for (s = 0; s < 10; s++)
		ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 1);                 /* no turn while quiet */
	CU_ASSERT_EQUAL(ut_eq[0].linger, 11);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 1);
	ut_eq[0].resp.ack_pending = true;
	ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 2);
	ut_eq[0].resp.ack_pending = false;
	ut_eq[0].resp.rtx_tail = 1;                    /* a READ response to send */
	ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 3);
	ut_eq[0].resp.rtx_head = 1;
	ut_eq[0].rec.retry_deadline_ns = ut_now + 1000000;
	ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 4);
	CU_ASSERT_EQUAL(ut_timeouts, 0);               /* not due */
	ut_eq[0].rec.retry_deadline_ns = 0;
	ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 4);
	ut_post(0);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 5);
	CU_ASSERT_EQUAL(ut_sent[0], 2);
	CU_ASSERT_EQUAL(ut_eq[0].linger, 1);           /* worked: lingers anew */
}

/*
 * SQ_DRAINED is raised each time the QP is drained in SQD: a QP still on
 * the list (busy) through SQD and back to RTS lingers quiet only after a
 * turn has seen RTS again, so a second SQD raises the event again.
 */
static void
test_linger_sqd_twice(void)
{
	struct engine_port *p = ut_reset();

	ut_eq[0].path.en_sqd_async_notify = true;
	ut_post(0);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_eq[0].linger, 1);
	ut_eq[0].comp.idx = ut_eq[0].req.idx;          /* everything completed */
	ut_eq[0].resp.ack_pending = true;              /* busy: stays on the list */
	atomic_store(&ut_qp[0].state, DRNIC_QPS_SQD);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_events, 1);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 1);
	ut_eq[0].resp.ack_pending = false;
	atomic_store(&ut_qp[0].state, DRNIC_QPS_RTS);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 1);          /* lingers */
	CU_ASSERT(ut_eq[0].linger > 0);
	ut_step(p);
	atomic_store(&ut_qp[0].state, DRNIC_QPS_SQD);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_events, 2);
}

/* ---- timers, round robin, a full port, CQ overflow --------------------- */

static unsigned int ut_clock_reads;

static uint64_t
ut_clock_counted(void *arg)
{
	ut_clock_reads++;
	return ut_clock(arg);
}

/* Past every deadline, during a turn. */
static void
ut_clock_past(unsigned int i)
{
	RTE_SET_USED(i);
	ut_now += 1000;
	ut_on_turn = NULL;
}

/*
 * The machines read the clock once a step at most, however many QPs look
 * at it (a read costs about 10 ns here), and afresh each step: a deadline
 * the clock passes during a step is seen by the next.
 */
static void
test_step_clock_once(void)
{
	struct engine_port *p = ut_reset();
	unsigned int i;

	ut_eng.clock.now_ns = ut_clock_counted;
	ut_clock_reads = 0;
	for (i = 0; i < 3; i++) {
		atomic_store(&ut_qp[i].sq.prod, 1000);     /* busy: a turn each step */
		ut_eq[i].rec.retry_deadline_ns = ut_now + 100;
		engine_qp_activate(&ut_eq[i]);
	}
	ut_on_turn = ut_clock_past;
	ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 3);
	CU_ASSERT_EQUAL(ut_clock_reads, 1);
	CU_ASSERT_EQUAL(ut_timeouts, 0);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_norder, 6);
	CU_ASSERT_EQUAL(ut_clock_reads, 2);
	CU_ASSERT_EQUAL(ut_timeouts, 3);
	/* Outside a step every call reads. */
	CU_ASSERT_EQUAL(engine_step_ns(&ut_eng), ut_now);
	ut_now++;
	CU_ASSERT_EQUAL(engine_step_ns(&ut_eng), ut_now);
	CU_ASSERT_EQUAL(ut_clock_reads, 4);
}

/* A QP that leaves the list waiting for a deadline sleeps in the wheel
 * and is back on the list when the clock reaches it, not before. */
static void
test_timer_wakes_qp(void)
{
	struct engine_port *p = ut_reset();
	uint64_t d = ut_now + 100000;

	ut_eq[0].req.state = REQ_WAIT_WINDOW;      /* not busy: waits */
	ut_eq[0].rec.retry_deadline_ns = d;
	atomic_store(&ut_qp[0].state, DRNIC_QPS_SQD);  /* no lingering */
	engine_qp_activate(&ut_eq[0]);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 0);
	CU_ASSERT_TRUE(ut_eq[0].tmr.armed);
	ut_now = d - 1;
	CU_ASSERT_EQUAL(engine_timers_run(&ut_eng), 0);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 0);
	ut_now = d + 20000;                         /* within a wheel slot */
	CU_ASSERT_EQUAL(engine_timers_run(&ut_eng), 1);
	CU_ASSERT_EQUAL(ut_eng.stats.timers, 1);
	CU_ASSERT_EQUAL(ut_on_list(p, 0), 1);
	ut_step(p);
	CU_ASSERT_EQUAL(ut_timeouts, 1);            /* its step saw the deadline */
}

/* Busy QPs take turns: one still busy after its turn goes to the tail;
 * each is stepped once per step. A full port walks nobody. */
static void
test_round_robin_full_port(void)
{
	struct engine_port *p = ut_reset();
	unsigned int i;

	for (i = 0; i < 3; i++) {
		atomic_store(&ut_qp[i].sq.prod, 1000);     /* more than a budget */
		engine_qp_activate(&ut_eq[i]);
	}
	engine_port_step(&ut_eng, p);
	CU_ASSERT_EQUAL(ut_norder, 3);
	CU_ASSERT_EQUAL(ut_order[0], 0);
	CU_ASSERT_EQUAL(ut_order[1], 1);
	CU_ASSERT_EQUAL(ut_order[2], 2);
	CU_ASSERT_EQUAL(ut_sent[0], ENGINE_QP_BUDGET);
	/* The first two went to the tail; the last keeps its place. */
	CU_ASSERT_PTR_EQUAL(TAILQ_FIRST(&p->active), &ut_eq[2]);
	CU_ASSERT_PTR_EQUAL(TAILQ_NEXT(&ut_eq[2], active_next), &ut_eq[0]);
	CU_ASSERT_PTR_EQUAL(TAILQ_LAST(&p->active, engine_qp_list), &ut_eq[1]);
	engine_port_step(&ut_eng, p);
	CU_ASSERT_EQUAL(ut_norder, 6);
	CU_ASSERT_EQUAL(ut_order[3], 2);
	CU_ASSERT_EQUAL(ut_order[4], 0);
	CU_ASSERT_EQUAL(ut_order[5], 1);
	p->tx_n = RTE_DIM(p->tx);                 /* the port is full */
	CU_ASSERT_EQUAL(engine_port_step(&ut_eng, p), 0);
	CU_ASSERT_EQUAL(ut_norder, 6);
	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(ut_on_list(p, i), 1);
	p->tx_n = 0;
}

/* A CQ that overflows sends every QP of the engine using it to ERR and
 * onto the list (to flush), with a QP_FATAL event each. */
static void
test_cq_overflow(void)
{
	struct engine_port *p = ut_reset();
	struct drnic_cq *cq = (struct drnic_cq *)(uintptr_t)0x1000;
	struct drnic_wc wc = { 0 };

	ut_qp[1].send_cq = cq;
	ut_qp[2].recv_cq = cq;
	ut_cqe_rc_overflow = 1;
	CU_ASSERT_EQUAL(engine_push_cqe(&ut_eq[1], cq, &wc, false), -EOVERFLOW);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp[1]), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp[2]), DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(verbs_qp_state(&ut_qp[0]), DRNIC_QPS_RTS);
	CU_ASSERT_EQUAL(ut_on_list(p, 1), 1);
	CU_ASSERT_EQUAL(ut_on_list(p, 2), 1);
	CU_ASSERT_EQUAL(ut_events, 2);
	CU_ASSERT_EQUAL(ut_eng.stats.cqes, 0);
	ut_cqe_rc_overflow = 0;
	CU_ASSERT_EQUAL(engine_push_cqe(&ut_eq[0], cq, &wc, false), 0);
	CU_ASSERT_EQUAL(ut_eng.stats.cqes, 1);
}

int
main(void)
{
	ssize_t sz = rte_ring_get_memsize(1024);
	CU_pSuite s;

	ut_ring = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL((size_t)sz, 64));
	if (ut_ring == NULL || rte_ring_init(ut_ring, "ut_db", 1024, RING_F_SC_DEQ) != 0)
		return 1;
	CU_initialize_registry();
	s = CU_add_suite("engine_sched", NULL, NULL);
	CU_ADD_TEST(s, test_race_post_before_idle_store);
	CU_ADD_TEST(s, test_race_post_after_idle_store);
	CU_ADD_TEST(s, test_race_post_after_leaving);
	CU_ADD_TEST(s, test_race_srq_qp_to_err);
	CU_ADD_TEST(s, test_doorbell_of_deleted_qp);
	CU_ADD_TEST(s, test_leave_batches_posts_found);
	CU_ADD_TEST(s, test_leave_then_activated);
	CU_ADD_TEST(s, test_linger_steps);
	CU_ADD_TEST(s, test_linger_post_without_doorbell);
	CU_ADD_TEST(s, test_linger_limits);
	CU_ADD_TEST(s, test_linger_quiet_no_turn);
	CU_ADD_TEST(s, test_linger_sqd_twice);
	CU_ADD_TEST(s, test_step_clock_once);
	CU_ADD_TEST(s, test_timer_wakes_qp);
	CU_ADD_TEST(s, test_round_robin_full_port);
	CU_ADD_TEST(s, test_cq_overflow);
	return ut_run_all();
}
