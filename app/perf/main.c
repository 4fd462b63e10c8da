/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic-perf: perftest-compatible benchmarks on drnic, printed next to floors
 * measured in the same run on the same cores.
 *
 *   drnic-perf [loopback]     the main job: floors, write_lat 2 B, write_bw
 *                             64 KiB and the 64 B message rate, and a
 *                             figure/floor/ratio table
 *   drnic-perf floors         the floors alone (with sockperf and memcpy at
 *                             every size)
 *   drnic-perf sweep          floors, write_lat and write_bw at every size,
 *                             the table, CSV/JSON and PNG plots (--out DIR)
 *   drnic-perf scale          message rate and memory per QP at 1..16384 QPs,
 *                             one CQ for all QPs against one CQ per QP
 *   drnic-perf write_lat|write_bw|send_lat|send_bw|read_lat|read_bw|
 *              atomic_lat|atomic_bw [perftest options] [HOST]
 *   drnic-perf qp_scale [-q QPS]   QP creation time and memory
 *
 * Without HOST and without --server the test runs in one process over a
 * loopback pair; with --server (or --config/--set naming another link) it
 * waits for a client; with HOST it is the client.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_lcore.h>

#include "drnic_env.h"
#include "drnic_cm.h"
#include "drnic_telemetry.h"
#include "perf_floor.h"
#include "perf_rdma.h"
#include "perf_report.h"
#include "perf_stats.h"
#include "perf_suite.h"

enum {
	OPT_INLINE = 256, OPT_GBITS, OPT_JSON, OPT_OUT, OPT_FLOORS, OPT_ENGINE_LCORE,
	OPT_APP_LCORE, OPT_CONFIG, OPT_SET, OPT_FILE_PREFIX, OPT_SERVER, OPT_CQ_PER_QP,
	OPT_TIMEOUT, OPT_MSGS, OPT_WINDOW, OPT_STATS, OPT_LOG_LEVEL, OPT_SRQ,
};

static void
perf_usage(FILE *f)
{
	fprintf(f,
		"usage: drnic-perf [COMMAND] [options] [HOST]\n"
		"commands: loopback (default), floors, sweep, scale, qp_scale,\n"
		"          write_lat write_bw send_lat send_bw read_lat read_bw atomic_lat atomic_bw\n"
		"perftest options:\n"
		"  -s SIZE       message size (latency 2, bandwidth 65536)\n"
		"  -n ITERS      iterations (latency 1000, bandwidth 5000 per QP)\n"
		"  -D SECONDS    run for a duration instead of -n\n"
		"  -a            all sizes 2..2^23\n"
		"  -q QPS        QPs (bandwidth)           -t DEPTH  tx depth (128)\n"
		"  -r DEPTH      rx depth (send, 512)      -I BYTES  inline size (lat 220, bw 0)\n"
		"  -Q N          CQ moderation: one signaled WR every N (lat 1, bw 100;\n"
		"                bw above 8 KiB 1; a post list: its length; as perftest)\n"
		"  -l N          post list: N WRs chained per post_send (1)\n"
		"  -m MTU        path MTU 256..4096 (4096 in loopback)\n"
		"  -c RC|UC|UD   connection type (RC); UC: send and write tests, UD: send\n"
		"                tests, one datagram per message (-s up to the port's MTU)\n"
		"  -A FETCH_AND_ADD|CMP_AND_SWAP   atomic type\n"
		"  -e            sleep on the completion channel instead of busy polling\n"
		"  -F            accepted (no CPU frequency check here)\n"
		"  -p PORT       TCP port of the connection exchange (18515)\n"
		"  -u N          QP timeout 4.096 us x 2^N (14; scale: 18)\n"
		"  --report_gbits   Gb/sec instead of MB/sec\n"
		"drnic options:\n"
		"  --json        print the results as one JSON document on stdout\n"
		"                (the tables then go to stderr)\n"
		"  --out DIR     write CSV, JSON and PNG plots into DIR\n"
		"  --floors      measure and print the floors before the test\n"
		"  --engine-lcore N, --app-lcore N   where the engine and this thread run\n"
		"  --inline      inline progress (no engine lcore)\n"
		"  --config FILE, --set KEY=VALUE    device configuration (client/server)\n"
		"  --server      wait for a client (default when the link is not loopback)\n"
		"  --file-prefix P   EAL file prefix (two processes on one host)\n"
		"  --cq-per-qp   one CQ per QP instead of one for all\n"
		"  --srq         send tests: receives from one SRQ of -r WRs (perftest's\n"
		"                --use-srq: both ends of a latency test, the receiving end\n"
		"                of a bandwidth test); qp_scale --srq: send_bw 64 B at -q\n"
		"                QPs (256) with per-QP receive queues and with one SRQ\n"
		"  --msgs N      scale: messages a run (2000000)\n"
		"  --window N    scale: also run with N WRs in flight in all, split over\n"
		"                the QPs (16384; 0: not)\n"
		"  --timeout S   client/server: longest wait (60)\n"
		"  --stats       print engine and link counters after each test\n"
		"  --log-level=TYPE:LEVEL   EAL log level, e.g. drnic.engine:debug (repeatable)\n");
}

static bool
perf_parse_test(const char *cmd, struct perf_opts *o)
{
	static const struct { const char *name; enum perf_test t; enum perf_kind k; } tests[] = {
		{ "write_lat", PERF_WRITE, PERF_LAT }, { "write_bw", PERF_WRITE, PERF_BW },
		{ "send_lat", PERF_SEND, PERF_LAT }, { "send_bw", PERF_SEND, PERF_BW },
		{ "read_lat", PERF_READ, PERF_LAT }, { "read_bw", PERF_READ, PERF_BW },
		{ "atomic_lat", PERF_ATOMIC, PERF_LAT }, { "atomic_bw", PERF_ATOMIC, PERF_BW },
	};
	unsigned int i;
	const char *c = strncmp(cmd, "ib_", 3) == 0 ? cmd + 3 : cmd;

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (strcmp(c, tests[i].name) == 0) {
			o->test = tests[i].t;
			o->kind = tests[i].k;
			return true;
		}
	return false;
}

/* What -c and --srq allow for o->test, said as perftest says it. */
static int
perf_check_transport(const struct perf_opts *o)
{
	if (o->qp_type == DRNIC_QPT_UD && o->test != PERF_SEND) {
		fprintf(stderr, "drnic-perf: -c UD: %s is not available: UD has SEND only (no RDMA"
			" WRITE, READ or atomics); use send_lat or send_bw\n",
			perf_test_name(o->test, o->kind));
		return -EINVAL;
	}
	if (o->qp_type == DRNIC_QPT_UC && o->test >= PERF_READ) {
		fprintf(stderr, "drnic-perf: -c UC: %s is not available: UC has SEND and RDMA WRITE"
			" only (READ and atomics need RC)\n", perf_test_name(o->test, o->kind));
		return -EINVAL;
	}
	if (o->srq && o->test != PERF_SEND) {
		fprintf(stderr, "drnic-perf: --srq: %s takes no receives (send tests only)\n",
			perf_test_name(o->test, o->kind));
		return -EINVAL;
	}
	return 0;
}

/* One perftest-style test (all sizes with -a). */
static int
perf_cmd_test(struct perf_opts *o, bool all_sizes, bool gbits)
{
	uint64_t sizes[32];
	struct perf_lat lat[32];
	struct perf_bw bw[32];
	unsigned int n = 0, i;
	int rc;

	if (all_sizes) {
		uint64_t s;

		/* UD: up to the MTU (-m, 4096), as perftest's -a. */
		for (s = 2; s <= (o->qp_type == DRNIC_QPT_UD ? o->mtu : (8u << 20)); s <<= 1)
			sizes[n++] = s;
		if (o->test == PERF_ATOMIC)
			n = 1;
	} else {
		sizes[n++] = o->size;
	}
	rc = perf_run_sizes(o, sizes, n, lat, bw);
	if (rc != 0)
		return rc;
	if (o->server && o->kind == PERF_BW && o->test != PERF_SEND) {
		fprintf(o->out, "\n %s: server side done (the client reports the figures)\n",
			perf_test_title(o->test, o->kind));
		return 0;
	}
	for (i = 0; i < n; i++) {
		uint64_t bytes = o->test == PERF_ATOMIC ? 8 : sizes[i];

		if (o->kind == PERF_LAT) {
			if (o->server && o->test >= PERF_READ)
				break;
			perf_print_lat(o, bytes, o->duration > 0 ? lat[i].n + 2 : o->iters, &lat[i],
				       i == 0);
			perf_rep_lat(perf_test_name(o->test, o->kind), bytes,
				     o->duration > 0 ? lat[i].n + 2 : o->iters, &lat[i]);
		} else {
			/* A UC/UD receiver counts what it took (some may be dropped). */
			uint64_t it = o->duration > 0 || (o->server && o->qp_type != DRNIC_QPT_RC) ?
				      bw[i].msgs : o->iters;

			perf_print_bw(o, bytes, it, &bw[i], i == 0, gbits);
			if (o->test == PERF_SEND && o->qp_type != DRNIC_QPT_RC && !o->server &&
			    o->host == NULL)
				fprintf(o->out, " %s: the receiver took %" PRIu64 " of the %" PRIu64
					" messages sent (%" PRIu64 " dropped: no receive WQE)\n",
					perf_qp_type_name(o->qp_type), bw[i].rx_msgs, bw[i].msgs,
					bw[i].msgs - RTE_MIN(bw[i].rx_msgs, bw[i].msgs));
			perf_rep_bw(perf_test_name(o->test, o->kind), bytes, it, o->nb_qps, "", &bw[i]);
		}
	}
	if (o->kind == PERF_LAT && !o->server && perf_rep_floor_get("ring_rtt_ns") > 0) {
		double ring = perf_rep_floor_get("ring_rtt_ns");
		bool half = o->test == PERF_WRITE || o->test == PERF_SEND;
		char fig[64];

		snprintf(fig, sizeof(fig), "%s %llu B median %s", perf_test_name(o->test, o->kind),
			 (unsigned long long)sizes[0], half ? "(half RTT)" : "(RTT)");
		perf_rep_compare(fig, lat[0].typical_us * 1e3, "ns", "rte_ring round trip", ring, "ns",
				 lat[0].typical_us * 1e3 / ring, "", -1);
		perf_rep_print_compare(o->out);
	} else if (o->kind == PERF_BW && !o->server && perf_rep_floor_get("memcpy_64k_GBps") > 0) {
		double mc = perf_rep_floor_get("memcpy_64k_GBps");
		double g = bw[0].avg_mbps * 1048576.0 / 1e9;
		char fig[64];

		snprintf(fig, sizeof(fig), "%s %llu B", perf_test_name(o->test, o->kind),
			 (unsigned long long)sizes[0]);
		perf_rep_compare(fig, g, "GB/s", "memcpy 64 KiB (cache-hot)", mc, "GB/s", g / mc, "",
				 -1);
		perf_rep_compare(fig, bw[0].mpps, "Mpps", "loopback link, one core",
				 perf_rep_floor_get("link_mpps"), "Mpps",
				 bw[0].mpps / perf_rep_floor_get("link_mpps"), "", -1);
		perf_rep_print_compare(o->out);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "report_gbits", no_argument, NULL, OPT_GBITS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "floors", no_argument, NULL, OPT_FLOORS },
		{ "engine-lcore", required_argument, NULL, OPT_ENGINE_LCORE },
		{ "app-lcore", required_argument, NULL, OPT_APP_LCORE },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "set", required_argument, NULL, OPT_SET },
		{ "file-prefix", required_argument, NULL, OPT_FILE_PREFIX },
		{ "server", no_argument, NULL, OPT_SERVER },
		{ "cq-per-qp", no_argument, NULL, OPT_CQ_PER_QP },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "msgs", required_argument, NULL, OPT_MSGS },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "srq", no_argument, NULL, OPT_SRQ },
		{ "use-srq", no_argument, NULL, OPT_SRQ },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'D' },
		{ "all", no_argument, NULL, 'a' },
		{ "qp", required_argument, NULL, 'q' },
		{ "tx-depth", required_argument, NULL, 't' },
		{ "rx-depth", required_argument, NULL, 'r' },
		{ "inline_size", required_argument, NULL, 'I' },
		{ "cq-mod", required_argument, NULL, 'Q' },
		{ "post_list", required_argument, NULL, 'l' },
		{ "connection", required_argument, NULL, 'c' },
		{ "atomic_type", required_argument, NULL, 'A' },
		{ "events", no_argument, NULL, 'e' },
		{ "port", required_argument, NULL, 'p' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "qp-timeout", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_opts o = {
		.tx_depth = 128, .rx_depth = 512, .inline_size = -1, .mtu = 4096, .nb_qps = 1,
		.engine_lcore = -1, .port = DRNIC_CM_DEFAULT_PORT, .timeout_s = 60, .out = stdout,
		.qp_type = DRNIC_QPT_RC,
	};
	struct drnic_env_opts eo = { .name = "drnic-perf", .mem_mb = 1024 };
	struct drnic_env_info info;
	const char *cmd = "loopback", *out_dir = NULL, *eal_extra[12] = { NULL };
	bool all_sizes = false, gbits = false, json = false, floors = false, cq_mod_set = false;
	bool engines_given = false;
	int c, rc, app_lcore = -1, nb_extra = 0;
	uint64_t msgs = 2000000;
	unsigned int window = 16384;
	char *log_args[12] = { NULL };
	char lcores[64], main_arg[64];

	if (argc > 1 && argv[1][0] != '-') {
		cmd = argv[1];
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (strcmp(cmd, "floor") == 0)
		cmd = "floors";
	while ((c = getopt_long(argc, argv, "s:n:D:aq:t:r:I:Q:l:m:c:A:eFp:u:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o.size = strtoull(optarg, NULL, 0); break;
		case 'n': o.iters = strtoull(optarg, NULL, 0); break;
		case 'D': o.duration = strtod(optarg, NULL); break;
		case 'a': all_sizes = true; break;
		case 'q': o.nb_qps = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 't': o.tx_depth = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'r': o.rx_depth = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'I': o.inline_size = (int)strtol(optarg, NULL, 0); break;
		case 'Q': o.cq_mod = (unsigned int)strtoul(optarg, NULL, 0); cq_mod_set = true; break;
		case 'l': o.post_list = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'm': o.mtu = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'c':
			if (strcmp(optarg, "RC") == 0) {
				o.qp_type = DRNIC_QPT_RC;
			} else if (strcmp(optarg, "UC") == 0) {
				o.qp_type = DRNIC_QPT_UC;
			} else if (strcmp(optarg, "UD") == 0) {
				o.qp_type = DRNIC_QPT_UD;
			} else {
				fprintf(stderr, "drnic-perf: -c RC, UC or UD (not %s)\n", optarg);
				return 1;
			}
			break;
		case 'A':
			if (strcmp(optarg, "CMP_AND_SWAP") == 0) {
				o.cmp_swap = true;
			} else if (strcmp(optarg, "FETCH_AND_ADD") != 0) {
				fprintf(stderr, "drnic-perf: -A FETCH_AND_ADD or CMP_AND_SWAP\n");
				return 1;
			}
			break;
		case 'e': o.events = true; break;
		case 'F': break;
		case 'p': o.port = (int)strtol(optarg, NULL, 0); break;
		case 'u': o.qp_timeout = (unsigned int)strtoul(optarg, NULL, 0); break;
		case OPT_INLINE: o.inline_progress = true; break;
		case OPT_GBITS: gbits = true; break;
		case OPT_JSON: json = true; break;
		case OPT_OUT: out_dir = optarg; break;
		case OPT_FLOORS: floors = true; break;
		case OPT_ENGINE_LCORE: o.engine_lcore = (int)strtol(optarg, NULL, 0); engines_given = true; break;
		case OPT_APP_LCORE: app_lcore = (int)strtol(optarg, NULL, 0); break;
		case OPT_CONFIG: o.config = optarg; break;
		case OPT_SET:
			if (o.nb_sets == PERF_MAX_SETS || strchr(optarg, '=') == NULL) {
				fprintf(stderr, "drnic-perf: --set KEY=VALUE (%d at most)\n", PERF_MAX_SETS);
				return 1;
			}
			o.sets[o.nb_sets++] = optarg;
			break;
		case OPT_FILE_PREFIX: eo.file_prefix = optarg; break;
		case OPT_SERVER: o.server = true; break;
		case OPT_CQ_PER_QP: o.cq_per_qp = true; break;
		case OPT_TIMEOUT: o.timeout_s = (unsigned int)strtoul(optarg, NULL, 0); break;
		case OPT_MSGS: msgs = strtoull(optarg, NULL, 0); break;
		case OPT_WINDOW: window = (unsigned int)strtoul(optarg, NULL, 0); break;
		case OPT_STATS: o.stats = true; break;
		case OPT_SRQ: o.srq = true; break;
		case OPT_LOG_LEVEL:
			/* The global level gates every type: open it, let the types decide. */
			eo.log_level = RTE_LOG_DEBUG;
			if (nb_extra < 8 && asprintf(&log_args[nb_extra], "--log-level=%s", optarg) > 0)
				eal_extra[nb_extra] = log_args[nb_extra], nb_extra++;
			break;
		case 'h': perf_usage(stdout); return 0;
		default: perf_usage(stderr); return 2;
		}
	}
	if (optind < argc)
		o.host = argv[optind];
	if (json)
		o.out = stderr;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.host == NULL && !o.server && (o.config != NULL || o.nb_sets > 0)) {
		/* A configuration naming a real link: we are the server. */
		struct drnic_config cfg;
		unsigned int i;

		drnic_config_init(&cfg);
		if (o.config != NULL)
			drnic_config_load(&cfg, o.config, NULL);
		for (i = 0; i < o.nb_sets; i++)
			(void)drnic_config_set_pair(&cfg, o.sets[i]);   /* checked again later */
		o.server = strcmp(cfg.link_driver, "loopback") != 0;
	}
	if (app_lcore >= 0 || engines_given) {
		int a = app_lcore >= 0 ? app_lcore : 0;
		int e = o.engine_lcore >= 0 ? o.engine_lcore : (a == 0 ? 1 : 0);

		if (o.inline_progress)
			snprintf(lcores, sizeof(lcores), "%d", a);
		else
			snprintf(lcores, sizeof(lcores), "%d,%d", a, e);
		snprintf(main_arg, sizeof(main_arg), "--main-lcore=%d", a);
		eo.lcores = lcores;
		eal_extra[nb_extra++] = main_arg;
		o.engine_lcore = o.inline_progress ? -1 : e;
	}
	eo.extra_args = eal_extra;
	rc = drnic_env_init(&eo, &info);
	if (rc < 0) {
		fprintf(stderr, "drnic-perf: EAL start failed: %s\n", strerror(-rc));
		return 1;
	}
	drnic_telemetry_init();   /* /drnic/ commands for dpdk-telemetry.py */
	fprintf(o.out, "EAL: %s\n", info.eal_args);
	fprintf(o.out, "memory: %s%s; app thread on lcore %u (CPU %u)", info.hugepages ? "hugepages" :
		"no hugepages: ", info.hugepages ? "" : info.reason, rte_lcore_id(),
		rte_lcore_to_cpu_id((int)rte_lcore_id()));
	perf_rep_info("eal", "%s", info.eal_args);
	perf_rep_info("app_lcore", "%u", rte_lcore_id());
	perf_rep_info("app_cpu", "%u", rte_lcore_to_cpu_id((int)rte_lcore_id()));
	if (o.inline_progress) {
		fprintf(o.out, "; engines inline on the app thread\n");
		perf_rep_info("engine", "inline on the app thread");
	} else {
		unsigned int e = perf_peer_lcore(&o);

		if (e < RTE_MAX_LCORE) {
			fprintf(o.out, "; engine on lcore %u (CPU %u)\n", e, rte_lcore_to_cpu_id((int)e));
			perf_rep_info("engine_lcore", "%u", e);
			perf_rep_info("engine_cpu", "%u", rte_lcore_to_cpu_id((int)e));
		} else {
			fprintf(o.out, "; no worker lcore: use --inline\n");
		}
	}
	perf_rep_info("command", "%s", cmd);

	if (floors && strcmp(cmd, "floors") != 0 && !o.server && o.host == NULL) {
		struct perf_floor_opts fo = { .sockperf = true };

		rc = perf_suite_floors(&o, &fo);
		if (rc != 0)
			goto done;
	}
	if (perf_parse_test(cmd, &o)) {
		if (o.size == 0)
			o.size = o.kind == PERF_LAT ? 2 : 65536;
		if (o.iters == 0)
			o.iters = o.kind == PERF_LAT ? 1000 : 5000;
		if (!cq_mod_set)
			o.cq_mod = o.kind == PERF_LAT ? 1 : 100;
		/* perftest's rules: above 8 KiB (not with -a) every WR is
		 * signaled unless -Q says otherwise; a post list sets the
		 * moderation it did not get; never more than the depth. */
		if (o.kind == PERF_BW && o.size > PERF_CQ_MOD_SIZE_LIMIT && !all_sizes) {
			if (!cq_mod_set)
				o.cq_mod = 1;
			else if (o.cq_mod > 1)
				fprintf(stderr, "drnic-perf: warning: large message requested and CQ"
					" moderation enabled: it can lead to inaccurate results\n");
		}
		if (o.post_list > 1 && !cq_mod_set)
			o.cq_mod = o.post_list;
		if (o.kind == PERF_BW && o.cq_mod > o.tx_depth)
			o.cq_mod = o.tx_depth;
		if (o.inline_size < 0)
			o.inline_size = o.kind == PERF_LAT && o.test <= PERF_SEND ? 220 : 0;
		rc = perf_check_transport(&o);
		if (rc != 0)
			goto done;
		if (o.events && o.test == PERF_WRITE && o.kind == PERF_LAT) {
			fprintf(stderr, "drnic-perf: -e: events feature not available on write_lat"
				" (it polls memory, as perftest's)\n");
			rc = -EINVAL;
			goto done;
		}
		rc = perf_cmd_test(&o, all_sizes, gbits);
	} else if (strcmp(cmd, "loopback") == 0) {
		rc = perf_suite_loopback(&o);
	} else if (strcmp(cmd, "floors") == 0) {
		struct perf_floor_opts fo = { .sockperf = true, .memcpy_sweep = true };

		rc = perf_suite_floors(&o, &fo);
	} else if (strcmp(cmd, "sweep") == 0) {
		if (o.inline_size < 0)
			o.inline_size = -1;
		rc = perf_suite_sweep(&o, all_sizes ? (8u << 20) : (o.size ? o.size : (1u << 20)),
				      o.iters ? o.iters : 2000, o.iters ? o.iters : 5000);
		if (out_dir == NULL)
			out_dir = "drnic-perf-results";
	} else if (strcmp(cmd, "scale") == 0) {
		static const unsigned int counts[] = { 1, 16, 256, 4096, 16384 };
		static const unsigned int cqs[] = { 256, 4096 };
		unsigned int one = o.nb_qps;
		bool given = o.nb_qps > 1;

		if (!cq_mod_set)
			o.cq_mod = 32;
		if (o.tx_depth == 128)
			o.tx_depth = 128;  /* per QP, perftest's default: 2M WRs in flight at 16384 QPs */
		if (o.post_list == 0)
			o.post_list = 16;
		if (o.qp_timeout == 0)
			o.qp_timeout = 18;
		if (o.inline_size < 0)
			o.inline_size = 0;
		rc = perf_suite_scale(&o, given ? &one : counts, given ? 1 : RTE_DIM(counts), cqs,
				      given ? 0 : RTE_DIM(cqs), msgs, window);
		perf_rep_print_compare(o.out);
	} else if (strcmp(cmd, "qp_scale") == 0 && o.srq) {
		if (o.nb_qps <= 1)
			o.nb_qps = 256;
		if (!cq_mod_set)
			o.cq_mod = 100;   /* perftest's send_bw */
		if (o.inline_size < 0)
			o.inline_size = 0;
		o.srq = false;    /* per row */
		rc = perf_suite_srq(&o, o.nb_qps, msgs);
	} else if (strcmp(cmd, "qp_scale") == 0) {
		double secs, per_qp;

		if (o.nb_qps <= 1)
			o.nb_qps = 16384;
		rc = perf_qp_scale(&o, &secs, &per_qp);
		if (rc == 0)
			fprintf(o.out, "qp_scale: %u QPs created in %.3f s (%.2f us each), %.0f bytes of"
				" hugepage memory per QP (max_send_wr = max_recv_wr = %u)\n",
				o.nb_qps, secs, secs * 1e6 / o.nb_qps, per_qp, o.tx_depth);
	} else {
		perf_usage(stderr);
		rc = -EINVAL;
	}
done:
	if (rc == 0 && out_dir != NULL)
		rc = perf_rep_write(out_dir, o.out);
	if (json)
		perf_rep_json(stdout);
	drnic_env_fini();
	return rc == 0 ? 0 : 1;
}
