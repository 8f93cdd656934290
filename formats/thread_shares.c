// SPDX-License-Identifier: MIT
/*
 * Each thread's busy share of its sampled time: thread roots in the
 * flamegraph say it, and threads idle nearly throughout (busy under 5% of
 * their sampled time, main threads aside: a data-bound
 * job's QueueFeederThreads, pin-memory and helper threads, blocked from
 * start to end) fold into one "[idle threads]" frame, instead of taking
 * most of the picture's width with the same wait.
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

bool thread_idle_throughout(const struct render_options *o, uint32_t pid, uint32_t tid)
{
	const struct thread_share *t;

	if (!o->fold_idle_threads || !o->include_idle)
		return false;
	/* A process's main thread stays: its wait (a join, a queue) tells
	 * what the whole process waits for. */
	if (tid == pid)
		return false;
	t = thread_shares_get(o->thread_busy, pid, tid);
	return t && t->all_ns && t->busy_ns * 20 < t->all_ns;
}

void thread_shares_free(struct thread_shares *s)
{
	free(s->v);
	*s = (struct thread_shares){ 0 };
}
