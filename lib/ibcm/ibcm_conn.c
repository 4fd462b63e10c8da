/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connections of the RDMA CM: listen, connect (REQ / SIDR_REQ with the
 * RDMA CM IP header), accept, reject, establish, disconnect, the QP's
 * attributes (drnic_ibcm_init_qp_attr() and the moves of an attached QP),
 * multicast, and what the IB CM protocol reports (ibcm_conn_event()).
 *
 * The REQ's fields are those Linux's rdma_cm puts in its REQs over RoCE
 * (checked on ../shared/testdata/roce-captures/rxe_linux61_services.pcap):
 * LIDs 0xFFFF, P_Key 0xFFFF, hop limit 64, SL 0, subnet-local 0, packet
 * rate 0, flow label (source port * 31 + destination port) & 0xFFFFF,
 * local ACK timeout packet life (18) + 1, CM response timeouts 20, 15 CM
 * retries, local Q_Key 0; a REP carries target ACK delay 15.
 *
 * Everything here runs under ibcm.lock: API calls take it, and the
 * protocol's events come from inside protocol calls made under it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_common.h>
#include <rte_random.h>

#include "ibcm_rdma.h"
#include "rpc.h"
#include "verbs_objects.h"

#define IBCM_REQ_UDATA_MAX  (DRNIC_MAD_CM_REQ_PDATA_LEN - DRNIC_RDMA_CM_HDR_LEN)      /* 56 */
#define IBCM_SIDR_UDATA_MAX (DRNIC_MAD_CM_SIDR_REQ_PDATA_LEN - DRNIC_RDMA_CM_HDR_LEN) /* 180 */
#define IBCM_TARGET_ACK_DELAY 15
#define IBCM_MIN_RNR_TIMER  12
#define IBCM_SIDR_UNSUPPORTED 1   /* SIDR_REP status: no such service */
#define IBCM_SIDR_REJECT      2   /* SIDR_REP status: rejected by the consumer */
#define IBCM_DEFAULT_BACKLOG 128

static bool
ibcm_id_is_ud(const struct drnic_ibcm_id *id)
{
	return id->qp_type == DRNIC_QPT_UD;
}

static uint8_t
ibcm_min8(unsigned int a, unsigned int b)
{
	return (uint8_t)RTE_MIN(a, b);
}

static uint32_t
ibcm_rand_psn(void)
{
	return (uint32_t)rte_rand() & 0xFFFFFF;
}

static void
ibcm_peer_of(const struct drnic_ibcm_id *id, struct ibcm_peer *p)
{
	memset(p, 0, sizeof(*p));
	p->gid = id->route.dgid;
	p->local_gid = id->route.sgid;
	memcpy(p->mac, id->route.dmac, 6);
	p->qpn = DRNIC_MAD_GSI_QPN;
}

/* The RDMA CM header address of @p ss: IPv4 in the last 4 of 16 bytes,
 * the first 12 zero (as Linux writes it). */
static void
ibcm_hdr_addr(const struct sockaddr_storage *ss, uint8_t out[16])
{
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET)
		memcpy(out + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		memcpy(out, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

/* A header address as a GID (IPv4 mapped when @p v4). */
static void
ibcm_hdr_gid(const uint8_t addr[16], bool v4, union drnic_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (v4) {
		gid->raw[10] = 0xFF;
		gid->raw[11] = 0xFF;
		memcpy(&gid->raw[12], addr + 12, 4);
	} else {
		memcpy(gid->raw, addr, 16);
	}
}

/* The private data of a REQ / SIDR_REQ: the RDMA CM header, then the user's. */
static int
ibcm_req_pdata(const struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param,
	       uint8_t *out, size_t room)
{
	struct drnic_rdma_cm_hdr h;
	int rc;

	memset(&h, 0, sizeof(h));
	h.cma_version = DRNIC_RDMA_CM_HDR_VERSION;
	h.ip_version = id->src.ss_family == AF_INET ? 4 : 6;
	h.port = ibcm_sa_port((const struct sockaddr *)&id->src);
	ibcm_hdr_addr(&id->src, h.src_addr);
	ibcm_hdr_addr(&id->dst, h.dst_addr);
	memset(out, 0, room);
	rc = drnic_rdma_cm_hdr_build(&h, out, room);
	if (rc < 0)
		return rc;
	if (param != NULL && param->private_data_len > 0)
		memcpy(out + DRNIC_RDMA_CM_HDR_LEN, param->private_data, param->private_data_len);
	return 0;
}

/* ---- QP attributes ------------------------------------------------------ */

static int
ibcm_qp_attr(const struct drnic_ibcm_id *id, struct drnic_qp_attr *a, int *mask)
{
	enum drnic_qp_state st = a->qp_state;
	bool rc_qp = id->qp_type == DRNIC_QPT_RC;

	memset(a, 0, sizeof(*a));
	a->qp_state = st;
	*mask = DRNIC_QP_STATE;
	switch (st) {
	case DRNIC_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask |= DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT;
		if (ibcm_id_is_ud(id)) {
			a->qkey = DRNIC_IBCM_UDP_QKEY;
			*mask |= DRNIC_QP_QKEY;
		} else {
			a->qp_access_flags = DRNIC_ACCESS_REMOTE_WRITE |
					     (rc_qp ? DRNIC_ACCESS_REMOTE_READ |
						      DRNIC_ACCESS_REMOTE_ATOMIC : 0);
			*mask |= DRNIC_QP_ACCESS_FLAGS;
		}
		return 0;
	case DRNIC_QPS_RTR:
		if (ibcm_id_is_ud(id))
			return 0;
		if (!id->have_remote)
			return -EINVAL;
		a->path_mtu = id->route.mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->rq_psn;
		a->ah_attr.is_global = 1;
		a->ah_attr.port_num = 1;
		a->ah_attr.grh.dgid = id->route.dgid;
		a->ah_attr.grh.flow_label = id->flow_label;
		a->ah_attr.grh.sgid_index = id->route.sgid_index;
		a->ah_attr.grh.hop_limit = id->route.hop_limit;
		a->ah_attr.grh.traffic_class = id->route.traffic_class;
		memcpy(a->ah_attr.dmac, id->route.dmac, 6);
		*mask |= DRNIC_QP_AV | DRNIC_QP_PATH_MTU | DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN;
		if (rc_qp) {
			a->max_dest_rd_atomic = id->resp_res;
			a->min_rnr_timer = IBCM_MIN_RNR_TIMER;
			*mask |= DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER;
		}
		return 0;
	case DRNIC_QPS_RTS:
		a->sq_psn = id->sq_psn;
		*mask |= DRNIC_QP_SQ_PSN;
		if (rc_qp) {
			if (!id->have_remote)
				return -EINVAL;
			a->timeout = id->local_ack_timeout;
			a->retry_cnt = id->retry_cnt;
			a->rnr_retry = id->rnr_retry;
			a->max_rd_atomic = id->init_depth;
			*mask |= DRNIC_QP_TIMEOUT | DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY |
				 DRNIC_QP_MAX_QP_RD_ATOMIC;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

int
drnic_ibcm_init_qp_attr(struct drnic_ibcm_id *id, struct drnic_qp_attr *attr, int *mask)
{
	int rc;

	if (rpc_attached())
		return ibcm_r_init_qp_attr(id, attr, mask);
	if (id == NULL || attr == NULL || mask == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	rc = ibcm_qp_attr(id, attr, mask);
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

/* Move the attached QP to @p st. */
static int
ibcm_qp_move(struct drnic_ibcm_id *id, enum drnic_qp_state st)
{
	struct drnic_qp_attr a;
	int mask, rc;

	a.qp_state = st;
	rc = ibcm_qp_attr(id, &a, &mask);
	if (rc == 0)
		rc = drnic_modify_qp(id->qp, &a, mask);
	if (rc < 0)
		IBCM_ID_LOG(NOTICE, id, "QP %u to %s: %s", drnic_qp_num(id->qp),
			    drnic_qp_state_str(st), strerror(-rc));
	return rc;
}

/* The attached QP to RTR and RTS. */
static int
ibcm_qp_ready(struct drnic_ibcm_id *id)
{
	int rc = ibcm_qp_move(id, DRNIC_QPS_RTR);

	return rc < 0 ? rc : ibcm_qp_move(id, DRNIC_QPS_RTS);
}

static void
ibcm_qp_error(struct drnic_ibcm_id *id)
{
	struct drnic_qp_attr a = { .qp_state = DRNIC_QPS_ERR };

	if (id->qp != NULL && drnic_qp_state(id->qp) != DRNIC_QPS_RESET)
		(void)drnic_modify_qp(id->qp, &a, DRNIC_QP_STATE);
}

int
drnic_ibcm_attach_qp(struct drnic_ibcm_id *id, struct drnic_qp *qp)
{
	unsigned int i;
	int rc;

	if (rpc_attached())
		return ibcm_r_attach_qp(id, qp);
	if (id == NULL || qp == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (id->dev == NULL || id->qp != NULL || qp->dev != id->dev->dev ||
	    qp->type != (uint8_t)id->qp_type || drnic_qp_state(qp) != DRNIC_QPS_RESET) {
		rc = -EINVAL;
		goto out;
	}
	id->qp = qp;
	rc = ibcm_qp_move(id, DRNIC_QPS_INIT);
	if (rc == 0 && ibcm_id_is_ud(id)) {
		/* A UD QP is ready at once (as rdma_create_qp() leaves it). */
		id->sq_psn = ibcm_rand_psn();
		rc = ibcm_qp_move(id, DRNIC_QPS_RTR);
		if (rc == 0)
			rc = ibcm_qp_move(id, DRNIC_QPS_RTS);
		for (i = 0; rc == 0 && i < IBCM_MAX_MCAST; i++)
			if (id->mcast[i].used)
				rc = drnic_attach_mcast(qp, &id->mcast[i].gid, 0);
	}
	if (rc < 0)
		id->qp = NULL;
out:
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

/* ---- listen ------------------------------------------------------------- */

static uint64_t
ibcm_id_sid(const struct drnic_ibcm_id *id)
{
	return drnic_rdma_cm_service_id((uint16_t)id->ps,
					ibcm_sa_port((const struct sockaddr *)&id->src));
}

/* Another listener than @p id that needs @p id's service ID on @p d. */
static bool
ibcm_listen_shared(const struct drnic_ibcm_id *id, const struct ibcm_dev *d)
{
	const struct drnic_ibcm_id *o;

	TAILQ_FOREACH(o, &ibcm.ids, next)
		if (o != id && o->state == IBCM_ID_LISTEN && ibcm_id_sid(o) == ibcm_id_sid(id) &&
		    (o->dev == NULL || o->dev == d))
			return true;
	return false;
}

int
ibcm_listen_register(struct ibcm_dev *d, struct drnic_ibcm_id *id)
{
	int rc;

	if (ibcm_listen_shared(id, d))
		return 0;
	rc = ibcm_proto_listen(d->proto, ibcm_id_sid(id), NULL);
	return rc == -EADDRINUSE ? 0 : rc;
}

void
ibcm_listen_stop(struct drnic_ibcm_id *id)
{
	struct ibcm_dev *d;

	TAILQ_FOREACH(d, &ibcm.devs, next) {
		if ((id->dev != NULL && id->dev != d) || ibcm_listen_shared(id, d))
			continue;
		(void)ibcm_proto_unlisten(d->proto, ibcm_id_sid(id));
	}
	id->state = IBCM_ID_ADDR_BOUND;
}

int
drnic_ibcm_listen(struct drnic_ibcm_id *id, int backlog)
{
	const struct drnic_ibcm_id *o;
	struct ibcm_dev *d;
	int rc = 0;

	if (rpc_attached())
		return ibcm_r_simple(RPC_CM_LISTEN, id, (uint64_t)(int64_t)backlog);
	if (id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (id->state == IBCM_ID_LISTEN) {
		id->backlog = backlog > 0 ? backlog : IBCM_DEFAULT_BACKLOG;
		goto out;
	}
	if (id->state != IBCM_ID_ADDR_BOUND) {
		rc = -EINVAL;
		goto out;
	}
	/* Two listeners never share a port and an address, REUSEADDR or not. */
	TAILQ_FOREACH(o, &ibcm.ids, next) {
		union drnic_gid g;

		if (o == id || o->state != IBCM_ID_LISTEN || o->ps != id->ps ||
		    ibcm_id_sid(o) != ibcm_id_sid(id))
			continue;
		ibcm_sa_gid((const struct sockaddr *)&id->src, &g);
		if (ibcm_sa_is_any((const struct sockaddr *)&id->src) ||
		    ibcm_sa_is_any((const struct sockaddr *)&o->src) ||
		    ibcm_listen_matches(o, o->dev != NULL ? o->dev : id->dev, &g)) {
			rc = -EADDRINUSE;
			goto out;
		}
	}
	TAILQ_FOREACH(d, &ibcm.devs, next) {
		if (id->dev != NULL && id->dev != d)
			continue;
		rc = ibcm_listen_register(d, id);
		if (rc < 0)
			break;
	}
	if (rc < 0) {
		ibcm_listen_stop(id);
		goto out;
	}
	id->backlog = backlog > 0 ? backlog : IBCM_DEFAULT_BACKLOG;
	id->pending = 0;
	id->state = IBCM_ID_LISTEN;
out:
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

/* ---- active side --------------------------------------------------------- */

static int
ibcm_connect_ud(struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param)
{
	struct drnic_mad_cm_sidr_req req;
	struct ibcm_peer peer;
	int rc;

	if (param != NULL && param->private_data_len > IBCM_SIDR_UDATA_MAX)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.pkey = 0xFFFF;
	req.service_id = drnic_rdma_cm_service_id((uint16_t)id->ps,
						  ibcm_sa_port((const struct sockaddr *)&id->dst));
	rc = ibcm_req_pdata(id, param, req.private_data, sizeof(req.private_data));
	if (rc < 0)
		return rc;
	ibcm_peer_of(id, &peer);
	return ibcm_send_sidr_req(id->conn, &peer, &req, ibcm_now());
}

static int
ibcm_connect_rc(struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param)
{
	static const struct drnic_ibcm_conn_param dflt = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct drnic_mad_cm_req req;
	struct drnic_mad_cm_path *p = &req.primary;
	struct ibcm_peer peer;
	uint16_t sport, dport;
	int rc;

	if (param == NULL)
		param = &dflt;
	if (param->private_data_len > IBCM_REQ_UDATA_MAX ||
	    (param->private_data_len > 0 && param->private_data == NULL) ||
	    (id->qp == NULL && param->qp_num == 0))
		return -EINVAL;
	sport = ibcm_sa_port((const struct sockaddr *)&id->src);
	dport = ibcm_sa_port((const struct sockaddr *)&id->dst);
	id->rq_psn = ibcm_rand_psn();
	id->resp_res = ibcm_min8(param->responder_resources, (unsigned int)id->dev->max_rd_atom);
	id->init_depth = ibcm_min8(param->initiator_depth, (unsigned int)id->dev->max_rd_atom);
	id->retry_cnt = ibcm_min8(param->retry_count, 7);
	id->local_ack_timeout = id->ack_timeout_set ? id->ack_timeout :
				id->route.packet_life_time + 1;
	id->flow_label = ((uint32_t)sport * 31 + dport) & 0xFFFFF;

	memset(&req, 0, sizeof(req));
	req.service_id = drnic_rdma_cm_service_id((uint16_t)id->ps, dport);
	req.local_ca_guid = id->dev->ca_guid;
	req.local_qpn = id->qp != NULL ? drnic_qp_num(id->qp) : (param->qp_num & 0xFFFFFF);
	req.responder_resources = id->resp_res;
	req.initiator_depth = id->init_depth;
	req.remote_cm_resp_timeout = id->dev->cm_timeout;
	req.transport_service = id->qp_type == DRNIC_QPT_UC ? 1 : 0;
	req.e2e_flow_control = param->flow_control ? 1 : 0;
	req.starting_psn = id->rq_psn;   /* what we expect: see ibcm_on_rep() */
	req.local_cm_resp_timeout = id->dev->cm_timeout;
	req.retry_count = id->retry_cnt;
	req.pkey = 0xFFFF;
	req.path_mtu = (uint8_t)id->route.mtu;
	req.rnr_retry_count = ibcm_min8(param->rnr_retry_count, 7);
	req.max_cm_retries = 15;
	req.srq = id->qp != NULL ? id->qp->srq != NULL : (param->srq ? 1 : 0);
	p->local_lid = 0xFFFF;
	p->remote_lid = 0xFFFF;
	memcpy(p->local_gid, id->route.sgid.raw, 16);
	memcpy(p->remote_gid, id->route.dgid.raw, 16);
	p->flow_label = id->flow_label;
	p->traffic_class = id->route.traffic_class;
	p->hop_limit = id->route.hop_limit;
	p->local_ack_timeout = id->local_ack_timeout;
	rc = ibcm_req_pdata(id, param, req.private_data, sizeof(req.private_data));
	if (rc < 0)
		return rc;
	ibcm_peer_of(id, &peer);
	return ibcm_send_req(id->conn, &peer, &req, ibcm_now());
}

int
drnic_ibcm_connect(struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param)
{
	int rc;

	if (rpc_attached())
		return ibcm_r_conn(RPC_CM_CONNECT, id, param);
	if (id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (id->state != IBCM_ID_ROUTE_RESOLVED || id->dev == NULL || id->conn != NULL) {
		rc = -EINVAL;
	} else if ((id->conn = ibcm_conn_create(id->dev->proto, id)) == NULL) {
		rc = -ENOMEM;
	} else {
		rc = ibcm_id_is_ud(id) ? ibcm_connect_ud(id, param) : ibcm_connect_rc(id, param);
		if (rc < 0) {
			ibcm_conn_destroy(id->conn, ibcm_now());
			id->conn = NULL;
		} else {
			id->active = true;
			id->state = IBCM_ID_CONNECT;
			ibcm_dev_kick(id->dev);
		}
	}
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

int
drnic_ibcm_establish(struct drnic_ibcm_id *id)
{
	int rc = -EINVAL;

	if (rpc_attached())
		return ibcm_r_simple(RPC_CM_ESTABLISH, id, 0);
	if (id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (id->state == IBCM_ID_CONNECT_RESPONSE && id->conn != NULL) {
		rc = ibcm_send_rtu(id->conn, NULL, 0, ibcm_now());
		if (rc == 0)
			id->state = IBCM_ID_ESTABLISHED;
	}
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

/* ---- passive side -------------------------------------------------------- */

static void
ibcm_request_done(struct drnic_ibcm_id *id)
{
	if (id->listener != NULL) {
		id->listener->pending--;
		id->listener = NULL;
	}
}

static int
ibcm_accept_ud(struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param)
{
	struct drnic_mad_cm_sidr_rep rep;
	int rc;

	if (param != NULL && (param->private_data_len > DRNIC_MAD_CM_SIDR_REP_PDATA_LEN ||
			      (param->private_data_len > 0 && param->private_data == NULL)))
		return -EINVAL;
	if (id->qp == NULL && (param == NULL || param->qp_num == 0))
		return -EINVAL;
	memset(&rep, 0, sizeof(rep));
	rep.status = 0;
	rep.qpn = id->qp != NULL ? drnic_qp_num(id->qp) : (param->qp_num & 0xFFFFFF);
	rep.service_id = ibcm_id_sid(id);
	rep.qkey = DRNIC_IBCM_UDP_QKEY;
	if (param != NULL && param->private_data_len > 0)
		memcpy(rep.private_data, param->private_data, param->private_data_len);
	rc = ibcm_send_sidr_rep(id->conn, &rep, ibcm_now());
	if (rc == 0) {
		ibcm_request_done(id);
		id->state = IBCM_ID_ESTABLISHED;
	}
	return rc;
}

static int
ibcm_accept_rc(struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param)
{
	static const struct drnic_ibcm_conn_param dflt = {
		.responder_resources = 1, .initiator_depth = 1, .rnr_retry_count = 7,
	};
	struct drnic_mad_cm_rep rep;
	int rc;

	if (param == NULL)
		param = &dflt;
	if (param->private_data_len > DRNIC_MAD_CM_REP_PDATA_LEN ||
	    (param->private_data_len > 0 && param->private_data == NULL) ||
	    (id->qp == NULL && param->qp_num == 0))
		return -EINVAL;
	/* id->resp_res / init_depth hold what the REQ offers. */
	id->resp_res = ibcm_min8(RTE_MIN(param->responder_resources, id->resp_res),
				 (unsigned int)id->dev->max_rd_atom);
	id->init_depth = ibcm_min8(RTE_MIN(param->initiator_depth, id->init_depth),
				   (unsigned int)id->dev->max_rd_atom);
	if (id->qp != NULL) {
		rc = ibcm_qp_ready(id);
		if (rc < 0)
			return rc;
	}
	memset(&rep, 0, sizeof(rep));
	rep.local_qpn = id->qp != NULL ? drnic_qp_num(id->qp) : (param->qp_num & 0xFFFFFF);
	rep.starting_psn = id->rq_psn;
	rep.responder_resources = id->resp_res;
	rep.initiator_depth = id->init_depth;
	rep.target_ack_delay = IBCM_TARGET_ACK_DELAY;
	rep.e2e_flow_control = param->flow_control ? 1 : 0;
	rep.rnr_retry_count = ibcm_min8(param->rnr_retry_count, 7);
	rep.srq = id->qp != NULL ? id->qp->srq != NULL : (param->srq ? 1 : 0);
	rep.local_ca_guid = id->dev->ca_guid;
	if (param->private_data_len > 0)
		memcpy(rep.private_data, param->private_data, param->private_data_len);
	rc = ibcm_send_rep(id->conn, &rep, ibcm_now());
	if (rc < 0) {
		ibcm_qp_error(id);
		return rc;
	}
	ibcm_request_done(id);
	id->state = IBCM_ID_ACCEPT;
	return 0;
}

int
drnic_ibcm_accept(struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param)
{
	int rc;

	if (rpc_attached())
		return ibcm_r_conn(RPC_CM_ACCEPT, id, param);
	if (id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (id->state != IBCM_ID_CONNECT || id->active || id->conn == NULL || id->dev == NULL) {
		rc = -EINVAL;
	} else {
		rc = ibcm_id_is_ud(id) ? ibcm_accept_ud(id, param) : ibcm_accept_rc(id, param);
		if (rc == 0)
			ibcm_dev_kick(id->dev);
	}
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

int
drnic_ibcm_reject(struct drnic_ibcm_id *id, const void *pdata, uint8_t len)
{
	int rc;

	if (rpc_attached())
		return ibcm_r_reject(id, pdata, len);
	if (id == NULL || (len > 0 && pdata == NULL))
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (id->state != IBCM_ID_CONNECT || id->active || id->conn == NULL) {
		rc = -EINVAL;
	} else if (ibcm_id_is_ud(id)) {
		struct drnic_mad_cm_sidr_rep rep;

		if (len > DRNIC_MAD_CM_SIDR_REP_PDATA_LEN) {
			rc = -EINVAL;
			goto out;
		}
		memset(&rep, 0, sizeof(rep));
		rep.status = IBCM_SIDR_REJECT;
		rep.service_id = ibcm_id_sid(id);
		if (len > 0)
			memcpy(rep.private_data, pdata, len);
		rc = ibcm_send_sidr_rep(id->conn, &rep, ibcm_now());
	} else {
		rc = len > DRNIC_MAD_CM_REJ_PDATA_LEN ? -EINVAL :
		     ibcm_send_rej(id->conn, DRNIC_MAD_CM_REJ_CONSUMER_REJECT, NULL, 0,
				   pdata, len, ibcm_now());
	}
	if (rc == 0) {
		ibcm_request_done(id);
		id->state = IBCM_ID_ERROR;
		ibcm_dev_kick(id->dev);
	}
out:
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

int
drnic_ibcm_disconnect(struct drnic_ibcm_id *id)
{
	uint64_t now;
	int rc = 0;

	if (rpc_attached())
		return ibcm_r_simple(RPC_CM_DISCONNECT, id, 0);
	now = ibcm_now();
	if (id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (id->conn == NULL || ibcm_id_is_ud(id)) {
		rc = -EINVAL;
		goto out;
	}
	switch (ibcm_conn_state(id->conn)) {
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		/* The RTU has not come: traffic or our own DREQ stands for it. */
		(void)ibcm_conn_established(id->conn, now);
		/* fall through */
	case IBCM_ESTABLISHED:
		rc = ibcm_send_dreq(id->conn, NULL, 0, now);
		break;
	case IBCM_DREQ_RCVD:
		rc = ibcm_send_drep(id->conn, NULL, 0, now);
		break;
	case IBCM_DREQ_SENT:
	case IBCM_TIMEWAIT:
	case IBCM_IDLE:
		if (id->state != IBCM_ID_DISCONNECT)
			rc = -EINVAL;
		break;
	default:
		rc = -EINVAL;
	}
	if (rc == 0) {
		ibcm_qp_error(id);
		id->state = IBCM_ID_DISCONNECT;
		ibcm_dev_kick(id->dev);
	}
out:
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

/* ---- multicast ----------------------------------------------------------- */

int
drnic_ibcm_join_multicast(struct drnic_ibcm_id *id, const struct sockaddr *addr, void *context)
{
	struct drnic_ibcm_event ev;
	struct drnic_ah_attr *ah = &ev.param.ud.ah_attr;
	union drnic_gid gid;
	struct ibcm_mcast *m = NULL;
	unsigned int i;
	int rc = 0;

	if (rpc_attached())
		return ibcm_r_mcast(id, addr, true, context);
	if (id == NULL || addr == NULL || !ibcm_sa_gid(addr, &gid) || !verbs_gid_is_mcast(&gid))
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (!ibcm_id_is_ud(id) || id->dev == NULL) {
		rc = -EINVAL;
		goto out;
	}
	for (i = 0; i < IBCM_MAX_MCAST; i++) {
		if (id->mcast[i].used && memcmp(id->mcast[i].gid.raw, gid.raw, 16) == 0) {
			rc = -EADDRINUSE;
			goto out;
		}
		if (!id->mcast[i].used && m == NULL)
			m = &id->mcast[i];
	}
	if (m == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (id->qp != NULL) {
		rc = drnic_attach_mcast(id->qp, &gid, 0);
		if (rc < 0)
			goto out;
	}
	m->used = true;
	m->gid = gid;
	m->context = context;
	memset(&m->addr, 0, sizeof(m->addr));
	memcpy(&m->addr, addr, ibcm_sa_len(addr));

	memset(&ev, 0, offsetof(struct drnic_ibcm_event, pdata));
	ev.event = DRNIC_IBCM_EVENT_MULTICAST_JOIN;
	ev.id = id;
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = gid;
	ah->grh.sgid_index = id->route.sgid_index;
	ah->grh.hop_limit = id->route.hop_limit ? id->route.hop_limit : IBCM_ROCE_HOP_LIMIT;
	ah->grh.traffic_class = id->route.traffic_class;
	verbs_mcast_mac(&gid, ah->dmac);
	ev.param.ud.qp_num = 0xFFFFFF;
	ev.param.ud.qkey = DRNIC_IBCM_UDP_QKEY;
	/* As librdmacm: the join's context in private_data. */
	ev.param.ud.private_data = context;
	ev.param.ud.private_data_len = 0;
	ibcm_queue_raw(id, &ev);
out:
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

int
drnic_ibcm_leave_multicast(struct drnic_ibcm_id *id, const struct sockaddr *addr)
{
	union drnic_gid gid;
	unsigned int i;
	int rc = -EADDRNOTAVAIL;

	if (rpc_attached())
		return ibcm_r_mcast(id, addr, false, NULL);
	if (id == NULL || addr == NULL || !ibcm_sa_gid(addr, &gid))
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	for (i = 0; i < IBCM_MAX_MCAST; i++) {
		if (!id->mcast[i].used || memcmp(id->mcast[i].gid.raw, gid.raw, 16) != 0)
			continue;
		if (id->qp != NULL)
			(void)drnic_detach_mcast(id->qp, &gid, 0);
		id->mcast[i].used = false;
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

/* ---- what the protocol reports ------------------------------------------- */

/* The request names no listener (or is not an RDMA CM one): REJ reason 8,
 * or SIDR_REP "unsupported". */
static void
ibcm_refuse(struct ibcm_conn *conn, bool sidr, uint16_t reason, uint64_t now)
{
	if (sidr) {
		struct drnic_mad_cm_sidr_rep rep;

		memset(&rep, 0, sizeof(rep));
		rep.status = reason == DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID ?
			     IBCM_SIDR_UNSUPPORTED : IBCM_SIDR_REJECT;
		(void)ibcm_send_sidr_rep(conn, &rep, now);
	} else {
		(void)ibcm_send_rej(conn, reason, NULL, 0, NULL, 0, now);
	}
	ibcm_conn_destroy(conn, now);
}

/* A REQ or SIDR_REQ on a listened service ID: find the listening id by
 * port and address, make the new id, report CONNECT_REQUEST. */
static void
ibcm_on_request(struct ibcm_dev *d, const struct ibcm_event *ev, bool sidr)
{
	const struct drnic_mad_cm *mad = ev->mad;
	uint64_t sid = sidr ? mad->sidr_req.service_id : mad->req.service_id;
	const uint8_t *pdata = sidr ? mad->sidr_req.private_data : mad->req.private_data;
	size_t plen = sidr ? DRNIC_MAD_CM_SIDR_REQ_PDATA_LEN : DRNIC_MAD_CM_REQ_PDATA_LEN;
	struct drnic_ibcm_id *l, *id;
	struct drnic_rdma_cm_hdr h;
	struct drnic_ibcm_event cev;
	union drnic_gid sgid, dgid;
	uint64_t now = ibcm_now();
	uint16_t ps, port;
	bool v4;
	int family;

	if (drnic_rdma_cm_service_id_split(sid, &ps, &port) < 0 ||
	    !drnic_rdma_cm_sid_has_ip_hdr(sid) || drnic_rdma_cm_hdr_parse(pdata, plen, &h) < 0) {
		ibcm_refuse(ev->conn, sidr, DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID, now);
		return;
	}
	v4 = h.ip_version == 4;
	family = v4 ? AF_INET : AF_INET6;
	ibcm_hdr_gid(h.dst_addr, v4, &dgid);   /* ours */
	ibcm_hdr_gid(h.src_addr, v4, &sgid);   /* the peer's */
	TAILQ_FOREACH(l, &ibcm.ids, next)
		if (l->state == IBCM_ID_LISTEN && (uint16_t)l->ps == ps &&
		    ibcm_sa_port((const struct sockaddr *)&l->src) == port &&
		    ibcm_listen_matches(l, d, &dgid))
			break;
	if (l == NULL) {
		ibcm_refuse(ev->conn, sidr, DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID, now);
		return;
	}
	if (l->pending >= l->backlog) {
		IBCM_ID_LOG(NOTICE, l, "backlog of %d full: request refused", l->backlog);
		ibcm_refuse(ev->conn, sidr, DRNIC_MAD_CM_REJ_CONSUMER_REJECT, now);
		return;
	}
	id = ibcm_id_alloc(l->ch, l->context, l->ps, l->qp_type);
	if (id == NULL) {
		ibcm_refuse(ev->conn, sidr, DRNIC_MAD_CM_REJ_CONSUMER_REJECT, now);
		return;
	}
	id->dev = d;
	ibcm_sa_from_gid(&id->src, family, &dgid, port);
	ibcm_sa_from_gid(&id->dst, family, &sgid, h.port);
	id->reuseaddr = l->reuseaddr;
	id->route.sgid = ev->peer.local_gid;
	id->route.dgid = ev->peer.gid;
	{
		int i = ibcm_dev_gid_index(d, &id->route.sgid);

		if (i < 0) {   /* the GSI did not tell: the header's address */
			id->route.sgid = dgid;
			i = ibcm_dev_gid_index(d, &dgid);
		}
		id->route.sgid_index = (uint8_t)(i < 0 ? 0 : i);
	}
	memcpy(id->route.dmac, ev->peer.mac, 6);
	id->route.pkey = 0xFFFF;
	id->route.packet_life_time = IBCM_ROCE_PACKET_LIFE;
	id->route.num_paths = 1;
	id->conn = ev->conn;
	ibcm_conn_set_user(ev->conn, id);
	id->listener = l;
	l->pending++;
	id->state = IBCM_ID_CONNECT;

	memset(&cev, 0, offsetof(struct drnic_ibcm_event, pdata));
	cev.event = DRNIC_IBCM_EVENT_CONNECT_REQUEST;
	cev.listen_id = l;
	if (sidr) {
		struct drnic_ah_attr *ah = &cev.param.ud.ah_attr;

		id->route.hop_limit = IBCM_ROCE_HOP_LIMIT;
		id->route.mtu = d->active_mtu;
		ah->is_global = 1;
		ah->port_num = 1;
		ah->grh.dgid = id->route.dgid;
		ah->grh.sgid_index = id->route.sgid_index;
		ah->grh.hop_limit = id->route.hop_limit;
		memcpy(ah->dmac, id->route.dmac, 6);
		ibcm_id_event_full(id, &cev, pdata + DRNIC_RDMA_CM_HDR_LEN,
				   plen - DRNIC_RDMA_CM_HDR_LEN);
		return;
	}
	{
		const struct drnic_mad_cm_req *req = &mad->req;

		id->route.mtu = (enum drnic_mtu)RTE_MIN((unsigned int)req->path_mtu,
							(unsigned int)d->active_mtu);
		id->route.hop_limit = req->primary.hop_limit;
		id->route.traffic_class = req->primary.traffic_class;
		id->flow_label = req->primary.flow_label;
		id->remote_qpn = req->local_qpn;
		id->sq_psn = req->starting_psn;
		/* Chosen now, not in accept: librdmacm moves the QP to RTR
		 * with drnic_ibcm_init_qp_attr() before it accepts. */
		id->rq_psn = ibcm_rand_psn();
		id->have_remote = true;
		id->retry_cnt = req->retry_count;
		id->rnr_retry = req->rnr_retry_count;
		id->local_ack_timeout = req->primary.local_ack_timeout;
		id->resp_res = req->initiator_depth;   /* the most we may accept */
		id->init_depth = req->responder_resources;
		if (req->transport_service == 1)
			id->qp_type = DRNIC_QPT_UC;
		cev.param.conn.responder_resources = req->responder_resources;
		cev.param.conn.initiator_depth = req->initiator_depth;
		cev.param.conn.flow_control = req->e2e_flow_control;
		cev.param.conn.retry_count = req->retry_count;
		cev.param.conn.rnr_retry_count = req->rnr_retry_count;
		cev.param.conn.srq = req->srq;
		cev.param.conn.qp_num = req->local_qpn;
		ibcm_id_event_full(id, &cev, pdata + DRNIC_RDMA_CM_HDR_LEN,
				   plen - DRNIC_RDMA_CM_HDR_LEN);
	}
}

/* The REP of our REQ: with a QP, RTR + RTS + RTU and ESTABLISHED; without,
 * CONNECT_RESPONSE (the caller moves its QP, then drnic_ibcm_establish()). */
static void
ibcm_on_rep(struct drnic_ibcm_id *id, const struct drnic_mad_cm_rep *rep)
{
	struct drnic_ibcm_event ev;
	uint64_t now = ibcm_now();
	int rc;

	id->remote_qpn = rep->local_qpn;
	/*
	 * A REQ's or REP's starting PSN is the first PSN its sender expects
	 * to receive: we send from the REP's, the passive side from the
	 * REQ's. So Linux's CM and ConnectX NICs do (cx_nvme-discover.pcap:
	 * the active side's first SEND carries the REP's PSN, the passive
	 * side's first READ the REQ's), and rxe NAKs anything else.
	 */
	id->sq_psn = rep->starting_psn;
	id->have_remote = true;
	id->init_depth = ibcm_min8(id->init_depth, rep->responder_resources);
	id->resp_res = ibcm_min8(id->resp_res, rep->initiator_depth);
	id->rnr_retry = rep->rnr_retry_count;
	memset(&ev, 0, offsetof(struct drnic_ibcm_event, pdata));
	ev.param.conn.responder_resources = rep->responder_resources;
	ev.param.conn.initiator_depth = rep->initiator_depth;
	ev.param.conn.flow_control = rep->e2e_flow_control;
	ev.param.conn.rnr_retry_count = rep->rnr_retry_count;
	ev.param.conn.srq = rep->srq;
	ev.param.conn.qp_num = rep->local_qpn;
	if (id->qp == NULL) {
		id->state = IBCM_ID_CONNECT_RESPONSE;
		ev.event = DRNIC_IBCM_EVENT_CONNECT_RESPONSE;
		ibcm_id_event_full(id, &ev, rep->private_data, DRNIC_MAD_CM_REP_PDATA_LEN);
		return;
	}
	rc = ibcm_qp_ready(id);
	if (rc == 0)
		rc = ibcm_send_rtu(id->conn, NULL, 0, now);
	if (rc < 0) {
		(void)ibcm_send_rej(id->conn, DRNIC_MAD_CM_REJ_CONSUMER_REJECT, NULL, 0, NULL, 0,
				    now);
		ibcm_qp_error(id);
		id->state = IBCM_ID_ERROR;
		ibcm_id_event(id, DRNIC_IBCM_EVENT_CONNECT_ERROR, rc, NULL, 0);
		return;
	}
	id->state = IBCM_ID_ESTABLISHED;
	ev.event = DRNIC_IBCM_EVENT_ESTABLISHED;
	ibcm_id_event_full(id, &ev, rep->private_data, DRNIC_MAD_CM_REP_PDATA_LEN);
}

static void
ibcm_on_sidr_rep(struct drnic_ibcm_id *id, const struct drnic_mad_cm_sidr_rep *rep)
{
	struct drnic_ibcm_event ev;
	struct drnic_ah_attr *ah = &ev.param.ud.ah_attr;

	if (rep->status != 0) {
		id->state = IBCM_ID_ERROR;
		ibcm_id_event(id, DRNIC_IBCM_EVENT_UNREACHABLE, -ECONNREFUSED,
			      rep->private_data, DRNIC_MAD_CM_SIDR_REP_PDATA_LEN);
		return;
	}
	memset(&ev, 0, offsetof(struct drnic_ibcm_event, pdata));
	ev.event = DRNIC_IBCM_EVENT_ESTABLISHED;
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = id->route.dgid;
	ah->grh.sgid_index = id->route.sgid_index;
	ah->grh.hop_limit = id->route.hop_limit;
	ah->grh.traffic_class = id->route.traffic_class;
	memcpy(ah->dmac, id->route.dmac, 6);
	ev.param.ud.qp_num = rep->qpn;
	ev.param.ud.qkey = rep->qkey;
	id->remote_qpn = rep->qpn;
	id->remote_qkey = rep->qkey;
	id->have_remote = true;
	id->state = IBCM_ID_ESTABLISHED;
	ibcm_id_event_full(id, &ev, rep->private_data, DRNIC_MAD_CM_SIDR_REP_PDATA_LEN);
}

static void
ibcm_disconnected(struct drnic_ibcm_id *id, int status)
{
	ibcm_qp_error(id);
	id->state = IBCM_ID_DISCONNECT;
	if (!id->disc_reported) {
		id->disc_reported = true;
		ibcm_id_event(id, DRNIC_IBCM_EVENT_DISCONNECTED, status, NULL, 0);
	}
}

void
ibcm_conn_event(void *ctx, const struct ibcm_event *ev)
{
	struct ibcm_dev *d = ctx;
	struct drnic_ibcm_id *id;

	if (ev->type == IBCM_EV_REQ_RCVD || ev->type == IBCM_EV_SIDR_REQ_RCVD) {
		ibcm_on_request(d, ev, ev->type == IBCM_EV_SIDR_REQ_RCVD);
		return;
	}
	id = ibcm_conn_user(ev->conn);
	if (id == NULL)
		return;   /* its id is gone */
	switch (ev->type) {
	case IBCM_EV_REP_RCVD:
		if (id->state == IBCM_ID_CONNECT && id->active)
			ibcm_on_rep(id, &ev->mad->rep);
		break;
	case IBCM_EV_RTU_RCVD:
		if (id->state == IBCM_ID_ACCEPT) {
			id->state = IBCM_ID_ESTABLISHED;
			ibcm_id_event(id, DRNIC_IBCM_EVENT_ESTABLISHED, 0,
				      ev->mad->rtu.private_data, DRNIC_MAD_CM_RTU_PDATA_LEN);
		}
		break;
	case IBCM_EV_REJ_RCVD:
		ibcm_request_done(id);
		ibcm_qp_error(id);
		id->state = IBCM_ID_ERROR;
		ibcm_id_event(id, DRNIC_IBCM_EVENT_REJECTED, ev->mad->rej.reason,
			      ev->mad->rej.private_data, DRNIC_MAD_CM_REJ_PDATA_LEN);
		break;
	case IBCM_EV_MRA_RCVD:
		break;
	case IBCM_EV_DREQ_RCVD:
	case IBCM_EV_DREP_RCVD:
		ibcm_disconnected(id, 0);
		break;
	case IBCM_EV_TIMEOUT:
		if (ev->timed_out == DRNIC_MAD_CM_DREQ) {
			/* No DREP: disconnected all the same, status
			 * -ETIMEDOUT (Linux's rdma_cm says so too). */
			ibcm_disconnected(id, -ETIMEDOUT);
			break;
		}
		ibcm_request_done(id);
		ibcm_qp_error(id);
		id->state = IBCM_ID_ERROR;
		ibcm_id_event(id, DRNIC_IBCM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
		break;
	case IBCM_EV_TIMEWAIT_EXIT:
		ibcm_id_event(id, DRNIC_IBCM_EVENT_TIMEWAIT_EXIT, 0, NULL, 0);
		break;
	case IBCM_EV_SIDR_REP_RCVD:
		if (id->state == IBCM_ID_CONNECT && id->active)
			ibcm_on_sidr_rep(id, &ev->mad->sidr_rep);
		break;
	default:
		break;
	}
}
