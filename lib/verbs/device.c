/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices: open/close from a configuration, port and GID table, limits, the
 * engine hook table, inline progress and application lcores.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "verbs_objects.h"
#include "verbs_remote.h"

RTE_LOG_REGISTER_SUFFIX(verbs_logtype, verbs, NOTICE);

static const struct verbs_engine_ops *engine_ops;
static pthread_mutex_t dev_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct drnic_device *dev_list[64];

void
verbs_set_engine_ops(const struct verbs_engine_ops *ops)
{
	engine_ops = ops;
}

const struct verbs_engine_ops *
verbs_engine_ops(void)
{
	return engine_ops;
}

/* Bytes a RoCEv2 packet adds to its payload inside the IP MTU: IP, UDP, BTH,
 * RETH, ImmDt, ICRC. */
static uint8_t
dev_mtu_code(unsigned int ip_mtu, bool ipv6)
{
	unsigned int overhead = (ipv6 ? 40u : 20u) + 8 + 12 + 16 + 4 + 4;
	uint8_t code;

	for (code = DRNIC_MTU_4096; code >= DRNIC_MTU_256; code--)
		if ((256u << (code - 1)) + overhead <= ip_mtu)
			return code;
	return 0;
}

static int
dev_check_config(const struct drnic_config *cfg)
{
	unsigned int i, j;

	if (cfg->name[0] == '\0' || cfg->nb_engines == 0 || cfg->nb_engines > DRNIC_MAX_ENGINES)
		return -EINVAL;
	if (cfg->progress != DRNIC_PROGRESS_DEDICATED && cfg->progress != DRNIC_PROGRESS_INLINE)
		return -EINVAL;
	if (cfg->nb_ipv4 + cfg->nb_ipv6 == 0 || cfg->nb_ipv4 + cfg->nb_ipv6 > DRNIC_MAX_ADDRS)
		return -EINVAL;
	if (cfg->mtu < 576 || cfg->mtu > 9216)
		return -EINVAL;
	if (cfg->max_qp == 0 || cfg->max_qp_wr == 0 || cfg->max_qp_wr > VERBS_MAX_QP_WR ||
	    cfg->max_sge == 0 || cfg->max_sge > VERBS_MAX_SGE ||
	    cfg->max_inline_data > VERBS_MAX_INLINE || cfg->max_mr == 0 || cfg->max_pd == 0 ||
	    cfg->max_rd_atomic == 0 || cfg->max_rd_atomic > VERBS_MAX_RD_ATOMIC ||
	    cfg->nb_app_lcores > DRNIC_MAX_ENGINES)
		return -EINVAL;
	if (cfg->progress == DRNIC_PROGRESS_DEDICATED) {
		for (i = 0; i < cfg->nb_engines; i++) {
			unsigned int lc = cfg->engine_lcores[i];

			if (lc >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lc) ||
			    lc == rte_get_main_lcore())
				return -EINVAL;
			for (j = 0; j < i; j++)
				if (cfg->engine_lcores[j] == lc)
					return -EINVAL;
		}
	}
	for (i = 0; i < cfg->nb_app_lcores; i++)
		if (cfg->app_lcores[i] >= RTE_MAX_LCORE || !rte_lcore_is_enabled(cfg->app_lcores[i]))
			return -EINVAL;
	return 0;
}

static void
dev_fill_gids(struct drnic_device *dev)
{
	unsigned int i, n = 0;

	for (i = 0; i < dev->cfg.nb_ipv4; i++, n++) {
		memset(dev->gid[n].raw, 0, 10);
		dev->gid[n].raw[10] = 0xFF;
		dev->gid[n].raw[11] = 0xFF;
		memcpy(&dev->gid[n].raw[12], &dev->cfg.ipv4[i], 4);
		dev->gid_is_v4[n] = 1;
	}
	for (i = 0; i < dev->cfg.nb_ipv6; i++, n++)
		memcpy(dev->gid[n].raw, &dev->cfg.ipv6[i], 16);
	dev->nb_gids = n;
}

static uint32_t
dev_pow2(uint32_t v)
{
	return rte_align32pow2(v < 2 ? 2 : v);
}

static void
dev_free(struct drnic_device *dev)
{
	if (dev->link != NULL)
		link_destroy(dev->link);
	if (dev->async != NULL)
		drnic_async_queue_destroy(dev->async);
	rte_free(dev->mr_tab);
	rte_free(dev->mw_tab);
	rte_free(dev->qp_tab);
	rte_free(dev->srq_tab);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->async_lock);
	rte_free(dev);
}

void
verbs_device_event(struct drnic_device *dev, const struct drnic_async_event *ev)
{
	unsigned int i;

	(void)async_raise(dev->async, ev);   /* counted if lost */
	pthread_mutex_lock(&dev->async_lock);
	for (i = 0; i < dev->nb_async_subs; i++)
		(void)async_raise(dev->async_subs[i], ev);
	pthread_mutex_unlock(&dev->async_lock);
}

int
drnic_device_async_subscribe(struct drnic_device *dev, struct drnic_async_queue *q)
{
	unsigned int i;
	int rc = 0;

	if (verbs_remote())
		return remote_device_async_sub(dev, q, true);
	if (dev == NULL || q == NULL || q == dev->async)
		return -EINVAL;
	pthread_mutex_lock(&dev->async_lock);
	for (i = 0; i < dev->nb_async_subs; i++)
		if (dev->async_subs[i] == q)
			rc = -EEXIST;
	if (rc == 0 && dev->nb_async_subs == RTE_DIM(dev->async_subs))
		rc = -ENOSPC;
	if (rc == 0)
		rc = async_get(q);
	if (rc == 0)
		dev->async_subs[dev->nb_async_subs++] = q;
	pthread_mutex_unlock(&dev->async_lock);
	return rc;
}

int
drnic_device_async_unsubscribe(struct drnic_device *dev, struct drnic_async_queue *q)
{
	unsigned int i;
	int rc = -ENOENT;

	if (verbs_remote())
		return remote_device_async_sub(dev, q, false);
	if (dev == NULL || q == NULL)
		return -EINVAL;
	pthread_mutex_lock(&dev->async_lock);
	for (i = 0; i < dev->nb_async_subs; i++) {
		if (dev->async_subs[i] != q)
			continue;
		dev->async_subs[i] = dev->async_subs[--dev->nb_async_subs];
		async_put(q);
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&dev->async_lock);
	return rc;
}

struct drnic_device *
drnic_device_open(const struct drnic_config *cfg)
{
	struct drnic_config defaults;
	struct drnic_device *dev;
	struct link_config lcfg;
	char lname[64];
	unsigned int i, slot = RTE_DIM(dev_list);
	int rc;

	if (cfg == NULL) {
		drnic_config_init(&defaults);
		cfg = &defaults;
	}
	if (verbs_remote()) {
		/* The daemon's device of that name; it runs the engines. */
		async_set_hooks(&verbs_async_hooks);
		return remote_device_open(cfg->name);
	}
	rc = dev_check_config(cfg);
	if (rc < 0) {
		VERBS_LOG(ERR, "%s: invalid configuration", cfg->name);
		rte_errno = -rc;
		return NULL;
	}
	if (engine_ops == NULL) {
		VERBS_LOG(ERR, "no engine library linked");
		rte_errno = ENOTSUP;
		return NULL;
	}
	pthread_mutex_lock(&dev_list_lock);
	for (i = 0; i < RTE_DIM(dev_list); i++) {
		if (dev_list[i] == NULL && slot == RTE_DIM(dev_list))
			slot = i;
		if (dev_list[i] != NULL && strcmp(dev_list[i]->cfg.name, cfg->name) == 0) {
			pthread_mutex_unlock(&dev_list_lock);
			rte_errno = EEXIST;
			return NULL;
		}
	}
	if (slot == RTE_DIM(dev_list)) {
		pthread_mutex_unlock(&dev_list_lock);
		rte_errno = ENOMEM;
		return NULL;
	}

	dev = rte_zmalloc_socket("drnic_device", sizeof(*dev), RTE_CACHE_LINE_SIZE,
				 cfg->socket_id);
	if (dev == NULL) {
		pthread_mutex_unlock(&dev_list_lock);
		rte_errno = ENOMEM;
		return NULL;
	}
	dev->cfg = *cfg;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->async_lock, NULL);
	dev->nb_engines = cfg->nb_engines;
	dev->max_mtu = DRNIC_MTU_4096;
	dev->active_mtu = dev_mtu_code(cfg->mtu, cfg->nb_ipv6 > 0);
	dev_fill_gids(dev);
	dev->node_guid = 0;
	for (i = 0; i < 6; i++)
		dev->node_guid = dev->node_guid << 8 | cfg->mac[i];
	/* EUI-64 from the MAC, as RoCE devices do. */
	dev->node_guid = ((dev->node_guid & 0xFFFFFF000000ull) << 16) | 0xFFFE000000ull |
			 (dev->node_guid & 0xFFFFFF);
	dev->node_guid ^= 0x0200000000000000ull;

	rc = -ENOMEM;
	dev->async = drnic_async_queue_create(0);
	if (dev->async == NULL)
		goto fail;
	async_set_hooks(&verbs_async_hooks);

	dev->mr_tab_size = cfg->max_mr + 1;
	dev->mr_tab = rte_zmalloc_socket("drnic_mr_tab", sizeof(dev->mr_tab[0]) * dev->mr_tab_size,
					 RTE_CACHE_LINE_SIZE, cfg->socket_id);
	if (dev->mr_tab == NULL)
		goto fail;
	verbs_mr_table_setup(dev);
	dev->mw_tab_size = VERBS_MAX_MW + 1;
	dev->mw_tab = rte_zmalloc_socket("drnic_mw_tab", sizeof(dev->mw_tab[0]) * dev->mw_tab_size,
					 RTE_CACHE_LINE_SIZE, cfg->socket_id);
	if (dev->mw_tab == NULL)
		goto fail;
	verbs_mw_table_setup(dev);

	dev->qp_tab_size = dev_pow2(cfg->max_qp + VERBS_FIRST_QPN);
	dev->qp_mask = dev->qp_tab_size - 1;
	dev->qp_tab = rte_zmalloc_socket("drnic_qp_tab", sizeof(dev->qp_tab[0]) * dev->qp_tab_size,
					 RTE_CACHE_LINE_SIZE, cfg->socket_id);
	if (dev->qp_tab == NULL)
		goto fail;
	dev->qp_next = VERBS_FIRST_QPN;
	/* XRC SRQ numbers: max_srq of them, never 0. */
	dev->srq_tab_size = dev_pow2(cfg->max_qp + 1);
	dev->srq_mask = dev->srq_tab_size - 1;
	dev->srq_tab = rte_zmalloc_socket("drnic_srq_tab",
					  sizeof(dev->srq_tab[0]) * dev->srq_tab_size,
					  RTE_CACHE_LINE_SIZE, cfg->socket_id);
	if (dev->srq_tab == NULL)
		goto fail;
	dev->srq_next = 1;

	snprintf(lname, sizeof(lname), "%s.%s", cfg->name, cfg->link_driver);
	/* The device's addresses go to the link, which answers ARP and
	 * neighbour solicitations for them and resolves peers from them. (Its
	 * MTU does not: cfg->mtu always has a value, and the link would set it
	 * on the port, a kernel interface's MTU with af_packet.) */
	lcfg = (struct link_config){
		.name = lname, .args = cfg->link_args, .nb_queues = (uint16_t)cfg->nb_engines,
		.socket_id = cfg->socket_id,
		.ipv4 = cfg->ipv4, .nb_ipv4 = cfg->nb_ipv4,
		.ipv6 = cfg->ipv6, .nb_ipv6 = cfg->nb_ipv6,
	};
	memcpy(lcfg.mac, cfg->mac, 6);
	dev->link = link_create(cfg->link_driver, &lcfg);
	if (dev->link == NULL) {
		rc = rte_errno == ENOENT ? -EINVAL : -rte_errno;
		goto fail;
	}
	rc = handle_add(dev, HANDLE_DEVICE);
	if (rc < 0)
		goto fail;
	rc = engine_ops->dev_attach(dev);
	if (rc < 0) {
		handle_take(dev, HANDLE_DEVICE);
		goto fail;
	}
	dev->engines_attached = true;
	dev_list[slot] = dev;
	pthread_mutex_unlock(&dev_list_lock);
	VERBS_DEV_LOG(INFO, dev, "open: %u %s engine(s), link %s, port MTU %u",
		      dev->nb_engines, cfg->progress == DRNIC_PROGRESS_INLINE ? "inline" : "dedicated",
		      cfg->link_driver, 128u << dev->active_mtu);
	return dev;

fail:
	pthread_mutex_unlock(&dev_list_lock);
	VERBS_DEV_LOG(ERR, dev, "open failed: %s", strerror(-rc));
	dev_free(dev);
	rte_errno = -rc;
	return NULL;
}

int
drnic_device_close(struct drnic_device *dev)
{
	unsigned int i;

	if (verbs_remote())
		return remote_device_close(dev);
	/* Not live (NULL, closed already): nothing behind it is read. */
	if (handle_take(dev, HANDLE_DEVICE) < 0)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	if (dev->nb_qp != 0 || dev->nb_mr != 0 || dev->nb_pd != 0 || dev->xrcds != NULL) {
		pthread_mutex_unlock(&dev->lock);
		(void)handle_add(dev, HANDLE_DEVICE);  /* cannot fail: its slot is free */
		return -EBUSY;
	}
	pthread_mutex_unlock(&dev->lock);
	if (dev->engines_attached)
		engine_ops->dev_detach(dev);
	/* No engine raises any more: let the subscribed queues go. */
	while (dev->nb_async_subs > 0)
		async_put(dev->async_subs[--dev->nb_async_subs]);
	pthread_mutex_lock(&dev_list_lock);
	for (i = 0; i < RTE_DIM(dev_list); i++)
		if (dev_list[i] == dev)
			dev_list[i] = NULL;
	pthread_mutex_unlock(&dev_list_lock);
	VERBS_DEV_LOG(INFO, dev, "closed");
	dev_free(dev);
	return 0;
}

int
drnic_device_list(struct drnic_config *cfgs, unsigned int max)
{
	unsigned int i, n = 0;

	if (cfgs == NULL && max != 0)
		return -EINVAL;
	if (verbs_remote())
		return remote_device_list(cfgs, max);
	pthread_mutex_lock(&dev_list_lock);
	for (i = 0; i < RTE_DIM(dev_list); i++) {
		if (dev_list[i] == NULL)
			continue;
		if (n < max)
			cfgs[n] = dev_list[i]->cfg;
		n++;
	}
	pthread_mutex_unlock(&dev_list_lock);
	return (int)n;
}

const char *
drnic_device_name(const struct drnic_device *dev)
{
	return dev != NULL ? dev->cfg.name : NULL;
}

struct drnic_async_queue *
drnic_device_async_queue(struct drnic_device *dev)
{
	if (dev == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (verbs_remote())
		return remote_device_async_queue(dev);   /* this process's own */
	return dev->async;
}

struct drnic_link *
drnic_device_link(struct drnic_device *dev)
{
	if (dev == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (verbs_remote()) {
		/* The daemon's link, in the daemon's own memory. */
		rte_errno = ENOTSUP;
		return NULL;
	}
	return dev->link;
}

/* CAP_NET_RAW is bit 13 of the effective set (/proc/self/status CapEff). */
bool
verbs_privileged(void)
{
	static int cached = -1;
	char line[256];
	FILE *f;

	if (cached >= 0)
		return cached != 0;
	cached = 0;
	f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long eff;

		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			cached = (eff >> 13) & 1;
			break;
		}
	}
	fclose(f);
	return cached != 0;
}

int
drnic_query_device(struct drnic_device *dev, struct drnic_device_attr *a)
{
	const struct drnic_config *c;

	if (dev == NULL || a == NULL)
		return -EINVAL;
	c = &dev->cfg;
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "drnic-0.1.0");
	a->node_guid = dev->node_guid;
	a->sys_image_guid = dev->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 0xFFFFF000;
	a->vendor_id = DRNIC_VENDOR_ID;
	a->vendor_part_id = 0x0d1c;
	a->max_qp = (int)c->max_qp;
	a->max_qp_wr = (int)c->max_qp_wr;
	a->max_sge = (int)c->max_sge;
	a->max_sge_rd = (int)c->max_sge;
	a->max_cq = 1 << 20;
	a->max_cqe = (int)c->max_cqe;
	a->max_mr = (int)c->max_mr;
	a->max_pd = (int)c->max_pd;
	a->max_qp_rd_atom = (int)c->max_rd_atomic;
	a->max_qp_init_rd_atom = (int)c->max_rd_atomic;
	a->max_res_rd_atom = (int)(c->max_rd_atomic * c->max_qp);
	a->atomic_cap = DRNIC_ATOMIC_GLOB;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
	a->max_srq = (int)c->max_qp;
	a->max_srq_wr = (int)c->max_qp_wr;
	a->max_srq_sge = (int)c->max_sge;
	a->max_ah = (int)c->max_qp;
	a->max_mcast_grp = VERBS_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = VERBS_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = VERBS_MAX_MCAST_GRP * VERBS_MAX_MCAST_QP_ATTACH;
	a->max_mw = VERBS_MAX_MW;
	a->max_inline_data = (int)c->max_inline_data;
	a->max_xrcd = (int)c->max_pd;
	a->nb_engines = dev->nb_engines;
	a->progress = c->progress;
	a->device_cap_flags = DRNIC_DEVICE_SRQ_RESIZE;
	a->device_cap_flags_ex = DRNIC_DEVICE_ATOMIC_WRITE;
	return 0;
}

int
drnic_query_port(struct drnic_device *dev, uint8_t port_num, struct drnic_port_attr *a)
{
	bool up;

	if (dev == NULL || a == NULL || port_num != 1)
		return -EINVAL;
	/* An attached process reads what the daemon's engine saw: the link's
	 * ops are the daemon's code. */
	up = verbs_remote() ? atomic_load_explicit(&dev->link_up, memory_order_relaxed)
			    : link_is_up(dev->link);
	memset(a, 0, sizeof(*a));
	a->state = up ? DRNIC_PORT_ACTIVE : DRNIC_PORT_DOWN;
	a->max_mtu = (enum drnic_mtu)dev->max_mtu;
	a->active_mtu = (enum drnic_mtu)dev->active_mtu;
	a->gid_tbl_len = DRNIC_GID_TABLE_LEN;
	a->port_cap_flags = 1u << 26;      /* IP-based GIDs */
	a->max_msg_sz = VERBS_MAX_MSG_SZ;
	a->pkey_tbl_len = 1;
	a->qkey_viol_cntr = atomic_load_explicit(&dev->qkey_viol, memory_order_relaxed);
	a->max_vl_num = 1;
	a->active_width = 2;               /* 4x */
	a->active_speed = 32;              /* EDR-like figure, for tools */
	a->phys_state = up ? 5 : 3;        /* LinkUp / Disabled */
	a->link_layer = DRNIC_LINK_LAYER_ETHERNET;
	a->eth_mtu = dev->cfg.mtu;
	memcpy(a->mac, dev->link->mac, 6);   /* the link may use its port's */
	return 0;
}

int
drnic_query_gid(struct drnic_device *dev, uint8_t port_num, int index, union drnic_gid *gid)
{
	if (dev == NULL || gid == NULL || port_num != 1 || index < 0 ||
	    index >= DRNIC_GID_TABLE_LEN)
		return -EINVAL;
	if ((unsigned int)index < dev->nb_gids)
		*gid = dev->gid[index];
	else
		memset(gid, 0, sizeof(*gid));
	return 0;
}

int
drnic_device_progress(struct drnic_device *dev)
{
	RTE_SET_USED(dev);
	if (engine_ops == NULL || engine_ops->progress == NULL)
		return 0;
	return engine_ops->progress();
}

int
drnic_app_launch(struct drnic_device *dev, unsigned int index, int (*fn)(void *), void *arg)
{
	int rc;

	if (verbs_remote())
		return -ENOTSUP;       /* not offered to attached processes yet */
	if (dev == NULL || fn == NULL || index >= dev->cfg.nb_app_lcores)
		return -EINVAL;
	rc = rte_eal_remote_launch(fn, arg, dev->cfg.app_lcores[index]);
	return rc == 0 ? 0 : -EBUSY;
}

int
drnic_app_wait(struct drnic_device *dev, unsigned int index)
{
	if (dev == NULL || index >= dev->cfg.nb_app_lcores)
		return -EINVAL;
	return rte_eal_wait_lcore(dev->cfg.app_lcores[index]);
}
