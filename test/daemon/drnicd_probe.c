/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnicd_probe: a program attached to drnicd ($DRNIC_DAEMON), for
 * test/daemon/daemon.sh. Each mode prints what it checked and exits 0 when
 * all of it held, 1 otherwise.
 *
 *   drnicd_probe objects       the native API through the daemon: port and
 *                              GID, buffers, MRs (of hugepage buffers and
 *                              of malloc()ed memory; the ranges refused),
 *                              an SRQ, a double destroy, a CQ resize,
 *                              reregs (access, translation, refused);
 *                              two RC QPs of this process connected through
 *                              the daemon's engine: a WRITE, a SEND with
 *                              immediate and a READ, between hugepage and
 *                              malloc()ed memory, every byte and CQE field
 *                              checked
 *   drnicd_probe hold FILE     make a PD, a CQ, a buffer and an MR, an
 *                              XRC domain on FILE.xrcd with a target QP,
 *                              and a CM channel with an id listening on
 *                              the device's address, port 18690;
 *                              write their addresses and the QPN to FILE,
 *                              then wait to be killed
 *   drnicd_probe foreign FILE  name FILE's objects (another process's) in
 *                              requests on the control channel itself, as
 *                              a hostile program could: each must be
 *                              refused; open FILE's XRC domain and its
 *                              target QP, which it may; its own CM id on
 *                              the holder's port finds it taken (one port
 *                              space for every process)
 *   drnicd_probe orphan FILE   attach, make objects, create FILE, then sleep
 *                              on the device's events (and a thread on a
 *                              completion channel, one on a CM channel)
 *                              until the daemon goes: DEVICE_FATAL must
 *                              wake it, the threads' waits and CQ polls
 *                              fail with EIO, control calls with EPIPE;
 *                              nothing hangs
 *   drnicd_probe stuck FILE    make a QP, then do what a producer killed in
 *                              the middle of its doorbell does: take a slot
 *                              of the ring its posts go to (head moved) and
 *                              never publish it (tail not); create FILE and
 *                              wait to be killed
 *   drnicd_probe attach        print what attaching costs (EAL, device open)
 *   drnicd_probe reg MIB       print what registering MIB MiB of malloc()ed
 *                              memory costs, the first time and again
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/mman.h>

#include <rte_errno.h>

#include "drnic_env.h"
#include "drnic_ibcm.h"
#include "drnic_verbs.h"
#include "rpc.h"
#include "verbs_objects.h"

static int failures;

#define CHECK(cond, ...) do {                                   \
	if (cond) {                                             \
		printf("ok: " __VA_ARGS__);                     \
	} else {                                                \
		printf("FAIL: " __VA_ARGS__);                   \
		failures++;                                     \
	}                                                       \
	printf("\n");                                           \
} while (0)

#define BUF_LEN 65536u

static struct drnic_device *
probe_open(void)
{
	struct drnic_env_opts eo = { .name = "drnicd_probe" };
	struct drnic_env_info info;
	struct drnic_config cfg;
	struct drnic_device *dev;
	int rc;

	rc = drnic_env_init(&eo, &info);
	if (rc < 0 || !info.attached) {
		fprintf(stderr, "drnicd_probe: attach: %s\n", rc < 0 ? strerror(-rc) : "not attached");
		exit(1);
	}
	drnic_config_init(&cfg);
	dev = drnic_device_open(&cfg);
	if (dev == NULL) {
		fprintf(stderr, "drnicd_probe: open %s: %s\n", cfg.name, strerror(rte_errno));
		exit(1);
	}
	return dev;
}

static struct drnic_qp *
probe_qp(struct drnic_pd *pd, struct drnic_cq *cq)
{
	struct drnic_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = DRNIC_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return drnic_create_qp(pd, &ia);
}

static int
probe_connect(struct drnic_device *dev, struct drnic_qp *qp, uint32_t dest_qpn)
{
	struct drnic_qp_attr a = { 0 };
	union drnic_gid gid;
	int rc;

	a.qp_state = DRNIC_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_READ;
	rc = drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_PKEY_INDEX | DRNIC_QP_PORT |
			     DRNIC_QP_ACCESS_FLAGS);
	if (rc < 0)
		return rc;
	(void)drnic_query_gid(dev, 1, 0, &gid);
	memset(&a, 0, sizeof(a));
	a.qp_state = DRNIC_QPS_RTR;
	a.path_mtu = DRNIC_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.dgid = gid;
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
	a.max_rd_atomic = 1;
	return drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_TIMEOUT | DRNIC_QP_RETRY_CNT |
			       DRNIC_QP_RNR_RETRY | DRNIC_QP_SQ_PSN | DRNIC_QP_MAX_QP_RD_ATOMIC);
}

/* Poll @p cq for one CQE (the daemon's engine runs; this thread only looks). */
static int
probe_wait(struct drnic_cq *cq, struct drnic_wc *wc)
{
	unsigned long spins;

	for (spins = 0; spins < 4000000000ul; spins++) {
		int n = drnic_cq_poll(cq, 1, wc);

		if (n != 0)
			return n;
		if ((spins & 1023) == 1023)
			sched_yield();
	}
	return 0;
}

/*
 * Two RC QPs of this process, connected to each other through the daemon's
 * engine: a WRITE of src[0, 4K) into dst[0, 4K), a SEND with immediate of
 * src[0, 1000) into dst[4K, 8K), a READ of dst[0, 4K) back into
 * src[4K, 8K); every byte and CQE field checked.
 */
static void
probe_traffic(struct drnic_device *dev, struct drnic_pd *pd, struct drnic_cq *cq,
	      uint8_t *src, struct drnic_mr *smr, uint8_t *dst, struct drnic_mr *dmr,
	      const char *what)
{
	struct drnic_qp *a = probe_qp(pd, cq), *b = probe_qp(pd, cq);
	struct drnic_sge sge;
	struct drnic_send_wr swr, *bad;
	struct drnic_recv_wr rwr, *rbad;
	struct drnic_wc wc;
	unsigned int i;

	printf("-- %s\n", what);
	CHECK(a != NULL && b != NULL && drnic_qp_num(a) != drnic_qp_num(b),
	      "two RC QPs: %u and %u", a ? drnic_qp_num(a) : 0, b ? drnic_qp_num(b) : 0);
	if (a == NULL || b == NULL)
		return;
	CHECK(probe_connect(dev, a, drnic_qp_num(b)) == 0 &&
	      probe_connect(dev, b, drnic_qp_num(a)) == 0, "connected to each other (same GID)");
	for (i = 0; i < 4096; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	memset(src + 4096, 0, 4096);
	memset(dst, 0, 2 * 4096);

	sge = (struct drnic_sge){ .addr = (uintptr_t)src, .length = 4096,
				  .lkey = drnic_mr_lkey(smr) };
	swr = (struct drnic_send_wr){ .wr_id = 11, .sg_list = &sge, .num_sge = 1,
				      .opcode = DRNIC_WR_RDMA_WRITE,
				      .send_flags = DRNIC_SEND_SIGNALED };
	swr.wr.rdma.remote_addr = (uintptr_t)dst;
	swr.wr.rdma.rkey = drnic_mr_rkey(dmr);
	CHECK(drnic_post_send(a, &swr, &bad) == 0, "post WRITE");
	CHECK(probe_wait(cq, &wc) == 1 && wc.status == DRNIC_WC_SUCCESS && wc.wr_id == 11 &&
	      wc.opcode == DRNIC_WC_RDMA_WRITE && wc.qp_num == drnic_qp_num(a),
	      "WRITE completion: status %d wr_id %" PRIu64 " opcode %d qp %u", wc.status,
	      wc.wr_id, wc.opcode, wc.qp_num);
	CHECK(memcmp(src, dst, 4096) == 0, "WRITE: 4096 bytes arrived");

	sge = (struct drnic_sge){ .addr = (uintptr_t)dst + 4096, .length = 4096,
				  .lkey = drnic_mr_lkey(dmr) };
	rwr = (struct drnic_recv_wr){ .wr_id = 21, .sg_list = &sge, .num_sge = 1 };
	CHECK(drnic_post_recv(b, &rwr, &rbad) == 0, "post receive");
	sge = (struct drnic_sge){ .addr = (uintptr_t)src, .length = 1000,
				  .lkey = drnic_mr_lkey(smr) };
	swr = (struct drnic_send_wr){ .wr_id = 12, .sg_list = &sge, .num_sge = 1,
				      .opcode = DRNIC_WR_SEND_WITH_IMM, .imm_data = 0x12345678,
				      .send_flags = DRNIC_SEND_SIGNALED };
	CHECK(drnic_post_send(a, &swr, &bad) == 0, "post SEND with immediate");
	for (i = 0; i < 2; i++) {
		CHECK(probe_wait(cq, &wc) == 1 && wc.status == DRNIC_WC_SUCCESS,
		      "completion %u: status %d wr_id %" PRIu64, i, wc.status, wc.wr_id);
		if (wc.wr_id == 21)
			CHECK(wc.opcode == DRNIC_WC_RECV && wc.byte_len == 1000 &&
			      wc.qp_num == drnic_qp_num(b) && (wc.wc_flags & DRNIC_WC_WITH_IMM) &&
			      wc.imm_data == 0x12345678,
			      "receive CQE: opcode %d byte_len %u qp %u imm %#x", wc.opcode,
			      wc.byte_len, wc.qp_num, wc.imm_data);
	}
	CHECK(memcmp(src, dst + 4096, 1000) == 0 && dst[4096 + 1000] == 0,
	      "SEND: 1000 bytes arrived, nothing past them");

	sge = (struct drnic_sge){ .addr = (uintptr_t)src + 4096, .length = 4096,
				  .lkey = drnic_mr_lkey(smr) };
	swr = (struct drnic_send_wr){ .wr_id = 13, .sg_list = &sge, .num_sge = 1,
				      .opcode = DRNIC_WR_RDMA_READ,
				      .send_flags = DRNIC_SEND_SIGNALED };
	swr.wr.rdma.remote_addr = (uintptr_t)dst;
	swr.wr.rdma.rkey = drnic_mr_rkey(dmr);
	CHECK(drnic_post_send(b, &swr, &bad) == 0, "post READ");
	CHECK(probe_wait(cq, &wc) == 1 && wc.status == DRNIC_WC_SUCCESS && wc.wr_id == 13 &&
	      wc.opcode == DRNIC_WC_RDMA_READ && wc.byte_len == 4096,
	      "READ completion: status %d opcode %d byte_len %u", wc.status, wc.opcode,
	      wc.byte_len);
	CHECK(memcmp(src, src + 4096, 4096) == 0, "READ: 4096 bytes came back");
	CHECK(drnic_destroy_qp(a) == 0 && drnic_destroy_qp(b) == 0, "QPs destroyed");
}

/*
 * drnic_rereg_mr() through the daemon: a read-only MR of malloc()ed memory
 * made writable (the daemon's window onto it made again), then moved onto
 * other malloc()ed memory and onto a hugepage buffer; traffic into each;
 * a move onto unmapped memory refused with the MR unchanged.
 */
static void
probe_rereg(struct drnic_device *dev, struct drnic_pd *pd, struct drnic_cq *cq, uint8_t *buf,
	    struct drnic_mr *mr, void *gone)
{
	const unsigned int rw = DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
				DRNIC_ACCESS_REMOTE_READ;
	uint8_t *h1 = malloc(3 * 4096), *h2 = malloc(3 * 4096);
	struct drnic_mr *m = h1 != NULL ? drnic_reg_mr(pd, h1, 2 * 4096, 0) : NULL;
	uint32_t key = m != NULL ? drnic_mr_lkey(m) : 0;
	int rc;

	CHECK(m != NULL && h2 != NULL, "a read-only MR over malloc()ed memory");
	if (m == NULL || h2 == NULL) {
		free(h1);
		free(h2);
		return;
	}
	rc = drnic_rereg_mr(m, DRNIC_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, rw);
	CHECK(rc == 0 && drnic_mr_lkey(m) != key, "rereg: made writable, new lkey %#x: %s",
	      drnic_mr_lkey(m), strerror(-rc));
	probe_traffic(dev, pd, cq, buf, mr, h1, m, "hugepage buffer to the MR made writable");
	key = drnic_mr_lkey(m);
	rc = drnic_rereg_mr(m, DRNIC_REREG_MR_CHANGE_TRANSLATION, NULL, h2 + 20, 2 * 4096, 0);
	CHECK(rc == 0 && drnic_mr_lkey(m) != key, "rereg: moved onto other malloc()ed memory: %s",
	      strerror(-rc));
	probe_traffic(dev, pd, cq, buf, mr, h2 + 20, m, "hugepage buffer to the moved MR");
	key = drnic_mr_lkey(m);
	rc = drnic_rereg_mr(m, DRNIC_REREG_MR_CHANGE_TRANSLATION, NULL, gone, 8192, 0);
	CHECK(rc == -EFAULT && drnic_mr_lkey(m) == key,
	      "rereg onto unmapped memory: %s, the MR unchanged", strerror(-rc));
	rc = drnic_rereg_mr(m, DRNIC_REREG_MR_CHANGE_TRANSLATION, NULL, buf + 4 * 8192, 2 * 4096,
			    0);
	CHECK(rc == 0, "rereg: moved onto a hugepage buffer: %s", strerror(-rc));
	probe_traffic(dev, pd, cq, buf, mr, buf + 4 * 8192, m, "hugepage buffer to itself, moved MR");
	CHECK(drnic_rereg_mr(m, 1u << 7, NULL, NULL, 0, 0) == -EINVAL,
	      "rereg with an unknown flag: EINVAL");
	CHECK(drnic_dereg_mr(m) == 0, "the re-registered MR deregistered");
	free(h1);
	free(h2);
}

static int
mode_objects(void)
{
	struct drnic_device *dev = probe_open();
	struct drnic_cq_attr ca = { .cqe = 64 };
	struct drnic_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct drnic_port_attr port;
	struct drnic_pd *pd, *pd2;
	struct drnic_mr *mr;
	struct drnic_mr *hmr;
	struct drnic_srq *srq;
	struct drnic_xrcd *xd;
	struct drnic_cq *cq;
	uint8_t *buf, *heap;
	void *gone, *ro;

	CHECK(drnic_query_port(dev, 1, &port) == 0 && port.state == DRNIC_PORT_ACTIVE,
	      "port 1 active");
	pd = drnic_alloc_pd(dev);
	CHECK(pd != NULL, "PD");
	buf = drnic_alloc(BUF_LEN, 64, -1);
	CHECK(buf != NULL, "buffer of %u bytes", BUF_LEN);
	if (pd == NULL || buf == NULL)
		return 1;
	mr = drnic_reg_mr(pd, buf, BUF_LEN, DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
			  DRNIC_ACCESS_REMOTE_READ);
	CHECK(mr != NULL && drnic_mr_lkey(mr) != 0, "MR over the buffer, lkey %#x",
	      mr ? drnic_mr_lkey(mr) : 0);
	CHECK(drnic_reg_mr(pd, buf, BUF_LEN + 4096, DRNIC_ACCESS_LOCAL_WRITE) == NULL &&
	      rte_errno == EFAULT, "MR past the buffer's end refused: %s", strerror(rte_errno));
	CHECK(drnic_reg_mr(pd, (void *)dev, 4096, DRNIC_ACCESS_LOCAL_WRITE) == NULL &&
	      rte_errno == EFAULT, "MR over the daemon's own memory refused: %s",
	      strerror(rte_errno));
	pd2 = drnic_alloc_pd(dev);
	CHECK(pd2 != NULL && drnic_dealloc_pd(pd2) == 0 && drnic_dealloc_pd(pd2) == -EINVAL,
	      "a second dealloc of a PD is EINVAL");
	srq = drnic_create_srq(pd, &sa);
	CHECK(srq != NULL && sa.attr.max_wr >= 4 && drnic_destroy_srq(srq) == 0 &&
	      drnic_destroy_srq(srq) == -EINVAL, "an SRQ of %u, destroyed once", sa.attr.max_wr);
	xd = drnic_open_xrcd(dev, -1, O_CREAT);
	CHECK(xd != NULL && drnic_close_xrcd(xd) == 0 && drnic_close_xrcd(xd) == -EINVAL,
	      "an XRC domain, closed once");
	CHECK(drnic_device_close(dev) == -EBUSY, "device close with objects: EBUSY");
	cq = drnic_cq_create(&ca);
	CHECK(cq != NULL, "CQ of 64");
	/* The program's own memory: malloc()ed, not page-aligned, and a
	 * range it unmapped. */
	heap = malloc(3 * 4096 + 100);
	hmr = heap != NULL ? drnic_reg_mr(pd, heap + 50, 2 * 4096,
					  DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE |
					  DRNIC_ACCESS_REMOTE_READ) : NULL;
	CHECK(hmr != NULL, "MR over malloc()ed memory: %s", hmr ? "ok" : strerror(rte_errno));
	gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone != MAP_FAILED)
		munmap(gone, 8192);
	CHECK(gone != MAP_FAILED && drnic_reg_mr(pd, gone, 8192, DRNIC_ACCESS_LOCAL_WRITE) == NULL &&
	      rte_errno == EFAULT, "MR over unmapped memory refused: %s", strerror(rte_errno));
	ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED && drnic_reg_mr(pd, ro, 4096, DRNIC_ACCESS_LOCAL_WRITE) == NULL &&
	      rte_errno == EFAULT, "a writable MR over read-only memory refused: %s",
	      strerror(rte_errno));
	if (ro != MAP_FAILED)
		munmap(ro, 4096);
	if (cq != NULL && mr != NULL) {
		struct drnic_cq_stats st = { 0 };

		probe_traffic(dev, pd, cq, buf, mr, buf + 8192, mr, "hugepage buffer to itself");
		/* The daemon makes the new ring; this process, the poller,
		 * moves to it (and frees the old one) at its next poll: the
		 * traffic below goes through it. */
		CHECK(drnic_cq_resize(cq, 256) == 0 && drnic_cq_query_stats(cq, &st) == 0 &&
		      st.depth == 256, "CQ resized from 64 to 256: depth %u", st.depth);
		CHECK(drnic_cq_resize(cq, DRNIC_CQ_MAX_DEPTH + 1) == -ERANGE,
		      "a resize past the largest depth: ERANGE");
		if (hmr != NULL) {
			probe_traffic(dev, pd, cq, buf, mr, heap + 50, hmr,
				      "hugepage buffer to malloc()ed memory");
			probe_traffic(dev, pd, cq, heap + 50, hmr, buf, mr,
				      "malloc()ed memory to a hugepage buffer");
			probe_rereg(dev, pd, cq, buf, mr, gone);
		}
	}
	CHECK(hmr == NULL || drnic_dereg_mr(hmr) == 0, "malloc()ed memory's MR deregistered");
	/* The program still owns its memory, as it was. */
	if (heap != NULL) {
		heap[0] = 1;
		heap[3 * 4096 + 99] = 2;
		free(heap);
	}
	CHECK(drnic_cq_destroy(cq) == 0 && drnic_dereg_mr(mr) == 0 && drnic_dealloc_pd(pd) == 0,
	      "CQ, MR, PD destroyed");
	drnic_free(buf);
	CHECK(drnic_device_close(dev) == 0, "device closed");
	drnic_env_fini();
	printf("%s\n", failures ? "probe: FAILED" : "probe: all ok");
	return failures ? 1 : 0;
}

#define PROBE_CM_PORT 18690

/* A CM channel and an RC id of this process, made by raw requests (their
 * daemon handles are what another process would name). */
static int
probe_cm_id(uint64_t *ch, uint64_t *id)
{
	struct rpc_msg m;
	int fd = -1, rc;

	rpc_msg_init(&m, RPC_CM_CHANNEL_CREATE);
	rc = rpc_call_fd(&m, &fd);
	if (rc < 0 || fd < 0)
		return rc < 0 ? rc : -EPROTO;
	*ch = m.obj[0];
	rpc_msg_init(&m, RPC_CM_ID_CREATE);
	m.obj[0] = *ch;
	m.arg[0] = DRNIC_IBCM_PS_TCP;
	m.arg[1] = DRNIC_QPT_RC;
	rc = rpc_call(&m);
	*id = m.obj[0];
	return rc;
}

/* RPC_CM_BIND of @p id to the device's address (10.0.0.1, the default
 * configuration's), PROBE_CM_PORT, then RPC_CM_LISTEN: the listen's rc. */
static int
probe_cm_listen(uint64_t id)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PROBE_CM_PORT) };
	struct rpc_msg m;
	int rc;

	inet_pton(AF_INET, "10.0.0.1", &sin.sin_addr);
	rpc_msg_init(&m, RPC_CM_BIND);
	m.obj[0] = id;
	memcpy(m.blob, &sin, sizeof(sin));
	m.blob_len = sizeof(sin);
	rc = rpc_call(&m);
	if (rc < 0)
		return rc;
	rpc_msg_init(&m, RPC_CM_LISTEN);
	m.obj[0] = id;
	return rpc_call(&m);
}

static int
mode_hold(const char *file)
{
	struct drnic_device *dev = probe_open();
	struct drnic_cq_attr ca = { .cqe = 16 };
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	struct drnic_cq *cq = drnic_cq_create(&ca);
	void *buf = drnic_alloc(BUF_LEN, 64, -1);
	struct drnic_mr *mr = pd && buf ? drnic_reg_mr(pd, buf, BUF_LEN, DRNIC_ACCESS_LOCAL_WRITE)
				      : NULL;
	struct drnic_qp_init_attr xa = { .qp_type = DRNIC_QPT_XRC_RECV };
	struct drnic_qp *xq;
	uint64_t cmch = 0, cmid = 0;
	char tmp[4096];
	int xfd, rc;
	FILE *f;

	if (pd == NULL || cq == NULL || mr == NULL)
		return 1;
	rc = probe_cm_id(&cmch, &cmid);
	if (rc == 0)
		rc = probe_cm_listen(cmid);
	if (rc < 0) {
		fprintf(stderr, "drnicd_probe: hold: CM id: %s\n", strerror(-rc));
		return 1;
	}
	/* An XRC domain on FILE.xrcd and a target QP in it, for another
	 * process to open. */
	snprintf(tmp, sizeof(tmp), "%s.xrcd", file);
	xfd = open(tmp, O_RDONLY | O_CREAT, 0600);
	xa.xrcd = xfd >= 0 ? drnic_open_xrcd(dev, xfd, O_CREAT) : NULL;
	xq = xa.xrcd != NULL ? drnic_create_qp(NULL, &xa) : NULL;
	if (xq == NULL)
		return 1;
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (f == NULL)
		return 1;
	fprintf(f, "%p %p %p %p %u %" PRIx64 " %" PRIx64 "\n", (void *)pd, (void *)cq, buf,
		(void *)mr, drnic_qp_num(xq), cmch, cmid);
	fclose(f);
	rename(tmp, file);
	printf("hold: pd %p cq %p buffer %p mr %p\n", (void *)pd, (void *)cq, buf, (void *)mr);
	fflush(stdout);
	for (;;)
		pause();
}

/* One raw request; the reply's rc. */
static int
raw(enum rpc_op op, uint64_t obj0, uint64_t a0, uint64_t a1)
{
	struct rpc_msg m;

	rpc_msg_init(&m, op);
	m.obj[0] = obj0;
	m.arg[0] = a0;
	m.arg[1] = a1;
	m.arg[2] = a0;
	m.arg[3] = DRNIC_ACCESS_LOCAL_WRITE;
	return rpc_call(&m);
}

static int
mode_foreign(const char *file)
{
	struct drnic_device *dev = probe_open();
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	struct drnic_cq_attr ca = { .cqe = 16 };
	struct drnic_cq *cq = drnic_cq_create(&ca);
	void *fpd, *fcq, *fbuf, *fmr;
	uint64_t fch, fid, ch, id;
	unsigned int fqpn;
	int rc;
	struct drnic_xrcd *xd;
	struct drnic_qp *xq;
	char xpath[4096];
	int xfd;
	struct drnic_qp_init_attr ia = { .qp_type = DRNIC_QPT_RC,
					 .cap = { .max_send_wr = 1, .max_recv_wr = 1 } };
	struct rpc_msg m;
	FILE *f = fopen(file, "r");

	if (f == NULL || fscanf(f, "%p %p %p %p %u %" SCNx64 " %" SCNx64, &fpd, &fcq, &fbuf, &fmr,
			      &fqpn, &fch, &fid) != 7 ||
	    pd == NULL ||
	    cq == NULL) {
		fprintf(stderr, "drnicd_probe: %s unreadable or no objects\n", file);
		return 1;
	}
	fclose(f);
	CHECK(raw(RPC_PD_FREE, (uintptr_t)fpd, 0, 0) == -EINVAL, "freeing another's PD: EINVAL");
	CHECK(raw(RPC_CQ_DESTROY, (uintptr_t)fcq, 0, 0) == -EINVAL,
	      "destroying another's CQ: EINVAL");
	CHECK(raw(RPC_CQ_RESIZE, (uintptr_t)fcq, 64, 0) == -EINVAL,
	      "resizing another's CQ: EINVAL");
	CHECK(raw(RPC_MR_DEREG, (uintptr_t)fmr, 0, 0) == -EINVAL,
	      "deregistering another's MR: EINVAL");
	rpc_msg_init(&m, RPC_MR_REREG);
	m.obj[0] = (uintptr_t)fmr;
	m.arg[2] = DRNIC_ACCESS_LOCAL_WRITE;
	m.arg[3] = DRNIC_REREG_MR_CHANGE_ACCESS;
	CHECK(rpc_call(&m) == -EINVAL, "re-registering another's MR: EINVAL");
	CHECK(raw(RPC_MEM_FREE, (uintptr_t)fbuf, 0, 0) == -EINVAL,
	      "freeing another's buffer: EINVAL");
	CHECK(raw(RPC_MR_REG, (uintptr_t)fpd, (uintptr_t)fbuf, 4096) == -EINVAL,
	      "registering on another's PD: EINVAL");
	CHECK(raw(RPC_MR_REG, (uintptr_t)pd, (uintptr_t)fbuf, 4096) == -EFAULT,
	      "registering another's buffer on its own PD: EFAULT");
	CHECK(raw(RPC_PD_ALLOC, (uintptr_t)fpd, 0, 0) == -EINVAL,
	      "a PD on something that is not its device: EINVAL");
	ia.send_cq = fcq;
	ia.recv_cq = cq;
	rpc_msg_init(&m, RPC_QP_CREATE);
	m.obj[0] = (uintptr_t)pd;
	memcpy(m.blob, &ia, sizeof(ia));
	m.blob_len = sizeof(ia);
	CHECK(rpc_call(&m) == -EINVAL, "a QP on another's CQ: EINVAL");
	rpc_msg_init(&m, RPC_QP_CREATE);
	m.obj[0] = (uintptr_t)fpd;
	ia.send_cq = cq;
	memcpy(m.blob, &ia, sizeof(ia));
	m.blob_len = sizeof(ia);
	CHECK(rpc_call(&m) == -EINVAL, "a QP on another's PD: EINVAL");
	rpc_msg_init(&m, RPC_QP_CREATE);
	m.obj[0] = (uintptr_t)pd;
	m.blob_len = 3;
	CHECK(rpc_call(&m) == -EINVAL, "a QP request of the wrong size: EINVAL");
	/* What is shared on purpose: the holder's XRC domain, by its file. */
	snprintf(xpath, sizeof(xpath), "%s.xrcd", file);
	xfd = open(xpath, O_RDONLY);
	xd = xfd >= 0 ? drnic_open_xrcd(dev, xfd, 0) : NULL;
	xq = xd != NULL ? drnic_open_qp(xd, fqpn) : NULL;
	CHECK(xq != NULL && drnic_qp_num(xq) == fqpn,
	      "the holder's XRC domain opened by its file, its target QP %u opened", fqpn);
	CHECK(xd != NULL && drnic_open_qp(xd, fqpn + 1000) == NULL && rte_errno == ENOENT,
	      "a QPN the domain does not have: ENOENT");
	CHECK(xq != NULL && drnic_destroy_qp(xq) == 0 && drnic_close_xrcd(xd) == 0,
	      "its open of the QP and of the domain closed");
	/* The connection manager: the holder's CM channel and id. */
	CHECK(raw(RPC_CM_ID_DESTROY, fid, 0, 0) == -EINVAL, "destroying another's CM id: EINVAL");
	CHECK(raw(RPC_CM_LISTEN, fid, 0, 0) == -EINVAL, "listening on another's CM id: EINVAL");
	CHECK(raw(RPC_CM_DISCONNECT, fid, 0, 0) == -EINVAL,
	      "disconnecting another's CM id: EINVAL");
	CHECK(raw(RPC_CM_GET_EVENT, fch, 0, 0) == -EINVAL,
	      "taking an event from another's CM channel: EINVAL");
	CHECK(raw(RPC_CM_ID_CREATE, fch, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC) == -EINVAL,
	      "a CM id on another's CM channel: EINVAL");
	CHECK(raw(RPC_CM_CHANNEL_DESTROY, fch, 0, 0) == -EINVAL,
	      "destroying another's CM channel: EINVAL");
	rc = probe_cm_id(&ch, &id);
	CHECK(rc == 0, "its own CM channel and id: %s", strerror(-rc));
	rpc_msg_init(&m, RPC_CM_MIGRATE);
	m.obj[0] = id;
	m.obj[1] = fch;
	CHECK(rc == 0 && rpc_call(&m) == -EINVAL, "moving its id to another's CM channel: EINVAL");
	rpc_msg_init(&m, RPC_CM_ATTACH_QP);
	m.obj[0] = id;
	m.obj[1] = (uintptr_t)fcq;
	CHECK(rc == 0 && rpc_call(&m) == -EINVAL, "attaching another's object as its QP: EINVAL");
	CHECK(rc == 0 && (rc = probe_cm_listen(id)) == -EADDRINUSE,
	      "listening on the holder's address and port: %s", strerror(-rc));
	rpc_msg_init(&m, (enum rpc_op)999);
	CHECK(rpc_call(&m) == -EOPNOTSUPP, "an unknown request: EOPNOTSUPP");
	printf("%s\n", failures ? "probe: FAILED" : "probe: all ok");
	/* Exits with its objects: the daemon frees them. */
	return failures ? 1 : 0;
}

static int
mode_stuck(const char *file)
{
	struct drnic_device *dev = probe_open();
	struct drnic_cq_attr ca = { .cqe = 16 };
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	struct drnic_cq *cq = drnic_cq_create(&ca);
	struct drnic_qp *qp = pd != NULL && cq != NULL ? probe_qp(pd, cq) : NULL;
	struct rte_ring *r;
	uint32_t head;
	FILE *f;

	if (qp == NULL)
		return 1;
	/* The ring verbs_qp_doorbell() would enqueue this QP on. */
	r = qp->db_ring != NULL ? qp->db_ring : qp->dev->eng[qp->engine].doorbell;
	head = __atomic_load_n(&r->prod.head, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&r->prod.head, &head, head + 1, false,
					    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		;
	f = fopen(file, "w");
	if (f == NULL)
		return 1;
	fprintf(f, "%s ring, slot %u taken, never published\n",
		qp->db_ring != NULL ? "its own" : "the engine's", head);
	fclose(f);
	for (;;)
		pause();
}

struct orphan_waiter {
	struct drnic_comp_channel *ch;
	struct drnic_ibcm_channel *cm;
	int rc, cm_rc;
};

static void *
orphan_wait_cm(void *arg)
{
	struct orphan_waiter *w = arg;
	struct drnic_ibcm_event ev;

	w->cm_rc = drnic_ibcm_get_event(w->cm, &ev, -1);
	return NULL;
}

static void *
orphan_wait_cq(void *arg)
{
	struct orphan_waiter *w = arg;
	struct drnic_cq *cq;
	void *ctx;

	w->rc = drnic_get_cq_event(w->ch, &cq, &ctx);
	return NULL;
}

static int
mode_orphan(const char *file)
{
	struct drnic_device *dev = probe_open();
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	struct drnic_async_queue *q = drnic_device_async_queue(dev);
	struct orphan_waiter w = { .rc = 1, .cm_rc = 1 };
	struct drnic_ibcm_id *id;
	struct drnic_cq_attr ca = { .cqe = 16 };
	struct drnic_async_event ev;
	struct drnic_wc wc;
	struct drnic_cq *cq;
	pthread_t t, tcm;
	FILE *f;
	int rc;

	w.ch = drnic_create_comp_channel();
	ca.channel = w.ch;
	cq = w.ch != NULL ? drnic_cq_create(&ca) : NULL;
	w.cm = drnic_ibcm_create_channel();
	id = w.cm != NULL ? drnic_ibcm_create_id(w.cm, NULL, DRNIC_IBCM_PS_TCP, DRNIC_QPT_RC) :
	     NULL;
	if (pd == NULL || q == NULL || cq == NULL || id == NULL ||
	    drnic_cq_req_notify(cq, 0) != 0 ||
	    pthread_create(&t, NULL, orphan_wait_cq, &w) != 0 ||
	    pthread_create(&tcm, NULL, orphan_wait_cm, &w) != 0)
		return 1;
	f = fopen(file, "w");
	if (f == NULL)
		return 1;
	fclose(f);
	printf("orphan: attached, a thread asleep on a completion channel, one on a CM "
	       "channel, this one on the device's events\n");
	fflush(stdout);
	/* Asleep, making no call: the daemon's death must wake it. */
	rc = drnic_get_async_event(q, &ev);
	CHECK(rc == 0 && ev.event_type == DRNIC_EVENT_DEVICE_FATAL,
	      "the device's events: %s", rc == 0 ? drnic_event_type_str(ev.event_type) :
	      strerror(-rc));
	if (rc == 0)
		drnic_ack_async_event(q, &ev);
	pthread_join(t, NULL);
	CHECK(w.rc == -EIO, "the thread asleep on the channel woke: %s", strerror(-w.rc));
	pthread_join(tcm, NULL);
	CHECK(w.cm_rc == -EIO, "the thread asleep on the CM channel woke: %s",
	      strerror(-w.cm_rc));
	CHECK(drnic_ibcm_listen(id, 1) == -EPIPE, "a CM call after the daemon went: EPIPE");
	CHECK(drnic_cq_poll(cq, 1, &wc) == -EIO, "polling the CQ: EIO");
	CHECK(drnic_alloc_pd(dev) == NULL && rte_errno == EPIPE, "a PD after the daemon went: %s",
	      strerror(rte_errno));
	CHECK(drnic_dealloc_pd(pd) == 0, "dealloc after the daemon went: nothing left to do");
	printf("%s\n", failures ? "probe: FAILED" : "probe: all ok");
	return failures ? 1 : 0;
}

static double
probe_ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* The cost of attaching: the EAL as a secondary, then the device open. */
static int
mode_attach(void)
{
	struct drnic_env_opts eo = { .name = "drnicd_probe" };
	struct drnic_env_info info;
	struct drnic_config cfg;
	struct drnic_device *dev;
	struct timespec t0, t1, t2, t3;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (drnic_env_init(&eo, &info) < 0 || !info.attached)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	drnic_config_init(&cfg);
	dev = drnic_device_open(&cfg);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	if (dev == NULL || drnic_device_close(dev) != 0)
		return 1;
	drnic_env_fini();
	clock_gettime(CLOCK_MONOTONIC, &t3);
	printf("attach: eal %.2f ms, device open %.2f ms, close and detach %.2f ms\n",
	       probe_ms(&t0, &t1), probe_ms(&t1, &t2), probe_ms(&t2, &t3));
	return 0;
}

/* The cost of registering @p mib MiB of malloc()ed memory (touched first, as
 * a program's buffer is): the first registration moves it, a second one of
 * the same memory maps it again only. */
static int
mode_reg(const char *mib_s)
{
	size_t len = (size_t)strtoul(mib_s, NULL, 10) << 20;
	struct drnic_device *dev = probe_open();
	struct drnic_pd *pd = drnic_alloc_pd(dev);
	struct timespec t0, t1, t2, t3, t4;
	struct drnic_mr *mr, *mr2;
	uint8_t *p = malloc(len);
	unsigned int acc = DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE;

	if (p == NULL || pd == NULL || len == 0)
		return 1;
	memset(p, 0x5a, len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mr = drnic_reg_mr(pd, p, len, acc);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	mr2 = drnic_reg_mr(pd, p, len, acc);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	CHECK(mr != NULL && mr2 != NULL, "two MRs of %zu MiB", len >> 20);
	CHECK(p[0] == 0x5a && p[len - 1] == 0x5a && p[len / 2] == 0x5a,
	      "the program's bytes unchanged by the move");
	clock_gettime(CLOCK_MONOTONIC, &t3);
	CHECK(drnic_dereg_mr(mr) == 0 && drnic_dereg_mr(mr2) == 0, "deregistered");
	clock_gettime(CLOCK_MONOTONIC, &t4);
	printf("reg %zu MiB: first %.1f ms (%.2f GB/s), again %.1f ms, both deregistered %.1f ms\n",
	       len >> 20, probe_ms(&t0, &t1), (double)len / probe_ms(&t0, &t1) / 1e6,
	       probe_ms(&t1, &t2), probe_ms(&t3, &t4));
	free(p);
	(void)drnic_dealloc_pd(pd);
	(void)drnic_device_close(dev);
	drnic_env_fini();
	return failures ? 1 : 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "objects") == 0)
		return mode_objects();
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return mode_hold(argv[2]);
	if (argc == 3 && strcmp(argv[1], "foreign") == 0)
		return mode_foreign(argv[2]);
	if (argc == 3 && strcmp(argv[1], "orphan") == 0)
		return mode_orphan(argv[2]);
	if (argc == 3 && strcmp(argv[1], "stuck") == 0)
		return mode_stuck(argv[2]);
	if (argc == 2 && strcmp(argv[1], "attach") == 0)
		return mode_attach();
	if (argc == 3 && strcmp(argv[1], "reg") == 0)
		return mode_reg(argv[2]);
	fprintf(stderr, "usage: %s objects | hold FILE | foreign FILE | orphan FILE | attach | "
		"reg MIB\n", argv[0]);
	return 2;
}
