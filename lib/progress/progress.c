/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress helper (drnic_progress.h): a thread that runs the inline
 * engines while the application does not, and is never a second busy
 * spinner. Moved here from the drop-in libibverbs, figures unchanged
 * (lib/ibverbs/README.md, "Progress", has the measurements).
 *
 * Blocking mode (progress_wait = auto, when the device's link has a receive
 * wake-up, drnic_link_rx_wait_fd(): ethdev over net_af_packet). The helper
 * runs the engine while it finds work, keeps looking for a while (the spin),
 * then arms the wake-up, looks once more and sleeps in ppoll() until a frame
 * comes, the application pokes it, or the engine's next timer is due
 * (drnic_engine_idle_ns(), PROGRESS_WAIT_MS at most: the retransmit and RNR
 * timers further away).
 *
 * The spin adapts: it starts at progress_spin_us; a sleep that a frame ends
 * within progress_spin_max_us makes the next spin twice that sleep (at most
 * the maximum), a longer sleep or a timeout halves it. A steady stream with
 * gaps of tens of microseconds (a bandwidth server's helper, which does all
 * its engine's work: 16 frames a 64 KiB message, then a gap) then costs no
 * wake-up per burst (on the reference VM the wake-ups took ib_write_bw from
 * a median of 875 to 762 MB/s), and an idle or sparse link is back to
 * sleeping after a few sleeps. The helper spins only while the application
 * makes no calls (see progress_quiet_nap()), so it does not spin beside an
 * application that spins in drnic.
 *
 * SCHED_FIFO (progress_rt = on, or auto: when blocking; when permitted) is
 * off by default: on the 2-vCPU reference VM a SCHED_FIFO thread's wake-up
 * took 12-33 us against 4-6 us for SCHED_OTHER (the RT wake goes to another
 * CPU: an IPI, or an idle vCPU to wake), and ib_send_lat went from 7.7 to
 * 35.6 us with it. A SCHED_FIFO helper that finds work for PROGRESS_RT_BUSY_NS
 * without sleeping naps PROGRESS_RT_BREATH_NS, so it never starves its CPU.
 *
 * Napping (no wake-up, or progress_wait = nap): the helper runs the engine
 * when the application has not for ~2 naps and sleeps progress_sleep_us when
 * there is nothing to do. Its wake-up latency is what perftest's latency
 * tests measure then.
 *
 * The race a sleeper must close: a post while the helper takes its last
 * look. drnic_post_send() runs the engine inline but skips it while the
 * helper runs it; drnic_progress_posted() then looks at the helper's state.
 *
 * Everything the helper calls outside itself (clock, sleeps, the engine,
 * the wake-up) goes through progress_ops, so that test/unit/lib/progress
 * drives each step on a fake clock.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_log.h>

#include "drnic_engine.h"
#include "drnic_link.h"
#include "drnic_progress.h"

/*
 * The helper's log type, "drnic.progress", is registered when a helper
 * first starts, not when the library loads: with it registered at load,
 * drnic-perf's write latency, which never starts a helper, measured 7%
 * higher (median of per-round ratios over 12 alternated rounds). Why one
 * more DPDK log type costs that is not understood yet (doc/design-notes.md).
 */
static int progress_logtype = -1;
#define PROGRESS_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, progress_logtype >= 0 ? progress_logtype : RTE_LOGTYPE_USER1, \
		"progress: " fmt "\n", ##__VA_ARGS__)

#define PROGRESS_WAIT_MS 1
#define PROGRESS_RT_BUSY_NS (2 * 1000 * 1000ull)
#define PROGRESS_RT_BREATH_NS 20000
#define PROGRESS_QUIET_MIN_NS 2000
#define PROGRESS_QUIET_MAX_SHIFT 2   /* quiet naps grow up to 4 x progress_quiet_us */
#define PROGRESS_NAP_IDLE_RUNS 64    /* napping: empty runs before a nap */
/* drnic_progress_cq_wait() without a helper: drnic_config_init()'s figures. */
#define PROGRESS_DEFAULT_SPIN_NS 2000
#define PROGRESS_DEFAULT_SLEEP_NS 5000

static const char *const progress_state_names[DRNIC_PROGRESS_STATE_COUNT] = {
	[DRNIC_PROGRESS_STATE_STOPPED] = "stopped",
	[DRNIC_PROGRESS_STATE_AWAKE] = "awake",
	[DRNIC_PROGRESS_STATE_QUIET_NAP] = "quiet_nap",
	[DRNIC_PROGRESS_STATE_NAP] = "nap",
	[DRNIC_PROGRESS_STATE_LAST_LOOK] = "last_look",
	[DRNIC_PROGRESS_STATE_ASLEEP] = "asleep",
};

/* The world outside the helper's logic: the system's, or a unit test's. */
struct progress_ops {
	uint64_t (*now_ns)(void);                 /* CLOCK_MONOTONIC */
	void (*nap_ns)(uint64_t ns);              /* timed sleep */
	int (*ppoll)(struct pollfd *fds, nfds_t n, const struct timespec *ts);
	int (*run)(struct drnic_device *dev);     /* drnic_device_progress() */
	int (*idle_ns)(uint64_t *wait_ns);        /* drnic_engine_idle_ns() */
	int (*arm)(struct drnic_link *link, uint16_t queue);
	int (*disarm)(struct drnic_link *link, uint16_t queue);
};

static uint64_t
progress_sys_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
progress_sys_nap_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

static int
progress_sys_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts)
{
	return ppoll(fds, n, ts, NULL);
}

static const struct progress_ops progress_sys_ops = {
	.now_ns = progress_sys_now_ns,
	.nap_ns = progress_sys_nap_ns,
	.ppoll = progress_sys_ppoll,
	.run = drnic_device_progress,
	.idle_ns = drnic_engine_idle_ns,
	.arm = drnic_link_rx_wait_arm,
	.disarm = drnic_link_rx_wait_disarm,
};

/* The counters, written by the helper only (relaxed: read any time). */
struct progress_counters {
	_Atomic uint64_t sleeps, frames, pokes, timeouts, last_work, handovers, handover_self,
		naps, quiet_naps, spin_grows, spin_max_ns;
	/* drnic_progress_cq_wait(), from any thread */
	_Atomic uint64_t waits, wait_sleeps, wait_events, wait_timeouts;
};

#define PROGRESS_COUNT_MT(p, f) \
	atomic_fetch_add_explicit(&(p)->cnt.f, 1, memory_order_relaxed)
#define PROGRESS_COUNT(p, f) \
	atomic_store_explicit(&(p)->cnt.f, atomic_load_explicit(&(p)->cnt.f, \
				memory_order_relaxed) + 1, memory_order_relaxed)

/*
 * The helper. One per process: the inline engines are the process's. Each
 * group of fields says who writes it; the application's calls and the
 * helper each write their own cache line.
 */
struct progress {
	/* Set by drnic_progress_start() before the thread starts: read-only. */
	const struct progress_ops *ops;
	struct drnic_progress_opts opts;
	uint64_t spin_min_ns, spin_max_ns;  /* the spin's bounds */
	uint64_t sleep_ns;                  /* a nap */
	uint64_t quiet_ns, quiet_max_ns;    /* quiet naps: 0 = off */
	uint64_t linger_ns;                 /* 0 = off (dedicated mode) */
	struct drnic_link *link;
	int wfd;                            /* receive wake-up of queue 0, or -errno */
	int poke_fd;                        /* eventfd: wakes a sleeping helper */
	bool rt;
	const char *rt_what;                /* "off", "SCHED_FIFO", "refused" */
	void (*trace)(void *arg, enum drnic_progress_trace_event ev, bool begin, int result);
	void *trace_arg;
	pthread_t thread;
	bool on;                            /* thread running (start/stop only) */

	/* Written by application calls. */
	alignas(RTE_CACHE_LINE_SIZE) _Atomic uint64_t app_entries;
	_Atomic uint64_t app_exits;
	_Atomic uint64_t last_app_ns;       /* when a call last left */

	/* Written by the helper (and by the application: arm_now, handover). */
	alignas(RTE_CACHE_LINE_SIZE) atomic_int state;
	struct drnic_device *_Atomic dev;   /* NULL: stopping */
	atomic_bool stop;
	atomic_bool quiet_napping;
	atomic_bool arm_now;                /* the application asks the helper to arm */
	atomic_bool handover;               /* the last look is the application call's */

	/* The helper's own loop state. */
	alignas(RTE_CACHE_LINE_SIZE) uint64_t last_work, awake_since, spin_ns;
	unsigned int quiet_run;             /* quiet naps in a row */
	unsigned int nap_idle;              /* empty runs in a row (napping) */
	struct progress_counters cnt;
};

static struct progress progress = {
	.ops = &progress_sys_ops,
	.wfd = -ENOTSUP,
	.poke_fd = -1,
	.rt_what = "off",
	.state = DRNIC_PROGRESS_STATE_STOPPED,
};

const char *
drnic_progress_state_str(enum drnic_progress_state state)
{
	if ((unsigned int)state >= RTE_DIM(progress_state_names))
		return "unknown";
	return progress_state_names[state];
}

static inline void
progress_set_state(struct progress *p, enum drnic_progress_state st)
{
	atomic_store_explicit(&p->state, (int)st, memory_order_seq_cst);
}

static inline void
progress_trace(struct progress *p, enum drnic_progress_trace_event ev, bool begin, int result)
{
	if (unlikely(p->trace != NULL))
		p->trace(p->trace_arg, ev, begin, result);
}

static void
progress_poke(struct progress *p)
{
	uint64_t one = 1;

	if (p->poke_fd >= 0 && write(p->poke_fd, &one, sizeof(one)) < 0)
		(void)0;  /* EAGAIN: the counter is full, the helper wakes anyway */
}

static void
progress_poke_drain(struct progress *p)
{
	uint64_t v;

	if (read(p->poke_fd, &v, sizeof(v)) < 0)
		(void)0;  /* EAGAIN: another read took it */
}

/* Run the engine, if the helper has a device: the hooks' way in. */
static int
progress_kick(struct progress *p)
{
	struct drnic_device *d = atomic_load_explicit(&p->dev, memory_order_acquire);

	return d != NULL ? p->ops->run(d) : 0;
}

/* ------------------------------------------------------------------------ */
/* The application's calls                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The application's calls that run the engine (poll, post) are counted in
 * and out. The engine runs in one thread at a time and is skipped by the
 * others, so the helper's last look may be skipped by an application call
 * that had already looked at the link before the frame came; if that call
 * then returns a completion, the application may stop calling (perftest's
 * write_lat goes back to spinning on its buffer) and the frame waits for
 * PROGRESS_WAIT_MS. So when a call is inside at its last look, the helper
 * hands the last look over: the call runs the engine once more on its way
 * out.
 */
void
drnic_progress_app_enter(void)
{
	atomic_fetch_add_explicit(&progress.app_entries, 1, memory_order_seq_cst);
}

void
drnic_progress_app_leave(void)
{
	struct progress *p = &progress;

	atomic_store_explicit(&p->last_app_ns, p->ops->now_ns(), memory_order_relaxed);
	/* The exit before the hand-over flag; the helper: the flag before
	 * the exit count (one of us sees the other). */
	atomic_fetch_add_explicit(&p->app_exits, 1, memory_order_seq_cst);
	if (unlikely(atomic_load_explicit(&p->handover, memory_order_seq_cst)) &&
	    atomic_exchange_explicit(&p->handover, false, memory_order_relaxed))
		progress_kick(p);
}

/*
 * The application is about to block (arming a CQ, waiting for an event):
 * it will not run the engine, so the helper should not wait for it to go
 * quiet (see progress_quiet_nap()).
 */
void
drnic_progress_app_waits(void)
{
	struct progress *p = &progress;

	atomic_store_explicit(&p->arm_now, true, memory_order_seq_cst);
	if (atomic_load_explicit(&p->quiet_napping, memory_order_seq_cst))
		progress_poke(p);
}

/*
 * A poll returned completions: the application may now leave drnic for a
 * while (perftest's write latency test spins on its buffer). A link may
 * deliver the frames of one burst a few microseconds apart (af_packet over
 * veth: the kernel hands them over one by one), so the ACK that completed
 * the WQE can come alone, the peer's reply that left with it just after:
 * keep running the engine until something more comes, progress_linger_us at
 * most, so that the reply is in when the application looks for it.
 */
void
drnic_progress_linger(void)
{
	struct progress *p = &progress;
	struct drnic_device *d = atomic_load_explicit(&p->dev, memory_order_acquire);
	uint64_t t0;

	if (d == NULL || p->linger_ns == 0)
		return;
	t0 = p->ops->now_ns();
	do {
		if (p->ops->run(d) > 0)
			return;
	} while (p->ops->now_ns() - t0 < p->linger_ns);
	/* Nothing came: if the application now waits on its buffer for
	 * what is late, only the helper can bring it in. */
	drnic_progress_app_waits();
}

/*
 * After a post: make sure the engine sees it although the helper may be
 * going to sleep. The post's doorbell is published before the state is read
 * (fence); the helper publishes its state before its last look (fence too):
 *  - AWAKE (and its naps): the helper's last look comes after our doorbell:
 *    it sees it;
 *  - LAST_LOOK: our inline run may have been skipped while the helper held
 *    the engine, and its look may have missed the doorbell: run the engine;
 *    if that found nothing (or was skipped again), wake the helper (rare);
 *  - ASLEEP: the helper no longer holds the engine: one more run of ours
 *    does what the skipped one did not (cheap when there is nothing).
 */
void
drnic_progress_posted(void)
{
	struct progress *p = &progress;
	int st;

	atomic_thread_fence(memory_order_seq_cst);
	st = atomic_load_explicit(&p->state, memory_order_relaxed);
	if (likely(st != DRNIC_PROGRESS_STATE_LAST_LOOK && st != DRNIC_PROGRESS_STATE_ASLEEP))
		return;
	if (progress_kick(p) > 0 || st == DRNIC_PROGRESS_STATE_ASLEEP)
		return;
	progress_poke(p);
}

/* ------------------------------------------------------------------------ */
/* The helper's loops, one step at a time                                    */
/* ------------------------------------------------------------------------ */

/* Napping mode: the helper before the receive wake-up existed. */
static void
progress_nap_step(struct progress *p)
{
	const struct progress_ops *o = p->ops;
	struct drnic_device *d = atomic_load_explicit(&p->dev, memory_order_acquire);
	uint64_t quiet_ns = p->sleep_ns * 2 + 2000;

	if (d == NULL) {
		o->nap_ns(p->sleep_ns);
		return;
	}
	if (o->now_ns() - atomic_load_explicit(&p->last_app_ns, memory_order_relaxed) < quiet_ns) {
		/* The application drives the engine itself. */
		p->nap_idle = 0;
		o->nap_ns(p->sleep_ns);
		return;
	}
	if (o->run(d) > 0) {
		p->nap_idle = 0;
		return;
	}
	if (++p->nap_idle < PROGRESS_NAP_IDLE_RUNS)
		return;
	p->nap_idle = 0;
	PROGRESS_COUNT(p, naps);
	progress_set_state(p, DRNIC_PROGRESS_STATE_NAP);
	o->nap_ns(p->sleep_ns);
	progress_set_state(p, DRNIC_PROGRESS_STATE_AWAKE);
}

/*
 * While the application calls drnic (polls, posts), it runs the engine
 * itself: a helper sleeping on the receive wake-up would be woken by every
 * frame, for nothing, and that costs the sender (the kernel wakes us in its
 * send path) and the CPU an application spins on (with 2 CPUs and 2
 * spinning processes, the woken helper preempts one of them). So the helper
 * arms the wake-up only once the application has been quiet for
 * progress_quiet_us; until then it sleeps on its timer (and the poke).
 * Returns true after such a sleep.
 */
static bool
progress_quiet_nap(struct progress *p)
{
	const struct progress_ops *o = p->ops;
	uint64_t now = o->now_ns();
	int64_t since = (int64_t)(now - atomic_load_explicit(&p->last_app_ns,
							      memory_order_relaxed));
	struct pollfd pfd;
	struct timespec ts;
	uint64_t ns;
	int n;

	if (since >= (int64_t)p->quiet_ns ||
	    atomic_exchange_explicit(&p->arm_now, false, memory_order_seq_cst)) {
		p->quiet_run = 0;
		return false;
	}
	/* The longer the application keeps calling, the longer we sleep
	 * (each wake-up costs it a preemption on a busy CPU). */
	ns = p->quiet_ns << (p->quiet_run < 16 ? p->quiet_run : 16);
	if (ns > p->quiet_max_ns)
		ns = p->quiet_max_ns;
	ns -= (uint64_t)(since > 0 ? since : 0);
	if (ns < PROGRESS_QUIET_MIN_NS)
		ns = PROGRESS_QUIET_MIN_NS;
	p->quiet_run++;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	pfd.fd = p->poke_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	progress_trace(p, DRNIC_PROGRESS_TRACE_QUIET_SLEEP, true, 0);
	atomic_store_explicit(&p->quiet_napping, true, memory_order_seq_cst);
	/* An application about to block said so before we looked: go. */
	if (atomic_load_explicit(&p->arm_now, memory_order_seq_cst)) {
		atomic_store_explicit(&p->quiet_napping, false, memory_order_relaxed);
		return true;
	}
	progress_set_state(p, DRNIC_PROGRESS_STATE_QUIET_NAP);
	n = o->ppoll(&pfd, 1, &ts);
	progress_set_state(p, DRNIC_PROGRESS_STATE_AWAKE);
	atomic_store_explicit(&p->quiet_napping, false, memory_order_relaxed);
	progress_trace(p, DRNIC_PROGRESS_TRACE_QUIET_SLEEP, false, n);
	PROGRESS_COUNT(p, quiet_naps);
	if (n > 0 && (pfd.revents & POLLIN))
		progress_poke_drain(p);
	return true;
}

/* Adapt the spin to how soon frames come after the helper sleeps (at
 * @p slept_from): a frame, a timeout, or neither (a poke). */
static void
progress_spin_adapt(struct progress *p, bool frame, bool timeout, uint64_t slept_from)
{
	if (frame) {
		uint64_t slept = p->ops->now_ns() - slept_from;

		if (slept < p->spin_max_ns) {
			p->spin_ns = RTE_MIN(p->spin_max_ns, RTE_MAX(2 * p->spin_ns, 2 * slept));
			PROGRESS_COUNT(p, spin_grows);
			if (p->spin_ns > atomic_load_explicit(&p->cnt.spin_max_ns,
							      memory_order_relaxed))
				atomic_store_explicit(&p->cnt.spin_max_ns, p->spin_ns,
						      memory_order_relaxed);
		} else {
			p->spin_ns = RTE_MAX(p->spin_min_ns, p->spin_ns / 2);
		}
	} else if (timeout) {
		p->spin_ns = RTE_MAX(p->spin_min_ns, p->spin_ns / 2);
	}
}

/* Blocking mode, on queue 0's receive wake-up. */
static void
progress_wait_step(struct progress *p)
{
	const struct progress_ops *o = p->ops;
	struct drnic_device *d = atomic_load_explicit(&p->dev, memory_order_acquire);
	struct pollfd pfd[2];
	struct timespec ts;
	uint64_t now, exits, idle_ns;
	bool inside;
	int n, work;

	if (d == NULL) {
		o->nap_ns(p->sleep_ns);
		return;
	}
	if (p->quiet_ns > 0 && progress_quiet_nap(p))
		return;
	progress_trace(p, DRNIC_PROGRESS_TRACE_RUN, true, 0);
	if ((work = o->run(d)) > 0) {
		progress_trace(p, DRNIC_PROGRESS_TRACE_RUN, false, work);
		now = o->now_ns();
		p->last_work = now;
		if (p->rt && now - p->awake_since > PROGRESS_RT_BUSY_NS) {
			/* Let the CPU's other threads run. */
			PROGRESS_COUNT(p, naps);
			o->nap_ns(PROGRESS_RT_BREATH_NS);
			p->awake_since = o->now_ns();
		}
		return;
	}
	now = o->now_ns();
	/* Frames of a burst come close together: keep looking a while
	 * (not when the application polls: it runs the engine). */
	if (now - p->last_work < p->spin_ns &&
	    now - atomic_load_explicit(&p->last_app_ns, memory_order_relaxed) > p->spin_ns)
		return;

	progress_set_state(p, DRNIC_PROGRESS_STATE_LAST_LOOK);
	atomic_thread_fence(memory_order_seq_cst);
	if (o->arm(p->link, 0) < 0) {
		/* -EAGAIN: fault injection holds frames on timers. */
		progress_set_state(p, DRNIC_PROGRESS_STATE_NAP);
		PROGRESS_COUNT(p, naps);
		o->nap_ns(p->sleep_ns);
		progress_set_state(p, DRNIC_PROGRESS_STATE_AWAKE);
		p->last_work = p->awake_since = o->now_ns();
		return;
	}
	/* The last look, armed: a frame from now on wakes us. */
	exits = atomic_load_explicit(&p->app_exits, memory_order_seq_cst);
	inside = atomic_load_explicit(&p->app_entries, memory_order_seq_cst) != exits;
	work = o->run(d);
	if (work == 0 && inside) {
		/* An application call may hold the engine: hand over, or look
		 * again if it left before it could see that. */
		atomic_store_explicit(&p->handover, true, memory_order_seq_cst);
		if (atomic_load_explicit(&p->app_exits, memory_order_seq_cst) != exits) {
			PROGRESS_COUNT(p, handover_self);
			work = o->run(d);
		} else {
			PROGRESS_COUNT(p, handovers);
		}
	}
	if (work > 0) {
		progress_set_state(p, DRNIC_PROGRESS_STATE_AWAKE);
		(void)o->disarm(p->link, 0);
		PROGRESS_COUNT(p, last_work);
		p->last_work = o->now_ns();
		return;
	}
	/* Sleep no longer than the engines may wait: ACKs held for a reply to
	 * go with, a timer due within the millisecond. */
	if (o->idle_ns(&idle_ns) == 0 && idle_ns == 0) {
		progress_set_state(p, DRNIC_PROGRESS_STATE_AWAKE);
		(void)o->disarm(p->link, 0);
		return;
	}
	if (idle_ns > (uint64_t)PROGRESS_WAIT_MS * 1000000u)
		idle_ns = (uint64_t)PROGRESS_WAIT_MS * 1000000u;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)idle_ns;
	progress_set_state(p, DRNIC_PROGRESS_STATE_ASLEEP);
	pfd[0].fd = p->wfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = p->poke_fd;
	pfd[1].events = POLLIN;
	pfd[0].revents = pfd[1].revents = 0;
	progress_trace(p, DRNIC_PROGRESS_TRACE_ARMED_SLEEP, true, 0);
	now = o->now_ns();
	n = o->ppoll(pfd, 2, &ts);
	progress_trace(p, DRNIC_PROGRESS_TRACE_ARMED_SLEEP, false,
		       n > 0 ? (pfd[0].revents & POLLIN ? 1 : 2) : 0);
	progress_spin_adapt(p, n > 0 && (pfd[0].revents & POLLIN), n == 0, now);
	progress_set_state(p, DRNIC_PROGRESS_STATE_AWAKE);
	/* Awake: the helper looks itself. */
	atomic_store_explicit(&p->handover, false, memory_order_relaxed);
	(void)o->disarm(p->link, 0);
	PROGRESS_COUNT(p, sleeps);
	if (n == 0) {
		PROGRESS_COUNT(p, timeouts);
	} else if (n > 0) {
		if (pfd[1].revents & POLLIN) {
			PROGRESS_COUNT(p, pokes);
			progress_poke_drain(p);
		}
		if (pfd[0].revents & POLLIN)
			PROGRESS_COUNT(p, frames);
	}
	p->last_work = p->awake_since = o->now_ns();
}

/* sched_setattr(2)'s argument (linux/sched/types.h clashes with sched.h). */
struct progress_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

static void *
progress_main(void *arg)
{
	struct progress *p = arg;

	if (!p->rt && p->opts.slice_us > 0 && p->wfd >= 0) {
		/* A short slice: the kernel's scheduler (EEVDF, Linux >= 6.12)
		 * lets a waking task with a shorter slice preempt one that
		 * spins on its CPU; with the default slice a woken helper may
		 * wait milliseconds behind two spinning applications. Older
		 * kernels take the value and ignore it (or refuse: EINVAL).
		 * Not when napping: a helper that wakes every few microseconds
		 * would preempt the application each time. */
		struct progress_sched_attr at = {
			.size = sizeof(at),
			.sched_policy = SCHED_OTHER,
			.sched_runtime = (uint64_t)p->opts.slice_us * 1000,
		};

		errno = 0;
		at.sched_nice = getpriority(PRIO_PROCESS, 0);  /* keep ours */
		if (errno != 0)
			at.sched_nice = 0;
		(void)syscall(SYS_sched_setattr, 0, &at, 0);
	}
	/* Timed sleeps as asked, not up to 50 us late (the default slack). */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	if (p->wfd >= 0) {
		uint64_t now = p->ops->now_ns();

		p->last_work = p->awake_since = now;
		p->spin_ns = p->spin_min_ns;
		while (!atomic_load_explicit(&p->stop, memory_order_relaxed))
			progress_wait_step(p);
	} else {
		p->nap_idle = 0;
		while (!atomic_load_explicit(&p->stop, memory_order_relaxed))
			progress_nap_step(p);
	}
	return NULL;
}

/* The figures of @p o, derived once (the helper reads them, never @p o). */
static int
progress_configure(struct progress *p, const struct drnic_progress_opts *o, bool inl)
{
	if (o->spin_us > 1000000 || o->spin_max_us > 1000000 || o->sleep_us > 1000000 ||
	    o->quiet_us > 1000000 || o->slice_us > 100000 || o->linger_us > 1000 ||
	    o->rt < -1 || o->rt > 1)
		return -EINVAL;
	p->opts = *o;
	p->sleep_ns = (uint64_t)(o->sleep_us ? o->sleep_us : 1) * 1000;
	p->spin_min_ns = (uint64_t)o->spin_us * 1000;
	p->spin_max_ns = RTE_MAX((uint64_t)o->spin_max_us * 1000, p->spin_min_ns);
	p->quiet_ns = (uint64_t)o->quiet_us * 1000;
	p->quiet_max_ns = p->quiet_ns << PROGRESS_QUIET_MAX_SHIFT;
	/* Inline progress only: there the poll runs the engine. */
	p->linger_ns = inl ? (uint64_t)o->linger_us * 1000 : 0;
	return 0;
}

int
drnic_progress_start(struct drnic_device *dev, const struct drnic_progress_opts *opts)
{
	struct progress *p = &progress;
	struct sched_param sp = { .sched_priority = 1 };
	struct drnic_device_attr da;
	int wfd = -ENOTSUP, rc;

	if (dev == NULL || opts == NULL)
		return -EINVAL;
	if (p->on)
		return -EBUSY;
	if (progress_logtype < 0)
		progress_logtype = rte_log_register_type_and_pick_level("drnic.progress",
									RTE_LOG_NOTICE);
	rc = drnic_query_device(dev, &da);
	if (rc < 0)
		return rc;
	rc = progress_configure(p, opts, da.progress == DRNIC_PROGRESS_INLINE);
	if (rc < 0)
		return rc;
	memset(&p->cnt, 0, sizeof(p->cnt));
	p->link = drnic_device_link(dev);
	if (opts->wait && p->link != NULL) {
		/* Queue 0: the ethdev driver receives every frame there. */
		wfd = drnic_link_rx_wait_fd(p->link, 0);
		if (wfd >= 0) {
			p->poke_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			if (p->poke_fd < 0)
				return -errno;
		}
	}
	p->wfd = wfd;
	/* SCHED_FIFO by default only when the helper blocks: a napping
	 * SCHED_FIFO helper stalled RC transfers on 2 CPUs. */
	p->rt = opts->rt == 1 || (opts->rt < 0 && wfd >= 0);
	p->rt_what = "off";
	atomic_store(&p->stop, false);
	atomic_store(&p->arm_now, false);
	atomic_store(&p->handover, false);
	atomic_store_explicit(&p->dev, dev, memory_order_release);
	progress_set_state(p, DRNIC_PROGRESS_STATE_AWAKE);
	rc = EPERM;
	if (p->rt) {
		/* Born SCHED_FIFO, or not at all: the thread reads its mode once. */
		pthread_attr_t at;

		pthread_attr_init(&at);
		if (pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED) == 0 &&
		    pthread_attr_setschedpolicy(&at, SCHED_FIFO) == 0 &&
		    pthread_attr_setschedparam(&at, &sp) == 0)
			rc = pthread_create(&p->thread, &at, progress_main, p);
		pthread_attr_destroy(&at);
		/* Without CAP_SYS_NICE (or RLIMIT_RTPRIO): SCHED_OTHER. */
		p->rt_what = rc == 0 ? "SCHED_FIFO" : "refused";
		p->rt = rc == 0;
	}
	if (rc != 0)
		rc = pthread_create(&p->thread, NULL, progress_main, p);
	if (rc != 0) {
		PROGRESS_LOG(ERR, "cannot start the progress thread: %s", strerror(rc));
		atomic_store(&p->dev, NULL);
		progress_set_state(p, DRNIC_PROGRESS_STATE_STOPPED);
		if (p->poke_fd >= 0)
			close(p->poke_fd);
		p->poke_fd = -1;
		return -rc;
	}
	pthread_setname_np(p->thread, "drnic-progress");
	p->on = true;
	return 0;
}

int
drnic_progress_stop(void)
{
	struct progress *p = &progress;

	if (!p->on)
		return -EALREADY;
	atomic_store(&p->dev, NULL);
	atomic_store(&p->stop, true);
	progress_poke(p);
	pthread_join(p->thread, NULL);
	p->on = false;
	progress_set_state(p, DRNIC_PROGRESS_STATE_STOPPED);
	if (p->poke_fd >= 0)
		close(p->poke_fd);
	p->poke_fd = -1;
	return 0;
}

int
drnic_progress_trace_set(void (*fn)(void *arg, enum drnic_progress_trace_event ev, bool begin,
				    int result),
			 void *arg)
{
	if (progress.on)
		return -EBUSY;
	progress.trace = fn;
	progress.trace_arg = arg;
	return 0;
}

enum drnic_progress_state
drnic_progress_state(void)
{
	return (enum drnic_progress_state)atomic_load_explicit(&progress.state,
							       memory_order_relaxed);
}

int
drnic_progress_stats_get(struct drnic_progress_stats *stats)
{
	const struct progress_counters *c = &progress.cnt;

	if (stats == NULL)
		return -EINVAL;
	memset(stats, 0, sizeof(*stats));
	stats->state = drnic_progress_state();
	stats->sleeps = atomic_load_explicit(&c->sleeps, memory_order_relaxed);
	stats->frames = atomic_load_explicit(&c->frames, memory_order_relaxed);
	stats->pokes = atomic_load_explicit(&c->pokes, memory_order_relaxed);
	stats->timeouts = atomic_load_explicit(&c->timeouts, memory_order_relaxed);
	stats->last_work = atomic_load_explicit(&c->last_work, memory_order_relaxed);
	stats->handovers = atomic_load_explicit(&c->handovers, memory_order_relaxed);
	stats->handover_self = atomic_load_explicit(&c->handover_self, memory_order_relaxed);
	stats->naps = atomic_load_explicit(&c->naps, memory_order_relaxed);
	stats->quiet_naps = atomic_load_explicit(&c->quiet_naps, memory_order_relaxed);
	stats->spin_grows = atomic_load_explicit(&c->spin_grows, memory_order_relaxed);
	stats->spin_max_ns = atomic_load_explicit(&c->spin_max_ns, memory_order_relaxed);
	stats->waits = atomic_load_explicit(&c->waits, memory_order_relaxed);
	stats->wait_sleeps = atomic_load_explicit(&c->wait_sleeps, memory_order_relaxed);
	stats->wait_events = atomic_load_explicit(&c->wait_events, memory_order_relaxed);
	stats->wait_timeouts = atomic_load_explicit(&c->wait_timeouts, memory_order_relaxed);
	return 0;
}

int
drnic_progress_describe(char *buf, size_t size)
{
	const struct progress *p = &progress;

	if (buf == NULL || size == 0)
		return -EINVAL;
	if (!p->on)
		return -EALREADY;
	if (p->wfd >= 0)
		return snprintf(buf, size, "blocking on the receive wake-up of %s (spin %u..%u us, "
				"timeout %d ms, quiet %" PRIu64 " us, slice %u us), realtime %s",
				drnic_link_name(p->link), p->opts.spin_us,
				RTE_MAX(p->opts.spin_max_us, p->opts.spin_us), PROGRESS_WAIT_MS,
				p->quiet_ns / 1000, p->opts.slice_us, p->rt_what);
	return snprintf(buf, size, "napping %" PRIu64 " us (%s), realtime %s", p->sleep_ns / 1000,
			!p->opts.wait ? "progress_wait = nap" :
			p->wfd == -ENOTSUP ? "the link has no receive wake-up" : strerror(-p->wfd),
			p->rt_what);
}

/* ------------------------------------------------------------------------ */
/* One call: poll while busy, sleep while idle                              */
/* ------------------------------------------------------------------------ */

/* A poll of the waiting thread, announced to the helper like the drop-in's. */
static int
progress_cq_poll(struct drnic_cq *cq, struct drnic_wc *wc, int num_entries)
{
	int n;

	drnic_progress_app_enter();
	n = drnic_cq_poll(cq, num_entries, wc);
	drnic_progress_app_leave();
	return n;
}

/* Take the channel's events (all of them: the channel is this CQ's) and
 * acknowledge them. Returns true when one was @p cq's: it is disarmed. */
static bool
progress_cq_events(struct drnic_comp_channel *ch, struct drnic_cq *cq)
{
	struct drnic_cq *ecq;
	bool ours = false;

	while (drnic_try_get_cq_event(ch, &ecq, NULL) == 0) {
		drnic_ack_cq_events(ecq, 1);
		ours = ours || ecq == cq;
	}
	return ours;
}

int
drnic_progress_cq_wait(struct drnic_device *dev, struct drnic_cq *cq, struct drnic_wc *wc,
		       int num_entries, int timeout_ms)
{
	struct progress *p = &progress;
	const struct progress_ops *o = p->ops;
	struct drnic_comp_channel *ch;
	struct drnic_device_attr da;
	struct drnic_link *link = NULL;
	uint64_t t0, now, deadline, spin_ns;
	bool engine_is_ours, armed = false;
	int n, rc, wfd = -ENOTSUP;

	if (dev == NULL || cq == NULL || wc == NULL || num_entries < 1 || timeout_ms < -1)
		return -EINVAL;
	ch = drnic_cq_channel(cq);
	if (ch == NULL)
		return -EINVAL;
	rc = drnic_query_device(dev, &da);
	if (rc < 0)
		return rc;
	PROGRESS_COUNT_MT(p, waits);
	/* Inline mode without a helper: nobody runs the engine while we
	 * sleep, so the sleep must be the helper's (wake-up or naps). */
	engine_is_ours = da.progress == DRNIC_PROGRESS_INLINE &&
			 atomic_load_explicit(&p->dev, memory_order_acquire) == NULL;
	spin_ns = p->on ? p->spin_min_ns : PROGRESS_DEFAULT_SPIN_NS;
	t0 = o->now_ns();
	deadline = timeout_ms < 0 ? UINT64_MAX : t0 + (uint64_t)timeout_ms * 1000000u;

	/* Busy: poll for the spin. */
	for (;;) {
		n = progress_cq_poll(cq, wc, num_entries);
		if (n != 0)
			return n;
		now = o->now_ns();
		if (now >= deadline)
			goto timeout;
		if (now - t0 >= spin_ns)
			break;
	}
	if (engine_is_ours) {
		link = drnic_device_link(dev);
		if (link != NULL)
			wfd = drnic_link_rx_wait_fd(link, 0);
	}
	for (;;) {
		struct pollfd pfd[2];
		struct timespec ts;
		uint64_t sleep_ns, idle_ns;
		bool link_armed = false;

		if (!armed) {
			/* Arm, then look once more: a completion added
			 * before the arm is in the CQ, one after fires the
			 * channel (cq.c: "Notification"). */
			rc = drnic_cq_req_notify(cq, 0);
			if (rc < 0)
				return rc;
			armed = true;
			drnic_progress_app_waits();      /* a helper arms at once */
		}
		/* The link's wake-up too, before the last look, as the helper. */
		if (wfd >= 0)
			link_armed = o->arm(link, 0) == 0;
		n = progress_cq_poll(cq, wc, num_entries);
		now = o->now_ns();
		if (n != 0 || now >= deadline) {
			if (link_armed)
				(void)o->disarm(link, 0);
			if (n != 0)
				return n;
			goto timeout;
		}
		sleep_ns = deadline - now;
		if (link_armed) {
			/* Until a frame or the engine's next timer (1 ms). */
			if (o->idle_ns(&idle_ns) == 0 && idle_ns == 0) {
				(void)o->disarm(link, 0);
				continue;
			}
			sleep_ns = RTE_MIN(sleep_ns,
					   RTE_MIN(idle_ns, (uint64_t)PROGRESS_WAIT_MS * 1000000u));
		} else if (engine_is_ours) {
			/* No wake-up: nap, and run the engine in between. */
			sleep_ns = RTE_MIN(sleep_ns, p->on ? p->sleep_ns : PROGRESS_DEFAULT_SLEEP_NS);
		}
		pfd[0].fd = drnic_comp_channel_fd(ch);
		pfd[0].events = POLLIN;
		pfd[1].fd = wfd;
		pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		ts.tv_sec = (time_t)(sleep_ns / 1000000000ull);
		ts.tv_nsec = (long)(sleep_ns % 1000000000ull);
		PROGRESS_COUNT_MT(p, wait_sleeps);
		/* No limit but the caller's, and the caller's is none: NULL. */
		n = o->ppoll(pfd, link_armed ? 2 : 1,
			     deadline == UINT64_MAX && !engine_is_ours ? NULL : &ts);
		rc = n < 0 ? -errno : 0;
		if (link_armed)
			(void)o->disarm(link, 0);
		if (rc < 0)
			return rc;
		if (n > 0 && (pfd[0].revents & POLLIN) && progress_cq_events(ch, cq)) {
			PROGRESS_COUNT_MT(p, wait_events);
			armed = false;
		}
	}
timeout:
	PROGRESS_COUNT_MT(p, wait_timeouts);
	return 0;
}
