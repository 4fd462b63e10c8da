/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control: engines as objects and what the application's threads ask of
 * them. Owns the engine table (by lcore), the shared mbuf pool, the
 * engines' ports (engine::port[], nb_ports) and QP membership (engine::all,
 * nb_qp, engine_qp::port), and the hooks lib/verbs calls through
 * verbs_set_engine_ops(): attach and detach a device or a QP, modify a QP,
 * fence. Each change reaches the engine as a control message
 * (engine_ctrl_call()) that it handles between two steps
 * (engine_ctrl_handle()).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "engine_priv.h"

#define ENGINE_DOORBELL_SIZE (1u << 17)
#define ENGINE_CTRL_SIZE 64
#define ENGINE_MBUF_CACHE 256
/* A 4096-byte path-MTU frame fits one segment: headroom, headers, payload, ICRC. */
#define ENGINE_MBUF_DATA_ROOM (RTE_PKTMBUF_HEADROOM + 4096 + 256)

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
static struct engine *engine_by_lcore[RTE_MAX_LCORE];
static unsigned int engine_seq;
static struct rte_mempool *engine_pool;

int
drnic_engine_mbuf_count(unsigned int *avail, unsigned int *size)
{
	struct rte_mempool *mp;

	if (avail == NULL || size == NULL)
		return -EINVAL;
	pthread_mutex_lock(&engine_lock);
	mp = engine_pool;
	pthread_mutex_unlock(&engine_lock);
	if (mp == NULL)
		return -ENOENT;
	*avail = rte_mempool_avail_count(mp);
	*size = mp->size;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Control messages                                                         */
/* ------------------------------------------------------------------------ */

static struct engine_port *
engine_find_port(struct engine *eng, const struct drnic_device *dev, uint16_t queue)
{
	unsigned int i;

	for (i = 0; i < eng->nb_ports; i++)
		if (eng->port[i].dev == dev && eng->port[i].queue == queue)
			return &eng->port[i];
	return NULL;
}

/* A port: queue @p queue of @p dev's link. */
static int
engine_ctl_port_add(struct engine *eng, struct drnic_device *dev, uint16_t queue)
{
	struct engine_port *p;

	if (eng->nb_ports == ENGINE_MAX_PORTS)
		return -ENOSPC;
	p = &eng->port[eng->nb_ports];
	memset(p, 0, sizeof(*p));
	TAILQ_INIT(&p->active);
	p->dev = dev;
	p->link = dev->link;
	p->queue = queue;
	p->up = (int8_t)link_is_up(p->link);
	if (queue == 0)
		atomic_store_explicit(&dev->link_up, p->up != 0, memory_order_relaxed);
	eng->nb_ports++;
	return 0;
}

/* The port of @p dev's queue @p queue goes (its QPs have gone). */
static void
engine_ctl_port_del(struct engine *eng, const struct drnic_device *dev, uint16_t queue)
{
	struct engine_qp_list moved;
	struct engine_port *p, *last;
	struct engine_qp *eq;
	unsigned int i;

	for (i = 0; i < eng->nb_ports; i++) {
		p = &eng->port[i];
		if (p->dev != dev || p->queue != queue)
			continue;
		/* Frames still staged (ACKs held for a step among them) get
		 * one try before they are counted lost. */
		p->tx_data = true;
		(void)engine_port_flush(eng, p);
		if (p->tx_n > 0)
			link_drop(p->link, p->queue, DRNIC_LINK_DROP_TX_ERROR, p->tx, p->tx_n);
		/* QPs keep pointers into port[]: none is left on it. The last
		 * port moves into its slot, its active list with it (the
		 * list's head moves: relink). */
		last = &eng->port[eng->nb_ports - 1];
		TAILQ_INIT(&moved);
		TAILQ_CONCAT(&moved, &last->active, active_next);
		*p = *last;
		TAILQ_INIT(&p->active);
		TAILQ_CONCAT(&p->active, &moved, active_next);
		eng->nb_ports--;
		TAILQ_FOREACH(eq, &eng->all, all_next)
			if (eq->port == last)
				eq->port = p;
		return;
	}
}

/* QP @p eq joins the engine, on @p queue's port of its device. */
static int
engine_ctl_qp_add(struct engine *eng, struct engine_qp *eq, uint16_t queue)
{
	eq->port = engine_find_port(eng, eq->qp->dev, queue);
	if (eq->port == NULL)
		return -ENODEV;
	TAILQ_INSERT_TAIL(&eng->all, eq, all_next);
	eng->nb_qp++;
	return 0;
}

/* QP @p eq leaves the engine: nothing of the engine names it afterwards. */
static void
engine_ctl_qp_del(struct engine *eng, struct engine_qp *eq)
{
	/* Doorbells rung before the delete may still name the QP. */
	eq->qp->eng_priv = NULL;
	engine_doorbells(eng, UINT32_MAX);
	if (eq->on_active) {
		engine_qp_unlinger(eq);
		TAILQ_REMOVE(&eq->port->active, eq, active_next);
	}
	timer_cancel(&eng->wheel, &eq->tmr);
	TAILQ_REMOVE(&eng->all, eq, all_next);
	eng->nb_qp--;
}

/* modify_qp's snapshot, between two steps: a frame built from now on
 * follows the new path, and only the new peer reaches the QP. */
static void
engine_ctl_qp_modify(const struct engine_qp_modify *mod)
{
	struct engine_qp *eq = mod->eq;

	eq->path = *mod->path;
	if (eq->resp_init)
		engine_qp_build_template(eq);
}

/* Attach a UD QP to a group, or detach it (between two steps: the next
 * datagram to the group finds the table as the caller left it). */
static int
engine_ctl_mcast(struct engine *eng, const struct engine_mcast_req *req)
{
	unsigned int i;

	for (i = 0; i < eng->nb_mcast; i++)
		if (eng->mcast[i].qp == req->qp &&
		    memcmp(eng->mcast[i].gid, req->gid->raw, 16) == 0)
			break;
	if (!req->attach) {
		if (i < eng->nb_mcast)
			eng->mcast[i] = eng->mcast[--eng->nb_mcast];
		return 0;
	}
	if (i < eng->nb_mcast)
		return 0;
	if (eng->nb_mcast == ENGINE_MAX_MCAST)
		return -ENOMEM;
	eng->mcast[eng->nb_mcast].dev = req->qp->dev;
	memcpy(eng->mcast[eng->nb_mcast].gid, req->gid->raw, 16);
	eng->mcast[eng->nb_mcast].qp = req->qp;
	eng->nb_mcast++;
	return 0;
}

/* One more doorbell ring to take doorbells from. */
static int
engine_ctl_db_ring_add(struct engine *eng, struct rte_ring *r)
{
	if (eng->nb_db_rings == ENGINE_MAX_DB_RINGS)
		return -ENOSPC;
	eng->db_rings[eng->nb_db_rings++] = r;
	return 0;
}

/* Forget doorbell ring @p r. Its QPs are gone (each QP's delete took the
 * doorbells queued for it, engine_ctl_qp_del()); what a killed producer
 * reserved and never published is not read. */
static void
engine_ctl_db_ring_del(struct engine *eng, struct rte_ring *r)
{
	unsigned int i;

	for (i = 0; i < eng->nb_db_rings; i++) {
		if (eng->db_rings[i] == r) {
			eng->db_rings[i] = eng->db_rings[--eng->nb_db_rings];
			return;
		}
	}
}

/* Handle control message @p c between two steps (engine thread) and
 * answer it (c->done). */
void
engine_ctrl_handle(struct engine *eng, struct engine_ctrl *c)
{
	c->rc = 0;
	switch (c->type) {
	case ENGINE_CTRL_PORT_ADD:
		c->rc = engine_ctl_port_add(eng, c->arg, c->queue);
		break;
	case ENGINE_CTRL_PORT_DEL:
		engine_ctl_port_del(eng, c->arg, c->queue);
		break;
	case ENGINE_CTRL_QP_ADD:
		c->rc = engine_ctl_qp_add(eng, c->arg, c->queue);
		break;
	case ENGINE_CTRL_QP_DEL:
		engine_ctl_qp_del(eng, c->arg);
		break;
	case ENGINE_CTRL_QP_MODIFY:
		engine_ctl_qp_modify(c->arg);
		break;
	case ENGINE_CTRL_MCAST:
		c->rc = engine_ctl_mcast(eng, c->arg);
		break;
	case ENGINE_CTRL_FENCE:
		break;
	case ENGINE_CTRL_DB_RING_ADD:
		c->rc = engine_ctl_db_ring_add(eng, c->arg);
		break;
	case ENGINE_CTRL_DB_RING_DEL:
		engine_ctl_db_ring_del(eng, c->arg);
		break;
	}
	/* Whatever it completed is told before the caller goes on (and may
	 * destroy a CQ). */
	engine_cq_notify(eng);
	atomic_store_explicit(&c->done, 1, memory_order_release);
}

/* Send a control message and wait until the engine handled it. */
static int
engine_ctrl_call(struct engine *eng, enum engine_ctrl_type type, void *arg, uint16_t queue)
{
	struct engine_ctrl c = { .type = type, .arg = arg, .queue = queue };
	unsigned int spins = 0;

	atomic_init(&c.done, 0);
	while (rte_ring_mp_enqueue(eng->ctrl, &c) != 0)
		rte_pause();
	while (!atomic_load_explicit(&c.done, memory_order_acquire)) {
		if (eng->inline_mode) {
			if (!atomic_flag_test_and_set_explicit(&eng->running, memory_order_acquire)) {
				engine_run_once(eng);
				atomic_flag_clear_explicit(&eng->running, memory_order_release);
			}
		} else if (++spins > 1000) {
			sched_yield();
		} else {
			rte_pause();
		}
	}
	return c.rc;
}

/* ------------------------------------------------------------------------ */
/* Engine objects                                                           */
/* ------------------------------------------------------------------------ */

static int
engine_pool_get(const struct drnic_config *cfg)
{
	if (engine_pool != NULL)
		return 0;
	engine_pool = rte_pktmbuf_pool_create("drnic_mbuf", cfg->nb_mbufs, ENGINE_MBUF_CACHE, 0,
					      ENGINE_MBUF_DATA_ROOM, cfg->socket_id);
	return engine_pool == NULL ? -rte_errno : 0;
}

static void
engine_free(struct engine *eng)
{
	if (eng->mcache_n > 0)
		rte_pktmbuf_free_bulk(eng->mcache, eng->mcache_n);
	eng->mcache_n = 0;
	rte_ring_free(eng->doorbell);
	rte_ring_free(eng->ctrl);
	rte_free(eng);
}

static struct engine *
engine_new(unsigned int lcore, bool inline_mode, int socket)
{
	char name[RTE_RING_NAMESIZE];
	struct engine *eng;
	unsigned int id = engine_seq++;

	eng = rte_zmalloc_socket("drnic_engine", sizeof(*eng), RTE_CACHE_LINE_SIZE, socket);
	if (eng == NULL)
		return NULL;
	eng->id = id;
	eng->lcore = lcore;
	eng->inline_mode = inline_mode;
	eng->pool = engine_pool;
	engine_clock_init(&eng->clock);
	timer_wheel_init(&eng->wheel, engine_now_ns(eng));
	atomic_flag_clear(&eng->running);
	atomic_init(&eng->stop, false);
	TAILQ_INIT(&eng->all);
	snprintf(name, sizeof(name), "drnic_db%u", id);
	eng->doorbell = rte_ring_create(name, ENGINE_DOORBELL_SIZE, socket, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "drnic_ctl%u", id);
	eng->ctrl = rte_ring_create(name, ENGINE_CTRL_SIZE, socket, RING_F_SC_DEQ);
	if (eng->doorbell == NULL || eng->ctrl == NULL) {
		engine_free(eng);
		return NULL;
	}
	return eng;
}

static struct engine *
engine_get(const struct drnic_config *cfg, unsigned int idx, int *rc)
{
	struct engine *eng;
	unsigned int lcore;
	int err;

	if (cfg->progress == DRNIC_PROGRESS_INLINE) {
		eng = engine_new(RTE_MAX_LCORE, true, cfg->socket_id);
		if (eng == NULL) {
			*rc = -ENOMEM;
			return NULL;
		}
		err = engine_inline_add(eng);
		if (err == 0)
			return eng;
		engine_free(eng);
		*rc = err;
		return NULL;
	}
	lcore = cfg->engine_lcores[idx];
	eng = engine_by_lcore[lcore];
	if (eng != NULL)
		return eng;
	eng = engine_new(lcore, false, (int)rte_lcore_to_socket_id(lcore));
	if (eng == NULL) {
		*rc = -ENOMEM;
		return NULL;
	}
	if (rte_eal_remote_launch(engine_main, eng, lcore) != 0) {
		engine_free(eng);
		*rc = -EBUSY;
		return NULL;
	}
	engine_by_lcore[lcore] = eng;
	return eng;
}

static void
engine_put(struct engine *eng)
{
	if (--eng->refs > 0)
		return;
	if (eng->inline_mode) {
		engine_inline_del(eng);
	} else {
		atomic_store_explicit(&eng->stop, true, memory_order_release);
		rte_eal_wait_lcore(eng->lcore);
		engine_by_lcore[eng->lcore] = NULL;
	}
	engine_free(eng);
}

/* ------------------------------------------------------------------------ */
/* Hooks for lib/verbs                                                      */
/* ------------------------------------------------------------------------ */

static void
engine_dev_detach_n(struct drnic_device *dev, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct engine *eng = dev->eng[i].engine;

		engine_ctrl_call(eng, ENGINE_CTRL_PORT_DEL, dev, (uint16_t)i);
		engine_put(eng);
		dev->eng[i].engine = NULL;
	}
}

static int
engine_dev_attach(struct drnic_device *dev)
{
	unsigned int i;
	int rc = 0;

	pthread_mutex_lock(&engine_lock);
	rc = engine_pool_get(&dev->cfg);
	if (rc < 0) {
		pthread_mutex_unlock(&engine_lock);
		return rc;
	}
	for (i = 0; i < dev->nb_engines; i++) {
		struct engine *eng = engine_get(&dev->cfg, i, &rc);

		if (eng == NULL)
			break;
		eng->refs++;
		rc = engine_ctrl_call(eng, ENGINE_CTRL_PORT_ADD, dev, (uint16_t)i);
		if (rc < 0) {
			engine_put(eng);
			break;
		}
		dev->eng[i].engine = eng;
		dev->eng[i].doorbell = eng->doorbell;
		dev->eng[i].link_queue = (uint16_t)i;
	}
	if (rc < 0)
		engine_dev_detach_n(dev, i);
	pthread_mutex_unlock(&engine_lock);
	return rc;
}

static void
engine_dev_detach(struct drnic_device *dev)
{
	pthread_mutex_lock(&engine_lock);
	engine_dev_detach_n(dev, dev->nb_engines);
	pthread_mutex_unlock(&engine_lock);
}

/* Room for the copy of a WQE taken from an SRQ: a QP on an SRQ, or an XRC
 * target (whose messages take from any XRC SRQ of its domain); 0 else. */
static size_t
engine_qp_srq_wqe_len(const struct drnic_qp *qp)
{
	if (qp->srq != NULL)
		return verbs_recv_wqe_size(qp->srq->rq.max_sge);
	return qp->type == DRNIC_QPT_XRC_RECV ? verbs_recv_wqe_size(VERBS_MAX_SGE) : 0;
}

static int
engine_qp_attach(struct drnic_qp *qp)
{
	struct engine *eng = qp->dev->eng[qp->engine].engine;
	struct engine_qp *eq;
	size_t rd_len, srq_len;
	int rc;

	if (eng->nb_qp + 1 >= ENGINE_DOORBELL_SIZE)
		return -ENOMEM;
	eq = rte_zmalloc_socket("drnic_engine_qp", sizeof(*eq), RTE_CACHE_LINE_SIZE,
				qp->dev->cfg.socket_id);
	if (eq == NULL)
		return -ENOMEM;
	eq->resp.rd_mask = rte_align32pow2(2 * RTE_MAX(qp->dev->cfg.max_rd_atomic, 1u)) - 1;
	eq->resp.rtx_mask = 4 * (eq->resp.rd_mask + 1) - 1;
	/* The responder's READ/atomic resources and responses, and for a QP
	 * on an SRQ its copy of the WQE taken, in one block. */
	rd_len = sizeof(eq->resp.rd[0]) * (eq->resp.rd_mask + 1) +
		 sizeof(eq->resp.rtx[0]) * (eq->resp.rtx_mask + 1);
	srq_len = engine_qp_srq_wqe_len(qp);
	/* ... and for a UD QP the senders it heard. */
	eq->resp.rd = rte_zmalloc_socket("drnic_engine_rd",
					 rd_len + srq_len +
					 (qp->type == DRNIC_QPT_UD ?
					  ENGINE_UD_SRC * sizeof(struct resp_ud_src) : 0),
					 RTE_CACHE_LINE_SIZE, qp->dev->cfg.socket_id);
	if (eq->resp.rd == NULL) {
		rte_free(eq);
		return -ENOMEM;
	}
	eq->resp.rtx = (struct resp_tx *)(void *)(eq->resp.rd + eq->resp.rd_mask + 1);
	if (engine_qp_srq_wqe_len(qp) > 0)
		eq->resp.srq_wqe = (struct verbs_recv_wqe *)(void *)((uint8_t *)eq->resp.rd + rd_len);
	if (qp->type == DRNIC_QPT_UD)
		eq->resp.ud_src = (struct resp_ud_src *)(void *)((uint8_t *)eq->resp.rd + rd_len +
								  srq_len);
	engine_qp_bind(eq, qp);
	eq->eng = eng;
	eq->uc = qp->type == DRNIC_QPT_UC;
	eq->ud = qp->type == DRNIC_QPT_UD;
	eq->xrc = qp->type == DRNIC_QPT_XRC_SEND || qp->type == DRNIC_QPT_XRC_RECV;
	eq->req.idx = eq->comp.idx = atomic_load(&qp->sq.cons);
	eq->resp.rq_idx = atomic_load(&qp->rq.cons);
	qp->eng_priv = eq;
	rc = engine_ctrl_call(eng, ENGINE_CTRL_QP_ADD, eq, qp->dev->eng[qp->engine].link_queue);
	if (rc < 0) {
		qp->eng_priv = NULL;
		rte_free(eq->resp.rd);
		rte_free(eq);
	}
	return rc;
}

static void
engine_qp_detach(struct drnic_qp *qp)
{
	struct engine_qp *eq = qp->eng_priv;

	if (eq == NULL)
		return;
	engine_ctrl_call(eq->eng, ENGINE_CTRL_QP_DEL, eq, 0);
	qp->eng_priv = NULL;
	rte_free(eq->resp.rd);
	rte_free(eq);
}

/* Each engine of @p dev answers a control message between two steps: the
 * steps that were running when this was called have ended. */
static void
engine_dev_fence(struct drnic_device *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nb_engines; i++)
		if (dev->eng[i].engine != NULL)
			engine_ctrl_call(dev->eng[i].engine, ENGINE_CTRL_FENCE, dev, 0);
}

/* modify_qp's snapshot of the QP's path: the engine takes it between two
 * steps; when this returns it uses it. */
static void
engine_qp_modify(struct drnic_qp *qp, const struct verbs_qp_path *path)
{
	struct engine_qp_modify mod = { .eq = qp->eng_priv, .path = path };

	if (mod.eq != NULL)
		(void)engine_ctrl_call(mod.eq->eng, ENGINE_CTRL_QP_MODIFY, &mod, 0);
}

/* A UD QP joins or leaves a multicast group on its engine. */
static int
engine_qp_mcast(struct drnic_qp *qp, const union drnic_gid *gid, bool attach)
{
	struct engine_mcast_req req = { .qp = qp, .gid = gid, .attach = attach };

	return engine_ctrl_call(qp->dev->eng[qp->engine].engine, ENGINE_CTRL_MCAST, &req, 0);
}

/* drnicd: doorbell ring @p r joins engine @p idx of @p dev, or leaves it;
 * when this returns the engine takes its doorbells, or never reads it
 * again. */
static int
engine_db_ring(struct drnic_device *dev, unsigned int idx, struct rte_ring *r, bool add)
{
	struct engine *eng;

	if (idx >= dev->nb_engines || r == NULL)
		return -EINVAL;
	eng = dev->eng[idx].engine;
	return engine_ctrl_call(eng, add ? ENGINE_CTRL_DB_RING_ADD : ENGINE_CTRL_DB_RING_DEL, r, 0);
}

static const struct verbs_engine_ops engine_ops = {
	.dev_attach = engine_dev_attach,
	.dev_detach = engine_dev_detach,
	.qp_attach = engine_qp_attach,
	.qp_detach = engine_qp_detach,
	.qp_modify = engine_qp_modify,
	.qp_mcast = engine_qp_mcast,
	.dev_fence = engine_dev_fence,
	.db_ring = engine_db_ring,
	.progress = engine_progress_all,
};

static void __attribute__((constructor, used))
engine_install(void)
{
	verbs_set_engine_ops(&engine_ops);
}
