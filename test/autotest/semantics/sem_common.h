/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SEM_COMMON_H
#define SEM_COMMON_H

/*
 * Shared set-up of the semantics autotests: a "server" and a "client" device
 * joined by a private loopback cable, in inline or dedicated progress mode,
 * and helpers to create, connect, post and poll through the public API only.
 *
 * Every object is created through a struct sem_ctx, which remembers it, so
 * sem_ctx_close() releases whatever a failed assertion left behind (async
 * and completion events are drained and acknowledged first). Objects a test
 * destroys itself are destroyed with sem_destroy_qp()/sem_destroy_cq(), which
 * forget them on success.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_memory.h>

#include "drnic_verbs.h"
#include "drnic_cq.h"
#include "drnic_event.h"

#include "test.h"

#define SEM_SRV 0  /* side index: the server device */
#define SEM_CLI 1  /* side index: the client device */

#define SEM_MAX_QP 256
#define SEM_MAX_CQ 16
#define SEM_MAX_MR 64
#define SEM_MAX_CH 4
#define SEM_MAX_EV 64

struct sem_ctx {
	enum drnic_progress_mode mode;
	struct drnic_device *dev[2];
	struct drnic_pd *pd[2];
	struct drnic_qp *qp[SEM_MAX_QP];
	unsigned int nb_qp;
	struct drnic_cq *cq[SEM_MAX_CQ];
	unsigned int nb_cq;
	struct drnic_mr *mr[SEM_MAX_MR];
	void *buf[SEM_MAX_MR];
	unsigned int nb_mr;
	struct drnic_comp_channel *ch[SEM_MAX_CH];
	unsigned int nb_ch;
	/* async events taken by sem_wait_async() and not yet acknowledged */
	struct drnic_async_event ev[2][SEM_MAX_EV];
	unsigned int nb_ev[2];
	uint8_t active_mtu;          /* enum drnic_mtu of the server port */
	int max_rd_atomic;
};

static inline const char *
sem_mode_str(enum drnic_progress_mode m)
{
	return m == DRNIC_PROGRESS_INLINE ? "inline" : "dedicated";
}

/*
 * Open the two devices (names unique per call, cable "semwN"). Dedicated mode
 * puts both devices' engine on the first EAL worker lcore (one shared engine).
 * @return TEST_SUCCESS, TEST_SKIPPED (no worker lcore for dedicated mode) or
 *         TEST_FAILED (message printed).
 */
int sem_ctx_open(struct sem_ctx *c, enum drnic_progress_mode mode);

/* Release everything in reverse order; prints (does not fail on) errors. */
void sem_ctx_close(struct sem_ctx *c);

/* Run a test body in a fresh context, always closing it. */
int sem_run(enum drnic_progress_mode mode, const char *what, int (*body)(struct sem_ctx *c));

/* Objects. NULL on failure (message with rte_errno printed). */
struct drnic_comp_channel *sem_channel(struct sem_ctx *c);
struct drnic_cq *sem_cq(struct sem_ctx *c, int side, uint32_t depth,
			struct drnic_comp_channel *ch, void *cq_context);
struct drnic_qp *sem_qp(struct sem_ctx *c, int side, struct drnic_cq *scq,
			struct drnic_cq *rcq, uint32_t max_send_wr, uint32_t max_recv_wr,
			int sq_sig_all);
/* Allocate (drnic_alloc) and register a buffer; *buf receives it. */
struct drnic_mr *sem_mr(struct sem_ctx *c, int side, size_t len, unsigned int access,
			void **buf);
/* Same, but register only the first @p reg_len of the @p alloc_len bytes. */
struct drnic_mr *sem_mr_part(struct sem_ctx *c, int side, size_t alloc_len, size_t reg_len,
			     unsigned int access, void **buf);
int sem_destroy_qp(struct sem_ctx *c, struct drnic_qp *qp);
int sem_destroy_cq(struct sem_ctx *c, struct drnic_cq *cq);

/* QP state machine helpers (0 or the negative errno, printed). */
int sem_qp_init(struct drnic_qp *qp, unsigned int access);
int sem_qp_rtr(struct sem_ctx *c, struct drnic_qp *qp, int peer_side, uint32_t peer_qpn,
	       uint32_t rq_psn);
int sem_qp_rts(struct sem_ctx *c, struct drnic_qp *qp, uint32_t sq_psn, int max_rd_atomic);
/*
 * Connect server QP @p qs with client QP @p qc: RESET->INIT->RTR->RTS both,
 * access flags LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC, the given
 * start PSNs (server sends from psn_s, client from psn_c).
 */
int sem_connect(struct sem_ctx *c, struct drnic_qp *qs, struct drnic_qp *qc, uint32_t psn_s,
		uint32_t psn_c);

/* Posting one WR. */
int sem_post_recv(struct drnic_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey);
int sem_post_send(struct drnic_qp *qp, uint64_t wr_id, enum drnic_wr_opcode op, void *addr,
		  uint32_t len, uint32_t lkey, unsigned int flags, uint64_t raddr, uint32_t rkey);

/* Drive progress once (inline engines; harmless in dedicated mode). */
void sem_progress(struct sem_ctx *c);

uint64_t sem_now_us(void);

/*
 * Poll @p cq until @p n completions are collected or @p timeout_ms passes.
 * @return the number collected (<= n), or the negative poll error.
 */
int sem_poll_n(struct sem_ctx *c, struct drnic_cq *cq, struct drnic_wc *wc, int n,
	       unsigned int timeout_ms);
/* Poll for @p ms and return how many completions turned up (expected 0). */
int sem_poll_quiet(struct sem_ctx *c, struct drnic_cq *cq, struct drnic_wc *wc, int max,
		   unsigned int ms);
/* Wait until the QP reaches @p st; 0 or -ETIMEDOUT. */
int sem_wait_qp_state(struct sem_ctx *c, struct drnic_qp *qp, enum drnic_qp_state st,
		      unsigned int timeout_ms);
/*
 * Take async events of @p side until one of @p type arrives (driving
 * progress). Every event taken is kept in c->ev[side] (acknowledged by
 * sem_ack_async() or sem_ctx_close()) and printed.
 * @return the index of the matching event in c->ev[side], or -1 on timeout.
 */
int sem_wait_async(struct sem_ctx *c, int side, enum drnic_event_type type,
		   unsigned int timeout_ms);
void sem_ack_async(struct sem_ctx *c, int side);

/* Patterns: byte i of pattern @p seed. */
void sem_fill(void *buf, size_t len, uint32_t seed);
/* @return -1 when buf holds pattern @p seed, else the first bad offset. */
long sem_check(const void *buf, size_t len, uint32_t seed);
/* @return -1 when every byte is @p v, else the first other offset. */
long sem_check_byte(const void *buf, size_t len, uint8_t v);

void sem_print_wc(const char *tag, const struct drnic_wc *wc);

/* Assert a completion's wr_id, status and qp_num (and opcode when >= 0). */
#define SEM_ASSERT_WC(wc, e_wr_id, e_status, e_opcode, e_qpn)                       \
	do {                                                                       \
		const struct drnic_wc *_w = (wc);                                  \
		int _op = (int)(e_opcode);                                         \
		if (_w->wr_id != (uint64_t)(e_wr_id) ||                            \
		    _w->status != (enum drnic_wc_status)(e_status) ||              \
		    _w->qp_num != (uint32_t)(e_qpn) ||                             \
		    (_op >= 0 && (int)_w->opcode != _op)) {                        \
			printf("%s:%d: completion mismatch: expected wr_id %llu "  \
			       "status %s opcode %d qp_num %u\n", __FILE__,         \
			       __LINE__, (unsigned long long)(e_wr_id),            \
			       drnic_wc_status_str((enum drnic_wc_status)(e_status)), \
			       _op, (unsigned int)(e_qpn));                        \
			sem_print_wc("got", _w);                                   \
			return TEST_FAILED;                                        \
		}                                                                  \
	} while (0)

#endif /* SEM_COMMON_H */
