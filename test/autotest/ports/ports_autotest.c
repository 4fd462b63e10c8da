/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Autotests of drivers/link/ethdev over net_ring ports (no privileges, no
 * kernel interfaces):
 *  - ethdev_ring_autotest: two ports joined back to back (rte_eth_from_rings
 *    with crossed rings); RoCEv2 frames of 0..4096 payload bytes sent one way
 *    arrive byte for byte on the other, the kernel-like noise (a TCP frame) is
 *    dropped, counters add up;
 *  - ethdev_steer_autotest: a 3-queue link steers frames to queue
 *    dest QPN % 3;
 *  - ethdev_arp_autotest: each end resolves the other's MAC through ARP and
 *    neighbour discovery with only addresses configured;
 *  - ethdev_probe_autotest: dev=net_ring... is probed at run time, used
 *    (frames loop back on its single ring) and removed on close;
 *  - ethdev_config_autotest: the device's addresses and MTU given in struct
 *    link_config are used (ARP and ND from them), capture= mirrors ARP / ND;
 *  - ethdev_drops_autotest: every kind of frame the classifier drops lands in
 *    its named counter (stats API and telemetry);
 *  - env_intr_barrier_autotest: drnic_env_intr_barrier() waits out the
 *    interrupt thread's callback (the PMDs' link handlers run there).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "drnic_capture.h"
#include "drnic_link_capture.h"
#include "drnic_env.h"
#include "drnic_event.h"
#include "drnic_neigh.h"
#include "drnic_telemetry.h"
#include "drnic_verbs.h"
#include "drnic_wire.h"
#include "link_driver.h"
#include "tel_client.h"
#include "test.h"

#define PT_FRAMES 64

static struct rte_mempool *pt_pool;

static int
pt_init(void)
{
	if (pt_pool == NULL)
		pt_pool = rte_pktmbuf_pool_create("pt_pool", 2047, 0, 0, 9216 + RTE_PKTMBUF_HEADROOM,
						  SOCKET_ID_ANY);
	return pt_pool != NULL ? 0 : -rte_errno;
}

/* Two net_ring ports whose rings are crossed: what one sends the other gets. */
static int
pt_ring_pair(const char *tag, uint16_t *pa, uint16_t *pb)
{
	typeof(rte_eth_from_rings) *from_rings;
	struct rte_ring *r[2];
	char name[RTE_RING_NAMESIZE];
	void *h;
	int a, b, i;

	/* The PMD is a plugin the EAL loaded: find its symbol at run time. */
	h = dlopen("librte_net_ring.so.23", RTLD_NOW);
	if (h == NULL)
		return -ENOENT;
	from_rings = (typeof(rte_eth_from_rings) *)dlsym(h, "rte_eth_from_rings");
	if (from_rings == NULL)
		return -ENOENT;
	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "pt_%s%d", tag, i);
		r[i] = rte_ring_create(name, 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (r[i] == NULL)
			return -rte_errno;
	}
	snprintf(name, sizeof(name), "pt_%sa", tag);
	a = from_rings(name, &r[0], 1, &r[1], 1, SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "pt_%sb", tag);
	b = from_rings(name, &r[1], 1, &r[0], 1, SOCKET_ID_ANY);
	if (a < 0 || b < 0)
		return -ENODEV;
	*pa = (uint16_t)a;
	*pb = (uint16_t)b;
	return 0;
}

static struct drnic_link *
pt_link(const char *name, const char *args, uint16_t nb_queues, uint8_t last_mac_byte)
{
	struct link_config c = {
		.name = name, .args = args, .nb_queues = nb_queues,
		.mac = { 0x02, 0, 0, 0, 0, last_mac_byte }, .socket_id = SOCKET_ID_ANY,
	};

	return link_create("ethdev", &c);
}

/* A RoCEv2 SEND_ONLY frame over IPv @p ipver (4 or 6), 802.1Q-tagged when
 * @p vlan, with @p len bytes of payload pattern @p seed. */
static struct rte_mbuf *
pt_frame_ip(uint32_t dqpn, uint32_t len, uint8_t seed, uint8_t ipver, bool vlan)
{
	static uint8_t payload[8192];
	struct drnic_wire_sge sge = { payload, len };
	struct drnic_wire_pkt p;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pt_pool);
	uint32_t i;

	if (m == NULL)
		return NULL;
	for (i = 0; i < len; i++)
		payload[i] = (uint8_t)(seed + i * 7);
	drnic_wire_pkt_init(&p);
	memcpy(p.eth.dst, (uint8_t[6]){ 2, 0, 0, 0, 0, 2 }, 6);
	memcpy(p.eth.src, (uint8_t[6]){ 2, 0, 0, 0, 0, 1 }, 6);
	p.eth.has_vlan = vlan;
	p.eth.vlan_tci = 7;
	p.ip.version = ipver;
	p.ip.src[0] = 10, p.ip.src[3] = 1;
	p.ip.dst[0] = 10, p.ip.dst[3] = 2;
	p.udp.sport = 0xC001;
	p.bth.opcode = 0x04;    /* RC SEND_ONLY */
	p.bth.dqpn = dqpn;
	p.bth.psn = seed;
	p.sg = &sge;
	p.sg_cnt = 1;
	if (drnic_wire_build(m, &p) < 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

/* A RoCEv2 SEND_ONLY frame over IPv4, untagged. */
static struct rte_mbuf *
pt_frame(uint32_t dqpn, uint32_t len, uint8_t seed)
{
	return pt_frame_ip(dqpn, len, seed, 4, false);
}

/* Poll @p q of @p link until @p want frames came or 1 s passed. */
static unsigned int
pt_rx(struct drnic_link *link, uint16_t q, struct rte_mbuf **out, unsigned int want)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz();
	unsigned int got = 0;

	while (got < want && rte_get_timer_cycles() < end)
		got += link_rx_burst(link, q, out + got, (uint16_t)RTE_MIN(want - got, 32u));
	return got;
}

static int
test_ethdev_ring(void)
{
	struct rte_mbuf *tx[PT_FRAMES], *rx[PT_FRAMES], *copy[PT_FRAMES], *tcp;
	struct drnic_link *la, *lb;
	struct drnic_link_stats sa, sb;
	uint16_t pa, pb, sent;
	char args[64];
	unsigned int i, got;

	TEST_ASSERT_SUCCESS(pt_init(), "mbuf pool");
	if (pt_ring_pair("r", &pa, &pb) < 0)
		TEST_SKIP("net_ring PMD not loadable (librte_net_ring.so.23)");
	snprintf(args, sizeof(args), "port=%u,mtu=9000", pa);
	la = pt_link("pt.a", args, 1, 1);
	TEST_ASSERT(la != NULL, "link a: %s", rte_strerror(rte_errno));
	snprintf(args, sizeof(args), "port=%u,mtu=9000", pb);
	lb = pt_link("pt.b", args, 1, 2);
	TEST_ASSERT(lb != NULL, "link b: %s", rte_strerror(rte_errno));
	/* The same port twice is refused. */
	TEST_ASSERT(pt_link("pt.c", args, 1, 3) == NULL && rte_errno == EBUSY, "port reuse");
	TEST_ASSERT(link_is_up(la) && link_is_up(lb), "links up");

	for (i = 0; i < PT_FRAMES; i++) {
		/* 0, 1, 2, 3 ... bytes, then up to a full 4 KiB path MTU. */
		uint32_t len = i < 8 ? i : (i * 131) % 4097;

		if (i == PT_FRAMES - 1)
			len = 4096;
		tx[i] = pt_frame(0x11, len, (uint8_t)i);
		TEST_ASSERT(tx[i] != NULL, "frame %u", i);
		copy[i] = rte_pktmbuf_copy(tx[i], pt_pool, 0, UINT32_MAX);
		TEST_ASSERT(copy[i] != NULL, "copy %u", i);
	}
	/* Kernel traffic on a shared interface: never reaches the engines. */
	tcp = rte_pktmbuf_alloc(pt_pool);
	TEST_ASSERT(tcp != NULL, "tcp frame");
	TEST_ASSERT(rte_pktmbuf_append(tcp, 60) != NULL, "append");
	memset(rte_pktmbuf_mtod(tcp, uint8_t *), 0, 60);
	rte_pktmbuf_mtod(tcp, uint8_t *)[12] = 0x08;
	rte_pktmbuf_mtod(tcp, uint8_t *)[14] = 0x45;
	rte_pktmbuf_mtod(tcp, uint8_t *)[23] = 6;
	sent = link_tx_burst(la, 0, &tcp, 1);
	TEST_ASSERT_EQUAL(sent, 1, "tcp sent");

	sent = 0;
	while (sent < PT_FRAMES)
		sent = (uint16_t)(sent + link_tx_burst(la, 0, tx + sent, (uint16_t)(PT_FRAMES - sent)));
	got = pt_rx(lb, 0, rx, PT_FRAMES);
	TEST_ASSERT_EQUAL(got, PT_FRAMES, "frames received");
	for (i = 0; i < PT_FRAMES; i++) {
		struct drnic_wire_pkt p;

		TEST_ASSERT_EQUAL(rx[i]->pkt_len, copy[i]->pkt_len, "frame %u length", i);
		TEST_ASSERT(memcmp(rte_pktmbuf_mtod(rx[i], void *), rte_pktmbuf_mtod(copy[i], void *),
				   rx[i]->data_len) == 0, "frame %u bytes differ", i);
		TEST_ASSERT_EQUAL(drnic_wire_parse(rx[i], &p), DRNIC_WIRE_OK, "frame %u parses", i);
		TEST_ASSERT_EQUAL(p.bth.psn, i, "frame %u order", i);
	}
	rte_pktmbuf_free_bulk(rx, PT_FRAMES);
	rte_pktmbuf_free_bulk(copy, PT_FRAMES);
	TEST_ASSERT_SUCCESS(drnic_link_stats_get(la, &sa), "stats a");
	TEST_ASSERT_SUCCESS(drnic_link_stats_get(lb, &sb), "stats b");
	TEST_ASSERT_EQUAL(sa.tx_packets, PT_FRAMES + 1, "a tx");
	TEST_ASSERT_EQUAL(sb.rx_packets, PT_FRAMES, "b rx (the TCP frame is not delivered)");
	TEST_ASSERT_EQUAL(sb.rx_bytes + 60, sa.tx_bytes, "bytes");
	link_destroy(la);
	link_destroy(lb);
	return TEST_SUCCESS;
}

static int
test_ethdev_steer(void)
{
	struct rte_mbuf *m, *rx[PT_FRAMES];
	struct drnic_link *la, *lb;
	unsigned int i, q, got, total = 0;
	uint16_t pa, pb;
	char args[64];

	TEST_ASSERT_SUCCESS(pt_init(), "mbuf pool");
	if (pt_ring_pair("s", &pa, &pb) < 0)
		TEST_SKIP("net_ring PMD not loadable");
	snprintf(args, sizeof(args), "port=%u", pa);
	la = pt_link("ps.a", args, 1, 1);
	snprintf(args, sizeof(args), "port=%u", pb);
	lb = pt_link("ps.b", args, 3, 2);
	TEST_ASSERT(la != NULL && lb != NULL, "links: %s", rte_strerror(rte_errno));
	for (i = 0; i < 30; i++) {
		m = pt_frame(100 + i, 16, (uint8_t)i);
		TEST_ASSERT(m != NULL && link_tx_burst(la, 0, &m, 1) == 1, "send %u", i);
	}
	/* Queue 0's poller reads the port and hands the others their frames. */
	got = pt_rx(lb, 0, rx, 10);
	for (q = 0; q < 3; q++) {
		if (q > 0)
			got = pt_rx(lb, (uint16_t)q, rx, 10);
		TEST_ASSERT_EQUAL(got, 10, "queue %u", q);
		for (i = 0; i < got; i++) {
			struct drnic_wire_pkt p;

			TEST_ASSERT_EQUAL(drnic_wire_parse(rx[i], &p), DRNIC_WIRE_OK, "parse");
			TEST_ASSERT_EQUAL(p.bth.dqpn % 3, q, "frame on queue %u", q);
		}
		rte_pktmbuf_free_bulk(rx, got);
		total += got;
	}
	TEST_ASSERT_EQUAL(total, 30, "all frames");
	link_destroy(la);
	link_destroy(lb);
	return TEST_SUCCESS;
}

/* Resolve @p gid on @p from, polling both links, for up to 1 s. */
static int
pt_resolve(struct drnic_link *from, struct drnic_link *to, const uint8_t gid[16], uint8_t mac[6])
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz();
	struct rte_mbuf *rx[32];
	int rc;

	while ((rc = from->ops->resolve(from, gid, mac)) == -EAGAIN &&
	       rte_get_timer_cycles() < end) {
		uint16_t n = link_rx_burst(from, 0, rx, 32);

		rte_pktmbuf_free_bulk(rx, n);
		n = link_rx_burst(to, 0, rx, 32);
		rte_pktmbuf_free_bulk(rx, n);
	}
	return rc;
}

static int
test_ethdev_arp(void)
{
	struct drnic_link *la, *lb;
	uint8_t gid[16], mac[6], bmac[6];
	struct rte_ether_addr pmac;
	uint16_t pa, pb;
	char args[128];
	struct in_addr in;

	TEST_ASSERT_SUCCESS(pt_init(), "mbuf pool");
	if (pt_ring_pair("n", &pa, &pb) < 0)
		TEST_SKIP("net_ring PMD not loadable");
	snprintf(args, sizeof(args), "port=%u,ipv4=192.0.2.1,ipv6=2001:db8::1", pa);
	la = pt_link("pn.a", args, 1, 1);
	snprintf(args, sizeof(args), "port=%u,ipv4=192.0.2.2,ipv6=2001:db8::2", pb);
	lb = pt_link("pn.b", args, 1, 2);
	TEST_ASSERT(la != NULL && lb != NULL, "links: %s", rte_strerror(rte_errno));
	/* port_mac=1 (default): the link's MAC is the port's; a net_ring port
	 * has none (all zero), so the link keeps the configured one. */
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(pb, &pmac), "port MAC");
	TEST_ASSERT_SUCCESS(drnic_link_mac(lb, bmac), "link MAC");
	TEST_ASSERT(rte_is_zero_ether_addr(&pmac) || memcmp(bmac, pmac.addr_bytes, 6) == 0,
		    "link MAC = port MAC");
	TEST_ASSERT(memcmp(bmac, ((uint8_t[6]){ 2, 0, 0, 0, 0, 2 }), 6) == 0, "configured MAC");

	inet_pton(AF_INET, "192.0.2.2", &in);
	drnic_neigh_gid_from_ipv4(in.s_addr, gid);
	TEST_ASSERT_EQUAL(la->ops->resolve(la, gid, mac), -EAGAIN, "first ask queues a request");
	TEST_ASSERT_SUCCESS(pt_resolve(la, lb, gid, mac), "IPv4 resolved");
	TEST_ASSERT(memcmp(mac, bmac, 6) == 0, "IPv4: b's MAC");
	inet_pton(AF_INET6, "2001:db8::2", gid);
	TEST_ASSERT_SUCCESS(pt_resolve(la, lb, gid, mac), "IPv6 resolved");
	TEST_ASSERT(memcmp(mac, bmac, 6) == 0, "IPv6: b's MAC");
	/* b learned a from a's request: no request needed the other way. */
	inet_pton(AF_INET, "192.0.2.1", &in);
	drnic_neigh_gid_from_ipv4(in.s_addr, gid);
	TEST_ASSERT_SUCCESS(lb->ops->resolve(lb, gid, mac), "learned from the request");
	/* Nobody answers for .9: EHOSTUNREACH after the retries (3 x 1 s). */
	inet_pton(AF_INET, "192.0.2.9", &in);
	drnic_neigh_gid_from_ipv4(in.s_addr, gid);
	{
		uint64_t end = rte_get_timer_cycles() + 5 * rte_get_timer_hz();
		int rc;

		while ((rc = pt_resolve(la, lb, gid, mac)) == -EAGAIN && rte_get_timer_cycles() < end)
			;
		TEST_ASSERT_EQUAL(rc, -EHOSTUNREACH, "unanswered");
	}
	link_destroy(la);
	link_destroy(lb);
	return TEST_SUCCESS;
}

/*
 * The device's addresses and MTU (struct link_config) reach the driver: a
 * answers and asks from its configured IPv4 and IPv6 addresses (no ipv4= in
 * link_args), b from a mix; a capture= mirrors the ARP / ND exchange.
 */
static int
test_ethdev_config(void)
{
	struct in_addr a4[1], b4[1];
	struct in6_addr a6[1], b6[1];
	struct link_config c = { .nb_queues = 1, .socket_id = SOCKET_ID_ANY };
	struct drnic_capture_stats cs;
	struct drnic_link *la, *lb;
	uint8_t gid[16], mac[6], bmac[6];
	uint16_t pa, pb;
	char args[192], file[96];

	TEST_ASSERT_SUCCESS(pt_init(), "mbuf pool");
	if (pt_ring_pair("c", &pa, &pb) < 0)
		TEST_SKIP("net_ring PMD not loadable");
	inet_pton(AF_INET, "192.0.2.1", a4);
	inet_pton(AF_INET, "192.0.2.2", b4);
	inet_pton(AF_INET6, "2001:db8::1", a6);
	inet_pton(AF_INET6, "2001:db8::2", b6);
	snprintf(file, sizeof(file), "/tmp/drnic-ptcfg-%d.pcapng", (int)getpid());

	/* Too many addresses. */
	c.name = "pc.x";
	c.args = "port=0";
	c.ipv4 = a4;
	c.nb_ipv4 = LINK_MAX_ADDRS + 1;
	TEST_ASSERT(link_create("ethdev", &c) == NULL && rte_errno == EINVAL, "too many");

	snprintf(args, sizeof(args), "port=%u,capture=%s", pa, file);
	c.name = "pc.a";
	c.args = args;
	c.mac[5] = 1;
	c.mtu = 1500;
	c.nb_ipv4 = 1;
	c.ipv6 = a6;
	c.nb_ipv6 = 1;
	la = link_create("ethdev", &c);
	TEST_ASSERT(la != NULL, "link a: %s", rte_strerror(rte_errno));
	TEST_ASSERT(la->mtu == 1500 && la->nb_addrs == 2, "a: MTU and addresses recorded");
	snprintf(args, sizeof(args), "port=%u,ipv4=192.0.2.2,mtu=1400", pb);
	c.name = "pc.b";
	c.mac[5] = 2;
	c.mtu = 0;
	c.ipv4 = NULL;
	c.nb_ipv4 = 0;
	c.ipv6 = b6;
	lb = link_create("ethdev", &c);
	TEST_ASSERT(lb != NULL, "link b: %s", rte_strerror(rte_errno));
	TEST_ASSERT(lb->mtu == 0 && lb->nb_addrs == 1, "b: no MTU, one address");
	TEST_ASSERT_SUCCESS(drnic_link_mac(lb, bmac), "b's MAC");

	drnic_neigh_gid_from_ipv4(b4[0].s_addr, gid);
	TEST_ASSERT_SUCCESS(pt_resolve(la, lb, gid, mac), "b's IPv4 (link_args) from a's (config)");
	TEST_ASSERT(memcmp(mac, bmac, 6) == 0, "IPv4: b's MAC");
	memcpy(gid, b6, 16);
	TEST_ASSERT_SUCCESS(pt_resolve(la, lb, gid, mac), "b's IPv6 (config) from a's (config)");
	TEST_ASSERT(memcmp(mac, bmac, 6) == 0, "IPv6: b's MAC");
	drnic_neigh_gid_from_ipv4(a4[0].s_addr, gid);
	TEST_ASSERT_SUCCESS(lb->ops->resolve(lb, gid, mac), "b learned a's IPv4");

	TEST_ASSERT_SUCCESS(drnic_link_capture_stats(la, &cs), "a's capture");
	printf("capture of a: %" PRIu64 " frames\n", cs.packets);
	/* Two requests out, two replies in at least. */
	TEST_ASSERT(cs.packets >= 4, "ARP / ND frames mirrored (%" PRIu64 ")", cs.packets);
	link_destroy(la);
	link_destroy(lb);
	TEST_ASSERT(access(file, R_OK) == 0, "capture file written");
	unlink(file);
	return TEST_SUCCESS;
}

static int
test_ethdev_probe(void)
{
	struct rte_mbuf *m, *rx[1];
	struct drnic_link *l;
	uint16_t pid;

	TEST_ASSERT_SUCCESS(pt_init(), "mbuf pool");
	/* Unknown arguments before dev=, and neither dev= nor port=. */
	TEST_ASSERT(pt_link("pp.x", "iface=x", 1, 1) == NULL && rte_errno == EINVAL, "arg order");
	TEST_ASSERT(pt_link("pp.x", "mtu=1500", 1, 1) == NULL && rte_errno == EINVAL, "no port");
	TEST_ASSERT(pt_link("pp.x", "dev=net_nosuchpmd0", 1, 1) == NULL, "unknown device");

	l = pt_link("pp.a", "dev=net_ring_pt0", 1, 1);
	TEST_ASSERT(l != NULL, "probe net_ring_pt0: %s", rte_strerror(rte_errno));
	TEST_ASSERT_SUCCESS(rte_eth_dev_get_port_by_name("net_ring_pt0", &pid), "port exists");
	/* A net_ring vdev without arguments sends to its own receive ring. */
	m = pt_frame(7, 100, 3);
	TEST_ASSERT(m != NULL && link_tx_burst(l, 0, &m, 1) == 1, "send");
	TEST_ASSERT_EQUAL(pt_rx(l, 0, rx, 1), 1, "looped back");
	rte_pktmbuf_free(rx[0]);
	link_destroy(l);
	TEST_ASSERT(rte_eth_dev_get_port_by_name("net_ring_pt0", &pid) != 0, "removed on close");
	/* And again: the name is free. */
	l = pt_link("pp.b", "dev=net_ring_pt0", 1, 1);
	TEST_ASSERT(l != NULL, "probe again: %s", rte_strerror(rte_errno));
	link_destroy(l);
	return TEST_SUCCESS;
}

/* A device @p name with inline progress on ethdev port @p port; NULL and
 * rte_errno when it cannot be opened. */
static struct drnic_device *
pt_device(const char *name, uint16_t port)
{
	struct drnic_config cfg;
	char args[32];

	drnic_config_init(&cfg);
	snprintf(args, sizeof(args), "port=%u", port);
	if (drnic_config_set(&cfg, "name", name) != 0 ||
	    drnic_config_set(&cfg, "progress", "inline") != 0 ||
	    drnic_config_set(&cfg, "link", "ethdev") != 0 ||
	    drnic_config_set(&cfg, "link_args", args) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	return drnic_device_open(&cfg);
}

/* Drive the device until its async queue yields one event; 0 and @p ev, or -ETIMEDOUT. */
static int
pt_async_event(struct drnic_device *dev, struct drnic_async_event *ev)
{
	struct drnic_async_queue *q = drnic_device_async_queue(dev);
	uint64_t end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();

	while (rte_get_timer_cycles() < end) {
		drnic_device_progress(dev);
		if (drnic_try_get_async_event(q, ev) == 0) {
			drnic_ack_async_event(q, ev);
			return 0;
		}
	}
	return -ETIMEDOUT;
}

/* The next event of a subscribed queue @p q (the device is driven by
 * pt_async_event() first); 0 and @p ev, or -EAGAIN. */
static int
pt_sub_event(struct drnic_async_queue *q, struct drnic_async_event *ev)
{
	int rc = drnic_try_get_async_event(q, ev);

	if (rc == 0)
		drnic_ack_async_event(q, ev);
	return rc;
}

/*
 * Port state events: the ethdev port's link going down and coming back
 * reaches the device's async queue as PORT_ERR then PORT_ACTIVE (port 1),
 * and drnic_query_port() tells the same. A queue subscribed to the device
 * (as each drop-in ibv_context's is) gets both events too (issue 13, defect
 * 14); once unsubscribed, no more.
 */
static int
test_ethdev_port_event(void)
{
	struct drnic_async_event ev;
	struct drnic_async_queue *sub;
	struct drnic_port_attr attr;
	struct drnic_device *dev;
	uint16_t pa, pb;

	TEST_ASSERT_SUCCESS(pt_init(), "mbuf pool");
	if (pt_ring_pair("e", &pa, &pb) < 0)
		TEST_SKIP("net_ring PMD not loadable");
	dev = pt_device("pt_event", pa);
	TEST_ASSERT(dev != NULL, "device over port %u: %s", pa, rte_strerror(rte_errno));
	TEST_ASSERT_SUCCESS(drnic_query_port(dev, 1, &attr), "query port");
	TEST_ASSERT_EQUAL(attr.state, DRNIC_PORT_ACTIVE, "port state at open");
	sub = drnic_async_queue_create(0);
	TEST_ASSERT(sub != NULL, "a second queue");
	TEST_ASSERT_EQUAL(drnic_device_async_subscribe(dev, NULL), -EINVAL, "subscribe NULL");
	TEST_ASSERT_EQUAL(drnic_device_async_subscribe(dev, drnic_device_async_queue(dev)),
			  -EINVAL, "subscribe the device's own queue");
	TEST_ASSERT_SUCCESS(drnic_device_async_subscribe(dev, sub), "subscribe");
	TEST_ASSERT_EQUAL(drnic_device_async_subscribe(dev, sub), -EEXIST, "subscribe twice");
	TEST_ASSERT_EQUAL(drnic_async_queue_destroy(sub), -EBUSY, "destroy while subscribed");
	/* Nothing to report while nothing changes. */
	TEST_ASSERT_EQUAL(pt_async_event(dev, &ev), -ETIMEDOUT, "event %s without a change",
			  drnic_event_type_str(ev.event_type));

	TEST_ASSERT_SUCCESS(rte_eth_dev_set_link_down(pa), "set link down");
	TEST_ASSERT_SUCCESS(pt_async_event(dev, &ev), "no event after link down");
	TEST_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_PORT_ERR, "event %s",
			  drnic_event_type_str(ev.event_type));
	TEST_ASSERT_EQUAL(ev.element.port_num, 1, "port number");
	TEST_ASSERT_SUCCESS(pt_sub_event(sub, &ev), "no PORT_ERR in the subscribed queue");
	TEST_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_PORT_ERR, "subscribed: event %s",
			  drnic_event_type_str(ev.event_type));
	TEST_ASSERT_EQUAL(ev.element.port_num, 1, "subscribed: port number");
	TEST_ASSERT_SUCCESS(drnic_query_port(dev, 1, &attr), "query port");
	TEST_ASSERT_EQUAL(attr.state, DRNIC_PORT_DOWN, "port state when down");

	TEST_ASSERT_SUCCESS(rte_eth_dev_set_link_up(pa), "set link up");
	TEST_ASSERT_SUCCESS(pt_async_event(dev, &ev), "no event after link up");
	TEST_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_PORT_ACTIVE, "event %s",
			  drnic_event_type_str(ev.event_type));
	TEST_ASSERT_SUCCESS(pt_sub_event(sub, &ev), "no PORT_ACTIVE in the subscribed queue");
	TEST_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_PORT_ACTIVE, "subscribed: event %s",
			  drnic_event_type_str(ev.event_type));
	TEST_ASSERT_SUCCESS(drnic_query_port(dev, 1, &attr), "query port");
	TEST_ASSERT_EQUAL(attr.state, DRNIC_PORT_ACTIVE, "port state when up again");
	TEST_ASSERT_SUCCESS(drnic_device_async_unsubscribe(dev, sub), "unsubscribe");
	TEST_ASSERT_EQUAL(drnic_device_async_unsubscribe(dev, sub), -ENOENT, "unsubscribe twice");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_link_down(pa), "set link down");
	TEST_ASSERT_SUCCESS(pt_async_event(dev, &ev), "no event after link down");
	TEST_ASSERT_EQUAL(pt_sub_event(sub, &ev), -EAGAIN, "unsubscribed queue got %s",
			  drnic_event_type_str(ev.event_type));
	TEST_ASSERT_SUCCESS(drnic_async_queue_destroy(sub), "destroy once unsubscribed");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_link_up(pa), "set link up");
	TEST_ASSERT_SUCCESS(drnic_device_close(dev), "close");
	return TEST_SUCCESS;
}

/*
 * A frame the ethdev link's classifier must drop: a RoCEv2 SEND_ONLY frame
 * (IPv4 or IPv6, tagged or not) cut to @p keep bytes (0: whole) and with up
 * to three bytes changed, and the counter it must land in.
 */
struct pt_bad_frame {
	const char *why;
	uint8_t ipver;
	bool vlan;
	uint16_t keep;
	struct {
		uint16_t off;   /* 0: unused */
		uint8_t val;
	} set[3];
};

/* Untagged IPv4: IP at 14 (flags 20, protocol 23), UDP port 36. IPv6: next
 * header 20, UDP port 56. Tagged: everything 4 bytes later, inner type 16. */
static const struct pt_bad_frame pt_bad_frames[] = {
	{ "short_frame", 4, false, 10 },
	{ "short_frame", 4, false, 13 },
	{ "short_frame", 4, true, 16 },             /* tag cut */
	{ "short_frame", 4, false, 30 },            /* IPv4 header cut */
	{ "short_frame", 4, false, 38 },            /* UDP header cut */
	{ "short_frame", 4, false, 46 },            /* BTH cut */
	{ "short_frame", 6, false, 44 },            /* IPv6 header cut */
	{ "not_roce", 4, false, 0, { { 23, 6 } } },                 /* TCP */
	{ "not_roce", 4, false, 0, { { 23, 1 } } },                 /* ICMP */
	{ "not_roce", 4, false, 0, { { 23, 132 } } },               /* SCTP */
	{ "not_roce", 4, false, 0, { { 12, 0x88 }, { 13, 0xcc } } }, /* LLDP */
	{ "not_roce", 4, false, 0, { { 12, 0x80 }, { 13, 0x35 } } }, /* RARP */
	{ "not_roce", 4, false, 0, { { 12, 0x00 }, { 13, 0x00 } } },
	{ "not_roce", 6, false, 0, { { 20, 6 } } },                 /* IPv6 TCP */
	{ "not_roce", 6, false, 0, { { 20, 59 } } },                /* no next header */
	{ "not_roce", 4, true, 0, { { 27, 6 } } },                  /* tagged TCP */
	{ "bad_ip_header", 4, false, 0, { { 14, 0x44 } } },         /* IHL 4 */
	{ "bad_ip_header", 4, false, 0, { { 14, 0x65 } } },         /* version 6 */
	{ "bad_ip_header", 6, false, 0, { { 14, 0x45 } } },         /* version 4 */
	{ "ipv6_ext_header", 6, false, 0, { { 20, 0 } } },          /* hop-by-hop */
	{ "ipv6_ext_header", 6, false, 0, { { 20, 43 } } },         /* routing */
	{ "ipv6_ext_header", 6, false, 0, { { 20, 60 } } },         /* destination */
	{ "ipv6_ext_header", 6, false, 0, { { 20, 51 } } },         /* AH */
	{ "vlan_stacked", 4, true, 0, { { 16, 0x81 }, { 17, 0x00 } } },
	{ "vlan_stacked", 4, true, 0, { { 16, 0x88 }, { 17, 0xa8 } } },
	{ "vlan_stacked", 4, true, 0, { { 16, 0x91 }, { 17, 0x00 } } },
	{ "vlan_stacked", 4, true, 0, { { 12, 0x88 }, { 13, 0xa8 } } }, /* 802.1ad outer */
	{ "vlan_stacked", 4, true, 0, { { 12, 0x91 }, { 13, 0x00 } } },
	{ "udp_port", 4, false, 0, { { 36, 0x12 }, { 37, 0xb8 } } },    /* 4792 */
	{ "udp_port", 4, false, 0, { { 36, 0 }, { 37, 53 } } },
	{ "udp_port", 4, false, 0, { { 36, 0 }, { 37, 0 } } },
	{ "udp_port", 4, false, 0, { { 36, 0xb7 }, { 37, 0x12 } } },    /* byte-swapped */
	{ "udp_port", 4, true, 0, { { 40, 0 }, { 41, 1 } } },
	{ "udp_port", 6, false, 0, { { 56, 0x12 }, { 57, 0xb6 } } },    /* 4790 */
	{ "ip_fragment", 4, false, 0, { { 20, 0x20 }, { 21, 0 } } },    /* MF */
	{ "ip_fragment", 4, false, 0, { { 20, 0x00 }, { 21, 1 } } },    /* offset 8 */
	{ "ip_fragment", 4, false, 0, { { 20, 0x20 }, { 21, 0x10 } } },
	{ "ip_fragment", 4, false, 0, { { 20, 0x60 }, { 21, 0 } } },    /* DF and MF */
	{ "ip_fragment", 4, false, 0, { { 20, 0x1f }, { 21, 0xff } } }, /* last offset */
	{ "ip_fragment", 4, false, 0, { { 20, 0x20 }, { 36, 0x12 }, { 37, 0xb8 } } },
	{ "ip_fragment", 4, true, 0, { { 24, 0x20 } } },
	{ "ip_fragment", 6, false, 0, { { 20, 44 } } },             /* Fragment header */
	{ "neigh_vlan", 4, true, 0, { { 16, 0x08 }, { 17, 0x06 } } }, /* tagged ARP */
	{ "neigh_vlan", 6, true, 0, { { 24, 58 } } },               /* tagged ICMPv6 */
};

static struct rte_mbuf *
pt_bad_frame_build(const struct pt_bad_frame *b)
{
	struct rte_mbuf *m = pt_frame_ip(0x11, 32, 1, b->ipver, b->vlan);
	unsigned int k;

	if (m == NULL)
		return NULL;
	if (b->keep != 0 && rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - b->keep)) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	for (k = 0; k < RTE_DIM(b->set); k++)
		if (b->set[k].off != 0)
			rte_pktmbuf_mtod(m, uint8_t *)[b->set[k].off] = b->set[k].val;
	return m;
}

/* The link drop counter named @p name, or -1 when no reason has that name. */
static long long
pt_drop_count(const struct drnic_link_stats *s, const char *name)
{
	unsigned int r;

	for (r = 0; r < DRNIC_LINK_DROP_MAX; r++)
		if (strcmp(drnic_link_drop_name(r), name) == 0)
			return (long long)s->drops[r];
	return -1;
}

/* How many of pt_bad_frames must land in @p name. */
static long long
pt_bad_expected(const char *name)
{
	long long n = 0;
	unsigned int i;

	for (i = 0; i < RTE_DIM(pt_bad_frames); i++)
		n += strcmp(pt_bad_frames[i].why, name) == 0;
	return n;
}

#define PT_GOOD_FRAMES 3

/*
 * Every frame the ethdev link's classifier drops has its named counter:
 * each kind of bad frame arrives on a device's ethdev link (net_ring pair,
 * inline progress) and lands in its own reason, read back through
 * drnic_link_stats_get() and telemetry's /drnic/links; the three good
 * RoCEv2 frames (IPv4, IPv6, tagged) reach the engine; the port's own loss
 * counters are shown and, on a net_ring port, zero; a reset zeroes all.
 */
static int
test_ethdev_drops(void)
{
	struct rte_mbuf *m[RTE_DIM(pt_bad_frames) + PT_GOOD_FRAMES];
	struct drnic_link_stats s;
	struct drnic_device *dev;
	struct drnic_link *la, *lb;
	uint64_t end, dropped;
	unsigned int i, r, n = 0, sent = 0;
	char args[64], path[512], buf[16384], key[64];
	uint16_t pa, pb;
	int fd;

	TEST_ASSERT_SUCCESS(pt_init(), "mbuf pool");
	if (pt_ring_pair("d", &pa, &pb) < 0)
		TEST_SKIP("net_ring PMD not loadable");
	snprintf(args, sizeof(args), "port=%u", pa);
	la = pt_link("pd.a", args, 1, 1);
	TEST_ASSERT(la != NULL, "link a: %s", rte_strerror(rte_errno));
	dev = pt_device("pt_drops", pb);
	TEST_ASSERT(dev != NULL, "device over port %u: %s", pb, rte_strerror(rte_errno));
	lb = drnic_device_link(dev);
	TEST_ASSERT_SUCCESS(drnic_telemetry_init(), "telemetry");
	TEST_ASSERT_SUCCESS(drnic_telemetry_add_device(dev), "telemetry device");

	for (i = 0; i < RTE_DIM(pt_bad_frames); i++) {
		m[n] = pt_bad_frame_build(&pt_bad_frames[i]);
		TEST_ASSERT(m[n] != NULL, "bad frame %u", i);
		n++;
	}
	m[n++] = pt_frame_ip(0x11, 32, 2, 4, false);
	m[n++] = pt_frame_ip(0x11, 32, 3, 6, false);
	m[n++] = pt_frame_ip(0x11, 32, 4, 4, true);
	TEST_ASSERT(m[n - 3] != NULL && m[n - 2] != NULL && m[n - 1] != NULL, "good frames");
	end = rte_get_timer_cycles() + rte_get_timer_hz();
	while (sent < n && rte_get_timer_cycles() < end)
		sent += link_tx_burst(la, 0, m + sent, (uint16_t)RTE_MIN(n - sent, 32u));
	TEST_ASSERT_EQUAL(sent, n, "frames sent");

	/* The device's engine polls the link until every frame is accounted for. */
	end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();
	do {
		drnic_device_progress(dev);
		TEST_ASSERT_SUCCESS(drnic_link_stats_get(lb, &s), "stats");
		for (dropped = 0, r = 0; r < DRNIC_LINK_DROP_MAX; r++)
			dropped += s.drops[r];
	} while (dropped + s.rx_packets < n && rte_get_timer_cycles() < end);
	for (i = 0; i < RTE_DIM(pt_bad_frames); i++) {
		const char *why = pt_bad_frames[i].why;

		TEST_ASSERT(pt_drop_count(&s, why) >= 0, "no link counter named %s", why);
		TEST_ASSERT_EQUAL(pt_drop_count(&s, why), pt_bad_expected(why), "drops %s", why);
	}
	for (r = 0; r < DRNIC_LINK_DROP_MAX; r++)
		if (pt_bad_expected(drnic_link_drop_name(r)) == 0)
			TEST_ASSERT_EQUAL(s.drops[r], 0, "drops %s", drnic_link_drop_name(r));
	TEST_ASSERT_EQUAL(s.rx_packets, PT_GOOD_FRAMES, "good frames delivered to the engine");
	for (r = 0; r < DRNIC_LINK_DROP_MAX; r++)
		printf("  drop %s %" PRIu64 "\n", drnic_link_drop_name(r), s.drops[r]);

	fd = tel_client_connect(path, sizeof(path));
	if (fd < 0) {
		drnic_telemetry_clear();
		drnic_device_close(dev);
		link_destroy(la);
		TEST_SKIP("no telemetry socket of this process under %s", rte_eal_get_runtime_dir());
	}
	TEST_ASSERT_SUCCESS(tel_client_query(fd, "/drnic/links,pt_drops", buf, sizeof(buf)),
			    "query /drnic/links");
	close(fd);
	for (r = 0; r < DRNIC_LINK_DROP_MAX; r++) {
		snprintf(key, sizeof(key), "drop_%s", drnic_link_drop_name(r));
		TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, key), (long long)s.drops[r],
				  "telemetry %s", key);
	}
	for (i = 0; i < RTE_DIM(pt_bad_frames); i++) {
		snprintf(key, sizeof(key), "drop_%s", pt_bad_frames[i].why);
		TEST_ASSERT_EQUAL(tel_client_num(buf, NULL, key),
				  pt_bad_expected(pt_bad_frames[i].why), "telemetry %s", key);
	}
	TEST_ASSERT(strstr(buf, "\"driver\":\"ethdev\"") != NULL, "telemetry driver name");

	TEST_ASSERT_SUCCESS(drnic_link_stats_reset(lb), "reset");
	TEST_ASSERT_SUCCESS(drnic_link_stats_get(lb, &s), "stats");
	for (r = 0; r < DRNIC_LINK_DROP_MAX; r++)
		TEST_ASSERT_EQUAL(s.drops[r], 0, "drops %s after reset", drnic_link_drop_name(r));
	drnic_telemetry_clear();
	TEST_ASSERT_SUCCESS(drnic_device_close(dev), "close");
	link_destroy(la);
	return TEST_SUCCESS;
}

/* A slow callback of the interrupt thread, as memif's disconnect handler
 * can be: it runs @c ms milliseconds, or until @c release when @c ms is 0. */
static struct {
	int efd;
	int entered, done, release;
	unsigned int ms;
} pt_slow;

static void
pt_slow_cb(void *arg)
{
	uint64_t v;

	RTE_SET_USED(arg);
	if (read(pt_slow.efd, &v, sizeof(v)) < 0)
		return;
	__atomic_store_n(&pt_slow.entered, 1, __ATOMIC_RELEASE);
	if (pt_slow.ms > 0)
		rte_delay_us_block(pt_slow.ms * 1000u);
	else
		while (!__atomic_load_n(&pt_slow.release, __ATOMIC_ACQUIRE))
			rte_pause();
	__atomic_store_n(&pt_slow.done, 1, __ATOMIC_RELEASE);
}

/* Start pt_slow_cb() in the interrupt thread; true once it is in it. */
static bool
pt_slow_start(unsigned int ms)
{
	uint64_t one = 1, t0 = rte_get_timer_cycles();

	pt_slow.ms = ms;
	pt_slow.entered = pt_slow.done = pt_slow.release = 0;
	if (write(pt_slow.efd, &one, sizeof(one)) != sizeof(one))
		return false;
	while (!__atomic_load_n(&pt_slow.entered, __ATOMIC_ACQUIRE))
		if (rte_get_timer_cycles() - t0 > 5 * rte_get_timer_hz())
			return false;
	return true;
}

/*
 * drnic_env_intr_barrier() returns only after the callback the interrupt
 * thread is in has returned (drnic-portpp's memif server stopped its port
 * beside memif's disconnect handler, and crashed), and fails -ETIMEDOUT
 * while one runs past its timeout, without harm to what runs later.
 */
static int
test_env_intr_barrier(void)
{
	struct rte_intr_handle *h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	uint64_t t0;

	pt_slow.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	TEST_ASSERT(h != NULL && pt_slow.efd >= 0, "a handle and an eventfd");
	TEST_ASSERT(rte_intr_fd_set(h, pt_slow.efd) == 0 &&
		    rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) == 0 &&
		    rte_intr_callback_register(h, pt_slow_cb, NULL) == 0,
		    "a callback of the interrupt thread");
	TEST_ASSERT_SUCCESS(drnic_env_intr_barrier(1000), "the thread idle");

	TEST_ASSERT(pt_slow_start(50), "the interrupt thread in a 50 ms callback");
	TEST_ASSERT_SUCCESS(drnic_env_intr_barrier(5000), "barrier");
	TEST_ASSERT(__atomic_load_n(&pt_slow.done, __ATOMIC_ACQUIRE),
		    "the barrier returned after the callback it was in");

	TEST_ASSERT(pt_slow_start(0), "the interrupt thread in a callback held");
	TEST_ASSERT_EQUAL(drnic_env_intr_barrier(20), -ETIMEDOUT, "held past the timeout");
	__atomic_store_n(&pt_slow.release, 1, __ATOMIC_RELEASE);
	/* The one that timed out runs later: the thread goes on with others. */
	t0 = rte_get_timer_cycles();
	while (!__atomic_load_n(&pt_slow.done, __ATOMIC_ACQUIRE) &&
	       rte_get_timer_cycles() - t0 < 5 * rte_get_timer_hz())
		rte_pause();
	TEST_ASSERT_SUCCESS(drnic_env_intr_barrier(1000), "a barrier after that");

	TEST_ASSERT(rte_intr_callback_unregister_sync(h, pt_slow_cb, NULL) >= 0, "unregister");
	rte_intr_instance_free(h);
	close(pt_slow.efd);
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(ethdev_ring_autotest, DRNIC_TEST_FAST, test_ethdev_ring);
DRNIC_TEST_REGISTER(ethdev_steer_autotest, DRNIC_TEST_FAST, test_ethdev_steer);
DRNIC_TEST_REGISTER(ethdev_arp_autotest, DRNIC_TEST_FAST, test_ethdev_arp);
DRNIC_TEST_REGISTER(ethdev_probe_autotest, DRNIC_TEST_FAST, test_ethdev_probe);
DRNIC_TEST_REGISTER(ethdev_config_autotest, DRNIC_TEST_FAST, test_ethdev_config);
DRNIC_TEST_REGISTER(ethdev_port_event_autotest, DRNIC_TEST_FAST, test_ethdev_port_event);
DRNIC_TEST_REGISTER(ethdev_drops_autotest, DRNIC_TEST_FAST, test_ethdev_drops);
DRNIC_TEST_REGISTER(env_intr_barrier_autotest, DRNIC_TEST_FAST, test_env_intr_barrier);
