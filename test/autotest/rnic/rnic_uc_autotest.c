/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UC end to end on the loopback wire, in both progress modes: SENDs and
 * WRITEs with immediate of one to five packets. A's WQEs complete when their
 * last packet has left (nothing answers UC). On a lossless wire every
 * message arrives exact. Then with 5% of A's frames lost, 2% duplicated and
 * 2% reordered (drnic's fault injector): a message with a lost or overtaken
 * packet is dropped whole and every other arrives exact, none twice; B
 * sends no frame at all (no ACK, no NAK).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>

#include "drnic_cq.h"
#include "drnic_link.h"
#include "drnic_link_fault.h"

#include "test.h"
#include "rnic_fixture.h"

#define UC_MSGS 400
#define UC_SLOT 8192

static uint32_t
uc_len(uint32_t i)
{
	return 16 + (i * 977) % 4800;   /* 1 to 5 packets at MTU 1024 */
}

/* Post receive @p i: slot i % 64 of B's buffer. */
static int
uc_post_recv(struct rnic_pair *p, uint32_t i)
{
	struct drnic_sge sge = { (uintptr_t)p->b.buf + (i % 64) * UC_SLOT, UC_SLOT,
				 drnic_mr_lkey(p->b.mr) };
	struct drnic_recv_wr wr = { .wr_id = i % 64, .sg_list = &sge, .num_sge = 1 }, *bad;

	return drnic_post_recv(p->b.qp, &wr, &bad);
}

/* Message @p i from A: a SEND with immediate @p i (even i) or a WRITE with
 * immediate @p i into B's write area (odd i); its bytes say which it is. */
static int
uc_send(struct rnic_pair *p, uint32_t i)
{
	uint8_t *src = p->a.buf + (i % 64) * UC_SLOT;
	uint32_t len = uc_len(i);
	struct drnic_sge sge = { (uintptr_t)src, len, drnic_mr_lkey(p->a.mr) };
	struct drnic_send_wr wr = { 0 }, *bad;

	rnic_fill(src, len, i);
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.imm_data = i;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	if (i % 2 == 0) {
		wr.opcode = DRNIC_WR_SEND_WITH_IMM;
	} else {
		wr.opcode = DRNIC_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.rdma.remote_addr = (uintptr_t)p->b.buf + (1u << 20) + (i % 64) * UC_SLOT;
		wr.wr.rdma.rkey = drnic_mr_rkey(p->b.mr);
	}
	return drnic_post_send(p->a.qp, &wr, &bad);
}

/* Every frame A sent has reached B's QP or was lost by the injector: B can
 * get nothing more (the fault injector sits on A's transmit side). */
static int
uc_wait_delivered(struct rnic_pair *p)
{
	uint64_t deadline = rnic_now_ms() + 5000;
	struct drnic_link_fault_stats fs;
	struct drnic_qp_stats sa, sb;

	do {
		drnic_device_progress(p->a.dev);
		drnic_qp_stats_get(p->a.qp, &sa);
		drnic_qp_stats_get(p->b.qp, &sb);
		if (drnic_link_fault_stats(drnic_device_link(p->a.dev), &fs) < 0)
			return -1;
		if (sb.rx_packets + fs.dropped >= sa.tx_packets)
			return 0;
	} while (rnic_now_ms() < deadline);
	return -1;
}

/* Send UC_MSGS messages, 32 at a time; B takes what arrives. Returns the
 * number received (each checked), or -1 after a failed assertion. */
static int
uc_run(struct rnic_pair *p, bool lossy)
{
	static uint8_t seen[UC_MSGS], want[UC_SLOT];
	struct drnic_wc wc[32];
	uint32_t sent = 0, got = 0, i;
	int n, k;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 64; i++)
		TEST_ASSERT_SUCCESS(uc_post_recv(p, i), "post_recv %u", i);
	while (sent < UC_MSGS) {
		uint32_t burst = RTE_MIN(32u, UC_MSGS - sent);

		for (i = 0; i < burst; i++)
			TEST_ASSERT_SUCCESS(uc_send(p, sent + i), "post_send %u", sent + i);
		/* A's completions: every one, successful, in order. */
		TEST_ASSERT_EQUAL(rnic_poll(&p->a, wc, (int)burst), (int)burst, "send completions");
		for (k = 0; k < (int)burst; k++)
			TEST_ASSERT(wc[k].status == DRNIC_WC_SUCCESS && wc[k].wr_id == sent + (uint32_t)k,
				    "send %u: %s wr_id %" PRIu64, sent + k,
				    drnic_wc_status_str(wc[k].status), wc[k].wr_id);
		sent += burst;
		/* What B got: without loss all of the burst; with loss, what
		 * arrived once every frame has reached B or was lost. */
		if (lossy)
			TEST_ASSERT_SUCCESS(uc_wait_delivered(p), "frames still on the way");
		for (;;) {
			n = lossy ? drnic_cq_poll(p->b.cq, 32, wc) :
				    rnic_poll(&p->b, wc, (int)RTE_MIN(32u, sent - got));
			if (n <= 0)
				break;
			for (k = 0; k < n; k++) {
				uint32_t id = wc[k].imm_data;
				const uint8_t *at;

				TEST_ASSERT(wc[k].status == DRNIC_WC_SUCCESS, "receive: %s",
					    drnic_wc_status_str(wc[k].status));
				TEST_ASSERT(wc[k].wc_flags & DRNIC_WC_WITH_IMM, "no immediate");
				TEST_ASSERT(id < sent, "immediate %u never sent", id);
				TEST_ASSERT_EQUAL(seen[id], 0, "message %u arrived twice", id);
				seen[id] = 1;
				TEST_ASSERT_EQUAL(wc[k].byte_len, uc_len(id), "byte_len of %u", id);
				TEST_ASSERT_EQUAL(wc[k].qp_num, drnic_qp_num(p->b.qp), "qp_num");
				TEST_ASSERT_EQUAL(wc[k].src_qp, drnic_qp_num(p->a.qp), "src_qp");
				TEST_ASSERT_EQUAL(wc[k].opcode, id % 2 == 0 ? DRNIC_WC_RECV :
						  DRNIC_WC_RECV_RDMA_WITH_IMM, "opcode of %u", id);
				at = id % 2 == 0 ? p->b.buf + wc[k].wr_id * UC_SLOT :
				     p->b.buf + (1u << 20) + (id % 64) * UC_SLOT;
				rnic_fill(want, uc_len(id), id);
				TEST_ASSERT(memcmp(at, want, uc_len(id)) == 0, "bytes of %u", id);
				TEST_ASSERT_SUCCESS(uc_post_recv(p, (uint32_t)wc[k].wr_id),
						    "post_recv again");
				got++;
			}
			if (!lossy && got == sent)
				break;
		}
		TEST_ASSERT(n >= 0, "poll: %d", n);
	}
	return (int)got;
}

static int
uc_body(enum drnic_progress_mode mode, bool lossy)
{
	struct rnic_pair_opts o = { .mode = mode, .qp_type = DRNIC_QPT_UC };
	struct drnic_qp_stats sa, sb;
	struct drnic_link_fault_stats fs;
	struct rnic_pair p;
	int got, rc = TEST_SUCCESS;

	if (mode == DRNIC_PROGRESS_DEDICATED && rte_get_next_lcore(-1, 1, 0) >= RTE_MAX_LCORE)
		TEST_SKIP("dedicated mode needs an EAL worker lcore for the engine");
	if (lossy)
		o.link_extra[0] = "fault_drop=0.05,fault_dup=0.02,fault_reorder=0.02,fault_seed=11";
	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair open");
	got = uc_run(&p, lossy);
	if (got < 0) {
		rc = TEST_FAILED;
		goto out;
	}
	drnic_qp_stats_get(p.a.qp, &sa);
	drnic_qp_stats_get(p.b.qp, &sb);
	printf("UC %s: %d of %d messages arrived, B dropped %" PRIu64 " packets of lost"
	       " messages\n", lossy ? "lossy" : "lossless", got, UC_MSGS,
	       sb.drops[DRNIC_ENGINE_DROP_UC_MSG]);
	if (!lossy) {
		TEST_ASSERT_EQUAL(got, UC_MSGS, "messages on a lossless wire");
		TEST_ASSERT_EQUAL(sb.drops[DRNIC_ENGINE_DROP_UC_MSG], 0, "UC drops");
	} else {
		TEST_ASSERT_SUCCESS(drnic_link_fault_stats(drnic_device_link(p.a.dev), &fs),
				    "fault stats");
		TEST_ASSERT(fs.dropped > 0, "the injector lost nothing");
		TEST_ASSERT(got < UC_MSGS && got > UC_MSGS / 2, "%d of %d arrived", got, UC_MSGS);
	}
	TEST_ASSERT_EQUAL(sb.tx_packets, 0, "B sent %" PRIu64 " frames (UC answers nothing)",
			  sb.tx_packets);
	TEST_ASSERT_EQUAL(sa.retransmits, 0, "A resent");
out:
	rnic_pair_close(&p);
	return rc;
}

static int
rnic_uc_inline(void)
{
	int rc = uc_body(DRNIC_PROGRESS_INLINE, false);

	return rc != TEST_SUCCESS ? rc : uc_body(DRNIC_PROGRESS_INLINE, true);
}

static int
rnic_uc_dedicated(void)
{
	int rc = uc_body(DRNIC_PROGRESS_DEDICATED, false);

	return rc != TEST_SUCCESS ? rc : uc_body(DRNIC_PROGRESS_DEDICATED, true);
}

DRNIC_TEST_REGISTER(rnic_uc_inline_autotest, DRNIC_TEST_FAST, rnic_uc_inline);
DRNIC_TEST_REGISTER(rnic_uc_dedicated_autotest, DRNIC_TEST_FAST, rnic_uc_dedicated);
