// SPDX-License-Identifier: MIT
/*
 * Counters: values sampled over time on named tracks (a GPU's
 * utilization, memory in use, power). A handful of tracks at ten samples
 * a second is still without end on a long run, so they wait on disk
 * (common's spill) like the timeline; a .tsprof writer streams them as
 * they come.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common/common.h"
#include "formats/profile_impl.h"

int profile_add_counter(struct profile *p, const struct counter_sample *c)
{
	int ret;

	if (!p || !c || !c->track || c->track >= p->string_count || !isfinite(c->value))
		return -EINVAL;
	if (!p->counters && (ret = spill_new(&p->counters, sizeof(*c))) < 0)
		return ret;
	ret = spill_append(p->counters, c);
	if (ret < 0)
		return ret;
	if (p->listener && p->listener->counter)
		p->listener->counter(p->listener_ctx, c);
	return 0;
}

struct counter_visit {
	int (*fn)(const struct counter_sample *c, void *ctx);
	void *ctx;
};

static int visit(const void *record, void *ctx)
{
	const struct counter_visit *v = ctx;

	return v->fn(record, v->ctx);
}

int profile_for_each_counter(const struct profile *p,
			     int (*fn)(const struct counter_sample *c, void *ctx), void *ctx)
{
	struct counter_visit v = { fn, ctx };

	if (!p || !fn)
		return -EINVAL;
	return p->counters ? spill_for_each(p->counters, visit, &v) : 0;
}
