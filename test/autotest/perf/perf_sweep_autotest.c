/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A short drnic-perf sweep (suite 'perf'): floors, write_lat and write_bw at
 * powers of two up to 64 KiB, a QP scale sweep to 4096 QPs, and the
 * side-by-side table. Prints only: nothing is asserted about time.
 */
#include <stdio.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "../../../app/perf/perf_report.h"
#include "../../../app/perf/perf_suite.h"
#include "test.h"

static int
test_perf_sweep(void)
{
	static const unsigned int counts[] = { 1, 16, 256, 4096 };
	static const unsigned int cqs[] = { 256 };
	struct perf_opts o = {
		.tx_depth = 128, .rx_depth = 512, .inline_size = -1, .mtu = 4096, .nb_qps = 1,
		.engine_lcore = -1, .port = 18515, .timeout_s = 30, .out = stdout,
	};
	struct perf_opts so;
	int rc;

	if (rte_get_next_lcore(-1, 1, 0) >= RTE_MAX_LCORE)
		TEST_SKIP("needs a worker lcore for the engine and the floors' peer");
	rc = perf_suite_sweep(&o, 65536, 1000, 2000);
	TEST_ASSERT_SUCCESS(rc, "sweep");
	so = o;
	so.tx_depth = 32;
	so.post_list = 16;
	so.cq_mod = 32;
	so.qp_timeout = 18;
	rc = perf_suite_scale(&so, counts, RTE_DIM(counts), cqs, RTE_DIM(cqs), 200000, 16384);
	TEST_ASSERT_SUCCESS(rc, "scale");
	perf_rep_print_compare(stdout);
	rc = perf_rep_write("perf-autotest-results", stdout);
	TEST_ASSERT_SUCCESS(rc, "results files");
	return TEST_SUCCESS;
}

DRNIC_TEST_REGISTER(perf_sweep_autotest, DRNIC_TEST_PERF, test_perf_sweep);
