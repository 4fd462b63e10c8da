/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loopback link: an in-process back-to-back cable between two drnic devices
 * (or from a device to itself) carrying real frames, ICRC included.
 *
 * Arguments:
 *   wire=NAME   the cable; the first two links naming it are its two ends
 *               (default "lb0");
 *   self=1      frames come back to the sending link (one end, no peer);
 *   ring=N      frames each receive queue of this end holds (power of two,
 *               default 4096; fixed when the end first attaches);
 *   tap=E       attach not as an end but as a tap beside end E (0 or 1) of
 *               a wire with two ends: a third party on the cable, as an
 *               attacker on a shared segment is. Frames the tap sends arrive
 *               at end E (steered by destination QPN like the peer's); the
 *               tap receives a copy of every frame either end sends (copies
 *               it has no room for are counted rx_error on the sender).
 *               One queue; at most one tap per end. For tests.
 *
 * Each end owns one MP/SC rte_ring per receive queue: the peer's engines
 * enqueue (multi-producer), the end's engine for that queue dequeues (single
 * consumer). A frame for destination QP n goes to queue n % nb_queues of the
 * receiving end. A full ring refuses frames (tx_burst returns fewer) so the
 * sender keeps them: the cable applies back-pressure and never loses frames.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "drnic_wire.h"
#include "link_driver.h"

RTE_LOG_REGISTER_SUFFIX(lb_logtype, link.loopback, NOTICE);
#define LB_LOG(level, link, fmt, ...)                                           \
	rte_log(RTE_LOG_##level, lb_logtype, "loopback %s: " fmt "\n", (link)->name, \
		##__VA_ARGS__)

#define LB_DEFAULT_RING 4096u
/* Frames a transmit burst takes at a time while a tap copies them. */
#define LB_TAP_BURST 32u
#define LB_NAME_LEN 32

struct lb_wire;

/* One end of the cable. */
struct lb_end {
	/* The attached link, or NULL. Written under lb_lock (release), read by
	 * the peer's engines (acquire). */
	_Atomic(struct drnic_link *) link;
	uint16_t nb_queues;                    /* of the attached link */
	uint8_t mac[6];                        /* copy of the attached link's MAC */
	struct rte_ring *rx[LINK_MAX_QUEUES];  /* created on first use, kept */
};

/* A tap beside an end: its own receive ring (copies of both directions). */
struct lb_tap {
	_Atomic(struct drnic_link *) link;     /* as lb_end::link */
	struct rte_ring *rx;                   /* created on first use, kept */
};

struct lb_wire {
	TAILQ_ENTRY(lb_wire) next;
	char name[LB_NAME_LEN];
	unsigned int refcnt;                   /* attached ends and taps */
	bool self;                             /* one end looped onto itself */
	struct lb_end end[2];
	struct lb_tap tap[2];                  /* tap[e] injects into end[e] */
	atomic_uint nb_taps;                   /* attached taps: 0 costs one load */
};

/* What a link's priv points to. */
struct lb_port {
	struct lb_wire *wire;
	struct lb_end *rx_end;                 /* where our frames arrive (NULL: a tap) */
	struct lb_end *tx_end;                 /* where we deliver */
	struct lb_tap *tap;                    /* a tap: its ring */
};

static pthread_mutex_t lb_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, lb_wire) lb_wires = TAILQ_HEAD_INITIALIZER(lb_wires);
static unsigned int lb_ring_seq;

static int
lb_arg_str(const char *key __rte_unused, const char *value, void *opaque)
{
	snprintf(opaque, LB_NAME_LEN, "%s", value);
	return 0;
}

static int
lb_arg_uint(const char *key __rte_unused, const char *value, void *opaque)
{
	char *end;
	unsigned long v = strtoul(value, &end, 0);

	if (*value == '\0' || *end != '\0' || v > (1u << 24))
		return -EINVAL;
	*(unsigned int *)opaque = (unsigned int)v;
	return 0;
}

static void
lb_drain(struct rte_ring *r)
{
	struct rte_mbuf *m[32];
	unsigned int n;

	while ((n = rte_ring_dequeue_burst(r, (void **)m, RTE_DIM(m), NULL)) > 0)
		rte_pktmbuf_free_bulk(m, n);
}

static int
lb_end_attach(struct lb_end *e, struct drnic_link *link, unsigned int ring_size)
{
	char name[RTE_RING_NAMESIZE];
	uint16_t q;

	for (q = 0; q < link->nb_queues; q++) {
		/* Rings live as long as the wire (a peer may still be
		 * enqueueing into them): a returning end keeps its rings. */
		if (e->rx[q] != NULL) {
			lb_drain(e->rx[q]);
			continue;
		}
		snprintf(name, sizeof(name), "drnic_lb%u", lb_ring_seq++);
		e->rx[q] = rte_ring_create(name, ring_size, link->socket_id, RING_F_SC_DEQ);
		if (e->rx[q] == NULL)
			return -rte_errno;
	}
	e->nb_queues = link->nb_queues;
	memcpy(e->mac, link->mac, sizeof(e->mac));
	atomic_store_explicit(&e->link, link, memory_order_release);
	return 0;
}

static void
lb_wire_free(struct lb_wire *w)
{
	unsigned int i, q;

	for (i = 0; i < 2; i++) {
		for (q = 0; q < LINK_MAX_QUEUES; q++) {
			if (w->end[i].rx[q] == NULL)
				continue;
			lb_drain(w->end[i].rx[q]);
			rte_ring_free(w->end[i].rx[q]);
		}
		if (w->tap[i].rx != NULL) {
			lb_drain(w->tap[i].rx);
			rte_ring_free(w->tap[i].rx);
		}
	}
	TAILQ_REMOVE(&lb_wires, w, next);
	free(w);
}

/* Attach @p link as a free end of @p w (the only one of a self wire). */
static int
lb_end_pick(struct lb_wire *w, struct drnic_link *link, bool self, unsigned int ring,
	    struct lb_port *port)
{
	struct lb_end *e;

	if (w->self || self) {
		if (w->refcnt > 0 || !self)
			return -EBUSY;
		w->self = true;
		e = &w->end[0];
		port->rx_end = port->tx_end = e;
	} else if (atomic_load(&w->end[0].link) == NULL) {
		e = &w->end[0];
		port->rx_end = e;
		port->tx_end = &w->end[1];
	} else if (atomic_load(&w->end[1].link) == NULL) {
		e = &w->end[1];
		port->rx_end = e;
		port->tx_end = &w->end[0];
	} else {
		LB_LOG(ERR, link, "wire %s already has two ends", w->name);
		return -EBUSY;
	}
	return lb_end_attach(e, link, ring);
}

static int
lb_tap_attach(struct lb_wire *w, struct drnic_link *link, unsigned int e, unsigned int ring,
	      struct lb_port *port)
{
	struct lb_tap *t = &w->tap[e];
	char name[RTE_RING_NAMESIZE];

	if (w->self || atomic_load(&t->link) != NULL) {
		LB_LOG(ERR, link, "wire %s: no room for a tap beside end %u", w->name, e);
		return -EBUSY;
	}
	if (t->rx == NULL) {
		snprintf(name, sizeof(name), "drnic_lb%u", lb_ring_seq++);
		t->rx = rte_ring_create(name, ring, link->socket_id, 0);
		if (t->rx == NULL)
			return -rte_errno;
	} else {
		lb_drain(t->rx);
	}
	port->tap = t;
	port->rx_end = NULL;
	port->tx_end = &w->end[e];
	atomic_store_explicit(&t->link, link, memory_order_release);
	atomic_fetch_add(&w->nb_taps, 1);
	return 0;
}

static int
lb_create(struct drnic_link *link, const struct rte_kvargs *kv)
{
	char wire_name[LB_NAME_LEN] = "lb0";
	unsigned int self = 0, ring = LB_DEFAULT_RING, tap = UINT_MAX;
	struct lb_port *port;
	struct lb_wire *w;
	int rc;

	if (kv != NULL) {
		static const char *const keys[] = { "wire", "self", "ring", "tap" };
		unsigned int i, k;

		for (i = 0; i < kv->count; i++) {
			for (k = 0; k < RTE_DIM(keys); k++)
				if (strcmp(kv->pairs[i].key, keys[k]) == 0)
					break;
			if (k == RTE_DIM(keys)) {
				LB_LOG(ERR, link, "unknown argument '%s'", kv->pairs[i].key);
				return -EINVAL;
			}
		}
		if (rte_kvargs_process(kv, "wire", lb_arg_str, wire_name) < 0 ||
		    rte_kvargs_process(kv, "self", lb_arg_uint, &self) < 0 ||
		    rte_kvargs_process(kv, "ring", lb_arg_uint, &ring) < 0 ||
		    rte_kvargs_process(kv, "tap", lb_arg_uint, &tap) < 0)
			return -EINVAL;
	}
	if (tap != UINT_MAX && (tap > 1 || self || link->nb_queues != 1)) {
		LB_LOG(ERR, link, "tap=%u: need end 0 or 1, one queue, no self", tap);
		return -EINVAL;
	}
	if (ring < 64 || !rte_is_power_of_2(ring)) {
		LB_LOG(ERR, link, "ring=%u: need a power of two >= 64", ring);
		return -EINVAL;
	}
	port = calloc(1, sizeof(*port));
	if (port == NULL)
		return -ENOMEM;

	pthread_mutex_lock(&lb_lock);
	TAILQ_FOREACH(w, &lb_wires, next)
		if (strcmp(w->name, wire_name) == 0)
			break;
	if (w == NULL) {
		w = calloc(1, sizeof(*w));
		if (w == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
		snprintf(w->name, sizeof(w->name), "%s", wire_name);
		w->self = self != 0;
		TAILQ_INSERT_TAIL(&lb_wires, w, next);
	}
	if (tap != UINT_MAX)
		rc = lb_tap_attach(w, link, tap, ring, port);
	else
		rc = lb_end_pick(w, link, self != 0, ring, port);
	if (rc < 0)
		goto fail_wire;
	w->refcnt++;
	port->wire = w;
	link->priv = port;
	pthread_mutex_unlock(&lb_lock);
	if (port->tap != NULL)
		LB_LOG(INFO, link, "tap beside end %u of wire %s", tap, w->name);
	else
		LB_LOG(INFO, link, "end %u of wire %s%s", (unsigned int)(port->rx_end - w->end),
		       w->name, w->self ? " (self)" : "");
	return 0;

fail_wire:
	if (w->refcnt == 0)
		lb_wire_free(w);
fail:
	pthread_mutex_unlock(&lb_lock);
	free(port);
	return rc;
}

static void
lb_destroy(struct drnic_link *link)
{
	struct lb_port *port = link->priv;
	struct lb_wire *w = port->wire;
	uint16_t q;

	pthread_mutex_lock(&lb_lock);
	if (port->tap != NULL) {
		atomic_store_explicit(&port->tap->link, NULL, memory_order_release);
		atomic_fetch_sub(&w->nb_taps, 1);
		lb_drain(port->tap->rx);
	} else {
		atomic_store_explicit(&port->rx_end->link, NULL, memory_order_release);
		for (q = 0; q < LINK_MAX_QUEUES; q++)
			if (port->rx_end->rx[q] != NULL)
				lb_drain(port->rx_end->rx[q]);
	}
	if (--w->refcnt == 0)
		lb_wire_free(w);
	pthread_mutex_unlock(&lb_lock);
	free(port);
	link->priv = NULL;
}

static uint16_t lb_deliver(struct drnic_link *link, struct lb_end *peer, struct rte_mbuf **pkts,
			   uint16_t n);

/*
 * Copies of @p n frames for every tap on the wire, made before the frames
 * are handed over (the receiver may free them at once); lb_tap_deliver()
 * gives the taps the copies of those the peer took.
 */
static void
lb_tap_copy(struct lb_wire *w, struct rte_mbuf **pkts, uint16_t n,
	    struct rte_mbuf *copy[2][LB_TAP_BURST])
{
	unsigned int e;
	uint16_t i;

	for (e = 0; e < 2; e++)
		for (i = 0; i < n; i++)
			copy[e][i] = atomic_load_explicit(&w->tap[e].link,
							  memory_order_acquire) == NULL ? NULL :
				     rte_pktmbuf_copy(pkts[i], pkts[i]->pool, 0, UINT32_MAX);
}

static void
lb_tap_deliver(struct drnic_link *link, uint16_t q, struct lb_wire *w, uint16_t n, uint16_t sent,
	       struct rte_mbuf *copy[2][LB_TAP_BURST])
{
	unsigned int e;
	uint16_t i;

	for (e = 0; e < 2; e++)
		for (i = 0; i < n; i++) {
			if (copy[e][i] == NULL)
				continue;
			if (i < sent && rte_ring_mp_enqueue(w->tap[e].rx, copy[e][i]) == 0)
				continue;
			if (i < sent)
				link_drop(link, q, DRNIC_LINK_DROP_RX_ERROR, &copy[e][i], 1);
			else
				rte_pktmbuf_free(copy[e][i]);
		}
}

static uint16_t
lb_tx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct lb_port *port = link->priv;
	struct lb_wire *w = port->wire;
	struct rte_mbuf *copy[2][LB_TAP_BURST];
	struct lb_end *peer = port->tx_end;
	uint16_t sent;

	if (atomic_load_explicit(&peer->link, memory_order_acquire) == NULL) {
		link_drop(link, q, DRNIC_LINK_DROP_NO_PEER, pkts, n);
		return n;
	}
	if (likely(atomic_load_explicit(&w->nb_taps, memory_order_relaxed) == 0) ||
	    port->tap != NULL)
		return lb_deliver(link, peer, pkts, n);
	n = RTE_MIN(n, (uint16_t)LB_TAP_BURST);
	lb_tap_copy(w, pkts, n, copy);
	sent = lb_deliver(link, peer, pkts, n);
	lb_tap_deliver(link, q, w, n, sent, copy);
	return sent;
}

/* Hand frames to @p peer's receive queues; returns how many it took. */
static uint16_t
lb_deliver(struct drnic_link *link, struct lb_end *peer, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	RTE_SET_USED(link);
	if (peer->nb_queues == 1)
		return (uint16_t)rte_ring_mp_enqueue_burst(peer->rx[0], (void **)pkts, n, NULL);
	/* Steer each frame to the engine of its destination QP; stop at the
	 * first refusal so the caller keeps a suffix. */
	for (i = 0; i < n; i++) {
		uint32_t dqpn = 0;   /* not RoCE: queue 0, whose engine drops it */
		uint16_t rq;

		(void)drnic_wire_peek_dqpn(pkts[i], &dqpn);
		rq = drnic_link_qpn_queue(dqpn, peer->nb_queues);

		if (rte_ring_mp_enqueue(peer->rx[rq], pkts[i]) != 0)
			break;
	}
	return i;
}

static uint16_t
lb_rx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct lb_port *port = link->priv;

	if (port->tap != NULL)
		return (uint16_t)rte_ring_sc_dequeue_burst(port->tap->rx, (void **)pkts, n, NULL);
	return (uint16_t)rte_ring_sc_dequeue_burst(port->rx_end->rx[q], (void **)pkts, n, NULL);
}

static int
lb_resolve(const struct drnic_link *link, const uint8_t gid[16] __rte_unused, uint8_t mac[6])
{
	const struct lb_port *port = link->priv;

	if (atomic_load_explicit(&port->tx_end->link, memory_order_acquire) == NULL)
		return -ENOENT;
	memcpy(mac, port->tx_end->mac, 6);
	return 0;
}

static const struct link_ops lb_ops = {
	.name = "loopback",
	.create = lb_create,
	.destroy = lb_destroy,
	.tx_burst = lb_tx_burst,
	.rx_burst = lb_rx_burst,
	.resolve = lb_resolve,
};

DRNIC_LINK_REGISTER(lb_ops);
