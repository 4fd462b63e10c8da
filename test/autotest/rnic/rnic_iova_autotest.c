/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MRs named by another address than their own (drnic_reg_mr_iova(), iova 0:
 * zero-based, as device memory MRs are), on the loopback wire in both
 * progress modes: A's WRITE, READ, FETCH_ADD and ATOMIC_WRITE address B's
 * zero-based MR by offset and land at B's buffer + offset (the bytes around
 * untouched); A's own zero-based MR is named by offset in its SGEs (the
 * WRITE's source, the READ's sink); an offset past the MR is refused
 * (REM_ACCESS_ERR) with nothing written.
 */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include "test.h"
#include "rnic_fixture.h"

#define IOVA_OFF 65536   /* the zero-based MRs start here in each buffer */

static int
iova_post(struct rnic_side *s, uint64_t id, enum drnic_wr_opcode op, uint64_t laddr,
	  uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct drnic_sge sge = { laddr, len, lkey };
	struct drnic_send_wr wr = { 0 }, *bad;

	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == DRNIC_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	}
	return drnic_post_send(s->qp, &wr, &bad);
}

static int
iova_one(struct rnic_side *a, uint64_t id, enum drnic_wr_opcode op, uint64_t laddr, uint32_t len,
	 uint32_t lkey, uint64_t raddr, uint32_t rkey, enum drnic_wc_status want)
{
	struct drnic_wc wc;

	TEST_ASSERT_SUCCESS(iova_post(a, id, op, laddr, len, lkey, raddr, rkey), "post %lu",
			    (unsigned long)id);
	TEST_ASSERT_EQUAL(rnic_poll(a, &wc, 1), 1, "completion %lu", (unsigned long)id);
	TEST_ASSERT(wc.wr_id == id && wc.status == want, "wr %lu: %s", (unsigned long)id,
		    drnic_wc_status_str(wc.status));
	return TEST_SUCCESS;
}

static int
iova_body(struct rnic_pair *p)
{
	const unsigned int acc = DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
				 DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC;
	struct drnic_mr *za = drnic_reg_mr_iova(p->a.pd, p->a.buf + IOVA_OFF, 4096, 0, acc);
	struct drnic_mr *zb = drnic_reg_mr_iova(p->b.pd, p->b.buf + IOVA_OFF, 4096, 0, acc);
	uint8_t *a0 = p->a.buf + IOVA_OFF, *b0 = p->b.buf + IOVA_OFF;
	uint64_t v = 100, w = 0x0123456789ABCDEFull;
	int rc = TEST_FAILED;

	TEST_ASSERT(za != NULL && zb != NULL, "reg_mr_iova: %s", rte_strerror(rte_errno));
	memset(b0 - 64, 0xEE, 4096 + 128);
	/* WRITE from A's MR at offset 0 (by offset) to B's at offset 1000. */
	rnic_fill(a0, 300, 7);
	if (iova_one(&p->a, 1, DRNIC_WR_RDMA_WRITE, 0, 300, drnic_mr_lkey(za), 1000,
		     drnic_mr_rkey(zb), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		goto out;
	TEST_ASSERT(memcmp(b0 + 1000, a0, 300) == 0 && b0[999] == 0xEE && b0[1300] == 0xEE,
		    "WRITE landed at B's offset 1000 exactly");
	/* READ B's offset 1000 into A's offset 2048. */
	memset(a0 + 2048, 0, 300);
	if (iova_one(&p->a, 2, DRNIC_WR_RDMA_READ, 2048, 300, drnic_mr_lkey(za), 1000,
		     drnic_mr_rkey(zb), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		goto out;
	TEST_ASSERT(memcmp(a0 + 2048, a0, 300) == 0, "READ back into A's offset 2048");
	/* FETCH_ADD on B's offset 8; the old value into A's offset 3000. */
	memcpy(b0 + 8, &v, 8);
	if (iova_one(&p->a, 3, DRNIC_WR_ATOMIC_FETCH_AND_ADD, 3000, 8, drnic_mr_lkey(za), 8,
		     drnic_mr_rkey(zb), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		goto out;
	memcpy(&v, b0 + 8, 8);
	TEST_ASSERT_EQUAL(v, 105, "FETCH_ADD at B's offset 8");
	memcpy(&v, a0 + 3000, 8);
	TEST_ASSERT_EQUAL(v, 100, "original value at A's offset 3000");
	/* ATOMIC_WRITE from A's offset 3008 to B's offset 16. */
	memcpy(a0 + 3008, &w, 8);
	if (iova_one(&p->a, 4, DRNIC_WR_ATOMIC_WRITE, 3008, 8, drnic_mr_lkey(za), 16,
		     drnic_mr_rkey(zb), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		goto out;
	TEST_ASSERT(memcmp(b0 + 16, &w, 8) == 0, "ATOMIC_WRITE at B's offset 16");
	/* A SEND into B's receive SGE at offset 2000 of its MR. */
	{
		struct drnic_sge rs = { 2000, 200, drnic_mr_lkey(zb) };
		struct drnic_recv_wr rwr = { .wr_id = 77, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct drnic_wc wc;

		TEST_ASSERT_SUCCESS(drnic_post_recv(p->b.qp, &rwr, &rbad), "post_recv");
		if (iova_one(&p->a, 6, DRNIC_WR_SEND, 0, 100, drnic_mr_lkey(za), 0, 0,
			     DRNIC_WC_SUCCESS) != TEST_SUCCESS)
			goto out;
		TEST_ASSERT_EQUAL(rnic_poll(&p->b, &wc, 1), 1, "receive completion");
		TEST_ASSERT(wc.wr_id == 77 && wc.status == DRNIC_WC_SUCCESS && wc.byte_len == 100,
			    "receive: %s", drnic_wc_status_str(wc.status));
		TEST_ASSERT(memcmp(b0 + 2000, a0, 100) == 0 && b0[1999] == 0xEE,
			    "SEND landed at B's offset 2000");
	}
	/* Past the end of B's MR: refused, nothing written past it. */
	if (iova_one(&p->a, 5, DRNIC_WR_RDMA_WRITE, 0, 64, drnic_mr_lkey(za), 4090,
		     drnic_mr_rkey(zb), DRNIC_WC_REM_ACCESS_ERR) != TEST_SUCCESS)
		goto out;
	TEST_ASSERT(b0[4090] == 0xEE && b0[4096] == 0xEE, "nothing written past B's MR");
	rc = TEST_SUCCESS;
out:
	drnic_dereg_mr(za);
	drnic_dereg_mr(zb);
	return rc;
}

static int
iova_run(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode };
	struct rnic_pair p;
	int rc;

	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	rc = iova_body(&p);
	rnic_pair_close(&p);
	return rc;
}

static int
rnic_iova_inline(void)
{
	return iova_run(DRNIC_PROGRESS_INLINE);
}

static int
rnic_iova_dedicated(void)
{
	return iova_run(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_mr_iova_inline_autotest, DRNIC_TEST_FAST, rnic_iova_inline);
DRNIC_TEST_REGISTER(rnic_mr_iova_dedicated_autotest, DRNIC_TEST_FAST, rnic_iova_dedicated);
