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

/* A process's steps and their figures, for the rules. */
bool finding_steps_counted(const struct summary_process *sp)
{
	return sp->loop && sp->steps.timed && !sp->steps_too_short;
}

static double finding_ms_a_step(const struct summary_process *sp, uint64_t ns)
{
	return (double)ns / 1e6 / (double)sp->steps.timed;
}

static uint64_t finding_step_ns(const struct summary_process *sp)
{
	uint64_t all = 0;

	for (int k = 0; k < PHASE_KINDS; k++)
		all += sp->steps.phase_ns[k];
	return all;
}

/* A phase's time and what it is a share of: the steps' time where steps
 * were counted, else the loop thread's past its startup. */
bool finding_phase_of_loop(const struct summary_process *sp, enum phase ph, uint64_t *ns,
			  uint64_t *base)
{
	*ns = *base = 0;
	if (finding_steps_counted(sp)) {
		*ns = sp->steps.phase_ns[ph];
		*base = finding_step_ns(sp);
	} else {
		*ns = sp->loop_ns[ph];
		for (int k = 0; k < PHASE_KINDS; k++)
			*base += sp->loop_ns[k];
	}
	return *base != 0;
}

/* "20.4 of 51.3 ms a step" where steps were counted, else "of 12.0 s". */
void finding_cost_text(const struct summary_process *sp, uint64_t ns, uint64_t base, char *buf,
		      size_t len)
{
	if (finding_steps_counted(sp))
		snprintf(buf, len, "%.1f of %.1f ms a step", finding_ms_a_step(sp, ns), finding_ms_a_step(sp, base));
	else
		snprintf(buf, len, "%.2f of %.2f s", (double)ns / 1e9, (double)base / 1e9);
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
				 finding_ms_a_step(sp, sp->sites[i].ns));
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
	if (!finding_steps_counted(sp) || !finding_phase_of_loop(sp, PHASE_OTHER, &ns, &base) ||
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

	if (!finding_phase_of_loop(sp, ph, &ns, &base) || (double)ns < least * (double)base)
		return;
	f = finding_add(l, id, (double)ns / (double)base, sp->pid, hint);
	if (!f)
		return;
	finding_cost_text(sp, ns, base, cost, sizeof(cost));
	snprintf(f->title, sizeof(f->title), "%s %.0f%% of the loop's time (%s)", what,
		 100.0 * f->cost, cost);
	if (finding_steps_counted(sp))
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
	findings_straggler(s, l);
	findings_ranks_stuck(s, l);
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct summary_process *sp = &s->procs[i];

		findings_gil_contention(s, sp, l);
		findings_cpu_copies(s, sp, l);
		if (!sp->loop)
			continue;
		slow_start(s, sp, l);
		findings_worker_restarts(s, sp, l);
		findings_data_bound(s, sp, l);
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
			"the GIL, a straggling rank)\n");
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

int findings_json_write(const struct summary *s, struct json_out *j)
{
	struct finding_list *l = malloc(sizeof(*l));

	if (!l)
		return -ENOMEM;
	findings_find(s, l);
	json_begin_array(j);
	for (size_t i = 0; i < l->n; i++) {
		const struct finding *f = &l->v[i];

		json_break(j, 2);
		json_begin_object(j);
		json_key_string(j, "id", f->id);
		json_key_string(j, "severity", severity(f->cost));
		json_key_double(j, "cost", f->cost, 4);
		json_key_uint(j, "pid", f->pid);
		json_key_string(j, "title", f->title);
		json_key(j, "evidence");
		json_begin_array(j);
		for (int k = 0; k < f->nevidence; k++)
			json_string(j, f->evidence[k]);
		json_end_array(j);
		json_key_string(j, "hint", f->hint);
		json_end_object(j);
	}
	json_end_array(j);
	free(l);
	return j->err;
}
