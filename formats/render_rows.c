// SPDX-License-Identifier: MIT
/*
 * The rows a grouped picture draws (--group-by phase): where the training
 * loops' first steps are known (render_options.step_marks, a timeline
 * kept), the part of a loop thread's row that came before its first step
 * is a row of its own, flagged SAMPLE_BEFORE_STEPS: its class root says
 * "startup" (imports, the model built, the first batch), as the summary's
 * phases do, whatever its frames.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/common.h"
#include "formats/formats.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

struct before_row {
	uint32_t pid, tid, stack, flags;
	uint64_t weight_ns, count;
};

struct before {
	const struct render_options *o;
	struct before_row *v;
	size_t n, cap;
	int (*fn)(const struct profile_aggregate *row, void *ctx);
	void *ctx;
};

static int by_row(const void *a, const void *b)
{
	const struct before_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
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
	struct before *b = ctx;
	uint64_t first;

	if (span->flags & SAMPLE_GPU)
		return 0;
	first = first_step_ns(b->o, span->pid, span->tid);
	if (!first || span->start_ns >= first)
		return 0;
	if (ARRAY_RESERVE(b->v, b->cap, b->n + 1, 256) < 0)
		return -ENOMEM;
	b->v[b->n++] = (struct before_row){ span->pid, span->tid, span->stack, span->flags,
					    span->end_ns - span->start_ns, span->count };
	return 0;
}

static int split_row(const struct profile_aggregate *row, void *ctx)
{
	struct before *b = ctx;
	struct before_row key = { row->pid, row->tid, row->stack, row->flags, 0, 0 };
	const struct before_row *hit = b->n ? bsearch(&key, b->v, b->n, sizeof(key), by_row) : NULL;
	struct profile_aggregate part;
	int ret;

	if (!hit)
		return b->fn(row, b->ctx);
	/* Spans and aggregates weigh the same samples: the part before the
	 * first step, then the rest. */
	part = *row;
	part.flags |= SAMPLE_BEFORE_STEPS;
	part.weight_ns = min_u64(hit->weight_ns, row->weight_ns);
	part.count = min_u64(hit->count, row->count);
	ret = b->fn(&part, b->ctx);
	if (ret || row->weight_ns <= part.weight_ns)
		return ret;
	part = *row;
	part.weight_ns -= min_u64(hit->weight_ns, row->weight_ns);
	part.count -= min_u64(hit->count, row->count);
	return b->fn(&part, b->ctx);
}

int render_for_each_row(const struct profile *p, const struct render_options *o,
			int (*fn)(const struct profile_aggregate *row, void *ctx), void *ctx)
{
	struct before b = { .o = o, .fn = fn, .ctx = ctx };
	size_t n = 0;
	int ret;

	if (!o->class_root || !o->row_class || !o->nstep_marks || !profile_keeps_timeline(p))
		return profile_for_each_aggregate(p, fn, ctx);
	ret = profile_for_each_span(p, add_span, &b);
	if (ret < 0) {
		free(b.v);
		return ret;
	}
	/* One row per thread, stack and flags, as the aggregates are. */
	array_sort(b.v, b.n, sizeof(*b.v), by_row);
	for (size_t i = 0; i < b.n; i++) {
		if (n && !by_row(&b.v[n - 1], &b.v[i])) {
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
