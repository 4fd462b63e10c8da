/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The user's CQ chapter (seed 000, §3.3.2), step by step: the server creates
 * a CQ of depth 1024 and a QP on it, registers two buffers and posts two
 * receives (wr_id 1001, 1002); the client sends 4096 bytes; the server polls
 * exactly one CQE {1001, SUCCESS, RECV, 4096, server QPN} and finds the bytes;
 * it reposts 1003 and the next two sends land in 1002, then 1003.
 */
#include <string.h>

#include "sem_common.h"

#define SEED_LEN 4096u

static int
seed_body(struct sem_ctx *c)
{
	const unsigned int acc = DRNIC_ACCESS_LOCAL_WRITE;
	struct drnic_cq *scq, *ccq;
	struct drnic_qp *sqp, *cqp;
	struct drnic_mr *rmr[2], *smr;
	struct drnic_cq_stats st;
	struct drnic_wc wc[4];
	uint8_t *rbuf[2], *sbuf;
	uint32_t sqpn, cqpn;
	long bad;
	int n, i;

	scq = sem_cq(c, SEM_SRV, 1024, NULL, NULL);
	ccq = sem_cq(c, SEM_CLI, 64, NULL, NULL);
	TEST_ASSERT(scq != NULL && ccq != NULL, "CQ creation");
	TEST_ASSERT_SUCCESS(drnic_cq_query_stats(scq, &st), "query stats");
	TEST_ASSERT_EQUAL(st.depth, 1024, "the depth asked for, exactly");

	sqp = sem_qp(c, SEM_SRV, scq, scq, 16, 16, 0);
	cqp = sem_qp(c, SEM_CLI, ccq, ccq, 16, 16, 1);
	TEST_ASSERT(sqp != NULL && cqp != NULL, "QP creation");
	sqpn = drnic_qp_num(sqp);
	cqpn = drnic_qp_num(cqp);
	TEST_ASSERT(sqpn != 0 && cqpn != 0, "QP numbers");

	/* Two registered buffers on the server, one on the client. */
	rmr[0] = sem_mr(c, SEM_SRV, SEED_LEN, acc, (void **)&rbuf[0]);
	rmr[1] = sem_mr(c, SEM_SRV, SEED_LEN, acc, (void **)&rbuf[1]);
	smr = sem_mr(c, SEM_CLI, SEED_LEN, acc, (void **)&sbuf);
	TEST_ASSERT(rmr[0] != NULL && rmr[1] != NULL && smr != NULL, "MR registration");
	memset(rbuf[0], 0xA5, SEED_LEN);
	memset(rbuf[1], 0xA5, SEED_LEN);

	TEST_ASSERT_SUCCESS(sem_connect(c, sqp, cqp, 0x1000, 0x2000), "connect");
	TEST_ASSERT_EQUAL(drnic_qp_state(sqp), DRNIC_QPS_RTS, "server QP state");
	TEST_ASSERT_EQUAL(drnic_qp_state(cqp), DRNIC_QPS_RTS, "client QP state");

	/* 1. Two receives, 1001 and 1002. */
	TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 1001, rbuf[0], SEED_LEN, drnic_mr_lkey(rmr[0])),
			    "post recv 1001");
	TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 1002, rbuf[1], SEED_LEN, drnic_mr_lkey(rmr[1])),
			    "post recv 1002");

	/* 2. The client sends 4096 bytes. */
	sem_fill(sbuf, SEED_LEN, 1);
	TEST_ASSERT_SUCCESS(sem_post_send(cqp, 1, DRNIC_WR_SEND, sbuf, SEED_LEN,
					  drnic_mr_lkey(smr), DRNIC_SEND_SIGNALED, 0, 0),
			    "post send 1");

	/* 3./4. Exactly one CQE on the server. */
	n = sem_poll_n(c, scq, wc, 1, 5000);
	TEST_ASSERT_EQUAL(n, 1, "one completion for the first message within 5 s");
	SEM_ASSERT_WC(&wc[0], 1001, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn);
	TEST_ASSERT_EQUAL(wc[0].byte_len, SEED_LEN, "byte_len of the receive");
	TEST_ASSERT_EQUAL(wc[0].wc_flags & DRNIC_WC_WITH_IMM, 0, "no immediate data");
	n = sem_poll_quiet(c, scq, wc + 1, 3, 50);
	TEST_ASSERT_EQUAL(n, 0, "nothing more on the server CQ after the first message");
	bad = sem_check(rbuf[0], SEED_LEN, 1);
	TEST_ASSERT_EQUAL(bad, -1, "buffer of 1001 holds the bytes sent (first bad offset)");
	bad = sem_check_byte(rbuf[1], SEED_LEN, 0xA5);
	TEST_ASSERT_EQUAL(bad, -1, "buffer of 1002 untouched (first changed offset)");

	/* The client's send completion. */
	n = sem_poll_n(c, ccq, wc, 1, 5000);
	TEST_ASSERT_EQUAL(n, 1, "client send completion within 5 s");
	SEM_ASSERT_WC(&wc[0], 1, DRNIC_WC_SUCCESS, DRNIC_WC_SEND, cqpn);

	/* 5. The application is done with buffer 0: repost it as 1003. */
	memset(rbuf[0], 0x3C, SEED_LEN);
	TEST_ASSERT_SUCCESS(sem_post_recv(sqp, 1003, rbuf[0], SEED_LEN, drnic_mr_lkey(rmr[0])),
			    "post recv 1003");

	/* Two more sends: into 1002, then 1003. Sent one at a time so each
	 * buffer can be checked against its own pattern. */
	for (i = 0; i < 2; i++) {
		uint64_t exp = 1002 + (uint64_t)i;
		uint8_t *dst = rbuf[i == 0 ? 1 : 0];

		sem_fill(sbuf, SEED_LEN, 2 + (uint32_t)i);
		TEST_ASSERT_SUCCESS(sem_post_send(cqp, 2 + (uint64_t)i, DRNIC_WR_SEND, sbuf,
						  SEED_LEN, drnic_mr_lkey(smr), 0, 0, 0),
				    "post send %d", 2 + i);
		n = sem_poll_n(c, scq, wc, 1, 5000);
		TEST_ASSERT_EQUAL(n, 1, "server completion for message %d", 2 + i);
		SEM_ASSERT_WC(&wc[0], exp, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn);
		TEST_ASSERT_EQUAL(wc[0].byte_len, SEED_LEN, "byte_len of %llu",
				  (unsigned long long)exp);
		n = sem_poll_n(c, ccq, wc, 1, 5000);
		TEST_ASSERT_EQUAL(n, 1, "client completion for message %d", 2 + i);
		SEM_ASSERT_WC(&wc[0], 2 + (uint64_t)i, DRNIC_WC_SUCCESS, DRNIC_WC_SEND, cqpn);
		bad = sem_check(dst, SEED_LEN, 2 + (uint32_t)i);
		TEST_ASSERT_EQUAL(bad, -1, "buffer of %llu holds message %d (first bad offset)",
				  (unsigned long long)exp, 2 + i);
	}
	n = sem_poll_quiet(c, scq, wc, 4, 20);
	TEST_ASSERT_EQUAL(n, 0, "no extra server completion");
	n = sem_poll_quiet(c, ccq, wc, 4, 20);
	TEST_ASSERT_EQUAL(n, 0, "no extra client completion");

	TEST_ASSERT_SUCCESS(drnic_cq_query_stats(scq, &st), "query stats");
	printf("server CQ: depth %u completions %llu high_water %u overflows %llu\n", st.depth,
	       (unsigned long long)st.completions, st.high_water,
	       (unsigned long long)st.overflows);
	TEST_ASSERT_EQUAL(st.completions, 3, "server CQ completions counter");
	TEST_ASSERT_EQUAL(st.overflows, 0, "no overflow");
	TEST_ASSERT_EQUAL(st.in_error, 0, "CQ not in error");
	TEST_ASSERT_EQUAL(st.occupancy, 0, "everything polled");
	TEST_ASSERT(st.high_water >= 1 && st.high_water <= 1024, "high-water mark %u in [1, 1024]",
		    st.high_water);
	return TEST_SUCCESS;
}

static int
test_seed_inline(void)
{
	return sem_run(DRNIC_PROGRESS_INLINE, "seed lifecycle", seed_body);
}

static int
test_seed_dedicated(void)
{
	return sem_run(DRNIC_PROGRESS_DEDICATED, "seed lifecycle", seed_body);
}

DRNIC_TEST_REGISTER(sem_seed_lifecycle_inline_autotest, DRNIC_TEST_FAST, test_seed_inline);
DRNIC_TEST_REGISTER(sem_seed_lifecycle_dedicated_autotest, DRNIC_TEST_FAST, test_seed_dedicated);
