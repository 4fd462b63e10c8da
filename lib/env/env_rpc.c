/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client half of the control channel to drnicd (lib/internal/rpc.h):
 * the connection, the greeting that tells the EAL prefix to attach to, and
 * one request at a time.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <rte_errno.h>

#include "env_private.h"
#include "handle.h"
#include "rpc.h"

static pthread_mutex_t rpc_lock = PTHREAD_MUTEX_INITIALIZER;
static int rpc_fd = -1;
static atomic_bool rpc_dead;   /* the daemon closed the channel */

/* The watcher: sleeps until the daemon's end closes (or ours does). */
#define RPC_MAX_HOOKS 8
static void (*rpc_hooks[RPC_MAX_HOOKS])(void);
static unsigned int rpc_nb_hooks;
static pthread_t rpc_watcher;
static int rpc_stop_fd = -1;
static bool rpc_watching;

bool
rpc_attached(void)
{
	return __atomic_load_n(&rpc_fd, __ATOMIC_ACQUIRE) >= 0;
}

bool
rpc_daemon_gone(void)
{
	return atomic_load_explicit(&rpc_dead, memory_order_acquire);
}

void
rpc_on_daemon_gone(void (*fn)(void))
{
	unsigned int i;

	pthread_mutex_lock(&rpc_lock);
	for (i = 0; i < rpc_nb_hooks; i++)
		if (rpc_hooks[i] == fn)
			break;
	if (i == rpc_nb_hooks && rpc_nb_hooks < RPC_MAX_HOOKS)
		rpc_hooks[rpc_nb_hooks++] = fn;
	pthread_mutex_unlock(&rpc_lock);
}

/* The watcher, once: mark the daemon gone and run the hooks. (A call that
 * finds it gone first only marks it: it may hold locks a hook takes.) */
static void
rpc_gone(void)
{
	unsigned int i, n;

	atomic_store_explicit(&rpc_dead, true, memory_order_release);
	pthread_mutex_lock(&rpc_lock);
	n = rpc_nb_hooks;
	pthread_mutex_unlock(&rpc_lock);
	for (i = 0; i < n; i++)
		rpc_hooks[i]();
}

/* Waits for a hang-up only (no POLLIN: the replies are the callers'). */
static void *
rpc_watch(void *arg)
{
	struct pollfd p[2];

	(void)arg;
	p[0] = (struct pollfd){ .fd = rpc_fd, .events = POLLRDHUP };
	p[1] = (struct pollfd){ .fd = rpc_stop_fd, .events = POLLIN };
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[1].revents)
			return NULL;    /* this process detaches */
		if (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
			rpc_gone();
			return NULL;
		}
	}
}

/* One exchange on @p fd; 0 or a negative errno (-EPIPE: the daemon went).
 * A descriptor in the reply goes to *passed (NULL: closed). */
static int
rpc_exchange(int fd, struct rpc_msg *m, int *passed)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct rpc_msg rep;
	struct iovec iov = { .iov_base = &rep, .iov_len = sizeof(rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;
	int got = -1;
	ssize_t n;

	do {
		n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? -EPIPE : -errno;
	do {
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return -EPIPE;
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&got, CMSG_DATA(cm), sizeof(int));
	if (passed != NULL)
		*passed = got;
	else if (got >= 0)
		close(got);
	/* Text after the header is a control tool's; a library never asks. */
	if ((size_t)n < offsetof(struct rpc_msg, blob) || rep.op != m->op ||
	    rep.blob_len > RPC_BLOB_MAX) {
		if (passed != NULL && got >= 0)
			close(got);
		if (passed != NULL)
			*passed = -1;
		return -EPROTO;
	}
	*m = rep;
	return 0;
}

int
rpc_call_fd(struct rpc_msg *m, int *fd)
{
	int rc;

	if (fd != NULL)
		*fd = -1;
	pthread_mutex_lock(&rpc_lock);
	if (rpc_fd < 0)
		rc = -ENOTCONN;
	else if (rpc_daemon_gone())
		rc = -EPIPE;
	else
		rc = rpc_exchange(rpc_fd, m, fd);
	if (rc == -EPIPE)
		atomic_store_explicit(&rpc_dead, true, memory_order_release);
	pthread_mutex_unlock(&rpc_lock);
	if (rc == 0 && m->rc < 0 && fd != NULL && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return rc < 0 ? rc : m->rc;
}

int
rpc_call(struct rpc_msg *m)
{
	return rpc_call_fd(m, NULL);
}

void *
rpc_adopt(void *obj, int kind, enum rpc_op undo)
{
	struct rpc_msg m;

	if (handle_add(obj, (enum handle_kind)kind) == 0)
		return obj;
	rpc_msg_init(&m, undo);
	m.obj[0] = (uintptr_t)obj;
	(void)rpc_call(&m);
	rte_errno = ENOMEM;
	return NULL;
}

int
rpc_destroy(void *obj, int kind, enum rpc_op op)
{
	struct rpc_msg m;
	int rc;

	if (handle_take(obj, (enum handle_kind)kind) < 0)
		return -EINVAL;
	rpc_msg_init(&m, op);
	m.obj[0] = (uintptr_t)obj;
	rc = rpc_call(&m);
	if ((rc < 0 && rc != -EPIPE) || (rc == 0 && m.arg[0] == 1))
		(void)handle_add(obj, (enum handle_kind)kind);  /* cannot fail: its slot is free */
	return rc == -EPIPE ? 0 : rc;
}

int
env_rpc_connect(const char *path, char *prefix, size_t prefix_len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rpc_msg m;
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	if (rpc_fd >= 0)
		return -EALREADY;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rpc_msg_init(&m, RPC_HELLO);
	m.arg[0] = RPC_VERSION;
	m.arg[1] = (uint64_t)getpid();
	rc = rpc_exchange(fd, &m, NULL);
	if (rc == 0)
		rc = m.rc;
	if (rc == 0 && (m.blob_len == 0 || m.blob_len >= prefix_len ||
			memchr(m.blob, '\0', m.blob_len) == NULL))
		rc = -EPROTO;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	snprintf(prefix, prefix_len, "%s", (const char *)m.blob);
	atomic_store(&rpc_dead, false);
	__atomic_store_n(&rpc_fd, fd, __ATOMIC_RELEASE);
	rpc_stop_fd = eventfd(0, EFD_CLOEXEC);
	rpc_watching = rpc_stop_fd >= 0 &&
		       pthread_create(&rpc_watcher, NULL, rpc_watch, NULL) == 0;
	if (rpc_watching)
		pthread_setname_np(rpc_watcher, "drnic-rpc-watch");
	return 0;
}

void
env_rpc_close(void)
{
	if (rpc_watching) {
		(void)eventfd_write(rpc_stop_fd, 1);
		pthread_join(rpc_watcher, NULL);
		rpc_watching = false;
	}
	if (rpc_stop_fd >= 0)
		close(rpc_stop_fd);
	rpc_stop_fd = -1;
	pthread_mutex_lock(&rpc_lock);
	if (rpc_fd >= 0)
		close(rpc_fd);
	__atomic_store_n(&rpc_fd, -1, __ATOMIC_RELEASE);
	atomic_store(&rpc_dead, false);
	pthread_mutex_unlock(&rpc_lock);
}
