/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rxe side of the interop verbs case (verbs_peer.h), on libibverbs. Built
 * on the host against Debian's libibverbs (the VM runs the same rdma-core)
 * and copied into the VM.
 *
 *   verbs_peer_rxe [-d DEV] [-g GIDX] [-p PORT] [-r ROUNDS] HOST
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "verbs_peer.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static struct ibv_mw *mw;        /* the type 2 window (verbs_peer.h) */

/*
 * rxe (Linux 6.1, rdma-core 44) writes the kernel's ib_wc_flags into a user
 * CQ: a receive that invalidated a key says IB_WC_WITH_INVALIDATE, 1 << 2,
 * which libibverbs names IBV_WC_IP_CSUM_OK, not IBV_WC_WITH_INV (1 << 3).
 * Either is taken as "with invalidate" here (nothing else sets bit 2 on
 * rxe); the line says which one came.
 */
#define RXE_WC_WITH_INV_KERNEL (1u << 2)

static bool
wc_with_inv(const struct ibv_wc *wc)
{
	return (wc->wc_flags & (IBV_WC_WITH_INV | RXE_WC_WITH_INV_KERNEL)) != 0;
}
static uint8_t *buf;
static int failures;

static void
report(int phase, const char *side, const char *step, bool okay, const char *fmt, ...)
{
	char why[200] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	printf("phase %d %-9s %-22s %s%s%s\n", phase, side, step, okay ? "ok" : "FAIL",
	       why[0] ? ": " : "", why);
	fflush(stdout);
	if (!okay)
		failures++;
}

static int
poll_one(struct ibv_wc *wc, int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
	} while (time(NULL) <= end);
	return 0;
}

static int
post_recv(unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + VP_RECV_OFF(slot), .length = 8192, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 100 + slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int
connect_qp(const struct vp_info *r, int gidx)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = r->qpn;
	a.rq_psn = r->psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x123456;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Requester: phase 0. */
static bool
request(int fd, const struct vp_info *r, int ph)
{
	static const enum ibv_wr_opcode wro[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_RDMA_WRITE, IBV_WR_SEND_WITH_INV,
	};
	static const enum ibv_wc_opcode wco[] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
		IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD, IBV_WC_RDMA_WRITE, IBV_WC_SEND,
	};
	char go[64];
	unsigned int gph, peer_mw;

	if (vp_recv_line(fd, go, sizeof(go), 60000, NULL, NULL) < 0 ||
	    sscanf(go, "GO %u %x", &gph, &peer_mw) != 2 || gph != (unsigned int)ph) {
		report(ph, "rxe req", "-", false, "no GO %d over TCP", ph);
		return false;
	}
	for (unsigned int k = 0; k < VP_NB_STEPS; k++) {
		const struct vp_step *s = &vp_steps[k];
		bool atomic = s->op == VP_CMP_SWAP || s->op == VP_FETCH_ADD;
		uint8_t *loc = buf + (atomic ? VP_ATOMIC_RES_OFF : VP_SRC_OFF);
		struct ibv_sge sge = { .addr = (uintptr_t)loc, .length = s->len, .lkey = mr->lkey };
		struct ibv_send_wr wr = { 0 }, *bad;
		struct ibv_wc wc;
		char line[256];

		if (s->op == VP_READ)
			memset(loc, 0, s->len);
		else if (atomic)
			memset(loc, 0xee, 8);
		else
			vp_fill(loc, s->len, ph, k);
		wr.wr_id = 1000 + k;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = wro[s->op];
		wr.send_flags = IBV_SEND_SIGNALED;
		if (s->op == VP_SEND_IMM || s->op == VP_WRITE_IMM)
			wr.imm_data = htonl(VP_IMM(ph, k));
		if (s->op == VP_SEND_INV)
			wr.invalidate_rkey = peer_mw;
		if (atomic) {
			wr.wr.atomic.remote_addr = r->addr + s->roff;
			wr.wr.atomic.rkey = r->rkey;
			wr.wr.atomic.compare_add = s->op == VP_CMP_SWAP ? VP_ATOMIC_A(ph) : VP_ATOMIC_C;
			wr.wr.atomic.swap = VP_ATOMIC_B(ph);
		} else {
			wr.wr.rdma.remote_addr = r->addr + s->roff;
			wr.wr.rdma.rkey = s->op == VP_MW_WRITE ? peer_mw : r->rkey;
		}
		if (ibv_post_send(qp, &wr, &bad)) {
			report(ph, "rxe req", s->name, false, "ibv_post_send failed");
			return false;
		}
		if (poll_one(&wc, 30) != 1) {
			report(ph, "rxe req", s->name, false, "no completion in 30 s");
			return false;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != wco[s->op] || wc.wr_id != 1000 + k ||
		    wc.qp_num != qp->qp_num) {
			report(ph, "rxe req", s->name, false, "wc status %s opcode %d wr_id %llu qp 0x%x",
			       ibv_wc_status_str(wc.status), wc.opcode,
			       (unsigned long long)wc.wr_id, wc.qp_num);
			return false;
		}
		if (s->op == VP_READ) {
			long b = vp_verify(loc, s->len, ph, k);   /* the responder fills it */

			report(ph, "rxe req", s->name, b < 0, b < 0 ? "%ld bytes read, byte_len %u" :
			       "byte %ld wrong (byte_len %u)", b < 0 ? (long)s->len : b, wc.byte_len);
		} else if (atomic) {
			uint64_t v, want = s->op == VP_CMP_SWAP ? VP_ATOMIC_A(ph) : VP_ATOMIC_B(ph);

			memcpy(&v, loc, 8);
			report(ph, "rxe req", s->name, v == want, "original 0x%016llx (want 0x%016llx)",
			       (unsigned long long)v, (unsigned long long)want);
		} else {
			report(ph, "rxe req", s->name, true, "wc %s", ibv_wc_status_str(wc.status));
		}
		vp_send_line(fd, "STEP %u", k);
		if (vp_recv_line(fd, line, sizeof(line), 60000, NULL, NULL) < 0) {
			report(ph, "drnic rsp", s->name, false, "no answer over TCP");
			return false;
		}
		report(ph, "drnic rsp", s->name, strncmp(line, "OK", 2) == 0, "%s", line);
	}
	return true;
}

/*
 * A local WR on the QP (BIND_MW of the window with the next key byte, or
 * LOCAL_INV of its rkey) and its completion; false with @p why filled. As
 * rxe's provider does for ibv_bind_mw(), the window's rkey is updated after
 * a type 2 bind: rxe names the window of a later bind by it.
 */
static bool
mw_local(enum ibv_wr_opcode op, char *why, size_t len)
{
	struct ibv_send_wr wr = { .wr_id = VP_MW_WR_ID, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum ibv_wc_opcode want = op == IBV_WR_BIND_MW ? IBV_WC_BIND_MW : IBV_WC_LOCAL_INV;
	uint32_t k = op == IBV_WR_BIND_MW ? vp_inc_rkey(mw->rkey) : mw->rkey;
	struct ibv_wc wc;

	if (op == IBV_WR_BIND_MW) {
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = k;
		wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
			mr, (uintptr_t)buf + VP_MW_OFF, VP_MW_LEN, IBV_ACCESS_REMOTE_WRITE };
	} else {
		wr.invalidate_rkey = k;
	}
	if (ibv_post_send(qp, &wr, &bad) != 0 || poll_one(&wc, 30) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.opcode != want || wc.wr_id != VP_MW_WR_ID) {
		snprintf(why, len, "%s of 0x%x: %s", op == IBV_WR_BIND_MW ? "BIND_MW" : "LOCAL_INV",
			 k, ibv_wc_status_str(wc.status));
		return false;
	}
	mw->rkey = k;
	return true;
}

/* The responder's memory at the start of phase @p ph, its receives posted,
 * its window bound. */
static void
respond_prepare(int fd, int ph)
{
	uint64_t v = VP_ATOMIC_A(ph);
	char why[200];

	memset(buf, 0, VP_BUF_LEN);
	vp_fill(buf + vp_steps[4].roff, vp_steps[4].len, ph, 4);   /* READ source */
	memcpy(buf + vp_steps[5].roff, &v, 8);
	for (unsigned int i = 0; i < VP_RECV_SLOTS; i++)
		post_recv(i);
	if (!mw_local(IBV_WR_BIND_MW, why, sizeof(why)))
		report(ph, "rxe rsp", "BIND_MW", false, "%s", why);
	vp_send_line(fd, "GO %d %x", ph, mw->rkey);
}

/* Responder: phase 1. */
static bool
respond(int fd, int ph)
{
	respond_prepare(fd, ph);
	for (unsigned int k = 0; k < VP_NB_STEPS; k++) {
		const struct vp_step *s = &vp_steps[k];
		char line[256], why[200] = "";
		unsigned int got;
		bool okay = true;

		if (vp_recv_line(fd, line, sizeof(line), 60000, NULL, NULL) < 0 ||
		    sscanf(line, "STEP %u", &got) != 1 || got != k) {
			report(ph, "rxe rsp", s->name, false, "no STEP %u over TCP", k);
			return false;
		}
		if (vp_recv_slot(s->op) >= 0) {
			struct ibv_wc wc;
			bool imm = s->op == VP_SEND_IMM || s->op == VP_WRITE_IMM;
			bool inv = s->op == VP_SEND_INV;
			unsigned int slot = (unsigned int)vp_recv_slot(s->op);
			enum ibv_wc_opcode want = s->op == VP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM
									: IBV_WC_RECV;
			const uint8_t *data = buf + (s->op == VP_WRITE_IMM ? s->roff : VP_RECV_OFF(slot));
			long b;

			if (poll_one(&wc, 30) != 1) {
				okay = false;
				snprintf(why, sizeof(why), "no receive completion");
			} else if (wc.status != IBV_WC_SUCCESS || wc.opcode != want ||
				   wc.wr_id != 100 + slot || wc.byte_len != s->len ||
				   wc.qp_num != qp->qp_num ||
				   !!(wc.wc_flags & IBV_WC_WITH_IMM) != imm ||
				   (imm && ntohl(wc.imm_data) != VP_IMM(ph, k)) ||
				   wc_with_inv(&wc) != inv ||
				   (inv && wc.invalidated_rkey != mw->rkey)) {
				okay = false;
				snprintf(why, sizeof(why),
					 "wc status %s opcode 0x%x wr_id %llu byte_len %u flags 0x%x imm 0x%08x"
					 " (window rkey 0x%08x)", ibv_wc_status_str(wc.status), wc.opcode,
					 (unsigned long long)wc.wr_id, wc.byte_len, wc.wc_flags,
					 ntohl(wc.imm_data), mw->rkey);
			} else if ((b = vp_verify(data, s->len, ph, k)) >= 0) {
				okay = false;
				snprintf(why, sizeof(why), "byte %ld of %u wrong", b, s->len);
			} else if (inv && !mw_local(IBV_WR_BIND_MW, why, sizeof(why))) {
				okay = false;   /* still bound: not invalidated */
			} else if (inv && !mw_local(IBV_WR_LOCAL_INV, why, sizeof(why))) {
				okay = false;
			} else {
				snprintf(why, sizeof(why), "opcode %s byte_len %u%s",
					 want == IBV_WC_RECV ? "RECV" : "RECV_RDMA_WITH_IMM",
					 wc.byte_len, imm ? " imm ok" : !inv ? "" :
					 (wc.wc_flags & IBV_WC_WITH_INV) ?
					 " WITH_INV ok; window bound again, LOCAL_INV ok" :
					 " with invalidate (rxe's kernel flag 1<<2); window bound"
					 " again, LOCAL_INV ok");
			}
		} else if (s->op == VP_WRITE || s->op == VP_MW_WRITE) {
			long b = vp_verify(buf + s->roff, s->len, ph, k);

			okay = b < 0;
			snprintf(why, sizeof(why), okay ? "%ld bytes in memory" : "byte %ld wrong",
				 okay ? (long)s->len : b);
		} else if (s->op == VP_CMP_SWAP || s->op == VP_FETCH_ADD) {
			uint64_t v, want = s->op == VP_CMP_SWAP ? VP_ATOMIC_B(ph)
								: VP_ATOMIC_B(ph) + VP_ATOMIC_C;

			memcpy(&v, buf + s->roff, 8);
			okay = v == want;
			snprintf(why, sizeof(why), "memory 0x%016llx (want 0x%016llx)",
				 (unsigned long long)v, (unsigned long long)want);
		} else {
			snprintf(why, sizeof(why), "served");
		}
		report(ph, "rxe rsp", s->name, okay, "%s", why);
		vp_send_line(fd, "%s %u %s", okay ? "OK" : "BAD", k, why);
		if (vp_recv_line(fd, line, sizeof(line), 60000, NULL, NULL) < 0) {
			report(ph, "drnic req", s->name, false, "no result over TCP");
			return false;
		}
		report(ph, "drnic req", s->name, strncmp(line, "OK", 2) == 0, "%s", line);
	}
	return true;
}

int
main(int argc, char **argv)
{
	const char *devname = "rxe0", *port = "18600";
	struct ibv_device **list;
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct vp_info me = { 0 }, peer;
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	int gidx = 1, rounds = 1, c, fd, i;
	char gs[64];

	while ((c = getopt(argc, argv, "d:g:p:r:")) != -1) {
		if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'd')
			devname = optarg;
		else if (c == 'g')
			gidx = atoi(optarg);
		else if (c == 'p')
			port = optarg;
		else
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: %s [-d dev] [-g gidx] [-p port] [-r rounds] host\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(NULL);
	for (i = 0; list != NULL && list[i] != NULL; i++)
		if (strcmp(ibv_get_device_name(list[i]), devname) == 0)
			break;
	if (list == NULL || list[i] == NULL || (ctx = ibv_open_device(list[i])) == NULL) {
		fprintf(stderr, "no device %s\n", devname);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, VP_BUF_LEN);
	mr = ibv_reg_mr(pd, buf, VP_BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	mw = pd != NULL ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
	if (pd == NULL || mr == NULL || cq == NULL || mw == NULL) {
		fprintf(stderr, "pd/mr/cq/mw failed\n");
		return 1;
	}
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &qa);
	if (qp == NULL) {
		fprintf(stderr, "create_qp failed\n");
		return 1;
	}
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS)) {
		fprintf(stderr, "INIT failed\n");
		return 1;
	}
	me.qpn = qp->qp_num;
	me.psn = 0x123456;
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)buf;
	if (ibv_query_gid(ctx, 1, gidx, (union ibv_gid *)me.gid)) {
		fprintf(stderr, "no GID %d\n", gidx);
		return 1;
	}
	if (getaddrinfo(argv[optind], port, &hints, &ai) != 0) {
		fprintf(stderr, "bad host\n");
		return 1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	for (i = 0; i < 100 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0; i++)
		usleep(100000);
	if (write(fd, &me, sizeof(me)) != sizeof(me) || vp_read_full(fd, &peer, sizeof(peer)) < 0) {
		fprintf(stderr, "TCP exchange failed\n");
		return 1;
	}
	inet_ntop(AF_INET6, peer.gid, gs, sizeof(gs));
	printf("rxe QPN 0x%06x <-> drnic QPN 0x%06x GID %s rkey 0x%x\n", me.qpn, peer.qpn, gs,
	       peer.rkey);
	if (connect_qp(&peer, gidx)) {
		fprintf(stderr, "RTR/RTS failed\n");
		return 1;
	}
	vp_send_line(fd, "READY");
	{
		char line[64];

		if (vp_recv_line(fd, line, sizeof(line), 60000, NULL, NULL) < 0) {
			fprintf(stderr, "peer not ready\n");
			return 1;
		}
	}
	for (int r = 0; r < rounds; r++)
		if (!request(fd, &peer, 2 * r) || !respond(fd, 2 * r + 1))
			break;
	printf("rxe side: %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	close(fd);
	ibv_destroy_qp(qp);
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
