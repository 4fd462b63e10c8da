/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cq in a process attached to drnicd: completion channels and async
 * event queues are the daemon's, made in the memory both processes map; the
 * eventfd that wakes their consumer comes over the control channel. The
 * daemon's engines write its copy; this process waits on its own, which is
 * the same eventfd under another number: cq_remote_fd() says which.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "cq_engine.h"
#include "cq_private.h"
#include "handle.h"
#include "rpc.h"

#define CQ_REMOTE_FDS 256

static struct {
	const void *obj;
	int fd;
	int kind;      /* HANDLE_COMP_CHANNEL or HANDLE_ASYNC_QUEUE */
} cq_fds[CQ_REMOTE_FDS];
static pthread_mutex_t cq_fds_lock = PTHREAD_MUTEX_INITIALIZER;

int
cq_remote_fd(const void *obj, int shared_fd)
{
	int fd = shared_fd;
	unsigned int i;

	if (!rpc_attached())
		return shared_fd;
	pthread_mutex_lock(&cq_fds_lock);
	for (i = 0; i < RTE_DIM(cq_fds); i++)
		if (cq_fds[i].obj == obj && obj != NULL)
			fd = cq_fds[i].fd;
	pthread_mutex_unlock(&cq_fds_lock);
	return fd;
}

/* Remember @p fd as @p obj's; false when the table is full. */
static bool
cq_remote_fd_add(const void *obj, int fd, int kind)
{
	unsigned int i;

	pthread_mutex_lock(&cq_fds_lock);
	for (i = 0; i < RTE_DIM(cq_fds); i++) {
		if (cq_fds[i].obj == NULL) {
			cq_fds[i].obj = obj;
			cq_fds[i].fd = fd;
			cq_fds[i].kind = kind;
			break;
		}
	}
	pthread_mutex_unlock(&cq_fds_lock);
	return i < RTE_DIM(cq_fds);
}

static void
cq_remote_fd_drop(const void *obj)
{
	unsigned int i;

	pthread_mutex_lock(&cq_fds_lock);
	for (i = 0; i < RTE_DIM(cq_fds); i++) {
		if (cq_fds[i].obj == obj) {
			close(cq_fds[i].fd);
			cq_fds[i].obj = NULL;
		}
	}
	pthread_mutex_unlock(&cq_fds_lock);
}

/* The daemon has gone (the watcher thread): DEVICE_FATAL on every event
 * queue of this process, verbs' word for it, and every sleeper on a
 * completion channel woken (it then finds the daemon gone:
 * drnic_get_cq_event() returns -EIO, as drnic_cq_poll() of an empty CQ). */
static void
cq_remote_gone(void)
{
	struct drnic_async_event ev = { .event_type = DRNIC_EVENT_DEVICE_FATAL };
	const void *queues[CQ_REMOTE_FDS];
	unsigned int i, n = 0;

	pthread_mutex_lock(&cq_fds_lock);
	for (i = 0; i < RTE_DIM(cq_fds); i++) {
		if (cq_fds[i].obj == NULL)
			continue;
		if (cq_fds[i].kind == HANDLE_ASYNC_QUEUE)
			queues[n++] = cq_fds[i].obj;
		else
			(void)eventfd_write(cq_fds[i].fd, 1);
	}
	pthread_mutex_unlock(&cq_fds_lock);
	/* Outside the lock: async_raise() looks the queue's descriptor up. */
	for (i = 0; i < n; i++)
		(void)async_raise((struct drnic_async_queue *)(uintptr_t)queues[i], &ev);
}

void *
cq_remote_create(enum rpc_op op, enum rpc_op undo, uint64_t arg0, int kind)
{
	struct rpc_msg m;
	void *obj;
	int rc, fd;

	rpc_on_daemon_gone(cq_remote_gone);
	rpc_msg_init(&m, op);
	m.arg[0] = arg0;
	rc = rpc_call_fd(&m, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc < 0) {
		rte_errno = -rc;
		return NULL;
	}
	obj = rpc_adopt((void *)(uintptr_t)m.obj[0], kind, undo);
	if (obj == NULL) {
		close(fd);
		return NULL;
	}
	if (!cq_remote_fd_add(obj, fd, kind)) {
		(void)rpc_destroy(obj, kind, undo);
		close(fd);
		rte_errno = ENOMEM;
		return NULL;
	}
	return obj;
}

int
cq_remote_destroy(void *obj, enum rpc_op op, int kind)
{
	int rc = rpc_destroy(obj, kind, op);

	if (rc == 0)
		cq_remote_fd_drop(obj);
	return rc;
}
