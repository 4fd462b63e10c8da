/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/ibcm/ibcm_remote.c: a channel's destroy racing a thread
 * in get_event, in a process attached to drnicd. The daemon is a stub
 * rpc_call() that holds the waiter's GET_EVENT until the destroy's request
 * is out, answers it then, and lets the destroy's answer wait until the
 * waiter has acted on its own: so the window between the destroy's request
 * and its answer is hit every run, without sleeps. ibcm_rdma.c's waits are
 * stubs that report where the waiter went: ibcm_wait_efd() (waits for an
 * event: the channel lives) or ibcm_ch_wait_dead() (blocked for good: the
 * channel is dead), which here returns -EDEADLK instead of blocking; and
 * ibcm_ch_bury() only counts the destroyed channels it is given. And a
 * call made after the destroy has returned. Every unlock of a mutex in ibcm_remote.c goes through ut_unlock(), which
 * can run a destroy right after a chosen thread's next release of
 * ibcm.lock: into the gap between two holds of the lock, every run.
 */
#include <pthread.h>
#include <sys/eventfd.h>

static void ut_unlock_hook(const pthread_mutex_t *l);

static inline int
ut_unlock(pthread_mutex_t *l)
{
	int rc = (pthread_mutex_unlock)(l);

	ut_unlock_hook(l);
	return rc;
}
#define pthread_mutex_unlock(l) ut_unlock(l)

#include "lib/ibcm/ibcm_remote.c"

#include "ut_common.h"

#define UT_CH_REMOTE 0x1000ull
#define UT_ID_REMOTE 0x2000ull

/* ---- ibcm_rdma.c's part, stubbed ----------------------------------------- */

struct ibcm_global ibcm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.devs = TAILQ_HEAD_INITIALIZER(ibcm.devs),
	.ids = TAILQ_HEAD_INITIALIZER(ibcm.ids),
	.chans = TAILQ_HEAD_INITIALIZER(ibcm.chans),
};
int ibcm_rdma_logtype;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int get_calls;   /* GET_EVENT requests */
	bool get_held;            /* the first one waits for get_release */
	bool get_release;
	int get_answer;           /* ... and then returns this */
	int second_get_rc;        /* the second: 0 (an event) or an error */
	int destroy_rc;           /* CHANNEL_DESTROY's answer */
	unsigned int destroys;
	int dying_get_rc;         /* a get_event made during the destroy */
	unsigned int efd_waits;   /* ibcm_wait_efd() entered */
	bool efd_release;
	unsigned int dead_waits;  /* ibcm_ch_wait_dead() entered */
	unsigned int late_calls;  /* ibcm_ch_late() entered */
	unsigned int buries;      /* ibcm_ch_bury() calls */
	bool get_no_hold;         /* the first GET_EVENT answers at once */
	int hook_destroy_rc;      /* the destroy ut_unlock_hook() ran */
	unsigned int hook_buries; /* buries when it returned */
} ut = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

int
ibcm_ch_wait_dead(struct drnic_ibcm_channel *ch)
{
	RTE_SET_USED(ch);
	pthread_mutex_lock(&ut.lock);
	ut.dead_waits++;
	pthread_cond_broadcast(&ut.cond);
	pthread_mutex_unlock(&ut.lock);
	return -EDEADLK;   /* the real one never returns while the daemon lives */
}

/* A call on a destroyed channel: -EAGAIN for timeout 0, else where the
 * real one blocks for good, -EDEADLK as ibcm_ch_wait_dead() here. */
int
ibcm_ch_late(struct drnic_ibcm_channel *ch, int timeout_ms, uint64_t deadline)
{
	RTE_SET_USED(ch);
	RTE_SET_USED(deadline);
	pthread_mutex_lock(&ut.lock);
	ut.late_calls++;
	pthread_mutex_unlock(&ut.lock);
	return timeout_ms == 0 ? -EAGAIN : -EDEADLK;
}

/* Buried channels (ibcm_rdma.c keeps them, dead and listed, for calls
 * that come after the destroy), given back when the test ends: a stand-in
 * buried under a waiter shows as a count, not as a use after free. */
static struct drnic_ibcm_channel *ut_buried[4];

void
ibcm_ch_bury(struct drnic_ibcm_channel *ch)
{
	pthread_mutex_lock(&ibcm.lock);
	ch->buried = true;
	pthread_mutex_unlock(&ibcm.lock);
	if (ut.buries < RTE_DIM(ut_buried))
		ut_buried[ut.buries] = ch;
	ut.buries++;
}

static void
ut_buried_release(void)
{
	unsigned int i, j;

	for (i = 0; i < RTE_DIM(ut_buried); i++) {
		struct drnic_ibcm_channel *ch = ut_buried[i];

		if (ch == NULL)
			continue;
		for (j = i; j < RTE_DIM(ut_buried); j++)   /* buried twice: once */
			if (ut_buried[j] == ch)
				ut_buried[j] = NULL;
		TAILQ_REMOVE(&ibcm.chans, ch, next);
		close(ch->efd);
		pthread_mutex_destroy(&ch->lock);
		free(ch);
	}
}

struct drnic_ibcm_id *
ibcm_id_alloc(struct drnic_ibcm_channel *ch, void *context, enum drnic_ibcm_ps ps,
	      enum drnic_qp_type qp_type)
{
	RTE_SET_USED(ch);
	RTE_SET_USED(context);
	RTE_SET_USED(ps);
	RTE_SET_USED(qp_type);
	return NULL;
}

uint64_t
ibcm_deadline(int timeout_ms)
{
	RTE_SET_USED(timeout_ms);
	return 0;
}

int
ibcm_wait_efd(int efd, int timeout_ms, uint64_t deadline)
{
	RTE_SET_USED(efd);
	RTE_SET_USED(deadline);
	if (timeout_ms == 0)
		return -EAGAIN;
	pthread_mutex_lock(&ut.lock);
	ut.efd_waits++;
	pthread_cond_broadcast(&ut.cond);
	while (!ut.efd_release)
		pthread_cond_wait(&ut.cond, &ut.lock);
	ut.efd_release = false;
	pthread_mutex_unlock(&ut.lock);
	return 0;
}

/* ---- the daemon, stubbed -------------------------------------------------- */

static struct drnic_ibcm_channel *ut_ch;

bool
rpc_daemon_gone(void)
{
	return false;
}

void
rpc_on_daemon_gone(void (*fn)(void))
{
	RTE_SET_USED(fn);
}

int
rpc_call_fd(struct rpc_msg *m, int *fd)
{
	CU_ASSERT_EQUAL(m->op, RPC_CM_CHANNEL_CREATE);
	*fd = eventfd(0, EFD_SEMAPHORE);
	m->obj[0] = UT_CH_REMOTE;
	return *fd < 0 ? -errno : 0;
}

static int
ut_get_event(struct rpc_msg *m)
{
	struct drnic_ibcm_event ev = { .event = DRNIC_IBCM_EVENT_ESTABLISHED };
	unsigned int n;
	int rc;

	CU_ASSERT_EQUAL(m->obj[0], UT_CH_REMOTE);
	pthread_mutex_lock(&ut.lock);
	n = ++ut.get_calls;
	if (n == 1 && !ut.get_no_hold) {
		ut.get_held = true;
		pthread_cond_broadcast(&ut.cond);
		while (!ut.get_release)
			pthread_cond_wait(&ut.cond, &ut.lock);
		rc = ut.get_answer;
	} else {
		rc = ut.second_get_rc;
	}
	pthread_mutex_unlock(&ut.lock);
	if (rc == 0) {
		memcpy(m->blob, &ev, sizeof(ev));
		m->blob_len = sizeof(ev);
		m->obj[1] = UT_ID_REMOTE;
		m->arg[0] = 1;
	}
	return rc;
}

/* The destroy's request: the held GET_EVENT is answered "no event" now,
 * and this answer waits until the waiter has gone where that takes it. */
static int
ut_destroy(struct rpc_msg *m)
{
	struct drnic_ibcm_event ev;
	int rc;

	CU_ASSERT_EQUAL(m->obj[0], UT_CH_REMOTE);
	/* The channel takes no new call meanwhile. */
	ut.dying_get_rc = ibcm_r_get_event(ut_ch, &ev, 0);
	pthread_mutex_lock(&ut.lock);
	ut.destroys++;
	if (ut.get_held && !ut.get_release) {
		ut.get_answer = -EAGAIN;
		ut.get_release = true;
		pthread_cond_broadcast(&ut.cond);
		while (ut.efd_waits == 0 && ut.dead_waits == 0)
			pthread_cond_wait(&ut.cond, &ut.lock);
	}
	rc = ut.destroy_rc;
	pthread_mutex_unlock(&ut.lock);
	return rc;
}

int
rpc_call(struct rpc_msg *m)
{
	switch (m->op) {
	case RPC_CM_GET_EVENT:
		return ut_get_event(m);
	case RPC_CM_CHANNEL_DESTROY:
		return ut_destroy(m);
	default:
		CU_FAIL("a request the test does not expect");
		return -ENOTSUP;
	}
}

/* The thread whose next release of ibcm.lock runs a destroy of ut_ch. */
static __thread bool ut_hook_armed;

static void
ut_unlock_hook(const pthread_mutex_t *l)
{
	if (!ut_hook_armed || l != &ibcm.lock)
		return;
	ut_hook_armed = false;
	ut.hook_destroy_rc = ibcm_r_destroy_channel(ut_ch);
	ut.hook_buries = ut.buries;
}

/* ---- the tests ------------------------------------------------------------- */

struct ut_waiter {
	pthread_t tid;
	struct drnic_ibcm_event ev;
	int rc;
};

static void *
ut_waiter_main(void *arg)
{
	struct ut_waiter *w = arg;

	w->rc = ibcm_r_get_event(ut_ch, &w->ev, -1);
	return NULL;
}

static struct drnic_ibcm_id *
ut_setup(int destroy_rc, int second_get_rc, struct ut_waiter *w)
{
	struct drnic_ibcm_id *id = calloc(1, sizeof(*id));

	pthread_mutex_lock(&ut.lock);
	ut.get_calls = ut.destroys = ut.efd_waits = ut.dead_waits = ut.buries = 0;
	ut.get_held = ut.get_release = ut.efd_release = ut.get_no_hold = false;
	ut.destroy_rc = destroy_rc;
	ut.second_get_rc = second_get_rc;
	ut.dying_get_rc = 1;
	pthread_mutex_unlock(&ut.lock);
	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	id->remote = UT_ID_REMOTE;
	TAILQ_INSERT_TAIL(&ibcm.ids, id, next);
	ut_ch = ibcm_r_create_channel();
	CU_ASSERT_PTR_NOT_NULL_FATAL(ut_ch);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&w->tid, NULL, ut_waiter_main, w), 0);
	/* The waiter's request is with the daemon before the destroy. */
	pthread_mutex_lock(&ut.lock);
	while (!ut.get_held)
		pthread_cond_wait(&ut.cond, &ut.lock);
	pthread_mutex_unlock(&ut.lock);
	return id;
}

static void
ut_teardown(struct drnic_ibcm_id *id)
{
	TAILQ_REMOVE(&ibcm.ids, id, next);
	free(id);
	ut_buried_release();
	CU_ASSERT(TAILQ_EMPTY(&ibcm.chans));
}

/*
 * The daemon refuses the destroy (EBUSY: its channel has an id this
 * process has not heard of yet). The waiter whose request failed in the
 * meantime must not be left blocked for good on a channel that lives on:
 * it waits for events, and takes the next one.
 */
static void
test_destroy_refused_waiter_lives(void)
{
	struct ut_waiter w;
	struct drnic_ibcm_id *id = ut_setup(-EBUSY, 0, &w);

	CU_ASSERT_EQUAL(ibcm_r_destroy_channel(ut_ch), -EBUSY);
	CU_ASSERT_EQUAL(ut.dying_get_rc, -EINVAL);   /* refused while the request was out */
	CU_ASSERT_EQUAL(ut.dead_waits, 0);
	CU_ASSERT_EQUAL(ut.efd_waits, 1);
	/* An event comes: the waiter returns it. */
	pthread_mutex_lock(&ut.lock);
	ut.efd_release = true;
	pthread_cond_broadcast(&ut.cond);
	pthread_mutex_unlock(&ut.lock);
	pthread_join(w.tid, NULL);
	CU_ASSERT_EQUAL(w.rc, 0);
	CU_ASSERT_EQUAL(w.ev.event, DRNIC_IBCM_EVENT_ESTABLISHED);
	CU_ASSERT_PTR_EQUAL(w.ev.id, id);
	CU_ASSERT_EQUAL(ut.get_calls, 2);
	CU_ASSERT_EQUAL(ut.dead_waits, 0);
	/* The channel lives: a second destroy, with no waiter, buries it. */
	ut.destroy_rc = 0;
	CU_ASSERT_EQUAL(ibcm_r_destroy_channel(ut_ch), 0);
	CU_ASSERT_EQUAL(ut.destroys, 2);
	CU_ASSERT_EQUAL(ut.buries, 1);
	ut_teardown(id);
}

/*
 * The daemon destroys its channel: the waiter, whose request failed while
 * the destroy's was out, waits as for no event; its next request finds the
 * daemon's channel gone (EINVAL) and, the channel now dead, it blocks for
 * good (-EDEADLK from the stub), as does a call made after the destroy
 * (-EAGAIN without a wait). Its leaving buries the stand-in.
 */
static void
test_destroy_confirmed_waiter_blocks(void)
{
	struct ut_waiter w;
	struct drnic_ibcm_id *id = ut_setup(0, -EINVAL, &w);
	struct drnic_ibcm_channel *ch = ut_ch;
	struct drnic_ibcm_event ev;

	CU_ASSERT_EQUAL(ibcm_r_destroy_channel(ch), 0);
	CU_ASSERT_EQUAL(ut.dying_get_rc, -EINVAL);
	CU_ASSERT_EQUAL(ut.efd_waits, 1);
	CU_ASSERT_EQUAL(ut.buries, 0);                 /* the waiter holds it */
	CU_ASSERT_EQUAL(ibcm_r_get_event(ch, &ev, 0), -EAGAIN);
	CU_ASSERT_EQUAL(ibcm_r_destroy_channel(ch), -EINVAL);
	pthread_mutex_lock(&ut.lock);
	ut.efd_release = true;
	pthread_cond_broadcast(&ut.cond);
	pthread_mutex_unlock(&ut.lock);
	pthread_join(w.tid, NULL);
	CU_ASSERT_EQUAL(w.rc, -EDEADLK);
	CU_ASSERT_EQUAL(ut.get_calls, 2);
	CU_ASSERT_EQUAL(ut.dead_waits, 1);
	CU_ASSERT_EQUAL(ut.destroys, 1);
	CU_ASSERT_EQUAL(ut.buries, 1);
	ut_teardown(id);
}

/*
 * A destroy from another thread lands right after get_event has found the
 * channel live, before anything else it does (here: run by ut_unlock_hook()
 * on get_event's first release of ibcm.lock). The call had begun: the
 * waiter must be counted by then, so the destroy leaves the stand-in to it,
 * and the waiter blocks on the dead channel as on a destroyed kernel
 * channel; its leaving buries the stand-in, once.
 */
static void
test_destroy_after_live_check(void)
{
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_id *id = calloc(1, sizeof(*id));
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	id->remote = UT_ID_REMOTE;
	TAILQ_INSERT_TAIL(&ibcm.ids, id, next);
	ut.get_calls = ut.destroys = ut.efd_waits = ut.dead_waits = ut.buries = 0;
	ut.get_no_hold = true;
	ut.second_get_rc = -EINVAL;   /* the daemon's channel is gone */
	ut.destroy_rc = 0;
	ut.hook_destroy_rc = 1;
	ut_ch = ibcm_r_create_channel();
	CU_ASSERT_PTR_NOT_NULL_FATAL(ut_ch);
	ut_hook_armed = true;
	rc = ibcm_r_get_event(ut_ch, &ev, -1);
	CU_ASSERT_FALSE(ut_hook_armed);
	CU_ASSERT_EQUAL(ut.hook_destroy_rc, 0);
	CU_ASSERT_EQUAL(ut.destroys, 1);
	CU_ASSERT_EQUAL(ut.hook_buries, 0);   /* not buried under the waiter */
	CU_ASSERT_EQUAL(rc, -EDEADLK);       /* blocked on the dead channel */
	CU_ASSERT_EQUAL(ut.dead_waits, 1);
	CU_ASSERT_EQUAL(ut.get_calls, 1);
	CU_ASSERT_EQUAL(ut.buries, 1);        /* its leaving buried it, once */
	ut_teardown(id);
}

/*
 * A call that comes after the destroy has returned (rping's event thread,
 * never joined, back from its last event while main destroys the channel):
 * the buried stand-in is still listed, so the call is not refused as on a
 * channel never made (EINVAL, and rping's exit(-1) under main's return): it
 * waits for good, as a waiter that was inside does, or with timeout 0 fails
 * EAGAIN; it asks the daemon nothing and buries nothing a second time.
 */
static void
test_call_after_destroy(void)
{
	struct drnic_ibcm_event ev;
	struct drnic_ibcm_channel *ch;

	ut.get_calls = ut.destroys = ut.efd_waits = ut.dead_waits = ut.buries = 0;
	ut.late_calls = 0;
	ut.destroy_rc = 0;
	ch = ibcm_r_create_channel();
	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	ut_ch = ch;
	CU_ASSERT_EQUAL(ibcm_r_destroy_channel(ch), 0);
	CU_ASSERT_EQUAL(ut.buries, 1);
	CU_ASSERT_EQUAL(ibcm_r_get_event(ch, &ev, 0), -EAGAIN);
	CU_ASSERT_EQUAL(ut.late_calls, 1);
	CU_ASSERT_EQUAL(ibcm_r_get_event(ch, &ev, -1), -EDEADLK);
	CU_ASSERT_EQUAL(ut.late_calls, 2);
	CU_ASSERT_EQUAL(ut.get_calls, 0);
	CU_ASSERT_EQUAL(ibcm_r_destroy_channel(ch), -EINVAL);
	CU_ASSERT_EQUAL(ut.destroys, 1);
	CU_ASSERT_EQUAL(ut.buries, 1);
	CU_ASSERT_EQUAL(ch->waiters, 0);
	ut_buried_release();
	CU_ASSERT(TAILQ_EMPTY(&ibcm.chans));
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	s = CU_add_suite("ibcm_remote", NULL, NULL);
	CU_add_test(s, "destroy_refused_waiter_lives", test_destroy_refused_waiter_lives);
	CU_add_test(s, "destroy_confirmed_waiter_blocks", test_destroy_confirmed_waiter_blocks);
	CU_add_test(s, "destroy_after_live_check", test_destroy_after_live_check);
	CU_add_test(s, "call_after_destroy", test_call_after_destroy);
	return ut_run_all();
}
