// SPDX-License-Identifier: MIT
/*
 * Counters: values sampled over time on named tracks (a GPU's
 * utilization, memory in use, power). Few — a handful of tracks at ten
 * samples a second — so every one is kept, and a .tsprof writer streams
 * them as they come.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common/common.h"
#include "formats/profile_impl.h"

int profile_add_counter(struct profile *p, const struct counter_sample *c)
{
	if (!p || !c || !c->track || c->track >= p->string_count || !isfinite(c->value))
		return -EINVAL;
	if (ARRAY_RESERVE(p->counters, p->capcounters, p->ncounters + 1, 256) < 0)
		return -ENOMEM;
	p->counters[p->ncounters++] = *c;
	if (p->listener && p->listener->counter)
		p->listener->counter(p->listener_ctx, c);
	return 0;
}

int profile_for_each_counter(const struct profile *p,
			     int (*fn)(const struct counter_sample *c, void *ctx), void *ctx)
{
	if (!p || !fn)
		return -EINVAL;
	for (uint64_t i = 0; i < p->ncounters; i++) {
		int ret = fn(&p->counters[i], ctx);

		if (ret)
			return ret;
	}
	return 0;
}
