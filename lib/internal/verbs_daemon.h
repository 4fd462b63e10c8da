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

/*
 * drnic_rereg_mr() of process @p pid's MR: a new translation of the
 * program's own memory (@p own) is mapped again from that process as
 * above, DPDK memory is taken as it is (the caller checked it is the
 * process's), and a window that becomes writable is made again. The window
 * is made before the MR changes: a failure (-EFAULT, -ENOMEM, open()'s
 * error) leaves the MR as it was. Otherwise drnic_rereg_mr()'s returns.
 */
int verbs_rereg_mr_of(struct drnic_mr *mr, pid_t pid, unsigned int flags, struct drnic_pd *pd,
		      void *addr, size_t length, unsigned int access, bool own);

/*
 * drnicd: a doorbell ring for one attached process's QPs on engine @p idx
 * of @p dev (@p tag names it: the process), which the engine takes
 * doorbells from from now on. A process killed in the middle of its
 * enqueue (head moved, tail not) then stalls only its own ring; on the
 * engine's own ring every later producer would wait for it for ever.
 * NULL with rte_errno (ENOSPC: the engine takes no more rings; ENOMEM).
 */
struct rte_ring *verbs_db_ring_new(struct drnic_device *dev, unsigned int idx, uint64_t tag);
/* The engine forgets @p r, then it is freed: after every QP that used it
 * is destroyed. */
void verbs_db_ring_free(struct drnic_device *dev, unsigned int idx, struct rte_ring *r);
/* @p qp's posts ring @p r (one of verbs_db_ring_new()'s on its engine),
 * before its process gets it. */
void verbs_qp_set_db_ring(struct drnic_qp *qp, struct rte_ring *r);

#endif /* VERBS_DAEMON_H */
