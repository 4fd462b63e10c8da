/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef VERBS_OBJECTS_H
#define VERBS_OBJECTS_H

/*
 * The verbs objects as the engines see them (private to lib/verbs and
 * lib/engine; not installed).
 *
 * Applications and engines meet only here: work queues (SQ/RQ rings of WQEs),
 * the per-engine doorbell ring, the MR table and the QP table. lib/verbs never
 * includes an engine header: it reaches the engines through these data and
 * the function table an engine library installs with verbs_set_engine_ops().
 */

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "drnic_verbs.h"
#include "cq_engine.h"
#include "handle.h"
#include "link_driver.h"

#ifdef __cplusplus
extern "C" {
#endif

extern int verbs_logtype;
#define VERBS_LOG(level, fmt, ...)                                              \
	rte_log(RTE_LOG_##level, verbs_logtype, "verbs: " fmt "\n", ##__VA_ARGS__)
#define VERBS_DEV_LOG(level, dev, fmt, ...)                                     \
	rte_log(RTE_LOG_##level, verbs_logtype, "%s: " fmt "\n", (dev)->cfg.name, ##__VA_ARGS__)
#define VERBS_QP_LOG(level, qp, fmt, ...)                                       \
	rte_log(RTE_LOG_##level, verbs_logtype, "%s qp#%u: " fmt "\n",          \
		(qp)->dev->cfg.name, (qp)->qp_num, ##__VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Limits                                                                   */
/* ------------------------------------------------------------------------ */

#define VERBS_MAX_SGE 32           /* hard ceiling of max_sge */
#define VERBS_MAX_INLINE 1024      /* hard ceiling of max_inline_data */
#define VERBS_MAX_QP_WR 32768      /* hard ceiling of max_qp_wr */
#define VERBS_MAX_MSG_SZ (1u << 31)
/* Hard ceiling of max_rd_atomic / max_dest_rd_atomic (configurable up to it). */
#define VERBS_MAX_RD_ATOMIC 128
/* Default max_rd_atomic of a device. */
#define VERBS_DEFAULT_RD_ATOMIC 16
/* The port's P_Key table: one entry, the default P_Key (full member). */
#define VERBS_PKEY_TBL_LEN 1
#define VERBS_DEFAULT_PKEY 0xFFFF
/* QPNs 0 and 1 are the special QPs; RC QPNs start here. */
#define VERBS_FIRST_QPN 2
/* A Q_Key with this bit set is a controlled one (IBA 10.2.4): a UD send
 * WR naming one sends the QP's own Q_Key, and only a privileged process
 * may give a QP one. */
#define VERBS_QKEY_CONTROLLED 0x80000000u

/* Does this process have CAP_NET_RAW (what Linux asks of a controlled
 * Q_Key)? Read once (device.c). */
bool verbs_privileged(void);

/* QP 1, the GSI's (IBA 13.5): a UD QP that only verbs_create_gsi_qp()
 * makes, one per device; ordinary QPs are numbered from VERBS_FIRST_QPN.
 * It takes VERBS_GSI_QKEY as its Q_Key (and no other), without the
 * privilege a user QP needs for a controlled one, so its sends that name a
 * controlled Q_Key go out with it. */
#define VERBS_GSI_QPN 1
#define VERBS_GSI_QKEY 0x80010000u

/*
 * Create QP 1 of @p pd's device for its GSI agent (lib/ibcm), as
 * drnic_create_qp() creates a UD QP from @p ia (qp_type DRNIC_QPT_UD, no
 * SRQ). Datagrams to QPN 1 reach the engine of link queue
 * drnic_link_qpn_queue(1, nb_engines): both CQs must have that comp_vector
 * (modulo the device's engines). drnic_destroy_qp() destroys it.
 * Returns the QP, or NULL with rte_errno EINVAL (bad argument, CQs of
 * another engine), EBUSY (the device has a QP 1), ENOMEM. (qp.c)
 */
struct drnic_qp *verbs_create_gsi_qp(struct drnic_pd *pd, struct drnic_qp_init_attr *ia);

/* ------------------------------------------------------------------------ */
/* Memory regions                                                           */
/* ------------------------------------------------------------------------ */

/*
 * Key layout: generation << mr_idx_bits | index in the MR table, where
 * mr_idx_bits = log2 of the table size rounded up to a power of two. Index 0
 * is never used, so key 0 is never valid. Bit 31 is clear (a window's key
 * has it set). The generation (the other 31 - mr_idx_bits bits, at least
 * 8) is a keyed permutation of the slot's registration count (mr.c): a slot
 * repeats a key only after 2^(31 - mr_idx_bits) registrations of it, and
 * free slots are reused first freed, first taken, so a freed key comes back
 * as late as possible; the seed is random per device, so keys cannot be
 * guessed from the table layout.
 */

struct drnic_pd {
	struct drnic_device *dev;
	atomic_uint refs;          /* MRs, QPs and windows using it */
	uint32_t handle;
};

/*
 * One MR table slot. Ownership: written by the control path (reg/dereg, under
 * dev->lock); read by the engines. The key is published last with release on
 * registration and cleared first on deregistration; readers load the key with
 * acquire, read the fields, and load the key again (seqlock style), so a
 * reused slot never passes the check with another MR's fields.
 */
struct verbs_mr_slot {
	atomic_uint key;           /* 0 while free */
	/* Memory windows bound to it (engines binding and invalidating, any
	 * thread; mw.c): drnic_dereg_mr() refuses while any is. */
	atomic_uint mw_binds;
	uint32_t uses;             /* registrations so far: the generation's input */
	uint32_t access;
	uint64_t addr;             /* host address of the first byte: in the
				    * MR's window when pinned (drnic_mr::pin) */
	uint64_t length;
	uint64_t iova;             /* the address keys name it by (= addr, or
				    * drnic_reg_mr_iova()'s: 0 when zero-based) */
	const struct drnic_pd *pd;
	struct drnic_mr *mr;
	uint32_t next_free;        /* FIFO of free slots, control path only */
};

/* ------------------------------------------------------------------------ */
/* Memory windows                                                           */
/* ------------------------------------------------------------------------ */

/*
 * Window keys (mw.c): bit 31 set (an MR key never has it), then a
 * generation, the slot's index in dev->mw_tab, and the low 8 bits, which are
 * the consumer's key (IBA: a type 2 window's rkey changes only there, as
 * ibv_inc_rkey() does): VERBS_MW_KEY_BIT | gen << (mw_idx_bits + 8) |
 * idx << 8 | key byte. The bits above the key byte (the tag) stay the
 * window's from allocation to deallocation.
 */
#define VERBS_MW_KEY_BIT 0x80000000u
/* Windows per device (drnic_device_attr::max_mw). */
#define VERBS_MAX_MW 4096

/*
 * One window table slot. Ownership: the application's thread allocates and
 * deallocates (under dev->lock for the free list); engines bind and
 * invalidate (any engine: the QP that binds or invalidates may be on any of
 * them). Every change is made under `lock`, with `seq` odd while it lasts;
 * `key` (the rkey while the window is bound and valid, else 0) is cleared
 * first and published last. Readers (verbs_mw_check()) are lock-free:
 * seq, key, fields, seq again.
 */
struct verbs_mw_slot {
	atomic_uint key;           /* valid rkey, 0 when not bound */
	atomic_uint seq;           /* odd while a change is being made */
	uint32_t access;           /* DRNIC_ACCESS_REMOTE_* of the binding */
	uint32_t mr_key;           /* the MR it is bound to */
	uint64_t addr;
	uint64_t length;
	uint32_t qpn;              /* type 2: the QP it is bound to */
	uint32_t tag;              /* rkey without its key byte; 0: slot free */
	uint32_t cur_key;          /* the window's rkey, bound or not (under lock) */
	uint8_t type;              /* 1 or 2 (DRNIC_MW_TYPE_*) */
	uint8_t bound;             /* under lock */
	const struct drnic_pd *pd;
	rte_spinlock_t lock;
	uint32_t uses;             /* allocations so far: the generation's input */
	uint32_t next_free;        /* FIFO of free slots, control path only */
};

struct drnic_mw {
	struct drnic_pd *pd;
	uint32_t rkey;             /* the application's view (drnic_mw_rkey()) */
	uint32_t idx;              /* slot in dev->mw_tab */
	uint8_t type;
};

/* Where the engines reach an MR's bytes (lib/verbs/mr_pin.c): its window,
 * a mapping of its own onto its pages, or (window NULL) the program's
 * mapping. Control path only. */
struct mr_pin_map {
	void *window;
	size_t window_len;
	uint64_t host;            /* the engines' address of the MR's first byte */
	bool shm;                 /* a System V segment attached again (shmdt) */
};

/* Registered memory with a mapping of its own: the process's counters. */
struct mr_pin_stats {
	uint64_t moves;           /* private ranges moved onto a memfd, ever */
	uint64_t windows;         /* registrations with a window now */
	uint64_t bytes_moved;     /* copied at registration, ever */
	uint64_t unpinned;        /* registrations that could not be pinned, ever */
};
void mr_pin_stats_get(struct mr_pin_stats *st);

struct drnic_mr {
	struct drnic_pd *pd;
	void *addr;
	size_t length;
	uint64_t iova;
	uint32_t access;
	uint32_t lkey;
	uint32_t rkey;
	struct mr_pin_map pin;     /* pin.host: where the engines reach addr */
};

/* ------------------------------------------------------------------------ */
/* Work queues                                                              */
/* ------------------------------------------------------------------------ */

/*
 * What each send WR opcode is, as data: post_send's checks, the requester's
 * packets and the completer's CQEs all read it here.
 */
#define VERBS_WR_SEND      0x01u   /* a SEND: takes a receive WQE at the peer */
#define VERBS_WR_WRITE     0x02u   /* an RDMA WRITE */
#define VERBS_WR_READ      0x04u   /* an RDMA READ */
#define VERBS_WR_ATOMIC    0x08u   /* one 8-byte SGE, an 8-aligned remote address */
#define VERBS_WR_IMM       0x10u   /* carries immediate data */
#define VERBS_WR_INLINE    0x20u   /* may carry inline data */
#define VERBS_WR_LOCAL     0x40u   /* a local operation: no packet, no PSN (BIND_MW, LOCAL_INV) */
#define VERBS_WR_INV       0x80u   /* a SEND with Invalidate: an IETH on its last packet */
/* An ATOMIC WRITE (RC only): a one-packet WRITE of exactly 8 bytes to an
 * 8-aligned address, stored atomically, acknowledged by an ACK. */
#define VERBS_WR_ATOMIC_WRITE 0x100u
#define VERBS_WR_RD_ATOMIC (VERBS_WR_READ | VERBS_WR_ATOMIC)  /* answered by a response */

/* Send opcodes are 0 .. VERBS_WR_OPCODE_MAX - 1; post_send refuses others
 * and those whose entry has no flags (not offered). */
#define VERBS_WR_OPCODE_MAX (DRNIC_WR_ATOMIC_WRITE + 1)

struct verbs_wr_info {
	uint16_t flags;        /* VERBS_WR_* */
	uint8_t wc_opcode;     /* enum drnic_wc_opcode of its completion */
	uint8_t wc_byte_len8;  /* its completion's byte_len is 8, not the length */
};

/* The facts of send opcode @p op (< VERBS_WR_OPCODE_MAX). */
static inline const struct verbs_wr_info *
verbs_wr_info(uint8_t op)
{
	static const struct verbs_wr_info tab[VERBS_WR_OPCODE_MAX] = {
		[DRNIC_WR_RDMA_WRITE] = { VERBS_WR_WRITE | VERBS_WR_INLINE,
					  DRNIC_WC_RDMA_WRITE, 0 },
		[DRNIC_WR_RDMA_WRITE_WITH_IMM] = { VERBS_WR_WRITE | VERBS_WR_IMM | VERBS_WR_INLINE,
						   DRNIC_WC_RDMA_WRITE, 0 },
		[DRNIC_WR_SEND] = { VERBS_WR_SEND | VERBS_WR_INLINE, DRNIC_WC_SEND, 0 },
		[DRNIC_WR_SEND_WITH_IMM] = { VERBS_WR_SEND | VERBS_WR_IMM | VERBS_WR_INLINE,
					     DRNIC_WC_SEND, 0 },
		[DRNIC_WR_RDMA_READ] = { VERBS_WR_READ, DRNIC_WC_RDMA_READ, 0 },
		[DRNIC_WR_ATOMIC_CMP_AND_SWP] = { VERBS_WR_ATOMIC, DRNIC_WC_COMP_SWAP, 1 },
		[DRNIC_WR_ATOMIC_FETCH_AND_ADD] = { VERBS_WR_ATOMIC, DRNIC_WC_FETCH_ADD, 1 },
		[DRNIC_WR_LOCAL_INV] = { VERBS_WR_LOCAL, DRNIC_WC_LOCAL_INV, 0 },
		[DRNIC_WR_BIND_MW] = { VERBS_WR_LOCAL, DRNIC_WC_BIND_MW, 0 },
		[DRNIC_WR_SEND_WITH_INV] = { VERBS_WR_SEND | VERBS_WR_INV | VERBS_WR_INLINE,
					     DRNIC_WC_SEND, 0 },
		[DRNIC_WR_ATOMIC_WRITE] = { VERBS_WR_WRITE | VERBS_WR_ATOMIC_WRITE |
					    VERBS_WR_INLINE, DRNIC_WC_ATOMIC_WRITE, 1 },
	};

	return &tab[op];
}

/* Send WQE states (struct verbs_send_wqe::state): post_send leaves a WQE
 * POSTED; from the doorbell on, only the engine changes it. */
enum wqe_state {
	WQE_POSTED = 0,      /* not started */
	WQE_SENDING,         /* some packets sent */
	WQE_SENT,            /* every request packet sent; waits for ACK/response */
	WQE_DONE,            /* response complete (READ, atomic) */
	WQE_FAILED,          /* completed in error (status says why) */
};

/*
 * A send WQE: what post_send copied from the WR, plus engine bookkeeping.
 * BIND_MW keeps its binding in the other fields (verbs_mw_bind() reads
 * them): imm_data the window's rkey when posted (which window),
 * rkey the new rkey, remote_addr and compare_add the address and length,
 * swap the MR's lkey (low 32 bits) and the access (high 32 bits),
 * mw_type1 whether drnic_bind_mw() posted it.
 */
struct verbs_send_wqe {
	uint64_t wr_id;
	uint8_t opcode;            /* enum drnic_wr_opcode */
	uint8_t inl;               /* data is inline, after the header */
	uint16_t num_sge;
	uint32_t send_flags;
	uint32_t imm_data;         /* network order; SEND_WITH_INV, LOCAL_INV: the rkey */
	uint32_t length;           /* message bytes (sum of SGEs or inline) */
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t xrc_srqn;         /* XRC_SEND: the XRCETH's SRQ number */
	union {
		struct {               /* atomics */
			uint64_t compare_add;
			uint64_t swap;
		};
		struct {               /* UD: the destination (post_send holds the AH) */
			struct drnic_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;  /* resolved: never the high-bit form */
		} ud;
	};
	/* Engine-owned from the doorbell to the completion. */
	uint32_t first_psn;
	uint32_t last_psn;
	uint8_t state;             /* enum wqe_state */
	uint8_t status;            /* completion status once known */
	uint8_t mw_type1;          /* BIND_MW: posted by drnic_bind_mw() */
	uint8_t pad1;
	/* READ: the next response PSN it waits for (its own progress, kept
	 * across go-backs); VERBS_WQE_NO_PSN until the engine starts it. */
	uint32_t rd_next;
	/* Then num_sge struct drnic_sge, or inline data. */
	struct drnic_sge sge[];
};

/* No PSN (PSNs are 24 bits). */
#define VERBS_WQE_NO_PSN UINT32_MAX

/* A receive WQE. */
struct verbs_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;           /* sum of SGE lengths */
	struct drnic_sge sge[];
};

/*
 * A work queue: a power-of-two ring of fixed-stride WQEs.
 * Ownership: the poster (one application thread) writes WQEs at prod and
 * publishes prod with release; the engine reads prod with acquire. The engine
 * retires WQEs by publishing cons with release; the poster reads cons with
 * acquire to find free slots. prod and cons are free-running 32-bit counters.
 */
struct verbs_wq {
	uint8_t *buf;
	uint32_t size;             /* slots, power of two */
	uint32_t mask;
	uint32_t stride;           /* bytes per WQE */
	uint32_t max_sge;
	uint32_t max_inline;
	/* A receive queue's device, whose MRs its SGEs name (set by the
	 * queue's creator; NULL: SGEs are taken as they are). */
	struct drnic_device *dev;
	/* Poster side: one cache line that a post writes. */
	alignas(RTE_CACHE_LINE_SIZE) atomic_uint prod;
	uint32_t cons_seen;        /* cons when last read: the poster reads
				    * cons (the engine's line) only when the
				    * queue looks full */
	/* Send queue only: the QP's doorbell flag, VERBS_DB_QUEUED while the
	 * QP is in, or about to be in, the engine's doorbell ring or active
	 * list. Beside prod, so a post moves one line to the engine. */
	atomic_uint db;
	/* Engine side. */
	alignas(RTE_CACHE_LINE_SIZE) atomic_uint cons;
};

/* Slot @p idx of a ring at @p buf of mask + 1 slots of @p stride bytes. */
static inline void *
verbs_ring_slot(uint8_t *buf, uint32_t mask, uint32_t stride, uint32_t idx)
{
	return buf + (size_t)(idx & mask) * stride;
}

static inline void *
verbs_wq_slot(const struct verbs_wq *wq, uint32_t idx)
{
	return verbs_ring_slot(wq->buf, wq->mask, wq->stride, idx);
}

/* Engine: WQEs posted and not retired. Acquire on prod (the poster's). */
static inline uint32_t
verbs_wq_posted(const struct verbs_wq *wq, uint32_t cons)
{
	return atomic_load_explicit(&wq->prod, memory_order_acquire) - cons;
}

/* Allocate @p wq's ring: @p nwr slots (rounded up to a power of two) of a
 * @p hdr-byte header and room for @p max_sge SGEs or @p max_inline bytes.
 * 0 or -ENOMEM. */
static inline int
verbs_wq_alloc(struct verbs_wq *wq, uint32_t nwr, uint32_t hdr, uint32_t max_sge,
	       uint32_t max_inline, int socket)
{
	uint32_t area = RTE_MAX(max_sge * (uint32_t)sizeof(struct drnic_sge), max_inline);

	wq->size = rte_align32pow2(nwr);
	wq->mask = wq->size - 1;
	wq->stride = RTE_ALIGN_CEIL(hdr + area, 64);
	wq->max_sge = max_sge;
	wq->max_inline = max_inline;
	wq->buf = rte_zmalloc_socket("drnic_wq", (size_t)wq->size * wq->stride,
				     RTE_CACHE_LINE_SIZE, socket);
	return wq->buf == NULL ? -ENOMEM : 0;
}

/* Poster: write the receive WRs of @p wr at rq->prod and publish them
 * (release). Returns how many were posted, or -EINVAL / -ENOMEM for the
 * WR *bad_wr names (the ones before it are posted); *bad_wr is NULL when
 * all were. (post.c) */
int verbs_rq_post(struct verbs_wq *rq, struct drnic_recv_wr *wr, struct drnic_recv_wr **bad_wr);

/* Engine: retire every WQE before @p cons. Release: the slots may be reused. */
static inline void
verbs_wq_retire(struct verbs_wq *wq, uint32_t cons)
{
	atomic_store_explicit(&wq->cons, cons, memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* XRC domains (xrc.c)                                                      */
/* ------------------------------------------------------------------------ */

/*
 * An XRC domain: XRC SRQs and XRC target QPs of one domain serve each
 * other. Control path only, under dev->lock: opens (drnic_open_xrcd() of
 * the same file share it), the users (XRC SRQs and target QPs). The engine
 * compares domain pointers only (an XRC SRQ's and its target QP's), both
 * held alive by their users.
 */
struct drnic_xrcd {
	struct drnic_device *dev;
	struct drnic_xrcd *next;   /* the device's list */
	bool keyed;                /* opened for a file: shared by its inode */
	uint64_t key_dev;          /* st_dev, st_ino of that file */
	uint64_t key_ino;
	unsigned int opens;        /* drnic_open_xrcd() calls not closed */
	unsigned int users;        /* XRC SRQs and XRC target QPs in it */
};

/* The engine XRC target QPs run on, and whose CQs XRC SRQs complete on:
 * one producer per CQ, whichever target QP an XRC message came through. */
#define VERBS_XRC_ENGINE 0u

/* ------------------------------------------------------------------------ */
/* Shared receive queues                                                    */
/* ------------------------------------------------------------------------ */

/* Where an SRQ's WQEs are, as its takers read them (they may resize). */
struct verbs_srq_ring {
	uint8_t *buf;
	uint32_t mask;
};

/*
 * A shared receive queue. Posters (any thread) write WQEs at rq.prod under
 * post_lock; the engines of the QPs that use it (any number, at once) take
 * the oldest with verbs_srq_take(), which copies it and moves rq.cons by
 * compare-and-swap: a slot is the poster's again once cons has passed it.
 * An XRC SRQ has a number (the XRCETH names it; the device's srq_tab finds
 * it), a domain and a CQ its receives complete on.
 *
 * Resizing (drnic_modify_srq() with DRNIC_SRQ_MAX_WR: growing only) holds
 * post_lock, copies the WQEs not yet taken into a larger ring at the same
 * indices, and publishes it through `ring` (release); rq.buf/size/mask are
 * the posters' view (under post_lock). prod and cons stay where they are,
 * so a take is counted once whichever ring it copied from: an index below
 * prod is in both rings with the same contents. A taker reads `ring` after
 * prod (acquire), so a WQE posted after the switch is read from the new
 * ring. The old ring is freed after an engine fence.
 */
struct drnic_srq {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_xrcd *xrcd;           /* XRC: its domain; NULL: basic */
	struct drnic_cq *cq;               /* XRC: where its receives complete */
	uint32_t srq_num;                  /* XRC: its number (24 bits, not 0) */
	void *srq_context;
	struct drnic_async_queue *async;   /* where its events go */
	uint32_t max_wr;                   /* rq.size, what query_srq reports */
	rte_spinlock_t post_lock;
	atomic_uint limit;                 /* armed limit; 0: not armed */
	atomic_uint nb_qp;                 /* QPs created with it */
	atomic_uint events_unacked;        /* async events taken and not acknowledged */
	_Atomic(struct verbs_srq_ring *) ring;  /* the takers' view of rq's ring */
	struct verbs_srq_ring ring0;       /* the ring it was created with */
	struct verbs_wq rq;
};

/*
 * Engine: take the oldest WQE of @p srq into @p w (room for rq.max_sge
 * SGEs). Raises SRQ_LIMIT_REACHED when that leaves fewer WQEs than the
 * armed limit. Returns false when the SRQ is empty.
 */
bool verbs_srq_take(struct drnic_srq *srq, struct verbs_recv_wqe *w);

/* A CQ's progress hook in inline mode (cq_set_progress()): polling it runs
 * the process's inline engines. (qp.c) */
int verbs_inline_progress(void *arg);

/* Raise an event about @p srq (any thread). */
void verbs_srq_event(struct drnic_srq *srq, enum drnic_event_type type);

/* Bytes of a struct verbs_recv_wqe with @p max_sge SGEs. */
static inline size_t
verbs_recv_wqe_size(uint32_t max_sge)
{
	return sizeof(struct verbs_recv_wqe) + (size_t)max_sge * sizeof(struct drnic_sge);
}

/* ------------------------------------------------------------------------ */
/* Address handles and multicast groups                                     */
/* ------------------------------------------------------------------------ */

/*
 * An address handle: where a UD send goes. Written once by drnic_create_ah()
 * (the destination MAC resolved then), read by the engines that send with
 * it. post_send counts each WQE that names it in @busy and the requester
 * uncounts it once the WQE's packet is built, so drnic_destroy_ah() refuses
 * (-EBUSY) while a posted send still needs it: nothing reads a destroyed AH.
 */
struct drnic_ah {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_ah_attr attr;  /* as given, dmac resolved */
	uint16_t udp_sport;
	atomic_uint busy;
};

/* UD: the WQE no longer needs its AH (its packet is built, or it will never
 * be: failed, flushed, reset); the AH may be destroyed once no WQE holds it.
 * For a UD QP's WQEs only (the field shares room with the atomics'). */
static inline void
verbs_wqe_ah_put(struct verbs_send_wqe *w)
{
	if (w->ud.ah != NULL) {
		/* Release: every read of the AH comes before. */
		atomic_fetch_sub_explicit(&w->ud.ah->busy, 1, memory_order_release);
		w->ud.ah = NULL;
	}
}

/* Multicast limits of a device (what drnic_query_device() reports). */
#define VERBS_MAX_MCAST_GRP 64       /* groups attached at once */
#define VERBS_MAX_MCAST_QP_ATTACH 16 /* QPs per group */
/* The multicast QPN: a UD datagram to a group carries it (IBA 10.5.2.4). */
#define VERBS_MCAST_QPN 0xFFFFFFu

/* One group some UD QP of the device is attached to (control path, under
 * dev->lock): which QPs, for the limits and for detach. The engines keep
 * their own table (verbs_engine_ops.qp_mcast), which the receive path reads. */
struct verbs_mcast_grp {
	union drnic_gid gid;
	unsigned int nb_qp;
	struct drnic_qp *qp[VERBS_MAX_MCAST_QP_ATTACH];
};

/* Is @p gid a multicast GID of RoCEv2: an IPv4-mapped 224.0.0.0/4 address or
 * an IPv6 ff00::/8 one? */
static inline bool
verbs_gid_is_mcast(const union drnic_gid *gid)
{
	static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };

	if (memcmp(gid->raw, v4pfx, sizeof(v4pfx)) == 0)
		return (gid->raw[12] & 0xF0) == 0xE0;
	return gid->raw[0] == 0xFF;
}

/* The Ethernet multicast MAC of multicast GID @p gid (RFC 1112: 01:00:5e and
 * the low 23 bits of the IPv4 group; RFC 2464: 33:33 and the low 32 bits of
 * the IPv6 group). */
static inline void
verbs_mcast_mac(const union drnic_gid *gid, uint8_t mac[6])
{
	static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };

	if (memcmp(gid->raw, v4pfx, sizeof(v4pfx)) == 0) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5E;
		mac[3] = gid->raw[13] & 0x7F;
		mac[4] = gid->raw[14];
		mac[5] = gid->raw[15];
	} else {
		mac[0] = 0x33;
		mac[1] = 0x33;
		memcpy(&mac[2], &gid->raw[12], 4);
	}
}

/* ------------------------------------------------------------------------ */
/* Queue pairs                                                              */
/* ------------------------------------------------------------------------ */

/* Doorbell flag values (struct verbs_wq::db of the send queue). */
#define VERBS_DB_IDLE 0u
#define VERBS_DB_QUEUED 1u

struct drnic_qp {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_cq *send_cq;
	struct drnic_cq *recv_cq;
	void *qp_context;
	struct drnic_async_queue *async;   /* where its events go */
	/* An attached process's QP: its posts' doorbell ring on the QP's
	 * engine, the process's own (drnicd); NULL: dev->eng[engine]'s. */
	struct rte_ring *db_ring;
	uint32_t qp_num;
	uint16_t engine;           /* index in dev->eng[] */
	uint8_t sq_sig_all;
	uint8_t type;              /* enum drnic_qp_type: RC, UC, UD, XRC_SEND or XRC_RECV */
	struct drnic_qp_cap cap;
	/*
	 * State: written by modify_qp (application) and by the owning engine
	 * (to ERR); both with compare-and-swap; read with acquire.
	 */
	atomic_uint state;
	/* The attributes as modify_qp left them, and what it derived from
	 * them: the application's thread's (query_qp reads them). The engine
	 * never reads them: modify_qp sends it a snapshot (struct
	 * verbs_qp_path) before it publishes the new state. */
	struct drnic_qp_attr attr;
	uint32_t attr_mtu_bytes;   /* path MTU in bytes */
	uint8_t dmac[6];           /* resolved destination MAC */
	uint16_t udp_sport;
	atomic_uint events_unacked;  /* async events taken and not acknowledged */
	struct drnic_srq *srq;     /* receives come from it (NULL: from rq) */
	unsigned int nb_mcast;     /* UD: groups attached (under dev->lock) */
	/* XRC_RECV: its domain (the XRC SRQs it may deliver to); the
	 * drnic_open_qp() calls not yet matched by a destroy. */
	struct drnic_xrcd *xrcd;
	unsigned int opens;
	void *eng_priv;            /* engine-private state (engine_qp) */
	struct verbs_wq sq;
	struct verbs_wq rq;
};

/* ------------------------------------------------------------------------ */
/* Device                                                                   */
/* ------------------------------------------------------------------------ */

/* What a device knows of each of its engines. */
struct verbs_engine_ref {
	void *engine;              /* opaque, set by engine_ops->dev_attach */
	struct rte_ring *doorbell; /* MP/SC ring of struct drnic_qp * */
	uint16_t link_queue;       /* queue of dev->link this engine uses */
};

struct drnic_device {
	struct drnic_config cfg;
	pthread_mutex_t lock;      /* control path only */
	struct drnic_link *link;
	struct drnic_async_queue *async;
	/* Other queues given the device's events (drnic_device_async_subscribe);
	 * under async_lock, which is never held while waiting for an engine
	 * (an engine takes it to raise a port event). */
	pthread_mutex_t async_lock;
	struct drnic_async_queue *async_subs[DRNIC_MAX_ASYNC_SUBSCRIBERS];
	unsigned int nb_async_subs;
	uint8_t active_mtu;        /* enum drnic_mtu */
	uint8_t max_mtu;
	unsigned int nb_gids;
	union drnic_gid gid[DRNIC_GID_TABLE_LEN];
	uint8_t gid_is_v4[DRNIC_GID_TABLE_LEN];
	uint64_t node_guid;

	/* MR table: slot index = key & mr_idx_mask (see the key layout). */
	struct verbs_mr_slot *mr_tab;
	uint32_t mr_tab_size;
	uint32_t mr_idx_mask;
	uint8_t mr_idx_bits;
	uint64_t mr_key_seed;      /* random, per device */
	uint32_t mr_free;          /* FIFO of free slots: oldest, 0 = none */
	/* An MR whose iova is not its address was registered (ever): posts
	 * then translate their SGEs (verbs_sge_to_host()). */
	atomic_bool mr_iova_any;
	uint32_t mr_free_last;     /* ... newest */
	unsigned int nb_mr;
	/* Window table: slot index = (key >> 8) & mw_idx_mask. */
	struct verbs_mw_slot *mw_tab;
	uint32_t mw_tab_size;
	uint32_t mw_idx_mask;
	uint8_t mw_idx_bits;
	uint32_t mw_free;          /* FIFO of free slots: oldest, 0 = none */
	uint32_t mw_free_last;
	unsigned int nb_mw;
	unsigned int nb_pd;
	uint32_t pd_seq;

	/*
	 * QP table indexed by QPN & qp_mask. Written under lock with release
	 * (a QP is visible once created; cleared before it is destroyed);
	 * read by engines with acquire.
	 */
	_Atomic(struct drnic_qp *) *qp_tab;
	uint32_t qp_tab_size;
	uint32_t qp_mask;
	uint32_t qp_next;          /* next QPN to try */
	unsigned int nb_qp;
	unsigned int nb_srq;       /* under lock */
	unsigned int nb_ah;        /* under lock */
	/* Datagrams dropped for a wrong Q_Key (the engines add to it). */
	atomic_uint qkey_viol;
	/* The link's state as its engine last saw it (queue 0's engine);
	 * what an attached process reads, which cannot call the link's ops
	 * (they are the daemon's code). */
	atomic_bool link_up;
	/* Multicast groups attached (under lock); nb_mcast of them in use. */
	struct verbs_mcast_grp mcast[VERBS_MAX_MCAST_GRP];
	unsigned int nb_mcast;
	/* XRC SRQs by number (srq_num & srq_mask), as qp_tab: written under
	 * lock with release, read by engines with acquire. */
	_Atomic(struct drnic_srq *) *srq_tab;
	uint32_t srq_tab_size;
	uint32_t srq_mask;
	uint32_t srq_next;         /* next SRQ number to try */
	struct drnic_xrcd *xrcds;  /* open XRC domains, under lock */

	struct verbs_engine_ref eng[DRNIC_MAX_ENGINES];
	unsigned int nb_engines;
	bool engines_attached;
};

/* ------------------------------------------------------------------------ */
/* Engine hooks                                                             */
/* ------------------------------------------------------------------------ */

/*
 * What the engine uses of a QP's attributes: modify_qp sends it this
 * snapshot (verbs_engine_ops.qp_modify) each time, before the new state is
 * published, and the engine applies it between two of its steps. Nothing
 * the engine reads of a QP's path is written in place by another thread,
 * and a change made in SQD (a new address vector) takes effect.
 */
struct verbs_qp_path {
	struct drnic_ah_attr ah;    /* destination GID, source GID index, TC, hop limit */
	uint8_t dmac[6];            /* resolved destination MAC */
	uint16_t udp_sport;
	uint16_t pkey_index;
	uint32_t mtu;               /* path MTU in bytes */
	uint32_t dest_qp_num;
	uint32_t access_flags;      /* DRNIC_ACCESS_REMOTE_* the responder allows */
	uint32_t sq_psn;            /* first PSN sent (taken on entering RTS) */
	uint32_t rq_psn;            /* first PSN expected (taken on entering RTR) */
	uint32_t qkey;              /* UD: the Q_Key datagrams must carry */
	uint8_t timeout;            /* 4.096 us * 2^timeout; 0: none */
	uint8_t retry_cnt;
	uint8_t rnr_retry;          /* 7: for ever */
	uint8_t min_rnr_timer;      /* what an RNR NAK asks for */
	uint8_t max_rd_atomic;      /* READ/atomics the requester may have out */
	uint8_t max_dest_rd_atomic; /* ... the responder takes */
	uint8_t en_sqd_async_notify;
};

/*
 * Installed once, before main(), by the engine library. All control-path
 * calls; each returns 0 or a negative errno.
 */
struct verbs_engine_ops {
	/* Give the device its engines: fill dev->eng[i] for i < nb_engines. */
	int (*dev_attach)(struct drnic_device *dev);
	/* Take the device off its engines; no engine touches it afterwards. */
	void (*dev_detach)(struct drnic_device *dev);
	/* Make the QP known to its engine (qp->engine). */
	int (*qp_attach)(struct drnic_qp *qp);
	/* Forget the QP; when this returns no engine touches it any more. */
	void (*qp_detach)(struct drnic_qp *qp);
	/* Give the QP's engine its new path; when this returns the engine
	 * uses it. */
	void (*qp_modify)(struct drnic_qp *qp, const struct verbs_qp_path *path);
	/* Attach (@p attach) UD QP @p qp to multicast group @p gid on its
	 * engine, or detach it: when this returns the engine's receive path
	 * delivers the group's datagrams to it, or no longer does. */
	int (*qp_mcast)(struct drnic_qp *qp, const union drnic_gid *gid, bool attach);
	/* Wait until every engine of the device has finished the step it was
	 * in: what it checked before (a key) it checks again afterwards. */
	void (*dev_fence)(struct drnic_device *dev);
	/* Inline mode: run the process's inline engines once; returns work done. */
	int (*progress)(void);
	/* drnicd: doorbell ring @p r joins engine @p idx of @p dev (@p add) or
	 * leaves it; when this returns the engine reads it, or never again. */
	int (*db_ring)(struct drnic_device *dev, unsigned int idx, struct rte_ring *r, bool add);
};

void verbs_set_engine_ops(const struct verbs_engine_ops *ops);
const struct verbs_engine_ops *verbs_engine_ops(void);

/*
 * Ring the QP's doorbell (any thread): queue the QP on its engine unless it is
 * already queued. The caller published its WQEs (release) before.
 *
 * Ordering (seq_cst exchange): pairs with the engine, which stores IDLE, then
 * fences, then reads prod again before it forgets the QP; so either the
 * engine sees the new WQEs or this exchange sees IDLE and queues the QP.
 */
static inline void
verbs_qp_doorbell_on(struct drnic_qp *qp, bool process_ring)
{
	if (atomic_exchange_explicit(&qp->sq.db, VERBS_DB_QUEUED, memory_order_seq_cst) ==
	    VERBS_DB_IDLE) {
		struct rte_ring *r = process_ring ? qp->db_ring : NULL;

		/* Never full: each has room for every QP of the engine. */
		(void)rte_ring_mp_enqueue(r != NULL ? r : qp->dev->eng[qp->engine].doorbell, qp);
	}
}

/* A post's doorbell: the process's own ring when it has one (drnicd). */
static inline void
verbs_qp_doorbell(struct drnic_qp *qp)
{
	verbs_qp_doorbell_on(qp, true);
}

/* The doorbell of the control path (modify_qp), which runs where the
 * device's owner runs: always the engine's own ring, never a ring an
 * attached process may have left half-written by dying. */
static inline void
verbs_qp_doorbell_ctl(struct drnic_qp *qp)
{
	verbs_qp_doorbell_on(qp, false);
}

/* Entry @p index of the port's P_Key table; 0 (no key) past its end. */
static inline uint16_t
verbs_pkey_entry(uint16_t index)
{
	return index < VERBS_PKEY_TBL_LEN ? VERBS_DEFAULT_PKEY : 0;
}

/* Look up a QP by number for an engine (acquire); NULL when none. */
static inline struct drnic_qp *
verbs_qp_lookup(struct drnic_device *dev, uint32_t qpn)
{
	struct drnic_qp *qp = atomic_load_explicit(&dev->qp_tab[qpn & dev->qp_mask],
						   memory_order_acquire);

	return qp != NULL && qp->qp_num == qpn ? qp : NULL;
}

/* Look up an XRC SRQ by number for an engine (acquire); NULL when none.
 * drnic_destroy_srq() clears its slot, then fences the engines. */
static inline struct drnic_srq *
verbs_srq_lookup(struct drnic_device *dev, uint32_t srqn)
{
	struct drnic_srq *srq = atomic_load_explicit(&dev->srq_tab[srqn & dev->srq_mask],
						     memory_order_acquire);

	return srq != NULL && srq->srq_num == srqn ? srq : NULL;
}

/* Current QP state (acquire). */
static inline enum drnic_qp_state
verbs_qp_state(const struct drnic_qp *qp)
{
	return (enum drnic_qp_state)atomic_load_explicit(&((struct drnic_qp *)qp)->state,
							 memory_order_acquire);
}

/*
 * Move a QP to ERR from an engine (compare-and-swap against a concurrent
 * modify). Returns true when this call made the change.
 */
bool verbs_qp_set_error(struct drnic_qp *qp);

/* Key checks (engine). Return 0 or the failure as a negative errno:
 * -ENOENT bad key, -EPERM access or PD, -ERANGE bounds. On success *va_out
 * is the host address. verbs_mr_check() takes a host address (a local
 * SGE's: posts translated it, verbs_sge_to_host()); verbs_mr_check_remote()
 * takes the address the peer names (in the MR's iova space) and gives the
 * host address the engine must use. */
int verbs_mr_check(struct drnic_device *dev, const struct drnic_pd *pd, uint32_t key,
		   uint64_t addr, uint64_t len, uint32_t access, uint8_t **va_out);
int verbs_mr_check_remote(struct drnic_device *dev, const struct drnic_pd *pd, uint32_t key,
			  uint64_t iova, uint64_t len, uint32_t access, uint8_t **va_out);

/*
 * Poster: SGEs name an MR's bytes by its iova; the engine reaches them by
 * host address. Rewrite each of @p n SGEs whose lkey is an MR with an iova
 * of its own to the host address (one outside its MR, or of a key not
 * registered, to 0, which no MR holds: the engine's check fails it). Only
 * once such an MR exists (dev->mr_iova_any). (mr.c)
 */
void verbs_sge_to_host(struct drnic_device *dev, struct drnic_sge *sge, uint32_t n);

static inline void
verbs_sges_fix(struct drnic_device *dev, struct drnic_sge *sge, uint32_t n)
{
	if (unlikely(dev != NULL && atomic_load_explicit(&dev->mr_iova_any, memory_order_relaxed)))
		verbs_sge_to_host(dev, sge, n);
}

/*
 * Is @p key still registered? The generation compare the engine makes to
 * re-validate a key it checked earlier before every later access (a WRITE's
 * MIDDLE/LAST packets, a READ answered from saved state, a requester's
 * SGEs): a table index and a compare. Key 0 is never live. Acquire: a live
 * key's slot fields (verbs_mr_check) are the registration's.
 * Deregistration clears the slot's key first, then fences the engines
 * (drnic_dereg_mr()), so a key that passes here in an engine step stays
 * valid until the step ends.
 */
#ifndef VERBS_MR_KEY_LIVE_STUB   /* unit tests of the engine answer themselves */
bool verbs_mw_key_live(const struct drnic_device *dev, uint32_t key);

static inline bool
verbs_mr_key_live(const struct drnic_device *dev, uint32_t key)
{
	uint32_t idx = key & dev->mr_idx_mask;

	/* A window's rkey (bit 31): the window still bound with it, to an MR
	 * still registered. */
	if (unlikely(key & VERBS_MW_KEY_BIT))
		return verbs_mw_key_live(dev, key);
	return idx != 0 && idx < dev->mr_tab_size &&
	       atomic_load_explicit(&((struct verbs_mr_slot *)&dev->mr_tab[idx])->key,
				    memory_order_acquire) == key;
}
#else
bool verbs_mr_key_live(const struct drnic_device *dev, uint32_t key);
#endif

/*
 * Remote access through @p key by a request arriving on @p qp, in PD @p pd
 * (the QP's; an XRC target's: the XRC SRQ's): an MR's rkey
 * (verbs_mr_check() with that PD), or a window's, bound now, of that PD, to
 * this QP when it is a type 2 window, with @p access among its rights and
 * [addr, addr + len) inside it, over an MR still registered.
 * 0 or -ENOENT / -EPERM / -ERANGE as verbs_mr_check(). (mw.c)
 */
int verbs_rkey_check(const struct drnic_qp *qp, const struct drnic_pd *pd, uint32_t key,
		     uint64_t addr, uint64_t len, uint32_t access, uint8_t **va_out);

/*
 * Engine: execute BIND_MW WQE @p w of @p qp (the rules of ibv_bind_mw(3)
 * and IBA 10.6.7). 0; -EINVAL when the bind breaks a rule (the WQE
 * completes with MW_BIND_ERR). (mw.c)
 */
int verbs_mw_bind(const struct drnic_qp *qp, const struct verbs_send_wqe *w);

/*
 * Engine: invalidate window rkey @p rkey for @p qp: by a LOCAL_INV of the
 * QP (@p remote false), or a SEND with Invalidate it received. Only a
 * bound type 2 window of the QP's PD is invalidated, with that exact key,
 * and remotely only through the QP it is bound to. 0; -EINVAL otherwise
 * (nothing changes). (mw.c)
 */
int verbs_mw_invalidate(const struct drnic_qp *qp, uint32_t rkey, bool remote);

/* @p qp is destroyed (off its engine): the type 2 windows bound to it are
 * invalidated, so a QP that gets its number later reaches none. (mw.c) */
void verbs_mw_qp_destroyed(const struct drnic_qp *qp);

/* Lay out the zeroed window table (dev->mw_tab_size slots; mw.c). */
void verbs_mw_table_setup(struct drnic_device *dev);

/* Generation @p uses of slot @p idx on @p bits bits (mr.c): a keyed
 * permutation, so a slot repeats a key only after 2^bits uses. */
uint32_t verbs_key_gen(const struct drnic_device *dev, uint32_t idx, uint32_t uses,
		       unsigned int bits);

/* Lay out a zeroed MR table of dev->mr_tab_size slots: key layout, a random
 * seed, every slot but 0 free (mr.c; the device at open). */
void verbs_mr_table_setup(struct drnic_device *dev);

/*
 * The destination MAC of address vector @p ah: the one it gives, or the
 * link's answer for its destination GID (waiting up to about 3 s; inline:
 * running the engines meanwhile). 0, or -EHOSTUNREACH. (device.c)
 */
int verbs_resolve_dmac(struct drnic_device *dev, const struct drnic_ah_attr *ah, uint8_t dmac[6]);

/* Raise a QP async event into its queue (engine or control path). */
void verbs_qp_event(struct drnic_qp *qp, enum drnic_event_type type);

/* Raise a device event (port up/down) into the device's queue and every
 * subscribed one (engine or control path; takes dev->async_lock). */
void verbs_device_event(struct drnic_device *dev, const struct drnic_async_event *ev);

/* lib/cq's hooks for QP events: a QP counts the events taken about it until
 * they are acknowledged (qp.c; installed at device open). */
extern const struct async_hooks verbs_async_hooks;

/* QP state machine (qp.c), exposed for unit tests and the engine. */
int verbs_qp_check_modify(enum drnic_qp_type type, enum drnic_qp_state cur,
			  enum drnic_qp_state next, int mask);
const char *verbs_qp_state_name(unsigned int state);

#ifdef __cplusplus
}
#endif

#endif /* VERBS_OBJECTS_H */
