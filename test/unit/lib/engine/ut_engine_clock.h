/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef UT_ENGINE_CLOCK_H
#define UT_ENGINE_CLOCK_H

/*
 * The fake clock of the loop-side engine tests: ut_now is the time; an
 * engine whose clock.now_ns is ut_clock reads it through engine_now_ns()
 * (as engine.c's, which these tests do not link).
 */
#include <stdint.h>

#include "lib/engine/engine_priv.h"

int engine_logtype;

static uint64_t ut_now = 1000000;

static __rte_unused uint64_t
ut_clock(void *arg)
{
	RTE_SET_USED(arg);
	return ut_now;
}

uint64_t
engine_now_ns(struct engine *eng)
{
	return eng->clock.now_ns(eng->clock.arg);
}

#endif
