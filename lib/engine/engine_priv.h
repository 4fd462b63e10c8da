/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ENGINE_PRIV_H
#define ENGINE_PRIV_H

/*
 * Engine internals: the lcore loop's objects and the per-QP transport state of
 * the requester, responder and completer. Private to lib/engine (and its unit
 * tests).
 *
 * Ownership: an engine is one thread (an EAL lcore, or in inline mode whoever
 * holds engine->running). Everything in struct engine and struct engine_qp is
 * touched by that thread only, except the rings (MP/SC) and the atomics
 * marked below.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "drnic_engine.h"
#include "drnic_wire.h"
#include "timer.h"
#include "verbs_objects.h"

extern int engine_logtype;
#define ENGINE_LOG(level, eng, fmt, ...)                                        \
	rte_log(RTE_LOG_##level, engine_logtype, "engine#%u: " fmt "\n", (eng)->id, ##__VA_ARGS__)
#define ENGINE_QP_LOG(level, eq, fmt, ...)                                      \
	rte_log(RTE_LOG_##level, engine_logtype, "%s qp#%u: " fmt "\n",         \
		(eq)->qp->dev->cfg.name, (eq)->qp->qp_num, ##__VA_ARGS__)

#define ENGINE_BURST 32
/* Idle steps an lcore engine spins through before it starts to pause. */
#define ENGINE_SPIN_HOT 256
/* Receive bursts per port per loop while they come full: a loop may queue
 * up to ENGINE_QP_BUDGET packets per active QP, and receiving one burst
 * per loop would let the link's queue (and the round trip) grow to its
 * whole depth. */
#define ENGINE_RX_BURSTS 8
#define ENGINE_MAX_PORTS 16
/* A READ response this many PSNs past a missing one makes the requester
 * ask again for the rest of the READ from the missing PSN (reordering by
 * fewer packets is waited out). */
#define ENGINE_READ_GAP 24
/* Most PSNs a requester keeps unacknowledged (well inside 2^23): the
 * largest congestion window. */
#define ENGINE_MAX_INFLIGHT_PSN 4096
/* Smallest congestion window (packets): after a timeout the requester
 * restarts from here and grows back by the packets acknowledged. */
#define ENGINE_MIN_CWND 16
/* Early retransmit (as adaptive retransmission in ConnectX NICs): when the
 * requester hears nothing for srtt + 4 rttvar (at least 2 srtt,
 * ENGINE_PROBE_MIN_NS and an eighth of the QP's timeout), well before the
 * timeout, it goes back without using up retry_cnt. The QP's own timeout
 * still applies exactly. */
#define ENGINE_PROBE_MIN_NS (50 * 1000)
/* A long message asks for an ACK at least every this many packets, so the
 * requester sees progress (and its retransmit timer restarts). */
#define ENGINE_ACKREQ_EVERY 64
/* Timeouts in a row, with the peer answering, that keep retry_cnt whole. */
#define ENGINE_ALIVE_RETRIES 32
/* Full receive bursts in a row that hold retransmit timeouts back. */
#define ENGINE_BACKLOG_LOOPS 64
/* Longest an ACK waits for a frame of data to leave with (see
 * engine_port::hold_until_ns): well inside any retransmit timeout, longer
 * than an application takes to answer what it just received. */
#define ENGINE_ACK_HOLD_NS (10 * 1000)
/*
 * Duplicate READ/atomic replays (what a peer can make the responder send
 * again by asking again): a QP earns credit, in response packets, of twice
 * each new READ's response (ENGINE_REPLAY_PER_REQ times) and one packet per
 * ENGINE_REPLAY_REFILL_NS, up to ENGINE_REPLAY_CREDIT_MAX; it starts with
 * ENGINE_REPLAY_CREDIT_INIT. A duplicate is answered while the credit is
 * positive and charged what it makes the responder send; the others are
 * counted (replays_limited) and left to the requester's next try. A lossy
 * link replays a few percent of what it carries; a peer asking for one
 * 64 KiB READ 200 times (13 MB of answers for 15 KB of requests) gets a
 * few answers.
 */
#define ENGINE_REPLAY_PER_REQ 2
#define ENGINE_REPLAY_CREDIT_INIT 64
#define ENGINE_REPLAY_CREDIT_MAX (1 << 20)
#define ENGINE_REPLAY_REFILL_NS (100 * 1000)
/*
 * A PSN-sequence NAK the same as the last one sent (a peer that keeps
 * sending out of sequence) is sent from a bucket of ENGINE_NAK_BURST that
 * refills one per ENGINE_NAK_REFILL_NS; the others are counted
 * (naks_limited). A new NAK (the expected PSN moved) always goes. A
 * requester that lost its go-back again needs the same NAK once per round
 * trip: with a refill of 100 us, a long WRITE over a lossy af_packet link
 * got none for a few rounds and ended RETRY_EXC_ERR (ib_write_lat -a).
 */
#define ENGINE_NAK_BURST 16
#define ENGINE_NAK_REFILL_NS (10 * 1000)
/* Packets one QP may produce per visit, for fairness. */
#define ENGINE_QP_BUDGET 64
/*
 * A QP in RTS that goes idle stays on the active list for up to
 * ENGINE_LINGER_STEPS steps, ENGINE_LINGER_MAX such QPs per engine: a
 * ping-pong's next post is then seen in the QP's send queue (one cache
 * line from the poster) instead of through the doorbell ring (the ring's
 * lines, then the QP's). Thousands of QPs do not linger: each would be
 * walked every step.
 */
#define ENGINE_LINGER_STEPS 4096
#define ENGINE_LINGER_MAX 8

/* ------------------------------------------------------------------------ */
/* Clock                                                                    */
/* ------------------------------------------------------------------------ */

/* Time source of an engine's timers; tests install a fake one. */
struct engine_clock {
	uint64_t (*now_ns)(void *arg);
	void *arg;
};

/* ------------------------------------------------------------------------ */
/* Per-QP transport state                                                   */
/* ------------------------------------------------------------------------ */

/* Requester states (one per QP send side). */
enum req_state {
	REQ_IDLE = 0,        /* nothing to send */
	REQ_SENDING,         /* packets of sq[req.idx] go out */
	REQ_WAIT_FENCE,      /* fenced WQE waits for earlier READ/atomics */
	REQ_WAIT_RD_ATOMIC,  /* max_rd_atomic READ/atomics outstanding */
	REQ_WAIT_WINDOW,     /* too many unacknowledged PSNs */
	REQ_WAIT_RNR,        /* RNR NAK: wait for the timer, then resend */
	REQ_DRAINED,         /* SQD: no new WQE starts */
	REQ_STOPPED,         /* a WQE failed locally or the QP is in error */
	REQ_STATE_MAX,
};

/* Completer states (completer.c runs a response through them). Between
 * responses the completer is in GET_ACK, or in ERROR once a WQE failed. */
enum comp_state {
	COMP_GET_ACK = 0,    /* waiting for a response; takes one in RTS/SQD/SQE */
	COMP_CHECK_PSN,      /* a PSN sent and not acknowledged (else dup/ghost) */
	COMP_CHECK_ACK,      /* which response: ACK, NAK, RNR, READ, atomic ACK */
	COMP_UPDATE,         /* the acknowledged PSN moves */
	COMP_COMPLETE,       /* WQEs retire in order: CQEs */
	COMP_READ,           /* a READ response lands in its WQE's SGEs */
	COMP_ATOMIC,         /* an atomic's original value lands */
	COMP_RETRY,          /* PSN-sequence NAK: the requester goes back */
	COMP_RNR,            /* RNR NAK: the requester waits, then goes back */
	COMP_FAIL,           /* a NAK or a local error fails a WQE */
	COMP_DUPLICATE,      /* answers what is acknowledged already */
	COMP_DROP,           /* not believed or not understood: counted */
	COMP_ERROR,          /* a WQE failed: the QP is in ERR; nothing is taken */
	COMP_STATE_MAX,
};

/* Responder states (where the current inbound message is). */
enum resp_state {
	RESP_IDLE = 0,       /* between messages */
	RESP_IN_SEND,        /* a multi-packet SEND is arriving */
	RESP_IN_WRITE,       /* a multi-packet WRITE is arriving */
	RESP_ERROR,          /* QP in error: drop everything */
	RESP_STATE_MAX,
};

/* A READ or atomic the responder executed (its resource): what it takes to
 * answer it again when the request comes back. */
struct resp_rd {
	uint8_t atomic;      /* 0: READ, 1: atomic */
	uint32_t psn;        /* first PSN of the request */
	uint32_t npkts;      /* response packets */
	uint64_t va;
	uint32_t len;
	uint32_t rkey;       /* READ: checked again before every packet */
	uint64_t orig;       /* atomic: original value */
};

/* A response to send: packets from @next on of resource @res. */
struct resp_tx {
	uint32_t res;        /* resource number (rd_tail when it was made) */
	uint32_t psn;        /* its PSN, to tell a reused slot */
	uint32_t start;      /* first packet sent (a FIRST or ONLY) */
	uint32_t next;       /* next packet */
	bool is_new;         /* answers a new request (counts in rd_pending) */
};

/* The requester's state (requester.c): what it sends next. */
struct engine_req {
	enum req_state state;
	uint32_t idx;        /* next WQE to start or continue */
	uint32_t off;        /* bytes of sq[idx] sent */
	uint32_t sge;        /* SGE cursor of sq[idx] */
	uint32_t sge_off;
	uint32_t npsn;           /* next PSN to send */
	/* PSN after the highest ever sent (npsn goes back on a go-back, this
	 * does not): a response for a PSN from here on answers nothing sent. */
	uint32_t psn_hi;
	uint32_t rd_outstanding; /* READ/atomic WQEs sent, not retired */
};

/*
 * Recovery (recovery.c): the retransmit and early-retransmit timers, the
 * retry and RNR budgets, the congestion window and the round-trip
 * estimate, in one place. The requester times its packets and arms the
 * timer through rec_*(); the completer reports losses, progress and
 * samples through them, and counts the retries of its timeouts.
 */
struct engine_rec {
	uint64_t rnr_deadline_ns;
	uint8_t rnr_retry_left;
	uint8_t retry_left;      /* transport retries left (retry_cnt) */
	/* Retransmit timer: 0 when nothing is outstanding (or timeout 0). */
	uint64_t retry_deadline_ns;
	/* The peer answered something since the last timeout (it is alive,
	 * only slow or busy replaying); such timeouts do not use up
	 * retry_cnt, ENGINE_ALIVE_RETRIES of them in a row at most. */
	bool peer_heard;
	uint8_t alive_retries;
	/* Congestion window: PSNs the requester may have unacknowledged. It
	 * shrinks on loss (half on a NAK or an implied NAK, ENGINE_MIN_CWND on
	 * a timeout; once per round: losses of PSNs below recover_psn belong
	 * to a round already answered) and grows by the packets acknowledged
	 * (doubling below ssthresh, by one per window above). */
	uint32_t cwnd;
	uint32_t ssthresh;
	uint32_t cwnd_acc;
	uint32_t recover_psn;
	bool in_recovery;
	/* Round-trip estimate from one AckReq packet at a time (Karn: none
	 * across a go-back). */
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	uint64_t rtt_sent_ns;
	uint32_t rtt_psn;
	bool rtt_pending;
	/* Early retransmit deadline (0: none armed). */
	uint64_t probe_deadline_ns;
	/* The last go-back for a PSN-sequence NAK: a second NAK for the same
	 * PSN within one round trip answers packets sent before it. */
	uint32_t nak_psn;
	uint64_t nak_ns;
};

/* The completer's state (completer.c): what is retired and acknowledged. */
struct engine_comp {
	enum comp_state state;
	uint32_t idx;       /* oldest WQE not retired */
	uint32_t acked_psn;      /* highest PSN acknowledged (valid if any_acked) */
	bool any_acked;
	uint32_t reread_psn;     /* a re-read from here was sent (if reread_sent) */
	bool reread_sent;
};

/*
 * UD: what the responder has taken from one sender (source IP and QP, hashed
 * into ENGINE_UD_SRC slots; a collision forgets the older sender): the
 * highest PSN and which of the 64 below it arrived. Each datagram has a PSN
 * of its own, so one seen before is a copy the network made: dropped, so
 * that a datagram is delivered at most once.
 */
#define ENGINE_UD_SRC 64
struct resp_ud_src {
	uint32_t ip;             /* hash of the source IP */
	uint32_t sqpn;
	uint32_t top;            /* highest PSN taken */
	bool used;
	uint64_t seen;           /* bit i: PSN top - i taken */
};

/* The responder's state (responder.c): what it expects and owes. */
struct engine_resp {
	enum resp_state state;
	uint32_t epsn;           /* expected PSN */
	uint32_t msn;
	uint32_t rq_idx;         /* receive WQE being filled (local consumer) */
	uint32_t recv_off;       /* bytes written into it */
	bool recv_taken;         /* a receive WQE holds the current message */
	bool last_wqe_raised;    /* SRQ: QP_LAST_WQE_REACHED raised (in ERR) */
	bool uc_drop;            /* UC: dropping until a FIRST or ONLY */
	uint64_t wr_va;          /* WRITE: next address */
	uint32_t wr_rkey;        /* WRITE: its rkey, checked again before every packet */
	uint32_t wr_resid;       /* WRITE: bytes still expected */
	uint32_t wr_len;         /* WRITE: DMA length */
	bool ack_pending;
	uint8_t ack_syn;         /* syndrome of the pending ACK/NAK */
	uint32_t ack_psn;
	bool nak_seq_sent;       /* one PSN-sequence NAK per gap and round */
	/* Highest out-of-sequence PSN seen since that NAK: a lower one means
	 * the requester went back (a new round), which gets its own NAK. */
	uint32_t oos_psn;
	/* READ/atomic resources: the last rd_mask + 1 executed (twice the
	 * device's max_rd_atomic, a power of two). A requester keeps at most
	 * max_rd_atomic <= max_dest_rd_atomic of them unretired, so every
	 * duplicate it sends is answered from here: READs from memory,
	 * atomics from their saved result (never executed twice). Only new
	 * requests take a resource; duplicates never push one out. */
	struct resp_rd *rd;
	uint32_t rd_mask;
	uint32_t rd_tail;        /* resources made */
	uint32_t rd_pending;     /* new requests not fully answered */
	/* Responses to send, in order (new ones and replays). */
	struct resp_tx *rtx;
	uint32_t rtx_mask;
	uint32_t rtx_head;
	uint32_t rtx_tail;
	/* A request the QP could not accept moved it to ERR: the responses
	 * owed for the requests before it still go, then the NAK. */
	bool drain_rtx;
	/* Replay credit (ENGINE_REPLAY_*), in response packets, and when it
	 * was last refilled. */
	int64_t replay_credit;
	uint64_t replay_ns;
	/* Repeated-NAK bucket (ENGINE_NAK_*): tokens, the last refill and
	 * the last NAK sent. */
	uint32_t nak_tokens;
	uint64_t nak_refill_ns;
	uint8_t nak_last_syn;
	uint32_t nak_last_psn;
	bool nak_any;
	/* A QP on an SRQ: the WQE taken from it for the current message (a
	 * copy: the SRQ's slot is free as soon as it is taken), with room
	 * for the SRQ's max_sge SGEs; NULL for a QP with its own queue. */
	struct verbs_recv_wqe *srq_wqe;
	/* UD: the senders it has heard (ENGINE_UD_SRC); NULL for RC, UC. */
	struct resp_ud_src *ud_src;
	/* An XRC target: the XRC SRQ the request being checked names (its
	 * XRCETH), set by resp_chk_xrc() for every request before anything
	 * reads it; while recv_taken, the SRQ that WQE came from. */
	struct drnic_srq *xrc_srq;
	uint32_t xrc_srqn;       /* its number: is it still there? (resp_flush) */
};

struct engine;
struct engine_port;

struct engine_qp {
	/* The lines a turn or a received frame reads first: the pointers,
	 * list entries and flags, then the frame header bytes (the peer
	 * check reads them). The counters and the fields template come
	 * last. */
	struct drnic_qp *qp;
	struct engine *eng;
	struct engine_port *port;
	TAILQ_ENTRY(engine_qp) all_next;
	TAILQ_ENTRY(engine_qp) active_next;
	/* Armed while the QP is off the active list and waits for a
	 * retransmit timeout or an RNR wait to end. */
	struct engine_timer tmr;
	bool on_active;
	bool req_init;
	bool resp_init;
	bool uc;                 /* a UC QP (qp->type, kept in this hot line) */
	/* Idle steps it has stayed on the active list (0: not lingering;
	 * at most ENGINE_LINGER_STEPS). */
	uint16_t linger;
	bool ud;                 /* a UD QP */
	bool xrc;                /* an XRC_SEND or XRC_RECV QP: XRC's opcodes */
	bool sqd_notified;       /* SQ_DRAINED raised for the current SQD */
	/* Its send queue's ring (qp->sq's, fixed while this state lives:
	 * engine_qp_bind()), so a WQE's address takes no load of the verbs
	 * QP, which a walk over cold QPs would wait for. (Packed into the
	 * flags' holes: the lines after them stay where they were.) */
	uint16_t sq_stride;
	uint32_t sq_mask;
	uint8_t *sq_buf;

	/* The header bytes of its frames, from its path (the peer check
	 * reads them; a UD QP's sends take their destination from their AH,
	 * through tmpl). */
	struct drnic_wire_tmpl wtmpl;
	/* What the engine uses of the QP's attributes: modify_qp's last
	 * snapshot (ENGINE_CTRL_QP_MODIFY), the engine's own copy. */
	struct verbs_qp_path path;

	struct engine_req req;		/* requester.c */
	struct engine_rec rec;		/* recovery.c */
	struct engine_comp comp;	/* completer.c */
	struct engine_resp resp;	/* responder.c */

	struct drnic_qp_stats stats;  /* written by the engine only */

	/* Cold: the frame template as fields (addresses, ports, dest QPN),
	 * which wtmpl is made from and UD sends start from. */
	struct drnic_wire_pkt tmpl;
};

/*
 * Where a turn's fetch of an engine QP stops: the data path reads the lines
 * before the counters and the counters' first line, not the fields
 * template after them.
 */
#define ENGINE_QP_HOT_BYTES (offsetof(struct engine_qp, stats) + RTE_CACHE_LINE_SIZE)

/* @p eq becomes the engine state of verbs QP @p qp, whose send ring is set
 * up (it stays as it is until the state is freed). */
static inline void
engine_qp_bind(struct engine_qp *eq, struct drnic_qp *qp)
{
	/* The largest send WQE (verbs_wq_alloc()) fits sq_stride. */
	RTE_BUILD_BUG_ON(sizeof(struct verbs_send_wqe) + VERBS_MAX_INLINE +
			 VERBS_MAX_SGE * sizeof(struct drnic_sge) + RTE_CACHE_LINE_SIZE > UINT16_MAX);
	eq->qp = qp;
	eq->sq_buf = qp->sq.buf;
	eq->sq_mask = qp->sq.mask;
	eq->sq_stride = (uint16_t)qp->sq.stride;
}

/* ------------------------------------------------------------------------ */
/* Engine                                                                   */
/* ------------------------------------------------------------------------ */

TAILQ_HEAD(engine_qp_list, engine_qp);

/* One (device, link queue) an engine polls. */
struct engine_port {
	/* Its active QPs (engine_qp::port is this port): when the port is
	 * full none of them can send, and none is walked. */
	struct engine_qp_list active;
	struct drnic_device *dev;
	struct drnic_link *link;
	uint16_t queue;
	int8_t up;                   /* link state last seen (queue 0 reports changes) */
	uint16_t tx_n;
	/* Staged frames include more than ACKs/NAKs. When they do not and
	 * the link asks for it (drnic_link::tx_hold_acks), the flush holds
	 * them up to ENGINE_ACK_HOLD_NS (until hold_until_ns),
	 * so the reply the application posts meanwhile leaves in the same
	 * burst: on a port where each burst is a system call (af_packet)
	 * that halves the calls of a ping-pong, and the peer, spinning for
	 * its send completion, finds the reply in the same receive. */
	bool tx_data;
	uint64_t hold_until_ns;
	/* Staged frames whose ICRC the build left (DRNIC_WIRE_BUILD_DEFER_ICRC),
	 * marked in tx_icrc[], tx_icrc_n of them; the flush fills them all at
	 * once, before anything else, so none is marked after a flush. */
	uint16_t tx_icrc_n;
	bool tx_icrc[ENGINE_BURST * 4];
	struct rte_mbuf *tx[ENGINE_BURST * 4];
};

enum engine_ctrl_type {
	ENGINE_CTRL_MCAST,    /* struct engine_mcast_req: join or leave a group */
	ENGINE_CTRL_PORT_ADD,
	ENGINE_CTRL_PORT_DEL,
	ENGINE_CTRL_QP_ADD,
	ENGINE_CTRL_QP_DEL,
	ENGINE_CTRL_QP_MODIFY, /* struct engine_qp_modify: the QP's new path */
	ENGINE_CTRL_FENCE,    /* nothing: answered between two steps */
	ENGINE_CTRL_DB_RING_ADD, /* struct rte_ring: one more doorbell ring */
	ENGINE_CTRL_DB_RING_DEL, /* struct rte_ring: the engine forgets it */
};

/* Doorbell rings one engine takes besides its own: drnicd gives each
 * attached process one per engine, so that a process killed in the middle
 * of an enqueue stalls only its own ring (an MP ring's later producers
 * wait for the earlier ones' tail). */
#define ENGINE_MAX_DB_RINGS 256

/* ENGINE_CTRL_QP_MODIFY's argument. */
struct engine_qp_modify {
	struct engine_qp *eq;
	const struct verbs_qp_path *path;
};

/* One UD QP attached to a multicast group (the engine's own table: what
 * its receive path delivers a group's datagrams to). The QP cannot be
 * destroyed while attached; its engine state is qp->eng_priv, NULL while
 * the QP is reset. */
struct engine_mcast {
	const struct drnic_device *dev;
	uint8_t gid[16];
	struct drnic_qp *qp;
};

/* Attachments one engine holds (for all its devices). */
#define ENGINE_MAX_MCAST 1024

/* ENGINE_CTRL_MCAST's argument. */
struct engine_mcast_req {
	struct drnic_qp *qp;
	const union drnic_gid *gid;
	bool attach;
};

/* A control-path request to an engine; the caller waits on done. */
struct engine_ctrl {
	enum engine_ctrl_type type;
	void *arg;
	uint16_t queue;
	int rc;
	atomic_int done;
};

/* A CQ whose event check waits for the end of the step. */
struct engine_notify {
	struct drnic_cq *cq;
	bool fire;                   /* a solicited or failed completion */
};

/* CQs one step may leave their event checks to its end (then at once). */
#define ENGINE_MAX_NOTIFY 8

struct engine {
	unsigned int id;
	unsigned int lcore;          /* RTE_MAX_LCORE for inline engines */
	bool inline_mode;
	struct rte_ring *doorbell;   /* MP/SC: struct drnic_qp * */
	struct rte_ring *ctrl;       /* MP/SC: struct engine_ctrl * */
	/* Attached processes' doorbell rings (engine thread; set by
	 * ENGINE_CTRL_DB_RING_*). */
	unsigned int nb_db_rings;
	struct rte_ring *db_rings[ENGINE_MAX_DB_RINGS];
	struct rte_mempool *pool;
	struct engine_clock clock;
	/* The step's time (engine_step_ns()): read at the step's first need
	 * of it and kept to its end; a clock read costs about 10 ns here. */
	bool in_step;
	bool step_ns_valid;
	uint64_t step_ns;
	/* Inline engines: held by the thread running a step (try-lock). */
	atomic_flag running;
	atomic_bool stop;
	unsigned int refs;           /* ports attached (control path, under lock) */
	unsigned int nb_qp;
	unsigned int nb_linger;      /* QPs lingering on the active list */

	struct engine_port port[ENGINE_MAX_PORTS];
	unsigned int nb_ports;
	TAILQ_HEAD(, engine_qp) all;
	struct engine_wheel wheel;   /* QPs waiting for a deadline */
	/* The last receive filled a burst: frames wait in our own queues, so
	 * an ACK may be among them; retransmit timeouts wait for the engine
	 * to catch up (an engine starved of CPU must not mistake its own
	 * backlog for loss). Bounded: after ENGINE_BACKLOG_LOOPS full
	 * receives in a row, timeouts run anyway. */
	bool rx_backlog;
	unsigned int rx_backlog_loops;
	uint64_t link_check_ns;      /* next look at the links' state */
	uint64_t last_tsc;           /* end of the last step (cycle accounting) */
	bool tsc_stale;              /* a yield or a nap since last_tsc: idle time */
	/* Transmit mbufs taken from the pool ENGINE_BURST at a time (one
	 * mempool call instead of one per frame); engine_pkt_alloc() hands
	 * them out from the top. Returned to the pool when the engine goes. */
	unsigned int mcache_n;
	struct rte_mbuf *mcache[ENGINE_BURST];

	struct drnic_engine_stats stats;
	TAILQ_ENTRY(engine) next;
	/* CQs given completions since the last engine_cq_notify(): their
	 * event checks wait for the end of the step (one fence per CQ). */
	unsigned int nb_notify;
	struct engine_notify notify[ENGINE_MAX_NOTIFY];
	/* Multicast attachments (engine thread; set by ENGINE_CTRL_MCAST). */
	unsigned int nb_mcast;
	struct engine_mcast mcast[ENGINE_MAX_MCAST];
};

/* engine.c: the loop, the clock, the inline engines */
int engine_run_once(struct engine *eng);
int engine_main(void *arg);
int engine_progress_all(void);
uint64_t engine_now_ns(struct engine *eng);
void engine_clock_init(struct engine_clock *clock);

/*
 * The time for the machines' deadlines, round trips and rate limits: one
 * clock read a step at most (a step reads it at its first need and keeps
 * it until it ends), so it may be behind by what the step has done since;
 * every such use takes a deadline or an interval a step long as close
 * enough. Outside a step (control calls, the tests) each call reads.
 */
static inline uint64_t
engine_step_ns(struct engine *eng)
{
	if (eng->step_ns_valid)
		return eng->step_ns;
	eng->step_ns = engine_now_ns(eng);
	eng->step_ns_valid = eng->in_step;
	return eng->step_ns;
}

/* A step begins and ends (engine_run_once()): the span of its clock. */
static inline void
engine_step_begin(struct engine *eng)
{
	eng->in_step = true;
}

static inline void
engine_step_end(struct engine *eng)
{
	eng->in_step = false;
	eng->step_ns_valid = false;
}

int engine_inline_add(struct engine *eng);
void engine_inline_del(struct engine *eng);

/* engine_tx.c: transmit staging */
struct rte_mbuf *engine_pkt_alloc(struct engine *eng);
void engine_port_tx(struct engine_port *p, struct rte_mbuf *m, bool icrc_left);
int engine_port_flush(struct engine *eng, struct engine_port *p);
void engine_qp_build_template(struct engine_qp *eq);
void engine_ah_template(const struct engine_qp *eq, const struct drnic_ah *ah,
			struct drnic_wire_pkt *p);
int engine_qp_tx(struct engine_qp *eq, const struct drnic_wire_pkt *pkt);

/* engine_sched.c: the active list, doorbells, QP steps */
void engine_qp_activate(struct engine_qp *eq);
int engine_push_cqe(struct engine_qp *eq, struct drnic_cq *cq, const struct drnic_wc *wc,
		    bool solicited);
void engine_qp_error(struct engine_qp *eq);
unsigned int engine_doorbells(struct engine *eng, unsigned int max);
void engine_cq_notify(struct engine *eng);
bool engine_doorbells_waiting(const struct engine *eng);
unsigned int engine_timers_run(struct engine *eng);
int engine_port_step(struct engine *eng, struct engine_port *p);

/* engine_rx.c: receive */
int engine_rx(struct engine *eng);

/* engine_ctl.c: control messages, engine objects, lib/verbs hooks */
void engine_ctrl_handle(struct engine *eng, struct engine_ctrl *c);

/* requester.c */
int req_step(struct engine_qp *eq, int budget);
void req_rewind(struct engine_qp *eq, uint32_t idx);
void req_rewind_psn(struct engine_qp *eq, uint32_t idx, uint32_t psn);
void req_skip_acked(struct engine_qp *eq, uint32_t psn);
extern const char *const req_state_names[REQ_STATE_MAX];

/* recovery.c */
void rec_setup(struct engine_qp *eq);
void rec_timer_arm(struct engine_qp *eq);
void rec_timer_arm_at(struct engine_qp *eq, uint64_t now);
void rec_probe_arm(struct engine_qp *eq, uint64_t now);
void rec_loss(struct engine_qp *eq, bool timeout);
bool rec_nak_fresh(struct engine_qp *eq, uint32_t psn);
void rec_timeout(struct engine_qp *eq);
void rec_probe(struct engine_qp *eq);

/* completer.c */
void comp_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt);
int comp_retire(struct engine_qp *eq);
int comp_flush(struct engine_qp *eq);
void comp_setup(struct engine_qp *eq);
void comp_go_back(struct engine_qp *eq);
void comp_fail_oldest(struct engine_qp *eq, enum drnic_wc_status status);
void comp_unanswered_sent(struct engine_qp *eq, uint32_t psn);
extern const char *const comp_state_names[COMP_STATE_MAX];

/* responder.c */
void resp_setup(struct engine_qp *eq, uint32_t epsn);
void resp_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt);
void resp_ud_rx(struct engine_qp *eq, struct rte_mbuf *m, const struct drnic_wire_pkt *pkt);
int resp_step(struct engine_qp *eq, int budget);
int resp_flush(struct engine_qp *eq);
int resp_send_ack(struct engine_qp *eq);
extern const char *const resp_state_names[RESP_STATE_MAX];

/*
 * Hot-path helpers of more than one engine file (the step, receive, the
 * loop's idle check), inline as they were in one file.
 */

/* The QP stops lingering (it worked, or leaves the active list). */
static inline void
engine_qp_unlinger(struct engine_qp *eq)
{
	if (eq->linger > 0) {
		eq->linger = 0;
		eq->eng->nb_linger--;
	}
}

/* Frames port @p p can still stage (engine_tx.c's staging; inline: the
 * step asks before each QP's turn, the machines before each frame). */
static inline uint16_t
engine_port_room(const struct engine_port *p)
{
	return (uint16_t)(RTE_DIM(p->tx) - p->tx_n);
}

/* Catch up with state changes made by modify_qp (engine thread). */
static inline void
engine_qp_sync(struct engine_qp *eq)
{
	struct drnic_qp *qp = eq->qp;
	enum drnic_qp_state st;

	/* Once both sides are set up there is nothing left to do (they are
	 * never set up again). */
	if (likely(eq->req_init && eq->resp_init))
		return;
	st = verbs_qp_state(qp);
	if (st == DRNIC_QPS_ERR || st == DRNIC_QPS_RESET || st == DRNIC_QPS_INIT)
		return;
	if (!eq->resp_init) {
		resp_setup(eq, eq->path.rq_psn);
		engine_qp_build_template(eq);
		eq->resp_init = true;
	}
	if (!eq->req_init && st != DRNIC_QPS_RTR) {
		eq->req.npsn = eq->path.sq_psn;
		eq->req.psn_hi = eq->req.npsn;
		eq->req.state = REQ_IDLE;
		comp_setup(eq);
		rec_setup(eq);
		eq->req_init = true;
	}
}

/* Is there anything for the QP to do without a new event? */
static inline bool
engine_qp_busy(struct engine_qp *eq)
{
	struct drnic_qp *qp = eq->qp;
	enum drnic_qp_state st = verbs_qp_state(qp);

	if (st == DRNIC_QPS_ERR)
		return eq->resp.ack_pending ||
		       (eq->resp.drain_rtx && eq->resp.rtx_head != eq->resp.rtx_tail) ||
		       verbs_wq_posted(&qp->sq, eq->comp.idx) != 0 ||
		       verbs_wq_posted(&qp->rq, eq->resp.rq_idx) != 0 ||
		       /* on an SRQ: QP_LAST_WQE_REACHED still to raise */
		       (qp->srq != NULL && !eq->resp.last_wqe_raised);
	if (eq->resp.ack_pending || eq->resp.rtx_head != eq->resp.rtx_tail)
		return true;
	/* Moved to SQD while on the active list (its doorbell found the flag
	 * set), drained and not told yet: its next step raises SQ_DRAINED. */
	if (st == DRNIC_QPS_SQD && !eq->sqd_notified && eq->comp.idx == eq->req.idx &&
	    eq->req.off == 0)
		return true;
	if (!eq->req_init || st != DRNIC_QPS_RTS)
		return false;
	/* A QP that waits for an ACK, a retransmit timeout or the end of an
	 * RNR wait is not busy: the timer wheel or the ACK wakes it. */
	switch (eq->req.state) {
	case REQ_SENDING:
		return true;
	case REQ_IDLE:
		return atomic_load_explicit(&qp->sq.prod, memory_order_acquire) != eq->req.idx;
	default:
		return false;  /* woken by the completer */
	}
}

/* The next deadline an idle QP waits for, or 0. */
static inline uint64_t
engine_qp_deadline(const struct engine_qp *eq)
{
	uint64_t d = eq->rec.retry_deadline_ns;

	if (eq->rec.probe_deadline_ns != 0 && (d == 0 || eq->rec.probe_deadline_ns < d))
		d = eq->rec.probe_deadline_ns;

	if (eq->req.state == REQ_WAIT_RNR && (d == 0 || eq->rec.rnr_deadline_ns < d))
		d = eq->rec.rnr_deadline_ns;
	return d;
}

/* Count a dropped packet on the QP and its engine. */
static inline void
engine_qp_drop(struct engine_qp *eq, enum drnic_engine_drop why)
{
	eq->stats.drops[why]++;
	eq->eng->stats.drops[why]++;
}

/*
 * A frame whose ICRC the parser deferred (DRNIC_WIRE_PARSE_DEFER_ICRC: an
 * RDMA WRITE continuation, copied and verified in one pass when it is the
 * one expected) is verified here before anything else acts on it: a drop
 * for another reason, an answer, a state change. False: the ICRC is bad,
 * the frame is counted as a bad_icrc wire drop and must be dropped. Each
 * path verifies at most once.
 */
static inline bool
engine_pkt_verify(struct engine *eng, const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt)
{
	if (likely(!pkt->icrc_deferred) || drnic_wire_icrc_check(m, pkt) == 0)
		return true;
	eng->stats.wire_drops[DRNIC_WIRE_DROP_BAD_ICRC]++;
	return false;
}

/* Helpers shared by the three machines. */
static inline struct verbs_send_wqe *
engine_sq_wqe(const struct engine_qp *eq, uint32_t idx)
{
	return verbs_ring_slot(eq->sq_buf, eq->sq_mask, eq->sq_stride, idx);
}

/* Fetch the first two lines of send WQE @p idx: its header and its first
 * SGE or inline bytes (what a 64-byte message's send reads). */
static inline void
engine_sq_prefetch_head(const struct engine_qp *eq, uint32_t idx)
{
	const uint8_t *w = (const uint8_t *)engine_sq_wqe(eq, idx);

	rte_prefetch0(w);
	rte_prefetch0(w + RTE_CACHE_LINE_SIZE);
}

static inline struct verbs_recv_wqe *
engine_rq_wqe(const struct engine_qp *eq, uint32_t idx)
{
	return verbs_wq_slot(&eq->qp->rq, idx);
}

/* Packets a message of @p len bytes takes at path MTU @p mtu (at least 1). */
static inline uint32_t
engine_npkts(uint32_t len, uint32_t mtu)
{
	if (len == 0)
		return 1;
	/* Path MTUs are powers of two: a shift, not a divide (a divide was
	 * a visible part of starting each 64 B WRITE). In 64 bits: a length
	 * near 2^32 must not wrap to a few packets. */
	if (likely(rte_is_power_of_2(mtu)))
		return (uint32_t)(((uint64_t)len + mtu - 1) >> rte_bsf32(mtu));
	return (uint32_t)(((uint64_t)len + mtu - 1) / mtu);
}

static inline bool
engine_wqe_is_rd_atomic(const struct verbs_send_wqe *w)
{
	return (verbs_wr_info(w->opcode)->flags & VERBS_WR_RD_ATOMIC) != 0;
}

/* A local operation (BIND_MW, LOCAL_INV): executed when the requester
 * reaches it, no packet; its PSN range is empty (last = first - 1), so no
 * response ever names it, and it retires in order as WQE_DONE. */
static inline bool
engine_wqe_is_local(const struct verbs_send_wqe *w)
{
	return (verbs_wr_info(w->opcode)->flags & VERBS_WR_LOCAL) != 0;
}

/*
 * Copy @p len bytes to message offset @p off of the buffers @p sge[0 ..
 * nsge - 1] (a receive WQE's, or a READ's local SGEs): from frame @p m at
 * @p moff, or from memory @p src + @p moff when @p m is NULL. The caller
 * checked the keys of the SGEs it touches. 0; -ERANGE when the SGEs end
 * first (nothing past them is written); -EINVAL when the frame does.
 */
static inline int
engine_sge_copy(const struct drnic_sge *sge, uint32_t nsge, uint32_t off,
		const struct rte_mbuf *m, uint32_t moff, const uint8_t *src, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < nsge && len > 0; i++) {
		uint32_t sl = sge[i].length, take;
		void *dst;

		if (off >= sl) {
			off -= sl;
			continue;
		}
		take = RTE_MIN(sl - off, len);
		dst = (void *)(uintptr_t)(sge[i].addr + off);
		if (m == NULL)
			memcpy(dst, src + moff, take);
		else if (drnic_wire_copy_out(m, moff, take, dst) < 0)
			return -EINVAL;
		moff += take;
		len -= take;
		off = 0;
	}
	return len == 0 ? 0 : -ERANGE;
}

/* engine_sge_copy() from frame @p m. */
static inline int
engine_sge_scatter(const struct drnic_sge *sge, uint32_t nsge, uint32_t off,
		   const struct rte_mbuf *m, uint32_t moff, uint32_t len)
{
	return engine_sge_copy(sge, nsge, off, m, moff, NULL, len);
}

/* Recovery's part of every ACK, inline: it is on the ping-pong's path (as
 * static functions of completer.c they were inlined there). */
/* @p n more PSNs acknowledged: the window grows (doubling below ssthresh,
 * then by about eight packets per window's worth acknowledged: the losses
 * here are a lossy link's, not a queue's). */
static inline void
rec_grow(struct engine_qp *eq, uint32_t n)
{
	if (eq->rec.cwnd >= ENGINE_MAX_INFLIGHT_PSN)
		return;
	if (eq->rec.cwnd < eq->rec.ssthresh) {
		eq->rec.cwnd = RTE_MIN(eq->rec.cwnd + n, (uint32_t)ENGINE_MAX_INFLIGHT_PSN);
		return;
	}
	eq->rec.cwnd_acc += n * 8;
	while (eq->rec.cwnd_acc >= eq->rec.cwnd && eq->rec.cwnd < ENGINE_MAX_INFLIGHT_PSN) {
		eq->rec.cwnd_acc -= eq->rec.cwnd;
		eq->rec.cwnd++;
	}
}

/* A response covers PSN @p psn: a round-trip sample when it answers the
 * timed packet. */
static inline void
rec_rtt_sample(struct engine_qp *eq, uint32_t psn)
{
	uint64_t s;

	if (!eq->rec.rtt_pending || drnic_psn_lt(psn, eq->rec.rtt_psn))
		return;
	eq->rec.rtt_pending = false;
	s = engine_step_ns(eq->eng) - eq->rec.rtt_sent_ns;
	if (eq->rec.srtt_ns == 0) {
		eq->rec.srtt_ns = s;
		eq->rec.rttvar_ns = s / 2;
	} else {
		uint64_t err = s > eq->rec.srtt_ns ? s - eq->rec.srtt_ns : eq->rec.srtt_ns - s;

		/* Jacobson's estimator: gains 1/8 and 1/4. */
		eq->rec.srtt_ns = eq->rec.srtt_ns - eq->rec.srtt_ns / 8 + s / 8;
		eq->rec.rttvar_ns = eq->rec.rttvar_ns - eq->rec.rttvar_ns / 4 + err / 4;
	}
}

/* Time the round trip of AckReq packet @p psn, when none is being timed. */
static inline void
rec_rtt_time(struct engine_qp *eq, uint32_t psn)
{
	if (eq->rec.rtt_pending)
		return;
	eq->rec.rtt_pending = true;
	eq->rec.rtt_psn = psn;
	eq->rec.rtt_sent_ns = engine_step_ns(eq->eng);
}

/* Forward progress: the retry budget is whole again; the timer restarts
 * while something is outstanding, and stops when nothing is. */
static inline void
rec_progress(struct engine_qp *eq)
{
	eq->rec.retry_left = eq->path.retry_cnt;
	eq->rec.alive_retries = 0;
	if (eq->comp.idx != eq->req.idx || eq->req.off > 0) {
		rec_timer_arm(eq);
	} else {
		eq->rec.retry_deadline_ns = 0;
		eq->rec.probe_deadline_ns = 0;
	}
}

/* The peer answered (a response believed, or a duplicate): it is alive. */
static inline void
rec_heard(struct engine_qp *eq)
{
	eq->rec.peer_heard = true;
}

/* An ACK: the RNR retry budget is whole again. */
static inline void
rec_rnr_reset(struct engine_qp *eq)
{
	eq->rec.rnr_retry_left = eq->path.rnr_retry;
}

/* An RNR NAK: true when one more RNR retry is allowed (taken from the
 * budget; rnr_retry 7 retries for ever), false when it is used up. */
static inline bool
rec_rnr_retry(struct engine_qp *eq)
{
	if (eq->rec.rnr_retry_left == 0)
		return false;
	if (eq->rec.rnr_retry_left != 7)
		eq->rec.rnr_retry_left--;
	return true;
}

/*
 * The requester's API for the completer (with req_rewind(),
 * req_rewind_psn(), req_skip_acked() and req_stop_at()): the completer
 * says what it heard; the requester's state changes here.
 */

/* Wake a requester that waits for what the completer just did (a fence,
 * a READ/atomic slot, room in the window). */
static inline void
req_wake(struct engine_qp *eq)
{
	switch (eq->req.state) {
	case REQ_WAIT_FENCE:
	case REQ_WAIT_RD_ATOMIC:
	case REQ_WAIT_WINDOW:
		eq->req.state = REQ_IDLE;
		engine_qp_activate(eq);
		break;
	default:
		break;
	}
}

/* Send again from where a go-back put the requester; an RNR wait in
 * progress still applies unless @p over_rnr_wait. */
static inline void
req_resume(struct engine_qp *eq, bool over_rnr_wait)
{
	if (over_rnr_wait || eq->req.state != REQ_WAIT_RNR)
		eq->req.state = REQ_IDLE;
	engine_qp_activate(eq);
}

/* The responder was not ready: send nothing until @p until_ns (then from
 * where the caller rewound the requester); no retransmit timer meanwhile. */
static inline void
req_wait_rnr(struct engine_qp *eq, uint64_t until_ns)
{
	eq->rec.retry_deadline_ns = 0;
	eq->rec.probe_deadline_ns = 0;  /* re-armed when sending again */
	eq->req.state = REQ_WAIT_RNR;
	eq->rec.rnr_deadline_ns = until_ns;
	engine_qp_activate(eq);
}

/* Everything up to WQE @p idx was completed or flushed: nothing is
 * outstanding and nothing more is sent. */
static inline void
req_flushed(struct engine_qp *eq, uint32_t idx)
{
	eq->req.idx = idx;
	eq->req.off = 0;
	eq->req.rd_outstanding = 0;
	eq->req.state = REQ_STOPPED;
	eq->rec.retry_deadline_ns = 0;
	eq->rec.probe_deadline_ns = 0;
}

/*
 * The requester's stop, for either machine: WQE @p idx ends with @p status
 * and nothing after it is sent. The completer reports it in order (the QP
 * goes to ERR) and flushes the rest.
 */
static inline void
req_stop_at(struct engine_qp *eq, uint32_t idx, enum drnic_wc_status status)
{
	struct verbs_send_wqe *w = engine_sq_wqe(eq, idx);

	w->state = WQE_FAILED;
	w->status = (uint8_t)status;
	eq->req.idx = idx + 1;
	eq->req.off = 0;
	eq->req.state = REQ_STOPPED;
}

/* READ @p w has its responses up to its rd_next (exclusive) and no
 * further: the rest can be asked for from there (a partial re-read). Each
 * READ keeps its own progress, so several can be partly answered. */
static inline bool
engine_read_partial(const struct verbs_send_wqe *w)
{
	return w->opcode == DRNIC_WR_RDMA_READ && w->rd_next <= DRNIC_PSN_MASK &&
	       drnic_psn_gt(w->rd_next, w->first_psn) && drnic_psn_le(w->rd_next, w->last_psn);
}

/* PSNs sent and not yet acknowledged (what the congestion window limits):
 * from the oldest unretired WQE, or after what is acknowledged, or after
 * the READ responses already received. */
static inline uint32_t
engine_inflight(const struct engine_qp *eq)
{
	const struct verbs_send_wqe *w;
	uint32_t base;

	if (eq->comp.idx == eq->req.idx && eq->req.off == 0)
		return 0;
	w = engine_sq_wqe(eq, eq->comp.idx);
	base = w->first_psn;
	if (eq->comp.any_acked && drnic_psn_gt(drnic_psn_add(eq->comp.acked_psn, 1), base))
		base = drnic_psn_add(eq->comp.acked_psn, 1);
	if (engine_read_partial(w) && drnic_psn_gt(w->rd_next, base))
		base = w->rd_next;
	return drnic_psn_gt(eq->req.npsn, base) ? drnic_psn_sub(eq->req.npsn, base) : 0;
}

/*
 * A frame of @p eq to fill in: engine_qp_tx() writes a connected QP's path
 * (addresses, ports, P_Key, destination QPN) from its header bytes
 * (eq->wtmpl), so only the frame's own fields are set; a UD QP's starts
 * from its fields template.
 */
static inline void
engine_pkt_init(const struct engine_qp *eq, struct drnic_wire_pkt *pkt)
{
	if (unlikely(eq->ud || eq->wtmpl.len == 0))
		*pkt = eq->tmpl;
	else
		memset(pkt, 0, sizeof(*pkt));
}

/* A READ request packet for @p w from PSN @p psn on (the whole READ when
 * @p psn is its first PSN; the rest of it otherwise). */
static inline void
engine_read_request(const struct engine_qp *eq, const struct verbs_send_wqe *w, uint32_t psn,
		    struct drnic_wire_pkt *pkt)
{
	uint32_t off = drnic_psn_sub(psn, w->first_psn) * eq->path.mtu;

	engine_pkt_init(eq, pkt);
	pkt->bth.opcode = DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST;
	pkt->xrceth.srqn = w->xrc_srqn;   /* XRC only (engine_qp_tx) */
	pkt->bth.psn = psn;
	pkt->bth.ackreq = true;
	pkt->reth.va = w->remote_addr + off;
	pkt->reth.rkey = w->rkey;
	pkt->reth.dmalen = w->length - off;
}

/* The request packet of atomic WQE @p w (at its PSN). */
static inline void
engine_atomic_request(const struct engine_qp *eq, const struct verbs_send_wqe *w,
		      struct drnic_wire_pkt *pkt)
{
	engine_pkt_init(eq, pkt);
	pkt->bth.psn = w->first_psn;
	pkt->bth.ackreq = true;
	pkt->xrceth.srqn = w->xrc_srqn;   /* XRC only (engine_qp_tx) */
	pkt->atomic.va = w->remote_addr;
	pkt->atomic.rkey = w->rkey;
	if (w->opcode == DRNIC_WR_ATOMIC_CMP_AND_SWP) {
		pkt->bth.opcode = DRNIC_WIRE_OP_RC_COMPARE_SWAP;
		pkt->atomic.swap_add = w->swap;
		pkt->atomic.cmp = w->compare_add;
	} else {
		pkt->bth.opcode = DRNIC_WIRE_OP_RC_FETCH_ADD;
		pkt->atomic.swap_add = w->compare_add;
	}
}

#endif /* ENGINE_PRIV_H */
