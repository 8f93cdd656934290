// SPDX-License-Identifier: MIT
/*
 * Each thread's busy share of its sampled time: thread roots in the
 * flamegraph say it. And whose waits a picture keeps (idle_keep): the
 * training loop's are its step time; a helper thread's or an idle
 * worker's would take most of the picture's width with the same wait.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/common.h"
#include "formats/formats.h"

static int by_thread(const void *a, const void *b)
{
	const struct thread_share *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int tally(const struct profile_aggregate *row, void *ctx)
{
	struct thread_shares *s = ctx;
	struct thread_share *t = NULL;

	if (row->flags & SAMPLE_GPU)
		return 0;
	/* Rows come grouped by thread more often than not: the last first. */
	for (size_t i = s->n; i-- > 0 && !t;)
		if (s->v[i].pid == row->pid && s->v[i].tid == row->tid)
			t = &s->v[i];
	if (!t) {
		if (ARRAY_RESERVE(s->v, s->cap, s->n + 1, 16) < 0)
			return -ENOMEM;
		t = &s->v[s->n++];
		*t = (struct thread_share){ .pid = row->pid, .tid = row->tid };
	}
	t->all_ns += row->weight_ns;
	if (!(row->flags & SAMPLE_IDLE))
		t->busy_ns += row->weight_ns;
	return 0;
}

int thread_shares_find(const struct profile *p, struct thread_shares *out)
{
	int ret;

	*out = (struct thread_shares){ 0 };
	ret = profile_for_each_aggregate(p, tally, out);
	if (ret < 0) {
		thread_shares_free(out);
		return ret;
	}
	array_sort(out->v, out->n, sizeof(*out->v), by_thread);
	return 0;
}

const struct thread_share *thread_shares_get(const struct thread_shares *s, uint32_t pid,
					     uint32_t tid)
{
	struct thread_share key = { .pid = pid, .tid = tid };

	return s && s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), by_thread) : NULL;
}

static int by_key(const void *a, const void *b)
{
	const struct thread_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

bool render_keeps_idle_of(const struct render_options *o, uint32_t pid, uint32_t tid)
{
	struct thread_ref key = { .pid = pid, .tid = tid };

	if (!o->idle_kept_only)
		return true;
	return o->nidle_keep && bsearch(&key, o->idle_keep, o->nidle_keep, sizeof(key), by_key);
}

void thread_shares_free(struct thread_shares *s)
{
	free(s->v);
	*s = (struct thread_shares){ 0 };
}
