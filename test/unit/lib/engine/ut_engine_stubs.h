/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef UT_ENGINE_STUBS_H
#define UT_ENGINE_STUBS_H

/*
 * A QP and its engine, without an engine thread, a link or a mempool: frames
 * "sent" are captured as packet descriptors (with their gathered payload),
 * completions are captured, the clock is fake, key checks answer what the
 * test says. Shared by the requester, responder and completer tests.
 */
#include <stdlib.h>
#include <string.h>

#ifndef VERBS_MR_KEY_LIVE_STUB
#error "define VERBS_MR_KEY_LIVE_STUB before including the engine source under test"
#endif
#include "lib/engine/engine_priv.h"

int engine_logtype;

#define UT_MAX_TX 64
#define UT_MAX_WC 64

struct ut_tx {
	struct drnic_wire_pkt pkt;
	uint32_t len;
	uint8_t data[4096];
};

static struct ut_tx ut_tx[UT_MAX_TX];
static unsigned int ut_ntx;
static int ut_tx_fail;               /* engine_qp_tx fails while set */
static struct drnic_wc ut_wc[UT_MAX_WC];
static bool ut_wc_sol[UT_MAX_WC];
static __rte_unused struct drnic_cq *ut_wc_cq[UT_MAX_WC];   /* the CQ each went to */
static unsigned int ut_nwc;
static uint64_t ut_now;
static int ut_key_rc;                /* what verbs_mr_check answers */
static const struct drnic_pd *ut_key_pd;  /* the PD it was last asked about */
static __rte_unused uint32_t ut_key_access;  /* the access verbs_mr_check was last asked for */
static int ut_activated, ut_errors, ut_events;
static __rte_unused enum drnic_event_type ut_last_event;

int
engine_qp_tx(struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	struct ut_tx *t;
	uint32_t i;

	RTE_SET_USED(eq);
	if (ut_tx_fail || ut_ntx == UT_MAX_TX)
		return -ENOMEM;
	t = &ut_tx[ut_ntx++];
	t->pkt = *pkt;
	t->len = 0;
	for (i = 0; i < pkt->sg_cnt; i++) {
		memcpy(t->data + t->len, pkt->sg[i].addr, pkt->sg[i].len);
		t->len += pkt->sg[i].len;
	}
	t->pkt.sg = NULL;
	return 0;
}

/* UD: a datagram's template is the QP's, with the AH's destination IP. */
void
engine_ah_template(const struct engine_qp *eq, const struct drnic_ah *ah, struct drnic_wire_pkt *p)
{
	*p = eq->tmpl;
	memcpy(p->ip.dst, &ah->attr.grh.dgid.raw[12], 4);
	memcpy(p->eth.dst, ah->attr.dmac, 6);
	p->udp.sport = ah->udp_sport;
}

#ifdef UT_ENGINE_CQE_STUBS
/* What the completer and the responder call back into the engine: CQEs are
 * kept in ut_wc[], activations and QP errors counted. */
int
engine_push_cqe(struct engine_qp *eq, struct drnic_cq *cq, const struct drnic_wc *wc,
		bool solicited)
{
	RTE_SET_USED(eq);
	if (ut_nwc < UT_MAX_WC) {
		ut_wc_sol[ut_nwc] = solicited;
		ut_wc_cq[ut_nwc] = cq;
		ut_wc[ut_nwc++] = *wc;
	}
	return 0;
}

void
engine_qp_activate(struct engine_qp *eq)
{
	RTE_SET_USED(eq);
	ut_activated++;
}
#endif

#ifdef UT_ENGINE_QP_ERROR_STUB
void
engine_qp_error(struct engine_qp *eq)
{
	ut_errors++;
	atomic_store(&eq->qp->state, DRNIC_QPS_ERR);
}
#endif

uint64_t
engine_now_ns(struct engine *eng)
{
	RTE_SET_USED(eng);
	return ut_now;
}

int
verbs_mr_check(struct drnic_device *dev, const struct drnic_pd *pd, uint32_t key, uint64_t addr,
	       uint64_t len, uint32_t access, uint8_t **va_out)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(key);
	RTE_SET_USED(len);
	ut_key_pd = pd;
	ut_key_access = access;
	*va_out = (uint8_t *)(uintptr_t)addr;
	return ut_key_rc;
}

/* What an MR with an iova of its own adds to the peer's address (0: none). */
static __rte_unused uintptr_t ut_iova_delta;

int
verbs_mr_check_remote(struct drnic_device *dev, const struct drnic_pd *pd, uint32_t key,
		      uint64_t iova, uint64_t len, uint32_t access, uint8_t **va_out)
{
	int rc = verbs_mr_check(dev, pd, key, iova, len, access, va_out);

	if (rc == 0)
		*va_out += ut_iova_delta;
	return rc;
}

int
verbs_rkey_check(const struct drnic_qp *qp, const struct drnic_pd *pd, uint32_t key,
		 uint64_t addr, uint64_t len, uint32_t access, uint8_t **va_out)
{
	RTE_SET_USED(qp);
	return verbs_mr_check_remote(NULL, pd, key, addr, len, access, va_out);
}

static int ut_mw_rc;                 /* what verbs_mw_bind/_invalidate answer */
static unsigned int ut_mw_binds, ut_mw_invs;
static uint32_t ut_mw_inv_rkey;
static bool ut_mw_inv_remote;

int
verbs_mw_bind(const struct drnic_qp *qp, const struct verbs_send_wqe *w)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(w);
	ut_mw_binds++;
	return ut_mw_rc;
}

int
verbs_mw_invalidate(const struct drnic_qp *qp, uint32_t rkey, bool remote)
{
	RTE_SET_USED(qp);
	ut_mw_invs++;
	ut_mw_inv_rkey = rkey;
	ut_mw_inv_remote = remote;
	return ut_mw_rc;
}

static uint32_t ut_dead_key;         /* verbs_mr_key_live() says no for it (0: none) */

bool
verbs_mr_key_live(const struct drnic_device *dev, uint32_t key)
{
	RTE_SET_USED(dev);
	return ut_dead_key == 0 || key != ut_dead_key;
}

const char *
drnic_wc_status_str(enum drnic_wc_status status)
{
	RTE_SET_USED(status);
	return "status";
}

#ifndef UT_REAL_RESP_SETUP  /* the responder test runs the real one */
void
resp_setup(struct engine_qp *eq, uint32_t epsn)
{
	eq->resp.epsn = epsn;
}
#endif

/* The tested QP. */
static struct drnic_device ut_dev;
static struct drnic_qp ut_qp;
static struct engine ut_eng;
static struct engine_qp ut_eq;
static union {
	struct verbs_recv_wqe w;
	uint8_t room[sizeof(struct verbs_recv_wqe) + VERBS_MAX_SGE * sizeof(struct drnic_sge)];
} ut_srq_wqe;
static struct resp_rd ut_rd[32];   /* device max_rd_atomic 16: 2 x 16 */
static struct resp_tx ut_rtx[128];

static void
ut_wq_init(struct verbs_wq *wq, uint32_t size, uint32_t hdr, uint32_t sge)
{
	free(wq->buf);
	memset(wq, 0, sizeof(*wq));
	wq->size = size;
	wq->mask = size - 1;
	wq->max_sge = sge;
	wq->max_inline = 256;
	wq->stride = RTE_ALIGN_CEIL(hdr + RTE_MAX(sge * 16, 256u), 64);
	wq->buf = calloc(size, wq->stride);
}

/* A fresh QP in RTS, path MTU 1024, next PSN @p psn. */
static struct engine_qp *
ut_qp_reset(uint32_t psn)
{
	struct engine_qp *eq = &ut_eq;

	snprintf(ut_dev.cfg.name, sizeof(ut_dev.cfg.name), "ut");
	memset(&ut_qp.attr, 0, sizeof(ut_qp.attr));
	ut_qp.dev = &ut_dev;
	ut_qp.qp_num = 17;
	ut_qp.attr.dest_qp_num = 33;
	ut_qp.attr.max_rd_atomic = 4;
	ut_qp.attr.max_dest_rd_atomic = 4;
	ut_qp.attr.timeout = 10;
	ut_qp.attr.retry_cnt = 2;
	ut_qp.attr.rnr_retry = 1;
	ut_qp.attr.min_rnr_timer = 3;
	ut_qp.attr.qp_access_flags = DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
				     DRNIC_ACCESS_REMOTE_ATOMIC;
	ut_qp.sq_sig_all = 0;
	ut_qp.srq = NULL;
	ut_qp.type = DRNIC_QPT_RC;
	ut_qp.send_cq = (struct drnic_cq *)&ut_wc;
	ut_qp.recv_cq = (struct drnic_cq *)&ut_wc_sol;
	atomic_store(&ut_qp.state, DRNIC_QPS_RTS);
	ut_wq_init(&ut_qp.sq, 16, sizeof(struct verbs_send_wqe), 4);
	ut_wq_init(&ut_qp.rq, 16, sizeof(struct verbs_recv_wqe), 4);
	memset(&ut_eng, 0, sizeof(ut_eng));
	TAILQ_INIT(&ut_eng.port[0].active);
	TAILQ_INIT(&ut_eng.all);
	memset(eq, 0, sizeof(*eq));
	memset(ut_rd, 0, sizeof(ut_rd));
	eq->resp.rd = ut_rd;
	eq->resp.rd_mask = RTE_DIM(ut_rd) - 1;
	memset(ut_rtx, 0, sizeof(ut_rtx));
	eq->resp.rtx = ut_rtx;
	eq->resp.rtx_mask = RTE_DIM(ut_rtx) - 1;
	eq->resp.srq_wqe = &ut_srq_wqe.w;   /* used when a test puts the QP on an SRQ */
	engine_qp_bind(eq, &ut_qp);
	eq->eng = &ut_eng;
	eq->port = &ut_eng.port[0];     /* empty: room for a whole staging */
	/* The path modify_qp would have sent the engine. */
	eq->path.dest_qp_num = ut_qp.attr.dest_qp_num;
	eq->path.mtu = 1024;
	eq->path.access_flags = ut_qp.attr.qp_access_flags;
	eq->path.max_rd_atomic = ut_qp.attr.max_rd_atomic;
	eq->path.max_dest_rd_atomic = ut_qp.attr.max_dest_rd_atomic;
	eq->path.timeout = ut_qp.attr.timeout;
	eq->path.retry_cnt = ut_qp.attr.retry_cnt;
	eq->path.rnr_retry = ut_qp.attr.rnr_retry;
	eq->path.min_rnr_timer = ut_qp.attr.min_rnr_timer;
	eq->req.npsn = psn;
	eq->req.psn_hi = psn;
	eq->req_init = true;
	eq->resp_init = true;
	eq->rec.retry_left = 2;
	eq->rec.rnr_retry_left = 1;
	eq->rec.cwnd = ENGINE_MAX_INFLIGHT_PSN;
	eq->rec.ssthresh = ENGINE_MAX_INFLIGHT_PSN;
	drnic_wire_pkt_init(&eq->tmpl);
	eq->tmpl.bth.dqpn = 33;
	ut_qp.eng_priv = eq;
	resp_setup(eq, psn);
	ut_ntx = 0;
	ut_nwc = 0;
	ut_tx_fail = 0;
	ut_key_rc = 0;
	ut_iova_delta = 0;
	ut_dead_key = 0;
	ut_mw_rc = 0;
	ut_mw_binds = ut_mw_invs = 0;
	ut_mw_inv_rkey = 0;
	ut_mw_inv_remote = false;
	ut_activated = ut_errors = ut_events = 0;
	return eq;
}

/* Post a send WQE straight into the ring (as post_send would). */
static __rte_unused struct verbs_send_wqe *
ut_post_send(uint64_t wr_id, enum drnic_wr_opcode op, const struct drnic_sge *sge, int n,
	     uint32_t flags)
{
	uint32_t prod = atomic_load(&ut_qp.sq.prod);
	struct verbs_send_wqe *w = verbs_wq_slot(&ut_qp.sq, prod);
	int i;

	memset(w, 0, ut_qp.sq.stride);
	w->rd_next = VERBS_WQE_NO_PSN;   /* as post_send leaves it */
	w->wr_id = wr_id;
	w->opcode = (uint8_t)op;
	w->send_flags = flags;
	w->num_sge = (uint16_t)n;
	for (i = 0; i < n; i++) {
		w->sge[i] = sge[i];
		w->length += sge[i].length;
	}
	atomic_store(&ut_qp.sq.prod, prod + 1);
	return w;
}

static __rte_unused struct verbs_recv_wqe *
ut_post_recv(uint64_t wr_id, const struct drnic_sge *sge, int n)
{
	uint32_t prod = atomic_load(&ut_qp.rq.prod);
	struct verbs_recv_wqe *w = verbs_wq_slot(&ut_qp.rq, prod);
	int i;

	memset(w, 0, ut_qp.rq.stride);
	w->wr_id = wr_id;
	w->num_sge = (uint32_t)n;
	for (i = 0; i < n; i++) {
		w->sge[i] = sge[i];
		w->length += sge[i].length;
	}
	atomic_store(&ut_qp.rq.prod, prod + 1);
	return w;
}

#endif
