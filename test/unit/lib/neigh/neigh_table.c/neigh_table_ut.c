/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/neigh/neigh_table.c, driven by a fake clock: answers to
 * the kernel's requests equal the kernel's own answers, resolution with
 * retries and negative entries, learning rules of RFC 826 and RFC 4861 7.2.5,
 * eviction, refresh, and every error.
 */
#include "lib/neigh/neigh_table.c"

#include "ut_common.h"
#include "../neigh_ut.h"

#define MS 1000000ull

static struct drnic_neigh *
ut_table(const uint8_t mac[6], const char *ip4, const uint8_t *ip6, unsigned int size)
{
	struct drnic_neigh_params p = { .size = size };
	struct drnic_neigh *t;
	uint8_t gid[16];

	memcpy(p.mac, mac, 6);
	t = drnic_neigh_create(&p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	if (ip4 != NULL) {
		ut_gid4(ip4, gid);
		CU_ASSERT_EQUAL(drnic_neigh_addr_add(t, gid), 0);
	}
	if (ip6 != NULL)
		CU_ASSERT_EQUAL(drnic_neigh_addr_add(t, ip6), 0);
	return t;
}

static int
ut_input(struct drnic_neigh *t, const void *frame, uint16_t len, uint64_t now,
	 struct rte_mbuf **reply)
{
	struct rte_mbuf *m = ut_mbuf(frame, len);
	int rc = drnic_neigh_input(t, m, now, ut_pool, reply);

	rte_pktmbuf_free(m);
	return rc;
}

/* We are B: the kernel's requests get the kernel's answers. */
static void
test_answer_kernel(void)
{
	struct drnic_neigh *t = ut_table(ut_mac_b, "10.200.0.2", ut_ip6_b, 0);
	struct drnic_neigh_stats st;
	struct rte_mbuf *r = NULL;
	uint8_t gid[16], mac[6];

	CU_ASSERT_EQUAL(ut_input(t, ut_k_arp_req, 42, 0, &r), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->pkt_len, 60);
	CU_ASSERT_EQUAL(memcmp(rte_pktmbuf_mtod(r, void *), ut_k_arp_rep, 42), 0);
	rte_pktmbuf_free(r);
	/* RFC 826: we are the target, so the sender is added. */
	ut_gid4("10.200.0.1", gid);
	CU_ASSERT_EQUAL(drnic_neigh_lookup(t, gid, mac), 0);
	CU_ASSERT_EQUAL(memcmp(mac, ut_mac_a, 6), 0);

	CU_ASSERT_EQUAL(ut_input(t, ut_k_ns, sizeof(ut_k_ns), 0, &r), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->pkt_len, sizeof(ut_k_na));
	CU_ASSERT_EQUAL(memcmp(rte_pktmbuf_mtod(r, void *), ut_k_na, sizeof(ut_k_na)), 0);
	rte_pktmbuf_free(r);
	CU_ASSERT_EQUAL(drnic_neigh_lookup(t, ut_ip6_a, mac), 0);
	CU_ASSERT_EQUAL(memcmp(mac, ut_mac_a, 6), 0);

	/* Not a neighbour frame: the caller's. */
	CU_ASSERT_EQUAL(ut_input(t, ut_k_rs, sizeof(ut_k_rs), 0, &r), -ENOTSUP);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_EQUAL(drnic_neigh_stats_get(t, &st), 0);
	CU_ASSERT_EQUAL(st.arp_req_rx, 1);
	CU_ASSERT_EQUAL(st.arp_rep_tx, 1);
	CU_ASSERT_EQUAL(st.ns_rx, 1);
	CU_ASSERT_EQUAL(st.na_tx, 1);
	CU_ASSERT_EQUAL(st.learned, 2);
	drnic_neigh_free(t);
}

/* We are A: our questions are the kernel's, its answers resolve them. */
static void
test_resolve(void)
{
	struct drnic_neigh *t = ut_table(ut_mac_a, "10.200.0.1", ut_ip6_a, 0);
	struct drnic_neigh_stats st;
	struct rte_mbuf *out[4] = { NULL }, *r;
	uint8_t gid[16], mac[6];

	ut_gid4("10.200.0.2", gid);
	CU_ASSERT_FALSE(drnic_neigh_pending(t));
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -EAGAIN);
	CU_ASSERT_TRUE(drnic_neigh_pending(t));
	CU_ASSERT_EQUAL(drnic_neigh_lookup(t, gid, mac), -ENOENT);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, 0, ut_pool, out, 4), 1);
	CU_ASSERT_EQUAL(memcmp(rte_pktmbuf_mtod(out[0], void *), ut_k_arp_req, 42), 0);
	rte_pktmbuf_free(out[0]);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, 10 * MS, ut_pool, out, 4), 0);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 10 * MS, mac), -EAGAIN);
	CU_ASSERT_EQUAL(ut_input(t, ut_k_arp_rep, 42, 20 * MS, &r), 0);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 20 * MS, mac), 0);
	CU_ASSERT_EQUAL(memcmp(mac, ut_mac_b, 6), 0);
	CU_ASSERT_FALSE(drnic_neigh_pending(t));

	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, ut_ip6_b, 30 * MS, mac), -EAGAIN);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, 30 * MS, ut_pool, out, 4), 1);
	CU_ASSERT_EQUAL(out[0]->pkt_len, sizeof(ut_k_ns));
	CU_ASSERT_EQUAL(memcmp(rte_pktmbuf_mtod(out[0], void *), ut_k_ns, sizeof(ut_k_ns)), 0);
	rte_pktmbuf_free(out[0]);
	CU_ASSERT_EQUAL(ut_input(t, ut_k_na, sizeof(ut_k_na), 31 * MS, &r), 0);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, ut_ip6_b, 31 * MS, mac), 0);
	CU_ASSERT_EQUAL(memcmp(mac, ut_mac_b, 6), 0);

	/* Our own address resolves to our MAC. */
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, ut_ip6_a, 0, mac), 0);
	CU_ASSERT_EQUAL(memcmp(mac, ut_mac_a, 6), 0);
	drnic_neigh_stats_get(t, &st);
	CU_ASSERT_EQUAL(st.resolved, 2);
	CU_ASSERT_EQUAL(st.arp_req_tx, 1);
	CU_ASSERT_EQUAL(st.ns_tx, 1);
	drnic_neigh_free(t);
}

/* Three requests a second apart, then a negative entry for fail_ms. */
static void
test_retry_and_fail(void)
{
	struct drnic_neigh *t = ut_table(ut_mac_a, "10.200.0.1", NULL, 0);
	struct drnic_neigh_stats st;
	struct rte_mbuf *out[4] = { NULL }, *r;
	uint8_t gid[16], mac[6];
	uint64_t t0 = 5000 * MS;

	ut_gid4("10.200.0.2", gid);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, t0, mac), -EAGAIN);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, t0, ut_pool, out, 4), 1);
	rte_pktmbuf_free(out[0]);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, t0 + 999 * MS, ut_pool, out, 4), 0);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, t0 + 1000 * MS, ut_pool, out, 4), 1);
	rte_pktmbuf_free(out[0]);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, t0 + 2000 * MS, ut_pool, out, 4), 1);
	rte_pktmbuf_free(out[0]);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, t0 + 2500 * MS, mac), -EAGAIN);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, t0 + 3000 * MS, ut_pool, out, 4), 0);
	CU_ASSERT_FALSE(drnic_neigh_pending(t));
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, t0 + 3000 * MS, mac), -EHOSTUNREACH);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, t0 + 5999 * MS, mac), -EHOSTUNREACH);
	/* Expired: ask again. */
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, t0 + 6000 * MS, mac), -EAGAIN);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, t0 + 6000 * MS, ut_pool, out, 4), 1);
	rte_pktmbuf_free(out[0]);
	/* The peer speaks first (its answer) while we still ask: resolved. */
	CU_ASSERT_EQUAL(ut_input(t, ut_k_arp_rep, 42, t0 + 6001 * MS, &r), 0);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, t0 + 6001 * MS, mac), 0);
	drnic_neigh_stats_get(t, &st);
	CU_ASSERT_EQUAL(st.failed, 1);
	CU_ASSERT_EQUAL(st.arp_req_tx, 4);
	/* No mbufs: nothing built, counted, and the question stays. */
	ut_gid4("10.200.0.3", gid);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -EAGAIN);
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, 0, NULL, out, 4), 0);
	CU_ASSERT_TRUE(drnic_neigh_pending(t));
	drnic_neigh_stats_get(t, &st);
	CU_ASSERT_EQUAL(st.nomem, 1);
	drnic_neigh_free(t);
}

/* Who may create entries: targets of ARP requests aimed at us, not others;
 * an unsolicited NA updates only. */
static void
test_learning_rules(void)
{
	struct drnic_neigh *t = ut_table(ut_mac_b, "10.200.0.3", ut_ip6_b, 0);
	struct drnic_neigh_stats st;
	struct rte_mbuf *r = NULL;
	uint8_t gid[16], mac[6], f[86];

	/* Request for 10.200.0.2 (not us): no reply, sender not added. */
	CU_ASSERT_EQUAL(ut_input(t, ut_k_arp_req, 42, 0, &r), 0);
	CU_ASSERT_PTR_NULL(r);
	ut_gid4("10.200.0.1", gid);
	CU_ASSERT_EQUAL(drnic_neigh_lookup(t, gid, mac), -ENOENT);
	/* An unsolicited NA for fd00::2... is about us: ignored; for fd00::1
	 * without an entry: not created. */
	memcpy(f, ut_k_na, sizeof(f));
	CU_ASSERT_EQUAL(ut_input(t, f, sizeof(f), 0, &r), 0);
	CU_ASSERT_EQUAL(drnic_neigh_lookup(t, ut_ip6_a, mac), -ENOENT);
	/* Once asked for, a request from the sender updates the entry
	 * (RFC 826 merge) even though it is not for us. */
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -EAGAIN);
	CU_ASSERT_EQUAL(ut_input(t, ut_k_arp_req, 42, 0, &r), 0);
	CU_ASSERT_EQUAL(drnic_neigh_lookup(t, gid, mac), 0);
	CU_ASSERT_EQUAL(memcmp(mac, ut_mac_a, 6), 0);
	drnic_neigh_stats_get(t, &st);
	CU_ASSERT_EQUAL(st.not_ours, 2);
	CU_ASSERT_EQUAL(st.arp_rep_tx, 0);

	/* Duplicate address detection probe for our address: defended with an
	 * NA to all nodes, override only. */
	memset(f, 0, sizeof(f));
	memcpy(f, ut_k_ns, sizeof(ut_k_ns));
	memset(f + 22, 0, 16);          /* source :: */
	memcpy(f + 62, ut_ip6_b, 16);   /* target = our address */
	f[19] = 24;                     /* no option */
	f[56] = f[57] = 0;
	memcpy(f + 38, (uint8_t[16]){ 0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 2 }, 16);
	{
		uint16_t c = drnic_neigh_icmp6_cksum(f + 22, f + 38, f + 54, 24);

		f[56] = (uint8_t)(c >> 8), f[57] = (uint8_t)c;
	}
	CU_ASSERT_EQUAL(ut_input(t, f, 78, 0, &r), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	{
		struct drnic_neigh_msg msg;

		CU_ASSERT_EQUAL(drnic_neigh_parse(r, &msg), 0);
		CU_ASSERT_EQUAL(msg.kind, DRNIC_NEIGH_ND_ADVERT);
		CU_ASSERT_EQUAL(msg.dst_ip[0], 0xff);
		CU_ASSERT_EQUAL(msg.dst_ip[15], 1);
		CU_ASSERT_EQUAL(msg.na_flags, DRNIC_NEIGH_NA_OVERRIDE);
		CU_ASSERT_EQUAL(memcmp(msg.lladdr, ut_mac_b, 6), 0);
	}
	rte_pktmbuf_free(r);
	/* Malformed: counted. */
	memcpy(f, ut_k_ns, sizeof(ut_k_ns));
	f[21] = 1;
	CU_ASSERT_EQUAL(ut_input(t, f, sizeof(ut_k_ns), 0, &r), -EBADMSG);
	drnic_neigh_stats_get(t, &st);
	CU_ASSERT_EQUAL(st.bad, 1);
	drnic_neigh_free(t);
}

static void
test_errors_and_limits(void)
{
	struct drnic_neigh *t = ut_table(ut_mac_a, "10.200.0.1", NULL, 2);
	struct drnic_neigh_params p = { .size = 70000 };
	uint8_t gid[16], mac[6];
	unsigned int i;

	CU_ASSERT_PTR_NULL(drnic_neigh_create(NULL));
	CU_ASSERT_PTR_NULL(drnic_neigh_create(&p));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	ut_gid4("10.200.0.1", gid);
	CU_ASSERT_EQUAL(drnic_neigh_addr_add(t, gid), -EEXIST);
	ut_gid4("224.0.0.1", gid);
	CU_ASSERT_EQUAL(drnic_neigh_addr_add(t, gid), -EINVAL);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -EINVAL);
	ut_gid4("0.0.0.0", gid);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -EINVAL);
	CU_ASSERT_EQUAL(drnic_neigh_addr_add(t, (uint8_t[16]){ 0 }), -EINVAL);
	for (i = 2; i < 9; i++) {
		char s[32];

		snprintf(s, sizeof(s), "10.201.0.%u", i);
		ut_gid4(s, gid);
		CU_ASSERT_EQUAL(drnic_neigh_addr_add(t, gid), 0);
	}
	CU_ASSERT_EQUAL(drnic_neigh_addr_add(t, ut_ip6_a), -ENOSPC);
	/* No IPv6 address of ours to ask from. */
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, ut_ip6_b, 0, mac), -EADDRNOTAVAIL);
	/* Two entries, both pending: a third does not fit. */
	ut_gid4("10.200.0.2", gid);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -EAGAIN);
	ut_gid4("10.200.0.3", gid);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -EAGAIN);
	ut_gid4("10.200.0.4", gid);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -ENOSPC);
	/* Answered entries can be evicted, static ones cannot. */
	CU_ASSERT_EQUAL(ut_input(t, ut_k_arp_rep, 42, 1, &(struct rte_mbuf *){ NULL }), 0);
	CU_ASSERT_EQUAL(drnic_neigh_add_static(t, gid, ut_mac_b), 0);  /* evicts .2 */
	ut_gid4("10.200.0.2", gid);
	CU_ASSERT_EQUAL(drnic_neigh_lookup(t, gid, mac), -ENOENT);
	ut_gid4("10.200.0.4", gid);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), 0);
	CU_ASSERT_EQUAL(memcmp(mac, ut_mac_b, 6), 0);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(NULL, gid, 0, mac), -EINVAL);
	CU_ASSERT_EQUAL(drnic_neigh_stats_get(t, NULL), -EINVAL);
	drnic_neigh_free(t);
	drnic_neigh_free(NULL);
}

/* reachable_ms: a stale entry still answers while a refresh goes out. */
static void
test_refresh(void)
{
	struct drnic_neigh_params p = { .reachable_ms = 100 };
	struct drnic_neigh *t;
	struct rte_mbuf *out[2] = { NULL }, *r;
	uint8_t gid[16], mac[6];

	memcpy(p.mac, ut_mac_a, 6);
	t = drnic_neigh_create(&p);
	ut_gid4("10.200.0.1", gid);
	drnic_neigh_addr_add(t, gid);
	ut_gid4("10.200.0.2", gid);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 0, mac), -EAGAIN);
	CU_ASSERT_EQUAL(ut_input(t, ut_k_arp_rep, 42, 0, &r), 0);
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 50 * MS, mac), 0);
	CU_ASSERT_FALSE(drnic_neigh_pending(t));
	CU_ASSERT_EQUAL(drnic_neigh_resolve(t, gid, 150 * MS, mac), 0);
	CU_ASSERT_TRUE(drnic_neigh_pending(t));
	CU_ASSERT_EQUAL(drnic_neigh_poll(t, 150 * MS, ut_pool, out, 2), 1);
	rte_pktmbuf_free(out[0]);
	CU_ASSERT_EQUAL(ut_input(t, ut_k_arp_rep, 42, 160 * MS, &r), 0);
	CU_ASSERT_FALSE(drnic_neigh_pending(t));
	drnic_neigh_free(t);
}

int
main(void)
{
	CU_pSuite s;

	if (ut_eal_init("neigh_table_ut") < 0)
		return 1;
	CU_initialize_registry();
	s = CU_add_suite("neigh_table", NULL, NULL);
	CU_ADD_TEST(s, test_answer_kernel);
	CU_ADD_TEST(s, test_resolve);
	CU_ADD_TEST(s, test_retry_and_fail);
	CU_ADD_TEST(s, test_learning_rules);
	CU_ADD_TEST(s, test_errors_and_limits);
	CU_ADD_TEST(s, test_refresh);
	return ut_run_all();
}
