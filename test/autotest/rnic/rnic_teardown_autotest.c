/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tearing down under traffic: QPs destroyed and devices closed while WRITEs
 * and READs are in flight, many times over, in both progress modes; nothing
 * crashes and every frame goes back to the pool.
 */
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_mempool.h>

#include "test.h"
#include "rnic_fixture.h"

static int
teardown_round(enum drnic_progress_mode mode, int round)
{
	struct rnic_pair_opts o = { .mode = mode, .max_wr = 128 };
	struct drnic_sge sge;
	struct drnic_send_wr wr, *bad;
	struct rnic_pair p;
	int i;

	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	for (i = 0; i < 100; i++) {
		sge = (struct drnic_sge){ (uintptr_t)p.a.buf, 65536, drnic_mr_lkey(p.a.mr) };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = i % 3 == 2 ? DRNIC_WR_RDMA_READ : DRNIC_WR_RDMA_WRITE;
		wr.send_flags = DRNIC_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf;
		wr.wr.rdma.rkey = drnic_mr_rkey(p.b.mr);
		if (drnic_post_send(p.a.qp, &wr, &bad) != 0)
			break;
		/* Same the other way. */
		sge.addr = (uintptr_t)p.b.buf;
		sge.lkey = drnic_mr_lkey(p.b.mr);
		wr.wr.rdma.remote_addr = (uintptr_t)p.a.buf;
		wr.wr.rdma.rkey = drnic_mr_rkey(p.a.mr);
		if (drnic_post_send(p.b.qp, &wr, &bad) != 0)
			break;
	}
	/* Let some of it run, then pull everything down mid-flight. */
	for (i = 0; i < round * 10; i++)
		drnic_device_progress(p.a.dev);
	rnic_pair_close(&p);
	return TEST_SUCCESS;
}

static int
rnic_teardown(void)
{
	struct rte_mempool *mp;
	int round;

	for (round = 0; round < 10; round++) {
		if (teardown_round(DRNIC_PROGRESS_INLINE, round) != TEST_SUCCESS)
			return TEST_FAILED;
		if (rte_lcore_count() >= 2 &&
		    teardown_round(DRNIC_PROGRESS_DEDICATED, round) != TEST_SUCCESS)
			return TEST_FAILED;
	}
	mp = rte_mempool_lookup("drnic_mbuf");
	TEST_ASSERT(mp != NULL, "frame pool");
	TEST_ASSERT_EQUAL(rte_mempool_in_use_count(mp), 0, "frames in use after teardown");
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(rnic_teardown_autotest, DRNIC_TEST_FAST, rnic_teardown);
