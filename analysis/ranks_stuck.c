// SPDX-License-Identifier: MIT
/*
 * A distributed job that stopped moving: one rank stuck outside any
 * collective (a read that never returns, a deadlock, a data shard that
 * ran dry) while the others wait for it in one. Each rank's steps then
 * stop together, so no rank "stopped early": what tells them apart is
 * where each sat at the end: the run of its training loop's last samples
 * at one stack (attached to a job that hung already, all that was
 * recorded). A rank is stuck when that run lasts a second or more, and
 * three of its steps or more: its stack is the one a py-spy dump of the
 * hung job would print for it. Stuck ranks at a stack of comm
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
#define WHOLE_SLACK_NS 100000000ull /* a run from so near the start is all */

struct stuck_rank {
	const struct summary_process *sp;
	long rank;
	uint64_t from_ns, end_ns; /* its tail: the run of its loop thread's last
				   * samples at one stack (its last sample's) */
	uint32_t stack;           /* that stack */
	uint64_t stack_ns;        /* the run's samples' time */
	enum phase phase;         /* that stack's */
	bool stuck;
	bool whole;               /* the run is all that was recorded of it */
	const char *exit;         /* how it ended, where that was a failure
				   * (summary_exit_failed); NULL */
};

/* Each rank's loop thread's last run of spans at one stack, kept as the
 * spans come (a thread's close in time order): no span kept. */
struct tail_walk {
	struct stuck_rank *v;
	size_t n;
	struct profile_span *last; /* each rank's latest span */
};

static int tail_span(const struct profile_span *sp, void *ctx)
{
	struct tail_walk *w = ctx;

	for (size_t i = 0; i < w->n; i++) {
		struct stuck_rank *r = &w->v[i];

		if (sp->pid != r->sp->pid || sp->tid != r->sp->loop->tid || sp->flags & SAMPLE_GPU)
			continue;
		if (r->stack && sp->start_ns < w->last[i].start_ns)
			return 0; /* out of order: an older one */
		if (!r->stack || sp->stack != r->stack) {
			r->stack = sp->stack;
			r->from_ns = sp->start_ns;
			r->stack_ns = 0;
		}
		r->stack_ns += sp->end_ns - sp->start_ns;
		r->end_ns = MAX(r->end_ns, sp->end_ns);
		w->last[i] = *sp;
		return 0;
	}
	return 0;
}

static bool stuck(const struct stuck_rank *r)
{
	uint64_t tail = r->end_ns - r->from_ns;
	const struct step_stats *st = &r->sp->steps;

	return tail >= STUCK_MIN_NS && (!finding_steps_counted(r->sp) || tail >= STUCK_STEPS * st->p50_ns);
}

/* The ranks with a training loop's thread, and where each sat at the end. */
static int stuck_ranks(const struct summary *s, struct stuck_rank *v, size_t max, size_t *n)
{
	struct profile_span last[RANKS_MAX];
	struct tail_walk w = { .v = v, .last = last };
	int ret = 0;

	*n = 0;
	if (!profile_keeps_timeline(s->p))
		return 0;
	for (size_t i = 0; i < s->nprocs && *n < MIN(max, RANKS_MAX); i++) {
		const struct summary_process *sp = &s->procs[i];
		uint64_t when;
		long rank;

		if (!sp->loop || !summary_rank_of(s, sp->pid, &rank))
			continue;
		memset(&v[*n], 0, sizeof(v[*n]));
		v[*n].rank = rank;
		v[*n].sp = sp;
		v[*n].exit = summary_exit_of(s, sp->pid, &when);
		if (!summary_exit_failed(v[*n].exit))
			v[*n].exit = NULL;
		(*n)++;
	}
	w.n = *n;
	if (*n >= 2)
		ret = profile_for_each_span(s->p, tail_span, &w);
	for (size_t i = 0; ret == 0 && i < *n; i++) {
		if (!v[i].stack)
			continue;
		v[i].phase = phase_of_span(s->m, &last[i]);
		v[i].whole = v[i].from_ns < profile_timeline_start_ns(s->p) + WHOLE_SLACK_NS;
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
	finding_evidence(f, "rank %ld: its last %.1f s at one stack, in %s: %s%s%s", r->rank,
			 tail_s(r), phase_name(r->phase), line, caller[0] ? " under " : "", caller);
}

/* The rank not stuck that ended failing; SIZE_MAX none. */
static size_t ended_rank(const struct stuck_rank *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!v[i].stuck && v[i].exit)
			return i;
	return SIZE_MAX;
}

#define HINT_STUCK                                                                          \
	"its evidence line is where it sits: a read that never returns (storage, a DataLoader " \
	"worker gone), a lock, a branch only some ranks take (evaluation, saving, a data shard " \
	"that ran out) before a collective; a shorter process-group timeout makes the others "  \
	"fail fast instead of waiting"
#define HINT_ENDED                                                                          \
	"its own output says why it ended (the others' errors or timeouts follow from it); a "  \
	"shorter process-group timeout makes the others fail fast instead of waiting"
#define HINT_ALL_IN_COMM                                                                    \
	"the ranks wait in different collectives, or for a rank not in this recording: compare " \
	"their comm stacks (evidence); calls must come in the same order on every rank (a "     \
	"collective under a rank-only condition hangs the job)"

void findings_ranks_stuck(const struct summary *s, struct finding_list *l)
{
	struct stuck_rank v[RANKS_MAX];
	size_t n, nstuck = 0, ncomm = 0, culprit = SIZE_MAX;
	char waiting[128], others[128], title[sizeof(((struct finding *)0)->title)];
	const char *end = profile_meta(s->p, "end"), *hint;
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
		else if (culprit == SIZE_MAX)
			culprit = i;
	}
	/* Someone must wait in a collective: a rank alone at one stack,
	 * others stepping, is a slow step, not a hang. */
	if (!ncomm)
		return;
	ranks_text(v, n, true, waiting, sizeof(waiting));
	if (culprit != SIZE_MAX) {
		const struct stuck_rank *r = &v[culprit];

		hint = HINT_STUCK;
		ranks_text(v, n, false, others, sizeof(others));
		if (r->whole)
			snprintf(title, sizeof(title),
				 "%.60s sat in %s all %.1f s recorded, while %.60s waited in comm for it",
				 others, phase_name(r->phase), tail_s(r), waiting);
		else
			snprintf(title, sizeof(title),
				 "%.60s stopped stepping: %s last %.1f s in %s, while %.60s waited in comm "
				 "for it%s",
				 others, nstuck - ncomm > 1 ? "their" : "its", tail_s(r),
				 phase_name(r->phase), waiting, ended ? ", until the recording ended" : "");
	} else if (nstuck + 1 == n && (culprit = ended_rank(v, n)) != SIZE_MAX) {
		/* The one rank not waiting died: the others wait for it. */
		hint = HINT_ENDED;
		snprintf(title, sizeof(title), "rank %ld ended (%s) while %.60s waited in comm for it: %.1f s",
			 v[culprit].rank, v[culprit].exit, waiting, longest);
	} else if (nstuck == n) {
		culprit = 0;
		hint = HINT_ALL_IN_COMM;
		snprintf(title, sizeof(title),
			 "every rank waits in comm: the last %.1f s, no rank outside a collective", longest);
	} else {
		return; /* some rank still steps: a slow collective, not a hang */
	}
	f = finding_add(l, "rank-stuck", 1.0, v[culprit].sp->pid, hint);
	if (!f)
		return;
	snprintf(f->title, sizeof(f->title), "%s", title);
	for (size_t i = 0; i < n && f->nevidence < EVIDENCE_MAX; i++)
		if (v[i].stuck)
			stuck_evidence(s, f, &v[i]);
}
