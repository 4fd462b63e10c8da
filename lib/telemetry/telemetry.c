/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic telemetry: /drnic/ commands over DPDK telemetry, reading the public
 * counters of registered devices, QPs and CQs.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_telemetry.h>

#include "drnic_engine.h"
#include "drnic_link.h"
#include "drnic_telemetry.h"
#include "drnic_wire.h"

RTE_LOG_REGISTER_SUFFIX(tel_logtype, telemetry, NOTICE);
#define TEL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, tel_logtype, "drnic telemetry: " fmt "\n", ##__VA_ARGS__)

struct tel_cq {
	struct drnic_cq *cq;
	char name[32];
};

static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static bool tel_registered;
static struct drnic_device *tel_devs[DRNIC_TELEMETRY_MAX_DEVICES];
static struct drnic_qp **tel_qps;      /* DRNIC_TELEMETRY_MAX_QPS slots */
static unsigned int tel_nb_qps;        /* highest used slot + 1 */
static struct tel_cq *tel_cqs;         /* DRNIC_TELEMETRY_MAX_CQS slots */
static unsigned int tel_nb_cqs;

/* ------------------------------------------------------------------------ */
/* Registry                                                                 */
/* ------------------------------------------------------------------------ */

static int
tel_alloc_tables(void)
{
	if (tel_qps == NULL)
		tel_qps = calloc(DRNIC_TELEMETRY_MAX_QPS, sizeof(*tel_qps));
	if (tel_cqs == NULL)
		tel_cqs = calloc(DRNIC_TELEMETRY_MAX_CQS, sizeof(*tel_cqs));
	return tel_qps != NULL && tel_cqs != NULL ? 0 : -ENOMEM;
}

int
drnic_telemetry_add_device(struct drnic_device *dev)
{
	unsigned int i, free_slot = RTE_DIM(tel_devs);

	if (dev == NULL)
		return -EINVAL;
	pthread_mutex_lock(&tel_lock);
	for (i = 0; i < RTE_DIM(tel_devs); i++) {
		if (tel_devs[i] == dev) {
			pthread_mutex_unlock(&tel_lock);
			return -EEXIST;
		}
		if (tel_devs[i] == NULL && free_slot == RTE_DIM(tel_devs))
			free_slot = i;
	}
	if (free_slot < RTE_DIM(tel_devs))
		tel_devs[free_slot] = dev;
	pthread_mutex_unlock(&tel_lock);
	return free_slot < RTE_DIM(tel_devs) ? 0 : -ENOSPC;
}

int
drnic_telemetry_remove_device(struct drnic_device *dev)
{
	unsigned int i;
	int rc = -ENOENT;

	pthread_mutex_lock(&tel_lock);
	for (i = 0; i < RTE_DIM(tel_devs); i++)
		if (dev != NULL && tel_devs[i] == dev) {
			tel_devs[i] = NULL;
			rc = 0;
		}
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

int
drnic_telemetry_add_qp(struct drnic_qp *qp)
{
	unsigned int i, free_slot = DRNIC_TELEMETRY_MAX_QPS;
	int rc;

	if (qp == NULL)
		return -EINVAL;
	pthread_mutex_lock(&tel_lock);
	rc = tel_alloc_tables();
	for (i = 0; rc == 0 && i < tel_nb_qps; i++) {
		if (tel_qps[i] == qp)
			rc = -EEXIST;
		else if (tel_qps[i] == NULL && free_slot == DRNIC_TELEMETRY_MAX_QPS)
			free_slot = i;
	}
	if (rc == 0 && free_slot == DRNIC_TELEMETRY_MAX_QPS) {
		if (tel_nb_qps == DRNIC_TELEMETRY_MAX_QPS)
			rc = -ENOSPC;
		else
			free_slot = tel_nb_qps++;
	}
	if (rc == 0)
		tel_qps[free_slot] = qp;
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

int
drnic_telemetry_remove_qp(struct drnic_qp *qp)
{
	unsigned int i;
	int rc = -ENOENT;

	pthread_mutex_lock(&tel_lock);
	for (i = 0; qp != NULL && i < tel_nb_qps; i++)
		if (tel_qps[i] == qp) {
			tel_qps[i] = NULL;
			rc = 0;
		}
	while (tel_nb_qps > 0 && tel_qps[tel_nb_qps - 1] == NULL)
		tel_nb_qps--;
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

int
drnic_telemetry_add_cq(struct drnic_cq *cq, const char *name)
{
	unsigned int i, free_slot = DRNIC_TELEMETRY_MAX_CQS;
	int rc;

	if (cq == NULL)
		return -EINVAL;
	pthread_mutex_lock(&tel_lock);
	rc = tel_alloc_tables();
	for (i = 0; rc == 0 && i < tel_nb_cqs; i++) {
		if (tel_cqs[i].cq == cq)
			rc = -EEXIST;
		else if (tel_cqs[i].cq == NULL && free_slot == DRNIC_TELEMETRY_MAX_CQS)
			free_slot = i;
	}
	if (rc == 0 && free_slot == DRNIC_TELEMETRY_MAX_CQS) {
		if (tel_nb_cqs == DRNIC_TELEMETRY_MAX_CQS)
			rc = -ENOSPC;
		else
			free_slot = tel_nb_cqs++;
	}
	if (rc == 0) {
		tel_cqs[free_slot].cq = cq;
		snprintf(tel_cqs[free_slot].name, sizeof(tel_cqs[0].name), "%s",
			 name != NULL ? name : "");
		rc = (int)free_slot;
	}
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

int
drnic_telemetry_remove_cq(struct drnic_cq *cq)
{
	unsigned int i;
	int rc = -ENOENT;

	pthread_mutex_lock(&tel_lock);
	for (i = 0; cq != NULL && i < tel_nb_cqs; i++)
		if (tel_cqs[i].cq == cq) {
			tel_cqs[i].cq = NULL;
			rc = 0;
		}
	while (tel_nb_cqs > 0 && tel_cqs[tel_nb_cqs - 1].cq == NULL)
		tel_nb_cqs--;
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

void
drnic_telemetry_clear(void)
{
	pthread_mutex_lock(&tel_lock);
	memset(tel_devs, 0, sizeof(tel_devs));
	if (tel_qps != NULL)
		memset(tel_qps, 0, DRNIC_TELEMETRY_MAX_QPS * sizeof(*tel_qps));
	if (tel_cqs != NULL)
		memset(tel_cqs, 0, DRNIC_TELEMETRY_MAX_CQS * sizeof(*tel_cqs));
	tel_nb_qps = tel_nb_cqs = 0;
	pthread_mutex_unlock(&tel_lock);
}

/* ------------------------------------------------------------------------ */
/* Handlers (telemetry thread)                                              */
/* ------------------------------------------------------------------------ */

/* Dictionary keys may hold only letters, digits, '_', '-' and '/'. */
static void
tel_key(char *key, size_t len, const char *fmt, const char *name, unsigned int n)
{
	char *p;

	snprintf(key, len, fmt, name, n);
	for (p = key; *p != '\0'; p++)
		if (!(((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == '-' || *p == '/'))
			*p = '_';
}

/* The registered device named @name (NULL or "" matches the first). */
static bool
tel_dev_match(struct drnic_device *dev, const char *params)
{
	return dev != NULL && (params == NULL || params[0] == '\0' ||
			       strcmp(params, drnic_device_name(dev)) == 0);
}

static int
tel_devices(const char *cmd __rte_unused, const char *params __rte_unused,
	    struct rte_tel_data *d)
{
	unsigned int i;

	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&tel_lock);
	for (i = 0; i < RTE_DIM(tel_devs); i++)
		if (tel_devs[i] != NULL)
			rte_tel_data_add_array_string(d, drnic_device_name(tel_devs[i]));
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

static void
tel_engine_dict(struct rte_tel_data *c, const struct drnic_engine_stats *s)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	unsigned int i;

	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_u64(c, "loops", s->loops);
	rte_tel_data_add_dict_u64(c, "busy_loops", s->busy_loops);
	rte_tel_data_add_dict_u64(c, "idle_loops", s->loops - s->busy_loops);
	rte_tel_data_add_dict_u64(c, "rx_packets", s->rx_packets);
	rte_tel_data_add_dict_u64(c, "tx_packets", s->tx_packets);
	rte_tel_data_add_dict_u64(c, "doorbells", s->doorbells);
	rte_tel_data_add_dict_u64(c, "wqes", s->wqes);
	rte_tel_data_add_dict_u64(c, "cqes", s->cqes);
	rte_tel_data_add_dict_u64(c, "nomem", s->nomem);
	rte_tel_data_add_dict_u64(c, "timers", s->timers);
	rte_tel_data_add_dict_u64(c, "busy_cycles", s->busy_cycles);
	rte_tel_data_add_dict_u64(c, "idle_cycles", s->idle_cycles);
	rte_tel_data_add_dict_u64(c, "busy_percent",
				  s->busy_cycles + s->idle_cycles == 0 ? 0 :
				  s->busy_cycles * 100 / (s->busy_cycles + s->idle_cycles));
	for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++) {
		snprintf(key, sizeof(key), "drop_%s", drnic_engine_drop_name(i));
		rte_tel_data_add_dict_u64(c, key, s->drops[i]);
	}
	for (i = 0; i < DRNIC_WIRE_DROP_MAX; i++) {
		snprintf(key, sizeof(key), "wire_drop_%s", drnic_wire_drop_name(i));
		rte_tel_data_add_dict_u64(c, key, s->wire_drops[i]);
	}
}

static int
tel_engines(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned int i, e;
	int rc = 0, found = 0;

	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel_lock);
	for (i = 0; i < RTE_DIM(tel_devs) && rc == 0; i++) {
		struct drnic_device_attr a;

		if (!tel_dev_match(tel_devs[i], params) || drnic_query_device(tel_devs[i], &a) != 0)
			continue;
		found++;
		for (e = 0; e < a.nb_engines; e++) {
			struct drnic_engine_stats s;
			struct rte_tel_data *c;
			char key[RTE_TEL_MAX_STRING_LEN];

			if (drnic_engine_stats_get(tel_devs[i], e, &s) != 0)
				continue;
			c = rte_tel_data_alloc();
			if (c == NULL) {
				rc = -ENOMEM;
				break;
			}
			tel_engine_dict(c, &s);
			tel_key(key, sizeof(key), "%s_engine%u", drnic_device_name(tel_devs[i]), e);
			rte_tel_data_add_dict_container(d, key, c, 0);
		}
	}
	pthread_mutex_unlock(&tel_lock);
	return rc != 0 ? rc : (found || params == NULL || params[0] == '\0') ? 0 : -EINVAL;
}

static int
tel_links(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned int i, r;
	int found = 0;

	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel_lock);
	for (i = 0; i < RTE_DIM(tel_devs); i++) {
		struct drnic_link *link;
		struct drnic_link_stats s;
		struct rte_tel_data *c;
		char key[RTE_TEL_MAX_STRING_LEN];

		if (!tel_dev_match(tel_devs[i], params))
			continue;
		link = drnic_device_link(tel_devs[i]);
		if (link == NULL || drnic_link_stats_get(link, &s) != 0)
			continue;
		c = rte_tel_data_alloc();
		if (c == NULL)
			break;
		found++;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_string(c, "name", drnic_link_name(link));
		rte_tel_data_add_dict_string(c, "driver", drnic_link_driver_name(link));
		rte_tel_data_add_dict_u64(c, "tx_packets", s.tx_packets);
		rte_tel_data_add_dict_u64(c, "tx_bytes", s.tx_bytes);
		rte_tel_data_add_dict_u64(c, "rx_packets", s.rx_packets);
		rte_tel_data_add_dict_u64(c, "rx_bytes", s.rx_bytes);
		rte_tel_data_add_dict_u64(c, "tx_busy", s.tx_busy);
		for (r = 0; r < DRNIC_LINK_DROP_MAX; r++) {
			snprintf(key, sizeof(key), "drop_%s", drnic_link_drop_name(r));
			rte_tel_data_add_dict_u64(c, key, s.drops[r]);
		}
		tel_key(key, sizeof(key), "%s", drnic_device_name(tel_devs[i]), 0);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	pthread_mutex_unlock(&tel_lock);
	return (found || params == NULL || params[0] == '\0') ? 0 : -EINVAL;
}

/* The engine's live view of a QP: PSNs, window, round trip, counters. */
static void
tel_qp_transport(struct rte_tel_data *c, const struct drnic_qp *qp)
{
	struct drnic_qp_stats st;

	if (drnic_qp_stats_get(qp, &st) != 0)
		return;
	rte_tel_data_add_dict_u64(c, "next_psn", st.next_psn);
	rte_tel_data_add_dict_u64(c, "expected_psn", st.expected_psn);
	rte_tel_data_add_dict_u64(c, "acked_psn", st.acked_psn);
	rte_tel_data_add_dict_u64(c, "cwnd", st.cwnd);
	rte_tel_data_add_dict_u64(c, "srtt_ns", st.srtt_ns);
	rte_tel_data_add_dict_u64(c, "tx_packets", st.tx_packets);
	rte_tel_data_add_dict_u64(c, "rx_packets", st.rx_packets);
	rte_tel_data_add_dict_u64(c, "wqes", st.wqes);
	rte_tel_data_add_dict_u64(c, "acks_rx", st.acks_rx);
	rte_tel_data_add_dict_u64(c, "naks_rx", st.naks_rx);
	rte_tel_data_add_dict_u64(c, "rnr_naks_rx", st.rnr_naks_rx);
	rte_tel_data_add_dict_u64(c, "naks_tx", st.naks_tx);
	rte_tel_data_add_dict_u64(c, "retransmits", st.retransmits);
	rte_tel_data_add_dict_u64(c, "timeouts", st.timeouts);
	rte_tel_data_add_dict_u64(c, "early_retransmits", st.early_retransmits);
}

static void
tel_qp_dict(struct rte_tel_data *c, struct drnic_qp *qp)
{
	struct drnic_qp_init_attr ia;
	struct drnic_qp_attr a;
	char gid[64];

	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_u64(c, "qpn", drnic_qp_num(qp));
	rte_tel_data_add_dict_string(c, "state", drnic_qp_state_str(drnic_qp_state(qp)));
	if (drnic_query_qp(qp, &a, 0, &ia) != 0)
		return;
	rte_tel_data_add_dict_u64(c, "dest_qp_num", a.dest_qp_num);
	rte_tel_data_add_dict_u64(c, "sq_psn", a.sq_psn);
	rte_tel_data_add_dict_u64(c, "rq_psn", a.rq_psn);
	rte_tel_data_add_dict_int(c, "path_mtu", 128 << a.path_mtu);
	rte_tel_data_add_dict_int(c, "timeout", a.timeout);
	rte_tel_data_add_dict_int(c, "retry_cnt", a.retry_cnt);
	rte_tel_data_add_dict_int(c, "rnr_retry", a.rnr_retry);
	rte_tel_data_add_dict_int(c, "max_rd_atomic", a.max_rd_atomic);
	rte_tel_data_add_dict_int(c, "max_dest_rd_atomic", a.max_dest_rd_atomic);
	rte_tel_data_add_dict_u64(c, "max_send_wr", a.cap.max_send_wr);
	rte_tel_data_add_dict_u64(c, "max_recv_wr", a.cap.max_recv_wr);
	rte_tel_data_add_dict_u64(c, "max_inline_data", a.cap.max_inline_data);
	snprintf(gid, sizeof(gid), "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		 "%02x%02x:%02x%02x", a.ah_attr.grh.dgid.raw[0], a.ah_attr.grh.dgid.raw[1],
		 a.ah_attr.grh.dgid.raw[2], a.ah_attr.grh.dgid.raw[3], a.ah_attr.grh.dgid.raw[4],
		 a.ah_attr.grh.dgid.raw[5], a.ah_attr.grh.dgid.raw[6], a.ah_attr.grh.dgid.raw[7],
		 a.ah_attr.grh.dgid.raw[8], a.ah_attr.grh.dgid.raw[9], a.ah_attr.grh.dgid.raw[10],
		 a.ah_attr.grh.dgid.raw[11], a.ah_attr.grh.dgid.raw[12], a.ah_attr.grh.dgid.raw[13],
		 a.ah_attr.grh.dgid.raw[14], a.ah_attr.grh.dgid.raw[15]);
	rte_tel_data_add_dict_string(c, "dgid", gid);
	tel_qp_transport(c, qp);
}

/*
 * /drnic/qps: {"count": N, "qpns": [...]}; /drnic/qps,QPN: every registered
 * QP with that number (two devices may both have it), keyed "QPN" or "QPN#k".
 */
static int
tel_qps_cmd(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned int i, n = 0;
	int rc = 0;

	pthread_mutex_lock(&tel_lock);
	if (params == NULL || params[0] == '\0') {
		struct rte_tel_data *arr = rte_tel_data_alloc();

		rte_tel_data_start_dict(d);
		if (arr != NULL)
			rte_tel_data_start_array(arr, RTE_TEL_U64_VAL);
		for (i = 0; i < tel_nb_qps; i++) {
			if (tel_qps[i] == NULL)
				continue;
			if (arr != NULL && n < RTE_TEL_MAX_ARRAY_ENTRIES)
				rte_tel_data_add_array_u64(arr, drnic_qp_num(tel_qps[i]));
			n++;
		}
		rte_tel_data_add_dict_u64(d, "count", n);
		if (arr != NULL)
			rte_tel_data_add_dict_container(d, "qpns", arr, 0);
	} else {
		char *end;
		unsigned long qpn = strtoul(params, &end, 0);

		if (*end != '\0') {
			rc = -EINVAL;
		} else {
			rte_tel_data_start_dict(d);
			for (i = 0; i < tel_nb_qps && n < RTE_TEL_MAX_DICT_ENTRIES; i++) {
				struct rte_tel_data *c;
				char key[32];

				if (tel_qps[i] == NULL || drnic_qp_num(tel_qps[i]) != qpn)
					continue;
				c = rte_tel_data_alloc();
				if (c == NULL)
					break;
				tel_qp_dict(c, tel_qps[i]);
				if (n == 0)
					snprintf(key, sizeof(key), "%lu", qpn);
				else
					snprintf(key, sizeof(key), "%lu_%u", qpn, n);
				rte_tel_data_add_dict_container(d, key, c, 0);
				n++;
			}
			if (n == 0)
				rc = -ENOENT;
		}
	}
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

static void
tel_cq_dict(struct rte_tel_data *c, const struct tel_cq *t, unsigned int id)
{
	struct drnic_cq_stats s;

	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_u64(c, "id", id);
	rte_tel_data_add_dict_string(c, "name", t->name);
	if (drnic_cq_query_stats(t->cq, &s) != 0)
		return;
	rte_tel_data_add_dict_u64(c, "depth", s.depth);
	rte_tel_data_add_dict_u64(c, "occupancy", s.occupancy);
	rte_tel_data_add_dict_u64(c, "high_water", s.high_water);
	rte_tel_data_add_dict_u64(c, "in_error", s.in_error);
	rte_tel_data_add_dict_u64(c, "completions", s.completions);
	rte_tel_data_add_dict_u64(c, "overflows", s.overflows);
	rte_tel_data_add_dict_u64(c, "events", s.events);
}

/*
 * /drnic/cqs: {"ID": {summary}, ...} for the first 255 CQs and "count";
 * /drnic/cqs,ID: that CQ's counters.
 */
static int
tel_cqs_cmd(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	unsigned int i, n = 0;
	int rc = 0;

	pthread_mutex_lock(&tel_lock);
	if (params == NULL || params[0] == '\0') {
		rte_tel_data_start_dict(d);
		for (i = 0; i < tel_nb_cqs; i++) {
			struct rte_tel_data *c;
			char key[16];

			if (tel_cqs[i].cq == NULL)
				continue;
			n++;
			if (n >= RTE_TEL_MAX_DICT_ENTRIES)
				continue;
			c = rte_tel_data_alloc();
			if (c == NULL)
				break;
			tel_cq_dict(c, &tel_cqs[i], i);
			snprintf(key, sizeof(key), "%u", i);
			rte_tel_data_add_dict_container(d, key, c, 0);
		}
		rte_tel_data_add_dict_u64(d, "count", n);
	} else {
		char *end;
		unsigned long id = strtoul(params, &end, 0);

		if (*end != '\0' || id >= tel_nb_cqs || tel_cqs[id].cq == NULL)
			rc = -EINVAL;
		else
			tel_cq_dict(d, &tel_cqs[id], (unsigned int)id);
	}
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

int
drnic_telemetry_init(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/drnic/devices", tel_devices, "drnic devices registered. No parameters" },
		{ "/drnic/engines", tel_engines,
		  "Engine counters per device and engine. Parameters: device name (optional)" },
		{ "/drnic/links", tel_links,
		  "Link counters and drops by reason per device. Parameters: device name (optional)" },
		{ "/drnic/qps", tel_qps_cmd,
		  "QP numbers; with a QPN: its state, PSNs and limits. Parameters: QPN (optional)" },
		{ "/drnic/cqs", tel_cqs_cmd,
		  "CQ depth, occupancy, high-water mark, overflows. Parameters: CQ id (optional)" },
	};
	unsigned int i;
	int rc = 0;

	pthread_mutex_lock(&tel_lock);
	if (!tel_registered) {
		for (i = 0; i < RTE_DIM(cmds) && rc == 0; i++)
			rc = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help);
		if (rc == 0)
			tel_registered = true;
		else
			TEL_LOG(ERR, "cannot register %s: %s", cmds[i - 1].cmd, strerror(-rc));
	}
	if (rc == 0)
		rc = tel_alloc_tables();
	pthread_mutex_unlock(&tel_lock);
	return rc;
}
