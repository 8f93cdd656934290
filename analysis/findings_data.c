// SPDX-License-Identifier: MIT
/*
 * The findings about data loading (split out of findings.c): data-bound,
 * with each loader's own workers as its evidence and hints that follow
 * the recording, and worker-restart, naming the loader that restarts.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings_impl.h"
#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

/* Loading threads' busy shares, "91% and 97%" (up to four, then "..."). */
static void shares_text(const struct summary_process *sp, int loader, char *buf, size_t len)
{
	size_t n = 0, at = 0, total = 0;

	for (size_t i = 0; i < sp->nworkers; i++)
		total += sp->workers[i].loader == loader && sp->workers[i].all_ns;
	buf[0] = '\0';
	for (size_t i = 0; i < sp->nworkers && at < len; i++) {
		const struct summary_worker *k = &sp->workers[i];

		if (k->loader != loader || !k->all_ns)
			continue;
		n++;
		if (n > 4) {
			snprintf(buf + at, len - at, ", ...");
			return;
		}
		at += (size_t)snprintf(buf + at, len - at, "%s%.0f%%",
				       n == 1 ? "" : n == total ? " and " : ", ",
				       100.0 * (double)k->busy_ns / (double)k->all_ns);
	}
}

/*
 * One loader's workers (or those of no known loader: -1): their loading
 * threads' busy shares and their hottest line. Each worker's own loading
 * thread, not its process: its feeder and other threads sleep, and
 * averaging them in hid workers busy nearly all the time.
 */
static void loader_workers_evidence(const struct summary *s, const struct summary_process *sp,
				    int loader, const char *name, struct finding *f)
{
	uint64_t best_ns = 0, busy = 0, waiting = 0;
	uint32_t best = FRAME_NONE;
	size_t n = 0;
	uint64_t starts;
	char text[200], shares[64], passes[64] = "", wait[48] = "";

	for (size_t i = 0; i < sp->nworkers; i++) {
		const struct summary_worker *k = &sp->workers[i];

		if (k->loader != loader || !k->all_ns)
			continue;
		n++;
		busy += k->busy_ns;
		waiting += k->cpu_wait_ns;
		if (k->hottest_ns > best_ns) {
			best_ns = k->hottest_ns;
			best = k->hottest;
		}
	}
	if (!n)
		return;
	shares_text(sp, loader, shares, sizeof(shares));
	/* Busy includes waiting for a CPU: more workers do not shorten that. */
	if (busy && waiting * 10 >= busy)
		snprintf(wait, sizeof(wait), ", %.0f%% of that waiting for a CPU",
			 100.0 * (double)waiting / (double)busy);
	finding_line_text(s->p, best, text, sizeof(text));
	starts = loader >= 0 ? sp->loaders[loader].worker_starts : 0;
	if (starts >= 2)
		snprintf(passes, sizeof(passes), " (started at each of %" PRIu64 " passes)", starts);
	if (loader >= 0)
		finding_evidence(f, "%s's %zu worker%s%s: %s loading thread%s busy %s of the time%s; "
				 "hottest: %s", name, n, n == 1 ? "" : "s", passes,
				 n == 1 ? "its" : "their", n == 1 ? "" : "s", shares, wait, text);
	else
		finding_evidence(f, "%zu DataLoader worker%s (%s): %s loading thread%s busy %s of the "
				 "time%s; hottest: %s", n, n == 1 ? "" : "s", name,
				 n == 1 ? "its" : "their", n == 1 ? "" : "s", shares, wait, text);
}

/* The fetched loader's workers first, then the others' (a validation
 * loader's, short-lived), then those of no loader told. */
static void workers_evidence(const struct summary *s, const struct summary_process *sp,
			     const struct summary_loader *top, struct finding *f)
{
	char name[64];
	int first = top ? (int)(top - sp->loaders) : -1;

	if (first >= 0) {
		summary_loader_name(s, sp, (size_t)first, name, sizeof(name));
		loader_workers_evidence(s, sp, first, name, f);
	}
	for (size_t i = 0; i < sp->nloaders; i++) {
		if ((int)i == first)
			continue;
		summary_loader_name(s, sp, i, name, sizeof(name));
		loader_workers_evidence(s, sp, (int)i, name, f);
	}
	loader_workers_evidence(s, sp, -1, sp->nloaders ? "their loader not told" : "loaders not told: "
				"steps not counted", f);
}

/* The loader's workers (and those of no loader told): how many, and the
 * share of their loading threads' busy time spent waiting for a CPU. */
static size_t workers_of(const struct summary_process *sp, const struct summary_loader *top,
			 double *waiting)
{
	uint64_t busy = 0, wait = 0;
	size_t n = 0;

	for (size_t i = 0; i < sp->nworkers; i++) {
		const struct summary_worker *k = &sp->workers[i];

		if (top && k->loader != (int)(top - sp->loaders) && k->loader >= 0)
			continue;
		n++;
		busy += k->busy_ns;
		wait += k->cpu_wait_ns;
	}
	*waiting = busy ? (double)wait / (double)busy : 0;
	return n;
}

/*
 * What to try, from what the recording shows: more workers unless the
 * CPUs are oversubscribed already, or the workers already wait for a
 * CPU a quarter of their busy time (more would wait too);
 * persistent_workers only for a loader whose workers were started again
 * at each pass; pin_memory only where the job used a GPU.
 */
static void data_bound_hint(const struct summary *s, const struct summary_process *sp,
			    const struct summary_loader *top, const struct finding_list *l,
			    struct finding *f)
{
	double waiting;
	size_t n = workers_of(sp, top, &waiting);

	if (finding_listed(l, "cpu-oversubscribed"))
		finding_hint(f, "not more workers: the CPUs are oversubscribed (cpu-oversubscribed); "
			     "fewer threads in each worker (torch.set_num_threads(1) in a "
			     "worker_init_fn), or fewer workers");
	else if (waiting >= 0.25)
		finding_hint(f, "not more workers: its workers wait for a CPU %.0f%% of their busy "
			     "time; free CPUs first (torch.set_num_threads(1) in a worker_init_fn, "
			     "other load off the machine)", 100.0 * waiting);
	else if (!n && top && top->wait_ns * 10 < top->step_ns[PHASE_DATA])
		finding_hint(f, "DataLoader workers (num_workers > 0) to load in parallel with the step");
	else
		finding_hint(f, "more DataLoader workers (num_workers)");
	if (top && top->worker_starts >= 2)
		finding_hint(f, "persistent_workers=True (its workers start again at each pass)");
	if (s->ngpus || sp->gpu_kernel_seen)
		finding_hint(f, "pin_memory=True");
	finding_hint(f, "less work in __getitem__ (decode and augment once, or on the GPU)");
}

void findings_data_bound(const struct summary *s, const struct summary_process *sp,
		       struct finding_list *l)
{
	const struct summary_loader *top = NULL;
	uint64_t data, base;
	struct finding *f;
	char line[200], name[64], cost[64];

	/* A training loop's (a worker's loop is all data, and fine). */
	if (!(sp->loop->phase_ns[PHASE_FORWARD] + sp->loop->phase_ns[PHASE_BACKWARD] +
	      sp->loop->phase_ns[PHASE_OPTIMIZER]) ||
	    !finding_phase_of_loop(sp, PHASE_DATA, &data, &base) || data * 4 < base)
		return;
	for (size_t i = 0; i < sp->nloaders; i++)
		if (sp->loaders[i].train && (!top || sp->loaders[i].step_ns[PHASE_DATA] >
						     top->step_ns[PHASE_DATA]))
			top = &sp->loaders[i];
	f = finding_add(l, "data-bound", (double)data / (double)base, sp->pid, NULL);
	if (!f)
		return;
	data_bound_hint(s, sp, top, l, f);
	finding_cost_text(sp, data, base, cost, sizeof(cost));
	snprintf(f->title, sizeof(f->title), "the loop waits for data: %.0f%% of its time (%s) in "
		 "the DataLoader", 100.0 * f->cost, cost);
	if (top) {
		finding_line_text(s->p, top->site, line, sizeof(line));
		summary_loader_name(s, sp, (size_t)(top - sp->loaders), name, sizeof(name));
		finding_evidence(f, "fetched from %s at %s", name, line);
		if (top->wait_ns * 10 >= top->step_ns[PHASE_DATA])
			finding_evidence(f, "%.1f ms a step blocked waiting for a batch from the workers",
					 top->steps ? (double)top->wait_ns / 1e6 / (double)top->steps : 0.0);
		else
			finding_evidence(f, "hardly blocked waiting for a batch: the loader's own work in the "
					 "loop's thread (collate, __getitem__ without workers) is the cost");
	} else {
		finding_evidence(f, "the loop thread's time in data loading: %.2f s of %.2f s",
				 (double)data / 1e9, (double)base / 1e9);
	}
	workers_evidence(s, sp, top, f);
}


void findings_worker_restarts(const struct summary *s, const struct summary_process *sp,
			    struct finding_list *l)
{
	uint64_t all = 0, edges = sp->epoch_start_ns + sp->epoch_stop_ns;
	struct finding *f;
	char name[64];
	int top = -1;

	for (int k = 0; k <= PHASE_KINDS; k++)
		all += sp->loop_ns[k];
	if (sp->epochs < 2 || !all || edges * 20 < all)
		return;
	/* The loader that restarts: the one whose passes' edges took most. */
	for (size_t i = 0; i < sp->nloaders; i++) {
		const struct summary_loader *d = &sp->loaders[i];

		if (d->epochs && (top < 0 || d->epoch_start_ns + d->epoch_stop_ns >
				  sp->loaders[top].epoch_start_ns + sp->loaders[top].epoch_stop_ns))
			top = (int)i;
	}
	if (top >= 0)
		summary_loader_name(s, sp, (size_t)top, name, sizeof(name));
	f = finding_add(l, "worker-restart", (double)edges / (double)all, sp->pid, NULL);
	if (!f)
		return;
	finding_hint(f, "persistent_workers=True on %s keeps its workers from one epoch to the next",
		     top >= 0 ? name : "the DataLoader");
	snprintf(f->title, sizeof(f->title), "each epoch starts %s again: %" PRIu64
		 " epochs, %.1f ms each (%.0f%% of the loop's run)",
		 top >= 0 ? name : "its DataLoader", sp->epochs,
		 (double)edges / 1e6 / (double)sp->epochs, 100.0 * f->cost);
	finding_evidence(f, "the loop making the loader's iterator (DataLoader.__iter__, its workers "
			 "starting) %.2f s in all, %.1f ms an epoch", (double)sp->epoch_start_ns / 1e9,
			 (double)sp->epoch_start_ns / 1e6 / (double)sp->epochs);
	if (sp->epoch_stop_ns)
		finding_evidence(f, "ending each pass (_shutdown_workers: its workers joined) %.2f s "
				 "in all, %.1f ms an epoch", (double)sp->epoch_stop_ns / 1e9,
				 (double)sp->epoch_stop_ns / 1e6 / (double)sp->epochs);
}

/* The innermost Python frame of a stack, else its innermost frame. */
uint32_t finding_python_leaf(const struct summary *s, uint32_t stack)
{
	uint32_t best = FRAME_NONE;

	for (uint32_t id = stack; id; id = profile_stack(s->p, id)->parent) {
		uint32_t frame = profile_stack(s->p, id)->frame;

		if (best == FRAME_NONE)
			best = frame;
		if (profile_frame(s->p, frame)->kind == FRAME_PYTHON)
			return frame;
	}
	return best;
}

