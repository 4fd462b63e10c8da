/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD end to end on the loopback wire, in both progress modes: datagrams of
 * 0 to 1024 bytes (the port's MTU) from A to B through an address handle,
 * with and without immediate data; every WC field on both sides; the GRH
 * area of each receive buffer holding the datagram's IPv4 header (IPv6 over
 * GID index 1); an answer addressed from the WC (drnic_init_ah_from_wc()).
 * Then the rules: a wrong Q_Key is dropped and counted (qkey_viol_cntr), a
 * controlled Q_Key in the WR sends the QP's own, a datagram that finds no
 * receive WQE is lost and counted and never comes later, a UD QP and an RC
 * QP share one CQ with the right qp_num and src_qp on every CQE, a UD QP
 * on an SRQ takes the SRQ's WQEs, a multicast group reaches every attached QP and no detached one, and a
 * datagram longer than the MTU fails with LOC_LEN_ERR (a receive buffer too
 * short for GRH and payload, at the receiver, too). Last, through drnic's
 * fault injector: lost datagrams are lost, and none arrives twice or
 * corrupt.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "drnic_cq.h"
#include "drnic_link.h"
#include "drnic_link_fault.h"

#include "test.h"
#include "rnic_fixture.h"

#define UD_SLOT 2048
#define UD_GRH 40

/* Post receive @p id on @p qp into slot @p slot of @p s's buffer, @p len bytes. */
static int
ud_post_recv(struct rnic_side *s, struct drnic_qp *qp, uint32_t slot, uint32_t len, uint64_t id)
{
	struct drnic_sge sge = { (uintptr_t)s->buf + (uint64_t)slot * UD_SLOT, len,
				 drnic_mr_lkey(s->mr) };
	struct drnic_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(s->buf + (uint64_t)slot * UD_SLOT, 0xEE, UD_SLOT);
	return drnic_post_recv(qp, &wr, &bad);
}

/* Send @p len bytes from slot @p slot of @p s's buffer to @p qpn via @p ah. */
static int
ud_send(struct rnic_side *s, struct drnic_qp *qp, struct drnic_ah *ah, uint32_t qpn,
	uint32_t qkey, uint32_t slot, uint32_t len, uint64_t id, bool imm)
{
	uint8_t *src = s->buf + (uint64_t)slot * UD_SLOT;
	struct drnic_sge sge = { (uintptr_t)src, len, drnic_mr_lkey(s->mr) };
	struct drnic_send_wr wr = { 0 }, *bad;

	rnic_fill(src, len, (uint32_t)id);
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = imm ? DRNIC_WR_SEND_WITH_IMM : DRNIC_WR_SEND;
	wr.imm_data = htonl((uint32_t)id);
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return drnic_post_send(qp, &wr, &bad);
}

static struct drnic_ah *
ud_ah_to(struct rnic_side *from, struct rnic_side *to, uint8_t gid_index)
{
	struct drnic_ah_attr aa;

	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.sgid_index = gid_index;
	aa.grh.hop_limit = 64;
	drnic_query_gid(to->dev, 1, gid_index, &aa.grh.dgid);
	return drnic_create_ah(from->pd, &aa);
}

/* Check one received datagram: WC fields, the GRH area, the payload. */
static int
ud_check_recv(struct rnic_pair *p, const struct drnic_wc *wc, struct drnic_qp *qp, uint32_t slot,
	      uint32_t len, uint64_t id, bool imm, int ipver)
{
	const uint8_t *b = p->b.buf + (uint64_t)slot * UD_SLOT;
	static uint8_t want[UD_SLOT];
	static const uint8_t zero[20];
	union drnic_gid ga, gb;

	TEST_ASSERT(wc->status == DRNIC_WC_SUCCESS, "recv %" PRIu64 ": %s", id,
		    drnic_wc_status_str(wc->status));
	TEST_ASSERT_EQUAL(wc->wr_id, id, "wr_id");
	TEST_ASSERT_EQUAL(wc->opcode, DRNIC_WC_RECV, "opcode");
	TEST_ASSERT_EQUAL(wc->byte_len, UD_GRH + len, "byte_len counts the GRH");
	TEST_ASSERT_EQUAL(wc->qp_num, drnic_qp_num(qp), "qp_num");
	TEST_ASSERT_EQUAL(wc->src_qp, drnic_qp_num(p->a.qp), "src_qp");
	TEST_ASSERT_EQUAL(wc->wc_flags, DRNIC_WC_GRH | (imm ? DRNIC_WC_WITH_IMM : 0), "wc_flags");
	if (imm)
		TEST_ASSERT_EQUAL(ntohl(wc->imm_data), (uint32_t)id, "imm_data");
	TEST_ASSERT_EQUAL(wc->pkey_index, 0, "pkey_index");
	/* RoCE has no SL: sl says the frame's network header, as ConnectX's do. */
	TEST_ASSERT_EQUAL(wc->sl, ipver == 4 ? DRNIC_WC_SL_ROCE_V2_IPV4 : DRNIC_WC_SL_ROCE_V2_IPV6,
			  "sl");
	drnic_query_gid(p->a.dev, 1, ipver == 4 ? 0 : 1, &ga);
	drnic_query_gid(p->b.dev, 1, ipver == 4 ? 0 : 1, &gb);
	if (ipver == 4) {
		TEST_ASSERT(memcmp(b, zero, 20) == 0, "GRH area: first 20 bytes not zero");
		TEST_ASSERT_EQUAL(b[20], 0x45, "IPv4 version/IHL");
		TEST_ASSERT_EQUAL(b[20 + 9], 17, "IPv4 protocol UDP");
		TEST_ASSERT(memcmp(b + 20 + 12, &ga.raw[12], 4) == 0, "IPv4 source");
		TEST_ASSERT(memcmp(b + 20 + 16, &gb.raw[12], 4) == 0, "IPv4 destination");
		TEST_ASSERT_EQUAL(((uint32_t)b[22] << 8 | b[23]), 20 + 8 + 12 + 8 + len + 4 +
				  (4 - (len + (imm ? 4 : 0)) % 4) % 4 + (imm ? 4 : 0),
				  "IPv4 total length");
	} else {
		TEST_ASSERT_EQUAL(b[0] >> 4, 6, "IPv6 version");
		TEST_ASSERT_EQUAL(b[6], 17, "IPv6 next header UDP");
		TEST_ASSERT(memcmp(b + 8, ga.raw, 16) == 0, "IPv6 source");
		TEST_ASSERT(memcmp(b + 24, gb.raw, 16) == 0, "IPv6 destination");
	}
	rnic_fill(want, len, (uint32_t)id);
	TEST_ASSERT(memcmp(b + UD_GRH, want, len) == 0, "payload %" PRIu64, id);
	TEST_ASSERT_EQUAL(b[UD_GRH + len], 0xEE, "written past the datagram");
	return TEST_SUCCESS;
}

static uint64_t
ud_drops(struct drnic_qp *qp, enum drnic_engine_drop why)
{
	struct drnic_qp_stats st;

	drnic_qp_stats_get(qp, &st);
	return st.drops[why];
}

/* Wait until @p qp has dropped @p n datagrams for @p why (driving inline
 * engines), within 5 s. */
static int
ud_wait_drops(struct rnic_pair *p, struct drnic_qp *qp, enum drnic_engine_drop why, uint64_t n)
{
	uint64_t deadline = rnic_now_ms() + 5000;

	while (ud_drops(qp, why) < n) {
		if (rnic_now_ms() > deadline)
			return -1;
		drnic_device_progress(p->a.dev);
	}
	return 0;
}

/* What a run creates besides the pair (ud_body() frees it whatever happens). */
struct ud_ctx {
	struct rnic_pair p;
	struct drnic_qp *qb2, *rcq, *qsrq;
	struct drnic_srq *srq;
	struct drnic_ah *ah, *ah6, *back, *mah;
	union drnic_gid grp;
};

#define p (c->p)
#define qb2 (c->qb2)
#define rcq (c->rcq)
#define qsrq (c->qsrq)
#define ah (c->ah)
#define ah6 (c->ah6)
#define back (c->back)
#define mah (c->mah)
#define grp (c->grp)

static int
ud_run(struct ud_ctx *c)
{
	struct drnic_qp_init_attr qa;
	struct drnic_ah_attr ra;
	struct drnic_port_attr pa;
	struct drnic_wc wc[8];
	uint32_t qpn_b, i, n;

	qpn_b = drnic_qp_num(p.b.qp);
	ah = ud_ah_to(&p.a, &p.b, 0);
	ah6 = ud_ah_to(&p.a, &p.b, 1);
	TEST_ASSERT(ah != NULL && ah6 != NULL, "create_ah: %s", rte_strerror(rte_errno));

	/* 1. Datagrams of 0..1024 bytes, IPv4 and IPv6, with and without
	 * immediate data: every one arrives exact, in order. */
	for (i = 0; i < 24; i++) {
		uint32_t len = i == 0 ? 0 : (i == 1 ? 1024 : (i * 331) % 1025);
		bool imm = i % 2 == 1;
		int ipver = i % 3 == 2 ? 6 : 4;

		TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, p.b.qp, i, UD_GRH + 1024, 1000 + i),
				    "post_recv");
		TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ipver == 4 ? ah : ah6, qpn_b, RNIC_UD_QKEY,
					    i, len, 1000 + i, imm), "post_send %u", i);
		TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 1), 1, "send completion %u", i);
		TEST_ASSERT(wc[0].status == DRNIC_WC_SUCCESS && wc[0].wr_id == 1000 + i &&
			    wc[0].opcode == DRNIC_WC_SEND && wc[0].byte_len == len &&
			    wc[0].qp_num == drnic_qp_num(p.a.qp),
			    "send WC %u: %s op %d len %u", i, drnic_wc_status_str(wc[0].status),
			    wc[0].opcode, wc[0].byte_len);
		TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 1), 1, "receive %u", i);
		if (ud_check_recv(&p, &wc[0], p.b.qp, i, len, 1000 + i, imm, ipver) != TEST_SUCCESS)
			return TEST_FAILED;
	}

	/* 2. The answer, addressed from the WC and its GRH area. */
	TEST_ASSERT_SUCCESS(drnic_init_ah_from_wc(p.b.dev, 1, &wc[0], p.b.buf + 23 * UD_SLOT, &ra),
			    "init_ah_from_wc");
	/* The last datagram (23) came over IPv6: the answer leaves from B's IPv6 GID. */
	TEST_ASSERT_EQUAL(ra.grh.sgid_index, 1, "answer's source GID index");
	back = drnic_create_ah(p.b.pd, &ra);
	TEST_ASSERT(back != NULL, "create_ah from wc");
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.a, p.a.qp, 100, UD_GRH + 64, 7), "post_recv A");
	TEST_ASSERT_SUCCESS(ud_send(&p.b, p.b.qp, back, wc[0].src_qp, RNIC_UD_QKEY, 101, 64, 8,
				    false), "answer");
	TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 1), 1, "answer sent");
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 1), 1, "answer received");
	TEST_ASSERT(wc[0].status == DRNIC_WC_SUCCESS && wc[0].wr_id == 7 &&
		    wc[0].src_qp == qpn_b && wc[0].byte_len == UD_GRH + 64, "answer WC");

	/* 3. A wrong Q_Key: dropped and counted; the sender completes (a
	 * datagram is not answered). A controlled Q_Key sends the QP's own. */
	drnic_query_port(p.b.dev, 1, &pa);
	TEST_ASSERT_EQUAL(pa.qkey_viol_cntr, 0, "qkey_viol_cntr before");
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, p.b.qp, 30, UD_GRH + 1024, 32), "post_recv");
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, qpn_b, RNIC_UD_QKEY + 1, 30, 100, 31, false),
			    "send, wrong Q_Key");
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 1), 1, "send completion");
	TEST_ASSERT(wc[0].status == DRNIC_WC_SUCCESS, "a datagram completes when it leaves");
	TEST_ASSERT_SUCCESS(ud_wait_drops(&p, p.b.qp, DRNIC_ENGINE_DROP_BAD_QKEY, 1), "Q_Key drop");
	drnic_query_port(p.b.dev, 1, &pa);
	TEST_ASSERT_EQUAL(pa.qkey_viol_cntr, 1, "qkey_viol_cntr after");
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, qpn_b, 0x80000000u, 31, 100, 32, false),
			    "send, controlled Q_Key");
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 1), 1, "send completion");
	TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 1), 1, "the QP's own Q_Key arrives");
	if (ud_check_recv(&p, &wc[0], p.b.qp, 30, 100, 32, false, 4) != TEST_SUCCESS)
		return TEST_FAILED;

	/* 4. No receive WQE: lost and counted, and not delivered later. */
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, qpn_b, RNIC_UD_QKEY, 33, 10, 33, false),
			    "send to an empty RQ");
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 1), 1, "send completion");
	TEST_ASSERT_SUCCESS(ud_wait_drops(&p, p.b.qp, DRNIC_ENGINE_DROP_UD_NO_WQE, 1), "no-WQE drop");
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, p.b.qp, 34, UD_GRH + 1024, 34), "post_recv");
	TEST_ASSERT_SUCCESS(rnic_poll_none(&p.b, 50), "the lost datagram came later");

	/* 5. One CQ for a UD QP and an RC QP: qp_num and src_qp on every CQE.
	 * B's second UD QP and A's datagrams to both: each WC names its QP. */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = p.b.cq;
	qa.qp_type = DRNIC_QPT_UD;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	qb2 = drnic_create_qp(p.b.pd, &qa);
	TEST_ASSERT(qb2 != NULL, "second UD QP");
	TEST_ASSERT_SUCCESS(rnic_ud_ready(qb2, RNIC_UD_QKEY), "second UD QP to RTS");
	qa.qp_type = DRNIC_QPT_RC;
	rcq = drnic_create_qp(p.b.pd, &qa);     /* an RC QP on the same CQ */
	TEST_ASSERT(rcq != NULL, "RC QP on the UD QPs' CQ");
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, qb2, 35, UD_GRH + 1024, 35), "post_recv qb2");
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, drnic_qp_num(qb2), RNIC_UD_QKEY, 35, 200, 35,
				    true), "to qb2");
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, qpn_b, RNIC_UD_QKEY, 36, 300, 34, false),
			    "to qb");
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 2), 2, "send completions");
	TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 2), 2, "both receives on one CQ");
	for (i = 0; i < 2; i++) {
		bool to2 = wc[i].wr_id == 35;

		if (ud_check_recv(&p, &wc[i], to2 ? qb2 : p.b.qp, to2 ? 35 : 34, to2 ? 200 : 300,
				  wc[i].wr_id, to2, 4) != TEST_SUCCESS)
			return TEST_FAILED;
	}

	/* 5b. A UD QP on an SRQ: its datagrams take the SRQ's WQEs. */
	{
		struct drnic_srq_init_attr sia = { .attr = { .max_wr = 8, .max_sge = 1 } };
		struct drnic_sge sge = { (uintptr_t)p.b.buf + 50 * UD_SLOT, UD_GRH + 1024,
					 drnic_mr_lkey(p.b.mr) };
		struct drnic_recv_wr rw = { .wr_id = 50, .sg_list = &sge, .num_sge = 1 }, *rbad;

		c->srq = drnic_create_srq(p.b.pd, &sia);
		TEST_ASSERT(c->srq != NULL, "create_srq");
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = qa.recv_cq = p.b.cq;
		qa.qp_type = DRNIC_QPT_UD;
		qa.srq = c->srq;
		qa.cap.max_send_wr = 4;
		qa.cap.max_send_sge = 1;
		qsrq = drnic_create_qp(p.b.pd, &qa);
		TEST_ASSERT(qsrq != NULL, "UD QP on an SRQ");
		TEST_ASSERT_SUCCESS(rnic_ud_ready(qsrq, RNIC_UD_QKEY), "to RTS");
		memset(p.b.buf + 50 * UD_SLOT, 0xEE, UD_SLOT);
		TEST_ASSERT_SUCCESS(drnic_post_srq_recv(c->srq, &rw, &rbad), "post_srq_recv");
		TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, drnic_qp_num(qsrq), RNIC_UD_QKEY, 50,
					    700, 50, true), "to the SRQ's QP");
		TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 1), 1, "send completion");
		TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 1), 1, "receive from the SRQ");
		if (ud_check_recv(&p, &wc[0], qsrq, 50, 700, 50, true, 4) != TEST_SUCCESS)
			return TEST_FAILED;
	}

	/* 6. Multicast 239.1.2.3: both of B's UD QPs attached get each
	 * datagram; detached, qb2 gets none. */
	memset(&grp, 0, sizeof(grp));
	grp.raw[10] = grp.raw[11] = 0xFF;
	grp.raw[12] = 239;
	grp.raw[13] = 1;
	grp.raw[14] = 2;
	grp.raw[15] = 3;
	TEST_ASSERT_SUCCESS(drnic_attach_mcast(p.b.qp, &grp, 0), "attach qb");
	TEST_ASSERT_SUCCESS(drnic_attach_mcast(qb2, &grp, 0), "attach qb2");
	TEST_ASSERT_EQUAL(drnic_destroy_qp(qb2), -EBUSY, "destroy an attached QP");
	memset(&ra, 0, sizeof(ra));
	ra.is_global = 1;
	ra.grh.dgid = grp;
	ra.grh.hop_limit = 1;
	mah = drnic_create_ah(p.a.pd, &ra);
	TEST_ASSERT(mah != NULL, "AH to the group");
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, p.b.qp, 40, UD_GRH + 1024, 40), "post_recv");
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, qb2, 41, UD_GRH + 1024, 41), "post_recv");
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, mah, 0xFFFFFF, RNIC_UD_QKEY, 40, 500, 40, true),
			    "to the group");
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 1), 1, "send completion");
	TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 2), 2, "each attached QP receives");
	TEST_ASSERT(wc[0].qp_num != wc[1].qp_num, "two QPs");
	for (i = 0; i < 2; i++) {
		const uint8_t *b = p.b.buf + (uint64_t)(wc[i].wr_id == 40 ? 40 : 41) * UD_SLOT;
		static uint8_t want[600];

		TEST_ASSERT(wc[i].status == DRNIC_WC_SUCCESS && wc[i].byte_len == UD_GRH + 500 &&
			    wc[i].src_qp == drnic_qp_num(p.a.qp) &&
			    wc[i].wc_flags == (DRNIC_WC_GRH | DRNIC_WC_WITH_IMM) &&
			    ntohl(wc[i].imm_data) == 40, "multicast WC %u", i);
		TEST_ASSERT_EQUAL(wc[i].qp_num, drnic_qp_num(wc[i].wr_id == 40 ? p.b.qp : qb2),
				  "multicast qp_num");
		TEST_ASSERT(memcmp(b + 20 + 16, &grp.raw[12], 4) == 0, "GRH destination: the group");
		rnic_fill(want, 500, 40);
		TEST_ASSERT(memcmp(b + UD_GRH, want, 500) == 0, "multicast payload");
	}
	TEST_ASSERT_SUCCESS(drnic_detach_mcast(qb2, &grp, 0), "detach qb2");
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, p.b.qp, 42, UD_GRH + 1024, 42), "post_recv");
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, qb2, 43, UD_GRH + 1024, 43), "post_recv");
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, mah, 0xFFFFFF, RNIC_UD_QKEY, 42, 50, 42, false),
			    "to the group");
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 1), 1, "send completion");
	TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 1), 1, "the attached QP receives");
	TEST_ASSERT(wc[0].wr_id == 42 && wc[0].qp_num == qpn_b, "only qb");
	TEST_ASSERT_SUCCESS(rnic_poll_none(&p.b, 50), "a detached QP received");
	TEST_ASSERT_SUCCESS(drnic_detach_mcast(p.b.qp, &grp, 0), "detach qb");

	/* 7. Too long: 1025 bytes fail at the sender (LOC_LEN_ERR, QP to
	 * ERR); a receive buffer too short for GRH and payload fails at the
	 * receiver (LOC_LEN_ERR, its QP to ERR). */
	TEST_ASSERT_SUCCESS(ud_post_recv(&p.b, qb2, 44, UD_GRH + 99, 44), "short post_recv");
	/* (qb2's receive 43, which the group's datagram did not take, first.) */
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, drnic_qp_num(qb2), RNIC_UD_QKEY, 43, 100, 43,
				    false), "to qb2");
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, drnic_qp_num(qb2), RNIC_UD_QKEY, 44, 100, 44,
				    false), "to a short buffer");
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, 2), 2, "send completions");
	TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 1), 1, "receive 43");
	if (ud_check_recv(&p, &wc[0], qb2, 43, 100, 43, false, 4) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 1), 1, "receive error");
	TEST_ASSERT(wc[0].status == DRNIC_WC_LOC_LEN_ERR && wc[0].wr_id == 44 &&
		    wc[0].qp_num == drnic_qp_num(qb2), "receiver: %s",
		    drnic_wc_status_str(wc[0].status));
	TEST_ASSERT_EQUAL(drnic_qp_state(qb2), DRNIC_QPS_ERR, "receiver QP state");
	TEST_ASSERT_SUCCESS(ud_send(&p.a, p.a.qp, ah, qpn_b, RNIC_UD_QKEY, 45, 1025, 45, false),
			    "post 1025 bytes");
	n = (uint32_t)rnic_poll(&p.a, wc, 1);
	TEST_ASSERT_EQUAL(n, 1, "send completion");
	TEST_ASSERT(wc[0].status == DRNIC_WC_LOC_LEN_ERR && wc[0].wr_id == 45, "sender: %s",
		    drnic_wc_status_str(wc[0].status));
	TEST_ASSERT_EQUAL(drnic_qp_state(p.a.qp), DRNIC_QPS_ERR, "sender QP state");
	/* An AH no posted send names any more goes. */
	TEST_ASSERT_SUCCESS(drnic_destroy_ah(ah), "destroy_ah");
	ah = NULL;
	return TEST_SUCCESS;
}

#undef p
#undef qb2
#undef rcq
#undef qsrq
#undef ah
#undef ah6
#undef back
#undef mah
#undef grp

static int
ud_body(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode, .qp_type = DRNIC_QPT_UD,
				    .ipv6 = { "fd00::1", "fd00::2" } };
	struct ud_ctx *c = calloc(1, sizeof(*c));
	struct drnic_ah *ah[4];
	unsigned int i;
	int rc;

	TEST_ASSERT(c != NULL, "no memory");
	if (rnic_pair_open(&c->p, &o) != 0) {
		rnic_pair_close(&c->p);
		free(c);
		TEST_ASSERT(false, "pair");
	}
	rc = ud_run(c);
	ah[0] = c->mah;
	ah[1] = c->back;
	ah[2] = c->ah;
	ah[3] = c->ah6;
	for (i = 0; i < 4; i++)
		if (ah[i] != NULL)
			drnic_destroy_ah(ah[i]);
	if (c->qb2 != NULL) {
		drnic_detach_mcast(c->qb2, &c->grp, 0);
		drnic_destroy_qp(c->qb2);
	}
	if (c->rcq != NULL)
		drnic_destroy_qp(c->rcq);
	if (c->qsrq != NULL)
		drnic_destroy_qp(c->qsrq);
	if (c->srq != NULL)
		drnic_destroy_srq(c->srq);
	if (c->p.b.qp != NULL)
		drnic_detach_mcast(c->p.b.qp, &c->grp, 0);
	rnic_pair_close(&c->p);
	free(c);
	return rc;
}

/*
 * Through drnic's injector on A's side (5% lost, 2% duplicated, 2%
 * reordered): UD_LOSSY datagrams of 1..1024 bytes, 32 at a time; every one
 * that arrives is exact and arrives once, some are lost, none is resent.
 */
#define UD_LOSSY 400

/* Take what B received: each checked, noted, its WQE posted again. */
static int
ud_lossy_take(struct rnic_pair *p, uint8_t *seen, uint32_t *got)
{
	static uint8_t want[1024];
	struct drnic_wc wc[32];
	int n, k;

	while ((n = drnic_cq_poll(p->b.cq, 32, wc)) > 0) {
		for (k = 0; k < n; k++) {
			uint32_t id = ntohl(wc[k].imm_data), len = 1 + (id * 613) % 1024;
			uint32_t slot = (uint32_t)(wc[k].wr_id % 256);
			const uint8_t *b = p->b.buf + (uint64_t)slot * UD_SLOT;

			TEST_ASSERT(wc[k].status == DRNIC_WC_SUCCESS && id < UD_LOSSY,
				    "recv: %s id %u", drnic_wc_status_str(wc[k].status), id);
			TEST_ASSERT_EQUAL(wc[k].byte_len, UD_GRH + len, "byte_len of %u", id);
			TEST_ASSERT(!seen[id], "datagram %u delivered twice", id);
			seen[id] = 1;
			rnic_fill(want, len, id);
			TEST_ASSERT(memcmp(b + UD_GRH, want, len) == 0, "datagram %u corrupt", id);
			(*got)++;
			TEST_ASSERT_SUCCESS(ud_post_recv(&p->b, p->b.qp, slot, UD_GRH + 1024,
							 wc[k].wr_id), "post_recv again");
		}
	}
	return TEST_SUCCESS;
}

static int
ud_lossy_run(struct rnic_pair *p, struct drnic_ah *ah)
{
	static uint8_t seen[UD_LOSSY];
	struct drnic_link_fault_stats fs;
	struct drnic_qp_stats sa, sb;
	struct drnic_wc wc[32];
	uint32_t sent = 0, got = 0, i;
	uint64_t deadline;
	int k;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 128; i++)
		TEST_ASSERT_SUCCESS(ud_post_recv(&p->b, p->b.qp, i, UD_GRH + 1024, i), "post_recv");
	while (sent < UD_LOSSY) {
		for (i = 0; i < 32 && sent < UD_LOSSY; i++, sent++)
			TEST_ASSERT_SUCCESS(ud_send(&p->a, p->a.qp, ah, drnic_qp_num(p->b.qp),
						    RNIC_UD_QKEY, 300 + sent % 64,
						    1 + (sent * 613) % 1024, sent, true),
					    "post_send %u", sent);
		TEST_ASSERT_EQUAL(rnic_poll(&p->a, wc, (int)i), (int)i, "send completions");
		for (k = 0; k < (int)i; k++)
			TEST_ASSERT(wc[k].status == DRNIC_WC_SUCCESS, "send: %s",
				    drnic_wc_status_str(wc[k].status));
		/* What A sent has reached B's QP or was lost on the way
		 * (the last held-back frame may wait for the next burst). */
		deadline = rnic_now_ms() + 2000;
		do {
			drnic_device_progress(p->a.dev);
			drnic_qp_stats_get(p->a.qp, &sa);
			drnic_qp_stats_get(p->b.qp, &sb);
			TEST_ASSERT_SUCCESS(drnic_link_fault_stats(drnic_device_link(p->a.dev),
								   &fs), "fault stats");
		} while (sb.rx_packets + fs.dropped + fs.held < sa.tx_packets + fs.duplicated &&
			 rnic_now_ms() < deadline);
		if (ud_lossy_take(p, seen, &got) != TEST_SUCCESS)
			return TEST_FAILED;
	}
	drnic_qp_stats_get(p->b.qp, &sb);
	printf("UD lossy: %u of %u datagrams arrived (injector: %" PRIu64 " lost, %" PRIu64
	       " duplicated, %" PRIu64 " reordered), B dropped %" PRIu64 " copies\n", got,
	       UD_LOSSY, fs.dropped, fs.duplicated, fs.reordered,
	       sb.drops[DRNIC_ENGINE_DROP_PSN_DUP]);
	TEST_ASSERT(fs.dropped > 0 && fs.duplicated > 0, "the injector did nothing");
	TEST_ASSERT(got < UD_LOSSY && got + fs.dropped + fs.held >= UD_LOSSY, "%u of %u arrived",
		    got, UD_LOSSY);
	TEST_ASSERT(sb.drops[DRNIC_ENGINE_DROP_PSN_DUP] > 0, "no copy was dropped");
	TEST_ASSERT_EQUAL(sb.tx_packets, 0, "B answered");
	return TEST_SUCCESS;
}

static int
ud_lossy(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode, .qp_type = DRNIC_QPT_UD, .max_wr = 256 };
	struct drnic_ah *ah;
	struct rnic_pair p;
	int rc;

	o.link_extra[0] = "fault_drop=0.05,fault_dup=0.02,fault_reorder=0.02,fault_seed=7";
	if (rnic_pair_open(&p, &o) != 0) {
		rnic_pair_close(&p);
		TEST_ASSERT(false, "pair");
	}
	ah = ud_ah_to(&p.a, &p.b, 0);
	rc = ah != NULL ? ud_lossy_run(&p, ah) : TEST_FAILED;
	if (ah != NULL)
		drnic_destroy_ah(ah);
	rnic_pair_close(&p);
	return rc;
}

static int
rnic_ud_inline(void)
{
	int rc = ud_body(DRNIC_PROGRESS_INLINE);

	return rc != TEST_SUCCESS ? rc : ud_lossy(DRNIC_PROGRESS_INLINE);
}

static int
rnic_ud_dedicated(void)
{
	int rc = ud_body(DRNIC_PROGRESS_DEDICATED);

	return rc != TEST_SUCCESS ? rc : ud_lossy(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_ud_inline_autotest, DRNIC_TEST_FAST, rnic_ud_inline);
DRNIC_TEST_REGISTER(rnic_ud_dedicated_autotest, DRNIC_TEST_FAST, rnic_ud_dedicated);
