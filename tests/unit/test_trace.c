// SPDX-License-Identifier: MIT
/* The timeline the model keeps, and the Chrome/Perfetto trace built on it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "formats/profile_hooks.h"
#include "model_helpers.h"

#define MS 1000000ull

static void at(struct profile *p, uint32_t tid, uint32_t stack_id, uint64_t time_ns,
	       uint32_t flags)
{
	struct sample s = { .time_ns = time_ns, .pid = 100, .tid = tid, .stack = stack_id,
			    .weight_ns = MS, .flags = flags };

	cr_assert_eq(profile_add_sample(p, &s), 0);
}

struct spans {
	struct profile_span s[16];
	int n;
};

static int keep_span(const struct profile_span *s, void *ctx)
{
	struct spans *all = ctx;

	cr_assert_lt(all->n, 16);
	all->s[all->n++] = *s;
	return 0;
}

static char *trace(const struct profile *p, const struct render_options *o, int expect)
{
	return written(trace_write, p, o, expect);
}

Test(timeline, spans_merge_touching_samples_and_split_on_change_or_gap)
{
	struct profile *p = profile_new();
	uint32_t a = frame(p, FRAME_NATIVE, "a", "m", 0), b = frame(p, FRAME_NATIVE, "b", "m", 0);
	uint32_t sa[] = { a }, sab[] = { a, b };
	uint32_t s1 = stack(p, sa, 1), s2 = stack(p, sab, 2);
	struct spans all = { .n = 0 };

	cr_assert_not(profile_keeps_timeline(p));
	cr_assert_eq(profile_keep_timeline(p), 0);
	at(p, 1, s1, 10 * MS, 0);
	at(p, 2, s2, 10 * MS, 0); /* another thread in between changes nothing */
	at(p, 1, s1, 11 * MS, 0);
	at(p, 1, s1, 12 * MS, SAMPLE_GIL); /* other flags: a new span */
	at(p, 1, s2, 13 * MS, SAMPLE_GIL);
	at(p, 1, s2, 16 * MS, SAMPLE_GIL); /* two ticks missed: a gap */
	cr_assert_eq(profile_for_each_span(p, keep_span, &all), 0);
	cr_assert_eq(all.n, 5);
	cr_assert_eq(profile_timeline_start_ns(p), 9 * MS);
	/* Threads interleave in the order their spans ended; each thread's
	 * own spans come in order: thread 1's four, then the open ones. */
	cr_assert_eq(all.s[0].tid, 1);
	cr_assert_eq(all.s[0].start_ns, 9 * MS);
	cr_assert_eq(all.s[0].end_ns, 11 * MS);
	cr_assert_eq(all.s[0].count, 2);
	cr_assert_eq(all.s[1].tid, 1);
	cr_assert_eq(all.s[1].flags, SAMPLE_GIL);
	cr_assert_eq(all.s[1].start_ns, 11 * MS);
	cr_assert_eq(all.s[2].stack, s2);
	cr_assert_eq(all.s[2].end_ns, 13 * MS);
	cr_assert_eq(all.s[3].tid, 1);
	cr_assert_eq(all.s[3].start_ns, 15 * MS);
	cr_assert_eq(all.s[4].tid, 2);
	/* Too late once samples were added: the start would be missing. */
	profile_free(p);
	p = profile_new();
	at(p, 1, 0, MS, 0);
	cr_assert_eq(profile_keep_timeline(p), -EBUSY);
	profile_free(p);
}

Test(trace, slices_nest_and_hand_over_where_the_stack_changes)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_NATIVE, "main", "app", 0);
	uint32_t f = frame(p, FRAME_PYTHON, "step", "/src/train.py", 10);
	uint32_t f2 = frame(p, FRAME_PYTHON, "step", "/src/train.py", 11);
	uint32_t l = frame(p, FRAME_PYTHON, "load", "/src/data.py", 3);
	uint32_t s1[] = { m, f }, s2[] = { m, f2 }, s3[] = { m, l };
	struct render_options o = { 0 };
	char *text;

	profile_keep_timeline(p);
	profile_set_meta(p, "command", "python3 train.py");
	profile_set_meta(p, "python_script_dir", "/src");
	profile_set_thread(p, 100, 1, "MainThread");
	at(p, 1, stack(p, s1, 2), 101 * MS, 0);
	at(p, 1, stack(p, s1, 2), 102 * MS, 0);
	at(p, 1, stack(p, s2, 2), 103 * MS, 0); /* another line: the same call */
	at(p, 1, stack(p, s3, 2), 104 * MS, 0);
	at(p, 1, stack(p, s3, 2), 108 * MS, 0); /* a gap: everything closes */
	text = trace(p, &o, 0);
	cr_assert(strstr(text, "{\"ph\":\"M\",\"pid\":100,\"tid\":100,\"name\":\"process_name\","
			       "\"args\":{\"name\":\"python3 train.py\"}}"), "%s", text);
	cr_assert(strstr(text, "\"name\":\"thread_name\",\"args\":{\"name\":\"MainThread\"}"));
	cr_assert(strstr(text, "\"tid\":1,\"ts\":0.000,\"dur\":4000.000,\"name\":\"main\","
			       "\"cat\":\"native\",\"args\":{\"module\":\"app\"}}"), "%s", text);
	/* A child starts its depth in ns after its parent: sorted by start,
	 * as viewers sort, it comes after the parent it is written before. */
	cr_assert(strstr(text, "\"tid\":1,\"ts\":0.001,\"dur\":2999.999,\"name\":\"step (train.py)\","
			       "\"cat\":\"python\",\"args\":{\"file\":\"/src/train.py\",\"line\":10}}"),
		  "%s", text);
	cr_assert(strstr(text, "\"ts\":3000.001,\"dur\":999.999,\"name\":\"load (data.py)\""));
	cr_assert(strstr(text, "\"ts\":7000.000,\"dur\":1000.000,\"name\":\"main\""), "%s", text);
	cr_assert(strstr(text, "\"otherData\":{\n\"command\":\"python3 train.py\""), "%s", text);
	free(text);

	/* Filters apply as in every output. */
	o.tid = 2;
	text = trace(p, &o, 0);
	cr_assert_null(strstr(text, "\"ph\":\"X\""), "%s", text);
	free(text);
	profile_free(p);
}

Test(trace, idle_samples_follow_the_idle_option)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_PYTHON, "wait", "/src/a.py", 1);
	uint32_t i = frame(p, FRAME_IDLE, "[idle: futex]", "", 0);
	uint32_t s1[] = { m, i };
	struct render_options o = { 0 };
	char *text;

	profile_keep_timeline(p);
	at(p, 7, stack(p, s1, 2), 5 * MS, SAMPLE_IDLE);
	text = trace(p, &o, 0);
	cr_assert_null(strstr(text, "[idle: futex]"));
	free(text);
	o.include_idle = true;
	text = trace(p, &o, 0);
	cr_assert(strstr(text, "\"name\":\"[idle: futex]\",\"cat\":\"idle\"}"), "%s", text);
	cr_assert(strstr(text, "\"args\":{\"name\":\"thread 7\"}"), "%s", text);
	free(text);
	profile_free(p);
}

Test(trace, without_times_it_says_why)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_NATIVE, "main", "app", 0);
	struct profile_aggregate row = { .pid = 1, .tid = 1, .stack = stack(p, &m, 1),
					 .weight_ns = MS, .count = 1 };
	char err[160] = "", *text = NULL;
	size_t len = 0;
	FILE *out;

	out = open_memstream(&text, &len);
	cr_assert_eq(trace_write(p, out, NULL, err, sizeof(err)), -EINVAL);
	fclose(out);
	free(text);
	profile_keep_timeline(p);
	/* Rows that were aggregated before they were recorded carry no time. */
	cr_assert_eq(profile_merge_aggregate(p, &row), 0);
	out = open_memstream(&text, &len);
	cr_assert_eq(trace_write(p, out, NULL, err, sizeof(err)), -ENODATA);
	cr_assert(strstr(err, "no sample times"), "%s", err);
	fclose(out);
	free(text);
	profile_free(p);
}

static int span_order(const struct profile_span *s, void *ctx)
{
	uint64_t *last_end = ctx; /* per tid 1 and 2 */

	cr_assert(s->tid == 1 || s->tid == 2);
	cr_assert_geq(s->start_ns, last_end[s->tid - 1], "tid %u", s->tid);
	last_end[s->tid - 1] = s->end_ns;
	last_end[2]++;
	return 0;
}

/* A long run's spans go to a temporary file: every one comes back, each
 * thread's in order, however many there are. */
Test(timeline, many_spans_come_back_in_order_from_disk)
{
	struct profile *p = profile_new();
	uint32_t a = frame(p, FRAME_NATIVE, "a", "m", 0), b = frame(p, FRAME_NATIVE, "b", "m", 0);
	uint32_t s1 = stack(p, &a, 1), s2 = stack(p, &b, 1);
	uint64_t last_end[3] = { 0 };
	const uint32_t n = 50000; /* about 2 MB of spans: several buffers */

	profile_keep_timeline(p);
	for (uint32_t i = 0; i < n; i++) {
		at(p, 1 + i % 2, (i / 2) % 2 ? s1 : s2, (1000 + i / 2) * MS, 0);
	}
	cr_assert_eq(profile_for_each_span(p, span_order, last_end), 0);
	cr_assert_eq(last_end[2], n);
	profile_free(p);
}

static int count_x(const char *text, const char *name)
{
	int n = 0;

	for (const char *s = text; (s = strstr(s, "\"ph\":\"X\"")); s++) {
		const char *end = strchr(s, '}');

		if (!name || (end && memmem(s, (size_t)(end - s), name, strlen(name))))
			n++;
	}
	return n;
}

/* Past --trace-max-slices the shortest slices go, the longest stay and
 * still nest, and the file and the caller are told what went. */
Test(trace, a_limit_leaves_out_the_shortest_slices)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_NATIVE, "main", "app", 0);
	uint32_t l = frame(p, FRAME_NATIVE, "loop", "app", 0);
	uint32_t x = frame(p, FRAME_NATIVE, "x", "app", 0), y = frame(p, FRAME_NATIVE, "y", "app", 0);
	uint32_t sx[] = { m, l, x }, sy[] = { m, l, y }, sm[] = { m };
	uint32_t stx = stack(p, sx, 3), sty = stack(p, sy, 3), stm = stack(p, sm, 1);
	struct render_options o = { .max_slices = 100 };
	char err[256] = "", *text = NULL;
	size_t len = 0;
	FILE *out;

	profile_keep_timeline(p);
	/* 1 s of "loop" with x and y alternating each ms (1000 slices of 1 ms),
	 * then 10 ms in main alone, then 100 ms of loop again. */
	for (uint64_t i = 1; i <= 1000; i++)
		at(p, 1, i % 2 ? stx : sty, i * MS, 0);
	for (uint64_t i = 1001; i <= 1010; i++)
		at(p, 1, stm, i * MS, 0);
	for (uint64_t i = 1011; i <= 1110; i++)
		at(p, 1, i % 2 ? stx : sty, i * MS, 0);
	out = open_memstream(&text, &len);
	cr_assert_eq(trace_write(p, out, &o, err, sizeof(err)), 0, "%s", err);
	fclose(out);
	cr_assert_eq(count_x(text, "\"main\""), 1, "%s", text);
	cr_assert_eq(count_x(text, "\"loop\""), 2);
	cr_assert_eq(count_x(text, NULL), 3);
	cr_assert(strstr(text, "\"slices_left_out\":\"1100 of 1103\""), "%s", text);
	/* The 1 ms slices go: the bound is the next power of two, 2^20 ns. */
	cr_assert(strstr(text, "\"slices_shorter_than_us\":\"1048.576\""), "%s", text);
	cr_assert(strstr(err, "1100 of 1103 slices shorter than 1.049 ms left out"), "%s", err);
	free(text);

	/* Without a limit, all of them, and no note. */
	o.max_slices = 0;
	err[0] = 0;
	text = NULL;
	out = open_memstream(&text, &len);
	cr_assert_eq(trace_write(p, out, &o, err, sizeof(err)), 0, "%s", err);
	fclose(out);
	cr_assert_eq(count_x(text, NULL), 1103);
	cr_assert_null(strstr(text, "slices_left_out"));
	cr_assert_eq(err[0], 0, "%s", err);
	free(text);
	profile_free(p);
}
