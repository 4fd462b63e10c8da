/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/link/link_fault.c: argument parsing and its errors,
 * fault rates against their probabilities, reproducibility from the seed,
 * the reorder bound, deep duplicates, corruption that lib/wire always
 * rejects, delay on a fake clock, flushing, and the link glue on a fake
 * driver, both directions (fault_dir=tx|rx|both). A real mempool (cache 0) shows every mbuf going back.
 */
#include "lib/link/link_fault.c"

#include <rte_eal.h>
#include <rte_mempool.h>

#include "drnic_wire.h"
#include "ut_common.h"

/* Stub: no capture runs in these tests (link->capture stays NULL). */
uint16_t
link_capture_tx(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return link->ops->tx_burst(link, q, pkts, n);
}

/* Stub: counts the frames a capture would have been shown. */
static unsigned int ut_mirrored;

void
link_capture_mirror(struct drnic_link *link __rte_unused, struct rte_mbuf *const *pkts __rte_unused,
		    uint16_t n, enum drnic_capture_dir dir __rte_unused)
{
	ut_mirrored += n;
}

#define UT_NB_MBUF 8192
#define UT_US 1000ull

static struct rte_mempool *ut_pool;      /* 4 KiB segments */
static struct rte_mempool *ut_small;     /* 256-byte segments: chains */

static unsigned int
ut_in_use(void)
{
	return rte_mempool_in_use_count(ut_pool) + rte_mempool_in_use_count(ut_small);
}

static void
ut_cfg(struct drnic_link_faults *c)
{
	drnic_link_faults_init(c);
}

/* A RoCEv2 frame; the PSN carries @p id. */
static struct rte_mbuf *
ut_frame_ex(struct rte_mempool *mp, uint32_t id, uint8_t opcode, uint8_t ipver, bool vlan,
	    uint32_t paylen)
{
	static uint8_t pay[4096];
	struct drnic_wire_sge sg = { .addr = pay, .len = paylen };
	struct drnic_wire_pkt p;
	struct rte_mbuf *m;
	uint32_t i;

	for (i = 0; i < paylen; i++)
		pay[i] = (uint8_t)(id * 7 + i);
	drnic_wire_pkt_init(&p);
	p.eth.dst[0] = 2;
	p.eth.dst[5] = 2;
	p.eth.src[0] = 2;
	p.eth.src[5] = 1;
	p.eth.has_vlan = vlan;
	p.eth.vlan_tci = 100;
	p.ip.version = ipver;
	p.ip.src[0] = 10;
	p.ip.src[3] = 1;
	p.ip.dst[0] = 10;
	p.ip.dst[3] = 2;
	if (ipver == 6) {
		p.ip.src[15] = 1;
		p.ip.dst[15] = 2;
		p.ip.flow_label = 0x12345;
	}
	p.udp.sport = drnic_wire_udp_sport(id);
	p.bth.opcode = opcode;
	p.bth.dqpn = 0x11;
	p.bth.psn = id & DRNIC_PSN_MASK;
	p.reth.va = 0x1000;
	p.reth.rkey = 0x42;
	p.reth.dmalen = paylen;
	p.aeth.msn = id & DRNIC_MSN_MASK;
	if (paylen > 0) {
		p.sg = &sg;
		p.sg_cnt = 1;
	}
	m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return NULL;
	if (drnic_wire_build(m, &p) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static struct rte_mbuf *
ut_frame(uint32_t id)
{
	return ut_frame_ex(ut_pool, id, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 16);
}

/* The id of an uncorrupted frame (its PSN), or UINT32_MAX. */
static uint32_t
ut_id(const struct rte_mbuf *m)
{
	struct drnic_wire_pkt p;

	if (drnic_wire_parse(m, &p) != DRNIC_WIRE_OK)
		return UINT32_MAX;
	return p.bth.psn;
}

static void
ut_free_all(struct rte_mbuf **m, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		rte_pktmbuf_free(m[i]);
}

/* ------------------------------------------------------------------------ */

static void
test_parse(void)
{
	struct drnic_link_faults c;
	char err[256], *rest = NULL;
	bool present = false;

	ut_cfg(&c);
	CU_ASSERT_EQUAL(drnic_link_faults_parse("fault_drop=0.01,fault_dup=0.5%,fault_reorder=1,"
						"fault_reorder_depth=16,fault_corrupt=0,"
						"fault_delay_us=50,fault_jitter_us=0.5,"
						"fault_reorder_timeout_us=20,fault_seed=0x2a,"
						"fault_queue=1024", &c, err, sizeof(err)), 0);
	CU_ASSERT_DOUBLE_EQUAL(c.drop, 0.01, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(c.dup, 0.005, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(c.reorder, 1.0, 1e-12);
	CU_ASSERT_EQUAL(c.reorder_depth, 16);
	CU_ASSERT_EQUAL(c.delay_ns, 50000);
	CU_ASSERT_EQUAL(c.jitter_ns, 500);
	CU_ASSERT_EQUAL(c.reorder_timeout_ns, 20000);
	CU_ASSERT_EQUAL(c.seed, 42);
	CU_ASSERT_EQUAL(c.queue, 1024);
	CU_ASSERT_EQUAL(c.dir, DRNIC_LINK_FAULT_DIR_TX);   /* the default */
	CU_ASSERT_EQUAL(drnic_link_faults_parse("fault_dir=rx", &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.dir, DRNIC_LINK_FAULT_DIR_RX);
	CU_ASSERT_EQUAL(drnic_link_faults_parse("fault_dir=both", &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.dir, DRNIC_LINK_FAULT_DIR_BOTH);
	CU_ASSERT_EQUAL(drnic_link_faults_parse("fault_dir=tx", &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.dir, DRNIC_LINK_FAULT_DIR_TX);

#define UT_BAD(str, want)                                                       \
	do {                                                                    \
		struct drnic_link_faults _c;                                    \
		ut_cfg(&_c);                                                    \
		err[0] = '\0';                                                  \
		CU_ASSERT_EQUAL(drnic_link_faults_parse(str, &_c, err, sizeof(err)), -EINVAL); \
		CU_ASSERT_PTR_NOT_NULL(strstr(err, want));                      \
		if (strstr(err, want) == NULL)                                  \
			printf("\n'%s' -> '%s' (wanted '%s')\n", str, err, want); \
	} while (0)
	UT_BAD("fault_drop=1.5", "fault_drop=1.5: out of [0, 1]");
	UT_BAD("fault_drop=-0.1", "fault_drop=-0.1: out of [0, 1]");
	UT_BAD("fault_dup=150%", "fault_dup=150%: out of [0, 1]");
	UT_BAD("fault_dup=abc", "fault_dup=abc: not a number");
	UT_BAD("fault_corrupt=0.1x", "fault_corrupt=0.1x: not a number");
	UT_BAD("fault_reorder=nan", "fault_reorder=nan: not a number");
	UT_BAD("fault_drop", "fault_drop: no value");
	UT_BAD("fault_drop=", "fault_drop: no value");
	UT_BAD("fault_bogus=1", "fault_bogus: unknown fault_ key");
	UT_BAD("fault_seed=-1", "fault_seed=-1: not a number");
	UT_BAD("fault_reorder_depth=0", "fault_reorder_depth=0: out of 1..64");
	UT_BAD("fault_reorder_depth=65", "fault_reorder_depth=65: out of 1..64");
	UT_BAD("fault_queue=100", "fault_queue=100: not a power of two");
	UT_BAD("fault_delay_us=-5", "fault_delay_us=-5: out of [0, 10 s]");
	UT_BAD("fault_delay_us=20000000", "fault_delay_us=20000000: out of [0, 10 s]");
	UT_BAD("wire=lb0", "wire: not a fault_ key");
	UT_BAD("fault_dir=up", "fault_dir=up: not tx, rx or both");
	UT_BAD("fault_dir=RX", "fault_dir=RX: not tx, rx or both");
	UT_BAD("fault_dir=", "fault_dir: no value");
	UT_BAD("fault_dirs=rx", "fault_dirs: unknown fault_ key");
#undef UT_BAD
	/* A failed parse leaves the configuration as it was. */
	ut_cfg(&c);
	CU_ASSERT_EQUAL(drnic_link_faults_parse("fault_drop=0.5,fault_dup=2", &c, NULL, 0), -EINVAL);
	CU_ASSERT_EQUAL(c.drop, 0.0);
	CU_ASSERT_EQUAL(drnic_link_faults_parse(NULL, &c, NULL, 0), 0);
	CU_ASSERT_EQUAL(drnic_link_faults_parse("", NULL, NULL, 0), -EINVAL);

	/* Splitting link arguments: the driver keeps its keys, in order. */
	ut_cfg(&c);
	CU_ASSERT_EQUAL(link_fault_args_split("wire=lb0,fault_drop=0.1,dev=[a,b],fault_seed=7,self=1",
					      &c, &present, &rest, err, sizeof(err)), 0);
	CU_ASSERT_TRUE(present);
	CU_ASSERT_STRING_EQUAL(rest, "wire=lb0,dev=[a,b],self=1");
	CU_ASSERT_DOUBLE_EQUAL(c.drop, 0.1, 1e-12);
	CU_ASSERT_EQUAL(c.seed, 7);
	free(rest);
	ut_cfg(&c);
	CU_ASSERT_EQUAL(link_fault_args_split("wire=lb0,self=1", &c, &present, &rest, err,
					      sizeof(err)), 0);
	CU_ASSERT_FALSE(present);
	CU_ASSERT_STRING_EQUAL(rest, "wire=lb0,self=1");
	free(rest);
	CU_ASSERT_EQUAL(link_fault_args_split(NULL, &c, &present, &rest, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(present);
	CU_ASSERT_STRING_EQUAL(rest, "");
	free(rest);
	CU_ASSERT_EQUAL(link_fault_args_split("wire=x,fault_drop=2", &c, &present, &rest, err,
					      sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NULL(rest);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "fault_drop=2: out of [0, 1]"));
	CU_ASSERT_EQUAL(link_fault_args_split("wire=x,fault_depth=2", &c, &present, &rest, err,
					      sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "fault_depth: unknown fault_ key"));
	ut_cfg(&c);
	CU_ASSERT_EQUAL(link_fault_args_split("wire=x,fault_dir=rx,fault_drop=0.05", &c, &present,
					      &rest, err, sizeof(err)), 0);
	CU_ASSERT_TRUE(present);
	CU_ASSERT_STRING_EQUAL(rest, "wire=x");
	CU_ASSERT_EQUAL(c.dir, DRNIC_LINK_FAULT_DIR_RX);
	free(rest);
	CU_ASSERT_EQUAL(link_fault_args_split("wire=x,fault_dir=in", &c, &present, &rest, err,
					      sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "fault_dir=in: not tx, rx or both"));

	/* check() on a struct. */
	ut_cfg(&c);
	CU_ASSERT_EQUAL(drnic_link_faults_check(&c, NULL, 0), 0);
	c.corrupt = 1.01;
	CU_ASSERT_EQUAL(drnic_link_faults_check(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "fault_corrupt"));
	ut_cfg(&c);
	c.dir = (enum drnic_link_fault_dir)3;
	CU_ASSERT_EQUAL(drnic_link_faults_check(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "fault_dir=3: not tx (0), rx (1) or both (2)"));
	c.corrupt = 1.01;
	CU_ASSERT_EQUAL(drnic_link_faults_check(NULL, NULL, 0), -EINVAL);
	CU_ASSERT_PTR_NULL(link_fault_create(&c, 0, SOCKET_ID_ANY));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
}

/* |x - n p| within 6 standard deviations of a binomial(n, p) (plus 1). */
static bool
ut_near(uint64_t x, double n, double p)
{
	double sd = sqrt(n * p * (1 - p));
	double d = fabs((double)x - n * p);

	if (d > 6 * sd + 1) {
		printf("\n%" PRIu64 " frames, expected %.1f (sd %.1f)\n", x, n * p, sd);
		return false;
	}
	return true;
}

/*
 * Run @p total frames through @p f in bursts of 32, polling after each at a
 * clock that advances 1 us a burst; hash what comes out (bytes, order).
 */
static uint64_t
ut_run(struct link_fault *f, uint32_t total, uint64_t *nb_out, uint64_t *now)
{
	struct rte_mbuf *in[32], *out[64];
	uint64_t h = 1469598103934665603ull, t = now != NULL ? *now : 0;
	uint32_t id = 0, i, j;
	uint16_t n, k, got;
	uint8_t buf[2048];

	*nb_out = 0;
	while (id < total || link_fault_held_count(f) > 0) {
		n = 0;
		while (id < total && n < RTE_DIM(in)) {
			in[n] = ut_frame(id++);
			CU_ASSERT_FATAL(in[n] != NULL);
			n++;
		}
		k = link_fault_enqueue(f, in, n, t);
		CU_ASSERT_EQUAL(k, n);
		t += UT_US;
		while ((got = link_fault_poll(f, out, RTE_DIM(out), t)) > 0) {
			for (i = 0; i < got; i++) {
				const uint8_t *b = rte_pktmbuf_read(out[i], 0, out[i]->pkt_len, buf);

				for (j = 0; j < out[i]->pkt_len; j++)
					h = (h ^ b[j]) * 1099511628211ull;
				h = (h ^ 0xFF) * 1099511628211ull;
			}
			*nb_out += got;
			ut_free_all(out, got);
		}
		if (id >= total)
			t += 1000 * UT_US;   /* let timeouts fire */
	}
	if (now != NULL)
		*now = t;
	return h;
}

static void
test_rates(void)
{
	struct drnic_link_faults c;
	struct link_fault *f;
	const double n = 100000;
	uint64_t out, staged, corrupt_tries;

	ut_cfg(&c);
	c.drop = 0.01;
	c.dup = 0.005;
	c.reorder = 0.01;
	c.corrupt = 0.001;
	c.seed = 42;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	CU_ASSERT_FATAL(f != NULL);
	ut_run(f, (uint32_t)n, &out, NULL);
	CU_ASSERT_TRUE(ut_near(f->stats.dropped, n, c.drop));
	CU_ASSERT_TRUE(ut_near(f->stats.duplicated, n - (double)f->stats.dropped, c.dup));
	staged = (uint64_t)n - f->stats.dropped + f->stats.duplicated;
	CU_ASSERT_EQUAL(out, staged);
	corrupt_tries = f->stats.corrupted + f->stats.corrupt_failed;
	CU_ASSERT_TRUE(ut_near(corrupt_tries, (double)staged, c.corrupt));
	CU_ASSERT_EQUAL(f->stats.corrupt_failed, 0);
	CU_ASSERT_TRUE(f->stats.corrupted_bits >= f->stats.corrupted &&
		       f->stats.corrupted_bits <= 3 * f->stats.corrupted);
	/* A frame is not held when the slots are full: a little under p. */
	CU_ASSERT_TRUE(f->stats.reordered <= (double)staged * c.reorder + 6 * sqrt(staged * 0.01) + 1);
	CU_ASSERT_TRUE(f->stats.reordered >= (double)staged * c.reorder * 0.9);
	CU_ASSERT_EQUAL(f->stats.dup_failed, 0);
	CU_ASSERT_EQUAL(f->stats.delayed, 0);
	CU_ASSERT_EQUAL(link_fault_held_count(f), 0);
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);

	/* Every frame lost at 1, none at 0. */
	ut_cfg(&c);
	c.drop = 1;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	ut_run(f, 1000, &out, NULL);
	CU_ASSERT_EQUAL(out, 0);
	CU_ASSERT_EQUAL(f->stats.dropped, 1000);
	link_fault_free(f);
	ut_cfg(&c);
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	ut_run(f, 1000, &out, NULL);
	CU_ASSERT_EQUAL(out, 1000);
	CU_ASSERT_EQUAL(f->rng, 0x9E3779B97F4A7C15ull + (1ull ^ 0));  /* no draw made */
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

static void
test_seed(void)
{
	struct drnic_link_faults c;
	struct link_fault *f;
	uint64_t h[4], out[4];
	struct drnic_link_fault_stats st[4];
	unsigned int i;

	ut_cfg(&c);
	c.drop = 0.02;
	c.dup = 0.02;
	c.reorder = 0.05;
	c.corrupt = 0.02;
	c.jitter_ns = 3 * UT_US;
	/* Runs 0 and 1: seed 7; run 2: seed 8; run 3: seed 7 on queue 1. */
	for (i = 0; i < 4; i++) {
		c.seed = i == 2 ? 8 : 7;
		f = link_fault_create(&c, i == 3 ? 1 : 0, SOCKET_ID_ANY);
		CU_ASSERT_FATAL(f != NULL);
		h[i] = ut_run(f, 5000, &out[i], NULL);
		memset(&st[i], 0, sizeof(st[i]));
		link_fault_stats_add(f, &st[i]);
		link_fault_free(f);
	}
	CU_ASSERT_EQUAL(h[0], h[1]);
	CU_ASSERT_EQUAL(out[0], out[1]);
	CU_ASSERT_EQUAL(memcmp(&st[0], &st[1], sizeof(st[0])), 0);
	CU_ASSERT_NOT_EQUAL(h[0], h[2]);
	CU_ASSERT_NOT_EQUAL(h[0], h[3]);
	CU_ASSERT_NOT_EQUAL(st[0].dropped + st[0].reordered * 1000,
			    st[2].dropped + st[2].reordered * 1000);
	CU_ASSERT_EQUAL(ut_in_use(), 0);

	/* Reseeding at run time starts the same sequence again. */
	ut_cfg(&c);
	c.drop = 0.3;
	c.seed = 99;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	h[0] = ut_run(f, 2000, &out[0], NULL);
	link_fault_update(f, &c);
	h[1] = ut_run(f, 2000, &out[1], NULL);
	CU_ASSERT_EQUAL(h[0], h[1]);
	CU_ASSERT_EQUAL(out[0], out[1]);
	/* ... and a new configuration takes effect at the next call. */
	c.drop = 1;
	link_fault_update(f, &c);
	ut_run(f, 100, &out[2], NULL);
	CU_ASSERT_EQUAL(out[2], 0);
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

/* Fenwick tree over ids: how many ids above x came out already. */
static uint32_t ut_bit[20001];

static void
ut_bit_add(uint32_t i)
{
	for (i++; i < RTE_DIM(ut_bit); i += i & -i)
		ut_bit[i]++;
}

static uint32_t
ut_bit_sum(uint32_t i)   /* ids < i */
{
	uint32_t s = 0;

	for (; i > 0; i -= i & -i)
		s += ut_bit[i];
	return s;
}

static void
ut_reorder_run(unsigned int depth, double p, uint32_t total)
{
	static uint8_t seen[20000];
	struct drnic_link_faults c;
	struct rte_mbuf *in[8], *out[64];
	struct link_fault *f;
	uint32_t id = 0, nout = 0, i, x, over, max_over = 0, max_held = 0;
	uint16_t n, got;
	bool ok = true;

	memset(seen, 0, sizeof(seen));
	memset(ut_bit, 0, sizeof(ut_bit));
	ut_cfg(&c);
	c.reorder = p;
	c.reorder_depth = depth;
	c.reorder_timeout_ns = 1000 * 1000 * 1000;   /* only traffic releases */
	c.seed = depth;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	CU_ASSERT_FATAL(f != NULL);
	while (id < total) {
		n = 0;
		while (id < total && n < 1 + id % RTE_DIM(in))
			in[n++] = ut_frame(id++);
		CU_ASSERT_EQUAL(link_fault_enqueue(f, in, n, 0), n);
		max_held = RTE_MAX(max_held, f->nb_held);
		got = link_fault_poll(f, out, RTE_DIM(out), 0);
		for (i = 0; i < got; i++) {
			x = ut_id(out[i]);
			if (x >= total || seen[x]) {
				ok = false;
				continue;
			}
			seen[x] = 1;
			/* Frames out so far that came in after x. */
			over = nout - ut_bit_sum(x);
			max_over = RTE_MAX(max_over, over);
			ut_bit_add(x);
			nout++;
		}
		ut_free_all(out, got);
	}
	/* The last held frames leave at their timeout. */
	got = link_fault_poll(f, out, RTE_DIM(out), 999999999);
	CU_ASSERT_EQUAL(got, 0);
	got = link_fault_poll(f, out, RTE_DIM(out), 1000 * 1000 * 1000);
	for (i = 0; i < got; i++) {
		x = ut_id(out[i]);
		if (x >= total || seen[x])
			ok = false;
		else
			seen[x] = 1;
		nout++;
	}
	ut_free_all(out, got);
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_EQUAL(nout, total);
	CU_ASSERT_TRUE(max_over <= depth);
	CU_ASSERT_TRUE(max_over >= 1);
	CU_ASSERT_TRUE(max_held <= depth);
	CU_ASSERT_TRUE(f->stats.reordered > 0);
	CU_ASSERT_EQUAL(link_fault_held_count(f), 0);
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

static void
test_reorder(void)
{
	struct drnic_link_faults c;
	struct rte_mbuf *m, *out[4];
	struct link_fault *f;

	ut_reorder_run(8, 0.1, 20000);
	ut_reorder_run(1, 0.5, 5000);
	ut_reorder_run(64, 1.0, 5000);
	ut_reorder_run(3, 1.0, 5000);

	/* A held frame leaves at its timeout when no traffic comes. */
	ut_cfg(&c);
	c.reorder = 1;
	c.reorder_timeout_ns = 20 * UT_US;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	m = ut_frame(5);
	CU_ASSERT_EQUAL(link_fault_enqueue(f, &m, 1, 100), 1);
	CU_ASSERT_EQUAL(link_fault_held_count(f), 1);
	CU_ASSERT_EQUAL(link_fault_poll(f, out, 4, 100 + 20 * UT_US - 1), 0);
	CU_ASSERT_EQUAL(link_fault_poll(f, out, 4, 100 + 20 * UT_US), 1);
	CU_ASSERT_PTR_EQUAL(out[0], m);
	rte_pktmbuf_free(out[0]);
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

/* fault_drop_nth: exactly the Nth RoCEv2 frame is lost, once; ARP and other
 * frames are not counted; IPv6 and tagged frames are RoCEv2 too. */
static void
test_drop_nth(void)
{
	struct drnic_link_faults c;
	struct rte_mbuf *in[16], *out[16];
	struct link_fault *f;
	uint16_t n;
	unsigned int i, k;

	ut_cfg(&c);
	CU_ASSERT_EQUAL(drnic_link_faults_parse("fault_drop_nth=3", &c, NULL, 0), 0);
	CU_ASSERT_EQUAL(c.drop_nth, 3);
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	/* An ARP frame first: not RoCE, not counted. */
	in[0] = rte_pktmbuf_alloc(ut_pool);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in[0]);
	memset(rte_pktmbuf_append(in[0], 60), 0, 60);
	rte_pktmbuf_mtod(in[0], uint8_t *)[12] = 0x08;
	rte_pktmbuf_mtod(in[0], uint8_t *)[13] = 0x06;
	in[1] = ut_frame(1);
	in[2] = ut_frame_ex(ut_pool, 2, DRNIC_WIRE_OP_RC_SEND_ONLY, 6, false, 16);
	in[3] = ut_frame_ex(ut_pool, 3, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, true, 16);
	for (i = 4; i < 10; i++)
		in[i] = ut_frame(i);
	CU_ASSERT_EQUAL(link_fault_enqueue(f, in, 10, 0), 10);
	n = link_fault_poll(f, out, 16, 0);
	CU_ASSERT_EQUAL(n, 9);
	for (i = 1, k = 1; k < n; k++, i++) {
		if (i == 3)
			i++;              /* the third RoCEv2 frame (tagged) is the one lost */
		CU_ASSERT_EQUAL(ut_id(out[k]), i);
	}
	ut_free_all(out, n);
	CU_ASSERT_EQUAL(f->stats.dropped, 1);
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

static void
test_dup(void)
{
	struct drnic_link_faults c;
	struct rte_mbuf *m, *out[4];
	struct link_fault *f;
	uint8_t a[2048], b[2048];
	const uint8_t *pa, *pb;
	uint32_t len;

	ut_cfg(&c);
	c.dup = 1;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	/* A chained frame: the copy is deep in every segment. */
	m = ut_frame_ex(ut_small, 3, DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 4, false, 1000);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_TRUE(m->nb_segs > 1);
	len = m->pkt_len;
	CU_ASSERT_EQUAL(link_fault_enqueue(f, &m, 1, 0), 1);
	CU_ASSERT_EQUAL(link_fault_poll(f, out, 4, 0), 2);
	CU_ASSERT_PTR_EQUAL(out[0], m);
	CU_ASSERT_PTR_NOT_EQUAL(out[1], m);
	CU_ASSERT_EQUAL(out[1]->pkt_len, len);
	CU_ASSERT_EQUAL(rte_mbuf_refcnt_read(out[0]), 1);
	CU_ASSERT_EQUAL(rte_mbuf_refcnt_read(out[1]), 1);
	CU_ASSERT_TRUE(RTE_MBUF_DIRECT(out[1]));
	CU_ASSERT_PTR_NOT_EQUAL(rte_pktmbuf_mtod(out[0], void *), rte_pktmbuf_mtod(out[1], void *));
	pa = rte_pktmbuf_read(out[0], 0, len, a);
	pb = rte_pktmbuf_read(out[1], 0, len, b);
	CU_ASSERT_EQUAL(memcmp(pa, pb, len), 0);
	CU_ASSERT_EQUAL(ut_id(out[1]), 3);
	/* Writing one leaves the other alone. */
	*rte_pktmbuf_mtod_offset(out[1], uint8_t *, len - 1) ^= 0xFF;
	*rte_pktmbuf_mtod_offset(out[1], uint8_t *, 20) ^= 0xFF;
	CU_ASSERT_EQUAL(ut_id(out[0]), 3);
	CU_ASSERT_EQUAL(f->stats.duplicated, 1);
	ut_free_all(out, 2);

	/* No mbuf for the copy: counted, the original still goes. */
	{
		struct rte_mempool *tiny = rte_pktmbuf_pool_create("ut_tiny", 1, 0, 0,
								   RTE_PKTMBUF_HEADROOM + 2048,
								   SOCKET_ID_ANY);

		CU_ASSERT_FATAL(tiny != NULL);
		m = ut_frame_ex(tiny, 9, DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 8);
		CU_ASSERT_FATAL(m != NULL);
		CU_ASSERT_EQUAL(link_fault_enqueue(f, &m, 1, 0), 1);
		CU_ASSERT_EQUAL(link_fault_poll(f, out, 4, 0), 1);
		CU_ASSERT_EQUAL(f->stats.dup_failed, 1);
		rte_pktmbuf_free(out[0]);
		CU_ASSERT_EQUAL(rte_mempool_in_use_count(tiny), 0);
		rte_mempool_free(tiny);
	}
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

static unsigned int
ut_bits_differ(const uint8_t *a, const uint8_t *b, uint32_t len, uint32_t *first)
{
	unsigned int n = 0;
	uint32_t i;

	*first = UINT32_MAX;
	for (i = 0; i < len; i++) {
		if (a[i] != b[i] && *first == UINT32_MAX)
			*first = i;
		n += (unsigned int)__builtin_popcount(a[i] ^ b[i]);
	}
	return n;
}

static void
test_corrupt(void)
{
	static const struct {
		uint8_t op, ipver;
		bool vlan;
		uint32_t len;
		bool chain;
	} kinds[] = {
		{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 0, false },
		{ DRNIC_WIRE_OP_RC_SEND_ONLY, 4, false, 3, false },
		{ DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 4, false, 0, false },
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY, 4, true, 100, false },
		{ DRNIC_WIRE_OP_RC_SEND_ONLY, 6, false, 64, false },
		{ DRNIC_WIRE_OP_RC_ACKNOWLEDGE, 6, true, 0, false },
		{ DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST, 4, false, 1024, true },
		{ DRNIC_WIRE_OP_RC_SEND_MIDDLE, 6, false, 1024, true },
	};
	struct drnic_link_faults c;
	struct rte_mbuf *m, *out[4];
	struct link_fault *f;
	uint8_t orig[2048], now[2048];
	const uint8_t *po, *pn;
	unsigned int i, k, bits, hist[4] = { 0 }, rejected = 0, total = 0;
	uint32_t first, l2;
	uint64_t ol_flags;
	uint16_t l2_len, nb_segs;

	ut_cfg(&c);
	c.corrupt = 1;
	c.seed = 1234;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	for (i = 0; i < 4000; i++) {
		k = i % RTE_DIM(kinds);
		m = ut_frame_ex(kinds[k].chain ? ut_small : ut_pool, i, kinds[k].op,
				kinds[k].ipver, kinds[k].vlan, kinds[k].len);
		CU_ASSERT_FATAL(m != NULL);
		CU_ASSERT_EQUAL(drnic_wire_parse(m, &(struct drnic_wire_pkt){ 0 }), DRNIC_WIRE_OK);
		po = rte_pktmbuf_read(m, 0, m->pkt_len, orig);
		if (po != orig)
			memcpy(orig, po, m->pkt_len);
		ol_flags = m->ol_flags;
		l2_len = m->l2_len;
		nb_segs = m->nb_segs;
		CU_ASSERT_EQUAL(link_fault_enqueue(f, &m, 1, 0), 1);
		CU_ASSERT_FATAL(link_fault_poll(f, out, 4, 0) == 1);
		CU_ASSERT_PTR_EQUAL(out[0], m);   /* ours alone: written in place */
		CU_ASSERT_EQUAL(m->ol_flags, ol_flags);
		CU_ASSERT_EQUAL(m->l2_len, l2_len);
		CU_ASSERT_EQUAL(m->nb_segs, nb_segs);
		pn = rte_pktmbuf_read(m, 0, m->pkt_len, now);
		bits = ut_bits_differ(orig, pn, m->pkt_len, &first);
		l2 = kinds[k].vlan ? 18 : 14;
		CU_ASSERT(bits >= 1 && bits <= 3);
		CU_ASSERT(first >= l2);
		if (bits <= 3)
			hist[bits]++;
		if (drnic_wire_parse(m, &(struct drnic_wire_pkt){ 0 }) != DRNIC_WIRE_OK)
			rejected++;
		total++;
		rte_pktmbuf_free(m);
	}
	CU_ASSERT_EQUAL(rejected, total);
	CU_ASSERT_EQUAL(f->stats.corrupted, total);
	CU_ASSERT_EQUAL(f->stats.corrupted_bits, hist[1] + 2 * hist[2] + 3 * hist[3]);
	CU_ASSERT(hist[1] > 0 && hist[2] > 0 && hist[3] > 0);

	/* A shared frame (the sender keeps a reference) is copied first. */
	m = ut_frame(77);
	rte_mbuf_refcnt_update(m, 1);
	po = rte_pktmbuf_read(m, 0, m->pkt_len, orig);
	memcpy(now, po, m->pkt_len);
	CU_ASSERT_EQUAL(link_fault_enqueue(f, &m, 1, 0), 1);
	CU_ASSERT_FATAL(link_fault_poll(f, out, 4, 0) == 1);
	CU_ASSERT_PTR_NOT_EQUAL(out[0], m);
	CU_ASSERT_EQUAL(rte_mbuf_refcnt_read(m), 1);  /* our reference was dropped */
	CU_ASSERT_EQUAL(memcmp(rte_pktmbuf_mtod(m, void *), now, m->pkt_len), 0);
	CU_ASSERT_EQUAL(ut_id(m), 77);
	CU_ASSERT_NOT_EQUAL(drnic_wire_parse(out[0], &(struct drnic_wire_pkt){ 0 }), DRNIC_WIRE_OK);
	rte_pktmbuf_free(out[0]);
	rte_pktmbuf_free(m);

	/* Duplicated and corrupted: each copy on its own, the original intact
	 * when only the copy is hit. */
	link_fault_free(f);
	ut_cfg(&c);
	c.dup = 1;
	c.corrupt = 0.5;
	c.seed = 5;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	for (i = 0; i < 200; i++) {
		unsigned int good = 0, g;
		uint64_t prev = f->stats.corrupted;

		m = ut_frame(i);
		CU_ASSERT_EQUAL(link_fault_enqueue(f, &m, 1, 0), 1);
		CU_ASSERT_FATAL(link_fault_poll(f, out, 4, 0) == 2);
		for (g = 0; g < 2; g++)
			good += ut_id(out[g]) == i;
		CU_ASSERT_EQUAL(2 - good, f->stats.corrupted - prev);
		ut_free_all(out, 2);
	}
	CU_ASSERT(f->stats.corrupted > 100 && f->stats.corrupted < 300);
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

static void
test_delay(void)
{
	struct drnic_link_faults c;
	struct rte_mbuf *in[10], *out[64];
	struct link_fault *f;
	uint64_t t, enq[200], last_max = 0;
	uint32_t i, id = 0, next = 0, x;
	uint16_t got;

	ut_cfg(&c);
	c.delay_ns = 50 * UT_US;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	for (i = 0; i < 10; i++)
		in[i] = ut_frame(i);
	CU_ASSERT_EQUAL(link_fault_enqueue(f, in, 5, 1000), 5);
	CU_ASSERT_EQUAL(link_fault_enqueue(f, in + 5, 5, 2000), 5);
	CU_ASSERT_EQUAL(link_fault_held_count(f), 10);
	CU_ASSERT_EQUAL(link_fault_poll(f, out, 64, 1000 + 50 * UT_US - 1), 0);
	CU_ASSERT_EQUAL(link_fault_poll(f, out, 64, 1000 + 50 * UT_US), 5);
	for (i = 0; i < 5; i++)
		CU_ASSERT_PTR_EQUAL(out[i], in[i]);
	ut_free_all(out, 5);
	/* peek shows without taking; consume takes part. */
	CU_ASSERT_EQUAL(link_fault_peek(f, out, 64, 2000 + 50 * UT_US), 5);
	link_fault_consume(f, 2);
	CU_ASSERT_EQUAL(link_fault_held_count(f), 3);
	ut_free_all(out, 2);
	CU_ASSERT_EQUAL(link_fault_poll(f, out, 64, 2000 + 50 * UT_US), 3);
	CU_ASSERT_PTR_EQUAL(out[0], in[7]);
	ut_free_all(out, 3);
	CU_ASSERT_EQUAL(f->stats.delayed, 10);
	link_fault_free(f);

	/* Jitter: order kept, nobody early, nobody later than the worst due. */
	ut_cfg(&c);
	c.delay_ns = 10 * UT_US;
	c.jitter_ns = 20 * UT_US;
	c.seed = 3;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	for (t = 0; next < RTE_DIM(enq); t += 500) {
		if (id < RTE_DIM(enq) && t % 2000 == 0) {
			in[0] = ut_frame(id);
			enq[id++] = t;
			CU_ASSERT_EQUAL(link_fault_enqueue(f, in, 1, t), 1);
			last_max = t + 30 * UT_US;
		}
		got = link_fault_poll(f, out, 64, t);
		for (i = 0; i < got; i++) {
			x = ut_id(out[i]);
			CU_ASSERT_EQUAL(x, next);
			if (x < RTE_DIM(enq)) {
				CU_ASSERT(t >= enq[x] + 10 * UT_US);
				CU_ASSERT(t <= last_max + 500);
			}
			next++;
		}
		ut_free_all(out, got);
		CU_ASSERT_FATAL(t < 10 * 1000 * UT_US);
	}
	link_fault_free(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

static void
test_flush_and_full(void)
{
	struct drnic_link_faults c;
	struct rte_mbuf *in[100];
	struct link_fault *f;
	unsigned int i, held;
	uint16_t k;

	/* Frames held for reordering and delay are all freed. */
	ut_cfg(&c);
	c.reorder = 0.5;
	c.dup = 0.3;
	c.delay_ns = 1000 * UT_US;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	for (i = 0; i < 50; i++)
		in[i] = ut_frame(i);
	CU_ASSERT_EQUAL(link_fault_enqueue(f, in, 50, 0), 50);
	held = link_fault_held_count(f);
	CU_ASSERT(held >= 50);
	CU_ASSERT(f->nb_held > 0);
	CU_ASSERT_EQUAL(ut_in_use(), held);
	link_fault_flush(f);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
	CU_ASSERT_EQUAL(f->stats.flushed, held);
	CU_ASSERT_EQUAL(link_fault_held_count(f), 0);
	link_fault_free(f);

	/* A full hold queue refuses; the caller keeps the rest. */
	ut_cfg(&c);
	c.delay_ns = 1000 * UT_US;
	c.queue = 64;
	f = link_fault_create(&c, 0, SOCKET_ID_ANY);
	for (i = 0; i < 100; i++)
		in[i] = ut_frame(i);
	k = link_fault_enqueue(f, in, 100, 0);
	CU_ASSERT_EQUAL(k, 63);
	CU_ASSERT_EQUAL(f->stats.refused, 100 - k);
	ut_free_all(in + k, 100 - k);
	link_fault_free(f);   /* frees the held ones */
	CU_ASSERT_EQUAL(ut_in_use(), 0);
}

/* ------------------------------------------------------------------------ */
/* The link glue on a fake driver that takes at most ut_drv_room frames.    */

static struct rte_mbuf *ut_drv_got[256];
static unsigned int ut_drv_n, ut_drv_room;

static uint16_t
ut_drv_tx(struct drnic_link *link __rte_unused, uint16_t q __rte_unused,
	  struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n && ut_drv_room > 0 && ut_drv_n < RTE_DIM(ut_drv_got); i++, ut_drv_room--)
		ut_drv_got[ut_drv_n++] = pkts[i];
	return i;
}

static void
test_link_glue(void)
{
	static struct link_ops ops = { .name = "ut", .tx_burst = ut_drv_tx };
	struct drnic_link_fault_stats st;
	struct drnic_link_faults c, g;
	struct drnic_link *link;
	struct rte_mbuf *in[32];
	unsigned int i;

	link = rte_zmalloc("ut_link", sizeof(*link), RTE_CACHE_LINE_SIZE);
	CU_ASSERT_FATAL(link != NULL);
	link->ops = &ops;
	link->nb_queues = 2;
	snprintf(link->name, sizeof(link->name), "ut0");
	CU_ASSERT_EQUAL(drnic_link_get_faults(link, &g), -ENOENT);
	CU_ASSERT_EQUAL(drnic_link_fault_stats(link, &st), 0);
	CU_ASSERT_EQUAL(st.dropped + st.held, 0);
	ut_cfg(&c);
	c.drop = 2;
	CU_ASSERT_EQUAL(drnic_link_set_faults(link, &c), -EINVAL);
	CU_ASSERT_PTR_NULL(link->fault[0]);
	CU_ASSERT_EQUAL(drnic_link_set_faults(NULL, &c), -EINVAL);
	c.drop = 0;
	c.seed = 11;
	CU_ASSERT_EQUAL(drnic_link_set_faults(link, &c), 0);
	CU_ASSERT_PTR_NOT_NULL(link->fault[0]);
	CU_ASSERT_PTR_NOT_NULL(link->fault[1]);
	CU_ASSERT_PTR_NULL(link->fault[2]);
	CU_ASSERT_EQUAL(drnic_link_get_faults(link, &g), 0);
	CU_ASSERT_EQUAL(g.seed, 11);

	/* The driver takes 10 of 32: the link took all 32, holds 22. */
	for (i = 0; i < 32; i++)
		in[i] = ut_frame(i);
	ut_drv_n = 0;
	ut_drv_room = 10;
	CU_ASSERT_EQUAL(link_fault_tx_burst(link, 1, in, 32), 32);
	CU_ASSERT_EQUAL(ut_drv_n, 10);
	CU_ASSERT_EQUAL(link->stats[1].tx_packets, 10);
	CU_ASSERT_EQUAL(link->stats[1].tx_bytes, 10ull * in[0]->pkt_len);
	CU_ASSERT_EQUAL(link->stats[1].tx_busy, 0);
	CU_ASSERT_EQUAL(drnic_link_fault_stats(link, &st), 0);
	CU_ASSERT_EQUAL(st.held, 22);
	/* A call without frames sends what is due, in order. */
	ut_drv_room = 100;
	CU_ASSERT_EQUAL(link_fault_tx_burst(link, 1, NULL, 0), 0);
	CU_ASSERT_EQUAL(ut_drv_n, 32);
	for (i = 0; i < 32; i++)
		CU_ASSERT_PTR_EQUAL(ut_drv_got[i], in[i]);
	CU_ASSERT_EQUAL(link->stats[1].tx_packets, 32);
	ut_free_all(ut_drv_got, ut_drv_n);

	/* Turned on at run time: everything dropped; counted by the link. */
	c.drop = 1;
	CU_ASSERT_EQUAL(drnic_link_set_faults(link, &c), 0);
	for (i = 0; i < 32; i++)
		in[i] = ut_frame(i);
	ut_drv_n = 0;
	CU_ASSERT_EQUAL(link_fault_tx_burst(link, 0, in, 32), 32);
	CU_ASSERT_EQUAL(ut_drv_n, 0);
	CU_ASSERT_EQUAL(drnic_link_fault_stats(link, &st), 0);
	CU_ASSERT_EQUAL(st.dropped, 32);
	CU_ASSERT_EQUAL(drnic_link_get_faults(link, &g), 0);
	CU_ASSERT_EQUAL(g.drop, 1);

	/* Held frames are freed when the link closes. */
	c.drop = 0;
	c.delay_ns = 1000 * 1000 * UT_US;
	CU_ASSERT_EQUAL(drnic_link_set_faults(link, &c), 0);
	for (i = 0; i < 5; i++)
		in[i] = ut_frame(i);
	CU_ASSERT_EQUAL(link_fault_tx_burst(link, 0, in, 5), 5);
	CU_ASSERT_EQUAL(ut_drv_n, 0);
	CU_ASSERT_EQUAL(ut_in_use(), 5);
	link_fault_detach(link);
	CU_ASSERT_PTR_NULL(link->fault[0]);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
	rte_free(link);
}

/* ------------------------------------------------------------------------ */
/* The receive side: a fake driver that hands out ut_rx_total frames.       */

static uint32_t ut_rx_next, ut_rx_total;

static uint16_t
ut_drv_rx(struct drnic_link *link __rte_unused, uint16_t q __rte_unused,
	  struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n && ut_rx_next < ut_rx_total; i++) {
		pkts[i] = ut_frame(ut_rx_next++);
		CU_ASSERT_FATAL(pkts[i] != NULL);
	}
	return i;
}

/* Receive until the driver is dry and nothing is held; check the order of
 * the frames that come out (ids rising). Returns how many came out. */
static uint64_t
ut_rx_drain(struct drnic_link *link, uint16_t q)
{
	struct rte_mbuf *out[32];
	uint64_t nb = 0;
	uint32_t last = 0, id;
	unsigned int spins = 0;
	uint16_t got, i;

	for (;;) {
		got = link_rx_burst(link, q, out, RTE_DIM(out));
		for (i = 0; i < got; i++) {
			id = ut_id(out[i]);
			CU_ASSERT(id != UINT32_MAX && (nb == 0 || id > last));
			last = id;
		}
		nb += got;
		ut_free_all(out, got);
		if (got > 0)
			continue;
		if (ut_rx_next >= ut_rx_total &&
		    (link->fault_rx[q] == NULL || link_fault_held_count(link->fault_rx[q]) == 0))
			break;
		if (++spins > 1000000)   /* delayed frames become due in time */
			break;
		rte_delay_us_block(1);
	}
	return nb;
}

static void
test_link_rx(void)
{
	static struct link_ops ops = { .name = "ut", .tx_burst = ut_drv_tx, .rx_burst = ut_drv_rx };
	struct drnic_link_fault_stats st, tx, rx;
	struct drnic_link_faults c, g;
	struct drnic_link *link;
	struct rte_mbuf *out[64];
	const uint32_t n = 20000;
	uint64_t nb;
	uint16_t got;

	link = rte_zmalloc("ut_link", sizeof(*link), RTE_CACHE_LINE_SIZE);
	CU_ASSERT_FATAL(link != NULL);
	link->ops = &ops;
	link->nb_queues = 2;
	snprintf(link->name, sizeof(link->name), "ut1");

	/* fault_dir=rx: receive injectors only, seeded apart from transmit. */
	ut_cfg(&c);
	c.dir = DRNIC_LINK_FAULT_DIR_RX;
	c.drop = 0.05;
	c.seed = 9;
	CU_ASSERT_EQUAL(drnic_link_set_faults(link, &c), 0);
	CU_ASSERT_PTR_NULL(link->fault[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(link->fault_rx[0]);
	CU_ASSERT_PTR_NOT_NULL(link->fault_rx[1]);
	CU_ASSERT_PTR_NULL(link->fault_rx[2]);
	CU_ASSERT_EQUAL(link->fault_rx[1]->stream, LINK_MAX_QUEUES + 1);
	CU_ASSERT_EQUAL(drnic_link_get_faults(link, &g), 0);
	CU_ASSERT_EQUAL(g.dir, DRNIC_LINK_FAULT_DIR_RX);
	CU_ASSERT_DOUBLE_EQUAL(g.drop, 0.05, 1e-12);

	/* Drops at the rate, order kept, the link counts what the driver gave. */
	ut_rx_next = 0;
	ut_rx_total = n;
	ut_mirrored = 0;
	nb = ut_rx_drain(link, 1);
	CU_ASSERT_EQUAL(drnic_link_fault_stats_dir(link, DRNIC_LINK_FAULT_DIR_RX, &rx), 0);
	CU_ASSERT_EQUAL(drnic_link_fault_stats_dir(link, DRNIC_LINK_FAULT_DIR_TX, &tx), 0);
	CU_ASSERT_EQUAL(drnic_link_fault_stats(link, &st), 0);
	CU_ASSERT_TRUE(ut_near(rx.dropped, n, c.drop));
	CU_ASSERT_EQUAL(nb + rx.dropped, n);
	CU_ASSERT_EQUAL(rx.refused, 0);
	CU_ASSERT_EQUAL(rx.held, 0);
	CU_ASSERT_EQUAL(tx.dropped, 0);
	CU_ASSERT_EQUAL(st.dropped, rx.dropped);
	CU_ASSERT_EQUAL(link->stats[1].rx_packets, n);
	CU_ASSERT_EQUAL(link->stats[0].rx_packets, 0);
	CU_ASSERT_EQUAL(ut_mirrored, 0);    /* no capture runs */
	CU_ASSERT_EQUAL(ut_in_use(), 0);
	CU_ASSERT_EQUAL(drnic_link_fault_stats_dir(link, (enum drnic_link_fault_dir)3, &st),
			-EINVAL);

	/* A full hold queue: the frames it refuses are freed and counted. */
	c.drop = 0;
	c.delay_ns = 1000 * UT_US;   /* 1 ms */
	CU_ASSERT_EQUAL(drnic_link_set_faults(link, &c), 0);
	c.queue = 64;
	link_fault_free(link->fault_rx[0]);
	link->fault_rx[0] = link_fault_create(&c, LINK_MAX_QUEUES, SOCKET_ID_ANY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(link->fault_rx[0]);
	ut_rx_next = 0;
	ut_rx_total = 200;
	got = link_rx_burst(link, 0, out, 64);
	got += link_rx_burst(link, 0, out + got, (uint16_t)(64 - got));
	CU_ASSERT_EQUAL(got, 0);             /* none due yet */
	CU_ASSERT_EQUAL(link_fault_held_count(link->fault_rx[0]), 63);
	CU_ASSERT_EQUAL(link->fault_rx[0]->stats.refused, 128 - 63);
	CU_ASSERT_EQUAL(ut_in_use(), 63);
	/* The driver is dry (ut_rx_total reached below): due frames still come. */
	ut_rx_total = ut_rx_next;
	rte_delay_us_block(1500);
	got = link_rx_burst(link, 0, out, 64);
	CU_ASSERT_EQUAL(got, 63);
	ut_free_all(out, got);
	CU_ASSERT_EQUAL(ut_in_use(), 0);

	/* Runtime switch to tx: the receive injectors pass frames unchanged. */
	ut_cfg(&c);
	c.drop = 1;
	c.seed = 3;
	CU_ASSERT_EQUAL(drnic_link_set_faults(link, &c), 0);
	CU_ASSERT_PTR_NOT_NULL(link->fault[0]);
	CU_ASSERT_EQUAL(drnic_link_get_faults(link, &g), 0);
	CU_ASSERT_EQUAL(g.dir, DRNIC_LINK_FAULT_DIR_TX);
	CU_ASSERT_EQUAL(g.drop, 1);
	CU_ASSERT_EQUAL(drnic_link_fault_stats_dir(link, DRNIC_LINK_FAULT_DIR_RX, &st), 0);
	ut_rx_next = 0;
	ut_rx_total = 500;
	nb = ut_rx_drain(link, 1);
	CU_ASSERT_EQUAL(nb, 500);
	CU_ASSERT_EQUAL(drnic_link_fault_stats_dir(link, DRNIC_LINK_FAULT_DIR_RX, &rx), 0);
	CU_ASSERT_EQUAL(rx.dropped, st.dropped);

	/* both: each side drops everything; detach frees both sides. */
	c.dir = DRNIC_LINK_FAULT_DIR_BOTH;
	CU_ASSERT_EQUAL(drnic_link_set_faults(link, &c), 0);
	ut_rx_next = 0;
	ut_rx_total = 100;
	CU_ASSERT_EQUAL(ut_rx_drain(link, 0), 0);
	out[0] = ut_frame(1);
	ut_drv_n = 0;
	CU_ASSERT_EQUAL(link_tx_burst(link, 0, out, 1), 1);
	CU_ASSERT_EQUAL(ut_drv_n, 0);
	CU_ASSERT_EQUAL(drnic_link_fault_stats_dir(link, DRNIC_LINK_FAULT_DIR_TX, &tx), 0);
	CU_ASSERT_EQUAL(tx.dropped, 1);
	link_fault_detach(link);
	CU_ASSERT_PTR_NULL(link->fault_rx[0]);
	CU_ASSERT_PTR_NULL(link->fault[0]);
	CU_ASSERT_EQUAL(ut_in_use(), 0);
	rte_free(link);
}

static int
ut_eal(void)
{
	char *argv[] = {
		(char *)"link_fault_ut", (char *)"--no-huge", (char *)"--no-shconf",
		(char *)"--no-pci", (char *)"--no-telemetry", (char *)"-l", (char *)"0",
		(char *)"-m", (char *)"128", (char *)"--log-level=lib.eal:error", NULL,
	};

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	ut_pool = rte_pktmbuf_pool_create("ut_pool", UT_NB_MBUF, 0, 0,
					  RTE_PKTMBUF_HEADROOM + 4096, SOCKET_ID_ANY);
	ut_small = rte_pktmbuf_pool_create("ut_small", 1024, 0, 0, RTE_PKTMBUF_HEADROOM + 256,
					   SOCKET_ID_ANY);
	return ut_pool != NULL && ut_small != NULL ? 0 : -1;
}

int
main(void)
{
	CU_pSuite s;

	if (ut_eal() != 0)
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("link_fault", NULL, NULL);
	CU_add_test(s, "parse", test_parse);
	CU_add_test(s, "rates", test_rates);
	CU_add_test(s, "seed", test_seed);
	CU_add_test(s, "reorder", test_reorder);
	CU_add_test(s, "dup", test_dup);
	CU_add_test(s, "corrupt", test_corrupt);
	CU_add_test(s, "delay", test_delay);
	CU_add_test(s, "flush_and_full", test_flush_and_full);
	CU_add_test(s, "link_glue", test_link_glue);
	CU_add_test(s, "drop_nth", test_drop_nth);
	CU_add_test(s, "link_rx", test_link_rx);
	return ut_run_all();
}
