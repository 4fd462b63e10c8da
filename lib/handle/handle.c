/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry of live handles: an open-addressing hash set of pointers
 * (linear probing, deletion by backward shift, so no tombstones), grown to
 * keep it at most half full, under one mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "handle.h"

#define HANDLE_MIN_SLOTS 64u

struct handle_slot {
	uintptr_t p;              /* 0: empty */
	enum handle_kind kind;
};

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handle_slot *handle_tab;
static size_t handle_size;    /* slots, a power of two (0 before the first add) */
static size_t handle_count;

static size_t
handle_hash(uintptr_t p)
{
	uint64_t x = (uint64_t)p;

	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return (size_t)x;
}

/* Under the lock: the slot holding @p p, or the empty slot ending its run. */
static size_t
handle_find(uintptr_t p)
{
	size_t mask = handle_size - 1, i = handle_hash(p) & mask;

	while (handle_tab[i].p != 0 && handle_tab[i].p != p)
		i = (i + 1) & mask;
	return i;
}

/* Under the lock: double the table (or create it). */
static int
handle_grow(void)
{
	size_t old_size = handle_size, n = old_size ? old_size * 2 : HANDLE_MIN_SLOTS, i;
	struct handle_slot *old = handle_tab, *t = calloc(n, sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	handle_tab = t;
	handle_size = n;
	for (i = 0; i < old_size; i++)
		if (old[i].p != 0)
			handle_tab[handle_find(old[i].p)] = old[i];
	free(old);
	return 0;
}

int
handle_add(const void *p, enum handle_kind kind)
{
	uintptr_t v = (uintptr_t)p;
	size_t i;
	int rc = 0;

	if (p == NULL || kind == 0)
		return -EINVAL;
	pthread_mutex_lock(&handle_lock);
	if ((handle_count + 1) * 2 > handle_size)
		rc = handle_grow();
	if (rc == 0) {
		i = handle_find(v);
		if (handle_tab[i].p == v) {
			rc = -EEXIST;
		} else {
			handle_tab[i] = (struct handle_slot){ .p = v, .kind = kind };
			handle_count++;
		}
	}
	pthread_mutex_unlock(&handle_lock);
	return rc;
}

/* Under the lock: empty slot @p i, moving later entries of its run back. */
static void
handle_remove_at(size_t i)
{
	size_t mask = handle_size - 1, j = i, home;

	for (;;) {
		j = (j + 1) & mask;
		if (handle_tab[j].p == 0)
			break;
		home = handle_hash(handle_tab[j].p) & mask;
		/* Entry j may fill the hole at i unless its home lies
		 * cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			handle_tab[i] = handle_tab[j];
			i = j;
		}
	}
	handle_tab[i].p = 0;
	handle_count--;
}

int
handle_take(const void *p, enum handle_kind kind)
{
	uintptr_t v = (uintptr_t)p;
	size_t i;
	int rc = -EINVAL;

	if (p == NULL)
		return -EINVAL;
	pthread_mutex_lock(&handle_lock);
	if (handle_size != 0) {
		i = handle_find(v);
		if (handle_tab[i].p == v && handle_tab[i].kind == kind) {
			handle_remove_at(i);
			rc = 0;
		}
	}
	pthread_mutex_unlock(&handle_lock);
	return rc;
}

bool
handle_live(const void *p, enum handle_kind kind)
{
	uintptr_t v = (uintptr_t)p;
	bool live = false;
	size_t i;

	if (p == NULL)
		return false;
	pthread_mutex_lock(&handle_lock);
	if (handle_size != 0) {
		i = handle_find(v);
		live = handle_tab[i].p == v && handle_tab[i].kind == kind;
	}
	pthread_mutex_unlock(&handle_lock);
	return live;
}
