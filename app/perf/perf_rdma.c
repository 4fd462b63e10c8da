/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "perf_rdma.h"

/* Each side's buffer: a receive area, then a send area, each this big. */
#define PERF_AREA_MAX (8u << 20)

struct perf_side {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_cq *cq;
	struct drnic_qp *qp;
	uint8_t *buf;        /* [0, area): written by the peer; [area, 2 area): sent from */
	struct drnic_mr *mr;
	uint64_t area;
	unsigned int outstanding;   /* signaled WRs not yet completed */
};

struct perf_pair {
	struct perf_side a;
	struct perf_side b;
	const struct perf_opts *o;
};

static enum drnic_mtu
perf_mtu_enum(unsigned int mtu)
{
	switch (mtu) {
	case 256: return DRNIC_MTU_256;
	case 512: return DRNIC_MTU_512;
	case 2048: return DRNIC_MTU_2048;
	case 4096: return DRNIC_MTU_4096;
	default: return DRNIC_MTU_1024;
	}
}

static int
perf_side_open(struct perf_side *s, const char *name, uint8_t last, const struct perf_opts *o)
{
	struct drnic_config cfg;
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	char v[64];

	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "%s", name);
	drnic_config_set(&cfg, "progress", o->inline_progress ? "inline" : "dedicated");
	drnic_config_set(&cfg, "link_args", "wire=perf");
	snprintf(v, sizeof(v), "02:00:00:00:00:%02x", last);
	drnic_config_set(&cfg, "mac", v);
	snprintf(v, sizeof(v), "10.0.0.%u", last);
	drnic_config_set(&cfg, "ipv4", v);
	if (o->mtu > 1024)
		drnic_config_set(&cfg, "mtu", "9000");
	s->dev = drnic_device_open(&cfg);
	if (s->dev == NULL)
		return -rte_errno;
	s->pd = drnic_alloc_pd(s->dev);
	ca.cqe = 4096;
	ca.socket_id = SOCKET_ID_ANY;
	ca.async_queue = drnic_device_async_queue(s->dev);
	s->cq = drnic_cq_create(&ca);
	if (s->pd == NULL || s->cq == NULL)
		return -ENOMEM;
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.cap.max_send_wr = o->tx_depth > 128 ? o->tx_depth : 128;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = o->inline_size;
	s->qp = drnic_create_qp(s->pd, &qa);
	if (s->qp == NULL)
		return -rte_errno;
	s->area = RTE_ALIGN_CEIL(o->size ? o->size : 1, 4096);
	if (s->area > PERF_AREA_MAX)
		return -E2BIG;
	s->buf = drnic_alloc(2 * s->area, 4096, SOCKET_ID_ANY);
	if (s->buf == NULL)
		return -ENOMEM;
	/* Receive area zero, send area a pattern: arrival is visible. */
	{
		uint32_t x = last * 2654435761u;
		uint64_t i;

		memset(s->buf, 0, s->area);
		for (i = 0; i < s->area; i++) {
			x = x * 1103515245u + 12345u;
			s->buf[s->area + i] = (uint8_t)(x >> 16);
		}
	}
	s->mr = drnic_reg_mr(s->pd, s->buf, 2 * s->area,
			     DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
			     DRNIC_ACCESS_REMOTE_READ);
	return s->mr == NULL ? -rte_errno : 0;
}

static void
perf_side_close(struct perf_side *s)
{
	if (s->qp != NULL)
		drnic_destroy_qp(s->qp);
	if (s->mr != NULL)
		drnic_dereg_mr(s->mr);
	drnic_free(s->buf);
	if (s->cq != NULL)
		drnic_cq_destroy(s->cq);
	if (s->pd != NULL)
		drnic_dealloc_pd(s->pd);
	if (s->dev != NULL)
		drnic_device_close(s->dev);
	memset(s, 0, sizeof(*s));
}

static int
perf_qp_connect(struct perf_side *x, struct perf_side *y, const struct perf_opts *o)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ;
	rc = drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_ACCESS_FLAGS);
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = perf_mtu_enum(o->mtu);
	a.dest_qp_num = drnic_qp_num(y->qp);
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	drnic_query_gid(y->dev, 1, 0, &a.ah_attr.grh.dgid);
	rc = drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU |
			     DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN | DRNIC_QP_MAX_DEST_RD_ATOMIC |
			     DRNIC_QP_MIN_RNR_TIMER);
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	return drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT |
			       DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | DRNIC_QP_MAX_QP_RD_ATOMIC);
}

static void
perf_pair_close(struct perf_pair *p)
{
	perf_side_close(&p->a);
	perf_side_close(&p->b);
}

static int
perf_pair_open(struct perf_pair *p, const struct perf_opts *o)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->o = o;
	rc = perf_side_open(&p->a, "perf_a", 1, o);
	if (rc == 0)
		rc = perf_side_open(&p->b, "perf_b", 2, o);
	if (rc == 0)
		rc = perf_qp_connect(&p->a, &p->b, o);
	if (rc == 0)
		rc = perf_qp_connect(&p->b, &p->a, o);
	if (rc != 0) {
		fprintf(stderr, "drnic-perf: loopback pair set-up failed: %s\n", strerror(-rc));
		perf_pair_close(p);
	}
	return rc;
}

/*
 * Reap completions of @s; block (driving inline engines) until at most @keep
 * signaled WRs remain outstanding. Returns 0, or -EIO on an error completion.
 */
static int
perf_reap(struct perf_side *s, unsigned int keep)
{
	struct drnic_wc wc[32];
	int n, i;

	do {
		n = drnic_cq_poll(s->cq, 32, wc);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			if (wc[i].status != DRNIC_WC_SUCCESS) {
				fprintf(stderr, "drnic-perf: completion error %s (wr_id %" PRIu64 ")\n",
					drnic_wc_status_str(wc[i].status), wc[i].wr_id);
				return -EIO;
			}
		}
		s->outstanding -= (unsigned int)n;
		if (n == 0 && s->outstanding > keep)
			drnic_device_progress(s->dev);
	} while (s->outstanding > keep);
	return 0;
}

/* One RDMA WRITE of @len bytes from x's send area into y's receive area. */
static int
perf_post_write(struct perf_side *x, struct perf_side *y, uint64_t len, bool signaled,
		unsigned int inline_size, uint64_t wr_id)
{
	struct drnic_sge sge = {
		.addr = (uintptr_t)(x->buf + x->area),
		.length = (uint32_t)len,
		.lkey = drnic_mr_lkey(x->mr),
	};
	struct drnic_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = DRNIC_WR_RDMA_WRITE,
		.send_flags = (signaled ? DRNIC_SEND_SIGNALED : 0) |
			      (len <= inline_size ? DRNIC_SEND_INLINE : 0),
	};
	struct drnic_send_wr *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)y->buf;
	wr.wr.rdma.rkey = drnic_mr_rkey(y->mr);
	if (signaled)
		x->outstanding++;
	return drnic_post_send(x->qp, &wr, &bad);
}

/* Spin until the last byte of @s's receive area is @tag. */
static int
perf_wait_byte(struct perf_side *s, uint64_t len, uint8_t tag)
{
	volatile uint8_t *last = s->buf + len - 1;
	uint64_t spins = 0;

	while (*last != tag) {
		if ((++spins & 0xFFFFF) == 0 && rte_get_tsc_hz() == 0)
			return -EIO;
		drnic_device_progress(s->dev);
		rte_pause();
	}
	return 0;
}

int
perf_write_lat(const struct perf_opts *o, struct perf_lat *out)
{
	const uint64_t warmup = 1000, len = o->size ? o->size : 1;
	struct perf_pair p;
	uint64_t *samples, i;
	int rc;

	samples = rte_malloc(NULL, o->iters * sizeof(*samples), 0);
	if (samples == NULL)
		return -ENOMEM;
	rc = perf_pair_open(&p, o);
	if (rc != 0) {
		rte_free(samples);
		return rc;
	}
	for (i = 0; i < o->iters + warmup && rc == 0; i++) {
		uint8_t tag = (uint8_t)(i % 255 + 1);
		uint64_t t0 = rte_rdtsc_precise();

		/* perftest's pattern: ping A -> B, B answers when it sees the last byte. */
		p.a.buf[p.a.area + len - 1] = tag;
		rc = perf_post_write(&p.a, &p.b, len, true, o->inline_size, i);
		if (rc == 0)
			rc = perf_wait_byte(&p.b, len, tag);
		p.b.buf[p.b.area + len - 1] = tag;
		if (rc == 0)
			rc = perf_post_write(&p.b, &p.a, len, true, o->inline_size, i);
		if (rc == 0)
			rc = perf_wait_byte(&p.a, len, tag);
		if (i >= warmup)
			samples[i - warmup] = rte_rdtsc_precise() - t0;
		/* Completions are reaped outside the timed window. */
		if (rc == 0)
			rc = perf_reap(&p.a, 64);
		if (rc == 0)
			rc = perf_reap(&p.b, 64);
	}
	if (rc == 0)
		rc = perf_reap(&p.a, 0);
	if (rc == 0)
		rc = perf_reap(&p.b, 0);
	if (rc == 0)
		rc = perf_lat_compute(samples, o->iters, 2.0, rte_get_tsc_hz(), out);
	perf_pair_close(&p);
	rte_free(samples);
	return rc;
}

/*
 * Reap completions of a stream: each signaled CQE retires every WR up to its
 * wr_id (a QP completes in order). Returns the WRs retired so far in @done.
 */
static int
perf_reap_stream(struct perf_side *s, uint64_t *done)
{
	struct drnic_wc wc[32];
	int n, i;

	n = drnic_cq_poll(s->cq, 32, wc);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (wc[i].status != DRNIC_WC_SUCCESS) {
			fprintf(stderr, "drnic-perf: completion error %s (wr_id %" PRIu64 ")\n",
				drnic_wc_status_str(wc[i].status), wc[i].wr_id);
			return -EIO;
		}
		*done = wc[i].wr_id + 1;
	}
	if (n == 0)
		drnic_device_progress(s->dev);
	return 0;
}

int
perf_write_bw(const struct perf_opts *o, struct perf_bw *out)
{
	const uint64_t len = o->size ? o->size : 1;
	const unsigned int mod = o->cq_mod ? o->cq_mod : 1;
	const unsigned int depth = o->tx_depth ? o->tx_depth : 128;
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t posted = 0, done = 0, t0, window_t0, window_done = 0;
	double peak = 0.0;
	struct perf_pair p;
	int rc;

	rc = perf_pair_open(&p, o);
	if (rc != 0)
		return rc;
	t0 = window_t0 = rte_rdtsc();
	while (done < o->iters && rc == 0) {
		/* Keep the send queue full: at most @depth WRs in flight. */
		while (posted < o->iters && posted - done < depth && rc == 0) {
			bool signaled = (posted + 1) % mod == 0 || posted + 1 == o->iters;

			rc = perf_post_write(&p.a, &p.b, len, signaled, o->inline_size, posted);
			posted++;
		}
		if (rc == 0)
			rc = perf_reap_stream(&p.a, &done);
		if (done - window_done >= 1024) {
			uint64_t now = rte_rdtsc();
			double mbps = (double)((done - window_done) * len) /
				      ((double)(now - window_t0) / (double)hz) / 1048576.0;

			if (mbps > peak)
				peak = mbps;
			window_t0 = now;
			window_done = done;
		}
	}
	if (rc == 0) {
		out->seconds = (double)(rte_rdtsc() - t0) / (double)hz;
		out->avg_mbps = (double)(len * o->iters) / out->seconds / 1048576.0;
		out->peak_mbps = peak > out->avg_mbps ? peak : out->avg_mbps;
		out->mpps = (double)o->iters / out->seconds / 1e6;
		/* The data must really have landed: check the last message's bytes. */
		if (memcmp(p.b.buf, p.a.buf + p.a.area, len) != 0) {
			fprintf(stderr, "drnic-perf: write_bw: destination bytes differ\n");
			rc = -EIO;
		}
	}
	p.a.outstanding = 0;
	perf_pair_close(&p);
	return rc;
}

int
perf_qp_scale(const struct perf_opts *o, double *create_s, double *bytes_per_qp)
{
	struct rte_malloc_socket_stats before, after;
	struct drnic_config cfg;
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_cq *cq;
	struct drnic_qp **qps;
	uint64_t t0;
	unsigned int i, made = 0;
	int rc = 0, socket = (int)rte_socket_id();
	char v[32];

	qps = calloc(o->nb_qps, sizeof(*qps));
	if (qps == NULL)
		return -ENOMEM;
	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "perf_scale");
	drnic_config_set(&cfg, "progress", "inline");
	drnic_config_set(&cfg, "link_args", "wire=perf_scale");
	snprintf(v, sizeof(v), "%u", o->nb_qps + 16);
	drnic_config_set(&cfg, "max_qp", v);
	dev = drnic_device_open(&cfg);
	if (dev == NULL) {
		free(qps);
		return -rte_errno;
	}
	pd = drnic_alloc_pd(dev);
	ca.cqe = 1024;
	ca.socket_id = SOCKET_ID_ANY;
	ca.async_queue = drnic_device_async_queue(dev);
	cq = drnic_cq_create(&ca);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.cap.max_send_wr = o->tx_depth ? o->tx_depth : 64;
	qa.cap.max_recv_wr = o->tx_depth ? o->tx_depth : 64;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	rte_malloc_get_socket_stats(socket, &before);
	t0 = rte_rdtsc();
	for (i = 0; i < o->nb_qps; i++) {
		qps[i] = drnic_create_qp(pd, &qa);
		if (qps[i] == NULL) {
			rc = -rte_errno;
			break;
		}
		made++;
	}
	*create_s = (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz();
	rte_malloc_get_socket_stats(socket, &after);
	*bytes_per_qp = made ? (double)(after.heap_allocsz_bytes - before.heap_allocsz_bytes) / made
			     : 0.0;
	for (i = 0; i < made; i++)
		drnic_destroy_qp(qps[i]);
	drnic_cq_destroy(cq);
	drnic_dealloc_pd(pd);
	drnic_device_close(dev);
	free(qps);
	if (rc != 0)
		fprintf(stderr, "drnic-perf: qp_scale: QP %u of %u failed: %s\n", made + 1,
			o->nb_qps, strerror(-rc));
	return rc;
}
