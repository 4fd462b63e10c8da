/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GSI agent of a device: QP 1 (verbs_create_gsi_qp()), one CQ with a
 * completion channel, and a registered area of receive and send buffers.
 *
 * Receive buffer i: the 40-byte GRH area, then room for a datagram of the
 * QP's path MTU. A MAD is 256 bytes; the room is larger so that a longer
 * datagram (anyone may send one to QP 1) is received and counted malformed
 * here instead of being too long for the WQE, which would put QP 1 in
 * error (IBA 10.8.3.3). Send buffer j: one 256-byte MAD. A send buffer is
 * free from its send completion on; each remembers the cached AH it used,
 * which is not destroyed while a send names it.
 *
 * Every frame is hostile: a receive is read only within the byte_len of
 * its completion, which the engine never makes longer than the buffer.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "drnic_cq.h"
#include "drnic_link.h"
#include "drnic_mad.h"
#include "ibcm_gsi.h"
#include "verbs_objects.h"

RTE_LOG_REGISTER_SUFFIX(ibcm_gsi_logtype, ibcm.gsi, NOTICE);
#define GSI_LOG(level, g, fmt, ...)                                             \
	rte_log(RTE_LOG_##level, ibcm_gsi_logtype, "gsi %s: " fmt "\n", (g)->name,  \
		##__VA_ARGS__)

_Static_assert(VERBS_GSI_QKEY == DRNIC_MAD_GSI_QKEY, "the GSI's Q_Key");
_Static_assert(VERBS_GSI_QPN == DRNIC_MAD_GSI_QPN, "the GSI's QPN");

#define IBCM_GSI_GRH 40            /* the GRH area before each datagram */
#define IBCM_GSI_NB_RECV 512       /* receive buffers (Linux's QP 1 posts 512 too) */
#define IBCM_GSI_NB_SEND 256       /* send buffers */
#define IBCM_GSI_NB_AH 8           /* cached address handles */
#define IBCM_GSI_BURST 32
/* wr_id of a receive: its buffer index with this bit; of a send: the index. */
#define IBCM_GSI_WR_RECV (1ull << 63)

/* IBA 13.4.7: MAD status, bits 2-4 = 1: the class or class version is
 * not supported. */
#define IBCM_GSI_STATUS_BAD_CLASS 0x0004
/* The response time we advertise in ClassPortInfo (4.096 us * 2^18, ~1 s). */
#define IBCM_GSI_RESP_TIME 18
/* Subnet management classes: QP 0's, never answered on QP 1 (IBA 13.5.3). */
#define IBCM_GSI_CLASS_SM_LID 0x01
#define IBCM_GSI_CLASS_SM_DR 0x81

/* A cached address handle: to @p gid from our GID @p sgid_index. */
struct ibcm_gsi_ah {
	struct drnic_ah *ah;       /* NULL: slot free */
	union drnic_gid gid;
	uint8_t mac[6];
	uint8_t sgid_index;
	unsigned int sends;        /* posted sends naming it, not completed */
	uint64_t last_use;         /* g->clock when last used (LRU) */
};

struct ibcm_gsi {
	struct drnic_device *dev;
	char name[32];
	ibcm_gsi_rx_fn rx;
	void *ctx;
	struct drnic_pd *pd;
	struct drnic_comp_channel *ch;
	struct drnic_cq *cq;
	struct drnic_qp *qp;
	uint8_t *area;             /* receive buffers, then send buffers */
	struct drnic_mr *mr;
	uint32_t recv_len;         /* bytes of one receive buffer */
	uint8_t *send_area;
	/* Free send buffers: a stack of indexes. */
	uint16_t send_free[IBCM_GSI_NB_SEND];
	unsigned int nb_send_free;
	int8_t send_ah[IBCM_GSI_NB_SEND];  /* AH slot of each buffer in flight */
	struct ibcm_gsi_ah ah[IBCM_GSI_NB_AH];
	uint64_t clock;
	struct ibcm_gsi_stats st;
};

/* Receive buffer @p i. */
static uint8_t *
ibcm_gsi_recv_buf(const struct ibcm_gsi *g, unsigned int i)
{
	return g->area + (size_t)i * g->recv_len;
}

static uint8_t *
ibcm_gsi_send_buf(const struct ibcm_gsi *g, unsigned int i)
{
	return g->send_area + (size_t)i * DRNIC_MAD_LEN;
}

/* Post receive buffer @p i. 0 or the post's negative errno. */
static int
ibcm_gsi_post_recv(struct ibcm_gsi *g, unsigned int i)
{
	struct drnic_sge sge = { (uintptr_t)ibcm_gsi_recv_buf(g, i), g->recv_len,
				 drnic_mr_lkey(g->mr) };
	struct drnic_recv_wr wr = { .wr_id = IBCM_GSI_WR_RECV | i, .sg_list = &sge,
				    .num_sge = 1 }, *bad;

	return drnic_post_recv(g->qp, &wr, &bad);
}

/* QP 1 from RESET to RTS with the GSI's Q_Key. 0 or a negative errno. */
static int
ibcm_gsi_qp_ready(struct ibcm_gsi *g, uint8_t port_num)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = port_num;
	a.pkey_index = 0;
	a.qkey = VERBS_GSI_QKEY;
	rc = drnic_modify_qp(g->qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_QKEY);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTR;
	rc = drnic_modify_qp(g->qp, &a, DRNIC_QP_STATE);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTS;
	a.sq_psn = 0;
	return drnic_modify_qp(g->qp, &a, DRNIC_QP_STATE | DRNIC_QP_SQ_PSN);
}

/* Create QP 1 on its engine's CQ; 0 or a negative errno. */
static int
ibcm_gsi_create_qp(struct ibcm_gsi *g)
{
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	struct drnic_device_attr da;
	int rc;

	rc = drnic_query_device(g->dev, &da);
	if (rc < 0)
		return rc;
	g->ch = drnic_create_comp_channel();
	if (g->ch == NULL)
		return -rte_errno;
	/* Every CQE is one of the posted WQEs: it never overflows. */
	ca.cqe = IBCM_GSI_NB_RECV + IBCM_GSI_NB_SEND;
	ca.channel = g->ch;
	ca.comp_vector = drnic_link_qpn_queue(VERBS_GSI_QPN, (uint16_t)da.nb_engines);
	ca.socket_id = SOCKET_ID_ANY;
	ca.cq_context = g;
	ca.async_queue = drnic_device_async_queue(g->dev);
	g->cq = drnic_cq_create(&ca);
	if (g->cq == NULL)
		return -rte_errno;
	qa.send_cq = g->cq;
	qa.recv_cq = g->cq;
	qa.qp_type = DRNIC_QPT_UD;
	qa.qp_context = g;
	qa.cap.max_send_wr = IBCM_GSI_NB_SEND;
	qa.cap.max_recv_wr = IBCM_GSI_NB_RECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	g->qp = verbs_create_gsi_qp(g->pd, &qa);
	return g->qp == NULL ? -rte_errno : 0;
}

/* The buffers: registered, receives posted. 0 or a negative errno. */
static int
ibcm_gsi_buffers(struct ibcm_gsi *g)
{
	struct drnic_qp_init_attr ia;
	struct drnic_qp_attr qa;
	size_t recv_bytes;
	unsigned int i;
	int rc;

	rc = drnic_query_qp(g->qp, &qa, 0, &ia);
	if (rc < 0)
		return rc;
	g->recv_len = IBCM_GSI_GRH + RTE_MAX(128u << qa.path_mtu, (unsigned int)DRNIC_MAD_LEN);
	recv_bytes = (size_t)IBCM_GSI_NB_RECV * g->recv_len;
	g->area = drnic_alloc(recv_bytes + (size_t)IBCM_GSI_NB_SEND * DRNIC_MAD_LEN, 0,
			      SOCKET_ID_ANY);
	if (g->area == NULL)
		return -rte_errno;
	g->send_area = g->area + recv_bytes;
	g->mr = drnic_reg_mr(g->pd, g->area, recv_bytes + (size_t)IBCM_GSI_NB_SEND * DRNIC_MAD_LEN,
			     DRNIC_ACCESS_LOCAL_WRITE);
	if (g->mr == NULL)
		return -rte_errno;
	for (i = 0; i < IBCM_GSI_NB_SEND; i++) {
		g->send_free[i] = (uint16_t)(IBCM_GSI_NB_SEND - 1 - i);
		g->send_ah[i] = -1;
	}
	g->nb_send_free = IBCM_GSI_NB_SEND;
	for (i = 0; i < IBCM_GSI_NB_RECV; i++) {
		rc = ibcm_gsi_post_recv(g, i);
		if (rc < 0)
			return rc;
	}
	return 0;
}

struct ibcm_gsi *
ibcm_gsi_open(struct drnic_device *dev, uint8_t port_num, ibcm_gsi_rx_fn rx, void *ctx)
{
	struct ibcm_gsi *g;
	int rc;

	if (dev == NULL || rx == NULL || port_num != 1) {
		rte_errno = EINVAL;
		return NULL;
	}
	g = rte_zmalloc("ibcm_gsi", sizeof(*g), 0);
	if (g == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	g->dev = dev;
	g->rx = rx;
	g->ctx = ctx;
	snprintf(g->name, sizeof(g->name), "%s", dev->cfg.name);
	g->pd = drnic_alloc_pd(dev);
	rc = g->pd == NULL ? -rte_errno : ibcm_gsi_create_qp(g);
	if (rc == 0)
		rc = ibcm_gsi_qp_ready(g, port_num);
	if (rc == 0)
		rc = ibcm_gsi_buffers(g);
	if (rc == 0)
		rc = drnic_cq_req_notify(g->cq, 0);
	if (rc < 0) {
		GSI_LOG(NOTICE, g, "cannot open QP 1: %s", strerror(-rc));
		ibcm_gsi_close(g);
		rte_errno = -rc == EBUSY ? EBUSY : (-rc == EINVAL ? EINVAL : ENOMEM);
		return NULL;
	}
	GSI_LOG(DEBUG, g, "QP 1 open, %u receive buffers of %u bytes", IBCM_GSI_NB_RECV,
		g->recv_len);
	return g;
}

void
ibcm_gsi_close(struct ibcm_gsi *g)
{
	unsigned int i;

	if (g == NULL)
		return;
	/* QP first: when it is gone no engine touches the buffers, and the
	 * sends it never completed give their AHs back. */
	if (g->qp != NULL && drnic_destroy_qp(g->qp) < 0)
		GSI_LOG(ERR, g, "destroy QP 1 failed");
	for (i = 0; i < IBCM_GSI_NB_AH; i++)
		if (g->ah[i].ah != NULL && drnic_destroy_ah(g->ah[i].ah) < 0)
			GSI_LOG(ERR, g, "destroy AH failed");
	if (g->mr != NULL)
		(void)drnic_dereg_mr(g->mr);
	drnic_free(g->area);
	if (g->cq != NULL && drnic_cq_destroy(g->cq) < 0)
		GSI_LOG(ERR, g, "destroy CQ failed");
	if (g->ch != NULL)
		(void)drnic_destroy_comp_channel(g->ch);
	if (g->pd != NULL && drnic_dealloc_pd(g->pd) < 0)
		GSI_LOG(ERR, g, "dealloc PD failed");
	rte_free(g);
}

int
ibcm_gsi_fd(const struct ibcm_gsi *g)
{
	return g != NULL ? drnic_comp_channel_fd(g->ch) : -EINVAL;
}

void
ibcm_gsi_stats_get(const struct ibcm_gsi *g, struct ibcm_gsi_stats *st)
{
	if (g != NULL && st != NULL)
		*st = g->st;
}

/* Index of our GID @p gid in the table; else the first of its family. */
static uint8_t
ibcm_gsi_sgid_index(struct ibcm_gsi *g, const union drnic_gid *gid, const union drnic_gid *dst)
{
	static const uint8_t v4_prefix[12] = { [10] = 0xFF, [11] = 0xFF };
	bool v4 = memcmp(dst->raw, v4_prefix, 12) == 0;
	union drnic_gid e;
	int i, family = -1;

	for (i = 0; i < DRNIC_GID_TABLE_LEN && drnic_query_gid(g->dev, 1, i, &e) == 0; i++) {
		if (memcmp(e.raw, gid->raw, 16) == 0)
			return (uint8_t)i;
		if (family < 0 && (memcmp(e.raw, v4_prefix, 12) == 0) == v4)
			family = i;
	}
	return family < 0 ? 0 : (uint8_t)family;
}

/* The cached AH to @p dst (created, perhaps in place of the least recently
 * used idle one). Its slot, or a negative errno. */
static int
ibcm_gsi_ah_get(struct ibcm_gsi *g, const struct ibcm_peer *dst)
{
	struct drnic_ah_attr aa;
	struct ibcm_gsi_ah *a;
	uint8_t sgid = ibcm_gsi_sgid_index(g, &dst->local_gid, &dst->gid);
	int i, victim = -1;

	for (i = 0; i < IBCM_GSI_NB_AH; i++) {
		a = &g->ah[i];
		if (a->ah != NULL && a->sgid_index == sgid &&
		    memcmp(a->gid.raw, dst->gid.raw, 16) == 0 && memcmp(a->mac, dst->mac, 6) == 0)
			return i;
	}
	/* A free slot (last_use 0), else the idle one least recently used. */
	for (i = 0; i < IBCM_GSI_NB_AH; i++) {
		a = &g->ah[i];
		if (a->sends == 0 && (victim < 0 || a->last_use < g->ah[victim].last_use))
			victim = i;
	}
	if (victim < 0)
		return -ENOBUFS;   /* every AH names a send in flight */
	a = &g->ah[victim];
	if (a->ah != NULL) {
		if (drnic_destroy_ah(a->ah) < 0)
			return -ENOBUFS;
		a->ah = NULL;
		a->last_use = 0;
	}
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = dst->gid;
	aa.grh.sgid_index = sgid;
	aa.grh.hop_limit = 64;
	memcpy(aa.dmac, dst->mac, 6);
	a->ah = drnic_create_ah(g->pd, &aa);
	if (a->ah == NULL)
		return -rte_errno;
	a->gid = dst->gid;
	memcpy(a->mac, dst->mac, 6);
	a->sgid_index = sgid;
	a->sends = 0;
	a->last_use = 0;
	return victim;
}

int
ibcm_gsi_send(struct ibcm_gsi *g, const struct ibcm_peer *dst, const uint8_t *mad, size_t len)
{
	struct drnic_sge sge;
	struct drnic_send_wr wr, *bad;
	unsigned int b;
	int slot, rc;

	if (g == NULL || dst == NULL || mad == NULL || len != DRNIC_MAD_LEN ||
	    dst->qpn > 0xFFFFFF)
		return -EINVAL;
	if (g->nb_send_free == 0) {
		g->st.tx_no_buf++;
		return -ENOBUFS;
	}
	slot = ibcm_gsi_ah_get(g, dst);
	if (slot < 0) {
		if (slot == -ENOBUFS)
			g->st.tx_no_buf++;
		else
			g->st.tx_errors++;
		return slot;
	}
	b = g->send_free[g->nb_send_free - 1];
	memcpy(ibcm_gsi_send_buf(g, b), mad, DRNIC_MAD_LEN);
	sge = (struct drnic_sge){ (uintptr_t)ibcm_gsi_send_buf(g, b), DRNIC_MAD_LEN,
				  drnic_mr_lkey(g->mr) };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = b;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DRNIC_WR_SEND;
	wr.send_flags = DRNIC_SEND_SIGNALED;
	wr.wr.ud.ah = g->ah[slot].ah;
	wr.wr.ud.remote_qpn = dst->qpn;
	wr.wr.ud.remote_qkey = VERBS_GSI_QKEY;
	rc = drnic_post_send(g->qp, &wr, &bad);
	if (rc < 0) {
		g->st.tx_errors++;
		return rc;
	}
	g->nb_send_free--;
	g->send_ah[b] = (int8_t)slot;
	g->ah[slot].sends++;
	g->ah[slot].last_use = ++g->clock;
	g->st.tx_mads++;
	return 0;
}

/* A send completed: its buffer is free, its AH one send less busy. */
static void
ibcm_gsi_send_done(struct ibcm_gsi *g, const struct drnic_wc *wc)
{
	uint64_t b = wc->wr_id;

	if (wc->status != DRNIC_WC_SUCCESS)
		g->st.tx_errors++;
	if (b >= IBCM_GSI_NB_SEND || g->send_ah[b] < 0)
		return;   /* not ours: cannot happen */
	g->ah[g->send_ah[b]].sends--;
	g->send_ah[b] = -1;
	g->send_free[g->nb_send_free++] = (uint16_t)b;
}

/* Where a datagram came from: the WC and its GRH area. 0 or -EINVAL. */
static int
ibcm_gsi_peer(struct ibcm_gsi *g, const struct drnic_wc *wc, const uint8_t *grh,
	      struct ibcm_peer *src)
{
	struct drnic_ah_attr aa;

	memset(src, 0, sizeof(*src));
	/* The source address becomes aa's destination, the address the
	 * datagram came to its source GID index (-ENOENT: not ours). */
	if (drnic_init_ah_from_wc(g->dev, 1, wc, grh, &aa) < 0 ||
	    drnic_query_gid(g->dev, 1, aa.grh.sgid_index, &src->local_gid) < 0)
		return -EINVAL;
	src->gid = aa.grh.dgid;
	src->qpn = wc->src_qp;
	src->pkey_index = wc->pkey_index;
	return 0;
}

/* Answer request @p mad (of @p hdr) in a send buffer to @p src. */
static void
ibcm_gsi_answer(struct ibcm_gsi *g, const uint8_t *mad, const struct drnic_mad_hdr *hdr,
		const struct ibcm_peer *src)
{
	uint8_t out[DRNIC_MAD_LEN];
	struct drnic_mad_hdr h = *hdr;

	if (hdr->mgmt_class == DRNIC_MAD_CLASS_CM) {
		struct drnic_mad_cm cpi;

		memset(&cpi, 0, sizeof(cpi));
		cpi.hdr = *hdr;
		cpi.hdr.r = 1;
		cpi.hdr.method = DRNIC_MAD_METHOD_GET;   /* with R: GetResp 0x81 */
		cpi.hdr.status = 0;
		cpi.hdr.class_version = DRNIC_MAD_CM_CLASS_VERSION;
		cpi.known = true;
		cpi.class_port_info.base_version = DRNIC_MAD_BASE_VERSION;
		cpi.class_port_info.class_version = DRNIC_MAD_CM_CLASS_VERSION;
		cpi.class_port_info.resp_time_value = IBCM_GSI_RESP_TIME;
		if (drnic_mad_cm_build(&cpi, out, sizeof(out)) < 0)
			return;
		if (ibcm_gsi_send(g, src, out, sizeof(out)) == 0)
			g->st.tx_class_port_info++;
		return;
	}
	/* Another class: the request back, as a GetResp saying "class not
	 * supported" (IBA 13.4.7; the data area as it came). */
	memcpy(out, mad, sizeof(out));
	h.r = 1;
	h.method = DRNIC_MAD_METHOD_GET;
	h.status = IBCM_GSI_STATUS_BAD_CLASS;
	if (drnic_mad_hdr_build(out, sizeof(out), &h) < 0)
		return;
	if (ibcm_gsi_send(g, src, out, sizeof(out)) == 0)
		g->st.tx_unsupported++;
}

/* One received datagram in buffer @p buf. Returns 1 for a MAD, else 0. */
static int
ibcm_gsi_recv(struct ibcm_gsi *g, const struct drnic_wc *wc, const uint8_t *buf)
{
	const uint8_t *mad = buf + IBCM_GSI_GRH;
	struct drnic_mad_hdr hdr;
	struct ibcm_peer src;

	if (wc->status != DRNIC_WC_SUCCESS)
		return 0;   /* flushed: the QP is in error (ibcm_gsi_process()) */
	/* byte_len is at most the buffer's length (the engine's check). */
	if (wc->byte_len != IBCM_GSI_GRH + DRNIC_MAD_LEN ||
	    drnic_mad_hdr_parse(mad, DRNIC_MAD_LEN, &hdr) < 0 ||
	    hdr.base_version != DRNIC_MAD_BASE_VERSION || ibcm_gsi_peer(g, wc, buf, &src) < 0) {
		g->st.rx_malformed++;
		return 0;
	}
	g->st.rx_mads++;
	if (hdr.mgmt_class == DRNIC_MAD_CLASS_CM) {
		if (!hdr.r && hdr.method == DRNIC_MAD_METHOD_GET &&
		    hdr.attr_id == DRNIC_MAD_CM_CLASS_PORT_INFO) {
			ibcm_gsi_answer(g, mad, &hdr, &src);
			return 1;
		}
		g->st.rx_cm++;
		g->rx(g->ctx, mad, DRNIC_MAD_LEN, &src);
		return 1;
	}
	g->st.rx_unknown_class++;
	/* Requests of a class nobody serves are answered (not the subnet
	 * manager's, which are QP 0's); responses, traps, sends dropped. */
	if (!hdr.r && (hdr.method == DRNIC_MAD_METHOD_GET || hdr.method == DRNIC_MAD_METHOD_SET) &&
	    hdr.mgmt_class != IBCM_GSI_CLASS_SM_LID && hdr.mgmt_class != IBCM_GSI_CLASS_SM_DR)
		ibcm_gsi_answer(g, mad, &hdr, &src);
	return 1;
}

/* Handle @p n completions; the MADs among them. */
static int
ibcm_gsi_completions(struct ibcm_gsi *g, const struct drnic_wc *wc, int n)
{
	int i, mads = 0;

	for (i = 0; i < n; i++) {
		uint64_t idx = wc[i].wr_id & ~IBCM_GSI_WR_RECV;

		if (!(wc[i].wr_id & IBCM_GSI_WR_RECV)) {
			ibcm_gsi_send_done(g, &wc[i]);
			continue;
		}
		if (idx >= IBCM_GSI_NB_RECV)
			continue;   /* not ours: cannot happen */
		mads += ibcm_gsi_recv(g, &wc[i], ibcm_gsi_recv_buf(g, (unsigned int)idx));
		if (wc[i].status == DRNIC_WC_SUCCESS && ibcm_gsi_post_recv(g, (unsigned int)idx) < 0)
			GSI_LOG(ERR, g, "repost of receive %u failed", (unsigned int)idx);
	}
	return mads;
}

int
ibcm_gsi_process(struct ibcm_gsi *g)
{
	struct drnic_wc wc[IBCM_GSI_BURST];
	struct drnic_cq *ev_cq;
	unsigned int events = 0;
	bool armed = false;
	int n, mads = 0;

	if (g == NULL)
		return -EINVAL;
	while (drnic_try_get_cq_event(g->ch, &ev_cq, NULL) == 0)
		events++;
	if (events != 0)
		drnic_ack_cq_events(g->cq, events);
	for (;;) {
		/* Inline mode: each poll runs the engine once first. */
		n = drnic_cq_poll(g->cq, IBCM_GSI_BURST, wc);
		if (n < 0)
			return n;
		if (n > 0) {
			mads += ibcm_gsi_completions(g, wc, n);
			armed = false;
			continue;
		}
		if (armed)
			break;
		/* Arm, then poll once more: a completion that came between
		 * the last poll and the arm fires no event. */
		n = drnic_cq_req_notify(g->cq, 0);
		if (n < 0)
			return n;
		armed = true;
	}
	if (drnic_qp_state(g->qp) == DRNIC_QPS_ERR) {
		GSI_LOG(ERR, g, "QP 1 is in error");
		return -EIO;
	}
	return mads;
}
