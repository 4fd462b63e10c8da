/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnicd's side of the control channel (lib/internal/rpc.h): one request at
 * a time per attached process, done with the public verbs as a program
 * would, on objects the daemon owns on that process's behalf.
 *
 * What a process may name is what this connection was given: every object
 * in a request is looked up in the connection's own table before it is
 * followed, so one process's PDs, MRs, CQs and QPs are nothing to another.
 * A registration must lie inside a buffer the same process got from
 * RPC_MEM_ALLOC: the daemon's memory and other processes' are not its to
 * register. When the connection closes (exit, kill -9, a crash) the daemon
 * destroys what the process left: QPs first (their engines stop touching
 * its memory), then MRs, CQs, PDs, buffers and device opens.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rte_errno.h>

#include "drnic_engine.h"
#include "drnicd.h"
#include "verbs_daemon.h"
#include "verbs_objects.h"

static const char *const dobj_names[DOBJ_KIND_MAX] = {
	[DOBJ_DEV] = "device", [DOBJ_PD] = "pd", [DOBJ_MEM] = "buffer",
	[DOBJ_MR] = "mr", [DOBJ_CQ] = "cq", [DOBJ_QP] = "qp",
	[DOBJ_ASYNC] = "event queue", [DOBJ_CHANNEL] = "channel", [DOBJ_SRQ] = "srq",
	[DOBJ_AH] = "ah", [DOBJ_MW] = "mw", [DOBJ_XRCD] = "xrcd",
	[DOBJ_CM_ID] = "cm id", [DOBJ_CM_CHANNEL] = "cm channel",
	[DOBJ_DOORBELL] = "doorbell ring",
};

const char *
drnicd_obj_name(unsigned int kind)
{
	return kind < DOBJ_KIND_MAX && dobj_names[kind] != NULL ? dobj_names[kind] : "?";
}

/* ---- the connection's objects ------------------------------------------- */

int
dclient_find(const struct dclient *c, uint64_t p, enum dobj_kind kind)
{
	unsigned int i;

	if (p == 0)
		return -1;
	for (i = 0; i < c->nb_objs; i++)
		if (c->objs[i].p == p && c->objs[i].kind == kind)
			return (int)i;
	return -1;
}

int
dclient_add(struct dclient *c, void *p, enum dobj_kind kind, uint64_t len)
{
	if (c->nb_objs == c->cap_objs) {
		unsigned int cap = c->cap_objs ? c->cap_objs * 2 : 32;
		struct dobj *n = realloc(c->objs, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		c->objs = n;
		c->cap_objs = cap;
	}
	c->objs[c->nb_objs++] = (struct dobj){ .p = (uintptr_t)p, .kind = (uint8_t)kind,
					       .len = len };
	return 0;
}

void
dclient_del(struct dclient *c, int idx)
{
	c->objs[idx] = c->objs[--c->nb_objs];
}

static unsigned int
client_count(const struct dclient *c, enum dobj_kind kind)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->nb_objs; i++)
		n += c->objs[i].kind == kind;
	return n;
}

/* [addr, addr + len) inside one buffer this process was given. */
static bool
client_owns_range(const struct dclient *c, uint64_t addr, uint64_t len)
{
	unsigned int i;

	if (addr + len < addr)
		return false;
	for (i = 0; i < c->nb_objs; i++)
		if (c->objs[i].kind == DOBJ_MEM && addr >= c->objs[i].p &&
		    addr + len <= c->objs[i].p + c->objs[i].len)
			return true;
	return false;
}

struct dclient *
drnicd_client_new(struct drnicd *d, int fd)
{
	struct dclient *c = calloc(1, sizeof(*c));
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	char path[64];
	FILE *f;

	if (c == NULL)
		return NULL;
	c->fd = fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
		c->pid = cred.pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->pid);
	f = fopen(path, "r");
	if (f != NULL) {
		if (fgets(c->comm, sizeof(c->comm), f) != NULL)
			c->comm[strcspn(c->comm, "\n")] = '\0';
		fclose(f);
	}
	c->next = d->clients;
	d->clients = c;
	return c;
}

/* Destroy one object the process left; 0 or the destroy's error. */
static int
client_free_obj(struct dclient *c, const struct dobj *o)
{
	switch (o->kind) {
	case DOBJ_QP: {
		struct drnic_qp *qp = (struct drnic_qp *)o->p;

		/* Events it took and can no longer acknowledge hold nothing. */
		atomic_store_explicit(&qp->events_unacked, 0, memory_order_release);
		return drnic_destroy_qp(qp);
	}
	case DOBJ_MR:
		return drnic_dereg_mr((struct drnic_mr *)o->p);
	case DOBJ_CQ:
		return drnic_cq_destroy((struct drnic_cq *)o->p);
	case DOBJ_PD:
		return drnic_dealloc_pd((struct drnic_pd *)o->p);
	case DOBJ_MEM:
		drnic_free((void *)o->p);
		return 0;
	case DOBJ_DEV: {
		unsigned int i;

		/* Its queues hear no more of this device. */
		for (i = 0; i < c->nb_objs; i++)
			if (c->objs[i].kind == DOBJ_ASYNC)
				(void)drnic_device_async_unsubscribe((struct drnic_device *)o->p,
						(struct drnic_async_queue *)c->objs[i].p);
		return 0;
	}
	case DOBJ_ASYNC:
		if ((struct drnic_async_queue *)o->p == c->async)
			c->async = NULL;
		return drnic_async_queue_destroy((struct drnic_async_queue *)o->p);
	case DOBJ_CHANNEL:
		return drnic_destroy_comp_channel((struct drnic_comp_channel *)o->p);
	case DOBJ_SRQ: {
		struct drnic_srq *srq = (struct drnic_srq *)o->p;

		atomic_store_explicit(&srq->events_unacked, 0, memory_order_release);
		return drnic_destroy_srq(srq);
	}
	case DOBJ_AH:
		return drnic_destroy_ah((struct drnic_ah *)o->p);
	case DOBJ_MW:
		return drnic_dealloc_mw((struct drnic_mw *)o->p);
	case DOBJ_XRCD:
		return drnic_close_xrcd((struct drnic_xrcd *)o->p);
	case DOBJ_CM_ID:
	case DOBJ_CM_CHANNEL:
		return drnicd_cm_free(o);
	case DOBJ_DOORBELL: {
		struct ddoorbell *b = (struct ddoorbell *)o->p;

		verbs_db_ring_free(b->dev, b->idx, b->ring);
		free(b);
		return 0;
	}
	default:
		return -EINVAL;
	}
}

void
drnicd_client_drop(struct drnicd *d, struct dclient *c)
{
	/* CM ids first (a connection is disconnected while its QP lives). */
	static const enum dobj_kind order[] = { DOBJ_CM_ID, DOBJ_QP, DOBJ_MW, DOBJ_AH, DOBJ_SRQ, DOBJ_XRCD,
						DOBJ_MR, DOBJ_CQ, DOBJ_PD, DOBJ_MEM, DOBJ_CHANNEL,
						DOBJ_CM_CHANNEL, DOBJ_DOORBELL, DOBJ_DEV,
						DOBJ_ASYNC };
	unsigned int n[DOBJ_KIND_MAX] = { 0 }, k, i, left = 0;
	bool owned = false;
	struct dclient **pp;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);

	for (i = 0; i < c->nb_objs; i++)
		owned |= c->objs[i].kind != DOBJ_DEV && c->objs[i].kind != DOBJ_ASYNC &&
			 c->objs[i].kind != DOBJ_DOORBELL;   /* the daemon's own making */
	for (k = 0; k < RTE_DIM(order); k++) {
		for (i = 0; i < c->nb_objs; i++) {
			int rc;

			if (c->objs[i].kind != order[k])
				continue;
			rc = client_free_obj(c, &c->objs[i]);
			if (rc < 0) {
				left++;
				fprintf(stderr, "drnicd: pid %d: %s %#" PRIxPTR " not freed: %s\n",
					(int)c->pid, dobj_names[order[k]], c->objs[i].p,
					strerror(-rc));
				continue;
			}
			n[order[k]]++;
			/* (Its doorbell rings are the daemon's: freed, not reclaimed.) */
			if (order[k] != DOBJ_DEV && order[k] != DOBJ_DOORBELL)
				d->reclaimed[order[k]]++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (owned) {
		d->reclaimed_clients++;
		fprintf(stderr, "drnicd: pid %d (%s) gone: freed %u qp, %u mr, %u cq, %u pd, "
			"%u buffer, %u cm id%s in %.2f ms\n", (int)c->pid, c->comm, n[DOBJ_QP],
			n[DOBJ_MR], n[DOBJ_CQ], n[DOBJ_PD], n[DOBJ_MEM], n[DOBJ_CM_ID],
			left ? " (some not freed)" : "",
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	} else if (c->attached) {
		d->detached_clean++;
		fprintf(stderr, "drnicd: pid %d (%s) detached\n", (int)c->pid, c->comm);
	}
	for (pp = &d->clients; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	close(c->fd);
	free(c->objs);
	free(c);
}

/* ---- requests ---------------------------------------------------------- */

static struct drnic_device *
serve_find_dev(struct drnicd *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->nb_dev; i++)
		if (strcmp(drnic_device_name(d->dev[i]), name) == 0)
			return d->dev[i];
	return NULL;
}

/* NUL-terminated text in the request's blob, or NULL. */
static const char *
serve_blob_str(const struct rpc_msg *m)
{
	if (m->blob_len == 0 || m->blob_len > RPC_BLOB_MAX ||
	    memchr(m->blob, '\0', m->blob_len) == NULL)
		return NULL;
	return (const char *)m->blob;
}

static int
serve_dev_get(struct drnicd *d, struct dclient *c, struct rpc_msg *m)
{
	const char *name = serve_blob_str(m);
	struct drnic_device *dev = name != NULL ? serve_find_dev(d, name) : NULL;
	int rc;

	if (name == NULL)
		return -EINVAL;
	if (dev == NULL)
		return -ENODEV;
	if (dclient_find(c, (uintptr_t)dev, DOBJ_DEV) >= 0)
		return -EEXIST;
	/* The process's queue for this device (RPC_ASYNC_CREATE'd): its
	 * objects' events by default, and the port's. */
	if (dclient_find(c, m->obj[1], DOBJ_ASYNC) < 0)
		return -EINVAL;
	rc = drnic_device_async_subscribe(dev, (struct drnic_async_queue *)m->obj[1]);
	if (rc < 0 && rc != -EEXIST)
		return rc;
	rc = dclient_add(c, dev, DOBJ_DEV, 0);
	if (rc < 0) {
		(void)drnic_device_async_unsubscribe(dev, (struct drnic_async_queue *)m->obj[1]);
		return rc;
	}
	if (c->async == NULL)
		c->async = (struct drnic_async_queue *)m->obj[1];
	m->obj[0] = (uintptr_t)dev;
	return 0;
}

static int
serve_dev_put(struct dclient *c, struct rpc_msg *m)
{
	int i = dclient_find(c, m->obj[0], DOBJ_DEV);
	unsigned int j;

	if (i < 0)
		return -EINVAL;
	/* As drnic_device_close(): not while the process has objects. */
	for (j = 0; j < c->nb_objs; j++)
		if (c->objs[j].kind == DOBJ_PD || c->objs[j].kind == DOBJ_MR ||
		    c->objs[j].kind == DOBJ_QP)
			return -EBUSY;
	(void)client_free_obj(c, &c->objs[i]);
	dclient_del(c, i);
	return 0;
}

/* A constructor's result: recorded as the process's, or undone. */
int
dclient_adopt(struct dclient *c, void *p, enum dobj_kind kind, uint64_t len, struct rpc_msg *m)
{
	struct dobj o = { .p = (uintptr_t)p, .kind = (uint8_t)kind };

	if (p == NULL)
		return rte_errno ? -rte_errno : -ENOMEM;
	if (dclient_add(c, p, kind, len) < 0) {
		(void)client_free_obj(c, &o);
		return -ENOMEM;
	}
	m->obj[0] = (uintptr_t)p;
	return 0;
}

/* A destructor: the process's object, destroyed, forgotten. arg[0] of the
 * reply: 1 when this process still holds it (an XRC domain or target QP
 * it opened more than once). */
int
dclient_destroy(struct dclient *c, struct rpc_msg *m, enum dobj_kind kind)
{
	int i = dclient_find(c, m->obj[0], kind);
	int rc;

	if (i < 0)
		return -EINVAL;
	rc = client_free_obj(c, &c->objs[i]);
	if (rc == 0) {
		dclient_del(c, i);
		m->arg[0] = dclient_find(c, m->obj[0], kind) >= 0;
	}
	return rc;
}

/* RPC_XRCD_OPEN: the process's file, seen through /proc (it must hold it). */
static int
serve_xrcd_open(struct dclient *c, struct rpc_msg *m)
{
	int64_t pfd = (int64_t)m->arg[0];
	struct drnic_xrcd *x;
	char path[64];
	int fd = -1;

	if (dclient_find(c, m->obj[0], DOBJ_DEV) < 0 || m->arg[1] > INT32_MAX ||
	    pfd < -1 || pfd > INT32_MAX)
		return -EINVAL;
	if (pfd >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)c->pid, (int)pfd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -EBADF;
	}
	rte_errno = 0;
	x = drnic_open_xrcd((struct drnic_device *)m->obj[0], fd, (int)m->arg[1]);
	if (fd >= 0)
		close(fd);
	return dclient_adopt(c, x, DOBJ_XRCD, 0, m);
}

static int
serve_cq_create(struct dclient *c, struct rpc_msg *m)
{
	struct drnic_cq_attr a;

	if (m->blob_len != sizeof(a))
		return -EINVAL;
	memcpy(&a, m->blob, sizeof(a));
	if ((a.channel != NULL && dclient_find(c, (uintptr_t)a.channel, DOBJ_CHANNEL) < 0) ||
	    (a.async_queue != NULL && dclient_find(c, (uintptr_t)a.async_queue, DOBJ_ASYNC) < 0))
		return -EINVAL;
	rte_errno = 0;
	return dclient_adopt(c, drnic_cq_create(&a), DOBJ_CQ, 0, m);
}

/*
 * The process's doorbell ring on @p qp's engine, made with its first QP
 * there, given to @p qp: what it posts is queued there, so that its death
 * in the middle of an enqueue stalls nobody else. 0 or a negative errno.
 */
static int
client_qp_doorbell(struct dclient *c, struct drnic_qp *qp)
{
	struct ddoorbell *b;
	unsigned int i;

	for (i = 0; i < c->nb_objs; i++) {
		b = (struct ddoorbell *)c->objs[i].p;
		if (c->objs[i].kind == DOBJ_DOORBELL && b->dev == qp->dev && b->idx == qp->engine) {
			verbs_qp_set_db_ring(qp, b->ring);
			return 0;
		}
	}
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return -ENOMEM;
	b->dev = qp->dev;
	b->idx = qp->engine;
	b->ring = verbs_db_ring_new(qp->dev, qp->engine, (uint64_t)c->pid);
	if (b->ring == NULL) {
		int rc = rte_errno ? -rte_errno : -ENOMEM;

		free(b);
		return rc;
	}
	if (dclient_add(c, b, DOBJ_DOORBELL, 0) < 0) {
		verbs_db_ring_free(b->dev, b->idx, b->ring);
		free(b);
		return -ENOMEM;
	}
	verbs_qp_set_db_ring(qp, b->ring);
	return 0;
}

static int
serve_qp_create(struct dclient *c, struct rpc_msg *m)
{
	struct drnic_qp_init_attr a;
	int rc;

	if (m->blob_len != sizeof(a))
		return -EINVAL;
	memcpy(&a, m->blob, sizeof(a));
	/* Every object it names is this process's; an XRC target QP has a
	 * domain and no PD (nor CQs: drnic_create_qp() ignores them). */
	if (a.qp_type == DRNIC_QPT_XRC_RECV ?
	    dclient_find(c, (uintptr_t)a.xrcd, DOBJ_XRCD) < 0 :
	    dclient_find(c, m->obj[0], DOBJ_PD) < 0)
		return -EINVAL;
	if (a.qp_type == DRNIC_QPT_XRC_RECV) {
		m->obj[0] = 0;
		a.send_cq = a.recv_cq = NULL;
		a.srq = NULL;
	}
	if ((a.srq != NULL && dclient_find(c, (uintptr_t)a.srq, DOBJ_SRQ) < 0) ||
	    (a.send_cq != NULL && dclient_find(c, (uintptr_t)a.send_cq, DOBJ_CQ) < 0) ||
	    (a.recv_cq != NULL && dclient_find(c, (uintptr_t)a.recv_cq, DOBJ_CQ) < 0) ||
	    (a.qp_type != DRNIC_QPT_XRC_RECV && a.xrcd != NULL))
		return -EINVAL;
	if (a.async_queue == NULL)
		a.async_queue = c->async;   /* the process's events, nobody else's */
	else if (dclient_find(c, (uintptr_t)a.async_queue, DOBJ_ASYNC) < 0)
		return -EINVAL;
	rte_errno = 0;
	rc = dclient_adopt(c, drnic_create_qp((struct drnic_pd *)m->obj[0], &a), DOBJ_QP, 0, m);
	/* Posts ring the process's own doorbell ring (an XRC target QP has no
	 * send queue, and may outlive its creator in another's hands). */
	if (rc == 0 && a.qp_type != DRNIC_QPT_XRC_RECV) {
		rc = client_qp_doorbell(c, (struct drnic_qp *)(uintptr_t)m->obj[0]);
		if (rc < 0) {
			int keep = rc;

			(void)dclient_destroy(c, m, DOBJ_QP);
			return keep;
		}
	}
	if (rc == 0)
		memcpy(m->blob, &a, sizeof(a));   /* the capacities it got */
	return rc;
}

static int
serve_srq_create(struct dclient *c, struct rpc_msg *m)
{
	struct drnic_srq_init_attr a;
	int rc;

	if (m->blob_len != sizeof(a) || dclient_find(c, m->obj[0], DOBJ_PD) < 0)
		return -EINVAL;
	memcpy(&a, m->blob, sizeof(a));
	if ((a.xrcd != NULL && dclient_find(c, (uintptr_t)a.xrcd, DOBJ_XRCD) < 0) ||
	    (a.cq != NULL && dclient_find(c, (uintptr_t)a.cq, DOBJ_CQ) < 0))
		return -EINVAL;
	if (a.async_queue == NULL)
		a.async_queue = c->async;
	else if (dclient_find(c, (uintptr_t)a.async_queue, DOBJ_ASYNC) < 0)
		return -EINVAL;
	rte_errno = 0;
	rc = dclient_adopt(c, drnic_create_srq((struct drnic_pd *)m->obj[0], &a), DOBJ_SRQ, 0, m);
	if (rc == 0)
		memcpy(m->blob, &a, sizeof(a));   /* the capacities it got */
	return rc;
}

static int
serve_qp_modify(struct dclient *c, struct rpc_msg *m)
{
	struct drnic_qp_attr a;

	if (m->blob_len != sizeof(a) || dclient_find(c, m->obj[0], DOBJ_QP) < 0)
		return -EINVAL;
	memcpy(&a, m->blob, sizeof(a));
	return drnic_modify_qp((struct drnic_qp *)m->obj[0], &a, (int)(uint32_t)m->arg[0]);
}

static int
serve_mr_reg(struct dclient *c, struct rpc_msg *m)
{
	if (dclient_find(c, m->obj[0], DOBJ_PD) < 0 || m->arg[3] > UINT32_MAX ||
	    m->arg[4] > RPC_MR_OWN)
		return -EINVAL;
	if (m->arg[4] == RPC_MR_OWN) {
		/* The program's own pages, mapped again from its process:
		 * what it has mapped and nothing else. */
		rte_errno = 0;
		return dclient_adopt(c, verbs_reg_mr_of((struct drnic_pd *)m->obj[0], c->pid,
						      (void *)(uintptr_t)m->arg[0], m->arg[1],
						      m->arg[2], (unsigned int)m->arg[3]),
				   DOBJ_MR, 0, m);
	}
	/* Only memory this process was given: not the daemon's, not another's. */
	if (m->arg[1] != 0 && !client_owns_range(c, m->arg[0], m->arg[1]))
		return -EFAULT;
	rte_errno = 0;
	return dclient_adopt(c, drnic_reg_mr_iova((struct drnic_pd *)m->obj[0],
						(void *)(uintptr_t)m->arg[0], m->arg[1], m->arg[2],
						(unsigned int)m->arg[3]), DOBJ_MR, 0, m);
}

/* A rereg: of this process's MR, onto its PD, of memory it may name. */
static int
serve_mr_rereg(struct dclient *c, struct rpc_msg *m)
{
	unsigned int flags = (unsigned int)m->arg[3];
	bool own = m->arg[4] == RPC_MR_OWN;

	if (dclient_find(c, m->obj[0], DOBJ_MR) < 0 || m->arg[2] > UINT32_MAX ||
	    m->arg[3] > UINT32_MAX || m->arg[4] > RPC_MR_OWN ||
	    ((flags & DRNIC_REREG_MR_CHANGE_PD) && dclient_find(c, m->obj[1], DOBJ_PD) < 0))
		return -EINVAL;
	if ((flags & DRNIC_REREG_MR_CHANGE_TRANSLATION) && !own && m->arg[1] != 0 &&
	    !client_owns_range(c, m->arg[0], m->arg[1]))
		return -EFAULT;
	return verbs_rereg_mr_of((struct drnic_mr *)(uintptr_t)m->obj[0], c->pid, flags,
				 (struct drnic_pd *)(uintptr_t)m->obj[1],
				 (void *)(uintptr_t)m->arg[0], m->arg[1], (unsigned int)m->arg[2],
				 own);
}

/* ---- the control tool's text ------------------------------------------- */

static void
serve_list(struct drnicd *d, FILE *f)
{
	const struct dclient *c;
	unsigned int i, k;

	fprintf(f, "drnicd pid %d, socket %s, EAL prefix %s\n", (int)getpid(), d->socket_path,
		d->file_prefix);
	for (i = 0; i < d->nb_dev; i++) {
		const struct drnic_device *dev = d->dev[i];

		fprintf(f, "device %s: engines %u, qp %u, mr %u, pd %u, link %s\n",
			drnic_device_name(dev), dev->nb_engines, dev->nb_qp, dev->nb_mr, dev->nb_pd,
			atomic_load(&dev->link_up) ? "up" : "down");
	}
	for (c = d->clients; c != NULL; c = c->next) {
		if (!c->attached)
			continue;   /* a control tool, as this one */
		fprintf(f, "process %d (%s): requests %" PRIu64, (int)c->pid, c->comm,
			c->requests);
		for (k = 1; k < DOBJ_KIND_MAX; k++)
			fprintf(f, ", %s %u", dobj_names[k], client_count(c, k));
		fprintf(f, "\n");
		for (i = 0; i < c->nb_objs; i++) {
			if (c->objs[i].kind == DOBJ_QP) {
				const struct drnic_qp *qp = (const struct drnic_qp *)c->objs[i].p;

				fprintf(f, "  qp %u: type %u, state %u\n", qp->qp_num, qp->type,
					atomic_load(&qp->state));
			} else if (c->objs[i].kind == DOBJ_MR) {
				const struct drnic_mr *mr = (const struct drnic_mr *)c->objs[i].p;

				fprintf(f, "  mr lkey %#x: %zu bytes\n", mr->lkey, mr->length);
			}
		}
	}
	fprintf(f, "counters: attached %" PRIu64 ", detached clean %" PRIu64
		", reclaimed processes %" PRIu64, d->attached_total, d->detached_clean,
		d->reclaimed_clients);
	for (k = 1; k < DOBJ_KIND_MAX; k++)
		if (k != DOBJ_DEV && k != DOBJ_DOORBELL)
			fprintf(f, ", reclaimed %s %" PRIu64, dobj_names[k], d->reclaimed[k]);
	fprintf(f, ", refused requests %" PRIu64 "\n", d->refused);
}

static int
serve_stats(struct drnicd *d, const struct rpc_msg *m, FILE *f)
{
	const char *name = serve_blob_str(m);
	unsigned int i, n = 0;

	for (i = 0; i < d->nb_dev; i++) {
		if (name != NULL && name[0] != '\0' &&
		    strcmp(name, drnic_device_name(d->dev[i])) != 0)
			continue;
		drnic_device_stats_print(d->dev[i], NULL, f);
		n++;
	}
	return n > 0 ? 0 : -ENODEV;
}

/* ---- one request ------------------------------------------------------- */

/* One request; *fd: a descriptor the reply is to carry (the daemon keeps
 * its own), or -1. */
static int
serve_one(struct drnicd *d, struct dclient *c, struct rpc_msg *m, FILE *text, int *fd)
{
	switch (m->op) {
	case RPC_HELLO:
		if (m->arg[0] != RPC_VERSION || c->attached)
			return -EPROTO;
		c->attached = true;
		d->attached_total++;
		fprintf(stderr, "drnicd: pid %d (%s) attached\n", (int)c->pid, c->comm);
		snprintf((char *)m->blob, RPC_BLOB_MAX, "%s", d->file_prefix);
		m->blob_len = (uint32_t)strlen(d->file_prefix) + 1;
		m->arg[0] = (uint64_t)getpid();
		return 0;
	case RPC_DEV_GET:
		return serve_dev_get(d, c, m);
	case RPC_DEV_PUT:
		return serve_dev_put(c, m);
	case RPC_PD_ALLOC:
		if (dclient_find(c, m->obj[0], DOBJ_DEV) < 0)
			return -EINVAL;
		rte_errno = 0;
		return dclient_adopt(c, drnic_alloc_pd((struct drnic_device *)m->obj[0]), DOBJ_PD,
				   0, m);
	case RPC_PD_FREE:
		return dclient_destroy(c, m, DOBJ_PD);
	case RPC_MEM_ALLOC:
		if (m->arg[0] == 0 || m->arg[0] > ((uint64_t)1 << 40))
			return -EINVAL;
		rte_errno = 0;
		return dclient_adopt(c, drnic_alloc(m->arg[0], m->arg[1], (int)(int64_t)m->arg[2]),
				   DOBJ_MEM, m->arg[0], m);
	case RPC_MEM_FREE:
		return dclient_destroy(c, m, DOBJ_MEM);
	case RPC_MR_REG:
		return serve_mr_reg(c, m);
	case RPC_MR_DEREG:
		return dclient_destroy(c, m, DOBJ_MR);
	case RPC_MR_REREG:
		return serve_mr_rereg(c, m);
	case RPC_CQ_CREATE:
		return serve_cq_create(c, m);
	case RPC_CQ_DESTROY:
		return dclient_destroy(c, m, DOBJ_CQ);
	case RPC_CQ_RESIZE:
		if (dclient_find(c, m->obj[0], DOBJ_CQ) < 0 || m->arg[0] > UINT32_MAX)
			return -EINVAL;
		return drnic_cq_resize((struct drnic_cq *)(uintptr_t)m->obj[0], (uint32_t)m->arg[0]);
	case RPC_QP_CREATE:
		return serve_qp_create(c, m);
	case RPC_QP_MODIFY:
		return serve_qp_modify(c, m);
	case RPC_QP_DESTROY: {
		unsigned int i;

		/* Not while a CM id of the process drives it. */
		for (i = 0; i < c->nb_objs; i++)
			if (c->objs[i].kind == DOBJ_CM_ID && c->objs[i].len == m->obj[0])
				return -EBUSY;
		return dclient_destroy(c, m, DOBJ_QP);
	}
	case RPC_DEV_LIST:
		if (m->arg[0] >= d->nb_dev)
			return -ENOENT;
		RTE_BUILD_BUG_ON(sizeof(struct drnic_config) > RPC_BLOB_MAX);
		memcpy(m->blob, &d->dev[m->arg[0]]->cfg, sizeof(struct drnic_config));
		m->blob_len = sizeof(struct drnic_config);
		return 0;
	case RPC_ASYNC_CREATE: {
		struct drnic_async_queue *q;

		if (m->arg[0] > UINT32_MAX)
			return -EINVAL;
		q = drnic_async_queue_create((uint32_t)m->arg[0]);
		*fd = q != NULL ? drnic_async_queue_fd(q) : -1;
		return dclient_adopt(c, q, DOBJ_ASYNC, 0, m);
	}
	case RPC_ASYNC_DESTROY:
		return dclient_destroy(c, m, DOBJ_ASYNC);
	case RPC_ASYNC_SUBSCRIBE:
	case RPC_ASYNC_UNSUBSCRIBE:
		if (dclient_find(c, m->obj[0], DOBJ_DEV) < 0 ||
		    dclient_find(c, m->obj[1], DOBJ_ASYNC) < 0)
			return -EINVAL;
		return m->op == RPC_ASYNC_SUBSCRIBE ?
			drnic_device_async_subscribe((struct drnic_device *)m->obj[0],
						     (struct drnic_async_queue *)m->obj[1]) :
			drnic_device_async_unsubscribe((struct drnic_device *)m->obj[0],
						       (struct drnic_async_queue *)m->obj[1]);
	case RPC_CHANNEL_CREATE: {
		struct drnic_comp_channel *ch = drnic_create_comp_channel();

		*fd = ch != NULL ? drnic_comp_channel_fd(ch) : -1;
		return dclient_adopt(c, ch, DOBJ_CHANNEL, 0, m);
	}
	case RPC_CHANNEL_DESTROY:
		return dclient_destroy(c, m, DOBJ_CHANNEL);
	case RPC_SRQ_CREATE:
		return serve_srq_create(c, m);
	case RPC_SRQ_MODIFY: {
		struct drnic_srq_attr a;

		if (m->blob_len != sizeof(a) || dclient_find(c, m->obj[0], DOBJ_SRQ) < 0)
			return -EINVAL;
		memcpy(&a, m->blob, sizeof(a));
		return drnic_modify_srq((struct drnic_srq *)m->obj[0], &a, (int)(uint32_t)m->arg[0]);
	}
	case RPC_SRQ_DESTROY:
		return dclient_destroy(c, m, DOBJ_SRQ);
	case RPC_AH_CREATE: {
		struct drnic_ah_attr a;

		if (m->blob_len != sizeof(a) || dclient_find(c, m->obj[0], DOBJ_PD) < 0)
			return -EINVAL;
		memcpy(&a, m->blob, sizeof(a));
		rte_errno = 0;
		return dclient_adopt(c, drnic_create_ah((struct drnic_pd *)m->obj[0], &a), DOBJ_AH, 0,
				   m);
	}
	case RPC_AH_DESTROY:
		return dclient_destroy(c, m, DOBJ_AH);
	case RPC_MW_ALLOC:
		if (dclient_find(c, m->obj[0], DOBJ_PD) < 0 || m->arg[0] > INT32_MAX)
			return -EINVAL;
		rte_errno = 0;
		return dclient_adopt(c, drnic_alloc_mw((struct drnic_pd *)m->obj[0],
						     (enum drnic_mw_type)m->arg[0]), DOBJ_MW, 0, m);
	case RPC_MW_DEALLOC:
		return dclient_destroy(c, m, DOBJ_MW);
	case RPC_MCAST: {
		union drnic_gid g;

		if (m->blob_len != sizeof(g) || dclient_find(c, m->obj[0], DOBJ_QP) < 0)
			return -EINVAL;
		memcpy(&g, m->blob, sizeof(g));
		return m->arg[0] ? drnic_attach_mcast((struct drnic_qp *)m->obj[0], &g, 0) :
				   drnic_detach_mcast((struct drnic_qp *)m->obj[0], &g, 0);
	}
	case RPC_XRCD_OPEN:
		return serve_xrcd_open(c, m);
	case RPC_XRCD_CLOSE:
		return dclient_destroy(c, m, DOBJ_XRCD);
	case RPC_QP_OPEN:
		if (dclient_find(c, m->obj[0], DOBJ_XRCD) < 0 || m->arg[0] > 0xFFFFFF)
			return -EINVAL;
		rte_errno = 0;
		return dclient_adopt(c, drnic_open_qp((struct drnic_xrcd *)m->obj[0],
						    (uint32_t)m->arg[0]), DOBJ_QP, 0, m);
	case RPC_CM_CHANNEL_CREATE ... RPC_CM_STATS:
		return drnicd_serve_cm(c, m, fd);
	case RPC_CTL_LIST:
		serve_list(d, text);
		return 0;
	case RPC_CTL_STATS:
		return serve_stats(d, m, text);
	default:
		return -EOPNOTSUPP;
	}
}

bool
drnicd_client_serve(struct drnicd *d, struct dclient *c)
{
	struct rpc_msg m;
	char *text = NULL;
	size_t text_len = 0;
	struct iovec iov[2];
	struct msghdr mh = { .msg_iov = iov };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	FILE *f;
	ssize_t n;
	int pass = -1;

	do {
		n = recv(c->fd, &m, sizeof(m), MSG_TRUNC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return false;                /* gone (or broken): reclaim */
	if ((size_t)n != sizeof(m) || m.blob_len > RPC_BLOB_MAX) {
		fprintf(stderr, "drnicd: pid %d: malformed request (%zd bytes)\n",
			(int)c->pid, n);
		return false;
	}
	c->requests++;
	f = open_memstream(&text, &text_len);
	if (f == NULL)
		m.rc = -ENOMEM;
	else
		m.rc = serve_one(d, c, &m, f, &pass);
	if (f != NULL)
		fclose(f);
	if (m.rc < 0 && !(m.op == RPC_DEV_LIST && m.rc == -ENOENT))   /* the list's end */
		d->refused++;
	if (text_len > RPC_PACKET_MAX - sizeof(m))
		text_len = RPC_PACKET_MAX - sizeof(m);
	m.text_len = (uint32_t)text_len;
	iov[0] = (struct iovec){ .iov_base = &m, .iov_len = sizeof(m) };
	iov[1] = (struct iovec){ .iov_base = text, .iov_len = text_len };
	mh.msg_iovlen = text_len > 0 ? 2 : 1;
	if (m.rc == 0 && pass >= 0) {
		/* The eventfd, under the process's own number at its end. */
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass, sizeof(int));
	}
	do {
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	free(text);
	return n >= 0;
}
