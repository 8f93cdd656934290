// SPDX-License-Identifier: MIT
/*
 * Threads blocked for long ("quiet"), asked about only when one may have
 * run.
 *
 * A training process has hundreds of threads that sleep for good, and one
 * schedstat read each per tick was most of trainsample's cost (500 threads
 * at 100 Hz). The process's CPU clock is the sum of every thread's CPU
 * time: the same counter schedstat prints (se.sum_exec_runtime), plus that
 * of the threads that ended, in one read however many threads there are.
 *
 * At a tick the threads that are not quiet are read first, then the clock.
 * What the clock has beyond those reads and the quiet threads' last known
 * times (the "rest") is the ended threads' time, plus whatever a quiet
 * thread ran since it was last asked, plus a running thread's advance
 * between its read and the clock's (only where the scheduler updated its
 * counter in between). So while the rest is no larger than the smallest
 * seen since every quiet thread was last asked, none of them ran and none
 * is asked; once it is larger, every one is asked this tick and the rest
 * is measured again after. A mistake either way costs reads, not samples,
 * except for a quiet thread that runs between its read and the clock's at
 * such a tick: it is seen at its next run or next turn.
 *
 * Both counters move only at a scheduler tick or switch, so a quiet thread
 * woken less than a scheduler tick ago (4 ms at HZ=250) is seen a tick
 * later, and one woken but still waiting for a CPU has not run at all: each
 * quiet thread still gets its turn every QUIET_TURN_NS (further apart for
 * hundreds: quiet_turn_ns), spread by tid.
 * Without the clock, that turn comes every QUIET_TURN_BLIND_NS instead.
 *
 * The clock walks every thread of the process in the kernel: about 80 us
 * for 500 threads on a VM, as much as the reads it saves at 100 Hz. It is
 * read at most every QUIET_CLOCK_EVERY_NS, and further apart when it is
 * dear (spaced_for_cost: 32 ms for 500 threads at 80 us, at most
 * QUIET_CLOCK_MOST_NS), so a quiet thread that runs is seen up to that
 * much later.
 */
#include <errno.h>
#include <time.h>

#include "sampler/internal.h"
#include "sampler/quiet.h"

#define QUIET_FOR_NS 200000000ull
#define QUIET_TURN_NS 1000000000ull
#define QUIET_TURN_MOST_NS 4000000000ull
#define QUIET_TURN_BLIND_NS 100000000ull
#define QUIET_CLOCK_EVERY_NS 10000000ull
#define QUIET_CLOCK_MOST_NS 50000000ull

static bool quiet_long(const struct sampler *s, const struct thread *t)
{
	return t->seen_blocked && t->quiet_since_ns && s->tick_now - t->quiet_since_ns >= QUIET_FOR_NS;
}

/* Each quiet thread's turn: every second, or further apart when there are
 * so many that their reads would cost more than spaced_for_cost allows
 * (2 s for 500 at 10 us a read). */
static uint64_t quiet_turn_ns(const struct sampler *s)
{
	if (!s->quiet.cpu_clock_ok)
		return QUIET_TURN_BLIND_NS;
	return spaced_for_cost(s->quiet.count * s->schedstat_cost_ns, QUIET_TURN_NS, QUIET_TURN_MOST_NS);
}

bool quiet_unasked(const struct sampler *s, const struct thread *t)
{
	uint64_t every = s->period_ns ? quiet_turn_ns(s) / s->period_ns : 1;

	return !s->quiet.ask_all && every > 1 && quiet_long(s, t) &&
	       (s->tick + (uint64_t)t->tid) % every != 0;
}

static int process_cpu_ns(struct sampler *s, int64_t *ns)
{
	uint64_t start = monotonic_ns();
	struct timespec ts;

	if (clock_gettime(s->quiet.cpu_clock, &ts) < 0)
		return -errno;
	s->quiet.clock_cost_ns = monotonic_ns() - start;
	s->st.quiet_clock_reads++;
	*ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return 0;
}

/* The clock less every live thread's last known CPU time. */
static int quiet_rest(struct sampler *s, int64_t *rest)
{
	int64_t clock_ns = 0;
	int ret = process_cpu_ns(s, &clock_ns);

	if (ret < 0)
		return ret;
	*rest = clock_ns;
	for (size_t i = 0; i < s->nthreads; i++)
		if (!s->threads[i]->gone)
			*rest -= (int64_t)s->threads[i]->runtime_ns;
	return 0;
}

static bool polled(const struct thread *t)
{
	return !t->gone && !t->listening && !t->detaching && !t->interrupt_sent;
}

void quiet_tick_begin(struct sampler *s)
{
	size_t quiet = 0;
	int64_t rest = 0, clock_ns = 0;

	s->quiet.ask_all = false;
	if (!s->quiet.cpu_clock_tried) {
		s->quiet.cpu_clock_tried = true;
		s->quiet.cpu_clock_ok = clock_getcpuclockid(s->pid, &s->quiet.cpu_clock) == 0;
	}
	if (!s->quiet.cpu_clock_ok)
		return;
	/* Between two reads of the clock, the threads are not even counted
	 * (at 1 kHz with 500 threads, that loop was a tenth of our time). */
	if (s->quiet.rest_known &&
	    s->tick_now - s->quiet.clock_at < spaced_for_cost(s->quiet.clock_cost_ns, QUIET_CLOCK_EVERY_NS,
								QUIET_CLOCK_MOST_NS)) {
		s->st.quiet_ticks++;
		return;
	}
	for (size_t i = 0; i < s->nthreads; i++)
		quiet += polled(s->threads[i]) && quiet_long(s, s->threads[i]);
	s->quiet.count = quiet;
	if (!quiet) {
		s->quiet.rest_known = false;
		return;
	}
	s->st.quiet_ticks++;
	/* The others' schedstat now (kept for the tick's own read), then
	 * the clock. */
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];

		if (t->gone)
			continue;
		if (polled(t) && !quiet_long(s, t))
			thread_schedstat(s, t, NULL);
		rest -= (int64_t)t->runtime_ns;
	}
	if (process_cpu_ns(s, &clock_ns) < 0) {
		s->quiet.cpu_clock_ok = false;
		return;
	}
	rest += clock_ns;
	s->quiet.clock_at = s->tick_now;
	if (s->quiet.rest_known && rest <= s->quiet.rest_ns) {
		s->quiet.rest_ns = rest;
		return;
	}
	s->quiet.ask_all = true;
	s->st.quiet_asks++;
}

void quiet_tick_end(struct sampler *s)
{
	int64_t rest = 0;

	if (!s->quiet.ask_all)
		return;
	s->quiet.ask_all = false;
	s->quiet.rest_known = quiet_rest(s, &rest) == 0;
	s->quiet.rest_ns = rest;
	s->quiet.clock_at = s->tick_now;
}

/* A thread that leaves the table takes its time into the ended ones'. */
void quiet_thread_left(struct sampler *s, const struct thread *t)
{
	s->quiet.rest_ns += (int64_t)t->runtime_ns;
}
