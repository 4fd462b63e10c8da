/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm's devices: as librdmacm, every device is opened once
 * for the process on the first call that needs one, and stays open; each
 * gets the connection manager (drnic_ibv_cm_open()). rdma_get_devices,
 * rdma_free_devices, and the default PD and XRC domain of rdma_create_qp.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

static pthread_mutex_t rcm_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rcm_device *rcm_devs;
static int rcm_nb_devs;
static bool rcm_started;
static int rcm_start_err;

static int
rcm_open_all(void)
{
	struct ibv_device **list;
	int n = 0, i;

	list = ibv_get_device_list(&n);
	if (list == NULL)
		return errno ? errno : ENODEV;
	if (n == 0) {
		ibv_free_device_list(list);
		return ENODEV;
	}
	rcm_devs = calloc((size_t)n, sizeof(*rcm_devs));
	if (rcm_devs == NULL) {
		ibv_free_device_list(list);
		return ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct rcm_device *d = &rcm_devs[rcm_nb_devs];
		struct ibv_device_attr attr;
		int rc;

		d->ctx = ibv_open_device(list[i]);
		if (d->ctx == NULL)
			continue;
		rc = drnic_ibv_cm_open(d->ctx);
		if (rc != 0) {
			fprintf(stderr, "drnic rdmacm: no connection manager on %s: %s\n",
				ibv_get_device_name(list[i]), strerror(rc));
			ibv_close_device(d->ctx);
			continue;
		}
		d->dev = drnic_ibv_context_device(d->ctx);
		memset(&attr, 0, sizeof(attr));
		if (ibv_query_device(d->ctx, &attr) == 0) {
			d->max_qp_rd_atom = attr.max_qp_rd_atom;
			d->max_qp_init_rd_atom = attr.max_qp_init_rd_atom;
		}
		rcm_nb_devs++;
	}
	ibv_free_device_list(list);
	return rcm_nb_devs > 0 ? 0 : ENODEV;
}

int
rcm_init(void)
{
	pthread_mutex_lock(&rcm_dev_lock);
	if (!rcm_started) {
		rcm_start_err = rcm_open_all();
		rcm_started = true;
	}
	pthread_mutex_unlock(&rcm_dev_lock);
	return rcm_start_err ? rcm_seterr(rcm_start_err) : 0;
}

/* DRNIC_IBV_DEBUG is set and not "0", as the drop-in libibverbs reads it. */
bool
rcm_debug(void)
{
	const char *v = getenv("DRNIC_IBV_DEBUG");

	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/*
 * At exit: give back the default PDs and close the contexts, so the
 * drop-in takes the devices out of the CM and closes them (a device the
 * program left objects on stays open: drnic_device_close refuses).
 */
__attribute__((destructor)) static void
rcm_fini(void)
{
	bool debug = rcm_debug();
	int i;

	for (i = 0; i < rcm_nb_devs; i++) {
		struct drnic_ibcm_stats st;

		/* DRNIC_IBV_DEBUG: the CM's counters, as the drop-in prints its own */
		if (debug && drnic_ibcm_stats_get(rcm_devs[i].dev, &st) == 0)
			fprintf(stderr, "drnic rdmacm: %s: MADs rx %" PRIu64 " tx %" PRIu64
				", REQ rx %" PRIu64 " tx %" PRIu64 ", retransmits %" PRIu64
				", duplicates answered %" PRIu64 ", dropped %" PRIu64
				", timeouts %" PRIu64 ", REJ no listener %" PRIu64 "\n",
				ibv_get_device_name(rcm_devs[i].ctx->device), st.rx_mads,
				st.tx_mads, st.rx_by_attr[0], st.tx_by_attr[0], st.retransmits,
				st.dup_answered, st.dropped, st.timeouts, st.rej_no_listener);
	}
	for (i = 0; i < rcm_nb_devs; i++) {
		if (rcm_devs[i].xrcd != NULL && ibv_close_xrcd(rcm_devs[i].xrcd) != 0)
			continue;
		if (rcm_devs[i].pd != NULL && ibv_dealloc_pd(rcm_devs[i].pd) != 0)
			continue;
		ibv_close_device(rcm_devs[i].ctx);
	}
	rcm_nb_devs = 0;
}

struct rcm_device *
rcm_device_of(const struct drnic_device *dev)
{
	int i;

	for (i = 0; dev != NULL && i < rcm_nb_devs; i++)
		if (rcm_devs[i].dev == dev)
			return &rcm_devs[i];
	return NULL;
}

struct rcm_device *
rcm_device_of_ctx(const struct ibv_context *ctx)
{
	int i;

	for (i = 0; ctx != NULL && i < rcm_nb_devs; i++)
		if (rcm_devs[i].ctx == ctx)
			return &rcm_devs[i];
	return NULL;
}

struct ibv_pd *
rcm_default_pd(struct ibv_context *ctx)
{
	struct rcm_device *d = rcm_device_of_ctx(ctx);
	struct ibv_pd *pd;

	if (d == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&rcm_dev_lock);
	if (d->pd == NULL)
		d->pd = ibv_alloc_pd(ctx);
	pd = d->pd;
	pthread_mutex_unlock(&rcm_dev_lock);
	return pd;
}

struct ibv_xrcd *
rcm_default_xrcd(struct ibv_context *ctx)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct rcm_device *d = rcm_device_of_ctx(ctx);
	struct ibv_xrcd *x;

	if (d == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&rcm_dev_lock);
	if (d->xrcd == NULL)
		d->xrcd = ibv_open_xrcd(ctx, &xa);
	x = d->xrcd;
	pthread_mutex_unlock(&rcm_dev_lock);
	return x;
}

/** rdma_get_devices(3): the open contexts, NULL-terminated. */
RCM_EXPORT struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int i;

	if (rcm_init() < 0)
		return NULL;
	list = calloc((size_t)rcm_nb_devs + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < rcm_nb_devs; i++)
		list[i] = rcm_devs[i].ctx;
	if (num_devices != NULL)
		*num_devices = rcm_nb_devs;
	return list;
}

/** rdma_free_devices(3): the list only; the contexts stay open. */
RCM_EXPORT void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
