/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs case of the interop suite: one RC QP on each side (drnic on the
 * host: verbs_peer_drnic.c; rxe in the VM: verbs_peer_rxe.c), connected over
 * TCP (the drnic side listens), then rounds of two phases of the same seven
 * steps: in even phases the rxe QP is the requester, in odd ones the drnic
 * QP. A phase starts when the responder has reset its memory (READ source,
 * atomic target) and posted its receives: it says "GO phase".
 *
 * In lock step: the requester fills its source with the step's pattern,
 * posts the WR, checks its completion (status, opcode, wr_id, READ data,
 * atomic original value), then sends "STEP n" over TCP; the responder checks
 * its side (receive completion: opcode, byte_len, imm_data, wc_flags,
 * qp_num; memory written or changed by the atomic) and answers "OK n" or
 * "BAD n reason". Both print one line per step and exit 1 on any failure.
 *
 * Memory windows: the responder of a phase binds its type 2 window (a
 * BIND_MW work request with the next key byte) over [VP_MW_OFF, +VP_MW_LEN)
 * of its buffer, remote write only, and gives its rkey in the GO line ("GO
 * phase rkey"). The requester WRITEs through it (MW_RDMA_WRITE), then sends
 * with Invalidate of that rkey (SEND_WITH_INV): the responder's receive
 * must say WITH_INV and the rkey, and the window must be free again, which
 * the responder shows by binding it once more and invalidating it with
 * LOCAL_INV (a bound type 2 window cannot be bound: MW_BIND_ERR).
 *
 * Shared here: the exchange record (host byte order: both ends x86-64), the
 * step table, the buffer layout and the data pattern.
 */
#ifndef VERBS_PEER_H
#define VERBS_PEER_H

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct vp_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint32_t pad;
	uint64_t addr;
	uint8_t gid[16];
};

enum vp_op {
	VP_SEND, VP_SEND_IMM, VP_WRITE, VP_WRITE_IMM, VP_READ, VP_CMP_SWAP, VP_FETCH_ADD,
	VP_MW_WRITE, VP_SEND_INV,
};

struct vp_step {
	enum vp_op op;
	const char *name;
	uint32_t len;      /* payload bytes (8 for atomics) */
	uint32_t roff;     /* responder buffer offset: target / READ source / recv buffer */
};

/* Path MTU 1024: SEND, WRITE and READ of several packets. */
static const struct vp_step vp_steps[] = {
	{ VP_SEND, "SEND", 5000, 32768 },
	{ VP_SEND_IMM, "SEND_WITH_IMM", 100, 40960 },
	{ VP_WRITE, "RDMA_WRITE", 6000, 8192 },
	{ VP_WRITE_IMM, "RDMA_WRITE_WITH_IMM", 3000, 16384 },
	{ VP_READ, "RDMA_READ", 7000, 24576 },
	{ VP_CMP_SWAP, "ATOMIC_CMP_AND_SWP", 8, 0 },
	{ VP_FETCH_ADD, "ATOMIC_FETCH_AND_ADD", 8, 0 },
	{ VP_MW_WRITE, "MW_RDMA_WRITE", 3000, 2048 + 512 },   /* inside VP_MW_OFF's window */
	{ VP_SEND_INV, "SEND_WITH_INV", 200, 57344 },         /* VP_RECV_OFF(3) */
};
#define VP_NB_STEPS (sizeof(vp_steps) / sizeof(vp_steps[0]))

#define VP_BUF_LEN 65536u
#define VP_SRC_OFF 49152u   /* requester: source of SEND/WRITE, READ destination */
#define VP_ATOMIC_RES_OFF 64u   /* requester: original value of an atomic */
#define VP_RECV_SLOTS 4         /* SEND, SEND_IMM, WRITE_IMM, SEND_INV consume one each */
#define VP_RECV_OFF(i) (32768u + (uint32_t)(i) * 8192u)
#define VP_MW_OFF 2048u         /* the responder's window */
#define VP_MW_LEN 4096u
#define VP_MW_WR_ID 3000u       /* its BIND_MW and LOCAL_INV work requests */

/* The receive slot a SEND-like step takes (-1: none). */
static inline int
vp_recv_slot(enum vp_op op)
{
	switch (op) {
	case VP_SEND: return 0;
	case VP_SEND_IMM: return 1;
	case VP_WRITE_IMM: return 2;
	case VP_SEND_INV: return 3;
	default: return -1;
	}
}

/* The next rkey of a type 2 window: the key byte plus one (ibv_inc_rkey()). */
static inline uint32_t
vp_inc_rkey(uint32_t rkey)
{
	return (rkey & ~0xFFu) | ((rkey + 1) & 0xFFu);
}

/* Atomic values: target starts at A; CMP_SWAP(A -> B); FETCH_ADD(+C). */
#define VP_ATOMIC_A(ph) (0x0102030405060708ull + (ph))
#define VP_ATOMIC_B(ph) (0xa1b2c3d4e5f60718ull + (ph))
#define VP_ATOMIC_C 0x100000001ull
#define VP_IMM(ph, step) (0x1234ab00u + (uint32_t)((ph) << 4) + (uint32_t)(step))

static inline uint8_t
vp_pattern(int phase, unsigned int step, size_t j)
{
	return (uint8_t)((j * 13u + step * 7u + (unsigned int)phase * 101u + 0x3c) ^ (j >> 9));
}

static inline void
vp_fill(uint8_t *p, size_t len, int phase, unsigned int step)
{
	for (size_t j = 0; j < len; j++)
		p[j] = vp_pattern(phase, step, j);
}

/* Index of the first wrong byte or -1. */
static inline long
vp_verify(const uint8_t *p, size_t len, int phase, unsigned int step)
{
	for (size_t j = 0; j < len; j++)
		if (p[j] != vp_pattern(phase, step, j))
			return (long)j;
	return -1;
}

/* Line I/O over the TCP socket; @p idle runs while waiting (drnic inline
 * engines need it). Timeout in milliseconds. */
typedef void (*vp_idle_fn)(void *arg);

static inline int
vp_send_line(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	return write(fd, buf, (size_t)n) == n ? 0 : -EIO;
}

static inline int
vp_recv_line(int fd, char *buf, size_t len, int timeout_ms, vp_idle_fn idle, void *arg)
{
	size_t n = 0;
	int waited = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, idle != NULL ? 0 : 10);

		if (r < 0)
			return -errno;
		if (r == 0) {
			if (idle != NULL) {
				idle(arg);
				usleep(50);
				waited++;
				if (waited > timeout_ms * 10)
					return -ETIMEDOUT;
			} else if ((waited += 10) > timeout_ms) {
				return -ETIMEDOUT;
			}
			continue;
		}
		if (read(fd, buf + n, 1) != 1)
			return -EPIPE;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return 0;
		}
		n++;
	}
	return -E2BIG;
}

static inline int
vp_read_full(int fd, void *p, size_t len)
{
	size_t n = 0;

	while (n < len) {
		ssize_t r = read(fd, (char *)p + n, len - n);

		if (r <= 0)
			return -EIO;
		n += (size_t)r;
	}
	return 0;
}

#endif /* VERBS_PEER_H */
