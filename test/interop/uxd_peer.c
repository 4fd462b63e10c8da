/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interop suite's UD and UC case: one libibverbs program for both sides,
 * run on the host through drnic's drop-in libibverbs.so.1 and in the VM on
 * rxe. The side without HOST listens; the two exchange their QP number, PSN,
 * rkey, buffer address and GID over TCP, then each direction in turn (the
 * server sends first): the receiver posts N receives and says "GO", the
 * sender sends N messages and checks every send completion, says "SENT",
 * and the receiver takes what arrives (until N, or one quiet second after
 * SENT) and checks each one:
 *
 *  -m ud  N datagrams of 1..1001 bytes, SEND_WITH_IMM through an address
 *         handle: WC opcode, byte_len (GRH area + payload), src_qp, GRH and
 *         immediate flags, the immediate; the GRH area: 20 zero bytes, then
 *         the IPv4 header (version, protocol UDP, the sender's and the
 *         receiver's addresses); the payload bytes.
 *  -m uc  N messages of 3 packets at path MTU 1024, SEND_WITH_IMM and
 *         RDMA_WRITE_WITH_IMM in turn: WC opcode, byte_len, immediate; the
 *         bytes in the receive buffer or the WRITE's target.
 *
 * -x K: in the direction this side receives, exactly K messages must be
 * missing (the others exact): the drnic side's fault injector losing one
 * packet (fault_drop_nth) must lose exactly the one message it belongs to.
 *
 *   uxd_peer -m ud|uc [-d DEV] [-g GIDX] [-p PORT] [-n N] [-x K] [HOST]
 *
 * Exit 0 when every check passed; prints one line per direction.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs_peer.h"   /* struct vp_info, the TCP line helpers */

#define UXD_BUF (1u << 20)
#define UXD_SLOT 8192u
#define UXD_MAX 32
#define UXD_GRH 40
#define UXD_QKEY 0x11223344u
#define UXD_WRITE_OFF (512u << 10)   /* UC WRITE targets: slot k from here */


static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static struct ibv_ah *ah;
static uint8_t *buf;
static bool ud;
static int nmsg = 16, gidx = 1, expect_missing;
static struct vp_info me, peer;

static uint32_t
uxd_len(int k)
{
	return ud ? 1 + (uint32_t)(k * 211) % 1001 : 2100 + 60 * (uint32_t)k;
}

static uint8_t
uxd_byte(int dir, int k, uint32_t j)
{
	return (uint8_t)(j * 31 + (uint32_t)k * 7 + (uint32_t)dir * 101 + 0x5a);
}

/* ---- verbs -------------------------------------------------------------- */

static int
post_recv(int k)
{
	struct ibv_sge sge = { (uintptr_t)buf + (uint64_t)k * UXD_SLOT, UXD_SLOT, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)k, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int
qp_ready(void)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (ud) {
		a.qkey = UXD_QKEY;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
			return -1;
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
			return -1;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
			return -1;
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = peer.qpn;
		a.rq_psn = peer.psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.sgid_index = (uint8_t)gidx;
		a.ah_attr.grh.hop_limit = 64;
		memcpy(a.ah_attr.grh.dgid.raw, peer.gid, 16);
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
			return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me.psn;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -1;
	if (ud) {
		struct ibv_ah_attr aa;

		memset(&aa, 0, sizeof(aa));
		aa.is_global = 1;
		aa.port_num = 1;
		aa.grh.sgid_index = (uint8_t)gidx;
		aa.grh.hop_limit = 64;
		memcpy(aa.grh.dgid.raw, peer.gid, 16);
		ah = ibv_create_ah(pd, &aa);
		if (ah == NULL)
			return -1;
	}
	return 0;
}

/* Poll one completion within @p ms; 1, 0 (none) or -1. */
static int
poll_one(struct ibv_wc *wc, int ms)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return 0;
	}
}

static int
do_send(int fd, int dir)
{
	char line[64];
	int k;

	if (vp_recv_line(fd, line, sizeof(line), 60000, NULL, NULL) < 0 || strcmp(line, "GO") != 0) {
		printf("dir %d send: no GO\n", dir);
		return -1;
	}
	for (k = 0; k < nmsg; k++) {
		uint8_t *src = buf + (uint64_t)(UXD_MAX + k) * UXD_SLOT;
		uint32_t len = uxd_len(k), j;
		struct ibv_sge sge = { (uintptr_t)src, len, mr->lkey };
		struct ibv_send_wr wr = { 0 }, *bad;
		struct ibv_wc wc;

		for (j = 0; j < len; j++)
			src[j] = uxd_byte(dir, k, j);
		wr.wr_id = (uint64_t)k;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(0xC0DE0000u + (uint32_t)k);
		if (ud) {
			wr.opcode = IBV_WR_SEND_WITH_IMM;
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = peer.qpn;
			wr.wr.ud.remote_qkey = UXD_QKEY;
		} else if (k % 2 == 0) {
			wr.opcode = IBV_WR_SEND_WITH_IMM;
		} else {
			wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.wr.rdma.remote_addr = peer.addr + UXD_WRITE_OFF + (uint64_t)k * UXD_SLOT;
			wr.wr.rdma.rkey = peer.rkey;
		}
		if (ibv_post_send(qp, &wr, &bad) || poll_one(&wc, 20000) != 1 ||
		    wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)k) {
			printf("dir %d send %d: failed (%s)\n", dir, k, ibv_wc_status_str(wc.status));
			return -1;
		}
	}
	vp_send_line(fd, "SENT");
	if (vp_recv_line(fd, line, sizeof(line), 60000, NULL, NULL) < 0) {
		printf("dir %d send: no result\n", dir);
		return -1;
	}
	printf("dir %d sent %d: peer says %s\n", dir, nmsg, line);
	return strncmp(line, "OK", 2) == 0 ? 0 : -1;
}

/* Check one receive; "" when right, else why. */
static const char *
check_recv(int dir, const struct ibv_wc *wc, int *idp)
{
	static char why[160];
	uint32_t imm = ntohl(wc->imm_data), len, j;
	int k = (int)(imm - 0xC0DE0000u);
	const uint8_t *b, *g;

	*idp = -1;
	if (wc->status != IBV_WC_SUCCESS || !(wc->wc_flags & IBV_WC_WITH_IMM) || k < 0 ||
	    k >= nmsg) {
		snprintf(why, sizeof(why), "status %s flags 0x%x imm 0x%x",
			 ibv_wc_status_str(wc->status), wc->wc_flags, imm);
		return why;
	}
	*idp = k;
	len = uxd_len(k);
	g = buf + wc->wr_id * UXD_SLOT;
	if (ud) {
		static const uint8_t zero[20];

		if (wc->opcode != IBV_WC_RECV || wc->byte_len != UXD_GRH + len ||
		    wc->src_qp != peer.qpn || !(wc->wc_flags & IBV_WC_GRH)) {
			snprintf(why, sizeof(why), "msg %d: opcode %d byte_len %u src_qp 0x%x flags 0x%x",
				 k, wc->opcode, wc->byte_len, wc->src_qp, wc->wc_flags);
			return why;
		}
		if (memcmp(g, zero, 20) != 0 || g[20] != 0x45 || g[29] != 17 ||
		    memcmp(g + 32, peer.gid + 12, 4) != 0 || memcmp(g + 36, me.gid + 12, 4) != 0) {
			snprintf(why, sizeof(why), "msg %d: GRH area %02x..%02x ver %02x proto %u "
				 "src %u.%u.%u.%u dst %u.%u.%u.%u", k, g[0], g[19], g[20], g[29],
				 g[32], g[33], g[34], g[35], g[36], g[37], g[38], g[39]);
			return why;
		}
		b = g + UXD_GRH;
	} else {
		bool write = k % 2 == 1;

		if (wc->opcode != (write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV) ||
		    wc->byte_len != len) {
			snprintf(why, sizeof(why), "msg %d: opcode %d byte_len %u", k, wc->opcode,
				 wc->byte_len);
			return why;
		}
		b = write ? buf + UXD_WRITE_OFF + (uint64_t)k * UXD_SLOT : g;
	}
	for (j = 0; j < len; j++)
		if (b[j] != uxd_byte(dir, k, j)) {
			snprintf(why, sizeof(why), "msg %d: byte %u of %u wrong", k, j, len);
			return why;
		}
	return "";
}

static int
do_recv(int fd, int dir)
{
	bool seen[UXD_MAX] = { false }, sent = false;
	char line[256], missing[128] = "";
	int got = 0, bad = 0, k, nmiss = 0;
	struct ibv_wc wc;

	memset(buf, 0, UXD_MAX * UXD_SLOT);
	memset(buf + UXD_WRITE_OFF, 0, UXD_MAX * UXD_SLOT);
	for (k = 0; k < nmsg; k++)
		if (post_recv(k)) {
			printf("dir %d recv: post_recv failed\n", dir);
			return -1;
		}
	vp_send_line(fd, "GO");
	while (got < nmsg) {
		int r = poll_one(&wc, sent ? 1000 : 100);
		const char *why;

		if (r == 0) {
			if (sent)
				break;   /* one quiet second after SENT: the rest is lost */
			struct pollfd p = { .fd = fd, .events = POLLIN };

			if (poll(&p, 1, 0) > 0 && vp_recv_line(fd, line, sizeof(line), 5000, NULL, NULL) == 0 &&
			    strcmp(line, "SENT") == 0)
				sent = true;
			continue;
		}
		why = check_recv(dir, &wc, &k);
		if (why[0] != '\0') {
			printf("dir %d recv: %s\n", dir, why);
			bad++;
		} else if (seen[k]) {
			printf("dir %d recv: message %d twice\n", dir, k);
			bad++;
		}
		if (k >= 0 && k < UXD_MAX)
			seen[k] = true;
		got++;
	}
	if (!sent && (vp_recv_line(fd, line, sizeof(line), 60000, NULL, NULL) < 0 || strcmp(line, "SENT") != 0)) {
		printf("dir %d recv: no SENT\n", dir);
		return -1;
	}
	for (k = 0; k < nmsg; k++)
		if (!seen[k]) {
			nmiss++;
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " %d", k);
		}
	snprintf(line, sizeof(line), "%s: received %d of %d, %d bad, missing:%s",
		 bad == 0 && nmiss == expect_missing ? "OK" : "BAD", got, nmsg, bad,
		 nmiss ? missing : " none");
	printf("dir %d recv %s (expected %d missing)\n", dir, line, expect_missing);
	vp_send_line(fd, "%s", line);
	return bad == 0 && nmiss == expect_missing ? 0 : -1;
}

int
main(int argc, char **argv)
{
	const char *dev = NULL, *port = "18700", *mode = NULL;
	struct ibv_qp_init_attr qa;
	struct ibv_device **list;
	int c, fd = -1, i, rc = 0;
	char gs[64];

	while ((c = getopt(argc, argv, "m:d:g:p:n:x:")) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 'n': nmsg = atoi(optarg); break;
		case 'x': expect_missing = atoi(optarg); break;
		default: return 2;
		}
	}
	if (mode == NULL || (strcmp(mode, "ud") && strcmp(mode, "uc")) || nmsg < 1 ||
	    nmsg > UXD_MAX || optind < argc - 1) {
		fprintf(stderr, "usage: %s -m ud|uc [-d dev] [-g gidx] [-p port] [-n 1..%d] "
			"[-x missing] [host]\n", argv[0], UXD_MAX);
		return 2;
	}
	ud = strcmp(mode, "ud") == 0;
	list = ibv_get_device_list(NULL);
	for (i = 0; list != NULL && list[i] != NULL; i++)
		if (dev == NULL || strcmp(ibv_get_device_name(list[i]), dev) == 0)
			break;
	if (list == NULL || list[i] == NULL || (ctx = ibv_open_device(list[i])) == NULL) {
		fprintf(stderr, "no device %s\n", dev != NULL ? dev : "");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, UXD_BUF);
	mr = pd != NULL && buf != NULL ?
	     ibv_reg_mr(pd, buf, UXD_BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	cq = ibv_create_cq(ctx, 2 * UXD_MAX, NULL, NULL, 0);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = cq;
	qa.qp_type = ud ? IBV_QPT_UD : IBV_QPT_UC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = UXD_MAX;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	qp = mr != NULL && cq != NULL ? ibv_create_qp(pd, &qa) : NULL;
	if (qp == NULL || ibv_query_gid(ctx, 1, gidx, (union ibv_gid *)me.gid)) {
		fprintf(stderr, "pd/mr/cq/qp/gid failed\n");
		return 1;
	}
	me.qpn = qp->qp_num;
	me.psn = (uint32_t)(getpid() * 7919) & 0xFFFFFF;
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)buf;
	if (optind == argc) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
		int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);

		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1) ||
		    (fd = accept(ls, NULL, NULL)) < 0) {
			perror("listen");
			return 1;
		}
		close(ls);
	} else {
		struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;

		if (getaddrinfo(argv[optind], port, &hints, &ai) != 0)
			return 1;
		fd = socket(AF_INET, SOCK_STREAM, 0);
		for (i = 0; i < 100 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0; i++)
			usleep(100000);
		freeaddrinfo(ai);
	}
	if (write(fd, &me, sizeof(me)) != sizeof(me) ||
	    recv(fd, &peer, sizeof(peer), MSG_WAITALL) != sizeof(peer)) {
		fprintf(stderr, "TCP exchange failed\n");
		return 1;
	}
	inet_ntop(AF_INET6, peer.gid, gs, sizeof(gs));
	printf("%s QPN 0x%06x <-> peer QPN 0x%06x GID %s\n", mode, me.qpn, peer.qpn, gs);
	if (qp_ready()) {
		fprintf(stderr, "QP to RTS (or AH) failed\n");
		return 1;
	}
	/* Both QPs ready before anything is sent. */
	{
		char line[16];

		vp_send_line(fd, "READY");
		if (vp_recv_line(fd, line, sizeof(line), 60000, NULL, NULL) < 0) {
			fprintf(stderr, "peer not ready\n");
			return 1;
		}
	}
	/* Direction 0: the server sends; direction 1: the client. */
	for (i = 0; i < 2; i++) {
		bool sender = (i == 0) == (optind == argc);

		if ((sender ? do_send(fd, i) : do_recv(fd, i)) < 0)
			rc = 1;
	}
	printf("%s side: %s\n", mode, rc ? "FAIL" : "PASS");
	if (ah != NULL)
		ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	close(fd);
	return rc;
}
