/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_VERBS_H
#define DRNIC_VERBS_H

/**
 * @file
 * drnic verbs: the emulated RNIC's objects and its public data path.
 *
 * The model is libibverbs': a device with one RoCEv2 port, protection domains,
 * memory regions, completion queues (lib/cq, drnic_cq.h), reliable-connected
 * queue pairs, post_send/post_recv. Every enum below is numerically equal to
 * its ibv_* counterpart, and the work-request structures keep the ibv_* field
 * names and meanings, so a libibverbs provider can sit on top of this API
 * without a second data path.
 *
 * Error convention: functions returning int return 0 on success or a negative
 * errno; constructors return NULL and set rte_errno. (A verbs shim converts to
 * verbs' positive errnos.)
 *
 * Threading: object creation and destruction, modify and query may be called
 * from any thread, but not concurrently on the same object. drnic_post_send()
 * and drnic_post_recv() on one QP must not run concurrently with each other
 * from two threads (one poster per queue, as on hardware).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "drnic_cq.h"
#include "drnic_event.h"
#include "drnic_link.h"

#ifdef __cplusplus
extern "C" {
#endif

struct drnic_device;
struct drnic_pd;
struct drnic_mr;
struct drnic_qp;
struct drnic_srq;
struct drnic_ah;
struct drnic_mw;
struct drnic_xrcd;
struct drnic_sge;

/* ------------------------------------------------------------------------ */
/* Configuration                                                            */
/* ------------------------------------------------------------------------ */

/** Most engines one device may use. */
#define DRNIC_MAX_ENGINES 16
/** Most IPv4 plus IPv6 addresses one port may have (= GID table length). */
#define DRNIC_MAX_ADDRS 8
/** GID table length of every port. */
#define DRNIC_GID_TABLE_LEN DRNIC_MAX_ADDRS

/** Who runs the transport engines. */
enum drnic_progress_mode {
	/** Engines are EAL lcores busy-polling (back off while idle). */
	DRNIC_PROGRESS_DEDICATED = 0,
	/**
	 * No engine lcore: the application thread runs engine steps inside
	 * drnic_post_send(), drnic_post_recv(), drnic_cq_poll() and
	 * drnic_device_progress(). Every inline engine of the process makes
	 * progress in any of those calls, so two devices joined by a loopback
	 * link both move while the application polls either one. A thread
	 * blocked in drnic_get_cq_event() runs no engine: with inline
	 * progress, some thread must keep polling or calling
	 * drnic_device_progress() for completion events to come.
	 */
	DRNIC_PROGRESS_INLINE = 1,
};

/**
 * Tuning of the progress helper (lib/progress, drnic_progress_start()), keys
 * progress_* of the configuration table (config/drnic.ini). The defaults are
 * drnic_config_init()'s; doc in drnic_progress.h and lib/ibverbs/README.md.
 */
struct drnic_progress_opts {
	/** Start a helper thread: -1 auto (in inline mode), 0 off, 1 on. The
	 * drop-in libibverbs reads it; drnic_progress_start() always starts. */
	int thread;
	/** Sleep on the link's receive wake-up when it has one (else nap). */
	bool wait;
	/** SCHED_FIFO helper: -1 auto (when it sleeps on the wake-up), 0, 1. */
	int rt;
	unsigned int spin_us;      /**< look this long after the last work (0..1000000) */
	unsigned int spin_max_us;  /**< ... growing to this while sleeps are short */
	unsigned int sleep_us;     /**< nap length when napping (0..1000000; 0 means 1) */
	unsigned int quiet_us;     /**< arm only after no application call this long (0: always) */
	unsigned int slice_us;     /**< helper's scheduler slice, EEVDF (0..100000; 0: kernel's) */
	unsigned int linger_us;    /**< a poll that completes runs the engine this long more (0..1000) */
};

/**
 * Configuration of one device. drnic_config_init() fills the embedded
 * default; drnic_config_load() overlays an INI file (config/drnic.ini documents
 * every key); drnic_config_set() overrides one key from code; fields may also
 * be written directly.
 */
struct drnic_config {
	char name[32];                       /**< device name, e.g. "drnic0" */
	enum drnic_progress_mode progress;   /**< dedicated or inline */
	unsigned int nb_engines;             /**< engines (1..DRNIC_MAX_ENGINES) */
	/** EAL lcore of each engine (dedicated mode). Two devices naming the
	 * same lcore share that engine. */
	unsigned int engine_lcores[DRNIC_MAX_ENGINES];
	unsigned int nb_app_lcores;          /**< application lcores named */
	unsigned int app_lcores[DRNIC_MAX_ENGINES]; /**< for drnic_app_launch() */
	char link_driver[32];                /**< link driver name, e.g. "loopback" */
	char link_args[256];                 /**< driver arguments, "k=v,k=v" */
	uint8_t mac[6];                      /**< port MAC address */
	unsigned int nb_ipv4;                /**< configured IPv4 addresses */
	struct in_addr ipv4[DRNIC_MAX_ADDRS];
	unsigned int nb_ipv6;                /**< configured IPv6 addresses */
	struct in6_addr ipv6[DRNIC_MAX_ADDRS];
	unsigned int mtu;                    /**< Ethernet MTU (IP packet size), >= 576 */
	int socket_id;                       /**< NUMA socket, SOCKET_ID_ANY for the engines' */
	unsigned int max_qp;                 /**< QPs per device */
	unsigned int max_qp_wr;              /**< WRs per send or receive queue */
	unsigned int max_sge;                /**< SGEs per WR */
	unsigned int max_inline_data;        /**< inline bytes per send WR */
	unsigned int max_cqe;                /**< CQEs per CQ (advertised) */
	unsigned int max_mr;                 /**< MRs per device */
	unsigned int max_pd;                 /**< PDs per device */
	unsigned int max_rd_atomic;          /**< outstanding READ/atomic per QP (1..128) */
	unsigned int nb_mbufs;               /**< mbufs per engine pool */
	struct drnic_progress_opts progress_opts; /**< progress_* keys: the helper's tuning */
	/** mr_pin: registered memory gets a mapping of its own, which the
	 * engines use: -1 auto, shared memory (a memfd, a file or System V
	 * memory); 1 on, private pages too (moved onto a memfd); 0 off. */
	int mr_pin;
};

/**
 * Fill @p cfg with the embedded default: one dedicated engine on the first
 * worker lcore, the loopback link, MAC 02:00:00:00:00:01, IPv4 10.0.0.1,
 * MTU 1500 (port MTU 1024), limits from the drnic_query_device() figures.
 *
 * @return 0; -EINVAL when @p cfg is NULL.
 */
int drnic_config_init(struct drnic_config *cfg);

/**
 * Overlay an INI file on @p cfg (read with rte_cfgfile). Keys of section
 * [device] apply first, then those of [device.@p name] when @p name is not NULL
 * (so one file can describe several devices).
 *
 * @return 0; -EINVAL for NULL arguments or a bad key or value (logged with the
 *         file and key); -ENOENT when the file cannot be opened.
 */
int drnic_config_load(struct drnic_config *cfg, const char *path, const char *name);

/**
 * Set one configuration key from code, with the INI syntax (e.g. key
 * "progress", value "inline"; key "ipv4", value "10.0.0.1,10.0.0.2").
 *
 * @return 0; -EINVAL for a NULL argument, an unknown key or a bad value.
 */
int drnic_config_set(struct drnic_config *cfg, const char *key, const char *value);

/**
 * drnic_config_set() of "KEY=VALUE" in one string, as a `--set KEY=VALUE`
 * option gives it.
 *
 * @return as drnic_config_set(); -EINVAL also without '=' or with a key of
 *         64 characters or more.
 */
int drnic_config_set_pair(struct drnic_config *cfg, const char *pair);

/**
 * Say whether drnic_config_set() would take @p key = @p value, and if not, why.
 *
 * @param why      receives the reason on -EINVAL ("unknown key", "out of range
 *                 0..1000", "expected auto or nap", ...); may be NULL.
 * @param why_len  room in @p why.
 * @return 0 when the key exists and the value is valid; -EINVAL otherwise
 *         (and for a NULL @p key or @p value).
 */
int drnic_config_check(const char *key, const char *value, char *why, size_t why_len);

/* ------------------------------------------------------------------------ */
/* Enums numerically equal to libibverbs'                                   */
/* ------------------------------------------------------------------------ */

/** Port states (= enum ibv_port_state). */
enum drnic_port_state {
	DRNIC_PORT_NOP = 0,
	DRNIC_PORT_DOWN = 1,
	DRNIC_PORT_INIT = 2,
	DRNIC_PORT_ARMED = 3,
	DRNIC_PORT_ACTIVE = 4,
	DRNIC_PORT_ACTIVE_DEFER = 5,
};

/** Link layers (= IBV_LINK_LAYER_*). */
enum drnic_link_layer {
	DRNIC_LINK_LAYER_UNSPECIFIED = 0,
	DRNIC_LINK_LAYER_INFINIBAND = 1,
	DRNIC_LINK_LAYER_ETHERNET = 2,
};

/** Path MTUs (= enum ibv_mtu). */
enum drnic_mtu {
	DRNIC_MTU_256 = 1,
	DRNIC_MTU_512 = 2,
	DRNIC_MTU_1024 = 3,
	DRNIC_MTU_2048 = 4,
	DRNIC_MTU_4096 = 5,
};

/** Memory access rights (= enum ibv_access_flags). */
enum drnic_access_flags {
	DRNIC_ACCESS_LOCAL_WRITE = 1,
	DRNIC_ACCESS_REMOTE_WRITE = 1 << 1,
	DRNIC_ACCESS_REMOTE_READ = 1 << 2,
	DRNIC_ACCESS_REMOTE_ATOMIC = 1 << 3,
	DRNIC_ACCESS_MW_BIND = 1 << 4,
	/** On-demand paging (IBV_ACCESS_ON_DEMAND). Every drnic MR already
	 * behaves so: nothing is pinned, the engines reach the memory through
	 * the process's page tables, so what is mapped there at the time of an
	 * access is what they read and write (pages swapped, migrated or
	 * remapped are followed). The bit marks the MR for drnic_advise_mr(). */
	DRNIC_ACCESS_ON_DEMAND = 1 << 6,
};

/** QP types (= enum ibv_qp_type). */
enum drnic_qp_type {
	DRNIC_QPT_RC = 2,
	DRNIC_QPT_UC = 3,
	DRNIC_QPT_UD = 4,
	DRNIC_QPT_XRC_SEND = 9,
	DRNIC_QPT_XRC_RECV = 10,
};

/** QP states (= enum ibv_qp_state). */
enum drnic_qp_state {
	DRNIC_QPS_RESET = 0,
	DRNIC_QPS_INIT,
	DRNIC_QPS_RTR,
	DRNIC_QPS_RTS,
	DRNIC_QPS_SQD,
	DRNIC_QPS_SQE,
	DRNIC_QPS_ERR,
	DRNIC_QPS_UNKNOWN,
};

/** Path migration states (= enum ibv_mig_state). */
enum drnic_mig_state {
	DRNIC_MIG_MIGRATED = 0,
	DRNIC_MIG_REARM,
	DRNIC_MIG_ARMED,
};

/** Attribute mask bits of drnic_modify_qp() (= enum ibv_qp_attr_mask). */
enum drnic_qp_attr_mask {
	DRNIC_QP_STATE = 1 << 0,
	DRNIC_QP_CUR_STATE = 1 << 1,
	DRNIC_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	DRNIC_QP_ACCESS_FLAGS = 1 << 3,
	DRNIC_QP_PKEY_INDEX = 1 << 4,
	DRNIC_QP_PORT = 1 << 5,
	DRNIC_QP_QKEY = 1 << 6,
	DRNIC_QP_AV = 1 << 7,
	DRNIC_QP_PATH_MTU = 1 << 8,
	DRNIC_QP_TIMEOUT = 1 << 9,
	DRNIC_QP_RETRY_CNT = 1 << 10,
	DRNIC_QP_RNR_RETRY = 1 << 11,
	DRNIC_QP_RQ_PSN = 1 << 12,
	DRNIC_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	DRNIC_QP_ALT_PATH = 1 << 14,
	DRNIC_QP_MIN_RNR_TIMER = 1 << 15,
	DRNIC_QP_SQ_PSN = 1 << 16,
	DRNIC_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	DRNIC_QP_PATH_MIG_STATE = 1 << 18,
	DRNIC_QP_CAP = 1 << 19,
	DRNIC_QP_DEST_QPN = 1 << 20,
	DRNIC_QP_RATE_LIMIT = 1 << 25,
};

/** Send work request opcodes (= enum ibv_wr_opcode). A UD QP sends SEND
 * and SEND_WITH_IMM only, each in one packet: longer than the port's active
 * MTU, it completes with DRNIC_WC_LOC_LEN_ERR. */
enum drnic_wr_opcode {
	DRNIC_WR_RDMA_WRITE = 0,
	DRNIC_WR_RDMA_WRITE_WITH_IMM = 1,
	DRNIC_WR_SEND = 2,
	DRNIC_WR_SEND_WITH_IMM = 3,
	DRNIC_WR_RDMA_READ = 4,
	DRNIC_WR_ATOMIC_CMP_AND_SWP = 5,
	DRNIC_WR_ATOMIC_FETCH_AND_ADD = 6,
	DRNIC_WR_LOCAL_INV = 7,
	DRNIC_WR_BIND_MW = 8,
	DRNIC_WR_SEND_WITH_INV = 9,
	DRNIC_WR_ATOMIC_WRITE = 15,
};

/** Send flags (= enum ibv_send_flags). */
enum drnic_send_flags {
	DRNIC_SEND_FENCE = 1 << 0,      /**< wait for earlier READ/atomics */
	DRNIC_SEND_SIGNALED = 1 << 1,   /**< completion even without sq_sig_all */
	DRNIC_SEND_SOLICITED = 1 << 2,  /**< set the solicited event bit */
	DRNIC_SEND_INLINE = 1 << 3,     /**< copy the data at post time; lkeys ignored */
};

/* ------------------------------------------------------------------------ */
/* Device and port                                                          */
/* ------------------------------------------------------------------------ */

/** A GID (= union ibv_gid). RoCEv2 IPv4 GIDs are ::ffff:a.b.c.d. */
union drnic_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} global;
};

/** Atomic capability (= enum ibv_atomic_cap). */
enum drnic_atomic_cap {
	DRNIC_ATOMIC_NONE = 0,
	DRNIC_ATOMIC_HCA = 1,   /**< atomic only among RNIC atomics */
	DRNIC_ATOMIC_GLOB = 2,  /**< atomic with CPU atomics too (drnic: yes) */
};

/**
 * The vendor id drnic reports (drnic_device_attr::vendor_id, and the drop-in
 * libibverbs' default): 0xFFFFFF, "no IEEE OUI", as Linux Soft-RoCE reports.
 * Never 0, which tools read as "no device information".
 */
#define DRNIC_VENDOR_ID 0xFFFFFFu

/** Device attributes (the ibv_device_attr fields that mean something here). */
struct drnic_device_attr {
	char fw_ver[64];
	uint64_t node_guid;
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;             /**< DRNIC_VENDOR_ID */
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int max_qp;
	int max_qp_wr;
	unsigned int device_cap_flags;
	int max_sge;
	int max_sge_rd;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_res_rd_atom;
	int max_qp_init_rd_atom;
	enum drnic_atomic_cap atomic_cap;
	int max_srq;             /**< shared receive queues per device */
	int max_pkeys;
	uint8_t phys_port_cnt;   /**< 1 */
	int max_srq_wr;          /**< WRs an SRQ holds */
	int max_srq_sge;         /**< SGEs per SRQ receive WR */
	int max_ah;              /**< address handles per device */
	int max_mcast_grp;       /**< multicast groups attached at once */
	int max_mcast_qp_attach; /**< UD QPs per multicast group */
	int max_total_mcast_qp_attach; /**< attachments in all */
	int max_mw;              /**< memory windows per device (type 1 and 2) */
	/* drnic additions */
	int max_xrcd;            /**< XRC domains per device (XRC: see drnic_open_xrcd()) */
	int max_inline_data;
	unsigned int nb_engines;
	enum drnic_progress_mode progress;
	/** DRNIC_DEVICE_* bits beyond device_cap_flags (= the kernel's
	 * device_cap_flags_ex bits, IB_UVERBS_DEVICE_*). */
	uint64_t device_cap_flags_ex;
};

/** device_cap_flags: drnic_modify_srq() grows an SRQ (= IBV_DEVICE_SRQ_RESIZE). */
#define DRNIC_DEVICE_SRQ_RESIZE (1u << 13)

/** device_cap_flags_ex: IBV_WR_ATOMIC_WRITE (DRNIC_WR_ATOMIC_WRITE) is
 * offered; the value of Linux's IB_UVERBS_DEVICE_ATOMIC_WRITE (6.2). */
#define DRNIC_DEVICE_ATOMIC_WRITE (1ull << 40)

/** Port attributes (the ibv_port_attr fields that mean something here). */
struct drnic_port_attr {
	enum drnic_port_state state;
	enum drnic_mtu max_mtu;
	enum drnic_mtu active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;      /**< 5 = LinkUp */
	uint8_t link_layer;      /**< DRNIC_LINK_LAYER_ETHERNET */
	/* drnic additions */
	unsigned int eth_mtu;    /**< configured Ethernet MTU */
	uint8_t mac[6];
};

/**
 * Open a device: start (or join) its engines and open its link.
 *
 * @param cfg   configuration (drnic_config_init() and friends); NULL for the
 *              embedded default.
 * @return the device, or NULL with rte_errno set:
 *         EINVAL (bad configuration, e.g. no engines, an lcore that is not an
 *         EAL worker lcore, an unknown link driver, MTU out of range),
 *         EEXIST (a device of that name is open), ENOMEM,
 *         EBUSY (an engine lcore is busy with something else, or the
 *         loopback wire named in link_args already has two ends),
 *         ENOTSUP (no engine library linked), or the link driver's error.
 */
struct drnic_device *drnic_device_open(const struct drnic_config *cfg);

/**
 * Close a device: stop its engines (or leave the shared ones), close its link.
 *
 * @return 0; -EINVAL when @p dev is NULL or not an open device (closed
 *         already: nothing behind it is read); -EBUSY while PDs, MRs, QPs or
 *         XRC domains of the device still exist.
 */
int drnic_device_close(struct drnic_device *dev);

/**
 * The devices this process may open: with a daemon (drnic_env_opts::daemon),
 * the daemon's; else the ones this process has open. Their configurations
 * go to @p cfgs (at most @p max of them).
 *
 * @return how many there are (maybe more than @p max), or a negative errno
 *         (-EINVAL: @p cfgs NULL with @p max not 0; -EPIPE: the daemon has
 *         gone).
 */
int drnic_device_list(struct drnic_config *cfgs, unsigned int max);

/** @return the device's name, or NULL when @p dev is NULL. */
const char *drnic_device_name(const struct drnic_device *dev);

/**
 * The device's asynchronous event queue (CQ errors, QP fatal errors, port
 * events); read it with drnic_get_async_event() (drnic_cq.h). It carries the
 * events of the objects created without a queue of their own, and every
 * device event (port up and down).
 *
 * @return the queue, or NULL (rte_errno EINVAL) when @p dev is NULL.
 */
struct drnic_async_queue *drnic_device_async_queue(struct drnic_device *dev);

/** How many queues drnic_device_async_subscribe() takes per device. */
#define DRNIC_MAX_ASYNC_SUBSCRIBERS 64

/**
 * Give another async queue the device's own events (PORT_ACTIVE, PORT_ERR,
 * ...) too, besides the device's queue: for a user of the device with a
 * queue of its own (as each ibv_context has), whose objects raise into it
 * (drnic_cq_attr::async_queue, drnic_qp_init_attr::async_queue). The queue
 * cannot be destroyed while subscribed.
 *
 * @return 0; -EINVAL (NULL argument, the device's own queue, or a queue being
 *         destroyed); -EEXIST (already subscribed); -ENOSPC
 *         (DRNIC_MAX_ASYNC_SUBSCRIBERS reached).
 */
int drnic_device_async_subscribe(struct drnic_device *dev, struct drnic_async_queue *q);

/**
 * Stop giving @p q the device's events. drnic_device_close() unsubscribes
 * every queue left.
 *
 * @return 0; -EINVAL (NULL argument); -ENOENT (@p q is not subscribed).
 */
int drnic_device_async_unsubscribe(struct drnic_device *dev, struct drnic_async_queue *q);

/**
 * The device's link, for its counters (drnic_link.h).
 *
 * @return the link, or NULL: rte_errno EINVAL when @p dev is NULL, ENOTSUP in
 * a process attached to drnicd (the link is the daemon's: drnic-ctl stats).
 */
struct drnic_link *drnic_device_link(struct drnic_device *dev);

/**
 * Query device limits.
 * @return 0; -EINVAL when an argument is NULL.
 */
int drnic_query_device(struct drnic_device *dev, struct drnic_device_attr *attr);

/**
 * Query a port. The port is ACTIVE once the link is up, its link layer is
 * Ethernet, and its active MTU is the largest path MTU that fits the Ethernet
 * MTU with the RoCEv2 headers.
 *
 * @param port_num  1 (the only port).
 * @return 0; -EINVAL for a NULL argument or a port number other than 1.
 */
int drnic_query_port(struct drnic_device *dev, uint8_t port_num, struct drnic_port_attr *attr);

/**
 * Read one GID table entry. Entries are the configured IPv4 addresses as
 * IPv4-mapped GIDs (::ffff:a.b.c.d) followed by the IPv6 addresses; entries
 * past them are zero.
 *
 * @return 0; -EINVAL for a NULL argument, port other than 1 or index out of
 *         the table.
 */
int drnic_query_gid(struct drnic_device *dev, uint8_t port_num, int index, union drnic_gid *gid);

/**
 * Run the inline engines of the process once (a bounded amount of work).
 * Harmless in dedicated mode.
 *
 * @return how much work was done (packets and WQEs handled); 0 when idle.
 */
int drnic_device_progress(struct drnic_device *dev);

/**
 * Launch @p fn(@p arg) on the @p index -th application lcore of the device's
 * configuration (rte_eal_remote_launch), e.g. a thread that owns its CQs.
 *
 * @return 0; -EINVAL (NULL argument, no such application lcore);
 *         -EBUSY (that lcore is running something).
 */
int drnic_app_launch(struct drnic_device *dev, unsigned int index, int (*fn)(void *), void *arg);

/**
 * Wait for the work launched on the @p index -th application lcore.
 * @return fn's return value; -EINVAL for a bad argument.
 */
int drnic_app_wait(struct drnic_device *dev, unsigned int index);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Allocate a buffer for RDMA from hugepage memory (rte_malloc_socket).
 *
 * @param size       bytes, > 0.
 * @param align      alignment, a power of two, or 0 for a cache line.
 * @param socket_id  NUMA socket, or SOCKET_ID_ANY (-1) for the caller's.
 * @return the zero-filled buffer, or NULL with rte_errno EINVAL (size 0, bad
 *         alignment) or ENOMEM.
 */
void *drnic_alloc(size_t size, size_t align, int socket_id);

/** Free a buffer from drnic_alloc(); NULL is ignored. */
void drnic_free(void *buf);

/**
 * Allocate a protection domain.
 * @return the PD, or NULL with rte_errno EINVAL (NULL @p dev) or ENOMEM
 *         (max_pd reached or no memory).
 */
struct drnic_pd *drnic_alloc_pd(struct drnic_device *dev);

/**
 * Free a protection domain.
 * @return 0; -EINVAL when @p pd is NULL or not a live PD (freed already:
 *         nothing behind it is read); -EBUSY while MRs or QPs use it.
 */
int drnic_dealloc_pd(struct drnic_pd *pd);

/**
 * Register a memory region. A key is an MR table index plus a generation
 * that is a keyed permutation (random seed per device) of the slot's
 * registration count: keys are never 0, not sequential, a key used after
 * drnic_dereg_mr() fails the access, and a freed key is handed out again
 * only after 2^(31 - log2(max_mr + 1), rounded up) registrations of its slot
 * (free slots are reused oldest first). lkey == rkey.
 *
 * The range is probed once, here (from /proc/self/maps, touching nothing):
 * it must be mapped from end to end and readable, and writable when
 * @p access lets anything write into it (LOCAL_WRITE, REMOTE_WRITE,
 * REMOTE_ATOMIC). Unmapping it while registered is the caller's fault.
 *
 * @param addr    start of the region (any user memory; a zero @p length is
 *                allowed, mapped or not).
 * @param access  DRNIC_ACCESS_* flags. REMOTE_WRITE and REMOTE_ATOMIC need
 *                LOCAL_WRITE (as in verbs).
 * @return the MR, or NULL with rte_errno: EINVAL (NULL pd, NULL addr with a
 *         non-zero length, unknown access bit, REMOTE_WRITE/ATOMIC without
 *         LOCAL_WRITE, address range wraps), EFAULT (part of the range not
 *         mapped, not readable, or not writable for a writable MR, as
 *         ibv_reg_mr), ENOMEM (max_mr reached).
 */
struct drnic_mr *drnic_reg_mr(struct drnic_pd *pd, void *addr, size_t length, unsigned int access);

/**
 * Register a memory region that keys name by another address: @p iova is
 * the address of its first byte in SGEs and in a peer's RDMA requests
 * (0: zero-based, as device memory MRs are). drnic_reg_mr() is this with
 * @p iova = @p addr. The engines still reach the memory at @p addr; posts
 * translate their SGEs.
 *
 * @return as drnic_reg_mr(); EINVAL also when [iova, iova + length) wraps.
 */
struct drnic_mr *drnic_reg_mr_iova(struct drnic_pd *pd, void *addr, size_t length,
				   uint64_t iova, unsigned int access);

/**
 * Deregister a memory region; its keys fail from now on.
 * @return 0; -EINVAL when @p mr is NULL or not a registered MR (deregistered
 *         already: nothing behind it is read); -EBUSY while a memory window
 *         is bound to it (IBA: a region with bound windows stays
 *         registered; nothing is changed).
 */
int drnic_dereg_mr(struct drnic_mr *mr);

/** drnic_rereg_mr() flags (= enum ibv_rereg_mr_flags). */
enum drnic_rereg_mr_flags {
	DRNIC_REREG_MR_CHANGE_TRANSLATION = 1 << 0,  /**< new addr and length */
	DRNIC_REREG_MR_CHANGE_PD = 1 << 1,           /**< new protection domain */
	DRNIC_REREG_MR_CHANGE_ACCESS = 1 << 2,       /**< new access flags */
	DRNIC_REREG_MR_KNOWN = (1 << 3) - 1,
};

/**
 * Re-register a memory region: what @p flags name changes, the rest stays
 * (ibv_rereg_mr(3): a deregistration followed by a registration, the MR
 * object kept; a new translation is named by its own address, as
 * drnic_reg_mr() names it). The MR gets new keys (drnic_mr_lkey(), drnic_mr_rkey()):
 * the old ones fail from the start of the call, as after drnic_dereg_mr(),
 * and when it returns no engine touches the old translation again (WQEs
 * that still used the old keys complete with a protection error, a peer
 * using the old rkey gets a remote access error). New memory is probed as
 * drnic_reg_mr() probes it (also the old range when it becomes writable).
 *
 * @param pd      the new PD (DRNIC_REREG_MR_CHANGE_PD), of the same device.
 * @param addr    the new start (DRNIC_REREG_MR_CHANGE_TRANSLATION).
 * @param length  the new length (DRNIC_REREG_MR_CHANGE_TRANSLATION).
 * @param access  the new DRNIC_ACCESS_* (DRNIC_REREG_MR_CHANGE_ACCESS).
 * @return 0; on error the MR is unchanged and still registered:
 *         -EINVAL (NULL or deregistered @p mr, @p flags 0 or unknown, a PD
 *         that is not live or of another device, NULL @p addr with a
 *         non-zero length, a range that wraps, bad access as
 *         drnic_reg_mr()), -EFAULT (new range not mapped, not readable, or
 *         not writable for writable access; attached to drnicd, also DPDK
 *         memory the process was not given), -ENOMEM (attached: no memory
 *         to share the new range or map it in the daemon).
 */
int drnic_rereg_mr(struct drnic_mr *mr, unsigned int flags, struct drnic_pd *pd, void *addr,
		   size_t length, unsigned int access);

/** drnic_advise_mr() advice (= enum ibv_advise_mr_advice). */
enum drnic_advise_mr_advice {
	DRNIC_ADVISE_MR_PREFETCH = 0,           /**< make the pages present, readable */
	DRNIC_ADVISE_MR_PREFETCH_WRITE = 1,     /**< ... readable and writable */
	DRNIC_ADVISE_MR_PREFETCH_NO_FAULT = 2,  /**< present pages only: nothing to do */
};

/** drnic_advise_mr() flag: return when done (drnic always does). */
#define DRNIC_ADVISE_MR_FLAG_FLUSH (1u << 0)

/**
 * Advise about ranges of ODP MRs (ibv_advise_mr(3)): prefetching faults the
 * pages in now (MADV_POPULATE_READ / _WRITE, or MADV_WILLNEED on kernels
 * without them), so that an engine's first access does not wait for the
 * kernel. Best effort, synchronous. Every SGE is checked before any advice
 * is given.
 *
 * @param sg_list  ranges: each an lkey of an MR of @p pd registered with
 *                 DRNIC_ACCESS_ON_DEMAND, and an address range inside it.
 * @return 0; -EINVAL (NULL or freed @p pd, unknown flags, @p num_sge 0, NULL
 *         @p sg_list, an MR that is not ODP or of another PD),
 *         -EOPNOTSUPP (unknown advice), -EFAULT (an lkey that is not
 *         registered, a range outside its MR), -EPERM (PREFETCH_WRITE into an
 *         MR without DRNIC_ACCESS_LOCAL_WRITE).
 */
int drnic_advise_mr(struct drnic_pd *pd, int advice, uint32_t flags,
		    const struct drnic_sge *sg_list, uint32_t num_sge);

/** @return the MR's local key (0 for NULL). */
uint32_t drnic_mr_lkey(const struct drnic_mr *mr);
/** @return the MR's remote key (0 for NULL). */
uint32_t drnic_mr_rkey(const struct drnic_mr *mr);
/** @return the MR's start address (NULL for NULL). */
void *drnic_mr_addr(const struct drnic_mr *mr);
/** @return the MR's length (0 for NULL). */
size_t drnic_mr_length(const struct drnic_mr *mr);

/* ------------------------------------------------------------------------ */
/* Queue pairs                                                              */
/* ------------------------------------------------------------------------ */

/** QP capacities (= struct ibv_qp_cap). */
struct drnic_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

/** QP creation attributes (= struct ibv_qp_init_attr). */
struct drnic_qp_init_attr {
	void *qp_context;            /**< returned by drnic_qp_context() */
	struct drnic_cq *send_cq;    /**< required */
	struct drnic_cq *recv_cq;    /**< required; may equal send_cq */
	/** Receives come from this SRQ (cap.max_recv_wr and max_recv_sge are
	 *  ignored and reported 0); NULL: the QP's own receive queue. */
	struct drnic_srq *srq;
	/** Requested capacities; on success the actual ones (rounded up). */
	struct drnic_qp_cap cap;
	enum drnic_qp_type qp_type;  /**< RC, UC, UD, XRC_SEND or XRC_RECV */
	int sq_sig_all;              /**< every send WR generates a completion */
	/** Where the QP's async events go; NULL: the device's queue. */
	struct drnic_async_queue *async_queue;
	/** XRC_RECV: the XRC domain the QP belongs to (required; then no CQ,
	 *  SRQ, capacity or PD is used: pd may be NULL). */
	struct drnic_xrcd *xrcd;
};

/** Global route (= struct ibv_global_route). */
struct drnic_global_route {
	union drnic_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

/** Address vector (= struct ibv_ah_attr, plus the RoCE destination MAC). */
struct drnic_ah_attr {
	struct drnic_global_route grh;  /**< RoCEv2: is_global must be 1 */
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
	/** Destination MAC; all zero: ask the link (loopback knows its peer,
	 * ethdev links resolve the GID with ARP / neighbour discovery). */
	uint8_t dmac[6];
};

/** QP attributes (= struct ibv_qp_attr). */
struct drnic_qp_attr {
	enum drnic_qp_state qp_state;
	enum drnic_qp_state cur_qp_state;
	enum drnic_mtu path_mtu;
	enum drnic_mig_state path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned int qp_access_flags;
	struct drnic_qp_cap cap;
	struct drnic_ah_attr ah_attr;
	struct drnic_ah_attr alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint32_t rate_limit;
};

/**
 * Create a QP in RESET: reliable connected (RC), unreliable connected (UC),
 * unreliable datagram (UD) or XRC. It is served by the engine of its
 * send CQ's comp_vector (comp_vector modulo the device's engine count); the
 * receive CQ must map to the same engine. One CQ may serve many QPs, all of
 * one device (a CQ has exactly one producer: its engine). In inline progress
 * mode the QP's CQs run the process's inline engines when polled.
 *
 * The types (ibv_create_qp_ex(3)):
 *  - RC, UC and UD: a send queue and a receive queue (or an SRQ) and two
 *    CQs.
 *  - XRC_SEND, an XRC initiator: a send queue only (recv_cq, srq and the
 *    receive capacities are ignored); each send WR names the XRC SRQ at
 *    the target (drnic_send_wr::qp_type.xrc.remote_srqn). Reliable as RC:
 *    ACKs, retries, READ and atomics.
 *  - XRC_RECV, an XRC target: no send or receive queue, no CQ and no PD;
 *    it belongs to attr->xrcd and delivers each incoming message to the
 *    XRC SRQ of that domain its XRCETH names (completions on that SRQ's
 *    CQ, with qp_num this QP's number). It runs on engine 0 (the engine
 *    XRC SRQs' CQs must be on). Other processes' XRC domains do not
 *    exist here: drnic_open_qp() shares it within the process.
 *
 * A UD QP sends and receives datagrams of up to the port's active MTU
 * (drnic_port_attr::active_mtu; its path_mtu reports it). Each receive
 * buffer starts with a 40-byte GRH area (see DRNIC_WC_GRH): the datagram's
 * IPv4 header in its last 20 bytes (the first 20 are zero), or its IPv6
 * header; the payload follows, and the receive's byte_len counts both. A
 * datagram is taken only with the QP's Q_Key (else dropped and counted in
 * the port's qkey_viol_cntr); one that finds no receive WQE is dropped
 * (counted, DRNIC_ENGINE_DROP_UD_NO_WQE): nothing is retried, a datagram is
 * delivered once or not at all.
 *
 * @param pd    protection domain of the QP (NULL allowed for XRC_RECV).
 * @param attr  creation attributes; attr->cap is updated with the actual
 *              capacities (queue sizes rounded up to a power of two).
 * @return the QP, or NULL with rte_errno:
 *         EINVAL (NULL attr, NULL pd or CQ where the type needs one, a CQ
 *         of another device, an unknown qp_type, an SRQ that is not live, of
 *         another device or an XRC SRQ, max_send_wr/max_recv_wr 0 or above
 *         max_qp_wr,
 *         SGEs above max_sge, inline above max_inline_data, CQs on two
 *         engines, XRC_RECV without a live XRC domain of this device),
 *         ENOMEM (max_qp reached or no memory).
 */
struct drnic_qp *drnic_create_qp(struct drnic_pd *pd, struct drnic_qp_init_attr *attr);

/**
 * Open an XRC target QP of @p xrcd by number (ibv_open_qp(3)): the same QP,
 * one more reference to it. Each open is matched by a drnic_destroy_qp(),
 * which destroys the QP only when it is the last reference (the creation's
 * or an open's).
 *
 * @return the QP, or NULL with rte_errno: EINVAL (NULL or closed
 *         @p xrcd), ENOENT (no XRC_RECV QP of that number in @p xrcd).
 */
struct drnic_qp *drnic_open_qp(struct drnic_xrcd *xrcd, uint32_t qp_num);

/**
 * Modify a QP (ibv_modify_qp semantics). @p attr_mask names the fields of
 * @p attr to apply. Allowed transitions and required/optional attributes per
 * transition are those of the IB spec (RESET→INIT needs PKEY_INDEX, PORT,
 * ACCESS_FLAGS; INIT→RTR needs AV, PATH_MTU, DEST_QPN, RQ_PSN,
 * MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER; RTR→RTS needs SQ_PSN, TIMEOUT,
 * RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC; any state → RESET or ERR; RTS↔SQD;
 * SQE→RTS). A UC QP neither needs nor takes the responder's and
 * requester's reliability attributes (MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER,
 * TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC); an XRC_SEND QP (a
 * requester only) neither needs nor takes MAX_DEST_RD_ATOMIC and
 * MIN_RNR_TIMER; an XRC_RECV QP (a responder only) neither needs nor takes
 * RETRY_CNT, RNR_RETRY and MAX_QP_RD_ATOMIC, but RTR→RTS needs TIMEOUT and
 * SQ_PSN. Moving to ERR flushes every outstanding WR with WR_FLUSH_ERR;
 * moving to RESET empties the queues without completions. A UD QP follows
 * the UD column of ibv_modify_qp(3): RESET→INIT needs PKEY_INDEX, PORT and
 * QKEY; RTR→RTS needs SQ_PSN; QKEY may change in every later transition;
 * nothing else is taken. A Q_Key with its high bit set is a controlled one
 * (IBA 10.2.4): setting it needs CAP_NET_RAW (-EPERM otherwise).
 *
 * @return 0; -EINVAL (NULL argument, invalid transition, a required attribute
 *         missing, an attribute not allowed in this transition, a value out
 *         of range such as path MTU above the port's, a port other than 1,
 *         a GID index outside the table, CUR_STATE not the current state);
 *         -EHOSTUNREACH (the address vector has no destination MAC and the
 *         link could not resolve the destination GID: no ARP / neighbour
 *         answer within about 3 s; in inline mode the calling thread runs
 *         the engines while it waits);
 *         nothing is changed on error.
 */
int drnic_modify_qp(struct drnic_qp *qp, struct drnic_qp_attr *attr, int attr_mask);

/**
 * Query a QP's attributes and creation attributes (all fields are filled
 * whatever @p attr_mask says).
 *
 * @return 0; -EINVAL when an argument is NULL.
 */
int drnic_query_qp(struct drnic_qp *qp, struct drnic_qp_attr *attr, int attr_mask,
		   struct drnic_qp_init_attr *init_attr);

/**
 * Destroy a QP. Outstanding WRs are dropped without completions (as in
 * verbs); the QP's CQs lose one user.
 *
 * Async events about the QP that were raised and never taken are dropped
 * from its queue (events_purged).
 *
 * @return 0; -EINVAL when @p qp is NULL or not a live QP (destroyed
 *         already: nothing behind it is read); -EBUSY while an async event about
 *         the QP that was taken (drnic_get_async_event()) is not acknowledged
 *         with drnic_ack_async_event(), as libibverbs' destroy waits for
 *         (nothing is changed then). Taking its events while destroying the QP
 *         in another thread is a race the caller must avoid.
 */
int drnic_destroy_qp(struct drnic_qp *qp);

/** @return the QP number, or 0 for NULL. */
uint32_t drnic_qp_num(const struct drnic_qp *qp);
/** @return the current QP state (DRNIC_QPS_UNKNOWN for NULL). */
enum drnic_qp_state drnic_qp_state(const struct drnic_qp *qp);
/** @return the qp_context given at creation (NULL for NULL). */
void *drnic_qp_context(const struct drnic_qp *qp);
/** @return the name of a QP state ("RESET", "INIT", ...), "UNKNOWN" for others. */
const char *drnic_qp_state_str(enum drnic_qp_state state);

/* ------------------------------------------------------------------------ */
/* Address handles and multicast (UD)                                       */
/* ------------------------------------------------------------------------ */

/**
 * Create an address handle: the destination of UD sends
 * (drnic_send_wr::wr.ud.ah). The destination MAC is resolved now, as
 * drnic_modify_qp() does for an RC QP's address vector: the one given in
 * @p attr->dmac, the multicast MAC of a multicast GID (01:00:5e:... for
 * IPv4, 33:33:... for IPv6), or the link's answer (ARP / neighbour
 * discovery; in inline mode this thread runs the engines while it waits).
 *
 * @return the AH, or NULL with rte_errno: EINVAL (NULL argument, not
 *         is_global, a source GID index outside the table, port not 0 or 1),
 *         EHOSTUNREACH (no answer for the destination GID within about
 *         3 s), ENOMEM (max_ah reached, no memory).
 */
struct drnic_ah *drnic_create_ah(struct drnic_pd *pd, struct drnic_ah_attr *attr);

/**
 * Destroy an address handle.
 *
 * @return 0; -EINVAL (NULL or destroyed already: nothing behind it is read);
 *         -EBUSY while a posted UD send that names it has not left yet.
 */
int drnic_destroy_ah(struct drnic_ah *ah);

/** @return the attributes @p ah was created with, the MAC resolved (NULL for NULL). */
const struct drnic_ah_attr *drnic_ah_attr_get(const struct drnic_ah *ah);

/**
 * The address vector that answers a datagram (ibv_init_ah_from_wc()): its
 * source becomes the destination. @p grh is the 40-byte area at the start
 * of the receive buffer (wc->wc_flags has DRNIC_WC_GRH): a RoCEv2 IPv4
 * datagram's IP header in its last 20 bytes, an IPv6 one's in all 40. The
 * source GID index is that of the local address the datagram was sent to.
 *
 * @return 0; -EINVAL (NULL argument, port not 1, no DRNIC_WC_GRH, a GRH
 *         area that is not an IPv4 or IPv6 header); -ENOENT (the datagram
 *         went to an address that is not in the GID table).
 */
int drnic_init_ah_from_wc(struct drnic_device *dev, uint8_t port_num, const struct drnic_wc *wc,
			  const void *grh, struct drnic_ah_attr *attr);

/**
 * Attach UD QP @p qp to the multicast group of GID @p gid (an IPv4-mapped
 * 224.0.0.0/4 address or an IPv6 ff00::/8 one): datagrams sent to the
 * group (destination QPN 0xFFFFFF, the group's IP and MAC) are delivered to
 * every attached QP of the device, each into a receive WQE of its own.
 * Attaching again is a no-op. @p lid is ignored (RoCE).
 *
 * @return 0; -EINVAL (NULL argument, destroyed QP, not a UD QP, not a
 *         multicast GID); -ENOMEM (max_mcast_grp groups, or
 *         max_mcast_qp_attach QPs in this group, already).
 */
int drnic_attach_mcast(struct drnic_qp *qp, const union drnic_gid *gid, uint16_t lid);

/**
 * Detach @p qp from the group of @p gid; its datagrams stop at once.
 *
 * @return 0; -EINVAL (NULL argument, destroyed QP, or not attached).
 */
int drnic_detach_mcast(struct drnic_qp *qp, const union drnic_gid *gid, uint16_t lid);

/* ------------------------------------------------------------------------ */
/* Work requests                                                            */
/* ------------------------------------------------------------------------ */

/** A scatter/gather element (= struct ibv_sge, same layout). */
struct drnic_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/** What a memory window is bound to (= struct ibv_mw_bind_info). */
struct drnic_mw_bind_info {
	struct drnic_mr *mr;
	uint64_t addr;
	uint64_t length;
	unsigned int mw_access_flags;    /**< DRNIC_ACCESS_REMOTE_* */
};

/** A send work request (= struct ibv_send_wr: the same fields and names). */
struct drnic_send_wr {
	uint64_t wr_id;
	struct drnic_send_wr *next;
	struct drnic_sge *sg_list;
	int num_sge;
	enum drnic_wr_opcode opcode;
	unsigned int send_flags;         /**< DRNIC_SEND_* */
	union {
		uint32_t imm_data;       /**< *_WITH_IMM: network byte order */
		uint32_t invalidate_rkey; /**< SEND_WITH_INV, LOCAL_INV */
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;  /**< 8-byte aligned */
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct drnic_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey; /**< high bit set: the QP's own Q_Key */
		} ud;
	} wr;
	union {
		struct {
			/** XRC_SEND: the number of the XRC SRQ at the target
			 *  (24 bits) the message is for. */
			uint32_t remote_srqn;
		} xrc;
	} qp_type;
	union {
		struct {
			struct drnic_mw *mw;
			uint32_t rkey;         /**< the window's new rkey */
			struct drnic_mw_bind_info bind_info;
		} bind_mw;
	};
};

/** A receive work request (= struct ibv_recv_wr, same layout). */
struct drnic_recv_wr {
	uint64_t wr_id;
	struct drnic_recv_wr *next;
	struct drnic_sge *sg_list;
	int num_sge;
};

/**
 * Post a list of send work requests. Each is checked before it is queued;
 * the first one that fails is returned in @p bad_wr and nothing from it on
 * is posted (those before it are). Keys and remote access are checked when
 * the WR executes and reported in its completion, not here:
 *  - LOC_PROT_ERR: a bad or stale lkey, an SGE outside its MR, a READ or
 *    atomic into memory without LOCAL_WRITE;
 *  - LOC_QP_OP_ERR: a READ or atomic on a QP whose max_rd_atomic is 0;
 *  - REM_ACCESS_ERR: the responder refused the rkey, bounds or access;
 *  - REM_INV_REQ_ERR: the responder found the request invalid (e.g. a SEND
 *    longer than the receive buffer, which completes there as LOC_LEN_ERR,
 *    or a WRITE/READ/atomic its qp_access_flags do not enable, or a
 *    misaligned atomic);
 *  - REM_OP_ERR: the responder failed (e.g. its receive lkey was bad);
 *  - RNR_RETRY_EXC_ERR / RETRY_EXC_ERR: rnr_retry / retry_cnt exhausted;
 *  - MW_BIND_ERR: a BIND_MW or LOCAL_INV that breaks the window rules
 *    (drnic_bind_mw(); a type 1 window by BIND_MW; a type 2 window that
 *    is bound, or bound with length 0, or an rkey that differs from the
 *    window's above its key byte; LOCAL_INV of anything but a bound type 2
 *    window of the QP's PD with that rkey);
 *  - WR_FLUSH_ERR: the QP went to ERR before the WR completed.
 * After an error completion the QP is in ERR. Inline data is copied now.
 *
 * Memory windows: DRNIC_WR_BIND_MW binds bind_mw.mw (type 2) to this QP
 * with rkey bind_mw.rkey; DRNIC_WR_LOCAL_INV invalidates the type 2 window
 * of rkey invalidate_rkey; both are local (no packet, sg_list ignored),
 * execute in order when the QP reaches them, and complete with opcode
 * BIND_MW / LOCAL_INV. DRNIC_WR_SEND_WITH_INV is a SEND whose last packet
 * asks the responder to invalidate invalidate_rkey (RC only): its receive
 * completes with DRNIC_WC_WITH_INV and invalidated_rkey; a key it cannot
 * invalidate (not a bound type 2 window of its PD bound to that QP) is an
 * invalid request (REM_INV_REQ_ERR here; there the receive is flushed and
 * the QP goes to ERR).
 *
 * DRNIC_WR_ATOMIC_WRITE (IBA 1.5; RC only): wr.rdma names an 8-aligned
 * remote address and its rkey; the 8 bytes come from the SGEs (8 in all) or
 * inline (DRNIC_SEND_INLINE, allowed whatever max_inline_data is). The
 * responder stores them in one atomic 8-byte access, as they came (no byte
 * swap); it needs REMOTE_WRITE on its QP and its MR (as Linux rxe), takes no
 * READ/atomic resource, and answers with an ACK, so a duplicate is
 * acknowledged again, not stored again. It completes as
 * DRNIC_WC_ATOMIC_WRITE with byte_len 8 (drnic_device_attr's
 * device_cap_flags_ex has DRNIC_DEVICE_ATOMIC_WRITE).
 *
 * @return 0; -EINVAL (NULL qp/wr/bad_wr, unknown opcode, a READ, atomic,
 *         ATOMIC_WRITE or SEND_WITH_INV on a UC QP, a BIND_MW whose
 *         window is not live or whose rights have a bit other than
 *         DRNIC_ACCESS_REMOTE_*, num_sge < 0 or above
 *         the QP's max_send_sge (inline data too, as mlx5), checked before
 *         the list is read; INLINE
 *         with a READ or atomic or more than max_inline_data bytes, atomic
 *         without exactly one 8-byte SGE or with a remote address not 8-byte
 *         aligned, an ATOMIC_WRITE of other than 8 bytes, to a misaligned
 *         address or on a UC or XRC QP, a message longer than 2^31 bytes, QP
 *         in RESET, INIT or RTR;
 *         UD: an opcode other than SEND or SEND_WITH_IMM, wr.ud.ah not a live
 *         AH of the QP's device, remote_qpn above 0xFFFFFF;
 *         XRC_SEND: a remote_srqn above 24 bits; an XRC_RECV QP, which
 *         has no send queue);
 *         -ENOMEM (send queue full).
 *         In ERR the WRs are queued and complete with WR_FLUSH_ERR.
 */
int drnic_post_send(struct drnic_qp *qp, struct drnic_send_wr *wr, struct drnic_send_wr **bad_wr);

/**
 * Post a list of receive work requests, with bad_wr as drnic_post_send().
 * Allowed in every state but RESET; in ERR they complete with WR_FLUSH_ERR.
 *
 * @return 0; -EINVAL (NULL argument, num_sge < 0 or above max_recv_sge,
 *         checked before the list is read; QP in RESET; a QP on an SRQ,
 *         which has no receive queue: drnic_post_srq_recv(); an XRC QP,
 *         which has none either); -ENOMEM
 *         (receive queue full).
 */
int drnic_post_recv(struct drnic_qp *qp, struct drnic_recv_wr *wr, struct drnic_recv_wr **bad_wr);

/* ------------------------------------------------------------------------ */
/* Memory windows                                                           */
/* ------------------------------------------------------------------------ */

/** Memory window types (= enum ibv_mw_type). drnic's type 2 windows are
 * type 2B: bound to one QP, usable only through it. */
enum drnic_mw_type {
	DRNIC_MW_TYPE_1 = 1,
	DRNIC_MW_TYPE_2 = 2,
};

/**
 * Allocate a memory window (ibv_alloc_mw(3)): remote access to part of a
 * memory region, through an rkey of its own, with its own bounds and
 * rights, once bound. A type 1 window is bound with drnic_bind_mw(); a
 * type 2 window with a DRNIC_WR_BIND_MW work request (drnic_post_send()),
 * to the QP that posts it, and is invalidated by DRNIC_WR_LOCAL_INV or by
 * a SEND with Invalidate arriving on that QP. A window's rkey has bit 31
 * set, and its low 8 bits are the consumer's key: a type 2 bind gives the
 * window the rkey named in the WR, which may differ from the current one
 * only there (ibv_inc_rkey()). A type 2 window bound to a QP that is
 * destroyed is invalidated with it (its QP number may come back).
 *
 * @return the window (not bound: its rkey allows nothing yet), or NULL
 *         with rte_errno EINVAL (NULL or freed @p pd, a type other than 1
 *         or 2) or ENOMEM (max_mw reached).
 */
struct drnic_mw *drnic_alloc_mw(struct drnic_pd *pd, enum drnic_mw_type type);

/**
 * Deallocate a memory window, bound or not: its rkey fails from now on;
 * when this returns no engine touches the window any more (the engines are
 * fenced as by drnic_dereg_mr()). A bind of it still queued completes with
 * MW_BIND_ERR.
 *
 * @return 0; -EINVAL when @p mw is NULL or not a live window.
 */
int drnic_dealloc_mw(struct drnic_mw *mw);

/** A type 1 bind (= struct ibv_mw_bind). */
struct drnic_mw_bind {
	uint64_t wr_id;
	unsigned int send_flags;          /**< DRNIC_SEND_SIGNALED, DRNIC_SEND_FENCE */
	struct drnic_mw_bind_info bind_info;  /**< length 0: unbind */
};

/**
 * Bind a type 1 window (ibv_bind_mw(3)): a BIND_MW work request on @p qp's
 * send queue, which completes with opcode DRNIC_WC_BIND_MW (when signaled)
 * in order with the WRs around it. The window's rkey changes now, in its
 * key byte (drnic_mw_rkey() gives the new one, valid for remote access
 * once the bind has executed; the old one fails from then on). A length of
 * 0 unbinds the window. The rules are checked when the WR executes; one
 * broken completes it with DRNIC_WC_MW_BIND_ERR (and the QP goes to ERR):
 * a type 2 window, a window, MR or QP of different PDs, an MR deregistered
 * or without DRNIC_ACCESS_MW_BIND, a range outside the MR, REMOTE_WRITE or
 * REMOTE_ATOMIC on an MR without LOCAL_WRITE.
 *
 * @return 0; -EINVAL (NULL argument, a window not live, mw_access_flags
 *         with a bit other than DRNIC_ACCESS_REMOTE_*, QP in RESET, INIT
 *         or RTR); -ENOMEM (send queue full). Nothing is posted on error.
 */
int drnic_bind_mw(struct drnic_qp *qp, struct drnic_mw *mw, const struct drnic_mw_bind *bind);

/** @return the window's rkey as the application knows it (0 for NULL):
 *  for type 1, the one the last drnic_bind_mw() gave it. */
uint32_t drnic_mw_rkey(const struct drnic_mw *mw);

/** @return the window's type (0 for NULL). */
enum drnic_mw_type drnic_mw_type(const struct drnic_mw *mw);

/* ------------------------------------------------------------------------ */
/* Shared receive queues                                                    */
/* ------------------------------------------------------------------------ */

/** SRQ attributes (= struct ibv_srq_attr). */
struct drnic_srq_attr {
	uint32_t max_wr;      /**< WRs it holds (rounded up on create) */
	uint32_t max_sge;     /**< SGEs per WR */
	/** The limit: when fewer WRs than this remain, SRQ_LIMIT_REACHED is
	 *  raised once and the limit disarms (0: not armed). */
	uint32_t srq_limit;
};

/** SRQ types (= enum ibv_srq_type). */
enum drnic_srq_type {
	DRNIC_SRQT_BASIC = 0,   /**< for the RC and UC QPs created on it */
	DRNIC_SRQT_XRC = 1,     /**< for the XRC target QPs of its domain */
};

/** SRQ creation attributes (= struct ibv_srq_init_attr, and of
 *  struct ibv_srq_init_attr_ex what drnic has). */
struct drnic_srq_init_attr {
	void *srq_context;    /**< returned by drnic_srq_context() */
	struct drnic_srq_attr attr;
	/** Where the SRQ's events go; NULL: the device's queue. */
	struct drnic_async_queue *async_queue;
	enum drnic_srq_type srq_type;  /**< BASIC (0) or XRC */
	struct drnic_xrcd *xrcd;       /**< XRC: its domain */
	/** XRC: the CQ its receives complete on (on engine 0: comp_vector a
	 *  multiple of the device's engine count). */
	struct drnic_cq *cq;
};

/** drnic_modify_srq() mask bits (= enum ibv_srq_attr_mask). */
enum drnic_srq_attr_mask {
	DRNIC_SRQ_MAX_WR = 1 << 0,   /**< resize: grow to max_wr */
	DRNIC_SRQ_LIMIT = 1 << 1,    /**< arm the limit */
};

/**
 * Create a shared receive queue: RC QPs created with it take their receive
 * WQEs from it, in the order they were posted, whichever QP's message
 * arrives first. A message that finds it empty is answered with an RNR NAK,
 * as with an empty receive queue. Receive SGEs are checked against the
 * SRQ's PD.
 *
 * An XRC SRQ (attr->srq_type DRNIC_SRQT_XRC, ibv_create_srq_ex(3)) takes
 * the messages that any XRC target QP of its domain receives for its
 * number (drnic_srq_num()); they complete on attr->cq, and the memory an
 * XRC RDMA WRITE, READ or atomic for it names is checked against its PD.
 *
 * @return the SRQ, or NULL with rte_errno: EINVAL (NULL argument, max_wr 0
 *         or above max_srq_wr, max_sge above max_srq_sge, srq_limit above
 *         max_wr, an unknown srq_type; XRC: no live XRC domain or CQ of
 *         this device, a CQ not on engine 0), ENOMEM (max_srq reached, no
 *         memory).
 */
struct drnic_srq *drnic_create_srq(struct drnic_pd *pd, struct drnic_srq_init_attr *attr);

/**
 * The number of an XRC SRQ (ibv_get_srq_num(3)): what an XRC initiator puts
 * in drnic_send_wr::qp_type.xrc.remote_srqn to reach it.
 *
 * @return 0; -EINVAL (NULL or destroyed SRQ, NULL @p srq_num, a basic SRQ,
 *         which has no number).
 */
int drnic_srq_num(struct drnic_srq *srq, uint32_t *srq_num);

/* ------------------------------------------------------------------------ */
/* XRC domains                                                              */
/* ------------------------------------------------------------------------ */

/**
 * Open an XRC domain (ibv_open_xrcd(3)). With @p fd -1 a new domain of its
 * own (@p oflags must hold O_CREAT). With a file descriptor, the domain of
 * that file's inode: O_CREAT creates it when there is none, O_CREAT |
 * O_EXCL fails when there is one, and without O_CREAT it must exist. The
 * sharing is within this process and device: drnic serves no other process
 * yet (a second process opening the same file gets a domain of its own),
 * which is what ibv_xsrq_pingpong's two processes need.
 *
 * @param oflags  O_CREAT and O_EXCL (<fcntl.h>); nothing else.
 * @return the domain (the same one for each open of one file: every open
 *         is matched by a drnic_close_xrcd()), or NULL with rte_errno:
 *         EINVAL (NULL @p dev, another flag, @p fd -1 without O_CREAT),
 *         EBADF (@p fd is not an open file), ENOENT (no domain for the
 *         file and no O_CREAT), EEXIST (O_CREAT | O_EXCL and there is
 *         one), ENOMEM.
 */
struct drnic_xrcd *drnic_open_xrcd(struct drnic_device *dev, int fd, int oflags);

/**
 * Close an XRC domain opened by drnic_open_xrcd(): the domain goes with its
 * last close.
 *
 * @return 0; -EINVAL (NULL or closed); -EBUSY (the last close while XRC
 *         SRQs or XRC target QPs remain in it; nothing is changed).
 */
int drnic_close_xrcd(struct drnic_xrcd *xrcd);

/**
 * Resize the SRQ (DRNIC_SRQ_MAX_WR) and/or arm its limit (DRNIC_SRQ_LIMIT):
 * SRQ_LIMIT_REACHED is raised once when fewer than attr->srq_limit WRs
 * remain; 0 disarms. A resize grows the SRQ to attr->max_wr rounded up to a
 * power of two (drnic_query_srq() reports it); a max_wr it holds already
 * changes nothing (an SRQ does not shrink). The WRs posted and not taken
 * stay, in order; QPs go on taking WRs meanwhile, posters wait. Both or
 * neither are applied.
 *
 * @return 0; -EINVAL (NULL or destroyed SRQ, NULL attr, an unknown mask
 *         bit, max_wr 0, above max_srq_wr or below the WRs posted and not
 *         yet taken, srq_limit above the size the SRQ will have); -ENOMEM.
 */
int drnic_modify_srq(struct drnic_srq *srq, struct drnic_srq_attr *attr, int attr_mask);

/**
 * The SRQ's size, SGEs per WR and armed limit (0: not armed).
 *
 * @return 0; -EINVAL (NULL or destroyed SRQ, NULL attr).
 */
int drnic_query_srq(struct drnic_srq *srq, struct drnic_srq_attr *attr);

/**
 * Destroy an SRQ. Its WRs are forgotten (not completed).
 *
 * @return 0; -EINVAL (NULL or destroyed already); -EBUSY (a QP uses it, or
 *         an event about it was taken and not acknowledged).
 */
int drnic_destroy_srq(struct drnic_srq *srq);

/**
 * Post receive work requests to an SRQ, with bad_wr as drnic_post_recv().
 * Safe from any number of threads at once.
 *
 * @return 0; -EINVAL (NULL argument, num_sge < 0 or above max_sge,
 *         checked before the list is read); -ENOMEM (SRQ full).
 */
int drnic_post_srq_recv(struct drnic_srq *srq, struct drnic_recv_wr *wr,
			struct drnic_recv_wr **bad_wr);

/** The srq_context given at creation. */
void *drnic_srq_context(const struct drnic_srq *srq);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_VERBS_H */
