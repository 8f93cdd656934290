// SPDX-License-Identifier: MIT
/*
 * diff's second table: the main training loop of two recordings side by
 * side, before and after a change: each phase's time a step (or, where
 * either has no steps counted, its share of the loop's time past its
 * startup), and the step times.
 *
 *   main loop            older    newer   change
 *     data a step      20.4 ms   9.8 ms   -52.0%
 *     step p50         51.3 ms  40.2 ms   -21.6%
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

static const struct summary_process *main_loop(const struct summary *s)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].loop)
			return &s->procs[i];
	return NULL;
}

static bool counted(const struct summary_process *sp)
{
	return sp->steps.timed && !sp->steps_too_short;
}

static void row_ms(FILE *out, const char *what, double a, double b)
{
	fprintf(out, "  %-18s %8.1f ms %8.1f ms", what, a, b);
	if (a > 0)
		fprintf(out, " %+8.1f%%\n", 100.0 * (b - a) / a);
	else
		fputs("         -\n", out);
}

/* A phase's share of the loop's time, its startup left out. */
static double share(const struct summary_process *sp, int k)
{
	uint64_t all = 0;

	for (int i = 0; i < PHASE_KINDS; i++)
		all += sp->loop_ns[i];
	return all ? 100.0 * (double)sp->loop_ns[k] / (double)all : 0;
}

int summary_diff_write(const struct summary *older, const struct summary *newer, FILE *out)
{
	const struct summary_process *a = main_loop(older), *b = main_loop(newer);
	bool steps;

	if (!a || !b)
		return 0;
	steps = counted(a) && counted(b);
	fprintf(out, "\n  %-18s %11s %11s %9s   (PID %" PRIu32 ", PID %" PRIu32 ")\n", "main loop", "older",
		"newer", "change", a->pid, b->pid);
	for (int k = PHASE_OTHER + 1; k <= PHASE_KINDS; k++) {
		int ph = k % PHASE_KINDS; /* other last */
		char what[48];

		if (steps) {
			double x = (double)a->steps.phase_ns[ph] / 1e6 / (double)a->steps.timed;
			double y = (double)b->steps.phase_ns[ph] / 1e6 / (double)b->steps.timed;

			if (x < 0.05 && y < 0.05)
				continue;
			snprintf(what, sizeof(what), "%s a step", phase_name((enum phase)ph));
			row_ms(out, what, x, y);
		} else {
			double x = share(a, ph), y = share(b, ph);

			if (x < 0.05 && y < 0.05)
				continue;
			fprintf(out, "  %-18s %10.1f%% %10.1f%% %+9.1f\n", phase_name((enum phase)ph), x, y,
				y - x);
		}
	}
	if (!steps) {
		fprintf(out, "  (steps: %s)\n", !counted(a) && !counted(b) ? "counted in neither" :
			!counted(a) ? "not counted in the older" : "not counted in the newer");
		return ferror(out) ? -EIO : 0;
	}
	row_ms(out, "step p50", (double)a->steps.p50_ns / 1e6, (double)b->steps.p50_ns / 1e6);
	row_ms(out, "step p90", (double)a->steps.p90_ns / 1e6, (double)b->steps.p90_ns / 1e6);
	row_ms(out, "step max", (double)a->steps.max_ns / 1e6, (double)b->steps.max_ns / 1e6);
	fprintf(out, "  %-18s %11" PRIu64 " %11" PRIu64 "\n", "steps", a->steps.steps, b->steps.steps);
	return ferror(out) ? -EIO : 0;
}
