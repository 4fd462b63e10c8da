/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device configuration: the embedded default, INI files (rte_cfgfile) and
 * key/value overrides from code. One table lists every key.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#include "verbs_objects.h"

enum cfg_kind {
	CFG_STR_NAME,
	CFG_PROGRESS,
	CFG_UINT,
	CFG_INT,
	CFG_LCORES,
	CFG_APP_LCORES,
	CFG_LINK,
	CFG_LINK_ARGS,
	CFG_MAC,
	CFG_IPV4,
	CFG_IPV6,
	CFG_TRISTATE,             /* auto | on | off (1, 0): -1, 1, 0 at off */
	CFG_WAIT,                 /* auto | nap */
};

struct cfg_key {
	const char *key;
	enum cfg_kind kind;
	size_t off;               /* CFG_UINT/CFG_INT: field offset */
	unsigned long min, max;
};

#define CFG_U(k, f, lo, hi) { k, CFG_UINT, offsetof(struct drnic_config, f), lo, hi }

static const struct cfg_key cfg_keys[] = {
	{ "name", CFG_STR_NAME, 0, 0, 0 },
	{ "progress", CFG_PROGRESS, 0, 0, 0 },
	CFG_U("engines", nb_engines, 1, DRNIC_MAX_ENGINES),
	{ "lcores", CFG_LCORES, 0, 0, 0 },
	{ "app_lcores", CFG_APP_LCORES, 0, 0, 0 },
	{ "link", CFG_LINK, 0, 0, 0 },
	{ "link_args", CFG_LINK_ARGS, 0, 0, 0 },
	{ "mac", CFG_MAC, 0, 0, 0 },
	{ "ipv4", CFG_IPV4, 0, 0, 0 },
	{ "ipv6", CFG_IPV6, 0, 0, 0 },
	CFG_U("mtu", mtu, 576, 9216),
	{ "socket", CFG_INT, offsetof(struct drnic_config, socket_id), 0, 0 },
	CFG_U("max_qp", max_qp, 1, 1u << 20),
	CFG_U("max_qp_wr", max_qp_wr, 1, VERBS_MAX_QP_WR),
	CFG_U("max_sge", max_sge, 1, VERBS_MAX_SGE),
	CFG_U("max_inline_data", max_inline_data, 0, VERBS_MAX_INLINE),
	CFG_U("max_cqe", max_cqe, 1, DRNIC_CQ_MAX_DEPTH),
	CFG_U("max_mr", max_mr, 1, 1u << 22),
	CFG_U("max_pd", max_pd, 1, 1u << 20),
	CFG_U("max_rd_atomic", max_rd_atomic, 1, VERBS_MAX_RD_ATOMIC),
	CFG_U("mbufs", nb_mbufs, 1024, 1u << 22),
	/* The progress helper (lib/progress). */
	{ "progress_thread", CFG_TRISTATE, offsetof(struct drnic_config, progress_opts.thread),
	  0, 0 },
	{ "progress_wait", CFG_WAIT, 0, 0, 0 },
	{ "progress_rt", CFG_TRISTATE, offsetof(struct drnic_config, progress_opts.rt), 0, 0 },
	CFG_U("progress_spin_us", progress_opts.spin_us, 0, 1000000),
	CFG_U("progress_spin_max_us", progress_opts.spin_max_us, 0, 1000000),
	CFG_U("progress_sleep_us", progress_opts.sleep_us, 0, 1000000),
	CFG_U("progress_quiet_us", progress_opts.quiet_us, 0, 1000000),
	CFG_U("progress_slice_us", progress_opts.slice_us, 0, 100000),
	CFG_U("progress_linger_us", progress_opts.linger_us, 0, 1000),
	{ "mr_pin", CFG_TRISTATE, offsetof(struct drnic_config, mr_pin), 0, 0 },
};

int
drnic_config_init(struct drnic_config *cfg)
{
	unsigned int lc;

	if (cfg == NULL)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->name, sizeof(cfg->name), "drnic0");
	cfg->nb_engines = 1;
	/* The first worker lcore runs the engine; without one, inline. */
	lc = rte_get_next_lcore(-1, 1, 0);
	if (lc < RTE_MAX_LCORE) {
		cfg->progress = DRNIC_PROGRESS_DEDICATED;
		cfg->engine_lcores[0] = lc;
	} else {
		cfg->progress = DRNIC_PROGRESS_INLINE;
	}
	snprintf(cfg->link_driver, sizeof(cfg->link_driver), "loopback");
	snprintf(cfg->link_args, sizeof(cfg->link_args), "wire=lb0,self=1");
	memcpy(cfg->mac, (const uint8_t[6]){ 0x02, 0, 0, 0, 0, 0x01 }, 6);
	cfg->nb_ipv4 = 1;
	inet_pton(AF_INET, "10.0.0.1", &cfg->ipv4[0]);
	cfg->mtu = 1500;
	cfg->socket_id = SOCKET_ID_ANY;
	cfg->max_qp = 16384;
	cfg->max_qp_wr = 16384;
	cfg->max_sge = 16;
	cfg->max_inline_data = 256;
	cfg->max_cqe = DRNIC_CQ_MAX_DEPTH;
	cfg->max_mr = 65536;
	cfg->max_pd = 65536;
	cfg->max_rd_atomic = VERBS_DEFAULT_RD_ATOMIC;
	cfg->nb_mbufs = 16384;
	cfg->mr_pin = -1;
	/* The helper's figures: lib/ibverbs/README.md says where they come from. */
	cfg->progress_opts = (struct drnic_progress_opts){
		.thread = -1, .wait = true, .rt = 0, .spin_us = 2, .spin_max_us = 200,
		.sleep_us = 5, .quiet_us = 100, .slice_us = 100, .linger_us = 8,
	};
	return 0;
}

static int
cfg_parse_ulong(const char *v, unsigned long *out)
{
	char *end;

	if (v == NULL || *v == '\0')
		return -EINVAL;
	errno = 0;
	*out = strtoul(v, &end, 0);
	if (errno != 0 || *end != '\0' || v[0] == '-')
		return -EINVAL;
	return 0;
}

/* "1,2,4-5" -> list of lcores. */
static int
cfg_parse_lcores(const char *v, unsigned int *list, unsigned int max, unsigned int *count)
{
	char copy[256], *save = NULL, *tok;
	unsigned int n = 0;

	if (strlen(v) >= sizeof(copy))
		return -EINVAL;
	snprintf(copy, sizeof(copy), "%s", v);
	for (tok = strtok_r(copy, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		unsigned long lo, hi;
		char *dash = strchr(tok, '-');

		if (dash != NULL) {
			*dash = '\0';
			if (cfg_parse_ulong(tok, &lo) < 0 || cfg_parse_ulong(dash + 1, &hi) < 0)
				return -EINVAL;
		} else {
			if (cfg_parse_ulong(tok, &lo) < 0)
				return -EINVAL;
			hi = lo;
		}
		if (lo > hi || hi >= RTE_MAX_LCORE)
			return -EINVAL;
		for (; lo <= hi; lo++) {
			if (n >= max)
				return -EINVAL;
			list[n++] = (unsigned int)lo;
		}
	}
	*count = n;
	return 0;
}

static int
cfg_parse_mac(const char *v, uint8_t mac[6])
{
	unsigned int b[6];
	int i;

	if (sscanf(v, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xFF)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int
cfg_parse_addrs(const char *v, int af, void *out, size_t elem, unsigned int *count,
		unsigned int room)
{
	char copy[512], *save = NULL, *tok;
	unsigned int n = 0;

	if (strlen(v) >= sizeof(copy))
		return -EINVAL;
	snprintf(copy, sizeof(copy), "%s", v);
	for (tok = strtok_r(copy, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		if (n >= room || inet_pton(af, tok, (uint8_t *)out + n * elem) != 1)
			return -EINVAL;
		n++;
	}
	*count = n;
	return 0;
}

/*
 * Set @p key to @p value. On -EINVAL, *@p why says what is wrong with it
 * ("unknown key", "out of range 0..1000", ...) for the error message.
 */
static int
cfg_set(struct drnic_config *cfg, const char *key, const char *value, char *why, size_t why_len)
{
	const struct cfg_key *k = NULL;
	unsigned long u;
	unsigned int i, n;
	size_t len;

	snprintf(why, why_len, "bad value");
	for (i = 0; i < RTE_DIM(cfg_keys); i++)
		if (strcmp(cfg_keys[i].key, key) == 0)
			k = &cfg_keys[i];
	if (k == NULL) {
		snprintf(why, why_len, "unknown key");
		return -EINVAL;
	}
	len = strlen(value);

	switch (k->kind) {
	case CFG_STR_NAME:
		if (len == 0 || len >= sizeof(cfg->name))
			return -EINVAL;
		memcpy(cfg->name, value, len + 1);
		return 0;
	case CFG_PROGRESS:
		if (strcmp(value, "dedicated") == 0)
			cfg->progress = DRNIC_PROGRESS_DEDICATED;
		else if (strcmp(value, "inline") == 0)
			cfg->progress = DRNIC_PROGRESS_INLINE;
		else
			return -EINVAL;
		return 0;
	case CFG_UINT:
		if (cfg_parse_ulong(value, &u) < 0) {
			snprintf(why, why_len, "not a number");
			return -EINVAL;
		}
		if (u < k->min || u > k->max) {
			snprintf(why, why_len, "out of range %lu..%lu", k->min, k->max);
			return -EINVAL;
		}
		{
			unsigned int v = (unsigned int)u;

			memcpy((uint8_t *)cfg + k->off, &v, sizeof(v));
		}
		return 0;
	case CFG_INT: {
		char *end;
		long l = strtol(value, &end, 0);

		if (*value == '\0' || *end != '\0' || l < -1 || l >= RTE_MAX_NUMA_NODES)
			return -EINVAL;
		{
			int v = (int)l;

			memcpy((uint8_t *)cfg + k->off, &v, sizeof(v));
		}
		return 0;
	}
	case CFG_LCORES:
		if (cfg_parse_lcores(value, cfg->engine_lcores, DRNIC_MAX_ENGINES, &n) < 0 || n == 0)
			return -EINVAL;
		cfg->nb_engines = n;
		return 0;
	case CFG_APP_LCORES:
		if (cfg_parse_lcores(value, cfg->app_lcores, DRNIC_MAX_ENGINES, &n) < 0)
			return -EINVAL;
		cfg->nb_app_lcores = n;
		return 0;
	case CFG_LINK:
		if (len == 0 || len >= sizeof(cfg->link_driver))
			return -EINVAL;
		memcpy(cfg->link_driver, value, len + 1);
		return 0;
	case CFG_LINK_ARGS:
		if (len >= sizeof(cfg->link_args))
			return -EINVAL;
		memcpy(cfg->link_args, value, len + 1);
		return 0;
	case CFG_MAC:
		return cfg_parse_mac(value, cfg->mac);
	case CFG_IPV4:
		if (cfg_parse_addrs(value, AF_INET, cfg->ipv4, sizeof(cfg->ipv4[0]), &n,
				    DRNIC_MAX_ADDRS - cfg->nb_ipv6) < 0)
			return -EINVAL;
		cfg->nb_ipv4 = n;
		return 0;
	case CFG_IPV6:
		if (cfg_parse_addrs(value, AF_INET6, cfg->ipv6, sizeof(cfg->ipv6[0]), &n,
				    DRNIC_MAX_ADDRS - cfg->nb_ipv4) < 0)
			return -EINVAL;
		cfg->nb_ipv6 = n;
		return 0;
	case CFG_TRISTATE: {
		int v;

		if (strcmp(value, "auto") == 0) {
			v = -1;
		} else if (strcmp(value, "on") == 0 || strcmp(value, "1") == 0) {
			v = 1;
		} else if (strcmp(value, "off") == 0 || strcmp(value, "0") == 0) {
			v = 0;
		} else {
			snprintf(why, why_len, "expected auto, on or off");
			return -EINVAL;
		}
		memcpy((uint8_t *)cfg + k->off, &v, sizeof(v));
		return 0;
	}
	case CFG_WAIT:
		if (strcmp(value, "auto") == 0) {
			cfg->progress_opts.wait = true;
		} else if (strcmp(value, "nap") == 0) {
			cfg->progress_opts.wait = false;
		} else {
			snprintf(why, why_len, "expected auto or nap");
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

int
drnic_config_set(struct drnic_config *cfg, const char *key, const char *value)
{
	char why[64];

	if (cfg == NULL || key == NULL || value == NULL)
		return -EINVAL;
	return cfg_set(cfg, key, value, why, sizeof(why));
}

int
drnic_config_set_pair(struct drnic_config *cfg, const char *pair)
{
	const char *eq = pair != NULL ? strchr(pair, '=') : NULL;
	char key[64];

	if (eq == NULL || (size_t)(eq - pair) >= sizeof(key))
		return -EINVAL;
	memcpy(key, pair, (size_t)(eq - pair));
	key[eq - pair] = '\0';
	return drnic_config_set(cfg, key, eq + 1);
}

int
drnic_config_check(const char *key, const char *value, char *why, size_t why_len)
{
	struct drnic_config scratch;
	char buf[64];

	if (key == NULL || value == NULL)
		return -EINVAL;
	if (why == NULL || why_len == 0) {
		why = buf;
		why_len = sizeof(buf);
	}
	drnic_config_init(&scratch);
	return cfg_set(&scratch, key, value, why, why_len);
}

static int
cfg_apply_section(struct drnic_config *cfg, struct rte_cfgfile *f, const char *path,
		  const char *section)
{
	struct rte_cfgfile_entry *e;
	int n, i, rc = 0;

	if (!rte_cfgfile_has_section(f, section))
		return 0;
	n = rte_cfgfile_section_num_entries(f, section);
	if (n <= 0)
		return 0;
	e = calloc((size_t)n, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	n = rte_cfgfile_section_entries(f, section, e, n);
	for (i = 0; i < n && rc == 0; i++) {
		char why[64];

		rc = cfg_set(cfg, e[i].name, e[i].value, why, sizeof(why));
		if (rc < 0)
			VERBS_LOG(ERR, "%s [%s]: bad key or value: %s = %s (%s)", path, section,
				  e[i].name, e[i].value, why);
	}
	free(e);
	return rc;
}

int
drnic_config_load(struct drnic_config *cfg, const char *path, const char *name)
{
	struct drnic_config tmp;
	struct rte_cfgfile *f;
	char section[64];
	int rc;

	if (cfg == NULL || path == NULL)
		return -EINVAL;
	f = rte_cfgfile_load(path, CFG_FLAG_EMPTY_VALUES);
	if (f == NULL) {
		VERBS_LOG(ERR, "cannot read configuration %s", path);
		return -ENOENT;
	}
	tmp = *cfg;
	rc = cfg_apply_section(&tmp, f, path, "device");
	if (rc == 0 && name != NULL) {
		snprintf(section, sizeof(section), "device.%s", name);
		rc = cfg_apply_section(&tmp, f, path, section);
	}
	rte_cfgfile_close(f);
	if (rc < 0)
		return rc == -ENOMEM ? rc : -EINVAL;
	*cfg = tmp;
	return 0;
}
