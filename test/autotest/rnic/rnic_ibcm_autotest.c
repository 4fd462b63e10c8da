/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager's native API end to end (drnic_ibcm.h): two
 * devices on a loopback wire, each added to the CM, connecting the way
 * rdma_cm programs do. Every wait is on the event channel with a bounded
 * timeout; nothing sleeps in place of synchronisation.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "drnic_cq.h"
#include "drnic_ibcm.h"
#include "drnic_link.h"
#include "drnic_link_fault.h"
#include "rnic_fixture.h"
#include "test.h"
#include "../../../app/perf/perf_floor.h"
#include "../../../app/perf/perf_stats.h"

#define CMT_WAIT_MS   5000
#define CMT_PORT      7471
/* A small CM response timeout (4.096 us * 2^14 = 67 ms): lost MADs are
 * resent within a fraction of a second. */
#define CMT_TIMEOUT   "14"

/* Progress mode of the devices cmt_open() opens (inline unless a test says). */
static enum drnic_progress_mode cmt_mode = DRNIC_PROGRESS_INLINE;

struct cmt {
	struct rnic_pair p;
	struct drnic_ibcm_channel *ca, *cb;   /* A's (client) and B's (server) channels */
	bool added_a, added_b;
	struct drnic_ibcm_id *ids[8];         /* destroyed by cmt_close() */
};

/* Keep @p id for cmt_close(). */
static struct drnic_ibcm_id *
cmt_track(struct cmt *t, struct drnic_ibcm_id *id)
{
	unsigned int i;

	for (i = 0; id != NULL && i < RTE_DIM(t->ids); i++)
		if (t->ids[i] == NULL || t->ids[i] == id) {
			t->ids[i] = id;
			break;
		}
	return id;
}

static int
cmt_destroy(struct cmt *t, struct drnic_ibcm_id *id)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(t->ids); i++)
		if (t->ids[i] == id)
			t->ids[i] = NULL;
	return drnic_ibcm_destroy_id(id);
}

static void
cmt_sin(struct sockaddr_in *sin, const char *ip, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
}

static void
cmt_close(struct cmt *t)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(t->ids); i++)
		if (t->ids[i] != NULL)
			drnic_ibcm_destroy_id(t->ids[i]);
	if (t->added_a)
		drnic_ibcm_remove_device(t->p.a.dev);
	if (t->added_b)
		drnic_ibcm_remove_device(t->p.b.dev);
	if (t->ca != NULL)
		drnic_ibcm_destroy_channel(t->ca);
	if (t->cb != NULL)
		drnic_ibcm_destroy_channel(t->cb);
	rnic_pair_close(&t->p);
}

static int
cmt_open(struct cmt *t, enum drnic_qp_type type, const char *extra_a, const char *extra_b)
{
	struct rnic_pair_opts o = { .mode = cmt_mode, .qp_reset = true };
	int rc;

	memset(t, 0, sizeof(*t));
	o.qp_type = type;
	o.link_extra[0] = extra_a;
	o.link_extra[1] = extra_b;
	o.ipv6[0] = "fd00::1";
	o.ipv6[1] = "fd00::2";
	setenv("DRNIC_CM_RESPONSE_TIMEOUT", CMT_TIMEOUT, 1);
	rc = rnic_pair_open(&t->p, &o);
	if (rc < 0)
		return rc;
	rc = drnic_ibcm_add_device(t->p.a.dev);
	t->added_a = rc == 0;
	if (rc == 0) {
		rc = drnic_ibcm_add_device(t->p.b.dev);
		t->added_b = rc == 0;
	}
	t->ca = drnic_ibcm_create_channel();
	t->cb = drnic_ibcm_create_channel();
	if (rc == 0 && (t->ca == NULL || t->cb == NULL))
		rc = -ENOMEM;
	if (rc < 0) {
		printf("cmt_open: %s\n", strerror(-rc));
		cmt_close(t);
	}
	return rc;
}

/* The next event of @p ch within CMT_WAIT_MS; -EAGAIN when none came. The
 * wait is on the channel's fd, as an application's poll loop. */
static int
cmt_event_ms(struct drnic_ibcm_channel *ch, struct drnic_ibcm_event *ev, int ms)
{
	struct pollfd pfd = { .fd = drnic_ibcm_channel_fd(ch), .events = POLLIN };

	if (poll(&pfd, 1, ms) <= 0)
		return -EAGAIN;
	return drnic_ibcm_get_event(ch, ev, 0);
}

static int
cmt_event(struct drnic_ibcm_channel *ch, struct drnic_ibcm_event *ev)
{
	return cmt_event_ms(ch, ev, CMT_WAIT_MS);
}

#define CMT_EXPECT(ch, ev, type)                                                \
	do {                                                                    \
		int _rc = cmt_event(ch, ev);                                    \
		TEST_ASSERT_SUCCESS(_rc, "no event, expected %s",               \
				    drnic_ibcm_event_str(type));                \
		TEST_ASSERT((ev)->event == (type), "got %s (status %d), expected %s", \
			    drnic_ibcm_event_str((ev)->event), (ev)->status,    \
			    drnic_ibcm_event_str(type));                        \
	} while (0)

/* Client side up to ROUTE_RESOLVED: a new id on A's channel, resolved to
 * B's address and @p port. */
static int
cmt_client(struct cmt *t, enum drnic_ibcm_ps ps, enum drnic_qp_type type, uint16_t port,
	   struct drnic_ibcm_id **out)
{
	struct sockaddr_in src, dst;
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_route rt;
	struct drnic_ibcm_id *id;

	cmt_sin(&src, "10.0.0.1", 0);
	cmt_sin(&dst, "10.0.0.2", port);
	id = cmt_track(t, drnic_ibcm_create_id(t->ca, t, ps, type));
	TEST_ASSERT(id != NULL, "create_id: %s", strerror(rte_errno));
	*out = id;
	TEST_ASSERT_SUCCESS(drnic_ibcm_resolve_addr(id, (struct sockaddr *)&src,
						    (struct sockaddr *)&dst, 2000), "resolve_addr");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_ADDR_RESOLVED);
	TEST_ASSERT(ev.id == id, "event of another id");
	TEST_ASSERT(drnic_ibcm_id_device(id) == t->p.a.dev, "resolved onto the wrong device");
	TEST_ASSERT_SUCCESS(drnic_ibcm_resolve_route(id, 2000), "resolve_route");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_ROUTE_RESOLVED);
	TEST_ASSERT_SUCCESS(drnic_ibcm_id_route(id, &rt), "route");
	TEST_ASSERT_EQUAL(rt.num_paths, 1, "paths");
	TEST_ASSERT_EQUAL(rt.hop_limit, 64, "hop limit");
	TEST_ASSERT(rt.mtu >= DRNIC_MTU_256 && rt.mtu <= DRNIC_MTU_4096, "mtu %d", rt.mtu);
	return TEST_SUCCESS;
}

/* Server: an id on B's channel listening on 10.0.0.2:@p port. */
static int
cmt_server(struct cmt *t, enum drnic_ibcm_ps ps, enum drnic_qp_type type, uint16_t port,
	   struct drnic_ibcm_id **out)
{
	struct sockaddr_in sin;
	struct drnic_ibcm_id *id;

	cmt_sin(&sin, "10.0.0.2", port);
	id = cmt_track(t, drnic_ibcm_create_id(t->cb, t, ps, type));
	TEST_ASSERT(id != NULL, "create_id: %s", strerror(rte_errno));
	*out = id;
	TEST_ASSERT_SUCCESS(drnic_ibcm_bind_addr(id, (struct sockaddr *)&sin), "bind");
	TEST_ASSERT_SUCCESS(drnic_ibcm_listen(id, 4), "listen");
	return TEST_SUCCESS;
}

/* What the server tells the client in its REP: where to write. */
struct cmt_rep_data {
	uint64_t addr;
	uint32_t rkey;
	char tag[8];
};

/* RC connect with attached QPs, private data both ways, then a SEND and an
 * RDMA WRITE checked byte for byte. The connection is left up: *ca / *cb. */
static int
cmt_rc_connect(struct cmt *t, struct drnic_ibcm_id **ca, struct drnic_ibcm_id **cb,
	       struct drnic_ibcm_id **lis)
{
	static const char req_data[] = "req-private";
	struct drnic_ibcm_conn_param cp = { 0 };
	struct cmt_rep_data rd, got;
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_id *srv;
	struct sockaddr_storage ss;

	if (cmt_server(t, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC, CMT_PORT, lis) != TEST_SUCCESS)
		return TEST_FAILED;
	if (cmt_client(t, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC, CMT_PORT, ca) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(*ca, t->p.a.qp), "attach A's QP");
	TEST_ASSERT_EQUAL(drnic_qp_state(t->p.a.qp), DRNIC_QPS_INIT, "A's QP");
	cp.private_data = req_data;
	cp.private_data_len = sizeof(req_data);
	cp.responder_resources = 4;
	cp.initiator_depth = 4;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	TEST_ASSERT_SUCCESS(drnic_ibcm_connect(*ca, &cp), "connect");

	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_CONNECT_REQUEST);
	TEST_ASSERT(ev.listen_id == *lis, "listener");
	srv = cmt_track(t, ev.id);
	*cb = srv;
	TEST_ASSERT(srv != NULL && srv != *lis, "a new id for the request");
	TEST_ASSERT(ev.param.conn.private_data_len >= sizeof(req_data), "pdata len %u",
		    ev.param.conn.private_data_len);
	TEST_ASSERT(memcmp(ev.param.conn.private_data, req_data, sizeof(req_data)) == 0,
		    "REQ private data");
	TEST_ASSERT_EQUAL(ev.param.conn.responder_resources, 4, "responder resources");
	TEST_ASSERT_EQUAL(ev.param.conn.qp_num, drnic_qp_num(t->p.a.qp), "peer QPN");
	TEST_ASSERT(drnic_ibcm_id_device(srv) == t->p.b.dev, "server id's device");
	TEST_ASSERT_SUCCESS(drnic_ibcm_id_dst_addr(srv, &ss), "dst addr");
	TEST_ASSERT_EQUAL(ss.ss_family, AF_INET, "family");
	TEST_ASSERT_EQUAL(((struct sockaddr_in *)&ss)->sin_addr.s_addr, htonl(0x0A000001),
			  "peer address from the IP header");

	TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(srv, t->p.b.qp), "attach B's QP");
	memset(&rd, 0, sizeof(rd));
	rd.addr = (uint64_t)(uintptr_t)t->p.b.buf;
	rd.rkey = drnic_mr_rkey(t->p.b.mr);
	memcpy(rd.tag, "rep-pd", 7);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = &rd;
	cp.private_data_len = sizeof(rd);
	cp.responder_resources = 4;
	cp.initiator_depth = 4;
	cp.rnr_retry_count = 7;
	TEST_ASSERT_SUCCESS(drnic_ibcm_accept(srv, &cp), "accept");
	TEST_ASSERT_EQUAL(drnic_qp_state(t->p.b.qp), DRNIC_QPS_RTS, "B's QP after accept");

	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_ESTABLISHED);
	TEST_ASSERT(ev.id == *ca, "client id");
	TEST_ASSERT(ev.param.conn.private_data_len >= sizeof(got), "REP pdata len");
	memcpy(&got, ev.param.conn.private_data, sizeof(got));
	TEST_ASSERT(memcmp(&got, &rd, sizeof(rd)) == 0, "REP private data");
	TEST_ASSERT_EQUAL(drnic_qp_state(t->p.a.qp), DRNIC_QPS_RTS, "A's QP");
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_ESTABLISHED);
	TEST_ASSERT(ev.id == srv, "server id");

	/* Data: a SEND into a posted receive, an RDMA WRITE to the REP's address. */
	{
		struct drnic_sge rs = { (uint64_t)(uintptr_t)(t->p.b.buf + 8192), 4096,
					drnic_mr_lkey(t->p.b.mr) };
		struct drnic_sge ss1 = { (uint64_t)(uintptr_t)t->p.a.buf, 1000,
					 drnic_mr_lkey(t->p.a.mr) };
		struct drnic_sge ss2 = { (uint64_t)(uintptr_t)(t->p.a.buf + 4096), 3000,
					 drnic_mr_lkey(t->p.a.mr) };
		struct drnic_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 };
		struct drnic_send_wr s1 = { .wr_id = 2, .sg_list = &ss1, .num_sge = 1,
					    .opcode = DRNIC_WR_SEND,
					    .send_flags = DRNIC_SEND_SIGNALED };
		struct drnic_send_wr s2 = { .wr_id = 3, .sg_list = &ss2, .num_sge = 1,
					    .opcode = DRNIC_WR_RDMA_WRITE,
					    .send_flags = DRNIC_SEND_SIGNALED };
		struct drnic_recv_wr *brw;
		struct drnic_send_wr *bsw;
		struct drnic_wc wc[2];

		rnic_fill(t->p.a.buf, 8192, 11);
		memset(t->p.b.buf, 0, 16384);
		s2.wr.rdma.remote_addr = got.addr;
		s2.wr.rdma.rkey = got.rkey;
		TEST_ASSERT_SUCCESS(drnic_post_recv(t->p.b.qp, &rwr, &brw), "post recv");
		TEST_ASSERT_SUCCESS(drnic_post_send(t->p.a.qp, &s1, &bsw), "post send");
		TEST_ASSERT_SUCCESS(drnic_post_send(t->p.a.qp, &s2, &bsw), "post write");
		TEST_ASSERT_EQUAL(rnic_poll(&t->p.a, wc, 2), 2, "send completions");
		TEST_ASSERT_EQUAL(wc[0].status, DRNIC_WC_SUCCESS, "SEND status");
		TEST_ASSERT_EQUAL(wc[1].status, DRNIC_WC_SUCCESS, "WRITE status");
		TEST_ASSERT_EQUAL(rnic_poll(&t->p.b, wc, 1), 1, "receive completion");
		TEST_ASSERT_EQUAL(wc[0].status, DRNIC_WC_SUCCESS, "receive status");
		TEST_ASSERT_EQUAL(wc[0].byte_len, 1000, "received length");
		TEST_ASSERT(memcmp(t->p.b.buf + 8192, t->p.a.buf, 1000) == 0, "SEND bytes");
		TEST_ASSERT(memcmp(t->p.b.buf, t->p.a.buf + 4096, 3000) == 0, "WRITE bytes");
	}
	return TEST_SUCCESS;
}

/* No more events on @p ch for a little while but, maybe, TIMEWAIT_EXIT. */
static int
cmt_no_more(struct drnic_ibcm_channel *ch, enum drnic_ibcm_event_type not)
{
	struct drnic_ibcm_event ev;

	while (drnic_ibcm_get_event(ch, &ev, 300) == 0)
		TEST_ASSERT(ev.event != not, "a second %s", drnic_ibcm_event_str(not));
	return TEST_SUCCESS;
}

/* Open a pair, run @p body on it, close it: whatever @p body returns. */
static int
cmt_run(int (*body)(struct cmt *t, int round), int round, enum drnic_qp_type type,
	const char *extra_a, const char *extra_b)
{
	struct cmt t;
	int rc;

	if (cmt_open(&t, type, extra_a, extra_b) < 0)
		return TEST_FAILED;
	rc = body(&t, round);
	cmt_close(&t);
	return rc;
}

/* Connect, exchange data, disconnect from the client. */
static int
cmt_rc_body(struct cmt *t, int round)
{
	struct drnic_ibcm_id *ca, *cb, *lis;
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_stats st;

	RTE_SET_USED(round);
	if (cmt_rc_connect(t, &ca, &cb, &lis) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(ca), "disconnect");
	TEST_ASSERT_EQUAL(drnic_qp_state(t->p.a.qp), DRNIC_QPS_ERR, "A's QP");
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_DISCONNECTED);
	TEST_ASSERT(ev.id == cb, "server's id");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_DISCONNECTED);
	TEST_ASSERT(ev.id == ca, "client's id");
	TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(cb), "disconnect after the DREQ");
	if (cmt_no_more(t->ca, DRNIC_IBCM_EVENT_DISCONNECTED) != TEST_SUCCESS ||
	    cmt_no_more(t->cb, DRNIC_IBCM_EVENT_DISCONNECTED) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(drnic_ibcm_stats_get(t->p.a.dev, &st), "stats");
	TEST_ASSERT_EQUAL(st.tx_by_attr[0], 1, "REQs sent");
	TEST_ASSERT_EQUAL(st.rx_by_attr[3], 1, "REPs received");
	TEST_ASSERT_EQUAL(st.tx_by_attr[4], 1, "RTUs sent");
	TEST_ASSERT_EQUAL(st.tx_by_attr[5], 1, "DREQs sent");
	TEST_ASSERT_EQUAL(st.retransmits, 0, "retransmits");
	TEST_ASSERT_SUCCESS(cmt_destroy(t, ca), "destroy");
	TEST_ASSERT_SUCCESS(cmt_destroy(t, cb), "destroy");
	TEST_ASSERT_SUCCESS(cmt_destroy(t, lis), "destroy");
	return TEST_SUCCESS;
}

static int
rnic_ibcm_rc(void)
{
	return cmt_run(cmt_rc_body, 0, DRNIC_QPT_RC, NULL, NULL);
}

/* The same with engines on their own lcore: the agent threads sleep on
 * their fds instead of running the engine every millisecond. */
static int
rnic_ibcm_rc_dedicated(void)
{
	int rc;

	cmt_mode = DRNIC_PROGRESS_DEDICATED;
	rc = cmt_run(cmt_rc_body, 0, DRNIC_QPT_RC, NULL, NULL);
	cmt_mode = DRNIC_PROGRESS_INLINE;
	return rc;
}

/* Round 0: the server disconnects; round 1: both at once. */
static int
cmt_disconnect_round(struct cmt *t, int round)
{
	struct drnic_ibcm_id *ca, *cb, *lis;
	struct drnic_ibcm_event ev;

	if (cmt_rc_connect(t, &ca, &cb, &lis) != TEST_SUCCESS)
		return TEST_FAILED;
	if (round == 1)
		TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(ca), "client disconnects");
	TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(cb), "server disconnects");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_DISCONNECTED);
	TEST_ASSERT(ev.id == ca, "client's id");
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_DISCONNECTED);
	TEST_ASSERT(ev.id == cb, "server's id");
	if (cmt_no_more(t->ca, DRNIC_IBCM_EVENT_DISCONNECTED) != TEST_SUCCESS ||
	    cmt_no_more(t->cb, DRNIC_IBCM_EVENT_DISCONNECTED) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(drnic_qp_state(t->p.a.qp), DRNIC_QPS_ERR, "A's QP");
	TEST_ASSERT_EQUAL(drnic_qp_state(t->p.b.qp), DRNIC_QPS_ERR, "B's QP");
	return TEST_SUCCESS;
}

static int
rnic_ibcm_disconnect(void)
{
	TEST_ASSERT_SUCCESS(cmt_run(cmt_disconnect_round, 0, DRNIC_QPT_RC, NULL, NULL), "server disconnects");
	TEST_ASSERT_SUCCESS(cmt_run(cmt_disconnect_round, 1, DRNIC_QPT_RC, NULL, NULL), "both at once");
	return TEST_SUCCESS;
}

/* A consumer reject with private data, and a port nobody listens on. */
static int
cmt_reject_body(struct cmt *t, int round)
{
	static const char why[] = "go-away";
	struct drnic_ibcm_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
					     .retry_count = 7 };
	struct drnic_ibcm_id *ca, *cb, *lis, *cc;
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_stats st;

	RTE_SET_USED(round);
	if (cmt_server(t, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC, CMT_PORT, &lis) != TEST_SUCCESS ||
	    cmt_client(t, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC, CMT_PORT, &ca) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(ca, t->p.a.qp), "attach");
	TEST_ASSERT_SUCCESS(drnic_ibcm_connect(ca, &cp), "connect");
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_CONNECT_REQUEST);
	cb = cmt_track(t, ev.id);
	TEST_ASSERT_SUCCESS(drnic_ibcm_reject(cb, why, sizeof(why)), "reject");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_REJECTED);
	TEST_ASSERT_EQUAL(ev.status, 28, "consumer reject");
	TEST_ASSERT(ev.param.conn.private_data_len >= sizeof(why), "REJ pdata len");
	TEST_ASSERT(memcmp(ev.param.conn.private_data, why, sizeof(why)) == 0,
		    "REJ private data");
	TEST_ASSERT_EQUAL(drnic_ibcm_reject(cb, NULL, 0), -EINVAL, "rejected already");

	/* Nobody on port CMT_PORT + 1: REJ reason 8 (invalid service ID). */
	if (cmt_client(t, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC, CMT_PORT + 1, &cc) != TEST_SUCCESS)
		return TEST_FAILED;
	cp.qp_num = 0x123;   /* no QP attached: the QPN the REQ names */
	TEST_ASSERT_SUCCESS(drnic_ibcm_connect(cc, &cp), "connect");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_REJECTED);
	TEST_ASSERT(ev.id == cc, "the id that connected");
	TEST_ASSERT_EQUAL(ev.status, 8, "invalid service ID");
	TEST_ASSERT_SUCCESS(drnic_ibcm_stats_get(t->p.b.dev, &st), "stats");
	TEST_ASSERT(st.rej_no_listener >= 1, "no-listener REJ counted");
	return TEST_SUCCESS;
}

static int
rnic_ibcm_reject(void)
{
	return cmt_run(cmt_reject_body, 0, DRNIC_QPT_RC, NULL, NULL);
}

/* UD through SIDR, then a datagram on the AH the CM gave. */
static int
cmt_ud_body(struct cmt *t, int round)
{
	static const char hello[] = "sidr-hello";
	struct drnic_ibcm_conn_param cp = { 0 };
	struct drnic_ibcm_id *ca, *cb, *lis;
	struct drnic_ibcm_event ev;
	struct drnic_ah_attr aa;
	struct drnic_ah *ah;
	uint32_t rqpn, qkey;

	RTE_SET_USED(round);
	if (cmt_server(t, DRNIC_IBCM_PS_UDP, DRNIC_QPT_UD, CMT_PORT, &lis) != TEST_SUCCESS ||
	    cmt_client(t, DRNIC_IBCM_PS_UDP, DRNIC_QPT_UD, CMT_PORT, &ca) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(ca, t->p.a.qp), "attach A");
	TEST_ASSERT_EQUAL(drnic_qp_state(t->p.a.qp), DRNIC_QPS_RTS, "a UD QP is ready at once");
	cp.private_data = hello;
	cp.private_data_len = sizeof(hello);
	TEST_ASSERT_SUCCESS(drnic_ibcm_connect(ca, &cp), "connect (SIDR_REQ)");
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_CONNECT_REQUEST);
	cb = cmt_track(t, ev.id);
	TEST_ASSERT(ev.listen_id == lis, "listener");
	TEST_ASSERT(memcmp(ev.param.ud.private_data, hello, sizeof(hello)) == 0,
		    "SIDR_REQ private data");
	TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(cb, t->p.b.qp), "attach B");
	TEST_ASSERT_SUCCESS(drnic_ibcm_accept(cb, NULL), "accept (SIDR_REP)");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_ESTABLISHED);
	rqpn = ev.param.ud.qp_num;
	qkey = ev.param.ud.qkey;
	TEST_ASSERT_EQUAL(rqpn, drnic_qp_num(t->p.b.qp), "server's QPN");
	TEST_ASSERT_EQUAL(qkey, DRNIC_IBCM_UDP_QKEY, "Q_Key");
	aa = ev.param.ud.ah_attr;
	ah = drnic_create_ah(t->p.a.pd, &aa);
	TEST_ASSERT(ah != NULL, "AH from the event: %s", strerror(rte_errno));
	{
		struct drnic_sge rs = { (uint64_t)(uintptr_t)t->p.b.buf, 2048,
					drnic_mr_lkey(t->p.b.mr) };
		struct drnic_sge ss = { (uint64_t)(uintptr_t)t->p.a.buf, 200,
					drnic_mr_lkey(t->p.a.mr) };
		struct drnic_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 };
		struct drnic_send_wr swr = { .wr_id = 2, .sg_list = &ss, .num_sge = 1,
					     .opcode = DRNIC_WR_SEND,
					     .send_flags = DRNIC_SEND_SIGNALED };
		struct drnic_recv_wr *brw;
		struct drnic_send_wr *bsw;
		struct drnic_wc wc;

		swr.wr.ud.ah = ah;
		swr.wr.ud.remote_qpn = rqpn;
		swr.wr.ud.remote_qkey = qkey;
		rnic_fill(t->p.a.buf, 200, 5);
		TEST_ASSERT_SUCCESS(drnic_post_recv(t->p.b.qp, &rwr, &brw), "post recv");
		TEST_ASSERT_SUCCESS(drnic_post_send(t->p.a.qp, &swr, &bsw), "post send");
		TEST_ASSERT_EQUAL(rnic_poll(&t->p.a, &wc, 1), 1, "send completion");
		TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "send status");
		TEST_ASSERT_EQUAL(rnic_poll(&t->p.b, &wc, 1), 1, "datagram delivered");
		TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "receive status");
		TEST_ASSERT_EQUAL(wc.byte_len, 40 + 200, "GRH + payload");
		TEST_ASSERT(memcmp(t->p.b.buf + 40, t->p.a.buf, 200) == 0, "datagram bytes");
	}
	TEST_ASSERT_SUCCESS(drnic_destroy_ah(ah), "destroy AH");
	return TEST_SUCCESS;
}

static int
rnic_ibcm_ud(void)
{
	return cmt_run(cmt_ud_body, 0, DRNIC_QPT_UD, NULL, NULL);
}

/* A lost REQ (round 0: the client's first RoCEv2 frame) or REP (round 1:
 * the server's first) is resent by the timers; the counters show it. */
static int
cmt_lost_round(struct cmt *t, int round)
{
	struct drnic_device *lossy = round == 0 ? t->p.a.dev : t->p.b.dev;
	struct drnic_ibcm_id *ca, *cb, *lis;
	struct drnic_link_fault_stats fs;
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_stats st;

	if (cmt_rc_connect(t, &ca, &cb, &lis) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(drnic_link_fault_stats(drnic_device_link(lossy), &fs), "faults");
	TEST_ASSERT_EQUAL(fs.dropped, 1, "one frame dropped");
	TEST_ASSERT_SUCCESS(drnic_ibcm_stats_get(lossy, &st), "stats");
	/* A lost REP goes again on the server's timer or as the answer to
	 * the client's resent REQ, whichever comes first. */
	TEST_ASSERT(st.retransmits + st.dup_answered >= 1, "%s resent",
		    round == 0 ? "REQ" : "REP");
	TEST_ASSERT(st.tx_by_attr[round == 0 ? 0 : 3] >= 2, "sent again");
	TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(ca), "disconnect");
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_DISCONNECTED);
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_DISCONNECTED);
	return TEST_SUCCESS;
}

static int
rnic_ibcm_lost(void)
{
	TEST_ASSERT_SUCCESS(cmt_run(cmt_lost_round, 0, DRNIC_QPT_RC, "fault_drop_nth=1", NULL), "lost REQ");
	TEST_ASSERT_SUCCESS(cmt_run(cmt_lost_round, 1, DRNIC_QPT_RC, NULL, "fault_drop_nth=1"), "lost REP");
	return TEST_SUCCESS;
}

/* Misuse: NULLs, a port taken twice, a channel in use, no event. */
static int
cmt_api_body(struct cmt *t, int round)
{
	struct sockaddr_in sin, other;
	struct drnic_ibcm_id *a, *b, *c;
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_channel *ch = t->ca;
	struct sockaddr_storage ss;
	int one = 1;

	RTE_SET_USED(round);
	TEST_ASSERT(drnic_ibcm_create_id(NULL, NULL, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC) == NULL &&
		    rte_errno == EINVAL, "NULL channel");
	TEST_ASSERT_EQUAL(drnic_ibcm_add_device(NULL), -EINVAL, "NULL device");
	TEST_ASSERT_EQUAL(drnic_ibcm_destroy_channel(NULL), -EINVAL, "NULL channel");
	TEST_ASSERT_EQUAL(drnic_ibcm_get_event(NULL, &ev, 0), -EINVAL, "NULL channel");
	TEST_ASSERT_EQUAL(drnic_ibcm_bind_addr(NULL, NULL), -EINVAL, "NULL id");
	TEST_ASSERT_EQUAL(drnic_ibcm_connect(NULL, NULL), -EINVAL, "NULL id");
	TEST_ASSERT_EQUAL(drnic_ibcm_destroy_id(NULL), -EINVAL, "NULL id");
	TEST_ASSERT_EQUAL(drnic_ibcm_add_device(t->p.a.dev), 0, "adding twice is a no-op");
	TEST_ASSERT(drnic_ibcm_create_id(ch, NULL, DRNIC_IBCM_PS_UDP, DRNIC_QPT_RC) == NULL &&
		    rte_errno == EINVAL, "RC in the UDP port space");
	a = cmt_track(t, drnic_ibcm_create_id(ch, NULL, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC));
	b = cmt_track(t, drnic_ibcm_create_id(ch, NULL, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC));
	c = cmt_track(t, drnic_ibcm_create_id(ch, NULL, DRNIC_IBCM_PS_UDP, DRNIC_QPT_UD));
	TEST_ASSERT(a != NULL && b != NULL && c != NULL, "create_id");
	TEST_ASSERT_EQUAL(drnic_ibcm_get_event(ch, &ev, 0), -EAGAIN, "no event");
	TEST_ASSERT_EQUAL(drnic_ibcm_get_event(ch, &ev, 20), -EAGAIN, "no event in 20 ms");
	cmt_sin(&sin, "10.0.0.1", 5000);
	cmt_sin(&other, "10.9.9.9", 5000);
	TEST_ASSERT_EQUAL(drnic_ibcm_bind_addr(a, (struct sockaddr *)&other), -EADDRNOTAVAIL,
			  "nobody owns 10.9.9.9");
	TEST_ASSERT_SUCCESS(drnic_ibcm_bind_addr(a, (struct sockaddr *)&sin), "bind");
	TEST_ASSERT_EQUAL(drnic_ibcm_bind_addr(a, (struct sockaddr *)&sin), -EINVAL, "rebind");
	TEST_ASSERT_EQUAL(drnic_ibcm_bind_addr(b, (struct sockaddr *)&sin), -EADDRINUSE,
			  "port taken");
	TEST_ASSERT_SUCCESS(drnic_ibcm_bind_addr(c, (struct sockaddr *)&sin),
			    "another port space");
	TEST_ASSERT(drnic_ibcm_id_device(a) == t->p.a.dev, "bound to its device");
	sin.sin_port = 0;
	TEST_ASSERT_SUCCESS(drnic_ibcm_bind_addr(b, (struct sockaddr *)&sin), "ephemeral");
	TEST_ASSERT_SUCCESS(drnic_ibcm_id_src_addr(b, &ss), "src");
	TEST_ASSERT(ntohs(((struct sockaddr_in *)&ss)->sin_port) >= 32768, "ephemeral port");
	TEST_ASSERT_EQUAL(drnic_ibcm_listen(NULL, 1), -EINVAL, "NULL id");
	TEST_ASSERT_EQUAL(drnic_ibcm_destroy_channel(ch), -EBUSY, "channel in use");
	cmt_destroy(t, b);
	/* REUSEADDR on both: they share the port. */
	b = cmt_track(t, drnic_ibcm_create_id(ch, NULL, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC));
	TEST_ASSERT(b != NULL, "create_id");
	TEST_ASSERT_EQUAL(drnic_ibcm_set_option(b, DRNIC_IBCM_OPT_REUSEADDR, &one, 1), -EINVAL,
			  "bad length");
	TEST_ASSERT_SUCCESS(drnic_ibcm_set_option(b, DRNIC_IBCM_OPT_REUSEADDR, &one, sizeof(one)),
			    "REUSEADDR");
	cmt_destroy(t, a);
	a = cmt_track(t, drnic_ibcm_create_id(ch, NULL, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC));
	TEST_ASSERT_SUCCESS(drnic_ibcm_set_option(a, DRNIC_IBCM_OPT_REUSEADDR, &one, sizeof(one)),
			    "REUSEADDR");
	sin.sin_port = htons(5001);
	TEST_ASSERT_SUCCESS(drnic_ibcm_bind_addr(a, (struct sockaddr *)&sin), "bind");
	TEST_ASSERT_SUCCESS(drnic_ibcm_bind_addr(b, (struct sockaddr *)&sin), "shared port");
	TEST_ASSERT_SUCCESS(drnic_ibcm_listen(a, 1), "listen");
	TEST_ASSERT_EQUAL(drnic_ibcm_listen(b, 1), -EADDRINUSE, "two listeners");
	/* Device removal: every id on it hears DEVICE_REMOVAL. */
	TEST_ASSERT_SUCCESS(drnic_ibcm_remove_device(t->p.a.dev), "remove");
	t->added_a = false;
	TEST_ASSERT_EQUAL(drnic_ibcm_remove_device(t->p.a.dev), -ENOENT, "removed already");
	TEST_ASSERT_SUCCESS(drnic_ibcm_get_event(ch, &ev, 0), "an event");
	TEST_ASSERT_EQUAL(ev.event, DRNIC_IBCM_EVENT_DEVICE_REMOVAL, "device removal");
	cmt_destroy(t, a);
	cmt_destroy(t, b);
	cmt_destroy(t, c);
	/* The events of destroyed ids are gone with them. */
	TEST_ASSERT_EQUAL(drnic_ibcm_get_event(ch, &ev, 0), -EAGAIN, "no event left");
	return TEST_SUCCESS;
}

static int
rnic_ibcm_api(void)
{
	return cmt_run(cmt_api_body, 0, DRNIC_QPT_RC, NULL, NULL);
}

/*
 * The native API's connection set-up time (suite perf: it prints, and
 * asserts only that every step worked): CMR_CONNS RC connections between
 * the two devices, each step for all of them before the next, as rdmacm's
 * cmtime times them, with the engines on their own lcore (the agent threads
 * sleep on their fds). A connection is three MADs (REQ, REP, RTU) over the
 * loopback link: its floors, measured first in the same run on the same
 * lcores, are the link's round trip and an rte_ring round trip.
 */
#define CMR_CONNS 100
#define CMR_PORT  7490

/* Nanoseconds on the TSC (the floors' clock too). */
static uint64_t
cmr_ns(void)
{
	return (uint64_t)((double)rte_rdtsc() * 1e9 / (double)rte_get_tsc_hz());
}

/* The next event of either channel (A's first), within CMT_WAIT_MS. */
static int
cmr_event(struct cmt *t, struct drnic_ibcm_event *ev, bool *on_a)
{
	struct pollfd pfd[2] = {
		{ .fd = drnic_ibcm_channel_fd(t->ca), .events = POLLIN },
		{ .fd = drnic_ibcm_channel_fd(t->cb), .events = POLLIN },
	};

	for (;;) {
		if (drnic_ibcm_get_event(t->ca, ev, 0) == 0) {
			*on_a = true;
			return 0;
		}
		if (drnic_ibcm_get_event(t->cb, ev, 0) == 0) {
			*on_a = false;
			return 0;
		}
		if (poll(pfd, 2, CMT_WAIT_MS) <= 0)
			return -EAGAIN;
	}
}

/* @p n events of @p type on @p ch, each with status 0. */
static int
cmr_expect_n(struct drnic_ibcm_channel *ch, enum drnic_ibcm_event_type type, unsigned int n)
{
	struct drnic_ibcm_event ev;
	unsigned int i;

	for (i = 0; i < n; i++) {
		CMT_EXPECT(ch, &ev, type);
		TEST_ASSERT_EQUAL(ev.status, 0, "%s status", drnic_ibcm_event_str(type));
	}
	return TEST_SUCCESS;
}

struct cmr_run {
	struct drnic_ibcm_id *cli[CMR_CONNS], *srv[CMR_CONNS], *lis;
	struct drnic_qp *qa[CMR_CONNS], *qb[CMR_CONNS];
	uint64_t ns[7];
};

static const char *const cmr_steps[] = {
	"create id", "resolve addr", "resolve route", "create qp", "connect", "disconnect",
	"destroy",
};

static struct drnic_qp *
cmr_qp(struct rnic_side *s)
{
	struct drnic_qp_init_attr qa = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = DRNIC_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return drnic_create_qp(s->pd, &qa);
}

static int
cmr_body(struct cmt *t, struct cmr_run *r)
{
	struct drnic_ibcm_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
					    .retry_count = 7, .rnr_retry_count = 7 };
	struct sockaddr_in src, dst;
	struct drnic_ibcm_event ev;
	unsigned int i, req = 0, est_a = 0, est_b = 0, dis_a = 0, dis_b = 0;
	uint64_t t0;
	bool on_a;

	cmt_sin(&src, "10.0.0.1", 0);
	cmt_sin(&dst, "10.0.0.2", CMR_PORT);
	r->lis = drnic_ibcm_create_id(t->cb, NULL, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC);
	TEST_ASSERT(r->lis != NULL, "listener id");
	TEST_ASSERT_SUCCESS(drnic_ibcm_bind_addr(r->lis, (struct sockaddr *)&dst), "bind");
	TEST_ASSERT_SUCCESS(drnic_ibcm_listen(r->lis, CMR_CONNS), "listen");

	t0 = cmr_ns();
	for (i = 0; i < CMR_CONNS; i++) {
		r->cli[i] = drnic_ibcm_create_id(t->ca, NULL, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC);
		TEST_ASSERT(r->cli[i] != NULL, "create_id %u: %s", i, strerror(rte_errno));
	}
	r->ns[0] = cmr_ns() - t0;

	t0 = cmr_ns();
	for (i = 0; i < CMR_CONNS; i++)
		TEST_ASSERT_SUCCESS(drnic_ibcm_resolve_addr(r->cli[i], (struct sockaddr *)&src,
							    (struct sockaddr *)&dst, 2000),
				    "resolve_addr %u", i);
	if (cmr_expect_n(t->ca, DRNIC_IBCM_EVENT_ADDR_RESOLVED, CMR_CONNS) != TEST_SUCCESS)
		return TEST_FAILED;
	r->ns[1] = cmr_ns() - t0;

	t0 = cmr_ns();
	for (i = 0; i < CMR_CONNS; i++)
		TEST_ASSERT_SUCCESS(drnic_ibcm_resolve_route(r->cli[i], 2000), "resolve_route %u", i);
	if (cmr_expect_n(t->ca, DRNIC_IBCM_EVENT_ROUTE_RESOLVED, CMR_CONNS) != TEST_SUCCESS)
		return TEST_FAILED;
	r->ns[2] = cmr_ns() - t0;

	t0 = cmr_ns();
	for (i = 0; i < CMR_CONNS; i++) {
		r->qa[i] = cmr_qp(&t->p.a);
		r->qb[i] = cmr_qp(&t->p.b);
		TEST_ASSERT(r->qa[i] != NULL && r->qb[i] != NULL, "create_qp %u", i);
		TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(r->cli[i], r->qa[i]), "attach %u", i);
	}
	r->ns[3] = cmr_ns() - t0;

	/* Connect: the server accepts each request as it comes (with its own
	 * QP); done when both sides have every connection ESTABLISHED. */
	t0 = cmr_ns();
	for (i = 0; i < CMR_CONNS; i++)
		TEST_ASSERT_SUCCESS(drnic_ibcm_connect(r->cli[i], &cp), "connect %u", i);
	while (est_a < CMR_CONNS || est_b < CMR_CONNS) {
		TEST_ASSERT_SUCCESS(cmr_event(t, &ev, &on_a),
				    "no event: %u requests, %u/%u established", req, est_a, est_b);
		TEST_ASSERT_EQUAL(ev.status, 0, "%s status", drnic_ibcm_event_str(ev.event));
		if (!on_a && ev.event == DRNIC_IBCM_EVENT_CONNECT_REQUEST) {
			TEST_ASSERT(req < CMR_CONNS, "more requests than connects");
			r->srv[req] = ev.id;
			TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(ev.id, r->qb[req]), "attach B");
			TEST_ASSERT_SUCCESS(drnic_ibcm_accept(ev.id, &cp), "accept %u", req);
			req++;
		} else if (ev.event == DRNIC_IBCM_EVENT_ESTABLISHED) {
			if (on_a)
				est_a++;
			else
				est_b++;
		} else {
			TEST_ASSERT(false, "unexpected %s", drnic_ibcm_event_str(ev.event));
		}
	}
	r->ns[4] = cmr_ns() - t0;

	t0 = cmr_ns();
	for (i = 0; i < CMR_CONNS; i++)
		TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(r->cli[i]), "disconnect %u", i);
	while (dis_a < CMR_CONNS || dis_b < CMR_CONNS) {
		TEST_ASSERT_SUCCESS(cmr_event(t, &ev, &on_a), "no event: %u/%u disconnected",
				    dis_a, dis_b);
		TEST_ASSERT(ev.event == DRNIC_IBCM_EVENT_DISCONNECTED, "unexpected %s",
			    drnic_ibcm_event_str(ev.event));
		if (on_a) {
			dis_a++;
		} else {
			TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(ev.id), "server's disconnect");
			dis_b++;
		}
	}
	r->ns[5] = cmr_ns() - t0;

	t0 = cmr_ns();
	for (i = 0; i < CMR_CONNS; i++) {
		TEST_ASSERT_SUCCESS(drnic_ibcm_destroy_id(r->cli[i]), "destroy %u", i);
		TEST_ASSERT_SUCCESS(drnic_ibcm_destroy_id(r->srv[i]), "destroy server's %u", i);
		r->cli[i] = r->srv[i] = NULL;
		TEST_ASSERT_SUCCESS(drnic_destroy_qp(r->qa[i]), "destroy qp %u", i);
		TEST_ASSERT_SUCCESS(drnic_destroy_qp(r->qb[i]), "destroy qp %u", i);
		r->qa[i] = r->qb[i] = NULL;
	}
	r->ns[6] = cmr_ns() - t0;
	return TEST_SUCCESS;
}

/* The floors, before the devices take the worker lcore: medians in ns. */
static int
cmr_floors(unsigned int peer, double *ring_ns, double *link_ns)
{
	enum { ITERS = 20000 };
	uint64_t *samples = calloc(ITERS, sizeof(*samples));
	struct perf_lat lat;
	double mpps;
	int rc;

	if (samples == NULL)
		return -ENOMEM;
	rc = perf_floor_ring_rtt(peer, samples, ITERS);
	if (rc == 0)
		rc = perf_lat_compute(samples, ITERS, 1, rte_get_tsc_hz(), &lat);
	*ring_ns = lat.typical_us * 1e3;
	if (rc == 0)
		rc = perf_floor_link_rtt(peer, 64, samples, ITERS, &mpps);
	if (rc == 0)
		rc = perf_lat_compute(samples, ITERS, 1, rte_get_tsc_hz(), &lat);
	*link_ns = lat.typical_us * 1e3;
	free(samples);
	return rc;
}

static int
perf_ibcm_rate(void)
{
	unsigned int peer = rte_get_next_lcore(-1, 1, 0), i;
	struct cmr_run *r;
	struct cmt t;
	double ring_ns = 0, link_ns = 0, setup_ns;
	int rc;

	if (peer >= RTE_MAX_LCORE)
		TEST_SKIP("needs a worker lcore for the engine and the floors' peer");
	TEST_ASSERT_SUCCESS(cmr_floors(peer, &ring_ns, &link_ns), "floors");
	r = calloc(1, sizeof(*r));
	TEST_ASSERT(r != NULL, "memory");
	cmt_mode = DRNIC_PROGRESS_DEDICATED;
	rc = cmt_open(&t, DRNIC_QPT_RC, NULL, NULL);
	cmt_mode = DRNIC_PROGRESS_INLINE;
	if (rc < 0) {
		free(r);
		return TEST_FAILED;
	}
	rc = cmr_body(&t, r);
	for (i = 0; i < CMR_CONNS; i++) {
		if (r->cli[i] != NULL)
			drnic_ibcm_destroy_id(r->cli[i]);
		if (r->srv[i] != NULL)
			drnic_ibcm_destroy_id(r->srv[i]);
		if (r->qa[i] != NULL)
			drnic_destroy_qp(r->qa[i]);
		if (r->qb[i] != NULL)
			drnic_destroy_qp(r->qb[i]);
	}
	if (r->lis != NULL)
		drnic_ibcm_destroy_id(r->lis);
	cmt_close(&t);
	if (rc == TEST_SUCCESS) {
		printf("native CM API (drnic_ibcm.h), %u RC connections between two devices on the\n"
		       "loopback link, engines on lcore %u, each step for every connection in turn:\n"
		       "  %-14s %10s %10s\n", CMR_CONNS, peer, "step", "total ms", "us/conn");
		for (i = 0; i < RTE_DIM(cmr_steps); i++)
			printf("  %-14s %10.2f %10.2f\n", cmr_steps[i], r->ns[i] / 1e6,
			       r->ns[i] / 1e3 / CMR_CONNS);
		setup_ns = (double)(r->ns[1] + r->ns[2] + r->ns[4]) / CMR_CONNS;
		printf("  set-up (resolve addr + route + connect): %.2f us/conn, %.0f conn/s\n"
		       "floors (same run, lcore %u <-> %u): loopback link round trip %.0f ns, "
		       "rte_ring round trip %.0f ns\n"
		       "ratio: set-up per connection / link round trip %.1f (a connection is 3 MADs,"
		       " 1.5 round trips)\n",
		       setup_ns / 1e3, 1e9 / setup_ns, rte_lcore_id(), peer, link_ns, ring_ns,
		       setup_ns / link_ns);
	}
	free(r);
	return rc;
}

/*
 * A peer that vanishes: B's CM goes away without a word (removed from the
 * CM, its QP 1 gone: what reaches it is dropped). A's DREQ is resent until
 * the CM gives up, and A hears DISCONNECTED with -ETIMEDOUT; a REQ to B is
 * resent as often and ends UNREACHABLE with -ETIMEDOUT, A's QP in ERR.
 * Never a hang: each after 16 sends CMT_RESEND_MS apart (the response
 * timeout, 67 ms here, and twice RoCE's packet life time, 268 ms: 9.7 s).
 */
#define CMT_RESEND_MS 604
#define CMT_GIVE_UP_MS (16 * CMT_RESEND_MS + 5000)
static int
cmt_vanish_body(struct cmt *t, int round)
{
	struct drnic_ibcm_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct drnic_ibcm_id *ca, *cb, *lis, *c2;
	struct drnic_ibcm_stats before, after;
	struct drnic_ibcm_event ev;
	struct drnic_qp *qp2;
	int rc;

	RTE_SET_USED(round);
	if (cmt_rc_connect(t, &ca, &cb, &lis) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(drnic_ibcm_remove_device(t->p.b.dev), "B's CM goes");
	t->added_b = false;
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_DEVICE_REMOVAL);

	TEST_ASSERT_SUCCESS(drnic_ibcm_stats_get(t->p.a.dev, &before), "stats");
	TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(ca), "disconnect");
	TEST_ASSERT_EQUAL(drnic_qp_state(t->p.a.qp), DRNIC_QPS_ERR, "A's QP");
	TEST_ASSERT_SUCCESS(cmt_event_ms(t->ca, &ev, CMT_GIVE_UP_MS), "no event after the DREQs");
	TEST_ASSERT(ev.event == DRNIC_IBCM_EVENT_DISCONNECTED && ev.id == ca, "got %s",
		    drnic_ibcm_event_str(ev.event));
	TEST_ASSERT_EQUAL(ev.status, -ETIMEDOUT, "no DREP: timed out");
	TEST_ASSERT_SUCCESS(drnic_ibcm_stats_get(t->p.a.dev, &after), "stats");
	TEST_ASSERT_EQUAL(after.tx_by_attr[5] - before.tx_by_attr[5], 16,
			  "the DREQ and its 15 resends");
	TEST_ASSERT_EQUAL(after.timeouts - before.timeouts, 1, "one timeout");
	/* The connection's time-wait ends as after any disconnect. */
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_TIMEWAIT_EXIT);
	TEST_ASSERT(ev.id == ca, "A's id");

	/* A new connection to the vanished peer. */
	c2 = NULL;
	if (cmt_client(t, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC, CMT_PORT, &c2) != TEST_SUCCESS)
		return TEST_FAILED;
	qp2 = cmr_qp(&t->p.a);
	TEST_ASSERT(qp2 != NULL, "second QP");
	rc = drnic_ibcm_attach_qp(c2, qp2);
	if (rc == 0)
		rc = drnic_ibcm_connect(c2, &cp);
	if (rc == 0)
		rc = cmt_event_ms(t->ca, &ev, CMT_GIVE_UP_MS);
	if (rc == 0 && (ev.event != DRNIC_IBCM_EVENT_UNREACHABLE || ev.status != -ETIMEDOUT ||
			drnic_qp_state(qp2) != DRNIC_QPS_ERR))
		rc = -EPROTO;
	TEST_ASSERT_SUCCESS(drnic_ibcm_stats_get(t->p.a.dev, &before), "stats");
	cmt_destroy(t, c2);
	drnic_destroy_qp(qp2);
	TEST_ASSERT_SUCCESS(rc, "REQ to a vanished peer: %s status %d",
			    drnic_ibcm_event_str(ev.event), ev.status);
	TEST_ASSERT_EQUAL(before.tx_by_attr[0] - after.tx_by_attr[0], 16,
			  "the REQ and its 15 resends");
	TEST_ASSERT_EQUAL(before.timeouts - after.timeouts, 1, "one timeout");
	return TEST_SUCCESS;
}

/*
 * IPv6: the client resolves fd00::2 (neighbour discovery on the link, GID
 * index 1), connects with the RDMA CM IP header of version 6, the server
 * sees the client's IPv6 address, and a SEND goes through.
 */
static int
cmt_ipv6_body(struct cmt *t, int round)
{
	struct drnic_ibcm_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct sockaddr_in6 src = { .sin6_family = AF_INET6 }, dst, lis_sa;
	struct drnic_ibcm_id *ca, *cb, *lis;
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_route rt;
	struct sockaddr_storage ss;
	struct sockaddr_in6 peer;
	struct drnic_wc wc;

	RTE_SET_USED(round);
	inet_pton(AF_INET6, "fd00::1", &src.sin6_addr);
	dst = src;
	inet_pton(AF_INET6, "fd00::2", &dst.sin6_addr);
	dst.sin6_port = htons(CMT_PORT);
	lis_sa = dst;
	lis = cmt_track(t, drnic_ibcm_create_id(t->cb, t, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC));
	TEST_ASSERT(lis != NULL, "listener");
	TEST_ASSERT_SUCCESS(drnic_ibcm_bind_addr(lis, (struct sockaddr *)&lis_sa), "bind fd00::2");
	TEST_ASSERT_SUCCESS(drnic_ibcm_listen(lis, 1), "listen");

	ca = cmt_track(t, drnic_ibcm_create_id(t->ca, t, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC));
	TEST_ASSERT(ca != NULL, "client id");
	TEST_ASSERT_SUCCESS(drnic_ibcm_resolve_addr(ca, (struct sockaddr *)&src,
						    (struct sockaddr *)&dst, 2000), "resolve");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_ADDR_RESOLVED);
	TEST_ASSERT(drnic_ibcm_id_device(ca) == t->p.a.dev, "A's device");
	TEST_ASSERT_SUCCESS(drnic_ibcm_resolve_route(ca, 2000), "route");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_ROUTE_RESOLVED);
	TEST_ASSERT_SUCCESS(drnic_ibcm_id_route(ca, &rt), "route");
	TEST_ASSERT(memcmp(rt.dgid.raw, &dst.sin6_addr, 16) == 0, "destination GID is fd00::2");
	TEST_ASSERT(memcmp(rt.sgid.raw, &src.sin6_addr, 16) == 0, "source GID is fd00::1");
	TEST_ASSERT_EQUAL(rt.sgid_index, 1, "GID index of fd00::1");
	TEST_ASSERT(memcmp(rt.dmac, "\x02\x00\x00\x00\x00\x02", 6) == 0, "B's MAC (ND)");
	TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(ca, t->p.a.qp), "attach A");
	TEST_ASSERT_SUCCESS(drnic_ibcm_connect(ca, &cp), "connect");

	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_CONNECT_REQUEST);
	cb = cmt_track(t, ev.id);
	TEST_ASSERT_SUCCESS(drnic_ibcm_id_dst_addr(cb, &ss), "server's peer address");
	TEST_ASSERT_EQUAL(ss.ss_family, AF_INET6, "family");
	memcpy(&peer, &ss, sizeof(peer));
	TEST_ASSERT(memcmp(&peer.sin6_addr, &src.sin6_addr, 16) == 0, "the client's fd00::1");
	TEST_ASSERT_SUCCESS(drnic_ibcm_attach_qp(cb, t->p.b.qp), "attach B");
	TEST_ASSERT_SUCCESS(drnic_ibcm_accept(cb, &cp), "accept");
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_ESTABLISHED);
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_ESTABLISHED);
	{
		struct drnic_sge rs = { (uint64_t)(uintptr_t)t->p.b.buf, 4096,
					drnic_mr_lkey(t->p.b.mr) };
		struct drnic_sge sg = { (uint64_t)(uintptr_t)t->p.a.buf, 3000,
					drnic_mr_lkey(t->p.a.mr) };
		struct drnic_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 };
		struct drnic_send_wr swr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1,
					     .opcode = DRNIC_WR_SEND,
					     .send_flags = DRNIC_SEND_SIGNALED };
		struct drnic_recv_wr *brw;
		struct drnic_send_wr *bsw;

		rnic_fill(t->p.a.buf, 3000, 23);
		TEST_ASSERT_SUCCESS(drnic_post_recv(t->p.b.qp, &rwr, &brw), "post recv");
		TEST_ASSERT_SUCCESS(drnic_post_send(t->p.a.qp, &swr, &bsw), "post send");
		TEST_ASSERT_EQUAL(rnic_poll(&t->p.a, &wc, 1), 1, "send completion");
		TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "send status");
		TEST_ASSERT_EQUAL(rnic_poll(&t->p.b, &wc, 1), 1, "receive completion");
		TEST_ASSERT_EQUAL(wc.byte_len, 3000, "received length");
		TEST_ASSERT(memcmp(t->p.b.buf, t->p.a.buf, 3000) == 0, "SEND bytes");
	}
	TEST_ASSERT_SUCCESS(drnic_ibcm_disconnect(ca), "disconnect");
	CMT_EXPECT(t->cb, &ev, DRNIC_IBCM_EVENT_DISCONNECTED);
	CMT_EXPECT(t->ca, &ev, DRNIC_IBCM_EVENT_DISCONNECTED);
	return TEST_SUCCESS;
}

static int
rnic_ibcm_ipv6(void)
{
	return cmt_run(cmt_ipv6_body, 0, DRNIC_QPT_RC, NULL, NULL);
}

static int
rnic_ibcm_vanish(void)
{
	return cmt_run(cmt_vanish_body, 0, DRNIC_QPT_RC, NULL, NULL);
}

/* How many times each channel's memory was given back. */
static unsigned int cmt_released[2 * DRNIC_IBCM_CHANNELS_KEPT + 1];

static void
cmt_on_release(void *arg)
{
	(*(unsigned int *)arg)++;
}

/*
 * A destroyed channel outlives its destroy for the next 16
 * (DRNIC_IBCM_CHANNELS_KEPT): a get_event
 * that comes after it (an rdma_cm program's event thread, never joined)
 * finds it dead, not freed: timeout 0 fails EAGAIN, a timeout is waited
 * out, and its fd is still open. Then it is given back, once, with the
 * release callback that a wrapper's memory rides on (the drop-in
 * librdmacm's channel). Before, the destroy freed it at once, and the
 * late get_event read freed memory (ibv_api_check's late rdma_cm call
 * died of it).
 */
static int
rnic_ibcm_channel_grave(void)
{
	struct drnic_ibcm_channel *ch[RTE_DIM(cmt_released)];
	struct drnic_ibcm_event ev;
	unsigned int i, kept = DRNIC_IBCM_CHANNELS_KEPT;
	uint64_t t0;
	int fd;

	memset(cmt_released, 0, sizeof(cmt_released));
	for (i = 0; i < RTE_DIM(ch); i++) {
		ch[i] = drnic_ibcm_create_channel();
		TEST_ASSERT(ch[i] != NULL, "channel %u: %s", i, rte_strerror(rte_errno));
		drnic_ibcm_channel_on_release(ch[i], cmt_on_release, &cmt_released[i]);
	}
	/* The first ones push out what earlier tests left. */
	for (i = 0; i < kept; i++)
		TEST_ASSERT_SUCCESS(drnic_ibcm_destroy_channel(ch[i]), "destroy %u", i);
	for (i = 0; i < kept; i++)
		TEST_ASSERT_EQUAL(cmt_released[i], 0, "channel %u kept after its destroy", i);
	fd = drnic_ibcm_channel_fd(ch[kept - 1]);
	TEST_ASSERT_EQUAL(drnic_ibcm_get_event(ch[kept - 1], &ev, 0), -EAGAIN,
			  "get_event after the destroy: EAGAIN");
	t0 = rte_get_timer_cycles();
	TEST_ASSERT_EQUAL(drnic_ibcm_get_event(ch[kept - 1], &ev, 30), -EAGAIN,
			  "get_event after the destroy, 30 ms: EAGAIN");
	TEST_ASSERT(rte_get_timer_cycles() - t0 >= rte_get_timer_hz() * 29 / 1000,
		    "... after its timeout");
	TEST_ASSERT(fd >= 0 && fcntl(fd, F_GETFD) >= 0, "its fd still open");
	/* Each later destroy gives back the oldest kept, once. */
	for (i = kept; i < RTE_DIM(ch); i++) {
		TEST_ASSERT_SUCCESS(drnic_ibcm_destroy_channel(ch[i]), "destroy %u", i);
		TEST_ASSERT_EQUAL(cmt_released[i - kept], 1, "channel %u given back", i - kept);
		TEST_ASSERT_EQUAL(cmt_released[i - kept + 1], 0, "channel %u kept",
				  i - kept + 1);
	}
	for (i = 0; i < RTE_DIM(ch); i++)
		TEST_ASSERT(cmt_released[i] <= 1, "channel %u given back once", i);
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(rnic_ibcm_rc_autotest, DRNIC_TEST_FAST, rnic_ibcm_rc);
DRNIC_TEST_REGISTER(rnic_ibcm_rc_dedicated_autotest, DRNIC_TEST_FAST, rnic_ibcm_rc_dedicated);
DRNIC_TEST_REGISTER(rnic_ibcm_disconnect_autotest, DRNIC_TEST_FAST, rnic_ibcm_disconnect);
DRNIC_TEST_REGISTER(rnic_ibcm_reject_autotest, DRNIC_TEST_FAST, rnic_ibcm_reject);
DRNIC_TEST_REGISTER(rnic_ibcm_ud_autotest, DRNIC_TEST_FAST, rnic_ibcm_ud);
DRNIC_TEST_REGISTER(rnic_ibcm_lost_autotest, DRNIC_TEST_FAST, rnic_ibcm_lost);
DRNIC_TEST_REGISTER(rnic_ibcm_api_autotest, DRNIC_TEST_FAST, rnic_ibcm_api);
DRNIC_TEST_REGISTER(rnic_ibcm_ipv6_autotest, DRNIC_TEST_FAST, rnic_ibcm_ipv6);
DRNIC_TEST_REGISTER(rnic_ibcm_vanish_autotest, DRNIC_TEST_FAST, rnic_ibcm_vanish);
DRNIC_TEST_REGISTER(rnic_ibcm_channel_grave_autotest, DRNIC_TEST_FAST, rnic_ibcm_channel_grave);
DRNIC_TEST_REGISTER(perf_ibcm_rate_autotest, DRNIC_TEST_PERF, perf_ibcm_rate);
