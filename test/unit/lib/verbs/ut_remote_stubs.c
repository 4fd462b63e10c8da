/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What lib/verbs/remote.c calls of lib/cq, for the unit tests that link it
 * (they are never attached to a daemon, so none of it runs: each fails).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_errno.h>

#include "drnic_event.h"

struct drnic_async_queue *
drnic_async_queue_create(uint32_t size)
{
	(void)size;
	rte_errno = ENOTSUP;
	return NULL;
}

int
drnic_async_queue_destroy(struct drnic_async_queue *q)
{
	(void)q;
	return -EINVAL;
}
