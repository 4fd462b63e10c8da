/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ENGINE_TIMER_H
#define ENGINE_TIMER_H

/*
 * A hashed timer wheel, one per engine, driven by the engine's clock (which
 * tests replace), so timers cost nothing while idle: a QP that only waits
 * for an ACK, a retransmit timeout or an RNR wait leaves the active list and
 * sits in one wheel slot until its deadline (or an arriving packet) makes
 * it active again.
 *
 * Slots are TIMER_TICK_NS wide; a deadline further away than the wheel's
 * span waits in its slot for later turns (checked once per turn). Timers
 * are one-shot; arming an armed timer moves it. Pure code: no threads, no
 * allocation; a wheel and its timers belong to one thread.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

/* 2^12 ns = 4.096 us: the unit of the IB timeout and well below RNR timers. */
#define TIMER_TICK_SHIFT 12
#define TIMER_SLOTS 1024u   /* span 4.2 ms */

struct engine_timer {
	TAILQ_ENTRY(engine_timer) next;
	uint64_t deadline_ns;
	unsigned int slot_idx;
	bool armed;
};

TAILQ_HEAD(engine_timer_list, engine_timer);

struct engine_wheel {
	struct engine_timer_list slot[TIMER_SLOTS];
	uint64_t tick;           /* first tick not yet fully processed */
	unsigned int armed;      /* timers in the wheel */
	uint64_t fired;          /* timers that expired */
};

/* Empty wheel whose time starts at @p now_ns. */
void timer_wheel_init(struct engine_wheel *w, uint64_t now_ns);

/* Arm (or move) @p t to expire at @p deadline_ns. */
void timer_arm(struct engine_wheel *w, struct engine_timer *t, uint64_t deadline_ns);

/* Disarm @p t (no-op when it is not armed). */
void timer_cancel(struct engine_wheel *w, struct engine_timer *t);

/*
 * Expire every timer due at @p now_ns: each is disarmed, then @p fn is
 * called with it (fn may arm it again). Returns how many expired. Costs
 * nothing when no timer is armed.
 */
unsigned int timer_wheel_run(struct engine_wheel *w, uint64_t now_ns,
			     void (*fn)(struct engine_timer *t, void *arg), void *arg);

/*
 * The earliest deadline within @p horizon_ns of @p now_ns (ns), or
 * UINT64_MAX when none is armed that soon. Looks slot by slot from the
 * current tick up to the horizon: for a thread about to sleep, not for the
 * data path.
 */
uint64_t timer_wheel_next(const struct engine_wheel *w, uint64_t now_ns, uint64_t horizon_ns);

#endif /* ENGINE_TIMER_H */
