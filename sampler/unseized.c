// SPDX-License-Identifier: MIT
/*
 * One look at a process (trainsample dump), and sampling it without a
 * tracer. Memory-only, threads are listed from /proc and read with
 * process_vm_readv, which needs the right to trace the process but not
 * to be its tracer: it works while another trainsample or a debugger
 * traces it. A running GIL holder is seized for its walk alone and let go
 * at that stop; while someone else traces the process it is read as it
 * runs instead, its walk redone when it moved (as with --nonblocking). A
 * process without a Python to read is seized whole, as before: native
 * stacks of running threads need their registers.
 *
 * At interpreter start-up the runtime may not be mapped yet, or have no
 * thread state, or a thread state without a frame: the look is repeated
 * for up to a second rather than showing a Python process without threads.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/python/pysample.h"
#include "sampler/queue.h"
#include "sampler/signals.h"
#include "sampler/tick.h"
#include "sampler/waits.h"
#include "symbolize/symbolize.h"

#define START_WAIT_NS 1000000000ull
#define START_POLL_MS 10
/* A process this young may still be starting its interpreter. */
#define YOUNG_NS 1000000000ull

static pid_t tracer_of(pid_t pid)
{
	char buf[32];

	if (proc_status_field(pid, "TracerPid", buf, sizeof(buf)) < 0)
		return 0;
	return (pid_t)strtol(buf, NULL, 10);
}

/* The table follows /proc/PID/task: new threads listed, gone ones dropped. */
static int list_threads(struct sampler *s)
{
	pid_t *tids;
	size_t n;
	int ret = proc_tids(s->pid, &tids, &n);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];
		bool listed = false;

		for (size_t j = 0; j < n && !listed; j++)
			listed = tids[j] == t->tid;
		if (!listed && t->untraced)
			thread_remove(s, t);
	}
	threads_sweep(s);
	for (size_t i = 0; i < n; i++) {
		struct thread *t;

		if (thread_find(s, tids[i]))
			continue;
		t = thread_add(s, tids[i]);
		if (!t) {
			free(tids);
			return -ENOMEM;
		}
		t->untraced = true;
	}
	free(tids);
	return n ? 0 : -ESRCH;
}

int unseized_attach(struct sampler *s, char *err, size_t errlen)
{
	uint8_t byte;
	ssize_t n;
	int ret;

	s->memory_only = true;
	/* The kernel checks the right to read before the address: a read at
	 * 0 fails with EFAULT where reading is allowed. */
	n = remote_read(s->pid, 0, &byte, 1);
	if (n == -EPERM || n == -ESRCH)
		return attach_explain_no_access(s->pid, (int)-n, err, errlen);
	ret = list_threads(s);
	if (ret == -ENOMEM) {
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	if (ret < 0)
		return attach_explain_no_access(s->pid, ESRCH, err, errlen);
	s->tracer = tracer_of(s->pid);
	return 0;
}

int unseized_seize_for_walk(struct sampler *s, struct thread *t)
{
	int error;

	if (s->tracer)
		return -EBUSY;
	/* No options: a thread it starts meanwhile is not ours to let go. */
	if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) == 0) {
		t->untraced = false;
		t->walk_once = true;
		return 0;
	}
	error = errno;
	if (error == EPERM)
		s->tracer = tracer_of(t->tid); /* one came after we looked */
	return s->tracer ? -EBUSY : -error;
}

/* Under a second old: its interpreter may not be there yet. */
static bool started_lately(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start;
	struct timespec now;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	char *p;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	p = ok ? strrchr(buf, ')') : NULL;
	/* Field 22, starttime, in clock ticks since boot; field 3 follows ')'. */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) < 0)
		return false;
	start = strtoull(p + 1, NULL, 10) * (1000000000ull / (unsigned long long)hz);
	return (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec <
	       start + YOUNG_NS;
}

static int exe_inode(pid_t pid, ino_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st) < 0)
		return -errno;
	*ino = st.st_ino;
	return 0;
}

/* Memory-only, an exec is not reported: its new image is told by the
 * executable's inode. */
static void follow_exec(struct sampler *s, ino_t *exe)
{
	ino_t now = 0;

	if (exe_inode(s->pid, &now) < 0)
		return;
	if (*exe && now != *exe) {
		s->exec_seq++;
		sym_process_exec(s->sym);
	}
	*exe = now;
}

/* A python executable whose libpython is not mapped yet, or a child that
 * has not yet exec'd (it runs its parent's program): worth a wait. */
static bool may_become_python(pid_t pid)
{
	char path[64], exe[PATH_MAX], ppid[32];
	const char *base;
	ino_t mine = 0, parents = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	base = strrchr(exe, '/');
	if (!strncmp(base ? base + 1 : exe, "python", 6))
		return true;
	return proc_status_field(pid, "PPid", ppid, sizeof(ppid)) == 0 &&
	       exe_inode(pid, &mine) == 0 && exe_inode((pid_t)strtol(ppid, NULL, 10), &parents) == 0 &&
	       mine == parents;
}

/* A moment, handling the stops of seized threads and our own signals. */
static void pause_a_moment(struct sampler *s)
{
	struct pollfd pfd = { .fd = s->sigfd, .events = POLLIN };

	if (!s->memory_only) {
		stops_wait(s, START_POLL_MS);
		return;
	}
	if (poll(&pfd, 1, START_POLL_MS) > 0)
		signals_drain(s);
}

static bool still_waiting(struct sampler *s, uint64_t since)
{
	return !s->exited && !s->signals.stop_requested && monotonic_ns() - since < START_WAIT_NS;
}

/* Until the interpreter is ready, refused, or plainly not coming. */
static void wait_for_python(struct sampler *s, uint64_t since)
{
	bool young = started_lately(s->pid);
	ino_t exe = 0;

	while (s->py && still_waiting(s, since)) {
		if (s->memory_only) {
			follow_exec(s, &exe);
			if (list_threads(s) < 0)
				return;
		}
		pysample_search(s, monotonic_ns());
		if (pysample_ready(s) || s->py->state == PY_REFUSED ||
		    (s->py->state == PY_SEARCHING && !(young && may_become_python(s->pid))))
			return;
		pause_a_moment(s);
	}
}

/* Native stacks: a running thread must stop to give its registers. */
static int seize_all(struct sampler *s, char *err, size_t errlen)
{
	int ret;

	if (s->tracer) {
		ret = attach_explain_failure(s->pid, EPERM, err, errlen);
		if (ret == -EBUSY && strlen(err) + 64 < errlen)
			strcat(err, " (with no Python to read, its native stacks need a tracer)");
		return ret;
	}
	threads_free(s);
	s->memory_only = false;
	ret = attach_threads(s, err, errlen);
	if (ret == 0)
		stops_wait(s, 0);
	return ret;
}

int sampler_sample_once(struct sampler *s, char *err, size_t errlen)
{
	uint64_t since = monotonic_ns(), now;
	int ret;

	wait_for_python(s, since);
	if (s->memory_only && !pysample_ready(s)) {
		ret = seize_all(s, err, errlen);
		if (ret < 0)
			return ret;
	}
	s->start_ns = since;
	for (;;) {
		now = monotonic_ns();
		s->last_tick_ns = now;
		tick_sample(s, now);
		/* Unwound while the threads are known, for their names. */
		queue_process(s, UINT64_MAX);
		/* A thread state may come before its first frame: look again
		 * rather than show a Python process without threads. */
		if (s->st.samples || !pysample_ready(s) || !still_waiting(s, since))
			break;
		pause_a_moment(s);
		if (s->memory_only && list_threads(s) < 0)
			break;
	}
	s->end_ns = monotonic_ns();
	s->end_cpu_ns = own_cpu_ns();
	if (s->memory_only && s->tracer && !s->opt.nonblocking) {
		char comm[64];

		proc_comm(s->tracer, comm, sizeof(comm));
		sampler_notice(s, "PID %d is traced by PID %d (%s): its stacks were read without stopping any thread",
			       (int)s->pid, (int)s->tracer, comm[0] ? comm : "?");
	}
	detach_threads(s);
	return 0;
}
