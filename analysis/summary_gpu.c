// SPDX-License-Identifier: MIT
/*
 * The summary's GPU side: each device's busy time (the union of its
 * activities over all streams), its kernels and copies to or from the
 * host, the stacks that launched the most, its energy from NVML's power
 * readings, and each process's GPU work against the time since its first
 * kernel (the run before it is not the GPU's to use), with the loop's
 * data wait in that time.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/phase_impl.h"
#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

uint64_t summary_gpu_window(const struct summary *s, const struct summary_gpu *g)
{
	return g->first_ns && s->end_ns > g->first_ns ? s->end_ns - g->first_ns : 0;
}

double summary_gpu_busy_share(const struct summary *s, const struct summary_gpu *g)
{
	uint64_t window = summary_gpu_window(s, g);

	return window ? MIN(1.0, (double)g->busy_ns / (double)window) : 0;
}

double summary_process_gpu_busy(const struct summary *s, const struct summary_process *sp)
{
	uint64_t window = sp->gpu_first_ns && s->end_ns > sp->gpu_first_ns ?
			  s->end_ns - sp->gpu_first_ns : 0;

	return window ? MIN(1.0, (double)sp->gpu_work_ns / (double)window) : 0;
}

static int by_device_start(const void *a, const void *b)
{
	const struct gpu_activity *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int launch_add(struct launch_tallies *t, uint32_t device, uint32_t stack)
{
	for (size_t i = t->n; i-- > 0;)
		if (t->v[i].stack == stack && t->v[i].device == device) {
			t->v[i].count++;
			return 0;
		}
	if (t->n == 256)
		return 0;
	if (ARRAY_RESERVE(t->v, t->cap, t->n + 1, 16) < 0)
		return -ENOMEM;
	t->v[t->n++] = (struct launch_tally){ device, stack, 1 };
	return 0;
}

/* A copy between the host and a GPU; slow when the host waits for it
 * (pageable memory is staged through a pinned buffer synchronously). */
static int host_copy(struct summary *s, struct summary_gpu *g, const struct gpu_activity *a)
{
	uint64_t ns = a->end_ns - a->start_ns;
	bool pageable = a->src_kind == GPU_MEMORY_KIND_PAGEABLE ||
			a->dst_kind == GPU_MEMORY_KIND_PAGEABLE;
	bool sync = !a->async && (a->src_kind || a->dst_kind);

	if (a->copy_kind != GPU_COPY_KIND_HTOD && a->copy_kind != GPU_COPY_KIND_DTOH)
		return 0;
	g->copies++;
	g->copy_ns += ns;
	g->copy_bytes += a->bytes;
	g->pageable_copies += pageable;
	g->pageable_bytes += pageable ? a->bytes : 0;
	g->sync_copies += sync;
	if (a->null_stream)
		g->null_copies++, g->null_ns += ns;
	if (!pageable && !sync)
		return 0;
	g->slow_ns += ns;
	if (a->launch_end_ns > a->launch_start_ns)
		g->slow_call_ns += a->launch_end_ns - a->launch_start_ns;
	return a->stack ? launch_add(&s->copy_sites, a->device, a->stack) : 0;
}

struct gpu_pass {
	struct summary *s;
	struct summary_gpu *g;
	uint64_t end; /* of the union so far on g's device */
	struct summary_process *proc; /* the last activity's */
	bool kernel_seen; /* on g's device */
};

/* The first kernel's start, else the first activity's (in start order). */
static void window_start(uint64_t *first, bool *kernel_seen, const struct gpu_activity *a)
{
	if (*kernel_seen)
		return;
	if (a->kind == GPU_ACTIVITY_KERNEL) {
		*first = a->start_ns;
		*kernel_seen = true;
	} else if (!*first) {
		*first = a->start_ns;
	}
}

/* A kernel the phase rules call communication (NCCL's). */
static bool comm_kernel(const struct summary *s, const struct gpu_activity *a)
{
	char label[256];

	gpu_activity_label(s->p, a, true, label, sizeof(label));
	return phase_rules_frame(s->m->rules, label, NULL) == PHASE_COMM;
}

static int gpu_activity(const struct gpu_activity *a, void *ctx)
{
	struct gpu_pass *gp = ctx;
	struct summary *s = gp->s;

	if (a->kind == GPU_ACTIVITY_SYNC || a->end_ns <= a->start_ns)
		return 0;
	/* The run is the CPU's samples' time and the GPU's work's. */
	if (!s->start_ns || a->start_ns < s->start_ns)
		s->start_ns = a->start_ns;
	if (a->end_ns > s->end_ns)
		s->end_ns = a->end_ns;
	if (!gp->g || gp->g->device != a->device) {
		if (ARRAY_RESERVE(s->gpus, s->cap_gpus, s->ngpus + 1, 4) < 0)
			return -ENOMEM;
		gp->g = &s->gpus[s->ngpus++];
		*gp->g = (struct summary_gpu){ .device = a->device };
		gp->end = 0;
		gp->kernel_seen = false;
	}
	if (!gp->proc || gp->proc->pid != a->pid) {
		gp->proc = NULL;
		for (size_t i = 0; i < s->nprocs && !gp->proc; i++)
			if (s->procs[i].pid == a->pid)
				gp->proc = &s->procs[i];
	}
	if (gp->proc) {
		window_start(&gp->proc->gpu_first_ns, &gp->proc->gpu_kernel_seen, a);
		gp->proc->gpu_work_ns += a->end_ns - a->start_ns;
	}
	window_start(&gp->g->first_ns, &gp->kernel_seen, a);
	if (a->kind == GPU_ACTIVITY_KERNEL) {
		gp->g->kernels++;
		gp->g->kernel_ns += a->end_ns - a->start_ns;
		if (comm_kernel(s, a))
			gp->g->comm_ns += a->end_ns - a->start_ns;
		gp->g->short_kernels += a->end_ns - a->start_ns < 10000;
		if (a->stack && launch_add(&s->kernel_sites, a->device, a->stack) < 0)
			return -ENOMEM;
	} else if (a->kind == GPU_ACTIVITY_MEMCPY && host_copy(s, gp->g, a) < 0) {
		return -ENOMEM;
	}
	/* Streams overlap: only what no earlier activity covered. */
	if (a->end_ns > gp->end) {
		gp->g->busy_ns += a->end_ns - MAX(a->start_ns, gp->end);
		gp->end = a->end_ns;
	}
	return 0;
}

static struct summary_gpu *gpu_of(struct summary *s, uint32_t device)
{
	for (size_t i = 0; i < s->ngpus; i++)
		if (s->gpus[i].device == device)
			return &s->gpus[i];
	if (ARRAY_RESERVE(s->gpus, s->cap_gpus, s->ngpus + 1, 4) < 0)
		return NULL;
	s->gpus[s->ngpus] = (struct summary_gpu){ .device = device };
	return &s->gpus[s->ngpus++];
}

/* Energy: NVML's power readings ("gpu.D.power W"), integrated over time
 * (trapezoids between readings). */
static int power_reading(const struct counter_sample *c, void *ctx)
{
	struct summary *s = ctx;
	const char *track = profile_string(s->p, c->track);
	struct summary_gpu *g;
	unsigned int device;
	int n = 0;

	if (sscanf(track, "gpu.%u.power W%n", &device, &n) != 1 || !n || track[n])
		return 0;
	g = gpu_of(s, device);
	if (!g)
		return -ENOMEM;
	if (g->power_at && c->time_ns > g->power_at) {
		g->energy_j += (double)(c->time_ns - g->power_at) / 1e9 * (g->power_w + c->value) / 2;
		g->have_energy = true;
	}
	g->power_at = c->time_ns;
	g->power_w = c->value;
	return 0;
}

/* Each GPU's busiest launching stack in t, of kernels or of slow copies. */
static int busiest_sites(struct summary *s, const struct launch_tallies *t, bool copies)
{
	for (size_t i = 0; i < t->n; i++) {
		struct summary_gpu *g = gpu_of(s, t->v[i].device);
		uint64_t *count;

		if (!g)
			return -ENOMEM;
		count = copies ? &g->copy_count : &g->launch_count;
		if (t->v[i].count > *count) {
			*count = t->v[i].count;
			*(copies ? &g->copy_stack : &g->launch_stack) = t->v[i].stack;
		}
	}
	return 0;
}

static int gpus_tally(struct summary *s)
{
	struct gpu_pass gp = { .s = s };
	int ret = profile_for_each_gpu_activity_sorted(s->p, by_device_start, gpu_activity, &gp);

	if (!ret)
		ret = busiest_sites(s, &s->kernel_sites, false);
	if (!ret)
		ret = busiest_sites(s, &s->copy_sites, true);
	return ret ? ret : profile_for_each_counter(s->p, power_reading, s);
}

/* The loop thread's data wait since its process's first kernel: GPU idle
 * time the loader, not launching, explains. */
struct data_pass {
	struct summary *s;
	const struct summary_process *sp;
	uint64_t ns;
};

static int data_span(const struct profile_span *span, void *ctx)
{
	struct data_pass *dp = ctx;
	struct profile_aggregate row = { .pid = span->pid, .tid = span->tid, .stack = span->stack,
					 .flags = span->flags, .count = span->count };

	if (span->pid != dp->sp->pid || span->tid != dp->sp->loop->tid ||
	    span->flags & SAMPLE_GPU || span->start_ns < dp->sp->gpu_first_ns)
		return 0;
	if (phase_of_row(dp->s->m, &row) == PHASE_DATA)
		dp->ns += span->end_ns - span->start_ns;
	return 0;
}

static int data_while_gpu(struct summary *s, struct summary_process *sp)
{
	struct data_pass dp = { .s = s, .sp = sp };
	int ret;

	if (!sp->loop || !sp->gpu_first_ns || !sp->loop->phase_ns[PHASE_DATA] ||
	    !profile_keeps_timeline(s->p))
		return 0;
	ret = profile_for_each_span(s->p, data_span, &dp);
	sp->gpu_data_ns = dp.ns;
	return ret;
}

int summary_gpus_find(struct summary *s)
{
	int ret = gpus_tally(s);

	for (size_t i = 0; !ret && i < s->nprocs; i++)
		ret = data_while_gpu(s, &s->procs[i]);
	return ret;
}
