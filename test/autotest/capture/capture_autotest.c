/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture_autotest: drnic_capture writes a pcapng file that a reader accepts.
 * Writes frames of many sizes (one chained over three segments, one longer
 * than the snapshot length) in bursts larger than the capture's own, reads the
 * file back with a small pcapng block parser and checks the blocks, the
 * interface, every frame's lengths, bytes and direction; then, when tshark is
 * installed, that tshark counts the same frames.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "drnic_capture.h"
#include "test.h"

#define CAP_NFRAMES 100
#define CAP_SNAPLEN 2048
#define CAP_LONG_LEN 3000     /* frame 7: longer than CAP_SNAPLEN */
#define CAP_CHAINED 9         /* frame 9: three segments */

struct cap_file {
	uint8_t *data;
	size_t len;
	uint64_t t_min_ns;    /* wall clock before the first write */
	uint64_t t_max_ns;    /* and after the last */
};

static uint64_t
cap_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t
cap_frame_len(unsigned int i)
{
	if (i == 7)
		return CAP_LONG_LEN;
	return 60 + (i * 37) % 1450;
}

/* Byte @p off of frame @p i: an Ethernet header (EtherType 0x88B5, local
 * experimental, so readers do not dissect further), then a pattern. */
static uint8_t
cap_frame_byte(unsigned int i, uint32_t off)
{
	static const uint8_t eth[14] = {
		0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x88, 0xB5 };

	if (off < sizeof(eth))
		return eth[off];
	return (uint8_t)(i * 31 + off * 7 + (off >> 8));
}

static enum drnic_capture_dir
cap_frame_dir(unsigned int i)
{
	return (enum drnic_capture_dir)(i % 3);
}

/* Build frame @p i from @p mp, over three segments when i == CAP_CHAINED. */
static struct rte_mbuf *
cap_make_frame(struct rte_mempool *mp, unsigned int i)
{
	uint32_t len = cap_frame_len(i), off = 0;
	unsigned int nseg = (i == CAP_CHAINED || len > 2000) ? 3 : 1, s;
	struct rte_mbuf *head = NULL, *m;

	for (s = 0; s < nseg; s++) {
		uint32_t part = s + 1 < nseg ? len / nseg : len - off, k;
		uint8_t *p;

		m = rte_pktmbuf_alloc(mp);
		if (m == NULL)
			goto fail;
		p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)part);
		if (p == NULL) {
			rte_pktmbuf_free(m);
			goto fail;
		}
		for (k = 0; k < part; k++)
			p[k] = cap_frame_byte(i, off + k);
		off += part;
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			goto fail;
		}
	}
	return head;
fail:
	rte_pktmbuf_free(head);
	return NULL;
}

static int
cap_read_file(const char *path, struct cap_file *f)
{
	FILE *fp = fopen(path, "rb");
	long sz;

	if (fp == NULL)
		return -errno;
	fseek(fp, 0, SEEK_END);
	sz = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	f->data = malloc((size_t)sz + 1);
	if (f->data == NULL || fread(f->data, 1, (size_t)sz, fp) != (size_t)sz) {
		fclose(fp);
		free(f->data);
		return -EIO;
	}
	f->len = (size_t)sz;
	fclose(fp);
	return 0;
}

static uint32_t
cap_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t
cap_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Find option @p code in [p, end); returns its value or NULL. */
static const uint8_t *
cap_find_option(const uint8_t *p, const uint8_t *end, uint16_t code, uint16_t *len)
{
	while (p + 4 <= end) {
		uint16_t c = cap_u16(p), l = cap_u16(p + 2);

		if (c == 0 || p + 4 + l > end)
			return NULL;
		if (c == code) {
			*len = l;
			return p + 4;
		}
		p += 4 + ((l + 3u) & ~3u);
	}
	return NULL;
}

/* Walk the file; check every block; count frames and compare their bytes. */
static int
cap_check_file(const struct cap_file *f, unsigned int nframes, bool all_tx)
{
	size_t off = 0;
	unsigned int nidb = 0, nepb = 0, nshb = 0;
	uint32_t our_if = UINT32_MAX;
	uint64_t last_ts = 0;

	while (off < f->len) {
		const uint8_t *b = f->data + off;
		uint32_t type, blen;

		TEST_ASSERT(off + 12 <= f->len, "truncated block at offset %zu", off);
		type = cap_u32(b);
		blen = cap_u32(b + 4);
		TEST_ASSERT(blen >= 12 && blen % 4 == 0 && off + blen <= f->len,
			    "bad block length %u at offset %zu", blen, off);
		TEST_ASSERT_EQUAL(cap_u32(b + blen - 4), blen, "trailing length at %zu", off);

		if (type == 0x0A0D0D0A) {
			TEST_ASSERT(off == 0 && nshb == 0, "section header not first");
			TEST_ASSERT_EQUAL(cap_u32(b + 8), 0x1A2B3C4D, "byte-order magic");
			nshb++;
		} else if (type == 1) {
			const uint8_t *opt;
			uint16_t olen;

			TEST_ASSERT(nepb == 0, "interface block after packets");
			TEST_ASSERT_EQUAL(cap_u16(b + 8), 1, "link type Ethernet");
			opt = cap_find_option(b + 16, b + blen - 4, 2, &olen);
			if (opt != NULL && olen == strlen("captest") &&
			    memcmp(opt, "captest", olen) == 0) {
				TEST_ASSERT_EQUAL(cap_u32(b + 12), CAP_SNAPLEN, "snaplen");
				opt = cap_find_option(b + 16, b + blen - 4, 9, &olen);
				TEST_ASSERT(opt != NULL && olen == 1 && opt[0] == 9,
					    "if_tsresol is nanoseconds");
				our_if = nidb;
			}
			nidb++;
		} else if (type == 6) {
			uint32_t ifid = cap_u32(b + 8), caplen = cap_u32(b + 20);
			uint32_t origlen = cap_u32(b + 24), k, want;
			uint64_t ts = (uint64_t)cap_u32(b + 12) << 32 | cap_u32(b + 16);
			const uint8_t *opt, *pkt = b + 28;
			uint16_t olen;

			/* nanoseconds since 1970, taken while the test wrote */
			TEST_ASSERT(ts + 1000000000ull >= f->t_min_ns &&
				    ts <= f->t_max_ns + 1000000000ull,
				    "frame %u timestamp %" PRIu64 " ns outside [%" PRIu64 ", %" PRIu64 "]",
				    nepb, ts, f->t_min_ns, f->t_max_ns);
			TEST_ASSERT(ts >= last_ts, "frame %u timestamp goes back", nepb);
			last_ts = ts;

			TEST_ASSERT(nepb < nframes, "more packet blocks than frames");
			TEST_ASSERT_EQUAL(ifid, our_if, "frame %u interface id", nepb);
			want = cap_frame_len(nepb);
			TEST_ASSERT_EQUAL(origlen, want, "frame %u original length", nepb);
			TEST_ASSERT_EQUAL(caplen, RTE_MIN(want, (uint32_t)CAP_SNAPLEN),
					  "frame %u captured length", nepb);
			TEST_ASSERT(28 + ((caplen + 3) & ~3u) + 4 <= blen, "frame %u overflows", nepb);
			for (k = 0; k < caplen; k++)
				TEST_ASSERT_EQUAL(pkt[k], cap_frame_byte(nepb, k),
						  "frame %u byte %u", nepb, k);
			opt = cap_find_option(pkt + ((caplen + 3) & ~3u), b + blen - 4, 2, &olen);
			TEST_ASSERT(opt != NULL && olen == 4, "frame %u has epb_flags", nepb);
			TEST_ASSERT_EQUAL(cap_u32(opt) & 3,
					  all_tx ? DRNIC_CAPTURE_DIR_TX : cap_frame_dir(nepb),
					  "frame %u direction", nepb);
			nepb++;
		} else {
			TEST_ASSERT(0, "unexpected block type 0x%x at offset %zu", type, off);
		}
		off += blen;
	}
	TEST_ASSERT_EQUAL(nshb, 1, "section headers");
	TEST_ASSERT(our_if != UINT32_MAX, "no interface block named captest");
	TEST_ASSERT_EQUAL(nepb, nframes, "packet blocks");
	return TEST_SUCCESS;
}

/* Ask tshark how many frames it reads and whether it reports any error. */
static int
cap_check_tshark(const char *path, unsigned int nframes)
{
	char cmd[1024], line[256];
	unsigned int n = 0, bad = 0;
	FILE *p;
	int st;

	if (system("command -v tshark >/dev/null 2>&1") != 0) {
		printf("tshark not installed: cross-check with tshark not run\n");
		return TEST_SUCCESS;
	}
	snprintf(cmd, sizeof(cmd),
		 "tshark -r '%s' -T fields -e frame.number -e frame.len -e _ws.malformed 2>/dev/null",
		 path);
	p = popen(cmd, "r");
	TEST_ASSERT(p != NULL, "popen tshark");
	while (fgets(line, sizeof(line), p) != NULL) {
		unsigned int num, len;
		char extra[64] = "";

		if (sscanf(line, "%u %u %63s", &num, &len, extra) < 2) {
			printf("tshark: %s", line);
			bad++;
			continue;
		}
		if (num != n + 1 || len != cap_frame_len(n) || extra[0] != '\0') {
			printf("tshark: unexpected line: %s", line);
			bad++;
		}
		n++;
	}
	st = pclose(p);
	TEST_ASSERT(st == 0, "tshark exit status %d", st);
	TEST_ASSERT_EQUAL(bad, 0, "tshark lines with errors");
	TEST_ASSERT_EQUAL(n, nframes, "frames read by tshark");
	return TEST_SUCCESS;
}

static int
cap_check_errors(const char *dir)
{
	struct drnic_capture_opts big = { .snaplen = DRNIC_CAPTURE_SNAPLEN_MAX + 1 };
	char path[512];

	TEST_ASSERT(drnic_capture_open(NULL, NULL) == NULL && rte_errno == EINVAL, "NULL path");
	TEST_ASSERT(drnic_capture_open("", NULL) == NULL && rte_errno == EINVAL, "empty path");
	snprintf(path, sizeof(path), "%s/x.pcapng", dir);
	TEST_ASSERT(drnic_capture_open(path, &big) == NULL && rte_errno == EINVAL, "snaplen");
	snprintf(path, sizeof(path), "%s/no/such/dir.pcapng", dir);
	TEST_ASSERT(drnic_capture_open(path, NULL) == NULL && rte_errno == ENOENT,
		    "missing directory gives ENOENT, got %d", rte_errno);
	TEST_ASSERT_EQUAL(drnic_capture_close(NULL), 0, "close(NULL)");
	TEST_ASSERT_EQUAL(drnic_capture_write(NULL, NULL, 1, DRNIC_CAPTURE_DIR_TX), 0, "write(NULL)");
	return TEST_SUCCESS;
}

static int
cap_run(const char *dir, struct rte_mempool *mp, struct rte_mbuf **frames)
{
	struct drnic_capture_opts opts = {
		.ifname = "captest", .ifdescr = "drnic capture autotest",
		.comment = "capture_autotest", .snaplen = CAP_SNAPLEN,
	};
	struct drnic_capture_stats st;
	struct drnic_capture *cap;
	struct cap_file f = { 0 };
	char path[512];
	unsigned int i, avail;
	int rc;

	rc = cap_check_errors(dir);
	if (rc != TEST_SUCCESS)
		return rc;

	for (i = 0; i < CAP_NFRAMES; i++) {
		frames[i] = cap_make_frame(mp, i);
		TEST_ASSERT(frames[i] != NULL, "frame %u: no mbuf", i);
	}
	TEST_ASSERT_EQUAL(frames[CAP_CHAINED]->nb_segs, 3, "chained frame");
	avail = rte_mempool_avail_count(mp);

	snprintf(path, sizeof(path), "%s/cap.pcapng", dir);
	f.t_min_ns = cap_now_ns();
	cap = drnic_capture_open(path, &opts);
	TEST_ASSERT(cap != NULL, "open %s: %s", path, rte_strerror(rte_errno));
	/* One frame per call, the direction varying per frame. */
	for (i = 0; i < CAP_NFRAMES; i++)
		TEST_ASSERT_EQUAL(drnic_capture_write(cap, &frames[i], 1, cap_frame_dir(i)), 1,
				  "write frame %u", i);
	drnic_capture_stats(cap, &st);
	TEST_ASSERT_EQUAL(drnic_capture_close(cap), 0, "close");
	f.t_max_ns = cap_now_ns();
	TEST_ASSERT_EQUAL(st.packets, CAP_NFRAMES, "packets");
	TEST_ASSERT_EQUAL(st.truncated, 1, "truncated");
	TEST_ASSERT_EQUAL(st.dropped, 0, "dropped");
	TEST_ASSERT_EQUAL(rte_mempool_avail_count(mp), avail, "caller's mbufs untouched");
	for (i = 0; i < CAP_NFRAMES; i++)
		TEST_ASSERT_EQUAL(rte_mbuf_refcnt_read(frames[i]), 1, "frame %u refcnt", i);

	TEST_ASSERT_SUCCESS(cap_read_file(path, &f), "read back %s", path);
	rc = cap_check_file(&f, CAP_NFRAMES, false);
	free(f.data);
	if (rc != TEST_SUCCESS)
		return rc;
	rc = cap_check_tshark(path, CAP_NFRAMES);
	if (rc != TEST_SUCCESS)
		return rc;

	/* The same frames in bursts of 45 (more than the capture's own), all outbound. */
	f.t_min_ns = cap_now_ns();
	cap = drnic_capture_open(path, &opts);
	TEST_ASSERT(cap != NULL, "reopen: %s", rte_strerror(rte_errno));
	TEST_ASSERT_EQUAL(drnic_capture_write(cap, frames, 45, DRNIC_CAPTURE_DIR_TX), 45, "burst 1");
	TEST_ASSERT_EQUAL(drnic_capture_write(cap, frames + 45, CAP_NFRAMES - 45,
					      DRNIC_CAPTURE_DIR_TX), CAP_NFRAMES - 45, "burst 2");
	drnic_capture_stats(cap, &st);
	TEST_ASSERT_EQUAL(drnic_capture_close(cap), 0, "close");
	f.t_max_ns = cap_now_ns();
	TEST_ASSERT_EQUAL(st.packets, CAP_NFRAMES, "burst packets");
	TEST_ASSERT_EQUAL(rte_mempool_avail_count(mp), avail, "caller's mbufs untouched");
	TEST_ASSERT_SUCCESS(cap_read_file(path, &f), "read back %s", path);
	rc = cap_check_file(&f, CAP_NFRAMES, true);
	free(f.data);
	return rc;
}

static int
test_capture(void)
{
	struct rte_mbuf *frames[CAP_NFRAMES] = { 0 };
	char dir[] = "/tmp/drnic-capture-XXXXXX";
	char path[600];
	struct rte_mempool *mp;
	unsigned int i;
	int rc;

	TEST_ASSERT(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
	mp = rte_pktmbuf_pool_create("cap_test", 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	if (mp == NULL) {
		rmdir(dir);
		TEST_ASSERT(0, "mempool: %s", rte_strerror(rte_errno));
	}
	rc = cap_run(dir, mp, frames);
	for (i = 0; i < CAP_NFRAMES; i++)
		rte_pktmbuf_free(frames[i]);
	rte_mempool_free(mp);
	snprintf(path, sizeof(path), "%s/cap.pcapng", dir);
	unlink(path);
	rmdir(dir);
	return rc;
}

DRNIC_TEST_REGISTER(capture_autotest, DRNIC_TEST_FAST, test_capture);
