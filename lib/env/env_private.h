/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ENV_PRIVATE_H
#define ENV_PRIVATE_H

#include <stddef.h>

/*
 * Connect to drnicd's control socket @p path and greet it: on success the
 * process is attached (rpc_attached()) and @p prefix holds the daemon's EAL
 * file prefix. 0 or a negative errno (-EPROTO: not a drnicd of this version).
 */
int env_rpc_connect(const char *path, char *prefix, size_t prefix_len);

/* Close the channel (drnic_env_fini(), or a failed EAL start). */
void env_rpc_close(void);

#endif /* ENV_PRIVATE_H */
