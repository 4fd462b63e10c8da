/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/ibcm/ibcm_proto.c: two protocol instances, A and B,
 * wired back to back through a MAD queue the tests deliver, drop, duplicate
 * or hold back, on a fake clock. Every sent MAD is parsed back with the
 * codec and its fields checked; states, events and counters are asserted
 * after each step. The REQ of a real Linux (rxe, kernel 6.1) rdma_cm
 * connection from the services capture is answered by a listener too.
 * No EAL: the protocol is pure.
 */
#include "lib/ibcm/ibcm_proto.c"

#include "ut_common.h"
#include "../../wire/wire_ut.h"

#define UT_SID      0x0000000001064E20ull   /* RDMA CM TCP port 20000 */
#define UT_SID2     0x0000000001064E21ull
#define UT_QMAX     64
#define UT_EVMAX    128
#define UT_LIFE     4                       /* packet life exponent */
#define UT_RESP     7                       /* cfg.cm_response_timeout */
#define UT_REQ_RCRT 10                      /* REQ remote_cm_resp_timeout */
#define UT_REQ_LCRT 12                      /* REQ local_cm_resp_timeout */
#define UT_RETRIES  3                       /* REQ max_cm_retries */
#define UT_NS(x)    (4096ull << (x))
#define UT_REQ_T    (UT_NS(UT_REQ_RCRT) + 2 * UT_NS(UT_LIFE))
#define UT_REP_T    (UT_NS(UT_REQ_LCRT) + 2 * UT_NS(UT_LIFE))
#define UT_DREQ_T   (UT_NS(UT_RESP) + 2 * UT_NS(UT_LIFE))
#define UT_TW       1000000ull              /* 4.096 us * 2^5 < 1 ms: the minimum */
#define UT_QPN_A    0x000111
#define UT_QPN_B    0x000222

/* What a callback does with the conn of the event, to test re-entry. */
enum ut_cb {
	UT_CB_NONE,
	UT_CB_REJ,       /* ibcm_send_rej() at once */
	UT_CB_DESTROY,   /* ibcm_conn_destroy() at once */
	UT_CB_REP,       /* ibcm_send_rep() at once */
};

struct ut_ev {
	enum ibcm_event_type type;
	struct ibcm_conn *conn;
	void *listen_user;
	struct ibcm_peer peer;
	uint16_t timed_out;
	bool has_mad;
	struct drnic_mad_cm mad;
	enum ibcm_state state;    /* the conn's state when the event came */
};

struct ut_node {
	struct ibcm_proto *p;
	union drnic_gid gid;
	struct ut_ev ev[UT_EVMAX];
	unsigned int n_ev;
	enum ut_cb on_req;        /* for IBCM_EV_REQ_RCVD */
	enum ut_cb on_timeout;    /* for IBCM_EV_TIMEOUT: UT_CB_DESTROY */
	int send_rc;              /* what ops.send returns */
};

struct ut_mad {
	uint8_t b[DRNIC_MAD_LEN];
	struct ibcm_peer dst;
	unsigned int from;
};

static struct ut_node ut_n[2];
static struct ut_mad ut_q[UT_QMAX];
static unsigned int ut_nq;
static uint64_t ut_now;
static const union drnic_gid ut_gid_evil = { .raw = { 0xFE, 0x80, [15] = 0xEE } };

#define A (&ut_n[0])
#define B (&ut_n[1])

static int
ut_send(void *ctx, const struct ibcm_peer *dst, const uint8_t *mad)
{
	struct ut_node *n = ctx;

	if (n->send_rc != 0)
		return n->send_rc;
	CU_ASSERT_FATAL(ut_nq < UT_QMAX);
	memcpy(ut_q[ut_nq].b, mad, DRNIC_MAD_LEN);
	ut_q[ut_nq].dst = *dst;
	ut_q[ut_nq].from = (unsigned int)(n - ut_n);
	ut_nq++;
	return 0;
}

static void ut_req_fill(struct drnic_mad_cm_req *r, uint64_t sid);

static void
ut_event(void *ctx, const struct ibcm_event *ev)
{
	struct ut_node *n = ctx;
	struct ut_ev *e;

	CU_ASSERT_FATAL(n->n_ev < UT_EVMAX);
	e = &n->ev[n->n_ev++];
	memset(e, 0, sizeof(*e));
	e->type = ev->type;
	e->conn = ev->conn;
	e->listen_user = ev->listen_user;
	e->peer = ev->peer;
	e->timed_out = ev->timed_out;
	e->has_mad = ev->mad != NULL;
	if (ev->mad != NULL)
		e->mad = *ev->mad;
	e->state = ibcm_conn_state(ev->conn);
	if (ev->type == IBCM_EV_REQ_RCVD && n->on_req == UT_CB_REJ)
		CU_ASSERT_EQUAL(ibcm_send_rej(ev->conn, DRNIC_MAD_CM_REJ_CONSUMER_REJECT, NULL, 0,
					      "no", 2, ut_now), 0);
	if (ev->type == IBCM_EV_REQ_RCVD && n->on_req == UT_CB_DESTROY)
		ibcm_conn_destroy(ev->conn, ut_now);
	if (ev->type == IBCM_EV_REQ_RCVD && n->on_req == UT_CB_REP) {
		struct drnic_mad_cm_rep rep = { .local_qpn = UT_QPN_B, .starting_psn = 7 };

		CU_ASSERT_EQUAL(ibcm_send_rep(ev->conn, &rep, ut_now), 0);
	}
	if (ev->type == IBCM_EV_TIMEOUT && n->on_timeout == UT_CB_DESTROY)
		ibcm_conn_destroy(ev->conn, ut_now);
}

static const struct ibcm_proto_ops ut_ops = { .send = ut_send, .event = ut_event };

static struct ibcm_peer
ut_peer(const struct ut_node *to, const struct ut_node *from)
{
	struct ibcm_peer pr = { .gid = to->gid, .local_gid = from->gid, .qpn = 1 };

	return pr;
}

static void
ut_setup(void)
{
	struct ibcm_proto_cfg cfg;
	unsigned int i;

	memset(ut_n, 0, sizeof(ut_n));
	ut_nq = 0;
	ut_now = 1000;
	for (i = 0; i < 2; i++) {
		ibcm_proto_cfg_default(&cfg);
		cfg.ca_guid = i == 0 ? 0xA0A1A2A3A4A5A6A7ull : 0xB0B1B2B3B4B5B6B7ull;
		cfg.comm_id_seed = i == 0 ? 0x1000 : 0x2000;
		cfg.tid_seed = i == 0 ? 0xAAAA : 0xBBBB;
		cfg.cm_response_timeout = UT_RESP;
		cfg.max_cm_retries = 2;
		cfg.packet_life_time = UT_LIFE;
		ut_n[i].gid.raw[0] = 0xFE;
		ut_n[i].gid.raw[1] = 0x80;
		ut_n[i].gid.raw[15] = (uint8_t)(0x0A + i);
		ut_n[i].p = ibcm_proto_create(&cfg, &ut_ops, &ut_n[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ut_n[i].p);
	}
}

static void
ut_teardown(void)
{
	ibcm_proto_destroy(A->p);
	ibcm_proto_destroy(B->p);
}

/* A MAD we sent, parsed; its CM header checked. */
static struct drnic_mad_cm
ut_q_parse_bytes(const uint8_t *b)
{
	struct drnic_mad_cm m;

	CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_parse(b, DRNIC_MAD_LEN, &m), 0);
	/* Every message we send has the CM header of IBA 12.6.1. */
	CU_ASSERT_EQUAL(m.hdr.base_version, 1);
	CU_ASSERT_EQUAL(m.hdr.mgmt_class, 0x07);
	CU_ASSERT_EQUAL(m.hdr.class_version, 2);
	CU_ASSERT_EQUAL(m.hdr.r, 0);
	CU_ASSERT_EQUAL(m.hdr.method, DRNIC_MAD_METHOD_SEND);
	CU_ASSERT_EQUAL(m.hdr.status, 0);
	CU_ASSERT_EQUAL(m.hdr.attr_mod, 0);
	CU_ASSERT(m.known);
	return m;
}

/* The parsed MAD queued at @i. */
static struct drnic_mad_cm
ut_q_parse(unsigned int i)
{
	CU_ASSERT_FATAL(i < ut_nq);
	return ut_q_parse_bytes(ut_q[i].b);
}

/* Remove queue entry @i. */
static void
ut_q_remove(unsigned int i)
{
	CU_ASSERT_FATAL(i < ut_nq);
	memmove(&ut_q[i], &ut_q[i + 1], (ut_nq - i - 1) * sizeof(ut_q[0]));
	ut_nq--;
}

/* The head of the queue is @attr from @from: parse and drop it (lost). */
static struct drnic_mad_cm
ut_take(const struct ut_node *from, uint16_t attr)
{
	struct drnic_mad_cm m = ut_q_parse(0);

	CU_ASSERT_EQUAL(m.hdr.attr_id, attr);
	CU_ASSERT_EQUAL(ut_q[0].from, (unsigned int)(from - ut_n));
	CU_ASSERT(memcmp(ut_q[0].dst.gid.raw, ut_n[1 - ut_q[0].from].gid.raw, 16) == 0);
	CU_ASSERT_EQUAL(ut_q[0].dst.qpn, 1);
	ut_q_remove(0);
	return m;
}

/* Deliver raw bytes to @to as if from @from's GID. */
static int
ut_rx_from(struct ut_node *to, const uint8_t *b, const union drnic_gid *from)
{
	struct ibcm_peer src = { .gid = *from, .local_gid = to->gid, .qpn = 1 };

	return ibcm_proto_rx(to->p, b, DRNIC_MAD_LEN, &src, ut_now);
}

/* Deliver the head of the queue (@attr) to its destination; its rc. */
static int
ut_deliver(uint16_t attr)
{
	struct ut_mad mad;

	CU_ASSERT_FATAL(ut_nq > 0);
	CU_ASSERT_EQUAL(ut_q_parse(0).hdr.attr_id, attr);
	mad = ut_q[0];
	ut_q_remove(0);
	return ut_rx_from(&ut_n[1 - mad.from], mad.b, &ut_n[mad.from].gid);
}

/* Move the clock to @t and run both instances' timers. */
static void
ut_advance(uint64_t t)
{
	ut_now = t;
	ibcm_proto_timer(A->p, t);
	ibcm_proto_timer(B->p, t);
}

static struct ibcm_proto_stats
ut_stats(const struct ut_node *n)
{
	struct ibcm_proto_stats st;

	ibcm_proto_stats_get(n->p, &st);
	return st;
}

#define UT_RX(n, attr) (ut_stats(n).rx[(attr) - DRNIC_MAD_CM_REQ])
#define UT_TX(n, attr) (ut_stats(n).tx[(attr) - DRNIC_MAD_CM_REQ])

static void
ut_req_fill(struct drnic_mad_cm_req *r, uint64_t sid)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->service_id = sid;
	r->local_qkey = 0;
	r->local_qpn = UT_QPN_A;
	r->responder_resources = 4;
	r->initiator_depth = 3;
	r->remote_cm_resp_timeout = UT_REQ_RCRT;
	r->starting_psn = 0xABCDEF;
	r->local_cm_resp_timeout = UT_REQ_LCRT;
	r->retry_count = 7;
	r->pkey = 0xFFFF;
	r->path_mtu = 3;
	r->rnr_retry_count = 6;
	r->max_cm_retries = UT_RETRIES;
	r->primary.local_lid = 0xFFFF;
	r->primary.remote_lid = 0xFFFF;
	memcpy(r->primary.local_gid, A->gid.raw, 16);
	memcpy(r->primary.remote_gid, B->gid.raw, 16);
	r->primary.hop_limit = 64;
	r->primary.local_ack_timeout = 14;
	for (i = 0; i < sizeof(r->private_data); i++)
		r->private_data[i] = (uint8_t)(i * 7 + 1);
}

static struct ut_ev *
ut_last_ev(struct ut_node *n)
{
	CU_ASSERT_FATAL(n->n_ev > 0);
	return &n->ev[n->n_ev - 1];
}

/* A sends a REQ to B on UT_SID at ut_now; the conn. */
static struct ibcm_conn *
ut_connect(void)
{
	struct drnic_mad_cm_req req;
	struct ibcm_peer dst = ut_peer(B, A);
	struct ibcm_conn *c = ibcm_conn_create(A->p, A);

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	ut_req_fill(&req, UT_SID);
	CU_ASSERT_EQUAL_FATAL(ibcm_send_req(c, &dst, &req, ut_now), 0);
	return c;
}

static struct drnic_mad_cm_rep
ut_rep_fill(void)
{
	struct drnic_mad_cm_rep rep = {
		.local_qpn = UT_QPN_B, .starting_psn = 0x123456, .responder_resources = 3,
		.initiator_depth = 4, .target_ack_delay = 5, .rnr_retry_count = 7,
	};

	memset(rep.private_data, 0x5C, sizeof(rep.private_data));
	return rep;
}

/* A REQ delivered to B, which is listening: B's new conn (REQ_RCVD). */
static struct ibcm_conn *
ut_req_to_b(void)
{
	CU_ASSERT_EQUAL_FATAL(ut_deliver(DRNIC_MAD_CM_REQ), 0);
	CU_ASSERT_EQUAL_FATAL(ut_last_ev(B)->type, IBCM_EV_REQ_RCVD);
	return ut_last_ev(B)->conn;
}

/* B listens, A's REQ reached it: A in REQ_SENT (*@a), B in REQ_RCVD (*@b). */
static void
ut_req_rcvd(struct ibcm_conn **a, struct ibcm_conn **b)
{
	CU_ASSERT_EQUAL_FATAL(ibcm_proto_listen(B->p, UT_SID, B), 0);
	*a = ut_connect();
	*b = ut_req_to_b();
}

/* Then B's REP reached A: A in REP_RCVD, B in REP_SENT. */
static void
ut_rep_rcvd(struct ibcm_conn **a, struct ibcm_conn **b)
{
	struct drnic_mad_cm_rep rep = ut_rep_fill();

	ut_req_rcvd(a, b);
	CU_ASSERT_EQUAL_FATAL(ibcm_send_rep(*b, &rep, ut_now), 0);
	CU_ASSERT_EQUAL_FATAL(ut_deliver(DRNIC_MAD_CM_REP), 0);
	CU_ASSERT_EQUAL_FATAL(ibcm_conn_state(*a), IBCM_REP_RCVD);
}

/* Both established through REQ, REP, RTU; *@a and *@b the conns. */
static void
ut_establish(struct ibcm_conn **a, struct ibcm_conn **b)
{
	ut_rep_rcvd(a, b);
	CU_ASSERT_EQUAL_FATAL(ibcm_send_rtu(*a, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL_FATAL(ut_deliver(DRNIC_MAD_CM_RTU), 0);
	CU_ASSERT_EQUAL_FATAL(ibcm_conn_state(*a), IBCM_ESTABLISHED);
	CU_ASSERT_EQUAL_FATAL(ibcm_conn_state(*b), IBCM_ESTABLISHED);
	A->n_ev = B->n_ev = 0;
}

/* ------------------------------------------------------------------------ */

static void
test_state_names(void)
{
	ut_check_name_table(ibcm_state_names, IBCM_STATE_COUNT);
	CU_ASSERT_STRING_EQUAL(ibcm_state_str(IBCM_REQ_SENT), "req_sent");
	CU_ASSERT_STRING_EQUAL(ibcm_state_str(IBCM_STATE_COUNT), "unknown");
	CU_ASSERT_STRING_EQUAL(ibcm_state_str((enum ibcm_state)-1), "unknown");
}

static void
test_create_errors(void)
{
	struct ibcm_proto_cfg cfg;
	struct ibcm_proto_ops no_event = { .send = ut_send };

	ibcm_proto_cfg_default(&cfg);
	CU_ASSERT_EQUAL(cfg.cm_response_timeout, 20);
	CU_ASSERT_EQUAL(cfg.max_cm_retries, 15);
	CU_ASSERT_EQUAL(cfg.packet_life_time, 16);
	CU_ASSERT_PTR_NULL(ibcm_proto_create(&cfg, &no_event, NULL));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	cfg.max_cm_retries = 16;
	CU_ASSERT_PTR_NULL(ibcm_proto_create(&cfg, &ut_ops, NULL));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	ut_setup();
	CU_ASSERT_EQUAL(ibcm_proto_listen(A->p, UT_SID, NULL), 0);
	CU_ASSERT_EQUAL(ibcm_proto_listen(A->p, UT_SID, NULL), -EADDRINUSE);
	CU_ASSERT_EQUAL(ibcm_proto_unlisten(A->p, UT_SID), 0);
	CU_ASSERT_EQUAL(ibcm_proto_unlisten(A->p, UT_SID), -ENOENT);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);
	ut_teardown();
}

/* REQ, REP, RTU, DREQ, DREP and time-wait, every field on the wire. */
static void
test_handshake(void)
{
	struct drnic_mad_cm_req req;
	struct drnic_mad_cm_rep rep = ut_rep_fill();
	struct drnic_mad_cm m;
	struct ibcm_conn *a, *b;
	struct ut_ev *e;
	uint64_t tid;
	uint8_t pd[4] = { 1, 2, 3, 4 };

	ut_setup();
	CU_ASSERT_EQUAL(ibcm_proto_listen(B->p, UT_SID, (void *)0x5151), 0);
	a = ut_connect();
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REQ_SENT);
	CU_ASSERT_EQUAL(ibcm_conn_local_id(a), 0x1000);
	CU_ASSERT_PTR_EQUAL(ibcm_conn_user(a), A);
	CU_ASSERT_EQUAL(ut_nq, 1);
	m = ut_q_parse(0);
	ut_req_fill(&req, UT_SID);
	req.local_comm_id = 0x1000;
	req.local_ca_guid = 0xA0A1A2A3A4A5A6A7ull;
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_REQ);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32 | 0);
	CU_ASSERT(memcmp(&m.req, &req, sizeof(req)) == 0);
	tid = m.hdr.tid;
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), ut_now + UT_REQ_T);

	ut_now += 10;
	b = ut_req_to_b();
	e = ut_last_ev(B);
	CU_ASSERT_EQUAL(B->n_ev, 1);
	CU_ASSERT_PTR_EQUAL(e->listen_user, (void *)0x5151);
	CU_ASSERT(memcmp(e->peer.gid.raw, A->gid.raw, 16) == 0);
	CU_ASSERT(memcmp(e->peer.local_gid.raw, B->gid.raw, 16) == 0);
	CU_ASSERT(e->has_mad && memcmp(&e->mad.req, &req, sizeof(req)) == 0);
	CU_ASSERT_EQUAL(e->state, IBCM_REQ_RCVD);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_REQ_RCVD);
	CU_ASSERT_EQUAL(ibcm_conn_local_id(b), 0x2000);
	CU_ASSERT_EQUAL(ibcm_conn_remote_id(b), 0x1000);
	CU_ASSERT(memcmp(ibcm_conn_peer(b)->gid.raw, A->gid.raw, 16) == 0);
	CU_ASSERT_PTR_NULL(ibcm_conn_user(b));
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), UINT64_MAX);

	CU_ASSERT_EQUAL(ibcm_send_rep(b, &rep, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_REP_SENT);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_REP);
	CU_ASSERT_EQUAL(m.hdr.tid, tid);
	rep.local_comm_id = 0x2000;
	rep.remote_comm_id = 0x1000;
	rep.local_ca_guid = 0xB0B1B2B3B4B5B6B7ull;
	CU_ASSERT(memcmp(&m.rep, &rep, sizeof(rep)) == 0);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), ut_now + UT_REP_T);

	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REP), 0);
	e = ut_last_ev(A);
	CU_ASSERT_EQUAL(e->type, IBCM_EV_REP_RCVD);
	CU_ASSERT_PTR_EQUAL(e->conn, a);
	CU_ASSERT(memcmp(&e->mad.rep, &rep, sizeof(rep)) == 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REP_RCVD);
	CU_ASSERT_EQUAL(ibcm_conn_remote_id(a), 0x2000);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);

	CU_ASSERT_EQUAL(ibcm_send_rtu(a, pd, sizeof(pd), ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_ESTABLISHED);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_RTU);
	CU_ASSERT_EQUAL(m.hdr.tid, tid);
	CU_ASSERT_EQUAL(m.rtu.local_comm_id, 0x1000);
	CU_ASSERT_EQUAL(m.rtu.remote_comm_id, 0x2000);
	CU_ASSERT(memcmp(m.rtu.private_data, pd, sizeof(pd)) == 0 && m.rtu.private_data[4] == 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_RTU), 0);
	e = ut_last_ev(B);
	CU_ASSERT_EQUAL(e->type, IBCM_EV_RTU_RCVD);
	CU_ASSERT_PTR_EQUAL(e->conn, b);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_ESTABLISHED);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), UINT64_MAX);

	/* Disconnect from A. */
	CU_ASSERT_EQUAL(ibcm_send_dreq(a, pd, 1, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_DREQ_SENT);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_DREQ);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32 | 1);
	CU_ASSERT_EQUAL(m.dreq.local_comm_id, 0x1000);
	CU_ASSERT_EQUAL(m.dreq.remote_comm_id, 0x2000);
	CU_ASSERT_EQUAL(m.dreq.remote_qpn, UT_QPN_B);
	CU_ASSERT_EQUAL(m.dreq.private_data[0], 1);
	tid = m.hdr.tid;
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), ut_now + UT_DREQ_T);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);
	e = ut_last_ev(B);
	CU_ASSERT_EQUAL(e->type, IBCM_EV_DREQ_RCVD);
	CU_ASSERT_EQUAL(e->state, IBCM_TIMEWAIT);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_TIMEWAIT);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_DREP);
	CU_ASSERT_EQUAL(m.hdr.tid, tid);
	CU_ASSERT_EQUAL(m.drep.local_comm_id, 0x2000);
	CU_ASSERT_EQUAL(m.drep.remote_comm_id, 0x1000);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREP), 0);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_DREP_RCVD);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_TIMEWAIT);
	CU_ASSERT_EQUAL(ibcm_send_dreq(a, NULL, 0, ut_now), -EINVAL);

	/* Time-wait: 4.096 us * 2^(4 + 1) is under 1 ms, so 1 ms. */
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), ut_now + UT_TW);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), ut_now + UT_TW);
	A->n_ev = B->n_ev = 0;
	ut_advance(ut_now + UT_TW - 1);
	CU_ASSERT_EQUAL(A->n_ev + B->n_ev, 0);
	ut_advance(ut_now + 1);
	CU_ASSERT(A->n_ev == 1 && A->ev[0].type == IBCM_EV_TIMEWAIT_EXIT && A->ev[0].conn == a);
	CU_ASSERT(B->n_ev == 1 && B->ev[0].type == IBCM_EV_TIMEWAIT_EXIT && B->ev[0].conn == b);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_IDLE);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);
	CU_ASSERT_EQUAL(ut_nq, 0);

	CU_ASSERT_EQUAL(UT_TX(A, DRNIC_MAD_CM_REQ), 1);
	CU_ASSERT_EQUAL(UT_TX(A, DRNIC_MAD_CM_RTU), 1);
	CU_ASSERT_EQUAL(UT_TX(A, DRNIC_MAD_CM_DREQ), 1);
	CU_ASSERT_EQUAL(UT_RX(A, DRNIC_MAD_CM_REP), 1);
	CU_ASSERT_EQUAL(UT_RX(A, DRNIC_MAD_CM_DREP), 1);
	CU_ASSERT_EQUAL(UT_TX(B, DRNIC_MAD_CM_REP), 1);
	CU_ASSERT_EQUAL(UT_TX(B, DRNIC_MAD_CM_DREP), 1);
	CU_ASSERT_EQUAL(UT_RX(B, DRNIC_MAD_CM_REQ), 1);
	CU_ASSERT_EQUAL(ut_stats(A).dropped + ut_stats(B).dropped, 0);
	CU_ASSERT_EQUAL(ut_stats(A).retransmits + ut_stats(B).retransmits, 0);

	/* The conn is reusable: a new REQ gets a new comm ID and TID. */
	ut_req_fill(&req, UT_SID);
	{
		struct ibcm_peer dst = ut_peer(B, A);

		CU_ASSERT_EQUAL(ibcm_send_req(a, &dst, &req, ut_now), 0);
	}
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REQ_SENT);
	CU_ASSERT_EQUAL(ibcm_conn_local_id(a), 0x1001);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.req.local_comm_id, 0x1001);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32 | 2);
	ut_teardown();
}

/* Resent exactly max_cm_retries times, T apart; then REJ timeout and TIMEOUT. */
static void
test_req_timeout(void)
{
	struct drnic_mad_cm m;
	struct ibcm_conn *a;
	uint64_t t0 = 5000;
	uint8_t first[DRNIC_MAD_LEN];
	unsigned int i;

	ut_setup();
	ut_now = t0;
	a = ut_connect();
	memcpy(first, ut_q[0].b, DRNIC_MAD_LEN);
	ut_take(A, DRNIC_MAD_CM_REQ);
	for (i = 1; i <= UT_RETRIES; i++) {
		ut_advance(t0 + i * UT_REQ_T - 1);
		CU_ASSERT_EQUAL(ut_nq, 0);
		ut_advance(t0 + i * UT_REQ_T);
		CU_ASSERT_EQUAL_FATAL(ut_nq, 1);
		CU_ASSERT(memcmp(ut_q[0].b, first, DRNIC_MAD_LEN) == 0);  /* same TID */
		ut_take(A, DRNIC_MAD_CM_REQ);
		CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REQ_SENT);
		CU_ASSERT_EQUAL(A->n_ev, 0);
	}
	CU_ASSERT_EQUAL(ut_stats(A).retransmits, UT_RETRIES);
	ut_advance(t0 + (UT_RETRIES + 1) * UT_REQ_T - 1);
	CU_ASSERT_EQUAL(ut_nq, 0);
	ut_advance(t0 + (UT_RETRIES + 1) * UT_REQ_T);
	CU_ASSERT_EQUAL_FATAL(ut_nq, 1);
	m = ut_take(A, DRNIC_MAD_CM_REJ);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32);
	CU_ASSERT_EQUAL(m.rej.reason, DRNIC_MAD_CM_REJ_TIMEOUT);
	CU_ASSERT_EQUAL(m.rej.local_comm_id, 0x1000);
	CU_ASSERT_EQUAL(m.rej.remote_comm_id, 0);
	CU_ASSERT_EQUAL(m.rej.reject_info_len, 8);
	CU_ASSERT(m.rej.ari[0] == 0xA0 && m.rej.ari[7] == 0xA7);
	CU_ASSERT_EQUAL_FATAL(A->n_ev, 1);
	CU_ASSERT_EQUAL(A->ev[0].type, IBCM_EV_TIMEOUT);
	CU_ASSERT_EQUAL(A->ev[0].timed_out, DRNIC_MAD_CM_REQ);
	CU_ASSERT_FALSE(A->ev[0].has_mad);
	CU_ASSERT_EQUAL(A->ev[0].state, IBCM_IDLE);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ut_stats(A).timeouts, 1);
	CU_ASSERT_EQUAL(ut_stats(A).retransmits, UT_RETRIES);
	CU_ASSERT_EQUAL(UT_TX(A, DRNIC_MAD_CM_REQ), UT_RETRIES + 1);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);
	ut_teardown();
}

/* A failed send is a lost one: the timer sends it again. */
static void
test_send_failure(void)
{
	struct ibcm_conn *a;

	ut_setup();
	ibcm_proto_listen(B->p, UT_SID, NULL);
	A->send_rc = -ENOBUFS;
	a = ut_connect();
	CU_ASSERT_EQUAL(ut_nq, 0);
	CU_ASSERT_EQUAL(UT_TX(A, DRNIC_MAD_CM_REQ), 0);
	A->send_rc = 0;
	ut_advance(ut_now + UT_REQ_T);
	CU_ASSERT_EQUAL(UT_TX(A, DRNIC_MAD_CM_REQ), 1);
	ut_req_to_b();
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REQ_SENT);
	ut_teardown();
}

/* An MRA stops resends for service_timeout + life; then they resume. */
static void
test_mra_req(void)
{
	struct drnic_mad_cm m;
	struct drnic_mad_cm_rep rep = ut_rep_fill();
	struct ibcm_conn *a, *b;
	uint64_t t;

	ut_setup();
	ut_req_rcvd(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_mra(b, 32, NULL, 0, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_send_mra(b, 14, "x", 1, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_MRA_REQ_SENT);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_MRA);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32);
	CU_ASSERT_EQUAL(m.mra.local_comm_id, 0x2000);
	CU_ASSERT_EQUAL(m.mra.remote_comm_id, 0x1000);
	CU_ASSERT_EQUAL(m.mra.msg_mraed, DRNIC_MAD_CM_MSG_REQ);
	CU_ASSERT_EQUAL(m.mra.service_timeout, 14);
	CU_ASSERT_EQUAL(m.mra.private_data[0], 'x');
	ut_now += 100;
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_MRA), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_MRA_REQ_RCVD);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_MRA_RCVD);
	t = ut_now + UT_NS(14) + UT_NS(UT_LIFE);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), t);
	CU_ASSERT(t > ut_now + UT_REQ_T);
	ut_advance(t - 1);
	CU_ASSERT_EQUAL(ut_nq, 0);        /* no resend at the normal timeout */
	/* An MRA of the wrong message (REP) is not valid here. */
	{
		struct drnic_mad_cm bad;
		uint8_t buf[DRNIC_MAD_LEN];

		ibcm_mad_init(&bad, DRNIC_MAD_CM_MRA, 0xAAAAull << 32);
		bad.mra.local_comm_id = 0x2000;
		bad.mra.remote_comm_id = 0x1000;
		bad.mra.msg_mraed = DRNIC_MAD_CM_MSG_REP;
		bad.mra.service_timeout = 20;
		CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_build(&bad, buf, sizeof(buf)), 0);
		CU_ASSERT_EQUAL(ut_rx_from(A, buf, &B->gid), -EPROTO);
		CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), t);
	}
	ut_advance(t);
	CU_ASSERT_EQUAL(ut_nq, 1);        /* resumes */
	CU_ASSERT_EQUAL(ut_stats(A).retransmits, 1);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), t + UT_REQ_T);
	/* The resent REQ is a duplicate to B in MRA_REQ_SENT: the MRA again. */
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REQ), 0);
	CU_ASSERT_EQUAL(ut_stats(B).dup_answered, 1);
	CU_ASSERT_EQUAL(ut_q_parse(0).mra.service_timeout, 14);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_MRA), 0);
	CU_ASSERT_EQUAL(A->n_ev, 1);      /* MRA_RCVD told once */
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), ut_now + UT_NS(14) + UT_NS(UT_LIFE));
	/* The REP ends it. */
	CU_ASSERT_EQUAL(ibcm_send_rep(b, &rep, ut_now), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REP), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REP_RCVD);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);
	ut_teardown();
}

/* The REP resent after the REQ's local_cm_resp_timeout; A's duplicates dropped. */
static void
test_rep_timeout(void)
{
	struct drnic_mad_cm_rep rep = ut_rep_fill();
	struct drnic_mad_cm m;
	struct ibcm_conn *a, *b;
	uint64_t t0;
	unsigned int i;

	ut_setup();
	ut_req_rcvd(&a, &b);
	t0 = ut_now;
	CU_ASSERT_EQUAL(ibcm_send_rep(b, &rep, t0), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REP), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REP_RCVD);   /* A's consumer is slow */
	A->n_ev = 0;
	for (i = 1; i <= UT_RETRIES; i++) {
		ut_advance(t0 + i * UT_REP_T - 1);
		CU_ASSERT_EQUAL(ut_nq, 0);
		ut_advance(t0 + i * UT_REP_T);
		CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REP), -EPROTO);
		CU_ASSERT_EQUAL(ut_stats(A).dropped, i);
	}
	CU_ASSERT_EQUAL(A->n_ev, 0);
	ut_advance(t0 + (UT_RETRIES + 1) * UT_REP_T);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_REJ);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32);
	CU_ASSERT_EQUAL(m.rej.reason, DRNIC_MAD_CM_REJ_TIMEOUT);
	CU_ASSERT_EQUAL(m.rej.local_comm_id, 0x2000);
	CU_ASSERT_EQUAL(m.rej.remote_comm_id, 0x1000);
	CU_ASSERT_EQUAL(ut_last_ev(B)->type, IBCM_EV_TIMEOUT);
	CU_ASSERT_EQUAL(ut_last_ev(B)->timed_out, DRNIC_MAD_CM_REP);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_IDLE);
	CU_ASSERT_EQUAL(ut_stats(B).retransmits, UT_RETRIES);
	CU_ASSERT_EQUAL(ut_stats(B).timeouts, 1);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REJ), 0);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_REJ_RCVD);
	CU_ASSERT_EQUAL(ut_last_ev(A)->mad.rej.reason, DRNIC_MAD_CM_REJ_TIMEOUT);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ibcm_send_rtu(a, NULL, 0, ut_now), -EINVAL);
	ut_teardown();
}

/* An MRA of the REP: REP_SENT -> MRA_REP_RCVD, then the RTU. */
static void
test_mra_rep(void)
{
	struct ibcm_conn *a, *b;
	struct drnic_mad_cm m;

	ut_setup();
	ut_rep_rcvd(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_mra(a, 15, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_MRA_REP_SENT);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.mra.msg_mraed, DRNIC_MAD_CM_MSG_REP);
	CU_ASSERT_EQUAL(m.mra.local_comm_id, 0x1000);
	CU_ASSERT_EQUAL(m.mra.remote_comm_id, 0x2000);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_MRA), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_MRA_REP_RCVD);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), ut_now + UT_NS(15) + UT_NS(UT_LIFE));
	/* The REP again (say, B resent it): A in MRA_REP_SENT sends its MRA again. */
	ibcm_tx(B->p, &b->peer, b->msg);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REP), 0);
	CU_ASSERT_EQUAL(ut_stats(A).dup_answered, 1);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_MRA);
	CU_ASSERT_EQUAL(m.mra.msg_mraed, DRNIC_MAD_CM_MSG_REP);
	ut_q_remove(0);
	CU_ASSERT_EQUAL(ibcm_send_rtu(a, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_RTU), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_ESTABLISHED);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), UINT64_MAX);
	ut_teardown();
}

/* Lost REQ, REP, RTU: each recovered by a timer and a duplicate's answer. */
static void
test_lost_messages(void)
{
	struct drnic_mad_cm_rep rep = ut_rep_fill();
	struct ibcm_conn *a, *b;
	uint64_t t0;

	ut_setup();
	ibcm_proto_listen(B->p, UT_SID, NULL);
	t0 = ut_now;
	a = ut_connect();
	ut_take(A, DRNIC_MAD_CM_REQ);                   /* REQ lost */
	ut_advance(t0 + UT_REQ_T);
	b = ut_req_to_b();
	CU_ASSERT_EQUAL(ibcm_send_rep(b, &rep, ut_now), 0);
	ut_take(B, DRNIC_MAD_CM_REP);                   /* REP lost */
	ut_advance(t0 + 2 * UT_REQ_T);                  /* A resends the REQ */
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REQ), 0);
	CU_ASSERT_EQUAL(ut_stats(B).dup_answered, 1);   /* REP_SENT: the REP again */
	CU_ASSERT_EQUAL(B->n_ev, 1);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REP), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REP_RCVD);
	CU_ASSERT_EQUAL(ibcm_send_rtu(a, NULL, 0, ut_now), 0);
	ut_take(A, DRNIC_MAD_CM_RTU);                   /* RTU lost */
	t0 = ibcm_proto_next_timer(B->p);
	ut_advance(t0);                                 /* B resends the REP */
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REP), 0);
	CU_ASSERT_EQUAL(ut_stats(A).dup_answered, 1);   /* ESTABLISHED: the RTU again */
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_RTU), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_ESTABLISHED);
	CU_ASSERT_EQUAL(ut_last_ev(B)->type, IBCM_EV_RTU_RCVD);
	/* The RTU again: dropped. */
	ibcm_tx(A->p, &a->peer, a->ans);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_RTU), -EPROTO);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_ESTABLISHED);
	/* The REQ again while established: dropped. */
	ibcm_tx(A->p, &a->peer, a->msg);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REQ), -EPROTO);
	CU_ASSERT_EQUAL(ut_nq, 0);
	CU_ASSERT_EQUAL(ut_stats(B).dropped, 2);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), UINT64_MAX);
	ut_teardown();
}

/* Lost DREQ, lost DREP, and a DREQ nobody answers. */
static void
test_lost_disconnect(void)
{
	struct ibcm_conn *a, *b;
	uint64_t t0;
	unsigned int i;

	ut_setup();
	ut_establish(&a, &b);
	t0 = ut_now;
	CU_ASSERT_EQUAL(ibcm_send_dreq(a, NULL, 0, t0), 0);
	ut_take(A, DRNIC_MAD_CM_DREQ);                  /* DREQ lost */
	ut_advance(t0 + UT_DREQ_T - 1);
	CU_ASSERT_EQUAL(ut_nq, 0);
	ut_advance(t0 + UT_DREQ_T);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_TIMEWAIT);
	ut_take(B, DRNIC_MAD_CM_DREP);                  /* DREP lost */
	ut_advance(t0 + 2 * UT_DREQ_T);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_TIMEWAIT);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);
	CU_ASSERT_EQUAL(ut_stats(B).dup_answered, 1);   /* TIMEWAIT: DREP again */
	CU_ASSERT_EQUAL(B->n_ev, 1);
	CU_ASSERT_EQUAL(ut_q_parse(0).drep.local_comm_id, 0x2000);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREP), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_TIMEWAIT);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_DREP_RCVD);
	CU_ASSERT_EQUAL(ut_stats(A).retransmits, 2);
	ut_teardown();

	/* Nobody answers: max_cm_retries resends, TIMEOUT, time-wait anyway. */
	ut_setup();
	ut_establish(&a, &b);
	t0 = ut_now;
	CU_ASSERT_EQUAL(ibcm_send_dreq(a, NULL, 0, t0), 0);
	for (i = 0; i <= UT_RETRIES; i++) {
		ut_take(A, DRNIC_MAD_CM_DREQ);
		ut_advance(t0 + (i + 1) * UT_DREQ_T);
	}
	CU_ASSERT_EQUAL(ut_nq, 0);
	CU_ASSERT_EQUAL(ut_stats(A).retransmits, UT_RETRIES);
	CU_ASSERT_EQUAL_FATAL(A->n_ev, 1);
	CU_ASSERT_EQUAL(A->ev[0].type, IBCM_EV_TIMEOUT);
	CU_ASSERT_EQUAL(A->ev[0].timed_out, DRNIC_MAD_CM_DREQ);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_TIMEWAIT);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), ut_now + UT_TW);
	ut_advance(ut_now + UT_TW);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_TIMEWAIT_EXIT);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	ut_teardown();
}

/* Both send a DREQ at once: each answers the other's, the late DREPs are dropped. */
static void
test_simultaneous_disconnect(void)
{
	struct ibcm_conn *a, *b;

	ut_setup();
	ut_establish(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_dreq(a, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_send_dreq(b, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);      /* A's to B */
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_TIMEWAIT);
	CU_ASSERT_EQUAL(ut_last_ev(B)->type, IBCM_EV_DREQ_RCVD);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);      /* B's to A */
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_TIMEWAIT);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_DREQ_RCVD);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREP), -EPROTO); /* B's DREP to A */
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREP), -EPROTO);
	CU_ASSERT_EQUAL(A->n_ev, 1);
	CU_ASSERT_EQUAL(B->n_ev, 1);
	CU_ASSERT_EQUAL(ibcm_send_dreq(a, NULL, 0, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_send_dreq(b, NULL, 0, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ut_nq, 0);
	ut_advance(ut_now + UT_TW);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_IDLE);
	ut_teardown();
}

/* No listener: REJ 8. Time-wait: REJ 10. A DREQ for no conn: a DREP. */
static void
test_rejects(void)
{
	struct drnic_mad_cm m;
	struct drnic_mad_cm_dreq dreq = { .local_comm_id = 0x7777, .remote_comm_id = 0x4242 };
	struct drnic_mad_cm d;
	struct ibcm_conn *a, *b;
	uint8_t buf[DRNIC_MAD_LEN];

	ut_setup();
	a = ut_connect();
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REQ), 0);
	CU_ASSERT_EQUAL(B->n_ev, 0);
	CU_ASSERT_EQUAL(ut_stats(B).rej_no_listener, 1);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_REJ);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32);
	CU_ASSERT_EQUAL(m.rej.reason, DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID);
	CU_ASSERT_EQUAL(m.rej.msg_rejected, DRNIC_MAD_CM_MSG_REQ);
	CU_ASSERT_EQUAL(m.rej.local_comm_id, 0);
	CU_ASSERT_EQUAL(m.rej.remote_comm_id, 0x1000);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REJ), 0);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_REJ_RCVD);
	CU_ASSERT_EQUAL(ut_last_ev(A)->mad.rej.reason, DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);
	ut_teardown();

	ut_setup();
	ut_establish(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_dreq(b, NULL, 0, ut_now), 0);   /* passive side leaves */
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREP), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_TIMEWAIT);
	ibcm_tx(A->p, &a->peer, a->msg);     /* an old REQ of this conn */
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REQ), 0);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_REJ);
	CU_ASSERT_EQUAL(m.rej.reason, DRNIC_MAD_CM_REJ_STALE_CONN);
	CU_ASSERT_EQUAL(m.rej.remote_comm_id, 0x1000);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32);
	CU_ASSERT_EQUAL(ut_stats(B).rej_stale, 1);
	CU_ASSERT_EQUAL(ut_stats(B).dup_answered, 1);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_TIMEWAIT);
	ut_q_remove(0);

	/* A DREQ for a comm ID nobody has: a DREP with the IDs swapped. */
	ibcm_mad_init(&d, DRNIC_MAD_CM_DREQ, 0x99);
	d.dreq = dreq;
	CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_build(&d, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(ut_rx_from(B, buf, &A->gid), 0);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_DREP);
	CU_ASSERT_EQUAL(m.hdr.tid, 0x99);
	CU_ASSERT_EQUAL(m.drep.local_comm_id, 0x4242);
	CU_ASSERT_EQUAL(m.drep.remote_comm_id, 0x7777);
	CU_ASSERT_EQUAL(ut_stats(B).dup_answered, 2);
	ut_teardown();
}

/* REJ of a REQ by the consumer, of a REP by the active side, and an abort. */
static void
test_consumer_reject(void)
{
	struct drnic_mad_cm m;
	struct ibcm_conn *a, *b;
	uint8_t ari[3] = { 9, 8, 7 };

	ut_setup();
	ut_req_rcvd(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_rej(b, 28, ari, 73, NULL, 0, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_send_rej(b, 28, NULL, 0, NULL, 149, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_REQ_RCVD);
	CU_ASSERT_EQUAL(ibcm_send_rej(b, 28, ari, 3, "pd", 2, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_IDLE);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.rej.msg_rejected, DRNIC_MAD_CM_MSG_REQ);
	CU_ASSERT_EQUAL(m.rej.reason, 28);
	CU_ASSERT_EQUAL(m.rej.reject_info_len, 3);
	CU_ASSERT(memcmp(m.rej.ari, ari, 3) == 0 && m.rej.private_data[1] == 'd');
	CU_ASSERT_EQUAL(m.rej.local_comm_id, 0x2000);
	CU_ASSERT_EQUAL(m.rej.remote_comm_id, 0x1000);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REJ), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_REJ_RCVD);
	ut_teardown();

	/* The active side rejects the REP: A to time-wait, B REJ_RCVD and IDLE. */
	ut_setup();
	ut_rep_rcvd(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_rej(a, 28, NULL, 0, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_TIMEWAIT);
	CU_ASSERT_EQUAL(ut_q_parse(0).rej.msg_rejected, DRNIC_MAD_CM_MSG_REP);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REJ), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_IDLE);
	CU_ASSERT_EQUAL(ut_last_ev(B)->type, IBCM_EV_REJ_RCVD);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), UINT64_MAX);
	ut_teardown();

	/* The active side aborts before it knows B's ID: B finds it by A's. */
	ut_setup();
	ut_req_rcvd(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_rej(a, 28, NULL, 0, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ut_q_parse(0).rej.remote_comm_id, 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REJ), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_IDLE);
	CU_ASSERT_EQUAL(ut_last_ev(B)->type, IBCM_EV_REJ_RCVD);
	ut_teardown();
}

/* Callbacks that reject or destroy their conn at once; destroy finishes silently. */
static void
test_callbacks_and_destroy(void)
{
	struct drnic_mad_cm m;
	struct ibcm_conn *a, *b;

	ut_setup();
	ibcm_proto_listen(B->p, UT_SID, NULL);
	B->on_req = UT_CB_REJ;
	a = ut_connect();
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REQ), 0);
	CU_ASSERT_EQUAL(ut_last_ev(B)->state, IBCM_REQ_RCVD);
	CU_ASSERT_EQUAL(ibcm_conn_state(ut_last_ev(B)->conn), IBCM_IDLE);
	CU_ASSERT_EQUAL(ut_q_parse(0).rej.reason, DRNIC_MAD_CM_REJ_CONSUMER_REJECT);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REJ), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);

	/* Destroyed in its REQ_RCVD callback: a REJ, the conn freed after the call. */
	B->on_req = UT_CB_DESTROY;
	a = ut_connect();
	CU_ASSERT_EQUAL(B->p->n_conns, 1);                  /* the first, IDLE */
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REQ), 0);
	CU_ASSERT_EQUAL(ut_last_ev(B)->type, IBCM_EV_REQ_RCVD);
	CU_ASSERT_EQUAL(B->p->n_conns, 1);                  /* made and freed */
	CU_ASSERT(TAILQ_EMPTY(&B->p->zombies));
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.rej.reason, DRNIC_MAD_CM_REJ_CONSUMER_REJECT);
	CU_ASSERT_EQUAL(m.rej.msg_rejected, DRNIC_MAD_CM_MSG_REQ);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REJ), 0);

	/* A REP from inside the callback. */
	B->on_req = UT_CB_REP;
	a = ut_connect();
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REQ), 0);
	b = ut_last_ev(B)->conn;
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_REP_SENT);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_REP), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_REP_RCVD);
	ut_teardown();

	/* Destroyed while established: DREQ, time-wait, freed, no events. */
	ut_setup();
	ut_establish(&a, &b);
	ibcm_conn_destroy(b, ut_now);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_DREQ);
	CU_ASSERT_EQUAL(m.dreq.remote_qpn, UT_QPN_A);
	CU_ASSERT_EQUAL(B->p->n_conns, 1);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREP), 0);
	CU_ASSERT_EQUAL(B->p->n_conns, 1);                  /* in time-wait */
	ut_advance(ut_now + UT_TW);
	CU_ASSERT_EQUAL(B->p->n_conns, 0);
	CU_ASSERT_EQUAL(B->n_ev, 0);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_TIMEWAIT_EXIT);
	ut_teardown();

	/* Destroyed in REQ_SENT: REJ timeout; in IDLE: at once. */
	ut_setup();
	a = ut_connect();
	ut_take(A, DRNIC_MAD_CM_REQ);
	ibcm_conn_destroy(a, ut_now);
	m = ut_take(A, DRNIC_MAD_CM_REJ);
	CU_ASSERT_EQUAL(m.rej.reason, DRNIC_MAD_CM_REJ_TIMEOUT);
	CU_ASSERT_EQUAL(A->p->n_conns, 0);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);
	ibcm_conn_destroy(ibcm_conn_create(A->p, NULL), ut_now);
	CU_ASSERT_EQUAL(A->p->n_conns, 0);
	CU_ASSERT_EQUAL(ut_nq, 0);

	/* Destroyed in its TIMEOUT callback. */
	A->on_timeout = UT_CB_DESTROY;
	a = ut_connect();
	while (ibcm_proto_next_timer(A->p) != UINT64_MAX) {
		ut_nq = 0;
		ut_advance(ibcm_proto_next_timer(A->p));
	}
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_TIMEOUT);
	CU_ASSERT_EQUAL(A->p->n_conns, 0);
	ut_teardown();
}

/* Messages from a GID that is not the conn's peer are dropped. */
static void
test_wrong_gid(void)
{
	struct ibcm_conn *a, *b;
	struct ut_mad mad, req;

	ut_setup();
	ut_establish(&a, &b);
	ibcm_tx(A->p, &a->peer, a->msg);                   /* A's REQ, for later */
	req = ut_q[0];
	ut_q_remove(0);
	CU_ASSERT_EQUAL(ut_q_parse_bytes(req.b).hdr.attr_id, DRNIC_MAD_CM_REQ);
	CU_ASSERT_EQUAL(ibcm_send_dreq(a, NULL, 0, ut_now), 0);
	mad = ut_q[0];
	ut_q_remove(0);
	CU_ASSERT_EQUAL(ut_rx_from(B, mad.b, &ut_gid_evil), -ENOENT);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_ESTABLISHED);
	CU_ASSERT_EQUAL(B->n_ev, 0);
	CU_ASSERT_EQUAL(ut_nq, 0);                          /* no DREP to the stranger */
	CU_ASSERT_EQUAL(ut_stats(B).dropped, 1);
	/* A REQ duplicate from another GID is a new REQ, not B's conn. */
	CU_ASSERT_EQUAL(ut_rx_from(B, req.b, &ut_gid_evil), 0);
	CU_ASSERT_EQUAL(ut_last_ev(B)->type, IBCM_EV_REQ_RCVD);
	CU_ASSERT(ut_last_ev(B)->conn != b);
	CU_ASSERT_EQUAL(ut_nq, 0);
	/* From A itself the same REQ is a duplicate of the established conn. */
	CU_ASSERT_EQUAL(ut_rx_from(B, req.b, &A->gid), -EPROTO);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_ESTABLISHED);
	CU_ASSERT_EQUAL(ut_stats(B).dropped, 2);
	ut_teardown();
}

/* SIDR: resolved, no listener (status 1), timeout. */
static void
test_sidr(void)
{
	struct drnic_mad_cm_sidr_req sreq = { .pkey = 0xFFFF, .service_id = UT_SID2 };
	struct drnic_mad_cm_sidr_rep srep = { .qpn = UT_QPN_B, .qkey = 0x11111111 };
	struct ibcm_peer dst;
	struct drnic_mad_cm m;
	struct ibcm_conn *a, *b;
	uint64_t t0;
	unsigned int i;

	ut_setup();
	dst = ut_peer(B, A);
	ibcm_proto_listen(B->p, UT_SID2, (void *)0x77);
	a = ibcm_conn_create(A->p, NULL);
	sreq.private_data[0] = 0x42;
	CU_ASSERT_EQUAL(ibcm_send_sidr_req(a, &dst, &sreq, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_SIDR_REQ_SENT);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_SIDR_REQ);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32);
	CU_ASSERT_EQUAL(m.sidr_req.request_id, 0x1000);
	CU_ASSERT_EQUAL(m.sidr_req.service_id, UT_SID2);
	CU_ASSERT_EQUAL(m.sidr_req.pkey, 0xFFFF);
	CU_ASSERT_EQUAL(m.sidr_req.private_data[0], 0x42);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), ut_now + UT_DREQ_T);
	/* A duplicate in flight too. */
	ut_q[1] = ut_q[0];
	ut_nq = 2;
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_SIDR_REQ), 0);
	CU_ASSERT_EQUAL(ut_last_ev(B)->type, IBCM_EV_SIDR_REQ_RCVD);
	CU_ASSERT_PTR_EQUAL(ut_last_ev(B)->listen_user, (void *)0x77);
	CU_ASSERT_EQUAL(ut_last_ev(B)->mad.sidr_req.private_data[0], 0x42);
	b = ut_last_ev(B)->conn;
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_SIDR_REQ_RCVD);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_SIDR_REQ), -EPROTO);
	CU_ASSERT_EQUAL(B->n_ev, 1);
	CU_ASSERT_EQUAL(ibcm_send_sidr_rep(b, &srep, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_IDLE);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_SIDR_REP);
	CU_ASSERT_EQUAL(m.hdr.tid, 0xAAAAull << 32);
	CU_ASSERT_EQUAL(m.sidr_rep.request_id, 0x1000);
	CU_ASSERT_EQUAL(m.sidr_rep.status, 0);
	CU_ASSERT_EQUAL(m.sidr_rep.qpn, UT_QPN_B);
	CU_ASSERT_EQUAL(m.sidr_rep.qkey, 0x11111111);
	CU_ASSERT_EQUAL(m.sidr_rep.service_id, UT_SID2);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_SIDR_REP), 0);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_SIDR_REP_RCVD);
	CU_ASSERT_EQUAL(ut_last_ev(A)->mad.sidr_rep.qpn, UT_QPN_B);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);

	/* No listener: SIDR_REP status 1. */
	sreq.service_id = UT_SID;
	CU_ASSERT_EQUAL(ibcm_send_sidr_req(a, &dst, &sreq, ut_now), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_SIDR_REQ), 0);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.sidr_rep.status, 1);
	CU_ASSERT_EQUAL(m.sidr_rep.request_id, 0x1001);
	CU_ASSERT_EQUAL(ut_stats(B).rej_no_listener, 1);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_SIDR_REP), 0);
	CU_ASSERT_EQUAL(ut_last_ev(A)->mad.sidr_rep.status, 1);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);

	/* Nobody answers: cfg.max_cm_retries (2) resends, then TIMEOUT. */
	t0 = ut_now;
	CU_ASSERT_EQUAL(ibcm_send_sidr_req(a, &dst, &sreq, t0), 0);
	for (i = 1; i <= 3; i++) {
		ut_take(A, DRNIC_MAD_CM_SIDR_REQ);
		ut_advance(t0 + i * UT_DREQ_T);
	}
	CU_ASSERT_EQUAL(ut_nq, 0);
	CU_ASSERT_EQUAL(ut_last_ev(A)->type, IBCM_EV_TIMEOUT);
	CU_ASSERT_EQUAL(ut_last_ev(A)->timed_out, DRNIC_MAD_CM_SIDR_REQ);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	CU_ASSERT_EQUAL(ut_stats(A).retransmits, 2);
	ut_teardown();
}

/* LAP, APR, unknown attributes and malformed MADs: dropped and counted. */
static void
test_drops(void)
{
	struct drnic_mad_cm m;
	uint8_t buf[DRNIC_MAD_LEN];
	struct ibcm_conn *a, *b;

	ut_setup();
	ut_establish(&a, &b);
	ibcm_mad_init(&m, DRNIC_MAD_CM_LAP, 1);
	m.known = false;
	CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_build(&m, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(ut_rx_from(B, buf, &A->gid), -EPROTO);
	m.hdr.attr_id = DRNIC_MAD_CM_APR;
	CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_build(&m, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(ut_rx_from(B, buf, &A->gid), -EPROTO);
	m.hdr.attr_id = 0x0033;
	CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_build(&m, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(ut_rx_from(B, buf, &A->gid), -EPROTO);
	CU_ASSERT_EQUAL(UT_RX(B, DRNIC_MAD_CM_LAP), 1);
	CU_ASSERT_EQUAL(UT_RX(B, DRNIC_MAD_CM_APR), 1);
	CU_ASSERT_EQUAL(ibcm_proto_rx(B->p, buf, 255, &a->peer, ut_now), -EINVAL);
	buf[1] = 0x04;       /* another class */
	CU_ASSERT_EQUAL(ut_rx_from(B, buf, &A->gid), -EINVAL);
	/* An RTU for an ID nobody has. */
	ibcm_mad_init(&m, DRNIC_MAD_CM_RTU, 1);
	m.rtu.remote_comm_id = 0x5555;
	CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_build(&m, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(ut_rx_from(B, buf, &A->gid), -ENOENT);
	CU_ASSERT_EQUAL(ut_stats(B).dropped, 6);
	CU_ASSERT_EQUAL(B->n_ev, 0);
	CU_ASSERT_EQUAL(ut_nq, 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_ESTABLISHED);
	/* Calls in the wrong state. */
	CU_ASSERT_EQUAL(ibcm_send_rep(b, &(struct drnic_mad_cm_rep){ 0 }, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_send_rtu(b, NULL, 0, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_send_drep(b, NULL, 0, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_send_mra(b, 1, NULL, 0, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_send_rej(b, 28, NULL, 0, NULL, 0, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_conn_established(b, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_send_dreq(b, NULL, 221, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ut_nq, 0);
	ut_teardown();
}

/* The implicit RTU (traffic on the QP) ends REP resends. */
static void
test_implicit_rtu(void)
{
	struct drnic_mad_cm_rep rep = ut_rep_fill();
	struct drnic_mad_cm_req req;
	struct ibcm_peer dst;
	struct ibcm_conn *a, *b;

	ut_setup();
	ut_req_rcvd(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_rep(b, &rep, ut_now), 0);
	CU_ASSERT(ibcm_proto_next_timer(B->p) != UINT64_MAX);
	CU_ASSERT_EQUAL(ibcm_conn_established(b, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_ESTABLISHED);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), UINT64_MAX);
	CU_ASSERT_EQUAL(B->n_ev, 1);
	/* A REQ with a field too wide is refused and changes nothing. */
	ut_req_fill(&req, UT_SID);
	req.max_cm_retries = 16;
	dst = ut_peer(B, A);
	b = ibcm_conn_create(A->p, NULL);
	CU_ASSERT_EQUAL(ibcm_send_req(b, &dst, &req, ut_now), -EINVAL);
	CU_ASSERT_EQUAL(ibcm_conn_state(b), IBCM_IDLE);
	CU_ASSERT_EQUAL(ibcm_send_req(a, &dst, &req, ut_now), -EINVAL);   /* not IDLE */
	ut_teardown();
}

/* Comm IDs: never 0, never one in use (time-wait included). */
static void
test_comm_ids(void)
{
	struct ibcm_conn *a, *b, *c;
	struct drnic_mad_cm_req req;
	struct ibcm_peer dst;

	ut_setup();
	ut_establish(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_dreq(a, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREP), 0);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_TIMEWAIT);
	A->p->next_comm_id = 0xFFFFFFFF;
	dst = ut_peer(B, A);
	ut_req_fill(&req, UT_SID);
	c = ibcm_conn_create(A->p, NULL);
	CU_ASSERT_EQUAL(ibcm_send_req(c, &dst, &req, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_local_id(c), 0xFFFFFFFF);
	ibcm_conn_destroy(c, ut_now);
	c = ibcm_conn_create(A->p, NULL);
	A->p->next_comm_id = 0;
	CU_ASSERT_EQUAL(ibcm_send_req(c, &dst, &req, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_local_id(c), 1);          /* 0 skipped */
	ibcm_conn_destroy(c, ut_now);
	c = ibcm_conn_create(A->p, NULL);
	A->p->next_comm_id = 0x1000;                        /* a's, in time-wait */
	CU_ASSERT_EQUAL(ibcm_send_req(c, &dst, &req, ut_now), 0);
	CU_ASSERT_EQUAL(ibcm_conn_local_id(c), 0x1001);
	ut_teardown();
}

/* A longer packet life: time-wait is 4.096 us * 2^(life + 1). */
static void
test_timewait_long(void)
{
	struct ibcm_conn *a, *b;

	ut_setup();
	A->p->cfg.packet_life_time = 10;
	ut_establish(&a, &b);
	CU_ASSERT_EQUAL(ibcm_send_dreq(b, NULL, 0, ut_now), 0);
	CU_ASSERT_EQUAL(ut_deliver(DRNIC_MAD_CM_DREQ), 0);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), ut_now + UT_NS(11));
	ut_advance(ut_now + UT_NS(11) - 1);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_TIMEWAIT);
	ut_advance(ut_now + 1);
	CU_ASSERT_EQUAL(ibcm_conn_state(a), IBCM_IDLE);
	ut_teardown();
}

/* Many timers due at once: bounded work per call, earliest first. */
static void
test_timer_budget(void)
{
	struct drnic_mad_cm_req req;
	struct ibcm_peer dst;
	unsigned int i, n = IBCM_TIMER_BUDGET + 6;
	uint64_t t0;

	ut_setup();
	dst = ut_peer(B, A);
	ut_req_fill(&req, UT_SID);
	req.max_cm_retries = 0;
	t0 = ut_now;
	A->send_rc = -ENOBUFS;     /* the queue is small: lose them all */
	for (i = 0; i < n; i++)
		CU_ASSERT_EQUAL(ibcm_send_req(ibcm_conn_create(A->p, NULL), &dst, &req,
					      t0 + n - i), 0);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), t0 + 1 + UT_REQ_T);
	ibcm_proto_timer(A->p, t0 + n + UT_REQ_T);
	CU_ASSERT_EQUAL(A->n_ev, IBCM_TIMER_BUDGET);
	CU_ASSERT_EQUAL(ut_stats(A).timeouts, IBCM_TIMER_BUDGET);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), t0 + IBCM_TIMER_BUDGET + 1 + UT_REQ_T);
	A->n_ev = 0;
	ibcm_proto_timer(A->p, t0 + n + UT_REQ_T);
	CU_ASSERT_EQUAL(ut_stats(A).timeouts, n);
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(A->p), UINT64_MAX);
	ut_teardown();
}

/* ------------------------------------------------------------------------ */
/* A real Linux REQ                                                          */
/* ------------------------------------------------------------------------ */

/*
 * The first CM REQ of the capture, and its sender's GID (the IPv4 source,
 * IPv4-mapped): UDP to 4791, BTH opcode UD SEND_ONLY to QP 1, DETH, MAD.
 */
static bool
ut_capture_req(uint8_t *mad, union drnic_gid *src)
{
	struct ut_pcap pc;
	const uint8_t *f;
	uint32_t caplen, origlen, l3_len;
	char path[512];
	bool found = false;

	if (!ut_testdata(path, sizeof(path), "rxe_linux61_services.pcap"))
		return false;
	CU_ASSERT_EQUAL_FATAL(ut_pcap_open(&pc, path), 0);
	while (!found && ut_pcap_next(&pc, &f, &caplen, &origlen)) {
		uint32_t o = ut_rocev2_l3(f, caplen, &l3_len), bth;

		if (o == 0 || (f[o] >> 4) != 4)
			continue;
		bth = o + (uint32_t)(f[o] & 0xF) * 4 + 8;
		if (caplen < bth + 12 + 8 + DRNIC_MAD_LEN || f[bth] != DRNIC_WIRE_OP_UD_SEND_ONLY ||
		    (f[bth + 5] << 16 | f[bth + 6] << 8 | f[bth + 7]) != DRNIC_MAD_GSI_QPN)
			continue;
		memcpy(mad, f + bth + 20, DRNIC_MAD_LEN);
		if (mad[1] != DRNIC_MAD_CLASS_CM || (mad[16] << 8 | mad[17]) != DRNIC_MAD_CM_REQ)
			continue;
		memset(src, 0, sizeof(*src));
		src->raw[10] = src->raw[11] = 0xFF;
		memcpy(&src->raw[12], f + o + 12, 4);
		found = true;
	}
	ut_pcap_close(&pc);
	CU_ASSERT(found);
	return found;
}

static void
test_linux_req(void)
{
	struct drnic_mad_cm_rep rep = ut_rep_fill();
	struct drnic_mad_cm req, m;
	uint8_t mad[DRNIC_MAD_LEN];
	union drnic_gid src;
	struct ibcm_conn *b;

	if (!ut_capture_req(mad, &src))
		return;
	CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_parse(mad, sizeof(mad), &req), 0);
	ut_setup();
	CU_ASSERT_EQUAL(ibcm_proto_listen(B->p, req.req.service_id, (void *)0x99), 0);
	CU_ASSERT_EQUAL(ut_rx_from(B, mad, &src), 0);
	CU_ASSERT_EQUAL_FATAL(B->n_ev, 1);
	CU_ASSERT_EQUAL(B->ev[0].type, IBCM_EV_REQ_RCVD);
	CU_ASSERT_PTR_EQUAL(B->ev[0].listen_user, (void *)0x99);
	CU_ASSERT(memcmp(&B->ev[0].mad.req, &req.req, sizeof(req.req)) == 0);
	b = B->ev[0].conn;
	CU_ASSERT_EQUAL(ibcm_conn_remote_id(b), req.req.local_comm_id);
	CU_ASSERT_EQUAL(ibcm_send_rep(b, &rep, ut_now), 0);
	CU_ASSERT_EQUAL_FATAL(ut_nq, 1);
	CU_ASSERT(memcmp(ut_q[0].dst.gid.raw, src.raw, 16) == 0);
	m = ut_q_parse(0);
	CU_ASSERT_EQUAL(m.hdr.attr_id, DRNIC_MAD_CM_REP);
	CU_ASSERT_EQUAL(m.hdr.tid, req.hdr.tid);
	CU_ASSERT_EQUAL(m.rep.remote_comm_id, req.req.local_comm_id);
	CU_ASSERT_EQUAL(m.rep.local_comm_id, 0x2000);
	CU_ASSERT_EQUAL(m.rep.local_qpn, UT_QPN_B);
	/* Resent after the Linux REQ's own local_cm_resp_timeout. */
	CU_ASSERT_EQUAL(ibcm_proto_next_timer(B->p), ut_now + UT_NS(req.req.local_cm_resp_timeout) +
			2 * UT_NS(UT_LIFE));
	/* Linux resends its REQ: B answers with the REP again. */
	CU_ASSERT_EQUAL(ut_rx_from(B, mad, &src), 0);
	CU_ASSERT_EQUAL(ut_nq, 2);
	CU_ASSERT(memcmp(ut_q[0].b, ut_q[1].b, DRNIC_MAD_LEN) == 0);
	CU_ASSERT_EQUAL(B->n_ev, 1);
	ut_teardown();
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("ibcm_proto", NULL, NULL);
	CU_add_test(s, "state_names", test_state_names);
	CU_add_test(s, "create_errors", test_create_errors);
	CU_add_test(s, "handshake", test_handshake);
	CU_add_test(s, "req_timeout", test_req_timeout);
	CU_add_test(s, "send_failure", test_send_failure);
	CU_add_test(s, "mra_req", test_mra_req);
	CU_add_test(s, "rep_timeout", test_rep_timeout);
	CU_add_test(s, "mra_rep", test_mra_rep);
	CU_add_test(s, "lost_messages", test_lost_messages);
	CU_add_test(s, "lost_disconnect", test_lost_disconnect);
	CU_add_test(s, "simultaneous_disconnect", test_simultaneous_disconnect);
	CU_add_test(s, "rejects", test_rejects);
	CU_add_test(s, "consumer_reject", test_consumer_reject);
	CU_add_test(s, "callbacks_and_destroy", test_callbacks_and_destroy);
	CU_add_test(s, "wrong_gid", test_wrong_gid);
	CU_add_test(s, "sidr", test_sidr);
	CU_add_test(s, "drops", test_drops);
	CU_add_test(s, "implicit_rtu", test_implicit_rtu);
	CU_add_test(s, "comm_ids", test_comm_ids);
	CU_add_test(s, "timewait_long", test_timewait_long);
	CU_add_test(s, "timer_budget", test_timer_budget);
	CU_add_test(s, "linux_req", test_linux_req);
	return ut_run_all();
}
