/* SPDX-License-Identifier: MIT */
/*
 * --native's merge of a native stack with the Python frames read with it,
 * as a pure function of plain arrays (merge.c): the caller looks up what
 * each native frame is and names the Python frames; this decides where
 * each one goes. Unit tested alone (tests/unit/test_native_merge.c).
 */
#ifndef TRAINSAMPLE_SAMPLER_PYTHON_MERGE_H
#define TRAINSAMPLE_SAMPLER_PYTHON_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize/python/python.h"

/* What a merged frame is, for --native's filter (native_filter.c). */
enum merged_kind {
	MERGED_NATIVE,      /* a module other than the interpreter's, or a marker */
	MERGED_INTERPRETER, /* the module that holds the evaluator */
	MERGED_PYTHON,
};

/* What a native frame is to the merge. */
enum merge_role {
	MERGE_ROLE_NATIVE,
	MERGE_ROLE_EVAL,        /* the evaluator: its Python frames go here */
	MERGE_ROLE_HIDDEN,      /* a wrapper that only calls the evaluator */
	MERGE_ROLE_INTERPRETER, /* another frame of the evaluator's module */
};

/* No frame: a Python frame that is not a function's (dropped), or no
 * end marker. */
#define MERGE_NO_FRAME UINT32_MAX
/* The frame out.frames holds where the [unmerged] marker goes; the caller
 * interns the marker only then. */
#define MERGE_UNMERGED (UINT32_MAX - 1)

struct merge_input {
	const uint32_t *native;  /* n native frames, leaf first */
	const uint8_t *roles;    /* ... each one's enum merge_role */
	int n;
	const uint32_t *python;  /* npy Python frames, innermost first
				  * (MERGE_NO_FRAME: dropped) */
	const struct py_raw_frame *raw; /* ... as read: their entry marks */
	int npy;
	uint32_t end_marker;     /* the native unwind stopped short: this
				  * marker at the root (MERGE_NO_FRAME: it
				  * did not) */
	bool native_all;         /* keep the interpreter's frames */
};

struct merge_output {
	uint32_t *frames;        /* room for n + npy + 2; outermost first */
	uint8_t *kinds;          /* ... each one's enum merged_kind */
	int n;
	bool python;             /* a Python frame is in it */
	bool unmerged;           /* the counts differed: native frames, then
				  * MERGE_UNMERGED, then the Python frames */
};

/*
 * Each evaluator frame replaced by the Python frames it ran. Up to 3.10
 * every Python frame is one evaluator call; from 3.11 one call runs
 * several, down to the first it entered (raw[].entry), so they split
 * into groups there, the innermost group to the innermost evaluator
 * frame. Where the counts differ both halves stay side by side, unless
 * the native unwind stopped short (end_marker): the groups it did not
 * reach go at the root. Without native_all the interpreter's frames
 * outward of the innermost Python frame are dropped.
 */
void merge_frames(const struct merge_input *in, struct merge_output *out);

/* native_filter.c, --native's filter:
 * of n merged frames (outermost first, with their enum merged_kind), drops
 * the interpreter's frames outward of the innermost Python frame, keeping
 * the rest in order at the front. Returns how many are kept. */
int native_hide_interpreter(uint32_t *frames, uint8_t *kinds, int n);
/* Whether path names a python executable (python, python3, python3.11d),
 * whose frames are the interpreter's where libpython holds the evaluator. */
bool native_is_python_executable(const char *path);

#endif
