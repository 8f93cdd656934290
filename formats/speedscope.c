// SPDX-License-Identifier: MIT
/*
 * speedscope's file format (https://www.speedscope.app): one sampled
 * profile per thread, named "PID/NAME (TID)", its distinct stacks as
 * samples with their weights in seconds, frames shared with their file and
 * line. speedscope opens on the training loop's thread where cli/ names
 * it (render_options.open_pid, open_tid), else on the busiest. Where the
 * timeline was kept, a profile's samples are its runs of one stack in
 * time order, so the time-order view is true; else (no timeline) they are
 * its distinct stacks: the left-heavy and sandwich views are exact
 * either way. GPU streams, where the activities were kept, follow as
 * evented profiles: their order is time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "formats/formats.h"
#include "formats/label_set.h"

struct row {
	uint32_t pid, tid, stack;
	uint64_t weight_ns;
	uint64_t seq; /* time order within its thread (spans); 0 aggregates */
};

struct sp {
	const struct profile *p;
	const struct render_options *o;
	const char *script_dir;
	struct row *rows;
	size_t nrows, caprows;
	struct label_set frames;     /* by label: --function merges lines */
	uint32_t *frame_of;          /* per frame id: speedscope index + 1 */
	uint32_t *first_frame;       /* per speedscope index: a frame id */
	uint32_t capfirst;
	uint32_t *path;
	uint32_t cappath;
	/* GPU streams, read back from disk sorted by stream: the stream
	 * being written and where its last activity ended. */
	uint64_t ngpu, gpu_t0;
	int gpu_pids;                    /* 1, or 2 for several processes */
	uint32_t first_gpu_pid;
	struct json_out *gpu_out;        /* the profiles' array */
	bool in_stream;
	struct gpu_activity stream;      /* the stream's first activity */
	uint64_t stream_end, stream_at;
};

static int collect(const struct profile_aggregate *a, void *ctx)
{
	struct sp *s = ctx;

	if (!render_keeps(s->p, s->o, a) || !a->weight_ns)
		return 0;
	if (ARRAY_RESERVE(s->rows, s->caprows, s->nrows + 1, 256) < 0)
		return -ENOMEM;
	/* One row per (thread, stack): flags split the model's rows. */
	s->rows[s->nrows++] = (struct row){ a->pid, a->tid, a->stack, a->weight_ns, 0 };
	return 0;
}

/* Samples kept, counted in aggregates and in spans: the spans stand for
 * every sample only where the two agree. */
struct kept_counts {
	const struct profile *p;
	const struct render_options *o;
	uint64_t rows, spans;
};

static int count_rows(const struct profile_aggregate *a, void *ctx)
{
	struct kept_counts *k = ctx;

	if (render_keeps(k->p, k->o, a))
		k->rows += a->count;
	return 0;
}

static int count_spans(const struct profile_span *span, void *ctx)
{
	struct kept_counts *k = ctx;
	struct profile_aggregate a = { span->pid, span->tid, span->stack, span->flags,
				       span->end_ns - span->start_ns, span->count };

	if (render_keeps(k->p, k->o, &a))
		k->spans += span->count;
	return 0;
}

static int collect_span(const struct profile_span *span, void *ctx)
{
	struct sp *s = ctx;
	struct profile_aggregate a = { span->pid, span->tid, span->stack, span->flags,
				       span->end_ns - span->start_ns, span->count };
	struct row *last = NULL;

	if (!render_keeps(s->p, s->o, &a) || !a.weight_ns)
		return 0;
	/* The thread's last run: one more of its stack (flags changed) adds
	 * to it. Spans come per thread in order, threads interleaved. */
	for (size_t i = s->nrows; i-- > 0 && s->nrows - i <= 64;)
		if (s->rows[i].pid == a.pid && s->rows[i].tid == a.tid) {
			last = &s->rows[i];
			break;
		}
	if (last && last->stack == a.stack) {
		last->weight_ns += a.weight_ns;
		return 0;
	}
	if (ARRAY_RESERVE(s->rows, s->caprows, s->nrows + 1, 256) < 0)
		return -ENOMEM;
	s->rows[s->nrows] = (struct row){ a.pid, a.tid, a.stack, a.weight_ns, s->nrows + 1 };
	s->nrows++;
	return 0;
}

/* A thread's samples in time order where the timeline has them all. */
static int collect_rows(struct sp *s)
{
	struct kept_counts k = { .p = s->p, .o = s->o };
	int ret;

	if (profile_keeps_timeline(s->p) && !s->o->gpu) {
		ret = profile_for_each_aggregate(s->p, count_rows, &k);
		if (!ret)
			ret = profile_for_each_span(s->p, count_spans, &k);
		if (ret < 0)
			return ret;
		if (k.spans && k.spans == k.rows)
			return profile_for_each_span(s->p, collect_span, s);
	}
	return profile_for_each_aggregate(s->p, collect, s);
}

static int by_thread(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->stack > y->stack) - (x->stack < y->stack);
}

/*
 * Frames that render alike are one speedscope frame (lines merged with
 * --function), but only within one file: two modules' _start (ld.so's
 * and a stripped program's, named by its entry point) or two packages'
 * utils.py:12 each keep their own "file".
 */
static int frame_index(struct sp *s, uint32_t frame, uint32_t *out)
{
	char label[LABEL_MAX], key[2 * LABEL_MAX];
	const struct frame *f;
	bool added;
	uint32_t id;
	int ret;

	if (s->frame_of[frame]) {
		*out = s->frame_of[frame] - 1;
		return 0;
	}
	frame_label(s->p, frame, s->o, s->script_dir, label, sizeof(label));
	f = profile_frame(s->p, frame);
	snprintf(key, sizeof(key), "%s\x1f%s", label, f->module ? profile_string(s->p, f->module) : "");
	ret = label_set_intern(&s->frames, key, &id, &added);
	if (ret < 0)
		return ret;
	if (added) {
		if (ARRAY_RESERVE(s->first_frame, s->capfirst, (size_t)id + 1, 16) < 0)
			return -ENOMEM;
		s->first_frame[id] = frame;
	}
	s->frame_of[frame] = id + 1;
	*out = id;
	return 0;
}

/* The stack's frames as indices, outermost first; their number. */
static int stack_indices(struct sp *s, uint32_t stack, uint32_t *n)
{
	int depth = profile_stack_frames(s->p, stack, &s->path, &s->cappath), ret;

	if (depth < 0)
		return depth;
	/* Frame ids become speedscope indices in place. */
	for (int i = 0; i < depth; i++) {
		ret = frame_index(s, s->path[i], &s->path[i]);
		if (ret < 0)
			return ret;
	}
	*n = (uint32_t)depth;
	return 0;
}

static void write_frame(const struct sp *s, struct json_out *j, uint32_t index)
{
	uint32_t frame = s->first_frame[index];
	const struct frame *f;

	json_begin_object(j);
	if (frame == UINT32_MAX) { /* a GPU activity's: its label is its name */
		json_key_string(j, "name", s->frames.text[index]);
		json_end_object(j);
		return;
	}
	f = profile_frame(s->p, frame);
	const char *file = f->module ? profile_string(s->p, f->module) : "";

	json_key_string(j, "name", profile_string(s->p, f->name));
	if (f->kind == FRAME_PYTHON && !s->o->full_filenames)
		file = python_file_short(file, s->script_dir);
	if (*file)
		json_key_string(j, "file", file);
	if (f->line && !(s->o->by_function && f->kind == FRAME_PYTHON))
		json_key_uint(j, "line", f->line);
	json_end_object(j);
}

/* One thread's profile from rows [from, to). */
static int write_profile(struct sp *s, struct json_out *j, size_t from, size_t to)
{
	const char *name = profile_thread_name(s->p, s->rows[from].pid, s->rows[from].tid);
	char title[LABEL_MAX + 64];
	uint64_t total = 0;
	uint32_t n;
	int ret;

	for (size_t i = from; i < to; i++)
		total += s->rows[i].weight_ns;
	const char *label = s->o->processes ? process_label_of(s->p, s->rows[from].pid) : NULL;

	if (label && *label)
		/* Several processes: each named by its role first. */
		snprintf(title, sizeof(title), "%s (%" PRIu32 ") / %s (%" PRIu32 ")", label,
			 s->rows[from].pid, name && *name ? name : "thread", s->rows[from].tid);
	else
		snprintf(title, sizeof(title), "%" PRIu32 "/%s (%" PRIu32 ")", s->rows[from].pid,
			 name && *name ? name : "thread", s->rows[from].tid);
	json_begin_object(j);
	json_key_string(j, "type", "sampled");
	json_key_string(j, "name", title);
	json_key_string(j, "unit", "seconds");
	json_key_uint(j, "startValue", 0);
	json_key_double(j, "endValue", (double)total / 1e9, 9);
	json_key(j, "samples");
	json_begin_array(j);
	for (size_t i = from; i < to; i++) {
		ret = stack_indices(s, s->rows[i].stack, &n);
		if (ret < 0)
			return ret;
		json_begin_array(j);
		for (uint32_t k = 0; k < n; k++)
			json_uint(j, s->path[k]);
		json_end_array(j);
	}
	json_end_array(j);
	json_key(j, "weights");
	json_begin_array(j);
	for (size_t i = from; i < to; i++)
		json_double(j, (double)s->rows[i].weight_ns / 1e9, 9);
	json_end_array(j);
	return json_end_object(j);
}

/* A GPU activity's frame: its label, e.g. "[kernel] gemm". */
static int gpu_frame(struct sp *s, const char *label, uint32_t *out)
{
	bool added;
	int ret = label_set_intern(&s->frames, label, out, &added);

	if (ret < 0 || !added)
		return ret;
	if (ARRAY_RESERVE(s->first_frame, s->capfirst, (size_t)*out + 1, 16) < 0)
		return -ENOMEM;
	s->first_frame[*out] = UINT32_MAX;
	return 0;
}

static bool keeps_gpu(const struct sp *s, const struct gpu_activity *a)
{
	const char *name;

	if (a->kind == GPU_ACTIVITY_SYNC || (s->o->pid && a->pid != s->o->pid) ||
	    (s->o->tid && a->tid != s->o->tid))
		return false;
	if (s->o->thread) {
		name = profile_thread_name(s->p, a->pid, a->tid);
		if (!name || strcmp(name, s->o->thread))
			return false;
	}
	return true;
}

/* The first pass: how many, from when, and whether several processes. */
static int count_gpu(const struct gpu_activity *a, void *ctx)
{
	struct sp *s = ctx;

	if (!keeps_gpu(s, a))
		return 0;
	if (!s->ngpu++)
		s->first_gpu_pid = a->pid;
	else if (a->pid != s->first_gpu_pid)
		s->gpu_pids = 2;
	if (a->start_ns < s->gpu_t0)
		s->gpu_t0 = a->start_ns;
	return 0;
}

static void end_stream(struct sp *s)
{
	uint64_t t0 = s->gpu_t0;

	if (!s->in_stream)
		return;
	json_end_array(s->gpu_out);
	json_key_double(s->gpu_out, "endValue",
			(double)(s->stream_at > t0 ? s->stream_at - t0 : 0) / 1e9, 9);
	json_end_object(s->gpu_out);
	s->in_stream = false;
}

/* An evented profile's event: a frame opened ("O") or closed ("C"). */
static void write_event(struct json_out *j, const char *type, uint32_t frame, uint64_t at_ns)
{
	json_begin_object(j);
	json_key_string(j, "type", type);
	json_key_uint(j, "frame", frame);
	json_key_double(j, "at", (double)at_ns / 1e9, 9);
	json_end_object(j);
}

/*
 * By device, pid, stream, start: one evented profile per stream. A stream
 * runs one thing at a time, so each activity opens and closes in turn (an
 * overlap, which a stream cannot have, is cut to keep them balanced).
 */
static int write_gpu_event(const struct gpu_activity *a, void *ctx)
{
	struct sp *s = ctx;
	struct json_out *j = s->gpu_out;
	char name[LABEL_MAX];
	uint64_t start, t0 = s->gpu_t0;
	uint32_t frame;
	int ret;

	if (!keeps_gpu(s, a))
		return 0;
	if (!s->in_stream || a->device != s->stream.device || a->pid != s->stream.pid ||
	    a->stream != s->stream.stream) {
		end_stream(s);
		snprintf(name, sizeof(name), "GPU %u stream %u", a->device, a->stream);
		/* Stream ids are a process's own: with several, each says whose. */
		if (s->gpu_pids > 1)
			gpu_process_suffix(s->p, a->pid, name + strlen(name), sizeof(name) - strlen(name));
		json_begin_object(j);
		json_key_string(j, "type", "evented");
		json_key_string(j, "name", name);
		json_key_string(j, "unit", "seconds");
		json_key_uint(j, "startValue", 0);
		json_key(j, "events");
		json_begin_array(j);
		s->in_stream = true;
		s->stream = *a;
		s->stream_end = s->stream_at = 0;
	}
	start = a->start_ns > s->stream_end ? a->start_ns : s->stream_end;
	if (a->end_ns <= start)
		return 0;
	gpu_activity_label(s->p, a, true, name, sizeof(name));
	ret = gpu_frame(s, name, &frame);
	if (ret < 0)
		return ret;
	write_event(j, "O", frame, start - t0);
	write_event(j, "C", frame, a->end_ns - t0);
	s->stream_end = s->stream_at = a->end_ns;
	return ferror(j->f) ? -EIO : j->err;
}

/* After the threads: a profile per GPU stream, where activities were kept. */
static int write_gpu_profiles(struct sp *s, struct json_out *j)
{
	int ret;

	s->gpu_t0 = UINT64_MAX;
	s->gpu_pids = 1;
	ret = profile_for_each_gpu_activity(s->p, count_gpu, s);
	if (ret < 0 || !s->ngpu)
		return ret;
	s->gpu_out = j;
	ret = profile_for_each_gpu_activity_sorted(s->p, gpu_activity_by_stream, write_gpu_event, s);
	if (!ret)
		end_stream(s);
	return ret;
}

static void sp_free(struct sp *s)
{
	free(s->rows);
	free(s->frame_of);
	free(s->first_frame);
	free(s->path);
	label_set_free(&s->frames);
}

/* The profile of the thread to open on (o->open_pid, open_tid), else of
 * the thread with the most weight. */
static size_t busiest(const struct sp *s)
{
	uint64_t best = 0, cur = 0;
	size_t index = 0, best_index = 0;

	for (size_t i = 0; i < s->nrows; i++) {
		if (i && (s->rows[i - 1].pid != s->rows[i].pid || s->rows[i - 1].tid != s->rows[i].tid)) {
			index++;
			cur = 0;
		}
		if (s->o->open_pid && s->rows[i].pid == s->o->open_pid &&
		    s->rows[i].tid == s->o->open_tid)
			return index;
		cur += s->rows[i].weight_ns;
		if (cur > best) {
			best = cur;
			best_index = index;
		}
	}
	return best_index;
}

int speedscope_write(const struct profile *p, FILE *out, const struct render_options *o,
		     char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct sp s = { .p = p, .o = o ? o : &defaults };
	const char *command = profile_meta(p, "command");
	const char *version = profile_meta(p, "trainsample_version");
	char exporter[96];
	size_t from = 0;
	FILE *profiles = NULL;
	struct json_out pj, j;
	int ret, fd;

	s.script_dir = profile_meta(p, "python_script_dir");
	s.frame_of = calloc((size_t)profile_frame_count(p) + 1, sizeof(*s.frame_of));
	if (!s.frame_of) {
		ret = -ENOMEM;
		goto out;
	}
	ret = collect_rows(&s);
	if (ret < 0)
		goto out;
	array_sort(s.rows, s.nrows, sizeof(*s.rows), by_thread);
	/* Profiles first, into a temporary file (a GPU job's streams grow
	 * with its length): the frames they name are found on the way. */
	fd = temp_file_open();
	profiles = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!profiles) {
		ret = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	json_init(&pj, profiles, false);
	json_begin_array(&pj);
	for (size_t i = 1; i <= s.nrows && !ret; i++) {
		if (i < s.nrows && s.rows[i].pid == s.rows[from].pid && s.rows[i].tid == s.rows[from].tid)
			continue;
		ret = write_profile(&s, &pj, from, i);
		from = i;
	}
	if (!ret && !s.o->gpu)
		ret = write_gpu_profiles(&s, &pj);
	if (!ret)
		json_end_array(&pj);
	if (!ret)
		ret = json_end(&pj);
	if (!ret && fflush(profiles))
		ret = -EIO;
	if (ret < 0)
		goto out;
	json_init(&j, out, false);
	json_begin_object(&j);
	json_key_string(&j, "$schema", "https://www.speedscope.app/file-format-schema.json");
	json_key_string(&j, "name", command ? command : "trainsample");
	snprintf(exporter, sizeof(exporter), "trainsample %.64s", version ? version : "");
	json_key_string(&j, "exporter", exporter);
	json_key(&j, "shared");
	json_begin_object(&j);
	json_key(&j, "frames");
	json_begin_array(&j);
	for (uint32_t i = 0; i < s.frames.count; i++)
		write_frame(&s, &j, i);
	json_end_array(&j);
	json_end_object(&j);
	json_key_uint(&j, "activeProfileIndex", busiest(&s));
	json_key(&j, "profiles");
	rewind(profiles);
	json_raw_file(&j, profiles);
	json_end_object(&j);
	ret = json_end(&j);
	fputc('\n', out);
	if (!ret && ferror(out))
		ret = -EIO;
out:
	if (profiles)
		fclose(profiles);
	sp_free(&s);
	if (ret < 0)
		return errbuf_set(err, errlen, ret, "speedscope: %s", strerror(-ret));
	return 0;
}
