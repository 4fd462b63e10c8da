/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loopback data path: every opcode, sizes from 0 to 1 MiB across path-MTU
 * boundaries, several SGEs, inline data; contents and completions checked;
 * inline and dedicated progress.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_mempool.h>

#include "test.h"
#include "rnic_fixture.h"

static const uint32_t sizes[] = {
	0, 1, 7, 255, 1023, 1024, 1025, 2048, 3000, 4097, 65536, 65537, 300000, 1u << 20,
};

/* Build @p nsge SGEs covering [addr, addr+len) of an MR. */
static int
make_sges(struct drnic_sge *sge, int nsge, uint8_t *addr, uint32_t len, uint32_t lkey)
{
	uint32_t off = 0;
	int i;

	if (len == 0 || nsge <= 1) {
		sge[0] = (struct drnic_sge){ (uintptr_t)addr, len, lkey };
		return 1;
	}
	for (i = 0; i < nsge; i++) {
		uint32_t piece = i == nsge - 1 ? len - off : len / (uint32_t)nsge;

		sge[i] = (struct drnic_sge){ (uintptr_t)(addr + off), piece, lkey };
		off += piece;
	}
	return nsge;
}

static int
check_send_wc(const struct drnic_wc *wc, uint64_t wr_id, enum drnic_wc_opcode op, uint32_t qpn)
{
	TEST_ASSERT_EQUAL(wc->status, DRNIC_WC_SUCCESS, "status %s", drnic_wc_status_str(wc->status));
	TEST_ASSERT_EQUAL(wc->wr_id, wr_id, "wr_id");
	TEST_ASSERT_EQUAL(wc->opcode, op, "opcode");
	TEST_ASSERT_EQUAL(wc->qp_num, qpn, "qp_num");
	return TEST_SUCCESS;
}

static int
run_send(struct rnic_pair *p, uint32_t len, int nsge, bool imm, bool inl, bool solicited)
{
	struct drnic_sge ssge[8], rsge[8];
	struct drnic_send_wr swr = { 0 }, *bad;
	struct drnic_recv_wr rwr = { 0 }, *rbad;
	struct drnic_wc wc[2];
	uint8_t inline_buf[256];
	uint8_t *src = inl ? inline_buf : p->a.buf;
	static uint64_t id = 1;

	rnic_fill(src, len, len + (uint32_t)nsge);
	memset(p->b.buf, 0xEE, len + 64);
	rwr.wr_id = 1000 + id;
	rwr.sg_list = rsge;
	rwr.num_sge = make_sges(rsge, nsge, p->b.buf, len + 16, drnic_mr_lkey(p->b.mr));
	TEST_ASSERT_SUCCESS(drnic_post_recv(p->b.qp, &rwr, &rbad), "post_recv");

	swr.wr_id = id;
	swr.sg_list = ssge;
	swr.num_sge = make_sges(ssge, nsge, src, len, inl ? 0 : drnic_mr_lkey(p->a.mr));
	swr.opcode = imm ? DRNIC_WR_SEND_WITH_IMM : DRNIC_WR_SEND;
	swr.send_flags = DRNIC_SEND_SIGNALED | (inl ? DRNIC_SEND_INLINE : 0) |
			 (solicited ? DRNIC_SEND_SOLICITED : 0);
	swr.imm_data = htonl(0xC0FFEE00u + len);
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr, &bad), "post_send");
	if (inl)
		memset(inline_buf, 0, sizeof(inline_buf));  /* copied at post time */

	TEST_ASSERT_EQUAL(rnic_poll(&p->a, wc, 1), 1, "send completion (len %u)", len);
	if (check_send_wc(&wc[0], id, DRNIC_WC_SEND, drnic_qp_num(p->a.qp)) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(rnic_poll(&p->b, wc, 1), 1, "recv completion (len %u)", len);
	if (check_send_wc(&wc[0], 1000 + id, DRNIC_WC_RECV, drnic_qp_num(p->b.qp)) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(wc[0].byte_len, len, "recv byte_len");
	TEST_ASSERT_EQUAL(wc[0].src_qp, drnic_qp_num(p->a.qp), "src_qp");
	if (imm) {
		TEST_ASSERT(wc[0].wc_flags & DRNIC_WC_WITH_IMM, "WITH_IMM flag");
		TEST_ASSERT_EQUAL(ntohl(wc[0].imm_data), 0xC0FFEE00u + len, "imm_data");
	} else {
		TEST_ASSERT_EQUAL(wc[0].wc_flags & DRNIC_WC_WITH_IMM, 0, "no WITH_IMM flag");
	}
	if (inl)
		rnic_fill(inline_buf, len, len + (uint32_t)nsge);
	TEST_ASSERT(memcmp(p->b.buf, src, len) == 0, "received bytes differ (len %u, %d sge)",
		    len, nsge);
	TEST_ASSERT_EQUAL(p->b.buf[len], 0xEE, "byte after the message was written");
	id++;
	return TEST_SUCCESS;
}

static int
run_write(struct rnic_pair *p, uint32_t len, int nsge, bool imm, bool inl)
{
	struct drnic_sge ssge[8];
	struct drnic_send_wr swr = { 0 }, *bad;
	struct drnic_recv_wr rwr = { 0 }, *rbad;
	struct drnic_wc wc;
	uint8_t inline_buf[256];
	uint8_t *src = inl ? inline_buf : p->a.buf;
	uint8_t *dst = p->b.buf + 8;
	static uint64_t id = 5000;

	rnic_fill(src, len, len * 3 + 1);
	memset(p->b.buf, 0xEE, len + 64);
	if (imm) {
		rwr.wr_id = 9000 + id;
		TEST_ASSERT_SUCCESS(drnic_post_recv(p->b.qp, &rwr, &rbad), "post_recv (0 sge)");
	}
	swr.wr_id = id;
	swr.sg_list = ssge;
	swr.num_sge = make_sges(ssge, nsge, src, len, inl ? 0 : drnic_mr_lkey(p->a.mr));
	swr.opcode = imm ? DRNIC_WR_RDMA_WRITE_WITH_IMM : DRNIC_WR_RDMA_WRITE;
	swr.send_flags = DRNIC_SEND_SIGNALED | (inl ? DRNIC_SEND_INLINE : 0);
	swr.imm_data = htonl(0xABCD0000u + len);
	swr.wr.rdma.remote_addr = (uintptr_t)dst;
	swr.wr.rdma.rkey = drnic_mr_rkey(p->b.mr);
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr, &bad), "post_send");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "write completion (len %u)", len);
	if (check_send_wc(&wc, id, DRNIC_WC_RDMA_WRITE, drnic_qp_num(p->a.qp)) != TEST_SUCCESS)
		return TEST_FAILED;
	if (imm) {
		TEST_ASSERT_EQUAL(rnic_poll(&p->b, &wc, 1), 1, "write-imm recv completion");
		if (check_send_wc(&wc, 9000 + id, DRNIC_WC_RECV_RDMA_WITH_IMM,
				  drnic_qp_num(p->b.qp)) != TEST_SUCCESS)
			return TEST_FAILED;
		TEST_ASSERT_EQUAL(wc.byte_len, len, "byte_len");
		TEST_ASSERT(wc.wc_flags & DRNIC_WC_WITH_IMM, "WITH_IMM flag");
		TEST_ASSERT_EQUAL(ntohl(wc.imm_data), 0xABCD0000u + len, "imm_data");
	} else {
		TEST_ASSERT_EQUAL(rnic_poll_none(&p->b, 0), 0, "no completion at the target");
	}
	TEST_ASSERT(memcmp(dst, src, len) == 0, "written bytes differ (len %u)", len);
	TEST_ASSERT_EQUAL(p->b.buf[7], 0xEE, "byte before the target");
	TEST_ASSERT_EQUAL(dst[len], 0xEE, "byte after the target");
	id++;
	return TEST_SUCCESS;
}

static int
run_read(struct rnic_pair *p, uint32_t len, int nsge)
{
	struct drnic_sge ssge[8];
	struct drnic_send_wr swr = { 0 }, *bad;
	struct drnic_wc wc;
	uint8_t *src = p->b.buf + 16, *dst = p->a.buf + 32;
	static uint64_t id = 7000;

	rnic_fill(src, len, len * 7 + 3);
	memset(p->a.buf, 0xEE, len + 64);
	swr.wr_id = id;
	swr.sg_list = ssge;
	swr.num_sge = make_sges(ssge, nsge, dst, len, drnic_mr_lkey(p->a.mr));
	swr.opcode = DRNIC_WR_RDMA_READ;
	swr.send_flags = DRNIC_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)src;
	swr.wr.rdma.rkey = drnic_mr_rkey(p->b.mr);
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr, &bad), "post_send");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "read completion (len %u)", len);
	if (check_send_wc(&wc, id, DRNIC_WC_RDMA_READ, drnic_qp_num(p->a.qp)) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(wc.byte_len, len, "byte_len");
	TEST_ASSERT(memcmp(dst, src, len) == 0, "read bytes differ (len %u, %d sge)", len, nsge);
	TEST_ASSERT_EQUAL(p->a.buf[31], 0xEE, "byte before the destination");
	TEST_ASSERT_EQUAL(dst[len], 0xEE, "byte after the destination");
	id++;
	return TEST_SUCCESS;
}

static int
run_atomics(struct rnic_pair *p)
{
	struct drnic_sge sge = { (uintptr_t)(p->a.buf + 64), 8, drnic_mr_lkey(p->a.mr) };
	struct drnic_send_wr swr = { 0 }, *bad;
	struct drnic_wc wc;
	uint64_t *target = (uint64_t *)(void *)(p->b.buf + 4096), *result = (uint64_t *)(void *)(p->a.buf + 64);

	*target = 100;
	swr.wr_id = 42;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
	swr.send_flags = DRNIC_SEND_SIGNALED;
	swr.wr.atomic.remote_addr = (uintptr_t)target;
	swr.wr.atomic.rkey = drnic_mr_rkey(p->b.mr);
	swr.wr.atomic.compare_add = 23;
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr, &bad), "post FAA");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "FAA completion");
	if (check_send_wc(&wc, 42, DRNIC_WC_FETCH_ADD, drnic_qp_num(p->a.qp)) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(wc.byte_len, 8, "FAA byte_len");
	TEST_ASSERT_EQUAL(*result, 100, "FAA original value");
	TEST_ASSERT_EQUAL(*target, 123, "FAA result in memory");

	/* CAS that fails (compare 5 != 123), then one that succeeds. */
	swr.wr_id = 43;
	swr.opcode = DRNIC_WR_ATOMIC_CMP_AND_SWP;
	swr.wr.atomic.compare_add = 5;
	swr.wr.atomic.swap = 999;
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr, &bad), "post CAS");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "CAS completion");
	if (check_send_wc(&wc, 43, DRNIC_WC_COMP_SWAP, drnic_qp_num(p->a.qp)) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(*result, 123, "CAS original value");
	TEST_ASSERT_EQUAL(*target, 123, "failed CAS left memory alone");
	swr.wr_id = 44;
	swr.wr.atomic.compare_add = 123;
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr, &bad), "post CAS");
	TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "CAS completion");
	if (check_send_wc(&wc, 44, DRNIC_WC_COMP_SWAP, drnic_qp_num(p->a.qp)) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(*result, 123, "CAS original value");
	TEST_ASSERT_EQUAL(*target, 999, "CAS swapped");
	return TEST_SUCCESS;
}

/* Many WRs of mixed opcodes, some unsignaled: each signaled one completes
 * once, in order; receives complete in order too. */
static int
run_mixed_order(struct rnic_pair *p)
{
	enum { N = 120 };
	struct drnic_sge sge[N], rsge[N];
	struct drnic_send_wr swr[N], *bad;
	struct drnic_recv_wr rwr[N], *rbad;
	struct drnic_wc wc[N];
	int i, nsig = 0, nrecv = 0, got;
	uint64_t expect[N];
	uint64_t *counter = (uint64_t *)(void *)(p->b.buf + (1u << 20) + 4096);

	*counter = 0;
	memset(swr, 0, sizeof(swr));
	memset(rwr, 0, sizeof(rwr));
	for (i = 0; i < N; i++) {
		uint32_t len = (uint32_t)(i * 97) % 5000;
		uint8_t *src = p->a.buf + (size_t)i * 8192;

		rnic_fill(src, len, (uint32_t)i);
		sge[i] = (struct drnic_sge){ (uintptr_t)src, len, drnic_mr_lkey(p->a.mr) };
		swr[i].wr_id = 100000 + (uint64_t)i;
		swr[i].sg_list = &sge[i];
		swr[i].num_sge = 1;
		swr[i].next = i + 1 < N ? &swr[i + 1] : NULL;
		switch (i % 5) {
		case 0:
		case 1:
			swr[i].opcode = DRNIC_WR_SEND;
			rsge[nrecv] = (struct drnic_sge){ (uintptr_t)(p->b.buf + (size_t)i * 8192),
							  8192, drnic_mr_lkey(p->b.mr) };
			rwr[nrecv].wr_id = 200000 + (uint64_t)i;
			rwr[nrecv].sg_list = &rsge[nrecv];
			rwr[nrecv].num_sge = 1;
			if (nrecv > 0)
				rwr[nrecv - 1].next = &rwr[nrecv];
			nrecv++;
			break;
		case 2:
			swr[i].opcode = DRNIC_WR_RDMA_WRITE;
			swr[i].wr.rdma.remote_addr = (uintptr_t)(p->b.buf + (size_t)i * 8192);
			swr[i].wr.rdma.rkey = drnic_mr_rkey(p->b.mr);
			break;
		case 3:
			swr[i].opcode = DRNIC_WR_RDMA_READ;
			sge[i].addr = (uintptr_t)(p->a.buf + (1u << 20) + (size_t)(i % 64) * 8);
			sge[i].length = 8;
			swr[i].wr.rdma.remote_addr = (uintptr_t)counter;
			swr[i].wr.rdma.rkey = drnic_mr_rkey(p->b.mr);
			break;
		default:
			swr[i].opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
			sge[i].addr = (uintptr_t)(p->a.buf + (1u << 20) + 1024 + (size_t)i * 8);
			sge[i].length = 8;
			swr[i].wr.atomic.remote_addr = (uintptr_t)counter;
			swr[i].wr.atomic.rkey = drnic_mr_rkey(p->b.mr);
			swr[i].wr.atomic.compare_add = 1;
			break;
		}
		if (i % 3 != 1 || i == N - 1) {
			swr[i].send_flags = DRNIC_SEND_SIGNALED;
			expect[nsig++] = swr[i].wr_id;
		}
	}
	TEST_ASSERT_SUCCESS(drnic_post_recv(p->b.qp, &rwr[0], &rbad), "post_recv list");
	TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr[0], &bad), "post_send list");
	got = rnic_poll(&p->a, wc, nsig);
	TEST_ASSERT_EQUAL(got, nsig, "signaled completions");
	for (i = 0; i < nsig; i++) {
		TEST_ASSERT_EQUAL(wc[i].status, DRNIC_WC_SUCCESS, "status of #%d: %s", i,
				  drnic_wc_status_str(wc[i].status));
		TEST_ASSERT_EQUAL(wc[i].wr_id, expect[i], "completion #%d in order", i);
	}
	TEST_ASSERT_EQUAL(rnic_poll_none(&p->a, 20), 0, "no extra send completion");
	got = rnic_poll(&p->b, wc, nrecv);
	TEST_ASSERT_EQUAL(got, nrecv, "receive completions");
	for (i = 0; i < nrecv; i++) {
		uint64_t k = wc[i].wr_id - 200000;

		TEST_ASSERT_EQUAL(wc[i].status, DRNIC_WC_SUCCESS, "recv status");
		TEST_ASSERT_EQUAL(wc[i].wr_id, rwr[i].wr_id, "recv #%d in order", i);
		TEST_ASSERT_EQUAL(wc[i].byte_len, (k * 97) % 5000, "recv byte_len");
		TEST_ASSERT(memcmp(p->b.buf + k * 8192, p->a.buf + k * 8192, wc[i].byte_len) == 0,
			    "recv bytes of #%d", i);
	}
	for (i = 0; i < N; i++)
		if (i % 5 == 2)
			TEST_ASSERT(memcmp(p->b.buf + (size_t)i * 8192, p->a.buf + (size_t)i * 8192,
					   (uint32_t)(i * 97) % 5000) == 0, "write bytes of #%d", i);
	TEST_ASSERT_EQUAL(*counter, N / 5, "fetch-and-add count");
	return TEST_SUCCESS;
}

static int
datapath(enum drnic_progress_mode mode)
{
	struct rnic_pair_opts o = { .mode = mode };
	struct rnic_pair p;
	unsigned int i;
	int nsge;

	if (mode == DRNIC_PROGRESS_DEDICATED && rte_lcore_count() < 2)
		TEST_SKIP("dedicated mode needs a worker lcore");
	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	for (i = 0; i < RTE_DIM(sizes); i++) {
		for (nsge = 1; nsge <= 4; nsge += 3) {
			if (run_send(&p, sizes[i], nsge, false, false, false) != TEST_SUCCESS ||
			    run_send(&p, sizes[i], nsge, true, false, true) != TEST_SUCCESS ||
			    run_write(&p, sizes[i], nsge, false, false) != TEST_SUCCESS ||
			    run_write(&p, sizes[i], nsge, true, false) != TEST_SUCCESS ||
			    run_read(&p, sizes[i], nsge) != TEST_SUCCESS) {
				printf("failed at size %u, %d SGEs\n", sizes[i], nsge);
				goto fail;
			}
		}
		if (sizes[i] <= 256 &&
		    (run_send(&p, sizes[i], 2, true, true, false) != TEST_SUCCESS ||
		     run_write(&p, sizes[i], 2, false, true) != TEST_SUCCESS)) {
			printf("inline failed at size %u\n", sizes[i]);
			goto fail;
		}
	}
	if (run_atomics(&p) != TEST_SUCCESS || run_mixed_order(&p) != TEST_SUCCESS)
		goto fail;
	rnic_pair_close(&p);
	/* Every frame went back to the pool. */
	{
		struct rte_mempool *mp = rte_mempool_lookup("drnic_mbuf");

		TEST_ASSERT(mp != NULL, "the frame pool exists");
		TEST_ASSERT_EQUAL(rte_mempool_in_use_count(mp), 0, "mbufs still in use after close");
	}
	return TEST_SUCCESS;
fail:
	rnic_pair_close(&p);
	return TEST_FAILED;
}

static int
rnic_datapath_inline(void)
{
	return datapath(DRNIC_PROGRESS_INLINE);
}

static int
rnic_datapath_dedicated(void)
{
	return datapath(DRNIC_PROGRESS_DEDICATED);
}

DRNIC_TEST_REGISTER(rnic_datapath_inline_autotest, DRNIC_TEST_FAST, rnic_datapath_inline);
DRNIC_TEST_REGISTER(rnic_datapath_dedicated_autotest, DRNIC_TEST_FAST, rnic_datapath_dedicated);
