/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef UT_MALLOC_STUB_H
#define UT_MALLOC_STUB_H

/*
 * rte_malloc without the EAL: zeroed, aligned heap memory, a count of live
 * blocks (leak checks) and failure injection.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

static _Atomic long ut_malloc_live;
static int ut_malloc_fail_in = -1;	/* fail the Nth next call (0: next); -1 never */

void *
rte_zmalloc_socket(const char *type, size_t size, unsigned align, int socket)
{
	void *p;

	(void)type;
	(void)socket;
	if (ut_malloc_fail_in == 0) {
		ut_malloc_fail_in = -1;
		return NULL;
	}
	if (ut_malloc_fail_in > 0)
		ut_malloc_fail_in--;
	if (align < sizeof(void *))
		align = sizeof(void *);
	size = RTE_ALIGN_CEIL(size, align);
	p = aligned_alloc(align, size);
	if (p != NULL) {
		memset(p, 0, size);
		atomic_fetch_add(&ut_malloc_live, 1);
	}
	return p;
}

void
rte_free(void *ptr)
{
	if (ptr != NULL) {
		atomic_fetch_sub(&ut_malloc_live, 1);
		free(ptr);
	}
}

#endif
