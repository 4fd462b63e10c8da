/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection on links: seeded drop, duplicate, reorder, corrupt and
 * delay of transmitted and/or received frames (see drnic_link_fault.h for the keys and
 * link_fault.h for the injector's contract).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "link_fault.h"

RTE_LOG_REGISTER_SUFFIX(link_fault_logtype, link.fault, NOTICE);
#define LINK_FAULT_LOG(level, name, fmt, ...)                                   \
	rte_log(RTE_LOG_##level, link_fault_logtype, "link %s: " fmt "\n", (name), \
		##__VA_ARGS__)

#define LINK_FAULT_BURST 64

/* ------------------------------------------------------------------------ */
/* Configuration                                                            */
/* ------------------------------------------------------------------------ */

enum link_fault_kind {
	LINK_FAULT_PROB,   /* double in [0, 1], or a percentage */
	LINK_FAULT_UINT,   /* unsigned int */
	LINK_FAULT_U64,    /* uint64_t */
	LINK_FAULT_US,     /* microseconds (decimal) into a uint64_t of ns */
	LINK_FAULT_DIR,    /* tx | rx | both into an enum drnic_link_fault_dir */
};

struct link_fault_key {
	const char *name;
	enum link_fault_kind kind;
	size_t off;
};

#define LINK_FAULT_KEY(n, k, field) { n, k, offsetof(struct drnic_link_faults, field) }
static const struct link_fault_key link_fault_keys[] = {
	LINK_FAULT_KEY("fault_drop", LINK_FAULT_PROB, drop),
	LINK_FAULT_KEY("fault_dup", LINK_FAULT_PROB, dup),
	LINK_FAULT_KEY("fault_reorder", LINK_FAULT_PROB, reorder),
	LINK_FAULT_KEY("fault_reorder_depth", LINK_FAULT_UINT, reorder_depth),
	LINK_FAULT_KEY("fault_reorder_timeout_us", LINK_FAULT_US, reorder_timeout_ns),
	LINK_FAULT_KEY("fault_corrupt", LINK_FAULT_PROB, corrupt),
	LINK_FAULT_KEY("fault_delay_us", LINK_FAULT_US, delay_ns),
	LINK_FAULT_KEY("fault_jitter_us", LINK_FAULT_US, jitter_ns),
	LINK_FAULT_KEY("fault_seed", LINK_FAULT_U64, seed),
	LINK_FAULT_KEY("fault_queue", LINK_FAULT_UINT, queue),
	LINK_FAULT_KEY("fault_dir", LINK_FAULT_DIR, dir),
	LINK_FAULT_KEY("fault_drop_nth", LINK_FAULT_U64, drop_nth),
};

static const char *const link_fault_dir_names[] = {
	[DRNIC_LINK_FAULT_DIR_TX] = "tx",
	[DRNIC_LINK_FAULT_DIR_RX] = "rx",
	[DRNIC_LINK_FAULT_DIR_BOTH] = "both",
};

#define LINK_FAULT_PREFIX "fault_"

void
drnic_link_faults_init(struct drnic_link_faults *cfg)
{
	if (cfg == NULL)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->reorder_depth = 8;
	cfg->reorder_timeout_ns = 100 * 1000;
	cfg->seed = 1;
	cfg->queue = LINK_FAULT_DEFAULT_QUEUE;
	cfg->dir = DRNIC_LINK_FAULT_DIR_TX;
}

static void
link_fault_err(char *err, size_t err_len, const char *fmt, ...) __rte_format_printf(3, 4);

static void
link_fault_err(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

static int
link_fault_check_prob(const char *key, double p, char *err, size_t err_len)
{
	if (isnan(p) || p < 0.0 || p > 1.0) {
		link_fault_err(err, err_len, "%s=%g: out of [0, 1]", key, p);
		return -EINVAL;
	}
	return 0;
}

static int
link_fault_check_ns(const char *key, uint64_t ns, char *err, size_t err_len)
{
	if (ns > LINK_FAULT_MAX_NS) {
		link_fault_err(err, err_len, "%s: %.3f us is more than 10 s", key, (double)ns / 1e3);
		return -EINVAL;
	}
	return 0;
}

int
drnic_link_faults_check(const struct drnic_link_faults *cfg, char *err, size_t err_len)
{
	if (cfg == NULL) {
		link_fault_err(err, err_len, "no configuration");
		return -EINVAL;
	}
	if (link_fault_check_prob("fault_drop", cfg->drop, err, err_len) < 0 ||
	    link_fault_check_prob("fault_dup", cfg->dup, err, err_len) < 0 ||
	    link_fault_check_prob("fault_reorder", cfg->reorder, err, err_len) < 0 ||
	    link_fault_check_prob("fault_corrupt", cfg->corrupt, err, err_len) < 0 ||
	    link_fault_check_ns("fault_reorder_timeout_us", cfg->reorder_timeout_ns, err,
				err_len) < 0 ||
	    link_fault_check_ns("fault_delay_us", cfg->delay_ns, err, err_len) < 0 ||
	    link_fault_check_ns("fault_jitter_us", cfg->jitter_ns, err, err_len) < 0)
		return -EINVAL;
	if (cfg->reorder_depth < 1 || cfg->reorder_depth > DRNIC_LINK_FAULT_MAX_DEPTH) {
		link_fault_err(err, err_len, "fault_reorder_depth=%u: out of 1..%u",
			       cfg->reorder_depth, DRNIC_LINK_FAULT_MAX_DEPTH);
		return -EINVAL;
	}
	if (cfg->queue < LINK_FAULT_MIN_QUEUE || cfg->queue > LINK_FAULT_MAX_QUEUE ||
	    !rte_is_power_of_2(cfg->queue)) {
		link_fault_err(err, err_len, "fault_queue=%u: not a power of two in %u..%u",
			       cfg->queue, LINK_FAULT_MIN_QUEUE, LINK_FAULT_MAX_QUEUE);
		return -EINVAL;
	}
	if ((unsigned int)cfg->dir > DRNIC_LINK_FAULT_DIR_BOTH) {
		link_fault_err(err, err_len, "fault_dir=%u: not tx (0), rx (1) or both (2)",
			       (unsigned int)cfg->dir);
		return -EINVAL;
	}
	return 0;
}

/* Parse one "fault_*" key's value into @p cfg. */
static int
link_fault_parse_kv(const char *key, size_t key_len, const char *value,
		    struct drnic_link_faults *cfg, char *err, size_t err_len)
{
	const struct link_fault_key *k = NULL;
	char *end;
	unsigned int i;
	double d;
	unsigned long long u;

	for (i = 0; i < RTE_DIM(link_fault_keys); i++)
		if (strlen(link_fault_keys[i].name) == key_len &&
		    strncmp(link_fault_keys[i].name, key, key_len) == 0) {
			k = &link_fault_keys[i];
			break;
		}
	if (k == NULL) {
		link_fault_err(err, err_len,
			       "%.*s: unknown fault_ key (known: fault_drop, fault_dup, "
			       "fault_reorder, fault_reorder_depth, fault_reorder_timeout_us, "
			       "fault_corrupt, fault_delay_us, fault_jitter_us, fault_seed, "
			       "fault_queue, fault_dir, fault_drop_nth)", (int)key_len, key);
		return -EINVAL;
	}
	if (value == NULL || *value == '\0') {
		link_fault_err(err, err_len, "%s: no value", k->name);
		return -EINVAL;
	}
	errno = 0;
	switch (k->kind) {
	case LINK_FAULT_DIR:
		for (i = 0; i < RTE_DIM(link_fault_dir_names); i++)
			if (strcmp(value, link_fault_dir_names[i]) == 0)
				break;
		if (i == RTE_DIM(link_fault_dir_names)) {
			link_fault_err(err, err_len, "%s=%s: not tx, rx or both", k->name, value);
			return -EINVAL;
		}
		memcpy((char *)cfg + k->off, &(enum drnic_link_fault_dir){
			       (enum drnic_link_fault_dir)i }, sizeof(enum drnic_link_fault_dir));
		break;
	case LINK_FAULT_PROB:
		d = strtod(value, &end);
		if (end != value && *end == '%') {
			d /= 100.0;
			end++;
		}
		if (end == value || *end != '\0' || errno != 0 || !isfinite(d)) {
			link_fault_err(err, err_len, "%s=%s: not a number", k->name, value);
			return -EINVAL;
		}
		if (link_fault_check_prob(k->name, d, err, err_len) < 0) {
			link_fault_err(err, err_len, "%s=%s: out of [0, 1]", k->name, value);
			return -EINVAL;
		}
		memcpy((char *)cfg + k->off, &d, sizeof(d));
		break;
	case LINK_FAULT_US:
		d = strtod(value, &end);
		if (end == value || *end != '\0' || errno != 0 || !isfinite(d)) {
			link_fault_err(err, err_len, "%s=%s: not a number", k->name, value);
			return -EINVAL;
		}
		if (d < 0 || d > (double)LINK_FAULT_MAX_NS / 1e3) {
			link_fault_err(err, err_len, "%s=%s: out of [0, 10 s]", k->name, value);
			return -EINVAL;
		}
		u = (unsigned long long)llround(d * 1e3);
		memcpy((char *)cfg + k->off, &(uint64_t){ u }, sizeof(uint64_t));
		break;
	case LINK_FAULT_UINT:
	case LINK_FAULT_U64:
		u = strtoull(value, &end, 0);
		if (strchr(value, '-') != NULL || end == value || *end != '\0' || errno != 0) {
			link_fault_err(err, err_len, "%s=%s: not a number", k->name, value);
			return -EINVAL;
		}
		if (k->kind == LINK_FAULT_U64) {
			memcpy((char *)cfg + k->off, &(uint64_t){ u }, sizeof(uint64_t));
			break;
		}
		if (u > UINT32_MAX) {
			link_fault_err(err, err_len, "%s=%s: too large", k->name, value);
			return -EINVAL;
		}
		memcpy((char *)cfg + k->off, &(unsigned int){ (unsigned int)u },
		       sizeof(unsigned int));
		break;
	}
	return 0;
}

/* Walk "k=v,k=v" (commas inside [...] do not split); call @p fn per item. */
static int
link_fault_items(const char *args,
		 int (*fn)(const char *item, size_t len, void *opaque), void *opaque)
{
	const char *start = args, *p;
	int depth = 0, rc;

	if (args == NULL)
		return 0;
	for (p = args;; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && depth > 0)
			depth--;
		if (*p == '\0' || (*p == ',' && depth == 0)) {
			if (p > start) {
				rc = fn(start, (size_t)(p - start), opaque);
				if (rc < 0)
					return rc;
			}
			if (*p == '\0')
				return 0;
			start = p + 1;
		}
	}
}

struct link_fault_split {
	struct drnic_link_faults *cfg;
	bool present;
	bool only_faults;   /* a non-fault key is an error */
	char *rest;         /* NULL when only_faults */
	size_t rest_len;
	char *err;
	size_t err_len;
};

static int
link_fault_split_item(const char *item, size_t len, void *opaque)
{
	struct link_fault_split *s = opaque;
	const char *eq = memchr(item, '=', len);
	size_t key_len = eq != NULL ? (size_t)(eq - item) : len;
	char value[128];
	size_t vlen;

	if (key_len < sizeof(LINK_FAULT_PREFIX) - 1 ||
	    strncmp(item, LINK_FAULT_PREFIX, sizeof(LINK_FAULT_PREFIX) - 1) != 0) {
		if (s->only_faults) {
			link_fault_err(s->err, s->err_len, "%.*s: not a fault_ key",
				       (int)key_len, item);
			return -EINVAL;
		}
		if (s->rest_len > 0)
			s->rest[s->rest_len++] = ',';
		memcpy(s->rest + s->rest_len, item, len);
		s->rest_len += len;
		s->rest[s->rest_len] = '\0';
		return 0;
	}
	s->present = true;
	if (eq == NULL)
		return link_fault_parse_kv(item, key_len, NULL, s->cfg, s->err, s->err_len);
	vlen = len - key_len - 1;
	if (vlen >= sizeof(value)) {
		link_fault_err(s->err, s->err_len, "%.*s: value too long", (int)key_len, item);
		return -EINVAL;
	}
	memcpy(value, eq + 1, vlen);
	value[vlen] = '\0';
	return link_fault_parse_kv(item, key_len, value, s->cfg, s->err, s->err_len);
}

int
drnic_link_faults_parse(const char *args, struct drnic_link_faults *cfg, char *err,
			size_t err_len)
{
	struct link_fault_split s = {
		.cfg = cfg, .only_faults = true, .err = err, .err_len = err_len,
	};
	struct drnic_link_faults tmp;
	int rc;

	if (cfg == NULL) {
		link_fault_err(err, err_len, "no configuration");
		return -EINVAL;
	}
	tmp = *cfg;
	s.cfg = &tmp;
	rc = link_fault_items(args, link_fault_split_item, &s);
	if (rc == 0)
		rc = drnic_link_faults_check(&tmp, err, err_len);
	if (rc == 0)
		*cfg = tmp;
	return rc;
}

int
link_fault_args_split(const char *args, struct drnic_link_faults *cfg, bool *present,
		      char **rest, char *err, size_t err_len)
{
	struct link_fault_split s = { .cfg = cfg, .err = err, .err_len = err_len };
	int rc;

	*rest = malloc(args != NULL ? strlen(args) + 1 : 1);
	if (*rest == NULL)
		return -ENOMEM;
	(*rest)[0] = '\0';
	s.rest = *rest;
	rc = link_fault_items(args, link_fault_split_item, &s);
	if (rc == 0 && s.present)
		rc = drnic_link_faults_check(cfg, err, err_len);
	if (rc < 0) {
		free(*rest);
		*rest = NULL;
		return rc;
	}
	*present = s.present;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The injector                                                             */
/* ------------------------------------------------------------------------ */

/* splitmix64: small, fast, and every seed is a good one. */
static inline uint64_t
link_fault_rand(struct link_fault *f)
{
	uint64_t z = (f->rng += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* True with probability @p p (no draw when p is 0). */
static inline bool
link_fault_hit(struct link_fault *f, double p)
{
	if (p <= 0.0)
		return false;
	return (double)(link_fault_rand(f) >> 11) * 0x1.0p-53 < p;
}

static void
link_fault_seed(struct link_fault *f)
{
	f->rng = f->cfg.seed ^ (f->stream * 0xD1B54A32D192ED03ull);
	(void)link_fault_rand(f);
}

struct link_fault *
link_fault_create(const struct drnic_link_faults *cfg, unsigned int stream, int socket_id)
{
	struct link_fault *f;

	if (drnic_link_faults_check(cfg, NULL, 0) < 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	f = rte_zmalloc_socket("drnic_link_fault",
			       sizeof(*f) + cfg->queue * sizeof(f->q[0]), RTE_CACHE_LINE_SIZE,
			       socket_id);
	if (f == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	f->cfg = *cfg;
	f->pending = *cfg;
	f->stream = stream;
	f->mask = cfg->queue - 1;
	rte_spinlock_init(&f->lock);
	link_fault_seed(f);
	return f;
}

void
link_fault_update(struct link_fault *f, const struct drnic_link_faults *cfg)
{
	rte_spinlock_lock(&f->lock);
	f->pending = *cfg;
	f->pending.queue = f->cfg.queue;   /* fixed at creation */
	__atomic_store_n(&f->gen, f->gen + 1, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&f->lock);
}

/* Engine side: take a configuration installed by link_fault_update(). */
static inline void
link_fault_sync(struct link_fault *f)
{
	uint32_t gen = __atomic_load_n(&f->gen, __ATOMIC_ACQUIRE);

	if (likely(gen == f->gen_seen))
		return;
	rte_spinlock_lock(&f->lock);
	f->cfg = f->pending;
	f->gen_seen = f->gen;
	rte_spinlock_unlock(&f->lock);
	link_fault_seed(f);
}

/* Is @p m a RoCEv2 frame (UDP destination port 4791, IPv4 or IPv6, with or
 * without one VLAN tag)? Reads only what the first segment holds. */
static bool
link_fault_is_roce(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), off = 12, l4;
	uint16_t type;

	if (len < 14)
		return false;
	type = (uint16_t)(p[off] << 8 | p[off + 1]);
	if (type == RTE_ETHER_TYPE_VLAN) {
		off += 4;
		if (len < off + 2)
			return false;
		type = (uint16_t)(p[off] << 8 | p[off + 1]);
	}
	off += 2;
	if (type == RTE_ETHER_TYPE_IPV4) {
		if (len < off + 20 || p[off + 9] != IPPROTO_UDP)
			return false;
		l4 = off + (uint32_t)(p[off] & 0xF) * 4;
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		if (len < off + 40 || p[off + 6] != IPPROTO_UDP)
			return false;
		l4 = off + 40;
	} else {
		return false;
	}
	return len >= l4 + 4 && (p[l4 + 2] << 8 | p[l4 + 3]) == 4791;
}

static inline uint32_t
link_fault_room(const struct link_fault *f)
{
	return f->mask + 1 - (f->tail - f->head);
}

/* Into the hold queue, due after the delay and never before the frame ahead. */
static void
link_fault_push(struct link_fault *f, struct rte_mbuf *m, uint64_t now_ns)
{
	uint64_t delay = f->cfg.delay_ns, due;

	if (f->cfg.jitter_ns > 0)
		delay += link_fault_rand(f) % (f->cfg.jitter_ns + 1);
	if (delay > 0)
		f->stats.delayed++;
	due = now_ns + delay;
	if (due < f->last_due_ns)
		due = f->last_due_ns;
	f->last_due_ns = due;
	f->q[f->tail & f->mask] = (struct link_fault_slot){ .m = m, .due_ns = due };
	f->tail++;
}

/*
 * A frame leaves the reorder stage: every held frame has one frame fewer to
 * wait for. The first (oldest) held frame at zero leaves next, and counts as
 * a frame leaving for the others, and so on. So a held frame is overtaken by
 * at most its 1..depth later frames.
 */
static void
link_fault_emit(struct link_fault *f, struct rte_mbuf *m, uint64_t now_ns)
{
	unsigned int i, first;

	link_fault_push(f, m, now_ns);
	while (f->nb_held > 0) {
		first = f->nb_held;
		for (i = 0; i < f->nb_held; i++) {
			if (f->held[i].left > 0)
				f->held[i].left--;
			if (f->held[i].left == 0 && first == f->nb_held)
				first = i;
		}
		if (first == f->nb_held)
			break;
		m = f->held[first].m;
		f->nb_held--;
		memmove(&f->held[first], &f->held[first + 1],
			(f->nb_held - first) * sizeof(f->held[0]));
		link_fault_push(f, m, now_ns);
	}
}

/* Release held frames past their timeout (in the order they were held). */
static void
link_fault_expire(struct link_fault *f, uint64_t now_ns)
{
	unsigned int i = 0;
	struct rte_mbuf *m;

	while (i < f->nb_held) {
		if (f->held[i].deadline_ns > now_ns) {
			i++;
			continue;
		}
		m = f->held[i].m;
		f->nb_held--;
		memmove(&f->held[i], &f->held[i + 1], (f->nb_held - i) * sizeof(f->held[0]));
		link_fault_emit(f, m, now_ns);
		i = 0;
	}
}

/* Whether every segment's data is ours alone to write. */
static bool
link_fault_writable(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
			return false;
	return true;
}

/* Address of byte @p off of a frame (off < pkt_len). */
static uint8_t *
link_fault_byte(struct rte_mbuf *m, uint32_t off)
{
	while (off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	return rte_pktmbuf_mtod_offset(m, uint8_t *, off);
}

/* Bytes the ICRC leaves out (or IP checksum only), relative to the IP header. */
struct link_fault_masks {
	uint32_t off[8];
	unsigned int n;
};

static void
link_fault_masks_get(struct rte_mbuf *m, uint32_t l3, uint32_t *end, struct link_fault_masks *mk)
{
	uint32_t len = m->pkt_len, ihl, iplen;
	uint8_t v;

	mk->n = 0;
	*end = len;
	if (len < l3 + 1)
		return;
	v = *link_fault_byte(m, l3) >> 4;
	if (v == 4 && len >= l3 + 20) {
		ihl = (*link_fault_byte(m, l3) & 0xF) * 4u;
		iplen = (uint32_t)*link_fault_byte(m, l3 + 2) << 8 | *link_fault_byte(m, l3 + 3);
		mk->off[mk->n++] = 1;            /* TOS */
		mk->off[mk->n++] = 8;            /* TTL */
		mk->off[mk->n++] = 10;           /* header checksum */
		mk->off[mk->n++] = 11;
		if (*link_fault_byte(m, l3 + 9) != 17)
			ihl = 0;
	} else if (v == 6 && len >= l3 + 40) {
		iplen = 40 + ((uint32_t)*link_fault_byte(m, l3 + 4) << 8 |
			      *link_fault_byte(m, l3 + 5));
		mk->off[mk->n++] = 0;            /* version / class */
		mk->off[mk->n++] = 1;            /* class / flow label */
		mk->off[mk->n++] = 2;
		mk->off[mk->n++] = 3;
		mk->off[mk->n++] = 7;            /* hop limit */
		ihl = *link_fault_byte(m, l3 + 6) == 17 ? 40 : 0;
	} else {
		return;
	}
	if (iplen > 0 && l3 + iplen < len)
		*end = l3 + iplen;
	if (ihl == 0)
		return;
	mk->off[mk->n++] = ihl + 6;              /* UDP checksum */
	mk->off[mk->n++] = ihl + 7;
	mk->off[mk->n++] = ihl + 8 + 4;          /* BTH byte 4 (reserved) */
}

/*
 * Flip 1..3 distinct bits of the IP packet, outside the fields the ICRC
 * leaves out. A shared frame is copied first. Returns the frame to send.
 */
static struct rte_mbuf *
link_fault_corrupt(struct link_fault *f, struct rte_mbuf *m)
{
	struct link_fault_masks mk;
	uint32_t l3 = RTE_ETHER_HDR_LEN, end, bits, pos[3];
	unsigned int want, got = 0, tries, i;
	uint16_t type;
	bool bad;

	if (!link_fault_writable(m)) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

		if (c == NULL) {
			f->stats.corrupt_failed++;
			return m;
		}
		rte_pktmbuf_free(m);
		m = c;
	}
	if (m->pkt_len < RTE_ETHER_HDR_LEN + 1)
		goto none;
	type = (uint16_t)(*link_fault_byte(m, 12) << 8 | *link_fault_byte(m, 13));
	if (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ)
		l3 += 4;
	if (m->pkt_len <= l3)
		goto none;
	link_fault_masks_get(m, l3, &end, &mk);
	if (end <= l3)
		goto none;
	bits = (end - l3) * 8;
	want = 1 + (unsigned int)(link_fault_rand(f) % 3);
	for (tries = 0; got < want && tries < 64; tries++) {
		uint32_t b = (uint32_t)(link_fault_rand(f) % bits);

		bad = false;
		for (i = 0; i < mk.n; i++)
			bad |= b / 8 == mk.off[i];
		for (i = 0; i < got; i++)
			bad |= b == pos[i];
		if (!bad)
			pos[got++] = b;
	}
	if (got == 0)
		goto none;
	for (i = 0; i < got; i++)
		*link_fault_byte(m, l3 + pos[i] / 8) ^= (uint8_t)(1u << (pos[i] % 8));
	f->stats.corrupted++;
	f->stats.corrupted_bits += got;
	return m;
none:
	f->stats.corrupt_failed++;
	return m;
}

/* One copy of a frame after the drop/dup decisions: corrupt, reorder, delay. */
static void
link_fault_stage(struct link_fault *f, struct rte_mbuf *m, uint64_t now_ns)
{
	if (link_fault_hit(f, f->cfg.corrupt))
		m = link_fault_corrupt(f, m);
	if (link_fault_hit(f, f->cfg.reorder) && f->nb_held < f->cfg.reorder_depth) {
		f->held[f->nb_held++] = (struct link_fault_held){
			.m = m,
			.deadline_ns = now_ns + f->cfg.reorder_timeout_ns,
			.left = 1 + (unsigned int)(link_fault_rand(f) % f->cfg.reorder_depth),
		};
		f->stats.reordered++;
		return;
	}
	link_fault_emit(f, m, now_ns);
}

uint16_t
link_fault_enqueue(struct link_fault *f, struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct rte_mbuf *m, *c;
	uint16_t i;

	link_fault_sync(f);
	for (i = 0; i < n; i++) {
		/* Room for the frame, its copy and every held frame. */
		if (link_fault_room(f) < 2 + f->nb_held) {
			f->stats.refused += (uint16_t)(n - i);
			break;
		}
		m = pkts[i];
		if (unlikely(f->cfg.drop_nth != 0) && link_fault_is_roce(m) &&
		    ++f->roce_seen == f->cfg.drop_nth) {
			rte_pktmbuf_free(m);
			f->stats.dropped++;
			continue;
		}
		if (link_fault_hit(f, f->cfg.drop)) {
			rte_pktmbuf_free(m);
			f->stats.dropped++;
			continue;
		}
		c = NULL;
		if (link_fault_hit(f, f->cfg.dup)) {
			c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
			if (c != NULL)
				f->stats.duplicated++;
			else
				f->stats.dup_failed++;
		}
		link_fault_stage(f, m, now_ns);
		if (c != NULL)
			link_fault_stage(f, c, now_ns);
	}
	return i;
}

uint16_t
link_fault_peek(struct link_fault *f, struct rte_mbuf **out, uint16_t cap, uint64_t now_ns)
{
	uint16_t n = 0;
	uint32_t i;

	link_fault_sync(f);
	if (unlikely(f->nb_held > 0))
		link_fault_expire(f, now_ns);
	for (i = f->head; i != f->tail && n < cap; i++) {
		const struct link_fault_slot *s = &f->q[i & f->mask];

		if (s->due_ns > now_ns)
			break;
		out[n++] = s->m;
	}
	return n;
}

void
link_fault_consume(struct link_fault *f, uint16_t n)
{
	f->head += n;
}

uint16_t
link_fault_poll(struct link_fault *f, struct rte_mbuf **out, uint16_t cap, uint64_t now_ns)
{
	uint16_t n = link_fault_peek(f, out, cap, now_ns);

	link_fault_consume(f, n);
	return n;
}

void
link_fault_flush(struct link_fault *f)
{
	unsigned int i;

	for (i = 0; i < f->nb_held; i++)
		rte_pktmbuf_free(f->held[i].m);
	f->stats.flushed += f->nb_held;
	f->nb_held = 0;
	for (; f->head != f->tail; f->head++) {
		rte_pktmbuf_free(f->q[f->head & f->mask].m);
		f->stats.flushed++;
	}
}

void
link_fault_free(struct link_fault *f)
{
	if (f == NULL)
		return;
	link_fault_flush(f);
	rte_free(f);
}

unsigned int
link_fault_held_count(const struct link_fault *f)
{
	return f->nb_held + (f->tail - f->head);
}

void
link_fault_stats_add(const struct link_fault *f, struct drnic_link_fault_stats *st)
{
	const struct drnic_link_fault_stats *s = &f->stats;

	st->dropped += s->dropped;
	st->duplicated += s->duplicated;
	st->dup_failed += s->dup_failed;
	st->reordered += s->reordered;
	st->corrupted += s->corrupted;
	st->corrupted_bits += s->corrupted_bits;
	st->corrupt_failed += s->corrupt_failed;
	st->delayed += s->delayed;
	st->refused += s->refused;
	st->flushed += s->flushed;
	st->held += link_fault_held_count(f);
}

/* ------------------------------------------------------------------------ */
/* Links                                                                    */
/* ------------------------------------------------------------------------ */

/* Serialises control-side changes of links' injectors. */
static pthread_mutex_t link_fault_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t
link_fault_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint16_t
link_fault_tx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct link_fault *f = __atomic_load_n(&link->fault[q], __ATOMIC_ACQUIRE);
	struct link_queue_stats *st = &link->stats[q];
	struct rte_mbuf *out[LINK_FAULT_BURST];
	uint64_t now, bytes;
	uint16_t taken = 0, due, sent, i;

	/* The engine calls this on every receive poll to release held
	 * frames: with nothing new and nothing held, skip the clock. */
	if (n == 0 && f->head == f->tail && f->nb_held == 0)
		return 0;
	/* One clock read for the burst: every frame of it is sent "now". */
	now = link_fault_now_ns();
	if (n > 0) {
		taken = link_fault_enqueue(f, pkts, n, now);
		st->tx_busy += (uint16_t)(n - taken);
	}
	do {
		due = link_fault_peek(f, out, RTE_DIM(out), now);
		if (due == 0)
			break;
		/* Taken frames may be freed by the peer at once: lengths first. */
		bytes = 0;
		for (i = 0; i < due; i++)
			bytes += out[i]->pkt_len;
		sent = link_driver_tx(link, q, out, due);
		for (i = sent; i < due; i++)
			bytes -= out[i]->pkt_len;
		link_fault_consume(f, sent);
		st->tx_packets += sent;
		st->tx_bytes += bytes;
	} while (sent == due);
	return taken;
}

uint16_t
link_fault_rx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct link_fault *f = __atomic_load_n(&link->fault_rx[q], __ATOMIC_ACQUIRE);
	struct link_queue_stats *st = &link->stats[q];
	uint16_t got, taken, i;
	uint64_t now;

	got = link->ops->rx_burst(link, q, pkts, n);
	if (got == 0 && f->head == f->tail && f->nb_held == 0)
		return 0;       /* nothing arrived, nothing held: no clock */
	now = link_fault_now_ns();
	if (got > 0) {
		for (i = 0; i < got; i++)
			st->rx_bytes += pkts[i]->pkt_len;
		st->rx_packets += got;
		if (unlikely(__atomic_load_n(&link->capture, __ATOMIC_RELAXED) != NULL))
			link_capture_mirror(link, pkts, got, DRNIC_CAPTURE_DIR_RX);
		/* The frames are the injector's now; those it refuses (counted
		 * refused) are lost. */
		taken = link_fault_enqueue(f, pkts, got, now);
		for (i = taken; i < got; i++)
			rte_pktmbuf_free(pkts[i]);
	}
	/* Also without new frames: held ones become due. */
	return link_fault_poll(f, pkts, n, now);
}

static bool
link_fault_dir_has(enum drnic_link_fault_dir dir, enum drnic_link_fault_dir side)
{
	return dir == DRNIC_LINK_FAULT_DIR_BOTH || dir == side;
}

/* Queue injectors of one side: create those missing, update the others. */
static int
link_fault_attach_side(struct drnic_link *link, struct link_fault **side,
		       const struct drnic_link_faults *cfg, unsigned int stream0)
{
	struct link_fault *f;
	uint16_t q;

	for (q = 0; q < link->nb_queues; q++) {
		if (side[q] != NULL) {
			link_fault_update(side[q], cfg);
			continue;
		}
		f = link_fault_create(cfg, stream0 + q, link->socket_id);
		if (f == NULL)
			return -rte_errno;
		__atomic_store_n(&side[q], f, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Turn off a side's existing injectors (they pass frames on unchanged). */
static void
link_fault_off_side(struct drnic_link *link, struct link_fault **side,
		    const struct drnic_link_faults *cfg)
{
	struct drnic_link_faults off;
	uint16_t q;

	drnic_link_faults_init(&off);
	off.dir = cfg->dir;
	off.seed = cfg->seed;
	for (q = 0; q < link->nb_queues; q++)
		if (side[q] != NULL)
			link_fault_update(side[q], &off);
}

int
link_fault_attach(struct drnic_link *link, const struct drnic_link_faults *cfg)
{
	int rc = 0;

	if (drnic_link_faults_check(cfg, NULL, 0) < 0)
		return -EINVAL;
	pthread_mutex_lock(&link_fault_lock);
	if (link_fault_dir_has(cfg->dir, DRNIC_LINK_FAULT_DIR_TX))
		rc = link_fault_attach_side(link, link->fault, cfg, 0);
	else
		link_fault_off_side(link, link->fault, cfg);
	if (rc == 0 && link_fault_dir_has(cfg->dir, DRNIC_LINK_FAULT_DIR_RX))
		rc = link_fault_attach_side(link, link->fault_rx, cfg, LINK_MAX_QUEUES);
	else if (rc == 0)
		link_fault_off_side(link, link->fault_rx, cfg);
	pthread_mutex_unlock(&link_fault_lock);
	if (rc == 0)
		LINK_FAULT_LOG(INFO, link->name,
			       "faults (%s): drop %g dup %g reorder %g (depth %u) corrupt %g "
			       "delay %.3f+%.3f us seed %" PRIu64 " drop_nth %" PRIu64,
			       link_fault_dir_names[cfg->dir], cfg->drop, cfg->dup, cfg->reorder,
			       cfg->reorder_depth, cfg->corrupt, (double)cfg->delay_ns / 1e3,
			       (double)cfg->jitter_ns / 1e3, cfg->seed, cfg->drop_nth);
	return rc;
}

void
link_fault_detach(struct drnic_link *link)
{
	uint16_t q;

	pthread_mutex_lock(&link_fault_lock);
	for (q = 0; q < LINK_MAX_QUEUES; q++) {
		link_fault_free(link->fault[q]);
		link->fault[q] = NULL;
		link_fault_free(link->fault_rx[q]);
		link->fault_rx[q] = NULL;
	}
	pthread_mutex_unlock(&link_fault_lock);
}

int
drnic_link_set_faults(struct drnic_link *link, const struct drnic_link_faults *cfg)
{
	char err[160];
	int rc;

	if (link == NULL || cfg == NULL)
		return -EINVAL;
	rc = drnic_link_faults_check(cfg, err, sizeof(err));
	if (rc < 0) {
		LINK_FAULT_LOG(ERR, link->name, "%s", err);
		return rc;
	}
	return link_fault_attach(link, cfg);
}

int
drnic_link_get_faults(const struct drnic_link *link, struct drnic_link_faults *cfg)
{
	struct link_fault *f;

	if (link == NULL || cfg == NULL)
		return -EINVAL;
	/* Every injector holds the last configuration's direction; the side
	 * it names holds the configuration itself (the other one "off"). */
	f = __atomic_load_n(&link->fault[0], __ATOMIC_ACQUIRE);
	if (f == NULL)
		f = __atomic_load_n(&link->fault_rx[0], __ATOMIC_ACQUIRE);
	if (f == NULL) {
		drnic_link_faults_init(cfg);
		return -ENOENT;
	}
	rte_spinlock_lock(&f->lock);
	*cfg = f->pending;
	rte_spinlock_unlock(&f->lock);
	if (cfg->dir == DRNIC_LINK_FAULT_DIR_RX && f != link->fault_rx[0]) {
		f = __atomic_load_n(&link->fault_rx[0], __ATOMIC_ACQUIRE);
		rte_spinlock_lock(&f->lock);
		*cfg = f->pending;
		rte_spinlock_unlock(&f->lock);
	}
	return 0;
}

int
drnic_link_fault_stats_dir(const struct drnic_link *link, enum drnic_link_fault_dir dir,
			   struct drnic_link_fault_stats *st)
{
	struct link_fault *f;
	uint16_t q;

	if (link == NULL || st == NULL || (unsigned int)dir > DRNIC_LINK_FAULT_DIR_BOTH)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (q = 0; q < link->nb_queues; q++) {
		if (link_fault_dir_has(dir, DRNIC_LINK_FAULT_DIR_TX)) {
			f = __atomic_load_n(&link->fault[q], __ATOMIC_ACQUIRE);
			if (f != NULL)
				link_fault_stats_add(f, st);
		}
		if (link_fault_dir_has(dir, DRNIC_LINK_FAULT_DIR_RX)) {
			f = __atomic_load_n(&link->fault_rx[q], __ATOMIC_ACQUIRE);
			if (f != NULL)
				link_fault_stats_add(f, st);
		}
	}
	return 0;
}

int
drnic_link_fault_stats(const struct drnic_link *link, struct drnic_link_fault_stats *st)
{
	return drnic_link_fault_stats_dir(link, DRNIC_LINK_FAULT_DIR_BOTH, st);
}
