// SPDX-License-Identifier: MIT
/*
 * The sampling loop: tick on absolute deadlines until the duration passes,
 * a stop signal arrives or the target exits; then detach.
 *
 * Ticks come from a timerfd armed at absolute CLOCK_MONOTONIC deadlines
 * (the same hrtimer path as clock_nanosleep TIMER_ABSTIME) so the loop can
 * also sleep on the signalfd that reports tracee stops without a race.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/python/pysample.h"
#include "sampler/queue.h"
#include "sampler/signals.h"
#include "sampler/tick.h"
#include "sampler/waits.h"
#include "symbolize/symbolize.h"

#define PERIODIC_NS 100000000ull
#define SYMBOLS_REFRESH_NS 100000000ull
#define SYMBOLS_REFRESH_MOST_NS 2000000000ull
/* Unwinding stops this long before a tick, to be back in poll for it. */
#define QUEUE_MARGIN_NS 100000ull

static uint64_t next_random(struct sampler *s)
{
	/* xorshift64*: jitter only, not security. */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dull;
}

static void arm_timer(struct sampler *s, uint64_t deadline)
{
	struct itimerspec its = {
		.it_value = {
			.tv_sec = (time_t)(deadline / 1000000000ull),
			.tv_nsec = (long)(deadline % 1000000000ull),
		},
	};

	timerfd_settime(s->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/*
 * Each deadline is the previous one plus a gap drawn afresh, uniform from a
 * fifth of the period to 1.8 periods: the mean rate is exact, and the
 * spread (a period and more) leaves each tick's phase in anything the
 * target does periodically nearly independent of the last one's. Gaps of
 * the period plus or minus a quarter (before) only let the phase wander: a
 * loop whose step had slowed near the period (a loaded machine) was caught
 * at the same phase tick after tick, and its phases read as steps ten
 * times longer. Drawn gaps, not one tick at a random point of each
 * period's slot: a sample is weighted by the gap it ends, and a slot's
 * gap depends on where its tick fell, which is the phase, so a target in
 * step with the period would be weighed wrong.
 */
static uint64_t next_deadline(struct sampler *s, uint64_t deadline, uint64_t now)
{
	uint64_t fifth = s->period_ns / 5;
	uint64_t next = deadline + fifth + next_random(s) % (8 * fifth + 1);

	if (next <= now) {
		uint64_t late = (now - next) / s->period_ns + 1;

		s->st.missed_ticks += late;
		next += late * s->period_ns;
	}
	return next;
}

/*
 * Ctrl-Z: never leave the target frozen behind a stopped tracer. Every
 * thread is let go first; one that cannot be (a vfork parent waits in the
 * kernel until its child execs) would freeze at its next stop, so then
 * trainsample does not stop but keeps sampling and says why.
 */
static void stop_self(struct sampler *s)
{
	char err[256];
	int ret;

	s->signals.tstp_requested = false;
	procs_let_go(s);
	detach_threads(s);
	if (s->nthreads) {
		sampler_notice(s, "not stopping: thread %d cannot be let go right now; try again",
			       (int)s->threads[0]->tid);
	} else {
		kill(getpid(), SIGSTOP);
	}
	/* Continued (fg/bg): take the threads again. */
	ret = attach_threads(s, err, sizeof(err));
	if (ret < 0 || !s->nthreads) {
		if (ret < 0 && ret != -ESRCH)
			sampler_notice(s, "cannot attach again after being stopped: %s", err);
		s->exited = true;
	}
	sym_process_reload(s->sym);
	if (s->opt.subprocesses && !s->exited)
		procs_attach_descendants(s);
	stops_walk_due(s);
	stops_wait(s, 0);
	s->last_tick_ns = 0;
}

/*
 * Every followed process's tick, the root's first, each whole (its traps
 * waited for) before the next: processes that share a CPU are then never
 * stopped all at once. Interrupting every process first and waiting for
 * all the traps together kept 1 kHz with 4 workers on one CPU (713 ticks
 * a second against 122 in turn, missed ones counted and weighed), but
 * cost the job more at 100 Hz: 8.8% against 2.5% (medians of 12, job
 * pinned apart from trainsample; /tmp A/B of bench/pool4.py).
 */
static void tick_all(struct sampler *s, uint64_t now)
{
	stops_walk_at_tick(s, now);
	tick_sample(s, now);
	for (size_t i = 0; i < s->tree.nprocs; i++)
		if (!s->tree.procs[i]->exited && s->tree.procs[i]->sym)
			tick_sample(s->tree.procs[i], now);
}

static void unwind_all(struct sampler *s, uint64_t until)
{
	if (s->queue.count)
		queue_process(s, until);
	for (size_t i = 0; i < s->tree.nprocs; i++)
		if (s->tree.procs[i]->queue.count && monotonic_ns() < until)
			queue_process(s->tree.procs[i], until);
}

static void refresh_symbols(struct sampler *s)
{
	sym_process_refresh(s->sym);
	for (size_t i = 0; i < s->tree.nprocs; i++)
		if (!s->tree.procs[i]->exited && s->tree.procs[i]->sym)
			sym_process_refresh(s->tree.procs[i]->sym);
}

static int wait_ms_until(uint64_t now, uint64_t t)
{
	if (!t)
		return -1;
	if (t <= now)
		return 0;
	return (int)((t - now + 999999) / 1000000);
}

void sampler_request_stop(struct sampler *s)
{
	s->signals.stop_requested = true;
	s->signals.stop_signo = 0;
}

void sampler_run(struct sampler *s, enum sampler_end *end, int *signo)
{
	uint64_t now = monotonic_ns(), deadline, end_at = 0, next_periodic, last_refresh = now;
	uint64_t refresh_every = SYMBOLS_REFRESH_NS;

	s->start_ns = now;
	deadline = now + s->period_ns / 2;
	arm_timer(s, deadline);
	next_periodic = now + PERIODIC_NS;
	if (s->opt.duration_s > 0)
		end_at = now + (uint64_t)(s->opt.duration_s * 1e9);
	*signo = 0;
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = s->sigfd, .events = POLLIN },
			{ .fd = s->timerfd, .events = POLLIN },
		};
		int timeout, ret;

		stops_wait(s, 0);
		threads_sweep(s);
		for (size_t i = 0; i < s->tree.nprocs; i++)
			threads_sweep(s->tree.procs[i]);
		procs_reap(s);
		procs_open_pending(s);
		now = monotonic_ns();
		if (s->exited) {
			*end = SAMPLER_END_EXITED;
			break;
		}
		if (s->signals.stop_requested) {
			*end = SAMPLER_END_SIGNAL;
			*signo = s->signals.stop_signo;
			break;
		}
		if (end_at && now >= end_at) {
			*end = SAMPLER_END_DURATION;
			break;
		}
		if (s->signals.tstp_requested) {
			stop_self(s);
			deadline = monotonic_ns() + s->period_ns;
			arm_timer(s, deadline);
			continue;
		}
		if (now >= next_periodic) {
			/* Start-up (attaching, symbols, a first storm of
			 * threads) is left out of the settled share. */
			if (!s->settled_at_ns && now - s->start_ns >= 1000000000ull) {
				s->settled_at_ns = now;
				s->settled_cpu_ns = own_cpu_ns();
			}
			if (s->opt.periodic)
				s->opt.periodic(s->opt.periodic_ctx, now);
			next_periodic = now + PERIODIC_NS;
			/* Changes no unknown address shows (dlclose then dlopen
			 * at the same place, perf map entries over reused JIT
			 * memory) are caught up with here. */
			if (now - last_refresh >= refresh_every) {
				refresh_symbols(s);
				last_refresh = monotonic_ns();
				/* However large the maps (a stack each for
				 * hundreds of threads). */
				refresh_every = spaced_for_cost(last_refresh - now, SYMBOLS_REFRESH_NS,
								SYMBOLS_REFRESH_MOST_NS);
			}
		}
		timeout = wait_ms_until(now, next_periodic);
		if (end_at) {
			int t = wait_ms_until(now, end_at);

			if (t < timeout)
				timeout = t;
		}
		stops_unanswered_from(s, 0);
		ret = poll(pfd, 2, timeout);
		stops_unanswered_from(s, monotonic_ns());
		if (ret <= 0)
			continue;
		if (pfd[0].revents & POLLIN)
			signals_drain(s);
		if (pfd[1].revents & POLLIN) {
			uint64_t expirations;

			if (read(s->timerfd, &expirations, sizeof(expirations)) != sizeof(expirations))
				continue;
			now = monotonic_ns();
			tick_all(s, now);
			deadline = next_deadline(s, deadline, monotonic_ns());
			arm_timer(s, deadline);
		}
		/* Unwind in the time left before the next tick. */
		if (deadline > QUEUE_MARGIN_NS)
			unwind_all(s, deadline - QUEUE_MARGIN_NS);
	}
	s->end_ns = monotonic_ns();
	s->end_cpu_ns = own_cpu_ns();
	if (!s->opt.subprocesses && !s->spawned && !s->exited)
		procs_count_unfollowed(s);
	procs_let_go(s);
	detach_threads(s);
	queue_process(s, UINT64_MAX);
	pysample_finish(s);
}
