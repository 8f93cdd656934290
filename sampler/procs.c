// SPDX-License-Identifier: MIT
/*
 * Following a tree of processes (record, attach -s): DataLoader workers,
 * multiprocessing children, torchrun's ranks, a shell's programs.
 *
 * Each followed process has a sampler of its own (its threads, maps,
 * symbols, Python reader, copy queue), so everything that samples one
 * process is unchanged. The first one, the root, runs the loop: it owns
 * the signal and timer descriptors and the list of the others, ticks each
 * in turn, and hands every ptrace stop to the sampler of the thread's
 * process (procs_owner). A process joins at its fork, vfork or clone
 * event (or at its first stop, which may come first) and at attach; it
 * leaves when it exits, its samples unwound and its figures added to the
 * root's. Nothing of the one-process rules changes: a new process is
 * seized by the kernel with its parent's options, blocked threads are
 * never stopped, and every exit path lets every process go.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/python/pysample.h"
#include "sampler/queue.h"
#include "sampler/service.h"
#include "sampler/signals.h"
#include "sampler/stacks.h"
#include "symbolize/symbolize.h"

long seize_options(const struct sampler *s)
{
	/* TRACESYSGOOD: a watched thread's syscall stops are told from a
	 * SIGTRAP (syscall_watch.c). */
	long o = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD;

	/* A started command's forks are seen even when not followed: a
	 * launcher's child is followed (follow.c), others are counted. */
	if (s->opt.subprocesses || s->spawned)
		o |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	return o;
}

static pid_t status_pid(pid_t pid, const char *field)
{
	char buf[32];

	if (proc_status_field(pid, field, buf, sizeof(buf)) < 0)
		return -1;
	return (pid_t)strtol(buf, NULL, 10);
}

static bool task_exists(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

static struct sampler *find_process(struct sampler *root, pid_t pid)
{
	if (root->pid == pid)
		return root;
	for (size_t i = 0; i < root->tree.nprocs; i++)
		if (root->tree.procs[i]->pid == pid && !root->tree.procs[i]->tree.let_go)
			return root->tree.procs[i];
	return NULL;
}

static void follower_free(struct sampler *k)
{
	k->sigfd = -1; /* the root's */
	sampler_free(k);
}

/* A sampler for process pid, sharing the root's profile and options. */
static struct sampler *follower_new(struct sampler *root, pid_t pid, pid_t parent)
{
	struct sampler *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->tree.root = root;
	k->opt = root->opt;
	k->opt.periodic = NULL;
	k->period_ns = root->period_ns;
	k->profile = root->profile;
	k->sigfd = root->sigfd; /* polled while waiting for stops; not closed */
	k->timerfd = -1;
	k->rng = root->rng ^ ((uint64_t)pid << 17) ^ 0x5851f42d4c957f2dull;
	k->pid = pid;
	k->tree.parent = parent;
	k->start_ns = monotonic_ns();
	/* Its maps and symbols are read later (procs_open_pending), once the
	 * parent stopped at its fork event runs again. */
	if (stacks_init(k) < 0 || queue_init(k) < 0 ||
	    (k->opt.python && pysample_new(k) < 0)) {
		follower_free(k);
		return NULL;
	}
	if (ARRAY_RESERVE(root->tree.procs, root->tree.cap_procs, root->tree.nprocs + 1, 8) < 0) {
		follower_free(k);
		return NULL;
	}
	root->tree.procs[root->tree.nprocs++] = k;
	root->st.processes++;
	return k;
}

struct sampler *procs_follow(struct sampler *s, pid_t pid)
{
	struct sampler *root = sampler_root(s), *k = find_process(root, pid);

	if (k)
		return k;
	if (!root->opt.subprocesses || root->detaching_all || s->detaching_all ||
	    root->memory_only || root->signals.stop_requested)
		return NULL;
	k = follower_new(root, pid, s->pid);
	if (!k) {
		stats_error(root, SAMPLER_ERR_MEMORY);
		return NULL;
	}
	if (!thread_add(k, pid)) {
		k->tree.let_go = k->exited = true;
		stats_error(root, SAMPLER_ERR_MEMORY);
		return NULL;
	}
	stops_log(s, "following PID %d, a child of %d", (int)pid, (int)s->pid);
	process_seen_report(root, pid, -1, -1);
	return k;
}

/*
 * Whose stop is this: the sampler holding tid, else the process tid
 * belongs to (a new thread of a followed process), else a new process
 * whose parent is followed (its first stop came before its parent's fork
 * event). Anything else is the root's to let go, as without following.
 */
struct sampler *procs_owner(struct sampler *root, pid_t tid)
{
	struct sampler *k;
	pid_t tgid, ppid;

	if (thread_find(root, tid))
		return root;
	for (size_t i = 0; i < root->tree.nprocs; i++)
		if (thread_find(root->tree.procs[i], tid) ||
		    (root->tree.procs[i]->pid == tid && !root->tree.procs[i]->tree.let_go))
			return root->tree.procs[i];
	if (!root->tree.nprocs && !root->opt.subprocesses)
		return root;
	/* A new thread of a process we hold: /proc/PID/task/TID resolves
	 * (as thread_adopt asks), no status text is generated. */
	for (size_t i = 0; i <= root->tree.nprocs; i++) {
		k = i ? root->tree.procs[i - 1] : root;
		if (!k->tree.let_go && task_exists(k->pid, tid))
			return k;
	}
	if (follow_wanted(root, tid))
		return root; /* a launcher's child: the root moves to it */
	tgid = status_pid(tid, "Tgid");
	if (tgid <= 0)
		return root;
	k = find_process(root, tgid);
	if (k)
		return k;
	if (tgid != tid)
		return root;
	ppid = status_pid(tid, "PPid");
	k = ppid > 0 ? find_process(root, ppid) : NULL;
	if (k) {
		struct sampler *child = procs_follow(k, tid);

		if (child)
			return child;
	}
	return root;
}

bool procs_exec_allowed(struct sampler *s)
{
	char buf[96];
	unsigned long r, e, sv, fs;

	if (proc_is_64bit(s->pid) == 0) {
		sampler_notice(s, "PID %d now runs a 32-bit program, which trainsample cannot sample; "
			       "left alone", (int)s->pid);
		return false;
	}
	for (int gid = 0; gid < 2; gid++) {
		char comm[64];

		if (proc_status_field(s->pid, gid ? "Gid" : "Uid", buf, sizeof(buf)) < 0 ||
		    sscanf(buf, "%lu %lu %lu %lu", &r, &e, &sv, &fs) != 4 || r == e)
			continue;
		proc_comm(s->pid, comm, sizeof(comm));
		sampler_notice(s, "PID %d (%s) runs as another %s (set-%s-ID, %s %lu for %lu): left alone",
			       (int)s->pid, comm, gid ? "group" : "user", gid ? "group" : "user",
			       gid ? "gid" : "uid", e, r);
		return false;
	}
	return !setid_at_exec(s, true);
}

/* The parent of each process, read from /proc once. */
struct proc_parent {
	pid_t pid, ppid;
};

static int list_parents(struct proc_parent **out, size_t *n)
{
	struct proc_parent *v = NULL;
	size_t cap = 0, count = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char path[64], text[512], *close_paren;
		FILE *f;
		pid_t pid = (pid_t)strtol(d->d_name, NULL, 10);
		int ppid;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		close_paren = fgets(text, sizeof(text), f) ? strrchr(text, ')') : NULL;
		fclose(f);
		if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
			continue;
		if (ARRAY_RESERVE(v, cap, count + 1, 256) < 0) {
			free(v);
			closedir(dir);
			return -ENOMEM;
		}
		v[count++] = (struct proc_parent){ pid, (pid_t)ppid };
	}
	closedir(dir);
	*out = v;
	*n = count;
	return 0;
}

/*
 * Every process under the root, parents before children. Each is seized
 * before its own children are listed, so one forked meanwhile is either
 * in the listing or caught by its parent's fork event; a listing is made
 * again until a pass seizes nothing new.
 */
void procs_attach_descendants(struct sampler *root)
{
	for (int round = 0; round < 16; round++) {
		struct proc_parent *v = NULL;
		size_t n = 0, added = 0;

		if (list_parents(&v, &n) < 0)
			return;
		for (bool more = true; more;) {
			more = false;
			for (size_t i = 0; i < n; i++) {
				struct sampler *parent = find_process(root, v[i].ppid), *k;
				char err[256];

				if (!parent || v[i].pid == getpid() || find_process(root, v[i].pid))
					continue;
				k = follower_new(root, v[i].pid, v[i].ppid);
				if (!k)
					continue;
				if (sym_process_open(k->pid, &k->sym, err, sizeof(err)) < 0) {
					k->tree.let_go = k->exited = true;
					root->st.processes--;
					continue;
				}
				threads_note_namespace(k);
				if (attach_threads(k, err, sizeof(err)) < 0) {
					if (k->nthreads)
						detach_threads(k);
					k->tree.let_go = k->exited = true;
					root->st.processes--;
					root->st.processes_left++;
					if (!strstr(err, "no process"))
						sampler_notice(root, "not following PID %d: %s", (int)v[i].pid, err);
					continue;
				}
				process_seen_report(root, k->pid, -1, -1);
				added++;
				more = true;
			}
		}
		free(v);
		if (!added)
			break;
	}
}

void procs_count_unfollowed(struct sampler *root)
{
	struct proc_parent *v = NULL;
	size_t n = 0, found = 0;
	pid_t *tree;

	if (list_parents(&v, &n) < 0)
		return;
	tree = malloc((n + 1) * sizeof(*tree));
	if (tree) {
		tree[found++] = root->pid;
		/* Parents come before their children in no particular order:
		 * passes until none is added. */
		for (bool more = true; more;) {
			more = false;
			for (size_t i = 0; i < n; i++) {
				bool parent = false, known = false;

				for (size_t k = 0; k < found; k++) {
					parent |= tree[k] == v[i].ppid;
					known |= tree[k] == v[i].pid;
				}
				if (parent && !known) {
					tree[found++] = v[i].pid;
					more = true;
				}
			}
		}
		root->st.processes_left += found - 1;
	}
	free(tree);
	free(v);
}

static void follower_end(struct sampler *root, struct sampler *k)
{
	if (k->nthreads)
		detach_threads(k);
	queue_process(k, UINT64_MAX);
	stats_fold(root, k);
	follower_free(k);
}

void procs_open_pending(struct sampler *root)
{
	for (size_t i = 0; i < root->tree.nprocs; i++) {
		struct sampler *k = root->tree.procs[i];
		char err[256];

		if (k->sym || k->exited)
			continue;
		if (sym_process_open(k->pid, &k->sym, err, sizeof(err)) < 0) {
			/* Gone already, or unreadable: nothing to sample. An
			 * exec of a program we may not read (an unreadable
			 * set-user-ID one) can come between its fork and this
			 * open: said in its line, as at the exec's stop (1 run
			 * in 40 under load said nothing). */
			setid_at_exec(k, true);
			detach_threads(k);
			k->tree.let_go = k->exited = true;
			continue;
		}
		threads_note_namespace(k);
	}
}

void procs_reap(struct sampler *root)
{
	size_t kept = 0;

	for (size_t i = 0; i < root->tree.nprocs; i++) {
		struct sampler *k = root->tree.procs[i];

		if (k->exited && !k->nthreads) {
			follower_end(root, k);
			continue;
		}
		root->tree.procs[kept++] = k;
	}
	root->tree.nprocs = kept;
}

void procs_let_go(struct sampler *root)
{
	/* First every process is asked to stop, then each is waited for:
	 * stops of all of them are handled whoever waits. */
	bool was = root->detaching_all;

	root->detaching_all = true; /* no new process joins meanwhile */
	for (size_t i = 0; i < root->tree.nprocs; i++)
		root->tree.procs[i]->detaching_all = true;
	for (size_t i = 0; i < root->tree.nprocs; i++)
		follower_end(root, root->tree.procs[i]);
	root->tree.nprocs = 0;
	root->detaching_all = was;
}

void stats_fold(struct sampler *into, const struct sampler *from)
{
	struct sampler_stats *a = &into->st;
	const struct sampler_stats *b = &from->st;

	a->samples += b->samples;
	a->idle_samples += b->idle_samples;
	a->dropped += b->dropped;
	a->errors += b->errors;
	for (int k = 0; k < SAMPLER_ERR_KINDS; k++)
		a->errors_by_kind[k] += b->errors_by_kind[k];
	a->truncated += b->truncated;
	a->threads_seen += b->threads_seen;
	a->storm_seized += b->storm_seized;
	a->quiet_ticks += b->quiet_ticks;
	a->quiet_asks += b->quiet_asks;
	a->quiet_clock_reads += b->quiet_clock_reads;
	a->stops += b->stops;
	a->stops_at_kernel_exit += b->stops_at_kernel_exit;
	if (b->pause_max_ns > a->pause_max_ns)
		a->pause_max_ns = b->pause_max_ns;
	if (b->unanswered_max_ns > a->unanswered_max_ns)
		a->unanswered_max_ns = b->unanswered_max_ns;
	a->unwinds += b->unwinds;
	a->syscalls_restarted += b->syscalls_restarted;
	a->waits_watched += b->waits_watched;
	a->waits_rewound += b->waits_rewound;
	a->signals_forwarded += b->signals_forwarded;
	a->signal_holds += b->signal_holds;
	a->py_holder_walks += b->py_holder_walks;
	a->py_walks_retried += b->py_walks_retried;
	a->py_walks_torn += b->py_walks_torn;
	a->py_walks_redone_stopped += b->py_walks_redone_stopped;
	a->target_cpu_ns += b->target_cpu_ns;
	a->target_wait_ns += b->target_wait_ns;
	/* Processes sampled side by side: their runnable threads add up,
	 * tick for tick (the first process's ticks stand for all). */
	a->runnable_sum += b->runnable_sum;
	if (!a->runnable_ticks)
		a->runnable_ticks = b->runnable_ticks;
	/* The machine is one: the first process's reads stand for it. */
	if (!a->machine_runnable_reads) {
		a->machine_runnable_sum = b->machine_runnable_sum;
		a->machine_runnable_reads = b->machine_runnable_reads;
	}
	a->processes_left += b->processes_left;
	histogram_merge(&into->pause_hist, &from->pause_hist);
	histogram_merge(&into->unwind_hist, &from->unwind_hist);
	/* The first Python a followed process found names the run's when
	 * its first process had none (a shell that starts Python). */
	if (from->py && from->py->ever_ready && (!into->py || !into->py->ever_ready) &&
	    !into->tree.followed_python[0])
		snprintf(into->tree.followed_python, sizeof(into->tree.followed_python), "%s", from->py->what);
}
