// SPDX-License-Identifier: MIT
/* speedscope's JSON on a model built by hand. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "model_helpers.h"

static char *speedscope(const struct profile *p, const struct render_options *o)
{
	return written(speedscope_write, p, o, 0);
}

Test(speedscope, a_profile_per_thread_frames_shared)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_NATIVE, "main", "app", 0);
	uint32_t f = frame(p, FRAME_PYTHON, "forward", "/src/train.py", 30);
	uint32_t f2 = frame(p, FRAME_PYTHON, "forward", "/src/train.py", 31);
	uint32_t q = frame(p, FRAME_PYTHON, "say \"hi\"\n", "/src/train.py", 7);
	uint32_t s1[] = { m, f }, s2[] = { m, f2 }, s3[] = { m, q };
	struct render_options o = { 0 };
	char *text;

	profile_set_meta(p, "python_script_dir", "/src");
	profile_set_thread(p, 100, 1, "MainThread");
	profile_set_thread(p, 100, 2, "loader");
	samples(p, 1, stack(p, s1, 2), 3, 10000000, 0);
	samples(p, 1, stack(p, s2, 2), 1, 10000000, 0);
	samples(p, 2, stack(p, s3, 2), 5, 10000000, 0);
	text = speedscope(p, &o);
	cr_assert(strstr(text, "\"name\":\"100/MainThread (1)\""), "%s", text);
	cr_assert(strstr(text, "\"name\":\"100/loader (2)\""));
	cr_assert(strstr(text, "{\"name\":\"forward\",\"file\":\"train.py\",\"line\":30}"));
	cr_assert(strstr(text, "{\"name\":\"forward\",\"file\":\"train.py\",\"line\":31}"));
	cr_assert(strstr(text, "{\"name\":\"main\",\"file\":\"app\"}"));
	cr_assert(strstr(text, "\"say \\\"hi\\\"\\u000a\""), "%s", text);
	/* The loader has the most weight: 0.05 s against 0.04 s. */
	cr_assert(strstr(text, "\"activeProfileIndex\":1"), "%s", text);
	cr_assert(strstr(text, "\"weights\":[0.030000000,0.010000000]"), "%s", text);
	free(text);

	/* By function: one frame for both lines, its samples merged. */
	o.by_function = true;
	text = speedscope(p, &o);
	cr_assert(strstr(text, "{\"name\":\"forward\",\"file\":\"train.py\"}"), "%s", text);
	cr_assert_null(strstr(text, "\"line\":30"));
	free(text);
	profile_free(p);
}

/* Two files' frames of one name are two frames, each with its own file:
 * ld.so's _start and a stripped program's, named by their entry points,
 * were one, and the program's root said ld.so. */
Test(speedscope, frames_of_one_name_in_two_files_stay_apart)
{
	struct profile *p = profile_new();
	uint32_t ld = frame(p, FRAME_NATIVE, "_start", "ld-linux-x86-64.so.2", 0);
	uint32_t dl = frame(p, FRAME_NATIVE, "_dl_start", "ld-linux-x86-64.so.2", 0);
	uint32_t py = frame(p, FRAME_NATIVE, "_start", "python3.14", 0);
	uint32_t lc = frame(p, FRAME_NATIVE, "__libc_start_main", "libc.so.6", 0);
	uint32_t s1[] = { ld, dl }, s2[] = { py, lc };
	struct render_options o = { 0 };
	char *text;

	profile_set_thread(p, 100, 100, "python3.14");
	samples(p, 100, stack(p, s1, 2), 1, 10000000, 0);
	samples(p, 100, stack(p, s2, 2), 4, 10000000, 0);
	text = speedscope(p, &o);
	cr_assert(strstr(text, "{\"name\":\"_start\",\"file\":\"ld-linux-x86-64.so.2\"}"), "%s", text);
	cr_assert(strstr(text, "{\"name\":\"_start\",\"file\":\"python3.14\"}"), "%s", text);
	free(text);
	profile_free(p);
}

/* With a timeline, a thread's samples are its runs of one stack in time
 * order (forward, backward, forward again: three samples, not two
 * distinct stacks), and speedscope opens on the thread named by
 * open_pid/open_tid (the training loop's), not the busiest. */
Test(speedscope, time_order_and_the_loop_thread_first)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_PYTHON, "main", "/src/train.py", 1);
	uint32_t f = frame(p, FRAME_PYTHON, "forward", "/src/train.py", 30);
	uint32_t b = frame(p, FRAME_PYTHON, "backward", "/src/train.py", 40);
	uint32_t w = frame(p, FRAME_PYTHON, "wait", "/src/launch.py", 9);
	uint32_t s1[] = { m, f }, s2[] = { m, b }, s3[] = { w };
	uint32_t fwd, bwd, launcher;
	struct render_options o = { 0 };
	uint64_t t = 1000000000;
	char *text;

	cr_assert_eq(profile_keep_timeline(p), 0);
	profile_set_thread(p, 100, 1, "MainThread");
	profile_set_thread(p, 100, 2, "launcher");
	fwd = stack(p, s1, 2);
	bwd = stack(p, s2, 2);
	launcher = stack(p, s3, 1);
	/* The loop, thread 1: forward 2, backward 1, forward 1 (10 ms each);
	 * thread 2 waits throughout, 6 samples. */
	uint32_t order[] = { fwd, fwd, bwd, fwd };
	for (int i = 0; i < 4; i++) {
		struct sample s = { .time_ns = t + (uint64_t)i * 10000000, .pid = 100, .tid = 1,
				    .stack = order[i], .weight_ns = 10000000 };

		cr_assert_eq(profile_add_sample(p, &s), 0);
	}
	for (int i = 0; i < 6; i++) {
		struct sample s = { .time_ns = t + (uint64_t)i * 10000000, .pid = 100, .tid = 2,
				    .stack = launcher, .weight_ns = 10000000, .flags = SAMPLE_IDLE };

		cr_assert_eq(profile_add_sample(p, &s), 0);
	}
	o.include_idle = true;
	text = speedscope(p, &o);
	/* Three runs of the loop thread, in time order. */
	cr_assert(strstr(text, "\"weights\":[0.020000000,0.010000000,0.010000000]"), "%s", text);
	cr_assert(strstr(text, "\"activeProfileIndex\":1"), "the busiest: %s", text);
	free(text);
	o.open_pid = 100;
	o.open_tid = 1;
	text = speedscope(p, &o);
	cr_assert(strstr(text, "\"activeProfileIndex\":0"), "the loop's: %s", text);
	free(text);
	profile_free(p);
}
