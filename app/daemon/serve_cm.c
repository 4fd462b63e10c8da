/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnicd's connection manager requests (rpc.h's RPC_CM_*): the daemon runs
 * the GSI agent on QP 1 of each of its devices and every process's ids and
 * event channels, as the kernel's rdma_cm does on a host. So there is one
 * port space: a port one process listens on is taken for the others, and
 * two attached processes connect to each other through the device.
 *
 * As for the verbs objects (serve.c), a process names only the ids and
 * channels it was given; an id that a connection request made becomes the
 * process's when the event that carries it is taken (RPC_CM_GET_EVENT).
 * One not taken yet belongs to its listener: destroying the listener, or
 * the process going, rejects and destroys it with the queued event.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "drnic_ibcm.h"
#include "drnicd.h"
#include "rpc_cm.h"

/* The request's sockaddr (AF_INET or AF_INET6, exactly its size) in @p ss. */
static int
cm_blob_sa(const void *blob, uint32_t len, struct sockaddr_storage *ss)
{
	sa_family_t fam;

	memset(ss, 0, sizeof(*ss));
	if (len < sizeof(fam) || len > sizeof(*ss))
		return -EINVAL;
	memcpy(ss, blob, len);
	fam = ss->ss_family;
	if ((fam == AF_INET && len == sizeof(struct sockaddr_in)) ||
	    (fam == AF_INET6 && len == sizeof(struct sockaddr_in6)))
		return 0;
	return fam == AF_INET || fam == AF_INET6 ? -EINVAL : -EAFNOSUPPORT;
}

static int
cm_get_event(struct dclient *c, struct rpc_msg *m)
{
	struct drnic_ibcm_event ev;
	int rc;

	rc = drnic_ibcm_get_event((struct drnic_ibcm_channel *)(uintptr_t)m->obj[0], &ev, 0);
	if (rc < 0)
		return rc;
	/* A request's new id is the process's from now on. */
	if (ev.event == DRNIC_IBCM_EVENT_CONNECT_REQUEST && ev.id != ev.listen_id &&
	    dclient_find(c, (uintptr_t)ev.id, DOBJ_CM_ID) < 0 &&
	    dclient_add(c, ev.id, DOBJ_CM_ID, 0) < 0) {
		(void)drnic_ibcm_destroy_id(ev.id);
		return -ENOMEM;
	}
	m->obj[1] = (uintptr_t)ev.id;
	m->obj[2] = (uintptr_t)ev.listen_id;
	if (ev.param.conn.private_data == ev.pdata) {
		m->arg[0] = 1;
	} else {
		m->arg[0] = 0;
		m->arg[1] = (uintptr_t)ev.param.conn.private_data;  /* the process's context */
	}
	RTE_BUILD_BUG_ON(sizeof(ev) > RPC_BLOB_MAX);
	memcpy(m->blob, &ev, sizeof(ev));
	m->blob_len = sizeof(ev);
	return 0;
}

static int
cm_query(struct drnic_ibcm_id *id, struct rpc_msg *m)
{
	struct rpc_cm_id_info info;
	int rc;

	memset(&info, 0, sizeof(info));
	rc = drnic_ibcm_id_src_addr(id, &info.src);
	if (rc == 0)
		rc = drnic_ibcm_id_dst_addr(id, &info.dst);
	if (rc == 0)
		rc = drnic_ibcm_id_route(id, &info.route);
	if (rc < 0)
		return rc;
	info.dev = (uintptr_t)drnic_ibcm_id_device(id);
	RTE_BUILD_BUG_ON(sizeof(info) > RPC_BLOB_MAX);
	memcpy(m->blob, &info, sizeof(info));
	m->blob_len = sizeof(info);
	return 0;
}

static int
cm_conn(struct drnic_ibcm_id *id, struct rpc_msg *m)
{
	struct rpc_cm_conn cc;

	if (m->blob_len != sizeof(cc))
		return -EINVAL;
	memcpy(&cc, m->blob, sizeof(cc));
	cc.param.private_data = cc.param.private_data_len > 0 ? cc.pdata : NULL;
	if (m->op == RPC_CM_CONNECT)
		return drnic_ibcm_connect(id, m->arg[0] ? &cc.param : NULL);
	return drnic_ibcm_accept(id, m->arg[0] ? &cc.param : NULL);
}

static int
cm_attach_qp(struct dclient *c, int idx, struct rpc_msg *m)
{
	int rc;

	if (dclient_find(c, m->obj[1], DOBJ_QP) < 0)
		return -EINVAL;
	rc = drnic_ibcm_attach_qp((struct drnic_ibcm_id *)(uintptr_t)m->obj[0],
				  (struct drnic_qp *)(uintptr_t)m->obj[1]);
	if (rc == 0)
		c->objs[idx].len = m->obj[1];   /* the QP stays while the id drives it */
	return rc;
}

/* Requests on one id of the process. */
static int
cm_id_request(struct dclient *c, struct rpc_msg *m)
{
	struct drnic_ibcm_id *id = (struct drnic_ibcm_id *)(uintptr_t)m->obj[0];
	struct sockaddr_storage ss, two[2];
	int idx = dclient_find(c, m->obj[0], DOBJ_CM_ID);
	int rc;

	if (idx < 0)
		return -EINVAL;
	switch (m->op) {
	case RPC_CM_ID_DESTROY:
		return dclient_destroy(c, m, DOBJ_CM_ID);
	case RPC_CM_ID_QUERY:
		return cm_query(id, m);
	case RPC_CM_MIGRATE:
		if (dclient_find(c, m->obj[1], DOBJ_CM_CHANNEL) < 0)
			return -EINVAL;
		return drnic_ibcm_migrate_id(id, (struct drnic_ibcm_channel *)(uintptr_t)m->obj[1]);
	case RPC_CM_BIND:
		rc = cm_blob_sa(m->blob, m->blob_len, &ss);
		return rc < 0 ? rc : drnic_ibcm_bind_addr(id, (const struct sockaddr *)&ss);
	case RPC_CM_RESOLVE_ADDR:
		if (m->blob_len != sizeof(two) || m->arg[1] > 1 ||
		    (int64_t)m->arg[0] < INT32_MIN || (int64_t)m->arg[0] > INT32_MAX)
			return -EINVAL;
		memcpy(two, m->blob, sizeof(two));
		return drnic_ibcm_resolve_addr(id, m->arg[1] ? (struct sockaddr *)&two[0] : NULL,
					       (struct sockaddr *)&two[1], (int)(int64_t)m->arg[0]);
	case RPC_CM_RESOLVE_ROUTE:
		return drnic_ibcm_resolve_route(id, (int)(int64_t)m->arg[0]);
	case RPC_CM_ATTACH_QP:
		return cm_attach_qp(c, idx, m);
	case RPC_CM_LISTEN:
		if ((int64_t)m->arg[0] < INT32_MIN || (int64_t)m->arg[0] > INT32_MAX)
			return -EINVAL;
		return drnic_ibcm_listen(id, (int)(int64_t)m->arg[0]);
	case RPC_CM_CONNECT:
	case RPC_CM_ACCEPT:
		return cm_conn(id, m);
	case RPC_CM_REJECT:
		if (m->blob_len > UINT8_MAX)
			return -EINVAL;
		return drnic_ibcm_reject(id, m->blob_len ? m->blob : NULL, (uint8_t)m->blob_len);
	case RPC_CM_ESTABLISH:
		return drnic_ibcm_establish(id);
	case RPC_CM_DISCONNECT:
		return drnic_ibcm_disconnect(id);
	case RPC_CM_INIT_QP_ATTR: {
		struct drnic_qp_attr a;
		int mask = 0;

		if (m->blob_len != sizeof(a))
			return -EINVAL;
		memcpy(&a, m->blob, sizeof(a));
		rc = drnic_ibcm_init_qp_attr(id, &a, &mask);
		if (rc == 0) {
			memcpy(m->blob, &a, sizeof(a));
			m->arg[0] = (uint32_t)mask;
		}
		return rc;
	}
	case RPC_CM_SET_OPTION:
		if (m->blob_len > sizeof(uint64_t) || m->arg[0] > INT32_MAX)
			return -EINVAL;
		return drnic_ibcm_set_option(id, (enum drnic_ibcm_option)m->arg[0], m->blob,
					     m->blob_len);
	case RPC_CM_MCAST:
		rc = cm_blob_sa(m->blob, m->blob_len, &ss);
		if (rc < 0)
			return rc;
		return m->arg[0] ?
		       drnic_ibcm_join_multicast(id, (const struct sockaddr *)&ss,
						 (void *)(uintptr_t)m->arg[1]) :
		       drnic_ibcm_leave_multicast(id, (const struct sockaddr *)&ss);
	default:
		return -EOPNOTSUPP;
	}
}

int
drnicd_serve_cm(struct dclient *c, struct rpc_msg *m, int *fd)
{
	switch (m->op) {
	case RPC_CM_CHANNEL_CREATE: {
		struct drnic_ibcm_channel *ch;

		rte_errno = 0;
		ch = drnic_ibcm_create_channel();
		*fd = ch != NULL ? drnic_ibcm_channel_fd(ch) : -1;
		return dclient_adopt(c, ch, DOBJ_CM_CHANNEL, 0, m);
	}
	case RPC_CM_CHANNEL_DESTROY:
		return dclient_destroy(c, m, DOBJ_CM_CHANNEL);
	case RPC_CM_GET_EVENT:
		if (dclient_find(c, m->obj[0], DOBJ_CM_CHANNEL) < 0)
			return -EINVAL;
		return cm_get_event(c, m);
	case RPC_CM_ID_CREATE: {
		if (dclient_find(c, m->obj[0], DOBJ_CM_CHANNEL) < 0 || m->arg[0] > INT32_MAX ||
		    m->arg[1] > INT32_MAX)
			return -EINVAL;
		rte_errno = 0;
		return dclient_adopt(c, drnic_ibcm_create_id(
					(struct drnic_ibcm_channel *)(uintptr_t)m->obj[0], NULL,
					(enum drnic_ibcm_ps)m->arg[0],
					(enum drnic_qp_type)m->arg[1]), DOBJ_CM_ID, 0, m);
	}
	case RPC_CM_STATS: {
		struct drnic_ibcm_stats st;
		int rc;

		if (dclient_find(c, m->obj[0], DOBJ_DEV) < 0)
			return -EINVAL;
		rc = drnic_ibcm_stats_get((struct drnic_device *)(uintptr_t)m->obj[0], &st);
		if (rc == 0) {
			RTE_BUILD_BUG_ON(sizeof(st) > RPC_BLOB_MAX);
			memcpy(m->blob, &st, sizeof(st));
			m->blob_len = sizeof(st);
		}
		return rc;
	}
	default:
		return cm_id_request(c, m);
	}
}

int
drnicd_cm_free(const struct dobj *o)
{
	if (o->kind == DOBJ_CM_ID)
		return drnic_ibcm_destroy_id((struct drnic_ibcm_id *)o->p);
	return drnic_ibcm_destroy_channel((struct drnic_ibcm_channel *)o->p);
}
