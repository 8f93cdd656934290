// SPDX-License-Identifier: MIT
/*
 * The GPU in the trace, as Nsight and the PyTorch profiler draw it: a
 * process per device, a track per stream with its kernels, copies and
 * memsets as slices (name, grid and block, bytes); each CPU thread that
 * launched work gets a track beside its own with its CUDA API calls, and
 * an arrow (a flow) from each call to what it launched.
 *
 * The activities wait on disk (a long job launches without end) and are
 * read back sorted, twice: by track for the slices and arrows, by
 * launching thread for the API calls. Only a record or two of each pass
 * are in memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/trace_impl.h"

#define GPU_PID_BASE 0x70000000u /* a process per device (and process using it) */
#define API_TID_BASE 0x40000000u /* beside each thread: its CUDA API calls */
#define SYNC_TID_BASE 0x20000000u /* beside each stream: waits for it */

/* A stream's track holds its work; a wait for the stream (a host-side
 * interval that spans the work it waits for) has a track of its own, else
 * it would hide that work: slices on a track nest. A wait for the whole
 * context (stream UINT32_MAX) has the "synchronization" track. */
static uint32_t track_of(const struct gpu_activity *a)
{
	if (a->kind == GPU_ACTIVITY_SYNC && a->stream != UINT32_MAX)
		return SYNC_TID_BASE + (a->stream & (SYNC_TID_BASE - 1));
	return a->stream;
}

static int by_track(const void *x, const void *y)
{
	const struct gpu_activity *a = x, *b = y;
	uint32_t ta = track_of(a), tb = track_of(b);

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static bool keeps(const struct tr *t, const struct gpu_activity *a)
{
	const char *name;

	if ((t->o.pid && a->pid != t->o.pid) || (t->o.tid && a->tid != t->o.tid))
		return false;
	if (!t->o.thread)
		return true;
	name = profile_thread_name(t->p, a->pid, a->tid);
	return name && !strcmp(name, t->o.thread);
}

/* The trace's process for a device's work: one per device, or one per
 * device and process when several share it (their streams are their own).
 * pid 0: the device itself (its counters). */
static uint32_t gpu_pid(const struct tr *t, uint32_t device, uint32_t pid)
{
	if (pid && t->shared_devices & (1ull << (device & 63)))
		return GPU_PID_BASE + ((device & 63) << 22) + (pid & 0x3fffff);
	return GPU_PID_BASE + ((device & 63) << 22);
}

/* The first pass: t0, which devices several processes share, which have
 * work of their own (named by it, not by their counters). */
static int collect_one(const struct gpu_activity *a, void *ctx)
{
	struct tr *t = ctx;
	uint32_t d = a->device & 63;

	if (!keeps(t, a))
		return 0;
	t->ngpu++;
	if (a->start_ns < t->t0)
		t->t0 = a->start_ns;
	if (a->launch_start_ns && a->launch_start_ns < t->t0)
		t->t0 = a->launch_start_ns;
	if (a->kind == GPU_ACTIVITY_SYNC) /* carries no device of its own */
		return 0;
	if (!(t->gpu_devices & (1ull << d)))
		t->gpu_first_pid[d] = a->pid;
	else if (t->gpu_first_pid[d] != a->pid)
		t->shared_devices |= 1ull << d;
	t->gpu_devices |= 1ull << d;
	return 0;
}

static int by_launch(const void *x, const void *y)
{
	const struct gpu_activity *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->launch_start_ns > b->launch_start_ns) - (a->launch_start_ns < b->launch_start_ns);
}

/* "gpu.D.WHAT": the device, and WHAT after it; false for other tracks. */
static bool device_track(const char *track, uint32_t *device, const char **what)
{
	char *end;

	if (strncmp(track, "gpu.", 4))
		return false;
	*device = (uint32_t)strtoul(track + 4, &end, 10);
	if (end == track + 4 || *end != '.')
		return false;
	*what = end + 1;
	return true;
}

static int counter_start(const struct counter_sample *c, void *ctx)
{
	struct tr *t = ctx;
	const char *what;
	uint32_t device;

	if (device_track(profile_string(t->p, c->track), &device, &what) && c->time_ns < t->t0)
		t->t0 = c->time_ns;
	return 0;
}

int trace_gpu_collect(struct tr *t)
{
	int ret = profile_for_each_gpu_activity(t->p, collect_one, t);

	return ret ? ret : profile_for_each_counter(t->p, counter_start, t);
}

static const char *const categories[] = { "", "kernel", "memcpy", "memset", "sync" };

/* Names the device's process and the track, where `a` is the first of
 * them in track order (prev: the activity before it, if any). */
static void name_track(struct tr *t, struct json_out *j, const struct gpu_activity *prev,
		       const struct gpu_activity *a)
{
	uint32_t pid = gpu_pid(t, a->device, a->pid);
	char buf[320], key[32];
	const char *name;

	if (!prev || gpu_pid(t, prev->device, prev->pid) != pid) {
		snprintf(key, sizeof(key), "gpu.%u.name", a->device);
		name = profile_meta(t->p, key);
		snprintf(buf, sizeof(buf), "GPU %u%s%s", a->device, name ? ": " : "",
			 name ? name : "");
		if (pid != gpu_pid(t, a->device, 0))
			gpu_process_suffix(t->p, a->pid, buf + strlen(buf), sizeof(buf) - strlen(buf));
		trace_write_name(j, "process_name", pid, 0, buf);
	} else if (track_of(prev) == track_of(a)) {
		return;
	}
	if (a->stream == UINT32_MAX)
		snprintf(buf, sizeof(buf), "synchronization");
	else if (a->kind == GPU_ACTIVITY_SYNC)
		snprintf(buf, sizeof(buf), "stream %u waits", a->stream);
	else
		snprintf(buf, sizeof(buf), "stream %u", a->stream);
	trace_write_name(j, "thread_name", pid, track_of(a), buf);
}

/* An activity as a slice of its stream's track, from `start` (its own,
 * or where the track's previous slice ended: slices on a track may not
 * overlap, and a stream's records can — a graph's branches, waits). */
static void write_activity(struct tr *t, struct json_out *j, const struct gpu_activity *a,
			   uint64_t start)
{
	char name[LABEL_MAX], dims[64];

	gpu_activity_label(t->p, a, false, name, sizeof(name));
	trace_begin_event(j, "X");
	json_key_uint(j, "pid", gpu_pid(t, a->device, a->pid));
	json_key_uint(j, "tid", track_of(a));
	trace_put_us(j, "ts", start - t->t0);
	trace_put_us(j, "dur", a->end_ns - start);
	json_key_string(j, "name", name);
	json_key_string(j, "cat", categories[a->kind]);
	json_key(j, "args");
	json_begin_object(j);
	json_key_uint(j, "correlation", a->correlation);
	if (a->kind == GPU_ACTIVITY_KERNEL) {
		snprintf(dims, sizeof(dims), "%d,%d,%d", a->grid[0], a->grid[1], a->grid[2]);
		json_key_string(j, "grid", dims);
		snprintf(dims, sizeof(dims), "%d,%d,%d", a->block[0], a->block[1], a->block[2]);
		json_key_string(j, "block", dims);
	}
	if (a->kind == GPU_ACTIVITY_MEMCPY || a->kind == GPU_ACTIVITY_MEMSET)
		json_key_uint(j, "bytes", a->bytes);
	json_end_object(j);
	json_end_object(j);
}

/* What a sorted pass remembers of the activity before. */
struct gpu_pass {
	struct tr *t;
	struct json_out *out;
	struct gpu_activity prev;
	bool have_prev;
	uint64_t track_end;
	uint64_t index; /* of the activity in track order: its arrow's id */
};

/* A launch (one per API call, however many kernels a graph made) on its
 * thread's API track, named after the thread; by launching thread. */
static int write_launch(const struct gpu_activity *a, void *ctx)
{
	struct gpu_pass *g = ctx;
	struct gpu_activity before = g->prev;
	const struct gpu_activity *prev = g->have_prev ? &before : NULL;
	struct tr *t = g->t;
	struct json_out *j = g->out;
	char buf[320];
	const char *name;

	if (!keeps(t, a) || !a->launch_start_ns)
		return 0;
	g->prev = *a;
	g->have_prev = true;
	if (!prev || prev->pid != a->pid || prev->tid != a->tid) {
		trace_name_process(t, j, a->pid); /* it may have no CPU samples */
		name = profile_thread_name(t->p, a->pid, a->tid);
		snprintf(buf, sizeof(buf), "%s%sCUDA API (thread %u)", name && *name ? name : "",
			 name && *name ? ": " : "", a->tid);
		trace_write_name(j, "thread_name", a->pid, API_TID_BASE + a->tid, buf);
	} else if (prev->launch_start_ns == a->launch_start_ns) {
		return 0;
	}
	trace_begin_event(j, "X");
	json_key_uint(j, "pid", a->pid);
	json_key_uint(j, "tid", API_TID_BASE + a->tid);
	trace_put_us(j, "ts", a->launch_start_ns - t->t0);
	trace_put_us(j, "dur", a->launch_end_ns > a->launch_start_ns ?
			       a->launch_end_ns - a->launch_start_ns : 1);
	json_key_string(j, "name", a->api ? profile_string(t->p, a->api) : "launch");
	json_key_string(j, "cat", "cuda_api");
	json_end_object(j);
	return ferror(j->f) ? -EIO : j->err;
}

/* An arrow from the call to the work: a flow starting in the launch's
 * slice and ending in the activity's (bp "e": the enclosing slice). */
static void write_flow(struct tr *t, struct json_out *j, const struct gpu_activity *a, uint64_t id)
{
	trace_begin_event(j, "s");
	json_key_uint(j, "id", id);
	json_key_uint(j, "pid", a->pid);
	json_key_uint(j, "tid", API_TID_BASE + a->tid);
	trace_put_us(j, "ts", a->launch_start_ns - t->t0);
	json_key_string(j, "name", "launch");
	json_key_string(j, "cat", "launch");
	json_end_object(j);
	trace_begin_event(j, "f");
	json_key_string(j, "bp", "e");
	json_key_uint(j, "id", id);
	json_key_uint(j, "pid", gpu_pid(t, a->device, a->pid));
	json_key_uint(j, "tid", track_of(a));
	trace_put_us(j, "ts", a->start_ns - t->t0);
	json_key_string(j, "name", "launch");
	json_key_string(j, "cat", "launch");
	json_end_object(j);
}

/* By track: each track's name, its slices, and the arrows to them. */
static int write_on_track(const struct gpu_activity *a, void *ctx)
{
	struct gpu_pass *g = ctx;
	struct gpu_activity before = g->prev;
	const struct gpu_activity *prev = g->have_prev ? &before : NULL;
	uint64_t start = a->start_ns;
	struct tr *t = g->t;

	if (!keeps(t, a))
		return 0;
	name_track(t, g->out, prev, a);
	if (!prev || gpu_pid(t, prev->device, prev->pid) != gpu_pid(t, a->device, a->pid) ||
	    track_of(prev) != track_of(a))
		g->track_end = 0;
	g->prev = *a;
	g->have_prev = true;
	g->index++;
	if (a->launch_start_ns && a->kind != GPU_ACTIVITY_SYNC)
		write_flow(t, g->out, a, g->index);
	if (start < g->track_end)
		start = g->track_end;
	if (a->end_ns < start || (a->end_ns == start && g->track_end))
		return 0; /* inside the slice before it: nothing of its own */
	write_activity(t, g->out, a, start);
	g->track_end = a->end_ns;
	return ferror(g->out->f) ? -EIO : g->out->err;
}

struct counters_out {
	struct tr *t;
	struct json_out *out;
	uint64_t named; /* devices named so far, a bit each (the first 64) */
};

/* A counter track per GPU and measure, in the device's process. */
static int write_counter(const struct counter_sample *c, void *ctx)
{
	struct counters_out *co = ctx;
	struct tr *t = co->t;
	const char *what, *name;
	uint32_t device;
	char buf[320], key[32];

	if (!device_track(profile_string(t->p, c->track), &device, &what))
		return 0;
	if (device < 64 && !(co->named & (1ull << device))) {
		co->named |= 1ull << device;
		snprintf(key, sizeof(key), "gpu.%u.name", device);
		name = profile_meta(t->p, key);
		snprintf(buf, sizeof(buf), "GPU %u%s%s", device, name ? ": " : "", name ? name : "");
		trace_write_name(co->out, "process_name", gpu_pid(t, device, 0), 0, buf);
	}
	trace_begin_event(co->out, "C");
	json_key_uint(co->out, "pid", gpu_pid(t, device, 0));
	json_key_uint(co->out, "tid", 0);
	trace_put_us(co->out, "ts", c->time_ns - t->t0);
	json_key_string(co->out, "name", what);
	json_key(co->out, "args");
	json_begin_object(co->out);
	json_key_double(co->out, "value", c->value, 3);
	json_end_object(co->out);
	json_end_object(co->out);
	return 0;
}

int trace_gpu_write(struct tr *t, struct json_out *j)
{
	struct counters_out co = { t, j, t->gpu_devices & ~t->shared_devices };
	struct gpu_pass g = { .t = t, .out = j };
	int ret = 0;

	/* Devices with activities are named with their tracks, before their
	 * counters (unless shared: then the counters get a process of the
	 * device's own). */
	if (t->ngpu)
		ret = profile_for_each_gpu_activity_sorted(t->p, by_track, write_on_track, &g);
	if (!ret)
		ret = profile_for_each_counter(t->p, write_counter, &co);
	if (ret < 0 || !t->ngpu)
		return ret;
	g = (struct gpu_pass){ .t = t, .out = j };
	return profile_for_each_gpu_activity_sorted(t->p, by_launch, write_launch, &g);
}
