/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic-pingpong: an RC ping-pong modelled on ibv_rc_pingpong, on drnic's
 * verbs API, with the connection exchanged over TCP by lib/cm.
 *
 *   drnic-pingpong [options]          server: wait for a client
 *   drnic-pingpong [options] HOST     client: connect to the server at HOST
 *
 * ibv_rc_pingpong's options and output: -p port (18515), -s size (4096),
 * -n iters (1000), -m MTU (1024), -r rx depth (500), -l SL, -g GID index, -e
 * (sleep on CQ events), -c (check every received byte). By default the TCP
 * exchange speaks ibv_rc_pingpong's record format, so either side may be
 * ibv_rc_pingpong itself (then -c needs the drnic pattern on both sides).
 *
 * drnic additions:
 *   --config FILE     configuration (INI; default: $DRNIC_CONFIG, else the
 *                     embedded default), --name NAME its [device.NAME]
 *   --set KEY=VALUE   override one configuration key (repeatable)
 *   --format rc|drnic exchange record format (default rc)
 *   -w, --write-bw    WRITE bandwidth run instead of ping-pong: the client
 *                     RDMA-WRITEs ITERS messages of SIZE bytes into the
 *                     server's buffer (up to --window outstanding); the
 *                     server then checks every byte (drnic format)
 *   --window N        outstanding WRITEs (default 64)
 *   --write-lat       WRITE ping-pong instead (as ib_write_lat): each side
 *                     RDMA-WRITEs SIZE bytes into the other's buffer when the
 *                     last byte of its own buffer shows the peer's WRITE
 *                     (drnic format; -c checks every byte)
 *
 *   --steps DIR       with -w, a WRITE run driven one operation at a time
 *                     by files in DIR, for tests that act between them (a
 *                     third host injecting frames). Client: ITERS WRITEs
 *                     (WRITE k: message k into the server's slot k), then a
 *                     READ of the last slot back, then a probe WRITE just
 *                     past the end of the server's MR (the server must NAK
 *                     it: "remote access error"); before operation i it
 *                     waits for DIR/op.<i> (running the engine meanwhile)
 *                     and after it prints "wr <i> write|read|probe: <status>"
 *                     and for the READ "read check: ok|bad ...". Its MR
 *                     allows no remote access. Server: its MR (slots
 *                     readable and writable remotely) has 4 KiB guard zones
 *                     on both sides, outside the MR; while DIR/freeze exists
 *                     it runs no engine ("server: frozen" / "server:
 *                     thawed"), so requests wait unanswered; at the end it
 *                     checks every slot and both guards and prints
 *                     "slot <k>: ok|bad ..." and "guards: ok|touched ...".
 *   -u, --qp-timeout N  QP local ACK timeout exponent (default 14:
 *                     4.096 us * 2^N), as perftest's -u
 *   --stats           print the device's engine and link counters and the
 *                     QP's (drnic_device_stats_print(), drnic_qp_stats_print())
 *                     before closing
 *
 * Both ping-pongs also print the median time of one iteration (one round
 * trip: "median N usec/iter").
 *   --timeout SEC     longest wait of the TCP exchange and of the run (60)
 *   --file-prefix P, --lcores L, --eal ARG   EAL options
 *
 * Exit status 0 on success, 1 on any failure (data mismatch included).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_atomic.h>
#include <rte_common.h>
#include <rte_errno.h>

#include "drnic_cm.h"
#include "drnic_engine.h"
#include "drnic_env.h"
#include "drnic_verbs.h"

#define PP_RECV_WRID 1u
#define PP_SEND_WRID 2u
#define PP_MAX_EAL_ARGS 8
#define PP_MAX_SETS 16
#define PP_LAT_SQ 16      /* send queue of the WRITE ping-pong */
#define PP_GUARD 4096     /* --steps server: guard zone on each side of the MR */
#define PP_GUARD_BYTE 0xa5
#define PP_FILL_BYTE 0x7b /* a WRITE run's buffers before anything lands */

struct pp_opts {
	const char *server;       /* NULL: we are the server */
	int port;
	uint32_t size;
	uint32_t iters;
	enum drnic_mtu mtu;
	uint32_t rx_depth;
	int sl;
	int gidx;
	bool events;
	bool check;
	bool write_bw;
	bool write_lat;
	uint32_t window;
	const char *steps;        /* --steps DIR (with -w) */
	unsigned int qp_timeout;
	bool stats;
	unsigned int timeout_s;
	enum drnic_cm_fmt fmt;
	const char *config;
	const char *name;
	const char *sets[PP_MAX_SETS];
	unsigned int nb_sets;
	const char *file_prefix;
	const char *lcores;
	const char *eal[PP_MAX_EAL_ARGS + 1];
	unsigned int nb_eal;
};

struct pp_ctx {
	const struct pp_opts *o;
	struct drnic_device *dev;
	struct drnic_comp_channel *ch;
	struct drnic_pd *pd;
	struct drnic_cq *cq;
	struct drnic_qp *qp;
	struct drnic_mr *mr;
	uint8_t *buf;            /* [send area][receive slots] or the WRITE area */
	size_t buf_len;
	uint8_t *alloc;          /* what was allocated: buf, or buf with guards */
	uint8_t *rbuf;           /* receive slots (ping-pong) */
	struct drnic_cm_dest local;
	struct drnic_cm_dest remote;
	int cq_events;
	bool inline_mode;        /* this thread runs the engines */
	struct drnic_cm *cm;     /* kept open until the device is closed */
};

static uint64_t
pp_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Byte @p j of message @p k: both sides send and expect the same pattern. */
static inline uint8_t
pp_pattern(uint32_t k, size_t j)
{
	return (uint8_t)((k * 131u + (uint32_t)j * 7u + 0x5au) ^ (uint32_t)(j >> 8));
}

static void
pp_fill(uint8_t *p, size_t len, uint32_t k)
{
	size_t j;

	for (j = 0; j < len; j++)
		p[j] = pp_pattern(k, j);
}

/* Index of the first wrong byte, or -1. */
static long
pp_verify(const uint8_t *p, size_t len, uint32_t k)
{
	size_t j;

	for (j = 0; j < len; j++)
		if (p[j] != pp_pattern(k, j))
			return (long)j;
	return -1;
}

static void
usage(const char *argv0)
{
	printf("Usage:\n");
	printf("  %s            start a server and wait for connection\n", argv0);
	printf("  %s <host>     connect to server at <host>\n", argv0);
	printf("\nOptions:\n");
	printf("  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n");
	printf("  -s, --size=<size>      size of message to exchange (default 4096)\n");
	printf("  -m, --mtu=<size>       path MTU (default 1024)\n");
	printf("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n");
	printf("  -n, --iters=<iters>    number of exchanges (default 1000)\n");
	printf("  -l, --sl=<sl>          service level value\n");
	printf("  -e, --events           sleep on CQ events (default poll)\n");
	printf("  -g, --gid-idx=<gid index> local port gid index (default 0)\n");
	printf("  -c, --chk              validate received buffer\n");
	printf("  -w, --write-bw         RDMA WRITE bandwidth run, every byte checked\n");
	printf("      --window=<n>       outstanding WRITEs (default 64)\n");
	printf("      --write-lat        RDMA WRITE ping-pong (as ib_write_lat)\n");
	printf("      --steps=<dir>      with -w: one operation at a time, gated by files in <dir>\n");
	printf("  -u, --qp-timeout=<n>   QP timeout exponent (default 14)\n");
	printf("      --stats            print the device and QP counters before closing\n");
	printf("      --format=rc|drnic  TCP exchange format (default rc: ibv_rc_pingpong's)\n");
	printf("      --config=<file>    drnic configuration (default $DRNIC_CONFIG)\n");
	printf("      --name=<name>      device section [device.<name>] of the file\n");
	printf("      --set=<key=value>  override a configuration key\n");
	printf("      --timeout=<sec>    longest wait (default 60)\n");
	printf("      --file-prefix=<p>, --lcores=<list>, --eal=<arg>  EAL options\n");
}

static int
pp_parse(int argc, char **argv, struct pp_opts *o)
{
	static const struct option longs[] = {
		{ "port", 1, NULL, 'p' }, { "ib-dev", 1, NULL, 'd' }, { "ib-port", 1, NULL, 'i' },
		{ "size", 1, NULL, 's' }, { "mtu", 1, NULL, 'm' }, { "rx-depth", 1, NULL, 'r' },
		{ "iters", 1, NULL, 'n' }, { "sl", 1, NULL, 'l' }, { "events", 0, NULL, 'e' },
		{ "gid-idx", 1, NULL, 'g' }, { "chk", 0, NULL, 'c' }, { "write-bw", 0, NULL, 'w' },
		{ "window", 1, NULL, 'W' }, { "format", 1, NULL, 'F' }, { "config", 1, NULL, 'C' },
		{ "name", 1, NULL, 'N' }, { "set", 1, NULL, 'S' }, { "timeout", 1, NULL, 'T' },
		{ "file-prefix", 1, NULL, 'P' }, { "lcores", 1, NULL, 'L' }, { "eal", 1, NULL, 'E' },
		{ "write-lat", 0, NULL, 'Y' }, { "steps", 1, NULL, 'A' },
		{ "qp-timeout", 1, NULL, 'u' }, { "stats", 0, NULL, 'Z' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c, v;

	memset(o, 0, sizeof(*o));
	o->port = DRNIC_CM_DEFAULT_PORT;
	o->size = 4096;
	o->iters = 1000;
	o->mtu = DRNIC_MTU_1024;
	o->rx_depth = 500;
	o->window = 64;
	o->timeout_s = 60;
	o->qp_timeout = 14;
	o->fmt = DRNIC_CM_FMT_RC_PINGPONG;
	o->config = getenv("DRNIC_CONFIG");
	while ((c = getopt_long(argc, argv, "p:d:i:s:m:r:n:l:eg:cwu:h", longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->port = (int)strtoul(optarg, NULL, 0);
			if (o->port <= 0 || o->port > 65535)
				return -1;
			break;
		case 'd':
		case 'i':
			break;  /* one device, one port */
		case 's':
			o->size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			v = (int)strtol(optarg, NULL, 0);
			switch (v) {
			case 256: o->mtu = DRNIC_MTU_256; break;
			case 512: o->mtu = DRNIC_MTU_512; break;
			case 1024: o->mtu = DRNIC_MTU_1024; break;
			case 2048: o->mtu = DRNIC_MTU_2048; break;
			case 4096: o->mtu = DRNIC_MTU_4096; break;
			default: return -1;
			}
			break;
		case 'r':
			o->rx_depth = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			o->iters = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'l':
			o->sl = (int)strtol(optarg, NULL, 0);
			break;
		case 'e':
			o->events = true;
			break;
		case 'g':
			o->gidx = (int)strtol(optarg, NULL, 0);
			break;
		case 'c':
			o->check = true;
			break;
		case 'w':
			o->write_bw = true;
			break;
		case 'W':
			o->window = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'Y':
			o->write_lat = true;
			break;
		case 'A':
			o->steps = optarg;
			break;
		case 'u':
			o->qp_timeout = (unsigned int)strtoul(optarg, NULL, 0);
			if (o->qp_timeout > 31)
				return -1;
			break;
		case 'Z':
			o->stats = true;
			break;
		case 'F':
			if (strcmp(optarg, "rc") == 0)
				o->fmt = DRNIC_CM_FMT_RC_PINGPONG;
			else if (strcmp(optarg, "drnic") == 0)
				o->fmt = DRNIC_CM_FMT_DRNIC;
			else
				return -1;
			break;
		case 'C':
			o->config = optarg;
			break;
		case 'N':
			o->name = optarg;
			break;
		case 'S':
			if (o->nb_sets == PP_MAX_SETS || strchr(optarg, '=') == NULL)
				return -1;
			o->sets[o->nb_sets++] = optarg;
			break;
		case 'T':
			o->timeout_s = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'P':
			o->file_prefix = optarg;
			break;
		case 'L':
			o->lcores = optarg;
			break;
		case 'E':
			if (o->nb_eal == PP_MAX_EAL_ARGS)
				return -1;
			o->eal[o->nb_eal++] = optarg;
			break;
		default:
			return -1;
		}
	}
	if (optind == argc - 1)
		o->server = argv[optind];
	else if (optind < argc)
		return -1;
	if (o->size == 0 || o->iters == 0 || o->rx_depth == 0 || o->window == 0 ||
	    o->timeout_s == 0)
		return -1;
	if (o->write_bw && o->write_lat)
		return -1;
	if (o->steps != NULL && !o->write_bw)
		return -1;
	if (o->write_bw || o->write_lat)
		o->fmt = DRNIC_CM_FMT_DRNIC;   /* needs rkey and address */
	return 0;
}

static int
pp_open_device(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	struct drnic_device_attr attr;
	struct drnic_config cfg;
	unsigned int i;
	int rc;

	drnic_config_init(&cfg);
	if (o->config != NULL) {
		rc = drnic_config_load(&cfg, o->config, o->name);
		if (rc < 0) {
			fprintf(stderr, "Couldn't load configuration %s: %s\n", o->config,
				strerror(-rc));
			return rc;
		}
	}
	for (i = 0; i < o->nb_sets; i++) {
		rc = drnic_config_set_pair(&cfg, o->sets[i]);
		if (rc < 0) {
			fprintf(stderr, "Bad setting %s\n", o->sets[i]);
			return rc;
		}
	}
	ctx->dev = drnic_device_open(&cfg);
	if (ctx->dev == NULL) {
		fprintf(stderr, "Couldn't open device %s: %s\n", cfg.name, rte_strerror(rte_errno));
		return -rte_errno;
	}
	/* The device's own mode: a daemon's device (DRNIC_DAEMON) runs its
	 * engines on the daemon's lcores, whatever this process's defaults. */
	if (drnic_query_device(ctx->dev, &attr) < 0)
		return -EINVAL;
	ctx->inline_mode = attr.progress == DRNIC_PROGRESS_INLINE;
	return 0;
}

static int
pp_init(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	struct drnic_qp_attr a;
	unsigned int access = DRNIC_ACCESS_LOCAL_WRITE;
	uint32_t depth = o->write_bw ? o->window : o->rx_depth;
	union drnic_gid gid;
	size_t guard;
	int rc;

	rc = pp_open_device(ctx);
	if (rc < 0)
		return rc;
	if (o->write_bw) {
		/* Server: every message has its own place; client: a window. */
		ctx->buf_len = (size_t)o->size * (o->server == NULL ? o->iters : o->window);
		if (o->steps == NULL)
			access |= DRNIC_ACCESS_REMOTE_WRITE;
		else if (o->server == NULL)
			access |= DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ;
	} else if (o->write_lat) {
		/* [incoming: the peer writes here][outgoing] */
		ctx->buf_len = (size_t)o->size * 2;
		access |= DRNIC_ACCESS_REMOTE_WRITE;
	} else {
		ctx->buf_len = (size_t)o->size * (1 + o->rx_depth);
	}
	guard = o->steps != NULL && o->server == NULL ? PP_GUARD : 0;
	ctx->alloc = drnic_alloc(ctx->buf_len + 2 * guard, 4096, -1);
	if (ctx->alloc == NULL) {
		fprintf(stderr, "Couldn't allocate work buf (%zu bytes).\n", ctx->buf_len);
		return -ENOMEM;
	}
	ctx->buf = ctx->alloc + guard;
	memset(ctx->alloc, PP_GUARD_BYTE, guard);
	memset(ctx->buf + ctx->buf_len, PP_GUARD_BYTE, guard);
	memset(ctx->buf, o->write_lat ? 0 : PP_FILL_BYTE, ctx->buf_len);
	ctx->rbuf = ctx->buf + o->size;
	if (o->events) {
		ctx->ch = drnic_create_comp_channel();
		if (ctx->ch == NULL) {
			fprintf(stderr, "Couldn't create completion channel\n");
			return -rte_errno;
		}
	}
	ctx->pd = drnic_alloc_pd(ctx->dev);
	if (ctx->pd == NULL) {
		fprintf(stderr, "Couldn't allocate PD\n");
		return -rte_errno;
	}
	ctx->mr = drnic_reg_mr(ctx->pd, ctx->buf, ctx->buf_len, access);
	if (ctx->mr == NULL) {
		fprintf(stderr, "Couldn't register MR\n");
		return -rte_errno;
	}
	if (o->write_lat)
		depth = PP_LAT_SQ;
	ca.cqe = depth + 1 + (o->write_bw ? 0 : 1);
	ca.channel = ctx->ch;
	ca.socket_id = -1;
	ca.async_queue = drnic_device_async_queue(ctx->dev);
	ctx->cq = drnic_cq_create(&ca);
	if (ctx->cq == NULL) {
		fprintf(stderr, "Couldn't create CQ\n");
		return -rte_errno;
	}
	qa.send_cq = ctx->cq;
	qa.recv_cq = ctx->cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.cap.max_send_wr = o->write_bw ? o->window : o->write_lat ? PP_LAT_SQ : 1;
	qa.cap.max_recv_wr = o->write_bw || o->write_lat ? 1 : o->rx_depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ctx->qp = drnic_create_qp(ctx->pd, &qa);
	if (ctx->qp == NULL) {
		fprintf(stderr, "Couldn't create QP: %s\n", rte_strerror(rte_errno));
		return -rte_errno;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = o->write_bw || o->write_lat ? DRNIC_ACCESS_REMOTE_WRITE : 0;
	if (o->steps != NULL)
		a.qp_access_flags |= DRNIC_ACCESS_REMOTE_READ;
	rc = drnic_modify_qp(ctx->qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_ACCESS_FLAGS);
	if (rc < 0) {
		fprintf(stderr, "Failed to modify QP to INIT\n");
		return rc;
	}
	rc = drnic_query_gid(ctx->dev, 1, o->gidx, &gid);
	if (rc < 0) {
		fprintf(stderr, "can't read sgid of index %d\n", o->gidx);
		return rc;
	}
	ctx->local.lid = 0;
	ctx->local.qpn = drnic_qp_num(ctx->qp);
	ctx->local.psn = (uint32_t)lrand48() & 0xffffff;
	memcpy(ctx->local.gid, gid.raw, 16);
	ctx->local.rkey = drnic_mr_rkey(ctx->mr);
	ctx->local.addr = (uintptr_t)ctx->buf;
	ctx->local.size = (uint32_t)RTE_MIN(ctx->buf_len, (size_t)UINT32_MAX);
	return 0;
}

static int
pp_connect(struct pp_ctx *ctx, const struct drnic_cm_dest *dest)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = ctx->o->mtu;
	a.dest_qp_num = dest->qpn;
	a.rq_psn = dest->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.hop_limit = 1;
	memcpy(a.ah_attr.grh.dgid.raw, dest->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)ctx->o->gidx;
	a.ah_attr.sl = (uint8_t)ctx->o->sl;
	a.ah_attr.port_num = 1;
	rc = drnic_modify_qp(ctx->qp, &a, DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU |
			     DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN | DRNIC_QP_MAX_DEST_RD_ATOMIC |
			     DRNIC_QP_MIN_RNR_TIMER);
	if (rc < 0) {
		fprintf(stderr, "Failed to modify QP to RTR: %s\n", strerror(-rc));
		return rc;
	}
	a.qp_state = DRNIC_QPS_RTS;
	a.timeout = (uint8_t)ctx->o->qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = ctx->local.psn;
	a.max_rd_atomic = 1;
	rc = drnic_modify_qp(ctx->qp, &a, DRNIC_QP_STATE | DRNIC_QP_TIMEOUT | DRNIC_QP_RETRY_CNT |
			     DRNIC_QP_RNR_RETRY | DRNIC_QP_SQ_PSN | DRNIC_QP_MAX_QP_RD_ATOMIC);
	if (rc < 0)
		fprintf(stderr, "Failed to modify QP to RTS: %s\n", strerror(-rc));
	return rc;
}

static int
pp_connect_cb(void *arg, const struct drnic_cm_dest *remote)
{
	return pp_connect(arg, remote);
}

/* DIR/NAME of --steps; 0 when it exists. */
static int
pp_step_file(const struct pp_opts *o, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", o->steps, name);
	return access(path, F_OK);
}

/* While waiting on TCP: keep the inline engines (ARP, ACKs) running; a
 * --steps server runs none while DIR/freeze exists. */
static int
pp_idle(void *arg)
{
	struct pp_ctx *ctx = arg;

	if (ctx->o->steps != NULL && ctx->o->server == NULL && pp_step_file(ctx->o, "freeze") == 0) {
		printf("server: frozen\n");
		fflush(stdout);
		while (pp_step_file(ctx->o, "freeze") == 0)
			usleep(1000);
		printf("server: thawed\n");
		fflush(stdout);
	}
	drnic_device_progress(ctx->dev);
	return 0;
}

static void
pp_print_dest(const char *what, const struct drnic_cm_dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid, gid, sizeof(gid));
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what, d->lid, d->qpn, d->psn,
	       gid);
}

static int
pp_post_recv(struct pp_ctx *ctx, uint32_t slot)
{
	struct drnic_sge sge = {
		.addr = (uintptr_t)(ctx->rbuf + (size_t)slot * ctx->o->size),
		.length = ctx->o->size,
		.lkey = drnic_mr_lkey(ctx->mr),
	};
	struct drnic_recv_wr wr = {
		.wr_id = (uint64_t)slot << 8 | PP_RECV_WRID, .sg_list = &sge, .num_sge = 1,
	};
	struct drnic_recv_wr *bad;

	return drnic_post_recv(ctx->qp, &wr, &bad);
}

static int
pp_post_send(struct pp_ctx *ctx, uint32_t k)
{
	struct drnic_sge sge = {
		.addr = (uintptr_t)ctx->buf, .length = ctx->o->size, .lkey = drnic_mr_lkey(ctx->mr),
	};
	struct drnic_send_wr wr = {
		.wr_id = PP_SEND_WRID, .sg_list = &sge, .num_sge = 1, .opcode = DRNIC_WR_SEND,
		.send_flags = DRNIC_SEND_SIGNALED,
	};
	struct drnic_send_wr *bad;

	if (ctx->o->check)
		pp_fill(ctx->buf, ctx->o->size, k);
	return drnic_post_send(ctx->qp, &wr, &bad);
}

/* Wait for completions: poll, or (with -e) sleep on the channel. */
static int
pp_poll(struct pp_ctx *ctx, struct drnic_wc *wc, int max, uint64_t deadline_us)
{
	int n;

	for (;;) {
		n = drnic_cq_poll(ctx->cq, max, wc);
		if (n != 0)
			return n;
		if (pp_now_us() > deadline_us) {
			fprintf(stderr, "Timed out waiting for completions\n");
			return -ETIMEDOUT;
		}
		if (ctx->o->events) {
			struct drnic_cq *ev_cq;
			void *ev_ctx;

			if (drnic_cq_req_notify(ctx->cq, 0) < 0)
				return -EIO;
			n = drnic_cq_poll(ctx->cq, max, wc);
			if (n != 0)
				return n;
			/* Inline engines need this thread: only block when
			 * another thread runs them. */
			if ((ctx->inline_mode ? drnic_try_get_cq_event(ctx->ch, &ev_cq, &ev_ctx) :
			     drnic_get_cq_event(ctx->ch, &ev_cq, &ev_ctx)) == 0) {
				ctx->cq_events++;
				drnic_ack_cq_events(ev_cq, 1);
			}
		}
	}
}

static int
pp_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Print the median of @p n iteration times (ns), sorting them. */
static void
pp_print_median(uint64_t *t, uint32_t n)
{
	if (t == NULL || n == 0)
		return;
	qsort(t, n, sizeof(*t), pp_cmp_u64);
	printf("median %.2f usec/iter (min %.2f, p99 %.2f, %u iters)\n", (double)t[n / 2] / 1e3,
	       (double)t[0] / 1e3, (double)t[(uint64_t)n * 99 / 100] / 1e3, n);
}

static uint64_t
pp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
pp_pingpong(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	uint64_t start, end, deadline = pp_now_us() + (uint64_t)o->timeout_s * 1000000u;
	uint32_t rcnt = 0, scnt = 0, pending;
	struct drnic_wc wc[16];
	int n, j, rc;

	uint64_t *it = calloc(o->iters, sizeof(*it)), t_last;
	uint32_t nit = 0;

	pending = PP_RECV_WRID;
	start = pp_now_us();
	t_last = pp_now_ns();
	if (o->server != NULL) {
		rc = pp_post_send(ctx, scnt);
		if (rc < 0) {
			fprintf(stderr, "Couldn't post send\n");
			return rc;
		}
		pending |= PP_SEND_WRID;
	}
	while (rcnt < o->iters || scnt < o->iters) {
		n = pp_poll(ctx, wc, (int)RTE_DIM(wc), deadline);
		if (n < 0)
			return n;
		for (j = 0; j < n; j++) {
			uint32_t kind = (uint32_t)(wc[j].wr_id & 0xff);

			if (wc[j].status != DRNIC_WC_SUCCESS) {
				fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
					drnic_wc_status_str(wc[j].status), wc[j].status, (int)kind);
				return -EIO;
			}
			if (kind == PP_SEND_WRID) {
				scnt++;
			} else if (kind == PP_RECV_WRID) {
				uint32_t slot = (uint32_t)(wc[j].wr_id >> 8);

				if (o->check) {
					long bad = pp_verify(ctx->rbuf + (size_t)slot * o->size,
							     o->size, rcnt);

					if (wc[j].byte_len != o->size || bad >= 0) {
						fprintf(stderr, "Data check failed: message %u, %u bytes, first bad byte %ld\n",
							rcnt, wc[j].byte_len, bad);
						return -EIO;
					}
				}
				rcnt++;
				rc = pp_post_recv(ctx, slot);
				if (rc < 0) {
					fprintf(stderr, "Couldn't post receive\n");
					return rc;
				}
			} else {
				fprintf(stderr, "Completion for unknown wr_id %d\n", (int)kind);
				return -EIO;
			}
			pending &= ~kind;
			if (pending == 0 && it != NULL && nit < o->iters) {
				uint64_t t = pp_now_ns();

				it[nit++] = t - t_last;
				t_last = t;
			}
			if (scnt < o->iters && pending == 0) {
				rc = pp_post_send(ctx, scnt);
				if (rc < 0) {
					fprintf(stderr, "Couldn't post send\n");
					return rc;
				}
				pending = PP_RECV_WRID | PP_SEND_WRID;
			}
		}
	}
	end = pp_now_us();
	{
		double usec = (double)(end - start);
		long long bytes = (long long)o->size * o->iters * 2;

		printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1000000.,
		       (double)bytes * 8. / usec);
		printf("%u iters in %.2f seconds = %.2f usec/iter\n", o->iters, usec / 1000000.,
		       usec / o->iters);
		if (o->check)
			printf("data check: %u messages of %u bytes verified\n", rcnt, o->size);
	}
	pp_print_median(it, nit);
	free(it);
	return 0;
}

/* Post a WRITE of the outgoing area into the peer's incoming area. */
static int
pp_lat_post(struct pp_ctx *ctx, uint32_t k, uint8_t v)
{
	const struct pp_opts *o = ctx->o;
	uint8_t *out = ctx->buf + o->size;
	struct drnic_sge sge = {
		.addr = (uintptr_t)out, .length = o->size, .lkey = drnic_mr_lkey(ctx->mr),
	};
	struct drnic_send_wr wr = {
		.wr_id = k, .sg_list = &sge, .num_sge = 1, .opcode = DRNIC_WR_RDMA_WRITE,
		.send_flags = DRNIC_SEND_SIGNALED,
	};
	struct drnic_send_wr *bad;

	if (o->check)
		pp_fill(out, o->size - 1, k);
	out[o->size - 1] = v;
	wr.wr.rdma.remote_addr = ctx->remote.addr;
	wr.wr.rdma.rkey = ctx->remote.rkey;
	return drnic_post_send(ctx->qp, &wr, &bad);
}

/*
 * WRITE ping-pong (ib_write_lat): the client writes first; each side waits
 * for the last byte of its incoming area to show the peer's iteration, then
 * writes its own. Polling the CQ reaps send completions and, with inline
 * progress, runs the engines.
 */
static int
pp_write_lat(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	volatile uint8_t *in_last = ctx->buf + o->size - 1;
	uint64_t deadline = pp_now_us() + (uint64_t)o->timeout_s * 1000000u;
	uint64_t *it = calloc(o->iters, sizeof(*it)), t_last, start, end;
	uint32_t k, outstanding = 0, nit = 0;
	struct drnic_wc wc[PP_LAT_SQ];
	bool client = o->server != NULL;
	int n, j, rc;

	if (o->size > ctx->remote.size) {
		fprintf(stderr, "Server buffer too small (%u bytes)\n", ctx->remote.size);
		free(it);
		return -EINVAL;
	}
	start = pp_now_us();
	t_last = pp_now_ns();
	for (k = 0; k < o->iters; k++) {
		uint8_t v = (uint8_t)(k % 255u + 1);

		/* Client: write k, then wait for the answer k. Server: wait
		 * for k, then answer it. */
		if (client) {
			rc = pp_lat_post(ctx, k, v);
			if (rc < 0)
				goto post_fail;
			outstanding++;
		}
		/* Wait for the peer's iteration k. */
		while (*in_last != v) {
			n = drnic_cq_poll(ctx->cq, PP_LAT_SQ, wc);
			if (n < 0) {
				free(it);
				return n;
			}
			for (j = 0; j < n; j++) {
				if (wc[j].status != DRNIC_WC_SUCCESS) {
					fprintf(stderr, "Failed status %s (%d) for WRITE %" PRIu64 "\n",
						drnic_wc_status_str(wc[j].status), wc[j].status,
						wc[j].wr_id);
					free(it);
					return -EIO;
				}
				outstanding--;
			}
			if (n == 0 && pp_now_us() > deadline) {
				fprintf(stderr, "Timed out waiting for WRITE %u\n", k);
				free(it);
				return -ETIMEDOUT;
			}
		}
		rte_smp_rmb();
		if (o->check) {
			long bad = pp_verify(ctx->buf, o->size - 1, k);

			if (bad >= 0) {
				fprintf(stderr, "Data check failed: WRITE %u, byte %ld\n", k, bad);
				free(it);
				return -EIO;
			}
		}
		if (!client) {
			/* Reap before the send queue fills. */
			while (outstanding >= PP_LAT_SQ - 1) {
				n = drnic_cq_poll(ctx->cq, PP_LAT_SQ, wc);
				if (n < 0) {
					free(it);
					return n;
				}
				outstanding -= (uint32_t)n;
			}
			rc = pp_lat_post(ctx, k, v);
			if (rc < 0)
				goto post_fail;
			outstanding++;
		}
		if (it != NULL) {
			uint64_t t = pp_now_ns();

			it[nit++] = t - t_last;
			t_last = t;
		}
		while (client && outstanding >= PP_LAT_SQ - 1) {
			n = drnic_cq_poll(ctx->cq, PP_LAT_SQ, wc);
			if (n < 0) {
				free(it);
				return n;
			}
			outstanding -= (uint32_t)n;
		}
	}
	/* The last WRITEs' completions. */
	while (outstanding > 0 && pp_now_us() < deadline) {
		n = drnic_cq_poll(ctx->cq, PP_LAT_SQ, wc);
		if (n < 0)
			break;
		outstanding -= (uint32_t)n;
	}
	end = pp_now_us();
	printf("%u WRITE round trips of %u bytes in %.2f seconds = %.2f usec/iter\n", o->iters,
	       o->size, (double)(end - start) / 1e6, (double)(end - start) / o->iters);
	if (o->check)
		printf("data check: %u writes of %u bytes verified\n", o->iters, o->size);
	pp_print_median(it, nit);
	free(it);
	return 0;

post_fail:
	fprintf(stderr, "Couldn't post WRITE %u: %s\n", k, strerror(-rc));
	free(it);
	return rc;
}

/* Client of the WRITE run: ITERS writes, each its own remote place. */
static int
pp_write_client(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	uint64_t start, end, deadline = pp_now_us() + (uint64_t)o->timeout_s * 1000000u;
	uint32_t posted = 0, done = 0;
	struct drnic_wc wc[32];
	int n, j, rc;

	if ((uint64_t)o->size * o->iters > ctx->remote.size) {
		fprintf(stderr, "Server buffer too small (%u bytes)\n", ctx->remote.size);
		return -EINVAL;
	}
	start = pp_now_us();
	while (done < o->iters) {
		while (posted < o->iters && posted - done < o->window) {
			uint8_t *src = ctx->buf + (size_t)(posted % o->window) * o->size;
			struct drnic_sge sge = {
				.addr = (uintptr_t)src, .length = o->size,
				.lkey = drnic_mr_lkey(ctx->mr),
			};
			struct drnic_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = DRNIC_WR_RDMA_WRITE, .send_flags = DRNIC_SEND_SIGNALED,
			};
			struct drnic_send_wr *bad;

			wr.wr.rdma.remote_addr = ctx->remote.addr + (uint64_t)posted * o->size;
			wr.wr.rdma.rkey = ctx->remote.rkey;
			pp_fill(src, o->size, posted);
			rc = drnic_post_send(ctx->qp, &wr, &bad);
			if (rc < 0) {
				fprintf(stderr, "Couldn't post WRITE %u: %s\n", posted, strerror(-rc));
				return rc;
			}
			posted++;
		}
		n = pp_poll(ctx, wc, (int)RTE_DIM(wc), deadline);
		if (n < 0)
			return n;
		for (j = 0; j < n; j++) {
			if (wc[j].status != DRNIC_WC_SUCCESS) {
				fprintf(stderr, "Failed status %s (%d) for WRITE %" PRIu64 "\n",
					drnic_wc_status_str(wc[j].status), wc[j].status, wc[j].wr_id);
				return -EIO;
			}
			if (wc[j].wr_id != done) {
				fprintf(stderr, "WRITE %" PRIu64 " completed, expected %u\n",
					wc[j].wr_id, done);
				return -EIO;
			}
			done++;
		}
	}
	end = pp_now_us();
	{
		double usec = (double)(end - start);
		long long bytes = (long long)o->size * o->iters;

		printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1000000.,
		       (double)bytes * 8. / usec);
		printf("%u iters in %.2f seconds = %.2f usec/iter\n", o->iters, usec / 1000000.,
		       usec / o->iters);
	}
	return 0;
}

enum pp_step_op { PP_STEP_WRITE, PP_STEP_READ, PP_STEP_PROBE };

static const char *const pp_step_names[] = { "write", "read", "probe" };

/* --steps client: wait for DIR/op.<i>, running the engine. */
static int
pp_step_wait(struct pp_ctx *ctx, uint32_t i, uint64_t deadline_us)
{
	char name[32];

	snprintf(name, sizeof(name), "op.%u", i);
	printf("op %u: waiting for %s/%s\n", i, ctx->o->steps, name);
	fflush(stdout);
	while (pp_step_file(ctx->o, name) != 0) {
		if (pp_now_us() > deadline_us) {
			fprintf(stderr, "Timed out waiting for %s/%s\n", ctx->o->steps, name);
			return -ETIMEDOUT;
		}
		if (ctx->inline_mode)
			drnic_device_progress(ctx->dev);
		else
			usleep(100);
	}
	return 0;
}

/*
 * --steps client: ITERS WRITEs, a READ of the last slot, a probe WRITE past
 * the server's MR; each gated by a file, each completion printed with its
 * status. The verdict is the caller's (a test): only a failure to post or
 * to complete at all fails the run.
 */
static int
pp_steps_client(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	uint64_t deadline = pp_now_us() + (uint64_t)o->timeout_s * 1000000u;
	uint8_t *rd = ctx->buf + (size_t)(o->window - 1) * o->size;
	uint32_t i, nops = o->iters + 2;
	struct drnic_wc wc;
	int n, rc;

	if ((uint64_t)o->size * o->iters > ctx->remote.size || o->window < 2) {
		fprintf(stderr, "Server buffer too small (%u bytes) or window under 2\n",
			ctx->remote.size);
		return -EINVAL;
	}
	for (i = 0; i < nops; i++) {
		enum pp_step_op op = i < o->iters ? PP_STEP_WRITE :
				     i == o->iters ? PP_STEP_READ : PP_STEP_PROBE;
		uint8_t *local = op == PP_STEP_READ ? rd : ctx->buf + (size_t)(i % (o->window - 1)) * o->size;
		struct drnic_sge sge = {
			.addr = (uintptr_t)local, .length = o->size, .lkey = drnic_mr_lkey(ctx->mr),
		};
		struct drnic_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = op == PP_STEP_READ ? DRNIC_WR_RDMA_READ : DRNIC_WR_RDMA_WRITE,
			.send_flags = DRNIC_SEND_SIGNALED,
		};
		struct drnic_send_wr *bad;

		rc = pp_step_wait(ctx, i, deadline);
		if (rc < 0)
			return rc;
		wr.wr.rdma.rkey = ctx->remote.rkey;
		if (op == PP_STEP_WRITE) {
			pp_fill(local, o->size, i);
			wr.wr.rdma.remote_addr = ctx->remote.addr + (uint64_t)i * o->size;
		} else if (op == PP_STEP_READ) {
			memset(local, 0, o->size);
			wr.wr.rdma.remote_addr = ctx->remote.addr + (uint64_t)(o->iters - 1) * o->size;
		} else {
			wr.wr.rdma.remote_addr = ctx->remote.addr + ctx->remote.size;
		}
		rc = drnic_post_send(ctx->qp, &wr, &bad);
		if (rc < 0) {
			fprintf(stderr, "Couldn't post %s %u: %s\n", pp_step_names[op], i,
				strerror(-rc));
			return rc;
		}
		n = pp_poll(ctx, &wc, 1, deadline);
		if (n < 0)
			return n;
		printf("wr %" PRIu64 " %s: %s\n", wc.wr_id, pp_step_names[op],
		       drnic_wc_status_str(wc.status));
		if (op == PP_STEP_READ && wc.status == DRNIC_WC_SUCCESS) {
			long b = pp_verify(rd, o->size, o->iters - 1);

			if (b < 0)
				printf("read check: ok\n");
			else
				printf("read check: bad at byte %ld: %02x %02x %02x %02x\n", b, rd[b],
				       rd[b + 1 < o->size ? b + 1 : b], rd[b + 2 < o->size ? b + 2 : b],
				       rd[b + 3 < o->size ? b + 3 : b]);
		}
		fflush(stdout);
	}
	return 0;
}

/* --steps server: every slot and both guards, each reported; a bad slot
 * with up to 8 of its wrong 8-byte runs (offset, bytes, as text). */
static int
pp_steps_server_verify(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	const uint8_t *g[2] = { ctx->alloc, ctx->buf + ctx->buf_len };
	uint32_t k, bad = 0, touched, runs;
	size_t j, e, x;

	for (k = 0; k < o->iters; k++) {
		const uint8_t *p = ctx->buf + (size_t)k * o->size;

		if (pp_verify(p, o->size, k) < 0) {
			printf("slot %u: ok\n", k);
			continue;
		}
		bad++;
		for (j = 0; j < o->size && p[j] == PP_FILL_BYTE; j++)
			;
		if (j == o->size) {
			printf("slot %u: bad: never written (all %u bytes still 0x%02x)\n", k,
			       o->size, PP_FILL_BYTE);
			continue;
		}
		printf("slot %u: bad:", k);
		for (j = 0, runs = 0; j < o->size && runs < 8; j++) {
			if (p[j] == pp_pattern(k, j))
				continue;
			e = RTE_MIN(j + 8, (size_t)o->size);
			printf(" @%zu", j);
			for (x = j; x < e; x++)
				printf(" %02x", p[x]);
			printf(" \"");
			for (x = j; x < e; x++)
				putchar(p[x] >= 0x20 && p[x] < 0x7f ? p[x] : '.');
			printf("\";");
			j = e - 1;
			runs++;
		}
		printf("\n");
	}
	for (k = 0, touched = 0; k < 2; k++)
		for (j = 0; j < PP_GUARD; j++)
			if (g[k][j] != PP_GUARD_BYTE) {
				printf("guards: %s guard touched at byte %zu: %02x\n",
				       k == 0 ? "front" : "back", j, g[k][j]);
				touched++;
				break;
			}
	if (touched == 0)
		printf("guards: ok\n");
	fflush(stdout);
	return bad + touched == 0 ? 0 : -EIO;
}

static int
pp_write_server_verify(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	uint32_t k;

	for (k = 0; k < o->iters; k++) {
		long bad = pp_verify(ctx->buf + (size_t)k * o->size, o->size, k);

		if (bad >= 0) {
			fprintf(stderr, "Data check failed: WRITE %u, byte %ld\n", k, bad);
			return -EIO;
		}
	}
	printf("write check: %u writes of %u bytes = %llu bytes verified\n", o->iters, o->size,
	       (unsigned long long)o->iters * o->size);
	return 0;
}

static void
pp_close(struct pp_ctx *ctx)
{
	struct drnic_async_event ev;

	if (ctx->dev != NULL && ctx->o->stats) {
		drnic_device_stats_print(ctx->dev, "", stdout);
		drnic_qp_stats_print(ctx->qp, "", stdout);
		fflush(stdout);
	}
	if (ctx->dev != NULL)
		while (drnic_try_get_async_event(drnic_device_async_queue(ctx->dev), &ev) == 0)
			drnic_ack_async_event(drnic_device_async_queue(ctx->dev), &ev);
	if (ctx->qp != NULL)
		drnic_destroy_qp(ctx->qp);
	if (ctx->mr != NULL)
		drnic_dereg_mr(ctx->mr);
	if (ctx->cq != NULL)
		drnic_cq_destroy(ctx->cq);
	if (ctx->ch != NULL)
		drnic_destroy_comp_channel(ctx->ch);
	if (ctx->pd != NULL)
		drnic_dealloc_pd(ctx->pd);
	drnic_free(ctx->alloc);
	if (ctx->dev != NULL)
		drnic_device_close(ctx->dev);
}

static int
pp_run(struct pp_ctx *ctx)
{
	const struct pp_opts *o = ctx->o;
	struct drnic_cm_opts co = {
		.fmt = o->fmt, .port = o->port, .timeout_ms = o->timeout_s * 1000u,
		.retry_ms = o->timeout_s * 1000u, .idle = pp_idle, .idle_arg = ctx,
	};
	struct drnic_cm *listener = NULL, *cm;
	int rc;

	if (!o->write_bw && !o->write_lat) {
		uint32_t i;

		for (i = 0; i < o->rx_depth; i++) {
			rc = pp_post_recv(ctx, i);
			if (rc < 0) {
				fprintf(stderr, "Couldn't post receive (%u)\n", i);
				return rc;
			}
		}
	}
	pp_print_dest("local address: ", &ctx->local);
	if (o->server != NULL) {
		cm = drnic_cm_connect(o->server, &co);
		if (cm == NULL) {
			fprintf(stderr, "Couldn't connect to %s:%d: %s\n", o->server, o->port,
				strerror(rte_errno));
			return -rte_errno;
		}
		rc = drnic_cm_client_exchange(cm, &ctx->local, &ctx->remote);
		if (rc == 0) {
			pp_print_dest("remote address:", &ctx->remote);
			rc = pp_connect(ctx, &ctx->remote);
		}
	} else {
		listener = drnic_cm_listen(&co);
		if (listener == NULL) {
			fprintf(stderr, "Couldn't listen to port %d: %s\n", o->port,
				strerror(rte_errno));
			return -rte_errno;
		}
		cm = drnic_cm_accept(listener);
		drnic_cm_close(listener);
		if (cm == NULL) {
			fprintf(stderr, "accept() failed: %s\n", strerror(rte_errno));
			return -rte_errno;
		}
		rc = drnic_cm_server_exchange(cm, &ctx->local, &ctx->remote, pp_connect_cb, ctx);
		if (rc == 0)
			pp_print_dest("remote address:", &ctx->remote);
	}
	if (rc < 0) {
		fprintf(stderr, "Couldn't exchange addresses: %s\n", strerror(-rc));
		drnic_cm_close(cm);
		return rc;
	}
	if (o->write_lat) {
		rc = pp_write_lat(ctx);
		if (rc == 0)
			rc = drnic_cm_sync(cm, "end");
	} else if (!o->write_bw) {
		if (o->fmt == DRNIC_CM_FMT_RC_PINGPONG) {
			drnic_cm_close(cm);   /* as ibv_rc_pingpong */
			cm = NULL;
		}
		rc = pp_pingpong(ctx);
		if (cm != NULL && rc == 0)
			rc = drnic_cm_sync(cm, "end");
	} else if (o->server != NULL) {
		rc = o->steps != NULL ? pp_steps_client(ctx) : pp_write_client(ctx);
		/* Tell the server the data is in place; hear its verdict. */
		if (rc == 0)
			rc = drnic_cm_sync(cm, "written");
		if (rc == 0) {
			rc = drnic_cm_sync(cm, "verified");
			if (rc == -EPROTO)
				fprintf(stderr, "The server found wrong data\n");
		}
	} else {
		rc = drnic_cm_sync(cm, "written");
		if (rc == 0 && o->steps != NULL)
			rc = drnic_cm_sync(cm, pp_steps_server_verify(ctx) == 0 ? "verified" : "bad");
		else if (rc == 0)
			rc = drnic_cm_sync(cm, pp_write_server_verify(ctx) == 0 ? "verified" : "bad");
	}
	ctx->cm = cm;
	return rc;
}

/*
 * Tear down in order: the client closes its device, then the connection; the
 * server waits for that, and for its port to see the peer go (memif), before
 * it closes its own — so no PMD handles a peer's disconnect while its port is
 * being removed. Still needed with DPDK 22.11's memif: see the known issue
 * in drivers/link/ethdev (ethl_port_teardown()).
 */
static void
pp_teardown(struct pp_ctx *ctx)
{
	struct drnic_port_attr pa;
	uint64_t end;

	/* The results are printed: keep them whatever the teardown does. */
	fflush(stdout);
	fflush(stderr);
	if (ctx->cm != NULL && ctx->o->server == NULL && ctx->dev != NULL) {
		(void)drnic_cm_wait_close(ctx->cm);
		end = pp_now_us() + 200000;
		while (pp_now_us() < end && drnic_query_port(ctx->dev, 1, &pa) == 0 &&
		       pa.state == DRNIC_PORT_ACTIVE)
			usleep(1000);
	}
	pp_close(ctx);
	drnic_cm_close(ctx->cm);
	ctx->cm = NULL;
}

int
main(int argc, char **argv)
{
	struct drnic_env_opts eo = { .name = "drnic-pingpong" };
	struct pp_opts o;
	struct pp_ctx ctx;
	int rc;

	if (pp_parse(argc, argv, &o) < 0) {
		usage(argv[0]);
		return 1;
	}
	srand48((long)getpid() * (long)time(NULL));
	eo.file_prefix = o.file_prefix;
	eo.lcores = o.lcores;
	eo.extra_args = o.nb_eal > 0 ? o.eal : NULL;
	rc = drnic_env_init(&eo, NULL);
	if (rc < 0) {
		fprintf(stderr, "EAL start failed: %s\n", strerror(-rc));
		return 1;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.o = &o;
	rc = pp_init(&ctx);
	if (rc == 0)
		rc = pp_run(&ctx);
	pp_teardown(&ctx);
	drnic_env_fini();
	return rc == 0 ? 0 : 1;
}
