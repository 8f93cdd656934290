/* SPDX-License-Identifier: MIT */
/* Shared between the files of analysis/ only. */
#ifndef TRAINSAMPLE_ANALYSIS_PHASE_IMPL_H
#define TRAINSAMPLE_ANALYSIS_PHASE_IMPL_H

#include "analysis/analysis.h"

struct phase_rule {
	enum phase phase;
	bool thread;          /* func is a thread name's pattern */
	const char *func;     /* shell pattern */
	const char *file;     /* shell pattern; NULL: any file */
	bool barrier;         /* frames further out do not take over what is
			       * inside it (phase unused): an optimizer's
			       * closure that runs the whole training step */
};

struct phase_rules {
	struct phase_rule *user; /* from files, checked first */
	size_t nuser, cap_user;
};

struct phase_map {
	const struct phase_rules *rules;
	const struct profile *p;
	uint8_t *stacks, *frames, *inner; /* caches: 0 not looked at, else phase + 1 */
	uint32_t nstacks, nframes, ninner;
	uint8_t *sync_lines; /* per frame: 0 not read, 1 no, 2 a line that waits for the GPU */
	uint32_t nsync_lines;
	uint8_t *epoch_stacks; /* per stack: 0 not looked at, 1 no, 2 starts an epoch */
	uint32_t nepoch_stacks;
	uint32_t *path;
	uint32_t cap_path;
};

/* The phase of the first rule a frame matches (file may be NULL), or of a
 * thread's name; -1 none, PHASE_BARRIER a barrier. */
#define PHASE_BARRIER (-2)
int phase_rules_frame(const struct phase_rules *r, const char *func, const char *file);
int phase_rules_thread(const struct phase_rules *r, const char *name);
/* The built-in rules, one by one (NULL past the last): their tests. */
const struct phase_rule *phase_rules_builtin(size_t i);

/* A stack's phase inside an evaluation (its eval frames passed over:
 * data, forward); the frame that calls the outermost frame of phase ph
 * (the loop's line that fetches a batch, that logs), or the line a sync
 * is known by; 0 none. */
enum phase phase_inside_eval(struct phase_map *m, uint32_t stack);
/* Where a stack is in a DataLoader's pass: starting it (a data frame
 * named *.__iter__: DataLoader.__iter__, accelerate's DataLoaderShard's),
 * its workers started then, or ending it (*._shutdown_workers: the
 * workers joined, up to seconds each), else neither. */
enum epoch_edge { EPOCH_NONE, EPOCH_START, EPOCH_STOP };
enum epoch_edge stack_epoch_edge(struct phase_map *m, uint32_t stack);
/* "No frame": frame ids start at 0, which is a real frame (often the
 * first sample's root, or an attach's loop line). */
#define FRAME_NONE UINT32_MAX
/* The frame whose line calls into the phase's code; FRAME_NONE if none. */
uint32_t phase_call_site(struct phase_map *m, uint32_t stack, enum phase ph);

/* source_lines.c: a Python frame's line of source; false if unreadable. */
bool source_line_of(const struct profile *p, uint32_t frame, char *buf, size_t len);

/* phases.c: a per-id byte cache grown (zero-filled) to hold index i,
 * false when out of memory; sorting durations. */
bool byte_cache_fit(uint8_t **cache, uint32_t *n, uint32_t i);
void u64_sort(uint64_t *v, size_t n);

#endif
