/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-in libefa.so.1 for drnic's libibverbs.so.1.
 *
 * perftest is linked against libefa.so.1 (and DPDK's mlx5 drivers, loaded as EAL
 * plug-ins, import it too). The real one registers a kernel provider and imports
 * libibverbs' private ABI; this one exports the same versioned symbols and
 * does nothing: there is no EFA device here. Functions returning an object
 * return NULL, queries fail with EOPNOTSUPP, "is supported" answers false.
 */
#include <errno.h>
#include <stddef.h>

#define STUB_PTR(n) void *n(void); __attribute__((visibility("default"))) void *n(void) { errno = EOPNOTSUPP; return NULL; }
#define STUB_INT(n) int n(void); __attribute__((visibility("default"))) int n(void) { errno = EOPNOTSUPP; return EOPNOTSUPP; }
#define STUB_BOOL(n) int n(void); __attribute__((visibility("default"))) int n(void) { return 0; }
#define STUB_VOID(n) void n(void); __attribute__((visibility("default"))) void n(void) { }

STUB_PTR(efadv_cq_from_ibv_cq_ex)
STUB_PTR(efadv_create_cq)
STUB_PTR(efadv_create_driver_qp)
STUB_PTR(efadv_create_qp_ex)
STUB_INT(efadv_query_ah)
STUB_INT(efadv_query_device)
