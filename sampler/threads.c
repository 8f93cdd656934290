// SPDX-License-Identifier: MIT
/*
 * The table of seized threads and what /proc says about them. A thread's
 * stat file stays open between ticks: one pread per thread per tick is the
 * whole cost of deciding whether it needs to be stopped.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "sampler/internal.h"
#include "sampler/quiet.h"
#include "sampler/tick.h"

static int open_task_file(pid_t pid, pid_t tid, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

struct thread *thread_find(struct sampler *s, pid_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->tid == tid && !s->threads[i]->gone)
			return s->threads[i];
	return NULL;
}

/*
 * In a container the target's threads have ids of their own (1 for its
 * first process), and those are what it stores in its memory; NSpid maps
 * them to ours. Read once per thread, and only for such a target.
 */
struct thread *thread_find_ns(struct sampler *s, pid_t ns_tid)
{
	if (!s->other_pidns)
		return thread_find(s, ns_tid);
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];
		int levels;

		if (t->gone)
			continue;
		if (!t->ns_tid && proc_ns_tid(s->pid, t->tid, &t->ns_tid, &levels) < 0)
			t->ns_tid = 0; /* gone, or unreadable: tried again next time */
		if (t->ns_tid == ns_tid)
			return t;
	}
	return NULL;
}

void threads_note_namespace(struct sampler *s)
{
	pid_t inner;
	int levels;

	s->other_pidns = proc_ns_tid(s->pid, s->pid, &inner, &levels) == 0 && levels > 1;
}

/* Takes stat_fd (-1: none) into a new entry. */
static struct thread *thread_new(struct sampler *s, pid_t tid, int stat_fd)
{
	struct thread *t;

	if (ARRAY_RESERVE(s->threads, s->cap_threads, s->nthreads + 1, 16) < 0 ||
	    !(t = calloc(1, sizeof(*t)))) {
		if (stat_fd >= 0)
			close(stat_fd);
		return NULL;
	}
	t->tid = tid;
	t->syscall_fd = t->schedstat_fd = -1;
	t->stat_fd = stat_fd;
	s->threads[s->nthreads++] = t;
	s->st.threads_seen++;
	return t;
}

struct thread *thread_add(struct sampler *s, pid_t tid)
{
	struct thread *t = thread_find(s, tid);

	if (t)
		return t;
	/* Running out of descriptors only costs an open per read. */
	return thread_new(s, tid, open_task_file(s->pid, tid, "stat"));
}

static pid_t tgid_of(pid_t tid)
{
	char buf[32];

	if (proc_status_field(tid, "Tgid", buf, sizeof(buf)) < 0)
		return -1;
	return (pid_t)strtol(buf, NULL, 10);
}

/*
 * /proc/PID/task/TID resolves only for a thread of PID (even an exited one
 * we have not reaped), so the stat file the entry keeps open anyway tells
 * a new thread from a new process. Reading TID's status instead cost the
 * target, stopped in its clone event meanwhile, a generated page of text
 * per thread. The status is still asked where the open failed otherwise.
 */
struct thread *thread_adopt(struct sampler *s, pid_t tid, bool *foreign)
{
	struct thread *t = thread_find(s, tid);
	int fd;

	*foreign = false;
	if (t)
		return t;
	fd = open_task_file(s->pid, tid, "stat");
	if (fd < 0 && errno == ENOENT) {
		*foreign = true;
		return NULL;
	}
	if (fd < 0 && tgid_of(tid) != s->pid) {
		*foreign = true;
		return NULL;
	}
	return thread_new(s, tid, fd);
}

static void thread_close(struct thread *t)
{
	if (t->stat_fd >= 0)
		close(t->stat_fd);
	if (t->syscall_fd >= 0)
		close(t->syscall_fd);
	if (t->schedstat_fd >= 0)
		close(t->schedstat_fd);
	t->stat_fd = t->syscall_fd = t->schedstat_fd = -1;
}

void thread_remove(struct sampler *s, struct thread *t)
{
	if (t->gone)
		return;
	if (t->counted)
		s->pass.pending_traps--;
	t->counted = t->interrupt_sent = t->want_copy = false;
	if (t->passed_ns) {
		t->passed_ns = 0;
		s->threads_passed--;
	}
	t->gone = true;
	s->threads_gone++;
	quiet_thread_left(s, t);
	thread_close(t);
}

/* Frees removed threads; never called while a pass iterates the table. */
void threads_sweep(struct sampler *s)
{
	size_t j = 0;

	/* Called a few times a tick: with hundreds of threads, the pass
	 * itself showed in a profile when nothing had gone. */
	if (!s->threads_gone)
		return;
	s->threads_gone = 0;
	for (size_t i = 0; i < s->nthreads; i++) {
		if (s->threads[i]->gone)
			free(s->threads[i]);
		else
			s->threads[j++] = s->threads[i];
	}
	s->nthreads = j;
}

void threads_free(struct sampler *s)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		thread_close(s->threads[i]);
		free(s->threads[i]);
	}
	free(s->threads);
	s->threads = NULL;
	s->nthreads = s->cap_threads = 0;
}

static ssize_t read_task_file(struct sampler *s, pid_t tid, int *fd,
			      const char *name, char *buf, size_t len)
{
	ssize_t n;
	int f = *fd;

	if (f < 0)
		f = open_task_file(s->pid, tid, name);
	if (f < 0)
		return -errno;
	n = pread(f, buf, len - 1, 0);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	if (*fd < 0)
		close(f);
	return n;
}

char thread_state(struct sampler *s, struct thread *t)
{
	char buf[512];
	char *p;

	if (read_task_file(s, t->tid, &t->stat_fd, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	/* The command name may hold spaces and parentheses: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	/* Field 39 is the CPU it last ran on; each strchr finds the space before field N. */
	t->cpu = -1;
	for (int field = 3; field <= 39 && (p = strchr(p + 1, ' ')); field++)
		;
	if (p)
		t->cpu = (int)strtol(p + 1, NULL, 10);
	p = strrchr(buf, ')');
	return p[2];
}

int thread_blocked_state(struct sampler *s, struct thread *t,
			 struct blocked_state *b)
{
	char buf[256];
	char *tok[10];
	int ntok = 0;
	ssize_t n;

	if (t->syscall_fd < 0)
		t->syscall_fd = open_task_file(s->pid, t->tid, "syscall");
	n = read_task_file(s, t->tid, &t->syscall_fd, "syscall", buf, sizeof(buf));
	if (n <= 0)
		return n < 0 ? (int)n : -EIO;
	if (strncmp(buf, "running", 7) == 0)
		return -EAGAIN;
	/* "NR arg1..arg6 SP PC", or "-1 SP PC" when blocked outside a syscall. */
	for (char *save = NULL, *p = strtok_r(buf, " \n", &save); p && ntok < 10;
	     p = strtok_r(NULL, " \n", &save))
		tok[ntok++] = p;
	if (ntok != 3 && ntok != 9)
		return -EIO;
	b->nr = strtoll(tok[0], NULL, 10);
	b->sp = strtoull(tok[ntok - 2], NULL, 16);
	b->pc = strtoull(tok[ntok - 1], NULL, 16);
	b->untimed_wait = false;
	if (ntok == 9) {
		struct user_regs_struct r = {
			.orig_rax = (unsigned long long)b->nr,
			.rdi = strtoull(tok[1], NULL, 16), .rsi = strtoull(tok[2], NULL, 16),
			.rdx = strtoull(tok[3], NULL, 16), .r10 = strtoull(tok[4], NULL, 16),
			.r8 = strtoull(tok[5], NULL, 16), .r9 = strtoull(tok[6], NULL, 16),
		};

		b->untimed_wait = syscall_watch_wanted(&r);
	}
	return 0;
}

/*
 * A thread runnable but kept off the CPUs (more runnable threads than
 * CPUs) waits on a run queue; schedstat counts that wait. Over the time
 * since the last read, half of it or more waiting marks the thread's
 * samples SAMPLE_CPU_WAIT. Reads closer than half a period apart (twice
 * in one tick) are not a measure.
 */
static void cpu_wait_update(struct sampler *s, struct thread *t, uint64_t delay)
{
	uint64_t dt = s->tick_now - t->run_delay_at;

	if (t->run_delay_at && s->tick_now > t->run_delay_at && dt * 2 < s->period_ns)
		return;
	/* The run's totals, whatever was sampled: a thread waiting for a CPU
	 * may miss its samples, never its counters. */
	if (t->run_delay_at && delay >= t->run_delay_ns)
		s->st.target_wait_ns += delay - t->run_delay_ns;
	if (t->run_delay_at && t->runtime_ns >= t->runtime_at_delay)
		s->st.target_cpu_ns += t->runtime_ns - t->runtime_at_delay;
	t->runtime_at_delay = t->runtime_ns;
	if (t->run_delay_at && s->tick_now > t->run_delay_at && delay >= t->run_delay_ns) {
		t->cpu_wait = (delay - t->run_delay_ns) * 2 >= dt;
		t->cpu_wait_at = s->tick_now;
		if (t->cpu_wait)
			s->cpu_wait_seen_at = s->tick_now;
	}
	t->run_delay_ns = delay;
	t->run_delay_at = s->tick_now;
}

/* schedstat: "RUNTIME_NS RUN_DELAY_NS SWITCHES_IN"; -EIO when all zero
 * (sched_info off: nothing to go by). */
static int read_schedstat(struct sampler *s, struct thread *t, uint64_t *runtime,
			  uint64_t *switches)
{
	uint64_t delay, start = monotonic_ns();
	char buf[96], *end;
	ssize_t n;

	if (t->schedstat_fd < 0)
		t->schedstat_fd = open_task_file(s->pid, t->tid, "schedstat");
	t->schedstat_tick = s->tick;
	t->schedstat_known = false;
	n = read_task_file(s, t->tid, &t->schedstat_fd, "schedstat", buf, sizeof(buf));
	/* What a read costs, smoothed: quiet threads' turns are paced by it. */
	s->schedstat_cost_ns = (7 * s->schedstat_cost_ns + (monotonic_ns() - start)) / 8;
	if (n <= 0)
		return -EIO;
	*runtime = strtoull(buf, &end, 10);
	delay = strtoull(end, &end, 10);
	*switches = strtoull(end, NULL, 10);
	t->runtime_ns = *runtime;
	t->runtime_tick = s->tick;
	t->schedstat_switches = *switches;
	t->schedstat_known = *switches != 0;
	cpu_wait_update(s, t, delay);
	return *switches ? 0 : -EIO;
}

void thread_note_cpu_wait(struct sampler *s, struct thread *t)
{
	uint64_t runtime, switches;

	if (t->runtime_tick != s->tick)
		read_schedstat(s, t, &runtime, &switches);
}

uint64_t thread_runtime(struct sampler *s, struct thread *t)
{
	uint64_t runtime = 0, switches;

	if (t->runtime_tick && t->runtime_tick == s->tick)
		return t->runtime_ns;
	read_schedstat(s, t, &runtime, &switches);
	return runtime;
}

/*
 * A thread's stat costs about four times its schedstat, and most threads
 * of a training process sleep for good. One seen blocked that has not been
 * switched in since (its count of switches in unchanged) has not run: it
 * is blocked where it was, or woken and not yet on a CPU. The schedstat is
 * read before the stat so that a run between the two shows next tick. The
 * stat is still read every STATE_RECHECK_TICKS ticks (spread by tid), so
 * a thread woken but kept off the CPU long is seen runnable soon. One
 * blocked for long is not read at all while the process's CPU clock says
 * that none such ran (quiet.c).
 */
#define STATE_RECHECK_TICKS 16

int thread_schedstat(struct sampler *s, struct thread *t, uint64_t *switches)
{
	uint64_t runtime, n;

	if (t->schedstat_tick != s->tick || !s->tick)
		read_schedstat(s, t, &runtime, &n);
	if (switches)
		*switches = t->schedstat_switches;
	return t->schedstat_known ? 0 : -EIO;
}

char thread_poll_state(struct sampler *s, struct thread *t)
{
	uint64_t switches = 0;
	bool known;
	char c;

	if (quiet_unasked(s, t)) {
		/* Its CPU time stands as last read (thread_runtime). */
		t->still_blocked = true;
		t->runtime_tick = s->tick;
		return t->seen_state;
	}
	known = thread_schedstat(s, t, &switches) == 0;
	t->still_blocked = known && t->seen_blocked && switches == t->seen_switches &&
			   (s->tick + (uint64_t)t->tid) % STATE_RECHECK_TICKS != 0;
	if (t->still_blocked) {
		if (!t->quiet_since_ns)
			t->quiet_since_ns = s->tick_now;
		return t->seen_state;
	}
	c = thread_state(s, t);
	if (!known || c != t->seen_state || switches != t->seen_switches)
		t->quiet_since_ns = 0;
	t->seen_blocked = known && (c == 'S' || c == 'D');
	t->seen_state = c;
	t->seen_switches = switches;
	if (t->seen_blocked && !t->watch.on)
		syscall_watch_check(s, t); /* it ran, and now waits: in what? */
	return c;
}

int thread_read_name(struct sampler *s, pid_t tid, char *buf, size_t len)
{
	int fd = -1;
	ssize_t n = read_task_file(s, tid, &fd, "comm", buf, len);

	if (n < 0)
		return (int)n;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return 0;
}

bool traced_by_us(pid_t tid)
{
	char buf[32];

	return proc_status_field(tid, "TracerPid", buf, sizeof(buf)) == 0 &&
	       strtol(buf, NULL, 10) == getpid();
}
