/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_CQ_H
#define DRNIC_CQ_H

/**
 * @file
 * Completion queues (CQs) and completion channels.
 *
 * A CQ is a ring of work completions (struct drnic_wc) in hugepage memory.
 * The engine that owns the CQ produces into it; one application thread
 * consumes from it with drnic_cq_poll(). Applications that do not want to
 * busy-poll arm the CQ with drnic_cq_req_notify() and sleep on the file
 * descriptor of a completion channel, exactly as with libibverbs:
 *
 * @code
 *   for (;;) {
 *       n = drnic_cq_poll(cq, 32, wc);          // poll while busy
 *       if (n != 0) { handle(wc, n); continue; }
 *       drnic_cq_req_notify(cq, 0);             // arm ...
 *       n = drnic_cq_poll(cq, 32, wc);          // ... then poll once more
 *       if (n != 0) { handle(wc, n); continue; }
 *       drnic_get_cq_event(ch, &ev_cq, &ctx);   // sleep (or epoll the fd first)
 *       drnic_ack_cq_events(ev_cq, 1);
 *   }
 * @endcode
 *
 * Numbers are those of libibverbs: enum drnic_wc_status, enum drnic_wc_opcode,
 * enum drnic_wc_flags and the layout of struct drnic_wc are identical to their
 * ibv_ counterparts (a unit test checks it), so a verbs layer converts by copy.
 *
 * Threading: one thread at a time consumes a CQ (drnic_cq_poll(),
 * drnic_cq_req_notify(), drnic_cq_resize()); the channel functions may be
 * called from any thread.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest CQ depth drnic_cq_create() and drnic_cq_resize() accept (4 Mi CQEs). */
#define DRNIC_CQ_MAX_DEPTH (1u << 22)

/** Completion status; the values of enum ibv_wc_status. */
enum drnic_wc_status {
	DRNIC_WC_SUCCESS = 0,
	DRNIC_WC_LOC_LEN_ERR = 1,
	DRNIC_WC_LOC_QP_OP_ERR = 2,
	DRNIC_WC_LOC_EEC_OP_ERR = 3,
	DRNIC_WC_LOC_PROT_ERR = 4,
	DRNIC_WC_WR_FLUSH_ERR = 5,
	DRNIC_WC_MW_BIND_ERR = 6,
	DRNIC_WC_BAD_RESP_ERR = 7,
	DRNIC_WC_LOC_ACCESS_ERR = 8,
	DRNIC_WC_REM_INV_REQ_ERR = 9,
	DRNIC_WC_REM_ACCESS_ERR = 10,
	DRNIC_WC_REM_OP_ERR = 11,
	DRNIC_WC_RETRY_EXC_ERR = 12,
	DRNIC_WC_RNR_RETRY_EXC_ERR = 13,
	DRNIC_WC_LOC_RDD_VIOL_ERR = 14,
	DRNIC_WC_REM_INV_RD_REQ_ERR = 15,
	DRNIC_WC_REM_ABORT_ERR = 16,
	DRNIC_WC_INV_EECN_ERR = 17,
	DRNIC_WC_INV_EEC_STATE_ERR = 18,
	DRNIC_WC_FATAL_ERR = 19,
	DRNIC_WC_RESP_TIMEOUT_ERR = 20,
	DRNIC_WC_GENERAL_ERR = 21,
	DRNIC_WC_TM_ERR = 22,
	DRNIC_WC_TM_RNDV_INCOMPLETE = 23,
};

/** What completed; the values of enum ibv_wc_opcode. Receives have bit 7 set. */
enum drnic_wc_opcode {
	DRNIC_WC_SEND = 0,
	DRNIC_WC_RDMA_WRITE = 1,
	DRNIC_WC_RDMA_READ = 2,
	DRNIC_WC_COMP_SWAP = 3,
	DRNIC_WC_FETCH_ADD = 4,
	DRNIC_WC_BIND_MW = 5,
	DRNIC_WC_LOCAL_INV = 6,
	DRNIC_WC_TSO = 7,
	DRNIC_WC_ATOMIC_WRITE = 9,
	DRNIC_WC_RECV = 1 << 7,
	DRNIC_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1,
};

/** Bits of drnic_wc.wc_flags; the values of enum ibv_wc_flags. */
enum drnic_wc_flags {
	DRNIC_WC_GRH = 1 << 0,        /**< a GRH precedes the receive buffer data */
	DRNIC_WC_WITH_IMM = 1 << 1,   /**< imm_data is valid */
	DRNIC_WC_IP_CSUM_OK = 1 << 2, /**< the IP checksum was verified */
	DRNIC_WC_WITH_INV = 1 << 3,   /**< invalidated_rkey is valid */
};

/**
 * drnic_wc.sl of a UD receive: the frame's network header, as ConnectX
 * reports it there (RoCE has no SL; IBA A17.4.5.1 asks the CQE to say
 * whether the frame was IPv4 or IPv6): bit 3 a UDP header (RoCEv2), bits
 * 2:0 the L3 header, 1 IPv6, 2 IPv4.
 */
#define DRNIC_WC_SL_ROCE_V2_IPV6 0x9
#define DRNIC_WC_SL_ROCE_V2_IPV4 0xA

/** One work completion (CQE as the application sees it); layout of struct ibv_wc. */
struct drnic_wc {
	uint64_t wr_id;                /**< the work request's wr_id */
	enum drnic_wc_status status;   /**< DRNIC_WC_SUCCESS or why it failed */
	enum drnic_wc_opcode opcode;   /**< valid when status is SUCCESS */
	uint32_t vendor_err;           /**< drnic-specific detail for errors */
	uint32_t byte_len;             /**< bytes received / transferred */
	union {
		uint32_t imm_data;         /**< network byte order, with WITH_IMM */
		uint32_t invalidated_rkey; /**< with WITH_INV */
	};
	uint32_t qp_num;               /**< local QP the completion belongs to */
	uint32_t src_qp;               /**< remote QP (UD) */
	unsigned int wc_flags;         /**< enum drnic_wc_flags bits */
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

struct drnic_cq;
struct drnic_comp_channel;
struct drnic_async_queue;

/** Creation parameters of a CQ. */
struct drnic_cq_attr {
	/** Depth: CQEs that may wait unpolled, 1..DRNIC_CQ_MAX_DEPTH (exact, not rounded). */
	uint32_t cqe;
	/** Completion channel for drnic_cq_req_notify(); NULL: polling only. */
	struct drnic_comp_channel *channel;
	/** The engine/application core this CQ belongs to; stored for the device layer. */
	int comp_vector;
	/** NUMA node of the ring memory; SOCKET_ID_ANY (-1) for any. */
	int socket_id;
	/** Returned by drnic_get_cq_event() with this CQ. */
	void *cq_context;
	/** Where CQ_ERR is raised on overflow (the device's queue); may be NULL. */
	struct drnic_async_queue *async_queue;
	/** DRNIC_CQ_* bits. */
	unsigned int flags;
};

/**
 * drnic_cq_attr::flags: each CQE carries the time its producer (the engine)
 * pushed it, on drnic_cq_clock_ns()'s clock; drnic_cq_poll_ts() returns it.
 */
#define DRNIC_CQ_TIMESTAMP (1u << 0)

/**
 * The device clock of completion timestamps: nanoseconds of the CPU's
 * invariant time-stamp counter (rte_rdtsc() over rte_get_tsc_hz()), the
 * same for every CQ and engine of the process; monotonic, 64 bits.
 */
uint64_t drnic_cq_clock_ns(void);

/** Counters of one CQ, from drnic_cq_query_stats(). */
struct drnic_cq_stats {
	uint32_t depth;        /**< current depth (after any resize) */
	uint32_t occupancy;    /**< CQEs produced and not yet polled (a snapshot) */
	uint32_t high_water;   /**< largest occupancy seen by the producer at push time */
	uint32_t in_error;     /**< 1 once the CQ overflowed (sticky) */
	uint64_t completions;  /**< CQEs ever published */
	uint64_t overflows;    /**< CQEs refused: the overflowing one and all after it */
	uint64_t events;       /**< completion events signalled on the channel */
};

/**
 * Describe a completion status, with the strings of ibv_wc_status_str().
 *
 * @param status  any value.
 * @return a static string; "unknown" for values outside the enum. Never NULL.
 */
const char *drnic_wc_status_str(enum drnic_wc_status status);

/**
 * Create a completion channel: the file descriptor that armed CQs wake.
 *
 * @return the channel, or NULL with rte_errno set to
 *         ENOMEM (no memory) or the errno of eventfd() (EMFILE, ENFILE, ...).
 */
struct drnic_comp_channel *drnic_create_comp_channel(void);

/**
 * The channel's file descriptor: a non-blocking eventfd that is readable
 * while completion events wait; use it with poll()/epoll. Do not read it
 * yourself: drnic_get_cq_event() and drnic_try_get_cq_event() do.
 *
 * @return the fd (>= 0), or -EINVAL when @p ch is NULL.
 */
int drnic_comp_channel_fd(const struct drnic_comp_channel *ch);

/**
 * Destroy a completion channel. Events still waiting in it are discarded.
 *
 * @return 0; -EINVAL when @p ch is NULL or not a live channel (destroyed
 *         already: nothing behind it is read); -EBUSY while a CQ uses it.
 */
int drnic_destroy_comp_channel(struct drnic_comp_channel *ch);

/**
 * Create a completion queue.
 *
 * @param attr  depth, channel, core, NUMA node, context, async queue.
 * @return the CQ, or NULL with rte_errno set to
 *         EINVAL (NULL @p attr, depth 0, or a channel/async queue being destroyed),
 *         ERANGE (depth above DRNIC_CQ_MAX_DEPTH),
 *         ENOMEM (no hugepage memory for the ring on that node).
 */
struct drnic_cq *drnic_cq_create(const struct drnic_cq_attr *attr);

/**
 * Destroy a completion queue. Undelivered completion events of this CQ are
 * removed from its channel, and a CQ_ERR event nobody took from its async
 * queue is dropped. Unlike ibv_destroy_cq() this does not wait.
 *
 * @return 0;
 *         -EINVAL when @p cq is NULL or not a live CQ (destroyed already:
 *         nothing behind it is read);
 *         -EBUSY while a QP uses the CQ, while completion events returned by
 *         drnic_get_cq_event() are not acknowledged with drnic_ack_cq_events(),
 *         or while an async CQ_ERR event of this CQ was taken and is not
 *         acknowledged with drnic_ack_async_event(). Nothing is changed on
 *         error.
 */
int drnic_cq_destroy(struct drnic_cq *cq);

/**
 * Take up to @p num_entries completions, oldest first.
 *
 * In inline progress mode this first runs one engine step on the calling
 * thread. After an overflow the CQ is in error: the completions written before
 * it are still returned, in order; once they are all taken, -EOVERFLOW.
 *
 * @param cq           the CQ (only one thread may poll a CQ at a time).
 * @param num_entries  room in @p wc; 0 is allowed.
 * @param wc           array of at least @p num_entries completions.
 * @return the number of completions written to @p wc (0..num_entries);
 *         -EINVAL when @p cq is NULL, @p num_entries < 0, or @p wc is NULL
 *         with @p num_entries > 0;
 *         -EOVERFLOW when the CQ overflowed and holds no more completions.
 */
int drnic_cq_poll(struct drnic_cq *cq, int num_entries, struct drnic_wc *wc);

/**
 * drnic_cq_poll(), and each completion's timestamp: when the engine pushed
 * it, in drnic_cq_clock_ns() nanoseconds (struct drnic_wc keeps
 * libibverbs' layout, so the time comes beside it).
 *
 * @param ts  array of at least @p num_entries; ts[i] is wc[i]'s time.
 * @return as drnic_cq_poll(); -EINVAL also for a NULL @p ts with
 *         @p num_entries > 0, or a CQ created without DRNIC_CQ_TIMESTAMP.
 */
int drnic_cq_poll_ts(struct drnic_cq *cq, int num_entries, struct drnic_wc *wc, uint64_t *ts);

/**
 * The completion channel the CQ was created with (drnic_cq_attr::channel).
 *
 * @return the channel; NULL when @p cq is NULL or has no channel.
 */
struct drnic_comp_channel *drnic_cq_channel(const struct drnic_cq *cq);

/**
 * Arm the CQ: the next completion added to it (with @p solicited_only: the
 * next solicited completion or the next completion with an error status)
 * produces one completion event on the CQ's channel. An armed CQ stays armed
 * until that event; arming for "next" also covers "solicited".
 *
 * Completions already in the CQ do not fire the event: poll again after
 * arming, as the example at the top of this file does.
 *
 * @return 0; -EINVAL when @p cq is NULL or has no channel;
 *         -EOVERFLOW when the CQ is in error (no completion will ever come).
 */
int drnic_cq_req_notify(struct drnic_cq *cq, int solicited_only);

/**
 * Wait for a completion event and return which CQ it is for. Blocks (in
 * poll()) until an event arrives, even though the channel fd is non-blocking.
 * Each returned event must be acknowledged with drnic_ack_cq_events().
 *
 * @param ch          the channel.
 * @param cq          receives the CQ.
 * @param cq_context  receives the CQ's cq_context; may be NULL.
 * @return 0; -EINVAL when @p ch or @p cq is NULL;
 *         -EINTR when a signal interrupted the wait.
 */
int drnic_get_cq_event(struct drnic_comp_channel *ch, struct drnic_cq **cq,
		void **cq_context);

/**
 * Like drnic_get_cq_event() but never blocks: for applications that epoll
 * the channel fd (the fd may wake spuriously; this then returns -EAGAIN).
 *
 * @return 0; -EINVAL when @p ch or @p cq is NULL; -EAGAIN when no event waits.
 */
int drnic_try_get_cq_event(struct drnic_comp_channel *ch, struct drnic_cq **cq,
		void **cq_context);

/**
 * Acknowledge @p nevents events returned for @p cq by drnic_get_cq_event().
 * Acknowledge in batches to save cost; all before drnic_cq_destroy().
 * Does nothing when @p cq is NULL.
 */
void drnic_ack_cq_events(struct drnic_cq *cq, unsigned int nevents);

/**
 * Change the depth of a CQ, keeping its unpolled completions in order.
 *
 * Call from the thread that polls the CQ; the engine may keep producing: it
 * switches to the new ring at its next completion, and the poller switches
 * when it has taken the last completion of the old ring. Completions that
 * arrive between this call and that switch count against the new depth.
 *
 * @return 0;
 *         -EINVAL when @p cq is NULL, @p cqe is 0 or smaller than the number
 *         of completions now in the CQ;
 *         -ERANGE when @p cqe is above DRNIC_CQ_MAX_DEPTH;
 *         -EOVERFLOW when the CQ is in error;
 *         -ENOMEM when there is no memory for the new ring.
 */
int drnic_cq_resize(struct drnic_cq *cq, uint32_t cqe);

/**
 * Read the CQ's counters; any thread, at any time (a snapshot).
 *
 * @return 0; -EINVAL when @p cq or @p stats is NULL.
 */
int drnic_cq_query_stats(const struct drnic_cq *cq, struct drnic_cq_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
