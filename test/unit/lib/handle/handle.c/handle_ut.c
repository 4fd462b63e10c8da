/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/handle/handle.c: the registry of live handles (a second
 * take fails, kinds are told apart, growth and removal keep every other
 * handle findable).
 */
#include "lib/handle/handle.c"

#include "ut_common.h"

static void
test_add_take(void)
{
	int a, b;

	CU_ASSERT_EQUAL(handle_add(NULL, HANDLE_CQ), -EINVAL);
	CU_ASSERT_EQUAL(handle_add(&a, 0), -EINVAL);
	CU_ASSERT_EQUAL(handle_take(&a, HANDLE_CQ), -EINVAL);   /* never added */
	CU_ASSERT_EQUAL(handle_add(&a, HANDLE_CQ), 0);
	CU_ASSERT_EQUAL(handle_add(&a, HANDLE_QP), -EEXIST);
	CU_ASSERT(handle_live(&a, HANDLE_CQ));
	CU_ASSERT_FALSE(handle_live(&a, HANDLE_QP));
	CU_ASSERT_FALSE(handle_live(&b, HANDLE_CQ));
	CU_ASSERT_EQUAL(handle_take(&a, HANDLE_QP), -EINVAL);   /* another kind */
	CU_ASSERT(handle_live(&a, HANDLE_CQ));                  /* ... left alone */
	CU_ASSERT_EQUAL(handle_take(&a, HANDLE_CQ), 0);
	CU_ASSERT_EQUAL(handle_take(&a, HANDLE_CQ), -EINVAL);   /* a second destroy */
	CU_ASSERT_EQUAL(handle_take(NULL, HANDLE_CQ), -EINVAL);
	CU_ASSERT_EQUAL(handle_count, 0);
}

static void
test_many(void)
{
	enum { N = 5000 };
	static char objs[N];
	unsigned int i, lost = 0, ghosts = 0;

	for (i = 0; i < N; i++)
		CU_ASSERT_EQUAL_FATAL(handle_add(&objs[i], HANDLE_MR), 0);
	CU_ASSERT(handle_size >= 2 * N);
	/* Remove every third: backward shifts must keep the rest reachable. */
	for (i = 0; i < N; i += 3)
		CU_ASSERT_EQUAL(handle_take(&objs[i], HANDLE_MR), 0);
	for (i = 0; i < N; i++) {
		bool live = handle_live(&objs[i], HANDLE_MR);

		if (i % 3 == 0)
			ghosts += live;
		else
			lost += !live;
	}
	CU_ASSERT_EQUAL(lost, 0);
	CU_ASSERT_EQUAL(ghosts, 0);
	for (i = 0; i < N; i++)
		CU_ASSERT_EQUAL(handle_take(&objs[i], HANDLE_MR), i % 3 == 0 ? -EINVAL : 0);
	CU_ASSERT_EQUAL(handle_count, 0);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("handle", NULL, NULL);
	CU_ADD_TEST(s, test_add_take);
	CU_ADD_TEST(s, test_many);
	return ut_run_all();
}
