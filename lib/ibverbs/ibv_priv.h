/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_IBV_PRIV_H
#define DRNIC_IBV_PRIV_H

/*
 * drnic's drop-in libibverbs.so.1: private declarations.
 *
 * Every verbs object the application sees is the first member of a wrapper
 * that points at the drnic object behind it. Layouts are those of the
 * system's <infiniband/verbs.h>, against which this library is compiled.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>

#include "drnic_verbs.h"
#include "handle.h"

/* Exported with visibility default through the version script only. */
#define DIBV_EXPORT __attribute__((visibility("default")))

/* Error reporting: verbs returns positive errnos (and sets errno). */
#define DIBV_ERR(e) (errno = (e), (e))

/*
 * Every object the application gets is registered (lib/handle) until it is
 * destroyed; a destroy takes it out before it reads it, so a second destroy
 * is EINVAL and touches no freed memory. A destroy that then fails puts the
 * handle back with dibv_handle_undo(), which returns the failure.
 */
static inline int
dibv_handle_undo(void *obj, enum handle_kind kind, int rc)
{
	(void)handle_add(obj, kind);    /* cannot fail: its slot is free */
	return rc;
}

/* Device-wide settings that are not drnic_config keys ([ibverbs] section;
 * the progress helper's progress_* are drnic_config's: cfg.progress_opts). */
struct dibv_settings {
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	bool port_always_active;   /* report ACTIVE while the link is down */
	/* Destination of AVs without a GRH (is_global 0, e.g. ibv_rc_pingpong
	 * without -g): RoCE needs one, so the configured peer's IPv4 is used. */
	bool has_peer;
	struct in_addr peer;
};

struct dibv_device {
	struct ibv_device ibdev;          /* must be first */
	struct drnic_config cfg;
	struct dibv_settings set;
	uint64_t guid_be;                 /* node GUID, network order */
	pthread_mutex_t lock;
	struct drnic_device *dev;         /* open while refs > 0 */
	unsigned int refs;
	atomic_size_t dm_used;            /* device memory handed out */
	bool cm_open;                     /* drnic_ibcm_add_device() done */
};

struct dibv_context {
	struct verbs_context vctx;        /* ends with struct ibv_context */
	struct dibv_device *d;
	/* This context's async events: its CQs' and QPs', and the device's
	 * (subscribed); not another context's. */
	struct drnic_async_queue *async;
};

struct dibv_td;

struct dibv_pd {
	struct ibv_pd pd;
	struct drnic_pd *dpd;             /* a parent domain: its PD's */
	/* A parent domain (ibv_alloc_parent_domain): the PD it extends, its
	 * thread domain (or NULL) and what its init attributes gave. */
	struct dibv_pd *parent_of;
	struct dibv_td *td;
	void *pd_context;
	/* A PD: the parent domains over it (it cannot go before them). */
	atomic_uint parents;
};

/* A thread domain (ibv_alloc_td). */
struct dibv_td {
	struct ibv_td td;
	atomic_uint parents;              /* parent domains using it */
};

struct dibv_dm;

struct dibv_mr {
	struct ibv_mr mr;
	struct drnic_mr *dmr;
	struct dibv_dm *dm;               /* ibv_reg_dm_mr: the DM it holds */
};

struct dibv_mw {
	struct ibv_mw mw;
	struct drnic_mw *dmw;
};

/* Device memory (ibv_alloc_dm): hugepage memory drnic's engines reach. */
struct dibv_dm {
	struct ibv_dm dm;
	uint8_t *buf;
	size_t length;
	atomic_uint mrs;                  /* MRs registered on it */
};

/* Most device memory one device hands out (ibv_query_device_ex's
 * max_dm_size): hugepage memory, which EAL shares with the rings. */
#define DIBV_MAX_DM_SIZE (16u << 20)

struct dibv_comp_channel {
	struct ibv_comp_channel ch;
	struct drnic_comp_channel *dch;
};

struct dibv_cq {
	struct ibv_cq_ex cqx;             /* ibv_cq is its prefix (ibv_cq_ex_to_cq) */
	struct drnic_cq *dcq;
	struct dibv_cq *next;             /* registry (async CQ_ERR lookup) */
	/* ibv_cq_ex polling state */
	struct drnic_wc cur;
	struct drnic_wc buf[16];
	int buf_n, buf_i;
	/* IBV_WC_EX_WITH_COMPLETION_TIMESTAMP(_WALLCLOCK): the CQ stamps its
	 * CQEs (DRNIC_CQ_TIMESTAMP); each one's time, and CLOCK_REALTIME minus
	 * the device clock when the batch was polled. */
	bool stamp;
	uint64_t ts[16];
	uint64_t cur_ts;
	int64_t wall_off;
};

/* A work request being built with ibv_wr_* (ibv_qp_ex path). */
struct dibv_wr {
	struct drnic_send_wr wr;
	struct drnic_sge *sge;            /* the QP's max_send_sge entries */
	uint8_t *inl;                     /* inline data copy (max_inline bytes) */
	uint64_t atomic_wr;               /* ibv_wr_atomic_write()'s 8 bytes */
};

struct dibv_qp {
	struct ibv_qp_ex qpx;             /* ibv_qp is its prefix */
	struct drnic_qp *dqp;
	struct dibv_cq *send_cq, *recv_cq;
	uint32_t max_send_sge;
	uint32_t max_inline;
	/* ibv_wr_* batch */
	struct dibv_wr *batch;
	uint32_t batch_cap, batch_n;
	int batch_err;
};

struct dibv_srq {
	struct ibv_srq srq;
	struct drnic_srq *dsrq;
};

struct dibv_ah {
	struct ibv_ah ah;
	struct drnic_ah *dah;
};

static inline struct dibv_ah *
dibv_ah_of(struct ibv_ah *ah)
{
	return (struct dibv_ah *)(void *)ah;
}

/* An ibv_open_xrcd(): each open its own handle, all of one file's on the
 * same drnic domain (drnic_open_xrcd() counts them). */
struct dibv_xrcd {
	struct ibv_xrcd xrcd;
	struct drnic_xrcd *dx;
};

static inline struct dibv_context *
dibv_ctx(struct ibv_context *c)
{
	return (struct dibv_context *)(void *)((uint8_t *)c -
					       offsetof(struct verbs_context, context));
}

static inline struct dibv_cq *
dibv_cq_of(struct ibv_cq *cq)
{
	return (struct dibv_cq *)(void *)cq;
}

static inline struct dibv_qp *
dibv_qp_of(struct ibv_qp *qp)
{
	return (struct dibv_qp *)(void *)qp;
}

static inline struct dibv_srq *
dibv_srq_of(struct ibv_srq *srq)
{
	return (struct dibv_srq *)(void *)srq;
}

/* ibv_verbs.c: address vectors both ways, and the configured peer for one
 * without a GRH (dibv_settings.peer) */
void dibv_ah_to_drnic(const struct ibv_ah_attr *s, struct drnic_ah_attr *d);
void dibv_ah_from_drnic(const struct drnic_ah_attr *s, struct ibv_ah_attr *d);
void dibv_fix_av(struct ibv_context *context, struct drnic_ah_attr *ah);
static inline struct dibv_xrcd *
dibv_xrcd_of(struct ibv_xrcd *xrcd)
{
	return (struct dibv_xrcd *)(void *)xrcd;
}

/* ibv_device.c */
int dibv_errno(int neg);                   /* -E -> E, sets errno */
/* DRNIC_IBV_TRACE (debug) */
extern bool dibv_trace_on;
/* DRNIC_IBV_DEBUG is set (and not "0"): counters and helper figures on stderr. */
bool dibv_debug(void);
uint64_t dibv_trace_now(void);
void dibv_trace_rxtx(uint64_t *rx, uint64_t *tx);
void dibv_trace(uint32_t type, uint64_t t0, int n, uint64_t rx0, uint64_t tx0);

/* ibv_domain.c: thread and parent domains, ODP advice, device memory, the
 * device clock; installs those ops. */
void dibv_domain_ops_init(struct dibv_context *c);
/* Is @p pd a parent domain of context @p ctx? */
bool dibv_is_parent_domain(const struct ibv_pd *pd, const struct ibv_context *ctx);
/* ibv_dealloc_pd() of a parent domain (taken out of the registry). */
void dibv_parent_free(struct dibv_pd *p);
/* ibv_dereg_mr() of an MR on device memory: the DM may go once its MRs have. */
void dibv_dm_mr_gone(struct dibv_dm *dm);
/* The ODP capabilities drnic has (ibv_query_device_ex's odp_caps). */
void dibv_odp_caps(struct ibv_odp_caps *caps, uint32_t *xrc_odp_caps);

/* ibv_verbs.c */
struct dibv_cq *dibv_cq_lookup(const struct drnic_cq *dcq);
/* installs the context ops */
void dibv_context_ops_init(struct dibv_context *c);
/* An SRQ of @p a's type (attributes in and out through @p attr). */
struct ibv_srq *dibv_srq_new(struct ibv_pd *pd, struct drnic_srq_init_attr *a,
			     struct ibv_srq_attr *attr, void *srq_context);

/* ibv_export.c: take the device out of the connection manager (d->lock
 * held, before the device closes). */
void dibv_cm_close(struct dibv_device *d);

/* ibv_xrc.c: XRC domains, ibv_create_srq_ex, ibv_get_srq_num */
void dibv_xrc_ops_init(struct dibv_context *c);

#endif
