/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA CM (drnic_ibcm.h) on the IB CM protocol (ibcm_proto.h) and the
 * GSI agent (ibcm_gsi.h): devices and their agent threads, event channels,
 * ids and their port spaces. The connection steps (connect, listen,
 * accept ... and what the protocol reports) are in ibcm_conn.c, addresses
 * in ibcm_addr.c. Locking: ibcm_rdma.h.
 *
 * The agent thread of a device waits in epoll on three fds: the GSI
 * agent's (completions of QP 1), a timerfd set to the protocol's next
 * timer, and an eventfd the API kicks when it changed the timers or asked
 * for something the agent finishes (address resolution). On any of them
 * it takes the lock and runs ibcm_gsi_process() (MADs of the CM class go
 * to ibcm_proto_rx()), ibcm_proto_timer() and the pending address
 * resolutions.
 *
 * Inline progress: the device's engines move only when some thread runs
 * them. When the process's progress helper (lib/progress) runs, it runs
 * them, and QP 1's completion channel wakes the agent as in dedicated
 * mode. Without a helper the agent never sleeps longer than a
 * millisecond: each round runs ibcm_gsi_process(), which runs the inline
 * engines once, so MADs arrive within about a millisecond. While an
 * address resolution waits for ARP / ND it also looks every millisecond.
 * In dedicated mode it sleeps until one of its fds fires.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_random.h>
#include <rte_tailq.h>

#include "drnic_progress.h"
#include "ibcm_rdma.h"
#include "rpc.h"
#include "rpc_cm.h"
#include "verbs_objects.h"

RTE_LOG_REGISTER_SUFFIX(ibcm_rdma_logtype, ibcm.rdma, NOTICE);

struct ibcm_global ibcm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.devs = TAILQ_HEAD_INITIALIZER(ibcm.devs),
	.ids = TAILQ_HEAD_INITIALIZER(ibcm.ids),
	.chans = TAILQ_HEAD_INITIALIZER(ibcm.chans),
	.grave = TAILQ_HEAD_INITIALIZER(ibcm.grave),
};

static const char *const ibcm_id_state_names[IBCM_ID_STATE_COUNT] = {
	[IBCM_ID_IDLE] = "idle",
	[IBCM_ID_ADDR_QUERY] = "addr_query",
	[IBCM_ID_ADDR_RESOLVED] = "addr_resolved",
	[IBCM_ID_ROUTE_QUERY] = "route_query",
	[IBCM_ID_ROUTE_RESOLVED] = "route_resolved",
	[IBCM_ID_CONNECT] = "connect",
	[IBCM_ID_CONNECT_RESPONSE] = "connect_response",
	[IBCM_ID_ACCEPT] = "accept",
	[IBCM_ID_ESTABLISHED] = "established",
	[IBCM_ID_DISCONNECT] = "disconnect",
	[IBCM_ID_ADDR_BOUND] = "addr_bound",
	[IBCM_ID_LISTEN] = "listen",
	[IBCM_ID_DEVICE_REMOVAL] = "device_removal",
	[IBCM_ID_ERROR] = "error",
};

const char *
ibcm_id_state_str(enum ibcm_id_state s)
{
	if ((unsigned int)s >= IBCM_ID_STATE_COUNT || ibcm_id_state_names[s] == NULL)
		return "unknown";
	return ibcm_id_state_names[s];
}

uint64_t
ibcm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- event channels ------------------------------------------------------ */

struct drnic_ibcm_channel *
drnic_ibcm_create_channel(void)
{
	if (rpc_attached())
		return ibcm_r_create_channel();
	struct drnic_ibcm_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ch->efd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ch->efd < 0) {
		rte_errno = errno == EMFILE || errno == ENFILE ? EMFILE : ENOMEM;
		free(ch);
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	TAILQ_INIT(&ch->queue);
	return ch;
}

/* The events still queued on @p ch, and its eventfd's count of them. */
static void
ibcm_ch_drain(struct drnic_ibcm_channel *ch)
{
	struct ibcm_qev *q;
	uint64_t v;

	pthread_mutex_lock(&ch->lock);
	while ((q = TAILQ_FIRST(&ch->queue)) != NULL) {
		TAILQ_REMOVE(&ch->queue, q, next);
		if (read(ch->efd, &v, sizeof(v)) != sizeof(v))
			IBCM_LOG(ERR, "channel eventfd read: %s", strerror(errno));
		free(q);
	}
	pthread_mutex_unlock(&ch->lock);
}

/* Close and free @p ch (out of every list, no waiter), then its wrapper. */
static void
ibcm_ch_free(struct drnic_ibcm_channel *ch)
{
	void (*release)(void *) = ch->release;
	void *arg = ch->release_arg;

	close(ch->efd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	if (release != NULL)
		release(arg);
}

void
ibcm_ch_bury(struct drnic_ibcm_channel *ch)
{
	struct drnic_ibcm_channel *o, *gone = NULL;

	pthread_mutex_lock(&ibcm.lock);
	if (ch->buried) {
		/* A late call left it between the destroy's unlock and its
		 * bury, and buried it first (ibcm_ch_leave() saw it dead). */
		pthread_mutex_unlock(&ibcm.lock);
		return;
	}
	ch->buried = true;
	TAILQ_INSERT_TAIL(&ibcm.grave, ch, grave_next);
	if (++ibcm.nb_buried > DRNIC_IBCM_CHANNELS_KEPT) {
		TAILQ_FOREACH(o, &ibcm.grave, grave_next) {
			if (o->waiters == 0) {
				gone = o;
				break;
			}
		}
	}
	if (gone != NULL) {
		TAILQ_REMOVE(&ibcm.grave, gone, grave_next);
		ibcm.nb_buried--;
		if (gone->remote != 0)          /* attached: a stand-in, listed */
			TAILQ_REMOVE(&ibcm.chans, gone, next);
	}
	pthread_mutex_unlock(&ibcm.lock);
	if (gone != NULL)
		ibcm_ch_free(gone);
}

void
drnic_ibcm_channel_on_release(struct drnic_ibcm_channel *ch, void (*fn)(void *), void *arg)
{
	if (ch == NULL)
		return;
	ch->release = fn;
	ch->release_arg = arg;
}

int
drnic_ibcm_destroy_channel(struct drnic_ibcm_channel *ch)
{
	bool waited;

	if (rpc_attached())
		return ibcm_r_destroy_channel(ch);
	if (ch == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (ch->nb_ids > 0) {
		pthread_mutex_unlock(&ibcm.lock);
		return -EBUSY;
	}
	/* A thread waiting on it keeps it, blocked, as the kernel's channel
	 * keeps a reader blocked when another thread closes its fd. */
	waited = ch->waiters > 0;
	ch->dead = true;
	pthread_mutex_unlock(&ibcm.lock);
	ibcm_ch_drain(ch);
	if (!waited)
		ibcm_ch_bury(ch);
	return 0;
}

bool
ibcm_ch_dead(struct drnic_ibcm_channel *ch)
{
	bool dead;

	pthread_mutex_lock(&ibcm.lock);
	dead = ch->dead;
	pthread_mutex_unlock(&ibcm.lock);
	return dead;
}

int
ibcm_ch_wait_dead(struct drnic_ibcm_channel *ch)
{
	struct pollfd pfd = { .fd = ch->efd, .events = POLLIN };
	uint64_t v;

	/* Nothing queues on it any more; a daemon that goes writes its fd.
	 * A count left on it (events the daemon had queued when it destroyed
	 * its channel) is taken, or poll would return at once forever. */
	for (;;) {
		(void)poll(&pfd, 1, -1);
		if (rpc_attached() && rpc_daemon_gone())
			return -EIO;
		if ((pfd.revents & POLLIN) && read(ch->efd, &v, sizeof(v)) != sizeof(v))
			IBCM_LOG(ERR, "channel eventfd read: %s", strerror(errno));
	}
}

int
ibcm_ch_late(struct drnic_ibcm_channel *ch, int timeout_ms, uint64_t deadline)
{
	uint64_t now;

	if (timeout_ms < 0)
		return ibcm_ch_wait_dead(ch);
	while (timeout_ms > 0 && (now = ibcm_now()) < deadline)
		(void)poll(NULL, 0, (int)((deadline - now + 999999) / 1000000));
	return -EAGAIN;
}

int
drnic_ibcm_channel_fd(const struct drnic_ibcm_channel *ch)
{
	return ch == NULL ? -EINVAL : ch->efd;
}

static void
ibcm_efd_add(struct drnic_ibcm_channel *ch)
{
	uint64_t one = 1;

	if (write(ch->efd, &one, sizeof(one)) != sizeof(one))
		IBCM_LOG(ERR, "channel eventfd write: %s", strerror(errno));
}

static void
ibcm_efd_take(struct drnic_ibcm_channel *ch)
{
	uint64_t v;

	/* The count equals the queue length (both under ch->lock): this
	 * read never blocks, even on a blocking fd. */
	if (read(ch->efd, &v, sizeof(v)) != sizeof(v))
		IBCM_LOG(ERR, "channel eventfd read: %s", strerror(errno));
}

/* Queue @p ev on @p ch (under ibcm.lock). */
static void
ibcm_queue(struct drnic_ibcm_channel *ch, const struct drnic_ibcm_event *ev, bool pdata_inline)
{
	struct ibcm_qev *q = malloc(sizeof(*q));

	if (q == NULL) {
		IBCM_LOG(ERR, "no memory for event %s: lost", drnic_ibcm_event_str(ev->event));
		return;
	}
	q->ev = *ev;
	q->pdata_inline = pdata_inline;
	pthread_mutex_lock(&ch->lock);
	TAILQ_INSERT_TAIL(&ch->queue, q, next);
	ibcm_efd_add(ch);
	pthread_mutex_unlock(&ch->lock);
}

void
ibcm_id_event_full(struct drnic_ibcm_id *id, struct drnic_ibcm_event *ev, const void *pdata,
		   size_t len)
{
	if (len > DRNIC_IBCM_PDATA_MAX)
		len = DRNIC_IBCM_PDATA_MAX;
	ev->id = id;
	if (pdata != NULL && len > 0)
		memcpy(ev->pdata, pdata, len);
	ev->param.conn.private_data = NULL;
	ev->param.conn.private_data_len = (uint8_t)len;
	ibcm_queue(id->ch, ev, len > 0);
}

void
ibcm_queue_raw(struct drnic_ibcm_id *id, struct drnic_ibcm_event *ev)
{
	ev->id = id;
	ibcm_queue(id->ch, ev, false);
}

void
ibcm_id_event(struct drnic_ibcm_id *id, enum drnic_ibcm_event_type type, int status,
	      const void *pdata, size_t len)
{
	struct drnic_ibcm_event ev;

	memset(&ev, 0, offsetof(struct drnic_ibcm_event, pdata));
	ev.event = type;
	ev.status = status;
	ibcm_id_event_full(id, &ev, pdata, len);
}

/* Take @p id's queued events off @p ch into @p out (under ch's lock). */
static void
ibcm_channel_take(struct drnic_ibcm_channel *ch, const struct drnic_ibcm_id *id,
		  struct ibcm_qev_list *out)
{
	struct ibcm_qev *q, *t;

	pthread_mutex_lock(&ch->lock);
	RTE_TAILQ_FOREACH_SAFE(q, &ch->queue, next, t) {
		if (q->ev.id != id && q->ev.listen_id != id)
			continue;
		TAILQ_REMOVE(&ch->queue, q, next);
		ibcm_efd_take(ch);
		TAILQ_INSERT_TAIL(out, q, next);
	}
	pthread_mutex_unlock(&ch->lock);
}

uint64_t
ibcm_deadline(int timeout_ms)
{
	return timeout_ms > 0 ? ibcm_now() + (uint64_t)timeout_ms * 1000000u : 0;
}

int
ibcm_wait_efd(int efd, int timeout_ms, uint64_t deadline)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	int wait_ms = -1;

	if (timeout_ms == 0)
		return -EAGAIN;
	if (timeout_ms > 0) {
		uint64_t now = ibcm_now();

		if (now >= deadline)
			return -EAGAIN;
		wait_ms = (int)((deadline - now + 999999) / 1000000);
	}
	(void)poll(&pfd, 1, wait_ms);
	return 0;
}

int
drnic_ibcm_get_event(struct drnic_ibcm_channel *ch, struct drnic_ibcm_event *ev, int timeout_ms)
{
	uint64_t deadline;
	struct ibcm_qev *q;
	int rc;

	if (rpc_attached())
		return ibcm_r_get_event(ch, ev, timeout_ms);
	if (ch == NULL || ev == NULL)
		return -EINVAL;
	deadline = ibcm_deadline(timeout_ms);
	ibcm_ch_enter(ch);
	for (;;) {
		pthread_mutex_lock(&ch->lock);
		q = TAILQ_FIRST(&ch->queue);
		if (q != NULL) {
			TAILQ_REMOVE(&ch->queue, q, next);
			ibcm_efd_take(ch);
		}
		pthread_mutex_unlock(&ch->lock);
		if (q != NULL)
			break;
		rc = ibcm_ch_dead(ch) ? ibcm_ch_late(ch, timeout_ms, deadline) :
		     ibcm_wait_efd(ch->efd, timeout_ms, deadline);
		if (rc < 0) {
			if (ibcm_ch_leave(ch))
				ibcm_ch_bury(ch);
			return rc;
		}
	}
	if (ibcm_ch_leave(ch))          /* destroyed after this event was taken */
		ibcm_ch_bury(ch);
	*ev = q->ev;
	if (q->pdata_inline)
		ev->param.conn.private_data = ev->pdata;  /* = param.ud.private_data */
	free(q);
	return 0;
}

/* ---- devices and their agent threads ------------------------------------ */

static struct ibcm_dev *
ibcm_dev_find(const struct drnic_device *dev)
{
	struct ibcm_dev *d;

	TAILQ_FOREACH(d, &ibcm.devs, next)
		if (d->dev == dev)
			return d;
	return NULL;
}

void
ibcm_dev_kick(struct ibcm_dev *d)
{
	uint64_t one = 1;

	if (d != NULL && write(d->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		IBCM_LOG(ERR, "agent wake-up: %s", strerror(errno));
}

/* The protocol's send op (under ibcm.lock). */
static int
ibcm_dev_send(void *ctx, const struct ibcm_peer *dst, const uint8_t *mad)
{
	struct ibcm_dev *d = ctx;

	return ibcm_gsi_send(d->gsi, dst, mad, DRNIC_MAD_LEN);
}

/* The GSI agent's receive callback: inside ibcm_gsi_process(), under
 * ibcm.lock. Drops are counted by the protocol. */
static void
ibcm_dev_rx(void *ctx, const uint8_t *mad, size_t len, const struct ibcm_peer *src)
{
	struct ibcm_dev *d = ctx;

	(void)ibcm_proto_rx(d->proto, mad, len, src, ibcm_now());
}

static void
ibcm_dev_arm_timer(struct ibcm_dev *d, uint64_t next, uint64_t now)
{
	struct itimerspec its;

	if (next == d->timer_armed)
		return;
	memset(&its, 0, sizeof(its));
	if (next != UINT64_MAX) {
		uint64_t at = next > now ? next : now + 1;

		its.it_value.tv_sec = (time_t)(at / 1000000000u);
		its.it_value.tv_nsec = (long)(at % 1000000000u);
	}
	if (timerfd_settime(d->timerfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		d->timer_armed = next;
}

static void *
ibcm_agent_main(void *arg)
{
	struct ibcm_dev *d = arg;
	struct epoll_event evs[4];
	bool warned = false;

	for (;;) {
		uint64_t now, next, v;
		bool waiting, poll_engine;
		int n, i, rc;

		pthread_mutex_lock(&ibcm.lock);
		if (d->stop) {
			pthread_mutex_unlock(&ibcm.lock);
			break;
		}
		rc = ibcm_gsi_process(d->gsi);
		if (rc < 0 && !warned) {
			IBCM_LOG(ERR, "%s: GSI agent: %s", drnic_device_name(d->dev),
				 strerror(-rc));
			warned = true;
		}
		now = ibcm_now();
		ibcm_proto_timer(d->proto, now);
		waiting = ibcm_addr_poll(d, now);
		next = ibcm_proto_next_timer(d->proto);
		pthread_mutex_unlock(&ibcm.lock);

		ibcm_dev_arm_timer(d, next, now);
		/* Inline engines that nobody else runs: run them every ms. A
		 * progress helper runs them for us, and QP 1's completions then
		 * wake us through the GSI fd. */
		poll_engine = d->inline_mode &&
			      drnic_progress_state() == DRNIC_PROGRESS_STATE_STOPPED;
		n = epoll_wait(d->epfd, evs, RTE_DIM(evs), poll_engine || waiting ? 1 : -1);
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == d->wakefd)
				(void)!read(d->wakefd, &v, sizeof(v));
			else if (evs[i].data.fd == d->timerfd) {
				(void)!read(d->timerfd, &v, sizeof(v));
				d->timer_armed = 0;  /* fired: set it again */
			}
		}
	}
	return NULL;
}

static int
ibcm_epoll_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

static void
ibcm_dev_free(struct ibcm_dev *d)
{
	if (d->gsi != NULL)
		ibcm_gsi_close(d->gsi);
	if (d->proto != NULL)
		ibcm_proto_destroy(d->proto);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->timerfd >= 0)
		close(d->timerfd);
	if (d->wakefd >= 0)
		close(d->wakefd);
	free(d);
}

/* The CM response timeout: DRNIC_CM_RESPONSE_TIMEOUT (0..31) when set. */
static uint8_t
ibcm_cfg_timeout(uint8_t dflt)
{
	const char *s = getenv("DRNIC_CM_RESPONSE_TIMEOUT");
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return dflt;
	v = strtol(s, &end, 0);
	if (*end != '\0' || v < 0 || v > 31) {
		IBCM_LOG(WARNING, "DRNIC_CM_RESPONSE_TIMEOUT=%s is not 0..31: ignored", s);
		return dflt;
	}
	return (uint8_t)v;
}

int
drnic_ibcm_add_device(struct drnic_device *dev)
{
	static const struct ibcm_proto_ops ops = {
		.send = ibcm_dev_send,
		.event = ibcm_conn_event,
	};
	struct drnic_device_attr da;
	struct drnic_port_attr pa;
	struct ibcm_proto_cfg pc;
	struct drnic_ibcm_id *id;
	struct ibcm_dev *d;
	int rc, i;

	if (dev == NULL)
		return -EINVAL;
	/* QP 1 of a daemon's device is the daemon's to run, with its CM. */
	if (rpc_attached())
		return ibcm_r_add_device(dev);
	if (drnic_query_device(dev, &da) < 0 || drnic_query_port(dev, 1, &pa) < 0)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	if (ibcm_dev_find(dev) != NULL) {
		pthread_mutex_unlock(&ibcm.lock);
		return 0;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		pthread_mutex_unlock(&ibcm.lock);
		return -ENOMEM;
	}
	d->epfd = d->timerfd = d->wakefd = -1;
	d->dev = dev;
	d->inline_mode = da.progress == DRNIC_PROGRESS_INLINE;
	d->max_rd_atom = da.max_qp_rd_atom;
	memcpy(d->mac, pa.mac, 6);
	d->active_mtu = pa.active_mtu;
	for (i = 0; i < DRNIC_GID_TABLE_LEN; i++) {
		static const uint8_t zero[16];

		if (drnic_query_gid(dev, 1, i, &d->gid[i]) < 0)
			break;
		if (memcmp(d->gid[i].raw, zero, 16) != 0)
			d->nb_gids = (unsigned int)i + 1;
	}
	ibcm_proto_cfg_default(&pc);
	pc.ca_guid = da.node_guid;
	d->ca_guid = da.node_guid;
	pc.comm_id_seed = (uint32_t)rte_rand();
	pc.tid_seed = rte_rand();
	pc.cm_response_timeout = ibcm_cfg_timeout(pc.cm_response_timeout);
	d->cm_timeout = pc.cm_response_timeout;
	d->proto = ibcm_proto_create(&pc, &ops, d);
	if (d->proto == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	d->gsi = ibcm_gsi_open(dev, 1, ibcm_dev_rx, d);
	if (d->gsi == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->epfd < 0 || d->timerfd < 0 || d->wakefd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = ibcm_epoll_add(d->epfd, ibcm_gsi_fd(d->gsi));
	if (rc == 0)
		rc = ibcm_epoll_add(d->epfd, d->timerfd);
	if (rc == 0)
		rc = ibcm_epoll_add(d->epfd, d->wakefd);
	if (rc < 0)
		goto fail;
	rc = pthread_create(&d->thread, NULL, ibcm_agent_main, d);
	if (rc != 0) {
		rc = -rc;
		goto fail;
	}
	d->thread_started = true;
	{
		char name[16];

		snprintf(name, sizeof(name), "ibcm-%s", drnic_device_name(dev));
		pthread_setname_np(d->thread, name);
	}
	TAILQ_INSERT_TAIL(&ibcm.devs, d, next);
	/* Wildcard listeners listen on the new device too. */
	TAILQ_FOREACH(id, &ibcm.ids, next)
		if (id->state == IBCM_ID_LISTEN && id->dev == NULL)
			(void)ibcm_listen_register(d, id);
	IBCM_LOG(INFO, "%s added: %u GIDs, CM response timeout %u, %s progress",
		 drnic_device_name(dev), d->nb_gids, d->cm_timeout,
		 d->inline_mode ? "inline" : "dedicated");
	pthread_mutex_unlock(&ibcm.lock);
	return 0;
fail:
	pthread_mutex_unlock(&ibcm.lock);
	IBCM_LOG(ERR, "%s: cannot add: %s", drnic_device_name(dev), strerror(-rc));
	ibcm_dev_free(d);
	return rc;
}

int
drnic_ibcm_remove_device(struct drnic_device *dev)
{
	struct drnic_ibcm_id *id;
	struct ibcm_dev *d;

	if (rpc_attached())
		return 0;   /* the daemon's CM stays */
	if (dev == NULL)
		return -ENOENT;
	pthread_mutex_lock(&ibcm.lock);
	d = ibcm_dev_find(dev);
	if (d == NULL) {
		pthread_mutex_unlock(&ibcm.lock);
		return -ENOENT;
	}
	d->stop = true;
	TAILQ_REMOVE(&ibcm.devs, d, next);
	TAILQ_FOREACH(id, &ibcm.ids, next) {
		if (id->dev != d)
			continue;
		if (id->conn != NULL) {
			/* ibcm_proto_destroy() below frees it, sending nothing. */
			ibcm_conn_set_user(id->conn, NULL);
			id->conn = NULL;
		}
		id->dev = NULL;
		id->state = IBCM_ID_DEVICE_REMOVAL;
		ibcm_id_event(id, DRNIC_IBCM_EVENT_DEVICE_REMOVAL, 0, NULL, 0);
	}
	pthread_mutex_unlock(&ibcm.lock);
	ibcm_dev_kick(d);
	if (d->thread_started)
		pthread_join(d->thread, NULL);
	pthread_mutex_lock(&ibcm.lock);
	ibcm_dev_free(d);
	pthread_mutex_unlock(&ibcm.lock);
	IBCM_LOG(INFO, "%s removed", drnic_device_name(dev));
	return 0;
}

int
drnic_ibcm_stats_get(struct drnic_device *dev, struct drnic_ibcm_stats *st)
{
	struct ibcm_proto_stats ps;
	struct ibcm_gsi_stats gs;
	struct ibcm_dev *d;

	if (rpc_attached())
		return ibcm_r_stats(dev, st);
	if (dev == NULL || st == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	d = ibcm_dev_find(dev);
	if (d == NULL) {
		pthread_mutex_unlock(&ibcm.lock);
		return -ENOENT;
	}
	ibcm_proto_stats_get(d->proto, &ps);
	ibcm_gsi_stats_get(d->gsi, &gs);
	pthread_mutex_unlock(&ibcm.lock);
	memset(st, 0, sizeof(*st));
	st->rx_mads = gs.rx_mads;
	st->tx_mads = gs.tx_mads;
	memcpy(st->rx_by_attr, ps.rx, sizeof(st->rx_by_attr));
	memcpy(st->tx_by_attr, ps.tx, sizeof(st->tx_by_attr));
	st->retransmits = ps.retransmits;
	st->dup_answered = ps.dup_answered;
	st->dropped = ps.dropped;
	st->timeouts = ps.timeouts;
	st->rej_no_listener = ps.rej_no_listener;
	st->rej_stale = ps.rej_stale;
	st->rx_unknown_class = gs.rx_unknown_class;
	st->rx_malformed = gs.rx_malformed;
	return 0;
}

/* ---- ids --------------------------------------------------------------- */

static bool
ibcm_ps_qp_type_ok(enum drnic_ibcm_ps ps, enum drnic_qp_type t)
{
	switch (ps) {
	case DRNIC_IBCM_PS_TCP:
		return t == DRNIC_QPT_RC || t == DRNIC_QPT_UC;
	case DRNIC_IBCM_PS_IB:
		return t == DRNIC_QPT_RC || t == DRNIC_QPT_UC || t == DRNIC_QPT_UD;
	case DRNIC_IBCM_PS_UDP:
	case DRNIC_IBCM_PS_IPOIB:
		return t == DRNIC_QPT_UD;
	}
	return false;
}

struct drnic_ibcm_id *
ibcm_id_alloc(struct drnic_ibcm_channel *ch, void *context, enum drnic_ibcm_ps ps,
	      enum drnic_qp_type qp_type)
{
	struct drnic_ibcm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->ch = ch;
	id->context = context;
	id->ps = ps;
	id->qp_type = qp_type;
	id->state = IBCM_ID_IDLE;
	id->route.pkey = 0xFFFF;
	ch->nb_ids++;
	TAILQ_INSERT_TAIL(&ibcm.ids, id, next);
	return id;
}

struct drnic_ibcm_id *
drnic_ibcm_create_id(struct drnic_ibcm_channel *ch, void *context, enum drnic_ibcm_ps ps,
		     enum drnic_qp_type qp_type)
{
	struct drnic_ibcm_id *id;

	if (rpc_attached())
		return ibcm_r_create_id(ch, context, ps, qp_type);
	if (ch == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if ((int)qp_type == 0)
		qp_type = ps == DRNIC_IBCM_PS_UDP || ps == DRNIC_IBCM_PS_IPOIB ?
			  DRNIC_QPT_UD : DRNIC_QPT_RC;
	if (!ibcm_ps_qp_type_ok(ps, qp_type)) {
		rte_errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&ibcm.lock);
	id = ibcm_id_alloc(ch, context, ps, qp_type);
	pthread_mutex_unlock(&ibcm.lock);
	if (id == NULL)
		rte_errno = ENOMEM;
	return id;
}

void
ibcm_id_destroy_locked(struct drnic_ibcm_id *id)
{
	struct ibcm_qev_list taken = TAILQ_HEAD_INITIALIZER(taken);
	struct drnic_ibcm_id *o;
	struct ibcm_qev *q;
	unsigned int i;

	if (id->listener != NULL) {
		id->listener->pending--;
		id->listener = NULL;
	}
	if (id->state == IBCM_ID_LISTEN)
		ibcm_listen_stop(id);
	TAILQ_FOREACH(o, &ibcm.ids, next)
		if (o->listener == id)
			o->listener = NULL;
	for (i = 0; i < IBCM_MAX_MCAST; i++)
		if (id->mcast[i].used && id->qp != NULL)
			(void)drnic_detach_mcast(id->qp, &id->mcast[i].gid, 0);
	if (id->conn != NULL) {
		ibcm_conn_set_user(id->conn, NULL);
		ibcm_conn_destroy(id->conn, ibcm_now());
		id->conn = NULL;
		ibcm_dev_kick(id->dev);
	}
	id->state = IBCM_ID_IDLE;
	ibcm_port_release(id);
	TAILQ_REMOVE(&ibcm.ids, id, next);
	id->ch->nb_ids--;
	/* Its events go; so do the requests to it nobody took: their new
	 * ids are rejected and destroyed. */
	ibcm_channel_take(id->ch, id, &taken);
	while ((q = TAILQ_FIRST(&taken)) != NULL) {
		TAILQ_REMOVE(&taken, q, next);
		if (q->ev.event == DRNIC_IBCM_EVENT_CONNECT_REQUEST && q->ev.listen_id == id &&
		    q->ev.id != id)
			ibcm_id_destroy_locked(q->ev.id);
		free(q);
	}
	free(id);
}

int
drnic_ibcm_destroy_id(struct drnic_ibcm_id *id)
{
	if (rpc_attached())
		return ibcm_r_destroy_id(id);
	if (id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	ibcm_id_destroy_locked(id);
	pthread_mutex_unlock(&ibcm.lock);
	return 0;
}

void *
drnic_ibcm_id_context(const struct drnic_ibcm_id *id)
{
	return id == NULL ? NULL : id->context;
}

void
drnic_ibcm_id_set_context(struct drnic_ibcm_id *id, void *context)
{
	if (id != NULL)
		id->context = context;
}

struct drnic_device *
drnic_ibcm_id_device(const struct drnic_ibcm_id *id)
{
	struct drnic_device *dev;

	if (rpc_attached()) {
		struct rpc_cm_id_info info;

		return ibcm_r_query(id, &info) == 0 ?
		       (struct drnic_device *)(uintptr_t)info.dev : NULL;
	}
	if (id == NULL)
		return NULL;
	pthread_mutex_lock(&ibcm.lock);
	dev = id->dev != NULL ? id->dev->dev : NULL;
	pthread_mutex_unlock(&ibcm.lock);
	return dev;
}

enum drnic_ibcm_ps
drnic_ibcm_id_ps(const struct drnic_ibcm_id *id)
{
	return id == NULL ? 0 : id->ps;
}

enum drnic_qp_type
drnic_ibcm_id_qp_type(const struct drnic_ibcm_id *id)
{
	return id == NULL ? 0 : id->qp_type;
}

/* The id's source (@p dst false) or destination address. */
static int
ibcm_id_copy_addr(const struct drnic_ibcm_id *id, bool dst, struct sockaddr_storage *ss)
{
	if (id == NULL || ss == NULL)
		return -EINVAL;
	if (rpc_attached()) {
		struct rpc_cm_id_info info;
		int rc = ibcm_r_query(id, &info);

		if (rc == 0)
			*ss = dst ? info.dst : info.src;
		return rc;
	}
	pthread_mutex_lock(&ibcm.lock);
	*ss = dst ? id->dst : id->src;
	pthread_mutex_unlock(&ibcm.lock);
	return 0;
}

int
drnic_ibcm_id_src_addr(const struct drnic_ibcm_id *id, struct sockaddr_storage *ss)
{
	return ibcm_id_copy_addr(id, false, ss);
}

int
drnic_ibcm_id_dst_addr(const struct drnic_ibcm_id *id, struct sockaddr_storage *ss)
{
	return ibcm_id_copy_addr(id, true, ss);
}

int
drnic_ibcm_id_route(const struct drnic_ibcm_id *id, struct drnic_ibcm_route *route)
{
	if (id == NULL || route == NULL)
		return -EINVAL;
	if (rpc_attached()) {
		struct rpc_cm_id_info info;
		int rc = ibcm_r_query(id, &info);

		if (rc == 0)
			*route = info.route;
		return rc;
	}
	pthread_mutex_lock(&ibcm.lock);
	*route = id->route;
	pthread_mutex_unlock(&ibcm.lock);
	return 0;
}

int
drnic_ibcm_migrate_id(struct drnic_ibcm_id *id, struct drnic_ibcm_channel *ch)
{
	if (rpc_attached())
		return ibcm_r_migrate_id(id, ch);
	struct ibcm_qev_list moved = TAILQ_HEAD_INITIALIZER(moved);
	struct ibcm_qev *q, *t;
	struct drnic_ibcm_channel *old;

	if (id == NULL || ch == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	old = id->ch;
	if (old != ch) {
		pthread_mutex_lock(&old->lock);
		RTE_TAILQ_FOREACH_SAFE(q, &old->queue, next, t) {
			if (q->ev.id != id)
				continue;
			TAILQ_REMOVE(&old->queue, q, next);
			ibcm_efd_take(old);
			TAILQ_INSERT_TAIL(&moved, q, next);
		}
		pthread_mutex_unlock(&old->lock);
		pthread_mutex_lock(&ch->lock);
		while ((q = TAILQ_FIRST(&moved)) != NULL) {
			TAILQ_REMOVE(&moved, q, next);
			TAILQ_INSERT_TAIL(&ch->queue, q, next);
			ibcm_efd_add(ch);
		}
		pthread_mutex_unlock(&ch->lock);
		old->nb_ids--;
		ch->nb_ids++;
		id->ch = ch;
	}
	pthread_mutex_unlock(&ibcm.lock);
	return 0;
}

int
drnic_ibcm_set_option(struct drnic_ibcm_id *id, enum drnic_ibcm_option opt, const void *val,
		      size_t len)
{
	if (rpc_attached())
		return ibcm_r_set_option(id, opt, val, len);
	int rc = 0;

	if (id == NULL || val == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ibcm.lock);
	switch (opt) {
	case DRNIC_IBCM_OPT_TOS:
		if (len != sizeof(uint8_t)) {
			rc = -EINVAL;
			break;
		}
		id->tos = *(const uint8_t *)val;
		id->tos_set = true;
		break;
	case DRNIC_IBCM_OPT_REUSEADDR:
		if (len != sizeof(int) || id->bound) {
			rc = -EINVAL;
			break;
		}
		id->reuseaddr = *(const int *)val != 0;
		break;
	case DRNIC_IBCM_OPT_ACK_TIMEOUT:
		if (len != sizeof(uint8_t) || *(const uint8_t *)val > 31) {
			rc = -EINVAL;
			break;
		}
		id->ack_timeout = *(const uint8_t *)val;
		id->ack_timeout_set = true;
		break;
	case DRNIC_IBCM_OPT_AFONLY:
		if (len != sizeof(int) || id->bound) {
			rc = -EINVAL;
			break;
		}
		id->afonly = *(const int *)val != 0;
		break;
	default:
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&ibcm.lock);
	return rc;
}
