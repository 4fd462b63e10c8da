/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MAD_FIELD_H
#define MAD_FIELD_H

/*
 * Field tables: a wire layout as data. Each row places one member of a host
 * struct at a bit position of a big-endian buffer (bit 0 is the most
 * significant bit of byte 0, as the IBA draws its tables), so one parser and
 * one builder serve the MAD header, every CM attribute and the RDMA CM
 * header. Reserved bits have rows too (members named rsvd_*): a table covers
 * its whole wire length, so a rebuild is byte-exact.
 */
#include <stddef.h>
#include <stdint.h>

struct mad_field {
	uint16_t bit;      /* first bit on the wire */
	uint16_t width;    /* bits; bytes * 8 for byte strings */
	uint16_t member;   /* offsetof() in the host struct */
	uint8_t size;      /* sizeof() the member */
	uint8_t bytes;     /* 1: a byte string (GID, private data), copied as is */
};

/* An integer member @m of struct @t, @w bits wide at byte @byte, bit @b (0 = MSB). */
#define MAD_UINT(t, m, byte, b, w) \
	{ (uint16_t)((byte) * 8 + (b)), (w), offsetof(t, m), sizeof(((t *)0)->m), 0 }
/* A byte-array member @m of struct @t at byte @byte, its whole size long. */
#define MAD_BYTES(t, m, byte) \
	{ (uint16_t)((byte) * 8), sizeof(((t *)0)->m) * 8, offsetof(t, m), \
	  sizeof(((t *)0)->m), 1 }

/* A layout: its rows and the bytes it covers. */
struct mad_layout {
	const struct mad_field *fields;
	unsigned int n;
	uint16_t len;      /* wire bytes */
};

/*
 * Read every field of @lay from @buf (lay->len bytes, checked by the caller)
 * into @obj.
 */
void mad_layout_parse(const struct mad_layout *lay, const uint8_t *buf, void *obj);

/*
 * Write every field of @obj into @buf (lay->len bytes, checked by the
 * caller). Returns 0, or -ERANGE when an integer member holds a value wider
 * than its field; @buf is then partly written.
 */
int mad_layout_build(const struct mad_layout *lay, const void *obj, uint8_t *buf);

#endif /* MAD_FIELD_H */
