/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs: creation, the modify state machine (IB spec transitions with
 * their required and optional attributes), query, destroy, async events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "verbs_daemon.h"
#include "verbs_objects.h"
#include "verbs_remote.h"

static const char *const qp_state_names[] = {
	[DRNIC_QPS_RESET] = "RESET",
	[DRNIC_QPS_INIT] = "INIT",
	[DRNIC_QPS_RTR] = "RTR",
	[DRNIC_QPS_RTS] = "RTS",
	[DRNIC_QPS_SQD] = "SQD",
	[DRNIC_QPS_SQE] = "SQE",
	[DRNIC_QPS_ERR] = "ERR",
	[DRNIC_QPS_UNKNOWN] = "UNKNOWN",
};

const char *
verbs_qp_state_name(unsigned int state)
{
	return state < RTE_DIM(qp_state_names) ? qp_state_names[state] : "UNKNOWN";
}

const char *
drnic_qp_state_str(enum drnic_qp_state state)
{
	return verbs_qp_state_name((unsigned int)state);
}

/* One allowed transition of an RC QP: the attributes it needs and allows
 * (besides DRNIC_QP_STATE, which a change of state always needs). */
struct qp_transition {
	bool valid;
	int req;
	int opt;
};

#define QPS_N DRNIC_QPS_UNKNOWN

static const struct qp_transition qp_transitions[QPS_N][QPS_N] = {
	[DRNIC_QPS_RESET] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_INIT] = { true, DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
					   DRNIC_QP_ACCESS_FLAGS, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
	},
	[DRNIC_QPS_INIT] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_INIT] = { true, 0, DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
					      DRNIC_QP_ACCESS_FLAGS },
		[DRNIC_QPS_RTR] = { true, DRNIC_QP_AV | DRNIC_QP_PATH_MTU | DRNIC_QP_DEST_QPN |
					  DRNIC_QP_RQ_PSN | DRNIC_QP_MAX_DEST_RD_ATOMIC |
					  DRNIC_QP_MIN_RNR_TIMER,
				    DRNIC_QP_ALT_PATH | DRNIC_QP_ACCESS_FLAGS | DRNIC_QP_PKEY_INDEX },
	},
	[DRNIC_QPS_RTR] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_RTS] = { true, DRNIC_QP_SQ_PSN | DRNIC_QP_TIMEOUT | DRNIC_QP_RETRY_CNT |
					  DRNIC_QP_RNR_RETRY | DRNIC_QP_MAX_QP_RD_ATOMIC,
				    DRNIC_QP_CUR_STATE | DRNIC_QP_ALT_PATH | DRNIC_QP_ACCESS_FLAGS |
				    DRNIC_QP_MIN_RNR_TIMER | DRNIC_QP_PATH_MIG_STATE },
	},
	[DRNIC_QPS_RTS] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_RTS] = { true, 0, DRNIC_QP_CUR_STATE | DRNIC_QP_ACCESS_FLAGS |
					     DRNIC_QP_ALT_PATH | DRNIC_QP_PATH_MIG_STATE |
					     DRNIC_QP_MIN_RNR_TIMER },
		[DRNIC_QPS_SQD] = { true, 0, DRNIC_QP_EN_SQD_ASYNC_NOTIFY },
	},
	[DRNIC_QPS_SQD] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_RTS] = { true, 0, DRNIC_QP_CUR_STATE | DRNIC_QP_ALT_PATH |
					     DRNIC_QP_ACCESS_FLAGS | DRNIC_QP_MIN_RNR_TIMER |
					     DRNIC_QP_PATH_MIG_STATE },
		[DRNIC_QPS_SQD] = { true, 0, DRNIC_QP_AV | DRNIC_QP_ALT_PATH | DRNIC_QP_ACCESS_FLAGS |
					     DRNIC_QP_PKEY_INDEX | DRNIC_QP_MIN_RNR_TIMER |
					     DRNIC_QP_PATH_MIG_STATE | DRNIC_QP_TIMEOUT |
					     DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY |
					     DRNIC_QP_MAX_QP_RD_ATOMIC |
					     DRNIC_QP_MAX_DEST_RD_ATOMIC },
	},
	[DRNIC_QPS_SQE] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_RTS] = { true, 0, DRNIC_QP_CUR_STATE | DRNIC_QP_ACCESS_FLAGS },
	},
	[DRNIC_QPS_ERR] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
	},
};

/* The UD column of ibv_modify_qp(3): no address vector, MTU, PSN of the
 * receiver, access flags or timers; a Q_Key, given at INIT and changeable
 * afterwards. */
static const struct qp_transition qp_ud_transitions[QPS_N][QPS_N] = {
	[DRNIC_QPS_RESET] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_INIT] = { true, DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT | DRNIC_QP_QKEY, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
	},
	[DRNIC_QPS_INIT] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_INIT] = { true, 0, DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT | DRNIC_QP_QKEY },
		[DRNIC_QPS_RTR] = { true, 0, DRNIC_QP_PKEY_INDEX | DRNIC_QP_QKEY },
	},
	[DRNIC_QPS_RTR] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_RTS] = { true, DRNIC_QP_SQ_PSN, DRNIC_QP_CUR_STATE | DRNIC_QP_QKEY },
	},
	[DRNIC_QPS_RTS] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_RTS] = { true, 0, DRNIC_QP_CUR_STATE | DRNIC_QP_QKEY },
		[DRNIC_QPS_SQD] = { true, 0, DRNIC_QP_EN_SQD_ASYNC_NOTIFY },
	},
	[DRNIC_QPS_SQD] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_RTS] = { true, 0, DRNIC_QP_CUR_STATE | DRNIC_QP_QKEY },
		[DRNIC_QPS_SQD] = { true, 0, DRNIC_QP_PKEY_INDEX | DRNIC_QP_QKEY },
	},
	[DRNIC_QPS_SQE] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
		[DRNIC_QPS_RTS] = { true, 0, DRNIC_QP_CUR_STATE | DRNIC_QP_QKEY },
	},
	[DRNIC_QPS_ERR] = {
		[DRNIC_QPS_RESET] = { true, 0, 0 },
		[DRNIC_QPS_ERR] = { true, 0, 0 },
	},
};

/* Mask bits drnic knows (others are rejected). */
#define QP_MASK_KNOWN ((DRNIC_QP_DEST_QPN << 1) - 1)

/* Attributes of a reliable connection only: a UC QP neither requires nor
 * takes them (ibv_modify_qp(3)'s table for UC). */
#define QP_MASK_RC_ONLY (DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER | \
			 DRNIC_QP_TIMEOUT | DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | \
			 DRNIC_QP_MAX_QP_RD_ATOMIC)

/* The responder's and the requester's attributes of a reliable connection:
 * an XRC initiator (a requester only) and an XRC target (a responder only,
 * which still takes TIMEOUT and SQ_PSN on RTR->RTS, for the ACKs it sends)
 * neither require nor take the other side's (IBA's XRC QP attributes, as
 * the Linux kernel's modify table has them). */
#define QP_MASK_RESPONDER (DRNIC_QP_MAX_DEST_RD_ATOMIC | DRNIC_QP_MIN_RNR_TIMER)
#define QP_MASK_REQUESTER (DRNIC_QP_RETRY_CNT | DRNIC_QP_RNR_RETRY | DRNIC_QP_MAX_QP_RD_ATOMIC)

/* The attributes a QP of @p type neither requires nor takes. */
static int
qp_mask_not_taken(enum drnic_qp_type type)
{
	switch (type) {
	case DRNIC_QPT_UC:
		return QP_MASK_RC_ONLY;
	case DRNIC_QPT_XRC_SEND:
		return QP_MASK_RESPONDER;
	case DRNIC_QPT_XRC_RECV:
		return QP_MASK_REQUESTER;
	default:
		return 0;
	}
}

int
verbs_qp_check_modify(enum drnic_qp_type type, enum drnic_qp_state cur,
		      enum drnic_qp_state next, int mask)
{
	const struct qp_transition *t;
	int attrs, req, opt;

	if ((unsigned int)cur >= QPS_N || (unsigned int)next >= QPS_N)
		return -EINVAL;
	if ((mask & ~QP_MASK_KNOWN) != 0)
		return -EINVAL;
	t = type == DRNIC_QPT_UD ? &qp_ud_transitions[cur][next] : &qp_transitions[cur][next];
	if (!t->valid)
		return -EINVAL;
	req = t->req & ~qp_mask_not_taken(type);
	opt = t->opt & ~qp_mask_not_taken(type);
	attrs = mask & ~DRNIC_QP_STATE;
	if ((attrs & req) != req)
		return -EINVAL;
	if ((attrs & ~(req | opt | DRNIC_QP_CUR_STATE)) != 0)
		return -EINVAL;
	return 0;
}

/* Check attribute values named in @p mask. */
static int
qp_check_values(const struct drnic_qp *qp, const struct drnic_qp_attr *a, int mask)
{
	const struct drnic_device *dev = qp->dev;

	if ((mask & DRNIC_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & DRNIC_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL;
	if ((mask & DRNIC_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
				    DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC)) != 0)
		return -EINVAL;
	if (mask & DRNIC_QP_AV) {
		if (!a->ah_attr.is_global || a->ah_attr.grh.sgid_index >= dev->nb_gids ||
		    (a->ah_attr.port_num != 0 && a->ah_attr.port_num != 1))
			return -EINVAL;
	}
	if ((mask & DRNIC_QP_PATH_MTU) &&
	    (a->path_mtu < DRNIC_MTU_256 || a->path_mtu > (enum drnic_mtu)dev->active_mtu))
		return -EINVAL;
	if ((mask & DRNIC_QP_DEST_QPN) && a->dest_qp_num > 0xFFFFFF)
		return -EINVAL;
	if ((mask & DRNIC_QP_RQ_PSN) && a->rq_psn > 0xFFFFFF)
		return -EINVAL;
	if ((mask & DRNIC_QP_SQ_PSN) && a->sq_psn > 0xFFFFFF)
		return -EINVAL;
	if ((mask & DRNIC_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > dev->cfg.max_rd_atomic)
		return -EINVAL;
	if ((mask & DRNIC_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > dev->cfg.max_rd_atomic)
		return -EINVAL;
	if ((mask & DRNIC_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & DRNIC_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & DRNIC_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & DRNIC_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & DRNIC_QP_PATH_MIG_STATE) && a->path_mig_state > DRNIC_MIG_ARMED)
		return -EINVAL;
	/* QP 1 takes the GSI's Q_Key and no other (IBA 13.5.3.1); it is the
	 * agent's, so the rule below is not for it. */
	if ((mask & DRNIC_QP_QKEY) && qp->qp_num == VERBS_GSI_QPN)
		return a->qkey == VERBS_GSI_QKEY ? 0 : -EINVAL;
	/* A controlled Q_Key (high bit set) is the privileged consumer's
	 * (IBA 10.2.4, as Linux's CAP_NET_RAW rule). */
	if ((mask & DRNIC_QP_QKEY) && (a->qkey & VERBS_QKEY_CONTROLLED) && !verbs_privileged())
		return -EPERM;
	return 0;
}

static void
qp_apply(struct drnic_qp *qp, const struct drnic_qp_attr *a, int mask, const uint8_t dmac[6])
{
	struct drnic_qp_attr *q = &qp->attr;

	if (mask & DRNIC_QP_ACCESS_FLAGS)
		q->qp_access_flags = a->qp_access_flags;
	if (mask & DRNIC_QP_PKEY_INDEX)
		q->pkey_index = a->pkey_index;
	if (mask & DRNIC_QP_PORT)
		q->port_num = a->port_num;
	if (mask & DRNIC_QP_AV) {
		q->ah_attr = a->ah_attr;
		memcpy(qp->dmac, dmac, 6);
	}
	if (mask & DRNIC_QP_PATH_MTU) {
		q->path_mtu = a->path_mtu;
		qp->attr_mtu_bytes = 128u << a->path_mtu;
	}
	if (mask & DRNIC_QP_DEST_QPN) {
		q->dest_qp_num = a->dest_qp_num;
		qp->udp_sport = (uint16_t)(0xC000 | ((qp->qp_num ^ (a->dest_qp_num << 3) ^
						       (qp->qp_num >> 14)) & 0x3FFF));
	}
	if (mask & DRNIC_QP_RQ_PSN)
		q->rq_psn = a->rq_psn;
	if (mask & DRNIC_QP_SQ_PSN)
		q->sq_psn = a->sq_psn;
	if (mask & DRNIC_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & DRNIC_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & DRNIC_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & DRNIC_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & DRNIC_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (mask & DRNIC_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (mask & DRNIC_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	if (mask & DRNIC_QP_ALT_PATH) {
		q->alt_ah_attr = a->alt_ah_attr;
		q->alt_pkey_index = a->alt_pkey_index;
		q->alt_port_num = a->alt_port_num;
		q->alt_timeout = a->alt_timeout;
	}
	if (mask & DRNIC_QP_PATH_MIG_STATE)
		q->path_mig_state = a->path_mig_state;
	if (mask & DRNIC_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = a->en_sqd_async_notify;
}

/* The snapshot of @p qp's attributes its engine works from. */
static void
qp_path_of(const struct drnic_qp *qp, struct verbs_qp_path *p)
{
	const struct drnic_qp_attr *q = &qp->attr;

	memset(p, 0, sizeof(*p));
	p->ah = q->ah_attr;
	memcpy(p->dmac, qp->dmac, 6);
	p->udp_sport = qp->udp_sport;
	p->pkey_index = q->pkey_index;
	p->mtu = qp->attr_mtu_bytes;
	p->dest_qp_num = q->dest_qp_num;
	p->access_flags = q->qp_access_flags;
	p->sq_psn = q->sq_psn;
	p->rq_psn = q->rq_psn;
	p->qkey = q->qkey;
	p->timeout = q->timeout;
	p->retry_cnt = q->retry_cnt;
	p->rnr_retry = q->rnr_retry;
	p->min_rnr_timer = q->min_rnr_timer;
	p->max_rd_atomic = q->max_rd_atomic;
	p->max_dest_rd_atomic = q->max_dest_rd_atomic;
	p->en_sqd_async_notify = q->en_sqd_async_notify;
}

/* UD: the send WQEs dropped without completion (reset, destroy) give
 * their AHs back. The engine is detached: nothing else reads them. */
static void
qp_put_ahs(struct drnic_qp *qp)
{
	uint32_t i, prod = atomic_load(&qp->sq.prod);

	if (qp->type != DRNIC_QPT_UD)
		return;
	for (i = atomic_load(&qp->sq.cons); i != prod; i++)
		verbs_wqe_ah_put(verbs_wq_slot(&qp->sq, i));
}

static void
qp_reset_queues(struct drnic_qp *qp)
{
	qp_put_ahs(qp);
	atomic_store(&qp->sq.prod, 0);
	atomic_store(&qp->sq.cons, 0);
	atomic_store(&qp->rq.prod, 0);
	atomic_store(&qp->rq.cons, 0);
	qp->sq.cons_seen = 0;
	qp->rq.cons_seen = 0;
	atomic_store(&qp->sq.db, VERBS_DB_IDLE);
}

static void
qp_reset_attr(struct drnic_qp *qp)
{
	memset(&qp->attr, 0, sizeof(qp->attr));
	qp->attr.cap = qp->cap;
	qp->attr.port_num = 1;
	qp->attr.path_mtu = DRNIC_MTU_1024;
	qp->attr_mtu_bytes = 1024;
	if (qp->type == DRNIC_QPT_UD) {
		/* A datagram is one packet of up to the port's MTU. */
		qp->attr.path_mtu = (enum drnic_mtu)qp->dev->active_mtu;
		qp->attr_mtu_bytes = 128u << qp->dev->active_mtu;
	}
	memset(qp->dmac, 0, sizeof(qp->dmac));
}

int
drnic_modify_qp(struct drnic_qp *qp, struct drnic_qp_attr *attr, int mask)
{
	const struct verbs_engine_ops *eops = verbs_engine_ops();
	unsigned int cur;
	enum drnic_qp_state next;
	struct verbs_qp_path path;
	uint8_t dmac[6] = { 0 };
	bool resolved = false;
	int rc;

	if (verbs_remote())
		return remote_modify_qp(qp, attr, mask);
	if (qp == NULL || attr == NULL)
		return -EINVAL;
	for (;;) {
		cur = atomic_load_explicit(&qp->state, memory_order_acquire);
		next = (mask & DRNIC_QP_STATE) ? attr->qp_state : (enum drnic_qp_state)cur;
		if ((mask & DRNIC_QP_CUR_STATE) && attr->cur_qp_state != (enum drnic_qp_state)cur)
			return -EINVAL;
		rc = verbs_qp_check_modify((enum drnic_qp_type)qp->type,
					   (enum drnic_qp_state)cur, next, mask);
		if (rc < 0)
			return rc;
		rc = qp_check_values(qp, attr, mask);
		if (rc < 0)
			return rc;

		if (next == DRNIC_QPS_RESET) {
			/* The engine forgets the QP, the queues empty, no completions. */
			eops->qp_detach(qp);
			qp_reset_queues(qp);
			qp_reset_attr(qp);
			atomic_store_explicit(&qp->state, DRNIC_QPS_RESET, memory_order_release);
			rc = eops->qp_attach(qp);
			if (rc < 0)
				return rc;
			VERBS_QP_LOG(DEBUG, qp, "%s -> RESET", verbs_qp_state_name(cur));
			return 0;
		}
		/* The peer's MAC, once, before anything changes. */
		if ((mask & DRNIC_QP_AV) && !resolved) {
			rc = verbs_resolve_dmac(qp->dev, &attr->ah_attr, dmac);
			if (rc < 0)
				return rc;
			resolved = true;
			continue;  /* the state may have moved meanwhile */
		}
		/* The engine takes the new path before it sees the state
		 * that uses it. */
		qp_apply(qp, attr, mask, dmac);
		qp_path_of(qp, &path);
		eops->qp_modify(qp, &path);
		if (atomic_compare_exchange_strong_explicit(&qp->state, &cur, (unsigned int)next,
							    memory_order_acq_rel,
							    memory_order_acquire))
			break;
		/* The engine moved the QP (to ERR) meanwhile: check again. */
	}
	if (next == DRNIC_QPS_ERR || next == DRNIC_QPS_RTS || next == DRNIC_QPS_SQD)
		verbs_qp_doorbell_ctl(qp);  /* flush, resume after SQD, or drain */
	VERBS_QP_LOG(DEBUG, qp, "%s -> %s", verbs_qp_state_name(cur), verbs_qp_state_name(next));
	return 0;
}

bool
verbs_qp_set_error(struct drnic_qp *qp)
{
	unsigned int cur = atomic_load_explicit(&qp->state, memory_order_acquire);

	while (cur != DRNIC_QPS_ERR && cur != DRNIC_QPS_RESET) {
		if (atomic_compare_exchange_weak_explicit(&qp->state, &cur, DRNIC_QPS_ERR,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return true;
	}
	return false;
}

void
verbs_qp_event(struct drnic_qp *qp, enum drnic_event_type type)
{
	struct drnic_async_event ev = { .event_type = type, .qp_num = qp->qp_num };

	ev.element.qp = qp;
	(void)async_raise(qp->async, &ev);   /* counted if lost */
}

/* The held count of the object (QP or SRQ) an event is about, or NULL. */
static atomic_uint *
qp_event_holder(const struct drnic_async_event *ev)
{
	if (drnic_event_type_is_qp(ev->event_type))
		return &((struct drnic_qp *)ev->element.qp)->events_unacked;
	if (ev->event_type == DRNIC_EVENT_SRQ_LIMIT_REACHED || ev->event_type == DRNIC_EVENT_SRQ_ERR)
		return &((struct drnic_srq *)ev->element.srq)->events_unacked;
	return NULL;
}

/* Taken (under the queue's consumer lock): the object is held until the ack. */
static void
qp_event_delivered(const struct drnic_async_event *ev)
{
	atomic_uint *held = qp_event_holder(ev);

	if (held != NULL)
		atomic_fetch_add_explicit(held, 1, memory_order_relaxed);
}

static void
qp_event_acked(const struct drnic_async_event *ev)
{
	atomic_uint *held = qp_event_holder(ev);

	if (held != NULL)
		atomic_fetch_sub_explicit(held, 1, memory_order_release);
}

const struct async_hooks verbs_async_hooks = {
	.delivered = qp_event_delivered,
	.acked = qp_event_acked,
};

int
drnic_query_qp(struct drnic_qp *qp, struct drnic_qp_attr *attr, int attr_mask,
	       struct drnic_qp_init_attr *init)
{
	RTE_SET_USED(attr_mask);
	if (qp == NULL || attr == NULL || init == NULL)
		return -EINVAL;
	*attr = qp->attr;
	attr->qp_state = verbs_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->cap = qp->cap;
	attr->sq_draining = 0;
	memset(init, 0, sizeof(*init));
	init->qp_context = qp->qp_context;
	init->send_cq = qp->send_cq;
	init->recv_cq = qp->recv_cq;
	init->srq = qp->srq;
	init->cap = qp->cap;
	init->qp_type = (enum drnic_qp_type)qp->type;
	init->sq_sig_all = qp->sq_sig_all;
	return 0;
}

/* Allocate a free QPN served by engine @p engine (its link queue: links
 * steer frames by drnic_link_qpn_queue()). Under lock. */
static uint32_t
qp_alloc_qpn(struct drnic_device *dev, unsigned int engine)
{
	uint32_t i, qpn;

	for (i = 0; i < dev->qp_tab_size; i++) {
		qpn = (dev->qp_next + i) & dev->qp_mask;
		if (qpn < VERBS_FIRST_QPN ||
		    drnic_link_qpn_queue(qpn, (uint16_t)dev->nb_engines) != engine)
			continue;
		if (atomic_load_explicit(&dev->qp_tab[qpn], memory_order_relaxed) == NULL) {
			dev->qp_next = qpn + 1;
			return qpn;
		}
	}
	return 0;
}

static void
qp_cq_put(struct drnic_cq *cq)
{
	if (cq != NULL)
		cq_put(cq);
}

static struct drnic_qp *qp_create(struct drnic_device *dev, struct drnic_pd *pd,
				  struct drnic_qp_init_attr *ia, unsigned int engine, uint32_t qpn);
static struct drnic_qp *qp_create_xrc_recv(struct drnic_qp_init_attr *ia);

int
verbs_inline_progress(void *arg)
{
	RTE_SET_USED(arg);
	return verbs_engine_ops()->progress();
}

struct drnic_qp *
drnic_create_qp(struct drnic_pd *pd, struct drnic_qp_init_attr *ia)
{
	struct drnic_device *dev;

	if (ia == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (verbs_remote())
		return remote_create_qp(pd, ia);
	if (ia->qp_type == DRNIC_QPT_XRC_RECV)
		return qp_create_xrc_recv(ia);
	if (pd == NULL || ia->send_cq == NULL ||
	    (ia->recv_cq == NULL && ia->qp_type != DRNIC_QPT_XRC_SEND) ||
	    (ia->qp_type != DRNIC_QPT_RC && ia->qp_type != DRNIC_QPT_UC &&
	     ia->qp_type != DRNIC_QPT_UD && ia->qp_type != DRNIC_QPT_XRC_SEND) ||
	    (ia->srq != NULL && ia->qp_type != DRNIC_QPT_XRC_SEND &&
	     (!handle_live(ia->srq, HANDLE_SRQ) || ia->srq->dev != pd->dev ||
	      ia->srq->xrcd != NULL))) {
		rte_errno = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	return qp_create(dev, pd, ia, (unsigned int)cq_comp_vector(ia->send_cq) % dev->nb_engines,
			 0);
}

struct drnic_qp *
verbs_create_gsi_qp(struct drnic_pd *pd, struct drnic_qp_init_attr *ia)
{
	unsigned int engine;

	if (!handle_live(pd, HANDLE_PD) || ia == NULL || ia->qp_type != DRNIC_QPT_UD ||
	    ia->send_cq == NULL || ia->recv_cq == NULL || ia->srq != NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* Frames to QPN 1 reach the engine of its link queue: the QP and its
	 * CQs must be that engine's (qp_create() checks the receive CQ). */
	engine = drnic_link_qpn_queue(VERBS_GSI_QPN, (uint16_t)pd->dev->nb_engines);
	if ((unsigned int)cq_comp_vector(ia->send_cq) % pd->dev->nb_engines != engine) {
		rte_errno = EINVAL;
		return NULL;
	}
	return qp_create(pd->dev, pd, ia, engine, VERBS_GSI_QPN);
}

/* An XRC target QP: in its domain, on the XRC engine, no queue or CQ of
 * its own (a send queue of one WQE that nothing posts to, so the engine's
 * requester side finds it empty). */
static struct drnic_qp *
qp_create_xrc_recv(struct drnic_qp_init_attr *ia)
{
	struct drnic_qp_init_attr a;
	struct drnic_qp *qp;

	if (!handle_live(ia->xrcd, HANDLE_XRCD)) {
		rte_errno = EINVAL;
		return NULL;
	}
	a = *ia;
	a.send_cq = NULL;
	a.recv_cq = NULL;
	a.srq = NULL;
	memset(&a.cap, 0, sizeof(a.cap));
	a.cap.max_send_wr = 1;
	qp = qp_create(ia->xrcd->dev, NULL, &a, VERBS_XRC_ENGINE, 0);
	if (qp != NULL)
		memset(&ia->cap, 0, sizeof(ia->cap));
	return qp;
}

/* drnic_create_qp()'s work for every type, on engine @p engine, numbered
 * @p qpn (a special QP; 0: the next free number). */
static struct drnic_qp *
qp_create(struct drnic_device *dev, struct drnic_pd *pd, struct drnic_qp_init_attr *ia,
	  unsigned int engine, uint32_t qpn)
{
	const struct verbs_engine_ops *eops = verbs_engine_ops();
	bool xrc = ia->qp_type == DRNIC_QPT_XRC_SEND || ia->qp_type == DRNIC_QPT_XRC_RECV;
	struct drnic_qp *qp;
	struct drnic_qp_cap cap;
	int rc, socket;

	cap = ia->cap;
	if (ia->srq != NULL || xrc) {
		/* Receives come from an SRQ, or none (XRC): no receive queue
		 * of its own. */
		cap.max_recv_wr = 0;
		cap.max_recv_sge = 0;
	}
	if (cap.max_send_wr == 0 || cap.max_send_wr > dev->cfg.max_qp_wr ||
	    cap.max_send_sge > dev->cfg.max_sge || cap.max_inline_data > dev->cfg.max_inline_data ||
	    (ia->srq == NULL && !xrc &&
	     (cap.max_recv_wr == 0 || cap.max_recv_wr > dev->cfg.max_qp_wr ||
	      cap.max_recv_sge > dev->cfg.max_sge))) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (ia->recv_cq != NULL && !xrc &&
	    (unsigned int)cq_comp_vector(ia->recv_cq) % dev->nb_engines != engine) {
		rte_errno = EINVAL;
		return NULL;
	}
	cap.max_send_sge = RTE_MAX(cap.max_send_sge, 1u);
	if (ia->srq == NULL && !xrc)
		cap.max_recv_sge = RTE_MAX(cap.max_recv_sge, 1u);

	socket = dev->cfg.socket_id;
	qp = rte_zmalloc_socket("drnic_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE, socket);
	if (qp == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	qp->dev = dev;
	qp->pd = pd;
	qp->send_cq = ia->send_cq;
	qp->recv_cq = ia->qp_type == DRNIC_QPT_XRC_SEND ? NULL : ia->recv_cq;
	qp->qp_context = ia->qp_context;
	qp->srq = xrc ? NULL : ia->srq;
	qp->xrcd = ia->qp_type == DRNIC_QPT_XRC_RECV ? ia->xrcd : NULL;
	qp->type = (uint8_t)ia->qp_type;
	qp->async = ia->async_queue != NULL ? ia->async_queue : dev->async;
	qp->sq_sig_all = ia->sq_sig_all != 0;
	qp->engine = (uint16_t)engine;
	rc = verbs_wq_alloc(&qp->sq, cap.max_send_wr, sizeof(struct verbs_send_wqe),
			    cap.max_send_sge, cap.max_inline_data, socket);
	if (rc == 0 && qp->srq == NULL && !xrc)
		rc = verbs_wq_alloc(&qp->rq, cap.max_recv_wr, sizeof(struct verbs_recv_wqe),
				    cap.max_recv_sge, 0, socket);
	if (rc < 0)
		goto fail_mem;
	qp->rq.dev = dev;   /* its SGEs name this device's MRs */
	cap.max_send_wr = qp->sq.size;
	cap.max_recv_wr = qp->rq.size;
	qp->cap = cap;
	qp_reset_attr(qp);
	atomic_store(&qp->state, DRNIC_QPS_RESET);

	if (qp->send_cq != NULL && cq_get(qp->send_cq) < 0) {
		rc = -EINVAL;
		goto fail_mem;
	}
	if (qp->recv_cq != NULL && cq_get(qp->recv_cq) < 0) {
		qp_cq_put(qp->send_cq);
		rc = -EINVAL;
		goto fail_mem;
	}
	if (async_get(qp->async) < 0) {
		rc = -EINVAL;
		goto fail_cq;
	}

	pthread_mutex_lock(&dev->lock);
	/* Checked again under the lock: the domain may have been closed. */
	if (qp->xrcd != NULL && !handle_live(qp->xrcd, HANDLE_XRCD)) {
		pthread_mutex_unlock(&dev->lock);
		rc = -EINVAL;
		goto fail_async;
	}
	if (qpn != 0 && atomic_load_explicit(&dev->qp_tab[qpn], memory_order_relaxed) != NULL) {
		/* A special QP exists once per device. */
		pthread_mutex_unlock(&dev->lock);
		rc = -EBUSY;
		goto fail_async;
	}
	if (dev->nb_qp >= dev->cfg.max_qp ||
	    (qp->qp_num = qpn != 0 ? qpn : qp_alloc_qpn(dev, engine)) == 0) {
		pthread_mutex_unlock(&dev->lock);
		rc = -ENOMEM;
		goto fail_async;
	}
	rc = handle_add(qp, HANDLE_QP);
	if (rc < 0) {
		pthread_mutex_unlock(&dev->lock);
		goto fail_async;
	}
	rc = eops->qp_attach(qp);
	if (rc < 0) {
		handle_take(qp, HANDLE_QP);
		pthread_mutex_unlock(&dev->lock);
		goto fail_async;
	}
	atomic_store_explicit(&dev->qp_tab[qp->qp_num], qp, memory_order_release);
	dev->nb_qp++;
	if (qp->srq != NULL)
		atomic_fetch_add(&qp->srq->nb_qp, 1);
	if (pd != NULL)
		atomic_fetch_add(&pd->refs, 1);
	if (qp->xrcd != NULL)
		qp->xrcd->users++;
	pthread_mutex_unlock(&dev->lock);

	if (dev->cfg.progress == DRNIC_PROGRESS_INLINE) {
		if (qp->send_cq != NULL)
			cq_set_progress(qp->send_cq, verbs_inline_progress, NULL);
		if (qp->recv_cq != NULL)
			cq_set_progress(qp->recv_cq, verbs_inline_progress, NULL);
	}
	ia->cap = cap;
	VERBS_QP_LOG(DEBUG, qp, "created on engine %u (sq %u, rq %u)", engine, qp->sq.size,
		     qp->rq.size);
	return qp;

fail_async:
	async_put(qp->async);
fail_cq:
	qp_cq_put(qp->recv_cq);
	qp_cq_put(qp->send_cq);
fail_mem:
	rte_free(qp->sq.buf);
	rte_free(qp->rq.buf);
	rte_free(qp);
	rte_errno = -rc;
	return NULL;
}

int
drnic_destroy_qp(struct drnic_qp *qp)
{
	struct drnic_device *dev;

	if (verbs_remote())
		return remote_destroy_qp(qp);
	/* Not live (NULL, destroyed already): nothing behind it is read. */
	if (handle_take(qp, HANDLE_QP) < 0)
		return -EINVAL;
	dev = qp->dev;
	if (qp->xrcd != NULL) {
		/* An XRC target QP opened again (drnic_open_qp()): one
		 * reference less; the last one destroys it. */
		pthread_mutex_lock(&dev->lock);
		if (qp->opens > 0) {
			qp->opens--;
			pthread_mutex_unlock(&dev->lock);
			(void)handle_add(qp, HANDLE_QP);  /* cannot fail: its slot is free */
			return 0;
		}
		pthread_mutex_unlock(&dev->lock);
	}
	/* Still attached to a multicast group: as libibverbs, -EBUSY. */
	if (atomic_load_explicit(&qp->events_unacked, memory_order_acquire) != 0 ||
	    qp->nb_mcast != 0) {
		(void)handle_add(qp, HANDLE_QP);  /* cannot fail: its slot is free */
		return -EBUSY;
	}
	pthread_mutex_lock(&dev->lock);
	/* Invisible to the receive path first, then off the engine. */
	atomic_store_explicit(&dev->qp_tab[qp->qp_num], NULL, memory_order_release);
	verbs_engine_ops()->qp_detach(qp);
	qp_put_ahs(qp);
	verbs_mw_qp_destroyed(qp);
	dev->nb_qp--;
	if (qp->pd != NULL)
		atomic_fetch_sub(&qp->pd->refs, 1);
	if (qp->srq != NULL)
		atomic_fetch_sub(&qp->srq->nb_qp, 1);
	if (qp->xrcd != NULL)
		qp->xrcd->users--;
	pthread_mutex_unlock(&dev->lock);
	/* The engine is fenced: events about the QP nobody took yet go. */
	(void)async_purge(qp->async, qp);
	qp_cq_put(qp->send_cq);
	qp_cq_put(qp->recv_cq);
	async_put(qp->async);
	VERBS_QP_LOG(DEBUG, qp, "destroyed");
	rte_free(qp->sq.buf);
	rte_free(qp->rq.buf);
	rte_free(qp);
	return 0;
}

uint32_t
drnic_qp_num(const struct drnic_qp *qp)
{
	return qp != NULL ? qp->qp_num : 0;
}

enum drnic_qp_state
drnic_qp_state(const struct drnic_qp *qp)
{
	return qp != NULL ? verbs_qp_state(qp) : DRNIC_QPS_UNKNOWN;
}

void *
drnic_qp_context(const struct drnic_qp *qp)
{
	return qp != NULL ? qp->qp_context : NULL;
}

/* ---- drnicd: an attached process's own doorbell rings ------------------ */

struct rte_ring *
verbs_db_ring_new(struct drnic_device *dev, unsigned int idx, uint64_t tag)
{
	static atomic_uint seq;
	const struct verbs_engine_ops *eops = verbs_engine_ops();
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;
	int rc;

	if (dev == NULL || idx >= dev->nb_engines || eops == NULL || eops->db_ring == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* Room for every QP the device may have: never full. */
	snprintf(name, sizeof(name), "drnic_pdb%" PRIx64 "_%u", tag, atomic_fetch_add(&seq, 1));
	r = rte_ring_create(name, rte_align32pow2(dev->cfg.max_qp + 1), dev->cfg.socket_id,
			    RING_F_SC_DEQ);
	if (r == NULL)
		return NULL;
	rc = eops->db_ring(dev, idx, r, true);
	if (rc < 0) {
		rte_ring_free(r);
		rte_errno = -rc;
		return NULL;
	}
	return r;
}

void
verbs_db_ring_free(struct drnic_device *dev, unsigned int idx, struct rte_ring *r)
{
	if (dev == NULL || r == NULL)
		return;
	(void)verbs_engine_ops()->db_ring(dev, idx, r, false);
	rte_ring_free(r);
}

void
verbs_qp_set_db_ring(struct drnic_qp *qp, struct rte_ring *r)
{
	qp->db_ring = r;
}
