/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Set-up of the adversarial autotests (see adv_common.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "drnic_cq.h"
#include "link_driver.h"

#include "adv_common.h"

static unsigned int adv_seq;

uint64_t
adv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
adv_progress(struct adv *x)
{
	if (x->p.mode != DRNIC_PROGRESS_INLINE)
		return;
	drnic_device_progress(x->p.a.dev);
	drnic_device_progress(x->p.b.dev);
}

struct drnic_qp_stats
adv_qp_stats(struct rnic_side *s)
{
	struct drnic_qp_stats st;

	memset(&st, 0, sizeof(st));
	drnic_qp_stats_get(s->qp, &st);
	return st;
}

bool
adv_vic_is(const struct adv *x, uint8_t byte, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < ADV_GUARD; i++)
		if (x->vic_alloc[i] != ADV_GUARD_BYTE ||
		    x->vic[ADV_VIC_LEN + i] != ADV_GUARD_BYTE)
			return false;
	for (i = 0; i < len; i++)
		if (x->vic[i] != byte)
			return false;
	return true;
}

/* Classify one frame a tap saw. */
static void
adv_tap_frame(struct adv *x, const struct rte_mbuf *m, bool learn)
{
	struct drnic_wire_pkt pkt;
	const struct drnic_wire_opinfo *op;
	uint32_t qa = drnic_qp_num(x->p.a.qp), qb = drnic_qp_num(x->p.b.qp);

	if (drnic_wire_parse(m, &pkt) != DRNIC_WIRE_OK)
		return;
	op = drnic_wire_opcode_info(pkt.bth.opcode);
	if (pkt.bth.dqpn == qb && pkt.bth.opcode == DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY && learn)
		x->a2b = pkt;
	if (pkt.bth.dqpn == qb && (op->flags & DRNIC_WIRE_OPF_REQUEST)) {
		x->seen_a2b++;
		x->last_a2b = pkt;
	}
	if (pkt.bth.dqpn != qa)
		return;   /* only B's frames to A are counted */
	if (pkt.bth.opcode == DRNIC_WIRE_OP_RC_ACKNOWLEDGE) {
		if (learn)
			x->b2a = pkt;
		if (drnic_aeth_type(pkt.aeth.syndrome) == DRNIC_AETH_ACK) {
			x->seen_acks++;
		} else {
			x->seen_naks++;
			x->last_nak_syn = pkt.aeth.syndrome;
			x->last_nak_psn = pkt.bth.psn;
		}
	} else if ((op->flags & DRNIC_WIRE_OPF_READ) && (op->flags & DRNIC_WIRE_OPF_RESPONSE)) {
		const uint8_t *d = rte_pktmbuf_mtod_offset(m, const uint8_t *, pkt.payload_off);
		uint32_t i;

		x->seen_read_resp++;
		x->seen_read_bytes += pkt.payload_len;
		for (i = 0; i < pkt.payload_len && m->nb_segs == 1; i++)
			if (d[i] == x->read_byte)
				x->seen_read_byte = true;
	}
}

static void
adv_tap_read(struct adv *x, bool learn)
{
	struct rte_mbuf *m[32];
	uint16_t n, i, t;

	for (t = 0; t < 2; t++) {
		while ((n = link_rx_burst(x->tap[t], 0, m, RTE_DIM(m))) > 0) {
			for (i = 0; i < n; i++) {
				if (t == ADV_B)   /* each tap sees every frame: count once */
					adv_tap_frame(x, m[i], learn);
				rte_pktmbuf_free(m[i]);
			}
		}
	}
}

void
adv_tap_drain(struct adv *x)
{
	adv_tap_read(x, false);
}

void
adv_tap_reset(struct adv *x)
{
	adv_tap_read(x, false);
	x->seen_read_resp = 0;
	x->seen_read_bytes = 0;
	x->seen_naks = 0;
	x->seen_acks = 0;
	x->seen_read_byte = false;
	x->seen_a2b = 0;
}

int
adv_inject(struct adv *x, int side, const struct drnic_wire_pkt *tmpl, const void *payload,
	   uint32_t len)
{
	return adv_inject_burst(x, side, tmpl, payload, len, 1);
}

int
adv_inject_burst(struct adv *x, int side, const struct drnic_wire_pkt *tmpl, const void *payload,
		 uint32_t len, unsigned int n)
{
	struct rnic_side *s = side == ADV_A ? &x->p.a : &x->p.b;
	struct drnic_wire_pkt pkt = *tmpl;
	struct drnic_wire_sge sg = { payload, len };
	uint64_t rx0 = adv_qp_stats(s).rx_packets;
	struct rte_mbuf *m[128];
	unsigned int i;
	int rc;

	if (n == 0 || n > RTE_DIM(m))
		return -EINVAL;
	if (rte_pktmbuf_alloc_bulk(x->pool, m, n) != 0)
		return -ENOMEM;
	pkt.sg = len > 0 ? &sg : NULL;
	pkt.sg_cnt = len > 0 ? 1 : 0;
	for (i = 0; i < n; i++) {
		rc = drnic_wire_build(m[i], &pkt);
		if (rc < 0) {
			rte_pktmbuf_free_bulk(m, n);
			return rc;
		}
	}
	/* All at once: the victim's engine takes them in one or two bursts. */
	if (link_tx_burst(x->tap[side], 0, m, (uint16_t)n) != n) {
		rte_pktmbuf_free_bulk(m, n);
		return -ENOBUFS;
	}
	if (!ADV_WAIT(x, adv_qp_stats(s).rx_packets >= rx0 + n))
		return -ETIMEDOUT;
	/* What the frame makes the engines send, out. */
	adv_progress(x);
	adv_progress(x);
	return 0;
}

struct drnic_wire_pkt
adv_req(struct adv *x, uint8_t opcode)
{
	struct drnic_wire_pkt p = x->a2b;

	p.bth.opcode = opcode;
	p.bth.psn = adv_qp_stats(&x->p.b).expected_psn;
	p.bth.ackreq = true;
	p.reth.va = (uintptr_t)x->vic;
	p.reth.rkey = drnic_mr_rkey(x->vic_mr);
	p.reth.dmalen = 0;
	return p;
}

/* One real WRITE A -> B: the templates come from it. */
static int
adv_learn(struct adv *x)
{
	struct drnic_sge sge = { (uintptr_t)x->p.a.buf, 64, drnic_mr_lkey(x->p.a.mr) };
	struct drnic_send_wr wr = { 0 }, *bad;
	struct drnic_wc wc;

	memset(x->p.a.buf, 0x3C, 64);
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_RDMA_WRITE;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)x->p.b.buf;
	wr.wr.rdma.rkey = drnic_mr_rkey(x->p.b.mr);
	TEST_ASSERT_SUCCESS(drnic_post_send(x->p.a.qp, &wr, &bad), "post the learning WRITE");
	TEST_ASSERT_EQUAL(rnic_poll(&x->p.a, &wc, 1), 1, "learning WRITE: no completion");
	TEST_ASSERT_EQUAL(wc.status, DRNIC_WC_SUCCESS, "learning WRITE: %s",
			  drnic_wc_status_str(wc.status));
	TEST_ASSERT(ADV_WAIT(x, (adv_tap_read(x, true), x->b2a.bth.opcode ==
				 DRNIC_WIRE_OP_RC_ACKNOWLEDGE && x->a2b.bth.opcode ==
				 DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY)),
		    "the taps saw no WRITE and ACK");
	adv_tap_reset(x);
	return TEST_SUCCESS;
}

static struct drnic_link *
adv_tap_open(const char *wire, unsigned int end, unsigned int seq)
{
	char name[64], args[96];
	struct link_config cfg = { 0 };

	snprintf(name, sizeof(name), "advtap%u.%u", seq, end);
	snprintf(args, sizeof(args), "wire=%s,tap=%u", wire, end);
	cfg.name = name;
	cfg.args = args;
	cfg.nb_queues = 1;
	cfg.socket_id = SOCKET_ID_ANY;
	cfg.mac[0] = 0x02;
	cfg.mac[5] = 0x66;
	return link_create("loopback", &cfg);
}

int
adv_open(struct adv *x, const struct rnic_pair_opts *o)
{
	unsigned int seq = adv_seq++;
	char name[RTE_MEMPOOL_NAMESIZE];

	memset(x, 0, sizeof(*x));
	x->o = *o;
	if (o->mode == DRNIC_PROGRESS_DEDICATED && rte_get_next_lcore(-1, 1, 0) >= RTE_MAX_LCORE)
		TEST_SKIP("dedicated mode needs an EAL worker lcore for the engine");
	TEST_ASSERT_SUCCESS(rnic_pair_open(&x->p, o), "rnic_pair_open");
	snprintf(name, sizeof(name), "adv_pool%u", seq);
	x->pool = rte_pktmbuf_pool_create(name, 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE + 4096,
					  SOCKET_ID_ANY);
	TEST_ASSERT(x->pool != NULL, "mbuf pool: %s", rte_strerror(rte_errno));
	x->tap[ADV_A] = adv_tap_open(x->p.wire, 0, seq);
	x->tap[ADV_B] = adv_tap_open(x->p.wire, 1, seq);
	TEST_ASSERT(x->tap[ADV_A] != NULL && x->tap[ADV_B] != NULL, "taps: %s",
		    rte_strerror(rte_errno));
	x->vic_alloc = drnic_alloc(ADV_VIC_LEN + 2 * ADV_GUARD, 4096, SOCKET_ID_ANY);
	TEST_ASSERT(x->vic_alloc != NULL, "victim buffer");
	x->vic = x->vic_alloc + ADV_GUARD;
	memset(x->vic_alloc, ADV_GUARD_BYTE, ADV_VIC_LEN + 2 * ADV_GUARD);
	memset(x->vic, 0, ADV_VIC_LEN);
	x->vic_mr = drnic_reg_mr(x->p.b.pd, x->vic, ADV_VIC_LEN,
				 DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
				 DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC);
	TEST_ASSERT(x->vic_mr != NULL, "victim MR: %s", rte_strerror(rte_errno));
	return adv_learn(x);
}

void
adv_close(struct adv *x)
{
	unsigned int i;

	for (i = 0; i < 100; i++)
		adv_progress(x);
	if (x->tap[ADV_A] != NULL || x->tap[ADV_B] != NULL)
		adv_tap_drain(x);
	link_destroy(x->tap[ADV_A]);
	link_destroy(x->tap[ADV_B]);
	if (x->vic_mr != NULL)
		drnic_dereg_mr(x->vic_mr);
	rnic_pair_close(&x->p);
	drnic_free(x->vic_alloc);
	rte_mempool_free(x->pool);
	memset(x, 0, sizeof(*x));
}
