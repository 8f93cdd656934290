// SPDX-License-Identifier: MIT
/*
 * Thread storms: a program that starts threads by the thousand a second.
 *
 * With PTRACE_O_TRACECLONE every new thread costs the target two ptrace
 * stops and two round trips through trainsample: the creating thread waits
 * in its clone event stop until we have adopted the child, and the child
 * waits in its first stop until we resume it. For a thread that lives a
 * few microseconds that is most of its life: 100,000 short threads ran
 * 4x as long under `record -r 1000`, and most samples were threads still
 * in those stops, at the return of clone3 (where glibc has no CFI).
 *
 * Sampling needs only the threads alive at a tick. So once clones come
 * faster than STORM_CLONES per STORM_WINDOW_NS, each cloning thread is
 * told, at its next clone event stop, to stop reporting clones
 * (PTRACE_SETOPTIONS without TRACECLONE), and from then on every tick
 * lists /proc/PID/task and seizes the threads it does not know, without
 * stopping them. A thread that starts and ends between two ticks is then
 * never stopped at all; one alive at a tick is sampled there like any
 * other. The process stays in this mode until sampling ends, but lists
 * its threads only when their count (one read of /proc/PID/stat) differs
 * from that of the table: listing 500 threads at every tick was most of
 * trainsample's time once a storm had passed. A thread that ended while
 * another started leaves the count as it was, but the end is reaped as it
 * happens, so the table's count falls and the next tick lists. Where the
 * counts keep differing (a thread that cannot be seized), the listing
 * happens when the count changed, or every STORM_RELIST_TICKS ticks.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "common/common.h"
#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/storm.h"

/*
 * 2,000 threads a second. Below it each thread still costs its two stops
 * (a few percent of the target at 1,000 a second), but every thread is
 * seized as it starts: tests/targets/threads200 (200 threads, 20 at a
 * time, each running a few ms) starts about 50 in 100 ms, and under load,
 * with ticks late, listing at ticks missed a fifth of them.
 */
#define STORM_WINDOW_NS 100000000ull
#define STORM_CLONES 200
#define STORM_RELIST_TICKS 16

/* Threads seized by a tick follow exec and forks as any other, but
 * report no clones. */
static long storm_options(const struct sampler *s)
{
	return seize_options(s) & ~(long)PTRACE_O_TRACECLONE;
}

/*
 * At t's clone event stop (t is stopped): counts the clone, and once the
 * rate says storm, turns t's clone events off. Threads still reporting
 * clones are turned off at their own next clone.
 */
void storm_note_clone(struct sampler *s, struct thread *t)
{
	uint64_t now = monotonic_ns();

	if (!s->storm.active) {
		if (now - s->storm.window_ns > STORM_WINDOW_NS) {
			s->storm.window_ns = now;
			s->storm.clones = 0;
		}
		if (++s->storm.clones < STORM_CLONES)
			return;
		s->storm.active = true;
		s->st.storm_ns = now;
		stops_log(s, "thread storm: new threads are found at ticks from now on");
	}
	if (ptrace(PTRACE_SETOPTIONS, t->tid, NULL, (void *)storm_options(s)) < 0 &&
	    errno != ESRCH)
		stats_error(s, SAMPLER_ERR_PTRACE);
}

static int open_task_dir(struct sampler *s)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)s->pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	s->storm.task_dir = fdopendir(fd);
	if (!s->storm.task_dir) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	/* The leader's own stat: the process's would add up the CPU time
	 * of every thread at each read. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)s->pid, (int)s->pid);
	s->storm.stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	s->storm.group_threads = -1;
	return 0;
}

/* The process's thread count (field 20 of any of its threads' stat), -1
 * when unknown. */
static long group_threads(struct sampler *s)
{
	char buf[512], *p;
	ssize_t n = s->storm.stat_fd < 0 ? -1 : pread(s->storm.stat_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The name may hold spaces and parentheses: fields from the last ')'. */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	return p ? strtol(p + 1, NULL, 10) : -1;
}

static int compare_tids(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The tids of the table, sorted: a listing of n threads is then looked up
 * in n log n, not n squared, in a process with thousands of threads. */
static size_t known_tids(struct sampler *s)
{
	size_t n = 0;

	if (ARRAY_RESERVE(s->storm.tids, s->storm.tids_cap, s->nthreads + 1, 64) < 0)
		return 0;
	for (size_t i = 0; i < s->nthreads; i++)
		if (!s->threads[i]->gone)
			s->storm.tids[n++] = s->threads[i]->tid;
	array_sort(s->storm.tids, n, sizeof(*s->storm.tids), compare_tids);
	return n;
}

/*
 * At a tick, before thread states are read: seizes the threads started
 * since the last tick by threads that no longer report clones. Seizing
 * does not stop a thread; the tick then samples it as any other.
 */
void storm_scan(struct sampler *s)
{
	struct dirent *e;
	size_t nknown;
	long count;

	if (!s->storm.active || s->memory_only || s->detaching_all)
		return;
	if (!s->storm.task_dir && open_task_dir(s) < 0)
		return;
	count = group_threads(s);
	/* Every thread is ours (ended ones are reaped and swept before a
	 * tick, so the table holds none). */
	if (count >= 0 && (size_t)count == s->nthreads)
		return;
	if (count >= 0 && count == s->storm.group_threads &&
	    s->tick % STORM_RELIST_TICKS != 0)
		return;
	s->storm.group_threads = count;
	nknown = known_tids(s);
	rewinddir(s->storm.task_dir);
	while ((e = readdir(s->storm.task_dir))) {
		pid_t tid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		tid = (pid_t)strtol(e->d_name, NULL, 10);
		if (bsearch(&tid, s->storm.tids, nknown, sizeof(tid), compare_tids) ||
		    thread_find(s, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)storm_options(s)) < 0) {
			/* EPERM: seized already by a clone event not handled
			 * yet (its first stop adopts it); ESRCH: gone. */
			if (errno != EPERM && errno != ESRCH)
				stats_error(s, SAMPLER_ERR_PTRACE);
			continue;
		}
		if (!thread_add(s, tid))
			stats_error(s, SAMPLER_ERR_MEMORY);
		else
			s->st.storm_seized++;
	}
}

void storm_free(struct sampler *s)
{
	if (s->storm.task_dir) {
		closedir(s->storm.task_dir);
		if (s->storm.stat_fd >= 0)
			close(s->storm.stat_fd);
	}
	s->storm.task_dir = NULL;
	free(s->storm.tids);
	s->storm.tids = NULL;
	s->storm.tids_cap = 0;
}
