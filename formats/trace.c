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

void trace_begin_event(struct json_out *j, const char *ph)
{
	json_break(j, 0);
	json_begin_object(j);
	json_key_string(j, "ph", ph);
}

void trace_put_us(struct json_out *j, const char *key, uint64_t ns)
{
	json_key_decimal(j, key, ns, 3);
}

static const char *kind_name(uint32_t kind)
{
	static const char *const names[] = { "native", "python", "idle", "gpu" };

	return kind <= FRAME_KIND_MAX ? names[kind] : "native";
}

void trace_write_slice(struct tr *t, struct json_out *j, uint32_t pid, uint32_t tid,
		       const struct open_frame *o, uint64_t start, uint64_t end)
{
	const struct frame *f = profile_frame(t->p, o->frame);

	trace_begin_event(j, "X");
	json_key_uint(j, "pid", pid);
	json_key_uint(j, "tid", tid);
	trace_put_us(j, "ts", start - t->t0);
	trace_put_us(j, "dur", end - start);
	json_key_string(j, "name", t->labels.text[o->label]);
	json_key_string(j, "cat", kind_name(f->kind));
	if (f->module) {
		json_key(j, "args");
		json_begin_object(j);
		json_key_string(j, f->kind == FRAME_PYTHON || f->line ? "file" : "module",
				profile_string(t->p, f->module));
		if (f->line)
			json_key_uint(j, "line", f->line);
		json_end_object(j);
	}
	json_end_object(j);
}

void trace_write_name(struct json_out *j, const char *what, uint32_t pid, uint32_t tid,
		      const char *name)
{
	trace_begin_event(j, "M");
	json_key_uint(j, "pid", pid);
	json_key_uint(j, "tid", tid);
	json_key_string(j, "name", what);
	json_key(j, "args");
	json_begin_object(j);
	json_key_string(j, "name", name);
	json_end_object(j);
	json_end_object(j);
}

/* Names for the processes and threads that have slices (sorted by pid,
 * tid): the command for the recorded process, else "pid N". */
void trace_name_process(struct tr *t, struct json_out *j, uint32_t pid)
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
		trace_write_name(j, "process_name", pid, pid, process_label_of(t->p, pid));
	else
		trace_write_name(j, "process_name", pid, pid,
				 command && (!first_pid || strtoul(first_pid, NULL, 10) == pid) ?
				 command : buf);
}

/* Every thread the slices were read from, named before its slices. */
static void write_names(struct tr *t, struct json_out *j)
{
	char buf[64];

	for (uint32_t i = 0; i < t->nwalkers; i++) {
		const struct trace_walker *w = &t->walkers[i];
		const char *name = profile_thread_name(t->p, w->pid, w->tid);

		trace_name_process(t, j, w->pid);
		snprintf(buf, sizeof(buf), "thread %" PRIu32, w->tid);
		trace_write_name(j, "thread_name", w->pid, w->tid, name && *name ? name : buf);
	}
}

/* The recording's metadata in otherData, a line each. */
static int write_meta(const char *key, const char *value, void *ctx)
{
	struct json_out *j = ctx;

	json_break(j, 0);
	return json_key_string(j, key, value);
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
static void note_left_out(struct tr *t, struct json_out *j, char *note, size_t len)
{
	uint64_t left = t->slices_all - t->slices_kept;
	char buf[64];

	if (!t->min_dur_ns)
		return;
	snprintf(buf, sizeof(buf), "%" PRIu64 " of %" PRIu64, left, t->slices_all);
	json_break(j, 0);
	json_key_string(j, "slices_left_out", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64 ".%03u", t->min_dur_ns / 1000,
		 (unsigned)(t->min_dur_ns % 1000));
	json_break(j, 0);
	json_key_string(j, "slices_shorter_than_us", buf);
	errbuf_set(note, len, 0, "%" PRIu64 " of %" PRIu64 " slices shorter than %.3f ms left "
		   "out to stay within --trace-max-slices %" PRIu64, left, t->slices_all,
		   (double)t->min_dur_ns / 1e6, t->o.max_slices);
}

int trace_write(const struct profile *p, FILE *out, const struct render_options *o,
		char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct tr t = { .p = p, .o = o ? *o : defaults };
	struct json_out j;
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
	json_init(&j, out, false);
	json_begin_object(&j);
	json_key_string(&j, "displayTimeUnit", "ms");
	json_key(&j, "otherData");
	json_begin_object(&j);
	profile_for_each_meta(p, write_meta, &j);
	if (err && errlen)
		err[0] = 0;
	note_left_out(&t, &j, err, errlen);
	json_end_object(&j);
	json_break(&j, 0);
	json_key(&j, "traceEvents");
	json_begin_array(&j);
	write_names(&t, &j);
	ret = trace_slices_pass(&t, &j);
	if (ret < 0)
		goto out;
	ret = trace_phases_write(&t, &j);
	if (ret < 0)
		goto out;
	ret = trace_gpu_write(&t, &j);
	if (ret < 0)
		goto out;
	json_break(&j, 0);
	json_end_array(&j);
	json_end_object(&j);
	ret = json_end(&j);
	fputc('\n', out);
	if (!ret && ferror(out))
		ret = -EIO;
out:
	tr_free(&t);
	if (ret < 0 && err && !err[0])
		errbuf_set(err, errlen, ret, "trace: %s", strerror(-ret));
	return ret;
}
