/* SPDX-License-Identifier: MIT */
/* The model's layout; only model*.c include this. */
#ifndef TRAINSAMPLE_FORMATS_PROFILE_IMPL_H
#define TRAINSAMPLE_FORMATS_PROFILE_IMPL_H

#include "common/common.h"
#include "formats/profile_hooks.h"

struct string_entry {
	char *text;
	uint32_t len;
};

struct thread_entry {
	uint32_t pid;
	uint32_t tid;
	uint32_t name; /* string id */
};

struct meta_entry {
	char *key;
	char *value;
};

struct profile {
	struct string_entry *strings;
	uint32_t string_count, string_cap;
	struct hash_table string_index;

	struct frame *frames;
	uint32_t frame_count, frame_cap;
	struct hash_table frame_index;

	struct stack_node *stacks; /* stack 0, the root, is not indexed */
	uint32_t stack_count, stack_cap;
	struct hash_table stack_index;

	struct thread_entry *threads;
	uint32_t thread_count, thread_cap;
	struct hash_table thread_index;

	/* A handful of keys: a linear search is enough. */
	struct meta_entry *meta;
	uint32_t meta_count, meta_cap;

	struct profile_aggregate *aggregates;
	uint32_t aggregate_count, aggregate_cap;
	struct hash_table aggregate_index;

	uint64_t sample_count;
	struct profile_timeline *timeline; /* NULL unless kept */
	struct spill *gpu;                 /* kept with the timeline, on disk */
	bool keep_gpu;                     /* kept without the timeline */
	struct spill *counters;            /* on disk */

	const struct profile_listener *listener;
	void *listener_ctx;
};

/* model_samples.c: frees threads, metadata and aggregates. */
void profile_free_samples(struct profile *p);

/* model_samples.c: adds to the row of (pid, tid, stack, flags). */
int profile_add_to_row(struct profile *p, uint32_t pid, uint32_t tid, uint32_t stack,
		       uint32_t flags, uint64_t weight_ns, uint64_t count);

/* model_timeline.c */
int timeline_add_sample(struct profile_timeline *t, const struct sample *s);
void timeline_free(struct profile_timeline *t);

#endif
