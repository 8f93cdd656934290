// SPDX-License-Identifier: MIT
/*
 * --native's merge (sampler/python/merge.c) over plain arrays: native
 * frames with their roles, Python frames with their entry marks, and
 * where each one lands. Native frame ids are 100 + their index (leaf
 * first), Python ones 200 + theirs (innermost first), the end marker 900.
 */
#include <criterion/criterion.h>

#include "sampler/python/merge.h"

#define NAT MERGE_ROLE_NATIVE
#define EVAL MERGE_ROLE_EVAL
#define HID MERGE_ROLE_HIDDEN
#define INT MERGE_ROLE_INTERPRETER

#define N MERGED_NATIVE
#define I MERGED_INTERPRETER
#define P MERGED_PYTHON

#define MAX 64

struct merge_case {
	uint8_t roles[MAX];
	int n;
	bool entry[MAX];      /* each Python frame's entry mark */
	bool not_function[MAX]; /* a Python frame with no function: dropped */
	int npy;
	bool short_unwind;
	bool native_all;
};

static struct merge_output merge(const struct merge_case *mc)
{
	static uint32_t native[MAX], python[MAX], frames[2 * MAX + 2];
	static uint8_t kinds[2 * MAX + 2];
	static struct py_raw_frame raw[MAX];
	struct merge_output out = { .frames = frames, .kinds = kinds };
	struct merge_input in = {
		.native = native, .roles = mc->roles, .n = mc->n,
		.python = python, .raw = raw, .npy = mc->npy,
		.end_marker = mc->short_unwind ? 900 : MERGE_NO_FRAME,
		.native_all = mc->native_all,
	};

	for (int i = 0; i < mc->n; i++)
		native[i] = 100 + (uint32_t)i;
	for (int j = 0; j < mc->npy; j++) {
		python[j] = mc->not_function[j] ? MERGE_NO_FRAME : 200 + (uint32_t)j;
		raw[j] = (struct py_raw_frame){ .addr = 0x1000 + 64 * (uint64_t)j, .entry = mc->entry[j] };
	}
	merge_frames(&in, &out);
	return out;
}

static void expect_frames(const struct merge_output *out, const uint32_t *want,
			  const uint8_t *want_kinds, int nwant)
{
	cr_assert_eq(out->n, nwant, "merged %d frames, want %d", out->n, nwant);
	for (int i = 0; i < nwant; i++) {
		cr_expect_eq(out->frames[i], want[i], "frame %d: %u, want %u", i, out->frames[i],
			     want[i]);
		cr_expect_eq(out->kinds[i], want_kinds[i], "frame %d's kind: %u, want %u", i,
			     out->kinds[i], want_kinds[i]);
	}
}

/* Up to 3.10 every Python frame is an evaluator call of its own (the
 * walker marks each one entry). Leaf first: read, the evaluator, a
 * wrapper, vectorcall, the evaluator, Py_RunMain, main, libc's start. */
static const struct merge_case py310 = {
	.roles = { NAT, EVAL, HID, INT, EVAL, INT, INT, NAT },
	.n = 8,
	.entry = { true, true },
	.npy = 2,
};

Test(native_merge, one_frame_per_evaluator_call_3_10)
{
	struct merge_output out = merge(&py310);
	/* libc start, <module>, f, read: the interpreter's frames outward of
	 * the innermost Python frame go, and the wrapper always goes. */
	static const uint32_t want[] = { 107, 201, 200, 100 };
	static const uint8_t kinds[] = { N, P, P, N };

	expect_frames(&out, want, kinds, 4);
	cr_expect(out.python);
	cr_expect(!out.unmerged);
}

Test(native_merge, native_all_keeps_the_interpreter)
{
	struct merge_case mc = py310;
	struct merge_output out;
	/* Each Python frame in place of its evaluator frame, the
	 * interpreter's frames kept; the wrapper still goes. */
	static const uint32_t want[] = { 107, 106, 105, 201, 103, 200, 100 };
	static const uint8_t kinds[] = { N, I, I, P, I, P, N };

	mc.native_all = true;
	out = merge(&mc);
	expect_frames(&out, want, kinds, 7);
}

Test(native_merge, interpreter_below_the_innermost_python_frame_stays)
{
	/* A builtin the innermost Python frame called: what it does shows. */
	static const struct merge_case mc = {
		.roles = { NAT, INT, EVAL, INT },
		.n = 4,
		.entry = { true },
		.npy = 1,
	};
	struct merge_output out = merge(&mc);
	static const uint32_t want[] = { 200, 101, 100 };
	static const uint8_t kinds[] = { P, I, N };

	expect_frames(&out, want, kinds, 3);
}

/* 3.11: one evaluator call runs several frames, down to the one marked
 * is_entry: [0, 1] ran in the inner call, [2, 3] in the outer one. */
Test(native_merge, is_entry_groups_3_11)
{
	static const struct merge_case mc = {
		.roles = { NAT, EVAL, INT, EVAL, NAT },
		.n = 5,
		.entry = { false, true, false, true },
		.npy = 4,
		.native_all = true,
	};
	struct merge_output out = merge(&mc);
	static const uint32_t want[] = { 104, 203, 202, 102, 201, 200, 100 };
	static const uint8_t kinds[] = { N, P, P, I, P, P, N };

	expect_frames(&out, want, kinds, 7);
	cr_expect(!out.unmerged);
}

/* 3.12: the walker drops each call's shim frame and marks the frame
 * above it entry instead. Python calls C (a ctypes callback, numpy) that
 * calls Python again, three calls of 2, 1 and 3 frames; a frame whose
 * code is not a function's is dropped where it stands. */
Test(native_merge, shim_groups_3_12)
{
	static const struct merge_case mc = {
		.roles = { NAT, EVAL, NAT, NAT, EVAL, INT, EVAL, INT, NAT },
		.n = 9,
		.entry = { false, true, true, false, false, true },
		.not_function = { [4] = true },
		.npy = 6,
	};
	struct merge_output out = merge(&mc);
	/* libc start; outer call 5, (4 dropped), 3; middle call 2; the
	 * extension's frames 103, 102; inner call 1, 0; the leaf 100. The
	 * interpreter's 105 and 107 lie outward of the innermost Python
	 * frame: gone. */
	static const uint32_t want[] = { 108, 205, 203, 202, 103, 102, 201, 200, 100 };
	static const uint8_t kinds[] = { N, P, P, P, N, N, P, P, N };

	expect_frames(&out, want, kinds, 9);
	cr_expect(out.python);
}

/* Two evaluator frames, three groups, and the native unwind was whole:
 * neither half can be trusted, both stay as they are, and the error is
 * the caller's to count. */
Test(native_merge, count_mismatch_is_unmerged)
{
	static const struct merge_case mc = {
		.roles = { NAT, EVAL, INT, EVAL, HID },
		.n = 5,
		.entry = { true, true, true },
		.npy = 3,
	};
	struct merge_output out = merge(&mc);
	/* Native outermost first, every frame as native (the wrapper and
	 * the interpreter's too: nothing is hidden), the [unmerged] marker,
	 * then the Python frames outermost first. */
	static const uint32_t want[] = { 104, 103, 102, 101, 100, MERGE_UNMERGED, 202, 201, 200 };
	static const uint8_t kinds[] = { N, N, N, N, N, N, P, P, P };

	expect_frames(&out, want, kinds, 9);
	cr_expect(out.unmerged);
	cr_expect(out.python);
}

Test(native_merge, more_evaluator_frames_than_groups_is_unmerged_even_when_short)
{
	static const struct merge_case mc = {
		.roles = { EVAL, EVAL },
		.n = 2,
		.entry = { true },
		.npy = 1,
		.short_unwind = true,
	};
	struct merge_output out = merge(&mc);
	static const uint32_t want[] = { 900, 101, 100, MERGE_UNMERGED, 200 };
	static const uint8_t kinds[] = { N, N, N, N, P };

	expect_frames(&out, want, kinds, 5);
	cr_expect(out.unmerged);
}

/* The native unwind stopped short after one evaluator frame of three:
 * the two outer groups it did not reach go at the root, under its end
 * marker, and the inner one in place of the evaluator frame it found. */
Test(native_merge, short_native_unwind_puts_outer_groups_at_the_root)
{
	static const struct merge_case mc = {
		.roles = { NAT, EVAL, NAT },
		.n = 3,
		.entry = { true, false, true, true },
		.npy = 4,
		.short_unwind = true,
	};
	struct merge_output out = merge(&mc);
	static const uint32_t want[] = { 900, 203, 202, 201, 102, 200, 100 };
	static const uint8_t kinds[] = { N, P, P, P, N, P, N };

	expect_frames(&out, want, kinds, 7);
	cr_expect(!out.unmerged);
}

Test(native_merge, no_python_function_named_says_no_python)
{
	static const struct merge_case mc = {
		.roles = { NAT, EVAL, INT },
		.n = 3,
		.entry = { true },
		.not_function = { true },
		.npy = 1,
	};
	struct merge_output out = merge(&mc);
	/* Nothing Python to hide behind: the interpreter's frame stays. */
	static const uint32_t want[] = { 102, 100 };
	static const uint8_t kinds[] = { I, N };

	expect_frames(&out, want, kinds, 2);
	cr_expect(!out.python);
}

Test(native_merge, no_evaluator_no_python_frames)
{
	static const struct merge_case mc = {
		.roles = { NAT, NAT },
		.n = 2,
	};
	struct merge_output out = merge(&mc);
	static const uint32_t want[] = { 101, 100 };
	static const uint8_t kinds[] = { N, N };

	expect_frames(&out, want, kinds, 2);
	cr_expect(!out.unmerged);
	cr_expect(!out.python);
}
