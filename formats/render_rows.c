// SPDX-License-Identifier: MIT
/*
 * The rows a grouped or filtered picture draws (--group-by phase, --phase
 * NAME): a row's class comes from its stack, but where the timeline
 * tells more, parts of the row are classed by time. A loop thread's
 * samples before its first step (render_options.step_marks) are a part
 * flagged SAMPLE_BEFORE_STEPS, "startup" (imports, the model built, the
 * first batch) as the summary's phases have it, whatever its frames; a
 * span whose class (span_class: a validation pass's forward and data
 * waits are eval) is not its row's is a part carrying that class in
 * SAMPLE_CLASS_SET's bits.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/common.h"
#include "formats/formats.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* A part of a row: its samples of one class (-1: before the first step). */
struct part_row {
	uint32_t pid, tid, stack, flags;
	int cls;
	uint64_t weight_ns, count;
};

struct parts {
	const struct render_options *o;
	struct part_row *v;
	size_t n, cap;
	int (*fn)(const struct profile_aggregate *row, void *ctx);
	void *ctx;
};

static int by_row(const void *a, const void *b)
{
	const struct part_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

static int by_part(const void *a, const void *b)
{
	const struct part_row *x = a, *y = b;
	int c = by_row(a, b);

	return c ? c : (x->cls > y->cls) - (x->cls < y->cls);
}

/* The thread's first step's start; 0 when it has no step marked. */
static uint64_t first_step_ns(const struct render_options *o, uint32_t pid, uint32_t tid)
{
	uint64_t first = 0;

	for (size_t i = 0; i < o->nstep_marks; i++) {
		const struct step_mark *m = &o->step_marks[i];

		if (m->pid == pid && m->tid == tid && (!first || m->time_ns < first))
			first = m->time_ns;
	}
	return first;
}

static int add_span(const struct profile_span *span, void *ctx)
{
	struct parts *b = ctx;
	const struct render_options *o = b->o;
	struct profile_aggregate row = { span->pid, span->tid, span->stack, span->flags, 0, 0 };
	uint64_t first;
	int cls;

	if (span->flags & SAMPLE_GPU)
		return 0;
	first = first_step_ns(o, span->pid, span->tid);
	if (first && span->start_ns < first) {
		cls = -1;
	} else if (o->span_class) {
		cls = o->span_class(o->row_class_ctx, span);
		if (cls < 0 || cls > SAMPLE_CLASS_MAX || cls == o->row_class(o->row_class_ctx, &row))
			return 0;
	} else {
		return 0;
	}
	if (ARRAY_RESERVE(b->v, b->cap, b->n + 1, 256) < 0)
		return -ENOMEM;
	b->v[b->n++] = (struct part_row){ span->pid, span->tid, span->stack, span->flags, cls,
					  span->end_ns - span->start_ns, span->count };
	return 0;
}

static int split_row(const struct profile_aggregate *row, void *ctx)
{
	struct parts *b = ctx;
	struct part_row key = { row->pid, row->tid, row->stack, row->flags, 0, 0, 0 };
	size_t lo = 0, hi = b->n;
	struct profile_aggregate rest = *row;
	int ret = 0;

	/* the first part of this row */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (by_row(&b->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Spans and aggregates weigh the same samples: each part, then the
	 * rest in the row's own class. */
	for (; !ret && lo < b->n && !by_row(&b->v[lo], &key) && rest.weight_ns; lo++) {
		struct profile_aggregate part = *row;
		const struct part_row *h = &b->v[lo];

		part.flags |= h->cls < 0 ? SAMPLE_BEFORE_STEPS :
					   SAMPLE_CLASS_SET | (uint32_t)h->cls << SAMPLE_CLASS_SHIFT;
		part.weight_ns = min_u64(h->weight_ns, rest.weight_ns);
		part.count = min_u64(h->count, rest.count);
		rest.weight_ns -= part.weight_ns;
		rest.count -= part.count;
		ret = b->fn(&part, b->ctx);
	}
	if (ret || !rest.weight_ns)
		return ret;
	return b->fn(&rest, b->ctx);
}

int render_for_each_row(const struct profile *p, const struct render_options *o,
			int (*fn)(const struct profile_aggregate *row, void *ctx), void *ctx)
{
	struct parts b = { .o = o, .fn = fn, .ctx = ctx };
	size_t n = 0;
	int ret;

	if (!(o->class_root || o->keep_class) || !o->row_class ||
	    !(o->nstep_marks || o->span_class) || !profile_keeps_timeline(p))
		return profile_for_each_aggregate(p, fn, ctx);
	ret = profile_for_each_span(p, add_span, &b);
	if (ret < 0) {
		free(b.v);
		return ret;
	}
	/* One part per thread, stack, flags and class. */
	array_sort(b.v, b.n, sizeof(*b.v), by_part);
	for (size_t i = 0; i < b.n; i++) {
		if (n && !by_part(&b.v[n - 1], &b.v[i])) {
			b.v[n - 1].weight_ns += b.v[i].weight_ns;
			b.v[n - 1].count += b.v[i].count;
		} else {
			b.v[n++] = b.v[i];
		}
	}
	b.n = n;
	ret = profile_for_each_aggregate(p, split_row, &b);
	free(b.v);
	return ret;
}

int render_row_class(const struct render_options *o, const struct profile_aggregate *row)
{
	if (row->flags & SAMPLE_BEFORE_STEPS)
		return -1;
	if (row->flags & SAMPLE_CLASS_SET)
		return (int)(row->flags >> SAMPLE_CLASS_SHIFT & SAMPLE_CLASS_MAX);
	return o->row_class ? o->row_class(o->row_class_ctx, row) : -1;
}
