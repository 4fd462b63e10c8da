/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <rte_mbuf.h>

#include "drnic_wire.h"
#include "link_driver.h"
#include "perf_floor.h"
#include "perf_stats.h"

struct floor_echo {
	struct rte_ring *ping;
	struct rte_ring *pong;
	size_t count;
};

/* The peer: returns every pointer it receives, @count of them. */
static int
floor_echo_main(void *arg)
{
	struct floor_echo *e = arg;
	size_t i;
	void *obj;

	for (i = 0; i < e->count; i++) {
		while (rte_ring_sc_dequeue(e->ping, &obj) != 0)
			rte_pause();
		while (rte_ring_sp_enqueue(e->pong, obj) != 0)
			rte_pause();
	}
	return 0;
}

int
perf_floor_ring_rtt(unsigned int peer_lcore, uint64_t *samples, size_t iters)
{
	static unsigned int seq;
	struct floor_echo e;
	char name[RTE_RING_NAMESIZE];
	const size_t warmup = 1000;
	size_t i;
	void *obj;
	int rc;

	if (peer_lcore == rte_lcore_id() || !rte_lcore_is_enabled(peer_lcore) || iters == 0)
		return -EINVAL;
	snprintf(name, sizeof(name), "floor_ping%u", seq);
	e.ping = rte_ring_create(name, 64, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "floor_pong%u", seq++);
	e.pong = rte_ring_create(name, 64, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (e.ping == NULL || e.pong == NULL) {
		rte_ring_free(e.ping);
		rte_ring_free(e.pong);
		return -ENOMEM;
	}
	e.count = iters + warmup;
	rc = rte_eal_remote_launch(floor_echo_main, &e, peer_lcore);
	if (rc != 0) {
		rte_ring_free(e.ping);
		rte_ring_free(e.pong);
		return -EINVAL;
	}
	for (i = 0; i < iters + warmup; i++) {
		uint64_t t0 = rte_rdtsc_precise();

		while (rte_ring_sp_enqueue(e.ping, (void *)(uintptr_t)(i + 1)) != 0)
			rte_pause();
		while (rte_ring_sc_dequeue(e.pong, &obj) != 0)
			rte_pause();
		if (i >= warmup)
			samples[i - warmup] = rte_rdtsc_precise() - t0;
	}
	rte_eal_wait_lcore(peer_lcore);
	rte_ring_free(e.ping);
	rte_ring_free(e.pong);
	return 0;
}

static double
floor_memcpy(size_t size, int hot, unsigned int ms)
{
	const size_t span = hot ? size : (size_t)512 << 20;
	const uint64_t hz = rte_get_tsc_hz();
	double runs[7];
	uint8_t *src, *dst;
	size_t r, off = 0;

	src = malloc(span);
	dst = malloc(span);
	if (src == NULL || dst == NULL || size == 0 || size > span) {
		free(src);
		free(dst);
		return 0.0;
	}
	memset(src, 0x5a, span);
	memset(dst, 0xa5, span);
	for (r = 0; r < RTE_DIM(runs); r++) {
		uint64_t bytes = 0, t0 = rte_rdtsc(), t;

		do {
			int k;

			for (k = 0; k < 64; k++) {
				rte_memcpy(dst + off, src + off, size);
				bytes += size;
				off += size;
				if (off + size > span)
					off = 0;
			}
			t = rte_rdtsc() - t0;
		} while (t < hz * ms / 1000);
		runs[r] = (double)bytes / ((double)t / (double)hz) / 1e9;
	}
	free(src);
	free(dst);
	return perf_median(runs, RTE_DIM(runs));
}

double
perf_floor_memcpy_gbps(size_t size, int hot)
{
	return floor_memcpy(size, hot, 20);  /* 20 ms a run */
}

/* ------------------------------------------------------------------------ */
/* Through the link: the link ops directly, with pre-built frames           */
/* ------------------------------------------------------------------------ */

struct floor_link_echo {
	struct drnic_link *link;
	size_t count;
};

static int
floor_link_echo_main(void *arg)
{
	struct floor_link_echo *e = arg;
	struct rte_mbuf *m[8];
	size_t done = 0;

	while (done < e->count) {
		uint16_t n = link_rx_burst(e->link, 0, m, RTE_DIM(m)), s = 0;

		while (s < n)
			s += link_tx_burst(e->link, 0, m + s, (uint16_t)(n - s));
		done += n;
		if (n == 0)
			rte_pause();
	}
	return 0;
}

static struct rte_mempool *
floor_pool(void)
{
	static struct rte_mempool *mp;

	if (mp == NULL)
		mp = rte_pktmbuf_pool_create("perf_floor_pool", 1023, 0, 0,
					     RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	return mp;
}

static int
floor_link_pair(const char *driver, const char *args_fmt, struct drnic_link **a,
		struct drnic_link **b)
{
	static unsigned int seq;
	struct link_config cfg = { .nb_queues = 1, .socket_id = (int)rte_socket_id() };
	char name[64], args[64];

	snprintf(args, sizeof(args), args_fmt, seq);
	cfg.args = args;
	snprintf(name, sizeof(name), "floor%ua.%s", seq, driver);
	cfg.name = name;
	cfg.mac[0] = 0x02;
	cfg.mac[5] = 0xa1;
	*a = link_create(driver, &cfg);
	snprintf(name, sizeof(name), "floor%ub.%s", seq++, driver);
	cfg.mac[5] = 0xb1;
	*b = link_create(driver, &cfg);
	if (*a == NULL || *b == NULL) {
		link_destroy(*a);
		link_destroy(*b);
		return -ENODEV;
	}
	return 0;
}

static struct rte_mbuf *
floor_frame(struct rte_mempool *mp, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	memset(p, 0, len);
	p[0] = 0x02;
	p[5] = 0xb1;
	p[6] = 0x02;
	p[11] = 0xa1;
	p[12] = 0x08;   /* IPv4, nothing else: the loopback link does not parse */
	return m;
}

int
perf_floor_link_rtt(unsigned int peer_lcore, uint16_t frame_len, uint64_t *samples, size_t iters,
		    double *mpps_one_core)
{
	const size_t warmup = 1000;
	struct floor_link_echo e;
	struct drnic_link *a, *b;
	struct rte_mempool *mp = floor_pool();
	struct rte_mbuf *m, *burst[32];
	uint64_t t0, frames = 0;
	size_t i;
	int rc;

	if (mp == NULL)
		return -ENOMEM;
	if (peer_lcore == rte_lcore_id() || !rte_lcore_is_enabled(peer_lcore))
		return -EINVAL;
	rc = floor_link_pair("loopback", "wire=perf_floor%u", &a, &b);
	if (rc != 0)
		return rc;
	m = floor_frame(mp, frame_len);
	if (m == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	e.link = b;
	e.count = iters + warmup;
	if (rte_eal_remote_launch(floor_link_echo_main, &e, peer_lcore) != 0) {
		rte_pktmbuf_free(m);
		rc = -EBUSY;
		goto out;
	}
	for (i = 0; i < iters + warmup; i++) {
		uint64_t t = rte_rdtsc_precise();

		while (link_tx_burst(a, 0, &m, 1) != 1)
			rte_pause();
		while (link_rx_burst(a, 0, &m, 1) != 1)
			rte_pause();
		if (i >= warmup)
			samples[i - warmup] = rte_rdtsc_precise() - t;
	}
	rte_eal_wait_lcore(peer_lcore);
	rte_pktmbuf_free(m);

	/* Message rate on one core: bursts of 32 out of a, into b. */
	for (i = 0; i < RTE_DIM(burst); i++) {
		burst[i] = floor_frame(mp, frame_len);
		if (burst[i] == NULL) {
			rte_pktmbuf_free_bulk(burst, (unsigned int)i);
			rc = -ENOMEM;
			goto out;
		}
	}
	t0 = rte_rdtsc();
	do {
		uint16_t n = link_tx_burst(a, 0, burst, RTE_DIM(burst)), got = 0;

		while (got < n)
			got += link_rx_burst(b, 0, burst + got, (uint16_t)(n - got));
		frames += n;
	} while (rte_rdtsc() - t0 < rte_get_tsc_hz() / 20);
	*mpps_one_core = (double)frames / ((double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz()) / 1e6;
	rte_pktmbuf_free_bulk(burst, RTE_DIM(burst));
out:
	link_destroy(a);
	link_destroy(b);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* ICRC                                                                     */
/* ------------------------------------------------------------------------ */

double
perf_floor_icrc_gbps(uint32_t payload)
{
	const uint32_t len = 20 + 8 + 12 + payload + 4;   /* IPv4 UDP BTH payload ICRC */
	const uint64_t hz = rte_get_tsc_hz();
	double runs[5];
	uint8_t *p = calloc(1, len);
	uint32_t crc, sink = 0;
	size_t r;

	if (p == NULL)
		return 0.0;
	p[0] = 0x45;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	p[8] = 64;
	p[9] = 17;
	p[22] = 0x12;    /* UDP 4791 */
	p[23] = 0xb7;
	p[24] = (uint8_t)((len - 20) >> 8);
	p[25] = (uint8_t)(len - 20);
	for (r = 40; r < len - 4; r++)
		p[r] = (uint8_t)r;
	for (r = 0; r < RTE_DIM(runs); r++) {
		uint64_t bytes = 0, t0 = rte_rdtsc(), t;

		do {
			int k;

			for (k = 0; k < 32; k++) {
				if (drnic_wire_icrc_buf(p, len, &crc) != 0) {
					free(p);
					return 0.0;
				}
				sink ^= crc;
				bytes += len;
			}
			t = rte_rdtsc() - t0;
		} while (t < hz / 100);
		runs[r] = (double)bytes / ((double)t / (double)hz) / 1e9;
	}
	free(p);
	if (sink == 0x5a5a5a5a)   /* keep the CRCs alive */
		runs[0] += 1e-9;
	return perf_median(runs, RTE_DIM(runs));
}

struct floor_icrc_on {
	uint32_t payload;
	double gbps;
};

static int
floor_icrc_main(void *arg)
{
	struct floor_icrc_on *a = arg;

	a->gbps = perf_floor_icrc_gbps(a->payload);
	return 0;
}

double
perf_floor_icrc_gbps_on(unsigned int lcore, uint32_t payload)
{
	struct floor_icrc_on a = { .payload = payload, .gbps = 0.0 };

	if (lcore == rte_lcore_id())
		return perf_floor_icrc_gbps(payload);
	if (rte_eal_remote_launch(floor_icrc_main, &a, lcore) != 0)
		return 0.0;
	rte_eal_wait_lcore(lcore);
	return a.gbps;
}

/* ------------------------------------------------------------------------ */
/* The kernel's UDP round trip over loopback                                */
/* ------------------------------------------------------------------------ */

struct floor_udp_echo {
	int fd;
	size_t count;
};

static int
floor_udp_echo_main(void *arg)
{
	struct floor_udp_echo *e = arg;
	struct sockaddr_in from;
	char buf[64];
	size_t i;

	for (i = 0; i < e->count; i++) {
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(e->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

		if (n <= 0)
			return -1;
		if (sendto(e->fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl) != n)
			return -1;
	}
	return 0;
}

int
perf_floor_udp_rtt(unsigned int peer_lcore, uint64_t *samples, size_t iters)
{
	const size_t warmup = 200;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct floor_udp_echo e;
	struct timeval tv = { .tv_sec = 2 };
	socklen_t sl = sizeof(sa);
	char buf[64] = { 0 };
	int fd, rc = 0;
	size_t i;

	if (peer_lcore == rte_lcore_id() || !rte_lcore_is_enabled(peer_lcore))
		return -EINVAL;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	e.fd = socket(AF_INET, SOCK_DGRAM, 0);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (e.fd < 0 || fd < 0 || bind(e.fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(e.fd, (struct sockaddr *)&sa, &sl) != 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(e.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	e.count = iters + warmup;
	if (rte_eal_remote_launch(floor_udp_echo_main, &e, peer_lcore) != 0) {
		rc = -EBUSY;
		goto out;
	}
	for (i = 0; i < iters + warmup; i++) {
		uint64_t t = rte_rdtsc_precise();

		if (send(fd, buf, 16, 0) != 16 || recv(fd, buf, sizeof(buf), 0) != 16) {
			rc = -EIO;
			break;
		}
		if (i >= warmup)
			samples[i - warmup] = rte_rdtsc_precise() - t;
	}
	if (rc != 0)
		shutdown(e.fd, SHUT_RDWR);
	rte_eal_wait_lcore(peer_lcore);
out:
	if (e.fd >= 0)
		close(e.fd);
	if (fd >= 0)
		close(fd);
	return rc;
}

double
perf_floor_sockperf_rtt_us(unsigned int app_cpu, unsigned int peer_cpu)
{
	char cmd[512], line[256];
	double p50 = -1.0;
	int port = 11111 + (int)(getpid() % 20000);
	FILE *f;

	if (system("command -v sockperf >/dev/null 2>&1") != 0)
		return -1.0;
	snprintf(cmd, sizeof(cmd),
		 "taskset -c %u sockperf server -i 127.0.0.1 -p %d >/dev/null 2>&1 & SP=$!; "
		 "sleep 0.3; taskset -c %u sockperf ping-pong -i 127.0.0.1 -p %d -t 1 -m 16 "
		 "--full-rtt 2>&1; kill $SP 2>/dev/null; wait $SP 2>/dev/null",
		 peer_cpu, port, app_cpu, port);
	f = popen(cmd, "r");
	if (f == NULL)
		return -1.0;
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *k = strstr(line, "percentile 50.000 =");

		if (k != NULL)
			p50 = strtod(k + strlen("percentile 50.000 ="), NULL);
	}
	pclose(f);
	return p50;
}

double
perf_floor_memcpy_gbps_ms(size_t size, int hot, unsigned int ms)
{
	return floor_memcpy(size, hot, ms);
}
