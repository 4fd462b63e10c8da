/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm's event channels, ids and events, over drnic's
 * connection manager (drnic_ibcm.h), with rdma_cm(7)'s semantics:
 *
 *  - A channel's fd is the drnic channel's: readable while events wait;
 *    rdma_get_cm_event() blocks unless the program set O_NONBLOCK on it.
 *  - Each event is allocated (with a copy of its private data) and freed by
 *    rdma_ack_cm_event(); rdma_destroy_id() waits until the id's events are
 *    acked, as librdmacm does.
 *  - A CONNECT_REQUEST brings a new rdma_cm_id (the listener's channel,
 *    context and port space).
 *  - An id made without a channel is synchronous: it gets a channel of its
 *    own, and each call waits for its event (kept in id->event until the
 *    next call or the id's end), failing with the event's status.
 *  - On CONNECT_RESPONSE with a QP on the id, the QP goes to RTR and RTS,
 *    the RTU is sent (drnic_ibcm_establish()) and the program gets
 *    ESTABLISHED; without a QP it gets CONNECT_RESPONSE and calls
 *    rdma_establish().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>

#include "rdmacm_priv.h"

/* The live ids, so that an event of an id being destroyed by another thread
 * is dropped instead of read from freed memory; and the count of each id's
 * events not yet acked. */
static pthread_mutex_t rcm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rcm_cond = PTHREAD_COND_INITIALIZER;
static struct rcm_id *rcm_ids;

/* An event as the program gets it, with its private data. */
struct rcm_event {
	struct rdma_cm_event ev;          /* must be first */
	struct rcm_id *owner;             /* whose events_out counts it */
	uint8_t pdata[DRNIC_IBCM_PDATA_MAX];
};

/* ------------------------------------------------------------------------ */
/* Event channels                                                           */
/* ------------------------------------------------------------------------ */

/** rdma_create_event_channel(3). */
RCM_EXPORT struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct rcm_channel *c;

	if (rcm_init() < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->dch = drnic_ibcm_create_channel();
	if (c->dch == NULL) {
		errno = drnic_ibv_rte_errno() ? drnic_ibv_rte_errno() : ENOMEM;
		free(c);
		return NULL;
	}
	c->ch.fd = drnic_ibcm_channel_fd(c->dch);
	/* Freed with the drnic channel, which outlives its destroy a while:
	 * a late rdma_get_cm_event() reads both (drnic_ibcm_destroy_channel). */
	drnic_ibcm_channel_on_release(c->dch, free, c);
	return &c->ch;
}

/** rdma_destroy_event_channel(3): the ids on it must be gone. */
RCM_EXPORT void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (channel == NULL)
		return;
	/* Refused while ids are on it: they keep reading it. */
	(void)drnic_ibcm_destroy_channel(rcm_channel_of(channel)->dch);
}

/* ------------------------------------------------------------------------ */
/* Ids                                                                      */
/* ------------------------------------------------------------------------ */

/* The QP type the CM knows for a verbs QP type (XRC: as RC). */
static enum drnic_qp_type
rcm_cm_qp_type(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_UD:
		return DRNIC_QPT_UD;
	case IBV_QPT_UC:
		return DRNIC_QPT_UC;
	default:
		return DRNIC_QPT_RC;
	}
}

/* A live id of ours behind @p ctx (a drnic id's context), or NULL. Called
 * with rcm_lock held. */
static struct rcm_id *
rcm_id_find(const void *ctx)
{
	struct rcm_id *w;

	for (w = rcm_ids; w != NULL; w = w->next)
		if (w == ctx)
			return w;
	return NULL;
}

/*
 * A new id on @p channel (NULL: synchronous, on a channel of its own),
 * over the drnic id @p did (NULL: a new one).
 */
static struct rcm_id *
rcm_id_new(struct rdma_event_channel *channel, void *context, enum rdma_port_space ps,
	   enum ibv_qp_type qpt, struct drnic_ibcm_id *did)
{
	struct rcm_id *w = calloc(1, sizeof(*w));
	int rc;

	if (w == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (channel == NULL) {
		channel = rdma_create_event_channel();
		if (channel == NULL) {
			free(w);
			return NULL;
		}
		w->sync = true;
	}
	w->id.channel = channel;
	w->id.context = context;
	w->id.ps = ps;
	w->id.qp_type = qpt;
	if (did == NULL) {
		did = drnic_ibcm_create_id(rcm_channel_of(channel)->dch, w,
					   (enum drnic_ibcm_ps)ps, rcm_cm_qp_type(qpt));
		if (did == NULL) {
			errno = drnic_ibv_rte_errno() ? drnic_ibv_rte_errno() : ENOMEM;
			goto fail;
		}
	} else {
		drnic_ibcm_id_set_context(did, w);
		if (w->sync && (rc = drnic_ibcm_migrate_id(did, rcm_channel_of(channel)->dch)) < 0) {
			errno = -rc;
			goto fail;
		}
	}
	w->did = did;
	pthread_mutex_lock(&rcm_lock);
	w->next = rcm_ids;
	rcm_ids = w;
	pthread_mutex_unlock(&rcm_lock);
	return w;
fail:
	if (w->sync)
		rdma_destroy_event_channel(channel);
	free(w);
	return NULL;
}

static enum ibv_qp_type
rcm_ps_qp_type(enum rdma_port_space ps)
{
	return ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
}

int
rcm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	      enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct rcm_id *w;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	if (rcm_init() < 0)
		return -1;
	switch (ps) {
	case RDMA_PS_TCP: case RDMA_PS_UDP: case RDMA_PS_IB: case RDMA_PS_IPOIB:
		break;
	default:
		return rcm_seterr(EINVAL);
	}
	w = rcm_id_new(channel, context, ps, qpt, NULL);
	if (w == NULL)
		return -1;
	*id = &w->id;
	return 0;
}

/** rdma_create_id(3): RC for RDMA_PS_TCP and _IB, UD for _UDP and _IPOIB. */
RCM_EXPORT int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	return rcm_create_id(channel, id, context, ps, rcm_ps_qp_type(ps));
}

void
rcm_sync_ack(struct rcm_id *w)
{
	if (w->id.event != NULL) {
		rdma_ack_cm_event(w->id.event);
		w->id.event = NULL;
	}
}

/** rdma_destroy_id(3): waits until the id's events are acked. */
RCM_EXPORT int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rcm_id *w, **pp;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	rcm_sync_ack(w);
	pthread_mutex_lock(&rcm_lock);
	for (pp = &rcm_ids; *pp != NULL && *pp != w; pp = &(*pp)->next)
		;
	if (*pp == NULL) {
		pthread_mutex_unlock(&rcm_lock);
		return rcm_seterr(EINVAL);
	}
	*pp = w->next;
	while (w->events_out > 0)
		pthread_cond_wait(&rcm_cond, &rcm_lock);
	pthread_mutex_unlock(&rcm_lock);
	(void)drnic_ibcm_destroy_id(w->did);
	rcm_mcast_free(w);
	if (w->sync)
		rdma_destroy_event_channel(id->channel);
	free(w);
	return 0;
}

int
rcm_complete(struct rcm_id *w)
{
	struct rdma_cm_event *ev;
	int st;

	if (!w->sync)
		return 0;
	rcm_sync_ack(w);
	if (rdma_get_cm_event(w->id.channel, &ev) < 0)
		return -1;
	w->id.event = ev;
	st = ev->status;
	if (st == 0)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return rcm_seterr(ECONNREFUSED);
	return rcm_seterr(st < 0 ? -st : st);
}

static void
rcm_fill_path(struct ibv_sa_path_rec *p, const struct drnic_ibcm_route *r)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dgid.raw, r->dgid.raw, 16);
	memcpy(p->sgid.raw, r->sgid.raw, 16);
	p->hop_limit = r->hop_limit;
	p->traffic_class = r->traffic_class;
	p->reversible = 1;
	p->numb_path = 1;
	p->pkey = htobe16(r->pkey);
	p->mtu_selector = 2;                  /* exactly */
	p->mtu = (uint8_t)r->mtu;             /* enum drnic_mtu = enum ibv_mtu */
	p->rate_selector = 2;
	p->rate = IBV_RATE_100_GBPS;
	p->packet_life_time_selector = 2;
	p->packet_life_time = r->packet_life_time;
}

void
rcm_id_refresh(struct rcm_id *w)
{
	struct rdma_route *route = &w->id.route;
	struct drnic_ibcm_route r;
	struct sockaddr_storage ss;
	struct rcm_device *d;

	if (drnic_ibcm_id_src_addr(w->did, &ss) == 0)
		memcpy(&route->addr.src_storage, &ss, sizeof(ss));
	if (drnic_ibcm_id_dst_addr(w->did, &ss) == 0)
		memcpy(&route->addr.dst_storage, &ss, sizeof(ss));
	d = rcm_device_of(drnic_ibcm_id_device(w->did));
	if (d != NULL && w->id.verbs == NULL) {
		w->id.verbs = d->ctx;
		w->id.port_num = 1;
		/* as librdmacm: an id on a device carries the device's PD
		 * (UCX creates its placeholder QPs on id->pd) */
		if (w->id.pd == NULL)
			w->id.pd = rcm_default_pd(d->ctx);
	}
	if (drnic_ibcm_id_route(w->did, &r) < 0)
		return;
	memcpy(route->addr.addr.ibaddr.sgid.raw, r.sgid.raw, 16);
	memcpy(route->addr.addr.ibaddr.dgid.raw, r.dgid.raw, 16);
	route->addr.addr.ibaddr.pkey = htobe16(r.pkey);
	if (r.num_paths > 0) {
		rcm_fill_path(&w->path, &r);
		route->path_rec = &w->path;
		route->num_paths = 1;
	}
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */
/* ------------------------------------------------------------------------ */

static void
rcm_event_conn(struct rcm_event *e, const struct drnic_ibcm_event *raw)
{
	const struct drnic_ibcm_conn_param *s = &raw->param.conn;
	struct rdma_conn_param *d = &e->ev.param.conn;

	d->private_data_len = s->private_data_len;
	if (s->private_data_len > 0 && s->private_data != NULL) {
		memcpy(e->pdata, s->private_data, s->private_data_len);
		d->private_data = e->pdata;
	}
	d->responder_resources = s->responder_resources;
	d->initiator_depth = s->initiator_depth;
	d->flow_control = s->flow_control;
	d->retry_count = s->retry_count;
	d->rnr_retry_count = s->rnr_retry_count;
	d->srq = s->srq;
	d->qp_num = s->qp_num;
}

static void
rcm_event_ud(struct rcm_event *e, const struct drnic_ibcm_event *raw)
{
	const struct drnic_ibcm_ud_param *s = &raw->param.ud;
	struct rdma_ud_param *d = &e->ev.param.ud;

	d->private_data_len = s->private_data_len;
	if (s->private_data_len > 0 && s->private_data != NULL) {
		memcpy(e->pdata, s->private_data, s->private_data_len);
		d->private_data = e->pdata;
	}
	drnic_ibv_ah_attr_from_drnic(&s->ah_attr, &d->ah_attr);
	d->ah_attr.port_num = 1;
	d->qp_num = s->qp_num;
	d->qkey = s->qkey;
}

/* CONNECT_RESPONSE on an id with a QP: RTR, RTS, RTU; ESTABLISHED. */
static void
rcm_event_conn_resp(struct rcm_id *w, struct rcm_event *e)
{
	int rc;

	if (rcm_qp_move(w, IBV_QPS_RTR, 0xFF) < 0 || rcm_qp_move(w, IBV_QPS_RTS, 0xFF) < 0) {
		rc = -errno;
		(void)drnic_ibcm_reject(w->did, NULL, 0);
		e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
		e->ev.status = rc;
		return;
	}
	rc = drnic_ibcm_establish(w->did);
	if (rc < 0) {
		rcm_qp_error(w);
		e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
		e->ev.status = rc;
		return;
	}
	e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
}

/* A CONNECT_REQUEST: the new id. @return its rcm_id, or NULL (dropped). */
static struct rcm_id *
rcm_event_request(const struct drnic_ibcm_event *raw, struct rcm_event *e)
{
	struct rcm_id *lw, *nw;

	pthread_mutex_lock(&rcm_lock);
	lw = rcm_id_find(drnic_ibcm_id_context(raw->listen_id));
	if (lw != NULL)
		lw->events_out++;
	pthread_mutex_unlock(&rcm_lock);
	if (lw == NULL) {
		(void)drnic_ibcm_destroy_id(raw->id);
		return NULL;
	}
	e->owner = lw;
	nw = rcm_id_new(lw->id.channel, lw->id.context, lw->id.ps, lw->id.qp_type, raw->id);
	if (nw == NULL) {
		(void)drnic_ibcm_reject(raw->id, NULL, 0);
		(void)drnic_ibcm_destroy_id(raw->id);
		pthread_mutex_lock(&rcm_lock);
		lw->events_out--;
		pthread_cond_broadcast(&rcm_cond);
		pthread_mutex_unlock(&rcm_lock);
		return NULL;
	}
	nw->req_initiator_depth = raw->param.conn.initiator_depth;
	nw->req_responder_resources = raw->param.conn.responder_resources;
	e->ev.listen_id = &lw->id;
	return nw;
}

/* Turn a drnic event into the program's. @return false: dropped (its id is
 * gone). */
static bool
rcm_event_build(struct rcm_event *e, const struct drnic_ibcm_event *raw)
{
	struct rcm_id *w;
	bool ud;

	memset(e, 0, sizeof(*e));
	if (raw->event == DRNIC_IBCM_EVENT_CONNECT_REQUEST) {
		w = rcm_event_request(raw, e);
		if (w == NULL)
			return false;
	} else {
		pthread_mutex_lock(&rcm_lock);
		w = rcm_id_find(drnic_ibcm_id_context(raw->id));
		if (w != NULL)
			w->events_out++;
		pthread_mutex_unlock(&rcm_lock);
		if (w == NULL)
			return false;
		e->owner = w;
	}
	rcm_id_refresh(w);
	e->ev.id = &w->id;
	e->ev.event = (enum rdma_cm_event_type)raw->event;
	e->ev.status = raw->status;
	ud = w->id.qp_type == IBV_QPT_UD;
	switch (e->ev.event) {
	case RDMA_CM_EVENT_MULTICAST_JOIN:
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		rcm_event_ud(e, raw);
		rcm_event_mcast(w, &e->ev);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ud)
			rcm_event_ud(e, raw);
		else
			rcm_event_conn(e, raw);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		rcm_event_conn(e, raw);
		if (w->id.qp != NULL)
			rcm_event_conn_resp(w, e);
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (ud)
			rcm_event_ud(e, raw);
		else
			rcm_event_conn(e, raw);
		break;
	default:
		break;
	}
	return true;
}

/** rdma_get_cm_event(3): blocks unless the channel's fd is O_NONBLOCK. */
RCM_EXPORT int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct drnic_ibcm_event raw;
	struct rcm_event *e;
	bool nonblock;
	int rc, fl;

	if (channel == NULL || event == NULL)
		return rcm_seterr(EINVAL);
	fl = fcntl(channel->fd, F_GETFL);
	nonblock = fl >= 0 && (fl & O_NONBLOCK);
	e = malloc(sizeof(*e));
	if (e == NULL)
		return rcm_seterr(ENOMEM);
	for (;;) {
		rc = drnic_ibcm_get_event(rcm_channel_of(channel)->dch, &raw, nonblock ? 0 : -1);
		if (rc == -EAGAIN && !nonblock)
			continue;
		if (rc < 0) {
			free(e);
			return rcm_err(rc);
		}
		if (rcm_event_build(e, &raw))
			break;
	}
	*event = &e->ev;
	return 0;
}

/** rdma_ack_cm_event(3): frees the event. */
RCM_EXPORT int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rcm_event *e = (struct rcm_event *)(void *)event;

	if (event == NULL)
		return rcm_seterr(EINVAL);
	pthread_mutex_lock(&rcm_lock);
	if (e->owner != NULL && e->owner->events_out > 0)
		e->owner->events_out--;
	pthread_cond_broadcast(&rcm_cond);
	pthread_mutex_unlock(&rcm_lock);
	free(e);
	return 0;
}

/** rdma_event_str(3). */
RCM_EXPORT const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	return drnic_ibcm_event_str((enum drnic_ibcm_event_type)event);
}

/** rdma_migrate_id(3): NULL makes the id synchronous. */
RCM_EXPORT int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct rdma_event_channel *old;
	struct rcm_id *w;
	bool to_sync = channel == NULL;
	int rc;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	old = id->channel;
	if (to_sync) {
		channel = rdma_create_event_channel();
		if (channel == NULL)
			return -1;
	}
	rcm_sync_ack(w);
	/* Events of the id still out on the old channel first (librdmacm). */
	pthread_mutex_lock(&rcm_lock);
	while (w->events_out > 0)
		pthread_cond_wait(&rcm_cond, &rcm_lock);
	pthread_mutex_unlock(&rcm_lock);
	rc = drnic_ibcm_migrate_id(w->did, rcm_channel_of(channel)->dch);
	if (rc < 0) {
		if (to_sync)
			rdma_destroy_event_channel(channel);
		return rcm_err(rc);
	}
	id->channel = channel;
	if (w->sync)
		rdma_destroy_event_channel(old);
	w->sync = to_sync;
	return 0;
}
