// SPDX-License-Identifier: MIT
/* The differential flamegraph and the table of changes, on built models. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/flamegraph_script.h"
#include "formats/formats.h"
#include "model_helpers.h"

#define MS 1000000ull

/* main -> step -> {heavy, light} with the given sample counts, plus
 * `extra` samples in main -> fresh (a function only one side has). */
static struct profile *mix(int heavy, int light, int extra)
{
	struct profile *p = profile_new();
	uint32_t m = frame(p, FRAME_PYTHON, "<module>", "/src/mix.py", 1);
	uint32_t s = frame(p, FRAME_PYTHON, "step", "/src/mix.py", 20);
	uint32_t h = frame(p, FRAME_PYTHON, "heavy", "/src/mix.py", 10);
	uint32_t l = frame(p, FRAME_PYTHON, "light", "/src/mix.py", 14);
	uint32_t f = frame(p, FRAME_PYTHON, "fresh", "/src/mix.py", 30);
	uint32_t sh[] = { m, s, h }, sl[] = { m, s, l }, sf[] = { m, f };

	profile_set_meta(p, "python_script_dir", "/src");
	profile_set_meta(p, "period_ns", "1000000");
	samples(p, 1, stack(p, sh, 3), heavy, MS, 0);
	samples(p, 1, stack(p, sl, 3), light, MS, 0);
	samples(p, 1, stack(p, sf, 2), extra, MS, 0);
	return p;
}

static char *render(const struct profile *a, const struct profile *b, bool table)
{
	struct render_options o = { .by_function = true }; /* as diff's command line */
	char err[128] = "", *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cr_assert(out);
	if (table)
		cr_assert_eq(diff_table_write(a, b, out, &o, 20, err, sizeof(err)), 0, "%s", err);
	else
		cr_assert_eq(flamegraph_diff_write(a, b, out, &o, err, sizeof(err)), 0, "%s", err);
	fclose(out);
	return text;
}

/* The fill of the frame whose tooltip begins with `label`. */
static void fill_of(const char *svg, const char *label, int *r, int *g, int *b)
{
	char key[128];
	const char *at;

	snprintf(key, sizeof(key), "<title>%s\n", label);
	at = strstr(svg, key);
	cr_assert(at, "no frame %s", label);
	at = strstr(at, "fill=\"rgb(");
	cr_assert(at);
	cr_assert_eq(sscanf(at, "fill=\"rgb(%d,%d,%d)", r, g, b), 3);
}

Test(diff, colours_follow_the_change_in_share_widths_the_newer_profile)
{
	/* heavy 25% -> 75%, light 75% -> 25% of each profile's samples; the
	 * newer profile has twice the samples, which shares do not see. */
	struct profile *before = mix(25, 75, 0), *after = mix(120, 40, 40);
	char *svg = render(before, after, false);
	int r, g, b;

	fill_of(svg, "heavy (mix.py)", &r, &g, &b);
	cr_assert(r > 200 && g < 150 && b < 150, "heavy grew: rgb(%d,%d,%d)", r, g, b);
	fill_of(svg, "light (mix.py)", &r, &g, &b);
	cr_assert(b > 200 && r < 200 && g < 200, "light shrank: rgb(%d,%d,%d)", r, g, b);
	fill_of(svg, "fresh (mix.py)", &r, &g, &b);
	cr_assert(r > 200 && g < 200 && b < 200, "fresh is new: rgb(%d,%d,%d)", r, g, b);
	cr_assert(strstr(svg, "<title>heavy (mix.py)\n120 samples, 60.00% (was 25.00%: +35.00 points)"),
		  "%s", svg);
	cr_assert(strstr(svg, "<title>fresh (mix.py)\n40 samples, 20.00% (new: not in the older"));
	/* <module> holds everything on both sides: unchanged, near white. */
	fill_of(svg, "&lt;module&gt; (mix.py)", &r, &g, &b);
	cr_assert(r > 240 && g > 240 && b > 235, "<module>: rgb(%d,%d,%d)", r, g, b);
	cr_assert(strstr(svg, "data-total=\"200000000\""), "widths from the newer profile");
	/* The page of every flamegraph: the whole script, which opens on the
	 * frames of depth 0, and such frames. */
	cr_assert(strstr(flamegraph_script, "showRoots();") && strstr(svg, flamegraph_script));
	cr_assert(strstr(svg, "data-d=\"0\""));
	free(svg);
	profile_free(before);
	profile_free(after);
}

Test(diff, table_lists_the_largest_changes_first)
{
	struct profile *before = mix(25, 75, 0), *after = mix(120, 40, 40);
	char *text = render(before, after, true), *heavy, *light, *fresh, *step;

	cr_assert(strstr(text, "older: 100 samples\nnewer: 200 samples\n"), "%s", text);
	free(text);
	/* Samples that stood for two periods each (missed ticks): the count is
	 * of samples, as "wrote" says; the weight is named apart (issue 29). */
	{
		struct profile *slow = profile_new();
		uint32_t m = frame(slow, FRAME_PYTHON, "<module>", "/src/mix.py", 1);

		profile_set_meta(slow, "period_ns", "1000000");
		samples(slow, 1, stack(slow, &m, 1), 50, 2 * MS, 0);
		text = render(before, slow, true);
		cr_assert(strstr(text, "newer: 50 samples weighing 100 sampling periods\n"), "%s", text);
		free(text);
		profile_free(slow);
	}
	text = render(before, after, true);
	heavy = strstr(text, "   25.0%   60.0%   +35.0     25.0%   60.0%   +35.0   heavy (mix.py)\n");
	light = strstr(text, "   75.0%   20.0%   -55.0     75.0%   20.0%   -55.0   light (mix.py)\n");
	fresh = strstr(text, "    0.0%   20.0%   +20.0      0.0%   20.0%   +20.0   fresh (mix.py)\n");
	step = strstr(text, "step (mix.py)");
	cr_assert(heavy && light && fresh && step, "%s", text);
	cr_assert(light < heavy && heavy < fresh && fresh < step, "%s", text);
	/* <module> is 100% on both sides: not a change. */
	cr_assert_null(strstr(text, "<module>"), "%s", text);
	free(text);

	/* The same profile twice: nothing changed. */
	text = render(before, before, true);
	cr_assert(strstr(text, "no function's share changed"), "%s", text);
	free(text);
	profile_free(before);
	profile_free(after);
}
