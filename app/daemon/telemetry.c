/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnicd's DPDK telemetry commands (dpdk-telemetry.py on the daemon's file
 * prefix), beside lib/telemetry's /drnic/ ones for its devices:
 *   /drnicd/processes   attached processes: pid -> name, requests, objects
 *   /drnicd/counters    processes attached, detached, reclaimed; objects
 *                       reclaimed by kind; requests refused
 * They run on the telemetry thread: they read under the daemon's lock,
 * which the control loop holds while it changes its tables.
 */
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "drnicd.h"

static struct drnicd *tel_d;

static int
tel_processes(const char *cmd, const char *params, struct rte_tel_data *out)
{
	const struct dclient *c;
	unsigned int i, k;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(out);
	pthread_mutex_lock(&tel_d->lock);
	for (c = tel_d->clients; c != NULL; c = c->next) {
		struct rte_tel_data *p;
		char pid[16];

		if (!c->attached || (p = rte_tel_data_alloc()) == NULL)
			continue;
		rte_tel_data_start_dict(p);
		rte_tel_data_add_dict_string(p, "name", c->comm);
		rte_tel_data_add_dict_u64(p, "requests", c->requests);
		for (k = 1; k < DOBJ_KIND_MAX; k++) {
			uint64_t n = 0;

			for (i = 0; i < c->nb_objs; i++)
				n += c->objs[i].kind == k;
			rte_tel_data_add_dict_u64(p, drnicd_obj_name(k), n);
		}
		snprintf(pid, sizeof(pid), "%d", (int)c->pid);
		if (rte_tel_data_add_dict_container(out, pid, p, 0) < 0)
			rte_tel_data_free(p);
	}
	pthread_mutex_unlock(&tel_d->lock);
	return 0;
}

static int
tel_counters(const char *cmd, const char *params, struct rte_tel_data *out)
{
	char name[48];
	unsigned int k;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(out);
	pthread_mutex_lock(&tel_d->lock);
	rte_tel_data_add_dict_u64(out, "attached", tel_d->attached_total);
	rte_tel_data_add_dict_u64(out, "detached_clean", tel_d->detached_clean);
	rte_tel_data_add_dict_u64(out, "reclaimed_processes", tel_d->reclaimed_clients);
	rte_tel_data_add_dict_u64(out, "refused_requests", tel_d->refused);
	for (k = 1; k < DOBJ_KIND_MAX; k++) {
		if (k == DOBJ_DEV || k == DOBJ_DOORBELL)
			continue;
		snprintf(name, sizeof(name), "reclaimed_%s", drnicd_obj_name(k));
		for (char *s = name; *s != '\0'; s++)
			if (*s == ' ')
				*s = '_';
		rte_tel_data_add_dict_u64(out, name, tel_d->reclaimed[k]);
	}
	pthread_mutex_unlock(&tel_d->lock);
	return 0;
}

void
drnicd_telemetry_register(struct drnicd *d)
{
	tel_d = d;
	(void)rte_telemetry_register_cmd("/drnicd/processes", tel_processes,
		"Processes attached to drnicd: pid -> name, requests, objects by kind");
	(void)rte_telemetry_register_cmd("/drnicd/counters", tel_counters,
		"drnicd's counters: processes attached, detached, reclaimed; objects reclaimed");
}
