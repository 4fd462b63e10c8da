/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic-perf: perftest-style benchmarks on drnic, printed next to floors
 * measured in the same run on the same cores.
 *
 *   drnic-perf [loopback]   the main job: floors, write_lat 2 B, write_bw
 *                           64 KiB and 64 B, and a figure/floor/ratio table
 *   drnic-perf floor        the floors alone: rte_ring ping-pong, memcpy
 *   drnic-perf write_lat [-s size] [-n iters] [-I inline] [--inline]
 *   drnic-perf write_bw  [-s size] [-n iters] [-t depth] [-Q cq_mod] [--inline]
 *   drnic-perf qp_scale  [-q qps]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "drnic_env.h"
#include "perf_floor.h"
#include "perf_rdma.h"
#include "perf_stats.h"

#define PERF_RING_ITERS 100000

struct perf_floors {
	double ring_rtt_ns;       /* median rte_ring SP/SC round trip */
	double memcpy_64k_gbps;   /* cache-hot rte_memcpy at 64 KiB */
	double memcpy_64_gbps;    /* cache-hot rte_memcpy at 64 B */
};

/* Must run before any device opens: the engine lcore is the ring's peer. */
static int
perf_measure_floors(struct perf_floors *f, int verbose)
{
	unsigned int peer = rte_get_next_lcore(-1, 1, 0);
	struct perf_lat lat;
	uint64_t *samples;
	int rc;

	if (peer >= RTE_MAX_LCORE) {
		fprintf(stderr, "drnic-perf: floors need two lcores\n");
		return -EINVAL;
	}
	samples = calloc(PERF_RING_ITERS, sizeof(*samples));
	if (samples == NULL)
		return -ENOMEM;
	rc = perf_floor_ring_rtt(peer, samples, PERF_RING_ITERS);
	if (rc == 0)
		rc = perf_lat_compute(samples, PERF_RING_ITERS, 1.0, rte_get_tsc_hz(), &lat);
	free(samples);
	if (rc != 0)
		return rc;
	f->ring_rtt_ns = lat.typical_us * 1e3;
	f->memcpy_64k_gbps = perf_floor_memcpy_gbps(65536, 1);
	f->memcpy_64_gbps = perf_floor_memcpy_gbps(64, 1);
	if (verbose) {
		printf("floor: rte_ring SP/SC ping-pong lcore %u <-> %u: round trip median %.0f ns"
		       " (p99 %.0f ns)\n", rte_lcore_id(), peer, f->ring_rtt_ns, lat.p99_us * 1e3);
		printf("floor: memcpy 64 B cache-hot %.1f GB/s; 4 KiB %.1f GB/s; 64 KiB %.1f GB/s;"
		       " 64 KiB from DRAM %.1f GB/s\n", f->memcpy_64_gbps,
		       perf_floor_memcpy_gbps(4096, 1), f->memcpy_64k_gbps,
		       perf_floor_memcpy_gbps(65536, 0));
	}
	return 0;
}

static int
perf_run_lat(const struct perf_opts *o, struct perf_lat *lat, int print)
{
	int rc = perf_write_lat(o, lat);

	if (rc != 0) {
		fprintf(stderr, "drnic-perf: write_lat failed: %s\n", strerror(-rc));
		return rc;
	}
	if (print) {
		printf("\n RDMA_Write Latency Test (loopback, %s progress)\n",
		       o->inline_progress ? "inline" : "dedicated engine");
		perf_lat_print_header(stdout);
		perf_lat_print_row(stdout, o->size, o->iters, lat);
	}
	return 0;
}

static int
perf_run_bw(const struct perf_opts *o, struct perf_bw *bw, int print)
{
	int rc = perf_write_bw(o, bw);

	if (rc != 0) {
		fprintf(stderr, "drnic-perf: write_bw failed: %s\n", strerror(-rc));
		return rc;
	}
	if (print) {
		printf("\n RDMA_Write BW Test (loopback, %s progress, tx depth %u, cq_mod %u)\n",
		       o->inline_progress ? "inline" : "dedicated engine", o->tx_depth, o->cq_mod);
		perf_bw_print_header(stdout, 0);
		perf_bw_print_row(stdout, o->size, o->iters, bw->peak_mbps, bw->avg_mbps, bw->mpps, 0);
	}
	return 0;
}

/* The main job: every figure beside its floor from this same run. */
static int
perf_cmd_loopback(struct perf_opts *o)
{
	struct perf_floors f;
	struct perf_lat lat;
	struct perf_bw bw64k, bw64;
	struct perf_opts lo = *o, bo = *o, mo = *o;
	int rc;

	rc = perf_measure_floors(&f, 1);
	if (rc != 0)
		return rc;
	lo.size = 2;
	lo.iters = o->iters ? o->iters : 10000;
	bo.size = 65536;
	bo.iters = o->iters ? o->iters : 20000;
	mo.size = 64;
	mo.iters = o->iters ? o->iters * 20 : 400000;
	if (perf_run_lat(&lo, &lat, 1) || perf_run_bw(&bo, &bw64k, 1) || perf_run_bw(&mo, &bw64, 1))
		return -EIO;

	printf("\n drnic against its floors (same run, medians)\n");
	printf(" %-34s %14s %22s %8s\n", "figure", "drnic", "floor", "ratio");
	printf(" %-34s %11.0f ns %19.0f ns %7.2fx\n", "write_lat 2 B, round trip",
	       lat.typical_us * 2e3, f.ring_rtt_ns, lat.typical_us * 2e3 / f.ring_rtt_ns);
	printf(" %-34s %11.0f ns %19.0f ns %7.2fx\n", "write_lat 2 B, half round trip",
	       lat.typical_us * 1e3, f.ring_rtt_ns, lat.typical_us * 1e3 / f.ring_rtt_ns);
	printf(" %-34s %9.2f GB/s %14.2f GB/s (memcpy) %7.2f\n", "write_bw 64 KiB",
	       bw64k.avg_mbps * 1048576.0 / 1e9, f.memcpy_64k_gbps,
	       bw64k.avg_mbps * 1048576.0 / 1e9 / f.memcpy_64k_gbps);
	printf(" %-34s %9.2f Mpps\n", "write 64 B message rate", bw64.mpps);
	printf("\n(ring floor: rte_ring SP/SC round trip between the two lcores the app and the\n"
	       " engine run on; memcpy: cache-hot rte_memcpy of the same size)\n");
	return 0;
}

static void
perf_usage(void)
{
	fprintf(stderr,
		"usage: drnic-perf [loopback|floor|write_lat|write_bw|qp_scale] [options]\n"
		"  -s SIZE   message size          -n ITERS  iterations\n"
		"  -t DEPTH  tx depth (bw)         -Q N      one signaled WR every N (bw)\n"
		"  -I BYTES  inline up to BYTES    -m MTU    path MTU (256..4096)\n"
		"  -q QPS    QPs (qp_scale)        --inline  inline progress (no engine lcore)\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "inline", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_opts o = {
		.tx_depth = 128, .cq_mod = 100, .inline_size = 220, .mtu = 4096, .nb_qps = 16384,
	};
	struct drnic_env_opts eo = { .name = "drnic-perf", .mem_mb = 1024 };
	struct drnic_env_info info;
	const char *cmd = "loopback";
	int c, rc;

	if (argc > 1 && argv[1][0] != '-') {
		cmd = argv[1];
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	while ((c = getopt_long(argc, argv, "s:n:t:Q:I:m:q:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o.size = strtoull(optarg, NULL, 0); break;
		case 'n': o.iters = strtoull(optarg, NULL, 0); break;
		case 't': o.tx_depth = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'Q': o.cq_mod = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'I': o.inline_size = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'm': o.mtu = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'q': o.nb_qps = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'i': o.inline_progress = true; break;
		case 'h': perf_usage(); return 0;
		default: perf_usage(); return 2;
		}
	}
	rc = drnic_env_init(&eo, &info);
	if (rc < 0) {
		fprintf(stderr, "drnic-perf: EAL start failed: %s\n", strerror(-rc));
		return 1;
	}
	printf("EAL: %s\n", info.eal_args);
	printf("memory: %s%s; app thread on lcore %u\n", info.hugepages ? "hugepages" : "no hugepages: ",
	       info.hugepages ? "" : info.reason, rte_lcore_id());

	if (strcmp(cmd, "loopback") == 0) {
		rc = perf_cmd_loopback(&o);
	} else if (strcmp(cmd, "floor") == 0) {
		struct perf_floors f;

		rc = perf_measure_floors(&f, 1);
	} else if (strcmp(cmd, "write_lat") == 0) {
		struct perf_lat lat;

		o.size = o.size ? o.size : 2;
		o.iters = o.iters ? o.iters : 1000;
		rc = perf_run_lat(&o, &lat, 1);
	} else if (strcmp(cmd, "write_bw") == 0) {
		struct perf_bw bw;

		o.size = o.size ? o.size : 65536;
		o.iters = o.iters ? o.iters : 5000;
		rc = perf_run_bw(&o, &bw, 1);
	} else if (strcmp(cmd, "qp_scale") == 0) {
		double secs, per_qp;

		rc = perf_qp_scale(&o, &secs, &per_qp);
		if (rc == 0)
			printf("qp_scale: %u QPs created in %.3f s (%.2f us each), %.0f bytes of"
			       " hugepage memory per QP (max_send_wr = max_recv_wr = %u)\n",
			       o.nb_qps, secs, secs * 1e6 / o.nb_qps, per_qp, o.tx_depth ? o.tx_depth : 64);
	} else {
		perf_usage();
		rc = -EINVAL;
	}
	drnic_env_fini();
	return rc == 0 ? 0 : 1;
}
