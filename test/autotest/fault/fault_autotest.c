/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection on a loopback pair: fault_ keys in link_args, RC SEND and
 * WRITE through loss, duplication, reordering and corruption; every
 * corrupted frame dropped by the receiver's parser; runtime set/get; bad
 * keys refused at open; loss of received frames (fault_dir=rx) on one side.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>

#include "test.h"
#include "drnic_engine.h"
#include "drnic_link.h"
#include "drnic_link_fault.h"
#include "drnic_verbs.h"
#include "drnic_wire.h"
#include "../rnic/rnic_fixture.h"

#define FAULT_NB_SEND 64
#define FAULT_NB_WRITE 32
#define FAULT_WRITE_LEN 8192u
#define FAULT_WRITE_OFF (1u << 20)

static uint64_t
fault_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Open a pair; @p fa / @p fb (may be "") are appended to A's / B's link_args. */
static int
fault_pair_open2(struct rnic_pair *p, const char *fa, const char *fb)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE, .link_extra = { fa, fb } };

	return rnic_pair_open(p, &o);
}

/* Open a pair; @p faults (may be "") is appended to both sides' link_args. */
static int
fault_pair_open(struct rnic_pair *p, const char *faults)
{
	return fault_pair_open2(p, faults, faults);
}

/* Poll @p n completions within @p ms, driving both (inline) devices. */
static int
fault_poll(struct rnic_side *s, struct drnic_wc *wc, int n, unsigned int ms)
{
	uint64_t deadline = fault_now_ms() + ms;
	int got = 0, rc;

	while (got < n && fault_now_ms() < deadline) {
		rc = drnic_cq_poll(s->cq, n - got, wc + got);
		if (rc < 0)
			return rc;
		got += rc;
		if (rc == 0)
			drnic_device_progress(s->dev);
	}
	return got;
}

/* Run the engines until neither link holds a frame (or 2 s). */
static void
fault_quiesce(struct rnic_pair *p)
{
	struct drnic_link_fault_stats sa, sb;
	uint64_t deadline = fault_now_ms() + 2000;

	do {
		drnic_device_progress(p->a.dev);
		drnic_link_fault_stats(drnic_device_link(p->a.dev), &sa);
		drnic_link_fault_stats(drnic_device_link(p->b.dev), &sb);
	} while (sa.held + sb.held > 0 && fault_now_ms() < deadline);
}

static void
fault_stats_sum(struct rnic_pair *p, struct drnic_link_fault_stats *st)
{
	struct drnic_link_fault_stats x;
	uint64_t *d = (uint64_t *)st;
	const uint64_t *s = (const uint64_t *)&x;
	size_t i;

	memset(st, 0, sizeof(*st));
	drnic_link_fault_stats(drnic_device_link(p->a.dev), &x);
	for (i = 0; i < sizeof(x) / sizeof(uint64_t); i++)
		d[i] += s[i];
	drnic_link_fault_stats(drnic_device_link(p->b.dev), &x);
	for (i = 0; i < sizeof(x) / sizeof(uint64_t); i++)
		d[i] += s[i];
}

/* Engine wire drops of both devices, by reason. */
static void
fault_wire_drops(struct rnic_pair *p, uint64_t drops[DRNIC_WIRE_DROP_MAX])
{
	struct drnic_engine_stats es;
	unsigned int r;

	memset(drops, 0, sizeof(uint64_t) * DRNIC_WIRE_DROP_MAX);
	if (drnic_engine_stats_get(p->a.dev, 0, &es) == 0)
		for (r = 0; r < DRNIC_WIRE_DROP_MAX; r++)
			drops[r] += es.wire_drops[r];
	if (drnic_engine_stats_get(p->b.dev, 0, &es) == 0)
		for (r = 0; r < DRNIC_WIRE_DROP_MAX; r++)
			drops[r] += es.wire_drops[r];
}

static void
fault_print(const struct drnic_link_fault_stats *st, const uint64_t drops[DRNIC_WIRE_DROP_MAX])
{
	unsigned int r;

	printf("faults: dropped %" PRIu64 " duplicated %" PRIu64 " reordered %" PRIu64
	       " corrupted %" PRIu64 " (%" PRIu64 " bits) dup_failed %" PRIu64
	       " refused %" PRIu64 " held %" PRIu64 "\n", st->dropped, st->duplicated,
	       st->reordered, st->corrupted, st->corrupted_bits, st->dup_failed, st->refused,
	       st->held);
	printf("receiver drops:");
	for (r = 1; r < DRNIC_WIRE_DROP_MAX; r++)
		if (drops[r] > 0)
			printf(" %s %" PRIu64, drnic_wire_drop_name(r), drops[r]);
	printf("\n");
}

/* SENDs of 1..3000 bytes and 8 KiB WRITEs; every byte and completion checked. */
static int
fault_traffic(struct rnic_pair *p, const char *what)
{
	struct drnic_send_wr swr, *bad;
	struct drnic_recv_wr rwr, *rbad;
	struct drnic_sge sge;
	struct drnic_wc wc[FAULT_NB_SEND];
	uint32_t len[FAULT_NB_SEND], i;
	int got, k;

	memset(p->b.buf, 0xEE, RNIC_BUF_SIZE);
	for (i = 0; i < FAULT_NB_SEND; i++) {
		len[i] = 1 + (i * 977u) % 3000;
		rnic_fill(p->a.buf + i * 4096, len[i], i);
		sge = (struct drnic_sge){ (uintptr_t)(p->b.buf + i * 4096), 4096,
					  drnic_mr_lkey(p->b.mr) };
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 100 + i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		TEST_ASSERT_SUCCESS(drnic_post_recv(p->b.qp, &rwr, &rbad), "post_recv %u", i);
	}
	for (i = 0; i < FAULT_NB_SEND; i++) {
		sge = (struct drnic_sge){ (uintptr_t)(p->a.buf + i * 4096), len[i],
					  drnic_mr_lkey(p->a.mr) };
		memset(&swr, 0, sizeof(swr));
		swr.wr_id = i;
		swr.sg_list = &sge;
		swr.num_sge = 1;
		swr.opcode = DRNIC_WR_SEND;
		swr.send_flags = DRNIC_SEND_SIGNALED;
		TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr, &bad), "post_send %u", i);
	}
	got = fault_poll(&p->a, wc, FAULT_NB_SEND, 20000);
	TEST_ASSERT_EQUAL(got, FAULT_NB_SEND, "%s: send completions", what);
	for (k = 0; k < got; k++) {
		TEST_ASSERT_EQUAL(wc[k].status, DRNIC_WC_SUCCESS, "%s: send %d: %s", what, k,
				  drnic_wc_status_str(wc[k].status));
		TEST_ASSERT_EQUAL(wc[k].wr_id, (uint64_t)k, "%s: send completions in order", what);
	}
	got = fault_poll(&p->b, wc, FAULT_NB_SEND, 20000);
	TEST_ASSERT_EQUAL(got, FAULT_NB_SEND, "%s: receive completions", what);
	for (k = 0; k < got; k++) {
		TEST_ASSERT_EQUAL(wc[k].status, DRNIC_WC_SUCCESS, "%s: recv %d: %s", what, k,
				  drnic_wc_status_str(wc[k].status));
		TEST_ASSERT_EQUAL(wc[k].wr_id, 100u + (uint64_t)k, "%s: receives in order", what);
		TEST_ASSERT_EQUAL(wc[k].byte_len, len[k], "%s: recv %d length", what, k);
		TEST_ASSERT(memcmp(p->b.buf + k * 4096, p->a.buf + k * 4096, len[k]) == 0,
			    "%s: message %d bytes differ", what, k);
		TEST_ASSERT_EQUAL(p->b.buf[k * 4096 + len[k]], 0xEE, "%s: byte after message %d",
				  what, k);
	}

	for (i = 0; i < FAULT_NB_WRITE; i++) {
		uint32_t off = FAULT_WRITE_OFF + i * FAULT_WRITE_LEN;

		rnic_fill(p->a.buf + off, FAULT_WRITE_LEN, 1000 + i);
		sge = (struct drnic_sge){ (uintptr_t)(p->a.buf + off), FAULT_WRITE_LEN,
					  drnic_mr_lkey(p->a.mr) };
		memset(&swr, 0, sizeof(swr));
		swr.wr_id = 500 + i;
		swr.sg_list = &sge;
		swr.num_sge = 1;
		swr.opcode = DRNIC_WR_RDMA_WRITE;
		swr.send_flags = DRNIC_SEND_SIGNALED;
		swr.wr.rdma.remote_addr = (uintptr_t)(p->b.buf + off);
		swr.wr.rdma.rkey = drnic_mr_rkey(p->b.mr);
		TEST_ASSERT_SUCCESS(drnic_post_send(p->a.qp, &swr, &bad), "post write %u", i);
	}
	got = fault_poll(&p->a, wc, FAULT_NB_WRITE, 20000);
	TEST_ASSERT_EQUAL(got, FAULT_NB_WRITE, "%s: write completions", what);
	for (k = 0; k < got; k++) {
		TEST_ASSERT_EQUAL(wc[k].status, DRNIC_WC_SUCCESS, "%s: write %d: %s", what, k,
				  drnic_wc_status_str(wc[k].status));
		TEST_ASSERT_EQUAL(wc[k].wr_id, 500u + (uint64_t)k, "%s: writes in order", what);
	}
	TEST_ASSERT(memcmp(p->b.buf + FAULT_WRITE_OFF, p->a.buf + FAULT_WRITE_OFF,
			   FAULT_NB_WRITE * FAULT_WRITE_LEN) == 0, "%s: written bytes differ", what);
	TEST_ASSERT_EQUAL(p->b.buf[FAULT_WRITE_OFF + FAULT_NB_WRITE * FAULT_WRITE_LEN], 0xEE,
			  "%s: byte after the writes", what);
	return TEST_SUCCESS;
}

static int
fault_rc_autotest(void)
{
	static const char faults[] = "fault_drop=0.02,fault_dup=0.01,fault_reorder=0.02,"
				     "fault_reorder_depth=4,fault_corrupt=0.02,fault_seed=42";
	struct drnic_link_fault_stats st;
	uint64_t drops[DRNIC_WIRE_DROP_MAX], total = 0;
	struct drnic_link_faults cfg;
	struct rnic_pair p;
	int rc, r;

	TEST_ASSERT_SUCCESS(fault_pair_open(&p, faults), "open");
	TEST_ASSERT_SUCCESS(drnic_link_get_faults(drnic_device_link(p.a.dev), &cfg), "get");
	TEST_ASSERT(cfg.drop == 0.02 && cfg.seed == 42 && cfg.reorder_depth == 4, "parsed");
	rc = fault_traffic(&p, "faulty link");
	fault_quiesce(&p);
	fault_stats_sum(&p, &st);
	fault_wire_drops(&p, drops);
	fault_print(&st, drops);
	rnic_pair_close(&p);
	if (rc != TEST_SUCCESS)
		return rc;
	TEST_ASSERT(st.dropped > 0 && st.duplicated > 0 && st.reordered > 0 && st.corrupted > 0,
		    "every kind of fault injected");
	TEST_ASSERT_EQUAL(st.dup_failed + st.corrupt_failed, 0, "no mbuf shortage");
	TEST_ASSERT_EQUAL(st.held, 0, "nothing left held");
	for (r = 1; r < DRNIC_WIRE_DROP_MAX; r++)
		total += drops[r];
	/* Each corrupted frame is dropped by the receiver's parser, nothing else is. */
	TEST_ASSERT_EQUAL(total, st.corrupted, "receiver wire drops == corrupted frames");
	TEST_ASSERT(drops[DRNIC_WIRE_DROP_BAD_ICRC] > 0, "bad_icrc drops");
	return TEST_SUCCESS;
}

static int
fault_runtime_autotest(void)
{
	struct drnic_link_fault_stats st;
	struct drnic_link_faults cfg;
	struct drnic_engine_stats es = { 0 };
	struct rnic_pair p;
	struct drnic_link *la;
	int rc;

	memset(&p, 0, sizeof(p));
	/* Bad keys are refused when the device opens, naming the key in the log. */
	rc = fault_pair_open2(&p, "fault_drop=1.5", "");
	TEST_ASSERT(rc == -EINVAL && p.a.dev == NULL, "fault_drop=1.5 refused (%d)", rc);
	rc = fault_pair_open2(&p, "fault_dorp=0.1", "");
	TEST_ASSERT(rc == -EINVAL && p.a.dev == NULL, "fault_dorp refused (%d)", rc);

	TEST_ASSERT_SUCCESS(fault_pair_open(&p, ""), "open");
	la = drnic_device_link(p.a.dev);
	TEST_ASSERT_EQUAL(drnic_link_get_faults(la, &cfg), -ENOENT, "no faults yet");
	TEST_ASSERT_SUCCESS(drnic_link_fault_stats(la, &st), "stats");
	TEST_ASSERT_EQUAL(st.duplicated, 0, "nothing injected");
	/* Every frame from A twice: B re-acknowledges the duplicates. */
	cfg.dup = 1;
	TEST_ASSERT_SUCCESS(drnic_link_set_faults(la, &cfg), "set");
	cfg.dup = 2;
	TEST_ASSERT_EQUAL(drnic_link_set_faults(la, &cfg), -EINVAL, "dup=2 refused");
	rc = fault_traffic(&p, "duplicating link");
	fault_quiesce(&p);
	drnic_link_fault_stats(la, &st);
	printf("duplicated %" PRIu64 "\n", st.duplicated);
	if (rc == TEST_SUCCESS && drnic_engine_stats_get(p.b.dev, 0, &es) == 0)
		printf("receiver psn_dup drops %" PRIu64 "\n", es.drops[DRNIC_ENGINE_DROP_PSN_DUP]);
	cfg.dup = 0;
	TEST_ASSERT_SUCCESS(drnic_link_set_faults(la, &cfg), "set off");
	rnic_pair_close(&p);
	if (rc != TEST_SUCCESS)
		return rc;
	TEST_ASSERT(st.duplicated >= FAULT_NB_SEND + FAULT_NB_WRITE, "every frame duplicated");
	TEST_ASSERT_EQUAL(es.drops[DRNIC_ENGINE_DROP_PSN_DUP] > 0, 1, "duplicates seen as such");
	return TEST_SUCCESS;
}

/*
 * B loses 5% of the frames it receives (its own injector, fault_dir=rx); A's
 * link is clean. A's requests that B lost are retransmitted by A, and the
 * transfer completes intact.
 */
static int
fault_rx_autotest(void)
{
	static const char faults[] = "fault_dir=rx,fault_drop=0.05,fault_seed=7";
	struct drnic_link_fault_stats rx, tx, sa;
	struct drnic_qp_stats qa = { 0 };
	uint64_t drops[DRNIC_WIRE_DROP_MAX];
	struct drnic_link_faults cfg;
	struct rnic_pair p;
	struct drnic_link *lb;
	int rc;

	TEST_ASSERT_SUCCESS(fault_pair_open2(&p, "", faults), "open");
	lb = drnic_device_link(p.b.dev);
	TEST_ASSERT_SUCCESS(drnic_link_get_faults(lb, &cfg), "get");
	TEST_ASSERT(cfg.dir == DRNIC_LINK_FAULT_DIR_RX && cfg.drop == 0.05 && cfg.seed == 7,
		    "parsed");
	TEST_ASSERT_EQUAL(drnic_link_get_faults(drnic_device_link(p.a.dev), &cfg), -ENOENT,
			  "A has no faults");
	rc = fault_traffic(&p, "lossy receiver");
	fault_quiesce(&p);
	drnic_link_fault_stats_dir(lb, DRNIC_LINK_FAULT_DIR_RX, &rx);
	drnic_link_fault_stats_dir(lb, DRNIC_LINK_FAULT_DIR_TX, &tx);
	drnic_link_fault_stats(drnic_device_link(p.a.dev), &sa);
	drnic_qp_stats_get(p.a.qp, &qa);
	fault_wire_drops(&p, drops);
	printf("B receive side: ");
	fault_print(&rx, drops);
	printf("A (sender): retransmits %" PRIu64 " timeouts %" PRIu64 " naks_rx %" PRIu64
	       " tx_packets %" PRIu64 "\n", qa.retransmits, qa.timeouts, qa.naks_rx,
	       qa.tx_packets);
	rnic_pair_close(&p);
	if (rc != TEST_SUCCESS)
		return rc;
	TEST_ASSERT(rx.dropped > 0, "B's receive injector dropped frames");
	TEST_ASSERT_EQUAL(rx.refused + rx.held, 0, "none refused, none left held");
	TEST_ASSERT_EQUAL(tx.dropped + tx.held + sa.dropped, 0, "no transmit faults");
	TEST_ASSERT(qa.retransmits > 0, "A retransmitted what B lost");
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(fault_rc_autotest, DRNIC_TEST_FAST, fault_rc_autotest);
DRNIC_TEST_REGISTER(fault_runtime_autotest, DRNIC_TEST_FAST, fault_runtime_autotest);
DRNIC_TEST_REGISTER(fault_rx_autotest, DRNIC_TEST_FAST, fault_rx_autotest);
