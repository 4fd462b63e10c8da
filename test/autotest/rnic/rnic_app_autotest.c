/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application lcores: drnic_app_launch() runs work on the configured
 * application lcore; here that work drives an inline-progress pair (its own
 * CQs) and moves data, while the main lcore waits in drnic_app_wait().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>

#include "test.h"
#include "rnic_fixture.h"

struct app_job {
	struct rnic_pair *p;
	unsigned int lcore;
};

static int
app_work(void *arg)
{
	struct app_job *job = arg;
	struct rnic_pair *p = job->p;
	struct drnic_sge ss = { (uintptr_t)p->a.buf, 5000, drnic_mr_lkey(p->a.mr) };
	struct drnic_sge rs = { (uintptr_t)p->b.buf, 5000, drnic_mr_lkey(p->b.mr) };
	struct drnic_send_wr sw = { .wr_id = 1, .sg_list = &ss, .num_sge = 1,
				    .opcode = DRNIC_WR_SEND, .send_flags = DRNIC_SEND_SIGNALED }, *bad;
	struct drnic_recv_wr rw = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct drnic_wc wc;

	job->lcore = rte_lcore_id();
	rnic_fill(p->a.buf, 5000, 77);
	if (drnic_post_recv(p->b.qp, &rw, &rbad) != 0 || drnic_post_send(p->a.qp, &sw, &bad) != 0)
		return -1;
	if (rnic_poll(&p->a, &wc, 1) != 1 || wc.status != DRNIC_WC_SUCCESS)
		return -2;
	if (rnic_poll(&p->b, &wc, 1) != 1 || wc.status != DRNIC_WC_SUCCESS || wc.byte_len != 5000)
		return -3;
	return memcmp(p->a.buf, p->b.buf, 5000) == 0 ? 42 : -4;
}

static int
rnic_app(void)
{
	struct rnic_pair_opts o = { .mode = DRNIC_PROGRESS_INLINE };
	struct drnic_config cfg;
	struct drnic_device *d;
	struct rnic_pair p;
	struct app_job job = { .p = &p, .lcore = RTE_MAX_LCORE };
	unsigned int lc = rte_get_next_lcore(-1, 1, 0);
	char v[16];
	int rc;

	if (lc >= RTE_MAX_LCORE)
		TEST_SKIP("needs a worker lcore");
	if (rnic_pair_open(&p, &o) < 0)
		return TEST_FAILED;
	/* The pair's devices name no application lcore. */
	TEST_ASSERT_EQUAL(drnic_app_launch(p.a.dev, 0, app_work, &job), -EINVAL,
			  "launch without app lcores");
	/* A device whose configuration names lcore lc as application lcore. */
	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "rnic_app");
	drnic_config_set(&cfg, "progress", "inline");
	drnic_config_set(&cfg, "link_args", "wire=rnic_app_w,self=1");
	snprintf(v, sizeof(v), "%u", lc);
	TEST_ASSERT_SUCCESS(drnic_config_set(&cfg, "app_lcores", v), "app_lcores");
	d = drnic_device_open(&cfg);
	TEST_ASSERT(d != NULL, "device with an app lcore");
	TEST_ASSERT_SUCCESS(drnic_app_launch(d, 0, app_work, &job), "launch");
	rc = drnic_app_wait(d, 0);
	TEST_ASSERT_EQUAL(drnic_app_launch(d, 1, app_work, &job), -EINVAL, "index 1");
	TEST_ASSERT_SUCCESS(drnic_device_close(d), "close");
	rnic_pair_close(&p);
	TEST_ASSERT_EQUAL(rc, 42, "work on the app lcore moved the data");
	TEST_ASSERT_EQUAL(job.lcore, lc, "ran on the application lcore");
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(rnic_app_lcore_autotest, DRNIC_TEST_FAST, rnic_app);
