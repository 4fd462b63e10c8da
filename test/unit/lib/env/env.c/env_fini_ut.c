/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic_env_fini() with the real EAL, while the EAL's interrupt thread is
 * inside a callback that takes longer than any wait for it to look idle
 * (a PMD's callback doing a blocking exchange). fini stops that thread
 * before the EAL unmaps memory; stopping it inside a callback leaves the
 * callback half run (and its source marked running, which an unregister
 * then waits on forever). The callback must run to its end first.
 * Not a timed test: the callback's length only makes it outlast fini's
 * look for an idle thread; what is asserted is that it ended.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_interrupts.h>

#include "drnic_env.h"

#include "ut_common.h"

/* Longer than fini's look for an idle interrupt thread (2 s). */
#define UT_CB_MS 2500

static atomic_int ut_alarm_ran, ut_cb_started, ut_cb_ended;
static int ut_efd;

static void
ut_slow_cb(void *arg)
{
	struct timespec ts = { .tv_sec = UT_CB_MS / 1000, .tv_nsec = UT_CB_MS % 1000 * 1000000L };
	uint64_t v;

	RTE_SET_USED(arg);
	if (read(ut_efd, &v, sizeof(v)) != sizeof(v))
		return;
	atomic_store(&ut_cb_started, 1);
	while (nanosleep(&ts, &ts) != 0)
		;
	atomic_store(&ut_cb_ended, 1);
}

/* Runs on the interrupt thread after every alarm set before it: the one
 * with which drnic_env_init() learns that thread's id among them. */
static void
ut_alarm(void *arg)
{
	RTE_SET_USED(arg);
	atomic_store(&ut_alarm_ran, 1);
}

static void
test_fini_waits_for_callback(void)
{
	struct drnic_env_opts opts = { .name = "env_fini_ut", .lcores = "0" };
	struct rte_intr_handle *h;
	uint64_t one = 1;

	setenv("DRNIC_NO_HUGE", "1", 1);
	CU_ASSERT_EQUAL_FATAL(drnic_env_init(&opts, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(rte_eal_alarm_set(1, ut_alarm, NULL), 0);
	while (!atomic_load(&ut_alarm_ran))
		sched_yield();
	ut_efd = eventfd(0, EFD_NONBLOCK);
	CU_ASSERT_FATAL(ut_efd >= 0);
	h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_EQUAL_FATAL(rte_intr_fd_set(h, ut_efd), 0);
	CU_ASSERT_EQUAL_FATAL(rte_intr_type_set(h, RTE_INTR_HANDLE_EXT), 0);
	CU_ASSERT_EQUAL_FATAL(rte_intr_callback_register(h, ut_slow_cb, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(write(ut_efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	while (!atomic_load(&ut_cb_started))
		sched_yield();
	CU_ASSERT_EQUAL(drnic_env_fini(), 0);
	CU_ASSERT_EQUAL(atomic_load(&ut_cb_ended), 1);   /* not cut off in the middle */
	rte_intr_instance_free(h);   /* private: plain memory */
	close(ut_efd);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	s = CU_add_suite("env_fini", NULL, NULL);
	CU_add_test(s, "fini_waits_for_callback", test_fini_waits_for_callback);
	return ut_run_all();
}
