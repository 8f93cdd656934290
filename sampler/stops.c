// SPDX-License-Identifier: MIT
/*
 * The ptrace state machine: every stop a seized thread reports is handled
 * here and resumed the way the kernel expects, so tracing is invisible to
 * the target.
 *
 *   interrupt trap (ours)     copy if the tick asked, undo a caused EINTR, resume
 *   new-thread / SIGCONT trap resume
 *   group stop                PTRACE_LISTEN: stays stopped, SIGCONT still wakes it
 *   signal-delivery stop      resume with the same signal (never lost)
 *   clone event               adopt the new thread (or detach a new process)
 *   exec event                every other thread is gone; new maps
 *   exit                      drop quietly
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/formats.h"
#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/python/pysample.h"
#include "sampler/service.h"
#include "sampler/signals.h"
#include "sampler/stacks.h"
#include "sampler/storm.h"
#include "sampler/syscall_watch.h"
#include "sampler/tick.h"
#include "sampler/waits.h"
#include "symbolize/symbolize.h"

void stops_log(const struct sampler *s, const char *fmt, ...)
{
	va_list ap;
	uint64_t now;

	if (!s->opt.trace_stops)
		return;
	now = monotonic_ns();
	fprintf(stderr, "trainsample: [%" PRIu64 ".%06" PRIu64 "] ", now / 1000000000u,
		now / 1000u % 1000000u);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A syscall-entry or -exit stop (PTRACE_O_TRACESYSGOOD) of a watched
 * thread, told apart from PTRACE_EVENT_* values and from event 0, a
 * signal's delivery. */
#define STOP_SYSCALL 0x100

static bool is_group_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void resume(struct sampler *s, struct thread *t, int sig)
{
	shared_signals_leave_to_woken(s, t->tid);
	if (ptrace(syscall_watch_request(t), t->tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH)
		stats_error(s, SAMPLER_ERR_PTRACE);
}


static void undo_eintr_now(struct sampler *s, struct thread *t, bool only_untimed, bool sampled)
{
	struct user_regs_struct regs;

	if (regs_get(t->tid, &regs) < 0)
		return;
	if (sampled)
		stats_trap_entry(s, &regs);
	syscall_undo_eintr(s, t, &regs, only_untimed);
}

/*
 * Any ptrace stop consumes a pending PTRACE_INTERRUPT (kernel/signal.c,
 * ptrace_stop: "any trap clears pending STOP trap"): whatever stop a thread
 * we interrupted reports first is the one we asked for. Copy there if the
 * tick wanted it, and undo an EINTR the interrupt caused.
 */
/* The interrupt answered: no longer pending, nor counted by the tick. */
static void interrupt_answered(struct sampler *s, struct thread *t)
{
	t->interrupt_sent = false;
	if (t->counted) {
		t->counted = false;
		s->pass.pending_traps--;
	}
	t->pause_pending = false;
}

static void consume_interrupt(struct sampler *s, struct thread *t, bool running)
{
	if (!t->interrupt_sent)
		return;
	interrupt_answered(s, t);
	/* A group stop is job control's, and so is any EINTR it caused
	 * (signal(7): stop signals make some calls fail, untraced too). */
	if (!running) {
		t->want_copy = t->want_py_walk = false;
		return;
	}
	/* Answering only (service.c): no sample, the tick's time carried. */
	if (sampler_root(s)->service.answering_only && t->want_copy) {
		thread_passed_by(s, t);
		t->want_copy = t->want_py_walk = false;
	}
	if (t->want_copy && t->want_py_walk) {
		/* Walk first: memory reads need no ptrace call, and the first
		 * one (here the registers') waits until the thread is off its
		 * CPU, which the walk overlaps. */
		pysample_walk_stopped(s, t);
		undo_eintr_now(s, t, false, true);
		t->pause_pending = true;
	} else if (t->want_copy) {
		tick_copy_stopped(s, t);
		t->pause_pending = true;
	} else {
		undo_eintr_now(s, t, false, false);
	}
	t->want_copy = t->want_py_walk = false;
}

static void resume_after(struct sampler *s, struct thread *t, int sig)
{
	resume(s, t, sig);
	if (t->pause_pending) {
		t->pause_pending = false;
		stats_pause(s, monotonic_ns() - t->interrupt_ns);
	}
}

/* Our interrupt's stop was a signal's delivery: no sample there (the
 * signal must be passed on at once); the tick's time goes to the
 * thread's next sample. */
static void interrupt_passed(struct sampler *s, struct thread *t)
{
	bool wanted = t->want_copy;

	if (!t->interrupt_sent)
		return;
	interrupt_answered(s, t);
	t->want_copy = t->want_py_walk = false;
	if (wanted)
		thread_passed_by(s, t);
}

/*
 * A signal reported at its delivery stop is the target's only once
 * passed on: were we killed before PTRACE_CONT (or before the thread ran
 * again), the kernel would drop it. So a signal the program handles (or
 * that acts by default) goes on at once, our interrupt's sample
 * skipped, nothing read and nobody held; only a signal the program
 * ignores, whose loss costs nothing, waits for the sample, the EINTR
 * undone and a hold (shared_signals.c). The masks that tell the two apart
 * are read again after.
 */
static void handle_signal(struct sampler *s, struct thread *t, int sig)
{
	bool traced_only = signal_traced_only_known(s, sig);

	syscall_watch_signal(s, t, traced_only);
	if (traced_only) {
		if (t->interrupt_sent)
			consume_interrupt(s, t, true);
		else
			undo_eintr_now(s, t, true, false);
		resume_after(s, t, sig);
	} else {
		interrupt_passed(s, t);
		if (ptrace(syscall_watch_request(t), t->tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH)
			stats_error(s, SAMPLER_ERR_PTRACE);
	}
	if (sig > 0 && sig <= 64)
		s->signals.target_signal_ns[sig] = monotonic_ns();
	s->st.signals_forwarded++;
	signal_masks_refresh(s);
}

static void detach_at_stop(struct sampler *s, struct thread *t, int sig, int event);

/* A signal-delivery stop looked at but not taken (waits.c): a signal the
 * program handles, or any a thread being let go gets, goes on now, while
 * the kernel still holds it for the thread, so our death at any moment
 * cannot lose it. An ignored one is taken and handled as any stop (held
 * for a sample and the EINTR repair: its loss costs nothing). */
bool stops_pass_at_once(struct sampler *s, pid_t tid, int sig)
{
	struct sampler *o = procs_owner(sampler_root(s), tid);
	struct thread *t = thread_find(o, tid);

	if (!t || t->walk_once || (!t->detaching && signal_traced_only_known(o, sig)))
		return false;
	if (sampler_root(s)->opt.die_at_signal_stop == -1 || sampler_root(s)->opt.die_at_signal_stop == sig)
		raise(SIGKILL);
	stops_came(o);
	stops_log(o, "stop tid %d sig %d event 0, passed on untaken%s", (int)tid, sig,
		  t->detaching ? " as it is let go" : "");
	if (t->detaching)
		detach_at_stop(o, t, sig, 0);
	else
		handle_signal(o, t, sig);
	return true;
}

static void handle_event_stop(struct sampler *s, struct thread *t, int sig)
{
	if (is_group_stop_signal(sig)) {
		/* Stopped by job control, not running: nothing to copy. */
		consume_interrupt(s, t, false);
		t->listening = true;
		if (ptrace(PTRACE_LISTEN, t->tid, NULL, NULL) < 0 && errno != ESRCH)
			resume(s, t, 0);
		return;
	}
	/* Our interrupt, a new thread's first stop, or the end of a group stop. */
	t->listening = false;
	consume_interrupt(s, t, true);
	resume_after(s, t, 0);
}

/* A watched thread entering or leaving a syscall (syscall_watch.c): an
 * interrupt of ours this stop answered is sampled here, after the wait's
 * EINTR was turned back into the call (no restart code is left at this
 * stop: the kernel may not look at it again). */
static void handle_syscall_stop(struct sampler *s, struct thread *t)
{
	syscall_watch_stop(s, t, t->interrupt_sent);
	t->watch.at_syscall_stop = true;
	consume_interrupt(s, t, true);
	t->watch.at_syscall_stop = false;
	resume_after(s, t, 0);
}

/* clone() without CLONE_THREAD: let the new process go now, or at its first stop. */
static void release_foreign(struct sampler *s, pid_t pid)
{
	struct thread *n;

	if (!traced_by_us(pid))
		return; /* let go already, at a first stop that came first */
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL) == 0)
		return;
	n = thread_add(s, pid);
	if (n)
		n->detaching = true;
}

/* A new thread, or a new process (clone without CLONE_THREAD, fork with
 * a spawned command): a launcher's child is followed (follow.c). */
static void handle_clone(struct sampler *s, struct thread *t, int sig, int event)
{
	unsigned long msg = 0;
	bool foreign = false;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg) == 0 && msg &&
	    !thread_find(s, (pid_t)msg)) {
		if (event != PTRACE_EVENT_CLONE && follow_wanted(s, (pid_t)msg) &&
		    follow_child(s, (pid_t)msg, t)) {
			detach_at_stop(s, t, sig, event);
			return;
		}
		/* clone() without CLONE_THREAD makes a process; TRACECLONE
		 * seized it anyway. A process is followed (procs.c) or let
		 * go and counted. */
		if (event == PTRACE_EVENT_CLONE)
			thread_adopt(s, (pid_t)msg, &foreign);
		else
			foreign = true;
		if (foreign && !procs_follow(s, (pid_t)msg)) {
			release_foreign(s, (pid_t)msg);
			sampler_root(s)->st.processes_left++;
		}
	}
	if (!foreign)
		storm_note_clone(s, t);
	consume_interrupt(s, t, true);
	resume_after(s, t, 0);
}

/*
 * The exec'ing thread now has the process's id and every other thread is
 * gone, the old leader included: what we knew about the task behind this
 * id (an interrupt sent to the old leader, its stack, its files) no longer
 * holds, so the entry starts afresh.
 */
static void handle_exec(struct sampler *s)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (!s->threads[i]->gone)
			thread_remove(s, s->threads[i]);
	s->exec_seq++; /* copies waiting to be unwound belong to the old image */
	s->follow_launcher = false; /* a program now, not a launcher */
	if (s->tree.root && !procs_exec_allowed(s)) {
		/* Left alone from its first instruction on. */
		if (ptrace(PTRACE_DETACH, s->pid, NULL, NULL) < 0 && errno != ESRCH)
			stats_error(s, SAMPLER_ERR_PTRACE);
		s->tree.let_go = s->exited = true;
		s->tree.root->st.processes_left++;
		return;
	}
	if (!s->tree.root)
		setid_at_exec(s, false); /* the root runs the loop: it stays */
	if (!thread_add(s, s->pid))
		stats_error(s, SAMPLER_ERR_MEMORY);
	if (s->sym) /* NULL: a process that joined since the last tick */
		sym_process_exec(s->sym);
	if (s->tree.root)
		process_seen_report(s->tree.root, s->pid, -1, -1);
	if (proc_is_64bit(s->pid) == 0 && !s->signals.stop_requested) {
		sampler_notice(s, "PID %d now runs a 32-bit program, which trainsample cannot sample; stopping",
			       (int)s->pid);
		s->signals.stop_requested = true;
	}
	if (ptrace(PTRACE_CONT, s->pid, NULL, NULL) < 0 && errno != ESRCH)
		stats_error(s, SAMPLER_ERR_PTRACE);
}

static void handle_exit(struct sampler *s, pid_t tid, int status)
{
	struct thread *t = thread_find(s, tid);

	if (t)
		thread_remove(s, t);
	/* A traced leader is reported only once the whole group is gone. */
	if (tid == s->pid) {
		s->exited = true;
		process_exit_report(sampler_root(s), s->pid, status, monotonic_ns());
	}
	/* The command we started; after following its launcher's child, the
	 * launcher, which outlives it by a moment (our child, not traced). */
	if (s->spawned && tid == s->child) {
		s->exit_status = status;
		s->exit_reaped = true;
	}
}

/* Signals queued for the target as we let it go: it has them, whoever sent them. */
static void note_pending_signals(struct sampler *s, pid_t tid)
{
	siginfo_t si[16];

	for (int shared = 0; shared < 2; shared++) {
		struct __ptrace_peeksiginfo_args a = {
			.off = 0,
			.flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0,
			.nr = 16,
		};
		long n = ptrace(PTRACE_PEEKSIGINFO, tid, &a, si);

		for (long i = 0; i < n; i++)
			if (si[i].si_signo > 0 && si[i].si_signo <= 64)
				s->signals.target_signal_ns[si[i].si_signo] = monotonic_ns();
	}
}

static void detach_at_stop(struct sampler *s, struct thread *t, int sig, int event)
{
	int deliver = 0;

	if (event == STOP_SYSCALL)
		syscall_watch_stop(s, t, t->interrupt_sent); /* an EINTR at its exit: the call again */
	if (event == 0) {
		deliver = sig; /* a signal-delivery stop: hand the signal over */
		syscall_watch_signal(s, t, signal_traced_only_known(s, sig));
		if (sig > 0 && sig <= 64)
			s->signals.target_signal_ns[sig] = monotonic_ns();
	}
	if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
	    event == PTRACE_EVENT_VFORK) {
		unsigned long msg = 0;

		/* Its child was seized too and must be let go as well, unless
		 * it is the child we follow now. */
		if (ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg) == 0 && msg &&
		    (pid_t)msg != s->pid && traced_by_us((pid_t)msg) && ptrace(PTRACE_DETACH, (pid_t)msg, NULL, NULL) < 0) {
			struct thread *n = thread_add(s, (pid_t)msg);

			if (n)
				n->detaching = true;
		}
	}
	if (t->interrupt_sent && !(event == PTRACE_EVENT_STOP && is_group_stop_signal(sig)) &&
	    event != PTRACE_EVENT_EXEC && event != STOP_SYSCALL)
		undo_eintr_now(s, t, false, false);
	note_pending_signals(s, t->tid);
	if (ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)deliver) < 0 && errno != ESRCH)
		stats_error(s, SAMPLER_ERR_PTRACE);
	thread_remove(s, t);
}

/*
 * Memory-only: a GIL holder seized for one walk is walked at the stop our
 * interrupt ended in, and let go there, with the signal of a
 * signal-delivery stop; it stays listed, to be sampled as it was.
 */
static void walk_and_let_go(struct sampler *s, struct thread *t, int sig, int event)
{
	bool group = event == PTRACE_EVENT_STOP && is_group_stop_signal(sig);
	int deliver = event == 0 ? sig : 0;

	consume_interrupt(s, t, !group);
	shared_signals_leave_to_woken(s, t->tid);
	if (ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)deliver) < 0 && errno != ESRCH)
		stats_error(s, SAMPLER_ERR_PTRACE);
	if (t->pause_pending) {
		t->pause_pending = false;
		stats_pause(s, monotonic_ns() - t->interrupt_ns);
	}
	t->walk_once = false;
	t->untraced = true;
}

static void handle_own(struct sampler *s, pid_t tid, int status)
{
	struct thread *t;
	int sig, event;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		stops_came(s);
		stops_log(s, "exit tid %d status 0x%x", (int)tid, status);
		handle_exit(s, tid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	sig = WSTOPSIG(status);
	event = (unsigned)status >> 16;
	if (event == 0 && sig == (SIGTRAP | 0x80)) {
		event = STOP_SYSCALL;
		sig = 0;
	}
	t = thread_find(s, tid);
	if (!t || !t->interrupt_sent || event != PTRACE_EVENT_STOP)
		stops_came(s);
	stops_log(s, "stop tid %d sig %d event %d%s%s%s", (int)tid, sig, event, t ? "" : " (new)",
		  t && t->interrupt_sent ? " interrupted" : "", t && t->detaching ? " detaching" : "");
	if (!t) {
		bool foreign;

		t = thread_adopt(s, tid, &foreign);
		/* A launcher's child may report its first stop before the
		 * launcher reports the fork (checked for processes only: a
		 * new thread costs nothing more). */
		if (!t && foreign && follow_wanted(s, tid))
			t = follow_child(s, tid, NULL);
		if (!t) {
			if (ptrace(PTRACE_DETACH, tid, NULL, NULL) < 0 && errno != ESRCH)
				stats_error(s, SAMPLER_ERR_PTRACE);
			return;
		}
		if (s->detaching_all)
			t->detaching = true;
	}
	if (t->detaching) {
		detach_at_stop(s, t, sig, event);
		return;
	}
	if (t->walk_once) {
		walk_and_let_go(s, t, sig, event);
		return;
	}
	switch (event) {
	case PTRACE_EVENT_STOP:
		handle_event_stop(s, t, sig);
		break;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		handle_clone(s, t, sig, event);
		break;
	case PTRACE_EVENT_EXEC:
		handle_exec(s);
		break;
	case 0:
		handle_signal(s, t, sig);
		break;
	case STOP_SYSCALL:
		handle_syscall_stop(s, t);
		break;
	default:
		resume(s, t, 0);
		break;
	}
}

/* Each stop goes to the sampler of its thread's process (procs.c). */
void stops_handle(struct sampler *s, pid_t tid, int status)
{
	handle_own(procs_owner(sampler_root(s), tid), tid, status);
}
