/* SPDX-License-Identifier: MIT */
/*
 * The after-resume path, the sampler's side (stacks.c): a copied stack
 * (struct stack_sample, from the copy queue) goes to the builder
 * (builder.h), and its sample to the profile with what the sampler knows
 * of the thread. Runs once the target runs again.
 */
#ifndef TRAINSAMPLE_SAMPLER_STACKS_H
#define TRAINSAMPLE_SAMPLER_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct blocked_state;
struct sample_builder;
struct sampler;
struct stack_sample;
struct thread;

/* s->build, with s's options and figures; its address cache. */
int stacks_init(struct sampler *s);
void stacks_free(struct sampler *s);
/* s->build, its symbols and tick brought up to date with s's. */
struct sample_builder *stacks_builder(struct sampler *s);
int stacks_add_running(struct sampler *s, const struct stack_sample *c);
/* t may be NULL (exited since); c == NULL: (syscall, sp, pc) unchanged
 * since t's last stack, which stands. */
int stacks_add_blocked(struct sampler *s, struct thread *t,
		       const struct blocked_state *b, const struct stack_sample *c);
bool stacks_blocked_unchanged(const struct thread *t, const struct blocked_state *b);
void stacks_name_thread(struct sampler *s, struct thread *t);
int stacks_add_sample(struct sampler *s, pid_t tid, uint32_t stack,
		      uint32_t flags, uint64_t now, uint64_t weight);
/* A tick passed t by (in a stop of its own): its next sample carries the
 * tick's weight. */
void thread_passed_by(struct sampler *s, struct thread *t);

#endif
