/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef VERBS_DAEMON_H
#define VERBS_DAEMON_H

/*
 * What lib/verbs offers drnicd beyond the public API (private to drnic;
 * not installed): registrations of another process's memory.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "drnic_verbs.h"

/*
 * drnic_reg_mr_iova() of [addr, addr + length) of process @p pid, an
 * attached program: its pages must be in shared mappings (the program's
 * side moved private pages onto memfds first), which the daemon maps again
 * through /proc/PID/map_files into a window of its own; the engines reach
 * the memory there, for as long as the MR lives (what pinning is to a
 * NIC), whatever the program does with its mapping. NULL with rte_errno:
 * EFAULT (a hole, a private or unreadable page, a read-only page and write
 * access), EINVAL, ENOMEM, or open()'s error.
 */
struct drnic_mr *verbs_reg_mr_of(struct drnic_pd *pd, pid_t pid, void *addr, size_t length,
				 uint64_t iova, unsigned int access);

#endif /* VERBS_DAEMON_H */
