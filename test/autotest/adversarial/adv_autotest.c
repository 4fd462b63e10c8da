/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Adversarial autotests (issue 13): a third party on a live QP pair's cable
 * sends frames with valid ICRCs, as anyone on the segment can, and a buggy
 * peer breaks the protocol. Each test asserts what a user sees: memory
 * untouched (guard zones around the victim MR), the right drop counter or
 * NAK on the wire, the right CQE status at the real peer, and no success
 * for a message that was lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "drnic_cq.h"
#include "drnic_event.h"

#include "adv_common.h"

#define CHECK(expr)                                                             \
	do {                                                                    \
		int _rc = (expr);                                               \
		if (_rc != TEST_SUCCESS)                                        \
			return _rc;                                             \
	} while (0)

static uint8_t adv_bytes[8192];

static int
post_rdma(struct rnic_side *s, uint64_t wr_id, enum drnic_wr_opcode op, void *laddr,
	  uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct drnic_sge sge = { (uintptr_t)laddr, len, lkey };
	struct drnic_send_wr wr = { 0 }, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return drnic_post_send(s->qp, &wr, &bad);
}

static int
post_recv(struct rnic_side *s, uint64_t wr_id, void *addr, uint32_t len)
{
	struct drnic_sge sge = { (uintptr_t)addr, len, drnic_mr_lkey(s->mr) };
	struct drnic_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return drnic_post_recv(s->qp, &wr, &bad);
}

static int
expect_wc(struct rnic_side *s, uint64_t wr_id, enum drnic_wc_status status, const char *what)
{
	struct drnic_wc wc;

	TEST_ASSERT_EQUAL(rnic_poll(s, &wc, 1), 1, "%s: no completion", what);
	TEST_ASSERT(wc.status == status, "%s: status %s, expected %s", what,
		    drnic_wc_status_str(wc.status), drnic_wc_status_str(status));
	TEST_ASSERT_EQUAL(wc.wr_id, wr_id, "%s: wr_id", what);
	TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(s->qp), "%s: qp_num", what);
	return TEST_SUCCESS;
}

/* Inject @p pkt into @p side and wait until its drop counter @p why moved. */
static int
inject_dropped(struct adv *x, int side, const struct drnic_wire_pkt *pkt, const void *data,
	       uint32_t len, enum drnic_engine_drop why, const char *what)
{
	struct rnic_side *s = side == ADV_A ? &x->p.a : &x->p.b;
	uint64_t d0 = adv_qp_stats(s).drops[why];

	TEST_ASSERT_SUCCESS(adv_inject(x, side, pkt, data, len), "%s: inject", what);
	TEST_ASSERT(ADV_WAIT(x, adv_qp_stats(s).drops[why] == d0 + 1),
		    "%s: not dropped as %s (count %" PRIu64 ")", what, drnic_engine_drop_name(why),
		    adv_qp_stats(s).drops[why]);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* 1. Only the peer reaches a QP                                            */
/* ------------------------------------------------------------------------ */

static int
adv_spoof_body(struct adv *x)
{
	struct drnic_wire_pkt w = adv_req(x, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY), p;
	uint32_t epsn = adv_qp_stats(&x->p.b).expected_psn;
	struct drnic_wc wc;
	struct {
		const char *what;
		enum drnic_engine_drop why;
	} cases[] = {
		{ "WRITE from another source IP", DRNIC_ENGINE_DROP_BAD_ADDR },
		{ "WRITE to another destination IP", DRNIC_ENGINE_DROP_BAD_ADDR },
		{ "WRITE over IPv6 to an IPv4 QP", DRNIC_ENGINE_DROP_BAD_ADDR },
		{ "WRITE with a P_Key not in the table", DRNIC_ENGINE_DROP_BAD_PKEY },
		{ "WRITE to another destination MAC", DRNIC_ENGINE_DROP_BAD_DMAC },
		{ "WRITE with a VLAN tag", DRNIC_ENGINE_DROP_BAD_VLAN },
	};
	unsigned int i;

	memset(adv_bytes, 0xEE, sizeof(adv_bytes));
	w.reth.dmalen = 64;
	for (i = 0; i < RTE_DIM(cases); i++) {
		p = w;
		switch (i) {
		case 0:
			p.ip.src[3] = 99;
			p.eth.src[5] = 0x99;
			break;
		case 1:
			p.ip.dst[3] = 77;
			break;
		case 2:
			p.ip.version = 6;
			memset(p.ip.src, 0, 16);
			memset(p.ip.dst, 0, 16);
			p.ip.src[10] = p.ip.src[11] = p.ip.dst[10] = p.ip.dst[11] = 0xFF;
			memcpy(p.ip.src + 12, w.ip.src, 4);
			memcpy(p.ip.dst + 12, w.ip.dst, 4);
			break;
		case 3:
			p.bth.pkey = 0x1234;
			break;
		case 4:
			p.eth.dst[5] = 0x99;
			break;
		case 5:
			p.eth.has_vlan = true;
			p.eth.vlan_tci = 5;
			break;
		}
		CHECK(inject_dropped(x, ADV_B, &p, adv_bytes, 64, cases[i].why, cases[i].what));
		TEST_ASSERT(adv_vic_is(x, 0, ADV_VIC_LEN), "%s: memory written", cases[i].what);
		TEST_ASSERT_EQUAL(adv_qp_stats(&x->p.b).expected_psn, epsn, "%s: PSN moved",
				  cases[i].what);
	}

	/* The real peer's next WRITE lands and completes. */
	memset(x->p.a.buf, 0x11, 256);
	TEST_ASSERT_SUCCESS(post_rdma(&x->p.a, 7, DRNIC_WR_RDMA_WRITE, x->p.a.buf, 256,
				      drnic_mr_lkey(x->p.a.mr), (uintptr_t)x->vic,
				      drnic_mr_rkey(x->vic_mr)), "post");
	CHECK(expect_wc(&x->p.a, 7, DRNIC_WC_SUCCESS, "the peer's WRITE"));
	TEST_ASSERT(ADV_WAIT(x, adv_vic_is(x, 0x11, 256)), "the peer's WRITE is not in memory");

	/* A SEND from a stranger completes no receive; the peer's does. */
	TEST_ASSERT_SUCCESS(post_recv(&x->p.b, 70, x->p.b.buf, 4096), "post_recv");
	p = adv_req(x, DRNIC_WIRE_OP_RC_SEND_ONLY);
	p.ip.src[3] = 99;
	memset(adv_bytes, 0xEE, 100);
	CHECK(inject_dropped(x, ADV_B, &p, adv_bytes, 100, DRNIC_ENGINE_DROP_BAD_ADDR,
			     "SEND from another source IP"));
	TEST_ASSERT_EQUAL(drnic_cq_poll(x->p.b.cq, 1, &wc), 0, "a stranger's SEND completed");
	memset(x->p.a.buf, 0x22, 100);
	TEST_ASSERT_SUCCESS(post_rdma(&x->p.a, 8, DRNIC_WR_SEND, x->p.a.buf, 100,
				      drnic_mr_lkey(x->p.a.mr), 0, 0), "post SEND");
	CHECK(expect_wc(&x->p.a, 8, DRNIC_WC_SUCCESS, "the peer's SEND"));
	TEST_ASSERT_EQUAL(rnic_poll(&x->p.b, &wc, 1), 1, "no receive completion");
	TEST_ASSERT_EQUAL(wc.wr_id, 70, "receive wr_id");
	TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "receive status");
	TEST_ASSERT_EQUAL(wc.byte_len, 100, "receive byte_len");
	TEST_ASSERT_EQUAL(wc.src_qp, drnic_qp_num(x->p.a.qp), "receive src_qp");
	TEST_ASSERT(x->p.b.buf[0] == 0x22 && x->p.b.buf[99] == 0x22, "the receive has the "
		    "stranger's bytes");
	/* A limited-member P_Key (0x7FFF) matches the full default key (last:
	 * a frame from the peer's addresses moves the PSN the peer uses). */
	p = adv_req(x, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY);
	p.reth.dmalen = 64;
	epsn = p.bth.psn;
	p.bth.pkey = 0x7FFF;
	memset(adv_bytes, 0x44, 64);
	TEST_ASSERT_SUCCESS(adv_inject(x, ADV_B, &p, adv_bytes, 64), "0x7FFF inject");
	TEST_ASSERT(ADV_WAIT(x, adv_qp_stats(&x->p.b).expected_psn == ((epsn + 1) & 0xFFFFFF)),
		    "a WRITE from the peer with P_Key 0x7FFF was not taken");
	TEST_ASSERT(adv_vic_is(x, 0x44, 64), "the peer's 0x7FFF WRITE did not land");
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* 2. Only what was sent is acknowledged                                    */
/* ------------------------------------------------------------------------ */

static int
adv_ghost_body(struct adv *x)
{
	struct drnic_qp_attr a = { .qp_state = DRNIC_QPS_ERR };
	struct drnic_wire_pkt p;
	struct drnic_qp_stats st;
	uint32_t next;

	/* B stops answering (a peer gone silent); A's WRITE is outstanding. */
	TEST_ASSERT_SUCCESS(drnic_modify_qp(x->p.b.qp, &a, DRNIC_QP_STATE), "B to ERR");
	memset(x->p.a.buf, 0x33, 64);
	st = adv_qp_stats(&x->p.a);
	TEST_ASSERT_SUCCESS(post_rdma(&x->p.a, 9, DRNIC_WR_RDMA_WRITE, x->p.a.buf, 64,
				      drnic_mr_lkey(x->p.a.mr), (uintptr_t)x->p.b.buf,
				      drnic_mr_rkey(x->p.b.mr)), "post");
	TEST_ASSERT(ADV_WAIT(x, adv_qp_stats(&x->p.a).tx_packets > st.tx_packets), "not sent");
	next = adv_qp_stats(&x->p.a).next_psn;

	/* An ACK for the WRITE from a stranger's address. */
	p = x->b2a;
	p.bth.psn = (next - 1) & 0xFFFFFF;
	p.ip.src[3] = 99;
	CHECK(inject_dropped(x, ADV_A, &p, NULL, 0, DRNIC_ENGINE_DROP_BAD_ADDR,
			     "ACK from another source IP"));
	/* From B's own addresses, for PSNs never sent: ghosts. */
	p = x->b2a;
	p.bth.psn = (next + 1000) & 0xFFFFFF;
	CHECK(inject_dropped(x, ADV_A, &p, NULL, 0, DRNIC_ENGINE_DROP_GHOST_RESP,
			     "ACK for next_psn + 1000"));
	p.bth.psn = (next + 5) & 0xFFFFFF;
	p.aeth.syndrome = drnic_aeth_syndrome(DRNIC_AETH_NAK, DRNIC_NAK_REMOTE_ACCESS);
	CHECK(inject_dropped(x, ADV_A, &p, NULL, 0, DRNIC_ENGINE_DROP_GHOST_RESP,
			     "remote-access NAK for an unsent PSN"));
	p = x->b2a;
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY;
	p.bth.psn = (next - 1) & 0xFFFFFF;
	p.ip.src[3] = 98;
	CHECK(inject_dropped(x, ADV_A, &p, adv_bytes, 64, DRNIC_ENGINE_DROP_BAD_ADDR,
			     "READ response from another source IP"));
	/* The WRITE was never answered: it fails, it does not succeed. */
	CHECK(expect_wc(&x->p.a, 9, DRNIC_WC_RETRY_EXC_ERR, "the unanswered WRITE"));
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* 3. A deregistered MR stays unreachable from the wire                     */
/* ------------------------------------------------------------------------ */

static int
adv_dereg_read_body(struct adv *x)
{
	uint32_t rkey = drnic_mr_rkey(x->vic_mr), psn;
	struct drnic_wire_pkt p;

	/* A real READ of 4 KiB of the victim. */
	memset(x->vic, 0x5A, 4096);
	psn = adv_qp_stats(&x->p.b).expected_psn;
	TEST_ASSERT_SUCCESS(post_rdma(&x->p.a, 11, DRNIC_WR_RDMA_READ, x->p.a.buf, 4096,
				      drnic_mr_lkey(x->p.a.mr), (uintptr_t)x->vic, rkey),
			    "post READ");
	CHECK(expect_wc(&x->p.a, 11, DRNIC_WC_SUCCESS, "READ"));
	TEST_ASSERT(x->p.a.buf[0] == 0x5A && x->p.a.buf[4095] == 0x5A, "READ data");
	/* B deregisters, then writes new bytes where the MR was. */
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(x->vic_mr), "dereg");
	x->vic_mr = NULL;
	memset(x->vic, 0x77, 4096);
	adv_tap_reset(x);
	x->read_byte = 0x77;
	/* The peer asks for the READ again (a duplicate): nothing is read. */
	p = adv_req(x, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	p.bth.psn = psn;
	p.reth.rkey = rkey;
	p.reth.dmalen = 4096;
	TEST_ASSERT_SUCCESS(adv_inject(x, ADV_B, &p, NULL, 0), "inject duplicate READ");
	TEST_ASSERT(ADV_WAIT(x, (adv_tap_drain(x), x->seen_naks > 0)), "no NAK for the replay");
	TEST_ASSERT_EQUAL(x->last_nak_syn, drnic_aeth_syndrome(DRNIC_AETH_NAK,
							       DRNIC_NAK_REMOTE_ACCESS),
			  "NAK code");
	TEST_ASSERT(!x->seen_read_byte, "bytes written after dereg were sent");
	TEST_ASSERT_EQUAL(x->seen_read_resp, 0, "READ responses after dereg");
	TEST_ASSERT(ADV_WAIT(x, drnic_qp_state(x->p.b.qp) == DRNIC_QPS_ERR), "B's QP not in ERR");
	return TEST_SUCCESS;
}

static int
adv_dereg_write_body(struct adv *x)
{
	uint32_t psn = adv_qp_stats(&x->p.b).expected_psn;
	struct drnic_wire_pkt p;

	memset(adv_bytes, 0xEE, sizeof(adv_bytes));
	/* A WRITE's FIRST packet from the peer (3 KiB at path MTU 1024)... */
	p = adv_req(x, DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST);
	p.bth.ackreq = false;
	p.reth.dmalen = 3072;
	TEST_ASSERT_SUCCESS(adv_inject(x, ADV_B, &p, adv_bytes, 1024), "FIRST");
	TEST_ASSERT(ADV_WAIT(x, adv_vic_is(x, 0xEE, 1024)), "FIRST did not land");
	/* ... the MR is deregistered ... */
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(x->vic_mr), "dereg");
	x->vic_mr = NULL;
	adv_tap_reset(x);
	/* ... and MIDDLE and LAST write nothing. */
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE;
	p.bth.psn = (psn + 1) & 0xFFFFFF;
	TEST_ASSERT_SUCCESS(adv_inject(x, ADV_B, &p, adv_bytes, 1024), "MIDDLE");
	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST;
	p.bth.psn = (psn + 2) & 0xFFFFFF;
	p.bth.ackreq = true;
	TEST_ASSERT_SUCCESS(adv_inject(x, ADV_B, &p, adv_bytes, 1024), "LAST");
	TEST_ASSERT(ADV_WAIT(x, (adv_tap_drain(x), x->seen_naks > 0)), "no NAK");
	TEST_ASSERT_EQUAL(x->last_nak_syn, drnic_aeth_syndrome(DRNIC_AETH_NAK,
							       DRNIC_NAK_REMOTE_ACCESS), "NAK code");
	TEST_ASSERT_EQUAL(x->last_nak_psn, (psn + 1) & 0xFFFFFF, "NAK PSN");
	{
		unsigned int i;

		for (i = 1024; i < 3072; i++)
			TEST_ASSERT(x->vic[i] == 0, "byte %u written after dereg", i);
	}
	TEST_ASSERT(ADV_WAIT(x, drnic_qp_state(x->p.b.qp) == DRNIC_QPS_ERR), "B's QP not in ERR");
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* READ limits, SEND with Invalidate                                        */
/* ------------------------------------------------------------------------ */

static int
adv_read_huge_body(struct adv *x)
{
	struct drnic_wire_pkt p = adv_req(x, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	uint32_t psn = p.bth.psn;

	p.reth.dmalen = 0xFFFFFFFFu;
	TEST_ASSERT_SUCCESS(adv_inject(x, ADV_B, &p, NULL, 0), "inject");
	TEST_ASSERT(ADV_WAIT(x, (adv_tap_drain(x), x->seen_naks > 0)), "no answer to a 4 GiB READ");
	TEST_ASSERT_EQUAL(x->last_nak_syn, drnic_aeth_syndrome(DRNIC_AETH_NAK,
							       DRNIC_NAK_INVALID_REQ), "NAK code");
	TEST_ASSERT_EQUAL(x->last_nak_psn, psn, "NAK PSN");
	TEST_ASSERT_EQUAL(x->seen_read_resp, 0, "READ responses");
	TEST_ASSERT(ADV_WAIT(x, drnic_qp_state(x->p.b.qp) == DRNIC_QPS_ERR), "B's QP not in ERR");
	return TEST_SUCCESS;
}

static int
adv_send_inv_body(struct adv *x)
{
	struct drnic_wire_pkt p = adv_req(x, DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_INVALIDATE);
	struct drnic_wc wc;

	TEST_ASSERT_SUCCESS(post_recv(&x->p.b, 80, x->p.b.buf, 4096), "post_recv");
	p.ieth_rkey = drnic_mr_rkey(x->vic_mr);
	memset(adv_bytes, 0x66, 64);
	TEST_ASSERT_SUCCESS(adv_inject(x, ADV_B, &p, adv_bytes, 64), "inject");
	TEST_ASSERT(ADV_WAIT(x, (adv_tap_drain(x), x->seen_naks > 0)), "no NAK");
	TEST_ASSERT_EQUAL(x->last_nak_syn, drnic_aeth_syndrome(DRNIC_AETH_NAK,
							       DRNIC_NAK_INVALID_REQ), "NAK code");
	/* The receive is flushed, not completed as if it were a plain SEND. */
	TEST_ASSERT_EQUAL(rnic_poll(&x->p.b, &wc, 1), 1, "no receive completion");
	TEST_ASSERT_EQUAL(wc.wr_id, 80, "wr_id");
	TEST_ASSERT(wc.status == DRNIC_WC_WR_FLUSH_ERR, "receive status %s",
		    drnic_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

/* A burst of READs over the responder's max_dest_rd_atomic (4): the four it
 * took are answered, with their data, before the NAK of the fifth. */
static int
adv_read_burst_body(struct adv *x)
{
	struct drnic_sge sge[5];
	struct drnic_send_wr wr[5], *bad;
	struct drnic_wc wc;
	unsigned int i;

	for (i = 0; i < ADV_VIC_LEN; i++)
		x->vic[i] = (uint8_t)(i * 7 + 3);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 5; i++) {
		sge[i] = (struct drnic_sge){ (uintptr_t)x->p.a.buf + i * 1024, 1024,
					     drnic_mr_lkey(x->p.a.mr) };
		wr[i].wr_id = 100 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = DRNIC_WR_RDMA_READ;
		wr[i].send_flags = DRNIC_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)x->vic + i * 1024;
		wr[i].wr.rdma.rkey = drnic_mr_rkey(x->vic_mr);
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
	}
	memset(x->p.a.buf, 0, 5 * 1024);
	TEST_ASSERT_SUCCESS(drnic_post_send(x->p.a.qp, wr, &bad), "post 5 READs");
	for (i = 0; i < 4; i++) {
		TEST_ASSERT_EQUAL(rnic_poll(&x->p.a, &wc, 1), 1, "READ %u: no completion", i);
		TEST_ASSERT_EQUAL(wc.wr_id, 100 + i, "READ %u wr_id", i);
		TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS, "READ %u: %s", i,
			    drnic_wc_status_str(wc.status));
		TEST_ASSERT(memcmp(x->p.a.buf + i * 1024, x->vic + i * 1024, 1024) == 0,
			    "READ %u data", i);
	}
	CHECK(expect_wc(&x->p.a, 104, DRNIC_WC_REM_INV_REQ_ERR, "the fifth READ"));
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* 7. Reflection and amplification                                          */
/* ------------------------------------------------------------------------ */

static int
adv_flood_body(struct adv *x)
{
	struct drnic_wire_pkt p;
	struct drnic_qp_stats st;
	uint32_t psn;
	unsigned int i;

	/* A real 16 KiB READ (16 response packets). */
	TEST_ASSERT_SUCCESS(post_rdma(&x->p.a, 12, DRNIC_WR_RDMA_READ, x->p.a.buf, 16384,
				      drnic_mr_lkey(x->p.a.mr), (uintptr_t)x->vic,
				      drnic_mr_rkey(x->vic_mr)), "post READ");
	psn = adv_qp_stats(&x->p.b).expected_psn;
	CHECK(expect_wc(&x->p.a, 12, DRNIC_WC_SUCCESS, "READ"));
	adv_tap_reset(x);
	/* The peer asks for it 200 times: 3.2 MB of answers for 14 KB. */
	p = adv_req(x, DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST);
	p.bth.psn = psn;
	p.reth.dmalen = 16384;
	for (i = 0; i < 200; i++) {
		TEST_ASSERT_SUCCESS(adv_inject(x, ADV_B, &p, NULL, 0), "inject %u", i);
		adv_tap_drain(x);
	}
	for (i = 0; i < 100; i++)
		adv_progress(x);
	adv_tap_drain(x);
	st = adv_qp_stats(&x->p.b);
	printf("200 duplicate READs of 16 KiB: %u response frames, %" PRIu64 " bytes sent;"
	       " replays %" PRIu64 ", limited %" PRIu64 "\n", x->seen_read_resp,
	       x->seen_read_bytes, st.replays, st.replays_limited);
	TEST_ASSERT(st.replays_limited > 0, "no replay was limited");
	TEST_ASSERT(x->seen_read_bytes <= 200ull * 16384 / 4, "%" PRIu64 " bytes replayed",
		    x->seen_read_bytes);
	TEST_ASSERT(x->seen_read_bytes >= 16384, "not even one replay answered");

	/* The same out-of-sequence PSN 100 times in one burst: a few NAKs. */
	adv_tap_reset(x);
	p = adv_req(x, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY);
	p.bth.psn = (p.bth.psn + 5) & 0xFFFFFF;
	p.reth.dmalen = 64;
	TEST_ASSERT_SUCCESS(adv_inject_burst(x, ADV_B, &p, adv_bytes, 64, 100), "OOS burst");
	for (i = 0; i < 100; i++)
		adv_progress(x);
	adv_tap_drain(x);
	st = adv_qp_stats(&x->p.b);
	printf("a burst of 100 repeated out-of-sequence WRITEs: %u NAKs sent, %" PRIu64 " limited\n",
	       x->seen_naks, st.naks_limited);
	/* A burst is answered once (owed NAKs coalesce in a step); the rate
	 * over many steps is responder_ut's test_repeated_nak_limit (on a
	 * fake clock). */
	TEST_ASSERT(x->seen_naks >= 1, "no NAK at all");
	TEST_ASSERT(x->seen_naks <= 4, "%u NAKs for one burst", x->seen_naks);
	TEST_ASSERT(adv_vic_is(x, x->vic[0], 0), "guards");
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* 4. Deregistering an MR in use by in-flight WRs                           */
/* ------------------------------------------------------------------------ */

#define ADV_BIG (4u << 20)

/* The local buffer of a 4 MiB WRITE (its source) or READ (its sink) is
 * deregistered and freed while the WR runs. It is malloc'd memory, so a
 * sanitizer sees any access after the free. */
static int
adv_dereg_inflight(struct adv *x, enum drnic_wr_opcode op)
{
	const char *what = op == DRNIC_WR_RDMA_WRITE ? "WRITE whose source" : "READ whose sink";
	struct drnic_mr *big, *mine;
	uint8_t *local, *buf;
	struct drnic_wc wc;

	buf = drnic_alloc(ADV_BIG, 4096, SOCKET_ID_ANY);
	TEST_ASSERT(buf != NULL, "alloc");
	memset(buf, 9, ADV_BIG);
	big = drnic_reg_mr(x->p.b.pd, buf, ADV_BIG, DRNIC_ACCESS_LOCAL_WRITE |
			   DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ);
	TEST_ASSERT(big != NULL, "reg B's buffer");
	local = aligned_alloc(4096, ADV_BIG);
	TEST_ASSERT(local != NULL, "malloc");
	memset(local, 1, ADV_BIG);
	mine = drnic_reg_mr(x->p.a.pd, local, ADV_BIG, DRNIC_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(mine != NULL, "reg A's buffer");
	TEST_ASSERT_SUCCESS(post_rdma(&x->p.a, 13, op, local, ADV_BIG, drnic_mr_lkey(mine),
				      (uintptr_t)buf, drnic_mr_rkey(big)), "post");
	/* Some of it moves (inline: post_send ran the engine once). */
	adv_progress(x);
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mine), "dereg");
	free(local);
	TEST_ASSERT_EQUAL(rnic_poll(&x->p.a, &wc, 1), 1, "no completion");
	TEST_ASSERT_EQUAL(wc.wr_id, 13, "wr_id");
	/* Inline, only the first packets moved before the dereg; dedicated,
	 * the engine may have finished first. */
	TEST_ASSERT(wc.status == DRNIC_WC_LOC_PROT_ERR ||
		    (x->p.mode == DRNIC_PROGRESS_DEDICATED && wc.status == DRNIC_WC_SUCCESS),
		    "status %s", drnic_wc_status_str(wc.status));
	printf("%s was deregistered in flight: %s\n", what, drnic_wc_status_str(wc.status));
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(big), "dereg B's buffer");
	drnic_free(buf);
	return TEST_SUCCESS;
}

static int
adv_dereg_inflight_write_body(struct adv *x)
{
	return adv_dereg_inflight(x, DRNIC_WR_RDMA_WRITE);
}

static int
adv_dereg_inflight_read_body(struct adv *x)
{
	return adv_dereg_inflight(x, DRNIC_WR_RDMA_READ);
}

/* ------------------------------------------------------------------------ */
/* 4. A path change takes effect                                            */
/* ------------------------------------------------------------------------ */

/* Move @p s's QP from RTS through SQD to a new address vector: its GID
 * @p sgid to @p peer's GID @p dgid; then back to RTS. */
static int
adv_move_path(struct rnic_side *s, struct rnic_side *peer, int sgid, int dgid)
{
	struct drnic_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_SQD;
	TEST_ASSERT_SUCCESS(drnic_modify_qp(s->qp, &a, DRNIC_QP_STATE), "RTS -> SQD");
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = (uint8_t)sgid;
	TEST_ASSERT_SUCCESS(drnic_query_gid(peer->dev, 1, dgid, &a.ah_attr.grh.dgid), "gid");
	TEST_ASSERT_SUCCESS(drnic_modify_qp(s->qp, &a, DRNIC_QP_STATE | DRNIC_QP_AV),
			    "SQD -> SQD with a new address vector");
	a.qp_state = DRNIC_QPS_RTS;
	TEST_ASSERT_SUCCESS(drnic_modify_qp(s->qp, &a, DRNIC_QP_STATE), "SQD -> RTS");
	return TEST_SUCCESS;
}

/*
 * SQD -> SQD may load a new address vector (IBA 10.3.1, the SQD state):
 * both ends move from their IPv4 GIDs to their IPv6 ones. A's next WRITE
 * leaves from and to the new addresses, B takes it, and a request from A's
 * old address is now a stranger's.
 */
static int
adv_path_change_body(struct adv *x)
{
	struct drnic_wire_pkt old = adv_req(x, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY);
	union drnic_gid ga, gb;

	TEST_ASSERT_SUCCESS(drnic_query_gid(x->p.a.dev, 1, 1, &ga), "A's GID 1");
	TEST_ASSERT_SUCCESS(drnic_query_gid(x->p.b.dev, 1, 1, &gb), "B's GID 1");
	CHECK(adv_move_path(&x->p.a, &x->p.b, 1, 1));
	CHECK(adv_move_path(&x->p.b, &x->p.a, 1, 1));
	adv_tap_reset(x);
	memset(x->p.a.buf, 0x5A, 256);
	TEST_ASSERT_SUCCESS(post_rdma(&x->p.a, 61, DRNIC_WR_RDMA_WRITE, x->p.a.buf, 256,
				      drnic_mr_lkey(x->p.a.mr), (uintptr_t)x->vic,
				      drnic_mr_rkey(x->vic_mr)), "post WRITE");
	CHECK(expect_wc(&x->p.a, 61, DRNIC_WC_SUCCESS, "WRITE on the new path"));
	TEST_ASSERT(adv_vic_is(x, 0x5A, 256), "the WRITE did not land");
	adv_tap_drain(x);
	TEST_ASSERT(x->seen_a2b > 0, "the taps saw no frame from A");
	TEST_ASSERT_EQUAL(x->last_a2b.ip.version, 6, "A sent over IPv%u",
			  x->last_a2b.ip.version);
	TEST_ASSERT(memcmp(x->last_a2b.ip.dst, gb.raw, 16) == 0, "not to B's new address");
	TEST_ASSERT(memcmp(x->last_a2b.ip.src, ga.raw, 16) == 0, "not from A's new address");
	TEST_ASSERT_EQUAL(adv_qp_stats(&x->p.b).drops[DRNIC_ENGINE_DROP_BAD_ADDR], 0,
			  "B refused A's frames");
	/* A's old address is no longer B's peer. */
	old.bth.psn = adv_qp_stats(&x->p.b).expected_psn;
	old.reth.va = (uintptr_t)x->vic;
	old.reth.rkey = drnic_mr_rkey(x->vic_mr);
	old.reth.dmalen = 64;
	memset(adv_bytes, 0xEE, 64);
	CHECK(inject_dropped(x, ADV_B, &old, adv_bytes, 64, DRNIC_ENGINE_DROP_BAD_ADDR,
				 "WRITE from A's old address"));
	TEST_ASSERT(adv_vic_is(x, 0x5A, 64), "the stranger's WRITE landed");
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------------ */

static int
adv_run(enum drnic_progress_mode mode, const char *what, int (*body)(struct adv *x),
	const struct rnic_pair_opts *extra)
{
	struct rnic_pair_opts o = { 0 };
	struct adv *x = calloc(1, sizeof(*x));
	int rc;

	if (x == NULL)
		return TEST_FAILED;
	if (extra != NULL)
		o = *extra;
	o.mode = mode;
	printf("--- %s, %s progress\n", what, mode == DRNIC_PROGRESS_INLINE ? "inline" :
	       "dedicated");
	rc = adv_open(x, &o);
	if (rc == TEST_SUCCESS)
		rc = body(x);
	adv_close(x);
	free(x);
	printf("--- %s: %s\n", what, rc == TEST_SUCCESS ? "ok" : rc == TEST_SKIPPED ? "skipped" :
	       "FAILED");
	return rc;
}

/* Every case runs, whatever the one before it gave; the test fails when one did. */
static int
adv_wire_tests(enum drnic_progress_mode mode)
{
	static const struct rnic_pair_opts ghost = { .timeout = 10, .retry_cnt = 1 };
	static const struct rnic_pair_opts burst = { .max_dest_rd_atomic = 4, .max_rd_atomic = 8 };
	static const struct rnic_pair_opts ipv6 = { .ipv6 = { "fd00::1", "fd00::2" } };
	static const struct {
		const char *what;
		int (*body)(struct adv *x);
		const struct rnic_pair_opts *opts;
	} cases[] = {
		{ "spoofed addresses, P_Key, MAC, VLAN", adv_spoof_body, NULL },
		{ "ghost and stranger responses", adv_ghost_body, &ghost },
		{ "duplicate READ after dereg", adv_dereg_read_body, NULL },
		{ "WRITE MIDDLE/LAST after dereg", adv_dereg_write_body, NULL },
		{ "READ of 2^32 - 1 bytes", adv_read_huge_body, NULL },
		{ "SEND with Invalidate", adv_send_inv_body, NULL },
		{ "READ burst over max_dest_rd_atomic", adv_read_burst_body, &burst },
		{ "dereg under an in-flight WRITE", adv_dereg_inflight_write_body, NULL },
		{ "dereg under an in-flight READ", adv_dereg_inflight_read_body, NULL },
		{ "path change in SQD", adv_path_change_body, &ipv6 },
	};
	unsigned int i, failed = 0;
	int rc;

	for (i = 0; i < RTE_DIM(cases); i++) {
		rc = adv_run(mode, cases[i].what, cases[i].body, cases[i].opts);
		if (rc == TEST_SKIPPED)
			return rc;
		failed += rc != TEST_SUCCESS;
	}
	printf("%u of %u cases failed\n", failed, (unsigned int)RTE_DIM(cases));
	return failed == 0 ? TEST_SUCCESS : TEST_FAILED;
}

static int
adv_wire_inline(void)
{
	return adv_wire_tests(DRNIC_PROGRESS_INLINE);
}

static int
adv_wire_dedicated(void)
{
	return adv_wire_tests(DRNIC_PROGRESS_DEDICATED);
}

static int
adv_flood_inline(void)
{
	return adv_run(DRNIC_PROGRESS_INLINE, "duplicate READ and out-of-sequence floods",
		       adv_flood_body, NULL);
}

DRNIC_TEST_REGISTER(adv_wire_inline_autotest, DRNIC_TEST_FAST, adv_wire_inline);
DRNIC_TEST_REGISTER(adv_wire_dedicated_autotest, DRNIC_TEST_FAST, adv_wire_dedicated);
DRNIC_TEST_REGISTER(adv_flood_inline_autotest, DRNIC_TEST_FAST, adv_flood_inline);
