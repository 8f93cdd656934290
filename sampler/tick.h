/* SPDX-License-Identifier: MIT */
/*
 * The tick (tick.c): read every thread's state, interrupt the running
 * ones, copy at their stops (stops.c), resume. What one pass keeps.
 */
#ifndef TRAINSAMPLE_SAMPLER_TICK_H
#define TRAINSAMPLE_SAMPLER_TICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sampler;
struct thread;

struct tick_pass {
	int pending_traps;      /* interrupts of this pass not yet trapped */
	/* the threads this pass interrupted, while they are few
	 * (TRAP_TIDS_MAX + 1: too many to ask one by one) */
	pid_t trap_tids[8];
	unsigned ntrap_tids;
	bool trap_on_our_cpu;   /* an interrupted thread shares our CPU */
	int our_cpu;            /* where this tick runs */
	struct thread **blocked; /* blocked threads of this tick */
	size_t cap_blocked;
};

void tick_sample(struct sampler *s, uint64_t now);
void tick_copy_stopped(struct sampler *s, struct thread *t);
/* Interrupts a running thread: at its stop its stack is copied, or with
 * py_walk its Python frames walked; tick_collect_traps waits for them. */
void tick_interrupt(struct sampler *s, struct thread *t, bool py_walk);
void tick_collect_traps(struct sampler *s);
/* Samples a blocked thread without stopping it; false if it runs. */
bool tick_sample_blocked(struct sampler *s, struct thread *t);

#endif
