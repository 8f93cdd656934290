// SPDX-License-Identifier: MIT
/*
 * The summary as a terminal shows it, at the end of a run and by report
 * --summary. A line per process (the 12 busiest that have 1% of the
 * samples or more; a line counts the rest), then, for the processes that
 * matter (the busiest, and any with a quarter of the samples), its
 * threads, top functions and compute share; for every process with a
 * training loop, its phases, steps and DataLoaders.
 *
 *   trainsample: PID 4242 (python3 train.py): 2,994 samples, busy 81%, idle 19%; hottest: ...
 *   trainsample:   threads: MainThread busy 97% (GIL 95%), pin_memory busy 3%; 12 more idle
 *   trainsample:   top functions: self matmul 23%, ...; total train 80%, ...
 *   trainsample:   phases, thread 4242: data 57%, forward 25%, backward 11%, other 7%
 *   trainsample:   steps: 85 (28.3/s, by backward), step p50 35.2 ms, ...; a step: data 14.1 ms, ...
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

#define PROCESSES_MAX 12

static double pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

/* "name (file.py)" for a Python function, the name alone for a native one. */
static void func_text(const struct profile *p, const struct summary_func *f, char *buf, size_t len)
{
	const char *file = f->file ? profile_string(p, f->file) : NULL;
	const char *base = file ? strrchr(file, '/') : NULL;

	if (file && strstr(file, ".py"))
		snprintf(buf, len, "%s (%s)", profile_string(p, f->name), base ? base + 1 : file);
	else
		snprintf(buf, len, "%s", profile_string(p, f->name));
}

/* A frame as the hottest reads: "name (file.py:LINE)" for Python. */
static void frame_text(const struct profile *p, uint32_t id, char *buf, size_t len)
{
	const struct frame *f = profile_frame(p, id);
	const char *file = f->module ? profile_string(p, f->module) : NULL;
	const char *base = file ? strrchr(file, '/') : NULL;

	if (f->kind == FRAME_PYTHON && file && f->line)
		snprintf(buf, len, "%s (%s:%" PRIu32 ")", profile_string(p, f->name),
			 base ? base + 1 : file, f->line);
	else
		snprintf(buf, len, "%s", profile_string(p, f->name));
}

static const char *thread_text(const struct profile *p, uint32_t pid, const struct summary_thread *t,
			       char *buf, size_t len)
{
	const char *name = profile_thread_name(p, pid, t->tid);

	if (name && *name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "thread %" PRIu32, t->tid);
	return buf;
}

static int by_busy(const void *a, const void *b)
{
	const struct summary_thread *x = a, *y = b;

	if (x->busy_ns != y->busy_ns)
		return x->busy_ns > y->busy_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Up to four threads busy 1% of their time or more, busiest first. */
static void write_threads(const struct summary *s, const struct summary_process *sp, FILE *out)
{
	struct summary_thread *v = malloc(sp->nthreads * sizeof(*v));
	size_t shown = 0, idle = 0, quiet = 0;
	char name[96];

	if (!v)
		return;
	memcpy(v, sp->threads, sp->nthreads * sizeof(*v));
	array_sort(v, sp->nthreads, sizeof(*v), by_busy);
	fprintf(out, "trainsample:   threads:");
	for (size_t i = 0; i < sp->nthreads; i++) {
		uint64_t all = v[i].busy_ns + v[i].idle_ns;

		if (!v[i].busy_ns) {
			idle++;
		} else if (shown < 4 && pct(v[i].busy_ns, all) >= 1.0) {
			fprintf(out, "%s %s busy %.0f%%", shown ? "," : "",
				thread_text(s->p, sp->pid, &v[i], name, sizeof(name)),
				pct(v[i].busy_ns, all));
			if (v[i].gil_ns)
				fprintf(out, " (GIL %.0f%%)", pct(v[i].gil_ns, all));
			if (pct(v[i].cpu_wait_ns, all) >= 5.0)
				fprintf(out, " (waiting for a CPU %.0f%%)", pct(v[i].cpu_wait_ns, all));
			shown++;
		} else {
			quiet++;
		}
	}
	if (quiet)
		fprintf(out, "%s %zu more threads, less busy", shown ? ";" : "", quiet);
	if (idle)
		fprintf(out, "%s %zu threads idle throughout", shown || quiet ? ";" : "", idle);
	fputc('\n', out);
	free(v);
}

static void write_functions(const struct summary *s, const struct summary_process *sp, FILE *out)
{
	char text[256];

	if (!sp->ntop_self)
		return;
	fprintf(out, "trainsample:   top functions: self");
	for (size_t i = 0; i < sp->ntop_self && i < 3; i++) {
		if (i && pct(sp->top_self[i].self_ns, sp->busy_ns) < 1.0)
			break;
		func_text(s->p, &sp->top_self[i], text, sizeof(text));
		fprintf(out, "%s %s %.0f%%", i ? "," : "", text, pct(sp->top_self[i].self_ns, sp->busy_ns));
	}
	fprintf(out, "; total");
	for (size_t i = 0, n = 0; i < sp->ntop_total && n < 3; i++) {
		/* A chain of callers with one total (<module>, main, train):
		 * its innermost says most. */
		if (i + 1 < sp->ntop_total &&
		    sp->top_total[i + 1].total_ns >= sp->top_total[i].total_ns / 100 * 99)
			continue;
		if (n && pct(sp->top_total[i].total_ns, sp->busy_ns) < 1.0)
			break;
		func_text(s->p, &sp->top_total[i], text, sizeof(text));
		fprintf(out, "%s %s %.0f%%", n++ ? "," : "", text, pct(sp->top_total[i].total_ns, sp->busy_ns));
	}
	fputc('\n', out);
	/* Where stacks are native (--native, or a native program): not for
	 * the few native frames of a Python process's start. */
	if (sp->native_ns * 2 >= sp->busy_ns)
		fprintf(out, "trainsample:   compute %.0f%% of busy time with native frames (ATen, BLAS, "
			"oneDNN, CUDA launches), Python and the rest %.0f%%\n",
			pct(sp->compute_ns, sp->native_ns), 100.0 - pct(sp->compute_ns, sp->native_ns));
}

static const char *loop_phase_name(int k)
{
	return k == LOOP_STARTUP ? "startup" : phase_name((enum phase)k);
}

static void write_phases(const struct summary *s, const struct summary_process *sp, FILE *out)
{
	const uint64_t *ns = sp->loop_ns;
	bool done[PHASE_KINDS + 1] = { false };
	uint64_t all = 0;
	char name[96];

	for (int k = 0; k <= PHASE_KINDS; k++)
		all += ns[k];
	fprintf(out, "trainsample:   phases, thread %" PRIu32 " (%s):", sp->loop->tid,
		thread_text(s->p, sp->pid, sp->loop, name, sizeof(name)));
	/* Largest first; other last, whatever its size. */
	for (int shown = 0; shown < PHASE_KINDS; shown++) {
		int best = -1;

		for (int k = PHASE_OTHER + 1; k <= PHASE_KINDS; k++)
			if (!done[k] && ns[k] && (best < 0 || ns[k] > ns[best]))
				best = k;
		if (best < 0)
			break;
		done[best] = true;
		fprintf(out, "%s %s %.0f%%", shown ? "," : "", loop_phase_name(best), pct(ns[best], all));
	}
	if (ns[PHASE_OTHER])
		fprintf(out, ", other %.0f%%", pct(ns[PHASE_OTHER], all));
	fputc('\n', out);
}

static void write_steps(const struct summary_process *sp, FILE *out)
{
	const struct step_stats *st = &sp->steps;

	if (!st->timed)
		return;
	if (sp->steps_too_short) {
		double beat = (double)st->beat_samples / (double)st->steps;
		double step = (double)st->span_samples / (double)st->timed;

		fprintf(out, "trainsample:   steps: not counted: %s is seen for %.1f samples (%.1f ms) "
			"at a time and the rest of a step for %.1f; each must be seen for two "
			"samples, and a step for five, to tell steps apart; a higher -r may count "
			"them\n", phase_name(st->beat), beat, (double)st->beat_ns / 1e6,
			step > beat ? step - beat : 0.0);
		return;
	}
	fprintf(out, "trainsample:   steps: %" PRIu64 " (%.1f/s, by %s) after %.2f s of startup, "
		"step p50 %.1f ms, p90 %.1f ms, max %.1f ms; a step:", st->steps,
		(double)st->timed * 1e9 / (double)(st->span_ns ? st->span_ns : 1), phase_name(st->beat),
		(double)sp->startup_ns / 1e9, (double)st->p50_ns / 1e6, (double)st->p90_ns / 1e6,
		(double)st->max_ns / 1e6);
	for (int k = PHASE_OTHER + 1, n = 0; k <= PHASE_KINDS; k++) {
		int ph = k % PHASE_KINDS; /* other last */

		if (!st->phase_ns[ph])
			continue;
		fprintf(out, "%s %s %.1f ms", n++ ? "," : "", phase_name((enum phase)ph),
			(double)st->phase_ns[ph] / 1e6 / (double)st->timed);
	}
	if (st->phase_ns[PHASE_COMM] || sp->comm_busy_ns)
		fprintf(out, "; comm: the step waited %.1f ms, %.1f ms ran hidden beside it "
			"(comm threads busy while the loop computed)",
			(double)st->phase_ns[PHASE_COMM] / 1e6 / (double)st->timed,
			(double)sp->comm_hidden_ns / 1e6 / (double)st->timed);
	if (sp->epochs)
		fprintf(out, "; %" PRIu64 " epoch%s (DataLoader passes started)", sp->epochs,
			sp->epochs == 1 ? "" : "s");
	if (st->eval_passes)
		fprintf(out, "; %" PRIu64 " evaluation pass%s, %.2f s, not in the steps", st->eval_passes,
			st->eval_passes == 1 ? "" : "es", (double)sp->loop_ns[PHASE_EVAL] / 1e9);
	if (st->maybe_merged)
		fprintf(out, "; %" PRIu64 " step%s may be two: a tick came later than a %s lasts",
			st->maybe_merged, st->maybe_merged == 1 ? "" : "s", phase_name(st->beat));
	fputc('\n', out);
}

static void write_loaders(const struct summary *s, const struct summary_process *sp, FILE *out)
{
	char name[64];
	int n = 0;

	for (size_t i = 0; i < sp->nloaders; i++) {
		const struct summary_loader *l = &sp->loaders[i];

		if (!(l->train && l->steps) && !(l->val && l->val_batches))
			continue;
		summary_loader_name(s, sp, i, name, sizeof(name));
		fprintf(out, "%s %s:", n++ ? ";" : "trainsample:   DataLoaders:", name);
		if (l->train && l->steps)
			fprintf(out, " training %.1f ms a step waiting for data", (double)l->wait_ns / 1e6 /
				(double)l->steps);
		if (l->val && l->val_batches)
			fprintf(out, "%s evaluation %" PRIu64 " batches, data %.1f ms and forward %.1f ms "
				"a batch", l->train && l->steps ? "," : "", l->val_batches,
				(double)l->val_data_ns / 1e6 / (double)l->val_batches,
				(double)l->val_forward_ns / 1e6 / (double)l->val_batches);
	}
	if (n)
		fputc('\n', out);
}

static void write_process(const struct summary *s, const struct summary_process *sp, bool details,
			  FILE *out)
{
	const char *l = process_label_of(s->p, sp->pid);
	uint64_t all = sp->busy_ns + sp->idle_ns;
	char leaf[256];

	fprintf(out, "trainsample: PID %" PRIu32 "%s%s%s: %" PRIu64 " samples, busy %.0f%%, idle %.0f%%",
		sp->pid, l ? " (" : "", l ? l : "", l ? ")" : "", sp->samples, pct(sp->busy_ns, all),
		pct(sp->idle_ns, all));
	if (sp->hottest_ns) {
		frame_text(s->p, sp->hottest, leaf, sizeof(leaf));
		fprintf(out, "; hottest: %s %.0f%%", leaf, pct(sp->hottest_ns, sp->busy_ns));
	}
	fputc('\n', out);
	if (details) {
		write_threads(s, sp, out);
		write_functions(s, sp, out);
	}
	if (sp->loop) {
		write_phases(s, sp, out);
		write_steps(sp, out);
		write_loaders(s, sp, out);
	}
}

static int by_pid(const void *a, const void *b)
{
	const struct summary_process *const *x = a, *const *y = b;

	return ((*x)->pid > (*y)->pid) - ((*x)->pid < (*y)->pid);
}

int summary_text_write(const struct summary *s, bool gpu, FILE *out)
{
	const struct summary_process **shown = calloc(PROCESSES_MAX, sizeof(*shown));
	uint64_t rest = 0;
	size_t n = 0;

	if (!shown)
		return -ENOMEM;
	/* Most samples first: the busiest 12 with 1% or more, then by PID. */
	for (size_t i = 0; i < s->nprocs; i++) {
		if (n < PROCESSES_MAX && (!n || s->procs[i].samples * 100 >= s->samples))
			shown[n++] = &s->procs[i];
		else
			rest += s->procs[i].samples;
	}
	array_sort(shown, n, sizeof(*shown), by_pid);
	for (size_t i = 0; i < n; i++)
		write_process(s, shown[i], shown[i] == &s->procs[0] || shown[i]->samples * 4 >= s->samples,
			      out);
	if (n < s->nprocs)
		fprintf(out, "trainsample: and %zu more processes with %" PRIu64 " samples in all\n",
			s->nprocs - n, rest);
	summary_ranks_text(s, out);
	for (size_t i = 0; gpu && i < s->ngpus; i++) {
		const struct summary_gpu *g = &s->gpus[i];
		uint64_t window = summary_gpu_window(s, g);

		fprintf(out, "trainsample: GPU %" PRIu32 ": busy %.0f%% of %.2f s (%.3f s of kernels and "
			"copies)", g->device, pct(g->busy_ns, s->end_ns - s->start_ns),
			(double)(s->end_ns - s->start_ns) / 1e9, (double)g->busy_ns / 1e9);
		/* The run's start (imports, setup) is not the GPU's to use. */
		if (window && window * 10 < (s->end_ns - s->start_ns) * 9)
			fprintf(out, ", %.0f%% of the %.2f s since its first kernel",
				100.0 * summary_gpu_busy_share(s, g), (double)window / 1e9);
		fprintf(out, ", %" PRIu64 " kernels", g->kernels);
		if (g->comm_ns)
			fprintf(out, " (%.3f s of them communication)", (double)g->comm_ns / 1e9);
		if (g->copies)
			fprintf(out, ", %" PRIu64 " copies to or from the host (%" PRIu64 " pageable)",
				g->copies, g->pageable_copies);
		if (g->have_energy)
			fprintf(out, ", %.1f J", g->energy_j);
		fputc('\n', out);
	}
	free(shown);
	return 0;
}
