/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad API input (issue 3: "returns a precise errno and leaves everything
 * consistent"): every call below gets an argument its header documents as an
 * error and must return exactly the documented errno (negative return, or
 * NULL with rte_errno), change nothing, and, for lists of work requests,
 * report the first failing WR in bad_wr with nothing after it posted — which
 * is verified by completing the WRs that were posted and counting the CQEs.
 * Afterwards a normal SEND still delivers its bytes.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>

#include "sem_common.h"

#define EXPECT_NULL_ERRNO(expr, err, ...)                                       \
	do {                                                                    \
		const void *_p;                                                 \
		rte_errno = 0;                                                  \
		_p = (const void *)(expr);                                      \
		TEST_ASSERT(_p == NULL, __VA_ARGS__);                           \
		TEST_ASSERT_EQUAL(rte_errno, err, __VA_ARGS__);                 \
	} while (0)

static const unsigned int api_all_access = DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
					   DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC;

/* Issue 13, defect 5: an unmapped range, or a read-only one for a writable
 * MR, is EFAULT (a peer's WRITE into it would crash the engine). */
static int
api_reg_unmapped(struct drnic_pd *pd)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct drnic_mr *mr;

	TEST_ASSERT(m != MAP_FAILED, "mmap");
	TEST_ASSERT_SUCCESS(munmap(m + pg, pg), "munmap the second page");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, m + pg, pg, 0), EFAULT, "reg_mr of an unmapped page");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, m, 2 * pg, 0), EFAULT, "reg_mr running into a hole");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, m, pg, DRNIC_ACCESS_LOCAL_WRITE), EFAULT,
			  "LOCAL_WRITE on read-only memory");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, m, pg, DRNIC_ACCESS_LOCAL_WRITE |
				       DRNIC_ACCESS_REMOTE_WRITE), EFAULT,
			  "REMOTE_WRITE on read-only memory");
	mr = drnic_reg_mr(pd, m, pg, DRNIC_ACCESS_REMOTE_READ);
	TEST_ASSERT(mr != NULL, "REMOTE_READ on read-only memory: %s", rte_strerror(rte_errno));
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	munmap(m, pg);
	return TEST_SUCCESS;
}

static int
api_device_and_memory(struct sem_ctx *c)
{
	struct drnic_config cfg;
	struct drnic_device_attr da;
	struct drnic_port_attr pa;
	union drnic_gid gid;
	struct drnic_pd *pd;
	struct drnic_mr *mr;
	uint8_t *buf;

	TEST_ASSERT_EQUAL(drnic_config_init(NULL), -EINVAL, "config_init(NULL)");
	TEST_ASSERT_SUCCESS(drnic_config_init(&cfg), "config_init");
	TEST_ASSERT_EQUAL(drnic_config_set(&cfg, "no_such_key", "1"), -EINVAL, "unknown key");
	TEST_ASSERT_EQUAL(drnic_config_set(&cfg, "mtu", "100"), -EINVAL, "mtu out of range");
	TEST_ASSERT_EQUAL(drnic_config_set(NULL, "mtu", "1500"), -EINVAL, "config_set(NULL)");
	TEST_ASSERT_EQUAL(drnic_config_set(&cfg, "progress", "sometimes"), -EINVAL,
			  "bad progress value");

	/* Device open: bad configurations, duplicate name. */
	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "sem_api_bad");
	cfg.progress = DRNIC_PROGRESS_INLINE;
	cfg.nb_engines = 0;
	EXPECT_NULL_ERRNO(drnic_device_open(&cfg), EINVAL, "open with 0 engines");
	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "sem_api_bad");
	cfg.progress = DRNIC_PROGRESS_INLINE;
	cfg.mtu = 100;
	EXPECT_NULL_ERRNO(drnic_device_open(&cfg), EINVAL, "open with MTU 100");
	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "sem_api_bad");
	cfg.progress = DRNIC_PROGRESS_INLINE;
	snprintf(cfg.link_driver, sizeof(cfg.link_driver), "no_such_link");
	EXPECT_NULL_ERRNO(drnic_device_open(&cfg), EINVAL, "open with an unknown link driver");
	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "%s", drnic_device_name(c->dev[SEM_SRV]));
	cfg.progress = DRNIC_PROGRESS_INLINE;
	snprintf(cfg.link_args, sizeof(cfg.link_args), "wire=sem_api_dup");
	EXPECT_NULL_ERRNO(drnic_device_open(&cfg), EEXIST, "open a second device of that name");

	TEST_ASSERT_EQUAL(drnic_device_close(NULL), -EINVAL, "close(NULL)");
	TEST_ASSERT_EQUAL(drnic_device_close(c->dev[SEM_SRV]), -EBUSY, "close with a PD alive");
	TEST_ASSERT_EQUAL(drnic_query_device(NULL, &da), -EINVAL, "query_device(NULL)");
	TEST_ASSERT_EQUAL(drnic_query_device(c->dev[SEM_SRV], NULL), -EINVAL, "query_device attr NULL");
	TEST_ASSERT_SUCCESS(drnic_query_device(c->dev[SEM_SRV], &da), "query_device");
	TEST_ASSERT_EQUAL(da.vendor_id, DRNIC_VENDOR_ID, "vendor_id 0x%x", da.vendor_id);
	TEST_ASSERT(da.vendor_id != 0, "vendor_id not 0");
	TEST_ASSERT_EQUAL(drnic_query_port(c->dev[SEM_SRV], 2, &pa), -EINVAL, "query_port(2)");
	TEST_ASSERT_EQUAL(drnic_query_port(c->dev[SEM_SRV], 0, &pa), -EINVAL, "query_port(0)");
	TEST_ASSERT_EQUAL(drnic_query_gid(c->dev[SEM_SRV], 1, DRNIC_GID_TABLE_LEN, &gid), -EINVAL,
			  "query_gid past the table");
	TEST_ASSERT_EQUAL(drnic_query_gid(c->dev[SEM_SRV], 1, -1, &gid), -EINVAL, "query_gid(-1)");
	EXPECT_NULL_ERRNO(drnic_device_async_queue(NULL), EINVAL, "async_queue(NULL)");
	TEST_ASSERT(drnic_device_name(NULL) == NULL, "device_name(NULL)");

	/* Memory. */
	EXPECT_NULL_ERRNO(drnic_alloc(0, 0, SOCKET_ID_ANY), EINVAL, "drnic_alloc(0)");
	EXPECT_NULL_ERRNO(drnic_alloc(64, 3, SOCKET_ID_ANY), EINVAL, "alignment 3");
	EXPECT_NULL_ERRNO(drnic_alloc_pd(NULL), EINVAL, "alloc_pd(NULL)");
	TEST_ASSERT_EQUAL(drnic_dealloc_pd(NULL), -EINVAL, "dealloc_pd(NULL)");
	buf = drnic_alloc(4096, 0, SOCKET_ID_ANY);
	TEST_ASSERT(buf != NULL, "alloc");
	pd = drnic_alloc_pd(c->dev[SEM_SRV]);
	TEST_ASSERT(pd != NULL, "alloc_pd");
	EXPECT_NULL_ERRNO(drnic_reg_mr(NULL, buf, 64, DRNIC_ACCESS_LOCAL_WRITE), EINVAL,
			  "reg_mr(NULL pd)");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, NULL, 64, DRNIC_ACCESS_LOCAL_WRITE), EINVAL,
			  "reg_mr(NULL addr, 64)");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, buf, 64, 1u << 10), EINVAL, "unknown access bit");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, buf, 64, DRNIC_ACCESS_REMOTE_WRITE), EINVAL,
			  "REMOTE_WRITE without LOCAL_WRITE");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, buf, 64, DRNIC_ACCESS_REMOTE_ATOMIC), EINVAL,
			  "REMOTE_ATOMIC without LOCAL_WRITE");
	EXPECT_NULL_ERRNO(drnic_reg_mr(pd, (void *)(UINTPTR_MAX - 15), 64, DRNIC_ACCESS_LOCAL_WRITE),
			  EINVAL, "address range wraps");
	TEST_ASSERT_SUCCESS(api_reg_unmapped(pd), "unmapped and read-only memory");
	TEST_ASSERT_EQUAL(drnic_dereg_mr(NULL), -EINVAL, "dereg_mr(NULL)");
	mr = drnic_reg_mr(pd, buf, 0, DRNIC_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(mr != NULL, "zero-length MR is allowed");
	TEST_ASSERT_EQUAL(drnic_dealloc_pd(pd), -EBUSY, "dealloc a PD with an MR");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	TEST_ASSERT_SUCCESS(drnic_dealloc_pd(pd), "dealloc after the MR is gone");
	drnic_free(buf);
	drnic_free(NULL);
	return TEST_SUCCESS;
}

static int
api_cq_and_channel(struct sem_ctx *c)
{
	struct drnic_cq_attr a = { .cqe = 16, .socket_id = SOCKET_ID_ANY };
	struct drnic_async_event ev;
	struct drnic_async_stats as;
	struct drnic_async_queue *q;
	struct drnic_comp_channel *ch;
	struct drnic_cq_stats st;
	struct drnic_cq *cq, *evcq;
	struct drnic_wc wc[2];
	void *ctx;

	EXPECT_NULL_ERRNO(drnic_cq_create(NULL), EINVAL, "cq_create(NULL)");
	a.cqe = 0;
	EXPECT_NULL_ERRNO(drnic_cq_create(&a), EINVAL, "cq_create(depth 0)");
	a.cqe = DRNIC_CQ_MAX_DEPTH + 1;
	EXPECT_NULL_ERRNO(drnic_cq_create(&a), ERANGE, "cq_create(depth above max)");
	a.cqe = UINT32_MAX;
	EXPECT_NULL_ERRNO(drnic_cq_create(&a), ERANGE, "cq_create(depth UINT32_MAX)");

	cq = sem_cq(c, SEM_SRV, 16, NULL, NULL);
	TEST_ASSERT(cq != NULL, "cq");
	TEST_ASSERT_EQUAL(drnic_cq_poll(NULL, 1, wc), -EINVAL, "poll(NULL)");
	TEST_ASSERT_EQUAL(drnic_cq_poll(cq, -1, wc), -EINVAL, "poll(-1 entries)");
	TEST_ASSERT_EQUAL(drnic_cq_poll(cq, 1, NULL), -EINVAL, "poll(NULL wc)");
	TEST_ASSERT_EQUAL(drnic_cq_poll(cq, 0, NULL), 0, "poll(0 entries)");
	TEST_ASSERT_EQUAL(drnic_cq_poll(cq, 2, wc), 0, "poll an empty CQ");
	TEST_ASSERT_EQUAL(drnic_cq_req_notify(NULL, 0), -EINVAL, "req_notify(NULL)");
	TEST_ASSERT_EQUAL(drnic_cq_req_notify(cq, 0), -EINVAL, "req_notify without a channel");
	TEST_ASSERT_EQUAL(drnic_cq_resize(NULL, 32), -EINVAL, "resize(NULL)");
	TEST_ASSERT_EQUAL(drnic_cq_resize(cq, 0), -EINVAL, "resize(0)");
	TEST_ASSERT_EQUAL(drnic_cq_resize(cq, DRNIC_CQ_MAX_DEPTH + 1), -ERANGE, "resize above max");
	TEST_ASSERT_EQUAL(drnic_cq_query_stats(NULL, &st), -EINVAL, "query_stats(NULL)");
	TEST_ASSERT_EQUAL(drnic_cq_query_stats(cq, NULL), -EINVAL, "query_stats(cq, NULL)");
	TEST_ASSERT_SUCCESS(drnic_cq_query_stats(cq, &st), "query_stats");
	TEST_ASSERT_EQUAL(st.depth, 16, "depth unchanged by the failed resizes");
	TEST_ASSERT_EQUAL(drnic_cq_destroy(NULL), -EINVAL, "cq_destroy(NULL)");

	TEST_ASSERT_EQUAL(drnic_comp_channel_fd(NULL), -EINVAL, "channel_fd(NULL)");
	TEST_ASSERT_EQUAL(drnic_destroy_comp_channel(NULL), -EINVAL, "destroy_channel(NULL)");
	ch = sem_channel(c);
	TEST_ASSERT(ch != NULL, "channel");
	TEST_ASSERT_EQUAL(drnic_get_cq_event(NULL, &evcq, &ctx), -EINVAL, "get_cq_event(NULL ch)");
	TEST_ASSERT_EQUAL(drnic_get_cq_event(ch, NULL, &ctx), -EINVAL, "get_cq_event(NULL cq)");
	TEST_ASSERT_EQUAL(drnic_try_get_cq_event(NULL, &evcq, &ctx), -EINVAL, "try_get(NULL)");
	TEST_ASSERT_EQUAL(drnic_try_get_cq_event(ch, &evcq, &ctx), -EAGAIN, "try_get on empty");
	drnic_ack_cq_events(NULL, 1);  /* documented no-op */
	cq = sem_cq(c, SEM_SRV, 16, ch, NULL);
	TEST_ASSERT(cq != NULL, "cq with a channel");
	TEST_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), -EBUSY, "destroy a channel used by a CQ");
	TEST_ASSERT_SUCCESS(drnic_cq_req_notify(cq, 0), "req_notify with a channel");
	TEST_ASSERT_SUCCESS(sem_destroy_cq(c, cq), "destroy an armed CQ without events");
	TEST_ASSERT_SUCCESS(drnic_destroy_comp_channel(ch), "destroy the channel after its CQ");
	c->nb_ch--;

	/* Async queues. */
	EXPECT_NULL_ERRNO(drnic_async_queue_create(DRNIC_ASYNC_QUEUE_MAX_SIZE + 1), ERANGE,
			  "async queue above max size");
	TEST_ASSERT_EQUAL(drnic_async_queue_destroy(NULL), -EINVAL, "async_queue_destroy(NULL)");
	TEST_ASSERT_EQUAL(drnic_async_queue_fd(NULL), -EINVAL, "async_queue_fd(NULL)");
	TEST_ASSERT_EQUAL(drnic_try_get_async_event(NULL, &ev), -EINVAL, "try_get_async(NULL)");
	TEST_ASSERT_EQUAL(drnic_get_async_event(NULL, &ev), -EINVAL, "get_async(NULL)");
	TEST_ASSERT_EQUAL(drnic_async_queue_query_stats(NULL, &as), -EINVAL, "async stats(NULL)");
	TEST_ASSERT_EQUAL(drnic_try_get_async_event(drnic_device_async_queue(c->dev[SEM_SRV]), &ev),
			  -EAGAIN, "no async event on a healthy device");
	q = drnic_async_queue_create(0);
	TEST_ASSERT(q != NULL, "async queue");
	TEST_ASSERT_EQUAL(drnic_try_get_async_event(q, NULL), -EINVAL, "try_get_async(q, NULL)");
	{
		struct drnic_cq_attr qa = { .cqe = 8, .socket_id = SOCKET_ID_ANY, .async_queue = q };
		struct drnic_cq *qcq = drnic_cq_create(&qa);
		int r;

		TEST_ASSERT(qcq != NULL, "CQ on a private async queue");
		r = drnic_async_queue_destroy(q);
		if (r == 0) {
			drnic_cq_destroy(qcq);
			TEST_ASSERT(0, "async_queue_destroy while a CQ uses it returned 0, not -EBUSY");
		}
		TEST_ASSERT_EQUAL(r, -EBUSY, "destroy an async queue used by a CQ");
		TEST_ASSERT_SUCCESS(drnic_cq_destroy(qcq), "destroy the CQ");
		TEST_ASSERT_SUCCESS(drnic_async_queue_destroy(q), "then the queue");
	}

	TEST_ASSERT(drnic_wc_status_str((enum drnic_wc_status)999) != NULL &&
		    strcmp(drnic_wc_status_str((enum drnic_wc_status)999), "unknown") == 0,
		    "status string of an unknown status");
	TEST_ASSERT(strcmp(drnic_wc_status_str(DRNIC_WC_SUCCESS), "success") == 0,
		    "status string of SUCCESS (ibv_wc_status_str: \"success\")");
	TEST_ASSERT(strcmp(drnic_event_type_str((enum drnic_event_type)999), "unknown") == 0,
		    "event string of an unknown type");
	return TEST_SUCCESS;
}

static int
api_create_qp(struct sem_ctx *c, struct drnic_cq *cq)
{
	struct drnic_device_attr da;
	struct drnic_qp_init_attr ia, good = {
		.send_cq = cq, .recv_cq = cq, .qp_type = DRNIC_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int dummy;

	TEST_ASSERT_SUCCESS(drnic_query_device(c->dev[SEM_SRV], &da), "query_device");
	ia = good;
	EXPECT_NULL_ERRNO(drnic_create_qp(NULL, &ia), EINVAL, "create_qp(NULL pd)");
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], NULL), EINVAL, "create_qp(NULL attr)");
	ia = good;
	ia.send_cq = NULL;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "NULL send_cq");
	ia = good;
	ia.recv_cq = NULL;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "NULL recv_cq");
	ia = good;
	ia.qp_type = (enum drnic_qp_type)5;   /* RD: drnic has none */
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "RD QP");
	ia = good;
	ia.srq = (struct drnic_srq *)(void *)&dummy;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "not a live SRQ");
	ia = good;
	ia.cap.max_send_wr = 0;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "max_send_wr 0");
	ia = good;
	ia.cap.max_recv_wr = 0;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "max_recv_wr 0");
	ia = good;
	ia.cap.max_send_wr = (uint32_t)da.max_qp_wr + 1;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "max_send_wr above max_qp_wr");
	ia = good;
	ia.cap.max_recv_wr = (uint32_t)da.max_qp_wr + 1;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "max_recv_wr above max_qp_wr");
	ia = good;
	ia.cap.max_send_sge = (uint32_t)da.max_sge + 1;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "max_send_sge above max");
	ia = good;
	ia.cap.max_recv_sge = (uint32_t)da.max_sge + 1;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "max_recv_sge above max");
	ia = good;
	ia.cap.max_inline_data = (uint32_t)da.max_inline_data + 1;
	EXPECT_NULL_ERRNO(drnic_create_qp(c->pd[SEM_SRV], &ia), EINVAL, "inline above max");
	return TEST_SUCCESS;
}

/* State machine errors on a fresh QP; the QP ends in RTS, connected to @p peer. */
static int
api_modify(struct sem_ctx *c, struct drnic_qp *qp, struct drnic_qp *peer, uint32_t psn,
	   uint32_t peer_psn)
{
	const int rtr_mask = DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU | DRNIC_QP_DEST_QPN |
			     DRNIC_QP_RQ_PSN | DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER;
	const int rts_mask = DRNIC_QP_STATE | DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT |
			     DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | DRNIC_QP_MAX_QP_RD_ATOMIC;
	const int init_mask = DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			      DRNIC_QP_ACCESS_FLAGS;
	const int peer_side = SEM_CLI;  /* @p qp is the server's */
	struct drnic_qp_attr a, rtr, rts;
	struct drnic_qp_init_attr ia;

	/* Fully filled attribute sets for each step. */
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = api_all_access;
	memset(&rtr, 0, sizeof(rtr));
	rtr.qp_state = DRNIC_QPS_RTR;
	TEST_ASSERT_SUCCESS(drnic_query_gid(c->dev[peer_side], 1, 0, &rtr.ah_attr.grh.dgid), "gid");
	rtr.ah_attr.is_global = 1;
	rtr.ah_attr.grh.hop_limit = 64;
	rtr.ah_attr.port_num = 1;
	rtr.path_mtu = (enum drnic_mtu)c->active_mtu;
	rtr.dest_qp_num = drnic_qp_num(peer);
	rtr.rq_psn = peer_psn;
	rtr.max_dest_rd_atomic = (uint8_t)c->max_rd_atomic;
	rtr.min_rnr_timer = 1;
	memset(&rts, 0, sizeof(rts));
	rts.qp_state = DRNIC_QPS_RTS;
	rts.sq_psn = psn;
	rts.timeout = 14;
	rts.retry_cnt = 7;
	rts.rnr_retry = 7;
	rts.max_rd_atomic = (uint8_t)c->max_rd_atomic;

	TEST_ASSERT_EQUAL(drnic_modify_qp(NULL, &a, init_mask), -EINVAL, "modify(NULL qp)");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, NULL, init_mask), -EINVAL, "modify(NULL attr)");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rtr, rtr_mask), -EINVAL, "RESET -> RTR");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rts, rts_mask), -EINVAL, "RESET -> RTS");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &a, init_mask & ~DRNIC_QP_ACCESS_FLAGS), -EINVAL,
			  "RESET -> INIT without ACCESS_FLAGS");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &a, init_mask & ~DRNIC_QP_PORT), -EINVAL,
			  "RESET -> INIT without PORT");
	a.port_num = 2;
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &a, init_mask), -EINVAL, "RESET -> INIT port 2");
	a.port_num = 1;
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &a, init_mask | DRNIC_QP_SQ_PSN), -EINVAL,
			  "RESET -> INIT with SQ_PSN (not allowed in this transition)");
	a.cur_qp_state = DRNIC_QPS_RTS;
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &a, init_mask | DRNIC_QP_CUR_STATE), -EINVAL,
			  "CUR_STATE that is not the current state");
	a.cur_qp_state = DRNIC_QPS_RESET;
	TEST_ASSERT_EQUAL(drnic_qp_state(qp), DRNIC_QPS_RESET, "still RESET after the refusals");
	TEST_ASSERT_SUCCESS(drnic_modify_qp(qp, &a, init_mask), "RESET -> INIT");

	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rts, rts_mask), -EINVAL, "INIT -> RTS");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rtr, rtr_mask & ~DRNIC_QP_DEST_QPN), -EINVAL,
			  "INIT -> RTR without DEST_QPN");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rtr, rtr_mask & ~DRNIC_QP_AV), -EINVAL,
			  "INIT -> RTR without AV");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rtr, rtr_mask | DRNIC_QP_SQ_PSN), -EINVAL,
			  "INIT -> RTR with SQ_PSN");
	if (c->active_mtu < DRNIC_MTU_4096) {
		rtr.path_mtu = DRNIC_MTU_4096;
		TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rtr, rtr_mask), -EINVAL,
				  "INIT -> RTR with a path MTU above the port's");
		rtr.path_mtu = (enum drnic_mtu)c->active_mtu;
	}
	rtr.ah_attr.grh.sgid_index = DRNIC_GID_TABLE_LEN;
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rtr, rtr_mask), -EINVAL,
			  "INIT -> RTR with a GID index outside the table");
	rtr.ah_attr.grh.sgid_index = 0;
	TEST_ASSERT_EQUAL(drnic_qp_state(qp), DRNIC_QPS_INIT, "still INIT after the refusals");
	TEST_ASSERT_SUCCESS(drnic_modify_qp(qp, &rtr, rtr_mask), "INIT -> RTR");

	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rts, rts_mask & ~DRNIC_QP_SQ_PSN), -EINVAL,
			  "RTR -> RTS without SQ_PSN");
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &rts, rts_mask & ~DRNIC_QP_TIMEOUT), -EINVAL,
			  "RTR -> RTS without TIMEOUT");
	TEST_ASSERT_EQUAL(drnic_qp_state(qp), DRNIC_QPS_RTR, "still RTR after the refusals");
	TEST_ASSERT_SUCCESS(drnic_modify_qp(qp, &rts, rts_mask), "RTR -> RTS");
	a.qp_state = DRNIC_QPS_INIT;
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &a, DRNIC_QP_STATE), -EINVAL, "RTS -> INIT");
	a.qp_state = DRNIC_QPS_RTR;
	TEST_ASSERT_EQUAL(drnic_modify_qp(qp, &a, DRNIC_QP_STATE), -EINVAL, "RTS -> RTR");
	TEST_ASSERT_EQUAL(drnic_qp_state(qp), DRNIC_QPS_RTS, "still RTS");

	TEST_ASSERT_EQUAL(drnic_query_qp(NULL, &a, 0, &ia), -EINVAL, "query_qp(NULL)");
	TEST_ASSERT_EQUAL(drnic_query_qp(qp, NULL, 0, &ia), -EINVAL, "query_qp(attr NULL)");
	TEST_ASSERT_SUCCESS(drnic_query_qp(qp, &a, 0, &ia), "query_qp");
	TEST_ASSERT_EQUAL(a.qp_state, DRNIC_QPS_RTS, "queried state");
	TEST_ASSERT_EQUAL(a.dest_qp_num, drnic_qp_num(peer), "queried dest_qp_num");
	TEST_ASSERT_EQUAL(a.sq_psn, psn, "queried sq_psn");
	TEST_ASSERT_EQUAL(a.rq_psn, peer_psn, "queried rq_psn");
	return TEST_SUCCESS;
}

static void
api_send_wr(struct drnic_send_wr *wr, struct drnic_sge *sge, uint64_t wr_id, void *buf,
	    uint32_t len, uint32_t lkey)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)buf;
	sge->length = len;
	sge->lkey = lkey;
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = DRNIC_WR_SEND;
	wr->send_flags = DRNIC_SEND_SIGNALED;
}

static int
api_expect_wcs(struct sem_ctx *c, struct drnic_cq *cq, const uint64_t *ids, int n, uint32_t qpn,
	       int opcode, const char *what)
{
	struct drnic_wc wc[16];
	int got = sem_poll_n(c, cq, wc, n, 5000), i;

	TEST_ASSERT_EQUAL(got, n, "%s: completions", what);
	for (i = 0; i < n; i++)
		SEM_ASSERT_WC(&wc[i], ids[i], DRNIC_WC_SUCCESS, opcode, qpn);
	got = sem_poll_quiet(c, cq, wc, 16, 30);
	for (i = 0; i < got; i++)
		sem_print_wc("extra", &wc[i]);
	TEST_ASSERT_EQUAL(got, 0, "%s: completions for WRs that must not have been posted", what);
	return TEST_SUCCESS;
}

static int
api_body(struct sem_ctx *c)
{
	struct drnic_cq *scq, *ccq;
	struct drnic_qp *sqp, *cqp, *tqp;
	struct drnic_mr *smr, *rmr;
	uint8_t *sbuf, *rbuf;
	struct drnic_send_wr w[6], *bad;
	struct drnic_recv_wr r[6], *rbad;
	struct drnic_sge sg[6][4];
	struct drnic_qp_init_attr ia;
	struct drnic_qp_attr qa;
	uint32_t sqpn, cqpn, max_inline, max_ssge;
	int rc, i;

	if (api_device_and_memory(c) != TEST_SUCCESS)
		return TEST_FAILED;
	if (api_cq_and_channel(c) != TEST_SUCCESS)
		return TEST_FAILED;

	scq = sem_cq(c, SEM_SRV, 256, NULL, NULL);
	ccq = sem_cq(c, SEM_CLI, 256, NULL, NULL);
	TEST_ASSERT(scq != NULL && ccq != NULL, "CQs");
	if (api_create_qp(c, scq) != TEST_SUCCESS)
		return TEST_FAILED;
	sqp = sem_qp(c, SEM_SRV, scq, scq, 8, 8, 0);
	cqp = sem_qp(c, SEM_CLI, ccq, ccq, 4, 8, 0);
	TEST_ASSERT(sqp != NULL && cqp != NULL, "QPs");
	sqpn = drnic_qp_num(sqp);
	cqpn = drnic_qp_num(cqp);
	smr = sem_mr(c, SEM_CLI, 4096, DRNIC_ACCESS_LOCAL_WRITE, (void **)&sbuf);
	rmr = sem_mr(c, SEM_SRV, 4096, DRNIC_ACCESS_LOCAL_WRITE, (void **)&rbuf);
	TEST_ASSERT(smr != NULL && rmr != NULL, "MRs");
	TEST_ASSERT_SUCCESS(drnic_query_qp(cqp, &qa, 0, &ia), "query client QP");
	TEST_ASSERT_EQUAL(ia.cap.max_send_wr, 4, "client send queue size (4, a power of two)");
	max_inline = ia.cap.max_inline_data;
	max_ssge = ia.cap.max_send_sge;

	/* Destroying objects in use. */
	TEST_ASSERT_EQUAL(drnic_cq_destroy(scq), -EBUSY, "destroy a CQ used by a QP");
	TEST_ASSERT_EQUAL(drnic_dealloc_pd(c->pd[SEM_SRV]), -EBUSY, "dealloc a PD with a QP");

	/* Posting in the wrong state: RESET (send and recv), INIT, RTR (send). */
	api_send_wr(&w[0], sg[0], 1, sbuf, 8, drnic_mr_lkey(smr));
	bad = NULL;
	TEST_ASSERT_EQUAL(drnic_post_send(cqp, &w[0], &bad), -EINVAL, "post_send in RESET");
	TEST_ASSERT(bad == &w[0], "bad_wr of post_send in RESET");
	memset(&r[0], 0, sizeof(r[0]));
	sg[1][0] = (struct drnic_sge){ .addr = (uintptr_t)rbuf, .length = 64,
				       .lkey = drnic_mr_lkey(rmr) };
	r[0].wr_id = 2;
	r[0].sg_list = sg[1];
	r[0].num_sge = 1;
	rbad = NULL;
	TEST_ASSERT_EQUAL(drnic_post_recv(sqp, &r[0], &rbad), -EINVAL, "post_recv in RESET");
	TEST_ASSERT(rbad == &r[0], "bad_wr of post_recv in RESET");
	TEST_ASSERT_EQUAL(drnic_post_send(NULL, &w[0], &bad), -EINVAL, "post_send(NULL qp)");
	TEST_ASSERT_EQUAL(drnic_post_send(cqp, NULL, &bad), -EINVAL, "post_send(NULL wr)");
	TEST_ASSERT_EQUAL(drnic_post_send(cqp, &w[0], NULL), -EINVAL, "post_send(NULL bad_wr)");
	TEST_ASSERT_EQUAL(drnic_post_recv(NULL, &r[0], &rbad), -EINVAL, "post_recv(NULL qp)");
	TEST_ASSERT_EQUAL(drnic_post_recv(sqp, NULL, &rbad), -EINVAL, "post_recv(NULL wr)");
	TEST_ASSERT_EQUAL(drnic_post_recv(sqp, &r[0], NULL), -EINVAL, "post_recv(NULL bad_wr)");

	TEST_ASSERT_SUCCESS(sem_qp_init(cqp, api_all_access), "client INIT");
	TEST_ASSERT_EQUAL(drnic_post_send(cqp, &w[0], &bad), -EINVAL, "post_send in INIT");
	TEST_ASSERT(bad == &w[0], "bad_wr of post_send in INIT");
	TEST_ASSERT_SUCCESS(sem_qp_rtr(c, cqp, SEM_SRV, sqpn, 0x700), "client RTR");
	TEST_ASSERT_EQUAL(drnic_post_send(cqp, &w[0], &bad), -EINVAL, "post_send in RTR");
	TEST_ASSERT(bad == &w[0], "bad_wr of post_send in RTR");
	TEST_ASSERT_SUCCESS(sem_qp_rts(c, cqp, 0x900, c->max_rd_atomic), "client RTS");

	/* The server QP goes through the state machine's refusals. */
	if (api_modify(c, sqp, cqp, 0x700, 0x900) != TEST_SUCCESS)
		return TEST_FAILED;

	/* Receive list with a bad WR in the middle: r0 posted, r1 and r2 not. */
	for (i = 0; i < 3; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		sg[i][0] = (struct drnic_sge){ .addr = (uintptr_t)(rbuf + i * 512), .length = 512,
					       .lkey = drnic_mr_lkey(rmr) };
		r[i].wr_id = 101 + (uint64_t)i;
		r[i].sg_list = sg[i];
		r[i].num_sge = i == 1 ? 5 : 1;  /* the server QP has max_recv_sge 4 */
		r[i].next = i < 2 ? &r[i + 1] : NULL;
	}
	TEST_ASSERT_SUCCESS(drnic_query_qp(sqp, &qa, 0, &ia), "query server QP");
	TEST_ASSERT_EQUAL(ia.cap.max_recv_sge, 4, "server max_recv_sge");
	rbad = NULL;
	rc = drnic_post_recv(sqp, r, &rbad);
	TEST_ASSERT_EQUAL(rc, -EINVAL, "post_recv list with too many SGEs in its 2nd WR");
	TEST_ASSERT(rbad == &r[1], "bad_wr points at the 2nd receive (got %p, r = %p)",
		    (void *)rbad, (void *)r);

	/* Bad send WRs, each alone: -EINVAL, bad_wr = it, nothing posted. */
	{
		struct { const char *what; } cases[] = {
			{ "num_sge above max_send_sge" }, { "num_sge < 0" }, { "unknown opcode" },
			{ "inline above max_inline_data" }, { "inline RDMA READ" },
			{ "atomic with a 4-byte SGE" }, { "atomic to an unaligned address" },
		};
		int k;

		for (k = 0; k < (int)RTE_DIM(cases); k++) {
			struct drnic_send_wr x;
			struct drnic_sge xs[40];
			int j;

			api_send_wr(&x, xs, 200 + (uint64_t)k, sbuf, 8, drnic_mr_lkey(smr));
			for (j = 0; j < 40; j++)
				xs[j] = xs[0];
			switch (k) {
			case 0: x.num_sge = (int)max_ssge + 1; break;
			case 1: x.num_sge = -1; break;
			case 2: x.opcode = (enum drnic_wr_opcode)99; break;
			case 3:
				xs[0].length = max_inline + 1;
				x.send_flags |= DRNIC_SEND_INLINE;
				break;
			case 4:
				x.opcode = DRNIC_WR_RDMA_READ;
				x.send_flags |= DRNIC_SEND_INLINE;
				x.wr.rdma.remote_addr = (uintptr_t)rbuf;
				x.wr.rdma.rkey = drnic_mr_rkey(rmr);
				break;
			case 5:
				x.opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
				xs[0].length = 4;
				x.wr.atomic.remote_addr = (uintptr_t)rbuf;
				x.wr.atomic.rkey = drnic_mr_rkey(rmr);
				break;
			default:
				x.opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
				x.wr.atomic.remote_addr = (uintptr_t)rbuf + 4;
				x.wr.atomic.rkey = drnic_mr_rkey(rmr);
				break;
			}
			bad = NULL;
			TEST_ASSERT_EQUAL(drnic_post_send(cqp, &x, &bad), -EINVAL, "post_send: %s",
					  cases[k].what);
			TEST_ASSERT(bad == &x, "bad_wr for %s", cases[k].what);
		}
	}

	/* Issue 13, defect 6: the count is checked before the list is read. A
	 * heap list of exactly the maximum with num_sge one more (ASan reports
	 * a read past it), and INT_MAX (a read that far faults); inline too. */
	{
		struct drnic_sge *hs = malloc(max_ssge * sizeof(*hs));
		struct drnic_sge *hr = malloc(4 * sizeof(*hr));   /* max_recv_sge 4 */
		const int counts[] = { (int)max_ssge + 1, INT_MAX };
		struct drnic_send_wr x;
		struct drnic_recv_wr y;
		unsigned int j;
		int k;

		TEST_ASSERT(hs != NULL && hr != NULL, "malloc");
		for (j = 0; j < max_ssge; j++)
			hs[j] = (struct drnic_sge){ (uintptr_t)sbuf, 1, drnic_mr_lkey(smr) };
		for (j = 0; j < 4; j++)
			hr[j] = (struct drnic_sge){ (uintptr_t)rbuf, 1, drnic_mr_lkey(rmr) };
		for (k = 0; k < 2; k++) {
			api_send_wr(&x, hs, 250, sbuf, 1, drnic_mr_lkey(smr));
			x.sg_list = hs;
			x.num_sge = counts[k];
			bad = NULL;
			TEST_ASSERT_EQUAL(drnic_post_send(cqp, &x, &bad), -EINVAL,
					  "post_send num_sge %d (max %u)", counts[k], max_ssge);
			TEST_ASSERT(bad == &x, "bad_wr for num_sge %d", counts[k]);
			x.send_flags |= DRNIC_SEND_INLINE;
			bad = NULL;
			TEST_ASSERT_EQUAL(drnic_post_send(cqp, &x, &bad), -EINVAL,
					  "inline post_send num_sge %d", counts[k]);
			TEST_ASSERT(bad == &x, "bad_wr for inline num_sge %d", counts[k]);
			memset(&y, 0, sizeof(y));
			y.wr_id = 251;
			y.sg_list = hr;
			y.num_sge = k == 0 ? 5 : INT_MAX;
			rbad = NULL;
			TEST_ASSERT_EQUAL(drnic_post_recv(sqp, &y, &rbad), -EINVAL,
					  "post_recv num_sge %d (max 4)", y.num_sge);
			TEST_ASSERT(rbad == &y, "bad_wr for receive num_sge %d", y.num_sge);
		}
		free(hs);
		free(hr);
	}

	/* Send list: s0, s1 good, s2 bad (too many SGEs), s3 good: 2 posted. */
	for (i = 0; i < 4; i++) {
		sem_fill(sbuf + i * 256, 256, 300 + (uint32_t)i);
		api_send_wr(&w[i], sg[i], 301 + (uint64_t)i, sbuf + i * 256, 256,
			    drnic_mr_lkey(smr));
		w[i].next = i < 3 ? &w[i + 1] : NULL;
	}
	for (i = 1; i < 4; i++)
		sg[2][i] = sg[2][0];
	w[2].num_sge = (int)max_ssge + 1;
	bad = NULL;
	rc = drnic_post_send(cqp, w, &bad);
	TEST_ASSERT_EQUAL(rc, -EINVAL, "post_send list with a bad 3rd WR");
	TEST_ASSERT(bad == &w[2], "bad_wr points at the 3rd send");

	/* Count: only receive 101 is posted, so the first message lands in
	 * 101; the second finds no receive (RNR) until 104 is posted: 102 and
	 * 103 never existed. The client sees exactly 301 and 302. */
	{
		const uint64_t r1[] = { 101 }, r2[] = { 104 }, s12[] = { 301, 302 };
		struct drnic_wc wc[4];
		int n;

		n = sem_poll_n(c, scq, wc, 1, 5000);
		TEST_ASSERT_EQUAL(n, 1, "first message received");
		SEM_ASSERT_WC(&wc[0], r1[0], DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn);
		TEST_ASSERT_EQUAL(sem_check(rbuf, 256, 300), -1, "bytes of the first message");
		n = sem_poll_quiet(c, scq, wc, 4, 30);
		if (n > 0)
			sem_print_wc("unexpected", &wc[0]);
		TEST_ASSERT_EQUAL(n, 0, "2nd message received although no receive should be posted "
				  "(the WRs after bad_wr were posted)");
		TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 104, rbuf + 2048, 512, drnic_mr_lkey(rmr)),
				    "post 104");
		if (api_expect_wcs(c, scq, r2, 1, sqpn, DRNIC_WC_RECV, "server after 104") !=
		    TEST_SUCCESS)
			return TEST_FAILED;
		TEST_ASSERT_EQUAL(sem_check(rbuf + 2048, 256, 301), -1, "bytes of the 2nd message");
		if (api_expect_wcs(c, ccq, s12, 2, cqpn, DRNIC_WC_SEND, "client sends") != TEST_SUCCESS)
			return TEST_FAILED;
		/* Had 304 (after bad_wr) been posted, it would wait in RNR:
		 * give it a receive and check nothing comes. */
		TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 105, rbuf + 2560, 512, drnic_mr_lkey(rmr)),
				    "post 105");
		n = sem_poll_quiet(c, scq, wc, 4, 30);
		if (n > 0)
			sem_print_wc("unexpected", &wc[0]);
		TEST_ASSERT_EQUAL(n, 0, "a message arrived for a send after bad_wr");
	}

	/* Send queue full: 5 sends on a 4-deep queue while the receiver has
	 * no receive (RNR keeps them outstanding): -ENOMEM at the 5th. */
	for (i = 0; i < 5; i++) {
		api_send_wr(&w[i], sg[i], 401 + (uint64_t)i, sbuf + i * 64, 64, drnic_mr_lkey(smr));
		w[i].next = i < 4 ? &w[i + 1] : NULL;
	}
	bad = NULL;
	rc = drnic_post_send(cqp, w, &bad);
	TEST_ASSERT_EQUAL(rc, -ENOMEM, "post 5 sends on a send queue of 4");
	TEST_ASSERT(bad == &w[4], "bad_wr points at the 5th send");
	for (i = 0; i < 5; i++)
		TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 501 + (uint64_t)i, rbuf + i * 512, 512,
						  drnic_mr_lkey(rmr)), "recv");
	{
		/* 105 is still posted: it takes the first message. */
		const uint64_t rr[] = { 105, 501, 502, 503 }, ss[] = { 401, 402, 403, 404 };

		if (api_expect_wcs(c, scq, rr, 4, sqpn, DRNIC_WC_RECV, "server, queue-full case") !=
		    TEST_SUCCESS ||
		    api_expect_wcs(c, ccq, ss, 4, cqpn, DRNIC_WC_SEND, "client, queue-full case") !=
		    TEST_SUCCESS)
			return TEST_FAILED;
	}
	/* Receive queue full: 504 and 505 are still posted; 6 more fill the
	 * 8-deep queue, the next one does not fit. */
	for (i = 0; i < 6; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		sg[i][0] = (struct drnic_sge){ .addr = (uintptr_t)(rbuf + 3072), .length = 64,
					       .lkey = drnic_mr_lkey(rmr) };
		r[i].wr_id = 601 + (uint64_t)i;
		r[i].sg_list = sg[i];
		r[i].num_sge = 1;
		r[i].next = i < 5 ? &r[i + 1] : NULL;
	}
	rbad = NULL;
	TEST_ASSERT_SUCCESS(drnic_post_recv(sqp, r, &rbad), "6 receives (8 of 8 in use)");
	TEST_ASSERT(rbad == NULL, "bad_wr NULL on success");
	r[0].next = NULL;
	rc = drnic_post_recv(sqp, r, &rbad);
	TEST_ASSERT_EQUAL(rc, -ENOMEM, "receive queue full at the 9th receive");
	TEST_ASSERT(rbad == &r[0], "bad_wr points at the receive that did not fit");

	/* Consistent afterwards: a normal SEND delivers its bytes into 504. */
	sem_fill(sbuf, 200, 999);
	TEST_ASSERT_SUCCESS(sem_post_send(cqp, 700, DRNIC_WR_SEND, sbuf, 200, drnic_mr_lkey(smr),
					  DRNIC_SEND_SIGNALED, 0, 0), "normal send");
	{
		const uint64_t rr[] = { 504 }, ss[] = { 700 };
		struct drnic_cq_stats st;

		if (api_expect_wcs(c, scq, rr, 1, sqpn, DRNIC_WC_RECV, "normal send, server") !=
		    TEST_SUCCESS ||
		    api_expect_wcs(c, ccq, ss, 1, cqpn, DRNIC_WC_SEND, "normal send, client") !=
		    TEST_SUCCESS)
			return TEST_FAILED;
		TEST_ASSERT_EQUAL(sem_check(rbuf + 3 * 512, 200, 999), -1, "bytes of the normal send");
		drnic_cq_query_stats(scq, &st);
		TEST_ASSERT(st.overflows == 0 && st.in_error == 0, "server CQ healthy");
	}

	/* A CQ serving only as a QP's send CQ is in use too. */
	{
		struct drnic_cq *xcq = sem_cq(c, SEM_SRV, 8, NULL, NULL);

		TEST_ASSERT(xcq != NULL, "extra CQ");
		tqp = sem_qp(c, SEM_SRV, xcq, scq, 4, 4, 0);
		TEST_ASSERT(tqp != NULL, "third QP");
		TEST_ASSERT_EQUAL(drnic_cq_destroy(xcq), -EBUSY, "destroy a QP's send-only CQ");
		TEST_ASSERT_SUCCESS(sem_destroy_qp(c, tqp), "destroy a QP in RESET");
		TEST_ASSERT_SUCCESS(sem_destroy_cq(c, xcq), "its send CQ is free now");
	}
	TEST_ASSERT_EQUAL(drnic_destroy_qp(NULL), -EINVAL, "destroy_qp(NULL)");
	TEST_ASSERT_SUCCESS(sem_destroy_qp(c, sqp), "destroy the server QP");
	TEST_ASSERT_SUCCESS(sem_destroy_cq(c, scq), "its CQ is free now");
	TEST_ASSERT_EQUAL(drnic_qp_state(NULL), DRNIC_QPS_UNKNOWN, "qp_state(NULL)");
	TEST_ASSERT_EQUAL(drnic_qp_num(NULL), 0, "qp_num(NULL)");
	return TEST_SUCCESS;
}

static int
test_api_input(void)
{
	return sem_run(DRNIC_PROGRESS_INLINE, "bad API input", api_body);
}

DRNIC_TEST_REGISTER(sem_api_input_autotest, DRNIC_TEST_FAST, test_api_input);

/*
 * Issue 13, defect 11: a second destroy of any object kind is -EINVAL and
 * corrupts nothing (the first one freed the handle: under ASan, reading it
 * would be reported). A pointer of another kind is -EINVAL too, and leaves
 * the object usable.
 */
static int
api_double_destroy_body(struct sem_ctx *c)
{
	struct drnic_cq_attr ca = { .cqe = 16, .socket_id = SOCKET_ID_ANY };
	struct drnic_qp_init_attr ia;
	struct drnic_async_queue *q;
	struct drnic_comp_channel *ch;
	struct drnic_device *dev;
	struct drnic_config cfg;
	struct drnic_pd *pd;
	struct drnic_mr *mr;
	struct drnic_cq *cq;
	struct drnic_qp *qp;
	uint8_t *buf;

	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "sem_dd");
	cfg.progress = DRNIC_PROGRESS_INLINE;
	snprintf(cfg.link_args, sizeof(cfg.link_args), "wire=sem_dd_w");
	dev = drnic_device_open(&cfg);
	TEST_ASSERT(dev != NULL, "open a device: %s", rte_strerror(rte_errno));
	TEST_ASSERT_SUCCESS(drnic_device_close(dev), "close");
	TEST_ASSERT_EQUAL(drnic_device_close(dev), -EINVAL, "close the device again");

	pd = drnic_alloc_pd(c->dev[SEM_SRV]);
	TEST_ASSERT(pd != NULL, "alloc_pd");
	TEST_ASSERT_EQUAL(drnic_cq_destroy((struct drnic_cq *)(void *)pd), -EINVAL,
			  "a PD destroyed as a CQ");
	TEST_ASSERT_EQUAL(drnic_device_close((struct drnic_device *)(void *)pd), -EINVAL,
			  "a PD closed as a device");
	buf = drnic_alloc(4096, 0, SOCKET_ID_ANY);
	TEST_ASSERT(buf != NULL, "alloc");
	mr = drnic_reg_mr(pd, buf, 4096, DRNIC_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(mr != NULL, "reg_mr");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	TEST_ASSERT_EQUAL(drnic_dereg_mr(mr), -EINVAL, "dereg the MR again");
	drnic_free(buf);

	cq = drnic_cq_create(&ca);
	TEST_ASSERT(cq != NULL, "cq_create");
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = DRNIC_QPT_RC;
	ia.cap = (struct drnic_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
					.max_recv_sge = 1 };
	qp = drnic_create_qp(pd, &ia);
	TEST_ASSERT(qp != NULL, "create_qp: %s", rte_strerror(rte_errno));
	TEST_ASSERT_SUCCESS(drnic_destroy_qp(qp), "destroy_qp");
	TEST_ASSERT_EQUAL(drnic_destroy_qp(qp), -EINVAL, "destroy the QP again");
	TEST_ASSERT_SUCCESS(drnic_cq_destroy(cq), "cq_destroy");
	TEST_ASSERT_EQUAL(drnic_cq_destroy(cq), -EINVAL, "destroy the CQ again");
	TEST_ASSERT_SUCCESS(drnic_dealloc_pd(pd), "dealloc_pd (still usable after the misuse)");
	TEST_ASSERT_EQUAL(drnic_dealloc_pd(pd), -EINVAL, "dealloc the PD again");

	ch = drnic_create_comp_channel();
	TEST_ASSERT(ch != NULL, "create_comp_channel");
	TEST_ASSERT_SUCCESS(drnic_destroy_comp_channel(ch), "destroy_comp_channel");
	TEST_ASSERT_EQUAL(drnic_destroy_comp_channel(ch), -EINVAL, "destroy the channel again");
	q = drnic_async_queue_create(0);
	TEST_ASSERT(q != NULL, "async_queue_create");
	TEST_ASSERT_SUCCESS(drnic_async_queue_destroy(q), "async_queue_destroy");
	TEST_ASSERT_EQUAL(drnic_async_queue_destroy(q), -EINVAL, "destroy the async queue again");
	return TEST_SUCCESS;
}

static int
test_api_double_destroy(void)
{
	return sem_run(DRNIC_PROGRESS_INLINE, "double destroy", api_double_destroy_body);
}

DRNIC_TEST_REGISTER(sem_api_double_destroy_autotest, DRNIC_TEST_FAST, test_api_double_destroy);
