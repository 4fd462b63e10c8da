/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/engine/timer.c with a fake clock: timers expire at
 * their deadline (never before), in any order of arming, across many turns
 * of the wheel and after long gaps; moving and cancelling; re-arming from
 * the callback; an empty wheel does nothing; deadlines beyond a turn wait
 * in level 1 and fire on time.
 */
#include "lib/engine/timer.c"

#include <string.h>

#include "ut_common.h"

static struct engine_wheel wheel;
static struct engine_timer tm[8];
static uint64_t fired_at[8];
static unsigned int nfired;
static uint64_t now;
static int rearm_idx = -1;
static uint64_t rearm_delta;

static void
fire(struct engine_timer *t, void *arg)
{
	unsigned int i = (unsigned int)(t - tm);

	CU_ASSERT_PTR_EQUAL(arg, &wheel);
	CU_ASSERT_FALSE(t->armed);
	fired_at[i] = now;
	nfired++;
	if ((int)i == rearm_idx) {
		rearm_idx = -1;
		timer_arm(&wheel, t, now + rearm_delta);
	}
}

static unsigned int
run_to(uint64_t t)
{
	now = t;
	return timer_wheel_run(&wheel, now, fire, &wheel);
}

static void
reset(uint64_t start)
{
	memset(tm, 0, sizeof(tm));
	memset(fired_at, 0, sizeof(fired_at));
	nfired = 0;
	now = start;
	timer_wheel_init(&wheel, start);
}

static void
test_expiry_order(void)
{
	uint64_t t0 = 123456789;

	reset(t0);
	CU_ASSERT_EQUAL(run_to(t0 + 1000000), 0);     /* empty: nothing */
	t0 = now;
	timer_arm(&wheel, &tm[0], t0 + 50000);         /* 50 us */
	timer_arm(&wheel, &tm[1], t0 + 10000);         /* 10 us */
	timer_arm(&wheel, &tm[2], t0 + 20000000);      /* 20 ms: several turns */
	timer_arm(&wheel, &tm[3], t0 - 5);             /* already due */
	CU_ASSERT_EQUAL(wheel.armed, 4);
	CU_ASSERT_EQUAL(run_to(t0), 1);
	CU_ASSERT_EQUAL(fired_at[3], t0);
	CU_ASSERT_EQUAL(run_to(t0 + 9999), 0);         /* never early */
	CU_ASSERT_EQUAL(run_to(t0 + 10000), 1);
	CU_ASSERT_TRUE(fired_at[1] == t0 + 10000);
	CU_ASSERT_EQUAL(run_to(t0 + 49999), 0);
	CU_ASSERT_EQUAL(run_to(t0 + 60000), 1);
	CU_ASSERT_EQUAL(fired_at[0], t0 + 60000);
	/* Step through many turns in small steps: fires once, on time. */
	while (now < t0 + 19990000)
		CU_ASSERT_EQUAL(run_to(now + 3000), 0);
	while (nfired < 4)
		run_to(now + 3000);
	CU_ASSERT_TRUE(fired_at[2] >= t0 + 20000000 && fired_at[2] < t0 + 20003000);
	CU_ASSERT_EQUAL(wheel.armed, 0);
	CU_ASSERT_EQUAL(wheel.fired, 4);
}

static void
test_gap_move_cancel(void)
{
	uint64_t t0 = 5000;

	reset(t0);
	timer_arm(&wheel, &tm[0], t0 + 1000000);
	timer_arm(&wheel, &tm[1], t0 + 2000000);
	timer_arm(&wheel, &tm[2], t0 + 3000000000ull); /* 3 s */
	/* Move 0 later, cancel 1. */
	timer_arm(&wheel, &tm[0], t0 + 5000000);
	timer_cancel(&wheel, &tm[1]);
	timer_cancel(&wheel, &tm[1]);                  /* twice: harmless */
	CU_ASSERT_EQUAL(wheel.armed, 2);
	CU_ASSERT_EQUAL(run_to(t0 + 4000000), 0);
	/* A long gap (the engine napped): everything due fires at once. */
	CU_ASSERT_EQUAL(run_to(t0 + 10000000000ull), 2);
	CU_ASSERT_EQUAL(nfired, 2);
	CU_ASSERT_EQUAL(fired_at[1], 0);
	CU_ASSERT_EQUAL(wheel.armed, 0);
}

static void
test_rearm_in_callback(void)
{
	uint64_t t0 = 0;

	reset(t0);
	timer_arm(&wheel, &tm[4], 8192);
	rearm_idx = 4;
	rearm_delta = 0;                               /* due again at once */
	CU_ASSERT_EQUAL(run_to(8192), 1);              /* not run twice in one go */
	CU_ASSERT_TRUE(tm[4].armed);
	CU_ASSERT_EQUAL(run_to(8192), 1);
	CU_ASSERT_FALSE(tm[4].armed);
	rearm_idx = 4;
	rearm_delta = 100000;
	timer_arm(&wheel, &tm[4], 9000);
	CU_ASSERT_EQUAL(run_to(9000), 1);
	CU_ASSERT_EQUAL(run_to(9000 + 99999), 0);
	CU_ASSERT_EQUAL(run_to(9000 + 100000), 1);
	CU_ASSERT_EQUAL(wheel.armed, 0);
}

/* The earliest deadline within a horizon, for a thread about to sleep:
 * found in its slot (also when a later turn's timer shares the slot), none
 * beyond the horizon, none once fired. */
static void
test_next_deadline(void)
{
	uint64_t t0 = 1000000000ull;

	reset(t0);
	CU_ASSERT_EQUAL(timer_wheel_next(&wheel, t0, 1000000), UINT64_MAX);
	timer_arm(&wheel, &tm[0], t0 + 300000);                  /* 300 us */
	timer_arm(&wheel, &tm[1], t0 + 300000 + 4096ull * 1024 * 3);  /* same slot, 3 turns on */
	timer_arm(&wheel, &tm[2], t0 + 900000);
	CU_ASSERT_EQUAL(timer_wheel_next(&wheel, t0, 1000000), t0 + 300000);
	CU_ASSERT_EQUAL(timer_wheel_next(&wheel, t0, 100000), UINT64_MAX);
	timer_cancel(&wheel, &tm[0]);
	CU_ASSERT_EQUAL(timer_wheel_next(&wheel, t0, 1000000), t0 + 900000);
	CU_ASSERT_EQUAL(run_to(t0 + 900000), 1);
	CU_ASSERT_EQUAL(timer_wheel_next(&wheel, t0 + 900000, 1000000), UINT64_MAX);
}

/*
 * Deadlines further than a turn of level 0 (4.2 ms) wait in level 1 and come
 * down when the wheel enters their block: each fires at the first run at or
 * after its deadline, in small steps and across long gaps, beyond level 1's
 * own span too; a level-1 timer can be moved into level 0 and cancelled;
 * timer_wheel_next() sees a level-1 deadline inside its horizon.
 */
static void
test_levels(void)
{
	static const uint64_t at[6] = {
		5000000ull, 9000000ull, 100000000ull, 1000000000ull, 6000000000ull, 2000000ull,
	};
	uint64_t t0 = 777, t;
	unsigned int i;

	reset(t0);
	for (i = 0; i < 6; i++)
		timer_arm(&wheel, &tm[i], t0 + at[i]);
	CU_ASSERT_EQUAL(wheel.armed, 6);
	CU_ASSERT_EQUAL(wheel.nb_far, 5);          /* all but the 2 ms one */
	/* Run in 250 us steps up to 150 ms: 2, 5, 9 and 100 ms fire on time. */
	for (t = t0; t <= t0 + 150000000ull; t += 250000)
		run_to(t);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_TRUE(fired_at[i] >= t0 + at[i] && fired_at[i] < t0 + at[i] + 250000);
	}
	CU_ASSERT_TRUE(fired_at[5] >= t0 + at[5] && fired_at[5] < t0 + at[5] + 250000);
	CU_ASSERT_EQUAL(nfired, 4);
	CU_ASSERT_EQUAL(wheel.nb_far, 2);          /* 1 s and 6 s wait in level 1 */
	/* Never early: just before 1 s nothing, at 1 s the 1 s timer. */
	CU_ASSERT_EQUAL(run_to(t0 + at[3] - 1), 0);
	CU_ASSERT_EQUAL(run_to(t0 + at[3]), 1);
	CU_ASSERT_EQUAL(fired_at[3], t0 + at[3]);
	/* 6 s is beyond level 1's span (4.3 s): a gap of 4 s, then one to 6 s. */
	CU_ASSERT_EQUAL(run_to(t0 + 5000000000ull), 0);
	CU_ASSERT_EQUAL(run_to(t0 + at[4] - 4096), 0);
	CU_ASSERT_EQUAL(run_to(t0 + at[4]), 1);
	CU_ASSERT_EQUAL(wheel.armed, 0);
	CU_ASSERT_EQUAL(wheel.nb_far, 0);

	/* Moved from level 1 into level 0, and cancelled from level 1. */
	t = now;
	timer_arm(&wheel, &tm[6], t + 500000000ull);
	timer_arm(&wheel, &tm[7], t + 700000000ull);
	CU_ASSERT_EQUAL(wheel.nb_far, 2);
	timer_arm(&wheel, &tm[6], t + 1000000ull);
	timer_cancel(&wheel, &tm[7]);
	CU_ASSERT_EQUAL(wheel.nb_far, 0);
	CU_ASSERT_EQUAL(wheel.armed, 1);
	CU_ASSERT_EQUAL(run_to(t + 999999), 0);
	CU_ASSERT_EQUAL(run_to(t + 1000000), 1);
	CU_ASSERT_EQUAL(run_to(t + 800000000ull), 0);   /* the cancelled one stays quiet */

	/* timer_wheel_next() reaches into level 1: a deadline 4.5 ms away is in
	 * level 1 when armed, and inside a 1 ms horizon 3.6 ms later. */
	t = now;
	timer_arm(&wheel, &tm[0], t + 4500000ull);
	CU_ASSERT_EQUAL(wheel.nb_far, 1);
	CU_ASSERT_EQUAL(timer_wheel_next(&wheel, t, 1000000), UINT64_MAX);
	CU_ASSERT_EQUAL(timer_wheel_next(&wheel, t + 3600000ull, 1000000), t + 4500000ull);
	CU_ASSERT_EQUAL(run_to(t + 4500000ull), 1);
	CU_ASSERT_EQUAL(wheel.armed, 0);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("engine_timer", NULL, NULL);
	CU_ADD_TEST(s, test_expiry_order);
	CU_ADD_TEST(s, test_gap_move_cancel);
	CU_ADD_TEST(s, test_rearm_in_callback);
	CU_ADD_TEST(s, test_next_deadline);
	CU_ADD_TEST(s, test_levels);
	return ut_run_all();
}
