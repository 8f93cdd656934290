// SPDX-License-Identifier: MIT
/*
 * EINTRs that only our tracing causes, in the waits that fail with EINTR
 * instead of restarting (epoll_wait, sigtimedwait, semtimedop, ...).
 *
 * Our interrupt wakes such a wait: at its stop the EINTR becomes the
 * kernel's own restart code (syscall_undo_eintr).
 *
 * A signal the program ignores wakes one too: untraced the kernel drops
 * it as it is sent, traced it queues it and wakes a thread for it. When
 * the woken thread takes it, its delivery stop is ours and the EINTR is
 * undone there (stops.c). But another thread can take it first (one we
 * just resumed goes through get_signal before anything else), and the
 * woken one then leaves its wait with EINTR and nothing to take: no stop
 * of ours, unless we asked for its syscall stops. So a thread found in
 * such a wait without a timeout (at one of its stops, or blocked: as it
 * is seized, or found asleep after it ran) is resumed with PTRACE_SYSCALL
 * from then on, while its syscalls are mostly such waits, within a budget of stops
 * a second: at the wait's exit stop an EINTR is turned back into the call
 * (what the kernel does for ERESTARTNOHAND, which cannot be left there:
 * the thread may have no signal pending any more, and the code would
 * reach the program). A signal delivered right after, that the program
 * catches or that stops it, gives the EINTR back (syscall_watch_signal),
 * as it would have had it untraced. (A program forking 200 children a
 * second, its main thread in sigwaitinfo: 0 to 4 spurious EINTRs in 4 s
 * before, tests/targets/fork_sigwait.c.)
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "sampler/internal.h"
#include "sampler/syscall_watch.h"

#define ERESTARTNOHAND 514      /* kernel-internal, include/linux/errno.h */
#define SYSCALL_INSN_LEN 2      /* x86-64 "syscall" */
#define WATCH_OTHERS_MAX 8      /* other syscalls in a row end a watch */
#define WATCH_STOPS_A_SECOND 500 /* each costs the thread a round trip to us */
#define WATCH_CHECK_NS 100000000ull /* a blocked thread's syscall read at most so often */

/*
 * Syscalls that answer a signal (here: our interrupt) with a plain EINTR
 * instead of a restart code, and have done nothing when they do. close()
 * and connect() are left out on purpose: their EINTR comes after side
 * effects.
 */
static bool restartable_on_eintr(long nr)
{
	switch (nr) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_rt_sigtimedwait:
	case SYS_semtimedop:
	case SYS_semop:
	case SYS_io_getevents:
#ifdef SYS_io_pgetevents
	case SYS_io_pgetevents:
#endif
	case SYS_msgrcv:
	case SYS_msgsnd:
	case SYS_mq_timedreceive:
	case SYS_mq_timedsend:
	case SYS_read:
	case SYS_readv:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_write:
	case SYS_writev:
	case SYS_sendto:
	case SYS_sendmsg:
		return true;
	default:
		return false;
	}
}

/* Whether the call had no timeout, so running it again from the start
 * cannot make it wait longer than it would have. */
static bool waits_forever(const struct user_regs_struct *r)
{
	switch ((long)r->orig_rax) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
		return (int)r->r10 < 0;
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
		return r->r10 == 0;
#endif
	case SYS_rt_sigtimedwait:
		return r->rdx == 0;
	case SYS_semtimedop:
		return r->r10 == 0;
	case SYS_io_getevents:
#ifdef SYS_io_pgetevents
	case SYS_io_pgetevents:
#endif
	case SYS_mq_timedreceive:
	case SYS_mq_timedsend:
		return r->r8 == 0;
	case SYS_semop:
	case SYS_msgrcv:
	case SYS_msgsnd:
		return true;
	default:
		return false; /* read/write and friends fail with EINTR only on timeouts */
	}
}

bool syscall_watch_wanted(const struct user_regs_struct *regs)
{
	return (long)regs->orig_rax >= 0 && restartable_on_eintr((long)regs->orig_rax) &&
	       waits_forever(regs);
}

/*
 * Our interrupt woke a thread that had just blocked in one of the calls
 * above, and the call is on its way back with EINTR. Turning that into
 * ERESTARTNOHAND lets the kernel decide as for its own restartable calls,
 * atomically at resume: EINTR if a signal handler runs now (as it would
 * have without us), otherwise the call is made again. (At an interrupt or
 * signal-delivery stop the thread is inside get_signal, so the kernel's
 * restart check follows.)
 */
void syscall_undo_eintr(struct sampler *s, struct thread *t,
			struct user_regs_struct *regs, bool only_untimed)
{
	struct user_regs_struct r = *regs;

	/* At a syscall stop the restart code could reach the program:
	 * syscall_watch_stop turned the EINTR back already. */
	if (t->watch.at_syscall_stop)
		return;
	/* A thread seen in such a wait, or just out of one, makes them. */
	syscall_watch_start(s, t, &r);
	if ((long)r.orig_rax < 0 || (long)r.rax != -EINTR ||
	    !restartable_on_eintr((long)r.orig_rax))
		return;
	if (only_untimed && !waits_forever(&r))
		return;
	r.rax = (unsigned long long)-ERESTARTNOHAND;
	if (regs_set(t->tid, &r) == 0)
		s->st.syscalls_restarted++;
	else
		stats_error(s, SAMPLER_ERR_PTRACE);
}

/* Stops of a watched thread, counted against its budget for the second. */
static bool within_budget(struct thread *t, uint64_t now)
{
	struct syscall_watch *w = &t->watch;

	if (now - w->second_ns >= 1000000000ull) {
		w->second_ns = now;
		w->second_stops = 0;
	}
	return ++w->second_stops <= WATCH_STOPS_A_SECOND;
}

void syscall_watch_start(struct sampler *s, struct thread *t, const struct user_regs_struct *regs)
{
	if (t->watch.on || t->untraced || t->walk_once || t->detaching || !syscall_watch_wanted(regs))
		return;
	if (!within_budget(t, monotonic_ns()))
		return;
	t->watch.on = true;
	t->watch.others = 0;
	s->st.waits_watched++;
	stops_log(s, "watch tid %d in syscall %lld", (int)t->tid, (long long)regs->orig_rax);
}

/* Blocked (tick_sample_blocked reads it from /proc, no stop): an
 * interrupt of its own, whose stop starts the watch. */
void syscall_watch_blocked(struct sampler *s, struct thread *t)
{
	if (t->watch.on || t->untraced || t->walk_once || t->detaching || t->interrupt_sent)
		return;
	stops_log(s, "interrupt tid %d to watch its wait", (int)t->tid);
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) < 0) {
		if (errno != ESRCH)
			stats_error(s, SAMPLER_ERR_PTRACE);
		return;
	}
	t->interrupt_ns = monotonic_ns();
	t->interrupt_sent = true;
}

void syscall_watch_check(struct sampler *s, struct thread *t)
{
	struct blocked_state b;
	uint64_t now;

	if (t->watch.on || t->untraced || t->walk_once || t->detaching || t->interrupt_sent)
		return;
	now = monotonic_ns();
	if (t->watch.checked_ns && now - t->watch.checked_ns < WATCH_CHECK_NS)
		return;
	t->watch.checked_ns = now;
	if (thread_blocked_state(s, t, &b) == 0 && b.untimed_wait)
		syscall_watch_blocked(s, t);
}

int syscall_watch_request(const struct thread *t)
{
	return t->watch.on ? PTRACE_SYSCALL : PTRACE_CONT;
}

static void watch_end(struct sampler *s, struct thread *t)
{
	stops_log(s, "watch tid %d ends", (int)t->tid);
	t->watch.on = false;
	t->watch.others = 0;
}

/* At the exit stop of a watched wait that failed with EINTR: run it again,
 * as the kernel does for a call it restarts. */
static void rewind_call(struct sampler *s, struct thread *t, bool interrupted)
{
	struct user_regs_struct r;

	if (regs_get(t->tid, &r) < 0 || (long)r.rax != -EINTR || (long)r.orig_rax < 0)
		return;
	/* Woken by our interrupt, a timed call is made again too, as
	 * syscall_undo_eintr does. */
	if (!(interrupted ? restartable_on_eintr((long)r.orig_rax) : syscall_watch_wanted(&r)))
		return;
	r.rip -= SYSCALL_INSN_LEN;
	r.rax = r.orig_rax;
	if (regs_set(t->tid, &r) < 0) {
		stats_error(s, SAMPLER_ERR_PTRACE);
		return;
	}
	t->watch.rewound = true;
	t->watch.rewound_rip = r.rip;
	s->st.waits_rewound++;
	stops_log(s, "EINTR of tid %d's syscall %lld made again", (int)t->tid, (long long)r.orig_rax);
}

void syscall_watch_stop(struct sampler *s, struct thread *t, bool interrupted)
{
	struct __ptrace_syscall_info info;
	struct user_regs_struct r = { 0 };

	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof(info), &info) <= 0) {
		if (errno != ESRCH)
			watch_end(s, t); /* kernel before 5.3: no watching */
		return;
	}
	/* Only an entry may end a watch: a call rewound at its exit is
	 * watched until entered again. */
	if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
		if (info.exit.is_error && info.exit.rval == -EINTR)
			rewind_call(s, t, interrupted);
		return;
	}
	if (info.op != PTRACE_SYSCALL_INFO_ENTRY)
		return;
	t->watch.rewound = false;
	if (!within_budget(t, monotonic_ns())) {
		watch_end(s, t);
		return;
	}
	r.orig_rax = info.entry.nr;
	r.rdi = info.entry.args[0];
	r.rsi = info.entry.args[1];
	r.rdx = info.entry.args[2];
	r.r10 = info.entry.args[3];
	r.r8 = info.entry.args[4];
	r.r9 = info.entry.args[5];
	if (syscall_watch_wanted(&r))
		t->watch.others = 0;
	else if (++t->watch.others > WATCH_OTHERS_MAX)
		watch_end(s, t);
}

void syscall_watch_signal(struct sampler *s, struct thread *t, bool ignored)
{
	struct user_regs_struct r;

	if (!t->watch.rewound || ignored)
		return;
	t->watch.rewound = false;
	if (regs_get(t->tid, &r) < 0 || r.rip != t->watch.rewound_rip || r.rax != r.orig_rax)
		return;
	r.rip += SYSCALL_INSN_LEN;
	r.rax = (unsigned long long)-EINTR;
	if (regs_set(t->tid, &r) < 0)
		stats_error(s, SAMPLER_ERR_PTRACE);
	else
		s->st.waits_rewound--;
}
