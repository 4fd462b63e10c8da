/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link registry and instances: drivers register a const ops table from a
 * constructor; devices open links by driver name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "drnic_link_capture.h"
#include "drnic_neigh.h"
#include "link_capture.h"
#include "link_fault.h"

RTE_LOG_REGISTER_SUFFIX(link_logtype, link, NOTICE);
#define LINK_LOG(level, link, fmt, ...)                                         \
	rte_log(RTE_LOG_##level, link_logtype, "link %s: " fmt "\n",            \
		(link) != NULL ? (link)->name : "-", ##__VA_ARGS__)

/* Filled by constructors before main(); read-only afterwards. */
static const struct link_ops *link_drivers[LINK_MAX_DRIVERS];
static unsigned int link_nb_drivers;

static const char *const link_drop_names[DRNIC_LINK_DROP_MAX] = {
	[DRNIC_LINK_DROP_NO_PEER] = "no_peer",
	[DRNIC_LINK_DROP_DOWN] = "down",
	[DRNIC_LINK_DROP_TX_ERROR] = "tx_error",
	[DRNIC_LINK_DROP_RX_ERROR] = "rx_error",
	[DRNIC_LINK_DROP_SHORT_FRAME] = "short_frame",
	[DRNIC_LINK_DROP_NOT_ROCE] = "not_roce",
	[DRNIC_LINK_DROP_BAD_IP_HEADER] = "bad_ip_header",
	[DRNIC_LINK_DROP_IPV6_EXT] = "ipv6_ext_header",
	[DRNIC_LINK_DROP_VLAN_STACKED] = "vlan_stacked",
	[DRNIC_LINK_DROP_UDP_PORT] = "udp_port",
	[DRNIC_LINK_DROP_IP_FRAGMENT] = "ip_fragment",
	[DRNIC_LINK_DROP_NEIGH_VLAN] = "neigh_vlan",
	[DRNIC_LINK_DROP_PORT_RX_MISSED] = "port_rx_missed",
	[DRNIC_LINK_DROP_PORT_RX_ERRORS] = "port_rx_errors",
	[DRNIC_LINK_DROP_PORT_RX_NOMBUF] = "port_rx_nombuf",
	[DRNIC_LINK_DROP_PORT_TX_ERRORS] = "port_tx_errors",
};

const char *
drnic_link_drop_name(enum drnic_link_drop reason)
{
	if ((unsigned int)reason >= DRNIC_LINK_DROP_MAX)
		return "invalid";
	return link_drop_names[reason];
}

void
link_register(const struct link_ops *ops)
{
	if (link_nb_drivers == LINK_MAX_DRIVERS) {
		LINK_LOG(ERR, (struct drnic_link *)NULL, "too many link drivers: %s ignored",
			 ops->name);
		return;
	}
	link_drivers[link_nb_drivers++] = ops;
}

const struct link_ops *
link_find(const char *name)
{
	unsigned int i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < link_nb_drivers; i++)
		if (strcmp(link_drivers[i]->name, name) == 0)
			return link_drivers[i];
	return NULL;
}

struct drnic_link *
link_create(const char *driver, const struct link_config *cfg)
{
	const struct link_ops *ops;
	struct rte_kvargs *kv = NULL;
	struct drnic_link_faults faults;
	struct drnic_link *link;
	bool has_faults = false;
	char *args, *rest, *cap_path = NULL, err[256];
	uint32_t cap_snaplen;
	unsigned int i;
	int rc;

	if (driver == NULL || cfg == NULL || cfg->name == NULL ||
	    cfg->nb_queues == 0 || cfg->nb_queues > LINK_MAX_QUEUES) {
		rte_errno = EINVAL;
		return NULL;
	}
	ops = link_find(driver);
	if (ops == NULL) {
		LINK_LOG(ERR, (struct drnic_link *)NULL, "no link driver named '%s'", driver);
		rte_errno = ENOENT;
		return NULL;
	}
	/* fault_* keys are ours (link_fault.c); the driver gets the rest. */
	drnic_link_faults_init(&faults);
	rc = link_fault_args_split(cfg->args, &faults, &has_faults, &args, err, sizeof(err));
	if (rc < 0) {
		LINK_LOG(ERR, (struct drnic_link *)NULL, "%s: %s", cfg->name,
			 rc == -ENOMEM ? "no memory" : err);
		rte_errno = -rc;
		return NULL;
	}
	/* capture_* keys too (link_capture.c). */
	rc = link_capture_args_split(args, &cap_path, &cap_snaplen, &rest, err, sizeof(err));
	free(args);
	if (rc < 0) {
		LINK_LOG(ERR, (struct drnic_link *)NULL, "%s: %s", cfg->name,
			 rc == -ENOMEM ? "no memory" : err);
		rte_errno = -rc;
		return NULL;
	}
	args = rest;
	if (cfg->nb_ipv4 + cfg->nb_ipv6 > LINK_MAX_ADDRS ||
	    (cfg->nb_ipv4 > 0 && cfg->ipv4 == NULL) || (cfg->nb_ipv6 > 0 && cfg->ipv6 == NULL)) {
		free(args);
		free(cap_path);
		rte_errno = EINVAL;
		return NULL;
	}
	if (args[0] != '\0') {
		kv = rte_kvargs_parse(args, NULL);
		if (kv == NULL) {
			LINK_LOG(ERR, (struct drnic_link *)NULL, "bad arguments '%s' for %s",
				 cfg->args, driver);
			free(args);
			free(cap_path);
			rte_errno = EINVAL;
			return NULL;
		}
	}
	free(args);
	link = rte_zmalloc_socket("drnic_link", sizeof(*link), RTE_CACHE_LINE_SIZE,
				  cfg->socket_id);
	if (link == NULL) {
		rte_kvargs_free(kv);
		free(cap_path);
		rte_errno = ENOMEM;
		return NULL;
	}
	rte_spinlock_init(&link->capture_lock);
	link->mtu = cfg->mtu;
	for (i = 0; i < cfg->nb_ipv4; i++)
		drnic_neigh_gid_from_ipv4(cfg->ipv4[i].s_addr, link->addrs[link->nb_addrs++]);
	for (i = 0; i < cfg->nb_ipv6; i++)
		memcpy(link->addrs[link->nb_addrs++], cfg->ipv6[i].s6_addr, 16);
	link->ops = ops;
	snprintf(link->name, sizeof(link->name), "%s", cfg->name);
	link->nb_queues = cfg->nb_queues;
	memcpy(link->mac, cfg->mac, sizeof(link->mac));
	link->socket_id = cfg->socket_id;
	rc = ops->create(link, kv);
	rte_kvargs_free(kv);
	if (rc < 0) {
		LINK_LOG(ERR, link, "driver %s refused: %s", driver, strerror(-rc));
		rte_free(link);
		free(cap_path);
		rte_errno = -rc;
		return NULL;
	}
	if (has_faults && (rc = link_fault_attach(link, &faults)) < 0)
		goto fail;
	if (cap_path != NULL && (rc = drnic_link_capture_start(link, cap_path, cap_snaplen)) < 0)
		goto fail;
	free(cap_path);
	LINK_LOG(INFO, link, "opened (%s, %u queues)", driver, link->nb_queues);
	return link;

fail:
	link_fault_detach(link);
	ops->destroy(link);
	rte_free(link);
	free(cap_path);
	rte_errno = -rc;
	return NULL;
}

void
link_destroy(struct drnic_link *link)
{
	if (link == NULL)
		return;
	link_fault_detach(link);
	(void)drnic_link_capture_stop(link);
	link->ops->destroy(link);
	LINK_LOG(INFO, link, "closed");
	rte_free(link);
}

void
link_drop(struct drnic_link *link, uint16_t q, enum drnic_link_drop reason,
	  struct rte_mbuf **pkts, uint16_t n)
{
	link->stats[q].drops[reason] += n;
	rte_pktmbuf_free_bulk(pkts, n);
}

int
drnic_link_stats_get(const struct drnic_link *link, struct drnic_link_stats *stats)
{
	unsigned int q, r;

	if (link == NULL || stats == NULL)
		return -EINVAL;
	memset(stats, 0, sizeof(*stats));
	for (q = 0; q < link->nb_queues; q++) {
		const struct link_queue_stats *s = &link->stats[q];

		stats->tx_packets += s->tx_packets;
		stats->tx_bytes += s->tx_bytes;
		stats->rx_packets += s->rx_packets;
		stats->rx_bytes += s->rx_bytes;
		stats->tx_busy += s->tx_busy;
		for (r = 0; r < DRNIC_LINK_DROP_MAX; r++)
			stats->drops[r] += s->drops[r];
	}
	if (link->ops->stats != NULL)
		link->ops->stats(link, stats);
	return 0;
}

int
drnic_link_stats_reset(struct drnic_link *link)
{
	if (link == NULL)
		return -EINVAL;
	memset(link->stats, 0, sizeof(link->stats));
	if (link->ops->stats_reset != NULL)
		link->ops->stats_reset(link);
	return 0;
}

const char *
drnic_link_name(const struct drnic_link *link)
{
	return link != NULL ? link->name : NULL;
}

const char *
drnic_link_driver_name(const struct drnic_link *link)
{
	return link != NULL ? link->ops->name : NULL;
}

int
drnic_link_mac(const struct drnic_link *link, uint8_t mac[6])
{
	if (link == NULL || mac == NULL)
		return -EINVAL;
	memcpy(mac, link->mac, 6);
	return 0;
}

/* The receive wake-up: argument checks here, the work in the driver. */
static int
link_rx_wait_check(const struct drnic_link *link, uint16_t queue)
{
	if (link == NULL || queue >= link->nb_queues)
		return -EINVAL;
	if (link->ops->rx_wait_fd == NULL || link->ops->rx_wait_arm == NULL ||
	    link->ops->rx_wait_disarm == NULL)
		return -ENOTSUP;
	return 0;
}

int
drnic_link_rx_wait_fd(struct drnic_link *link, uint16_t queue)
{
	int rc = link_rx_wait_check(link, queue);

	return rc < 0 ? rc : link->ops->rx_wait_fd(link, queue);
}

int
drnic_link_rx_wait_arm(struct drnic_link *link, uint16_t queue)
{
	int rc = link_rx_wait_check(link, queue);

	if (rc < 0)
		return rc;
	/* Injectors hold frames until a due time and release them from
	 * rx_burst / tx_burst calls (either direction's injector runs from
	 * the queue's receive path): nothing would wake a sleeper then. */
	if (__atomic_load_n(&link->fault[queue], __ATOMIC_RELAXED) != NULL ||
	    __atomic_load_n(&link->fault_rx[queue], __ATOMIC_RELAXED) != NULL)
		return -EAGAIN;
	return link->ops->rx_wait_arm(link, queue);
}

int
drnic_link_rx_wait_disarm(struct drnic_link *link, uint16_t queue)
{
	int rc = link_rx_wait_check(link, queue);

	return rc < 0 ? rc : link->ops->rx_wait_disarm(link, queue);
}
