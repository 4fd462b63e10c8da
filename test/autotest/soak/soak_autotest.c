/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soak: RC through a lossy loopback link (issue 4).
 *
 * Two devices on one loopback wire, dedicated progress (their engines share
 * the first worker lcore; this thread is the application), SOAK_QPS QP pairs.
 * Side A posts a deterministic stream of messages on every QP (SEND,
 * SEND_WITH_IMM, WRITE, WRITE_WITH_IMM, READ, CMP_SWAP, FETCH_ADD; sizes
 * 0..1 MiB, most small, many at path-MTU boundaries); side B keeps its
 * receive queues full. The link drops, reorders, duplicates and corrupts
 * frames (seeded). Checked:
 *  - every send WR completes once, in order per QP (wr_id = sequence), with
 *    SUCCESS; every receive completes in order with the right length and
 *    immediate;
 *  - every destination byte: SEND payloads in B's receive buffers, WRITE
 *    payloads in B's memory when A's completion arrives (payload bytes are a
 *    function of (qp, sequence)), READ results against B's source memory;
 *  - atomics: each returns the value the stream predicts, and every counter
 *    ends at its predicted value (an atomic executed twice would show);
 *  - after the devices close, every mbuf is back in the engine pool.
 * Prints goodput, injected faults and recovery counters.
 *
 * soak_rc_autotest: SOAK_MESSAGES (env, default 1,000,000) messages with 1%
 * drop, 1% reorder, 0.5% dup, 0.1% corrupt.
 * soak_goodput_sweep_autotest: a shorter run at 0, 0.1%, 1%, 5% loss,
 * printed as a table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_errno.h>

#include "test.h"
#include "drnic_engine.h"
#include "drnic_link.h"
#include "drnic_link_fault.h"
#include "drnic_verbs.h"

#define SOAK_QPS 8
#define SOAK_SLOTS 32                    /* send WRs in flight per QP */
#define SOAK_RECVS 64                    /* receives posted per QP */
#define SOAK_SMALL (64u << 10)           /* slot size */
#define SOAK_BIG (1u << 20)              /* the one big slot per QP */
#define SOAK_MTU 1024u

/* Layout of one QP's area on side A: slots, big slot, atomic results. */
#define A_BIG_OFF ((size_t)SOAK_SLOTS * SOAK_SMALL)
#define A_ATOM_OFF (A_BIG_OFF + SOAK_BIG)
#define A_AREA (A_ATOM_OFF + 4096)
/* On side B: WRITE targets (same layout as A), receive slots, READ
 * source, atomic counter. */
#define B_RECV_OFF (A_BIG_OFF + SOAK_BIG)
#define B_RSRC_OFF (B_RECV_OFF + (size_t)SOAK_RECVS * SOAK_SMALL)
#define B_RSRC_LEN (SOAK_BIG + SOAK_SMALL)
#define B_CNT_OFF (B_RSRC_OFF + B_RSRC_LEN)
#define B_AREA (B_CNT_OFF + 4096)

enum soak_op { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS, OP_FAA, OP_N };

/* One message of the stream, a function of (qp, seq). */
struct soak_msg {
	enum soak_op op;
	uint32_t len;
	uint32_t imm;
	uint32_t roff;        /* READ: offset in B's source */
	uint64_t add;         /* FAA: addend; CAS: swap value */
	bool cas_match;       /* CAS: compare with the current value */
};

/* What A remembers of a WR in flight. */
struct soak_wr {
	uint64_t seq;
	struct soak_msg m;
	uint64_t exp_orig;    /* atomics: the original value expected */
	uint8_t *lbuf;        /* A's buffer of the WR */
	uint8_t *rbuf;        /* B's memory it targets (WRITE, READ source) */
};

struct soak_qp {
	struct drnic_qp *qa, *qb;
	uint8_t *a_area, *b_area;
	uint64_t next_seq;    /* next to post */
	uint64_t done_seq;    /* next to complete at A */
	uint64_t recv_seq;    /* stream position of the last receive-consuming message + 1 */
	uint64_t recvs;       /* receives completed at B */
	uint64_t counter;     /* predicted value of B's counter */
	bool big_busy;
	struct soak_wr wr[SOAK_SLOTS];
};

struct soak_side {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_cq *cq;
	uint8_t *buf;
	size_t len;
	struct drnic_mr *mr;
};

struct soak_run {
	const char *faults;   /* fault_ keys for link_args, "" for none */
	uint64_t nmsg;        /* messages in all (split over the QPs) */
	bool quiet;
	/* Results. */
	uint64_t bytes;
	uint64_t ops[OP_N];
	double secs;
	struct drnic_link_fault_stats fa, fb;
	uint64_t retransmits, timeouts, early, naks_rx, rnr_naks, naks_tx, icrc_drops;
};

static unsigned int soak_seq;
static uint8_t soak_scratch[SOAK_BIG + SOAK_SMALL];

static double
soak_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t
soak_mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Payload bytes of message (q, seq): a cheap stream of 64-bit words. */
static void
soak_pattern(uint8_t *dst, uint32_t len, unsigned int q, uint64_t seq)
{
	uint64_t k = soak_mix(((uint64_t)q << 48) ^ seq), w = k | 1;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		w = w * 6364136223846793005ull + k;
		memcpy(dst + i, &w, 8);
	}
	if (i < len) {
		w = w * 6364136223846793005ull + k;
		memcpy(dst + i, &w, len - i);
	}
}

static bool
soak_check_pattern(const uint8_t *p, uint32_t len, unsigned int q, uint64_t seq)
{
	soak_pattern(soak_scratch, len, q, seq);
	return memcmp(p, soak_scratch, len) == 0;
}

static void
soak_gen(unsigned int q, uint64_t seq, struct soak_msg *m)
{
	uint64_t r = soak_mix(((uint64_t)q << 56) ^ (seq * 0x100000001B3ull) ^ 0x50A4),
		 r2 = soak_mix(r), r3 = soak_mix(r2);
	unsigned int p = (unsigned int)(r % 100), s = (unsigned int)((r >> 8) % 1000);

	memset(m, 0, sizeof(*m));
	m->op = p < 25 ? OP_SEND : p < 35 ? OP_SEND_IMM : p < 60 ? OP_WRITE :
		p < 70 ? OP_WRITE_IMM : p < 86 ? OP_READ : p < 93 ? OP_CAS : OP_FAA;
	if (s < 650)
		m->len = (uint32_t)(r2 % 257);                                  /* 0..256 */
	else if (s < 900)
		m->len = (uint32_t)(1 + r2 % 8) * SOAK_MTU + (uint32_t)(r3 % 3) - 1; /* MTU edges */
	else if (s < 998)
		m->len = 8192 + (uint32_t)(r2 % (32768 - 8192 + 1));            /* 8..32 KiB */
	else
		m->len = SOAK_SMALL + (uint32_t)(r2 % (SOAK_BIG - SOAK_SMALL + 1)); /* ..1 MiB */
	if ((m->op == OP_SEND || m->op == OP_SEND_IMM) && m->len > SOAK_SMALL)
		m->len = SOAK_SMALL;           /* receive buffers are one slot */
	m->imm = (uint32_t)(r3 >> 32);
	m->roff = (uint32_t)(r3 % SOAK_SMALL);
	m->add = r3 >> 8;
	m->cas_match = (r3 & 1) != 0;
	if (m->op == OP_CAS || m->op == OP_FAA)
		m->len = 8;
}

static bool
soak_op_recv(enum soak_op op)
{
	return op == OP_SEND || op == OP_SEND_IMM || op == OP_WRITE_IMM;
}

static int
soak_side_open(struct soak_side *s, const char *name, const char *args, uint8_t last, size_t len)
{
	struct drnic_config cfg;
	struct drnic_cq_attr ca = { 0 };
	char v[64];

	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "%s", name);
	if (drnic_config_set(&cfg, "progress", "dedicated") < 0 ||
	    drnic_config_set(&cfg, "link_args", args) < 0)
		return -EINVAL;
	snprintf(v, sizeof(v), "02:00:00:00:50:%02x", last);
	drnic_config_set(&cfg, "mac", v);
	snprintf(v, sizeof(v), "10.0.50.%u", last);
	drnic_config_set(&cfg, "ipv4", v);
	s->dev = drnic_device_open(&cfg);
	if (s->dev == NULL)
		return -rte_errno;
	s->pd = drnic_alloc_pd(s->dev);
	ca.cqe = 4096;
	ca.socket_id = -1;
	ca.async_queue = drnic_device_async_queue(s->dev);
	s->cq = drnic_cq_create(&ca);
	if (s->pd == NULL || s->cq == NULL)
		return -ENOMEM;
	s->len = len;
	s->buf = drnic_alloc(len, 4096, -1);
	if (s->buf == NULL)
		return -ENOMEM;
	s->mr = drnic_reg_mr(s->pd, s->buf, len,
			     DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
			     DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC);
	return s->mr == NULL ? -ENOMEM : 0;
}

static struct drnic_qp *
soak_qp_create(struct soak_side *s)
{
	struct drnic_qp_init_attr qa = { 0 };

	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.cap.max_send_wr = SOAK_SLOTS;
	qa.cap.max_recv_wr = SOAK_RECVS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	return drnic_create_qp(s->pd, &qa);
}

static uint64_t
soak_env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? strtoull(v, NULL, 0) : def;
}

static int
soak_connect(struct drnic_qp *x, struct soak_side *peer, struct drnic_qp *y)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
			    DRNIC_ACCESS_REMOTE_ATOMIC;
	rc = drnic_modify_qp(x, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_ACCESS_FLAGS);
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = DRNIC_MTU_1024;
	a.dest_qp_num = drnic_qp_num(y);
	a.rq_psn = 0xFFFF00 + drnic_qp_num(y);    /* wraps early */
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	drnic_query_gid(peer->dev, 1, 0, &a.ah_attr.grh.dgid);
	rc = drnic_modify_qp(x, &a, DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU |
			     DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN | DRNIC_QP_MAX_DEST_RD_ATOMIC |
			     DRNIC_QP_MIN_RNR_TIMER);
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = 0xFFFF00 + drnic_qp_num(x);
	a.timeout = (uint8_t)soak_env_u64("SOAK_TIMEOUT", 12);
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	return drnic_modify_qp(x, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT |
			       DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | DRNIC_QP_MAX_QP_RD_ATOMIC);
}

static int
soak_post_recv(struct soak_side *b, struct soak_qp *sq, uint64_t n)
{
	struct drnic_sge sge;
	struct drnic_recv_wr wr = { 0 }, *bad;

	sge.addr = (uintptr_t)(sq->b_area + B_RECV_OFF + (n % SOAK_RECVS) * SOAK_SMALL);
	sge.length = SOAK_SMALL;
	sge.lkey = drnic_mr_lkey(b->mr);
	wr.wr_id = n;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return drnic_post_recv(sq->qb, &wr, &bad);
}

/* Post message sq->next_seq if its slot is free. Returns 1 posted, 0 not now. */
static int
soak_post_one(struct soak_side *a, struct soak_side *b, struct soak_qp *sq, unsigned int q,
	      struct soak_run *run)
{
	uint64_t seq = sq->next_seq;
	struct soak_wr *w = &sq->wr[seq % SOAK_SLOTS];
	struct drnic_send_wr wr = { 0 }, *bad;
	struct drnic_sge sge;
	bool big;
	size_t off;
	int rc;

	if (seq - sq->done_seq >= SOAK_SLOTS)
		return 0;
	w->seq = seq;
	soak_gen(q, seq, &w->m);
	big = w->m.len > SOAK_SMALL;
	if (big && sq->big_busy)
		return 0;
	off = big ? A_BIG_OFF : (seq % SOAK_SLOTS) * SOAK_SMALL;
	w->lbuf = sq->a_area + off;
	w->rbuf = sq->b_area + off;
	sge.addr = (uintptr_t)w->lbuf;
	sge.length = w->m.len;
	sge.lkey = drnic_mr_lkey(a->mr);
	wr.wr_id = seq;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	switch (w->m.op) {
	case OP_SEND:
	case OP_SEND_IMM:
		soak_pattern(w->lbuf, w->m.len, q, seq);
		wr.opcode = w->m.op == OP_SEND ? DRNIC_WR_SEND : DRNIC_WR_SEND_WITH_IMM;
		wr.imm_data = w->m.imm;
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		soak_pattern(w->lbuf, w->m.len, q, seq);
		wr.opcode = w->m.op == OP_WRITE ? DRNIC_WR_RDMA_WRITE :
			    DRNIC_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = w->m.imm;
		wr.wr.rdma.remote_addr = (uintptr_t)w->rbuf;
		wr.wr.rdma.rkey = drnic_mr_rkey(b->mr);
		break;
	case OP_READ:
		w->rbuf = sq->b_area + B_RSRC_OFF + w->m.roff;
		memset(w->lbuf, 0xEE, RTE_MIN(w->m.len, 64u));
		wr.opcode = DRNIC_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)w->rbuf;
		wr.wr.rdma.rkey = drnic_mr_rkey(b->mr);
		break;
	default:
		w->lbuf = sq->a_area + A_ATOM_OFF + (seq % SOAK_SLOTS) * 8;
		sge.addr = (uintptr_t)w->lbuf;
		memset(w->lbuf, 0xEE, 8);
		w->exp_orig = sq->counter;
		wr.wr.atomic.remote_addr = (uintptr_t)(sq->b_area + B_CNT_OFF);
		wr.wr.atomic.rkey = drnic_mr_rkey(b->mr);
		if (w->m.op == OP_FAA) {
			wr.opcode = DRNIC_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.compare_add = w->m.add;
			sq->counter += w->m.add;
		} else {
			wr.opcode = DRNIC_WR_ATOMIC_CMP_AND_SWP;
			wr.wr.atomic.compare_add = w->m.cas_match ? sq->counter : ~sq->counter;
			wr.wr.atomic.swap = w->m.add;
			if (w->m.cas_match)
				sq->counter = w->m.add;
		}
		break;
	}
	rc = drnic_post_send(sq->qa, &wr, &bad);
	if (rc < 0) {
		printf("qp %u seq %" PRIu64 ": post_send: %s\n", q, seq, strerror(-rc));
		return rc;
	}
	if (big)
		sq->big_busy = true;
	sq->next_seq++;
	run->ops[w->m.op]++;
	run->bytes += w->m.len;
	return 1;
}

static int
soak_qp_index(struct soak_qp *qps, uint32_t qpn, bool side_a)
{
	unsigned int q;

	for (q = 0; q < SOAK_QPS; q++)
		if (drnic_qp_num(side_a ? qps[q].qa : qps[q].qb) == qpn)
			return (int)q;
	return -1;
}

/* A send completion at A: in order, SUCCESS, and the bytes. */
static int
soak_complete_send(struct soak_qp *qps, const struct drnic_wc *wc)
{
	int q = soak_qp_index(qps, wc->qp_num, true);
	struct soak_qp *sq;
	struct soak_wr *w;
	uint64_t orig;

	TEST_ASSERT(q >= 0, "completion for unknown QP %u", wc->qp_num);
	sq = &qps[q];
	TEST_ASSERT_EQUAL(wc->status, DRNIC_WC_SUCCESS, "qp %d wr %" PRIu64 ": %s", q, wc->wr_id,
			  drnic_wc_status_str(wc->status));
	TEST_ASSERT_EQUAL(wc->wr_id, sq->done_seq, "qp %d: completion out of order", q);
	w = &sq->wr[sq->done_seq % SOAK_SLOTS];
	switch (w->m.op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		TEST_ASSERT(soak_check_pattern(w->rbuf, w->m.len, (unsigned int)q, w->seq),
			    "qp %d seq %" PRIu64 ": WRITE of %u bytes: target differs", q, w->seq,
			    w->m.len);
		break;
	case OP_READ:
		TEST_ASSERT_EQUAL(wc->byte_len, w->m.len, "READ length");
		TEST_ASSERT(memcmp(w->lbuf, w->rbuf, w->m.len) == 0,
			    "qp %d seq %" PRIu64 ": READ of %u bytes at %u: result differs", q,
			    w->seq, w->m.len, w->m.roff);
		break;
	case OP_CAS:
	case OP_FAA:
		memcpy(&orig, w->lbuf, 8);
		TEST_ASSERT_EQUAL(orig, w->exp_orig, "qp %d seq %" PRIu64 ": atomic original", q,
				  w->seq);
		break;
	default:
		break;
	}
	if (w->m.len > SOAK_SMALL)
		sq->big_busy = false;
	sq->done_seq++;
	return TEST_SUCCESS;
}

/* A receive completion at B: the next receive-consuming message of the stream. */
static int
soak_complete_recv(struct soak_side *b, struct soak_qp *qps, const struct drnic_wc *wc)
{
	int q = soak_qp_index(qps, wc->qp_num, false);
	struct soak_qp *sq;
	struct soak_msg m;
	uint64_t seq;
	const uint8_t *slot;

	TEST_ASSERT(q >= 0, "receive for unknown QP %u", wc->qp_num);
	sq = &qps[q];
	TEST_ASSERT_EQUAL(wc->status, DRNIC_WC_SUCCESS, "qp %d recv %" PRIu64 ": %s", q, wc->wr_id,
			  drnic_wc_status_str(wc->status));
	TEST_ASSERT_EQUAL(wc->wr_id, sq->recvs, "qp %d: receive out of order", q);
	for (seq = sq->recv_seq;; seq++) {
		soak_gen((unsigned int)q, seq, &m);
		if (soak_op_recv(m.op))
			break;
	}
	sq->recv_seq = seq + 1;
	TEST_ASSERT_EQUAL(wc->byte_len, m.len, "qp %d seq %" PRIu64 ": receive length", q, seq);
	if (m.op == OP_SEND) {
		TEST_ASSERT(!(wc->wc_flags & DRNIC_WC_WITH_IMM), "SEND with an immediate");
	} else {
		TEST_ASSERT(wc->wc_flags & DRNIC_WC_WITH_IMM, "no immediate");
		TEST_ASSERT_EQUAL(wc->imm_data, m.imm, "qp %d seq %" PRIu64 ": immediate", q, seq);
	}
	if (m.op != OP_WRITE_IMM) {
		slot = sq->b_area + B_RECV_OFF + (sq->recvs % SOAK_RECVS) * SOAK_SMALL;
		TEST_ASSERT(soak_check_pattern(slot, m.len, (unsigned int)q, seq),
			    "qp %d seq %" PRIu64 ": SEND of %u bytes: payload differs", q, seq,
			    m.len);
	} else {
		TEST_ASSERT_EQUAL(wc->opcode, DRNIC_WC_RECV_RDMA_WITH_IMM, "opcode");
	}
	sq->recvs++;
	TEST_ASSERT_SUCCESS(soak_post_recv(b, sq, sq->recvs + SOAK_RECVS - 1), "repost");
	return TEST_SUCCESS;
}

static void
soak_side_close(struct soak_side *s)
{
	if (s->mr != NULL)
		drnic_dereg_mr(s->mr);
	drnic_free(s->buf);
	if (s->cq != NULL)
		drnic_cq_destroy(s->cq);
	if (s->pd != NULL)
		drnic_dealloc_pd(s->pd);
	if (s->dev != NULL && drnic_device_close(s->dev) < 0)
		printf("device_close failed\n");
	memset(s, 0, sizeof(*s));
}

static void
soak_counters(struct soak_qp *qps, struct soak_run *run, struct soak_side *a, struct soak_side *b)
{
	struct drnic_engine_stats es;
	struct drnic_qp_stats st;
	unsigned int q, side;

	for (q = 0; q < SOAK_QPS; q++)
		for (side = 0; side < 2; side++) {
			struct drnic_qp *qp = side ? qps[q].qb : qps[q].qa;

			if (qp == NULL || drnic_qp_stats_get(qp, &st) < 0)
				continue;
			run->retransmits += st.retransmits;
			run->timeouts += st.timeouts;
			run->early += st.early_retransmits;
			run->naks_rx += st.naks_rx;
			run->rnr_naks += st.rnr_naks_rx;
			run->naks_tx += st.naks_tx;
		}
	/* Both devices share one engine: its totals once. */
	if (drnic_engine_stats_get(a->dev, 0, &es) == 0)
		for (side = 1; side < DRNIC_WIRE_DROP_MAX; side++)
			run->icrc_drops += es.wire_drops[side];
	drnic_link_fault_stats(drnic_device_link(a->dev), &run->fa);
	drnic_link_fault_stats(drnic_device_link(b->dev), &run->fb);
	RTE_SET_USED(b);
}

/* After a failure: what the engine and the QPs counted. */
static void
soak_diag(struct soak_qp *qps, struct soak_side *a)
{
	struct drnic_engine_stats es;
	struct drnic_qp_stats st;
	unsigned int q, i;

	if (drnic_engine_stats_get(a->dev, 0, &es) == 0) {
		printf("engine: rx %" PRIu64 " tx %" PRIu64 " nomem %" PRIu64 " loops %" PRIu64
		       " busy %" PRIu64 "\n", es.rx_packets, es.tx_packets, es.nomem, es.loops,
		       es.busy_loops);
		for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++)
			if (es.drops[i])
				printf("  drop %s %" PRIu64 "\n",
				       drnic_engine_drop_name((enum drnic_engine_drop)i), es.drops[i]);
	}
	for (q = 0; q < SOAK_QPS; q++)
		if (qps[q].qa != NULL && drnic_qp_stats_get(qps[q].qa, &st) == 0)
			printf("qp %u: tx %" PRIu64 " rx %" PRIu64 " acks %" PRIu64 " naks %" PRIu64
			       " rnr %" PRIu64 " goback %" PRIu64 " timeouts %" PRIu64 "\n", q,
			       st.tx_packets, st.rx_packets, st.acks_rx, st.naks_rx, st.rnr_naks_rx,
			       st.retransmits, st.timeouts);
	for (q = 0; q < SOAK_QPS; q++)
		if (qps[q].next_seq != qps[q].done_seq) {
			drnic_qp_dump(qps[q].qa, stdout);
			drnic_qp_dump(qps[q].qb, stdout);
		}
}

static int
soak_run(struct soak_run *run)
{
	struct soak_side a = { 0 }, b = { 0 };
	static struct soak_qp qps[SOAK_QPS];
	struct drnic_wc wc[64];
	unsigned int seq = soak_seq++, q, i;
	uint64_t per_qp = (run->nmsg + SOAK_QPS - 1) / SOAK_QPS, done = 0, last_done = 0;
	double t0, last_progress, next_report;
	char args[256], na[32], nb[32];
	unsigned int avail, size;
	int rc = TEST_FAILED, n;
	uint64_t idle_polls = 0;

	memset(qps, 0, sizeof(qps));
	snprintf(na, sizeof(na), "soak%ua", seq);
	snprintf(nb, sizeof(nb), "soak%ub", seq);
	snprintf(args, sizeof(args), "wire=soakw%u%s%s,fault_seed=%u", seq,
		 run->faults[0] ? "," : "", run->faults, 4242 + seq);
	if (soak_side_open(&a, na, args, 1, A_AREA * SOAK_QPS) < 0 ||
	    soak_side_open(&b, nb, args, 2, B_AREA * SOAK_QPS) < 0) {
		printf("cannot open the devices (%s)\n", args);
		goto out;
	}
	for (q = 0; q < SOAK_QPS; q++) {
		struct soak_qp *sq = &qps[q];
		uint64_t v = 0x1000 * q;

		sq->a_area = a.buf + A_AREA * q;
		sq->b_area = b.buf + B_AREA * q;
		soak_pattern(sq->b_area + B_RSRC_OFF, B_RSRC_LEN, q + 100, 0);
		memcpy(sq->b_area + B_CNT_OFF, &v, 8);
		sq->counter = v;
		sq->qa = soak_qp_create(&a);
		sq->qb = soak_qp_create(&b);
		if (sq->qa == NULL || sq->qb == NULL || soak_connect(sq->qa, &b, sq->qb) < 0 ||
		    soak_connect(sq->qb, &a, sq->qa) < 0) {
			printf("cannot set up QP pair %u\n", q);
			goto out;
		}
		for (i = 0; i < SOAK_RECVS; i++)
			if (soak_post_recv(&b, sq, i) < 0) {
				printf("post_recv failed\n");
				goto out;
			}
	}

	t0 = soak_now();
	last_progress = t0;
	next_report = t0 + 10;
	while (done < per_qp * SOAK_QPS) {
		double now;

		for (q = 0; q < SOAK_QPS; q++) {
			struct soak_qp *sq = &qps[q];

			while (sq->next_seq < per_qp &&
			       (n = soak_post_one(&a, &b, sq, q, run)) != 0)
				if (n < 0)
					goto out;
		}
		n = drnic_cq_poll(a.cq, (int)RTE_DIM(wc), wc);
		for (i = 0; i < (unsigned int)RTE_MAX(n, 0); i++) {
			if (soak_complete_send(qps, &wc[i]) != TEST_SUCCESS) {
				soak_diag(qps, &a);
				goto out;
			}
			done++;
		}
		n = drnic_cq_poll(b.cq, (int)RTE_DIM(wc), wc);
		for (i = 0; i < (unsigned int)RTE_MAX(n, 0); i++)
			if (soak_complete_recv(&b, qps, &wc[i]) != TEST_SUCCESS) {
				soak_diag(qps, &a);
				goto out;
			}
		if (done == last_done) {
			/* Look at the clock now and then only: it is not free. */
			if ((++idle_polls & 1023) != 0)
				continue;
			now = soak_now();
			if (now - last_progress > 30) {
				printf("no completion for 30 s (%" PRIu64 " of %" PRIu64 " done)\n",
				       done, per_qp * SOAK_QPS);
				for (q = 0; q < SOAK_QPS; q++)
					printf("  qp %u: posted %" PRIu64 " done %" PRIu64
					       " recvs %" PRIu64 " state %s\n", q, qps[q].next_seq,
					       qps[q].done_seq, qps[q].recvs,
					       drnic_qp_state_str(drnic_qp_state(qps[q].qa)));
				for (q = 0; q < SOAK_QPS; q++)
					if (qps[q].next_seq != qps[q].done_seq) {
						drnic_qp_dump(qps[q].qa, stdout);
						drnic_qp_dump(qps[q].qb, stdout);
					}
				goto out;
			}
			continue;
		}
		last_done = done;
		idle_polls = 0;
		now = soak_now();
		last_progress = now;
		if (!run->quiet && now > next_report) {
			printf("  %" PRIu64 " messages, %.1f s\n", done, now - t0);
			fflush(stdout);
			next_report = now + 10;
		}
	}
	run->secs = soak_now() - t0;
	/* Every receive-consuming message was received, counters exact. */
	for (q = 0; q < SOAK_QPS; q++) {
		uint64_t v, want = 0, s;
		struct soak_msg m;

		for (s = 0; s < per_qp; s++) {
			soak_gen(q, s, &m);
			want += soak_op_recv(m.op);
		}
		for (i = 0; qps[q].recvs < want && i < 1000000; i++) {
			n = drnic_cq_poll(b.cq, (int)RTE_DIM(wc), wc);
			for (int j = 0; j < n; j++)
				if (soak_complete_recv(&b, qps, &wc[j]) != TEST_SUCCESS)
					goto out;
		}
		if (qps[q].recvs != want) {
			printf("qp %u: %" PRIu64 " receives, expected %" PRIu64 "\n", q,
			       qps[q].recvs, want);
			goto out;
		}
		memcpy(&v, qps[q].b_area + B_CNT_OFF, 8);
		if (v != qps[q].counter) {
			printf("qp %u: counter %" PRIx64 ", expected %" PRIx64 "\n", q, v,
			       qps[q].counter);
			goto out;
		}
	}
	soak_counters(qps, run, &a, &b);
	rc = TEST_SUCCESS;
out:
	/* Acknowledge async events (a QP error raises one), then destroy. */
	for (i = 0; i < 2; i++) {
		struct soak_side *s = i ? &b : &a;
		struct drnic_async_event ev;

		while (s->dev != NULL &&
		       drnic_try_get_async_event(drnic_device_async_queue(s->dev), &ev) == 0) {
			if (rc != TEST_SUCCESS)
				printf("async event %d on qp %u\n", (int)ev.event_type, ev.qp_num);
			drnic_ack_async_event(drnic_device_async_queue(s->dev), &ev);
		}
	}
	for (q = 0; q < SOAK_QPS; q++) {
		if (qps[q].qa != NULL && drnic_destroy_qp(qps[q].qa) < 0)
			rc = TEST_FAILED;
		if (qps[q].qb != NULL && drnic_destroy_qp(qps[q].qb) < 0)
			rc = TEST_FAILED;
	}
	soak_side_close(&a);
	soak_side_close(&b);
	/* Every frame back in the pool (fault holds are flushed at close). */
	if (drnic_engine_mbuf_count(&avail, &size) == 0 && avail != size) {
		printf("mbuf leak: %u of %u in the pool after close\n", avail, size);
		rc = TEST_FAILED;
	}
	return rc;
}

static void
soak_print(const struct soak_run *r)
{
	uint64_t msgs = 0;
	unsigned int i;

	for (i = 0; i < OP_N; i++)
		msgs += r->ops[i];
	printf("messages %" PRIu64 " (SEND %" PRIu64 ", SEND_IMM %" PRIu64 ", WRITE %" PRIu64
	       ", WRITE_IMM %" PRIu64 ", READ %" PRIu64 ", CAS %" PRIu64 ", FAA %" PRIu64 ")\n",
	       msgs, r->ops[OP_SEND], r->ops[OP_SEND_IMM], r->ops[OP_WRITE], r->ops[OP_WRITE_IMM],
	       r->ops[OP_READ], r->ops[OP_CAS], r->ops[OP_FAA]);
	printf("payload %.3f GB in %.2f s: %.3f GB/s, %.3f Mmsg/s\n", (double)r->bytes / 1e9,
	       r->secs, (double)r->bytes / 1e9 / r->secs, (double)msgs / 1e6 / r->secs);
	printf("faults injected (A->B / B->A): dropped %" PRIu64 "/%" PRIu64 ", duplicated %"
	       PRIu64 "/%" PRIu64 ", reordered %" PRIu64 "/%" PRIu64 ", corrupted %" PRIu64 "/%"
	       PRIu64 "\n", r->fa.dropped, r->fb.dropped, r->fa.duplicated, r->fb.duplicated,
	       r->fa.reordered, r->fb.reordered, r->fa.corrupted, r->fb.corrupted);
	printf("recovery: go-back-N %" PRIu64 ", timeouts %" PRIu64 ", early retransmits %" PRIu64
	       ", NAKs rx %" PRIu64 " (RNR %" PRIu64 "), NAKs tx %" PRIu64
	       ", frames refused by the parser (ICRC...) %" PRIu64 "\n", r->retransmits, r->timeouts,
	       r->early, r->naks_rx, r->rnr_naks, r->naks_tx, r->icrc_drops);
}

static int
soak_rc(void)
{
	struct soak_run r = {
		.faults = "fault_drop=0.01,fault_reorder=0.01,fault_dup=0.005,fault_corrupt=0.001",
		.nmsg = soak_env_u64("SOAK_MESSAGES", 1000000),
	};
	int rc;

	printf("%" PRIu64 " messages on %u QPs, %s\n", r.nmsg, SOAK_QPS, r.faults);
	rc = soak_run(&r);
	soak_print(&r);
	if (rc != TEST_SUCCESS)
		return rc;
	TEST_ASSERT(r.fa.dropped > 0 && r.fa.duplicated > 0 && r.fa.reordered > 0 &&
		    r.fa.corrupted > 0, "faults were injected");
	return TEST_SUCCESS;
}

static int
soak_sweep(void)
{
	static const struct {
		const char *name;
		const char *faults;
	} rates[] = {
		{ "0", "" },
		{ "0.1%", "fault_drop=0.001" },
		{ "1%", "fault_drop=0.01" },
		{ "5%", "fault_drop=0.05" },
	};
	struct soak_run r[RTE_DIM(rates)];
	uint64_t nmsg = soak_env_u64("SOAK_SWEEP_MESSAGES", 100000);
	unsigned int i;

	memset(r, 0, sizeof(r));
	for (i = 0; i < RTE_DIM(rates); i++) {
		r[i].faults = rates[i].faults;
		r[i].nmsg = nmsg;
		r[i].quiet = true;
		if (soak_run(&r[i]) != TEST_SUCCESS) {
			printf("loss %s: FAILED\n", rates[i].name);
			soak_print(&r[i]);
			return TEST_FAILED;
		}
	}
	printf("\n%" PRIu64 " mixed messages per run, %u QPs, dedicated engine\n", nmsg, SOAK_QPS);
	printf("%-6s %9s %8s %9s %9s %10s %9s %7s\n", "loss", "GB", "s", "GB/s", "Mmsg/s",
	       "go-back", "timeouts", "early");
	for (i = 0; i < RTE_DIM(rates); i++)
		printf("%-6s %9.3f %8.2f %9.3f %9.3f %10" PRIu64 " %9" PRIu64 " %7" PRIu64 "\n",
		       rates[i].name, (double)r[i].bytes / 1e9, r[i].secs,
		       (double)r[i].bytes / 1e9 / r[i].secs, (double)nmsg / 1e6 / r[i].secs,
		       r[i].retransmits, r[i].timeouts, r[i].early);
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(soak_rc_autotest, DRNIC_TEST_SOAK, soak_rc);
DRNIC_TEST_REGISTER(soak_goodput_sweep_autotest, DRNIC_TEST_SOAK, soak_sweep);
