/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soak: RC, and UC and UD beside it, through a lossy loopback link (issues 4
 * and 15).
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
 * UC and UD through the same link, in the same run (issue 15): one UC and
 * one UD QP pair carry a deterministic stream each, one message per
 * XS_SHARE RC messages, paced by the RC run's progress: UC SEND_WITH_IMM
 * and RDMA_WRITE_WITH_IMM of 0..5 packets, UD SEND_WITH_IMM of 0..1024
 * bytes (the MTU) through an address handle; the immediate is the message
 * id. Nothing acknowledges them, so A keeps at most XS_W ids beyond the
 * highest B has received, and B reposts each receive WQE as it completes:
 * B's receive queues never run dry. After the RC stream, the faults are
 * turned off and a last message (a marker) per stream tells B it has all
 * that will arrive. Checked:
 *  - every UC/UD send WR completes once, in order, with SUCCESS, and A
 *    sends each message's frames once; B sends nothing;
 *  - UC: messages arrive in order, none twice, each byte-exact (a SEND in
 *    its receive buffer, a WRITE in its target) with every WC field; UD:
 *    every datagram that arrives is byte-exact after the 40-byte GRH area
 *    (an IPv4 header A to B), arrives once, with src_qp, the GRH flag and
 *    byte_len right;
 *  - the missing ones are the injector's: none without faults (and B drops
 *    nothing); UD: each frame B's QP received was delivered, a copy the
 *    injector made (psn_dup) or one it corrupted; UC: each missing message
 *    had a frame of its own that never reached B's QP in place; no more
 *    missing than frames lost, corrupted or held back; some missing when
 *    enough loss is expected.
 * Prints delivered, missing and B's psn_dup / uc_msg drop counters.
 *
 * soak_rc_autotest: SOAK_MESSAGES (env, default 1,000,000) messages with 1%
 * drop, 1% reorder, 0.5% dup, 0.1% corrupt.
 * soak_goodput_sweep_autotest: a shorter run at 0, 0.1%, 1%, 5% loss,
 * printed as a table (and the UC/UD streams' delivered counts).
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
#include "rnic/rnic_fixture.h"   /* rnic_ud_ready() */

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

/* What became of one of the unreliable streams (UC, UD). */
struct xs_result {
	uint64_t total;       /* messages (the marker not counted) */
	uint64_t got;         /* of those, delivered at B */
	uint64_t frames;      /* frames A sent */
	uint64_t writes;      /* UC: WRITE_WITH_IMM among them */
	uint64_t bytes;
	uint64_t psn_dup;     /* B: copies (and UC: overtaken frames) dropped */
	uint64_t uc_msg;      /* B: UC packets of messages dropped whole */
};

struct soak_run {
	const char *faults;   /* fault_ keys for link_args, "" for none */
	double drop;          /* its fault_drop */
	uint64_t nmsg;        /* messages in all (split over the QPs) */
	bool quiet;
	/* Results. */
	uint64_t bytes;
	uint64_t ops[OP_N];
	double secs;
	struct drnic_link_fault_stats fa, fb;
	uint64_t retransmits, timeouts, early, naks_rx, rnr_naks, naks_tx, icrc_drops;
	struct xs_result xs[2];   /* UC, UD */
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

/* A QP of @p type on @p s with both queues on @p cq: SOAK_SLOTS send WRs,
 * @p recvs receive WRs. */
static struct drnic_qp *
soak_qp_create(struct soak_side *s, struct drnic_cq *cq, enum drnic_qp_type type, uint32_t recvs)
{
	struct drnic_qp_init_attr qa = { 0 };

	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = type;
	qa.cap.max_send_wr = SOAK_SLOTS;
	qa.cap.max_recv_wr = recvs;
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

/* Connect @p x to @p y on @p peer, to RTS; @p uc: UC's attributes only
 * (ibv_modify_qp(3): no timeout, retries, RNR timer or READ/atomics). */
static int
soak_connect(struct drnic_qp *x, struct soak_side *peer, struct drnic_qp *y, bool uc)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = uc ? DRNIC_ACCESS_REMOTE_WRITE :
			    DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
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
			     DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN |
			     (uc ? 0 : DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER));
	if (rc < 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = 0xFFFF00 + drnic_qp_num(x);
	if (uc)
		return drnic_modify_qp(x, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN);
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

/*
 * The unreliable streams (issue 15): one UC and one UD QP pair between the
 * same two devices, through the same faulty link, carrying message ids
 * 0..total-1 (a function of the id: kind, length, bytes), then one marker
 * (id total) sent with the faults off.
 *
 * Flow control without acknowledgements: A posts id i only once B has
 * received id i - XS_W or a later one, so at most XS_W messages are on the
 * way beyond B's highest arrival; with XS_RQ receives posted (more than
 * XS_W plus the frames the injector can hold back, which UD still
 * delivers late) B's receive queues never run dry, and a WRITE target slot
 * (id % XS_W) is written again only after B checked the message before.
 * A stall would need XS_W messages in a row lost.
 */
#define XS_W 32                          /* ids on the way beyond B's highest */
#define XS_SQ SOAK_SLOTS                 /* A's send WRs in flight per QP */
#define XS_RQ 64                         /* B's receive WQEs per QP */
#define XS_SHARE 50                      /* one UC and one UD message per 50 RC ones */
#define XS_UC_SLOT 8192u
#define XS_UC_MAX (5 * SOAK_MTU)         /* UC: 0..5 packets */
#define XS_UD_SLOT 2048u
#define XS_GRH 40u
#define XS_QKEY 0x1150A4u
#define XS_GUARD 0xEE

/* A's buffer: UC send slots, UD send slots. B's: UC receive slots, UC
 * WRITE targets, UD receive slots. */
#define XA_UD_OFF ((size_t)XS_SQ * XS_UC_SLOT)
#define XA_LEN (XA_UD_OFF + (size_t)XS_SQ * XS_UD_SLOT)
#define XB_WR_OFF ((size_t)XS_RQ * XS_UC_SLOT)
#define XB_UD_OFF (XB_WR_OFF + (size_t)XS_W * XS_UC_SLOT)
#define XB_LEN (XB_UD_OFF + (size_t)XS_RQ * XS_UD_SLOT)

enum xs_kind { XS_UC, XS_UD, XS_N };

static const char *const xs_name[XS_N] = { "UC", "UD" };

/* One stream: what A posted and B saw. */
struct xs_stream {
	struct drnic_qp *qa, *qb;
	uint64_t total;       /* ids 0..total-1; id total is the marker */
	uint64_t next;        /* next id A posts */
	uint64_t done;        /* next id to complete at A */
	uint64_t top;         /* B: highest id received + 1 */
	uint64_t got;         /* B: ids below total received */
	uint64_t recvs;       /* B: receives completed (the n-th takes WQE n % XS_RQ) */
	uint64_t frames;      /* frames A's posted messages take */
	uint64_t frames_got;  /* frames of the messages B received */
	uint64_t writes;      /* UC: WRITE_WITH_IMM among the posted */
	uint64_t bytes;       /* payload posted */
	uint8_t *seen;        /* UD: ids received (total + 1) */
	struct drnic_qp_stats sa, sb;   /* at the end */
};

struct soak_xs {
	struct drnic_cq *cqa, *cqb;
	uint8_t *abuf, *bbuf;
	struct drnic_mr *amr, *bmr;
	struct drnic_ah *ah;
	union drnic_gid ga, gb;
	struct xs_stream s[XS_N];
};

/* Message @p id of stream @p k: its length, and for UC whether a WRITE. */
static uint32_t
xs_gen(enum xs_kind k, uint64_t id, bool *write)
{
	uint64_t r = soak_mix(((uint64_t)(k + 1) << 58) ^ (id * 0x9E3779B1ull) ^ 0xC0DE),
		 r2 = soak_mix(r), r3 = soak_mix(r2);
	unsigned int s = (unsigned int)((r >> 8) % 100);

	*write = k == XS_UC && (r & 1) != 0;
	if (k == XS_UD)   /* 0..MTU, a third at the MTU's edge */
		return s < 40 ? (uint32_t)(r2 % 257) :
		       s < 70 ? SOAK_MTU - (uint32_t)(r2 % 3) : (uint32_t)(r2 % (SOAK_MTU + 1));
	if (s < 30)
		return (uint32_t)(r2 % 257);
	if (s < 75)       /* packet edges */
		return (uint32_t)(1 + r2 % 4) * SOAK_MTU + (uint32_t)(r3 % 3) - 1;
	return (uint32_t)(r2 % (XS_UC_MAX + 1));
}

static uint32_t
xs_pkts(uint32_t len)
{
	return len == 0 ? 1 : (len + SOAK_MTU - 1) / SOAK_MTU;
}

/* Post B's receive WQE @p slot of stream @p k (UD: the slot filled with
 * the guard byte first, to see a write past the datagram). */
static int
xs_post_recv(struct soak_xs *x, enum xs_kind k, uint64_t slot)
{
	struct drnic_sge sge;
	struct drnic_recv_wr wr = { 0 }, *bad;
	uint8_t *p;

	if (k == XS_UC) {
		p = x->bbuf + slot * XS_UC_SLOT;
		sge.length = XS_UC_SLOT;
	} else {
		p = x->bbuf + XB_UD_OFF + slot * XS_UD_SLOT;
		sge.length = XS_GRH + SOAK_MTU;
		memset(p, XS_GUARD, XS_GRH + SOAK_MTU + 1);
	}
	sge.addr = (uintptr_t)p;
	sge.lkey = drnic_mr_lkey(x->bmr);
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return drnic_post_recv(x->s[k].qb, &wr, &bad);
}

static int
xs_open(struct soak_xs *x, struct soak_side *a, struct soak_side *b, uint64_t rc_msgs)
{
	struct drnic_cq_attr ca = { 0 };
	struct drnic_ah_attr aa;
	enum xs_kind k;
	uint64_t i;

	ca.cqe = 2 * (XS_SQ + XS_RQ);
	ca.socket_id = -1;
	ca.async_queue = drnic_device_async_queue(a->dev);
	x->cqa = drnic_cq_create(&ca);
	ca.async_queue = drnic_device_async_queue(b->dev);
	x->cqb = drnic_cq_create(&ca);
	x->abuf = drnic_alloc(XA_LEN, 4096, -1);
	x->bbuf = drnic_alloc(XB_LEN, 4096, -1);
	if (x->cqa == NULL || x->cqb == NULL || x->abuf == NULL || x->bbuf == NULL)
		return -ENOMEM;
	x->amr = drnic_reg_mr(a->pd, x->abuf, XA_LEN, DRNIC_ACCESS_LOCAL_WRITE);
	x->bmr = drnic_reg_mr(b->pd, x->bbuf, XB_LEN,
			      DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE);
	if (x->amr == NULL || x->bmr == NULL)
		return -ENOMEM;
	drnic_query_gid(a->dev, 1, 0, &x->ga);
	drnic_query_gid(b->dev, 1, 0, &x->gb);
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.hop_limit = 64;
	aa.grh.dgid = x->gb;
	x->ah = drnic_create_ah(a->pd, &aa);
	if (x->ah == NULL)
		return -ENOMEM;
	for (k = 0; k < XS_N; k++) {
		struct xs_stream *s = &x->s[k];
		enum drnic_qp_type t = k == XS_UC ? DRNIC_QPT_UC : DRNIC_QPT_UD;

		s->total = (rc_msgs + XS_SHARE - 1) / XS_SHARE;
		s->qa = soak_qp_create(a, x->cqa, t, 1);
		s->qb = soak_qp_create(b, x->cqb, t, XS_RQ);
		if (s->qa == NULL || s->qb == NULL)
			return -ENOMEM;
		if (k == XS_UC && (soak_connect(s->qa, b, s->qb, true) < 0 ||
				   soak_connect(s->qb, a, s->qa, true) < 0))
			return -EINVAL;
		if (k == XS_UD && (rnic_ud_ready(s->qa, XS_QKEY) < 0 ||
				   rnic_ud_ready(s->qb, XS_QKEY) < 0))
			return -EINVAL;
		if (k == XS_UD) {
			s->seen = calloc(s->total + 1, 1);
			if (s->seen == NULL)
				return -ENOMEM;
		}
		for (i = 0; i < XS_RQ; i++)
			if (xs_post_recv(x, k, i) < 0)
				return -EINVAL;
	}
	return 0;
}

static void
xs_close(struct soak_xs *x)
{
	enum xs_kind k;

	for (k = 0; k < XS_N; k++) {
		if (x->s[k].qa != NULL)
			drnic_destroy_qp(x->s[k].qa);
		if (x->s[k].qb != NULL)
			drnic_destroy_qp(x->s[k].qb);
		free(x->s[k].seen);
	}
	if (x->ah != NULL)
		drnic_destroy_ah(x->ah);
	if (x->amr != NULL)
		drnic_dereg_mr(x->amr);
	if (x->bmr != NULL)
		drnic_dereg_mr(x->bmr);
	drnic_free(x->abuf);
	drnic_free(x->bbuf);
	if (x->cqa != NULL)
		drnic_cq_destroy(x->cqa);
	if (x->cqb != NULL)
		drnic_cq_destroy(x->cqb);
	memset(x, 0, sizeof(*x));
}

/* Post id s->next of stream @p k from A. */
static int
xs_post_one(struct soak_xs *x, enum xs_kind k)
{
	struct xs_stream *s = &x->s[k];
	uint64_t id = s->next, slot = id % XS_SQ;
	struct drnic_send_wr wr = { 0 }, *bad;
	struct drnic_sge sge;
	bool write;
	uint32_t len = xs_gen(k, id, &write);
	uint8_t *src = x->abuf + (k == XS_UC ? slot * XS_UC_SLOT : XA_UD_OFF + slot * XS_UD_SLOT);
	int rc;

	soak_pattern(src, len, 200 + k, id);
	sge.addr = (uintptr_t)src;
	sge.length = len;
	sge.lkey = drnic_mr_lkey(x->amr);
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.imm_data = rte_cpu_to_be_32((uint32_t)id);
	if (write) {
		wr.opcode = DRNIC_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.rdma.remote_addr = (uintptr_t)(x->bbuf + XB_WR_OFF +
						     (id % XS_W) * XS_UC_SLOT);
		wr.wr.rdma.rkey = drnic_mr_rkey(x->bmr);
	} else {
		wr.opcode = DRNIC_WR_SEND_WITH_IMM;
	}
	if (k == XS_UD) {
		wr.wr.ud.ah = x->ah;
		wr.wr.ud.remote_qpn = drnic_qp_num(s->qb);
		wr.wr.ud.remote_qkey = XS_QKEY;
	}
	rc = drnic_post_send(s->qa, &wr, &bad);
	if (rc < 0) {
		printf("%s id %" PRIu64 ": post_send: %s\n", xs_name[k], id, strerror(-rc));
		return rc;
	}
	s->next++;
	s->frames += xs_pkts(len);
	s->writes += write;
	s->bytes += len;
	return 0;
}

/* A send completion at A: SUCCESS, once, in order. */
static int
xs_complete_send(struct soak_xs *x, const struct drnic_wc *wc)
{
	enum xs_kind k = wc->qp_num == drnic_qp_num(x->s[XS_UC].qa) ? XS_UC : XS_UD;
	struct xs_stream *s = &x->s[k];
	bool write;
	uint32_t len;

	TEST_ASSERT_EQUAL(wc->qp_num, drnic_qp_num(s->qa), "completion for unknown QP %u",
			  wc->qp_num);
	TEST_ASSERT_EQUAL(wc->status, DRNIC_WC_SUCCESS, "%s wr %" PRIu64 ": %s", xs_name[k],
			  wc->wr_id, drnic_wc_status_str(wc->status));
	TEST_ASSERT_EQUAL(wc->wr_id, s->done, "%s: completion out of order", xs_name[k]);
	len = xs_gen(k, s->done, &write);
	TEST_ASSERT_EQUAL(wc->opcode, write ? DRNIC_WC_RDMA_WRITE : DRNIC_WC_SEND,
			  "%s id %" PRIu64 ": opcode", xs_name[k], s->done);
	if (k == XS_UD)
		TEST_ASSERT_EQUAL(wc->byte_len, len, "UD id %" PRIu64 ": byte_len", s->done);
	s->done++;
	return TEST_SUCCESS;
}

/* A UC message at B: the next in order (some may be missing), exact. */
static int
xs_uc_recv(struct soak_xs *x, const struct drnic_wc *wc)
{
	struct xs_stream *s = &x->s[XS_UC];
	uint64_t id = rte_be_to_cpu_32(wc->imm_data);
	const uint8_t *at;
	bool write;
	uint32_t len;

	TEST_ASSERT(wc->wc_flags == DRNIC_WC_WITH_IMM, "UC: wc_flags %#x", wc->wc_flags);
	TEST_ASSERT(id < s->next, "UC: id %" PRIu64 " never sent", id);
	TEST_ASSERT(id >= s->top, "UC: id %" PRIu64 " after %" PRIu64 " (twice or out of order)",
		    id, s->top - 1);
	TEST_ASSERT_EQUAL(wc->src_qp, drnic_qp_num(s->qa), "UC: src_qp");
	len = xs_gen(XS_UC, id, &write);
	TEST_ASSERT_EQUAL(wc->opcode, write ? DRNIC_WC_RECV_RDMA_WITH_IMM : DRNIC_WC_RECV,
			  "UC id %" PRIu64 ": opcode", id);
	TEST_ASSERT_EQUAL(wc->byte_len, len, "UC id %" PRIu64 ": byte_len", id);
	at = write ? x->bbuf + XB_WR_OFF + (id % XS_W) * XS_UC_SLOT :
		     x->bbuf + wc->wr_id * XS_UC_SLOT;
	TEST_ASSERT(soak_check_pattern(at, len, 200 + XS_UC, id),
		    "UC id %" PRIu64 ": %s of %u bytes differs", id, write ? "WRITE" : "SEND", len);
	s->top = id + 1;
	s->got += id < s->total;
	s->frames_got += xs_pkts(len);
	return TEST_SUCCESS;
}

/* A UD datagram at B: exact after the GRH area, never twice. */
static int
xs_ud_recv(struct soak_xs *x, const struct drnic_wc *wc)
{
	static const uint8_t zero[20];
	struct xs_stream *s = &x->s[XS_UD];
	uint64_t id = rte_be_to_cpu_32(wc->imm_data);
	const uint8_t *b;
	bool write;
	uint32_t len;

	TEST_ASSERT_EQUAL(wc->wc_flags, DRNIC_WC_GRH | DRNIC_WC_WITH_IMM, "UD: wc_flags");
	TEST_ASSERT(id < s->next, "UD: id %" PRIu64 " never sent", id);
	TEST_ASSERT(!s->seen[id], "UD: id %" PRIu64 " delivered twice", id);
	TEST_ASSERT_EQUAL(wc->opcode, DRNIC_WC_RECV, "UD: opcode");
	TEST_ASSERT_EQUAL(wc->src_qp, drnic_qp_num(s->qa), "UD: src_qp");
	TEST_ASSERT_EQUAL(wc->pkey_index, 0, "UD: pkey_index");
	TEST_ASSERT_EQUAL(wc->sl, DRNIC_WC_SL_ROCE_V2_IPV4, "UD: sl");
	len = xs_gen(XS_UD, id, &write);
	TEST_ASSERT_EQUAL(wc->byte_len, XS_GRH + len, "UD id %" PRIu64 ": byte_len", id);
	b = x->bbuf + XB_UD_OFF + wc->wr_id * XS_UD_SLOT;
	TEST_ASSERT(memcmp(b, zero, 20) == 0 && b[20] == 0x45 && b[29] == 17 &&
		    memcmp(b + 32, &x->ga.raw[12], 4) == 0 &&
		    memcmp(b + 36, &x->gb.raw[12], 4) == 0,
		    "UD id %" PRIu64 ": GRH area is not the IPv4 header A->B", id);
	TEST_ASSERT(soak_check_pattern(b + XS_GRH, len, 200 + XS_UD, id),
		    "UD id %" PRIu64 ": %u bytes differ", id, len);
	TEST_ASSERT_EQUAL(b[XS_GRH + len], XS_GUARD, "UD id %" PRIu64 ": written past", id);
	s->seen[id] = 1;
	s->top = RTE_MAX(s->top, id + 1);
	s->got += id < s->total;
	return TEST_SUCCESS;
}

/* A receive at B: checked, its WQE posted again at once. */
static int
xs_complete_recv(struct soak_xs *x, const struct drnic_wc *wc)
{
	enum xs_kind k = wc->qp_num == drnic_qp_num(x->s[XS_UC].qb) ? XS_UC : XS_UD;

	TEST_ASSERT_EQUAL(wc->qp_num, drnic_qp_num(x->s[k].qb), "receive for unknown QP %u",
			  wc->qp_num);
	TEST_ASSERT_EQUAL(wc->status, DRNIC_WC_SUCCESS, "%s recv: %s", xs_name[k],
			  drnic_wc_status_str(wc->status));
	/* Receive WQEs are taken in the order posted (a UC message dropped
	 * midway leaves its WQE to the next one). */
	TEST_ASSERT_EQUAL(wc->wr_id, x->s[k].recvs % XS_RQ, "%s: receive WQE out of order",
			  xs_name[k]);
	if ((k == XS_UC ? xs_uc_recv(x, wc) : xs_ud_recv(x, wc)) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_SUCCESS(xs_post_recv(x, k, wc->wr_id), "%s: post_recv again", xs_name[k]);
	x->s[k].recvs++;
	return TEST_SUCCESS;
}

/*
 * One step of the streams: post what the windows allow, ids up to @p limit
 * (the RC run's progress paces them over the run; the marker, id total,
 * only with @p limit above total), and take the completions on both sides.
 * Returns 1 when something happened, 0 when not, -1 after a failed check.
 */
static int
xs_step(struct soak_xs *x, uint64_t limit_num, uint64_t limit_den, bool marker)
{
	struct drnic_wc wc[32];
	enum xs_kind k;
	int n, i, moved = 0;

	for (k = 0; k < XS_N; k++) {
		struct xs_stream *s = &x->s[k];
		uint64_t limit = marker ? s->total + 1 :
				 RTE_MIN(s->total, s->total * limit_num / limit_den + XS_W);

		while (s->next < limit && s->next - s->done < XS_SQ &&
		       (s->next < s->top + XS_W || s->next == s->total)) {
			if (xs_post_one(x, k) < 0)
				return -1;
			moved = 1;
		}
	}
	n = drnic_cq_poll(x->cqa, (int)RTE_DIM(wc), wc);
	for (i = 0; i < n; i++)
		if (xs_complete_send(x, &wc[i]) != TEST_SUCCESS)
			return -1;
	moved |= n > 0;
	n = drnic_cq_poll(x->cqb, (int)RTE_DIM(wc), wc);
	for (i = 0; i < n; i++)
		if (xs_complete_recv(x, &wc[i]) != TEST_SUCCESS)
			return -1;
	moved |= n > 0;
	return moved;
}

/* Where the streams stand (after a stall). */
static void
xs_dump(const struct soak_xs *x)
{
	enum xs_kind k;

	for (k = 0; k < XS_N; k++)
		printf("  %s: total %" PRIu64 " posted %" PRIu64 " done %" PRIu64 " B's top %"
		       PRIu64 " received %" PRIu64 " state %s\n", xs_name[k], x->s[k].total,
		       x->s[k].next, x->s[k].done, x->s[k].top, x->s[k].got,
		       drnic_qp_state_str(drnic_qp_state(x->s[k].qa)));
}

/*
 * After the RC stream: the rest of the streams; then the faults off and,
 * once A's link holds no frame back, one marker per stream. A frame leaves
 * A after those before it, and B takes a QP's frames in order: when B has a
 * marker, B has everything of its stream that will ever arrive.
 */
static int
xs_finish(struct soak_xs *x, struct soak_side *a, struct soak_side *b, bool faulty)
{
	struct drnic_link_fault_stats fs;
	struct drnic_link_faults off;
	double last = soak_now();
	uint64_t spins = 0;
	unsigned int phase = 0;
	int moved;

	while (phase < 3) {
		const struct xs_stream *u = &x->s[XS_UC], *d = &x->s[XS_UD];

		moved = xs_step(x, 1, 1, phase == 2);
		if (moved < 0)
			return TEST_FAILED;
		if (phase == 0 && u->done == u->total && d->done == d->total) {
			/* Every frame of the streams went through the injector. */
			if (faulty) {
				drnic_link_faults_init(&off);
				TEST_ASSERT_SUCCESS(drnic_link_set_faults(drnic_device_link(a->dev),
									  &off), "faults off");
				TEST_ASSERT_SUCCESS(drnic_link_set_faults(drnic_device_link(b->dev),
									  &off), "faults off");
			}
			phase = 1;
			moved = 1;
		}
		if (phase == 1) {
			TEST_ASSERT_SUCCESS(drnic_link_fault_stats(drnic_device_link(a->dev), &fs),
					    "fault stats");
			if (fs.held == 0) {
				phase = 2;
				moved = 1;
			}
		}
		if (phase == 2 && u->done == u->total + 1 && d->done == d->total + 1 &&
		    u->top == u->total + 1 && d->seen[d->total]) {
			phase = 3;
			moved = 1;
		}
		if (moved) {
			spins = 0;
			last = soak_now();
		} else if ((++spins & 1023) == 0 && soak_now() - last > 30) {
			xs_dump(x);
			TEST_ASSERT(false, "UC/UD: nothing for 30 s (phase %u)", phase);
		}
	}
	return TEST_SUCCESS;
}

/*
 * What the user sees at the end, against what the injector did on A's
 * link (UC and UD frames go A to B only):
 *  - A sent each message's frames once, and B answered nothing;
 *  - without faults every message arrived and B dropped nothing;
 *  - UD: every datagram that reached B's QP was delivered once, or was a
 *    copy the injector made (psn_dup, at most its duplicates), or one it
 *    corrupted (refused by the ICRC check); none ran out of receive WQEs;
 *  - UC: each missing message had a frame of its own lost, corrupted or
 *    overtaken: missing <= the frames that never reached B's QP in place
 *    (A's frames + copies dropped - frames B's QP received) + the frames the
 *    injector corrupted (those reaching the QP count as received);
 *  - no more missing than the injector lost, corrupted or held back;
 *  - with enough loss expected, some are missing.
 */
static int
xs_check(struct soak_xs *x, struct soak_run *run, struct soak_side *a)
{
	struct drnic_link_fault_stats fa;
	bool faulty = run->faults[0] != '\0';
	enum xs_kind k;
	unsigned int i;

	TEST_ASSERT_SUCCESS(drnic_link_fault_stats(drnic_device_link(a->dev), &fa), "fault stats");
	for (k = 0; k < XS_N; k++) {
		struct xs_stream *s = &x->s[k];
		struct xs_result *r = &run->xs[k];
		uint64_t psn_dup, missing = s->total - s->got;
		int64_t off_place;

		TEST_ASSERT_SUCCESS(drnic_qp_stats_get(s->qa, &s->sa), "stats");
		TEST_ASSERT_SUCCESS(drnic_qp_stats_get(s->qb, &s->sb), "stats");
		psn_dup = s->sb.drops[DRNIC_ENGINE_DROP_PSN_DUP];
		r->total = s->total;
		r->got = s->got;
		r->frames = s->frames;
		r->writes = s->writes;
		r->bytes = s->bytes;
		r->psn_dup = psn_dup;
		r->uc_msg = s->sb.drops[DRNIC_ENGINE_DROP_UC_MSG];
		TEST_ASSERT(s->sa.tx_packets == s->frames && s->sa.retransmits == 0,
			    "%s: A sent %" PRIu64 " frames for %" PRIu64 " (resent %" PRIu64 ")",
			    xs_name[k], s->sa.tx_packets, s->frames, s->sa.retransmits);
		TEST_ASSERT_EQUAL(s->sb.tx_packets, 0, "%s: B sent frames", xs_name[k]);
		for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++)
			TEST_ASSERT(s->sb.drops[i] == 0 || i == DRNIC_ENGINE_DROP_PSN_DUP ||
				    (k == XS_UC && i == DRNIC_ENGINE_DROP_UC_MSG),
				    "%s: B dropped %" PRIu64 " as %s", xs_name[k], s->sb.drops[i],
				    drnic_engine_drop_name((enum drnic_engine_drop)i));
		if (!faulty) {
			TEST_ASSERT(missing == 0 && psn_dup == 0 && r->uc_msg == 0,
				    "%s without faults: %" PRIu64 " missing, %" PRIu64
				    " psn_dup, %" PRIu64 " uc_msg", xs_name[k], missing, psn_dup,
				    r->uc_msg);
			continue;
		}
		if (k == XS_UD) {
			/* Received = delivered (the marker too) + copies + corrupt. */
			TEST_ASSERT(s->sb.rx_packets >= s->got + 1 + psn_dup &&
				    s->sb.rx_packets - s->got - 1 - psn_dup <= fa.corrupted,
				    "UD: B's QP received %" PRIu64 " frames, delivered %" PRIu64
				    ", dropped %" PRIu64 " copies (%" PRIu64 " corrupted)",
				    s->sb.rx_packets, s->got + 1, psn_dup, fa.corrupted);
			TEST_ASSERT(psn_dup <= fa.duplicated, "UD: %" PRIu64 " copies dropped, %"
				    PRIu64 " made", psn_dup, fa.duplicated);
			TEST_ASSERT(missing <= fa.dropped + fa.corrupted, "UD: %" PRIu64
				    " missing", missing);
		} else {
			/* Frames that never reached B's QP in place: of A's
			 * frames, those it did not receive, or dropped as
			 * behind; those it refused for their ICRC count as
			 * received: at most the corrupted ones, and at most
			 * what is neither a delivered message's nor uc_msg. */
			TEST_ASSERT(s->sb.rx_packets >= psn_dup + r->uc_msg + s->frames_got,
				    "UC: B's QP received %" PRIu64 " frames, fewer than dropped (%"
				    PRIu64 ") and delivered (%" PRIu64 ")", s->sb.rx_packets,
				    psn_dup + r->uc_msg, s->frames_got);
			off_place = (int64_t)(s->frames + psn_dup) - (int64_t)s->sb.rx_packets;
			off_place += (int64_t)RTE_MIN(fa.corrupted, s->sb.rx_packets - psn_dup -
						      r->uc_msg - s->frames_got);
			TEST_ASSERT((int64_t)missing <= off_place,
				    "UC: %" PRIu64 " missing, only %" PRId64 " frames not received"
				    " in place", missing, off_place);
			TEST_ASSERT(psn_dup <= fa.duplicated + fa.reordered, "UC: %" PRIu64
				    " psn_dup", psn_dup);
		}
		if ((double)(k == XS_UC ? s->frames : s->total) * run->drop >= 10)
			TEST_ASSERT(missing > 0, "%s: nothing missing under %s", xs_name[k],
				    run->faults);
	}
	TEST_ASSERT(run->xs[XS_UC].total - run->xs[XS_UC].got + run->xs[XS_UD].total -
		    run->xs[XS_UD].got <= fa.dropped + fa.corrupted + fa.reordered,
		    "UC and UD: more missing than frames the injector faulted");
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
	static struct soak_xs xs;
	struct drnic_wc wc[64];
	unsigned int seq = soak_seq++, q, i;
	uint64_t per_qp = (run->nmsg + SOAK_QPS - 1) / SOAK_QPS, done = 0, last_done = 0;
	double t0, last_progress, next_report;
	char args[256], na[32], nb[32];
	unsigned int avail, size;
	int rc = TEST_FAILED, n;
	uint64_t idle_polls = 0;
	unsigned int xs_turn = 0;

	memset(qps, 0, sizeof(qps));
	memset(&xs, 0, sizeof(xs));
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
		sq->qa = soak_qp_create(&a, a.cq, DRNIC_QPT_RC, SOAK_RECVS);
		sq->qb = soak_qp_create(&b, b.cq, DRNIC_QPT_RC, SOAK_RECVS);
		if (sq->qa == NULL || sq->qb == NULL || soak_connect(sq->qa, &b, sq->qb, false) < 0 ||
		    soak_connect(sq->qb, &a, sq->qa, false) < 0) {
			printf("cannot set up QP pair %u\n", q);
			goto out;
		}
		for (i = 0; i < SOAK_RECVS; i++)
			if (soak_post_recv(&b, sq, i) < 0) {
				printf("post_recv failed\n");
				goto out;
			}
	}
	if (xs_open(&xs, &a, &b, run->nmsg) < 0) {
		printf("cannot set up the UC and UD QP pairs\n");
		goto out;
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
		/* The unreliable streams, paced by the RC run's progress (a
		 * few dozen messages in flight: every fourth turn is enough). */
		if ((++xs_turn & 3) == 0 && xs_step(&xs, done, per_qp * SOAK_QPS, false) < 0) {
			xs_dump(&xs);
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
	if (xs_finish(&xs, &a, &b, run->faults[0] != '\0') != TEST_SUCCESS ||
	    xs_check(&xs, run, &a) != TEST_SUCCESS)
		goto out;
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
	xs_close(&xs);
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
	printf("UC: %" PRIu64 " messages (SEND_IMM %" PRIu64 ", WRITE_IMM %" PRIu64 "), %" PRIu64
	       " frames, %.3f MB: delivered %" PRIu64 ", missing %" PRIu64 "; B dropped %" PRIu64
	       " copies or overtaken frames (psn_dup), %" PRIu64 " frames of lost messages"
	       " (uc_msg)\n", r->xs[0].total, r->xs[0].total - r->xs[0].writes, r->xs[0].writes,
	       r->xs[0].frames, (double)r->xs[0].bytes / 1e6, r->xs[0].got,
	       r->xs[0].total - r->xs[0].got, r->xs[0].psn_dup, r->xs[0].uc_msg);
	printf("UD: %" PRIu64 " datagrams (SEND_IMM), %.3f MB: delivered %" PRIu64 ", missing %"
	       PRIu64 "; B dropped %" PRIu64 " copies (psn_dup)\n", r->xs[1].total,
	       (double)r->xs[1].bytes / 1e6, r->xs[1].got, r->xs[1].total - r->xs[1].got,
	       r->xs[1].psn_dup);
}

static int
soak_rc(void)
{
	struct soak_run r = {
		.faults = "fault_drop=0.01,fault_reorder=0.01,fault_dup=0.005,fault_corrupt=0.001",
		.drop = 0.01,
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
		double drop;
	} rates[] = {
		{ "0", "", 0 },
		{ "0.1%", "fault_drop=0.001", 0.001 },
		{ "1%", "fault_drop=0.01", 0.01 },
		{ "5%", "fault_drop=0.05", 0.05 },
	};
	struct soak_run r[RTE_DIM(rates)];
	uint64_t nmsg = soak_env_u64("SOAK_SWEEP_MESSAGES", 100000);
	unsigned int i;

	memset(r, 0, sizeof(r));
	for (i = 0; i < RTE_DIM(rates); i++) {
		r[i].faults = rates[i].faults;
		r[i].drop = rates[i].drop;
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
	printf("\nthe same runs' UC and UD streams (delivered of sent; B's drop counters)\n");
	printf("%-6s %15s %9s %9s %15s %9s\n", "loss", "UC msgs", "psn_dup", "uc_msg",
	       "UD datagrams", "psn_dup");
	for (i = 0; i < RTE_DIM(rates); i++)
		printf("%-6s %7" PRIu64 "/%-7" PRIu64 " %9" PRIu64 " %9" PRIu64 " %7" PRIu64 "/%-7"
		       PRIu64 " %9" PRIu64 "\n", rates[i].name, r[i].xs[0].got, r[i].xs[0].total,
		       r[i].xs[0].psn_dup, r[i].xs[0].uc_msg, r[i].xs[1].got, r[i].xs[1].total,
		       r[i].xs[1].psn_dup);
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(soak_rc_autotest, DRNIC_TEST_SOAK, soak_rc);
DRNIC_TEST_REGISTER(soak_goodput_sweep_autotest, DRNIC_TEST_SOAK, soak_sweep);
