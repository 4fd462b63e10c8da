/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic's libibverbs.so.1: helpers (strings, rates, sysfs) and the verbs
 * drnic does not implement. Programs, librdmacm and the vendor providers
 * are linked with immediate binding, so every symbol of libibverbs' ABI must
 * exist with its version even when it only answers EOPNOTSUPP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibv_priv.h"

/* ------------------------------------------------------------------------ */
/* Strings and rates                                                        */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	return drnic_wc_status_str((enum drnic_wc_status)status);
}

DIBV_EXPORT const char *
ibv_event_type_str(enum ibv_event_type event)
{
	return drnic_event_type_str((enum drnic_event_type)event);
}

DIBV_EXPORT const char *
ibv_node_type_str(enum ibv_node_type node_type)
{
	switch (node_type) {
	case IBV_NODE_CA: return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH: return "InfiniBand switch";
	case IBV_NODE_ROUTER: return "InfiniBand router";
	case IBV_NODE_RNIC: return "iWARP NIC";
	case IBV_NODE_USNIC: return "usNIC";
	case IBV_NODE_USNIC_UDP: return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED: return "unspecified";
	default: return "unknown";
	}
}

DIBV_EXPORT const char *
ibv_port_state_str(enum ibv_port_state port_state)
{
	switch (port_state) {
	case IBV_PORT_NOP: return "no state change (NOP)";
	case IBV_PORT_DOWN: return "down";
	case IBV_PORT_INIT: return "init";
	case IBV_PORT_ARMED: return "armed";
	case IBV_PORT_ACTIVE: return "active";
	case IBV_PORT_ACTIVE_DEFER: return "active defer";
	default: return "unknown";
	}
}

/* enum ibv_rate -> Gb/s x 10 (2.5 Gb/s is 25). */
static const struct {
	enum ibv_rate rate;
	int mbps;
} dibv_rates[] = {
	{ IBV_RATE_2_5_GBPS, 2500 }, { IBV_RATE_5_GBPS, 5000 }, { IBV_RATE_10_GBPS, 10000 },
	{ IBV_RATE_20_GBPS, 20000 }, { IBV_RATE_30_GBPS, 30000 }, { IBV_RATE_40_GBPS, 40000 },
	{ IBV_RATE_60_GBPS, 60000 }, { IBV_RATE_80_GBPS, 80000 }, { IBV_RATE_120_GBPS, 120000 },
	{ IBV_RATE_14_GBPS, 14062 }, { IBV_RATE_56_GBPS, 56250 }, { IBV_RATE_112_GBPS, 112500 },
	{ IBV_RATE_168_GBPS, 168750 }, { IBV_RATE_25_GBPS, 25781 }, { IBV_RATE_100_GBPS, 103125 },
	{ IBV_RATE_200_GBPS, 206250 }, { IBV_RATE_300_GBPS, 309375 }, { IBV_RATE_28_GBPS, 28125 },
	{ IBV_RATE_50_GBPS, 53125 }, { IBV_RATE_400_GBPS, 425000 }, { IBV_RATE_600_GBPS, 637500 },
};

DIBV_EXPORT int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < sizeof(dibv_rates) / sizeof(dibv_rates[0]); i++)
		if (dibv_rates[i].rate == rate)
			return dibv_rates[i].mbps;
	return -1;
}

DIBV_EXPORT enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < sizeof(dibv_rates) / sizeof(dibv_rates[0]); i++)
		if (dibv_rates[i].mbps == mbps)
			return dibv_rates[i].rate;
	return IBV_RATE_MAX;
}

DIBV_EXPORT int
ibv_rate_to_mult(enum ibv_rate rate)
{
	int m = ibv_rate_to_mbps(rate);

	return m > 0 && m % 2500 == 0 ? m / 2500 : -1;
}

DIBV_EXPORT enum ibv_rate
mult_to_ibv_rate(int mult)
{
	return mult > 0 ? mbps_to_ibv_rate(mult * 2500) : IBV_RATE_MAX;
}

/* ------------------------------------------------------------------------ */
/* sysfs and fork helpers                                                   */
/* ------------------------------------------------------------------------ */

const char *ibv_get_sysfs_path(void);
DIBV_EXPORT const char *
ibv_get_sysfs_path(void)
{
	const char *env = getenv("SYSFS_PATH");

	return env != NULL ? env : "/sys";
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
DIBV_EXPORT int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	if (dir == NULL || file == NULL || buf == NULL || size == 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n <= 0)
		return -1;
	if ((size_t)n == size)
		n--;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return (int)n;
}

DIBV_EXPORT int
ibv_fork_init(void)
{
	return 0;
}

DIBV_EXPORT enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size);
DIBV_EXPORT int
ibv_dontfork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size);
DIBV_EXPORT int
ibv_dofork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Not implemented by drnic                                                 */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
			    uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	(void)context, (void)attr, (void)eth_mac, (void)vid;
	return EOPNOTSUPP;
}

DIBV_EXPORT struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
		  int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

DIBV_EXPORT struct ibv_context *
ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

DIBV_EXPORT struct ibv_pd *
ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context, (void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

DIBV_EXPORT void
ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

DIBV_EXPORT struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd, (void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

DIBV_EXPORT void
ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

DIBV_EXPORT struct ibv_dm *
ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context, (void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

DIBV_EXPORT void
ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* ECE: no options to negotiate; accepted as "nothing". */
DIBV_EXPORT int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

DIBV_EXPORT int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* Kernel ABI copies (used by librdmacm with the kernel's CM): no kernel here. */
void ibv_copy_qp_attr_from_kern(void *dst, const void *src);
DIBV_EXPORT void
ibv_copy_qp_attr_from_kern(void *dst, const void *src)
{
	(void)dst, (void)src;
}

void ibv_copy_ah_attr_from_kern(void *dst, const void *src);
DIBV_EXPORT void
ibv_copy_ah_attr_from_kern(void *dst, const void *src)
{
	(void)dst, (void)src;
}

void ibv_copy_path_rec_from_kern(void *dst, const void *src);
DIBV_EXPORT void
ibv_copy_path_rec_from_kern(void *dst, const void *src)
{
	(void)dst, (void)src;
}

void ibv_copy_path_rec_to_kern(void *dst, const void *src);
DIBV_EXPORT void
ibv_copy_path_rec_to_kern(void *dst, const void *src)
{
	(void)dst, (void)src;
}

/* ------------------------------------------------------------------------ */
/* IBVERBS_PRIVATE_34: the provider interface. drnic is the only provider;   */
/* system providers that get loaded anyway register into nothing.           */
/* ------------------------------------------------------------------------ */

/* A data object in rdma-core (bool). */
extern DIBV_EXPORT _Bool verbs_allow_disassociate_destroy;
_Bool verbs_allow_disassociate_destroy;

void verbs_register_driver_34(const void *ops);
DIBV_EXPORT void
verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

void __verbs_log(void *ctx, const char *fmt, ...);
DIBV_EXPORT void
__verbs_log(void *ctx, const char *fmt, ...)
{
	(void)ctx, (void)fmt;
}

void *_verbs_init_and_alloc_context(void *device, int cmd_fd, size_t alloc_size,
				    void *context_offset, uint32_t driver_id);
DIBV_EXPORT void *
_verbs_init_and_alloc_context(void *device, int cmd_fd, size_t alloc_size, void *context_offset,
			      uint32_t driver_id)
{
	(void)device, (void)cmd_fd, (void)alloc_size, (void)context_offset, (void)driver_id;
	errno = EOPNOTSUPP;
	return NULL;
}

/* The rest: every ibv_cmd_* and helper fails with EOPNOTSUPP. */
#define DIBV_PRIV_STUB(name)                     \
	int name(void);                          \
	DIBV_EXPORT int name(void)               \
	{                                        \
		errno = EOPNOTSUPP;              \
		return EOPNOTSUPP;               \
	}

DIBV_PRIV_STUB(__ioctl_final_num_attrs)
DIBV_PRIV_STUB(execute_ioctl)
DIBV_PRIV_STUB(ibv_cmd_advise_mr)
DIBV_PRIV_STUB(ibv_cmd_alloc_dm)
DIBV_PRIV_STUB(ibv_cmd_alloc_mw)
DIBV_PRIV_STUB(ibv_cmd_alloc_pd)
DIBV_PRIV_STUB(ibv_cmd_attach_mcast)
DIBV_PRIV_STUB(ibv_cmd_close_xrcd)
DIBV_PRIV_STUB(ibv_cmd_create_ah)
DIBV_PRIV_STUB(ibv_cmd_create_counters)
DIBV_PRIV_STUB(ibv_cmd_create_cq)
DIBV_PRIV_STUB(ibv_cmd_create_cq_ex)
DIBV_PRIV_STUB(ibv_cmd_create_flow)
DIBV_PRIV_STUB(ibv_cmd_create_flow_action_esp)
DIBV_PRIV_STUB(ibv_cmd_create_qp)
DIBV_PRIV_STUB(ibv_cmd_create_qp_ex)
DIBV_PRIV_STUB(ibv_cmd_create_qp_ex2)
DIBV_PRIV_STUB(ibv_cmd_create_rwq_ind_table)
DIBV_PRIV_STUB(ibv_cmd_create_srq)
DIBV_PRIV_STUB(ibv_cmd_create_srq_ex)
DIBV_PRIV_STUB(ibv_cmd_create_wq)
DIBV_PRIV_STUB(ibv_cmd_dealloc_mw)
DIBV_PRIV_STUB(ibv_cmd_dealloc_pd)
DIBV_PRIV_STUB(ibv_cmd_dereg_mr)
DIBV_PRIV_STUB(ibv_cmd_destroy_ah)
DIBV_PRIV_STUB(ibv_cmd_destroy_counters)
DIBV_PRIV_STUB(ibv_cmd_destroy_cq)
DIBV_PRIV_STUB(ibv_cmd_destroy_flow)
DIBV_PRIV_STUB(ibv_cmd_destroy_flow_action)
DIBV_PRIV_STUB(ibv_cmd_destroy_qp)
DIBV_PRIV_STUB(ibv_cmd_destroy_rwq_ind_table)
DIBV_PRIV_STUB(ibv_cmd_destroy_srq)
DIBV_PRIV_STUB(ibv_cmd_destroy_wq)
DIBV_PRIV_STUB(ibv_cmd_detach_mcast)
DIBV_PRIV_STUB(ibv_cmd_free_dm)
DIBV_PRIV_STUB(ibv_cmd_get_context)
DIBV_PRIV_STUB(ibv_cmd_modify_cq)
DIBV_PRIV_STUB(ibv_cmd_modify_flow_action_esp)
DIBV_PRIV_STUB(ibv_cmd_modify_qp)
DIBV_PRIV_STUB(ibv_cmd_modify_qp_ex)
DIBV_PRIV_STUB(ibv_cmd_modify_srq)
DIBV_PRIV_STUB(ibv_cmd_modify_wq)
DIBV_PRIV_STUB(ibv_cmd_open_qp)
DIBV_PRIV_STUB(ibv_cmd_open_xrcd)
DIBV_PRIV_STUB(ibv_cmd_poll_cq)
DIBV_PRIV_STUB(ibv_cmd_post_recv)
DIBV_PRIV_STUB(ibv_cmd_post_send)
DIBV_PRIV_STUB(ibv_cmd_post_srq_recv)
DIBV_PRIV_STUB(ibv_cmd_query_context)
DIBV_PRIV_STUB(ibv_cmd_query_device_any)
DIBV_PRIV_STUB(ibv_cmd_query_mr)
DIBV_PRIV_STUB(ibv_cmd_query_port)
DIBV_PRIV_STUB(ibv_cmd_query_qp)
DIBV_PRIV_STUB(ibv_cmd_query_srq)
DIBV_PRIV_STUB(ibv_cmd_read_counters)
DIBV_PRIV_STUB(ibv_cmd_reg_dm_mr)
DIBV_PRIV_STUB(ibv_cmd_reg_dmabuf_mr)
DIBV_PRIV_STUB(ibv_cmd_reg_mr)
DIBV_PRIV_STUB(ibv_cmd_req_notify_cq)
DIBV_PRIV_STUB(ibv_cmd_rereg_mr)
DIBV_PRIV_STUB(ibv_cmd_resize_cq)
DIBV_PRIV_STUB(ibv_read_ibdev_sysfs_file)
DIBV_PRIV_STUB(verbs_init_cq)
DIBV_PRIV_STUB(verbs_open_device)
DIBV_PRIV_STUB(verbs_set_ops)
DIBV_PRIV_STUB(verbs_uninit_context)
