/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef UT_ENGINE_LINK_H
#define UT_ENGINE_LINK_H

/*
 * A fake link for the engine's loop-side tests (transmit staging, receive,
 * control): its ops table records every frame the engine transmits (in
 * order, with the burst it came in) and hands the engine the frames a test
 * queued for receive. It may take fewer frames than offered (a full link)
 * and say it is down. Fault injection and capture are never attached: their
 * entry points fail the test if called. link_drop() records what the engine
 * gave up on. EAL runs without huge pages, for a real mbuf pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "link_driver.h"

#define UT_LINK_MAX 512

struct ut_link {
	struct drnic_link link;
	/* Transmit: what the link took, in order; the burst each came in. */
	struct rte_mbuf *sent[UT_LINK_MAX];
	unsigned int sent_burst[UT_LINK_MAX];
	unsigned int nsent;
	unsigned int bursts;          /* tx_burst calls with frames */
	unsigned int tx_take;         /* most frames the next bursts take */
	/* Receive: frames waiting for rx_burst. */
	struct rte_mbuf *rxq[UT_LINK_MAX];
	unsigned int rx_head, rx_tail;
	bool up;
	/* link_drop(): the frames and the reason of the last call. */
	unsigned int dropped;
	enum drnic_link_drop drop_reason;
};

static uint16_t
ut_link_tx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct ut_link *l = container_of(link, struct ut_link, link);
	uint16_t i, take = (uint16_t)RTE_MIN((unsigned int)n, l->tx_take);

	RTE_SET_USED(q);
	if (n > 0)
		l->bursts++;
	for (i = 0; i < take && l->nsent < UT_LINK_MAX; i++) {
		l->sent_burst[l->nsent] = l->bursts;
		l->sent[l->nsent++] = pkts[i];
	}
	return i;
}

static uint16_t
ut_link_rx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct ut_link *l = container_of(link, struct ut_link, link);
	uint16_t i = 0;

	RTE_SET_USED(q);
	while (i < n && l->rx_head != l->rx_tail)
		pkts[i++] = l->rxq[l->rx_head++ % UT_LINK_MAX];
	return i;
}

static bool
ut_link_is_up(const struct drnic_link *link)
{
	return container_of(link, const struct ut_link, link)->up;
}

static const struct link_ops ut_link_ops = {
	.name = "ut_fake",
	.tx_burst = ut_link_tx_burst,
	.rx_burst = ut_link_rx_burst,
	.is_up = ut_link_is_up,
};

/* A link that is up and takes everything; sent frames freed. */
static __rte_unused void
ut_link_reset(struct ut_link *l, uint8_t mac_last)
{
	unsigned int i;

	for (i = 0; i < l->nsent; i++)
		rte_pktmbuf_free(l->sent[i]);
	while (l->rx_head != l->rx_tail)
		rte_pktmbuf_free(l->rxq[l->rx_head++ % UT_LINK_MAX]);
	memset(l, 0, sizeof(*l));
	l->link.ops = &ut_link_ops;
	snprintf(l->link.name, sizeof(l->link.name), "ut_fake%u", mac_last);
	l->link.nb_queues = 1;
	memcpy(l->link.mac, (const uint8_t[6]){ 0x02, 0, 0, 0, 0, mac_last }, 6);
	l->tx_take = UINT32_MAX;
	l->up = true;
}

/* Queue @p m for the engine's next receive. */
static __rte_unused void
ut_link_feed(struct ut_link *l, struct rte_mbuf *m)
{
	l->rxq[l->rx_tail++ % UT_LINK_MAX] = m;
}

void
link_drop(struct drnic_link *link, uint16_t q, enum drnic_link_drop reason,
	  struct rte_mbuf **pkts, uint16_t n)
{
	struct ut_link *l = container_of(link, struct ut_link, link);

	l->dropped += n;
	l->drop_reason = reason;
	link->stats[q].drops[reason] += n;
	rte_pktmbuf_free_bulk(pkts, n);
}

uint16_t
link_fault_tx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(link);
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	CU_FAIL("no fault injector is attached");
	return n;
}

uint16_t
link_fault_rx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(link);
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	CU_FAIL("no fault injector is attached");
	return 0;
}

uint16_t
link_capture_tx(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(link);
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	CU_FAIL("no capture runs");
	return n;
}

void
link_capture_mirror(struct drnic_link *link, struct rte_mbuf *const *pkts, uint16_t n,
		    enum drnic_capture_dir dir)
{
	RTE_SET_USED(link);
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	RTE_SET_USED(dir);
	CU_FAIL("no capture runs");
}

/* EAL without huge pages and a pool of @p n mbufs of 4 KiB. */
static __rte_unused struct rte_mempool *
ut_eal_pool(const char *prog, unsigned int n)
{
	char *argv[] = {
		(char *)(uintptr_t)prog, (char *)"--no-huge", (char *)"--no-shconf",
		(char *)"--no-pci", (char *)"--no-telemetry", (char *)"-l", (char *)"0",
		(char *)"-m", (char *)"128", (char *)"--log-level=lib.eal:error", NULL,
	};
	struct rte_mempool *mp;

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return NULL;
	}
	mp = rte_pktmbuf_pool_create("ut_pool", n, 0, 0, RTE_PKTMBUF_HEADROOM + 4096,
				     SOCKET_ID_ANY);
	if (mp == NULL)
		fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
	return mp;
}

#endif
