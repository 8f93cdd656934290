// SPDX-License-Identifier: MIT
/*
 * The GPU in the trace, as Nsight and the PyTorch profiler draw it: a
 * process per device, a track per stream with its kernels, copies and
 * memsets as slices (name, grid and block, bytes); each CPU thread that
 * launched work gets a track beside its own with its CUDA API calls, and
 * an arrow (a flow) from each call to what it launched.
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
	const struct gpu_activity *a = *(const struct gpu_activity *const *)x;
	const struct gpu_activity *b = *(const struct gpu_activity *const *)y;
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

static int collect_one(const struct gpu_activity *a, void *ctx)
{
	struct tr *t = ctx;

	if (!keeps(t, a))
		return 0;
	if (ARRAY_RESERVE(t->gpu, t->capgpu, t->ngpu + 1, 1024) < 0)
		return -ENOMEM;
	t->gpu[t->ngpu++] = a;
	if (a->start_ns < t->t0)
		t->t0 = a->start_ns;
	if (a->launch_start_ns && a->launch_start_ns < t->t0)
		t->t0 = a->launch_start_ns;
	return 0;
}

static int by_launch(const void *x, const void *y)
{
	const struct gpu_activity *a = *(const struct gpu_activity *const *)x;
	const struct gpu_activity *b = *(const struct gpu_activity *const *)y;

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

	if (!ret)
		ret = profile_for_each_counter(t->p, counter_start, t);
	if (ret < 0)
		return ret;
	if (t->ngpu)
		qsort(t->gpu, t->ngpu, sizeof(*t->gpu), by_track);
	/* Sorted by device, then pid: a device is shared when its pid
	 * changes before the device does. Syncs carry no device of their own. */
	for (size_t i = 0, first = SIZE_MAX; i < t->ngpu; i++) {
		const struct gpu_activity *a = t->gpu[i];

		if (a->kind == GPU_ACTIVITY_SYNC)
			continue;
		if (first == SIZE_MAX || t->gpu[first]->device != a->device)
			first = i; /* the device's first process */
		else if (t->gpu[first]->pid != a->pid)
			t->shared_devices |= 1ull << (a->device & 63);
	}
	return 0;
}

static const char *const categories[] = { "", "kernel", "memcpy", "memset", "sync" };

static void write_names(struct tr *t, FILE *out)
{
	char buf[320], key[32];

	for (size_t i = 0; i < t->ngpu; i++) {
		const struct gpu_activity *a = t->gpu[i], *prev = i ? t->gpu[i - 1] : NULL;
		uint32_t pid = gpu_pid(t, a->device, a->pid);
		const char *name;

		if (!prev || gpu_pid(t, prev->device, prev->pid) != pid) {
			snprintf(key, sizeof(key), "gpu.%u.name", a->device);
			name = profile_meta(t->p, key);
			snprintf(buf, sizeof(buf), "GPU %u%s%s", a->device, name ? ": " : "",
				 name ? name : "");
			if (pid != gpu_pid(t, a->device, 0))
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " (pid %u)", a->pid);
			trace_write_name(t, out, "process_name", pid, 0, buf);
		} else if (track_of(prev) == track_of(a)) {
			continue;
		}
		if (a->stream == UINT32_MAX)
			snprintf(buf, sizeof(buf), "synchronization");
		else if (a->kind == GPU_ACTIVITY_SYNC)
			snprintf(buf, sizeof(buf), "stream %u waits", a->stream);
		else
			snprintf(buf, sizeof(buf), "stream %u", a->stream);
		trace_write_name(t, out, "thread_name", pid, track_of(a), buf);
	}
}

/* An activity as a slice of its stream's track, from `start` (its own,
 * or where the track's previous slice ended: slices on a track may not
 * overlap, and a stream's records can — a graph's branches, waits). */
static void write_activity(struct tr *t, FILE *out, const struct gpu_activity *a, uint64_t start)
{
	char name[LABEL_MAX];

	gpu_activity_label(t->p, a, false, name, sizeof(name));
	trace_begin_event(t, out);
	fprintf(out, "\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", gpu_pid(t, a->device, a->pid),
		track_of(a));
	trace_put_us(out, start - t->t0);
	fputs(",\"dur\":", out);
	trace_put_us(out, a->end_ns - start);
	fputs(",\"name\":", out);
	json_put_string(out, name);
	fprintf(out, ",\"cat\":\"%s\",\"args\":{\"correlation\":%u", categories[a->kind],
		a->correlation);
	if (a->kind == GPU_ACTIVITY_KERNEL)
		fprintf(out, ",\"grid\":\"%d,%d,%d\",\"block\":\"%d,%d,%d\"", a->grid[0], a->grid[1],
			a->grid[2], a->block[0], a->block[1], a->block[2]);
	if (a->kind == GPU_ACTIVITY_MEMCPY || a->kind == GPU_ACTIVITY_MEMSET)
		fprintf(out, ",\"bytes\":%" PRIu64, a->bytes);
	fputs("}}", out);
}

/* The launches (one per API call, however many kernels a graph made) on
 * their threads' API tracks, named after the threads. */
static void write_launches(struct tr *t, FILE *out, const struct gpu_activity **by)
{
	char buf[320];

	for (size_t i = 0; i < t->ngpu; i++) {
		const struct gpu_activity *a = by[i], *prev = i ? by[i - 1] : NULL;
		const char *name;

		if (!a->launch_start_ns)
			continue;
		if (!prev || prev->pid != a->pid || prev->tid != a->tid || !prev->launch_start_ns) {
			trace_name_process(t, out, a->pid); /* it may have no CPU samples */
			name = profile_thread_name(t->p, a->pid, a->tid);
			snprintf(buf, sizeof(buf), "%s%sCUDA API (thread %u)", name && *name ? name : "",
				 name && *name ? ": " : "", a->tid);
			trace_write_name(t, out, "thread_name", a->pid, API_TID_BASE + a->tid, buf);
		} else if (prev->launch_start_ns == a->launch_start_ns) {
			continue;
		}
		trace_begin_event(t, out);
		fprintf(out, "\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", a->pid, API_TID_BASE + a->tid);
		trace_put_us(out, a->launch_start_ns - t->t0);
		fputs(",\"dur\":", out);
		trace_put_us(out, a->launch_end_ns > a->launch_start_ns ?
				  a->launch_end_ns - a->launch_start_ns : 1);
		fputs(",\"name\":", out);
		json_put_string(out, a->api ? profile_string(t->p, a->api) : "launch");
		fputs(",\"cat\":\"cuda_api\"}", out);
	}
}

/* An arrow from the call to the work: a flow starting in the launch's
 * slice and ending in the activity's (bp "e": the enclosing slice). */
static void write_flows(struct tr *t, FILE *out)
{
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct gpu_activity *a = t->gpu[i];

		if (!a->launch_start_ns || a->kind == GPU_ACTIVITY_SYNC)
			continue;
		trace_begin_event(t, out);
		fprintf(out, "\"ph\":\"s\",\"id\":%zu,\"pid\":%u,\"tid\":%u,\"ts\":", i + 1, a->pid,
			API_TID_BASE + a->tid);
		trace_put_us(out, a->launch_start_ns - t->t0);
		fputs(",\"name\":\"launch\",\"cat\":\"launch\"}", out);
		trace_begin_event(t, out);
		fprintf(out, "\"ph\":\"f\",\"bp\":\"e\",\"id\":%zu,\"pid\":%u,\"tid\":%u,\"ts\":", i + 1,
			gpu_pid(t, a->device, a->pid), track_of(a));
		trace_put_us(out, a->start_ns - t->t0);
		fputs(",\"name\":\"launch\",\"cat\":\"launch\"}", out);
	}
}

struct counters_out {
	struct tr *t;
	FILE *out;
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
		trace_write_name(t, co->out, "process_name", gpu_pid(t, device, 0), 0, buf);
	}
	trace_begin_event(t, co->out);
	fprintf(co->out, "\"ph\":\"C\",\"pid\":%u,\"tid\":0,\"ts\":", gpu_pid(t, device, 0));
	trace_put_us(co->out, c->time_ns - t->t0);
	fputs(",\"name\":", co->out);
	json_put_string(co->out, what);
	fprintf(co->out, ",\"args\":{\"value\":%.3f}}", c->value);
	return 0;
}

void trace_gpu_write(struct tr *t, FILE *out)
{
	const struct gpu_activity **by_thread;
	struct counters_out co = { t, out, 0 };

	/* Devices with activities are named by write_names (unless shared:
	 * then their counters get a process of the device's own). */
	write_names(t, out);
	for (size_t i = 0; i < t->ngpu; i++)
		if (t->gpu[i]->device < 64 && !(t->shared_devices & (1ull << t->gpu[i]->device)))
			co.named |= 1ull << t->gpu[i]->device;
	profile_for_each_counter(t->p, write_counter, &co);
	if (!t->ngpu)
		return;
	for (size_t i = 0, track_end = 0; i < t->ngpu; i++) {
		const struct gpu_activity *a = t->gpu[i], *prev = i ? t->gpu[i - 1] : NULL;
		uint64_t start = a->start_ns;

		if (!prev || gpu_pid(t, prev->device, prev->pid) != gpu_pid(t, a->device, a->pid) ||
		    track_of(prev) != track_of(a))
			track_end = 0;
		if (start < track_end)
			start = track_end;
		if (a->end_ns < start || (a->end_ns == start && track_end))
			continue; /* inside the slice before it: nothing of its own */
		write_activity(t, out, a, start);
		track_end = a->end_ns;
	}
	by_thread = malloc(t->ngpu * sizeof(*by_thread));
	if (by_thread) {
		memcpy(by_thread, t->gpu, t->ngpu * sizeof(*by_thread));
		qsort(by_thread, t->ngpu, sizeof(*by_thread), by_launch);
		write_launches(t, out, by_thread);
		free(by_thread);
	}
	write_flows(t, out);
}
