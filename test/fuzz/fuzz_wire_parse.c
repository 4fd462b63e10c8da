/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for drnic_wire_parse(): no input may make the parser read
 * outside the frame, crash, or return a view that points outside the frame.
 *
 * Runs without EAL: each input becomes a fake rte_mbuf chain whose segments
 * are separate heap blocks of exactly their data length, so AddressSanitizer
 * catches a read one byte past any segment. Input layout:
 *
 *   byte 0      shape: nseg = 1 + b % 3; c = b / 3; c & 1 selects the
 *               "skip IP checksum and ICRC" parse flags (to reach deeper
 *               checks), else the engine's (deferred ICRC: a deferred frame
 *               is then copied and verified into a buffer of exactly its
 *               payload, and the verdict must be the ICRC's); (c >> 1) % 7
 *               and (c >> 1) / 7 place the segment cuts
 *   bytes 1..   the frame, starting at the Ethernet header
 *
 * The seed corpus comes from extract_corpus.py (real RoCEv2 frames with
 * shape byte 0 and a few other shapes).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "drnic_wire.h"

#define FUZZ_MAX_SEGS 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_check_view(const struct rte_mbuf *m, const struct drnic_wire_pkt *p)
{
	const struct drnic_wire_opinfo *oi = drnic_wire_opcode_info(p->bth.opcode);
	static uint8_t copy[65536];

	/* Whatever the parser accepts must be a supported opcode inside the frame. */
	if (oi->name == NULL || !(oi->flags & DRNIC_WIRE_OPF_SUPPORTED))
		abort();
	if (p->frame_len > m->pkt_len || p->payload_off > p->frame_len ||
	    p->payload_len > p->frame_len - p->payload_off || p->bth_off >= p->frame_len ||
	    p->l4_off >= p->bth_off || p->l3_off >= p->l4_off)
		abort();
	if (p->payload_len > sizeof(copy) ||
	    drnic_wire_copy_out(m, p->payload_off, p->payload_len, copy) != 0)
		abort();
	if (p->bth.dqpn > DRNIC_QPN_MASK || p->bth.psn > DRNIC_PSN_MASK)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf segs[FUZZ_MAX_SEGS];
	uint8_t *bufs[FUZZ_MAX_SEGS] = { 0 };
	struct drnic_wire_pkt out;
	enum drnic_wire_drop drop;
	uint32_t len, cut[FUZZ_MAX_SEGS + 1];
	unsigned int nseg, c, i;
	uint32_t flags;

	if (size < 1 || size > 65536 + 1)
		return 0;
	nseg = 1 + data[0] % 3;
	c = data[0] / 3;
	/* Otherwise as the engine parses: WRITE continuations deferred. */
	flags = (c & 1) ? (DRNIC_WIRE_PARSE_SKIP_IP_CSUM | DRNIC_WIRE_PARSE_SKIP_ICRC) :
			  DRNIC_WIRE_PARSE_DEFER_ICRC;
	data++;
	len = (uint32_t)(size - 1);

	/* Cut points: 0 <= cut[1] <= cut[2] <= len; segments may be empty. */
	cut[0] = 0;
	cut[1] = nseg > 1 ? len * ((c >> 1) % 7) / 6 : len;
	cut[2] = nseg > 2 ? cut[1] + (len - cut[1]) * ((c >> 1) / 7) / 6 : len;
	if (cut[2] > len)
		cut[2] = len;
	cut[nseg] = len;

	memset(segs, 0, sizeof(segs));
	for (i = 0; i < nseg; i++) {
		uint32_t n = cut[i + 1] - cut[i];

		/* malloc(0) may return NULL or a zero-sized block: both fine for ASan. */
		bufs[i] = malloc(n ? n : 1);
		if (bufs[i] == NULL)
			goto out;
		memcpy(bufs[i], data + cut[i], n);
		segs[i].buf_addr = bufs[i];
		segs[i].buf_len = (uint16_t)(n ? n : 1);
		segs[i].data_off = 0;
		segs[i].data_len = (uint16_t)n;
		segs[i].nb_segs = 1;
		segs[i].next = i + 1 < nseg ? &segs[i + 1] : NULL;
		rte_mbuf_refcnt_set(&segs[i], 1);
	}
	segs[0].pkt_len = len;
	segs[0].nb_segs = (uint16_t)nseg;

	memset(&out, 0, sizeof(out));
	drop = drnic_wire_parse_flags(&segs[0], flags, &out);
	if ((unsigned int)drop >= DRNIC_WIRE_DROP_MAX || drnic_wire_drop_name(drop) == NULL)
		abort();
	if (drop == DRNIC_WIRE_OK) {
		fuzz_check_view(&segs[0], &out);
		if (out.icrc_deferred) {
			/* The engine's one-pass copy: into exactly the payload. */
			uint8_t *dst = malloc(out.payload_len ? out.payload_len : 1);
			int rc;

			if (dst == NULL)
				abort();
			rc = drnic_wire_copy_out_verify(&segs[0], &out, dst);
			if (rc != 0 && rc != -EBADMSG)
				abort();    /* the parser's view must be copyable */
			/* Its verdict is the ICRC check's. */
			if (drnic_wire_icrc_check(&segs[0], &out) != rc)
				abort();
			free(dst);
		}
	}
out:
	for (i = 0; i < nseg; i++)
		free(bufs[i]);
	return 0;
}
