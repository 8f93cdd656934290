// SPDX-License-Identifier: MIT
/*
 * Folded stacks ("root;...;leaf COUNT", one line per distinct stack), the
 * input of flamegraph.pl, inferno and speedscope's importer. With a period
 * (every recording has one) COUNT is a weight in sampling periods, not a
 * number of samples: a sample stands for the time since its thread's
 * previous one, so where ticks were missed the lines sum to more than the
 * samples taken; the writer leaves a note saying both then.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/formats.h"

struct folded_line {
	char *text;
	uint64_t weight_ns;
	uint64_t count;
};

struct text {
	char *s; /* NUL-terminated */
	size_t len, cap;
};

struct folded_builder {
	const struct profile *p;
	const struct render_options *o;
	struct folded_line *lines;
	size_t count, cap;
	uint32_t *path; /* frame ids, outermost first */
	uint32_t path_cap;
	struct text text;
	const char *script_dir;
};

static int text_put(struct text *t, const char *s, size_t n)
{
	if (ARRAY_RESERVE(t->s, t->cap, t->len + n + 1, 256))
		return -ENOMEM;
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
	return 0;
}

static int put_frame(struct text *t, const struct profile *p,
		     const struct render_options *o, const char *script_dir, uint32_t id)
{
	char label[LABEL_MAX];
	size_t n = frame_label(p, id, o, script_dir, label, sizeof(label));

	return text_put(t, label, n);
}

static int put_thread(struct text *t, const struct profile *p,
		      const struct profile_aggregate *row)
{
	char label[LABEL_MAX];
	size_t n = thread_label(p, row->pid, row->tid, label, sizeof(label));
	int err = text_put(t, label, n);

	return err ? err : text_put(t, ";", 1);
}

static int put_process(struct text *t, const struct profile *p,
		       const struct profile_aggregate *row)
{
	char label[LABEL_MAX];
	size_t n = process_root_label(p, row->pid, label, sizeof(label));
	int err;

	/* A root frame: no ';' inside it, whatever the command line held. */
	for (size_t i = 0; i < n; i++)
		if (label[i] == ';')
			label[i] = ',';
	err = text_put(t, label, n);
	return err ? err : text_put(t, ";", 1);
}

static int put_stack(struct folded_builder *b, uint32_t stack)
{
	int depth = profile_stack_frames(b->p, stack, &b->path, &b->path_cap), err = 0;

	if (depth < 0)
		return depth;
	if (!depth)
		return text_put(&b->text, "[unknown]", 9);
	for (int i = 0; i < depth && !err; i++) {
		if (i)
			err = text_put(&b->text, ";", 1);
		if (!err)
			err = put_frame(&b->text, b->p, b->o, b->script_dir, b->path[i]);
	}
	return err;
}

static int add_line(const struct profile_aggregate *row, void *ctx)
{
	struct folded_builder *b = ctx;
	struct render_options gpu_rows;
	struct folded_line *line;
	bool gpu_line = false;
	int err = 0;

	/* CPU pictures carry the GPU's time too, under a root of its own. */
	if (row->flags & SAMPLE_GPU && !b->o->gpu) {
		gpu_rows = *b->o;
		gpu_rows.gpu = true;
		if (!render_keeps(b->p, &gpu_rows, row))
			return 0;
		gpu_line = true;
	} else if (!render_keeps(b->p, b->o, row)) {
		return 0;
	}
	b->text.len = 0;
	if (gpu_line)
		err = text_put(&b->text, "[gpu];", 6);
	if (!err && b->o->processes)
		err = put_process(&b->text, b->p, row);
	if (!err && b->o->threads)
		err = put_thread(&b->text, b->p, row);
	if (!err && b->o->class_root) {
		char label[128];
		size_t n = class_root_label(b->o, row, label, sizeof(label));

		err = n ? text_put(&b->text, label, n) : 0;
		if (!err && n)
			err = text_put(&b->text, ";", 1);
	}
	if (!err)
		err = put_stack(b, row->stack);
	if (err)
		return err;
	if (ARRAY_RESERVE(b->lines, b->cap, b->count + 1, 64) < 0)
		return -ENOMEM;
	line = &b->lines[b->count];
	line->text = strdup(b->text.s);
	if (!line->text)
		return -ENOMEM;
	line->weight_ns = row->weight_ns;
	line->count = row->count;
	b->count++;
	return 0;
}

static int compare_lines(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	return strcmp(x->text, y->text);
}

/* The sampling period from meta "period_ns"; 0 when there is none. */
static int parse_period(const struct profile *p, uint64_t *period,
			char *err, size_t errlen)
{
	const char *s = profile_meta(p, "period_ns");
	char *end;

	*period = 0;
	if (!s)
		return 0;
	errno = 0;
	*period = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno || !*period)
		return errbuf_set(err, errlen, -EINVAL,
				  "folded: meta period_ns \"%.40s\" is not a "
				  "positive integer",
				  s);
	return 0;
}

/* round(weight / period), halves up, never below 1; the plain count when
 * there is no period. */
static uint64_t weighted_count(const struct folded_line *l, uint64_t period)
{
	uint64_t q, r;

	if (!period)
		return l->count;
	q = l->weight_ns / period;
	r = l->weight_ns % period;
	if (r >= period - r)
		q++;
	return q ? q : 1;
}

static int print_lines(struct folded_builder *b, FILE *out, uint64_t period,
		       uint64_t *printed, uint64_t *samples)
{
	for (size_t i = 0; i < b->count;) {
		struct folded_line sum = b->lines[i];
		size_t j = i + 1;

		for (; j < b->count && !strcmp(b->lines[j].text, sum.text);
		     j++) {
			sum.weight_ns += b->lines[j].weight_ns;
			sum.count += b->lines[j].count;
		}
		*printed += weighted_count(&sum, period);
		*samples += sum.count;
		if (fprintf(out, "%s %" PRIu64 "\n", sum.text,
			    weighted_count(&sum, period)) < 0)
			return errno ? -errno : -EIO; /* ENOSPC says more than EIO */
		i = j;
	}
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

static void builder_free(struct folded_builder *b)
{
	for (size_t i = 0; i < b->count; i++)
		free(b->lines[i].text);
	free(b->lines);
	free(b->path);
	free(b->text.s);
}

int folded_write(const struct profile *p, FILE *out,
		 const struct render_options *o, char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct folded_builder b = { .p = p, .o = o ? o : &defaults };
	uint64_t period, printed = 0, samples = 0;
	int ret;

	if (!p || !out)
		return errbuf_set(err, errlen, -EINVAL,
				  "folded: bad arguments");
	b.script_dir = profile_meta(p, "python_script_dir");
	ret = parse_period(p, &period, err, errlen);
	if (ret)
		return ret;
	ret = render_for_each_row(p, b.o, add_line, &b);
	if (ret) {
		builder_free(&b);
		return errbuf_set(err, errlen, ret, "folded: %s",
				  strerror(-ret));
	}
	array_sort(b.lines, b.count, sizeof(*b.lines), compare_lines);
	ret = print_lines(&b, out, period, &printed, &samples);
	builder_free(&b);
	if (ret)
		return errbuf_set(err, errlen, ret,
				  "folded: cannot write the output: %s", strerror(-ret));
	/* The sum a reader adds up is not the count "wrote" announced: say
	 * which is which (a note: success, with a message). */
	if (period && printed != samples && err && errlen)
		snprintf(err, errlen,
			 "its counts are weights in %.3g ms sampling periods, %" PRIu64
			 " in all for %" PRIu64 " samples (a sample stands for the time since "
			 "its thread's previous one, longer where ticks were missed)",
			 (double)period / 1e6, printed, samples);
	return 0;
}
