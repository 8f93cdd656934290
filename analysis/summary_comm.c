// SPDX-License-Identifier: MIT
/*
 * How much of a loop's communication the step waited for, and how much
 * ran hidden beside its computation. DDP starts each gradient bucket's
 * allreduce while backward still computes; the backend's own threads
 * (gloo's, a process group's) carry it. The step waits only for what is
 * left at the end: the loop thread's comm time. Hidden is the time the
 * other threads of the process were busy in comm (their frames say so:
 * --native, since they have no Python frames) while the loop thread was
 * not in comm itself, between the first step's start and the last's.
 */
#include <errno.h>
#include <stdlib.h>

#include "analysis/summary_impl.h"
#include "formats/formats.h"

struct interval {
	uint64_t start_ns, end_ns;
};

struct comm_pass {
	struct summary *s;
	struct summary_process *sp;
	uint64_t from_ns, to_ns;
	struct interval *waits; /* the loop thread's comm spans, in time order */
	size_t n, cap;
	bool sorted;
};

static bool clip(const struct comm_pass *cp, const struct profile_span *span, uint64_t *a,
		 uint64_t *b)
{
	*a = MAX(span->start_ns, cp->from_ns);
	*b = MIN(span->end_ns, cp->to_ns);
	return *a < *b;
}

static int loop_waits(const struct profile_span *span, void *ctx)
{
	struct comm_pass *cp = ctx;
	uint64_t a, b;

	if (span->pid != cp->sp->pid || span->tid != cp->sp->loop->tid ||
	    span->flags & SAMPLE_GPU || !clip(cp, span, &a, &b) ||
	    phase_of_span(cp->s->m, span) != PHASE_COMM)
		return 0;
	if (ARRAY_RESERVE(cp->waits, cp->cap, cp->n + 1, 64) < 0)
		return -ENOMEM;
	if (cp->n && a < cp->waits[cp->n - 1].start_ns)
		cp->sorted = false;
	cp->waits[cp->n++] = (struct interval){ a, b };
	return 0;
}

static int by_start(const void *x, const void *y)
{
	const struct interval *a = x, *b = y;

	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* The part of [a, b) that the loop thread spent in comm itself. */
static uint64_t waited_within(const struct comm_pass *cp, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi = cp->n;
	uint64_t in = 0;

	/* The first wait that may end after a: waits do not overlap (one
	 * thread), so their ends are in order too. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp->waits[mid].end_ns <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < cp->n && cp->waits[i].start_ns < b; i++)
		in += MIN(b, cp->waits[i].end_ns) - MAX(a, cp->waits[i].start_ns);
	return in;
}

static int helper_comm(const struct profile_span *span, void *ctx)
{
	struct comm_pass *cp = ctx;
	uint64_t a, b, len, waited;

	if (span->pid != cp->sp->pid || span->tid == cp->sp->loop->tid ||
	    span->flags & (SAMPLE_GPU | SAMPLE_IDLE | SAMPLE_CPU_WAIT) || !clip(cp, span, &a, &b) ||
	    phase_of_span(cp->s->m, span) != PHASE_COMM)
		return 0;
	len = b - a;
	waited = MIN(len, waited_within(cp, a, b));
	cp->sp->comm_busy_ns += len;
	cp->sp->comm_hidden_ns += len - waited;
	return 0;
}

int summary_comm_find(struct summary *s, struct summary_process *sp)
{
	struct comm_pass cp = { .s = s, .sp = sp, .sorted = true };
	int ret;

	if (!sp->loop || !sp->steps.timed || sp->steps_too_short)
		return 0;
	cp.from_ns = sp->steps.first_ns;
	cp.to_ns = sp->steps.last_ns;
	ret = profile_for_each_span(s->p, loop_waits, &cp);
	if (!ret && !cp.sorted)
		array_sort(cp.waits, cp.n, sizeof(*cp.waits), by_start);
	if (!ret)
		ret = profile_for_each_span(s->p, helper_comm, &cp);
	free(cp.waits);
	return ret;
}
