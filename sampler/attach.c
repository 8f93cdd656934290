// SPDX-License-Identifier: MIT
/*
 * Seizing a process's threads, letting them all go again, and saying
 * clearly why a process cannot be traced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/waits.h"

void proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* A kernel thread (PF_KTHREAD in its stat flags, field 9) runs no
 * program: there is nothing to trace, whoever asks. */
static bool is_kernel_thread(pid_t pid)
{
	char path[64], line[512];
	unsigned long flags = 0;
	const char *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
	       (flags & 0x00200000ul);
}

/* One line for the user: what is wrong and what to do about it. */
static int explain(pid_t pid, int error, bool tracer_blocks, char *err, size_t errlen)
{
	char comm[64], tracer_comm[64], buf[128];
	long tracer = 0;
	int scope;

	proc_comm(pid, comm, sizeof(comm));
	if (comm[0] && is_kernel_thread(pid)) {
		snprintf(err, errlen, "PID %d (%s) is a kernel thread: it runs no program, and has no "
			 "stack of its own to sample (perf samples the kernel)", (int)pid, comm);
		return -EPERM;
	}
	if (error == ESRCH || (error == EPERM && !comm[0])) {
		snprintf(err, errlen, "no process with PID %d (it may have exited)", (int)pid);
		return -ESRCH;
	}
	if (proc_status_field(pid, "TracerPid", buf, sizeof(buf)) == 0)
		tracer = strtol(buf, NULL, 10);
	if (tracer_blocks && tracer > 0 && tracer != getpid()) {
		proc_comm((pid_t)tracer, tracer_comm, sizeof(tracer_comm));
		snprintf(err, errlen,
			 "PID %d (%s) is already traced by PID %ld (%s): a process can have only one tracer; "
			 "stop or detach that one (strace, gdb, another profiler) first",
			 (int)pid, comm, tracer, tracer_comm[0] ? tracer_comm : "?");
		return -EBUSY;
	}
	if (error != EPERM) {
		snprintf(err, errlen, "cannot trace PID %d (%s): %s", (int)pid, comm, strerror(error));
		return -error;
	}
	if (proc_status_field(pid, "Uid", buf, sizeof(buf)) == 0) {
		unsigned long r = 0, e = 0, sv = 0;
		unsigned long me = (unsigned long)geteuid();

		if (sscanf(buf, "%lu %lu %lu", &r, &e, &sv) == 3 && (r != me || e != me || sv != me)) {
			snprintf(err, errlen,
				 "permission denied: PID %d (%s) runs as uid %lu and trainsample as uid %lu; "
				 "run trainsample as that user or as root (sudo), or give it CAP_SYS_PTRACE",
				 (int)pid, comm, e, me);
			return -EPERM;
		}
	}
	scope = yama_scope();
	if (scope >= 1) {
		snprintf(err, errlen,
			 "permission denied: kernel.yama.ptrace_scope is %d, which %s; run trainsample as root%s",
			 scope,
			 scope >= 3 ? "forbids ptrace until reboot" : "only lets a process trace its own children",
			 scope >= 3 ? "" : ", use `trainsample record -- CMD`, or set it to 0 with `sudo sysctl kernel.yama.ptrace_scope=0`");
		return -EPERM;
	}
	if (geteuid() == 0) {
		snprintf(err, errlen,
			 "permission denied: PID %d (%s) cannot be traced even by root here (a container "
			 "without CAP_SYS_PTRACE, or a security module such as AppArmor or SELinux, forbids it)",
			 (int)pid, comm);
		return -EPERM;
	}
	snprintf(err, errlen,
		 "permission denied: PID %d (%s) cannot be traced (a setuid or non-dumpable program, or a container "
		 "without CAP_SYS_PTRACE); run trainsample as root",
		 (int)pid, comm);
	return -EPERM;
}

int attach_explain_failure(pid_t pid, int error, char *err, size_t errlen)
{
	return explain(pid, error, true, err, errlen);
}

int attach_explain_no_access(pid_t pid, int error, char *err, size_t errlen)
{
	return explain(pid, error, false, err, errlen);
}

static int seize_one(struct sampler *s, pid_t tid, bool *added)
{
	*added = false;
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)seize_options(s)) == 0) {
		struct thread *t = thread_add(s, tid);

		*added = t != NULL;
		if (t)
			syscall_watch_check(s, t); /* before a signal of ours wakes it */
		return *added ? 0 : -ENOMEM;
	}
	if (errno == ESRCH)
		return 0; /* exited meanwhile */
	if (errno == EPERM) {
		char state[32];

		/* Seized already, by TRACECLONE from a thread we hold. */
		if (traced_by_us(tid)) {
			*added = thread_add(s, tid) != NULL;
			return *added ? 0 : -ENOMEM;
		}
		/* A zombie (a main thread that called pthread_exit) cannot be
		 * seized and has no stack to sample: pass it by. */
		if (proc_status_field(tid, "State", state, sizeof(state)) == 0 &&
		    (state[0] == 'Z' || state[0] == 'X'))
			return 0;
		errno = EPERM;
	}
	return -errno;
}

/*
 * Seizes every thread, listing /proc/PID/task again until a pass finds none
 * new: threads started by a thread not yet seized appear in between.
 */
int attach_threads(struct sampler *s, char *err, size_t errlen)
{
	for (int round = 0; round < 1000; round++) {
		pid_t *tids;
		size_t n;
		int added = 0, ret;

		ret = proc_tids(s->pid, &tids, &n);
		if (ret < 0) {
			if (s->nthreads)
				return 0; /* it exited while we attached */
			return attach_explain_failure(s->pid, ESRCH, err, errlen);
		}
		for (size_t i = 0; i < n; i++) {
			bool a;

			if (thread_find(s, tids[i]))
				continue;
			ret = seize_one(s, tids[i], &a);
			if (ret < 0) {
				free(tids);
				if (ret == -ENOMEM) {
					snprintf(err, errlen, "out of memory");
					return ret;
				}
				return attach_explain_failure(s->pid, -ret, err, errlen);
			}
			added += a;
		}
		free(tids);
		if (!added)
			break;
	}
	if (!s->nthreads)
		return attach_explain_failure(s->pid, ESRCH, err, errlen);
	return 0;
}

static void sweep_dead(struct sampler *s)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];
		char c;

		if (t->gone)
			continue;
		c = thread_state(s, t);
		if (c == 0 || c == 'Z' || c == 'X')
			thread_remove(s, t);
	}
}

static size_t live_threads(struct sampler *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nthreads; i++)
		n += !s->threads[i]->gone && !s->threads[i]->untraced;
	return n;
}

/* Interrupts the threads to let go now: at their next stop they are. */
static void interrupt_to_detach(struct sampler *s, bool watched)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];

		if (t->gone || t->untraced || t->detaching || t->watch.on != watched)
			continue;
		t->detaching = true;
		t->want_copy = false;
		if (t->interrupt_sent)
			continue;
		if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) < 0)
			thread_remove(s, t);
		else
			t->interrupt_sent = true; /* not counted: no tick waits for it */
	}
}

static size_t threads_detaching(const struct sampler *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nthreads; i++)
		n += !s->threads[i]->gone && s->threads[i]->detaching;
	return n;
}

/*
 * PTRACE_DETACH needs a stopped tracee, so each thread is interrupted once
 * more and let go at that stop, with its signal if the stop was a
 * signal-delivery stop. A blocked thread's syscall is restarted as at any
 * interrupt. Zombies never stop; the kernel detaches them when we exit.
 * Threads whose waits are watched (syscall_watch.c) go last: while another
 * is still traced, a signal the program ignores is still queued for it
 * and can still wake them; once the others are let go it is dropped as
 * sent.
 */
void detach_threads(struct sampler *s)
{
	uint64_t deadline = monotonic_ns() + 2000000000ull;

	/* No tick follows to clear what was reaped by tid: its tids would
	 * pass over these stops' SIGCHLDs. */
	s->detaching_all = true;
	stops_walk_due(s);
	interrupt_to_detach(s, false);
	while (threads_detaching(s) && monotonic_ns() < deadline) {
		if (stops_wait(s, 50) == 0)
			sweep_dead(s);
	}
	interrupt_to_detach(s, false); /* a thread that ended its watch meanwhile */
	interrupt_to_detach(s, true);
	while (live_threads(s) && monotonic_ns() < deadline) {
		if (stops_wait(s, 50) == 0)
			sweep_dead(s);
	}
	if (live_threads(s))
		sampler_notice(s, "%zu threads of PID %d did not stop to be let go within 2 s; "
			       "the kernel lets them go as trainsample exits", live_threads(s), (int)s->pid);
	threads_sweep(s);
	s->detaching_all = false;
}
