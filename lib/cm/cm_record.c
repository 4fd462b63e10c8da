/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exchange records: drnic's versioned text line and ibv_rc_pingpong's 52-byte
 * "LID:QPN:PSN:GID" record (GID as its 16 bytes in memory order, in hex).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "drnic_cm.h"

#define CM_MASK24 0xFFFFFFu

static void
cm_gid_hex(const uint8_t gid[16], char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[gid[i] >> 4];
		out[2 * i + 1] = hex[gid[i] & 0xF];
	}
	out[32] = '\0';
}

static int
cm_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly @p n hex digits at @p s into @p v. */
static int
cm_hex_field(const char *s, unsigned int n, uint64_t *v)
{
	unsigned int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		int d = cm_hexval(s[i]);

		if (d < 0)
			return -EPROTO;
		*v = *v << 4 | (uint64_t)d;
	}
	return 0;
}

static int
cm_gid_parse(const char *s, uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		int hi = cm_hexval(s[2 * i]), lo = cm_hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EPROTO;
		gid[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int
drnic_cm_record_write(enum drnic_cm_fmt fmt, const struct drnic_cm_dest *d, char *buf, size_t len)
{
	char gid[33];
	int n;

	if (d == NULL || buf == NULL || d->qpn > CM_MASK24 || d->psn > CM_MASK24)
		return -EINVAL;
	cm_gid_hex(d->gid, gid);
	switch (fmt) {
	case DRNIC_CM_FMT_RC_PINGPONG:
		if (len < DRNIC_CM_RC_PINGPONG_LEN)
			return -ENOSPC;
		memset(buf, 0, DRNIC_CM_RC_PINGPONG_LEN);
		n = snprintf(buf, len, "%04x:%06x:%06x:%s", d->lid, d->qpn, d->psn, gid);
		if (n != DRNIC_CM_RC_PINGPONG_LEN - 1)
			return -EINVAL;
		return DRNIC_CM_RC_PINGPONG_LEN;
	case DRNIC_CM_FMT_DRNIC: {
		char line[DRNIC_CM_DRNIC_MAX_LEN + 1];

		n = snprintf(line, sizeof(line),
			     "DRNIC1 lid=%04x qpn=%06x psn=%06x gid=%s rkey=%08x addr=%016" PRIx64
			     " size=%08x\n", d->lid, d->qpn, d->psn, gid, d->rkey, d->addr, d->size);
		if (n < 0 || (size_t)n >= len)
			return -ENOSPC;
		memcpy(buf, line, (size_t)n + 1);
		return n;
	}
	default:
		return -EINVAL;
	}
}

/* Fixed layout of drnic's line: literal text and hex fields in turn. */
static const struct {
	const char *lit;     /* text before the field */
	unsigned int digits; /* 0: the GID (32) */
} cm_drnic_fields[] = {
	{ "DRNIC1 lid=", 4 }, { " qpn=", 6 }, { " psn=", 6 }, { " gid=", 0 },
	{ " rkey=", 8 }, { " addr=", 16 }, { " size=", 8 },
};

static int
cm_parse_drnic(const char *buf, size_t len, struct drnic_cm_dest *d)
{
	size_t off = 0;
	unsigned int i;
	uint64_t v[7] = { 0 };

	if (len < 6 || memcmp(buf, "DRNIC", 5) != 0)
		return -EPROTO;
	for (i = 0; i < sizeof(cm_drnic_fields) / sizeof(cm_drnic_fields[0]); i++) {
		size_t l = strlen(cm_drnic_fields[i].lit);
		unsigned int n = cm_drnic_fields[i].digits ? cm_drnic_fields[i].digits : 32;

		if (off + l + n > len || memcmp(buf + off, cm_drnic_fields[i].lit, l) != 0)
			return -EPROTO;
		off += l;
		if (cm_drnic_fields[i].digits == 0) {
			if (cm_gid_parse(buf + off, d->gid) < 0)
				return -EPROTO;
		} else if (cm_hex_field(buf + off, n, &v[i]) < 0) {
			return -EPROTO;
		}
		off += n;
	}
	if (off + 1 != len || buf[off] != '\n')
		return -EPROTO;
	d->lid = (uint16_t)v[0];
	d->qpn = (uint32_t)v[1];
	d->psn = (uint32_t)v[2];
	d->rkey = (uint32_t)v[4];
	d->addr = v[5];
	d->size = (uint32_t)v[6];
	if (d->qpn > CM_MASK24 || d->psn > CM_MASK24)
		return -EPROTO;
	return 0;
}

static int
cm_parse_rc_pingpong(const char *buf, size_t len, struct drnic_cm_dest *d)
{
	uint64_t lid, qpn, psn;

	if (len != DRNIC_CM_RC_PINGPONG_LEN || buf[4] != ':' || buf[11] != ':' ||
	    buf[18] != ':' || buf[51] != '\0')
		return -EPROTO;
	if (cm_hex_field(buf, 4, &lid) < 0 || cm_hex_field(buf + 5, 6, &qpn) < 0 ||
	    cm_hex_field(buf + 12, 6, &psn) < 0 || cm_gid_parse(buf + 19, d->gid) < 0)
		return -EPROTO;
	d->lid = (uint16_t)lid;
	d->qpn = (uint32_t)qpn;
	d->psn = (uint32_t)psn;
	d->rkey = 0;
	d->addr = 0;
	d->size = 0;
	return 0;
}

int
drnic_cm_record_parse(enum drnic_cm_fmt fmt, const char *buf, size_t len, struct drnic_cm_dest *d)
{
	struct drnic_cm_dest tmp;
	int rc;

	if (buf == NULL || d == NULL)
		return -EINVAL;
	memset(&tmp, 0, sizeof(tmp));
	if (fmt == DRNIC_CM_FMT_RC_PINGPONG)
		rc = cm_parse_rc_pingpong(buf, len, &tmp);
	else if (fmt == DRNIC_CM_FMT_DRNIC)
		rc = cm_parse_drnic(buf, len, &tmp);
	else
		return -EINVAL;
	if (rc == 0)
		*d = tmp;
	return rc;
}
