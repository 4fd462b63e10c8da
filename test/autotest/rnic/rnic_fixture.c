/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>

#include "rnic_fixture.h"

static unsigned int rnic_seq;

uint64_t
rnic_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
rnic_shell(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	int st;

	out[0] = '\0';
	if (f == NULL)
		return -1;
	while (n + 1 < len && fgets(out + n, (int)(len - n), f) != NULL)
		n = strlen(out);
	while (fgetc(f) != EOF)
		;
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void
rnic_fill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

static int
rnic_side_open(struct rnic_side *s, const char *name, const char *wire, uint8_t last,
	       const struct rnic_pair_opts *o)
{
	const char *extra = o->link_extra[last - 1];
	struct drnic_config cfg;
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	char v[64], args[256];

	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "%s", name);
	if (drnic_config_set(&cfg, "progress",
			     o->mode == DRNIC_PROGRESS_INLINE ? "inline" : "dedicated") < 0)
		return -EINVAL;
	if (o->engines > 1) {
		snprintf(v, sizeof(v), "%u", o->engines);
		drnic_config_set(&cfg, "engines", v);
	}
	if (o->lcores != NULL && drnic_config_set(&cfg, "lcores", o->lcores) < 0)
		return -EINVAL;
	snprintf(args, sizeof(args), "wire=%s%s%s", wire, extra != NULL && *extra ? "," : "",
		 extra != NULL ? extra : "");
	if (drnic_config_set(&cfg, "link_args", args) < 0)
		return -EINVAL;
	snprintf(v, sizeof(v), "02:00:00:00:00:%02x", last);
	drnic_config_set(&cfg, "mac", v);
	if (o->mr_pin != NULL && drnic_config_set(&cfg, "mr_pin", o->mr_pin) < 0)
		return -EINVAL;
	snprintf(v, sizeof(v), "10.0.0.%u", last);
	drnic_config_set(&cfg, "ipv4", v);
	if (o->ipv6[last - 1] != NULL && drnic_config_set(&cfg, "ipv6", o->ipv6[last - 1]) < 0)
		return -EINVAL;
	s->dev = drnic_device_open(&cfg);
	if (s->dev == NULL)
		return -rte_errno;
	s->pd = drnic_alloc_pd(s->dev);
	ca.cqe = o->cq_depth ? o->cq_depth : 4096;
	ca.socket_id = -1;
	ca.async_queue = drnic_device_async_queue(s->dev);
	ca.flags = o->cq_flags;
	if (o->channel) {
		s->ch = drnic_create_comp_channel();
		if (s->ch == NULL)
			return -ENOMEM;
		ca.channel = s->ch;
	}
	s->cq = drnic_cq_create(&ca);
	if (s->pd == NULL || s->cq == NULL)
		return -ENOMEM;
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = o->qp_type != 0 ? o->qp_type : DRNIC_QPT_RC;
	qa.sq_sig_all = o->sq_sig_all;
	qa.cap.max_send_wr = o->max_wr ? o->max_wr : 256;
	qa.cap.max_recv_wr = o->max_wr ? o->max_wr : 256;
	qa.cap.max_send_sge = o->max_sge ? o->max_sge : 8;
	qa.cap.max_recv_sge = o->max_sge ? o->max_sge : 8;
	qa.cap.max_inline_data = o->max_inline ? o->max_inline : 256;
	s->qp = drnic_create_qp(s->pd, &qa);
	if (s->qp == NULL)
		return -rte_errno;
	s->buf = drnic_alloc(RNIC_BUF_SIZE, 4096, -1);
	if (s->buf == NULL)
		return -ENOMEM;
	s->mr = drnic_reg_mr(s->pd, s->buf, RNIC_BUF_SIZE,
			     o->mr_access ? o->mr_access :
			     DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
			     DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC);
	return s->mr == NULL ? -ENOMEM : 0;
}

int
rnic_ud_ready(struct drnic_qp *qp, uint32_t qkey)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	rc = drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_QKEY);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTR;
	rc = drnic_modify_qp(qp, &a, DRNIC_QP_STATE);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = 0x1000 + drnic_qp_num(qp);
	return drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN);
}

int
rnic_qp_connect(struct rnic_side *x, struct rnic_side *y, const struct rnic_pair_opts *o)
{
	struct drnic_qp_attr a;
	uint8_t rd = o->zero_rd_atomic ? 0 : (o->max_rd_atomic ? o->max_rd_atomic : 16);
	bool uc = o->qp_type == DRNIC_QPT_UC;
	int rc;

	if (o->qp_type == DRNIC_QPT_UD) {
		RTE_SET_USED(y);
		return rnic_ud_ready(x->qp, RNIC_UD_QKEY);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = o->qp_access ? o->qp_access :
			    DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
			    DRNIC_ACCESS_REMOTE_ATOMIC;
	rc = drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_ACCESS_FLAGS);
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = DRNIC_MTU_1024;
	a.dest_qp_num = drnic_qp_num(y->qp);
	a.rq_psn = 0x123456 ^ drnic_qp_num(y->qp);
	a.max_dest_rd_atomic = o->max_dest_rd_atomic ? o->max_dest_rd_atomic : 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	drnic_query_gid(y->dev, 1, 0, &a.ah_attr.grh.dgid);
	rc = drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU |
			     DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN |
			     (uc ? 0 : DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER));
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = 0x123456 ^ drnic_qp_num(x->qp);
	a.timeout = o->timeout ? o->timeout : 14;
	a.retry_cnt = o->retry_cnt ? o->retry_cnt : 7;
	a.rnr_retry = o->rnr_retry == 0 ? 7 : (o->rnr_retry < 0 ? 0 : (uint8_t)o->rnr_retry);
	a.max_rd_atomic = rd;
	if (uc)   /* UC: no timeout, retries or READ/atomics */
		return drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN);
	return drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT |
			       DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | DRNIC_QP_MAX_QP_RD_ATOMIC);
}

int
rnic_pair_open(struct rnic_pair *p, const struct rnic_pair_opts *o)
{
	char *wire = p->wire, na[32], nb[32];
	unsigned int seq = rnic_seq++;
	int rc;

	memset(p, 0, sizeof(*p));
	p->mode = o->mode;
	snprintf(p->wire, sizeof(p->wire), "rnicw%u", seq);
	snprintf(na, sizeof(na), "rnic%ua", seq);
	snprintf(nb, sizeof(nb), "rnic%ub", seq);
	rc = rnic_side_open(&p->a, na, wire, 1, o);
	if (rc == 0)
		rc = rnic_side_open(&p->b, nb, wire, 2, o);
	if (rc == 0 && !o->qp_reset)
		rc = rnic_qp_connect(&p->a, &p->b, o);
	if (rc == 0 && !o->qp_reset)
		rc = rnic_qp_connect(&p->b, &p->a, o);
	if (rc < 0) {
		printf("rnic_pair_open: %s\n", strerror(-rc));
		rnic_pair_close(p);
	}
	return rc;
}

static void
rnic_side_close(struct rnic_side *s)
{
	struct drnic_async_event ev;
	int rc;

	if (s->qp != NULL) {
		/* Acknowledge events about the QP, then destroy it. */
		while (s->dev != NULL &&
		       drnic_try_get_async_event(drnic_device_async_queue(s->dev), &ev) == 0)
			drnic_ack_async_event(drnic_device_async_queue(s->dev), &ev);
		rc = drnic_destroy_qp(s->qp);
		if (rc < 0)
			printf("destroy_qp: %s\n", strerror(-rc));
	}
	if (s->mr != NULL)
		drnic_dereg_mr(s->mr);
	drnic_free(s->buf);
	if (s->cq != NULL)
		drnic_cq_destroy(s->cq);
	if (s->ch != NULL)
		drnic_destroy_comp_channel(s->ch);
	if (s->pd != NULL)
		drnic_dealloc_pd(s->pd);
	if (s->dev != NULL) {
		rc = drnic_device_close(s->dev);
		if (rc < 0)
			printf("device_close: %s\n", strerror(-rc));
	}
	memset(s, 0, sizeof(*s));
}

void
rnic_pair_close(struct rnic_pair *p)
{
	rnic_side_close(&p->a);
	rnic_side_close(&p->b);
}

int
rnic_poll(struct rnic_side *s, struct drnic_wc *wc, int n)
{
	uint64_t deadline = rnic_now_ms() + 5000;
	int got = 0, rc;

	while (got < n) {
		rc = drnic_cq_poll(s->cq, n - got, wc + got);
		if (rc < 0)
			return rc;
		got += rc;
		if (rc == 0) {
			drnic_device_progress(s->dev);
			if (rnic_now_ms() > deadline)
				break;
		}
	}
	return got;
}

int
rnic_poll_none(struct rnic_side *s, unsigned int ms)
{
	uint64_t deadline = rnic_now_ms() + ms;
	struct drnic_wc wc;
	int rc;

	while (rnic_now_ms() < deadline) {
		rc = drnic_cq_poll(s->cq, 1, &wc);
		if (rc != 0)
			return rc;
		drnic_device_progress(s->dev);
	}
	return 0;
}
