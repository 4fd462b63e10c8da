/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles (where a UD send goes) and multicast groups (which UD QPs
 * a datagram to a group reaches). Control path: under dev->lock.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "verbs_objects.h"
#include "verbs_remote.h"

static bool
verbs_mac_is_zero(const uint8_t mac[6])
{
	return (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0;
}

static uint64_t
verbs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The destination MAC of address vector @p ah (a QP's or an AH's): the one given, or the link's
 * answer for the destination GID. A link that is still asking (-EAGAIN) is
 * asked again for up to VERBS_RESOLVE_MS; in inline mode this thread runs the
 * engines meanwhile (they send the question and learn the answer), in
 * dedicated mode the engines do it while we nap. A link that cannot tell
 * (-ENOENT, e.g. a loopback wire whose other end is not open yet) leaves
 * the MAC zero, as before.
 *
 * Returns 0, or -EHOSTUNREACH when the peer did not answer.
 */
#define VERBS_RESOLVE_MS 3000
int
verbs_resolve_dmac(struct drnic_device *dev, const struct drnic_ah_attr *ah, uint8_t dmac[6])
{
	struct drnic_link *link = dev->link;
	uint64_t deadline;
	int rc;

	memcpy(dmac, ah->dmac, 6);
	if (!verbs_mac_is_zero(dmac) || link->ops->resolve == NULL)
		return 0;
	deadline = verbs_now_ms() + VERBS_RESOLVE_MS;
	for (;;) {
		rc = link->ops->resolve(link, ah->grh.dgid.raw, dmac);
		if (rc != -EAGAIN)
			break;
		if (verbs_now_ms() > deadline) {
			rc = -EHOSTUNREACH;
			break;
		}
		if (dev->cfg.progress == DRNIC_PROGRESS_INLINE) {
			drnic_device_progress(dev);
		} else {
			struct timespec ts = { .tv_sec = 0, .tv_nsec = 200000 };

			nanosleep(&ts, NULL);
		}
	}
	if (rc == -EHOSTUNREACH) {
		VERBS_DEV_LOG(NOTICE, dev, "destination GID did not answer: unreachable");
		memset(dmac, 0, 6);
		return rc;
	}
	if (rc == -EADDRNOTAVAIL) {
		/* The link resolves, but has no address of the destination's
		 * family to ask from: frames would go to MAC 00:00:00:00:00:00,
		 * which only a point-to-point wire delivers. */
		VERBS_DEV_LOG(WARNING, dev, "no local address of the destination's family to resolve"
			     " its MAC from (device or link_args ipv4=/ipv6=): sending to MAC"
			     " 00:00:00:00:00:00");
		memset(dmac, 0, 6);
	} else if (rc < 0) {
		VERBS_DEV_LOG(DEBUG, dev, "link cannot resolve the destination (%s)", strerror(-rc));
		memset(dmac, 0, 6);
	}
	return 0;
}

/* An address vector UD can use: RoCEv2, a source GID that exists, port 1. */
static int
ah_attr_check(const struct drnic_device *dev, const struct drnic_ah_attr *a)
{
	if (!a->is_global || a->grh.sgid_index >= dev->nb_gids ||
	    (a->port_num != 0 && a->port_num != 1))
		return -EINVAL;
	return 0;
}

struct drnic_ah *
drnic_create_ah(struct drnic_pd *pd, struct drnic_ah_attr *attr)
{
	struct drnic_device *dev;
	struct drnic_ah *ah;
	uint8_t dmac[6];
	int rc;

	if (verbs_remote())
		return remote_create_ah(pd, attr);

	if (pd == NULL || attr == NULL || !handle_live(pd, HANDLE_PD)) {
		rte_errno = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	rc = ah_attr_check(dev, attr);
	if (rc < 0) {
		rte_errno = -rc;
		return NULL;
	}
	if (verbs_gid_is_mcast(&attr->grh.dgid)) {
		verbs_mcast_mac(&attr->grh.dgid, dmac);
	} else {
		rc = verbs_resolve_dmac(dev, attr, dmac);
		if (rc < 0) {
			rte_errno = -rc;
			return NULL;
		}
	}
	ah = rte_zmalloc_socket("drnic_ah", sizeof(*ah), RTE_CACHE_LINE_SIZE,
				dev->cfg.socket_id);
	if (ah == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ah->dev = dev;
	ah->pd = pd;
	ah->attr = *attr;
	ah->attr.port_num = 1;
	memcpy(ah->attr.dmac, dmac, 6);
	/* UDP source port: entropy from the destination (RoCEv2 leaves it to
	 * the sender; the same AH keeps one flow). */
	ah->udp_sport = (uint16_t)(0xC000 | ((attr->grh.dgid.raw[15] ^ (attr->grh.dgid.raw[14] << 6) ^
					      attr->grh.flow_label) & 0x3FFF));
	atomic_init(&ah->busy, 0);

	pthread_mutex_lock(&dev->lock);
	if (dev->nb_ah >= dev->cfg.max_qp) {
		pthread_mutex_unlock(&dev->lock);
		rte_free(ah);
		rte_errno = ENOMEM;
		return NULL;
	}
	rc = handle_add(ah, HANDLE_AH);
	if (rc < 0) {
		pthread_mutex_unlock(&dev->lock);
		rte_free(ah);
		rte_errno = -rc;
		return NULL;
	}
	dev->nb_ah++;
	atomic_fetch_add(&pd->refs, 1);
	pthread_mutex_unlock(&dev->lock);
	return ah;
}

int
drnic_destroy_ah(struct drnic_ah *ah)
{
	struct drnic_device *dev;

	if (verbs_remote())
		return remote_destroy_ah(ah);
	if (handle_take(ah, HANDLE_AH) < 0)
		return -EINVAL;
	/* Acquire: the requester's last read of it comes before. */
	if (atomic_load_explicit(&ah->busy, memory_order_acquire) != 0) {
		(void)handle_add(ah, HANDLE_AH);
		return -EBUSY;
	}
	dev = ah->dev;
	pthread_mutex_lock(&dev->lock);
	dev->nb_ah--;
	atomic_fetch_sub(&ah->pd->refs, 1);
	pthread_mutex_unlock(&dev->lock);
	rte_free(ah);
	return 0;
}

const struct drnic_ah_attr *
drnic_ah_attr_get(const struct drnic_ah *ah)
{
	return ah != NULL ? &ah->attr : NULL;
}

int
drnic_init_ah_from_wc(struct drnic_device *dev, uint8_t port_num, const struct drnic_wc *wc,
		      const void *grh, struct drnic_ah_attr *attr)
{
	const uint8_t *g = grh;
	union drnic_gid sgid, dgid;   /* the datagram's source and destination */
	unsigned int i;

	if (dev == NULL || wc == NULL || grh == NULL || attr == NULL || port_num != 1 ||
	    !(wc->wc_flags & DRNIC_WC_GRH))
		return -EINVAL;
	memset(&sgid, 0, sizeof(sgid));
	memset(&dgid, 0, sizeof(dgid));
	memset(attr, 0, sizeof(*attr));
	if ((g[20] >> 4) == 4 && (g[20] & 0xF) == 5) {
		/* IPv4: the header in the last 20 bytes; GIDs IPv4-mapped. */
		sgid.raw[10] = sgid.raw[11] = 0xFF;
		dgid.raw[10] = dgid.raw[11] = 0xFF;
		memcpy(&sgid.raw[12], g + 20 + 12, 4);
		memcpy(&dgid.raw[12], g + 20 + 16, 4);
		attr->grh.traffic_class = g[20 + 1];
	} else if ((g[0] >> 4) == 6) {
		memcpy(sgid.raw, g + 8, 16);
		memcpy(dgid.raw, g + 24, 16);
		attr->grh.traffic_class = (uint8_t)((g[0] << 4) | (g[1] >> 4));
		attr->grh.flow_label = ((uint32_t)(g[1] & 0xF) << 16) | ((uint32_t)g[2] << 8) | g[3];
	} else {
		return -EINVAL;
	}
	/* The answer leaves from the address the datagram came to (a group's
	 * datagram: from the port's first address of that family). */
	for (i = 0; i < dev->nb_gids; i++)
		if (memcmp(dev->gid[i].raw, dgid.raw, 16) == 0)
			break;
	if (i == dev->nb_gids && verbs_gid_is_mcast(&dgid)) {
		bool v4 = dgid.raw[10] == 0xFF && dgid.raw[0] == 0;

		for (i = 0; i < dev->nb_gids; i++)
			if ((dev->gid_is_v4[i] != 0) == v4)
				break;
	}
	if (i == dev->nb_gids)
		return -ENOENT;
	attr->grh.dgid = sgid;
	attr->grh.sgid_index = (uint8_t)i;
	attr->grh.hop_limit = 0xFF;
	attr->is_global = 1;
	attr->sl = wc->sl;
	attr->port_num = port_num;
	return 0;
}

/* The group of @p gid among the device's, or NULL. Under dev->lock. */
static struct verbs_mcast_grp *
ah_mcast_find(struct drnic_device *dev, const union drnic_gid *gid)
{
	unsigned int i;

	for (i = 0; i < dev->nb_mcast; i++)
		if (memcmp(dev->mcast[i].gid.raw, gid->raw, 16) == 0)
			return &dev->mcast[i];
	return NULL;
}

/*
 * Attach (@p attach) UD QP @p qp to the group of @p gid, or detach it: the
 * device's table (limits, detach) and the engine's (delivery) together.
 */
static int
ah_mcast_change(struct drnic_qp *qp, const union drnic_gid *gid, bool attach)
{
	struct drnic_device *dev;
	struct verbs_mcast_grp *g;
	unsigned int i = 0;
	int rc = 0;

	if (qp == NULL || gid == NULL || !handle_live(qp, HANDLE_QP) || qp->type != DRNIC_QPT_UD ||
	    !verbs_gid_is_mcast(gid))
		return -EINVAL;
	dev = qp->dev;
	pthread_mutex_lock(&dev->lock);
	g = ah_mcast_find(dev, gid);
	while (g != NULL && i < g->nb_qp && g->qp[i] != qp)
		i++;
	if (!attach) {
		if (g == NULL || i == g->nb_qp) {
			rc = -EINVAL;           /* not attached */
		} else {
			(void)verbs_engine_ops()->qp_mcast(qp, gid, false);
			g->qp[i] = g->qp[--g->nb_qp];
			qp->nb_mcast--;
			if (g->nb_qp == 0)
				*g = dev->mcast[--dev->nb_mcast];
		}
	} else if (g != NULL && i < g->nb_qp) {
		rc = 0;                         /* attached already */
	} else if (g != NULL ? g->nb_qp == VERBS_MAX_MCAST_QP_ATTACH :
		   dev->nb_mcast == VERBS_MAX_MCAST_GRP) {
		rc = -ENOMEM;
	} else {
		rc = verbs_engine_ops()->qp_mcast(qp, gid, true);
		if (rc == 0) {
			if (g == NULL) {
				g = &dev->mcast[dev->nb_mcast++];
				g->gid = *gid;
				g->nb_qp = 0;
			}
			g->qp[g->nb_qp++] = qp;
			qp->nb_mcast++;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

int
drnic_attach_mcast(struct drnic_qp *qp, const union drnic_gid *gid, uint16_t lid)
{
	RTE_SET_USED(lid);
	if (verbs_remote())
		return remote_mcast(qp, gid, true);
	return ah_mcast_change(qp, gid, true);
}

int
drnic_detach_mcast(struct drnic_qp *qp, const union drnic_gid *gid, uint16_t lid)
{
	RTE_SET_USED(lid);
	if (verbs_remote())
		return remote_mcast(qp, gid, false);
	return ah_mcast_change(qp, gid, false);
}
