/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcapng mirroring of links: two devices on a loopback wire, device A with
 * capture=FILE in its link_args (and duplication injected, so the capture
 * must show what went on the wire), device B captured through the API; a few
 * SENDs, WRITEs and READs; then the files are checked:
 *  - the capture counters match the link counters (tx + rx), per direction;
 *  - tshark reads every frame, finds no malformed one, sees the opcodes and
 *    the direction flags (skipped, with a message, without tshark);
 *  - /work/shared/tools/roce_pcap_check.py (classic pcap: converted with
 *    editcap -F pcap) finds every ICRC valid (skipped without the tool).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>

#include "test.h"
#include "drnic_capture.h"
#include "drnic_link.h"
#include "drnic_link_capture.h"
#include "drnic_link_fault.h"
#include "drnic_verbs.h"
#include "../rnic/rnic_fixture.h"

#define CAPL_CHECKER "/work/shared/tools/roce_pcap_check.py"

/* Open the pair with @p ea / @p eb appended to A's / B's link_args. */
static int
capl_pair_open(struct rnic_pair *p, const char *ea, const char *eb)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE, .link_extra = { ea, eb } };

	return rnic_pair_open(p, &o);
}

static int
capl_post(struct rnic_side *s, struct rnic_side *peer, enum drnic_wr_opcode op, uint64_t id,
	  uint32_t off, uint32_t len)
{
	struct drnic_sge sge = { (uintptr_t)(s->buf + off), len, drnic_mr_lkey(s->mr) };
	struct drnic_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)(peer->buf + off);
	wr.wr.rdma.rkey = drnic_mr_rkey(peer->mr);
	return drnic_post_send(s->qp, &wr, &bad);
}

static bool
capl_have(const char *prog)
{
	char cmd[128], out[256];

	snprintf(cmd, sizeof(cmd), "command -v %s", prog);
	return rnic_shell(cmd, out, sizeof(out)) == 0;
}

/*
 * Check @p file: @p tx outbound and @p rx inbound frames, none malformed,
 * the opcodes of SEND, WRITE, READ and ACK present, every ICRC valid.
 */
static int
capl_check_file(const char *file, uint64_t tx, uint64_t rx)
{
	char cmd[1024], out[4096];
	unsigned long n_tx = 0, n_rx = 0, n_bad = 0, n_roce = 0, ok = 0, roce = 0;
	int rc;

	if (!capl_have("tshark")) {
		printf("no tshark: file checks of %s skipped\n", file);
		return TEST_SUCCESS;
	}
	/* Direction flags: 1 inbound, 2 outbound (pcapng epb_flags bits 0-1). */
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s --disable-protocol rpcordma -T fields -e frame.packet_flags_direction "
		 "-e infiniband.bth.opcode -e _ws.malformed 2>&1 | awk -F'\\t' "
		 "'{ if ($1 == \"2\" || $1 == \"0x00000002\") t++; else if ($1 == \"1\" || $1 == \"0x00000001\") r++; "
		 "if ($2 != \"\") roce++; if ($3 != \"\") bad++ } "
		 "END { printf \"%%d %%d %%d %%d\\n\", t, r, bad, roce }'", file);
	rc = rnic_shell(cmd, out, sizeof(out));
	TEST_ASSERT(rc == 0 && sscanf(out, "%lu %lu %lu %lu", &n_tx, &n_rx, &n_bad, &n_roce) == 4,
		    "tshark fields of %s: %s", file, out);
	printf("%s: tshark: %lu outbound, %lu inbound, %lu RoCE, %lu malformed\n", file, n_tx,
	       n_rx, n_roce, n_bad);
	TEST_ASSERT_EQUAL(n_tx, tx, "outbound frames in %s", file);
	TEST_ASSERT_EQUAL(n_rx, rx, "inbound frames in %s", file);
	TEST_ASSERT_EQUAL(n_roce, tx + rx, "every frame decoded as RoCE in %s", file);
	TEST_ASSERT_EQUAL(n_bad, 0, "malformed frames in %s", file);
	/* Expert info of error severity (e.g. bad lengths) would show here. */
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s --disable-protocol rpcordma -Y '_ws.expert.severity >= 8388608' "
		 "2>/dev/null | wc -l", file);
	TEST_ASSERT(rnic_shell(cmd, out, sizeof(out)) == 0 && strtoul(out, NULL, 10) == 0,
		    "frames with expert errors in %s: %s", file, out);
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s --disable-protocol rpcordma -T fields -e infiniband.bth.opcode "
		 "2>/dev/null | sort -u | tr '\\n' ' '", file);
	TEST_ASSERT(rnic_shell(cmd, out, sizeof(out)) == 0, "tshark opcodes");
	printf("%s: opcodes %s\n", file, out);
	/* RC SEND only 4, WRITE only 10, READ request 12, READ response only
	 * 16, ACK 17 (printed in decimal). */
	TEST_ASSERT(strstr(out, "4 ") != NULL && strstr(out, "10 ") != NULL &&
		    strstr(out, "12 ") != NULL && strstr(out, "16 ") != NULL &&
		    strstr(out, "17 ") != NULL, "SEND, WRITE, READ and ACK opcodes in %s: %s",
		    file, out);

	if (access(CAPL_CHECKER, R_OK) != 0 || !capl_have("editcap") || !capl_have("python3")) {
		printf("no %s or editcap: ICRC check skipped\n", CAPL_CHECKER);
		return TEST_SUCCESS;
	}
	snprintf(cmd, sizeof(cmd),
		 "editcap -F pcap %s %s.pcap && python3 %s %s.pcap | grep -o \"{.*}\"; rm -f %s.pcap",
		 file, file, CAPL_CHECKER, file, file);
	rc = rnic_shell(cmd, out, sizeof(out));
	printf("%s: roce_pcap_check: %s", file, out);
	TEST_ASSERT(strstr(out, "icrc_bad") == NULL, "bad ICRC in %s: %s", file, out);
	{
		const char *p = strstr(out, "'rocev2': "), *q = strstr(out, "'icrc_ok': ");

		TEST_ASSERT(p != NULL && q != NULL, "checker output: %s", out);
		roce = strtoul(p + 10, NULL, 10);
		ok = strtoul(q + 11, NULL, 10);
	}
	TEST_ASSERT(roce == tx + rx && ok == roce, "every ICRC valid (%lu of %lu, %" PRIu64 " frames)",
		    ok, roce, tx + rx);
	return TEST_SUCCESS;
}

static int
capture_link_autotest(void)
{
	char fa[128], fb[128], args[256];
	struct drnic_link_stats la, lb;
	struct drnic_capture_stats ca, cb;
	struct drnic_link_fault_stats fs;
	struct drnic_link *lka, *lkb;
	struct drnic_recv_wr rwr, *rbad;
	struct drnic_sge sge;
	struct drnic_wc wc[16];
	struct rnic_pair p;
	static const uint32_t send_len[] = { 16, 700, 1000 };
	unsigned int i;
	int rc = TEST_FAILED, got;

	snprintf(fa, sizeof(fa), "/tmp/drnic-capl-%d-a.pcapng", (int)getpid());
	snprintf(fb, sizeof(fb), "/tmp/drnic-capl-%d-b.pcapng", (int)getpid());
	memset(&p, 0, sizeof(p));
	p.mode = DRNIC_PROGRESS_INLINE;

	/* Bad keys are refused at open. */
	TEST_ASSERT(capl_pair_open(&p, "capture=", NULL) == -EINVAL, "empty capture= refused");
	TEST_ASSERT(capl_pair_open(&p, "capture=/x,capture_snaplen=0", NULL) == -EINVAL,
		    "capture_snaplen=0 refused");
	TEST_ASSERT(capl_pair_open(&p, "capture=/nonexistent-dir/x.pcapng", NULL) < 0,
		    "unwritable capture file refused");

	/* A: capture from the configuration, after duplication (every 4th). */
	snprintf(args, sizeof(args), "capture=%s,fault_dup=0.25,fault_seed=7", fa);
	if (capl_pair_open(&p, args, NULL) < 0) {
		printf("cannot open the pair\n");
		goto out;
	}
	lka = drnic_device_link(p.a.dev);
	lkb = drnic_device_link(p.b.dev);
	/* B: capture from the API. */
	TEST_ASSERT_SUCCESS(drnic_link_capture_start(lkb, fb, 0), "capture start on B");
	TEST_ASSERT_EQUAL(drnic_link_capture_start(lkb, fb, 0), -EBUSY, "second start refused");
	drnic_link_stats_reset(lka);
	drnic_link_stats_reset(lkb);

	/* SENDs (single packets at path MTU 1024), WRITEs and READs of one
	 * and of several packets. */
	for (i = 0; i < RTE_DIM(send_len); i++) {
		sge = (struct drnic_sge){ (uintptr_t)(p.b.buf + i * 4096), 4096,
					  drnic_mr_lkey(p.b.mr) };
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 100 + i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		TEST_ASSERT_SUCCESS(drnic_post_recv(p.b.qp, &rwr, &rbad), "post_recv");
		rnic_fill(p.a.buf + i * 4096, send_len[i], i);
		TEST_ASSERT_SUCCESS(capl_post(&p.a, &p.b, DRNIC_WR_SEND, i, i * 4096, send_len[i]),
				    "post send");
	}
	rnic_fill(p.a.buf + 65536, 8192, 77);
	TEST_ASSERT_SUCCESS(capl_post(&p.a, &p.b, DRNIC_WR_RDMA_WRITE, 10, 65536, 100), "write");
	TEST_ASSERT_SUCCESS(capl_post(&p.a, &p.b, DRNIC_WR_RDMA_WRITE, 11, 65536 + 100, 5000),
			    "write");
	rnic_fill(p.b.buf + 131072, 8192, 78);
	TEST_ASSERT_SUCCESS(capl_post(&p.a, &p.b, DRNIC_WR_RDMA_READ, 20, 131072, 64), "read");
	TEST_ASSERT_SUCCESS(capl_post(&p.a, &p.b, DRNIC_WR_RDMA_READ, 21, 131072 + 64, 3000),
			    "read");
	got = 0;
	while (got < 7) {
		int n = rnic_poll(&p.a, wc, 7 - got);

		TEST_ASSERT(n > 0, "requester completions (%d of 7)", got);
		for (i = 0; i < (unsigned int)n; i++)
			TEST_ASSERT_EQUAL(wc[i].status, DRNIC_WC_SUCCESS, "wr %" PRIu64,
					  wc[i].wr_id);
		got += n;
	}
	TEST_ASSERT_EQUAL(rnic_poll(&p.b, wc, 3), 3, "receives");
	TEST_ASSERT(memcmp(p.a.buf + 65536, p.b.buf + 65536, 5100) == 0, "written bytes");
	TEST_ASSERT(memcmp(p.a.buf + 131072, p.b.buf + 131072, 3064) == 0, "read bytes");
	/* Let the last ACKs arrive. */
	for (i = 0; i < 1000; i++)
		drnic_device_progress(p.a.dev);

	drnic_link_stats_get(lka, &la);
	drnic_link_stats_get(lkb, &lb);
	TEST_ASSERT_SUCCESS(drnic_link_capture_stats(lka, &ca), "stats A");
	TEST_ASSERT_SUCCESS(drnic_link_capture_stats(lkb, &cb), "stats B");
	drnic_link_fault_stats(lka, &fs);
	printf("A: link tx %" PRIu64 " rx %" PRIu64 ", capture %" PRIu64 " (dropped %" PRIu64
	       "), duplicated %" PRIu64 "\n", la.tx_packets, la.rx_packets, ca.packets,
	       ca.dropped, fs.duplicated);
	printf("B: link tx %" PRIu64 " rx %" PRIu64 ", capture %" PRIu64 " (dropped %" PRIu64
	       ")\n", lb.tx_packets, lb.rx_packets, cb.packets, cb.dropped);
	TEST_ASSERT(fs.duplicated > 0, "some frames duplicated");
	/* Frames sent before the stats reset (none: QPs connect without
	 * traffic) would make these differ. */
	TEST_ASSERT_EQUAL(ca.packets, la.tx_packets + la.rx_packets, "A: every frame mirrored");
	TEST_ASSERT_EQUAL(cb.packets, lb.tx_packets + lb.rx_packets, "B: every frame mirrored");
	TEST_ASSERT_EQUAL(ca.dropped + cb.dropped, 0, "nothing lost by the captures");
	TEST_ASSERT_EQUAL(la.tx_packets, lb.rx_packets, "A's wire frames all reached B");
	TEST_ASSERT_SUCCESS(drnic_link_capture_stop(lkb), "stop B");
	TEST_ASSERT_EQUAL(drnic_link_capture_stop(lkb), -ENOENT, "stop B twice");
	rnic_pair_close(&p);    /* closes A's capture */
	memset(&p, 0, sizeof(p));

	rc = capl_check_file(fa, la.tx_packets, la.rx_packets);
	if (rc == TEST_SUCCESS)
		rc = capl_check_file(fb, lb.tx_packets, lb.rx_packets);
out:
	rnic_pair_close(&p);
	if (rc == TEST_SUCCESS) {
		unlink(fa);
		unlink(fb);
	} else {
		printf("files kept: %s %s\n", fa, fb);
	}
	return rc;
}

DRNIC_TEST_REGISTER(capture_link_autotest, DRNIC_TEST_FAST, capture_link_autotest);
