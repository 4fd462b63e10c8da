/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Addresses of the RDMA CM: sockaddrs and GIDs, which device owns an
 * address, the port spaces (bind, ephemeral ports, EADDRINUSE), address
 * resolution through the link's ARP / neighbour discovery and the route.
 *
 * Address resolution never blocks the caller: drnic_ibcm_resolve_addr()
 * asks the link once; when the link is still asking (-EAGAIN) the id stays
 * in ADDR_QUERY and its device's agent thread asks again every
 * millisecond (running the engine in inline mode, so the ARP request
 * leaves and its answer is taken) until an answer or the deadline.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_random.h>

#include "ibcm_rdma.h"
#include "rpc.h"
#include "link_driver.h"
#include "verbs_objects.h"

bool
ibcm_sa_gid(const struct sockaddr *sa, union drnic_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

		gid->raw[10] = 0xFF;
		gid->raw[11] = 0xFF;
		memcpy(&gid->raw[12], &in->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		return true;
	}
	return false;
}

static bool
ibcm_gid_is_v4(const union drnic_gid *gid)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };

	return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

void
ibcm_sa_from_gid(struct sockaddr_storage *ss, int family, const union drnic_gid *gid,
		 uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, &gid->raw[12], 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, gid->raw, 16);
	}
}

uint16_t
ibcm_sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return 0;
}

void
ibcm_sa_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

bool
ibcm_sa_is_any(const struct sockaddr *sa)
{
	union drnic_gid gid;
	static const uint8_t zero[16];

	if (!ibcm_sa_gid(sa, &gid))
		return false;
	if (sa->sa_family == AF_INET)
		return memcmp(&gid.raw[12], zero, 4) == 0;
	return memcmp(gid.raw, zero, 16) == 0;
}

socklen_t
ibcm_sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					  sizeof(struct sockaddr_in6);
}

int
ibcm_dev_gid_index(const struct ibcm_dev *d, const union drnic_gid *gid)
{
	unsigned int i;

	for (i = 0; i < d->nb_gids; i++)
		if (memcmp(d->gid[i].raw, gid->raw, 16) == 0)
			return (int)i;
	return -1;
}

struct ibcm_dev *
ibcm_dev_by_gid(const union drnic_gid *gid, int *index)
{
	struct ibcm_dev *d;

	TAILQ_FOREACH(d, &ibcm.devs, next) {
		int i = ibcm_dev_gid_index(d, gid);

		if (i >= 0 && !d->stop) {
			if (index != NULL)
				*index = i;
			return d;
		}
	}
	return NULL;
}

/* The device to reach @p dst from when no source is given: the one that
 * owns it (loopback to ourselves), else one with an address of the same
 * family in the same subnet (/24, /64: drnic's addresses carry no prefix
 * length), else the first one with an address of that family. */
static struct ibcm_dev *
ibcm_dev_for_dst(const union drnic_gid *dst, int *index)
{
	bool v4 = ibcm_gid_is_v4(dst);
	unsigned int cmp = v4 ? 15 : 8;
	struct ibcm_dev *d, *first = NULL;
	int first_i = -1;
	unsigned int i;

	d = ibcm_dev_by_gid(dst, index);
	if (d != NULL)
		return d;
	TAILQ_FOREACH(d, &ibcm.devs, next) {
		if (d->stop)
			continue;
		for (i = 0; i < d->nb_gids; i++) {
			if (ibcm_gid_is_v4(&d->gid[i]) != v4)
				continue;
			if (memcmp(d->gid[i].raw, dst->raw, cmp) == 0) {
				*index = (int)i;
				return d;
			}
			if (first == NULL) {
				first = d;
				first_i = (int)i;
			}
		}
	}
	*index = first_i;
	return first;
}

/* ---- port spaces ------------------------------------------------------- */

/* Whether @p a and @p b (same port space and port) may not share it. */
static bool
ibcm_port_conflict(const struct drnic_ibcm_id *a, const struct drnic_ibcm_id *b)
{
	union drnic_gid ga, gb;

	if (a->reuseaddr && b->reuseaddr && a->state != IBCM_ID_LISTEN &&
	    b->state != IBCM_ID_LISTEN)
		return false;
	if (ibcm_sa_is_any((const struct sockaddr *)&a->src) ||
	    ibcm_sa_is_any((const struct sockaddr *)&b->src)) {
		/* A wildcard of one family covers the other unless AFONLY. */
		if (a->src.ss_family != b->src.ss_family && (a->afonly || b->afonly))
			return false;
		return true;
	}
	ibcm_sa_gid((const struct sockaddr *)&a->src, &ga);
	ibcm_sa_gid((const struct sockaddr *)&b->src, &gb);
	return memcmp(ga.raw, gb.raw, 16) == 0;
}

static bool
ibcm_port_taken(const struct drnic_ibcm_id *id, uint16_t port)
{
	const struct drnic_ibcm_id *o;

	TAILQ_FOREACH(o, &ibcm.ids, next) {
		if (o == id || !o->bound || o->ps != id->ps ||
		    ibcm_sa_port((const struct sockaddr *)&o->src) != port)
			continue;
		if (ibcm_port_conflict(id, o))
			return true;
	}
	return false;
}

void
ibcm_port_release(struct drnic_ibcm_id *id)
{
	id->bound = false;
}

int
ibcm_bind_locked(struct drnic_ibcm_id *id, const struct sockaddr *addr)
{
	union drnic_gid gid;
	struct ibcm_dev *d = NULL;
	uint16_t port = ibcm_sa_port(addr);
	int idx = -1;
	unsigned int n, span = IBCM_PORT_EPHEMERAL_HI - IBCM_PORT_EPHEMERAL_LO + 1;

	if (id->bound || id->state != IBCM_ID_IDLE)
		return -EINVAL;
	if (!ibcm_sa_gid(addr, &gid))
		return -EINVAL;
	if (!ibcm_sa_is_any(addr)) {
		d = ibcm_dev_by_gid(&gid, &idx);
		if (d == NULL)
			return -EADDRNOTAVAIL;
	}
	memset(&id->src, 0, sizeof(id->src));
	memcpy(&id->src, addr, ibcm_sa_len(addr));
	if (port == 0) {
		uint16_t start = (uint16_t)(IBCM_PORT_EPHEMERAL_LO + rte_rand() % span);

		for (n = 0; n < span; n++) {
			port = (uint16_t)(IBCM_PORT_EPHEMERAL_LO +
					  (start - IBCM_PORT_EPHEMERAL_LO + n) % span);
			if (!ibcm_port_taken(id, port))
				break;
		}
		if (n == span)
			return -EADDRINUSE;
	} else if (ibcm_port_taken(id, port)) {
		return -EADDRINUSE;
	}
	ibcm_sa_set_port(&id->src, port);
	id->bound = true;
	id->dev = d;
	if (d != NULL) {
		id->route.sgid = d->gid[idx];
		id->route.sgid_index = (uint8_t)idx;
	}
	id->state = IBCM_ID_ADDR_BOUND;
	return 0;
}

int
drnic_ibcm_bind_addr(struct drnic_ibcm_id *id, const struct sockaddr *addr)
{
	int rc;

	if (rpc_attached())
		return ibcm_r_bind_addr(id, addr);
	if (id == NULL || addr == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	rc = ibcm_bind_locked(id, addr);
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

bool
ibcm_listen_matches(const struct drnic_ibcm_id *id, const struct ibcm_dev *d,
		    const union drnic_gid *dst)
{
	union drnic_gid g;

	if (id->dev != NULL && id->dev != d)
		return false;
	if (ibcm_sa_is_any((const struct sockaddr *)&id->src)) {
		bool v4 = ibcm_gid_is_v4(dst);

		return !id->afonly || v4 == (id->src.ss_family == AF_INET);
	}
	ibcm_sa_gid((const struct sockaddr *)&id->src, &g);
	return memcmp(g.raw, dst->raw, 16) == 0;
}

/* ---- address resolution -------------------------------------------------- */

/* The link's answer for @p id's destination: 1 resolved, 0 still asking,
 * or a negative errno (ADDR_ERROR). */
static int
ibcm_addr_try(struct drnic_ibcm_id *id)
{
	struct drnic_link *link = drnic_device_link(id->dev->dev);
	int rc;

	if (verbs_gid_is_mcast(&id->route.dgid)) {
		verbs_mcast_mac(&id->route.dgid, id->route.dmac);
		return 1;
	}
	if (ibcm_dev_gid_index(id->dev, &id->route.dgid) >= 0) {
		memcpy(id->route.dmac, id->dev->mac, 6);  /* ourselves */
		return 1;
	}
	if (link == NULL || link->ops->resolve == NULL) {
		memset(id->route.dmac, 0, 6);
		return 1;
	}
	rc = link->ops->resolve(link, id->route.dgid.raw, id->route.dmac);
	if (rc == 0)
		return 1;
	if (rc == -EAGAIN)
		return 0;
	if (rc == -EHOSTUNREACH)
		return rc;
	/* -ENOENT, -EADDRNOTAVAIL: the link cannot tell; the frames go to
	 * the zero MAC, as drnic_modify_qp() does then. */
	memset(id->route.dmac, 0, 6);
	return 1;
}

static void
ibcm_addr_done(struct drnic_ibcm_id *id, int rc)
{
	if (rc > 0) {
		id->state = IBCM_ID_ADDR_RESOLVED;
		ibcm_id_event(id, DRNIC_IBCM_EVENT_ADDR_RESOLVED, 0, NULL, 0);
	} else {
		id->state = IBCM_ID_ADDR_BOUND;
		ibcm_id_event(id, DRNIC_IBCM_EVENT_ADDR_ERROR, rc, NULL, 0);
	}
}

bool
ibcm_addr_poll(struct ibcm_dev *d, uint64_t now)
{
	struct drnic_ibcm_id *id;
	bool waiting = false;
	int rc;

	TAILQ_FOREACH(id, &ibcm.ids, next) {
		if (id->dev != d || id->state != IBCM_ID_ADDR_QUERY)
			continue;
		rc = ibcm_addr_try(id);
		if (rc == 0 && now >= id->addr_deadline)
			rc = -ETIMEDOUT;
		if (rc == 0)
			waiting = true;
		else
			ibcm_addr_done(id, rc);
	}
	return waiting;
}

int
drnic_ibcm_resolve_addr(struct drnic_ibcm_id *id, const struct sockaddr *src,
			const struct sockaddr *dst, int timeout_ms)
{
	union drnic_gid dgid;
	struct ibcm_dev *d;
	int idx, rc;

	if (rpc_attached())
		return ibcm_r_resolve_addr(id, src, dst, timeout_ms);
	if (id == NULL || dst == NULL || !ibcm_sa_gid(dst, &dgid) ||
	    (src != NULL && src->sa_family != dst->sa_family))
		return -EINVAL;
	if (timeout_ms <= 0)
		timeout_ms = 2000;
	pthread_mutex_lock(&ibcm.lock);
	if (id->state != IBCM_ID_IDLE && id->state != IBCM_ID_ADDR_BOUND) {
		rc = -EINVAL;
		goto out;
	}
	if (id->state == IBCM_ID_IDLE) {
		struct sockaddr_storage any;

		if (src == NULL) {
			memset(&any, 0, sizeof(any));
			any.ss_family = dst->sa_family;
			src = (const struct sockaddr *)&any;
		}
		rc = ibcm_bind_locked(id, src);
		if (rc < 0)
			goto out;
	}
	if (id->src.ss_family != dst->sa_family) {
		rc = -EINVAL;
		goto out;
	}
	if (id->dev == NULL) {
		/* Bound to the wildcard: the device that reaches dst. */
		d = ibcm_dev_for_dst(&dgid, &idx);
		if (d == NULL) {
			rc = -EADDRNOTAVAIL;
			goto out;
		}
		id->dev = d;
		id->route.sgid = d->gid[idx];
		id->route.sgid_index = (uint8_t)idx;
		ibcm_sa_from_gid(&id->src, dst->sa_family, &d->gid[idx],
				 ibcm_sa_port((const struct sockaddr *)&id->src));
	}
	memset(&id->dst, 0, sizeof(id->dst));
	memcpy(&id->dst, dst, ibcm_sa_len(dst));
	id->route.dgid = dgid;
	id->route.pkey = 0xFFFF;
	id->state = IBCM_ID_ADDR_QUERY;
	id->addr_deadline = ibcm_now() + (uint64_t)timeout_ms * 1000000u;
	rc = ibcm_addr_try(id);
	if (rc != 0)
		ibcm_addr_done(id, rc);
	else
		ibcm_dev_kick(id->dev);  /* the agent asks again */
	rc = 0;
out:
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}

int
drnic_ibcm_resolve_route(struct drnic_ibcm_id *id, int timeout_ms)
{
	struct drnic_port_attr pa;
	int rc = 0;

	if (rpc_attached())
		return ibcm_r_simple(RPC_CM_RESOLVE_ROUTE, id, (uint64_t)(int64_t)timeout_ms);
	RTE_SET_USED(timeout_ms);
	if (id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (id->state != IBCM_ID_ADDR_RESOLVED || id->dev == NULL) {
		rc = -EINVAL;
		goto out;
	}
	if (drnic_query_port(id->dev->dev, 1, &pa) == 0)
		id->dev->active_mtu = pa.active_mtu;
	id->route.mtu = id->dev->active_mtu;
	id->route.hop_limit = IBCM_ROCE_HOP_LIMIT;
	id->route.traffic_class = id->tos_set ? id->tos : 0;
	id->route.packet_life_time = IBCM_ROCE_PACKET_LIFE;
	id->route.pkey = 0xFFFF;
	id->route.num_paths = 1;
	id->state = IBCM_ID_ROUTE_RESOLVED;
	ibcm_id_event(id, DRNIC_IBCM_EVENT_ROUTE_RESOLVED, 0, NULL, 0);
out:
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}
