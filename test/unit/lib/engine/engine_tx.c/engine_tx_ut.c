/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/engine/engine_tx.c with a fake link and the fake clock:
 * frames staged by engine_qp_tx() leave in one burst per flush; ACKs alone
 * on a link that asks for it are held until hold_until_ns or until data is
 * staged, never longer; what the link refuses stays staged, in order, and
 * goes first; mbufs come from the pool a burst at a time and a dry pool is
 * counted; the frame template follows the QP's path; ICRCs a build left
 * are filled before a frame leaves.
 */
#include <CUnit/Basic.h>

#include "lib/engine/engine_tx.c"

#include "test/unit/lib/engine/ut_engine_link.h"
#include "test/unit/lib/engine/ut_engine_clock.h"
#include "ut_common.h"


static struct rte_mempool *ut_pool;
static struct ut_link ut_link;
static struct drnic_device ut_dev;
static struct drnic_qp ut_qp;
static struct engine ut_eng;
static struct engine_qp ut_eq;

static struct engine_port *
ut_reset(bool hold_acks)
{
	struct engine_port *p = &ut_eng.port[0];

	if (ut_eng.mcache_n > 0)
		rte_pktmbuf_free_bulk(ut_eng.mcache, ut_eng.mcache_n);
	if (p->tx_n > 0)
		rte_pktmbuf_free_bulk(p->tx, p->tx_n);
	ut_link_reset(&ut_link, 1);
	ut_link.link.tx_hold_acks = hold_acks;
	memset(&ut_eng, 0, sizeof(ut_eng));
	ut_eng.pool = ut_pool;
	ut_eng.clock.now_ns = ut_clock;
	ut_eng.nb_ports = 1;
	TAILQ_INIT(&p->active);
	p->dev = &ut_dev;
	p->link = &ut_link.link;
	memset(&ut_dev, 0, sizeof(ut_dev));
	ut_dev.link = &ut_link.link;
	memset(&ut_eq, 0, sizeof(ut_eq));
	ut_qp.dev = &ut_dev;
	engine_qp_bind(&ut_eq, &ut_qp);
	ut_eq.eng = &ut_eng;
	ut_eq.port = p;
	drnic_wire_pkt_init(&ut_eq.tmpl);
	ut_eq.tmpl.bth.dqpn = 33;
	RTE_VERIFY(drnic_wire_tmpl_make(&ut_eq.wtmpl, &ut_eq.tmpl) == 0);   /* also after the tests */
	ut_now = 1000000;
	return p;
}

/* Stage one frame of opcode @p op (PSN @p psn) as a machine would. */
static void
ut_stage(uint8_t op, uint32_t psn)
{
	struct drnic_wire_pkt pkt = ut_eq.tmpl;

	pkt.bth.opcode = op;
	pkt.bth.psn = psn;
	CU_ASSERT_EQUAL_FATAL(engine_qp_tx(&ut_eq, &pkt), 0);
}

/* The same with @p len bytes of payload. */
static void
ut_stage_len(uint8_t op, uint32_t psn, uint32_t len)
{
	static uint8_t payload[256];
	struct drnic_wire_sge sg = { .addr = payload, .len = len };
	struct drnic_wire_pkt pkt = ut_eq.tmpl;

	memset(payload, (int)psn, sizeof(payload));
	pkt.bth.opcode = op;
	pkt.bth.psn = psn;
	pkt.sg = &sg;
	pkt.sg_cnt = 1;
	CU_ASSERT_EQUAL_FATAL(engine_qp_tx(&ut_eq, &pkt), 0);
}

/* The PSN of the @p i-th frame the link took. */
static uint32_t
ut_sent_psn(unsigned int i)
{
	struct drnic_wire_pkt pkt;

	CU_ASSERT_FATAL(i < ut_link.nsent);
	CU_ASSERT_EQUAL_FATAL(drnic_wire_parse(ut_link.sent[i], &pkt), DRNIC_WIRE_OK);
	return pkt.bth.psn;
}

#define ACK DRNIC_WIRE_OP_RC_ACKNOWLEDGE
#define WRITE DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY

/* On a link where a burst is a system call, ACKs alone wait until
 * hold_until_ns on the clock (not a nanosecond less), then leave together
 * in one burst; the hold starts again from nothing afterwards. */
static void
test_ack_hold_until_deadline(void)
{
	struct engine_port *p = ut_reset(true);
	uint64_t t0 = ut_now;

	ut_stage(ACK, 1);
	ut_stage(ACK, 2);
	CU_ASSERT_FALSE(p->tx_data);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 0);
	CU_ASSERT_EQUAL(p->hold_until_ns, t0 + ENGINE_ACK_HOLD_NS);
	CU_ASSERT_EQUAL(ut_link.bursts, 0);
	ut_now = t0 + ENGINE_ACK_HOLD_NS - 1;
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 0);
	CU_ASSERT_EQUAL(ut_link.nsent, 0);
	CU_ASSERT_EQUAL(p->hold_until_ns, t0 + ENGINE_ACK_HOLD_NS);  /* not pushed back */
	ut_now = t0 + ENGINE_ACK_HOLD_NS;
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 2);
	CU_ASSERT_EQUAL(ut_link.bursts, 1);
	CU_ASSERT_EQUAL(ut_link.nsent, 2);
	CU_ASSERT_EQUAL(ut_sent_psn(0), 1);
	CU_ASSERT_EQUAL(ut_sent_psn(1), 2);
	CU_ASSERT_EQUAL(p->tx_n, 0);
	CU_ASSERT_EQUAL(p->hold_until_ns, 0);
	CU_ASSERT_EQUAL(ut_eng.stats.tx_packets, 2);
	CU_ASSERT_EQUAL(ut_link.link.stats[0].tx_packets, 2);
	/* An empty port sends nothing and arms nothing. */
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 0);
	CU_ASSERT_EQUAL(p->hold_until_ns, 0);
	CU_ASSERT_EQUAL(ut_link.bursts, 1);
	/* The next lone ACK is held from its own first flush. */
	ut_now += 5;
	ut_stage(ACK, 3);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 0);
	CU_ASSERT_EQUAL(p->hold_until_ns, ut_now + ENGINE_ACK_HOLD_NS);
}

/* A data frame staged while ACKs are held: everything leaves at the next
 * flush, in one burst, in staging order. */
static void
test_ack_hold_ends_with_data(void)
{
	struct engine_port *p = ut_reset(true);

	ut_stage(ACK, 7);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 0);
	ut_now += 100;
	ut_stage(WRITE, 8);
	CU_ASSERT_TRUE(p->tx_data);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 2);
	CU_ASSERT_EQUAL(ut_link.bursts, 1);
	CU_ASSERT_EQUAL(ut_sent_psn(0), 7);
	CU_ASSERT_EQUAL(ut_sent_psn(1), 8);
	CU_ASSERT_FALSE(p->tx_data);
	CU_ASSERT_EQUAL(p->hold_until_ns, 0);
	CU_ASSERT_EQUAL(ut_eq.stats.tx_packets, 2);
}

/* No hold where a burst costs nothing (tx_hold_acks unset), nor once a
 * whole burst of ACKs is staged: they leave at the first flush. */
static void
test_ack_no_hold(void)
{
	struct engine_port *p = ut_reset(false);
	unsigned int i;

	ut_stage(ACK, 1);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 1);
	CU_ASSERT_EQUAL(ut_link.nsent, 1);
	p = ut_reset(true);
	for (i = 0; i < ENGINE_BURST; i++)
		ut_stage(ACK, i);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), ENGINE_BURST);
	CU_ASSERT_EQUAL(ut_link.bursts, 1);
	CU_ASSERT_EQUAL(ut_link.nsent, ENGINE_BURST);
}

/* Nothing is held for ever: a lone ACK flushed every microsecond, as an
 * idle engine would, has left by hold_until_ns. */
static void
test_ack_never_held_forever(void)
{
	struct engine_port *p = ut_reset(true);
	uint64_t t0 = ut_now;
	unsigned int flushes = 0;

	ut_stage(ACK, 1);
	while (ut_link.nsent == 0 && flushes < 1000) {
		engine_port_flush(&ut_eng, p);
		flushes++;
		ut_now += 1000;
	}
	CU_ASSERT_EQUAL(ut_link.nsent, 1);
	CU_ASSERT(ut_now - 1000 <= t0 + ENGINE_ACK_HOLD_NS);
	CU_ASSERT(ut_now - 1000 >= t0 + ENGINE_ACK_HOLD_NS);
}

/* A full link takes the front of the staging: the rest stays, in order,
 * first in line, and is not held as ACKs again. */
static void
test_link_refuses(void)
{
	struct engine_port *p = ut_reset(true);

	ut_stage(WRITE, 10);
	ut_stage(ACK, 11);
	ut_stage(ACK, 12);
	ut_link.tx_take = 1;
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 1);
	CU_ASSERT_EQUAL(p->tx_n, 2);
	CU_ASSERT_TRUE(p->tx_data);       /* refused ACKs go next, unheld */
	CU_ASSERT_EQUAL(ut_link.link.stats[0].tx_busy, 2);
	ut_link.tx_take = UINT32_MAX;
	ut_stage(ACK, 13);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 3);
	CU_ASSERT_EQUAL(ut_link.nsent, 4);
	CU_ASSERT_EQUAL(ut_sent_psn(0), 10);
	CU_ASSERT_EQUAL(ut_sent_psn(1), 11);
	CU_ASSERT_EQUAL(ut_sent_psn(2), 12);
	CU_ASSERT_EQUAL(ut_sent_psn(3), 13);
	CU_ASSERT_EQUAL(ut_eng.stats.tx_packets, 4);
}

/* Short frames (ACKs among them) leave their ICRC to the flush
 * (DRNIC_WIRE_BUILD_DEFER_ICRC), longer ones are complete when built:
 * every frame the link takes carries a good one, whether it left in the
 * first flush, after an ACK hold, or after the link refused it once; each
 * is filled once. */
static void
test_icrc_filled_before_leaving(void)
{
	struct engine_port *p = ut_reset(true);
	unsigned int i;

	ut_stage(ACK, 1);
	CU_ASSERT_EQUAL(p->tx_icrc_n, 1);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 0);   /* held, filled */
	CU_ASSERT_EQUAL(p->tx_icrc_n, 0);
	ut_stage_len(WRITE, 2, 64);
	ut_stage_len(WRITE, 3, 100);
	ut_stage(ACK, 4);
	ut_stage_len(WRITE, 5, 240);            /* complete when built */
	CU_ASSERT_EQUAL(p->tx_icrc_n, 3);
	ut_link.tx_take = 2;
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 2);
	CU_ASSERT_EQUAL(p->tx_icrc_n, 0);
	CU_ASSERT_EQUAL(p->tx_n, 3);
	ut_link.tx_take = UINT32_MAX;
	ut_stage_len(WRITE, 6, 64);
	CU_ASSERT_EQUAL(p->tx_icrc_n, 1);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 4);
	CU_ASSERT_EQUAL(ut_link.nsent, 6);
	for (i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(ut_sent_psn(i), i + 1);   /* parses: its ICRC is right */
	CU_ASSERT_EQUAL(p->tx_icrc_n, 0);
	CU_ASSERT_EQUAL(p->tx_n, 0);
}

/* Room counts down as frames are staged; a flush gives it back. */
static void
test_room(void)
{
	struct engine_port *p = ut_reset(false);
	uint16_t room = engine_port_room(p);

	CU_ASSERT_EQUAL(room, RTE_DIM(p->tx));
	ut_stage(WRITE, 1);
	ut_stage(WRITE, 2);
	CU_ASSERT_EQUAL(engine_port_room(p), room - 2);
	engine_port_flush(&ut_eng, p);
	CU_ASSERT_EQUAL(engine_port_room(p), room);
}

/* Transmit mbufs come from the pool a burst at a time; a pool with less
 * than a burst left gives them one by one; a dry one is counted nomem and
 * nothing is staged. */
static void
test_pkt_alloc(void)
{
	struct rte_mempool *tiny;
	struct rte_mbuf *m[8];
	unsigned int avail, i;

	ut_reset(false);
	avail = rte_mempool_avail_count(ut_pool);
	m[0] = engine_pkt_alloc(&ut_eng);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m[0]);
	CU_ASSERT_EQUAL(rte_mempool_avail_count(ut_pool), avail - ENGINE_BURST);
	CU_ASSERT_EQUAL(ut_eng.mcache_n, ENGINE_BURST - 1);
	for (i = 1; i < ENGINE_BURST; i++)
		rte_pktmbuf_free(engine_pkt_alloc(&ut_eng));
	CU_ASSERT_EQUAL(ut_eng.mcache_n, 0);
	rte_pktmbuf_free(m[0]);

	tiny = rte_pktmbuf_pool_create("ut_tiny", 3, 0, 0, RTE_PKTMBUF_HEADROOM + 512,
				       SOCKET_ID_ANY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tiny);
	ut_eng.pool = tiny;
	for (i = 0; i < 3; i++) {
		m[i] = engine_pkt_alloc(&ut_eng);
		CU_ASSERT_PTR_NOT_NULL(m[i]);
	}
	CU_ASSERT_EQUAL(ut_eng.stats.nomem, 0);
	{
		struct drnic_wire_pkt pkt = ut_eq.tmpl;

		pkt.bth.opcode = WRITE;
		CU_ASSERT_EQUAL(engine_qp_tx(&ut_eq, &pkt), -ENOMEM);
	}
	CU_ASSERT_EQUAL(ut_eng.stats.nomem, 1);
	CU_ASSERT_EQUAL(ut_eng.port[0].tx_n, 0);
	CU_ASSERT_EQUAL(ut_eq.stats.tx_packets, 0);
	for (i = 0; i < 3; i++)
		rte_pktmbuf_free(m[i]);
	rte_mempool_free(tiny);
	ut_eng.pool = ut_pool;
}

/* The template holds both ends of the path: our MAC and GID, the peer's
 * MAC and GID, in the GID's IP version; P_Key and destination QPN. */
static void
test_template(void)
{
	struct drnic_wire_pkt *t = &ut_eq.tmpl, q;
	static const uint8_t v4[4] = { 10, 0, 0, 1 }, pv4[4] = { 10, 0, 0, 2 };

	ut_reset(false);
	ut_dev.nb_gids = 2;
	memset(ut_dev.gid[0].raw, 0, 16);
	ut_dev.gid[0].raw[10] = 0xFF;
	ut_dev.gid[0].raw[11] = 0xFF;
	memcpy(&ut_dev.gid[0].raw[12], v4, 4);
	ut_dev.gid_is_v4[0] = 1;
	memset(ut_dev.gid[1].raw, 0xFE, 16);
	ut_eq.path.ah.grh.sgid_index = 0;
	memcpy(&ut_eq.path.ah.grh.dgid.raw[12], pv4, 4);
	memcpy(ut_eq.path.dmac, (const uint8_t[6]){ 2, 0, 0, 0, 0, 9 }, 6);
	ut_eq.path.dest_qp_num = 0x123456;
	ut_eq.path.mtu = 2048;
	ut_eq.path.ah.grh.hop_limit = 0;
	engine_qp_build_template(&ut_eq);
	CU_ASSERT_EQUAL(t->ip.version, 4);
	CU_ASSERT_EQUAL(memcmp(t->ip.src, v4, 4), 0);
	CU_ASSERT_EQUAL(memcmp(t->ip.dst, pv4, 4), 0);
	CU_ASSERT_EQUAL(memcmp(t->eth.src, ut_link.link.mac, 6), 0);
	CU_ASSERT_EQUAL(t->eth.dst[5], 9);
	CU_ASSERT_EQUAL(t->ip.ttl, 64);
	CU_ASSERT_EQUAL(t->bth.dqpn, 0x123456);
	CU_ASSERT_EQUAL(t->bth.pkey, verbs_pkey_entry(0));
	/* The frames it sends carry it (built from its header bytes). */
	ut_stage_len(WRITE, 7, 64);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, &ut_eng.port[0]), 1);
	CU_ASSERT_EQUAL_FATAL(drnic_wire_parse(ut_link.sent[0], &q), DRNIC_WIRE_OK);
	CU_ASSERT_EQUAL(q.ip.version, 4);
	CU_ASSERT_EQUAL(memcmp(q.ip.src, v4, 4), 0);
	CU_ASSERT_EQUAL(memcmp(q.ip.dst, pv4, 4), 0);
	CU_ASSERT_EQUAL(memcmp(q.eth.src, ut_link.link.mac, 6), 0);
	CU_ASSERT_EQUAL(q.eth.dst[5], 9);
	CU_ASSERT_EQUAL(q.ip.ttl, 64);
	CU_ASSERT_EQUAL(q.bth.dqpn, 0x123456);
	CU_ASSERT_EQUAL(q.bth.pkey, verbs_pkey_entry(0));
	CU_ASSERT_EQUAL(q.bth.psn, 7);
	/* An IPv6 source GID: a v6 frame from it. */
	ut_eq.path.ah.grh.sgid_index = 1;
	ut_eq.path.ah.grh.hop_limit = 5;
	engine_qp_build_template(&ut_eq);
	CU_ASSERT_EQUAL(t->ip.version, 6);
	CU_ASSERT_EQUAL(memcmp(t->ip.src, ut_dev.gid[1].raw, 16), 0);
	CU_ASSERT_EQUAL(t->ip.ttl, 5);
	ut_stage(ACK, 8);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, &ut_eng.port[0]), 1);
	CU_ASSERT_EQUAL_FATAL(drnic_wire_parse(ut_link.sent[1], &q), DRNIC_WIRE_OK);
	CU_ASSERT_EQUAL(q.ip.version, 6);
	CU_ASSERT_EQUAL(memcmp(q.ip.src, ut_dev.gid[1].raw, 16), 0);
	CU_ASSERT_EQUAL(q.ip.ttl, 5);
	CU_ASSERT_EQUAL(q.bth.opcode, ACK);
	CU_ASSERT_EQUAL(q.bth.psn, 8);
}

/* An XRC QP's frames carry XRC's opcode for the machine's RC one: requests
 * with the XRCETH they were given, responses (ACK) without; an ACK alone is
 * still held as an ACK. */
static void
test_xrc_opcodes(void)
{
	struct engine_port *p = ut_reset(false);
	struct drnic_wire_pkt pkt = ut_eq.tmpl, got;

	ut_eq.xrc = true;
	pkt.bth.opcode = DRNIC_WIRE_OP_RC_SEND_ONLY;
	pkt.xrceth.srqn = 0xBEEF;
	CU_ASSERT_EQUAL_FATAL(engine_qp_tx(&ut_eq, &pkt), 0);
	ut_stage(ACK, 8);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, p), 2);
	CU_ASSERT_EQUAL_FATAL(ut_link.nsent, 2);
	CU_ASSERT_EQUAL_FATAL(drnic_wire_parse(ut_link.sent[0], &got), DRNIC_WIRE_OK);
	CU_ASSERT_EQUAL(got.bth.opcode, DRNIC_WIRE_OP_XRC_SEND_ONLY);
	CU_ASSERT_EQUAL(got.xrceth.srqn, 0xBEEF);
	CU_ASSERT_EQUAL_FATAL(drnic_wire_parse(ut_link.sent[1], &got), DRNIC_WIRE_OK);
	CU_ASSERT_EQUAL(got.bth.opcode, DRNIC_WIRE_OP_XRC_ACKNOWLEDGE);
	CU_ASSERT_EQUAL(got.bth.psn, 8);
	ut_eq.xrc = false;
}

int
main(void)
{
	CU_pSuite s;
	int rc;

	ut_pool = ut_eal_pool("engine_tx_ut", 1024);
	if (ut_pool == NULL)
		return 1;
	CU_initialize_registry();
	s = CU_add_suite("engine_tx", NULL, NULL);
	CU_ADD_TEST(s, test_ack_hold_until_deadline);
	CU_ADD_TEST(s, test_ack_hold_ends_with_data);
	CU_ADD_TEST(s, test_ack_no_hold);
	CU_ADD_TEST(s, test_icrc_filled_before_leaving);
	CU_ADD_TEST(s, test_ack_never_held_forever);
	CU_ADD_TEST(s, test_link_refuses);
	CU_ADD_TEST(s, test_room);
	CU_ADD_TEST(s, test_pkt_alloc);
	CU_ADD_TEST(s, test_template);
	CU_ADD_TEST(s, test_xrc_opcodes);
	rc = ut_run_all();
	ut_reset(false);
	ut_link_reset(&ut_link, 1);
	rte_eal_cleanup();
	return rc;
}
