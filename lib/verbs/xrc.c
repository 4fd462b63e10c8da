/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC domains (ibv_open_xrcd(3)) and the opening of XRC target QPs by
 * number (ibv_open_qp(3)). XRC SRQs are srq.c's, XRC QPs qp.c's; the
 * engine delivers an XRC message to the SRQ its XRCETH names when that SRQ
 * is in the target QP's domain.
 *
 * A domain opened for a file is shared by every open of that file's inode
 * on the device, within this process: drnic has no daemon yet that would
 * share it between processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "handle.h"
#include "verbs_objects.h"
#include "verbs_remote.h"

/* The domain of file (@p key_dev, @p key_ino) on @p dev, or NULL. Under lock. */
static struct drnic_xrcd *
xrcd_find(struct drnic_device *dev, uint64_t key_dev, uint64_t key_ino)
{
	struct drnic_xrcd *x;

	for (x = dev->xrcds; x != NULL; x = x->next)
		if (x->keyed && x->key_dev == key_dev && x->key_ino == key_ino)
			return x;
	return NULL;
}

static unsigned int
xrcd_count(const struct drnic_device *dev)
{
	const struct drnic_xrcd *x;
	unsigned int n = 0;

	for (x = dev->xrcds; x != NULL; x = x->next)
		n++;
	return n;
}

struct drnic_xrcd *
drnic_open_xrcd(struct drnic_device *dev, int fd, int oflags)
{
	struct drnic_xrcd *x;
	struct stat st;
	int rc;

	if (verbs_remote())
		return remote_open_xrcd(dev, fd, oflags);
	if (dev == NULL || (oflags & ~(O_CREAT | O_EXCL)) != 0 ||
	    (fd == -1 && !(oflags & O_CREAT))) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (fd != -1 && fstat(fd, &st) != 0) {
		rte_errno = EBADF;
		return NULL;
	}
	pthread_mutex_lock(&dev->lock);
	if (fd != -1) {
		x = xrcd_find(dev, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
		if (x != NULL) {
			if ((oflags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
				rc = -EEXIST;
				goto fail;
			}
			x->opens++;
			pthread_mutex_unlock(&dev->lock);
			return x;
		}
		if (!(oflags & O_CREAT)) {
			rc = -ENOENT;
			goto fail;
		}
	}
	if (xrcd_count(dev) >= dev->cfg.max_pd) {
		rc = -ENOMEM;
		goto fail;
	}
	x = rte_zmalloc("drnic_xrcd", sizeof(*x), 0);
	if (x == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	x->dev = dev;
	x->opens = 1;
	if (fd != -1) {
		x->keyed = true;
		x->key_dev = (uint64_t)st.st_dev;
		x->key_ino = (uint64_t)st.st_ino;
	}
	rc = handle_add(x, HANDLE_XRCD);
	if (rc < 0) {
		rte_free(x);
		goto fail;
	}
	x->next = dev->xrcds;
	dev->xrcds = x;
	pthread_mutex_unlock(&dev->lock);
	VERBS_DEV_LOG(DEBUG, dev, "xrcd %p opened%s", (void *)x, x->keyed ? " for a file" : "");
	return x;

fail:
	pthread_mutex_unlock(&dev->lock);
	rte_errno = -rc;
	return NULL;
}

int
drnic_close_xrcd(struct drnic_xrcd *x)
{
	struct drnic_device *dev;
	struct drnic_xrcd **pp;

	if (verbs_remote())
		return remote_close_xrcd(x);
	if (!handle_live(x, HANDLE_XRCD))
		return -EINVAL;
	dev = x->dev;
	pthread_mutex_lock(&dev->lock);
	/* Checked again under the lock: two closes of the last open race. */
	if (!handle_live(x, HANDLE_XRCD)) {
		pthread_mutex_unlock(&dev->lock);
		return -EINVAL;
	}
	if (x->opens > 1) {
		x->opens--;
		pthread_mutex_unlock(&dev->lock);
		return 0;
	}
	if (x->users != 0) {
		pthread_mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	(void)handle_take(x, HANDLE_XRCD);
	for (pp = &dev->xrcds; *pp != NULL; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	pthread_mutex_unlock(&dev->lock);
	VERBS_DEV_LOG(DEBUG, dev, "xrcd %p closed", (void *)x);
	rte_free(x);
	return 0;
}

struct drnic_qp *
drnic_open_qp(struct drnic_xrcd *x, uint32_t qp_num)
{
	struct drnic_device *dev;
	struct drnic_qp *qp;

	if (verbs_remote())
		return remote_open_qp(x, qp_num);
	if (!handle_live(x, HANDLE_XRCD)) {
		rte_errno = EINVAL;
		return NULL;
	}
	dev = x->dev;
	pthread_mutex_lock(&dev->lock);
	qp = qp_num <= 0xFFFFFFu ? verbs_qp_lookup(dev, qp_num) : NULL;
	if (qp == NULL || qp->type != DRNIC_QPT_XRC_RECV || qp->xrcd != x) {
		pthread_mutex_unlock(&dev->lock);
		rte_errno = ENOENT;
		return NULL;
	}
	qp->opens++;
	pthread_mutex_unlock(&dev->lock);
	return qp;
}
