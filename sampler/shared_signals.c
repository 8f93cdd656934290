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
 * One that nobody takes (the kernel woke no one: every thread was in a
 * stop of ours when it came) is not waited for again while it stays
 * queued; every new one is, up to a ceiling of held time a second. (A
 * second of no holds after any that timed out left a program forking 200
 * children a second, its main thread in sigwaitinfo, a few spurious
 * EINTRs each run.)
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>

#include "sampler/internal.h"
#include "sampler/signals.h"

#define PEEK_SHARED 1                 /* PTRACE_PEEKSIGINFO_SHARED */
#define PEEK_MAX 8
#define HOLD_MAX_NS 500000ull         /* the woken thread runs within microseconds */
#define HOLDS_NS_A_SECOND 20000000ull /* the most a second's holds may take */
#define MASKS_KEPT_NS 250000000ull
#define MASKS_FRESH_NS 10000000ull    /* after a signal passed on: a handler changed? */
#define BLOCK_NEVER ((1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1)))

/* The kernel's struct ptrace_peeksiginfo_args (glibc does not declare it). */
struct peek_args {
	uint64_t off;
	uint32_t flags;
	int32_t nr;
};

/* SigBlk, SigIgn and SigCgt of the main thread in one read of its status
 * (tens of microseconds, while threads wait to be resumed), kept a
 * quarter second: a signal left queued (one every thread blocks) then
 * costs four reads a second, not one per resume; kept_ns 0 reads now.
 * Unknown masks read as all set: blocked, so never "only because
 * traced". */
static const struct signal_masks *masks_read(struct sampler *s, uint64_t kept_ns)
{
	struct signal_masks *m = &s->signals.masks;
	static const char *const names[] = { "SigBlk:", "SigIgn:", "SigCgt:" };
	unsigned long long *vals[] = { &m->blocked, &m->ignored, &m->caught };
	uint64_t now = monotonic_ns();
	char path[64], line[256];
	FILE *f;

	if (m->valid && now - m->read_ns < kept_ns)
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
	/* Every signal but SIGKILL and SIGSTOP blocked: glibc's
	 * pthread_create for the length of its clone(), not the program's
	 * mask. Kept that long only. */
	if ((m->blocked | BLOCK_NEVER) == ~0ull)
		m->read_ns = now - (MASKS_KEPT_NS - MASKS_FRESH_NS);
	return m;
}

/* Whether the program's disposition drops sig: ignored, or left to a
 * default that ignores it (the disposition is the process's, whichever
 * thread's status it was read from). */
static bool masks_say_ignored(const struct signal_masks *m, int sig)
{
	unsigned long long bit = 1ull << (sig - 1);

	if (m->ignored & bit)
		return true;
	if (m->caught & bit)
		return false;
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}

static bool masks_say_traced_only(const struct signal_masks *m, int sig)
{
	return !(m->blocked & (1ull << (sig - 1))) && masks_say_ignored(m, sig);
}

/*
 * Untraced, a process discards a signal it ignores as it is sent, unless
 * the thread it is sent to (the leader, for kill) blocks it; traced, it is
 * delivered anyway and wakes a blocked syscall, only because we trace.
 */
bool woke_only_because_traced(struct sampler *s, int sig)
{
	return sig >= 1 && sig <= 64 && masks_say_traced_only(masks_read(s, MASKS_KEPT_NS), sig);
}

bool signal_traced_only_known(struct sampler *s, int sig)
{
	const struct signal_masks *m = &s->signals.masks;
	bool default_ignored = sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;

	if (sig < 1 || sig > 64)
		return false;
	/* Never read: only a signal ignored by default is worth the read
	 * now (the masks are read after each signal passed on). */
	if (!m->valid && !default_ignored)
		return false;
	return masks_say_ignored(m->valid ? m : masks_read(s, MASKS_KEPT_NS), sig);
}

void signal_masks_refresh(struct sampler *s)
{
	masks_read(s, MASKS_FRESH_NS);
}

/* The first queued process-wide signal that is there only because we
 * trace into q (q->set false if none); one syscall when the queue is
 * empty, as it nearly always is. */
static void shared_traced_only(struct sampler *s, pid_t tid, struct queued_signal *q)
{
	siginfo_t si[PEEK_MAX];
	struct peek_args a = { .off = 0, .flags = PEEK_SHARED, .nr = PEEK_MAX };
	long n = ptrace(PTRACE_PEEKSIGINFO, tid, &a, si);

	q->set = false;
	for (long i = 0; i < n; i++)
		if (woke_only_because_traced(s, si[i].si_signo)) {
			*q = (struct queued_signal){ si[i].si_signo, si[i].si_code,
						     si[i].si_signo == SIGCHLD ? si[i].si_status : 0,
						     si[i].si_pid, true };
			return;
		}
}

static bool same_signal(const struct queued_signal *a, const struct queued_signal *b)
{
	return a->set && b->set && a->signo == b->signo && a->code == b->code &&
	       a->status == b->status && a->pid == b->pid;
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
	struct signal_holds *h = &s->signals.holds;
	struct queued_signal q, now_q;
	uint64_t start, now;

	/* One thread: its pause is spared the queue's peek. */
	if (!another_thread(s, tid))
		return;
	shared_traced_only(s, tid, &q);
	if (!q.set) {
		h->unclaimed.set = false;
		return;
	}
	start = monotonic_ns();
	if (start - h->second_start_ns >= 1000000000ull) {
		h->second_start_ns = start;
		h->second_held_ns = 0;
	}
	if (same_signal(&q, &h->unclaimed) || h->second_held_ns >= HOLDS_NS_A_SECOND ||
	    !another_runnable(s, tid))
		return;
	stops_log(s, "tid %d held: signal %d queued for the process", (int)tid, q.signo);
	s->st.signal_holds++;
	for (;;) {
		struct timespec nap = { 0, 20000 };

		nanosleep(&nap, NULL);
		shared_traced_only(s, tid, &now_q);
		now = monotonic_ns();
		if (!same_signal(&q, &now_q))
			break;
		if (now - start > HOLD_MAX_NS) {
			/* Nobody took it: it may be this thread's after all. */
			h->unclaimed = q;
			break;
		}
	}
	h->second_held_ns += now - start;
}
