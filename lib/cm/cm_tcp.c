/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TCP side of the exchange: listen, accept, connect with timeouts and an
 * idle callback, and the record sequence of ibv_rc_pingpong (client record,
 * server record, "done").
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "drnic_cm.h"

RTE_LOG_REGISTER_SUFFIX(cm_logtype, cm, NOTICE);
#define CM_LOG(level, fmt, ...) rte_log(RTE_LOG_##level, cm_logtype, "cm: " fmt "\n", ##__VA_ARGS__)

#define CM_DEFAULT_TIMEOUT_MS 30000u
#define CM_DONE "done"          /* sent with its NUL: 5 bytes */
#define CM_SYNC_MAX 32

struct drnic_cm {
	int fd;
	bool listener;
	struct drnic_cm_opts o;
};

static uint64_t
cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t
cm_deadline(const struct drnic_cm_opts *o)
{
	return cm_now_ms() + (o->timeout_ms != 0 ? o->timeout_ms : CM_DEFAULT_TIMEOUT_MS);
}

/*
 * Wait until @p fd has @p events or @p deadline (ms) passes; with an idle
 * callback, wait in 1 ms slices and call it between them.
 */
static int
cm_wait(const struct drnic_cm_opts *o, int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		uint64_t now = cm_now_ms();
		int slice, rc;

		if (now >= deadline)
			return -ETIMEDOUT;
		slice = o->idle != NULL ? 1 : (int)RTE_MIN(deadline - now, (uint64_t)1000);
		rc = poll(&p, 1, slice);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (o->idle != NULL) {
			rc = o->idle(o->idle_arg);
			if (rc < 0)
				return rc;
		}
	}
}

static int
cm_read_exact(struct drnic_cm *cm, void *buf, size_t n, uint64_t deadline)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(cm->fd, (char *)buf + got, n - got, 0);

		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		r = cm_wait(&cm->o, cm->fd, POLLIN, deadline);
		if (r < 0)
			return (int)r;
	}
	return 0;
}

/* One line, newline included, at most @p max bytes. Reads byte by byte so
 * nothing after the line is consumed. */
static int
cm_read_line(struct drnic_cm *cm, char *buf, size_t max, uint64_t deadline)
{
	size_t n = 0;
	int rc;

	while (n < max) {
		rc = cm_read_exact(cm, buf + n, 1, deadline);
		if (rc < 0)
			return rc;
		if (buf[n++] == '\n')
			return (int)n;
	}
	return -EPROTO;
}

static int
cm_write_all(struct drnic_cm *cm, const void *buf, size_t n, uint64_t deadline)
{
	size_t put = 0;

	while (put < n) {
		ssize_t w = send(cm->fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);

		if (w > 0) {
			put += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return errno == EPIPE ? -ECONNRESET : -errno;
		w = cm_wait(&cm->o, cm->fd, POLLOUT, deadline);
		if (w < 0)
			return (int)w;
	}
	return 0;
}

static struct drnic_cm *
cm_new(int fd, bool listener, const struct drnic_cm_opts *o)
{
	struct drnic_cm *cm = calloc(1, sizeof(*cm));

	if (cm == NULL) {
		close(fd);
		rte_errno = ENOMEM;
		return NULL;
	}
	cm->fd = fd;
	cm->listener = listener;
	if (o != NULL)
		cm->o = *o;
	if (cm->o.port == 0)
		cm->o.port = DRNIC_CM_DEFAULT_PORT;
	return cm;
}

static int
cm_check_opts(const struct drnic_cm_opts *o)
{
	if (o == NULL)
		return 0;
	if ((o->fmt != DRNIC_CM_FMT_DRNIC && o->fmt != DRNIC_CM_FMT_RC_PINGPONG) ||
	    o->port < DRNIC_CM_PORT_ANY || o->port > 65535)
		return -EINVAL;
	return 0;
}

static void
cm_port_str(const struct drnic_cm_opts *o, char out[8])
{
	int port = o != NULL ? o->port : 0;

	if (port == 0)
		port = DRNIC_CM_DEFAULT_PORT;
	snprintf(out, 8, "%d", port == DRNIC_CM_PORT_ANY ? 0 : port);
}

struct drnic_cm *
drnic_cm_listen(const struct drnic_cm_opts *opts)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL, *t;
	const char *bind_addr = opts != NULL ? opts->bind_addr : NULL;
	char port[8];
	int fd = -1, one = 1, zero = 0, rc, err = EADDRNOTAVAIL;

	if (cm_check_opts(opts) < 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	cm_port_str(opts, port);
	/* Every address: one dual-stack IPv6 socket when there is IPv6. */
	hints.ai_family = bind_addr == NULL ? AF_INET6 : AF_UNSPEC;
	rc = getaddrinfo(bind_addr, port, &hints, &res);
	if (rc != 0 && bind_addr == NULL) {
		hints.ai_family = AF_INET;
		rc = getaddrinfo(NULL, port, &hints, &res);
	}
	if (rc != 0) {
		rte_errno = rc == EAI_NONAME ? ENOENT : EINVAL;
		return NULL;
	}
	for (t = res; t != NULL; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    t->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (t->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, t->ai_addr, t->ai_addrlen) == 0 && listen(fd, 4) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		CM_LOG(DEBUG, "cannot listen on port %s: %s", port, strerror(err));
		rte_errno = err;
		return NULL;
	}
	return cm_new(fd, true, opts);
}

uint16_t
drnic_cm_local_port(const struct drnic_cm *cm)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (cm == NULL || getsockname(cm->fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

struct drnic_cm *
drnic_cm_accept(struct drnic_cm *listener)
{
	uint64_t deadline;
	int fd, rc, one = 1;

	if (listener == NULL || !listener->listener) {
		rte_errno = EINVAL;
		return NULL;
	}
	deadline = cm_deadline(&listener->o);
	for (;;) {
		fd = accept4(listener->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED) {
			rte_errno = errno;
			return NULL;
		}
		rc = cm_wait(&listener->o, listener->fd, POLLIN, deadline);
		if (rc < 0) {
			rte_errno = -rc;
			return NULL;
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return cm_new(fd, false, &listener->o);
}

/* One connection attempt to @p ai; returns the fd or a negative errno. */
static int
cm_try_connect(const struct drnic_cm_opts *o, const struct addrinfo *ai, uint64_t deadline)
{
	socklen_t elen = sizeof(int);
	int fd, err = 0, rc, one = 1;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			err = errno;
			close(fd);
			return -err;
		}
		rc = cm_wait(o, fd, POLLOUT, deadline);
		if (rc < 0) {
			close(fd);
			return rc;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
			err = errno;
		if (err != 0) {
			close(fd);
			return -err;
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

struct drnic_cm *
drnic_cm_connect(const char *host, const struct drnic_cm_opts *opts)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct drnic_cm_opts o = { 0 };
	struct addrinfo *res = NULL, *t;
	uint64_t deadline, retry_end;
	char port[8];
	int fd = -ECONNREFUSED, rc;

	if (host == NULL || cm_check_opts(opts) < 0 ||
	    (opts != NULL && opts->port == DRNIC_CM_PORT_ANY)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (opts != NULL)
		o = *opts;
	cm_port_str(&o, port);
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		rte_errno = rc == EAI_NONAME || rc == EAI_NODATA ? ENOENT :
			    rc == EAI_SYSTEM ? errno : EINVAL;
		return NULL;
	}
	deadline = cm_deadline(&o);
	retry_end = cm_now_ms() + o.retry_ms;
	for (;;) {
		for (t = res; t != NULL; t = t->ai_next) {
			fd = cm_try_connect(&o, t, deadline);
			if (fd >= 0)
				break;
		}
		if (fd >= 0 || fd != -ECONNREFUSED || cm_now_ms() >= retry_end ||
		    cm_now_ms() >= deadline)
			break;
		/* Not listening yet: try again in 10 ms (still idling). */
		{
			uint64_t until = cm_now_ms() + 10;

			while (cm_now_ms() < until) {
				if (o.idle != NULL) {
					rc = o.idle(o.idle_arg);
					if (rc < 0) {
						fd = rc;
						break;
					}
				} else {
					usleep(1000);
				}
			}
			if (fd != -ECONNREFUSED)
				break;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		CM_LOG(DEBUG, "connect to %s port %s: %s", host, port, strerror(-fd));
		rte_errno = -fd;
		return NULL;
	}
	return cm_new(fd, false, &o);
}

static int
cm_send_record(struct drnic_cm *cm, const struct drnic_cm_dest *d, uint64_t deadline)
{
	char buf[DRNIC_CM_DRNIC_MAX_LEN];
	int n = drnic_cm_record_write(cm->o.fmt, d, buf, sizeof(buf));

	if (n < 0)
		return n;
	return cm_write_all(cm, buf, (size_t)n, deadline);
}

static int
cm_recv_record(struct drnic_cm *cm, struct drnic_cm_dest *d, uint64_t deadline)
{
	char buf[DRNIC_CM_DRNIC_MAX_LEN];
	int n;

	if (cm->o.fmt == DRNIC_CM_FMT_RC_PINGPONG) {
		n = cm_read_exact(cm, buf, DRNIC_CM_RC_PINGPONG_LEN, deadline);
		if (n < 0)
			return n;
		n = DRNIC_CM_RC_PINGPONG_LEN;
	} else {
		n = cm_read_line(cm, buf, sizeof(buf), deadline);
		if (n < 0)
			return n;
	}
	return drnic_cm_record_parse(cm->o.fmt, buf, (size_t)n, d);
}

static int
cm_check_conn(const struct drnic_cm *cm)
{
	return cm == NULL || cm->listener ? -EINVAL : 0;
}

int
drnic_cm_client_exchange(struct drnic_cm *cm, const struct drnic_cm_dest *local,
			 struct drnic_cm_dest *remote)
{
	uint64_t deadline;
	int rc;

	if (cm_check_conn(cm) < 0 || local == NULL || remote == NULL)
		return -EINVAL;
	deadline = cm_deadline(&cm->o);
	rc = cm_send_record(cm, local, deadline);
	if (rc == 0)
		rc = cm_recv_record(cm, remote, deadline);
	if (rc == 0)
		rc = cm_write_all(cm, CM_DONE, sizeof(CM_DONE), deadline);
	return rc;
}

int
drnic_cm_server_exchange(struct drnic_cm *cm, const struct drnic_cm_dest *local,
			 struct drnic_cm_dest *remote,
			 int (*connect_cb)(void *arg, const struct drnic_cm_dest *remote), void *arg)
{
	char done[sizeof(CM_DONE)];
	uint64_t deadline;
	int rc;

	if (cm_check_conn(cm) < 0 || local == NULL || remote == NULL)
		return -EINVAL;
	deadline = cm_deadline(&cm->o);
	rc = cm_recv_record(cm, remote, deadline);
	if (rc < 0)
		return rc;
	if (connect_cb != NULL) {
		rc = connect_cb(arg, remote);
		if (rc < 0)
			return rc;
		deadline = cm_deadline(&cm->o);
	}
	rc = cm_send_record(cm, local, deadline);
	if (rc < 0)
		return rc;
	rc = cm_read_exact(cm, done, sizeof(done), deadline);
	if (rc < 0)
		return rc;
	return memcmp(done, CM_DONE, sizeof(done)) == 0 ? 0 : -EPROTO;
}

int
drnic_cm_sync(struct drnic_cm *cm, const char *tag)
{
	char mine[CM_SYNC_MAX], theirs[CM_SYNC_MAX];
	uint64_t deadline;
	int n, rc;

	if (cm_check_conn(cm) < 0 || tag == NULL || strlen(tag) > 15 || strchr(tag, '\n') != NULL)
		return -EINVAL;
	deadline = cm_deadline(&cm->o);
	n = snprintf(mine, sizeof(mine), "SYNC %s\n", tag);
	rc = cm_write_all(cm, mine, (size_t)n, deadline);
	if (rc < 0)
		return rc;
	rc = cm_read_line(cm, theirs, sizeof(theirs), deadline);
	if (rc < 0)
		return rc;
	return rc == n && memcmp(mine, theirs, (size_t)n) == 0 ? 0 : -EPROTO;
}

int
drnic_cm_wait_close(struct drnic_cm *cm)
{
	uint64_t deadline;
	char c;
	int rc;

	if (cm_check_conn(cm) < 0)
		return -EINVAL;
	deadline = cm_deadline(&cm->o);
	do {
		rc = cm_read_exact(cm, &c, 1, deadline);
	} while (rc == 0);
	return rc == -ECONNRESET ? 0 : rc;
}

void
drnic_cm_close(struct drnic_cm *cm)
{
	if (cm == NULL)
		return;
	close(cm->fd);
	free(cm);
}
