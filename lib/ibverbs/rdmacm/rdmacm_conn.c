/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm's addresses and connections: bind, resolve, listen,
 * get_request, connect, accept, reject, establish, disconnect, options,
 * ports, ECE. Each is the drnic_ibcm_* call of the same name; what
 * librdmacm does on the program's side is done here: the QP moves of
 * accept and disconnect, the device's limits on the connection's RDMA
 * READ resources, the wait of synchronous ids.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

/** rdma_bind_addr(3). */
RCM_EXPORT int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rcm_id *w;
	int rc;

	if (id == NULL || addr == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	rc = drnic_ibcm_bind_addr(w->did, addr);
	if (rc < 0)
		return rcm_err(rc);
	rcm_id_refresh(w);
	return 0;
}

/** rdma_resolve_addr(3): ADDR_RESOLVED or ADDR_ERROR. */
RCM_EXPORT int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		  int timeout_ms)
{
	struct rcm_id *w;
	int rc;

	if (id == NULL || dst_addr == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	rc = drnic_ibcm_resolve_addr(w->did, src_addr, dst_addr, timeout_ms);
	if (rc < 0)
		return rcm_err(rc);
	return rcm_complete(w);
}

/** rdma_resolve_route(3): ROUTE_RESOLVED or ROUTE_ERROR. */
RCM_EXPORT int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rcm_id *w;
	int rc;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	rc = drnic_ibcm_resolve_route(w->did, timeout_ms);
	if (rc < 0)
		return rcm_err(rc);
	return rcm_complete(w);
}

static void rcm_debug_listen(struct drnic_ibcm_id *did);

/** rdma_listen(3). */
RCM_EXPORT int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	int rc;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	rc = drnic_ibcm_listen(rcm_id_of(id)->did, backlog);
	if (rc < 0)
		return rcm_err(rc);
	rcm_debug_listen(rcm_id_of(id)->did);
	return 0;
}

/*
 * With DRNIC_IBV_DEBUG set, say on stderr where an id listens, as the
 * kernel's `rdma resource show cm_id` lists it: scripts wait for that line
 * before they start a client (an RDMA CM server opens no TCP port).
 */
static void
rcm_debug_listen(struct drnic_ibcm_id *did)
{
	char host[INET6_ADDRSTRLEN] = "?";
	struct sockaddr_storage ss;
	unsigned int port = 0;

	if (!rcm_debug() || drnic_ibcm_id_src_addr(did, &ss) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		port = ntohs(sin6->sin6_port);
	}
	fprintf(stderr, "drnic rdmacm: rdma_listen %s:%u\n", host, port);
}

/**
 * rdma_get_request(3): a synchronous listener's next CONNECT_REQUEST. The
 * new id is synchronous too, holds the event in id->event, and has a QP
 * when the listener came from rdma_create_ep() with QP attributes.
 */
RCM_EXPORT int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	struct rcm_id *lw, *nw;

	if (listen == NULL || id == NULL || !rcm_id_of(listen)->sync)
		return rcm_seterr(EINVAL);
	lw = rcm_id_of(listen);
	for (;;) {
		if (rdma_get_cm_event(listen->channel, &ev) < 0)
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->status == 0)
			break;
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			rdma_ack_cm_event(ev);
			return rcm_seterr(ENODEV);
		}
		rdma_ack_cm_event(ev);
	}
	nw = rcm_id_of(ev->id);
	if (rdma_migrate_id(&nw->id, NULL) < 0)
		goto fail;
	if (lw->has_qp_attr) {
		struct ibv_qp_init_attr attr = lw->qp_attr;

		if (rdma_create_qp(&nw->id, listen->pd, &attr) < 0)
			goto fail;
	}
	nw->id.event = ev;
	*id = &nw->id;
	return 0;
fail:
	{
		int e = errno;

		(void)drnic_ibcm_reject(nw->did, NULL, 0);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(&nw->id);
		return rcm_seterr(e);
	}
}

/*
 * RDMA READ resources: RDMA_MAX_RESP_RES / _INIT_DEPTH (0xFF) mean the
 * device's most; more than that is EINVAL (librdmacm's check).
 */
static int
rcm_resources(uint8_t asked, int dev_max, uint8_t *out)
{
	if (asked == RDMA_MAX_RESP_RES) {
		*out = (uint8_t)(dev_max > 0xFE ? 0xFE : dev_max);
		return 0;
	}
	if (dev_max > 0 && asked > dev_max)
		return -1;
	*out = asked;
	return 0;
}

static int
rcm_conn_param(struct rcm_id *w, const struct rdma_conn_param *s,
	       struct drnic_ibcm_conn_param *d)
{
	const struct rcm_device *dev = rcm_device_of_ctx(w->id.verbs);
	int max_resp = dev != NULL ? dev->max_qp_rd_atom : 16;
	int max_init = dev != NULL ? dev->max_qp_init_rd_atom : 16;

	memset(d, 0, sizeof(*d));
	d->retry_count = 7;
	d->rnr_retry_count = 7;
	d->responder_resources = RDMA_MAX_RESP_RES;
	d->initiator_depth = RDMA_MAX_INIT_DEPTH;
	if (s != NULL) {
		d->private_data = s->private_data;
		d->private_data_len = s->private_data != NULL ? s->private_data_len : 0;
		d->responder_resources = s->responder_resources;
		d->initiator_depth = s->initiator_depth;
		d->flow_control = s->flow_control;
		d->retry_count = s->retry_count;
		d->rnr_retry_count = s->rnr_retry_count;
		d->srq = s->srq;
		d->qp_num = s->qp_num;
	}
	if (rcm_resources(d->responder_resources, max_resp, &d->responder_resources) < 0 ||
	    rcm_resources(d->initiator_depth, max_init, &d->initiator_depth) < 0)
		return rcm_seterr(EINVAL);
	if (w->id.qp != NULL) {
		d->qp_num = w->id.qp->qp_num;
		d->srq = w->id.srq != NULL || w->id.qp->srq != NULL;
	}
	return 0;
}

/** rdma_connect(3): REQ (SIDR_REQ on UD ids). */
RCM_EXPORT int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct drnic_ibcm_conn_param p;
	struct rcm_id *w;
	int rc;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	if (rcm_conn_param(w, conn_param, &p) < 0)
		return -1;
	rc = drnic_ibcm_connect(w->did, &p);
	if (rc < 0)
		return rcm_err(rc);
	return rcm_complete(w);
}

/**
 * rdma_accept(3): the QP (if any) to RTR, REP (SIDR_REP on UD ids), the QP
 * to RTS. Without a value of the program's, the RDMA READ resources answer
 * the request's, within the device's limits.
 */
RCM_EXPORT int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct drnic_ibcm_conn_param p;
	struct rcm_id *w;
	bool move;
	int rc;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	if (rcm_conn_param(w, conn_param, &p) < 0)
		return -1;
	if (conn_param == NULL || conn_param->responder_resources == RDMA_MAX_RESP_RES)
		p.responder_resources = w->req_initiator_depth < p.responder_resources ?
					w->req_initiator_depth : p.responder_resources;
	if (conn_param == NULL || conn_param->initiator_depth == RDMA_MAX_INIT_DEPTH)
		p.initiator_depth = w->req_responder_resources < p.initiator_depth ?
				    w->req_responder_resources : p.initiator_depth;
	move = id->qp_type != IBV_QPT_UD && id->qp != NULL;
	if (move && rcm_qp_move(w, IBV_QPS_RTR, p.responder_resources) < 0)
		return -1;
	rc = drnic_ibcm_accept(w->did, &p);
	if (rc < 0) {
		rcm_qp_error(w);
		return rcm_err(rc);
	}
	/* RTS once the REP is out: lib/ibcm picks the send PSN the REP
	 * carries in drnic_ibcm_accept(), so the CM's RTS attributes hold it
	 * only now. Our side sends nothing before the program has its
	 * ESTABLISHED; RTR, before the REP, takes the peer's first packets. */
	if (move && rcm_qp_move(w, IBV_QPS_RTS, p.initiator_depth) < 0) {
		int e = errno;

		rcm_qp_error(w);
		(void)drnic_ibcm_disconnect(w->did);
		return rcm_seterr(e);
	}
	if (id->qp_type == IBV_QPT_UD)
		return 0;
	return rcm_complete(w);
}

/** rdma_reject(3): REJ, consumer reject, with the private data. */
RCM_EXPORT int
rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	int rc;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	rc = drnic_ibcm_reject(rcm_id_of(id)->did, private_data,
			       private_data != NULL ? private_data_len : 0);
	return rc < 0 ? rcm_err(rc) : 0;
}

/** rdma_establish(3): the RTU of an active side without a QP on its id. */
RCM_EXPORT int
rdma_establish(struct rdma_cm_id *id)
{
	int rc;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	rc = drnic_ibcm_establish(rcm_id_of(id)->did);
	return rc < 0 ? rcm_err(rc) : 0;
}

/** rdma_disconnect(3): the QP to ERROR, then DREQ (or DREP). */
RCM_EXPORT int
rdma_disconnect(struct rdma_cm_id *id)
{
	int rc;

	if (id == NULL)
		return rcm_seterr(EINVAL);
	if (id->qp_type != IBV_QPT_UD)
		rcm_qp_error(rcm_id_of(id));
	rc = drnic_ibcm_disconnect(rcm_id_of(id)->did);
	return rc < 0 ? rcm_err(rc) : 0;
}

/**
 * rdma_notify(3): the CM takes data arriving before the RTU as the RTU
 * itself (drnic's responder tells no one), so there is nothing to pass on.
 */
RCM_EXPORT int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	if (id == NULL)
		return rcm_seterr(EINVAL);
	if (event != IBV_EVENT_COMM_EST)
		return rcm_seterr(EINVAL);
	return 0;
}

/** rdma_set_option(3): RDMA_OPTION_ID's TOS, REUSEADDR, AFONLY, ACK_TIMEOUT. */
RCM_EXPORT int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	enum drnic_ibcm_option o;
	int rc;

	if (id == NULL || optval == NULL)
		return rcm_seterr(EINVAL);
	if (level != RDMA_OPTION_ID)
		return rcm_seterr(ENOSYS);      /* RDMA_OPTION_IB_PATH: no SA here */
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		o = DRNIC_IBCM_OPT_TOS;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
		o = DRNIC_IBCM_OPT_REUSEADDR;
		break;
	case RDMA_OPTION_ID_AFONLY:
		o = DRNIC_IBCM_OPT_AFONLY;
		break;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		o = DRNIC_IBCM_OPT_ACK_TIMEOUT;
		break;
	default:
		return rcm_seterr(ENOSYS);
	}
	rc = drnic_ibcm_set_option(rcm_id_of(id)->did, o, optval, optlen);
	return rc < 0 ? rcm_err(rc) : 0;
}

static __be16
rcm_port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port;
	return 0;
}

/** rdma_get_src_port(3): network order. */
RCM_EXPORT __be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	return id != NULL ? rcm_port_of(&id->route.addr.src_addr) : 0;
}

/** rdma_get_dst_port(3): network order. */
RCM_EXPORT __be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id != NULL ? rcm_port_of(&id->route.addr.dst_addr) : 0;
}

/*
 * ECE (enhanced connection establishment): drnic is a device without it,
 * as rdma-core's providers without set_ece/query_ece are: the local value is
 * accepted and sent nowhere, the peer's reads as none.
 */

/** rdma_set_local_ece(3). */
RCM_EXPORT int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || ece == NULL || id->qp != NULL)
		return rcm_seterr(EINVAL);
	return 0;
}

/** rdma_get_remote_ece(3): none. */
RCM_EXPORT int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || ece == NULL || id->qp != NULL)
		return rcm_seterr(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}

/** rdma_reject_ece(3): a reject (no ECE reason to give). */
RCM_EXPORT int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len);
}
