/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnicd: one emulated RNIC shared by every process on the host.
 *
 *   drnicd [-c CONFIG] [-d NAME]... [-s SOCKET] [--file-prefix P]
 *          [-l LCORES] [-m MB] [--set KEY=VALUE]...
 *
 * It starts DPDK's EAL as a primary process that others may join (file
 * prefix P, default "drnicd"; real hugepages are required), opens each
 * device NAME of the configuration (INI, as drnic_config_load(): [device],
 * then [device.NAME]; default: $DRNIC_CONFIG, else the embedded default, and
 * the one device it names), with its engines on the lcores the
 * configuration gives them, and serves the control socket (default
 * /run/drnic/drnicd.sock). Programs attach with DRNIC_DAEMON=SOCKET (or
 * drnic_env_opts::daemon): they become DPDK secondary processes of this EAL,
 * and the daemon creates and owns their objects (app/drnicd/serve.c).
 * `drnic-ctl` lists devices, attached processes and counters.
 *
 * SIGTERM or SIGINT: every attached process's objects are freed, the devices
 * closed, the socket removed; exit status 0. Exit status 1 when it cannot
 * start (the reason on stderr).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "drnic_env.h"
#include "drnic_ibcm.h"
#include "drnicd.h"

#define DRNICD_MAX_SETS 32
#define DRNICD_MAX_CLIENTS 256

struct drnicd_opts {
	const char *config;
	const char *names[DRNICD_MAX_DEVICES];
	unsigned int nb_names;
	const char *sets[DRNICD_MAX_SETS];
	unsigned int nb_sets;
	const char *socket_path;
	const char *file_prefix;
	const char *lcores;
	unsigned int mem_mb;
};

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-c CONFIG] [-d NAME]... [-s SOCKET] [--file-prefix P]\n"
		"          [-l LCORES] [-m MB] [--set KEY=VALUE]...\n"
		"  -c, --config FILE     device configuration (default $DRNIC_CONFIG, else built in)\n"
		"  -d, --device NAME     serve device NAME ([device.NAME]; repeatable; default:\n"
		"                        the name the configuration gives)\n"
		"  -s, --socket PATH     control socket (default %s)\n"
		"      --file-prefix P   EAL file prefix attached programs join (default drnicd)\n"
		"  -l, --lcores L        EAL lcores (default: every allowed CPU); the first is\n"
		"                        the control thread's, the configuration's engine\n"
		"                        lcores must be among the others\n"
		"  -m, --mem MB          hugepage memory to reserve (default 512)\n"
		"      --set KEY=VALUE   override one configuration key of every device\n",
		prog, RPC_DEFAULT_SOCKET);
}

static int
parse(int argc, char **argv, struct drnicd_opts *o)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "device", required_argument, NULL, 'd' },
		{ "socket", required_argument, NULL, 's' },
		{ "file-prefix", required_argument, NULL, 'P' },
		{ "lcores", required_argument, NULL, 'l' },
		{ "mem", required_argument, NULL, 'm' },
		{ "set", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->config = getenv("DRNIC_CONFIG");
	o->socket_path = RPC_DEFAULT_SOCKET;
	o->file_prefix = "drnicd";
	o->mem_mb = 512;
	while ((c = getopt_long(argc, argv, "c:d:s:l:m:h", longs, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'd':
			if (o->nb_names == DRNICD_MAX_DEVICES) {
				fprintf(stderr, "drnicd: at most %d devices\n", DRNICD_MAX_DEVICES);
				return -1;
			}
			o->names[o->nb_names++] = optarg;
			break;
		case 's':
			o->socket_path = optarg;
			break;
		case 'P':
			o->file_prefix = optarg;
			break;
		case 'l':
			o->lcores = optarg;
			break;
		case 'm':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 64 || v > 1 << 20) {
				fprintf(stderr, "drnicd: --mem %s: a number of MiB, 64 or more\n",
					optarg);
				return -1;
			}
			o->mem_mb = (unsigned int)v;
			break;
		case 'S':
			if (strchr(optarg, '=') == NULL || o->nb_sets == DRNICD_MAX_SETS) {
				fprintf(stderr, "drnicd: --set %s: KEY=VALUE (%d at most)\n", optarg,
					DRNICD_MAX_SETS);
				return -1;
			}
			o->sets[o->nb_sets++] = optarg;
			break;
		default:
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "drnicd: unexpected argument %s\n", argv[optind]);
		return -1;
	}
	if (o->config != NULL && o->config[0] == '\0')
		o->config = NULL;
	return 0;
}

/* Open device @p name (NULL: the configuration's own name). */
static struct drnic_device *
open_device(const struct drnicd_opts *o, const char *name)
{
	struct drnic_config cfg;
	struct drnic_device *dev;
	unsigned int i;
	int rc;

	drnic_config_init(&cfg);
	if (o->config != NULL) {
		rc = drnic_config_load(&cfg, o->config, name);
		if (rc < 0) {
			fprintf(stderr, "drnicd: configuration %s: %s\n", o->config, strerror(-rc));
			return NULL;
		}
	}
	if (name != NULL && drnic_config_set(&cfg, "name", name) < 0) {
		fprintf(stderr, "drnicd: bad device name %s\n", name);
		return NULL;
	}
	for (i = 0; i < o->nb_sets; i++) {
		rc = drnic_config_set_pair(&cfg, o->sets[i]);
		if (rc < 0) {
			fprintf(stderr, "drnicd: --set %s: %s\n", o->sets[i], strerror(-rc));
			return NULL;
		}
	}
	if (cfg.progress != DRNIC_PROGRESS_DEDICATED) {
		/* Nobody would run inline engines: attached programs cannot. */
		fprintf(stderr, "drnicd: device %s: progress must be dedicated (engine lcores)\n",
			cfg.name);
		return NULL;
	}
	dev = drnic_device_open(&cfg);
	if (dev == NULL) {
		fprintf(stderr, "drnicd: device %s: %s\n", cfg.name, rte_strerror(rte_errno));
		return NULL;
	}
	/* Its GSI agent on QP 1 and the connection manager: the daemon's, for
	 * every attached process (one port space, as the kernel's rdma_cm). */
	rc = drnic_ibcm_add_device(dev);
	if (rc < 0) {
		fprintf(stderr, "drnicd: device %s: no connection manager: %s\n", cfg.name,
			strerror(-rc));
		(void)drnic_device_close(dev);
		return NULL;
	}
	fprintf(stderr, "drnicd: device %s: %u engine(s), link %s %s\n", cfg.name,
		cfg.nb_engines, cfg.link_driver, cfg.link_args);
	return dev;
}

/* Bind the control socket; refuse a path a live daemon serves. */
static int
listen_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX];
	char *slash;
	int fd, probe;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "drnicd: socket path too long: %s\n", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "drnicd: mkdir %s: %s\n", dir, strerror(errno));
			return -1;
		}
	}
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(probe);
		fprintf(stderr, "drnicd: another daemon serves %s\n", path);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	(void)unlink(path);   /* a dead daemon's */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "drnicd: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void
serve_loop(struct drnicd *d, int lfd, int sfd)
{
	struct pollfd pfd[DRNICD_MAX_CLIENTS + 2];
	struct dclient *byidx[DRNICD_MAX_CLIENTS + 2];

	for (;;) {
		struct dclient *c, *next;
		unsigned int n = 0, i;
		int rc;

		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (c = d->clients; c != NULL && n < RTE_DIM(pfd); c = c->next) {
			byidx[n] = c;
			pfd[n++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		}
		rc = poll(pfd, n, -1);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			fprintf(stderr, "drnicd: poll: %s\n", strerror(errno));
			return;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				fprintf(stderr, "drnicd: signal %u: stopping\n", si.ssi_signo);
			return;
		}
		for (i = 2; i < n; i++) {
			c = byidx[i];
			if (pfd[i].revents == 0)
				continue;
			/* A request is answered before a hang-up is seen. */
			pthread_mutex_lock(&d->lock);
			if (!(pfd[i].revents & POLLIN) || !drnicd_client_serve(d, c))
				drnicd_client_drop(d, c);
			pthread_mutex_unlock(&d->lock);
		}
		if (pfd[1].revents & POLLIN) {
			int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			unsigned int nb = 0;

			for (c = d->clients; c != NULL; c = next) {
				next = c->next;
				nb++;
			}
			if (cfd >= 0 && nb >= DRNICD_MAX_CLIENTS) {
				fprintf(stderr, "drnicd: %u processes attached: refusing another\n", nb);
				close(cfd);
			} else if (cfd >= 0) {
				pthread_mutex_lock(&d->lock);
				if (drnicd_client_new(d, cfd) == NULL)
					close(cfd);
				pthread_mutex_unlock(&d->lock);
			}
		}
	}
}

int
main(int argc, char **argv)
{
	struct drnic_env_opts eo = { .name = "drnicd", .serve = true };
	struct drnic_env_info info;
	struct drnicd_opts o;
	struct drnicd d = { 0 };
	sigset_t sigs;
	unsigned int i;
	int rc, lfd, sfd, status = 1;

	if (parse(argc, argv, &o) < 0) {
		usage(argv[0]);
		return 1;
	}
	/* Blocked before the EAL's threads start, so all of them inherit it. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "drnicd: signalfd: %s\n", strerror(errno));
		return 1;
	}
	eo.file_prefix = o.file_prefix;
	eo.lcores = o.lcores;
	eo.mem_mb = o.mem_mb;
	eo.log_level = RTE_LOG_NOTICE;
	rc = drnic_env_init(&eo, &info);
	if (rc == -ENOTSUP) {
		fprintf(stderr, "drnicd: needs %u MiB of hugepages that programs can share: %s\n"
			"  (devtools/setup.sh hugepages reserves them)\n", o.mem_mb, info.reason);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "drnicd: EAL start failed: %s\n", strerror(-rc));
		return 1;
	}
	pthread_mutex_init(&d.lock, NULL);
	d.socket_path = o.socket_path;
	d.file_prefix = o.file_prefix;
	for (i = 0; i < (o.nb_names ? o.nb_names : 1); i++) {
		d.dev[i] = open_device(&o, o.nb_names ? o.names[i] : NULL);
		if (d.dev[i] == NULL)
			goto out;
		d.nb_dev++;
	}
	lfd = listen_socket(o.socket_path);
	if (lfd < 0)
		goto out;
	drnicd_telemetry_register(&d);
	fprintf(stderr, "drnicd: serving %u device(s) at %s (EAL prefix %s, pid %d)\n", d.nb_dev,
		o.socket_path, o.file_prefix, (int)getpid());
	serve_loop(&d, lfd, sfd);
	pthread_mutex_lock(&d.lock);
	while (d.clients != NULL)
		drnicd_client_drop(&d, d.clients);
	pthread_mutex_unlock(&d.lock);
	close(lfd);
	(void)unlink(o.socket_path);
	status = 0;
out:
	for (i = d.nb_dev; i-- > 0;) {
		(void)drnic_ibcm_remove_device(d.dev[i]);
		rc = drnic_device_close(d.dev[i]);
		if (rc < 0) {
			fprintf(stderr, "drnicd: closing %s: %s\n", drnic_device_name(d.dev[i]),
				strerror(-rc));
			status = 1;
		}
	}
	drnic_env_fini();
	close(sfd);
	return status;
}
