// SPDX-License-Identifier: MIT
/* Distinct label strings to dense ids. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/label_set.h"

struct label_key {
	const struct label_set *s;
	const char *text;
};

static bool same_label(const void *key, uint32_t id)
{
	const struct label_key *k = key;

	return !strcmp(k->s->text[id], k->text);
}

int label_set_intern(struct label_set *s, const char *text, uint32_t *id, bool *added)
{
	struct label_key key = { s, text };
	uint32_t h = hash_of_bytes(text, strlen(text));
	struct hash_slot *slot;

	if (added)
		*added = false;
	if (hash_table_reserve(&s->index) < 0)
		return -ENOMEM;
	slot = hash_table_find(&s->index, h, same_label, &key);
	if (slot->ref) {
		*id = slot->ref - 1;
		return 0;
	}
	if (ARRAY_RESERVE(s->text, s->cap, (size_t)s->count + 1, 16) < 0)
		return -ENOMEM;
	s->text[s->count] = strdup(text);
	if (!s->text[s->count])
		return -ENOMEM;
	hash_table_fill(&s->index, slot, h, s->count);
	*id = s->count++;
	if (added)
		*added = true;
	return 0;
}

void label_set_free(struct label_set *s)
{
	for (uint32_t i = 0; i < s->count; i++)
		free(s->text[i]);
	free(s->text);
	hash_table_free(&s->index);
	memset(s, 0, sizeof(*s));
}
