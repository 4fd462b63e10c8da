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

/* One exchange on @p fd; 0 or a negative errno (-EPIPE: the daemon went). */
static int
rpc_exchange(int fd, struct rpc_msg *m)
{
	struct rpc_msg rep;
	ssize_t n;

	do {
		n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? -EPIPE : -errno;
	do {
		n = recv(fd, &rep, sizeof(rep), 0);
	} while (n < 0 && errno == EINTR);
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return -EPIPE;
	if (n < 0)
		return -errno;
	/* Text after the header is a control tool's; a library never asks. */
	if ((size_t)n < offsetof(struct rpc_msg, blob) || rep.op != m->op ||
	    rep.blob_len > RPC_BLOB_MAX)
		return -EPROTO;
	*m = rep;
	return 0;
}

int
rpc_call(struct rpc_msg *m)
{
	int rc;

	pthread_mutex_lock(&rpc_lock);
	if (rpc_fd < 0)
		rc = -ENOTCONN;
	else if (rpc_dead)
		rc = -EPIPE;
	else
		rc = rpc_exchange(rpc_fd, m);
	if (rc == -EPIPE)
		rpc_dead = true;
	pthread_mutex_unlock(&rpc_lock);
	return rc < 0 ? rc : m->rc;
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
	rc = rpc_exchange(fd, &m);
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
