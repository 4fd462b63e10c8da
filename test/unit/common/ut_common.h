/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_UT_COMMON_H
#define DRNIC_UT_COMMON_H

/*
 * Shared by the CUnit binaries: a main() body that runs the registered
 * suites and returns the number of failures (so meson sees a non-zero exit).
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>

#include <CUnit/Basic.h>

static inline int
ut_run_all(void)
{
	unsigned int failures;

	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures > 0 ? 1 : 0;
}

/*
 * A name table indexed by an enum (@p n values): every value has a name, and
 * no two names are alike, so a state added without its name fails here.
 */
static inline void
ut_check_name_table(const char *const *names, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(names[i]);
		CU_ASSERT(names[i][0] != '\0');
		for (j = 0; j < i; j++)
			CU_ASSERT(strcmp(names[i], names[j]) != 0);
	}
}

/*
 * Wait until thread @p tid of this process sleeps in the kernel (state S in
 * /proc/self/task/TID/stat), for a test that must act only once another
 * thread is blocked, instead of sleeping and hoping it is by then. Returns
 * 0, or -1 when the thread did not block within 10 seconds.
 */
static inline int
ut_wait_blocked(pid_t tid)
{
	struct timespec t0, t;
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		FILE *f = fopen(path, "r");
		size_t n = 0;
		const char *p;

		if (f != NULL) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		p = strrchr(buf, ')');          /* the state follows the name */
		if (p != NULL && p[1] == ' ' && p[2] == 'S')
			return 0;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
	return -1;
}

#endif
