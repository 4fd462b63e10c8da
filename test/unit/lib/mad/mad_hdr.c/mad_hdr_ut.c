/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/mad/mad_hdr.c: each header field at the offset IBA
 * 13.4.2 gives, length and range errors, and a parse/build round trip.
 * Buffers are exact-size heap blocks, so under ASan a read or write past
 * them fails.
 */
#include "lib/mad/mad_hdr.c"

#include <stdlib.h>
#include <string.h>

#include "ut_common.h"

static const uint8_t ut_hdr_bytes[DRNIC_MAD_HDR_LEN] = {
	0x01, 0x07, 0x02, 0x83,                  /* base, class, version, R|method */
	0x12, 0x34, 0x56, 0x78,                  /* status, class-specific */
	0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, /* transaction ID */
	0x00, 0x13, 0xBE, 0xEF,                  /* attribute ID, reserved */
	0xDE, 0xAD, 0xC0, 0xDE,                  /* attribute modifier */
};

static void
test_hdr_fields(void)
{
	uint8_t *b = malloc(DRNIC_MAD_HDR_LEN);
	struct drnic_mad_hdr h;

	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_EQUAL(drnic_mad_hdr_parse(ut_hdr_bytes, sizeof(ut_hdr_bytes), &h), 0);
	CU_ASSERT_EQUAL(h.base_version, 1);
	CU_ASSERT_EQUAL(h.mgmt_class, DRNIC_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(h.class_version, 2);
	CU_ASSERT_EQUAL(h.r, 1);
	CU_ASSERT_EQUAL(h.method, 0x03);
	CU_ASSERT_EQUAL(h.status, 0x1234);
	CU_ASSERT_EQUAL(h.class_specific, 0x5678);
	CU_ASSERT_EQUAL(h.tid, 0x0123456789ABCDEFull);
	CU_ASSERT_EQUAL(h.attr_id, 0x0013);         /* the CM's REP */
	CU_ASSERT_EQUAL(h.rsvd_attr, 0xBEEF);
	CU_ASSERT_EQUAL(h.attr_mod, 0xDEADC0DE);
	memset(b, 0, DRNIC_MAD_HDR_LEN);
	CU_ASSERT_EQUAL(drnic_mad_hdr_build(b, DRNIC_MAD_HDR_LEN, &h), 0);
	CU_ASSERT(memcmp(b, ut_hdr_bytes, DRNIC_MAD_HDR_LEN) == 0);
	free(b);
}

static void
test_hdr_errors(void)
{
	uint8_t b[DRNIC_MAD_HDR_LEN];
	struct drnic_mad_hdr h;

	CU_ASSERT_EQUAL(drnic_mad_hdr_parse(ut_hdr_bytes, DRNIC_MAD_HDR_LEN - 1, &h), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mad_hdr_parse(NULL, DRNIC_MAD_HDR_LEN, &h), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mad_hdr_parse(ut_hdr_bytes, DRNIC_MAD_HDR_LEN, NULL), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(drnic_mad_hdr_parse(ut_hdr_bytes, DRNIC_MAD_HDR_LEN, &h), 0);
	CU_ASSERT_EQUAL(drnic_mad_hdr_build(b, DRNIC_MAD_HDR_LEN - 1, &h), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mad_hdr_build(NULL, DRNIC_MAD_HDR_LEN, &h), -EINVAL);
	/* Out of range: nothing written. */
	memset(b, 0xAA, sizeof(b));
	h.method = 0x80;
	CU_ASSERT_EQUAL(drnic_mad_hdr_build(b, sizeof(b), &h), -ERANGE);
	h.method = 0x03;
	h.r = 2;
	CU_ASSERT_EQUAL(drnic_mad_hdr_build(b, sizeof(b), &h), -ERANGE);
	CU_ASSERT_EQUAL(b[0], 0xAA);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("mad_hdr", NULL, NULL);
	CU_add_test(s, "hdr_fields", test_hdr_fields);
	CU_add_test(s, "hdr_errors", test_hdr_errors);
	return ut_run_all();
}
