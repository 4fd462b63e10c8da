/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic-test: runs registered autotests by name after one EAL start.
 *
 *   drnic-test               list every test with its suite
 *   drnic-test NAME...       run the named tests
 *   drnic-test --suite S     run every test of suite S (fast, perf, soak)
 *   DRNIC_TEST=NAME drnic-test   same as drnic-test NAME
 *   DRNIC_TEST_LCORES=L      the EAL's lcores (drnic_env_opts::lcores: a core
 *                            list, or a map such as "0@0,1@1,2@1")
 *
 * Exit status: 0 when every test passed or skipped, 1 when one failed,
 * 77 when every test run was skipped (meson's "skip"), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_lcore.h>

#include "drnic_env.h"
#include "test.h"

static TAILQ_HEAD(, drnic_test) test_list = TAILQ_HEAD_INITIALIZER(test_list);

static const char *const suite_names[] = {
	[DRNIC_TEST_FAST] = "fast",
	[DRNIC_TEST_PERF] = "perf",
	[DRNIC_TEST_SOAK] = "soak",
};

void
drnic_test_register(struct drnic_test *t)
{
	struct drnic_test *it;

	/* Keep the list sorted by name so listings are stable. */
	TAILQ_FOREACH(it, &test_list, next) {
		if (strcmp(t->name, it->name) < 0) {
			TAILQ_INSERT_BEFORE(it, t, next);
			return;
		}
	}
	TAILQ_INSERT_TAIL(&test_list, t, next);
}

static struct drnic_test *
test_find(const char *name)
{
	struct drnic_test *t;

	TAILQ_FOREACH(t, &test_list, next)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

static int
test_suite_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(suite_names) / sizeof(suite_names[0]); i++)
		if (strcmp(suite_names[i], name) == 0)
			return (int)i;
	return -1;
}

static void
test_list_all(void)
{
	struct drnic_test *t;

	printf("Available tests (drnic-test NAME...):\n");
	TAILQ_FOREACH(t, &test_list, next)
		printf("  %-32s %s\n", t->name, suite_names[t->suite]);
}

int
main(int argc, char **argv)
{
	struct drnic_test *run[256];
	struct drnic_env_opts opts = { .name = "drnic-test" };
	struct drnic_env_info info;
	unsigned int n = 0, passed = 0, failed = 0, skipped = 0, i;
	const char *env_name = getenv("DRNIC_TEST");
	int a, rc;

	opts.lcores = getenv("DRNIC_TEST_LCORES");
	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--suite") == 0 && a + 1 < argc) {
			int s = test_suite_by_name(argv[++a]);
			struct drnic_test *t;

			if (s < 0) {
				fprintf(stderr, "drnic-test: unknown suite '%s' (fast, perf, soak)\n", argv[a]);
				return 2;
			}
			TAILQ_FOREACH(t, &test_list, next)
				if ((int)t->suite == s && n < sizeof(run) / sizeof(run[0]))
					run[n++] = t;
		} else if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
			test_list_all();
			return 0;
		} else {
			struct drnic_test *t = test_find(argv[a]);

			if (t == NULL) {
				fprintf(stderr, "drnic-test: no test named '%s'\n", argv[a]);
				test_list_all();
				return 2;
			}
			if (n < sizeof(run) / sizeof(run[0]))
				run[n++] = t;
		}
	}
	if (argc == 1 && env_name != NULL) {
		struct drnic_test *t = test_find(env_name);

		if (t == NULL) {
			fprintf(stderr, "drnic-test: DRNIC_TEST names no test: '%s'\n", env_name);
			return 2;
		}
		run[n++] = t;
	}
	if (n == 0) {
		test_list_all();
		return 0;
	}

	rc = drnic_env_init(&opts, &info);
	if (rc < 0) {
		fprintf(stderr, "drnic-test: EAL start failed: %s\n", strerror(-rc));
		return 1;
	}
	printf("EAL: %s (%s%s)\n", info.eal_args, info.hugepages ? "hugepages" : "no hugepages: ",
	       info.hugepages ? "" : info.reason);

	for (i = 0; i < n; i++) {
		printf("=== %s\n", run[i]->name);
		fflush(stdout);
		rc = run[i]->fn();
		if (rc == TEST_SUCCESS) {
			passed++;
			printf("=== %s: OK\n", run[i]->name);
		} else if (rc == TEST_SKIPPED) {
			skipped++;
			printf("=== %s: SKIPPED\n", run[i]->name);
		} else {
			failed++;
			printf("=== %s: FAILED\n", run[i]->name);
		}
		fflush(stdout);
	}
	printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
	drnic_env_fini();
	if (failed)
		return 1;
	return skipped == n ? TEST_SKIPPED : 0;
}
