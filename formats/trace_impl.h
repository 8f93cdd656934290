/* SPDX-License-Identifier: MIT */
/* The trace writer's state, shared by trace.c and trace_gpu.c only. */
#ifndef TRAINSAMPLE_FORMATS_TRACE_IMPL_H
#define TRAINSAMPLE_FORMATS_TRACE_IMPL_H

#include <stdio.h>

#include "formats/formats.h"
#include "formats/label_set.h"

struct slice {
	uint64_t start, end;
	uint32_t pid, tid, depth, frame;
};

struct open_frame {
	uint32_t label, frame;
	uint64_t start;
};

struct tr {
	const struct profile *p;
	struct render_options o; /* the caller's, by function */
	const char *script_dir;
	const struct profile_span **spans;
	size_t nspans, capspans;
	uint64_t t0;
	struct label_set labels;
	uint32_t *label_of;     /* per frame id: label + 1 */
	uint32_t *path, cappath;
	struct open_frame *open;
	uint32_t nopen, capopen;
	struct slice *slices;
	size_t nslices, capslices;
	bool written; /* an event was: the next one needs a comma */
	const struct gpu_activity **gpu; /* kept by the filters, by device, pid, stream, start */
	size_t ngpu, capgpu;
	uint64_t shared_devices; /* bit per device several processes used */
	uint32_t *named;         /* processes named so far */
	size_t nnamed, capnamed;
};

/* trace.c */
void trace_begin_event(struct tr *t, FILE *out);
/* Nanoseconds as microseconds with three decimals. */
void trace_put_us(FILE *out, uint64_t ns);
void trace_write_name(struct tr *t, FILE *out, const char *what, uint32_t pid, uint32_t tid,
		      const char *name);
/* A process's name (the command, or "pid N"), once. */
void trace_name_process(struct tr *t, FILE *out, uint32_t pid);

/* trace_gpu.c: the GPU activities the filters keep; t0 moves to the
 * earliest of them and of their launches. */
int trace_gpu_collect(struct tr *t);
/* A process per device, a track per stream, each launch on a track of its
 * CPU thread's, arrows from launches to what they launched. */
void trace_gpu_write(struct tr *t, FILE *out);

#endif
