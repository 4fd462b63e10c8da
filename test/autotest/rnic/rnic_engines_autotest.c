/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several engines per device: a QP runs on the engine of its CQ's
 * comp_vector, QPNs tell the engine, the loopback steers frames to the right
 * engine queue, and traffic on both engines arrives intact.
 *
 * rnic_engines_traffic_*: QPs spread over two engines, every QP with WRITEs,
 * SENDs, READs and atomics in flight at once, under inline progress (one
 * thread steps both engines) and on two dedicated engine lcores (in meson,
 * lcores 1 and 2 share CPU 1: time-shared, so both engines run at once and
 * interleave at any instruction).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>

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

#define ET_ENGINES 2
#define ET_QPS 8              /* per side; QP i on engine i % ET_ENGINES */
#define ET_ROUNDS 64
#define ET_OPS 4              /* WRITE, SEND, READ, FETCH_AND_ADD a round */
#define ET_REGION 65536u      /* each QP's part of a side's buffer */
/* Inside a QP's region: what is written and read, where SENDs land, the counter. */
#define ET_WRITE_OFF 0u
#define ET_READ_OFF 16384u
#define ET_RECV_OFF 32768u
#define ET_CTR_OFF 60000u     /* 8-byte aligned */

struct et_side {
	struct rnic_side s[ET_QPS];            /* dev, pd, buf, mr shared; cq, qp each */
	struct drnic_cq *cq[ET_ENGINES];
};

/* Length of QP @p i's message in round @p r: 1..16384 bytes, varied. */
static uint32_t
et_len(unsigned int i, unsigned int r)
{
	return 1 + (i * 7919u + r * 104729u) % 16384u;
}

/* Poll @p n completions of engine @p e's CQ on side @p x and check each
 * against what QP (i % ET_ENGINES == e) of round @p r must have produced. */
static int
et_poll(struct et_side *x, unsigned int e, int n, unsigned int r, bool recv,
	uint32_t seen[ET_QPS])
{
	struct rnic_side poller = x->s[e];
	struct drnic_wc wc[ET_QPS * ET_OPS];
	int got, k;

	poller.cq = x->cq[e];
	got = rnic_poll(&poller, wc, n);
	TEST_ASSERT_EQUAL(got, n, "engine %u round %u: %d of %d completions", e, r, got, n);
	for (k = 0; k < got; k++) {
		unsigned int i = (unsigned int)(wc[k].wr_id >> 8), op = wc[k].wr_id & 0xFF;

		TEST_ASSERT_EQUAL(wc[k].status, DRNIC_WC_SUCCESS, "engine %u: status %d (%s)", e,
				  wc[k].status, drnic_wc_status_str(wc[k].status));
		TEST_ASSERT(i < ET_QPS && i % ET_ENGINES == e, "engine %u: wr_id %" PRIx64, e,
			    wc[k].wr_id);
		TEST_ASSERT_EQUAL(wc[k].qp_num, drnic_qp_num(x->s[i].qp), "qp_num of QP %u", i);
		if (recv) {
			TEST_ASSERT_EQUAL(wc[k].opcode, DRNIC_WC_RECV, "recv opcode");
			TEST_ASSERT_EQUAL(wc[k].byte_len, et_len(i, r), "recv byte_len of QP %u", i);
		} else {
			static const enum drnic_wc_opcode want[ET_OPS] = {
				DRNIC_WC_RDMA_WRITE, DRNIC_WC_SEND, DRNIC_WC_RDMA_READ,
				DRNIC_WC_FETCH_ADD,
			};

			TEST_ASSERT(op < ET_OPS, "op %u", op);
			TEST_ASSERT_EQUAL(wc[k].opcode, want[op], "opcode of op %u", op);
			if (op == 2)
				TEST_ASSERT_EQUAL(wc[k].byte_len, et_len(i, r), "READ byte_len");
			if (op == 3)
				TEST_ASSERT_EQUAL(wc[k].byte_len, 8, "FETCH_ADD byte_len");
		}
		seen[i]++;
	}
	return TEST_SUCCESS;
}

static int
rnic_engines_traffic(const struct rnic_pair_opts *o)
{
	struct rnic_pair p;
	struct et_side *a, *b;
	struct drnic_engine_stats st[2][ET_ENGINES];
	unsigned int i, e, r, d;
	int rc = TEST_FAILED;

	a = calloc(1, sizeof(*a));
	b = calloc(1, sizeof(*b));
	TEST_ASSERT(a != NULL && b != NULL, "alloc");
	if (rnic_pair_open(&p, o) < 0) {
		free(a);
		free(b);
		return TEST_FAILED;
	}
	for (e = 0; e < ET_ENGINES; e++) {
		struct drnic_cq_attr ca = { .cqe = 1024, .comp_vector = (int)e, .socket_id = -1 };

		a->cq[e] = drnic_cq_create(&ca);
		b->cq[e] = drnic_cq_create(&ca);
		TEST_ASSERT(a->cq[e] != NULL && b->cq[e] != NULL, "CQs of engine %u", e);
	}
	for (i = 0; i < ET_QPS; i++) {
		struct drnic_qp_init_attr qa = {
			.qp_type = DRNIC_QPT_RC,
			.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		a->s[i] = p.a;
		b->s[i] = p.b;
		a->s[i].cq = qa.send_cq = qa.recv_cq = a->cq[i % ET_ENGINES];
		a->s[i].qp = drnic_create_qp(p.a.pd, &qa);
		b->s[i].cq = qa.send_cq = qa.recv_cq = b->cq[i % ET_ENGINES];
		b->s[i].qp = drnic_create_qp(p.b.pd, &qa);
		TEST_ASSERT(a->s[i].qp != NULL && b->s[i].qp != NULL, "QP %u", i);
		TEST_ASSERT_EQUAL(drnic_qp_num(a->s[i].qp) % ET_ENGINES, i % ET_ENGINES,
				  "QPN of QP %u tells its engine", i);
	}
	for (i = 0; i < ET_QPS; i++) {
		TEST_ASSERT_SUCCESS(rnic_qp_connect(&a->s[i], &b->s[i], o), "connect a%u", i);
		TEST_ASSERT_SUCCESS(rnic_qp_connect(&b->s[i], &a->s[i], o), "connect b%u", i);
	}
	for (d = 0; d < 2; d++)
		for (e = 0; e < ET_ENGINES; e++)
			TEST_ASSERT_SUCCESS(drnic_engine_stats_get(d ? p.b.dev : p.a.dev, e,
								   &st[d][e]), "stats");
	memset(p.a.buf, 0, ET_QPS * ET_REGION);
	memset(p.b.buf, 0, ET_QPS * ET_REGION);

	for (r = 0; r < ET_ROUNDS; r++) {
		uint32_t seen_a[ET_QPS] = { 0 }, seen_b[ET_QPS] = { 0 };

		/* Every QP posts its four operations before anything is polled:
		 * both engines have all of them to do at once. */
		for (i = 0; i < ET_QPS; i++) {
			uint8_t *la = p.a.buf + i * ET_REGION, *lb = p.b.buf + i * ET_REGION;
			uint64_t ra = (uintptr_t)lb;
			uint32_t len = et_len(i, r), lkey = drnic_mr_lkey(p.a.mr);
			uint32_t rkey = drnic_mr_rkey(p.b.mr);
			struct drnic_sge sg[ET_OPS] = {
				{ (uintptr_t)(la + ET_WRITE_OFF), len, lkey },
				{ (uintptr_t)(la + ET_WRITE_OFF), len, lkey },
				{ (uintptr_t)(la + ET_READ_OFF), len, lkey },
				{ (uintptr_t)(la + ET_CTR_OFF), 8, lkey },
			};
			struct drnic_sge rs = { (uintptr_t)(lb + ET_RECV_OFF), 16384,
						drnic_mr_lkey(p.b.mr) };
			struct drnic_recv_wr rw = { .wr_id = (uint64_t)i << 8, .sg_list = &rs,
						    .num_sge = 1 }, *rbad;
			struct drnic_send_wr w[ET_OPS], *bad;
			unsigned int k;

			/* READ's source: bytes B wrote itself, unlike A's. */
			rnic_fill(la + ET_WRITE_OFF, len, r * ET_QPS + i);
			rnic_fill(lb + ET_READ_OFF, len, 1000000 + r * ET_QPS + i);
			memset(la + ET_READ_OFF, 0, len);
			memset(w, 0, sizeof(w));
			for (k = 0; k < ET_OPS; k++) {
				w[k].wr_id = (uint64_t)i << 8 | k;
				w[k].sg_list = &sg[k];
				w[k].num_sge = 1;
				w[k].send_flags = DRNIC_SEND_SIGNALED;
				w[k].next = k + 1 < ET_OPS ? &w[k + 1] : NULL;
			}
			w[0].opcode = DRNIC_WR_RDMA_WRITE;
			w[0].wr.rdma.remote_addr = ra + ET_WRITE_OFF;
			w[0].wr.rdma.rkey = rkey;
			w[1].opcode = DRNIC_WR_SEND;
			w[2].opcode = DRNIC_WR_RDMA_READ;
			w[2].wr.rdma.remote_addr = ra + ET_READ_OFF;
			w[2].wr.rdma.rkey = rkey;
			w[3].opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
			w[3].wr.atomic.remote_addr = ra + ET_CTR_OFF;
			w[3].wr.atomic.compare_add = i + 1;
			w[3].wr.atomic.rkey = rkey;
			TEST_ASSERT_SUCCESS(drnic_post_recv(b->s[i].qp, &rw, &rbad), "post_recv");
			TEST_ASSERT_SUCCESS(drnic_post_send(a->s[i].qp, w, &bad), "post_send");
		}
		for (e = 0; e < ET_ENGINES; e++) {
			int n = ET_QPS / ET_ENGINES;

			if (et_poll(a, e, n * ET_OPS, r, false, seen_a) != TEST_SUCCESS ||
			    et_poll(b, e, n, r, true, seen_b) != TEST_SUCCESS)
				goto out;
		}
		for (i = 0; i < ET_QPS; i++) {
			uint8_t *la = p.a.buf + i * ET_REGION, *lb = p.b.buf + i * ET_REGION;
			uint32_t len = et_len(i, r);
			uint64_t old, ctr;

			TEST_ASSERT_EQUAL(seen_a[i], ET_OPS, "QP %u: completions", i);
			TEST_ASSERT_EQUAL(seen_b[i], 1, "QP %u: receive completions", i);
			TEST_ASSERT(memcmp(lb + ET_WRITE_OFF, la + ET_WRITE_OFF, len) == 0,
				    "round %u QP %u: WRITE bytes", r, i);
			TEST_ASSERT(memcmp(lb + ET_RECV_OFF, la + ET_WRITE_OFF, len) == 0,
				    "round %u QP %u: SEND bytes", r, i);
			TEST_ASSERT(memcmp(la + ET_READ_OFF, lb + ET_READ_OFF, len) == 0,
				    "round %u QP %u: READ bytes", r, i);
			memcpy(&old, la + ET_CTR_OFF, 8);
			memcpy(&ctr, lb + ET_CTR_OFF, 8);
			TEST_ASSERT_EQUAL(old, (uint64_t)r * (i + 1), "round %u QP %u: FETCH_ADD "
					  "returned %" PRIu64, r, i, old);
			TEST_ASSERT_EQUAL(ctr, (uint64_t)(r + 1) * (i + 1), "QP %u: counter", i);
		}
	}

	for (d = 0; d < 2; d++) {
		struct drnic_device *dev = d ? p.b.dev : p.a.dev;

		for (e = 0; e < ET_ENGINES; e++) {
			struct drnic_engine_stats now;

			TEST_ASSERT_SUCCESS(drnic_engine_stats_get(dev, e, &now), "stats");
			printf("device %u engine %u: wqes %" PRIu64 ", rx %" PRIu64 ", tx %" PRIu64
			       ", cqes %" PRIu64 "\n", d, e, now.wqes - st[d][e].wqes,
			       now.rx_packets - st[d][e].rx_packets,
			       now.tx_packets - st[d][e].tx_packets, now.cqes - st[d][e].cqes);
			TEST_ASSERT_EQUAL(now.drops[DRNIC_ENGINE_DROP_WRONG_ENGINE], 0,
					  "no frame on the wrong engine");
			/* Each engine started exactly its own QPs' WQEs
			 * (none went back: the loopback loses nothing). */
			if (d == 0)
				TEST_ASSERT_EQUAL(now.wqes - st[d][e].wqes,
						  (uint64_t)ET_ROUNDS * ET_OPS * ET_QPS / ET_ENGINES,
						  "engine %u's WQEs", e);
		}
	}
	rc = TEST_SUCCESS;
out:
	for (i = 0; i < ET_QPS; i++) {
		drnic_destroy_qp(a->s[i].qp);
		drnic_destroy_qp(b->s[i].qp);
	}
	for (e = 0; e < ET_ENGINES; e++) {
		drnic_cq_destroy(a->cq[e]);
		drnic_cq_destroy(b->cq[e]);
	}
	rnic_pair_close(&p);
	free(a);
	free(b);
	return rc;
}

static int
rnic_engines_traffic_inline(void)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE, .engines = ET_ENGINES };

	return rnic_engines_traffic(&o);
}

DRNIC_TEST_REGISTER(rnic_engines_traffic_inline_autotest, DRNIC_TEST_FAST,
		    rnic_engines_traffic_inline);

static int
rnic_engines_traffic_dedicated(void)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_DEDICATED, .lcores = "1,2" };

	if (!rte_lcore_is_enabled(1) || !rte_lcore_is_enabled(2)) {
		printf("needs EAL lcores 1 and 2 (meson runs it with "
		       "DRNIC_TEST_LCORES=0@0,1@1,2@1)\n");
		return TEST_SKIPPED;
	}
	return rnic_engines_traffic(&o);
}

DRNIC_TEST_REGISTER(rnic_engines_traffic_dedicated_autotest, DRNIC_TEST_FAST,
		    rnic_engines_traffic_dedicated);
