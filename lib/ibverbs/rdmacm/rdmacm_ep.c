/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm's endpoints: rdma_getaddrinfo (through the
 * system's getaddrinfo: drnic has no IB ACM or SA to ask for routes),
 * rdma_freeaddrinfo, rdma_create_ep and rdma_destroy_ep (synchronous ids,
 * as rdma_create_ep(3) makes them).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

/* The QP type of a port space and the port space of a QP type. */
static void
rcm_rai_types(struct rdma_addrinfo *rai, const struct rdma_addrinfo *hints)
{
	if (hints != NULL) {
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
	}
	if (rai->ai_port_space == 0)
		rai->ai_port_space = rai->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP;
	if (rai->ai_qp_type == 0)
		rai->ai_qp_type = rai->ai_port_space == RDMA_PS_UDP ||
				  rai->ai_port_space == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
}

static struct sockaddr *
rcm_sockaddr_dup(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *d = malloc(len);

	if (d != NULL)
		memcpy(d, sa, len);
	return d;
}

/**
 * rdma_getaddrinfo(3). RAI_PASSIVE: @p node (or the wildcard) is the
 * source; otherwise the destination, with hints' ai_src_addr as the source.
 * @return 0, or getaddrinfo's error code (as rdma-core's: for gai_strerror).
 */
RCM_EXPORT int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo ah, *ai = NULL, *a;
	struct rdma_addrinfo *rai;
	int rc;

	if (res == NULL || (node == NULL && service == NULL))
		return rcm_seterr(EINVAL);
	if (rcm_init() < 0)
		return -1;
	memset(&ah, 0, sizeof(ah));
	if (hints != NULL) {
		if (hints->ai_flags & RAI_PASSIVE)
			ah.ai_flags |= AI_PASSIVE;
		if (hints->ai_flags & RAI_NUMERICHOST)
			ah.ai_flags |= AI_NUMERICHOST;
		if (hints->ai_family == AF_INET || hints->ai_family == AF_INET6)
			ah.ai_family = hints->ai_family;
		else if (hints->ai_family != 0 && hints->ai_family != AF_UNSPEC)
			return EAI_FAMILY;
	}
	rai = calloc(1, sizeof(*rai));
	if (rai == NULL)
		return EAI_MEMORY;
	rcm_rai_types(rai, hints);
	ah.ai_socktype = rai->ai_qp_type == IBV_QPT_UD ? SOCK_DGRAM : SOCK_STREAM;
	/* A passive wildcard: IPv4's, unless asked for IPv6 (a listener on
	 * IPv4 is what rping -s and rdma_server without an address expect). */
	if (node == NULL && ah.ai_family == 0 && (ah.ai_flags & AI_PASSIVE))
		ah.ai_family = AF_INET;
	rc = getaddrinfo(node, service, &ah, &ai);
	if (rc != 0) {
		free(rai);
		return rc;
	}
	for (a = ai; a != NULL; a = a->ai_next)
		if (a->ai_family == AF_INET || a->ai_family == AF_INET6)
			break;
	if (a == NULL) {
		freeaddrinfo(ai);
		free(rai);
		return EAI_FAMILY;
	}
	rai->ai_flags = hints != NULL ? hints->ai_flags : 0;
	rai->ai_family = a->ai_family;
	if (rai->ai_flags & RAI_PASSIVE) {
		rai->ai_src_addr = rcm_sockaddr_dup(a->ai_addr, a->ai_addrlen);
		rai->ai_src_len = a->ai_addrlen;
		rc = rai->ai_src_addr != NULL ? 0 : EAI_MEMORY;
	} else {
		rai->ai_dst_addr = rcm_sockaddr_dup(a->ai_addr, a->ai_addrlen);
		rai->ai_dst_len = a->ai_addrlen;
		rc = rai->ai_dst_addr != NULL ? 0 : EAI_MEMORY;
		if (rc == 0 && hints != NULL && hints->ai_src_addr != NULL && hints->ai_src_len > 0) {
			rai->ai_src_addr = rcm_sockaddr_dup(hints->ai_src_addr, hints->ai_src_len);
			rai->ai_src_len = hints->ai_src_len;
			rc = rai->ai_src_addr != NULL ? 0 : EAI_MEMORY;
		}
	}
	freeaddrinfo(ai);
	if (rc != 0) {
		rdma_freeaddrinfo(rai);
		return rc;
	}
	*res = rai;
	return 0;
}

/** rdma_freeaddrinfo(3). */
RCM_EXPORT void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res != NULL; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}

/**
 * rdma_create_ep(3): a synchronous id. Passive: bound to ai_src_addr, and
 * @p qp_init_attr kept for the QP of each rdma_get_request(). Active: the
 * address and route resolved (2 s each), and a QP when @p qp_init_attr.
 */
RCM_EXPORT int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	struct rcm_id *w;
	int e;

	if (id == NULL || res == NULL)
		return rcm_seterr(EINVAL);
	if (rcm_create_id(NULL, &cm_id, NULL, (enum rdma_port_space)res->ai_port_space,
			  (enum ibv_qp_type)res->ai_qp_type) < 0)
		return -1;
	w = rcm_id_of(cm_id);
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cm_id, res->ai_src_addr) < 0)
			goto fail;
		if (qp_init_attr != NULL) {
			w->qp_attr = *qp_init_attr;
			w->qp_attr.qp_type = (enum ibv_qp_type)res->ai_qp_type;
			w->has_qp_attr = true;
		}
		cm_id->pd = pd;
		*id = cm_id;
		return 0;
	}
	if (rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr, 2000) < 0)
		goto fail;
	if (!(res->ai_flags & RAI_NOROUTE) && rdma_resolve_route(cm_id, 2000) < 0)
		goto fail;
	if (qp_init_attr != NULL) {
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		if (rdma_create_qp(cm_id, pd, qp_init_attr) < 0)
			goto fail;
	}
	*id = cm_id;
	return 0;
fail:
	e = errno;
	rdma_destroy_id(cm_id);
	return rcm_seterr(e);
}

/** rdma_destroy_ep(3): its QP, its SRQ, the id. */
RCM_EXPORT void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (id->srq != NULL)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}
