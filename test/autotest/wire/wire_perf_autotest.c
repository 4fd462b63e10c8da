/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire_perf_autotest (suite perf): what the frame codec costs on one core.
 *
 *  - frames built per second (mbuf alloc + drnic_wire_build + free, bursts of
 *    32) and frames parsed-and-verified per second (drnic_wire_parse with the
 *    IPv4 checksum and ICRC checks), RC WRITE_ONLY over IPv4, 64 B and 4 KiB
 *    payloads;
 *  - ICRC GB/s (drnic_wire_icrc_buf over a contiguous IPv6 packet) next to
 *    rte_memcpy GB/s, both cache-hot, at 64 B, 4 KiB and 64 KiB, and their
 *    ratio; plain ISA-L crc32_gzip_refl over the same bytes shows what the
 *    ICRC's header masking costs.
 *
 * Each figure is the median of 7 runs of about 20 ms. Prints figures; asserts
 * only that the work was correct (every build and parse succeeded), never
 * anything about time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>

#include "drnic_wire.h"
#include "test.h"
#include "wire_internal.h"

#define WP_RUNS 7
#define WP_BURST 32
#define WP_RUN_DIV 50          /* one run lasts 1/50 s */
#define WP_MAX_PAYLOAD 4096
#define WP_BUF_SIZE (64 * 1024)

static uint8_t wp_payload[WP_MAX_PAYLOAD];
static volatile uint32_t wp_sink;

static int
wp_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
wp_median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), wp_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
wp_describe(struct drnic_wire_pkt *p, struct drnic_wire_sge *sge, uint32_t len)
{
	static const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };

	drnic_wire_pkt_init(p);
	p->eth.src[0] = 0x02;
	p->eth.dst[0] = 0x02;
	p->eth.dst[5] = 1;
	memcpy(p->ip.src, a, 4);
	memcpy(p->ip.dst, b, 4);
	p->udp.sport = drnic_wire_udp_sport(0x12);
	p->bth.opcode = DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY;
	p->bth.dqpn = 0x12;
	p->bth.psn = 0x100;
	p->bth.ackreq = true;
	p->reth.va = 0x7f0000000000ull;
	p->reth.rkey = 0x1234;
	p->reth.dmalen = len;
	sge->addr = wp_payload;
	sge->len = len;
	p->sg = sge;
	p->sg_cnt = 1;
}

/* Frames built per second: alloc a burst, build each, free the burst. */
static int
wp_build_rate(struct rte_mempool *mp, uint32_t len, double *rate)
{
	const uint64_t hz = rte_get_tsc_hz();
	struct rte_mbuf *ms[WP_BURST];
	struct drnic_wire_sge sge;
	struct drnic_wire_pkt p;
	double runs[WP_RUNS];
	unsigned int r, j;

	wp_describe(&p, &sge, len);
	for (r = 0; r < WP_RUNS; r++) {
		uint64_t n = 0, t0 = rte_rdtsc(), t;

		do {
			TEST_ASSERT_SUCCESS(rte_pktmbuf_alloc_bulk(mp, ms, WP_BURST), "alloc");
			for (j = 0; j < WP_BURST; j++) {
				p.bth.psn = (p.bth.psn + 1) & DRNIC_PSN_MASK;
				if (unlikely(drnic_wire_build(ms[j], &p) != 0)) {
					rte_pktmbuf_free_bulk(ms, WP_BURST);
					TEST_ASSERT(0, "build of a %u B WRITE_ONLY failed", len);
				}
			}
			rte_pktmbuf_free_bulk(ms, WP_BURST);
			n += WP_BURST;
			t = rte_rdtsc() - t0;
		} while (t < hz / WP_RUN_DIV);
		runs[r] = (double)n * (double)hz / (double)t;
	}
	*rate = wp_median(runs, WP_RUNS);
	return TEST_SUCCESS;
}

/* Frames parsed and verified (IP checksum, ICRC) per second, cache-hot. */
static int
wp_parse_rate(struct rte_mempool *mp, uint32_t len, double *rate)
{
	const uint64_t hz = rte_get_tsc_hz();
	struct rte_mbuf *ms[WP_BURST];
	struct drnic_wire_pkt p, out;
	struct drnic_wire_sge sge;
	double runs[WP_RUNS];
	unsigned int r, j;
	int rc = TEST_SUCCESS;

	wp_describe(&p, &sge, len);
	TEST_ASSERT_SUCCESS(rte_pktmbuf_alloc_bulk(mp, ms, WP_BURST), "alloc");
	for (j = 0; j < WP_BURST; j++) {
		p.bth.psn = j;
		if (drnic_wire_build(ms[j], &p) != 0) {
			rte_pktmbuf_free_bulk(ms, WP_BURST);
			TEST_ASSERT(0, "build of a %u B WRITE_ONLY failed", len);
		}
	}
	for (r = 0; r < WP_RUNS && rc == TEST_SUCCESS; r++) {
		uint64_t n = 0, bad = 0, t0 = rte_rdtsc(), t;

		do {
			for (j = 0; j < WP_BURST; j++)
				bad += drnic_wire_parse(ms[j], &out) != DRNIC_WIRE_OK;
			n += WP_BURST;
			t = rte_rdtsc() - t0;
		} while (t < hz / WP_RUN_DIV);
		runs[r] = (double)n * (double)hz / (double)t;
		if (bad != 0) {
			printf("%" PRIu64 " of %" PRIu64 " parses of a %u B frame failed\n",
			       bad, n, len);
			rc = TEST_FAILED;
		}
	}
	rte_pktmbuf_free_bulk(ms, WP_BURST);
	*rate = wp_median(runs, WP_RUNS);
	return rc;
}

static uint32_t
wp_do_icrc(const uint8_t *pkt, uint32_t size)
{
	uint32_t crc = 0;

	drnic_wire_icrc_buf(pkt, size, &crc);
	return crc;
}

static uint32_t
wp_do_crc32(const uint8_t *pkt, uint32_t size)
{
	return crc32_gzip_refl(0, pkt, size);
}

/* Where wp_do_copy_crc() copies to (the buffer after the source's). */
static uint8_t *wp_copy_dst;

/* The engine's copy-and-CRC pass (a receiver placing a payload), 64-byte
 * aligned at both ends. */
static uint32_t
wp_do_copy_crc(const uint8_t *pkt, uint32_t size)
{
	return wire_crc32_copy(0, wp_copy_dst, pkt, size);
}

/* GB/s of @p fn over @p size bytes at @p pkt, cache-hot. */
static double
wp_crc_gbps(uint32_t (*fn)(const uint8_t *, uint32_t), const uint8_t *pkt, uint32_t size)
{
	const uint64_t hz = rte_get_tsc_hz();
	double runs[WP_RUNS];
	unsigned int r;

	for (r = 0; r < WP_RUNS; r++) {
		uint64_t bytes = 0, t0 = rte_rdtsc(), t;

		do {
			unsigned int k;

			for (k = 0; k < 16; k++) {
				wp_sink = fn(pkt, size);
				bytes += size;
			}
			t = rte_rdtsc() - t0;
		} while (t < hz / WP_RUN_DIV);
		runs[r] = (double)bytes * (double)hz / (double)t / 1e9;
	}
	return wp_median(runs, WP_RUNS);
}

/* rte_memcpy GB/s of @p size bytes between two cache-hot buffers. */
static double
wp_memcpy_gbps(uint8_t *dst, const uint8_t *src, uint32_t size)
{
	const uint64_t hz = rte_get_tsc_hz();
	double runs[WP_RUNS];
	unsigned int r;

	for (r = 0; r < WP_RUNS; r++) {
		uint64_t bytes = 0, t0 = rte_rdtsc(), t;

		do {
			unsigned int k;

			for (k = 0; k < 16; k++) {
				rte_memcpy(dst, src, size);
				/* keep the copy: the compiler must assume dst is read */
				__asm__ volatile("" : : "r"(dst) : "memory");
				bytes += size;
			}
			t = rte_rdtsc() - t0;
		} while (t < hz / WP_RUN_DIV);
		runs[r] = (double)bytes * (double)hz / (double)t / 1e9;
	}
	return wp_median(runs, WP_RUNS);
}

/* An IPv6/UDP/BTH packet of @p size bytes for the ICRC benchmark. */
static void
wp_fill_ipv6(uint8_t *pkt, uint32_t size)
{
	struct drnic_wire_ipv6 *ip = (struct drnic_wire_ipv6 *)pkt;
	struct drnic_wire_udp *udp = (struct drnic_wire_udp *)(ip + 1);
	struct drnic_wire_bth *bth = (struct drnic_wire_bth *)(udp + 1);
	uint32_t i;

	for (i = 0; i < size; i++)
		pkt[i] = (uint8_t)(i * 13);
	memset(pkt, 0, DRNIC_WIRE_IPV6_LEN + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	/* 64 KiB does not fit the 16-bit length fields; they do not enter the CRC math. */
	ip->payload_len = rte_cpu_to_be_16((uint16_t)RTE_MIN(size - DRNIC_WIRE_IPV6_LEN, 0xFFFFu));
	ip->next_hdr = DRNIC_WIRE_IPPROTO_UDP;
	ip->hop_limit = 64;
	udp->sport = rte_cpu_to_be_16(0xC000);
	udp->dport = rte_cpu_to_be_16(DRNIC_ROCEV2_UDP_PORT);
	udp->len = rte_cpu_to_be_16((uint16_t)RTE_MIN(size - DRNIC_WIRE_IPV6_LEN, 0xFFFFu));
	drnic_wire_bth_set(bth, DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE, false, false, 0, 0, 0xFFFF,
			   false, false, 0x12, false, 1);
}

static int
wp_run(struct rte_mempool *mp, uint8_t *a, uint8_t *b)
{
	static const uint32_t payloads[] = { 64, 4096 };
	static const uint32_t sizes[] = { 64, 4096, WP_BUF_SIZE };
	unsigned int i;
	int rc;

	printf("wire_perf: one core, medians of %u runs of %u ms\n", WP_RUNS,
	       1000 / WP_RUN_DIV);
	for (i = 0; i < RTE_DIM(payloads); i++) {
		double build, parse;

		rc = wp_build_rate(mp, payloads[i], &build);
		if (rc == TEST_SUCCESS)
			rc = wp_parse_rate(mp, payloads[i], &parse);
		if (rc != TEST_SUCCESS)
			return rc;
		printf("wire_perf: RC WRITE_ONLY %4u B payload: build %6.2f Mframes/s "
		       "(%5.0f ns), parse+verify %6.2f Mframes/s (%5.0f ns)\n",
		       payloads[i], build / 1e6, 1e9 / build, parse / 1e6, 1e9 / parse);
	}
	printf("wire_perf: %8s %10s %12s %12s %16s %15s\n", "bytes", "ICRC GB/s", "memcpy GB/s",
	       "ICRC/memcpy", "plain CRC32 GB/s", "copy+CRC GB/s");
	wp_copy_dst = b;
	for (i = 0; i < RTE_DIM(sizes); i++) {
		double icrc, mc, plain, copy;
		uint32_t crc = 0;

		wp_fill_ipv6(a, sizes[i]);
		TEST_ASSERT_SUCCESS(drnic_wire_icrc_buf(a, sizes[i], &crc), "ICRC of %u bytes",
				    sizes[i]);
		icrc = wp_crc_gbps(wp_do_icrc, a, sizes[i]);
		mc = wp_memcpy_gbps(b, a, sizes[i]);
		plain = wp_crc_gbps(wp_do_crc32, a, sizes[i]);
		copy = wp_crc_gbps(wp_do_copy_crc, a, sizes[i]);
		printf("wire_perf: %8u %10.2f %12.2f %12.2f %16.2f %15.2f\n", sizes[i], icrc, mc,
		       icrc / mc, plain, copy);
	}
	return TEST_SUCCESS;
}

static int
test_wire_perf(void)
{
	struct rte_mempool *mp;
	uint8_t *a, *b;
	unsigned int i;
	int rc;

	for (i = 0; i < RTE_DIM(wp_payload); i++)
		wp_payload[i] = (uint8_t)i;
	/* One segment holds the 4 KiB frame, so the figures are not about chaining. */
	mp = rte_pktmbuf_pool_create("wire_perf", 2 * WP_BURST - 1, 0, 0,
				     RTE_PKTMBUF_HEADROOM + 8192, SOCKET_ID_ANY);
	a = rte_malloc("wire_perf_a", WP_BUF_SIZE, 64);
	b = rte_malloc("wire_perf_b", WP_BUF_SIZE, 64);
	if (mp == NULL || a == NULL || b == NULL) {
		rte_mempool_free(mp);
		rte_free(a);
		rte_free(b);
		TEST_ASSERT(0, "no memory: %s", rte_strerror(rte_errno));
	}
	rc = wp_run(mp, a, b);
	rte_mempool_free(mp);
	rte_free(a);
	rte_free(b);
	return rc;
}

DRNIC_TEST_REGISTER(wire_perf_autotest, DRNIC_TEST_PERF, test_wire_perf);
