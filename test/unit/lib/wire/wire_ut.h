/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef WIRE_UT_H
#define WIRE_UT_H

/*
 * Helpers shared by the lib/wire unit tests: EAL and mbuf pools, mbufs made
 * from bytes (pool-backed or exact-size heap chains, so ASan sees any read
 * past the frame), a reference ICRC on zlib, and a classic-pcap reader.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>
#include <CUnit/Basic.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "drnic_wire.h"

#ifndef DRNIC_TESTDATA_DIR
#define DRNIC_TESTDATA_DIR "../shared/testdata/roce-captures"
#endif

#define UT_BIG_ROOM 9216

static struct rte_mempool *ut_big_pool __rte_unused;   /* one segment holds any frame */

static inline int
ut_eal_init(void)
{
	char *argv[] = {
		(char *)"wire_ut", (char *)"--no-huge", (char *)"--no-shconf",
		(char *)"--no-pci", (char *)"--no-telemetry", (char *)"-l", (char *)"0",
		(char *)"-m", (char *)"64", (char *)"--log-level=lib.eal:error", NULL,
	};
	int argc = (int)RTE_DIM(argv) - 1;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	ut_big_pool = rte_pktmbuf_pool_create("ut_big", 256, 0, 0,
					      RTE_PKTMBUF_HEADROOM + UT_BIG_ROOM, SOCKET_ID_ANY);
	if (ut_big_pool == NULL) {
		fprintf(stderr, "pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* A pool-backed mbuf chain holding @len bytes, at most @seg bytes a segment. */
static inline struct rte_mbuf *
ut_mbuf_from(const void *bytes, uint32_t len, uint32_t seg)
{
	struct rte_mbuf *head = NULL, *last = NULL;
	const uint8_t *b = bytes;
	uint32_t off = 0;

	if (seg == 0 || seg > UT_BIG_ROOM)
		seg = UT_BIG_ROOM;
	do {
		uint32_t n = RTE_MIN(seg, len - off);
		struct rte_mbuf *m = rte_pktmbuf_alloc(ut_big_pool);

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (n > 0)
			memcpy(rte_pktmbuf_append(m, (uint16_t)n), b + off, n);
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
		last = m;
		off += n;
	} while (off < len);
	return head;
}

/* Copy a whole (multi-segment) frame out; returns its length. */
static inline uint32_t
ut_mbuf_bytes(const struct rte_mbuf *m, uint8_t *out)
{
	CU_ASSERT_FATAL(drnic_wire_copy_out(m, 0, m->pkt_len, out) == 0);
	return m->pkt_len;
}

/*
 * A heap chain: segment i is exactly the bytes between cuts, in its own
 * malloc'd buffer, so any read beyond the frame hits ASan's redzone. @cuts are
 * ascending offsets inside (0, len).
 */
struct ut_fake {
	struct rte_mbuf *segs;
	unsigned int n;
};

static inline struct rte_mbuf *
ut_fake_chain(struct ut_fake *f, const void *bytes, uint32_t len, const uint32_t *cuts,
	      unsigned int ncuts)
{
	const uint8_t *b = bytes;
	unsigned int i;
	uint32_t start = 0;

	f->n = ncuts + 1;
	f->segs = aligned_alloc(RTE_CACHE_LINE_SIZE,
				RTE_ALIGN_CEIL(sizeof(struct rte_mbuf) * f->n, RTE_CACHE_LINE_SIZE));
	CU_ASSERT_FATAL(f->segs != NULL);
	memset(f->segs, 0, sizeof(struct rte_mbuf) * f->n);
	for (i = 0; i < f->n; i++) {
		uint32_t end = i < ncuts ? cuts[i] : len;
		struct rte_mbuf *m = &f->segs[i];

		m->buf_addr = malloc(end - start > 0 ? end - start : 1);
		CU_ASSERT_FATAL(m->buf_addr != NULL);
		memcpy(m->buf_addr, b + start, end - start);
		m->buf_len = (uint16_t)(end - start);
		m->data_off = 0;
		m->data_len = (uint16_t)(end - start);
		m->nb_segs = 1;
		m->next = i + 1 < f->n ? &f->segs[i + 1] : NULL;
		start = end;
	}
	f->segs[0].pkt_len = len;
	f->segs[0].nb_segs = (uint16_t)f->n;
	return &f->segs[0];
}

static inline void
ut_fake_free(struct ut_fake *f)
{
	unsigned int i;

	for (i = 0; i < f->n; i++)
		free(f->segs[i].buf_addr);
	free(f->segs);
	f->segs = NULL;
}

/*
 * Reference ICRC, written from the annex's description and computed with
 * zlib: 8 x 0xFF, IP header with TOS/TTL/checksum (v6: class, flow, hop limit)
 * as ones, UDP with checksum as ones, BTH with byte 4 as ones, rest of the
 * packet up to the ICRC. @l3 is the IP packet, @l3_len includes the ICRC.
 */
static inline uint32_t
ut_ref_icrc(const uint8_t *l3, uint32_t l3_len)
{
	uint8_t *c = malloc(8 + l3_len);
	uint32_t ihl = (l3[0] >> 4) == 4 ? (uint32_t)(l3[0] & 0xF) * 4 : 40;
	uLong crc;

	CU_ASSERT_FATAL(c != NULL);
	memset(c, 0xFF, 8);
	memcpy(c + 8, l3, l3_len - 4);
	if ((l3[0] >> 4) == 4) {
		c[8 + 1] = 0xFF;
		c[8 + 8] = 0xFF;
		c[8 + 10] = c[8 + 11] = 0xFF;
	} else {
		c[8 + 0] |= 0x0F;
		c[8 + 1] = c[8 + 2] = c[8 + 3] = 0xFF;
		c[8 + 7] = 0xFF;
	}
	c[8 + ihl + 6] = c[8 + ihl + 7] = 0xFF;
	c[8 + ihl + 8 + 4] = 0xFF;
	crc = crc32(0, c, 8 + l3_len - 4);
	free(c);
	return (uint32_t)crc;
}

/* A small deterministic generator for test bytes. */
static uint32_t ut_seed __rte_unused = 12345;

static inline uint32_t
ut_rand(void)
{
	ut_seed = ut_seed * 1103515245u + 12345u;
	return ut_seed >> 8;
}

static inline void
ut_fill(uint8_t *b, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)ut_rand();
}

/*
 * A descriptor for @opcode with every field random (IPv4 or IPv6, tagged or
 * not), no payload yet.
 */
static inline void
ut_pkt_random(struct drnic_wire_pkt *p, uint8_t opcode, uint8_t version, bool vlan)
{
	drnic_wire_pkt_init(p);
	ut_fill(p->eth.dst, 6);
	ut_fill(p->eth.src, 6);
	p->eth.has_vlan = vlan;
	p->eth.vlan_tci = vlan ? (uint16_t)ut_rand() : 0;
	p->ip.version = version;
	p->ip.tos = (uint8_t)ut_rand();
	p->ip.ttl = (uint8_t)ut_rand();
	if (version == 4) {
		p->ip.df = ut_rand() & 1;
		p->ip.id = (uint16_t)ut_rand();
		ut_fill(p->ip.src, 4);
		ut_fill(p->ip.dst, 4);
	} else {
		p->ip.df = false;
		p->ip.flow_label = ut_rand() & 0xFFFFF;
		ut_fill(p->ip.src, 16);
		ut_fill(p->ip.dst, 16);
	}
	p->udp.sport = drnic_wire_udp_sport(ut_rand());
	p->bth.opcode = opcode;
	p->bth.se = ut_rand() & 1;
	p->bth.m = ut_rand() & 1;
	p->bth.pkey = (uint16_t)ut_rand();
	p->bth.fecn = ut_rand() & 1;
	p->bth.becn = ut_rand() & 1;
	p->bth.dqpn = ut_rand() & DRNIC_QPN_MASK;
	p->bth.ackreq = ut_rand() & 1;
	p->bth.psn = ut_rand() & DRNIC_PSN_MASK;
	p->reth.va = (uint64_t)ut_rand() << 40 ^ (uint64_t)ut_rand() << 16 ^ ut_rand();
	p->reth.rkey = ut_rand() ^ ut_rand() << 16;
	p->reth.dmalen = ut_rand();
	p->aeth.syndrome = (uint8_t)ut_rand();
	p->aeth.msn = ut_rand() & DRNIC_MSN_MASK;
	p->atomic.va = (uint64_t)ut_rand() << 40 ^ ut_rand();
	p->atomic.rkey = ut_rand() ^ ut_rand() << 16;
	p->atomic.swap_add = (uint64_t)ut_rand() << 40 ^ ut_rand();
	p->atomic.cmp = (uint64_t)ut_rand() << 40 ^ ut_rand();
	p->atomic_orig = (uint64_t)ut_rand() << 40 ^ ut_rand();
	p->imm = ut_rand() ^ ut_rand() << 16;
	p->ieth_rkey = ut_rand() ^ ut_rand() << 16;
	p->deth.qkey = ut_rand() ^ ut_rand() << 16;
	p->deth.sqpn = ut_rand() & DRNIC_QPN_MASK;
	p->xrceth.srqn = ut_rand() ^ ut_rand() << 16;   /* above 24 bits too: masked */
}

/*
 * A parsed descriptor @q matches what was built from @p with @len payload
 * bytes: every field the opcode carries equal, every other one zero.
 */
static inline void
ut_pkt_check(const struct drnic_wire_pkt *q, const struct drnic_wire_pkt *p, uint32_t len)
{
	const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(p->bth.opcode);
	uint32_t ext = oi->ext;
	uint32_t l2 = p->eth.has_vlan ? 18 : 14;
	uint32_t ihl = p->ip.version == 4 ? 20 : 40;
	uint32_t pad = (-len) & 3;

	CU_ASSERT(memcmp(q->eth.dst, p->eth.dst, 6) == 0);
	CU_ASSERT(memcmp(q->eth.src, p->eth.src, 6) == 0);
	CU_ASSERT_EQUAL(q->eth.has_vlan, p->eth.has_vlan);
	CU_ASSERT_EQUAL(q->eth.vlan_tci, p->eth.has_vlan ? p->eth.vlan_tci : 0);
	CU_ASSERT_EQUAL(q->ip.version, p->ip.version);
	CU_ASSERT_EQUAL(q->ip.tos, p->ip.tos);
	CU_ASSERT_EQUAL(q->ip.ttl, p->ip.ttl);
	CU_ASSERT_EQUAL(q->ip.df, p->ip.version == 4 && p->ip.df);
	CU_ASSERT_EQUAL(q->ip.id, p->ip.version == 4 ? p->ip.id : 0);
	CU_ASSERT_EQUAL(q->ip.flow_label, p->ip.version == 6 ? p->ip.flow_label : 0);
	CU_ASSERT(memcmp(q->ip.src, p->ip.src, p->ip.version == 4 ? 4 : 16) == 0);
	CU_ASSERT(memcmp(q->ip.dst, p->ip.dst, p->ip.version == 4 ? 4 : 16) == 0);
	CU_ASSERT_EQUAL(q->udp.sport, p->udp.sport);
	CU_ASSERT_EQUAL(q->udp.dport, DRNIC_ROCEV2_UDP_PORT);
	CU_ASSERT_EQUAL(q->bth.opcode, p->bth.opcode);
	CU_ASSERT_EQUAL(q->bth.se, p->bth.se);
	CU_ASSERT_EQUAL(q->bth.m, p->bth.m);
	CU_ASSERT_EQUAL(q->bth.padcnt, pad);
	CU_ASSERT_EQUAL(q->bth.tver, 0);
	CU_ASSERT_EQUAL(q->bth.pkey, p->bth.pkey);
	CU_ASSERT_EQUAL(q->bth.fecn, p->bth.fecn);
	CU_ASSERT_EQUAL(q->bth.becn, p->bth.becn);
	CU_ASSERT_EQUAL(q->bth.dqpn, p->bth.dqpn & DRNIC_QPN_MASK);
	CU_ASSERT_EQUAL(q->bth.ackreq, p->bth.ackreq);
	CU_ASSERT_EQUAL(q->bth.psn, p->bth.psn & DRNIC_PSN_MASK);
#define UT_EXT_EQ(bit, field, val) \
	CU_ASSERT_EQUAL(q->field, (ext & (bit)) ? (val) : 0)
	UT_EXT_EQ(DRNIC_WIRE_EXT_RETH, reth.va, p->reth.va);
	UT_EXT_EQ(DRNIC_WIRE_EXT_RETH, reth.rkey, p->reth.rkey);
	UT_EXT_EQ(DRNIC_WIRE_EXT_RETH, reth.dmalen, p->reth.dmalen);
	UT_EXT_EQ(DRNIC_WIRE_EXT_AETH, aeth.syndrome, p->aeth.syndrome);
	UT_EXT_EQ(DRNIC_WIRE_EXT_AETH, aeth.msn, p->aeth.msn & DRNIC_MSN_MASK);
	UT_EXT_EQ(DRNIC_WIRE_EXT_ATOMICETH, atomic.va, p->atomic.va);
	UT_EXT_EQ(DRNIC_WIRE_EXT_ATOMICETH, atomic.rkey, p->atomic.rkey);
	UT_EXT_EQ(DRNIC_WIRE_EXT_ATOMICETH, atomic.swap_add, p->atomic.swap_add);
	UT_EXT_EQ(DRNIC_WIRE_EXT_ATOMICETH, atomic.cmp, p->atomic.cmp);
	UT_EXT_EQ(DRNIC_WIRE_EXT_ATOMICACKETH, atomic_orig, p->atomic_orig);
	UT_EXT_EQ(DRNIC_WIRE_EXT_IMMDT, imm, p->imm);
	UT_EXT_EQ(DRNIC_WIRE_EXT_IETH, ieth_rkey, p->ieth_rkey);
	UT_EXT_EQ(DRNIC_WIRE_EXT_DETH, deth.qkey, p->deth.qkey);
	UT_EXT_EQ(DRNIC_WIRE_EXT_DETH, deth.sqpn, p->deth.sqpn & DRNIC_QPN_MASK);
	UT_EXT_EQ(DRNIC_WIRE_EXT_XRCETH, xrceth.srqn, p->xrceth.srqn & DRNIC_QPN_MASK);
#undef UT_EXT_EQ
	CU_ASSERT_PTR_NULL(q->sg);
	CU_ASSERT_EQUAL(q->l3_off, l2);
	CU_ASSERT_EQUAL(q->l4_off, l2 + ihl);
	CU_ASSERT_EQUAL(q->bth_off, l2 + ihl + 8);
	CU_ASSERT_EQUAL(q->payload_off, l2 + ihl + 8 + oi->hdr_len);
	CU_ASSERT_EQUAL(q->payload_len, len);
	CU_ASSERT_EQUAL(q->frame_len, q->payload_off + len + pad + 4);
}

/* Stored ICRC at the end of an IP packet (LSB first). */
static inline uint32_t
ut_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void
ut_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/*
 * Independent classification of a captured frame: offset of the IP header
 * when it is IPv4/IPv6 + UDP to port 4791 (RoCEv2), else 0.
 */
static inline uint32_t
ut_rocev2_l3(const uint8_t *f, uint32_t len, uint32_t *l3_len)
{
	uint32_t o = 14, ihl;
	uint16_t type;

	if (len < 14)
		return 0;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == 0x8100) {
		if (len < 18)
			return 0;
		type = (uint16_t)(f[16] << 8 | f[17]);
		o = 18;
	}
	if (type == 0x0800) {
		if (len < o + 20 || f[o + 9] != 17)
			return 0;
		ihl = (uint32_t)(f[o] & 0xF) * 4;
		*l3_len = (uint32_t)(f[o + 2] << 8 | f[o + 3]);
	} else if (type == 0x86DD) {
		if (len < o + 40 || f[o + 6] != 17)
			return 0;
		ihl = 40;
		*l3_len = 40 + (uint32_t)(f[o + 4] << 8 | f[o + 5]);
	} else {
		return 0;
	}
	if (len < o + ihl + 8 || *l3_len > len - o)
		return 0;
	if ((f[o + ihl + 2] << 8 | f[o + ihl + 3]) != DRNIC_ROCEV2_UDP_PORT)
		return 0;
	return o;
}

/* Classic pcap (not pcapng), either byte order, micro- or nanosecond stamps. */
struct ut_pcap {
	uint8_t *data;
	size_t len;
	size_t off;
	bool swap;
	uint32_t linktype;
};

static inline uint32_t
ut_pcap_u32(const struct ut_pcap *pc, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return pc->swap ? __builtin_bswap32(v) : v;
}

/* 0, -ENOENT when the file is missing, -EINVAL when it is not classic pcap. */
static inline int
ut_pcap_open(struct ut_pcap *pc, const char *path)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	uint32_t magic;

	memset(pc, 0, sizeof(*pc));
	if (fp == NULL)
		return -errno;
	if (fstat(fileno(fp), &st) != 0 || st.st_size < 24) {
		fclose(fp);
		return -EINVAL;
	}
	pc->len = (size_t)st.st_size;
	pc->data = malloc(pc->len);
	if (pc->data == NULL || fread(pc->data, 1, pc->len, fp) != pc->len) {
		fclose(fp);
		free(pc->data);
		return -EIO;
	}
	fclose(fp);
	memcpy(&magic, pc->data, 4);
	if (magic == 0xA1B2C3D4 || magic == 0xA1B23C4D)
		pc->swap = false;
	else if (magic == 0xD4C3B2A1 || magic == 0x4D3CB2A1)
		pc->swap = true;
	else {
		free(pc->data);
		return -EINVAL;
	}
	pc->linktype = ut_pcap_u32(pc, pc->data + 20) & 0xFFFF;
	pc->off = 24;
	return 0;
}

/* Next record; false at the end (a cut-off record ends the file too). */
static inline bool
ut_pcap_next(struct ut_pcap *pc, const uint8_t **frame, uint32_t *caplen, uint32_t *origlen)
{
	uint32_t incl;

	if (pc->len - pc->off < 16)
		return false;
	incl = ut_pcap_u32(pc, pc->data + pc->off + 8);
	*origlen = ut_pcap_u32(pc, pc->data + pc->off + 12);
	if (incl > pc->len - pc->off - 16)
		return false;
	*frame = pc->data + pc->off + 16;
	*caplen = incl;
	pc->off += 16 + incl;
	return true;
}

static inline void
ut_pcap_close(struct ut_pcap *pc)
{
	free(pc->data);
	pc->data = NULL;
}

/* The ConnectX captures of ORIGIN.md, in the order the tests walk them. */
static const char *const ut_cx_captures[] __rte_unused = {
	"cx_ib_send_bw_over_roce.pcap", "cx_ibdump_read2.pcap", "cx_ibdump_send.pcap",
	"cx_ibdump_write.pcap", "cx_nvme-discover.pcap", "cx_nvme-discover2.pcap",
	"cx_nvme-rdma-25echoTo27.pcap", "cx_nvme-rdma-idle.pcap",
	"cx_rocev2_test_multiqp.pcap",
};

/* Path of a capture file; false (and a printed reason) when the directory is absent. */
static inline bool
ut_testdata(char *path, size_t size, const char *name)
{
	struct stat st;

	if (stat(DRNIC_TESTDATA_DIR, &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("\n  SKIP: capture directory %s not found (%s); capture tests not run\n",
		       DRNIC_TESTDATA_DIR, strerror(errno));
		return false;
	}
	snprintf(path, size, "%s/%s", DRNIC_TESTDATA_DIR, name);
	return true;
}

#endif /* WIRE_UT_H */
