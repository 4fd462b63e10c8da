/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registered memory with a mapping of its own: what pinning is to a NIC.
 *
 * A NIC reaches registered memory through pinned pages: a program that
 * unmaps a buffer it has not deregistered yet (UCX's registration cache
 * does, by design) loses only its own view; the pages stay, and the NIC
 * may still write there until the deregistration. drnic's engines are
 * threads of the program, and reached registered memory through the
 * program's mapping: a datagram delivered into such a buffer faulted.
 *
 * So at registration the MR gets a window of its own onto its pages, which
 * its engines use: a second mapping of the same memory (mremap() with an
 * old size of 0 duplicates a shared mapping; System V shared memory is
 * attached again). Pages in a shared mapping (a memfd, a file mapped
 * shared, System V memory) are mapped so as they are; pages in a private
 * mapping first move onto a memfd: their contents are copied into it, and
 * it is mapped over the same range (MAP_FIXED, each piece with the
 * protection it had), which makes them shared. Unmapping the program's
 * range leaves the window; the deregistration (after the engines' fence)
 * unmaps it. Pages moved once are shared: a later registration maps them
 * again without a copy. The same memfds are what a daemon's engines will
 * map (issue 17).
 *
 * What moves, with mr_pin = on only (auto leaves private pages where they
 * are: a move is for good, and what it guards against is a program
 * breaking the verbs rules): the whole pages of a registration that starts
 * and ends on page boundaries, private mappings only (heap, anonymous, a
 * file's private pages), not the stack, not huge pages. A page that the
 * registration shares with other data is not moved: another thread may
 * write its neighbours while it is copied, and that write would be lost. Such a
 * registration, or one of memory DPDK owns (drnic_alloc(): never unmapped
 * while drnic runs), or one on demand (ODP pins nothing, by definition),
 * keeps using the program's mapping, as before.
 *
 * What it means for the program: the moved pages are a shared mapping;
 * they are marked MADV_DONTFORK, as ibv_fork_init() marks registered
 * memory, so a child has no such pages (and sees no write of the parent).
 * A store into the buffer by another thread during its registration (the
 * copy) is lost. The first registration costs a copy of the buffer.
 *
 * No descriptor is kept: the memfd lives as long as a mapping of it does
 * (the program's, a window). Control path only, under one mutex.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#include <rte_common.h>
#include <rte_memory.h>

#include "verbs_objects.h"
#include "mr_pin.h"

#define PIN_NAME "drnic-mr"
#define PIN_MAX_VMAS 64

/*
 * The mappings are made with the system calls themselves, not libc's
 * wrappers: UCX's memory hooks (ucm) patch those, and took the mapping
 * over a buffer its registration cache was registering for the program
 * unmapping it: the cache then dropped the registration, registered the
 * buffer again, and UD endpoints timed out (ucx_perftest tag_lat). To the
 * program nothing changes at these addresses.
 */
static void *
pin_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, a, len, prot, flags, fd, off);
}

static int
pin_munmap(void *a, size_t len)
{
	return (int)syscall(SYS_munmap, a, len);
}

static void *
pin_mremap(void *old, size_t old_len, size_t len, int flags, void *to)
{
	return (void *)syscall(SYS_mremap, old, old_len, len, flags, to);
}

static void
pin_dontfork(void *a, size_t len)
{
	(void)syscall(SYS_madvise, a, len, MADV_DONTFORK);
}

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mr_pin_stats pin_stats;

/* One line of /proc/self/maps. */
struct pin_vma {
	uintptr_t start, end;
	uint64_t off, ino;        /* for System V memory: offset in it, its id */
	char perm[5];
	char path[64];
};

/* The mappings of process @p pid (0: this one) over [start, end), in
 * order, into @p v (at most @p max); their number, or -1 when the range
 * has a hole or is too fragmented. */
static int
pin_vmas_of(pid_t pid, uintptr_t start, uintptr_t end, struct pin_vma *v, int max)
{
	char line[512], path[64];
	FILE *f;
	int n = 0;
	uintptr_t cur = start;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/maps");
	else
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	while (cur < end && fgets(line, sizeof(line), f) != NULL) {
		struct pin_vma x = { 0 };
		int pos = 0;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %" SCNx64 " %*x:%*x %" SCNu64 " %n",
			   &x.start, &x.end, x.perm, &x.off, &x.ino, &pos) < 5)
			continue;
		if (x.end <= cur)
			continue;
		if (x.start > cur || n == max) {
			n = -1;   /* a hole, or more pieces than we keep */
			break;
		}
		if (pos > 0)
			snprintf(x.path, sizeof(x.path), "%.*s", (int)strcspn(line + pos, "\n"),
				 line + pos);
		v[n++] = x;
		cur = x.end;
	}
	fclose(f);
	return cur >= end ? n : -1;
}

static int
pin_vmas(uintptr_t start, uintptr_t end, struct pin_vma *v, int max)
{
	return pin_vmas_of(0, start, end, v, max);
}

static int
pin_prot(const char *perm)
{
	return (perm[0] == 'r' ? PROT_READ : 0) | (perm[1] == 'w' ? PROT_WRITE : 0) |
	       (perm[2] == 'x' ? PROT_EXEC : 0);
}

/* Can the private pages of mapping @p v move onto a memfd? */
static bool
pin_movable(const struct pin_vma *v)
{
	if (v->perm[0] != 'r')
		return false;   /* unreadable: nothing to copy from */
	if (v->path[0] == '[' && strcmp(v->path, "[heap]") != 0)
		return false;   /* the stack, vdso, vvar, vsyscall */
	if (strstr(v->path, "hugepage") != NULL)
		return false;   /* MAP_HUGETLB */
	return true;
}

/* Move [a, b), private pages of mapping @p v, onto a new memfd: copy them
 * into it, then map it over the range with their protection. The memfd
 * lives on in that mapping. 0 or -1 (the range then as it was). */
static int
pin_move(uintptr_t a, uintptr_t b, const struct pin_vma *v)
{
	size_t len = b - a, done = 0;
	ssize_t w;
	int fd, rc = -1;

	fd = memfd_create(PIN_NAME, MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	/* The memfd's pages allocated in one call first, then filled with
	 * write(): no page fault each (perf_mr_pin_autotest: 16 MiB registered
	 * in 34-44 ms, against 59-60 ms with a copy through a mapping), and
	 * none of write()'s allocation page by page (256 MiB: 23 ms + 38 ms
	 * of copy, against 203-478 ms for write() alone). Without it
	 * (fallocate() refused) write() allocates as it goes. */
	(void)fallocate(fd, 0, 0, (off_t)len);
	while (done < len) {
		w = pwrite(fd, (const void *)(a + done), len - done, (off_t)done);
		if (w <= 0)
			goto out;
		done += (size_t)w;
	}
	if (pin_mmap((void *)a, len, pin_prot(v->perm), MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED)
		goto out;
	pin_dontfork((void *)a, len);
	pin_stats.moves++;
	pin_stats.bytes_moved += len;
	rc = 0;
out:
	close(fd);
	return rc;
}

/*
 * System V shared memory (UCX allocates its receive buffers there, in huge
 * pages: mremap() does not duplicate those): the segment whose id
 * /proc/self/maps shows as the inode, attached once more, whole (Linux
 * attaches a segment already marked for removal). 0 or -1.
 */
static int
pin_shm(const struct pin_vma *v, uintptr_t a, struct mr_pin_map *m)
{
	void *base;

	if (strncmp(v->path, "/SYSV", 5) != 0 || v->ino > INT32_MAX || v->off > v->start)
		return -1;
	base = (void *)syscall(SYS_shmat, (int)v->ino, NULL, v->perm[1] == 'w' ? 0 : SHM_RDONLY);
	if (base == (void *)-1)
		return -1;
	pin_dontfork(base, v->end - v->start);
	m->window = base;
	m->window_len = 0;
	m->shm = true;
	m->host = (uintptr_t)base + (a - (v->start - v->off));
	return 0;
}

int
mr_pin_get(void *addr, size_t len, bool move, struct mr_pin_map *m)
{
	uintptr_t a = (uintptr_t)addr, pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = RTE_ALIGN_FLOOR(a, pg), e = RTE_ALIGN_CEIL(a + len, pg);
	struct pin_vma v[PIN_MAX_VMAS];
	uint8_t *win = MAP_FAILED;
	int n, i;

	memset(m, 0, sizeof(*m));
	m->host = a;
	if (len == 0 || rte_mem_virt2memseg_list(addr) != NULL)
		return 0;   /* nothing to pin, or DPDK's memory */
	pthread_mutex_lock(&pin_lock);
	n = pin_vmas(s, e, v, PIN_MAX_VMAS);
	if (n <= 0)
		goto unpinned;
	if (n == 1 && v[0].perm[3] == 's' && pin_shm(&v[0], a, m) == 0)
		goto pinned;
	/* Every piece shared, or private pages of this registration alone
	 * (it starts and ends there) that can move. */
	for (i = 0; i < n; i++) {
		if (v[i].perm[3] == 's')
			continue;
		if (!move || !pin_movable(&v[i]) || a != s || a + len != e)
			goto unpinned;
	}
	for (i = 0; i < n; i++)
		if (v[i].perm[3] != 's' &&
		    pin_move(RTE_MAX(v[i].start, s), RTE_MIN(v[i].end, e), &v[i]) < 0)
			goto unpinned;
	/* The window: a second mapping of each piece, in place. */
	win = pin_mmap(NULL, e - s, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (win == MAP_FAILED)
		goto unpinned;
	for (i = 0; i < n; i++) {
		uintptr_t ps = RTE_MAX(v[i].start, s), pe = RTE_MIN(v[i].end, e);

		if (pin_mremap((void *)ps, 0, pe - ps, MREMAP_MAYMOVE | MREMAP_FIXED,
			       win + (ps - s)) == MAP_FAILED)
			goto unpinned;
	}
	pin_dontfork(win, e - s);
	m->window = win;
	m->window_len = e - s;
	m->host = (uintptr_t)win + (a - s);
pinned:
	pin_stats.windows++;
	pthread_mutex_unlock(&pin_lock);
	return 1;
unpinned:
	if (win != MAP_FAILED)
		pin_munmap(win, e - s);
	pin_stats.unpinned++;
	pthread_mutex_unlock(&pin_lock);
	memset(m, 0, sizeof(*m));
	m->host = a;
	return 0;
}

int
mr_pin_share(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = RTE_ALIGN_FLOOR(a, pg), e = RTE_ALIGN_CEIL(a + len, pg);
	struct pin_vma v[PIN_MAX_VMAS];
	int n, i, rc = 0;

	if (len == 0)
		return 0;
	pthread_mutex_lock(&pin_lock);
	n = pin_vmas(s, e, v, PIN_MAX_VMAS);
	if (n <= 0)
		rc = -EFAULT;
	for (i = 0; rc == 0 && i < n; i++)
		if (v[i].perm[3] != 's' && !pin_movable(&v[i]))
			rc = -EFAULT;
	for (i = 0; rc == 0 && i < n; i++)
		if (v[i].perm[3] != 's' &&
		    pin_move(RTE_MAX(v[i].start, s), RTE_MIN(v[i].end, e), &v[i]) < 0)
			rc = -ENOMEM;
	pthread_mutex_unlock(&pin_lock);
	return rc;
}

int
mr_pin_get_pid(pid_t pid, void *addr, size_t len, bool write, struct mr_pin_map *m)
{
	uintptr_t a = (uintptr_t)addr, pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = RTE_ALIGN_FLOOR(a, pg), e = RTE_ALIGN_CEIL(a + len, pg);
	struct pin_vma v[PIN_MAX_VMAS];
	uint8_t *win;
	int n, i, rc = 0;

	memset(m, 0, sizeof(*m));
	if (len == 0 || a + len < a) {
		m->host = a;
		return len == 0 ? 0 : -EINVAL;
	}
	pthread_mutex_lock(&pin_lock);
	n = pin_vmas_of(pid, s, e, v, PIN_MAX_VMAS);
	if (n <= 0)
		rc = -EFAULT;   /* a hole in its memory */
	for (i = 0; rc == 0 && i < n; i++)
		if (v[i].perm[3] != 's' || v[i].perm[0] != 'r' || (write && v[i].perm[1] != 'w'))
			rc = -EFAULT;   /* private, unreadable, or read-only asked to be written */
	win = rc == 0 ? pin_mmap(NULL, e - s, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) : MAP_FAILED;
	if (rc == 0 && win == MAP_FAILED)
		rc = -ENOMEM;
	for (i = 0; rc == 0 && i < n; i++) {
		uintptr_t ps = RTE_MAX(v[i].start, s), pe = RTE_MIN(v[i].end, e);
		char path[96];
		int fd;

		/* Its own file (a memfd, a file, hugetlbfs, a System V
		 * segment), opened through the process's view of it. */
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIxPTR "-%" PRIxPTR, (int)pid,
			 v[i].start, v[i].end);
		fd = open(path, (v[i].perm[1] == 'w' ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			break;
		}
		if (pin_mmap(win + (ps - s), pe - ps, pin_prot(v[i].perm) & (PROT_READ | PROT_WRITE),
			     MAP_SHARED | MAP_FIXED, fd, (off_t)(v[i].off + (ps - v[i].start))) ==
		    MAP_FAILED)
			rc = -errno;
		close(fd);
	}
	if (rc < 0) {
		if (win != MAP_FAILED)
			pin_munmap(win, e - s);
		pthread_mutex_unlock(&pin_lock);
		return rc;
	}
	pin_dontfork(win, e - s);
	m->window = win;
	m->window_len = e - s;
	m->host = (uintptr_t)win + (a - s);
	pin_stats.windows++;
	pthread_mutex_unlock(&pin_lock);
	return 0;
}

void
mr_pin_put(struct mr_pin_map *m)
{
	if (m->window == NULL)
		return;
	pthread_mutex_lock(&pin_lock);
	if (m->shm)
		(void)syscall(SYS_shmdt, m->window);
	else
		pin_munmap(m->window, m->window_len);
	pin_stats.windows--;
	pthread_mutex_unlock(&pin_lock);
	m->window = NULL;
}

void
mr_pin_stats_get(struct mr_pin_stats *st)
{
	pthread_mutex_lock(&pin_lock);
	*st = pin_stats;
	pthread_mutex_unlock(&pin_lock);
}
