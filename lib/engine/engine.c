/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engines: the lcore loop (or inline steps), doorbells and the active list,
 * receive dispatch, transmit staging, completions, control messages, and the
 * hooks lib/verbs calls through verbs_set_engine_ops().
 *
 * One step of an engine:
 *   control ring -> doorbell ring -> active list -> link rx (responder,
 *   completer) -> active QPs (responder output, requester) -> link tx.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "engine_priv.h"

RTE_LOG_REGISTER_SUFFIX(engine_logtype, engine, NOTICE);

#define ENGINE_DOORBELL_SIZE (1u << 17)
#define ENGINE_CTRL_SIZE 64
#define ENGINE_MAX_INLINE 64
#define ENGINE_MBUF_CACHE 256
/* A 4096-byte path-MTU frame fits one segment: headroom, headers, payload, ICRC. */
#define ENGINE_MBUF_DATA_ROOM (RTE_PKTMBUF_HEADROOM + 4096 + 256)

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
static struct engine *engine_by_lcore[RTE_MAX_LCORE];
/* Inline engines; read without the lock by engine_progress_all(), which
 * looks at the first engine_inline_top slots only. */
static _Atomic(struct engine *) engine_inline[ENGINE_MAX_INLINE];
static atomic_uint engine_inline_top;
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
/* Clock                                                                    */
/* ------------------------------------------------------------------------ */

/* Nanoseconds per TSC cycle as a 32.32 fixed-point factor: a multiply and
 * a shift per reading instead of a 128-bit divide (set once, before the
 * first engine exists). */
static uint64_t engine_tsc_mult;

static void
engine_tsc_calibrate(void)
{
	uint64_t hz = rte_get_tsc_hz();

	if (engine_tsc_mult == 0 && hz != 0)
		engine_tsc_mult = (uint64_t)(((__uint128_t)NS_PER_S << 32) / hz);
}

static uint64_t
engine_tsc_now_ns(void *arg)
{
	RTE_SET_USED(arg);
	return (uint64_t)(((__uint128_t)rte_get_tsc_cycles() * engine_tsc_mult) >> 32);
}

uint64_t
engine_now_ns(struct engine *eng)
{
	return eng->clock.now_ns(eng->clock.arg);
}

/* ------------------------------------------------------------------------ */
/* Packets                                                                  */
/* ------------------------------------------------------------------------ */

struct rte_mbuf *
engine_pkt_alloc(struct engine *eng)
{
	struct rte_mbuf *m;

	if (likely(eng->mcache_n > 0))
		return eng->mcache[--eng->mcache_n];
	if (likely(rte_pktmbuf_alloc_bulk(eng->pool, eng->mcache, ENGINE_BURST) == 0)) {
		eng->mcache_n = ENGINE_BURST - 1;
		return eng->mcache[ENGINE_BURST - 1];
	}
	/* Fewer than a burst left in the pool: one at a time, as before. */
	m = rte_pktmbuf_alloc(eng->pool);
	if (unlikely(m == NULL))
		eng->stats.nomem++;
	return m;
}

uint16_t
engine_port_room(const struct engine_port *p)
{
	return (uint16_t)(RTE_DIM(p->tx) - p->tx_n);
}

/* Stage a frame; the caller checked engine_port_room(). */
void
engine_port_tx(struct engine_port *p, struct rte_mbuf *m)
{
	p->tx[p->tx_n++] = m;
}

static int
engine_port_flush(struct engine *eng, struct engine_port *p)
{
	uint16_t sent;

	if (p->tx_n == 0)
		return 0;
	if (!p->tx_data && p->tx_n < ENGINE_BURST && p->link->tx_hold_acks) {
		/* Only ACKs, and a burst costs a system call: they wait a
		 * while for data to go with. */
		uint64_t now = engine_now_ns(eng);

		if (p->hold_until_ns == 0) {
			p->hold_until_ns = now + ENGINE_ACK_HOLD_NS;
			return 0;
		}
		if (now < p->hold_until_ns)
			return 0;
	}
	sent = link_tx_burst(p->link, p->queue, p->tx, p->tx_n);
	eng->stats.tx_packets += sent;
	if (sent < p->tx_n)
		memmove(p->tx, p->tx + sent, (p->tx_n - sent) * sizeof(p->tx[0]));
	p->tx_n = (uint16_t)(p->tx_n - sent);
	p->hold_until_ns = 0;
	p->tx_data = p->tx_n > 0;        /* what the link refused goes first */
	return sent;
}

/* ------------------------------------------------------------------------ */
/* QPs: activation, errors, completions                                     */
/* ------------------------------------------------------------------------ */

/* Put a QP on the active list (engine thread). */
void
engine_qp_activate(struct engine_qp *eq)
{
	if (eq->on_active)
		return;
	eq->on_active = true;
	atomic_store_explicit(&eq->qp->sq.db, VERBS_DB_QUEUED, memory_order_relaxed);
	TAILQ_INSERT_TAIL(&eq->port->active, eq, active_next);
}

/* The QP stops lingering (it worked, or leaves the active list). */
static inline void
engine_qp_unlinger(struct engine_qp *eq)
{
	if (eq->linger > 0) {
		eq->linger = 0;
		eq->eng->nb_linger--;
	}
}

/* An idle QP on the active list: may it stay (RTS, within the limits)? */
static inline bool
engine_qp_linger(struct engine_qp *eq)
{
	if (verbs_qp_state(eq->qp) != DRNIC_QPS_RTS)
		return false;
	if (eq->linger == 0) {
		if (eq->eng->nb_linger >= ENGINE_LINGER_MAX)
			return false;
		eq->eng->nb_linger++;
	} else if (eq->linger >= ENGINE_LINGER_STEPS) {
		return false;
	}
	eq->linger++;
	return true;
}

/* The QP goes to ERR (engine-detected error); flushing follows. */
void
engine_qp_error(struct engine_qp *eq)
{
	(void)verbs_qp_set_error(eq->qp);
	engine_qp_activate(eq);
}

/* A CQ overflowed: every QP of this engine using it goes to ERR. */
static void
engine_cq_overflow(struct engine *eng, struct drnic_cq *cq)
{
	struct engine_qp *eq;

	TAILQ_FOREACH(eq, &eng->all, all_next) {
		if (eq->qp->send_cq != cq && eq->qp->recv_cq != cq)
			continue;
		if (verbs_qp_set_error(eq->qp)) {
			verbs_qp_event(eq->qp, DRNIC_EVENT_QP_FATAL);
			ENGINE_QP_LOG(WARNING, eq, "CQ overflow: QP to ERR");
		}
		engine_qp_activate(eq);
	}
}

int
engine_push_cqe(struct engine_qp *eq, struct drnic_cq *cq, const struct drnic_wc *wc,
		bool solicited)
{
	int rc = cq_push(cq, wc, solicited);

	if (likely(rc == 0)) {
		eq->eng->stats.cqes++;
		return 0;
	}
	if (rc == -EOVERFLOW)
		engine_cq_overflow(eq->eng, cq);
	return rc;
}

void
engine_qp_build_template(struct engine_qp *eq)
{
	const struct drnic_device *dev = eq->qp->dev;
	const struct drnic_ah_attr *ah = &eq->path.ah;
	struct drnic_wire_pkt *p = &eq->tmpl;
	unsigned int sgid = ah->grh.sgid_index;

	drnic_wire_pkt_init(p);
	memcpy(p->eth.src, dev->link->mac, 6);   /* ethdev links use the port's MAC */
	memcpy(p->eth.dst, eq->path.dmac, 6);
	if (sgid < dev->nb_gids && dev->gid_is_v4[sgid]) {
		p->ip.version = 4;
		memcpy(p->ip.src, &dev->gid[sgid].raw[12], 4);
		memcpy(p->ip.dst, &ah->grh.dgid.raw[12], 4);
	} else {
		p->ip.version = 6;
		memcpy(p->ip.src, dev->gid[sgid < dev->nb_gids ? sgid : 0].raw, 16);
		memcpy(p->ip.dst, ah->grh.dgid.raw, 16);
		p->ip.flow_label = ah->grh.flow_label;
	}
	p->ip.tos = ah->grh.traffic_class;
	p->ip.ttl = ah->grh.hop_limit != 0 ? ah->grh.hop_limit : 64;
	p->udp.sport = eq->path.udp_sport;
	p->bth.pkey = verbs_pkey_entry(eq->path.pkey_index);
	p->bth.dqpn = eq->path.dest_qp_num;
	eq->mtu = eq->path.mtu;
}

/* Catch up with state changes made by modify_qp (engine thread). */
static inline void
engine_qp_sync(struct engine_qp *eq)
{
	struct drnic_qp *qp = eq->qp;
	enum drnic_qp_state st;

	/* Once both sides are set up there is nothing left to do (they are
	 * never set up again). */
	if (likely(eq->req_init && eq->resp_init))
		return;
	st = verbs_qp_state(qp);
	if (st == DRNIC_QPS_ERR || st == DRNIC_QPS_RESET || st == DRNIC_QPS_INIT)
		return;
	if (!eq->resp_init) {
		resp_setup(eq, eq->path.rq_psn);
		engine_qp_build_template(eq);
		eq->resp_init = true;
	}
	if (!eq->req_init && st != DRNIC_QPS_RTR) {
		eq->req.npsn = eq->path.sq_psn;
		eq->req.psn_hi = eq->req.npsn;
		eq->req.state = REQ_IDLE;
		comp_setup(eq);
		rec_setup(eq);
		eq->req_init = true;
	}
}

/* Is there anything for the QP to do without a new event? */
static bool
engine_qp_busy(struct engine_qp *eq)
{
	struct drnic_qp *qp = eq->qp;
	enum drnic_qp_state st = verbs_qp_state(qp);

	if (st == DRNIC_QPS_ERR)
		return eq->resp.ack_pending ||
		       (eq->resp.drain_rtx && eq->resp.rtx_head != eq->resp.rtx_tail) ||
		       verbs_wq_posted(&qp->sq, eq->comp.idx) != 0 ||
		       verbs_wq_posted(&qp->rq, eq->resp.rq_idx) != 0 ||
		       /* on an SRQ: QP_LAST_WQE_REACHED still to raise */
		       (qp->srq != NULL && !eq->resp.last_wqe_raised);
	if (eq->resp.ack_pending || eq->resp.rtx_head != eq->resp.rtx_tail)
		return true;
	if (!eq->req_init || st != DRNIC_QPS_RTS)
		return false;
	/* A QP that waits for an ACK, a retransmit timeout or the end of an
	 * RNR wait is not busy: the timer wheel or the ACK wakes it. */
	switch (eq->req.state) {
	case REQ_SENDING:
		return true;
	case REQ_IDLE:
		return atomic_load_explicit(&qp->sq.prod, memory_order_acquire) != eq->req.idx;
	default:
		return false;  /* woken by the completer */
	}
}

/* The next deadline an idle QP waits for, or 0. */
static uint64_t
engine_qp_deadline(const struct engine_qp *eq)
{
	uint64_t d = eq->rec.retry_deadline_ns;

	if (eq->rec.probe_deadline_ns != 0 && (d == 0 || eq->rec.probe_deadline_ns < d))
		d = eq->rec.probe_deadline_ns;

	if (eq->req.state == REQ_WAIT_RNR && (d == 0 || eq->rec.rnr_deadline_ns < d))
		d = eq->rec.rnr_deadline_ns;
	return d;
}

/* Timer wheel callback: the QP's deadline came; its step looks at it. */
static void
engine_qp_timer_fire(struct engine_timer *t, void *arg)
{
	struct engine_qp *eq = container_of(t, struct engine_qp, tmr);

	RTE_SET_USED(arg);
	engine_qp_activate(eq);
}

static int
engine_qp_step(struct engine_qp *eq, uint16_t room)
{
	enum drnic_qp_state st;
	int work = 0, budget = RTE_MIN((int)room, ENGINE_QP_BUDGET);

	engine_qp_sync(eq);
	st = verbs_qp_state(eq->qp);
	if (st == DRNIC_QPS_ERR) {
		/* A request the responder refused moved the QP here: the
		 * responses owed for the requests before it go first, then
		 * the NAK (resp_step sends both, in that order). */
		if (eq->resp.drain_rtx && eq->resp.rtx_head != eq->resp.rtx_tail)
			return resp_step(eq, budget);
		eq->resp.drain_rtx = false;
		work += resp_send_ack(eq);  /* the NAK that explains the error */
		work += comp_flush(eq);
		work += resp_flush(eq);
		return work;
	}
	if (eq->resp_init) {
		int n = resp_step(eq, budget);

		work += n;
		budget -= n;
	}
	if (st != DRNIC_QPS_SQD) {
		eq->sqd_notified = false;
	} else if (!eq->sqd_notified && eq->comp.idx == eq->req.idx && eq->req.off == 0) {
		/* Nothing in flight any more: the send queue is drained. */
		eq->sqd_notified = true;
		if (eq->path.en_sqd_async_notify)
			verbs_qp_event(eq->qp, DRNIC_EVENT_SQ_DRAINED);
	}
	if (eq->req_init && (st == DRNIC_QPS_RTS || st == DRNIC_QPS_SQD)) {
		if ((eq->rec.retry_deadline_ns | eq->rec.probe_deadline_ns) != 0 &&
		    !eq->eng->rx_backlog) {
			uint64_t now = engine_now_ns(eq->eng);

			if (eq->rec.retry_deadline_ns != 0 && now >= eq->rec.retry_deadline_ns) {
				rec_timeout(eq);
				work++;
			} else if (eq->rec.probe_deadline_ns != 0 &&
				   now >= eq->rec.probe_deadline_ns) {
				rec_probe(eq);
				work++;
			}
		}
		if (budget > 0)
			work += req_step(eq, budget);
	}
	return work;
}

/* ------------------------------------------------------------------------ */
/* Receive                                                                  */
/* ------------------------------------------------------------------------ */

/* IBA 10.9.3: the same 15-bit key, and at least one of the two a full member. */
static inline bool
engine_pkey_match(uint16_t mine, uint16_t theirs)
{
	return (mine & 0x7FFF) != 0 && (mine & 0x7FFF) == (theirs & 0x7FFF) &&
	       ((mine | theirs) & 0x8000) != 0;
}

/*
 * Is @p pkt from the QP's peer and for this QP (IBA 9.6: the packet's
 * addresses against the QP's address vector, its P_Key against the QP's
 * entry of the port's table)? The QP's frame template holds both ends:
 * the packet must come from the template's destination IP and go to its
 * source IP, in the same IP version, to the port's MAC, untagged (drnic
 * configures no VLAN; a priority tag, VID 0, is untagged). The UDP source
 * port is entropy and is not looked at. Returns the drop reason, or
 * DRNIC_ENGINE_DROP_MAX when the packet may be acted on.
 */
/* The first @p n bytes of @p a and @p b differ (n: 4, 6 or 16; fixed-size
 * loads the compiler keeps inline, instead of a call to memcmp). */
static inline bool
engine_bytes_differ(const uint8_t *a, const uint8_t *b, unsigned int n)
{
	uint64_t x, y, u, v;
	uint32_t p, q;
	uint16_t h, k;

	if (n == 4) {
		memcpy(&p, a, 4);
		memcpy(&q, b, 4);
		return p != q;
	}
	if (n == 6) {
		memcpy(&p, a, 4);
		memcpy(&q, b, 4);
		memcpy(&h, a + 4, 2);
		memcpy(&k, b + 4, 2);
		return (p ^ q) | (uint32_t)(h ^ k);
	}
	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	memcpy(&u, a + 8, 8);
	memcpy(&v, b + 8, 8);
	return ((x ^ y) | (u ^ v)) != 0;
}

static inline enum drnic_engine_drop
engine_pkt_from_peer(const struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	const struct drnic_wire_pkt *t = &eq->tmpl;
	unsigned int alen = t->ip.version == 4 ? 4 : 16;

	if (unlikely(pkt->ip.version != t->ip.version ||
		     engine_bytes_differ(pkt->ip.src, t->ip.dst, alen) ||
		     engine_bytes_differ(pkt->ip.dst, t->ip.src, alen)))
		return DRNIC_ENGINE_DROP_BAD_ADDR;
	if (unlikely(engine_bytes_differ(pkt->eth.dst, t->eth.src, 6)))
		return DRNIC_ENGINE_DROP_BAD_DMAC;
	if (unlikely(!engine_pkey_match(t->bth.pkey, pkt->bth.pkey)))
		return DRNIC_ENGINE_DROP_BAD_PKEY;
	if (unlikely(pkt->eth.has_vlan && (pkt->eth.vlan_tci & 0xFFF) != 0))
		return DRNIC_ENGINE_DROP_BAD_VLAN;
	return DRNIC_ENGINE_DROP_MAX;
}

/*
 * One received burst, in four passes so the burst's cache misses overlap
 * instead of queueing one after another (with thousands of QPs each
 * frame's QP table slot, QP and engine state are cold): parse every frame
 * and fetch its QP table slot; look the QPs up and fetch them; fetch their
 * engine state; then run the requests and responses in arrival order.
 */
static void
engine_rx_burst(struct engine *eng, struct engine_port *p, struct rte_mbuf **m, uint16_t n)
{
	struct drnic_wire_pkt pkt[ENGINE_BURST];
	struct drnic_qp *qp[ENGINE_BURST];
	struct engine_qp *eq[ENGINE_BURST];
	bool parsed[ENGINE_BURST];
	bool is_req[ENGINE_BURST];   /* a request (responder), else a response */
	struct drnic_device *dev = p->dev;
	uint16_t j;

	for (j = 0; j < n; j++) {
		const struct drnic_wire_opinfo *oi;
		enum drnic_wire_drop why;

		eq[j] = NULL;
		qp[j] = NULL;
		parsed[j] = false;
		if (j + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(m[j + 1], void *));
		why = drnic_wire_parse_flags(m[j], DRNIC_WIRE_PARSE_DEFER_ICRC, &pkt[j]);
		if (unlikely(why != DRNIC_WIRE_OK)) {
			eng->stats.wire_drops[why]++;
			continue;
		}
		oi = drnic_wire_opcode_info(pkt[j].bth.opcode);
		if (unlikely(oi->transport != DRNIC_WIRE_TR_RC)) {
			eng->stats.drops[DRNIC_ENGINE_DROP_NOT_REQUEST]++;
			continue;
		}
		is_req[j] = (oi->flags & DRNIC_WIRE_OPF_REQUEST) != 0;
		rte_prefetch0(&dev->qp_tab[pkt[j].bth.dqpn & dev->qp_mask]);
		parsed[j] = true;
	}
	for (j = 0; j < n; j++) {
		if (!parsed[j])
			continue;
		qp[j] = verbs_qp_lookup(dev, pkt[j].bth.dqpn);
		if (unlikely(qp[j] == NULL)) {
			if (engine_pkt_verify(eng, m[j], &pkt[j]))
				eng->stats.drops[DRNIC_ENGINE_DROP_NO_QP]++;
			continue;
		}
		rte_prefetch0(&qp[j]->eng_priv);
		rte_prefetch0(&qp[j]->state);
	}
	for (j = 0; j < n; j++) {
		if (qp[j] == NULL)
			continue;
		eq[j] = qp[j]->eng_priv;
		if (eq[j] != NULL) {
			const uint8_t *e = (const uint8_t *)eq[j];

			/* Its first lines: counters, pointers, list entries
			 * and set-up flags. (Fetching the responder's or
			 * completer's lines instead measured slower at 64 B.) */
			rte_prefetch0(e);
			rte_prefetch0(e + RTE_CACHE_LINE_SIZE);
			rte_prefetch0(e + RTE_CACHE_LINE_SIZE * 2);
			rte_prefetch0(e + RTE_CACHE_LINE_SIZE * 3);
		}
	}
	for (j = 0; j < n; j++) {
		struct engine_qp *e = eq[j];

		if (qp[j] == NULL)
			continue;
		if (unlikely(e == NULL || e->eng != eng)) {
			if (engine_pkt_verify(eng, m[j], &pkt[j]))
				eng->stats.drops[DRNIC_ENGINE_DROP_WRONG_ENGINE]++;
			continue;
		}
		e->stats.rx_packets++;
		engine_qp_sync(e);
		/* Before the QP is set up (RTR) both machines drop it for its
		 * state; from then on only its peer reaches it. */
		if (likely(e->resp_init)) {
			enum drnic_engine_drop why = engine_pkt_from_peer(e, &pkt[j]);

			if (unlikely(why != DRNIC_ENGINE_DROP_MAX)) {
				if (engine_pkt_verify(eng, m[j], &pkt[j]))
					engine_qp_drop(e, why);
				continue;
			}
		}
		if (is_req[j])
			resp_rx(e, m[j], &pkt[j]);
		else
			comp_rx(e, m[j], &pkt[j]);
	}
}

static int
engine_rx(struct engine *eng)
{
	struct rte_mbuf *m[ENGINE_BURST];
	unsigned int i, b, total = 0;
	bool backlog = false;
	uint16_t n;

	for (i = 0; i < eng->nb_ports; i++) {
		struct engine_port *p = &eng->port[i];

		for (b = 0; b < ENGINE_RX_BURSTS; b++) {
			n = link_rx_burst(p->link, p->queue, m, ENGINE_BURST);
			if (n > 0) {
				engine_rx_burst(eng, p, m, n);
				rte_pktmbuf_free_bulk(m, n);
			}
			total += n;
			if (n < ENGINE_BURST)
				break;
		}
		if (b == ENGINE_RX_BURSTS)
			backlog = true;
	}
	eng->stats.rx_packets += total;
	eng->rx_backlog_loops = backlog ? eng->rx_backlog_loops + 1 : 0;
	eng->rx_backlog = backlog && eng->rx_backlog_loops < ENGINE_BACKLOG_LOOPS;
	return (int)total;
}

/* ------------------------------------------------------------------------ */
/* Control                                                                  */
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

/* Take every queued doorbell onto the active list. */
static unsigned int
engine_doorbells(struct engine *eng, unsigned int max)
{
	struct drnic_qp *qps[ENGINE_BURST];
	unsigned int n, i, total = 0;

	while (total < max &&
	       (n = rte_ring_sc_dequeue_burst(eng->doorbell, (void **)qps, ENGINE_BURST, NULL)) > 0) {
		for (i = 0; i < n; i++) {
			struct engine_qp *eq = qps[i]->eng_priv;

			if (eq != NULL)
				engine_qp_activate(eq);
		}
		total += n;
	}
	eng->stats.doorbells += total;
	return total;
}

static void
engine_ctrl_handle(struct engine *eng, struct engine_ctrl *c)
{
	struct engine_qp_list moved;
	struct engine_qp *eq;
	struct drnic_device *dev;
	struct engine_port *p;
	unsigned int i;

	c->rc = 0;
	switch (c->type) {
	case ENGINE_CTRL_PORT_ADD:
		dev = c->arg;
		if (eng->nb_ports == ENGINE_MAX_PORTS) {
			c->rc = -ENOSPC;
			break;
		}
		p = &eng->port[eng->nb_ports];
		memset(p, 0, sizeof(*p));
		TAILQ_INIT(&p->active);
		p->dev = dev;
		p->link = dev->link;
		p->queue = c->queue;
		p->up = (int8_t)link_is_up(p->link);
		eng->nb_ports++;
		break;
	case ENGINE_CTRL_PORT_DEL:
		dev = c->arg;
		for (i = 0; i < eng->nb_ports; i++) {
			p = &eng->port[i];
			if (p->dev != dev || p->queue != c->queue)
				continue;
			/* Frames still staged (ACKs held for a step among
			 * them) get one try before they are counted lost. */
			p->tx_data = true;
			(void)engine_port_flush(eng, p);
			if (p->tx_n > 0)
				link_drop(p->link, p->queue, DRNIC_LINK_DROP_TX_ERROR, p->tx, p->tx_n);
			/* QPs keep pointers into port[]: none is left on it.
			 * The last port moves into its slot, its active list
			 * with it (the list's head moves: relink). */
			TAILQ_INIT(&moved);
			TAILQ_CONCAT(&moved, &eng->port[eng->nb_ports - 1].active, active_next);
			eng->port[i] = eng->port[eng->nb_ports - 1];
			TAILQ_INIT(&eng->port[i].active);
			TAILQ_CONCAT(&eng->port[i].active, &moved, active_next);
			eng->nb_ports--;
			TAILQ_FOREACH(eq, &eng->all, all_next)
				if (eq->port == &eng->port[eng->nb_ports])
					eq->port = &eng->port[i];
			break;
		}
		break;
	case ENGINE_CTRL_QP_ADD:
		eq = c->arg;
		eq->port = engine_find_port(eng, eq->qp->dev, c->queue);
		if (eq->port == NULL) {
			c->rc = -ENODEV;
			break;
		}
		TAILQ_INSERT_TAIL(&eng->all, eq, all_next);
		eng->nb_qp++;
		break;
	case ENGINE_CTRL_QP_DEL:
		eq = c->arg;
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
		break;
	case ENGINE_CTRL_QP_MODIFY: {
		const struct engine_qp_modify *mod = c->arg;

		/* Between two steps: a frame built from now on follows the
		 * new path, and only the new peer reaches the QP. */
		eq = mod->eq;
		eq->path = *mod->path;
		if (eq->resp_init)
			engine_qp_build_template(eq);
		break;
	}
	case ENGINE_CTRL_FENCE:
		break;
	}
	atomic_store_explicit(&c->done, 1, memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* The step and the loop                                                    */
/* ------------------------------------------------------------------------ */

/* How often an engine looks at its links' state (port events). */
#define ENGINE_LINK_CHECK_LOOPS 1024
#define ENGINE_LINK_CHECK_NS (10 * 1000 * 1000)

/*
 * Port state events: the engine of a device's link queue 0 raises
 * PORT_ACTIVE / PORT_ERR on the device's async queues when the link goes up
 * or down. Looked at every ENGINE_LINK_CHECK_NS at most, so it costs one
 * counter test per loop.
 */
static void
engine_ports_watch(struct engine *eng)
{
	uint64_t now = engine_now_ns(eng);
	unsigned int i;

	if (now < eng->link_check_ns)
		return;
	eng->link_check_ns = now + ENGINE_LINK_CHECK_NS;
	for (i = 0; i < eng->nb_ports; i++) {
		struct engine_port *p = &eng->port[i];
		struct drnic_async_event ev = { 0 };
		int8_t up;

		if (p->queue != 0)
			continue;
		up = (int8_t)link_is_up(p->link);
		if (up == p->up)
			continue;
		p->up = up;
		ev.event_type = up ? DRNIC_EVENT_PORT_ACTIVE : DRNIC_EVENT_PORT_ERR;
		ev.element.port_num = 1;
		ENGINE_LOG(NOTICE, eng, "%s: port 1 %s", drnic_device_name(p->dev),
			   up ? "up" : "down");
		verbs_device_event(p->dev, &ev);  /* every subscribed queue; counted if lost */
	}
}

/* One turn of each active QP of port @p p (see engine_run_once()). */
static int
engine_port_step(struct engine *eng, struct engine_port *p)
{
	struct engine_qp *eq, *tmp, *last = TAILQ_LAST(&p->active, engine_qp_list);
	int work = 0;

	for (eq = TAILQ_FIRST(&p->active); eq != NULL; eq = tmp) {
		bool end = eq == last;
		uint16_t room = engine_port_room(p);
		int step;

		if (room == 0)
			break;
		tmp = TAILQ_NEXT(eq, active_next);
		step = engine_qp_step(eq, room);
		if (step > 0) {
			work += step;
			engine_qp_unlinger(eq);
		}
		if (engine_qp_busy(eq)) {
			if (end)
				break;
			TAILQ_REMOVE(&p->active, eq, active_next);
			TAILQ_INSERT_TAIL(&p->active, eq, active_next);
			continue;
		}
		if (engine_qp_linger(eq)) {
			if (end)
				break;
			continue;
		}
		/* Idle: leave the list, then look again (a poster may have
		 * posted after our check and seen the flag still set). */
		engine_qp_unlinger(eq);
		TAILQ_REMOVE(&p->active, eq, active_next);
		eq->on_active = false;
		atomic_store_explicit(&eq->qp->sq.db, VERBS_DB_IDLE, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		if (engine_qp_busy(eq) &&
		    atomic_exchange_explicit(&eq->qp->sq.db, VERBS_DB_QUEUED, memory_order_seq_cst) ==
		    VERBS_DB_IDLE) {
			eq->on_active = true;
			TAILQ_INSERT_TAIL(&p->active, eq, active_next);
		} else {
			uint64_t d = engine_qp_deadline(eq);

			/* Waits for a deadline: sleep in the wheel. */
			if (d != 0)
				timer_arm(&eng->wheel, &eq->tmr, d);
		}
		if (end)
			break;
	}
	return work;
}

int
engine_run_once(struct engine *eng)
{
	struct engine_ctrl *c;
	uint64_t t0 = rte_rdtsc(), t1;
	unsigned int i;
	int work = 0;

	while (rte_ring_sc_dequeue(eng->ctrl, (void **)&c) == 0) {
		engine_ctrl_handle(eng, c);
		work++;
	}
	work += (int)engine_doorbells(eng, ENGINE_BURST * 4);
	work += engine_rx(eng);
	if (eng->wheel.armed > 0 && !eng->rx_backlog) {
		unsigned int fired = timer_wheel_run(&eng->wheel, engine_now_ns(eng),
						     engine_qp_timer_fire, eng);

		eng->stats.timers += fired;
		work += (int)fired;
	}

	/*
	 * The active QPs of each port, each once per step (up to the one that
	 * was last when the step began), round robin: a QP still busy after
	 * its turn goes to the tail. When a port is full nothing on it can
	 * send: its walk stops there (thousands of QPs waiting for room are
	 * not walked every step), the rest keep their places.
	 */
	for (i = 0; i < eng->nb_ports; i++)
		work += engine_port_step(eng, &eng->port[i]);
	for (i = 0; i < eng->nb_ports; i++)
		work += engine_port_flush(eng, &eng->port[i]);
	if (unlikely(eng->stats.loops % ENGINE_LINK_CHECK_LOOPS == 0))
		engine_ports_watch(eng);
	eng->stats.loops++;
	/* Cycles: a step that did work is busy; the rest of the time (steps
	 * with nothing to do, back-off, whoever else ran) is idle. */
	t1 = rte_rdtsc();
	if (eng->last_tsc != 0)
		eng->stats.idle_cycles += t0 - eng->last_tsc;
	if (work > 0) {
		eng->stats.busy_loops++;
		eng->stats.busy_cycles += t1 - t0;
	} else {
		eng->stats.idle_cycles += t1 - t0;
	}
	eng->last_tsc = t1;
	return work;
}

static int
engine_main(void *arg)
{
	struct engine *eng = arg;
	uint64_t idle = 0;

	ENGINE_LOG(INFO, eng, "running on lcore %u", eng->lcore);
	while (!atomic_load_explicit(&eng->stop, memory_order_acquire)) {
		if (engine_run_once(eng) > 0) {
			idle = 0;
			continue;
		}
		/* Back off: spin a while, then yield, then nap. */
		idle++;
		if (idle < 20000) {
			rte_pause();
		} else if (idle < 40000) {
			sched_yield();
		} else {
			struct timespec ts = { .tv_sec = 0, .tv_nsec = 20000 };

			nanosleep(&ts, NULL);
		}
	}
	/* Last control messages (the one that stopped us is answered by the
	 * caller after the join). */
	ENGINE_LOG(INFO, eng, "stopped");
	return 0;
}

int
drnic_engine_idle_ns(uint64_t *wait_ns)
{
	unsigned int i, j, top = atomic_load_explicit(&engine_inline_top, memory_order_acquire);
	uint64_t wait = UINT64_MAX;
	struct engine_qp *eq;

	if (wait_ns == NULL)
		return -EINVAL;
	for (i = 0; i < top && wait > 0; i++) {
		struct engine *eng = atomic_load_explicit(&engine_inline[i], memory_order_acquire);
		uint64_t now, next;

		if (eng == NULL)
			continue;
		/* The engine's state is its running thread's: look only while
		 * holding it, as a run would. One that another thread runs
		 * now is that thread's to finish. */
		if (atomic_flag_test_and_set_explicit(&eng->running, memory_order_acquire))
			continue;
		now = engine_now_ns(eng);
		if (rte_ring_count(eng->ctrl) > 0 || rte_ring_count(eng->doorbell) > 0)
			wait = 0;
		/* A QP that lingers waits for a post or for its deadline (not
		 * in the wheel while it lingers): a post made meanwhile is
		 * work now, as a doorbell in the ring would be. Any other QP
		 * on the list has work now. At most ENGINE_LINGER_MAX + 1 are
		 * looked at. */
		for (j = 0; j < eng->nb_ports && wait > 0; j++) {
			TAILQ_FOREACH(eq, &eng->port[j].active, active_next) {
				uint64_t d;

				if (eq->linger == 0 || engine_qp_busy(eq)) {
					wait = 0;
					break;
				}
				d = engine_qp_deadline(eq);
				if (d != 0)
					wait = RTE_MIN(wait, d > now ? d - now : 0);
			}
		}
		for (j = 0; j < eng->nb_ports && wait > 0; j++) {
			const struct engine_port *p = &eng->port[j];

			if (p->tx_n == 0)
				continue;
			if (p->tx_data || p->hold_until_ns <= now)
				wait = 0;
			else
				wait = RTE_MIN(wait, p->hold_until_ns - now);
		}
		if (wait > 0 && (next = timer_wheel_next(&eng->wheel, now, NS_PER_S / 1000)) !=
		    UINT64_MAX)
			wait = RTE_MIN(wait, next > now ? next - now : 0);
		atomic_flag_clear_explicit(&eng->running, memory_order_release);
	}
	*wait_ns = wait;
	return 0;
}

/* Run the process's inline engines once. */
static int
engine_progress_all(void)
{
	unsigned int i, top = atomic_load_explicit(&engine_inline_top, memory_order_acquire);
	int work = 0;

	for (i = 0; i < top; i++) {
		struct engine *eng = atomic_load_explicit(&engine_inline[i], memory_order_acquire);

		if (eng == NULL)
			continue;
		if (atomic_flag_test_and_set_explicit(&eng->running, memory_order_acquire))
			continue;  /* another thread runs it */
		work += engine_run_once(eng);
		atomic_flag_clear_explicit(&eng->running, memory_order_release);
	}
	return work;
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
	engine_tsc_calibrate();
	eng->clock.now_ns = engine_tsc_now_ns;
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
	unsigned int i;

	if (cfg->progress == DRNIC_PROGRESS_INLINE) {
		eng = engine_new(RTE_MAX_LCORE, true, cfg->socket_id);
		if (eng == NULL) {
			*rc = -ENOMEM;
			return NULL;
		}
		for (i = 0; i < ENGINE_MAX_INLINE; i++) {
			if (atomic_load(&engine_inline[i]) == NULL) {
				atomic_store_explicit(&engine_inline[i], eng, memory_order_release);
				if (i >= atomic_load(&engine_inline_top))
					atomic_store_explicit(&engine_inline_top, i + 1,
							      memory_order_release);
				return eng;
			}
		}
		engine_free(eng);
		*rc = -ENOSPC;
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
	unsigned int i;

	if (--eng->refs > 0)
		return;
	if (eng->inline_mode) {
		for (i = 0; i < ENGINE_MAX_INLINE; i++)
			if (atomic_load(&engine_inline[i]) == eng)
				atomic_store(&engine_inline[i], NULL);
		/* Wait for a thread that may be running it. */
		while (atomic_flag_test_and_set_explicit(&eng->running, memory_order_acquire))
			rte_pause();
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

static int
engine_qp_attach(struct drnic_qp *qp)
{
	struct engine *eng = qp->dev->eng[qp->engine].engine;
	struct engine_qp *eq;
	int rc;

	if (eng->nb_qp + 1 >= ENGINE_DOORBELL_SIZE)
		return -ENOMEM;
	eq = rte_zmalloc_socket("drnic_engine_qp", sizeof(*eq), RTE_CACHE_LINE_SIZE,
				qp->dev->cfg.socket_id);
	if (eq == NULL)
		return -ENOMEM;
	eq->resp.rd_mask = rte_align32pow2(2 * RTE_MAX(qp->dev->cfg.max_rd_atomic, 1u)) - 1;
	eq->resp.rtx_mask = 4 * (eq->resp.rd_mask + 1) - 1;
	eq->resp.rd = rte_zmalloc_socket("drnic_engine_rd",
					 sizeof(eq->resp.rd[0]) * (eq->resp.rd_mask + 1) +
				    sizeof(eq->resp.rtx[0]) * (eq->resp.rtx_mask + 1),
				    RTE_CACHE_LINE_SIZE, qp->dev->cfg.socket_id);
	if (eq->resp.rd == NULL) {
		rte_free(eq);
		return -ENOMEM;
	}
	eq->resp.rtx = (struct resp_tx *)(void *)(eq->resp.rd + eq->resp.rd_mask + 1);
	eq->qp = qp;
	eq->eng = eng;
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

static const struct verbs_engine_ops engine_ops = {
	.dev_attach = engine_dev_attach,
	.dev_detach = engine_dev_detach,
	.qp_attach = engine_qp_attach,
	.qp_detach = engine_qp_detach,
	.qp_modify = engine_qp_modify,
	.dev_fence = engine_dev_fence,
	.progress = engine_progress_all,
};

static void __attribute__((constructor, used))
engine_install(void)
{
	verbs_set_engine_ops(&engine_ops);
}

/* Build a frame from @p pkt and stage it on the QP's port. */
int
engine_qp_tx(struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	struct rte_mbuf *m = engine_pkt_alloc(eq->eng);
	int rc;

	if (unlikely(m == NULL))
		return -ENOMEM;
	rc = drnic_wire_build(m, pkt);
	if (unlikely(rc < 0)) {
		rte_pktmbuf_free(m);
		if (rc == -ENOMEM)
			eq->eng->stats.nomem++;
		return rc;
	}
	engine_port_tx(eq->port, m);
	if (pkt->bth.opcode != DRNIC_WIRE_OP_RC_ACKNOWLEDGE)
		eq->port->tx_data = true;
	eq->stats.tx_packets++;
	return 0;
}
