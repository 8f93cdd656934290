// SPDX-License-Identifier: MIT
/*
 * --native's filter: the interpreter's frames outward of the innermost
 * Python frame go, everything else stays in order; and which files are a
 * python executable.
 */
#include <criterion/criterion.h>

#include "sampler/python/merge.h"

#define N MERGED_NATIVE
#define I MERGED_INTERPRETER
#define P MERGED_PYTHON

/* Filters kinds (frame ids are their indices) and compares the ids kept. */
static void expect_kept(const uint8_t *kinds, int n, const uint32_t *want, int nwant)
{
	uint32_t frames[64];
	uint8_t k[64];
	int kept;

	for (int i = 0; i < n; i++) {
		frames[i] = (uint32_t)i;
		k[i] = kinds[i];
	}
	kept = native_hide_interpreter(frames, k, n);
	cr_assert_eq(kept, nwant, "kept %d, want %d", kept, nwant);
	for (int i = 0; i < kept; i++) {
		cr_expect_eq(frames[i], want[i], "frame %d: %u, want %u", i, frames[i], want[i]);
		cr_expect_eq(k[i], kinds[want[i]], "kind of frame %d", i);
	}
}

Test(native_filter, between_and_above_go_below_stays)
{
	/* _start libc main Py_RunMain <module> vectorcall ctypes libffi libc
	 * vectorcall compare builtin libc */
	static const uint8_t kinds[] = { I, N, I, I, P, I, N, N, N, I, P, I, N };
	static const uint32_t want[] = { 1, 4, 6, 7, 8, 10, 11, 12 };

	expect_kept(kinds, 13, want, 8);
}

Test(native_filter, python_frames_next_to_each_other)
{
	static const uint8_t kinds[] = { N, P, P, I, P, I };
	static const uint32_t want[] = { 0, 1, 2, 4, 5 };

	expect_kept(kinds, 6, want, 5);
}

Test(native_filter, no_python_frame_keeps_everything)
{
	static const uint8_t kinds[] = { I, N, I, I, N };
	static const uint32_t want[] = { 0, 1, 2, 3, 4 };

	expect_kept(kinds, 5, want, 5);
}

Test(native_filter, python_leaf_and_empty_stack)
{
	static const uint8_t kinds[] = { I, I, P };
	static const uint32_t want[] = { 2 };

	expect_kept(kinds, 3, want, 1);
	expect_kept(kinds, 0, want, 0);
}

Test(native_filter, python_executables)
{
	cr_expect(native_is_python_executable("/usr/bin/python3.11"));
	cr_expect(native_is_python_executable("/root/.pyenv/versions/3.8.18/bin/python3.8"));
	cr_expect(native_is_python_executable("python"));
	cr_expect(native_is_python_executable("/usr/bin/python3"));
	cr_expect(native_is_python_executable("/usr/bin/python3.12d"));
	cr_expect_not(native_is_python_executable("/usr/lib/libpython3.11.so.1.0"));
	cr_expect_not(native_is_python_executable("/usr/bin/python3-config"));
	cr_expect_not(native_is_python_executable("/opt/app/train"));
	cr_expect_not(native_is_python_executable("/opt/pythonista"));
	cr_expect_not(native_is_python_executable(""));
	cr_expect_not(native_is_python_executable("[vdso]"));
}
