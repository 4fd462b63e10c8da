/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's timer wheel (see timer.h).
 */
#include <stddef.h>

#include "timer.h"

#define TIMER_MASK (TIMER_SLOTS - 1)

void
timer_wheel_init(struct engine_wheel *w, uint64_t now_ns)
{
	unsigned int i;

	for (i = 0; i < TIMER_SLOTS; i++)
		TAILQ_INIT(&w->slot[i]);
	w->tick = now_ns >> TIMER_TICK_SHIFT;
	w->armed = 0;
	w->fired = 0;
}

void
timer_cancel(struct engine_wheel *w, struct engine_timer *t)
{
	if (!t->armed)
		return;
	TAILQ_REMOVE(&w->slot[t->slot_idx], t, next);
	t->armed = false;
	w->armed--;
}

/* The slot a deadline lives in: its tick's, or the current one when past. */
static unsigned int
timer_slot(const struct engine_wheel *w, uint64_t deadline_ns)
{
	uint64_t tick = deadline_ns >> TIMER_TICK_SHIFT;

	return (unsigned int)((tick < w->tick ? w->tick : tick) & TIMER_MASK);
}

void
timer_arm(struct engine_wheel *w, struct engine_timer *t, uint64_t deadline_ns)
{
	if (t->armed) {
		if (t->deadline_ns == deadline_ns)
			return;
		TAILQ_REMOVE(&w->slot[t->slot_idx], t, next);
		w->armed--;
	}
	t->deadline_ns = deadline_ns;
	t->slot_idx = timer_slot(w, deadline_ns);
	TAILQ_INSERT_TAIL(&w->slot[t->slot_idx], t, next);
	t->armed = true;
	w->armed++;
}

uint64_t
timer_wheel_next(const struct engine_wheel *w, uint64_t now_ns, uint64_t horizon_ns)
{
	uint64_t tick, end = (now_ns + horizon_ns) >> TIMER_TICK_SHIFT, next = UINT64_MAX;
	unsigned int steps = 0;

	if (w->armed == 0)
		return next;
	for (tick = w->tick; tick <= end && steps < TIMER_SLOTS; tick++, steps++) {
		const struct engine_timer *t;

		TAILQ_FOREACH(t, &w->slot[tick & TIMER_MASK], next)
			if (t->deadline_ns < next)
				next = t->deadline_ns;
		/* A slot holds its tick's deadlines and, wrapped, later ones:
		 * the first with one inside the horizon has the earliest. */
		if (next <= now_ns + horizon_ns)
			return next;
	}
	return UINT64_MAX;
}

unsigned int
timer_wheel_run(struct engine_wheel *w, uint64_t now_ns,
		void (*fn)(struct engine_timer *t, void *arg), void *arg)
{
	uint64_t now_tick = now_ns >> TIMER_TICK_SHIFT, tick;
	unsigned int n = 0, steps = 0;

	if (w->armed == 0) {
		if (now_tick > w->tick)
			w->tick = now_tick;
		return 0;
	}
	for (tick = w->tick; tick <= now_tick && steps < TIMER_SLOTS; tick++, steps++) {
		struct engine_timer_list *l = &w->slot[tick & TIMER_MASK];
		struct engine_timer_list due;
		struct engine_timer *t, *tmp;

		/* Take the due ones out first: fn may arm timers into this slot. */
		TAILQ_INIT(&due);
		for (t = TAILQ_FIRST(l); t != NULL; t = tmp) {
			tmp = TAILQ_NEXT(t, next);
			if (t->deadline_ns > now_ns)
				continue;
			TAILQ_REMOVE(l, t, next);
			t->armed = false;
			w->armed--;
			TAILQ_INSERT_TAIL(&due, t, next);
		}
		while ((t = TAILQ_FIRST(&due)) != NULL) {
			TAILQ_REMOVE(&due, t, next);
			n++;
			fn(t, arg);
		}
	}
	/* The current tick's slot may still hold timers due later in it. */
	w->tick = now_tick;
	w->fired += n;
	return n;
}
