/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client half of the control channel to drnicd (lib/internal/rpc.h):
 * the connection, the greeting that tells the EAL prefix to attach to, and
 * one request at a time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "env_private.h"
#include "rpc.h"

static pthread_mutex_t rpc_lock = PTHREAD_MUTEX_INITIALIZER;
static int rpc_fd = -1;
static bool rpc_dead;   /* the daemon closed the channel */

bool
rpc_attached(void)
{
	return __atomic_load_n(&rpc_fd, __ATOMIC_ACQUIRE) >= 0;
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
	else if (rpc_dead)
		rc = -EPIPE;
	else
		rc = rpc_exchange(rpc_fd, m, fd);
	if (rc == -EPIPE)
		rpc_dead = true;
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
	rpc_dead = false;
	__atomic_store_n(&rpc_fd, fd, __ATOMIC_RELEASE);
	return 0;
}

void
env_rpc_close(void)
{
	pthread_mutex_lock(&rpc_lock);
	if (rpc_fd >= 0)
		close(rpc_fd);
	__atomic_store_n(&rpc_fd, -1, __ATOMIC_RELEASE);
	rpc_dead = false;
	pthread_mutex_unlock(&rpc_lock);
}
