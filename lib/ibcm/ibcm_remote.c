/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager of a process attached to drnicd: the daemon runs
 * the GSI agent on QP 1 of its devices and the CM's state, as the kernel's
 * rdma_cm does for every process on a host (one port space, one listener
 * per port, connections between processes on one device). Here every
 * drnic_ibcm_* call is one request (rpc.h's RPC_CM_*), and the process
 * keeps a stand-in for each of its channels and ids: the caller's context,
 * port space and QP type, and the daemon's address of the real one.
 *
 * A channel's fd is the daemon's eventfd itself (passed over the control
 * socket): it counts the events the daemon has queued, so poll / epoll on
 * it works as on a local channel. drnic_ibcm_get_event() takes the next
 * one with a request and waits on that fd between tries.
 *
 * The stand-ins live in ibcm.ids and ibcm.chans under ibcm.lock: a call
 * checks that it was handed one of them before it reads it. A daemon that
 * has gone wakes every channel's waiters; their calls then fail (-EIO from
 * waits, -EPIPE from requests), as the verbs do.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>

#include "ibcm_rdma.h"
#include "rpc.h"
#include "rpc_cm.h"

static bool
ibcm_r_id_live(const struct drnic_ibcm_id *id)
{
	const struct drnic_ibcm_id *o;

	TAILQ_FOREACH(o, &ibcm.ids, next)
		if (o == id)
			return true;
	return false;
}

/* Is @p ch one of the stand-ins (destroyed ones among them while a
 * waiter holds them or they are buried)? */
static bool
ibcm_r_ch_listed(const struct drnic_ibcm_channel *ch)
{
	const struct drnic_ibcm_channel *o;

	TAILQ_FOREACH(o, &ibcm.chans, next)
		if (o == ch)
			return true;
	return false;
}

static bool
ibcm_r_ch_live(const struct drnic_ibcm_channel *ch)
{
	return ibcm_r_ch_listed(ch) && !ch->dead && !ch->dying;
}

static struct drnic_ibcm_id *
ibcm_r_id_by_remote(uint64_t remote)
{
	struct drnic_ibcm_id *o;

	TAILQ_FOREACH(o, &ibcm.ids, next)
		if (o->remote == remote)
			return o;
	return NULL;
}

/* The daemon's address of @p id, 0 when @p id is not a live stand-in. */
static uint64_t
ibcm_r_id(const struct drnic_ibcm_id *id)
{
	uint64_t r = 0;

	if (id == NULL)
		return 0;
	pthread_mutex_lock(&ibcm.lock);
	if (ibcm_r_id_live(id))
		r = id->remote;
	pthread_mutex_unlock(&ibcm.lock);
	return r;
}

static uint64_t
ibcm_r_ch(const struct drnic_ibcm_channel *ch)
{
	uint64_t r = 0;

	if (ch == NULL)
		return 0;
	pthread_mutex_lock(&ibcm.lock);
	if (ibcm_r_ch_live(ch))
		r = ch->remote;
	pthread_mutex_unlock(&ibcm.lock);
	return r;
}

/* ibcm_r_ch(), and when live the caller counted as a waiter on @p ch in
 * the same hold of ibcm.lock: a destroy between the look and the count
 * would free the stand-in under a call that had begun. A destroyed
 * stand-in still listed (a waiter holds it, or buried: ibcm_ch_bury())
 * counts its caller too, with *dead set. */
static uint64_t
ibcm_r_ch_enter(struct drnic_ibcm_channel *ch, bool *dead)
{
	uint64_t r = 0;

	*dead = false;
	pthread_mutex_lock(&ibcm.lock);
	if (ibcm_r_ch_listed(ch) && !ch->dying) {
		r = ch->remote;
		*dead = ch->dead;
		ch->waiters++;
	}
	pthread_mutex_unlock(&ibcm.lock);
	return r;
}

/* The daemon has gone: every waiter on a channel wakes (and fails). */
static void
ibcm_r_gone(void)
{
	struct drnic_ibcm_channel *ch;
	uint64_t one = 1;

	pthread_mutex_lock(&ibcm.lock);
	TAILQ_FOREACH(ch, &ibcm.chans, next)
		if (write(ch->efd, &one, sizeof(one)) != sizeof(one))
			IBCM_LOG(ERR, "channel eventfd write: %s", strerror(errno));
	pthread_mutex_unlock(&ibcm.lock);
}

int
ibcm_r_add_device(struct drnic_device *dev)
{
	struct drnic_ibcm_stats st;
	int rc = ibcm_r_stats(dev, &st);

	/* The daemon's devices have the daemon's CM, or none. */
	return rc == -ENOENT ? -ENOTSUP : rc;
}

int
ibcm_r_stats(struct drnic_device *dev, struct drnic_ibcm_stats *st)
{
	struct rpc_msg m;
	int rc;

	if (dev == NULL || st == NULL)
		return -EINVAL;
	rpc_msg_init(&m, RPC_CM_STATS);
	m.obj[0] = (uintptr_t)dev;
	rc = rpc_call(&m);
	if (rc == 0 && m.blob_len != sizeof(*st))
		rc = -EPROTO;
	if (rc == 0)
		memcpy(st, m.blob, sizeof(*st));
	return rc;
}

struct drnic_ibcm_channel *
ibcm_r_create_channel(void)
{
	struct drnic_ibcm_channel *ch = calloc(1, sizeof(*ch));
	struct rpc_msg m;
	int rc, fd;

	if (ch == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	rpc_on_daemon_gone(ibcm_r_gone);
	rpc_msg_init(&m, RPC_CM_CHANNEL_CREATE);
	rc = rpc_call_fd(&m, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc < 0) {
		free(ch);
		rte_errno = -rc;
		return NULL;
	}
	ch->efd = fd;
	ch->remote = m.obj[0];
	pthread_mutex_init(&ch->lock, NULL);
	TAILQ_INIT(&ch->queue);
	pthread_mutex_lock(&ibcm.lock);
	TAILQ_INSERT_TAIL(&ibcm.chans, ch, next);
	pthread_mutex_unlock(&ibcm.lock);
	return ch;
}

int
ibcm_r_destroy_channel(struct drnic_ibcm_channel *ch)
{
	struct rpc_msg m;
	int rc;

	pthread_mutex_lock(&ibcm.lock);
	if (ch == NULL || !ibcm_r_ch_live(ch)) {
		pthread_mutex_unlock(&ibcm.lock);
		return -EINVAL;
	}
	if (ch->nb_ids > 0) {
		pthread_mutex_unlock(&ibcm.lock);
		return -EBUSY;
	}
	/* Refused to every new call from now. Dead once the daemon has
	 * destroyed its channel: a thread waiting on it then keeps it (and it
	 * stays listed, for a daemon that goes to wake), blocked, as the
	 * kernel's channel keeps a reader blocked when another thread closes
	 * its fd. Until then a waiter is not blocked for good: the daemon
	 * may refuse (its channel may have ids this process has not heard
	 * of yet), and the channel then lives on. */
	ch->dying = true;
	pthread_mutex_unlock(&ibcm.lock);
	rpc_msg_init(&m, RPC_CM_CHANNEL_DESTROY);
	m.obj[0] = ch->remote;
	rc = rpc_call(&m);
	pthread_mutex_lock(&ibcm.lock);
	ch->dying = false;
	if (rc < 0 && rc != -EPIPE) {
		pthread_mutex_unlock(&ibcm.lock);
		return rc;
	}
	ch->dead = true;
	if (ch->waiters > 0) {
		pthread_mutex_unlock(&ibcm.lock);
		return 0;
	}
	pthread_mutex_unlock(&ibcm.lock);
	ibcm_ch_bury(ch);               /* listed until it leaves the grave */
	return 0;
}

/* @p ch's last waiter left it destroyed: it is buried. */
static void
ibcm_r_ch_left(struct drnic_ibcm_channel *ch)
{
	if (ibcm_ch_leave(ch))
		ibcm_ch_bury(ch);
}

/* The stand-in of a request's new id (the listener's channel and context);
 * NULL: none could be made, and the daemon's id is rejected. */
static struct drnic_ibcm_id *
ibcm_r_new_request_id(uint64_t remote, const struct drnic_ibcm_id *l)
{
	struct drnic_ibcm_id *id;
	struct rpc_msg m;

	id = l != NULL ? ibcm_id_alloc(l->ch, l->context, l->ps, l->qp_type) : NULL;
	if (id != NULL) {
		id->remote = remote;
		return id;
	}
	pthread_mutex_unlock(&ibcm.lock);
	IBCM_LOG(ERR, "no memory for a connection request's id: rejected");
	rpc_msg_init(&m, RPC_CM_ID_DESTROY);
	m.obj[0] = remote;
	(void)rpc_call(&m);
	pthread_mutex_lock(&ibcm.lock);
	return NULL;
}

static int ibcm_r_get_event_in(struct drnic_ibcm_channel *ch, uint64_t remote,
			       struct drnic_ibcm_event *ev, int timeout_ms, uint64_t deadline);

int
ibcm_r_get_event(struct drnic_ibcm_channel *ch, struct drnic_ibcm_event *ev, int timeout_ms)
{
	uint64_t deadline, remote;
	bool dead;
	int rc;

	if (ch == NULL || ev == NULL)
		return -EINVAL;
	deadline = ibcm_deadline(timeout_ms);
	remote = ibcm_r_ch_enter(ch, &dead);
	if (remote == 0)
		return -EINVAL;
	rc = dead ? ibcm_ch_late(ch, timeout_ms, deadline) :
	     ibcm_r_get_event_in(ch, remote, ev, timeout_ms, deadline);
	ibcm_r_ch_left(ch);
	return rc;
}

/* ibcm_r_get_event() between ibcm_r_ch_enter() and its leaving. */
static int
ibcm_r_get_event_in(struct drnic_ibcm_channel *ch, uint64_t remote, struct drnic_ibcm_event *ev,
		    int timeout_ms, uint64_t deadline)
{
	struct rpc_msg m;
	int rc;

	for (;;) {
		rpc_msg_init(&m, RPC_CM_GET_EVENT);
		m.obj[0] = remote;
		rc = rpc_call(&m);
		if (rc == -EPIPE || rpc_daemon_gone())
			return -EIO;
		/* Destroyed by another thread meanwhile (the daemon's channel
		 * is gone: its answer is EINVAL): blocked, not failed. While
		 * the destroy waits for the daemon's answer the failure waits
		 * as "no event" does: the daemon may refuse the destroy. */
		if (rc != 0) {
			bool dead, dying;

			pthread_mutex_lock(&ibcm.lock);
			dead = ch->dead;
			dying = ch->dying;
			pthread_mutex_unlock(&ibcm.lock);
			if (dead)
				return ibcm_ch_wait_dead(ch);
			if (dying)
				rc = -EAGAIN;
		}
		if (rc == 0 && m.blob_len != sizeof(*ev))
			return -EPROTO;
		if (rc == 0) {
			struct drnic_ibcm_id *id, *l;

			memcpy(ev, m.blob, sizeof(*ev));
			ev->param.conn.private_data = m.arg[0] ? ev->pdata :
						      (const void *)(uintptr_t)m.arg[1];
			pthread_mutex_lock(&ibcm.lock);
			l = m.obj[2] != 0 ? ibcm_r_id_by_remote(m.obj[2]) : NULL;
			id = ibcm_r_id_by_remote(m.obj[1]);
			if (id == NULL && ev->event == DRNIC_IBCM_EVENT_CONNECT_REQUEST)
				id = ibcm_r_new_request_id(m.obj[1], l);
			pthread_mutex_unlock(&ibcm.lock);
			if (id != NULL) {
				ev->id = id;
				ev->listen_id = l;
				return 0;
			}
			continue;   /* an id this process no longer has: its event goes */
		}
		if (rc != -EAGAIN)
			return rc;
		if (ibcm_wait_efd(ch->efd, timeout_ms, deadline) < 0)
			return -EAGAIN;
	}
}

struct drnic_ibcm_id *
ibcm_r_create_id(struct drnic_ibcm_channel *ch, void *context, enum drnic_ibcm_ps ps,
		 enum drnic_qp_type qp_type)
{
	struct drnic_ibcm_id *id;
	struct rpc_msg m;
	int rc;

	rpc_msg_init(&m, RPC_CM_ID_CREATE);
	m.obj[0] = ibcm_r_ch(ch);
	if (m.obj[0] == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	m.arg[0] = (uint64_t)ps;
	m.arg[1] = (uint64_t)qp_type;
	rc = rpc_call(&m);
	if (rc < 0) {
		rte_errno = -rc;
		return NULL;
	}
	if ((int)qp_type == 0)    /* the type the daemon chose for the port space */
		qp_type = ps == DRNIC_IBCM_PS_UDP || ps == DRNIC_IBCM_PS_IPOIB ?
			  DRNIC_QPT_UD : DRNIC_QPT_RC;
	pthread_mutex_lock(&ibcm.lock);
	id = ibcm_r_ch_live(ch) ? ibcm_id_alloc(ch, context, ps, qp_type) : NULL;
	if (id != NULL)
		id->remote = m.obj[0];
	pthread_mutex_unlock(&ibcm.lock);
	if (id == NULL) {
		m.op = RPC_CM_ID_DESTROY;
		(void)rpc_call(&m);
		rte_errno = ENOMEM;
	}
	return id;
}

int
ibcm_r_destroy_id(struct drnic_ibcm_id *id)
{
	struct rpc_msg m;
	int rc;

	pthread_mutex_lock(&ibcm.lock);
	if (id == NULL || !ibcm_r_id_live(id)) {
		pthread_mutex_unlock(&ibcm.lock);
		return -EINVAL;
	}
	TAILQ_REMOVE(&ibcm.ids, id, next);
	pthread_mutex_unlock(&ibcm.lock);
	rpc_msg_init(&m, RPC_CM_ID_DESTROY);
	m.obj[0] = id->remote;
	rc = rpc_call(&m);
	pthread_mutex_lock(&ibcm.lock);
	if (rc < 0 && rc != -EPIPE) {
		TAILQ_INSERT_TAIL(&ibcm.ids, id, next);
		pthread_mutex_unlock(&ibcm.lock);
		return rc;
	}
	id->ch->nb_ids--;
	pthread_mutex_unlock(&ibcm.lock);
	free(id);
	return 0;
}

int
ibcm_r_query(const struct drnic_ibcm_id *id, struct rpc_cm_id_info *info)
{
	struct rpc_msg m;
	int rc;

	rpc_msg_init(&m, RPC_CM_ID_QUERY);
	m.obj[0] = ibcm_r_id(id);
	if (m.obj[0] == 0 || info == NULL)
		return -EINVAL;
	rc = rpc_call(&m);
	if (rc == 0 && m.blob_len != sizeof(*info))
		rc = -EPROTO;
	if (rc == 0)
		memcpy(info, m.blob, sizeof(*info));
	return rc;
}

int
ibcm_r_migrate_id(struct drnic_ibcm_id *id, struct drnic_ibcm_channel *ch)
{
	struct rpc_msg m;
	int rc;

	rpc_msg_init(&m, RPC_CM_MIGRATE);
	m.obj[0] = ibcm_r_id(id);
	m.obj[1] = ibcm_r_ch(ch);
	if (m.obj[0] == 0 || m.obj[1] == 0)
		return -EINVAL;
	rc = rpc_call(&m);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&ibcm.lock);
	if (ibcm_r_id_live(id) && ibcm_r_ch_live(ch) && id->ch != ch) {
		id->ch->nb_ids--;
		ch->nb_ids++;
		id->ch = ch;
	}
	pthread_mutex_unlock(&ibcm.lock);
	return 0;
}

/* A request on @p id with @p len bytes of blob. */
static int
ibcm_r_call(int op, const struct drnic_ibcm_id *id, const void *blob, size_t len,
	    uint64_t arg0, uint64_t arg1)
{
	struct rpc_msg m;

	rpc_msg_init(&m, (enum rpc_op)op);
	m.obj[0] = ibcm_r_id(id);
	if (m.obj[0] == 0 || len > RPC_BLOB_MAX)
		return -EINVAL;
	if (len > 0)
		memcpy(m.blob, blob, len);
	m.blob_len = (uint32_t)len;
	m.arg[0] = arg0;
	m.arg[1] = arg1;
	return rpc_call(&m);
}

/* A sockaddr's length, checked before it is copied. */
static int
ibcm_r_sa_len(const struct sockaddr *sa)
{
	if (sa == NULL)
		return -EINVAL;
	if (sa->sa_family == AF_INET)
		return (int)sizeof(struct sockaddr_in);
	if (sa->sa_family == AF_INET6)
		return (int)sizeof(struct sockaddr_in6);
	return -EAFNOSUPPORT;
}

int
ibcm_r_bind_addr(struct drnic_ibcm_id *id, const struct sockaddr *addr)
{
	int len = ibcm_r_sa_len(addr);

	return len < 0 ? len : ibcm_r_call(RPC_CM_BIND, id, addr, (size_t)len, 0, 0);
}

int
ibcm_r_resolve_addr(struct drnic_ibcm_id *id, const struct sockaddr *src,
		    const struct sockaddr *dst, int timeout_ms)
{
	struct sockaddr_storage two[2];
	int sl = src != NULL ? ibcm_r_sa_len(src) : 0;
	int dl = ibcm_r_sa_len(dst);

	if (sl < 0 || dl < 0)
		return sl < 0 ? sl : dl;
	memset(two, 0, sizeof(two));
	if (src != NULL)
		memcpy(&two[0], src, (size_t)sl);
	memcpy(&two[1], dst, (size_t)dl);
	return ibcm_r_call(RPC_CM_RESOLVE_ADDR, id, two, sizeof(two),
			   (uint64_t)(int64_t)timeout_ms, src != NULL);
}

int
ibcm_r_conn(int op, struct drnic_ibcm_id *id, const struct drnic_ibcm_conn_param *param)
{
	struct rpc_cm_conn c;

	memset(&c, 0, sizeof(c));
	if (param != NULL) {
		if (param->private_data_len > 0 && param->private_data == NULL)
			return -EINVAL;
		c.param = *param;
		c.param.private_data = NULL;
		if (param->private_data_len > 0)
			memcpy(c.pdata, param->private_data, param->private_data_len);
	}
	return ibcm_r_call(op, id, &c, sizeof(c), param != NULL, 0);
}

int
ibcm_r_reject(struct drnic_ibcm_id *id, const void *pdata, uint8_t len)
{
	if (len > 0 && pdata == NULL)
		return -EINVAL;
	return ibcm_r_call(RPC_CM_REJECT, id, pdata, len, 0, 0);
}

int
ibcm_r_simple(int op, struct drnic_ibcm_id *id, uint64_t arg0)
{
	return ibcm_r_call(op, id, NULL, 0, arg0, 0);
}

int
ibcm_r_attach_qp(struct drnic_ibcm_id *id, struct drnic_qp *qp)
{
	struct rpc_msg m;

	rpc_msg_init(&m, RPC_CM_ATTACH_QP);
	m.obj[0] = ibcm_r_id(id);
	m.obj[1] = (uintptr_t)qp;
	if (m.obj[0] == 0 || qp == NULL)
		return -EINVAL;
	return rpc_call(&m);
}

int
ibcm_r_init_qp_attr(struct drnic_ibcm_id *id, struct drnic_qp_attr *attr, int *mask)
{
	struct rpc_msg m;
	int rc;

	if (attr == NULL || mask == NULL)
		return -EINVAL;
	rpc_msg_init(&m, RPC_CM_INIT_QP_ATTR);
	m.obj[0] = ibcm_r_id(id);
	if (m.obj[0] == 0)
		return -EINVAL;
	memcpy(m.blob, attr, sizeof(*attr));
	m.blob_len = sizeof(*attr);
	rc = rpc_call(&m);
	if (rc == 0 && m.blob_len != sizeof(*attr))
		rc = -EPROTO;
	if (rc == 0) {
		memcpy(attr, m.blob, sizeof(*attr));
		*mask = (int)(uint32_t)m.arg[0];
	}
	return rc;
}

int
ibcm_r_set_option(struct drnic_ibcm_id *id, enum drnic_ibcm_option opt, const void *val,
		  size_t len)
{
	if (val == NULL || len > sizeof(uint64_t))
		return -EINVAL;
	return ibcm_r_call(RPC_CM_SET_OPTION, id, val, len, (uint64_t)opt, 0);
}

int
ibcm_r_mcast(struct drnic_ibcm_id *id, const struct sockaddr *addr, bool join, void *context)
{
	int len = ibcm_r_sa_len(addr);

	return len < 0 ? len : ibcm_r_call(RPC_CM_MCAST, id, addr, (size_t)len, join,
					   (uintptr_t)context);
}
