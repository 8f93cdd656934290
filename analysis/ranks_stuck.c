// SPDX-License-Identifier: MIT
/*
 * A distributed job that stopped moving: one rank stuck outside any
 * collective (a read that never returns, a deadlock, a data shard that
 * ran dry) while the others wait for it in one. Each rank's steps then
 * stop together, so no rank "stopped early": what tells them apart is
 * where each sat since its last step began (or, attached to a job that
 * hung already, since the recording began). A rank is stuck when its
 * training loop's thread spent the most of that tail, a second or more
 * and three of its steps or more, at one stack: the one a py-spy dump
 * of the hung job would print for it. Stuck ranks at a stack of comm
 * wait; the others stuck are what they wait for. Every rank stuck in
 * comm: a collective that some rank never joined (calls in a different
 * order, a rank that left or is outside the recording).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings_impl.h"
#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

#define STUCK_MIN_NS 1000000000ull /* shorter stays a slow step */
#define STUCK_STEPS 3              /* ... and at least so many of its steps */
#define STUCK_SHARE 0.75           /* of the tail at one stack */

struct stuck_rank {
	const struct summary_process *sp;
	long rank;
	uint64_t from_ns, end_ns; /* its tail: the last step's start (or its
				   * first sample) to its last sample */
	uint32_t stack;           /* the stack it sat at the most there */
	uint64_t stack_ns;
	enum phase phase;         /* that stack's */
	bool stuck;
	bool whole;               /* no step seen: the tail is all recorded */
};

struct stack_time {
	uint32_t stack;
	uint64_t ns;
};

struct tail_walk {
	struct phase_map *m;
	struct stuck_rank *v;
	size_t n;
	/* each rank's tail spans, by stack */
	struct stack_time **times;
	size_t *ntimes, *caps;
	struct profile_span *first; /* a span of each rank's top stack */
};

static int tail_span(const struct profile_span *sp, void *ctx)
{
	struct tail_walk *w = ctx;

	for (size_t i = 0; i < w->n; i++) {
		struct stuck_rank *r = &w->v[i];
		size_t k;

		if (sp->pid != r->sp->pid || sp->tid != r->sp->loop->tid || sp->flags & SAMPLE_GPU)
			continue;
		if (sp->end_ns > r->end_ns)
			r->end_ns = sp->end_ns;
		if (sp->start_ns < r->from_ns)
			return 0;
		for (k = 0; k < w->ntimes[i] && w->times[i][k].stack != sp->stack; k++)
			;
		if (k == w->ntimes[i]) {
			if (ARRAY_RESERVE(w->times[i], w->caps[i], k + 1, 16) < 0)
				return -ENOMEM;
			w->times[i][w->ntimes[i]++] = (struct stack_time){ sp->stack, 0 };
		}
		w->times[i][k].ns += sp->end_ns - sp->start_ns;
		if (w->times[i][k].ns > r->stack_ns) {
			r->stack_ns = w->times[i][k].ns;
			r->stack = sp->stack;
			w->first[i] = *sp;
		}
		return 0;
	}
	return 0;
}

static bool stuck(const struct stuck_rank *r)
{
	uint64_t tail = r->end_ns > r->from_ns ? r->end_ns - r->from_ns : 0;
	const struct step_stats *st = &r->sp->steps;

	if (tail < STUCK_MIN_NS || (finding_steps_counted(r->sp) && tail < STUCK_STEPS * st->p50_ns))
		return false;
	return (double)r->stack_ns >= STUCK_SHARE * (double)tail;
}

/* The ranks with a training loop's thread, and where each sat at the end. */
static int stuck_ranks(const struct summary *s, struct stuck_rank *v, size_t max, size_t *n)
{
	struct stack_time *times[RANKS_MAX] = { 0 };
	size_t ntimes[RANKS_MAX] = { 0 }, caps[RANKS_MAX] = { 0 };
	struct profile_span first[RANKS_MAX];
	struct tail_walk w = { .m = s->m, .v = v, .times = times, .ntimes = ntimes, .caps = caps,
			       .first = first };
	int ret = 0;

	*n = 0;
	if (!profile_keeps_timeline(s->p))
		return 0;
	for (size_t i = 0; i < s->nprocs && *n < MIN(max, RANKS_MAX); i++) {
		const struct summary_process *sp = &s->procs[i];
		const char *rank;
		char key[32], *end;

		snprintf(key, sizeof(key), "rank.%" PRIu32, sp->pid);
		rank = profile_meta(s->p, key);
		if (!rank || !sp->loop)
			continue;
		memset(&v[*n], 0, sizeof(v[*n]));
		v[*n].rank = strtol(rank, &end, 10);
		if (end == rank)
			continue;
		v[*n].sp = sp;
		v[*n].from_ns = finding_steps_counted(sp) ? sp->steps.last_ns : 0;
		(*n)++;
	}
	w.n = *n;
	if (*n >= 2)
		ret = profile_for_each_span(s->p, tail_span, &w);
	for (size_t i = 0; i < *n; i++) {
		free(times[i]);
		if (ret < 0 || !v[i].stack)
			continue;
		/* Attached to a job that hung already: its tail is all of it. */
		if (!v[i].from_ns) {
			v[i].from_ns = profile_timeline_start_ns(s->p);
			v[i].whole = true;
		}
		v[i].phase = phase_of_span(s->m, &first[i]);
		v[i].stuck = stuck(&v[i]);
	}
	return ret;
}

static double tail_s(const struct stuck_rank *r)
{
	return (double)(r->end_ns - r->from_ns) / 1e9;
}

/* "ranks 0, 2" (in comm or not) into buf. */
static void ranks_text(const struct stuck_rank *v, size_t n, bool in_comm, char *buf, size_t len)
{
	size_t at = 0, count = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].stuck && (v[i].phase == PHASE_COMM) == in_comm)
			count++;
	at = (size_t)snprintf(buf, len, "rank%s", count > 1 ? "s" : "");
	for (size_t i = 0, m = 0; i < n && at < len; i++)
		if (v[i].stuck && (v[i].phase == PHASE_COMM) == in_comm)
			at += (size_t)snprintf(buf + at, len - at, "%s %ld", m++ ? "," : "", v[i].rank);
}

static void stuck_evidence(const struct summary *s, struct finding *f, const struct stuck_rank *r)
{
	char line[200], caller[200] = "";
	const struct stack_node *leaf = profile_stack(s->p, r->stack);
	uint32_t py = finding_python_leaf(s, r->stack);

	finding_line_text(s->p, leaf->frame, line, sizeof(line));
	if (py != leaf->frame)
		finding_line_text(s->p, py, caller, sizeof(caller));
	finding_evidence(f, "rank %ld: %.1f of its last %.1f s at one stack, in %s: %s%s%s", r->rank,
			 (double)r->stack_ns / 1e9, tail_s(r), phase_name(r->phase), line,
			 caller[0] ? " under " : "", caller);
}

void findings_ranks_stuck(const struct summary *s, struct finding_list *l)
{
	struct stuck_rank v[RANKS_MAX];
	size_t n, nstuck = 0, ncomm = 0, first_other = SIZE_MAX;
	char waiting[128], others[128];
	const char *end = profile_meta(s->p, "end");
	bool ended = end && strcmp(end, "exited");
	double longest = 0;
	struct finding *f;

	if (stuck_ranks(s, v, RANKS_MAX, &n) < 0 || n < 2)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].stuck)
			continue;
		nstuck++;
		longest = MAX(longest, tail_s(&v[i]));
		if (v[i].phase == PHASE_COMM)
			ncomm++;
		else if (first_other == SIZE_MAX)
			first_other = i;
	}
	/* Someone must wait in a collective: a rank alone at one stack,
	 * others stepping, is a slow step, not a hang. */
	if (!ncomm)
		return;
	ranks_text(v, n, true, waiting, sizeof(waiting));
	if (first_other != SIZE_MAX) {
		const struct stuck_rank *r = &v[first_other];

		f = finding_add(l, "rank-stuck", 1.0, r->sp->pid,
				"its evidence line is where it sits: a read that never returns (storage, "
				"a DataLoader worker gone), a lock, a branch only some ranks take "
				"(evaluation, saving, a data shard that ran out) before a collective; a "
				"shorter process-group timeout makes the others fail fast instead of "
				"waiting");
		if (!f)
			return;
		ranks_text(v, n, false, others, sizeof(others));
		if (r->whole)
			snprintf(f->title, sizeof(f->title),
				 "%.60s sat in %s all %.1f s recorded, while %.60s waited in comm for it",
				 others, phase_name(r->phase), tail_s(r), waiting);
		else
			snprintf(f->title, sizeof(f->title),
				 "%.60s stopped stepping: %s last %.1f s in %s, while %.60s waited in comm "
				 "for it%s",
				 others, nstuck - ncomm > 1 ? "their" : "its", tail_s(r),
				 phase_name(r->phase), waiting, ended ? ", until the recording ended" : "");
	} else {
		if (nstuck < n)
			return; /* some rank still steps: a slow collective, not a hang */
		f = finding_add(l, "rank-stuck", 1.0, v[0].sp->pid,
				"the ranks wait in different collectives, or for a rank not in this "
				"recording: compare their comm stacks (evidence); calls must come in the "
				"same order on every rank (a collective under a rank-only condition hangs "
				"the job)");
		if (!f)
			return;
		snprintf(f->title, sizeof(f->title),
			 "every rank waits in comm: the last %.1f s, no rank outside a collective", longest);
	}
	for (size_t i = 0; i < n && f->nevidence < EVIDENCE_MAX; i++)
		if (v[i].stuck)
			stuck_evidence(s, f, &v[i]);
}
