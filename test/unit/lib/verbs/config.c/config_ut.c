/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/verbs/config.c: the embedded default, every key's
 * syntax and range, INI sections ([device], [device.NAME]), errors that
 * leave the configuration unchanged, the progress helper's progress_* keys
 * and the reasons given for bad values, and the shipped config/drnic.ini
 * (valid, documenting every key, with the embedded default's figures).
 */
#include "lib/verbs/config.c"

#include <arpa/inet.h>
#include <unistd.h>

#include "ut_common.h"

int verbs_logtype;

static void
test_defaults(void)
{
	struct drnic_config c;

	CU_ASSERT_EQUAL(drnic_config_init(NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_init(&c), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "drnic0");
	CU_ASSERT_EQUAL(c.nb_engines, 1);
	CU_ASSERT_STRING_EQUAL(c.link_driver, "loopback");
	CU_ASSERT_EQUAL(c.mtu, 1500);
	CU_ASSERT_EQUAL(c.nb_ipv4, 1);
	CU_ASSERT_EQUAL(c.nb_ipv6, 0);
	CU_ASSERT_EQUAL(c.mac[0], 0x02);
	CU_ASSERT_EQUAL(c.mac[5], 0x01);
	CU_ASSERT_EQUAL(c.socket_id, -1);
	CU_ASSERT(c.max_qp >= 1024);
	/* Dedicated on the first worker lcore when there is one. */
	CU_ASSERT(c.progress == DRNIC_PROGRESS_INLINE ||
		  (c.progress == DRNIC_PROGRESS_DEDICATED && c.engine_lcores[0] != 0));
}

static void
test_set(void)
{
	struct drnic_config c;
	char addr[64];

	drnic_config_init(&c);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress", "dedicated"), 0);
	CU_ASSERT_EQUAL(c.progress, DRNIC_PROGRESS_DEDICATED);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress", "sometimes"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "lcores", "1,3-5"), 0);
	CU_ASSERT_EQUAL(c.nb_engines, 4);
	CU_ASSERT_EQUAL(c.engine_lcores[0], 1);
	CU_ASSERT_EQUAL(c.engine_lcores[3], 5);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "lcores", "5-3"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "lcores", ""), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "lcores", "x"), -EINVAL);
	CU_ASSERT_EQUAL(c.nb_engines, 4);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "engines", "2"), 0);
	CU_ASSERT_EQUAL(c.nb_engines, 2);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "engines", "0"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "engines", "17"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "mtu", "9000"), 0);
	CU_ASSERT_EQUAL(c.mtu, 9000);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "mtu", "100"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "mtu", "-1500"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "mtu", "1500x"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "mac", "0a:0b:0c:0d:0e:0f"), 0);
	CU_ASSERT_EQUAL(c.mac[0], 0x0a);
	CU_ASSERT_EQUAL(c.mac[5], 0x0f);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "mac", "0a:0b:0c"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "mac", "100:0b:0c:0d:0e:0f"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "ipv4", "192.168.1.7, 10.1.2.3"), 0);
	CU_ASSERT_EQUAL(c.nb_ipv4, 2);
	inet_ntop(AF_INET, &c.ipv4[1], addr, sizeof(addr));
	CU_ASSERT_STRING_EQUAL(addr, "10.1.2.3");
	CU_ASSERT_EQUAL(drnic_config_set(&c, "ipv4", "10.1.2"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "ipv6", "fd00::1,fe80::2"), 0);
	CU_ASSERT_EQUAL(c.nb_ipv6, 2);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "ipv6", "fd00::1,1,2,3,4,5,6,7"), -EINVAL); /* > 8 */
	CU_ASSERT_EQUAL(drnic_config_set(&c, "link", "loopback"), 0);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "link_args", "wire=x,self=1"), 0);
	CU_ASSERT_STRING_EQUAL(c.link_args, "wire=x,self=1");
	CU_ASSERT_EQUAL(drnic_config_set(&c, "socket", "-1"), 0);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "socket", "-2"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "max_sge", "33"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "max_sge", "32"), 0);
	CU_ASSERT_EQUAL(c.max_sge, 32);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "max_qp_wr", "0x100"), 0);
	CU_ASSERT_EQUAL(c.max_qp_wr, 256);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "name", "a_name_that_is_far_too_long_for_it"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "no_such_key", "1"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(NULL, "mtu", "1500"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, NULL, "1500"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "mtu", NULL), -EINVAL);
}

/* The helper's keys: defaults, syntax, ranges, and why a value is refused. */
/* "KEY=VALUE" in one string, as --set gives it. */
static void
test_set_pair(void)
{
	struct drnic_config c;
	char longkey[80];

	drnic_config_init(&c);
	CU_ASSERT_EQUAL(drnic_config_set_pair(&c, "mtu=9000"), 0);
	CU_ASSERT_EQUAL(c.mtu, 9000);
	CU_ASSERT_EQUAL(drnic_config_set_pair(&c, "link_args=wire=x,self=1"), 0);
	CU_ASSERT_STRING_EQUAL(c.link_args, "wire=x,self=1");   /* split at the first '=' */
	CU_ASSERT_EQUAL(drnic_config_set_pair(&c, "mtu"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set_pair(&c, "nosuchkey=1"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set_pair(&c, "mtu=x"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set_pair(&c, NULL), -EINVAL);
	memset(longkey, 'k', 70);
	strcpy(longkey + 70, "=1");
	CU_ASSERT_EQUAL(drnic_config_set_pair(&c, longkey), -EINVAL);
	CU_ASSERT_EQUAL(c.mtu, 9000);
}

static void
test_progress_keys(void)
{
	/* The numbers, each at the top of its range. */
	static const struct {
		const char *key, *value;
		size_t off;
	} top[] = {
		{ "progress_spin_us", "1000000", offsetof(struct drnic_config, progress_opts.spin_us) },
		{ "progress_spin_max_us", "1000000",
		  offsetof(struct drnic_config, progress_opts.spin_max_us) },
		{ "progress_sleep_us", "1000000", offsetof(struct drnic_config, progress_opts.sleep_us) },
		{ "progress_quiet_us", "1000000", offsetof(struct drnic_config, progress_opts.quiet_us) },
		{ "progress_slice_us", "100000", offsetof(struct drnic_config, progress_opts.slice_us) },
		{ "progress_linger_us", "1000", offsetof(struct drnic_config, progress_opts.linger_us) },
	};
	struct drnic_config c, before;
	unsigned int i;
	char why[64];

	drnic_config_init(&c);
	CU_ASSERT_EQUAL(c.progress_opts.thread, -1);
	CU_ASSERT_TRUE(c.progress_opts.wait);
	CU_ASSERT_EQUAL(c.progress_opts.rt, 0);
	CU_ASSERT_EQUAL(c.progress_opts.spin_us, 2);
	CU_ASSERT_EQUAL(c.progress_opts.spin_max_us, 200);
	CU_ASSERT_EQUAL(c.progress_opts.sleep_us, 5);
	CU_ASSERT_EQUAL(c.progress_opts.quiet_us, 100);
	CU_ASSERT_EQUAL(c.progress_opts.slice_us, 100);
	CU_ASSERT_EQUAL(c.progress_opts.linger_us, 8);

	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_thread", "off"), 0);
	CU_ASSERT_EQUAL(c.progress_opts.thread, 0);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_thread", "1"), 0);
	CU_ASSERT_EQUAL(c.progress_opts.thread, 1);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_thread", "auto"), 0);
	CU_ASSERT_EQUAL(c.progress_opts.thread, -1);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_rt", "on"), 0);
	CU_ASSERT_EQUAL(c.progress_opts.rt, 1);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_rt", "0"), 0);
	CU_ASSERT_EQUAL(c.progress_opts.rt, 0);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_wait", "nap"), 0);
	CU_ASSERT_FALSE(c.progress_opts.wait);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_wait", "auto"), 0);
	CU_ASSERT_TRUE(c.progress_opts.wait);
	for (i = 0; i < RTE_DIM(top); i++) {
		unsigned int v;

		CU_ASSERT_EQUAL(drnic_config_set(&c, top[i].key, top[i].value), 0);
		memcpy(&v, (const uint8_t *)&c + top[i].off, sizeof(v));
		CU_ASSERT_EQUAL(v, strtoul(top[i].value, NULL, 0));
	}
	/* Refused, nothing changed, and the reason names what is wrong. */
	before = c;
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_thread", "maybe"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_wait", "sometimes"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_spin_max_us", "1000001"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_slice_us", "100001"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_linger_us", "1001"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_spin_us", "-1"), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_set(&c, "progress_quiet_us", "2x"), -EINVAL);
	CU_ASSERT_EQUAL(memcmp(&c, &before, sizeof(c)), 0);
	CU_ASSERT_EQUAL(drnic_config_check("progress_wait", "sometimes", why, sizeof(why)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(why, "expected auto or nap");
	CU_ASSERT_EQUAL(drnic_config_check("progress_rt", "x", why, sizeof(why)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(why, "expected auto, on or off");
	CU_ASSERT_EQUAL(drnic_config_check("progress_spin_max_us", "2000000", why, sizeof(why)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(why, "out of range 0..1000000");
	CU_ASSERT_EQUAL(drnic_config_check("progress_linger_us", "8us", why, sizeof(why)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(why, "not a number");
	CU_ASSERT_EQUAL(drnic_config_check("progress_nope", "1", why, sizeof(why)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(why, "unknown key");
	CU_ASSERT_EQUAL(drnic_config_check("mtu", "100", why, sizeof(why)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(why, "out of range 576..9216");
	CU_ASSERT_EQUAL(drnic_config_check("progress_spin_us", "3", why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(drnic_config_check("progress_spin_us", "3", NULL, 0), 0);
	CU_ASSERT_EQUAL(drnic_config_check(NULL, "3", why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(drnic_config_check("mtu", NULL, why, sizeof(why)), -EINVAL);
}

static void
ut_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void
test_load(void)
{
	char path[] = "/tmp/drnic_config_utXXXXXX";
	struct drnic_config c, before;
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	ut_write(path, "[device]\nprogress = inline\nmtu = 9000\nlink_args =\n"
		       "[device.b]\nname = bee\nipv4 = 10.9.9.9\n[other]\nmtu = 1\n");
	drnic_config_init(&c);
	CU_ASSERT_EQUAL(drnic_config_load(&c, path, NULL), 0);
	CU_ASSERT_EQUAL(c.progress, DRNIC_PROGRESS_INLINE);
	CU_ASSERT_EQUAL(c.mtu, 9000);
	CU_ASSERT_STRING_EQUAL(c.link_args, "");
	CU_ASSERT_STRING_EQUAL(c.name, "drnic0");
	CU_ASSERT_EQUAL(drnic_config_load(&c, path, "b"), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "bee");
	CU_ASSERT_EQUAL(c.nb_ipv4, 1);
	/* A bad value: -EINVAL and nothing changed. */
	ut_write(path, "[device]\nmtu = 1400\nmax_sge = 1000\n");
	before = c;
	CU_ASSERT_EQUAL(drnic_config_load(&c, path, NULL), -EINVAL);
	CU_ASSERT_EQUAL(memcmp(&c, &before, sizeof(c)), 0);
	/* An unknown key likewise. */
	ut_write(path, "[device]\nmtuu = 1400\n");
	CU_ASSERT_EQUAL(drnic_config_load(&c, path, NULL), -EINVAL);
	unlink(path);
	CU_ASSERT_EQUAL(drnic_config_load(&c, path, NULL), -ENOENT);
	CU_ASSERT_EQUAL(drnic_config_load(NULL, path, NULL), -EINVAL);
}

/* The file installed with drnic: every key in it is valid. */
static void
test_shipped_file(void)
{
	static const char suffix[] = "test/unit/lib/verbs/config.c/config_ut.c";
	char path[512];
	size_t n = strlen(__FILE__) - strlen(suffix);
	struct drnic_config c;

	snprintf(path, sizeof(path), "%.*sconfig/drnic.ini", (int)n, __FILE__);
	drnic_config_init(&c);
	CU_ASSERT_EQUAL_FATAL(drnic_config_load(&c, path, NULL), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "drnic0");
	CU_ASSERT_EQUAL(c.progress, DRNIC_PROGRESS_DEDICATED);
	CU_ASSERT_EQUAL(c.nb_engines, 1);
	CU_ASSERT_EQUAL(c.engine_lcores[0], 1);
	CU_ASSERT_STRING_EQUAL(c.link_args, "wire=lb0,self=1");
	CU_ASSERT_EQUAL(drnic_config_load(&c, path, "left"), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "left");
	CU_ASSERT_STRING_EQUAL(c.link_args, "wire=pair0");
	CU_ASSERT_EQUAL(c.mac[5], 0x0a);
}

/* config/drnic.ini documents every key of the table, and the helper's
 * figures it shows are the embedded default's. */
static void
test_shipped_file_documents(void)
{
	static const char suffix[] = "test/unit/lib/verbs/config.c/config_ut.c";
	struct drnic_config c, def;
	char path[512], text[16384], pat[64];
	size_t n = strlen(__FILE__) - strlen(suffix), len;
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%.*sconfig/drnic.ini", (int)n, __FILE__);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	CU_ASSERT_FATAL(len > 0 && len < sizeof(text) - 1);
	text[len] = '\0';
	for (i = 0; i < RTE_DIM(cfg_keys); i++) {
		bool found;

		/* As a line of its own ("key = "), or commented out ("; key = "). */
		snprintf(pat, sizeof(pat), "\n%s = ", cfg_keys[i].key);
		found = strstr(text, pat) != NULL;
		snprintf(pat, sizeof(pat), "\n; %s = ", cfg_keys[i].key);
		found = found || strstr(text, pat) != NULL;
		if (!found)
			printf("config/drnic.ini does not document '%s'\n", cfg_keys[i].key);
		CU_ASSERT_TRUE(found);
	}
	drnic_config_init(&def);
	drnic_config_init(&c);
	CU_ASSERT_EQUAL_FATAL(drnic_config_load(&c, path, NULL), 0);
	CU_ASSERT_EQUAL(memcmp(&c.progress_opts, &def.progress_opts, sizeof(def.progress_opts)), 0);
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("verbs_config", NULL, NULL);
	CU_ADD_TEST(s, test_defaults);
	CU_ADD_TEST(s, test_set);
	CU_ADD_TEST(s, test_set_pair);
	CU_ADD_TEST(s, test_load);
	CU_ADD_TEST(s, test_shipped_file);
	CU_ADD_TEST(s, test_progress_keys);
	CU_ADD_TEST(s, test_shipped_file_documents);
	return ut_run_all();
}
