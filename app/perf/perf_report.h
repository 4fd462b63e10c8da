/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_REPORT_H
#define PERF_REPORT_H

/*
 * Everything one run measured, kept to print the side-by-side table and to
 * write CSV, JSON and gnuplot PNGs at the end.
 */
#include <stdint.h>
#include <stdio.h>

#include "perf_rdma.h"
#include "perf_stats.h"

/* A key/value about the run (cores, memory, link). */
void perf_rep_info(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A floor: e.g. ("ring_rtt", 210, "ns"). */
void perf_rep_floor(const char *name, double value, const char *unit, const char *what);
/* @return the value of floor @name, or a negative value when not measured. */
double perf_rep_floor_get(const char *name);

void perf_rep_lat(const char *test, uint64_t bytes, uint64_t iters, const struct perf_lat *l);
void perf_rep_bw(const char *test, uint64_t bytes, uint64_t iters, unsigned int qps,
		 const char *variant, const struct perf_bw *b);
/* memcpy floor at one message size (GB/s), for the bandwidth plot. */
void perf_rep_memcpy(uint64_t bytes, double gbps);

/*
 * One line of the side-by-side table: a drnic figure, its floor and the
 * ratio figure/floor; @target describes the target ("" for none) and @met is
 * 1 (met), 0 (missed) or -1 (no target).
 */
void perf_rep_compare(const char *figure, double value, const char *unit, const char *floor,
		      double floor_value, const char *floor_unit, double ratio, const char *target,
		      int met);

void perf_rep_print_compare(FILE *f);

/* The whole run as one JSON document. */
void perf_rep_json(FILE *f);

/*
 * Write DIR/results.json, DIR/latency.csv, DIR/bandwidth.csv, DIR/floors.csv,
 * DIR/compare.csv and, when gnuplot is installed, DIR/latency.png and
 * DIR/bandwidth.png. Returns 0 or a negative errno.
 */
int perf_rep_write(const char *dir, FILE *log);

#endif
