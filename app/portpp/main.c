/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic-portpp: a raw ping-pong over a DPDK ethdev port, the floor that
 * drnic's own ping-pong over the same port type is measured against (no
 * RDMA, no drnic: frames of a given size bounced back).
 *
 *   drnic-portpp --server --dev DEVARGS [options]
 *   drnic-portpp --client --dev DEVARGS [options]
 *
 * The client sends one frame of --size bytes (Ethernet header included,
 * ethertype 0x88B5, a sequence number and the send time inside), waits for
 * it to come back, and records the round trip (the time from one frame's
 * return to the next one's, as drnic-pingpong counts); the server bounces every
 * frame it receives (MACs swapped) until the client's last frame. The port
 * is set up as drnic's ethdev link does (one rx and one tx queue, one frame
 * per mbuf). Prints the median, mean, minimum and 99th percentile round trip.
 *
 * Options:
 *   --dev DEVARGS     device to probe, e.g.
 *                     net_af_packet0,iface=veth0,blocksz=65536,framesz=8192,qpairs=1
 *   --size N          frame size in bytes (default 4154 = a 4096-byte RoCE SEND)
 *   --iters N         round trips measured (default 10000)
 *   --warmup N        round trips first, not measured (default 1000)
 *   --dst MAC         the client's destination MAC (default broadcast)
 *   --timeout SEC     give up after SEC seconds without an answer (default 10)
 *   --acks            also send, on every frame received, a 62-byte frame
 *                     first (in its own burst), as an RC responder's ACK is:
 *                     the floor with RC's frame pattern (the peer drops them)
 *   --ip SRC,DST      frames are IPv4/UDP datagrams from SRC to DST (the
 *                     server answers from DST to SRC), to RoCEv2's UDP port
 *                     4791, the sequence header after the UDP header: over
 *                     af_packet the kernel's own IP input then sees each frame
 *                     as it sees drnic's RoCE frames (with the default
 *                     ethertype 0x88B5 it drops them at once)
 *   --file-prefix P, --lcores L, --eal ARG   EAL options
 * Output (client): "portpp: N round trips of S-byte frames: median X us, ..."
 * Exit 0 on success.
 */
#include <errno.h>
#include <getopt.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include <rte_mbuf.h>

#include "drnic_env.h"

#define PPP_ETHERTYPE 0x88B5
#define PPP_UDP_DPORT 4791      /* RoCEv2's */
#define PPP_UDP_SPORT 0xC0DE
#define PPP_L3_LEN (sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))
#define PPP_MAGIC 0x64726e70u   /* "drnp" */
#define PPP_MAX_EAL 8
#define PPP_BURST 32

struct ppp_opts {
	bool server;
	const char *dev;
	uint32_t size;
	uint32_t iters;
	uint32_t warmup;
	struct rte_ether_addr dst;
	unsigned int timeout_s;
	bool acks;
	bool ip;                /* --ip: IPv4/UDP frames */
	rte_be32_t ip_src, ip_dst;
	const char *file_prefix;
	const char *lcores;
	const char *eal[PPP_MAX_EAL + 1];
	unsigned int nb_eal;
};

/* Payload head of every frame. */
struct ppp_hdr {
	uint32_t magic;
	uint32_t seq;
	uint32_t last;          /* 1: the client's final frame */
	uint32_t pad;
	uint64_t tsc;
} __rte_packed;

/* Where the sequence header starts in a frame. */
static size_t
ppp_hdr_off(const struct ppp_opts *o)
{
	return RTE_ETHER_HDR_LEN + (o->ip ? PPP_L3_LEN : 0);
}

/* --ip SRC,DST */
static int
ppp_parse_ip(const char *arg, struct ppp_opts *o)
{
	char buf[64], *comma;
	struct in_addr a, b;

	snprintf(buf, sizeof(buf), "%s", arg);
	comma = strchr(buf, ',');
	if (comma == NULL)
		return -1;
	*comma = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1 || inet_pton(AF_INET, comma + 1, &b) != 1)
		return -1;
	o->ip = true;
	o->ip_src = a.s_addr;
	o->ip_dst = b.s_addr;
	return 0;
}

/*
 * Frame @p m's headers after Ethernet (--ip: IPv4 and UDP from @p src to
 * @p dst), @p len bytes in all: its ethertype.
 */
static rte_be16_t
ppp_put_l3(const struct ppp_opts *o, struct rte_ether_hdr *eh, uint32_t len, rte_be32_t src,
	   rte_be32_t dst)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint16_t l3 = (uint16_t)(len - RTE_ETHER_HDR_LEN);

	if (!o->ip)
		return rte_cpu_to_be_16(PPP_ETHERTYPE);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(l3);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = src;
	ip->dst_addr = dst;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(PPP_UDP_SPORT);
	udp->dst_port = rte_cpu_to_be_16(PPP_UDP_DPORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(l3 - sizeof(*ip)));
	udp->dgram_cksum = 0;
	return rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
}

/* The sequence header of received frame @p m, NULL when it is not one of
 * ours (--ip: an IPv4/UDP datagram to port 4791). */
static const struct ppp_hdr *
ppp_get_hdr(const struct ppp_opts *o, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct ppp_hdr *h;

	if (m->data_len < ppp_hdr_off(o) + sizeof(*h))
		return NULL;
	if (o->ip) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);
		const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);

		if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
		    ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_UDP ||
		    udp->dst_port != rte_cpu_to_be_16(PPP_UDP_DPORT))
			return NULL;
	} else if (eh->ether_type != rte_cpu_to_be_16(PPP_ETHERTYPE)) {
		return NULL;
	}
	h = rte_pktmbuf_mtod_offset(m, const struct ppp_hdr *, ppp_hdr_off(o));
	return h->magic == PPP_MAGIC ? h : NULL;
}

static void
usage(const char *argv0)
{
	printf("Usage: %s --server|--client --dev DEVARGS [--size N] [--iters N] [--warmup N]\n"
	       "       [--dst MAC] [--timeout SEC] [--acks] [--ip SRC,DST] [--file-prefix P]\n"
	       "       [--lcores L] [--eal ARG]\n",
	       argv0);
}

static int
ppp_parse(int argc, char **argv, struct ppp_opts *o)
{
	static const struct option longs[] = {
		{ "server", 0, NULL, 's' }, { "client", 0, NULL, 'c' }, { "dev", 1, NULL, 'd' },
		{ "size", 1, NULL, 'S' }, { "iters", 1, NULL, 'n' }, { "warmup", 1, NULL, 'w' },
		{ "dst", 1, NULL, 'D' }, { "timeout", 1, NULL, 'T' }, { "acks", 0, NULL, 'A' },
		{ "ip", 1, NULL, 'I' },
		{ "file-prefix", 1, NULL, 'P' }, { "lcores", 1, NULL, 'L' },
		{ "eal", 1, NULL, 'E' }, { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c, role = 0;

	memset(o, 0, sizeof(*o));
	o->size = 4154;
	o->iters = 10000;
	o->warmup = 1000;
	o->timeout_s = 10;
	memset(o->dst.addr_bytes, 0xff, RTE_ETHER_ADDR_LEN);
	while ((c = getopt_long(argc, argv, "scd:S:n:w:h", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			o->server = true;
			role++;
			break;
		case 'c':
			o->server = false;
			role++;
			break;
		case 'd':
			o->dev = optarg;
			break;
		case 'S':
			o->size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			o->iters = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'w':
			o->warmup = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'D':
			if (rte_ether_unformat_addr(optarg, &o->dst) < 0)
				return -1;
			break;
		case 'T':
			o->timeout_s = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'A':
			o->acks = true;
			break;
		case 'I':
			if (ppp_parse_ip(optarg, o) < 0)
				return -1;
			break;
		case 'P':
			o->file_prefix = optarg;
			break;
		case 'L':
			o->lcores = optarg;
			break;
		case 'E':
			if (o->nb_eal == PPP_MAX_EAL)
				return -1;
			o->eal[o->nb_eal++] = optarg;
			break;
		default:
			return -1;
		}
	}
	if (role != 1 || o->dev == NULL || optind != argc || o->iters == 0 || o->timeout_s == 0 ||
	    o->size < ppp_hdr_off(o) + sizeof(struct ppp_hdr) || o->size > 9000)
		return -1;
	return 0;
}

/* Probe and start the port as drnic's ethdev link does. */
static int
ppp_port(const struct ppp_opts *o, uint16_t *port_id, struct rte_mempool **pool)
{
	struct rte_eth_conf conf;
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t pid, room = 4352 + RTE_PKTMBUF_HEADROOM;
	int rc;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(o->dev, ","), o->dev);
	rc = rte_dev_probe(o->dev);
	if (rc < 0 || rte_eth_dev_get_port_by_name(name, &pid) != 0) {
		fprintf(stderr, "cannot probe %s: %s\n", o->dev, strerror(-rc));
		return rc < 0 ? rc : -ENODEV;
	}
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(pid, 1, 1, &conf);
	if (rc < 0)
		return rc;
	for (;;) {
		*pool = rte_pktmbuf_pool_create(room > 9000 ? "ppp_pool_big" : "ppp_pool", 4096, 256,
						0, room, (int)rte_socket_id());
		if (*pool == NULL)
			return -ENOMEM;
		rc = rte_eth_rx_queue_setup(pid, 0, 1024, (unsigned int)rte_eth_dev_socket_id(pid),
					    NULL, *pool);
		/* af_packet wants mbufs as big as its frames (as drnic grows them). */
		if (rc != -ENOMEM || room > 9216)
			break;
		rte_mempool_free(*pool);
		room = 9216 + RTE_PKTMBUF_HEADROOM;
	}
	if (rc < 0)
		return rc;
	rc = rte_eth_tx_queue_setup(pid, 0, 1024, (unsigned int)rte_eth_dev_socket_id(pid), NULL);
	if (rc < 0)
		return rc;
	rc = rte_eth_dev_start(pid);
	if (rc < 0)
		return rc;
	*port_id = pid;
	return 0;
}

static uint64_t
ppp_us_to_tsc(uint64_t us)
{
	return us * rte_get_tsc_hz() / 1000000u;
}

static int
ppp_send(uint16_t pid, struct rte_mbuf *m)
{
	uint64_t end = rte_get_tsc_cycles() + ppp_us_to_tsc(1000000);

	while (rte_eth_tx_burst(pid, 0, &m, 1) == 0)
		if (rte_get_tsc_cycles() > end) {
			rte_pktmbuf_free(m);
			return -EAGAIN;
		}
	return 0;
}

/* An ACK-sized frame (62 bytes, magic 0: dropped by the peer) to @p dst. */
static void
ppp_ack(const struct ppp_opts *o, uint16_t pid, struct rte_mempool *pool,
	const struct rte_ether_addr *dst, const struct rte_ether_addr *src, rte_be32_t ip_src,
	rte_be32_t ip_dst)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr *eh;

	if (m == NULL || rte_pktmbuf_append(m, 62) == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	memset(eh + 1, 0, 62 - sizeof(*eh));
	eh->dst_addr = *dst;
	eh->src_addr = *src;
	eh->ether_type = ppp_put_l3(o, eh, 62, ip_src, ip_dst);
	(void)ppp_send(pid, m);
}

static int
ppp_server(const struct ppp_opts *o, uint16_t pid, struct rte_mempool *pool)
{
	struct rte_mbuf *rx[PPP_BURST];
	uint64_t bounced = 0, last_seen = rte_get_tsc_cycles(), wait_start;
	uint64_t idle = ppp_us_to_tsc((uint64_t)o->timeout_s * 1000000u);
	bool started = false, done = false;
	uint16_t n, i;

	printf("portpp server: bouncing frames on port %u\n", pid);
	fflush(stdout);
	while (!done) {
		n = rte_eth_rx_burst(pid, 0, rx, PPP_BURST);
		if (n == 0) {
			/* Before the first frame wait longer (the client starts). */
			if (rte_get_tsc_cycles() - last_seen > (started ? idle : 3 * idle)) {
				fprintf(stderr, "portpp server: no frame for %u s\n",
					started ? o->timeout_s : 3 * o->timeout_s);
				return -ETIMEDOUT;
			}
			continue;
		}
		last_seen = rte_get_tsc_cycles();
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = rx[i];
			struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
			const struct ppp_hdr *h = ppp_get_hdr(o, m);
			struct rte_ether_addr t;

			if (h == NULL) {
				rte_pktmbuf_free(m);
				continue;
			}
			started = true;
			done = done || h->last;
			t = eh->dst_addr;
			eh->dst_addr = eh->src_addr;
			eh->src_addr = t;
			if (o->ip) {
				/* Back from DST to SRC (the sum does not change). */
				struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
				rte_be32_t a = ip->src_addr;

				ip->src_addr = ip->dst_addr;
				ip->dst_addr = a;
			}
			if (o->acks)
				ppp_ack(o, pid, pool, &eh->dst_addr, &eh->src_addr, o->ip_dst,
					o->ip_src);
			if (ppp_send(pid, m) == 0)
				bounced++;
		}
	}
	printf("portpp server: %" PRIu64 " frames bounced\n", bounced);
	fflush(stdout);
	/* Let the client go first (up to a second): a memif client whose
	 * peer went away while it stopped its own port crashed now and then
	 * (its interrupt thread tearing the rings down under it). The same
	 * may hold here: the link reads down while memif's disconnect handler
	 * may still be freeing the rings in the interrupt thread, and a stop
	 * beside it is the likely cause of this server's crash at teardown
	 * (once in about 15 runs; not reproduced since). So the port is
	 * stopped only after that callback has returned. */
	for (wait_start = rte_get_tsc_cycles();
	     rte_get_tsc_cycles() - wait_start < ppp_us_to_tsc(1000000);) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(pid, &link) == 0 && link.link_status == 0)
			break;
		n = rte_eth_rx_burst(pid, 0, rx, PPP_BURST);
		rte_pktmbuf_free_bulk(rx, n);
		rte_delay_us_sleep(1000);
	}
	if (drnic_env_intr_barrier(1000) < 0)
		fprintf(stderr, "portpp server: the interrupt thread is still busy\n");
	return 0;
}

static int
ppp_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
ppp_client(const struct ppp_opts *o, uint16_t pid, struct rte_mempool *pool)
{
	uint32_t total = o->warmup + o->iters, seq;
	uint64_t *rtt, sum = 0, wait = ppp_us_to_tsc((uint64_t)o->timeout_s * 1000000u);
	uint64_t resend = ppp_us_to_tsc(200000), t0, start, prev = 0;
	struct rte_ether_addr src;
	struct rte_mbuf *rx[PPP_BURST];
	double hz = (double)rte_get_tsc_hz() / 1e6;
	uint32_t lost = 0;
	uint16_t n, i;

	rtt = calloc(o->iters, sizeof(*rtt));
	if (rtt == NULL)
		return -ENOMEM;
	rte_eth_macaddr_get(pid, &src);
	start = rte_get_tsc_cycles();
	for (seq = 0; seq < total; seq++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		struct rte_ether_hdr *eh;
		struct ppp_hdr *h;
		bool back = false;

		if (m == NULL || rte_pktmbuf_append(m, (uint16_t)o->size) == NULL) {
			fprintf(stderr, "portpp: no mbuf\n");
			free(rtt);
			return -ENOMEM;
		}
		eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		eh->dst_addr = o->dst;
		eh->src_addr = src;
		eh->ether_type = ppp_put_l3(o, eh, o->size, o->ip_src, o->ip_dst);
		h = rte_pktmbuf_mtod_offset(m, struct ppp_hdr *, ppp_hdr_off(o));
		h->magic = PPP_MAGIC;
		h->seq = seq;
		h->last = seq == total - 1;
		t0 = rte_get_tsc_cycles();
		h->tsc = t0;
		if (prev == 0)
			prev = t0;
		if (ppp_send(pid, m) < 0) {
			fprintf(stderr, "portpp: port refuses frames\n");
			free(rtt);
			return -EIO;
		}
		while (!back) {
			uint64_t now;

			n = rte_eth_rx_burst(pid, 0, rx, PPP_BURST);
			now = rte_get_tsc_cycles();
			for (i = 0; i < n; i++) {
				const struct ppp_hdr *rh = ppp_get_hdr(o, rx[i]);

				if (rh != NULL && rh->seq == seq) {
					if (rx[i]->pkt_len != o->size) {
						fprintf(stderr, "portpp: %u bytes came back, sent %u\n",
							rx[i]->pkt_len, o->size);
						rte_pktmbuf_free_bulk(rx, n);
						free(rtt);
						return -EIO;
					}
					back = true;
				}
			}
			rte_pktmbuf_free_bulk(rx, n);
			if (back && o->acks)
				ppp_ack(o, pid, pool, &o->dst, &src, o->ip_src, o->ip_dst);
			if (back) {
				/* One iteration: from the previous frame's return
				 * (ACK included, as drnic-pingpong counts). */
				if (seq >= o->warmup) {
					rtt[seq - o->warmup] = now - prev;
					sum += now - prev;
				}
				prev = now;
				break;
			}
			if (now - t0 > wait) {
				fprintf(stderr, "portpp: frame %u not back after %u s\n", seq,
					o->timeout_s);
				free(rtt);
				return -ETIMEDOUT;
			}
			/* Lost (e.g. the server was not up yet): send it again. */
			if (now - t0 > resend && seq < o->warmup + 1) {
				lost++;
				break;
			}
		}
		if (!back)
			seq--;   /* resend the same one */
	}
	qsort(rtt, o->iters, sizeof(*rtt), ppp_cmp);
	printf("portpp: %u round trips of %u-byte frames: median %.2f us, mean %.2f us, "
	       "min %.2f us, p99 %.2f us (%u resent at start, %.2f s)\n", o->iters, o->size,
	       (double)rtt[o->iters / 2] / hz, (double)sum / o->iters / hz, (double)rtt[0] / hz,
	       (double)rtt[(uint64_t)o->iters * 99 / 100] / hz, lost,
	       (double)(rte_get_tsc_cycles() - start) / hz / 1e6);
	free(rtt);
	return 0;
}

int
main(int argc, char **argv)
{
	struct drnic_env_opts eo = { .name = "drnic-portpp" };
	struct rte_mempool *pool = NULL;
	struct ppp_opts o;
	uint16_t pid = 0;
	int rc;

	if (ppp_parse(argc, argv, &o) < 0) {
		usage(argv[0]);
		return 1;
	}
	eo.file_prefix = o.file_prefix;
	eo.lcores = o.lcores;
	eo.extra_args = o.nb_eal > 0 ? o.eal : NULL;
	rc = drnic_env_init(&eo, NULL);
	if (rc < 0) {
		fprintf(stderr, "EAL start failed: %s\n", strerror(-rc));
		return 1;
	}
	rc = ppp_port(&o, &pid, &pool);
	if (rc < 0)
		fprintf(stderr, "port set-up failed: %s\n", strerror(-rc));
	else
		rc = o.server ? ppp_server(&o, pid, pool) : ppp_client(&o, pid, pool);
	if (pid != 0 || rc != -ENODEV) {
		struct rte_eth_dev_info info;

		/* Stop, close, remove: in that order (memif's interrupt thread). */
		if (rte_eth_dev_info_get(pid, &info) == 0) {
			(void)rte_eth_dev_stop(pid);
			(void)rte_eth_dev_close(pid);
			(void)rte_dev_remove(info.device);
		}
	}
	rte_mempool_free(pool);
	drnic_env_fini();
	return rc == 0 ? 0 : 1;
}
