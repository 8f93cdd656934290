// SPDX-License-Identifier: MIT
/* Training phases in the outputs: --phases FILE, --phase NAME,
 * --group-by phase, and the phase line at the end of a run. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "common/common.h"
#include "formats/formats.h"

static int row_phase(void *ctx, const struct profile_aggregate *row)
{
	return (int)phase_of_row(ctx, row);
}

static int span_phase(void *ctx, const struct profile_span *span)
{
	return (int)phase_of_span(ctx, span);
}

int phases_check_options(const struct cli_options *o)
{
	struct phase_rules *r;
	enum phase ph;
	char err[512];
	int ret;

	if (o->phase && phase_by_name(o->phase, &ph) < 0) {
		cli_error("--phase takes one of data, forward, backward, optimizer, sync, checkpoint, "
			  "eval, logging, comm, other; not '%s'", o->phase);
		return -1;
	}
	if (o->group_by && strcmp(o->group_by, "phase")) {
		cli_error("--group-by takes 'phase', not '%s'", o->group_by);
		return -1;
	}
	if (!o->phases_file)
		return 0;
	if (phase_rules_new(&r) < 0) {
		cli_error("out of memory");
		return -1;
	}
	ret = phase_rules_load(r, o->phases_file, err, sizeof(err));
	phase_rules_free(r);
	if (ret < 0)
		cli_error("%s", err);
	return ret < 0 ? -1 : 0;
}

int phases_open(const struct cli_options *o, const struct profile *p, struct cli_phases *cp)
{
	char err[512];

	memset(cp, 0, sizeof(*cp));
	if (phase_rules_new(&cp->rules) < 0)
		return -ENOMEM;
	if (o->phases_file && phase_rules_load(cp->rules, o->phases_file, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		phases_close(cp);
		return -EINVAL;
	}
	if (phase_map_new(cp->rules, p, &cp->map) < 0) {
		phases_close(cp);
		return -ENOMEM;
	}
	return 0;
}

static int summary_json(void *ctx, FILE *out)
{
	struct summary *s;
	int ret = summary_build(ctx, &s);

	if (ret < 0)
		return ret;
	ret = summary_json_write(s, out);
	summary_free(s);
	return ret;
}

void phases_render_options(const struct cli_options *o, struct cli_phases *cp,
			   struct render_options *fo)
{
	enum phase ph = PHASE_OTHER;

	if (!cp->map)
		return;
	fo->summary = summary_json;
	fo->summary_ctx = cp->map;
	/* Always: the trace draws each thread's phases. */
	fo->row_class = row_phase;
	fo->span_class = span_phase;
	fo->row_class_ctx = cp->map;
	fo->class_names = phase_names();
	fo->class_kind = "phase";
	fo->step_marks = cp->marks;
	fo->nstep_marks = cp->nmarks;
	if (!o->phase && !o->group_by)
		return;
	fo->class_root = o->group_by != NULL;
	if (o->phase && phase_by_name(o->phase, &ph) == 0)
		fo->keep_class = (int)ph + 1;
}

int phases_summary(struct cli_phases *cp, bool gpu, size_t findings, bool text, FILE *out)
{
	struct summary *s;
	int ret = cp->map ? summary_build(cp->map, &s) : -EINVAL;

	if (ret < 0)
		return ret;
	if (text)
		ret = summary_text_write(s, gpu, out);
	if (!ret && findings)
		ret = findings_write(s, findings, out);
	summary_free(s);
	return ret;
}

int phases_ranks(struct cli_phases *cp, FILE *out)
{
	struct summary *s;
	int ret = cp->map ? summary_build(cp->map, &s) : -EINVAL;

	if (ret < 0)
		return ret;
	ret = summary_ranks_write(s, out);
	if (ret == -ENOENT)
		cli_warn("no ranks side by side: fewer than two processes with a launch rank (RANK "
			 "in their environment, or torch.multiprocessing.spawn's index) had their "
			 "training steps counted");
	summary_free(s);
	return ret;
}

int phases_find_steps(struct cli_phases *cp)
{
	struct summary *s;
	int ret = cp->map ? summary_build(cp->map, &s) : 0;

	if (!cp->map || ret < 0)
		return ret;
	for (size_t i = 0; !ret && i < summary_process_count(s); i++) {
		uint32_t pid, tid;
		uint64_t *starts, end;
		struct step_stats st;
		size_t n;

		if (!summary_loop_of(s, i, &pid, &tid))
			continue;
		ret = steps_starts(cp->map, pid, tid, &st, &starts, &n, &end);
		if (ret < 0)
			break;
		if (ARRAY_RESERVE(cp->marks, cp->cap_marks, cp->nmarks + n, 64) < 0)
			ret = -ENOMEM;
		for (size_t k = 0; !ret && k < n; k++)
			cp->marks[cp->nmarks++] = (struct step_mark){ pid, tid, starts[k], k + 1 };
		free(starts);
	}
	summary_free(s);
	return ret;
}

int phases_find_loops(struct cli_phases *cp)
{
	struct summary *s;
	int ret = cp->map && !cp->loops ? summary_build(cp->map, &s) : 0;

	if (!cp->map || cp->loops || ret < 0)
		return ret;
	cp->loops = calloc(summary_process_count(s) + 1, sizeof(*cp->loops));
	if (!cp->loops)
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < summary_process_count(s); i++) {
		uint32_t pid, tid;

		if (summary_loop_thread_of(s, i, &pid, &tid))
			cp->loops[cp->nloops++] = (struct thread_ref){ pid, tid };
	}
	summary_free(s);
	return ret;
}

static int by_thread_key(const void *a, const void *b)
{
	const struct thread_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

struct main_threads {
	struct thread_ref *v;
	size_t n, cap;
};

static int add_main_thread(const struct profile_aggregate *row, void *ctx)
{
	struct main_threads *m = ctx;

	if (m->n && m->v[m->n - 1].pid == row->pid)
		return 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].pid == row->pid)
			return 0;
	if (ARRAY_RESERVE(m->v, m->cap, m->n + 1, 16) < 0)
		return -ENOMEM;
	m->v[m->n++] = (struct thread_ref){ row->pid, row->pid };
	return 0;
}

int phases_idle_keep(const struct cli_phases *cp, const struct profile *p,
		     struct thread_ref **out, size_t *n)
{
	struct main_threads m = { 0 };
	int ret = 0;

	if (cp->nloops) {
		m.v = malloc(cp->nloops * sizeof(*m.v));
		if (!m.v)
			return -ENOMEM;
		memcpy(m.v, cp->loops, cp->nloops * sizeof(*m.v));
		m.n = cp->nloops;
	} else {
		/* No loop: a script's main thread's wait is what it waits for. */
		ret = profile_for_each_aggregate(p, add_main_thread, &m);
	}
	if (ret < 0) {
		free(m.v);
		return ret;
	}
	array_sort(m.v, m.n, sizeof(*m.v), by_thread_key);
	*out = m.v;
	*n = m.n;
	return 0;
}

void phases_close(struct cli_phases *cp)
{
	free(cp->loops);
	cp->loops = NULL;
	cp->nloops = 0;
	free(cp->marks);
	cp->marks = NULL;
	cp->nmarks = cp->cap_marks = 0;
	phase_map_free(cp->map);
	phase_rules_free(cp->rules);
	cp->map = NULL;
	cp->rules = NULL;
}

void call_times_print(const struct cli_options *o, const struct profile *p, FILE *out)
{
	const char *period = profile_meta(p, "period_ns");
	double period_ms = period ? (double)strtoull(period, NULL, 10) / 1e6 : 0;

	for (int i = 0; i < o->ntimes; i++) {
		struct call_times ct;

		if (call_times_find(p, o->times[i], &ct) < 0) {
			cli_error("--time %s: out of memory", o->times[i]);
			continue;
		}
		if (!ct.calls) {
			fprintf(out, "trainsample: calls of %s: none sampled\n", o->times[i]);
			continue;
		}
		fprintf(out, "trainsample: calls of %s: %" PRIu64 ", p50 %.1f ms, p90 %.1f ms, max %.1f ms, "
			"total %.2f s (each end known to %.1f ms, the sampling period)\n", o->times[i],
			ct.calls, (double)ct.p50_ns / 1e6, (double)ct.p90_ns / 1e6,
			(double)ct.max_ns / 1e6, (double)ct.total_ns / 1e9, period_ms);
	}
}

int phases_steps_window(const struct cli_options *o, const char *path, uint64_t *from_ns,
			uint64_t *to_ns)
{
	struct tsprof_read_info info;
	struct steps_window w;
	struct cli_phases cp;
	struct profile *p = profile_new();
	char err[512] = "";
	int ret = p ? profile_keep_timeline(p) : -ENOMEM;

	if (ret < 0) {
		profile_free(p);
		cli_error("out of memory");
		return ret;
	}
	ret = tsprof_read(path, p, &info, err, sizeof(err));
	if (ret < 0) {
		cli_error("%s", err[0] ? err : strerror(-ret));
		profile_free(p);
		return ret;
	}
	ret = phases_open(o, p, &cp);
	if (ret == 0) {
		ret = steps_window_find(cp.map, o->steps_from, o->steps_to, &w, err, sizeof(err));
		if (ret < 0)
			cli_error("%s: %s", path, err);
		phases_close(&cp);
	}
	profile_free(p);
	if (ret < 0)
		return ret;
	/* The window counts from the recording's first sample. */
	*from_ns = w.from_ns > info.first_sample_ns ? w.from_ns - info.first_sample_ns : 0;
	*to_ns = w.to_ns > info.first_sample_ns ? w.to_ns - info.first_sample_ns : 0;
	if (!o->quiet)
		fprintf(stderr, "trainsample: %s: steps %" PRIu64 " to %" PRIu64 " of %" PRIu64
			" (PID %" PRIu32 ", thread %" PRIu32 "), %.2f s to %.2f s from its start\n", path,
			o->steps_from, o->steps_to ? o->steps_to : w.steps, w.steps, w.pid, w.tid,
			(double)*from_ns / 1e9, (double)*to_ns / 1e9);
	return 0;
}

int phases_diff(const struct cli_options *o, const struct profile *older, const struct profile *newer,
		FILE *out)
{
	struct cli_phases a, b;
	struct summary *sa = NULL, *sb = NULL;
	int ret = phases_open(o, older, &a);

	if (ret < 0)
		return ret;
	ret = phases_open(o, newer, &b);
	if (ret < 0) {
		phases_close(&a);
		return ret;
	}
	ret = summary_build(a.map, &sa);
	if (!ret)
		ret = summary_build(b.map, &sb);
	if (!ret)
		ret = summary_diff_write(sa, sb, out);
	summary_free(sa);
	summary_free(sb);
	phases_close(&a);
	phases_close(&b);
	return ret;
}
