// SPDX-License-Identifier: MIT
/* common/hash_table.c against a plain array: keys put, found and taken
 * out in a mixed order, past several growths. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "common/common.h"

#define KEYS 1500

struct keys {
	uint32_t value[KEYS]; /* id -> key */
};

static struct keys *test_keys;

static bool same_key(const void *key, uint32_t id)
{
	const uint32_t *k = key;

	return test_keys->value[id] == *k;
}

/* A poor hash on purpose, so probe runs are long and cross the end. */
static uint32_t poor_hash(uint32_t key)
{
	return key % 7 * 0x0fffffffu;
}

static struct hash_slot *find(struct hash_table *t, uint32_t key)
{
	return hash_table_find(t, poor_hash(key), same_key, &key);
}

Test(hash_table, removal_keeps_every_other_key_reachable)
{
	static struct keys keys;
	static bool in[KEYS];
	struct hash_table t = { 0 };
	unsigned seed = 1;

	test_keys = &keys;
	for (uint32_t id = 0; id < KEYS; id++)
		keys.value[id] = id * 2654435761u;
	for (int round = 0; round < 4 * KEYS; round++) {
		uint32_t id = (uint32_t)rand_r(&seed) % KEYS;
		struct hash_slot *s;

		cr_assert_eq(hash_table_reserve(&t), 0);
		s = find(&t, keys.value[id]);
		cr_assert_eq(s->ref != 0, in[id], "round %d id %u", round, id);
		if (in[id]) {
			cr_assert_eq(s->ref, id + 1);
			hash_table_remove(&t, s);
		} else {
			hash_table_fill(&t, s, poor_hash(keys.value[id]), id);
		}
		in[id] = !in[id];
		if (round % 997 == 0)
			for (uint32_t k = 0; k < KEYS; k++)
				cr_assert_eq(find(&t, keys.value[k])->ref != 0, in[k], "key %u", k);
	}
	for (uint32_t k = 0; k < KEYS; k++) {
		struct hash_slot *s = find(&t, keys.value[k]);

		cr_assert_eq(s->ref != 0, in[k]);
		if (in[k])
			hash_table_remove(&t, s);
	}
	cr_assert_eq(t.used, 0);
	hash_table_free(&t);
}
