/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef IBCM_RDMA_H
#define IBCM_RDMA_H

/*
 * The RDMA CM layer's private objects, shared by ibcm_rdma.c (devices,
 * agent threads, channels, ids, connections) and ibcm_addr.c (addresses,
 * port spaces, address and route resolution).
 *
 * Locking: one mutex, ibcm.lock, guards every device's protocol instance
 * and GSI sends, the device list, the port spaces and the state of every
 * id. Ids cross devices (a wildcard listener listens on all of them, a
 * port is taken in a port space, not on a device), so one lock orders
 * them all without a lock hierarchy; it is held only for bounded work
 * (the protocol, one engine step of the GSI agent), never while waiting.
 * A channel's queue has its own mutex, taken inside ibcm.lock (never the
 * other way round), so that drnic_ibcm_get_event() does not wait for the
 * protocol.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <rte_log.h>

#include "drnic_ibcm.h"
#include "ibcm_gsi.h"
#include "ibcm_proto.h"

extern int ibcm_rdma_logtype;
#define IBCM_LOG(level, fmt, ...)                                               \
	rte_log(RTE_LOG_##level, ibcm_rdma_logtype, "ibcm: " fmt "\n", ##__VA_ARGS__)
#define IBCM_ID_LOG(level, id, fmt, ...)                                        \
	rte_log(RTE_LOG_##level, ibcm_rdma_logtype, "ibcm id %p: " fmt "\n",   \
		(const void *)(id), ##__VA_ARGS__)

/* Packet life time of a RoCE path (Linux's rdma_cm uses 18 for RoCE):
 * the local ACK timeout of a REQ is one more. */
#define IBCM_ROCE_PACKET_LIFE 18
#define IBCM_ROCE_HOP_LIMIT   64
#define IBCM_MAX_MCAST        8    /* groups one UD id joins at once */
#define IBCM_PORT_EPHEMERAL_LO 32768
#define IBCM_PORT_EPHEMERAL_HI 60999

/* States of an id, as rdma_cm's (enum rdma_cm_state). */
enum ibcm_id_state {
	IBCM_ID_IDLE = 0,
	IBCM_ID_ADDR_QUERY,
	IBCM_ID_ADDR_RESOLVED,
	IBCM_ID_ROUTE_QUERY,
	IBCM_ID_ROUTE_RESOLVED,
	IBCM_ID_CONNECT,        /* active: REQ / SIDR_REQ out; passive: request delivered */
	IBCM_ID_CONNECT_RESPONSE, /* active without a QP: REP delivered, RTU not sent */
	IBCM_ID_ACCEPT,         /* passive: REP out, waiting for the RTU */
	IBCM_ID_ESTABLISHED,
	IBCM_ID_DISCONNECT,     /* disconnected (sent or received), time-wait may run */
	IBCM_ID_ADDR_BOUND,
	IBCM_ID_LISTEN,
	IBCM_ID_DEVICE_REMOVAL,
	IBCM_ID_ERROR,          /* rejected, unreachable: only destroy is useful */
	IBCM_ID_STATE_COUNT,
};

const char *ibcm_id_state_str(enum ibcm_id_state s);

/* One device added to the CM. */
struct ibcm_dev {
	TAILQ_ENTRY(ibcm_dev) next;
	struct drnic_device *dev;
	struct ibcm_proto *proto;
	struct ibcm_gsi *gsi;
	pthread_t thread;
	bool thread_started;
	int epfd, timerfd, wakefd;
	bool stop;                      /* under ibcm.lock */
	bool inline_mode;               /* the agent runs the engine itself */
	uint64_t timer_armed;           /* the timerfd's deadline (agent thread) */
	uint8_t mac[6];
	enum drnic_mtu active_mtu;
	unsigned int nb_gids;
	union drnic_gid gid[DRNIC_GID_TABLE_LEN];
	uint8_t cm_timeout;             /* CM response timeout we advertise */
	int max_rd_atom;                /* device's max_qp_rd_atom */
	uint64_t ca_guid;               /* node GUID: REQ / REP local_ca_guid */
};

/* A queued event; ev.param's private_data is fixed up when copied out. */
struct ibcm_qev {
	TAILQ_ENTRY(ibcm_qev) next;
	struct drnic_ibcm_event ev;
	bool pdata_inline;              /* private_data points into ev.pdata */
};
TAILQ_HEAD(ibcm_qev_list, ibcm_qev);

struct drnic_ibcm_channel {
	TAILQ_ENTRY(drnic_ibcm_channel) next;
	pthread_mutex_t lock;           /* the queue and the eventfd count */
	struct ibcm_qev_list queue;
	int efd;                        /* EFD_SEMAPHORE: one count per queued event */
	unsigned int nb_ids;            /* under ibcm.lock */
	uint64_t remote;                /* attached: the daemon's channel (ibcm_remote.c) */
	/* Threads inside drnic_ibcm_get_event() on it, and whether it was
	 * destroyed meanwhile (under ibcm.lock): it then stays, its waiters
	 * blocked (ibcm_ch_wait_dead()), and the last one out frees it. */
	unsigned int waiters;
	bool dead;
	/* Attached: a destroy's request is with the daemon (under
	 * ibcm.lock). New calls are refused; a waiter whose request failed
	 * meanwhile waits as for no event, and is dead only if the daemon
	 * confirms (it may refuse: the channel then lives on). */
	bool dying;
	/* Destroyed and kept in ibcm.grave (under ibcm.lock): ibcm_ch_bury(). */
	bool buried;
	TAILQ_ENTRY(drnic_ibcm_channel) grave_next;
	void (*release)(void *);        /* drnic_ibcm_channel_on_release() */
	void *release_arg;
};

struct ibcm_mcast {
	union drnic_gid gid;
	struct sockaddr_storage addr;
	void *context;
	bool used;
};

struct drnic_ibcm_id {
	TAILQ_ENTRY(drnic_ibcm_id) next;
	struct drnic_ibcm_channel *ch;
	void *context;
	enum drnic_ibcm_ps ps;
	enum drnic_qp_type qp_type;
	enum ibcm_id_state state;
	struct ibcm_dev *dev;           /* NULL: not bound to a device */
	struct sockaddr_storage src;    /* port set once bound */
	struct sockaddr_storage dst;
	bool bound;                     /* holds src's port in its port space */
	bool reuseaddr, afonly;
	bool tos_set, ack_timeout_set;
	uint8_t tos, ack_timeout;
	struct drnic_ibcm_route route;
	uint64_t addr_deadline;         /* ADDR_QUERY: give up then (ns) */
	struct drnic_qp *qp;            /* attached QP (not owned) */
	struct ibcm_conn *conn;
	/* Connection parameters, for the QP's attributes. */
	uint32_t remote_qpn, rq_psn, sq_psn, remote_qkey;
	uint8_t resp_res, init_depth;   /* our max_dest_rd_atomic / max_rd_atomic */
	uint8_t retry_cnt, rnr_retry, local_ack_timeout;
	uint32_t flow_label;            /* of the path (the REQ's) */
	bool have_remote;               /* remote_qpn and the peer's PSN known */
	bool active;
	bool disc_reported;             /* DISCONNECTED delivered once */
	/* Listener: requests delivered and not accepted or rejected yet. */
	int backlog, pending;
	struct drnic_ibcm_id *listener; /* a request not answered yet: its listener */
	struct ibcm_mcast mcast[IBCM_MAX_MCAST];
	uint64_t remote;                /* attached: the daemon's id (ibcm_remote.c) */
};

/* The CM's global state (ibcm_rdma.c). */
struct ibcm_global {
	pthread_mutex_t lock;
	TAILQ_HEAD(, ibcm_dev) devs;
	TAILQ_HEAD(, drnic_ibcm_id) ids;
	TAILQ_HEAD(, drnic_ibcm_channel) chans;   /* attached: the stand-ins */
	TAILQ_HEAD(, drnic_ibcm_channel) grave;   /* ibcm_ch_bury() */
	unsigned int nb_buried;
};
extern struct ibcm_global ibcm;

/* CLOCK_MONOTONIC in nanoseconds: the protocol's clock. */
uint64_t ibcm_now(void);
/* get_event's wait: ibcm_deadline() of its timeout (0: none), then, per
 * empty try, ibcm_wait_efd(): -EAGAIN once the timeout is spent (at once
 * for 0), else 0 after a poll of the channel's eventfd until it is due. */
uint64_t ibcm_deadline(int timeout_ms);
int ibcm_wait_efd(int efd, int timeout_ms, uint64_t deadline);

/*
 * A waiter in drnic_ibcm_get_event() on @p ch: ibcm_ch_enter() before its
 * first look, ibcm_ch_leave() when it returns (true: @p ch was destroyed
 * meanwhile and this was its last waiter: the caller buries it). A call
 * that comes after the destroy finds it buried, and waits as one that was
 * inside (ibcm_ch_late()).
 * ibcm_ch_wait_dead(): what a waiter on a channel destroyed under it does,
 * as a reader blocked on a kernel rdma_cm channel whose fd another thread
 * closed: it stays blocked; only a daemon that has gone ends it (-EIO).
 */
static inline void
ibcm_ch_enter(struct drnic_ibcm_channel *ch)
{
	pthread_mutex_lock(&ibcm.lock);
	ch->waiters++;
	pthread_mutex_unlock(&ibcm.lock);
}

static inline bool
ibcm_ch_leave(struct drnic_ibcm_channel *ch)
{
	bool last;

	pthread_mutex_lock(&ibcm.lock);
	last = --ch->waiters == 0 && ch->dead && !ch->buried;
	pthread_mutex_unlock(&ibcm.lock);
	return last;
}

bool ibcm_ch_dead(struct drnic_ibcm_channel *ch);
int ibcm_ch_wait_dead(struct drnic_ibcm_channel *ch);
/* A get_event on @p ch, destroyed, where no event comes: -EAGAIN once
 * @p timeout_ms is waited out (at once for 0; @p deadline its
 * ibcm_deadline()), or for -1 it waits for good (ibcm_ch_wait_dead()). */
int ibcm_ch_late(struct drnic_ibcm_channel *ch, int timeout_ms, uint64_t deadline);

/*
 * @p ch, destroyed and with no waiter, is kept rather than freed: its
 * memory and its eventfd stay, dead, in ibcm.grave, and the oldest channel
 * there without a waiter goes once more than DRNIC_IBCM_CHANNELS_KEPT are
 * kept (in ibcm.chans too when attached, which it leaves then). An event
 * thread that calls get_event on a channel its main thread has just
 * destroyed (rping's, never joined) thus waits on a dead channel instead
 * of reading freed memory (the kernel's librdmacm would read a closed fd
 * and fail EBADF); and drnic_ibcm_channel_on_release() lets a wrapper
 * (the drop-in librdmacm's channel) live exactly as long. A second bury
 * of @p ch does nothing.
 */
void ibcm_ch_bury(struct drnic_ibcm_channel *ch);

/* Queue an event for @p id on its channel (under ibcm.lock). @p pdata of
 * @p len bytes is copied into the event. */
void ibcm_id_event(struct drnic_ibcm_id *id, enum drnic_ibcm_event_type type, int status,
		   const void *pdata, size_t len);
/* Queue @p ev (its event, status and params set) for @p id, with @p len
 * bytes of private data (under ibcm.lock). */
void ibcm_id_event_full(struct drnic_ibcm_id *id, struct drnic_ibcm_event *ev,
			const void *pdata, size_t len);
/* Queue @p ev for @p id as it is (private_data not into ev->pdata). */
void ibcm_queue_raw(struct drnic_ibcm_id *id, struct drnic_ibcm_event *ev);
/* A new id on @p ch (under ibcm.lock); NULL: no memory. */
struct drnic_ibcm_id *ibcm_id_alloc(struct drnic_ibcm_channel *ch, void *context,
				    enum drnic_ibcm_ps ps, enum drnic_qp_type qp_type);
/* drnic_ibcm_destroy_id()'s core, under ibcm.lock. */
void ibcm_id_destroy_locked(struct drnic_ibcm_id *id);
/* Wake @p d's agent thread (timers or pending work changed). */
void ibcm_dev_kick(struct ibcm_dev *d);

/* ---- ibcm_remote.c: a process attached to drnicd ---------------------
 * Each public call goes to the daemon while rpc_attached(); the ids and
 * channels here are stand-ins (their context, port space, QP type, and
 * the daemon's object in 'remote'). Same returns as the public calls. */
struct rpc_cm_id_info;
int ibcm_r_add_device(struct drnic_device *dev);
int ibcm_r_stats(struct drnic_device *dev, struct drnic_ibcm_stats *st);
struct drnic_ibcm_channel *ibcm_r_create_channel(void);
int ibcm_r_destroy_channel(struct drnic_ibcm_channel *ch);
int ibcm_r_get_event(struct drnic_ibcm_channel *ch, struct drnic_ibcm_event *ev, int timeout_ms);
struct drnic_ibcm_id *ibcm_r_create_id(struct drnic_ibcm_channel *ch, void *context,
				       enum drnic_ibcm_ps ps, enum drnic_qp_type qp_type);
int ibcm_r_destroy_id(struct drnic_ibcm_id *id);
int ibcm_r_query(const struct drnic_ibcm_id *id, struct rpc_cm_id_info *info);
int ibcm_r_migrate_id(struct drnic_ibcm_id *id, struct drnic_ibcm_channel *ch);
int ibcm_r_bind_addr(struct drnic_ibcm_id *id, const struct sockaddr *addr);
int ibcm_r_resolve_addr(struct drnic_ibcm_id *id, const struct sockaddr *src,
			const struct sockaddr *dst, int timeout_ms);
/* @p op: RPC_CM_CONNECT or RPC_CM_ACCEPT (an enum rpc_op). */
int ibcm_r_conn(int op, struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param);
int ibcm_r_reject(struct drnic_ibcm_id *id, const void *pdata, uint8_t len);
/* A request of @p id alone (RPC_CM_RESOLVE_ROUTE, _LISTEN, _ESTABLISH,
 * _DISCONNECT) with @p arg0. */
int ibcm_r_simple(int op, struct drnic_ibcm_id *id, uint64_t arg0);
int ibcm_r_attach_qp(struct drnic_ibcm_id *id, struct drnic_qp *qp);
int ibcm_r_init_qp_attr(struct drnic_ibcm_id *id, struct drnic_qp_attr *attr, int *mask);
int ibcm_r_set_option(struct drnic_ibcm_id *id, enum drnic_ibcm_option opt, const void *val,
		      size_t len);
int ibcm_r_mcast(struct drnic_ibcm_id *id, const struct sockaddr *addr, bool join,
		 void *context);

/* ---- ibcm_conn.c ---------------------------------------------------- */

/* The protocol's event op (under ibcm.lock; ctx is the ibcm_dev). */
void ibcm_conn_event(void *ctx, const struct ibcm_event *ev);
/* Listen on @p d for the listening @p id (its service ID), once per device
 * and service ID. */
int ibcm_listen_register(struct ibcm_dev *d, struct drnic_ibcm_id *id);
/* @p id stops listening (its service ID is released where no other
 * listener needs it). */
void ibcm_listen_stop(struct drnic_ibcm_id *id);

/* ---- ibcm_addr.c ---------------------------------------------------- */

/* The 16-byte GID of a sockaddr (IPv4 mapped); false: not AF_INET(6). */
bool ibcm_sa_gid(const struct sockaddr *sa, union drnic_gid *gid);
/* A sockaddr of family @p family for GID @p gid and port @p port. */
void ibcm_sa_from_gid(struct sockaddr_storage *ss, int family, const union drnic_gid *gid,
		      uint16_t port);
uint16_t ibcm_sa_port(const struct sockaddr *sa);
void ibcm_sa_set_port(struct sockaddr_storage *ss, uint16_t port);
bool ibcm_sa_is_any(const struct sockaddr *sa);
socklen_t ibcm_sa_len(const struct sockaddr *sa);
/* The device that owns @p gid, and the index of that GID; NULL: none. */
struct ibcm_dev *ibcm_dev_by_gid(const union drnic_gid *gid, int *index);
/* Index of @p gid in @p d's table, or -1. */
int ibcm_dev_gid_index(const struct ibcm_dev *d, const union drnic_gid *gid);
/* Release @p id's port (under ibcm.lock). */
void ibcm_port_release(struct drnic_ibcm_id *id);
/* Whether the listening @p id takes a request for @p dst on @p d. */
bool ibcm_listen_matches(const struct drnic_ibcm_id *id, const struct ibcm_dev *d,
			 const union drnic_gid *dst);
/* Agent thread, under ibcm.lock: poll the ids of @p d waiting for a MAC.
 * @return true while some still wait. */
bool ibcm_addr_poll(struct ibcm_dev *d, uint64_t now);
/* Bind @p id to @p addr, under ibcm.lock (drnic_ibcm_bind_addr's core). */
int ibcm_bind_locked(struct drnic_ibcm_id *id, const struct sockaddr *addr);

#endif /* IBCM_RDMA_H */
