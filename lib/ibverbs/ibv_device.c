/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic's libibverbs.so.1: configuration, EAL start, the device list,
 * contexts, device/port/GID queries, async events, and starting the progress
 * helper (lib/progress) for the device.
 *
 * Configuration: DRNIC_CONFIG names an INI file. [device] (and [device.NAME])
 * are drnic_config_load()'s, the progress helper's progress_* keys among them
 * (config/drnic.ini); [eal] and [ibverbs] are read here:
 *
 *   [eal]      lcores = 0            EAL core list (default: every allowed CPU)
 *              file_prefix = NAME    --file-prefix (default: private memory)
 *              mem_mb = 256          memory to reserve
 *              args = --vdev=...     extra EAL arguments, split on spaces
 *              log_level = 4         DPDK log level (default 4, errors)
 *   [ibverbs]  vendor_id = 0x02c9    reported vendor id
 *              vendor_part_id = 4119 reported part id (4119: ConnectX-5)
 *              hw_ver = 0
 *              port_state = always_active | link
 *              peer_ipv4 = A.B.C.D   destination of AVs without a GRH
 *              progress_* = ...      still taken here (where they were first),
 *                                    as [device]'s: drnic_config_set()
 *
 * Environment overrides: DRNIC_VENDOR_ID, DRNIC_VENDOR_PART_ID.
 *
 * drnicd: with DRNIC_DAEMON=SOCKET, or without DRNIC_DAEMON and DRNIC_CONFIG
 * when a daemon's socket is at /run/drnic/drnicd.sock, the process attaches
 * to that daemon (a DPDK secondary of its EAL): the device list is the
 * daemon's devices, their engines run in the daemon, and [device] and [eal]
 * are not read. DRNIC_DAEMON= (empty) keeps the process on its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>
#include <arpa/inet.h>

#include <rte_branch_prediction.h>
#include <rte_cfgfile.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "drnic_engine.h"
#include "drnic_env.h"
#include "drnic_progress.h"
#include "ibv_priv.h"
#include "rpc.h"

#undef ibv_query_port

/* Default reported ids: drnic's vendor id (as Soft-RoCE's: no OUI) and an
 * unknown part. */
#define DIBV_DEFAULT_VENDOR_ID DRNIC_VENDOR_ID
#define DIBV_DEFAULT_PART_ID 0x0d1c

static pthread_mutex_t dibv_lock = PTHREAD_MUTEX_INITIALIZER;
static bool dibv_started;
static int dibv_start_err;
#define DIBV_MAX_DEVS 8
static struct dibv_device *dibv_devs[DIBV_MAX_DEVS];
static int dibv_nb_devs;
static bool dibv_attached;   /* to drnicd: its devices, its engines */

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

int
dibv_errno(int neg)
{
	int e = neg < 0 ? -neg : neg;

	if (e == 0)
		e = EINVAL;
	errno = e;
	return e;
}

/* ------------------------------------------------------------------------ */
/* Progress helper                                                          */
/* ------------------------------------------------------------------------ */

/*
 * In inline progress mode the engine moves only inside drnic calls. Verbs
 * programs do not always make them (perftest's latency tests spin on a byte
 * of their buffer, a bandwidth server waits on TCP, an event-driven program
 * sleeps in ibv_get_cq_event()), so the device's first open starts lib/
 * progress's helper (progress_thread = auto: in inline mode), and the polls
 * and posts of ibv_verbs.c tell it about themselves (drnic_progress_app_*).
 */

/* The device whose engine counters the trace reads; NULL when closed. */
static struct drnic_device *_Atomic dibv_progress_dev;

bool
dibv_debug(void)
{
	const char *v = getenv("DRNIC_IBV_DEBUG");

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

/*
 * DRNIC_IBV_TRACE=FILE (debug; README.md, "Progress"): events of the
 * application's polls and posts and of the helper, in memory, written to FILE
 * when the helper stops. Timestamps are CLOCK_REALTIME, to line up two
 * processes' traces and a capture's.
 */
struct dibv_tev {
	uint64_t t0, t1;      /* start, end */
	uint32_t type;        /* 1 poll, 2 post, 10 helper run, 11 armed sleep, 12 quiet sleep */
	int32_t n;            /* completions, work, or how a sleep ended */
	uint32_t rx, tx;      /* frames the engine received / sent meanwhile */
};
#define DIBV_TRACE_MAX (1u << 20)
static struct dibv_tev *dibv_tbuf;
static _Atomic uint32_t dibv_tn;
bool dibv_trace_on;

uint64_t
dibv_trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
dibv_trace_rxtx(uint64_t *rx, uint64_t *tx)
{
	struct drnic_device *d = atomic_load_explicit(&dibv_progress_dev, memory_order_acquire);
	struct drnic_engine_stats st;

	*rx = *tx = 0;
	if (d != NULL && drnic_engine_stats_get(d, 0, &st) == 0) {
		*rx = st.rx_packets;
		*tx = st.tx_packets;
	}
}

void
dibv_trace(uint32_t type, uint64_t t0, int n, uint64_t rx0, uint64_t tx0)
{
	uint64_t rx, tx;
	uint32_t i;

	if (dibv_tbuf == NULL)
		return;
	dibv_trace_rxtx(&rx, &tx);
	i = atomic_fetch_add(&dibv_tn, 1);
	if (i >= DIBV_TRACE_MAX)
		return;
	dibv_tbuf[i] = (struct dibv_tev){ t0, dibv_trace_now(), type, n, (uint32_t)(rx - rx0),
					   (uint32_t)(tx - tx0) };
}

/* The helper's runs and sleeps (its thread only: one event at a time). A
 * run's frames are counted from its start; a sleep's are the totals. */
static void
dibv_trace_helper(void *arg, enum drnic_progress_trace_event ev, bool begin, int result)
{
	static uint64_t t0, rx0, tx0;

	RTE_SET_USED(arg);
	if (begin) {
		t0 = dibv_trace_now();
		rx0 = tx0 = 0;
		if (ev == DRNIC_PROGRESS_TRACE_RUN)
			dibv_trace_rxtx(&rx0, &tx0);
		return;
	}
	dibv_trace((uint32_t)ev, t0, result, rx0, tx0);
}

static void
dibv_trace_dump(void)
{
	const char *p = getenv("DRNIC_IBV_TRACE");
	FILE *f;
	uint32_t i, n = atomic_load(&dibv_tn);

	if (dibv_tbuf == NULL || p == NULL || (f = fopen(p, "w")) == NULL)
		return;
	if (n > DIBV_TRACE_MAX)
		n = DIBV_TRACE_MAX;
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 " %" PRIu64 " %u %d %u %u\n", dibv_tbuf[i].t0, dibv_tbuf[i].t1,
			dibv_tbuf[i].type, dibv_tbuf[i].n, dibv_tbuf[i].rx, dibv_tbuf[i].tx);
	fclose(f);
}

static bool dibv_helper_on;

static void
dibv_helper_start(struct drnic_device *dev, const struct drnic_progress_opts *o)
{
	char what[256];
	int rc;

	if (dibv_helper_on)
		return;
	if (getenv("DRNIC_IBV_TRACE") != NULL && dibv_tbuf == NULL) {
		dibv_tbuf = calloc(DIBV_TRACE_MAX, sizeof(*dibv_tbuf));
		dibv_trace_on = dibv_tbuf != NULL;
	}
	(void)drnic_progress_trace_set(dibv_trace_on ? dibv_trace_helper : NULL, NULL);
	rc = drnic_progress_start(dev, o);
	if (rc < 0) {
		fprintf(stderr, "drnic ibverbs: cannot start the progress thread: %s\n",
			strerror(-rc));
		return;
	}
	dibv_helper_on = true;
	if (dibv_debug() && drnic_progress_describe(what, sizeof(what)) > 0)
		fprintf(stderr, "drnic ibverbs: progress helper: %s\n", what);
}

static void
dibv_helper_stop_join(void)
{
	struct drnic_progress_stats s;

	if (!dibv_helper_on)
		return;
	(void)drnic_progress_stop();
	dibv_helper_on = false;
	dibv_trace_dump();
	if (dibv_debug() && drnic_progress_stats_get(&s) == 0)
		fprintf(stderr, "drnic ibverbs: progress helper: %" PRIu64 " sleeps (%" PRIu64
			" ended by frames, %" PRIu64 " by posts, %" PRIu64 " timeouts), %" PRIu64
			" last looks with work, %" PRIu64 " handed over (%" PRIu64
			" taken back), %" PRIu64 " naps, %" PRIu64 " quiet naps, spin grown %" PRIu64
			" times (longest %" PRIu64 " us)\n",
			s.sleeps, s.frames, s.pokes, s.timeouts, s.last_work, s.handovers,
			s.handover_self, s.naps, s.quiet_naps, s.spin_grows, s.spin_max_ns / 1000);
}

/* ------------------------------------------------------------------------ */
/* Configuration and EAL                                                    */
/* ------------------------------------------------------------------------ */

struct dibv_eal {
	char lcores[128];
	char file_prefix[128];
	char args[1024];
	unsigned int mem_mb;
	int log_level;
};

static int
dibv_parse_u32(const char *v, uint32_t *out)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 0);
	if (errno != 0 || end == v || *end != '\0' || x > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

/* One [ibverbs] key; on -EINVAL, @p why says what is wrong. */
static int
dibv_apply_ibverbs_key(struct dibv_settings *s, struct drnic_config *cfg, const char *k,
		       const char *v, char *why, size_t why_len)
{
	snprintf(why, why_len, "not a number");
	if (strcmp(k, "vendor_id") == 0)
		return dibv_parse_u32(v, &s->vendor_id);
	if (strcmp(k, "vendor_part_id") == 0)
		return dibv_parse_u32(v, &s->vendor_part_id);
	if (strcmp(k, "hw_ver") == 0)
		return dibv_parse_u32(v, &s->hw_ver);
	if (strcmp(k, "port_state") == 0) {
		snprintf(why, why_len, "expected always_active or link");
		if (strcmp(v, "always_active") == 0)
			s->port_always_active = true;
		else if (strcmp(v, "link") == 0)
			s->port_always_active = false;
		else
			return -EINVAL;
		return 0;
	}
	if (strcmp(k, "peer_ipv4") == 0) {
		snprintf(why, why_len, "not an IPv4 address");
		if (inet_pton(AF_INET, v, &s->peer) != 1)
			return -EINVAL;
		s->has_peer = true;
		return 0;
	}
	/* The helper's keys were [ibverbs]'s before they joined drnic's
	 * table: the table parses them, here as in [device]. */
	if (strncmp(k, "progress_", 9) == 0) {
		int rc = drnic_config_set(cfg, k, v);

		if (rc < 0)
			(void)drnic_config_check(k, v, why, why_len);
		return rc;
	}
	snprintf(why, why_len, "unknown key");
	return -EINVAL;
}

static int
dibv_apply_eal_key(struct dibv_eal *e, const char *k, const char *v)
{
	uint32_t x;

	if (strcmp(k, "lcores") == 0)
		snprintf(e->lcores, sizeof(e->lcores), "%s", v);
	else if (strcmp(k, "file_prefix") == 0)
		snprintf(e->file_prefix, sizeof(e->file_prefix), "%s", v);
	else if (strcmp(k, "args") == 0)
		snprintf(e->args, sizeof(e->args), "%s", v);
	else if (strcmp(k, "mem_mb") == 0) {
		if (dibv_parse_u32(v, &x) < 0 || x == 0)
			return -EINVAL;
		e->mem_mb = x;
	} else if (strcmp(k, "log_level") == 0) {
		if (dibv_parse_u32(v, &x) < 0 || x > 8)
			return -EINVAL;
		e->log_level = (int)x;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* Read [eal] and [ibverbs] of @p path. */
static int
dibv_load_sections(const char *path, struct dibv_eal *e, struct dibv_settings *s,
		   struct drnic_config *cfg)
{
	static const char *const secs[] = { "eal", "ibverbs" };
	struct rte_cfgfile *f;
	unsigned int i;
	int rc = 0;

	f = rte_cfgfile_load(path, CFG_FLAG_EMPTY_VALUES);
	if (f == NULL)
		return -ENOENT;
	for (i = 0; i < 2 && rc == 0; i++) {
		struct rte_cfgfile_entry *ent;
		int n, j;

		if (!rte_cfgfile_has_section(f, secs[i]))
			continue;
		n = rte_cfgfile_section_num_entries(f, secs[i]);
		if (n <= 0)
			continue;
		ent = calloc((size_t)n, sizeof(*ent));
		if (ent == NULL) {
			rc = -ENOMEM;
			break;
		}
		n = rte_cfgfile_section_entries(f, secs[i], ent, n);
		for (j = 0; j < n && rc == 0; j++) {
			char why[64] = "unknown key or bad value";

			rc = i == 0 ? dibv_apply_eal_key(e, ent[j].name, ent[j].value) :
				      dibv_apply_ibverbs_key(s, cfg, ent[j].name, ent[j].value,
							     why, sizeof(why));
			if (rc < 0)
				fprintf(stderr, "drnic ibverbs: %s [%s]: bad key or value: %s = %s (%s)\n",
					path, secs[i], ent[j].name, ent[j].value, why);
		}
		free(ent);
	}
	rte_cfgfile_close(f);
	return rc;
}

static void
dibv_env_u32(const char *name, uint32_t *out)
{
	const char *v = getenv(name);

	if (v != NULL && *v != '\0' && dibv_parse_u32(v, out) < 0)
		fprintf(stderr, "drnic ibverbs: ignoring bad %s=%s\n", name, v);
}

/* Write @p text into file @p dir/@p rel, making its directories. */
static int
dibv_sysfs_put(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, rel) >= (int)sizeof(path))
		return -1;
	for (slash = strchr(path + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -1;
		*slash = '/';
	}
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

/*
 * The device's sysfs view, at ibdev_path. No kernel device is behind drnic,
 * so /sys/class/infiniband/<name> does not exist; the drop-in writes the
 * files verbs programs read there (UCX: device/numa_node, device/local_cpus,
 * ports/1/gids/N, ports/1/gid_attrs/types/N and ndevs/N) into a directory of
 * its own, $DRNIC_IBV_SYSFS or /tmp/drnic-sysfs-<uid>, then the device MAC,
 * with what the configuration says, and points ibdev_path there. Best effort: when it
 * cannot be written, ibdev_path stays the kernel's path, where programs find
 * nothing, as before.
 */
static void
dibv_sysfs_write(struct dibv_device *d)
{
	const struct drnic_config *c = &d->cfg;
	const char *base = getenv("DRNIC_IBV_SYSFS");
	char dir[IBV_SYSFS_PATH_MAX], tmp_base[64], rel[64], text[64], ndev[IFNAMSIZ] = "";
	const char *iface = strstr(c->link_args, "iface=");
	unsigned int i, n = 0, ncpu = (unsigned int)sysconf(_SC_NPROCESSORS_CONF);
	int len;

	/* One tree per device MAC: two processes with the same configuration
	 * write the same files; two with different ones do not meet. */
	if (base == NULL || base[0] == '\0') {
		snprintf(tmp_base, sizeof(tmp_base), "/tmp/drnic-sysfs-%u", (unsigned int)getuid());
		base = tmp_base;
	}
	len = snprintf(dir, sizeof(dir), "%s/%02x%02x%02x%02x%02x%02x/class/infiniband/%s", base,
		       c->mac[0], c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5], c->name);
	if (len < 0 || len >= (int)sizeof(dir))
		return;
	if (iface != NULL)
		sscanf(iface + 6, "%15[^,]", ndev);
	snprintf(text, sizeof(text), "%d\n", c->socket_id >= 0 ? c->socket_id : -1);
	if (dibv_sysfs_put(dir, "device/numa_node", text) != 0)
		return;
	/* Every CPU (the engines' lcores are the application's business). */
	text[0] = '\0';
	for (i = (ncpu + 31) / 32; i-- > 0;) {
		unsigned int bits = ncpu - i * 32 >= 32 ? 0xFFFFFFFFu :
				    (1u << (ncpu - i * 32)) - 1;

		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%08x%s", bits,
			 i > 0 ? "," : "\n");
	}
	(void)dibv_sysfs_put(dir, "device/local_cpus", text);
	for (i = 0; i < c->nb_ipv4 + c->nb_ipv6 && n < DRNIC_GID_TABLE_LEN; i++, n++) {
		uint8_t g[16] = { 0 };

		if (i < c->nb_ipv4) {
			g[10] = g[11] = 0xFF;
			memcpy(&g[12], &c->ipv4[i], 4);
		} else {
			memcpy(g, &c->ipv6[i - c->nb_ipv4], 16);
		}
		snprintf(text, sizeof(text), "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
			 "%02x%02x:%02x%02x:%02x%02x\n", g[0], g[1], g[2], g[3], g[4], g[5],
			 g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
		snprintf(rel, sizeof(rel), "ports/1/gids/%u", n);
		(void)dibv_sysfs_put(dir, rel, text);
		snprintf(rel, sizeof(rel), "ports/1/gid_attrs/types/%u", n);
		(void)dibv_sysfs_put(dir, rel, "RoCE v2\n");
		if (ndev[0] != '\0') {
			snprintf(rel, sizeof(rel), "ports/1/gid_attrs/ndevs/%u", n);
			snprintf(text, sizeof(text), "%s\n", ndev);
			(void)dibv_sysfs_put(dir, rel, text);
		}
	}
	snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path), "%s", dir);
}

static struct dibv_device *
dibv_device_new(const struct drnic_config *cfg, const struct dibv_settings *s)
{
	struct dibv_device *d = calloc(1, sizeof(*d));
	uint64_t g = 0;
	int i;

	if (d == NULL)
		return NULL;
	d->cfg = *cfg;
	d->set = *s;
	pthread_mutex_init(&d->lock, NULL);
	d->ibdev.node_type = IBV_NODE_CA;
	d->ibdev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->ibdev.name, sizeof(d->ibdev.name), "%s", cfg->name);
	snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs0");
	snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path),
		 "/sys/class/infiniband_verbs/uverbs0");
	snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path), "/sys/class/infiniband/%s",
		 cfg->name);
	/* EUI-64 from the MAC, as drnic's device does. */
	for (i = 0; i < 6; i++)
		g = g << 8 | cfg->mac[i];
	g = ((g & 0xFFFFFF000000ull) << 16) | 0xFFFE000000ull | (g & 0xFFFFFF);
	g ^= 0x0200000000000000ull;
	d->guid_be = htobe64(g);
	dibv_sysfs_write(d);
	return d;
}

/* Start the EAL and build the device list; once per process. */
static int
dibv_start(void)
{
	struct dibv_settings s = {
		.vendor_id = DIBV_DEFAULT_VENDOR_ID,
		.vendor_part_id = DIBV_DEFAULT_PART_ID,
		.port_always_active = true,
	};
	struct dibv_eal e = { .log_level = RTE_LOG_ERR };
	struct drnic_env_opts eo = { .name = "drnic-ibverbs" };
	const char *extra[64];
	char argbuf[1024];
	struct drnic_env_info info;
	struct drnic_config cfg, dcfg[DIBV_MAX_DEVS];
	const char *path = getenv("DRNIC_CONFIG");
	const char *daemon = getenv("DRNIC_DAEMON");
	bool guessed = false;
	cpu_set_t aff;
	bool have_aff;
	int rc, n = 0, i;

	drnic_config_init(&cfg);
	/* Without a file: inline progress, no engine lcore. */
	drnic_config_set(&cfg, "progress", "inline");
	drnic_config_set(&cfg, "engines", "1");
	if (path != NULL && *path != '\0') {
		rc = drnic_config_load(&cfg, path, NULL);
		if (rc < 0) {
			fprintf(stderr, "drnic ibverbs: cannot load DRNIC_CONFIG=%s: %s\n", path,
				strerror(-rc));
			return rc;
		}
		rc = dibv_load_sections(path, &e, &s, &cfg);
		if (rc < 0)
			return rc;
	}
	dibv_env_u32("DRNIC_VENDOR_ID", &s.vendor_id);
	dibv_env_u32("DRNIC_VENDOR_PART_ID", &s.vendor_part_id);

	/* A daemon at its usual place serves a program that names no
	 * configuration of its own. */
	if (daemon == NULL && (path == NULL || *path == '\0') &&
	    access(RPC_DEFAULT_SOCKET, F_OK) == 0) {
		daemon = RPC_DEFAULT_SOCKET;
		guessed = true;
	}
	eo.daemon = daemon != NULL ? daemon : "";
	eo.lcores = e.lcores[0] ? e.lcores : NULL;
	eo.file_prefix = e.file_prefix[0] ? e.file_prefix : NULL;
	eo.mem_mb = e.mem_mb;
	eo.log_level = e.log_level;
	if (e.args[0]) {
		char *save = NULL, *tok;

		snprintf(argbuf, sizeof(argbuf), "%s", e.args);
		for (tok = strtok_r(argbuf, " ", &save); tok != NULL && n < 63;
		     tok = strtok_r(NULL, " ", &save))
			extra[n++] = tok;
	}
	extra[n] = NULL;
	eo.extra_args = n ? extra : NULL;

	/* DPDK logs to stdout by default; keep the tools' output clean. */
	rte_openlog_stream(stderr);
	/* rte_eal_init() pins the calling thread to the main lcore's CPU; the
	 * application's thread keeps the affinity it had. */
	have_aff = sched_getaffinity(0, sizeof(aff), &aff) == 0;
	rc = drnic_env_init(&eo, &info);
	if (guessed && (rc == -ECONNREFUSED || rc == -ENOENT)) {
		/* A dead daemon's socket: this process runs its own device. */
		eo.daemon = "";
		rc = drnic_env_init(&eo, &info);
	}
	if (have_aff)
		sched_setaffinity(0, sizeof(aff), &aff);
	if (rc < 0 && rc != -EALREADY) {
		if (daemon != NULL && !guessed)
			fprintf(stderr, "drnic ibverbs: cannot attach to drnicd at %s: %s\n", daemon,
				strerror(-rc));
		else
			fprintf(stderr, "drnic ibverbs: EAL start failed: %s\n", strerror(-rc));
		return rc;
	}
	dibv_attached = rc == 0 && info.attached;
	if (!dibv_attached) {
		dibv_devs[0] = dibv_device_new(&cfg, &s);
		if (dibv_devs[0] == NULL)
			return -ENOMEM;
		dibv_nb_devs = 1;
		return 0;
	}
	/* The daemon's devices, as it configured them. */
	n = drnic_device_list(dcfg, DIBV_MAX_DEVS);
	if (n < 0) {
		fprintf(stderr, "drnic ibverbs: drnicd's devices: %s\n", strerror(-n));
		return n;
	}
	for (i = 0; i < n && i < DIBV_MAX_DEVS; i++) {
		dibv_devs[i] = dibv_device_new(&dcfg[i], &s);
		if (dibv_devs[i] == NULL)
			return -ENOMEM;
		dibv_nb_devs = i + 1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Device list                                                              */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **l;
	int i;

	pthread_mutex_lock(&dibv_lock);
	if (!dibv_started) {
		dibv_start_err = dibv_start();
		dibv_started = true;
	}
	pthread_mutex_unlock(&dibv_lock);
	if (dibv_start_err < 0) {
		if (num_devices != NULL)
			*num_devices = 0;
		errno = -dibv_start_err;
		return NULL;
	}
	l = calloc((size_t)dibv_nb_devs + 1, sizeof(*l));
	if (l == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < dibv_nb_devs; i++)
		l[i] = &dibv_devs[i]->ibdev;
	if (num_devices != NULL)
		*num_devices = dibv_nb_devs;
	return l;
}

DIBV_EXPORT void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

DIBV_EXPORT const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device != NULL ? device->name : NULL;
}

DIBV_EXPORT __be64
ibv_get_device_guid(struct ibv_device *device)
{
	return device != NULL ? ((struct dibv_device *)(void *)device)->guid_be : 0;
}

DIBV_EXPORT int
ibv_get_device_index(struct ibv_device *device)
{
	int i;

	for (i = 0; i < dibv_nb_devs; i++)
		if (device == &dibv_devs[i]->ibdev)
			return i;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Contexts                                                                 */
/* ------------------------------------------------------------------------ */

static int dibv_context_close(struct dibv_context *c);

DIBV_EXPORT struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct dibv_device *d = (struct dibv_device *)(void *)device;
	struct dibv_context *c;
	struct ibv_context *ctx;

	if (d == NULL) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	if (d->refs == 0) {
		d->dev = drnic_device_open(&d->cfg);
		if (d->dev == NULL) {
			int e = rte_errno ? rte_errno : EINVAL;

			pthread_mutex_unlock(&d->lock);
			fprintf(stderr, "drnic ibverbs: cannot open device %s: %s\n", d->cfg.name,
				rte_strerror(e));
			free(c);
			errno = e;
			return NULL;
		}
		if (dibv_attached) {
			/* The daemon's lcores run its engines: no helper. */
		} else if (d->cfg.progress == DRNIC_PROGRESS_INLINE) {
			atomic_store_explicit(&dibv_progress_dev, d->dev, memory_order_release);
			if (d->cfg.progress_opts.thread != 0)
				dibv_helper_start(d->dev, &d->cfg.progress_opts);
		} else if (d->cfg.progress_opts.thread == 1) {
			atomic_store_explicit(&dibv_progress_dev, d->dev, memory_order_release);
			dibv_helper_start(d->dev, &d->cfg.progress_opts);
		}
	}
	d->refs++;
	c->d = d;
	/* Its own async queue, given the device's events too. */
	c->async = drnic_async_queue_create(0);
	if (c->async == NULL || drnic_device_async_subscribe(d->dev, c->async) < 0) {
		pthread_mutex_unlock(&d->lock);
		drnic_async_queue_destroy(c->async);
		c->async = NULL;
		dibv_context_close(c);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_unlock(&d->lock);

	c->vctx.sz = sizeof(struct verbs_context);
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = -1;
	ctx->async_fd = drnic_async_queue_fd(c->async);
	ctx->num_comp_vectors = (int)(d->cfg.nb_engines ? d->cfg.nb_engines : 1);
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	dibv_context_ops_init(c);
	if (handle_add(c, HANDLE_IBV_CONTEXT) < 0) {
		dibv_context_close(c);
		errno = ENOMEM;
		return NULL;
	}
	return ctx;
}

DIBV_EXPORT int
ibv_close_device(struct ibv_context *context)
{
	/* Not live (NULL, closed already): nothing behind it is read. */
	if (context == NULL || handle_take(dibv_ctx(context), HANDLE_IBV_CONTEXT) < 0)
		return DIBV_ERR(EINVAL);
	return dibv_context_close(dibv_ctx(context));
}

static int
dibv_context_close(struct dibv_context *c)
{
	struct ibv_context *context = &c->vctx.context;
	struct dibv_device *d = c->d;
	bool keep_queue = false;
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	if (c->async != NULL) {
		drnic_device_async_unsubscribe(d->dev, c->async);
		/* Objects of this context left behind keep raising into it. */
		keep_queue = drnic_async_queue_destroy(c->async) < 0;
	}
	if (--d->refs == 0) {
		dibv_cm_close(d);
		if (atomic_load(&dibv_progress_dev) == d->dev) {
			atomic_store(&dibv_progress_dev, NULL);
			dibv_helper_stop_join();
		}
		if (dibv_debug())
			drnic_device_stats_print(d->dev, "drnic ibverbs: ", stderr);
		rc = drnic_device_close(d->dev);
		if (rc < 0) {
			/* Objects left behind: keep the device open. */
			atomic_store(&dibv_progress_dev, d->dev);
			d->refs++;
			rc = 0;
		} else {
			d->dev = NULL;
		}
	}
	pthread_mutex_unlock(&d->lock);
	if (keep_queue)
		return rc;      /* c stays too: its objects point at it */
	pthread_mutex_destroy(&context->mutex);
	free(c);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                  */
/* ------------------------------------------------------------------------ */

static int
dibv_fill_device_attr(struct ibv_context *context, struct ibv_device_attr *a)
{
	struct dibv_context *c = dibv_ctx(context);
	struct drnic_device_attr da;
	int rc;

	rc = drnic_query_device(c->d->dev, &da);
	if (rc < 0)
		return dibv_errno(rc);
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", da.fw_ver);
	a->node_guid = htobe64(da.node_guid);
	a->sys_image_guid = htobe64(da.sys_image_guid);
	a->max_mr_size = da.max_mr_size;
	a->page_size_cap = da.page_size_cap;
	a->vendor_id = c->d->set.vendor_id;
	a->vendor_part_id = c->d->set.vendor_part_id;
	a->hw_ver = c->d->set.hw_ver;
	a->max_qp = da.max_qp;
	a->max_qp_wr = da.max_qp_wr;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID | da.device_cap_flags |
			      (da.max_xrcd > 0 ? IBV_DEVICE_XRC : 0);
	/* Memory windows: type 1 and type 2B (a type 2 window is usable only
	 * through the QP it is bound to, and only within its PD). */
	a->device_cap_flags |= IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_mw = da.max_mw;
	a->max_sge = da.max_sge;
	a->max_sge_rd = da.max_sge_rd;
	a->max_cq = da.max_cq;
	a->max_cqe = da.max_cqe;
	a->max_mr = da.max_mr;
	a->max_pd = da.max_pd;
	a->max_qp_rd_atom = da.max_qp_rd_atom;
	a->max_ee_rd_atom = 0;
	a->max_res_rd_atom = da.max_res_rd_atom;
	a->max_qp_init_rd_atom = da.max_qp_init_rd_atom;
	a->atomic_cap = (enum ibv_atomic_cap)da.atomic_cap;
	a->max_srq = da.max_srq;
	a->max_srq_wr = da.max_srq_wr;
	a->max_srq_sge = da.max_srq_sge;
	a->max_ah = da.max_ah;
	a->max_mcast_grp = da.max_mcast_grp;
	a->max_mcast_qp_attach = da.max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = da.max_total_mcast_qp_attach;
	a->max_pkeys = (uint16_t)da.max_pkeys;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = da.phys_port_cnt;
	return 0;
}

/* What only ibv_query_device_ex() says: the 64-bit capability flags (the
 * 32 of ibv_device_attr and drnic's DRNIC_DEVICE_* beyond them). */
static int
dibv_fill_device_attr_ex(struct ibv_context *context, struct ibv_device_attr_ex *ex)
{
	struct drnic_device_attr da;
	int rc;

	rc = drnic_query_device(dibv_ctx(context)->d->dev, &da);
	if (rc < 0)
		return dibv_errno(rc);
	ex->device_cap_flags_ex = ex->orig_attr.device_cap_flags | da.device_cap_flags_ex;
	dibv_odp_caps(&ex->odp_caps, &ex->xrc_odp_caps);
	/* Completion timestamps: 64-bit nanoseconds (drnic_cq_clock_ns()). */
	ex->completion_timestamp_mask = UINT64_MAX;
	ex->hca_core_clock = 1000000;   /* kHz */
	ex->max_dm_size = DIBV_MAX_DM_SIZE;
	return 0;
}

DIBV_EXPORT int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	if (context == NULL || device_attr == NULL)
		return DIBV_ERR(EINVAL);
	return dibv_fill_device_attr(context, device_attr);
}

int dibv_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int
dibv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
		     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	int rc;

	if (input != NULL && input->comp_mask != 0)
		return DIBV_ERR(EINVAL);
	if (attr == NULL || attr_size < sizeof(struct ibv_device_attr))
		return DIBV_ERR(EINVAL);
	memset(&ex, 0, sizeof(ex));
	rc = dibv_fill_device_attr(context, &ex.orig_attr);
	if (rc != 0)
		return rc;
	rc = dibv_fill_device_attr_ex(context, &ex);
	if (rc != 0)
		return rc;
	ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
	if (attr_size > sizeof(ex))
		attr_size = sizeof(ex);
	memcpy(attr, &ex, attr_size);
	return 0;
}

static int
dibv_fill_port_attr(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *p,
		    size_t len)
{
	struct dibv_context *c = dibv_ctx(context);
	struct drnic_port_attr pa;
	struct ibv_port_attr a;
	int rc;

	rc = drnic_query_port(c->d->dev, port_num, &pa);
	if (rc < 0)
		return dibv_errno(rc);
	memset(&a, 0, sizeof(a));
	a.state = (enum ibv_port_state)pa.state;
	a.phys_state = pa.phys_state;
	if (c->d->set.port_always_active && a.state != IBV_PORT_ACTIVE) {
		a.state = IBV_PORT_ACTIVE;
		a.phys_state = 5;
	}
	a.max_mtu = (enum ibv_mtu)pa.max_mtu;
	a.active_mtu = (enum ibv_mtu)pa.active_mtu;
	a.gid_tbl_len = pa.gid_tbl_len;
	a.port_cap_flags = pa.port_cap_flags;
	a.max_msg_sz = pa.max_msg_sz;
	a.bad_pkey_cntr = pa.bad_pkey_cntr;
	a.qkey_viol_cntr = pa.qkey_viol_cntr;
	a.pkey_tbl_len = pa.pkey_tbl_len;
	a.lid = pa.lid;
	a.sm_lid = pa.sm_lid;
	a.lmc = pa.lmc;
	a.max_vl_num = pa.max_vl_num;
	a.sm_sl = pa.sm_sl;
	a.subnet_timeout = pa.subnet_timeout;
	a.init_type_reply = pa.init_type_reply;
	a.active_width = pa.active_width;
	a.active_speed = pa.active_speed;
	a.link_layer = pa.link_layer;
	if (len > sizeof(a))
		len = sizeof(a);
	memcpy(p, &a, len);
	return 0;
}

int dibv_query_port_ex(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, size_t port_attr_len);
int
dibv_query_port_ex(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr,
		   size_t port_attr_len)
{
	if (context == NULL || port_attr == NULL)
		return DIBV_ERR(EINVAL);
	return dibv_fill_port_attr(context, port_num, port_attr, port_attr_len);
}

/* The exported symbol takes the old, shorter layout (up to 'flags'). */
DIBV_EXPORT int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	if (context == NULL || port_attr == NULL)
		return DIBV_ERR(EINVAL);
	return dibv_fill_port_attr(context, port_num, (struct ibv_port_attr *)(void *)port_attr,
				   offsetof(struct ibv_port_attr, port_cap_flags2));
}

DIBV_EXPORT int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	int rc;

	if (context == NULL || gid == NULL)
		return DIBV_ERR(EINVAL);
	rc = drnic_query_gid(dibv_ctx(context)->d->dev, port_num, index, (union drnic_gid *)gid);
	return rc < 0 ? -1 : 0;
}

static bool
dibv_gid_is_zero(const union drnic_gid *g)
{
	static const uint8_t z[16];

	return memcmp(g->raw, z, 16) == 0;
}

DIBV_EXPORT int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	union drnic_gid g;
	int rc;

	if (context == NULL || entry == NULL || flags != 0 || port_num > 255 ||
	    gid_index > INT32_MAX)
		return DIBV_ERR(EINVAL);
	rc = drnic_query_gid(dibv_ctx(context)->d->dev, (uint8_t)port_num, (int)gid_index, &g);
	if (rc < 0)
		return dibv_errno(rc);
	if (dibv_gid_is_zero(&g))
		return DIBV_ERR(ENODATA);
	memset(&e, 0, sizeof(e));
	memcpy(e.gid.raw, g.raw, 16);
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_ROCE_V2;
	e.ndev_ifindex = 0;
	if (entry_size > sizeof(e))
		entry_size = sizeof(e);
	memcpy(entry, &e, entry_size);
	return 0;
}

DIBV_EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
		     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry table[DRNIC_GID_TABLE_LEN];
	size_t n = 0, i;

	if (context == NULL || entries == NULL || flags != 0 || max_entries == 0 ||
	    entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	for (i = 0; i < DRNIC_GID_TABLE_LEN; i++)
		if (_ibv_query_gid_ex(context, 1, (uint32_t)i, &table[n], 0, sizeof(table[0])) == 0)
			n++;
	/* As rdma-core: an array too small for every valid entry fails, it
	 * is not filled in part. */
	if (n > max_entries)
		return -EINVAL;
	for (i = 0; i < n; i++)
		memcpy((uint8_t *)entries + i * entry_size, &table[i], sizeof(table[i]));
	return (ssize_t)n;
}

/* From rdma-core's driver.h (private ABI): GID types as sysfs spells them. */
enum dibv_gid_type_sysfs {
	DIBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	DIBV_GID_TYPE_SYSFS_ROCE_V2,
};

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum dibv_gid_type_sysfs *type);
DIBV_EXPORT int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		   enum dibv_gid_type_sysfs *type)
{
	union drnic_gid g;

	if (context == NULL || type == NULL || index > INT32_MAX)
		return -1;
	if (drnic_query_gid(dibv_ctx(context)->d->dev, port_num, (int)index, &g) < 0) {
		errno = EINVAL;
		return -1;
	}
	*type = DIBV_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

DIBV_EXPORT int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (context == NULL || pkey == NULL || port_num != 1 || index != 0)
		return -1;
	*pkey = htobe16(0xffff);
	return 0;
}

DIBV_EXPORT int
ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	if (context == NULL || port_num != 1)
		return -1;
	if ((be16toh(pkey) & 0x7fff) == 0x7fff)
		return 0;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Async events                                                             */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT int
ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct drnic_async_queue *q;
	struct drnic_async_event ev;
	int rc;

	if (context == NULL || event == NULL)
		return -1;
	q = dibv_ctx(context)->async;
	/* A non-blocking async_fd (UCX makes it so, then calls this once the
	 * fd polls readable, until EAGAIN) answers EAGAIN when the queue is
	 * empty, as libibverbs' read() of its fd does. */
	if (fcntl(context->async_fd, F_GETFL) & O_NONBLOCK)
		rc = drnic_try_get_async_event(q, &ev);
	else
		rc = drnic_get_async_event(q, &ev);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	memset(event, 0, sizeof(*event));
	event->event_type = (enum ibv_event_type)ev.event_type;
	if (drnic_event_type_is_qp(ev.event_type)) {
		struct dibv_qp *qp = ev.element.qp != NULL ?
				     drnic_qp_context((struct drnic_qp *)ev.element.qp) : NULL;

		event->element.qp = qp != NULL ? &qp->qpx.qp_base : NULL;
		goto out;
	}
	switch (ev.event_type) {
	case DRNIC_EVENT_CQ_ERR: {
		struct dibv_cq *cq = dibv_cq_lookup(ev.element.cq);

		event->element.cq = cq != NULL ? ibv_cq_ex_to_cq(&cq->cqx) : NULL;
		break;
	}
	case DRNIC_EVENT_SRQ_ERR:
	case DRNIC_EVENT_SRQ_LIMIT_REACHED: {
		struct dibv_srq *s = ev.element.srq != NULL ?
				     drnic_srq_context((struct drnic_srq *)ev.element.srq) : NULL;

		event->element.srq = s != NULL ? &s->srq : NULL;
		break;
	}
	default:
		event->element.port_num = (int)ev.element.port_num;
		break;
	}
out:
	/* drnic's acknowledgement guards destruction; verbs' is kept by the caller. */
	drnic_ack_async_event(q, &ev);
	return 0;
}

DIBV_EXPORT void
ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}
