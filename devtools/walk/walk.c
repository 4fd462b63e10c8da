/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The walk of one RDMA WRITE with immediate, from drnic_post_send() to both
 * CQEs (the requester's and the responder's): which of drnic's functions it
 * runs. Built by walk.sh against a tree compiled with -finstrument-functions
 * at -O0, so every function, inline or static, is seen. Two devices on the
 * loopback link, inline progress, one warm-up WRITE first; then the traced
 * one. Prints the address of each function entered, once, in first-call
 * order (walk.sh names them with addr2line).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drnic_cq.h"
#include "drnic_env.h"
#include "drnic_verbs.h"

#define WALK_MAX 4096

static void *walk_fn[WALK_MAX];
static unsigned int walk_n;
static bool walk_on;

void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));

void
__cyg_profile_func_enter(void *fn, void *site)
{
	unsigned int i;

	(void)site;
	if (!walk_on)
		return;
	for (i = 0; i < walk_n; i++)
		if (walk_fn[i] == fn)
			return;
	if (walk_n < WALK_MAX)
		walk_fn[walk_n++] = fn;
}

void
__cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
}

struct side {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_cq *cq;
	struct drnic_qp *qp;
	struct drnic_mr *mr;
	uint8_t *buf;
};

static void
die(const char *what)
{
	fprintf(stderr, "walk: %s failed\n", what);
	exit(1);
}

static void
side_open(struct side *s, const char *name, unsigned int last)
{
	struct drnic_config cfg;
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	char v[64];

	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "%s", name);
	if (drnic_config_set(&cfg, "progress", "inline") < 0 ||
	    drnic_config_set(&cfg, "link_args", "wire=walk0") < 0)
		die("config");
	snprintf(v, sizeof(v), "02:00:00:00:00:%02x", last);
	drnic_config_set(&cfg, "mac", v);
	snprintf(v, sizeof(v), "10.0.0.%u", last);
	drnic_config_set(&cfg, "ipv4", v);
	s->dev = drnic_device_open(&cfg);
	if (s->dev == NULL)
		die("device open");
	s->pd = drnic_alloc_pd(s->dev);
	ca.cqe = 64;
	ca.socket_id = -1;
	s->cq = drnic_cq_create(&ca);
	if (s->pd == NULL || s->cq == NULL)
		die("pd/cq");
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	s->qp = drnic_create_qp(s->pd, &qa);
	s->buf = drnic_alloc(4096, 4096, -1);
	if (s->qp == NULL || s->buf == NULL)
		die("qp/buf");
	s->mr = drnic_reg_mr(s->pd, s->buf, 4096, DRNIC_ACCESS_LOCAL_WRITE |
			     DRNIC_ACCESS_REMOTE_WRITE);
	if (s->mr == NULL)
		die("reg_mr");
}

static void
side_connect(struct side *x, struct side *y)
{
	struct drnic_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DRNIC_ACCESS_REMOTE_WRITE;
	if (drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			    DRNIC_QP_ACCESS_FLAGS) < 0)
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = DRNIC_MTU_1024;
	a.dest_qp_num = drnic_qp_num(y->qp);
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	drnic_query_gid(y->dev, 1, 0, &a.ah_attr.grh.dgid);
	if (drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU |
			    DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN | DRNIC_QP_MAX_DEST_RD_ATOMIC |
			    DRNIC_QP_MIN_RNR_TIMER) < 0)
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	if (drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT |
			    DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | DRNIC_QP_MAX_QP_RD_ATOMIC) < 0)
		die("RTS");
}

/* Post one WRITE with immediate A -> B (and B's receive), run both engines
 * until both CQEs are polled. */
static void
write_imm(struct side *a, struct side *b, uint64_t id)
{
	struct drnic_sge sa = { (uintptr_t)a->buf, 64, drnic_mr_lkey(a->mr) };
	struct drnic_sge sb = { (uintptr_t)b->buf + 2048, 64, drnic_mr_lkey(b->mr) };
	struct drnic_recv_wr rw = { .wr_id = id, .sg_list = &sb, .num_sge = 1 }, *rbad;
	struct drnic_send_wr wr = { 0 }, *bad;
	struct drnic_wc wc;
	int got = 0, i;

	if (drnic_post_recv(b->qp, &rw, &rbad) < 0)
		die("post_recv");
	wr.wr_id = id;
	wr.sg_list = &sa;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.imm_data = 7;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
	wr.wr.rdma.rkey = drnic_mr_rkey(b->mr);
	walk_on = id > 1;
	if (drnic_post_send(a->qp, &wr, &bad) < 0)
		die("post_send");
	for (i = 0; i < 1000000 && got < 2; i++) {
		drnic_device_progress(a->dev);
		drnic_device_progress(b->dev);
		got += drnic_cq_poll(a->cq, 1, &wc) > 0;
		got += drnic_cq_poll(b->cq, 1, &wc) > 0;
	}
	walk_on = false;
	if (got < 2)
		die("the WRITE's completions");
}

int
main(void)
{
	struct drnic_env_opts eo = { .name = "drnic-walk" };
	struct side a, b;
	unsigned int i;

	if (drnic_env_init(&eo, NULL) < 0)
		die("EAL");
	side_open(&a, "walka", 1);
	side_open(&b, "walkb", 2);
	side_connect(&a, &b);
	side_connect(&b, &a);
	write_imm(&a, &b, 1);   /* warm-up: first-time paths do not count */
	write_imm(&a, &b, 2);
	for (i = 0; i < walk_n; i++)
		printf("%p\n", walk_fn[i]);
	return 0;
}
