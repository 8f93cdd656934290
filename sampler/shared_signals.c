// SPDX-License-Identifier: MIT
/*
 * Signals sent to the whole process while we trace it.
 *
 * Untraced, a process discards a signal it ignores (SIGCHLD, SIGWINCH by
 * default) as it is sent; traced, the kernel queues it anyway and wakes a
 * thread for it, say one blocked in epoll_wait. That thread's EINTR is
 * undone at its signal-delivery stop (stops.c). But a thread we hold in a
 * ptrace stop meanwhile, once resumed, goes through get_signal and takes
 * the signal from the shared queue first: the woken thread then finds
 * nothing, no stop shows it to us, and it returns EINTR to the program.
 * So before resuming a thread, a signal of that kind still queued for the
 * process is left a moment to the thread the kernel woke for it, if
 * another thread is runnable; none is when the resumed one was woken.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>

#include "sampler/internal.h"

#define PEEK_SHARED 1                 /* PTRACE_PEEKSIGINFO_SHARED */
#define PEEK_MAX 8
#define HOLD_MAX_NS 500000ull         /* the woken thread runs within microseconds */
#define HOLD_BACKOFF_NS 1000000000ull /* after one nobody took: no holds a while */
#define MASKS_KEPT_NS 250000000ull

/* The kernel's struct ptrace_peeksiginfo_args (glibc does not declare it). */
struct peek_args {
	uint64_t off;
	uint32_t flags;
	int32_t nr;
};

/* SigBlk, SigIgn and SigCgt of the main thread in one read of its status
 * (tens of microseconds, while threads wait to be resumed), kept a
 * quarter second: a signal left queued (one every thread blocks) then
 * costs four reads a second, not one per resume. A signal-delivery stop
 * reads them afresh (stops.c). Unknown masks read as all set: blocked, so
 * never "only because traced". */
static const struct signal_masks *masks_of(struct sampler *s)
{
	struct signal_masks *m = &s->signal_masks;
	static const char *const names[] = { "SigBlk:", "SigIgn:", "SigCgt:" };
	unsigned long long *vals[] = { &m->blocked, &m->ignored, &m->caught };
	uint64_t now = monotonic_ns();
	char path[64], line[256];
	FILE *f;

	if (m->valid && now - m->read_ns < MASKS_KEPT_NS)
		return m;
	m->valid = true;
	m->read_ns = now;
	m->blocked = m->ignored = m->caught = ~0ull;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)s->pid);
	f = fopen(path, "re");
	if (!f)
		return m;
	while (fgets(line, sizeof(line), f))
		for (int i = 0; i < 3; i++)
			if (!strncmp(line, names[i], 7))
				*vals[i] = strtoull(line + 7, NULL, 16);
	fclose(f);
	return m;
}

/*
 * Untraced, a process discards a signal it ignores as it is sent, unless
 * the thread it is sent to (the leader, for kill) blocks it; traced, it is
 * delivered anyway and wakes a blocked syscall, only because we trace.
 */
bool woke_only_because_traced(struct sampler *s, int sig)
{
	const struct signal_masks *m;
	unsigned long long bit = 1ull << (sig - 1);

	if (sig < 1 || sig > 64)
		return false;
	m = masks_of(s);
	if (m->blocked & bit)
		return false;
	if (m->ignored & bit)
		return true;
	if (m->caught & bit)
		return false;
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}

/* The first queued process-wide signal that is there only because we
 * trace, 0 if none; one syscall when the queue is empty, as it nearly
 * always is. */
static int shared_traced_only(struct sampler *s, pid_t tid)
{
	siginfo_t si[PEEK_MAX];
	struct peek_args a = { .off = 0, .flags = PEEK_SHARED, .nr = PEEK_MAX };
	long n = ptrace(PTRACE_PEEKSIGINFO, tid, &a, si);

	for (long i = 0; i < n; i++)
		if (woke_only_because_traced(s, si[i].si_signo))
			return si[i].si_signo;
	return 0;
}

/* Another thread of the process on its way to take a signal: running or
 * runnable, not stopped by us. Without one, the thread about to be
 * resumed is the one the kernel woke. */
static bool another_runnable(struct sampler *s, pid_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];

		if (t->tid != tid && !t->gone && thread_state(s, t) == 'R')
			return true;
	}
	return false;
}

/* A thread other than tid in the table: without one, no thread can have
 * been woken for a process-wide signal but the one about to be resumed. */
static bool another_thread(const struct sampler *s, pid_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->tid != tid && !s->threads[i]->gone)
			return true;
	return false;
}

void shared_signals_leave_to_woken(struct sampler *s, pid_t tid)
{
	uint64_t start, now;
	int sig;

	/* One thread: its pause is spared the queue's peek. */
	if (!another_thread(s, tid))
		return;
	start = monotonic_ns();
	if (start < s->signal_hold_off_until_ns)
		return;
	sig = shared_traced_only(s, tid);
	if (!sig || !another_runnable(s, tid))
		return;
	stops_log(s, "tid %d held: signal %d queued for the process", (int)tid, sig);
	s->st.signal_holds++;
	for (;;) {
		struct timespec nap = { 0, 20000 };

		nanosleep(&nap, NULL);
		if (!shared_traced_only(s, tid))
			return;
		now = monotonic_ns();
		if (now - start > HOLD_MAX_NS) {
			/* Nobody took it: it may be this thread's after all. */
			s->signal_hold_off_until_ns = now + HOLD_BACKOFF_NS;
			return;
		}
	}
}
