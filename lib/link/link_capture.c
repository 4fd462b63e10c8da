/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcapng mirroring of a link (drnic_link_capture.h): the capture_ keys of
 * link_args, the runtime API, and the data-path hooks of link_driver.h.
 *
 * One capture per link, shared by its queues under link->capture_lock (one
 * writer at a time, as lib/capture asks). Transmit: the frames are copied
 * before the driver sees them (once taken, a frame may be freed by the peer
 * at once), and only the copies of the frames the driver took are written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "drnic_capture.h"
#include "drnic_link_capture.h"
#include "link_driver.h"
#include "link_capture.h"

RTE_LOG_REGISTER_SUFFIX(link_capture_logtype, link.capture, NOTICE);
#define LCAP_LOG(level, link, fmt, ...)                                         \
	rte_log(RTE_LOG_##level, link_capture_logtype, "link %s: " fmt "\n",    \
		(link) != NULL ? (link)->name : "-", ##__VA_ARGS__)

int
link_capture_args_split(const char *args, char **path, uint32_t *snaplen, char **rest,
			char *err, size_t err_len)
{
	const char *p = args != NULL ? args : "";
	size_t len = strlen(p), out = 0;
	char *r;

	*path = NULL;
	*snaplen = 0;
	r = malloc(len + 1);
	if (r == NULL)
		return -ENOMEM;
	while (*p != '\0') {
		const char *tok = p, *eq;
		size_t tlen = 0;
		int depth = 0;

		/* One item, up to a comma outside [...]. */
		while (tok[tlen] != '\0' && (tok[tlen] != ',' || depth > 0)) {
			if (tok[tlen] == '[')
				depth++;
			else if (tok[tlen] == ']' && depth > 0)
				depth--;
			tlen++;
		}
		p = tok + tlen + (tok[tlen] == ',' ? 1 : 0);
		if (tlen == 0)
			continue;
		eq = memchr(tok, '=', tlen);
		if (eq != NULL && (size_t)(eq - tok) == strlen("capture") &&
		    strncmp(tok, "capture", 7) == 0) {
			free(*path);
			*path = strndup(eq + 1, tlen - 8);
			if (*path == NULL)
				goto nomem;
			if ((*path)[0] == '\0') {
				snprintf(err, err_len, "capture= needs a file name");
				goto inval;
			}
			continue;
		}
		if (eq != NULL && (size_t)(eq - tok) == strlen("capture_snaplen") &&
		    strncmp(tok, "capture_snaplen", 15) == 0) {
			char v[16], *end;
			unsigned long x;

			if (tlen - 16 >= sizeof(v)) {
				snprintf(err, err_len, "bad capture_snaplen");
				goto inval;
			}
			memcpy(v, eq + 1, tlen - 16);
			v[tlen - 16] = '\0';
			errno = 0;
			x = strtoul(v, &end, 0);
			if (v[0] == '\0' || *end != '\0' || errno != 0 || x == 0 ||
			    x > DRNIC_CAPTURE_SNAPLEN_MAX) {
				snprintf(err, err_len, "bad capture_snaplen '%s' (1..%u)", v,
					 DRNIC_CAPTURE_SNAPLEN_MAX);
				goto inval;
			}
			*snaplen = (uint32_t)x;
			continue;
		}
		if (out > 0)
			r[out++] = ',';
		memcpy(r + out, tok, tlen);
		out += tlen;
	}
	r[out] = '\0';
	*rest = r;
	return 0;
inval:
	free(*path);
	*path = NULL;
	free(r);
	return -EINVAL;
nomem:
	free(r);
	return -ENOMEM;
}

int
drnic_link_capture_start(struct drnic_link *link, const char *path, uint32_t snaplen)
{
	struct drnic_capture_opts o;
	struct drnic_capture *cap;
	int rc = 0;

	if (link == NULL || path == NULL || snaplen > DRNIC_CAPTURE_SNAPLEN_MAX)
		return -EINVAL;
	if (__atomic_load_n(&link->capture, __ATOMIC_ACQUIRE) != NULL)
		return -EBUSY;
	memset(&o, 0, sizeof(o));
	o.ifname = link->name;
	o.ifdescr = link->ops->name;
	o.comment = "drnic link mirror";
	o.snaplen = snaplen;
	o.socket_id = link->socket_id;
	cap = drnic_capture_open(path, &o);
	if (cap == NULL) {
		LCAP_LOG(ERR, link, "capture %s: %s", path, rte_strerror(rte_errno));
		return -rte_errno;
	}
	rte_spinlock_lock(&link->capture_lock);
	if (link->capture != NULL)
		rc = -EBUSY;
	else
		__atomic_store_n(&link->capture, cap, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&link->capture_lock);
	if (rc < 0) {
		drnic_capture_close(cap);
		return rc;
	}
	LCAP_LOG(INFO, link, "mirroring into %s", path);
	return 0;
}

int
drnic_link_capture_stop(struct drnic_link *link)
{
	struct drnic_capture *cap;
	struct drnic_capture_stats st;
	int rc;

	if (link == NULL)
		return -EINVAL;
	rte_spinlock_lock(&link->capture_lock);
	cap = link->capture;
	__atomic_store_n(&link->capture, NULL, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&link->capture_lock);
	if (cap == NULL)
		return -ENOENT;
	drnic_capture_stats(cap, &st);
	rc = drnic_capture_close(cap);
	LCAP_LOG(INFO, link, "capture closed: %" PRIu64 " frames, %" PRIu64 " not written",
		 st.packets, st.dropped);
	return rc;
}

int
drnic_link_capture_stats(struct drnic_link *link, struct drnic_capture_stats *stats)
{
	int rc = -ENOENT;

	if (link == NULL || stats == NULL)
		return -EINVAL;
	rte_spinlock_lock(&link->capture_lock);
	if (link->capture != NULL)
		rc = drnic_capture_stats(link->capture, stats);
	rte_spinlock_unlock(&link->capture_lock);
	return rc;
}

uint16_t
link_capture_tx(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *copies[DRNIC_CAPTURE_BURST];
	struct drnic_capture *cap;
	uint16_t done = 0, b, sent;

	rte_spinlock_lock(&link->capture_lock);
	cap = link->capture;
	if (cap == NULL) {
		rte_spinlock_unlock(&link->capture_lock);
		return link->ops->tx_burst(link, q, pkts, n);
	}
	while (done < n) {
		b = RTE_MIN((uint16_t)(n - done), (uint16_t)DRNIC_CAPTURE_BURST);
		b = drnic_capture_copy(cap, pkts + done, b, DRNIC_CAPTURE_DIR_TX, copies);
		sent = link->ops->tx_burst(link, q, pkts + done, b);
		drnic_capture_write_copies(cap, copies, b, sent);
		done += sent;
		if (sent < b)
			break;
	}
	rte_spinlock_unlock(&link->capture_lock);
	return done;
}

void
link_capture_mirror(struct drnic_link *link, struct rte_mbuf *const *pkts, uint16_t n,
		    enum drnic_capture_dir dir)
{
	if (n == 0 || __atomic_load_n(&link->capture, __ATOMIC_RELAXED) == NULL)
		return;
	rte_spinlock_lock(&link->capture_lock);
	if (link->capture != NULL)
		drnic_capture_write(link->capture, pkts, n, dir);
	rte_spinlock_unlock(&link->capture_lock);
}
