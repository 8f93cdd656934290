/* SPDX-License-Identifier: MIT */
/*
 * The copy queue (queue.c): stacks copied at a tick, waiting, bounded, to
 * be unwound once the target runs again.
 */
#ifndef TRAINSAMPLE_SAMPLER_QUEUE_H
#define TRAINSAMPLE_SAMPLER_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sampler;
struct stack_sample;

struct copy_queue {
	struct stack_sample *slots;
	size_t limit, head, count;
};

int queue_init(struct sampler *s);
void queue_free(struct sampler *s);
bool queue_prepare(struct sampler *s, size_t n);
struct stack_sample *queue_reserve(struct sampler *s);
void queue_commit(struct sampler *s);
/* Unwinds the copies queued until the time until (the after-resume
 * path: stacks.c). */
void queue_process(struct sampler *s, uint64_t until);

#endif
