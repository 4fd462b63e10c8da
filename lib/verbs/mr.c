/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory: the buffer allocator, protection domains and memory regions with
 * generation-tagged keys that are not guessable and not soon reused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "mr_pin.h"
#include "verbs_objects.h"
#include "verbs_remote.h"
#include "verbs_daemon.h"

#define MR_ACCESS_KNOWN (DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE | \
			 DRNIC_ACCESS_REMOTE_READ | DRNIC_ACCESS_REMOTE_ATOMIC | \
			 DRNIC_ACCESS_MW_BIND | DRNIC_ACCESS_ON_DEMAND)

/* Access that lets the engine (and so a peer) write into the MR. */
#define MR_ACCESS_WRITES (DRNIC_ACCESS_LOCAL_WRITE | DRNIC_ACCESS_REMOTE_WRITE | \
			  DRNIC_ACCESS_REMOTE_ATOMIC)

/*
 * Is [addr, addr + len) mapped, readable and, when @p write, writable, from
 * end to end? Read from /proc/self/maps (sorted by address), so nothing is
 * touched and nothing can fault: once, at registration, as ibv_reg_mr pins
 * the pages. Returns 0, -EFAULT, or the errno of reading the maps.
 */
static int
mr_probe_range(uintptr_t addr, size_t len, bool write)
{
	uint64_t cur = addr, end = (uint64_t)addr + len, start, stop;
	char *line = NULL, perm[5];
	size_t cap = 0;
	int rc = -EFAULT;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &start, &stop, perm) != 3)
			continue;
		if (stop <= cur)
			continue;
		if (start > cur || perm[0] != 'r' || (write && perm[1] != 'w'))
			break;          /* a hole, or not accessible as asked */
		cur = stop;
		if (cur >= end) {
			rc = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

void
verbs_mr_table_setup(struct drnic_device *dev)
{
	uint32_t i, n = dev->mr_tab_size;

	dev->mr_idx_bits = (uint8_t)rte_log2_u32(n);   /* rounds up */
	dev->mr_idx_mask = (UINT32_C(1) << dev->mr_idx_bits) - 1;
	if (getrandom(&dev->mr_key_seed, sizeof(dev->mr_key_seed), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(dev->mr_key_seed))
		dev->mr_key_seed = rte_rdtsc() ^ (uintptr_t)dev;
	/* Slots 1..n-1, in order (slot 0 would make key 0 valid). */
	for (i = 1; i < n; i++)
		dev->mr_tab[i].next_free = i + 1 < n ? i + 1 : 0;
	dev->mr_free = n > 1 ? 1 : 0;
	dev->mr_free_last = n > 1 ? n - 1 : 0;
}

/*
 * The generation of slot @p idx's registration number @p uses, on @p bits
 * bits: a bijection of @p uses (adds, multiplications by odd constants and
 * xor-shifts, each invertible modulo 2^bits), keyed by the device's seed
 * and the slot. So a slot's keys repeat only after 2^bits registrations,
 * and look random meanwhile (not cryptographically so). Windows' keys
 * (mw.c) take theirs from here too.
 */
uint32_t
verbs_key_gen(const struct drnic_device *dev, uint32_t idx, uint32_t uses, unsigned int bits)
{
	unsigned int half = bits / 2 + 1;
	uint64_t seed = dev->mr_key_seed;
	uint32_t mask = (uint32_t)((UINT64_C(1) << bits) - 1);
	uint32_t x;

	x = uses + (uint32_t)((idx * UINT64_C(0x9E3779B97F4A7C15) ^ seed) >> 17);
	x = (x * ((uint32_t)seed | 1)) & mask;
	x ^= x >> half;
	x = (x * ((uint32_t)(seed >> 32) | 1)) & mask;
	x ^= x >> half;
	return (x ^ (uint32_t)(seed >> 21)) & mask;
}

void *
drnic_alloc(size_t size, size_t align, int socket_id)
{
	void *p;

	if (size == 0 || (align != 0 && !rte_is_power_of_2((uint32_t)align)) ||
	    align > (1u << 30)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (verbs_remote())
		return remote_alloc(size, align, socket_id);
	p = rte_zmalloc_socket("drnic_buf", size, (unsigned int)align, socket_id);
	if (p == NULL)
		rte_errno = ENOMEM;
	return p;
}

void
drnic_free(void *buf)
{
	if (verbs_remote()) {
		remote_free(buf);
		return;
	}
	rte_free(buf);
}

struct drnic_pd *
drnic_alloc_pd(struct drnic_device *dev)
{
	struct drnic_pd *pd;

	if (verbs_remote())
		return remote_alloc_pd(dev);
	if (dev == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	if (dev->nb_pd >= dev->cfg.max_pd) {
		pthread_mutex_unlock(&dev->lock);
		rte_errno = ENOMEM;
		return NULL;
	}
	pd = rte_zmalloc_socket("drnic_pd", sizeof(*pd), 0, dev->cfg.socket_id);
	if (pd == NULL) {
		pthread_mutex_unlock(&dev->lock);
		rte_errno = ENOMEM;
		return NULL;
	}
	if (handle_add(pd, HANDLE_PD) < 0) {
		pthread_mutex_unlock(&dev->lock);
		rte_free(pd);
		rte_errno = ENOMEM;
		return NULL;
	}
	pd->dev = dev;
	pd->handle = ++dev->pd_seq;
	dev->nb_pd++;
	pthread_mutex_unlock(&dev->lock);
	return pd;
}

int
drnic_dealloc_pd(struct drnic_pd *pd)
{
	struct drnic_device *dev;

	if (verbs_remote())
		return remote_dealloc_pd(pd);
	/* Not live (NULL, freed already): nothing behind it is read. */
	if (handle_take(pd, HANDLE_PD) < 0)
		return -EINVAL;
	dev = pd->dev;
	pthread_mutex_lock(&dev->lock);
	if (atomic_load(&pd->refs) != 0) {
		pthread_mutex_unlock(&dev->lock);
		(void)handle_add(pd, HANDLE_PD);  /* cannot fail: its slot is free */
		return -EBUSY;
	}
	dev->nb_pd--;
	pthread_mutex_unlock(&dev->lock);
	rte_free(pd);
	return 0;
}

/* The engines' view of [addr, addr + length) (mr->pin.host): a window of
 * its own when the device pins and the memory can be pinned (mr_pin auto:
 * shared memory; on: private pages too, moved), the program's mapping
 * otherwise. ODP pins nothing. */
static void
mr_pin(const struct drnic_device *dev, struct drnic_mr *mr, void *addr, size_t length,
       unsigned int access)
{
	if (dev->cfg.mr_pin == 0 || (access & DRNIC_ACCESS_ON_DEMAND) != 0) {
		memset(&mr->pin, 0, sizeof(mr->pin));
		mr->pin.host = (uintptr_t)addr;
		return;
	}
	(void)mr_pin_get(addr, length, dev->cfg.mr_pin > 0, &mr->pin);
}

/* drnic_reg_mr() and drnic_reg_mr_iova(): @p iova is what keys name the
 * first byte by. @p pid not 0 (drnicd, verbs_reg_mr_of()): @p addr is
 * that process's, and the window onto it is the engines' way there. */
static struct drnic_mr *
mr_reg(struct drnic_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access,
       pid_t pid)
{
	struct drnic_device *dev;
	struct verbs_mr_slot *s;
	struct drnic_mr *mr;
	uint32_t idx, key;

	if (pd == NULL || (addr == NULL && length != 0) || (access & ~MR_ACCESS_KNOWN) != 0 ||
	    ((access & (DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_ATOMIC)) != 0 &&
	     (access & DRNIC_ACCESS_LOCAL_WRITE) == 0) ||
	    (uintptr_t)addr + length < (uintptr_t)addr || iova + length < iova) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (verbs_remote())
		return remote_reg_mr(pd, addr, length, iova, access);
	if (length != 0 && pid == 0) {
		int rc = mr_probe_range((uintptr_t)addr, length, (access & MR_ACCESS_WRITES) != 0);

		if (rc < 0) {
			rte_errno = -rc;
			return NULL;
		}
	}
	dev = pd->dev;
	mr = rte_zmalloc_socket("drnic_mr", sizeof(*mr), 0, dev->cfg.socket_id);
	if (mr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (pid != 0) {
		int rc = mr_pin_get_pid(pid, addr, length, (access & MR_ACCESS_WRITES) != 0,
					&mr->pin);

		if (rc < 0) {
			rte_free(mr);
			rte_errno = -rc;
			return NULL;
		}
	} else {
		mr_pin(dev, mr, addr, length, access);
	}
	pthread_mutex_lock(&dev->lock);
	idx = dev->mr_free;
	if (idx == 0 || handle_add(mr, HANDLE_MR) < 0) {
		pthread_mutex_unlock(&dev->lock);
		mr_pin_put(&mr->pin);
		rte_free(mr);
		rte_errno = ENOMEM;
		return NULL;
	}
	s = &dev->mr_tab[idx];
	dev->mr_free = s->next_free;
	if (dev->mr_free == 0)
		dev->mr_free_last = 0;
	/* Bit 31 stays clear: it marks windows' keys. */
	key = verbs_key_gen(dev, idx, s->uses++, 31 - dev->mr_idx_bits) << dev->mr_idx_bits | idx;
	s->access = access;
	s->addr = mr->pin.host;
	s->length = length;
	s->iova = iova;
	s->pd = pd;
	s->mr = mr;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->iova = iova;
	mr->access = access;
	mr->lkey = mr->rkey = key;
	if (iova != mr->pin.host)
		atomic_store(&dev->mr_iova_any, true);   /* before the key is live */
	/* Fields first, key last: an engine that sees the key sees them. */
	atomic_store_explicit(&s->key, key, memory_order_release);
	atomic_fetch_add(&pd->refs, 1);
	dev->nb_mr++;
	pthread_mutex_unlock(&dev->lock);
	return mr;
}

struct drnic_mr *
drnic_reg_mr(struct drnic_pd *pd, void *addr, size_t length, unsigned int access)
{
	return mr_reg(pd, addr, length, (uintptr_t)addr, access, 0);
}

struct drnic_mr *
verbs_reg_mr_of(struct drnic_pd *pd, pid_t pid, void *addr, size_t length, uint64_t iova,
		unsigned int access)
{
	if (pid <= 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	return mr_reg(pd, addr, length, iova, access, pid);
}

struct drnic_mr *
drnic_reg_mr_iova(struct drnic_pd *pd, void *addr, size_t length, uint64_t iova,
		  unsigned int access)
{
	return mr_reg(pd, addr, length, iova, access, 0);
}

int
drnic_dereg_mr(struct drnic_mr *mr)
{
	struct drnic_device *dev;
	struct verbs_mr_slot *s;
	uint32_t idx;

	if (verbs_remote())
		return remote_dereg_mr(mr);
	/* Not live (NULL, deregistered already): nothing behind it is read. */
	if (handle_take(mr, HANDLE_MR) < 0)
		return -EINVAL;
	dev = mr->pd->dev;
	idx = mr->lkey & dev->mr_idx_mask;
	pthread_mutex_lock(&dev->lock);
	s = &dev->mr_tab[idx];
	if (s->mr != mr || atomic_load(&s->key) != mr->lkey) {
		pthread_mutex_unlock(&dev->lock);
		return -EINVAL;
	}
	/* Key first: from now on the key fails, whatever follows. Then the
	 * windows bound to it: an engine binding one counts it, then checks
	 * the key (verbs_mw_bind(), both sequentially consistent), so one of
	 * the two sees the other. A bound MR stays registered (EBUSY). */
	atomic_store_explicit(&s->key, 0, memory_order_seq_cst);
	if (atomic_load_explicit(&s->mw_binds, memory_order_seq_cst) != 0) {
		atomic_store_explicit(&s->key, mr->lkey, memory_order_release);
		pthread_mutex_unlock(&dev->lock);
		(void)handle_add(mr, HANDLE_MR);  /* cannot fail: its slot is free */
		return -EBUSY;
	}
	s->mr = NULL;
	/* Last in the FIFO: the slot (and so a key like this one) comes back
	 * after every other free slot. */
	s->next_free = 0;
	if (dev->mr_free_last != 0)
		dev->mr_tab[dev->mr_free_last].next_free = idx;
	else
		dev->mr_free = idx;
	dev->mr_free_last = idx;
	dev->nb_mr--;
	atomic_fetch_sub(&mr->pd->refs, 1);
	pthread_mutex_unlock(&dev->lock);
	/* The key fails from now on; an engine may be between its check and
	 * its copy: once every engine has ended its step, none touches the
	 * memory again (engines check keys on every access), and WQEs that
	 * still needed it complete with a protection error. */
	if (dev->engines_attached)
		verbs_engine_ops()->dev_fence(dev);
	mr_pin_put(&mr->pin);    /* after the fence: the window goes */
	rte_free(mr);
	return 0;
}

/* The arguments of drnic_rereg_mr(), as the MR will be: checked before the
 * MR changes at all. 0, -EINVAL or -EFAULT. @p pid not 0 (drnicd): the
 * memory is that process's, which the window (mr_rereg_pin_of()) checks. */
static int
mr_rereg_check(const struct drnic_mr *mr, unsigned int flags, const struct drnic_pd *pd,
	       void *addr, size_t length, unsigned int access, pid_t pid)
{
	bool probe = (flags & DRNIC_REREG_MR_CHANGE_TRANSLATION) != 0;

	if (flags == 0 || (flags & ~DRNIC_REREG_MR_KNOWN) != 0)
		return -EINVAL;
	if ((flags & DRNIC_REREG_MR_CHANGE_PD) &&
	    (!handle_live(pd, HANDLE_PD) || pd->dev != mr->pd->dev))
		return -EINVAL;
	if (flags & DRNIC_REREG_MR_CHANGE_TRANSLATION) {
		if ((addr == NULL && length != 0) || (uintptr_t)addr + length < (uintptr_t)addr)
			return -EINVAL;
	} else {
		addr = mr->addr;
		length = mr->length;
	}
	if (flags & DRNIC_REREG_MR_CHANGE_ACCESS) {
		if ((access & ~MR_ACCESS_KNOWN) != 0 ||
		    ((access & (DRNIC_ACCESS_REMOTE_WRITE | DRNIC_ACCESS_REMOTE_ATOMIC)) != 0 &&
		     (access & DRNIC_ACCESS_LOCAL_WRITE) == 0))
			return -EINVAL;
		/* Memory that becomes writable must be writable. */
		probe |= (access & MR_ACCESS_WRITES) && !(mr->access & MR_ACCESS_WRITES);
	} else {
		access = mr->access;
	}
	if (probe && length != 0 && pid == 0)
		return mr_probe_range((uintptr_t)addr, length, (access & MR_ACCESS_WRITES) != 0);
	return 0;
}

/*
 * drnicd: the window a rereg of process @p pid's MR needs, made before the
 * MR changes (a failure leaves it as it was). 1 and @p pin made: a new
 * translation of the program's own memory (@p own), or its window made
 * again writable; 0: none needed (DPDK memory is the same in both
 * processes); or a negative errno.
 */
static int
mr_rereg_pin_of(const struct drnic_mr *mr, unsigned int flags, void *addr, size_t length,
		unsigned int access, pid_t pid, bool own, struct mr_pin_map *pin)
{
	bool window = mr->pin.window != NULL;
	int rc;

	if (flags & DRNIC_REREG_MR_CHANGE_TRANSLATION) {
		window = own && length != 0;
	} else {
		addr = mr->addr;
		length = mr->length;
		/* Only a window that must now be written is made again. */
		if (!(flags & DRNIC_REREG_MR_CHANGE_ACCESS) || !(access & MR_ACCESS_WRITES) ||
		    (mr->access & MR_ACCESS_WRITES))
			return 0;
	}
	if (!(flags & DRNIC_REREG_MR_CHANGE_ACCESS))
		access = mr->access;
	if (!window) {
		memset(pin, 0, sizeof(*pin));
		pin->host = (uintptr_t)addr;
		return (flags & DRNIC_REREG_MR_CHANGE_TRANSLATION) ? 1 : 0;
	}
	rc = mr_pin_get_pid(pid, addr, length, (access & MR_ACCESS_WRITES) != 0, pin);
	return rc < 0 ? rc : 1;
}

/* drnic_rereg_mr(); @p pid not 0: drnicd's, of that process's MR, @p own
 * when the new translation is the program's own memory. */
static int
mr_rereg(struct drnic_mr *mr, unsigned int flags, struct drnic_pd *pd, void *addr,
	 size_t length, unsigned int access, pid_t pid, bool own)
{
	struct mr_pin_map pin_of;
	struct drnic_device *dev;
	struct verbs_mr_slot *s;
	uint32_t idx, key;
	int rc, repin = 0;

	if (!handle_live(mr, HANDLE_MR))
		return -EINVAL;
	rc = mr_rereg_check(mr, flags, pd, addr, length, access, pid);
	if (rc < 0)
		return rc;
	if (pid != 0) {
		repin = mr_rereg_pin_of(mr, flags, addr, length, access, pid, own, &pin_of);
		if (repin < 0)
			return repin;
	}
	dev = mr->pd->dev;
	idx = mr->lkey & dev->mr_idx_mask;
	s = &dev->mr_tab[idx];
	pthread_mutex_lock(&dev->lock);
	if (s->mr != mr || atomic_load(&s->key) != mr->lkey) {
		pthread_mutex_unlock(&dev->lock);
		if (repin > 0)
			mr_pin_put(&pin_of);
		return -EINVAL;
	}
	/* The old keys fail from now on ... */
	atomic_store_explicit(&s->key, 0, memory_order_release);
	pthread_mutex_unlock(&dev->lock);
	/* ... and once every engine has ended its step, none touches the old
	 * translation again (as drnic_dereg_mr()). */
	if (dev->engines_attached)
		verbs_engine_ops()->dev_fence(dev);
	/* A new translation gets a window of its own. */
	if (repin > 0) {
		mr_pin_put(&mr->pin);
		mr->pin = pin_of;
	} else if (pid == 0 && (flags & DRNIC_REREG_MR_CHANGE_TRANSLATION)) {
		mr_pin_put(&mr->pin);
		mr_pin(dev, mr, addr, length,
		       (flags & DRNIC_REREG_MR_CHANGE_ACCESS) ? access : mr->access);
	}
	pthread_mutex_lock(&dev->lock);
	if (flags & DRNIC_REREG_MR_CHANGE_PD) {
		atomic_fetch_add(&pd->refs, 1);
		atomic_fetch_sub(&mr->pd->refs, 1);
		mr->pd = pd;
	}
	if (flags & DRNIC_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
		mr->iova = (uintptr_t)addr;
	}
	if (flags & DRNIC_REREG_MR_CHANGE_ACCESS)
		mr->access = access;
	/* New keys: the slot's next generation (a key of the old registration
	 * never matches the new one). */
	key = verbs_key_gen(dev, idx, s->uses++, 31 - dev->mr_idx_bits) << dev->mr_idx_bits | idx;
	s->access = mr->access;
	s->addr = mr->pin.host;
	s->length = mr->length;
	s->iova = mr->iova;
	s->pd = mr->pd;
	mr->lkey = mr->rkey = key;
	if (mr->iova != mr->pin.host)
		atomic_store(&dev->mr_iova_any, true);   /* before the key is live */
	atomic_store_explicit(&s->key, key, memory_order_release);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int
drnic_rereg_mr(struct drnic_mr *mr, unsigned int flags, struct drnic_pd *pd, void *addr,
	       size_t length, unsigned int access)
{
	if (verbs_remote())
		return remote_rereg_mr(mr, flags, pd, addr, length, access);
	return mr_rereg(mr, flags, pd, addr, length, access, 0, false);
}

int
verbs_rereg_mr_of(struct drnic_mr *mr, pid_t pid, unsigned int flags, struct drnic_pd *pd,
		  void *addr, size_t length, unsigned int access, bool own)
{
	if (pid <= 0)
		return -EINVAL;
	return mr_rereg(mr, flags, pd, addr, length, access, pid, own);
}

/*
 * Is SGE @p sg (an address as posted: the MR's iova space) inside an ODP
 * MR of @p pd, with @p access? 0 and *@p at the caller's own address of its
 * first byte (the MR's addr: its window, when pinned, is the engines'), or
 * the drnic_advise_mr() error. Under dev->lock in embedded mode. A process
 * attached to drnicd cannot take the daemon's lock: it reads the slot as
 * the engines do, the key before and after the fields (an MR deregistered
 * meanwhile by another of its threads is still mapped memory, and the
 * second key load discards what was read).
 */
static int
mr_advise_check(const struct drnic_device *dev, const struct drnic_pd *pd,
		const struct drnic_sge *sg, uint32_t access, uint64_t *at)
{
	uint32_t idx = sg->lkey & dev->mr_idx_mask;
	const struct verbs_mr_slot *s;
	uint64_t iova, len, base;
	const struct drnic_pd *mpd;
	uint32_t macc;

	if (idx == 0 || idx >= dev->mr_tab_size)
		return -EFAULT;
	s = &dev->mr_tab[idx];
	if (atomic_load_explicit(&((struct verbs_mr_slot *)s)->key, memory_order_acquire) !=
	    sg->lkey)
		return -EFAULT;
	mpd = s->pd;
	macc = s->access;
	iova = s->iova;
	len = s->length;
	base = (uintptr_t)s->mr->addr;
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&((struct verbs_mr_slot *)s)->key, memory_order_relaxed) !=
	    sg->lkey)
		return -EFAULT;
	if (mpd != pd || !(macc & DRNIC_ACCESS_ON_DEMAND))
		return -EINVAL;
	if ((macc & access) != access)
		return -EPERM;
	if (sg->addr < iova || sg->length > len || sg->addr - iova > len - sg->length)
		return -EFAULT;
	*at = base + (sg->addr - iova);
	return 0;
}

/* mr_advise_check() under dev->lock, which only the device's own process
 * takes. */
static int
mr_advise_sge(struct drnic_device *dev, const struct drnic_pd *pd, const struct drnic_sge *sg,
	      uint32_t access, uint64_t *at)
{
	int rc;

	if (verbs_remote())
		return mr_advise_check(dev, pd, sg, access, at);
	pthread_mutex_lock(&dev->lock);
	rc = mr_advise_check(dev, pd, sg, access, at);
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

/* Fault the pages of [addr, addr + len) in, readable or writable. */
static void
mr_prefetch(uint64_t addr, uint64_t len, bool write)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = addr & ~(pg - 1), end = RTE_ALIGN_CEIL(addr + len, pg);

	if (len == 0)
		return;
	if (madvise((void *)(uintptr_t)start, end - start,
		    write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) != 0)
		(void)madvise((void *)(uintptr_t)start, end - start, MADV_WILLNEED);
}

int
drnic_advise_mr(struct drnic_pd *pd, int advice, uint32_t flags,
		const struct drnic_sge *sg_list, uint32_t num_sge)
{
	uint32_t access = advice == DRNIC_ADVISE_MR_PREFETCH_WRITE ? DRNIC_ACCESS_LOCAL_WRITE : 0;
	struct drnic_device *dev;
	uint64_t at;
	uint32_t i;
	int rc = 0;

	if (!handle_live(pd, HANDLE_PD) || (flags & ~DRNIC_ADVISE_MR_FLAG_FLUSH) != 0 ||
	    num_sge == 0 || sg_list == NULL)
		return -EINVAL;
	if (advice < DRNIC_ADVISE_MR_PREFETCH || advice > DRNIC_ADVISE_MR_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	dev = pd->dev;
	for (i = 0; i < num_sge && rc == 0; i++)
		rc = mr_advise_sge(dev, pd, &sg_list[i], access, &at);
	if (rc < 0 || advice == DRNIC_ADVISE_MR_PREFETCH_NO_FAULT)
		return rc;   /* present pages are the engines' already */
	for (i = 0; i < num_sge; i++)
		if (mr_advise_sge(dev, pd, &sg_list[i], access, &at) == 0)
			mr_prefetch(at, sg_list[i].length, access != 0);
	return 0;
}

uint32_t
drnic_mr_lkey(const struct drnic_mr *mr)
{
	return mr != NULL ? mr->lkey : 0;
}

uint32_t
drnic_mr_rkey(const struct drnic_mr *mr)
{
	return mr != NULL ? mr->rkey : 0;
}

void *
drnic_mr_addr(const struct drnic_mr *mr)
{
	return mr != NULL ? mr->addr : NULL;
}

size_t
drnic_mr_length(const struct drnic_mr *mr)
{
	return mr != NULL ? mr->length : 0;
}

/* The key checks: @p addr in the MR's host space (@p remote false) or its
 * iova space (true); *va_out the host address. */
static inline int
mr_check(struct drnic_device *dev, const struct drnic_pd *pd, uint32_t key, uint64_t addr,
	 uint64_t len, uint32_t access, uint8_t **va_out, bool remote)
{
	uint32_t idx = key & dev->mr_idx_mask;
	const struct verbs_mr_slot *s;
	uint64_t start, host, mlen;
	uint32_t macc;
	const struct drnic_pd *mpd;

	if (idx == 0 || idx >= dev->mr_tab_size)
		return -ENOENT;
	s = &dev->mr_tab[idx];
	if (atomic_load_explicit(&((struct verbs_mr_slot *)s)->key, memory_order_acquire) != key)
		return -ENOENT;
	host = s->addr;
	start = remote ? s->iova : host;
	mlen = s->length;
	macc = s->access;
	mpd = s->pd;
	/* Seqlock check: the slot was not deregistered (and maybe reused) while
	 * we read it. */
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&((struct verbs_mr_slot *)s)->key, memory_order_relaxed) != key)
		return -ENOENT;
	if (mpd != pd || (macc & access) != access)
		return -EPERM;
	if (addr < start || len > mlen || addr - start > mlen - len)
		return -ERANGE;
	*va_out = (uint8_t *)(uintptr_t)(host + (addr - start));
	return 0;
}

int
verbs_mr_check(struct drnic_device *dev, const struct drnic_pd *pd, uint32_t key,
	       uint64_t addr, uint64_t len, uint32_t access, uint8_t **va_out)
{
	return mr_check(dev, pd, key, addr, len, access, va_out, false);
}

int
verbs_mr_check_remote(struct drnic_device *dev, const struct drnic_pd *pd, uint32_t key,
		      uint64_t iova, uint64_t len, uint32_t access, uint8_t **va_out)
{
	return mr_check(dev, pd, key, iova, len, access, va_out, true);
}

void
verbs_sge_to_host(struct drnic_device *dev, struct drnic_sge *sge, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint32_t idx = sge[i].lkey & dev->mr_idx_mask;
		const struct verbs_mr_slot *s;
		uint64_t host, iova, len;

		if (idx == 0 || idx >= dev->mr_tab_size)
			continue;   /* the engine refuses the key */
		s = &dev->mr_tab[idx];
		if (atomic_load_explicit(&((struct verbs_mr_slot *)s)->key,
					 memory_order_acquire) != sge[i].lkey)
			continue;
		host = s->addr;
		iova = s->iova;
		len = s->length;
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&((struct verbs_mr_slot *)s)->key,
					 memory_order_relaxed) != sge[i].lkey || iova == host)
			continue;
		if (sge[i].addr < iova || sge[i].length > len ||
		    sge[i].addr - iova > len - sge[i].length)
			sge[i].addr = 0;   /* outside the MR: no MR holds address 0 */
		else
			sge[i].addr = host + (sge[i].addr - iova);
	}
}
