// SPDX-License-Identifier: MIT
/*
 * A line per process: where its main loop's time goes by phase. The loop's
 * thread is the one that computes most (forward, backward, optimizer), else
 * the one with the most time in any phase (a worker's loop), and its split
 * counts all of its time, idle included: waiting for a batch is data time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/phase_impl.h"
#include "common/common.h"
#include "formats/formats.h"

struct thread_split {
	uint32_t pid, tid;
	uint64_t ns[PHASE_KINDS];
};

struct split_tally {
	struct phase_map *m;
	struct thread_split *v;
	size_t n, cap;
};

static int tally_row(const struct profile_aggregate *row, void *ctx)
{
	struct split_tally *t = ctx;
	struct thread_split *s = NULL;

	if (row->flags & SAMPLE_GPU)
		return 0;
	for (size_t i = t->n; i-- > 0;)
		if (t->v[i].pid == row->pid && t->v[i].tid == row->tid) {
			s = &t->v[i];
			break;
		}
	if (!s) {
		if (ARRAY_RESERVE(t->v, t->cap, t->n + 1, 16) < 0)
			return -ENOMEM;
		s = &t->v[t->n++];
		*s = (struct thread_split){ .pid = row->pid, .tid = row->tid };
	}
	s->ns[phase_of_row(t->m, row)] += row->weight_ns;
	return 0;
}

static uint64_t classified(const struct thread_split *s)
{
	uint64_t n = 0;

	for (int k = PHASE_OTHER + 1; k < PHASE_KINDS; k++)
		n += s->ns[k];
	return n;
}

/* The loop's thread: the one that computes (forward, backward, the
 * optimizer), not a loader thread that only fetches; else the one with
 * the most time in any phase (a DataLoader worker). */
static bool loopier(const struct thread_split *a, const struct thread_split *b)
{
	uint64_t ca = a->ns[PHASE_FORWARD] + a->ns[PHASE_BACKWARD] + a->ns[PHASE_OPTIMIZER];
	uint64_t cb = b->ns[PHASE_FORWARD] + b->ns[PHASE_BACKWARD] + b->ns[PHASE_OPTIMIZER];

	if (ca != cb)
		return ca > cb;
	return classified(a) > classified(b);
}

static void write_line(const struct profile *p, const struct thread_split *s, FILE *out)
{
	const char *label = process_label_of(p, s->pid);
	uint64_t all = 0;
	bool done[PHASE_KINDS] = { false };

	for (int k = 0; k < PHASE_KINDS; k++)
		all += s->ns[k];
	fprintf(out, "trainsample: PID %" PRIu32 "%s%s%s phases, thread %" PRIu32 ":", s->pid,
		label ? " (" : "", label ? label : "", label ? ")" : "", s->tid);
	/* Largest first; other last, whatever its size. */
	for (int shown = 0; shown < PHASE_KINDS - 1; shown++) {
		int best = -1;

		for (int k = PHASE_OTHER + 1; k < PHASE_KINDS; k++)
			if (!done[k] && s->ns[k] && (best < 0 || s->ns[k] > s->ns[best]))
				best = k;
		if (best < 0)
			break;
		done[best] = true;
		fprintf(out, "%s %s %.0f%%", shown ? "," : "", phase_name((enum phase)best),
			100.0 * (double)s->ns[best] / (double)all);
	}
	if (s->ns[PHASE_OTHER])
		fprintf(out, ", other %.0f%%", 100.0 * (double)s->ns[PHASE_OTHER] / (double)all);
	fputc('\n', out);
}

static void write_steps(struct phase_map *m, const struct thread_split *s, FILE *out)
{
	struct step_stats st;

	const char *period = profile_meta(m->p, "period_ns");
	uint64_t period_ns = period ? strtoull(period, NULL, 10) : 0;

	if (!profile_keeps_timeline(m->p) || steps_find(m, s->pid, s->tid, &st) < 0 ||
	    st.timed < 1)
		return;
	if (period_ns && st.beat_ns < 2 * period_ns) {
		fprintf(out, "trainsample:   steps: not counted: %s is seen for %.1f ms at a time, under "
			"two sampling periods (%.1f ms), so some steps' would fall between samples; "
			"a higher -r may count them\n", phase_name(st.beat), (double)st.beat_ns / 1e6,
			2.0 * (double)period_ns / 1e6);
		return;
	}
	fprintf(out, "trainsample:   steps: %" PRIu64 " (%.1f/s, by %s), step p50 %.1f ms, p90 %.1f ms, "
		"max %.1f ms; a step:", st.steps,
		(double)st.timed * 1e9 / (double)(st.span_ns ? st.span_ns : 1), phase_name(st.beat),
		(double)st.p50_ns / 1e6, (double)st.p90_ns / 1e6, (double)st.max_ns / 1e6);
	for (int k = PHASE_OTHER + 1, n = 0; k <= PHASE_KINDS; k++) {
		int ph = k % PHASE_KINDS; /* other last */

		if (!st.phase_ns[ph])
			continue;
		fprintf(out, "%s %s %.1f ms", n++ ? "," : "", phase_name((enum phase)ph),
			(double)st.phase_ns[ph] / 1e6 / (double)st.timed);
	}
	fputc('\n', out);
}

int phase_summary_write(struct phase_map *m, FILE *out)
{
	struct split_tally t = { .m = m };
	int ret = profile_for_each_aggregate(m->p, tally_row, &t);

	for (size_t i = 0; !ret && i < t.n; i++) {
		const struct thread_split *best = NULL;
		bool first = true;

		/* Once per process, at its first thread in the table. */
		for (size_t k = 0; k < i && first; k++)
			first = t.v[k].pid != t.v[i].pid;
		if (!first)
			continue;
		for (size_t k = i; k < t.n; k++)
			if (t.v[k].pid == t.v[i].pid && classified(&t.v[k]) &&
			    (!best || loopier(&t.v[k], best)))
				best = &t.v[k];
		if (best) {
			write_line(m->p, best, out);
			write_steps(m, best, out);
		}
	}
	free(t.v);
	return ret;
}
