/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_AUTOTEST_H
#define DRNIC_AUTOTEST_H

/*
 * The drnic-test runner, in the style of dpdk-test: every test file registers
 * its tests by name with DRNIC_TEST_REGISTER(); `drnic-test NAME...` (or
 * DRNIC_TEST=NAME) runs them after one EAL start; no argument lists them.
 *
 * A test function returns TEST_SUCCESS, TEST_FAILED or TEST_SKIPPED (after
 * printing why). The TEST_ASSERT* macros print file, line and message, then
 * return TEST_FAILED from the calling function.
 */

#include <inttypes.h>
#include <stdio.h>
#include <sys/queue.h>

#define TEST_SUCCESS 0
#define TEST_FAILED (-1)
#define TEST_SKIPPED 77

enum drnic_test_suite {
	DRNIC_TEST_FAST,   /**< correctness; runs in CI on every change */
	DRNIC_TEST_PERF,   /**< benchmarks: print figures, assert nothing about time */
	DRNIC_TEST_SOAK,   /**< long correctness runs */
};

struct drnic_test {
	TAILQ_ENTRY(drnic_test) next;
	const char *name;
	enum drnic_test_suite suite;
	int (*fn)(void);
};

void drnic_test_register(struct drnic_test *t);

#define DRNIC_TEST_REGISTER(tname, tsuite, tfn)                                 \
	static struct drnic_test test_struct_##tname = {                        \
		.name = #tname, .suite = tsuite, .fn = tfn };                   \
	static void __attribute__((constructor, used)) test_register_##tname(void) \
	{                                                                       \
		drnic_test_register(&test_struct_##tname);                      \
	}

#define TEST_ASSERT(cond, ...)                                                  \
	do {                                                                    \
		if (!(cond)) {                                                  \
			printf("%s:%d: assertion failed: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
			return TEST_FAILED;                                     \
		}                                                               \
	} while (0)

#define TEST_ASSERT_EQUAL(a, b, ...)                                            \
	do {                                                                    \
		long long _a = (long long)(a), _b = (long long)(b);             \
		if (_a != _b) {                                                 \
			printf("%s:%d: %s == %lld, expected %s == %lld: ", __FILE__, \
			       __LINE__, #a, _a, #b, _b);                       \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
			return TEST_FAILED;                                     \
		}                                                               \
	} while (0)

#define TEST_ASSERT_SUCCESS(rc, ...) TEST_ASSERT_EQUAL(rc, 0, __VA_ARGS__)

#define TEST_SKIP(...)                                                          \
	do {                                                                    \
		printf("skipped: ");                                            \
		printf(__VA_ARGS__);                                            \
		printf("\n");                                                   \
		return TEST_SKIPPED;                                            \
	} while (0)

#endif /* DRNIC_AUTOTEST_H */
