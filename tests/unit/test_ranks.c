// SPDX-License-Identifier: MIT
/*
 * A distributed job's ranks side by side and the straggler named
 * (analysis/summary_ranks.c), on jobs built in memory tick by tick: each
 * rank a process with its launch rank, its loop fetching a batch,
 * running forward and backward and waiting in DDP's allreduce for the
 * slowest rank, in lockstep.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "formats/formats.h"
#include "tests/unit/model_helpers.h"
#include "tests/unit/summary_helpers.h"

#define MS 1000000ull
#define DL "/v/torch/utils/data/dataloader.py"
#define C10D "/v/torch/distributed/distributed_c10d.py"

static const struct py_test_frame next_[] = { { "main", "train.py", 9 }, { "_BaseDataLoaderIter.__next__", DL, 700 } };
static const struct py_test_frame fwd[] = { { "main", "train.py", 11 },
				 { "Module._call_impl", "/v/torch/nn/modules/module.py", 1500 } };
static const struct py_test_frame bwd[] = { { "main", "train.py", 12 }, { "Tensor.backward", "/v/torch/_tensor.py", 520 } };
static const struct py_test_frame reduce_[] = { { "main", "train.py", 14 }, { "all_reduce", C10D, 1500 } };

/* A rank's step, in ticks of 1 ms: data, forward, backward. */
struct work {
	int data, forward, backward;
};

struct job {
	struct profile *p;
	uint32_t s_next, s_fwd, s_bwd, s_reduce;
};

static void job_init(struct job *j)
{
	*j = (struct job){ .p = profile_new() };
	cr_assert(j->p);
	cr_assert_eq(profile_keep_timeline(j->p), 0);
	cr_assert_eq(profile_set_meta(j->p, "period_ns", "1000000"), 0);
	j->s_next = python_stack(j->p, next_, 2);
	j->s_fwd = python_stack(j->p, fwd, 2);
	j->s_bwd = python_stack(j->p, bwd, 2);
	j->s_reduce = python_stack(j->p, reduce_, 2);
}

static void ticks(struct job *j, uint32_t pid, uint64_t *t, uint32_t stack, uint32_t flags, int n)
{
	for (int i = 0; i < n; i++) {
		struct sample s = { .time_ns = *t += MS, .pid = pid, .tid = pid, .stack = stack,
				    .weight_ns = MS, .flags = flags };

		cr_assert_eq(profile_add_sample(j->p, &s), 0);
	}
}

/* Where each rank ran (NULL: the first recording's machine) and how far
 * that machine's clock is ahead: recordings merged from several. */
static const char *host_of[4];
static uint64_t ahead_ns[4];

/*
 * n ranks run steps in lockstep: each does its work, then waits (blocked)
 * in all_reduce until the slowest is done, plus 1 ms of the collective
 * itself; rank r stops after stop[r] steps (0: all of them). With
 * collectives false, nobody waits: independent processes with a RANK.
 */
static void run(struct job *j, int n, const struct work *w, int steps, const int *stop,
		bool collectives)
{
	int longest = 0;

	for (int r = 0; r < n; r++) {
		int all = w[r].data + w[r].forward + w[r].backward;

		longest = all > longest ? all : longest;
	}
	for (int r = 0; r < n; r++) {
		uint32_t pid = 100 + 10 * (uint32_t)r;
		uint64_t t = 1000 * MS + (r < 4 ? ahead_ns[r] : 0);
		char key[32], val[64];
		int mine = w[r].data + w[r].forward + w[r].backward;

		snprintf(key, sizeof(key), "rank.%u", pid);
		snprintf(val, sizeof(val), "%d", r);
		cr_assert_eq(profile_set_meta(j->p, key, val), 0);
		snprintf(key, sizeof(key), "process.%u", pid);
		if (r < 4 && host_of[r])
			snprintf(val, sizeof(val), "rank %d on %s", r, host_of[r]);
		else
			snprintf(val, sizeof(val), "rank %d", r);
		cr_assert_eq(profile_set_meta(j->p, key, val), 0);
		for (int s = 0; s < steps && (!stop || !stop[r] || s < stop[r]); s++) {
			ticks(j, pid, &t, j->s_next, 0, w[r].data);
			ticks(j, pid, &t, j->s_fwd, 0, w[r].forward);
			ticks(j, pid, &t, j->s_bwd, 0, w[r].backward);
			if (collectives) {
				ticks(j, pid, &t, j->s_reduce, SAMPLE_IDLE, longest - mine);
				ticks(j, pid, &t, j->s_reduce, 0, 1);
			}
		}
	}
}

/* Rank 1 of four loads its data in 24 ms, the others in 4: the others
 * wait 20 ms a step for it in all_reduce. */
Test(ranks, a_data_slowed_rank_is_named_with_its_phase_and_who_waits)
{
	const struct work w[] = { { 4, 10, 20 }, { 24, 10, 20 }, { 4, 10, 20 }, { 4, 10, 20 } };
	struct job j;
	char *text;

	job_init(&j);
	run(&j, 4, w, 40, NULL, true);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "straggler, PID 110: rank 1 holds the others back: its data takes 6.0x "
			 "theirs (24.0 against 4.0 ms a step); ranks 0, 2, 3 wait 21.0 ms a step "
			 "in comm for it\n"), "%s", text);
	cr_assert(strstr(text, "try: look at this rank's data loading"), "%s", text);
	free(text);
	text = summary_part_of(j.p, SUMMARY_RANKS, 0);
	cr_assert(strstr(text, "trainsample: ranks: 4 with steps counted"), "%s", text);
	/* By rank, each over its own steps: rank 0's wait is comm. */
	cr_assert(strstr(text, "trainsample:   rank 0 (PID 100): 40 steps, p50 55.0, p90 55.0; data 4.0, "
			 "forward 10.0, backward 20.0, comm 21.0; 2200 samples\n"), "%s", text);
	cr_assert(strstr(text, "rank 1 (PID 110)") > strstr(text, "rank 0 (PID 100)"), "%s", text);
	free(text);
	profile_free(j.p);
}

/* A compute-slowed rank: its backward is the phase named. */
Test(ranks, a_compute_slowed_rank_is_named_by_its_slowest_phase)
{
	const struct work w[] = { { 4, 10, 20 }, { 4, 10, 20 }, { 4, 12, 45 } };
	struct job j;
	char *text;

	job_init(&j);
	run(&j, 3, w, 30, NULL, true);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "rank 2 holds the others back: its backward takes 2.2x theirs (45.0 "
			 "against 20.0 ms a step); ranks 0, 1 wait 28.0 ms a step"), "%s", text);
	free(text);
	profile_free(j.p);
}

/* Within 10% of a step (2 ms of 35), ranks are balanced; and ranks that
 * never wait for each other (no collective) hold nobody back. */
Test(ranks, balanced_ranks_and_ranks_that_never_wait_have_no_straggler)
{
	const struct work close_[] = { { 4, 10, 20 }, { 5, 11, 20 } };
	const struct work apart[] = { { 4, 10, 20 }, { 30, 10, 20 } };
	struct job j;
	char *text;

	job_init(&j);
	run(&j, 2, close_, 30, NULL, true);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert_null(strstr(text, "straggler"), "%s", text);
	free(text);
	profile_free(j.p);

	job_init(&j);
	run(&j, 2, apart, 30, NULL, false);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert_null(strstr(text, "straggler"), "%s", text);
	free(text);
	profile_free(j.p);
}

/* A rank whose steps end 10 steps before the others' is said to have
 * stopped early; the others are not. */
Test(ranks, a_rank_that_stopped_early_is_said_so)
{
	const struct work w[] = { { 4, 10, 20 }, { 4, 10, 20 } };
	const int stop[] = { 0, 20 };
	struct job j;
	char *text;

	job_init(&j);
	run(&j, 2, w, 30, stop, true);
	text = summary_part_of(j.p, SUMMARY_RANKS, 0);
	cr_assert(strstr(text, "rank 1 (PID 110): 20 steps") && strstr(text, "stopped 0.35 s before "
									  "the last rank's last step"),
		  "%s", text);
	{
		const char *r0 = strstr(text, "rank 0 (PID 100)");
		const char *eol = r0 ? strchr(r0, '\n') : NULL, *said = r0 ? strstr(r0, "stopped") : NULL;

		cr_assert(r0 && eol && (!said || said > eol), "%s", text);
	}
	free(text);
	profile_free(j.p);
}

/*
 * After 30 steps in lockstep, each rank sits ms milliseconds at one stack
 * (blocked): where[r] 0 in all_reduce, 1 in its DataLoader's next, 2 in
 * forward; -1 it goes on stepping alone (no collective) as long; -2 it
 * is gone (no more samples).
 */
static void run_then_sit(struct job *j, int n, const struct work *w, const int *where, int ms)
{
	const uint32_t stacks[] = { j->s_reduce, j->s_next, j->s_fwd };
	int longest = 0;

	run(j, n, w, 30, NULL, true);
	for (int r = 0; r < n; r++) {
		int all = w[r].data + w[r].forward + w[r].backward;

		longest = all > longest ? all : longest;
	}
	for (int r = 0; r < n; r++) {
		uint32_t pid = 100 + 10 * (uint32_t)r;
		uint64_t t = 1000 * MS + 30 * (uint64_t)(longest + 1) * MS;

		if (where[r] == -2)
			continue;
		if (where[r] >= 0) {
			ticks(j, pid, &t, stacks[where[r]], SAMPLE_IDLE, ms);
			continue;
		}
		for (int done = 0; done < ms; done += w[r].data + w[r].forward + w[r].backward) {
			ticks(j, pid, &t, j->s_next, 0, w[r].data);
			ticks(j, pid, &t, j->s_fwd, 0, w[r].forward);
			ticks(j, pid, &t, j->s_bwd, 0, w[r].backward);
		}
	}
}

/* Rank 1 of three hangs in its data loading: the others wait in
 * all_reduce. Its steps stop with theirs, so no rank stopped early: the
 * tail names it, in data, and who waits. */
Test(ranks, a_rank_stuck_outside_any_collective_is_named)
{
	const struct work w[] = { { 4, 10, 20 }, { 4, 10, 20 }, { 4, 10, 20 } };
	const int where[] = { 0, 1, 0 };
	struct job j;
	char *text;

	job_init(&j);
	run_then_sit(&j, 3, w, where, 1500);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "rank-stuck, PID 110: rank 1 stopped stepping: its last 1.5 s in data, "
			       "while ranks 0, 2 waited in comm for it"),
		  "%s", text);
	cr_assert(strstr(text, "rank 1: its last 1.5 s at one stack, in data: "
			       "_BaseDataLoaderIter.__next__ (dataloader.py:700)"),
		  "%s", text);
	cr_assert(strstr(text, "rank 0: its last 1.5 s at one stack, in comm: all_reduce"), "%s",
		  text);
	cr_assert_null(strstr(text, "straggler"), "%s", text);
	free(text);
	profile_free(j.p);
}

/* Every rank in a collective (one nobody else entered): said so, with
 * each rank's stack; none when a rank still steps, or the wait is short. */
Test(ranks, every_rank_in_comm_is_said_and_short_or_moving_tails_are_not)
{
	const struct work w[] = { { 4, 10, 20 }, { 4, 10, 20 } };
	const int all_comm[] = { 0, 0 }, one_moves[] = { 0, -1 }, data[] = { 0, 1 };
	struct job j;
	char *text;

	job_init(&j);
	run_then_sit(&j, 2, w, all_comm, 1200);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "every rank waits in comm: the last 1.2 s, no rank outside a collective"),
		  "%s", text);
	free(text);
	profile_free(j.p);

	job_init(&j);
	run_then_sit(&j, 2, w, one_moves, 1500);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert_null(strstr(text, "rank-stuck"), "%s", text);
	free(text);
	profile_free(j.p);

	job_init(&j);
	run_then_sit(&j, 2, w, data, 600); /* under a second: a slow step */
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert_null(strstr(text, "rank-stuck"), "%s", text);
	free(text);
	profile_free(j.p);
}

/* Ranks 2 and 3 recorded on another machine whose clock runs 3 ms ahead:
 * their collectives end 3 ms later on the merged time line, and the
 * table says so, once for the machine; json gives each rank's. */
Test(ranks, another_machines_clock_is_measured_by_the_collectives)
{
	const struct work w[] = { { 4, 10, 20 }, { 8, 10, 20 }, { 4, 10, 20 }, { 4, 12, 20 } };
	struct job j;
	char *text;

	host_of[2] = host_of[3] = "nodeb";
	ahead_ns[2] = ahead_ns[3] = 3 * MS;
	job_init(&j);
	run(&j, 4, w, 30, NULL, true);
	host_of[2] = host_of[3] = NULL;
	ahead_ns[2] = ahead_ns[3] = 0;
	text = summary_part_of(j.p, SUMMARY_RANKS, 0);
	cr_assert(strstr(text, "rank 2 (PID 120 on nodeb)"), "%s", text);
	cr_assert(strstr(text, "clocks: nodeb's put on rank 0's time line by the machines' wall "
			       "clocks; by their collectives' ends its clock is 3.00 ms ahead (+-0.50 ms, "
			       "60 waits matched)\n"),
		  "%s", text);
	cr_assert_null(strstr(strstr(text, "clocks: nodeb") + 1, "clocks: nodeb"), "%s", text);
	free(text);
	text = summary_part_of(j.p, SUMMARY_JSON, 0);
	cr_assert(strstr(text, "\"host\": null, \"clock_ahead_ms\": null"), "%s", text);
	cr_assert(strstr(text, "\"host\": \"nodeb\", \"clock_ahead_ms\": 3.000, "
			       "\"clock_uncertainty_ms\": 0.500"),
		  "%s", text);
	free(text);
	profile_free(j.p);
}

/* Rank 1 of three is killed after 30 steps while ranks 0 and 2 wait for
 * it in all_reduce: the finding names it and how it ended; the table
 * says it ended first, the others not at all. */
Test(ranks, a_rank_that_died_while_the_others_wait_is_named)
{
	const struct work w[] = { { 4, 10, 20 }, { 4, 10, 20 }, { 4, 10, 20 } };
	const int where[] = { 0, -2, 0 };
	struct job j;
	char *text, ns[32];

	job_init(&j);
	run_then_sit(&j, 3, w, where, 1500);
	cr_assert_eq(profile_set_meta(j.p, "exit.110", "signal 9"), 0);
	snprintf(ns, sizeof(ns), "%llu", 1000 * MS + 30 * 35 * MS);
	cr_assert_eq(profile_set_meta(j.p, "exit_ns.110", ns), 0);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "rank-stuck, PID 110: rank 1 ended (signal 9) while ranks 0, 2 waited in "
			       "comm for it: 1.5 s"),
		  "%s", text);
	free(text);
	text = summary_part_of(j.p, SUMMARY_RANKS, 0);
	cr_assert(strstr(text, "rank 1 (PID 110): 30 steps") && strstr(text, "; ended: signal 9\n"),
		  "%s", text);
	cr_assert(strstr(text, "rank 1 ended first (signal 9), after 30 steps; 2 ranks had not ended "
			       "when the recording did\n"),
		  "%s", text);
	free(text);
	profile_free(j.p);
}

/* Ctrl-C reaches every rank at once: the first to end by SIGINT failed
 * no more than the others, and none is named first. */
Test(ranks, ranks_ended_by_ctrl_c_name_none_first)
{
	const struct work w[] = { { 4, 10, 20 }, { 4, 10, 20 } };
	struct job j;
	char *text;

	job_init(&j);
	run(&j, 2, w, 30, NULL, true);
	cr_assert_eq(profile_set_meta(j.p, "exit.100", "signal 2"), 0);
	cr_assert_eq(profile_set_meta(j.p, "exit_ns.100", "3000000000"), 0);
	cr_assert_eq(profile_set_meta(j.p, "exit.110", "signal 2"), 0);
	cr_assert_eq(profile_set_meta(j.p, "exit_ns.110", "3000100000"), 0);
	text = summary_part_of(j.p, SUMMARY_RANKS, 0);
	cr_assert_null(strstr(text, "ended first"), "%s", text);
	cr_assert_null(strstr(text, "; ended:"), "%s", text);
	free(text);
	profile_free(j.p);
}
