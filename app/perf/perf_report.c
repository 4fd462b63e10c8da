/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_report.h"

#define REP_MAX 512
#define RTE_DIM_REP(a) (sizeof(a) / sizeof((a)[0]))

struct rep_info { char key[32]; char value[160]; };
struct rep_floor { char name[32]; double value; char unit[12]; char what[96]; };
struct rep_lat { char test[24]; uint64_t bytes, iters; struct perf_lat l; };
struct rep_bw { char test[24]; char variant[48]; uint64_t bytes, iters; unsigned int qps;
		struct perf_bw b; };
struct rep_memcpy { uint64_t bytes; double gbps; };
struct rep_cmp { char figure[64]; double value; char unit[12]; char floor[48];
		 double floor_value; char floor_unit[12]; double ratio; char target[48]; int met; };

static struct rep_info infos[64];
static unsigned int nb_infos;
static struct rep_floor floors[64];
static unsigned int nb_floors;
static struct rep_lat lats[REP_MAX];
static unsigned int nb_lats;
static struct rep_bw bws[REP_MAX];
static unsigned int nb_bws;
static struct rep_memcpy mcs[64];
static unsigned int nb_mcs;
static struct rep_cmp cmps[64];
static unsigned int nb_cmps;

void
perf_rep_info(const char *key, const char *fmt, ...)
{
	va_list ap;

	if (nb_infos >= RTE_DIM_REP(infos))
		return;
	snprintf(infos[nb_infos].key, sizeof(infos[0].key), "%s", key);
	va_start(ap, fmt);
	vsnprintf(infos[nb_infos].value, sizeof(infos[0].value), fmt, ap);
	va_end(ap);
	nb_infos++;
}

void
perf_rep_floor(const char *name, double value, const char *unit, const char *what)
{
	unsigned int i;

	for (i = 0; i < nb_floors; i++)
		if (strcmp(floors[i].name, name) == 0)
			break;
	if (i == RTE_DIM_REP(floors))
		return;
	snprintf(floors[i].name, sizeof(floors[i].name), "%s", name);
	floors[i].value = value;
	snprintf(floors[i].unit, sizeof(floors[i].unit), "%s", unit);
	snprintf(floors[i].what, sizeof(floors[i].what), "%s", what);
	if (i == nb_floors)
		nb_floors++;
}

double
perf_rep_floor_get(const char *name)
{
	unsigned int i;

	for (i = 0; i < nb_floors; i++)
		if (strcmp(floors[i].name, name) == 0)
			return floors[i].value;
	return -1.0;
}

void
perf_rep_lat(const char *test, uint64_t bytes, uint64_t iters, const struct perf_lat *l)
{
	struct rep_lat *r;

	if (nb_lats >= REP_MAX)
		return;
	r = &lats[nb_lats++];
	snprintf(r->test, sizeof(r->test), "%s", test);
	r->bytes = bytes;
	r->iters = iters;
	r->l = *l;
}

void
perf_rep_bw(const char *test, uint64_t bytes, uint64_t iters, unsigned int qps,
	    const char *variant, const struct perf_bw *b)
{
	struct rep_bw *r;

	if (nb_bws >= REP_MAX)
		return;
	r = &bws[nb_bws++];
	snprintf(r->test, sizeof(r->test), "%s", test);
	snprintf(r->variant, sizeof(r->variant), "%s", variant ? variant : "");
	r->bytes = bytes;
	r->iters = iters;
	r->qps = qps;
	r->b = *b;
}

void
perf_rep_memcpy(uint64_t bytes, double gbps)
{
	if (nb_mcs >= RTE_DIM_REP(mcs))
		return;
	mcs[nb_mcs].bytes = bytes;
	mcs[nb_mcs++].gbps = gbps;
}

void
perf_rep_compare(const char *figure, double value, const char *unit, const char *floor,
		 double floor_value, const char *floor_unit, double ratio, const char *target,
		 int met)
{
	struct rep_cmp *c;

	if (nb_cmps >= RTE_DIM_REP(cmps))
		return;
	c = &cmps[nb_cmps++];
	snprintf(c->figure, sizeof(c->figure), "%s", figure);
	c->value = value;
	snprintf(c->unit, sizeof(c->unit), "%s", unit);
	snprintf(c->floor, sizeof(c->floor), "%s", floor);
	c->floor_value = floor_value;
	snprintf(c->floor_unit, sizeof(c->floor_unit), "%s", floor_unit);
	c->ratio = ratio;
	snprintf(c->target, sizeof(c->target), "%s", target ? target : "");
	c->met = met;
}

void
perf_rep_print_compare(FILE *f)
{
	unsigned int i;

	if (nb_cmps == 0)
		return;
	fprintf(f, "\n drnic against its floors (same run, same cores; medians)\n");
	fprintf(f, " %-38s %14s   %-30s %12s %8s   %s\n", "figure", "drnic", "floor", "", "ratio",
		"target");
	for (i = 0; i < nb_cmps; i++) {
		const struct rep_cmp *c = &cmps[i];
		char v[32], fv[32], t[80];

		snprintf(v, sizeof(v), "%.2f %s", c->value, c->unit);
		if (c->floor_value >= 0)
			snprintf(fv, sizeof(fv), "%.2f %s", c->floor_value, c->floor_unit);
		else
			snprintf(fv, sizeof(fv), "-");
		snprintf(t, sizeof(t), "%s%s", c->target,
			 c->met < 0 ? "" : c->met ? "  met" : "  MISSED");
		fprintf(f, " %-38s %14s   %-30s %12s %7.2fx   %s\n", c->figure, v, c->floor, fv,
			c->ratio, t);
	}
}

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void
perf_rep_json(FILE *f)
{
	unsigned int i;

	fprintf(f, "{\n  \"info\": {");
	for (i = 0; i < nb_infos; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		json_str(f, infos[i].key);
		fprintf(f, ": ");
		json_str(f, infos[i].value);
	}
	fprintf(f, "\n  },\n  \"floors\": [");
	for (i = 0; i < nb_floors; i++) {
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_str(f, floors[i].name);
		fprintf(f, ", \"value\": %.6g, \"unit\": ", floors[i].value);
		json_str(f, floors[i].unit);
		fprintf(f, ", \"what\": ");
		json_str(f, floors[i].what);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ],\n  \"latency\": [");
	for (i = 0; i < nb_lats; i++) {
		const struct rep_lat *r = &lats[i];

		fprintf(f, "%s\n    {\"test\": \"%s\", \"bytes\": %" PRIu64 ", \"iterations\": %"
			PRIu64 ", \"t_min_us\": %.3f, \"t_max_us\": %.3f, \"t_typical_us\": %.3f,"
			" \"t_avg_us\": %.3f, \"t_stdev_us\": %.3f, \"p99_us\": %.3f, \"p99_9_us\": %.3f}",
			i ? "," : "", r->test, r->bytes, r->iters, r->l.min_us, r->l.max_us,
			r->l.typical_us, r->l.avg_us, r->l.stdev_us, r->l.p99_us, r->l.p999_us);
	}
	fprintf(f, "\n  ],\n  \"bandwidth\": [");
	for (i = 0; i < nb_bws; i++) {
		const struct rep_bw *r = &bws[i];

		fprintf(f, "%s\n    {\"test\": \"%s\", \"variant\": \"%s\", \"bytes\": %" PRIu64
			", \"iterations\": %" PRIu64 ", \"qps\": %u, \"bw_peak_MBps\": %.2f,"
			" \"bw_avg_MBps\": %.2f, \"msg_rate_Mpps\": %.6f, \"seconds\": %.4f,"
			" \"bytes_per_qp\": %.0f}",
			i ? "," : "", r->test, r->variant, r->bytes, r->iters, r->qps, r->b.peak_mbps,
			r->b.avg_mbps, r->b.mpps, r->b.seconds, r->b.bytes_per_qp);
	}
	fprintf(f, "\n  ],\n  \"memcpy\": [");
	for (i = 0; i < nb_mcs; i++)
		fprintf(f, "%s\n    {\"bytes\": %" PRIu64 ", \"GBps\": %.3f}", i ? "," : "",
			mcs[i].bytes, mcs[i].gbps);
	fprintf(f, "\n  ],\n  \"compare\": [");
	for (i = 0; i < nb_cmps; i++) {
		const struct rep_cmp *c = &cmps[i];

		fprintf(f, "%s\n    {\"figure\": ", i ? "," : "");
		json_str(f, c->figure);
		fprintf(f, ", \"value\": %.6g, \"unit\": \"%s\", \"floor\": ", c->value, c->unit);
		json_str(f, c->floor);
		fprintf(f, ", \"floor_value\": %.6g, \"floor_unit\": \"%s\", \"ratio\": %.4f,"
			" \"target\": ", c->floor_value, c->floor_unit, c->ratio);
		json_str(f, c->target);
		fprintf(f, ", \"met\": %s}", c->met < 0 ? "null" : c->met ? "true" : "false");
	}
	fprintf(f, "\n  ]\n}\n");
}

static FILE *
rep_open(const char *dir, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	return fopen(path, "w");
}

enum { REP_PLOT_LAT = 1, REP_PLOT_BW = 2 };

/* A bandwidth line's title: the test, and its variant when it has one. */
static void
rep_bw_key(const struct rep_bw *r, char *key, size_t len)
{
	if (r->variant[0] != '\0')
		snprintf(key, len, "%s (%s)", r->test, r->variant);
	else
		snprintf(key, len, "%s", r->test);
}

/*
 * gnuplot: latency percentiles and bandwidth (with memcpy) against size.
 * Returns the plots written (REP_PLOT_*), or -errno; PNGs of an earlier run
 * in @dir are removed first, so what is there is this run's.
 */
static int
rep_plots(const char *dir, FILE *log)
{
	char path[512], tests[16][24], bw_keys[16][24 + 48 + 4], line[256];
	unsigned int i, t, nt = 0;
	int plots = 0;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/latency.png", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bandwidth.png", dir);
	unlink(path);
	if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
		fprintf(log, "plots: gnuplot not installed (apt-get install gnuplot-nox); no PNGs\n");
		return 0;
	}
	f = rep_open(dir, "plots.gp", path, sizeof(path));
	if (f == NULL)
		return -errno;
	fprintf(f, "set terminal pngcairo size 1100,700 noenhanced font 'Sans,11'\n"
		   "set logscale x 2\nset format x '%%.0b%%BB'\nset grid\nset key top left\n"
		   "set xlabel 'message size (bytes)'\n");
	/* Latency: one data block per test. */
	for (i = 0; i < nb_lats; i++) {
		for (t = 0; t < nt; t++)
			if (strcmp(tests[t], lats[i].test) == 0)
				break;
		if (t == nt && nt < 16)
			snprintf(tests[nt++], sizeof(tests[0]), "%.23s", lats[i].test);
	}
	if (nt > 0) {
		for (t = 0; t < nt; t++) {
			fprintf(f, "$lat%u << EOD\n", t);
			for (i = 0; i < nb_lats; i++)
				if (strcmp(lats[i].test, tests[t]) == 0)
					fprintf(f, "%" PRIu64 " %.4f %.4f %.4f %.4f\n", lats[i].bytes,
						lats[i].l.typical_us, lats[i].l.p99_us,
						lats[i].l.p999_us, lats[i].l.min_us);
			fprintf(f, "EOD\n");
		}
		fprintf(f, "set output '%s/latency.png'\nset logscale y 10\n"
			   "set ylabel 'latency (usec; half round trip for write/send)'\n"
			   "set title 'drnic latency percentiles against message size'\nplot ", dir);
		for (t = 0; t < nt; t++)
			fprintf(f, "%s$lat%u using 1:2 with linespoints lw 2 title '%s median', "
				   "$lat%u using 1:3 with linespoints dt 2 title '%s p99', "
				   "$lat%u using 1:4 with linespoints dt 3 title '%s p99.9'",
				t ? ", " : "", t, tests[t], t, tests[t], t, tests[t]);
		if (perf_rep_floor_get("ring_rtt_ns") > 0)
			fprintf(f, ", %.4f with lines lc rgb 'black' dt 4 title 'rte_ring round trip'",
				perf_rep_floor_get("ring_rtt_ns") / 1e3);
		fprintf(f, "\nunset logscale y\n");
		plots |= REP_PLOT_LAT;
	}
	/* Bandwidth: per test and variant, GB/s, memcpy line. Scale runs are
	 * not size sweeps: they are left out. */
	nt = 0;
	for (i = 0; i < nb_bws; i++) {
		char key[24 + 48 + 4];

		if (strncmp(bws[i].variant, "scale", 5) == 0)
			continue;
		rep_bw_key(&bws[i], key, sizeof(key));
		for (t = 0; t < nt; t++)
			if (strcmp(bw_keys[t], key) == 0)
				break;
		if (t == nt && nt < 16)
			snprintf(bw_keys[nt++], sizeof(bw_keys[0]), "%s", key);
	}
	if (nt > 0 || nb_mcs > 0) {
		for (t = 0; t < nt; t++) {
			fprintf(f, "$bw%u << EOD\n", t);
			for (i = 0; i < nb_bws; i++) {
				char key[24 + 48 + 4];

				if (strncmp(bws[i].variant, "scale", 5) == 0)
					continue;
				rep_bw_key(&bws[i], key, sizeof(key));
				if (strcmp(key, bw_keys[t]) == 0)
					fprintf(f, "%" PRIu64 " %.4f\n", bws[i].bytes,
						bws[i].b.avg_mbps * 1048576.0 / 1e9);
			}
			fprintf(f, "EOD\n");
		}
		fprintf(f, "$memcpy << EOD\n");
		for (i = 0; i < nb_mcs; i++)
			fprintf(f, "%" PRIu64 " %.4f\n", mcs[i].bytes, mcs[i].gbps);
		fprintf(f, "EOD\n");
		fprintf(f, "set output '%s/bandwidth.png'\nset logscale y 10\n"
			   "set ylabel 'GB/s (1e9 bytes/s)'\n"
			   "set title 'drnic bandwidth against message size (memcpy: same-run floor)'\n"
			   "plot ", dir);
		for (t = 0; t < nt; t++)
			fprintf(f, "%s$bw%u using 1:2 with linespoints lw 2 title '%s'", t ? ", " : "", t,
				bw_keys[t]);
		if (nb_mcs > 0)
			fprintf(f, "%s$memcpy using 1:2 with linespoints lc rgb 'black' dt 2 "
				   "title 'memcpy (cache-hot)'", nt ? ", " : "");
		fprintf(f, "\n");
		plots |= REP_PLOT_BW;
	}
	fclose(f);
	/* gnuplot's messages go where the tables go: stdout may be the JSON. */
	snprintf(path, sizeof(path), "gnuplot '%s/plots.gp' 2>&1", dir);
	fflush(log);
	f = popen(path, "r");
	if (f == NULL) {
		fprintf(log, "plots: cannot run gnuplot: %s\n", strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f) != NULL)
		fprintf(log, "plots: gnuplot: %s", line);
	rc = pclose(f);
	if (rc != 0) {
		fprintf(log, "plots: gnuplot failed (%d)\n", rc);
		return -EIO;
	}
	return plots;
}

int
perf_rep_write(const char *dir, FILE *log)
{
	char path[512];
	unsigned int i;
	int plots;
	FILE *f;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -errno;
	f = rep_open(dir, "results.json", path, sizeof(path));
	if (f == NULL)
		return -errno;
	perf_rep_json(f);
	fclose(f);

	f = rep_open(dir, "latency.csv", path, sizeof(path));
	if (f == NULL)
		return -errno;
	fprintf(f, "test,bytes,iterations,t_min_us,t_max_us,t_typical_us,t_avg_us,t_stdev_us,"
		   "p99_us,p99_9_us\n");
	for (i = 0; i < nb_lats; i++)
		fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
			lats[i].test, lats[i].bytes, lats[i].iters, lats[i].l.min_us,
			lats[i].l.max_us, lats[i].l.typical_us, lats[i].l.avg_us,
			lats[i].l.stdev_us, lats[i].l.p99_us, lats[i].l.p999_us);
	fclose(f);

	f = rep_open(dir, "bandwidth.csv", path, sizeof(path));
	if (f == NULL)
		return -errno;
	fprintf(f, "test,variant,bytes,iterations,qps,bw_peak_MBps,bw_avg_MBps,msg_rate_Mpps,"
		   "seconds,bytes_per_qp,memcpy_GBps\n");
	for (i = 0; i < nb_bws; i++) {
		double mc = -1;
		unsigned int k;

		for (k = 0; k < nb_mcs; k++)
			if (mcs[k].bytes == bws[i].bytes)
				mc = mcs[k].gbps;
		fprintf(f, "%s,\"%s\",%" PRIu64 ",%" PRIu64 ",%u,%.2f,%.2f,%.6f,%.4f,%.0f,%.3f\n",
			bws[i].test, bws[i].variant, bws[i].bytes, bws[i].iters, bws[i].qps,
			bws[i].b.peak_mbps, bws[i].b.avg_mbps, bws[i].b.mpps, bws[i].b.seconds,
			bws[i].b.bytes_per_qp, mc);
	}
	fclose(f);

	f = rep_open(dir, "floors.csv", path, sizeof(path));
	if (f == NULL)
		return -errno;
	fprintf(f, "floor,value,unit,what\n");
	for (i = 0; i < nb_floors; i++)
		fprintf(f, "%s,%.4f,%s,\"%s\"\n", floors[i].name, floors[i].value, floors[i].unit,
			floors[i].what);
	for (i = 0; i < nb_mcs; i++)
		fprintf(f, "memcpy_%" PRIu64 ",%.4f,GB/s,\"cache-hot rte_memcpy\"\n", mcs[i].bytes,
			mcs[i].gbps);
	fclose(f);

	f = rep_open(dir, "compare.csv", path, sizeof(path));
	if (f == NULL)
		return -errno;
	fprintf(f, "figure,value,unit,floor,floor_value,floor_unit,ratio,target,met\n");
	for (i = 0; i < nb_cmps; i++)
		fprintf(f, "\"%s\",%.4f,%s,\"%s\",%.4f,%s,%.4f,\"%s\",%s\n", cmps[i].figure,
			cmps[i].value, cmps[i].unit, cmps[i].floor, cmps[i].floor_value,
			cmps[i].floor_unit, cmps[i].ratio, cmps[i].target,
			cmps[i].met < 0 ? "" : cmps[i].met ? "yes" : "no");
	fclose(f);
	fprintf(log, "wrote %s/{results.json,latency.csv,bandwidth.csv,floors.csv,compare.csv}\n",
		dir);
	plots = rep_plots(dir, log);
	if (plots > 0)
		fprintf(log, "wrote %s%s%s%s%s (gnuplot script %s/plots.gp)\n",
			plots & REP_PLOT_LAT ? dir : "", plots & REP_PLOT_LAT ? "/latency.png" : "",
			plots == (REP_PLOT_LAT | REP_PLOT_BW) ? ", " : "",
			plots & REP_PLOT_BW ? dir : "", plots & REP_PLOT_BW ? "/bandwidth.png" : "",
			dir);
	return 0;
}
