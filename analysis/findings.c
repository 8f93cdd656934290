// SPDX-License-Identifier: MIT
/*
 * Findings: the bottlenecks of a training run named from its summary, the
 * way an engineer reads a profile, each with what it costs (a share of
 * the step, or of the run), its evidence (the lines and the numbers) and
 * what usually fixes it. A rule reports only what the recording shows:
 * no finding without its evidence.
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

struct finding *finding_add(struct finding_list *l, const char *id, double cost, uint32_t pid,
			    const char *hint)
{
	struct finding *f;

	if (l->n == FINDINGS_MAX)
		return NULL;
	f = &l->v[l->n++];
	*f = (struct finding){ .id = id, .cost = cost, .pid = pid };
	if (hint)
		snprintf(f->hint, sizeof(f->hint), "%s", hint);
	return f;
}

void finding_hint(struct finding *f, const char *fmt, ...)
{
	size_t at = strlen(f->hint);
	va_list ap;

	if (at && at + 2 < sizeof(f->hint)) {
		memcpy(f->hint + at, "; ", 3);
		at += 2;
	}
	va_start(ap, fmt);
	vsnprintf(f->hint + at, sizeof(f->hint) - at, fmt, ap);
	va_end(ap);
}

bool finding_listed(const struct finding_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].id, id))
			return true;
	return false;
}

void finding_evidence(struct finding *f, const char *fmt, ...)
{
	va_list ap;

	if (!f || f->nevidence == EVIDENCE_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(f->evidence[f->nevidence++], sizeof(f->evidence[0]), fmt, ap);
	va_end(ap);
}

/* "function (file.py:LINE)", as the pictures name a frame. */
void finding_line_text(const struct profile *p, uint32_t frame, char *buf, size_t len)
{
	const struct frame *f = frame != FRAME_NONE ? profile_frame(p, frame) : NULL;
	const char *file = f && f->module ? profile_string(p, f->module) : NULL;
	const char *base = file ? strrchr(file, '/') : NULL;

	if (!f)
		snprintf(buf, len, "?");
	else if (file && f->line)
		snprintf(buf, len, "%s (%s:%" PRIu32 ")", profile_string(p, f->name),
			 base ? base + 1 : file, f->line);
	else
		snprintf(buf, len, "%s", profile_string(p, f->name));
}

static bool steps_counted(const struct summary_process *sp)
{
	return sp->loop && sp->steps.timed && !sp->steps_too_short;
}

static double ms_a_step(const struct summary_process *sp, uint64_t ns)
{
	return (double)ns / 1e6 / (double)sp->steps.timed;
}

static uint64_t step_ns(const struct summary_process *sp)
{
	uint64_t all = 0;

	for (int k = 0; k < PHASE_KINDS; k++)
		all += sp->steps.phase_ns[k];
	return all;
}

/* A phase's time and what it is a share of: the steps' time where steps
 * were counted, else the loop thread's past its startup. */
static bool phase_of_loop(const struct summary_process *sp, enum phase ph, uint64_t *ns,
			  uint64_t *base)
{
	*ns = *base = 0;
	if (steps_counted(sp)) {
		*ns = sp->steps.phase_ns[ph];
		*base = step_ns(sp);
	} else {
		*ns = sp->loop_ns[ph];
		for (int k = 0; k < PHASE_KINDS; k++)
			*base += sp->loop_ns[k];
	}
	return *base != 0;
}

/* "20.4 of 51.3 ms a step" where steps were counted, else "of 12.0 s". */
static void cost_text(const struct summary_process *sp, uint64_t ns, uint64_t base, char *buf,
		      size_t len)
{
	if (steps_counted(sp))
		snprintf(buf, len, "%.1f of %.1f ms a step", ms_a_step(sp, ns), ms_a_step(sp, base));
	else
		snprintf(buf, len, "%.2f of %.2f s", (double)ns / 1e9, (double)base / 1e9);
}

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

static void data_bound(const struct summary *s, const struct summary_process *sp,
		       struct finding_list *l)
{
	const struct summary_loader *top = NULL;
	uint64_t data, base;
	struct finding *f;
	char line[200], name[64], cost[64];

	/* A training loop's (a worker's loop is all data, and fine). */
	if (!(sp->loop->phase_ns[PHASE_FORWARD] + sp->loop->phase_ns[PHASE_BACKWARD] +
	      sp->loop->phase_ns[PHASE_OPTIMIZER]) ||
	    !phase_of_loop(sp, PHASE_DATA, &data, &base) || data * 4 < base)
		return;
	for (size_t i = 0; i < sp->nloaders; i++)
		if (sp->loaders[i].train && (!top || sp->loaders[i].step_ns[PHASE_DATA] >
						     top->step_ns[PHASE_DATA]))
			top = &sp->loaders[i];
	f = finding_add(l, "data-bound", (double)data / (double)base, sp->pid, NULL);
	if (!f)
		return;
	data_bound_hint(s, sp, top, l, f);
	cost_text(sp, data, base, cost, sizeof(cost));
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

int finding_heaviest_site(const struct summary_process *sp, int kind, bool *used)
{
	int best = -1;

	for (size_t i = 0; i < sp->nsites && i < 64; i++)
		if (!used[i] && sp->sites[i].phase == kind &&
		    (best < 0 || sp->sites[i].ns > sp->sites[best].ns))
			best = (int)i;
	if (best >= 0)
		used[best] = true;
	return best;
}

/* Up to max lines of the kind's sites, heaviest first, "PREFIXline: N ms
 * a step"; none under least ns. */
static void site_lines(const struct summary *s, const struct summary_process *sp, int kind,
		       int max, uint64_t least, const char *prefix, struct finding *f)
{
	bool used[64] = { false };
	char line[200];

	for (int k = 0; k < max; k++) {
		int i = finding_heaviest_site(sp, kind, used);

		if (i < 0 || sp->sites[i].ns < least)
			return;
		finding_line_text(s->p, sp->sites[i].frame, line, sizeof(line));
		finding_evidence(f, "%s%s: %.1f ms a step", prefix, line,
				 ms_a_step(sp, sp->sites[i].ns));
	}
}

/* The lines that sync or log, costliest first. */
static void site_evidence(const struct summary *s, const struct summary_process *sp,
			  enum phase ph, struct finding *f)
{
	site_lines(s, sp, (int)ph, EVIDENCE_MAX, 0, "", f);
}

/*
 * Python work in the step that is none of the phases (not the model, the
 * data, the optimizer, a sync or logging): metrics, JSON, string
 * formatting, bookkeeping. Reported where one line of the loop's body
 * holds a tenth of the step or more: the line, and the function at the
 * top of the stack under it.
 */
static void python_hotspot(const struct summary *s, const struct summary_process *sp,
			   struct finding_list *l)
{
	bool used[64] = { false };
	uint64_t ns, base;
	struct finding *f;
	char line[160];
	int top;

	/* Without a model seen (no forward or backward), "other" may be it. */
	if (!steps_counted(sp) || !phase_of_loop(sp, PHASE_OTHER, &ns, &base) ||
	    !(sp->steps.phase_ns[PHASE_FORWARD] + sp->steps.phase_ns[PHASE_BACKWARD]))
		return;
	top = finding_heaviest_site(sp, PHASE_OTHER, used);
	if (top < 0 || sp->sites[top].ns * 10 < base)
		return;
	f = finding_add(l, "python-hotspot", (double)sp->sites[top].ns / (double)base, sp->pid,
			"do it every N steps, or off the step's path (a thread, a callback at "
			"logging time); keep metrics on the GPU and read them rarely; format and "
			"serialize once per report, not per step");
	if (!f)
		return;
	finding_line_text(s->p, sp->sites[top].frame, line, sizeof(line));
	snprintf(f->title, sizeof(f->title), "%s takes %.0f%% of the step, outside the model, "
		 "the data and the optimizer", line, 100.0 * f->cost);
	/* Lines under a hundredth of the step are noise here. */
	site_lines(s, sp, PHASE_OTHER, 3, base / 100, "", f);
	site_lines(s, sp, SITE_OTHER_INNER, 2, base / 100, "in ", f);
}

static void phase_cost(const struct summary *s, const struct summary_process *sp,
		       struct finding_list *l, enum phase ph, double least, const char *id,
		       const char *what, const char *hint)
{
	uint64_t ns, base;
	struct finding *f;
	char cost[64];

	if (!phase_of_loop(sp, ph, &ns, &base) || (double)ns < least * (double)base)
		return;
	f = finding_add(l, id, (double)ns / (double)base, sp->pid, hint);
	if (!f)
		return;
	cost_text(sp, ns, base, cost, sizeof(cost));
	snprintf(f->title, sizeof(f->title), "%s %.0f%% of the loop's time (%s)", what,
		 100.0 * f->cost, cost);
	if (steps_counted(sp))
		site_evidence(s, sp, ph, f);
	else
		finding_evidence(f, "the loop thread's samples in %s: %.2f s (steps not counted: see "
				 "the summary)",
				 phase_name(ph), (double)ns / 1e9);
}

static void slow_start(const struct summary *s, const struct summary_process *sp,
		       struct finding_list *l)
{
	uint64_t all = 0, before = 0;
	int top = -1;
	struct finding *f;

	for (int k = 0; k <= PHASE_KINDS; k++)
		all += sp->loop_ns[k];
	if (!all || sp->startup_ns < 1000000000ull || sp->loop_ns[LOOP_STARTUP] * 4 < all)
		return;
	f = finding_add(l, "slow-startup", (double)sp->loop_ns[LOOP_STARTUP] / (double)all, sp->pid,
			"import lazily, build and load the model once; leave the start out of a profile "
			"with report --steps 2:");
	if (!f)
		return;
	snprintf(f->title, sizeof(f->title), "%.1f s before the first step: %.0f%% of the loop's run",
		 (double)sp->startup_ns / 1e9, 100.0 * f->cost);
	finding_evidence(f, "the loop thread's first sample %.2f s before its first step; %" PRIu64
			 " steps in %.2f s after it", (double)sp->startup_ns / 1e9, sp->steps.steps,
			 (double)sp->steps.span_ns / 1e9);
	for (int k = 0; k < PHASE_KINDS; k++) {
		before += sp->steps.before_ns[k];
		if (k != PHASE_OTHER && sp->steps.before_ns[k] &&
		    (top < 0 || sp->steps.before_ns[k] > sp->steps.before_ns[top]))
			top = k;
	}
	if (before && top >= 0 && sp->steps.before_ns[top] * 10 >= before)
		finding_evidence(f, "of it %.0f%% %s%s",
				 100.0 * (double)sp->steps.before_ns[top] / (double)before,
				 phase_name((enum phase)top), top == PHASE_DATA ?
				 " (the DataLoader's first batch: its workers starting)" : "");
	(void)s;
}

static void worker_restarts(const struct summary *s, const struct summary_process *sp,
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

static int by_cost(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	return (x->cost < y->cost) - (x->cost > y->cost);
}

static void findings_find(const struct summary *s, struct finding_list *l)
{
	l->n = 0;
	findings_gpu_underused(s, l);
	findings_host_copies(s, l);
	findings_cpu_oversubscribed(s, l);
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct summary_process *sp = &s->procs[i];

		findings_gil_contention(s, sp, l);
		findings_cpu_copies(s, sp, l);
		if (!sp->loop)
			continue;
		slow_start(s, sp, l);
		worker_restarts(s, sp, l);
		data_bound(s, sp, l);
		/* Waiting for a GPU that is busy throughout costs nothing: the
		 * GPU sets the pace. */
		if (summary_process_gpu_busy(s, sp) < 0.8)
			phase_cost(s, sp, l, PHASE_SYNC, 0.05, "host-sync", "the loop waits for the GPU:",
				   "keep results on the GPU: read .item() every N steps, not each one; "
				   "no .cpu()/.tolist() in the step; copies with non_blocking=True");
		python_hotspot(s, sp, l);
		phase_cost(s, sp, l, PHASE_LOGGING, 0.05, "logging", "logging takes",
			   "log every N steps; format messages lazily; move metrics off the step's path");
	}
	array_sort(l->v, l->n, sizeof(l->v[0]), by_cost);
}

static const char *severity(double cost)
{
	return cost >= 0.3 ? "high" : cost >= 0.1 ? "medium" : "low";
}

int findings_write(const struct summary *s, size_t max, FILE *out)
{
	struct finding_list *l = malloc(sizeof(*l));

	if (!l)
		return -ENOMEM;
	findings_find(s, l);
	if (l->n)
		fprintf(out, "trainsample: findings, the costliest first%s:\n",
			max < l->n ? " (report --findings lists them all)" : "");
	else if (max == SIZE_MAX) /* asked for all: say there are none */
		fprintf(out, "trainsample: no findings: no rule fired on this recording (data loading, "
			"GPU syncs, logging, a slow start, worker restarts, the GPU's use, the CPUs, "
			"the GIL)\n");
	for (size_t i = 0; i < l->n && i < max; i++) {
		const struct finding *f = &l->v[i];

		if (f->pid)
			fprintf(out, "trainsample:   [%s] %s, PID %" PRIu32 ": %s\n", severity(f->cost),
				f->id, f->pid, f->title);
		else
			fprintf(out, "trainsample:   [%s] %s: %s\n", severity(f->cost), f->id, f->title);
		for (int k = 0; k < f->nevidence; k++)
			fprintf(out, "trainsample:     %s\n", f->evidence[k]);
		fprintf(out, "trainsample:     try: %s\n", f->hint);
	}
	free(l);
	return 0;
}

int findings_json_write(const struct summary *s, FILE *out)
{
	struct finding_list *l = malloc(sizeof(*l));

	if (!l)
		return -ENOMEM;
	findings_find(s, l);
	fputc('[', out);
	for (size_t i = 0; i < l->n; i++) {
		const struct finding *f = &l->v[i];

		fprintf(out, "%s\n  {\"id\": \"%s\", \"severity\": \"%s\", \"cost\": %.4f, \"pid\": %" PRIu32
			", \"title\": ", i ? "," : "", f->id, severity(f->cost), f->cost, f->pid);
		json_put_string(out, f->title);
		fputs(", \"evidence\": [", out);
		for (int k = 0; k < f->nevidence; k++) {
			fputs(k ? ", " : "", out);
			json_put_string(out, f->evidence[k]);
		}
		fputs("], \"hint\": ", out);
		json_put_string(out, f->hint);
		fputc('}', out);
	}
	fputc(']', out);
	free(l);
	return 0;
}
