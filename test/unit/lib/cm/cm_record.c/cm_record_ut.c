/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/cm/cm_record.c: ibv_rc_pingpong's 52-byte record
 * ("%04x:%06x:%06x:" then the GID's 16 bytes as hex in memory order, then a
 * NUL — what its gid_to_wire_gid() prints on a little-endian host) and
 * drnic's versioned line, both written exactly and parsed strictly.
 */
#include "lib/cm/cm_record.c"

#include "ut_common.h"

/* ::ffff:10.77.0.11, rxe0's GID index 1 in the rxe-vm rig. */
static const uint8_t ut_gid[16] = { [10] = 0xff, [11] = 0xff, 10, 77, 0, 11 };
static const char ut_rc_rec[] = "0000:000011:abcdef:00000000000000000000ffff0a4d000b";

static void
test_rc_pingpong_write(void)
{
	struct drnic_cm_dest d = { .lid = 0, .qpn = 0x11, .psn = 0xabcdef, .rkey = 5 };
	char buf[64];

	memcpy(d.gid, ut_gid, 16);
	memset(buf, 'x', sizeof(buf));
	CU_ASSERT_EQUAL(sizeof(ut_rc_rec), DRNIC_CM_RC_PINGPONG_LEN);
	CU_ASSERT_EQUAL(drnic_cm_record_write(DRNIC_CM_FMT_RC_PINGPONG, &d, buf, sizeof(buf)), 52);
	CU_ASSERT_EQUAL(memcmp(buf, ut_rc_rec, sizeof(ut_rc_rec)), 0);
	CU_ASSERT_EQUAL(buf[51], '\0');
	d.lid = 0xbeef;
	d.qpn = 0xffffff;
	CU_ASSERT_EQUAL(drnic_cm_record_write(DRNIC_CM_FMT_RC_PINGPONG, &d, buf, sizeof(buf)), 52);
	CU_ASSERT_EQUAL(memcmp(buf, "beef:ffffff:abcdef:", 19), 0);
	CU_ASSERT_EQUAL(drnic_cm_record_write(DRNIC_CM_FMT_RC_PINGPONG, &d, buf, 51), -ENOSPC);
	d.qpn = 0x1000000;
	CU_ASSERT_EQUAL(drnic_cm_record_write(DRNIC_CM_FMT_RC_PINGPONG, &d, buf, sizeof(buf)), -EINVAL);
	CU_ASSERT_EQUAL(drnic_cm_record_write(7, &d, buf, sizeof(buf)), -EINVAL);
}

static void
test_rc_pingpong_parse(void)
{
	struct drnic_cm_dest d;
	char bad[52];

	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_RC_PINGPONG, ut_rc_rec, 52, &d), 0);
	CU_ASSERT_EQUAL(d.lid, 0);
	CU_ASSERT_EQUAL(d.qpn, 0x11);
	CU_ASSERT_EQUAL(d.psn, 0xabcdef);
	CU_ASSERT_EQUAL(memcmp(d.gid, ut_gid, 16), 0);
	CU_ASSERT_EQUAL(d.rkey, 0);
	/* Upper-case hex is hex too (sscanf %x accepts it). */
	memcpy(bad, ut_rc_rec, 52);
	bad[16] = 'C';
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_RC_PINGPONG, bad, 52, &d), 0);
	CU_ASSERT_EQUAL(d.psn, 0xabcdcf);
	/* Malformed: length, separators, digits, terminator. */
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_RC_PINGPONG, ut_rc_rec, 51, &d), -EPROTO);
	memcpy(bad, ut_rc_rec, 52);
	bad[4] = '-';
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_RC_PINGPONG, bad, 52, &d), -EPROTO);
	memcpy(bad, ut_rc_rec, 52);
	bad[30] = 'g';
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_RC_PINGPONG, bad, 52, &d), -EPROTO);
	memcpy(bad, ut_rc_rec, 52);
	bad[51] = '0';
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_RC_PINGPONG, bad, 52, &d), -EPROTO);
	memcpy(bad, ut_rc_rec, 52);
	bad[50] = '\0';
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_RC_PINGPONG, bad, 52, &d), -EPROTO);
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_RC_PINGPONG, NULL, 52, &d), -EINVAL);
}

static void
test_drnic_roundtrip(void)
{
	struct drnic_cm_dest d = {
		.lid = 1, .qpn = 0x123456, .psn = 0x654321, .rkey = 0xdeadbeef,
		.addr = 0x7f0012345678ull, .size = 1u << 20,
	}, e;
	char buf[DRNIC_CM_DRNIC_MAX_LEN];
	int n;

	memcpy(d.gid, ut_gid, 16);
	n = drnic_cm_record_write(DRNIC_CM_FMT_DRNIC, &d, buf, sizeof(buf));
	CU_ASSERT_TRUE(n > 0 && n < DRNIC_CM_DRNIC_MAX_LEN);
	CU_ASSERT_STRING_EQUAL(buf, "DRNIC1 lid=0001 qpn=123456 psn=654321 "
			       "gid=00000000000000000000ffff0a4d000b rkey=deadbeef "
			       "addr=00007f0012345678 size=00100000\n");
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_DRNIC, buf, (size_t)n, &e), 0);
	CU_ASSERT_EQUAL(memcmp(&d, &e, sizeof(d)), 0);
	/* Another version, a missing newline, trailing bytes, a bad digit. */
	buf[5] = '2';
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_DRNIC, buf, (size_t)n, &e), -EPROTO);
	buf[5] = '1';
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_DRNIC, buf, (size_t)n - 1, &e), -EPROTO);
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_DRNIC, buf, (size_t)n + 1, &e), -EPROTO);
	buf[20] = 'z';
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_DRNIC, buf, (size_t)n, &e), -EPROTO);
	CU_ASSERT_EQUAL(drnic_cm_record_parse(DRNIC_CM_FMT_DRNIC, "hello\n", 6, &e), -EPROTO);
	CU_ASSERT_EQUAL(drnic_cm_record_write(DRNIC_CM_FMT_DRNIC, &d, buf, 20), -ENOSPC);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("cm_record", NULL, NULL);
	CU_ADD_TEST(s, test_rc_pingpong_write);
	CU_ADD_TEST(s, test_rc_pingpong_parse);
	CU_ADD_TEST(s, test_drnic_roundtrip);
	return ut_run_all();
}
