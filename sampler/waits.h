/* SPDX-License-Identifier: MIT */
/*
 * Waiting for stops (waits.c): waitpid(-1) is asked only when a walk is
 * due (a tick, if the last walk is old enough for its cost) or a SIGCHLD
 * came that is not for a stop already reaped by tid.
 */
#ifndef TRAINSAMPLE_SAMPLER_WAITS_H
#define TRAINSAMPLE_SAMPLER_WAITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sampler;

struct waits_state {
	bool walk_due;
	bool signalled;
	uint64_t walk_ns;       /* the last empty walk's end and its cost */
	uint64_t walk_cost_ns;
	uint64_t came_ns;       /* the last stop not of our interrupts */
	pid_t reaped[16];       /* reaped by tid this tick, SIGCHLD not yet read */
	unsigned nreaped;
	uint64_t unanswered_since_ns; /* stops last answered (0: idle, a
				       * stop would wake us) */
};

/* The next stop or exit of tid (-1: of any traced thread) as waitpid
 * takes it, *status its status (0: none; -1 and errno). A signal's
 * delivery stop whose signal goes on at once is passed on without being
 * taken (*status STOP_PASSED_ON): so it is never lost, were we killed. */
#define STOP_PASSED_ON (-1)
pid_t stops_take(struct sampler *s, pid_t tid, int *status);
/* stops.c: such a stop of tid's, for signal sig, if its signal goes on at
 * once (false: to be taken and handled as any stop). */
bool stops_pass_at_once(struct sampler *s, pid_t tid, int sig);
/* A stop reaped by waitpid(tid) rather than by stops_wait, whose SIGCHLD
 * then asks for no walk. */
void stops_reaped_by_tid(struct sampler *s, pid_t tid);
/* The next stops_wait walks every traced thread whatever came. */
void stops_walk_due(struct sampler *s);
/* The same at a tick, once the last walk is far enough back for its cost
 * or while stops other than our interrupts' come (stops_came). */
void stops_walk_at_tick(struct sampler *s, uint64_t now);
void stops_came(struct sampler *s);
/* Waits up to timeout_ms (-1 forever, 0 poll) for stops and handles each;
 * reads our own queued signals. */
int stops_wait(struct sampler *s, int timeout_ms);
/* Stops go unanswered from since_ns on (0: an idle wait that a stop ends). */
void stops_unanswered_from(struct sampler *s, uint64_t since_ns);
void signals_drain(struct sampler *s);

#endif
