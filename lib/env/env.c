/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL bring-up: picks hugepages or --no-huge, assembles the EAL argv, starts it.
 */
#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dirent.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_interrupts.h>
#include <rte_log.h>

#include "drnic_env.h"
#include "env_private.h"

#define ENV_MAX_ARGS 64
#define ENV_DEFAULT_MEM_MB 256

struct env_argv {
	char *argv[ENV_MAX_ARGS];
	int argc;
	char store[2048];
	size_t used;
	bool overflow;
};

static bool env_started;

/*
 * The EAL interrupt thread. DPDK 22.11's rte_eal_cleanup() leaves it running
 * while it unmaps memory, and a PMD callback still registered there (memif's
 * listener after its peer left) then reads freed memory: we stop it first.
 * Its id is learnt from an alarm callback, which runs on that thread; it
 * ends itself in another (env_intr_exit()).
 */
static pthread_t env_intr_thread;
static pid_t env_intr_tid;
static int env_intr_known;

static void
env_intr_whoami(void *arg)
{
	RTE_SET_USED(arg);
	env_intr_thread = pthread_self();
	env_intr_tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&env_intr_known, 1, __ATOMIC_RELEASE);
}

/*
 * The interrupt thread ends itself here, the callback of an eventfd of our
 * own: between two callbacks, since it runs one at a time (any it was in
 * has returned), and holding none of the EAL's locks (they are released
 * around each callback). Not an alarm's callback: rte_eal_cleanup()
 * unregisters the alarms' source and would wait forever for the one the
 * thread ended in; no one unregisters this source.
 */
static void
env_intr_exit(void *arg)
{
	RTE_SET_USED(arg);
	pthread_exit(NULL);
}

/* How long drnic_env_fini() waits for that, in seconds. */
#define ENV_INTR_EXIT_S 5

/* A source of our own on the interrupt thread: an eventfd with a callback. */
struct env_intr_src {
	struct rte_intr_handle *h;
	int efd;
};

static void
env_intr_src_close(struct env_intr_src *src)
{
	if (src->h != NULL)
		rte_intr_instance_free(src->h);   /* the source keeps a copy */
	close(src->efd);
}

/* Register @p cb(@p arg) on a new eventfd and make it due (written once):
 * the thread runs it after the callback it may be in. 0; or a negative
 * errno, with nothing left registered or open. */
static int
env_intr_post(struct env_intr_src *src, rte_intr_callback_fn cb, void *arg)
{
	uint64_t one = 1;
	int rc;

	src->h = NULL;
	src->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (src->efd < 0)
		return -errno;
	src->h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (src->h == NULL)
		rc = -ENOMEM;
	else if (rte_intr_fd_set(src->h, src->efd) != 0 ||
		 rte_intr_type_set(src->h, RTE_INTR_HANDLE_EXT) != 0)
		rc = -rte_errno;
	else
		rc = rte_intr_callback_register(src->h, cb, arg);
	if (rc == 0 && write(src->efd, &one, sizeof(one)) != sizeof(one)) {
		rc = -errno;
		(void)rte_intr_callback_unregister_sync(src->h, cb, arg);   /* never due */
	}
	if (rc < 0)
		env_intr_src_close(src);
	return rc;
}

/* Have the interrupt thread end itself (env_intr_exit()); wait for it up
 * to ENV_INTR_EXIT_S. Returns true once it has ended. */
static bool
env_intr_stop(void)
{
	struct env_intr_src src;
	struct timespec ts;
	bool ended = false;

	if (env_intr_post(&src, env_intr_exit, NULL) < 0)
		return false;
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0) {
		ts.tv_sec += ENV_INTR_EXIT_S;
		ended = pthread_timedjoin_np(env_intr_thread, NULL, &ts) == 0;
	}
	if (ended)
		env_intr_src_close(&src);
	/* else registered: the thread may still run it */
	return ended;
}

/* drnic_env_intr_barrier()'s callback; freed by the caller once it has run
 * and is unregistered (else left: it may yet run). */
struct env_intr_mark {
	struct env_intr_src src;
	int ran;
};

static void
env_intr_mark(void *arg)
{
	struct env_intr_mark *mk = arg;
	uint64_t v;

	if (read(mk->src.efd, &v, sizeof(v)) < 0)   /* level-triggered: once */
		v = 0;
	__atomic_store_n(&mk->ran, 1, __ATOMIC_RELEASE);
}

int
drnic_env_intr_barrier(unsigned int timeout_ms)
{
	struct env_intr_mark *mk = calloc(1, sizeof(*mk));
	unsigned int waited_us = 0;
	int rc;

	if (mk == NULL)
		return -ENOMEM;
	rc = env_intr_post(&mk->src, env_intr_mark, mk);
	if (rc < 0) {
		free(mk);
		return rc;
	}
	while (!__atomic_load_n(&mk->ran, __ATOMIC_ACQUIRE)) {
		if (waited_us >= timeout_ms * 1000u)
			return -ETIMEDOUT;      /* registered: mk stays */
		usleep(100);
		waited_us += 100;
	}
	(void)rte_intr_callback_unregister_sync(mk->src.h, env_intr_mark, mk);
	env_intr_src_close(&mk->src);
	free(mk);
	return 0;
}

/*
 * Is the interrupt thread waiting in epoll, between two callbacks? Cancelled
 * inside a callback (at a system call in it: a memif control message, for
 * one), it would leave that callback marked running, and rte_eal_cleanup()
 * would wait for it forever (rte_intr_callback_unregister_sync()): a
 * drnic-perf server hung so in CI right after its client had disconnected.
 */
static bool
env_intr_idle(void)
{
	char path[64], buf[64];
	long nr;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)env_intr_tid);
	f = fopen(path, "r");
	if (f == NULL)
		return true;    /* cannot tell: as before */
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	nr = strtol(buf, NULL, 10);
	return nr == SYS_epoll_wait || nr == SYS_epoll_pwait;
}
/* The EAL keeps pointers into its argv for the process lifetime. */
static struct env_argv *env_args;

static bool
env_hugetlbfs_mounted(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, " hugetlbfs ") != NULL;
	fclose(f);
	return found;
}

/*
 * A serving primary's hugepage files (PREFIXmap_N in every hugetlbfs): they
 * stay linked while it runs, for its secondaries to map, and the EAL leaves
 * them behind at its cleanup, holding their pages. Removed at
 * drnic_env_fini(); a process still mapping one keeps its pages until it
 * unmaps them. (A killed daemon's files go when the next one starts with
 * the same prefix: the EAL clears them.)
 */
static char env_serve_prefix[128];

static void
env_unlink_hugefiles(const char *prefix)
{
	char line[512], mnt[256], fstype[64], name[512];
	size_t plen = strlen(prefix);
	FILE *f = fopen("/proc/mounts", "r");

	if (f == NULL || plen == 0) {
		if (f != NULL)
			fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		struct dirent *e;
		DIR *d;

		if (sscanf(line, "%*s %255s %63s", mnt, fstype) != 2 ||
		    strcmp(fstype, "hugetlbfs") != 0)
			continue;
		d = opendir(mnt);
		if (d == NULL)
			continue;
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, prefix, plen) != 0 ||
			    strncmp(e->d_name + plen, "map_", 4) != 0)
				continue;
			snprintf(name, sizeof(name), "%s/%s", mnt, e->d_name);
			(void)unlink(name);
		}
		closedir(d);
	}
	fclose(f);
}

static void
env_read_meminfo(unsigned long *free_pages, unsigned int *page_kb)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	*free_pages = 0;
	*page_kb = 0;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "HugePages_Free: %lu", free_pages) == 1)
			continue;
		(void)sscanf(line, "Hugepagesize: %u kB", page_kb);
	}
	fclose(f);
}

bool
drnic_env_hugepages_usable(unsigned int mem_mb, struct drnic_env_info *info)
{
	struct drnic_env_info local;
	const char *no_huge = getenv("DRNIC_NO_HUGE");
	unsigned long need_kb = (unsigned long)(mem_mb ? mem_mb : ENV_DEFAULT_MEM_MB) * 1024;

	if (info == NULL)
		info = &local;
	memset(info, 0, sizeof(*info));
	env_read_meminfo(&info->free_pages, &info->hugepage_kb);

	if (no_huge != NULL && strcmp(no_huge, "0") != 0) {
		snprintf(info->reason, sizeof(info->reason), "DRNIC_NO_HUGE is set");
		return false;
	}
	if (info->hugepage_kb == 0 || info->free_pages * info->hugepage_kb < need_kb) {
		snprintf(info->reason, sizeof(info->reason),
			 "%lu free hugepages of %u KiB, %lu KiB needed",
			 info->free_pages, info->hugepage_kb, need_kb);
		return false;
	}
	if (!env_hugetlbfs_mounted()) {
		snprintf(info->reason, sizeof(info->reason), "no hugetlbfs mounted");
		return false;
	}
	info->hugepages = true;
	return true;
}

/* Every CPU this process may run on, as an EAL core list ("0-1", "0,2"). */
static void
env_affinity_lcores(char *buf, size_t len)
{
	cpu_set_t set;
	size_t off = 0;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		snprintf(buf, len, "0");
		return;
	}
	buf[0] = '\0';
	for (cpu = 0; cpu < CPU_SETSIZE && off + 8 < len; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", cpu);
	}
	if (off == 0)
		snprintf(buf, len, "0");
}



static void
env_push(struct env_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
env_push(struct env_argv *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (a->overflow || a->argc >= ENV_MAX_ARGS - 1) {
		a->overflow = true;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(a->store + a->used, sizeof(a->store) - a->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(a->store) - a->used) {
		a->overflow = true;
		return;
	}
	a->argv[a->argc++] = a->store + a->used;
	a->used += (size_t)n + 1;
}

int
drnic_env_init(const struct drnic_env_opts *opts, struct drnic_env_info *info)
{
	static const struct drnic_env_opts defaults;
	struct drnic_env_info local;
	struct env_argv *a;
	char lcores[256];
	const char *extra_env, *daemon;
	char prefix[128];
	unsigned int mem_mb;
	size_t off = 0;
	int i, rc;

	if (env_started)
		return -EALREADY;
	if (opts == NULL)
		opts = &defaults;
	if (info == NULL)
		info = &local;
	memset(info, 0, sizeof(*info));
	mem_mb = opts->mem_mb ? opts->mem_mb : ENV_DEFAULT_MEM_MB;
	daemon = opts->daemon != NULL ? opts->daemon : getenv("DRNIC_DAEMON");
	if (daemon != NULL && daemon[0] == '\0')
		daemon = NULL;
	if (daemon != NULL && opts->serve)
		return -EINVAL;
	if (opts->serve && opts->file_prefix == NULL)
		return -EINVAL;
	if (daemon != NULL) {
		/* The daemon says which memory to join. */
		rc = env_rpc_connect(daemon, prefix, sizeof(prefix));
		if (rc < 0)
			return rc;
	}

	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		env_rpc_close();
		return -ENOMEM;
	}

	env_push(a, "%s", opts->name ? opts->name : "drnic");
	if (opts->lcores != NULL) {
		/* A map of lcores to CPUs ("0@0,1@1,2@1") is --lcores'. */
		env_push(a, strpbrk(opts->lcores, "@(") != NULL ? "--lcores" : "-l");
		env_push(a, "%s", opts->lcores);
	} else {
		env_affinity_lcores(lcores, sizeof(lcores));
		env_push(a, "-l");
		env_push(a, "%s", lcores);
	}
	env_push(a, "--no-pci");
	env_push(a, "--log-level=%d", opts->log_level ? opts->log_level : (int)RTE_LOG_WARNING);

	if (daemon != NULL) {
		/* A secondary process: the daemon's memory, at its addresses. */
		env_push(a, "--proc-type=secondary");
		env_push(a, "--file-prefix=%s", prefix);
		info->attached = true;
		info->hugepages = true;
	} else if (opts->serve) {
		if (!drnic_env_hugepages_usable(mem_mb, info)) {
			free(a);
			return -ENOTSUP;
		}
		/* Linked hugepage files: secondaries map them by name. */
		env_push(a, "-m");
		env_push(a, "%u", mem_mb);
		env_push(a, "--file-prefix=%s", opts->file_prefix);
	} else if (drnic_env_hugepages_usable(mem_mb, info)) {
		env_push(a, "-m");
		env_push(a, "%u", mem_mb);
		if (opts->file_prefix != NULL) {
			/* drnic runs no secondary processes: unlinked
			 * hugepage files go back to the system when the
			 * process ends, however it ends (a killed process
			 * would otherwise keep them until the prefix is
			 * reused). */
			env_push(a, "--file-prefix=%s", opts->file_prefix);
			env_push(a, "--huge-unlink");
		} else {
			env_push(a, "--in-memory");
		}
	} else {
		/* --no-huge cannot be combined with --in-memory. */
		env_push(a, "--no-huge");
		env_push(a, "-m");
		env_push(a, "%u", mem_mb);
		if (opts->file_prefix != NULL)
			env_push(a, "--file-prefix=%s", opts->file_prefix);
		else
			env_push(a, "--no-shconf");
	}
	for (i = 0; daemon == NULL && opts->extra_args != NULL && opts->extra_args[i] != NULL; i++)
		env_push(a, "%s", opts->extra_args[i]);

	extra_env = getenv("DRNIC_EAL_ARGS");
	if (extra_env != NULL) {
		char copy[1024], *save = NULL, *tok;

		snprintf(copy, sizeof(copy), "%s", extra_env);
		for (tok = strtok_r(copy, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save))
			env_push(a, "%s", tok);
	}
	if (a->overflow) {
		free(a);
		env_rpc_close();
		return -E2BIG;
	}

	info->eal_args[0] = '\0';
	for (i = 0; i < a->argc && off < sizeof(info->eal_args); i++)
		off += snprintf(info->eal_args + off, sizeof(info->eal_args) - off, "%s%s",
				i ? " " : "", a->argv[i]);

	/* rte_eal_init() may permute argv; it keeps pointers into our store. */
	rc = rte_eal_init(a->argc, a->argv);
	if (rc < 0) {
		rc = rte_errno ? -rte_errno : -EINVAL;
		free(a);
		env_rpc_close();
		return rc;
	}
	env_args = a;
	env_started = true;
	if (opts->serve)
		snprintf(env_serve_prefix, sizeof(env_serve_prefix), "%s", opts->file_prefix);
	__atomic_store_n(&env_intr_known, 0, __ATOMIC_RELAXED);
	(void)rte_eal_alarm_set(1, env_intr_whoami, NULL);
	return 0;
}

int
drnic_env_fini(void)
{
	int rc;

	if (!env_started)
		return 0;
	if (__atomic_load_n(&env_intr_known, __ATOMIC_ACQUIRE) &&
	    !pthread_equal(env_intr_thread, pthread_self())) {
		bool ended = env_intr_stop();   /* after the callback it may be in */
		int i, idle = 0;

		/* A callback that does not return: cancel the thread where it
		 * waits, seen there twice 1 ms apart, or after 2 s anyway. */
		for (i = 0; !ended && i < 2000 && idle < 2; i++) {
			idle = env_intr_idle() ? idle + 1 : 0;
			if (idle < 2)
				usleep(1000);
		}
		if (!ended) {
			RTE_LOG(WARNING, EAL, "drnic: interrupt thread still in a callback "
				"after %d s: cancelled\n", ENV_INTR_EXIT_S);
			if (pthread_cancel(env_intr_thread) == 0)
				(void)pthread_join(env_intr_thread, NULL);
		}
	}
	rc = rte_eal_cleanup();
	env_rpc_close();
	if (env_serve_prefix[0] != '\0') {
		env_unlink_hugefiles(env_serve_prefix);
		env_serve_prefix[0] = '\0';
	}
	env_started = false;
	free(env_args);
	env_args = NULL;
	return rc < 0 ? rc : 0;
}
