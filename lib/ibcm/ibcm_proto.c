/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM protocol (IBA volume 1 chapter 12) as an explicit state machine
 * per connection. Received messages are dispatched through one table,
 * ibcm_rx_actions[message][state], to a small set of actions; the calls of
 * the consumer are checked against ibcm_op_states[], one mask of allowed
 * states per call. Every conn has at most one timer (a retransmission, the
 * wait an MRA asked for, or time-wait) kept in a binary heap, so
 * ibcm_proto_next_timer() is O(1) and a timer costs O(log n).
 *
 * Lookups are by hash: conns by local communication ID (every message but
 * REQ and SIDR_REQ names it), passive conns by the peer's ID and GID
 * (duplicate REQs and SIDR_REQs), listeners by service ID.
 *
 * Callbacks: an event is the last thing a handler does with its conn, so
 * the consumer may call ibcm_send_*() or ibcm_conn_destroy() on it from the
 * callback. A conn destroyed while a call of this instance is running is
 * freed when the outermost call returns.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "ibcm_proto.h"

/* 4.096 us * 2^x, in nanoseconds. */
#define IBCM_TIMEOUT_NS(x) (4096ull << (x))
#define IBCM_TIMEWAIT_MIN_NS 1000000ull /* time-wait lasts at least 1 ms */
#define IBCM_TIMER_BUDGET 64            /* timers run by one ibcm_proto_timer() */
#define IBCM_HASH_BITS 10
#define IBCM_HASH_SIZE (1u << IBCM_HASH_BITS)
#define IBCM_NO_HEAP UINT32_MAX

/* SIDR_REP status (IBA 12.11.2). */
#define IBCM_SIDR_NO_SERVICE 1
#define IBCM_SIDR_REJECT     2

static const char *const ibcm_state_names[IBCM_STATE_COUNT] = {
	[IBCM_IDLE] = "idle",
	[IBCM_LISTEN] = "listen",
	[IBCM_REQ_SENT] = "req_sent",
	[IBCM_REQ_RCVD] = "req_rcvd",
	[IBCM_MRA_REQ_SENT] = "mra_req_sent",
	[IBCM_MRA_REQ_RCVD] = "mra_req_rcvd",
	[IBCM_REP_SENT] = "rep_sent",
	[IBCM_REP_RCVD] = "rep_rcvd",
	[IBCM_MRA_REP_SENT] = "mra_rep_sent",
	[IBCM_MRA_REP_RCVD] = "mra_rep_rcvd",
	[IBCM_ESTABLISHED] = "established",
	[IBCM_DREQ_SENT] = "dreq_sent",
	[IBCM_DREQ_RCVD] = "dreq_rcvd",
	[IBCM_TIMEWAIT] = "timewait",
	[IBCM_SIDR_REQ_SENT] = "sidr_req_sent",
	[IBCM_SIDR_REQ_RCVD] = "sidr_req_rcvd",
};

/* ------------------------------------------------------------------------ */
/* Objects                                                                   */
/* ------------------------------------------------------------------------ */

/* A node of an intrusive chained hash table. */
struct ibcm_hnode {
	struct ibcm_hnode *next;
	uint64_t key;
};

struct ibcm_htab {
	struct ibcm_hnode *bucket[IBCM_HASH_SIZE];
};

/* What a conn's one timer is doing. */
enum ibcm_timer_kind {
	IBCM_TIMER_NONE = 0,
	IBCM_TIMER_RESEND,    /* conn->msg is resent when it fires */
	IBCM_TIMER_MRA_WAIT,  /* the peer's MRA asked us to wait; then resend */
	IBCM_TIMER_TIMEWAIT,  /* time-wait ends */
};

struct ibcm_conn {
	struct ibcm_proto *p;
	void *user;
	enum ibcm_state state;
	bool active;            /* we sent the REQ / SIDR_REQ */
	bool destroyed;         /* the owner let go: no events, freed when done */
	bool in_local;          /* in p->by_local */
	bool in_remote;         /* in p->by_remote (passive conns) */
	bool sidr;              /* a SIDR exchange (request_id in the IDs) */
	bool mra_seen;          /* MRA_RCVD reported for this message */
	uint32_t local_id;
	uint32_t remote_id;
	struct ibcm_peer peer;
	uint32_t local_qpn;     /* ours (REQ or REP we sent) */
	uint32_t remote_qpn;    /* the peer's (REQ or REP it sent) */
	uint64_t req_tid;       /* TID of the REQ / SIDR_REQ, either side's */
	uint64_t rep_tid;       /* TID of the REP, either side's */
	uint64_t dreq_tid;      /* TID of the last DREQ, either side's */
	uint64_t sidr_sid;      /* service ID of a received SIDR_REQ */
	uint8_t max_retries;    /* the REQ's max_cm_retries */
	uint8_t peer_resp_timeout; /* passive: the REQ's local_cm_resp_timeout */

	/* The one timer. */
	enum ibcm_timer_kind timer;
	uint64_t deadline;
	uint32_t heap_idx;
	uint8_t retries_left;
	uint64_t resend_ns;     /* between resends of msg */

	uint8_t msg[DRNIC_MAD_LEN]; /* the REQ / REP / DREQ / SIDR_REQ resent */
	uint8_t ans[DRNIC_MAD_LEN]; /* the last MRA or RTU: answers duplicates */
	bool ans_valid;

	struct ibcm_hnode local_node;
	struct ibcm_hnode remote_node;
	TAILQ_ENTRY(ibcm_conn) link;      /* p->conns */
	TAILQ_ENTRY(ibcm_conn) free_link; /* p->zombies */
};

struct ibcm_listener {
	struct ibcm_hnode node;   /* key: the service ID */
	void *user;
};

TAILQ_HEAD(ibcm_conn_list, ibcm_conn);

struct ibcm_proto {
	struct ibcm_proto_cfg cfg;
	struct ibcm_proto_ops ops;
	void *ctx;
	struct ibcm_proto_stats stats;
	uint32_t next_comm_id;
	uint32_t next_tid;
	unsigned int depth;          /* calls of this instance in progress */
	unsigned int n_conns;
	struct ibcm_conn_list conns;
	struct ibcm_conn_list zombies; /* destroyed during a call: freed after it */
	struct ibcm_conn **heap;     /* timers, earliest deadline first */
	uint32_t heap_len;
	uint32_t heap_cap;
	struct ibcm_htab by_local;
	struct ibcm_htab by_remote;
	struct ibcm_htab listeners;
};

/* ------------------------------------------------------------------------ */
/* Hash tables                                                               */
/* ------------------------------------------------------------------------ */

static inline uint32_t
ibcm_hash(uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - IBCM_HASH_BITS));
}

static void
ibcm_htab_add(struct ibcm_htab *t, struct ibcm_hnode *n, uint64_t key)
{
	struct ibcm_hnode **b = &t->bucket[ibcm_hash(key)];

	n->key = key;
	n->next = *b;
	*b = n;
}

static void
ibcm_htab_del(struct ibcm_htab *t, struct ibcm_hnode *n)
{
	struct ibcm_hnode **pp = &t->bucket[ibcm_hash(n->key)];

	while (*pp != NULL && *pp != n)
		pp = &(*pp)->next;
	if (*pp == n)
		*pp = n->next;
	n->next = NULL;
}

/* The next node with @key after @from (NULL: the first one). */
static struct ibcm_hnode *
ibcm_htab_next(const struct ibcm_htab *t, uint64_t key, const struct ibcm_hnode *from)
{
	struct ibcm_hnode *n = from != NULL ? from->next : t->bucket[ibcm_hash(key)];

	while (n != NULL && n->key != key)
		n = n->next;
	return n;
}

static uint32_t
ibcm_gid_fold(const union drnic_gid *gid)
{
	uint64_t v = gid->global.subnet_prefix ^ gid->global.interface_id;

	return (uint32_t)(v ^ v >> 32);
}

static bool
ibcm_gid_eq(const union drnic_gid *a, const union drnic_gid *b)
{
	return memcmp(a->raw, b->raw, sizeof(a->raw)) == 0;
}

static uint64_t
ibcm_remote_key(uint32_t remote_id, const union drnic_gid *gid)
{
	return (uint64_t)ibcm_gid_fold(gid) << 32 | remote_id;
}

static struct ibcm_conn *
ibcm_find_local(const struct ibcm_proto *p, uint32_t local_id)
{
	struct ibcm_hnode *n = ibcm_htab_next(&p->by_local, local_id, NULL);

	return n != NULL ? container_of(n, struct ibcm_conn, local_node) : NULL;
}

/* A passive conn (SIDR or not, as @sidr) made by @gid's message with ID @id. */
static struct ibcm_conn *
ibcm_find_remote(const struct ibcm_proto *p, uint32_t id, const union drnic_gid *gid, bool sidr)
{
	uint64_t key = ibcm_remote_key(id, gid);
	struct ibcm_hnode *n = NULL;

	while ((n = ibcm_htab_next(&p->by_remote, key, n)) != NULL) {
		struct ibcm_conn *c = container_of(n, struct ibcm_conn, remote_node);

		if (c->remote_id == id && c->sidr == sidr && ibcm_gid_eq(&c->peer.gid, gid))
			return c;
	}
	return NULL;
}

static struct ibcm_listener *
ibcm_find_listener(const struct ibcm_proto *p, uint64_t sid)
{
	struct ibcm_hnode *n = ibcm_htab_next(&p->listeners, sid, NULL);

	return n != NULL ? container_of(n, struct ibcm_listener, node) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Timers: a binary heap of conns by deadline                                */
/* ------------------------------------------------------------------------ */

static void
ibcm_heap_set(struct ibcm_proto *p, uint32_t i, struct ibcm_conn *c)
{
	p->heap[i] = c;
	c->heap_idx = i;
}

static void
ibcm_heap_up(struct ibcm_proto *p, uint32_t i)
{
	struct ibcm_conn *c = p->heap[i];

	while (i > 0 && p->heap[(i - 1) / 2]->deadline > c->deadline) {
		ibcm_heap_set(p, i, p->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	ibcm_heap_set(p, i, c);
}

static void
ibcm_heap_down(struct ibcm_proto *p, uint32_t i)
{
	struct ibcm_conn *c = p->heap[i];

	for (;;) {
		uint32_t k = 2 * i + 1;

		if (k >= p->heap_len)
			break;
		if (k + 1 < p->heap_len && p->heap[k + 1]->deadline < p->heap[k]->deadline)
			k++;
		if (p->heap[k]->deadline >= c->deadline)
			break;
		ibcm_heap_set(p, i, p->heap[k]);
		i = k;
	}
	ibcm_heap_set(p, i, c);
}

/* Stop @c's timer, if any. */
static void
ibcm_timer_stop(struct ibcm_conn *c)
{
	struct ibcm_proto *p = c->p;
	uint32_t i = c->heap_idx;

	c->timer = IBCM_TIMER_NONE;
	if (i == IBCM_NO_HEAP)
		return;
	c->heap_idx = IBCM_NO_HEAP;
	if (--p->heap_len == i)
		return;
	ibcm_heap_set(p, i, p->heap[p->heap_len]);
	ibcm_heap_up(p, i);
	ibcm_heap_down(p, p->heap[i]->heap_idx);
}

/*
 * Arm @c's timer for @deadline. The heap holds room for every conn (see
 * ibcm_conn_alloc()), so this cannot fail.
 */
static void
ibcm_timer_start(struct ibcm_conn *c, enum ibcm_timer_kind kind, uint64_t deadline)
{
	struct ibcm_proto *p = c->p;

	ibcm_timer_stop(c);
	c->timer = kind;
	c->deadline = deadline;
	c->heap_idx = p->heap_len++;
	p->heap[c->heap_idx] = c;
	ibcm_heap_up(p, c->heap_idx);
}

/* ------------------------------------------------------------------------ */
/* Conns                                                                     */
/* ------------------------------------------------------------------------ */

/* A new IDLE conn; NULL when out of memory. */
static struct ibcm_conn *
ibcm_conn_alloc(struct ibcm_proto *p, void *user)
{
	struct ibcm_conn *c;

	if (p->n_conns == p->heap_cap) {
		uint32_t cap = p->heap_cap != 0 ? p->heap_cap * 2 : 64;
		struct ibcm_conn **h = realloc(p->heap, cap * sizeof(*h));

		if (h == NULL)
			return NULL;
		p->heap = h;
		p->heap_cap = cap;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->p = p;
	c->user = user;
	c->state = IBCM_IDLE;
	c->heap_idx = IBCM_NO_HEAP;
	TAILQ_INSERT_TAIL(&p->conns, c, link);
	p->n_conns++;
	return c;
}

/* Take @c out of the lookups: its IDs are free again. */
static void
ibcm_conn_unhash(struct ibcm_conn *c)
{
	if (c->in_local)
		ibcm_htab_del(&c->p->by_local, &c->local_node);
	if (c->in_remote)
		ibcm_htab_del(&c->p->by_remote, &c->remote_node);
	c->in_local = false;
	c->in_remote = false;
}

static void
ibcm_conn_free(struct ibcm_conn *c)
{
	struct ibcm_proto *p = c->p;

	ibcm_timer_stop(c);
	ibcm_conn_unhash(c);
	TAILQ_REMOVE(&p->conns, c, link);
	p->n_conns--;
	free(c);
}

/* A destroyed conn whose protocol is done: freed now, or after the running call. */
static void
ibcm_conn_release(struct ibcm_conn *c)
{
	struct ibcm_proto *p = c->p;

	ibcm_timer_stop(c);
	ibcm_conn_unhash(c);
	if (p->depth > 0)
		TAILQ_INSERT_TAIL(&p->zombies, c, free_link);
	else
		ibcm_conn_free(c);
}

/* Give @c a fresh local communication ID: never 0, never one in use. */
static void
ibcm_conn_new_id(struct ibcm_conn *c)
{
	struct ibcm_proto *p = c->p;
	uint32_t id;

	ibcm_conn_unhash(c);
	do {
		id = p->next_comm_id++;
	} while (id == 0 || ibcm_find_local(p, id) != NULL);
	c->local_id = id;
	ibcm_htab_add(&p->by_local, &c->local_node, id);
	c->in_local = true;
}

/* @c is a passive conn for the peer's ID @remote_id. */
static void
ibcm_conn_set_remote(struct ibcm_conn *c, uint32_t remote_id)
{
	c->remote_id = remote_id;
	ibcm_htab_add(&c->p->by_remote, &c->remote_node,
		      ibcm_remote_key(remote_id, &c->peer.gid));
	c->in_remote = true;
}

/* The conn reached IDLE: IDs released; a destroyed one is freed. */
static void
ibcm_conn_idle(struct ibcm_conn *c)
{
	c->state = IBCM_IDLE;
	ibcm_timer_stop(c);
	ibcm_conn_unhash(c);
	if (c->destroyed)
		ibcm_conn_release(c);
}

static void
ibcm_conn_timewait(struct ibcm_conn *c, uint64_t now)
{
	uint64_t t = IBCM_TIMEOUT_NS(c->p->cfg.packet_life_time + 1);

	c->state = IBCM_TIMEWAIT;
	ibcm_timer_start(c, IBCM_TIMER_TIMEWAIT, now + RTE_MAX(t, IBCM_TIMEWAIT_MIN_NS));
}

/* Calls that may make callbacks or destroy conns nest: free zombies at the end. */
static void
ibcm_enter(struct ibcm_proto *p)
{
	p->depth++;
}

static void
ibcm_leave(struct ibcm_proto *p)
{
	struct ibcm_conn *c;

	if (--p->depth > 0)
		return;
	while ((c = TAILQ_FIRST(&p->zombies)) != NULL) {
		TAILQ_REMOVE(&p->zombies, c, free_link);
		ibcm_conn_free(c);
	}
}

/* ------------------------------------------------------------------------ */
/* Sending                                                                   */
/* ------------------------------------------------------------------------ */

/* A CM MAD header for @attr with @tid. */
static void
ibcm_mad_init(struct drnic_mad_cm *m, uint16_t attr, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = DRNIC_MAD_BASE_VERSION;
	m->hdr.mgmt_class = DRNIC_MAD_CLASS_CM;
	m->hdr.class_version = DRNIC_MAD_CM_CLASS_VERSION;
	m->hdr.method = DRNIC_MAD_METHOD_SEND;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr;
	m->known = true;
}

static uint64_t
ibcm_new_tid(struct ibcm_proto *p)
{
	return p->cfg.tid_seed << 32 | p->next_tid++;
}

/* Hand a built MAD to the owner. A failed send counts as a lost one. */
static void
ibcm_tx(struct ibcm_proto *p, const struct ibcm_peer *dst, const uint8_t *mad)
{
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);

	if (p->ops.send(p->ctx, dst, mad) == 0 && attr >= DRNIC_MAD_CM_REQ &&
	    attr - DRNIC_MAD_CM_REQ < (int)RTE_DIM(p->stats.tx))
		p->stats.tx[attr - DRNIC_MAD_CM_REQ]++;
}

/* Build @m into @out (or a stack buffer when NULL) and send it. -EINVAL: a field too wide. */
static int
ibcm_build_tx(struct ibcm_proto *p, const struct ibcm_peer *dst, const struct drnic_mad_cm *m,
	      uint8_t *out)
{
	uint8_t buf[DRNIC_MAD_LEN];

	if (out == NULL)
		out = buf;
	if (drnic_mad_cm_build(m, out, DRNIC_MAD_LEN) != 0)
		return -EINVAL;
	ibcm_tx(p, dst, out);
	return 0;
}

/* Copy @len bytes of private data into @dst of @cap bytes. -EINVAL: too long. */
static int
ibcm_pdata(uint8_t *dst, size_t cap, const void *pdata, size_t len)
{
	if (len > cap || (len > 0 && pdata == NULL))
		return -EINVAL;
	if (len > 0)
		memcpy(dst, pdata, len);
	return 0;
}

/*
 * A REJ: from @local_id to @remote_id with @tid, about @msg, to @dst.
 * @return 0; -EINVAL (ARI or private data too long).
 */
static int
ibcm_rej_tx(struct ibcm_proto *p, const struct ibcm_peer *dst, uint64_t tid, uint32_t local_id,
	    uint32_t remote_id, uint8_t msg, uint16_t reason, const void *ari, size_t ari_len,
	    const void *pdata, size_t len)
{
	struct drnic_mad_cm m;

	ibcm_mad_init(&m, DRNIC_MAD_CM_REJ, tid);
	m.rej.local_comm_id = local_id;
	m.rej.remote_comm_id = remote_id;
	m.rej.msg_rejected = msg;
	m.rej.reason = reason;
	m.rej.reject_info_len = (uint8_t)ari_len;
	if (ibcm_pdata(m.rej.ari, sizeof(m.rej.ari), ari, ari_len) != 0 ||
	    ibcm_pdata(m.rej.private_data, sizeof(m.rej.private_data), pdata, len) != 0)
		return -EINVAL;
	return ibcm_build_tx(p, dst, &m, NULL);
}

/* The REJ "timeout" (IBA 12.6.7): our CA GUID as additional information. */
static void
ibcm_rej_timeout_tx(struct ibcm_conn *c, uint8_t msg, uint64_t tid)
{
	uint8_t guid[8];
	unsigned int i;

	for (i = 0; i < 8; i++)
		guid[i] = (uint8_t)(c->p->cfg.ca_guid >> (56 - 8 * i));
	ibcm_rej_tx(c->p, &c->peer, tid, c->local_id, c->remote_id, msg,
		    DRNIC_MAD_CM_REJ_TIMEOUT, guid, sizeof(guid), NULL, 0);
}

/* A DREP from @local_id to @remote_id answering the DREQ of @tid. */
static int
ibcm_drep_tx(struct ibcm_proto *p, const struct ibcm_peer *dst, uint64_t tid,
	     uint32_t local_id, uint32_t remote_id, const void *pdata, size_t len)
{
	struct drnic_mad_cm m;

	ibcm_mad_init(&m, DRNIC_MAD_CM_DREP, tid);
	m.drep.local_comm_id = local_id;
	m.drep.remote_comm_id = remote_id;
	if (ibcm_pdata(m.drep.private_data, sizeof(m.drep.private_data), pdata, len) != 0)
		return -EINVAL;
	return ibcm_build_tx(p, dst, &m, NULL);
}

/* Send c->msg now and resend it every @resend_ns, @retries times. */
static void
ibcm_msg_start(struct ibcm_conn *c, uint64_t resend_ns, uint8_t retries, uint64_t now)
{
	c->resend_ns = resend_ns;
	c->retries_left = retries;
	c->mra_seen = false;
	ibcm_tx(c->p, &c->peer, c->msg);
	ibcm_timer_start(c, IBCM_TIMER_RESEND, now + resend_ns);
}

/* Response timeout @x plus twice the packet life: the wait for an answer. */
static uint64_t
ibcm_resend_ns(const struct ibcm_proto *p, uint8_t x)
{
	return IBCM_TIMEOUT_NS(x) + 2 * IBCM_TIMEOUT_NS(p->cfg.packet_life_time);
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

/* Tell the owner (not for destroyed conns). The last thing done with @c. */
static void
ibcm_emit_ev(struct ibcm_conn *c, enum ibcm_event_type type, const struct ibcm_peer *src,
	     const struct drnic_mad_cm *mad, void *listen_user, uint16_t timed_out)
{
	struct ibcm_event ev;

	if (c->destroyed)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.conn = c;
	ev.listen_user = listen_user;
	ev.peer = src != NULL ? *src : c->peer;
	ev.timed_out = timed_out;
	ev.mad = mad;
	c->p->ops.event(c->p->ctx, &ev);
}

static void
ibcm_emit(struct ibcm_conn *c, enum ibcm_event_type type, const struct ibcm_peer *src,
	  const struct drnic_mad_cm *mad, void *listen_user)
{
	ibcm_emit_ev(c, type, src, mad, listen_user, 0);
}

/* @attr (REQ, REP, DREQ, SIDR_REQ) went unanswered. */
static void
ibcm_emit_timeout(struct ibcm_conn *c, uint16_t attr)
{
	ibcm_emit_ev(c, IBCM_EV_TIMEOUT, NULL, NULL, NULL, attr);
}

/* ------------------------------------------------------------------------ */
/* Receiving: one table of actions by message and state                     */
/* ------------------------------------------------------------------------ */

/* A received message and what it is about. */
struct ibcm_rx {
	struct ibcm_proto *p;
	struct ibcm_conn *c;
	const struct drnic_mad_cm *m;
	const struct ibcm_peer *src;
	uint64_t now;
};

enum ibcm_action {
	IBCM_A_INVALID = 0,   /* not valid in this state: dropped, -EPROTO */
	IBCM_A_DUP_DROP,      /* a duplicate nothing answers: dropped, -EPROTO */
	IBCM_A_RESEND_MSG,    /* a duplicate: resend conn->msg (the REP) */
	IBCM_A_RESEND_ANS,    /* a duplicate: resend conn->ans (MRA or RTU) */
	IBCM_A_REJ_STALE,     /* a REQ for a conn in time-wait: REJ stale */
	IBCM_A_REP,
	IBCM_A_RTU,
	IBCM_A_MRA,
	IBCM_A_REJ,
	IBCM_A_DREQ,
	IBCM_A_DREQ_AGAIN,    /* a DREQ in time-wait: DREP again */
	IBCM_A_DREP,
	IBCM_A_SIDR_REP,
	IBCM_A_COUNT,
};

/* Messages by attribute ID - 0x10. */
#define IBCM_M(attr) ((attr) - DRNIC_MAD_CM_REQ)
#define IBCM_N_MSGS (IBCM_M(DRNIC_MAD_CM_SIDR_REP) + 1)

static const uint8_t ibcm_rx_actions[IBCM_N_MSGS][IBCM_STATE_COUNT] = {
	[IBCM_M(DRNIC_MAD_CM_REQ)] = {
		[IBCM_REQ_RCVD] = IBCM_A_DUP_DROP,
		[IBCM_MRA_REQ_SENT] = IBCM_A_RESEND_ANS,
		[IBCM_REP_SENT] = IBCM_A_RESEND_MSG,
		[IBCM_MRA_REP_RCVD] = IBCM_A_RESEND_MSG,
		[IBCM_ESTABLISHED] = IBCM_A_DUP_DROP,
		[IBCM_DREQ_SENT] = IBCM_A_DUP_DROP,
		[IBCM_DREQ_RCVD] = IBCM_A_DUP_DROP,
		[IBCM_TIMEWAIT] = IBCM_A_REJ_STALE,
	},
	[IBCM_M(DRNIC_MAD_CM_MRA)] = {
		[IBCM_REQ_SENT] = IBCM_A_MRA,
		[IBCM_MRA_REQ_RCVD] = IBCM_A_MRA,
		[IBCM_REP_SENT] = IBCM_A_MRA,
		[IBCM_MRA_REP_RCVD] = IBCM_A_MRA,
	},
	[IBCM_M(DRNIC_MAD_CM_REJ)] = {
		[IBCM_REQ_SENT] = IBCM_A_REJ,
		[IBCM_MRA_REQ_RCVD] = IBCM_A_REJ,
		[IBCM_REQ_RCVD] = IBCM_A_REJ,
		[IBCM_MRA_REQ_SENT] = IBCM_A_REJ,
		[IBCM_REP_SENT] = IBCM_A_REJ,
		[IBCM_MRA_REP_RCVD] = IBCM_A_REJ,
		[IBCM_REP_RCVD] = IBCM_A_REJ,
		[IBCM_MRA_REP_SENT] = IBCM_A_REJ,
	},
	[IBCM_M(DRNIC_MAD_CM_REP)] = {
		[IBCM_REQ_SENT] = IBCM_A_REP,
		[IBCM_MRA_REQ_RCVD] = IBCM_A_REP,
		[IBCM_REP_RCVD] = IBCM_A_DUP_DROP,
		[IBCM_MRA_REP_SENT] = IBCM_A_RESEND_ANS,
		[IBCM_ESTABLISHED] = IBCM_A_RESEND_ANS,
		[IBCM_DREQ_SENT] = IBCM_A_DUP_DROP,
		[IBCM_TIMEWAIT] = IBCM_A_DUP_DROP,
	},
	[IBCM_M(DRNIC_MAD_CM_RTU)] = {
		[IBCM_REP_SENT] = IBCM_A_RTU,
		[IBCM_MRA_REP_RCVD] = IBCM_A_RTU,
		[IBCM_ESTABLISHED] = IBCM_A_DUP_DROP,
		[IBCM_DREQ_SENT] = IBCM_A_DUP_DROP,
		[IBCM_TIMEWAIT] = IBCM_A_DUP_DROP,
	},
	[IBCM_M(DRNIC_MAD_CM_DREQ)] = {
		[IBCM_REP_SENT] = IBCM_A_DREQ,      /* the RTU was lost: implicit */
		[IBCM_MRA_REP_RCVD] = IBCM_A_DREQ,
		[IBCM_ESTABLISHED] = IBCM_A_DREQ,
		[IBCM_DREQ_SENT] = IBCM_A_DREQ,     /* simultaneous disconnect */
		[IBCM_DREQ_RCVD] = IBCM_A_DUP_DROP,
		[IBCM_TIMEWAIT] = IBCM_A_DREQ_AGAIN,
	},
	[IBCM_M(DRNIC_MAD_CM_DREP)] = {
		[IBCM_DREQ_SENT] = IBCM_A_DREP,
		[IBCM_TIMEWAIT] = IBCM_A_DUP_DROP,  /* late, or after a simultaneous DREQ */
	},
	[IBCM_M(DRNIC_MAD_CM_SIDR_REQ)] = {
		[IBCM_SIDR_REQ_RCVD] = IBCM_A_DUP_DROP,
	},
	[IBCM_M(DRNIC_MAD_CM_SIDR_REP)] = {
		[IBCM_SIDR_REQ_SENT] = IBCM_A_SIDR_REP,
	},
};

static int
ibcm_act_invalid(struct ibcm_rx *rx)
{
	RTE_SET_USED(rx);
	return -EPROTO;
}

static int
ibcm_act_resend_msg(struct ibcm_rx *rx)
{
	ibcm_tx(rx->p, &rx->c->peer, rx->c->msg);
	rx->p->stats.dup_answered++;
	return 0;
}

static int
ibcm_act_resend_ans(struct ibcm_rx *rx)
{
	if (!rx->c->ans_valid)
		return -EPROTO;
	ibcm_tx(rx->p, &rx->c->peer, rx->c->ans);
	rx->p->stats.dup_answered++;
	return 0;
}

static int
ibcm_act_rej_stale(struct ibcm_rx *rx)
{
	ibcm_rej_tx(rx->p, rx->src, rx->m->hdr.tid, rx->c->local_id, rx->m->req.local_comm_id,
		    DRNIC_MAD_CM_MSG_REQ, DRNIC_MAD_CM_REJ_STALE_CONN, NULL, 0, NULL, 0);
	rx->p->stats.rej_stale++;
	rx->p->stats.dup_answered++;
	return 0;
}

static int
ibcm_act_rep(struct ibcm_rx *rx)
{
	struct ibcm_conn *c = rx->c;
	const struct drnic_mad_cm_rep *rep = &rx->m->rep;

	if (rep->local_comm_id == 0)
		return -EPROTO;
	ibcm_timer_stop(c);
	c->remote_id = rep->local_comm_id;
	c->remote_qpn = rep->local_qpn;
	c->rep_tid = rx->m->hdr.tid;
	c->state = IBCM_REP_RCVD;
	ibcm_emit(c, IBCM_EV_REP_RCVD, rx->src, rx->m, NULL);
	return 0;
}

static int
ibcm_act_rtu(struct ibcm_rx *rx)
{
	ibcm_timer_stop(rx->c);
	rx->c->state = IBCM_ESTABLISHED;
	ibcm_emit(rx->c, IBCM_EV_RTU_RCVD, rx->src, rx->m, NULL);
	return 0;
}

/* The peer needs more time for our REQ or REP: wait, then resume resending. */
static int
ibcm_act_mra(struct ibcm_rx *rx)
{
	struct ibcm_conn *c = rx->c;
	const struct drnic_mad_cm_mra *mra = &rx->m->mra;
	bool for_req = c->state == IBCM_REQ_SENT || c->state == IBCM_MRA_REQ_RCVD;
	bool first = !c->mra_seen;

	if (mra->msg_mraed != (for_req ? DRNIC_MAD_CM_MSG_REQ : DRNIC_MAD_CM_MSG_REP))
		return -EPROTO;
	c->state = for_req ? IBCM_MRA_REQ_RCVD : IBCM_MRA_REP_RCVD;
	c->mra_seen = true;
	ibcm_timer_start(c, IBCM_TIMER_MRA_WAIT, rx->now +
			 IBCM_TIMEOUT_NS(mra->service_timeout) +
			 IBCM_TIMEOUT_NS(rx->p->cfg.packet_life_time));
	if (first)
		ibcm_emit(c, IBCM_EV_MRA_RCVD, rx->src, rx->m, NULL);
	return 0;
}

static int
ibcm_act_rej(struct ibcm_rx *rx)
{
	ibcm_conn_idle(rx->c);
	ibcm_emit(rx->c, IBCM_EV_REJ_RCVD, rx->src, rx->m, NULL);
	return 0;
}

/* A DREQ for our QP: DREP at once, time-wait, tell the owner. */
static int
ibcm_act_dreq(struct ibcm_rx *rx)
{
	struct ibcm_conn *c = rx->c;

	if (rx->m->dreq.remote_qpn != c->local_qpn)
		return -EPROTO;
	c->dreq_tid = rx->m->hdr.tid;
	ibcm_drep_tx(rx->p, &c->peer, rx->m->hdr.tid, c->local_id, c->remote_id, NULL, 0);
	ibcm_conn_timewait(c, rx->now);
	ibcm_emit(c, IBCM_EV_DREQ_RCVD, rx->src, rx->m, NULL);
	return 0;
}

static int
ibcm_act_dreq_again(struct ibcm_rx *rx)
{
	ibcm_drep_tx(rx->p, &rx->c->peer, rx->m->hdr.tid, rx->c->local_id, rx->c->remote_id,
		     NULL, 0);
	rx->p->stats.dup_answered++;
	return 0;
}

static int
ibcm_act_drep(struct ibcm_rx *rx)
{
	ibcm_conn_timewait(rx->c, rx->now);
	ibcm_emit(rx->c, IBCM_EV_DREP_RCVD, rx->src, rx->m, NULL);
	return 0;
}

static int
ibcm_act_sidr_rep(struct ibcm_rx *rx)
{
	ibcm_conn_idle(rx->c);
	ibcm_emit(rx->c, IBCM_EV_SIDR_REP_RCVD, rx->src, rx->m, NULL);
	return 0;
}

static int (*const ibcm_action_fns[IBCM_A_COUNT])(struct ibcm_rx *rx) = {
	[IBCM_A_INVALID] = ibcm_act_invalid,
	[IBCM_A_DUP_DROP] = ibcm_act_invalid,
	[IBCM_A_RESEND_MSG] = ibcm_act_resend_msg,
	[IBCM_A_RESEND_ANS] = ibcm_act_resend_ans,
	[IBCM_A_REJ_STALE] = ibcm_act_rej_stale,
	[IBCM_A_REP] = ibcm_act_rep,
	[IBCM_A_RTU] = ibcm_act_rtu,
	[IBCM_A_MRA] = ibcm_act_mra,
	[IBCM_A_REJ] = ibcm_act_rej,
	[IBCM_A_DREQ] = ibcm_act_dreq,
	[IBCM_A_DREQ_AGAIN] = ibcm_act_dreq_again,
	[IBCM_A_DREP] = ibcm_act_drep,
	[IBCM_A_SIDR_REP] = ibcm_act_sidr_rep,
};

/* A new passive conn from @src, its peer's ID @remote_id; NULL: no memory. */
static struct ibcm_conn *
ibcm_conn_passive(struct ibcm_rx *rx, enum ibcm_state state, uint32_t remote_id, bool sidr)
{
	struct ibcm_conn *c = ibcm_conn_alloc(rx->p, NULL);

	if (c == NULL)
		return NULL;
	c->peer = *rx->src;
	c->sidr = sidr;
	c->state = state;
	c->req_tid = rx->m->hdr.tid;
	if (!sidr)
		ibcm_conn_new_id(c);
	ibcm_conn_set_remote(c, remote_id);
	return c;
}

/* A REQ no conn knows: a new conn on its listener, or REJ "invalid service ID". */
static int
ibcm_rx_new_req(struct ibcm_rx *rx)
{
	const struct drnic_mad_cm_req *req = &rx->m->req;
	struct ibcm_listener *l = ibcm_find_listener(rx->p, req->service_id);
	struct ibcm_conn *c;

	if (req->local_comm_id == 0)
		return -EPROTO;
	if (l == NULL) {
		ibcm_rej_tx(rx->p, rx->src, rx->m->hdr.tid, 0, req->local_comm_id,
			    DRNIC_MAD_CM_MSG_REQ, DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID,
			    NULL, 0, NULL, 0);
		rx->p->stats.rej_no_listener++;
		return 0;
	}
	c = ibcm_conn_passive(rx, IBCM_REQ_RCVD, req->local_comm_id, false);
	if (c == NULL)
		return -ENOMEM;
	c->remote_qpn = req->local_qpn;
	c->max_retries = req->max_cm_retries;
	c->peer_resp_timeout = req->local_cm_resp_timeout;
	ibcm_emit(c, IBCM_EV_REQ_RCVD, rx->src, rx->m, l->user);
	return 0;
}

/* A SIDR_REQ no conn knows: a new conn on its listener, or SIDR_REP status 1. */
static int
ibcm_rx_new_sidr_req(struct ibcm_rx *rx)
{
	const struct drnic_mad_cm_sidr_req *sreq = &rx->m->sidr_req;
	struct ibcm_listener *l = ibcm_find_listener(rx->p, sreq->service_id);
	struct drnic_mad_cm m;
	struct ibcm_conn *c;

	if (l == NULL) {
		ibcm_mad_init(&m, DRNIC_MAD_CM_SIDR_REP, rx->m->hdr.tid);
		m.sidr_rep.request_id = sreq->request_id;
		m.sidr_rep.status = IBCM_SIDR_NO_SERVICE;
		m.sidr_rep.service_id = sreq->service_id;
		ibcm_build_tx(rx->p, rx->src, &m, NULL);
		rx->p->stats.rej_no_listener++;
		return 0;
	}
	c = ibcm_conn_passive(rx, IBCM_SIDR_REQ_RCVD, sreq->request_id, true);
	if (c == NULL)
		return -ENOMEM;
	c->sidr_sid = sreq->service_id;
	ibcm_emit(c, IBCM_EV_SIDR_REQ_RCVD, rx->src, rx->m, l->user);
	return 0;
}

/* The conn a message is about; NULL when none is. */
static struct ibcm_conn *
ibcm_rx_lookup(const struct ibcm_rx *rx)
{
	const struct drnic_mad_cm *m = rx->m;
	struct ibcm_conn *c;

	switch (m->hdr.attr_id) {
	case DRNIC_MAD_CM_REQ:
		return ibcm_find_remote(rx->p, m->req.local_comm_id, &rx->src->gid, false);
	case DRNIC_MAD_CM_SIDR_REQ:
		return ibcm_find_remote(rx->p, m->sidr_req.request_id, &rx->src->gid, true);
	case DRNIC_MAD_CM_SIDR_REP:
		c = ibcm_find_local(rx->p, m->sidr_rep.request_id);
		return c != NULL && c->sidr ? c : NULL;
	case DRNIC_MAD_CM_REJ:
		/* An active side aborting before it knew our ID names only its own. */
		if (m->rej.remote_comm_id == 0)
			return ibcm_find_remote(rx->p, m->rej.local_comm_id, &rx->src->gid, false);
		break;
	default:
		break;
	}
	/* MRA, REJ, REP, RTU, DREQ, DREP: remote_comm_id is at the same place in each. */
	c = ibcm_find_local(rx->p, m->rtu.remote_comm_id);
	return c != NULL && !c->sidr ? c : NULL;
}

/* A DREQ for no conn: the IBA says answer it with a DREP. */
static int
ibcm_rx_stray_dreq(struct ibcm_rx *rx)
{
	ibcm_drep_tx(rx->p, rx->src, rx->m->hdr.tid, rx->m->dreq.remote_comm_id,
		     rx->m->dreq.local_comm_id, NULL, 0);
	rx->p->stats.dup_answered++;
	return 0;
}

static int
ibcm_rx_dispatch(struct ibcm_rx *rx)
{
	uint16_t attr = rx->m->hdr.attr_id;

	if (!rx->m->known || attr < DRNIC_MAD_CM_REQ || attr > DRNIC_MAD_CM_SIDR_REP)
		return -EPROTO;           /* LAP, APR, ClassPortInfo, unknown */
	rx->c = ibcm_rx_lookup(rx);
	if (rx->c == NULL) {
		if (attr == DRNIC_MAD_CM_REQ)
			return ibcm_rx_new_req(rx);
		if (attr == DRNIC_MAD_CM_SIDR_REQ)
			return ibcm_rx_new_sidr_req(rx);
		if (attr == DRNIC_MAD_CM_DREQ)
			return ibcm_rx_stray_dreq(rx);
		return -ENOENT;
	}
	if (!ibcm_gid_eq(&rx->c->peer.gid, &rx->src->gid))
		return -ENOENT;           /* someone else's message for this ID */
	return ibcm_action_fns[ibcm_rx_actions[IBCM_M(attr)][rx->c->state]](rx);
}

int
ibcm_proto_rx(struct ibcm_proto *p, const uint8_t *mad, size_t len,
	      const struct ibcm_peer *src, uint64_t now)
{
	struct drnic_mad_cm m;
	struct ibcm_rx rx = { .p = p, .m = &m, .src = src, .now = now };
	int rc;

	if (p == NULL || mad == NULL || src == NULL)
		return -EINVAL;
	if (drnic_mad_cm_parse(mad, len, &m) != 0 ||
	    m.hdr.class_version != DRNIC_MAD_CM_CLASS_VERSION ||
	    m.hdr.method != DRNIC_MAD_METHOD_SEND || m.hdr.r != 0) {
		p->stats.dropped++;
		return -EINVAL;
	}
	if (m.hdr.attr_id >= DRNIC_MAD_CM_REQ &&
	    m.hdr.attr_id - DRNIC_MAD_CM_REQ < (int)RTE_DIM(p->stats.rx))
		p->stats.rx[m.hdr.attr_id - DRNIC_MAD_CM_REQ]++;
	ibcm_enter(p);
	rc = ibcm_rx_dispatch(&rx);
	if (rc < 0)
		p->stats.dropped++;
	ibcm_leave(p);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Timers                                                                    */
/* ------------------------------------------------------------------------ */

/* c->msg was resent as often as it may be: give up on it. */
static void
ibcm_retries_exhausted(struct ibcm_conn *c, uint64_t now)
{
	enum ibcm_state s = c->state;

	c->p->stats.timeouts++;
	ibcm_timer_stop(c);
	switch (s) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
		ibcm_rej_timeout_tx(c, DRNIC_MAD_CM_MSG_OTHER, c->req_tid);
		ibcm_conn_idle(c);
		ibcm_emit_timeout(c, DRNIC_MAD_CM_REQ);
		break;
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		ibcm_rej_timeout_tx(c, DRNIC_MAD_CM_MSG_OTHER, c->req_tid);
		ibcm_conn_idle(c);
		ibcm_emit_timeout(c, DRNIC_MAD_CM_REP);
		break;
	case IBCM_DREQ_SENT:
		ibcm_conn_timewait(c, now);
		ibcm_emit_timeout(c, DRNIC_MAD_CM_DREQ);
		break;
	case IBCM_SIDR_REQ_SENT:
		ibcm_conn_idle(c);
		ibcm_emit_timeout(c, DRNIC_MAD_CM_SIDR_REQ);
		break;
	default:
		break;
	}
}

/* @c's timer of @kind fired at @now (the timer is stopped already). */
static void
ibcm_timer_fire(struct ibcm_conn *c, enum ibcm_timer_kind kind, uint64_t now)
{
	if (kind == IBCM_TIMER_TIMEWAIT) {
		ibcm_conn_idle(c);
		ibcm_emit(c, IBCM_EV_TIMEWAIT_EXIT, NULL, NULL, NULL);
		return;
	}
	if (c->retries_left == 0) {
		ibcm_retries_exhausted(c, now);
		return;
	}
	c->retries_left--;
	c->p->stats.retransmits++;
	ibcm_tx(c->p, &c->peer, c->msg);
	ibcm_timer_start(c, IBCM_TIMER_RESEND, now + c->resend_ns);
}

void
ibcm_proto_timer(struct ibcm_proto *p, uint64_t now)
{
	unsigned int n;

	if (p == NULL)
		return;
	ibcm_enter(p);
	for (n = 0; n < IBCM_TIMER_BUDGET && p->heap_len > 0 &&
	     p->heap[0]->deadline <= now; n++) {
		struct ibcm_conn *c = p->heap[0];
		enum ibcm_timer_kind kind = c->timer;

		ibcm_timer_stop(c);
		ibcm_timer_fire(c, kind, now);
	}
	ibcm_leave(p);
}

uint64_t
ibcm_proto_next_timer(const struct ibcm_proto *p)
{
	return p != NULL && p->heap_len > 0 ? p->heap[0]->deadline : UINT64_MAX;
}

/* ------------------------------------------------------------------------ */
/* Instance and listeners                                                    */
/* ------------------------------------------------------------------------ */

const char *
ibcm_state_str(enum ibcm_state s)
{
	if ((unsigned int)s >= IBCM_STATE_COUNT || ibcm_state_names[s] == NULL)
		return "unknown";
	return ibcm_state_names[s];
}

void
ibcm_proto_cfg_default(struct ibcm_proto_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cm_response_timeout = 20;
	cfg->max_cm_retries = 15;
	cfg->packet_life_time = 16;
}

struct ibcm_proto *
ibcm_proto_create(const struct ibcm_proto_cfg *cfg, const struct ibcm_proto_ops *ops,
		  void *ctx)
{
	struct ibcm_proto *p;

	if (cfg == NULL || ops == NULL || ops->send == NULL || ops->event == NULL ||
	    cfg->cm_response_timeout > 31 || cfg->max_cm_retries > 15 ||
	    cfg->packet_life_time > 31) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rte_errno = errno = ENOMEM;
		return NULL;
	}
	p->cfg = *cfg;
	p->ops = *ops;
	p->ctx = ctx;
	p->next_comm_id = cfg->comm_id_seed;
	TAILQ_INIT(&p->conns);
	TAILQ_INIT(&p->zombies);
	return p;
}

void
ibcm_proto_destroy(struct ibcm_proto *p)
{
	struct ibcm_conn *c;
	unsigned int i;

	if (p == NULL)
		return;
	while ((c = TAILQ_FIRST(&p->conns)) != NULL) {
		TAILQ_REMOVE(&p->conns, c, link);
		free(c);
	}
	for (i = 0; i < IBCM_HASH_SIZE; i++) {
		struct ibcm_hnode *n = p->listeners.bucket[i];

		while (n != NULL) {
			struct ibcm_hnode *next = n->next;

			free(container_of(n, struct ibcm_listener, node));
			n = next;
		}
	}
	free(p->heap);
	free(p);
}

void
ibcm_proto_stats_get(const struct ibcm_proto *p, struct ibcm_proto_stats *st)
{
	*st = p->stats;
}

int
ibcm_proto_listen(struct ibcm_proto *p, uint64_t service_id, void *user)
{
	struct ibcm_listener *l;

	if (ibcm_find_listener(p, service_id) != NULL)
		return -EADDRINUSE;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->user = user;
	ibcm_htab_add(&p->listeners, &l->node, service_id);
	return 0;
}

int
ibcm_proto_unlisten(struct ibcm_proto *p, uint64_t service_id)
{
	struct ibcm_listener *l = ibcm_find_listener(p, service_id);

	if (l == NULL)
		return -ENOENT;
	ibcm_htab_del(&p->listeners, &l->node);
	free(l);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The consumer's calls                                                      */
/* ------------------------------------------------------------------------ */

#define IBCM_S(s) (1u << (s))

/* The consumer's calls, and the states each is valid in. */
enum ibcm_op {
	IBCM_OP_REQ,
	IBCM_OP_REP,
	IBCM_OP_RTU,
	IBCM_OP_REJ,
	IBCM_OP_MRA,
	IBCM_OP_DREQ,
	IBCM_OP_DREP,
	IBCM_OP_ESTABLISHED,
	IBCM_OP_SIDR_REQ,
	IBCM_OP_SIDR_REP,
	IBCM_OP_COUNT,
};

static const uint32_t ibcm_op_states[IBCM_OP_COUNT] = {
	[IBCM_OP_REQ] = IBCM_S(IBCM_IDLE),
	[IBCM_OP_REP] = IBCM_S(IBCM_REQ_RCVD) | IBCM_S(IBCM_MRA_REQ_SENT),
	[IBCM_OP_RTU] = IBCM_S(IBCM_REP_RCVD) | IBCM_S(IBCM_MRA_REP_SENT),
	[IBCM_OP_REJ] = IBCM_S(IBCM_REQ_RCVD) | IBCM_S(IBCM_MRA_REQ_SENT) |
			IBCM_S(IBCM_REP_RCVD) | IBCM_S(IBCM_MRA_REP_SENT) |
			IBCM_S(IBCM_REQ_SENT) | IBCM_S(IBCM_MRA_REQ_RCVD) |
			IBCM_S(IBCM_REP_SENT) | IBCM_S(IBCM_MRA_REP_RCVD),
	[IBCM_OP_MRA] = IBCM_S(IBCM_REQ_RCVD) | IBCM_S(IBCM_MRA_REQ_SENT) |
			IBCM_S(IBCM_REP_RCVD) | IBCM_S(IBCM_MRA_REP_SENT),
	[IBCM_OP_DREQ] = IBCM_S(IBCM_ESTABLISHED) | IBCM_S(IBCM_DREQ_RCVD),
	[IBCM_OP_DREP] = IBCM_S(IBCM_DREQ_RCVD),
	[IBCM_OP_ESTABLISHED] = IBCM_S(IBCM_REP_SENT) | IBCM_S(IBCM_MRA_REP_RCVD),
	[IBCM_OP_SIDR_REQ] = IBCM_S(IBCM_IDLE),
	[IBCM_OP_SIDR_REP] = IBCM_S(IBCM_SIDR_REQ_RCVD),
};

static bool
ibcm_op_ok(const struct ibcm_conn *c, enum ibcm_op op)
{
	return c != NULL && (ibcm_op_states[op] & IBCM_S(c->state)) != 0;
}

/* Whether the conn's state is one of the masked ones. */
static bool
ibcm_in(const struct ibcm_conn *c, uint32_t mask)
{
	return (mask & IBCM_S(c->state)) != 0;
}

struct ibcm_conn *
ibcm_conn_create(struct ibcm_proto *p, void *user)
{
	struct ibcm_conn *c = p != NULL ? ibcm_conn_alloc(p, user) : NULL;

	if (c == NULL)
		rte_errno = errno = p != NULL ? ENOMEM : EINVAL;
	return c;
}

void *
ibcm_conn_user(const struct ibcm_conn *conn)
{
	return conn->user;
}

void
ibcm_conn_set_user(struct ibcm_conn *conn, void *user)
{
	conn->user = user;
}

enum ibcm_state
ibcm_conn_state(const struct ibcm_conn *conn)
{
	return conn->state;
}

uint32_t
ibcm_conn_local_id(const struct ibcm_conn *conn)
{
	return conn->local_id;
}

uint32_t
ibcm_conn_remote_id(const struct ibcm_conn *conn)
{
	return conn->remote_id;
}

const struct ibcm_peer *
ibcm_conn_peer(const struct ibcm_conn *conn)
{
	return &conn->peer;
}

int
ibcm_send_req(struct ibcm_conn *c, const struct ibcm_peer *dst,
	      const struct drnic_mad_cm_req *req, uint64_t now)
{
	struct drnic_mad_cm m;

	if (!ibcm_op_ok(c, IBCM_OP_REQ) || dst == NULL || req == NULL)
		return -EINVAL;
	ibcm_mad_init(&m, DRNIC_MAD_CM_REQ, ibcm_new_tid(c->p));
	m.req = *req;
	if (m.req.local_ca_guid == 0)
		m.req.local_ca_guid = c->p->cfg.ca_guid;
	m.req.local_comm_id = 1;       /* a placeholder until the build succeeded */
	if (drnic_mad_cm_build(&m, c->msg, sizeof(c->msg)) != 0)
		return -EINVAL;
	ibcm_conn_new_id(c);
	m.req.local_comm_id = c->local_id;
	drnic_mad_cm_build(&m, c->msg, sizeof(c->msg));
	c->active = true;
	c->sidr = false;
	c->ans_valid = false;
	c->peer = *dst;
	c->remote_id = 0;
	c->req_tid = m.hdr.tid;
	c->local_qpn = req->local_qpn;
	c->max_retries = req->max_cm_retries;
	c->state = IBCM_REQ_SENT;
	ibcm_msg_start(c, ibcm_resend_ns(c->p, req->remote_cm_resp_timeout),
		       req->max_cm_retries, now);
	return 0;
}

int
ibcm_send_rep(struct ibcm_conn *c, const struct drnic_mad_cm_rep *rep, uint64_t now)
{
	struct drnic_mad_cm m;

	if (!ibcm_op_ok(c, IBCM_OP_REP) || rep == NULL)
		return -EINVAL;
	ibcm_mad_init(&m, DRNIC_MAD_CM_REP, c->req_tid);
	m.rep = *rep;
	m.rep.local_comm_id = c->local_id;
	m.rep.remote_comm_id = c->remote_id;
	if (m.rep.local_ca_guid == 0)
		m.rep.local_ca_guid = c->p->cfg.ca_guid;
	if (drnic_mad_cm_build(&m, c->msg, sizeof(c->msg)) != 0)
		return -EINVAL;
	c->rep_tid = m.hdr.tid;
	c->local_qpn = rep->local_qpn;
	c->state = IBCM_REP_SENT;
	ibcm_msg_start(c, ibcm_resend_ns(c->p, c->peer_resp_timeout), c->max_retries, now);
	return 0;
}

int
ibcm_send_rtu(struct ibcm_conn *c, const void *pdata, size_t len, uint64_t now)
{
	struct drnic_mad_cm m;

	RTE_SET_USED(now);
	if (!ibcm_op_ok(c, IBCM_OP_RTU))
		return -EINVAL;
	ibcm_mad_init(&m, DRNIC_MAD_CM_RTU, c->rep_tid);
	m.rtu.local_comm_id = c->local_id;
	m.rtu.remote_comm_id = c->remote_id;
	if (ibcm_pdata(m.rtu.private_data, sizeof(m.rtu.private_data), pdata, len) != 0 ||
	    ibcm_build_tx(c->p, &c->peer, &m, c->ans) != 0)
		return -EINVAL;
	c->ans_valid = true;
	c->state = IBCM_ESTABLISHED;
	return 0;
}

int
ibcm_send_rej(struct ibcm_conn *c, uint16_t reason, const void *ari, size_t ari_len,
	      const void *pdata, size_t len, uint64_t now)
{
	uint32_t rcvd_req = IBCM_S(IBCM_REQ_RCVD) | IBCM_S(IBCM_MRA_REQ_SENT);
	uint32_t rcvd_rep = IBCM_S(IBCM_REP_RCVD) | IBCM_S(IBCM_MRA_REP_SENT);
	uint32_t before_rep = rcvd_req | IBCM_S(IBCM_REQ_SENT) | IBCM_S(IBCM_MRA_REQ_RCVD);
	uint8_t msg;
	int rc;

	if (!ibcm_op_ok(c, IBCM_OP_REJ) || ari_len > DRNIC_MAD_CM_ARI_LEN)
		return -EINVAL;
	msg = ibcm_in(c, rcvd_req) ? DRNIC_MAD_CM_MSG_REQ :
	      ibcm_in(c, rcvd_rep) ? DRNIC_MAD_CM_MSG_REP : DRNIC_MAD_CM_MSG_OTHER;
	rc = ibcm_rej_tx(c->p, &c->peer, ibcm_in(c, rcvd_rep) ? c->rep_tid : c->req_tid,
			 c->local_id, c->remote_id, msg, reason, ari, ari_len, pdata, len);
	if (rc != 0)
		return rc;
	if (ibcm_in(c, before_rep))
		ibcm_conn_idle(c);
	else
		ibcm_conn_timewait(c, now);
	return 0;
}

int
ibcm_send_mra(struct ibcm_conn *c, uint8_t service_timeout, const void *pdata, size_t len,
	      uint64_t now)
{
	bool for_req = c != NULL && ibcm_in(c, IBCM_S(IBCM_REQ_RCVD) | IBCM_S(IBCM_MRA_REQ_SENT));
	struct drnic_mad_cm m;

	RTE_SET_USED(now);
	if (!ibcm_op_ok(c, IBCM_OP_MRA) || service_timeout > 31)
		return -EINVAL;
	ibcm_mad_init(&m, DRNIC_MAD_CM_MRA, for_req ? c->req_tid : c->rep_tid);
	m.mra.local_comm_id = c->local_id;
	m.mra.remote_comm_id = c->remote_id;
	m.mra.msg_mraed = for_req ? DRNIC_MAD_CM_MSG_REQ : DRNIC_MAD_CM_MSG_REP;
	m.mra.service_timeout = service_timeout;
	if (ibcm_pdata(m.mra.private_data, sizeof(m.mra.private_data), pdata, len) != 0 ||
	    ibcm_build_tx(c->p, &c->peer, &m, c->ans) != 0)
		return -EINVAL;
	c->ans_valid = true;
	c->state = for_req ? IBCM_MRA_REQ_SENT : IBCM_MRA_REP_SENT;
	return 0;
}

int
ibcm_send_dreq(struct ibcm_conn *c, const void *pdata, size_t len, uint64_t now)
{
	struct drnic_mad_cm m;
	struct ibcm_proto *p;

	if (!ibcm_op_ok(c, IBCM_OP_DREQ))
		return -EINVAL;
	if (c->state == IBCM_DREQ_RCVD)
		return ibcm_send_drep(c, pdata, len, now);
	p = c->p;
	ibcm_mad_init(&m, DRNIC_MAD_CM_DREQ, ibcm_new_tid(p));
	m.dreq.local_comm_id = c->local_id;
	m.dreq.remote_comm_id = c->remote_id;
	m.dreq.remote_qpn = c->remote_qpn;
	if (ibcm_pdata(m.dreq.private_data, sizeof(m.dreq.private_data), pdata, len) != 0 ||
	    drnic_mad_cm_build(&m, c->msg, sizeof(c->msg)) != 0)
		return -EINVAL;
	c->dreq_tid = m.hdr.tid;
	c->state = IBCM_DREQ_SENT;
	ibcm_msg_start(c, ibcm_resend_ns(p, p->cfg.cm_response_timeout), c->max_retries, now);
	return 0;
}

int
ibcm_send_drep(struct ibcm_conn *c, const void *pdata, size_t len, uint64_t now)
{
	int rc;

	if (!ibcm_op_ok(c, IBCM_OP_DREP))
		return -EINVAL;
	rc = ibcm_drep_tx(c->p, &c->peer, c->dreq_tid, c->local_id, c->remote_id, pdata, len);
	if (rc != 0)
		return rc;
	ibcm_conn_timewait(c, now);
	return 0;
}

int
ibcm_conn_established(struct ibcm_conn *c, uint64_t now)
{
	RTE_SET_USED(now);
	if (!ibcm_op_ok(c, IBCM_OP_ESTABLISHED))
		return -EINVAL;
	ibcm_timer_stop(c);
	c->state = IBCM_ESTABLISHED;
	return 0;
}

int
ibcm_send_sidr_req(struct ibcm_conn *c, const struct ibcm_peer *dst,
		   const struct drnic_mad_cm_sidr_req *req, uint64_t now)
{
	struct drnic_mad_cm m;
	struct ibcm_proto *p;

	if (!ibcm_op_ok(c, IBCM_OP_SIDR_REQ) || dst == NULL || req == NULL)
		return -EINVAL;
	p = c->p;
	ibcm_mad_init(&m, DRNIC_MAD_CM_SIDR_REQ, ibcm_new_tid(p));
	m.sidr_req = *req;
	if (drnic_mad_cm_build(&m, c->msg, sizeof(c->msg)) != 0)
		return -EINVAL;
	ibcm_conn_new_id(c);
	m.sidr_req.request_id = c->local_id;
	drnic_mad_cm_build(&m, c->msg, sizeof(c->msg));
	c->active = true;
	c->sidr = true;
	c->peer = *dst;
	c->req_tid = m.hdr.tid;
	c->state = IBCM_SIDR_REQ_SENT;
	ibcm_msg_start(c, ibcm_resend_ns(p, p->cfg.cm_response_timeout), p->cfg.max_cm_retries,
		       now);
	return 0;
}

int
ibcm_send_sidr_rep(struct ibcm_conn *c, const struct drnic_mad_cm_sidr_rep *rep, uint64_t now)
{
	struct drnic_mad_cm m;

	RTE_SET_USED(now);
	if (!ibcm_op_ok(c, IBCM_OP_SIDR_REP) || rep == NULL)
		return -EINVAL;
	ibcm_mad_init(&m, DRNIC_MAD_CM_SIDR_REP, c->req_tid);
	m.sidr_rep = *rep;
	m.sidr_rep.request_id = c->remote_id;
	if (m.sidr_rep.service_id == 0)
		m.sidr_rep.service_id = c->sidr_sid;
	if (ibcm_build_tx(c->p, &c->peer, &m, NULL) != 0)
		return -EINVAL;
	ibcm_conn_idle(c);
	return 0;
}

void
ibcm_conn_destroy(struct ibcm_conn *c, uint64_t now)
{
	struct ibcm_proto *p;

	if (c == NULL || c->destroyed)
		return;
	p = c->p;
	ibcm_enter(p);
	c->destroyed = true;
	switch (c->state) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
		ibcm_rej_timeout_tx(c, DRNIC_MAD_CM_MSG_OTHER, c->req_tid);
		ibcm_conn_idle(c);
		break;
	case IBCM_REQ_RCVD:
	case IBCM_MRA_REQ_SENT:
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
	case IBCM_REP_RCVD:
	case IBCM_MRA_REP_SENT:
		ibcm_send_rej(c, DRNIC_MAD_CM_REJ_CONSUMER_REJECT, NULL, 0, NULL, 0, now);
		break;
	case IBCM_ESTABLISHED:
	case IBCM_DREQ_RCVD:
		ibcm_send_dreq(c, NULL, 0, now);
		break;
	case IBCM_SIDR_REQ_RCVD: {
		struct drnic_mad_cm_sidr_rep rep = { .status = IBCM_SIDR_REJECT };

		ibcm_send_sidr_rep(c, &rep, now);
		break;
	}
	case IBCM_DREQ_SENT:
	case IBCM_TIMEWAIT:
		break;                  /* finishes on its own */
	default:
		ibcm_conn_idle(c);
		break;
	}
	ibcm_leave(p);
}
