// SPDX-License-Identifier: MIT
/*
 * The one hash table (declared in common/common.h): open addressing,
 * linear probing, under 3/4 full; it holds ids, the items stay the
 * caller's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/common.h"

#define INITIAL_SLOTS 64u

void hash_table_free(struct hash_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->mask = 0;
	t->used = 0;
}

static void place(struct hash_slot *slots, uint32_t mask,
		  struct hash_slot item)
{
	uint32_t i = item.hash & mask;

	while (slots[i].ref)
		i = (i + 1) & mask;
	slots[i] = item;
}

int hash_table_reserve(struct hash_table *t)
{
	uint64_t cap = t->slots ? (uint64_t)t->mask + 1 : 0;
	uint64_t new_cap;
	struct hash_slot *slots;

	/* Keep the load under 3/4 so probe sequences stay short. */
	if (cap && ((uint64_t)t->used + 1) * 4 <= cap * 3)
		return 0;
	new_cap = cap ? cap * 2 : INITIAL_SLOTS;
	if (new_cap > (1ull << 32))
		return -ENOMEM;
	slots = calloc(new_cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (uint64_t i = 0; i < cap; i++)
		if (t->slots[i].ref)
			place(slots, (uint32_t)(new_cap - 1), t->slots[i]);
	free(t->slots);
	t->slots = slots;
	t->mask = (uint32_t)(new_cap - 1);
	return 0;
}

void hash_table_fill(struct hash_table *t, struct hash_slot *slot,
		       uint32_t hash, uint32_t id)
{
	slot->hash = hash;
	slot->ref = id + 1;
	t->used++;
}

/* Backward shift: the slots after the hole that may sit there move back,
 * so every probe still meets its key before an empty slot, with no
 * tombstones to pile up in a table whose keys come and go. */
void hash_table_remove(struct hash_table *t, struct hash_slot *slot)
{
	uint32_t hole = (uint32_t)(slot - t->slots), i = hole;

	for (;;) {
		uint32_t home;

		i = (i + 1) & t->mask;
		if (!t->slots[i].ref)
			break;
		home = t->slots[i].hash & t->mask;
		/* Movable when its home is not after the hole (cyclically). */
		if (((i - home) & t->mask) >= ((i - hole) & t->mask)) {
			t->slots[hole] = t->slots[i];
			hole = i;
		}
	}
	t->slots[hole] = (struct hash_slot){ 0 };
	t->used--;
}

/* FNV-1a, folded to 32 bits. */
uint32_t hash_of_bytes(const void *data, size_t len)
{
	const unsigned char *b = data;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return (uint32_t)(h ^ (h >> 32));
}

/* A multiply-xorshift mix per word, so nearby ids spread over the table. */
uint32_t hash_of_words(const uint32_t *words, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < n; i++) {
		h ^= words[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 32));
}
