/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic's libibverbs.so.1: PDs, MRs, completion channels, CQs (classic and
 * extended), QPs (classic and ibv_qp_ex / ibv_wr_*), the data path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_errno.h>

#include "drnic_engine.h"
#include "drnic_progress.h"
#include "ibv_export.h"
#include "ibv_priv.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* ------------------------------------------------------------------------ */
/* Protection domains                                                       */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct dibv_pd *p;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p->dpd = drnic_alloc_pd(dibv_ctx(context)->d->dev);
	if (p->dpd == NULL) {
		errno = rte_errno ? rte_errno : ENOMEM;
		free(p);
		return NULL;
	}
	p->pd.context = context;
	if (handle_add(p, HANDLE_IBV_PD) < 0) {
		drnic_dealloc_pd(p->dpd);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return &p->pd;
}

DIBV_EXPORT int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct dibv_pd *p = (struct dibv_pd *)(void *)pd;
	int rc;

	if (handle_take(p, HANDLE_IBV_PD) < 0)
		return DIBV_ERR(EINVAL);
	if (p->parent_of != NULL) {
		dibv_parent_free(p);
		return 0;
	}
	if (atomic_load(&p->parents) != 0)   /* parent domains over it */
		return dibv_handle_undo(p, HANDLE_IBV_PD, DIBV_ERR(EBUSY));
	rc = drnic_dealloc_pd(p->dpd);
	if (rc < 0)
		return dibv_handle_undo(p, HANDLE_IBV_PD, dibv_errno(rc));
	free(p);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Memory regions                                                           */
/* ------------------------------------------------------------------------ */

#define DIBV_ACCESS_DRNIC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			   IBV_ACCESS_MW_BIND | IBV_ACCESS_ON_DEMAND)

static struct ibv_mr *
dibv_reg(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	struct dibv_pd *p = (struct dibv_pd *)(void *)pd;
	struct dibv_mr *m;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/* Optional bits (RELAXED_ORDERING, ...) may be ignored by definition. */
	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	if ((access & ~(unsigned int)DIBV_ACCESS_DRNIC) != 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	m->dmr = drnic_reg_mr_iova(p->dpd, addr, length, iova, access);
	if (m->dmr == NULL) {
		errno = rte_errno ? rte_errno : EINVAL;
		free(m);
		return NULL;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.lkey = drnic_mr_lkey(m->dmr);
	m->mr.rkey = drnic_mr_rkey(m->dmr);
	m->mr.handle = m->mr.lkey;
	if (handle_add(m, HANDLE_IBV_MR) < 0) {
		drnic_dereg_mr(m->dmr);
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return &m->mr;
}

DIBV_EXPORT struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return dibv_reg(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

DIBV_EXPORT struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return dibv_reg(pd, addr, length, iova, (unsigned int)access);
}

DIBV_EXPORT struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	return dibv_reg(pd, addr, length, iova, access);
}

/*
 * drnic_rereg_mr() changes nothing when it fails, so every failure is
 * IBV_REREG_MR_ERR_INPUT ("old MR is valid"), with errno saying why. The
 * MR gets new keys (ibv_rereg_mr(3) allows it), which mr->lkey and
 * mr->rkey show.
 */
DIBV_EXPORT int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
	     int access)
{
	struct dibv_mr *m = (struct dibv_mr *)(void *)mr;
	struct drnic_pd *dpd = NULL;
	unsigned int acc = (unsigned int)access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	int rc;

	if (!handle_live(m, HANDLE_IBV_MR) || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) != 0 ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0)) ||
	    (!(flags & IBV_REREG_MR_CHANGE_ACCESS) && access != 0) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && !handle_live(pd, HANDLE_IBV_PD))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if ((flags & IBV_REREG_MR_CHANGE_ACCESS) && (acc & ~(unsigned int)DIBV_ACCESS_DRNIC) != 0) {
		errno = EOPNOTSUPP;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		dpd = ((struct dibv_pd *)(void *)pd)->dpd;
	rc = drnic_rereg_mr(m->dmr, (unsigned int)flags, dpd, addr, length, acc);
	if (rc < 0) {
		errno = -rc;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		m->mr.pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		m->mr.addr = addr;
		m->mr.length = length;
	}
	m->mr.lkey = drnic_mr_lkey(m->dmr);
	m->mr.rkey = drnic_mr_rkey(m->dmr);
	return 0;
}

DIBV_EXPORT int
ibv_dereg_mr(struct ibv_mr *mr)
{
	struct dibv_mr *m = (struct dibv_mr *)(void *)mr;
	int rc;

	if (handle_take(m, HANDLE_IBV_MR) < 0)
		return DIBV_ERR(EINVAL);
	rc = drnic_dereg_mr(m->dmr);
	if (rc < 0)
		return dibv_handle_undo(m, HANDLE_IBV_MR, dibv_errno(rc));
	if (m->dm != NULL)
		dibv_dm_mr_gone(m->dm);
	free(m);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Memory windows (context ops: libibverbs' ibv_alloc_mw(), ibv_bind_mw()   */
/* and ibv_dealloc_mw() are inline functions that call them)                */
/* ------------------------------------------------------------------------ */

/*
 * A bind's window and MR as drnic's: a pointer that is not a live object of
 * this library gives NULL (drnic_post_send() refuses a window that is not
 * live; an MR that is not binds nothing: MW_BIND_ERR).
 */
static void
dibv_bind_convert(struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *bi,
		  struct drnic_send_wr *d)
{
	struct dibv_mw *m = (struct dibv_mw *)(void *)mw;
	struct dibv_mr *r = (struct dibv_mr *)(void *)bi->mr;

	d->bind_mw.mw = handle_live(m, HANDLE_IBV_MW) ? m->dmw : NULL;
	d->bind_mw.rkey = rkey;
	d->bind_mw.bind_info.mr = handle_live(r, HANDLE_IBV_MR) ? r->dmr : NULL;
	d->bind_mw.bind_info.addr = bi->addr;
	d->bind_mw.bind_info.length = bi->length;
	d->bind_mw.bind_info.mw_access_flags = bi->mw_access_flags;
}

static struct ibv_mw *
dibv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct dibv_pd *p = (struct dibv_pd *)(void *)pd;
	struct dibv_mw *m;

	if (!handle_live(p, HANDLE_IBV_PD)) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* enum ibv_mw_type is enum drnic_mw_type. */
	m->dmw = drnic_alloc_mw(p->dpd, (enum drnic_mw_type)type);
	if (m->dmw == NULL) {
		errno = rte_errno ? rte_errno : EINVAL;
		free(m);
		return NULL;
	}
	m->mw.context = pd->context;
	m->mw.pd = pd;
	m->mw.rkey = drnic_mw_rkey(m->dmw);
	m->mw.handle = m->mw.rkey;
	m->mw.type = type;
	if (handle_add(m, HANDLE_IBV_MW) < 0) {
		drnic_dealloc_mw(m->dmw);
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return &m->mw;
}

static int
dibv_dealloc_mw(struct ibv_mw *mw)
{
	struct dibv_mw *m = (struct dibv_mw *)(void *)mw;
	int rc;

	if (handle_take(m, HANDLE_IBV_MW) < 0)
		return DIBV_ERR(EINVAL);
	rc = drnic_dealloc_mw(m->dmw);
	if (rc < 0)
		return dibv_handle_undo(m, HANDLE_IBV_MW, dibv_errno(rc));
	free(m);
	return 0;
}

/* A type 1 bind; as mlx5's, the window's rkey changes as it is posted. */
static int
dibv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mb)
{
	struct dibv_mw *m = (struct dibv_mw *)(void *)mw;
	struct drnic_send_wr d;
	struct drnic_mw_bind b;
	int rc;

	if (qp == NULL || mb == NULL || !handle_live(m, HANDLE_IBV_MW))
		return DIBV_ERR(EINVAL);
	memset(&d, 0, sizeof(d));
	dibv_bind_convert(mw, 0, &mb->bind_info, &d);
	b.wr_id = mb->wr_id;
	b.send_flags = mb->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED);
	b.bind_info = d.bind_mw.bind_info;
	drnic_progress_app_enter();
	rc = drnic_bind_mw(dibv_qp_of(qp)->dqp, m->dmw, &b);
	drnic_progress_posted();
	drnic_progress_app_leave();
	if (rc < 0)
		return dibv_errno(rc);
	mw->rkey = drnic_mw_rkey(m->dmw);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Completion channels                                                      */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct dibv_comp_channel *c;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->dch = drnic_create_comp_channel();
	if (c->dch == NULL) {
		errno = rte_errno ? rte_errno : ENOMEM;
		free(c);
		return NULL;
	}
	c->ch.context = context;
	/* The application's fd is an epoll instance watching drnic's (always
	 * non-blocking) eventfd: readable exactly when it is, and with file
	 * flags of its own, so that an application that makes it non-blocking
	 * (UCX) gets EAGAIN from ibv_get_cq_event() and one that does not
	 * sleeps there, as with libibverbs' own channel fd. */
	c->ch.fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->ch.fd >= 0) {
		struct epoll_event ev = { .events = EPOLLIN };

		if (epoll_ctl(c->ch.fd, EPOLL_CTL_ADD, drnic_comp_channel_fd(c->dch), &ev) != 0) {
			close(c->ch.fd);
			c->ch.fd = -1;
		}
	}
	if (c->ch.fd < 0 || handle_add(c, HANDLE_IBV_COMP_CHANNEL) < 0) {
		if (c->ch.fd >= 0)
			close(c->ch.fd);
		drnic_destroy_comp_channel(c->dch);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return &c->ch;
}

DIBV_EXPORT int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct dibv_comp_channel *c = (struct dibv_comp_channel *)(void *)channel;
	int rc;

	if (handle_take(c, HANDLE_IBV_COMP_CHANNEL) < 0)
		return DIBV_ERR(EINVAL);
	rc = drnic_destroy_comp_channel(c->dch);
	if (rc < 0)
		return dibv_handle_undo(c, HANDLE_IBV_COMP_CHANNEL, dibv_errno(rc));
	close(c->ch.fd);
	free(c);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Completion queues                                                        */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t dibv_cq_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dibv_cq *dibv_cq_list;

struct dibv_cq *
dibv_cq_lookup(const struct drnic_cq *dcq)
{
	struct dibv_cq *c;

	pthread_mutex_lock(&dibv_cq_lock);
	for (c = dibv_cq_list; c != NULL && c->dcq != dcq; c = c->next)
		;
	pthread_mutex_unlock(&dibv_cq_lock);
	return c;
}

static void
dibv_cq_unlink(struct dibv_cq *cq)
{
	struct dibv_cq **pp;

	pthread_mutex_lock(&dibv_cq_lock);
	for (pp = &dibv_cq_list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == cq) {
			*pp = cq->next;
			break;
		}
	pthread_mutex_unlock(&dibv_cq_lock);
}

/* Completions an ACK brought (SEND, RDMA WRITE): the peer's answer to what
 * completed may be on its way right behind that ACK (see drnic_progress_linger()).
 * Not READ / atomic responses (they carry the answer) nor receives. */
static bool
dibv_acked(const struct ibv_wc *wc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (wc[i].status == IBV_WC_SUCCESS &&
		    (wc[i].opcode == IBV_WC_SEND || wc[i].opcode == IBV_WC_RDMA_WRITE))
			return true;
	return false;
}

static int
dibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	uint64_t t0 = 0, rx = 0, tx = 0;
	int n;

	if (unlikely(dibv_trace_on)) {
		t0 = dibv_trace_now();
		dibv_trace_rxtx(&rx, &tx);
	}
	/* struct drnic_wc is struct ibv_wc (test/unit/lib/cq/verbs_abi). */
	drnic_progress_app_enter();
	n = drnic_cq_poll(dibv_cq_of(cq)->dcq, num_entries, (struct drnic_wc *)(void *)wc);
	if (n > 0 && dibv_acked(wc, n))
		drnic_progress_linger();
	drnic_progress_app_leave();
	if (unlikely(dibv_trace_on)) {
		uint64_t rx1, tx1;

		dibv_trace_rxtx(&rx1, &tx1);
		if (n != 0 || rx1 != rx || tx1 != tx)
			dibv_trace(1, t0, n, rx, tx);
	}
	return n < 0 ? -1 : n;
}

static int
dibv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	int rc = drnic_cq_req_notify(dibv_cq_of(cq)->dcq, solicited_only);

	drnic_progress_app_waits();

	return rc < 0 ? -rc : 0;
}

/* ibv_cq_ex polling: one completion at a time in cq->cur. */
/* Poll a stamping CQ into c->buf and c->ts; the wall clock's offset from
 * the device clock, read now, serves the batch. */
static int
dibv_cq_poll_ts(struct dibv_cq *c)
{
	struct timespec rt;
	uint64_t dev;

	clock_gettime(CLOCK_REALTIME, &rt);
	dev = drnic_cq_clock_ns();
	c->wall_off = (int64_t)((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec - dev);
	return drnic_cq_poll_ts(c->dcq, (int)RTE_DIM(c->buf), c->buf, c->ts);
}

/* The completion's time on the device clock (ns: hca_core_clock is 1 GHz). */
static uint64_t
dibv_cqx_completion_ts(struct ibv_cq_ex *cq)
{
	return ((struct dibv_cq *)(void *)cq)->cur_ts;
}

/* The same instant on CLOCK_REALTIME, in ns. */
static uint64_t
dibv_cqx_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	const struct dibv_cq *c = (struct dibv_cq *)(void *)cq;

	return c->cur_ts + (uint64_t)c->wall_off;
}

static int
dibv_cqx_fill(struct dibv_cq *c)
{
	if (c->buf_i >= c->buf_n) {
		int n;

		drnic_progress_app_enter();
		n = c->stamp ? dibv_cq_poll_ts(c) :
			       drnic_cq_poll(c->dcq, (int)RTE_DIM(c->buf), c->buf);
		if (n > 0 && dibv_acked((const struct ibv_wc *)(const void *)c->buf, n))
			drnic_progress_linger();
		drnic_progress_app_leave();
		if (n <= 0) {
			c->buf_n = c->buf_i = 0;
			return n < 0 ? EINVAL : ENOENT;
		}
		c->buf_n = n;
		c->buf_i = 0;
	}
	if (c->stamp)
		c->cur_ts = c->ts[c->buf_i];
	c->cur = c->buf[c->buf_i++];
	c->cqx.status = (enum ibv_wc_status)c->cur.status;
	c->cqx.wr_id = c->cur.wr_id;
	return 0;
}

#define CQX(x) ((struct dibv_cq *)(void *)(x))

static int
dibv_cqx_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	if (attr != NULL && attr->comp_mask != 0)
		return EINVAL;
	return dibv_cqx_fill(CQX(cq));
}

static int
dibv_cqx_next_poll(struct ibv_cq_ex *cq)
{
	return dibv_cqx_fill(CQX(cq));
}

static void
dibv_cqx_end_poll(struct ibv_cq_ex *cq)
{
	(void)cq;
}

static enum ibv_wc_opcode
dibv_cqx_opcode(struct ibv_cq_ex *cq)
{
	return (enum ibv_wc_opcode)CQX(cq)->cur.opcode;
}

static uint32_t
dibv_cqx_vendor_err(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.vendor_err;
}

static uint32_t
dibv_cqx_byte_len(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.byte_len;
}

static __be32
dibv_cqx_imm(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.imm_data;
}

static uint32_t
dibv_cqx_qp_num(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.qp_num;
}

static uint32_t
dibv_cqx_src_qp(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.src_qp;
}

static unsigned int
dibv_cqx_wc_flags(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.wc_flags;
}

static uint32_t
dibv_cqx_slid(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.slid;
}

static uint8_t
dibv_cqx_sl(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.sl;
}

static uint8_t
dibv_cqx_dlid_path_bits(struct ibv_cq_ex *cq)
{
	return CQX(cq)->cur.dlid_path_bits;
}

/*
 * The depth a CQ of @p cqe entries gets: the next power of two above the
 * request, as ConnectX's provider does (its CQs hold cqe + 1 rounded up),
 * within the device's limit. Applications such as perftest size a CQ for
 * the completions they expect and rely on that slack: a send completion
 * whose ACK comes after the peer's reply must still find room.
 */
static uint32_t
dibv_cq_depth(struct ibv_context *context, uint32_t cqe)
{
	struct drnic_device_attr da;
	uint32_t depth;

	if (cqe >= UINT32_MAX / 2 || drnic_query_device(dibv_ctx(context)->d->dev, &da) != 0)
		return cqe;
	depth = rte_align32pow2(cqe + 1);
	if (depth > (uint32_t)da.max_cqe)
		depth = RTE_MAX(cqe, (uint32_t)da.max_cqe);
	return depth;
}

static struct dibv_cq *
dibv_cq_new(struct ibv_context *context, uint32_t cqe, void *cq_context,
	    struct ibv_comp_channel *channel, uint32_t comp_vector, uint64_t wc_flags)
{
	const uint64_t stamps = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	struct dibv_context *c;
	struct drnic_cq_attr a = { 0 };
	struct dibv_cq *cq;
	struct ibv_cq_ex *x;

	if (context == NULL || cqe == 0 || (int)comp_vector < 0 ||
	    (int)comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	c = dibv_ctx(context);
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	cqe = dibv_cq_depth(context, cqe);
	a.cqe = cqe;
	a.channel = channel != NULL ? ((struct dibv_comp_channel *)(void *)channel)->dch : NULL;
	a.comp_vector = (int)comp_vector;
	a.socket_id = -1;
	a.cq_context = cq;
	a.async_queue = c->async;
	a.flags = (wc_flags & stamps) ? DRNIC_CQ_TIMESTAMP : 0;
	cq->stamp = (wc_flags & stamps) != 0;
	cq->dcq = drnic_cq_create(&a);
	if (cq->dcq == NULL) {
		errno = rte_errno == ERANGE ? EINVAL : (rte_errno ? rte_errno : ENOMEM);
		free(cq);
		return NULL;
	}
	if (handle_add(cq, HANDLE_IBV_CQ) < 0) {
		drnic_cq_destroy(cq->dcq);
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	x = &cq->cqx;
	x->context = context;
	x->channel = channel;
	x->cq_context = cq_context;
	x->cqe = (int)cqe;
	pthread_mutex_init(&x->mutex, NULL);
	pthread_cond_init(&x->cond, NULL);
	x->start_poll = dibv_cqx_start_poll;
	x->next_poll = dibv_cqx_next_poll;
	x->end_poll = dibv_cqx_end_poll;
	x->read_opcode = dibv_cqx_opcode;
	x->read_vendor_err = dibv_cqx_vendor_err;
	x->read_byte_len = dibv_cqx_byte_len;
	x->read_imm_data = dibv_cqx_imm;
	x->read_qp_num = dibv_cqx_qp_num;
	x->read_src_qp = dibv_cqx_src_qp;
	x->read_wc_flags = dibv_cqx_wc_flags;
	x->read_slid = dibv_cqx_slid;
	x->read_sl = dibv_cqx_sl;
	x->read_dlid_path_bits = dibv_cqx_dlid_path_bits;
	x->read_completion_ts = dibv_cqx_completion_ts;
	x->read_completion_wallclock_ns = dibv_cqx_completion_wallclock_ns;
	pthread_mutex_lock(&dibv_cq_lock);
	cq->next = dibv_cq_list;
	dibv_cq_list = cq;
	pthread_mutex_unlock(&dibv_cq_lock);
	return cq;
}

DIBV_EXPORT struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct dibv_cq *cq;

	if (cqe <= 0 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = dibv_cq_new(context, (uint32_t)cqe, cq_context, channel, (uint32_t)comp_vector, 0);
	return cq != NULL ? ibv_cq_ex_to_cq(&cq->cqx) : NULL;
}

static struct ibv_cq_ex *
dibv_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	const uint64_t ok_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
				  IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				  IBV_WC_EX_WITH_DLID_PATH_BITS |
				  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	struct dibv_cq *cq;

	if (attr == NULL || (attr->wc_flags & ~ok_flags) != 0 ||
	    (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					   IBV_CQ_INIT_ATTR_MASK_PD)) != 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A CQ's PD must be a parent domain (ibv_create_cq_ex(3)). */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    !dibv_is_parent_domain(attr->parent_domain, context)) {
		errno = EINVAL;
		return NULL;
	}
	cq = dibv_cq_new(context, attr->cqe, attr->cq_context, attr->channel, attr->comp_vector,
			 attr->wc_flags);
	return cq != NULL ? &cq->cqx : NULL;
}

DIBV_EXPORT int
ibv_destroy_cq(struct ibv_cq *cq)
{
	struct dibv_cq *c = dibv_cq_of(cq);
	int rc;

	if (handle_take(c, HANDLE_IBV_CQ) < 0)
		return DIBV_ERR(EINVAL);
	rc = drnic_cq_destroy(c->dcq);
	if (rc < 0)
		return dibv_handle_undo(c, HANDLE_IBV_CQ, dibv_errno(rc));
	dibv_cq_unlink(c);
	pthread_mutex_destroy(&c->cqx.mutex);
	pthread_cond_destroy(&c->cqx.cond);
	free(c);
	return 0;
}

DIBV_EXPORT int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	uint32_t depth;
	int rc;

	if (cq == NULL || cqe <= 0)
		return DIBV_ERR(EINVAL);
	depth = dibv_cq_depth(cq->context, (uint32_t)cqe);
	rc = drnic_cq_resize(dibv_cq_of(cq)->dcq, depth);
	if (rc < 0)
		return dibv_errno(rc);
	cq->cqe = (int)depth;
	return 0;
}

DIBV_EXPORT int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct dibv_comp_channel *ch = (struct dibv_comp_channel *)(void *)channel;
	struct drnic_cq *dcq;
	struct dibv_cq *c = NULL;
	void *ctx = NULL;
	int rc;

	if (channel == NULL || cq == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* A channel whose fd the application made non-blocking (UCX does,
	 * before it arms) answers EAGAIN at once, as libibverbs' read() of
	 * the fd does (the fd is the drop-in's own: ibv_create_comp_channel). */
	if (fcntl(channel->fd, F_GETFL) & O_NONBLOCK) {
		rc = drnic_try_get_cq_event(ch->dch, &dcq, &ctx);
	} else {
		drnic_progress_app_waits();
		rc = drnic_get_cq_event(ch->dch, &dcq, &ctx);
	}
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	c = ctx;
	*cq = ibv_cq_ex_to_cq(&c->cqx);
	if (cq_context != NULL)
		*cq_context = c->cqx.cq_context;
	return 0;
}

DIBV_EXPORT void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (cq != NULL)
		drnic_ack_cq_events(dibv_cq_of(cq)->dcq, nevents);
}

/* ------------------------------------------------------------------------ */
/* Queue pairs                                                              */
/* ------------------------------------------------------------------------ */

void
dibv_ah_to_drnic(const struct ibv_ah_attr *s, struct drnic_ah_attr *d)
{
	memset(d, 0, sizeof(*d));
	memcpy(d->grh.dgid.raw, s->grh.dgid.raw, 16);
	d->grh.flow_label = s->grh.flow_label;
	d->grh.sgid_index = s->grh.sgid_index;
	d->grh.hop_limit = s->grh.hop_limit;
	d->grh.traffic_class = s->grh.traffic_class;
	d->dlid = s->dlid;
	d->sl = s->sl;
	d->src_path_bits = s->src_path_bits;
	d->static_rate = s->static_rate;
	d->is_global = s->is_global;
	d->port_num = s->port_num;
}

void
dibv_ah_from_drnic(const struct drnic_ah_attr *s, struct ibv_ah_attr *d)
{
	memset(d, 0, sizeof(*d));
	memcpy(d->grh.dgid.raw, s->grh.dgid.raw, 16);
	d->grh.flow_label = s->grh.flow_label;
	d->grh.sgid_index = s->grh.sgid_index;
	d->grh.hop_limit = s->grh.hop_limit;
	d->grh.traffic_class = s->grh.traffic_class;
	d->dlid = s->dlid;
	d->sl = s->sl;
	d->src_path_bits = s->src_path_bits;
	d->static_rate = s->static_rate;
	d->is_global = s->is_global;
	d->port_num = s->port_num;
}

static int dibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static void dibv_qpx_init(struct dibv_qp *q);

/* The ibv_wr_* batch's memory (each WR's SGE list and inline copy). */
static void
dibv_qp_batch_free(struct dibv_qp *q)
{
	uint32_t i;

	for (i = 0; q->batch != NULL && i < q->batch_cap; i++) {
		free(q->batch[i].sge);
		free(q->batch[i].inl);
	}
	free(q->batch);
	q->batch = NULL;
}

/*
 * Give drnic QP q->dqp its verbs face: the ibv_wr_* batch (max_send_wr and
 * max_send_sge of @p ia) and the ibv_qp fields. 0, or ENOMEM (nothing of it
 * is left; the caller still owns q->dqp).
 */
static int
dibv_qp_wrap(struct dibv_qp *q, struct ibv_context *ctx, struct ibv_pd *pd,
	     const struct ibv_qp_init_attr *ia)
{
	struct ibv_qp *qp = &q->qpx.qp_base;
	uint32_t i;

	q->send_cq = ia->send_cq != NULL ? dibv_cq_of(ia->send_cq) : NULL;
	q->recv_cq = ia->recv_cq != NULL ? dibv_cq_of(ia->recv_cq) : NULL;
	q->max_send_sge = ia->cap.max_send_sge ? ia->cap.max_send_sge : 1;
	q->max_inline = ia->cap.max_inline_data;
	q->batch_cap = ia->cap.max_send_wr == 0 ? 1 : ia->cap.max_send_wr < 64 ?
		       ia->cap.max_send_wr : 64;
	q->batch = calloc(q->batch_cap, sizeof(*q->batch));
	if (q->batch == NULL)
		goto nomem;
	for (i = 0; i < q->batch_cap; i++) {
		q->batch[i].sge = calloc(q->max_send_sge, sizeof(q->batch[i].sge[0]));
		if (q->batch[i].sge == NULL)
			goto nomem;
		if (q->max_inline > 0) {
			q->batch[i].inl = malloc(q->max_inline);
			if (q->batch[i].inl == NULL)
				goto nomem;
		}
	}
	qp->context = ctx;
	qp->qp_context = ia->qp_context;
	qp->pd = pd;
	qp->send_cq = ia->send_cq;
	qp->recv_cq = ia->recv_cq;
	qp->srq = ia->srq;
	qp->qp_num = drnic_qp_num(q->dqp);
	qp->handle = qp->qp_num;
	qp->state = (enum ibv_qp_state)drnic_qp_state(q->dqp);
	qp->qp_type = ia->qp_type;
	if (handle_add(q, HANDLE_IBV_QP) < 0)
		goto nomem;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	dibv_qpx_init(q);
	return 0;
nomem:
	dibv_qp_batch_free(q);
	return ENOMEM;
}

/* A QP of any type drnic has (RC, UC, XRC_SEND; XRC_RECV in @p xrcd, with
 * no PD, CQ or queue). */
static struct ibv_qp *
dibv_qp_new(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_qp_init_attr *ia,
	    struct ibv_xrcd *xrcd)
{
	struct drnic_qp_init_attr a = { 0 };
	bool tgt = ia != NULL && ia->qp_type == IBV_QPT_XRC_RECV;
	struct dibv_qp *q;

	if (ctx == NULL || ia == NULL ||
	    (tgt ? !handle_live(dibv_xrcd_of(xrcd), HANDLE_IBV_XRCD) :
	     pd == NULL || ia->send_cq == NULL ||
	     (ia->recv_cq == NULL && ia->qp_type != IBV_QPT_XRC_SEND))) {
		errno = EINVAL;
		return NULL;
	}
	if (ia->qp_type != IBV_QPT_RC && ia->qp_type != IBV_QPT_UC && ia->qp_type != IBV_QPT_UD &&
	    ia->qp_type != IBV_QPT_XRC_SEND && !tgt) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (ia->srq != NULL && ia->qp_type != IBV_QPT_XRC_SEND && !tgt &&
	    !handle_live(dibv_srq_of(ia->srq), HANDLE_IBV_SRQ)) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a.qp_context = q;
	a.send_cq = ia->send_cq != NULL && !tgt ? dibv_cq_of(ia->send_cq)->dcq : NULL;
	a.recv_cq = ia->recv_cq != NULL && !tgt ? dibv_cq_of(ia->recv_cq)->dcq : NULL;
	/* enum ibv_qp_type and enum drnic_qp_type are equal. */
	a.qp_type = (enum drnic_qp_type)ia->qp_type;
	a.sq_sig_all = ia->sq_sig_all;
	a.srq = ia->srq != NULL && !tgt ? dibv_srq_of(ia->srq)->dsrq : NULL;
	a.xrcd = tgt ? dibv_xrcd_of(xrcd)->dx : NULL;
	a.async_queue = dibv_ctx(ctx)->async;
	/* drnic wants at least one of each; verbs allows zero. */
	a.cap.max_send_wr = ia->cap.max_send_wr ? ia->cap.max_send_wr : 1;
	a.cap.max_recv_wr = ia->cap.max_recv_wr ? ia->cap.max_recv_wr : 1;
	a.cap.max_send_sge = ia->cap.max_send_sge ? ia->cap.max_send_sge : 1;
	a.cap.max_recv_sge = ia->cap.max_recv_sge ? ia->cap.max_recv_sge : 1;
	/* As rxe and ConnectX: a send WQE has room for its SGEs, which
	 * inline data may use (rdma_xclient posts 16 inline bytes on a QP
	 * asked for none), within the device's limit. */
	a.cap.max_inline_data = RTE_MAX(ia->cap.max_inline_data,
					RTE_MIN(a.cap.max_send_sge * 16u,
						dibv_ctx(ctx)->d->cfg.max_inline_data));
	q->dqp = drnic_create_qp(pd != NULL ? ((struct dibv_pd *)(void *)pd)->dpd : NULL, &a);
	if (q->dqp == NULL) {
		errno = rte_errno ? rte_errno : EINVAL;
		free(q);
		return NULL;
	}
	ia->cap.max_send_wr = a.cap.max_send_wr;
	ia->cap.max_recv_wr = a.cap.max_recv_wr;
	ia->cap.max_send_sge = a.cap.max_send_sge;
	ia->cap.max_recv_sge = a.cap.max_recv_sge;
	ia->cap.max_inline_data = a.cap.max_inline_data;
	if (tgt) {
		ia->send_cq = ia->recv_cq = NULL;
		ia->srq = NULL;
	}
	errno = dibv_qp_wrap(q, ctx, pd, ia);
	if (errno != 0) {
		drnic_destroy_qp(q->dqp);
		free(q);
		return NULL;
	}
	return &q->qpx.qp_base;
}

/* ibv_open_qp(3): another handle on an XRC target QP of the domain. */
static struct ibv_qp *
dibv_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *oa)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	struct ibv_qp_init_attr ia = { 0 };
	struct dibv_qp *q;

	if (ctx == NULL || oa == NULL || (oa->comp_mask & need) != need ||
	    oa->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED ||
	    !handle_live(dibv_xrcd_of(oa->xrcd), HANDLE_IBV_XRCD)) {
		errno = EINVAL;
		return NULL;
	}
	if (oa->qp_type != IBV_QPT_XRC_RECV) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->dqp = drnic_open_qp(dibv_xrcd_of(oa->xrcd)->dx, oa->qp_num);
	if (q->dqp == NULL) {
		errno = rte_errno ? rte_errno : EINVAL;
		free(q);
		return NULL;
	}
	ia.qp_type = IBV_QPT_XRC_RECV;
	ia.qp_context = (oa->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT) ? oa->qp_context : NULL;
	errno = dibv_qp_wrap(q, ctx, NULL, &ia);
	if (errno != 0) {
		drnic_destroy_qp(q->dqp);   /* the open's reference */
		free(q);
		return NULL;
	}
	return &q->qpx.qp_base;
}

DIBV_EXPORT struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	return dibv_qp_new(pd != NULL ? pd->context : NULL, pd, qp_init_attr, NULL);
}

static struct ibv_qp *
dibv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *ax)
{
	const uint64_t ok_ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_BIND_MW |
				IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV |
				IBV_QP_EX_WITH_ATOMIC_WRITE;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	/* An XRC target has a domain and no PD; every other QP a PD. */
	if (context == NULL || ax == NULL ||
	    (ax->qp_type == IBV_QPT_XRC_RECV ? !(ax->comp_mask & IBV_QP_INIT_ATTR_XRCD) :
	     !(ax->comp_mask & IBV_QP_INIT_ATTR_PD) || ax->pd == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	if ((ax->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
					 IBV_QP_INIT_ATTR_CREATE_FLAGS |
					 IBV_QP_INIT_ATTR_XRCD)) != 0 ||
	    ((ax->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && ax->create_flags != 0) ||
	    ((ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (ax->send_ops_flags & ~ok_ops) != 0)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = ax->qp_context;
	ia.send_cq = ax->send_cq;
	ia.recv_cq = ax->recv_cq;
	ia.srq = ax->srq;
	ia.cap = ax->cap;
	ia.qp_type = ax->qp_type;
	ia.sq_sig_all = ax->sq_sig_all;
	qp = dibv_qp_new(context, ax->qp_type == IBV_QPT_XRC_RECV ? NULL : ax->pd, &ia,
			 (ax->comp_mask & IBV_QP_INIT_ATTR_XRCD) ? ax->xrcd : NULL);
	if (qp != NULL)
		ax->cap = ia.cap;
	return qp;
}

DIBV_EXPORT struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return qp != NULL ? &dibv_qp_of(qp)->qpx : NULL;
}

static void
dibv_qp_free(struct dibv_qp *q)
{
	dibv_qp_batch_free(q);
	pthread_mutex_destroy(&q->qpx.qp_base.mutex);
	pthread_cond_destroy(&q->qpx.qp_base.cond);
	free(q);
}

DIBV_EXPORT int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct dibv_qp *q = dibv_qp_of(qp), *creator;
	bool gone;
	int rc;

	if (handle_take(q, HANDLE_IBV_QP) < 0)
		return DIBV_ERR(EINVAL);
	if (dibv_debug())
		drnic_qp_stats_print(q->dqp, "drnic ibverbs: ", stderr);
	creator = drnic_qp_context(q->dqp);
	rc = drnic_destroy_qp(q->dqp);
	if (rc < 0)
		return dibv_handle_undo(q, HANDLE_IBV_QP, dibv_errno(rc));
	if (qp->qp_type == IBV_QPT_XRC_RECV) {
		/* An XRC target lives while a handle of it (ibv_open_qp) does,
		 * and its async events name the handle that created it (its
		 * qp_context): that one's memory stays until the QP goes.
		 * (The registry is asked about the pointer, nothing is read.) */
		gone = !handle_live(q->dqp, HANDLE_QP);
		if (!gone && creator == q)
			return 0;
		if (gone && creator != q)
			dibv_qp_free(creator);
	}
	dibv_qp_free(q);
	return 0;
}

/* A peer IPv4 address for AVs without a GRH (see dibv_settings.peer). */
void
dibv_fix_av(struct ibv_context *context, struct drnic_ah_attr *ah)
{
	const struct dibv_settings *s = &dibv_ctx(context)->d->set;

	if (ah->is_global || !s->has_peer)
		return;
	memset(ah->grh.dgid.raw, 0, 16);
	ah->grh.dgid.raw[10] = 0xff;
	ah->grh.dgid.raw[11] = 0xff;
	memcpy(&ah->grh.dgid.raw[12], &s->peer, 4);
	ah->grh.hop_limit = 64;
	ah->is_global = 1;
}

DIBV_EXPORT int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct dibv_qp *q = dibv_qp_of(qp);
	struct drnic_qp_attr a;
	int rc;

	if (qp == NULL || attr == NULL)
		return DIBV_ERR(EINVAL);
	memset(&a, 0, sizeof(a));
	a.qp_state = (enum drnic_qp_state)attr->qp_state;
	a.cur_qp_state = (enum drnic_qp_state)attr->cur_qp_state;
	a.path_mtu = (enum drnic_mtu)attr->path_mtu;
	a.path_mig_state = (enum drnic_mig_state)attr->path_mig_state;
	a.qkey = attr->qkey;
	a.rq_psn = attr->rq_psn;
	a.sq_psn = attr->sq_psn;
	a.dest_qp_num = attr->dest_qp_num;
	a.qp_access_flags = attr->qp_access_flags;
	a.cap.max_send_wr = attr->cap.max_send_wr;
	a.cap.max_recv_wr = attr->cap.max_recv_wr;
	a.cap.max_send_sge = attr->cap.max_send_sge;
	a.cap.max_recv_sge = attr->cap.max_recv_sge;
	a.cap.max_inline_data = attr->cap.max_inline_data;
	dibv_ah_to_drnic(&attr->ah_attr, &a.ah_attr);
	if (attr_mask & IBV_QP_AV)
		dibv_fix_av(qp->context, &a.ah_attr);
	dibv_ah_to_drnic(&attr->alt_ah_attr, &a.alt_ah_attr);
	a.pkey_index = attr->pkey_index;
	a.alt_pkey_index = attr->alt_pkey_index;
	a.en_sqd_async_notify = attr->en_sqd_async_notify;
	a.sq_draining = attr->sq_draining;
	a.max_rd_atomic = attr->max_rd_atomic;
	a.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	a.min_rnr_timer = attr->min_rnr_timer;
	a.port_num = attr->port_num;
	a.timeout = attr->timeout;
	a.retry_cnt = attr->retry_cnt;
	a.rnr_retry = attr->rnr_retry;
	a.alt_port_num = attr->alt_port_num;
	a.alt_timeout = attr->alt_timeout;
	a.rate_limit = attr->rate_limit;
	rc = drnic_modify_qp(q->dqp, &a, attr_mask);
	if (rc < 0)
		return dibv_errno(rc);
	qp->state = (enum ibv_qp_state)drnic_qp_state(q->dqp);
	return 0;
}

DIBV_EXPORT int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init_attr)
{
	struct dibv_qp *q = dibv_qp_of(qp);
	struct drnic_qp_init_attr ia;
	struct drnic_qp_attr a;
	int rc;

	if (qp == NULL || attr == NULL || init_attr == NULL)
		return DIBV_ERR(EINVAL);
	rc = drnic_query_qp(q->dqp, &a, attr_mask, &ia);
	if (rc < 0)
		return dibv_errno(rc);
	drnic_ibv_qp_attr_from_drnic(&a, attr);
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = NULL;
	init_attr->cap = attr->cap;
	init_attr->qp_type = (enum ibv_qp_type)ia.qp_type;   /* the enums are equal */
	init_attr->sq_sig_all = ia.sq_sig_all;
	qp->state = attr->qp_state;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Data path                                                                */
/* ------------------------------------------------------------------------ */

#define DIBV_POST_BATCH 32

static int
dibv_wr_convert(const struct dibv_qp *q, const struct ibv_send_wr *s, struct drnic_send_wr *d)
{
	/* IBV_WR_ATOMIC_WRITE as a WRITE: wr.rdma, 8 bytes in the SGEs or inline. */
	if ((unsigned int)s->opcode > IBV_WR_SEND_WITH_INV && s->opcode != IBV_WR_ATOMIC_WRITE)
		return EINVAL;
	d->wr_id = s->wr_id;
	d->next = NULL;
	/* struct drnic_sge is struct ibv_sge. */
	d->sg_list = (struct drnic_sge *)(void *)s->sg_list;
	d->num_sge = s->num_sge;
	d->opcode = (enum drnic_wr_opcode)s->opcode;
	d->send_flags = s->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					 IBV_SEND_SOLICITED | IBV_SEND_INLINE);
	d->imm_data = s->imm_data;     /* invalidate_rkey too */
	d->qp_type.xrc.remote_srqn = s->qp_type.xrc.remote_srqn;   /* XRC_SEND only */
	if (s->opcode == IBV_WR_BIND_MW) {
		dibv_bind_convert(s->bind_mw.mw, s->bind_mw.rkey, &s->bind_mw.bind_info, d);
	} else if (s->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   s->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		d->wr.atomic.remote_addr = s->wr.atomic.remote_addr;
		d->wr.atomic.compare_add = s->wr.atomic.compare_add;
		d->wr.atomic.swap = s->wr.atomic.swap;
		d->wr.atomic.rkey = s->wr.atomic.rkey;
	} else if (q->qpx.qp_base.qp_type == IBV_QPT_UD) {
		/* The AH is checked before it is followed. */
		struct dibv_ah *h = dibv_ah_of(s->wr.ud.ah);

		if (!handle_live(h, HANDLE_IBV_AH))
			return EINVAL;
		d->wr.ud.ah = h->dah;
		d->wr.ud.remote_qpn = s->wr.ud.remote_qpn;
		d->wr.ud.remote_qkey = s->wr.ud.remote_qkey;
	} else {
		d->wr.rdma.remote_addr = s->wr.rdma.remote_addr;
		d->wr.rdma.rkey = s->wr.rdma.rkey;
	}
	return 0;
}

static int
dibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct dibv_qp *q = dibv_qp_of(qp);
	struct drnic_send_wr d[DIBV_POST_BATCH];
	struct ibv_send_wr *src[DIBV_POST_BATCH];
	uint64_t t0 = 0, rx = 0, tx = 0;
	int rc = 0;

	if (unlikely(dibv_trace_on)) {
		t0 = dibv_trace_now();
		dibv_trace_rxtx(&rx, &tx);
	}

	drnic_progress_app_enter();
	while (wr != NULL) {
		struct drnic_send_wr *dbad = NULL;
		int n = 0, i;

		for (; wr != NULL && n < DIBV_POST_BATCH; wr = wr->next, n++) {
			rc = dibv_wr_convert(q, wr, &d[n]);
			if (rc != 0)
				break;
			src[n] = wr;
			if (n > 0)
				d[n - 1].next = &d[n];
		}
		if (n > 0) {
			int r = drnic_post_send(q->dqp, d, &dbad);

			if (r < 0) {
				for (i = 0; i < n && &d[i] != dbad; i++)
					;
				*bad = i < n ? src[i] : src[0];
				drnic_progress_posted();
				drnic_progress_app_leave();
				return -r;
			}
		}
		if (rc != 0) {
			*bad = wr;
			drnic_progress_posted();
			drnic_progress_app_leave();
			return rc;
		}
	}
	drnic_progress_posted();
	drnic_progress_app_leave();
	if (unlikely(dibv_trace_on))
		dibv_trace(2, t0, 0, rx, tx);
	return 0;
}

static int
dibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int rc;

	/* struct drnic_recv_wr is struct ibv_recv_wr. */
	drnic_progress_app_enter();
	rc = drnic_post_recv(dibv_qp_of(qp)->dqp, (struct drnic_recv_wr *)(void *)wr,
			     (struct drnic_recv_wr **)(void *)bad);
	drnic_progress_app_leave();
	return rc < 0 ? -rc : 0;
}

static int
dibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int rc;

	/* struct drnic_recv_wr is struct ibv_recv_wr. */
	drnic_progress_app_enter();
	rc = drnic_post_srq_recv(dibv_srq_of(srq)->dsrq, (struct drnic_recv_wr *)(void *)wr,
				 (struct drnic_recv_wr **)(void *)bad);
	drnic_progress_app_leave();
	return rc < 0 ? -rc : 0;
}

/* ------------------------------------------------------------------------ */
/* Shared receive queues                                                    */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *ia)
{
	struct drnic_srq_init_attr a = { 0 };

	if (pd == NULL || ia == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return dibv_srq_new(pd, &a, &ia->attr, ia->srq_context);
}

struct ibv_srq *
dibv_srq_new(struct ibv_pd *pd, struct drnic_srq_init_attr *a, struct ibv_srq_attr *attr,
	     void *srq_context)
{
	struct dibv_srq *s;

	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a->srq_context = s;
	a->attr.max_wr = attr->max_wr;
	a->attr.max_sge = attr->max_sge ? attr->max_sge : 1;
	a->attr.srq_limit = attr->srq_limit;
	a->async_queue = dibv_ctx(pd->context)->async;
	s->dsrq = drnic_create_srq(((struct dibv_pd *)(void *)pd)->dpd, a);
	if (s->dsrq == NULL) {
		errno = rte_errno ? rte_errno : EINVAL;
		free(s);
		return NULL;
	}
	attr->max_wr = a->attr.max_wr;
	attr->max_sge = a->attr.max_sge;
	s->srq.context = pd->context;
	s->srq.srq_context = srq_context;
	s->srq.pd = pd;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	if (handle_add(s, HANDLE_IBV_SRQ) < 0) {
		drnic_destroy_srq(s->dsrq);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return &s->srq;
}

DIBV_EXPORT int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct drnic_srq_attr a = { 0 };
	struct dibv_srq *s = dibv_srq_of(srq);
	int rc;

	if (!handle_live(s, HANDLE_IBV_SRQ) || attr == NULL)
		return DIBV_ERR(EINVAL);
	/* Growing (IBV_SRQ_MAX_WR) and the limit: the same bits as drnic's. */
	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return DIBV_ERR(EINVAL);
	a.max_wr = attr->max_wr;
	a.srq_limit = attr->srq_limit;
	rc = drnic_modify_srq(s->dsrq, &a, mask);
	return rc < 0 ? dibv_errno(rc) : 0;
}

DIBV_EXPORT int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct drnic_srq_attr a;
	struct dibv_srq *s = dibv_srq_of(srq);
	int rc;

	if (!handle_live(s, HANDLE_IBV_SRQ) || attr == NULL)
		return DIBV_ERR(EINVAL);
	rc = drnic_query_srq(s->dsrq, &a);
	if (rc < 0)
		return dibv_errno(rc);
	attr->max_wr = a.max_wr;
	attr->max_sge = a.max_sge;
	attr->srq_limit = a.srq_limit;
	return 0;
}

DIBV_EXPORT int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct dibv_srq *s = dibv_srq_of(srq);
	int rc;

	if (handle_take(s, HANDLE_IBV_SRQ) < 0)
		return DIBV_ERR(EINVAL);
	rc = drnic_destroy_srq(s->dsrq);
	if (rc < 0)
		return dibv_handle_undo(s, HANDLE_IBV_SRQ, dibv_errno(rc));
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(s);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* ibv_qp_ex: ibv_wr_* builders                                             */
/* ------------------------------------------------------------------------ */

#define QX(x) ((struct dibv_qp *)(void *)(x))

static int
dibv_wr_flush(struct dibv_qp *q)
{
	struct drnic_send_wr *bad = NULL;
	uint32_t i;
	int rc;

	if (q->batch_n == 0)
		return 0;
	for (i = 0; i < q->batch_n; i++)
		q->batch[i].wr.next = i + 1 < q->batch_n ? &q->batch[i + 1].wr : NULL;
	drnic_progress_app_enter();
	rc = drnic_post_send(q->dqp, &q->batch[0].wr, &bad);
	q->batch_n = 0;
	drnic_progress_posted();
	drnic_progress_app_leave();
	return rc < 0 ? -rc : 0;
}

/* Open a new WR in the batch with the qp_ex's wr_id and wr_flags. */
static struct dibv_wr *
dibv_wr_new(struct dibv_qp *q, enum drnic_wr_opcode op)
{
	struct dibv_wr *w;

	if (q->batch_err != 0)
		return NULL;
	if (q->batch_n == q->batch_cap) {
		q->batch_err = dibv_wr_flush(q);
		if (q->batch_err != 0)
			return NULL;
	}
	w = &q->batch[q->batch_n++];
	memset(&w->wr, 0, sizeof(w->wr));
	w->wr.wr_id = q->qpx.wr_id;
	w->wr.send_flags = q->qpx.wr_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					      IBV_SEND_SOLICITED | IBV_SEND_INLINE);
	w->wr.opcode = op;
	w->wr.sg_list = w->sge;
	return w;
}

static struct dibv_wr *
dibv_wr_cur(struct dibv_qp *q)
{
	if (q->batch_err != 0 || q->batch_n == 0) {
		if (q->batch_err == 0)
			q->batch_err = EINVAL;
		return NULL;
	}
	return &q->batch[q->batch_n - 1];
}

static void
dibv_wr_start(struct ibv_qp_ex *x)
{
	QX(x)->batch_n = 0;
	QX(x)->batch_err = 0;
}

static int
dibv_wr_complete(struct ibv_qp_ex *x)
{
	struct dibv_qp *q = QX(x);
	int rc = q->batch_err;

	if (rc != 0) {
		q->batch_n = 0;
		q->batch_err = 0;
		return rc;
	}
	return dibv_wr_flush(q);
}

static void
dibv_wr_abort(struct ibv_qp_ex *x)
{
	QX(x)->batch_n = 0;
	QX(x)->batch_err = 0;
}

static void
dibv_wr_rdma(struct ibv_qp_ex *x, enum drnic_wr_opcode op, uint32_t rkey, uint64_t addr,
	     __be32 imm)
{
	struct dibv_wr *w = dibv_wr_new(QX(x), op);

	if (w == NULL)
		return;
	w->wr.wr.rdma.rkey = rkey;
	w->wr.wr.rdma.remote_addr = addr;
	w->wr.imm_data = imm;
}

static void
dibv_wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr)
{
	dibv_wr_rdma(x, DRNIC_WR_RDMA_WRITE, rkey, addr, 0);
}

static void
dibv_wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, __be32 imm)
{
	dibv_wr_rdma(x, DRNIC_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void
dibv_wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr)
{
	dibv_wr_rdma(x, DRNIC_WR_RDMA_READ, rkey, addr, 0);
}

static void
dibv_wr_send(struct ibv_qp_ex *x)
{
	dibv_wr_new(QX(x), DRNIC_WR_SEND);
}

static void
dibv_wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct dibv_wr *w = dibv_wr_new(QX(x), DRNIC_WR_SEND_WITH_IMM);

	if (w != NULL)
		w->wr.imm_data = imm;
}

static void
dibv_wr_atomic(struct ibv_qp_ex *x, enum drnic_wr_opcode op, uint32_t rkey, uint64_t addr,
	       uint64_t cmp_add, uint64_t swap)
{
	struct dibv_wr *w = dibv_wr_new(QX(x), op);

	if (w == NULL)
		return;
	w->wr.wr.atomic.rkey = rkey;
	w->wr.wr.atomic.remote_addr = addr;
	w->wr.wr.atomic.compare_add = cmp_add;
	w->wr.wr.atomic.swap = swap;
}

static void
dibv_wr_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, uint64_t cmp, uint64_t swap)
{
	dibv_wr_atomic(x, DRNIC_WR_ATOMIC_CMP_AND_SWP, rkey, addr, cmp, swap);
}

static void
dibv_wr_fetch_add(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, uint64_t add)
{
	dibv_wr_atomic(x, DRNIC_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void
dibv_wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct dibv_wr *w = dibv_wr_cur(QX(x));

	if (w == NULL)
		return;
	w->sge[0].addr = addr;
	w->sge[0].length = length;
	w->sge[0].lkey = lkey;
	w->wr.sg_list = w->sge;
	w->wr.num_sge = 1;
}

static void
dibv_wr_set_sge_list(struct ibv_qp_ex *x, size_t num, const struct ibv_sge *list)
{
	struct dibv_qp *q = QX(x);
	struct dibv_wr *w = dibv_wr_cur(q);

	if (w == NULL)
		return;
	/* The count before the list: as ibv_post_send, at most max_send_sge. */
	if (num > q->max_send_sge || (num > 0 && list == NULL)) {
		q->batch_err = EINVAL;
		return;
	}
	memcpy(w->sge, list, num * sizeof(*list));
	w->wr.sg_list = w->sge;
	w->wr.num_sge = (int)num;
}

static void
dibv_wr_set_inline_data_list(struct ibv_qp_ex *x, size_t num, const struct ibv_data_buf *bufs)
{
	struct dibv_qp *q = QX(x);
	struct dibv_wr *w = dibv_wr_cur(q);
	size_t i, len = 0;

	if (w == NULL)
		return;
	if (num > 0 && bufs == NULL) {
		q->batch_err = EINVAL;
		return;
	}
	for (i = 0; i < num; i++) {
		/* len <= max_inline: no wrap-around, whatever length says. */
		if (bufs[i].length > q->max_inline - len) {
			q->batch_err = EINVAL;
			return;
		}
		memcpy(w->inl + len, bufs[i].addr, bufs[i].length);
		len += bufs[i].length;
	}
	w->sge[0].addr = (uintptr_t)w->inl;
	w->sge[0].length = (uint32_t)len;
	w->sge[0].lkey = 0;
	w->wr.sg_list = w->sge;
	w->wr.num_sge = 1;
	w->wr.send_flags |= DRNIC_SEND_INLINE;
}

static void
dibv_wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	dibv_wr_set_inline_data_list(x, 1, &b);
}

/* Operations drnic does not have: the batch fails at ibv_wr_complete(). */
static void
dibv_wr_unsupported(struct dibv_qp *q)
{
	q->batch_err = EOPNOTSUPP;
}

static void
dibv_wr_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey,
		const struct ibv_mw_bind_info *bi)
{
	struct dibv_wr *w = dibv_wr_new(QX(x), DRNIC_WR_BIND_MW);

	if (w == NULL)
		return;
	w->wr.sg_list = NULL;
	dibv_bind_convert(mw, rkey, bi, &w->wr);
}

static void
dibv_wr_inv(struct ibv_qp_ex *x, enum drnic_wr_opcode op, uint32_t rkey)
{
	struct dibv_wr *w = dibv_wr_new(QX(x), op);

	if (w != NULL)
		w->wr.invalidate_rkey = rkey;
}

static void
dibv_wr_local_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	dibv_wr_inv(x, DRNIC_WR_LOCAL_INV, rkey);
}

static void
dibv_wr_send_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	dibv_wr_inv(x, DRNIC_WR_SEND_WITH_INV, rkey);
}

static void
dibv_wr_send_tso(struct ibv_qp_ex *x, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	dibv_wr_unsupported(QX(x));
}

static void
dibv_wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct dibv_qp *q = QX(x);
	struct dibv_wr *w = dibv_wr_cur(q);
	struct dibv_ah *h = dibv_ah_of(ah);

	if (w == NULL)
		return;
	if (q->qpx.qp_base.qp_type != IBV_QPT_UD || !handle_live(h, HANDLE_IBV_AH)) {
		q->batch_err = EINVAL;
		return;
	}
	w->wr.wr.ud.ah = h->dah;
	w->wr.wr.ud.remote_qpn = qpn;
	w->wr.wr.ud.remote_qkey = qkey;
}

static void
dibv_wr_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t srqn)
{
	struct dibv_wr *w = dibv_wr_cur(QX(x));

	if (w != NULL)
		w->wr.qp_type.xrc.remote_srqn = srqn;
}

/* The 8 bytes at @p data are taken now (as inline data): the caller may
 * reuse them once this returns, as with the other providers. */
static void
dibv_wr_atomic_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, const void *data)
{
	struct dibv_wr *w;

	if (data == NULL) {
		QX(x)->batch_err = EINVAL;
		return;
	}
	w = dibv_wr_new(QX(x), DRNIC_WR_ATOMIC_WRITE);
	if (w == NULL)
		return;
	w->wr.wr.rdma.rkey = rkey;
	w->wr.wr.rdma.remote_addr = addr;
	memcpy(&w->atomic_wr, data, sizeof(w->atomic_wr));
	w->sge[0].addr = (uintptr_t)&w->atomic_wr;
	w->sge[0].length = sizeof(w->atomic_wr);
	w->sge[0].lkey = 0;
	w->wr.num_sge = 1;
	w->wr.send_flags |= DRNIC_SEND_INLINE;
}

static void
dibv_qpx_init(struct dibv_qp *q)
{
	struct ibv_qp_ex *x = &q->qpx;

	x->wr_atomic_cmp_swp = dibv_wr_cmp_swp;
	x->wr_atomic_fetch_add = dibv_wr_fetch_add;
	x->wr_bind_mw = dibv_wr_bind_mw;
	x->wr_local_inv = dibv_wr_local_inv;
	x->wr_rdma_read = dibv_wr_rdma_read;
	x->wr_rdma_write = dibv_wr_rdma_write;
	x->wr_rdma_write_imm = dibv_wr_rdma_write_imm;
	x->wr_send = dibv_wr_send;
	x->wr_send_imm = dibv_wr_send_imm;
	x->wr_send_inv = dibv_wr_send_inv;
	x->wr_send_tso = dibv_wr_send_tso;
	x->wr_set_ud_addr = dibv_wr_set_ud_addr;
	x->wr_set_xrc_srqn = dibv_wr_set_xrc_srqn;
	x->wr_set_inline_data = dibv_wr_set_inline_data;
	x->wr_set_inline_data_list = dibv_wr_set_inline_data_list;
	x->wr_set_sge = dibv_wr_set_sge;
	x->wr_set_sge_list = dibv_wr_set_sge_list;
	x->wr_start = dibv_wr_start;
	x->wr_complete = dibv_wr_complete;
	x->wr_abort = dibv_wr_abort;
	x->wr_atomic_write = dibv_wr_atomic_write;
}

/* ------------------------------------------------------------------------ */
/* Context operations                                                       */
/* ------------------------------------------------------------------------ */

int dibv_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int dibv_query_port_ex(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, size_t port_attr_len);

void
dibv_context_ops_init(struct dibv_context *c)
{
	struct ibv_context_ops *o = &c->vctx.context.ops;

	o->poll_cq = dibv_poll_cq;
	o->req_notify_cq = dibv_req_notify_cq;
	o->post_send = dibv_post_send;
	o->post_recv = dibv_post_recv;
	o->post_srq_recv = dibv_post_srq_recv;
	o->alloc_mw = dibv_alloc_mw;
	o->bind_mw = dibv_bind_mw;
	o->dealloc_mw = dibv_dealloc_mw;
	c->vctx.query_port = dibv_query_port_ex;
	c->vctx.query_device_ex = dibv_query_device_ex;
	c->vctx.create_cq_ex = dibv_create_cq_ex;
	c->vctx.create_qp_ex = dibv_create_qp_ex;
	c->vctx.open_qp = dibv_open_qp;
	dibv_xrc_ops_init(c);
	dibv_domain_ops_init(c);
}
