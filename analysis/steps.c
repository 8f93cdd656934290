// SPDX-License-Identifier: MIT
/*
 * The training loop's steps, from its thread's phases over time (the
 * recording's timeline of spans). The beat is backward: it runs once a
 * step in nearly every training loop, is long enough to be seen at every
 * step (it is commonly the longest phase), and nothing else runs inside
 * it. A loop without backward (evaluation, inference) beats by its
 * optimizer, else by its forward, else by its data fetch. A step starts
 * where its beat's run of samples does; with gradient accumulation each
 * micro-batch's backward is a step. A beat that lasts less than two
 * sampling periods is missed at some steps, which then merge: such steps
 * are not counted (step_stats.beat_ns says how long the beat was). Comm
 * inside a backward (DDP's allreduce) does not end its run. A tick
 * late by more than a beat (trainsample or the machine stalled) can hide
 * one beat and merge two steps: a step that long, holding such a gap, is
 * counted as one that may hold two (step_stats.maybe_merged).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/phase_impl.h"
#include "common/common.h"
#include "formats/formats.h"

struct step_walk {
	struct phase_map *m;
	uint32_t pid, tid;
	enum phase beat;
	bool seen[PHASE_KINDS];
	/* the beat's runs: where each began */
	uint64_t *starts;
	size_t nstarts, cap;
	bool in_beat;
	/* time by phase between the first step's start and the last's */
	uint64_t phase_ns[PHASE_KINDS];
	struct { uint64_t start, end, count; enum phase ph, own; } *spans;
	size_t nspans, cap_spans;
	int err;
};

/* Its phase, eval inside a validation pass; the phase of its stack alone
 * into *own. */
static enum phase span_phase(struct step_walk *w, const struct profile_span *s, enum phase *own)
{
	struct profile_aggregate row = { .pid = s->pid, .tid = s->tid, .stack = s->stack,
					 .flags = s->flags, .weight_ns = 0, .count = s->count };

	*own = phase_of_row(w->m, &row);
	return phase_of_span(w->m, s);
}

static int collect(const struct profile_span *s, void *ctx)
{
	struct step_walk *w = ctx;

	if (s->pid != w->pid || s->tid != w->tid || s->flags & SAMPLE_GPU)
		return 0;
	if (ARRAY_RESERVE(w->spans, w->cap_spans, w->nspans + 1, 256) < 0)
		return -ENOMEM;
	w->spans[w->nspans].start = s->start_ns;
	w->spans[w->nspans].end = s->end_ns;
	w->spans[w->nspans].count = s->count;
	w->spans[w->nspans].ph = span_phase(w, s, &w->spans[w->nspans].own);
	w->seen[w->spans[w->nspans].ph] = true;
	w->nspans++;
	return 0;
}

static uint64_t percentile(const uint64_t *sorted, size_t n, double q)
{
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);

	return n ? sorted[i < n ? i : n - 1] : 0;
}

/*
 * Steps (between starts k and k + 1) at least 1.5 times the median that
 * hold a sample whose weight, the time since the tick before it, is a
 * beat or more: a late tick, which a whole beat may have run before
 * unseen. A span gives the sum of its samples' weights: the largest is at
 * least that less the others' most (ticks are drawn 0.2 to 1.8 periods
 * apart; the period is the recording's).
 */
static uint64_t count_maybe_merged(const struct step_walk *w, const struct step_stats *st)
{
	const char *meta = profile_meta(w->m->p, "period_ns");
	uint64_t period = meta ? strtoull(meta, NULL, 10) : 0, n = 0;
	size_t k = 0;
	bool flagged = false, in_beat = false;

	if (!period || st->beat_ns <= period)
		return 0;
	for (size_t i = 0; i < w->nspans; i++) {
		/* A span is placed by its end: a late sample's weight reaches
		 * back over the gap, into the step before. */
		uint64_t end = w->spans[i].end, len = w->spans[i].end - w->spans[i].start, others;
		bool beat = w->spans[i].ph == st->beat, run_start = beat && !in_beat;

		in_beat = beat || (in_beat && st->beat == PHASE_BACKWARD && w->spans[i].ph == PHASE_COMM);
		/* Inside a beat's run a gap hides no beat; at its start it may
		 * (its start, the step's, is pulled back over the gap). */
		if (end < w->starts[0] || (beat && !run_start))
			continue;
		while (k + 1 < w->nstarts && end >= w->starts[k + 1]) {
			k++;
			flagged = false;
		}
		if (k + 1 >= w->nstarts)
			break;
		if (flagged || 2 * (w->starts[k + 1] - w->starts[k]) < 3 * st->p50_ns)
			continue;
		others = (w->spans[i].count - 1) * period * 9 / 5;
		if (len > others && len - others >= st->beat_ns) {
			flagged = true;
			n++;
		}
	}
	return n;
}

/* keep: the steps' starts are handed to the caller, with the thread's
 * last span's end. */
static int find(struct phase_map *m, uint32_t pid, uint32_t tid, struct step_stats *out,
		uint64_t **keep, size_t *nkeep, uint64_t *end_ns)
{
	static const enum phase beats[] = { PHASE_BACKWARD, PHASE_OPTIMIZER, PHASE_FORWARD,
					     PHASE_DATA };
	struct step_walk w = { .m = m, .pid = pid, .tid = tid };
	uint64_t *lengths = NULL;
	int ret = phase_map_find_evals(m, pid, tid);

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->tid = tid;
	if (ret == 0)
		ret = profile_for_each_span(m->p, collect, &w);
	if (ret < 0)
		goto done;
	for (size_t i = 0; i < w.nspans; i++)
		if (w.spans[i].ph == PHASE_EVAL && w.spans[i].own != PHASE_EVAL)
			out->eval_taken_ns[w.spans[i].own] += w.spans[i].end - w.spans[i].start;
	out->eval_passes = eval_pass_count(m, pid, tid);
	out->beat = PHASE_OTHER;
	for (size_t i = 0; i < sizeof(beats) / sizeof(beats[0]); i++)
		if (w.seen[beats[i]]) {
			out->beat = beats[i];
			break;
		}
	if (out->beat == PHASE_OTHER)
		goto done;
	for (size_t i = 0; i < w.nspans; i++) {
		bool beat = w.spans[i].ph == out->beat;

		/* DDP's gradient allreduce, waited for inside backward (and its
		 * comm hook, called there), splits no backward in two. */
		if (out->beat == PHASE_BACKWARD && w.spans[i].ph == PHASE_COMM)
			continue;
		if (beat && !w.in_beat) {
			if (ARRAY_RESERVE(w.starts, w.cap, w.nstarts + 1, 64) < 0) {
				ret = -ENOMEM;
				goto done;
			}
			w.starts[w.nstarts++] = w.spans[i].start;
		}
		w.in_beat = beat;
	}
	out->steps = w.nstarts;
	if (w.nstarts < 2)
		goto done;
	/* A beat shorter than two periods can fall between ticks: steps
	 * would then merge, silently. */
	for (size_t i = 0; i < w.nspans; i++)
		if (w.spans[i].ph == out->beat) {
			out->beat_ns += w.spans[i].end - w.spans[i].start;
			out->beat_samples += w.spans[i].count;
		}
	out->beat_ns /= w.nstarts;
	lengths = malloc((w.nstarts - 1) * sizeof(*lengths));
	if (!lengths) {
		ret = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i + 1 < w.nstarts; i++)
		lengths[i] = w.starts[i + 1] - w.starts[i];
	/* Each step's phases: the spans from one beat to the next; a
	 * validation pass among them is not the step's. */
	for (size_t i = 0, k = 0; i < w.nspans; i++) {
		uint64_t len = w.spans[i].end - w.spans[i].start;

		if (w.spans[i].start < w.starts[0] || w.spans[i].start >= w.starts[w.nstarts - 1])
			continue;
		while (k + 2 < w.nstarts && w.spans[i].start >= w.starts[k + 1])
			k++;
		if (w.spans[i].ph == PHASE_EVAL) {
			out->eval_ns += len;
			lengths[k] -= len < lengths[k] ? len : lengths[k];
			continue;
		}
		out->phase_ns[w.spans[i].ph] += len;
		out->span_samples += w.spans[i].count;
	}
	u64_sort(lengths, w.nstarts - 1);
	out->timed = w.nstarts - 1;
	out->span_ns = w.starts[w.nstarts - 1] - w.starts[0];
	out->first_ns = w.starts[0];
	out->last_ns = w.starts[w.nstarts - 1];
	out->thread_first_ns = w.starts[0];
	for (size_t i = 0; i < w.nspans; i++) {
		if (w.spans[i].start < out->thread_first_ns)
			out->thread_first_ns = w.spans[i].start;
		if (w.spans[i].start < out->first_ns)
			out->before_ns[w.spans[i].ph] += w.spans[i].end - w.spans[i].start;
	}
	out->p50_ns = percentile(lengths, out->timed, 0.50);
	out->p90_ns = percentile(lengths, out->timed, 0.90);
	out->max_ns = lengths[out->timed - 1];
	out->maybe_merged = count_maybe_merged(&w, out);
done:
	if (keep && ret == 0) {
		*keep = w.starts;
		*nkeep = w.nstarts;
		*end_ns = 0;
		for (size_t i = 0; i < w.nspans; i++)
			if (w.spans[i].end > *end_ns)
				*end_ns = w.spans[i].end;
		w.starts = NULL;
	}
	free(lengths);
	free(w.starts);
	free(w.spans);
	return ret;
}

int steps_find(struct phase_map *m, uint32_t pid, uint32_t tid, struct step_stats *out)
{
	return find(m, pid, tid, out, NULL, NULL, NULL);
}

int steps_starts(struct phase_map *m, uint32_t pid, uint32_t tid, struct step_stats *out,
		 uint64_t **starts, size_t *n, uint64_t *end_ns)
{
	*starts = NULL;
	*n = 0;
	return find(m, pid, tid, out, starts, n, end_ns);
}
