/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_RDMA_H
#define PERF_RDMA_H

/*
 * perftest-style RDMA benchmarks on drnic.
 *
 * Loopback (default): two drnic devices on one in-process loopback wire, one
 * application thread driving both ends, engines as configured (one dedicated
 * engine lcore shared by both devices by default).
 *
 * Client/server: one device per process, the QPs connected through lib/cm
 * (TCP, perftest's port 18515); the server runs without a host argument, the
 * client with one. Both must be given the same test options, as perftest.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "drnic_verbs.h"
#include "perf_stats.h"

#define PERF_MAX_SETS 16
/* perftest's MSG_SIZE_CQ_MOD_LIMIT: bandwidth tests above this size signal
 * every WR unless -Q is given. */
#define PERF_CQ_MOD_SIZE_LIMIT 8192u

enum perf_test {
	PERF_WRITE = 0,
	PERF_SEND,
	PERF_READ,
	PERF_ATOMIC,
};

enum perf_kind {
	PERF_LAT = 0,
	PERF_BW,
};

struct perf_opts {
	enum perf_test test;
	enum perf_kind kind;
	uint64_t size;          /* -s: message size */
	uint64_t iters;         /* -n: iterations (per QP for bandwidth) */
	double duration;        /* -D: seconds; 0: use iters */
	unsigned int tx_depth;  /* -t: outstanding WRs per QP */
	unsigned int rx_depth;  /* -r: receive WRs per QP (send tests) */
	unsigned int cq_mod;    /* -Q: one signaled WR every cq_mod */
	unsigned int post_list; /* -l: WRs chained per post_send call */
	int inline_size;        /* -I: inline up to this many bytes; -1: default */
	unsigned int mtu;       /* -m: path MTU in bytes */
	unsigned int qp_timeout; /* -u: QP timeout (4.096 us x 2^n), 14 */
	unsigned int nb_qps;    /* -q: QPs */
	enum drnic_qp_type qp_type; /* -c: DRNIC_QPT_RC (default), UC or UD */
	bool srq;               /* --srq: receives from one SRQ of rx_depth WRs */
	bool cq_per_qp;         /* --cq-per-qp: one CQ per QP instead of one shared */
	bool inline_progress;   /* --inline: no engine lcore */
	bool events;            /* -e: sleep on the completion channel */
	bool cmp_swap;          /* -A CMP_AND_SWAP (default FETCH_AND_ADD) */
	bool quiet;             /* do not print the per-test tables */
	bool stats;             /* --stats: print engine and link counters */
	/* client/server */
	const char *host;       /* client: server address; NULL: loopback or server */
	bool server;            /* --server or a config whose link is not loopback */
	int port;               /* -p: TCP port of the exchange */
	unsigned int timeout_s;
	/* devices */
	const char *config;     /* --config FILE */
	const char *sets[PERF_MAX_SETS]; /* --set KEY=VALUE */
	unsigned int nb_sets;
	int engine_lcore;       /* --engine-lcore; -1: first worker */
	FILE *out;              /* human output */
};

struct perf_bw {
	double peak_mbps;       /* MiB/s, as perftest's MB/sec */
	double avg_mbps;
	double mpps;
	double seconds;
	uint64_t msgs;          /* messages completed (all QPs) */
	double bytes_per_qp;    /* hugepage memory per QP pair end (set-up) */
	double rx_bytes_per_qp; /* the same on the receiving end (SEND) */
	uint64_t rx_msgs;       /* SEND: messages the receiving end took */
	uint64_t rnr_naks;      /* RC SEND: RNR NAKs the receiving end sent */
	/* The engines of our end's device while the test ran (in loopback
	 * they serve both ends): the share of their time spent working and
	 * their busy time per message, in ns (0 when not known). */
	double engine_busy;
	double engine_ns_per_msg;
};

/* "RC", "UC" or "UD". */
const char *perf_qp_type_name(enum drnic_qp_type t);

/* perftest's test title, e.g. "RDMA_Write Latency Test". */
const char *perf_test_title(enum perf_test t, enum perf_kind k);
/* Sub-command name, e.g. "write_lat". */
const char *perf_test_name(enum perf_test t, enum perf_kind k);

/*
 * A latency test at @o->size: ping-pong (WRITE, SEND; half round trip) or
 * request/response (READ, atomic; full round trip). 0 or a negative errno.
 */
int perf_run_lat(const struct perf_opts *o, struct perf_lat *out);

/* A bandwidth test at @o->size. 0 or a negative errno. */
int perf_run_bw(const struct perf_opts *o, struct perf_bw *out);

/*
 * A set of tests over one connection (set-up once): sizes @sizes[0..n), all
 * of o->test/o->kind. @lat/@bw receive one result each (the one that matches
 * o->kind). Used for -a and the loopback sweep.
 */
int perf_run_sizes(const struct perf_opts *o, const uint64_t *sizes, unsigned int n,
		   struct perf_lat *lat, struct perf_bw *bw);

/* Create o->nb_qps QPs on one device: time and hugepage memory per QP. */
int perf_qp_scale(const struct perf_opts *o, double *create_s, double *bytes_per_qp);

#endif
