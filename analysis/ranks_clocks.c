// SPDX-License-Identifier: MIT
/*
 * How well recordings from several machines line up. report puts them
 * on one time line by each machine's wall clock (each recording keeps its
 * wall-minus-monotonic offset), which is only as right as the machines'
 * clocks agree: NTP leaves them a fraction of a millisecond to several
 * apart. The ranks' collectives say by how much: a collective ends for
 * every rank at the same moment, so the end of a comm wait seen in both
 * ranks in the same step is one instant seen by two clocks. Each of one
 * rank's is matched to the other's nearest in that step (a step holds
 * several collectives: DDP's buckets, a metrics all_reduce), and the
 * median difference is how far the other machine's clock is ahead; each
 * end is known to a sampling period (a tick falls anywhere in one), so
 * the estimate's uncertainty is its standard error over the matches and
 * half the time between samples (the period, more where ticks were late).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/phase_impl.h"
#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

#define SKEW_MIN_STEPS 5 /* fewer collectives seen on both: not said */

/* Every comm span's end in one rank's loop thread, with its step. */
struct comm_end {
	uint64_t ns;
	size_t step;
};

struct comm_ends {
	struct phase_map *m;
	uint32_t pid, tid;
	uint64_t *starts;
	size_t nsteps;
	struct comm_end *v;
	size_t n, cap;
};

static int comm_end(const struct profile_span *sp, void *ctx)
{
	struct comm_ends *c = ctx;
	size_t lo = 0, hi = c->nsteps;

	if (sp->pid != c->pid || sp->tid != c->tid || sp->flags & SAMPLE_GPU ||
	    sp->start_ns < c->starts[0] || phase_of_span(c->m, sp) != PHASE_COMM)
		return 0;
	while (hi - lo > 1) { /* the step it started in */
		size_t mid = (lo + hi) / 2;

		if (c->starts[mid] <= sp->start_ns)
			lo = mid;
		else
			hi = mid;
	}
	if (ARRAY_RESERVE(c->v, c->cap, c->n + 1, 64) < 0)
		return -ENOMEM;
	c->v[c->n++] = (struct comm_end){ sp->end_ns, lo };
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct comm_end *x = a, *y = b;

	return (x->ns > y->ns) - (x->ns < y->ns);
}

static int comm_ends_find(const struct summary *s, const struct rank_row *r, struct comm_ends *c)
{
	struct step_stats st;
	uint64_t end;
	int ret;

	*c = (struct comm_ends){ .m = s->m, .pid = r->sp->pid, .tid = r->sp->loop->tid };
	ret = steps_starts(s->m, c->pid, c->tid, &st, &c->starts, &c->nsteps, &end);
	if (ret < 0 || c->nsteps < 2)
		return ret < 0 ? ret : -ENOENT;
	ret = profile_for_each_span(s->p, comm_end, c);
	if (ret == 0)
		array_sort(c->v, c->n, sizeof(c->v[0]), by_time);
	return ret;
}

static void comm_ends_free(struct comm_ends *c)
{
	free(c->starts);
	free(c->v);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Each of b's comm ends against a's nearest in the same step (b's step
 * index less shift), a's moved by est first: the differences into d,
 * sorted; how many.
 */
static size_t match(const struct comm_ends *a, const struct comm_ends *b, long shift, int64_t est,
		    int64_t *d)
{
	size_t n = 0;

	for (size_t i = 0, j = 0; i < b->n; i++) {
		long step = (long)b->v[i].step - shift;
		int64_t best = INT64_MAX;

		/* a's ends are in time order: start near the last match */
		while (j > 0 && (int64_t)a->v[j].ns + est > (int64_t)b->v[i].ns)
			j--;
		for (size_t k = j; k < a->n; k++) {
			int64_t diff = (int64_t)b->v[i].ns - ((int64_t)a->v[k].ns + est);

			if ((long)a->v[k].step != step)
				continue;
			if (llabs(diff) < llabs(best))
				best = diff, j = k;
			else if (diff < 0)
				break;
		}
		if (best != INT64_MAX)
			d[n++] = best + est;
	}
	array_sort(d, n, sizeof(d[0]), cmp_i64);
	return n;
}

static int64_t median(const int64_t *d, size_t n)
{
	return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

static double quartile_gap(const int64_t *d, size_t n)
{
	return (double)(d[(3 * n) / 4] - d[n / 4]);
}

/* The time between two samples of a rank's loop thread over its steps:
 * the period, or more where ticks came late (a busy machine). */
static double tick_gap(const struct summary *s, const struct rank_row *r)
{
	const struct step_stats *st = &r->sp->steps;

	if (!st->span_samples)
		return (double)s->period_ns;
	return MAX((double)s->period_ns, (double)st->span_ns / (double)st->span_samples);
}

/* The steps matched by index, or one apart where a rank's count missed
 * one at its start (the tightest fit); each collective matched to the
 * nearest, the estimate refined a few times. gap: the larger of the two
 * ranks' times between samples. */
static void skew_estimate(double gap, const struct comm_ends *a, const struct comm_ends *b,
			  int64_t *d, struct clock_skew *out)
{
	double best_gap = 0, se;

	for (long shift = -1; shift <= 1; shift++) {
		int64_t est = 0;
		size_t n = 0;

		for (int round = 0; round < 4; round++) {
			n = match(a, b, shift, est, d);
			if (n < SKEW_MIN_STEPS)
				break;
			est = median(d, n);
		}
		if (n < SKEW_MIN_STEPS || (out->known && quartile_gap(d, n) >= best_gap))
			continue;
		best_gap = quartile_gap(d, n);
		out->known = true;
		out->steps = n;
		out->ahead_ms = (double)est / 1e6;
		/* a median's standard error (1.25 sigma / sqrt(n), sigma from the
		 * quartiles) with half a tick gap beside it: the last sample of a
		 * long wait falls a gap before its end on average, a short one's
		 * anywhere in it, so the two ends' biases differ by that; on a
		 * busy machine the gap is the late ticks', not the period (two
		 * CPU hogs: 4 ms measured as -0.5, with ticks some 10 ms apart) */
		se = 1.2533 * best_gap / 1.349 / sqrt((double)n);
		out->uncertainty_ms = sqrt(se * se + gap * gap / 4) / 1e6;
	}
}

const char *rank_host(const struct summary *s, const struct rank_row *r)
{
	const char *label = process_label_of(s->p, r->sp->pid);
	const char *on = label ? strstr(label, " on ") : NULL; /* "rank 1 on HOST" */

	return on ? on + 4 : NULL;
}

int ranks_clock_skew(const struct summary *s, const struct rank_row *ref,
		     const struct rank_row *other, struct clock_skew *out)
{
	struct comm_ends a = { 0 }, b = { 0 };
	int64_t *d = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = comm_ends_find(s, ref, &a);
	if (ret == 0)
		ret = comm_ends_find(s, other, &b);
	if (ret == 0 && b.n && !(d = malloc(b.n * sizeof(*d))))
		ret = -ENOMEM;
	if (ret == 0 && b.n)
		skew_estimate(MAX(tick_gap(s, ref), tick_gap(s, other)), &a, &b, d, out);
	free(d);
	comm_ends_free(&a);
	comm_ends_free(&b);
	return ret == -ENOENT ? 0 : ret;
}
