/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control verbs of a process attached to drnicd (verbs_remote.h): each
 * is one request to the daemon, which creates the object in the memory both
 * processes map at the same address and answers with that address.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "handle.h"
#include "mr_pin.h"
#include "verbs_objects.h"
#include "verbs_remote.h"

/* The daemon's devices this process has opened, and its event queue for each. */
static struct {
	struct drnic_device *dev;
	struct drnic_async_queue *async;
} remote_devs[8];
static pthread_mutex_t remote_lock = PTHREAD_MUTEX_INITIALIZER;

/* rpc_call(); a failure of the channel itself, or a refusal, as rte_errno. */
static int
remote_call(struct rpc_msg *m)
{
	int rc = rpc_call(m);

	if (rc < 0)
		rte_errno = -rc;
	return rc;
}

/* A constructor whose object this process may already hold (a second open
 * of an XRC domain or target QP): adopted once. */
static void *
remote_open(struct rpc_msg *m, enum handle_kind kind, enum rpc_op undo)
{
	void *obj;

	if (remote_call(m) < 0)
		return NULL;
	obj = (void *)(uintptr_t)m->obj[0];
	if (handle_live(obj, kind))
		return obj;
	return rpc_adopt(obj, kind, undo);
}

struct drnic_xrcd *
remote_open_xrcd(struct drnic_device *dev, int fd, int oflags)
{
	struct rpc_msg m;

	if (!handle_live(dev, HANDLE_DEVICE)) {
		rte_errno = EINVAL;
		return NULL;
	}
	rpc_msg_init(&m, RPC_XRCD_OPEN);
	m.obj[0] = (uintptr_t)dev;
	m.arg[0] = (uint64_t)(int64_t)fd;   /* the daemon looks at it through /proc */
	m.arg[1] = (uint64_t)(uint32_t)oflags;
	return remote_open(&m, HANDLE_XRCD, RPC_XRCD_CLOSE);
}

int
remote_close_xrcd(struct drnic_xrcd *x)
{
	return rpc_destroy(x, HANDLE_XRCD, RPC_XRCD_CLOSE);
}

struct drnic_qp *
remote_open_qp(struct drnic_xrcd *x, uint32_t qp_num)
{
	struct rpc_msg m;

	if (!handle_live(x, HANDLE_XRCD)) {
		rte_errno = EINVAL;
		return NULL;
	}
	rpc_msg_init(&m, RPC_QP_OPEN);
	m.obj[0] = (uintptr_t)x;
	m.arg[0] = qp_num;
	return remote_open(&m, HANDLE_QP, RPC_QP_DESTROY);
}

struct drnic_device *
remote_device_open(const char *name)
{
	struct drnic_device *dev;
	struct drnic_async_queue *q;
	struct rpc_msg m;
	unsigned int i, slot = RTE_DIM(remote_devs);
	size_t len = strlen(name);

	if (len >= RPC_BLOB_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&remote_lock);
	for (i = 0; i < RTE_DIM(remote_devs); i++) {
		if (remote_devs[i].dev == NULL) {
			if (slot == RTE_DIM(remote_devs))
				slot = i;
		} else if (strcmp(remote_devs[i].dev->cfg.name, name) == 0) {
			pthread_mutex_unlock(&remote_lock);
			rte_errno = EEXIST;
			return NULL;
		}
	}
	if (slot == RTE_DIM(remote_devs)) {
		pthread_mutex_unlock(&remote_lock);
		rte_errno = ENOMEM;
		return NULL;
	}
	/* This process's queue of the device's events (its objects' by
	 * default, and the port's), the daemon's object with its eventfd. */
	q = drnic_async_queue_create(0);
	if (q == NULL) {
		pthread_mutex_unlock(&remote_lock);
		return NULL;
	}
	rpc_msg_init(&m, RPC_DEV_GET);
	memcpy(m.blob, name, len + 1);
	m.blob_len = (uint32_t)len + 1;
	m.obj[1] = (uintptr_t)q;
	if (remote_call(&m) < 0) {
		(void)drnic_async_queue_destroy(q);
		pthread_mutex_unlock(&remote_lock);
		return NULL;
	}
	dev = (struct drnic_device *)(uintptr_t)m.obj[0];
	if (handle_add(dev, HANDLE_DEVICE) < 0) {
		rpc_msg_init(&m, RPC_DEV_PUT);
		m.obj[0] = (uintptr_t)dev;
		(void)rpc_call(&m);
		(void)drnic_async_queue_destroy(q);
		pthread_mutex_unlock(&remote_lock);
		rte_errno = ENOMEM;
		return NULL;
	}
	remote_devs[slot].dev = dev;
	remote_devs[slot].async = q;
	pthread_mutex_unlock(&remote_lock);
	return dev;
}

int
remote_device_close(struct drnic_device *dev)
{
	unsigned int i;
	int rc;

	pthread_mutex_lock(&remote_lock);
	rc = rpc_destroy(dev, HANDLE_DEVICE, RPC_DEV_PUT);
	if (rc == 0) {
		for (i = 0; i < RTE_DIM(remote_devs); i++) {
			if (remote_devs[i].dev != dev)
				continue;
			(void)drnic_async_queue_destroy(remote_devs[i].async);
			remote_devs[i].dev = NULL;
			remote_devs[i].async = NULL;
		}
	}
	pthread_mutex_unlock(&remote_lock);
	return rc;
}

struct drnic_async_queue *
remote_device_async_queue(struct drnic_device *dev)
{
	struct drnic_async_queue *q = NULL;
	unsigned int i;

	pthread_mutex_lock(&remote_lock);
	for (i = 0; i < RTE_DIM(remote_devs); i++)
		if (remote_devs[i].dev == dev && dev != NULL)
			q = remote_devs[i].async;
	pthread_mutex_unlock(&remote_lock);
	return q;
}

int
remote_device_async_sub(struct drnic_device *dev, struct drnic_async_queue *q, bool on)
{
	struct rpc_msg m;

	if (!handle_live(dev, HANDLE_DEVICE) || !handle_live(q, HANDLE_ASYNC_QUEUE))
		return -EINVAL;
	rpc_msg_init(&m, on ? RPC_ASYNC_SUBSCRIBE : RPC_ASYNC_UNSUBSCRIBE);
	m.obj[0] = (uintptr_t)dev;
	m.obj[1] = (uintptr_t)q;
	return rpc_call(&m);
}

int
remote_device_list(struct drnic_config *cfgs, unsigned int max)
{
	struct rpc_msg m;
	unsigned int n;
	int rc;

	RTE_BUILD_BUG_ON(sizeof(*cfgs) > RPC_BLOB_MAX);
	for (n = 0;; n++) {
		rpc_msg_init(&m, RPC_DEV_LIST);
		m.arg[0] = n;
		rc = rpc_call(&m);
		if (rc == -ENOENT)
			return (int)n;
		if (rc < 0)
			return rc;
		if (m.blob_len != sizeof(*cfgs))
			return -EPROTO;
		if (n < max)
			memcpy(&cfgs[n], m.blob, sizeof(*cfgs));
	}
}

void *
remote_alloc(size_t size, size_t align, int socket_id)
{
	struct rpc_msg m;

	rpc_msg_init(&m, RPC_MEM_ALLOC);
	m.arg[0] = size;
	m.arg[1] = align;
	m.arg[2] = (uint64_t)(int64_t)socket_id;
	if (remote_call(&m) < 0)
		return NULL;
	return (void *)(uintptr_t)m.obj[0];
}

void
remote_free(void *buf)
{
	struct rpc_msg m;

	if (buf == NULL)
		return;
	rpc_msg_init(&m, RPC_MEM_FREE);
	m.obj[0] = (uintptr_t)buf;
	(void)rpc_call(&m);
}

struct drnic_pd *
remote_alloc_pd(struct drnic_device *dev)
{
	struct rpc_msg m;

	if (!handle_live(dev, HANDLE_DEVICE)) {
		rte_errno = EINVAL;
		return NULL;
	}
	rpc_msg_init(&m, RPC_PD_ALLOC);
	m.obj[0] = (uintptr_t)dev;
	if (remote_call(&m) < 0)
		return NULL;
	return rpc_adopt((void *)(uintptr_t)m.obj[0], HANDLE_PD, RPC_PD_FREE);
}

int
remote_dealloc_pd(struct drnic_pd *pd)
{
	return rpc_destroy(pd, HANDLE_PD, RPC_PD_FREE);
}

/* A registration's range, before the daemon maps it: the program's own
 * memory (malloc, mmap; not DPDK's) is shared from now on, so that the
 * daemon can map it, and @p m says so (arg[4] RPC_MR_OWN). 0 or
 * mr_pin_share()'s error. */
static int
remote_mr_share(struct rpc_msg *m, void *addr, size_t length)
{
	int rc;

	if (length == 0 || rte_mem_virt2memseg_list(addr) != NULL)
		return 0;
	rc = mr_pin_share(addr, length);
	if (rc == 0)
		m->arg[4] = RPC_MR_OWN;
	return rc;
}

struct drnic_mr *
remote_reg_mr(struct drnic_pd *pd, void *addr, size_t length, uint64_t iova,
	      unsigned int access)
{
	struct rpc_msg m;
	int rc;

	if (!handle_live(pd, HANDLE_PD)) {
		rte_errno = EINVAL;
		return NULL;
	}
	rpc_msg_init(&m, RPC_MR_REG);
	m.obj[0] = (uintptr_t)pd;
	m.arg[0] = (uintptr_t)addr;
	m.arg[1] = length;
	m.arg[2] = iova;
	m.arg[3] = access;
	rc = remote_mr_share(&m, addr, length);
	if (rc < 0) {
		rte_errno = -rc;
		return NULL;
	}
	if (remote_call(&m) < 0)
		return NULL;
	return rpc_adopt((void *)(uintptr_t)m.obj[0], HANDLE_MR, RPC_MR_DEREG);
}

int
remote_rereg_mr(struct drnic_mr *mr, unsigned int flags, struct drnic_pd *pd, void *addr,
		size_t length, unsigned int access)
{
	struct rpc_msg m;

	if (!handle_live(mr, HANDLE_MR) ||
	    ((flags & DRNIC_REREG_MR_CHANGE_PD) && !handle_live(pd, HANDLE_PD)))
		return -EINVAL;
	rpc_msg_init(&m, RPC_MR_REREG);
	m.obj[0] = (uintptr_t)mr;
	m.obj[1] = (flags & DRNIC_REREG_MR_CHANGE_PD) ? (uintptr_t)pd : 0;
	m.arg[0] = (uintptr_t)addr;
	m.arg[1] = length;
	m.arg[2] = access;
	m.arg[3] = flags;
	if ((flags & DRNIC_REREG_MR_CHANGE_TRANSLATION) && addr != NULL &&
	    (uintptr_t)addr + length >= (uintptr_t)addr) {
		int rc = remote_mr_share(&m, addr, length);

		if (rc < 0)
			return rc;
	}
	return rpc_call(&m);
}

int
remote_dereg_mr(struct drnic_mr *mr)
{
	return rpc_destroy(mr, HANDLE_MR, RPC_MR_DEREG);
}

/* A constructor on @p pd with @p blob (@p len bytes); the reply's blob back
 * into it when @p back. */
static void *
remote_create_on(enum rpc_op op, enum rpc_op undo, struct drnic_pd *pd, void *blob, size_t len,
		 bool back, uint64_t arg0, enum handle_kind kind)
{
	struct rpc_msg m;

	if (!handle_live(pd, HANDLE_PD) || len > RPC_BLOB_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	rpc_msg_init(&m, op);
	m.obj[0] = (uintptr_t)pd;
	m.arg[0] = arg0;
	if (len > 0)
		memcpy(m.blob, blob, len);
	m.blob_len = (uint32_t)len;
	if (remote_call(&m) < 0)
		return NULL;
	if (back && m.blob_len == len)
		memcpy(blob, m.blob, len);
	return rpc_adopt((void *)(uintptr_t)m.obj[0], kind, undo);
}

/* A modify of @p obj (live as @p kind): @p blob and @p mask. */
static int
remote_modify(enum rpc_op op, void *obj, enum handle_kind kind, const void *blob, size_t len,
	      int mask)
{
	struct rpc_msg m;

	if (blob == NULL || !handle_live(obj, kind) || len > RPC_BLOB_MAX)
		return -EINVAL;
	rpc_msg_init(&m, op);
	m.obj[0] = (uintptr_t)obj;
	m.arg[0] = (uint64_t)(uint32_t)mask;
	memcpy(m.blob, blob, len);
	m.blob_len = (uint32_t)len;
	return rpc_call(&m);
}

struct drnic_srq *
remote_create_srq(struct drnic_pd *pd, struct drnic_srq_init_attr *attr)
{
	return remote_create_on(RPC_SRQ_CREATE, RPC_SRQ_DESTROY, pd, attr, sizeof(*attr), true, 0,
				HANDLE_SRQ);
}

int
remote_modify_srq(struct drnic_srq *srq, struct drnic_srq_attr *attr, int mask)
{
	return remote_modify(RPC_SRQ_MODIFY, srq, HANDLE_SRQ, attr, sizeof(*attr), mask);
}

int
remote_destroy_srq(struct drnic_srq *srq)
{
	return rpc_destroy(srq, HANDLE_SRQ, RPC_SRQ_DESTROY);
}

struct drnic_ah *
remote_create_ah(struct drnic_pd *pd, struct drnic_ah_attr *attr)
{
	return remote_create_on(RPC_AH_CREATE, RPC_AH_DESTROY, pd, attr, sizeof(*attr), false, 0,
				HANDLE_AH);
}

int
remote_destroy_ah(struct drnic_ah *ah)
{
	return rpc_destroy(ah, HANDLE_AH, RPC_AH_DESTROY);
}

struct drnic_mw *
remote_alloc_mw(struct drnic_pd *pd, enum drnic_mw_type type)
{
	return remote_create_on(RPC_MW_ALLOC, RPC_MW_DEALLOC, pd, NULL, 0, false,
				(uint64_t)type, HANDLE_MW);
}

int
remote_dealloc_mw(struct drnic_mw *mw)
{
	return rpc_destroy(mw, HANDLE_MW, RPC_MW_DEALLOC);
}

int
remote_mcast(struct drnic_qp *qp, const union drnic_gid *gid, bool attach)
{
	struct rpc_msg m;

	if (gid == NULL || !handle_live(qp, HANDLE_QP))
		return -EINVAL;
	rpc_msg_init(&m, RPC_MCAST);
	m.obj[0] = (uintptr_t)qp;
	m.arg[0] = attach;
	memcpy(m.blob, gid, sizeof(*gid));
	m.blob_len = sizeof(*gid);
	return rpc_call(&m);
}

struct drnic_qp *
remote_create_qp(struct drnic_pd *pd, struct drnic_qp_init_attr *attr)
{
	struct rpc_msg m;

	RTE_BUILD_BUG_ON(sizeof(*attr) > RPC_BLOB_MAX);
	/* An XRC target QP has a domain and no PD. */
	if (attr == NULL || (attr->qp_type == DRNIC_QPT_XRC_RECV ?
			     !handle_live(attr->xrcd, HANDLE_XRCD) : !handle_live(pd, HANDLE_PD))) {
		rte_errno = EINVAL;
		return NULL;
	}
	rpc_msg_init(&m, RPC_QP_CREATE);
	m.obj[0] = (uintptr_t)pd;
	memcpy(m.blob, attr, sizeof(*attr));
	m.blob_len = sizeof(*attr);
	if (remote_call(&m) < 0)
		return NULL;
	if (m.blob_len == sizeof(*attr))
		attr->cap = ((const struct drnic_qp_init_attr *)m.blob)->cap;
	return rpc_adopt((void *)(uintptr_t)m.obj[0], HANDLE_QP, RPC_QP_DESTROY);
}

int
remote_modify_qp(struct drnic_qp *qp, struct drnic_qp_attr *attr, int attr_mask)
{
	return remote_modify(RPC_QP_MODIFY, qp, HANDLE_QP, attr, sizeof(*attr), attr_mask);
}

int
remote_destroy_qp(struct drnic_qp *qp)
{
	return rpc_destroy(qp, HANDLE_QP, RPC_QP_DESTROY);
}
