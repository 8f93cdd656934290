/* SPDX-License-Identifier: MIT */
/*
 * The process tree (procs.c): with subprocesses each process followed has
 * a sampler of its own; the first one, the root, runs the loop, owns the
 * signal and timer descriptors and holds the others.
 */
#ifndef TRAINSAMPLE_SAMPLER_PROCS_H
#define TRAINSAMPLE_SAMPLER_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sampler;

struct proc_tree {
	struct sampler *root;   /* a followed process's root; NULL in the root */
	struct sampler **procs; /* root: the other processes followed */
	size_t nprocs, cap_procs;
	pid_t parent;           /* followed: the process it was found under */
	bool let_go;            /* followed: let go for good (setuid, 32-bit) */
	char followed_python[96]; /* root: a followed process's Python, where
				   * the root's own process had none */
};

/* The sampler whose process tid belongs to, for a stop of tid; a new
 * process under a followed one gets a sampler of its own here. */
struct sampler *procs_owner(struct sampler *root, pid_t tid);
/* The sampler of process pid, forked or cloned by parent's process,
 * made now unless it exists; NULL when it is not followed. */
struct sampler *procs_follow(struct sampler *s, pid_t pid);
/* At an exec of a followed process: false when it is to be let go (it
 * runs as another user, a set-user-ID program exec'd again untraced, or
 * a 32-bit program), said in one line. */
bool procs_exec_allowed(struct sampler *s);
/* Seizes the root's descendants that exist now (attach -s). */
void procs_attach_descendants(struct sampler *root);
/* attach without subprocesses: the descendants alive now are counted
 * as not followed. */
void procs_count_unfollowed(struct sampler *root);
/* Opens the maps and symbols of processes that joined at a fork, before
 * their first tick (not at the fork event: the parent waits there). */
void procs_open_pending(struct sampler *root);
/* Followed processes that exited are unwound, counted and freed. */
void procs_reap(struct sampler *root);
/* Lets every followed process go and frees them (end, Ctrl-Z). */
void procs_let_go(struct sampler *root);
/* The ptrace options a seized thread of s gets. */
long seize_options(const struct sampler *s);
/* Adds st's counts and histograms to into's. */
void stats_fold(struct sampler *into, const struct sampler *from);

#endif
