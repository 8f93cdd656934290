// SPDX-License-Identifier: MIT
/*
 * The profile model: interned strings and frames, and the stack trie.
 * Threads, metadata and samples are in model_samples.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/profile_impl.h"

struct string_key {
	const struct profile *p;
	const char *text;
	size_t len;
};

struct frame_key {
	const struct profile *p;
	const struct frame *f;
};

struct stack_key {
	const struct profile *p;
	uint32_t parent;
	uint32_t frame;
};

static int add_root_items(struct profile *p)
{
	uint32_t id;
	int err;

	err = profile_intern_string(p, "", &id);
	if (err)
		return err;
	if (ARRAY_RESERVE(p->stacks, p->stack_cap, 1, 16) < 0)
		return -ENOMEM;
	/* The root: no frame, depth 0. */
	p->stacks[0] = (struct stack_node){ 0 };
	p->stack_count = 1;
	return 0;
}

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (add_root_items(p)) {
		profile_free(p);
		return NULL;
	}
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->string_count; i++)
		free(p->strings[i].text);
	free(p->strings);
	hash_table_free(&p->string_index);
	free(p->frames);
	hash_table_free(&p->frame_index);
	free(p->stacks);
	hash_table_free(&p->stack_index);
	profile_free_samples(p);
	free(p);
}

int profile_attach(struct profile *p, const struct profile_listener *l,
		   void *ctx)
{
	if (!p || !l)
		return -EINVAL;
	if (p->listener)
		return -EBUSY;
	p->listener = l;
	p->listener_ctx = ctx;
	return 0;
}

void profile_detach(struct profile *p)
{
	if (!p)
		return;
	p->listener = NULL;
	p->listener_ctx = NULL;
}

static bool same_string(const void *key, uint32_t id)
{
	const struct string_key *k = key;
	const struct string_entry *e = &k->p->strings[id];

	return e->len == k->len && !memcmp(e->text, k->text, k->len);
}

int profile_intern_string(struct profile *p, const char *s, uint32_t *id)
{
	struct string_key key = { .p = p, .text = s };
	struct hash_slot *slot;
	uint32_t hash, new_id;
	char *copy;
	int err;

	if (!p || !s || !id)
		return -EINVAL;
	key.len = strlen(s);
	if (key.len > PROFILE_MAX_STRING)
		return -E2BIG;
	err = hash_table_reserve(&p->string_index);
	if (err)
		return err;
	hash = hash_of_bytes(s, key.len);
	slot = hash_table_find(&p->string_index, hash, same_string, &key);
	if (slot->ref) {
		*id = slot->ref - 1;
		return 0;
	}
	if (ARRAY_RESERVE(p->strings, p->string_cap, (size_t)p->string_count + 1, 16) < 0)
		return -ENOMEM;
	copy = malloc(key.len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, key.len + 1);
	new_id = p->string_count++;
	p->strings[new_id] = (struct string_entry){ copy, (uint32_t)key.len };
	hash_table_fill(&p->string_index, slot, hash, new_id);
	if (p->listener && p->listener->string)
		p->listener->string(p->listener_ctx, new_id, copy, key.len);
	*id = new_id;
	return 0;
}

static uint32_t frame_hash(const struct frame *f)
{
	uint32_t words[4] = { f->kind, f->name, f->module, f->line };

	return hash_of_words(words, 4);
}

static bool same_frame(const void *key, uint32_t id)
{
	const struct frame_key *k = key;
	const struct frame *a = &k->p->frames[id], *b = k->f;

	return a->kind == b->kind && a->name == b->name &&
	       a->module == b->module && a->line == b->line;
}

int profile_intern_frame(struct profile *p, const struct frame *f,
			 uint32_t *id)
{
	struct frame_key key = { .p = p, .f = f };
	struct hash_slot *slot;
	uint32_t hash, new_id;
	int err;

	if (!p || !f || !id)
		return -EINVAL;
	if (f->kind > FRAME_KIND_MAX || f->name >= p->string_count ||
	    f->module >= p->string_count)
		return -EINVAL;
	err = hash_table_reserve(&p->frame_index);
	if (err)
		return err;
	hash = frame_hash(f);
	slot = hash_table_find(&p->frame_index, hash, same_frame, &key);
	if (slot->ref) {
		*id = slot->ref - 1;
		return 0;
	}
	if (ARRAY_RESERVE(p->frames, p->frame_cap, (size_t)p->frame_count + 1, 16) < 0)
		return -ENOMEM;
	new_id = p->frame_count++;
	p->frames[new_id] = *f;
	hash_table_fill(&p->frame_index, slot, hash, new_id);
	if (p->listener && p->listener->frame)
		p->listener->frame(p->listener_ctx, new_id, &p->frames[new_id]);
	*id = new_id;
	return 0;
}

static bool same_stack(const void *key, uint32_t id)
{
	const struct stack_key *k = key;
	const struct stack_node *n = &k->p->stacks[id];

	return n->parent == k->parent && n->frame == k->frame;
}

int profile_intern_stack(struct profile *p, uint32_t parent, uint32_t frame,
			 uint32_t *id)
{
	struct stack_key key = { .p = p, .parent = parent, .frame = frame };
	uint32_t words[2] = { parent, frame };
	struct hash_slot *slot;
	uint32_t hash, new_id;
	int err;

	if (!p || !id || parent >= p->stack_count || frame >= p->frame_count)
		return -EINVAL;
	err = hash_table_reserve(&p->stack_index);
	if (err)
		return err;
	hash = hash_of_words(words, 2);
	slot = hash_table_find(&p->stack_index, hash, same_stack, &key);
	if (slot->ref) {
		*id = slot->ref - 1;
		return 0;
	}
	if (ARRAY_RESERVE(p->stacks, p->stack_cap, (size_t)p->stack_count + 1, 16) < 0)
		return -ENOMEM;
	new_id = p->stack_count++;
	p->stacks[new_id] = (struct stack_node){
		.parent = parent,
		.frame = frame,
		.depth = p->stacks[parent].depth + 1,
	};
	hash_table_fill(&p->stack_index, slot, hash, new_id);
	if (p->listener && p->listener->stack)
		p->listener->stack(p->listener_ctx, new_id, &p->stacks[new_id]);
	*id = new_id;
	return 0;
}

uint32_t profile_string_count(const struct profile *p)
{
	return p ? p->string_count : 0;
}

const char *profile_string(const struct profile *p, uint32_t id)
{
	if (!p || id >= p->string_count)
		return NULL;
	return p->strings[id].text;
}

uint32_t profile_frame_count(const struct profile *p)
{
	return p ? p->frame_count : 0;
}

const struct frame *profile_frame(const struct profile *p, uint32_t id)
{
	if (!p || id >= p->frame_count)
		return NULL;
	return &p->frames[id];
}

uint32_t profile_stack_count(const struct profile *p)
{
	return p ? p->stack_count : 0;
}

const struct stack_node *profile_stack(const struct profile *p, uint32_t id)
{
	if (!p || id >= p->stack_count)
		return NULL;
	return &p->stacks[id];
}
