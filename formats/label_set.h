/* SPDX-License-Identifier: MIT */
/* Distinct label strings to dense ids, for the writers; formats/ only. */
#ifndef TRAINSAMPLE_FORMATS_LABEL_SET_H
#define TRAINSAMPLE_FORMATS_LABEL_SET_H

#include <stdint.h>

#include "common/common.h"

struct label_set {
	char **text;
	uint32_t count, cap;
	struct hash_table index;
};

/* The id of text, added (copied) if new; *added says which. */
int label_set_intern(struct label_set *s, const char *text, uint32_t *id, bool *added);
void label_set_free(struct label_set *s);

#endif
