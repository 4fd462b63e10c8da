/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic-wiredump: builds one RoCEv2 frame of every opcode family with
 * lib/wire, writes them to a pcapng file, parses each back and prints a
 * one-line decode per frame and a summary.
 *
 *   drnic-wiredump [-o PATH] [-q]
 *
 *   -o PATH   pcapng file to write (default drnic-wiredump.pcapng)
 *   -q        print only the summary
 *
 * Exit status: 0 when every frame parsed back to what was built, 1 otherwise,
 * 2 on bad usage. Open the file with wireshark or
 * `tshark -r drnic-wiredump.pcapng --disable-protocol rpcordma -V`.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "drnic_capture.h"
#include "drnic_env.h"
#include "drnic_wire.h"

#define WD_POOL_SIZE 255
#define WD_PSN_BASE 0x00abcdu
#define WD_MAX_PAYLOAD 4096
#define WD_LINE 512

/* One frame of the catalog. */
struct wd_frame {
	uint8_t opcode;
	uint8_t ipver;        /* 4 or 6 */
	bool vlan;
	uint32_t len;         /* payload bytes */
	uint8_t syndrome;     /* AETH syndrome, for opcodes carrying one */
	uint32_t dmalen;      /* RETH length, for opcodes carrying one */
};

/* AETH syndromes (type in bits 6:5, value in 4:0), as constants for the table. */
#define WD_ACK ((DRNIC_AETH_ACK << 5) | 8)                   /* credit code 8 */
#define WD_NAK ((DRNIC_AETH_NAK << 5) | DRNIC_NAK_PSN_SEQ_ERR)
#define WD_RNR ((DRNIC_AETH_RNR_NAK << 5) | 14)              /* RNR timer code 14 */

/*
 * Every opcode family: RC/UC/UD, SEND/WRITE/READ/ACK/atomic, with and without
 * immediate, a three-packet message of SEND, WRITE and READ response at path
 * MTU 256, zero-length and padded payloads, IPv4 and IPv6, 802.1Q tags, CNP.
 */
static const struct wd_frame wd_catalog[] = {
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_IMMEDIATE, 4, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_INVALIDATE, 4, false, 32, 0, 0 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0, 0, 0 },        /* Ethernet padding */
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 61, 0, 0 },       /* PadCnt 3 */
	{ DRNIC_WIRE_OP_RC_SEND_FIRST, 4, false, 256, 0, 0 },
	{ DRNIC_WIRE_OP_RC_SEND_MIDDLE, 4, false, 256, 0, 0 },
	{ DRNIC_WIRE_OP_RC_SEND_LAST, 4, false, 100, 0, 0 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 4, false, 256, 0, 612 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, 4, false, 256, 0, 0 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 4, false, 100, 0, 0 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 4, false, 64, 0, 64 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 4, false, 64, 0, 64 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 4, false, 4096, 0, 4096 }, /* multi-segment mbuf */
	{ DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST, 4, false, 0, 0, 612 },
	{ DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 4, false, 256, WD_ACK, 0 },
	{ DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 4, false, 256, 0, 0 },
	{ DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, 4, false, 100, WD_ACK, 0 },
	{ DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 4, false, 64, WD_ACK, 0 },
	{ DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0, WD_ACK, 0 },
	{ DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0, WD_NAK, 0 },
	{ DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0, WD_RNR, 0 },
	{ DRNIC_WIRE_OP_RC_COMPARE_SWAP, 4, false, 0, 0, 0 },
	{ DRNIC_WIRE_OP_RC_FETCH_ADD, 4, false, 0, 0, 0 },
	{ DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE, 4, false, 0, WD_ACK, 0 },
	{ DRNIC_WIRE_OP_UC_SEND_ONLY, 4, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_UC_SEND_ONLY_WITH_IMMEDIATE, 4, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_UC_RDMA_WRITE_ONLY, 4, false, 64, 0, 64 },
	{ DRNIC_WIRE_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 4, false, 64, 0, 64 },
	{ DRNIC_WIRE_OP_UD_SEND_ONLY, 4, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 4, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_CNP, 4, false, 0, 0, 0 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 6, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 6, false, 64, 0, 64 },
	{ DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 6, false, 0, WD_ACK, 0 },
	{ DRNIC_WIRE_OP_UC_SEND_ONLY_WITH_IMMEDIATE, 6, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 6, false, 64, 0, 0 },
	{ DRNIC_WIRE_OP_CNP, 6, false, 0, 0, 0 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, true, 64, 0, 0 },
	{ DRNIC_WIRE_OP_RC_SEND_ONLY, 6, true, 0, 0, 0 },
};

#define WD_NFRAMES RTE_DIM(wd_catalog)

static uint8_t wd_payload[WD_MAX_PAYLOAD];
static uint8_t wd_readback[WD_MAX_PAYLOAD];

static uint32_t
wd_qpn(uint8_t transport)
{
	switch (transport) {
	case DRNIC_WIRE_TR_UC:
		return 0x000013;
	case DRNIC_WIRE_TR_UD:
		return 0x000014;
	default:
		return 0x000012;   /* RC, and the RC flow a CNP reports */
	}
}

/* Fill @p p with frame @p idx of the catalog. */
static void
wd_describe(unsigned int idx, struct drnic_wire_pkt *p, struct drnic_wire_sge *sge)
{
	static const uint8_t mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
	static const uint8_t mac_b[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };
	static const uint8_t v4_a[4] = { 192, 168, 10, 1 }, v4_b[4] = { 192, 168, 10, 2 };
	static const uint8_t v6_a[16] = { 0xfd, 0x00, 0xd7, 0x1c, [15] = 1 };
	static const uint8_t v6_b[16] = { 0xfd, 0x00, 0xd7, 0x1c, [15] = 2 };
	const struct wd_frame *f = &wd_catalog[idx];
	const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(f->opcode);
	uint32_t qpn = wd_qpn(oi->transport);

	drnic_wire_pkt_init(p);
	memcpy(p->eth.dst, mac_b, 6);
	memcpy(p->eth.src, mac_a, 6);
	p->eth.has_vlan = f->vlan;
	p->eth.vlan_tci = f->vlan ? (3u << 13) | 100 : 0;   /* PCP 3, VID 100 */
	p->ip.version = f->ipver;
	if (f->ipver == 6) {
		memcpy(p->ip.src, v6_a, 16);
		memcpy(p->ip.dst, v6_b, 16);
		p->ip.flow_label = 0x12345;
	} else {
		memcpy(p->ip.src, v4_a, 4);
		memcpy(p->ip.dst, v4_b, 4);
		p->ip.id = (uint16_t)idx;
	}
	p->ip.tos = DRNIC_WIRE_ECN_ECT0 | (26 << 2);   /* DSCP 26, ECN-capable */
	p->udp.sport = drnic_wire_udp_sport(qpn * 0x9E3779B1u);

	p->bth.opcode = f->opcode;
	p->bth.dqpn = oi->transport == DRNIC_WIRE_TR_UD ? 0x000015 : qpn;
	p->bth.psn = oi->transport == DRNIC_WIRE_TR_CNP ? 0 : (WD_PSN_BASE + idx) & DRNIC_PSN_MASK;
	p->bth.ackreq = (oi->flags & DRNIC_WIRE_OPF_REQUEST) && (oi->pos & DRNIC_WIRE_POS_LAST);
	p->bth.se = (oi->flags & DRNIC_WIRE_OPF_IMM) != 0;
	p->bth.becn = oi->transport == DRNIC_WIRE_TR_CNP;

	p->reth.va = 0x00007f0000100000ull + idx * 0x1000ull;
	p->reth.rkey = 0x00001234u + idx;
	p->reth.dmalen = f->dmalen;
	p->aeth.syndrome = f->syndrome;
	p->aeth.msn = 0x000100u + idx;
	p->atomic.va = 0x00007f0000200000ull + idx * 8;
	p->atomic.rkey = 0x00005678u;
	p->atomic.swap_add = f->opcode == DRNIC_WIRE_OP_RC_FETCH_ADD ? 1 : 0x1111222233334444ull;
	p->atomic.cmp = 0x5555666677778888ull;
	p->atomic_orig = 0x0123456789abcdefull;
	p->imm = rte_cpu_to_be_32(0xc0de0000u + idx);
	p->ieth_rkey = 0x00009abcu;
	p->deth.qkey = 0x11111111u;
	p->deth.sqpn = qpn;

	sge->addr = wd_payload;
	sge->len = f->len;
	p->sg = sge;
	p->sg_cnt = f->len > 0 ? 1 : 0;
}

/* Append printf output to @p buf of size WD_LINE. */
static void __rte_format_printf(2, 3)
wd_cat(char *buf, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used >= WD_LINE - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, WD_LINE - used, fmt, ap);
	va_end(ap);
}

/*
 * Compare what was parsed with what was built. Returns NULL when they agree,
 * else the name of the first field that differs.
 */
static const char *
wd_compare(const struct drnic_wire_pkt *in, const struct drnic_wire_pkt *out,
	   const struct rte_mbuf *m)
{
	const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(in->bth.opcode);
	uint32_t len = in->sg_cnt ? in->sg[0].len : 0;

	if (out->bth.opcode != in->bth.opcode)
		return "opcode";
	if (out->bth.dqpn != in->bth.dqpn)
		return "dest_qp";
	if (out->bth.psn != in->bth.psn)
		return "psn";
	if (out->bth.se != in->bth.se || out->bth.ackreq != in->bth.ackreq ||
	    out->bth.becn != in->bth.becn)
		return "bth_flags";
	if (out->bth.pkey != in->bth.pkey)
		return "pkey";
	if (out->bth.padcnt != ((4 - len % 4) % 4))
		return "padcnt";
	if (out->ip.version != in->ip.version || out->ip.tos != in->ip.tos)
		return "ip";
	if (memcmp(out->ip.src, in->ip.src, in->ip.version == 6 ? 16 : 4) != 0 ||
	    memcmp(out->ip.dst, in->ip.dst, in->ip.version == 6 ? 16 : 4) != 0)
		return "ip_addr";
	if (out->eth.has_vlan != in->eth.has_vlan ||
	    (in->eth.has_vlan && out->eth.vlan_tci != in->eth.vlan_tci))
		return "vlan";
	if (memcmp(out->eth.dst, in->eth.dst, 6) != 0 || memcmp(out->eth.src, in->eth.src, 6) != 0)
		return "mac";
	if (out->udp.sport != in->udp.sport || out->udp.dport != DRNIC_ROCEV2_UDP_PORT)
		return "udp_port";
	if ((oi->ext & DRNIC_WIRE_EXT_RETH) &&
	    (out->reth.va != in->reth.va || out->reth.rkey != in->reth.rkey ||
	     out->reth.dmalen != in->reth.dmalen))
		return "reth";
	if ((oi->ext & DRNIC_WIRE_EXT_AETH) &&
	    (out->aeth.syndrome != in->aeth.syndrome || out->aeth.msn != in->aeth.msn))
		return "aeth";
	if ((oi->ext & DRNIC_WIRE_EXT_ATOMICETH) &&
	    (out->atomic.va != in->atomic.va || out->atomic.rkey != in->atomic.rkey ||
	     out->atomic.swap_add != in->atomic.swap_add || out->atomic.cmp != in->atomic.cmp))
		return "atomiceth";
	if ((oi->ext & DRNIC_WIRE_EXT_ATOMICACKETH) && out->atomic_orig != in->atomic_orig)
		return "atomicacketh";
	if ((oi->ext & DRNIC_WIRE_EXT_IMMDT) && out->imm != in->imm)
		return "immdt";
	if ((oi->ext & DRNIC_WIRE_EXT_IETH) && out->ieth_rkey != in->ieth_rkey)
		return "ieth";
	if ((oi->ext & DRNIC_WIRE_EXT_DETH) &&
	    (out->deth.qkey != in->deth.qkey || out->deth.sqpn != in->deth.sqpn))
		return "deth";
	if (out->payload_len != len)
		return "payload_len";
	if (len > 0 && (drnic_wire_copy_out(m, out->payload_off, len, wd_readback) != 0 ||
			memcmp(wd_readback, wd_payload, len) != 0))
		return "payload";
	if (out->frame_len > m->pkt_len || (m->pkt_len > out->frame_len &&
					    m->pkt_len != DRNIC_WIRE_ETH_MIN_FRAME))
		return "frame_len";
	return NULL;
}

static const char *
wd_transport_name(uint8_t transport)
{
	switch (transport) {
	case DRNIC_WIRE_TR_RC:
		return "RC";
	case DRNIC_WIRE_TR_UC:
		return "UC";
	case DRNIC_WIRE_TR_UD:
		return "UD";
	case DRNIC_WIRE_TR_CNP:
		return "RoCE";   /* the RoCEv2 CNP belongs to no IB transport */
	default:
		return "??";
	}
}

/* The opcode name without its transport prefix ("RC_SEND_ONLY" -> "SEND_ONLY"). */
static const char *
wd_op_name(uint8_t opcode)
{
	const char *name = drnic_wire_opcode_name(opcode);

	if (strlen(name) > 3 && name[2] == '_' &&
	    (strncmp(name, "RC", 2) == 0 || strncmp(name, "UC", 2) == 0 ||
	     strncmp(name, "UD", 2) == 0))
		return name + 3;
	return name;
}

/* One-line decode of a parsed frame into @p line. */
static void
wd_decode(unsigned int idx, const struct drnic_wire_pkt *o, const struct rte_mbuf *m,
	  char *line)
{
	const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(o->bth.opcode);

	line[0] = '\0';
	wd_cat(line, "#%-2u %-4s %-32s %s", idx + 1, wd_transport_name(oi->transport),
	       wd_op_name(o->bth.opcode), o->ip.version == 6 ? "v6" : "v4");
	if (o->eth.has_vlan)
		wd_cat(line, " vlan=%u", o->eth.vlan_tci & 0xFFF);
	wd_cat(line, " qp=0x%06x psn=0x%06x len=%u", o->bth.dqpn, o->bth.psn, o->payload_len);
	if (o->bth.padcnt)
		wd_cat(line, " pad=%u", o->bth.padcnt);
	if (oi->ext & DRNIC_WIRE_EXT_RETH)
		wd_cat(line, " va=0x%" PRIx64 " rkey=0x%x dmalen=%u", o->reth.va, o->reth.rkey,
		       o->reth.dmalen);
	if (oi->ext & DRNIC_WIRE_EXT_AETH)
		wd_cat(line, " aeth=%s/%u msn=0x%06x", drnic_aeth_name(o->aeth.syndrome),
		       drnic_aeth_value(o->aeth.syndrome), o->aeth.msn);
	if (oi->ext & DRNIC_WIRE_EXT_ATOMICETH)
		wd_cat(line, " va=0x%" PRIx64 " rkey=0x%x swap_add=0x%" PRIx64 " cmp=0x%" PRIx64,
		       o->atomic.va, o->atomic.rkey, o->atomic.swap_add, o->atomic.cmp);
	if (oi->ext & DRNIC_WIRE_EXT_ATOMICACKETH)
		wd_cat(line, " orig=0x%" PRIx64, o->atomic_orig);
	if (oi->ext & DRNIC_WIRE_EXT_IMMDT)
		wd_cat(line, " imm=0x%08x", rte_be_to_cpu_32(o->imm));
	if (oi->ext & DRNIC_WIRE_EXT_IETH)
		wd_cat(line, " inv_rkey=0x%x", o->ieth_rkey);
	if (oi->ext & DRNIC_WIRE_EXT_DETH)
		wd_cat(line, " qkey=0x%x src_qp=0x%06x", o->deth.qkey, o->deth.sqpn);
	if (o->bth.becn)
		wd_cat(line, " becn");
	wd_cat(line, " frame=%u", m->pkt_len);
	if (m->pkt_len > o->frame_len)
		wd_cat(line, " (eth_pad=%u)", m->pkt_len - o->frame_len);
	if (m->nb_segs > 1)
		wd_cat(line, " segs=%u", m->nb_segs);
	wd_cat(line, " icrc=0x%08x", o->icrc);
}

static void
wd_usage(void)
{
	fprintf(stderr,
		"usage: drnic-wiredump [-o PATH] [-q]\n"
		"  -o PATH  pcapng file to write (default drnic-wiredump.pcapng)\n"
		"  -q       print only the summary\n"
		"EAL options can be added through DRNIC_EAL_ARGS; DRNIC_NO_HUGE=1 avoids hugepages.\n");
}

int
main(int argc, char **argv)
{
	struct drnic_env_opts eopts = { .name = "drnic-wiredump", .mem_mb = 64 };
	struct drnic_capture_opts copts = { .ifname = "drnic-wiredump",
		.ifdescr = "one RoCEv2 frame of every opcode family",
		.comment = "drnic-wiredump" };
	struct rte_mbuf *frames[WD_NFRAMES] = { 0 };
	unsigned int nbuilt = 0, nok = 0, ndrop = 0, nmis = 0, nv6 = 0, nvlan = 0;
	unsigned int per_tr[DRNIC_WIRE_TR_CNP + 1] = { 0 };
	const char *path = "drnic-wiredump.pcapng";
	struct drnic_capture_stats cst;
	struct drnic_env_info info;
	struct drnic_capture *cap;
	struct rte_mempool *mp;
	bool quiet = false;
	unsigned int i;
	struct stat sb;
	int opt, rc, status = 1;

	while ((opt = getopt(argc, argv, "o:qh")) != -1) {
		switch (opt) {
		case 'o':
			path = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			wd_usage();
			return 0;
		default:
			wd_usage();
			return 2;
		}
	}
	if (optind != argc) {
		wd_usage();
		return 2;
	}

	rc = drnic_env_init(&eopts, &info);
	if (rc < 0) {
		fprintf(stderr, "drnic-wiredump: EAL start failed: %s\n", strerror(-rc));
		return 1;
	}
	if (info.hugepages)
		printf("EAL: hugepages used (%u kB pages, %lu were free)\n", info.hugepage_kb,
		       info.free_pages);
	else
		printf("EAL: hugepages not used (%s); running with --no-huge\n", info.reason);

	for (i = 0; i < RTE_DIM(wd_payload); i++)
		wd_payload[i] = (uint8_t)(i * 7 + 1);

	mp = rte_pktmbuf_pool_create("wiredump", WD_POOL_SIZE, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	if (mp == NULL) {
		fprintf(stderr, "drnic-wiredump: mbuf pool: %s\n", rte_strerror(rte_errno));
		goto out_env;
	}
	cap = drnic_capture_open(path, &copts);
	if (cap == NULL) {
		fprintf(stderr, "drnic-wiredump: %s: %s\n", path, rte_strerror(rte_errno));
		goto out_pool;
	}

	for (i = 0; i < WD_NFRAMES; i++) {
		struct drnic_wire_pkt in, out;
		struct drnic_wire_sge sge;
		enum drnic_wire_drop drop;
		char line[WD_LINE];
		const char *bad;

		wd_describe(i, &in, &sge);
		frames[i] = rte_pktmbuf_alloc(mp);
		if (frames[i] == NULL) {
			fprintf(stderr, "drnic-wiredump: out of mbufs\n");
			goto out_cap;
		}
		rc = drnic_wire_build(frames[i], &in);
		if (rc < 0) {
			printf("#%-2u %s: build failed: %s\n", i + 1,
			       drnic_wire_opcode_name(in.bth.opcode), strerror(-rc));
			rte_pktmbuf_free(frames[i]);
			frames[i] = NULL;
			nmis++;
			continue;
		}
		nbuilt++;
		if (drnic_capture_write(cap, &frames[i], 1, DRNIC_CAPTURE_DIR_TX) != 1)
			fprintf(stderr, "drnic-wiredump: frame %u not written to %s\n", i + 1, path);

		memset(&out, 0, sizeof(out));
		drop = drnic_wire_parse(frames[i], &out);
		if (drop != DRNIC_WIRE_OK) {
			ndrop++;
			printf("#%-2u %s: DROPPED by the parser: %s\n", i + 1,
			       drnic_wire_opcode_name(in.bth.opcode), drnic_wire_drop_name(drop));
			continue;
		}
		bad = wd_compare(&in, &out, frames[i]);
		if (bad != NULL)
			nmis++;
		else
			nok++;
		per_tr[RTE_MIN(drnic_wire_opcode_info(out.bth.opcode)->transport,
			       (uint8_t)DRNIC_WIRE_TR_CNP)]++;
		nv6 += out.ip.version == 6;
		nvlan += out.eth.has_vlan;
		if (!quiet || bad != NULL) {
			wd_decode(i, &out, frames[i], line);
			printf("%s %s%s\n", line, bad ? "MISMATCH " : "ok", bad ? bad : "");
		}
	}

	drnic_capture_stats(cap, &cst);
	rc = drnic_capture_close(cap);
	cap = NULL;
	if (rc < 0)
		fprintf(stderr, "drnic-wiredump: %s: %s\n", path, strerror(-rc));
	printf("%u frames (RC %u, UC %u, UD %u, CNP %u; IPv6 %u, VLAN %u): "
	       "%u parsed back ok, %u dropped, %u mismatched or not built\n",
	       (unsigned int)WD_NFRAMES, per_tr[DRNIC_WIRE_TR_RC], per_tr[DRNIC_WIRE_TR_UC],
	       per_tr[DRNIC_WIRE_TR_UD], per_tr[DRNIC_WIRE_TR_CNP], nv6, nvlan,
	       nok, ndrop, nmis);
	printf("wrote %s: %" PRIu64 " frames, %lld bytes (pcapng); decode it with\n"
	       "  tshark -r %s --disable-protocol rpcordma -o udp.ignore_ipv6_zero_checksum:TRUE -V\n",
	       path, cst.packets, stat(path, &sb) == 0 ? (long long)sb.st_size : -1LL, path);
	if (rc == 0 && nok == WD_NFRAMES && cst.packets == nbuilt)
		status = 0;

out_cap:
	drnic_capture_close(cap);
	for (i = 0; i < WD_NFRAMES; i++)
		rte_pktmbuf_free(frames[i]);
out_pool:
	rte_mempool_free(mp);
out_env:
	drnic_env_fini();
	return status;
}
