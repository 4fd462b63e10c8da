/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/engine/engine_ctl.c's control messages, handled as the
 * engine handles them between two steps, with the real transmit staging
 * (engine_tx.c) on fake links: PORT_ADD; PORT_DEL moving the last port
 * into the freed slot with its active list intact and every QP's port
 * fixed, its staged frames given one flush and the rest counted tx_error;
 * QP_ADD on a missing port; QP_DEL off the active list, the lingering
 * count and the wheel; QP_MODIFY rebuilding the template.
 */
#include <CUnit/Basic.h>

#include "lib/engine/engine_ctl.c"
#include "lib/engine/engine_tx.c"
#include "lib/engine/timer.c"

#include "test/unit/lib/engine/ut_engine_clock.h"
#include "test/unit/lib/engine/ut_engine_link.h"
#include "ut_common.h"

/* engine.c and engine_sched.c, not under test. */
static unsigned int ut_doorbell_drains;

unsigned int
engine_doorbells(struct engine *eng, unsigned int max)
{
	RTE_SET_USED(eng);
	CU_ASSERT_EQUAL(max, UINT32_MAX);
	ut_doorbell_drains++;
	return 0;
}

void
engine_cq_notify(struct engine *eng)
{
	RTE_SET_USED(eng);
}

int
engine_run_once(struct engine *eng)
{
	RTE_SET_USED(eng);
	CU_FAIL("no engine runs here");
	return 0;
}

int
engine_main(void *arg)
{
	RTE_SET_USED(arg);
	return 0;
}

int
engine_progress_all(void)
{
	return 0;
}

void
engine_clock_init(struct engine_clock *clock)
{
	clock->now_ns = ut_clock;
}

int
engine_inline_add(struct engine *eng)
{
	RTE_SET_USED(eng);
	return 0;
}

void
engine_inline_del(struct engine *eng)
{
	RTE_SET_USED(eng);
}

void
verbs_set_engine_ops(const struct verbs_engine_ops *ops)
{
	RTE_SET_USED(ops);
}

#define UT_NDEV 3
#define UT_NQP 6

static struct rte_mempool *ut_pool;
static struct ut_link ut_link[UT_NDEV];
static struct drnic_device ut_dev[UT_NDEV];
static struct drnic_qp ut_qp[UT_NQP];
static struct engine_qp ut_eq[UT_NQP];
static struct engine ut_eng;

static int
ut_ctrl(enum engine_ctrl_type type, void *arg, uint16_t queue)
{
	struct engine_ctrl c = { .type = type, .arg = arg, .queue = queue };

	atomic_init(&c.done, 0);
	engine_ctrl_handle(&ut_eng, &c);
	CU_ASSERT_EQUAL(atomic_load(&c.done), 1);
	return c.rc;
}

/* Three devices, each a port of the engine (slots 0, 1, 2). */
static void
ut_reset(void)
{
	unsigned int i;

	for (i = 0; i < UT_NDEV; i++) {
		ut_link_reset(&ut_link[i], (uint8_t)(i + 1));
		memset(&ut_dev[i], 0, sizeof(ut_dev[i]));
		ut_dev[i].link = &ut_link[i].link;
		ut_dev[i].nb_gids = 1;
		ut_dev[i].gid_is_v4[0] = 1;
	}
	memset(&ut_eng, 0, sizeof(ut_eng));
	ut_eng.pool = ut_pool;
	ut_eng.clock.now_ns = ut_clock;
	TAILQ_INIT(&ut_eng.all);
	timer_wheel_init(&ut_eng.wheel, ut_now);
	ut_link[1].up = false;
	for (i = 0; i < UT_NDEV; i++)
		CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_PORT_ADD, &ut_dev[i], 0), 0);
	CU_ASSERT_EQUAL(ut_eng.nb_ports, UT_NDEV);
	ut_doorbell_drains = 0;
}

/* QP @p i on device @p d, added to the engine. */
static struct engine_qp *
ut_qp_add(unsigned int i, unsigned int d)
{
	struct engine_qp *eq = &ut_eq[i];

	memset(&ut_qp[i], 0, sizeof(ut_qp[i]));
	memset(eq, 0, sizeof(*eq));
	ut_qp[i].dev = &ut_dev[d];
	ut_qp[i].qp_num = 10 + i;
	ut_qp[i].eng_priv = eq;
	engine_qp_bind(eq, &ut_qp[i]);
	eq->eng = &ut_eng;
	drnic_wire_pkt_init(&eq->tmpl);
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_QP_ADD, eq, 0), 0);
	CU_ASSERT_PTR_EQUAL(eq->port, &ut_eng.port[d]);
	return eq;
}

/* As the scheduler puts a QP on its port's active list. */
static void
ut_activate(struct engine_qp *eq)
{
	eq->on_active = true;
	TAILQ_INSERT_TAIL(&eq->port->active, eq, active_next);
}

/* Stage a frame of opcode @p op on QP @p eq's port. */
static void
ut_stage(struct engine_qp *eq, uint8_t op)
{
	struct drnic_wire_pkt pkt = eq->tmpl;

	pkt.bth.opcode = op;
	CU_ASSERT_EQUAL_FATAL(engine_qp_tx(eq, &pkt), 0);
}

static void
test_port_add(void)
{
	ut_reset();
	CU_ASSERT_PTR_EQUAL(ut_eng.port[0].dev, &ut_dev[0]);
	CU_ASSERT_PTR_EQUAL(ut_eng.port[2].link, &ut_link[2].link);
	CU_ASSERT_EQUAL(ut_eng.port[0].up, 1);
	CU_ASSERT_EQUAL(ut_eng.port[1].up, 0);      /* its link is down */
	CU_ASSERT_TRUE(TAILQ_EMPTY(&ut_eng.port[2].active));
	/* A QP whose device has no port here is refused. */
	memset(&ut_qp[0], 0, sizeof(ut_qp[0]));
	memset(&ut_eq[0], 0, sizeof(ut_eq[0]));
	ut_qp[0].dev = &ut_dev[0];
	engine_qp_bind(&ut_eq[0], &ut_qp[0]);
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_QP_ADD, &ut_eq[0], 3), -ENODEV);
	CU_ASSERT_EQUAL(ut_eng.nb_qp, 0);
}

/*
 * Deleting port 0 while QPs are active on the last port: the last port
 * moves into slot 0 with its active list (walked both ways, then changed
 * at both ends, which uses the moved head), every QP's port pointer
 * follows, the middle port is untouched. Port 0's staged frames get one
 * flush; what the link refuses is counted tx_error.
 */
static void
test_port_del_relink(void)
{
	struct engine_port *p0 = &ut_eng.port[0];
	struct engine_qp *a, *b, *c, *m, *z, *eq;
	struct engine_qp *want[3];
	unsigned int n;

	ut_reset();
	z = ut_qp_add(0, 0);
	m = ut_qp_add(1, 1);
	a = ut_qp_add(2, 2);
	b = ut_qp_add(3, 2);
	c = ut_qp_add(4, 2);
	ut_activate(m);
	ut_activate(a);
	ut_activate(b);
	ut_activate(c);
	/* Three frames staged on port 0; its link takes one. */
	ut_stage(z, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY);
	ut_stage(z, DRNIC_WIRE_OP_RC_ACKNOWLEDGE);
	ut_stage(z, DRNIC_WIRE_OP_RC_ACKNOWLEDGE);
	ut_link[0].tx_take = 1;
	/* Its QP leaves first, as destroy_qp does before the device goes. */
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_QP_DEL, z, 0), 0);

	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_PORT_DEL, &ut_dev[0], 0), 0);
	CU_ASSERT_EQUAL(ut_link[0].bursts, 1);              /* one try */
	CU_ASSERT_EQUAL(ut_link[0].nsent, 1);
	CU_ASSERT_EQUAL(ut_link[0].dropped, 2);
	CU_ASSERT_EQUAL(ut_link[0].drop_reason, DRNIC_LINK_DROP_TX_ERROR);
	CU_ASSERT_EQUAL(ut_link[0].link.stats[0].drops[DRNIC_LINK_DROP_TX_ERROR], 2);
	CU_ASSERT_EQUAL(ut_eng.nb_ports, 2);
	CU_ASSERT_PTR_EQUAL(p0->dev, &ut_dev[2]);
	CU_ASSERT_PTR_EQUAL(p0->link, &ut_link[2].link);
	CU_ASSERT_PTR_EQUAL(ut_eng.port[1].dev, &ut_dev[1]);
	CU_ASSERT_PTR_EQUAL(a->port, p0);
	CU_ASSERT_PTR_EQUAL(b->port, p0);
	CU_ASSERT_PTR_EQUAL(c->port, p0);
	CU_ASSERT_PTR_EQUAL(m->port, &ut_eng.port[1]);
	want[0] = a;
	want[1] = b;
	want[2] = c;
	n = 0;
	TAILQ_FOREACH(eq, &p0->active, active_next) {
		CU_ASSERT_FATAL(n < 3);
		CU_ASSERT_PTR_EQUAL(eq, want[n]);
		n++;
	}
	CU_ASSERT_EQUAL(n, 3);
	n = 3;
	TAILQ_FOREACH_REVERSE(eq, &p0->active, engine_qp_list, active_next) {
		CU_ASSERT_FATAL(n > 0);
		CU_ASSERT_PTR_EQUAL(eq, want[--n]);
	}
	CU_ASSERT_EQUAL(n, 0);
	/* The moved list works at both ends: the first leaves (its link back
	 * to the head), one is added at the tail. */
	TAILQ_REMOVE(&p0->active, a, active_next);
	TAILQ_INSERT_TAIL(&p0->active, a, active_next);
	CU_ASSERT_PTR_EQUAL(TAILQ_FIRST(&p0->active), b);
	CU_ASSERT_PTR_EQUAL(TAILQ_LAST(&p0->active, engine_qp_list), a);
	CU_ASSERT_PTR_EQUAL(TAILQ_NEXT(c, active_next), a);
	/* The middle port's list is its own still. */
	CU_ASSERT_PTR_EQUAL(TAILQ_FIRST(&ut_eng.port[1].active), m);
	CU_ASSERT_PTR_NULL(TAILQ_NEXT(m, active_next));
}

/* Deleting the last port moves nothing; ACKs it held still get their try. */
static void
test_port_del_last(void)
{
	struct engine_qp *a;

	ut_reset();
	a = ut_qp_add(0, 0);
	ut_activate(a);
	ut_link[2].link.tx_hold_acks = true;
	ut_qp_add(1, 2);
	ut_stage(&ut_eq[1], DRNIC_WIRE_OP_RC_ACKNOWLEDGE);
	CU_ASSERT_EQUAL(engine_port_flush(&ut_eng, &ut_eng.port[2]), 0);   /* held */
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_QP_DEL, &ut_eq[1], 0), 0);
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_PORT_DEL, &ut_dev[2], 0), 0);
	CU_ASSERT_EQUAL(ut_link[2].nsent, 1);
	CU_ASSERT_EQUAL(ut_link[2].dropped, 0);
	CU_ASSERT_EQUAL(ut_eng.nb_ports, 2);
	CU_ASSERT_PTR_EQUAL(a->port, &ut_eng.port[0]);
	CU_ASSERT_PTR_EQUAL(TAILQ_FIRST(&ut_eng.port[0].active), a);
}

/* QP_DEL: off the engine, its active list, the lingering count and the
 * wheel; doorbells still naming it are drained first. */
static void
test_qp_del(void)
{
	struct engine_qp *a, *b;

	ut_reset();
	a = ut_qp_add(0, 1);
	b = ut_qp_add(1, 1);
	ut_activate(a);
	ut_activate(b);
	a->linger = 5;
	ut_eng.nb_linger = 1;
	timer_arm(&ut_eng.wheel, &b->tmr, ut_now + 100000);
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_QP_DEL, a, 0), 0);
	CU_ASSERT_PTR_NULL(ut_qp[0].eng_priv);
	CU_ASSERT_EQUAL(ut_doorbell_drains, 1);
	CU_ASSERT_EQUAL(ut_eng.nb_linger, 0);
	CU_ASSERT_EQUAL(ut_eng.nb_qp, 1);
	CU_ASSERT_PTR_EQUAL(TAILQ_FIRST(&ut_eng.port[1].active), b);
	CU_ASSERT_PTR_EQUAL(TAILQ_FIRST(&ut_eng.all), b);
	/* One off the active list, with its timer armed. */
	TAILQ_REMOVE(&ut_eng.port[1].active, b, active_next);
	b->on_active = false;
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_QP_DEL, b, 0), 0);
	CU_ASSERT_FALSE(b->tmr.armed);
	CU_ASSERT_EQUAL(ut_eng.wheel.armed, 0);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&ut_eng.all));
	CU_ASSERT_EQUAL(ut_eng.nb_qp, 0);
}

/* QP_MODIFY: the engine's copy of the path, and a template from it once
 * the QP is set up (not before). */
static void
test_qp_modify(void)
{
	struct verbs_qp_path path = { 0 };
	struct engine_qp_modify mod;
	struct engine_qp *a;

	ut_reset();
	a = ut_qp_add(0, 0);
	mod.eq = a;
	mod.path = &path;
	path.dest_qp_num = 77;
	path.mtu = 1024;
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_QP_MODIFY, &mod, 0), 0);
	CU_ASSERT_EQUAL(a->path.dest_qp_num, 77);
	CU_ASSERT_NOT_EQUAL(a->tmpl.bth.dqpn, 77);
	a->resp_init = true;
	path.dest_qp_num = 78;
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_QP_MODIFY, &mod, 0), 0);
	CU_ASSERT_EQUAL(a->tmpl.bth.dqpn, 78);
	CU_ASSERT_EQUAL(a->path.mtu, 1024);
	CU_ASSERT_EQUAL(ut_ctrl(ENGINE_CTRL_FENCE, &ut_dev[0], 0), 0);
}

int
main(void)
{
	CU_pSuite s;
	int rc;

	ut_pool = ut_eal_pool("engine_ctl_ut", 512);
	if (ut_pool == NULL)
		return 1;
	CU_initialize_registry();
	s = CU_add_suite("engine_ctl", NULL, NULL);
	CU_ADD_TEST(s, test_port_add);
	CU_ADD_TEST(s, test_port_del_relink);
	CU_ADD_TEST(s, test_port_del_last);
	CU_ADD_TEST(s, test_qp_del);
	CU_ADD_TEST(s, test_qp_modify);
	rc = ut_run_all();
	rte_eal_cleanup();
	return rc;
}
