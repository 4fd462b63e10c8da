/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_UT_COMMON_H
#define DRNIC_UT_COMMON_H

/*
 * Shared by the CUnit binaries: a main() body that runs the registered
 * suites and returns the number of failures (so meson sees a non-zero exit).
 */
#include <string.h>

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

#endif
