// SPDX-License-Identifier: MIT
/* Steps from a thread's timeline (analysis/steps.c): counted by their
 * backward, and a step that a late tick may have merged with the next
 * one told apart from a step that was merely slow. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "model_helpers.h"
#include "summary_helpers.h"

#define SP "/usr/lib/python3/dist-packages/"
#define MS 1000000ull

struct loop {
	struct profile *p;
	uint32_t fwd, bwd, opt;
	uint64_t now; /* the last tick's time */
	uint64_t jitter; /* 0, or the state of ticks drawn 0.2 to 1.8 ms apart */
};

static uint32_t phase_stack(struct profile *p, const char *func, const char *file)
{
	uint32_t f[2] = { frame(p, FRAME_PYTHON, "train", "/home/u/train.py", 10),
			  frame(p, FRAME_PYTHON, func, file, 20) };

	return stack(p, f, 2);
}

static void loop_init(struct loop *l)
{
	l->p = profile_new();
	cr_assert(l->p);
	cr_assert_eq(profile_keep_timeline(l->p), 0);
	/* 1 kHz */
	cr_assert_eq(profile_set_meta(l->p, "period_ns", "1000000"), 0);
	l->fwd = phase_stack(l->p, "Module._call_impl", SP "torch/nn/modules/module.py");
	l->bwd = phase_stack(l->p, "Tensor.backward", SP "torch/_tensor.py");
	l->opt = phase_stack(l->p, "SGD.step", SP "torch/optim/sgd.py");
	l->now = 1000 * MS;
	l->jitter = 0;
}

/* n ticks of stack st, the first of them after `late` ms more than a tick. */
static void ticks(struct loop *l, uint32_t st, int n, uint64_t late_ms)
{
	for (int i = 0; i < n; i++) {
		uint64_t weight = MS + (i ? 0 : late_ms * MS);

		if (l->jitter) {
			l->jitter = l->jitter * 6364136223846793005ull + 1442695040888963407ull;
			weight += (l->jitter >> 33) % (8 * MS / 5) - 4 * MS / 5;
		}
		struct sample s = { .pid = 100, .tid = 101, .stack = st, .flags = 0 };

		l->now += weight;
		s.time_ns = l->now;
		s.weight_ns = weight;
		cr_assert_eq(profile_add_sample(l->p, &s), 0);
	}
}

/* A step: forward 5 ms, backward 10, optimizer 3. */
static void step(struct loop *l)
{
	ticks(l, l->fwd, 5, 0);
	ticks(l, l->bwd, 10, 0);
	ticks(l, l->opt, 3, 0);
}

static struct step_stats steps_of(struct loop *l)
{
	struct phase_rules *r;
	struct phase_map *m;
	struct step_stats st;

	cr_assert_eq(phase_rules_new(&r), 0);
	cr_assert_eq(phase_map_new(r, l->p, &m), 0);
	cr_assert_eq(steps_find(m, 100, 101, &st), 0);
	phase_map_free(m);
	phase_rules_free(r);
	profile_free(l->p);
	return st;
}

Test(steps, counted_by_backward_none_merged)
{
	struct loop l;
	struct step_stats st;

	loop_init(&l);
	for (int i = 0; i < 20; i++)
		step(&l);
	st = steps_of(&l);
	cr_expect_eq(st.steps, 20);
	cr_expect_eq(st.beat, PHASE_BACKWARD);
	cr_expect_eq(st.p50_ns, 18 * MS);
	cr_expect_eq(st.maybe_merged, 0);
}

/* Trainsample stalled for 30 ms during step 10's backward... which it then
 * never saw: steps 10 and 11 look like one, and it is said. */
Test(steps, a_tick_late_by_more_than_a_backward_may_have_merged_two)
{
	struct loop l;
	struct step_stats st;

	loop_init(&l);
	for (int i = 0; i < 20; i++) {
		if (i != 10) {
			step(&l);
			continue;
		}
		ticks(&l, l.fwd, 5, 0);
		ticks(&l, l.opt, 3, 14); /* the backward's 10 ms, and the optimizer's start, unseen */
	}
	st = steps_of(&l);
	cr_expect_eq(st.steps, 19);
	cr_expect_eq(st.maybe_merged, 1, "%llu", (unsigned long long)st.maybe_merged);
}

/* The stall ends inside a backward: it hid step 10's backward and
 * optimizer and step 11's forward (18 ms), and its late tick is the
 * first of step 11's backward run, whose start it pulls back over the
 * gap: still said. (test_phases' stalls of trainsample under two CPU
 * hogs: 28 steps of 29, one merged, nothing said, before.) */
Test(steps, a_late_tick_at_a_backward_s_start_may_have_merged_two)
{
	struct loop l;
	struct step_stats st;

	loop_init(&l);
	for (int i = 0; i < 20; i++) {
		if (i != 10) {
			step(&l);
			continue;
		}
		ticks(&l, l.fwd, 5, 0);
		ticks(&l, l.bwd, 10, 18);
		ticks(&l, l.opt, 3, 0);
	}
	st = steps_of(&l);
	cr_expect_eq(st.steps, 20);
	cr_expect_eq(st.maybe_merged, 1, "%llu", (unsigned long long)st.maybe_merged);
}

/* A step twice as long, every tick on time: slow, not merged. And a
 * tick late by less than a backward, in a normal step: nothing. */
Test(steps, a_slow_step_or_a_short_delay_is_not_a_merge)
{
	struct loop l;
	struct step_stats st;

	loop_init(&l);
	for (int i = 0; i < 20; i++) {
		if (i == 5) {
			ticks(&l, l.fwd, 23, 0);
			ticks(&l, l.bwd, 10, 0);
			ticks(&l, l.opt, 3, 0);
		} else if (i == 12) {
			ticks(&l, l.fwd, 5, 0);
			ticks(&l, l.bwd, 10, 0);
			ticks(&l, l.opt, 3, 4);
		} else {
			step(&l);
		}
	}
	st = steps_of(&l);
	cr_expect_eq(st.steps, 20);
	cr_expect_eq(st.maybe_merged, 0, "%llu", (unsigned long long)st.maybe_merged);
}

/* The sampler's own jitter (ticks 0.2 to 1.8 periods apart) over 200
 * steps, three of them slow: nothing flagged; one tick 15 ms late where a
 * backward was: that one. */
Test(steps, jittered_ticks_flag_only_the_late_one)
{
	for (int late = 0; late < 2; late++) {
		struct loop l;
		struct step_stats st;

		loop_init(&l);
		l.jitter = 12345;
		for (int i = 0; i < 200; i++) {
			if (i % 60 == 30) {
				ticks(&l, l.fwd, 25, 0);
				ticks(&l, l.bwd, 10, 0);
				ticks(&l, l.opt, 3, 0);
			} else if (late && i == 100) {
				ticks(&l, l.fwd, 5, 0);
				ticks(&l, l.opt, 3, 15);
			} else {
				step(&l);
			}
		}
		st = steps_of(&l);
		cr_expect_eq(st.steps, 200 - late);
		cr_expect_eq(st.maybe_merged, (uint64_t)late, "late %d: %llu", late,
			     (unsigned long long)st.maybe_merged);
	}
}

/* A stack of three frames: the loop at line `at`, a helper, then func. */
static uint32_t helper_stack(struct profile *p, int at, const char *helper, int line,
			     const char *func, const char *file)
{
	uint32_t f[3] = { frame(p, FRAME_PYTHON, "train", "/home/u/train.py", (uint32_t)at),
			  frame(p, FRAME_PYTHON, helper, "/home/u/train.py", (uint32_t)line),
			  frame(p, FRAME_PYTHON, func, file, 20) };

	return stack(p, f, 3);
}

/* A validation pass every 5 steps, in a function of its own (model.eval()
 * and no_grad() leave no frame): 3 batches of a 2 ms fetch and a 4 ms
 * forward that no backward follows. The passes are found and kept out of
 * the steps: 20 steps of 18 ms, the longest too. */
Test(steps, a_validation_pass_is_eval_and_not_the_steps)
{
	struct loop l;
	struct step_stats st;
	uint32_t vfwd, vdata;

	loop_init(&l);
	vfwd = helper_stack(l.p, 30, "evaluate", 40, "Module._call_impl", SP "torch/nn/modules/module.py");
	vdata = helper_stack(l.p, 30, "evaluate", 39, "_BaseDataLoaderIter.__next__",
			     SP "torch/utils/data/dataloader.py");
	for (int i = 0; i < 20; i++) {
		step(&l);
		for (int b = 0; i % 5 == 4 && i < 19 && b < 3; b++) {
			ticks(&l, vdata, 2, 0);
			ticks(&l, vfwd, 4, 0);
		}
	}
	st = steps_of(&l);
	cr_expect_eq(st.steps, 20);
	cr_expect_eq(st.eval_passes, 3);
	cr_expect_eq(st.eval_ns, 3 * 18 * MS);
	cr_expect_eq(st.p50_ns, 18 * MS);
	cr_expect_eq(st.max_ns, 18 * MS, "max %llu", (unsigned long long)st.max_ns);
	cr_expect_eq(st.phase_ns[PHASE_FORWARD], 19 * 5 * MS);
	cr_expect_eq(st.phase_ns[PHASE_DATA], 0);
	cr_expect_eq(st.eval_taken_ns[PHASE_FORWARD], 3 * 12 * MS);
	cr_expect_eq(st.eval_taken_ns[PHASE_DATA], 3 * 6 * MS);
}

/* A teacher's no-grad forward at every step, at a line of its own, is
 * the step's: no pass. */
Test(steps, a_forward_at_every_step_without_backward_is_no_validation)
{
	struct loop l;
	struct step_stats st;
	uint32_t teacher;

	loop_init(&l);
	teacher = helper_stack(l.p, 12, "teach", 50, "Module._call_impl", SP "torch/nn/modules/module.py");
	for (int i = 0; i < 20; i++) {
		ticks(&l, teacher, 3, 0);
		step(&l);
	}
	st = steps_of(&l);
	cr_expect_eq(st.eval_passes, 0);
	cr_expect_eq(st.p50_ns, 21 * MS);
	cr_expect_eq(st.phase_ns[PHASE_FORWARD], 19 * 8 * MS);
}

/* The tutorial's loop (`for phase in ("train", "val"):` around one inner
 * loop): validation fetches and runs the model at the training lines, and
 * only the missing backward tells it. A gap between backward runs holding
 * four runs of the last forward line (three validation batches and the
 * next training batch) is a pass; its fetches are too, but the training
 * batch's own. */
Test(steps, a_validation_on_the_training_lines_is_told_by_its_gap)
{
	struct loop l;
	struct step_stats st;
	uint32_t data;

	loop_init(&l);
	data = phase_stack(l.p, "_BaseDataLoaderIter.__next__", SP "torch/utils/data/dataloader.py");
	for (int i = 0; i < 20; i++) {
		ticks(&l, data, 2, 0);
		step(&l);
		for (int b = 0; i % 5 == 4 && i < 19 && b < 3; b++) {
			ticks(&l, data, 2, 0);
			ticks(&l, l.fwd, 4, 0);
		}
	}
	st = steps_of(&l);
	cr_expect_eq(st.steps, 20);
	cr_expect_eq(st.eval_passes, 3);
	cr_expect_eq(st.eval_ns, 3 * 18 * MS);
	cr_expect_eq(st.p50_ns, 20 * MS);
	cr_expect_eq(st.max_ns, 20 * MS, "max %llu", (unsigned long long)st.max_ns);
	cr_expect_eq(st.phase_ns[PHASE_DATA], 19 * 2 * MS);
}

/* A step that runs its model on three chunks before one backward does so
 * at every step: that is its usual, not a validation. */
Test(steps, chunks_before_every_backward_are_no_validation)
{
	struct loop l;
	struct step_stats st;
	uint32_t other;

	loop_init(&l);
	other = phase_stack(l.p, "split", "/home/u/train.py");
	for (int i = 0; i < 20; i++) {
		for (int c = 0; c < 3; c++) {
			ticks(&l, l.fwd, 3, 0);
			ticks(&l, other, 1, 0);
		}
		ticks(&l, l.bwd, 10, 0);
	}
	st = steps_of(&l);
	cr_expect_eq(st.eval_passes, 0);
	cr_expect_eq(st.p50_ns, 22 * MS);
}

/* The summary's text for l's profile (freed). */
static char *summary_of(struct loop *l)
{
	char *text = summary_part_of(l->p, SUMMARY_LINES, 0);

	profile_free(l->p);
	return text;
}

/* A multiprocessing forkserver imports the script (its __main__ preloaded),
 * whose frames may match the rules: it is no loop, whatever it ran
 * (issue 29: "optimizer is seen for 1.0 samples" was printed for one). */
Test(steps, a_forkserver_is_no_loop)
{
	struct loop l;
	char *text;

	loop_init(&l);
	for (int i = 0; i < 20; i++)
		step(&l);
	cr_assert_eq(profile_set_meta(l.p, "process.100",
				      "python3.14 -c from multiprocessing.forkserver import main; "
				      "main(8, 9, ['__main__'], ..."), 0);
	text = summary_of(&l);
	cr_assert_null(strstr(text, "steps:"), "%s", text);
	cr_assert_null(strstr(text, "phases,"), "%s", text);
	free(text);
	/* the same samples in a process of another name: a loop */
	loop_init(&l);
	for (int i = 0; i < 20; i++)
		step(&l);
	text = summary_of(&l);
	cr_assert(strstr(text, "steps: 20 (") && strstr(text, "phases, thread 101"), "%s", text);
	free(text);
	/* a child of the forkserver keeps its command line, and may train */
	loop_init(&l);
	for (int i = 0; i < 20; i++)
		step(&l);
	cr_assert_eq(profile_set_meta(l.p, "process.100",
				      "python3.14 -c from multiprocessing.forkserver import main; "
				      "main(8, 9, ['__main__'], ..."), 0);
	cr_assert_eq(profile_set_meta(l.p, "fork_of.100", "99"), 0);
	text = summary_of(&l);
	cr_assert(strstr(text, "steps: 20 ("), "%s", text);
	free(text);
}

/* A thread seen in the training phases a few times only has no steps to
 * count, not steps too short to count. */
Test(steps, a_handful_of_samples_is_no_loop)
{
	struct loop l;
	char *text;

	loop_init(&l);
	for (int i = 0; i < 3; i++) {
		ticks(&l, l.fwd, 1, 0);
		ticks(&l, l.bwd, 1, 0);
		ticks(&l, l.opt, 1, 20);
	}
	text = summary_of(&l);
	cr_assert_null(strstr(text, "steps:"), "%s", text);
	free(text);
}
