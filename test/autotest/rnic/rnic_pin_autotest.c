/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registered memory with a mapping of its own (lib/verbs/mr_pin.c), on the
 * loopback wire, engines inline and on their own lcore, mr_pin = on:
 *  - a page-aligned buffer the program mapped itself is moved at
 *    registration: same bytes at the same address, and the program's view
 *    and the engines' are one memory both ways (the program's stores go on
 *    the wire, the peer's WRITEs show at the program's address);
 *  - the program unmaps it while it is still registered (UCX's registration
 *    cache does): the peer's WRITE still lands and its READ gets it back,
 *    where the engines reached the program's mapping before and faulted;
 *  - a memory window over it: WRITE through the window's rkey;
 *  - pages moved once are not copied again when registered again;
 *  - System V shared memory (UCX's receive buffers): the segment attached
 *    again; the program detaches it while registered, and the peer's WRITE
 *    and READ still work;
 *  - a buffer that shares its first page with other data is not moved;
 *  - a child of fork() has no moved pages (MADV_DONTFORK, as
 *    ibv_fork_init() marks registered memory).
 * With mr_pin = auto (the default): System V memory gets its window,
 * private pages are not moved.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>

#include <rte_errno.h>

#include "mr_pin.h"
#include "rnic_fixture.h"
#include "test.h"

#define PIN_PAGES 16
#define PIN_LEN   (PIN_PAGES * 4096)
#define PIN_ACC   (DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE | \
		   DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_MW_BIND)

/* One signaled WR of @p s to its peer, completed with @p want. */
static int
pin_op(struct rnic_side *s, enum drnic_wr_opcode op, void *laddr, uint32_t len, uint32_t lkey,
       uint64_t raddr, uint32_t rkey, enum drnic_wc_status want)
{
	struct drnic_sge sge = { (uintptr_t)laddr, len, lkey };
	struct drnic_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = op,
				    .send_flags = DRNIC_SEND_SIGNALED }, *bad;
	struct drnic_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	TEST_ASSERT_SUCCESS(drnic_post_send(s->qp, &wr, &bad), "post");
	TEST_ASSERT_EQUAL(rnic_poll(s, &wc, 1), 1, "completion");
	TEST_ASSERT(wc.status == want, "status %s, expected %s", drnic_wc_status_str(wc.status),
		    drnic_wc_status_str(want));
	return TEST_SUCCESS;
}

/* Does [a, a + len) hold rnic_fill()'s bytes of @p seed from offset @p off? */
static bool
pin_same(const uint8_t *a, size_t len, uint32_t seed, size_t off)
{
	uint8_t *want = malloc(off + len);
	bool same;

	if (want == NULL)
		return false;
	rnic_fill(want, off + len, seed);
	same = memcmp(a, want + off, len) == 0;
	free(want);
	return same;
}

/* Is any byte of [a, a + len) mapped in this process (mincore)? */
static bool
pin_mapped(const void *a, size_t len)
{
	unsigned char vec[PIN_PAGES];

	return mincore((void *)(uintptr_t)a, len, vec) == 0 || errno != ENOMEM;
}

/* System V shared memory, already marked for removal (as UCX's): attached
 * again, nothing copied; the program detaches it while it is registered,
 * and the peer's WRITE and READ still work. */
static int
pin_sysv(struct rnic_pair *p)
{
	struct mr_pin_stats s0, s1;
	uint8_t *b = p->b.buf, *sh;
	struct drnic_mr *mr;
	int id = shmget(IPC_PRIVATE, PIN_LEN, IPC_CREAT | 0600);

	TEST_ASSERT(id >= 0, "shmget");
	sh = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	TEST_ASSERT(sh != (void *)-1, "shmat");
	rnic_fill(sh, PIN_LEN, 21);
	mr_pin_stats_get(&s0);
	mr = drnic_reg_mr(p->a.pd, sh + 100, PIN_LEN - 200, PIN_ACC);
	TEST_ASSERT(mr != NULL, "reg_mr of System V memory");
	mr_pin_stats_get(&s1);
	TEST_ASSERT(s1.windows == s0.windows + 1 && s1.bytes_moved == s0.bytes_moved,
		    "a window, nothing copied");
	TEST_ASSERT_SUCCESS(shmdt(sh), "shmdt");
	rnic_fill(b + 16384, 4096, 22);
	if (pin_op(&p->b, DRNIC_WR_RDMA_WRITE, b + 16384, 4096, drnic_mr_lkey(p->b.mr),
		   (uintptr_t)sh + 4096, drnic_mr_rkey(mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	if (pin_op(&p->b, DRNIC_WR_RDMA_READ, b + 32768, 8192, drnic_mr_lkey(p->b.mr),
		   (uintptr_t)sh + 4096, drnic_mr_rkey(mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT(memcmp(b + 32768, b + 16384, 4096) == 0, "the WRITE read back");
	TEST_ASSERT(pin_same(b + 32768 + 4096, 4096, 21, 8192), "and the bytes after it");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	return TEST_SUCCESS;
}

static int
pin_body(struct rnic_pair *p)
{
	struct mr_pin_stats s0, s1;
	uint8_t *ab, *b = p->b.buf, *heap;
	struct drnic_mr *mr, *mr2;
	struct drnic_mw *mw;
	uint32_t rkey;
	pid_t pid;
	int st;

	ab = mmap(NULL, PIN_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(ab != MAP_FAILED, "mmap");
	rnic_fill(ab, PIN_LEN, 3);
	mr_pin_stats_get(&s0);
	mr = drnic_reg_mr(p->a.pd, ab, PIN_LEN, PIN_ACC);
	TEST_ASSERT(mr != NULL, "reg_mr: %s", rte_strerror(rte_errno));
	mr_pin_stats_get(&s1);
	TEST_ASSERT_EQUAL(s1.windows, s0.windows + 1, "a window");
	TEST_ASSERT_EQUAL(s1.bytes_moved, s0.bytes_moved + PIN_LEN, "the pages moved");
	TEST_ASSERT(drnic_mr_addr(mr) == ab, "the MR is at the program's address");
	TEST_ASSERT(pin_same(ab, PIN_LEN, 3, 0), "same bytes at the same address");

	/* The program's stores after the registration go on the wire ... */
	memset(ab, 0x5A, 1000);
	if (pin_op(&p->a, DRNIC_WR_RDMA_WRITE, ab, 1000, drnic_mr_lkey(mr), (uintptr_t)b,
		   drnic_mr_rkey(p->b.mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT(b[0] == 0x5A && b[999] == 0x5A, "A's new bytes at B");
	/* ... and the peer's WRITE shows at the program's address. */
	rnic_fill(b + 4096, 4096, 4);
	if (pin_op(&p->b, DRNIC_WR_RDMA_WRITE, b + 4096, 4096, drnic_mr_lkey(p->b.mr),
		   (uintptr_t)ab + 4096, drnic_mr_rkey(mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT(memcmp(ab + 4096, b + 4096, 4096) == 0, "B's WRITE at A's address");

	/* A type 1 window over the MR: B writes through its rkey. */
	mw = drnic_alloc_mw(p->a.pd, DRNIC_MW_TYPE_1);
	TEST_ASSERT(mw != NULL, "alloc_mw");
	{
		struct drnic_mw_bind bind = {
			.wr_id = 5, .send_flags = DRNIC_SEND_SIGNALED,
			.bind_info = { mr, (uintptr_t)ab + 2 * 4096, 4096, DRNIC_ACCESS_REMOTE_WRITE },
		};
		struct drnic_wc wc;

		TEST_ASSERT_SUCCESS(drnic_bind_mw(p->a.qp, mw, &bind), "bind_mw");
		TEST_ASSERT_EQUAL(rnic_poll(&p->a, &wc, 1), 1, "bind completion");
		TEST_ASSERT(wc.status == DRNIC_WC_SUCCESS, "bind: %s", drnic_wc_status_str(wc.status));
	}
	rkey = drnic_mw_rkey(mw);
	rnic_fill(b + 8192, 512, 6);
	if (pin_op(&p->b, DRNIC_WR_RDMA_WRITE, b + 8192, 512, drnic_mr_lkey(p->b.mr),
		   (uintptr_t)ab + 2 * 4096 + 100, rkey, DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT(memcmp(ab + 2 * 4096 + 100, b + 8192, 512) == 0, "WRITE through the window");
	TEST_ASSERT_SUCCESS(drnic_dealloc_mw(mw), "dealloc_mw");

	/* A child has none of the moved pages. */
	pid = fork();
	if (pid == 0)
		_exit(pin_mapped(ab, PIN_LEN) ? 1 : 0);
	TEST_ASSERT(pid > 0, "fork");
	TEST_ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st), "child");
	TEST_ASSERT_EQUAL(WEXITSTATUS(st), 0, "the child has no moved pages");

	/* The program unmaps the buffer, still registered: the peer's WRITE
	 * lands in the MR all the same, and its READ brings it back. */
	TEST_ASSERT_SUCCESS(munmap(ab, PIN_LEN), "munmap");
	TEST_ASSERT(!pin_mapped(ab, PIN_LEN), "unmapped");
	rnic_fill(b + 16384, 8192, 9);
	if (pin_op(&p->b, DRNIC_WR_RDMA_WRITE, b + 16384, 8192, drnic_mr_lkey(p->b.mr),
		   (uintptr_t)ab + 8192, drnic_mr_rkey(mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	memset(b + 32768, 0, 8192);
	if (pin_op(&p->b, DRNIC_WR_RDMA_READ, b + 32768, 8192, drnic_mr_lkey(p->b.mr),
		   (uintptr_t)ab + 8192, drnic_mr_rkey(mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT(memcmp(b + 32768, b + 16384, 8192) == 0, "READ back from the unmapped MR");
	mr_pin_stats_get(&s0);
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	mr_pin_stats_get(&s1);
	TEST_ASSERT_EQUAL(s1.windows, s0.windows - 1, "the window went");

	/* Pages moved once map again without a copy. */
	ab = mmap(NULL, PIN_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(ab != MAP_FAILED, "mmap");
	rnic_fill(ab, PIN_LEN, 12);
	mr = drnic_reg_mr(p->a.pd, ab, PIN_LEN, PIN_ACC);
	mr_pin_stats_get(&s0);
	mr2 = drnic_reg_mr(p->a.pd, ab + 4096, 4096, PIN_ACC);
	TEST_ASSERT(mr != NULL && mr2 != NULL, "reg_mr twice");
	mr_pin_stats_get(&s1);
	TEST_ASSERT_EQUAL(s1.bytes_moved, s0.bytes_moved, "nothing copied again");
	TEST_ASSERT_EQUAL(s1.windows, s0.windows + 1, "a second window");
	ab[4096] = 0x77;
	if (pin_op(&p->a, DRNIC_WR_RDMA_WRITE, ab + 4096, 1, drnic_mr_lkey(mr2), (uintptr_t)b,
		   drnic_mr_rkey(p->b.mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT_EQUAL(b[0], 0x77, "through the second MR's window");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr2), "dereg");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	/* ... also once no MR holds them. */
	mr = drnic_reg_mr(p->a.pd, ab, PIN_LEN, PIN_ACC);
	TEST_ASSERT(mr != NULL, "reg_mr again");
	mr_pin_stats_get(&s1);
	TEST_ASSERT_EQUAL(s1.bytes_moved, s0.bytes_moved, "nothing copied again");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	TEST_ASSERT(ab[4096] == 0x77 && pin_same(ab, 4096, 12, 0), "the bytes kept");
	TEST_ASSERT_SUCCESS(munmap(ab, PIN_LEN), "munmap");

	if (pin_sysv(p) != TEST_SUCCESS)
		return TEST_FAILED;

	/* A buffer on pages shared with other data stays where it is. */
	heap = malloc(PIN_LEN + 64);
	TEST_ASSERT(heap != NULL, "malloc");
	mr_pin_stats_get(&s0);
	mr = drnic_reg_mr(p->a.pd, heap + 16, PIN_LEN, PIN_ACC);
	TEST_ASSERT(mr != NULL, "reg_mr");
	mr_pin_stats_get(&s1);
	TEST_ASSERT(s1.windows == s0.windows && s1.unpinned == s0.unpinned + 1 &&
		    s1.bytes_moved == s0.bytes_moved, "not moved");
	memset(heap + 16, 0x33, 64);
	if (pin_op(&p->a, DRNIC_WR_RDMA_WRITE, heap + 16, 64, drnic_mr_lkey(mr), (uintptr_t)b,
		   drnic_mr_rkey(p->b.mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT(b[0] == 0x33 && b[63] == 0x33, "its bytes on the wire");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	free(heap);
	return TEST_SUCCESS;
}

/* mr_pin = auto: System V memory pinned, private pages left where they are. */
static int
pin_auto_body(struct rnic_pair *p)
{
	struct mr_pin_stats s0, s1;
	struct drnic_mr *mr;
	uint8_t *ab;

	if (pin_sysv(p) != TEST_SUCCESS)
		return TEST_FAILED;
	ab = mmap(NULL, PIN_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(ab != MAP_FAILED, "mmap");
	mr_pin_stats_get(&s0);
	mr = drnic_reg_mr(p->a.pd, ab, PIN_LEN, PIN_ACC);
	TEST_ASSERT(mr != NULL, "reg_mr");
	mr_pin_stats_get(&s1);
	TEST_ASSERT(s1.windows == s0.windows && s1.bytes_moved == s0.bytes_moved &&
		    s1.unpinned == s0.unpinned + 1, "private pages not moved");
	memset(ab, 0x44, 100);
	if (pin_op(&p->a, DRNIC_WR_RDMA_WRITE, ab, 100, drnic_mr_lkey(mr), (uintptr_t)p->b.buf,
		   drnic_mr_rkey(p->b.mr), DRNIC_WC_SUCCESS) != TEST_SUCCESS)
		return TEST_FAILED;
	TEST_ASSERT(p->b.buf[0] == 0x44 && p->b.buf[99] == 0x44, "its bytes on the wire");
	TEST_ASSERT_SUCCESS(drnic_dereg_mr(mr), "dereg");
	TEST_ASSERT_SUCCESS(munmap(ab, PIN_LEN), "munmap");
	return TEST_SUCCESS;
}

static int
pin_run(enum drnic_progress_mode mode, const char *pin, int (*body)(struct rnic_pair *))
{
	struct rnic_pair_opts o = { .mode = mode, .mr_pin = pin };
	struct rnic_pair p;
	int rc;

	TEST_ASSERT_SUCCESS(rnic_pair_open(&p, &o), "pair");
	rc = body(&p);
	rnic_pair_close(&p);
	return rc;
}

static int
rnic_pin_inline(void)
{
	TEST_ASSERT_SUCCESS(pin_run(DRNIC_PROGRESS_INLINE, "on", pin_body), "mr_pin = on");
	return pin_run(DRNIC_PROGRESS_INLINE, NULL, pin_auto_body);
}

static int
rnic_pin_dedicated(void)
{
	TEST_ASSERT_SUCCESS(pin_run(DRNIC_PROGRESS_DEDICATED, "on", pin_body), "mr_pin = on");
	return pin_run(DRNIC_PROGRESS_DEDICATED, NULL, pin_auto_body);
}

DRNIC_TEST_REGISTER(rnic_pin_inline_autotest, DRNIC_TEST_FAST, rnic_pin_inline);
DRNIC_TEST_REGISTER(rnic_pin_dedicated_autotest, DRNIC_TEST_FAST, rnic_pin_dedicated);
