/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_RDMACM_PRIV_H
#define DRNIC_RDMACM_PRIV_H

/*
 * drnic's drop-in librdmacm.so.1: private declarations.
 *
 * Translation only: every rdma_* call becomes drnic_ibcm_* calls (the
 * connection manager, lib/ibcm) and ibv_* calls (the QP moves librdmacm
 * makes itself), both through the drop-in libibverbs.so.1, which holds the
 * process's one copy of drnic. Structure layouts are those of the system's
 * <rdma/rdma_cma.h>, against which this library is compiled.
 *
 * Error convention: the verbs one, as librdmacm's pages say: -1 (or NULL)
 * with errno.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "drnic_ibcm.h"
#include "ibv_export.h"

/* Exported with visibility default through the version script only. */
#define RCM_EXPORT __attribute__((visibility("default")))

/* A drnic negative errno -> -1 with errno. */
static inline int
rcm_err(int neg)
{
	errno = -neg;
	return -1;
}

/* A positive errno -> -1 with errno. */
static inline int
rcm_seterr(int e)
{
	errno = e;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Devices (rdmacm_dev.c)                                                   */
/* ------------------------------------------------------------------------ */

/*
 * One per drnic device, opened once for the process on first use (as
 * librdmacm opens every device): ids bound to the device get its context.
 */
struct rcm_device {
	struct ibv_context *ctx;
	struct drnic_device *dev;
	struct ibv_pd *pd;                /* default PD, made on first need */
	struct ibv_xrcd *xrcd;            /* XRC domain of XRC ids, likewise */
	int max_qp_rd_atom;               /* responder resources */
	int max_qp_init_rd_atom;          /* initiator depth */
};

/* Open every device and the CM on each (once). @return 0 or -1/errno. */
int rcm_init(void);
/* The device of a drnic device, NULL if not ours. */
struct rcm_device *rcm_device_of(const struct drnic_device *dev);
/* The device of a context, NULL if not ours. */
struct rcm_device *rcm_device_of_ctx(const struct ibv_context *ctx);
/* The context's default PD (rdma_create_qp without one). */
struct ibv_pd *rcm_default_pd(struct ibv_context *ctx);
bool rcm_debug(void);   /* DRNIC_IBV_DEBUG set: debug lines on stderr */
/* The context's XRC domain (XRC_RECV QPs and XRC SRQs without one). */
struct ibv_xrcd *rcm_default_xrcd(struct ibv_context *ctx);

/* ------------------------------------------------------------------------ */
/* Channels and ids (rdmacm_id.c)                                           */
/* ------------------------------------------------------------------------ */

struct rcm_channel {
	struct rdma_event_channel ch;     /* must be first */
	struct drnic_ibcm_channel *dch;
};

static inline struct rcm_channel *
rcm_channel_of(struct rdma_event_channel *ch)
{
	return (struct rcm_channel *)(void *)ch;
}

/* A multicast group joined on an id (its join context for the events). */
struct rcm_mcast {
	struct rcm_mcast *next;
	struct sockaddr_storage addr;
	union ibv_gid mgid;
	uint16_t mlid;
	bool attached;                    /* the id's QP is attached to it */
	void *context;
};

struct rcm_id {
	struct rdma_cm_id id;             /* must be first */
	struct drnic_ibcm_id *did;
	struct rcm_id *next;              /* the live ids (rcm_lock) */
	struct ibv_sa_path_rec path;      /* id.route.path_rec when resolved */
	/* Synchronous (rdma_create_id without a channel): the id's own channel,
	 * each call waits for its event and leaves it in id.event. */
	bool sync;
	/* Events handed out and not yet acked (rcm_lock, rcm_cond). */
	unsigned int events_out;
	/* A CONNECT_REQUEST's: what the peer offered (accept's defaults). */
	uint8_t req_initiator_depth;
	uint8_t req_responder_resources;
	/* rdma_create_ep on the passive side: the QP each request gets. */
	bool has_qp_attr;
	struct ibv_qp_init_attr qp_attr;
	/* CQs and channels rdma_create_qp made (freed with the QP). */
	bool own_cqs;
	struct ibv_srq *own_srq;          /* rdma_create_srq's */
	struct ibv_cq *own_srq_cq;
	struct rcm_mcast *mcasts;
};

static inline struct rcm_id *
rcm_id_of(struct rdma_cm_id *id)
{
	return (struct rcm_id *)(void *)id;
}

/* rdma_create_id with a QP type of its own (rdma_create_ep's). */
int rcm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		  enum rdma_port_space ps, enum ibv_qp_type qpt);
/* A synchronous id: wait for its event, keep it in id.event; -1 with errno
 * from the event's status. Other ids: 0. */
int rcm_complete(struct rcm_id *w);
/* Ack the event a synchronous call left on the id (id.event). */
void rcm_sync_ack(struct rcm_id *w);
/* Copy the drnic id's addresses, device and route into the rdma_cm_id. */
void rcm_id_refresh(struct rcm_id *w);

/* ------------------------------------------------------------------------ */
/* Multicast (rdmacm_mcast.c)                                               */
/* ------------------------------------------------------------------------ */

/* A MULTICAST_JOIN / _ERROR event of @p w: the join's context as the
 * event's private data (as librdmacm), the id's QP attached to the group. */
void rcm_event_mcast(struct rcm_id *w, struct rdma_cm_event *ev);
/* The id's groups forgotten (rdma_destroy_id). */
void rcm_mcast_free(struct rcm_id *w);

/* ------------------------------------------------------------------------ */
/* QPs (rdmacm_qp.c)                                                        */
/* ------------------------------------------------------------------------ */

/* Move the id's QP to @p state with the CM's attributes; resources:
 * responder resources (RTR) / initiator depth (RTS) to use instead of the
 * CM's, or 0xFF to keep them. @return 0 or -1/errno. */
int rcm_qp_move(struct rcm_id *w, enum ibv_qp_state state, uint8_t resources);
/* Move the id's QP (if any) to ERROR. */
void rcm_qp_error(struct rcm_id *w);
/* Bring a UD id's QP to RTS (librdmacm does it at creation). */
int rcm_qp_ud_ready(struct rcm_id *w);

#endif /* DRNIC_RDMACM_PRIV_H */
