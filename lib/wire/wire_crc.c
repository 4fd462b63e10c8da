/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 (reflected, polynomial 0xEDB88320, chained like zlib's crc32) where
 * ISA-L's crc32_gzip_refl() leaves time on the table in the frame path:
 *
 *  - copy and CRC in one pass (wire_crc32_copy): the builder copied payload
 *    into the mbuf and then read it again for the ICRC, the responder read it
 *    for the ICRC and again to copy it out. Folding 64-byte blocks as they
 *    are copied reads them once: 4 KiB pieces of an L2-resident 64 KiB took
 *    88 ns against 144 ns for memcpy + ISA-L (reference VM, Zen 4), and at a
 *    64-byte aligned destination about as long as ISA-L's CRC alone;
 *  - 72..256-byte buffers (the ICRC of small frames): every lane is folded
 *    straight onto the last one in parallel and reduced once, 18-20 ns per
 *    call where ISA-L took 18-32 ns; with an OR pattern (wire_crc32_or) the
 *    ICRC's masked header fields are set in registers, so a received frame
 *    is not copied to be masked.
 *
 * Long CRC-only buffers stay with ISA-L, which folds them as fast.
 *
 * How: the buffer is taken as right-aligned in 64-byte blocks (as if zero
 * bytes preceded it; leading zeros do not change a CRC from a zero state),
 * so it ends on a block boundary and no tail is left. Blocks are folded with
 * carry-less multiplications by x^(distance) mod P, eight chains at a time on
 * long buffers, down to one 128-bit lane R congruent to the buffer modulo P;
 * R * x^32 mod P then takes two folds and a Barrett step.
 *
 * Fold constants are derived from the polynomial at load time, not written
 * out: for a 128-bit lane A (as loaded, byte 0 first, LSB of a byte its
 * highest power) S bits before lane C,
 *     A * x^S = A_hi * x^(S+64) + A_lo * x^S
 * where A_hi is the first 8 bytes (low quadword) and A_lo the next 8. A
 * carry-less product of two bit-reflected 64-bit operands comes out reflected
 * in 127 bits, one position short of a lane, so each constant is
 * x^(E-1) mod P to multiply by x^E, stored bit-reversed in the upper half of
 * its quadword.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "wire_internal.h"

#ifdef WIRE_CRC_FOLD
#include <immintrin.h>
#endif

/*
 * Buffers folded straight onto their last lane (wire_crc_short()). From 72
 * to 256 bytes wire_crc_short() took 18-20 ns where ISA-L took 18-32 ns
 * (chained calls, reference VM). With the ICRC's mask (wire_crc32_or(),
 * bursts) from 44 bytes, an ACK's length: from 44 to 71 bytes 49-54 TSC
 * ticks a call against 58-106 for the copy and ISA-L of
 * wire_crc32_or_slow(), four in a burst 24.5 ticks each against 61-109
 * (chained calls, 2026-12-07). A plain CRC of 44-71 bytes took about as
 * long either way (ISA-L 50-59 ticks), and with the short one the 64 B
 * rate lost 3% (the inlining changed): a plain CRC, with or without its
 * copy (wire_crc32(), wire_crc32_copy()), keeps ISA-L below 72 bytes.
 * Below 44 bytes ISA-L is faster (16 bytes: 32 ticks against 50).
 */
#define WIRE_CRC_SHORT_MIN WIRE_CRC_OR_MIN
#define WIRE_CRC_PLAIN_MIN 72
#define WIRE_CRC_SHORT WIRE_CRC_OR_MAX

uint32_t wire_crc_ones8;

static void __attribute__((constructor, used))
wire_crc_ones8_init(void)
{
	static const uint8_t ones[8] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };

	wire_crc_ones8 = crc32_gzip_refl(0, ones, sizeof(ones));
}

/* wire_crc32_or() through a copy: the first 64 bytes patched, the rest in place. */
static uint32_t
wire_crc32_or_slow(uint32_t crc, const void *buf, size_t len, const uint8_t pat[192])
{
	const uint8_t *b = buf;
	uint8_t head[64] = { 0 };
	size_t n = RTE_MIN(len, sizeof(head)), i;

	for (i = 0; i < n; i++)
		head[i] = b[i] | pat[64 + i];
	crc = crc32_gzip_refl(crc, head, (uint64_t)n);
	return len > n ? crc32_gzip_refl(crc, b + n, (uint64_t)(len - n)) : crc;
}

#ifdef WIRE_CRC_FOLD

#define WIRE_CRC_POLY_REFL 0xEDB88320u
#define WIRE_CRC_CHAINS 8

static uint32_t
wire_crc_rev32(uint32_t v)
{
	uint32_t r = 0;
	int i;

	for (i = 0; i < 32; i++)
		r |= ((v >> i) & 1u) << (31 - i);
	return r;
}

/* x^n mod P, with bit i the coefficient of x^i. */
static uint32_t
wire_crc_xpow(uint32_t n)
{
	uint32_t poly = wire_crc_rev32(WIRE_CRC_POLY_REFL);  /* x^32 implied */
	uint32_t r = 1;

	while (n-- > 0)
		r = (r & 0x80000000u) ? (r << 1) ^ poly : r << 1;
	return r;
}

/* The two quadword constants that fold a lane forward by @bits. */
static void
wire_crc_fold_k(uint32_t bits, uint64_t k[2])
{
	k[0] = (uint64_t)wire_crc_rev32(wire_crc_xpow(bits + 64 - 1)) << 32;
	k[1] = (uint64_t)wire_crc_rev32(wire_crc_xpow(bits - 1)) << 32;
}

/* Constants, filled by the constructor below. */
static struct {
	__m512i k_stride;    /* 8 blocks (one step of every chain) */
	__m512i k_4blk;
	__m512i k_2blk;
	__m512i k_1blk;      /* one 64-byte block */
	__m512i k_lanes;     /* lanes 0..2 onto lane 3; lane 3 zero */
	/* Final reduction, in plain bit order (bit i = x^i). */
	__m128i k96_k64;     /* x^96 mod P (low), x^64 mod P (high) */
	__m128i mu_poly;     /* floor(x^64 / P) (low, 33 bits), P (high, 33 bits) */
	__m512i iota;        /* bytes 0, 1, ... 63 */
	/* Short buffers: block k (from the end) lane l folds straight to the
	 * last lane, 4k + 3 - l lanes on; the last lane itself has zeros. */
	__m512i k_to_end[WIRE_CRC_SHORT / 64];
} wire_crc_k;

static __m512i
wire_crc_k_bcast(uint32_t bits)
{
	uint64_t k[2];

	wire_crc_fold_k(bits, k);
	return _mm512_set_epi64((long long)k[1], (long long)k[0], (long long)k[1],
				(long long)k[0], (long long)k[1], (long long)k[0],
				(long long)k[1], (long long)k[0]);
}

static void __attribute__((constructor, used))
wire_crc_init(void)
{
	uint64_t poly = (uint64_t)1 << 32 | wire_crc_rev32(WIRE_CRC_POLY_REFL);
	unsigned __int128 rem = (unsigned __int128)1 << 64;
	uint64_t l0[2], l1[2], l2[2], mu = 0;
	int i;

	wire_crc_k.k_stride = wire_crc_k_bcast(WIRE_CRC_CHAINS * 512);
	wire_crc_k.k_4blk = wire_crc_k_bcast(4 * 512);
	wire_crc_k.k_2blk = wire_crc_k_bcast(2 * 512);
	wire_crc_k.k_1blk = wire_crc_k_bcast(512);
	wire_crc_fold_k(384, l0);
	wire_crc_fold_k(256, l1);
	wire_crc_fold_k(128, l2);
	wire_crc_k.k_lanes = _mm512_set_epi64(0, 0, (long long)l2[1], (long long)l2[0],
					      (long long)l1[1], (long long)l1[0],
					      (long long)l0[1], (long long)l0[0]);
	wire_crc_k.k96_k64 = _mm_set_epi64x((long long)wire_crc_xpow(64),
					    (long long)wire_crc_xpow(96));
	/* mu = x^64 / P by long division, one quotient bit per step. */
	for (i = 64; i >= 32; i--) {
		if (rem >> i & 1) {
			rem ^= (unsigned __int128)poly << (i - 32);
			mu |= (uint64_t)1 << (i - 32);
		}
	}
	wire_crc_k.mu_poly = _mm_set_epi64x((long long)poly, (long long)mu);
	for (i = 0; i < 64; i++)
		((uint8_t *)&wire_crc_k.iota)[i] = (uint8_t)i;
	for (i = 0; i < WIRE_CRC_SHORT / 16; i++) {
		uint32_t lanes = (uint32_t)(i / 4 * 4 + 3 - i % 4);
		uint64_t *k = (uint64_t *)&wire_crc_k.k_to_end[i / 4] + 2 * (i % 4);

		if (lanes > 0)
			wire_crc_fold_k(lanes * 128, k);
	}
}

/* @a folded forward by the distance of @k, plus @b. */
static inline __m512i
wire_crc_fold(__m512i a, __m512i k, __m512i b)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00),
					 _mm512_clmulepi64_epi128(a, k, 0x11), b, 0x96);
}

/* The 128 bits of @v in reverse order (bit i to bit 127 - i). */
static inline __m128i
wire_crc_rev128(__m128i v)
{
	const __m128i bytes = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

	v = _mm_shuffle_epi8(v, bytes);
	return _mm_gf2p8affine_epi64_epi8(v, _mm_set1_epi64x(0x8040201008040201LL), 0);
}

/*
 * zlib-style CRC of a buffer congruent to the 128-bit lane @r (lane layout,
 * as loaded) ending where the buffer ends: R * x^32 mod P, by two folds and
 * a Barrett step.
 */
static inline uint32_t
wire_crc_reduce(__m128i r)
{
	__m128i t, q;

	/* Plain bit order from here: bit i is the coefficient of x^i. */
	r = wire_crc_rev128(r);
	/* R * x^32 = R_hi * x^96 + R_lo * x^32, below 96 bits. */
	t = _mm_xor_si128(_mm_clmulepi64_si128(r, wire_crc_k.k96_k64, 0x01),
			  _mm_bslli_si128(_mm_move_epi64(r), 4));
	/* Bits 64..95 times x^64 mod P, plus bits 0..63: below 64 bits. */
	t = _mm_xor_si128(_mm_clmulepi64_si128(t, wire_crc_k.k96_k64, 0x11), _mm_move_epi64(t));
	/* Barrett: H * x^32 mod P for the high half H; q = H * mu / x^32. */
	q = _mm_srli_epi64(_mm_clmulepi64_si128(_mm_srli_epi64(t, 32), wire_crc_k.mu_poly, 0x00),
			   32);
	q = _mm_xor_si128(_mm_clmulepi64_si128(q, wire_crc_k.mu_poly, 0x10), t);
	/* Back to reflected order: bits within bytes, then the bytes. */
	q = _mm_gf2p8affine_epi64_epi8(q, _mm_set1_epi64x(0x8040201008040201LL), 0);
	return ~__builtin_bswap32((uint32_t)_mm_cvtsi128_si32(q));
}

/* XOR of the four lanes of @x. */
static inline __m128i
wire_crc_xor_lanes(__m512i x)
{
	__m256i y = _mm256_xor_si256(_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64(x, 1));

	return _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
}

/* The same for a buffer whose last 64-byte block remainder is @acc. */
static inline uint32_t
wire_crc_finish(__m512i acc)
{
	__m512i x = _mm512_xor_si512(_mm512_clmulepi64_epi128(acc, wire_crc_k.k_lanes, 0x00),
				     _mm512_clmulepi64_epi128(acc, wire_crc_k.k_lanes, 0x11));

	return wire_crc_reduce(_mm_xor_si128(wire_crc_xor_lanes(x),
					     _mm512_extracti32x4_epi32(acc, 3)));
}

/*
 * Block 0 of a buffer taken as right-aligned in 64-byte blocks (see
 * wire_crc_fold_buf()), with the state on it, and in *@st1 what of the state
 * falls into block 1.
 */
static inline __attribute__((always_inline)) __m512i
wire_crc_first(uint32_t crc, const uint8_t *p, size_t pad, uint8_t *dst, __m512i *st1,
	       const uint8_t *pat)
{
	uint64_t m0 = ~(uint64_t)0 << pad;
	__m512i x, idx, state;

	/* Every dword of @state holds it, and byte i takes its byte
	 * (i - pad) % 4 (in registers: a load from the stack at an odd
	 * offset would miss store forwarding). */
	x = _mm512_maskz_loadu_epi8(m0, p);
	if (dst != NULL)
		_mm512_mask_storeu_epi8(dst, m0, x);
	/* Pattern bytes 0..63 onto buffer bytes 0..63, before the state. */
	if (pat != NULL)
		x = _mm512_or_si512(x, _mm512_loadu_si512(pat + 64 - pad));
	state = _mm512_set1_epi32((int)~crc);
	idx = _mm512_and_si512(_mm512_sub_epi8(wire_crc_k.iota, _mm512_set1_epi8((char)pad)),
			       _mm512_set1_epi8(3));
	*st1 = _mm512_maskz_shuffle_epi8(pad > 60 ? (uint64_t)0xF >> (64 - pad) : 0, state, idx);
	return _mm512_xor_si512(x, _mm512_maskz_shuffle_epi8((uint64_t)0xF << pad, state, idx));
}

/*
 * wire_crc_reduce() of the four lanes of @r at once: dword i of the result
 * is lane i's CRC.
 */
static inline __m128i
wire_crc_reduce4(__m512i r)
{
	const __m512i k = _mm512_broadcast_i32x4(wire_crc_k.k96_k64);
	const __m512i mp = _mm512_broadcast_i32x4(wire_crc_k.mu_poly);
	const __m512i bitrev = _mm512_set1_epi64(0x8040201008040201LL);
	const __m512i low_dwords = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
	const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
	__m512i t, q;

	/* As wire_crc_reduce(), lane by lane (its comments say why). */
	r = _mm512_shuffle_epi8(r, _mm512_broadcast_i32x4(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8,
								       9, 10, 11, 12, 13,
								       14, 15)));
	r = _mm512_gf2p8affine_epi64_epi8(r, bitrev, 0);
	t = _mm512_xor_si512(_mm512_clmulepi64_epi128(r, k, 0x01),
			     _mm512_bslli_epi128(_mm512_maskz_mov_epi64(0x55, r), 4));
	t = _mm512_xor_si512(_mm512_clmulepi64_epi128(t, k, 0x11), _mm512_maskz_mov_epi64(0x55, t));
	q = _mm512_srli_epi64(_mm512_clmulepi64_epi128(_mm512_srli_epi64(t, 32), mp, 0x00), 32);
	q = _mm512_xor_si512(_mm512_clmulepi64_epi128(q, mp, 0x10), t);
	q = _mm512_gf2p8affine_epi64_epi8(q, bitrev, 0);
	return _mm_xor_si128(_mm_shuffle_epi8(_mm512_castsi512_si128(
						      _mm512_permutexvar_epi32(low_dwords, q)),
					      bswap),
			     _mm_set1_epi32(-1));
}

/*
 * 16 <= @len <= WIRE_CRC_SHORT: every lane folds straight onto the last one,
 * all in parallel, so the latency is one multiplication and the reduction.
 * This is the lane the reduction takes.
 */
static inline __attribute__((always_inline)) __m128i
wire_crc_short_lane(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len,
		    const uint8_t *pat)
{
	size_t pad = (64 - len % 64) % 64, nblk = (len + pad) / 64, b;
	const uint8_t *p = src - pad;
	__m512i x, st1, acc, or1 = _mm512_setzero_si512();

	x = wire_crc_first(crc, p, pad, dst != NULL ? dst - pad : NULL, &st1, pat);
	if (pat != NULL)
		or1 = _mm512_loadu_si512(pat + 128 - pad);  /* the pattern's rest */
	acc = _mm512_setzero_si512();
	for (b = 0;; b++) {
		__m512i k = wire_crc_k.k_to_end[nblk - 1 - b];

		acc = _mm512_ternarylogic_epi64(acc, _mm512_clmulepi64_epi128(x, k, 0x00),
						_mm512_clmulepi64_epi128(x, k, 0x11), 0x96);
		if (b + 1 == nblk)
			break;
		x = _mm512_loadu_si512(p + 64 * (b + 1));
		if (dst != NULL)
			_mm512_storeu_si512(dst - pad + 64 * (b + 1), x);
		if (b == 0)
			x = _mm512_ternarylogic_epi64(x, st1, or1, 0x36);   /* (x | or1) ^ st1 */
	}
	return _mm_xor_si128(wire_crc_xor_lanes(acc), _mm512_extracti32x4_epi32(x, 3));
}

static inline __attribute__((always_inline)) uint32_t
wire_crc_short(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len, const uint8_t *pat)
{
	return wire_crc_reduce(wire_crc_short_lane(crc, dst, src, len, pat));
}

/*
 * Fold @len >= 16 bytes, copying them to @dst on the way when @dst is not
 * NULL (a constant at every call site, so each use compiles to its own
 * loop).
 *
 * The buffer is taken as if it were preceded by zero bytes up to a multiple
 * of 64 (leading zeros do not change a CRC from a zero state), so that it
 * ends on a block boundary and no tail is left: the first block is a masked
 * load (masked-out bytes are never read), and the running state, which
 * enters as an XOR on the first 4 bytes of the buffer, is loaded masked at
 * that offset too.
 */
/*
 * Blocks @i..@nblk-1 of a buffer taken as right-aligned in 64-byte blocks,
 * block b at @p + 64 b (copied to @d + 64 b when @d is not NULL), folded
 * onto @acc, which holds blocks 0..@i-1; then the CRC.
 */
static inline __attribute__((always_inline)) uint32_t
wire_crc_fold_rest(__m512i acc, uint8_t *d, const uint8_t *p, size_t i, size_t nblk)
{
	__m512i x;

	if (nblk - i >= WIRE_CRC_CHAINS) {
		__m512i a[WIRE_CRC_CHAINS];
		int c;

		/* Eight chains, the first carrying what came before. */
		for (c = 0; c < WIRE_CRC_CHAINS; c++) {
			a[c] = _mm512_loadu_si512(p + 64 * (i + c));
			if (d != NULL)
				_mm512_storeu_si512(d + 64 * (i + c), a[c]);
		}
		a[0] = wire_crc_fold(acc, wire_crc_k.k_1blk, a[0]);
		for (i += WIRE_CRC_CHAINS; i + WIRE_CRC_CHAINS <= nblk; i += WIRE_CRC_CHAINS) {
			for (c = 0; c < WIRE_CRC_CHAINS; c++) {
				x = _mm512_loadu_si512(p + 64 * (i + c));
				if (d != NULL)
					_mm512_storeu_si512(d + 64 * (i + c), x);
				a[c] = wire_crc_fold(a[c], wire_crc_k.k_stride, x);
			}
		}
		/* Chains 0..3 onto 4..7, then pairs, then one. */
		for (c = 0; c < 4; c++)
			a[c + 4] = wire_crc_fold(a[c], wire_crc_k.k_4blk, a[c + 4]);
		a[6] = wire_crc_fold(a[4], wire_crc_k.k_2blk, a[6]);
		a[7] = wire_crc_fold(a[5], wire_crc_k.k_2blk, a[7]);
		acc = wire_crc_fold(a[6], wire_crc_k.k_1blk, a[7]);
	}
	for (; i < nblk; i++) {
		x = _mm512_loadu_si512(p + 64 * i);
		if (d != NULL)
			_mm512_storeu_si512(d + 64 * i, x);
		acc = wire_crc_fold(acc, wire_crc_k.k_1blk, x);
	}
	return wire_crc_finish(acc);
}

static inline __attribute__((always_inline)) uint32_t
wire_crc_fold_buf(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t pad = (64 - len % 64) % 64, nblk = (len + pad) / 64, i = 1;
	const uint8_t *p = src - pad;
	__m512i acc, x, st1;

	acc = wire_crc_first(crc, p, pad, dst != NULL ? dst - pad : NULL, &st1, NULL);
	if (pad > 60) {
		/* The state's last bytes fall into block 1 (len >= 16: it exists). */
		x = _mm512_loadu_si512(p + 64);
		if (dst != NULL)
			_mm512_storeu_si512(dst - pad + 64, x);
		acc = wire_crc_fold(acc, wire_crc_k.k_1blk, _mm512_xor_si512(x, st1));
		i = 2;
	}
	return wire_crc_fold_rest(acc, dst != NULL ? dst - pad : NULL, p, i, nblk);
}

uint32_t
wire_crc32(uint32_t crc, const void *buf, size_t len)
{
	/* Very short buffers: ISA-L does them in fewer steps than our
	 * reduction. Long ones: our eight chains (the ICRC of a frame with a
	 * 4 KiB payload took 124 ns with ISA-L's crc32_gzip_refl, 109 ns
	 * with wire_crc_fold_buf(): wire_perf_autotest, 2026-11-30). */
	if (len < WIRE_CRC_PLAIN_MIN)
		return crc32_gzip_refl(crc, buf, (uint64_t)len);
	if (len > WIRE_CRC_SHORT)
		return wire_crc_fold_buf(crc, NULL, buf, len);
	return wire_crc_short(crc, NULL, buf, len, NULL);
}

uint32_t
wire_crc32_or(uint32_t crc, const void *buf, size_t len, const uint8_t pat[192])
{
	if (len >= WIRE_CRC_SHORT_MIN && len <= WIRE_CRC_SHORT)
		return wire_crc_short(crc, NULL, buf, len, pat);
	return wire_crc32_or_slow(crc, buf, len, pat);
}

void
wire_crc32_or_burst(struct wire_crc_job *job, unsigned int n)
{
	unsigned int i = 0;

	/* Four short ones share one reduction. */
	for (; i + 4 <= n; i += 4) {
		struct wire_crc_job *j = &job[i];
		__m512i r;
		__m128i c;
		unsigned int l;

		for (l = 0; l < 4; l++)
			if (j[l].len < WIRE_CRC_SHORT_MIN || j[l].len > WIRE_CRC_SHORT)
				break;
		if (l < 4)
			break;
		r = _mm512_castsi128_si512(wire_crc_short_lane(j[0].crc, NULL, j[0].buf, j[0].len,
							       j[0].pat));
		r = _mm512_inserti32x4(r, wire_crc_short_lane(j[1].crc, NULL, j[1].buf, j[1].len,
							      j[1].pat), 1);
		r = _mm512_inserti32x4(r, wire_crc_short_lane(j[2].crc, NULL, j[2].buf, j[2].len,
							      j[2].pat), 2);
		r = _mm512_inserti32x4(r, wire_crc_short_lane(j[3].crc, NULL, j[3].buf, j[3].len,
							      j[3].pat), 3);
		c = wire_crc_reduce4(r);
		j[0].crc = (uint32_t)_mm_extract_epi32(c, 0);
		j[1].crc = (uint32_t)_mm_extract_epi32(c, 1);
		j[2].crc = (uint32_t)_mm_extract_epi32(c, 2);
		j[3].crc = (uint32_t)_mm_extract_epi32(c, 3);
	}
	for (; i < n; i++) {
		struct wire_crc_job *j = &job[i];

		if (likely(j->len >= WIRE_CRC_SHORT_MIN && j->len <= WIRE_CRC_SHORT))
			j->crc = wire_crc_short(j->crc, NULL, j->buf, j->len, j->pat);
		else
			j->crc = wire_crc32_or_slow(j->crc, j->buf, j->len, j->pat);
	}
}

uint32_t
wire_crc32_hdr_copy(const uint8_t *hdr, size_t hlen, void *dst, const void *src, size_t len)
{
	size_t total = hlen + len, pad = (64 - total % 64) % 64;
	const uint8_t *s = (const uint8_t *)src - pad - hlen;
	uint8_t *d = (uint8_t *)dst - pad - hlen;
	uint64_t mh, mp;
	__m512i x;

	/* The header inside block 0 (it carries the state): one fold pass. */
	if (hlen < 8 || pad + hlen > 64 || total <= WIRE_CRC_SHORT)
		return wire_crc32_copy(wire_crc32(0, hdr, hlen), dst, src, len);
	mh = ~(uint64_t)0 >> (64 - hlen) << pad;
	mp = pad + hlen == 64 ? 0 : ~(uint64_t)0 << (pad + hlen);
	x = _mm512_maskz_loadu_epi8(mh, hdr - pad);
	x = _mm512_mask_loadu_epi8(x, mp, s);
	_mm512_mask_storeu_epi8(d, mp, x);
	/* The state from 0, all ones, on the stream's first 4 bytes. */
	x = _mm512_xor_si512(x, _mm512_maskz_set1_epi8((uint64_t)0xF << pad, (char)0xFF));
	return wire_crc_fold_rest(x, d, s, 1, (total + pad) / 64);
}

uint32_t
wire_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	if (len < WIRE_CRC_PLAIN_MIN) {
		memcpy(dst, src, len);
		return crc32_gzip_refl(crc, dst, (uint64_t)len);
	}
	if (len <= WIRE_CRC_SHORT)
		return wire_crc_short(crc, dst, src, len, NULL);
	return wire_crc_fold_buf(crc, dst, src, len);
}

#else /* !WIRE_CRC_FOLD: ISA-L picks the best it has for this CPU. */

uint32_t
wire_crc32_or(uint32_t crc, const void *buf, size_t len, const uint8_t pat[192])
{
	return wire_crc32_or_slow(crc, buf, len, pat);
}

uint32_t
wire_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, (uint64_t)len);
}

void
wire_crc32_or_burst(struct wire_crc_job *job, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		job[i].crc = wire_crc32_or_slow(job[i].crc, job[i].buf, job[i].len, job[i].pat);
}

uint32_t
wire_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return crc32_gzip_refl(crc, dst, (uint64_t)len);
}

uint32_t
wire_crc32_hdr_copy(const uint8_t *hdr, size_t hlen, void *dst, const void *src, size_t len)
{
	return wire_crc32_copy(crc32_gzip_refl(0, hdr, (uint64_t)hlen), dst, src, len);
}

#endif
