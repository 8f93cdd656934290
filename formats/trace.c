// SPDX-License-Identifier: MIT
/*
 * The Chrome/Perfetto trace (JSON "Trace Event Format"): a flame chart
 * over time. Per thread, the timeline's spans are walked in order; a frame
 * that stays at its depth across consecutive spans stays one complete
 * ("X") slice, so slices nest like the calls did. A gap in a thread's
 * samples (it was blocked, or not sampled) closes every open slice.
 * Frames are compared by function, not by line: a slice is a call, and
 * its args hold the line it was first seen at. Times are microseconds
 * after the recording's first span.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/formats.h"
#include "formats/label_set.h"
#include "formats/profile_hooks.h"
#include "formats/trace_impl.h"

static int collect(const struct profile_span *s, void *ctx)
{
	struct tr *t = ctx;
	struct profile_aggregate row = { .pid = s->pid, .tid = s->tid, .stack = s->stack,
					 .flags = s->flags, .weight_ns = s->end_ns - s->start_ns,
					 .count = s->count };

	if (s->start_ns < t->t0)
		t->t0 = s->start_ns;
	if (!render_keeps(t->p, &t->o, &row))
		return 0;
	if (ARRAY_RESERVE(t->spans, t->capspans, t->nspans + 1, 1024) < 0)
		return -ENOMEM;
	t->spans[t->nspans++] = s;
	return 0;
}

static int by_thread_time(const void *a, const void *b)
{
	const struct profile_span *x = *(const struct profile_span *const *)a;
	const struct profile_span *y = *(const struct profile_span *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int label_of(struct tr *t, uint32_t frame, uint32_t *out)
{
	char buf[LABEL_MAX];
	int ret;

	if (!t->label_of[frame]) {
		frame_label(t->p, frame, &t->o, t->script_dir, buf, sizeof(buf));
		ret = label_set_intern(&t->labels, buf, out, NULL);
		if (ret < 0)
			return ret;
		t->label_of[frame] = *out + 1;
	}
	*out = t->label_of[frame] - 1;
	return 0;
}

/* Ends the open frames from depth `keep` up, at `end`. */
static int close_from(struct tr *t, uint32_t keep, uint32_t pid, uint32_t tid, uint64_t end)
{
	while (t->nopen > keep) {
		struct open_frame *f = &t->open[--t->nopen];

		if (ARRAY_RESERVE(t->slices, t->capslices, t->nslices + 1, 1024) < 0)
			return -ENOMEM;
		t->slices[t->nslices++] = (struct slice){ f->start, end, pid, tid, t->nopen, f->frame };
	}
	return 0;
}

/* prev_end: where the thread's previous span ended, 0 for its first. */
static int walk_span(struct tr *t, const struct profile_span *s, uint64_t prev_end)
{
	/* A quarter of the span's mean interval of slack: timer jitter. */
	uint64_t slack = (s->end_ns - s->start_ns) / s->count / 4;
	bool touching = prev_end && s->start_ns <= prev_end + slack;
	uint32_t keep = 0, label;
	int depth, ret;

	depth = profile_stack_frames(t->p, s->stack, &t->path, &t->cappath);
	if (depth < 0)
		return depth;
	if (touching) {
		while (keep < t->nopen && keep < (uint32_t)depth) {
			ret = label_of(t, t->path[keep], &label);
			if (ret < 0)
				return ret;
			if (label != t->open[keep].label)
				break;
			keep++;
		}
	}
	/* Contiguous spans hand over at the new span's start; after a gap,
	 * what was open ends where its samples did. */
	ret = close_from(t, keep, s->pid, s->tid, touching ? s->start_ns : prev_end);
	if (ret < 0)
		return ret;
	if (ARRAY_RESERVE(t->open, t->capopen, (size_t)depth, 0) < 0)
		return -ENOMEM;
	for (uint32_t i = keep; i < (uint32_t)depth; i++) {
		ret = label_of(t, t->path[i], &label);
		if (ret < 0)
			return ret;
		t->open[t->nopen++] = (struct open_frame){ label, t->path[i], s->start_ns };
	}
	return 0;
}

static int build_slices(struct tr *t)
{
	for (size_t i = 0; i < t->nspans;) {
		const struct profile_span *first = t->spans[i];
		uint64_t prev_end = 0;
		int ret;

		t->nopen = 0;
		for (; i < t->nspans && t->spans[i]->pid == first->pid &&
		       t->spans[i]->tid == first->tid; i++) {
			ret = walk_span(t, t->spans[i], prev_end);
			if (ret < 0)
				return ret;
			prev_end = t->spans[i]->end_ns;
		}
		ret = close_from(t, 0, first->pid, first->tid, prev_end);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

void trace_begin_event(struct tr *t, FILE *out)
{
	fputs(t->written ? ",\n{" : "\n{", out);
	t->written = true;
}

void trace_put_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static const char *kind_name(uint32_t kind)
{
	static const char *const names[] = { "native", "python", "idle", "gpu" };

	return kind <= FRAME_KIND_MAX ? names[kind] : "native";
}

static void write_slice(struct tr *t, FILE *out, const struct slice *s)
{
	const struct frame *f = profile_frame(t->p, s->frame);

	trace_begin_event(t, out);
	fprintf(out, "\"ph\":\"X\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", s->pid,
		s->tid);
	trace_put_us(out, s->start - t->t0);
	fputs(",\"dur\":", out);
	trace_put_us(out, s->end - s->start);
	fputs(",\"name\":", out);
	json_put_string(out, t->labels.text[t->label_of[s->frame] - 1]);
	fprintf(out, ",\"cat\":\"%s\"", kind_name(f->kind));
	if (f->module) {
		fputs(",\"args\":{\"", out);
		fputs(f->kind == FRAME_PYTHON || f->line ? "file\":" : "module\":", out);
		json_put_string(out, profile_string(t->p, f->module));
		if (f->line)
			fprintf(out, ",\"line\":%" PRIu32, f->line);
		fputc('}', out);
	}
	fputc('}', out);
}

void trace_write_name(struct tr *t, FILE *out, const char *what, uint32_t pid, uint32_t tid,
		      const char *name)
{
	trace_begin_event(t, out);
	fprintf(out, "\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":\"%s\","
		"\"args\":{\"name\":", pid, tid, what);
	json_put_string(out, name);
	fputs("}}", out);
}

/* Names for the processes and threads that have slices (sorted by pid,
 * tid): the command for the recorded process, else "pid N". */
void trace_name_process(struct tr *t, FILE *out, uint32_t pid)
{
	const char *command = profile_meta(t->p, "command");
	const char *first_pid = profile_meta(t->p, "pid");
	char buf[64];

	for (size_t i = 0; i < t->nnamed; i++)
		if (t->named[i] == pid)
			return;
	if (!ARRAY_RESERVE(t->named, t->capnamed, t->nnamed + 1, 1024))
		t->named[t->nnamed++] = pid;
	snprintf(buf, sizeof(buf), "pid %" PRIu32, pid);
	trace_write_name(t, out, "process_name", pid, pid,
			 command && (!first_pid || strtoul(first_pid, NULL, 10) == pid) ? command : buf);
}

static void write_names(struct tr *t, FILE *out)
{
	uint32_t pid = 0, tid = 0;
	char buf[64];

	for (size_t i = 0; i < t->nslices; i++) {
		const struct slice *s = &t->slices[i];
		const char *name;

		if (s->pid != pid)
			trace_name_process(t, out, s->pid);
		else if (s->tid == tid)
			continue;
		pid = s->pid, tid = s->tid;
		name = profile_thread_name(t->p, pid, tid);
		snprintf(buf, sizeof(buf), "thread %" PRIu32, tid);
		trace_write_name(t, out, "thread_name", pid, tid, name && *name ? name : buf);
	}
}

struct meta_out {
	FILE *out;
	bool first;
};

static int write_meta(const char *key, const char *value, void *ctx)
{
	struct meta_out *m = ctx;

	fputs(m->first ? "\n" : ",\n", m->out);
	m->first = false;
	json_put_string(m->out, key);
	fputc(':', m->out);
	json_put_string(m->out, value);
	return 0;
}

static void tr_free(struct tr *t)
{
	free(t->spans);
	label_set_free(&t->labels);
	free(t->label_of);
	free(t->path);
	free(t->open);
	free(t->slices);
	free(t->gpu);
	free(t->named);
}

int trace_write(const struct profile *p, FILE *out, const struct render_options *o,
		char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct tr t = { .p = p, .o = o ? *o : defaults, .t0 = UINT64_MAX };
	struct meta_out m = { out, true };
	int ret;

	if (!profile_keeps_timeline(p))
		return errbuf_set(err, errlen, -EINVAL,
				  "trace: the profile kept no timeline (sample times)");
	t.o.by_function = true;
	t.script_dir = profile_meta(p, "python_script_dir");
	t.label_of = calloc((size_t)profile_frame_count(p) + 1, sizeof(*t.label_of));
	ret = t.label_of ? profile_for_each_span(p, collect, &t) : -ENOMEM;
	if (!ret)
		ret = trace_gpu_collect(&t);
	if (!ret && t.t0 == UINT64_MAX && profile_sample_count(p))
		ret = errbuf_set(err, errlen, -ENODATA, "trace: the recording has no sample times "
				 "(it holds aggregated rows only), so there is no timeline to draw");
	if (ret < 0)
		goto out;
	if (t.nspans) /* qsort's base may not be NULL, even for no items */
		qsort(t.spans, t.nspans, sizeof(*t.spans), by_thread_time);
	ret = build_slices(&t);
	if (ret < 0)
		goto out;
	if (t.nslices)
		qsort(t.slices, t.nslices, sizeof(*t.slices), by_start);
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{", out);
	profile_for_each_meta(p, write_meta, &m);
	fputs("},\n\"traceEvents\":[", out);
	write_names(&t, out);
	for (size_t i = 0; i < t.nslices; i++)
		write_slice(&t, out, &t.slices[i]);
	trace_gpu_write(&t, out);
	fputs("\n]}\n", out);
	if (ferror(out))
		ret = -EIO;
out:
	tr_free(&t);
	if (ret < 0 && err && !err[0])
		errbuf_set(err, errlen, ret, "trace: %s", strerror(-ret));
	return ret;
}
