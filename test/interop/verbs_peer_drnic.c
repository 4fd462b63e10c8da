/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drnic side of the interop verbs case (verbs_peer.h), on drnic's own
 * API: one device on an ethdev link, inline progress, TCP listener for the
 * rxe side.
 *
 *   drnic-interop-verbs --port P --ip A --link LINK_ARGS --mtu N --mac M
 *                       [--prefix EAL_FILE_PREFIX] [--lcores L] [--rounds N]
 *
 * Each round is two phases: rxe requests (even phase), drnic requests (odd).
 * At the end it prints the link's fault counters per direction (fault_ keys
 * in LINK_ARGS, e.g. fault_dir=rx,fault_drop=0.1) and the QP's retransmits.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include <rte_errno.h>

#include "drnic_env.h"
#include "drnic_engine.h"
#include "drnic_link_fault.h"
#include "drnic_verbs.h"

#include "verbs_peer.h"

static struct drnic_device *dev;
static struct drnic_pd *pd;
static struct drnic_cq *cq;
static struct drnic_qp *qp;
static struct drnic_mr *mr;
static struct drnic_mw *mw;      /* the type 2 window (verbs_peer.h) */
static uint32_t mw_rkey;         /* its rkey: the last bound */
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

static void
idle(void *arg)
{
	(void)arg;
	drnic_device_progress(dev);
}

static int
poll_one(struct drnic_wc *wc, int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	int n;

	do {
		n = drnic_cq_poll(cq, 1, wc);
		if (n != 0)
			return n;
		drnic_device_progress(dev);
	} while (time(NULL) <= end);
	return 0;
}

static int
post_recv(unsigned int slot)
{
	struct drnic_sge sge = {
		.addr = (uintptr_t)buf + VP_RECV_OFF(slot), .length = 8192,
		.lkey = drnic_mr_lkey(mr),
	};
	struct drnic_recv_wr wr = { .wr_id = 100 + slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return drnic_post_recv(qp, &wr, &bad);
}

static int
connect_qp(const struct vp_info *r)
{
	struct drnic_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = DRNIC_MTU_1024;
	a.dest_qp_num = r->qpn;
	a.rq_psn = r->psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	rc = drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_AV | DRNIC_QP_PATH_MTU |
			     DRNIC_QP_DEST_QPN | DRNIC_QP_RQ_PSN | DRNIC_QP_MAX_DEST_RD_ATOMIC |
			     DRNIC_QP_MIN_RNR_TIMER);
	if (rc < 0)
		return rc;
	a.qp_state = DRNIC_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x654321;
	a.max_rd_atomic = 4;
	return drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_TIMEOUT | DRNIC_QP_RETRY_CNT |
			       DRNIC_QP_RNR_RETRY | DRNIC_QP_SQ_PSN | DRNIC_QP_MAX_QP_RD_ATOMIC);
}

/* A local WR on the QP (BIND_MW of the window with the next key byte, or
 * LOCAL_INV of its rkey) and its completion; false with @p why filled. */
static bool
mw_local(enum drnic_wr_opcode op, char *why, size_t len)
{
	struct drnic_send_wr wr = { .wr_id = VP_MW_WR_ID, .opcode = op,
				    .send_flags = DRNIC_SEND_SIGNALED }, *bad;
	enum drnic_wc_opcode want = op == DRNIC_WR_BIND_MW ? DRNIC_WC_BIND_MW : DRNIC_WC_LOCAL_INV;
	uint32_t k = op == DRNIC_WR_BIND_MW ? vp_inc_rkey(mw_rkey) : mw_rkey;
	struct drnic_wc wc;
	int rc;

	if (op == DRNIC_WR_BIND_MW) {
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = k;
		wr.bind_mw.bind_info = (struct drnic_mw_bind_info){
			mr, (uintptr_t)buf + VP_MW_OFF, VP_MW_LEN, DRNIC_ACCESS_REMOTE_WRITE };
	} else {
		wr.invalidate_rkey = k;
	}
	rc = drnic_post_send(qp, &wr, &bad);
	if (rc < 0 || poll_one(&wc, 30) != 1 || wc.status != DRNIC_WC_SUCCESS ||
	    wc.opcode != want || wc.wr_id != VP_MW_WR_ID) {
		snprintf(why, len, "%s of 0x%x: %s", op == DRNIC_WR_BIND_MW ? "BIND_MW" : "LOCAL_INV",
			 k, rc < 0 ? strerror(-rc) : drnic_wc_status_str(wc.status));
		return false;
	}
	mw_rkey = k;
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
	if (!mw_local(DRNIC_WR_BIND_MW, why, sizeof(why)))
		report(ph, "drnic rsp", "BIND_MW", false, "%s", why);
	vp_send_line(fd, "GO %d %x", ph, mw_rkey);
}

/* Responder: even phases (rxe requests). */
static bool
respond(int fd, int ph)
{
	respond_prepare(fd, ph);
	for (unsigned int k = 0; k < VP_NB_STEPS; k++) {
		const struct vp_step *s = &vp_steps[k];
		char line[256], why[200] = "";
		unsigned int got;
		bool okay = true;

		if (vp_recv_line(fd, line, sizeof(line), 60000, idle, NULL) < 0 ||
		    sscanf(line, "STEP %u", &got) != 1 || got != k) {
			report(ph, "drnic rsp", s->name, false, "no STEP %u over TCP", k);
			return false;
		}
		if (vp_recv_slot(s->op) >= 0) {
			struct drnic_wc wc;
			bool imm = s->op == VP_SEND_IMM || s->op == VP_WRITE_IMM;
			bool inv = s->op == VP_SEND_INV;
			unsigned int slot = (unsigned int)vp_recv_slot(s->op);
			enum drnic_wc_opcode want = s->op == VP_WRITE_IMM ? DRNIC_WC_RECV_RDMA_WITH_IMM
									  : DRNIC_WC_RECV;
			const uint8_t *data = buf + (s->op == VP_WRITE_IMM ? s->roff : VP_RECV_OFF(slot));
			long b;

			if (poll_one(&wc, 30) != 1) {
				okay = false;
				snprintf(why, sizeof(why), "no receive completion");
			} else if (wc.status != DRNIC_WC_SUCCESS || wc.opcode != want ||
				   wc.wr_id != 100 + slot || wc.byte_len != s->len ||
				   wc.qp_num != drnic_qp_num(qp) ||
				   !!(wc.wc_flags & DRNIC_WC_WITH_IMM) != imm ||
				   (imm && ntohl(wc.imm_data) != VP_IMM(ph, k)) ||
				   !!(wc.wc_flags & DRNIC_WC_WITH_INV) != inv ||
				   (inv && wc.invalidated_rkey != mw_rkey)) {
				okay = false;
				snprintf(why, sizeof(why),
					 "wc status %s opcode 0x%x wr_id %llu byte_len %u flags 0x%x imm 0x%08x",
					 drnic_wc_status_str(wc.status), wc.opcode,
					 (unsigned long long)wc.wr_id, wc.byte_len, wc.wc_flags,
					 ntohl(wc.imm_data));
			} else if ((b = vp_verify(data, s->len, ph, k)) >= 0) {
				okay = false;
				snprintf(why, sizeof(why), "byte %ld of %u wrong", b, s->len);
			} else if (inv && !mw_local(DRNIC_WR_BIND_MW, why, sizeof(why))) {
				okay = false;   /* still bound: not invalidated */
			} else if (inv && !mw_local(DRNIC_WR_LOCAL_INV, why, sizeof(why))) {
				okay = false;
			} else {
				snprintf(why, sizeof(why), "opcode %s byte_len %u%s",
					 want == DRNIC_WC_RECV ? "RECV" : "RECV_RDMA_WITH_IMM",
					 wc.byte_len, imm ? " imm ok" :
					 inv ? " WITH_INV ok; window bound again, LOCAL_INV ok" : "");
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
		report(ph, "drnic rsp", s->name, okay, "%s", why);
		vp_send_line(fd, "%s %u %s", okay ? "OK" : "BAD", k, why);
	}
	return true;
}

/* Requester: odd phases (drnic requests, rxe responds). */
static bool
request(int fd, const struct vp_info *r, int ph)
{
	static const enum drnic_wr_opcode wro[] = {
		DRNIC_WR_SEND, DRNIC_WR_SEND_WITH_IMM, DRNIC_WR_RDMA_WRITE,
		DRNIC_WR_RDMA_WRITE_WITH_IMM, DRNIC_WR_RDMA_READ, DRNIC_WR_ATOMIC_CMP_AND_SWP,
		DRNIC_WR_ATOMIC_FETCH_AND_ADD, DRNIC_WR_RDMA_WRITE, DRNIC_WR_SEND_WITH_INV,
	};
	static const enum drnic_wc_opcode wco[] = {
		DRNIC_WC_SEND, DRNIC_WC_SEND, DRNIC_WC_RDMA_WRITE, DRNIC_WC_RDMA_WRITE,
		DRNIC_WC_RDMA_READ, DRNIC_WC_COMP_SWAP, DRNIC_WC_FETCH_ADD, DRNIC_WC_RDMA_WRITE,
		DRNIC_WC_SEND,
	};
	char go[64];
	unsigned int gph, peer_mw;

	if (vp_recv_line(fd, go, sizeof(go), 60000, idle, NULL) < 0 ||
	    sscanf(go, "GO %u %x", &gph, &peer_mw) != 2 || gph != (unsigned int)ph) {
		report(ph, "drnic req", "-", false, "no GO %d over TCP", ph);
		return false;
	}
	for (unsigned int k = 0; k < VP_NB_STEPS; k++) {
		const struct vp_step *s = &vp_steps[k];
		bool atomic = s->op == VP_CMP_SWAP || s->op == VP_FETCH_ADD;
		uint8_t *loc = buf + (atomic ? VP_ATOMIC_RES_OFF : VP_SRC_OFF);
		struct drnic_sge sge = {
			.addr = (uintptr_t)loc, .length = s->len, .lkey = drnic_mr_lkey(mr),
		};
		struct drnic_send_wr wr, *bad;
		struct drnic_wc wc;
		char line[256], why[200] = "";
		bool okay = true;
		int rc;

		memset(&wr, 0, sizeof(wr));
		if (s->op == VP_READ)
			memset(loc, 0, s->len);
		else if (atomic)
			memset(loc, 0xee, 8);
		else
			vp_fill(loc, s->len, ph, k);
		wr.wr_id = 2000 + k;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = wro[s->op];
		wr.send_flags = DRNIC_SEND_SIGNALED;
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
		rc = drnic_post_send(qp, &wr, &bad);
		if (rc < 0) {
			okay = false;
			snprintf(why, sizeof(why), "drnic_post_send: %s", strerror(-rc));
		} else if (poll_one(&wc, 30) != 1) {
			okay = false;
			snprintf(why, sizeof(why), "no completion in 30 s");
		} else if (wc.status != DRNIC_WC_SUCCESS || wc.opcode != wco[s->op] ||
			   wc.wr_id != 2000 + k || wc.qp_num != drnic_qp_num(qp)) {
			okay = false;
			snprintf(why, sizeof(why), "wc status %s opcode %d wr_id %llu qp 0x%x",
				 drnic_wc_status_str(wc.status), wc.opcode,
				 (unsigned long long)wc.wr_id, wc.qp_num);
		} else if (s->op == VP_READ) {
			long b = vp_verify(loc, s->len, ph, k);

			okay = b < 0;
			snprintf(why, sizeof(why), okay ? "%ld bytes read, byte_len %u" :
				 "byte %ld wrong (byte_len %u)", okay ? (long)s->len : b, wc.byte_len);
		} else if (atomic) {
			uint64_t v, want = s->op == VP_CMP_SWAP ? VP_ATOMIC_A(ph) : VP_ATOMIC_B(ph);

			memcpy(&v, loc, 8);
			okay = v == want;
			snprintf(why, sizeof(why), "original 0x%016llx (want 0x%016llx)",
				 (unsigned long long)v, (unsigned long long)want);
		} else {
			snprintf(why, sizeof(why), "wc %s", drnic_wc_status_str(wc.status));
		}
		report(ph, "drnic req", s->name, okay, "%s", why);
		vp_send_line(fd, "STEP %u", k);
		if (vp_recv_line(fd, line, sizeof(line), 60000, idle, NULL) < 0) {
			report(ph, "rxe rsp", s->name, false, "no answer over TCP");
			return false;
		}
		report(ph, "rxe rsp", s->name, strncmp(line, "OK", 2) == 0, "%s", line);
		vp_send_line(fd, "%s %u %s", okay ? "OK" : "BAD", k, why);
		if (!okay)
			return false;
	}
	return true;
}

static int
tcp_accept(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, l, fd;
	time_t end = time(NULL) + 120;

	l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0)
		return -1;
	for (;;) {
		struct pollfd p = { .fd = l, .events = POLLIN };

		if (poll(&p, 1, 0) == 1)
			break;
		drnic_device_progress(dev);   /* answer ARP meanwhile */
		usleep(100);
		if (time(NULL) > end)
			return -1;
	}
	fd = accept(l, NULL, NULL);
	close(l);
	return fd;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "port", 1, NULL, 'p' }, { "ip", 1, NULL, 'i' }, { "link", 1, NULL, 'k' },
		{ "mtu", 1, NULL, 'm' }, { "mac", 1, NULL, 'a' }, { "prefix", 1, NULL, 'P' },
		{ "lcores", 1, NULL, 'L' }, { "rounds", 1, NULL, 'r' }, { NULL, 0, NULL, 0 },
	};
	struct drnic_env_opts eo = { .name = "drnic-interop-verbs", .lcores = "1" };
	const char *ip = NULL, *link = NULL, *mtu = "1500", *mac = NULL;
	struct drnic_config cfg;
	struct drnic_cq_attr ca = { 0 };
	struct drnic_qp_init_attr qa = { 0 };
	struct drnic_qp_attr a;
	struct vp_info me = { 0 }, peer;
	union drnic_gid gid;
	int port = 18600, rounds = 1, c, fd;
	char line[64], gs[64];

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'p': port = atoi(optarg); break;
		case 'i': ip = optarg; break;
		case 'k': link = optarg; break;
		case 'm': mtu = optarg; break;
		case 'a': mac = optarg; break;
		case 'P': eo.file_prefix = optarg; break;
		case 'L': eo.lcores = optarg; break;
		case 'r': rounds = atoi(optarg); break;
		default: return 2;
		}
	}
	if (ip == NULL || link == NULL) {
		fprintf(stderr, "usage: %s --ip A --link ARGS [--port P --mtu N --mac M --prefix P]\n",
			argv[0]);
		return 2;
	}
	if (drnic_env_init(&eo, NULL) < 0) {
		fprintf(stderr, "EAL start failed\n");
		return 1;
	}
	drnic_config_init(&cfg);
	if (drnic_config_set(&cfg, "progress", "inline") < 0 ||
	    drnic_config_set(&cfg, "engines", "1") < 0 ||
	    drnic_config_set(&cfg, "link", "ethdev") < 0 ||
	    drnic_config_set(&cfg, "link_args", link) < 0 ||
	    drnic_config_set(&cfg, "ipv4", ip) < 0 || drnic_config_set(&cfg, "mtu", mtu) < 0 ||
	    (mac != NULL && drnic_config_set(&cfg, "mac", mac) < 0)) {
		fprintf(stderr, "bad configuration\n");
		return 1;
	}
	dev = drnic_device_open(&cfg);
	if (dev == NULL) {
		fprintf(stderr, "device open: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	pd = drnic_alloc_pd(dev);
	buf = drnic_alloc(VP_BUF_LEN, 4096, -1);
	if (pd == NULL || buf == NULL)
		return 1;
	mr = drnic_reg_mr(pd, buf, VP_BUF_LEN, DRNIC_ACCESS_LOCAL_WRITE |
			  DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
			  DRNIC_ACCESS_REMOTE_ATOMIC | DRNIC_ACCESS_MW_BIND);
	mw = drnic_alloc_mw(pd, DRNIC_MW_TYPE_2);
	if (mw == NULL) {
		fprintf(stderr, "alloc_mw: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mw_rkey = drnic_mw_rkey(mw);
	ca.cqe = 16;
	ca.socket_id = -1;
	ca.async_queue = drnic_device_async_queue(dev);
	cq = drnic_cq_create(&ca);
	if (mr == NULL || cq == NULL) {
		fprintf(stderr, "mr/cq: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = DRNIC_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = drnic_create_qp(pd, &qa);
	if (qp == NULL) {
		fprintf(stderr, "create_qp: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ |
			    DRNIC_ACCESS_REMOTE_ATOMIC;
	if (drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			    DRNIC_QP_ACCESS_FLAGS) < 0)
		return 1;
	if (drnic_query_gid(dev, 1, 0, &gid) < 0)
		return 1;
	me.qpn = drnic_qp_num(qp);
	me.psn = 0x654321;
	me.rkey = drnic_mr_rkey(mr);
	me.addr = (uintptr_t)buf;
	memcpy(me.gid, gid.raw, 16);
	fd = tcp_accept(port);
	if (fd < 0 || vp_read_full(fd, &peer, sizeof(peer)) < 0 ||
	    write(fd, &me, sizeof(me)) != sizeof(me)) {
		fprintf(stderr, "TCP exchange failed\n");
		return 1;
	}
	inet_ntop(AF_INET6, peer.gid, gs, sizeof(gs));
	printf("drnic QPN 0x%06x <-> rxe QPN 0x%06x GID %s rkey 0x%x\n", me.qpn, peer.qpn, gs,
	       peer.rkey);
	if (connect_qp(&peer) < 0) {
		fprintf(stderr, "RTR/RTS failed\n");
		return 1;
	}
	vp_send_line(fd, "READY");
	if (vp_recv_line(fd, line, sizeof(line), 60000, idle, NULL) < 0) {
		fprintf(stderr, "peer not ready\n");
		return 1;
	}
	for (int r = 0; r < rounds; r++)
		if (!respond(fd, 2 * r) || !request(fd, &peer, 2 * r + 1))
			break;
	printf("drnic side: %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	/* let the last ACKs go out before the link closes */
	for (int i = 0; i < 2000; i++) {
		drnic_device_progress(dev);
		usleep(100);
	}
	{
		struct drnic_link_fault_stats ft, fr;
		struct drnic_qp_stats qs = { 0 };

		drnic_link_fault_stats_dir(drnic_device_link(dev), DRNIC_LINK_FAULT_DIR_TX, &ft);
		drnic_link_fault_stats_dir(drnic_device_link(dev), DRNIC_LINK_FAULT_DIR_RX, &fr);
		drnic_qp_stats_get(qp, &qs);
		printf("drnic faults: tx dropped %" PRIu64 ", rx dropped %" PRIu64
		       " refused %" PRIu64 "; qp retransmits %" PRIu64 " timeouts %" PRIu64 "\n",
		       ft.dropped, fr.dropped, fr.refused, qs.retransmits, qs.timeouts);
	}
	close(fd);
	drnic_destroy_qp(qp);
	drnic_dealloc_mw(mw);
	drnic_dereg_mr(mr);
	drnic_cq_destroy(cq);
	drnic_dealloc_pd(pd);
	drnic_free(buf);
	drnic_device_close(dev);
	drnic_env_fini();
	return failures ? 1 : 0;
}
