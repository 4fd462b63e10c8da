/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/progress/progress.c on a fake clock: the helper's steps
 * are driven one at a time with the engine, the wake-up and ppoll() faked
 * (progress_ops). Covered: awake -> last look -> asleep and back; a last look
 * that finds work or an engine timer due at once; the sleep bounded by the
 * engine's next timer; the hand-over of the last look to an application
 * call (and taking it back); drnic_progress_posted() in each state; the
 * spin's growth and shrinking and that the helper keeps looking exactly that
 * long; quiet naps while the application calls; napping mode; linger; the
 * state names; start/stop errors.
 */
#include "lib/progress/progress.c"

#include <sys/eventfd.h>

#include "ut_common.h"

/* Link-time stubs of what progress_sys_ops and start/stop call. */
static int stub_wait_fd = -ENOTSUP;

int
drnic_device_progress(struct drnic_device *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

int
drnic_engine_idle_ns(uint64_t *wait_ns)
{
	*wait_ns = UINT64_MAX;
	return 0;
}

int
drnic_link_rx_wait_fd(struct drnic_link *link, uint16_t queue)
{
	RTE_SET_USED(link);
	RTE_SET_USED(queue);
	return stub_wait_fd;
}

int
drnic_link_rx_wait_arm(struct drnic_link *link, uint16_t queue)
{
	RTE_SET_USED(link);
	RTE_SET_USED(queue);
	return 0;
}

int
drnic_link_rx_wait_disarm(struct drnic_link *link, uint16_t queue)
{
	RTE_SET_USED(link);
	RTE_SET_USED(queue);
	return 0;
}

const char *
drnic_link_name(const struct drnic_link *link)
{
	RTE_SET_USED(link);
	return "ut.link";
}

static int ut_link_obj;
static int ut_dev_obj;
#define UT_DEV ((struct drnic_device *)(void *)&ut_dev_obj)
#define UT_LINK ((struct drnic_link *)(void *)&ut_link_obj)

int
drnic_query_device(struct drnic_device *dev, struct drnic_device_attr *attr)
{
	RTE_SET_USED(dev);
	memset(attr, 0, sizeof(*attr));
	attr->progress = DRNIC_PROGRESS_INLINE;
	return 0;
}

struct drnic_link *
drnic_device_link(struct drnic_device *dev)
{
	RTE_SET_USED(dev);
	return UT_LINK;
}

/* A fake CQ for drnic_progress_cq_wait(): its completions appear at
 * scripted times of the fake clock; arming it is recorded. */
static int ut_cq_obj, ut_ch_obj;
#define UT_CQ ((struct drnic_cq *)(void *)&ut_cq_obj)
#define UT_CH ((struct drnic_comp_channel *)(void *)&ut_ch_obj)
static struct {
	uint64_t ready_at;      /* a completion is there from this time on */
	bool ready_on_arm;      /* ... or from the arm on (it came meanwhile) */
	bool armed;
	unsigned int polls, notifies, events;
	bool no_channel;
} fcq;

struct drnic_comp_channel *
drnic_cq_channel(const struct drnic_cq *cq)
{
	return cq == UT_CQ && !fcq.no_channel ? UT_CH : NULL;
}

int
drnic_comp_channel_fd(const struct drnic_comp_channel *ch)
{
	return ch == UT_CH ? 101 : -EINVAL;
}

int
drnic_try_get_cq_event(struct drnic_comp_channel *ch, struct drnic_cq **cq, void **ctx)
{
	RTE_SET_USED(ctx);
	if (ch != UT_CH || fcq.events == 0)
		return -EAGAIN;
	fcq.events--;
	*cq = UT_CQ;
	return 0;
}

void
drnic_ack_cq_events(struct drnic_cq *cq, unsigned int n)
{
	CU_ASSERT_PTR_EQUAL(cq, UT_CQ);
	CU_ASSERT_EQUAL(n, 1);
}

static uint64_t fake_now(void);
static void fake_poll_cost(void);

int
drnic_cq_poll(struct drnic_cq *cq, int n, struct drnic_wc *wc)
{
	CU_ASSERT_PTR_EQUAL(cq, UT_CQ);
	CU_ASSERT(n >= 1);
	fcq.polls++;
	fake_poll_cost();                                /* a poll runs the engine */
	if (fake_now() < fcq.ready_at)
		return 0;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = 42;
	fcq.ready_at = UINT64_MAX;
	return 1;
}

int
drnic_cq_req_notify(struct drnic_cq *cq, int solicited_only)
{
	CU_ASSERT_PTR_EQUAL(cq, UT_CQ);
	CU_ASSERT_EQUAL(solicited_only, 0);
	fcq.notifies++;
	fcq.armed = true;
	if (fcq.ready_on_arm)
		fcq.ready_at = fake_now();
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The fake world                                                           */
/* ------------------------------------------------------------------------ */

#define T0 1000000000ull   /* the fake clock's start: 1 s */

static struct {
	uint64_t now;
	/* run(): returns the scripted values in turn, then 0; costs run_ns */
	int run_ret[256];
	unsigned int run_n, run_i, runs;
	uint64_t run_ns;
	int state_at_run;           /* the helper's state during the last run */
	void (*during_run)(unsigned int nth);
	/* the wake-up */
	unsigned int arms, disarms;
	int arm_rc;
	int state_at_arm;
	uint64_t arm_at;
	/* the engine's next timer */
	int idle_rc;
	uint64_t idle;
	/* ppoll(): how the next sleep ends */
	int pp_ret;                 /* as ppoll: 0 timeout, >0 ready */
	short pp_rev[2];
	uint64_t pp_slept;          /* how long it slept; 0: the whole timeout */
	unsigned int ppolls;
	nfds_t pp_nfds;
	uint64_t pp_timeout;
	uint64_t pp_timeout_max;    /* the longest since it was last cleared */
	int state_at_ppoll;
	void (*during_ppoll)(void);
	/* naps */
	unsigned int naps;
	uint64_t nap_last;
	int state_at_nap;
} w;

static uint64_t
fake_now(void)
{
	return w.now;
}

static void
fake_poll_cost(void)
{
	w.now += w.run_ns;
}

static void
fake_nap(uint64_t ns)
{
	w.naps++;
	w.nap_last = ns;
	w.state_at_nap = atomic_load(&progress.state);
	w.now += ns;
}

static int
fake_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts)
{
	uint64_t t = (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
	nfds_t i;

	w.ppolls++;
	w.pp_nfds = n;
	w.pp_timeout = t;
	w.pp_timeout_max = RTE_MAX(w.pp_timeout_max, t);
	w.state_at_ppoll = atomic_load(&progress.state);
	if (w.during_ppoll != NULL)
		w.during_ppoll();
	for (i = 0; i < n && i < 2; i++)
		fds[i].revents = w.pp_rev[i];
	w.now += w.pp_slept ? w.pp_slept : t;
	return w.pp_ret;
}

static int
fake_run(struct drnic_device *dev)
{
	int r = w.run_i < w.run_n ? w.run_ret[w.run_i++] : 0;

	CU_ASSERT_PTR_EQUAL(dev, UT_DEV);
	w.runs++;
	w.state_at_run = atomic_load(&progress.state);
	if (w.during_run != NULL)
		w.during_run(w.runs);
	w.now += w.run_ns;
	return r;
}

static int
fake_idle(uint64_t *ns)
{
	*ns = w.idle;
	return w.idle_rc;
}

/* The wake-up of the device's link, queue 0: arm (true) or disarm. */
static int
fake_wakeup(struct drnic_link *link, uint16_t q, bool arm)
{
	CU_ASSERT_PTR_EQUAL(link, UT_LINK);
	CU_ASSERT_EQUAL(q, 0);
	if (!arm) {
		w.disarms++;
		return 0;
	}
	w.arms++;
	w.arm_at = w.now;
	w.state_at_arm = atomic_load(&progress.state);
	return w.arm_rc;
}

static int
fake_arm(struct drnic_link *link, uint16_t q)
{
	return fake_wakeup(link, q, true);
}

static int
fake_disarm(struct drnic_link *link, uint16_t q)
{
	return fake_wakeup(link, q, false);
}

static const struct progress_ops fake_ops = {
	.now_ns = fake_now,
	.nap_ns = fake_nap,
	.ppoll = fake_ppoll,
	.run = fake_run,
	.idle_ns = fake_idle,
	.arm = fake_arm,
	.disarm = fake_disarm,
};

static void
script_runs(unsigned int n, const int *ret)
{
	memcpy(w.run_ret, ret, n * sizeof(*ret));
	w.run_n = n;
	w.run_i = 0;
}

/* The helper as drnic_progress_start() leaves it, in blocking mode, with
 * the default figures (spin 2..200 us, nap 5 us, quiet 100 us, linger 8 us);
 * the application last called long ago. */
static void
reset(void)
{
	struct progress *p = &progress;
	const struct drnic_progress_opts o = {
		.thread = -1, .wait = true, .rt = 0, .spin_us = 2, .spin_max_us = 200,
		.sleep_us = 5, .quiet_us = 100, .slice_us = 100, .linger_us = 8,
	};

	if (p->poke_fd > 0)
		close(p->poke_fd);
	memset(&w, 0, sizeof(w));
	w.now = T0;
	w.run_ns = 100;
	w.idle = UINT64_MAX;
	w.pp_ret = 0;
	memset(p, 0, sizeof(*p));
	p->ops = &fake_ops;
	CU_ASSERT_EQUAL_FATAL(progress_configure(p, &o, true), 0);
	p->link = UT_LINK;
	p->wfd = 100;
	p->poke_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CU_ASSERT_FATAL(p->poke_fd >= 0);
	atomic_store(&p->dev, UT_DEV);
	atomic_store(&p->state, DRNIC_PROGRESS_STATE_AWAKE);
	p->last_work = p->awake_since = w.now;
	p->spin_ns = p->spin_min_ns;
}

/* The poke's eventfd: how many pokes wait (and take them). */
static uint64_t
pokes_pending(void)
{
	uint64_t v = 0;

	if (read(progress.poke_fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

static uint64_t
cnt(_Atomic uint64_t *c)
{
	return atomic_load(c);
}

/* Steps until the helper sleeps (ppoll) or @p max steps; returns the steps. */
static unsigned int
step_until_sleep(unsigned int max)
{
	unsigned int i, before = w.ppolls;

	for (i = 1; i <= max; i++) {
		progress_wait_step(&progress);
		if (w.ppolls != before)
			return i;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

static void
test_state_names(void)
{
	ut_check_name_table(progress_state_names, DRNIC_PROGRESS_STATE_COUNT);
	CU_ASSERT_STRING_EQUAL(drnic_progress_state_str(DRNIC_PROGRESS_STATE_AWAKE), "awake");
	CU_ASSERT_STRING_EQUAL(drnic_progress_state_str(DRNIC_PROGRESS_STATE_LAST_LOOK),
			       "last_look");
	CU_ASSERT_STRING_EQUAL(drnic_progress_state_str(DRNIC_PROGRESS_STATE_ASLEEP), "asleep");
	CU_ASSERT_STRING_EQUAL(drnic_progress_state_str(DRNIC_PROGRESS_STATE_COUNT), "unknown");
	CU_ASSERT_STRING_EQUAL(drnic_progress_state_str((enum drnic_progress_state)-1), "unknown");
}

/* Awake while the spin lasts, then armed for the last look, then asleep on
 * the wake-up until the engine's timers are due (1 ms at most), awake again. */
static void
test_awake_last_look_asleep(void)
{
	struct progress *p = &progress;

	reset();
	/* Work: awake, no wake-up armed, the spin starts again from now. */
	script_runs(1, (int[]){ 5 });
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.arms, 0);
	CU_ASSERT_EQUAL(p->last_work, T0 + 100);
	/* Nothing, within the spin (2 us): keep looking. */
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.arms, 0);
	CU_ASSERT_EQUAL(w.ppolls, 0);
	CU_ASSERT_EQUAL(atomic_load(&p->state), DRNIC_PROGRESS_STATE_AWAKE);
	/* The spin is over: arm, last look, sleep. */
	w.now = T0 + 100 + 2000;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.arms, 1);
	CU_ASSERT_EQUAL(w.state_at_arm, DRNIC_PROGRESS_STATE_LAST_LOOK);
	CU_ASSERT_EQUAL(w.state_at_run, DRNIC_PROGRESS_STATE_LAST_LOOK);  /* the last look */
	CU_ASSERT_EQUAL(w.ppolls, 1);
	CU_ASSERT_EQUAL(w.state_at_ppoll, DRNIC_PROGRESS_STATE_ASLEEP);
	CU_ASSERT_EQUAL(w.pp_nfds, 2);                   /* the wake-up and the poke */
	CU_ASSERT_EQUAL(w.pp_timeout, 1000000);          /* no timer due: 1 ms */
	/* The timeout woke it: awake, disarmed, counted. */
	CU_ASSERT_EQUAL(atomic_load(&p->state), DRNIC_PROGRESS_STATE_AWAKE);
	CU_ASSERT_EQUAL(w.disarms, 1);
	CU_ASSERT_EQUAL(cnt(&p->cnt.sleeps), 1);
	CU_ASSERT_EQUAL(cnt(&p->cnt.timeouts), 1);
	CU_ASSERT_EQUAL(cnt(&p->cnt.frames), 0);
	CU_ASSERT_EQUAL(p->last_work, w.now);            /* the spin starts from the wake-up */
	/* A frame ends the next sleep. */
	w.pp_ret = 1;
	w.pp_rev[0] = POLLIN;
	w.pp_slept = 500000;
	CU_ASSERT(step_until_sleep(100) > 0);
	CU_ASSERT_EQUAL(cnt(&p->cnt.frames), 1);
	CU_ASSERT_EQUAL(cnt(&p->cnt.sleeps), 2);
	CU_ASSERT_EQUAL(w.disarms, 2);
}

/* The last look finds work: no sleep; an engine that must run now: no
 * sleep; a timer due in 30 us: a sleep of 30 us. */
static void
test_last_look_outcomes(void)
{
	struct progress *p = &progress;

	unsigned int i;

	/* Work at the last look (i 0), or a run due at once (i 1): armed,
	 * disarmed, awake, no sleep. */
	for (i = 0; i < 2; i++) {
		reset();
		w.now += 5000;             /* past the spin */
		script_runs(2, (int[]){ 0, i == 0 ? 3 : 0 });
		w.idle = i == 0 ? UINT64_MAX : 0;
		progress_wait_step(p);
		CU_ASSERT_EQUAL(w.arms, 1);
		CU_ASSERT_EQUAL(w.disarms, 1);
		CU_ASSERT_EQUAL(w.ppolls, 0);
		CU_ASSERT_EQUAL(cnt(&p->cnt.last_work), i == 0 ? 1 : 0);
		CU_ASSERT_EQUAL(atomic_load(&p->state), DRNIC_PROGRESS_STATE_AWAKE);
	}

	reset();
	w.now += 5000;
	w.idle = 30000;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.ppolls, 1);
	CU_ASSERT_EQUAL(w.pp_timeout, 30000);

	/* A timer due in 1.5 ms: the sleep is 1 ms all the same. */
	reset();
	w.now += 5000;
	w.idle = 1500000;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.pp_timeout, 1000000);

	/* The wake-up cannot be armed (frames held on timers): nap instead. */
	reset();
	w.now += 5000;
	w.arm_rc = -EAGAIN;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.ppolls, 0);
	CU_ASSERT_EQUAL(w.naps, 1);
	CU_ASSERT_EQUAL(w.nap_last, 5000);
	CU_ASSERT_EQUAL(w.state_at_nap, DRNIC_PROGRESS_STATE_NAP);
	CU_ASSERT_EQUAL(atomic_load(&p->state), DRNIC_PROGRESS_STATE_AWAKE);
	CU_ASSERT_EQUAL(w.runs, 1);                      /* no last look */
}

/* An application call is inside at the last look: the helper hands the
 * last look over, and the call runs the engine on its way out. */
static void
leave_during_run(unsigned int nth)
{
	if (nth == 2)                                    /* the last look */
		drnic_progress_app_leave();
}

static void
test_handover(void)
{
	struct progress *p = &progress;
	unsigned int runs;

	reset();
	w.now += 5000;
	drnic_progress_app_enter();                      /* a poll, inside */
	atomic_store(&p->last_app_ns, T0 - 1000000);     /* quiet so far */
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.ppolls, 1);
	CU_ASSERT_EQUAL(cnt(&p->cnt.handovers), 1);
	/* The helper's sleep cleared the flag when it woke (it looks itself):
	 * hand over again, and this time the call leaves while it sleeps. */
	CU_ASSERT_FALSE(atomic_load(&p->handover));
	w.now += 5000;
	w.during_ppoll = NULL;
	runs = w.runs;
	w.idle = 0;                                      /* no sleep this time */
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.ppolls, 1);
	CU_ASSERT_EQUAL(cnt(&p->cnt.handovers), 2);
	CU_ASSERT_TRUE(atomic_load(&p->handover));
	runs = w.runs;
	drnic_progress_app_leave();                      /* the call leaves */
	CU_ASSERT_EQUAL(w.runs, runs + 1);               /* ... running the engine */
	CU_ASSERT_FALSE(atomic_load(&p->handover));
	drnic_progress_app_enter();
	drnic_progress_app_leave();                      /* no hand-over: no run */
	CU_ASSERT_EQUAL(w.runs, runs + 1);

	/* The call leaves during the last look, before it could see the flag:
	 * the helper takes the last look back and runs the engine again. */
	reset();
	w.now += 5000;
	drnic_progress_app_enter();
	atomic_store(&p->last_app_ns, T0 - 1000000);
	w.during_run = leave_during_run;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(cnt(&p->cnt.handover_self), 1);
	CU_ASSERT_EQUAL(cnt(&p->cnt.handovers), 0);
	CU_ASSERT_EQUAL(w.runs, 3);                      /* run, last look, taken back */

	/* Nobody inside: no hand-over at all. */
	reset();
	w.now += 5000;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(cnt(&p->cnt.handovers) + cnt(&p->cnt.handover_self), 0);
	CU_ASSERT_FALSE(atomic_load(&p->handover));
}

/* drnic_progress_posted() in each state. */
static void
test_posted(void)
{
	struct progress *p = &progress;

	reset();
	drnic_progress_posted();                         /* awake: it will look */
	CU_ASSERT_EQUAL(w.runs, 0);
	CU_ASSERT_EQUAL(pokes_pending(), 0);
	atomic_store(&p->state, DRNIC_PROGRESS_STATE_QUIET_NAP);
	drnic_progress_posted();                         /* it looks when it wakes */
	CU_ASSERT_EQUAL(w.runs, 0);
	atomic_store(&p->state, DRNIC_PROGRESS_STATE_STOPPED);
	drnic_progress_posted();
	CU_ASSERT_EQUAL(w.runs, 0);

	/* Last look, our run finds nothing (skipped): wake the helper. */
	atomic_store(&p->state, DRNIC_PROGRESS_STATE_LAST_LOOK);
	drnic_progress_posted();
	CU_ASSERT_EQUAL(w.runs, 1);
	CU_ASSERT_EQUAL(pokes_pending(), 1);
	/* Last look, our run did the work: no poke. */
	script_runs(1, (int[]){ 2 });
	drnic_progress_posted();
	CU_ASSERT_EQUAL(w.runs, 2);
	CU_ASSERT_EQUAL(pokes_pending(), 0);
	/* Asleep: our run is enough, never a poke. */
	atomic_store(&p->state, DRNIC_PROGRESS_STATE_ASLEEP);
	drnic_progress_posted();
	CU_ASSERT_EQUAL(w.runs, 3);
	CU_ASSERT_EQUAL(pokes_pending(), 0);
}

/* One sleep ended as told; returns the spin after it. */
static uint64_t
sleep_ends(int how, uint64_t slept)
{
	struct progress *p = &progress;

	w.pp_ret = how == 0 ? 0 : 1;
	w.pp_rev[0] = how == 1 ? POLLIN : 0;             /* 1: a frame */
	w.pp_rev[1] = how == 2 ? POLLIN : 0;             /* 2: a poke */
	w.pp_slept = slept;
	CU_ASSERT(step_until_sleep(100000) > 0);
	return p->spin_ns;
}

/* The spin grows to twice a short sleep a frame ended (at most the maximum),
 * halves after a long one or a timeout (not below the minimum), and the
 * helper keeps looking exactly that long after its last work. */
static void
test_spin_rules(void)
{
	struct progress *p = &progress;
	uint64_t from;

	reset();
	CU_ASSERT_EQUAL(p->spin_ns, 2000);
	CU_ASSERT_EQUAL(sleep_ends(1, 10000), 20000);    /* 2 x 10 us */
	CU_ASSERT_EQUAL(cnt(&p->cnt.spin_grows), 1);
	CU_ASSERT_EQUAL(sleep_ends(1, 5000), 40000);     /* 2 x the spin beats 2 x 5 us */
	CU_ASSERT_EQUAL(sleep_ends(1, 150000), 200000);  /* 300 us, capped at 200 */
	CU_ASSERT_EQUAL(cnt(&p->cnt.spin_max_ns), 200000);
	CU_ASSERT_EQUAL(sleep_ends(1, 200000), 100000);  /* not within the maximum: halve */
	CU_ASSERT_EQUAL(sleep_ends(2, 1000), 100000);    /* a poke: unchanged */
	CU_ASSERT_EQUAL(cnt(&p->cnt.pokes), 1);
	CU_ASSERT_EQUAL(sleep_ends(0, 0), 50000);        /* a timeout: halve */
	CU_ASSERT_EQUAL(cnt(&p->cnt.spin_grows), 3);
	CU_ASSERT_EQUAL(sleep_ends(0, 0), 25000);
	CU_ASSERT_EQUAL(sleep_ends(0, 0), 12500);
	CU_ASSERT_EQUAL(sleep_ends(0, 0), 6250);
	CU_ASSERT_EQUAL(sleep_ends(0, 0), 3125);
	CU_ASSERT_EQUAL(sleep_ends(0, 0), 2000);         /* the minimum */
	CU_ASSERT_EQUAL(sleep_ends(0, 0), 2000);
	CU_ASSERT_EQUAL(cnt(&p->cnt.spin_max_ns), 200000);

	/* With a 40 us spin, the helper looks 40 us after its wake-up, no less. */
	CU_ASSERT_EQUAL(sleep_ends(1, 20000), 40000);
	from = p->last_work;
	w.run_ns = 1000;
	w.arms = 0;
	while (w.arms == 0)
		progress_wait_step(p);
	CU_ASSERT(w.arm_at - from >= 40000);
	CU_ASSERT(w.arm_at - from < 40000 + w.run_ns);

	/* ... but not while the application calls: it runs the engine. */
	reset();
	p->quiet_ns = 0;                                 /* no quiet naps here */
	p->spin_ns = 40000;
	atomic_store(&p->last_app_ns, w.now);
	w.now += 1000;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.arms, 1);
}

/* While the application calls, the helper sleeps unarmed on a timer that
 * grows (up to 4 x progress_quiet_us); an application about to block makes
 * it arm at once, waking it from such a sleep. */
static void
app_waits_during_ppoll(void)
{
	drnic_progress_app_waits();
}

static void
test_quiet_naps(void)
{
	struct progress *p = &progress;

	reset();
	atomic_store(&p->last_app_ns, w.now - 10000);    /* it called 10 us ago */
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.ppolls, 1);
	CU_ASSERT_EQUAL(w.pp_nfds, 1);                   /* the poke only */
	CU_ASSERT_EQUAL(w.pp_timeout, 90000);            /* until it is quiet 100 us */
	CU_ASSERT_EQUAL(w.state_at_ppoll, DRNIC_PROGRESS_STATE_QUIET_NAP);
	CU_ASSERT_EQUAL(w.arms, 0);
	CU_ASSERT_EQUAL(w.runs, 0);
	CU_ASSERT_EQUAL(cnt(&p->cnt.quiet_naps), 1);
	/* It keeps calling: 200 us, then 400 us, and no more. */
	atomic_store(&p->last_app_ns, w.now);
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.pp_timeout, 200000);
	atomic_store(&p->last_app_ns, w.now);
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.pp_timeout, 400000);
	atomic_store(&p->last_app_ns, w.now);
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.pp_timeout, 400000);
	CU_ASSERT_EQUAL(w.arms, 0);
	/* The application blocks while the helper sleeps so: poked, and the
	 * next step arms although the application called just now. */
	atomic_store(&p->last_app_ns, w.now);
	w.during_ppoll = app_waits_during_ppoll;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(pokes_pending(), 1);
	w.during_ppoll = NULL;
	w.now += 5000;
	atomic_store(&p->last_app_ns, w.now);
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.arms, 1);
	CU_ASSERT_EQUAL(p->quiet_run, 0);
	/* Quiet for 100 us: it arms without being told. */
	reset();
	atomic_store(&p->last_app_ns, w.now - 100000);
	w.now += 5000;
	progress_wait_step(p);
	CU_ASSERT_EQUAL(w.arms, 1);
	CU_ASSERT_EQUAL(cnt(&p->cnt.quiet_naps), 0);
}

/* Napping mode: nap while the application drives the engine; else run, and
 * nap after 64 empty runs. */
static void
test_nap_mode(void)
{
	struct progress *p = &progress;
	unsigned int i;

	reset();
	p->wfd = -ENOTSUP;
	atomic_store(&p->last_app_ns, w.now - 1000);
	progress_nap_step(p);
	CU_ASSERT_EQUAL(w.naps, 1);
	CU_ASSERT_EQUAL(w.nap_last, 5000);
	CU_ASSERT_EQUAL(w.runs, 0);
	w.now += 20000;                                  /* quiet 2 naps and more */
	w.naps = 0;
	for (i = 0; i < PROGRESS_NAP_IDLE_RUNS - 1; i++)
		progress_nap_step(p);
	CU_ASSERT_EQUAL(w.naps, 0);
	CU_ASSERT_EQUAL(w.runs, PROGRESS_NAP_IDLE_RUNS - 1);
	progress_nap_step(p);
	CU_ASSERT_EQUAL(w.naps, 1);
	CU_ASSERT_EQUAL(w.state_at_nap, DRNIC_PROGRESS_STATE_NAP);
	CU_ASSERT_EQUAL(atomic_load(&p->state), DRNIC_PROGRESS_STATE_AWAKE);
	CU_ASSERT_EQUAL(cnt(&p->cnt.naps), 1);
	/* Work restarts the count. */
	script_runs(1, (int[]){ 1 });
	w.run_i = 0;
	w.runs = 0;
	w.naps = 0;
	for (i = 0; i < PROGRESS_NAP_IDLE_RUNS; i++)
		progress_nap_step(p);
	CU_ASSERT_EQUAL(w.naps, 0);
	progress_nap_step(p);
	CU_ASSERT_EQUAL(w.naps, 1);
}

/* A completing poll runs the engine until work comes, 8 us at most; when
 * nothing came, the helper is told to arm. */
static void
test_linger(void)
{
	struct progress *p = &progress;

	reset();
	script_runs(3, (int[]){ 0, 0, 1 });
	drnic_progress_linger();
	CU_ASSERT_EQUAL(w.runs, 3);
	CU_ASSERT_FALSE(atomic_load(&p->arm_now));
	w.runs = 0;
	drnic_progress_linger();
	CU_ASSERT_EQUAL(w.runs, 80);                     /* 8 us of 100 ns runs */
	CU_ASSERT_TRUE(atomic_load(&p->arm_now));
	/* Dedicated mode (no linger), or no helper: nothing. */
	reset();
	p->linger_ns = 0;
	drnic_progress_linger();
	CU_ASSERT_EQUAL(w.runs, 0);
	reset();
	atomic_store(&p->dev, NULL);
	drnic_progress_linger();
	CU_ASSERT_EQUAL(w.runs, 0);
}

/* Start and stop with the system's primitives (a real thread, napping on
 * the stubbed link that has no wake-up). */
static void
test_start_stop(void)
{
	struct progress *p = &progress;
	struct drnic_progress_opts o;
	struct drnic_progress_stats st;
	char buf[256];

	reset();
	close(p->poke_fd);
	memset(p, 0, sizeof(*p));
	p->ops = &progress_sys_ops;
	p->poke_fd = -1;
	o = (struct drnic_progress_opts){ .thread = 1, .wait = true, .spin_us = 2,
		.spin_max_us = 200, .sleep_us = 5, .quiet_us = 100, .slice_us = 100,
		.linger_us = 8 };
	CU_ASSERT_EQUAL(drnic_progress_stop(), -EALREADY);
	CU_ASSERT_EQUAL(drnic_progress_describe(buf, sizeof(buf)), -EALREADY);
	CU_ASSERT_EQUAL(drnic_progress_start(NULL, &o), -EINVAL);
	CU_ASSERT_EQUAL(drnic_progress_start(UT_DEV, NULL), -EINVAL);
	o.linger_us = 1001;
	CU_ASSERT_EQUAL(drnic_progress_start(UT_DEV, &o), -EINVAL);
	o.linger_us = 8;
	o.rt = 2;
	CU_ASSERT_EQUAL(drnic_progress_start(UT_DEV, &o), -EINVAL);
	o.rt = 0;
	CU_ASSERT_EQUAL(drnic_progress_state(), DRNIC_PROGRESS_STATE_STOPPED);
	CU_ASSERT_EQUAL_FATAL(drnic_progress_start(UT_DEV, &o), 0);
	CU_ASSERT_NOT_EQUAL(drnic_progress_state(), DRNIC_PROGRESS_STATE_STOPPED);
	CU_ASSERT_EQUAL(drnic_progress_start(UT_DEV, &o), -EBUSY);
	CU_ASSERT_EQUAL(drnic_progress_trace_set(NULL, NULL), -EBUSY);
	CU_ASSERT(drnic_progress_describe(buf, sizeof(buf)) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "napping 5 us (the link has no receive wake-up), realtime off");
	CU_ASSERT_EQUAL(drnic_progress_describe(NULL, 1), -EINVAL);
	CU_ASSERT_EQUAL(drnic_progress_stop(), 0);
	CU_ASSERT_EQUAL(drnic_progress_state(), DRNIC_PROGRESS_STATE_STOPPED);
	CU_ASSERT_EQUAL(drnic_progress_stop(), -EALREADY);
	CU_ASSERT_EQUAL(drnic_progress_stats_get(NULL), -EINVAL);
	CU_ASSERT_EQUAL(drnic_progress_stats_get(&st), 0);
	CU_ASSERT_EQUAL(st.state, DRNIC_PROGRESS_STATE_STOPPED);
	CU_ASSERT_EQUAL(drnic_progress_trace_set(NULL, NULL), 0);
	/* progress_wait = nap says so. */
	o.wait = false;
	CU_ASSERT_EQUAL_FATAL(drnic_progress_start(UT_DEV, &o), 0);
	CU_ASSERT(drnic_progress_describe(buf, sizeof(buf)) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "napping 5 us (progress_wait = nap), realtime off");
	CU_ASSERT_EQUAL(drnic_progress_stop(), 0);
}

/* drnic_progress_cq_wait() on the fake clock (inline mode, no helper, a
 * link with a wake-up): it polls for the spin, arms the CQ, looks once more,
 * sleeps on the channel and the link until a frame or the engine's timer,
 * returns the completion, or 0 at its timeout. */
static void
test_cq_wait(void)
{
	struct progress *p = &progress;
	struct drnic_wc wc[4];
	struct drnic_progress_stats st;

	reset();
	atomic_store(&p->dev, NULL);                     /* no helper */
	stub_wait_fd = 100;
	memset(&fcq, 0, sizeof(fcq));
	/* Argument errors. */
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(NULL, UT_CQ, wc, 4, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, NULL, wc, 4, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, NULL, 4, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, -2), -EINVAL);
	fcq.no_channel = true;
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, 10), -EINVAL);
	fcq.no_channel = false;
	CU_ASSERT_EQUAL(fcq.polls, 0);

	/* Busy: a completion within the spin is returned without arming. */
	fcq.ready_at = w.now + 1000;
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, 10), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 42);
	CU_ASSERT_EQUAL(fcq.notifies, 0);
	CU_ASSERT_EQUAL(w.ppolls, 0);

	/* It came between the spin's last poll and the arm: the look after
	 * arming finds it, no sleep (the lost wake-up that must not be). */
	fcq.ready_at = UINT64_MAX;
	fcq.ready_on_arm = true;
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, 10), 1);
	CU_ASSERT_EQUAL(fcq.notifies, 1);
	CU_ASSERT_EQUAL(w.ppolls, 0);
	CU_ASSERT_EQUAL(w.arms, 1);                      /* armed before the look... */
	CU_ASSERT_EQUAL(w.disarms, 1);                   /* ... and disarmed */
	fcq.ready_on_arm = false;

	/* Nothing comes: it spins 2 us, then sleeps on the channel and the link
	 * in 1 ms pieces (the engine's timers), and returns 0 at 10 ms. */
	fcq.polls = 0;
	w.ppolls = 0;
	w.pp_ret = 0;
	w.idle = UINT64_MAX;
	w.now = T0 * 2;
	w.pp_timeout_max = 0;
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, 10), 0);
	CU_ASSERT_EQUAL(w.pp_timeout_max, 1000000);
	CU_ASSERT(w.now >= T0 * 2 + 10000000);
	CU_ASSERT(w.now < T0 * 2 + 10000000 + 1000000);
	CU_ASSERT_EQUAL(w.pp_nfds, 2);
	CU_ASSERT_EQUAL(w.ppolls, 10);
	CU_ASSERT(fcq.polls >= 2000 / 100);              /* the spin's polls */
	CU_ASSERT_EQUAL(drnic_progress_stats_get(&st), 0);
	CU_ASSERT_EQUAL(st.wait_timeouts, 1);
	CU_ASSERT_EQUAL(st.wait_sleeps, 10);
	/* Each sleep was bounded by the engine's next timer. */
	w.idle = 30000;
	w.ppolls = 0;
	w.pp_timeout_max = 0;
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, 1), 0);
	CU_ASSERT_EQUAL(w.pp_timeout_max, 30000);
	CU_ASSERT(w.ppolls >= 30);

	/* A completion event ends a sleep: re-armed, the poll returns it. */
	w.idle = UINT64_MAX;
	w.ppolls = 0;
	fcq.notifies = 0;
	w.pp_ret = 1;
	w.pp_rev[0] = POLLIN;
	w.pp_slept = 50000;
	fcq.events = 1;
	fcq.ready_at = w.now + 20000;                    /* during the first sleep */
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, -1), 1);
	CU_ASSERT_EQUAL(w.ppolls, 1);
	CU_ASSERT_EQUAL(fcq.events, 0);                  /* taken and acknowledged */
	CU_ASSERT_EQUAL(drnic_progress_stats_get(&st), 0);
	CU_ASSERT_EQUAL(st.wait_events, 1);

	/* No wake-up on the link: naps of 5 us between runs. */
	stub_wait_fd = -ENOTSUP;
	w.pp_ret = 0;
	w.pp_rev[0] = 0;
	w.pp_slept = 0;
	w.ppolls = 0;
	w.pp_timeout_max = 0;
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, 1), 0);
	CU_ASSERT_EQUAL(w.pp_nfds, 1);
	CU_ASSERT_EQUAL(w.pp_timeout_max, 5000);
	CU_ASSERT(w.ppolls >= 190);
	/* timeout 0: one look, no sleep. */
	w.ppolls = 0;
	fcq.polls = 0;
	CU_ASSERT_EQUAL(drnic_progress_cq_wait(UT_DEV, UT_CQ, wc, 4, 0), 0);
	CU_ASSERT_EQUAL(fcq.polls, 1);
	CU_ASSERT_EQUAL(w.ppolls, 0);
	stub_wait_fd = -ENOTSUP;
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("progress", NULL, NULL);
	CU_ADD_TEST(s, test_state_names);
	CU_ADD_TEST(s, test_awake_last_look_asleep);
	CU_ADD_TEST(s, test_last_look_outcomes);
	CU_ADD_TEST(s, test_handover);
	CU_ADD_TEST(s, test_posted);
	CU_ADD_TEST(s, test_spin_rules);
	CU_ADD_TEST(s, test_quiet_naps);
	CU_ADD_TEST(s, test_nap_mode);
	CU_ADD_TEST(s, test_linger);
	CU_ADD_TEST(s, test_start_stop);
	CU_ADD_TEST(s, test_cq_wait);
	return ut_run_all();
}
