/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_LINK_FAULT_H
#define DRNIC_LINK_FAULT_H

/**
 * @file
 * Fault injection on links: drop, duplicate, reorder, corrupt and delay the
 * frames a link sends or receives, seeded and reproducible, with counters of
 * what was injected. The kernel has no netem here: this is how loss is
 * tested.
 *
 * Faults apply to transmitted frames (fault_dir=tx, the default), received
 * frames (fault_dir=rx) or both (fault_dir=both, the same configuration on
 * each side, decided independently). One injector per link queue and
 * direction, seeded with the seed and a stream: the queue number q on
 * transmit, q + 16 on receive. In this order: drop; duplicate (a deep copy
 * follows the original); then for each copy independently corrupt, reorder,
 * delay.
 *
 * Receive side: the frames the driver returns (counted in the link's rx
 * counters and mirrored to a capture as they came off the wire) go through
 * the queue's receive injector; link_rx_burst() hands the engine the frames
 * that are due. Frames the hold queue cannot take are freed (counted
 * refused: for the peer they are lost).
 *
 * Link arguments (link_args, next to the driver's own; a link with any
 * fault_ key gets injectors, and the driver never sees these keys):
 *
 * | key                        | meaning                                     | default |
 * |----------------------------|---------------------------------------------|---------|
 * | fault_drop=P               | probability a frame is lost                 | 0       |
 * | fault_dup=P                | probability a frame is sent twice           | 0       |
 * | fault_reorder=P            | probability a frame is held back            | 0       |
 * | fault_reorder_depth=N      | a held frame is overtaken by 1..N frames    | 8       |
 * | fault_reorder_timeout_us=T | a held frame leaves after T us at most      | 100     |
 * | fault_corrupt=P            | probability 1..3 bits are flipped           | 0       |
 * | fault_delay_us=T           | every frame leaves T us late (order kept)   | 0       |
 * | fault_jitter_us=T          | plus a uniform 0..T us (order kept)         | 0       |
 * | fault_seed=N               | seed of the decisions                       | 1       |
 * | fault_queue=N              | frames held per queue (power of two)        | 4096    |
 * | fault_dir=D                | tx, rx or both: which frames are faulted    | tx      |
 * | fault_drop_nth=N           | the Nth RoCEv2 frame (UDP 4791) is lost     | 0 (off) |
 *
 * P is a number in [0, 1] or a percentage ("0.5%"); N an integer; T a
 * decimal number of microseconds. N for fault_reorder_depth is 1..64;
 * fault_queue is a power of two in 64..65536. Example:
 * `wire=lb0,fault_drop=0.01,fault_reorder=0.01,fault_corrupt=0.001,fault_seed=42`;
 * `fault_dir=rx,fault_drop=0.05` loses 5% of the frames the link receives;
 * `fault_drop_nth=5` loses exactly the fifth RoCEv2 frame each queue's
 * injector sees (ARP and other frames are not counted), once: a test of one
 * lost packet, whatever else the link carries.
 *
 * Corruption flips bits beyond the Ethernet header, inside the IP packet and
 * outside the fields the ICRC leaves out (IPv4 TOS, TTL and checksum; IPv6
 * class, flow label and hop limit; UDP checksum; BTH byte 4), so the
 * receiver always drops the frame (bad ICRC, bad IP checksum or a length
 * error). A frame that is shared (reference count above one, indirect or
 * external buffer) is copied before it is corrupted: the sender's own copy
 * (kept for retransmission) is never changed. Mbuf metadata is not touched.
 *
 * Frames held for reordering or delay leave from the queue's engine loop
 * (the link's transmit and receive calls of the queue); closing the link
 * frees those still held.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct drnic_link;

/** Most frames a reordered frame may be overtaken by. */
#define DRNIC_LINK_FAULT_MAX_DEPTH 64

/** Which frames a fault configuration applies to (fault_dir=). */
enum drnic_link_fault_dir {
	DRNIC_LINK_FAULT_DIR_TX = 0,    /**< frames sent (the default; 0 for zeroed structs) */
	DRNIC_LINK_FAULT_DIR_RX = 1,    /**< frames received */
	DRNIC_LINK_FAULT_DIR_BOTH = 2,  /**< both, each side decided independently */
};

/** Fault configuration of a link (all queues). */
struct drnic_link_faults {
	double drop;                  /**< probability a frame is lost, [0, 1] */
	double dup;                   /**< probability a frame is duplicated, [0, 1] */
	double reorder;               /**< probability a frame is held back, [0, 1] */
	double corrupt;               /**< probability 1..3 bits are flipped, [0, 1] */
	unsigned int reorder_depth;   /**< 1..DRNIC_LINK_FAULT_MAX_DEPTH */
	uint64_t reorder_timeout_ns;  /**< longest hold of a reordered frame, <= 10 s */
	uint64_t delay_ns;            /**< fixed delay, <= 10 s */
	uint64_t jitter_ns;           /**< extra uniform delay 0..jitter_ns, <= 10 s */
	uint64_t seed;                /**< queue q's decisions are seeded with (seed, q) */
	unsigned int queue;           /**< frames held per queue; fixed when created */
	enum drnic_link_fault_dir dir; /**< which frames (fault_dir=); default tx */
	uint64_t drop_nth;            /**< the Nth RoCEv2 frame is lost (0: none) */
};

/** Counters of injected faults, summed over a link's queues (and, from
 * drnic_link_fault_stats(), over both directions). */
struct drnic_link_fault_stats {
	uint64_t dropped;         /**< frames lost on purpose */
	uint64_t duplicated;      /**< extra copies sent */
	uint64_t dup_failed;      /**< duplicates not made: no mbuf for the copy */
	uint64_t reordered;       /**< frames held back behind later ones */
	uint64_t corrupted;       /**< frames with flipped bits */
	uint64_t corrupted_bits;  /**< bits flipped in all */
	uint64_t corrupt_failed;  /**< corruptions not made: no mbuf for a copy */
	uint64_t delayed;         /**< frames sent late (fault_delay_us/jitter) */
	uint64_t refused;         /**< frames refused for now: hold queue full */
	uint64_t flushed;         /**< held frames freed when the link closed */
	uint64_t held;            /**< frames held now */
};

/**
 * Defaults: no faults, depth 8, reorder timeout 100 us, seed 1, queue 4096.
 * @param cfg  filled; NULL is ignored.
 */
void drnic_link_faults_init(struct drnic_link_faults *cfg);

/**
 * Parse fault keys ("fault_drop=0.01,fault_seed=7", the keys in the table
 * above) on top of @p cfg, which the caller initialised.
 *
 * @param args     the string; NULL or "" changes nothing.
 * @param cfg      updated.
 * @param err      when not NULL, receives a message naming the key and why
 *                 it was refused.
 * @param err_len  size of @p err.
 * @return 0; -EINVAL when an argument is NULL, a key is not a fault_ key,
 *         has no value, is not a number, or is out of range.
 */
int drnic_link_faults_parse(const char *args, struct drnic_link_faults *cfg,
			    char *err, size_t err_len);

/**
 * Check a configuration.
 * @return 0; -EINVAL when @p cfg is NULL or a field is out of range
 *         (message in @p err when not NULL).
 */
int drnic_link_faults_check(const struct drnic_link_faults *cfg, char *err, size_t err_len);

/**
 * Set a link's faults at run time, in direction cfg->dir. Each queue picks
 * the new configuration up at its next transmit or receive call and
 * reseeds from cfg->seed. Frames already held keep their schedule. A link
 * opened without faults (or without faults in that direction) gets
 * injectors (they are freed when it closes); injectors of the other
 * direction, if any, are turned off (they pass frames on unchanged); an
 * all-zero configuration turns injection off. cfg->queue only counts the
 * first time. Call from a control thread, not from the link's engines.
 *
 * @return 0; -EINVAL when an argument is NULL or @p cfg fails
 *         drnic_link_faults_check(); -ENOMEM.
 */
int drnic_link_set_faults(struct drnic_link *link, const struct drnic_link_faults *cfg);

/**
 * Read a link's fault configuration (the last one set).
 * @return 0; -EINVAL when an argument is NULL; -ENOENT when the link has
 *         no injectors (@p cfg is then the defaults).
 */
int drnic_link_get_faults(const struct drnic_link *link, struct drnic_link_faults *cfg);

/**
 * Read a link's fault counters, both directions summed (a snapshot; zeros
 * when it has no faults).
 * @return 0; -EINVAL when an argument is NULL.
 */
int drnic_link_fault_stats(const struct drnic_link *link, struct drnic_link_fault_stats *st);

/**
 * Read a link's fault counters of one direction: DRNIC_LINK_FAULT_DIR_TX
 * (the transmit injectors), DRNIC_LINK_FAULT_DIR_RX (the receive ones) or
 * DRNIC_LINK_FAULT_DIR_BOTH (summed, as drnic_link_fault_stats()).
 * @return 0; -EINVAL when an argument is NULL or @p dir is not one of those.
 */
int drnic_link_fault_stats_dir(const struct drnic_link *link, enum drnic_link_fault_dir dir,
			       struct drnic_link_fault_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_LINK_FAULT_H */
