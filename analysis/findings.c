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
	*f = (struct finding){ .id = id, .cost = cost, .pid = pid, .hint = hint };
	return f;
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
	const struct frame *f = frame ? profile_frame(p, frame) : NULL;
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

/* The DataLoader workers' hottest line, over every worker process. */
static void workers_evidence(const struct summary *s, struct finding *f)
{
	uint64_t busy = 0, all = 0, best_ns = 0;
	uint32_t best = 0;
	size_t n = 0;
	char text[200];

	for (size_t i = 0; i < s->nprocs; i++) {
		const struct summary_process *w = &s->procs[i];
		const char *label = process_label_of(s->p, w->pid);

		if (!label || strncmp(label, "DataLoader worker", 17))
			continue;
		n++;
		busy += w->busy_ns;
		all += w->busy_ns + w->idle_ns;
		if (w->hottest_ns > best_ns) {
			best_ns = w->hottest_ns;
			best = w->hottest;
		}
	}
	if (!n || !all)
		return;
	finding_line_text(s->p, best, text, sizeof(text));
	finding_evidence(f, "its %zu worker process%s busy %.0f%% of the time; hottest: %s", n,
			 n == 1 ? "" : "es", 100.0 * (double)busy / (double)all, text);
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
	f = finding_add(l, "data-bound", (double)data / (double)base, sp->pid,
			"more DataLoader workers (num_workers), persistent_workers=True, pin_memory=True; "
			"less work in __getitem__ (decode and augment once, or on the GPU)");
	if (!f)
		return;
	cost_text(sp, data, base, cost, sizeof(cost));
	snprintf(f->title, sizeof(f->title), "the loop waits for data: %.0f%% of its time (%s) in "
		 "the DataLoader", 100.0 * f->cost, cost);
	for (size_t i = 0; i < sp->nloaders; i++)
		if (sp->loaders[i].train && (!top || sp->loaders[i].step_ns[PHASE_DATA] >
						     top->step_ns[PHASE_DATA]))
			top = &sp->loaders[i];
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
	workers_evidence(s, f);
}

/* The lines that sync or log, costliest first. */
/* The heaviest site of a kind (-1 none), past those used. */
static int heaviest_site(const struct summary_process *sp, int kind, bool *used)
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
		int i = heaviest_site(sp, kind, used);

		if (i < 0 || sp->sites[i].ns < least)
			return;
		finding_line_text(s->p, sp->sites[i].frame, line, sizeof(line));
		finding_evidence(f, "%s%s: %.1f ms a step", prefix, line,
				 ms_a_step(sp, sp->sites[i].ns));
	}
}

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
	top = heaviest_site(sp, PHASE_OTHER, used);
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

	for (int k = 0; k <= PHASE_KINDS; k++)
		all += sp->loop_ns[k];
	if (sp->epochs < 2 || !all || edges * 20 < all)
		return;
	f = finding_add(l, "worker-restart", (double)edges / (double)all, sp->pid,
			"persistent_workers=True keeps the DataLoader's workers from one epoch to the next");
	if (!f)
		return;
	snprintf(f->title, sizeof(f->title), "each epoch starts its DataLoader again: %" PRIu64
		 " epochs, %.1f ms each (%.0f%% of the loop's run)", sp->epochs,
		 (double)edges / 1e6 / (double)sp->epochs, 100.0 * f->cost);
	finding_evidence(f, "the loop making the loader's iterator (DataLoader.__iter__, its workers "
			 "starting) %.2f s in all, %.1f ms an epoch", (double)sp->epoch_start_ns / 1e9,
			 (double)sp->epoch_start_ns / 1e6 / (double)sp->epochs);
	if (sp->epoch_stop_ns)
		finding_evidence(f, "ending each pass (_shutdown_workers: its workers joined) %.2f s "
				 "in all, %.1f ms an epoch", (double)sp->epoch_stop_ns / 1e9,
				 (double)sp->epoch_stop_ns / 1e6 / (double)sp->epochs);
	(void)s;
}

/* Threads of one process that take turns holding the GIL: each holds it a
 * fifth of its time or more, and together they hold it nearly always. */
static void gil_contention(const struct summary *s, const struct summary_process *sp,
			   struct finding_list *l)
{
	uint64_t held = 0, longest = 0;
	size_t n = 0;
	struct finding *f;

	for (size_t i = 0; i < sp->nthreads; i++) {
		const struct summary_thread *t = &sp->threads[i];
		uint64_t all = t->busy_ns + t->idle_ns;

		longest = all > longest ? all : longest;
		if (all && t->gil_ns * 5 >= all) {
			n++;
			held += t->gil_ns;
		}
	}
	if (n < 2 || !longest || held * 10 < longest * 8)
		return;
	f = finding_add(l, "gil-contention", 1.0 - 1.0 / (double)n, sp->pid,
			"move CPU work into processes (DataLoader workers, multiprocessing) or into native "
			"code that releases the GIL; threads help only while they wait");
	if (!f)
		return;
	snprintf(f->title, sizeof(f->title), "%zu threads take turns holding the GIL (held %.0f%% of "
		 "the time): they run one at a time", n, 100.0 * (double)held / (double)longest);
	for (size_t i = 0; i < sp->nthreads; i++) {
		const struct summary_thread *t = &sp->threads[i];
		uint64_t all = t->busy_ns + t->idle_ns;
		const char *name = profile_thread_name(s->p, sp->pid, t->tid);

		if (all && t->gil_ns * 5 >= all)
			finding_evidence(f, "%s (%" PRIu32 ") held it %.0f%% of its time, was on a CPU %.0f%%",
					 name && *name ? name : "thread", t->tid,
					 100.0 * (double)t->gil_ns / (double)all,
					 100.0 * (double)t->busy_ns / (double)all);
	}
}

/*
 * More runnable threads than CPUs: the target's threads spend a fifth of
 * their busy time or more waiting on a run queue, and it has more of them
 * runnable on average than it may use CPUs. Others' load alone (a busy
 * machine) is not the target's to fix and is not reported.
 */
static void cpu_oversubscribed(const struct summary *s, struct finding_list *l)
{
	uint64_t busy = 0, wait = 0, omp = 0, all, waits;
	uint64_t wall = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	const struct summary_process *wp[2] = { NULL, NULL };
	const struct summary_thread *wt[2] = { NULL, NULL };
	double runnable, cost;
	bool queued, spinning;
	unsigned int team = 0; /* threads busy a tenth of the run or more */
	struct finding *f;

	for (size_t i = 0; i < s->nprocs; i++) {
		const struct summary_process *sp = &s->procs[i];

		busy += sp->busy_ns;
		wait += sp->cpu_wait_ns;
		omp += sp->omp_runtime_ns;
		for (size_t k = 0; k < sp->nthreads; k++) {
			const struct summary_thread *t = &sp->threads[k];

			team += t->busy_ns * 10 >= wall;
			if (!wt[0] || t->cpu_wait_ns > wt[0]->cpu_wait_ns) {
				wt[1] = wt[0], wp[1] = wp[0];
				wt[0] = t, wp[0] = sp;
			} else if (!wt[1] || t->cpu_wait_ns > wt[1]->cpu_wait_ns) {
				wt[1] = t, wp[1] = sp;
			}
		}
	}
	/* The threads' own counters where recorded: a thread kept off the
	 * CPUs can miss its samples, not its run-queue wait. */
	if (s->target_cpu_ns + s->target_wait_ns) {
		all = s->target_cpu_ns + s->target_wait_ns;
		waits = s->target_wait_ns;
	} else {
		all = busy;
		waits = wait;
	}
	if (!busy || !all || !wall || !s->cpus)
		return;
	/* Counted at each tick where recorded: threads in our stops are
	 * runnable too, where their counters show neither running nor
	 * waiting. */
	runnable = s->runnable ? s->runnable : (double)all / (double)wall;
	queued = waits * 5 >= all && runnable > (double)s->cpus;
	/* An OpenMP team larger than the CPUs: its runtime throttles the
	 * spinning, so few wait on a run queue, but the team's time goes
	 * into the runtime itself (waking, spinning, sleeping at barriers). */
	spinning = omp * 5 >= busy && team > s->cpus;
	if (!queued && !spinning)
		return;
	cost = queued ? (double)waits / (double)all : 0;
	if (spinning && (double)omp / (double)busy > cost)
		cost = (double)omp / (double)busy;
	f = finding_add(l, "cpu-oversubscribed", cost, 0,
			"fewer runnable threads than CPUs: num_workers at most the CPUs less one for the "
			"main process; torch.set_num_threads(n) or OMP_NUM_THREADS=n in each process, "
			"n times the processes at most the CPUs");
	if (!f)
		return;
	if (queued)
		snprintf(f->title, sizeof(f->title), "%.1f threads runnable on average for %u CPUs: "
			 "%.0f%% of their busy time waiting for a CPU", runnable, s->cpus,
			 100.0 * (double)waits / (double)all);
	else
		snprintf(f->title, sizeof(f->title), "%u busy threads for %u CPUs", team, s->cpus);
	if (spinning)
		snprintf(f->title + strlen(f->title), sizeof(f->title) - strlen(f->title),
			 ", %.0f%% of their busy time inside the OpenMP runtime",
			 100.0 * (double)omp / (double)busy);
	finding_evidence(f, "busy %.2f s in %.2f s, of which %.2f s waiting on a run queue (schedstat)",
			 (double)all / 1e9, (double)wall / 1e9, (double)waits / 1e9);
	if (omp * 20 >= busy)
		finding_evidence(f, "%.0f%% of the busy time inside the OpenMP runtime (its threads "
				 "waiting at barriers, spinning: OMP_WAIT_POLICY=passive stops the spin)",
				 100.0 * (double)omp / (double)busy);
	for (int k = 0; k < 2; k++) {
		const char *name, *label;

		if (!wt[k] || !wt[k]->cpu_wait_ns)
			continue;
		name = profile_thread_name(s->p, wp[k]->pid, wt[k]->tid);
		label = process_label_of(s->p, wp[k]->pid);
		finding_evidence(f, "waiting most: PID %" PRIu32 "%s%s%s thread %" PRIu32 "%s%s: %.0f%% of "
				 "its busy time", wp[k]->pid, label ? " (" : "", label ? label : "",
				 label ? ")," : ",", wt[k]->tid, name ? " " : "", name ? name : "",
				 100.0 * (double)wt[k]->cpu_wait_ns / (double)wt[k]->busy_ns);
	}
}

/* The innermost Python frame of a stack, else its innermost frame. */
uint32_t finding_python_leaf(const struct summary *s, uint32_t stack)
{
	uint32_t best = 0;

	for (uint32_t id = stack; id; id = profile_stack(s->p, id)->parent) {
		uint32_t frame = profile_stack(s->p, id)->frame;

		if (!best)
			best = frame;
		if (profile_frame(s->p, frame)->kind == FRAME_PYTHON)
			return frame;
	}
	return best;
}

/* Tensor copies and dtype or device conversions on the CPU (with
 * --native: ATen's copy_, _to_copy, clone): a tenth of the process's busy
 * time or more. */
static void cpu_copies(const struct summary *s, const struct summary_process *sp,
		       struct finding_list *l)
{
	struct finding *f;
	bool used[64] = { false };
	char line[160];

	if (!sp->native_ns || sp->cpu_copy_ns * 10 < sp->busy_ns)
		return;
	f = finding_add(l, "cpu-copies", (double)sp->cpu_copy_ns / (double)sp->busy_ns, sp->pid,
			"make tensors in the dtype and on the device they are used in; move .to(), "
			".float(), .contiguous() and clones out of the step or onto the GPU; "
			"pin_memory=True with non_blocking=True for copies to the GPU");
	if (!f)
		return;
	snprintf(f->title, sizeof(f->title), "tensor copies and conversions on the CPU take %.0f%% "
		 "of its busy time", 100.0 * f->cost);
	finding_evidence(f, "%.2f s of %.2f s busy in ATen's copy_, _to_copy and clone "
			 "(native frames)", (double)sp->cpu_copy_ns / 1e9, (double)sp->busy_ns / 1e9);
	for (int k = 0; k < 3; k++) {
		int i = heaviest_site(sp, SITE_CPU_COPY, used);

		if (i < 0 || sp->sites[i].ns * 100 < sp->busy_ns)
			break;
		finding_line_text(s->p, sp->sites[i].frame, line, sizeof(line));
		finding_evidence(f, "called from %s: %.0f%% of busy time", line,
				 100.0 * (double)sp->sites[i].ns / (double)sp->busy_ns);
	}
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
	cpu_oversubscribed(s, l);
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct summary_process *sp = &s->procs[i];

		gil_contention(s, sp, l);
		cpu_copies(s, sp, l);
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
	qsort(l->v, l->n, sizeof(l->v[0]), by_cost);
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
