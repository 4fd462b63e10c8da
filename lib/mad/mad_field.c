/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The field-table codec (mad_field.h). Control-path code: MADs are rare, so
 * fields are moved a bit at a time, which keeps every width and alignment
 * one simple loop.
 */
#include <errno.h>
#include <string.h>

#include "mad_field.h"

static uint64_t
field_bits_get(const uint8_t *buf, unsigned int bit, unsigned int width)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = bit; i < bit + width; i++)
		v = v << 1 | ((buf[i / 8] >> (7 - i % 8)) & 1u);
	return v;
}

static void
field_bits_set(uint8_t *buf, unsigned int bit, unsigned int width, uint64_t v)
{
	unsigned int i;

	for (i = bit + width; i-- > bit; v >>= 1) {
		uint8_t mask = (uint8_t)(1u << (7 - i % 8));

		buf[i / 8] = (uint8_t)((v & 1u) ? buf[i / 8] | mask : buf[i / 8] & ~mask);
	}
}

static uint64_t
field_member_get(const void *obj, const struct mad_field *f)
{
	const uint8_t *p = (const uint8_t *)obj + f->member;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (f->size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

static void
field_member_set(void *obj, const struct mad_field *f, uint64_t v)
{
	uint8_t *p = (uint8_t *)obj + f->member;
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (f->size) {
	case 1:
		memcpy(p, &u8, 1);
		break;
	case 2:
		memcpy(p, &u16, 2);
		break;
	case 4:
		memcpy(p, &u32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

void
mad_layout_parse(const struct mad_layout *lay, const uint8_t *buf, void *obj)
{
	const struct mad_field *f;

	for (f = lay->fields; f < lay->fields + lay->n; f++) {
		if (f->bytes)
			memcpy((uint8_t *)obj + f->member, buf + f->bit / 8, f->size);
		else
			field_member_set(obj, f, field_bits_get(buf, f->bit, f->width));
	}
}

int
mad_layout_build(const struct mad_layout *lay, const void *obj, uint8_t *buf)
{
	const struct mad_field *f;

	for (f = lay->fields; f < lay->fields + lay->n; f++) {
		uint64_t v;

		if (f->bytes) {
			memcpy(buf + f->bit / 8, (const uint8_t *)obj + f->member, f->size);
			continue;
		}
		v = field_member_get(obj, f);
		if (f->width < 64 && v >> f->width != 0)
			return -ERANGE;
		field_bits_set(buf, f->bit, f->width, v);
	}
	return 0;
}
