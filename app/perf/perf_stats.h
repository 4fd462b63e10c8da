/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_STATS_H
#define PERF_STATS_H

/*
 * Latency statistics the way perftest reports them: samples sorted, the two
 * highest dropped, t_typical is the median.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct perf_lat {
	size_t n;            /* samples kept (after dropping the two highest) */
	double min_us;
	double max_us;
	double typical_us;   /* median */
	double avg_us;
	double stdev_us;
	double p99_us;
	double p999_us;
};

/*
 * Sorts @samples (TSC cycles) in place and fills @out; each sample is divided
 * by @divisor first (2 for half round trips). Returns 0, or -EINVAL when fewer
 * than 3 samples are given.
 */
int perf_lat_compute(uint64_t *samples, size_t n, double divisor, uint64_t tsc_hz,
		     struct perf_lat *out);

/* perftest's latency header and one row. */
void perf_lat_print_header(FILE *f);
void perf_lat_print_row(FILE *f, uint64_t bytes, uint64_t iters, const struct perf_lat *l);

/* perftest's bandwidth header and one row; @gbits prints Gb/sec instead of MB/sec. */
void perf_bw_print_header(FILE *f, int gbits);
void perf_bw_print_row(FILE *f, uint64_t bytes, uint64_t iters, double peak_mbps,
		       double avg_mbps, double msg_rate_mpps, int gbits);

/* Median of @n doubles (sorts in place). */
double perf_median(double *v, size_t n);

#endif
