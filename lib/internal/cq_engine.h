/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQ_ENGINE_H
#define CQ_ENGINE_H

/**
 * @file
 * The engine-facing side of lib/cq: producing completions, raising async
 * events, and the hooks the device layer needs. Not installed.
 *
 * Ownership contract of a CQ:
 *  - ONE producer: the engine that owns the CQ (cq_comp_vector()) calls
 *    cq_push()/cq_push_burst(); in inline progress mode the application thread
 *    does, from inside its progress function. Never two threads at once: every
 *    QP that completes into a CQ must run on that CQ's engine.
 *  - ONE consumer thread: drnic_cq_poll(), drnic_cq_req_notify(),
 *    drnic_cq_resize(). It may run concurrently with the producer.
 *  - cq_get()/cq_put(), accessors and drnic_cq_query_stats(): any thread.
 *  - async_raise(): any number of threads at once; never blocks.
 */

#include <stdbool.h>

#include "drnic_cq.h"
#include "drnic_event.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Publish one completion (producer only). Lock-free, no system call unless
 * the CQ was armed and this completion fires its event (an eventfd write).
 *
 * @param cq         the CQ.
 * @param wc         the completion; copied.
 * @param solicited  the completion is for a message with the solicited-event
 *                   bit (fires a CQ armed with solicited_only).
 * @return 0;
 *         -EINVAL when @p cq or @p wc is NULL;
 *         -EOVERFLOW when the CQ is full: nothing is overwritten, the CQ enters
 *         error for good (cq_in_error()), DRNIC_EVENT_CQ_ERR is raised once on
 *         its async queue; every later push also returns -EOVERFLOW. The caller
 *         moves the QPs using the CQ to error.
 */
int cq_push(struct drnic_cq *cq, const struct drnic_wc *wc, bool solicited);

/**
 * Publish @p n completions in order (producer only); one memory fence and at
 * most one event for the burst.
 *
 * @param solicited  at least one of them is solicited.
 * @return how many were published (0..n); fewer than @p n means the CQ
 *         overflowed (or was already in error, or @p cq / @p wc is NULL):
 *         the first ones are published, the rest refused as in cq_push().
 */
unsigned int cq_push_burst(struct drnic_cq *cq, const struct drnic_wc *wc,
		unsigned int n, bool solicited);

/**
 * Publish one completion like cq_push() without looking at the CQ's arm
 * (producer only): the caller calls cq_push_notify() for the CQ later,
 * before it could sleep or let the CQ go, with @p solicited_or_error of
 * every completion published since. Publish, then fence, then read the arm
 * stays the order (the fence is only later), so no wake-up is lost; an
 * engine pays one fence per CQ per step instead of one per completion.
 *
 * @return as cq_push().
 */
int cq_push_quiet(struct drnic_cq *cq, const struct drnic_wc *wc);

/**
 * The event check after cq_push_quiet() (producer only): a full fence, then
 * fire the CQ's event if it is armed for what was published
 * (@p solicited_or_error: a solicited or failed completion among them).
 */
void cq_push_notify(struct drnic_cq *cq, bool solicited_or_error);

/**
 * Count one more user (a QP attaching to the CQ); any thread.
 *
 * @return 0; -EINVAL when @p cq is NULL or being destroyed.
 */
int cq_get(struct drnic_cq *cq);

/**
 * Drop a user taken with cq_get(). The caller guarantees that no cq_push()
 * for that user runs or will run any more.
 */
void cq_put(struct drnic_cq *cq);

/**
 * Inline progress mode: drnic_cq_poll() calls @p fn(@p arg) once per call,
 * before it reads the ring, so the polling thread runs the engine. The return
 * value of @p fn is ignored. @p fn NULL turns it off. Switching the function
 * on or off while another thread polls is safe (that poll runs the old or the
 * new one); changing @p arg then is not.
 */
void cq_set_progress(struct drnic_cq *cq, int (*fn)(void *arg), void *arg);

/** The comp_vector given at creation (the core the CQ belongs to). */
int cq_comp_vector(const struct drnic_cq *cq);

/** The NUMA node given at creation (SOCKET_ID_ANY allowed). */
int cq_socket(const struct drnic_cq *cq);

/** The cq_context given at creation. */
void *cq_context(const struct drnic_cq *cq);

/** True once the CQ overflowed (sticky). */
bool cq_in_error(const struct drnic_cq *cq);

/**
 * Queue an async event (any thread, lock-free, never blocks).
 *
 * @return 0; -EINVAL when @p q or @p ev is NULL;
 *         -ENOSPC when the queue is full: the event is counted in events_lost
 *         (and logged once per queue).
 */
int async_raise(struct drnic_async_queue *q, const struct drnic_async_event *ev);

/**
 * Count an object that may raise events into @p q (its destroy is refused
 * while users remain).
 *
 * @return 0; -EINVAL when @p q is NULL or being destroyed.
 */
int async_get(struct drnic_async_queue *q);

/** Drop a user taken with async_get(). */
void async_put(struct drnic_async_queue *q);

/**
 * The device layer's hooks for the events that are not CQ_ERR (QP, SRQ,
 * port events), on every queue: delivered() when drnic_try_get_async_event()
 * hands one to the application (under that queue's consumer lock, as
 * async_purge()), acked() from drnic_ack_async_event(); so an object can
 * count the events it is held by. Either may be NULL.
 */
struct async_hooks {
	void (*delivered)(const struct drnic_async_event *ev);
	void (*acked)(const struct drnic_async_event *ev);
};

/** Install the hooks (process-wide; @p hooks must outlive every queue). */
void async_set_hooks(const struct async_hooks *hooks);

/**
 * Drop the events about @p obj (the pointer in the event's element) that
 * were raised and not taken yet; the consumer skips them. Call only when
 * nothing raises events about @p obj any more (its engine is fenced).
 *
 * @return how many were dropped (also counted in events_purged).
 */
unsigned int async_purge(struct drnic_async_queue *q, const void *obj);

#ifdef __cplusplus
}
#endif

#endif
