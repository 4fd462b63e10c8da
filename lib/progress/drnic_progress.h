/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_PROGRESS_H
#define DRNIC_PROGRESS_H

/**
 * @file
 * The progress helper: "poll while busy, sleep while idle" for inline
 * progress (DESIGN.md, "Progress modes").
 *
 * In inline mode the engine moves only inside drnic calls (post, poll,
 * drnic_device_progress()). A program does not always make them: it spins on
 * a byte of its buffer, waits on a socket, or sleeps in an event wait. The
 * helper is one thread that runs the engine for it and is never a second
 * busy spinner: it runs the engine while there is work, keeps looking a
 * little (the spin), then arms the link's receive wake-up
 * (drnic_link_rx_wait_fd()), looks once more and sleeps until a frame comes
 * or the engine's next timer is due (drnic_engine_idle_ns()); without a
 * wake-up it naps. Its tuning is struct drnic_progress_opts, the progress_*
 * keys of the configuration (config/drnic.ini). lib/ibverbs/README.md
 * ("Progress") has the measurements behind it.
 *
 * An application that runs the engine itself (polls, posts) from one thread
 * while the helper runs tells it so with the call hooks below, as the
 * drop-in libibverbs does around every poll and post:
 * @code
 *   drnic_progress_app_enter();
 *   n = drnic_cq_poll(cq, 16, wc);
 *   drnic_progress_app_leave();
 * @endcode
 * and after posting, drnic_progress_posted(). Without them the helper still
 * works, but a frame that arrives while the application holds the engine may
 * wait for the helper's timeout (a millisecond) instead of being run at once.
 *
 * drnic_progress_cq_wait() is the one-call form for a thread that waits for
 * completions: it polls for a bounded time, then arms the CQ and sleeps.
 *
 * One helper per process (the engines of inline mode are the process's).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drnic_cq.h"
#include "drnic_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * What the helper is doing. drnic_progress_posted() acts on LAST_LOOK and
 * ASLEEP: there the helper may have missed work an application call added.
 */
enum drnic_progress_state {
	DRNIC_PROGRESS_STATE_STOPPED = 0, /**< no helper */
	DRNIC_PROGRESS_STATE_AWAKE,       /**< running the engine, or looking for work */
	DRNIC_PROGRESS_STATE_QUIET_NAP,   /**< timed sleep, unarmed: the application runs the engine */
	DRNIC_PROGRESS_STATE_NAP,         /**< napping: no wake-up, or frames held on timers */
	DRNIC_PROGRESS_STATE_LAST_LOOK,   /**< wake-up armed, taking its last look */
	DRNIC_PROGRESS_STATE_ASLEEP,      /**< looked for the last time: asleep on the wake-up */
	DRNIC_PROGRESS_STATE_COUNT,       /**< number of states */
};

/**
 * The name of a state, for logs ("awake", "last_look", ...).
 *
 * @return a static string; "unknown" for a value outside the enum. Never NULL.
 */
const char *drnic_progress_state_str(enum drnic_progress_state state);

/** What the helper and the waits did (drnic_progress_stats_get()). */
struct drnic_progress_stats {
	enum drnic_progress_state state; /**< now */
	uint64_t sleeps;        /**< sleeps on the receive wake-up */
	uint64_t frames;        /**< ... that a frame ended */
	uint64_t pokes;         /**< ... that an application call ended */
	uint64_t timeouts;      /**< ... that ended on the timeout (engine timers, 1 ms) */
	uint64_t last_work;     /**< last looks that found work: no sleep */
	uint64_t handovers;     /**< last looks handed over to an application call */
	uint64_t handover_self; /**< ... that the helper took back (the call had left) */
	uint64_t naps;          /**< naps (napping mode, frames held on timers, RT breaths) */
	uint64_t quiet_naps;    /**< unarmed sleeps while the application was calling */
	uint64_t spin_grows;    /**< sleeps a frame ended soon: the spin grew */
	uint64_t spin_max_ns;   /**< the longest spin reached */
	uint64_t waits;         /**< drnic_progress_cq_wait() calls */
	uint64_t wait_sleeps;   /**< ... sleeps in them (after arming the CQ) */
	uint64_t wait_events;   /**< ... sleeps a completion event ended */
	uint64_t wait_timeouts; /**< ... calls that returned 0 at their timeout */
};

/**
 * Start the helper thread for @p dev (one per process). In inline mode it
 * runs the engine (and a poll that returns SEND/RDMA WRITE completions
 * lingers, see drnic_progress_linger()); in dedicated mode it is allowed
 * (the drop-in's progress_thread = on) but the engines do not need it.
 * @p opts->thread is not read: the caller has decided.
 *
 * @param dev   an open device; the helper waits on its link's queue 0.
 * @param opts  tuning (cfg.progress_opts from drnic_config_init() or the
 *              configuration file).
 * @return 0; -EINVAL when @p dev or @p opts is NULL or a figure is out of
 *         the configuration table's range; -EBUSY when a helper runs
 *         already; the errno of eventfd() or pthread_create() (EMFILE,
 *         EAGAIN, ...) as a negative value.
 */
int drnic_progress_start(struct drnic_device *dev, const struct drnic_progress_opts *opts);

/**
 * Stop the helper and wait for its thread. Call before closing its device.
 *
 * @return 0; -EALREADY when no helper runs.
 */
int drnic_progress_stop(void);

/**
 * The helper's state now (any thread; a snapshot).
 *
 * @return the state; DRNIC_PROGRESS_STATE_STOPPED when no helper runs.
 */
enum drnic_progress_state drnic_progress_state(void);

/**
 * Read the helper's counters (any thread; a snapshot, kept after
 * drnic_progress_stop() until the next start).
 *
 * @return 0; -EINVAL when @p stats is NULL.
 */
int drnic_progress_stats_get(struct drnic_progress_stats *stats);

/**
 * Describe how the running helper waits, for logs: "blocking on the receive
 * wake-up of drnic0.ethdev (spin 2..200 us, ...), realtime off" or
 * "napping 5 us (the link has no receive wake-up), realtime off".
 *
 * @return the length of the description (as snprintf); -EINVAL when
 *         @p buf is NULL or @p size is 0; -EALREADY when no helper runs.
 */
int drnic_progress_describe(char *buf, size_t size);

/** What drnic_progress_trace_set()'s function is told about (numbers as
 * the drop-in's DRNIC_IBV_TRACE columns). */
enum drnic_progress_trace_event {
	DRNIC_PROGRESS_TRACE_RUN = 10,         /**< a run of the engine (ends only when it did work) */
	DRNIC_PROGRESS_TRACE_ARMED_SLEEP = 11, /**< a sleep on the wake-up; result 1 frame, 2 poke, 0 timeout */
	DRNIC_PROGRESS_TRACE_QUIET_SLEEP = 12, /**< an unarmed sleep; result as ppoll() */
};

/**
 * Debug: have @p fn called on the helper's thread at the start (@p begin
 * true) and end of its runs and sleeps, to record them. A begin may have no
 * end (a run that found nothing, a sleep not taken). NULL: none (default).
 * Set before drnic_progress_start().
 *
 * @return 0; -EBUSY while a helper runs.
 */
int drnic_progress_trace_set(void (*fn)(void *arg, enum drnic_progress_trace_event ev,
					bool begin, int result),
			     void *arg);

/**
 * An application call that runs the engine (poll, post) starts. Pair with
 * drnic_progress_app_leave(). Cheap; does nothing harmful without a helper.
 */
void drnic_progress_app_enter(void);

/**
 * The call drnic_progress_app_enter() announced ends. If the helper handed
 * its last look over to this call (the call held the engine then), the
 * engine runs once more here, so no frame waits for the helper's timeout.
 */
void drnic_progress_app_leave(void);

/**
 * After a post (inside the enter/leave pair): make sure the engine sees the
 * work although the helper may be going to sleep. Runs the engine when the
 * helper is taking its last look or asleep, and wakes the helper when that
 * run was skipped during its last look.
 */
void drnic_progress_posted(void);

/**
 * The application is about to block (arming a CQ, waiting for an event):
 * it will not run the engine, so the helper arms its wake-up at once
 * instead of waiting for the application to go quiet.
 */
void drnic_progress_app_waits(void);

/**
 * A poll returned completions that an ACK brought (SEND, RDMA WRITE): the
 * peer's answer may be right behind that ACK. Runs the engine until it finds
 * work, progress_linger_us at most (inline mode, helper running; else
 * nothing). When nothing came, tells the helper as
 * drnic_progress_app_waits() does.
 */
void drnic_progress_linger(void);

/**
 * Wait for completions on @p cq: poll while busy, sleep while idle, in one
 * call. Polls (running the engine inline when @p dev is in inline mode) for
 * at most the spin (progress_spin_us of the running helper's options, else
 * drnic_config_init()'s 2 us), then arms the CQ (drnic_cq_req_notify()), polls
 * once more so that a completion that came meanwhile is not missed, and
 * sleeps on the CQ's completion channel. In inline mode without a helper
 * it also runs the engine: it sleeps on the link's receive wake-up as the
 * helper does (arm, last look, sleep until a frame, the engine's next timer
 * or the timeout), or naps progress_sleep_us (5 us without a helper) at a
 * time without one.
 *
 * The wait takes the channel's events and acknowledges them: give the CQ a
 * channel of its own (events of another CQ on it would be lost to that CQ's
 * waiter). Only one thread may poll a CQ at a time.
 *
 * @param dev         the device of the CQ's QPs.
 * @param cq          a CQ created with a completion channel.
 * @param wc          room for @p num_entries completions.
 * @param num_entries at least 1.
 * @param timeout_ms  how long to wait at most; 0: poll once; -1: no limit.
 * @return the number of completions written to @p wc (1..num_entries);
 *         0 when @p timeout_ms passed without one;
 *         -EINVAL for a NULL argument, @p num_entries < 1,
 *         @p timeout_ms < -1, or a CQ without a completion channel;
 *         -EOVERFLOW when the CQ is in error (it overflowed);
 *         -EINTR when a signal interrupted the sleep;
 *         the errno of drnic_query_device() for a device not open.
 */
int drnic_progress_cq_wait(struct drnic_device *dev, struct drnic_cq *cq, struct drnic_wc *wc,
			   int num_entries, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_PROGRESS_H */
