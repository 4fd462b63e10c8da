/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/mad/mad_rdma_cm.c: the service IDs of the four RDMA CM
 * port spaces, the private-data header's field placement (rdma-core's and
 * Linux's cma_hdr), its errors, and the IPv4 forms of an address.
 */
#include "lib/mad/mad_rdma_cm.c"

#include <stdlib.h>

#include "ut_common.h"

static void
test_service_ids(void)
{
	static const uint16_t ps[] = {
		DRNIC_RDMA_PS_IPOIB, DRNIC_RDMA_PS_IB, DRNIC_RDMA_PS_TCP, DRNIC_RDMA_PS_UDP,
	};
	uint16_t s, port;
	unsigned int i;

	CU_ASSERT_EQUAL(drnic_rdma_cm_service_id(DRNIC_RDMA_PS_TCP, 7174), 0x0000000001061C06ull);
	CU_ASSERT_EQUAL(drnic_rdma_cm_service_id(DRNIC_RDMA_PS_UDP, 1), 0x0000000001110001ull);
	CU_ASSERT_EQUAL(drnic_rdma_cm_service_id(DRNIC_RDMA_PS_IB, 0xFFFF), 0x00000000013FFFFFull);
	CU_ASSERT_EQUAL(drnic_rdma_cm_service_id(DRNIC_RDMA_PS_IPOIB, 2), 0x0000000000020002ull);
	for (i = 0; i < RTE_DIM(ps); i++) {
		CU_ASSERT_EQUAL(drnic_rdma_cm_service_id_split(
				drnic_rdma_cm_service_id(ps[i], 9999), &s, &port), 0);
		CU_ASSERT_EQUAL(s, ps[i]);
		CU_ASSERT_EQUAL(port, 9999);
		CU_ASSERT_EQUAL(drnic_rdma_cm_sid_has_ip_hdr(drnic_rdma_cm_service_id(ps[i], 1)),
				ps[i] != DRNIC_RDMA_PS_IPOIB);
	}
	CU_ASSERT_EQUAL(drnic_rdma_cm_service_id_split(0x0000000001070000ull, &s, &port), -EINVAL);
	CU_ASSERT_EQUAL(drnic_rdma_cm_service_id_split(0x1000000001060000ull, &s, &port), -EINVAL);
	CU_ASSERT_EQUAL(drnic_rdma_cm_service_id_split(0x0000000001060001ull, NULL, NULL), 0);
	CU_ASSERT_FALSE(drnic_rdma_cm_sid_has_ip_hdr(0x0002C90300001234ull));
}

static void
test_hdr_layout(void)
{
	static const uint8_t want[DRNIC_RDMA_CM_HDR_LEN] = {
		0x00, 0x40, 0x9C, 0x40,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 168, 1, 10,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 1, 20,
	};
	struct drnic_rdma_cm_hdr h = { .ip_version = 4, .port = 40000 };
	uint8_t *b = malloc(DRNIC_RDMA_CM_HDR_LEN);
	struct drnic_rdma_cm_hdr q;
	uint8_t v4[4];

	CU_ASSERT_FATAL(b != NULL);
	memset(&q, 0, sizeof(q));       /* padding: compared below */
	memcpy(h.src_addr + 12, want + 16, 4);
	memcpy(h.dst_addr + 10, want + 30, 6);
	CU_ASSERT_EQUAL(drnic_rdma_cm_hdr_build(&h, b, DRNIC_RDMA_CM_HDR_LEN), 0);
	CU_ASSERT(memcmp(b, want, sizeof(want)) == 0);
	CU_ASSERT_EQUAL(drnic_rdma_cm_hdr_parse(b, DRNIC_RDMA_CM_HDR_LEN, &q), 0);
	CU_ASSERT(memcmp(&q, &h, sizeof(q)) == 0);
	CU_ASSERT_EQUAL(drnic_rdma_cm_addr_ipv4(q.src_addr, v4), 0);
	CU_ASSERT(memcmp(v4, want + 16, 4) == 0);
	CU_ASSERT_EQUAL(drnic_rdma_cm_addr_ipv4(q.dst_addr, v4), 0);
	CU_ASSERT(memcmp(v4, want + 32, 4) == 0);
	q.dst_addr[0] = 0xFE;
	CU_ASSERT_EQUAL(drnic_rdma_cm_addr_ipv4(q.dst_addr, v4), -EINVAL);

	/* Errors: lengths first, then the version checks (header still filled). */
	CU_ASSERT_EQUAL(drnic_rdma_cm_hdr_parse(b, DRNIC_RDMA_CM_HDR_LEN - 1, &q), -EINVAL);
	CU_ASSERT_EQUAL(drnic_rdma_cm_hdr_build(&h, b, DRNIC_RDMA_CM_HDR_LEN - 1), -EINVAL);
	b[1] = 0x50;
	CU_ASSERT_EQUAL(drnic_rdma_cm_hdr_parse(b, DRNIC_RDMA_CM_HDR_LEN, &q), -EPROTO);
	CU_ASSERT_EQUAL(q.ip_version, 5);
	b[1] = 0x60;
	b[0] = 0x01;
	CU_ASSERT_EQUAL(drnic_rdma_cm_hdr_parse(b, DRNIC_RDMA_CM_HDR_LEN, &q), -EPROTO);
	h.ip_version = 16;
	CU_ASSERT_EQUAL(drnic_rdma_cm_hdr_build(&h, b, DRNIC_RDMA_CM_HDR_LEN), -ERANGE);
	free(b);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("mad_rdma_cm", NULL, NULL);
	CU_add_test(s, "service_ids", test_service_ids);
	CU_add_test(s, "hdr_layout", test_hdr_layout);
	return ut_run_all();
}
