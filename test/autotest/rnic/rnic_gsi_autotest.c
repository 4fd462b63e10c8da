/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GSI agent (lib/ibcm/ibcm_gsi.c) and QP 1 on the loopback wire, in
 * both progress modes.
 *
 * First, QP 1 itself: device A gets a bare QP 1 (verbs_create_gsi_qp(),
 * the verbs contract; a second one is EBUSY, a Q_Key other than the GSI's
 * refused), device B a GSI agent (a second agent EBUSY). From A's QP 1,
 * sends naming the controlled Q_Key go out with the GSI's: B's agent hands
 * a CM REQ to its callback byte for byte, with the sender's GID (IPv4 and
 * IPv6) and QP 1; answers Get(ClassPortInfo) of the CM class (A parses the
 * GetResp: same TID, RespTimeValue 18); answers a Get and a Set of an
 * unknown class with status 0x0004; drops a GetResp, a Send and a Get of
 * the subnet manager's class; counts datagrams of 0, 100 and 1024 bytes and
 * a MAD of base version 2 malformed, and keeps working. A user UD QP's
 * datagrams to QP 1 carry its own Q_Key and are dropped (the port's
 * qkey_viol_cntr). An ordinary QP is never numbered 0 or 1, even when the
 * allocator starts there.
 *
 * Then two agents: A's QP 1 destroyed, A opens an agent: MADs both ways,
 * the answer addressed from the callback's peer; every send buffer in
 * flight gives -ENOBUFS; in dedicated mode the agent's fd wakes. With
 * inline progress the MAD exchange is mirrored into a pcapng file that
 * tshark must decode without a malformed frame or a warning, as
 * InfiniBand MADs with CM attributes (skipped without tshark). After
 * close, nothing reaches the closed agent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>

#include "drnic_cq.h"
#include "drnic_link.h"
#include "drnic_link_capture.h"
#include "drnic_mad.h"
#include "ibcm_gsi.h"
#include "verbs_objects.h"

#include "test.h"
#include "rnic_fixture.h"

#define GSI_SLOT 2048              /* bytes of A's buffer per send / receive */
#define GSI_GRH 40
#define GSI_RAW_RECV_BASE 64       /* A's QP 1 receives into slots 64.. */
#define GSI_RAW_NB_RECV 16
#define GSI_CLASS_UNKNOWN 0x2A
#define GSI_TID 0x00C0FFEE00000000ull

/* What an agent's callback got. */
struct gsi_rx {
	unsigned int n;
	uint8_t mad[DRNIC_MAD_LEN];
	size_t len;
	struct ibcm_peer src;
};

struct gsi_ctx {
	struct rnic_pair p;
	struct drnic_qp *raw;      /* A's bare QP 1 */
	struct ibcm_gsi *ga, *gb;
	struct gsi_rx rxa, rxb;
	struct drnic_ah *ah;       /* the user QP's, to B */
	struct drnic_wc wc[64];    /* completions of A's CQ not yet looked at */
	int nwc;
	union drnic_gid gid_a, gid_b, gid6_a, gid6_b;
	char pcap[64];
};

static void
gsi_rx_cb(void *ctx, const uint8_t *mad, size_t len, const struct ibcm_peer *src)
{
	struct gsi_rx *r = ctx;

	r->n++;
	r->len = len;
	memcpy(r->mad, mad, RTE_MIN(len, sizeof(r->mad)));
	r->src = *src;
}

/* One step: each agent's process(), A's CQ into c->wc. */
static int
gsi_step(struct gsi_ctx *c)
{
	int n;

	if (c->ga != NULL && ibcm_gsi_process(c->ga) < 0)
		return -1;
	if (c->gb != NULL && ibcm_gsi_process(c->gb) < 0)
		return -1;
	n = drnic_cq_poll(c->p.a.cq, (int)RTE_DIM(c->wc) - c->nwc, c->wc + c->nwc);
	if (n < 0)
		return -1;
	c->nwc += n;
	drnic_device_progress(c->p.a.dev);
	return 0;
}

/* Step until *@p counter reaches @p want (5 s); 0 or -1. */
static int
gsi_wait(struct gsi_ctx *c, const volatile unsigned int *counter, unsigned int want)
{
	uint64_t deadline = rnic_now_ms() + 5000;

	while (*counter < want)
		if (gsi_step(c) < 0 || rnic_now_ms() > deadline)
			return -1;
	return 0;
}

/* Step for @p ms milliseconds. */
static int
gsi_idle(struct gsi_ctx *c, unsigned int ms)
{
	uint64_t deadline = rnic_now_ms() + ms;

	while (rnic_now_ms() < deadline)
		if (gsi_step(c) < 0)
			return -1;
	return 0;
}

/* Take A's completion of QP @p qpn with opcode @p op (stepping, 5 s). */
static int
gsi_take_wc(struct gsi_ctx *c, uint32_t qpn, enum drnic_wc_opcode op, struct drnic_wc *out)
{
	uint64_t deadline = rnic_now_ms() + 5000;
	int i;

	for (;;) {
		for (i = 0; i < c->nwc; i++) {
			if (c->wc[i].qp_num != qpn ||
			    (c->wc[i].status == DRNIC_WC_SUCCESS && c->wc[i].opcode != op))
				continue;
			*out = c->wc[i];
			memmove(&c->wc[i], &c->wc[i + 1], sizeof(c->wc[0]) * (size_t)(c->nwc - i - 1));
			c->nwc--;
			return 0;
		}
		if (gsi_step(c) < 0 || rnic_now_ms() > deadline)
			return -1;
	}
}

static uint8_t *
gsi_slot(struct gsi_ctx *c, uint32_t slot)
{
	return c->p.a.buf + (size_t)slot * GSI_SLOT;
}

/* Post receive @p slot on A's QP 1. */
static int
gsi_raw_post_recv(struct gsi_ctx *c, uint32_t slot)
{
	struct drnic_sge sge = { (uintptr_t)gsi_slot(c, slot), GSI_SLOT, drnic_mr_lkey(c->p.a.mr) };
	struct drnic_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(gsi_slot(c, slot), 0xEE, GSI_SLOT);
	return drnic_post_recv(c->raw, &wr, &bad);
}

/* Send @p len bytes of @p data from A's @p qp (slot @p slot) to B's QP 1
 * with @p qkey and wait for its completion. */
static int
gsi_raw_send(struct gsi_ctx *c, struct drnic_qp *qp, uint32_t slot, const void *data,
	     uint32_t len, uint32_t qkey)
{
	struct drnic_sge sge = { (uintptr_t)gsi_slot(c, slot), len, drnic_mr_lkey(c->p.a.mr) };
	struct drnic_send_wr wr, *bad;
	struct drnic_wc wc;

	memcpy(gsi_slot(c, slot), data, len);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_SEND;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.ud.ah = c->ah;
	wr.wr.ud.remote_qpn = DRNIC_MAD_GSI_QPN;
	wr.wr.ud.remote_qkey = qkey;
	TEST_ASSERT_SUCCESS(drnic_post_send(qp, &wr, &bad), "post_send");
	TEST_ASSERT_SUCCESS(gsi_take_wc(c, drnic_qp_num(qp), DRNIC_WC_SEND, &wc), "send WC");
	TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS, "send: %s", drnic_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

/* A MAD with header @p class / @p r / @p method, TID @p tid, attribute
 * @p attr, the data area filled. */
static void
gsi_mad(uint8_t *mad, uint8_t class, uint8_t r, uint8_t method, uint64_t tid, uint16_t attr)
{
	struct drnic_mad_hdr h = {
		.base_version = DRNIC_MAD_BASE_VERSION, .mgmt_class = class,
		.class_version = class == DRNIC_MAD_CLASS_CM ? DRNIC_MAD_CM_CLASS_VERSION : 1,
		.r = r, .method = method, .tid = tid, .attr_id = attr,
	};

	memset(mad, 0, DRNIC_MAD_LEN);
	rnic_fill(mad + DRNIC_MAD_HDR_LEN, DRNIC_MAD_DATA_LEN, (uint32_t)tid);
	(void)drnic_mad_hdr_build(mad, DRNIC_MAD_LEN, &h);
}

/* A CM REQ from @p from (GID) to @p to, as the RDMA CM's TCP port space. */
static int
gsi_req(uint8_t *mad, uint64_t tid, const union drnic_gid *from, const union drnic_gid *to)
{
	struct drnic_rdma_cm_hdr ch = { 0 };
	struct drnic_mad_cm m;

	memset(&m, 0, sizeof(m));
	m.hdr.base_version = DRNIC_MAD_BASE_VERSION;
	m.hdr.mgmt_class = DRNIC_MAD_CLASS_CM;
	m.hdr.class_version = DRNIC_MAD_CM_CLASS_VERSION;
	m.hdr.method = DRNIC_MAD_METHOD_SEND;
	m.hdr.tid = tid;
	m.hdr.attr_id = DRNIC_MAD_CM_REQ;
	m.known = true;
	m.req.local_comm_id = 0x11223344;
	m.req.service_id = 0x0000000001060000ull | 7471;
	m.req.local_ca_guid = 0x0200000000000001ull;
	m.req.local_qpn = 0x123;
	m.req.responder_resources = 16;
	m.req.initiator_depth = 16;
	m.req.remote_cm_resp_timeout = 20;
	m.req.starting_psn = 0x456;
	m.req.local_cm_resp_timeout = 20;
	m.req.retry_count = 7;
	m.req.pkey = 0xFFFF;
	m.req.path_mtu = 3;
	m.req.rnr_retry_count = 7;
	m.req.max_cm_retries = 15;
	m.req.primary.local_lid = 0xFFFF;
	m.req.primary.remote_lid = 0xFFFF;
	memcpy(m.req.primary.local_gid, from->raw, 16);
	memcpy(m.req.primary.remote_gid, to->raw, 16);
	m.req.primary.hop_limit = 64;
	m.req.primary.packet_rate = 3;
	m.req.primary.local_ack_timeout = 14;
	/* The RDMA CM's header in the private data (tshark decodes it). */
	ch.cma_version = DRNIC_RDMA_CM_HDR_VERSION;
	ch.ip_version = from->raw[10] == 0xFF ? 4 : 6;
	ch.port = 40000;
	memcpy(ch.src_addr, from->raw, 16);
	memcpy(ch.dst_addr, to->raw, 16);
	rnic_fill(m.req.private_data, sizeof(m.req.private_data), 5);
	if (drnic_rdma_cm_hdr_build(&ch, m.req.private_data, sizeof(m.req.private_data)) < 0)
		return -EINVAL;
	return drnic_mad_cm_build(&m, mad, DRNIC_MAD_LEN);
}

static struct ibcm_gsi_stats
gsi_stats(const struct ibcm_gsi *g)
{
	struct ibcm_gsi_stats st;

	ibcm_gsi_stats_get(g, &st);
	return st;
}

static uint32_t
gsi_qkey_viol(struct drnic_device *dev)
{
	struct drnic_port_attr pa;

	drnic_query_port(dev, 1, &pa);
	return pa.qkey_viol_cntr;
}

/* c->ah: from A's GID @p idx to B's (0 IPv4, 1 IPv6). 0 or -1. */
static int
gsi_ah(struct gsi_ctx *c, uint8_t idx)
{
	struct drnic_ah_attr aa;

	if (c->ah != NULL)
		drnic_destroy_ah(c->ah);
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.hop_limit = 64;
	aa.grh.sgid_index = idx;
	aa.grh.dgid = idx == 0 ? c->gid_b : c->gid6_b;
	c->ah = drnic_create_ah(c->p.a.pd, &aa);
	return c->ah != NULL ? 0 : -1;
}

/* B's callback gets @p mad as its @p n th MAD, sent from A's QP 1 and GID
 * @p from to B's GID @p to. */
static int
gsi_check_rx(struct gsi_ctx *c, const uint8_t *mad, unsigned int n, const union drnic_gid *from,
	     const union drnic_gid *to)
{
	TEST_ASSERT_SUCCESS(gsi_wait(c, &c->rxb.n, n), "MAD %u at B's callback", n);
	TEST_ASSERT_EQUAL(c->rxb.len, DRNIC_MAD_LEN, "MAD length");
	TEST_ASSERT(memcmp(c->rxb.mad, mad, DRNIC_MAD_LEN) == 0, "the MAD's bytes");
	TEST_ASSERT(memcmp(c->rxb.src.gid.raw, from->raw, 16) == 0, "source GID");
	TEST_ASSERT(memcmp(c->rxb.src.local_gid.raw, to->raw, 16) == 0, "local GID");
	TEST_ASSERT_EQUAL(c->rxb.src.qpn, 1, "source QP");
	TEST_ASSERT_EQUAL(c->rxb.src.pkey_index, 0, "P_Key index");
	return TEST_SUCCESS;
}

/* Part 1: A's bare QP 1 against B's agent. */
static int
gsi_raw_run(struct gsi_ctx *c)
{
	struct drnic_qp_init_attr qa;
	struct drnic_qp_attr at;
	struct drnic_mad_cm cm;
	struct drnic_mad_hdr h;
	struct ibcm_gsi_stats st;
	struct drnic_wc wc;
	struct drnic_qp *q[8];
	uint8_t mad[DRNIC_MAD_LEN], big[1024];
	const uint8_t *got;
	unsigned int i, n;

	/* QP 1 on A: one only, the GSI's Q_Key and no other. */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->p.a.cq;
	qa.recv_cq = c->p.a.cq;
	qa.qp_type = DRNIC_QPT_UD;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = GSI_RAW_NB_RECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	c->raw = verbs_create_gsi_qp(c->p.a.pd, &qa);
	TEST_ASSERT(c->raw != NULL, "verbs_create_gsi_qp: %s", rte_strerror(rte_errno));
	TEST_ASSERT_EQUAL(drnic_qp_num(c->raw), 1, "QPN of the GSI QP");
	TEST_ASSERT(verbs_create_gsi_qp(c->p.a.pd, &qa) == NULL && rte_errno == EBUSY,
		    "a second QP 1 is EBUSY");
	memset(&at, 0, sizeof(at));
	at.qp_state = DRNIC_QPS_INIT;
	at.port_num = 1;
	at.qkey = RNIC_UD_QKEY;
	TEST_ASSERT_EQUAL(drnic_modify_qp(c->raw, &at, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX |
					  DRNIC_QP_PORT | DRNIC_QP_QKEY), -EINVAL,
			  "QP 1 with another Q_Key");
	TEST_ASSERT_SUCCESS(rnic_ud_ready(c->raw, DRNIC_MAD_GSI_QKEY), "QP 1 to RTS");
	for (i = 0; i < GSI_RAW_NB_RECV; i++)
		TEST_ASSERT_SUCCESS(gsi_raw_post_recv(c, GSI_RAW_RECV_BASE + i), "post_recv");

	/* B's agent; a second one on B is EBUSY. */
	c->gb = ibcm_gsi_open(c->p.b.dev, 1, gsi_rx_cb, &c->rxb);
	TEST_ASSERT(c->gb != NULL, "ibcm_gsi_open B: %s", rte_strerror(rte_errno));
	TEST_ASSERT(ibcm_gsi_open(c->p.b.dev, 1, gsi_rx_cb, &c->rxb) == NULL && rte_errno == EBUSY,
		    "a second agent is EBUSY");
	TEST_ASSERT(ibcm_gsi_fd(c->gb) >= 0, "agent fd");

	/* An ordinary QP is never 0 or 1, even where the allocator starts. */
	c->p.b.dev->qp_next = 0;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->p.b.cq;
	qa.recv_cq = c->p.b.cq;
	qa.qp_type = DRNIC_QPT_UD;
	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = 1;
	for (n = 0; n < RTE_DIM(q); n++) {
		q[n] = drnic_create_qp(c->p.b.pd, &qa);
		if (q[n] == NULL)
			break;
	}
	for (i = 0; i < n; i++) {
		uint32_t qpn = drnic_qp_num(q[i]);

		drnic_destroy_qp(q[i]);
		TEST_ASSERT(qpn >= 2, "ordinary QP numbered %u", qpn);
	}
	TEST_ASSERT_EQUAL(n, RTE_DIM(q), "ordinary QPs created: %s", rte_strerror(rte_errno));

	/* 1. A CM REQ, Q_Key named by the controlled form: to the callback,
	 * exact, from A's GID and QP 1; over IPv6 with the exact Q_Key. */
	TEST_ASSERT_SUCCESS(gsi_ah(c, 0), "create_ah");
	TEST_ASSERT_SUCCESS(gsi_req(mad, GSI_TID | 1, &c->gid_a, &c->gid_b), "REQ build");
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 0, mad, DRNIC_MAD_LEN, 0x80000000u), "REQ");
	if (gsi_check_rx(c, mad, 1, &c->gid_a, &c->gid_b) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(gsi_ah(c, 1), "create_ah IPv6");
	TEST_ASSERT_SUCCESS(gsi_req(mad, GSI_TID | 2, &c->gid6_a, &c->gid6_b), "REQ build");
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 1, mad, DRNIC_MAD_LEN, DRNIC_MAD_GSI_QKEY),
			    "REQ over IPv6");
	if (gsi_check_rx(c, mad, 2, &c->gid6_a, &c->gid6_b) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(gsi_ah(c, 0), "create_ah");

	/* 2. Get(ClassPortInfo) of the CM class: answered by the agent. */
	gsi_mad(mad, DRNIC_MAD_CLASS_CM, 0, DRNIC_MAD_METHOD_GET, GSI_TID | 3,
		DRNIC_MAD_CM_CLASS_PORT_INFO);
	memset(mad + DRNIC_MAD_HDR_LEN, 0, DRNIC_MAD_DATA_LEN);
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 2, mad, DRNIC_MAD_LEN, DRNIC_MAD_GSI_QKEY),
			    "Get(ClassPortInfo)");
	TEST_ASSERT_SUCCESS(gsi_take_wc(c, 1, DRNIC_WC_RECV, &wc), "ClassPortInfo answer");
	TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS, "recv: %s", drnic_wc_status_str(wc.status));
	TEST_ASSERT_EQUAL(wc.byte_len, GSI_GRH + DRNIC_MAD_LEN, "answer length");
	TEST_ASSERT_EQUAL(wc.src_qp, 1, "answered from QP 1");
	got = gsi_slot(c, (uint32_t)wc.wr_id) + GSI_GRH;
	TEST_ASSERT_SUCCESS(drnic_mad_cm_parse(got, DRNIC_MAD_LEN, &cm), "parse the answer");
	TEST_ASSERT_EQUAL(got[3], 0x81, "method GetResp");
	TEST_ASSERT_EQUAL(cm.hdr.tid, GSI_TID | 3, "TID");
	TEST_ASSERT_EQUAL(cm.hdr.status, 0, "status");
	TEST_ASSERT_EQUAL(cm.hdr.attr_id, DRNIC_MAD_CM_CLASS_PORT_INFO, "attribute");
	TEST_ASSERT_EQUAL(cm.class_port_info.base_version, 1, "ClassPortInfo base version");
	TEST_ASSERT_EQUAL(cm.class_port_info.class_version, 2, "ClassPortInfo class version");
	TEST_ASSERT_EQUAL(cm.class_port_info.resp_time_value, 18, "RespTimeValue");
	TEST_ASSERT_EQUAL(cm.class_port_info.redirect_qp, 0, "no redirection");
	TEST_ASSERT_SUCCESS(gsi_raw_post_recv(c, (uint32_t)wc.wr_id), "repost");

	/* 3. Get and Set of an unknown class: "class not supported". */
	for (i = 0; i < 2; i++) {
		uint8_t method = i == 0 ? DRNIC_MAD_METHOD_GET : DRNIC_MAD_METHOD_SET;

		gsi_mad(mad, GSI_CLASS_UNKNOWN, 0, method, GSI_TID | (4 + i), 0x0123);
		TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 3, mad, DRNIC_MAD_LEN,
						 DRNIC_MAD_GSI_QKEY), "unknown class");
		TEST_ASSERT_SUCCESS(gsi_take_wc(c, 1, DRNIC_WC_RECV, &wc), "its answer");
		TEST_ASSERT_EQUAL(wc.byte_len, GSI_GRH + DRNIC_MAD_LEN, "answer length");
		got = gsi_slot(c, (uint32_t)wc.wr_id) + GSI_GRH;
		TEST_ASSERT_SUCCESS(drnic_mad_hdr_parse(got, DRNIC_MAD_LEN, &h), "parse");
		TEST_ASSERT_EQUAL(got[3], 0x81, "method GetResp");
		TEST_ASSERT_EQUAL(h.mgmt_class, GSI_CLASS_UNKNOWN, "class");
		TEST_ASSERT_EQUAL(h.tid, GSI_TID | (4 + i), "TID");
		TEST_ASSERT_EQUAL(h.attr_id, 0x0123, "attribute");
		TEST_ASSERT_EQUAL(h.status, 0x0004, "status: class not supported");
		TEST_ASSERT_SUCCESS(gsi_raw_post_recv(c, (uint32_t)wc.wr_id), "repost");
	}

	/* 4. Dropped without answer: a GetResp and a Send of that class, a
	 * Get of the subnet manager's class (QP 0's). */
	gsi_mad(mad, GSI_CLASS_UNKNOWN, 1, DRNIC_MAD_METHOD_GET, GSI_TID | 6, 0x0123);
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 4, mad, DRNIC_MAD_LEN, DRNIC_MAD_GSI_QKEY),
			    "GetResp");
	gsi_mad(mad, GSI_CLASS_UNKNOWN, 0, DRNIC_MAD_METHOD_SEND, GSI_TID | 7, 0x0123);
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 5, mad, DRNIC_MAD_LEN, DRNIC_MAD_GSI_QKEY),
			    "Send");
	gsi_mad(mad, 0x01, 0, DRNIC_MAD_METHOD_GET, GSI_TID | 8, 0x0011);
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 6, mad, DRNIC_MAD_LEN, DRNIC_MAD_GSI_QKEY),
			    "SM Get");

	/* 5. Malformed: 0, 100 and 1024 bytes (the MTU), base version 2. */
	memset(big, 0x5A, sizeof(big));
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 7, big, 0, DRNIC_MAD_GSI_QKEY), "0 bytes");
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 8, big, 100, DRNIC_MAD_GSI_QKEY), "100 bytes");
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 9, big, sizeof(big), DRNIC_MAD_GSI_QKEY),
			    "1024 bytes");
	gsi_mad(mad, DRNIC_MAD_CLASS_CM, 0, DRNIC_MAD_METHOD_SEND, GSI_TID | 9, DRNIC_MAD_CM_REQ);
	mad[0] = 2;
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 10, mad, DRNIC_MAD_LEN, DRNIC_MAD_GSI_QKEY),
			    "base version 2");

	/* 6. A user UD QP's datagrams to QP 1 carry its own Q_Key (named or
	 * controlled): dropped and counted by the port. */
	TEST_ASSERT_EQUAL(gsi_qkey_viol(c->p.b.dev), 0, "qkey_viol_cntr before");
	TEST_ASSERT_SUCCESS(gsi_req(mad, GSI_TID | 10, &c->gid_a, &c->gid_b), "REQ build");
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->p.a.qp, 11, mad, DRNIC_MAD_LEN, RNIC_UD_QKEY),
			    "user QP, its Q_Key");
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->p.a.qp, 12, mad, DRNIC_MAD_LEN, DRNIC_MAD_GSI_QKEY),
			    "user QP, the GSI's Q_Key");

	/* A last REQ: everything before it was taken, and B still works. */
	TEST_ASSERT_SUCCESS(gsi_req(mad, GSI_TID | 11, &c->gid_a, &c->gid_b), "REQ build");
	TEST_ASSERT_SUCCESS(gsi_raw_send(c, c->raw, 13, mad, DRNIC_MAD_LEN, DRNIC_MAD_GSI_QKEY),
			    "last REQ");
	if (gsi_check_rx(c, mad, 3, &c->gid_a, &c->gid_b) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(gsi_idle(c, 50), "idle");
	TEST_ASSERT_EQUAL(c->rxb.n, 3, "nothing else reached the callback");
	for (i = 0; i < (unsigned int)c->nwc; i++)
		TEST_ASSERT(c->wc[i].qp_num != 1, "A's QP 1 got something unanswerable");
	TEST_ASSERT_EQUAL(gsi_qkey_viol(c->p.b.dev), 2, "qkey_viol_cntr after");

	st = gsi_stats(c->gb);
	TEST_ASSERT_EQUAL(st.rx_mads, 3 + 1 + 2 + 3, "rx_mads");
	TEST_ASSERT_EQUAL(st.rx_cm, 3, "rx_cm");
	TEST_ASSERT_EQUAL(st.rx_malformed, 4, "rx_malformed");
	TEST_ASSERT_EQUAL(st.rx_unknown_class, 2 + 3, "rx_unknown_class");
	TEST_ASSERT_EQUAL(st.tx_unsupported, 2, "tx_unsupported");
	TEST_ASSERT_EQUAL(st.tx_class_port_info, 1, "tx_class_port_info");
	TEST_ASSERT_EQUAL(st.tx_mads, 3, "tx_mads");
	TEST_ASSERT_EQUAL(st.tx_errors, 0, "tx_errors");
	TEST_ASSERT_EQUAL(st.tx_no_buf, 0, "tx_no_buf");

	/* QP 1 gone, its number is free for an agent. */
	TEST_ASSERT_SUCCESS(drnic_destroy_qp(c->raw), "destroy A's QP 1");
	c->raw = NULL;
	return TEST_SUCCESS;
}

/* tshark decodes the capture: MADs, CM attributes, nothing malformed. */
static int
gsi_tshark(const char *file)
{
	char cmd[512], out[256];

	if (rnic_shell("command -v tshark", out, sizeof(out)) != 0) {
		printf("no tshark: %s not checked\n", file);
		return TEST_SUCCESS;
	}
	snprintf(cmd, sizeof(cmd), "tshark -r %s -Y '_ws.malformed || _ws.expert.severity >= warning'"
		 " 2>/dev/null | wc -l", file);
	TEST_ASSERT(rnic_shell(cmd, out, sizeof(out)) == 0 && strtoul(out, NULL, 10) == 0,
		    "malformed or warned frames in %s: %s", file, out);
	snprintf(cmd, sizeof(cmd), "tshark -r %s -Y 'infiniband.mad.mgmtclass == 0x07' 2>/dev/null"
		 " | wc -l", file);
	TEST_ASSERT(rnic_shell(cmd, out, sizeof(out)) == 0 && strtoul(out, NULL, 10) >= 4,
		    "CM MADs decoded in %s: %s", file, out);
	snprintf(cmd, sizeof(cmd), "tshark -r %s -V 2>/dev/null | grep -c -e 'InfiniBand' "
		 "-e 'Local Communication ID' -e 'RespTimeValue'", file);
	TEST_ASSERT(rnic_shell(cmd, out, sizeof(out)) == 0 && strtoul(out, NULL, 10) >= 6,
		    "InfiniBand and CM attributes in %s: %s", file, out);
	/* tshark names CM ClassPortInfo without decoding it: its first 8
	 * bytes are base 1, class 2, capabilities 0, RespTimeValue 18. */
	snprintf(cmd, sizeof(cmd), "tshark -r %s -T fields -e infiniband.mad.data -Y "
		 "'infiniband.mad.method == 0x81 && infiniband.mad.attributeid == 1' 2>/dev/null"
		 " | head -1", file);
	TEST_ASSERT(rnic_shell(cmd, out, sizeof(out)) == 0 &&
		    strncmp(out, "0102000000000012", 16) == 0,
		    "GetResp(ClassPortInfo) in %s: %s", file, out);
	return TEST_SUCCESS;
}

/* Part 2: two agents. */
static int
gsi_pair_run(struct gsi_ctx *c)
{
	struct drnic_link *link = drnic_device_link(c->p.a.dev);
	struct ibcm_peer to_b, back;
	struct ibcm_gsi_stats sa, sb;
	struct drnic_mad_cm cm;
	uint8_t mad[DRNIC_MAD_LEN];
	unsigned int i, rxb0;
	int rc;

	if (c->p.mode == DRNIC_PROGRESS_INLINE) {
		snprintf(c->pcap, sizeof(c->pcap), "/tmp/drnic_gsi_%d.pcapng", (int)getpid());
		TEST_ASSERT_SUCCESS(drnic_link_capture_start(link, c->pcap, 0), "capture");
	}
	c->ga = ibcm_gsi_open(c->p.a.dev, 1, gsi_rx_cb, &c->rxa);
	TEST_ASSERT(c->ga != NULL, "ibcm_gsi_open A after QP 1 went: %s", rte_strerror(rte_errno));
	memset(&to_b, 0, sizeof(to_b));
	to_b.gid = c->gid_b;
	to_b.local_gid = c->gid_a;
	to_b.qpn = DRNIC_MAD_GSI_QPN;

	/* A REQ from A's agent; B answers the peer its callback named. */
	rxb0 = c->rxb.n;
	TEST_ASSERT_SUCCESS(gsi_req(mad, GSI_TID | 20, &c->gid_a, &c->gid_b), "REQ build");
	TEST_ASSERT_SUCCESS(ibcm_gsi_send(c->ga, &to_b, mad, sizeof(mad)), "send REQ");
	if (c->p.mode == DRNIC_PROGRESS_DEDICATED) {
		struct pollfd pfd = { .fd = ibcm_gsi_fd(c->gb), .events = POLLIN };

		TEST_ASSERT_EQUAL(poll(&pfd, 1, 5000), 1, "B's fd wakes");
	}
	if (gsi_check_rx(c, mad, rxb0 + 1, &c->gid_a, &c->gid_b) != TEST_SUCCESS)
		return TEST_FAILED;
	back = c->rxb.src;
	TEST_ASSERT_SUCCESS(gsi_req(mad, GSI_TID | 21, &c->gid_b, &c->gid_a), "REQ build");
	TEST_ASSERT_SUCCESS(ibcm_gsi_send(c->gb, &back, mad, sizeof(mad)), "answer");
	TEST_ASSERT_SUCCESS(gsi_wait(c, &c->rxa.n, 1), "answer at A");
	TEST_ASSERT(memcmp(c->rxa.mad, mad, DRNIC_MAD_LEN) == 0, "the answer's bytes");
	TEST_ASSERT(memcmp(c->rxa.src.gid.raw, c->gid_b.raw, 16) == 0, "answer's source GID");

	/* A's agent asks B's for its ClassPortInfo: the GetResp is a CM MAD,
	 * so A's callback has it. */
	gsi_mad(mad, DRNIC_MAD_CLASS_CM, 0, DRNIC_MAD_METHOD_GET, GSI_TID | 22,
		DRNIC_MAD_CM_CLASS_PORT_INFO);
	memset(mad + DRNIC_MAD_HDR_LEN, 0, DRNIC_MAD_DATA_LEN);
	TEST_ASSERT_SUCCESS(ibcm_gsi_send(c->ga, &to_b, mad, sizeof(mad)), "Get(ClassPortInfo)");
	TEST_ASSERT_SUCCESS(gsi_wait(c, &c->rxa.n, 2), "GetResp at A");
	TEST_ASSERT_SUCCESS(drnic_mad_cm_parse(c->rxa.mad, DRNIC_MAD_LEN, &cm), "parse");
	TEST_ASSERT(cm.hdr.r == 1 && cm.hdr.method == DRNIC_MAD_METHOD_GET &&
		    cm.hdr.tid == (GSI_TID | 22) && cm.class_port_info.resp_time_value == 18,
		    "GetResp(ClassPortInfo)");
	if (c->p.mode == DRNIC_PROGRESS_INLINE) {
		TEST_ASSERT_SUCCESS(drnic_link_capture_stop(link), "capture stop");
		if (gsi_tshark(c->pcap) != TEST_SUCCESS)
			return TEST_FAILED;
	}

	/* Every send buffer in flight: -ENOBUFS, until completions come. */
	rxb0 = c->rxb.n;
	TEST_ASSERT_SUCCESS(gsi_req(mad, GSI_TID | 23, &c->gid_a, &c->gid_b), "REQ build");
	for (i = 0; i < 1024; i++) {   /* more than the agent's send buffers */
		rc = ibcm_gsi_send(c->ga, &to_b, mad, sizeof(mad));
		if (rc != 0)
			break;
	}
	TEST_ASSERT_EQUAL(rc, -ENOBUFS, "send with every buffer in flight");
	TEST_ASSERT(i >= 8, "only %u sends before -ENOBUFS", i);
	TEST_ASSERT_SUCCESS(gsi_wait(c, &c->rxb.n, rxb0 + i), "the %u REQs at B", i);
	TEST_ASSERT_SUCCESS(ibcm_gsi_send(c->ga, &to_b, mad, sizeof(mad)), "send after them");
	TEST_ASSERT_SUCCESS(gsi_wait(c, &c->rxb.n, rxb0 + i + 1), "at B");

	sa = gsi_stats(c->ga);
	sb = gsi_stats(c->gb);
	TEST_ASSERT_EQUAL(sa.tx_mads, 2 + i + 1, "A's tx_mads");
	TEST_ASSERT_EQUAL(sa.tx_no_buf, 1, "A's tx_no_buf");
	TEST_ASSERT_EQUAL(sa.tx_errors, 0, "A's tx_errors");
	TEST_ASSERT_EQUAL(sa.rx_cm, 2, "A's rx_cm");
	TEST_ASSERT_EQUAL(sa.rx_malformed, 0, "A's rx_malformed");

	/* Closed: B's QP 1 is gone; nothing is called back. */
	ibcm_gsi_close(c->gb);
	c->gb = NULL;
	rxb0 = c->rxb.n;
	TEST_ASSERT_SUCCESS(ibcm_gsi_send(c->ga, &to_b, mad, sizeof(mad)), "send to a closed agent");
	TEST_ASSERT_SUCCESS(gsi_idle(c, 50), "idle");
	TEST_ASSERT_EQUAL(c->rxb.n, rxb0, "callback after close");
	TEST_ASSERT_EQUAL(sb.rx_cm, 3 + 1 + i + 1, "B's rx_cm");
	return TEST_SUCCESS;
}

static int
gsi_body(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode, .qp_type = DRNIC_QPT_UD,
				    .ipv6 = { "fd00::1", "fd00::2" } };
	struct gsi_ctx *c = calloc(1, sizeof(*c));
	int rc;

	TEST_ASSERT(c != NULL, "no memory");
	rc = rnic_pair_open(&c->p, &o);
	if (rc == 0) {
		drnic_query_gid(c->p.a.dev, 1, 0, &c->gid_a);
		drnic_query_gid(c->p.b.dev, 1, 0, &c->gid_b);
		drnic_query_gid(c->p.a.dev, 1, 1, &c->gid6_a);
		drnic_query_gid(c->p.b.dev, 1, 1, &c->gid6_b);
		rc = gsi_raw_run(c);
		if (rc == TEST_SUCCESS)
			rc = gsi_pair_run(c);
	} else {
		printf("pair: %d\n", rc);
		rc = TEST_FAILED;
	}
	ibcm_gsi_close(c->ga);
	ibcm_gsi_close(c->gb);
	if (c->raw != NULL)
		drnic_destroy_qp(c->raw);
	if (c->ah != NULL)
		drnic_destroy_ah(c->ah);
	rnic_pair_close(&c->p);
	if (c->pcap[0] != '\0' && rc == TEST_SUCCESS)
		unlink(c->pcap);
	free(c);
	return rc;
}

static int
rnic_gsi_inline(void)
{
	return gsi_body(DRNIC_PROGRESS_INLINE);
}

static int
rnic_gsi_dedicated(void)
{
	return gsi_body(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_gsi_inline_autotest, DRNIC_TEST_FAST, rnic_gsi_inline);
DRNIC_TEST_REGISTER(rnic_gsi_dedicated_autotest, DRNIC_TEST_FAST, rnic_gsi_dedicated);
