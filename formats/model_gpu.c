// SPDX-License-Identifier: MIT
/*
 * GPU activities in the model. Each kernel, copy or memset weighs its
 * duration onto the stack that launched it, under a leaf frame of its own,
 * as an aggregate row flagged SAMPLE_GPU (not a CPU sample: the sample
 * count does not move). The activities themselves are kept only when asked
 * (the trace, speedscope); a .tsprof writer sees each one as it comes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/profile_impl.h"

#define PROFILE_LABEL_MAX 4096

const char *gpu_copy_kind_name(uint32_t copy_kind)
{
	switch (copy_kind) {
	case 1: return "HtoD";
	case 2: return "DtoH";
	case 8: return "DtoD";
	case 9: return "HtoH";
	case 10: return "PtoP";
	default: return "copy";
	}
}

void gpu_activity_label(const struct profile *p, const struct gpu_activity *a, bool kind,
			char *buf, size_t len)
{
	switch (a->kind) {
	case GPU_ACTIVITY_KERNEL:
		snprintf(buf, len, "%s%s", kind ? "[kernel] " : "",
			 a->name ? profile_string(p, a->name) : "?");
		break;
	case GPU_ACTIVITY_MEMCPY:
		snprintf(buf, len, "[memcpy %s]", gpu_copy_kind_name(a->copy_kind));
		break;
	case GPU_ACTIVITY_MEMSET:
		snprintf(buf, len, "[memset]");
		break;
	default:
		snprintf(buf, len, "[synchronize]");
	}
}

int gpu_activity_by_stream(const void *x, const void *y)
{
	const struct gpu_activity *a = x, *b = y;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* The leaf an activity weighs under: "[kernel] NAME", "[memcpy HtoD]". */
static int leaf_frame(struct profile *p, const struct gpu_activity *a, uint32_t *frame)
{
	struct frame f = { .kind = FRAME_GPU };
	char name[PROFILE_LABEL_MAX];
	int ret;

	gpu_activity_label(p, a, true, name, sizeof(name));
	ret = profile_intern_string(p, name, &f.name);
	return ret ? ret : profile_intern_frame(p, &f, frame);
}

/* On disk (common's spill): a long GPU job launches without end. */
static int keep(struct profile *p, const struct gpu_activity *a)
{
	int ret;

	if (!p->gpu && (ret = spill_new(&p->gpu, sizeof(*a))) < 0)
		return ret;
	return spill_append(p->gpu, a);
}

int profile_add_gpu_activity(struct profile *p, const struct gpu_activity *a)
{
	uint32_t frame, stack;
	int ret;

	if (!p || !a || !a->kind || a->kind > GPU_ACTIVITY_KIND_MAX || a->end_ns < a->start_ns ||
	    a->stack >= p->stack_count || a->name >= p->string_count || a->api >= p->string_count)
		return -EINVAL;
	if (a->kind != GPU_ACTIVITY_SYNC) {
		ret = leaf_frame(p, a, &frame);
		if (!ret)
			ret = profile_intern_stack(p, a->stack, frame, &stack);
		if (!ret)
			ret = profile_add_to_row(p, a->pid, a->tid ? a->tid : a->pid, stack, SAMPLE_GPU,
						 a->end_ns - a->start_ns, 1);
		if (ret)
			return ret;
	}
	if ((p->timeline || p->keep_gpu) && (ret = keep(p, a)) < 0)
		return ret;
	if (p->listener && p->listener->gpu)
		p->listener->gpu(p->listener_ctx, a);
	return 0;
}

void profile_keep_gpu_activities(struct profile *p)
{
	if (p)
		p->keep_gpu = true;
}

struct activity_visit {
	int (*fn)(const struct gpu_activity *a, void *ctx);
	void *ctx;
};

static int visit(const void *record, void *ctx)
{
	const struct activity_visit *v = ctx;

	return v->fn(record, v->ctx);
}

int profile_for_each_gpu_activity(const struct profile *p,
				  int (*fn)(const struct gpu_activity *a, void *ctx), void *ctx)
{
	struct activity_visit v = { fn, ctx };

	if (!p || !fn)
		return -EINVAL;
	return p->gpu ? spill_for_each(p->gpu, visit, &v) : 0;
}

int profile_for_each_gpu_activity_sorted(const struct profile *p,
					 int (*cmp)(const void *a, const void *b),
					 int (*fn)(const struct gpu_activity *a, void *ctx),
					 void *ctx)
{
	struct activity_visit v = { fn, ctx };

	if (!p || !fn || !cmp)
		return -EINVAL;
	return p->gpu ? spill_for_each_sorted(p->gpu, cmp, visit, &v) : 0;
}
