/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/env: hugepage decision and EAL argv assembly. */
#include "lib/env/env.c"

#include "ut_common.h"

/* Stubs: record the argv the EAL would have been started with. */
static char ut_eal_argv[32][128];
static int ut_eal_argc;
static int ut_eal_rc;

int
rte_eal_init(int argc, char **argv)
{
	int i;

	ut_eal_argc = argc;
	for (i = 0; i < argc && i < 32; i++)
		snprintf(ut_eal_argv[i], sizeof(ut_eal_argv[i]), "%s", argv[i]);
	if (ut_eal_rc < 0)
		rte_errno = -ut_eal_rc;
	return ut_eal_rc;
}

int
rte_eal_cleanup(void)
{
	return 0;
}

/* No EAL here: the alarm that finds the interrupt thread never fires. */
int
rte_eal_alarm_set(uint64_t us, rte_eal_alarm_callback cb, void *arg)
{
	RTE_SET_USED(us);
	RTE_SET_USED(cb);
	RTE_SET_USED(arg);
	return 0;
}

static bool
ut_has_arg(const char *arg)
{
	int i;

	for (i = 0; i < ut_eal_argc; i++)
		if (strcmp(ut_eal_argv[i], arg) == 0)
			return true;
	return false;
}

static void
test_no_huge_forced(void)
{
	struct drnic_env_info info;
	const char *extra[] = { "--vdev=net_ring0", NULL };
	struct drnic_env_opts opts = { .name = "ut", .lcores = "0", .extra_args = extra };

	setenv("DRNIC_NO_HUGE", "1", 1);
	setenv("DRNIC_EAL_ARGS", "--log-level=lib.eal:debug", 1);
	CU_ASSERT_FALSE(drnic_env_hugepages_usable(64, &info));
	CU_ASSERT_STRING_EQUAL(info.reason, "DRNIC_NO_HUGE is set");

	ut_eal_rc = 0;
	CU_ASSERT_EQUAL(drnic_env_init(&opts, &info), 0);
	CU_ASSERT_FALSE(info.hugepages);
	CU_ASSERT_STRING_EQUAL(ut_eal_argv[0], "ut");
	CU_ASSERT_TRUE(ut_has_arg("--no-huge"));
	CU_ASSERT_TRUE(ut_has_arg("--no-shconf"));
	CU_ASSERT_TRUE(ut_has_arg("--no-pci"));
	CU_ASSERT_FALSE(ut_has_arg("--in-memory"));
	CU_ASSERT_TRUE(ut_has_arg("--vdev=net_ring0"));
	CU_ASSERT_TRUE(ut_has_arg("--log-level=lib.eal:debug"));
	/* The user's extra arguments come last so they can override ours. */
	CU_ASSERT_STRING_EQUAL(ut_eal_argv[ut_eal_argc - 1], "--log-level=lib.eal:debug");
	CU_ASSERT_NOT_EQUAL(strstr(info.eal_args, "ut -l 0 --no-pci"), NULL);

	/* A second start is refused; after fini it works again. */
	CU_ASSERT_EQUAL(drnic_env_init(&opts, NULL), -EALREADY);
	CU_ASSERT_EQUAL(drnic_env_fini(), 0);
	unsetenv("DRNIC_EAL_ARGS");
	unsetenv("DRNIC_NO_HUGE");
}

static void
test_eal_failure_reported(void)
{
	ut_eal_rc = -1;
	rte_errno = 0;
	setenv("DRNIC_NO_HUGE", "1", 1);
	/* rte_eal_init() failing with rte_errno EACCES reaches the caller. */
	ut_eal_rc = -EACCES;
	CU_ASSERT_EQUAL(drnic_env_init(NULL, NULL), -EACCES);
	/* It did not count as started. */
	ut_eal_rc = 0;
	CU_ASSERT_EQUAL(drnic_env_init(NULL, NULL), 0);
	CU_ASSERT_EQUAL(drnic_env_fini(), 0);
	unsetenv("DRNIC_NO_HUGE");
}

static void
test_too_many_args(void)
{
	const char *extra[80];
	struct drnic_env_opts opts = { .extra_args = extra };
	int i;

	for (i = 0; i < 79; i++)
		extra[i] = "--vdev=net_null0";
	extra[79] = NULL;
	CU_ASSERT_EQUAL(drnic_env_init(&opts, NULL), -E2BIG);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("env", NULL, NULL);
	CU_add_test(s, "no_huge_forced", test_no_huge_forced);
	CU_add_test(s, "eal_failure_reported", test_eal_failure_reported);
	CU_add_test(s, "too_many_args", test_too_many_args);
	return ut_run_all();
}
