/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ADV_COMMON_H
#define ADV_COMMON_H

/*
 * The adversarial autotests' set-up: a live RC QP pair on a loopback wire
 * (rnic_fixture) and a third party on the cable, a tap beside each end
 * (loopback link argument tap=E): it sees a copy of every frame either end
 * sends and injects frames of its own, with valid ICRCs (lib/wire builds
 * them), into the end it sits beside. Templates for forged frames are real
 * frames the pair sent, sniffed on the tap.
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "drnic_wire.h"
#include "test.h"
#include "../rnic/rnic_fixture.h"

#define ADV_A 0   /* the tap beside end A (injects into A) */
#define ADV_B 1   /* the tap beside end B (injects into B) */

/* A victim MR on B: ADV_VIC_LEN bytes between two guard zones of
 * ADV_GUARD bytes, all in one allocation. */
#define ADV_VIC_LEN (64u * 1024)
#define ADV_GUARD 4096u
#define ADV_GUARD_BYTE 0xA5

struct adv {
	struct rnic_pair p;
	struct rnic_pair_opts o;
	struct drnic_link *tap[2];
	struct rte_mempool *pool;
	/* Templates: a request A sent to B (a WRITE ONLY) and an ACK B sent
	 * to A, as parsed from the wire. */
	struct drnic_wire_pkt a2b;
	struct drnic_wire_pkt b2a;
	/* The victim MR on B. */
	uint8_t *vic_alloc;
	uint8_t *vic;
	struct drnic_mr *vic_mr;
	/* What the taps saw since the last adv_tap_reset(). */
	unsigned int seen_read_resp;     /* READ response frames from B */
	uint64_t seen_read_bytes;        /* their payload bytes */
	unsigned int seen_naks;          /* NAKs from B (any code) */
	uint8_t last_nak_syn;
	uint32_t last_nak_psn;
	unsigned int seen_acks;          /* ACKs from B */
	bool seen_read_byte;             /* a READ response carried read_byte */
	uint8_t read_byte;
	unsigned int seen_a2b;           /* requests from A to B's QP */
	struct drnic_wire_pkt last_a2b;  /* ... the last of them, parsed */
};

/* Open the pair and the taps, learn the templates (one real WRITE A -> B),
 * register the victim MR on B (guards filled, MR zeroed). TEST_SKIPPED for
 * dedicated mode without a worker lcore. */
int adv_open(struct adv *x, const struct rnic_pair_opts *o);
void adv_close(struct adv *x);

/* Build @p pkt (with @p len bytes of @p payload) and send it from the tap
 * beside @p side; waits until that side's QP has received one more frame.
 * 0 or a negative errno. */
int adv_inject(struct adv *x, int side, const struct drnic_wire_pkt *pkt, const void *payload,
	       uint32_t len);
/* The same frame @p n times (at most 128) in one transmit burst: as fast as
 * a flood arrives. */
int adv_inject_burst(struct adv *x, int side, const struct drnic_wire_pkt *pkt,
		     const void *payload, uint32_t len, unsigned int n);

/* Read and classify what the taps saw (frames from B). */
void adv_tap_drain(struct adv *x);
void adv_tap_reset(struct adv *x);

/* Run both devices' inline engines (no-op in dedicated mode). */
void adv_progress(struct adv *x);

/* A QP's counters. */
struct drnic_qp_stats adv_qp_stats(struct rnic_side *s);

/* Guards intact and the victim MR's first @p len bytes all @p byte. */
bool adv_vic_is(const struct adv *x, uint8_t byte, uint32_t len);

/* A forged request from A's addresses to B's QP at B's expected PSN. */
struct drnic_wire_pkt adv_req(struct adv *x, uint8_t opcode);

/* Wait (progressing, up to 3 s) until @p cond holds; false on time-out. */
#define ADV_WAIT(x, cond)                                                       \
	({                                                                      \
		uint64_t _end = adv_now_ms() + 3000;                            \
		bool _ok;                                                       \
		while (!(_ok = (cond)) && adv_now_ms() < _end)                  \
			adv_progress(x);                                        \
		_ok;                                                            \
	})
uint64_t adv_now_ms(void);

#endif
