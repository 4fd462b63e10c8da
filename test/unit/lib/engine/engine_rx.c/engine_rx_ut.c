/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/engine/engine_rx.c on a fake link, with real RoCEv2
 * frames built and parsed by lib/wire (ICRCs real) and the two machines
 * stubbed to record what reached them: requests go to the responder and
 * responses to the completer, in arrival order; a frame not from the QP's
 * peer (address, IP version, MAC, P_Key, VLAN), for no QP, for another
 * engine's QP or of another transport reaches neither and is counted for
 * its reason; a frame whose ICRC the parser deferred is verified before it
 * is dropped for any other reason; a malformed frame is a wire drop; a QP
 * is open to anyone until RTR sets it up; full bursts make a backlog that
 * ends. Every frame goes back to the pool.
 *
 * The receive path reads no clock, so the fake clock is not needed here.
 */
#include <CUnit/Basic.h>

#include "lib/engine/engine_rx.c"

#include "test/unit/lib/engine/ut_engine_link.h"
#include "ut_common.h"

/* ---- the machines, stubbed: who got what ------------------------------ */

enum ut_machine { UT_RESP, UT_COMP, UT_UD };

struct ut_got {
	enum ut_machine machine;
	struct engine_qp *eq;
	uint8_t opcode;
	uint32_t psn;
	bool icrc_deferred;
	bool icrc_batch;         /* left unchecked to the machine: never */
	uint32_t xrc_srqn;
};

static struct ut_got ut_got[64];
static unsigned int ut_ngot;
static unsigned int ut_resp_setups, ut_comp_setups, ut_rec_setups, ut_templates;
static struct drnic_wire_pkt ut_rtr_tmpl;   /* what set-up builds for a QP */

static void
ut_record(enum ut_machine machine, struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	CU_ASSERT_FATAL(ut_ngot < RTE_DIM(ut_got));
	ut_got[ut_ngot++] = (struct ut_got){
		.machine = machine, .eq = eq, .opcode = pkt->bth.opcode,
		.psn = pkt->bth.psn, .icrc_deferred = pkt->icrc_deferred,
		.icrc_batch = pkt->icrc_batch, .xrc_srqn = pkt->xrceth.srqn,
	};
}

void
resp_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	RTE_SET_USED(m);
	ut_record(UT_RESP, eq, pkt);
}

void
resp_ud_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	RTE_SET_USED(m);
	ut_record(UT_UD, eq, pkt);
}

void
comp_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	RTE_SET_USED(m);
	ut_record(UT_COMP, eq, pkt);
}

void
resp_setup(struct engine_qp *eq, uint32_t epsn)
{
	eq->resp.epsn = epsn;
	ut_resp_setups++;
}

void
comp_setup(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	ut_comp_setups++;
}

void
rec_setup(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	ut_rec_setups++;
}

/* engine_tx.c's, which builds it from the path: the test's template. */
void
engine_qp_build_template(struct engine_qp *eq)
{
	eq->tmpl = ut_rtr_tmpl;
	RTE_VERIFY(drnic_wire_tmpl_make(&eq->wtmpl, &eq->tmpl) == 0);
	ut_templates++;
}

/* ---- the engine, its port and QPs ------------------------------------- */

/*
 * QPs of the device (QPN: slot in its table): the QP of the tests, set up
 * (RTS) with its peer; one of another engine; one whose engine state is
 * gone; one not set up yet (INIT); one that enters RTR.
 */
#define UT_QPN        0x11
#define UT_QPN_OTHER  0x12
#define UT_QPN_GONE   0x13
#define UT_QPN_INIT   0x14
#define UT_QPN_RTR    0x15
#define UT_QPN_NONE   0x16     /* no QP */
#define UT_PEER_QPN   0x77
#define UT_NQP        5

static const uint8_t ut_mac[6] = { 0x02, 0, 0, 0, 0, 1 };      /* the port's */
static const uint8_t ut_peer_mac[6] = { 0x02, 0, 0, 0, 0, 9 };
static const uint8_t ut_ip[4] = { 10, 0, 0, 1 };
static const uint8_t ut_peer_ip[4] = { 10, 0, 0, 2 };

static struct rte_mempool *ut_pool;
static unsigned int ut_pool_avail;
static struct ut_link ut_link;
static struct drnic_device ut_dev;
static _Atomic(struct drnic_qp *) ut_qp_tab[32];
static struct drnic_qp ut_qp[UT_NQP];
static struct engine_qp ut_eq[UT_NQP];
static struct engine ut_eng, ut_eng_other;

/* Our end of the path to the peer: what engine_qp_build_template() makes. */
static void
ut_tmpl_init(struct drnic_wire_pkt *t)
{
	drnic_wire_pkt_init(t);
	memcpy(t->eth.src, ut_mac, 6);
	memcpy(t->eth.dst, ut_peer_mac, 6);
	memcpy(t->ip.src, ut_ip, 4);
	memcpy(t->ip.dst, ut_peer_ip, 4);
	t->bth.pkey = verbs_pkey_entry(0);
	t->bth.dqpn = UT_PEER_QPN;
}

static struct engine_qp *
ut_qp_add(unsigned int i, uint32_t qpn, struct engine *eng, enum drnic_qp_state st, bool init)
{
	struct drnic_qp *qp = &ut_qp[i];
	struct engine_qp *eq = &ut_eq[i];

	memset(qp, 0, sizeof(*qp));
	memset(eq, 0, sizeof(*eq));
	qp->dev = &ut_dev;
	qp->qp_num = qpn;
	atomic_store(&qp->state, st);
	qp->eng_priv = eq;
	engine_qp_bind(eq, qp);
	eq->eng = eng;
	eq->port = &eng->port[0];
	eq->req_init = init;
	eq->resp_init = init;
	if (init)
		ut_tmpl_init(&eq->tmpl);
	else
		drnic_wire_pkt_init(&eq->tmpl);
	RTE_VERIFY(drnic_wire_tmpl_make(&eq->wtmpl, &eq->tmpl) == 0);
	atomic_store(&ut_qp_tab[qpn & ut_dev.qp_mask], qp);
	return eq;
}

/* The engine with one port on the fake link and the QPs above; returns
 * the QP of the tests. */
static struct engine_qp *
ut_reset(void)
{
	struct engine_port *p = &ut_eng.port[0];
	unsigned int i;

	ut_link_reset(&ut_link, 1);
	memset(&ut_dev, 0, sizeof(ut_dev));
	ut_dev.link = &ut_link.link;
	for (i = 0; i < RTE_DIM(ut_qp_tab); i++)
		atomic_store(&ut_qp_tab[i], NULL);
	ut_dev.qp_tab = ut_qp_tab;
	ut_dev.qp_tab_size = RTE_DIM(ut_qp_tab);
	ut_dev.qp_mask = RTE_DIM(ut_qp_tab) - 1;
	memset(&ut_eng, 0, sizeof(ut_eng));
	memset(&ut_eng_other, 0, sizeof(ut_eng_other));
	ut_eng.pool = ut_pool;
	ut_eng.nb_ports = 1;
	TAILQ_INIT(&p->active);
	p->dev = &ut_dev;
	p->link = &ut_link.link;
	ut_eng_other.id = 1;

	ut_qp_add(1, UT_QPN_OTHER, &ut_eng_other, DRNIC_QPS_RTS, true);
	ut_qp_add(2, UT_QPN_GONE, &ut_eng, DRNIC_QPS_RTS, true);
	ut_qp[2].eng_priv = NULL;
	ut_qp_add(3, UT_QPN_INIT, &ut_eng, DRNIC_QPS_INIT, false);
	ut_qp_add(4, UT_QPN_RTR, &ut_eng, DRNIC_QPS_RTR, false);
	ut_eq[4].path.rq_psn = 500;
	ut_tmpl_init(&ut_rtr_tmpl);

	ut_ngot = 0;
	ut_resp_setups = ut_comp_setups = ut_rec_setups = ut_templates = 0;
	return ut_qp_add(0, UT_QPN, &ut_eng, DRNIC_QPS_RTS, true);
}

/* A frame from the peer to QP @p dqpn: the template's ends swapped. */
static struct drnic_wire_pkt
ut_from_peer(uint8_t opcode, uint32_t dqpn, uint32_t psn)
{
	struct drnic_wire_pkt p;

	drnic_wire_pkt_init(&p);
	memcpy(p.eth.src, ut_peer_mac, 6);
	memcpy(p.eth.dst, ut_mac, 6);
	memcpy(p.ip.src, ut_peer_ip, 4);
	memcpy(p.ip.dst, ut_ip, 4);
	p.bth.opcode = opcode;
	p.bth.dqpn = dqpn;
	p.bth.psn = psn;
	p.bth.pkey = verbs_pkey_entry(0);
	p.deth.sqpn = UT_PEER_QPN;
	return p;
}

/* Build @p p with @p len bytes of payload into an mbuf of the pool. */
static struct rte_mbuf *
ut_build(const struct drnic_wire_pkt *p, uint32_t len)
{
	static uint8_t payload[4096];
	struct drnic_wire_sge sg = { payload, len };
	struct drnic_wire_pkt q = *p;
	struct rte_mbuf *m = rte_pktmbuf_alloc(ut_pool);

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	memset(payload, 0xA5, len);
	q.sg = len > 0 ? &sg : NULL;
	q.sg_cnt = len > 0 ? 1 : 0;
	CU_ASSERT_EQUAL_FATAL(drnic_wire_build(m, &q), 0);
	return m;
}

/* Queue @p p (@p len bytes of payload) for the next receive. */
static void
ut_feed(const struct drnic_wire_pkt *p, uint32_t len)
{
	ut_link_feed(&ut_link, ut_build(p, len));
}

/* Flip the last payload byte of @p m: its ICRC no longer matches. */
static struct rte_mbuf *
ut_corrupt(struct rte_mbuf *m)
{
	uint8_t *b = rte_pktmbuf_mtod_offset(m, uint8_t *, m->pkt_len - DRNIC_WIRE_ICRC_LEN - 1);

	CU_ASSERT_FATAL(rte_pktmbuf_is_contiguous(m));
	*b ^= 0x01;
	return m;
}

/* One receive of the @p n frames queued: all taken, all back in the pool. */
static void
ut_rx(unsigned int n)
{
	uint64_t before = ut_eng.stats.rx_packets;

	CU_ASSERT_EQUAL(engine_rx(&ut_eng), (int)n);
	CU_ASSERT_EQUAL(ut_eng.stats.rx_packets, before + n);
	CU_ASSERT_EQUAL(ut_link.rx_head, ut_link.rx_tail);
	CU_ASSERT_EQUAL(rte_mempool_avail_count(ut_pool), ut_pool_avail);
}

/* No engine drop counted, on the engine or on QP @p eq. */
static void
ut_assert_no_drops(const struct engine_qp *eq)
{
	unsigned int i;

	for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++) {
		CU_ASSERT_EQUAL(ut_eng.stats.drops[i], 0);
		CU_ASSERT_EQUAL(eq->stats.drops[i], 0);
	}
}

/* The wire drops are @p n of reason @p why, and nothing else. */
static void
ut_assert_wire_drops(enum drnic_wire_drop why, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < DRNIC_WIRE_DROP_MAX; i++)
		CU_ASSERT_EQUAL(ut_eng.stats.wire_drops[i], i == why ? n : 0u);
}

/* Exactly one drop on the engine, for @p why, and no wire drop. */
static void
ut_assert_one_drop(enum drnic_engine_drop why)
{
	unsigned int i;

	for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++)
		CU_ASSERT_EQUAL(ut_eng.stats.drops[i], i == why ? 1u : 0u);
	ut_assert_wire_drops(DRNIC_WIRE_OK, 0);
}

static void
ut_assert_got(unsigned int i, enum ut_machine machine, const struct engine_qp *eq, uint8_t op,
	      uint32_t psn)
{
	CU_ASSERT_FATAL(i < ut_ngot);
	CU_ASSERT_EQUAL(ut_got[i].machine, machine);
	CU_ASSERT_PTR_EQUAL(ut_got[i].eq, eq);
	CU_ASSERT_EQUAL(ut_got[i].opcode, op);
	CU_ASSERT_EQUAL(ut_got[i].psn, psn);
}

#define SEND_ONLY DRNIC_WIRE_OP_RC_SEND_ONLY
#define WRITE_ONLY DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY
#define WRITE_LAST DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST
#define READ_REQ DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST
#define READ_RESP DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY
#define ACK DRNIC_WIRE_OP_RC_ACKNOWLEDGE
#define ATOMIC_ACK DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE

/* ---- tests ------------------------------------------------------------- */

/* Requests from the peer reach the responder, responses the completer, one
 * by one in the order they came, requests and responses interleaved. */
static void
test_dispatch_in_order(void)
{
	static const uint8_t ops[] = { SEND_ONLY, ACK, WRITE_ONLY, READ_RESP, READ_REQ,
				       ATOMIC_ACK, DRNIC_WIRE_OP_RC_FETCH_ADD, ACK };
	static const enum ut_machine to[] = { UT_RESP, UT_COMP, UT_RESP, UT_COMP, UT_RESP,
					      UT_COMP, UT_RESP, UT_COMP };
	struct engine_qp *eq = ut_reset();
	struct drnic_wire_pkt p;
	unsigned int i;

	for (i = 0; i < RTE_DIM(ops); i++) {
		p = ut_from_peer(ops[i], UT_QPN, 100 + i);
		ut_feed(&p, ops[i] == SEND_ONLY || ops[i] == WRITE_ONLY ? 64 : 0);
	}
	ut_rx(RTE_DIM(ops));
	CU_ASSERT_EQUAL(ut_ngot, RTE_DIM(ops));
	for (i = 0; i < RTE_DIM(ops); i++)
		ut_assert_got(i, to[i], eq, ops[i], 100 + i);
	CU_ASSERT_EQUAL(eq->stats.rx_packets, RTE_DIM(ops));
	ut_assert_no_drops(eq);
	ut_assert_wire_drops(DRNIC_WIRE_OK, 0);
	/* A set-up QP is not set up again. */
	CU_ASSERT_EQUAL(ut_resp_setups + ut_comp_setups + ut_rec_setups + ut_templates, 0);
}

/* What the peer check lets through: a limited-member P_Key against our
 * full one, a priority tag (VID 0), another UDP source port. */
static void
test_peer_variants_pass(void)
{
	struct engine_qp *eq = ut_reset();
	struct drnic_wire_pkt p;

	p = ut_from_peer(SEND_ONLY, UT_QPN, 1);
	p.bth.pkey = 0x7FFF;
	ut_feed(&p, 8);
	p = ut_from_peer(ACK, UT_QPN, 2);
	p.eth.has_vlan = true;
	p.eth.vlan_tci = 0x6000;        /* PCP 3, VID 0 */
	ut_feed(&p, 0);
	p = ut_from_peer(ACK, UT_QPN, 3);
	p.udp.sport = 0xD123;
	ut_feed(&p, 0);
	ut_rx(3);
	CU_ASSERT_EQUAL(ut_ngot, 3);
	ut_assert_got(0, UT_RESP, eq, SEND_ONLY, 1);
	ut_assert_got(1, UT_COMP, eq, ACK, 2);
	ut_assert_got(2, UT_COMP, eq, ACK, 3);
	ut_assert_no_drops(eq);
	ut_assert_wire_drops(DRNIC_WIRE_OK, 0);
}

/*
 * Frames for the QP that are not from its peer, or not to this port: the
 * peer's frame with one thing changed (0: unchanged). IPv6 keeps the first
 * four bytes of each address the IPv4 ones the QP compares: the version
 * alone decides.
 */
static const struct ut_stranger {
	const char *what;
	uint8_t src_last, dst_last;     /* last byte of the IPv4 addresses */
	uint8_t version;
	uint8_t dmac_last;
	uint16_t pkey;
	uint16_t vlan_tci;              /* a tag with this TCI */
	enum drnic_engine_drop why;
} ut_strangers[] = {
	{ "another source IP", .src_last = 3, .why = DRNIC_ENGINE_DROP_BAD_ADDR },
	{ "another destination IP", .dst_last = 7, .why = DRNIC_ENGINE_DROP_BAD_ADDR },
	{ "IPv6 to an IPv4 QP", .version = 6, .why = DRNIC_ENGINE_DROP_BAD_ADDR },
	{ "another destination MAC", .dmac_last = 2, .why = DRNIC_ENGINE_DROP_BAD_DMAC },
	{ "a P_Key not in the table", .pkey = 0x8001, .why = DRNIC_ENGINE_DROP_BAD_PKEY },
	{ "a VLAN tag (VID 5)", .vlan_tci = 5, .why = DRNIC_ENGINE_DROP_BAD_VLAN },
};

static struct drnic_wire_pkt
ut_stranger_pkt(const struct ut_stranger *st)
{
	struct drnic_wire_pkt p = ut_from_peer(SEND_ONLY, UT_QPN, 1);

	if (st->src_last != 0)
		p.ip.src[3] = st->src_last;
	if (st->dst_last != 0)
		p.ip.dst[3] = st->dst_last;
	if (st->version == 6) {
		p.ip.version = 6;
		p.ip.src[15] = 1;       /* 0a00:0002::1 */
		p.ip.dst[15] = 1;       /* 0a00:0001::1 */
	}
	if (st->dmac_last != 0)
		p.eth.dst[5] = st->dmac_last;
	if (st->pkey != 0)
		p.bth.pkey = st->pkey;
	if (st->vlan_tci != 0) {
		p.eth.has_vlan = true;
		p.eth.vlan_tci = st->vlan_tci;
	}
	return p;
}

/* Each is counted on the QP and the engine for its reason and seen by
 * neither machine; a failure names the case. */
static void
test_strangers(void)
{
	unsigned int k, i;

	for (k = 0; k < RTE_DIM(ut_strangers); k++) {
		const struct ut_stranger *st = &ut_strangers[k];
		unsigned int failures = CU_get_number_of_failures();
		struct engine_qp *eq = ut_reset();
		struct drnic_wire_pkt p = ut_stranger_pkt(st);

		ut_feed(&p, 16);
		ut_rx(1);
		CU_ASSERT_EQUAL(ut_ngot, 0);
		ut_assert_one_drop(st->why);
		for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++)
			CU_ASSERT_EQUAL(eq->stats.drops[i], i == st->why ? 1u : 0u);
		CU_ASSERT_EQUAL(eq->stats.rx_packets, 1);   /* it came to the QP */
		CU_assertImplementation(CU_get_number_of_failures() == failures, __LINE__,
					st->what, __FILE__, "", CU_FALSE);
	}
}

/* No QP with the destination QPN (an empty slot, or a slot holding
 * another QPN): NO_QP. */
static void
test_no_qp(void)
{
	struct engine_qp *eq = ut_reset();
	struct drnic_wire_pkt p = ut_from_peer(SEND_ONLY, UT_QPN_NONE, 1);

	ut_feed(&p, 8);
	p.bth.dqpn = UT_QPN + RTE_DIM(ut_qp_tab);    /* UT_QPN's slot */
	ut_feed(&p, 8);
	ut_rx(2);
	CU_ASSERT_EQUAL(ut_ngot, 0);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_NO_QP], 2);
	CU_ASSERT_EQUAL(eq->stats.rx_packets, 0);
}

/* A QP of another engine, or one whose engine state is gone: counted
 * WRONG_ENGINE by the engine that received it, not on the QP. */
static void
test_wrong_engine(void)
{
	struct drnic_wire_pkt p;
	unsigned int i;

	ut_reset();
	p = ut_from_peer(SEND_ONLY, UT_QPN_OTHER, 1);
	ut_feed(&p, 8);
	p = ut_from_peer(ACK, UT_QPN_GONE, 2);
	ut_feed(&p, 0);
	ut_rx(2);
	CU_ASSERT_EQUAL(ut_ngot, 0);
	for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++) {
		CU_ASSERT_EQUAL(ut_eng.stats.drops[i], i == DRNIC_ENGINE_DROP_WRONG_ENGINE ? 2u : 0u);
		CU_ASSERT_EQUAL(ut_eq[1].stats.drops[i], 0);
		CU_ASSERT_EQUAL(ut_eng_other.stats.drops[i], 0);
	}
	CU_ASSERT_EQUAL(ut_eq[1].stats.rx_packets, 0);
	CU_ASSERT_EQUAL(ut_eng_other.stats.rx_packets, 0);
}

/* UC, UD and CNP frames, well formed and from the peer, are not RC:
 * NOT_REQUEST before any QP is looked up (not counted on the QP). */
static void
test_not_rc(void)
{
	static const uint8_t ops[] = { DRNIC_WIRE_OP_UC_SEND_ONLY, DRNIC_WIRE_OP_UC_RDMA_WRITE_ONLY,
				       DRNIC_WIRE_OP_UD_SEND_ONLY, DRNIC_WIRE_OP_CNP };
	struct engine_qp *eq = ut_reset();
	struct drnic_wire_pkt p;
	unsigned int i;

	for (i = 0; i < RTE_DIM(ops); i++) {
		p = ut_from_peer(ops[i], UT_QPN, i);
		ut_feed(&p, ops[i] == DRNIC_WIRE_OP_CNP ? 0 : 8);
	}
	/* A request after them still goes through. */
	p = ut_from_peer(SEND_ONLY, UT_QPN, 9);
	ut_feed(&p, 8);
	ut_rx(RTE_DIM(ops) + 1);
	CU_ASSERT_EQUAL(ut_ngot, 1);
	ut_assert_got(0, UT_RESP, eq, SEND_ONLY, 9);
	for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++) {
		CU_ASSERT_EQUAL(ut_eng.stats.drops[i],
				i == DRNIC_ENGINE_DROP_NOT_REQUEST ? RTE_DIM(ops) : 0u);
		CU_ASSERT_EQUAL(eq->stats.drops[i], 0);
	}
	CU_ASSERT_EQUAL(eq->stats.rx_packets, 1);
}

/*
 * XRC: a target (XRC_RECV) takes XRC requests, an initiator (XRC_SEND) XRC
 * responses, and the machines get RC's opcode for the same operation with
 * the XRCETH as parsed. An XRC frame for an RC QP, an RC frame for an XRC
 * QP, an XRC response for a target and an XRC request for an initiator
 * are NOT_REQUEST drops, counted on the engine.
 */
static void
test_xrc(void)
{
	struct engine_qp *rc = ut_reset(), *tgt, *ini;
	struct drnic_wire_pkt p;
	unsigned int i;

	tgt = ut_qp_add(3, UT_QPN_INIT, &ut_eng, DRNIC_QPS_RTS, true);
	ut_qp[3].type = DRNIC_QPT_XRC_RECV;
	tgt->xrc = true;
	ini = ut_qp_add(4, UT_QPN_RTR, &ut_eng, DRNIC_QPS_RTS, true);
	ut_qp[4].type = DRNIC_QPT_XRC_SEND;
	ini->xrc = true;

	p = ut_from_peer(DRNIC_WIRE_OP_XRC_SEND_ONLY, UT_QPN_INIT, 1);
	p.xrceth.srqn = 0xABCDE;
	ut_feed(&p, 8);
	p = ut_from_peer(DRNIC_WIRE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, UT_QPN_INIT, 2);
	p.xrceth.srqn = 0x12;
	ut_feed(&p, 8);
	p = ut_from_peer(DRNIC_WIRE_OP_XRC_ACKNOWLEDGE, UT_QPN_RTR, 3);
	ut_feed(&p, 0);
	p = ut_from_peer(DRNIC_WIRE_OP_XRC_RDMA_READ_RESPONSE_ONLY, UT_QPN_RTR, 4);
	ut_feed(&p, 8);
	/* The wrong ones. */
	p = ut_from_peer(DRNIC_WIRE_OP_XRC_SEND_ONLY, UT_QPN, 5);        /* RC QP */
	ut_feed(&p, 8);
	p = ut_from_peer(SEND_ONLY, UT_QPN_INIT, 6);                     /* RC to target */
	ut_feed(&p, 8);
	p = ut_from_peer(ACK, UT_QPN_RTR, 7);                            /* RC to initiator */
	ut_feed(&p, 0);
	p = ut_from_peer(DRNIC_WIRE_OP_XRC_ACKNOWLEDGE, UT_QPN_INIT, 8); /* response to target */
	ut_feed(&p, 0);
	p = ut_from_peer(DRNIC_WIRE_OP_XRC_SEND_ONLY, UT_QPN_RTR, 9);    /* request to initiator */
	ut_feed(&p, 8);
	ut_rx(9);
	CU_ASSERT_EQUAL_FATAL(ut_ngot, 4);
	ut_assert_got(0, UT_RESP, tgt, SEND_ONLY, 1);
	CU_ASSERT_EQUAL(ut_got[0].xrc_srqn, 0xABCDE);
	ut_assert_got(1, UT_RESP, tgt, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 2);
	CU_ASSERT_EQUAL(ut_got[1].xrc_srqn, 0x12);
	ut_assert_got(2, UT_COMP, ini, ACK, 3);
	ut_assert_got(3, UT_COMP, ini, READ_RESP, 4);
	for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++)
		CU_ASSERT_EQUAL(ut_eng.stats.drops[i], i == DRNIC_ENGINE_DROP_NOT_REQUEST ? 5u : 0u);
	CU_ASSERT_EQUAL(rc->stats.rx_packets, 0);
	ut_assert_wire_drops(DRNIC_WIRE_OK, 0);
}

/* A WRITE LAST big enough for the parser to defer its ICRC. */
#define UT_DEFER_LEN DRNIC_WIRE_DEFER_MIN_PAYLOAD

/* A deferred frame with a bad ICRC is a bad_icrc wire drop when it is
 * dropped before a machine for any other reason (no QP, another engine's
 * QP, not from the peer); with a good one it is counted for that reason. */
static void
ut_check_deferred(const struct drnic_wire_pkt *p, enum drnic_engine_drop why)
{
	ut_reset();
	ut_link_feed(&ut_link, ut_corrupt(ut_build(p, UT_DEFER_LEN)));
	ut_rx(1);
	CU_ASSERT_EQUAL(ut_ngot, 0);
	ut_assert_wire_drops(DRNIC_WIRE_DROP_BAD_ICRC, 1);
	ut_assert_no_drops(&ut_eq[0]);

	ut_reset();
	ut_feed(p, UT_DEFER_LEN);
	ut_rx(1);
	CU_ASSERT_EQUAL(ut_ngot, 0);
	ut_assert_one_drop(why);
}

static void
test_deferred_icrc_no_qp(void)
{
	struct drnic_wire_pkt p = ut_from_peer(WRITE_LAST, UT_QPN_NONE, 1);

	ut_check_deferred(&p, DRNIC_ENGINE_DROP_NO_QP);
}

static void
test_deferred_icrc_wrong_engine(void)
{
	struct drnic_wire_pkt p = ut_from_peer(WRITE_LAST, UT_QPN_OTHER, 1);

	ut_check_deferred(&p, DRNIC_ENGINE_DROP_WRONG_ENGINE);
}

static void
test_deferred_icrc_stranger(void)
{
	struct drnic_wire_pkt p = ut_stranger_pkt(&ut_strangers[0]);

	p.bth.opcode = DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE;
	ut_check_deferred(&p, DRNIC_ENGINE_DROP_BAD_ADDR);
	CU_ASSERT_EQUAL(ut_eq[0].stats.drops[DRNIC_ENGINE_DROP_BAD_ADDR], 1);
}

/* From the peer, a deferred frame goes to the responder unverified, its
 * deferral marked (the responder verifies it as it copies); a frame too
 * short to defer, or of another opcode, is checked by the parser. */
static void
test_deferred_icrc_to_responder(void)
{
	struct engine_qp *eq = ut_reset();
	struct drnic_wire_pkt p = ut_from_peer(WRITE_LAST, UT_QPN, 1);

	ut_link_feed(&ut_link, ut_corrupt(ut_build(&p, UT_DEFER_LEN)));
	p.bth.psn = 2;
	ut_link_feed(&ut_link, ut_corrupt(ut_build(&p, UT_DEFER_LEN - 4)));
	p.bth.opcode = WRITE_ONLY;
	p.bth.psn = 3;
	ut_link_feed(&ut_link, ut_corrupt(ut_build(&p, UT_DEFER_LEN)));
	p.bth.opcode = WRITE_LAST;
	p.bth.psn = 4;
	ut_feed(&p, UT_DEFER_LEN);
	ut_rx(4);
	CU_ASSERT_EQUAL(ut_ngot, 2);
	ut_assert_got(0, UT_RESP, eq, WRITE_LAST, 1);
	CU_ASSERT_TRUE(ut_got[0].icrc_deferred);
	ut_assert_got(1, UT_RESP, eq, WRITE_LAST, 4);
	CU_ASSERT_TRUE(ut_got[1].icrc_deferred);
	ut_assert_wire_drops(DRNIC_WIRE_DROP_BAD_ICRC, 2);   /* PSNs 2 and 3 */
	ut_assert_no_drops(eq);
	CU_ASSERT_EQUAL(eq->stats.rx_packets, 2);
}

/*
 * A burst of small frames, their ICRCs checked together after the parse
 * (in place, four at a time): the corrupted ones, wherever they sit, are
 * bad_icrc wire drops and reach no machine; the others go in order.
 */
static void
test_burst_icrc(void)
{
	static const bool bad[12] = { false, true, false, false, true, true,
				      false, false, false, false, true, false };
	struct engine_qp *eq = ut_reset();
	struct drnic_wire_pkt p = ut_from_peer(WRITE_ONLY, UT_QPN, 1);
	unsigned int i, k = 0;

	for (i = 0; i < RTE_DIM(bad); i++) {
		p.bth.psn = i + 1;
		p.bth.opcode = i % 3 == 2 ? DRNIC_WIRE_OP_RC_SEND_ONLY : WRITE_ONLY;
		ut_link_feed(&ut_link, bad[i] ? ut_corrupt(ut_build(&p, 64 + 8 * i)) :
						ut_build(&p, 64 + 8 * i));
	}
	ut_rx(RTE_DIM(bad));
	CU_ASSERT_EQUAL(ut_ngot, 8);
	for (i = 0; i < RTE_DIM(bad); i++) {
		if (bad[i])
			continue;
		ut_assert_got(k, UT_RESP, eq, i % 3 == 2 ? DRNIC_WIRE_OP_RC_SEND_ONLY : WRITE_ONLY,
			      i + 1);
		CU_ASSERT_FALSE(ut_got[k].icrc_batch);
		CU_ASSERT_FALSE(ut_got[k].icrc_deferred);
		k++;
	}
	ut_assert_wire_drops(DRNIC_WIRE_DROP_BAD_ICRC, 4);
	ut_assert_no_drops(eq);
	CU_ASSERT_EQUAL(eq->stats.rx_packets, 8);
}

/* Malformed frames are wire drops of the parser's reason, counted on the
 * engine only; the good frame between them goes through. */
static void
test_malformed(void)
{
	struct engine_qp *eq = ut_reset();
	struct drnic_wire_pkt p = ut_from_peer(SEND_ONLY, UT_QPN, 1);
	struct rte_mbuf *m;

	m = ut_build(&p, 64);
	CU_ASSERT_EQUAL(rte_pktmbuf_trim(m, 4), 0);    /* ends inside the IP packet */
	ut_link_feed(&ut_link, m);
	p.bth.psn = 2;
	ut_feed(&p, 64);
	m = ut_build(&p, 64);
	CU_ASSERT_EQUAL(rte_pktmbuf_trim(m, m->pkt_len - 10), 0);  /* not even Ethernet */
	ut_link_feed(&ut_link, m);
	ut_rx(3);
	CU_ASSERT_EQUAL(ut_ngot, 1);
	ut_assert_got(0, UT_RESP, eq, SEND_ONLY, 2);
	CU_ASSERT_EQUAL(ut_eng.stats.wire_drops[DRNIC_WIRE_DROP_TRUNCATED_IP], 1);
	CU_ASSERT_EQUAL(ut_eng.stats.wire_drops[DRNIC_WIRE_DROP_TRUNCATED_ETH], 1);
	ut_assert_no_drops(eq);
	CU_ASSERT_EQUAL(eq->stats.rx_packets, 1);
}

/* A garbage frame of @p n segments of 4 bytes from @p mp (too short for
 * Ethernet: the parse drops it). */
static struct rte_mbuf *
ut_junk(struct rte_mempool *mp, unsigned int n)
{
	struct rte_mbuf *head = NULL;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		CU_ASSERT_FATAL(m != NULL);
		memset(rte_pktmbuf_append(m, 4), 0xa5, 4);
		if (head == NULL)
			head = m;
		else
			CU_ASSERT_FATAL(rte_pktmbuf_chain(head, m) == 0);
	}
	return head;
}

/*
 * Every frame of a burst goes back to its own pool once the machines are
 * done with it: frames of two pools interleaved, a chain of three segments,
 * and one the test still holds a reference to (it stays out until the test
 * lets it go).
 */
static void
test_rx_frees_to_pools(void)
{
	struct engine_qp *eq = ut_reset();
	struct drnic_wire_pkt p = ut_from_peer(SEND_ONLY, UT_QPN, 1);
	struct rte_mempool *mp2 = rte_pktmbuf_pool_create("engine_rx_ut2", 63, 0, 0,
							  RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	unsigned int avail2;
	struct rte_mbuf *held;

	CU_ASSERT_FATAL(mp2 != NULL);
	avail2 = rte_mempool_avail_count(mp2);
	ut_feed(&p, 64);                                 /* good, pool 1 */
	ut_link_feed(&ut_link, ut_junk(mp2, 1));
	ut_link_feed(&ut_link, ut_junk(ut_pool, 3));     /* a chain */
	ut_link_feed(&ut_link, ut_junk(mp2, 2));         /* a chain, pool 2 */
	held = ut_junk(ut_pool, 1);
	rte_mbuf_refcnt_update(held, 1);
	ut_link_feed(&ut_link, held);
	ut_link_feed(&ut_link, ut_junk(mp2, 1));
	p.bth.psn = 2;
	ut_feed(&p, 64);                                 /* good, pool 1 */
	CU_ASSERT_EQUAL(engine_rx(&ut_eng), 7);
	CU_ASSERT_EQUAL(ut_ngot, 2);
	CU_ASSERT_EQUAL(ut_eng.stats.wire_drops[DRNIC_WIRE_DROP_TRUNCATED_ETH], 5);
	CU_ASSERT_EQUAL(eq->stats.rx_packets, 2);
	CU_ASSERT_EQUAL(rte_mempool_avail_count(mp2), avail2);
	CU_ASSERT_EQUAL(rte_mempool_avail_count(ut_pool), ut_pool_avail - 1);
	CU_ASSERT_EQUAL(rte_mbuf_refcnt_read(held), 1);
	rte_pktmbuf_free(held);
	CU_ASSERT_EQUAL(rte_mempool_avail_count(ut_pool), ut_pool_avail);
	rte_mempool_free(mp2);
}

/* Before RTR the QP is not set up: every stranger above reaches its
 * machines (which drop it for the QP's state), a response the completer;
 * nothing is set up. */
static void
test_not_set_up_takes_any(void)
{
	struct engine_qp *eq = &ut_eq[3];
	struct drnic_wire_pkt p;
	unsigned int k, n = RTE_DIM(ut_strangers);

	ut_reset();
	for (k = 0; k < n; k++) {
		p = ut_stranger_pkt(&ut_strangers[k]);
		p.bth.dqpn = UT_QPN_INIT;
		p.bth.psn = k;
		ut_feed(&p, 8);
	}
	p.bth.opcode = ACK;
	p.bth.psn = n;
	ut_feed(&p, 0);
	ut_rx(n + 1);
	CU_ASSERT_EQUAL(ut_ngot, n + 1);
	for (k = 0; k < n; k++)
		ut_assert_got(k, UT_RESP, eq, SEND_ONLY, k);
	ut_assert_got(n, UT_COMP, eq, ACK, n);
	ut_assert_no_drops(eq);
	ut_assert_wire_drops(DRNIC_WIRE_OK, 0);
	CU_ASSERT_FALSE(eq->resp_init);
	CU_ASSERT_EQUAL(ut_resp_setups + ut_templates, 0);
}

/* The first frame after the QP entered RTR sets up its responder and its
 * template (not the requester: that waits for RTS), and the peer check
 * applies from then on, to that frame already. */
static void
test_rtr_sets_up_then_checks(void)
{
	struct engine_qp *eq = &ut_eq[4];
	struct drnic_wire_pkt p;

	ut_reset();
	p = ut_stranger_pkt(&ut_strangers[0]);
	p.bth.dqpn = UT_QPN_RTR;
	ut_feed(&p, 8);
	p = ut_from_peer(SEND_ONLY, UT_QPN_RTR, 500);
	ut_feed(&p, 8);
	ut_rx(2);
	CU_ASSERT_TRUE(eq->resp_init);
	CU_ASSERT_FALSE(eq->req_init);
	CU_ASSERT_EQUAL(ut_resp_setups, 1);
	CU_ASSERT_EQUAL(ut_templates, 1);
	CU_ASSERT_EQUAL(eq->resp.epsn, 500);
	CU_ASSERT_EQUAL(ut_comp_setups + ut_rec_setups, 0);
	CU_ASSERT_EQUAL(ut_ngot, 1);
	ut_assert_got(0, UT_RESP, eq, SEND_ONLY, 500);
	CU_ASSERT_EQUAL(eq->stats.drops[DRNIC_ENGINE_DROP_BAD_ADDR], 1);
	ut_assert_one_drop(DRNIC_ENGINE_DROP_BAD_ADDR);
	CU_ASSERT_EQUAL(eq->stats.rx_packets, 2);
}

/* A receive takes up to ENGINE_RX_BURSTS full bursts: a link with more
 * queued marks a backlog (timeouts wait), for ENGINE_BACKLOG_LOOPS loops in
 * a row at most; a burst that is not full ends it. */
static void
test_backlog(void)
{
	const unsigned int full = ENGINE_RX_BURSTS * ENGINE_BURST;
	struct drnic_wire_pkt p;
	unsigned int i;

	ut_reset();
	p = ut_from_peer(ACK, UT_QPN_NONE, 0);
	for (i = 0; i < full + 3; i++)
		ut_feed(&p, 0);
	CU_ASSERT_EQUAL(engine_rx(&ut_eng), (int)full);
	CU_ASSERT_EQUAL(ut_link.rx_tail - ut_link.rx_head, 3);
	CU_ASSERT_TRUE(ut_eng.rx_backlog);
	CU_ASSERT_EQUAL(ut_eng.rx_backlog_loops, 1);
	ut_rx(3);
	CU_ASSERT_FALSE(ut_eng.rx_backlog);
	CU_ASSERT_EQUAL(ut_eng.rx_backlog_loops, 0);
	CU_ASSERT_EQUAL(ut_eng.stats.drops[DRNIC_ENGINE_DROP_NO_QP], full + 3);

	/* The last loop of a long backlog no longer holds timeouts back. */
	ut_eng.rx_backlog_loops = ENGINE_BACKLOG_LOOPS - 2;
	for (i = 0; i < full; i++)
		ut_feed(&p, 0);
	ut_rx(full);
	CU_ASSERT_TRUE(ut_eng.rx_backlog);   /* full: it may not be empty */
	for (i = 0; i < full; i++)
		ut_feed(&p, 0);
	ut_rx(full);
	CU_ASSERT_EQUAL(ut_eng.rx_backlog_loops, ENGINE_BACKLOG_LOOPS);
	CU_ASSERT_FALSE(ut_eng.rx_backlog);
}

int
main(void)
{
	CU_pSuite s;
	int rc;

	ut_pool = ut_eal_pool("engine_rx_ut", 1024);
	if (ut_pool == NULL)
		return 1;
	ut_pool_avail = rte_mempool_avail_count(ut_pool);
	CU_initialize_registry();
	s = CU_add_suite("engine_rx", NULL, NULL);
	CU_ADD_TEST(s, test_dispatch_in_order);
	CU_ADD_TEST(s, test_peer_variants_pass);
	CU_ADD_TEST(s, test_strangers);
	CU_ADD_TEST(s, test_no_qp);
	CU_ADD_TEST(s, test_wrong_engine);
	CU_ADD_TEST(s, test_not_rc);
	CU_ADD_TEST(s, test_deferred_icrc_no_qp);
	CU_ADD_TEST(s, test_deferred_icrc_wrong_engine);
	CU_ADD_TEST(s, test_deferred_icrc_stranger);
	CU_ADD_TEST(s, test_deferred_icrc_to_responder);
	CU_ADD_TEST(s, test_burst_icrc);
	CU_ADD_TEST(s, test_malformed);
	CU_ADD_TEST(s, test_rx_frees_to_pools);
	CU_ADD_TEST(s, test_not_set_up_takes_any);
	CU_ADD_TEST(s, test_rtr_sets_up_then_checks);
	CU_ADD_TEST(s, test_backlog);
	CU_ADD_TEST(s, test_xrc);
	rc = ut_run_all();
	ut_link_reset(&ut_link, 1);
	rte_eal_cleanup();
	return rc;
}
