/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several engines per device (inline progress): a QP runs on the engine of
 * its CQ's comp_vector, QPNs tell the engine, the loopback steers frames to
 * the right engine queue, and traffic on both engines arrives intact.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include "test.h"
#include "rnic_fixture.h"

static int
rnic_engines(void)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE, .engines = 2 };
	struct rnic_pair p;
	struct rnic_side a1, b1;
	struct drnic_cq_attr ca = { .cqe = 256, .comp_vector = 1, .socket_id = -1 };
	struct drnic_qp_init_attr qa = {
		.qp_type = DRNIC_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct drnic_engine_stats st0, st1;
	struct drnic_device_attr da;
	int round, rc = TEST_FAILED;

	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(drnic_query_device(p.a.dev, &da), "query_device");
	TEST_ASSERT_EQUAL(da.nb_engines, 2, "engines");
	a1 = p.a;
	b1 = p.b;
	a1.cq = drnic_cq_create(&ca);
	b1.cq = drnic_cq_create(&ca);
	TEST_ASSERT(a1.cq != NULL && b1.cq != NULL, "CQs on vector 1");
	qa.send_cq = qa.recv_cq = a1.cq;
	a1.qp = drnic_create_qp(a1.pd, &qa);
	qa.send_cq = qa.recv_cq = b1.cq;
	b1.qp = drnic_create_qp(b1.pd, &qa);
	TEST_ASSERT(a1.qp != NULL && b1.qp != NULL, "QPs on vector 1");
	TEST_ASSERT_EQUAL(drnic_qp_num(a1.qp) % 2, 1, "QPN of engine 1");
	TEST_ASSERT_EQUAL(drnic_qp_num(p.a.qp) % 2, 0, "QPN of engine 0");
	/* Send and receive CQs on two engines: refused. */
	qa.send_cq = p.a.cq;
	qa.recv_cq = a1.cq;
	TEST_ASSERT(drnic_create_qp(p.a.pd, &qa) == NULL && rte_errno == EINVAL,
		    "CQs of two engines refused");
	TEST_ASSERT_SUCCESS(rnic_qp_connect(&a1, &b1, &o), "connect a1");
	TEST_ASSERT_SUCCESS(rnic_qp_connect(&b1, &a1, &o), "connect b1");

	for (round = 0; round < 20; round++) {
		struct rnic_side *src = round % 2 ? &a1 : &p.a, *dst = round % 2 ? &b1 : &p.b;
		uint32_t len = 100 + (uint32_t)round * 777, off = (uint32_t)round * 65536;
		struct drnic_sge ss = { (uintptr_t)(src->buf + off), len, drnic_mr_lkey(src->mr) };
		struct drnic_sge rs = { (uintptr_t)(dst->buf + off), len, drnic_mr_lkey(dst->mr) };
		struct drnic_send_wr sw = { .wr_id = (uint64_t)round, .sg_list = &ss, .num_sge = 1,
					    .opcode = DRNIC_WR_SEND,
					    .send_flags = DRNIC_SEND_SIGNALED }, *bad;
		struct drnic_recv_wr rw = { .wr_id = 100 + (uint64_t)round, .sg_list = &rs,
					    .num_sge = 1 }, *rbad;
		struct drnic_wc wc;

		rnic_fill(src->buf + off, len, (uint32_t)round);
		TEST_ASSERT_SUCCESS(drnic_post_recv(dst->qp, &rw, &rbad), "post_recv");
		TEST_ASSERT_SUCCESS(drnic_post_send(src->qp, &sw, &bad), "post_send");
		TEST_ASSERT_EQUAL(rnic_poll(src, &wc, 1), 1, "send completion %d", round);
		TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "send status");
		TEST_ASSERT_EQUAL(wc.qp_num, drnic_qp_num(src->qp), "send qp_num");
		TEST_ASSERT_EQUAL(rnic_poll(dst, &wc, 1), 1, "recv completion %d", round);
		TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "recv status");
		TEST_ASSERT_EQUAL(wc.wr_id, 100 + (uint64_t)round, "recv wr_id");
		TEST_ASSERT_EQUAL(wc.byte_len, len, "recv byte_len");
		TEST_ASSERT(memcmp(dst->buf + off, src->buf + off, len) == 0, "bytes of round %d",
			    round);
	}
	TEST_ASSERT_SUCCESS(drnic_engine_stats_get(p.b.dev, 0, &st0), "stats 0");
	TEST_ASSERT_SUCCESS(drnic_engine_stats_get(p.b.dev, 1, &st1), "stats 1");
	printf("engine 0: rx %llu tx %llu; engine 1: rx %llu tx %llu\n",
	       (unsigned long long)st0.rx_packets, (unsigned long long)st0.tx_packets,
	       (unsigned long long)st1.rx_packets, (unsigned long long)st1.tx_packets);
	TEST_ASSERT(st0.rx_packets > 0 && st1.rx_packets > 0, "both engines received");
	TEST_ASSERT_EQUAL(st0.drops[DRNIC_ENGINE_DROP_WRONG_ENGINE] +
			  st1.drops[DRNIC_ENGINE_DROP_WRONG_ENGINE], 0, "no frame on the wrong engine");
	TEST_ASSERT_EQUAL(drnic_engine_stats_get(p.b.dev, 2, &st0), -EINVAL, "engine 2");
	rc = TEST_SUCCESS;

	drnic_destroy_qp(a1.qp);
	drnic_destroy_qp(b1.qp);
	drnic_cq_destroy(a1.cq);
	drnic_cq_destroy(b1.cq);
	rnic_pair_close(&p);
	return rc;
}

DRNIC_TEST_REGISTER(rnic_engines_inline_autotest, DRNIC_TEST_FAST, rnic_engines);
