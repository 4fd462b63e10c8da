/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_SUITE_H
#define PERF_SUITE_H

/*
 * The suites of drnic-perf, shared by the program and the perf autotests:
 * floors, the loopback main job, a size sweep and the QP/CQ scale sweep,
 * each recording into perf_report and printing the side-by-side table.
 */
#include <stdbool.h>

#include "perf_rdma.h"

struct perf_floor_opts {
	bool sockperf;          /* also run sockperf (about 1.5 s) */
	bool memcpy_sweep;      /* memcpy at each power-of-two size 2..8 MiB */
	unsigned int ring_iters;
};

/* The lcore the floors' peer runs on: the engine's (o->engine_lcore or the first worker). */
unsigned int perf_peer_lcore(const struct perf_opts *o);

/* Measure the floors (before any device opens: the engine lcore must be free). */
int perf_suite_floors(const struct perf_opts *o, const struct perf_floor_opts *fo);

/* The main job: floors, write_lat 2 B, write_bw 64 KiB, 64 B message rate, the table. */
int perf_suite_loopback(const struct perf_opts *o);

/*
 * Size sweep: write_lat and write_bw at powers of two up to @max_size
 * (latency @lat_iters, bandwidth @bw_iters per size), memcpy at each size.
 */
int perf_suite_sweep(const struct perf_opts *o, uint64_t max_size, uint64_t lat_iters,
		     uint64_t bw_iters);

/*
 * QP scale: 64 B WRITE message rate and memory per QP at each QP count of
 * @counts with the same flags per QP (o->tx_depth, post_list and cq_mod, as
 * perftest's -q), then, when @window is not 0, with @window WRs in flight in
 * all split over the QPs (cold QP state), then one CQ for all QPs against one
 * CQ per QP at @cq_counts. @msgs: messages per run (split over the QPs).
 */
int perf_suite_scale(const struct perf_opts *o, const unsigned int *counts, unsigned int n,
		     const unsigned int *cq_counts, unsigned int ncq, uint64_t msgs,
		     unsigned int window);

/*
 * SRQ against per-QP receive queues: send_bw 64 B in loopback at 1 QP and
 * @nb_qps QPs with one receive queue of o->rx_depth WRs per QP, then at
 * @nb_qps QPs with one SRQ of o->rx_depth WRs (perftest's --use-srq) on the
 * receiving end; message rate, memory per QP of each end, RNR NAKs, and the
 * ratios (with the loopback link's message rate as the floor when a second
 * lcore is free). @msgs: messages per run (split over the QPs).
 */
int perf_suite_srq(const struct perf_opts *o, unsigned int nb_qps, uint64_t msgs);

/* Print the latency/bandwidth table of one result, perftest style. */
void perf_print_lat(const struct perf_opts *o, uint64_t bytes, uint64_t iters,
		    const struct perf_lat *l, bool header);
void perf_print_bw(const struct perf_opts *o, uint64_t bytes, uint64_t iters,
		   const struct perf_bw *b, bool header, bool gbits);

#endif
