/* SPDX-License-Identifier: MIT */
/*
 * The after-resume path (stacks.c): a copied stack in (struct
 * stack_sample, from the copy queue), unwound, symbolized, merged with its
 * Python frames (sampler/python/pysample_native.c, merge.c) and added to
 * the profile as a sample. Runs once the target runs again.
 */
#ifndef TRAINSAMPLE_SAMPLER_STACKS_H
#define TRAINSAMPLE_SAMPLER_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct addr_cache;
struct blocked_state;
struct sampler;
struct stack_sample;
struct thread;

int addr_cache_new(struct addr_cache **out);
void addr_cache_free(struct addr_cache *c);
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
/* The stack of parent with the idle leaf of syscall nr on top. */
int stacks_idle_leaf(struct sampler *s, int64_t nr, uint32_t parent, uint32_t *stack);
int intern_marker_frame(struct sampler *s, const char *name, uint32_t *frame);
/* The profile frame of a pc to look up (cached by address). */
int stacks_frame_for_addr(struct sampler *s, uint64_t addr, uint32_t *frame);
/* A marker frame ("[error]") on top of parent. */
int stacks_marker(struct sampler *s, const char *name, uint32_t parent, uint32_t *stack);

#endif
