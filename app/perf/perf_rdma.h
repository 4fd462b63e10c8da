/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_RDMA_H
#define PERF_RDMA_H

/*
 * RDMA benchmarks over a single-process loopback pair: two drnic devices on
 * one loopback wire, one application thread driving both ends, engines as
 * configured (one dedicated engine lcore by default).
 */
#include <stdbool.h>
#include <stdint.h>

#include "drnic_verbs.h"
#include "perf_stats.h"

struct perf_opts {
	uint64_t size;          /* -s: message size */
	uint64_t iters;         /* -n: iterations */
	unsigned int tx_depth;  /* -t: outstanding WRs (bandwidth) */
	unsigned int cq_mod;    /* -Q: one signaled WR every cq_mod */
	unsigned int inline_size; /* -I: inline up to this many bytes */
	unsigned int mtu;       /* -m: path MTU in bytes */
	bool inline_progress;   /* --inline: no engine lcore */
	unsigned int nb_qps;    /* -q: QPs (qp_scale) */
};

struct perf_bw {
	double peak_mbps;       /* MiB/s, as perftest's MB/sec */
	double avg_mbps;
	double mpps;
	double seconds;
};

/* write_lat: ping-pong of RDMA WRITEs, half round trip. 0 or a negative errno. */
int perf_write_lat(const struct perf_opts *o, struct perf_lat *out);

/* write_bw: a stream of RDMA WRITEs one way. 0 or a negative errno. */
int perf_write_bw(const struct perf_opts *o, struct perf_bw *out);

/* Create o->nb_qps QPs on one device: time and hugepage memory per QP. */
int perf_qp_scale(const struct perf_opts *o, double *create_s, double *bytes_per_qp);

#endif
