/* SPDX-License-Identifier: MIT */
/*
 * Thread storms (storm.c): where clones come too fast to stop for each
 * one, new threads are found by listing /proc/PID/task at ticks.
 */
#ifndef TRAINSAMPLE_SAMPLER_STORM_H
#define TRAINSAMPLE_SAMPLER_STORM_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sampler;
struct thread;

struct storm_state {
	bool active;            /* new threads are found by listing, at ticks */
	uint64_t window_ns;     /* the start of the window clones are counted in */
	unsigned clones;        /* ... and how many came in it */
	DIR *task_dir;          /* /proc/PID/task, kept open for the listing */
	int stat_fd;            /* /proc/PID/stat, opened with task_dir */
	long group_threads;     /* its thread count at the last listing */
	pid_t *tids;            /* the table's tids, sorted, for the listing */
	size_t tids_cap;
};

void storm_note_clone(struct sampler *s, struct thread *t);
void storm_scan(struct sampler *s);
void storm_free(struct sampler *s);

#endif
