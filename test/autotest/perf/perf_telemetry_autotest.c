/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /drnic/ telemetry commands, read back through this process's DPDK
 * telemetry v2 socket (as dpdk-telemetry.py does) after a known amount of
 * traffic, and checked against what the test did and the public getters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "drnic_telemetry.h"
#include "../rnic/rnic_fixture.h"
#include "tel_client.h"
#include "test.h"

#define TEL_WRITES 10
#define TEL_CQ_DEPTH 64

static int
test_perf_telemetry(void)
{
	struct rnic_pair_opts po = { .mode = DRNIC_PROGRESS_INLINE, .cq_depth = TEL_CQ_DEPTH };
	struct rnic_pair p;
	struct drnic_wc wc[TEL_WRITES];
	struct drnic_link_stats ls;
	struct drnic_engine_stats es;
	struct drnic_qp_stats qs;
	char path[512], buf[16384], cmd[128], want[128];
	int i, fd, cq_a, cq_b, rc;

	TEST_ASSERT_SUCCESS(drnic_telemetry_init(), "telemetry init");
	TEST_ASSERT_SUCCESS(drnic_telemetry_init(), "second init is harmless");
	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &po), "loopback pair");
	rnic_fill(p.a.buf, 4096, 7);
	for (i = 0; i < TEL_WRITES; i++) {
		struct drnic_sge sge = { .addr = (uintptr_t)p.a.buf + 100u * i, .length = 100,
					 .lkey = drnic_mr_lkey(p.a.mr) };
		struct drnic_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					    .opcode = DRNIC_WR_RDMA_WRITE,
					    .send_flags = DRNIC_SEND_SIGNALED };
		struct drnic_send_wr *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf + 100u * i;
		wr.wr.rdma.rkey = drnic_mr_rkey(p.b.mr);
		TEST_ASSERT_SUCCESS(drnic_post_send(p.a.qp, &wr, &bad), "post %d", i);
	}
	TEST_ASSERT_EQUAL(rnic_poll(&p.a, wc, TEL_WRITES), TEL_WRITES, "completions");
	for (i = 0; i < TEL_WRITES; i++)
		TEST_ASSERT_EQUAL(wc[i].status, DRNIC_WC_SUCCESS, "completion %d", i);
	TEST_ASSERT(memcmp(p.a.buf, p.b.buf, 100 * TEL_WRITES) == 0, "data landed");

	TEST_ASSERT_SUCCESS(drnic_telemetry_add_device(p.a.dev), "add device a");
	TEST_ASSERT_SUCCESS(drnic_telemetry_add_device(p.b.dev), "add device b");
	TEST_ASSERT_EQUAL(drnic_telemetry_add_device(p.a.dev), -EEXIST, "twice");
	TEST_ASSERT_SUCCESS(drnic_telemetry_add_qp(p.a.qp), "add qp a");
	TEST_ASSERT_SUCCESS(drnic_telemetry_add_qp(p.b.qp), "add qp b");
	cq_a = drnic_telemetry_add_cq(p.a.cq, "cq_a");
	cq_b = drnic_telemetry_add_cq(p.b.cq, "cq_b");
	TEST_ASSERT(cq_a >= 0 && cq_b >= 0 && cq_a != cq_b, "cq ids %d %d", cq_a, cq_b);

	fd = tel_client_connect(path, sizeof(path));
	if (fd < 0) {
		drnic_telemetry_clear();
		rnic_pair_close(&p);
		TEST_SKIP("no telemetry socket of this process under %s (EAL --no-telemetry?)",
			  rte_eal_get_runtime_dir());
	}
	printf("telemetry socket %s\n", path);
	rc = TEST_SUCCESS;

	/* CQ of A: depth as created, TEL_WRITES completions, all polled, no overflow. */
	snprintf(cmd, sizeof(cmd), "/drnic/cqs,%d", cq_a);
	TEST_ASSERT_SUCCESS(tel_client_query(fd, cmd, buf, sizeof(buf)), "query %s", cmd);
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "depth"), TEL_CQ_DEPTH, "cq depth");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "completions"), TEL_WRITES, "cq completions");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "occupancy"), 0, "cq occupancy after polling");
	TEST_ASSERT(tel_client_num(buf, NULL, "high_water") >= 1 &&
		    tel_client_num(buf, NULL, "high_water") <= TEL_WRITES, "cq high water");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "overflows"), 0, "cq overflows");
	TEST_ASSERT(strstr(buf, "\"name\":\"cq_a\"") != NULL, "cq name");
	/* B's CQ saw no completion (WRITE without immediate). */
	snprintf(cmd, sizeof(cmd), "/drnic/cqs,%d", cq_b);
	TEST_ASSERT_SUCCESS(tel_client_query(fd, cmd, buf, sizeof(buf)), "query %s", cmd);
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "completions"), 0, "cq b completions");
	TEST_ASSERT_SUCCESS(tel_client_query(fd, "/drnic/cqs", buf, sizeof(buf)), "cq list");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "count"), 2, "two CQs");

	/* Link of A: what the getter says, at least one frame per WRITE. */
	TEST_ASSERT_SUCCESS(drnic_link_stats_get(drnic_device_link(p.a.dev), &ls), "link stats");
	snprintf(cmd, sizeof(cmd), "/drnic/links,%s", drnic_device_name(p.a.dev));
	TEST_ASSERT_SUCCESS(tel_client_query(fd, cmd, buf, sizeof(buf)), "query %s", cmd);
	TEST_ASSERT(ls.tx_packets >= TEL_WRITES, "link tx %llu", (unsigned long long)ls.tx_packets);
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "tx_packets"), (long long)ls.tx_packets, "link tx");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "tx_bytes"), (long long)ls.tx_bytes, "link tx bytes");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "rx_packets"), (long long)ls.rx_packets, "link rx");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "drop_no_peer"), 0, "no drops");
	TEST_ASSERT(strstr(buf, "\"driver\":\"loopback\"") != NULL, "driver name");

	/* Engine of A: TEL_WRITES WQEs started, TEL_WRITES CQEs (or more if shared). */
	TEST_ASSERT_SUCCESS(drnic_engine_stats_get(p.a.dev, 0, &es), "engine stats");
	snprintf(cmd, sizeof(cmd), "/drnic/engines,%s", drnic_device_name(p.a.dev));
	TEST_ASSERT_SUCCESS(tel_client_query(fd, cmd, buf, sizeof(buf)), "query %s", cmd);
	TEST_ASSERT(tel_client_num(buf, NULL, "wqes") >= TEL_WRITES, "engine wqes");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "wqes"), (long long)es.wqes, "engine wqes = getter");
	TEST_ASSERT(tel_client_num(buf, NULL, "cqes") >= TEL_WRITES, "engine cqes");
	TEST_ASSERT(tel_client_num(buf, NULL, "tx_packets") >= TEL_WRITES, "engine tx");
	TEST_ASSERT(tel_client_num(buf, NULL, "loops") >= tel_client_num(buf, NULL, "busy_loops"), "loops");
	TEST_ASSERT(tel_client_num(buf, NULL, "busy_cycles") > 0, "engine busy cycles");
	TEST_ASSERT(tel_client_num(buf, NULL, "busy_percent") >= 0 &&
		    tel_client_num(buf, NULL, "busy_percent") <= 100, "engine busy percent");

	/* QP of A: RTS, connected to B's QP. */
	snprintf(cmd, sizeof(cmd), "/drnic/qps,%u", drnic_qp_num(p.a.qp));
	TEST_ASSERT_SUCCESS(tel_client_query(fd, cmd, buf, sizeof(buf)), "query %s", cmd);
	TEST_ASSERT(strstr(buf, "\"state\":\"RTS\"") != NULL, "qp state");
	snprintf(want, sizeof(want), "\"dest_qp_num\":%u", drnic_qp_num(p.b.qp));
	TEST_ASSERT(strstr(buf, want) != NULL, "qp dest %s", want);
	/* Its transport: every WRITE (one packet each) sent and acknowledged,
	 * nothing resent on a lossless link; B expects A's next PSN. */
	TEST_ASSERT_SUCCESS(drnic_qp_stats_get(p.a.qp, &qs), "qp stats");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "next_psn"), (long long)qs.next_psn, "next psn");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "acked_psn"),
			  (long long)drnic_psn_sub(qs.next_psn, 1), "all acknowledged");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "tx_packets"), TEL_WRITES, "qp tx packets");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "acks_rx") > 0, 1, "qp acks");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "retransmits"), 0, "no go-back");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "timeouts"), 0, "no timeout");
	TEST_ASSERT(tel_client_num(buf, NULL, "cwnd") > 0, "cwnd");
	/* (Both devices number their QP alike: B's entry is in the answer.) */
	snprintf(cmd, sizeof(cmd), "/drnic/qps,%u", drnic_qp_num(p.b.qp));
	TEST_ASSERT_SUCCESS(tel_client_query(fd, cmd, buf, sizeof(buf)), "query %s", cmd);
	snprintf(want, sizeof(want), "\"expected_psn\":%u,", qs.next_psn);
	TEST_ASSERT(strstr(buf, want) != NULL, "B expects A's next PSN: %s", want);
	TEST_ASSERT_SUCCESS(tel_client_query(fd, "/drnic/qps", buf, sizeof(buf)), "qp list");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "count"), 2, "two QPs");
	TEST_ASSERT_SUCCESS(tel_client_query(fd, "/drnic/devices", buf, sizeof(buf)), "devices");
	TEST_ASSERT(strstr(buf, drnic_device_name(p.b.dev)) != NULL, "device b listed");

	/* Unregistered objects disappear. */
	TEST_ASSERT_SUCCESS(drnic_telemetry_remove_cq(p.b.cq), "remove cq b");
	TEST_ASSERT_EQUAL(drnic_telemetry_remove_cq(p.b.cq), -ENOENT, "removed twice");
	TEST_ASSERT_SUCCESS(tel_client_query(fd, "/drnic/cqs", buf, sizeof(buf)), "cq list");
	TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, "count"), 1, "one CQ left");

	close(fd);
	drnic_telemetry_clear();
	rnic_pair_close(&p);
	return rc;
}

DRNIC_TEST_REGISTER(perf_telemetry_autotest, DRNIC_TEST_FAST, test_perf_telemetry);
