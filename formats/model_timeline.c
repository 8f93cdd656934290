// SPDX-License-Identifier: MIT
/*
 * The model's timeline, kept only when a writer needs time (the trace):
 * per thread, consecutive samples with one stack and flags make one span,
 * so memory grows with how often stacks change, not with the samples.
 * A sample stands for the interval that ended at its time (its weight is
 * the time since the tick before), so a thread sampled at every tick has
 * spans that touch.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/common.h"
#include "formats/profile_impl.h"

struct timeline_thread {
	uint32_t pid, tid;
	uint32_t last; /* its latest span */
};

struct profile_timeline {
	struct profile_span *spans;
	uint32_t count, cap;
	struct timeline_thread *threads;
	uint32_t nthreads, capthreads;
	struct intern_table thread_index;
};

struct thread_key {
	const struct profile_timeline *t;
	uint32_t pid, tid;
};

static bool same_thread(const void *key, uint32_t id)
{
	const struct thread_key *k = key;

	return k->t->threads[id].pid == k->pid && k->t->threads[id].tid == k->tid;
}

void timeline_free(struct profile_timeline *t)
{
	if (!t)
		return;
	free(t->spans);
	free(t->threads);
	intern_table_free(&t->thread_index);
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
	return p->timeline ? 0 : -ENOMEM;
}

bool profile_keeps_timeline(const struct profile *p)
{
	return p && p->timeline;
}

static int new_span(struct profile_timeline *t, const struct sample *s, uint32_t *id)
{
	if (ARRAY_RESERVE(t->spans, t->cap, (size_t)t->count + 1, 16) < 0)
		return -ENOMEM;
	*id = t->count++;
	t->spans[*id] = (struct profile_span){
		.start_ns = s->time_ns > s->weight_ns ? s->time_ns - s->weight_ns : 0,
		.end_ns = s->time_ns,
		.pid = s->pid, .tid = s->tid, .stack = s->stack, .flags = s->flags,
		.count = 1,
	};
	return 0;
}

int timeline_add_sample(struct profile_timeline *t, const struct sample *s)
{
	struct thread_key key = { t, s->pid, s->tid };
	uint32_t words[2] = { s->pid, s->tid };
	uint32_t h = intern_hash_words(words, 2), id;
	struct intern_slot *slot;
	struct profile_span *last;
	int ret;

	if (intern_table_reserve(&t->thread_index) < 0)
		return -ENOMEM;
	slot = intern_table_find(&t->thread_index, h, same_thread, &key);
	if (!slot->ref) {
		if (ARRAY_RESERVE(t->threads, t->capthreads, (size_t)t->nthreads + 1, 16) < 0)
			return -ENOMEM;
		ret = new_span(t, s, &id);
		if (ret < 0)
			return ret;
		t->threads[t->nthreads] = (struct timeline_thread){ s->pid, s->tid, id };
		intern_table_fill(&t->thread_index, slot, h, t->nthreads++);
		return 0;
	}
	last = &t->spans[t->threads[slot->ref - 1].last];
	/* Touching (a quarter of an interval of slack for timer jitter), same
	 * stack, same flags: the span goes on. A missed tick leaves a gap. */
	if (last->stack == s->stack && last->flags == s->flags && s->time_ns >= last->end_ns &&
	    s->time_ns - s->weight_ns <= last->end_ns + s->weight_ns / 4) {
		last->end_ns = s->time_ns;
		last->count++;
		return 0;
	}
	ret = new_span(t, s, &id);
	if (ret < 0)
		return ret;
	t->threads[slot->ref - 1].last = id;
	return 0;
}

int profile_for_each_span(const struct profile *p,
			  int (*fn)(const struct profile_span *span, void *ctx), void *ctx)
{
	if (!p || !fn)
		return -EINVAL;
	if (!p->timeline)
		return 0;
	for (uint32_t i = 0; i < p->timeline->count; i++) {
		int ret = fn(&p->timeline->spans[i], ctx);

		if (ret)
			return ret;
	}
	return 0;
}
