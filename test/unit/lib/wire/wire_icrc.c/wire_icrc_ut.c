/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/wire/wire_icrc.c: the RoCEv2 ICRC against a reference
 * written on zlib's crc32, on single and multi-segment mbufs, and on every
 * RoCEv2 frame of the real captures.
 */
#include "lib/wire/wire_crc.c"
#include "lib/wire/wire_icrc.c"

#include "ut_common.h"
#include "../wire_ut.h"

/* ISA-L's crc32_gzip_refl is zlib's crc32, including chaining. */
static void
test_isal_is_zlib(void)
{
	static uint8_t buf[5000];
	uint32_t len, cut;

	ut_fill(buf, sizeof(buf));
	CU_ASSERT_EQUAL(crc32_gzip_refl(0, (const unsigned char *)"123456789", 9), 0xCBF43926);
	CU_ASSERT_EQUAL(crc32(0, (const Bytef *)"123456789", 9), 0xCBF43926);
	for (len = 0; len < sizeof(buf); len += 1 + len / 3) {
		uint32_t z = (uint32_t)crc32(0, buf, len);

		CU_ASSERT_EQUAL(crc32_gzip_refl(0, buf, len), z);
		for (cut = 0; cut <= len; cut += 1 + len / 5)
			CU_ASSERT_EQUAL(crc32_gzip_refl(crc32_gzip_refl(0, buf, cut), buf + cut,
							len - cut), z);
	}
}

/*
 * A plausible IP packet (IPv4 with @ihl words or IPv6) of @l3_len bytes
 * including the ICRC, random elsewhere.
 */
static void
ut_make_l3(uint8_t *l3, uint32_t l3_len, int version, uint32_t ihl)
{
	uint32_t hl = version == 4 ? ihl * 4 : 40;

	ut_fill(l3, l3_len);
	if (version == 4) {
		l3[0] = (uint8_t)(0x40 | ihl);
		l3[2] = (uint8_t)(l3_len >> 8);
		l3[3] = (uint8_t)l3_len;
		l3[9] = 17;
	} else {
		l3[0] = (uint8_t)(0x60 | (l3[0] & 0xF));
		l3[4] = (uint8_t)((l3_len - 40) >> 8);
		l3[5] = (uint8_t)(l3_len - 40);
		l3[6] = 17;
	}
	l3[hl + 4] = (uint8_t)((l3_len - hl) >> 8);
	l3[hl + 5] = (uint8_t)(l3_len - hl);
}

/* Only the variant fields are masked: changing them keeps the ICRC, others do not. */
static void
test_icrc_buf_vs_zlib(void)
{
	static uint8_t l3[4200];
	static const uint32_t lens[] = { 44, 45, 47, 48, 52, 64, 67, 72, 100, 1000, 1100,
						4096 + 60 };
	int version;
	unsigned int i;
	uint32_t icrc, icrc2;

	for (version = 4; version <= 6; version += 2) {
		for (i = 0; i < RTE_DIM(lens); i++) {
			uint32_t len = lens[i] + (version == 6 ? 20 : 0);
			uint32_t hl = version == 4 ? 20 : 40;
			uint32_t b;

			ut_make_l3(l3, len, version, 5);
			CU_ASSERT_EQUAL_FATAL(drnic_wire_icrc_buf(l3, len, &icrc), 0);
			CU_ASSERT_EQUAL(icrc, ut_ref_icrc(l3, len));
			/* The ICRC bytes themselves are not covered. */
			l3[len - 1] ^= 0xFF;
			CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, len, &icrc2), 0);
			CU_ASSERT_EQUAL(icrc2, icrc);
			/*
			 * Every header byte counts unless it is a variant field (byte 0,
			 * version and IHL / traffic class, is tried separately below).
			 */
			for (b = 1; b < hl + 20 && b < len - 4; b++) {
				bool variant;

				if (version == 4)
					variant = b == 1 || b == 8 || b == 10 || b == 11;
				else
					variant = b == 1 || b == 2 || b == 3 || b == 7;
				variant = variant || b == hl + 6 || b == hl + 7 || b == hl + 8 + 4;
				l3[b] ^= 0x01;
				CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, len, &icrc2), 0);
				CU_ASSERT_EQUAL(icrc2 == icrc, variant);
				l3[b] ^= 0x01;
			}
			if (version == 6) {
				/* Low nibble of byte 0 (traffic class) is variant, high is the version. */
				l3[0] ^= 0x0F;
				CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, len, &icrc2), 0);
				CU_ASSERT_EQUAL(icrc2, icrc);
				l3[0] ^= 0x0F;
			}
		}
	}
	/* IPv4 with options: covered as they are. */
	ut_make_l3(l3, 200, 4, 15);
	CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, 200, &icrc), 0);
	CU_ASSERT_EQUAL(icrc, ut_ref_icrc(l3, 200));
}

static void
test_icrc_errors(void)
{
	static uint8_t l3[200];
	struct rte_mbuf *m;
	uint32_t icrc;

	ut_make_l3(l3, sizeof(l3), 4, 5);
	/* Shortest legal: IPv4 20 + UDP 8 + BTH 12 + ICRC 4. */
	CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, 44, &icrc), 0);
	CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, 43, &icrc), -EINVAL);
	CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, 0, &icrc), -EINVAL);
	l3[0] = 0x44;   /* IHL 4 */
	CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, 100, &icrc), -EINVAL);
	l3[0] = 0x55;   /* version 5 */
	CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, 100, &icrc), -EINVAL);
	l3[0] = 0x65;
	CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, 63, &icrc), -EINVAL);   /* v6 needs 64 */
	CU_ASSERT_EQUAL(drnic_wire_icrc_buf(l3, 64, &icrc), 0);

	ut_make_l3(l3, sizeof(l3), 4, 5);
	m = ut_mbuf_from(l3, sizeof(l3), 0);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_EQUAL(drnic_wire_icrc(m, 0, 200, &icrc), 0);
	CU_ASSERT_EQUAL(drnic_wire_icrc(m, 0, 201, &icrc), -EINVAL);
	CU_ASSERT_EQUAL(drnic_wire_icrc(m, 1, 200, &icrc), -EINVAL);
	CU_ASSERT_EQUAL(drnic_wire_icrc(m, 200, 0, &icrc), -EINVAL);
	CU_ASSERT_EQUAL(drnic_wire_icrc(m, 0, UINT32_MAX, &icrc), -EINVAL);
	CU_ASSERT_EQUAL(drnic_wire_icrc(m, UINT32_MAX, 8, &icrc), -EINVAL);
	CU_ASSERT_EQUAL(drnic_wire_icrc(m, 0, 40, &icrc), -EINVAL);
	rte_pktmbuf_free(m);
}

/* Same value whatever the segmentation, including cuts inside the headers. */
static void
test_icrc_multiseg(void)
{
	static uint8_t frame[14 + 300];
	uint32_t ref, icrc, a, b;
	int version;

	for (version = 4; version <= 6; version += 2) {
		uint32_t l3_len = version == 4 ? 300 : 280;
		uint32_t len = 14 + l3_len;

		memset(frame, 0xEE, 14);
		ut_make_l3(frame + 14, l3_len, version, 5);
		ref = ut_ref_icrc(frame + 14, l3_len);
		/* Every two-segment split. */
		for (a = 1; a < len; a++) {
			struct ut_fake f;
			struct rte_mbuf *m = ut_fake_chain(&f, frame, len, &a, 1);

			CU_ASSERT_EQUAL(drnic_wire_icrc(m, 14, l3_len, &icrc), 0);
			CU_ASSERT_EQUAL(icrc, ref);
			ut_fake_free(&f);
		}
		/* Three segments, cuts around the headers. */
		for (a = 1; a < 90; a++) {
			for (b = a + 1; b < 100; b += 3) {
				uint32_t cuts[2] = { a, b };
				struct ut_fake f;
				struct rte_mbuf *m = ut_fake_chain(&f, frame, len, cuts, 2);

				CU_ASSERT_EQUAL(drnic_wire_icrc(m, 14, l3_len, &icrc), 0);
				CU_ASSERT_EQUAL(icrc, ref);
				ut_fake_free(&f);
			}
		}
		/* One byte per segment, from the pool. */
		{
			struct rte_mbuf *m = ut_mbuf_from(frame, 120, 1);
			uint8_t small[120];

			memcpy(small, frame, 120);
			ut_make_l3(small + 14, 106, version, 5);
			if (version == 6)
				small[14 + 4] = 0, small[14 + 5] = 66;
			rte_pktmbuf_free(m);
			m = ut_mbuf_from(small, 120, 1);
			CU_ASSERT_FATAL(m != NULL);
			CU_ASSERT_EQUAL(m->nb_segs, 120);
			CU_ASSERT_EQUAL(drnic_wire_icrc(m, 14, 106, &icrc), 0);
			CU_ASSERT_EQUAL(icrc, ut_ref_icrc(small + 14, 106));
			rte_pktmbuf_free(m);
		}
	}
}

/* Every RoCEv2 frame of the captures: our ICRC equals the captured one. */
static void
ut_capture_icrc(const char *name, bool expect_valid, unsigned int *roce, unsigned int *other)
{
	struct ut_pcap pc;
	const uint8_t *f;
	uint32_t caplen, origlen, l3_len, l3, icrc, stored;
	char path[512];
	unsigned int n = 0;

	if (!ut_testdata(path, sizeof(path), name))
		return;
	CU_ASSERT_EQUAL_FATAL(ut_pcap_open(&pc, path), 0);
	CU_ASSERT_EQUAL(pc.linktype, 1);
	while (ut_pcap_next(&pc, &f, &caplen, &origlen)) {
		struct rte_mbuf *m;
		uint32_t cut = 60;
		struct ut_fake fk;

		n++;
		CU_ASSERT_EQUAL(caplen, origlen);
		l3 = ut_rocev2_l3(f, caplen, &l3_len);
		if (l3 == 0) {
			(*other)++;
			continue;
		}
		(*roce)++;
		stored = ut_get_le32(f + l3 + l3_len - 4);
		CU_ASSERT_EQUAL(ut_ref_icrc(f + l3, l3_len) == stored, expect_valid);
		CU_ASSERT_EQUAL(drnic_wire_icrc_buf(f + l3, l3_len, &icrc), 0);
		CU_ASSERT_EQUAL(icrc == stored, expect_valid);
		m = ut_mbuf_from(f, caplen, 0);
		CU_ASSERT_EQUAL(drnic_wire_icrc(m, l3, l3_len, &icrc), 0);
		CU_ASSERT_EQUAL(icrc == stored, expect_valid);
		rte_pktmbuf_free(m);
		/* Cut inside the BTH and again inside the payload. */
		m = ut_fake_chain(&fk, f, caplen, &cut, caplen > cut ? 1 : 0);
		CU_ASSERT_EQUAL(drnic_wire_icrc(m, l3, l3_len, &icrc), 0);
		CU_ASSERT_EQUAL(icrc == stored, expect_valid);
		ut_fake_free(&fk);
		if (!expect_valid) {
			/* These had their UDP source port rewritten to 4791 after capture. */
			CU_ASSERT_EQUAL(f[l3 + 20] << 8 | f[l3 + 21], DRNIC_ROCEV2_UDP_PORT);
		}
	}
	CU_ASSERT(n > 0);
	ut_pcap_close(&pc);
}

static void
test_captures(void)
{
	static const char *const cx[] = {
		"cx_ib_send_bw_over_roce.pcap", "cx_ibdump_read2.pcap", "cx_ibdump_send.pcap",
		"cx_ibdump_write.pcap", "cx_nvme-discover.pcap", "cx_nvme-discover2.pcap",
		"cx_nvme-rdma-25echoTo27.pcap", "cx_nvme-rdma-idle.pcap",
		"cx_rocev2_test_multiqp.pcap",
	};
	unsigned int i, cx_n = 0, rxe_n = 0, bad_n = 0, other = 0;
	char path[512];

	if (!ut_testdata(path, sizeof(path), ""))
		return;
	for (i = 0; i < RTE_DIM(cx); i++)
		ut_capture_icrc(cx[i], true, &cx_n, &other);
	ut_capture_icrc("rxe_linux61_mixed.pcap", true, &rxe_n, &other);
	ut_capture_icrc("bad-icrc/rc-small.pcap", false, &bad_n, &other);
	ut_capture_icrc("bad-icrc/uc-sg.pcap", false, &bad_n, &other);
	printf("\n  ICRC: %u cx frames, %u rxe frames valid; %u bad-icrc frames invalid; "
	       "%u non-RoCEv2 frames skipped\n", cx_n, rxe_n, bad_n, other);
	CU_ASSERT_EQUAL(cx_n, 898);
	CU_ASSERT_EQUAL(rxe_n, 2671);
	CU_ASSERT_EQUAL(bad_n, 38);
}

int
main(void)
{
	CU_pSuite s;

	if (ut_eal_init() != 0)
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("wire_icrc", NULL, NULL);
	CU_add_test(s, "isal_is_zlib", test_isal_is_zlib);
	CU_add_test(s, "icrc_buf_vs_zlib", test_icrc_buf_vs_zlib);
	CU_add_test(s, "icrc_errors", test_icrc_errors);
	CU_add_test(s, "icrc_multiseg", test_icrc_multiseg);
	CU_add_test(s, "captures", test_captures);
	return ut_run_all();
}
