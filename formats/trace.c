// SPDX-License-Identifier: MIT
/*
 * The Chrome/Perfetto trace (JSON "Trace Event Format"): a flame chart
 * over time, the CPU slices from trace_slices.c and the GPU's from
 * trace_gpu.c, process and thread names, the recording's metadata.
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

void trace_write_slice(struct tr *t, FILE *out, uint32_t pid, uint32_t tid,
		       const struct open_frame *o, uint64_t start, uint64_t end)
{
	const struct frame *f = profile_frame(t->p, o->frame);

	trace_begin_event(t, out);
	fprintf(out, "\"ph\":\"X\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", pid, tid);
	trace_put_us(out, start - t->t0);
	fputs(",\"dur\":", out);
	trace_put_us(out, end - start);
	fputs(",\"name\":", out);
	json_put_string(out, t->labels.text[o->label]);
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
	if (process_label_of(t->p, pid))
		trace_write_name(t, out, "process_name", pid, pid, process_label_of(t->p, pid));
	else
		trace_write_name(t, out, "process_name", pid, pid,
				 command && (!first_pid || strtoul(first_pid, NULL, 10) == pid) ?
				 command : buf);
}

/* Every thread the slices were read from, named before its slices. */
static void write_names(struct tr *t, FILE *out)
{
	char buf[64];

	for (uint32_t i = 0; i < t->nwalkers; i++) {
		const struct trace_walker *w = &t->walkers[i];
		const char *name = profile_thread_name(t->p, w->pid, w->tid);

		trace_name_process(t, out, w->pid);
		snprintf(buf, sizeof(buf), "thread %" PRIu32, w->tid);
		trace_write_name(t, out, "thread_name", w->pid, w->tid, name && *name ? name : buf);
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
	trace_slices_free(t);
	label_set_free(&t->labels);
	free(t->label_of);
	free(t->named);
}

/* What the limit left out, in otherData and in the caller's buffer as a
 * note (the write succeeded). */
static void note_left_out(struct tr *t, FILE *out, char *note, size_t len)
{
	uint64_t left = t->slices_all - t->slices_kept;

	if (!t->min_dur_ns)
		return;
	fprintf(out, ",\n\"slices_left_out\":\"%" PRIu64 " of %" PRIu64 "\","
		"\n\"slices_shorter_than_us\":\"", left, t->slices_all);
	trace_put_us(out, t->min_dur_ns);
	fputc('"', out);
	errbuf_set(note, len, 0, "%" PRIu64 " of %" PRIu64 " slices shorter than %.3f ms left "
		   "out to stay within --trace-max-slices %" PRIu64, left, t->slices_all,
		   (double)t->min_dur_ns / 1e6, t->o.max_slices);
}

int trace_write(const struct profile *p, FILE *out, const struct render_options *o,
		char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct tr t = { .p = p, .o = o ? *o : defaults };
	struct meta_out m = { out, true };
	int ret;

	if (!profile_keeps_timeline(p))
		return errbuf_set(err, errlen, -EINVAL,
				  "trace: the profile kept no timeline (sample times)");
	t.o.by_function = true;
	t.script_dir = profile_meta(p, "python_script_dir");
	t.t0 = profile_timeline_start_ns(p);
	t.label_of = calloc((size_t)profile_frame_count(p) + 1, sizeof(*t.label_of));
	ret = t.label_of ? trace_gpu_collect(&t) : -ENOMEM;
	if (!ret && t.t0 == UINT64_MAX && profile_sample_count(p))
		ret = errbuf_set(err, errlen, -ENODATA, "trace: the recording has no sample times "
				 "(it holds aggregated rows only), so there is no timeline to draw");
	/* Counted first: which threads there are (named before their slices),
	 * and how many slices, for the limit. */
	if (!ret)
		ret = trace_slices_pass(&t, NULL);
	if (ret < 0)
		goto out;
	trace_slices_limit(&t, t.o.max_slices);
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{", out);
	profile_for_each_meta(p, write_meta, &m);
	if (err && errlen)
		err[0] = 0;
	note_left_out(&t, out, err, errlen);
	fputs("},\n\"traceEvents\":[", out);
	write_names(&t, out);
	ret = trace_slices_pass(&t, out);
	if (ret < 0)
		goto out;
	ret = trace_phases_write(&t, out);
	if (ret < 0)
		goto out;
	ret = trace_gpu_write(&t, out);
	if (ret < 0)
		goto out;
	fputs("\n]}\n", out);
	if (ferror(out))
		ret = -EIO;
out:
	tr_free(&t);
	if (ret < 0 && err && !err[0])
		errbuf_set(err, errlen, ret, "trace: %s", strerror(-ret));
	return ret;
}
