/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA benchmarks: WRITE, SEND, READ and atomic, latency and bandwidth,
 * over a loopback pair in one process or between a client and a server.
 *
 * Each end ("ep") owns one buffer, registered once:
 *   [0, area)            receive area: peer's WRITEs and SENDs land here,
 *                        our READs land here;
 *   [area, 2 area)       send area: a pattern seeded by the end's id, the
 *                        source of our WRITEs/SENDs and of the peer's READs;
 *   [2 area, +8)         the atomic target (a counter starting at 0);
 *   [2 area + 64, +8)    where our atomics return the old value.
 * The data must really land: every test checks the bytes at the end.
 * UD: the receive area starts with the 40-byte GRH room (rx_off), the
 * datagram's payload follows it.
 *
 * Transports (-c): RC; UC (SEND and WRITE, no ACKs: a message that finds no
 * receive WQE or loses a packet is dropped); UD (SEND only, one datagram per
 * message, up to the port's MTU, through an address handle made from the
 * peer's GID). On UC and UD nothing says a message arrived, so a SEND
 * bandwidth receiver stops on the sender's end-of-run flag (not on a count)
 * and says how many it took; the flag (UC: a 1-byte WRITE, UD: a
 * SEND_WITH_IMM of no payload carrying PERF_FLAG_IMM | tag) is sent again
 * every millisecond until the peer has it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "drnic_cm.h"
#include "drnic_engine.h"
#include "drnic_telemetry.h"
#include "perf_rdma.h"

#define PERF_AREA_MAX (8u << 20)
#define PERF_POLL 64
#define PERF_ID_A 1                  /* the client / loopback requester */
#define PERF_ID_B 2                  /* the server / loopback responder */
#define PERF_QSHIFT 40               /* wr_id = qp index << 40 | sequence */
#define PERF_SEQ_MASK ((UINT64_C(1) << PERF_QSHIFT) - 1)
#define PERF_MAX_DURATION_SAMPLES (4u << 20)
#define PERF_QKEY 0x11111111u        /* UD Q_Key (perftest's DEF_QKEY) */
#define PERF_UD_GRH 40               /* the GRH room of every UD receive buffer */
#define PERF_FLAG_IMM 0x5046a500u    /* UD end-of-run flag: imm_data = this | tag */
#define PERF_FLAG_IMM_MASK 0xffffff00u

struct perf_qpst {
	uint64_t posted;     /* send WRs posted */
	uint64_t done;       /* send WRs retired (by a signaled completion) */
	uint64_t limit;      /* send WRs to post in all */
	bool ready;          /* on the ready list */
};

struct perf_ep {
	int id;
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_comp_channel *ch;   /* -e; shared by both ends in loopback */
	unsigned int nb_cqs;
	struct drnic_cq **cqs;
	unsigned int nb_qps;
	struct drnic_qp **qps;
	struct perf_qpst *st;
	unsigned int *ready;             /* QPs whose WRs retired since the last post pass */
	unsigned int nb_ready;
	struct drnic_srq *srq;           /* --srq on a receiving end: every QP's receives */
	struct drnic_ah *ah;             /* UD: the peer's address */
	uint32_t *rqpn;                  /* UD: the peer's QPN, per QP */
	uint32_t rx_off;                 /* UD: GRH room before the received payload */
	uint8_t imm_flag;                /* UD: tag of the last flag datagram received */
	uint8_t flag_pending;            /* UC/UD: flag to repeat while we wait for the peer */
	uint64_t flag_next;              /* TSC of the next repeat */
	const struct perf_conn *conn;
	uint8_t *buf;
	uint64_t area;
	uint64_t buf_len;
	struct drnic_mr *mr;
	uint64_t raddr;                  /* the peer's buffer */
	uint32_t rkey;
	uint64_t recvs;                  /* receive completions */
	uint64_t signaled;               /* signaled send completions */
	uint64_t retired;                /* send WRs retired, all QPs */
	uint64_t sig_posted;             /* signaled send WRs posted (latency) */
	uint64_t last_atomic;            /* latency: value the last atomic returned */
	struct drnic_send_wr *wrs;       /* post_list of them */
	struct drnic_sge *sges;
	double bytes_per_qp;
};

struct perf_conn {
	const struct perf_opts *o;
	bool loopback;
	struct perf_ep a, b;
	struct perf_ep *local;           /* client/server: our end */
	struct drnic_cm *cm;
	uint64_t max_size;
	unsigned int mod;                /* signaled every mod-th WR */
	unsigned int depth;              /* send WRs per QP in flight */
	unsigned int runs;               /* client/server: runs so far (done flag) */
};

static unsigned int perf_seq;

static int perf_poll(struct perf_ep *x, const struct perf_conn *c);

const char *
perf_qp_type_name(enum drnic_qp_type t)
{
	return t == DRNIC_QPT_UD ? "UD" : t == DRNIC_QPT_UC ? "UC" : "RC";
}

/* UC and UD: nothing acknowledges a message. */
static inline bool
perf_unreliable(const struct perf_opts *o)
{
	return o->qp_type == DRNIC_QPT_UC || o->qp_type == DRNIC_QPT_UD;
}

const char *
perf_test_title(enum perf_test t, enum perf_kind k)
{
	static const char *const titles[4][2] = {
		{ "RDMA_Write Latency Test", "RDMA_Write BW Test" },
		{ "Send Latency Test", "Send BW Test" },
		{ "RDMA_Read Latency Test", "RDMA_Read BW Test" },
		{ "Atomic FETCH_AND_ADD Latency Test", "Atomic FETCH_AND_ADD BW Test" },
	};

	return titles[t & 3][k & 1];
}

const char *
perf_test_name(enum perf_test t, enum perf_kind k)
{
	static const char *const names[4][2] = {
		{ "write_lat", "write_bw" }, { "send_lat", "send_bw" },
		{ "read_lat", "read_bw" }, { "atomic_lat", "atomic_bw" },
	};

	return names[t & 3][k & 1];
}

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

static uint8_t
perf_pattern(int id, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)id * 0xD1B54A32D192ED03ull;

	x ^= x >> 29;
	return (uint8_t)(x * 0xBF58476D1CE4E5B9ull >> 56);
}

/* Whether @len bytes at @p are the pattern of end @id (the last byte may be a tag). */
static int
perf_check_pattern(const uint8_t *p, uint64_t len, int id, bool skip_last)
{
	uint64_t i, n = skip_last && len > 0 ? len - 1 : len;

	for (i = 0; i < n; i++)
		if (p[i] != perf_pattern(id, i)) {
			fprintf(stderr, "drnic-perf: byte %" PRIu64 " of %" PRIu64 " is 0x%02x,"
				" expected 0x%02x: the data did not land\n", i, len, p[i],
				perf_pattern(id, i));
			return -EIO;
		}
	return 0;
}

static int
perf_open_device(struct perf_ep *e, const struct perf_opts *o, bool loopback)
{
	struct drnic_config cfg;
	unsigned int i;
	char v[64];
	int rc;

	drnic_config_init(&cfg);
	if (o->config != NULL) {
		rc = drnic_config_load(&cfg, o->config, NULL);
		if (rc < 0) {
			fprintf(stderr, "drnic-perf: configuration %s: %s\n", o->config, strerror(-rc));
			return rc;
		}
	}
	for (i = 0; i < o->nb_sets; i++) {
		rc = drnic_config_set_pair(&cfg, o->sets[i]);
		if (rc < 0) {
			fprintf(stderr, "drnic-perf: bad setting %s\n", o->sets[i]);
			return rc;
		}
	}
	if (o->inline_progress)
		cfg.progress = DRNIC_PROGRESS_INLINE;
	if (o->engine_lcore >= 0 && cfg.progress == DRNIC_PROGRESS_DEDICATED) {
		cfg.nb_engines = 1;
		cfg.engine_lcores[0] = (unsigned int)o->engine_lcore;
	}
	if (loopback) {
		snprintf(cfg.name, sizeof(cfg.name), "perf%c%u", e->id == PERF_ID_A ? 'a' : 'b',
			 perf_seq);
		snprintf(cfg.link_driver, sizeof(cfg.link_driver), "loopback");
		snprintf(cfg.link_args, sizeof(cfg.link_args), "wire=perf%u", perf_seq);
		snprintf(v, sizeof(v), "02:00:00:00:%02x:%02x", perf_seq & 0xff, e->id);
		drnic_config_set(&cfg, "mac", v);
		snprintf(v, sizeof(v), "10.0.%u.%d", perf_seq & 0xff, e->id);
		drnic_config_set(&cfg, "ipv4", v);
		if (o->mtu > 1024)
			cfg.mtu = 9000;
	}
	if (o->nb_qps + 16 > cfg.max_qp)
		cfg.max_qp = o->nb_qps + 16;
	e->dev = drnic_device_open(&cfg);
	if (e->dev == NULL) {
		fprintf(stderr, "drnic-perf: cannot open device %s: %s\n", cfg.name,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

static int
perf_ep_open(struct perf_ep *e, int id, const struct perf_conn *c,
	     struct drnic_comp_channel *shared_ch)
{
	const struct perf_opts *o = c->o;
	struct rte_malloc_socket_stats before, after;
	struct drnic_device_attr da;
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	unsigned int i, nq = o->nb_qps ? o->nb_qps : 1, pl = o->post_list ? o->post_list : 1;
	unsigned int rx = o->test == PERF_SEND ? o->rx_depth : 1;
	/* perftest's --use-srq: the SRQ on both ends of a latency test, on the
	 * receiving end (server) of a bandwidth test. */
	bool use_srq = o->srq && o->test == PERF_SEND && (o->kind == PERF_LAT || id == PERF_ID_B);
	uint64_t cqe;
	int rc, socket = (int)rte_socket_id();

	e->id = id;
	e->conn = c;
	e->rx_off = o->qp_type == DRNIC_QPT_UD ? PERF_UD_GRH : 0;
	rc = perf_open_device(e, o, c->loopback);
	if (rc != 0)
		return rc;
	drnic_query_device(e->dev, &da);
	if (o->qp_type == DRNIC_QPT_UD) {
		struct drnic_port_attr pa;
		uint64_t mtu = 0;

		if (drnic_query_port(e->dev, 1, &pa) == 0)
			mtu = 128u << pa.active_mtu;
		if (c->max_size > mtu) {
			fprintf(stderr, "drnic-perf: -c UD: message size %" PRIu64 " above the port's"
				" MTU %" PRIu64 ": a UD message is one datagram (no segmentation);"
				" use -s %" PRIu64 " or less\n", c->max_size, mtu, mtu);
			return -EMSGSIZE;
		}
	}
	e->pd = drnic_alloc_pd(e->dev);
	if (e->pd == NULL)
		return -rte_errno;
	if (o->events) {
		e->ch = shared_ch != NULL ? shared_ch : drnic_create_comp_channel();
		if (e->ch == NULL)
			return -rte_errno;
	}
	e->nb_qps = nq;
	e->nb_cqs = o->cq_per_qp ? nq : 1;
	e->cqs = calloc(e->nb_cqs, sizeof(*e->cqs));
	e->qps = calloc(nq, sizeof(*e->qps));
	e->st = calloc(nq, sizeof(*e->st));
	e->ready = calloc(nq, sizeof(*e->ready));
	e->wrs = calloc(pl, sizeof(*e->wrs));
	e->sges = calloc(pl, sizeof(*e->sges));
	e->rqpn = calloc(nq, sizeof(*e->rqpn));
	if (e->cqs == NULL || e->qps == NULL || e->st == NULL || e->wrs == NULL ||
	    e->sges == NULL || e->ready == NULL || e->rqpn == NULL)
		return -ENOMEM;
	rte_malloc_get_socket_stats(socket, &before);
	/* What can complete at once: a shared CQ of QPs on an SRQ takes the
	 * SRQ's receives once, not once per QP. */
	if (use_srq && !o->cq_per_qp)
		cqe = (uint64_t)(c->depth + 1) * nq + rx;
	else
		cqe = (uint64_t)(c->depth + rx + 1) * (o->cq_per_qp ? 1 : nq);
	ca.cqe = (uint32_t)RTE_MIN(cqe, (uint64_t)DRNIC_CQ_MAX_DEPTH);
	ca.socket_id = SOCKET_ID_ANY;
	ca.channel = e->ch;
	ca.async_queue = drnic_device_async_queue(e->dev);
	for (i = 0; i < e->nb_cqs; i++) {
		ca.cq_context = e;
		e->cqs[i] = drnic_cq_create(&ca);
		if (e->cqs[i] == NULL) {
			fprintf(stderr, "drnic-perf: CQ %u of %u (depth %u): %s\n", i, e->nb_cqs,
				ca.cqe, rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	if (use_srq) {
		struct drnic_srq_init_attr sa = { .srq_context = e };

		sa.attr.max_wr = o->rx_depth;
		sa.attr.max_sge = 1;
		e->srq = drnic_create_srq(e->pd, &sa);
		if (e->srq == NULL) {
			fprintf(stderr, "drnic-perf: SRQ of %u WRs: %s\n", o->rx_depth,
				rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	qa.qp_type = o->qp_type ? o->qp_type : DRNIC_QPT_RC;
	qa.srq = e->srq;
	qa.cap.max_send_wr = c->depth;
	qa.cap.max_recv_wr = rx;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = o->inline_size > 0 ? (uint32_t)o->inline_size : 0;
	if (qa.cap.max_inline_data > (uint32_t)da.max_inline_data)
		qa.cap.max_inline_data = (uint32_t)da.max_inline_data;
	for (i = 0; i < nq; i++) {
		qa.send_cq = qa.recv_cq = e->cqs[o->cq_per_qp ? i : 0];
		e->qps[i] = drnic_create_qp(e->pd, &qa);
		if (e->qps[i] == NULL) {
			fprintf(stderr, "drnic-perf: QP %u of %u: %s\n", i + 1, nq,
				rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	rte_malloc_get_socket_stats(socket, &after);
	e->bytes_per_qp = (double)(after.heap_allocsz_bytes - before.heap_allocsz_bytes) / nq;

	e->area = RTE_ALIGN_CEIL((c->max_size ? c->max_size : 1) + e->rx_off, 64);
	if (e->area > PERF_AREA_MAX)
		return -E2BIG;
	e->buf_len = 2 * e->area + 128;
	e->buf = drnic_alloc(e->buf_len, 4096, SOCKET_ID_ANY);
	if (e->buf == NULL)
		return -ENOMEM;
	for (i = 0; i < e->area; i++)
		e->buf[e->area + i] = perf_pattern(id, i);
	/* Visible to dpdk-telemetry.py while the test runs (the first 64 QPs/CQs). */
	drnic_telemetry_add_device(e->dev);
	for (i = 0; i < nq && i < 64; i++)
		drnic_telemetry_add_qp(e->qps[i]);
	for (i = 0; i < e->nb_cqs && i < 64; i++)
		drnic_telemetry_add_cq(e->cqs[i], drnic_device_name(e->dev));
	e->mr = drnic_reg_mr(e->pd, e->buf, e->buf_len,
			     DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
			     DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC);
	return e->mr == NULL ? -rte_errno : 0;
}

static void
perf_ep_close(struct perf_ep *e, bool free_ch)
{
	unsigned int i;

	for (i = 0; e->qps != NULL && i < e->nb_qps; i++)
		if (e->qps[i] != NULL) {
			if (i < 64)
				drnic_telemetry_remove_qp(e->qps[i]);
			drnic_destroy_qp(e->qps[i]);
		}
	if (e->srq != NULL)
		drnic_destroy_srq(e->srq);
	if (e->ah != NULL)
		drnic_destroy_ah(e->ah);
	if (e->mr != NULL)
		drnic_dereg_mr(e->mr);
	drnic_free(e->buf);
	for (i = 0; e->cqs != NULL && i < e->nb_cqs; i++)
		if (e->cqs[i] != NULL) {
			if (i < 64)
				drnic_telemetry_remove_cq(e->cqs[i]);
			drnic_cq_destroy(e->cqs[i]);
		}
	if (e->dev != NULL)
		drnic_telemetry_remove_device(e->dev);
	if (e->ch != NULL && free_ch)
		drnic_destroy_comp_channel(e->ch);
	if (e->pd != NULL)
		drnic_dealloc_pd(e->pd);
	if (e->dev != NULL)
		drnic_device_close(e->dev);
	free(e->cqs);
	free(e->qps);
	free(e->st);
	free(e->ready);
	free(e->wrs);
	free(e->sges);
	free(e->rqpn);
	memset(e, 0, sizeof(*e));
}

/*
 * UD: INIT (port, P_Key index, Q_Key), RTR, RTS (SQ PSN), as ibv_modify_qp's
 * UD column; the peer's QPN for this QP and, once per end, an address
 * handle from the peer's GID (the link resolves its MAC).
 */
static int
perf_ud_ready(struct perf_ep *e, unsigned int q, const struct drnic_cm_dest *d)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qkey = PERF_QKEY;
	rc = drnic_modify_qp(e->qps[q], &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_QKEY);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTR;
	rc = drnic_modify_qp(e->qps[q], &a, DRNIC_QP_STATE);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = 0;
	rc = drnic_modify_qp(e->qps[q], &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN);
	if (rc < 0)
		return rc;
	e->rqpn[q] = d->qpn;
	if (e->ah == NULL) {
		struct drnic_ah_attr aa;

		memset(&aa, 0, sizeof(aa));
		aa.is_global = 1;
		aa.port_num = 1;
		aa.grh.hop_limit = 64;
		memcpy(aa.grh.dgid.raw, d->gid, 16);
		e->ah = drnic_create_ah(e->pd, &aa);
		if (e->ah == NULL) {
			fprintf(stderr, "drnic-perf: address handle to the peer: %s\n",
				rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	return 0;
}

static int
perf_qp_to_rts(struct perf_ep *e, unsigned int q, const struct drnic_cm_dest *d,
	       const struct perf_opts *o)
{
	const bool uc = o->qp_type == DRNIC_QPT_UC;
	struct drnic_port_attr pa;
	struct drnic_qp_attr a;
	enum drnic_mtu mtu = perf_mtu_enum(o->mtu);
	int rc;

	if (o->qp_type == DRNIC_QPT_UD)
		return perf_ud_ready(e, q, d);
	if (drnic_query_port(e->dev, 1, &pa) == 0 && pa.active_mtu < mtu)
		mtu = pa.active_mtu;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	/* UC: WRITE is the only remote access it has. */
	a.qp_access_flags = uc ? DRNIC_ACCESS_REMOTE_WRITE :
			    DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
			    DRNIC_ACCESS_REMOTE_ATOMIC;
	rc = drnic_modify_qp(e->qps[q], &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_ACCESS_FLAGS);
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = d->qpn;
	a.rq_psn = d->psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, d->gid, 16);
	rc = drnic_modify_qp(e->qps[q], &a, DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU |
			     DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN |
			     (uc ? 0 : DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER));
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = 0;
	if (uc)   /* no ACKs: no timeout, retries or READ/atomic credits */
		return drnic_modify_qp(e->qps[q], &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN);
	a.timeout = (uint8_t)(o->qp_timeout ? o->qp_timeout : 14);
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	return drnic_modify_qp(e->qps[q], &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT |
			       DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY |
			       DRNIC_QP_MAX_QP_RD_ATOMIC);
}

static void
perf_dest(struct perf_ep *e, unsigned int q, struct drnic_cm_dest *d)
{
	union drnic_gid gid;

	memset(d, 0, sizeof(*d));
	drnic_query_gid(e->dev, 1, 0, &gid);
	d->qpn = drnic_qp_num(e->qps[q]);
	d->psn = 0;
	memcpy(d->gid, gid.raw, 16);
	d->rkey = drnic_mr_rkey(e->mr);
	d->addr = (uintptr_t)e->buf;
	d->size = (uint32_t)e->buf_len;
}

static int
perf_post_recvs(struct perf_ep *e, unsigned int q, unsigned int n)
{
	struct drnic_sge sge = {
		.addr = (uintptr_t)e->buf, .length = (uint32_t)e->area, .lkey = drnic_mr_lkey(e->mr),
	};
	struct drnic_recv_wr wr = { .wr_id = (uint64_t)q << PERF_QSHIFT, .sg_list = &sge,
				    .num_sge = 1 };
	struct drnic_recv_wr *bad;
	unsigned int i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = e->srq != NULL ? drnic_post_srq_recv(e->srq, &wr, &bad) :
		     drnic_post_recv(e->qps[q], &wr, &bad);
		if (rc != 0)
			return rc;
	}
	return 0;
}

struct perf_server_cb {
	struct perf_ep *e;
	unsigned int q;
	const struct perf_opts *o;
};

static int
perf_server_connect_cb(void *arg, const struct drnic_cm_dest *remote)
{
	struct perf_server_cb *s = arg;

	int rc;

	if (s->q == 0) {
		s->e->raddr = remote->addr;
		s->e->rkey = remote->rkey;
	}
	rc = perf_qp_to_rts(s->e, s->q, remote, s->o);
	/* Receives go up before our record does: the client's first SEND finds
	 * one (an SRQ is filled once, with the first QP). */
	if (rc == 0 && s->o->test == PERF_SEND && (s->e->srq == NULL || s->q == 0))
		rc = perf_post_recvs(s->e, s->q, s->o->rx_depth);
	return rc;
}

static void perf_flag_repeat(struct perf_ep *x);

/* The exchange waits (about every ms): run the engines, repeat a UC/UD flag. */
static int
perf_idle(void *arg)
{
	struct perf_ep *e = arg;

	drnic_device_progress(e->dev);
	if (e->flag_pending != 0)
		perf_flag_repeat(e);
	return 0;
}

/* --stats: the engine's and the link's counters of one end. */
static void
perf_print_stats(const struct perf_conn *c, struct perf_ep *e)
{
	drnic_device_stats_print(e->dev, " ", c->o->out);
}

static void
perf_conn_close(struct perf_conn *c)
{
	if (c->o->stats) {
		if (c->loopback) {
			perf_print_stats(c, &c->a);
			perf_print_stats(c, &c->b);
		} else {
			perf_print_stats(c, c->local);
		}
	}
	if (c->loopback) {
		struct drnic_comp_channel *ch = c->a.ch;

		perf_ep_close(&c->a, false);
		perf_ep_close(&c->b, false);
		if (ch != NULL)
			drnic_destroy_comp_channel(ch);
		return;
	}
	/*
	 * The server tears down after its client, as drnic-pingpong does: the
	 * client closes its port, then the connection; the server waits for
	 * that close and for its port to see the peer gone (200 ms at most),
	 * then closes. With both ends closing at once, DPDK 22.11's memif PMD
	 * can crash the process whose peer disconnects while it polls or
	 * closes its port (drivers/link/ethdev/ethdev.c, "Known issues"): a
	 * client crashed so after send_lat -s 1024 in CI.
	 */
	if (c->o->host == NULL && c->cm != NULL) {
		struct drnic_port_attr pa;
		uint64_t end;

		fflush(c->o->out);
		(void)drnic_cm_wait_close(c->cm);
		end = rte_get_timer_cycles() + rte_get_timer_hz() / 5;
		while (rte_get_timer_cycles() < end &&
		       drnic_query_port(c->local->dev, 1, &pa) == 0 &&
		       pa.state == DRNIC_PORT_ACTIVE)
			rte_delay_us_sleep(1000);
	}
	perf_ep_close(c->local, true);
	if (c->cm != NULL) {
		drnic_cm_close(c->cm);
		c->cm = NULL;
	}
}

/* Set up both ends (loopback) or ours and the exchange (client/server). */
static int
perf_conn_open(struct perf_conn *c, const struct perf_opts *o, uint64_t max_size)
{
	struct drnic_cm_dest ld, rd;
	unsigned int q;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->loopback = o->host == NULL && !o->server;
	c->max_size = o->test == PERF_ATOMIC ? 8 : max_size;
	c->depth = RTE_MAX(o->tx_depth ? o->tx_depth : 128u, o->post_list ? o->post_list : 1u);
	c->mod = o->cq_mod ? o->cq_mod : 1;
	if (c->mod > c->depth)
		c->mod = c->depth;
	if (o->kind == PERF_LAT && c->mod > c->depth / 2)
		c->mod = RTE_MAX(c->depth / 2, 1u);
	perf_seq++;
	if (c->loopback) {
		struct drnic_comp_channel *ch = NULL;

		if (o->events) {
			ch = drnic_create_comp_channel();
			if (ch == NULL)
				return -rte_errno;
		}
		rc = perf_ep_open(&c->a, PERF_ID_A, c, ch);
		if (rc == 0)
			rc = perf_ep_open(&c->b, PERF_ID_B, c, ch);
		if (rc != 0 && ch != NULL && c->a.ch == NULL)
			drnic_destroy_comp_channel(ch);
		for (q = 0; rc == 0 && q < c->a.nb_qps; q++) {
			perf_dest(&c->b, q, &rd);
			perf_dest(&c->a, q, &ld);
			rc = perf_qp_to_rts(&c->a, q, &rd, o);
			if (rc == 0)
				rc = perf_qp_to_rts(&c->b, q, &ld, o);
			if (rc == 0 && o->test == PERF_SEND && (c->a.srq == NULL || q == 0))
				rc = perf_post_recvs(&c->a, q, o->rx_depth);
			if (rc == 0 && o->test == PERF_SEND && (c->b.srq == NULL || q == 0))
				rc = perf_post_recvs(&c->b, q, o->rx_depth);
		}
		c->a.raddr = (uintptr_t)c->b.buf;
		c->a.rkey = drnic_mr_rkey(c->b.mr);
		c->b.raddr = (uintptr_t)c->a.buf;
		c->b.rkey = drnic_mr_rkey(c->a.mr);
		c->local = &c->a;
	} else {
		struct drnic_cm_opts co = {
			.fmt = DRNIC_CM_FMT_DRNIC, .port = o->port,
			.timeout_ms = o->timeout_s * 1000u, .retry_ms = o->timeout_s * 1000u,
			.idle = perf_idle,
		};

		c->local = o->host != NULL ? &c->a : &c->b;
		co.idle_arg = c->local;
		rc = perf_ep_open(c->local, o->host != NULL ? PERF_ID_A : PERF_ID_B, c, NULL);
		if (rc == 0 && o->host != NULL) {
			c->cm = drnic_cm_connect(o->host, &co);
			if (c->cm == NULL) {
				rc = -rte_errno;
				fprintf(stderr, "drnic-perf: cannot reach server %s port %d: %s\n",
					o->host, o->port, rte_strerror(-rc));
			}
			for (q = 0; rc == 0 && q < c->local->nb_qps; q++) {
				perf_dest(c->local, q, &ld);
				rc = drnic_cm_client_exchange(c->cm, &ld, &rd);
				if (rc == 0)
					rc = perf_qp_to_rts(c->local, q, &rd, o);
				if (rc == 0 && o->test == PERF_SEND &&
				    (c->local->srq == NULL || q == 0))
					rc = perf_post_recvs(c->local, q, o->rx_depth);
				if (q == 0) {
					c->local->raddr = rd.addr;
					c->local->rkey = rd.rkey;
				}
			}
		} else if (rc == 0) {
			struct drnic_cm *listener = drnic_cm_listen(&co);

			if (listener == NULL) {
				rc = -rte_errno;
				fprintf(stderr, "drnic-perf: cannot listen on port %d: %s\n", o->port,
					rte_strerror(-rc));
			} else {
				fprintf(o->out, "************************************\n"
					"* Waiting for client to connect... *\n"
					"************************************\n");
				c->cm = drnic_cm_accept(listener);
				drnic_cm_close(listener);
				if (c->cm == NULL)
					rc = -rte_errno;
			}
			for (q = 0; rc == 0 && q < c->local->nb_qps; q++) {
				struct perf_server_cb cb = { .e = c->local, .q = q, .o = o };

				perf_dest(c->local, q, &ld);
				rc = drnic_cm_server_exchange(c->cm, &ld, &rd, perf_server_connect_cb,
							      &cb);
			}
		}
		if (rc == 0)
			rc = drnic_cm_sync(c->cm, "ready");
	}
	if (rc != 0) {
		fprintf(stderr, "drnic-perf: set-up failed: %s\n", strerror(-rc));
		perf_conn_close(c);
	}
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Posting and completions                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Post @n WRs on QP @q of @x as one list, sequences @seq.., @len bytes each,
 * every mod-th and the last (limit) one signaled.
 */
static int
perf_post_list(struct perf_ep *x, unsigned int q, const struct perf_conn *c, uint64_t len,
	       unsigned int n, bool all_signaled)
{
	const struct perf_opts *o = c->o;
	struct perf_qpst *st = &x->st[q];
	uint32_t lkey = drnic_mr_lkey(x->mr);
	struct drnic_send_wr *bad;
	unsigned int i;
	int rc;

	for (i = 0; i < n; i++) {
		struct drnic_send_wr *wr = &x->wrs[i];
		struct drnic_sge *sge = &x->sges[i];
		uint64_t seq = st->posted + i;
		bool sig = all_signaled || seq % c->mod == c->mod - 1 || seq + 1 == st->limit;

		wr->wr_id = (uint64_t)q << PERF_QSHIFT | seq;
		wr->next = i + 1 < n ? &x->wrs[i + 1] : NULL;
		wr->sg_list = sge;
		wr->num_sge = 1;
		wr->send_flags = sig ? DRNIC_SEND_SIGNALED : 0;
		sge->lkey = lkey;
		sge->length = (uint32_t)len;
		switch (o->test) {
		case PERF_WRITE:
		case PERF_SEND:
			wr->opcode = o->test == PERF_WRITE ? DRNIC_WR_RDMA_WRITE : DRNIC_WR_SEND;
			sge->addr = (uintptr_t)(x->buf + x->area);
			wr->wr.rdma.remote_addr = x->raddr;
			wr->wr.rdma.rkey = x->rkey;
			if (o->inline_size > 0 && len <= (uint64_t)o->inline_size)
				wr->send_flags |= DRNIC_SEND_INLINE;
			break;
		case PERF_READ:
			wr->opcode = DRNIC_WR_RDMA_READ;
			sge->addr = (uintptr_t)x->buf;
			wr->wr.rdma.remote_addr = x->raddr + x->area;
			wr->wr.rdma.rkey = x->rkey;
			break;
		case PERF_ATOMIC:
			sge->addr = (uintptr_t)(x->buf + 2 * x->area + 64);
			sge->length = 8;
			wr->wr.atomic.remote_addr = x->raddr + 2 * x->area;
			wr->wr.atomic.rkey = x->rkey;
			if (o->cmp_swap) {
				wr->opcode = DRNIC_WR_ATOMIC_CMP_AND_SWP;
				wr->wr.atomic.compare_add = x->last_atomic;
				wr->wr.atomic.swap = x->last_atomic + 1;
			} else {
				wr->opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
				wr->wr.atomic.compare_add = 1;
			}
			break;
		}
		if (o->qp_type == DRNIC_QPT_UD) {
			wr->wr.ud.ah = x->ah;
			wr->wr.ud.remote_qpn = x->rqpn[q];
			wr->wr.ud.remote_qkey = PERF_QKEY;
		}
		if (sig)
			x->sig_posted++;
	}
	rc = drnic_post_send(x->qps[q], x->wrs, &bad);
	if (rc != 0) {
		fprintf(stderr, "drnic-perf: post_send on QP %u: %s\n", q, strerror(-rc));
		return rc;
	}
	st->posted += n;
	return 0;
}

/*
 * Poll the CQs of @x once: send completions retire WRs, receive completions
 * are counted and their WR reposted. Returns completions seen, or -EIO.
 */
static int
perf_poll(struct perf_ep *x, const struct perf_conn *c __rte_unused)
{
	struct drnic_wc wc[PERF_POLL];
	unsigned int k;
	int n, i, total = 0;

	for (k = 0; k < x->nb_cqs; k++) {
		n = drnic_cq_poll(x->cqs[k], PERF_POLL, wc);
		if (n < 0)
			return n;
		if (n == PERF_POLL && x->nb_cqs == 1 && total < 16 * PERF_POLL)
			k--;    /* a full batch: drain the shared CQ a little more */
		for (i = 0; i < n; i++) {
			unsigned int q = (unsigned int)(wc[i].wr_id >> PERF_QSHIFT);

			if (wc[i].status != DRNIC_WC_SUCCESS) {
				fprintf(stderr, "drnic-perf: completion error %s (QP %u, wr_id 0x%"
					PRIx64 ", vendor_err %u)\n",
					drnic_wc_status_str(wc[i].status), q, wc[i].wr_id,
					wc[i].vendor_err);
				return -EIO;
			}
			if (q >= x->nb_qps)
				return -EIO;
			if (wc[i].opcode & DRNIC_WC_RECV) {
				uint32_t imm = ntohl(wc[i].imm_data);

				/* UD's end-of-run flag is not one of the messages. */
				if ((wc[i].wc_flags & DRNIC_WC_WITH_IMM) &&
				    (imm & PERF_FLAG_IMM_MASK) == PERF_FLAG_IMM)
					x->imm_flag = (uint8_t)imm;
				else
					x->recvs++;
				if (perf_post_recvs(x, q, 1) != 0)
					return -EIO;
			} else {
				uint64_t d = (wc[i].wr_id & PERF_SEQ_MASK) + 1;

				x->retired += d - x->st[q].done;
				x->st[q].done = d;
				x->signaled++;
				if (!x->st[q].ready) {
					x->st[q].ready = true;
					x->ready[x->nb_ready++] = q;
				}
			}
		}
		total += n;
	}
	return total;
}

/*
 * Nothing to do: in inline mode run the engines; in event mode arm the CQs,
 * poll once more and sleep on the channel. Returns completions polled or -errno.
 */
static int
perf_idle_step(struct perf_conn *c, struct perf_ep *x, struct perf_ep *y)
{
	struct drnic_cq *cq;
	void *ctx;
	unsigned int k;
	int n, rc;

	if (!c->o->events) {
		drnic_device_progress(x->dev);
		return 0;
	}
	for (k = 0; k < x->nb_cqs; k++)
		drnic_cq_req_notify(x->cqs[k], 0);
	for (k = 0; y != NULL && k < y->nb_cqs; k++)
		drnic_cq_req_notify(y->cqs[k], 0);
	n = perf_poll(x, c);
	if (n == 0 && y != NULL)
		n = perf_poll(y, c);
	if (n != 0)
		return n;
	rc = drnic_get_cq_event(x->ch, &cq, &ctx);
	if (rc == 0)
		drnic_ack_cq_events(cq, 1);
	return rc == -EINTR ? 0 : rc;
}

/*
 * Client/server: the side that drove the run tells the passive one it is
 * over with a 1-byte WRITE of @tag at offset 2 area + 100 of the peer's
 * buffer (UD, which has no WRITE: a SEND_WITH_IMM of PERF_FLAG_IMM | @tag
 * and no payload on QP 0); the passive side spins on it, running its
 * engines (inline progress must not wait in the TCP exchange, which only
 * ticks every ms).
 * On UC and UD the flag may be lost (UD: no receive WQE at that moment): it
 * is repeated every ms until perf_flag_done(), while we wait in the exchange
 * (perf_idle()) or for the peer in loopback (perf_flag_drain()).
 */
static int
perf_flag_post(struct perf_ep *x, uint8_t tag)
{
	struct drnic_sge sge = { .addr = (uintptr_t)(x->buf + 2 * x->area + 100), .length = 1,
				 .lkey = drnic_mr_lkey(x->mr) };
	struct drnic_send_wr wr = { .wr_id = 0, .sg_list = &sge, .num_sge = 1,
				    .opcode = DRNIC_WR_RDMA_WRITE,
				    .send_flags = DRNIC_SEND_SIGNALED };
	struct drnic_send_wr *bad;
	int rc;

	x->buf[2 * x->area + 100] = tag;
	if (x->conn->o->qp_type == DRNIC_QPT_UD) {
		/* No payload: the peer's receive area keeps the last message. */
		wr.opcode = DRNIC_WR_SEND_WITH_IMM;
		wr.num_sge = 0;
		wr.imm_data = htonl(PERF_FLAG_IMM | tag);
		wr.wr.ud.ah = x->ah;
		wr.wr.ud.remote_qpn = x->rqpn[0];
		wr.wr.ud.remote_qkey = PERF_QKEY;
	} else {
		wr.wr.rdma.remote_addr = x->raddr + 2 * x->area + 100;
		wr.wr.rdma.rkey = x->rkey;
	}
	wr.wr_id = x->st[0].posted;   /* sequence of QP 0: retires in order */
	rc = drnic_post_send(x->qps[0], &wr, &bad);
	if (rc != 0)
		return rc;
	x->st[0].limit = UINT64_MAX;
	x->st[0].posted++;
	x->sig_posted++;
	x->flag_next = rte_get_timer_cycles() + rte_get_timer_hz() / 1000;
	return 0;
}

static int
perf_flag_send(struct perf_conn *c, struct perf_ep *x, uint8_t tag)
{
	uint64_t want;
	int rc;

	rc = perf_flag_post(x, tag);
	want = x->st[0].posted;
	while (rc >= 0 && x->st[0].done < want) {
		rc = perf_poll(x, c);
		if (rc == 0)
			drnic_device_progress(x->dev);
	}
	if (rc >= 0 && perf_unreliable(c->o))
		x->flag_pending = tag;
	return rc < 0 ? rc : 0;
}

/* A UC/UD flag is pending and a ms has passed: send it again, reap what left. */
static void
perf_flag_repeat(struct perf_ep *x)
{
	if (rte_get_timer_cycles() >= x->flag_next &&
	    x->st[0].posted - x->st[0].done < x->conn->depth)
		(void)perf_flag_post(x, x->flag_pending);
	(void)perf_poll(x, x->conn);
}

/* The peer has the flag: stop repeating it, reap the repeats' completions. */
static int
perf_flag_done(struct perf_conn *c, struct perf_ep *x)
{
	int rc = 0;

	if (x == NULL || x->flag_pending == 0)
		return 0;
	x->flag_pending = 0;
	while (rc >= 0 && x->signaled < x->sig_posted) {
		rc = perf_poll(x, c);
		if (rc == 0)
			drnic_device_progress(x->dev);
	}
	return rc < 0 ? rc : 0;
}

/* The flag byte perf_flag_send() writes has @tag (UD: the last flag datagram did). */
static inline bool
perf_flag_is(const struct perf_ep *x, uint8_t tag)
{
	if (x->conn->o->qp_type == DRNIC_QPT_UD)
		return x->imm_flag == tag;
	return *(volatile const uint8_t *)(x->buf + 2 * x->area + 100) == tag;
}

static void
perf_flag_wait(struct perf_ep *x, uint8_t tag)
{
	while (!perf_flag_is(x, tag)) {
		if (x->conn->o->qp_type == DRNIC_QPT_UD)
			(void)perf_poll(x, x->conn);
		drnic_device_progress(x->dev);
		rte_pause();
	}
}

/*
 * Loopback, UC/UD SEND: every message @x sent has either landed in @y or
 * been dropped once @y sees a flag sent after them; until it does, @y
 * takes what arrives (reposting its receives) and the flag is repeated.
 * The completions of those that landed may come after @y's last poll
 * (the engine pushed them in the step that wrote the flag): @y takes them
 * once more after the flag.
 */
static int
perf_flag_drain(struct perf_conn *c, struct perf_ep *x, struct perf_ep *y)
{
	uint8_t tag = (uint8_t)(++c->runs);
	int rc;

	rc = perf_flag_send(c, x, tag);
	while (rc >= 0 && !perf_flag_is(y, tag)) {
		rc = perf_poll(y, c);
		if (rc == 0) {
			drnic_device_progress(y->dev);
			perf_flag_repeat(x);
		}
	}
	while (rc >= 0 && (rc = perf_poll(y, c)) > 0)
		;
	if (rc >= 0)
		rc = perf_flag_done(c, x);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------ */
/* Latency                                                                  */
/* ------------------------------------------------------------------------ */

/* One ping (or request) from @x at iteration @i. */
static int
perf_lat_post(struct perf_conn *c, struct perf_ep *x, uint64_t len, uint64_t i)
{
	int rc;

	if (c->o->test == PERF_WRITE || c->o->test == PERF_SEND)
		x->buf[x->area + len - 1] = (uint8_t)(i % 255 + 1);
	x->st[0].limit = UINT64_MAX;
	/* Requests whose answer we wait for are signaled; pings every mod-th. */
	rc = perf_post_list(x, 0, c, len, 1, c->o->test >= PERF_READ);
	/* Keep the send queue from filling: reap (untimed when possible). */
	while (rc >= 0 && x->st[0].posted - x->st[0].done > c->depth / 2 &&
	       c->o->test < PERF_READ) {
		rc = perf_poll(x, c);
		if (rc == 0)
			drnic_device_progress(x->dev);
	}
	return rc < 0 ? rc : 0;
}

/*
 * Wait for the pong (WRITE: its last byte; SEND: its receive) or the response.
 * @stop: not 0, a ping-pong server under -D: the client's flag with this tag
 * ends the wait instead (returns 1: the client stopped).
 */
static int
perf_lat_wait(struct perf_conn *c, struct perf_ep *x, uint64_t len, uint64_t i, uint8_t stop)
{
	const struct perf_opts *o = c->o;
	int rc = 0;

	switch (o->test) {
	case PERF_WRITE: {
		volatile uint8_t *last = x->buf + len - 1;
		uint8_t tag = (uint8_t)(i % 255 + 1);

		while (*last != tag) {
			if (stop != 0 && perf_flag_is(x, stop))
				return 1;
			drnic_device_progress(x->dev);
			rte_pause();
		}
		return 0;
	}
	case PERF_SEND:
		while (rc >= 0 && x->recvs <= i) {
			if (stop != 0 && perf_flag_is(x, stop))
				return 1;
			rc = perf_poll(x, c);
			if (rc == 0)
				rc = perf_idle_step(c, x, NULL);
		}
		return rc < 0 ? rc : 0;
	default:
		while (rc >= 0 && x->signaled < x->sig_posted) {
			rc = perf_poll(x, c);
			if (rc == 0)
				rc = perf_idle_step(c, x, NULL);
		}
		if (rc >= 0 && o->test == PERF_ATOMIC) {
			uint64_t got = *(volatile uint64_t *)(void *)(x->buf + 2 * x->area + 64);

			if (got != x->last_atomic) {
				fprintf(stderr, "drnic-perf: atomic %" PRIu64 " returned %" PRIu64
					", expected %" PRIu64 "\n", i, got, x->last_atomic);
				return -EIO;
			}
			x->last_atomic++;
		}
		return rc < 0 ? rc : 0;
	}
}

static int
perf_lat_one(struct perf_conn *c, uint64_t len, struct perf_lat *out)
{
	const struct perf_opts *o = c->o;
	/* 1000 round trips before the samples whatever -n says: across
	 * processes the first few hundred after the start (a few ms) ran
	 * 10-15x slower (memif, 2026-11-30), and -n 300 measured only those. */
	const uint64_t hz = rte_get_tsc_hz(), warmup = o->duration > 0 ? 100 : 1000;
	const bool pingpong = o->test == PERF_WRITE || o->test == PERF_SEND;
	const bool is_client = c->loopback || o->host != NULL;
	uint64_t cap = o->duration > 0 ? PERF_MAX_DURATION_SAMPLES : o->iters;
	/* -D across processes: the client keeps the time and, when it is up,
	 * writes the flag; a ping-pong server echoes until it sees it. */
	const bool flag_stop = !c->loopback && pingpong && o->duration > 0;
	const uint8_t stop = flag_stop && !is_client ? (uint8_t)(c->runs + 1) : 0;
	uint64_t *samples, i, n = 0, deadline = 0;
	int rc = 0;

	samples = malloc(cap * sizeof(*samples));
	if (samples == NULL)
		return -ENOMEM;
	/* Nothing in flight now: clear the receive areas (a stale tag byte
	 * must not end a wait early), then start together. */
	memset(c->local->buf, 0, c->local->area);
	c->local->recvs = 0;
	if (c->loopback) {
		memset(c->b.buf, 0, c->b.area);
		c->b.recvs = 0;
	} else {
		rc = drnic_cm_sync(c->cm, "lat-start");
	}
	/* A server under -D echoes until the client's flag, past its sample
	 * cap too (the client stops on its own cap and then sends the flag). */
	for (i = 0; rc == 0 && (n < cap || stop != 0); i++) {
		uint64_t t0 = rte_rdtsc_precise();

		if (i == warmup && o->duration > 0 && stop == 0)
			deadline = t0 + (uint64_t)(o->duration * (double)hz);
		if (c->loopback) {
			rc = perf_lat_post(c, &c->a, len, i);
			if (rc == 0 && pingpong) {
				rc = perf_lat_wait(c, &c->b, len, i, 0);
				if (rc == 0)
					rc = perf_lat_post(c, &c->b, len, i);
			}
			if (rc == 0)
				rc = perf_lat_wait(c, &c->a, len, i, 0);
		} else if (is_client) {
			rc = perf_lat_post(c, c->local, len, i);
			if (rc == 0)
				rc = perf_lat_wait(c, c->local, len, i, 0);
		} else if (pingpong) {
			rc = perf_lat_wait(c, c->local, len, i, stop);
			if (rc == 1) {
				rc = 0;      /* the client's time is up */
				break;
			}
			if (rc == 0)
				rc = perf_lat_post(c, c->local, len, i);
		} else {
			perf_flag_wait(c->local, (uint8_t)(++c->runs));   /* READ/atomic server */
			break;
		}
		if (i >= warmup && n < cap)
			samples[n++] = rte_rdtsc_precise() - t0;
		if (deadline != 0 && rte_rdtsc() > deadline)
			break;
		if (o->duration <= 0 && i + 1 >= o->iters + warmup)
			break;
	}
	/* Reap what is left, then check the bytes. */
	if (rc == 0 && pingpong) {
		struct perf_ep *eps[2] = { c->loopback ? &c->a : c->local, c->loopback ? &c->b : NULL };
		unsigned int k;

		for (k = 0; k < 2 && rc == 0; k++) {
			struct perf_ep *x = eps[k];

			while (x != NULL && rc >= 0 && x->signaled < x->sig_posted) {
				rc = perf_poll(x, c);
				if (rc == 0)
					drnic_device_progress(x->dev);
			}
			if (rc > 0)
				rc = 0;
			if (x != NULL && rc == 0)
				rc = perf_check_pattern(x->buf + x->rx_off, len,
							x->id == PERF_ID_A ? PERF_ID_B : PERF_ID_A,
							true);
		}
	} else if (rc == 0 && is_client && o->test == PERF_READ) {
		rc = perf_check_pattern(c->a.buf, len, PERF_ID_B, false);
	}
	if (rc == 0 && c->loopback && o->test == PERF_ATOMIC &&
	    *(volatile uint64_t *)(void *)(c->b.buf + 2 * c->b.area) != c->a.last_atomic) {
		fprintf(stderr, "drnic-perf: atomic target is %" PRIu64 ", expected %" PRIu64 "\n",
			*(volatile uint64_t *)(void *)(c->b.buf + 2 * c->b.area), c->a.last_atomic);
		rc = -EIO;
	}
	/* The tag went into the last byte of the send areas: put the pattern back. */
	c->local->buf[c->local->area + len - 1] = perf_pattern(c->local->id, len - 1);
	if (c->loopback)
		c->b.buf[c->b.area + len - 1] = perf_pattern(PERF_ID_B, len - 1);
	if (rc == 0 && !c->loopback && is_client && (!pingpong || flag_stop))
		rc = perf_flag_send(c, c->local, (uint8_t)(++c->runs));
	else if (rc == 0 && stop != 0)
		c->runs++;    /* the server saw that flag */
	if (rc == 0 && !c->loopback)
		rc = drnic_cm_sync(c->cm, "lat-done");
	if (rc == 0 && !c->loopback)
		rc = perf_flag_done(c, c->local);
	if (rc == 0 && n >= 3)
		rc = perf_lat_compute(samples, n, pingpong ? 2.0 : 1.0, hz, out);
	else if (rc == 0)
		memset(out, 0, sizeof(*out));
	free(samples);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Bandwidth                                                                */
/* ------------------------------------------------------------------------ */

/* The busy and the idle TSC cycles of every engine of @p dev, summed. */
static void
perf_engine_cycles(struct drnic_device *dev, uint64_t cyc[2])
{
	struct drnic_engine_stats es;
	unsigned int e;

	cyc[0] = cyc[1] = 0;
	for (e = 0; drnic_engine_stats_get(dev, e, &es) == 0; e++) {
		cyc[0] += es.busy_cycles;
		cyc[1] += es.idle_cycles;
	}
}

static int
perf_bw_one(struct perf_conn *c, uint64_t len, struct perf_bw *out)
{
	const struct perf_opts *o = c->o;
	const uint64_t hz = rte_get_tsc_hz();
	const unsigned int pl = o->post_list ? o->post_list : 1;
	struct perf_ep *x = c->loopback || o->host != NULL ? &c->a : NULL;
	struct perf_ep *y = c->loopback || o->host == NULL ? &c->b : NULL;
	uint64_t t0, t_end, window_t0, window_done = 0, done_all = 0, deadline = 0, target = 0;
	uint64_t recv_target, atomic_before = 0;
	unsigned int q, nq = c->local->nb_qps, finished = 0;
	uint8_t send_stop;
	uint64_t rx_first = 0, eng0[2], eng1[2];
	bool full_pass = true;
	double peak = 0.0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->bytes_per_qp = c->local->bytes_per_qp;
	if (x != NULL) {
		for (q = 0; q < nq; q++) {
			x->st[q].posted = x->st[q].done = 0;
			x->st[q].limit = o->duration > 0 ? UINT64_MAX : o->iters;
		}
		x->signaled = x->sig_posted = x->retired = 0;
		x->nb_ready = 0;
	}
	if (y != NULL)
		y->recvs = 0;
	if (c->loopback && o->test == PERF_ATOMIC)
		atomic_before = *(volatile uint64_t *)(void *)(c->b.buf + 2 * c->b.area);
	/* A send_bw server counts the client's messages; under -D it cannot
	 * know them ahead: it stops on the client's flag (perf_flag_send()
	 * after the last SEND: RC delivers it after them). */
	recv_target = o->test == PERF_SEND && x == NULL && o->duration <= 0 ? o->iters * nq : 0;
	send_stop = o->test == PERF_SEND && x == NULL && (o->duration > 0 || perf_unreliable(o)) ?
		    (uint8_t)(c->runs + 1) : 0;
	if (x != NULL)
		target = o->duration > 0 ? 0 : o->iters * nq;
	perf_engine_cycles((x != NULL ? x : y)->dev, eng0);
	t0 = window_t0 = rte_rdtsc();
	if (o->duration > 0)
		deadline = t0 + (uint64_t)(o->duration * (double)hz);

	while (rc >= 0) {
		int work = 0;

		if (x != NULL) {
			/* Keep every send queue full: at most depth WRs in flight each.
			 * After the first pass only QPs whose WRs retired can post. */
			unsigned int j, nr = full_pass ? nq : x->nb_ready;

			for (j = 0; j < nr && rc >= 0; j++) {
				struct perf_qpst *st;

				q = full_pass ? j : x->ready[j];
				st = &x->st[q];
				st->ready = false;
				while (rc >= 0) {
					uint64_t room = c->depth - (st->posted - st->done);
					uint64_t left = st->limit - st->posted;
					unsigned int n = (unsigned int)RTE_MIN(RTE_MIN(room, left),
									       (uint64_t)pl);

					/* Wait for a full list while a signaled WR in
					 * flight will come back and free room. */
					if (n == 0 || (n < pl && left > n &&
						       st->posted / c->mod > st->done / c->mod))
						break;
					rc = perf_post_list(x, q, c, len, n, false);
					work += (int)n;
				}
			}
			if (!full_pass)
				x->nb_ready = 0;
			full_pass = false;
			if (rc < 0)
				break;
			rc = perf_poll(x, c);
			if (rc < 0)
				break;
			work += rc;
		}
		if (y != NULL && o->test == PERF_SEND) {
			rc = perf_poll(y, c);
			if (rc < 0)
				break;
			work += rc;
		}
		if (x != NULL) {
			done_all = x->retired;
			if (deadline != 0 && target == 0 && rte_rdtsc() >= deadline) {
				/* Time is up: finish at the next signaled WR of each QP. */
				target = 0;
				for (q = 0; q < nq; q++) {
					struct perf_qpst *st = &x->st[q];

					st->limit = RTE_MAX(RTE_ALIGN_CEIL(st->posted, c->mod), 1u);
					target += st->limit;
				}
				full_pass = true;
			}
			if (done_all - window_done >= 4096 || (done_all == target && target)) {
				uint64_t now = rte_rdtsc();

				/* A window is at least 1 ms (completions come in bursts). */
				if (now - window_t0 < hz / 1000 && done_all != target)
					goto windowed;
				double mbps = (double)((done_all - window_done) * len) /
					      ((double)(now - window_t0) / (double)hz) / 1048576.0;

				if (mbps > peak && now > window_t0)
					peak = mbps;
				window_t0 = now;
				window_done = done_all;
			}
windowed:
			if (target != 0 && done_all >= target) {
				/* In loopback SEND, wait for the last receives too
				 * (UC/UD: after the loop, up to the flag). */
				if (y == NULL || o->test != PERF_SEND || y->recvs >= target ||
				    perf_unreliable(o))
					finished = 1;
			}
		} else if (o->test == PERF_SEND) {
			if (rx_first == 0 && y->recvs > 0)
				rx_first = rte_rdtsc();
			if (send_stop != 0 && perf_flag_is(y, send_stop)) {
				/* Every SEND before the flag has its CQE: drain them. */
				while ((rc = perf_poll(y, c)) > 0)
					;
				c->runs++;
				finished = 1;
			} else if (send_stop == 0 && y->recvs >= recv_target) {
				finished = 1;
			}
		} else {
			perf_flag_wait(y, (uint8_t)(++c->runs));   /* passive server */
			finished = 1;
		}
		if (finished)
			break;
		if (work == 0)
			rc = perf_idle_step(c, x != NULL ? x : y, c->loopback ? y : NULL);
	}
	t_end = rte_rdtsc();
	perf_engine_cycles((x != NULL ? x : y)->dev, eng1);
	if (rc < 0)
		return rc;
	rc = 0;
	if (c->loopback && o->test == PERF_SEND && perf_unreliable(o))
		rc = perf_flag_drain(c, x, y);
	if (rc < 0)
		return rc;
	if (y != NULL && o->test == PERF_SEND) {
		out->rx_msgs = y->recvs;
		out->rx_bytes_per_qp = y->bytes_per_qp;
	}
	for (q = 0; x != NULL && q < nq; q++) {
		struct drnic_qp_stats qs;

		if (drnic_qp_stats_get(x->qps[q], &qs) == 0)
			out->rnr_naks += qs.rnr_naks_rx;
	}
	if (x != NULL) {
		out->msgs = done_all;
		out->seconds = (double)(t_end - t0) / (double)hz;
		out->avg_mbps = (double)(len * done_all) / out->seconds / 1048576.0;
		out->peak_mbps = peak > out->avg_mbps ? peak : out->avg_mbps;
		out->mpps = (double)done_all / out->seconds / 1e6;
	} else if (y != NULL && o->test == PERF_SEND) {
		/* The receiving side's own figure, as perftest's send_bw server
		 * prints: from the first receive to the last. */
		out->msgs = y->recvs;
		out->seconds = (double)(t_end - (rx_first ? rx_first : t0)) / (double)hz;
		if (out->seconds > 0) {
			out->avg_mbps = (double)(len * y->recvs) / out->seconds / 1048576.0;
			out->peak_mbps = out->avg_mbps;
			out->mpps = (double)y->recvs / out->seconds / 1e6;
		}
	}
	if (eng1[0] + eng1[1] > eng0[0] + eng0[1]) {
		out->engine_busy = (double)(eng1[0] - eng0[0]) /
				   (double)(eng1[0] - eng0[0] + eng1[1] - eng0[1]);
		if (out->msgs > 0)
			out->engine_ns_per_msg = (double)(eng1[0] - eng0[0]) * 1e9 / (double)hz /
						 (double)out->msgs;
	}
	/* Did the data land? */
	if (c->loopback) {
		switch (o->test) {
		case PERF_WRITE:
		case PERF_SEND:
			if (o->test == PERF_WRITE || y->recvs > 0)
				rc = perf_check_pattern(c->b.buf + c->b.rx_off, len, PERF_ID_A,
							false);
			break;
		case PERF_READ:
			rc = perf_check_pattern(c->a.buf, len, PERF_ID_B, false);
			break;
		case PERF_ATOMIC:
			if (!o->cmp_swap && *(volatile uint64_t *)(void *)(c->b.buf + 2 * c->b.area) !=
					    atomic_before + done_all) {
				fprintf(stderr, "drnic-perf: atomic target %" PRIu64 ", expected %"
					PRIu64 "\n", *(volatile uint64_t *)(void *)(c->b.buf + 2 * c->b.area),
					atomic_before + done_all);
				rc = -EIO;
			}
			break;
		}
	} else {
		if (x != NULL && (o->test != PERF_SEND || o->duration > 0 || perf_unreliable(o)))
			rc = perf_flag_send(c, x, (uint8_t)(++c->runs));
		if (rc == 0)
			rc = drnic_cm_sync(c->cm, "bw-done");
		if (rc == 0)
			rc = perf_flag_done(c, x);
		if (rc == 0 && x == NULL && (o->test == PERF_WRITE || y->recvs > 0))
			rc = perf_check_pattern(c->b.buf + c->b.rx_off, len, PERF_ID_A, false);
		if (rc == 0 && x != NULL && o->test == PERF_READ)
			rc = perf_check_pattern(c->a.buf, len, PERF_ID_B, false);
	}
	return rc;
}

int
perf_run_sizes(const struct perf_opts *o, const uint64_t *sizes, unsigned int n,
	       struct perf_lat *lat, struct perf_bw *bw)
{
	struct perf_conn c;
	uint64_t max = 1;
	unsigned int i;
	int rc;

	for (i = 0; i < n; i++)
		max = RTE_MAX(max, sizes[i]);
	if (max > PERF_AREA_MAX) {
		fprintf(stderr, "drnic-perf: message size %" PRIu64 " above %u\n", max, PERF_AREA_MAX);
		return -E2BIG;
	}
	if (o->events && o->inline_progress && (o->host == NULL && !o->server)) {
		fprintf(stderr, "drnic-perf: -e with --inline in one process would sleep with"
			" nobody to run the engines; use a dedicated engine lcore\n");
		return -EINVAL;
	}
	rc = perf_conn_open(&c, o, max);
	if (rc != 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		uint64_t len = o->test == PERF_ATOMIC ? 8 : (sizes[i] ? sizes[i] : 1);

		if (o->kind == PERF_LAT)
			rc = perf_lat_one(&c, len, &lat[i]);
		else
			rc = perf_bw_one(&c, len, &bw[i]);
		if (rc != 0)
			fprintf(stderr, "drnic-perf: %s %" PRIu64 " B failed: %s\n",
				perf_test_name(o->test, o->kind), len, strerror(-rc));
	}
	perf_conn_close(&c);
	return rc;
}

int
perf_run_lat(const struct perf_opts *o, struct perf_lat *out)
{
	return perf_run_sizes(o, &o->size, 1, out, NULL);
}

int
perf_run_bw(const struct perf_opts *o, struct perf_bw *out)
{
	return perf_run_sizes(o, &o->size, 1, NULL, out);
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
