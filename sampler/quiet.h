/* SPDX-License-Identifier: MIT */
/*
 * Quiet threads (quiet.c): threads blocked for long are asked only when
 * one of them may have run, which the process's CPU clock tells.
 */
#ifndef TRAINSAMPLE_SAMPLER_QUIET_H
#define TRAINSAMPLE_SAMPLER_QUIET_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct sampler;
struct thread;

struct quiet_state {
	clockid_t cpu_clock;    /* the process's CPU clock */
	bool cpu_clock_tried, cpu_clock_ok;
	bool ask_all;           /* this tick: one may have run */
	bool rest_known;
	int64_t rest_ns;        /* the clock less the threads' known times,
				 * at its lowest */
	uint64_t clock_at;      /* the tick that last read the clock */
	uint64_t clock_cost_ns; /* and how long that read took */
	uint64_t count;         /* threads quiet at the last read of the clock */
};

/* Before a tick's pass over its threads, whether those blocked for long
 * must be asked (reads the others' schedstat); after it, the measure
 * again where they were. */
void quiet_tick_begin(struct sampler *s);
void quiet_tick_end(struct sampler *s);
bool quiet_unasked(const struct sampler *s, const struct thread *t);
void quiet_thread_left(struct sampler *s, const struct thread *t);

#endif
