/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/cm/cm_tcp.c over real TCP connections on 127.0.0.1
 * (ephemeral ports): both exchange formats end to end, the byte sequence an
 * ibv_rc_pingpong client produces (record, read, "done\0"), sync, and the
 * errors ECONNREFUSED, ETIMEDOUT, EPROTO, ECONNRESET.
 */
#include "lib/cm/cm_tcp.c"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <arpa/inet.h>

#include "ut_common.h"

static struct drnic_cm_dest ut_srv = { .qpn = 0x22, .psn = 0x222222, .rkey = 0x2222,
				       .addr = 0x2000, .size = 4096 };
static struct drnic_cm_dest ut_cli = { .qpn = 0x11, .psn = 0x111111, .rkey = 0x1111,
				       .addr = 0x1000, .size = 8192 };

struct ut_client {
	enum drnic_cm_fmt fmt;
	uint16_t port;
	unsigned int delay_ms;
	unsigned int retry_ms;
	int rc;
	struct drnic_cm_dest remote;
	bool sync;
	int sync_rc;
	_Atomic unsigned int idles;   /* calls of the client's idle callback */
};

/* The client's idle callback: counts its calls. */
static int
ut_client_idle(void *arg)
{
	struct ut_client *c = arg;

	atomic_fetch_add(&c->idles, 1);
	return 0;
}

static void *
ut_client_main(void *arg)
{
	struct ut_client *c = arg;
	struct drnic_cm_opts o = { .fmt = c->fmt, .port = c->port, .timeout_ms = 3000,
				   .retry_ms = c->retry_ms, .idle = ut_client_idle, .idle_arg = c };
	struct drnic_cm *cm;

	usleep(c->delay_ms * 1000);
	cm = drnic_cm_connect("127.0.0.1", &o);
	if (cm == NULL) {
		c->rc = -rte_errno;
		return NULL;
	}
	c->rc = drnic_cm_client_exchange(cm, &ut_cli, &c->remote);
	if (c->sync)
		c->sync_rc = drnic_cm_sync(cm, "end");
	drnic_cm_close(cm);
	return NULL;
}

static int ut_cb_calls;

static int
ut_connect_cb(void *arg, const struct drnic_cm_dest *remote)
{
	(void)arg;
	CU_ASSERT_EQUAL(remote->qpn, ut_cli.qpn);
	ut_cb_calls++;
	return 0;
}

static unsigned int ut_idle_calls;

static int
ut_idle(void *arg)
{
	(void)arg;
	ut_idle_calls++;
	return 0;
}

static struct drnic_cm *
ut_listener(enum drnic_cm_fmt fmt, unsigned int timeout_ms)
{
	struct drnic_cm_opts o = { .fmt = fmt, .port = DRNIC_CM_PORT_ANY, .bind_addr = "127.0.0.1",
				   .timeout_ms = timeout_ms, .idle = ut_idle };
	struct drnic_cm *l = drnic_cm_listen(&o);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT_NOT_EQUAL(drnic_cm_local_port(l), 0);
	return l;
}

static void
ut_exchange(enum drnic_cm_fmt fmt)
{
	struct drnic_cm *l = ut_listener(fmt, 3000), *cm;
	struct ut_client c = { .fmt = fmt, .port = drnic_cm_local_port(l), .sync = true };
	struct drnic_cm_dest remote;
	pthread_t th;

	memcpy(ut_cli.gid, (uint8_t[16]){ [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 }, 16);
	memcpy(ut_srv.gid, (uint8_t[16]){ 0xfd, [15] = 2 }, 16);
	ut_cb_calls = 0;
	pthread_create(&th, NULL, ut_client_main, &c);
	cm = drnic_cm_accept(l);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cm);
	CU_ASSERT_EQUAL(drnic_cm_server_exchange(cm, &ut_srv, &remote, ut_connect_cb, NULL), 0);
	CU_ASSERT_EQUAL(ut_cb_calls, 1);
	if (fmt == DRNIC_CM_FMT_DRNIC)
		CU_ASSERT_EQUAL(drnic_cm_sync(cm, "end"), 0);
	drnic_cm_close(cm);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(c.rc, 0);
	CU_ASSERT_EQUAL(remote.qpn, ut_cli.qpn);
	CU_ASSERT_EQUAL(remote.psn, ut_cli.psn);
	CU_ASSERT_EQUAL(memcmp(remote.gid, ut_cli.gid, 16), 0);
	CU_ASSERT_EQUAL(c.remote.qpn, ut_srv.qpn);
	CU_ASSERT_EQUAL(c.remote.psn, ut_srv.psn);
	CU_ASSERT_EQUAL(memcmp(c.remote.gid, ut_srv.gid, 16), 0);
	if (fmt == DRNIC_CM_FMT_DRNIC) {
		CU_ASSERT_EQUAL(c.sync_rc, 0);
		CU_ASSERT_EQUAL(remote.rkey, ut_cli.rkey);
		CU_ASSERT_EQUAL(remote.addr, ut_cli.addr);
		CU_ASSERT_EQUAL(remote.size, ut_cli.size);
		CU_ASSERT_EQUAL(c.remote.rkey, ut_srv.rkey);
		CU_ASSERT_EQUAL(c.remote.addr, ut_srv.addr);
		CU_ASSERT_EQUAL(c.remote.size, ut_srv.size);
	} else {
		/* rc_pingpong closes after "done": the sync finds it gone. */
		CU_ASSERT_EQUAL(c.sync_rc, -ECONNRESET);
		CU_ASSERT_EQUAL(remote.rkey, 0);
	}
	drnic_cm_close(l);
}

static void
test_exchange_drnic(void)
{
	ut_exchange(DRNIC_CM_FMT_DRNIC);
}

static void
test_exchange_rc_pingpong(void)
{
	ut_exchange(DRNIC_CM_FMT_RC_PINGPONG);
}

/* A raw client doing exactly what ibv_rc_pingpong's client does. */
static void *
ut_raw_client(void *arg)
{
	uint16_t port = *(uint16_t *)arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	char msg[52], *out = malloc(53);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t got = 0;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		free(out);
		return NULL;
	}
	memcpy(msg, "0000:000011:111111:00000000000000000000ffff0a000001", 52);
	if (write(fd, msg, 52) != 52)
		goto out;
	while (got < 52) {
		ssize_t r = read(fd, out + got, 52 - got);

		if (r <= 0)
			goto out;
		got += (size_t)r;
	}
	if (write(fd, "done", sizeof("done")) != sizeof("done"))
		got = 0;
out:
	close(fd);
	out[52] = got == 52;
	return out;
}

static void
test_rc_pingpong_bytes(void)
{
	struct drnic_cm *l = ut_listener(DRNIC_CM_FMT_RC_PINGPONG, 3000), *cm;
	uint16_t port = drnic_cm_local_port(l);
	struct drnic_cm_dest remote;
	pthread_t th;
	char *seen;

	memcpy(ut_srv.gid, (uint8_t[16]){ [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 }, 16);
	pthread_create(&th, NULL, ut_raw_client, &port);
	cm = drnic_cm_accept(l);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cm);
	CU_ASSERT_EQUAL(drnic_cm_server_exchange(cm, &ut_srv, &remote, NULL, NULL), 0);
	pthread_join(th, (void **)&seen);
	CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
	CU_ASSERT_EQUAL(seen[52], 1);
	CU_ASSERT_EQUAL(memcmp(seen, "0000:000022:222222:00000000000000000000ffff0a000002", 52), 0);
	CU_ASSERT_EQUAL(remote.qpn, 0x11);
	free(seen);
	drnic_cm_close(cm);
	drnic_cm_close(l);
}

static void
test_errors(void)
{
	struct drnic_cm_opts o = { .timeout_ms = 200, .idle = ut_idle };
	struct drnic_cm *l, *cm, *cl;
	struct drnic_cm_dest remote;
	uint16_t port;
	int fd;

	/* Nobody listening. */
	l = ut_listener(DRNIC_CM_FMT_DRNIC, 200);
	port = drnic_cm_local_port(l);
	drnic_cm_close(l);
	o.port = port;
	CU_ASSERT_PTR_NULL(drnic_cm_connect("127.0.0.1", &o));
	CU_ASSERT_EQUAL(rte_errno, ECONNREFUSED);
	/* Unknown host, bad options. */
	CU_ASSERT_PTR_NULL(drnic_cm_connect("no-such-host.invalid", &o));
	CU_ASSERT_EQUAL(rte_errno, ENOENT);
	o.fmt = 9;
	CU_ASSERT_PTR_NULL(drnic_cm_connect("127.0.0.1", &o));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	o.fmt = DRNIC_CM_FMT_DRNIC;

	/* No client within the timeout; the idle callback ran meanwhile. */
	l = ut_listener(DRNIC_CM_FMT_DRNIC, 100);
	ut_idle_calls = 0;
	CU_ASSERT_PTR_NULL(drnic_cm_accept(l));
	CU_ASSERT_EQUAL(rte_errno, ETIMEDOUT);
	CU_ASSERT_TRUE(ut_idle_calls > 20);

	/* A client that connects but says nothing: ETIMEDOUT; one that sends
	 * garbage: EPROTO; one that hangs up: ECONNRESET. */
	o.port = drnic_cm_local_port(l);
	cl = drnic_cm_connect("127.0.0.1", &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cl);
	cm = drnic_cm_accept(l);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cm);
	CU_ASSERT_EQUAL(drnic_cm_server_exchange(cm, &ut_srv, &remote, NULL, NULL), -ETIMEDOUT);
	fd = cl->fd;
	CU_ASSERT_EQUAL(write(fd, "DRNIC1 lid=zz\n", 14), 14);
	CU_ASSERT_EQUAL(drnic_cm_server_exchange(cm, &ut_srv, &remote, NULL, NULL), -EPROTO);
	drnic_cm_close(cl);
	CU_ASSERT_EQUAL(drnic_cm_server_exchange(cm, &ut_srv, &remote, NULL, NULL), -ECONNRESET);
	drnic_cm_close(cm);
	CU_ASSERT_EQUAL(drnic_cm_server_exchange(l, &ut_srv, &remote, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cm_sync(NULL, "x"), -EINVAL);
	drnic_cm_close(l);
}

/* The client starts first, is refused, and retries until the server
 * listens: the server listens only once the client idles between tries. */
static void
test_retry(void)
{
	struct drnic_cm *l = ut_listener(DRNIC_CM_FMT_DRNIC, 3000), *cm;
	struct ut_client c = { .fmt = DRNIC_CM_FMT_DRNIC, .retry_ms = 2000 };
	struct drnic_cm_opts o = { .port = 0, .bind_addr = "127.0.0.1", .timeout_ms = 3000 };
	struct drnic_cm_dest remote;
	pthread_t th;

	c.port = drnic_cm_local_port(l);
	drnic_cm_close(l);      /* the port is free again: refused for now */
	pthread_create(&th, NULL, ut_client_main, &c);
	while (atomic_load(&c.idles) == 0)      /* refused at least once */
		sched_yield();
	o.port = c.port;
	l = drnic_cm_listen(&o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	cm = drnic_cm_accept(l);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cm);
	CU_ASSERT_EQUAL(drnic_cm_server_exchange(cm, &ut_srv, &remote, NULL, NULL), 0);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(c.rc, 0);
	drnic_cm_close(cm);
	drnic_cm_close(l);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("cm_tcp", NULL, NULL);
	CU_ADD_TEST(s, test_exchange_drnic);
	CU_ADD_TEST(s, test_exchange_rc_pingpong);
	CU_ADD_TEST(s, test_rc_pingpong_bytes);
	CU_ADD_TEST(s, test_errors);
	CU_ADD_TEST(s, test_retry);
	return ut_run_all();
}
