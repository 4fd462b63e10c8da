/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HANDLE_H
#define HANDLE_H

/*
 * The process's live handles (private to drnic's libraries; not installed).
 *
 * A destroy call is handed a pointer that may already have been destroyed:
 * the memory behind it is freed, so nothing in it (not even a magic number)
 * may be read. Constructors register each object they hand out (pointer and
 * kind); destroy calls take it out of the registry before they follow the
 * pointer, and refuse one that is not there, so a second destroy returns an
 * error and touches nothing. (A pointer freed and then handed out again for
 * a new object of the same kind is that new object: the registry cannot
 * tell, as libibverbs cannot.)
 *
 * A hash set under one mutex: control path (create, destroy), and on the
 * data path post_send of a WR that names an object by pointer (a UD WR's
 * AH, a BIND_MW's window and MR), checked before it is followed: a lock
 * per such WR (noted in doc/design-notes.md). Any thread.
 */

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a handle is; a pointer is live as one kind only. */
enum handle_kind {
	HANDLE_DEVICE = 1,
	HANDLE_PD,
	HANDLE_MR,
	HANDLE_CQ,
	HANDLE_QP,
	HANDLE_COMP_CHANNEL,
	HANDLE_ASYNC_QUEUE,
	HANDLE_SRQ,
	HANDLE_XRCD,
	/* The drop-in libibverbs' objects (its wrappers around the above). */
	HANDLE_IBV_CONTEXT,
	HANDLE_IBV_PD,
	HANDLE_IBV_MR,
	HANDLE_IBV_CQ,
	HANDLE_IBV_QP,
	HANDLE_IBV_COMP_CHANNEL,
	HANDLE_IBV_SRQ,
	HANDLE_AH,
	HANDLE_IBV_AH,
	/* Memory windows: drnic's and the drop-in's. */
	HANDLE_MW,
	HANDLE_IBV_MW,
	HANDLE_IBV_XRCD,
	HANDLE_IBV_TD,
	HANDLE_IBV_DM,
};

/*
 * Register @p p as a live handle of @p kind (a constructor, before it returns
 * the object). Returns 0; -EINVAL for NULL or kind 0; -EEXIST when @p p is
 * already live; -ENOMEM.
 */
int handle_add(const void *p, enum handle_kind kind);

/*
 * Take @p p out of the registry (a destroy, before it reads @p p). Returns
 * 0; -EINVAL when @p p is not a live handle of @p kind (NULL, destroyed
 * already, never created, or another kind), which the caller returns as is.
 * A destroy that then fails (-EBUSY) puts the handle back with
 * handle_add(), which cannot fail then (the slot it left is free).
 */
int handle_take(const void *p, enum handle_kind kind);

/* Is @p p a live handle of @p kind? (A snapshot.) */
bool handle_live(const void *p, enum handle_kind kind);

#ifdef __cplusplus
}
#endif

#endif
