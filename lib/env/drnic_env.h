/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_ENV_H
#define DRNIC_ENV_H

/**
 * @file
 * EAL bring-up for drnic programs and tests.
 *
 * One call starts DPDK's EAL with options that work on this machine: real
 * 2 MiB hugepages when enough are free and hugetlbfs is mounted, otherwise
 * `--no-huge --no-shconf` (the two options DPDK accepts together). PCI is never
 * scanned (`--no-pci`): drnic never takes the machine's own NIC unless a
 * configuration names one through a vdev or an allow-list.
 *
 * Environment variables read by drnic_env_init():
 *  - DRNIC_NO_HUGE=1    always run without hugepages;
 *  - DRNIC_EAL_ARGS     extra EAL arguments, split on spaces, appended last;
 *  - DRNIC_DAEMON       attach to the drnicd serving this control socket
 *                       (drnic_env_opts::daemon); "" or unset: embedded mode.
 */

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Options for drnic_env_init(); zero means "default" for every field. */
struct drnic_env_opts {
	/** Program name for EAL's argv[0] and logs; default "drnic". */
	const char *name;
	/** EAL core list (`-l`), or a map of lcores to CPUs as `--lcores`
	 * takes it when it has '@' or '(' ("0@0,1@1,2@1": lcores 1 and 2 share
	 * CPU 1); default: every CPU this process may run on. */
	const char *lcores;
	/** Memory to reserve in MiB; default 256. */
	unsigned int mem_mb;
	/**
	 * Share memory with other processes through a file prefix
	 * (`--file-prefix`, needed by memif secondary set-ups). Default: private
	 * memory (`--in-memory` with hugepages, `--no-shconf` without).
	 */
	const char *file_prefix;
	/** Extra EAL arguments (e.g. "--vdev=net_ring0"), NULL-terminated. */
	const char *const *extra_args;
	/** Default log level for all types (RTE_LOG_*); default RTE_LOG_WARNING. */
	int log_level;
	/**
	 * Attach to drnicd: the path of its control socket. The process then
	 * runs as a DPDK secondary process of the daemon's EAL (its file
	 * prefix, its hugepage memory; file_prefix, mem_mb and extra_args are
	 * not used), drnic_device_open() returns the daemon's device of that
	 * name, and the daemon creates and owns every object the process
	 * makes. NULL: $DRNIC_DAEMON when set and not empty, else embedded
	 * mode (the process runs its own devices and engines).
	 */
	const char *daemon;
	/**
	 * Let secondary processes attach (drnicd): needs file_prefix and
	 * hugepages (-ENOTSUP without them), and the hugepage files stay
	 * linked while the process runs, for the secondaries to map.
	 */
	bool serve;
};

/** What drnic_env_init() decided; filled on success. */
struct drnic_env_info {
	bool hugepages;            /**< true: running on real hugepages */
	unsigned int hugepage_kb;  /**< size of one hugepage in KiB when hugepages */
	unsigned long free_pages;  /**< free hugepages seen before start */
	char reason[128];          /**< why hugepages were not used, when not */
	char eal_args[512];        /**< the EAL command line that was used */
	bool attached;             /**< attached to a daemon (drnic_env_opts::daemon) */
};

/**
 * Decide whether hugepages can back @p mem_mb MiB of memory now.
 *
 * @param mem_mb   memory wanted, in MiB.
 * @param info     filled with the free page count, page size and, when the
 *                 answer is false, a one-line reason. May be NULL.
 * @return true when at least @p mem_mb MiB of hugepages are free and a
 *         hugetlbfs is mounted; false otherwise (and DRNIC_NO_HUGE=1 forces false).
 */
bool drnic_env_hugepages_usable(unsigned int mem_mb, struct drnic_env_info *info);

/**
 * Start DPDK's EAL for a drnic program.
 *
 * @param opts     options, or NULL for all defaults.
 * @param info     receives what was decided and the EAL command line; may be NULL.
 * @return 0 on success;
 *         -EALREADY when the EAL was already started by this process;
 *         -E2BIG when the assembled command line is too long;
 *         with a daemon: a negative errno of connect() (-ENOENT,
 *         -ECONNREFUSED: no daemon there), -EPROTO when it is not a drnicd
 *         of this version;
 *         a negative errno from rte_eal_init() (rte_errno) on any other failure.
 */
int drnic_env_init(const struct drnic_env_opts *opts, struct drnic_env_info *info);

/**
 * Wait until the EAL interrupt thread has finished the callback it is in
 * (a PMD's: memif's disconnect handler, say), by having it run one of ours
 * after it, up to @p timeout_ms. A link seen down is not a PMD done with
 * its disconnect: call this before stopping a port whose peer just left.
 * Not from a callback of that thread (it would wait for itself).
 * @return 0; -ETIMEDOUT (the thread is still busy); -ENOMEM, or a negative
 *         errno of eventfd() or the EAL's callback registration.
 */
int drnic_env_intr_barrier(unsigned int timeout_ms);

/**
 * Stop the EAL started by drnic_env_init(). Safe to call when it was not started.
 * @return 0, or the negative errno rte_eal_cleanup() reported.
 */
int drnic_env_fini(void);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_ENV_H */
