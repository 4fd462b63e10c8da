/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "perf_stats.h"

static int
perf_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
perf_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
perf_median(double *v, size_t n)
{
	if (n == 0)
		return 0.0;
	qsort(v, n, sizeof(*v), perf_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

int
perf_lat_compute(uint64_t *samples, size_t n, double divisor, uint64_t tsc_hz,
		 struct perf_lat *out)
{
	double scale, sum = 0.0, sq = 0.0;
	size_t i, keep;

	if (n < 3 || divisor <= 0.0 || tsc_hz == 0)
		return -EINVAL;
	qsort(samples, n, sizeof(*samples), perf_cmp_u64);
	keep = n - 2;  /* perftest drops the two highest samples */
	scale = 1e6 / (double)tsc_hz / divisor;
	for (i = 0; i < keep; i++)
		sum += (double)samples[i] * scale;
	out->n = keep;
	out->avg_us = sum / (double)keep;
	for (i = 0; i < keep; i++) {
		double d = (double)samples[i] * scale - out->avg_us;

		sq += d * d;
	}
	out->stdev_us = sqrt(sq / (double)keep);
	out->min_us = (double)samples[0] * scale;
	out->max_us = (double)samples[keep - 1] * scale;
	out->typical_us = (keep % 2 ? (double)samples[keep / 2]
				    : ((double)samples[keep / 2 - 1] + (double)samples[keep / 2]) / 2.0) * scale;
	out->p99_us = (double)samples[(size_t)((double)keep * 0.99)] * scale;
	out->p999_us = (double)samples[(size_t)((double)keep * 0.999)] * scale;
	return 0;
}

void
perf_lat_print_header(FILE *f)
{
	fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
		   "    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] \n");
}

void
perf_lat_print_row(FILE *f, uint64_t bytes, uint64_t iters, const struct perf_lat *l)
{
	fprintf(f, " %-7" PRIu64 " %-10" PRIu64 "     %-7.2f        %-7.2f      %-7.2f          %-7.2f"
		   "        %-7.2f          %-7.2f                 %-7.2f        \n",
		bytes, iters, l->min_us, l->max_us, l->typical_us, l->avg_us, l->stdev_us,
		l->p99_us, l->p999_us);
}

void
perf_bw_print_header(FILE *f, int gbits)
{
	fprintf(f, " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
		gbits ? "Gb/sec" : "MB/sec", gbits ? "Gb/sec" : "MB/sec");
}

void
perf_bw_print_row(FILE *f, uint64_t bytes, uint64_t iters, double peak_mbps,
		  double avg_mbps, double msg_rate_mpps, int gbits)
{
	double k = gbits ? 8.0 * 1048576.0 / 1e9 : 1.0;  /* MB/sec here is MiB/s, as perftest */

	fprintf(f, " %-10" PRIu64 " %-10" PRIu64 "       %-.2f            %-.2f              %-.6f\n",
		bytes, iters, peak_mbps * k, avg_mbps * k, msg_rate_mpps);
}
