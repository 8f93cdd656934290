/* SPDX-License-Identifier: MIT */
/*
 * What the files of formats/ need from the model beyond formats.h: a
 * listener that sees every addition as it happens (the .tsprof writer), a
 * way to replay aggregate rows, and iteration over threads and metadata.
 */
#ifndef TRAINSAMPLE_FORMATS_PROFILE_HOOKS_H
#define TRAINSAMPLE_FORMATS_PROFILE_HOOKS_H

#include "formats/formats.h"

/* Longest string the model accepts, so every recording can be read back. */
#define PROFILE_MAX_STRING (1u << 20)

/*
 * Called after each new item is stored, in the order they happen, so a
 * listener that writes them out writes every definition before its first
 * use. Callbacks cannot fail: a listener keeps its own errors.
 */
struct profile_listener {
	void (*string)(void *ctx, uint32_t id, const char *s, size_t len);
	void (*frame)(void *ctx, uint32_t id, const struct frame *f);
	void (*stack)(void *ctx, uint32_t id, const struct stack_node *n);
	/* A new thread, or a thread whose name changed. */
	void (*thread)(void *ctx, uint32_t pid, uint32_t tid, uint32_t name);
	/* A new key, or a key whose value changed. */
	void (*meta)(void *ctx, const char *key, const char *value);
	void (*sample)(void *ctx, const struct sample *s);
	void (*aggregate)(void *ctx, const struct profile_aggregate *row);
	void (*gpu)(void *ctx, const struct gpu_activity *a);
	void (*counter)(void *ctx, const struct counter_sample *c);
};

/* One listener at a time: -EBUSY when one is attached already. */
int profile_attach(struct profile *p, const struct profile_listener *l,
		   void *ctx);
void profile_detach(struct profile *p);

/* Adds a whole aggregate row (weight and count) at once: how a profile
 * that was aggregated before a writer opened is carried into a recording. */
int profile_merge_aggregate(struct profile *p,
			    const struct profile_aggregate *row);

/* Both stop at and return fn's first non-zero result. A thread's name is
 * a string id, 0 when it has none. */
int profile_for_each_thread(const struct profile *p,
			    int (*fn)(uint32_t pid, uint32_t tid,
				      uint32_t name, void *ctx),
			    void *ctx);
int profile_for_each_meta(const struct profile *p,
			  int (*fn)(const char *key, const char *value,
				    void *ctx),
			  void *ctx);

#endif
