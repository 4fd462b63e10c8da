/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stateful libFuzzer target: frames into a live engine and QP pair.
 *
 * Two drnic devices (inline progress) on a loopback wire, one RC QP each,
 * connected, with a tap beside each end (the loopback link's tap=E). Each
 * input is a sequence of records; a record is either real traffic (a WRITE,
 * READ, SEND or atomic posted by A, receives posted by B) or a forged frame
 * into A or B: mostly valid (the QP's addresses, P_Key and expected PSN, a
 * registered key and an address inside the victim MR, valid ICRC) with one
 * field wrong, chosen by the input; sometimes a byte of the built frame is
 * flipped (ICRC then bad). After every record the engines run; after every
 * input every QP in error is reset and connected again.
 *
 * Checked after each input: no crash or sanitizer report; the guard zones
 * around every buffer a peer can reach are intact; every completion names
 * one of the QPs and a known status; the mbufs in use come back to what
 * they were (no leak).
 *
 *   record: byte 0 kind, then kind-specific bytes (missing bytes read as 0)
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "drnic_cq.h"
#include "drnic_engine.h"
#include "drnic_env.h"
#include "drnic_event.h"
#include "drnic_verbs.h"
#include "drnic_wire.h"
#include "link_driver.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_BUF (256u * 1024)     /* each side's buffer, between guards */
#define FZ_GUARD 4096u
#define FZ_GUARD_BYTE 0xA5
#define FZ_MAX_RECORDS 16

struct fz_side {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_cq *cq;
	struct drnic_qp *qp;
	uint8_t *alloc;
	uint8_t *buf;
	struct drnic_mr *mr;
	struct drnic_link *tap;      /* injects into this side */
};

static struct fz_side fz[2];     /* 0: A (requester), 1: B (responder) */
static struct rte_mempool *fz_pool;
static unsigned int fz_mbufs_base;
static uint32_t fz_stale_rkey;   /* a key deregistered at start-up */

static struct fz_side *
fz_peer(const struct fz_side *s)
{
	return s == &fz[0] ? &fz[1] : &fz[0];
}

/* One step of the process's inline engines (both devices'). */
static void
fz_progress(unsigned int n)
{
	while (n-- > 0)
		drnic_device_progress(fz[0].dev);
}

static int
fz_connect(struct fz_side *x, struct fz_side *y)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RESET;
	rc = drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
			    DRNIC_ACCESS_REMOTE_ATOMIC;
	rc = drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_ACCESS_FLAGS);
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = DRNIC_MTU_1024;
	a.dest_qp_num = drnic_qp_num(y->qp);
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
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
	a.sq_psn = 100;
	a.timeout = 1;           /* 8 us: a lost answer ends the WQE quickly */
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 4;
	return drnic_modify_qp(x->qp, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT |
			       DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | DRNIC_QP_MAX_QP_RD_ATOMIC);
}

static void
fz_die(const char *what)
{
	fprintf(stderr, "fuzz_engine: %s\n", what);
	abort();
}

static void
fz_side_open(struct fz_side *s, unsigned int i)
{
	struct drnic_config cfg;
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	char v[64];

	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "fz%u", i);
	drnic_config_set(&cfg, "progress", "inline");
	drnic_config_set(&cfg, "link_args", "wire=fzw");
	snprintf(v, sizeof(v), "02:00:00:00:00:%02x", i + 1);
	drnic_config_set(&cfg, "mac", v);
	snprintf(v, sizeof(v), "10.0.0.%u", i + 1);
	drnic_config_set(&cfg, "ipv4", v);
	s->dev = drnic_device_open(&cfg);
	if (s->dev == NULL)
		fz_die("device open");
	s->pd = drnic_alloc_pd(s->dev);
	ca.cqe = 4096;
	ca.socket_id = -1;
	ca.async_queue = drnic_device_async_queue(s->dev);
	s->cq = drnic_cq_create(&ca);
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 64;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 2;
	qa.cap.max_inline_data = 64;
	if (s->pd == NULL || s->cq == NULL || (s->qp = drnic_create_qp(s->pd, &qa)) == NULL)
		fz_die("objects");
	s->alloc = drnic_alloc(FZ_BUF + 2 * FZ_GUARD, 4096, -1);
	if (s->alloc == NULL)
		fz_die("buffer");
	memset(s->alloc, FZ_GUARD_BYTE, FZ_BUF + 2 * FZ_GUARD);
	s->buf = s->alloc + FZ_GUARD;
	s->mr = drnic_reg_mr(s->pd, s->buf, FZ_BUF, DRNIC_ACCESS_LOCAL_WRITE |
			     DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
			     DRNIC_ACCESS_REMOTE_ATOMIC);
	if (s->mr == NULL)
		fz_die("mr");
}

static struct drnic_link *
fz_tap(unsigned int end)
{
	struct link_config cfg = { 0 };
	char name[32], args[32];

	snprintf(name, sizeof(name), "fztap%u", end);
	snprintf(args, sizeof(args), "wire=fzw,tap=%u", end);
	cfg.name = name;
	cfg.args = args;
	cfg.nb_queues = 1;
	cfg.socket_id = SOCKET_ID_ANY;
	cfg.mac[0] = 0x02;
	cfg.mac[5] = 0x66;
	return link_create("loopback", &cfg);
}

static unsigned int
fz_mbufs_in_use(void)
{
	unsigned int avail, size;

	if (drnic_engine_mbuf_count(&avail, &size) != 0)
		return 0;
	return size - avail;
}

/* Drop what the taps saw (copies of both directions). */
static void
fz_tap_drain(void)
{
	struct rte_mbuf *m[32];
	uint16_t n;
	unsigned int i;

	for (i = 0; i < 2; i++)
		while ((n = link_rx_burst(fz[i].tap, 0, m, RTE_DIM(m))) > 0)
			rte_pktmbuf_free_bulk(m, n);
}

static void
fz_check_guards(void)
{
	unsigned int i, k;

	for (i = 0; i < 2; i++)
		for (k = 0; k < FZ_GUARD; k++)
			if (fz[i].alloc[k] != FZ_GUARD_BYTE ||
			    fz[i].buf[FZ_BUF + k] != FZ_GUARD_BYTE)
				fz_die("a guard zone was written");
}

/* Poll both CQs dry; every completion must name its side's QP. */
static void
fz_poll(void)
{
	struct drnic_wc wc[32];
	unsigned int i;
	int n, k;

	for (i = 0; i < 2; i++)
		while ((n = drnic_cq_poll(fz[i].cq, 32, wc)) > 0)
			for (k = 0; k < n; k++)
				if (wc[k].qp_num != drnic_qp_num(fz[i].qp) ||
				    (unsigned int)wc[k].status > DRNIC_WC_TM_RNDV_INCOMPLETE)
					fz_die("a completion with a foreign QP or status");
}

static void
fz_async_drain(void)
{
	struct drnic_async_event ev;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct drnic_async_queue *q = drnic_device_async_queue(fz[i].dev);

		while (drnic_try_get_async_event(q, &ev) == 0)
			drnic_ack_async_event(q, &ev);
	}
}

/* Run the engines until they have nothing to do (two idle steps in a row),
 * polling as they go; at most @p max steps. False: still busy. */
static bool
fz_run_idle(unsigned int max)
{
	unsigned int idle = 0;

	while (idle < 2 && max-- > 0) {
		idle = drnic_device_progress(fz[0].dev) > 0 ? 0 : idle + 1;
		fz_poll();
	}
	return idle >= 2;
}

/* Both QPs through ERR (everything in flight flushed) and connected again. */
static void
fz_reconnect(void)
{
	struct drnic_qp_attr a = { .qp_state = DRNIC_QPS_ERR };

	drnic_modify_qp(fz[0].qp, &a, DRNIC_QP_STATE);
	drnic_modify_qp(fz[1].qp, &a, DRNIC_QP_STATE);
	fz_run_idle(4096);
	fz_async_drain();
	if (fz_connect(&fz[0], &fz[1]) < 0 || fz_connect(&fz[1], &fz[0]) < 0)
		fz_die("reconnect");
}

/* Back to a clean, connected pair: everything in flight finishes or is
 * flushed, both QPs reset and connected again when either is in error. */
static void
fz_settle(void)
{
	/* A pair still busy after a few hundred steps is going back and forth
	 * over what the input broke (go-backs, retries): flushed instead, so
	 * an input costs what it tests, not a retry storm's length. */
	bool idle = fz_run_idle(256);

	fz_tap_drain();
	fz_async_drain();
	if (!idle || drnic_qp_state(fz[0].qp) != DRNIC_QPS_RTS ||
	    drnic_qp_state(fz[1].qp) != DRNIC_QPS_RTS)
		fz_reconnect();
	fz_tap_drain();
}

/*
 * The leak check. After an input frames may still be in flight (a WQE
 * waiting for its timer), and each engine keeps up to a burst of mbufs
 * cached: a loose bound every input, an exact one now and then, after
 * both QPs were flushed and nothing can be in flight.
 */
#define FZ_CACHED (2u * 32)   /* two inline engines, a burst cached each */
static void
fz_check_mbufs(void)
{
	static unsigned int inputs;
	unsigned int used = fz_mbufs_in_use(), bound = fz_mbufs_base + FZ_CACHED + 256;

	if (++inputs % 1024 == 0) {
		fz_reconnect();
		fz_run_idle(16384);
		fz_tap_drain();
		used = fz_mbufs_in_use();
		bound = fz_mbufs_base + FZ_CACHED;
	}
	if (used > bound) {
		fprintf(stderr, "fuzz_engine: %u mbufs in use (bound %u) after %u inputs\n", used,
			bound, inputs);
		fz_die("mbufs leaked");
	}
}

/* At exit, everything closed: the objects' pointers live in DPDK memory,
 * which LeakSanitizer does not scan, so what is left open looks lost. */
static void
fz_close(void)
{
	unsigned int i;

	fz_reconnect();
	fz_run_idle(4096);
	fz_tap_drain();
	fz_async_drain();
	for (i = 0; i < 2; i++) {
		link_destroy(fz[i].tap);
		drnic_destroy_qp(fz[i].qp);
		drnic_dereg_mr(fz[i].mr);
		drnic_cq_destroy(fz[i].cq);
		drnic_dealloc_pd(fz[i].pd);
		drnic_device_close(fz[i].dev);
		drnic_free(fz[i].alloc);
	}
	rte_mempool_free(fz_pool);
	drnic_env_fini();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const extra[] = { "--no-telemetry", NULL };
	/* FUZZ_ENGINE_LCORE: the CPU of this worker (EAL pins the thread), so
	 * that workers run side by side; default 0. */
	const char *lcore = getenv("FUZZ_ENGINE_LCORE");
	struct drnic_env_opts o = { .name = "fuzz_engine", .lcores = lcore ? lcore : "0",
				    .mem_mb = 256, .extra_args = extra,
				    .log_level = RTE_LOG_EMERG };
	struct drnic_mr *stale;
	int rc;

	(void)argc;
	(void)argv;
	setenv("DRNIC_NO_HUGE", "1", 0);
	rc = drnic_env_init(&o, NULL);
	if (rc < 0)
		fz_die("EAL");
	fz_side_open(&fz[0], 0);
	fz_side_open(&fz[1], 1);
	fz[0].tap = fz_tap(0);
	fz[1].tap = fz_tap(1);
	fz_pool = rte_pktmbuf_pool_create("fz_pool", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE + 8192,
					  SOCKET_ID_ANY);
	if (fz[0].tap == NULL || fz[1].tap == NULL || fz_pool == NULL)
		fz_die("taps");
	stale = drnic_reg_mr(fz[1].pd, fz[1].buf, 4096, DRNIC_ACCESS_LOCAL_WRITE |
			     DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ);
	if (stale == NULL)
		fz_die("stale mr");
	fz_stale_rkey = drnic_mr_rkey(stale);
	drnic_dereg_mr(stale);
	if (fz_connect(&fz[0], &fz[1]) < 0 || fz_connect(&fz[1], &fz[0]) < 0)
		fz_die("connect");
	fz_settle();
	fz_mbufs_base = fz_mbufs_in_use();
	atexit(fz_close);
	return 0;
}

/* Bytes of the input, read as 0 past its end. */
struct fz_in {
	const uint8_t *p;
	size_t n, off;
};

static uint8_t
fz_u8(struct fz_in *in)
{
	return in->off < in->n ? in->p[in->off++] : 0;
}

static uint32_t
fz_u32(struct fz_in *in)
{
	uint32_t v = fz_u8(in);

	v |= (uint32_t)fz_u8(in) << 8;
	v |= (uint32_t)fz_u8(in) << 16;
	return v | (uint32_t)fz_u8(in) << 24;
}

/* Real traffic: A posts one WR, or B posts receives. */
static void
fz_real(struct fz_in *in)
{
	uint8_t what = fz_u8(in), sz = fz_u8(in);
	uint32_t len = (uint32_t)(sz % 3) * 1024 + fz_u8(in) * 3;
	struct drnic_sge sge = { (uintptr_t)fz[0].buf, len, drnic_mr_lkey(fz[0].mr) };
	struct drnic_send_wr wr = { 0 }, *bad;

	if (what % 5 == 4) {
		struct drnic_sge rs = { (uintptr_t)fz[1].buf + 65536, 65536, drnic_mr_lkey(fz[1].mr) };
		struct drnic_recv_wr rw = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *rbad;

		drnic_post_recv(fz[1].qp, &rw, &rbad);
		return;
	}
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)fz[1].buf;
	wr.wr.rdma.rkey = drnic_mr_rkey(fz[1].mr);
	switch (what % 5) {
	case 0:
		wr.opcode = DRNIC_WR_RDMA_WRITE;
		break;
	case 1:
		wr.opcode = DRNIC_WR_RDMA_READ;
		break;
	case 2:
		wr.opcode = DRNIC_WR_SEND;
		sge.length = RTE_MIN(len, 65536u);
		break;
	default:
		wr.opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
		sge.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)fz[1].buf + 8 * (sz % 64);
		wr.wr.atomic.rkey = drnic_mr_rkey(fz[1].mr);
		wr.wr.atomic.compare_add = 1;
		break;
	}
	drnic_post_send(fz[0].qp, &wr, &bad);
}

/* Request opcodes a forged frame may carry (index by the input). */
static const uint8_t fz_req_ops[] = {
	DRNIC_WIRE_OP_RC_SEND_FIRST, DRNIC_WIRE_OP_RC_SEND_MIDDLE, DRNIC_WIRE_OP_RC_SEND_LAST,
	DRNIC_WIRE_OP_RC_SEND_ONLY, DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_IMMEDIATE,
	DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_INVALIDATE, DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST,
	DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST,
	DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, DRNIC_WIRE_OP_RC_COMPARE_SWAP,
	DRNIC_WIRE_OP_RC_FETCH_ADD,
};
static const uint8_t fz_resp_ops[] = {
	DRNIC_WIRE_OP_RC_ACKNOWLEDGE, DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE,
	DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
	DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY,
};

/* A forged frame into side @p to: valid but for what the input says. */
static void
fz_forge(struct fz_in *in, unsigned int to)
{
	static uint8_t payload[4096];
	struct fz_side *dst = &fz[to], *src = fz_peer(dst);
	struct drnic_qp_stats st;
	struct drnic_wire_pkt p;
	struct drnic_wire_sge sg;
	struct rte_mbuf *m;
	uint8_t op = fz_u8(in), wrong = fz_u8(in), plen = fz_u8(in), psn_d = fz_u8(in);
	uint32_t val = fz_u32(in), off = fz_u32(in) % (FZ_BUF + 64);
	union drnic_gid g;
	unsigned int i;

	drnic_qp_stats_get(dst->qp, &st);
	drnic_wire_pkt_init(&p);
	memcpy(p.eth.src, (uint8_t[6]){ 0x02, 0, 0, 0, 0, (uint8_t)(1 + (src - fz)) }, 6);
	memcpy(p.eth.dst, (uint8_t[6]){ 0x02, 0, 0, 0, 0, (uint8_t)(1 + to) }, 6);
	drnic_query_gid(src->dev, 1, 0, &g);
	memcpy(p.ip.src, &g.raw[12], 4);
	drnic_query_gid(dst->dev, 1, 0, &g);
	memcpy(p.ip.dst, &g.raw[12], 4);
	p.udp.sport = 0xC123;
	p.bth.dqpn = drnic_qp_num(dst->qp);
	if (op & 0x80) {
		p.bth.opcode = fz_resp_ops[op % RTE_DIM(fz_resp_ops)];
		p.bth.psn = (st.next_psn - 1 - (psn_d & 7) + (psn_d >> 3)) & DRNIC_PSN_MASK;
		p.aeth.syndrome = (uint8_t)(val & 0x3 ? 0x1F : val >> 8);
		p.aeth.msn = val >> 16;
		p.atomic_orig = val;
	} else {
		p.bth.opcode = fz_req_ops[op % RTE_DIM(fz_req_ops)];
		p.bth.psn = (st.expected_psn + (int8_t)psn_d / 32) & DRNIC_PSN_MASK;
		p.bth.ackreq = (psn_d & 1) != 0;
		p.reth.va = (uintptr_t)dst->buf + off;
		p.reth.rkey = drnic_mr_rkey(dst->mr);
		p.reth.dmalen = plen * 64u;
		p.atomic.va = (uintptr_t)dst->buf + (off & ~7u);
		p.atomic.rkey = drnic_mr_rkey(dst->mr);
		p.atomic.swap_add = val;
		p.atomic.cmp = 0;
		p.ieth_rkey = drnic_mr_rkey(dst->mr);
	}
	p.imm = val;
	/* One field wrong (or none). */
	switch (wrong % 16) {
	case 1: p.ip.src[3] ^= (uint8_t)(val | 1); break;
	case 2: p.ip.dst[3] ^= (uint8_t)(val | 1); break;
	case 3: p.bth.pkey = (uint16_t)val; break;
	case 4: p.eth.dst[5] ^= 0x40; break;
	case 5: p.eth.has_vlan = true; p.eth.vlan_tci = (uint16_t)val; break;
	case 6: p.bth.psn = val & DRNIC_PSN_MASK; break;
	case 7: p.reth.rkey = val; p.atomic.rkey = val; break;
	case 8: p.reth.rkey = fz_stale_rkey; p.atomic.rkey = fz_stale_rkey; break;
	case 9: p.reth.va = val; p.atomic.va = val; break;
	case 10: p.reth.dmalen = val; break;
	case 11: p.bth.dqpn = val & DRNIC_QPN_MASK; break;
	case 12: p.ip.version = 6; break;
	default: break;
	}
	for (i = 0; i < sizeof(payload) && i < 64; i++)
		payload[i] = (uint8_t)(val + i);
	sg.addr = payload;
	sg.len = RTE_MIN((uint32_t)plen * 16u, 1024u);
	if (!(drnic_wire_opcode_info(p.bth.opcode)->flags & DRNIC_WIRE_OPF_PAYLOAD))
		sg.len = 0;
	p.sg = sg.len > 0 ? &sg : NULL;
	p.sg_cnt = sg.len > 0;
	m = rte_pktmbuf_alloc(fz_pool);
	if (m == NULL)
		fz_die("pool");
	if (drnic_wire_build(m, &p) < 0) {
		rte_pktmbuf_free(m);
		return;
	}
	if ((wrong & 0xF0) == 0xF0 && m->data_len > 0) {   /* and a flipped byte */
		uint8_t *b = rte_pktmbuf_mtod(m, uint8_t *);

		b[val % m->data_len] ^= (uint8_t)(1u << (val >> 29));
	}
	if (link_tx_burst(dst->tap, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size, 0 };
	unsigned int records = 0;

	while (in.off < in.n && records++ < FZ_MAX_RECORDS) {
		uint8_t kind = fz_u8(&in);

		switch (kind % 4) {
		case 0:
			fz_real(&in);
			break;
		case 1:
		case 2:
			fz_forge(&in, 1);   /* requests to B, mostly */
			break;
		default:
			fz_forge(&in, kind & 4 ? 1 : 0);
			break;
		}
		fz_progress(1 + ((kind >> 4) & 3));   /* 1 to 4 steps between records */
		fz_poll();
	}
	fz_settle();
	fz_check_guards();
	fz_check_mbufs();
	return 0;
}
