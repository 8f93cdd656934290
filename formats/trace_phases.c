// SPDX-License-Identifier: MIT
/*
 * The trace's phase tracks: beside each thread whose samples have a
 * training phase (the rows' class, from analysis/ through the command
 * line's callback), a track of its phases over time, one slice per run of
 * a phase ("other" left out), and an instant "step N" at each step's start
 * on the training loop's. A track's tid is its thread's with bit 29 set:
 * Linux thread ids stay below 2^22.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "formats/formats.h"
#include "formats/profile_hooks.h"
#include "formats/trace_impl.h"

#define PHASE_TRACK (1u << 29) /* trace_gpu.c's API tracks have bit 30 */

static void name_track(struct tr *t, struct json_out *j, struct trace_walker *w)
{
	const char *name = profile_thread_name(t->p, w->pid, w->tid);
	char buf[160];

	if (w->phase_named)
		return;
	w->phase_named = true;
	if (name && *name)
		snprintf(buf, sizeof(buf), "phases of %s (%" PRIu32 ")", name, w->tid);
	else
		snprintf(buf, sizeof(buf), "phases of thread %" PRIu32, w->tid);
	trace_name_process(t, j, w->pid);
	trace_write_name(j, "thread_name", w->pid, w->tid | PHASE_TRACK, buf);
}

static void close_run(struct tr *t, struct json_out *j, struct trace_walker *w)
{
	const char *name;

	if (!w->phase)
		return;
	name = t->o.class_names ? t->o.class_names[w->phase - 1] : "?";
	name_track(t, j, w);
	trace_begin_event(j, "X");
	json_key_uint(j, "pid", w->pid);
	json_key_uint(j, "tid", w->tid | PHASE_TRACK);
	trace_put_us(j, "ts", w->phase_start - t->t0);
	trace_put_us(j, "dur", w->phase_end - w->phase_start);
	json_key_string(j, "name", name);
	json_key_string(j, "cat", "phase");
	json_end_object(j);
	w->phase = 0;
}

struct phase_walk {
	struct tr *t;
	struct json_out *out;
};

static int phase_span(const struct profile_span *s, void *ctx)
{
	struct phase_walk *pw = ctx;
	struct tr *t = pw->t;
	struct profile_aggregate row = { .pid = s->pid, .tid = s->tid, .stack = s->stack,
					 .flags = s->flags, .weight_ns = s->end_ns - s->start_ns,
					 .count = s->count };
	uint64_t slack = (s->end_ns - s->start_ns) / s->count / 4;
	struct trace_walker *w;
	int cls, ret;

	if (!render_keeps(t->p, &t->o, &row))
		return 0;
	ret = trace_walker_of(t, s->pid, s->tid, &w);
	if (ret < 0)
		return ret;
	cls = t->o.span_class ? t->o.span_class(t->o.row_class_ctx, s) :
				t->o.row_class(t->o.row_class_ctx, &row);
	/* A run goes on through touching spans of its phase; a gap or
	 * another phase ends it where its samples did. */
	if (w->phase && (w->phase != cls + 1 || s->start_ns > w->phase_end + slack))
		close_run(t, pw->out, w);
	if (cls <= 0)
		return 0;
	if (!w->phase) {
		w->phase = cls + 1;
		w->phase_start = s->start_ns;
	}
	w->phase_end = s->end_ns;
	return 0;
}

int trace_phases_write(struct tr *t, struct json_out *j)
{
	struct phase_walk pw = { t, j };
	char name[32];
	int ret;

	if (!t->o.row_class)
		return 0;
	ret = profile_for_each_span(t->p, phase_span, &pw);
	for (uint32_t i = 0; i < t->nwalkers && !ret; i++)
		close_run(t, j, &t->walkers[i]);
	for (size_t i = 0; i < t->o.nstep_marks && !ret; i++) {
		const struct step_mark *m = &t->o.step_marks[i];
		uint32_t before = t->nwalkers;
		struct trace_walker *w;

		if (m->time_ns < t->t0)
			continue;
		ret = trace_walker_of(t, m->pid, m->tid, &w);
		if (ret < 0)
			break;
		if (t->nwalkers != before)
			continue; /* a thread the filters left out */
		name_track(t, j, w);
		trace_begin_event(j, "i");
		json_key_string(j, "s", "t");
		json_key_uint(j, "pid", m->pid);
		json_key_uint(j, "tid", m->tid | PHASE_TRACK);
		trace_put_us(j, "ts", m->time_ns - t->t0);
		snprintf(name, sizeof(name), "step %" PRIu64, m->step);
		json_key_string(j, "name", name);
		json_key_string(j, "cat", "step");
		json_end_object(j);
	}
	return ret ? ret : j->err;
}
