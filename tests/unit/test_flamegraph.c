// SPDX-License-Identifier: MIT
/* The flamegraph SVG on models built by hand: its frames, their widths and
 * places, filters, escaping, and the frames too narrow to be written. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "model_helpers.h"

static char *svg(const struct profile *p, const struct render_options *o)
{
	return written(flamegraph_write, p, o, 0);
}

static int count(const char *text, const char *what)
{
	int n = 0;

	for (const char *at = strstr(text, what); at; at = strstr(at + 1, what))
		n++;
	return n;
}

/* The <g> of the frame whose title starts with label, or NULL. */
static const char *frame_of(const char *text, const char *label)
{
	char key[256];

	snprintf(key, sizeof(key), "<title>%s\n", label);
	return strstr(text, key);
}

static double attr(const char *g, const char *name)
{
	char key[64];
	const char *at;

	snprintf(key, sizeof(key), " %s=\"", name);
	at = strstr(g, key);
	cr_assert(at, "no %s in %.200s", name, g);
	return strtod(at + strlen(key), NULL);
}

/* main -> train (2/3: forward, 1/3: idle wait), loader thread (GIL). */
static struct profile *model(void)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_NATIVE, "main", "app", 0);
	uint32_t t = frame(p, FRAME_PYTHON, "Trainer.step", "/src/train.py", 12);
	uint32_t f = frame(p, FRAME_PYTHON, "forward", "/src/train.py", 30);
	uint32_t w = frame(p, FRAME_IDLE, "[idle: futex]", "", 0);
	uint32_t l = frame(p, FRAME_PYTHON, "load<&>\"x\"", "/src/data.py", 5);
	uint32_t s1[] = { m, t, f }, s2[] = { m, t, w }, s3[] = { m, l };

	cr_assert(p);
	profile_set_meta(p, "command", "python3 train.py --lr=1e-3 <run>");
	profile_set_meta(p, "period_ns", "10000000");
	profile_set_meta(p, "rate_hz", "100");
	profile_set_meta(p, "python_script_dir", "/src");
	samples(p, 1, stack(p, s1, 3), 200, 10000000, 0);
	samples(p, 1, stack(p, s2, 3), 100, 10000000, SAMPLE_IDLE);
	samples(p, 2, stack(p, s3, 2), 100, 10000000, SAMPLE_GIL);
	return p;
}

Test(flamegraph, frames_widths_and_places)
{
	struct profile *p = model();
	struct render_options o = { .include_idle = true };
	char *text = svg(p, &o);
	const char *root = frame_of(text, "main"), *step = frame_of(text, "Trainer.step (train.py:12)");
	const char *fwd = frame_of(text, "forward (train.py:30)"), *idle = frame_of(text, "[idle: futex]");

	cr_assert(strstr(text, "<svg "), "not an SVG");
	cr_assert(strstr(text, "</svg>\n"), "not closed");
	cr_assert_eq(count(text, "<g class=\"f\""), 5);
	cr_assert(root && step && fwd && idle);
	/* main has every sample: the whole width; step 3/4 of it; forward 1/2. */
	cr_assert_float_eq(attr(root, "width"), 1180.0, 0.01);
	cr_assert_float_eq(attr(step, "width"), 885.0, 0.01);
	cr_assert_float_eq(attr(fwd, "width"), 590.0, 0.01);
	/* Counts and shares in the tooltip. */
	cr_assert(strstr(text, "<title>main\n400 samples, 100.00%</title>"));
	cr_assert(strstr(text, "<title>forward (train.py:30)\n200 samples, 50.00%</title>"));
	/* Callers below their callees. */
	cr_assert_gt(attr(root, "y"), attr(step, "y"));
	cr_assert_gt(attr(step, "y"), attr(fwd, "y"));
	/* Kinds have their colours: Python green, idle blue, native orange. */
	cr_assert(strstr(fwd, "fill=\"rgb(") && attr(fwd, "height") > 0);
	/* Everything the user typed or the target named is escaped. */
	cr_assert(strstr(text, "python3 train.py --lr=1e-3 &lt;run&gt;"));
	cr_assert(strstr(text, "load&lt;&amp;&gt;&quot;x&quot; (data.py:5)"));
	cr_assert_null(strstr(text, "load<&>"));
	/* The script and style travel inside. */
	cr_assert(strstr(text, "<script type=\"text/ecmascript\"><![CDATA["));
	cr_assert(strstr(text, "function zoom(g)"));
	/* Nothing is fetched: the only URL is the SVG namespace. */
	cr_assert_eq(count(text, "http"), 1);
	free(text);
	profile_free(p);
}

Test(flamegraph, filters_inverted_and_threads)
{
	struct profile *p = model();
	struct render_options o = { 0 };
	char *text = svg(p, &o);

	/* Without idle samples the wait is gone and shares are of 300. */
	cr_assert_null(frame_of(text, "[idle: futex]"));
	cr_assert(strstr(text, "<title>main\n300 samples, 100.00%</title>"));
	free(text);

	o = (struct render_options){ .include_idle = true, .gil_only = true };
	text = svg(p, &o);
	cr_assert_eq(count(text, "<g class=\"f\""), 2, "%s", text);
	cr_assert(frame_of(text, "load&lt;&amp;&gt;&quot;x&quot; (data.py:5)"));
	free(text);

	o = (struct render_options){ .include_idle = true, .inverted = true, .threads = true };
	text = svg(p, &o);
	{
		const char *thread = frame_of(text, "thread 1");
		const char *fwd = frame_of(text, "forward (train.py:30)");

		cr_assert(thread && fwd);
		/* An icicle: the outermost frame on top. */
		cr_assert_lt(attr(thread, "y"), attr(fwd, "y"));
		cr_assert(frame_of(text, "thread 2"));
	}
	free(text);
	profile_free(p);
}

Test(flamegraph, frames_too_narrow_are_not_written)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_NATIVE, "main", "app", 0);
	uint32_t big = frame(p, FRAME_NATIVE, "big", "app", 0);
	uint32_t tiny = frame(p, FRAME_NATIVE, "tiny", "app", 0);
	uint32_t below = frame(p, FRAME_NATIVE, "below_tiny", "app", 0);
	uint32_t s1[] = { m, big }, s2[] = { m, tiny, below };
	struct render_options o = { 0 };
	char *text;

	/* 1 sample in 100000: 0.0118 px, under the 0.1 px minimum. */
	samples(p, 1, stack(p, s1, 2), 1, 100000, 0);
	samples(p, 1, stack(p, s2, 3), 1, 1, 0);
	text = svg(p, &o);
	cr_assert(frame_of(text, "big"));
	cr_assert_null(frame_of(text, "tiny"));
	cr_assert_null(frame_of(text, "below_tiny"));
	free(text);
	profile_free(p);
}

Test(flamegraph, bytes_that_are_not_utf8_are_replaced)
{
	struct profile *p = profile_new();
	uint32_t f = frame(p, FRAME_NATIVE, "bad\xff\xfe name \xed\xa0\x80 \x01 ok\xc3\xa9", "app", 0);
	uint32_t s1[] = { f };
	char *text;

	samples(p, 1, stack(p, s1, 1), 1, 1, 0);
	text = svg(p, NULL);
	cr_assert(strstr(text, "<title>bad\xef\xbf\xbd\xef\xbf\xbd name "
			       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd   ok\xc3\xa9\n"), "%s",
		  strstr(text, "<title>"));
	free(text);
	profile_free(p);
}

Test(flamegraph, an_empty_profile_is_a_valid_page)
{
	struct profile *p = profile_new();
	char *text = svg(p, NULL);

	cr_assert(strstr(text, "<svg ") && strstr(text, "</svg>\n"));
	cr_assert_eq(count(text, "<g class=\"f\""), 0);
	free(text);
	profile_free(p);
}
