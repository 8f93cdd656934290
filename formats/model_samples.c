// SPDX-License-Identifier: MIT
/*
 * The profile model's threads, metadata and sample aggregates. Samples are
 * not kept: each one adds to its (pid, tid, stack, flags) row, and the
 * listener (a .tsprof writer) sees it in passing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/profile_impl.h"

struct thread_key {
	const struct profile *p;
	uint32_t pid;
	uint32_t tid;
};

struct aggregate_key {
	const struct profile *p;
	uint32_t pid, tid, stack, flags;
};

void profile_free_samples(struct profile *p)
{
	free(p->threads);
	hash_table_free(&p->thread_index);
	for (uint32_t i = 0; i < p->meta_count; i++) {
		free(p->meta[i].key);
		free(p->meta[i].value);
	}
	free(p->meta);
	free(p->aggregates);
	hash_table_free(&p->aggregate_index);
	timeline_free(p->timeline);
	spill_free(p->gpu);
	spill_free(p->counters);
}

static bool same_thread(const void *key, uint32_t id)
{
	const struct thread_key *k = key;
	const struct thread_entry *t = &k->p->threads[id];

	return t->pid == k->pid && t->tid == k->tid;
}

static void tell_thread(const struct profile *p, const struct thread_entry *t)
{
	if (p->listener && p->listener->thread)
		p->listener->thread(p->listener_ctx, t->pid, t->tid, t->name);
}

int profile_set_thread(struct profile *p, uint32_t pid, uint32_t tid,
		       const char *name)
{
	struct thread_key key = { .p = p, .pid = pid, .tid = tid };
	uint32_t words[2] = { pid, tid };
	struct hash_slot *slot;
	uint32_t hash, name_id, id;
	int err;

	if (!p)
		return -EINVAL;
	err = profile_intern_string(p, name ? name : "", &name_id);
	if (err)
		return err;
	err = hash_table_reserve(&p->thread_index);
	if (err)
		return err;
	hash = hash_of_words(words, 2);
	slot = hash_table_find(&p->thread_index, hash, same_thread, &key);
	if (slot->ref) {
		struct thread_entry *t = &p->threads[slot->ref - 1];

		if (t->name != name_id) {
			t->name = name_id;
			tell_thread(p, t);
		}
		return 0;
	}
	if (ARRAY_RESERVE(p->threads, p->thread_cap, (size_t)p->thread_count + 1, 16) < 0)
		return -ENOMEM;
	id = p->thread_count++;
	p->threads[id] = (struct thread_entry){ pid, tid, name_id };
	hash_table_fill(&p->thread_index, slot, hash, id);
	tell_thread(p, &p->threads[id]);
	return 0;
}

const char *profile_thread_name(const struct profile *p, uint32_t pid,
				uint32_t tid)
{
	struct thread_key key = { .p = p, .pid = pid, .tid = tid };
	uint32_t words[2] = { pid, tid };
	struct hash_slot *slot;
	uint32_t name;

	if (!p || !p->thread_index.slots)
		return NULL;
	slot = hash_table_find(&p->thread_index, hash_of_words(words, 2),
				 same_thread, &key);
	if (!slot->ref)
		return NULL;
	name = p->threads[slot->ref - 1].name;
	return name ? p->strings[name].text : NULL;
}

int profile_for_each_thread(const struct profile *p,
			    int (*fn)(uint32_t pid, uint32_t tid,
				      uint32_t name, void *ctx),
			    void *ctx)
{
	if (!p || !fn)
		return -EINVAL;
	for (uint32_t i = 0; i < p->thread_count; i++) {
		const struct thread_entry *t = &p->threads[i];
		int ret = fn(t->pid, t->tid, t->name, ctx);

		if (ret)
			return ret;
	}
	return 0;
}

static struct meta_entry *find_meta(const struct profile *p, const char *key)
{
	for (uint32_t i = 0; i < p->meta_count; i++)
		if (!strcmp(p->meta[i].key, key))
			return &p->meta[i];
	return NULL;
}

static int replace_meta_value(struct meta_entry *m, const char *value)
{
	char *copy;

	if (!strcmp(m->value, value))
		return 1; /* unchanged: nothing to tell the listener */
	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	free(m->value);
	m->value = copy;
	return 0;
}

static int add_meta(struct profile *p, const char *key, const char *value,
		    struct meta_entry **out)
{
	struct meta_entry m;

	if (ARRAY_RESERVE(p->meta, p->meta_cap, (size_t)p->meta_count + 1, 16) < 0)
		return -ENOMEM;
	m.key = strdup(key);
	m.value = strdup(value);
	if (!m.key || !m.value) {
		free(m.key);
		free(m.value);
		return -ENOMEM;
	}
	p->meta[p->meta_count] = m;
	*out = &p->meta[p->meta_count++];
	return 0;
}

int profile_set_meta(struct profile *p, const char *key, const char *value)
{
	struct meta_entry *m;
	int ret;

	if (!p || !key || !*key || !value)
		return -EINVAL;
	if (strlen(key) > PROFILE_MAX_STRING ||
	    strlen(value) > PROFILE_MAX_STRING)
		return -E2BIG;
	m = find_meta(p, key);
	if (m)
		ret = replace_meta_value(m, value);
	else
		ret = add_meta(p, key, value, &m);
	if (ret < 0)
		return ret;
	if (ret == 0 && p->listener && p->listener->meta)
		p->listener->meta(p->listener_ctx, m->key, m->value);
	return 0;
}

const char *profile_meta(const struct profile *p, const char *key)
{
	const struct meta_entry *m;

	if (!p || !key)
		return NULL;
	m = find_meta(p, key);
	return m ? m->value : NULL;
}

int profile_for_each_meta(const struct profile *p,
			  int (*fn)(const char *key, const char *value,
				    void *ctx),
			  void *ctx)
{
	if (!p || !fn)
		return -EINVAL;
	for (uint32_t i = 0; i < p->meta_count; i++) {
		int ret = fn(p->meta[i].key, p->meta[i].value, ctx);

		if (ret)
			return ret;
	}
	return 0;
}

static bool same_aggregate(const void *key, uint32_t id)
{
	const struct aggregate_key *k = key;
	const struct profile_aggregate *a = &k->p->aggregates[id];

	return a->pid == k->pid && a->tid == k->tid && a->stack == k->stack &&
	       a->flags == k->flags;
}

/* The row for (pid, tid, stack, flags), made empty when new. */
static int aggregate_row(struct profile *p, uint32_t pid, uint32_t tid,
			 uint32_t stack, uint32_t flags,
			 struct profile_aggregate **row)
{
	struct aggregate_key key = { p, pid, tid, stack, flags };
	uint32_t words[4] = { pid, tid, stack, flags };
	struct hash_slot *slot;
	uint32_t hash, id;
	int err;

	err = hash_table_reserve(&p->aggregate_index);
	if (err)
		return err;
	hash = hash_of_words(words, 4);
	slot = hash_table_find(&p->aggregate_index, hash, same_aggregate,
				 &key);
	if (slot->ref) {
		*row = &p->aggregates[slot->ref - 1];
		return 0;
	}
	if (ARRAY_RESERVE(p->aggregates, p->aggregate_cap, (size_t)p->aggregate_count + 1, 16) < 0)
		return -ENOMEM;
	id = p->aggregate_count++;
	p->aggregates[id] = (struct profile_aggregate){
		.pid = pid, .tid = tid, .stack = stack, .flags = flags,
	};
	hash_table_fill(&p->aggregate_index, slot, hash, id);
	*row = &p->aggregates[id];
	return 0;
}

int profile_add_to_row(struct profile *p, uint32_t pid, uint32_t tid, uint32_t stack,
		       uint32_t flags, uint64_t weight_ns, uint64_t count)
{
	struct profile_aggregate *row;
	int err = aggregate_row(p, pid, tid, stack, flags, &row);

	if (err)
		return err;
	row->weight_ns += weight_ns;
	row->count += count;
	return 0;
}

int profile_add_sample(struct profile *p, const struct sample *s)
{
	struct profile_aggregate *row;
	int err;

	if (!p || !s || s->stack >= p->stack_count)
		return -EINVAL;
	err = aggregate_row(p, s->pid, s->tid, s->stack, s->flags, &row);
	if (!err && p->timeline)
		err = timeline_add_sample(p->timeline, s);
	if (err)
		return err;
	row->weight_ns += s->weight_ns;
	row->count++;
	p->sample_count++;
	if (p->listener && p->listener->sample)
		p->listener->sample(p->listener_ctx, s);
	return 0;
}

int profile_merge_aggregate(struct profile *p,
			    const struct profile_aggregate *in)
{
	struct profile_aggregate *row;
	int err;

	if (!p || !in || in->stack >= p->stack_count || !in->count)
		return -EINVAL;
	err = aggregate_row(p, in->pid, in->tid, in->stack, in->flags, &row);
	if (err)
		return err;
	row->weight_ns += in->weight_ns;
	row->count += in->count;
	p->sample_count += in->count;
	if (p->listener && p->listener->aggregate)
		p->listener->aggregate(p->listener_ctx, in);
	return 0;
}

uint64_t profile_sample_count(const struct profile *p)
{
	return p ? p->sample_count : 0;
}

int profile_for_each_aggregate(const struct profile *p,
			       int (*fn)(const struct profile_aggregate *row,
					 void *ctx),
			       void *ctx)
{
	if (!p || !fn)
		return -EINVAL;
	for (uint32_t i = 0; i < p->aggregate_count; i++) {
		int ret = fn(&p->aggregates[i], ctx);

		if (ret)
			return ret;
	}
	return 0;
}
