// SPDX-License-Identifier: MIT
/*
 * The ranks of a distributed job side by side, and the one that holds the
 * others back. A rank is a process whose launch RANK is known (record
 * reads it from the process's environment; report of several recordings
 * keeps each one's) and whose training loop had its steps counted. Ranks
 * run the same steps in lockstep: a collective ends only when the last
 * rank reaches it, so the ranks that wait for a slow one show the wait as
 * comm, and the slow one shows its excess in the phase where it is slow.
 * Per-rank figures are over each rank's own steps (ranks recorded on
 * different machines are compared step for step, not by clock).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/findings_impl.h"
#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

/*
 * A straggler's own work a step (its step less its comm wait) must pass
 * the other ranks' median by this share of their step, and the others
 * must wait in comm for at least half that excess: below it the ranks are
 * balanced within what sampling and scheduling blur.
 */
#define STRAGGLER_EXCESS 0.10
#define STRAGGLER_WAITED 0.5
/* A rank whose last step began this many of its steps (p50) before the
 * last rank's last step stopped early: it died, hung or left. */
#define STOPPED_EARLY_STEPS 3

static int by_rank(const void *a, const void *b)
{
	const struct rank_row *x = a, *y = b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

static double ms_a_step(const struct summary_process *sp, uint64_t ns)
{
	return (double)ns / 1e6 / (double)sp->steps.timed;
}

bool summary_rank_of(const struct summary *s, uint32_t pid, long *rank)
{
	char key[32], *end;
	const char *v;

	snprintf(key, sizeof(key), "rank.%" PRIu32, pid);
	v = profile_meta(s->p, key);
	if (!v)
		return false;
	*rank = strtol(v, &end, 10);
	return end != v;
}

const char *summary_exit_of(const struct summary *s, uint32_t pid, uint64_t *ns)
{
	char key[32];
	const char *exit, *when;

	snprintf(key, sizeof(key), "exit.%" PRIu32, pid);
	exit = profile_meta(s->p, key);
	snprintf(key, sizeof(key), "exit_ns.%" PRIu32, pid);
	when = exit ? profile_meta(s->p, key) : NULL;
	*ns = when ? strtoull(when, NULL, 10) : 0;
	return exit;
}

bool summary_exit_failed(const char *exit)
{
	return exit && strcmp(exit, "status 0") && strcmp(exit, "signal 2");
}

size_t summary_ranks(const struct summary *s, struct rank_row *rows, size_t max)
{
	uint64_t last = 0;
	size_t n = 0;

	for (size_t i = 0; i < s->nprocs && n < max; i++) {
		const struct summary_process *sp = &s->procs[i];
		struct rank_row *r = &rows[n];
		long rank;

		if (!finding_steps_counted(sp) || !summary_rank_of(s, sp->pid, &rank))
			continue;
		memset(r, 0, sizeof(*r));
		r->rank = rank;
		r->sp = sp;
		for (int k = 0; k < PHASE_KINDS; k++) {
			r->phase_ms[k] = ms_a_step(sp, sp->steps.phase_ns[k]);
			r->step_ms += r->phase_ms[k];
		}
		r->comm_ms = r->phase_ms[PHASE_COMM];
		r->work_ms = r->step_ms - r->comm_ms;
		r->exit = summary_exit_of(s, sp->pid, &r->exit_ns);
		last = MAX(last, sp->steps.last_ns);
		n++;
	}
	array_sort(rows, n, sizeof(rows[0]), by_rank);
	for (size_t i = 0; i < n; i++) {
		const struct step_stats *st = &rows[i].sp->steps;

		if (st->last_ns + STOPPED_EARLY_STEPS * st->p50_ns < last)
			rows[i].stopped_early_ns = last - st->last_ns;
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[i].field over the rows but skip. */
static double median_but(const struct rank_row *v, size_t n, size_t skip, size_t offset)
{
	double vals[RANKS_MAX];
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (i != skip)
			vals[m++] = *(const double *)((const char *)&v[i] + offset);
	if (!m)
		return 0;
	array_sort(vals, m, sizeof(vals[0]), cmp_double);
	return m % 2 ? vals[m / 2] : (vals[m / 2 - 1] + vals[m / 2]) / 2;
}

#define MEDIAN_BUT(v, n, skip, field) median_but(v, n, skip, offsetof(struct rank_row, field))

static const char *straggler_hint(enum phase ph)
{
	switch (ph) {
	case PHASE_DATA:
		return "look at this rank's data loading: its DataLoader workers (num_workers), its "
		       "shard of the data (uneven sizes), its storage or network; prefetch more";
	case PHASE_FORWARD:
	case PHASE_BACKWARD:
		return "this rank computes more or slower: uneven batches or sequence lengths "
		       "(bucket by length, pad evenly), a slower device, or other work on its "
		       "host's CPUs";
	case PHASE_OPTIMIZER:
		return "this rank's optimizer step is slower: parameters or state not sharded "
		       "evenly, or extra work on one rank";
	case PHASE_EVAL:
	case PHASE_LOGGING:
	case PHASE_CHECKPOINT:
		return "work done on one rank only (evaluation, logging, checkpoints) stalls the "
		       "others at the next collective: do it less often, asynchronously, or on "
		       "every rank's share";
	default:
		return "this rank does more between its collectives than the others: compare its "
		       "flamegraph with another rank's (report --pid)";
	}
}

/* "0, 2, 3": the ranks but skip. */
static void others_text(const struct rank_row *v, size_t n, size_t skip, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n && at < len; i++)
		if (i != skip)
			at += (size_t)snprintf(buf + at, len - at, "%s%ld", at ? ", " : "", v[i].rank);
}

/* A rank's figures as one evidence line. */
static void rank_evidence(struct finding *f, const struct rank_row *r)
{
	char text[200];
	size_t at = 0;

	for (int k = PHASE_OTHER + 1; k <= PHASE_KINDS && at < sizeof(text); k++) {
		int ph = k % PHASE_KINDS;

		if (r->phase_ms[ph] >= 0.05)
			at += (size_t)snprintf(text + at, sizeof(text) - at, "%s%s %.1f", at ? ", " : "",
					       phase_name((enum phase)ph), r->phase_ms[ph]);
	}
	finding_evidence(f, "rank %ld: step p50 %.1f ms; ms a step: %s", r->rank,
			 (double)r->sp->steps.p50_ns / 1e6, text);
}

void findings_straggler(const struct summary *s, struct finding_list *l)
{
	struct rank_row v[RANKS_MAX];
	size_t n = summary_ranks(s, v, RANKS_MAX), slow = 0;
	double work, others_work, others_step, others_comm, excess, best = 0, ratio;
	enum phase ph = PHASE_OTHER;
	struct finding *f;
	char who[128];

	if (n < 2)
		return;
	for (size_t i = 1; i < n; i++)
		if (v[i].work_ms > v[slow].work_ms)
			slow = i;
	work = v[slow].work_ms;
	others_work = MEDIAN_BUT(v, n, slow, work_ms);
	others_step = MEDIAN_BUT(v, n, slow, step_ms);
	others_comm = MEDIAN_BUT(v, n, slow, comm_ms);
	excess = work - others_work;
	if (others_step <= 0 || excess < STRAGGLER_EXCESS * others_step ||
	    others_comm < STRAGGLER_WAITED * excess)
		return;
	/* The phase where it is slow: its largest excess over the others'. */
	for (int k = 0; k < PHASE_KINDS; k++) {
		double d;

		if (k == PHASE_COMM)
			continue;
		d = v[slow].phase_ms[k] - median_but(v, n, slow,
						     offsetof(struct rank_row, phase_ms) +
							     (size_t)k * sizeof(double));
		if (d > best) {
			best = d;
			ph = (enum phase)k;
		}
	}
	f = finding_add(l, "straggler", others_comm / others_step, v[slow].sp->pid,
			straggler_hint(ph));
	if (!f)
		return;
	others_text(v, n, slow, who, sizeof(who));
	ratio = v[slow].phase_ms[ph] / MAX(0.05, v[slow].phase_ms[ph] - best);
	snprintf(f->title, sizeof(f->title),
		 "rank %ld holds the others back: its %s takes %.1fx theirs (%.1f against %.1f ms a "
		 "step); rank%s %s wait%s %.1f ms a step in comm for it",
		 v[slow].rank, phase_name(ph), ratio, v[slow].phase_ms[ph], v[slow].phase_ms[ph] - best,
		 n > 2 ? "s" : "", who, n > 2 ? "" : "s", others_comm);
	rank_evidence(f, &v[slow]);
	for (size_t i = 0; i < n && f->nevidence < EVIDENCE_MAX - 1; i++)
		if (i != slow)
			rank_evidence(f, &v[i]);
}

/*
 * The rank that failed first, where another ended after it or not at all:
 * when one rank dies, the others fail or hang at their next collective,
 * and their errors ("connection closed by peer", a timeout) bury the one
 * that matters.
 */
static void first_end_text(const struct rank_row *v, size_t n, FILE *out)
{
	const struct rank_row *first = NULL;
	size_t after = 0, still = 0;
	uint64_t latest = 0;

	for (size_t i = 0; i < n; i++)
		if (summary_exit_failed(v[i].exit) && v[i].exit_ns && (!first || v[i].exit_ns < first->exit_ns))
			first = &v[i];
	if (!first)
		return;
	for (size_t i = 0; i < n; i++) {
		if (&v[i] == first)
			continue;
		if (!v[i].exit || !v[i].exit_ns)
			still++;
		else if (v[i].exit_ns > first->exit_ns) {
			after++;
			latest = MAX(latest, v[i].exit_ns - first->exit_ns);
		}
	}
	if (!after && !still)
		return;
	fprintf(out, "trainsample:   rank %ld ended first (%s), after %" PRIu64 " steps", first->rank,
		first->exit, first->sp->steps.steps);
	if (after)
		fprintf(out, "; %zu rank%s ended after it, within %.2f s", after, after > 1 ? "s" : "",
			(double)latest / 1e9);
	if (still)
		fprintf(out, "; %zu rank%s had not ended when the recording did", still,
			still > 1 ? "s" : "");
	fputc('\n', out);
}

/* The lowest rank recorded on the first recording's machine: the time
 * line's; NULL none. */
static const struct rank_row *clock_ref(const struct summary *s, const struct rank_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!rank_host(s, &v[i]))
			return &v[i];
	return NULL;
}

/* Each other machine's clock against the first's, by its lowest rank. */
static void clocks_text(const struct summary *s, const struct rank_row *v, size_t n, FILE *out)
{
	const struct rank_row *ref = clock_ref(s, v, n);

	for (size_t i = 0; ref && i < n; i++) {
		const char *host = rank_host(s, &v[i]);
		struct clock_skew k;
		bool first = true;

		if (!host)
			continue;
		for (size_t j = 0; j < i; j++)
			if (rank_host(s, &v[j]) && !strcmp(rank_host(s, &v[j]), host))
				first = false;
		if (!first || ranks_clock_skew(s, ref, &v[i], &k) < 0)
			continue;
		if (k.known)
			fprintf(out, "trainsample:   clocks: %s's put on rank %ld's time line by the "
				"machines' wall clocks; by their collectives' ends its clock is %.2f ms "
				"%s (+-%.2f ms, %zu waits matched)\n", host, ref->rank, fabs(k.ahead_ms),
				k.ahead_ms < 0 ? "behind" : "ahead", k.uncertainty_ms, k.steps);
		else
			fprintf(out, "trainsample:   clocks: %s's put on rank %ld's time line by the "
				"machines' wall clocks, as far as they agree (too few collectives "
				"seen to check)\n", host, ref->rank);
	}
}

void summary_ranks_text(const struct summary *s, FILE *out)
{
	struct rank_row v[RANKS_MAX];
	size_t n = summary_ranks(s, v, RANKS_MAX);

	if (n < 2)
		return;
	fprintf(out, "trainsample: ranks: %zu with steps counted; step p50/p90 ms, then ms a step "
		"by phase, comm the wait:\n", n);
	for (size_t i = 0; i < n; i++) {
		const struct rank_row *r = &v[i];
		const char *label = process_label_of(s->p, r->sp->pid);
		const char *host = label ? strstr(label, " on ") : NULL; /* "rank 1 on HOST" */

		fprintf(out, "trainsample:   rank %ld (PID %" PRIu32 "%s%s): %" PRIu64 " steps, p50 %.1f, "
			"p90 %.1f;", r->rank, r->sp->pid, host ? " on " : "", host ? host + 4 : "",
			r->sp->steps.steps, (double)r->sp->steps.p50_ns / 1e6,
			(double)r->sp->steps.p90_ns / 1e6);
		for (int k = PHASE_OTHER + 1, m = 0; k <= PHASE_KINDS; k++) {
			int ph = k % PHASE_KINDS;

			if (r->phase_ms[ph] >= 0.05 || ph == PHASE_COMM)
				fprintf(out, "%s %s %.1f", m++ ? "," : "", phase_name((enum phase)ph),
					r->phase_ms[ph]);
		}
		fprintf(out, "; %" PRIu64 " samples", r->sp->samples);
		if (r->stopped_early_ns)
			fprintf(out, "; stopped %.2f s before the last rank's last step (died, hung or "
				"left)", (double)r->stopped_early_ns / 1e9);
		if (summary_exit_failed(r->exit))
			fprintf(out, "; ended: %s", r->exit);
		fputc('\n', out);
	}
	first_end_text(v, n, out);
	clocks_text(s, v, n, out);
}

int summary_ranks_write(const struct summary *s, FILE *out)
{
	struct rank_row v[RANKS_MAX];

	if (summary_ranks(s, v, RANKS_MAX) < 2)
		return -ENOENT;
	summary_ranks_text(s, out);
	return ferror(out) ? -EIO : 0;
}

/* "host", and its clock against the time line's rank where that is
 * another machine's. */
static void clock_json(const struct summary *s, const struct rank_row *v, size_t n, size_t i,
		       struct json_out *j)
{
	const char *host = rank_host(s, &v[i]);
	const struct rank_row *ref = clock_ref(s, v, n);
	struct clock_skew k = { 0 };

	json_key(j, "host");
	if (host)
		json_string(j, host);
	else
		json_null(j);
	if (host && ref && ranks_clock_skew(s, ref, &v[i], &k) < 0)
		k.known = false;
	json_key(j, "clock_ahead_ms");
	if (k.known)
		json_double(j, k.ahead_ms, 3);
	else
		json_null(j);
	json_key(j, "clock_uncertainty_ms");
	if (k.known)
		json_double(j, k.uncertainty_ms, 3);
	else
		json_null(j);
}

void summary_ranks_json(const struct summary *s, struct json_out *j)
{
	struct rank_row v[RANKS_MAX];
	size_t n = summary_ranks(s, v, RANKS_MAX);

	json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		const struct rank_row *r = &v[i];

		json_break(j, 4);
		json_begin_object(j);
		json_key_int(j, "rank", r->rank);
		json_key_uint(j, "pid", r->sp->pid);
		json_key_string(j, "label", process_label_of(s->p, r->sp->pid));
		json_key_uint(j, "steps", r->sp->steps.steps);
		json_key_double(j, "step_p50_ms", (double)r->sp->steps.p50_ns / 1e6, 3);
		json_key_double(j, "step_p90_ms", (double)r->sp->steps.p90_ns / 1e6, 3);
		json_key(j, "phase_ms");
		json_begin_object(j);
		for (int k = 0; k < PHASE_KINDS; k++)
			json_key_double(j, phase_name((enum phase)k), r->phase_ms[k], 3);
		json_end_object(j);
		json_key_double(j, "comm_wait_ms", r->comm_ms, 3);
		json_key_uint(j, "samples", r->sp->samples);
		json_key(j, "stopped_early_s");
		if (r->stopped_early_ns)
			json_double(j, (double)r->stopped_early_ns / 1e9, 3);
		else
			json_null(j);
		json_key(j, "exit");
		if (r->exit)
			json_string(j, r->exit);
		else
			json_null(j);
		clock_json(s, v, n, i, j);
		json_end_object(j);
	}
	if (n)
		json_break(j, 1);
	json_end_array(j);
}
