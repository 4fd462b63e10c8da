/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Teardown with async events (issue 13, defect 14), as in libibverbs: only an
 * event that was taken and not acknowledged holds a destroy (-EBUSY); an
 * event raised and never taken does not, and is dropped from the queue, so
 * the QP, its CQ, its PD and the device all close. A QP created with its
 * own async queue raises into that queue only.
 *
 * The event: RTS -> SQD with en_sqd_async_notify raises SQ_DRAINED as soon as
 * nothing is in flight (a QP connected to itself on its own device).
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>

#include "sem_common.h"

struct at_dev {
	struct drnic_device *dev;
	struct drnic_pd *pd;
	struct drnic_cq *cq;
};

static int
at_open(struct at_dev *d, const char *name)
{
	struct drnic_cq_attr ca = { .cqe = 16, .socket_id = SOCKET_ID_ANY };
	struct drnic_config cfg;

	drnic_config_init(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "%s", name);
	cfg.progress = DRNIC_PROGRESS_INLINE;
	snprintf(cfg.link_args, sizeof(cfg.link_args), "wire=%s_w", name);
	d->dev = drnic_device_open(&cfg);
	TEST_ASSERT(d->dev != NULL, "open %s: %s", name, rte_strerror(rte_errno));
	d->pd = drnic_alloc_pd(d->dev);
	TEST_ASSERT(d->pd != NULL, "alloc_pd");
	d->cq = drnic_cq_create(&ca);
	TEST_ASSERT(d->cq != NULL, "cq_create");
	return TEST_SUCCESS;
}

/* A QP on @p d connected to itself, in RTS; its events go to @p q (NULL:
 * the device's queue). */
static struct drnic_qp *
at_qp(struct at_dev *d, struct drnic_async_queue *q)
{
	struct sem_ctx t = { .active_mtu = DRNIC_MTU_1024, .max_rd_atomic = 1 };
	struct drnic_qp_init_attr ia = {
		.send_cq = d->cq, .recv_cq = d->cq, .qp_type = DRNIC_QPT_RC, .async_queue = q,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct drnic_qp *qp = drnic_create_qp(d->pd, &ia);

	t.dev[SEM_SRV] = d->dev;
	if (qp == NULL || sem_qp_init(qp, 0) != 0 ||
	    sem_qp_rtr(&t, qp, SEM_SRV, drnic_qp_num(qp), 0) != 0 || sem_qp_rts(&t, qp, 0, 1) != 0)
		return NULL;
	return qp;
}

/* Move @p qp to SQD with notification; run the engine until @p q has one
 * more event raised (not taken). */
static int
at_drain(struct at_dev *d, struct drnic_qp *qp, struct drnic_async_queue *q)
{
	struct drnic_qp_attr a = { .qp_state = DRNIC_QPS_SQD, .en_sqd_async_notify = 1 };
	struct drnic_async_stats st;
	uint64_t raised, end = sem_now_us() + 2000000;

	TEST_ASSERT_SUCCESS(drnic_async_queue_query_stats(q, &st), "stats");
	raised = st.raised;
	TEST_ASSERT_SUCCESS(drnic_modify_qp(qp, &a, DRNIC_QP_STATE | DRNIC_QP_EN_SQD_ASYNC_NOTIFY),
			    "RTS -> SQD");
	do {
		drnic_device_progress(d->dev);
		TEST_ASSERT_SUCCESS(drnic_async_queue_query_stats(q, &st), "stats");
	} while (st.raised == raised && sem_now_us() < end);
	TEST_ASSERT_EQUAL(st.raised, raised + 1, "SQ_DRAINED raised");
	return TEST_SUCCESS;
}

static int
at_body(struct sem_ctx *c)
{
	struct drnic_async_queue *dq, *own;
	struct drnic_async_event ev;
	struct drnic_async_stats st;
	struct drnic_qp *qp;
	struct at_dev d;

	RTE_SET_USED(c);
	TEST_ASSERT_SUCCESS(at_open(&d, "sem_at"), "device");
	dq = drnic_device_async_queue(d.dev);

	/* Raised, never taken: the destroy succeeds and drops it. */
	qp = at_qp(&d, NULL);
	TEST_ASSERT(qp != NULL, "QP in RTS");
	TEST_ASSERT_SUCCESS(at_drain(&d, qp, dq), "event");
	TEST_ASSERT_SUCCESS(drnic_destroy_qp(qp), "destroy with an unread event");
	TEST_ASSERT_EQUAL(drnic_try_get_async_event(dq, &ev), -EAGAIN,
			  "the destroyed QP's event is gone (%s)", drnic_event_type_str(ev.event_type));
	TEST_ASSERT_SUCCESS(drnic_async_queue_query_stats(dq, &st), "stats");
	TEST_ASSERT_EQUAL(st.events_purged, 1, "counted in events_purged");

	/* Taken, not acknowledged: the destroy waits for the ack (-EBUSY). */
	qp = at_qp(&d, NULL);
	TEST_ASSERT(qp != NULL, "second QP in RTS");
	TEST_ASSERT_SUCCESS(at_drain(&d, qp, dq), "event");
	TEST_ASSERT_SUCCESS(drnic_try_get_async_event(dq, &ev), "take it");
	TEST_ASSERT_EQUAL(ev.event_type, DRNIC_EVENT_SQ_DRAINED, "SQ_DRAINED");
	TEST_ASSERT_EQUAL(ev.qp_num, drnic_qp_num(qp), "about this QP");
	TEST_ASSERT_EQUAL(drnic_destroy_qp(qp), -EBUSY, "destroy with an unacknowledged event");
	drnic_ack_async_event(dq, &ev);
	TEST_ASSERT_SUCCESS(drnic_destroy_qp(qp), "destroy after the ack");

	/* Its own queue: the event goes there, not to the device's. */
	own = drnic_async_queue_create(0);
	TEST_ASSERT(own != NULL, "a queue of its own");
	qp = at_qp(&d, own);
	TEST_ASSERT(qp != NULL, "third QP in RTS");
	TEST_ASSERT_EQUAL(drnic_async_queue_destroy(own), -EBUSY, "a QP raises into it");
	TEST_ASSERT_SUCCESS(at_drain(&d, qp, own), "event in its queue");
	TEST_ASSERT_EQUAL(drnic_try_get_async_event(dq, &ev), -EAGAIN,
			  "nothing in the device's queue");
	TEST_ASSERT_SUCCESS(drnic_try_get_async_event(own, &ev), "take it from its queue");
	TEST_ASSERT_EQUAL(ev.qp_num, drnic_qp_num(qp), "about this QP");
	drnic_ack_async_event(own, &ev);
	TEST_ASSERT_SUCCESS(drnic_destroy_qp(qp), "destroy");
	TEST_ASSERT_SUCCESS(drnic_async_queue_destroy(own), "its queue after it");

	/* Nothing left holds the CQ, the PD or the device. */
	TEST_ASSERT_SUCCESS(drnic_cq_destroy(d.cq), "CQ");
	TEST_ASSERT_SUCCESS(drnic_dealloc_pd(d.pd), "PD");
	TEST_ASSERT_SUCCESS(drnic_device_close(d.dev), "device");
	return TEST_SUCCESS;
}

static int
test_async_teardown(void)
{
	return sem_run(DRNIC_PROGRESS_INLINE, "teardown with async events", at_body);
}

DRNIC_TEST_REGISTER(sem_async_teardown_autotest, DRNIC_TEST_FAST, test_async_teardown);
