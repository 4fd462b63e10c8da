/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/wire/wire_crc.c: wire_crc32() and wire_crc32_copy()
 * against zlib's crc32 at every length up to 1100 and around every size the
 * code switches at (16, 72, 256, block and chain multiples), at every source
 * and destination offset in a 64-byte block, chained from arbitrary values
 * and split at arbitrary points (as payload split across segments); the copy
 * writes exactly the destination range. wire_crc32_hdr_copy() (a header
 * then copied payload) the same, at every header length 0..80 around the
 * block sizes. wire_crc32_or_burst() (patterns ORed over the first 64
 * bytes, four short CRCs sharing a reduction) against zlib on masked copies.
 */
#include "lib/wire/wire_crc.c"

#include <zlib.h>

#include "ut_common.h"
#include "../wire_ut.h"

#define UT_MAX (70 * 1024)
#define UT_GUARD 128

static uint8_t ut_src[UT_MAX + 128];
static uint8_t ut_dst[UT_MAX + 128 + 2 * UT_GUARD];

static uint32_t
ut_zlib(uint32_t crc, const uint8_t *b, uint32_t len)
{
	return (uint32_t)crc32(crc, b, len);
}

/* Lengths worth a closer look: where the code changes path, +-1. */
static const uint32_t ut_edges[] = {
	0, 1, 3, 4, 5, 15, 16, 17, 63, 64, 65, 71, 72, 73, 127, 128, 129, 191, 192, 193,
	255, 256, 257, 259, 319, 320, 321, 511, 512, 513, 575, 576, 577, 1023, 1024, 1025,
	1087, 1088, 1089, 4095, 4096, 4097, 4136, 4152, 8191, 8192, 8193, 65535, 65536, 65537,
	UT_MAX,
};

static void
test_check_value(void)
{
	static const uint8_t nine[] = "123456789";
	static uint8_t d[16];

	CU_ASSERT_EQUAL(wire_crc32(0, nine, 9), 0xCBF43926);
	CU_ASSERT_EQUAL(wire_crc32_copy(0, d, nine, 9), 0xCBF43926);
	CU_ASSERT(memcmp(d, nine, 9) == 0);
	CU_ASSERT_EQUAL(wire_crc32(0, nine, 0), 0);
	CU_ASSERT_EQUAL(wire_crc32(0x12345678, nine, 0), 0x12345678);
}

/* Every length to 1100 and the edges, from several start values, at odd offsets. */
static void
test_crc_vs_zlib(void)
{
	static const uint32_t inits[] = { 0, 0xFFFFFFFF, 0x12345678, 0x80000001 };
	uint32_t len, i, off;

	ut_fill(ut_src, sizeof(ut_src));
	for (len = 0; len <= 1100; len++) {
		for (i = 0; i < RTE_DIM(inits); i++) {
			off = (len * 7 + i * 13) % 64;
			CU_ASSERT_EQUAL(wire_crc32(inits[i], ut_src + off, len),
					ut_zlib(inits[i], ut_src + off, len));
		}
	}
	for (i = 0; i < RTE_DIM(ut_edges); i++)
		for (off = 0; off < 64; off++) {
			uint32_t init = ut_rand();

			len = ut_edges[i];
			CU_ASSERT_EQUAL(wire_crc32(init, ut_src + off, len),
					ut_zlib(init, ut_src + off, len));
		}
}

/*
 * Copy and CRC at once: the CRC of the source, the bytes equal, and nothing
 * written before or after the destination range (the first block is a masked
 * store at an address before it).
 */
/* Bytes written around a copy of @len bytes to @d (@doff into ut_dst's
 * guarded area), which was filled with 0xA5. */
static uint32_t
ut_guard_bad(const uint8_t *d, uint32_t doff, uint32_t len)
{
	uint32_t i, bad = 0;

	for (i = 0; i < UT_GUARD + doff; i++)
		bad += ut_dst[i] != 0xA5;
	for (i = 0; i < UT_GUARD; i++)
		bad += d[len + i] != 0xA5;
	return bad;
}

static void
ut_copy_check(uint32_t init, uint32_t soff, uint32_t doff, uint32_t len)
{
	uint8_t *d = ut_dst + UT_GUARD + doff;

	memset(ut_dst, 0xA5, len + doff + 2 * UT_GUARD);
	CU_ASSERT_EQUAL(wire_crc32_copy(init, d, ut_src + soff, len),
			ut_zlib(init, ut_src + soff, len));
	CU_ASSERT(memcmp(d, ut_src + soff, len) == 0);
	CU_ASSERT_EQUAL(ut_guard_bad(d, doff, len), 0);
}

/* wire_crc32_hdr_copy(): the CRC of header and payload as one buffer, the
 * payload copied, nothing else written. */
static void
ut_hdr_copy_check(uint32_t hlen, uint32_t doff, uint32_t len, unsigned int *fused)
{
	static uint8_t hdr[80], both[UT_MAX + 80];
	uint8_t *d = ut_dst + UT_GUARD + doff;
	uint32_t i, total = hlen + len, pad = (64 - total % 64) % 64;

	for (i = 0; i < hlen; i++)
		hdr[i] = (uint8_t)(0x5A ^ (i * 29 + hlen));
	memcpy(both, hdr, hlen);
	memcpy(both + hlen, ut_src + 3, len);
	memset(ut_dst, 0xA5, len + doff + 2 * UT_GUARD);
	CU_ASSERT_EQUAL(wire_crc32_hdr_copy(hdr, hlen, d, ut_src + 3, len),
			ut_zlib(0, both, total));
	CU_ASSERT(memcmp(d, ut_src + 3, len) == 0);
	CU_ASSERT_EQUAL(ut_guard_bad(d, doff, len), 0);
	*fused += hlen >= 8 && pad + hlen <= 64 && total > WIRE_CRC_SHORT;
}

static void
test_hdr_copy(void)
{
	static const uint32_t lens[] = { 0, 1, 4, 63, 64, 65, 200, 255, 256, 1024, 4093, 4096,
					 4097, 8192, 65536 };
	unsigned int fused = 0;
	uint32_t h, i;

	for (h = 0; h <= 80; h++)
		for (i = 0; i < RTE_DIM(lens); i++)
			ut_hdr_copy_check(h, (h * 7 + i) % 64, lens[i], &fused);
	/* RoCE frames: 8 + 40 (IPv4, UDP, BTH) and 8 + 56 (with RETH)
	 * before 4 KiB. */
	ut_hdr_copy_check(48, 0, 4096, &fused);
	ut_hdr_copy_check(64, 0, 4096, &fused);
	printf("\n  %u of them in one fold pass\n", fused);
	CU_ASSERT(fused >= 300);
}

static void
test_copy(void)
{
	uint32_t len, i, off;

	ut_fill(ut_src, sizeof(ut_src));
	for (len = 0; len <= 1100; len++)
		ut_copy_check(ut_rand(), len % 61, (len * 3) % 64, len);
	for (i = 0; i < RTE_DIM(ut_edges); i++)
		for (off = 0; off < 64; off += 3)
			ut_copy_check(ut_rand(), off, (off * 5 + 1) % 64, ut_edges[i]);
}

/*
 * A payload gathered in pieces (as split across SGEs or segments), each
 * copied and folded into the running CRC: the same as one pass.
 */
/*
 * wire_crc32_or_burst(): each job's CRC is zlib's of its bytes with the first
 * 64 ORed with its pattern, whatever the burst's size and the mix of short
 * (four at a time) and other lengths around it.
 */
static void
test_or_burst(void)
{
	static uint8_t pats[16][192], tmp[512];
	struct wire_crc_job job[16];
	uint32_t want[16];
	unsigned int round, n, i, k, grouped = 0;

	for (i = 0; i < 16; i++)
		for (k = 64; k < 128; k++)
			pats[i][k] = ut_rand() % 3 == 0 ? (uint8_t)ut_rand() : 0;
	for (round = 0; round < 4000; round++) {
		n = round % 17;
		for (i = 0; i < n; i++) {
			uint32_t r = ut_rand() % 16, len;

			/* Mostly short (72..256), some shorter or longer. */
			len = r < 12 ? WIRE_CRC_SHORT_MIN + ut_rand() % (WIRE_CRC_SHORT -
									 WIRE_CRC_SHORT_MIN + 1) :
			      r < 14 ? ut_rand() % WIRE_CRC_SHORT_MIN :
				       WIRE_CRC_SHORT + 1 + ut_rand() % 200;
			job[i].buf = ut_src + ut_rand() % 4096;
			job[i].pat = pats[ut_rand() % 16];
			job[i].len = len;
			job[i].crc = ut_rand();
			memcpy(tmp, job[i].buf, len);
			for (k = 0; k < len && k < 64; k++)
				tmp[k] |= job[i].pat[64 + k];
			want[i] = ut_zlib(job[i].crc, tmp, len);
		}
		for (i = 0; i + 4 <= n; i += 4)
			grouped += job[i].len >= WIRE_CRC_SHORT_MIN && job[i].len <= WIRE_CRC_SHORT &&
				   job[i + 3].len >= WIRE_CRC_SHORT_MIN &&
				   job[i + 3].len <= WIRE_CRC_SHORT;
		wire_crc32_or_burst(job, n);
		for (i = 0; i < n; i++) {
			CU_ASSERT_EQUAL(job[i].crc, want[i]);
			if (job[i].crc != want[i])
				printf("\n  round %u job %u of %u: len %u\n", round, i, n,
				       job[i].len);
		}
	}
	CU_ASSERT(grouped > 1000);   /* the four-at-a-time path ran */
}

static void
test_chained_splits(void)
{
	uint32_t len, k, cut[8], n, i, crc, done;

	ut_fill(ut_src, sizeof(ut_src));
	for (k = 0; k < 600; k++) {
		len = k < 300 ? ut_rand() % 1200 : ut_rand() % 9000;
		n = 1 + ut_rand() % RTE_DIM(cut);
		for (i = 0; i < n; i++)
			cut[i] = len > 0 ? ut_rand() % (len + 1) : 0;
		/* Sort the cuts (few). */
		for (i = 1; i < n; i++) {
			uint32_t v = cut[i], j = i;

			for (; j > 0 && cut[j - 1] > v; j--)
				cut[j] = cut[j - 1];
			cut[j] = v;
		}
		crc = 0;
		done = 0;
		memset(ut_dst, 0, len + 1);
		for (i = 0; i <= n; i++) {
			uint32_t end = i < n ? cut[i] : len;

			/* Alternate copying pieces and reading them in place. */
			if (i % 2 == 0) {
				crc = wire_crc32_copy(crc, ut_dst + done, ut_src + done, end - done);
			} else {
				crc = wire_crc32(crc, ut_src + done, end - done);
				memcpy(ut_dst + done, ut_src + done, end - done);
			}
			done = end;
		}
		CU_ASSERT_EQUAL(crc, ut_zlib(0, ut_src, len));
		CU_ASSERT(memcmp(ut_dst, ut_src, len) == 0);
	}
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("wire_crc", NULL, NULL);
	CU_add_test(s, "check_value", test_check_value);
	CU_add_test(s, "crc_vs_zlib", test_crc_vs_zlib);
	CU_add_test(s, "copy", test_copy);
	CU_add_test(s, "hdr_copy", test_hdr_copy);
	CU_add_test(s, "chained_splits", test_chained_splits);
	CU_add_test(s, "or_burst", test_or_burst);
	return ut_run_all();
}
