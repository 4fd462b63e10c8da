/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LINK_FAULT_H
#define LINK_FAULT_H

/*
 * Fault injectors (private to lib/link). One injector per link queue and
 * direction (fault[q] on transmit, fault_rx[q] on receive), owned by the queue's engine thread like the queue itself;
 * only link_fault_update() runs on another (control) thread.
 *
 * An injector is pure and deterministic: its decisions come from its own
 * PRNG (splitmix64) seeded with (seed, stream), and time is passed in, so a
 * seed and an input sequence always give the same output (a fake clock in
 * unit tests).
 *
 * Path of a frame: drop? -> duplicate? (deep copy from the frame's pool) ->
 * for each copy: corrupt? -> reorder? (held in a slot, released after
 * 1..depth later frames have left, or at its timeout) -> the hold queue,
 * a FIFO with a due time each (now + delay + jitter, never earlier than
 * the frame before it, so order is kept). link_fault_peek() shows the due
 * frames at its head, link_fault_consume() removes those the driver took.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "drnic_link_fault.h"
#include "link_driver.h"

#define LINK_FAULT_DEFAULT_QUEUE 4096u
#define LINK_FAULT_MIN_QUEUE 64u
#define LINK_FAULT_MAX_QUEUE 65536u
#define LINK_FAULT_MAX_NS (10ull * 1000 * 1000 * 1000)

/* A frame held for reordering. */
struct link_fault_held {
	struct rte_mbuf *m;
	uint64_t deadline_ns;   /* released by then even without traffic */
	unsigned int left;      /* frames still to leave before it */
};

/* A frame in the hold queue. */
struct link_fault_slot {
	struct rte_mbuf *m;
	uint64_t due_ns;
};

struct link_fault {
	/* Engine side. */
	struct drnic_link_faults cfg;     /* in force */
	uint64_t rng;
	uint64_t stream;
	uint64_t last_due_ns;
	uint32_t gen_seen;
	uint64_t roce_seen;               /* RoCEv2 frames seen (fault_drop_nth) */
	unsigned int nb_held;
	uint32_t head;                    /* next out (free-running) */
	uint32_t tail;                    /* next in (free-running) */
	uint32_t mask;                    /* queue size - 1 */
	struct drnic_link_fault_stats stats;
	struct link_fault_held held[DRNIC_LINK_FAULT_MAX_DEPTH];

	/* Control side: a new configuration, taken at the next call. */
	rte_spinlock_t lock;
	uint32_t gen;                     /* bumped (release) after pending is written */
	struct drnic_link_faults pending;

	struct link_fault_slot q[];
};

/* Split "k=v,..." into the fault_ keys (into @p cfg, on top of what it
 * holds) and the rest (a malloc'd string in @p rest, possibly "", for the
 * driver). @p present tells whether any fault_ key was seen. Commas inside
 * [...] do not split. Returns 0, -EINVAL (message in @p err) or -ENOMEM. */
int link_fault_args_split(const char *args, struct drnic_link_faults *cfg, bool *present,
			  char **rest, char *err, size_t err_len);

/* A new injector; NULL and rte_errno (EINVAL, ENOMEM). Stream @p stream
 * (the queue number q on transmit, q + LINK_MAX_QUEUES on receive) varies
 * the seed. */
struct link_fault *link_fault_create(const struct drnic_link_faults *cfg, unsigned int stream,
				     int socket_id);

/* Free every frame held (counted flushed) and the injector. NULL ignored. */
void link_fault_free(struct link_fault *f);

/* Free every frame held (counted flushed). */
void link_fault_flush(struct link_fault *f);

/* Control thread: install a new configuration (taken at the next call). */
void link_fault_update(struct link_fault *f, const struct drnic_link_faults *cfg);

/* Take up to @p n frames; returns how many were taken from the front (the
 * rest stay the caller's: the hold queue is full). */
uint16_t link_fault_enqueue(struct link_fault *f, struct rte_mbuf **pkts, uint16_t n,
			    uint64_t now_ns);

/* Release reordered frames past their timeout, then show up to @p cap due
 * frames from the head in @p out (still the injector's). */
uint16_t link_fault_peek(struct link_fault *f, struct rte_mbuf **out, uint16_t cap,
			 uint64_t now_ns);

/* Remove the first @p n frames link_fault_peek() showed (now the caller's). */
void link_fault_consume(struct link_fault *f, uint16_t n);

/* link_fault_peek() + link_fault_consume(): up to @p cap due frames, the
 * caller's. */
uint16_t link_fault_poll(struct link_fault *f, struct rte_mbuf **out, uint16_t cap,
			 uint64_t now_ns);

/* Frames held now (reorder slots + hold queue). */
unsigned int link_fault_held_count(const struct link_fault *f);

/* Add this injector's counters to @p st. */
void link_fault_stats_add(const struct link_fault *f, struct drnic_link_fault_stats *st);

/* Link glue (link.c): the link's fault keys, injectors and teardown. */
int link_fault_attach(struct drnic_link *link, const struct drnic_link_faults *cfg);
void link_fault_detach(struct drnic_link *link);

/* The link's transmit path through queue @p q's injector (the engine of
 * queue q; n == 0 only releases due frames). Returns how many of @p pkts
 * were taken; the frames the driver refuses stay in the injector. */
uint16_t link_fault_tx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts,
			     uint16_t n);

/* The link's receive path through queue @p q's receive injector (the engine
 * of queue q): the driver's frames go in (those refused are freed), up to
 * @p n due frames come out into @p pkts. */
uint16_t link_fault_rx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts,
			     uint16_t n);

#endif /* LINK_FAULT_H */
