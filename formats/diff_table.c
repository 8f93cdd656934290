// SPDX-License-Identifier: MIT
/*
 * The table `diff` prints: per function (a frame's label), its share of
 * each profile's samples, in total (with what it calls, counted once per
 * stack however deep it recurses) and self (as the innermost frame), and
 * the change; the largest changes in total share first. Shares, not
 * counts: two recordings of different lengths compare.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/formats.h"
#include "formats/label_set.h"

struct fn_weights {
	uint64_t total[2], self[2];
	uint64_t seen; /* the last row that counted it in total, + 1 */
};

struct dt {
	const struct profile *p;
	const struct render_options *o;   /* the side's */
	const struct render_options *top; /* the newer's: labels */
	int side;                 /* 0 before, 1 after */
	const char *script_dir;
	struct label_set labels;
	struct fn_weights *fn;
	uint32_t capfn;
	uint32_t *label_of;       /* per frame id of p: label + 1 */
	uint32_t *path, cappath;
	uint64_t rows;            /* rows counted so far, both sides */
	uint64_t all[2];
	uint64_t samples[2];      /* all[] is weight; this the samples it sums */
};

static int fn_of(struct dt *d, uint32_t frame, uint32_t *out)
{
	char buf[LABEL_MAX];
	bool added;
	int ret;

	if (d->label_of[frame]) {
		*out = d->label_of[frame] - 1;
		return 0;
	}
	frame_label(d->p, frame, d->top, d->script_dir, buf, sizeof(buf));
	ret = label_set_intern(&d->labels, buf, out, &added);
	if (ret < 0)
		return ret;
	if (added) {
		if (ARRAY_RESERVE(d->fn, d->capfn, (size_t)*out + 1, 1024) < 0)
			return -ENOMEM;
		memset(&d->fn[*out], 0, sizeof(*d->fn));
	}
	d->label_of[frame] = *out + 1;
	return 0;
}

static int add_row(const struct profile_aggregate *row, void *ctx)
{
	struct dt *d = ctx;
	uint32_t fn = 0;
	int depth, ret;

	if (!render_keeps(d->p, d->o, row))
		return 0;
	depth = profile_stack_frames(d->p, row->stack, &d->path, &d->cappath);
	if (depth < 0)
		return depth;
	d->rows++;
	d->all[d->side] += row->weight_ns;
	d->samples[d->side] += row->count;
	for (int i = 0; i < depth; i++) {
		ret = fn_of(d, d->path[i], &fn);
		if (ret < 0)
			return ret;
		if (d->fn[fn].seen != d->rows) {
			d->fn[fn].seen = d->rows;
			d->fn[fn].total[d->side] += row->weight_ns;
		}
	}
	if (depth)
		d->fn[fn].self[d->side] += row->weight_ns;
	return 0;
}

static int count_side(struct dt *d, const struct profile *p, int side)
{
	int ret;

	d->p = p;
	d->side = side;
	d->o = !side && d->top->baseline ? d->top->baseline : d->top;
	d->script_dir = profile_meta(p, "python_script_dir");
	free(d->label_of);
	d->label_of = calloc((size_t)profile_frame_count(p) + 1, sizeof(*d->label_of));
	if (!d->label_of)
		return -ENOMEM;
	ret = profile_for_each_aggregate(p, add_row, d);
	return ret < 0 ? ret : 0;
}

static double pct(const struct dt *d, const uint64_t *w, int side)
{
	return d->all[side] ? 100.0 * (double)w[side] / (double)d->all[side] : 0;
}

static double total_change(const struct dt *d, uint32_t fn)
{
	return pct(d, d->fn[fn].total, 1) - pct(d, d->fn[fn].total, 0);
}

static double self_change(const struct dt *d, uint32_t fn)
{
	return pct(d, d->fn[fn].self, 1) - pct(d, d->fn[fn].self, 0);
}

static int by_change(const void *a, const void *b, void *ctx)
{
	const struct dt *d = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double dx = fabs(total_change(d, x)), dy = fabs(total_change(d, y));

	if (dx != dy)
		return dx < dy ? 1 : -1;
	dx = fabs(self_change(d, x)), dy = fabs(self_change(d, y));
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(d->labels.text[x], d->labels.text[y]);
}

/* The samples, as "wrote" counts them; their weight in periods (what the
 * shares are of, and what folded lines sum to) where it differs. */
static void put_side(FILE *out, const char *what, const struct profile *p, uint64_t weight,
		     uint64_t samples)
{
	const char *command = profile_meta(p, "command");
	const char *period = profile_meta(p, "period_ns");
	uint64_t per = period ? strtoull(period, NULL, 10) : 0;

	fprintf(out, "%s: %" PRIu64 " samples", what, samples);
	if (per && (weight + per / 2) / per != samples)
		fprintf(out, " weighing %" PRIu64 " sampling periods", (weight + per / 2) / per);
	else if (!per)
		fprintf(out, " (%.3f s)", (double)weight / 1e9);
	fprintf(out, "%s%s\n", command ? ", " : "", command ? command : "");
}

static void write_table(const struct dt *d, FILE *out, const uint32_t *order, uint32_t n,
			unsigned top)
{
	unsigned shown = 0;

	fputs("\n  total share (with callees)     self share\n"
	      "   older   newer  change     older   newer  change   function\n", out);
	for (uint32_t i = 0; i < n && shown < top; i++) {
		uint32_t f = order[i];

		/* Less than a twentieth of a point either way: no change. (Sorted
		 * by total change, a large self change may still follow.) */
		if (fabs(total_change(d, f)) < 0.05 && fabs(self_change(d, f)) < 0.05)
			continue;
		fprintf(out, "  %5.1f%%  %5.1f%%  %+6.1f    %5.1f%%  %5.1f%%  %+6.1f   %s\n",
			pct(d, d->fn[f].total, 0), pct(d, d->fn[f].total, 1), total_change(d, f),
			pct(d, d->fn[f].self, 0), pct(d, d->fn[f].self, 1), self_change(d, f),
			d->labels.text[f]);
		shown++;
	}
	if (!shown)
		fputs("  (no function's share changed by 0.05 points or more)\n", out);
}

int diff_table_write(const struct profile *before, const struct profile *after, FILE *out,
		     const struct render_options *o, unsigned top, char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct dt d = { .top = o ? o : &defaults };
	uint32_t *order = NULL;
	int ret = count_side(&d, before, 0);

	if (!ret)
		ret = count_side(&d, after, 1);
	if (!ret) {
		order = malloc(((size_t)d.labels.count + 1) * sizeof(*order));
		ret = order ? 0 : -ENOMEM;
	}
	if (!ret) {
		for (uint32_t i = 0; i < d.labels.count; i++)
			order[i] = i;
		qsort_r(order, d.labels.count, sizeof(*order), by_change, &d);
		put_side(out, "older", before, d.all[0], d.samples[0]);
		put_side(out, "newer", after, d.all[1], d.samples[1]);
		write_table(&d, out, order, d.labels.count, top);
		if (ferror(out))
			ret = -EIO;
	}
	free(order);
	free(d.fn);
	free(d.label_of);
	free(d.path);
	label_set_free(&d.labels);
	if (ret < 0)
		return errbuf_set(err, errlen, ret, "diff: %s", strerror(-ret));
	return 0;
}
