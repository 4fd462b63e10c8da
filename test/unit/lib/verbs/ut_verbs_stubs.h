/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef UT_VERBS_STUBS_H
#define UT_VERBS_STUBS_H

/*
 * What lib/verbs sources call outside themselves, stubbed for unit tests:
 * rte_malloc (heap, live-block count), lib/cq's engine side, the engine hook
 * table, and a fake device with one engine and a real (EAL-free) doorbell ring.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "lib/internal/verbs_objects.h"

int verbs_logtype;

/* rte_malloc without the EAL. */
static long ut_live;
static int ut_fail_alloc;   /* fail the next allocation when set */

void *
rte_zmalloc_socket(const char *type, size_t size, unsigned int align, int socket)
{
	void *p;

	RTE_SET_USED(type);
	RTE_SET_USED(socket);
	if (ut_fail_alloc) {
		ut_fail_alloc = 0;
		return NULL;
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	p = aligned_alloc(align, RTE_ALIGN_CEIL(size, align));
	if (p != NULL) {
		memset(p, 0, size);
		ut_live++;
	}
	return p;
}

void
rte_free(void *p)
{
	if (p != NULL) {
		ut_live--;
		free(p);
	}
}

/* lib/cq, engine side. */
struct ut_cq {
	int vector;
	int users;
	int (*progress)(void *);
};

static int ut_async_users;
static int ut_async_raised;
static int ut_async_unread;            /* raised, not purged */
static struct drnic_async_event ut_last_event;

int
cq_get(struct drnic_cq *cq)
{
	((struct ut_cq *)cq)->users++;
	return 0;
}

void
cq_put(struct drnic_cq *cq)
{
	((struct ut_cq *)cq)->users--;
}

int
cq_comp_vector(const struct drnic_cq *cq)
{
	return ((const struct ut_cq *)cq)->vector;
}

void
cq_set_progress(struct drnic_cq *cq, int (*fn)(void *arg), void *arg)
{
	RTE_SET_USED(arg);
	((struct ut_cq *)cq)->progress = fn;
}

int
async_get(struct drnic_async_queue *q)
{
	RTE_SET_USED(q);
	ut_async_users++;
	return 0;
}

void
async_put(struct drnic_async_queue *q)
{
	RTE_SET_USED(q);
	ut_async_users--;
}

int
async_raise(struct drnic_async_queue *q, const struct drnic_async_event *ev)
{
	RTE_SET_USED(q);
	ut_async_raised++;
	ut_async_unread++;
	ut_last_event = *ev;
	return 0;
}

/* Drops every unread event (the stub keeps only the last one). */
unsigned int
async_purge(struct drnic_async_queue *q, const void *obj)
{
	unsigned int n = ut_async_unread;

	RTE_SET_USED(q);
	RTE_SET_USED(obj);
	ut_async_unread = 0;
	return n;
}

/* Engine hooks: count what lib/verbs asks for. */
static int ut_qp_attached, ut_qp_detached, ut_progress_calls;

static int
ut_qp_attach(struct drnic_qp *qp)
{
	RTE_SET_USED(qp);
	ut_qp_attached++;
	return 0;
}

static void
ut_qp_detach(struct drnic_qp *qp)
{
	RTE_SET_USED(qp);
	ut_qp_detached++;
}

/* The last path modify_qp sent the engine, and the QP's state then. */
static int ut_qp_modified;
static struct verbs_qp_path ut_last_path;
static unsigned int ut_state_at_modify;

static void
ut_qp_modify(struct drnic_qp *qp, const struct verbs_qp_path *path)
{
	ut_qp_modified++;
	ut_last_path = *path;
	ut_state_at_modify = atomic_load(&qp->state);
}

static int ut_fences;
/* A test's engines: what waits for them to end their steps (NULL: nothing). */
static void (*ut_fence_hook)(void);

static void
ut_dev_fence(struct drnic_device *dev)
{
	RTE_SET_USED(dev);
	ut_fences++;
	if (ut_fence_hook != NULL)
		ut_fence_hook();
}

static int
ut_progress(void)
{
	ut_progress_calls++;
	return 0;
}

/* Multicast attachments lib/verbs asked for (+1 attach, -1 detach). */
static int ut_mcast_attached;

static int
ut_qp_mcast(struct drnic_qp *qp, const union drnic_gid *gid, bool attach)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(gid);
	ut_mcast_attached += attach ? 1 : -1;
	return 0;
}

/* What verbs_privileged() answers (device.c reads CAP_NET_RAW). */
static bool ut_privileged = true;

bool
verbs_privileged(void)
{
	return ut_privileged;
}

static const struct verbs_engine_ops ut_eops = {
	.qp_mcast = ut_qp_mcast,
	.qp_attach = ut_qp_attach,
	.qp_detach = ut_qp_detach,
	.qp_modify = ut_qp_modify,
	.dev_fence = ut_dev_fence,
	.progress = ut_progress,
};

const struct verbs_engine_ops *
verbs_engine_ops(void)
{
	return &ut_eops;
}

/* Fake device: one port, GID 10.0.0.1, active MTU 1024, loopback-ish link
 * whose resolve() answers 02:00:00:00:00:02. */
static int ut_resolve_eagain;          /* resolve() answers -EAGAIN this many times */
static int ut_resolve_rc;              /* then this (0: the MAC) */
static int ut_resolve_calls;

static int
ut_link_resolve(const struct drnic_link *l, const uint8_t gid[16], uint8_t mac[6])
{
	RTE_SET_USED(l);
	RTE_SET_USED(gid);
	ut_resolve_calls++;
	if (ut_resolve_eagain > 0) {
		ut_resolve_eagain--;
		return -EAGAIN;
	}
	if (ut_resolve_rc != 0)
		return ut_resolve_rc;
	memcpy(mac, (const uint8_t[6]){ 2, 0, 0, 0, 0, 2 }, 6);
	return 0;
}

static struct link_ops ut_link_ops = { .name = "ut", .resolve = ut_link_resolve };
static struct drnic_link ut_link = { .ops = &ut_link_ops, .name = "ut" };

static struct rte_ring *
ut_ring_new(unsigned int count)
{
	ssize_t sz = rte_ring_get_memsize(count);
	struct rte_ring *r = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL((size_t)sz, 64));

	rte_ring_init(r, "ut_db", count, RING_F_SC_DEQ);
	return r;
}

static struct drnic_device *
ut_dev_new(unsigned int nb_engines, unsigned int max_qp)
{
	struct drnic_device *dev = calloc(1, sizeof(*dev));
	unsigned int i;

	snprintf(dev->cfg.name, sizeof(dev->cfg.name), "utdev");
	dev->cfg.nb_engines = nb_engines;
	dev->cfg.max_qp = max_qp;
	dev->cfg.max_qp_wr = 1024;
	dev->cfg.max_sge = 4;
	dev->cfg.max_inline_data = 64;
	dev->cfg.max_mr = 16;
	dev->cfg.max_pd = 4;
	dev->cfg.max_rd_atomic = 16;
	dev->cfg.socket_id = -1;
	dev->nb_engines = nb_engines;
	dev->active_mtu = DRNIC_MTU_1024;
	dev->max_mtu = DRNIC_MTU_4096;
	dev->nb_gids = 1;
	dev->gid[0].raw[10] = 0xFF;
	dev->gid[0].raw[11] = 0xFF;
	dev->gid[0].raw[12] = 10;
	dev->gid[0].raw[15] = 1;
	dev->gid_is_v4[0] = 1;
	dev->link = &ut_link;
	dev->qp_tab_size = 64;
	dev->qp_mask = 63;
	dev->qp_tab = calloc(64, sizeof(dev->qp_tab[0]));
	dev->qp_next = VERBS_FIRST_QPN;
	dev->srq_tab_size = 16;
	dev->srq_mask = 15;
	dev->srq_tab = calloc(16, sizeof(dev->srq_tab[0]));
	dev->srq_next = 1;
	dev->mr_tab_size = dev->cfg.max_mr + 1;
	/* Zeroed: no slot free until mr.c's verbs_mr_table_setup() (mr_ut). */
	dev->mr_tab = calloc(dev->mr_tab_size, sizeof(dev->mr_tab[0]));
	for (i = 0; i < nb_engines; i++)
		dev->eng[i].doorbell = ut_ring_new(64);
	pthread_mutex_init(&dev->lock, NULL);
	return dev;
}

static void
ut_dev_free(struct drnic_device *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nb_engines; i++)
		free(dev->eng[i].doorbell);
	free(dev->qp_tab);
	free(dev->srq_tab);
	free(dev->mr_tab);
	free(dev);
}

#endif
