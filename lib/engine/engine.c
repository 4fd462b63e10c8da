/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine loop: one step of an engine (engine_run_once()), the lcore
 * loop with its back-off (engine_main()), the inline engines the
 * application's threads run (engine_progress_all(), drnic_engine_idle_ns())
 * and the clock. Owns the inline engine table, the clock
 * (engine::clock), the links' state watch (engine_port::up,
 * engine::link_check_ns) and the step's counters (loops, cycles).
 *
 * One step of an engine:
 *   control ring -> doorbell ring -> link rx (responder, completer) ->
 *   timers -> active QPs (responder output, requester) -> link tx.
 * What each stage does is in its own file: engine_ctl.c, engine_sched.c,
 * engine_rx.c, engine_tx.c.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "engine_priv.h"

RTE_LOG_REGISTER_SUFFIX(engine_logtype, engine, NOTICE);

#define ENGINE_MAX_INLINE 64

/* Inline engines; read without the lock by engine_progress_all(), which
 * looks at the first engine_inline_top slots only. Written by
 * engine_inline_add() and engine_inline_del() (control path, under the
 * engines' lock). */
static _Atomic(struct engine *) engine_inline[ENGINE_MAX_INLINE];
static atomic_uint engine_inline_top;

/* ------------------------------------------------------------------------ */
/* Clock                                                                    */
/* ------------------------------------------------------------------------ */

/* Nanoseconds per TSC cycle as a 32.32 fixed-point factor: a multiply and
 * a shift per reading instead of a 128-bit divide (set once, before the
 * first engine exists). */
static uint64_t engine_tsc_mult;

static void
engine_tsc_calibrate(void)
{
	uint64_t hz = rte_get_tsc_hz();

	if (engine_tsc_mult == 0 && hz != 0)
		engine_tsc_mult = (uint64_t)(((__uint128_t)NS_PER_S << 32) / hz);
}

static uint64_t
engine_tsc_now_ns(void *arg)
{
	RTE_SET_USED(arg);
	return (uint64_t)(((__uint128_t)rte_get_tsc_cycles() * engine_tsc_mult) >> 32);
}

uint64_t
engine_now_ns(struct engine *eng)
{
	return eng->clock.now_ns(eng->clock.arg);
}

/* Install the TSC clock in @p clock (control path, before the engine runs;
 * unit tests install a fake one instead). */
void
engine_clock_init(struct engine_clock *clock)
{
	engine_tsc_calibrate();
	clock->now_ns = engine_tsc_now_ns;
	clock->arg = NULL;
}

/* ------------------------------------------------------------------------ */
/* Inline engines                                                           */
/* ------------------------------------------------------------------------ */

/* Make @p eng one of the process's inline engines: 0, or -ENOSPC. */
int
engine_inline_add(struct engine *eng)
{
	unsigned int i;

	for (i = 0; i < ENGINE_MAX_INLINE; i++) {
		if (atomic_load(&engine_inline[i]) == NULL) {
			atomic_store_explicit(&engine_inline[i], eng, memory_order_release);
			if (i >= atomic_load(&engine_inline_top))
				atomic_store_explicit(&engine_inline_top, i + 1,
						      memory_order_release);
			return 0;
		}
	}
	return -ENOSPC;
}

/* No thread runs inline engine @p eng any more when this returns. */
void
engine_inline_del(struct engine *eng)
{
	unsigned int i;

	for (i = 0; i < ENGINE_MAX_INLINE; i++)
		if (atomic_load(&engine_inline[i]) == eng)
			atomic_store(&engine_inline[i], NULL);
	/* Wait for a thread that may be running it. */
	while (atomic_flag_test_and_set_explicit(&eng->running, memory_order_acquire))
		rte_pause();
}

/* ------------------------------------------------------------------------ */
/* The step and the loop                                                    */
/* ------------------------------------------------------------------------ */

/* How often an engine looks at its links' state (port events). */
#define ENGINE_LINK_CHECK_LOOPS 1024
#define ENGINE_LINK_CHECK_NS (10 * 1000 * 1000)

/*
 * Port state events: the engine of a device's link queue 0 raises
 * PORT_ACTIVE / PORT_ERR on the device's async queues when the link goes up
 * or down. Looked at every ENGINE_LINK_CHECK_NS at most, so it costs one
 * counter test per loop.
 */
static void
engine_ports_watch(struct engine *eng)
{
	uint64_t now = engine_now_ns(eng);
	unsigned int i;

	if (now < eng->link_check_ns)
		return;
	eng->link_check_ns = now + ENGINE_LINK_CHECK_NS;
	for (i = 0; i < eng->nb_ports; i++) {
		struct engine_port *p = &eng->port[i];
		struct drnic_async_event ev = { 0 };
		int8_t up;

		if (p->queue != 0)
			continue;
		up = (int8_t)link_is_up(p->link);
		if (up == p->up)
			continue;
		p->up = up;
		atomic_store_explicit(&p->dev->link_up, up != 0, memory_order_relaxed);
		ev.event_type = up ? DRNIC_EVENT_PORT_ACTIVE : DRNIC_EVENT_PORT_ERR;
		ev.element.port_num = 1;
		ENGINE_LOG(NOTICE, eng, "%s: port 1 %s", drnic_device_name(p->dev),
			   up ? "up" : "down");
		verbs_device_event(p->dev, &ev);  /* every subscribed queue; counted if lost */
	}
}

int
engine_run_once(struct engine *eng)
{
	struct engine_ctrl *c;
	uint64_t t1;
	unsigned int i;
	int work = 0;

	if (unlikely(eng->tsc_stale || eng->inline_mode)) {
		/* Back from a yield or a nap, or an inline engine back from
		 * its application's code: that time was idle. */
		uint64_t t0 = rte_rdtsc();

		if (eng->last_tsc != 0)
			eng->stats.idle_cycles += t0 - eng->last_tsc;
		eng->last_tsc = t0;
		eng->tsc_stale = false;
	}
	engine_step_begin(eng);
	while (!rte_ring_empty(eng->ctrl) && rte_ring_sc_dequeue(eng->ctrl, (void **)&c) == 0) {
		engine_ctrl_handle(eng, c);
		work++;
	}
	work += (int)engine_doorbells(eng, ENGINE_BURST * 4);
	work += engine_rx(eng);
	if (eng->wheel.armed > 0 && !eng->rx_backlog)
		work += (int)engine_timers_run(eng);

	/*
	 * The active QPs of each port, each once per step (up to the one that
	 * was last when the step began), round robin: a QP still busy after
	 * its turn goes to the tail. When a port is full nothing on it can
	 * send: its walk stops there (thousands of QPs waiting for room are
	 * not walked every step), the rest keep their places.
	 */
	/* (Each call below is tested first: in most steps of a ping-pong there
	 * is nothing to walk, send or notify on most ports.) */
	for (i = 0; i < eng->nb_ports; i++)
		if (!TAILQ_EMPTY(&eng->port[i].active))
			work += engine_port_step(eng, &eng->port[i]);
	for (i = 0; i < eng->nb_ports; i++)
		if (eng->port[i].tx_n > 0)
			work += engine_port_flush(eng, &eng->port[i]);
	if (eng->nb_notify > 0)
		engine_cq_notify(eng);
	if (unlikely(eng->stats.loops % ENGINE_LINK_CHECK_LOOPS == 0))
		engine_ports_watch(eng);
	engine_step_end(eng);
	eng->stats.loops++;
	/* Cycles, one clock read a step (each costs about 11 ns here): the
	 * time since the last step ended is busy when this step did work, idle
	 * otherwise (steps with nothing to do, back-off, whoever else ran). The
	 * back-off before a busy step counts as busy: at most one pause. */
	t1 = rte_rdtsc();
	if (eng->last_tsc != 0) {
		if (work > 0)
			eng->stats.busy_cycles += t1 - eng->last_tsc;
		else
			eng->stats.idle_cycles += t1 - eng->last_tsc;
	}
	if (work > 0)
		eng->stats.busy_loops++;
	eng->last_tsc = t1;
	return work;
}

/* An lcore engine's loop, until engine::stop. */
int
engine_main(void *arg)
{
	struct engine *eng = arg;
	uint64_t idle = 0;

	ENGINE_LOG(INFO, eng, "running on lcore %u", eng->lcore);
	while (!atomic_load_explicit(&eng->stop, memory_order_acquire)) {
		if (engine_run_once(eng) > 0) {
			idle = 0;
			continue;
		}
		/* Back off: spin a while, then yield, then nap. The first idle
		 * steps spin without a pause (each costs about 20 ns here, and
		 * every event waits for the step after it). */
		idle++;
		if (idle < ENGINE_SPIN_HOT) {
			continue;
		} else if (idle < 20000) {
			rte_pause();
		} else if (idle < 40000) {
			sched_yield();
			eng->tsc_stale = true;
		} else {
			struct timespec ts = { .tv_sec = 0, .tv_nsec = 20000 };

			nanosleep(&ts, NULL);
			eng->tsc_stale = true;
		}
	}
	/* Last control messages (the one that stopped us is answered by the
	 * caller after the join). */
	ENGINE_LOG(INFO, eng, "stopped");
	return 0;
}

int
drnic_engine_idle_ns(uint64_t *wait_ns)
{
	unsigned int i, j, top = atomic_load_explicit(&engine_inline_top, memory_order_acquire);
	uint64_t wait = UINT64_MAX;
	struct engine_qp *eq;

	if (wait_ns == NULL)
		return -EINVAL;
	for (i = 0; i < top && wait > 0; i++) {
		struct engine *eng = atomic_load_explicit(&engine_inline[i], memory_order_acquire);
		uint64_t now, next;

		if (eng == NULL)
			continue;
		/* The engine's state is its running thread's: look only while
		 * holding it, as a run would. One that another thread runs
		 * now is that thread's to finish. */
		if (atomic_flag_test_and_set_explicit(&eng->running, memory_order_acquire))
			continue;
		now = engine_now_ns(eng);
		if (rte_ring_count(eng->ctrl) > 0 || engine_doorbells_waiting(eng))
			wait = 0;
		/* A QP that lingers waits for a post or for its deadline (not
		 * in the wheel while it lingers): a post made meanwhile is
		 * work now, as a doorbell in the ring would be. Any other QP
		 * on the list has work now. At most ENGINE_LINGER_MAX + 1 are
		 * looked at. */
		for (j = 0; j < eng->nb_ports && wait > 0; j++) {
			TAILQ_FOREACH(eq, &eng->port[j].active, active_next) {
				uint64_t d;

				if (eq->linger == 0 || engine_qp_busy(eq)) {
					wait = 0;
					break;
				}
				d = engine_qp_deadline(eq);
				if (d != 0)
					wait = RTE_MIN(wait, d > now ? d - now : 0);
			}
		}
		for (j = 0; j < eng->nb_ports && wait > 0; j++) {
			const struct engine_port *p = &eng->port[j];

			if (p->tx_n == 0)
				continue;
			if (p->tx_data || p->hold_until_ns <= now)
				wait = 0;
			else
				wait = RTE_MIN(wait, p->hold_until_ns - now);
		}
		if (wait > 0 && (next = timer_wheel_next(&eng->wheel, now, NS_PER_S / 1000)) !=
		    UINT64_MAX)
			wait = RTE_MIN(wait, next > now ? next - now : 0);
		atomic_flag_clear_explicit(&eng->running, memory_order_release);
	}
	*wait_ns = wait;
	return 0;
}

/* Run the process's inline engines once. */
int
engine_progress_all(void)
{
	unsigned int i, top = atomic_load_explicit(&engine_inline_top, memory_order_acquire);
	int work = 0;

	for (i = 0; i < top; i++) {
		struct engine *eng = atomic_load_explicit(&engine_inline[i], memory_order_acquire);

		if (eng == NULL)
			continue;
		if (atomic_flag_test_and_set_explicit(&eng->running, memory_order_acquire))
			continue;  /* another thread runs it */
		work += engine_run_once(eng);
		atomic_flag_clear_explicit(&eng->running, memory_order_release);
	}
	return work;
}
