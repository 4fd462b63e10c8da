/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared set-up of the semantics autotests (see sem_common.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memory.h>
#include <rte_pause.h>

#include "sem_common.h"

static unsigned int sem_seq;

uint64_t
sem_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int
sem_ctx_open(struct sem_ctx *c, enum drnic_progress_mode mode)
{
	struct drnic_port_attr pa;
	struct drnic_device_attr da;
	unsigned int lc = rte_get_next_lcore(-1, 1, 0);
	unsigned int seq = sem_seq++;
	int side, rc;

	memset(c, 0, sizeof(*c));
	c->mode = mode;
	if (mode == DRNIC_PROGRESS_DEDICATED && lc >= RTE_MAX_LCORE) {
		printf("skipped: dedicated mode needs an EAL worker lcore for the engine\n");
		return TEST_SKIPPED;
	}
	for (side = 0; side < 2; side++) {
		struct drnic_config cfg;

		rc = drnic_config_init(&cfg);
		if (rc != 0) {
			printf("drnic_config_init: %d\n", rc);
			return TEST_FAILED;
		}
		snprintf(cfg.name, sizeof(cfg.name), "sem%c%u", side == SEM_SRV ? 's' : 'c', seq);
		cfg.progress = mode;
		cfg.nb_engines = 1;
		if (mode == DRNIC_PROGRESS_DEDICATED)
			cfg.engine_lcores[0] = lc;  /* both devices share this engine */
		snprintf(cfg.link_driver, sizeof(cfg.link_driver), "loopback");
		snprintf(cfg.link_args, sizeof(cfg.link_args), "wire=semw%u", seq);
		cfg.mac[0] = 0x02;
		cfg.mac[1] = 0x00;
		cfg.mac[2] = 0x5e;
		cfg.mac[3] = (uint8_t)(seq >> 8);
		cfg.mac[4] = (uint8_t)seq;
		cfg.mac[5] = (uint8_t)(side + 1);
		cfg.nb_ipv4 = 1;
		cfg.nb_ipv6 = 0;
		cfg.ipv4[0].s_addr = htonl((10u << 24) | (77u << 16) | ((seq & 0xFF) << 8) |
					   (unsigned int)(side + 1));
		c->dev[side] = drnic_device_open(&cfg);
		if (c->dev[side] == NULL) {
			printf("drnic_device_open(%s, %s): %s\n", cfg.name, sem_mode_str(mode),
			       rte_strerror(rte_errno));
			return TEST_FAILED;
		}
		c->pd[side] = drnic_alloc_pd(c->dev[side]);
		if (c->pd[side] == NULL) {
			printf("drnic_alloc_pd: %s\n", rte_strerror(rte_errno));
			return TEST_FAILED;
		}
	}
	rc = drnic_query_port(c->dev[SEM_SRV], 1, &pa);
	if (rc != 0) {
		printf("drnic_query_port: %d\n", rc);
		return TEST_FAILED;
	}
	c->active_mtu = (uint8_t)pa.active_mtu;
	rc = drnic_query_device(c->dev[SEM_SRV], &da);
	if (rc != 0) {
		printf("drnic_query_device: %d\n", rc);
		return TEST_FAILED;
	}
	c->max_rd_atomic = da.max_qp_rd_atom;
	return TEST_SUCCESS;
}

static void
sem_drain_async(struct sem_ctx *c)
{
	struct drnic_async_event ev;
	unsigned int i;
	int side;

	for (side = 0; side < 2; side++) {
		struct drnic_async_queue *q;

		if (c->dev[side] == NULL)
			continue;
		q = drnic_device_async_queue(c->dev[side]);
		for (i = 0; i < c->nb_ev[side]; i++)
			drnic_ack_async_event(q, &c->ev[side][i]);
		c->nb_ev[side] = 0;
		while (drnic_try_get_async_event(q, &ev) == 0)
			drnic_ack_async_event(q, &ev);
	}
}

void
sem_ack_async(struct sem_ctx *c, int side)
{
	struct drnic_async_queue *q = drnic_device_async_queue(c->dev[side]);
	unsigned int i;

	for (i = 0; i < c->nb_ev[side]; i++)
		drnic_ack_async_event(q, &c->ev[side][i]);
	c->nb_ev[side] = 0;
}

void
sem_ctx_close(struct sem_ctx *c)
{
	struct drnic_cq *evcq;
	void *ctx;
	unsigned int i;
	int rc, side;

	/* Let in-flight work settle so the engines stop touching objects. */
	for (i = 0; i < 100; i++)
		sem_progress(c);
	sem_drain_async(c);
	for (i = 0; i < c->nb_ch; i++)
		while (drnic_try_get_cq_event(c->ch[i], &evcq, &ctx) == 0)
			drnic_ack_cq_events(evcq, 1);
	for (i = c->nb_qp; i-- > 0;) {
		if (c->qp[i] == NULL)
			continue;
		rc = drnic_destroy_qp(c->qp[i]);
		if (rc == -EBUSY) {
			sem_drain_async(c);
			rc = drnic_destroy_qp(c->qp[i]);
		}
		if (rc != 0)
			printf("cleanup: drnic_destroy_qp: %d\n", rc);
	}
	c->nb_qp = 0;
	for (i = c->nb_mr; i-- > 0;) {
		if (c->mr[i] != NULL && (rc = drnic_dereg_mr(c->mr[i])) != 0)
			printf("cleanup: drnic_dereg_mr: %d\n", rc);
		drnic_free(c->buf[i]);
	}
	c->nb_mr = 0;
	sem_drain_async(c);
	for (i = 0; i < c->nb_ch; i++)
		while (drnic_try_get_cq_event(c->ch[i], &evcq, &ctx) == 0)
			drnic_ack_cq_events(evcq, 1);
	for (i = c->nb_cq; i-- > 0;)
		if (c->cq[i] != NULL && (rc = drnic_cq_destroy(c->cq[i])) != 0)
			printf("cleanup: drnic_cq_destroy: %d\n", rc);
	c->nb_cq = 0;
	for (i = c->nb_ch; i-- > 0;)
		if ((rc = drnic_destroy_comp_channel(c->ch[i])) != 0)
			printf("cleanup: drnic_destroy_comp_channel: %d\n", rc);
	c->nb_ch = 0;
	for (side = 1; side >= 0; side--) {
		if (c->pd[side] != NULL && (rc = drnic_dealloc_pd(c->pd[side])) != 0)
			printf("cleanup: drnic_dealloc_pd: %d\n", rc);
		c->pd[side] = NULL;
	}
	for (side = 1; side >= 0; side--) {
		if (c->dev[side] != NULL && (rc = drnic_device_close(c->dev[side])) != 0)
			printf("cleanup: drnic_device_close: %d\n", rc);
		c->dev[side] = NULL;
	}
}

int
sem_run(enum drnic_progress_mode mode, const char *what, int (*body)(struct sem_ctx *c))
{
	struct sem_ctx *c = calloc(1, sizeof(*c));
	uint64_t t0 = sem_now_us();
	int rc;

	if (c == NULL)
		return TEST_FAILED;
	printf("--- %s, %s progress\n", what, sem_mode_str(mode));
	rc = sem_ctx_open(c, mode);
	if (rc == TEST_SUCCESS)
		rc = body(c);
	sem_ctx_close(c);
	free(c);
	printf("--- %s, %s progress: %s in %.3f s\n", what, sem_mode_str(mode),
	       rc == TEST_SUCCESS ? "ok" : rc == TEST_SKIPPED ? "skipped" : "FAILED",
	       (double)(sem_now_us() - t0) / 1e6);
	return rc;
}

struct drnic_comp_channel *
sem_channel(struct sem_ctx *c)
{
	struct drnic_comp_channel *ch;

	if (c->nb_ch >= SEM_MAX_CH)
		return NULL;
	ch = drnic_create_comp_channel();
	if (ch == NULL) {
		printf("drnic_create_comp_channel: %s\n", rte_strerror(rte_errno));
		return NULL;
	}
	c->ch[c->nb_ch++] = ch;
	return ch;
}

struct drnic_cq *
sem_cq(struct sem_ctx *c, int side, uint32_t depth, struct drnic_comp_channel *ch,
       void *cq_context)
{
	struct drnic_cq_attr a = {
		.cqe = depth,
		.channel = ch,
		.comp_vector = 0,
		.socket_id = SOCKET_ID_ANY,
		.cq_context = cq_context,
		.async_queue = drnic_device_async_queue(c->dev[side]),
	};
	struct drnic_cq *cq;

	if (c->nb_cq >= SEM_MAX_CQ)
		return NULL;
	cq = drnic_cq_create(&a);
	if (cq == NULL) {
		printf("drnic_cq_create(depth %u): %s\n", depth, rte_strerror(rte_errno));
		return NULL;
	}
	c->cq[c->nb_cq++] = cq;
	return cq;
}

struct drnic_qp *
sem_qp(struct sem_ctx *c, int side, struct drnic_cq *scq, struct drnic_cq *rcq,
       uint32_t max_send_wr, uint32_t max_recv_wr, int sq_sig_all)
{
	struct drnic_qp_init_attr ia = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = {
			.max_send_wr = max_send_wr,
			.max_recv_wr = max_recv_wr,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = 64,
		},
		.qp_type = DRNIC_QPT_RC,
		.sq_sig_all = sq_sig_all,
	};
	struct drnic_qp *qp;

	if (c->nb_qp >= SEM_MAX_QP)
		return NULL;
	qp = drnic_create_qp(c->pd[side], &ia);
	if (qp == NULL) {
		printf("drnic_create_qp: %s\n", rte_strerror(rte_errno));
		return NULL;
	}
	c->qp[c->nb_qp++] = qp;
	return qp;
}

struct drnic_mr *
sem_mr(struct sem_ctx *c, int side, size_t len, unsigned int access, void **buf)
{
	return sem_mr_part(c, side, len, len, access, buf);
}

struct drnic_mr *
sem_mr_part(struct sem_ctx *c, int side, size_t alloc_len, size_t reg_len, unsigned int access,
	    void **buf)
{
	struct drnic_mr *mr;
	void *b;

	if (c->nb_mr >= SEM_MAX_MR)
		return NULL;
	b = drnic_alloc(alloc_len, 0, SOCKET_ID_ANY);
	if (b == NULL) {
		printf("drnic_alloc(%zu): %s\n", alloc_len, rte_strerror(rte_errno));
		return NULL;
	}
	mr = drnic_reg_mr(c->pd[side], b, reg_len, access);
	if (mr == NULL) {
		printf("drnic_reg_mr: %s\n", rte_strerror(rte_errno));
		drnic_free(b);
		return NULL;
	}
	c->mr[c->nb_mr] = mr;
	c->buf[c->nb_mr++] = b;
	*buf = b;
	return mr;
}

int
sem_destroy_qp(struct sem_ctx *c, struct drnic_qp *qp)
{
	unsigned int i;
	int rc = drnic_destroy_qp(qp);

	if (rc == 0)
		for (i = 0; i < c->nb_qp; i++)
			if (c->qp[i] == qp)
				c->qp[i] = NULL;
	return rc;
}

int
sem_destroy_cq(struct sem_ctx *c, struct drnic_cq *cq)
{
	unsigned int i;
	int rc = drnic_cq_destroy(cq);

	if (rc == 0)
		for (i = 0; i < c->nb_cq; i++)
			if (c->cq[i] == cq)
				c->cq[i] = NULL;
	return rc;
}

int
sem_qp_init(struct drnic_qp *qp, unsigned int access)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = access;
	rc = drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
				     DRNIC_QP_ACCESS_FLAGS);
	if (rc != 0)
		printf("modify_qp(%u, RESET->INIT): %d\n", drnic_qp_num(qp), rc);
	return rc;
}

int
sem_qp_rtr(struct sem_ctx *c, struct drnic_qp *qp, int peer_side, uint32_t peer_qpn,
	   uint32_t rq_psn)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	rc = drnic_query_gid(c->dev[peer_side], 1, 0, &a.ah_attr.grh.dgid);
	if (rc != 0) {
		printf("drnic_query_gid: %d\n", rc);
		return rc;
	}
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	a.path_mtu = (enum drnic_mtu)c->active_mtu;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = (uint8_t)c->max_rd_atomic;
	a.min_rnr_timer = 1;  /* 0.01 ms */
	rc = drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU |
				     DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN |
				     DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER);
	if (rc != 0)
		printf("modify_qp(%u, INIT->RTR): %d\n", drnic_qp_num(qp), rc);
	return rc;
}

int
sem_qp_rts(struct sem_ctx *c, struct drnic_qp *qp, uint32_t sq_psn, int max_rd_atomic)
{
	struct drnic_qp_attr a;
	int rc;

	RTE_SET_USED(c);
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 14;      /* 67 ms */
	a.retry_cnt = 7;
	a.rnr_retry = 7;     /* infinite */
	a.max_rd_atomic = (uint8_t)max_rd_atomic;
	rc = drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT |
				     DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY |
				     DRNIC_QP_MAX_QP_RD_ATOMIC);
	if (rc != 0)
		printf("modify_qp(%u, RTR->RTS): %d\n", drnic_qp_num(qp), rc);
	return rc;
}

int
sem_connect(struct sem_ctx *c, struct drnic_qp *qs, struct drnic_qp *qc, uint32_t psn_s,
	    uint32_t psn_c)
{
	const unsigned int acc = DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
				 DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC;
	int rc;

	if ((rc = sem_qp_init(qs, acc)) != 0 || (rc = sem_qp_init(qc, acc)) != 0)
		return rc;
	if ((rc = sem_qp_rtr(c, qs, SEM_CLI, drnic_qp_num(qc), psn_c)) != 0 ||
	    (rc = sem_qp_rtr(c, qc, SEM_SRV, drnic_qp_num(qs), psn_s)) != 0)
		return rc;
	if ((rc = sem_qp_rts(c, qs, psn_s, c->max_rd_atomic)) != 0 ||
	    (rc = sem_qp_rts(c, qc, psn_c, c->max_rd_atomic)) != 0)
		return rc;
	return 0;
}

int
sem_post_recv(struct drnic_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct drnic_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct drnic_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct drnic_recv_wr *bad = NULL;
	int rc = drnic_post_recv(qp, &wr, &bad);

	if (rc != 0)
		printf("drnic_post_recv(qp %u, wr_id %llu): %d\n", drnic_qp_num(qp),
		       (unsigned long long)wr_id, rc);
	return rc;
}

int
sem_post_send(struct drnic_qp *qp, uint64_t wr_id, enum drnic_wr_opcode op, void *addr,
	      uint32_t len, uint32_t lkey, unsigned int flags, uint64_t raddr, uint32_t rkey)
{
	struct drnic_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct drnic_send_wr wr;
	struct drnic_send_wr *bad = NULL;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	rc = drnic_post_send(qp, &wr, &bad);
	if (rc != 0)
		printf("drnic_post_send(qp %u, wr_id %llu): %d\n", drnic_qp_num(qp),
		       (unsigned long long)wr_id, rc);
	return rc;
}

void
sem_progress(struct sem_ctx *c)
{
	if (c->dev[SEM_SRV] != NULL)
		drnic_device_progress(c->dev[SEM_SRV]);
	else if (c->dev[SEM_CLI] != NULL)
		drnic_device_progress(c->dev[SEM_CLI]);
}

int
sem_poll_n(struct sem_ctx *c, struct drnic_cq *cq, struct drnic_wc *wc, int n,
	   unsigned int timeout_ms)
{
	uint64_t end = sem_now_us() + (uint64_t)timeout_ms * 1000u;
	int got = 0, r;

	/* In inline mode drnic_cq_poll() itself runs the engines (documented
	 * contract): no extra progress call here, so a poll that does not
	 * drive the engines shows up as a timeout. */
	while (got < n) {
		r = drnic_cq_poll(cq, n - got, wc + got);
		if (r < 0) {
			printf("drnic_cq_poll: %d (%s) after %d completions\n", r, strerror(-r),
			       got);
			return r;
		}
		got += r;
		if (got >= n || sem_now_us() > end)
			break;
		if (r == 0 && c->mode == DRNIC_PROGRESS_DEDICATED)
			rte_pause();
	}
	return got;
}

int
sem_poll_quiet(struct sem_ctx *c, struct drnic_cq *cq, struct drnic_wc *wc, int max,
	       unsigned int ms)
{
	uint64_t end = sem_now_us() + (uint64_t)ms * 1000u;
	int got = 0, r;

	do {
		r = drnic_cq_poll(cq, max - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got >= max)
			break;
		sem_progress(c);
	} while (sem_now_us() < end);
	return got;
}

int
sem_wait_qp_state(struct sem_ctx *c, struct drnic_qp *qp, enum drnic_qp_state st,
		  unsigned int timeout_ms)
{
	uint64_t end = sem_now_us() + (uint64_t)timeout_ms * 1000u;

	for (;;) {
		if (drnic_qp_state(qp) == st)
			return 0;
		if (sem_now_us() > end)
			return -ETIMEDOUT;
		sem_progress(c);
	}
}

int
sem_wait_async(struct sem_ctx *c, int side, enum drnic_event_type type, unsigned int timeout_ms)
{
	struct drnic_async_queue *q = drnic_device_async_queue(c->dev[side]);
	uint64_t end = sem_now_us() + (uint64_t)timeout_ms * 1000u;
	struct drnic_async_event ev;
	unsigned int i;

	for (i = 0; i < c->nb_ev[side]; i++)
		if (c->ev[side][i].event_type == type)
			return (int)i;
	for (;;) {
		int rc = drnic_try_get_async_event(q, &ev);

		if (rc == 0) {
			printf("async event on %s: %s (%d) qp_num %u\n",
			       drnic_device_name(c->dev[side]), drnic_event_type_str(ev.event_type),
			       (int)ev.event_type, ev.qp_num);
			if (c->nb_ev[side] >= SEM_MAX_EV) {
				drnic_ack_async_event(q, &ev);
				continue;
			}
			c->ev[side][c->nb_ev[side]++] = ev;
			if (ev.event_type == type)
				return (int)c->nb_ev[side] - 1;
			continue;
		}
		if (rc != -EAGAIN) {
			printf("drnic_try_get_async_event: %d\n", rc);
			return -1;
		}
		if (sem_now_us() > end)
			return -1;
		sem_progress(c);
	}
}

static inline uint8_t
sem_pat(size_t i, uint32_t seed)
{
	uint32_t x = (uint32_t)i ^ (seed * 0x9E3779B1u);

	x *= 0x85EBCA6Bu;
	x ^= x >> 13;
	x *= 0xC2B2AE35u;
	x ^= x >> 16;
	return (uint8_t)x;
}

void
sem_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = sem_pat(i, seed);
}

long
sem_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != sem_pat(i, seed))
			return (long)i;
	return -1;
}

long
sem_check_byte(const void *buf, size_t len, uint8_t v)
{
	const uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != v)
			return (long)i;
	return -1;
}

void
sem_print_wc(const char *tag, const struct drnic_wc *wc)
{
	printf("  %s: wr_id %llu status %s (%d) opcode %d byte_len %u qp_num %u src_qp %u "
	       "wc_flags 0x%x imm 0x%x vendor_err %u\n", tag, (unsigned long long)wc->wr_id,
	       drnic_wc_status_str(wc->status), (int)wc->status, (int)wc->opcode, wc->byte_len,
	       wc->qp_num, wc->src_qp, wc->wc_flags, wc->imm_data, wc->vendor_err);
}
