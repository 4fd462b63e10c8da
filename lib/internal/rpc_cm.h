/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_RPC_CM_H
#define DRNIC_RPC_CM_H

/*
 * The RPC_CM_* requests' structures (rpc.h), shared by lib/ibcm's client
 * half (ibcm_remote.c) and drnicd (private to drnic; not installed).
 */

#include <stdint.h>
#include <sys/socket.h>

#include "drnic_ibcm.h"

/* RPC_CM_ID_QUERY's reply: what the id's getters return. */
struct rpc_cm_id_info {
	struct sockaddr_storage src, dst;
	struct drnic_ibcm_route route;
	uint64_t dev;              /* the device it is bound to, or 0 */
};

/* RPC_CM_CONNECT's and RPC_CM_ACCEPT's parameters: private_data is not
 * followed, its bytes are in pdata. */
struct rpc_cm_conn {
	struct drnic_ibcm_conn_param param;
	uint8_t pdata[DRNIC_IBCM_PDATA_MAX];
};

#endif /* DRNIC_RPC_CM_H */
