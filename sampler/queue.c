// SPDX-License-Identifier: MIT
/*
 * Copies waiting to be unwound, oldest first. A tick only copies (the
 * target waits for nothing else); unwinding and symbolizing run from this
 * queue in the time left before the next tick. The queue is bounded: when
 * unwinding falls behind (a cold library's symbols, say) new samples are
 * dropped and counted, the target is never stopped longer and memory never
 * grows past the bound.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/internal.h"
#include "sampler/queue.h"
#include "sampler/stacks.h"
#include "sampler/waits.h"

/* Bytes of stack copies the queue may hold. */
#define QUEUE_BYTES (32u << 20)
#define QUEUE_MIN_SLOTS 16

static size_t queue_limit(const struct sampler *s)
{
	size_t n = QUEUE_BYTES / s->opt.stack_bytes;

	if (s->opt.queue_copies)
		return s->opt.queue_copies;
	return n < QUEUE_MIN_SLOTS ? QUEUE_MIN_SLOTS : n;
}

int queue_init(struct sampler *s)
{
	s->queue.limit = queue_limit(s);
	s->queue.slots = calloc(s->queue.limit, sizeof(*s->queue.slots));
	return s->queue.slots ? 0 : -ENOMEM;
}

void queue_free(struct sampler *s)
{
	for (size_t i = 0; i < s->queue.limit && s->queue.slots; i++)
	{
		free(s->queue.slots[i].data);
		free(s->queue.slots[i].py);
		free(s->queue.slots[i].py_frames);
	}
	free(s->queue.slots);
	s->queue.slots = NULL;
}

/*
 * Gives the next n free slots buffers, touched so their pages exist: done
 * before a thread is interrupted, so its copy never waits for the kernel
 * to fault fresh memory in. Returns false when there is no room.
 */
bool queue_prepare(struct sampler *s, size_t n)
{
	struct copy_queue *q = &s->queue;

	if (q->count + n > q->limit)
		return false;
	for (size_t k = 0; k < n; k++) {
		struct stack_sample *c = &q->slots[(q->head + q->count + k) % q->limit];

		if (c->data)
			continue;
		c->data = malloc(s->opt.stack_bytes + STACK_RED_ZONE);
		if (!c->data)
			return false;
		memset(c->data, 0, s->opt.stack_bytes + STACK_RED_ZONE);
	}
	return true;
}

/* The next free slot, with its buffer; NULL when full. Not queued until
 * queue_commit. */
struct stack_sample *queue_reserve(struct sampler *s)
{
	struct copy_queue *q = &s->queue;
	struct stack_sample *c;

	if (q->count == q->limit)
		return NULL;
	c = &q->slots[(q->head + q->count) % q->limit];
	if (!c->data && !(c->data = malloc(s->opt.stack_bytes + STACK_RED_ZONE)))
		return NULL;
	return c;
}

void queue_commit(struct sampler *s)
{
	s->queue.count++;
}

/* Unwinds queued copies until `until` (CLOCK_MONOTONIC) or the queue is empty. */
void queue_process(struct sampler *s, uint64_t until)
{
	struct copy_queue *q = &s->queue;

	while (q->count && monotonic_ns() < until) {
		struct stack_sample *c = &q->slots[q->head];

		q->head = (q->head + 1) % q->limit;
		q->count--;
		/* Copies of an image replaced by exec would unwind into the new maps. */
		if (c->exec_seq != s->exec_seq)
			s->st.dropped++;
		else if (c->blocked)
			stacks_add_blocked(s, thread_find(s, c->tid), &c->state, c);
		else
			stacks_add_running(s, c);
		/* Stops that came meanwhile (a new thread, a signal) are served
		 * between copies, not after all of them. */
		stops_wait(s, 0);
	}
	/* Empty: start again at the first slots, whose buffers are warm, so
	 * a copy does not fault in fresh pages while its thread waits. */
	if (!q->count)
		q->head = 0;
}
