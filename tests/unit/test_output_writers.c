// SPDX-License-Identifier: MIT
/* The table of outputs: every row findable by each of its names and
 * extensions, no two rows claiming one, listings naming them all, and
 * each row's writer writing what its function writes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formats/formats.h"

#include "model_helpers.h"

#define EACH_ROW(w, i) for (size_t i = 0; ((w) = output_writer_at(i)); i++)
#define EACH_NAME(w, j) for (size_t j = 0; j < OUTPUT_NAMES_MAX && (w)->names[j]; j++)
#define EACH_EXTENSION(w, j) \
	for (size_t j = 0; j < OUTPUT_EXTENSIONS_MAX && (w)->extensions[j]; j++)

static void upper(char *dst, const char *src, size_t len)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < len; i++)
		dst[i] = (char)toupper((unsigned char)src[i]);
	dst[i] = '\0';
}

Test(output_writers, rows_are_whole)
{
	const struct output_writer *w;
	size_t rows = 0, stdout_defaults = 0, record_defaults = 0;

	EACH_ROW(w, i) {
		rows++;
		cr_assert_neq(w->format, OUTPUT_UNKNOWN, "row %zu", i);
		cr_assert(w->name && w->name[0], "row %zu has no name", i);
		cr_assert(w->names[0] && w->names[0][0], "%s has no -f name", w->name);
		cr_assert(w->extensions[0] && w->extensions[0][0], "%s has no extension", w->name);
		/* Rendered at the end, or streamed by the caller: one of the two. */
		cr_assert((w->write != NULL) != w->streams, "%s: a writer, or streamed", w->name);
		cr_assert(!w->diffs || w->write, "%s", w->name);
		stdout_defaults += w->stdout_default;
		record_defaults += w->record_default;
		if (w->stdout_default)
			cr_assert(!w->streams, "%s cannot go to stdout", w->name);
	}
	cr_assert_geq(rows, 6);
	cr_assert_eq(stdout_defaults, 1);
	cr_assert_geq(record_defaults, 1);
	cr_assert_null(output_writer_at(rows));
}

Test(output_writers, names_round_trip)
{
	const struct output_writer *w;
	char name[64];

	EACH_ROW(w, i) {
		cr_assert_eq(output_writer_of(w->format), w, "%s", w->name);
		EACH_NAME(w, j) {
			cr_assert_eq(output_writer_by_name(w->names[j]), w, "-f %s", w->names[j]);
			upper(name, w->names[j], sizeof(name));
			cr_assert_eq(output_writer_by_name(name), w, "-f %s", name);
		}
	}
	cr_assert_null(output_writer_of(OUTPUT_UNKNOWN));
	cr_assert_null(output_writer_by_name(NULL));
	cr_assert_null(output_writer_by_name("svg "));
}

Test(output_writers, extensions_round_trip)
{
	const struct output_writer *w;
	char path[256], ext[64];

	EACH_ROW(w, i) {
		EACH_EXTENSION(w, j) {
			const char *e = w->extensions[j];

			cr_assert_neq(e[0], '.', "%s: extensions go without their dot", e);
			snprintf(path, sizeof(path), "out.%s", e);
			cr_assert_eq(output_writer_by_path(path), w, "%s", path);
			snprintf(path, sizeof(path), "/tmp/a.b/run.1.%s", e);
			cr_assert_eq(output_writer_by_path(path), w, "%s", path);
			upper(ext, e, sizeof(ext));
			snprintf(path, sizeof(path), "OUT.%s", ext);
			cr_assert_eq(output_writer_by_path(path), w, "%s", path);
			/* A hidden file, a bare name, a directory: no extension
			 * (but a row that names files takes the first two). */
			snprintf(path, sizeof(path), ".%s", e);
			if (w->names_files && !j) {
				cr_assert_eq(output_writer_by_path(path), w, "%s", path);
				cr_assert_eq(output_writer_by_path(e), w, "%s", e);
			} else {
				cr_assert_null(output_writer_by_path(path), "%s", path);
				cr_assert_null(output_writer_by_path(e), "%s", e);
			}
			snprintf(path, sizeof(path), "x.%s/out", e);
			cr_assert_null(output_writer_by_path(path), "%s", path);
			snprintf(path, sizeof(path), "x.%s.bak", e);
			cr_assert_null(output_writer_by_path(path), "%s", path);
		}
	}
}

Test(output_writers, two_part_extensions)
{
	cr_assert_eq(output_writer_by_path("a.speedscope.json"), output_writer_of(OUTPUT_SPEEDSCOPE));
	cr_assert_eq(output_writer_by_path("a.trace.json"), output_writer_of(OUTPUT_TRACE));
	cr_assert_eq(output_writer_by_path("a.pb.gz"), output_writer_of(OUTPUT_PPROF));
	cr_assert_eq(output_writer_by_path("a.Trace.JSON"), output_writer_of(OUTPUT_TRACE));
	cr_assert_null(output_writer_by_path("a.json"));
	cr_assert_null(output_writer_by_path("a.gz"));
	cr_assert_null(output_writer_by_path("speedscope.json"));
	cr_assert_null(output_writer_by_path("a.speedscope.json.gz"));
	cr_assert_null(output_writer_by_path(NULL));
}

Test(output_writers, no_two_rows_claim_a_name_or_extension)
{
	const struct output_writer *a, *b;

	EACH_ROW(a, i) {
		EACH_ROW(b, k) {
			if (k < i)
				continue;
			if (k > i)
				cr_assert_neq(a->format, b->format, "%s and %s", a->name, b->name);
			EACH_NAME(a, j) {
				EACH_NAME(b, l) {
					if (k == i && l == j)
						continue;
					cr_assert(strcasecmp(a->names[j], b->names[l]),
						  "-f %s is claimed twice", a->names[j]);
				}
			}
			EACH_EXTENSION(a, j) {
				EACH_EXTENSION(b, l) {
					if (k == i && l == j)
						continue;
					cr_assert(strcasecmp(a->extensions[j], b->extensions[l]),
						  ".%s is claimed twice", a->extensions[j]);
				}
			}
		}
	}
}

/* Whether list has item as a whole item (between separators). */
static bool listed(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *at = strstr(list, item); at; at = strstr(at + 1, item))
		if ((at == list || at[-1] == ' ' || at[-1] == '|') &&
		    (!at[n] || at[n] == ',' || at[n] == ' ' || at[n] == '|'))
			return true;
	return false;
}

Test(output_writers, listings_name_every_row)
{
	const struct output_writer *w;
	char names[512], extensions[512], dotted[64];

	cr_assert_lt(output_writers_list(names, sizeof(names), false, ", ", " or "), sizeof(names));
	cr_assert_lt(output_writers_list(extensions, sizeof(extensions), true, ", ", " or "),
		     sizeof(extensions));
	EACH_ROW(w, i) {
		cr_assert(listed(names, w->names[0]), "%s not in '%s'", w->names[0], names);
		EACH_EXTENSION(w, j) {
			snprintf(dotted, sizeof(dotted), ".%s", w->extensions[j]);
			cr_assert(listed(extensions, dotted), "%s not in '%s'", dotted, extensions);
		}
	}
	/* The separators: sep between, last before the last. */
	cr_assert_not_null(strstr(names, ", "));
	cr_assert_not_null(strstr(names, " or "));
	cr_assert_null(strstr(strstr(names, " or ") + 1, ", "), "%s", names);
	output_writers_list(names, sizeof(names), false, "|", "|");
	cr_assert_null(strchr(names, ' '), "%s", names);
	cr_assert_eq(names[0], output_writer_at(0)->names[0][0]);
}

Test(output_writers, listing_cut_to_its_buffer)
{
	char whole[512], cut[8];
	size_t n = output_writers_list(whole, sizeof(whole), true, ", ", " or ");

	cr_assert_eq(output_writers_list(cut, sizeof(cut), true, ", ", " or "), n);
	cr_assert_eq(strlen(cut), sizeof(cut) - 1);
	cr_assert_eq(strncmp(cut, whole, sizeof(cut) - 1), 0);
	cr_assert_eq(output_writers_list(NULL, 0, false, ", ", " or "),
		     output_writers_list(whole, sizeof(whole), false, ", ", " or "));
}

/* A small profile with a timeline, so that every writer has something. */
static struct profile *small_profile(void)
{
	struct profile *p = profile_new();
	uint32_t f[3];

	cr_assert_eq(profile_keep_timeline(p), 0);
	cr_assert_eq(profile_set_meta(p, "period_ns", "10000000"), 0);
	cr_assert_eq(profile_set_thread(p, 100, 101, "main"), 0);
	f[0] = frame(p, FRAME_NATIVE, "main", "app", 0);
	f[1] = frame(p, FRAME_PYTHON, "step", "train.py", 12);
	f[2] = frame(p, FRAME_PYTHON, "forward", "model.py", 40);
	samples(p, 101, stack(p, f, 3), 5, 10000000, 0);
	samples(p, 101, stack(p, f, 2), 3, 10000000, 0);
	return p;
}

static char *job_written(const struct output_writer *w, const struct output_job *job)
{
	struct output_job j = *job;
	char err[160] = "", *text = NULL;
	size_t len = 0;

	j.file = open_memstream(&text, &len);
	cr_assert(j.file);
	cr_assert_eq(w->write(&j, err, sizeof(err)), 0, "%s: %s", w->name, err);
	cr_assert_eq(fclose(j.file), 0);
	return text;
}

static void same_output(enum output_format f,
			int (*write)(const struct profile *, FILE *, const struct render_options *,
				     char *, size_t),
			const struct profile *p, const struct render_options *o)
{
	const struct output_writer *w = output_writer_of(f);
	struct output_job job = { .profile = p, .options = o };
	char *direct = written(write, p, o, 0), *tabled = job_written(w, &job);

	cr_assert_str_eq(tabled, direct, "%s", w->name);
	free(direct);
	free(tabled);
}

static int summary_hook(void *ctx, FILE *out)
{
	fprintf(out, "{\"from\": \"%s\"}\n", (const char *)ctx);
	return 0;
}

/* summary.json is analysis/'s: the row writes what cli/'s hook gives, and
 * refuses without one. */
static void summary_through_hook(const struct profile *p)
{
	const struct output_writer *w = output_writer_of(OUTPUT_SUMMARY);
	struct render_options o = { .summary = summary_hook, .summary_ctx = "the hook" };
	struct output_job job = { .profile = p, .options = &o };
	char *text = job_written(w, &job), err[160] = "";

	cr_assert_str_eq(text, "{\"from\": \"the hook\"}\n");
	free(text);
	o.summary = NULL;
	job.file = stdout;
	cr_assert_eq(w->write(&job, err, sizeof(err)), -ENOTSUP);
	cr_assert_str_eq(err, "no summary can be made here");
	cr_assert(w->needs_timeline);
	cr_assert_eq(output_writer_by_path("run.summary.json"), w);
	/* the name a person types for it (issue 29) */
	cr_assert_eq(output_writer_by_path("summary.json"), w);
	cr_assert_eq(output_writer_by_path("out/SUMMARY.json"), w);
	cr_assert_eq(output_writer_by_path("run1_summary.json"), w);
	/* only this row: other names keep needing their stem */
	cr_assert_null(output_writer_by_path("trace.json"));
	cr_assert_null(output_writer_by_path("x.json"));
	cr_assert_null(output_writer_by_path("summary.json/out"));
}

Test(output_writers, each_row_writes_what_its_writer_does)
{
	struct profile *p = small_profile();
	struct render_options o = { .include_idle = true };
	const struct output_writer *w;
	size_t checked = 0;

	same_output(OUTPUT_FOLDED, folded_write, p, &o);
	same_output(OUTPUT_SVG, flamegraph_write, p, &o);
	same_output(OUTPUT_SPEEDSCOPE, speedscope_write, p, &o);
	same_output(OUTPUT_PPROF, pprof_write, p, &o);
	same_output(OUTPUT_TRACE, trace_write, p, &o);
	summary_through_hook(p);
	/* A row without a check here would be a writer no test has run. */
	EACH_ROW(w, i)
		checked += w->write != NULL;
	cr_assert_eq(checked, 6, "a new writer: add it above");
	profile_free(p);
}

Test(output_writers, diff_rows_draw_the_baseline)
{
	struct profile *before = small_profile(), *after = small_profile();
	struct render_options o = { .include_idle = true };
	const struct output_writer *w;

	EACH_ROW(w, i) {
		struct output_job job = { .profile = after, .baseline = before, .options = &o };
		char *text, *direct = NULL;
		size_t len = 0;
		FILE *out;
		char err[160] = "";

		if (!w->diffs)
			continue;
		cr_assert_eq(w->format, OUTPUT_SVG, "a new diff output: check it here");
		text = job_written(w, &job);
		out = open_memstream(&direct, &len);
		cr_assert_eq(flamegraph_diff_write(before, after, out, &o, err, sizeof(err)), 0, "%s",
			     err);
		cr_assert_eq(fclose(out), 0);
		cr_assert_str_eq(text, direct);
		free(text);
		free(direct);
	}
	profile_free(before);
	profile_free(after);
}
