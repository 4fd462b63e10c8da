/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm's multicast: rdma_join_multicast(_ex) and
 * rdma_leave_multicast over drnic_ibcm_join_multicast(). As librdmacm, the
 * id's QP is attached to the group when the join completes (the
 * MULTICAST_JOIN event gives its GID), and detached on leave; the join's
 * context comes back as the events' private data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

static pthread_mutex_t rcm_mcast_lock = PTHREAD_MUTEX_INITIALIZER;

/* The group's GID as RoCE has it: an IPv6 group as it is, an IPv4 one
 * IPv4-mapped. The MULTICAST_JOIN event's is the one used. */
static int
rcm_mcast_gid(const struct sockaddr *addr, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (addr->sa_family == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((const struct sockaddr_in *)(const void *)addr)->sin_addr, 4);
		return 0;
	}
	if (addr->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr, 16);
		return 0;
	}
	return -1;
}

static size_t
rcm_sockaddr_len(const struct sockaddr *addr)
{
	return addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					   : sizeof(struct sockaddr_in);
}

void
rcm_event_mcast(struct rcm_id *w, struct rdma_cm_event *ev)
{
	struct rdma_ud_param *ud = &ev->param.ud;
	struct rcm_mcast *m, *hit = NULL;
	bool attach = false;

	pthread_mutex_lock(&rcm_mcast_lock);
	for (m = w->mcasts; m != NULL; m = m->next) {
		if (memcmp(m->mgid.raw, ud->ah_attr.grh.dgid.raw, 16) == 0) {
			hit = m;
			break;
		}
	}
	if (hit == NULL)
		hit = w->mcasts;   /* the CM's GID differs from ours: one group */
	if (hit != NULL && ev->event == RDMA_CM_EVENT_MULTICAST_JOIN) {
		hit->mgid = ud->ah_attr.grh.dgid;
		hit->mlid = ud->ah_attr.dlid;
		attach = w->id.qp != NULL && !hit->attached;
		hit->attached |= attach;
	}
	if (hit != NULL) {
		ud->private_data = hit->context;
		ud->private_data_len = 0;
	}
	pthread_mutex_unlock(&rcm_mcast_lock);
	if (attach) {
		int rc = ibv_attach_mcast(w->id.qp, &ud->ah_attr.grh.dgid, ud->ah_attr.dlid);

		if (rc != 0) {
			pthread_mutex_lock(&rcm_mcast_lock);
			hit->attached = false;
			pthread_mutex_unlock(&rcm_mcast_lock);
			ev->event = RDMA_CM_EVENT_MULTICAST_ERROR;
			ev->status = -rc;
		}
	}
}

void
rcm_mcast_free(struct rcm_id *w)
{
	struct rcm_mcast *m;

	pthread_mutex_lock(&rcm_mcast_lock);
	while ((m = w->mcasts) != NULL) {
		w->mcasts = m->next;
		free(m);
	}
	pthread_mutex_unlock(&rcm_mcast_lock);
}

/** rdma_join_multicast(3): a full member. */
RCM_EXPORT int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	struct rcm_id *w;
	struct rcm_mcast *m;
	int rc;

	if (id == NULL || addr == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return rcm_seterr(ENOMEM);
	if (rcm_mcast_gid(addr, &m->mgid) < 0) {
		free(m);
		return rcm_seterr(EAFNOSUPPORT);
	}
	memcpy(&m->addr, addr, rcm_sockaddr_len(addr));
	m->context = context;
	pthread_mutex_lock(&rcm_mcast_lock);
	m->next = w->mcasts;
	w->mcasts = m;
	pthread_mutex_unlock(&rcm_mcast_lock);
	rc = drnic_ibcm_join_multicast(w->did, addr, context);
	if (rc < 0) {
		struct rcm_mcast **pp;

		pthread_mutex_lock(&rcm_mcast_lock);
		for (pp = &w->mcasts; *pp != m; pp = &(*pp)->next)
			;
		*pp = m->next;
		pthread_mutex_unlock(&rcm_mcast_lock);
		free(m);
		return rcm_err(rc);
	}
	return rcm_complete(w);
}

/** rdma_join_multicast_ex(3): full and send-only full members alike. */
RCM_EXPORT int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
		       void *context)
{
	if (attr == NULL || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    (attr->comp_mask & ~(uint32_t)(RDMA_CM_JOIN_MC_ATTR_ADDRESS |
					   RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS)))
		return rcm_seterr(EINVAL);
	if ((attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) &&
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return rcm_seterr(EINVAL);
	return rdma_join_multicast(id, attr->addr, context);
}

/** rdma_leave_multicast(3): the QP is detached first. */
RCM_EXPORT int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rcm_mcast **pp, *m;
	struct rcm_id *w;
	int rc;

	if (id == NULL || addr == NULL)
		return rcm_seterr(EINVAL);
	w = rcm_id_of(id);
	pthread_mutex_lock(&rcm_mcast_lock);
	for (pp = &w->mcasts; (m = *pp) != NULL; pp = &m->next)
		if (m->addr.ss_family == addr->sa_family &&
		    memcmp(&m->addr, addr, rcm_sockaddr_len(addr)) == 0)
			break;
	if (m != NULL)
		*pp = m->next;
	pthread_mutex_unlock(&rcm_mcast_lock);
	if (m == NULL)
		return rcm_seterr(EADDRNOTAVAIL);
	if (m->attached && id->qp != NULL)
		(void)ibv_detach_mcast(id->qp, &m->mgid, m->mlid);
	free(m);
	rc = drnic_ibcm_leave_multicast(w->did, addr);
	return rc < 0 ? rcm_err(rc) : 0;
}
