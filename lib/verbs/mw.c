/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows (ibv_alloc_mw(3), ibv_bind_mw(3), IBA 10.6.7): the window
 * table, allocation, the bind and invalidation rules that engines apply when
 * a BIND_MW, LOCAL_INV or SEND with Invalidate executes, and the remote
 * access check of a window's rkey.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "verbs_objects.h"
#include "verbs_remote.h"

#define MW_KEY_BYTE 0xFFu
#define MW_RIGHTS (DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ | \
		   DRNIC_ACCESS_REMOTE_ATOMIC)

void
verbs_mw_table_setup(struct drnic_device *dev)
{
	uint32_t i, n = dev->mw_tab_size;

	dev->mw_idx_bits = (uint8_t)rte_log2_u32(n);   /* rounds up */
	dev->mw_idx_mask = (UINT32_C(1) << dev->mw_idx_bits) - 1;
	for (i = 0; i < n; i++)
		rte_spinlock_init(&dev->mw_tab[i].lock);
	/* Slots 1..n-1 (slot 0 would make a key of index 0 valid). */
	for (i = 1; i < n; i++)
		dev->mw_tab[i].next_free = i + 1 < n ? i + 1 : 0;
	dev->mw_free = n > 1 ? 1 : 0;
	dev->mw_free_last = n > 1 ? n - 1 : 0;
}

/* The slot a window key names, or NULL (not a window key, index out). */
static struct verbs_mw_slot *
mw_slot(const struct drnic_device *dev, uint32_t key)
{
	uint32_t idx = (key >> 8) & dev->mw_idx_mask;

	if (!(key & VERBS_MW_KEY_BIT) || idx == 0 || idx >= dev->mw_tab_size)
		return NULL;
	return &dev->mw_tab[idx];
}

/* A change of slot @p s begins / ends (under its lock): readers that
 * overlap it see an odd or changed seq and fail. */
static void
mw_change_begin(struct verbs_mw_slot *s)
{
	atomic_store_explicit(&s->key, 0, memory_order_relaxed);
	atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void
mw_change_end(struct verbs_mw_slot *s)
{
	atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
			      memory_order_release);
	if (s->bound)
		atomic_store_explicit(&s->key, s->cur_key, memory_order_release);
}

/* The window lets go of its MR (under its lock, inside a change). */
static void
mw_unbind(const struct drnic_device *dev, struct verbs_mw_slot *s)
{
	if (s->bound)
		atomic_fetch_sub(&dev->mr_tab[s->mr_key & dev->mr_idx_mask].mw_binds, 1);
	s->bound = 0;
	s->qpn = 0;
	s->access = 0;
	s->addr = 0;
	s->length = 0;
	s->mr_key = 0;
}

struct drnic_mw *
drnic_alloc_mw(struct drnic_pd *pd, enum drnic_mw_type type)
{
	struct drnic_device *dev;
	struct verbs_mw_slot *s;
	struct drnic_mw *mw;
	uint32_t idx, gen;

	if (verbs_remote())
		return remote_alloc_mw(pd, type);
	if (!handle_live(pd, HANDLE_PD) || (type != DRNIC_MW_TYPE_1 && type != DRNIC_MW_TYPE_2)) {
		rte_errno = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	mw = rte_zmalloc_socket("drnic_mw", sizeof(*mw), 0, dev->cfg.socket_id);
	if (mw == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	idx = dev->mw_free;
	if (idx == 0 || handle_add(mw, HANDLE_MW) < 0) {
		pthread_mutex_unlock(&dev->lock);
		rte_free(mw);
		rte_errno = ENOMEM;
		return NULL;
	}
	s = &dev->mw_tab[idx];
	dev->mw_free = s->next_free;
	if (dev->mw_free == 0)
		dev->mw_free_last = 0;
	gen = verbs_key_gen(dev, idx, s->uses++, 23 - dev->mw_idx_bits);
	rte_spinlock_lock(&s->lock);
	mw_change_begin(s);
	s->tag = VERBS_MW_KEY_BIT | gen << (dev->mw_idx_bits + 8) | idx << 8;
	s->cur_key = s->tag;
	s->type = (uint8_t)type;
	s->pd = pd;
	mw_unbind(dev, s);
	mw_change_end(s);
	rte_spinlock_unlock(&s->lock);
	mw->pd = pd;
	mw->rkey = s->tag;
	mw->idx = idx;
	mw->type = (uint8_t)type;
	atomic_fetch_add(&pd->refs, 1);
	dev->nb_mw++;
	pthread_mutex_unlock(&dev->lock);
	return mw;
}

int
drnic_dealloc_mw(struct drnic_mw *mw)
{
	struct drnic_device *dev;
	struct verbs_mw_slot *s;

	if (verbs_remote())
		return remote_dealloc_mw(mw);
	/* Not live (NULL, freed already): nothing behind it is read. */
	if (handle_take(mw, HANDLE_MW) < 0)
		return -EINVAL;
	dev = mw->pd->dev;
	s = &dev->mw_tab[mw->idx];
	/* Its rkey fails from here; a queued bind of it finds no window. */
	rte_spinlock_lock(&s->lock);
	mw_change_begin(s);
	mw_unbind(dev, s);
	s->tag = 0;
	s->cur_key = 0;
	s->pd = NULL;
	mw_change_end(s);
	rte_spinlock_unlock(&s->lock);
	/* An engine may be between its check of the key and its access:
	 * once every engine has ended its step, none uses the window. */
	if (dev->engines_attached)
		verbs_engine_ops()->dev_fence(dev);
	pthread_mutex_lock(&dev->lock);
	/* Last in the FIFO: its next tag comes as late as possible. */
	s->next_free = 0;
	if (dev->mw_free_last != 0)
		dev->mw_tab[dev->mw_free_last].next_free = mw->idx;
	else
		dev->mw_free = mw->idx;
	dev->mw_free_last = mw->idx;
	dev->nb_mw--;
	atomic_fetch_sub(&mw->pd->refs, 1);
	pthread_mutex_unlock(&dev->lock);
	rte_free(mw);
	return 0;
}

uint32_t
drnic_mw_rkey(const struct drnic_mw *mw)
{
	return mw != NULL ? mw->rkey : 0;
}

enum drnic_mw_type
drnic_mw_type(const struct drnic_mw *mw)
{
	return mw != NULL ? (enum drnic_mw_type)mw->type : (enum drnic_mw_type)0;
}

/*
 * Take a reference on the MR of @p lkey for a window of @p pd over
 * [addr, addr + len) with rights @p rights: registered now, of the PD,
 * with MW_BIND (C10-73), LOCAL_WRITE when the window lets anything write
 * (C10-74), covering the range (C10-75). The reference is counted before
 * the key is checked: drnic_dereg_mr() clears the key before it looks at
 * the count, so either it sees the bind or the bind sees the key gone.
 */
static int
mw_mr_take(const struct drnic_device *dev, const struct drnic_pd *pd, uint32_t lkey,
	   uint64_t addr, uint64_t len, uint32_t rights)
{
	uint32_t idx = lkey & dev->mr_idx_mask, need = DRNIC_ACCESS_MW_BIND;
	struct verbs_mr_slot *m;
	uint8_t *va;

	if ((lkey & VERBS_MW_KEY_BIT) || idx == 0 || idx >= dev->mr_tab_size)
		return -EINVAL;
	if (rights & (DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_ATOMIC))
		need |= DRNIC_ACCESS_LOCAL_WRITE;
	m = &dev->mr_tab[idx];
	atomic_fetch_add_explicit(&m->mw_binds, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&m->key, memory_order_seq_cst) != lkey ||
	    verbs_mr_check_remote((struct drnic_device *)dev, pd, lkey, addr, len, need,
				  &va) < 0) {
		atomic_fetch_sub(&m->mw_binds, 1);
		return -EINVAL;
	}
	return 0;
}

int
verbs_mw_bind(const struct drnic_qp *qp, const struct verbs_send_wqe *w)
{
	const struct drnic_device *dev = qp->dev;
	uint32_t id = w->imm_data, nkey = w->rkey, lkey = (uint32_t)w->swap;
	uint32_t rights = (uint32_t)(w->swap >> 32);
	uint64_t addr = w->remote_addr, len = w->compare_add;
	struct verbs_mw_slot *s = mw_slot(dev, id);
	int rc = -EINVAL;

	if (s == NULL)
		return -EINVAL;
	rte_spinlock_lock(&s->lock);
	/* The window is still the one posted for (not deallocated), and the
	 * new rkey differs from its own only in the key byte. */
	if (s->tag == 0 || s->tag != (id & ~MW_KEY_BYTE) || (nkey & ~MW_KEY_BYTE) != s->tag)
		goto out;
	/* A window, its QP and its MR are of one PD (C10-72). */
	if (s->pd != qp->pd)
		goto out;
	/* Type 1 by drnic_bind_mw() only, type 2 by a BIND_MW WR only. */
	if ((s->type == DRNIC_MW_TYPE_1) != (w->mw_type1 != 0))
		goto out;
	/* A type 2 window is bound only while free (o10-37.2.30), and only to
	 * memory: it is freed by invalidation, never by a bind (o10-37.2.40). */
	if (s->type == DRNIC_MW_TYPE_2 && (s->bound || len == 0))
		goto out;
	if ((rights & ~MW_RIGHTS) != 0)
		goto out;
	if (len > 0 && mw_mr_take(dev, qp->pd, lkey, addr, len, rights) < 0)
		goto out;
	mw_change_begin(s);
	mw_unbind(dev, s);     /* a type 1 window's previous binding */
	s->cur_key = nkey;
	if (len > 0) {
		s->bound = 1;
		s->access = rights;
		s->addr = addr;
		s->length = len;
		s->mr_key = lkey;
		s->qpn = s->type == DRNIC_MW_TYPE_2 ? qp->qp_num : 0;
	}
	mw_change_end(s);
	rc = 0;
out:
	rte_spinlock_unlock(&s->lock);
	return rc;
}

int
verbs_mw_invalidate(const struct drnic_qp *qp, uint32_t rkey, bool remote)
{
	struct verbs_mw_slot *s = mw_slot(qp->dev, rkey);
	int rc = -EINVAL;

	/* MRs cannot be invalidated (drnic has no fast-registration MRs). */
	if (s == NULL)
		return -EINVAL;
	rte_spinlock_lock(&s->lock);
	/* A bound type 2 window with that very key (a type 1 window is not
	 * invalidated: o10-37.2.26), of the QP's PD; remotely only through
	 * the QP it is bound to. */
	if (s->tag == 0 || s->type != DRNIC_MW_TYPE_2 || !s->bound || s->cur_key != rkey ||
	    s->pd != qp->pd || (remote && s->qpn != qp->qp_num))
		goto out;
	mw_change_begin(s);
	mw_unbind(qp->dev, s);
	mw_change_end(s);
	rc = 0;
out:
	rte_spinlock_unlock(&s->lock);
	return rc;
}

void
verbs_mw_qp_destroyed(const struct drnic_qp *qp)
{
	struct drnic_device *dev = qp->dev;
	uint32_t i;

	for (i = 1; i < dev->mw_tab_size; i++) {
		struct verbs_mw_slot *s = &dev->mw_tab[i];

		/* A racy first look: only a window bound to this QP matters,
		 * and no engine binds to a QP that is off its engine. */
		if (s->qpn != qp->qp_num || s->pd != qp->pd)
			continue;
		rte_spinlock_lock(&s->lock);
		if (s->bound && s->type == DRNIC_MW_TYPE_2 && s->qpn == qp->qp_num &&
		    s->pd == qp->pd) {
			mw_change_begin(s);
			mw_unbind(dev, s);
			mw_change_end(s);
		}
		rte_spinlock_unlock(&s->lock);
	}
}

bool
verbs_mw_key_live(const struct drnic_device *dev, uint32_t key)
{
	struct verbs_mw_slot *s = mw_slot(dev, key);

	return s != NULL && atomic_load_explicit(&s->key, memory_order_acquire) == key &&
	       verbs_mr_key_live(dev, s->mr_key);
}

/* A window's rkey for an access by a request of @p qp, in PD @p qpd
 * (verbs_rkey_check()). */
static int
mw_check(const struct drnic_qp *qp, const struct drnic_pd *qpd, uint32_t key, uint64_t addr,
	 uint64_t len, uint32_t access, uint8_t **va_out)
{
	const struct drnic_device *dev = qp->dev;
	struct verbs_mw_slot *s = mw_slot(dev, key);
	uint32_t seq, acc, qpn, mr_key;
	const struct drnic_pd *pd;
	uint64_t start, wlen;

	if (s == NULL)
		return -ENOENT;
	seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	if ((seq & 1) || atomic_load_explicit(&s->key, memory_order_relaxed) != key)
		return -ENOENT;
	acc = s->access;
	qpn = s->qpn;
	mr_key = s->mr_key;
	pd = s->pd;
	start = s->addr;
	wlen = s->length;
	/* Seqlock: nothing changed the window while it was read. */
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
		return -ENOENT;
	/* Type 2: only through the QP it is bound to. */
	if (pd != qpd || (qpn != 0 && qpn != qp->qp_num) || (acc & access) != access)
		return -EPERM;
	if (addr < start || len > wlen || addr - start > wlen - len)
		return -ERANGE;
	/* The MR under it is still registered; the window names its bytes
	 * as the MR's keys do (its iova), the engine reaches them where the
	 * MR is mapped (its window, when pinned). */
	if (verbs_mr_check_remote((struct drnic_device *)dev, pd, mr_key, addr, len, 0,
				  va_out) < 0)
		return -ENOENT;
	return 0;
}

int
verbs_rkey_check(const struct drnic_qp *qp, const struct drnic_pd *pd, uint32_t key,
		 uint64_t addr, uint64_t len, uint32_t access, uint8_t **va_out)
{
	if (likely(!(key & VERBS_MW_KEY_BIT)))
		return verbs_mr_check_remote(qp->dev, pd, key, addr, len, access, va_out);
	return mw_check(qp, pd, key, addr, len, access, va_out);
}
