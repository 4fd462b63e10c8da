/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/link and the loopback driver: registry, arguments, two ends, a third
 * end refused, no peer (counted drops), self loop, back-pressure, steering by
 * destination QPN, MAC resolution, counters, no mbuf leaked.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "test.h"
#include "drnic_wire.h"
#include "link_driver.h"

static struct rte_mempool *pool;

static struct drnic_link *
open_link(const char *name, const char *args, uint16_t queues, uint8_t last)
{
	struct link_config c = { .name = name, .args = args, .nb_queues = queues,
				 .mac = { 2, 0, 0, 0, 0, last }, .socket_id = -1 };

	return link_create("loopback", &c);
}

/* A real RoCEv2 frame to QP @p dqpn. */
static struct rte_mbuf *
frame(uint32_t dqpn, uint32_t psn)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct drnic_wire_pkt p;

	if (m == NULL)
		return NULL;
	drnic_wire_pkt_init(&p);
	p.ip.src[0] = 10;
	p.ip.dst[0] = 10;
	p.bth.opcode = DRNIC_WIRE_OP_RC_ACKNOWLEDGE;
	p.bth.dqpn = dqpn;
	p.bth.psn = psn;
	if (drnic_wire_build(m, &p) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static int
rnic_link(void)
{
	struct drnic_link *a, *b, *c, *s;
	struct drnic_link_stats st;
	struct rte_mbuf *m[128], *r[128];
	struct drnic_wire_pkt pkt;
	uint64_t bytes = 0;
	uint8_t mac[6];
	unsigned int i, n;

	pool = rte_pktmbuf_pool_create("rnic_link_pool", 1023, 0, 0, 2048, -1);
	TEST_ASSERT(pool != NULL, "pool");
	TEST_ASSERT(link_find("loopback") != NULL, "loopback registered");
	TEST_ASSERT(link_find("no_such_link") == NULL, "unknown driver");
	{
		struct link_config cfg = { .name = "x", .nb_queues = 1, .socket_id = -1 };

		TEST_ASSERT(link_create("no_such_link", &cfg) == NULL && rte_errno == ENOENT,
			    "unknown driver: ENOENT");
		cfg.nb_queues = 0;
		TEST_ASSERT(link_create("loopback", &cfg) == NULL && rte_errno == EINVAL,
			    "0 queues: EINVAL");
	}
	TEST_ASSERT(open_link("bad", "wire=w,bogus=1", 1, 9) == NULL && rte_errno == EINVAL,
		    "unknown argument: EINVAL");
	TEST_ASSERT(open_link("bad", "ring=100", 1, 9) == NULL && rte_errno == EINVAL,
		    "ring not a power of two: EINVAL");

	/* Two ends; a third is refused. */
	a = open_link("lt.a", "wire=lt0", 1, 1);
	b = open_link("lt.b", "wire=lt0,ring=64", 2, 2);
	TEST_ASSERT(a != NULL && b != NULL, "two ends");
	c = open_link("lt.c", "wire=lt0", 1, 3);
	TEST_ASSERT(c == NULL && rte_errno == EBUSY, "third end: EBUSY");
	TEST_ASSERT(a->ops->resolve(a, NULL, mac) == 0 && mac[5] == 2, "a resolves b's MAC");
	TEST_ASSERT(b->ops->resolve(b, NULL, mac) == 0 && mac[5] == 1, "b resolves a's MAC");

	/* Steering: QPN 4 to queue 0, QPN 5 to queue 1 of b (2 queues). */
	for (i = 0; i < 20; i++) {
		m[i] = frame(4 + (i & 1), i);
		TEST_ASSERT(m[i] != NULL, "frame");
		bytes += m[i]->pkt_len;
	}
	TEST_ASSERT_EQUAL(link_tx_burst(a, 0, m, 20), 20, "tx 20");
	n = link_rx_burst(b, 0, r, 128);
	TEST_ASSERT_EQUAL(n, 10, "queue 0 got the even QPN");
	for (i = 0; i < n; i++) {
		TEST_ASSERT_EQUAL(drnic_wire_parse(r[i], &pkt), DRNIC_WIRE_OK, "frame intact");
		TEST_ASSERT_EQUAL(pkt.bth.dqpn, 4, "QPN on queue 0");
		TEST_ASSERT_EQUAL(pkt.bth.psn, 2 * i, "in order");
	}
	rte_pktmbuf_free_bulk(r, n);
	n = link_rx_burst(b, 1, r, 128);
	TEST_ASSERT_EQUAL(n, 10, "queue 1 got the odd QPN");
	rte_pktmbuf_free_bulk(r, n);
	drnic_link_stats_get(a, &st);
	TEST_ASSERT_EQUAL(st.tx_packets, 20, "tx_packets");
	TEST_ASSERT_EQUAL(st.tx_bytes, bytes, "tx_bytes");
	drnic_link_stats_get(b, &st);
	TEST_ASSERT_EQUAL(st.rx_packets, 20, "rx_packets");
	TEST_ASSERT_EQUAL(st.rx_bytes, bytes, "rx_bytes");

	/* Back-pressure: b's rings hold 63; the rest stays with the sender. */
	for (i = 0; i < 100; i++)
		m[i] = frame(4, i);
	n = link_tx_burst(a, 0, m, 100);
	TEST_ASSERT_EQUAL(n, 63, "ring of 64 takes 63");
	drnic_link_stats_get(a, &st);
	TEST_ASSERT_EQUAL(st.tx_busy, 37, "tx_busy");
	rte_pktmbuf_free_bulk(m + n, 100 - n);

	/* b goes: its frames are freed; a's frames now have no peer. */
	link_destroy(b);
	for (i = 0; i < 5; i++)
		m[i] = frame(4, i);
	TEST_ASSERT_EQUAL(link_tx_burst(a, 0, m, 5), 5, "no peer: taken (dropped)");
	drnic_link_stats_get(a, &st);
	TEST_ASSERT_EQUAL(st.drops[DRNIC_LINK_DROP_NO_PEER], 5, "no_peer drops");
	TEST_ASSERT(a->ops->resolve(a, NULL, mac) == -ENOENT, "no peer to resolve");
	TEST_ASSERT(strcmp(drnic_link_drop_name(DRNIC_LINK_DROP_NO_PEER), "no_peer") == 0, "name");
	TEST_ASSERT(strcmp(drnic_link_drop_name(DRNIC_LINK_DROP_MAX), "invalid") == 0, "name");
	/* A new second end takes b's place. */
	b = open_link("lt.b2", "wire=lt0", 1, 4);
	TEST_ASSERT(b != NULL, "a new second end");
	m[0] = frame(7, 1);
	TEST_ASSERT_EQUAL(link_tx_burst(b, 0, m, 1), 1, "b2 -> a");
	TEST_ASSERT_EQUAL(link_rx_burst(a, 0, r, 8), 1, "a receives");
	rte_pktmbuf_free(r[0]);
	link_destroy(a);
	link_destroy(b);

	/* Self loop. */
	s = open_link("lt.s", "wire=lt1,self=1", 1, 5);
	TEST_ASSERT(s != NULL, "self link");
	TEST_ASSERT(open_link("lt.s2", "wire=lt1", 1, 6) == NULL, "nobody joins a self wire");
	m[0] = frame(9, 3);
	TEST_ASSERT_EQUAL(link_tx_burst(s, 0, m, 1), 1, "tx to self");
	TEST_ASSERT_EQUAL(link_rx_burst(s, 0, r, 8), 1, "rx from self");
	TEST_ASSERT(r[0] == m[0], "the same frame");
	TEST_ASSERT(s->ops->resolve(s, NULL, mac) == 0 && mac[5] == 5, "self MAC");
	rte_pktmbuf_free(r[0]);
	link_destroy(s);

	TEST_ASSERT_EQUAL(rte_mempool_in_use_count(pool), 0, "no mbuf leaked");
	rte_mempool_free(pool);
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(rnic_link_loopback_autotest, DRNIC_TEST_FAST, rnic_link);
