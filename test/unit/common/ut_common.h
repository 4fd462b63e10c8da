/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_UT_COMMON_H
#define DRNIC_UT_COMMON_H

/*
 * Shared by the CUnit binaries: a main() body that runs the registered
 * suites and returns the number of failures (so meson sees a non-zero exit).
 */
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

#endif
