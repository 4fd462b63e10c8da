/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/verbs/post.c: WR validation, bad_wr (first failing WR,
 * nothing after it posted), full queues, inline copies, the idle->busy
 * doorbell.
 */
#include <limits.h>

#include "lib/verbs/post.c"
#include "lib/verbs/mr.c"    /* verbs_sge_to_host() */

#include "test/unit/lib/verbs/ut_verbs_stubs.h"
#include "ut_common.h"

static struct drnic_device *dev;
static struct drnic_qp *qp;
static uint8_t data[4096];

static void
ut_wq_init(struct verbs_wq *wq, uint32_t size, uint32_t hdr, uint32_t sge, uint32_t inl)
{
	wq->size = size;
	wq->mask = size - 1;
	wq->max_sge = sge;
	wq->max_inline = inl;
	wq->stride = RTE_ALIGN_CEIL(hdr + RTE_MAX(sge * 16, inl), 64);
	wq->buf = calloc(size, wq->stride);
}

static int
ut_setup(void)
{
	dev = ut_dev_new(1, 8);
	qp = calloc(1, sizeof(*qp));
	qp->dev = dev;
	qp->qp_num = 7;
	ut_wq_init(&qp->sq, 4, sizeof(struct verbs_send_wqe), 2, 64);
	ut_wq_init(&qp->rq, 4, sizeof(struct verbs_recv_wqe), 2, 0);
	return 0;
}

static int
ut_teardown(void)
{
	free(qp->sq.buf);
	free(qp->rq.buf);
	free(qp);
	ut_dev_free(dev);
	return 0;
}

/* Engine side: retire everything, forget the doorbell. */
static void
ut_drain(void)
{
	void *x;

	atomic_store(&qp->sq.cons, atomic_load(&qp->sq.prod));
	atomic_store(&qp->rq.cons, atomic_load(&qp->rq.prod));
	while (rte_ring_dequeue(dev->eng[0].doorbell, &x) == 0)
		;
	atomic_store(&qp->sq.db, VERBS_DB_IDLE);
}

static struct drnic_send_wr
ut_wr(uint64_t id, struct drnic_sge *sge, int n)
{
	struct drnic_send_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = n,
				    .opcode = DRNIC_WR_SEND, .send_flags = DRNIC_SEND_SIGNALED };
	return wr;
}

static void
test_state(void)
{
	struct drnic_sge sge = { (uintptr_t)data, 8, 1 };
	struct drnic_send_wr wr = ut_wr(1, &sge, 1), *bad = NULL;
	struct drnic_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	unsigned int st;

	for (st = DRNIC_QPS_RESET; st <= DRNIC_QPS_RTR; st++) {
		atomic_store(&qp->state, st);
		CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), -EINVAL);
		CU_ASSERT_PTR_EQUAL(bad, &wr);
	}
	atomic_store(&qp->state, DRNIC_QPS_RESET);
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, &rbad), -EINVAL);
	CU_ASSERT_PTR_EQUAL(rbad, &rwr);
	atomic_store(&qp->state, DRNIC_QPS_INIT);
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, &rbad), 0);   /* receives from INIT on */
	CU_ASSERT_PTR_NULL(rbad);
	CU_ASSERT_EQUAL(drnic_post_send(NULL, &wr, &bad), -EINVAL);
	CU_ASSERT_EQUAL(drnic_post_send(qp, NULL, &bad), -EINVAL);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, NULL), -EINVAL);
	/* A QP on an SRQ has no receive queue: its receives go to the SRQ. */
	qp->srq = (struct drnic_srq *)(void *)data;
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, &rbad), -EINVAL);
	CU_ASSERT_PTR_EQUAL(rbad, &rwr);
	qp->srq = NULL;
	ut_drain();
}

static void
test_bad_wr(void)
{
	struct drnic_sge sge[3] = { { (uintptr_t)data, 8, 1 }, { (uintptr_t)data, 8, 1 },
				    { (uintptr_t)data, 8, 1 } };
	struct drnic_send_wr wr[3], *bad = NULL;
	uint32_t prod;

	atomic_store(&qp->state, DRNIC_QPS_RTS);
	wr[0] = ut_wr(10, sge, 1);
	wr[1] = ut_wr(11, sge, 3);     /* max_send_sge is 2 */
	wr[2] = ut_wr(12, sge, 1);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	prod = atomic_load(&qp->sq.prod);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr[0], &bad), -EINVAL);
	CU_ASSERT_PTR_EQUAL(bad, &wr[1]);
	CU_ASSERT_EQUAL(atomic_load(&qp->sq.prod), prod + 1);   /* only the first */
	CU_ASSERT_EQUAL(((struct verbs_send_wqe *)verbs_wq_slot(&qp->sq, prod))->wr_id, 10);

	/* Each invalid WR alone. */
#define EXPECT_BAD(stmt)                                                        \
	do {                                                                    \
		struct drnic_send_wr w = ut_wr(20, sge, 1);                     \
		stmt;                                                           \
		prod = atomic_load(&qp->sq.prod);                               \
		CU_ASSERT_EQUAL(drnic_post_send(qp, &w, &bad), -EINVAL);        \
		CU_ASSERT_PTR_EQUAL(bad, &w);                                   \
		CU_ASSERT_EQUAL(atomic_load(&qp->sq.prod), prod);               \
	} while (0)

	EXPECT_BAD(w.opcode = (enum drnic_wr_opcode)VERBS_WR_OPCODE_MAX);
	/* A bind names a live window, and only remote rights. */
	EXPECT_BAD(w.opcode = DRNIC_WR_BIND_MW; w.bind_mw.mw = NULL);
	EXPECT_BAD(w.opcode = DRNIC_WR_BIND_MW; w.bind_mw.mw = (struct drnic_mw *)&w);
	EXPECT_BAD(w.num_sge = -1);
	EXPECT_BAD(w.sg_list = NULL);
	EXPECT_BAD(w.opcode = DRNIC_WR_RDMA_READ; w.send_flags |= DRNIC_SEND_INLINE);
	EXPECT_BAD(w.opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD; w.num_sge = 2); /* one 8-byte SGE */
	EXPECT_BAD(w.opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD; sge[1].length = 4; w.sg_list = &sge[1]);
	EXPECT_BAD(w.opcode = DRNIC_WR_ATOMIC_CMP_AND_SWP; sge[2].length = 8; w.sg_list = &sge[2];
		   w.wr.atomic.remote_addr = 4);                          /* misaligned */
	EXPECT_BAD(w.send_flags |= DRNIC_SEND_INLINE; sge[0].length = 65); /* > max_inline */
	sge[0].length = 8;
	ut_drain();
}

/*
 * ATOMIC WRITE: exactly 8 bytes (one SGE, two SGEs of 4, or 8 inline bytes
 * whatever max_inline_data is) to an 8-aligned remote address, RC only;
 * anything else is EINVAL with nothing posted. The WQE keeps the remote
 * address, rkey and the inline bytes.
 */
static void
test_atomic_write(void)
{
	struct drnic_sge sge[2] = { { (uintptr_t)data, 8, 1 }, { (uintptr_t)data + 8, 4, 1 } };
	uint64_t v = 0x1122334455667788ull;
	struct drnic_sge isge = { (uintptr_t)&v, 8, 0 };
	struct drnic_send_wr w, *bad;
	struct verbs_send_wqe *wqe;
	uint32_t prod;

	atomic_store(&qp->state, DRNIC_QPS_RTS);
#define AW_WR(list, n)                                                          	do {                                                                    		w = ut_wr(70, list, n);                                         		w.opcode = DRNIC_WR_ATOMIC_WRITE;                               		w.wr.rdma.remote_addr = 0x10000;                                		w.wr.rdma.rkey = 0xABC;                                         	} while (0)
#define AW_BAD()                                                                	do {                                                                    		prod = atomic_load(&qp->sq.prod);                               		bad = NULL;                                                     		CU_ASSERT_EQUAL(drnic_post_send(qp, &w, &bad), -EINVAL);        		CU_ASSERT_PTR_EQUAL(bad, &w);                                   		CU_ASSERT_EQUAL(atomic_load(&qp->sq.prod), prod);               	} while (0)
	AW_WR(&sge[1], 1);                      /* 4 bytes */
	AW_BAD();
	AW_WR(sge, 2);                          /* 12 bytes */
	AW_BAD();
	AW_WR(sge, 1);
	w.wr.rdma.remote_addr = 0x10004;        /* misaligned */
	AW_BAD();
	AW_WR(sge, 1);
	qp->type = DRNIC_QPT_UC;                /* RC only */
	AW_BAD();
	qp->type = DRNIC_QPT_RC;

	/* One 8-byte SGE. */
	AW_WR(sge, 1);
	prod = atomic_load(&qp->sq.prod);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &w, &bad), 0);
	wqe = verbs_wq_slot(&qp->sq, prod);
	CU_ASSERT_EQUAL(wqe->opcode, DRNIC_WR_ATOMIC_WRITE);
	CU_ASSERT_EQUAL(wqe->length, 8);
	CU_ASSERT_EQUAL(wqe->remote_addr, 0x10000);
	CU_ASSERT_EQUAL(wqe->rkey, 0xABC);
	CU_ASSERT_EQUAL(wqe->num_sge, 1);
	ut_drain();
	/* Inline, with max_inline_data 0: the 8 bytes are copied now. */
	qp->sq.max_inline = 0;
	AW_WR(&isge, 1);
	w.send_flags |= DRNIC_SEND_INLINE;
	prod = atomic_load(&qp->sq.prod);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &w, &bad), 0);
	v = 0;
	wqe = verbs_wq_slot(&qp->sq, prod);
	CU_ASSERT_EQUAL(wqe->inl, 1);
	CU_ASSERT_EQUAL(wqe->length, 8);
	CU_ASSERT_EQUAL(memcmp(wqe->sge, &(uint64_t){ 0x1122334455667788ull }, 8), 0);
	qp->sq.max_inline = 64;
#undef AW_WR
#undef AW_BAD
	ut_drain();
}

/*
 * Counts are checked before any list is read (issue 13, defect 6): num_sge
 * one above the QP's maximum with a heap list of exactly the maximum (ASan
 * reports the read past it), INT_MAX (a read that far faults), and inline
 * data in more buffers than max_send_sge (as mlx5: the count limit holds for
 * inline too). EINVAL, bad_wr the WR, nothing posted.
 */
static void
test_sge_count_first(void)
{
	struct drnic_sge *list = malloc(2 * sizeof(*list));   /* max_sge is 2 */
	struct drnic_send_wr wr, *bad;
	struct drnic_recv_wr rwr, *rbad;
	const int counts[] = { 3, INT_MAX };
	uint32_t prod, rprod;
	unsigned int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(list);
	list[0] = (struct drnic_sge){ (uintptr_t)data, 1, 1 };
	list[1] = (struct drnic_sge){ (uintptr_t)data + 1, 1, 1 };
	atomic_store(&qp->state, DRNIC_QPS_RTS);
	for (i = 0; i < RTE_DIM(counts); i++) {
		prod = atomic_load(&qp->sq.prod);
		rprod = atomic_load(&qp->rq.prod);
		wr = ut_wr(60, list, counts[i]);
		bad = NULL;
		CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), -EINVAL);
		CU_ASSERT_PTR_EQUAL(bad, &wr);
		wr.send_flags |= DRNIC_SEND_INLINE;
		bad = NULL;
		CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), -EINVAL);
		CU_ASSERT_PTR_EQUAL(bad, &wr);
		CU_ASSERT_EQUAL(atomic_load(&qp->sq.prod), prod);
		rwr = (struct drnic_recv_wr){ .wr_id = 61, .sg_list = list, .num_sge = counts[i] };
		rbad = NULL;
		CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, &rbad), -EINVAL);
		CU_ASSERT_PTR_EQUAL(rbad, &rwr);
		CU_ASSERT_EQUAL(atomic_load(&qp->rq.prod), rprod);
	}
	/* The maximum itself still posts, inline too. */
	wr = ut_wr(62, list, 2);
	wr.send_flags |= DRNIC_SEND_INLINE;
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), 0);
	CU_ASSERT_PTR_NULL(bad);
	free(list);
	ut_drain();
}

static void
test_full(void)
{
	struct drnic_sge sge = { (uintptr_t)data, 8, 1 };
	struct drnic_send_wr wr[5], *bad = NULL;
	struct drnic_recv_wr rwr[5], *rbad = NULL;
	int i;

	atomic_store(&qp->state, DRNIC_QPS_RTS);
	for (i = 0; i < 5; i++) {
		wr[i] = ut_wr(30 + (uint64_t)i, &sge, 1);
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
		rwr[i] = (struct drnic_recv_wr){ .wr_id = 40 + (uint64_t)i, .sg_list = &sge,
						 .num_sge = 1, .next = i < 4 ? &rwr[i + 1] : NULL };
	}
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr[0], &bad), -ENOMEM);
	CU_ASSERT_PTR_EQUAL(bad, &wr[4]);
	CU_ASSERT_EQUAL(atomic_load(&qp->sq.prod) - atomic_load(&qp->sq.cons), 4);
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr[0], &rbad), -ENOMEM);
	CU_ASSERT_PTR_EQUAL(rbad, &rwr[4]);
	/* The engine retires two: two more fit. */
	atomic_fetch_add(&qp->sq.cons, 2);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr[3], &bad), 0);
	CU_ASSERT_PTR_NULL(bad);
	ut_drain();
}

static void
test_contents(void)
{
	struct drnic_sge sge[2] = { { (uintptr_t)data, 100, 5 }, { (uintptr_t)data + 200, 28, 6 } };
	struct drnic_send_wr wr, *bad;
	struct drnic_recv_wr rwr = { .wr_id = 77, .sg_list = sge, .num_sge = 2 }, *rbad;
	struct verbs_send_wqe *w;
	struct verbs_recv_wqe *rw;
	uint32_t prod;
	unsigned int i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	atomic_store(&qp->state, DRNIC_QPS_RTS);
	/* RDMA WRITE with immediate, two SGEs. */
	wr = ut_wr(50, sge, 2);
	wr.opcode = DRNIC_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = 0x01020304;
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x4242;
	wr.send_flags |= DRNIC_SEND_FENCE;
	prod = atomic_load(&qp->sq.prod);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), 0);
	w = verbs_wq_slot(&qp->sq, prod);
	CU_ASSERT_EQUAL(w->wr_id, 50);
	CU_ASSERT_EQUAL(w->opcode, DRNIC_WR_RDMA_WRITE_WITH_IMM);
	CU_ASSERT_EQUAL(w->length, 128);
	CU_ASSERT_EQUAL(w->num_sge, 2);
	CU_ASSERT_EQUAL(w->sge[1].lkey, 6);
	CU_ASSERT_EQUAL(w->remote_addr, 0x1000);
	CU_ASSERT_EQUAL(w->rkey, 0x4242);
	CU_ASSERT_EQUAL(w->imm_data, 0x01020304);
	CU_ASSERT(w->send_flags & DRNIC_SEND_FENCE);
	CU_ASSERT_EQUAL(w->inl, 0);
	/* Inline: the bytes are copied now; the buffer can change after. */
	wr = ut_wr(51, sge, 2);
	wr.send_flags |= DRNIC_SEND_INLINE;
	sge[0].length = 30;
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), 0);
	w = verbs_wq_slot(&qp->sq, prod + 1);
	CU_ASSERT_EQUAL(w->inl, 1);
	CU_ASSERT_EQUAL(w->length, 58);
	CU_ASSERT_EQUAL(memcmp(w->sge, data, 30), 0);
	CU_ASSERT_EQUAL(memcmp((uint8_t *)w->sge + 30, data + 200, 28), 0);
	/* Atomic. */
	sge[0].length = 8;
	wr = ut_wr(52, sge, 1);
	wr.opcode = DRNIC_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = 0x2000;
	wr.wr.atomic.rkey = 9;
	wr.wr.atomic.compare_add = 11;
	wr.wr.atomic.swap = 22;
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), 0);
	w = verbs_wq_slot(&qp->sq, prod + 2);
	CU_ASSERT_EQUAL(w->compare_add, 11);
	CU_ASSERT_EQUAL(w->swap, 22);
	CU_ASSERT_EQUAL(w->rkey, 9);
	CU_ASSERT_EQUAL(w->remote_addr, 0x2000);
	/* Receive. */
	sge[0].length = 100;
	prod = atomic_load(&qp->rq.prod);
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, &rbad), 0);
	rw = verbs_wq_slot(&qp->rq, prod);
	CU_ASSERT_EQUAL(rw->wr_id, 77);
	CU_ASSERT_EQUAL(rw->num_sge, 2);
	CU_ASSERT_EQUAL(rw->length, 128);
	CU_ASSERT_EQUAL(rw->sge[0].lkey, 5);
	rwr.num_sge = 3;
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, &rbad), -EINVAL);
	CU_ASSERT_PTR_EQUAL(rbad, &rwr);
	ut_drain();
}

static void
test_doorbell(void)
{
	struct drnic_sge sge = { (uintptr_t)data, 8, 1 };
	struct drnic_send_wr wr = ut_wr(60, &sge, 1), *bad;
	struct drnic_recv_wr rwr = { .wr_id = 61, .sg_list = &sge, .num_sge = 1 }, *rbad;
	void *x;

	ut_drain();
	atomic_store(&qp->state, DRNIC_QPS_RTS);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), 0);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), 0);
	/* Idle -> busy once: one doorbell for two posts. */
	CU_ASSERT_EQUAL(rte_ring_count(dev->eng[0].doorbell), 1);
	CU_ASSERT_EQUAL(rte_ring_dequeue(dev->eng[0].doorbell, &x), 0);
	CU_ASSERT_PTR_EQUAL(x, qp);
	ut_drain();
	/* A receive needs no doorbell, except in ERR (to be flushed). */
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, &rbad), 0);
	CU_ASSERT_EQUAL(rte_ring_count(dev->eng[0].doorbell), 0);
	atomic_store(&qp->state, DRNIC_QPS_ERR);
	CU_ASSERT_EQUAL(drnic_post_recv(qp, &rwr, &rbad), 0);
	CU_ASSERT_EQUAL(rte_ring_count(dev->eng[0].doorbell), 1);
	/* Sends are accepted in ERR (and flushed by the engine). */
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), 0);
	ut_drain();
	/* Inline progress: posting runs the engines. */
	dev->cfg.progress = DRNIC_PROGRESS_INLINE;
	ut_progress_calls = 0;
	atomic_store(&qp->state, DRNIC_QPS_RTS);
	CU_ASSERT_EQUAL(drnic_post_send(qp, &wr, &bad), 0);
	CU_ASSERT_EQUAL(ut_progress_calls, 1);
	dev->cfg.progress = DRNIC_PROGRESS_DEDICATED;
	ut_drain();
}

/* The send opcode table: every opcode is exactly one kind of operation,
 * immediate data and inline data only where verbs allow them, and the CQE
 * opcode of its kind. */
static void
test_wr_info(void)
{
	unsigned int op;

	for (op = 0; op < VERBS_WR_OPCODE_MAX; op++) {
		const struct verbs_wr_info *i = verbs_wr_info((uint8_t)op);
		uint16_t kind = i->flags & (VERBS_WR_SEND | VERBS_WR_WRITE | VERBS_WR_RD_ATOMIC |
					    VERBS_WR_LOCAL);
		bool aw = (i->flags & VERBS_WR_ATOMIC_WRITE) != 0;

		if (i->flags == 0)
			continue;   /* not offered: post_send refuses it */
		CU_ASSERT(kind != 0 && (kind & (kind - 1)) == 0);
		if (i->flags & (VERBS_WR_IMM | VERBS_WR_INLINE))
			CU_ASSERT((kind & (VERBS_WR_SEND | VERBS_WR_WRITE)) != 0);
		/* An ATOMIC WRITE is a WRITE of 8 bytes. */
		CU_ASSERT(!aw || (kind == VERBS_WR_WRITE && !(i->flags & VERBS_WR_IMM)));
		CU_ASSERT_EQUAL(i->wc_byte_len8, kind == VERBS_WR_ATOMIC || aw);
		switch (kind) {
		case VERBS_WR_SEND:
			CU_ASSERT_EQUAL(i->wc_opcode, DRNIC_WC_SEND);
			break;
		case VERBS_WR_WRITE:
			CU_ASSERT_EQUAL(i->wc_opcode, aw ? DRNIC_WC_ATOMIC_WRITE : DRNIC_WC_RDMA_WRITE);
			break;
		case VERBS_WR_READ:
			CU_ASSERT_EQUAL(i->wc_opcode, DRNIC_WC_RDMA_READ);
			break;
		case VERBS_WR_LOCAL:
			CU_ASSERT(i->wc_opcode == DRNIC_WC_BIND_MW ||
				  i->wc_opcode == DRNIC_WC_LOCAL_INV);
			CU_ASSERT_EQUAL(i->flags, VERBS_WR_LOCAL);
			break;
		default:
			CU_ASSERT(i->wc_opcode == DRNIC_WC_COMP_SWAP ||
				  i->wc_opcode == DRNIC_WC_FETCH_ADD);
		}
	}
	CU_ASSERT(verbs_wr_info(DRNIC_WR_ATOMIC_WRITE)->flags & VERBS_WR_ATOMIC_WRITE);
	CU_ASSERT(verbs_wr_info(DRNIC_WR_SEND_WITH_IMM)->flags & VERBS_WR_IMM);
	CU_ASSERT(verbs_wr_info(DRNIC_WR_RDMA_WRITE_WITH_IMM)->flags & VERBS_WR_IMM);
	CU_ASSERT_FALSE(verbs_wr_info(DRNIC_WR_SEND)->flags & VERBS_WR_IMM);
	CU_ASSERT_EQUAL(verbs_wr_info(DRNIC_WR_SEND_WITH_INV)->flags,
			VERBS_WR_SEND | VERBS_WR_INV | VERBS_WR_INLINE);
	CU_ASSERT_EQUAL(verbs_wr_info(DRNIC_WR_BIND_MW)->wc_opcode, DRNIC_WC_BIND_MW);
	CU_ASSERT_EQUAL(verbs_wr_info(DRNIC_WR_LOCAL_INV)->wc_opcode, DRNIC_WC_LOCAL_INV);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("verbs_post", ut_setup, ut_teardown);
	CU_ADD_TEST(s, test_state);
	CU_ADD_TEST(s, test_wr_info);
	CU_ADD_TEST(s, test_atomic_write);
	CU_ADD_TEST(s, test_bad_wr);
	CU_ADD_TEST(s, test_sge_count_first);
	CU_ADD_TEST(s, test_full);
	CU_ADD_TEST(s, test_contents);
	CU_ADD_TEST(s, test_doorbell);
	return ut_run_all();
}
