/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic's libibverbs.so.1: configuration, EAL start, the device list,
 * contexts, device/port/GID queries, async events and the progress helper.
 *
 * Configuration: DRNIC_CONFIG names an INI file. [device] (and [device.NAME])
 * are drnic_config_load()'s, the progress helper's progress_* keys among them
 * (config/drnic.ini); [eal] and [ibverbs] are read here:
 *
 *   [eal]      lcores = 0            EAL core list (default: every allowed CPU)
 *              file_prefix = NAME    --file-prefix (default: private memory)
 *              mem_mb = 256          memory to reserve
 *              args = --vdev=...     extra EAL arguments, split on spaces
 *              log_level = 4         DPDK log level (default 4, errors)
 *   [ibverbs]  vendor_id = 0x02c9    reported vendor id
 *              vendor_part_id = 4119 reported part id (4119: ConnectX-5)
 *              hw_ver = 0
 *              port_state = always_active | link
 *              peer_ipv4 = A.B.C.D   destination of AVs without a GRH
 *              progress_* = ...      still taken here (where they were first),
 *                                    as [device]'s: drnic_config_set()
 *
 * Environment overrides: DRNIC_VENDOR_ID, DRNIC_VENDOR_PART_ID.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <rte_branch_prediction.h>
#include <rte_cfgfile.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "drnic_engine.h"
#include "drnic_env.h"
#include "ibv_priv.h"

#undef ibv_query_port

/* Default reported ids: drnic's vendor id (as Soft-RoCE's: no OUI) and an
 * unknown part. */
#define DIBV_DEFAULT_VENDOR_ID DRNIC_VENDOR_ID
#define DIBV_DEFAULT_PART_ID 0x0d1c

static pthread_mutex_t dibv_lock = PTHREAD_MUTEX_INITIALIZER;
static bool dibv_started;
static int dibv_start_err;
static struct dibv_device *dibv_devs[1];
static int dibv_nb_devs;

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

int
dibv_errno(int neg)
{
	int e = neg < 0 ? -neg : neg;

	if (e == 0)
		e = EINVAL;
	errno = e;
	return e;
}

static uint64_t
dibv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* Progress helper                                                          */
/* ------------------------------------------------------------------------ */

/*
 * In inline progress mode the engine moves only inside drnic calls. Verbs
 * programs do not always make them: perftest's latency tests spin on the
 * last byte of their buffer, a bandwidth server waits on its TCP socket, an
 * event-driven program sleeps in ibv_get_cq_event(). The helper thread runs
 * the engine when the application does not, and is never a second busy
 * spinner. It works in one of two modes:
 *
 * Blocking (progress_wait = auto, when the device's link has a receive
 * wake-up, drnic_link_rx_wait_fd(): ethdev over net_af_packet). The helper
 * runs the engine while it finds work, keeps looking for a while (the spin),
 * then arms the wake-up, looks once more and sleeps in poll() until a frame
 * comes, the application pokes it, or DIBV_WAIT_MS passes. The timeout keeps
 * the engine's timers (retransmit, RNR wait: milliseconds) alive, as the
 * public API does not say when the next one is due.
 *
 * The spin adapts: it starts at progress_spin_us; a sleep that a frame ends
 * within progress_spin_max_us makes the next spin twice that sleep (at most
 * the maximum), a longer sleep or a timeout halves it. A steady stream with
 * gaps of tens of microseconds (a bandwidth server's helper, which does all
 * its engine's work: 16 frames a 64 KiB message, then a gap) then costs no
 * wake-up per burst (on the reference VM the wake-ups took ib_write_bw from
 * a median of 875 to 762 MB/s), and an idle or sparse
 * link is back to sleeping after a few sleeps. The helper spins only while
 * the application makes no calls (see dibv_helper_quiet_nap()), so it does
 * not spin beside an application that spins in drnic.
 *
 * SCHED_FIFO (progress_rt = on, or auto: when blocking; when permitted) is
 * off by default: on the 2-vCPU reference VM a SCHED_FIFO thread's wake-up
 * took 12-33 us against 4-6 us for SCHED_OTHER (the RT wake goes to another
 * CPU: an IPI, or an idle vCPU to wake), and ib_send_lat went from 7.7 to
 * 35.6 us with it. A SCHED_FIFO helper that finds work for DIBV_RT_BUSY_NS
 * without sleeping naps DIBV_RT_BREATH_NS, so it never starves its CPU.
 *
 * Napping (no wake-up, or progress_wait = nap): the helper runs the engine
 * when the application has not for ~2 naps and sleeps progress_sleep_us when
 * there is nothing to do. Its wake-up latency is what perftest's latency
 * tests measure then.
 *
 * The race a sleeper must close: a post while the helper takes its last
 * look. drnic_post_send() runs the engine inline but skips it while the
 * helper runs it; dibv_posted() then looks at the helper's state.
 */
#define DIBV_WAIT_MS 1
#define DIBV_RT_BUSY_NS (2 * 1000 * 1000ull)
#define DIBV_RT_BREATH_NS 20000

enum dibv_helper_state {
	DIBV_HELPER_AWAKE,    /* looks at the engine again before sleeping */
	DIBV_HELPER_LAST,     /* armed, taking its last look */
	DIBV_HELPER_ASLEEP,   /* looked for the last time: sleeping, or about to */
};

/* What the helper did, for DRNIC_IBV_DEBUG (written by the helper only,
 * read after the join). */
struct dibv_helper_stats {
	uint64_t sleeps;      /* poll() calls on the wake-up */
	uint64_t frames;      /* ... that the link's wake-up ended */
	uint64_t pokes;       /* ... that the application ended */
	uint64_t timeouts;    /* ... that ended on DIBV_WAIT_MS */
	uint64_t last_work;   /* last looks that found work: no sleep */
	uint64_t handovers;   /* last looks handed over to an application call */
	uint64_t handover_self; /* ... that the helper took back (the call had left) */
	uint64_t naps;        /* naps (napping mode, -EAGAIN from arm, RT breaths) */
	uint64_t quiet_naps;  /* unarmed sleeps while the application was calling */
	uint64_t spin_grows;  /* sleeps a frame ended soon: the spin grew */
	uint64_t spin_max_ns; /* the longest spin reached */
};

static pthread_t dibv_helper;
static bool dibv_helper_on;
static atomic_bool dibv_helper_stop;
static _Atomic uint64_t dibv_last_app_ns;
static struct drnic_device *_Atomic dibv_progress_dev;
static unsigned int dibv_sleep_us = 5;
static unsigned int dibv_spin_us = 2;
static unsigned int dibv_spin_max_us = 200;
static unsigned int dibv_slice_us;
static uint64_t dibv_quiet_ns;
static uint64_t dibv_linger_ns;
static atomic_bool dibv_quiet_napping;
static atomic_bool dibv_arm_now;     /* the application asks the helper to arm */
static void dibv_helper_poke(void);
static uint64_t dibv_quiet_max_ns;
static unsigned int dibv_quiet_run;   /* quiet naps in a row (helper only) */
#define DIBV_QUIET_MIN_NS 2000
#define DIBV_QUIET_MAX_SHIFT 2      /* quiet naps grow up to 4 x progress_quiet_us */
static bool dibv_wait_on = true;
static atomic_int dibv_helper_state = DIBV_HELPER_AWAKE;
static int dibv_poke_fd = -1;        /* eventfd: wakes a sleeping helper */
static struct dibv_helper_stats dibv_hstats;

bool
dibv_debug(void)
{
	const char *v = getenv("DRNIC_IBV_DEBUG");

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

/*
 * DRNIC_IBV_TRACE=FILE (debug; README.md, "Progress"): events of the
 * application's polls and posts and of the helper, in memory, written to FILE
 * when the helper stops. Timestamps are CLOCK_REALTIME, to line up two
 * processes' traces and a capture's.
 */
struct dibv_tev {
	uint64_t t0, t1;      /* start, end */
	uint32_t type;        /* 1 poll, 2 post, 10 helper run, 11 armed sleep, 12 quiet sleep */
	int32_t n;            /* completions, work, or how a sleep ended */
	uint32_t rx, tx;      /* frames the engine received / sent meanwhile */
};
#define DIBV_TRACE_MAX (1u << 20)
static struct dibv_tev *dibv_tbuf;
static _Atomic uint32_t dibv_tn;
bool dibv_trace_on;

uint64_t
dibv_trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
dibv_trace_rxtx(uint64_t *rx, uint64_t *tx)
{
	struct drnic_device *d = atomic_load_explicit(&dibv_progress_dev, memory_order_acquire);
	struct drnic_engine_stats st;

	*rx = *tx = 0;
	if (d != NULL && drnic_engine_stats_get(d, 0, &st) == 0) {
		*rx = st.rx_packets;
		*tx = st.tx_packets;
	}
}

void
dibv_trace(uint32_t type, uint64_t t0, int n, uint64_t rx0, uint64_t tx0)
{
	uint64_t rx, tx;
	uint32_t i;

	if (dibv_tbuf == NULL)
		return;
	dibv_trace_rxtx(&rx, &tx);
	i = atomic_fetch_add(&dibv_tn, 1);
	if (i >= DIBV_TRACE_MAX)
		return;
	dibv_tbuf[i] = (struct dibv_tev){ t0, dibv_trace_now(), type, n, (uint32_t)(rx - rx0),
					   (uint32_t)(tx - tx0) };
}

static void
dibv_trace_dump(void)
{
	const char *p = getenv("DRNIC_IBV_TRACE");
	FILE *f;
	uint32_t i, n = atomic_load(&dibv_tn);

	if (dibv_tbuf == NULL || p == NULL || (f = fopen(p, "w")) == NULL)
		return;
	if (n > DIBV_TRACE_MAX)
		n = DIBV_TRACE_MAX;
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 " %" PRIu64 " %u %d %u %u\n", dibv_tbuf[i].t0, dibv_tbuf[i].t1,
			dibv_tbuf[i].type, dibv_tbuf[i].n, dibv_tbuf[i].rx, dibv_tbuf[i].tx);
	fclose(f);
}

/*
 * The application's calls that run the engine (poll, post) are counted in
 * and out. The engine runs in one thread at a time and is skipped by the
 * others, so the helper's last look may be skipped by an application call
 * that had already looked at the link before the frame came; if that call
 * then returns a completion, the application may stop calling (perftest's
 * write_lat goes back to spinning on its buffer) and the frame waits for
 * DIBV_WAIT_MS. So when a call is inside at its last look, the helper hands
 * the last look over: the call runs the engine once more on its way out.
 */
static _Atomic uint64_t dibv_app_entries;
static _Atomic uint64_t dibv_app_exits;
static atomic_bool dibv_handover;

void
dibv_app_enter(void)
{
	atomic_fetch_add_explicit(&dibv_app_entries, 1, memory_order_seq_cst);
}

void
dibv_app_leave(void)
{
	atomic_store_explicit(&dibv_last_app_ns, dibv_now_ns(), memory_order_relaxed);
	/* The exit before the hand-over flag; the helper: the flag before
	 * the exit count (one of us sees the other). */
	atomic_fetch_add_explicit(&dibv_app_exits, 1, memory_order_seq_cst);
	if (unlikely(atomic_load_explicit(&dibv_handover, memory_order_seq_cst)) &&
	    atomic_exchange_explicit(&dibv_handover, false, memory_order_relaxed))
		dibv_progress_kick();
}

/*
 * The application is about to block (ibv_req_notify_cq, ibv_get_cq_event):
 * it will not run the engine, so the helper should not wait for it to go
 * quiet (see dibv_helper_quiet_nap()).
 */
void
dibv_app_waits(void)
{
	atomic_store_explicit(&dibv_arm_now, true, memory_order_seq_cst);
	if (atomic_load_explicit(&dibv_quiet_napping, memory_order_seq_cst))
		dibv_helper_poke();
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
dibv_linger(void)
{
	struct drnic_device *d = atomic_load_explicit(&dibv_progress_dev, memory_order_acquire);
	uint64_t t0;

	if (d == NULL || dibv_linger_ns == 0)
		return;
	t0 = dibv_now_ns();
	do {
		if (drnic_device_progress(d) > 0)
			return;
	} while (dibv_now_ns() - t0 < dibv_linger_ns);
	/* Nothing came: if the application now waits on its buffer for
	 * what is late, only the helper can bring it in. */
	dibv_app_waits();
}

void
dibv_progress_kick(void)
{
	struct drnic_device *d = atomic_load_explicit(&dibv_progress_dev, memory_order_acquire);

	if (d != NULL)
		drnic_device_progress(d);
}

static void
dibv_helper_poke(void)
{
	uint64_t one = 1;

	if (dibv_poke_fd >= 0 && write(dibv_poke_fd, &one, sizeof(one)) < 0)
		(void)0;  /* EAGAIN: the counter is full, the helper wakes anyway */
}

/*
 * After a post: make sure the engine sees it although the helper may be
 * going to sleep. The post's doorbell is published before the state is read
 * (fence); the helper publishes its state before its last look (fence too):
 *  - AWAKE: the helper's last look comes after our doorbell: it sees it;
 *  - LAST: our inline run may have been skipped while the helper held the
 *    engine, and its look may have missed the doorbell: run the engine; if
 *    that found nothing (or was skipped again), wake the helper (rare);
 *  - ASLEEP: the helper no longer holds the engine: one more run of ours
 *    does what the skipped one did not (cheap when there is nothing).
 */
void
dibv_posted(void)
{
	struct drnic_device *d;
	int st;

	atomic_thread_fence(memory_order_seq_cst);
	st = atomic_load_explicit(&dibv_helper_state, memory_order_relaxed);
	if (st == DIBV_HELPER_AWAKE)
		return;
	d = atomic_load_explicit(&dibv_progress_dev, memory_order_acquire);
	if (d == NULL)
		return;
	if (drnic_device_progress(d) > 0 || st == DIBV_HELPER_ASLEEP)
		return;
	dibv_helper_poke();
}

static void
dibv_nap_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

/* Napping mode: the helper before the receive wake-up existed. */
static void
dibv_helper_nap_loop(void)
{
	uint64_t quiet_ns = (uint64_t)dibv_sleep_us * 2000 + 2000;
	uint64_t nap_ns = (uint64_t)dibv_sleep_us * 1000;
	unsigned int idle = 0;

	while (!atomic_load_explicit(&dibv_helper_stop, memory_order_relaxed)) {
		struct drnic_device *d = atomic_load_explicit(&dibv_progress_dev,
							      memory_order_acquire);
		uint64_t now;

		if (d == NULL) {
			dibv_nap_ns(nap_ns);
			continue;
		}
		now = dibv_now_ns();
		if (now - atomic_load_explicit(&dibv_last_app_ns, memory_order_relaxed) <
		    quiet_ns) {
			/* The application drives the engine itself. */
			idle = 0;
			dibv_nap_ns(nap_ns);
			continue;
		}
		if (drnic_device_progress(d) > 0) {
			idle = 0;
			continue;
		}
		if (++idle < 64)
			continue;
		idle = 0;
		dibv_hstats.naps++;
		dibv_nap_ns(nap_ns);
	}
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
dibv_helper_quiet_nap(void)
{
	uint64_t now = dibv_now_ns();
	int64_t since = (int64_t)(now - atomic_load_explicit(&dibv_last_app_ns,
							      memory_order_relaxed));
	struct pollfd pfd;
	struct timespec ts;
	uint64_t ns, tt0 = 0;
	int n;

	if (since >= (int64_t)dibv_quiet_ns ||
	    atomic_exchange_explicit(&dibv_arm_now, false, memory_order_seq_cst)) {
		dibv_quiet_run = 0;
		return false;
	}
	/* The longer the application keeps calling, the longer we sleep
	 * (each wake-up costs it a preemption on a busy CPU). */
	ns = dibv_quiet_ns << (dibv_quiet_run < 16 ? dibv_quiet_run : 16);
	if (ns > dibv_quiet_max_ns)
		ns = dibv_quiet_max_ns;
	ns -= (uint64_t)(since > 0 ? since : 0);
	if (ns < DIBV_QUIET_MIN_NS)
		ns = DIBV_QUIET_MIN_NS;
	dibv_quiet_run++;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	pfd.fd = dibv_poke_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (dibv_trace_on)
		tt0 = dibv_trace_now();
	atomic_store_explicit(&dibv_quiet_napping, true, memory_order_seq_cst);
	/* An application about to block said so before we looked: go. */
	if (atomic_load_explicit(&dibv_arm_now, memory_order_seq_cst)) {
		atomic_store_explicit(&dibv_quiet_napping, false, memory_order_relaxed);
		return true;
	}
	n = ppoll(&pfd, 1, &ts, NULL);
	atomic_store_explicit(&dibv_quiet_napping, false, memory_order_relaxed);
	if (dibv_trace_on)
		dibv_trace(12, tt0, n, 0, 0);
	dibv_hstats.quiet_naps++;
	if (n > 0 && (pfd.revents & POLLIN)) {
		uint64_t v;

		if (read(dibv_poke_fd, &v, sizeof(v)) < 0)
			(void)0;  /* EAGAIN: another read took it */
	}
	return true;
}

/* Blocking mode on queue 0's receive wake-up @p wfd of @p link. */
static void
dibv_helper_wait_loop(struct drnic_link *link, int wfd, bool rt)
{
	const uint64_t spin_min_ns = (uint64_t)dibv_spin_us * 1000;
	const uint64_t spin_max_ns = RTE_MAX((uint64_t)dibv_spin_max_us * 1000, spin_min_ns);
	uint64_t now = dibv_now_ns(), last_work = now, awake_since = now, spin_ns = spin_min_ns;

	while (!atomic_load_explicit(&dibv_helper_stop, memory_order_relaxed)) {
		struct drnic_device *d = atomic_load_explicit(&dibv_progress_dev,
							      memory_order_acquire);
		struct pollfd pfd[2];
		struct timespec ts;
		uint64_t exits, idle_ns, trx = 0, ttx = 0, tt0 = 0;
		bool inside;
		int n, work;

		if (d == NULL) {
			dibv_nap_ns((uint64_t)dibv_sleep_us * 1000);
			continue;
		}
		if (dibv_quiet_ns > 0 && dibv_helper_quiet_nap())
			continue;
		if (unlikely(dibv_trace_on)) {
			tt0 = dibv_trace_now();
			dibv_trace_rxtx(&trx, &ttx);
		}
		if ((work = drnic_device_progress(d)) > 0) {
			if (dibv_trace_on)
				dibv_trace(10, tt0, work, trx, ttx);
			now = dibv_now_ns();
			last_work = now;
			if (rt && now - awake_since > DIBV_RT_BUSY_NS) {
				/* Let the CPU's other threads run. */
				dibv_hstats.naps++;
				dibv_nap_ns(DIBV_RT_BREATH_NS);
				awake_since = dibv_now_ns();
			}
			continue;
		}
		now = dibv_now_ns();
		/* Frames of a burst come close together: keep looking a while
		 * (not when the application polls: it runs the engine). */
		if (now - last_work < spin_ns &&
		    now - atomic_load_explicit(&dibv_last_app_ns, memory_order_relaxed) > spin_ns)
			continue;

		atomic_store_explicit(&dibv_helper_state, DIBV_HELPER_LAST, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		if (drnic_link_rx_wait_arm(link, 0) < 0) {
			/* -EAGAIN: fault injection holds frames on timers. */
			atomic_store_explicit(&dibv_helper_state, DIBV_HELPER_AWAKE,
					      memory_order_seq_cst);
			dibv_hstats.naps++;
			dibv_nap_ns((uint64_t)dibv_sleep_us * 1000);
			last_work = awake_since = dibv_now_ns();
			continue;
		}
		/* The last look, armed: a frame from now on wakes us. */
		exits = atomic_load_explicit(&dibv_app_exits, memory_order_seq_cst);
		inside = atomic_load_explicit(&dibv_app_entries, memory_order_seq_cst) != exits;
		work = drnic_device_progress(d);
		if (work == 0 && inside) {
			/* An application call may hold the engine: hand over,
			 * or look again if it left before it could see that. */
			atomic_store_explicit(&dibv_handover, true, memory_order_seq_cst);
			if (atomic_load_explicit(&dibv_app_exits, memory_order_seq_cst) != exits) {
				dibv_hstats.handover_self++;
				work = drnic_device_progress(d);
			} else {
				dibv_hstats.handovers++;
			}
		}
		if (work > 0) {
			atomic_store_explicit(&dibv_helper_state, DIBV_HELPER_AWAKE,
					      memory_order_seq_cst);
			(void)drnic_link_rx_wait_disarm(link, 0);
			dibv_hstats.last_work++;
			last_work = dibv_now_ns();
			continue;
		}
		/* Sleep no longer than the engines may wait: ACKs held for a
		 * reply to go with, a timer due within the millisecond. */
		if (drnic_engine_idle_ns(&idle_ns) == 0 && idle_ns == 0) {
			atomic_store_explicit(&dibv_helper_state, DIBV_HELPER_AWAKE,
					      memory_order_seq_cst);
			(void)drnic_link_rx_wait_disarm(link, 0);
			continue;
		}
		if (idle_ns > (uint64_t)DIBV_WAIT_MS * 1000000u)
			idle_ns = (uint64_t)DIBV_WAIT_MS * 1000000u;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)idle_ns;
		atomic_store_explicit(&dibv_helper_state, DIBV_HELPER_ASLEEP, memory_order_seq_cst);
		pfd[0].fd = wfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = dibv_poke_fd;
		pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		if (dibv_trace_on)
			tt0 = dibv_trace_now();
		now = dibv_now_ns();
		n = ppoll(pfd, 2, &ts, NULL);
		if (dibv_trace_on)
			dibv_trace(11, tt0, n > 0 ? (pfd[0].revents & POLLIN ? 1 : 2) : 0, 0, 0);
		/* Adapt the spin to how soon frames come after we sleep. */
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			uint64_t slept = dibv_now_ns() - now;

			if (slept < spin_max_ns) {
				spin_ns = RTE_MIN(spin_max_ns, RTE_MAX(2 * spin_ns, 2 * slept));
				dibv_hstats.spin_grows++;
				if (spin_ns > dibv_hstats.spin_max_ns)
					dibv_hstats.spin_max_ns = spin_ns;
			} else {
				spin_ns = RTE_MAX(spin_min_ns, spin_ns / 2);
			}
		} else if (n == 0) {
			spin_ns = RTE_MAX(spin_min_ns, spin_ns / 2);
		}
		atomic_store_explicit(&dibv_helper_state, DIBV_HELPER_AWAKE, memory_order_seq_cst);
		/* Awake: the helper looks itself. */
		atomic_store_explicit(&dibv_handover, false, memory_order_relaxed);
		(void)drnic_link_rx_wait_disarm(link, 0);
		dibv_hstats.sleeps++;
		if (n == 0) {
			dibv_hstats.timeouts++;
		} else if (n > 0) {
			if (pfd[1].revents & POLLIN) {
				uint64_t v;

				dibv_hstats.pokes++;
				if (read(dibv_poke_fd, &v, sizeof(v)) < 0)
					(void)0;  /* EAGAIN: another read took it */
			}
			if (pfd[0].revents & POLLIN)
				dibv_hstats.frames++;
		}
		last_work = awake_since = dibv_now_ns();
	}
}

struct dibv_helper_arg {
	struct drnic_link *link;
	int wfd;
	bool rt;
};

static struct dibv_helper_arg dibv_harg;

/* sched_setattr(2)'s argument (linux/sched/types.h clashes with sched.h). */
struct dibv_sched_attr {
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
dibv_helper_main(void *arg)
{
	struct dibv_helper_arg *a = arg;

	if (!a->rt && dibv_slice_us > 0 && a->wfd >= 0) {
		/* A short slice: the kernel's scheduler (EEVDF, Linux >= 6.12)
		 * lets a waking task with a shorter slice preempt one that
		 * spins on its CPU; with the default slice a woken helper may
		 * wait milliseconds behind two spinning applications. Older
		 * kernels take the value and ignore it (or refuse: EINVAL).
		 * Not when napping: a helper that wakes every few microseconds
		 * would preempt the application each time. */
		struct dibv_sched_attr at = {
			.size = sizeof(at),
			.sched_policy = SCHED_OTHER,
			.sched_runtime = (uint64_t)dibv_slice_us * 1000,
		};

		errno = 0;
		at.sched_nice = getpriority(PRIO_PROCESS, 0);  /* keep ours */
		if (errno != 0)
			at.sched_nice = 0;
		(void)syscall(SYS_sched_setattr, 0, &at, 0);
	}
	/* Timed sleeps as asked, not up to 50 us late (the default slack). */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	if (a->wfd >= 0)
		dibv_helper_wait_loop(a->link, a->wfd, a->rt);
	else
		dibv_helper_nap_loop();
	return NULL;
}

static void
dibv_helper_start(struct drnic_device *dev, const struct drnic_progress_opts *s, bool inl)
{
	struct sched_param sp = { .sched_priority = 1 };
	const char *rt_what = "off";
	int wfd = -ENOTSUP, rc;

	if (dibv_helper_on)
		return;
	dibv_sleep_us = s->sleep_us ? s->sleep_us : 1;
	dibv_spin_us = s->spin_us;
	dibv_spin_max_us = s->spin_max_us;
	dibv_slice_us = s->slice_us;
	dibv_quiet_ns = (uint64_t)s->quiet_us * 1000;
	dibv_quiet_max_ns = dibv_quiet_ns << DIBV_QUIET_MAX_SHIFT;
	/* Inline progress only: there the poll runs the engine. */
	dibv_linger_ns = inl ? (uint64_t)s->linger_us * 1000 : 0;
	dibv_wait_on = s->wait;
	memset(&dibv_hstats, 0, sizeof(dibv_hstats));
	if (getenv("DRNIC_IBV_TRACE") != NULL && dibv_tbuf == NULL) {
		dibv_tbuf = calloc(DIBV_TRACE_MAX, sizeof(*dibv_tbuf));
		dibv_trace_on = dibv_tbuf != NULL;
	}
	dibv_harg.link = drnic_device_link(dev);
	if (dibv_wait_on && dibv_harg.link != NULL) {
		/* Queue 0: the ethdev driver receives every frame there. */
		wfd = drnic_link_rx_wait_fd(dibv_harg.link, 0);
		if (wfd >= 0) {
			dibv_poke_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			if (dibv_poke_fd < 0)
				wfd = -errno;
		}
	}
	dibv_harg.wfd = wfd;
	/* SCHED_FIFO by default only when the helper blocks: a napping
	 * SCHED_FIFO helper stalled RC transfers on 2 CPUs. */
	dibv_harg.rt = s->rt == 1 || (s->rt < 0 && wfd >= 0);
	atomic_store(&dibv_helper_stop, false);
	atomic_store(&dibv_helper_state, DIBV_HELPER_AWAKE);
	rc = EPERM;
	if (dibv_harg.rt) {
		/* Born SCHED_FIFO, or not at all: the thread reads its mode once. */
		pthread_attr_t at;

		pthread_attr_init(&at);
		if (pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED) == 0 &&
		    pthread_attr_setschedpolicy(&at, SCHED_FIFO) == 0 &&
		    pthread_attr_setschedparam(&at, &sp) == 0)
			rc = pthread_create(&dibv_helper, &at, dibv_helper_main, &dibv_harg);
		pthread_attr_destroy(&at);
		/* Without CAP_SYS_NICE (or RLIMIT_RTPRIO): SCHED_OTHER. */
		rt_what = rc == 0 ? "SCHED_FIFO" : "refused";
		dibv_harg.rt = rc == 0;
	}
	if (rc != 0)
		rc = pthread_create(&dibv_helper, NULL, dibv_helper_main, &dibv_harg);
	if (rc != 0) {
		fprintf(stderr, "drnic ibverbs: cannot start the progress thread: %s\n",
			strerror(rc));
		if (dibv_poke_fd >= 0)
			close(dibv_poke_fd);
		dibv_poke_fd = -1;
		return;
	}
	pthread_setname_np(dibv_helper, "drnic-progress");
	dibv_helper_on = true;
	if (dibv_debug()) {
		if (wfd >= 0)
			fprintf(stderr, "drnic ibverbs: progress helper: blocking on the receive wake-up of %s (spin %u..%u us, timeout %d ms, quiet %" PRIu64 " us, slice %u us), realtime %s\n",
				drnic_link_name(dibv_harg.link), dibv_spin_us,
				RTE_MAX(dibv_spin_max_us, dibv_spin_us), DIBV_WAIT_MS,
				dibv_quiet_ns / 1000, dibv_slice_us, rt_what);
		else
			fprintf(stderr, "drnic ibverbs: progress helper: napping %u us (%s), realtime %s\n",
				dibv_sleep_us,
				!dibv_wait_on ? "progress_wait = nap" :
				wfd == -ENOTSUP ? "the link has no receive wake-up" : strerror(-wfd),
				rt_what);
	}
}

static void
dibv_helper_stop_join(void)
{
	if (!dibv_helper_on)
		return;
	atomic_store(&dibv_helper_stop, true);
	dibv_helper_poke();
	pthread_join(dibv_helper, NULL);
	dibv_helper_on = false;
	dibv_trace_dump();
	if (dibv_poke_fd >= 0)
		close(dibv_poke_fd);
	dibv_poke_fd = -1;
	if (dibv_debug())
		fprintf(stderr, "drnic ibverbs: progress helper: %" PRIu64 " sleeps (%" PRIu64
			" ended by frames, %" PRIu64 " by posts, %" PRIu64 " timeouts), %" PRIu64
			" last looks with work, %" PRIu64 " handed over (%" PRIu64
			" taken back), %" PRIu64 " naps, %" PRIu64 " quiet naps, spin grown %" PRIu64
			" times (longest %" PRIu64 " us)\n",
			dibv_hstats.sleeps, dibv_hstats.frames, dibv_hstats.pokes,
			dibv_hstats.timeouts, dibv_hstats.last_work, dibv_hstats.handovers,
			dibv_hstats.handover_self, dibv_hstats.naps, dibv_hstats.quiet_naps,
			dibv_hstats.spin_grows, dibv_hstats.spin_max_ns / 1000);
}

/* ------------------------------------------------------------------------ */
/* Configuration and EAL                                                    */
/* ------------------------------------------------------------------------ */

struct dibv_eal {
	char lcores[128];
	char file_prefix[128];
	char args[1024];
	unsigned int mem_mb;
	int log_level;
};

static int
dibv_parse_u32(const char *v, uint32_t *out)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 0);
	if (errno != 0 || end == v || *end != '\0' || x > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

/* One [ibverbs] key; on -EINVAL, @p why says what is wrong. */
static int
dibv_apply_ibverbs_key(struct dibv_settings *s, struct drnic_config *cfg, const char *k,
		       const char *v, char *why, size_t why_len)
{
	snprintf(why, why_len, "not a number");
	if (strcmp(k, "vendor_id") == 0)
		return dibv_parse_u32(v, &s->vendor_id);
	if (strcmp(k, "vendor_part_id") == 0)
		return dibv_parse_u32(v, &s->vendor_part_id);
	if (strcmp(k, "hw_ver") == 0)
		return dibv_parse_u32(v, &s->hw_ver);
	if (strcmp(k, "port_state") == 0) {
		snprintf(why, why_len, "expected always_active or link");
		if (strcmp(v, "always_active") == 0)
			s->port_always_active = true;
		else if (strcmp(v, "link") == 0)
			s->port_always_active = false;
		else
			return -EINVAL;
		return 0;
	}
	if (strcmp(k, "peer_ipv4") == 0) {
		snprintf(why, why_len, "not an IPv4 address");
		if (inet_pton(AF_INET, v, &s->peer) != 1)
			return -EINVAL;
		s->has_peer = true;
		return 0;
	}
	/* The helper's keys were [ibverbs]'s before they joined drnic's
	 * table: the table parses them, here as in [device]. */
	if (strncmp(k, "progress_", 9) == 0) {
		int rc = drnic_config_set(cfg, k, v);

		if (rc < 0)
			(void)drnic_config_check(k, v, why, why_len);
		return rc;
	}
	snprintf(why, why_len, "unknown key");
	return -EINVAL;
}

static int
dibv_apply_eal_key(struct dibv_eal *e, const char *k, const char *v)
{
	uint32_t x;

	if (strcmp(k, "lcores") == 0)
		snprintf(e->lcores, sizeof(e->lcores), "%s", v);
	else if (strcmp(k, "file_prefix") == 0)
		snprintf(e->file_prefix, sizeof(e->file_prefix), "%s", v);
	else if (strcmp(k, "args") == 0)
		snprintf(e->args, sizeof(e->args), "%s", v);
	else if (strcmp(k, "mem_mb") == 0) {
		if (dibv_parse_u32(v, &x) < 0 || x == 0)
			return -EINVAL;
		e->mem_mb = x;
	} else if (strcmp(k, "log_level") == 0) {
		if (dibv_parse_u32(v, &x) < 0 || x > 8)
			return -EINVAL;
		e->log_level = (int)x;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* Read [eal] and [ibverbs] of @p path. */
static int
dibv_load_sections(const char *path, struct dibv_eal *e, struct dibv_settings *s,
		   struct drnic_config *cfg)
{
	static const char *const secs[] = { "eal", "ibverbs" };
	struct rte_cfgfile *f;
	unsigned int i;
	int rc = 0;

	f = rte_cfgfile_load(path, CFG_FLAG_EMPTY_VALUES);
	if (f == NULL)
		return -ENOENT;
	for (i = 0; i < 2 && rc == 0; i++) {
		struct rte_cfgfile_entry *ent;
		int n, j;

		if (!rte_cfgfile_has_section(f, secs[i]))
			continue;
		n = rte_cfgfile_section_num_entries(f, secs[i]);
		if (n <= 0)
			continue;
		ent = calloc((size_t)n, sizeof(*ent));
		if (ent == NULL) {
			rc = -ENOMEM;
			break;
		}
		n = rte_cfgfile_section_entries(f, secs[i], ent, n);
		for (j = 0; j < n && rc == 0; j++) {
			char why[64] = "unknown key or bad value";

			rc = i == 0 ? dibv_apply_eal_key(e, ent[j].name, ent[j].value) :
				      dibv_apply_ibverbs_key(s, cfg, ent[j].name, ent[j].value,
							     why, sizeof(why));
			if (rc < 0)
				fprintf(stderr, "drnic ibverbs: %s [%s]: bad key or value: %s = %s (%s)\n",
					path, secs[i], ent[j].name, ent[j].value, why);
		}
		free(ent);
	}
	rte_cfgfile_close(f);
	return rc;
}

static void
dibv_env_u32(const char *name, uint32_t *out)
{
	const char *v = getenv(name);

	if (v != NULL && *v != '\0' && dibv_parse_u32(v, out) < 0)
		fprintf(stderr, "drnic ibverbs: ignoring bad %s=%s\n", name, v);
}

static struct dibv_device *
dibv_device_new(const struct drnic_config *cfg, const struct dibv_settings *s)
{
	struct dibv_device *d = calloc(1, sizeof(*d));
	uint64_t g = 0;
	int i;

	if (d == NULL)
		return NULL;
	d->cfg = *cfg;
	d->set = *s;
	pthread_mutex_init(&d->lock, NULL);
	d->ibdev.node_type = IBV_NODE_CA;
	d->ibdev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->ibdev.name, sizeof(d->ibdev.name), "%s", cfg->name);
	snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs0");
	snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path),
		 "/sys/class/infiniband_verbs/uverbs0");
	snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path), "/sys/class/infiniband/%s",
		 cfg->name);
	/* EUI-64 from the MAC, as drnic's device does. */
	for (i = 0; i < 6; i++)
		g = g << 8 | cfg->mac[i];
	g = ((g & 0xFFFFFF000000ull) << 16) | 0xFFFE000000ull | (g & 0xFFFFFF);
	g ^= 0x0200000000000000ull;
	d->guid_be = htobe64(g);
	return d;
}

/* Start the EAL and build the device list; once per process. */
static int
dibv_start(void)
{
	struct dibv_settings s = {
		.vendor_id = DIBV_DEFAULT_VENDOR_ID,
		.vendor_part_id = DIBV_DEFAULT_PART_ID,
		.port_always_active = true,
	};
	struct dibv_eal e = { .log_level = RTE_LOG_ERR };
	struct drnic_env_opts eo = { .name = "drnic-ibverbs" };
	const char *extra[64];
	char argbuf[1024];
	struct drnic_config cfg;
	const char *path = getenv("DRNIC_CONFIG");
	cpu_set_t aff;
	bool have_aff;
	int rc, n = 0;

	drnic_config_init(&cfg);
	/* Without a file: inline progress, no engine lcore. */
	drnic_config_set(&cfg, "progress", "inline");
	drnic_config_set(&cfg, "engines", "1");
	if (path != NULL && *path != '\0') {
		rc = drnic_config_load(&cfg, path, NULL);
		if (rc < 0) {
			fprintf(stderr, "drnic ibverbs: cannot load DRNIC_CONFIG=%s: %s\n", path,
				strerror(-rc));
			return rc;
		}
		rc = dibv_load_sections(path, &e, &s, &cfg);
		if (rc < 0)
			return rc;
	}
	dibv_env_u32("DRNIC_VENDOR_ID", &s.vendor_id);
	dibv_env_u32("DRNIC_VENDOR_PART_ID", &s.vendor_part_id);

	eo.lcores = e.lcores[0] ? e.lcores : NULL;
	eo.file_prefix = e.file_prefix[0] ? e.file_prefix : NULL;
	eo.mem_mb = e.mem_mb;
	eo.log_level = e.log_level;
	if (e.args[0]) {
		char *save = NULL, *tok;

		snprintf(argbuf, sizeof(argbuf), "%s", e.args);
		for (tok = strtok_r(argbuf, " ", &save); tok != NULL && n < 63;
		     tok = strtok_r(NULL, " ", &save))
			extra[n++] = tok;
	}
	extra[n] = NULL;
	eo.extra_args = n ? extra : NULL;

	/* DPDK logs to stdout by default; keep the tools' output clean. */
	rte_openlog_stream(stderr);
	/* rte_eal_init() pins the calling thread to the main lcore's CPU; the
	 * application's thread keeps the affinity it had. */
	have_aff = sched_getaffinity(0, sizeof(aff), &aff) == 0;
	rc = drnic_env_init(&eo, NULL);
	if (have_aff)
		sched_setaffinity(0, sizeof(aff), &aff);
	if (rc < 0 && rc != -EALREADY) {
		fprintf(stderr, "drnic ibverbs: EAL start failed: %s\n", strerror(-rc));
		return rc;
	}

	dibv_devs[0] = dibv_device_new(&cfg, &s);
	if (dibv_devs[0] == NULL)
		return -ENOMEM;
	dibv_nb_devs = 1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Device list                                                              */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **l;
	int i;

	pthread_mutex_lock(&dibv_lock);
	if (!dibv_started) {
		dibv_start_err = dibv_start();
		dibv_started = true;
	}
	pthread_mutex_unlock(&dibv_lock);
	if (dibv_start_err < 0) {
		if (num_devices != NULL)
			*num_devices = 0;
		errno = -dibv_start_err;
		return NULL;
	}
	l = calloc((size_t)dibv_nb_devs + 1, sizeof(*l));
	if (l == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < dibv_nb_devs; i++)
		l[i] = &dibv_devs[i]->ibdev;
	if (num_devices != NULL)
		*num_devices = dibv_nb_devs;
	return l;
}

DIBV_EXPORT void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

DIBV_EXPORT const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device != NULL ? device->name : NULL;
}

DIBV_EXPORT __be64
ibv_get_device_guid(struct ibv_device *device)
{
	return device != NULL ? ((struct dibv_device *)(void *)device)->guid_be : 0;
}

DIBV_EXPORT int
ibv_get_device_index(struct ibv_device *device)
{
	int i;

	for (i = 0; i < dibv_nb_devs; i++)
		if (device == &dibv_devs[i]->ibdev)
			return i;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Contexts                                                                 */
/* ------------------------------------------------------------------------ */

static int dibv_context_close(struct dibv_context *c);

DIBV_EXPORT struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct dibv_device *d = (struct dibv_device *)(void *)device;
	struct dibv_context *c;
	struct ibv_context *ctx;

	if (d == NULL) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	if (d->refs == 0) {
		d->dev = drnic_device_open(&d->cfg);
		if (d->dev == NULL) {
			int e = rte_errno ? rte_errno : EINVAL;

			pthread_mutex_unlock(&d->lock);
			fprintf(stderr, "drnic ibverbs: cannot open device %s: %s\n", d->cfg.name,
				rte_strerror(e));
			free(c);
			errno = e;
			return NULL;
		}
		if (d->cfg.progress == DRNIC_PROGRESS_INLINE) {
			atomic_store_explicit(&dibv_progress_dev, d->dev, memory_order_release);
			if (d->cfg.progress_opts.thread != 0)
				dibv_helper_start(d->dev, &d->cfg.progress_opts, true);
		} else if (d->cfg.progress_opts.thread == 1) {
			atomic_store_explicit(&dibv_progress_dev, d->dev, memory_order_release);
			dibv_helper_start(d->dev, &d->cfg.progress_opts, false);
		}
	}
	d->refs++;
	c->d = d;
	/* Its own async queue, given the device's events too. */
	c->async = drnic_async_queue_create(0);
	if (c->async == NULL || drnic_device_async_subscribe(d->dev, c->async) < 0) {
		pthread_mutex_unlock(&d->lock);
		drnic_async_queue_destroy(c->async);
		c->async = NULL;
		dibv_context_close(c);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_unlock(&d->lock);

	c->vctx.sz = sizeof(struct verbs_context);
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = -1;
	ctx->async_fd = drnic_async_queue_fd(c->async);
	ctx->num_comp_vectors = (int)(d->cfg.nb_engines ? d->cfg.nb_engines : 1);
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	dibv_context_ops_init(c);
	if (handle_add(c, HANDLE_IBV_CONTEXT) < 0) {
		dibv_context_close(c);
		errno = ENOMEM;
		return NULL;
	}
	return ctx;
}

DIBV_EXPORT int
ibv_close_device(struct ibv_context *context)
{
	/* Not live (NULL, closed already): nothing behind it is read. */
	if (context == NULL || handle_take(dibv_ctx(context), HANDLE_IBV_CONTEXT) < 0)
		return DIBV_ERR(EINVAL);
	return dibv_context_close(dibv_ctx(context));
}

static int
dibv_context_close(struct dibv_context *c)
{
	struct ibv_context *context = &c->vctx.context;
	struct dibv_device *d = c->d;
	bool keep_queue = false;
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	if (c->async != NULL) {
		drnic_device_async_unsubscribe(d->dev, c->async);
		/* Objects of this context left behind keep raising into it. */
		keep_queue = drnic_async_queue_destroy(c->async) < 0;
	}
	if (--d->refs == 0) {
		if (atomic_load(&dibv_progress_dev) == d->dev) {
			atomic_store(&dibv_progress_dev, NULL);
			dibv_helper_stop_join();
		}
		if (dibv_debug())
			drnic_device_stats_print(d->dev, "drnic ibverbs: ", stderr);
		rc = drnic_device_close(d->dev);
		if (rc < 0) {
			/* Objects left behind: keep the device open. */
			atomic_store(&dibv_progress_dev, d->dev);
			d->refs++;
			rc = 0;
		} else {
			d->dev = NULL;
		}
	}
	pthread_mutex_unlock(&d->lock);
	if (keep_queue)
		return rc;      /* c stays too: its objects point at it */
	pthread_mutex_destroy(&context->mutex);
	free(c);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                  */
/* ------------------------------------------------------------------------ */

static int
dibv_fill_device_attr(struct ibv_context *context, struct ibv_device_attr *a)
{
	struct dibv_context *c = dibv_ctx(context);
	struct drnic_device_attr da;
	int rc;

	rc = drnic_query_device(c->d->dev, &da);
	if (rc < 0)
		return dibv_errno(rc);
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", da.fw_ver);
	a->node_guid = htobe64(da.node_guid);
	a->sys_image_guid = htobe64(da.sys_image_guid);
	a->max_mr_size = da.max_mr_size;
	a->page_size_cap = da.page_size_cap;
	a->vendor_id = c->d->set.vendor_id;
	a->vendor_part_id = c->d->set.vendor_part_id;
	a->hw_ver = c->d->set.hw_ver;
	a->max_qp = da.max_qp;
	a->max_qp_wr = da.max_qp_wr;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID;
	a->max_sge = da.max_sge;
	a->max_sge_rd = da.max_sge_rd;
	a->max_cq = da.max_cq;
	a->max_cqe = da.max_cqe;
	a->max_mr = da.max_mr;
	a->max_pd = da.max_pd;
	a->max_qp_rd_atom = da.max_qp_rd_atom;
	a->max_ee_rd_atom = 0;
	a->max_res_rd_atom = da.max_res_rd_atom;
	a->max_qp_init_rd_atom = da.max_qp_init_rd_atom;
	a->atomic_cap = (enum ibv_atomic_cap)da.atomic_cap;
	a->max_srq = 0;   /* the drop-in does not map drnic's SRQs yet (ibv_create_srq) */
	a->max_pkeys = (uint16_t)da.max_pkeys;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = da.phys_port_cnt;
	return 0;
}

DIBV_EXPORT int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	if (context == NULL || device_attr == NULL)
		return DIBV_ERR(EINVAL);
	return dibv_fill_device_attr(context, device_attr);
}

int dibv_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int
dibv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
		     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	int rc;

	if (input != NULL && input->comp_mask != 0)
		return DIBV_ERR(EINVAL);
	if (attr == NULL || attr_size < sizeof(struct ibv_device_attr))
		return DIBV_ERR(EINVAL);
	memset(&ex, 0, sizeof(ex));
	rc = dibv_fill_device_attr(context, &ex.orig_attr);
	if (rc != 0)
		return rc;
	ex.max_dm_size = 0;
	ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
	if (attr_size > sizeof(ex))
		attr_size = sizeof(ex);
	memcpy(attr, &ex, attr_size);
	return 0;
}

static int
dibv_fill_port_attr(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *p,
		    size_t len)
{
	struct dibv_context *c = dibv_ctx(context);
	struct drnic_port_attr pa;
	struct ibv_port_attr a;
	int rc;

	rc = drnic_query_port(c->d->dev, port_num, &pa);
	if (rc < 0)
		return dibv_errno(rc);
	memset(&a, 0, sizeof(a));
	a.state = (enum ibv_port_state)pa.state;
	a.phys_state = pa.phys_state;
	if (c->d->set.port_always_active && a.state != IBV_PORT_ACTIVE) {
		a.state = IBV_PORT_ACTIVE;
		a.phys_state = 5;
	}
	a.max_mtu = (enum ibv_mtu)pa.max_mtu;
	a.active_mtu = (enum ibv_mtu)pa.active_mtu;
	a.gid_tbl_len = pa.gid_tbl_len;
	a.port_cap_flags = pa.port_cap_flags;
	a.max_msg_sz = pa.max_msg_sz;
	a.bad_pkey_cntr = pa.bad_pkey_cntr;
	a.qkey_viol_cntr = pa.qkey_viol_cntr;
	a.pkey_tbl_len = pa.pkey_tbl_len;
	a.lid = pa.lid;
	a.sm_lid = pa.sm_lid;
	a.lmc = pa.lmc;
	a.max_vl_num = pa.max_vl_num;
	a.sm_sl = pa.sm_sl;
	a.subnet_timeout = pa.subnet_timeout;
	a.init_type_reply = pa.init_type_reply;
	a.active_width = pa.active_width;
	a.active_speed = pa.active_speed;
	a.link_layer = pa.link_layer;
	if (len > sizeof(a))
		len = sizeof(a);
	memcpy(p, &a, len);
	return 0;
}

int dibv_query_port_ex(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, size_t port_attr_len);
int
dibv_query_port_ex(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr,
		   size_t port_attr_len)
{
	if (context == NULL || port_attr == NULL)
		return DIBV_ERR(EINVAL);
	return dibv_fill_port_attr(context, port_num, port_attr, port_attr_len);
}

/* The exported symbol takes the old, shorter layout (up to 'flags'). */
DIBV_EXPORT int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	if (context == NULL || port_attr == NULL)
		return DIBV_ERR(EINVAL);
	return dibv_fill_port_attr(context, port_num, (struct ibv_port_attr *)(void *)port_attr,
				   offsetof(struct ibv_port_attr, port_cap_flags2));
}

DIBV_EXPORT int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	int rc;

	if (context == NULL || gid == NULL)
		return DIBV_ERR(EINVAL);
	rc = drnic_query_gid(dibv_ctx(context)->d->dev, port_num, index, (union drnic_gid *)gid);
	return rc < 0 ? -1 : 0;
}

static bool
dibv_gid_is_zero(const union drnic_gid *g)
{
	static const uint8_t z[16];

	return memcmp(g->raw, z, 16) == 0;
}

DIBV_EXPORT int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	union drnic_gid g;
	int rc;

	if (context == NULL || entry == NULL || flags != 0 || port_num > 255 ||
	    gid_index > INT32_MAX)
		return DIBV_ERR(EINVAL);
	rc = drnic_query_gid(dibv_ctx(context)->d->dev, (uint8_t)port_num, (int)gid_index, &g);
	if (rc < 0)
		return dibv_errno(rc);
	if (dibv_gid_is_zero(&g))
		return DIBV_ERR(ENODATA);
	memset(&e, 0, sizeof(e));
	memcpy(e.gid.raw, g.raw, 16);
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_ROCE_V2;
	e.ndev_ifindex = 0;
	if (entry_size > sizeof(e))
		entry_size = sizeof(e);
	memcpy(entry, &e, entry_size);
	return 0;
}

DIBV_EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
		     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry table[DRNIC_GID_TABLE_LEN];
	size_t n = 0, i;

	if (context == NULL || entries == NULL || flags != 0 || max_entries == 0 ||
	    entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	for (i = 0; i < DRNIC_GID_TABLE_LEN; i++)
		if (_ibv_query_gid_ex(context, 1, (uint32_t)i, &table[n], 0, sizeof(table[0])) == 0)
			n++;
	/* As rdma-core: an array too small for every valid entry fails, it
	 * is not filled in part. */
	if (n > max_entries)
		return -EINVAL;
	for (i = 0; i < n; i++)
		memcpy((uint8_t *)entries + i * entry_size, &table[i], sizeof(table[i]));
	return (ssize_t)n;
}

/* From rdma-core's driver.h (private ABI): GID types as sysfs spells them. */
enum dibv_gid_type_sysfs {
	DIBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	DIBV_GID_TYPE_SYSFS_ROCE_V2,
};

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum dibv_gid_type_sysfs *type);
DIBV_EXPORT int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		   enum dibv_gid_type_sysfs *type)
{
	union drnic_gid g;

	if (context == NULL || type == NULL || index > INT32_MAX)
		return -1;
	if (drnic_query_gid(dibv_ctx(context)->d->dev, port_num, (int)index, &g) < 0) {
		errno = EINVAL;
		return -1;
	}
	*type = DIBV_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

DIBV_EXPORT int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (context == NULL || pkey == NULL || port_num != 1 || index != 0)
		return -1;
	*pkey = htobe16(0xffff);
	return 0;
}

DIBV_EXPORT int
ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	if (context == NULL || port_num != 1)
		return -1;
	if ((be16toh(pkey) & 0x7fff) == 0x7fff)
		return 0;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Async events                                                             */
/* ------------------------------------------------------------------------ */

DIBV_EXPORT int
ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct drnic_async_queue *q;
	struct drnic_async_event ev;
	int rc;

	if (context == NULL || event == NULL)
		return -1;
	q = dibv_ctx(context)->async;
	rc = drnic_get_async_event(q, &ev);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	memset(event, 0, sizeof(*event));
	event->event_type = (enum ibv_event_type)ev.event_type;
	if (drnic_event_type_is_qp(ev.event_type)) {
		struct dibv_qp *qp = ev.element.qp != NULL ?
				     drnic_qp_context((struct drnic_qp *)ev.element.qp) : NULL;

		event->element.qp = qp != NULL ? &qp->qpx.qp_base : NULL;
		goto out;
	}
	switch (ev.event_type) {
	case DRNIC_EVENT_CQ_ERR: {
		struct dibv_cq *cq = dibv_cq_lookup(ev.element.cq);

		event->element.cq = cq != NULL ? ibv_cq_ex_to_cq(&cq->cqx) : NULL;
		break;
	}
	case DRNIC_EVENT_SRQ_ERR:
	case DRNIC_EVENT_SRQ_LIMIT_REACHED:
		event->element.srq = NULL;
		break;
	default:
		event->element.port_num = (int)ev.element.port_num;
		break;
	}
out:
	/* drnic's acknowledgement guards destruction; verbs' is kept by the caller. */
	drnic_ack_async_event(q, &ev);
	return 0;
}

DIBV_EXPORT void
ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}
