// SPDX-License-Identifier: MIT
/*
 * The model's timeline, kept only when a writer needs time (the trace):
 * per thread, consecutive samples with one stack and flags make one span.
 * Spans grow with how often stacks change, which on a long run is without
 * bound, so only each thread's open span is in memory and closed ones are
 * appended to a temporary file.
 * A sample stands for the interval that ended at its time (its weight is
 * the time since the tick before), so a thread sampled at every tick has
 * spans that touch.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/common.h"
#include "formats/profile_impl.h"

struct timeline_thread {
	struct profile_span open; /* its latest span, still growing */
};

struct profile_timeline {
	struct spill *closed;
	struct timeline_thread *threads;
	uint32_t nthreads, capthreads;
	struct hash_table thread_index;
	uint64_t first_ns; /* the earliest span start; UINT64_MAX: none yet */
};

struct thread_key {
	const struct profile_timeline *t;
	uint32_t pid, tid;
};

static bool same_thread(const void *key, uint32_t id)
{
	const struct thread_key *k = key;

	return k->t->threads[id].open.pid == k->pid && k->t->threads[id].open.tid == k->tid;
}

void timeline_free(struct profile_timeline *t)
{
	if (!t)
		return;
	spill_free(t->closed);
	free(t->threads);
	hash_table_free(&t->thread_index);
	free(t);
}

int profile_keep_timeline(struct profile *p)
{
	if (!p)
		return -EINVAL;
	if (p->timeline)
		return 0;
	if (p->sample_count)
		return -EBUSY; /* the samples before would be missing */
	p->timeline = calloc(1, sizeof(*p->timeline));
	if (!p->timeline)
		return -ENOMEM;
	p->timeline->first_ns = UINT64_MAX;
	return spill_new(&p->timeline->closed, sizeof(struct profile_span));
}

bool profile_keeps_timeline(const struct profile *p)
{
	return p && p->timeline;
}

static struct profile_span span_of(const struct sample *s)
{
	return (struct profile_span){
		.start_ns = s->time_ns > s->weight_ns ? s->time_ns - s->weight_ns : 0,
		.end_ns = s->time_ns,
		.pid = s->pid, .tid = s->tid, .stack = s->stack, .flags = s->flags,
		.count = 1,
	};
}

int timeline_add_sample(struct profile_timeline *t, const struct sample *s)
{
	struct thread_key key = { t, s->pid, s->tid };
	uint32_t words[2] = { s->pid, s->tid };
	uint32_t h = hash_of_words(words, 2);
	struct hash_slot *slot;
	struct profile_span *last;
	int ret;

	if (hash_table_reserve(&t->thread_index) < 0)
		return -ENOMEM;
	slot = hash_table_find(&t->thread_index, h, same_thread, &key);
	if (!slot->ref) {
		if (ARRAY_RESERVE(t->threads, t->capthreads, (size_t)t->nthreads + 1, 16) < 0)
			return -ENOMEM;
		t->threads[t->nthreads].open = span_of(s);
		hash_table_fill(&t->thread_index, slot, h, t->nthreads++);
		last = &t->threads[t->nthreads - 1].open;
		goto opened;
	}
	last = &t->threads[slot->ref - 1].open;
	/* Touching (a quarter of an interval of slack for timer jitter), same
	 * stack, same flags: the span goes on. A missed tick leaves a gap. */
	if (last->stack == s->stack && last->flags == s->flags && s->time_ns >= last->end_ns &&
	    s->time_ns - s->weight_ns <= last->end_ns + s->weight_ns / 4) {
		last->end_ns = s->time_ns;
		last->count++;
		return 0;
	}
	ret = spill_append(t->closed, last);
	if (ret < 0)
		return ret;
	*last = span_of(s);
opened:
	if (last->start_ns < t->first_ns)
		t->first_ns = last->start_ns;
	return 0;
}

struct span_visit {
	int (*fn)(const struct profile_span *span, void *ctx);
	void *ctx;
};

static int visit_closed(const void *record, void *ctx)
{
	const struct span_visit *v = ctx;

	return v->fn(record, v->ctx);
}

int profile_for_each_span(const struct profile *p,
			  int (*fn)(const struct profile_span *span, void *ctx), void *ctx)
{
	struct span_visit v = { fn, ctx };
	int ret;

	if (!p || !fn)
		return -EINVAL;
	if (!p->timeline)
		return 0;
	ret = spill_for_each(p->timeline->closed, visit_closed, &v);
	for (uint32_t i = 0; i < p->timeline->nthreads && !ret; i++)
		ret = fn(&p->timeline->threads[i].open, ctx);
	return ret;
}

uint64_t profile_timeline_start_ns(const struct profile *p)
{
	return p && p->timeline ? p->timeline->first_ns : UINT64_MAX;
}
