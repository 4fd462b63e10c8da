/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event mode (seed 000 §3.2.2 and §3.4.2; issue 3): a consumer thread that
 * sleeps in epoll on the completion channel's fd, with the loop of
 * drnic_cq.h: poll; arm; poll again; epoll_wait; take and acknowledge the
 * event; poll.
 *
 *  A. Ping-pong, 10000 messages: the sender waits until the consumer has
 *     taken message i and is armed, drained and entering epoll_wait before
 *     sending i+1, so every message needs its own wake-up: exactly one
 *     event per message; a lost wake-up is a 5 s timeout, i.e. a failure.
 *  B. Free-running, 10000 messages: CQEs land between arm and poll (the
 *     arm-then-poll race). Every message is received exactly once, in order,
 *     with its bytes, and the consumer never hangs.
 *  C. Solicited-only arming: no event for an unsolicited SEND, one for a
 *     SEND with DRNIC_SEND_SOLICITED; one-shot (no second event unarmed);
 *     a completion already in the CQ at arming fires nothing (poll after
 *     arming finds it); an error completion wakes a solicited-only arm.
 *  The CQ counters agree: stats.events == events taken.
 *
 * Progress: in dedicated mode the engine lcore produces CQEs and writes the
 * eventfd while both application threads sleep or poll. In inline mode there
 * is no engine thread: per drnic_verbs.h, engines run only inside
 * drnic_post_send/recv, drnic_cq_poll and drnic_device_progress of some
 * thread of the process. The consumer sleeps in epoll and cannot drive
 * anything, so the sending (main) thread drives progress: it polls its own
 * (client) CQ until its SEND is acknowledged, by which time the server's
 * receive CQE has been produced and the channel signalled; only then does it
 * wait for the consumer.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_pause.h>

#include "sem_common.h"

#define EV_MSGS 10000u
#define EV_MSG 64u
#define EV_RWIN 64u         /* receives the consumer keeps posted */
#define EV_SWIN 32u         /* sends outstanding at the sender (phase B) */
#define EV_AHEAD 48u        /* sent minus received (phase B): no RNR */
#define EV_WAKE_MS 5000

struct ev_state {
	struct sem_ctx *c;
	struct drnic_comp_channel *ch;
	struct drnic_cq *scq, *ccq;
	struct drnic_qp *sqp, *cqp;
	struct drnic_mr *rmr, *smr;
	uint8_t *rbuf, *sbuf;
	uint32_t sqpn;
	void *cq_ctx;
	/* per phase */
	uint32_t base;              /* first message number of the phase */
	uint32_t total;
	bool pingpong;
	sem_t got_one;
	int stop_fd;
	_Atomic uint32_t received;
	atomic_bool asleep;         /* consumer armed, drained, entering epoll */
	_Atomic int fail;
	atomic_bool stop;
	char why[256];
	/* consumer counters */
	uint64_t events, wakeups, spurious, arms;
};

/* Message m's bytes: its number, then pattern m. */
static void
ev_fill(uint8_t *b, uint32_t m)
{
	memcpy(b, &m, 4);
	sem_fill(b + 4, EV_MSG - 4, m);
}

static int
ev_post_recv(struct ev_state *s, uint32_t m)
{
	return sem_post_recv(s->sqp, m, s->rbuf + (size_t)(m % EV_RWIN) * EV_MSG, EV_MSG,
			     drnic_mr_lkey(s->rmr));
}

static void
ev_fail(struct ev_state *s, const char *msg)
{
	if (!atomic_exchange(&s->fail, 1))
		snprintf(s->why, sizeof(s->why), "%s", msg);
}

/* Take every completion waiting; -1 on a wrong one. */
static int
ev_drain(struct ev_state *s)
{
	struct drnic_wc wc[16];
	int n, i, total = 0;
	char msg[200];

	do {
		n = drnic_cq_poll(s->scq, (int)RTE_DIM(wc), wc);
		if (n < 0) {
			snprintf(msg, sizeof(msg), "drnic_cq_poll: %d", n);
			ev_fail(s, msg);
			return -1;
		}
		for (i = 0; i < n; i++) {
			uint32_t m = s->base + atomic_load(&s->received);
			const uint8_t *b = s->rbuf + (size_t)(m % EV_RWIN) * EV_MSG;
			uint32_t got_m;

			memcpy(&got_m, b, 4);
			if (wc[i].wr_id != m || wc[i].status != DRNIC_WC_SUCCESS ||
			    wc[i].opcode != DRNIC_WC_RECV || wc[i].byte_len != EV_MSG ||
			    wc[i].qp_num != s->sqpn) {
				snprintf(msg, sizeof(msg), "completion for message %u: wr_id %llu "
					 "status %s opcode %d byte_len %u qp_num %u (expected qp %u)",
					 m, (unsigned long long)wc[i].wr_id,
					 drnic_wc_status_str(wc[i].status), (int)wc[i].opcode,
					 wc[i].byte_len, wc[i].qp_num, s->sqpn);
				ev_fail(s, msg);
				return -1;
			}
			if (got_m != m || sem_check(b + 4, EV_MSG - 4, m) != -1) {
				snprintf(msg, sizeof(msg), "message %u: wrong bytes (number %u)", m,
					 got_m);
				ev_fail(s, msg);
				return -1;
			}
			if (m + EV_RWIN < s->base + s->total && ev_post_recv(s, m + EV_RWIN) != 0) {
				ev_fail(s, "repost of a receive failed");
				return -1;
			}
			atomic_fetch_add(&s->received, 1);
			if (s->pingpong)
				sem_post(&s->got_one);
		}
		total += n;
	} while (n > 0);
	return total;
}

static void *
ev_consumer(void *arg)
{
	struct ev_state *s = arg;
	struct epoll_event e = { .events = EPOLLIN }, out[2];
	struct drnic_cq *evcq;
	void *ctx;
	char msg[200];
	int ep, n, r, rc;

	ep = epoll_create1(0);
	e.data.u32 = 1;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, drnic_comp_channel_fd(s->ch), &e) != 0) {
		ev_fail(s, "epoll set-up on the channel fd");
		goto out;
	}
	e.data.u32 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, s->stop_fd, &e);
	while (atomic_load(&s->received) < s->total && !atomic_load(&s->fail) &&
	       !atomic_load(&s->stop)) {
		n = ev_drain(s);
		if (n < 0)
			break;
		if (n > 0)
			continue;
		rc = drnic_cq_req_notify(s->scq, 0);
		if (rc != 0) {
			snprintf(msg, sizeof(msg), "drnic_cq_req_notify: %d", rc);
			ev_fail(s, msg);
			break;
		}
		s->arms++;
		n = ev_drain(s);  /* arm, then poll: CQEs that beat the arm */
		if (n < 0)
			break;
		if (n > 0)
			continue;
		atomic_store(&s->asleep, true);
		r = epoll_wait(ep, out, 2, EV_WAKE_MS);
		atomic_store(&s->asleep, false);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ev_fail(s, "epoll_wait failed");
			break;
		}
		if (r == 0) {
			snprintf(msg, sizeof(msg), "no wake-up within %d ms with message %u "
				 "outstanding (%u of %u received): lost wake-up", EV_WAKE_MS,
				 s->base + atomic_load(&s->received), atomic_load(&s->received),
				 s->total);
			ev_fail(s, msg);
			break;
		}
		s->wakeups++;
		rc = drnic_try_get_cq_event(s->ch, &evcq, &ctx);
		if (rc == -EAGAIN) {
			s->spurious++;
			continue;
		}
		if (rc != 0) {
			snprintf(msg, sizeof(msg), "drnic_try_get_cq_event: %d", rc);
			ev_fail(s, msg);
			break;
		}
		if (evcq != s->scq || ctx != s->cq_ctx) {
			snprintf(msg, sizeof(msg), "event for CQ %p ctx %p, expected %p %p",
				 (void *)evcq, ctx, (void *)s->scq, s->cq_ctx);
			drnic_ack_cq_events(evcq, 1);
			ev_fail(s, msg);
			break;
		}
		drnic_ack_cq_events(evcq, 1);
		s->events++;
	}
out:
	if (ep >= 0)
		close(ep);
	return NULL;
}

/* Wait for @p n client send completions (drives inline progress). */
static int
ev_client_wait(struct ev_state *s, unsigned int n, enum drnic_wc_status want)
{
	struct drnic_wc wc[EV_SWIN];
	unsigned int i;
	int got;

	got = sem_poll_n(s->c, s->ccq, wc, (int)n, 5000);
	if (got != (int)n) {
		printf("client: %d of %u send completions within 5 s\n", got, n);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (wc[i].status != want) {
			sem_print_wc("client send", &wc[i]);
			return -1;
		}
	return 0;
}

static int
ev_send(struct ev_state *s, uint32_t m, unsigned int flags)
{
	uint8_t *b = s->sbuf + (size_t)(m % EV_SWIN) * EV_MSG;

	ev_fill(b, m);
	return sem_post_send(s->cqp, m, DRNIC_WR_SEND, b, EV_MSG, drnic_mr_lkey(s->smr), flags, 0,
			     0);
}

/* Run one consumer phase of @p total messages starting at @p base. */
static int
ev_phase(struct ev_state *s, uint32_t base, uint32_t total, bool pingpong)
{
	pthread_t th;
	uint32_t sent = 0, done = 0, i;
	uint64_t t0 = sem_now_us();
	struct timespec ts;
	int rc = TEST_SUCCESS;
	uint64_t one = 1;
	ssize_t wr;

	s->base = base;
	s->total = total;
	s->pingpong = pingpong;
	atomic_store(&s->received, 0);
	atomic_store(&s->asleep, false);
	atomic_store(&s->fail, 0);
	atomic_store(&s->stop, false);
	s->events = s->wakeups = s->spurious = s->arms = 0;
	s->why[0] = '\0';
	for (i = 0; i < EV_RWIN && i < total; i++)
		TEST_ASSERT_SUCCESS(ev_post_recv(s, base + i), "initial receives");
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, ev_consumer, s), "consumer thread");

	while (sent < total && !atomic_load(&s->fail)) {
		if (pingpong) {
			/* Send only once the consumer is armed and going to
			 * sleep: each message must wake it. */
			uint64_t end = sem_now_us() + EV_WAKE_MS * 1000u;

			while (!atomic_load(&s->asleep) && !atomic_load(&s->fail) &&
			       sem_now_us() < end)
				sched_yield();
			if (!atomic_load(&s->asleep)) {
				printf("message %u: consumer never went to sleep (%s)\n",
				       base + sent, s->why);
				rc = TEST_FAILED;
				break;
			}
			if (ev_send(s, base + sent, 0) != 0 ||
			    ev_client_wait(s, 1, DRNIC_WC_SUCCESS) != 0) {
				rc = TEST_FAILED;
				break;
			}
			sent++;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += EV_WAKE_MS / 1000 + 1;
			while (sem_timedwait(&s->got_one, &ts) != 0 && errno == EINTR)
				;
			if (atomic_load(&s->received) != sent) {
				printf("message %u: consumer did not take it (received %u; %s)\n",
				       base + sent - 1, atomic_load(&s->received),
				       atomic_load(&s->fail) ? s->why : "consumer still asleep");
				rc = TEST_FAILED;
				break;
			}
		} else {
			struct drnic_wc wc[EV_SWIN];
			int n;

			while (sent < total && sent - done < EV_SWIN &&
			       sent - atomic_load(&s->received) < EV_AHEAD) {
				if (ev_send(s, base + sent, 0) != 0) {
					rc = TEST_FAILED;
					break;
				}
				sent++;
			}
			if (rc != TEST_SUCCESS)
				break;
			n = drnic_cq_poll(s->ccq, (int)RTE_DIM(wc), wc);
			if (n < 0) {
				printf("client poll: %d\n", n);
				rc = TEST_FAILED;
				break;
			}
			for (i = 0; i < (uint32_t)n; i++)
				if (wc[i].status != DRNIC_WC_SUCCESS || wc[i].wr_id != base + done + i) {
					sem_print_wc("client send", &wc[i]);
					rc = TEST_FAILED;
				}
			done += (uint32_t)n;
			if (rc != TEST_SUCCESS)
				break;
			if (n == 0)
				sched_yield();  /* the consumer shares this CPU */
			if (sem_now_us() - t0 > 30u * 1000000u) {
				printf("phase B: 30 s with %u sent, %u received\n", sent,
				       atomic_load(&s->received));
				rc = TEST_FAILED;
				break;
			}
		}
	}
	/* Remaining client completions (free-running phase). */
	if (rc == TEST_SUCCESS && !pingpong && done < total) {
		while (done < total && !atomic_load(&s->fail)) {
			unsigned int k = RTE_MIN(total - done, EV_SWIN);

			if (ev_client_wait(s, k, DRNIC_WC_SUCCESS) != 0) {
				rc = TEST_FAILED;
				break;
			}
			done += k;
		}
	}
	/* Let the consumer finish (it exits once everything is received). */
	if (rc == TEST_SUCCESS) {
		uint64_t end = sem_now_us() + (EV_WAKE_MS + 1000) * 1000u;

		while (atomic_load(&s->received) < total && !atomic_load(&s->fail) &&
		       sem_now_us() < end) {
			if (s->c->mode == DRNIC_PROGRESS_INLINE)
				sem_progress(s->c);
			sched_yield();
		}
	}
	atomic_store(&s->stop, true);
	wr = write(s->stop_fd, &one, sizeof(one));
	RTE_SET_USED(wr);
	pthread_join(th, NULL);
	{
		uint64_t v;

		wr = read(s->stop_fd, &v, sizeof(v));
		RTE_SET_USED(wr);
	}
	printf("phase %s: %u messages in %.3f s: %llu arms, %llu wake-ups, %llu events, "
	       "%llu spurious wake-ups\n", pingpong ? "A (ping-pong)" : "B (free-running)",
	       atomic_load(&s->received), (double)(sem_now_us() - t0) / 1e6,
	       (unsigned long long)s->arms, (unsigned long long)s->wakeups,
	       (unsigned long long)s->events, (unsigned long long)s->spurious);
	TEST_ASSERT(!atomic_load(&s->fail), "consumer: %s", s->why);
	TEST_ASSERT_EQUAL(rc, TEST_SUCCESS, "sender side failed");
	TEST_ASSERT_EQUAL(atomic_load(&s->received), total, "messages received exactly once");
	if (pingpong)
		/* Every message reached an armed, drained, sleeping consumer. */
		TEST_ASSERT_EQUAL(s->events, total, "one completion event per message");
	else
		TEST_ASSERT(s->events >= 1 && s->events <= total, "events %llu in [1, %u]",
			    (unsigned long long)s->events, total);
	return TEST_SUCCESS;
}

/* epoll the channel for @p ms: 1 when readable, 0 when not. */
static int
ev_fd_wait(struct drnic_comp_channel *ch, int ms)
{
	struct epoll_event e = { .events = EPOLLIN }, out;
	int ep = epoll_create1(0), r;

	if (ep < 0)
		return -1;
	epoll_ctl(ep, EPOLL_CTL_ADD, drnic_comp_channel_fd(ch), &e);
	r = epoll_wait(ep, &out, 1, ms);
	close(ep);
	return r;
}

/* Phase C: solicited-only arming, one-shot events, CQEs present at arming. */
static int
ev_solicited(struct ev_state *s, uint64_t *events2)
{
	struct sem_ctx *c = s->c;
	struct drnic_cq *scq2, *ccq2, *evcq;
	struct drnic_qp *sqp2, *cqp2;
	struct drnic_wc wc[4];
	void *ctx2 = &scq2, *ctx;
	uint32_t sqpn2;
	int n, r;

	scq2 = sem_cq(c, SEM_SRV, 64, s->ch, ctx2);
	ccq2 = sem_cq(c, SEM_CLI, 64, NULL, NULL);
	TEST_ASSERT(scq2 != NULL && ccq2 != NULL, "phase C CQs");
	sqp2 = sem_qp(c, SEM_SRV, scq2, scq2, 16, 16, 1);
	cqp2 = sem_qp(c, SEM_CLI, ccq2, ccq2, 16, 16, 1);
	TEST_ASSERT(sqp2 != NULL && cqp2 != NULL, "phase C QPs");
	TEST_ASSERT_SUCCESS(sem_connect(c, sqp2, cqp2, 0x300, 0x400), "connect");
	sqpn2 = drnic_qp_num(sqp2);
	s->ccq = ccq2;
	s->cqp = cqp2;
	for (n = 0; n < 6; n++)
		TEST_ASSERT_SUCCESS(sem_post_recv(sqp2, 1 + (uint64_t)n, s->rbuf + n * EV_MSG, EV_MSG,
						  drnic_mr_lkey(s->rmr)), "phase C receives");
	*events2 = 0;

	/* C1: solicited-only arm; an unsolicited SEND wakes nobody. */
	TEST_ASSERT_SUCCESS(drnic_cq_req_notify(scq2, 1), "arm solicited-only");
	TEST_ASSERT_SUCCESS(ev_send(s, 11, 0), "unsolicited send");
	TEST_ASSERT_SUCCESS(ev_client_wait(s, 1, DRNIC_WC_SUCCESS), "unsolicited send completes");
	r = ev_fd_wait(s->ch, 200);
	TEST_ASSERT_EQUAL(r, 0, "channel fd readable after an UNSOLICITED send to a "
			  "solicited-only armed CQ");
	TEST_ASSERT_EQUAL(drnic_try_get_cq_event(s->ch, &evcq, &ctx), -EAGAIN,
			  "no event for an unsolicited send");
	n = sem_poll_n(c, scq2, wc, 1, 1000);
	TEST_ASSERT_EQUAL(n, 1, "the unsolicited message is in the CQ");
	SEM_ASSERT_WC(&wc[0], 1, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn2);

	/* C2: a solicited SEND wakes the solicited-only arm. */
	TEST_ASSERT_SUCCESS(ev_send(s, 12, DRNIC_SEND_SOLICITED), "solicited send");
	TEST_ASSERT_SUCCESS(ev_client_wait(s, 1, DRNIC_WC_SUCCESS), "solicited send completes");
	r = ev_fd_wait(s->ch, 2000);
	TEST_ASSERT_EQUAL(r, 1, "channel fd readable after a SOLICITED send");
	TEST_ASSERT_SUCCESS(drnic_try_get_cq_event(s->ch, &evcq, &ctx), "event for the solicited send");
	TEST_ASSERT(evcq == scq2 && ctx == ctx2, "event names the CQ and its context");
	drnic_ack_cq_events(evcq, 1);
	(*events2)++;
	n = sem_poll_n(c, scq2, wc, 1, 1000);
	TEST_ASSERT_EQUAL(n, 1, "the solicited message is in the CQ");
	SEM_ASSERT_WC(&wc[0], 2, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn2);

	/* C3: one-shot: not re-armed, a solicited SEND fires nothing. */
	TEST_ASSERT_SUCCESS(ev_send(s, 13, DRNIC_SEND_SOLICITED), "solicited send, unarmed");
	TEST_ASSERT_SUCCESS(ev_client_wait(s, 1, DRNIC_WC_SUCCESS), "send completes");
	r = ev_fd_wait(s->ch, 100);
	TEST_ASSERT_EQUAL(r, 0, "an event without arming (arming is one-shot)");

	/* C4: a completion already in the CQ when arming fires nothing; the
	 * poll after arming finds it; the next one fires. */
	TEST_ASSERT_SUCCESS(drnic_cq_req_notify(scq2, 0), "arm (next) with a CQE waiting");
	r = ev_fd_wait(s->ch, 100);
	TEST_ASSERT_EQUAL(r, 0, "a CQE already present when arming fired an event");
	n = sem_poll_n(c, scq2, wc, 1, 1000);
	TEST_ASSERT_EQUAL(n, 1, "poll after arming finds the waiting CQE");
	SEM_ASSERT_WC(&wc[0], 3, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn2);
	TEST_ASSERT_SUCCESS(ev_send(s, 14, 0), "send to the armed CQ");
	TEST_ASSERT_SUCCESS(ev_client_wait(s, 1, DRNIC_WC_SUCCESS), "send completes");
	r = ev_fd_wait(s->ch, 2000);
	TEST_ASSERT_EQUAL(r, 1, "event for a new completion after arming");
	TEST_ASSERT_SUCCESS(drnic_get_cq_event(s->ch, &evcq, &ctx), "drnic_get_cq_event");
	TEST_ASSERT(evcq == scq2 && ctx == ctx2, "event names the CQ and its context");
	drnic_ack_cq_events(evcq, 1);
	(*events2)++;
	n = sem_poll_n(c, scq2, wc, 1, 1000);
	TEST_ASSERT_EQUAL(n, 1, "the message is in the CQ");
	SEM_ASSERT_WC(&wc[0], 4, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn2);

	/* C5: an error completion wakes a solicited-only arm (drnic_cq.h):
	 * first an unsolicited SEND into receive 5 (no event), then a 128-byte
	 * SEND into the 64-byte receive 6: LOC_LEN_ERR at the server. */
	n = sem_poll_quiet(c, scq2, wc, 4, 10);
	TEST_ASSERT_EQUAL(n, 0, "CQ empty before C5");
	TEST_ASSERT_SUCCESS(drnic_cq_req_notify(scq2, 1), "arm solicited-only");
	TEST_ASSERT_SUCCESS(ev_send(s, 15, 0), "unsolicited send (receive 5)");
	TEST_ASSERT_SUCCESS(ev_client_wait(s, 1, DRNIC_WC_SUCCESS), "send completes");
	r = ev_fd_wait(s->ch, 100);
	TEST_ASSERT_EQUAL(r, 0, "no event for an unsolicited successful send");
	n = sem_poll_n(c, scq2, wc, 1, 1000);
	TEST_ASSERT_EQUAL(n, 1, "message 15 in the CQ");
	SEM_ASSERT_WC(&wc[0], 5, DRNIC_WC_SUCCESS, DRNIC_WC_RECV, sqpn2);
	{
		/* Receive 6 is 64 bytes: a 128-byte SEND does not fit. */
		uint8_t *b = s->sbuf;

		sem_fill(b, 2 * EV_MSG, 16);
		TEST_ASSERT_SUCCESS(sem_post_send(cqp2, 16, DRNIC_WR_SEND, b, 2 * EV_MSG,
						  drnic_mr_lkey(s->smr), 0, 0, 0),
				    "unsolicited 128-byte send into a 64-byte receive");
	}
	n = sem_poll_n(c, ccq2, wc, 1, 5000);
	TEST_ASSERT_EQUAL(n, 1, "the long send completes (in error) within 5 s");
	r = ev_fd_wait(s->ch, 2000);
	TEST_ASSERT_EQUAL(r, 1, "event for an ERROR completion on a solicited-only armed CQ");
	TEST_ASSERT_SUCCESS(drnic_try_get_cq_event(s->ch, &evcq, &ctx), "the error's event");
	drnic_ack_cq_events(evcq, 1);
	(*events2)++;
	n = sem_poll_n(c, scq2, wc, 1, 1000);
	TEST_ASSERT_EQUAL(n, 1, "the error completion is in the CQ");
	SEM_ASSERT_WC(&wc[0], 6, DRNIC_WC_LOC_LEN_ERR, -1, sqpn2);

	{
		struct drnic_cq_stats st;

		TEST_ASSERT_SUCCESS(drnic_cq_query_stats(scq2, &st), "stats");
		TEST_ASSERT_EQUAL(st.events, *events2, "phase C CQ: events counter");
	}
	return TEST_SUCCESS;
}

static int
ev_body(struct sem_ctx *c)
{
	struct ev_state *s = calloc(1, sizeof(*s));
	struct drnic_cq_stats st;
	struct drnic_cq *evcq;
	void *ctx;
	uint64_t events = 0, events2 = 0;
	int rc = TEST_FAILED;

	if (s == NULL)
		return TEST_FAILED;
	s->c = c;
	s->stop_fd = eventfd(0, EFD_NONBLOCK);
	sem_init(&s->got_one, 0, 0);
	s->ch = sem_channel(c);
	if (s->ch == NULL || s->stop_fd < 0)
		goto out;
	TEST_ASSERT(drnic_comp_channel_fd(s->ch) >= 0, "channel fd");
	s->cq_ctx = &s->cq_ctx;
	s->scq = sem_cq(c, SEM_SRV, 256, s->ch, s->cq_ctx);
	s->ccq = sem_cq(c, SEM_CLI, 256, NULL, NULL);
	s->sqp = s->scq ? sem_qp(c, SEM_SRV, s->scq, s->scq, 128, 128, 1) : NULL;
	s->cqp = s->ccq ? sem_qp(c, SEM_CLI, s->ccq, s->ccq, 128, 128, 1) : NULL;
	s->rmr = sem_mr(c, SEM_SRV, EV_RWIN * EV_MSG, DRNIC_ACCESS_LOCAL_WRITE, (void **)&s->rbuf);
	s->smr = sem_mr(c, SEM_CLI, EV_SWIN * EV_MSG * 4, DRNIC_ACCESS_LOCAL_WRITE,
			(void **)&s->sbuf);
	if (s->sqp == NULL || s->cqp == NULL || s->rmr == NULL || s->smr == NULL)
		goto out;
	s->sqpn = drnic_qp_num(s->sqp);
	if (sem_connect(c, s->sqp, s->cqp, 0x100, 0x200) != 0)
		goto out;

	if (ev_phase(s, 0, EV_MSGS, true) != TEST_SUCCESS)
		goto out;
	events += s->events;
	if (ev_phase(s, EV_MSGS, EV_MSGS, false) != TEST_SUCCESS)
		goto out;
	events += s->events;
	/* An event may still wait for an arm the consumer no longer needed. */
	while (drnic_try_get_cq_event(s->ch, &evcq, &ctx) == 0) {
		drnic_ack_cq_events(evcq, 1);
		if (evcq == s->scq)
			events++;
	}
	drnic_cq_query_stats(s->scq, &st);
	printf("event CQ: %llu events signalled, %llu taken\n", (unsigned long long)st.events,
	       (unsigned long long)events);
	if (st.events != events) {
		printf("stats.events %llu != events taken %llu\n", (unsigned long long)st.events,
		       (unsigned long long)events);
		goto out;
	}
	if (ev_solicited(s, &events2) != TEST_SUCCESS)
		goto out;
	rc = TEST_SUCCESS;
out:
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	sem_destroy(&s->got_one);
	free(s);
	return rc;
}

static int
test_event_inline(void)
{
	return sem_run(DRNIC_PROGRESS_INLINE, "event mode", ev_body);
}

static int
test_event_dedicated(void)
{
	return sem_run(DRNIC_PROGRESS_DEDICATED, "event mode", ev_body);
}

DRNIC_TEST_REGISTER(sem_event_inline_autotest, DRNIC_TEST_FAST, test_event_inline);
DRNIC_TEST_REGISTER(sem_event_dedicated_autotest, DRNIC_TEST_FAST, test_event_dedicated);
