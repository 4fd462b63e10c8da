/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_RPC_H
#define DRNIC_RPC_H

/*
 * The control channel between a program attached to drnicd and the daemon
 * (private to drnic; not installed). As verbs commands go to a kernel
 * driver, object creation and destruction go to the daemon, which owns the
 * device, its tables and its engines; the data path (WQEs, doorbells, CQEs)
 * never crosses it.
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET connection per attached process, one
 * request and one reply at a time (struct rpc_msg both ways; a control
 * tool's text replies follow the reply's header in the same packet). The
 * attached process is a DPDK secondary of the daemon's EAL (same file
 * prefix), so every object the daemon creates lives in hugepage memory at
 * the same address in both: a reply names an object by that address. The
 * daemon accepts in a request only objects that the same connection was
 * given, so one process's objects are not another's to name. The daemon
 * learns that a process has gone when its connection closes, for whatever
 * reason, and then destroys what it owned.
 *
 * The client half is lib/env's (env_rpc.c): every library above it routes
 * its control calls through rpc_call() while rpc_attached() is true.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change of struct rpc_msg or the ops' meanings. */
#define RPC_VERSION 3
/* drnicd's control socket when neither the caller nor $DRNIC_DAEMON names one. */
#define RPC_DEFAULT_SOCKET "/run/drnic/drnicd.sock"
/* Largest opaque argument (a verbs structure copied as bytes). */
#define RPC_BLOB_MAX 1024
/* Largest packet: a reply header and a control tool's text. */
#define RPC_PACKET_MAX (64 * 1024)

enum rpc_op {
	RPC_HELLO = 1,     /* arg[0] RPC_VERSION -> blob: EAL file prefix; arg[0] daemon pid */
	RPC_DEV_GET,       /* blob: device name, obj[1] the process's event queue for it
			    * (RPC_ASYNC_CREATE'd; its QPs' and CQs' by default, and
			    * the port's) -> obj[0] device */
	RPC_DEV_PUT,       /* obj[0] device */
	RPC_PD_ALLOC,      /* obj[0] device -> obj[0] PD */
	RPC_PD_FREE,       /* obj[0] PD */
	RPC_MEM_ALLOC,     /* arg[0] size, arg[1] align, arg[2] socket -> obj[0] buffer */
	RPC_MEM_FREE,      /* obj[0] buffer */
	RPC_MR_REG,        /* obj[0] PD, arg[0] addr, arg[1] length, arg[2] iova, arg[3] access,
			    * arg[4] 0 (a buffer from RPC_MEM_ALLOC) or RPC_MR_OWN -> obj[0] MR */
	RPC_MR_DEREG,      /* obj[0] MR */
	RPC_MR_REREG,      /* obj[0] MR, obj[1] PD (CHANGE_PD) or 0, arg[0] addr, arg[1] length,
			    * arg[2] access, arg[3] flags, arg[4] as RPC_MR_REG's */
	RPC_CQ_CREATE,     /* blob: struct drnic_cq_attr -> obj[0] CQ */
	RPC_CQ_DESTROY,    /* obj[0] CQ */
	RPC_CQ_RESIZE,     /* obj[0] CQ, arg[0] new depth */
	RPC_QP_CREATE,     /* obj[0] PD, blob: struct drnic_qp_init_attr -> obj[0] QP, blob: its attr back */
	RPC_QP_MODIFY,     /* obj[0] QP, arg[0] mask, blob: struct drnic_qp_attr */
	RPC_QP_DESTROY,    /* obj[0] QP -> arg[0] 1 when it lives on (an XRC target
			    * QP still opened) */
	RPC_DEV_LIST,      /* arg[0] index -> blob: that device's struct drnic_config;
			    * -ENOENT past the last */
	RPC_ASYNC_CREATE,  /* arg[0] size -> obj[0] async queue, and its eventfd */
	RPC_ASYNC_DESTROY, /* obj[0] async queue */
	RPC_ASYNC_SUBSCRIBE,   /* obj[0] device, obj[1] async queue */
	RPC_ASYNC_UNSUBSCRIBE, /* obj[0] device, obj[1] async queue */
	RPC_CHANNEL_CREATE,    /* -> obj[0] completion channel, and its eventfd */
	RPC_CHANNEL_DESTROY,   /* obj[0] completion channel */
	RPC_SRQ_CREATE,    /* obj[0] PD, blob: struct drnic_srq_init_attr -> obj[0] SRQ, blob back */
	RPC_SRQ_MODIFY,    /* obj[0] SRQ, arg[0] mask, blob: struct drnic_srq_attr */
	RPC_SRQ_DESTROY,   /* obj[0] SRQ */
	RPC_AH_CREATE,     /* obj[0] PD, blob: struct drnic_ah_attr -> obj[0] AH */
	RPC_AH_DESTROY,    /* obj[0] AH */
	RPC_MW_ALLOC,      /* obj[0] PD, arg[0] type -> obj[0] window */
	RPC_MW_DEALLOC,    /* obj[0] window */
	RPC_MCAST,         /* obj[0] QP, arg[0] 1 attach / 0 detach, blob: the GID */
	RPC_XRCD_OPEN,     /* obj[0] device, arg[0] the process's fd or -1, arg[1] oflags
			    * -> obj[0] XRC domain (one per file, whoever opens it) */
	RPC_XRCD_CLOSE,    /* obj[0] XRC domain -> arg[0] 1 when still opened */
	RPC_QP_OPEN,       /* obj[0] XRC domain, arg[0] QPN -> obj[0] the XRC target QP */
	/* The connection manager (drnic_ibcm.h), whose GSI agent on QP 1 the
	 * daemon runs for its devices: ids and event channels are the
	 * daemon's, named by address as the rest. */
	RPC_CM_CHANNEL_CREATE,  /* -> obj[0] event channel, and its eventfd */
	RPC_CM_CHANNEL_DESTROY, /* obj[0] event channel */
	RPC_CM_GET_EVENT,  /* obj[0] channel -> blob: struct drnic_ibcm_event, obj[1] its
			    * id, obj[2] its listen_id, arg[0] 1 when its private data is
			    * in its pdata (else arg[1] the private_data as given, a
			    * multicast join's context); -EAGAIN: none queued */
	RPC_CM_ID_CREATE,  /* obj[0] channel, arg[0] port space, arg[1] QP type -> obj[0] id */
	RPC_CM_ID_DESTROY, /* obj[0] id */
	RPC_CM_ID_QUERY,   /* obj[0] id -> blob: struct rpc_cm_id_info
			    * (rpc_cm.h) */
	RPC_CM_MIGRATE,    /* obj[0] id, obj[1] channel */
	RPC_CM_BIND,       /* obj[0] id, blob: the sockaddr */
	RPC_CM_RESOLVE_ADDR,   /* obj[0] id, arg[0] timeout, arg[1] 1 when a source is
				* given, blob: two struct sockaddr_storage (source, dest) */
	RPC_CM_RESOLVE_ROUTE,  /* obj[0] id, arg[0] timeout */
	RPC_CM_ATTACH_QP,  /* obj[0] id, obj[1] QP */
	RPC_CM_LISTEN,     /* obj[0] id, arg[0] backlog */
	RPC_CM_CONNECT,    /* obj[0] id, blob: struct rpc_cm_conn */
	RPC_CM_ACCEPT,     /* obj[0] id, blob: struct rpc_cm_conn */
	RPC_CM_REJECT,     /* obj[0] id, blob: the private data */
	RPC_CM_ESTABLISH,  /* obj[0] id */
	RPC_CM_DISCONNECT, /* obj[0] id */
	RPC_CM_INIT_QP_ATTR,   /* obj[0] id, blob: struct drnic_qp_attr (qp_state) -> blob
				* back, arg[0] the mask */
	RPC_CM_SET_OPTION, /* obj[0] id, arg[0] option, blob: its value */
	RPC_CM_MCAST,      /* obj[0] id, arg[0] 1 join / 0 leave, arg[1] the join's context,
			    * blob: the sockaddr */
	RPC_CM_STATS,      /* obj[0] device -> blob: struct drnic_ibcm_stats; -ENOENT: the
			    * daemon runs no CM on it */
	RPC_CTL_LIST,      /* -> text: devices, attached processes and their objects */
	RPC_CTL_STATS,     /* blob: device name or "" -> text: the device's counters */
	RPC_OP_MAX,
};

/* RPC_MR_REG's arg[4]: the range is the program's own memory (not DPDK's),
 * in shared mappings; the daemon maps it again through /proc/PID/map_files. */
#define RPC_MR_OWN 1

struct rpc_msg {
	uint32_t op;               /* enum rpc_op; the reply keeps it */
	int32_t rc;                /* reply: 0 or a negative errno */
	uint64_t obj[4];           /* objects, by their address (the same in both processes) */
	uint64_t arg[6];
	uint32_t blob_len;         /* bytes of blob in use */
	uint32_t text_len;         /* reply: bytes of text after this header */
	uint8_t blob[RPC_BLOB_MAX];
};

/* True once drnic_env_init() attached this process to a daemon. */
bool rpc_attached(void);

/*
 * Send @p m and replace it with the daemon's reply; one call at a time in
 * the process (a mutex). Returns the reply's rc, or a negative errno of the
 * channel: -ENOTCONN when not attached, -EPIPE when the daemon has gone
 * (then every later call fails the same way). A descriptor the reply
 * carries is closed.
 */
int rpc_call(struct rpc_msg *m);

/* rpc_call() of a request whose reply carries a descriptor (an eventfd the
 * daemon's engines write): *fd gets it on success, -1 otherwise. */
int rpc_call_fd(struct rpc_msg *m, int *fd);

/*
 * The daemon has gone (its end of the channel closed): from then on every
 * control call fails with -EPIPE. A watcher thread notices at once, even
 * when no call is made, and runs the hooks registered here (each library
 * above lib/env: wake its sleepers, raise DEVICE_FATAL), once, in order.
 */
bool rpc_daemon_gone(void);
void rpc_on_daemon_gone(void (*fn)(void));

/*
 * The two halves of every remote constructor and destructor (lib/cq,
 * lib/verbs), with the process's handle registry (lib/internal/handle.h;
 * @p kind is an enum handle_kind):
 *  - rpc_adopt(): register the object @p obj the daemon made as live here;
 *    when that fails, request @p undo of it and return NULL (rte_errno
 *    ENOMEM).
 *  - rpc_destroy(): take @p obj's handle (a second destroy reads nothing:
 *    -EINVAL), request @p op of it, give the handle back when the daemon
 *    refused, or when the reply's arg[0] is 1 (the process still holds the
 *    object: an XRC domain or target QP it opened twice). A daemon that
 *    has gone destroyed everything: 0.
 */
void *rpc_adopt(void *obj, int kind, enum rpc_op undo);
int rpc_destroy(void *obj, int kind, enum rpc_op op);

/* Set *fields of a request: op, the rest zero. */
static inline void
rpc_msg_init(struct rpc_msg *m, enum rpc_op op)
{
	*m = (struct rpc_msg){ .op = (uint32_t)op };
}

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_RPC_H */
