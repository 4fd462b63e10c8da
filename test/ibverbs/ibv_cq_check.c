/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQ sizes through drnic's libibverbs.so.1, as a verbs program sees them
 * (run by devinfo.sh on the default loopback device): a CQ of cqe entries
 * gets the next power of two above cqe, as ConnectX's provider gives, and
 * ibv_cq.cqe says so; resize_cq rounds the same way; more than max_cqe is
 * EINVAL. Exit 0 when every check holds, 1 otherwise (each failure named).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "ibv_check.h"

int
main(void)
{
	static const struct { int ask, get; } sizes[] = {
		{ 1, 2 }, { 2, 4 }, { 3, 4 }, { 100, 128 }, { 127, 128 }, { 128, 256 },
	};
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_cq *cq;
	unsigned int i;
	int n;

	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1) {
		printf("FAIL: no device\n");
		return 1;
	}
	ctx = ibv_open_device(list[0]);
	if (ctx == NULL || ibv_query_device(ctx, &da) != 0) {
		printf("FAIL: open/query %s: %s\n", ibv_get_device_name(list[0]), strerror(errno));
		return 1;
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cq = ibv_create_cq(ctx, sizes[i].ask, NULL, NULL, 0);
		CHECK(cq != NULL && cq->cqe == sizes[i].get, "create_cq(%d): cqe %d (want %d)",
		      sizes[i].ask, cq != NULL ? cq->cqe : -1, sizes[i].get);
		if (cq != NULL)
			ibv_destroy_cq(cq);
	}
	cq = ibv_create_cq(ctx, da.max_cqe, NULL, NULL, 0);
	CHECK(cq != NULL && cq->cqe == da.max_cqe, "create_cq(max_cqe %d): cqe %d", da.max_cqe,
	      cq != NULL ? cq->cqe : -1);
	if (cq != NULL)
		ibv_destroy_cq(cq);
	errno = 0;
	cq = ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0);
	CHECK(cq == NULL && errno == EINVAL, "create_cq(max_cqe + 1): %s",
	      cq == NULL ? strerror(errno) : "created");
	if (cq != NULL)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	if (cq != NULL) {
		int rc = ibv_resize_cq(cq, 200);

		CHECK(rc == 0 && cq->cqe == 256, "resize_cq(200): rc %d, cqe %d (want 256)", rc,
		      cq->cqe);
		ibv_destroy_cq(cq);
	}
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures == 0 ? 0 : 1;
}
