/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing index from a key to a dense id, for the profile model.
 * The table stores only ids and hashes; the items live in the model's own
 * arrays, so a lookup asks the caller whether item `id` is the key.
 */
#ifndef TRAINSAMPLE_FORMATS_INTERN_TABLE_H
#define TRAINSAMPLE_FORMATS_INTERN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intern_slot {
	uint32_t hash;
	uint32_t ref; /* id + 1; 0 marks an empty slot */
};

struct intern_table {
	struct intern_slot *slots;
	uint32_t mask; /* capacity - 1; the capacity is a power of two */
	uint32_t used;
};

void intern_table_free(struct intern_table *t);
/* Makes room for one more id; call before intern_table_find when the key
 * may be inserted, since growing moves the slots. */
int intern_table_reserve(struct intern_table *t);
/* The slot holding the key, or the empty slot where it belongs. The table
 * must have been reserved at least once. */
struct intern_slot *
intern_table_find(const struct intern_table *t, uint32_t hash,
		  bool (*same)(const void *key, uint32_t id), const void *key);
void intern_table_fill(struct intern_table *t, struct intern_slot *slot,
		       uint32_t hash, uint32_t id);

uint32_t intern_hash_bytes(const void *data, size_t len);
uint32_t intern_hash_words(const uint32_t *words, size_t n);

#endif
