/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What registered memory with a mapping of its own costs, beside the
 * alternative (suite perf: prints, asserts only that each step worked):
 *  - drnic_reg_mr() + drnic_dereg_mr() of memory the program mapped
 *    (moved onto a memfd at its first registration: a copy, a few mmaps;
 *    mapped again without a copy after that) against the same of DPDK
 *    memory (never moved), at 64 KiB, 1 MiB and 16 MiB;
 *  - one copy into the program's memory through process_vm_writev() (what
 *    an engine without a mapping of its own would make per packet: it
 *    fails with EFAULT where a load or store faults) against memcpy()
 *    (what the engines do through the window), at 64 B, 4 KiB, 64 KiB.
 * Medians of several rounds; the ratios are the figures to read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "../rnic/rnic_fixture.h"
#include "../../../app/perf/perf_stats.h"
#include "mr_pin.h"
#include "test.h"

#define ROUNDS 9

static double
now_us(void)
{
	return (double)rte_rdtsc() * 1e6 / (double)rte_get_tsc_hz();
}

/* Median µs of a registration and deregistration of @p buf, or (buf
 * NULL) of a fresh mapping of the program's each time. */
static double
reg_us(struct drnic_pd *pd, void *buf, size_t len, bool *ok)
{
	double v[ROUNDS], t0;
	struct drnic_mr *mr;
	void *m;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		m = buf;
		if (m == NULL) {
			m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				 0);
			if (m == MAP_FAILED) {
				*ok = false;
				return 0;
			}
			memset(m, 1, len);
		}
		t0 = now_us();
		mr = drnic_reg_mr(pd, m, len, DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE);
		if (mr == NULL || drnic_dereg_mr(mr) != 0)
			*ok = false;
		v[i] = now_us() - t0;
		if (buf == NULL)
			munmap(m, len);
	}
	return perf_median(v, ROUNDS);
}

/* Median ns of one copy of @p len bytes, by memcpy() or process_vm_writev(). */
static double
copy_ns(void *dst, const void *src, size_t len, bool vm, bool *ok)
{
	enum { N = 2000 };
	double v[ROUNDS], t0;
	struct iovec l = { (void *)(uintptr_t)src, len }, r = { dst, len };
	pid_t me = getpid();
	int i, j;

	for (i = 0; i < ROUNDS; i++) {
		t0 = now_us();
		for (j = 0; j < N; j++) {
			if (vm) {
				if (process_vm_writev(me, &l, 1, &r, 1, 0) != (ssize_t)len)
					*ok = false;
			} else {
				memcpy(dst, src, len);
				__asm__ volatile("" ::: "memory");
			}
		}
		v[i] = (now_us() - t0) * 1e3 / N;
	}
	return perf_median(v, ROUNDS);
}

static int
test_perf_mr_pin(void)
{
	static const size_t regs[] = { 65536, 1u << 20, 16u << 20 };
	static const size_t copies[] = { 64, 4096, 65536 };
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE, .mr_pin = "on" };
	struct rnic_pair p;
	bool ok = true;
	unsigned int i;

	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	printf("registration + deregistration, median of %d (us): of fresh private memory\n"
	       "(moved), of the same memory again (moved already), of DPDK memory (never moved)\n"
	       "  %10s %10s %10s %10s %8s %8s\n", ROUNDS, "bytes", "moved", "again", "DPDK",
	       "ratio", "again");
	for (i = 0; i < RTE_DIM(regs); i++) {
		void *m = mmap(NULL, regs[i], PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		void *d = rte_malloc(NULL, regs[i], 4096);
		double a, b, c;

		TEST_ASSERT(m != MAP_FAILED && d != NULL, "buffers");
		memset(m, 1, regs[i]);
		memset(d, 1, regs[i]);
		a = reg_us(p.a.pd, NULL, regs[i], &ok);
		b = reg_us(p.a.pd, m, regs[i], &ok);
		c = reg_us(p.a.pd, d, regs[i], &ok);
		printf("  %10zu %10.1f %10.1f %10.1f %8.1f %8.1f\n", regs[i], a, b, c, a / c, b / c);
		munmap(m, regs[i]);
		rte_free(d);
	}
	printf("one copy into the program's memory, median of %d (ns):\n"
	       "  %10s %12s %18s %8s\n", ROUNDS, "bytes", "memcpy", "process_vm_writev",
	       "ratio");
	for (i = 0; i < RTE_DIM(copies); i++) {
		uint8_t *src = malloc(copies[i]), *dst = malloc(copies[i]);
		double a, b;

		TEST_ASSERT(src != NULL && dst != NULL, "buffers");
		memset(src, 2, copies[i]);
		memset(dst, 0, copies[i]);
		a = copy_ns(dst, src, copies[i], false, &ok);
		b = copy_ns(dst, src, copies[i], true, &ok);
		printf("  %10zu %12.1f %18.1f %8.1f\n", copies[i], a, b, b / a);
		free(src);
		free(dst);
	}
	rnic_pair_close(&p);
	TEST_ASSERT(ok, "a registration or a copy failed");
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(perf_mr_pin_autotest, DRNIC_TEST_PERF, test_perf_mr_pin);
