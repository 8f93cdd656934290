/* SPDX-License-Identifier: MIT */
/* The trace writer's state, shared by trace.c and trace_gpu.c only. */
#ifndef TRAINSAMPLE_FORMATS_TRACE_IMPL_H
#define TRAINSAMPLE_FORMATS_TRACE_IMPL_H

#include <stdio.h>

#include "formats/formats.h"
#include "common/common.h"
#include "formats/label_set.h"

struct open_frame {
	uint32_t label, frame;
	uint64_t start;
};

/* A thread's frames open now, while its spans are read. */
struct trace_walker {
	uint32_t pid, tid;
	struct open_frame *open;
	uint32_t nopen, capopen;
	uint64_t prev_end; /* where its previous span ended; 0 before the first */
	/* Its phase track (trace_phases.c): the run of one phase open now. */
	int phase;         /* class + 1; 0 none open */
	uint64_t phase_start, phase_end;
	bool phase_named;
};

struct tr {
	const struct profile *p;
	struct render_options o; /* the caller's, by function */
	const char *script_dir;
	uint64_t t0;
	struct label_set labels;
	uint32_t *label_of;     /* per frame id: label + 1 */
	uint32_t *path, cappath;
	struct trace_walker *walkers; /* in the order threads were first seen */
	uint32_t nwalkers, capwalkers;
	struct hash_table walker_index;
	struct json_out *out;    /* where slices go; NULL: the counting pass */
	uint64_t by_duration[64]; /* slices by floor(log2(duration in ns)) */
	uint64_t slices_all, slices_kept;
	uint64_t min_dur_ns;     /* shorter slices are left out (the limit) */
	uint64_t ngpu;           /* GPU activities the filters keep */
	uint64_t gpu_devices;    /* bit per device with work (the first 64) */
	uint32_t gpu_first_pid[64];
	uint64_t shared_devices; /* bit per device several processes used */
	uint32_t *named;         /* processes named so far */
	size_t nnamed, capnamed;
};

/* trace.c: an event, on a line of its own, opened with its phase ("ph");
 * the caller writes the rest and closes it. */
void trace_begin_event(struct json_out *j, const char *ph);
/* "key": nanoseconds as microseconds with three decimals, exactly. */
void trace_put_us(struct json_out *j, const char *key, uint64_t ns);
void trace_write_name(struct json_out *j, const char *what, uint32_t pid, uint32_t tid,
		      const char *name);
/* A process's name (the command, or "pid N"), once. */
void trace_name_process(struct tr *t, struct json_out *j, uint32_t pid);
/* One frame's complete slice on a thread's track. */
void trace_write_slice(struct tr *t, struct json_out *j, uint32_t pid, uint32_t tid,
		       const struct open_frame *f, uint64_t start, uint64_t end);

/* trace_slices.c: one pass over the timeline; with out NULL it only counts
 * the slices by duration, else it writes those the limit keeps. */
int trace_slices_pass(struct tr *t, struct json_out *out);
/* Sets min_dur_ns from the counting pass: 0 when at most max_slices (0: no
 * limit), else the smallest power of two that leaves at most that many. */
void trace_slices_limit(struct tr *t, uint64_t max_slices);
void trace_slices_free(struct tr *t);
/* The walker of a thread, made at its first span. */
int trace_walker_of(struct tr *t, uint32_t pid, uint32_t tid, struct trace_walker **out);

/* trace_phases.c: where each row has a class (the training phase), a
 * track per thread of its phases over time, and the steps' starts on it. */
int trace_phases_write(struct tr *t, struct json_out *j);

/* trace_gpu.c: counts the GPU activities the filters keep; t0 moves to
 * the earliest of them and of their launches. */
int trace_gpu_collect(struct tr *t);
/* A process per device, a track per stream, each launch on a track of its
 * CPU thread's, arrows from launches to what they launched. */
int trace_gpu_write(struct tr *t, struct json_out *j);

#endif
