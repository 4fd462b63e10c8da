/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shared CQ under load (seed 000, §3.4.4; issue 3): 100 QP pairs, each QP
 * with 64 send and 64 receive WRs. On the server device all completions of
 * the 100 QPs (sends and receives) go to one CQ of depth
 * 100 x (64 + 64) x 1.5 = 19200; the client's 100 QPs share another CQ of the
 * same depth. Every round fills every SQ and RQ on both sides (64 receives,
 * then 64 sends per QP, both directions) and takes all 2 x 12800 completions;
 * some rounds let all completions pile up before polling (a consumer that is
 * late but within the sizing). Asserted: no overflow, every CQE accounted for
 * by (qp_num, wr_id) exactly once, in order per QP and kind, with SUCCESS, the
 * right opcode and byte_len, and every received byte; the high-water mark
 * read through drnic_cq_query_stats() is printed and within (0, depth].
 */
#include <stdlib.h>
#include <string.h>

#include <rte_pause.h>

#include "sem_common.h"

#define LD_PAIRS 100u
#define LD_WR 64u
#define LD_DEPTH (LD_PAIRS * (LD_WR + LD_WR) * 3 / 2)   /* 19200 */
#define LD_MSG 64u
#define LD_ROUNDS 64u
#define LD_LAZY_EVERY 4u   /* every 4th round polls only once all are in */
#define LD_PER_ROUND (LD_PAIRS * 2 * LD_WR)              /* per CQ: 12800 */
#define LD_HDR_MAGIC 0x5EB1C0DEu

enum { LD_KIND_SEND = 0, LD_KIND_RECV = 1 };

struct ld_hdr {
	uint32_t magic;
	uint32_t round;
	uint32_t pair;
	uint32_t slot_dir;  /* slot << 1 | dir (0: client to server) */
};

struct ld_state {
	struct drnic_qp *qp[2][LD_PAIRS];
	uint32_t qpn[2][LD_PAIRS];
	struct drnic_cq *cq[2];
	struct drnic_mr *rmr[2], *smr[2];
	uint8_t *rbuf[2], *sbuf[2];
	/* next slot expected per side, pair, kind in the current round */
	uint16_t next[2][LD_PAIRS][2];
	uint8_t seen[2][LD_PAIRS][2][LD_WR];
	uint32_t round;
};

static uint64_t
ld_wr_id(uint32_t round, unsigned int kind, unsigned int slot)
{
	return ((uint64_t)round << 32) | ((uint64_t)kind << 16) | slot;
}

static uint32_t
ld_seed(uint32_t round, unsigned int pair, unsigned int slot, unsigned int dir)
{
	return (round * LD_PAIRS + pair) * (LD_WR * 2) + slot * 2 + dir + 77;
}

static size_t
ld_off(unsigned int pair, unsigned int slot)
{
	return ((size_t)pair * LD_WR + slot) * LD_MSG;
}

static int
ld_find_pair(const struct ld_state *s, int side, uint32_t qpn)
{
	unsigned int p;

	for (p = 0; p < LD_PAIRS; p++)
		if (s->qpn[side][p] == qpn)
			return (int)p;
	return -1;
}

/* Check one completion taken from side @p side's CQ. */
static int
ld_check_wc(struct ld_state *s, int side, const struct drnic_wc *wc)
{
	int pair = ld_find_pair(s, side, wc->qp_num);
	uint32_t round = (uint32_t)(wc->wr_id >> 32);
	unsigned int kind = (unsigned int)(wc->wr_id >> 16) & 0xFFFF;
	unsigned int slot = (unsigned int)wc->wr_id & 0xFFFF;
	const char *sn = side == SEM_SRV ? "server" : "client";

	if (pair < 0 || wc->status != DRNIC_WC_SUCCESS || round != s->round || kind > 1 ||
	    slot >= LD_WR) {
		printf("%s CQ, round %u: unexpected completion (qp_num not one of this CQ's "
		       "QPs, bad status or foreign wr_id)\n", sn, s->round);
		sem_print_wc("got", wc);
		return TEST_FAILED;
	}
	if (s->seen[side][pair][kind][slot]) {
		printf("%s CQ, round %u: duplicate completion pair %d kind %u slot %u\n", sn,
		       s->round, pair, kind, slot);
		sem_print_wc("got", wc);
		return TEST_FAILED;
	}
	s->seen[side][pair][kind][slot] = 1;
	if (s->next[side][pair][kind] != slot) {
		printf("%s CQ, round %u: pair %d %s completions out of order: slot %u, "
		       "expected %u\n", sn, s->round, pair, kind ? "receive" : "send", slot,
		       s->next[side][pair][kind]);
		return TEST_FAILED;
	}
	s->next[side][pair][kind]++;
	if (kind == LD_KIND_SEND) {
		TEST_ASSERT_EQUAL(wc->opcode, DRNIC_WC_SEND, "%s send completion opcode", sn);
	} else {
		/* server receives come from the client (dir 0) and vice versa */
		unsigned int dir = side == SEM_SRV ? 0 : 1;
		const uint8_t *b = s->rbuf[side] + ld_off((unsigned int)pair, slot);
		/* LD_MSG (64) keeps every slot aligned for the header. */
		const struct ld_hdr *h = (const struct ld_hdr *)(const void *)b;
		long bad;

		TEST_ASSERT_EQUAL(wc->opcode, DRNIC_WC_RECV, "%s receive completion opcode", sn);
		TEST_ASSERT_EQUAL(wc->byte_len, LD_MSG, "%s receive byte_len", sn);
		if (h->magic != LD_HDR_MAGIC || h->round != s->round || h->pair != (uint32_t)pair ||
		    h->slot_dir != (slot << 1 | dir)) {
			printf("%s pair %d slot %u round %u: header {%#x, round %u, pair %u, "
			       "slot_dir %u}: message landed in the wrong buffer or not at all\n",
			       sn, pair, slot, s->round, h->magic, h->round, h->pair, h->slot_dir);
			return TEST_FAILED;
		}
		bad = sem_check(b + sizeof(*h), LD_MSG - sizeof(*h),
				ld_seed(s->round, (unsigned int)pair, slot, dir));
		TEST_ASSERT_EQUAL(bad, -1, "%s pair %d slot %u payload (first bad offset)", sn,
				  pair, slot);
	}
	return TEST_SUCCESS;
}

static int
ld_post_round(struct ld_state *s)
{
	static struct drnic_recv_wr rwr[LD_WR];
	static struct drnic_send_wr swr[LD_WR];
	static struct drnic_sge sge[LD_WR];
	unsigned int p, i;
	int side, rc;

	/* Receives first on both sides: every RQ full (64). */
	for (side = 0; side < 2; side++) {
		for (p = 0; p < LD_PAIRS; p++) {
			struct drnic_recv_wr *bad = NULL;

			for (i = 0; i < LD_WR; i++) {
				uint8_t *b = s->rbuf[side] + ld_off(p, i);

				memset(b, 0, LD_MSG);
				sge[i] = (struct drnic_sge){ .addr = (uintptr_t)b, .length = LD_MSG,
							     .lkey = drnic_mr_lkey(s->rmr[side]) };
				rwr[i] = (struct drnic_recv_wr){
					.wr_id = ld_wr_id(s->round, LD_KIND_RECV, i),
					.next = i + 1 < LD_WR ? &rwr[i + 1] : NULL,
					.sg_list = &sge[i], .num_sge = 1 };
			}
			rc = drnic_post_recv(s->qp[side][p], rwr, &bad);
			TEST_ASSERT_SUCCESS(rc, "round %u: post 64 receives on %s QP %u", s->round,
					    side == SEM_SRV ? "server" : "client", s->qpn[side][p]);
			TEST_ASSERT(bad == NULL, "bad_wr NULL after a successful post_recv");
		}
	}
	/* Then 64 sends per QP, both directions: every SQ full. */
	for (side = 0; side < 2; side++) {
		unsigned int dir = side == SEM_SRV ? 1 : 0;

		for (p = 0; p < LD_PAIRS; p++) {
			struct drnic_send_wr *bad = NULL;

			for (i = 0; i < LD_WR; i++) {
				uint8_t *b = s->sbuf[side] + ld_off(p, i);
				struct ld_hdr *h = (struct ld_hdr *)(void *)b;

				h->magic = LD_HDR_MAGIC;
				h->round = s->round;
				h->pair = p;
				h->slot_dir = i << 1 | dir;
				sem_fill(b + sizeof(*h), LD_MSG - sizeof(*h),
					 ld_seed(s->round, p, i, dir));
				sge[i] = (struct drnic_sge){ .addr = (uintptr_t)b, .length = LD_MSG,
							     .lkey = drnic_mr_lkey(s->smr[side]) };
				memset(&swr[i], 0, sizeof(swr[i]));
				swr[i].wr_id = ld_wr_id(s->round, LD_KIND_SEND, i);
				swr[i].next = i + 1 < LD_WR ? &swr[i + 1] : NULL;
				swr[i].sg_list = &sge[i];
				swr[i].num_sge = 1;
				swr[i].opcode = DRNIC_WR_SEND;
			}
			rc = drnic_post_send(s->qp[side][p], swr, &bad);
			TEST_ASSERT_SUCCESS(rc, "round %u: post 64 sends on %s QP %u", s->round,
					    side == SEM_SRV ? "server" : "client", s->qpn[side][p]);
			TEST_ASSERT(bad == NULL, "bad_wr NULL after a successful post_send");
		}
	}
	return TEST_SUCCESS;
}

static int
ld_body(struct sem_ctx *c)
{
	struct ld_state *s = calloc(1, sizeof(*s));
	static struct drnic_wc wc[256];
	struct drnic_cq_stats st[2];
	const size_t area = (size_t)LD_PAIRS * LD_WR * LD_MSG;
	uint64_t t0, t_end;
	unsigned int p, got[2];
	int side, rc = TEST_FAILED, n;

	if (s == NULL)
		return TEST_FAILED;
	for (side = 0; side < 2; side++) {
		s->cq[side] = sem_cq(c, side, LD_DEPTH, NULL, NULL);
		s->rmr[side] = sem_mr(c, side, area, DRNIC_ACCESS_LOCAL_WRITE,
				      (void **)&s->rbuf[side]);
		s->smr[side] = sem_mr(c, side, area, DRNIC_ACCESS_LOCAL_WRITE,
				      (void **)&s->sbuf[side]);
		if (s->cq[side] == NULL || s->rmr[side] == NULL || s->smr[side] == NULL)
			goto out;
	}
	for (p = 0; p < LD_PAIRS; p++) {
		uint32_t psn_s, psn_c;
		struct drnic_qp_attr qa;
		struct drnic_qp_init_attr ia;

		for (side = 0; side < 2; side++) {
			s->qp[side][p] = sem_qp(c, side, s->cq[side], s->cq[side], LD_WR, LD_WR, 1);
			if (s->qp[side][p] == NULL)
				goto out;
			s->qpn[side][p] = drnic_qp_num(s->qp[side][p]);
			if (drnic_query_qp(s->qp[side][p], &qa, 0, &ia) != 0 ||
			    ia.cap.max_send_wr != LD_WR || ia.cap.max_recv_wr != LD_WR) {
				printf("QP caps: max_send_wr %u max_recv_wr %u, expected 64\n",
				       ia.cap.max_send_wr, ia.cap.max_recv_wr);
				goto out;
			}
		}
		/* Even pairs start near the end of the PSN space: they wrap. */
		psn_s = (p & 1) ? (p * 0x10101u) & 0xFFFFFF : 0xFFFFFFu - 700 - p;
		psn_c = (p & 1) ? (p * 0x3033u + 5) & 0xFFFFFF : 0xFFFFFFu - 300 - 3 * p;
		if (sem_connect(c, s->qp[SEM_SRV][p], s->qp[SEM_CLI][p], psn_s, psn_c) != 0)
			goto out;
	}

	t0 = sem_now_us();
	for (s->round = 1; s->round <= LD_ROUNDS; s->round++) {
		bool lazy = s->round % LD_LAZY_EVERY == 0;
		uint64_t before[2];

		memset(s->next, 0, sizeof(s->next));
		memset(s->seen, 0, sizeof(s->seen));
		for (side = 0; side < 2; side++) {
			drnic_cq_query_stats(s->cq[side], &st[side]);
			before[side] = st[side].completions;
		}
		if (ld_post_round(s) != TEST_SUCCESS)
			goto out;
		t_end = sem_now_us() + 20u * 1000000u;
		if (lazy) {
			/* A late consumer: nothing polled until every completion
			 * of the round is in the CQs (12800 each, within 19200). */
			for (;;) {
				drnic_cq_query_stats(s->cq[SEM_SRV], &st[SEM_SRV]);
				drnic_cq_query_stats(s->cq[SEM_CLI], &st[SEM_CLI]);
				if (st[0].completions - before[0] >= LD_PER_ROUND &&
				    st[1].completions - before[1] >= LD_PER_ROUND)
					break;
				if (st[0].overflows != 0 || st[1].overflows != 0 ||
				    sem_now_us() > t_end) {
					printf("round %u (late consumer): server CQ %llu/%u client CQ "
					       "%llu/%u completions, overflows %llu/%llu\n", s->round,
					       (unsigned long long)(st[0].completions - before[0]),
					       LD_PER_ROUND,
					       (unsigned long long)(st[1].completions - before[1]),
					       LD_PER_ROUND, (unsigned long long)st[0].overflows,
					       (unsigned long long)st[1].overflows);
					goto out;
				}
				if (c->mode == DRNIC_PROGRESS_INLINE)
					drnic_device_progress(c->dev[SEM_SRV]);
				else
					rte_pause();
			}
			for (side = 0; side < 2; side++)
				if (st[side].occupancy != LD_PER_ROUND) {
					printf("round %u: %s CQ occupancy %u, expected %u\n",
					       s->round, side == SEM_SRV ? "server" : "client",
					       st[side].occupancy, LD_PER_ROUND);
					goto out;
				}
		}
		got[0] = got[1] = 0;
		while (got[0] < LD_PER_ROUND || got[1] < LD_PER_ROUND) {
			for (side = 0; side < 2; side++) {
				int i;

				n = drnic_cq_poll(s->cq[side], (int)RTE_DIM(wc), wc);
				if (n < 0) {
					printf("round %u: drnic_cq_poll(%s): %d\n", s->round,
					       side == SEM_SRV ? "server" : "client", n);
					goto out;
				}
				for (i = 0; i < n; i++)
					if (ld_check_wc(s, side, &wc[i]) != TEST_SUCCESS)
						goto out;
				got[side] += (unsigned int)n;
			}
			if (got[0] > LD_PER_ROUND || got[1] > LD_PER_ROUND) {
				printf("round %u: more completions than work requests\n", s->round);
				goto out;
			}
			if (sem_now_us() > t_end) {
				printf("round %u: timeout with %u/%u server and %u/%u client "
				       "completions\n", s->round, got[0], LD_PER_ROUND, got[1],
				       LD_PER_ROUND);
				goto out;
			}
		}
	}
	printf("%u rounds, %u messages each way, in %.3f s\n", LD_ROUNDS,
	       LD_ROUNDS * LD_PAIRS * LD_WR, (double)(sem_now_us() - t0) / 1e6);

	for (side = 0; side < 2; side++) {
		const char *sn = side == SEM_SRV ? "server" : "client";

		n = sem_poll_quiet(c, s->cq[side], wc, 16, 10);
		if (n != 0) {
			printf("%s CQ: %d completion(s) beyond the work posted\n", sn, n);
			goto out;
		}
		drnic_cq_query_stats(s->cq[side], &st[side]);
		printf("%s shared CQ: depth %u high_water %u completions %llu overflows %llu "
		       "in_error %u (users size CQs from the high-water mark)\n", sn,
		       st[side].depth, st[side].high_water,
		       (unsigned long long)st[side].completions,
		       (unsigned long long)st[side].overflows, st[side].in_error);
		if (st[side].overflows != 0 || st[side].in_error != 0 ||
		    st[side].completions != (uint64_t)LD_ROUNDS * LD_PER_ROUND ||
		    st[side].depth != LD_DEPTH || st[side].high_water == 0 ||
		    st[side].high_water > LD_DEPTH) {
			printf("%s CQ: expected overflows 0, in_error 0, completions %u, depth %u, "
			       "high_water in (0, %u]\n", sn, LD_ROUNDS * LD_PER_ROUND, LD_DEPTH,
			       LD_DEPTH);
			goto out;
		}
		/* Late-consumer rounds held all 12800 at once: the mark must
		 * show it (12799 if counted before the push), and can never
		 * exceed the work outstanding. */
		if (st[side].high_water < LD_PER_ROUND - 1 || st[side].high_water > LD_PER_ROUND) {
			printf("%s CQ: high_water %u, expected %u (12800 CQEs were waiting)\n", sn,
			       st[side].high_water, LD_PER_ROUND);
			goto out;
		}
	}
	for (p = 0; p < LD_PAIRS; p++)
		for (side = 0; side < 2; side++)
			if (drnic_qp_state(s->qp[side][p]) != DRNIC_QPS_RTS) {
				printf("QP %u in %s after the load, expected RTS\n", s->qpn[side][p],
				       drnic_qp_state_str(drnic_qp_state(s->qp[side][p])));
				goto out;
			}
	rc = TEST_SUCCESS;
out:
	free(s);
	return rc;
}

static int
test_shared_cq_inline(void)
{
	return sem_run(DRNIC_PROGRESS_INLINE, "shared CQ, 100 QP pairs", ld_body);
}

static int
test_shared_cq_dedicated(void)
{
	return sem_run(DRNIC_PROGRESS_DEDICATED, "shared CQ, 100 QP pairs", ld_body);
}

DRNIC_TEST_REGISTER(sem_shared_cq_inline_autotest, DRNIC_TEST_FAST, test_shared_cq_inline);
DRNIC_TEST_REGISTER(sem_shared_cq_dedicated_autotest, DRNIC_TEST_FAST, test_shared_cq_dedicated);
