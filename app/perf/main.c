/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic-perf: perftest-style benchmarks on drnic, printed next to the floors
 * measured in the same run.
 *
 *   drnic-perf floor        the floors alone: rte_ring ping-pong, memcpy
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "drnic_env.h"
#include "perf_floor.h"
#include "perf_stats.h"

static int
perf_cmd_floor(void)
{
	static const size_t sizes[] = { 64, 4096, 65536 };
	const size_t iters = 100000;
	unsigned int peer = rte_get_next_lcore(-1, 1, 0);
	uint64_t *samples;
	struct perf_lat lat;
	size_t i;
	int rc;

	if (peer >= RTE_MAX_LCORE) {
		fprintf(stderr, "drnic-perf: the ring floor needs two lcores (-l 0-1)\n");
		return 1;
	}
	samples = calloc(iters, sizeof(*samples));
	if (samples == NULL)
		return 1;
	rc = perf_floor_ring_rtt(peer, samples, iters);
	if (rc == 0)
		rc = perf_lat_compute(samples, iters, 1.0, rte_get_tsc_hz(), &lat);
	free(samples);
	if (rc != 0) {
		fprintf(stderr, "drnic-perf: ring floor failed: %s\n", strerror(-rc));
		return 1;
	}
	printf("floor: rte_ring SP/SC ping-pong lcore %u <-> %u: round trip median %.0f ns "
	       "(p99 %.0f ns, %zu samples)\n", rte_lcore_id(), peer, lat.typical_us * 1e3,
	       lat.p99_us * 1e3, lat.n);
	for (i = 0; i < RTE_DIM(sizes); i++)
		printf("floor: memcpy %6zu B cache-hot %.1f GB/s\n", sizes[i],
		       perf_floor_memcpy_gbps(sizes[i], 1));
	printf("floor: memcpy  65536 B from DRAM %.1f GB/s\n", perf_floor_memcpy_gbps(65536, 0));
	return 0;
}

static void
perf_usage(void)
{
	fprintf(stderr, "usage: drnic-perf floor\n");
}

int
main(int argc, char **argv)
{
	struct drnic_env_opts opts = { .name = "drnic-perf" };
	struct drnic_env_info info;
	int rc;

	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		perf_usage();
		return argc < 2 ? 2 : 0;
	}
	rc = drnic_env_init(&opts, &info);
	if (rc < 0) {
		fprintf(stderr, "drnic-perf: EAL start failed: %s\n", strerror(-rc));
		return 1;
	}
	printf("EAL: %s\n", info.eal_args);
	printf("memory: %s%s\n", info.hugepages ? "hugepages" : "no hugepages: ",
	       info.hugepages ? "" : info.reason);
	if (strcmp(argv[1], "floor") == 0)
		rc = perf_cmd_floor();
	else {
		perf_usage();
		rc = 2;
	}
	drnic_env_fini();
	return rc;
}
