// SPDX-License-Identifier: MIT
/*
 * Waiting for tracee stops and for our own signals: which waitpid walks
 * to make, and the signalfd that says SIGCHLD, Ctrl-C or Ctrl-Z came.
 * Each stop found goes to stops_handle (stops.c).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/signals.h"
#include "sampler/waits.h"

#define MAX_STOPS_PER_WAIT 256

/*
 * waitpid(-1) walks every traced thread of every process (the kernel's
 * wait_consider_task for each): with 500 threads, about 90 us a walk on a
 * VM. A walk is made for a SIGCHLD: every stop and exit of a tracee sends
 * one. But not for a SIGCHLD of a stop the tick already reaped by its tid
 * (its interrupt's trap), which would cost a walk a tick for nothing. A
 * SIGCHLD that comes while one is queued is lost (one of a kind is queued
 * at a time, with the first one's siginfo): when the queued one is of a
 * stop reaped by its tid, it is passed over, and the lost one's stop with
 * it. On a 16-core machine, where many interrupted threads send theirs at
 * once, a version without periodic walks left new threads' stops waiting
 * 290 ms (the likely cause, not proven). So a tick also walks: at every
 * tick while other stops come (threads starting or ending, signals; not
 * our interrupts' traps) within STOPS_BUSY_NS, otherwise once the last
 * walk is far enough back for its cost (spaced_for_cost: every tick for a
 * few threads, every 36 ms for 500 at 90 us, never more than
 * STOPS_WALK_MOST_NS apart). That bounds the wait of a stop whose SIGCHLD
 * was lost; a walk at every tick was a tenth of a core at 1 kHz with 500
 * threads that never stop.
 */
#define STOPS_WALK_MOST_NS 50000000ull
#define STOPS_BUSY_NS 200000000ull

static bool reaped_already(struct sampler *root, pid_t pid, int code)
{
	/* A ptrace stop: an event's (CLD_TRAPPED) or an interrupt's
	 * (PTRACE_EVENT_STOP: CLD_STOPPED); not an exit. */
	if (code != CLD_TRAPPED && code != CLD_STOPPED)
		return false;
	for (unsigned i = 0; i < root->waits.nreaped; i++)
		if (root->waits.reaped[i] == pid) {
			root->waits.reaped[i] = root->waits.reaped[--root->waits.nreaped];
			return true;
		}
	return false;
}

void stops_reaped_by_tid(struct sampler *s, pid_t tid)
{
	struct sampler *root = sampler_root(s);

	if (root->waits.nreaped < sizeof(root->waits.reaped) / sizeof(root->waits.reaped[0]))
		root->waits.reaped[root->waits.nreaped++] = tid;
	else
		root->waits.signalled = true; /* too many to tell apart */
}

void stops_walk_due(struct sampler *s)
{
	struct sampler *root = sampler_root(s);

	root->waits.walk_due = true;
	root->waits.nreaped = 0; /* what is left had its SIGCHLD lost */
}

void stops_came(struct sampler *s)
{
	sampler_root(s)->waits.came_ns = monotonic_ns();
}

void stops_walk_at_tick(struct sampler *s, uint64_t now)
{
	struct sampler *root = sampler_root(s);

	/* A tid left from the last tick had its SIGCHLD folded into another
	 * one's: kept, it would pass over that thread's next stop. */
	root->waits.nreaped = 0;
	if (now - root->waits.came_ns < STOPS_BUSY_NS ||
	    now - root->waits.walk_ns >= spaced_for_cost(root->waits.walk_cost_ns, 0, STOPS_WALK_MOST_NS))
		stops_walk_due(root);
}

/*
 * A stop is looked at before it is taken (WNOWAIT): taking it (waitpid)
 * clears the code the thread resumes with, so were we killed between
 * taking a signal's delivery stop and passing the signal on, the kernel
 * would resume the thread without it. Looked at only, it keeps the
 * signal, and a signal that goes on at once (stops_pass_at_once) is
 * passed on without the stop ever being taken: the thread gets it
 * whenever we die.
 */
pid_t stops_take(struct sampler *s, pid_t tid, int *status)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(tid < 0 ? P_ALL : P_PID, tid < 0 ? 0 : (id_t)tid, &si,
		   WEXITED | WSTOPPED | __WALL | WNOHANG | WNOWAIT) < 0)
		return -1;
	if (si.si_pid == 0)
		return 0;
	/* A plain signal: its number alone, no event in the bits above. */
	if (si.si_code == CLD_TRAPPED && si.si_status > 0 && si.si_status < 0x80 &&
	    stops_pass_at_once(s, si.si_pid, si.si_status)) {
		*status = STOP_PASSED_ON;
		return si.si_pid;
	}
	return waitpid(si.si_pid, status, __WALL | WNOHANG);
}

static pid_t stops_reap_one(struct sampler *root, int *status)
{
	struct pollfd pfd = { .fd = root->sigfd, .events = POLLIN };
	uint64_t start;
	pid_t tid;

	if (!root->waits.walk_due && !root->waits.signalled && root->sigfd >= 0) {
		if (poll(&pfd, 1, 0) > 0)
			signals_drain(root);
		if (!root->waits.signalled)
			return 0;
	}
	start = monotonic_ns();
	tid = stops_take(root, -1, status);
	if (tid == 0) {
		/* Every stop so far is reaped: what comes next signals. */
		root->waits.walk_due = root->waits.signalled = false;
		root->waits.walk_ns = monotonic_ns();
		root->waits.walk_cost_ns = root->waits.walk_ns - start;
		root->st.stop_walks++;
	}
	return tid;
}

/* Reads every queued signal; remembers the ones that end or pause sampling. */
void signals_drain(struct sampler *s)
{
	struct signalfd_siginfo si;

	s = sampler_root(s);

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			if (!reaped_already(s, (pid_t)si.ssi_pid, si.ssi_code))
				s->waits.signalled = true;
			break;
		case SIGINT:
		case SIGTERM:
		case SIGHUP:
			if (!s->signals.stop_requested) {
				s->signals.stop_requested = true;
				s->signals.stop_signo = (int)si.ssi_signo;
				s->signals.stop_from_user = si.ssi_code != SI_KERNEL;
			}
			break;
		case SIGTSTP:
			s->signals.tstp_requested = true;
			break;
		default:
			break;
		}
	}
}

/* ECHILD: no process of ours is left. */
static void nothing_traced(struct sampler *root)
{
	for (size_t k = 0; k <= root->tree.nprocs; k++) {
		struct sampler *s = k ? root->tree.procs[k - 1] : root;

		for (size_t i = 0; i < s->nthreads; i++)
			thread_remove(s, s->threads[i]);
		if (!s->detaching_all)
			s->exited = true;
	}
}

static int stops_wait_answer(struct sampler *s, int timeout_ms);

/* The longest the target's stops could have waited for us: from the last
 * answer (or the end of an idle wait, which a stop ends) to this one. */
void stops_unanswered_from(struct sampler *s, uint64_t since_ns)
{
	sampler_root(s)->waits.unanswered_since_ns = since_ns;
}

int stops_wait(struct sampler *s, int timeout_ms)
{
	struct sampler *root = sampler_root(s);
	uint64_t now = monotonic_ns();
	int handled;

	if (root->waits.unanswered_since_ns && now - root->waits.unanswered_since_ns > root->st.unanswered_max_ns)
		root->st.unanswered_max_ns = now - root->waits.unanswered_since_ns;
	handled = stops_wait_answer(s, timeout_ms);
	root->waits.unanswered_since_ns = monotonic_ns();
	return handled;
}

static int stops_wait_answer(struct sampler *s, int timeout_ms)
{
	uint64_t deadline = timeout_ms > 0 ? monotonic_ns() + (uint64_t)timeout_ms * 1000000ull : 0;
	struct sampler *root = sampler_root(s);
	int handled = 0;

	for (;;) {
		struct pollfd pfd = { .fd = s->sigfd, .events = POLLIN };
		int status, wait_ms;
		pid_t tid = stops_reap_one(root, &status);

		if (tid > 0) {
			if (status != STOP_PASSED_ON)
				stops_handle(s, tid, status);
			/* Bounded, so a target that stops all the time cannot keep
			 * the loop from its deadlines and signals. */
			if (++handled >= MAX_STOPS_PER_WAIT)
				return handled;
			continue;
		}
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0 && errno == ECHILD && s->memory_only)
			return handled; /* threads are listed, not traced */
		if (tid < 0 && errno == ECHILD) {
			nothing_traced(sampler_root(s));
			return handled;
		}
		if (handled || timeout_ms == 0)
			return handled;
		wait_ms = -1;
		if (timeout_ms > 0) {
			uint64_t now = monotonic_ns();

			if (now >= deadline)
				return 0;
			wait_ms = (int)((deadline - now + 999999) / 1000000);
		}
		if (poll(&pfd, 1, wait_ms) > 0) {
			signals_drain(s);
		} else if (timeout_ms > 0) {
			/* A wait that heard nothing walks once before it ends:
			 * a SIGCHLD folded into one already read (two traps of a
			 * detach) would otherwise leave a thread in its stop
			 * until the waiter gives up. */
			stops_walk_due(root);
			timeout_ms = 0;
		}
	}
}
