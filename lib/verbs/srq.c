/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues: creation, the limit, posting from any thread, and
 * the engines' side, verbs_srq_take(), which any number of engines call at
 * once for the QPs that share the queue.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "handle.h"
#include "verbs_objects.h"
#include "verbs_remote.h"

#define VERBS_SRQ_LOG(level, srq, fmt, ...)                                     \
	VERBS_LOG(level, "%s: srq %p: " fmt, (srq)->dev->cfg.name, (const void *)(srq), \
		  ##__VA_ARGS__)

/* An XRC SRQ's domain and CQ: live, of @p dev, the CQ on the engine XRC
 * target QPs run on (one producer per CQ). 0 or -EINVAL. */
static int
srq_xrc_check(const struct drnic_device *dev, const struct drnic_srq_init_attr *ia)
{
	if (!handle_live(ia->xrcd, HANDLE_XRCD) || ia->xrcd->dev != dev ||
	    !handle_live(ia->cq, HANDLE_CQ) ||
	    (unsigned int)cq_comp_vector(ia->cq) % dev->nb_engines != VERBS_XRC_ENGINE)
		return -EINVAL;
	return 0;
}

/* Give XRC SRQ @p srq a free number and publish it in the device's table
 * (release: the engines find it complete). Under lock; the table has room
 * for max_srq. */
static void
srq_number(struct drnic_device *dev, struct drnic_srq *srq)
{
	uint32_t i, n;

	for (i = 0; i < dev->srq_tab_size; i++) {
		n = (dev->srq_next + i) & dev->srq_mask;
		if (n == 0 || atomic_load_explicit(&dev->srq_tab[n], memory_order_relaxed) != NULL)
			continue;
		srq->srq_num = n;
		dev->srq_next = n + 1;
		atomic_store_explicit(&dev->srq_tab[n], srq, memory_order_release);
		return;
	}
}

struct drnic_srq *
drnic_create_srq(struct drnic_pd *pd, struct drnic_srq_init_attr *ia)
{
	struct drnic_device *dev;
	struct drnic_srq *srq;
	int rc;

	if (verbs_remote())
		return remote_create_srq(pd, ia);
	if (pd == NULL || ia == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	if (ia->attr.max_wr == 0 || ia->attr.max_wr > dev->cfg.max_qp_wr ||
	    ia->attr.max_sge > dev->cfg.max_sge || ia->attr.srq_limit > ia->attr.max_wr ||
	    (ia->srq_type != DRNIC_SRQT_BASIC && ia->srq_type != DRNIC_SRQT_XRC) ||
	    (ia->srq_type == DRNIC_SRQT_XRC && srq_xrc_check(dev, ia) < 0)) {
		rte_errno = EINVAL;
		return NULL;
	}
	srq = rte_zmalloc_socket("drnic_srq", sizeof(*srq), RTE_CACHE_LINE_SIZE,
				 dev->cfg.socket_id);
	if (srq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	srq->dev = dev;
	srq->pd = pd;
	srq->srq_context = ia->srq_context;
	srq->async = ia->async_queue != NULL ? ia->async_queue : dev->async;
	if (ia->srq_type == DRNIC_SRQT_XRC) {
		srq->xrcd = ia->xrcd;
		srq->cq = ia->cq;
	}
	rte_spinlock_init(&srq->post_lock);
	atomic_init(&srq->limit, ia->attr.srq_limit);
	rc = verbs_wq_alloc(&srq->rq, ia->attr.max_wr, sizeof(struct verbs_recv_wqe),
			    RTE_MAX(ia->attr.max_sge, 1u), 0, dev->cfg.socket_id);
	if (rc < 0)
		goto fail_mem;
	srq->max_wr = srq->rq.size;
	srq->rq.dev = dev;
	srq->ring0.buf = srq->rq.buf;
	srq->ring0.mask = srq->rq.mask;
	atomic_init(&srq->ring, &srq->ring0);
	if (srq->cq != NULL && cq_get(srq->cq) < 0) {
		rc = -EINVAL;
		goto fail_mem;
	}
	if (async_get(srq->async) < 0) {
		rc = -EINVAL;
		goto fail_cq;
	}
	pthread_mutex_lock(&dev->lock);
	if (dev->nb_srq >= dev->cfg.max_qp) {
		pthread_mutex_unlock(&dev->lock);
		rc = -ENOMEM;
		goto fail_async;
	}
	/* Checked again under the lock: the domain may have been closed. */
	if (srq->xrcd != NULL && !handle_live(srq->xrcd, HANDLE_XRCD)) {
		pthread_mutex_unlock(&dev->lock);
		rc = -EINVAL;
		goto fail_async;
	}
	rc = handle_add(srq, HANDLE_SRQ);
	if (rc < 0) {
		pthread_mutex_unlock(&dev->lock);
		goto fail_async;
	}
	dev->nb_srq++;
	atomic_fetch_add(&pd->refs, 1);
	if (srq->xrcd != NULL) {
		srq->xrcd->users++;
		srq_number(dev, srq);
	}
	pthread_mutex_unlock(&dev->lock);
	/* An XRC SRQ's CQ may serve no QP: polling it must run the engines. */
	if (srq->cq != NULL && dev->cfg.progress == DRNIC_PROGRESS_INLINE)
		cq_set_progress(srq->cq, verbs_inline_progress, NULL);
	ia->attr.max_wr = srq->max_wr;
	ia->attr.max_sge = srq->rq.max_sge;
	VERBS_SRQ_LOG(DEBUG, srq, "created (%u WRs, %u SGEs)", srq->max_wr, srq->rq.max_sge);
	return srq;

fail_async:
	async_put(srq->async);
fail_cq:
	if (srq->cq != NULL)
		cq_put(srq->cq);
fail_mem:
	rte_free(srq->rq.buf);
	rte_free(srq);
	rte_errno = -rc;
	return NULL;
}

/* Free a ring the takers no longer see (after an engine fence). */
static void
srq_ring_free(struct drnic_srq *srq, struct verbs_srq_ring *r)
{
	rte_free(r->buf);
	if (r != &srq->ring0)
		rte_free(r);
}

/*
 * Grow @p srq to hold @p max_wr WRs (rounded up to a power of two); the
 * caller holds post_lock, which this releases. See struct drnic_srq.
 */
static int
srq_grow(struct drnic_srq *srq, uint32_t max_wr)
{
	struct verbs_wq *rq = &srq->rq;
	struct drnic_device *dev = srq->dev;
	uint32_t size = rte_align32pow2(max_wr), prod, i;
	struct verbs_srq_ring *nr, *old;

	nr = rte_zmalloc_socket("drnic_srq_ring", sizeof(*nr), 0, dev->cfg.socket_id);
	if (nr != NULL)
		nr->buf = rte_zmalloc_socket("drnic_wq", (size_t)size * rq->stride,
					     RTE_CACHE_LINE_SIZE, dev->cfg.socket_id);
	if (nr == NULL || nr->buf == NULL) {
		rte_spinlock_unlock(&srq->post_lock);
		rte_free(nr);
		return -ENOMEM;
	}
	nr->mask = size - 1;
	/* Not yet taken: [cons, prod). One taken meanwhile is copied for
	 * nothing (its index is below cons then, never read again). */
	prod = atomic_load_explicit(&rq->prod, memory_order_relaxed);
	for (i = atomic_load_explicit(&rq->cons, memory_order_acquire); i != prod; i++)
		memcpy(nr->buf + (size_t)(i & nr->mask) * rq->stride, verbs_wq_slot(rq, i),
		       rq->stride);
	old = atomic_load_explicit(&srq->ring, memory_order_relaxed);
	rq->buf = nr->buf;
	rq->size = size;
	rq->mask = size - 1;
	srq->max_wr = size;
	atomic_store_explicit(&srq->ring, nr, memory_order_release);
	rte_spinlock_unlock(&srq->post_lock);
	/* No taker holds the old ring once every engine ended its step. */
	if (dev->engines_attached)
		verbs_engine_ops()->dev_fence(dev);
	srq_ring_free(srq, old);
	VERBS_SRQ_LOG(DEBUG, srq, "resized to %u WRs", size);
	return 0;
}

int
drnic_srq_num(struct drnic_srq *srq, uint32_t *srq_num)
{
	if (!handle_live(srq, HANDLE_SRQ) || srq_num == NULL || srq->xrcd == NULL)
		return -EINVAL;
	*srq_num = srq->srq_num;
	return 0;
}

int
drnic_modify_srq(struct drnic_srq *srq, struct drnic_srq_attr *attr, int mask)
{
	struct verbs_wq *rq;
	uint32_t max_wr;

	if (verbs_remote())
		return remote_modify_srq(srq, attr, mask);
	if (!handle_live(srq, HANDLE_SRQ) || attr == NULL ||
	    (mask & ~(DRNIC_SRQ_MAX_WR | DRNIC_SRQ_LIMIT)) != 0)
		return -EINVAL;
	rq = &srq->rq;
	/* Posters wait while it is checked and resized; takers go on. */
	rte_spinlock_lock(&srq->post_lock);
	max_wr = (mask & DRNIC_SRQ_MAX_WR) ? attr->max_wr : srq->max_wr;
	/* The limit against the size it will have. */
	if (max_wr == 0 || max_wr > srq->dev->cfg.max_qp_wr ||
	    max_wr < atomic_load_explicit(&rq->prod, memory_order_relaxed) -
		     atomic_load_explicit(&rq->cons, memory_order_acquire) ||
	    ((mask & DRNIC_SRQ_LIMIT) &&
	     attr->srq_limit > RTE_MAX(rte_align32pow2(max_wr), srq->max_wr))) {
		rte_spinlock_unlock(&srq->post_lock);
		return -EINVAL;
	}
	if (mask & DRNIC_SRQ_LIMIT)
		atomic_store_explicit(&srq->limit, attr->srq_limit, memory_order_release);
	if (max_wr <= srq->max_wr) {
		/* It holds that many already (sizes are rounded up). */
		rte_spinlock_unlock(&srq->post_lock);
		return 0;
	}
	return srq_grow(srq, max_wr);
}

int
drnic_query_srq(struct drnic_srq *srq, struct drnic_srq_attr *attr)
{
	if (!handle_live(srq, HANDLE_SRQ) || attr == NULL)
		return -EINVAL;
	attr->max_wr = srq->max_wr;   /* a resize's store is the caller's */
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = atomic_load_explicit(&srq->limit, memory_order_acquire);
	return 0;
}

int
drnic_destroy_srq(struct drnic_srq *srq)
{
	struct drnic_device *dev;

	if (verbs_remote())
		return remote_destroy_srq(srq);
	if (handle_take(srq, HANDLE_SRQ) < 0)
		return -EINVAL;
	dev = srq->dev;
	if (atomic_load_explicit(&srq->nb_qp, memory_order_acquire) != 0 ||
	    atomic_load_explicit(&srq->events_unacked, memory_order_acquire) != 0) {
		(void)handle_add(srq, HANDLE_SRQ);  /* cannot fail: its slot is free */
		return -EBUSY;
	}
	pthread_mutex_lock(&dev->lock);
	dev->nb_srq--;
	atomic_fetch_sub(&srq->pd->refs, 1);
	if (srq->xrcd != NULL) {
		/* Invisible to the engines first, then they are fenced (below):
		 * no XRC message reaches it any more. */
		atomic_store_explicit(&dev->srq_tab[srq->srq_num], NULL, memory_order_release);
		srq->xrcd->users--;
	}
	pthread_mutex_unlock(&dev->lock);
	if (srq->xrcd != NULL && dev->engines_attached)
		verbs_engine_ops()->dev_fence(dev);
	/* No QP uses it: nothing raises events about it any more. */
	(void)async_purge(srq->async, srq);
	async_put(srq->async);
	if (srq->cq != NULL)
		cq_put(srq->cq);
	VERBS_SRQ_LOG(DEBUG, srq, "destroyed");
	srq_ring_free(srq, atomic_load(&srq->ring));
	rte_free(srq);
	return 0;
}

int
drnic_post_srq_recv(struct drnic_srq *srq, struct drnic_recv_wr *wr,
		    struct drnic_recv_wr **bad_wr)
{
	int rc;

	if (bad_wr != NULL)
		*bad_wr = wr;
	if (srq == NULL || wr == NULL || bad_wr == NULL)
		return -EINVAL;
	rte_spinlock_lock(&srq->post_lock);
	rc = verbs_rq_post(&srq->rq, wr, bad_wr);
	rte_spinlock_unlock(&srq->post_lock);
	if (rc > 0 && srq->dev->cfg.progress == DRNIC_PROGRESS_INLINE)
		verbs_engine_ops()->progress();
	return rc < 0 ? rc : 0;
}

void *
drnic_srq_context(const struct drnic_srq *srq)
{
	return srq == NULL ? NULL : srq->srq_context;
}

void
verbs_srq_event(struct drnic_srq *srq, enum drnic_event_type type)
{
	struct drnic_async_event ev = { .event_type = type };

	ev.element.srq = srq;
	(void)async_raise(srq->async, &ev);   /* counted if lost */
}

bool
verbs_srq_take(struct drnic_srq *srq, struct verbs_recv_wqe *w)
{
	struct verbs_wq *rq = &srq->rq;
	uint32_t cons = atomic_load_explicit(&rq->cons, memory_order_acquire);
	uint32_t prod, limit;

	for (;;) {
		const struct verbs_recv_wqe *s;
		const struct verbs_srq_ring *r;

		prod = atomic_load_explicit(&rq->prod, memory_order_acquire);
		if (prod == cons)
			return false;
		/* The ring after prod: a WQE posted after a resize is in the
		 * new one (struct drnic_srq). */
		r = atomic_load_explicit(&srq->ring, memory_order_acquire);
		/* Copy first: the slot stays the poster's to reuse only after
		 * cons has passed it, which the exchange below makes ours. */
		s = (const void *)(r->buf + (size_t)(cons & r->mask) * rq->stride);
		w->wr_id = s->wr_id;
		w->num_sge = s->num_sge;
		w->length = s->length;
		memcpy(w->sge, s->sge, (size_t)RTE_MIN(s->num_sge, rq->max_sge) *
		       sizeof(w->sge[0]));
		if (atomic_compare_exchange_weak_explicit(&rq->cons, &cons, cons + 1,
							  memory_order_acq_rel,
							  memory_order_acquire))
			break;
	}
	limit = atomic_load_explicit(&srq->limit, memory_order_relaxed);
	if (limit != 0 && prod - (cons + 1) < limit &&
	    atomic_compare_exchange_strong_explicit(&srq->limit, &limit, 0,
						    memory_order_acq_rel, memory_order_relaxed))
		verbs_srq_event(srq, DRNIC_EVENT_SRQ_LIMIT_REACHED);
	return true;
}
