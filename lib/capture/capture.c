/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcapng capture files: rte_pcapng writes the section header and formats
 * each frame as an Enhanced Packet Block; this file adds the interface block
 * drnic frames are recorded on and writes the blocks.
 *
 * Why not rte_pcapng_write_packets(): in DPDK 22.11 it maps each mbuf's port
 * to an interface through a table that rte_pcapng_fdopen() fills only for the
 * ethdev ports present at open time (the rest is uninitialized memory), and a
 * drnic link is not necessarily an ethdev port. So the capture appends its own
 * Interface Description Block after those of the ports, sets the interface id
 * of each block itself and writes with writev().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pcapng.h>

#include "drnic_capture.h"

RTE_LOG_REGISTER(capture_logtype, drnic.capture, NOTICE);
#define CAPTURE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, capture_logtype, "capture: " fmt "\n", ##__VA_ARGS__)

/* Frames copied per writev(); the copy pool holds one burst. */
#define CAPTURE_BURST DRNIC_CAPTURE_BURST
#define CAPTURE_POOL_SIZE (2 * CAPTURE_BURST - 1)
#define CAPTURE_IOV_MAX 256
#define CAPTURE_NAME_MAX 128

/* pcapng block and option codes (draft-ietf-opsawg-pcapng). */
#define PCAPNG_BT_IDB 0x00000001u
#define PCAPNG_BT_EPB 0x00000006u
#define PCAPNG_OPT_END 0
#define PCAPNG_IF_NAME 2
#define PCAPNG_IF_DESCRIPTION 3
#define PCAPNG_IF_TSRESOL 9
#define PCAPNG_LINKTYPE_ETHERNET 1

/* The fixed head of an Enhanced Packet Block, as rte_pcapng_copy() lays it out. */
struct capture_epb {
	uint32_t block_type;
	uint32_t block_length;
	uint32_t interface_id;
	uint32_t timestamp_hi;
	uint32_t timestamp_lo;
	uint32_t capture_length;
	uint32_t original_length;
};

struct drnic_capture {
	rte_pcapng_t *png;
	struct rte_mempool *pool;
	int fd;
	uint32_t snaplen;
	uint32_t if_index;        /* our interface's index in the file */
	int write_error;          /* first errno of a failed write, 0 if none */
	struct drnic_capture_stats stats;
};

static atomic_uint capture_seq;
static atomic_bool capture_clock_primed;

/*
 * DPDK 22.11's rte_pcapng_copy() sets its TSC-to-wall-clock base lazily, on
 * the first conversion in the process, and that first conversion must not be
 * given a TSC read before the base: the negative delta moves the base
 * centuries ahead for every later frame. So convert once, with a timestamp
 * safely after the base will be taken, before the first real frame.
 */
static void
capture_prime_clock(struct rte_mempool *pool)
{
	struct rte_mbuf *m, *c;
	void *p;

	if (atomic_exchange(&capture_clock_primed, true))
		return;
	m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		goto fail;
	p = rte_pktmbuf_append(m, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		goto fail;
	}
	memset(p, 0, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	c = rte_pcapng_copy(0, 0, m, pool, UINT32_MAX,
			    rte_get_tsc_cycles() + rte_get_tsc_hz() / 100,
			    RTE_PCAPNG_DIRECTION_UNKNOWN);
	rte_pktmbuf_free(m);
	if (c == NULL)
		goto fail;
	rte_pktmbuf_free(c);
	return;
fail:
	atomic_store(&capture_clock_primed, false);
}

/* Append option @p code with @p len bytes of @p val at @p p; returns the end. */
static uint8_t *
capture_put_option(uint8_t *p, uint16_t code, const void *val, uint16_t len)
{
	uint16_t hdr[2] = { code, len };

	memcpy(p, hdr, sizeof(hdr));
	p += sizeof(hdr);
	if (len > 0)
		memcpy(p, val, len);
	memset(p + len, 0, RTE_ALIGN(len, 4) - len);
	return p + RTE_ALIGN(len, 4);
}

/* Write an Interface Description Block for drnic's own frames. */
static int
capture_write_idb(struct drnic_capture *cap, const char *ifname, const char *ifdescr)
{
	uint8_t buf[16 + 3 * (4 + CAPTURE_NAME_MAX) + 8 + 4 + 4];
	uint8_t *p = buf + 16;
	const uint8_t tsresol = 9;   /* rte_pcapng_copy() stamps nanoseconds */
	uint32_t len, head[4];
	ssize_t w;

	p = capture_put_option(p, PCAPNG_IF_NAME, ifname, (uint16_t)strlen(ifname));
	if (ifdescr != NULL)
		p = capture_put_option(p, PCAPNG_IF_DESCRIPTION, ifdescr,
				       (uint16_t)strlen(ifdescr));
	p = capture_put_option(p, PCAPNG_IF_TSRESOL, &tsresol, sizeof(tsresol));
	p = capture_put_option(p, PCAPNG_OPT_END, NULL, 0);
	len = (uint32_t)(p - buf) + 4;

	head[0] = PCAPNG_BT_IDB;
	head[1] = len;
	head[2] = PCAPNG_LINKTYPE_ETHERNET;   /* link type, then 16 reserved bits */
	head[3] = cap->snaplen;
	memcpy(buf, head, sizeof(head));
	memcpy(p, &len, sizeof(len));

	w = write(cap->fd, buf, len);
	if (w != (ssize_t)len)
		return w < 0 ? -errno : -EIO;
	return 0;
}

/* writev() the whole of @p iov, resuming after short writes. */
static int
capture_writev_all(int fd, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		ssize_t w = writev(fd, iov, cnt);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (cnt > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

struct drnic_capture *
drnic_capture_open(const char *path, const struct drnic_capture_opts *opts)
{
	static const struct drnic_capture_opts no_opts;
	struct drnic_capture *cap;
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	const char *ifname;
	uint16_t port;
	uint32_t nports = 0;
	int rc, socket;

	if (opts == NULL)
		opts = &no_opts;
	ifname = opts->ifname != NULL ? opts->ifname : "drnic";
	if (path == NULL || path[0] == '\0' || opts->snaplen > DRNIC_CAPTURE_SNAPLEN_MAX ||
	    strlen(ifname) > CAPTURE_NAME_MAX ||
	    (opts->ifdescr != NULL && strlen(opts->ifdescr) > CAPTURE_NAME_MAX)) {
		rte_errno = EINVAL;
		return NULL;
	}

	cap = calloc(1, sizeof(*cap));
	if (cap == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cap->snaplen = opts->snaplen ? opts->snaplen : DRNIC_CAPTURE_SNAPLEN_DEFAULT;
	socket = opts->socket_id > 0 ? opts->socket_id : SOCKET_ID_ANY;

	snprintf(pool_name, sizeof(pool_name), "drnic_cap%u",
		 atomic_fetch_add(&capture_seq, 1));
	cap->pool = rte_pktmbuf_pool_create(pool_name, CAPTURE_POOL_SIZE, 0, 0,
			(uint16_t)(RTE_PKTMBUF_HEADROOM + rte_pcapng_mbuf_size(cap->snaplen)),
			socket);
	if (cap->pool == NULL) {
		rc = rte_errno == EEXIST ? EEXIST : ENOMEM;
		CAPTURE_LOG(ERR, "%s: no copy pool: %s", path, rte_strerror(rte_errno));
		goto fail;
	}

	cap->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (cap->fd < 0) {
		rc = errno;
		CAPTURE_LOG(ERR, "%s: %s", path, strerror(errno));
		goto fail_pool;
	}

	/* rte_pcapng_fdopen() describes one interface per ethdev port first. */
	RTE_ETH_FOREACH_DEV(port)
		nports++;
	cap->png = rte_pcapng_fdopen(cap->fd, NULL, NULL, "drnic", opts->comment);
	if (cap->png == NULL) {
		rc = EIO;
		CAPTURE_LOG(ERR, "%s: cannot write the section header", path);
		goto fail_fd;
	}
	cap->if_index = nports;
	capture_prime_clock(cap->pool);
	rc = capture_write_idb(cap, ifname, opts->ifdescr);
	if (rc < 0) {
		rc = -rc;
		CAPTURE_LOG(ERR, "%s: cannot write the interface block: %s", path, strerror(rc));
		rte_pcapng_close(cap->png);   /* closes the fd */
		goto fail_pool;
	}
	return cap;

fail_fd:
	close(cap->fd);
fail_pool:
	rte_mempool_free(cap->pool);
fail:
	free(cap);
	rte_errno = rc;
	return NULL;
}

static enum rte_pcapng_direction
capture_dir(enum drnic_capture_dir dir)
{
	switch (dir) {
	case DRNIC_CAPTURE_DIR_RX:
		return RTE_PCAPNG_DIRECTION_IN;
	case DRNIC_CAPTURE_DIR_TX:
		return RTE_PCAPNG_DIRECTION_OUT;
	default:
		return RTE_PCAPNG_DIRECTION_UNKNOWN;
	}
}

/* Copy up to CAPTURE_BURST frames into @p copies (NULL where a copy failed). */
static void
capture_copy_burst(struct drnic_capture *cap, struct rte_mbuf *const *pkts, uint16_t n,
		   enum rte_pcapng_direction dir, struct rte_mbuf **copies)
{
	uint64_t now = rte_get_tsc_cycles();
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *c;
		struct capture_epb *epb;

		c = rte_pcapng_copy(0, 0, pkts[i], cap->pool, cap->snaplen, now, dir);
		if (likely(c != NULL)) {
			epb = rte_pktmbuf_mtod(c, struct capture_epb *);
			if (unlikely(c->nb_segs > CAPTURE_IOV_MAX / CAPTURE_BURST ||
				     epb->block_type != PCAPNG_BT_EPB)) {
				rte_pktmbuf_free(c);
				c = NULL;
			} else {
				epb->interface_id = cap->if_index;
			}
		}
		copies[i] = c;
	}
}

/* Write the first @p nw of @p n copies (NULL ones are counted dropped), free all. */
static uint16_t
capture_write_copies(struct drnic_capture *cap, struct rte_mbuf **copies, uint16_t n,
		     uint16_t nw)
{
	struct iovec iov[CAPTURE_IOV_MAX];
	uint64_t bytes = 0;
	uint16_t i, nc = 0, nfail = 0;
	int cnt = 0, rc = 0;

	for (i = 0; i < nw && i < n; i++) {
		struct rte_mbuf *c = copies[i], *s;
		const struct capture_epb *epb;

		if (unlikely(c == NULL)) {
			nfail++;
			continue;
		}
		epb = rte_pktmbuf_mtod(c, const struct capture_epb *);
		for (s = c; s != NULL; s = s->next) {
			iov[cnt].iov_base = rte_pktmbuf_mtod(s, void *);
			iov[cnt].iov_len = rte_pktmbuf_data_len(s);
			cnt++;
		}
		bytes += epb->capture_length;
		if (epb->original_length > epb->capture_length)
			cap->stats.truncated++;
		nc++;
	}
	if (cnt > 0)
		rc = capture_writev_all(cap->fd, iov, cnt);
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(copies[i]);   /* NULL ignored */
	if (unlikely(rc < 0)) {
		if (cap->write_error == 0)
			cap->write_error = -rc;
		nfail = (uint16_t)(nfail + nc);
		nc = 0;
		bytes = 0;
	}
	cap->stats.packets += nc;
	cap->stats.bytes += bytes;
	cap->stats.dropped += nfail;
	return nc;
}

uint16_t
drnic_capture_copy(struct drnic_capture *cap, struct rte_mbuf *const *pkts, uint16_t n,
		   enum drnic_capture_dir dir, struct rte_mbuf **copies)
{
	if (cap == NULL || pkts == NULL || copies == NULL)
		return 0;
	n = RTE_MIN(n, (uint16_t)DRNIC_CAPTURE_BURST);
	capture_copy_burst(cap, pkts, n, capture_dir(dir), copies);
	return n;
}

uint16_t
drnic_capture_write_copies(struct drnic_capture *cap, struct rte_mbuf **copies, uint16_t n,
			   uint16_t nb_write)
{
	uint16_t i;

	if (copies == NULL)
		return 0;
	if (cap == NULL) {
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(copies[i]);
		return 0;
	}
	return capture_write_copies(cap, copies, n, nb_write);
}

uint16_t
drnic_capture_write(struct drnic_capture *cap, struct rte_mbuf *const *pkts, uint16_t n,
		    enum drnic_capture_dir dir)
{
	struct rte_mbuf *copies[CAPTURE_BURST];
	enum rte_pcapng_direction pdir = capture_dir(dir);
	uint16_t done = 0, written = 0;

	if (cap == NULL || pkts == NULL)
		return 0;
	while (done < n) {
		uint16_t b = RTE_MIN((uint16_t)(n - done), (uint16_t)CAPTURE_BURST);

		capture_copy_burst(cap, pkts + done, b, pdir, copies);
		written += capture_write_copies(cap, copies, b, b);
		done += b;
	}
	return written;
}

int
drnic_capture_stats(const struct drnic_capture *cap, struct drnic_capture_stats *stats)
{
	if (cap == NULL || stats == NULL)
		return -EINVAL;
	*stats = cap->stats;
	return 0;
}

int
drnic_capture_close(struct drnic_capture *cap)
{
	int rc;

	if (cap == NULL)
		return 0;
	rc = cap->write_error ? -EIO : 0;
	rte_pcapng_close(cap->png);   /* closes the descriptor */
	rte_mempool_free(cap->pool);
	free(cap);
	return rc;
}
