// SPDX-License-Identifier: MIT
/*
 * record -- unshare -p -f CMD (and nsenter -p, bwrap): the command started
 * is a launcher that forks the real program into a new PID namespace and
 * waits for it. Sampled as it is, the profile would hold one stack, the
 * launcher's wait, so the sampler moves to that child: the launcher is let
 * go (it stays our child; its exit status is the command's) and the child,
 * seized at its fork, becomes the target, with its own symbols and Python
 * reader.
 *
 * Which children: one forked by the target into a PID namespace other than
 * its own, or any forked by a target reached that way that has not exec'd
 * since (a launcher's own init, as bwrap's, forks the program once more).
 * Any other fork (multiprocessing, subprocess) is let go at once, as
 * before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/stat.h>

#include "sampler/internal.h"
#include "sampler/python/pysample.h"
#include "sampler/stacks.h"
#include "symbolize/symbolize.h"

static int pidns_of(pid_t pid, struct stat *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat(path, st) < 0 ? -errno : 0;
}

bool follow_wanted(struct sampler *s, pid_t child)
{
	struct stat mine, its;
	char buf[32];

	if (!s->spawned || s->detaching_all || child == s->pid ||
	    proc_status_field(child, "PPid", buf, sizeof(buf)) < 0 ||
	    (pid_t)strtol(buf, NULL, 10) != s->pid ||
	    proc_status_field(child, "Tgid", buf, sizeof(buf)) < 0 ||
	    (pid_t)strtol(buf, NULL, 10) != child)
		return false;
	if (s->follow_launcher)
		return true;
	if (pidns_of(s->pid, &mine) < 0 || pidns_of(child, &its) < 0)
		return false;
	return mine.st_ino != its.st_ino || mine.st_dev != its.st_dev;
}

/* Every thread of the launcher is let go: stopped is at a stop now, and
 * the caller detaches it there; the others at the stop an interrupt
 * brings. */
static void let_launcher_go(struct sampler *s, struct thread *stopped)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];

		if (t->gone || t->untraced)
			continue;
		t->detaching = true;
		t->want_copy = t->want_py_walk = false;
		if (t == stopped || t->interrupt_sent)
			continue;
		if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) < 0)
			thread_remove(s, t);
		else
			t->interrupt_sent = true;
	}
}

struct thread *follow_child(struct sampler *s, pid_t child, struct thread *stopped)
{
	struct sym_process *sym = NULL;
	struct addr_cache *addrs = NULL;
	struct pysample *py = s->py;
	struct thread *t;
	char err[256];
	pid_t launcher = s->pid;

	/* What the child needs comes first: failing that, nothing changes
	 * and the child is let go like any other. */
	if (sym_process_open(child, &sym, err, sizeof(err)) < 0)
		return NULL;
	if (addr_cache_new(&addrs) < 0) {
		sym_process_free(sym);
		return NULL;
	}
	s->py = NULL;
	if (py && pysample_new_for(s, child) < 0) {
		s->py = py;
		addr_cache_free(addrs);
		sym_process_free(sym);
		return NULL;
	}
	let_launcher_go(s, stopped);
	pysample_free(py);
	sym_process_free(s->sym);
	addr_cache_free(s->build.addrs);
	s->sym = sym;
	s->build.addrs = addrs;
	s->pid = child;
	s->exec_seq++; /* copies of the launcher's stacks are dropped */
	s->follow_launcher = true;
	threads_note_namespace(s);
	t = thread_add(s, child);
	if (!t)
		stats_error(s, SAMPLER_ERR_MEMORY);
	stops_log(s, "following PID %d, forked by the launcher %d into %s PID namespace",
		  (int)child, (int)launcher, s->other_pidns ? "a new" : "its own");
	return t;
}
