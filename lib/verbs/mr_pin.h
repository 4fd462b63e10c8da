/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MR_PIN_H
#define MR_PIN_H

/*
 * Registered memory with a mapping of its own (mr_pin.c): a window onto a
 * registration's pages (moved onto a memfd first when private) that the
 * engines use. Control path only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "verbs_objects.h"

/* Pin [addr, addr + len), moving private pages onto a memfd when @p move:
 * 1 and @p m's window made (with the program's protection of each page),
 * or 0 when it is not pinned (DPDK's memory; private pages without
 * @p move, or shared with other data, or that cannot move; no room): the
 * program's mapping serves, as before. Either way m->host is where the
 * engines reach addr. */
int mr_pin_get(void *addr, size_t len, bool move, struct mr_pin_map *m);

/*
 * An attached process, before drnicd registers [addr, addr + len): every
 * page of it shared afterwards, private pages moved onto memfds, whole
 * pages even when they hold other data too (the daemon can reach nothing
 * else; a store by another thread into such a page while it is copied is
 * lost). 0, or -EFAULT (a hole, the stack, huge pages, unreadable) or
 * -ENOMEM.
 */
int mr_pin_share(void *addr, size_t len);

/*
 * drnicd: a window onto [addr, addr + len) of process @p pid, whose pages
 * must all be in shared mappings (mr_pin_share() made them so), readable,
 * and writable when @p write: each piece's file, opened through
 * /proc/PID/map_files, mapped again here. 0 or a negative errno (-EFAULT:
 * a hole, a private or unreadable page, or a read-only page to write).
 */
int mr_pin_get_pid(pid_t pid, void *addr, size_t len, bool write, struct mr_pin_map *m);

/* Unmap @p m's window (after the engines' fence). */
void mr_pin_put(struct mr_pin_map *m);

/* struct mr_pin_map, the counters: verbs_objects.h. */

#endif
