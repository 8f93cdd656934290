// SPDX-License-Identifier: MIT
/*
 * The trace's CPU slices, built from the timeline as it is read back, in
 * one pass and in memory bounded by threads and stack depth: per thread a
 * walker holds the frames open now, and a frame's complete ("X") slice is
 * written when the frame ends. A frame that stays at its depth across
 * consecutive spans stays one slice, so slices nest like the calls did; a
 * gap in a thread's samples (blocked, or not sampled) ends every open one.
 *
 * Slices are written as they end: children before their parents. Viewers
 * sort by start, keeping file order for equal starts (chrome://tracing,
 * Perfetto, speedscope), so a child that began with its parent would sort
 * first and the nesting would invert. Each slice therefore starts `depth`
 * nanoseconds late (and ends on time): invisible at any zoom, and a
 * parent's start always sorts before its children's.
 *
 * A long run can hold more slices than a viewer opens. A first pass counts
 * them by duration (powers of two); when there are more than the limit, the
 * second leaves out those shorter than the smallest power of two that fits.
 * A slice's children are never longer than it, so what stays still nests.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "common/common.h"
#include "formats/trace_impl.h"

struct walker_key {
	const struct tr *t;
	uint32_t pid, tid;
};

static bool same_walker(const void *key, uint32_t id)
{
	const struct walker_key *k = key;

	return k->t->walkers[id].pid == k->pid && k->t->walkers[id].tid == k->tid;
}

int trace_walker_of(struct tr *t, uint32_t pid, uint32_t tid, struct trace_walker **out)
{
	struct walker_key key = { t, pid, tid };
	uint32_t words[2] = { pid, tid };
	uint32_t h = hash_of_words(words, 2);
	struct hash_slot *slot;

	if (hash_table_reserve(&t->walker_index) < 0)
		return -ENOMEM;
	slot = hash_table_find(&t->walker_index, h, same_walker, &key);
	if (!slot->ref) {
		if (ARRAY_RESERVE(t->walkers, t->capwalkers, (size_t)t->nwalkers + 1, 16) < 0)
			return -ENOMEM;
		t->walkers[t->nwalkers] = (struct trace_walker){ .pid = pid, .tid = tid };
		hash_table_fill(&t->walker_index, slot, h, t->nwalkers++);
	}
	*out = &t->walkers[slot->ref - 1];
	return 0;
}

static unsigned log2_floor(uint64_t v)
{
	return v ? 63u - (unsigned)__builtin_clzll(v) : 0;
}

static int slice_end(struct tr *t, const struct trace_walker *w, uint32_t depth, uint64_t end)
{
	const struct open_frame *f = &w->open[depth];
	uint64_t dur = end > f->start ? end - f->start : 0;
	uint64_t late = depth < dur ? depth : 0;

	if (!t->out) {
		t->by_duration[log2_floor(dur)]++;
		t->slices_all++;
		return 0;
	}
	if (dur < t->min_dur_ns)
		return 0;
	trace_write_slice(t, t->out, w->pid, w->tid, f, f->start + late, end);
	return ferror(t->out->f) ? -EIO : t->out->err;
}

/* Ends the open frames from depth `keep` up, innermost first, at `end`. */
static int close_from(struct tr *t, struct trace_walker *w, uint32_t keep, uint64_t end)
{
	while (w->nopen > keep) {
		int ret = slice_end(t, w, w->nopen - 1, end);

		if (ret < 0)
			return ret;
		w->nopen--;
	}
	return 0;
}

static int label_of(struct tr *t, uint32_t frame, uint32_t *out)
{
	char buf[LABEL_MAX];
	int ret;

	if (!t->label_of[frame]) {
		frame_label(t->p, frame, &t->o, t->script_dir, buf, sizeof(buf));
		ret = label_set_intern(&t->labels, buf, out, NULL);
		if (ret < 0)
			return ret;
		t->label_of[frame] = *out + 1;
	}
	*out = t->label_of[frame] - 1;
	return 0;
}

static int walk_span(const struct profile_span *s, void *ctx)
{
	struct tr *t = ctx;
	struct profile_aggregate row = { .pid = s->pid, .tid = s->tid, .stack = s->stack,
					 .flags = s->flags, .weight_ns = s->end_ns - s->start_ns,
					 .count = s->count };
	/* A quarter of the span's mean interval of slack: timer jitter. */
	uint64_t slack = (s->end_ns - s->start_ns) / s->count / 4;
	struct trace_walker *w;
	uint32_t keep = 0, label;
	bool touching;
	int depth, ret;

	if (!render_keeps(t->p, &t->o, &row))
		return 0;
	ret = trace_walker_of(t, s->pid, s->tid, &w);
	if (ret < 0)
		return ret;
	touching = w->prev_end && s->start_ns <= w->prev_end + slack;
	depth = profile_stack_frames(t->p, s->stack, &t->path, &t->cappath);
	if (depth < 0)
		return depth;
	if (touching) {
		while (keep < w->nopen && keep < (uint32_t)depth) {
			ret = label_of(t, t->path[keep], &label);
			if (ret < 0)
				return ret;
			if (label != w->open[keep].label)
				break;
			keep++;
		}
	}
	/* Contiguous spans hand over at the new span's start; after a gap,
	 * what was open ends where its samples did. */
	ret = close_from(t, w, keep, touching ? s->start_ns : w->prev_end);
	if (ret < 0)
		return ret;
	if (ARRAY_RESERVE(w->open, w->capopen, (size_t)depth, 4) < 0)
		return -ENOMEM;
	for (uint32_t i = keep; i < (uint32_t)depth; i++) {
		ret = label_of(t, t->path[i], &label);
		if (ret < 0)
			return ret;
		w->open[w->nopen++] = (struct open_frame){ label, t->path[i], s->start_ns };
	}
	w->prev_end = s->end_ns;
	return 0;
}

int trace_slices_pass(struct tr *t, struct json_out *out)
{
	int ret;

	t->out = out;
	for (uint32_t i = 0; i < t->nwalkers; i++)
		t->walkers[i].nopen = 0, t->walkers[i].prev_end = 0;
	ret = profile_for_each_span(t->p, walk_span, t);
	for (uint32_t i = 0; i < t->nwalkers && !ret; i++)
		ret = close_from(t, &t->walkers[i], 0, t->walkers[i].prev_end);
	t->out = NULL;
	return ret;
}

void trace_slices_limit(struct tr *t, uint64_t max_slices)
{
	uint64_t kept = t->slices_all;
	unsigned k = 0;

	t->min_dur_ns = 0;
	t->slices_kept = kept;
	if (!max_slices || kept <= max_slices)
		return;
	while (k < 63 && kept > max_slices)
		kept -= t->by_duration[k++];
	t->min_dur_ns = 1ull << k;
	t->slices_kept = kept;
}

void trace_slices_free(struct tr *t)
{
	for (uint32_t i = 0; i < t->nwalkers; i++)
		free(t->walkers[i].open);
	free(t->walkers);
	hash_table_free(&t->walker_index);
	free(t->path);
}
