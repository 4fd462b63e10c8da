/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/neigh/neigh_codec.c: byte layouts of RFC 826 and RFC 4861
 * checked against frames of the Linux kernel (ours must equal them byte for
 * byte), the receive checks of RFC 4861 7.1, and the address helpers.
 */
#include "lib/neigh/neigh_codec.c"

#include "ut_common.h"
#include "../neigh_ut.h"

static void
test_gid_helpers(void)
{
	uint8_t gid[16];
	uint32_t ip = 0;

	drnic_neigh_gid_from_ipv4(rte_cpu_to_be_32(0x0A4D0002), gid);  /* 10.77.0.2 */
	CU_ASSERT_TRUE(drnic_neigh_gid_is_ipv4(gid));
	CU_ASSERT_EQUAL(gid[10], 0xFF);
	CU_ASSERT_EQUAL(gid[11], 0xFF);
	CU_ASSERT_EQUAL(gid[12], 10);
	CU_ASSERT_EQUAL(gid[15], 2);
	CU_ASSERT_EQUAL(drnic_neigh_gid_to_ipv4(gid, &ip), 0);
	CU_ASSERT_EQUAL(rte_be_to_cpu_32(ip), 0x0A4D0002);
	CU_ASSERT_FALSE(drnic_neigh_gid_is_ipv4(ut_ip6_a));
	CU_ASSERT_EQUAL(drnic_neigh_gid_to_ipv4(ut_ip6_a, &ip), -EINVAL);
	CU_ASSERT_EQUAL(drnic_neigh_gid_to_ipv4(NULL, &ip), -EINVAL);
}

static void
test_parse_kernel_arp(void)
{
	struct drnic_neigh_msg msg;
	struct rte_mbuf *m = ut_mbuf(ut_k_arp_req, sizeof(ut_k_arp_req));
	uint8_t gid[16];

	CU_ASSERT_EQUAL(drnic_neigh_parse(m, &msg), 0);
	CU_ASSERT_EQUAL(msg.kind, DRNIC_NEIGH_ARP_REQUEST);
	CU_ASSERT_TRUE(msg.has_lladdr);
	CU_ASSERT_EQUAL(memcmp(msg.lladdr, ut_mac_a, 6), 0);
	ut_gid4("10.200.0.1", gid);
	CU_ASSERT_EQUAL(memcmp(msg.sender_ip, gid, 16), 0);
	ut_gid4("10.200.0.2", gid);
	CU_ASSERT_EQUAL(memcmp(msg.target_ip, gid, 16), 0);
	rte_pktmbuf_free(m);

	m = ut_mbuf(ut_k_arp_rep, sizeof(ut_k_arp_rep));
	CU_ASSERT_EQUAL(drnic_neigh_parse(m, &msg), 0);
	CU_ASSERT_EQUAL(msg.kind, DRNIC_NEIGH_ARP_REPLY);
	CU_ASSERT_EQUAL(memcmp(msg.lladdr, ut_mac_b, 6), 0);
	CU_ASSERT_EQUAL(memcmp(msg.arp_tha, ut_mac_a, 6), 0);
	rte_pktmbuf_free(m);
}

static void
test_parse_kernel_nd(void)
{
	struct drnic_neigh_msg msg;
	struct rte_mbuf *m = ut_mbuf(ut_k_ns, sizeof(ut_k_ns));

	CU_ASSERT_EQUAL(drnic_neigh_parse(m, &msg), 0);
	CU_ASSERT_EQUAL(msg.kind, DRNIC_NEIGH_ND_SOLICIT);
	CU_ASSERT_EQUAL(memcmp(msg.sender_ip, ut_ip6_a, 16), 0);
	CU_ASSERT_EQUAL(memcmp(msg.target_ip, ut_ip6_b, 16), 0);
	CU_ASSERT_TRUE(msg.has_lladdr);
	CU_ASSERT_EQUAL(memcmp(msg.lladdr, ut_mac_a, 6), 0);
	rte_pktmbuf_free(m);

	m = ut_mbuf(ut_k_na, sizeof(ut_k_na));
	CU_ASSERT_EQUAL(drnic_neigh_parse(m, &msg), 0);
	CU_ASSERT_EQUAL(msg.kind, DRNIC_NEIGH_ND_ADVERT);
	CU_ASSERT_EQUAL(memcmp(msg.target_ip, ut_ip6_b, 16), 0);
	CU_ASSERT_EQUAL(memcmp(msg.lladdr, ut_mac_b, 6), 0);
	CU_ASSERT_EQUAL(msg.na_flags, DRNIC_NEIGH_NA_SOLICITED | DRNIC_NEIGH_NA_OVERRIDE);
	rte_pktmbuf_free(m);

	m = ut_mbuf(ut_k_rs, sizeof(ut_k_rs));
	CU_ASSERT_EQUAL(drnic_neigh_parse(m, &msg), -ENOTSUP);
	rte_pktmbuf_free(m);
}

/* The kernel's checksums verify with ours (0 over a message with its sum). */
static void
test_icmp6_cksum(void)
{
	uint8_t msg[32];

	CU_ASSERT_EQUAL(drnic_neigh_icmp6_cksum(ut_k_ns + 22, ut_k_ns + 38, ut_k_ns + 54, 32), 0);
	CU_ASSERT_EQUAL(drnic_neigh_icmp6_cksum(ut_k_na + 22, ut_k_na + 38, ut_k_na + 54, 32), 0);
	CU_ASSERT_EQUAL(drnic_neigh_icmp6_cksum(ut_k_rs + 22, ut_k_rs + 38, ut_k_rs + 54, 16), 0);
	memcpy(msg, ut_k_ns + 54, 32);
	msg[2] = msg[3] = 0;
	CU_ASSERT_EQUAL(drnic_neigh_icmp6_cksum(ut_k_ns + 22, ut_k_ns + 38, msg, 32), 0x4677);
}

/* Our frames equal the kernel's, byte for byte (ARP padded to 60 with zeros). */
static void
test_build_matches_kernel(void)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero6[6];
	uint32_t ip_a = rte_cpu_to_be_32(0x0AC80001), ip_b = rte_cpu_to_be_32(0x0AC80002);
	struct rte_mbuf *m = rte_pktmbuf_alloc(ut_pool);
	const uint8_t *p;
	unsigned int i;

	CU_ASSERT_EQUAL(drnic_neigh_arp_build(m, 1, bcast, ut_mac_a, ip_a, zero6, ip_b), 0);
	CU_ASSERT_EQUAL(m->pkt_len, 60);
	p = rte_pktmbuf_mtod(m, const uint8_t *);
	CU_ASSERT_EQUAL(memcmp(p, ut_k_arp_req, 42), 0);
	for (i = 42; i < 60; i++)
		CU_ASSERT_EQUAL(p[i], 0);
	rte_pktmbuf_reset(m);
	CU_ASSERT_EQUAL(drnic_neigh_arp_build(m, 2, ut_mac_a, ut_mac_b, ip_b, ut_mac_a, ip_a), 0);
	CU_ASSERT_EQUAL(memcmp(rte_pktmbuf_mtod(m, void *), ut_k_arp_rep, 42), 0);
	/* Not empty: refused. */
	CU_ASSERT_EQUAL(drnic_neigh_arp_build(m, 2, ut_mac_a, ut_mac_b, ip_b, ut_mac_a, ip_a),
			-ENOSPC);
	CU_ASSERT_EQUAL(drnic_neigh_arp_build(m, 3, ut_mac_a, ut_mac_b, ip_b, ut_mac_a, ip_a),
			-EINVAL);

	rte_pktmbuf_reset(m);
	CU_ASSERT_EQUAL(drnic_neigh_ns_build(m, ut_mac_a, ut_ip6_a, ut_ip6_b), 0);
	CU_ASSERT_EQUAL(m->pkt_len, sizeof(ut_k_ns));
	CU_ASSERT_EQUAL(memcmp(rte_pktmbuf_mtod(m, void *), ut_k_ns, sizeof(ut_k_ns)), 0);

	rte_pktmbuf_reset(m);
	CU_ASSERT_EQUAL(drnic_neigh_na_build(m, ut_mac_b, ut_mac_a, ut_ip6_b, ut_ip6_a, ut_ip6_b,
					     DRNIC_NEIGH_NA_SOLICITED | DRNIC_NEIGH_NA_OVERRIDE), 0);
	CU_ASSERT_EQUAL(m->pkt_len, sizeof(ut_k_na));
	CU_ASSERT_EQUAL(memcmp(rte_pktmbuf_mtod(m, void *), ut_k_na, sizeof(ut_k_na)), 0);
	CU_ASSERT_EQUAL(drnic_neigh_ns_build(NULL, ut_mac_a, ut_ip6_a, ut_ip6_b), -EINVAL);
	rte_pktmbuf_free(m);
}

/* Each receive check of RFC 4861 7.1 and of RFC 826 rejects a bad frame. */
static void
test_parse_rejects(void)
{
	struct drnic_neigh_msg msg;
	uint8_t f[96];
	struct rte_mbuf *m;

#define UT_EXPECT(buf, len, rc)                                                 \
	do {                                                                    \
		m = ut_mbuf(buf, len);                                          \
		CU_ASSERT_EQUAL(drnic_neigh_parse(m, &msg), rc);                \
		rte_pktmbuf_free(m);                                            \
	} while (0)

	/* Hop limit not 255. */
	memcpy(f, ut_k_ns, sizeof(ut_k_ns));
	f[21] = 64;
	UT_EXPECT(f, sizeof(ut_k_ns), -EBADMSG);
	/* Checksum off by one bit. */
	memcpy(f, ut_k_ns, sizeof(ut_k_ns));
	f[57] ^= 1;
	UT_EXPECT(f, sizeof(ut_k_ns), -EBADMSG);
	/* Code not 0 (checksum fixed up). */
	memcpy(f, ut_k_ns, sizeof(ut_k_ns));
	f[55] = 1;
	f[56] = f[57] = 0;
	{
		uint16_t c = drnic_neigh_icmp6_cksum(f + 22, f + 38, f + 54, 32);

		f[56] = (uint8_t)(c >> 8), f[57] = (uint8_t)c;
	}
	UT_EXPECT(f, sizeof(ut_k_ns), -EBADMSG);
	/* Zero-length option. */
	memcpy(f, ut_k_ns, sizeof(ut_k_ns));
	f[79] = 0;
	f[56] = f[57] = 0;
	{
		uint16_t c = drnic_neigh_icmp6_cksum(f + 22, f + 38, f + 54, 32);

		f[56] = (uint8_t)(c >> 8), f[57] = (uint8_t)c;
	}
	UT_EXPECT(f, sizeof(ut_k_ns), -EBADMSG);
	/* Payload length past the frame. */
	memcpy(f, ut_k_ns, sizeof(ut_k_ns));
	f[19] = 0x40;
	UT_EXPECT(f, sizeof(ut_k_ns), -EBADMSG);
	/* Truncated NS (ICMPv6 shorter than 24 bytes). */
	UT_EXPECT(ut_k_ns, 70, -EBADMSG);
	/* ARP: truncated, wrong lengths, RARP, not Ethernet. */
	UT_EXPECT(ut_k_arp_req, 30, -EBADMSG);
	memcpy(f, ut_k_arp_req, 42);
	f[18] = 8;
	UT_EXPECT(f, 42, -EBADMSG);
	memcpy(f, ut_k_arp_req, 42);
	f[21] = 3;
	UT_EXPECT(f, 42, -ENOTSUP);
	memcpy(f, ut_k_arp_req, 42);
	f[15] = 6;
	UT_EXPECT(f, 42, -ENOTSUP);
	/* IPv4 frame, runt frame. */
	memcpy(f, ut_k_arp_req, 42);
	f[13] = 0x00;
	UT_EXPECT(f, 42, -ENOTSUP);
	UT_EXPECT(f, 10, -ENOTSUP);
	CU_ASSERT_EQUAL(drnic_neigh_parse(NULL, &msg), -EINVAL);
#undef UT_EXPECT
}

int
main(void)
{
	CU_pSuite s;

	if (ut_eal_init("neigh_codec_ut") < 0)
		return 1;
	CU_initialize_registry();
	s = CU_add_suite("neigh_codec", NULL, NULL);
	CU_ADD_TEST(s, test_gid_helpers);
	CU_ADD_TEST(s, test_parse_kernel_arp);
	CU_ADD_TEST(s, test_parse_kernel_nd);
	CU_ADD_TEST(s, test_icmp6_cksum);
	CU_ADD_TEST(s, test_build_matches_kernel);
	CU_ADD_TEST(s, test_parse_rejects);
	return ut_run_all();
}
