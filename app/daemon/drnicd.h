/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNICD_H
#define DRNICD_H

/*
 * drnicd: the daemon that owns the emulated devices and serves them to every
 * process on the host (DESIGN.md, "The shared NIC"). main.c starts the EAL
 * as a primary that secondaries may join, opens the devices (their engines
 * run on their lcores), and runs the control loop; serve.c answers the
 * requests of lib/internal/rpc.h and owns the attached processes' objects.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "drnic_verbs.h"
#include "rpc.h"

#define DRNICD_MAX_DEVICES 8

/* What one attached process (one connection) owns. */
enum dobj_kind {
	DOBJ_DEV = 1,    /* an open of a device (RPC_DEV_GET) */
	DOBJ_PD,
	DOBJ_MEM,        /* a buffer from RPC_MEM_ALLOC */
	DOBJ_MR,
	DOBJ_CQ,
	DOBJ_QP,
	DOBJ_ASYNC,      /* an async event queue (its eventfd went to the process) */
	DOBJ_CHANNEL,    /* a completion channel (likewise) */
	DOBJ_SRQ,
	DOBJ_AH,
	DOBJ_MW,
	DOBJ_XRCD,       /* an open of an XRC domain (shared by file with others) */
	DOBJ_CM_ID,      /* a connection manager id (len: the QP attached to it) */
	DOBJ_CM_CHANNEL, /* a CM event channel (its eventfd went to the process) */
	DOBJ_DOORBELL,   /* its doorbell ring on one engine (struct ddoorbell) */
	DOBJ_KIND_MAX,
};

/* DOBJ_DOORBELL: the process's posts on @p dev's engine @p idx ring
 * @p ring (verbs_db_ring_new()), made at its first QP there. */
struct ddoorbell {
	struct drnic_device *dev;
	unsigned int idx;
	struct rte_ring *ring;
};

struct dobj {
	uintptr_t p;
	uint64_t len;            /* DOBJ_MEM: its size */
	uint8_t kind;
};

struct dclient {
	int fd;
	pid_t pid;
	char comm[32];
	bool attached;           /* greeted (RPC_HELLO): a program, not drnic-ctl */
	uint64_t requests;
	struct drnic_async_queue *async;   /* its QPs' and CQs' events by default */
	struct dobj *objs;
	unsigned int nb_objs, cap_objs;
	struct dclient *next;
};

struct drnicd {
	/* The control loop holds it while it changes what follows; the
	 * telemetry thread while it reads. */
	pthread_mutex_t lock;
	const char *socket_path;
	const char *file_prefix;
	struct drnic_device *dev[DRNICD_MAX_DEVICES];
	unsigned int nb_dev;
	struct dclient *clients;
	/* Counters (drnic-ctl list shows them). */
	uint64_t attached_total;
	uint64_t detached_clean;     /* went with nothing left to free */
	uint64_t reclaimed_clients;  /* went owning objects: the daemon freed them */
	uint64_t reclaimed[DOBJ_KIND_MAX];
	uint64_t refused;            /* requests answered with an error */
};

/* serve.c */
struct dclient *drnicd_client_new(struct drnicd *d, int fd);
/* Answer one request of @p c; false when the connection is to be closed. */
bool drnicd_client_serve(struct drnicd *d, struct dclient *c);
/* Free everything @p c owns, close its connection and forget it. */
void drnicd_client_drop(struct drnicd *d, struct dclient *c);
/* The connection's objects (serve.c): the index of @p p as @p kind, or -1;
 * add one (0 or -ENOMEM); forget the one at @p idx. */
int dclient_find(const struct dclient *c, uint64_t p, enum dobj_kind kind);
int dclient_add(struct dclient *c, void *p, enum dobj_kind kind, uint64_t len);
void dclient_del(struct dclient *c, int idx);
/* A constructor's result @p p: the process's (m->obj[0]), or undone. */
int dclient_adopt(struct dclient *c, void *p, enum dobj_kind kind, uint64_t len,
		  struct rpc_msg *m);
/* A destructor of m->obj[0] as @p kind. */
int dclient_destroy(struct dclient *c, struct rpc_msg *m, enum dobj_kind kind);

/* serve_cm.c: the RPC_CM_* requests (*fd as drnicd_client_serve's), and
 * freeing a CM object the process left. */
int drnicd_serve_cm(struct dclient *c, struct rpc_msg *m, int *fd);
int drnicd_cm_free(const struct dobj *o);

/* "qp", "mr", ... */
const char *drnicd_obj_name(unsigned int kind);

/* telemetry.c: /drnicd/processes and /drnicd/counters. */
void drnicd_telemetry_register(struct drnicd *d);

#endif /* DRNICD_H */
