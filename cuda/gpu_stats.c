// SPDX-License-Identifier: MIT
/*
 * The figures of the GPU summary: busy time per device (the union of its
 * kernel, copy and memset intervals, which overlap across streams), the
 * kernels that took the most time, copy volume by direction, launches.
 * Intervals are kept only until they settle (a few seconds behind the
 * newest), so memory does not grow with the run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "cuda/gpu_merge_impl.h"

#define SETTLE_NS 5000000000ull /* records of a device arrive this far out of order */

static struct gpu_device_stats *device(struct gpu_merge *g, uint32_t id)
{
	struct gpu_device_stats *d;

	for (uint32_t i = 0; i < g->ndevices; i++)
		if (g->devices[i].device == id)
			return &g->devices[i];
	d = realloc(g->devices, (g->ndevices + 1) * sizeof(*d));
	if (!d)
		return NULL;
	g->devices = d;
	d = &g->devices[g->ndevices++];
	*d = (struct gpu_device_stats){ .device = id };
	return d;
}

static void kernel(struct gpu_merge *g, const struct gpu_activity *a)
{
	if (ARRAY_RESERVE_ZEROED(g->kernel_of, g->capkernel_of, (size_t)a->name + 1, 1024) < 0)
		return;
	if (!g->kernel_of[a->name]) {
		if (ARRAY_RESERVE(g->kernels, g->capkernels, g->nkernels + 1, 64) < 0)
			return;
		g->kernels[g->nkernels] = (struct gpu_kernel_stats){ .name = a->name };
		g->kernel_of[a->name] = ++g->nkernels;
	}
	g->kernels[g->kernel_of[a->name] - 1].count++;
	g->kernels[g->kernel_of[a->name] - 1].total_ns += a->end_ns - a->start_ns;
}

static void copy(struct gpu_merge *g, const struct gpu_activity *a)
{
	uint32_t k = a->copy_kind & 15;

	g->copy_bytes[k] += a->bytes;
	g->copies[k]++;
	if (a->src_kind == GPU_MEMORY_PAGEABLE || a->dst_kind == GPU_MEMORY_PAGEABLE)
		g->copies_pageable[k]++;
	/* Only a record that says which (it has memory kinds) is counted. */
	if (!a->async && (a->src_kind || a->dst_kind))
		g->copies_sync[k]++;
}

void gpu_stats_add(struct gpu_merge *g, const struct gpu_activity *a)
{
	struct gpu_device_stats *d;

	g->activities++;
	if (a->kind == GPU_ACTIVITY_SYNC)
		return;
	if (a->kind == GPU_ACTIVITY_KERNEL)
		kernel(g, a);
	else if (a->kind == GPU_ACTIVITY_MEMCPY)
		copy(g, a);
	else
		g->memset_bytes += a->bytes;
	d = device(g, a->device);
	if (!d)
		return;
	if (!d->first_ns || a->start_ns < d->first_ns)
		d->first_ns = a->start_ns;
	if (a->end_ns > d->last_ns)
		d->last_ns = a->end_ns;
	if (ARRAY_RESERVE(d->pending, d->cappending, d->npending + 1, 1024) < 0)
		return;
	d->pending[d->npending++] = (struct gpu_interval){ a->start_ns, a->end_ns };
}

static int by_start(const void *a, const void *b)
{
	const struct gpu_interval *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

void gpu_stats_settle(struct gpu_merge *g, bool final)
{
	for (uint32_t i = 0; i < g->ndevices; i++) {
		struct gpu_device_stats *d = &g->devices[i];
		uint64_t horizon = final ? UINT64_MAX :
				   d->last_ns > SETTLE_NS ? d->last_ns - SETTLE_NS : 0;
		uint32_t keep = 0;

		if (!d->npending)
			continue;
		array_sort(d->pending, d->npending, sizeof(*d->pending), by_start);
		for (uint32_t k = 0; k < d->npending; k++) {
			struct gpu_interval v = d->pending[k];

			if (v.start >= horizon) {
				d->pending[keep++] = v;
				continue;
			}
			if (v.end <= d->covered_to)
				continue;
			d->busy_ns += v.end - (v.start > d->covered_to ? v.start : d->covered_to);
			d->covered_to = v.end;
		}
		d->npending = keep;
	}
}

/*
 * The time a device's busy share is of: the run's wall time, or the span
 * of its activities where that is longer (records from before an attach,
 * or a clock apart from ours). Busy time is a union of intervals within
 * that span, so the share cannot pass 100%.
 */
static uint64_t gpu_stats_span(const struct gpu_device_stats *d, uint64_t wall_ns)
{
	uint64_t span = d->last_ns > d->first_ns ? d->last_ns - d->first_ns : 0;

	return span > wall_ns ? span : wall_ns;
}

void gpu_stats_free(struct gpu_merge *g)
{
	for (uint32_t i = 0; i < g->ndevices; i++)
		free(g->devices[i].pending);
	free(g->devices);
	free(g->kernels);
	free(g->kernel_of);
}

static int by_total(const void *a, const void *b)
{
	const struct gpu_kernel_stats *x = a, *y = b;

	return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

static void bytes_text(uint64_t n, char *buf, size_t len)
{
	if (n >= 1ull << 30)
		snprintf(buf, len, "%.2f GiB", (double)n / (1ull << 30));
	else if (n >= 1ull << 20)
		snprintf(buf, len, "%.1f MiB", (double)n / (1ull << 20));
	else
		snprintf(buf, len, "%.1f KiB", (double)n / 1024);
}

void gpu_merge_summary(struct gpu_merge *g, FILE *out, uint64_t wall_ns)
{
	static const uint32_t kinds[] = { 1, 2, 8, 10, 9 };
	double wall = wall_ns ? (double)wall_ns / 1e9 : 0;
	char b[32];

	if (!gpu_merge_any(g))
		return;
	gpu_stats_settle(g, true);
	fprintf(out, "trainsample: GPU: %" PRIu64 " launches (%.0f/s), %" PRIu64 " activities, %"
		PRIu64 " records dropped\n", g->launches, wall > 0 ? (double)g->launches / wall : 0,
		g->activities, g->dropped);
	for (uint32_t i = 0; i < g->ndevices; i++) {
		const struct gpu_device_stats *d = &g->devices[i];
		uint64_t span = gpu_stats_span(d, wall_ns);
		char key[32];
		const char *name;

		snprintf(key, sizeof(key), "gpu.%u.name", d->device);
		name = profile_meta(g->profile, key);
		fprintf(out, "  device %u%s%s: busy %.1f%% of %.2f s (%.3f s of kernels and copies)\n",
			d->device, name ? ", " : "", name ? name : "",
			span ? 100.0 * (double)(d->busy_ns < span ? d->busy_ns : span) / (double)span : 0,
			(double)span / 1e9, (double)d->busy_ns / 1e9);
	}
	array_sort(g->kernels, g->nkernels, sizeof(*g->kernels), by_total);
	/* kernel_of points into the order just changed: rebuilt on demand. */
	memset(g->kernel_of, 0, g->capkernel_of * sizeof(*g->kernel_of));
	for (uint32_t i = 0; i < g->nkernels; i++)
		g->kernel_of[g->kernels[i].name] = i + 1;
	for (uint32_t i = 0; i < g->nkernels && i < 5; i++) {
		const struct gpu_kernel_stats *k = &g->kernels[i];

		fprintf(out, "  %8.3f s  %7" PRIu64 " x %9.1f us  %s\n", (double)k->total_ns / 1e9,
			k->count, (double)k->total_ns / (double)k->count / 1e3,
			profile_string(g->profile, k->name));
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!g->copies[kinds[i]])
			continue;
		bytes_text(g->copy_bytes[kinds[i]], b, sizeof(b));
		fprintf(out, "  memcpy %s: %s in %" PRIu64 " copies", gpu_copy_kind_name(kinds[i]), b,
			g->copies[kinds[i]]);
		if (g->copies_pageable[kinds[i]])
			fprintf(out, ", %" PRIu64 " of pageable memory", g->copies_pageable[kinds[i]]);
		if (g->copies_sync[kinds[i]])
			fprintf(out, ", %" PRIu64 " synchronous", g->copies_sync[kinds[i]]);
		fputc('\n', out);
	}
}
