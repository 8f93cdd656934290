// SPDX-License-Identifier: MIT
/* Folded stacks output and the output format names. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

#include "model_helpers.h"

/* folded_write's output as a string the caller frees. */
static char *folded(const struct profile *p, bool threads, bool idle)
{
	struct render_options o = { .threads = threads, .include_idle = idle };

	return written(folded_write, p, &o, 0);
}

static void expect(const struct profile *p, bool threads, bool idle,
		   const char *want)
{
	char *got = folded(p, threads, idle);

	cr_assert_str_eq(got, want);
	free(got);
}

/*
 * Thread 100 "python" runs main;compute 3 times and a Python step once;
 * thread 101 (no name) runs main;compute twice and blocks in a futex 4 times.
 */
static struct profile *small_profile(void)
{
	struct profile *p = profile_new();
	uint32_t main_f = frame(p, FRAME_NATIVE, "main", "train", 0);
	uint32_t compute = frame(p, FRAME_NATIVE, "compute", "libtorch.so", 0);
	uint32_t train = frame(p, FRAME_PYTHON, "train", "train.py", 10);
	uint32_t step = frame(p, FRAME_PYTHON, "step", "model.py", 0);
	uint32_t futex = frame(p, FRAME_IDLE, "[idle: futex]", "", 0);
	uint32_t a[] = { main_f, compute }, b[] = { main_f, train, step };
	uint32_t c[] = { main_f, futex };

	cr_assert_eq(profile_set_thread(p, 100, 100, "python"), 0);
	samples(p, 100, stack(p, a, 2), 3, 1000, 0);
	samples(p, 101, stack(p, a, 2), 2, 1000, 0);
	samples(p, 100, stack(p, b, 3), 1, 1000, 0);
	samples(p, 101, stack(p, c, 2), 4, 1000, SAMPLE_IDLE);
	return p;
}

Test(folded, merged_threads_without_idle)
{
	struct profile *p = small_profile();

	expect(p, false, false,
	       "main;compute 5\n"
	       "main;train (train.py:10);step (model.py) 1\n");
	profile_free(p);
}

Test(folded, merged_threads_with_idle)
{
	struct profile *p = small_profile();

	expect(p, false, true,
	       "main;[idle: futex] 4\n"
	       "main;compute 5\n"
	       "main;train (train.py:10);step (model.py) 1\n");
	profile_free(p);
}

Test(folded, per_thread_roots)
{
	struct profile *p = small_profile();

	expect(p, true, true,
	       "thread 100 (python);main;compute 3\n"
	       "thread 100 (python);main;train (train.py:10);step (model.py) 1\n"
	       "thread 101;main;[idle: futex] 4\n"
	       "thread 101;main;compute 2\n");
	expect(p, true, false,
	       "thread 100 (python);main;compute 3\n"
	       "thread 100 (python);main;train (train.py:10);step (model.py) 1\n"
	       "thread 101;main;compute 2\n");
	profile_free(p);
}

/* idle_kept_only: every thread's work, the waits of the threads in
 * idle_keep only (the training loop's); thread 101's wait is left out
 * unless it is one of them. */
Test(folded, waits_of_the_kept_threads_only)
{
	struct profile *p = small_profile();
	struct thread_ref loop = { 100, 100 }, waiter = { 100, 101 };
	struct render_options o = { .threads = true, .include_idle = true,
				    .idle_keep = &loop, .nidle_keep = 1, .idle_kept_only = true };
	char *got = written(folded_write, p, &o, 0);

	cr_assert_str_eq(got,
			 "thread 100 (python);main;compute 3\n"
			 "thread 100 (python);main;train (train.py:10);step (model.py) 1\n"
			 "thread 101;main;compute 2\n");
	free(got);
	o.idle_keep = &waiter;
	got = written(folded_write, p, &o, 0);
	cr_assert(strstr(got, "thread 101;main;[idle: futex] 4\n"), "%s", got);
	free(got);
	profile_free(p);
}

Test(folded, gpu_frames_and_empty_stacks)
{
	struct profile *p = profile_new();
	uint32_t f[] = {
		frame(p, FRAME_NATIVE, "launch", "libcuda.so", 0),
		frame(p, FRAME_GPU, "gemm_kernel", "", 0),
	};

	samples(p, 1, stack(p, f, 2), 2, 1, 0);
	samples(p, 1, 0, 1, 1, SAMPLE_TRUNCATED);
	expect(p, false, false, "[unknown] 1\nlaunch;gemm_kernel 2\n");
	profile_free(p);
}

Test(folded, separators_in_names_are_replaced)
{
	struct profile *p = profile_new();
	uint32_t f[] = {
		frame(p, FRAME_NATIVE, "std::map<a;b>::at", "", 0),
		frame(p, FRAME_PYTHON, "line\nbreak", "dir;x/f.py", 3),
	};

	cr_assert_eq(profile_set_thread(p, 100, 7, "w;1\n"), 0);
	samples(p, 7, stack(p, f, 2), 1, 1, 0);
	expect(p, true, false,
	       "thread 7 (w:1 );std::map<a:b>::at;line break (dir:x/f.py:3) 1\n");
	profile_free(p);
}

Test(folded, counts_are_weights_over_the_period_rounded)
{
	struct profile *p = profile_new();
	uint32_t a = frame(p, FRAME_NATIVE, "a", "", 0);
	uint32_t b = frame(p, FRAME_NATIVE, "b", "", 0);
	uint32_t c = frame(p, FRAME_NATIVE, "c", "", 0);
	uint32_t d = frame(p, FRAME_NATIVE, "d", "", 0);

	cr_assert_eq(profile_set_meta(p, "period_ns", "1000000"), 0);
	samples(p, 1, stack(p, &a, 1), 2, 1300000, 0); /* 2.6 periods */
	samples(p, 1, stack(p, &b, 1), 1, 200000, 0);  /* 0.2: at least 1 */
	samples(p, 1, stack(p, &c, 1), 1, 2500000, 0); /* halves round up */
	samples(p, 1, stack(p, &d, 1), 3, 800000, 0);  /* 2.4 */
	expect(p, false, false, "a 3\nb 1\nc 3\nd 2\n");
	/* 9 in all for 7 samples: the writer says which is which (issue 29). */
	{
		char err[256] = "";
		FILE *out = fopen("/dev/null", "w");

		cr_assert_eq(folded_write(p, out, NULL, err, sizeof(err)), 0);
		cr_assert_str_eq(err, "its counts are weights in 1 ms sampling periods, 9 in all "
				      "for 7 samples (a sample stands for the time since its "
				      "thread's previous one, longer where ticks were missed)");
		fclose(out);
	}
	profile_free(p);
}

Test(folded, identical_lines_are_merged_before_rounding)
{
	struct profile *p = profile_new();
	/* Native frames print only their name: these two read the same. */
	uint32_t x = frame(p, FRAME_NATIVE, "f", "liba.so", 0);
	uint32_t y = frame(p, FRAME_NATIVE, "f", "libb.so", 0);

	cr_assert_neq(x, y);
	samples(p, 1, stack(p, &x, 1), 1, 300, 0);
	samples(p, 2, stack(p, &y, 1), 2, 300, 0);
	expect(p, false, false, "f 3\n");
	/* 0.9 periods in all: one line of 1, not 1 + 1. */
	cr_assert_eq(profile_set_meta(p, "period_ns", "1000"), 0);
	expect(p, false, false, "f 1\n");
	/* 2.25 periods: 2, where rounding each row would give 1 + 2. */
	cr_assert_eq(profile_set_meta(p, "period_ns", "400"), 0);
	expect(p, false, false, "f 2\n");
	profile_free(p);
}

Test(folded, empty_profile_and_bad_period)
{
	struct profile *p = profile_new();
	char err[128] = "";
	FILE *out = fopen("/dev/null", "w");

	expect(p, true, true, "");
	cr_assert_eq(profile_set_meta(p, "period_ns", "10ms"), 0);
	cr_assert_eq(folded_write(p, out, NULL, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "period_ns"));
	fclose(out);
	profile_free(p);
}

Test(output_format, names_and_aliases)
{
	cr_assert_eq(output_writer_by_name("folded"), output_writer_of(OUTPUT_FOLDED));
	cr_assert_eq(output_writer_by_name("txt"), output_writer_of(OUTPUT_FOLDED));
	cr_assert_eq(output_writer_by_name("collapsed"), output_writer_of(OUTPUT_FOLDED));
	cr_assert_eq(output_writer_by_name("tsprof"), output_writer_of(OUTPUT_TSPROF));
	cr_assert_eq(output_writer_by_name("raw"), output_writer_of(OUTPUT_TSPROF));
	cr_assert_null(output_writer_by_name("svg-ish"));
	cr_assert_null(output_writer_by_name(""));
	cr_assert_str_eq(output_writer_of(OUTPUT_FOLDED)->name, "folded");
	cr_assert_str_eq(output_writer_of(OUTPUT_TSPROF)->name, "tsprof");
	cr_assert_str_eq(output_writer_of(OUTPUT_FOLDED)->extensions[0], "folded");
	cr_assert_str_eq(output_writer_of(OUTPUT_TSPROF)->extensions[0], "tsprof");
}

Test(output_format, from_path)
{
	cr_assert_eq(output_writer_by_path("out.folded"), output_writer_of(OUTPUT_FOLDED));
	cr_assert_eq(output_writer_by_path("/tmp/a.b/out.txt"), output_writer_of(OUTPUT_FOLDED));
	cr_assert_eq(output_writer_by_path("run.tsprof"), output_writer_of(OUTPUT_TSPROF));
	cr_assert_null(output_writer_by_path("run.tsprof.bak"));
	cr_assert_null(output_writer_by_path("/tmp/a.folded/out"));
	cr_assert_null(output_writer_by_path("noext"));
}

/* --group-by phase and --phase: a row's class is its stack's, but the
 * part of the row before the thread's first step is startup, and spans
 * that span_class tells apart by time (a validation pass on the training
 * lines) are theirs; a kept class keeps only its parts. */
static const char *const test_classes[] = { "forward", "eval" };

static int class_by_row(void *ctx, const struct profile_aggregate *row)
{
	(void)ctx;
	(void)row;
	return 0;
}

static int class_by_time(void *ctx, const struct profile_span *span)
{
	(void)ctx;
	return span->start_ns >= 5000000 && span->start_ns < 8000000;
}

Test(folded, classes_told_by_time)
{
	struct profile *p = profile_new();
	uint32_t a[] = { frame(p, FRAME_PYTHON, "loop", "train.py", 3),
			 frame(p, FRAME_PYTHON, "forward", "model.py", 9) };
	uint32_t sts[2] = { stack(p, a, 2), stack(p, a, 1) };
	struct step_mark mark = { 100, 100, 2000000, 1 };
	struct render_options o = {
		.row_class = class_by_row, .span_class = class_by_time,
		.class_names = test_classes, .class_kind = "phase", .class_root = true,
		.step_marks = &mark, .nstep_marks = 1,
	};
	char *got;

	cr_assert_eq(profile_keep_timeline(p), 0);
	cr_assert_eq(profile_set_meta(p, "period_ns", "1000000"), 0);
	/* one sample a millisecond, 1 to 10 ms, in turn in the model and on
	 * the loop's line: one span each, from the sample before (0 to 9 ms);
	 * two before the first step, three from 5 ms told eval */
	for (int i = 0; i < 10; i++) {
		struct sample s = { .time_ns = (uint64_t)i * 1000000 + 1000000, .pid = 100, .tid = 100,
				    .stack = sts[i % 2], .weight_ns = 1000000 };

		cr_assert_eq(profile_add_sample(p, &s), 0);
	}
	got = written(folded_write, p, &o, 0);
	cr_assert_str_eq(got, "[phase: eval];loop (train.py:3) 2\n"
			      "[phase: eval];loop (train.py:3);forward (model.py:9) 1\n"
			      "[phase: forward];loop (train.py:3) 2\n"
			      "[phase: forward];loop (train.py:3);forward (model.py:9) 3\n"
			      "[phase: startup];loop (train.py:3) 1\n"
			      "[phase: startup];loop (train.py:3);forward (model.py:9) 1\n", "%s", got);
	free(got);
	o.class_root = false;
	o.keep_class = 2; /* eval */
	got = written(folded_write, p, &o, 0);
	cr_assert_str_eq(got, "loop (train.py:3) 2\nloop (train.py:3);forward (model.py:9) 1\n", "%s", got);
	free(got);
	o.keep_class = 1;
	got = written(folded_write, p, &o, 0);
	cr_assert_str_eq(got, "loop (train.py:3) 2\nloop (train.py:3);forward (model.py:9) 3\n", "%s", got);
	free(got);
	profile_free(p);
}
