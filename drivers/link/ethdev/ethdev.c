/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ethdev link: drnic frames over any DPDK ethdev port (net_af_packet,
 * net_memif, net_ring, net_tap, real NICs).
 *
 * Arguments (link_args):
 *   dev=NAME[,k=v...]  probe device NAME (rte_dev_probe) with every argument
 *                      that is not one of ours as its devargs, in order:
 *                      "dev=net_af_packet0,iface=veth0,blocksz=65536,framesz=8192"
 *                      probes "net_af_packet0,iface=veth0,blocksz=65536,
 *                      framesz=8192". When a port of that name exists already
 *                      (e.g. from --vdev) it is used as it is and never removed.
 *   port=ID            use the existing ethdev port ID instead.
 *   ipv4=A, ipv6=A     addresses answered in ARP / neighbour discovery and
 *                      used as source of requests (repeat for several), on
 *                      top of the device's (struct link_config).
 *   mtu=N              set the port's MTU when struct link_config gives none
 *                      (its MTU wins; drnic devices pass none, so a device's
 *                      mtu never changes a kernel interface; without either
 *                      the port's MTU is left as it is); with af_packet this
 *                      sets the kernel interface's MTU. A port refusing the
 *                      device's MTU (af_packet above 1500 in DPDK 22.11) is
 *                      left as it is (notice logged); mtu= failing fails the
 *                      open.
 *   port_mac=0|1       1 (default): the link's MAC is the port's; 0: keep the
 *                      configured MAC and put the port in promiscuous mode.
 *   promisc=0|1        promiscuous mode (default 0, or 1 when port_mac=0).
 *   mbufs=N            receive pool size (default 4096), rxd=N, txd=N
 *                      descriptors per queue (default 1024).
 *   mbuf_size=N        data room of a receive mbuf (default: a 4 KiB path
 *                      MTU frame or the MTU's frame; grown to 9216, then
 *                      16384, when the PMD refuses it, as af_packet does
 *                      below its frame size).
 *   rx_intr=0|1        1: configure the port with receive interrupts
 *                      (intr_conf.rxq) and use them as the receive wake-up;
 *                      a PMD without them fails the open (ENOTSUP). Default
 *                      0 (net_af_packet has a wake-up of its own, below).
 * Keys reserved by drnic: dev, port, ipv4, ipv6, mtu, port_mac, promisc,
 * mbufs, mbuf_size, rxd, txd, rx_intr. A PMD argument with one of these
 * names cannot be passed.
 *
 * Queues: the link has nb_queues queues (one per engine). Transmit uses one
 * hardware tx queue per link queue when the port has enough; otherwise link
 * queues share hardware queues (q % nb_hw_txq) under a spinlock. Receive uses
 * ONE hardware rx queue, polled by the engine of link queue 0, which steers
 * RoCEv2 frames by destination QPN (queue = QPN % nb_queues) into SP/SC
 * rings that the other queues' engines drain (software dispatch: the virtual
 * PMDs have no rte_flow, and DPDK 22.11 rte_flow has no BTH item). A full
 * dispatch ring drops the frame (counted rx_error; RC retransmits).
 *
 * Drops (struct drnic_link_stats, telemetry /drnic/links "drop_<name>"):
 * queue 0's classifier (ethl_classify) keeps RoCEv2 (UDP 4791 over IPv4 or
 * IPv6, untagged or one 802.1Q tag) for the engines and untagged ARP /
 * ICMPv6 for the neighbour table, and drops the rest by reason: short_frame,
 * not_roce (other ethertypes, IP that is not UDP), bad_ip_header,
 * ipv6_ext_header, vlan_stacked, udp_port, ip_fragment (a UDP fragment:
 * IPv4 MF or offset, IPv6 Fragment header), neigh_vlan (tagged ARP /
 * ICMPv6). What the port reports lost is read from rte_eth_stats as
 * port_rx_missed (imissed), port_rx_errors, port_rx_nombuf and
 * port_tx_errors (ethl_stats says what the virtual PMDs count: little).
 *
 * IP fragments on net_af_packet: the PMD's sockets join a PACKET_FANOUT
 * group with PACKET_FANOUT_FLAG_DEFRAG, so the kernel reassembles IPv4
 * fragments before the PMD sees them (ip_check_defrag): a RoCEv2 packet
 * fragmented on its way arrives whole, with MF and offset clear, and is
 * judged like any other (its ICRC, computed by the sender over the whole
 * packet, still holds). Fragments that never complete wait in the
 * kernel's reassembly queue (net.ipv4.ipfrag_time, 30 s) and are freed
 * there: drnic never sees them and cannot count them (the namespace's
 * /proc/net/snmp ReasmFails / ReasmTimeout does). IPv6 fragments are not
 * reassembled: they arrive as sent and are ip_fragment drops. On ports
 * without a kernel in the way (memif, ring, NICs) every fragment arrives
 * and is an ip_fragment drop; the wire parser drops the same frames as
 * ip_fragment on the loopback link. drnic's own IPv4 frames always carry
 * DF (drnic_wire_pkt_init), so no router fragments them.
 *
 * Neighbours: queue 0's poller also answers ARP and neighbour solicitations
 * for our addresses, learns peers (lib/neigh), and sends the requests that
 * resolve() queued. resolve() runs on a control thread; the table is shared
 * under a spinlock taken only for neighbour frames and resolve() calls, never
 * for RoCE frames. Frames that are neither RoCEv2 nor ARP/ND are dropped
 * here, each counted by its reason (above), so the kernel's own traffic on
 * a shared interface never reaches the engines.
 *
 * Receive wake-up (drnic_link_rx_wait_fd(), queue 0 only): lets a thread
 * that runs the engine with inline progress sleep until a frame comes.
 *  - net_af_packet (no receive interrupts in DPDK 22.11): a second packet
 *    socket bound to the same interface, used only to wake. A classic BPF
 *    filter keeps RoCEv2 (UDP 4791: IPv4 not a later fragment, IPv6 without
 *    extension headers), ARP, ICMPv6 and VLAN-tagged frames, copies 1 byte
 *    of each and never our own transmissions; its receive buffer is tiny, so
 *    while nobody sleeps the kernel drops the copies after the filter (no
 *    clone). Arming drains it. The filter only decides what wakes: the
 *    PMD's own sockets have no filter and see every frame, so nothing it
 *    rejects is lost to drnic (the classifier above counts what it drops).
 *    The side socket is not in the PMD's fanout group and sees fragments
 *    unreassembled: a reassembled packet wakes a sleeper through its first
 *    fragment only.
 *  - rx_intr=1: DPDK's receive interrupt of hardware queue 0, registered in
 *    an epoll instance of our own whose descriptor is the wake-up; arming
 *    enables the interrupt, disarming disables it and lets rte_epoll_wait()
 *    consume the event (the PMD's event fd needs reading, or not, as the
 *    PMD's interrupt type says: DPDK knows, we do not).
 *  - anything else (net_memif in 22.11: no rx_queue_intr_enable): ENOTSUP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_epoll.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "drnic_neigh.h"
#include "link_driver.h"

RTE_LOG_REGISTER_SUFFIX(ethl_logtype, link.ethdev, NOTICE);
#define ETHL_LOG(level, link, fmt, ...)                                         \
	rte_log(RTE_LOG_##level, ethl_logtype, "ethdev %s: " fmt "\n", (link)->name, \
		##__VA_ARGS__)

#define ETHL_ROCE_PORT 4791
#define ETHL_DEVARGS_LEN 512
#define ETHL_DISPATCH_RING 1024u
#define ETHL_BURST 32
#define ETHL_MAX_ADDRS 8
/* Data room for a 4096-byte path MTU RoCEv2 frame with VLAN and IPv6. */
#define ETHL_MIN_ROOM 4352u
#define ETHL_JUMBO_ROOM 9216u
#define ETHL_MAX_ROOM 16384u

/* Counters of the driver beyond struct drnic_link_stats (its drops are all
 * there: link_drop() on queue 0). */
struct ethl_counters {
	uint64_t neigh_rx;        /* ARP/ND frames taken by the neighbour table */
	uint64_t neigh_tx;        /* ARP/ND frames sent */
};

/*
 * Frames to our own MAC (two QPs of this device, in one process or in two
 * processes attached to drnicd) never reach the wire: a port does not hand
 * a frame it sends back to its sender (af_packet does not; a NIC does not).
 * As an RNIC's internal loopback, transmit moves them to the hairpin ring
 * of the queue their destination QP belongs to, and that queue's receive
 * takes them before the port's frames. The link's counters count them as
 * sent and received, a capture shows them both ways.
 */
#define ETHL_HAIRPIN_RING 1024

/* How queue 0's receive wake-up works (see the top of the file). */
enum ethl_wait {
	ETHL_WAIT_NONE = 0,
	ETHL_WAIT_SOCKET,                 /* side packet socket (af_packet) */
	ETHL_WAIT_INTR,                   /* DPDK receive interrupt, epoll fd */
};

struct ethl_port {
	uint16_t port_id;
	bool probed;                       /* we probed it: remove on destroy */
	bool claimed;                      /* ethl_ports_used[port_id] is ours */
	bool started;
	struct rte_device *device;
	char devname[RTE_ETH_NAME_MAX_LEN];
	struct rte_mempool *pool;
	uint16_t nb_hw_txq;
	bool tx_shared;                    /* link queues share hardware tx queues */
	rte_spinlock_t txq_lock[LINK_MAX_QUEUES];
	struct rte_ring *disp[LINK_MAX_QUEUES]; /* SP (queue 0) / SC (queue q) */
	struct rte_ring *hair[LINK_MAX_QUEUES]; /* MP / SC: our own frames, by queue */
	uint16_t mtu;

	/* Neighbours: under neigh_lock. */
	rte_spinlock_t neigh_lock;
	struct drnic_neigh *neigh;
	atomic_bool neigh_pending;         /* resolve() queued a question */

	struct ethl_counters cnt;          /* written by queue 0's engine */
	/* The port's counters when the link opened or was last reset: the
	 * PORT_* drops are counted from there. */
	struct rte_eth_stats port_base;

	/* Receive wake-up of queue 0; wait_fd is the packet socket or the
	 * epoll fd (-1: none). Used by the one waiting thread. */
	enum ethl_wait wait;
	int wait_fd;
};

/* Parsed arguments. */
struct ethl_args {
	char devargs[ETHL_DEVARGS_LEN];
	bool has_dev;
	int port;                          /* -1: none */
	uint8_t addr[ETHL_MAX_ADDRS][16];
	unsigned int nb_addr;
	unsigned int mtu;                  /* 0: leave */
	unsigned int port_mac;
	int promisc;                       /* -1: default */
	unsigned int mbufs;
	unsigned int mbuf_size;            /* data room; 0: from the MTU */
	unsigned int rxd;
	unsigned int txd;
	unsigned int rx_intr;
};

/* Ports opened by a link of this process (control path, under ethl_lock). */
static uint16_t ethl_ports_used[RTE_MAX_ETHPORTS];
static rte_spinlock_t ethl_lock = RTE_SPINLOCK_INITIALIZER;
static unsigned int ethl_pool_seq;

static const char *const ethl_keys[] = {
	"dev", "port", "ipv4", "ipv6", "mtu", "port_mac", "promisc", "mbufs", "mbuf_size",
	"rxd", "txd", "rx_intr",
};

static uint64_t
ethl_now_ns(void)
{
	uint64_t c = rte_get_timer_cycles(), hz = rte_get_timer_hz();

	return c / hz * 1000000000ull + c % hz * 1000000000ull / hz;
}

static bool
ethl_key_ours(const char *key)
{
	unsigned int k;

	for (k = 0; k < RTE_DIM(ethl_keys); k++)
		if (strcmp(key, ethl_keys[k]) == 0)
			return true;
	return false;
}

static int
ethl_parse_uint(const char *v, unsigned int max, unsigned int *out)
{
	unsigned long x;
	char *end;

	errno = 0;
	x = strtoul(v, &end, 0);
	if (*v == '\0' || *end != '\0' || errno != 0 || x > max)
		return -EINVAL;
	*out = (unsigned int)x;
	return 0;
}

static int
ethl_parse_args(struct drnic_link *link, const struct rte_kvargs *kv, struct ethl_args *a)
{
	size_t dlen = 0;
	unsigned int i, v;

	memset(a, 0, sizeof(*a));
	a->port = -1;
	a->port_mac = 1;
	a->promisc = -1;
	a->mbufs = 4096;
	a->rxd = 1024;
	a->txd = 1024;
	if (kv == NULL)
		goto check;
	for (i = 0; i < kv->count; i++) {
		const char *k = kv->pairs[i].key, *val = kv->pairs[i].value;
		int n;

		if (!ethl_key_ours(k)) {
			if (!a->has_dev) {
				ETHL_LOG(ERR, link, "argument '%s' before dev=", k);
				return -EINVAL;
			}
			n = snprintf(a->devargs + dlen, sizeof(a->devargs) - dlen, ",%s=%s", k, val);
			if (n < 0 || (size_t)n >= sizeof(a->devargs) - dlen)
				return -E2BIG;
			dlen += (size_t)n;
			continue;
		}
		if (strcmp(k, "dev") == 0) {
			if (a->has_dev || val[0] == '\0')
				return -EINVAL;
			n = snprintf(a->devargs, sizeof(a->devargs), "%s", val);
			if (n < 0 || (size_t)n >= sizeof(a->devargs))
				return -E2BIG;
			dlen = (size_t)n;
			a->has_dev = true;
		} else if (strcmp(k, "port") == 0) {
			if (ethl_parse_uint(val, RTE_MAX_ETHPORTS - 1, &v) < 0)
				return -EINVAL;
			a->port = (int)v;
		} else if (strcmp(k, "ipv4") == 0 || strcmp(k, "ipv6") == 0) {
			struct in_addr in4;

			if (a->nb_addr == ETHL_MAX_ADDRS)
				return -ENOSPC;
			if (k[3] == '4') {
				if (inet_pton(AF_INET, val, &in4) != 1)
					goto bad;
				drnic_neigh_gid_from_ipv4(in4.s_addr, a->addr[a->nb_addr]);
			} else if (inet_pton(AF_INET6, val, a->addr[a->nb_addr]) != 1) {
				goto bad;
			}
			a->nb_addr++;
		} else if (strcmp(k, "mtu") == 0) {
			if (ethl_parse_uint(val, 65535, &a->mtu) < 0 || a->mtu < 576)
				goto bad;
		} else if (strcmp(k, "port_mac") == 0) {
			if (ethl_parse_uint(val, 1, &a->port_mac) < 0)
				goto bad;
		} else if (strcmp(k, "promisc") == 0) {
			if (ethl_parse_uint(val, 1, &v) < 0)
				goto bad;
			a->promisc = (int)v;
		} else if (strcmp(k, "mbufs") == 0) {
			if (ethl_parse_uint(val, 1u << 20, &a->mbufs) < 0 || a->mbufs < 512)
				goto bad;
		} else if (strcmp(k, "mbuf_size") == 0) {
			if (ethl_parse_uint(val, 65000, &a->mbuf_size) < 0 || a->mbuf_size < 2048)
				goto bad;
		} else if (strcmp(k, "rxd") == 0) {
			if (ethl_parse_uint(val, 65535, &a->rxd) < 0 || a->rxd == 0)
				goto bad;
		} else if (strcmp(k, "txd") == 0) {
			if (ethl_parse_uint(val, 65535, &a->txd) < 0 || a->txd == 0)
				goto bad;
		} else if (strcmp(k, "rx_intr") == 0) {
			if (ethl_parse_uint(val, 1, &a->rx_intr) < 0)
				goto bad;
		}
		continue;
bad:
		ETHL_LOG(ERR, link, "bad value '%s' for %s", val, k);
		return -EINVAL;
	}
check:
	if (a->has_dev == (a->port >= 0)) {
		ETHL_LOG(ERR, link, "give exactly one of dev= and port=");
		return -EINVAL;
	}
	if (a->promisc < 0)
		a->promisc = a->port_mac ? 0 : 1;
	return 0;
}

/* Find or probe the port. */
static int
ethl_open_port(struct drnic_link *link, struct ethl_port *ep, const struct ethl_args *a)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t pid;
	int rc;

	if (a->port >= 0) {
		if (!rte_eth_dev_is_valid_port((uint16_t)a->port)) {
			ETHL_LOG(ERR, link, "no ethdev port %d", a->port);
			return -ENODEV;
		}
		ep->port_id = (uint16_t)a->port;
		return 0;
	}
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(a->devargs, ","), a->devargs);
	if (rte_eth_dev_get_port_by_name(name, &pid) == 0) {
		ep->port_id = pid;
		return 0;
	}
	rc = rte_dev_probe(a->devargs);
	if (rc < 0) {
		ETHL_LOG(ERR, link, "cannot probe '%s': %s", a->devargs, strerror(-rc));
		return rc;
	}
	if (rte_eth_dev_get_port_by_name(name, &pid) != 0) {
		ETHL_LOG(ERR, link, "'%s' probed but no ethdev port is named '%s'", a->devargs, name);
		rte_eal_hotplug_remove("vdev", name);
		return -ENODEV;
	}
	ep->port_id = pid;
	ep->probed = true;
	return 0;
}

static int
ethl_claim_port(uint16_t port_id, bool claim)
{
	int rc = 0;

	rte_spinlock_lock(&ethl_lock);
	if (claim && ethl_ports_used[port_id])
		rc = -EBUSY;
	else
		ethl_ports_used[port_id] = claim;
	rte_spinlock_unlock(&ethl_lock);
	return rc;
}

static void ethl_destroy(struct drnic_link *link);

static int
ethl_setup_port(struct drnic_link *link, struct ethl_port *ep, const struct ethl_args *a)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	char pname[RTE_MEMPOOL_NAMESIZE];
	uint32_t room, frame;
	uint16_t q, mtu = 0;
	int rc;

	rc = rte_eth_dev_info_get(ep->port_id, &info);
	if (rc < 0)
		return rc;
	ep->device = info.device;
	/* PMDs whose every transmit burst is a system call. */
	link->tx_hold_acks = info.driver_name != NULL &&
			     (strcmp(info.driver_name, "net_af_packet") == 0 ||
			      strcmp(info.driver_name, "net_tap") == 0 ||
			      strcmp(info.driver_name, "net_pcap") == 0);
	rte_eth_dev_get_name_by_port(ep->port_id, ep->devname);
	if (info.max_rx_queues < 1 || info.max_tx_queues < 1)
		return -ENOTSUP;
	ep->nb_hw_txq = RTE_MIN(link->nb_queues, info.max_tx_queues);
	ep->tx_shared = ep->nb_hw_txq < link->nb_queues;

	if (link->mtu != 0) {
		/* The device's MTU wins over link_args mtu=. */
		uint32_t cap = info.max_mtu != 0 ? info.max_mtu : UINT16_MAX;
		uint32_t overhead = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

		if (a->mtu != 0 && a->mtu != link->mtu)
			ETHL_LOG(WARNING, link, "link_args mtu=%u ignored: the device's MTU is %u",
				 a->mtu, link->mtu);
		if (info.max_mtu != UINT16_MAX && info.max_mtu != 0 &&
		    info.max_rx_pktlen > info.max_mtu)
			overhead = info.max_rx_pktlen - info.max_mtu;
		if (info.max_rx_pktlen > overhead)
			cap = RTE_MIN(cap, info.max_rx_pktlen - overhead);
		/* What rte_eth_dev_configure() accepts (af_packet claims
		 * 1518-byte frames whatever its frame size); the device's MTU
		 * is then asked for with rte_eth_dev_set_mtu() below. */
		mtu = (uint16_t)RTE_MIN(RTE_MIN(link->mtu, 65535u), cap);
	} else if (a->mtu != 0) {
		mtu = (uint16_t)a->mtu;
	} else if (rte_eth_dev_get_mtu(ep->port_id, &mtu) < 0 || mtu == 0) {
		mtu = RTE_ETHER_MTU;
	}
	if ((info.max_mtu != 0 && mtu > info.max_mtu) || mtu < info.min_mtu) {
		ETHL_LOG(ERR, link, "MTU %u outside the port's %u..%u", mtu, info.min_mtu,
			 info.max_mtu);
		return -EINVAL;
	}
	ep->mtu = mtu;
	/* One frame per mbuf: room for the MTU, Ethernet header, a VLAN tag
	 * and the FCS some PMDs keep. */
	frame = mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN;
	/* Whatever the port's MTU says, a 4 KiB path MTU frame fits (ports
	 * such as af_packet do not enforce their MTU on receive). */
	room = RTE_MAX(RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM, frame), ETHL_MIN_ROOM);
	if (a->mbuf_size != 0)
		room = a->mbuf_size;
	room += RTE_PKTMBUF_HEADROOM;
	snprintf(pname, sizeof(pname), "drnic_eth%u", ethl_pool_seq++);
	ep->pool = rte_pktmbuf_pool_create(pname, a->mbufs, 256, 0, (uint16_t)room,
					   link->socket_id);
	if (ep->pool == NULL) {
		ETHL_LOG(ERR, link, "no memory for %u mbufs of %u bytes", a->mbufs, room);
		return -ENOMEM;
	}

	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = mtu;
	conf.intr_conf.rxq = a->rx_intr ? 1 : 0;
	rc = rte_eth_dev_configure(ep->port_id, 1, ep->nb_hw_txq, &conf);
	if (rc < 0) {
		ETHL_LOG(ERR, link, "configure port %u: %s", ep->port_id, strerror(-rc));
		return rc;
	}
	if (a->mtu != 0 || link->mtu != 0) {
		uint16_t target = link->mtu != 0 ? (uint16_t)RTE_MIN(link->mtu, 65535u) : mtu;

		rc = rte_eth_dev_set_mtu(ep->port_id, target);
		if (rc == 0) {
			mtu = target;
		} else if (rc == -ENOTSUP) {
			/* No MTU to set (net_ring, net_null): frames of any
			 * size pass. */
			ETHL_LOG(INFO, link, "port %u has no MTU setting", ep->port_id);
		} else if (link->mtu != 0) {
			/* The device's MTU is a wish (af_packet refuses more
			 * than 1500, memif has no setting); mtu= is an order. */
			ETHL_LOG(NOTICE, link, "port %u refuses MTU %u (%s): left as it is",
				 ep->port_id, target, strerror(-rc));
		} else {
			ETHL_LOG(ERR, link, "set MTU %u on port %u: %s", mtu, ep->port_id,
				 strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_rx_queue_setup(ep->port_id, 0, (uint16_t)a->rxd,
				    (unsigned int)rte_eth_dev_socket_id(ep->port_id), NULL,
				    ep->pool);
	/* PMDs that want more room than the MTU asks for (af_packet: its
	 * frame size, which dev_info does not tell) refuse with ENOMEM: grow
	 * the mbufs to jumbo, then 16 KiB, unless mbuf_size= was given. */
	while (rc == -ENOMEM && a->mbuf_size == 0 && room < ETHL_MAX_ROOM + RTE_PKTMBUF_HEADROOM) {
		room = (room < ETHL_JUMBO_ROOM ? ETHL_JUMBO_ROOM : ETHL_MAX_ROOM) +
		       RTE_PKTMBUF_HEADROOM;
		rte_mempool_free(ep->pool);
		snprintf(pname, sizeof(pname), "drnic_eth%u", ethl_pool_seq++);
		ep->pool = rte_pktmbuf_pool_create(pname, a->mbufs, 256, 0, (uint16_t)room,
						   link->socket_id);
		if (ep->pool == NULL)
			return -ENOMEM;
		ETHL_LOG(INFO, link, "rx queue wants bigger mbufs: now %u bytes", room);
		rc = rte_eth_rx_queue_setup(ep->port_id, 0, (uint16_t)a->rxd,
					    (unsigned int)rte_eth_dev_socket_id(ep->port_id), NULL,
					    ep->pool);
	}
	if (rc < 0) {
		ETHL_LOG(ERR, link, "rx queue set-up: %s", strerror(-rc));
		return rc;
	}
	for (q = 0; q < ep->nb_hw_txq; q++) {
		rc = rte_eth_tx_queue_setup(ep->port_id, q, (uint16_t)a->txd,
					    (unsigned int)rte_eth_dev_socket_id(ep->port_id), NULL);
		if (rc < 0) {
			ETHL_LOG(ERR, link, "tx queue %u set-up: %s", q, strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(ep->port_id);
	if (rc < 0) {
		ETHL_LOG(ERR, link, "start port %u: %s", ep->port_id, strerror(-rc));
		return rc;
	}
	ep->started = true;
	(void)rte_eth_stats_get(ep->port_id, &ep->port_base);
	if (a->promisc) {
		rc = rte_eth_promiscuous_enable(ep->port_id);
		if (rc < 0 && rc != -ENOTSUP) {
			ETHL_LOG(ERR, link, "promiscuous mode: %s", strerror(-rc));
			return rc;
		}
	}
	/* Neighbour discovery goes to multicast groups. */
	(void)rte_eth_allmulticast_enable(ep->port_id);
	if (a->port_mac) {
		rc = rte_eth_macaddr_get(ep->port_id, &mac);
		if (rc < 0)
			return rc;
		if (rte_is_valid_assigned_ether_addr(&mac)) {
			memcpy(link->mac, mac.addr_bytes, 6);
			return 0;
		}
		/* No MAC of its own (net_ring): give it the configured one. */
		memcpy(mac.addr_bytes, link->mac, 6);
		rc = rte_eth_dev_default_mac_addr_set(ep->port_id, &mac);
		if (rc < 0 && rc != -ENOTSUP)
			ETHL_LOG(WARNING, link, "cannot set the port's MAC: %s", strerror(-rc));
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Receive wake-up                                                          */
/* ------------------------------------------------------------------------ */

/* Copies queued on the side socket before its buffer is full: a handful. */
#define ETHL_WAIT_RCVBUF 4096
/* Copies dropped per drain at most (more stay: one spurious wake-up). */
#define ETHL_WAIT_DRAIN 64

/* Forget the frames the side socket saw: MSG_TRUNC, 1 byte each. */
static void
ethl_wait_drain(int fd)
{
	unsigned int i;
	char b;

	for (i = 0; i < ETHL_WAIT_DRAIN; i++)
		if (recv(fd, &b, sizeof(b), MSG_DONTWAIT | MSG_TRUNC) < 0)
			break;
}

/* Jump offset of a BPF instruction at @p from to label @p to. */
#define ETHL_J(to, from) ((uint8_t)((to) - (from) - 1))

/* Instruction indices of the wake-up filter (ethl_wait_socket_open). */
enum {
	WF_PKTTYPE, WF_OUTGOING, WF_ETYPE, WF_ARP, WF_VLAN, WF_IP4, WF_IP6, WF_OTHER,
	WF_IP4_PROTO, WF_IP4_UDP, WF_IP4_FRAG, WF_IP4_FRAG_J, WF_IP4_IHL, WF_IP4_DPORT,
	WF_IP4_ROCE,
	WF_IP6_NH, WF_IP6_ICMP, WF_IP6_UDP, WF_IP6_DPORT, WF_IP6_ROCE,
	WF_DROP, WF_ACCEPT, WF_LEN,
};

/*
 * The side packet socket of net_af_packet's interface @p ifindex. The
 * filter wakes for what queue 0's poller handles (RoCEv2 over IPv4 / IPv6,
 * ARP, ICMPv6 for neighbour discovery; VLAN-tagged frames are left for the
 * poller to judge) and never for frames this host sends.
 */
static int
ethl_wait_socket_open(struct drnic_link *link, struct ethl_port *ep, unsigned int ifindex)
{
	struct sock_filter code[WF_LEN] = {
		[WF_PKTTYPE] = BPF_STMT(BPF_LD | BPF_B | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		[WF_OUTGOING] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING,
					 ETHL_J(WF_DROP, WF_OUTGOING), 0),
		[WF_ETYPE] = BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		[WF_ARP] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_ARP,
				    ETHL_J(WF_ACCEPT, WF_ARP), 0),
		[WF_VLAN] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_8021Q,
				     ETHL_J(WF_ACCEPT, WF_VLAN), 0),
		[WF_IP4] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP,
				    ETHL_J(WF_IP4_PROTO, WF_IP4), 0),
		[WF_IP6] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6,
				    ETHL_J(WF_IP6_NH, WF_IP6), 0),
		[WF_OTHER] = BPF_JUMP(BPF_JMP | BPF_JA, ETHL_J(WF_DROP, WF_OTHER), 0, 0),
		/* IPv4: UDP, first fragment, destination port 4791. */
		[WF_IP4_PROTO] = BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 9),
		[WF_IP4_UDP] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0,
					ETHL_J(WF_DROP, WF_IP4_UDP)),
		[WF_IP4_FRAG] = BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 14 + 6),
		[WF_IP4_FRAG_J] = BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff,
					   ETHL_J(WF_DROP, WF_IP4_FRAG_J), 0),
		[WF_IP4_IHL] = BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14),
		[WF_IP4_DPORT] = BPF_STMT(BPF_LD | BPF_H | BPF_IND, 14 + 2),
		[WF_IP4_ROCE] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETHL_ROCE_PORT,
					 ETHL_J(WF_ACCEPT, WF_IP4_ROCE),
					 ETHL_J(WF_DROP, WF_IP4_ROCE)),
		/* IPv6: ICMPv6, or UDP to 4791 (no extension headers: drnic
		 * sends none). */
		[WF_IP6_NH] = BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 6),
		[WF_IP6_ICMP] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_ICMPV6,
					 ETHL_J(WF_ACCEPT, WF_IP6_ICMP), 0),
		[WF_IP6_UDP] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0,
					ETHL_J(WF_DROP, WF_IP6_UDP)),
		[WF_IP6_DPORT] = BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 14 + 40 + 2),
		[WF_IP6_ROCE] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETHL_ROCE_PORT,
					 ETHL_J(WF_ACCEPT, WF_IP6_ROCE),
					 ETHL_J(WF_DROP, WF_IP6_ROCE)),
		[WF_DROP] = BPF_STMT(BPF_RET | BPF_K, 0),
		/* Keep 1 byte: the copy only wakes. */
		[WF_ACCEPT] = BPF_STMT(BPF_RET | BPF_K, 1),
	};
	struct sock_fprog prog = { .len = WF_LEN, .filter = code };
	struct sockaddr_ll sll;
	int fd, one = 1, rcvbuf = ETHL_WAIT_RCVBUF, rc;

	/* Protocol 0: nothing arrives before the filter is in place. */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
		goto fail;
	/* Linux >= 4.20; before, the filter's PACKET_OUTGOING test does it. */
	(void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
		goto fail;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		goto fail;
	ethl_wait_drain(fd);
	ep->wait_fd = fd;
	ep->wait = ETHL_WAIT_SOCKET;
	ETHL_LOG(INFO, link, "receive wake-up: packet socket on ifindex %u", ifindex);
	return 0;
fail:
	rc = -errno;
	close(fd);
	return rc;
}

/* Interface index of an af_packet port: from dev_info, else its iface=. */
static unsigned int
ethl_afp_ifindex(const struct rte_eth_dev_info *info, const struct ethl_args *a)
{
	const char *p;
	char name[IF_NAMESIZE];

	if (info->if_index != 0)
		return info->if_index;
	p = strstr(a->devargs, ",iface=");
	if (p == NULL)
		return 0;
	p += strlen(",iface=");
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, ","), p);
	return if_nametoindex(name);
}

/* Set up queue 0's wake-up after the port started; see the top of the file. */
static int
ethl_wait_open(struct drnic_link *link, struct ethl_port *ep, const struct ethl_args *a)
{
	struct rte_eth_dev_info info;
	unsigned int ifindex;
	int rc, fd;

	if (a->rx_intr) {
		fd = epoll_create1(EPOLL_CLOEXEC);
		if (fd < 0)
			return -errno;
		rc = rte_eth_dev_rx_intr_ctl_q(ep->port_id, 0, fd, RTE_INTR_EVENT_ADD, NULL);
		if (rc < 0) {
			close(fd);
			ETHL_LOG(ERR, link, "rx_intr=1: port %u has no receive interrupts: %s",
				 ep->port_id, strerror(-rc));
			return rc == -EINVAL || rc == -EPERM ? -ENOTSUP : rc;
		}
		/* Off until someone sleeps. */
		(void)rte_eth_dev_rx_intr_disable(ep->port_id, 0);
		ep->wait_fd = fd;
		ep->wait = ETHL_WAIT_INTR;
		return 0;
	}
	rc = rte_eth_dev_info_get(ep->port_id, &info);
	if (rc < 0 || info.driver_name == NULL || strcmp(info.driver_name, "net_af_packet") != 0)
		return 0;                  /* no wake-up: ENOTSUP when asked */
	ifindex = ethl_afp_ifindex(&info, a);
	if (ifindex == 0) {
		ETHL_LOG(NOTICE, link, "no interface index for the receive wake-up");
		return 0;
	}
	rc = ethl_wait_socket_open(link, ep, ifindex);
	if (rc < 0)     /* e.g. no CAP_NET_RAW for a second socket: poll instead */
		ETHL_LOG(NOTICE, link, "no receive wake-up: packet socket: %s", strerror(-rc));
	return 0;
}

static void
ethl_wait_close(struct ethl_port *ep)
{
	if (ep->wait == ETHL_WAIT_INTR) {
		(void)rte_eth_dev_rx_intr_disable(ep->port_id, 0);
		(void)rte_eth_dev_rx_intr_ctl_q(ep->port_id, 0, ep->wait_fd, RTE_INTR_EVENT_DEL,
						NULL);
	}
	if (ep->wait_fd >= 0)
		close(ep->wait_fd);
	ep->wait_fd = -1;
	ep->wait = ETHL_WAIT_NONE;
}

/* Let DPDK consume pending interrupt events of our epoll instance. */
static void
ethl_wait_intr_consume(struct ethl_port *ep)
{
	struct rte_epoll_event ev[4];

	while (rte_epoll_wait(ep->wait_fd, ev, RTE_DIM(ev), 0) == (int)RTE_DIM(ev))
		;
}

static int
ethl_rx_wait_fd(struct drnic_link *link, uint16_t q)
{
	struct ethl_port *ep = link->priv;

	if (q != 0 || ep->wait == ETHL_WAIT_NONE)
		return -ENOTSUP;
	return ep->wait_fd;
}

static int
ethl_rx_wait_arm(struct drnic_link *link, uint16_t q)
{
	struct ethl_port *ep = link->priv;

	if (q != 0 || ep->wait == ETHL_WAIT_NONE)
		return -ENOTSUP;
	if (ep->wait == ETHL_WAIT_SOCKET) {
		ethl_wait_drain(ep->wait_fd);
		return 0;
	}
	ethl_wait_intr_consume(ep);
	return rte_eth_dev_rx_intr_enable(ep->port_id, 0);
}

static int
ethl_rx_wait_disarm(struct drnic_link *link, uint16_t q)
{
	struct ethl_port *ep = link->priv;
	int rc;

	if (q != 0 || ep->wait == ETHL_WAIT_NONE)
		return -ENOTSUP;
	/* The side socket keeps its few copies: the next arm drops them. */
	if (ep->wait == ETHL_WAIT_SOCKET)
		return 0;
	rc = rte_eth_dev_rx_intr_disable(ep->port_id, 0);
	ethl_wait_intr_consume(ep);
	return rc;
}

static int
ethl_create(struct drnic_link *link, const struct rte_kvargs *kv)
{
	struct drnic_neigh_params np;
	struct ethl_args *a;
	struct ethl_port *ep;
	char rname[RTE_RING_NAMESIZE];
	unsigned int i;
	int rc;

	a = malloc(sizeof(*a));
	ep = rte_zmalloc_socket("drnic_ethl", sizeof(*ep), RTE_CACHE_LINE_SIZE, link->socket_id);
	if (a == NULL || ep == NULL) {
		free(a);
		rte_free(ep);
		return -ENOMEM;
	}
	link->priv = ep;
	ep->wait_fd = -1;
	for (i = 0; i < LINK_MAX_QUEUES; i++)
		rte_spinlock_init(&ep->txq_lock[i]);
	rte_spinlock_init(&ep->neigh_lock);
	rc = ethl_parse_args(link, kv, a);
	if (rc < 0)
		goto fail;
	rc = ethl_open_port(link, ep, a);
	if (rc < 0)
		goto fail;
	rc = ethl_claim_port(ep->port_id, true);
	if (rc < 0) {
		ETHL_LOG(ERR, link, "port %u is used by another link", ep->port_id);
		goto fail;
	}
	ep->claimed = true;
	rc = ethl_setup_port(link, ep, a);
	if (rc < 0)
		goto fail;
	rc = ethl_wait_open(link, ep, a);
	if (rc < 0)
		goto fail;
	for (i = 0; i < link->nb_queues; i++) {
		snprintf(rname, sizeof(rname), "drnic_eh%u_%u", ep->port_id, i);
		ep->hair[i] = rte_ring_create(rname, ETHL_HAIRPIN_RING, link->socket_id,
					      RING_F_SC_DEQ);
		if (ep->hair[i] == NULL) {
			rc = -rte_errno;
			goto fail;
		}
	}
	for (i = 1; i < link->nb_queues; i++) {
		snprintf(rname, sizeof(rname), "drnic_ed%u_%u", ep->port_id, i);
		ep->disp[i] = rte_ring_create(rname, ETHL_DISPATCH_RING, link->socket_id,
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ep->disp[i] == NULL) {
			rc = -rte_errno;
			goto fail;
		}
	}
	memset(&np, 0, sizeof(np));
	memcpy(np.mac, link->mac, 6);
	np.socket_id = link->socket_id;
	ep->neigh = drnic_neigh_create(&np);
	if (ep->neigh == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	/* The device's addresses, then those of link_args (duplicates once). */
	for (i = 0; i < link->nb_addrs; i++) {
		rc = drnic_neigh_addr_add(ep->neigh, link->addrs[i]);
		if (rc < 0 && rc != -EEXIST) {
			ETHL_LOG(ERR, link, "device address %u: %s", i, strerror(-rc));
			goto fail;
		}
	}
	for (i = 0; i < a->nb_addr; i++) {
		rc = drnic_neigh_addr_add(ep->neigh, a->addr[i]);
		if (rc < 0 && rc != -EEXIST) {
			ETHL_LOG(ERR, link, "address %u: %s", i, strerror(-rc));
			goto fail;
		}
	}
	ETHL_LOG(INFO, link, "port %u (%s), MTU %u, %u tx queue(s)%s, MAC %02x:%02x:%02x:%02x:%02x:%02x, %u address(es)",
		 ep->port_id, ep->devname, ep->mtu, ep->nb_hw_txq, ep->tx_shared ? " shared" : "",
		 link->mac[0], link->mac[1], link->mac[2], link->mac[3], link->mac[4], link->mac[5],
		 link->nb_addrs + a->nb_addr);
	free(a);
	return 0;

fail:
	ethl_destroy(link);
	free(a);
	return rc;
}

/*
 * Closing a port, in this order: stop it (no more rx/tx), then — only when
 * we probed it — close it (queues and PMD state freed) and remove the device
 * (hotplug). A port we did not probe (port=, or one that existed) is only
 * stopped; its owner closes it.
 *
 * Known issues, DPDK 22.11 net_memif, when the peer disconnects while this
 * process polls or closes its port (both ends closing at once):
 *  - the peer's disconnect is handled in the EAL interrupt thread
 *    (memif_disconnect() unmaps the rings) while this thread may still poll
 *    them or close the port: crashes in librte_net_memif;
 *  - closing the last device of a server socket never unregisters the
 *    listener's interrupt callback (memif_socket_remove_device() only frees
 *    it); the interrupt thread keeps a source whose handle lives in hugepage
 *    memory and crashes (rte_intr_fd_get()) if it rebuilds its epoll set
 *    after rte_eal_cleanup() unmapped it.
 * Closing after the peer is gone avoids both in practice (drnic-pingpong's
 * server waits for the client); the second needs the interrupt thread
 * stopped before rte_eal_cleanup(), as later DPDK releases do. Running this
 * teardown in the interrupt thread (an alarm callback) was tried: it made
 * the second crash more frequent.
 *
 * "The peer is gone" is not "its disconnect was handled": memif marks the
 * link down first, then unmaps the rings and frees the control channel. A
 * server that saw the link down and closed at once crashed in the interrupt
 * thread, still inside that disconnect (two_hosts memif.write, about one run
 * in fifty under load). So a teardown first lets the interrupt thread finish
 * the callback it runs (ethl_intr_drain()).
 */
static void
ethl_intr_mark(void *arg)
{
	atomic_store_explicit((atomic_bool *)arg, true, memory_order_release);
}

/*
 * Return once the EAL interrupt thread has finished the callback it was
 * running when called: an alarm's callback runs on that thread, after it.
 * At most 2 s (a thread that does not come back is not waited for); an
 * alarm that did not fire is cancelled (which waits for one firing now), so
 * nothing writes @p done after we return.
 */
static void
ethl_intr_drain(void)
{
	atomic_bool done = false;
	uint64_t end;

	if (rte_thread_is_intr() || rte_eal_alarm_set(1, ethl_intr_mark, &done) != 0)
		return;
	end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();
	while (!atomic_load_explicit(&done, memory_order_acquire) &&
	       rte_get_timer_cycles() < end)
		rte_delay_us_sleep(100);
	(void)rte_eal_alarm_cancel(ethl_intr_mark, &done);
}

static void
ethl_port_teardown(struct ethl_port *ep)
{
	ethl_intr_drain();
	if (ep->started)
		(void)rte_eth_dev_stop(ep->port_id);
	if (ep->probed) {
		(void)rte_eth_dev_close(ep->port_id);
		if (ep->device != NULL)
			(void)rte_dev_remove(ep->device);
		else
			(void)rte_eal_hotplug_remove("vdev", ep->devname);
	}
}

static void
ethl_destroy(struct drnic_link *link)
{
	struct ethl_port *ep = link->priv;
	struct rte_mbuf *m[ETHL_BURST];
	unsigned int i, n;

	if (ep == NULL)
		return;
	for (i = 0; i < LINK_MAX_QUEUES; i++) {
		if (ep->hair[i] != NULL) {
			while ((n = rte_ring_dequeue_burst(ep->hair[i], (void **)m, RTE_DIM(m),
							   NULL)) > 0)
				rte_pktmbuf_free_bulk(m, n);
			rte_ring_free(ep->hair[i]);
		}
		if (ep->disp[i] == NULL)
			continue;
		while ((n = rte_ring_dequeue_burst(ep->disp[i], (void **)m, RTE_DIM(m), NULL)) > 0)
			rte_pktmbuf_free_bulk(m, n);
		rte_ring_free(ep->disp[i]);
	}
	ethl_wait_close(ep);
	ethl_port_teardown(ep);
	if (ep->claimed)
		(void)ethl_claim_port(ep->port_id, false);
	drnic_neigh_free(ep->neigh);
	rte_mempool_free(ep->pool);
	rte_free(ep);
	link->priv = NULL;
}

/* ------------------------------------------------------------------------ */
/* Data path                                                                */
/* ------------------------------------------------------------------------ */

enum ethl_class {
	ETHL_ROCE,
	ETHL_NEIGH,
	ETHL_DROP,
};

#define ETHL_ETHER_QINQ 0x88a8       /* 802.1ad service tag */
#define ETHL_ETHER_QINQ_OLD 0x9100   /* pre-802.1ad stacked tag */
#define ETHL_IPV4_FRAG 0x3fff        /* MF and the fragment offset */
#define ETHL_IPPROTO_FRAGMENT 44     /* IPv6 Fragment header */
#define ETHL_BTH_LEN 12

static inline uint16_t
ethl_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool
ethl_vlan_type(uint16_t type)
{
	return type == RTE_ETHER_TYPE_VLAN || type == ETHL_ETHER_QINQ ||
	       type == ETHL_ETHER_QINQ_OLD;
}

/* IPv6 extension headers (RFC 7045's list) other than Fragment. */
static bool
ethl_ipv6_ext(uint8_t nh)
{
	switch (nh) {
	case 0:     /* hop-by-hop options */
	case 43:    /* routing */
	case 50:    /* ESP */
	case 51:    /* AH */
	case 60:    /* destination options */
	case 135:   /* mobility */
	case 139:   /* HIP */
	case 140:   /* shim6 */
	case 253:
	case 254:   /* experiments */
		return true;
	default:
		return false;
	}
}

/*
 * What a received frame is: RoCEv2 (its destination QPN in *dqpn), ARP / ND
 * for the neighbour table, or a drop with its reason in *why. Only the
 * first segment is read (a frame the port split over mbufs is judged by
 * what its first holds: the pool's room fits the MTU). Everything else
 * (addresses, ICRC, opcodes, lengths) is the engine's parser's to judge.
 */
static enum ethl_class
ethl_classify(const struct rte_mbuf *m, uint32_t *dqpn, enum drnic_link_drop *why)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, off = 12, l4;
	uint16_t type;
	uint8_t proto;

	*why = DRNIC_LINK_DROP_SHORT_FRAME;
	if (len < off + 2)
		return ETHL_DROP;
	type = ethl_get16(p + off);
	off += 2;
	if (ethl_vlan_type(type)) {
		if (type != RTE_ETHER_TYPE_VLAN) {
			*why = DRNIC_LINK_DROP_VLAN_STACKED;
			return ETHL_DROP;
		}
		if (len < off + 4)
			return ETHL_DROP;
		type = ethl_get16(p + off + 2);
		off += 4;
		if (ethl_vlan_type(type)) {
			*why = DRNIC_LINK_DROP_VLAN_STACKED;
			return ETHL_DROP;
		}
	}
	if (type == DRNIC_NEIGH_ETHER_ARP) {
		if (off == 14)
			return ETHL_NEIGH;
		*why = DRNIC_LINK_DROP_NEIGH_VLAN;
		return ETHL_DROP;
	}
	if (type == 0x0800) {
		if (len < off + 20)
			return ETHL_DROP;
		if (p[off] >> 4 != 4 || (p[off] & 0xFu) < 5) {
			*why = DRNIC_LINK_DROP_BAD_IP_HEADER;
			return ETHL_DROP;
		}
		proto = p[off + 9];
		if (proto == IPPROTO_UDP && (ethl_get16(p + off + 6) & ETHL_IPV4_FRAG) != 0) {
			*why = DRNIC_LINK_DROP_IP_FRAGMENT;
			return ETHL_DROP;
		}
		l4 = off + (p[off] & 0xFu) * 4u;
	} else if (type == DRNIC_NEIGH_ETHER_IPV6) {
		if (len < off + 40)
			return ETHL_DROP;
		if (p[off] >> 4 != 6) {
			*why = DRNIC_LINK_DROP_BAD_IP_HEADER;
			return ETHL_DROP;
		}
		proto = p[off + 6];
		l4 = off + 40;
		if (proto == DRNIC_NEIGH_PROTO_ICMPV6) {
			if (off == 14)
				return ETHL_NEIGH;
			*why = DRNIC_LINK_DROP_NEIGH_VLAN;
			return ETHL_DROP;
		}
		if (proto == ETHL_IPPROTO_FRAGMENT) {
			*why = DRNIC_LINK_DROP_IP_FRAGMENT;
			return ETHL_DROP;
		}
		if (ethl_ipv6_ext(proto)) {
			*why = DRNIC_LINK_DROP_IPV6_EXT;
			return ETHL_DROP;
		}
	} else {
		*why = DRNIC_LINK_DROP_NOT_ROCE;
		return ETHL_DROP;
	}
	if (proto != IPPROTO_UDP) {
		*why = DRNIC_LINK_DROP_NOT_ROCE;
		return ETHL_DROP;
	}
	if (len < l4 + 8)
		return ETHL_DROP;
	if (ethl_get16(p + l4 + 2) != ETHL_ROCE_PORT) {
		*why = DRNIC_LINK_DROP_UDP_PORT;
		return ETHL_DROP;
	}
	if (len < l4 + 8 + ETHL_BTH_LEN)
		return ETHL_DROP;
	/* BTH bytes 5..7: destination QP. */
	*dqpn = (uint32_t)p[l4 + 13] << 16 | (uint32_t)p[l4 + 14] << 8 | p[l4 + 15];
	return ETHL_ROCE;
}

static uint16_t
ethl_hw_tx(struct ethl_port *ep, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t hwq = q, sent;

	if (likely(!ep->tx_shared))
		return rte_eth_tx_burst(ep->port_id, hwq, pkts, n);
	hwq = (uint16_t)(q % ep->nb_hw_txq);
	rte_spinlock_lock(&ep->txq_lock[hwq]);
	sent = rte_eth_tx_burst(ep->port_id, hwq, pkts, n);
	rte_spinlock_unlock(&ep->txq_lock[hwq]);
	return sent;
}

/* Send neighbour frames (replies, requests) on queue 0; count, never keep
 * (those the port refuses are tx_error drops). */
static void
ethl_neigh_tx(struct drnic_link *link, struct ethl_port *ep, struct rte_mbuf **m, uint16_t n)
{
	uint16_t sent;

	if (n == 0)
		return;
	sent = ethl_hw_tx(ep, 0, m, n);
	ep->cnt.neigh_tx += sent;
	if (sent < n)
		link_drop(link, 0, DRNIC_LINK_DROP_TX_ERROR, m + sent, (uint16_t)(n - sent));
}

/* Queue 0: the neighbour frames of a burst, and the questions that are due. */
static void
ethl_neigh_run(struct drnic_link *link, struct ethl_port *ep, struct rte_mbuf **in,
	       uint16_t nin)
{
	struct rte_mbuf *out[ETHL_BURST];
	uint64_t now = ethl_now_ns();
	uint16_t i, nout = 0;

	rte_spinlock_lock(&ep->neigh_lock);
	for (i = 0; i < nin; i++) {
		struct rte_mbuf *r = NULL;

		(void)drnic_neigh_input(ep->neigh, in[i], now, ep->pool, &r);
		if (r != NULL)
			out[nout++] = r;
	}
	if (atomic_load_explicit(&ep->neigh_pending, memory_order_relaxed)) {
		nout = (uint16_t)(nout + drnic_neigh_poll(ep->neigh, now, ep->pool, out + nout,
							  RTE_DIM(out) - nout));
		if (!drnic_neigh_pending(ep->neigh))
			atomic_store_explicit(&ep->neigh_pending, false, memory_order_relaxed);
	}
	rte_spinlock_unlock(&ep->neigh_lock);
	ep->cnt.neigh_rx += nin;
	/* Mirror our own frames too (a capture shows ARP / ND). */
	link_capture_mirror(link, in, nin, DRNIC_CAPTURE_DIR_RX);
	link_capture_mirror(link, out, nout, DRNIC_CAPTURE_DIR_TX);
	ethl_neigh_tx(link, ep, out, nout);
}

static uint16_t
ethl_rx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct ethl_port *ep = link->priv;
	struct rte_mbuf *neigh[ETHL_BURST];
	uint16_t got, i, keep, nn = 0;

	/* Our own frames first (the hairpin, above). */
	keep = (uint16_t)rte_ring_sc_dequeue_burst(ep->hair[q], (void **)pkts, n, NULL);
	if (keep == n)
		return keep;
	if (q != 0)
		return (uint16_t)(keep + rte_ring_sc_dequeue_burst(ep->disp[q],
				(void **)(pkts + keep), n - keep, NULL));
	got = (uint16_t)(keep + rte_eth_rx_burst(ep->port_id, 0, pkts + keep,
			 RTE_MIN((uint16_t)(n - keep), (uint16_t)ETHL_BURST)));
	for (i = keep; i < got; i++) {
		struct rte_mbuf *m = pkts[i];
		enum drnic_link_drop why;
		uint32_t dqpn = 0;
		uint16_t dq;

		switch (ethl_classify(m, &dqpn, &why)) {
		case ETHL_ROCE:
			dq = drnic_link_qpn_queue(dqpn, link->nb_queues);
			if (dq == 0)
				pkts[keep++] = m;
			else if (rte_ring_sp_enqueue(ep->disp[dq], m) != 0)
				link_drop(link, 0, DRNIC_LINK_DROP_RX_ERROR, &m, 1);
			break;
		case ETHL_NEIGH:
			neigh[nn++] = m;
			break;
		default:
			link_drop(link, 0, why, &m, 1);
			break;
		}
	}
	if (unlikely(nn > 0 || atomic_load_explicit(&ep->neigh_pending, memory_order_relaxed))) {
		ethl_neigh_run(link, ep, neigh, nn);
		rte_pktmbuf_free_bulk(neigh, nn);
	}
	return keep;
}

static inline bool
ethl_to_self(const struct drnic_link *link, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

	return m->data_len >= 6 && memcmp(d, link->mac, 6) == 0;
}

/* Transmit, in order: runs of frames to the port, frames to ourselves to
 * the hairpin (above). Stops where the port or a hairpin ring is full. */
static uint16_t
ethl_tx_burst(struct drnic_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct ethl_port *ep = link->priv;
	uint16_t i, done = 0, sent;

	for (i = 0; i < n && !ethl_to_self(link, pkts[i]); i++)
		;
	if (likely(i == n))
		return ethl_hw_tx(ep, q, pkts, n);
	while (done < n) {
		for (i = done; i < n && !ethl_to_self(link, pkts[i]); i++)
			;
		if (i > done) {
			sent = ethl_hw_tx(ep, q, pkts + done, (uint16_t)(i - done));
			done = (uint16_t)(done + sent);
			if (done < i)
				return done;
		}
		for (; done < n && ethl_to_self(link, pkts[done]); done++) {
			struct rte_mbuf *m = pkts[done];
			enum drnic_link_drop why;
			uint32_t dqpn = 0;

			if (ethl_classify(m, &dqpn, &why) != ETHL_ROCE) {
				link_drop(link, q, why, &m, 1);
				continue;
			}
			if (rte_ring_mp_enqueue(ep->hair[drnic_link_qpn_queue(dqpn, link->nb_queues)],
						m) != 0)
				return done;
		}
	}
	return done;
}

/*
 * What the port reports lost, since the link opened or was reset. DPDK
 * 22.11's virtual PMDs report little: net_af_packet counts only oerrors
 * (frames its transmit ring could not take); it never reads the kernel's
 * PACKET_STATISTICS, so frames the kernel dropped because the PMD's receive
 * ring was full (tp_drops) are counted nowhere drnic can read, and its
 * xstats are the generic ones built from these same counters. net_memif
 * and net_ring count oerrors too. Real NICs fill imissed / ierrors, and
 * ethdev fills rx_nombuf for PMDs that report mbuf shortages.
 */
static void
ethl_stats(const struct drnic_link *link, struct drnic_link_stats *stats)
{
	const struct ethl_port *ep = link->priv;
	const struct rte_eth_stats *b = &ep->port_base;
	struct rte_eth_stats es;

	if (rte_eth_stats_get(ep->port_id, &es) != 0)
		return;
	stats->drops[DRNIC_LINK_DROP_PORT_RX_MISSED] += es.imissed - b->imissed;
	stats->drops[DRNIC_LINK_DROP_PORT_RX_ERRORS] += es.ierrors - b->ierrors;
	stats->drops[DRNIC_LINK_DROP_PORT_RX_NOMBUF] += es.rx_nombuf - b->rx_nombuf;
	stats->drops[DRNIC_LINK_DROP_PORT_TX_ERRORS] += es.oerrors - b->oerrors;
}

static void
ethl_stats_reset(struct drnic_link *link)
{
	struct ethl_port *ep = link->priv;

	(void)rte_eth_stats_get(ep->port_id, &ep->port_base);
}

static bool
ethl_is_up(const struct drnic_link *link)
{
	const struct ethl_port *ep = link->priv;
	struct rte_eth_link l;

	if (rte_eth_link_get_nowait(ep->port_id, &l) < 0)
		return false;
	return l.link_status == RTE_ETH_LINK_UP;
}

/*
 * The MAC for @p gid: 0 when known; -EAGAIN when a request is queued (queue
 * 0's poller sends it; ask again later); -EHOSTUNREACH when the peer did not
 * answer; -EADDRNOTAVAIL with no address of ours of that family.
 */
static int
ethl_resolve(const struct drnic_link *link, const uint8_t gid[16], uint8_t mac[6])
{
	struct ethl_port *ep = link->priv;
	int rc;

	rte_spinlock_lock(&ep->neigh_lock);
	rc = drnic_neigh_resolve(ep->neigh, gid, ethl_now_ns(), mac);
	if (drnic_neigh_pending(ep->neigh))
		atomic_store_explicit(&ep->neigh_pending, true, memory_order_relaxed);
	rte_spinlock_unlock(&ep->neigh_lock);
	return rc;
}

static struct link_ops ethl_ops = {
	.name = "ethdev",
	.create = ethl_create,
	.destroy = ethl_destroy,
	.tx_burst = ethl_tx_burst,
	.rx_burst = ethl_rx_burst,
	.stats = ethl_stats,
	.stats_reset = ethl_stats_reset,
	.is_up = ethl_is_up,
	.resolve = ethl_resolve,
	.rx_wait_fd = ethl_rx_wait_fd,
	.rx_wait_arm = ethl_rx_wait_arm,
	.rx_wait_disarm = ethl_rx_wait_disarm,
};

DRNIC_LINK_REGISTER(ethl_ops);
