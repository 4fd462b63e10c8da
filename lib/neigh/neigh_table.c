/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table: our addresses, peers' MACs learned from ARP and ND,
 * pending requests with retries, negative entries.
 *
 * Entry states: FREE → INCOMPLETE (resolve asked; requests go out every
 * retry_ms) → REACHABLE (answered) or FAILED (max_tries unanswered; lives
 * fail_ms). A REACHABLE entry older than reachable_ms is "stale": it still
 * answers, and requests go out to refresh it. PERMANENT entries are static.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "drnic_neigh.h"
#include "neigh_internal.h"

#define NEIGH_MAX_LOCAL 8
#define NEIGH_MS 1000000ull

enum neigh_state {
	NEIGH_FREE = 0,
	NEIGH_INCOMPLETE,
	NEIGH_REACHABLE,
	NEIGH_FAILED,
	NEIGH_PERMANENT,
};

struct neigh_entry {
	uint8_t ip[16];
	uint8_t mac[6];
	uint8_t state;           /* enum neigh_state */
	uint8_t tries;           /* requests sent for the current question */
	bool asking;             /* INCOMPLETE, or REACHABLE and refreshing */
	uint64_t due_ns;         /* asking: next request; REACHABLE: stale time
				  * (0 never); FAILED: expiry */
	uint64_t used_ns;        /* last change, for eviction */
};

struct drnic_neigh {
	struct drnic_neigh_params p;
	uint8_t local[NEIGH_MAX_LOCAL][16];
	unsigned int nb_local;
	unsigned int nb_asking;
	struct drnic_neigh_stats st;
	struct neigh_entry e[];
};

static const uint8_t neigh_bcast[6] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
static const uint8_t neigh_zero_mac[6];

struct drnic_neigh *
drnic_neigh_create(const struct drnic_neigh_params *p)
{
	struct drnic_neigh *t;
	unsigned int size;

	if (p == NULL || p->size > 65536) {
		rte_errno = EINVAL;
		return NULL;
	}
	size = p->size != 0 ? p->size : 64;
	t = rte_zmalloc_socket("drnic_neigh", sizeof(*t) + size * sizeof(t->e[0]), 0,
			       p->socket_id != 0 ? p->socket_id : SOCKET_ID_ANY);
	if (t == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	t->p = *p;
	t->p.size = size;
	if (t->p.max_tries == 0)
		t->p.max_tries = 3;
	if (t->p.retry_ms == 0)
		t->p.retry_ms = 1000;
	if (t->p.fail_ms == 0)
		t->p.fail_ms = 3000;
	return t;
}

void
drnic_neigh_free(struct drnic_neigh *t)
{
	rte_free(t);
}

/* Addresses nobody can resolve: unspecified, multicast, broadcast. */
static bool
neigh_ip_bad(const uint8_t ip[16])
{
	if (drnic_neigh_gid_is_ipv4(ip))
		return ip[12] == 0 || ip[12] >= 224;
	return neigh_ip_unspecified(ip) || ip[0] == 0xFF;
}

bool
drnic_neigh_is_local(const struct drnic_neigh *t, const uint8_t ip[16])
{
	unsigned int i;

	if (t == NULL || ip == NULL)
		return false;
	for (i = 0; i < t->nb_local; i++)
		if (memcmp(t->local[i], ip, 16) == 0)
			return true;
	return false;
}

int
drnic_neigh_addr_add(struct drnic_neigh *t, const uint8_t ip[16])
{
	if (t == NULL || ip == NULL || neigh_ip_bad(ip))
		return -EINVAL;
	if (drnic_neigh_is_local(t, ip))
		return -EEXIST;
	if (t->nb_local == NEIGH_MAX_LOCAL)
		return -ENOSPC;
	memcpy(t->local[t->nb_local++], ip, 16);
	return 0;
}

/* Our first address of the family of @p ip, or NULL. */
static const uint8_t *
neigh_local_for(const struct drnic_neigh *t, const uint8_t ip[16])
{
	bool v4 = drnic_neigh_gid_is_ipv4(ip);
	unsigned int i;

	for (i = 0; i < t->nb_local; i++)
		if (drnic_neigh_gid_is_ipv4(t->local[i]) == v4)
			return t->local[i];
	return NULL;
}

static struct neigh_entry *
neigh_find(const struct drnic_neigh *t, const uint8_t ip[16])
{
	unsigned int i;

	for (i = 0; i < t->p.size; i++)
		if (t->e[i].state != NEIGH_FREE && memcmp(t->e[i].ip, ip, 16) == 0)
			return (struct neigh_entry *)&t->e[i];
	return NULL;
}

/* A free entry; else the oldest FAILED, else the oldest REACHABLE. */
static struct neigh_entry *
neigh_alloc(struct drnic_neigh *t, const uint8_t ip[16])
{
	struct neigh_entry *victim = NULL, *e;
	unsigned int i;

	for (i = 0; i < t->p.size; i++) {
		e = &t->e[i];
		if (e->state == NEIGH_FREE) {
			victim = e;
			break;
		}
		if (e->state == NEIGH_INCOMPLETE || e->state == NEIGH_PERMANENT || e->asking)
			continue;
		if (victim == NULL || (e->state == NEIGH_FAILED && victim->state != NEIGH_FAILED) ||
		    (e->state == victim->state && e->used_ns < victim->used_ns))
			victim = e;
	}
	if (victim == NULL)
		return NULL;
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->ip, ip, 16);
	return victim;
}

static void
neigh_stop_asking(struct drnic_neigh *t, struct neigh_entry *e)
{
	if (e->asking) {
		e->asking = false;
		t->nb_asking--;
	}
}

static void
neigh_start_asking(struct drnic_neigh *t, struct neigh_entry *e, uint64_t now)
{
	if (!e->asking) {
		e->asking = true;
		t->nb_asking++;
	}
	e->tries = 0;
	e->due_ns = now;
}

/* An answer or a request from @p ip at @p mac: update it, or add it when
 * @p create. */
static void
neigh_learn(struct drnic_neigh *t, const uint8_t ip[16], const uint8_t mac[6], bool create,
	    uint64_t now)
{
	struct neigh_entry *e = neigh_find(t, ip);

	if (neigh_ip_bad(ip) || drnic_neigh_is_local(t, ip) ||
	    memcmp(mac, neigh_zero_mac, 6) == 0 || (mac[0] & 1) != 0)
		return;
	if (e == NULL) {
		if (!create || (e = neigh_alloc(t, ip)) == NULL)
			return;
	}
	if (e->state == NEIGH_PERMANENT)
		return;
	if (e->state == NEIGH_INCOMPLETE || e->asking)
		t->st.resolved++;
	if (e->state != NEIGH_REACHABLE || memcmp(e->mac, mac, 6) != 0)
		t->st.learned++;
	neigh_stop_asking(t, e);
	memcpy(e->mac, mac, 6);
	e->state = NEIGH_REACHABLE;
	e->due_ns = t->p.reachable_ms != 0 ? now + t->p.reachable_ms * NEIGH_MS : 0;
	e->used_ns = now;
}

static struct rte_mbuf *
neigh_mbuf(struct drnic_neigh *t, struct rte_mempool *mp)
{
	struct rte_mbuf *m = mp != NULL ? rte_pktmbuf_alloc(mp) : NULL;

	if (m == NULL)
		t->st.nomem++;
	return m;
}

static int
neigh_input_arp(struct drnic_neigh *t, const struct drnic_neigh_msg *msg, uint64_t now,
		struct rte_mempool *mp, struct rte_mbuf **reply)
{
	bool ours = drnic_neigh_is_local(t, msg->target_ip);
	uint32_t spa, tpa;
	struct rte_mbuf *m;

	if (msg->kind == DRNIC_NEIGH_ARP_REPLY) {
		t->st.arp_rep_rx++;
		neigh_learn(t, msg->sender_ip, msg->lladdr, ours, now);
		return 0;
	}
	t->st.arp_req_rx++;
	/* RFC 826: update the sender if known; add it when we are the target.
	 * An ARP probe (sender 0.0.0.0) teaches nothing. */
	neigh_learn(t, msg->sender_ip, msg->lladdr, ours, now);
	if (!ours) {
		t->st.not_ours++;
		return 0;
	}
	m = neigh_mbuf(t, mp);
	if (m == NULL)
		return -ENOMEM;
	drnic_neigh_gid_to_ipv4(msg->sender_ip, &spa);
	drnic_neigh_gid_to_ipv4(msg->target_ip, &tpa);
	if (drnic_neigh_arp_build(m, 2, msg->lladdr, t->p.mac, tpa, msg->lladdr, spa) < 0) {
		rte_pktmbuf_free(m);
		t->st.nomem++;
		return -ENOMEM;
	}
	t->st.arp_rep_tx++;
	*reply = m;
	return 0;
}

static int
neigh_input_nd(struct drnic_neigh *t, const struct drnic_neigh_msg *msg, uint64_t now,
	       struct rte_mempool *mp, struct rte_mbuf **reply)
{
	static const uint8_t all_nodes[16] = { 0xFF, 0x02, [15] = 0x01 };
	static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 0x01 };
	bool ours = drnic_neigh_is_local(t, msg->target_ip);
	const uint8_t *dst, *dmac;
	uint32_t flags;
	struct rte_mbuf *m;
	int rc;

	if (msg->kind == DRNIC_NEIGH_ND_ADVERT) {
		t->st.na_rx++;
		/* RFC 4861 7.2.5: an advertisement updates an existing entry
		 * only. */
		if (msg->has_lladdr)
			neigh_learn(t, msg->target_ip, msg->lladdr, false, now);
		return 0;
	}
	t->st.ns_rx++;
	if (msg->has_lladdr && !neigh_ip_unspecified(msg->sender_ip))
		neigh_learn(t, msg->sender_ip, msg->lladdr, ours, now);
	if (!ours) {
		t->st.not_ours++;
		return 0;
	}
	if (neigh_ip_unspecified(msg->sender_ip)) {
		/* Duplicate address detection: defend to all nodes. */
		dst = all_nodes;
		dmac = all_nodes_mac;
		flags = DRNIC_NEIGH_NA_OVERRIDE;
	} else {
		dst = msg->sender_ip;
		dmac = msg->has_lladdr ? msg->lladdr : msg->eth_src;
		flags = DRNIC_NEIGH_NA_SOLICITED | DRNIC_NEIGH_NA_OVERRIDE;
	}
	m = neigh_mbuf(t, mp);
	if (m == NULL)
		return -ENOMEM;
	rc = drnic_neigh_na_build(m, t->p.mac, dmac, msg->target_ip, dst, msg->target_ip, flags);
	if (rc < 0) {
		rte_pktmbuf_free(m);
		t->st.nomem++;
		return -ENOMEM;
	}
	t->st.na_tx++;
	*reply = m;
	return 0;
}

int
drnic_neigh_input(struct drnic_neigh *t, const struct rte_mbuf *m, uint64_t now_ns,
		  struct rte_mempool *mp, struct rte_mbuf **reply)
{
	struct drnic_neigh_msg msg;
	int rc;

	if (t == NULL || m == NULL || reply == NULL)
		return -EINVAL;
	*reply = NULL;
	rc = drnic_neigh_parse(m, &msg);
	if (rc == -EBADMSG)
		t->st.bad++;
	if (rc < 0)
		return rc;
	if (msg.kind == DRNIC_NEIGH_ARP_REQUEST || msg.kind == DRNIC_NEIGH_ARP_REPLY)
		return neigh_input_arp(t, &msg, now_ns, mp, reply);
	return neigh_input_nd(t, &msg, now_ns, mp, reply);
}

int
drnic_neigh_lookup(const struct drnic_neigh *t, const uint8_t ip[16], uint8_t mac[6])
{
	const struct neigh_entry *e;

	if (t == NULL || ip == NULL || mac == NULL)
		return -EINVAL;
	if (drnic_neigh_is_local(t, ip)) {
		memcpy(mac, t->p.mac, 6);
		return 0;
	}
	e = neigh_find(t, ip);
	if (e == NULL || (e->state != NEIGH_REACHABLE && e->state != NEIGH_PERMANENT))
		return -ENOENT;
	memcpy(mac, e->mac, 6);
	return 0;
}

int
drnic_neigh_resolve(struct drnic_neigh *t, const uint8_t ip[16], uint64_t now_ns, uint8_t mac[6])
{
	struct neigh_entry *e;

	if (t == NULL || ip == NULL || mac == NULL || neigh_ip_bad(ip))
		return -EINVAL;
	if (drnic_neigh_is_local(t, ip)) {
		memcpy(mac, t->p.mac, 6);
		return 0;
	}
	e = neigh_find(t, ip);
	if (e != NULL) {
		switch (e->state) {
		case NEIGH_PERMANENT:
			memcpy(mac, e->mac, 6);
			return 0;
		case NEIGH_REACHABLE:
			if (e->due_ns != 0 && now_ns >= e->due_ns && !e->asking)
				neigh_start_asking(t, e, now_ns);
			memcpy(mac, e->mac, 6);
			return 0;
		case NEIGH_INCOMPLETE:
			return -EAGAIN;
		case NEIGH_FAILED:
			if (now_ns < e->due_ns)
				return -EHOSTUNREACH;
			break;  /* expired: ask again */
		default:
			break;
		}
	}
	if (neigh_local_for(t, ip) == NULL)
		return -EADDRNOTAVAIL;
	if (e == NULL && (e = neigh_alloc(t, ip)) == NULL)
		return -ENOSPC;
	e->state = NEIGH_INCOMPLETE;
	e->used_ns = now_ns;
	neigh_start_asking(t, e, now_ns);
	return -EAGAIN;
}

int
drnic_neigh_add_static(struct drnic_neigh *t, const uint8_t ip[16], const uint8_t mac[6])
{
	struct neigh_entry *e;

	if (t == NULL || ip == NULL || mac == NULL || neigh_ip_bad(ip))
		return -EINVAL;
	e = neigh_find(t, ip);
	if (e == NULL && (e = neigh_alloc(t, ip)) == NULL)
		return -ENOSPC;
	neigh_stop_asking(t, e);
	memcpy(e->mac, mac, 6);
	e->state = NEIGH_PERMANENT;
	return 0;
}

bool
drnic_neigh_pending(const struct drnic_neigh *t)
{
	return t != NULL && t->nb_asking > 0;
}

/* Build the request for entry @p e. */
static int
neigh_request(struct drnic_neigh *t, const struct neigh_entry *e, struct rte_mbuf *m)
{
	const uint8_t *src = neigh_local_for(t, e->ip);
	uint32_t spa, tpa;

	if (src == NULL)
		return -EADDRNOTAVAIL;
	if (drnic_neigh_gid_is_ipv4(e->ip)) {
		drnic_neigh_gid_to_ipv4(src, &spa);
		drnic_neigh_gid_to_ipv4(e->ip, &tpa);
		if (drnic_neigh_arp_build(m, 1, neigh_bcast, t->p.mac, spa, neigh_zero_mac, tpa) < 0)
			return -ENOSPC;
		t->st.arp_req_tx++;
		return 0;
	}
	if (drnic_neigh_ns_build(m, t->p.mac, src, e->ip) < 0)
		return -ENOSPC;
	t->st.ns_tx++;
	return 0;
}

unsigned int
drnic_neigh_poll(struct drnic_neigh *t, uint64_t now_ns, struct rte_mempool *mp,
		 struct rte_mbuf **out, unsigned int max)
{
	unsigned int i, n = 0;

	if (t == NULL || out == NULL || t->nb_asking == 0)
		return 0;
	for (i = 0; i < t->p.size && n < max; i++) {
		struct neigh_entry *e = &t->e[i];
		struct rte_mbuf *m;

		if (!e->asking || now_ns < e->due_ns)
			continue;
		if (e->tries >= t->p.max_tries || neigh_local_for(t, e->ip) == NULL) {
			neigh_stop_asking(t, e);
			e->state = NEIGH_FAILED;
			e->due_ns = now_ns + t->p.fail_ms * NEIGH_MS;
			e->used_ns = now_ns;
			t->st.failed++;
			continue;
		}
		m = neigh_mbuf(t, mp);
		if (m == NULL)
			break;
		if (neigh_request(t, e, m) < 0) {
			/* The pool's mbufs are too small for a request. */
			rte_pktmbuf_free(m);
			t->st.nomem++;
			break;
		}
		e->tries++;
		e->due_ns = now_ns + t->p.retry_ms * NEIGH_MS;
		out[n++] = m;
	}
	return n;
}

int
drnic_neigh_stats_get(const struct drnic_neigh *t, struct drnic_neigh_stats *stats)
{
	if (t == NULL || stats == NULL)
		return -EINVAL;
	*stats = t->st;
	return 0;
}
