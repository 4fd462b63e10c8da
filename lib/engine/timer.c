/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's timer wheel (see timer.h).
 */
#include <stddef.h>

#include "timer.h"

#define TIMER_MASK (TIMER_SLOTS - 1)
#define TIMER_FAR_MASK (TIMER_FAR_SLOTS - 1)

/* The level-0 turn (block of TIMER_SLOTS ticks) of @p tick. */
static inline uint64_t
timer_block(uint64_t tick)
{
	return tick >> TIMER_SLOTS_SHIFT;
}

static inline struct engine_timer_list *
timer_list(struct engine_wheel *w, unsigned int slot_idx)
{
	return slot_idx < TIMER_SLOTS ? &w->slot[slot_idx] : &w->far[slot_idx - TIMER_SLOTS];
}

void
timer_wheel_init(struct engine_wheel *w, uint64_t now_ns)
{
	unsigned int i;

	for (i = 0; i < TIMER_SLOTS; i++)
		TAILQ_INIT(&w->slot[i]);
	for (i = 0; i < TIMER_FAR_SLOTS; i++)
		TAILQ_INIT(&w->far[i]);
	w->tick = now_ns >> TIMER_TICK_SHIFT;
	w->armed = 0;
	w->nb_far = 0;
	w->fired = 0;
}

void
timer_cancel(struct engine_wheel *w, struct engine_timer *t)
{
	if (!t->armed)
		return;
	TAILQ_REMOVE(timer_list(w, t->slot_idx), t, next);
	if (t->slot_idx >= TIMER_SLOTS)
		w->nb_far--;
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

/* Put @p t (not in a list) where its deadline belongs. */
static void
timer_place(struct engine_wheel *w, struct engine_timer *t)
{
	uint64_t tick = t->deadline_ns >> TIMER_TICK_SHIFT;

	if (tick < w->tick + TIMER_SLOTS) {
		t->slot_idx = timer_slot(w, t->deadline_ns);
	} else {
		/* Beyond this turn: level 1, moved down when the wheel
		 * enters the deadline's block (timer_wheel_run()). */
		t->slot_idx = TIMER_SLOTS + (unsigned int)(timer_block(tick) & TIMER_FAR_MASK);
		w->nb_far++;
	}
	TAILQ_INSERT_TAIL(timer_list(w, t->slot_idx), t, next);
}

void
timer_arm(struct engine_wheel *w, struct engine_timer *t, uint64_t deadline_ns)
{
	if (t->armed) {
		if (t->deadline_ns == deadline_ns)
			return;
		timer_cancel(w, t);
	}
	t->deadline_ns = deadline_ns;
	timer_place(w, t);
	t->armed = true;
	w->armed++;
}

/*
 * The wheel moves from tick w->tick to @p now_tick: level 1's timers of the
 * blocks entered come down into level 0 (those of later turns of level 1
 * stay). Before level 0 is walked, so that the walk fires the due ones.
 */
static void
timer_cascade(struct engine_wheel *w, uint64_t now_tick)
{
	uint64_t b, first = timer_block(w->tick) + 1, last = timer_block(now_tick);
	uint64_t old_tick = w->tick;

	if (w->nb_far == 0 || last < first)
		return;
	if (last - first >= TIMER_FAR_SLOTS)
		first = last - TIMER_FAR_SLOTS + 1;    /* every level-1 slot once */
	/* Placed as of the new tick: what came due meanwhile goes to its
	 * slot, at most a turn ahead, never behind what the walk reaches. */
	w->tick = now_tick;
	for (b = first; b <= last; b++) {
		struct engine_timer_list *l = &w->far[b & TIMER_FAR_MASK];
		struct engine_timer *t, *tmp;

		for (t = TAILQ_FIRST(l); t != NULL; t = tmp) {
			tmp = TAILQ_NEXT(t, next);
			if (timer_block(t->deadline_ns >> TIMER_TICK_SHIFT) > last)
				continue;                       /* a later turn of level 1 */
			TAILQ_REMOVE(l, t, next);
			w->nb_far--;
			t->slot_idx = timer_slot(w, t->deadline_ns);
			TAILQ_INSERT_TAIL(&w->slot[t->slot_idx], t, next);
		}
	}
	w->tick = old_tick;
}

uint64_t
timer_wheel_next(const struct engine_wheel *w, uint64_t now_ns, uint64_t horizon_ns)
{
	uint64_t tick, b, limit = now_ns + horizon_ns, end = limit >> TIMER_TICK_SHIFT;
	uint64_t next = UINT64_MAX;
	unsigned int steps = 0;
	const struct engine_timer *t;

	if (w->armed == 0)
		return next;
	/* Level 0, tick by tick: the first slot with a deadline inside the
	 * horizon has level 0's earliest. */
	for (tick = w->tick; tick <= end && steps < TIMER_SLOTS; tick++, steps++) {
		TAILQ_FOREACH(t, &w->slot[tick & TIMER_MASK], next)
			if (t->deadline_ns < next)
				next = t->deadline_ns;
		if (next <= limit)
			break;
	}
	/* Level 1: the blocks the horizon reaches into. */
	if (w->nb_far > 0) {
		uint64_t first = timer_block(w->tick) + 1, last = timer_block(end);

		if (last >= first && last - first >= TIMER_FAR_SLOTS)
			last = first + TIMER_FAR_SLOTS - 1;
		for (b = first; b <= last; b++)
			TAILQ_FOREACH(t, &w->far[b & TIMER_FAR_MASK], next)
				if (t->deadline_ns < next)
					next = t->deadline_ns;
	}
	return next <= limit ? next : UINT64_MAX;
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
	timer_cascade(w, now_tick);
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
