/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RNIC_FIXTURE_H
#define RNIC_FIXTURE_H

/*
 * Two drnic devices joined by a loopback wire, one RC QP each, connected;
 * a registered buffer and a CQ on each side. Shared by the rnic autotests.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drnic_engine.h"
#include "drnic_verbs.h"

#define RNIC_BUF_SIZE (2u << 20)   /* 2 MiB per side: 1 MiB payload + room */

struct rnic_side {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_cq *cq;
	struct drnic_comp_channel *ch;  /* the CQ's, with rnic_pair_opts.channel */
	struct drnic_qp *qp;
	uint8_t *buf;
	struct drnic_mr *mr;
};

struct rnic_pair {
	struct rnic_side a;   /* requester side in most tests */
	struct rnic_side b;   /* responder side */
	enum drnic_progress_mode mode;
	char wire[32];        /* the loopback wire: A is its end 0, B its end 1 */
};

struct rnic_pair_opts {
	enum drnic_progress_mode mode;
	uint32_t cq_depth;          /* default 4096 */
	uint32_t max_wr;            /* default 256 */
	uint32_t max_sge;           /* default 8 */
	uint32_t max_inline;        /* default 256 */
	unsigned int qp_access;     /* default: remote write, read, atomic */
	unsigned int mr_access;     /* default: local write + all remote */
	int sq_sig_all;
	uint8_t max_rd_atomic;      /* default 16; 0 means 0 only with zero_rd_atomic */
	uint8_t max_dest_rd_atomic; /* default 16 */
	uint8_t retry_cnt;          /* default 7 */
	bool zero_rd_atomic;
	bool channel;               /* each side's CQ gets a completion channel */
	unsigned int engines;       /* default 1 (inline mode only for more) */
	const char *lcores;         /* dedicated mode: the engine lcores (default "1") */
	int rnr_retry;              /* 0 means 7; -1 means 0 */
	uint8_t timeout;            /* default 14 (67 ms) */
	/* Appended to side A's / B's link_args ("fault_drop=...", "capture=..."); may be NULL. */
	const char *link_extra[2];
	/* Side A's / B's IPv6 address (GID index 1, after the IPv4 one); may be NULL. */
	const char *ipv6[2];
	enum drnic_qp_type qp_type;  /* 0: RC; or DRNIC_QPT_UC, DRNIC_QPT_UD */
	unsigned int cq_flags;       /* drnic_cq_attr::flags of both CQs */
	bool qp_reset;               /* leave both QPs in RESET (a CM connects them) */
	const char *mr_pin;          /* the devices' mr_pin key; NULL: the default */
};

int rnic_pair_open(struct rnic_pair *p, const struct rnic_pair_opts *o);
void rnic_pair_close(struct rnic_pair *p);
/* The Q_Key of the fixture's UD QPs. */
#define RNIC_UD_QKEY 0x1234ABCDu
/* A UD QP from RESET to RTS with Q_Key @p qkey. */
int rnic_ud_ready(struct drnic_qp *qp, uint32_t qkey);
/* Connect QP x to y's QP number (RESET->INIT->RTR->RTS; UD: just ready). */
int rnic_qp_connect(struct rnic_side *x, struct rnic_side *y, const struct rnic_pair_opts *o);
/* Poll @p n completions from @p cq within 5 s (drives inline engines). */
int rnic_poll(struct rnic_side *s, struct drnic_wc *wc, int n);
/* Poll: expect no completion for @p ms milliseconds. */
int rnic_poll_none(struct rnic_side *s, unsigned int ms);
void rnic_fill(uint8_t *p, size_t len, uint32_t seed);
/* Run @p cmd through the shell, its output (as much as fits) in @p out.
 * Returns its exit status, or -1 when it could not run. */
int rnic_shell(const char *cmd, char *out, size_t len);
/* CLOCK_MONOTONIC in ms, for the tests' deadlines. */
uint64_t rnic_now_ms(void);

#endif
