/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_AUTOTEST_TEL_CLIENT_H
#define DRNIC_AUTOTEST_TEL_CLIENT_H

/*
 * A client of this process's own DPDK telemetry v2 socket, as
 * dpdk-telemetry.py is: autotests read the /drnic/ commands back through it.
 */

#include <stddef.h>

/*
 * Connect to this process's telemetry socket (the runtime directory may hold
 * other processes' sockets as dpdk_telemetry.v2:N); its path goes to @p path.
 * Returns the descriptor, or -1 (none: EAL --no-telemetry, or no socket).
 */
int tel_client_connect(char *path, size_t len);

/* Send @p cmd and read its answer (printed, shortened) into @p buf.
 * Returns 0, -errno from write(), or -EIO. */
int tel_client_query(int fd, const char *cmd, char *buf, size_t len);

/* The number after "key": in @p json (first occurrence after @p from, or
 * from the start when @p from is NULL), or -1 when there is none. */
long long tel_client_num(const char *json, const char *from, const char *key);

#endif /* DRNIC_AUTOTEST_TEL_CLIENT_H */
