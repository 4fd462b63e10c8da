/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MR_PIN_H
#define MR_PIN_H

/*
 * Registered memory with a mapping of its own (mr_pin.c): a window onto a
 * registration's pages (moved onto a memfd first when private) that the
 * engines use. Control path only.
 */
#include <stddef.h>
#include <stdint.h>

#include "verbs_objects.h"

/* Pin [addr, addr + len), moving private pages onto a memfd when @p move:
 * 1 and @p m's window made (with the program's protection of each page),
 * or 0 when it is not pinned (DPDK's memory; private pages without
 * @p move, or shared with other data, or that cannot move; no room): the
 * program's mapping serves, as before. Either way m->host is where the
 * engines reach addr. */
int mr_pin_get(void *addr, size_t len, bool move, struct mr_pin_map *m);

/* Unmap @p m's window (after the engines' fence). */
void mr_pin_put(struct mr_pin_map *m);

/* struct mr_pin_map, the counters: verbs_objects.h. */

#endif
