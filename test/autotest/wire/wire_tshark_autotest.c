/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire_tshark_autotest: an independent decoder agrees with lib/wire.
 *
 * Builds one frame of each family (RC, UC, UD; with and without immediate;
 * IPv4 and IPv6; a tagged one; a zero-length SEND that needs Ethernet padding;
 * READ, ACK, atomics, CNP; XRC's with their XRCETH) with drnic_wire_build(), writes them with
 * drnic_capture to a pcapng file in a temporary directory and runs
 *
 *   tshark -r FILE --disable-protocol rpcordma
 *          -o udp.ignore_ipv6_zero_checksum:TRUE -T fields -e frame.number
 *          -e infiniband.bth.opcode -e infiniband.bth.destqp
 *          -e infiniband.bth.psn -e infiniband.invariant.crc -e _ws.malformed
 *          -e _ws.expert.severity -e _ws.expert.message
 *
 * For every frame: tshark reports no malformed packet and no expert warning
 * or error, and decodes the opcode, destination QP, PSN and ICRC that were
 * built (Wireshark 4.0 shows a CNP as an unknown opcode with no ICRC field,
 * and an XRC frame's BTH with the rest as "unknown header sequence": their
 * opcode, QP and PSN are still checked). Fails, saying so, when tshark is
 * not installed.
 *
 * udp.ignore_ipv6_zero_checksum: RoCEv2 sends UDP checksum 0 over IPv6 too
 * (allowed for tunnels by RFC 6935/6936); without the preference Wireshark
 * reports every such IPv6 frame as an expert error "Illegal checksum value (0)".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "drnic_capture.h"
#include "drnic_wire.h"
#include "test.h"

/* Wireshark's expert severities (epan/proto.h). */
#define TS_SEVERITY_WARN 0x00600000u
#define TS_SEVERITY_ERROR 0x00800000u

struct ts_frame {
	uint8_t opcode;
	uint8_t ipver;
	bool vlan;
	uint32_t len;
	uint32_t dqpn;
	uint32_t psn;
};

static const struct ts_frame ts_frames[] = {
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 64, 0x000012, 0x000100 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_IMMEDIATE, 4, false, 64, 0x000012, 0x000101 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0, 0x000012, 0x000102 },   /* Ethernet padding */
	{ DRNIC_WIRE_OP_RC_SEND_FIRST, 4, false, 256, 0x000012, 0x000103 },
	{ DRNIC_WIRE_OP_RC_SEND_MIDDLE, 4, false, 256, 0x000012, 0x000104 },
	{ DRNIC_WIRE_OP_RC_SEND_LAST_WITH_IMMEDIATE, 4, false, 61, 0x000012, 0x000105 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_INVALIDATE, 4, false, 32, 0x000012, 0x000106 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 6, false, 64, 0x000012, 0x000107 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 6, false, 64, 0x000012, 0x000108 },
	{ DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 4, false, 0, 0x000012, 0x000109 },
	{ DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 4, false, 64, 0x000034, 0x000109 },
	{ DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0, 0x000034, 0x000108 },
	{ DRNIC_WIRE_OP_RC_COMPARE_SWAP, 4, false, 0, 0x000012, 0x00010a },
	{ DRNIC_WIRE_OP_RC_FETCH_ADD, 6, false, 0, 0x000012, 0x00010b },
	{ DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE, 4, false, 0, 0x000034, 0x00010b },
	{ DRNIC_WIRE_OP_UC_SEND_ONLY, 4, false, 64, 0x000013, 0xfffffe },
	{ DRNIC_WIRE_OP_UC_SEND_ONLY_WITH_IMMEDIATE, 6, false, 64, 0x000013, 0xffffff },
	{ DRNIC_WIRE_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 4, false, 64, 0x000013, 0x000000 },
	{ DRNIC_WIRE_OP_UD_SEND_ONLY, 4, false, 64, 0x000020, 0x000010 },
	{ DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 6, false, 64, 0xabcdef, 0x000011 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, true, 64, 0x000012, 0x00010c },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 6, true, 0, 0x000012, 0x00010d },
	{ DRNIC_WIRE_OP_CNP, 4, false, 0, 0x000012, 0 },
	/* XRC: requests carry the XRCETH after the BTH, responses do not. */
	{ DRNIC_WIRE_OP_XRC_SEND_ONLY, 4, false, 64, 0x000014, 0x000200 },
	{ DRNIC_WIRE_OP_XRC_SEND_FIRST, 6, false, 256, 0x000014, 0x000201 },
	{ DRNIC_WIRE_OP_XRC_SEND_LAST_WITH_IMMEDIATE, 4, true, 61, 0x000014, 0x000202 },
	{ DRNIC_WIRE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 4, false, 64, 0x000014, 0x000203 },
	{ DRNIC_WIRE_OP_XRC_RDMA_READ_REQUEST, 4, false, 0, 0x000014, 0x000204 },
	{ DRNIC_WIRE_OP_XRC_RDMA_READ_RESPONSE_ONLY, 4, false, 64, 0x000035, 0x000204 },
	{ DRNIC_WIRE_OP_XRC_ACKNOWLEDGE, 6, false, 0, 0x000035, 0x000203 },
	{ DRNIC_WIRE_OP_XRC_FETCH_ADD, 4, false, 0, 0x000014, 0x000205 },
	{ DRNIC_WIRE_OP_XRC_ATOMIC_ACKNOWLEDGE, 4, false, 0, 0x000035, 0x000205 },
};

#define TS_NFRAMES RTE_DIM(ts_frames)

static uint8_t ts_payload[4096];

static void
ts_describe(const struct ts_frame *f, struct drnic_wire_pkt *p, struct drnic_wire_sge *sge)
{
	static const uint8_t v4_a[4] = { 10, 0, 0, 1 }, v4_b[4] = { 10, 0, 0, 2 };
	static const uint8_t v6_a[16] = { 0xfd, 0x00, [15] = 1 };
	static const uint8_t v6_b[16] = { 0xfd, 0x00, [15] = 2 };
	static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
	static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };

	drnic_wire_pkt_init(p);
	memcpy(p->eth.src, mac_a, 6);
	memcpy(p->eth.dst, mac_b, 6);
	p->eth.has_vlan = f->vlan;
	p->eth.vlan_tci = f->vlan ? 100 : 0;
	p->ip.version = f->ipver;
	memcpy(p->ip.src, f->ipver == 6 ? v6_a : v4_a, f->ipver == 6 ? 16 : 4);
	memcpy(p->ip.dst, f->ipver == 6 ? v6_b : v4_b, f->ipver == 6 ? 16 : 4);
	p->udp.sport = drnic_wire_udp_sport(f->dqpn);
	p->bth.opcode = f->opcode;
	p->bth.dqpn = f->dqpn;
	p->bth.psn = f->psn;
	p->bth.ackreq = true;
	p->reth.va = 0x7f0000001000ull;
	p->reth.rkey = 0x1234;
	p->reth.dmalen = f->opcode == DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST ||
			 f->opcode == DRNIC_WIRE_OP_XRC_RDMA_READ_REQUEST ? 64 : f->len;
	p->aeth.syndrome = drnic_aeth_syndrome(DRNIC_AETH_ACK, DRNIC_AETH_CREDIT_INVALID);
	p->aeth.msn = 7;
	p->atomic.va = 0x7f0000002000ull;
	p->atomic.rkey = 0x5678;
	p->atomic.swap_add = 1;
	p->atomic.cmp = 2;
	p->atomic_orig = 3;
	p->imm = rte_cpu_to_be_32(0xdeadbeef);
	p->ieth_rkey = 0x9abc;
	p->deth.qkey = 0x80010000;
	p->deth.sqpn = 0x000016;
	p->xrceth.srqn = 0x000abc;
	sge->addr = ts_payload;
	sge->len = f->len;
	p->sg = sge;
	p->sg_cnt = f->len ? 1 : 0;
}

/* Build every frame into @p frames and their parsed ICRC into @p icrc. */
static int
ts_build_all(struct rte_mempool *mp, struct rte_mbuf **frames, uint32_t *icrc)
{
	unsigned int i;

	for (i = 0; i < TS_NFRAMES; i++) {
		struct drnic_wire_pkt p, out;
		struct drnic_wire_sge sge;
		enum drnic_wire_drop drop;
		int rc;

		ts_describe(&ts_frames[i], &p, &sge);
		frames[i] = rte_pktmbuf_alloc(mp);
		TEST_ASSERT(frames[i] != NULL, "no mbuf");
		rc = drnic_wire_build(frames[i], &p);
		TEST_ASSERT_SUCCESS(rc, "frame %u (%s): build: %s", i + 1,
				    drnic_wire_opcode_name(p.bth.opcode), strerror(-rc));
		drop = drnic_wire_parse(frames[i], &out);
		TEST_ASSERT(drop == DRNIC_WIRE_OK, "frame %u (%s): own parser drops it: %s", i + 1,
			    drnic_wire_opcode_name(p.bth.opcode), drnic_wire_drop_name(drop));
		/* tshark shows the four ICRC bytes as a big-endian number */
		icrc[i] = rte_bswap32(out.icrc);
	}
	TEST_ASSERT_EQUAL(frames[2]->pkt_len, DRNIC_WIRE_ETH_MIN_FRAME,
			  "the zero-length SEND is padded to 60 bytes");
	return TEST_SUCCESS;
}

/* Split @p s on '|' into at most @p max fields; returns the count. */
static unsigned int
ts_split(char *s, char **fields, unsigned int max)
{
	unsigned int n = 0;

	s[strcspn(s, "\r\n")] = '\0';
	while (n < max) {
		fields[n++] = s;
		s = strchr(s, '|');
		if (s == NULL)
			break;
		*s++ = '\0';
	}
	return n;
}

/* Does the comma-separated severity list hold a warning or an error? */
static bool
ts_has_warning(const char *severities)
{
	const char *p = severities;

	while (*p != '\0') {
		char *end;
		unsigned long v = strtoul(p, &end, 0);

		if (end == p)
			break;
		if (v >= TS_SEVERITY_WARN)
			return true;
		p = *end == ',' ? end + 1 : end;
	}
	return false;
}

/* Wireshark 4.0 decodes the BTH of a CNP and of XRC's opcodes (it names
 * them), but not what follows: no XRCETH, no ICRC field. */
static bool
ts_icrc_undecoded(uint8_t opcode)
{
	return opcode == DRNIC_WIRE_OP_CNP ||
	       drnic_wire_opcode_info(opcode)->transport == DRNIC_WIRE_TR_XRC;
}

static int
ts_check_tshark(const char *dir, const char *file, const uint32_t *icrc)
{
	char cmd[2048], line[1024], errfile[600];
	unsigned int n = 0, bad = 0;
	FILE *p;
	int st;

	if (system("command -v tshark >/dev/null 2>&1") != 0)
		TEST_ASSERT(0, "tshark is not installed: this test needs it to decode the frames "
			    "independently (apt-get install tshark; the setup script installs it)");

	snprintf(errfile, sizeof(errfile), "%s/tshark.err", dir);
	snprintf(cmd, sizeof(cmd),
		 "tshark -r '%s' --disable-protocol rpcordma -o udp.ignore_ipv6_zero_checksum:TRUE "
		 "-T fields -E separator='|' "
		 "-E occurrence=a -E aggregator=, -e frame.number -e infiniband.bth.opcode "
		 "-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.invariant.crc "
		 "-e _ws.malformed -e _ws.expert.severity -e _ws.expert.message 2>'%s'",
		 file, errfile);
	p = popen(cmd, "r");
	TEST_ASSERT(p != NULL, "popen: %s", strerror(errno));
	while (fgets(line, sizeof(line), p) != NULL) {
		char copy[1024], *f[8];
		const struct ts_frame *want;
		unsigned long num, op, qp, psn, crc;

		snprintf(copy, sizeof(copy), "%s", line);
		if (ts_split(line, f, 8) != 8 || n >= TS_NFRAMES) {
			printf("tshark: unexpected line: %s", copy);
			bad++;
			continue;
		}
		want = &ts_frames[n];
		num = strtoul(f[0], NULL, 0);
		op = strtoul(f[1], NULL, 0);
		qp = strtoul(f[2], NULL, 0);
		psn = strtoul(f[3], NULL, 0);
		crc = strtoul(f[4], NULL, 0);
		if (num != n + 1 || f[1][0] == '\0' || op != want->opcode ||
		    qp != want->dqpn || psn != want->psn || f[5][0] != '\0' ||
		    ts_has_warning(f[6])) {
			printf("frame %u (%s): tshark decoded opcode=%s destqp=%s psn=%s "
			       "malformed=%s expert=[%s] %s; built opcode=%u destqp=0x%06x psn=%u\n",
			       n + 1, drnic_wire_opcode_name(want->opcode), f[1], f[2], f[3], f[5],
			       f[6], f[7], want->opcode, want->dqpn, want->psn);
			bad++;
		} else if (ts_icrc_undecoded(want->opcode) ? f[4][0] != '\0' && crc != icrc[n] :
			   crc != icrc[n]) {
			/* tshark reads the ICRC as a big-endian number: bytes swapped */
			printf("frame %u (%s): tshark ICRC %s, drnic_wire_parse() ICRC 0x%08x "
			       "(on the wire least significant byte first)\n",
			       n + 1, drnic_wire_opcode_name(want->opcode), f[4],
			       rte_bswap32(icrc[n]));
			bad++;
		} else if (f[7][0] != '\0') {
			printf("frame %u: tshark note: %s\n", n + 1, f[7]);
		}
		n++;
	}
	st = pclose(p);
	if (st != 0 || n != TS_NFRAMES) {
		char err[256];
		FILE *e = fopen(errfile, "r");

		while (e != NULL && fgets(err, sizeof(err), e) != NULL)
			printf("tshark stderr: %s", err);
		if (e != NULL)
			fclose(e);
	}
	unlink(errfile);
	TEST_ASSERT(st == 0, "tshark exit status %d", st);
	TEST_ASSERT_EQUAL(n, TS_NFRAMES, "frames decoded by tshark");
	TEST_ASSERT_EQUAL(bad, 0, "frames tshark decodes differently or flags");
	printf("tshark decoded %u frames: opcode, dest QP, PSN and ICRC as built, "
	       "nothing malformed\n", n);
	return TEST_SUCCESS;
}

static int
ts_run(const char *dir, const char *file, struct rte_mempool *mp, struct rte_mbuf **frames)
{
	struct drnic_capture_opts opts = { .ifname = "wire_tshark_autotest" };
	uint32_t icrc[TS_NFRAMES];
	struct drnic_capture *cap;
	unsigned int i;
	int rc;

	for (i = 0; i < RTE_DIM(ts_payload); i++)
		ts_payload[i] = (uint8_t)(0xA5 ^ i);
	rc = ts_build_all(mp, frames, icrc);
	if (rc != TEST_SUCCESS)
		return rc;
	cap = drnic_capture_open(file, &opts);
	TEST_ASSERT(cap != NULL, "capture %s: %s", file, rte_strerror(rte_errno));
	rc = drnic_capture_write(cap, frames, TS_NFRAMES, DRNIC_CAPTURE_DIR_TX);
	TEST_ASSERT_SUCCESS(drnic_capture_close(cap), "close capture");
	TEST_ASSERT_EQUAL(rc, TS_NFRAMES, "frames written");
	return ts_check_tshark(dir, file, icrc);
}

static int
test_wire_tshark(void)
{
	struct rte_mbuf *frames[TS_NFRAMES] = { 0 };
	char dir[] = "/tmp/drnic-wire-tshark-XXXXXX", file[600];
	struct rte_mempool *mp;
	unsigned int i;
	int rc;

	TEST_ASSERT(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
	snprintf(file, sizeof(file), "%s/frames.pcapng", dir);
	mp = rte_pktmbuf_pool_create("wire_tshark", 127, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	if (mp == NULL) {
		rmdir(dir);
		TEST_ASSERT(0, "mempool: %s", rte_strerror(rte_errno));
	}
	rc = ts_run(dir, file, mp, frames);
	for (i = 0; i < TS_NFRAMES; i++)
		rte_pktmbuf_free(frames[i]);
	rte_mempool_free(mp);
	if (rc == TEST_SUCCESS)
		unlink(file);
	else
		printf("kept %s for inspection\n", file);
	rmdir(dir);
	return rc;
}

DRNIC_TEST_REGISTER(wire_tshark_autotest, DRNIC_TEST_FAST, test_wire_tshark);
