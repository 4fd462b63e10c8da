/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ENGINE_TIMER_H
#define ENGINE_TIMER_H

/*
 * A timer wheel in two levels, one per engine, driven by the engine's clock
 * (which tests replace), so timers cost nothing while idle: a QP that only
 * waits for an ACK, a retransmit timeout or an RNR wait leaves the active
 * list and sits in one wheel slot until its deadline (or an arriving packet)
 * makes it active again.
 *
 * Level 0: TIMER_SLOTS slots of one tick (2^TIMER_TICK_SHIFT ns), holding
 * the deadlines of the next TIMER_SLOTS ticks, one tick a slot. Level 1:
 * TIMER_FAR_SLOTS slots of one level-0 turn (a block of TIMER_SLOTS ticks);
 * a deadline further than a turn away waits there, and moves down when the
 * wheel enters its block. A timer is looked at when it is armed, when it
 * moves down (once) and when it fires, not on every turn: thousands of QPs
 * with retransmit timers of a second do not cost a walk each per turn.
 * Deadlines beyond level 1's span wait in their level-1 slot for later
 * turns of it (one look each, every TIMER_FAR_SLOTS turns).
 *
 * Timers are one-shot; arming an armed timer moves it. Pure code: no
 * threads, no allocation; a wheel and its timers belong to one thread.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

/* 2^12 ns = 4.096 us: the unit of the IB timeout and well below RNR timers. */
#define TIMER_TICK_SHIFT 12
#define TIMER_SLOTS_SHIFT 10
#define TIMER_SLOTS (1u << TIMER_SLOTS_SHIFT)   /* level 0: span 4.2 ms */
#define TIMER_FAR_SLOTS 1024u                     /* level 1: span 4.3 s */

struct engine_timer {
	TAILQ_ENTRY(engine_timer) next;
	uint64_t deadline_ns;
	unsigned int slot_idx;   /* level 0 slot, or TIMER_SLOTS + level 1 slot */
	bool armed;
};

TAILQ_HEAD(engine_timer_list, engine_timer);

struct engine_wheel {
	struct engine_timer_list slot[TIMER_SLOTS];
	struct engine_timer_list far[TIMER_FAR_SLOTS];
	uint64_t tick;           /* first tick not yet fully processed */
	unsigned int armed;      /* timers in the wheel (both levels) */
	unsigned int nb_far;     /* of them in level 1 */
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
