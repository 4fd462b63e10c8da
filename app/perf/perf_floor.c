/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "perf_floor.h"
#include "perf_stats.h"

struct floor_echo {
	struct rte_ring *ping;
	struct rte_ring *pong;
	size_t count;
};

/* The peer: returns every pointer it receives, @count of them. */
static int
floor_echo_main(void *arg)
{
	struct floor_echo *e = arg;
	size_t i;
	void *obj;

	for (i = 0; i < e->count; i++) {
		while (rte_ring_sc_dequeue(e->ping, &obj) != 0)
			rte_pause();
		while (rte_ring_sp_enqueue(e->pong, obj) != 0)
			rte_pause();
	}
	return 0;
}

int
perf_floor_ring_rtt(unsigned int peer_lcore, uint64_t *samples, size_t iters)
{
	static unsigned int seq;
	struct floor_echo e;
	char name[RTE_RING_NAMESIZE];
	const size_t warmup = 1000;
	size_t i;
	void *obj;
	int rc;

	if (peer_lcore == rte_lcore_id() || !rte_lcore_is_enabled(peer_lcore) || iters == 0)
		return -EINVAL;
	snprintf(name, sizeof(name), "floor_ping%u", seq);
	e.ping = rte_ring_create(name, 64, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "floor_pong%u", seq++);
	e.pong = rte_ring_create(name, 64, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (e.ping == NULL || e.pong == NULL) {
		rte_ring_free(e.ping);
		rte_ring_free(e.pong);
		return -ENOMEM;
	}
	e.count = iters + warmup;
	rc = rte_eal_remote_launch(floor_echo_main, &e, peer_lcore);
	if (rc != 0) {
		rte_ring_free(e.ping);
		rte_ring_free(e.pong);
		return -EINVAL;
	}
	for (i = 0; i < iters + warmup; i++) {
		uint64_t t0 = rte_rdtsc_precise();

		while (rte_ring_sp_enqueue(e.ping, (void *)(uintptr_t)(i + 1)) != 0)
			rte_pause();
		while (rte_ring_sc_dequeue(e.pong, &obj) != 0)
			rte_pause();
		if (i >= warmup)
			samples[i - warmup] = rte_rdtsc_precise() - t0;
	}
	rte_eal_wait_lcore(peer_lcore);
	rte_ring_free(e.ping);
	rte_ring_free(e.pong);
	return 0;
}

double
perf_floor_memcpy_gbps(size_t size, int hot)
{
	const size_t span = hot ? size : (size_t)512 << 20;
	const uint64_t hz = rte_get_tsc_hz();
	double runs[7];
	uint8_t *src, *dst;
	size_t r, off = 0;

	src = malloc(span);
	dst = malloc(span);
	if (src == NULL || dst == NULL || size == 0 || size > span) {
		free(src);
		free(dst);
		return 0.0;
	}
	memset(src, 0x5a, span);
	memset(dst, 0xa5, span);
	for (r = 0; r < RTE_DIM(runs); r++) {
		uint64_t bytes = 0, t0 = rte_rdtsc(), t;

		do {
			int k;

			for (k = 0; k < 64; k++) {
				rte_memcpy(dst + off, src + off, size);
				bytes += size;
				off += size;
				if (off + size > span)
					off = 0;
			}
			t = rte_rdtsc() - t0;
		} while (t < hz / 50);  /* 20 ms a run */
		runs[r] = (double)bytes / ((double)t / (double)hz) / 1e9;
	}
	free(src);
	free(dst);
	return perf_median(runs, RTE_DIM(runs));
}
