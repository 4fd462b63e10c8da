/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's latency paths, seen through its counters (inline progress,
 * two devices on a loopback wire):
 *  - a QP that just went idle lingers on the active list: the next posts
 *    of a ping-pong are taken from its send queue without a doorbell;
 *    after ENGINE_LINGER_STEPS idle steps it leaves, and a post rings
 *    again; at most ENGINE_LINGER_MAX QPs linger at once;
 *    a lingering QP is no reason for an inline thread not to sleep
 *    (drnic_engine_idle_ns());
 *  - on a link whose bursts are cheap (the loopback) an ACK leaves at
 *    once: a WRITE completes within a few steps, with no reply to wait
 *    for and no hold time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "rnic_fixture.h"
#include "engine_priv.h"

#define LINGER_QPS (ENGINE_LINGER_MAX + 4)

static uint64_t
doorbells(struct rnic_side *s)
{
	struct drnic_engine_stats st;

	if (drnic_engine_stats_get(s->dev, 0, &st) != 0)
		return UINT64_MAX;
	return st.doorbells;
}

/* One signaled WRITE of @p len bytes from @p x to @p y; completed. */
static int
write_one(struct rnic_side *x, struct drnic_qp *qp, struct rnic_side *y, uint32_t off,
	  uint32_t len, uint64_t id)
{
	struct drnic_sge sge = { (uintptr_t)(x->buf + off), len, drnic_mr_lkey(x->mr) };
	struct drnic_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				    .opcode = DRNIC_WR_RDMA_WRITE,
				    .send_flags = DRNIC_SEND_SIGNALED }, *bad;
	struct drnic_wc wc;

	wr.wr.rdma.remote_addr = (uintptr_t)(y->buf + off);
	wr.wr.rdma.rkey = drnic_mr_rkey(y->mr);
	if (drnic_post_send(qp, &wr, &bad) != 0)
		return -EIO;
	if (rnic_poll(x, &wc, 1) != 1 || wc.status != DRNIC_WC_SUCCESS || wc.wr_id != id)
		return -EIO;
	return memcmp(x->buf + off, y->buf + off, len) == 0 ? 0 : -EIO;
}

static void
idle_steps(struct rnic_side *s, unsigned int n)
{
	while (n-- > 0)
		drnic_device_progress(s->dev);
}

static int
rnic_linger(void)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE };
	struct drnic_qp_init_attr qa = {
		.qp_type = DRNIC_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rnic_side qa_side[LINGER_QPS], qb_side[LINGER_QPS];
	struct rnic_pair p;
	uint64_t d0, d1;
	unsigned int i, steps;
	int rc = TEST_FAILED;

	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	rnic_fill(p.a.buf, 1 << 20, 7);

	/* A ping-pong of 50 WRITEs: one doorbell, not one a post. */
	TEST_ASSERT_SUCCESS(write_one(&p.a, p.a.qp, &p.b, 0, 64, 0), "first WRITE");
	d0 = doorbells(&p.a);
	for (i = 1; i <= 50; i++)
		TEST_ASSERT_SUCCESS(write_one(&p.a, p.a.qp, &p.b, i * 64, 64, i), "WRITE %u", i);
	d1 = doorbells(&p.a);
	printf("doorbells for 50 posts on a lingering QP: %" PRIu64 "\n", d1 - d0);
	TEST_ASSERT_EQUAL(d1 - d0, 0, "posts while the QP lingers ring no doorbell");
	/* A lingering QP with nothing posted lets an inline thread sleep
	 * (the drop-in's helper asks this before it blocks). */
	{
		uint64_t w = 0;
		unsigned int k;

		for (k = 0; k < 64; k++)   /* the last ACK and completion, if any */
			drnic_device_progress(p.a.dev);
		TEST_ASSERT_SUCCESS(drnic_engine_idle_ns(&w), "idle_ns");
		printf("idle_ns with the QP lingering: %" PRIu64 "\n", w);
		TEST_ASSERT(w > 0, "a lingering QP is no work: the helper may sleep");
	}

	/* Idle past the linger: the QP leaves, the next post rings. */
	idle_steps(&p.a, ENGINE_LINGER_STEPS + 16);
	d0 = doorbells(&p.a);
	TEST_ASSERT_SUCCESS(write_one(&p.a, p.a.qp, &p.b, 4096, 64, 100), "WRITE after idle");
	TEST_ASSERT_EQUAL(doorbells(&p.a) - d0, 1, "the QP left the list: its post rang");

	/* ENGINE_LINGER_MAX at most: of LINGER_QPS QPs that all just worked,
	 * the others left and ring on their next post. */
	for (i = 0; i < LINGER_QPS; i++) {
		qa_side[i] = p.a;
		qb_side[i] = p.b;
		qa.send_cq = qa.recv_cq = p.a.cq;
		qa_side[i].qp = drnic_create_qp(p.a.pd, &qa);
		qa.send_cq = qa.recv_cq = p.b.cq;
		qb_side[i].qp = drnic_create_qp(p.b.pd, &qa);
		TEST_ASSERT(qa_side[i].qp != NULL && qb_side[i].qp != NULL, "QP pair %u", i);
		TEST_ASSERT_SUCCESS(rnic_qp_connect(&qa_side[i], &qb_side[i], &o), "connect a%u", i);
		TEST_ASSERT_SUCCESS(rnic_qp_connect(&qb_side[i], &qa_side[i], &o), "connect b%u", i);
	}
	idle_steps(&p.a, ENGINE_LINGER_STEPS + 16);
	for (i = 0; i < LINGER_QPS; i++)
		TEST_ASSERT_SUCCESS(write_one(&p.a, qa_side[i].qp, &p.b, 8192 + i * 64, 64, 200 + i),
				    "WRITE on QP %u", i);
	d0 = doorbells(&p.a);
	for (i = 0; i < LINGER_QPS; i++)
		TEST_ASSERT_SUCCESS(write_one(&p.a, qa_side[i].qp, &p.b, 16384 + i * 64, 64, 300 + i),
				    "second WRITE on QP %u", i);
	d1 = doorbells(&p.a);
	printf("doorbells for %u QPs posting again: %" PRIu64 " (%u may linger)\n", LINGER_QPS,
	       d1 - d0, ENGINE_LINGER_MAX);
	TEST_ASSERT(d1 - d0 >= LINGER_QPS - ENGINE_LINGER_MAX, "no more than %u QPs linger",
		    ENGINE_LINGER_MAX);

	/* The loopback holds no ACK: a lone WRITE completes in a few steps. */
	{
		struct drnic_sge sge = { (uintptr_t)p.a.buf, 8, drnic_mr_lkey(p.a.mr) };
		struct drnic_send_wr wr = { .wr_id = 999, .sg_list = &sge, .num_sge = 1,
					    .opcode = DRNIC_WR_RDMA_WRITE,
					    .send_flags = DRNIC_SEND_SIGNALED }, *bad;
		struct drnic_wc wc;
		int n = 0;

		wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf;
		wr.wr.rdma.rkey = drnic_mr_rkey(p.b.mr);
		TEST_ASSERT_SUCCESS(drnic_post_send(p.a.qp, &wr, &bad), "post");
		for (steps = 0; steps < 16 && n == 0; steps++) {
			n = drnic_cq_poll(p.a.cq, 1, &wc);
			if (n == 0)
				drnic_device_progress(p.a.dev);
		}
		printf("a lone WRITE completed after %u steps\n", steps);
		TEST_ASSERT_EQUAL(n, 1, "completed within 16 steps (no ACK hold on the loopback)");
		TEST_ASSERT_EQUAL(wc.wr_id, 999, "its wr_id");
		TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "its status");
	}
	for (i = 0; i < LINGER_QPS; i++) {
		drnic_destroy_qp(qa_side[i].qp);
		drnic_destroy_qp(qb_side[i].qp);
	}
	rc = TEST_SUCCESS;
	rnic_pair_close(&p);
	return rc;
}

DRNIC_TEST_REGISTER(rnic_linger_autotest, DRNIC_TEST_FAST, rnic_linger);
