// SPDX-License-Identifier: MIT
/*
 * One tick: decide from /proc which threads run, stop only those, copy
 * their registers and stack and resume them at once; read blocked threads
 * without stopping them; unwind and symbolize after everyone runs again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <poll.h>
#include <sys/wait.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "common/common.h"
#include "sampler/internal.h"
#include "sampler/python/pysample.h"
#include "sampler/queue.h"
#include "sampler/quiet.h"
#include "sampler/signals.h"
#include "sampler/stacks.h"
#include "sampler/storm.h"
#include "sampler/tick.h"
#include "sampler/waits.h"
#include "symbolize/symbolize.h"

/* How long a tick waits for interrupted threads before checking on them. */
#define TRAP_WAIT_MS 20
#define TRAP_GIVE_UP_NS 1000000000ull
#define TRAP_SPIN_NS 100000ull
#define TRAP_TIDS_MAX (sizeof(((struct tick_pass *)0)->trap_tids) / sizeof(pid_t))

/*
 * The bytes from sp to the end of the thread's stack mapping, capped: the
 * mapping seen last time, or the one the maps read so far show. Never a
 * re-read of the maps while the thread is stopped: a stack mapped since
 * gets the whole cap (the read stops at the first unmapped page) and is
 * trimmed once the thread runs again.
 */
static size_t stack_copy_len(struct sampler *s, struct thread *t, uint64_t sp)
{
	size_t cap = s->opt.stack_bytes;
	const struct sym_mapping *m;

	if (sp < t->stack.lo || sp >= t->stack.hi) {
		m = sym_process_find(s->sym, sp);
		if (!m)
			return cap;
		t->stack.lo = m->start;
		t->stack.hi = m->end;
	}
	return t->stack.hi - sp < cap ? (size_t)(t->stack.hi - sp) : cap;
}

/*
 * The stack from sp (and the red zone under it, where it lies in the
 * stack's mapping) into c: data, len, below and capped. Returns what
 * remote_read did.
 */
static ssize_t stack_copy_read(struct sampler *s, struct thread *t, uint64_t sp,
			       struct stack_sample *c)
{
	size_t len = stack_copy_len(s, t, sp);
	size_t below = 0;
	ssize_t n;

	if (sp >= t->stack.lo && sp < t->stack.hi)
		below = sp - t->stack.lo < STACK_RED_ZONE ? (size_t)(sp - t->stack.lo) : STACK_RED_ZONE;
	n = remote_read(t->tid, sp - below, c->data, below + len);
	c->below = n >= (ssize_t)below ? below : 0;
	c->len = n > 0 && (size_t)n >= below ? (size_t)n : 0;
	/* The whole cap was read and the mapping goes on: frames beyond it
	 * are cut off, which the stack will say. */
	c->capped = len == s->opt.stack_bytes && c->len == below + len && sp + len != t->stack.hi;
	return n;
}

/* Called by the stop handler while t sits in our interrupt trap. */
void tick_copy_stopped(struct sampler *s, struct thread *t)
{
	struct stack_sample *c = queue_reserve(s);
	ssize_t n;
	int ret;

	if (!c) {
		s->st.dropped++;
		return;
	}
	ret = regs_get(t->tid, &c->regs);
	if (ret < 0) {
		if (ret != -ESRCH)
			stats_error(s, SAMPLER_ERR_PTRACE);
		return;
	}
	stats_trap_entry(s, &c->regs);
	syscall_undo_eintr(s, t, &c->regs, false);
	pysample_copy_frames(s, t->tid, c);
	/* By tid: the process id fails once its main thread is a zombie. */
	n = stack_copy_read(s, t, c->regs.rsp, c);
	if (n < 0 && n != -ESRCH)
		stats_error(s, SAMPLER_ERR_READ);
	c->tid = t->tid;
	c->time_ns = s->tick_now;
	c->weight_ns = s->tick_weight;
	c->exec_seq = s->exec_seq;
	c->blocked = false;
	queue_commit(s);
}

void tick_interrupt(struct sampler *s, struct thread *t, bool py_walk)
{
	/* No room for its copy: unwinding is behind; the sample is dropped
	 * and the thread never stopped. */
	if (!py_walk && !queue_prepare(s, (size_t)s->pass.pending_traps + 1)) {
		s->st.dropped++;
		return;
	}
	stops_log(s, "interrupt tid %d", (int)t->tid);
	t->interrupt_ns = monotonic_ns();
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) < 0) {
		if (errno != ESRCH)
			stats_error(s, SAMPLER_ERR_PTRACE);
		return;
	}
	t->interrupt_sent = true;
	t->counted = true;
	if (s->pass.ntrap_tids < TRAP_TIDS_MAX)
		s->pass.trap_tids[s->pass.ntrap_tids++] = t->tid;
	else
		s->pass.ntrap_tids = TRAP_TIDS_MAX + 1;
	t->want_copy = true;
	t->want_py_walk = py_walk;
	s->pass.pending_traps++;
	if (t->cpu == s->pass.our_cpu)
		s->pass.trap_on_our_cpu = true;
}

/*
 * Threads that died between the interrupt and the trap never trap; others
 * are waited for up to a second (one in vfork waits for its child). One
 * given up on stays interrupted: its stop, when it comes, is handled as
 * ours, only no longer copied.
 */
static void forget_dead_traps(struct sampler *s, bool give_up)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];
		char c;

		if (t->gone || !t->counted)
			continue;
		c = thread_state(s, t);
		stops_log(s, "tid %d has not trapped; state %c", (int)t->tid, c ? c : '-');
		if (c == 0 || c == 'Z' || c == 'X') {
			thread_remove(s, t);
		} else if (give_up) {
			t->counted = t->want_copy = false;
			s->pass.pending_traps--;
			stats_error(s, SAMPLER_ERR_NO_STOP);
		}
	}
}

/*
 * Reaps the traps of the threads this pass interrupted, each asked by its
 * tid: waitpid(-1) walks every traced thread of the process, which with
 * hundreds blocked costs more than the stops themselves (and each trap's
 * SIGCHLD would ask for another walk). A thread whose stop was not the
 * trap (a signal came first) stays asked. Too many interrupted: one walk.
 */
static void reap_traps_by_tid(struct sampler *s)
{
	if (s->pass.ntrap_tids > TRAP_TIDS_MAX) {
		stops_wait(s, 0);
		return;
	}
	for (unsigned i = 0; i < s->pass.ntrap_tids;) {
		pid_t tid = s->pass.trap_tids[i];
		struct thread *t;
		int status;
		pid_t r = stops_take(s, tid, &status);

		if (r == 0 || (r < 0 && errno == EINTR)) {
			i++;
			continue;
		}
		if (r > 0) {
			stops_reaped_by_tid(s, r);
			if (status != STOP_PASSED_ON)
				stops_handle(s, r, status);
			t = thread_find(s, tid);
			if (t && !t->gone && t->counted) {
				i++;
				continue;
			}
		}
		/* Trapped, gone, or not ours to ask (ECHILD): the slow path
		 * sees to what is left. */
		s->pass.trap_tids[i] = s->pass.trap_tids[--s->pass.ntrap_tids];
	}
}

/*
 * An interrupted thread traps within microseconds, but waking a sleeping
 * tracer can take tens (more on a VM): poll without sleeping for a short
 * while first, so the target is not kept stopped while we wake up. Not
 * when a thread we wait for last ran on our CPU: it needs that CPU to
 * reach its trap, and our sleeping gives it at once.
 */
static void spin_for_traps(struct sampler *s, uint64_t since)
{
	if (s->pass.trap_on_our_cpu)
		return;
	while (s->pass.pending_traps > 0 && s->pass.ntrap_tids > 0 && !s->exited &&
	       monotonic_ns() - since < TRAP_SPIN_NS)
		reap_traps_by_tid(s);
}

/*
 * Past the spin: sleeps until a SIGCHLD (or timeout_ms), then asks the
 * interrupted threads by tid before reading the signals, so the traps'
 * own SIGCHLDs ask for no walk; any other stop's does. Returns false when
 * nothing came.
 */
static bool wait_for_traps(struct sampler *s, int timeout_ms)
{
	struct sampler *root = sampler_root(s);
	struct pollfd pfd = { .fd = root->sigfd, .events = POLLIN };
	int pending = s->pass.pending_traps;

	if (!s->pass.ntrap_tids || s->pass.ntrap_tids > TRAP_TIDS_MAX || root->sigfd < 0 || root->waits.signalled)
		return stops_wait(s, timeout_ms) > 0;
	/* Asked before and after the sleep: a SIGCHLD read earlier (two
	 * that came together are one) may have been this trap's. */
	reap_traps_by_tid(s);
	if (s->pass.pending_traps < pending)
		return true;
	if (poll(&pfd, 1, timeout_ms) <= 0) {
		reap_traps_by_tid(s);
		return s->pass.pending_traps < pending;
	}
	reap_traps_by_tid(s);
	signals_drain(root);
	if (root->waits.signalled)
		stops_wait(s, 0);
	return true;
}

void tick_collect_traps(struct sampler *s)
{
	uint64_t since = monotonic_ns();

	spin_for_traps(s, since);
	while (s->pass.pending_traps > 0 && !s->exited && !sampler_root(s)->signals.stop_requested) {
		bool quiet = !wait_for_traps(s, TRAP_WAIT_MS);
		bool late = monotonic_ns() - since > TRAP_GIVE_UP_NS;

		if (quiet || late)
			forget_dead_traps(s, late);
	}
	/* Whatever is still outstanding is handled as ours when it stops. */
	for (size_t i = 0; i < s->nthreads; i++)
		s->threads[i]->counted = s->threads[i]->want_copy = s->threads[i]->want_py_walk = false;
	s->pass.pending_traps = 0;
	s->pass.ntrap_tids = 0;
}

/*
 * A blocked thread is sampled without stopping it: its syscall, sp and pc
 * from /proc, and its user stack, which cannot change while it sleeps, read
 * as it is. If it woke meanwhile (its syscall line changed), the copy may
 * be torn: it goes to the running ones instead. While it sleeps on in the
 * same place, the last unwind stands and nothing is read at all.
 * Returns false when the thread turned out to be running.
 */
bool tick_sample_blocked(struct sampler *s, struct thread *t)
{
	struct blocked_state b, again;
	struct stack_sample *c;
	int ret;

	/* Not switched in since its stack was last found unchanged: that
	 * stack stands, and neither its syscall nor its stack is read. */
	if (t->still_blocked && t->blocked_valid && t->confirmed_switches == t->seen_switches) {
		b.nr = t->blocked_nr;
		b.sp = t->blocked_sp;
		b.pc = t->blocked_pc;
		b.runtime = t->blocked_runtime;
		stacks_add_blocked(s, t, &b, NULL);
		return true;
	}
	ret = thread_blocked_state(s, t, &b);
	if (ret == -EAGAIN) {
		t->seen_blocked = false;
		return false;
	}
	if (ret < 0)
		return true; /* gone */
	b.runtime = thread_runtime(s, t);
	if (b.untimed_wait)
		syscall_watch_blocked(s, t);
	if (stacks_blocked_unchanged(t, &b)) {
		/* seen_switches was read before the syscall file: a switch in
		 * since shows next tick. */
		t->confirmed_switches = t->seen_switches;
		stacks_add_blocked(s, t, &b, NULL);
		return true;
	}
	t->confirmed_switches = 0;
	c = queue_reserve(s);
	if (!c) {
		s->st.dropped++;
		return true;
	}
	stack_copy_read(s, t, b.sp, c);
	pysample_copy_frames(s, t->tid, c);
	ret = thread_blocked_state(s, t, &again);
	if (ret == -EAGAIN || (ret == 0 && (again.nr != b.nr || again.sp != b.sp || again.pc != b.pc))) {
		t->seen_blocked = false;
		return false;
	}
	if (ret < 0)
		return true;
	c->tid = t->tid;
	c->time_ns = s->tick_now;
	c->weight_ns = s->tick_weight;
	c->exec_seq = s->exec_seq;
	c->blocked = true;
	c->state = b;
	queue_commit(s);
	return true;
}

/*
 * The machine's runnable threads, every process's (/proc/loadavg's fourth
 * field, "running/total"), once a second at most: against the target's
 * own count, it tells the target's wait for a CPU caused by its own
 * threads from that caused by others' load. Read at the tick's start,
 * before any thread is stopped (a thread in our stop is not counted
 * running); we are running as we read it, so one less.
 */
static void machine_runnable_read(struct sampler *s, uint64_t now)
{
	char buf[128];
	long running;
	ssize_t n;
	int fd;

	if (s->machine_read_ns && now - s->machine_read_ns < 1000000000ull)
		return;
	s->machine_read_ns = now;
	fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%*s %*s %*s %ld/", &running) != 1 || running < 1)
		return;
	s->st.machine_runnable_sum += (uint64_t)(running - 1);
	s->st.machine_runnable_reads++;
}

/*
 * Every thread's state is read before any is interrupted: a running thread
 * is stopped for its own copy only, never while the files of hundreds of
 * others are read. s->pass.blocked holds the blocked threads from its start and
 * the running ones from its end.
 */
void tick_sample(struct sampler *s, uint64_t now)
{
	size_t nblocked = 0, nrunning = 0, nlate = 0, runnable = 0;
	struct thread **running;

	s->tick_weight = s->last_tick_ns ? now - s->last_tick_ns : s->period_ns;
	s->tick_now = now;
	s->last_tick_ns = now;
	s->tick++;
	s->st.ticks++;
	s->pass.our_cpu = sched_getcpu();
	s->pass.trap_on_our_cpu = false;
	machine_runnable_read(s, now);
	storm_scan(s);
	pysample_search(s, now);
	if (pysample_ready(s) && !s->opt.native) {
		pysample_tick(s);
		threads_sweep(s);
		return;
	}
	pysample_threads_refresh(s);
	if (ARRAY_RESERVE(s->pass.blocked, s->pass.cap_blocked, s->nthreads, 16) < 0) {
		stats_error(s, SAMPLER_ERR_MEMORY);
		return;
	}
	running = s->pass.blocked + s->nthreads;
	quiet_tick_begin(s);
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];
		char c;

		if (t->gone || t->listening || t->detaching)
			continue;
		if (t->interrupt_sent) { /* runnable, not yet in our stop */
			runnable++;
			continue;
		}
		c = thread_poll_state(s, t);
		runnable += c == 'R';
		if (c == 't' && !s->memory_only)
			thread_passed_by(s, t); /* in a stop of its own */
		if (c == 'R') {
			*--running = t;
			nrunning++;
		} else if ((c == 'S' || c == 'D') && (s->opt.idle ||
						    (s->opt.idle_python && pysample_ready(s)))) {
			s->pass.blocked[nblocked++] = t;
		}
	}
	quiet_tick_end(s);
	s->st.runnable_sum += runnable;
	s->st.runnable_ticks++;
	for (size_t i = 0; i < nrunning; i++)
		if (!running[i]->gone)
			tick_interrupt(s, running[i], false);
	tick_collect_traps(s);

	/* Everyone runs again; now the threads that never stopped. */
	for (size_t i = 0; i < nblocked; i++) {
		struct thread *t = s->pass.blocked[i];

		if (!t->gone && !tick_sample_blocked(s, t))
			s->pass.blocked[nlate++] = t;
	}
	s->pass.trap_on_our_cpu = false;
	for (size_t i = 0; i < nlate; i++)
		if (!s->pass.blocked[i]->gone && thread_state(s, s->pass.blocked[i]) == 'R')
			tick_interrupt(s, s->pass.blocked[i], false);
	if (nlate)
		tick_collect_traps(s);
	pysample_name_copies(s);

	threads_sweep(s);
}
