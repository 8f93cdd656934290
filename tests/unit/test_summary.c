// SPDX-License-Identifier: MIT
/* The end-of-run lines: one per process, its label, shares and hottest,
 * and the details of the processes that hold a quarter of the samples. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/summary_impl.h"
#include "formats/formats.h"
#include "tests/unit/summary_helpers.h"

static uint32_t stack_of(struct profile *p, const char *name, uint32_t kind, const char *file,
			 uint32_t line)
{
	struct frame f = { .kind = kind, .line = line };
	uint32_t frame, stack;

	cr_assert_eq(profile_intern_string(p, name, &f.name), 0);
	if (file)
		cr_assert_eq(profile_intern_string(p, file, &f.module), 0);
	cr_assert_eq(profile_intern_frame(p, &f, &frame), 0);
	cr_assert_eq(profile_intern_stack(p, 0, frame, &stack), 0);
	return stack;
}

static void add(struct profile *p, uint32_t pid, uint32_t stack, uint32_t flags, int n)
{
	static uint64_t t = 1000;

	for (int i = 0; i < n; i++) {
		struct sample s = { .time_ns = t += 1000000, .pid = pid, .tid = pid, .stack = stack,
				    .weight_ns = 1000000, .flags = flags };

		cr_assert_eq(profile_add_sample(p, &s), 0);
	}
}

Test(summary, a_line_per_process_with_label_shares_and_hottest)
{
	struct profile *p = profile_new();
	uint32_t fwd = stack_of(p, "forward", FRAME_PYTHON, "/src/model.py", 42);
	uint32_t load = stack_of(p, "load", FRAME_PYTHON, "data.py", 7);
	uint32_t wait = stack_of(p, "[idle: futex]", FRAME_IDLE, NULL, 0);
	struct phase_rules *rules;
	struct phase_map *map;
	struct summary *s;
	char *text = NULL, label[64];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	process_label("python3 train.py", "0", NULL, label, sizeof(label));
	cr_assert_str_eq(label, "rank 0");
	cr_assert_eq(profile_set_meta(p, "process.20", label), 0);
	process_label("python3 eval.py\nx", NULL, "node1", label, sizeof(label));
	cr_assert_str_eq(label, "python3 eval.py x on node1");
	/* A long command line is cut between arguments, and says so (issue 29). */
	{
		char wide[256];

		process_label("python3 train.py --epochs 3 --batch-size 64 --lr 0.001 "
			      "--val-every 100 --checkpoint-dir /scratch/run7",
			      NULL, NULL, wide, sizeof(wide));
		cr_assert_str_eq(wide, "python3 train.py --epochs 3 --batch-size 64 --lr 0.001 "
				       "--val-every 100 ...");
		process_label("python3 train.py --val-every 100", NULL, NULL, wide, sizeof(wide));
		cr_assert_str_eq(wide, "python3 train.py --val-every 100");
	}
	add(p, 20, fwd, 0, 6);
	add(p, 20, load, 0, 2);
	add(p, 20, wait, SAMPLE_IDLE, 2);
	add(p, 7, load, 0, 4);
	cr_assert_eq(phase_rules_new(&rules), 0);
	cr_assert_eq(phase_map_new(rules, p, &map), 0);
	cr_assert_eq(summary_build(map, &s), 0);
	cr_assert_eq(summary_text_write(s, false, f), 0);
	fclose(f);
	/* By PID; shares of each process's own time; hottest by busy time;
	 * functions over their lines. */
	cr_assert_str_eq(text,
			 "trainsample: PID 7: 4 samples, busy 100%, idle 0%; hottest: load (data.py:7) 100%\n"
			 "trainsample:   threads: thread 7 busy 100%\n"
			 "trainsample:   top functions: self load (data.py) 100%; total load (data.py) 100%\n"
			 "trainsample: PID 20 (rank 0): 10 samples, busy 80%, idle 20%; hottest: forward (model.py:42) 75%\n"
			 "trainsample:   threads: thread 20 busy 80%\n"
			 "trainsample:   top functions: self forward (model.py) 75%, load (data.py) 25%; total forward (model.py) 75%, load (data.py) 25%\n");
	summary_free(s);
	phase_map_free(map);
	phase_rules_free(rules);
	free(text);
	profile_free(p);
}

/* A stack from frames outermost first: { name, file, line } each. */
struct test_frame {
	const char *name, *file;
	uint32_t line;
};

static uint32_t stack_path(struct profile *p, const struct test_frame *f, int n)
{
	uint32_t stack = 0;

	for (int i = 0; i < n; i++) {
		struct frame fr = { .kind = f[i].file ? FRAME_PYTHON : FRAME_NATIVE, .line = f[i].line };
		uint32_t frame;

		cr_assert_eq(profile_intern_string(p, f[i].name, &fr.name), 0);
		if (f[i].file)
			cr_assert_eq(profile_intern_string(p, f[i].file, &fr.module), 0);
		cr_assert_eq(profile_intern_frame(p, &fr, &frame), 0);
		cr_assert_eq(profile_intern_stack(p, stack, frame, &stack), 0);
	}
	return stack;
}

#define DL "/v/torch/utils/data/dataloader.py"

/* A loop's data fetch (its line, train.py:10), forward, backward, step. */
static const struct test_frame loop_data[] = { { "main", "train.py", 10 },
					       { "_BaseDataLoaderIter.__next__", DL, 700 } };
static const struct test_frame loop_fwd[] = { { "main", "train.py", 11 },
					      { "Module._call_impl", "/v/torch/nn/modules/module.py", 1500 } };
static const struct test_frame loop_bwd[] = { { "main", "train.py", 12 },
					      { "Tensor.backward", "/v/torch/_tensor.py", 520 } };
static const struct test_frame loop_opt[] = { { "main", "train.py", 13 },
					      { "SGD.step", "/v/torch/optim/sgd.py", 80 } };

/* The end's summary lines, or its findings (the costliest 8), of a
 * profile by the built-in rules. */
static char *summary_of(struct profile *p, bool findings)
{
	return summary_part_of(p, findings ? SUMMARY_FINDINGS : SUMMARY_LINES, 8);
}

/*
 * A loader is told by the loop's line that fetches from it. A sample whose
 * Python stack was cut short ("[error]" where the loop's frames should be)
 * has no such line: it is not another loader, named by its number.
 */
Test(summary, a_stack_cut_short_is_not_another_loader)
{
	struct profile *p = profile_new();
	const struct test_frame cut[] = { { "[error]", NULL, 0 },
					  { "_BaseDataLoaderIter.__next__", DL, 700 } };
	/* The loop's line is frame 0, as where a recording's first sample
	 * was in it (attach to a loop at module level). */
	uint32_t sd = stack_path(p, loop_data, 2), sc = stack_path(p, cut, 2);
	uint32_t sf = stack_path(p, loop_fwd, 2), sb = stack_path(p, loop_bwd, 2);
	uint32_t so = stack_path(p, loop_opt, 2);
	char *text;

	cr_assert_eq(profile_keep_timeline(p), 0);
	for (int step = 0; step < 30; step++) {
		add(p, 30, sd, 0, 4);
		if (step == 17)
			add(p, 30, sc, 0, 1); /* the last data sample before a backward */
		add(p, 30, sf, 0, 6);
		add(p, 30, sb, 0, 6);
		add(p, 30, so, 0, 3);
	}
	text = summary_of(p, false);
	cr_assert(strstr(text, "trainsample:   DataLoaders: 0: training 0.0 ms a step waiting for data\n"),
		  "%s", text);
	free(text);
	profile_free(p);
}

/*
 * Frame ids start at 0, a real frame: a data-bound loop whose fetching
 * line is frame 0 names that line in its finding. It read "at ?" while 0
 * also stood for "no frame".
 */
Test(summary, a_call_site_that_is_frame_0_is_named)
{
	struct profile *p = profile_new();
	uint32_t sd = stack_path(p, loop_data, 2), sf = stack_path(p, loop_fwd, 2);
	uint32_t sb = stack_path(p, loop_bwd, 2), so = stack_path(p, loop_opt, 2);
	char *text;

	cr_assert_eq(profile_frame(p, 0)->line, 10, "the loop's fetching line is frame 0");
	cr_assert_eq(profile_keep_timeline(p), 0);
	for (int step = 0; step < 30; step++) {
		add(p, 30, sd, 0, 12);
		add(p, 30, sf, 0, 3);
		add(p, 30, sb, 0, 3);
		add(p, 30, so, 0, 2);
	}
	text = summary_of(p, true);
	cr_assert(strstr(text, "data-bound"), "%s", text);
	cr_assert(strstr(text, "fetched from 0 at main (train.py:10)\n"), "%s", text);
	free(text);
	profile_free(p);
}

/* Issue 30: code that makes a new function for every call. Each of
 * NFUNCS functions is seen at two lines (two frames, one function), on
 * NTHREADS short threads; a "hot" one at two lines too. The functions are
 * found by name and file whatever their number (a hash table, not a
 * search of every function for each new frame), and counted once each. */
#define NFUNCS 60000
#define NTHREADS 3000

static uint32_t frame_at(struct profile *p, const char *name, const char *file, uint32_t line)
{
	struct frame f = { .kind = FRAME_PYTHON, .line = line };
	uint32_t id;

	cr_assert_eq(profile_intern_string(p, name, &f.name), 0);
	cr_assert_eq(profile_intern_string(p, file, &f.module), 0);
	cr_assert_eq(profile_intern_frame(p, &f, &id), 0);
	return id;
}

static void sample_on(struct profile *p, uint32_t tid, uint32_t parent, uint32_t frame, int n)
{
	static uint64_t t = 1000;
	uint32_t stack;

	cr_assert_eq(profile_intern_stack(p, parent, frame, &stack), 0);
	for (int i = 0; i < n; i++) {
		struct sample s = { .time_ns = t += 1000000, .pid = 100, .tid = tid, .stack = stack,
				    .weight_ns = 1000000 };

		cr_assert_eq(profile_add_sample(p, &s), 0);
	}
}

Test(summary, many_distinct_functions_each_counted_once_by_name_and_file)
{
	struct profile *p = profile_new();
	uint32_t run, hot_id, where;
	struct phase_rules *rules;
	struct phase_map *map;
	struct summary *s;
	const struct summary_process *sp;
	char name[32];

	cr_assert_eq(profile_intern_stack(p, 0, frame_at(p, "run", "/src/m.py", 3), &run), 0);
	for (uint32_t i = 0; i < NFUNCS; i++) {
		uint32_t tid = 1000 + i / (NFUNCS / NTHREADS);

		snprintf(name, sizeof(name), "f_%u", i);
		sample_on(p, tid, run, frame_at(p, name, "<string>", 1), 1);
		sample_on(p, tid, run, frame_at(p, name, "<string>", 2), 1);
	}
	sample_on(p, 999, run, frame_at(p, "hot", "/src/m.py", 7), 50);
	sample_on(p, 999, run, frame_at(p, "hot", "/src/m.py", 8), 50);
	/* Same name, another file: another function. */
	sample_on(p, 999, run, frame_at(p, "hot", "/src/other.py", 7), 30);
	cr_assert_eq(phase_rules_new(&rules), 0);
	cr_assert_eq(phase_map_new(rules, p, &map), 0);
	cr_assert_eq(summary_build(map, &s), 0);
	cr_assert_eq(s->nprocs, 1);
	sp = &s->procs[0];
	cr_assert_eq(sp->nthreads, NTHREADS + 1);
	cr_assert_eq(sp->samples, 2 * NFUNCS + 130);
	cr_assert_eq(profile_intern_string(p, "hot", &hot_id), 0);
	cr_assert_eq(profile_intern_string(p, "/src/m.py", &where), 0);
	cr_assert_geq(sp->ntop_self, 3);
	cr_assert_eq(sp->top_self[0].name, hot_id);
	cr_assert_eq(sp->top_self[0].file, where);
	cr_assert_eq(sp->top_self[0].self_ns, 100 * 1000000ull, "both lines of hot, one function");
	cr_assert_eq(sp->top_self[1].name, hot_id);
	cr_assert_eq(sp->top_self[1].self_ns, 30 * 1000000ull, "hot of another file on its own");
	/* Every f_i at both of its lines: 2 ms each, not 1. */
	cr_assert_eq(profile_intern_string(p, "<string>", &where), 0);
	cr_assert_eq(sp->top_self[2].file, where);
	cr_assert_eq(sp->top_self[2].self_ns, 2 * 1000000ull);
	cr_assert_eq(sp->top_total[0].total_ns, (2 * NFUNCS + 130) * 1000000ull, "run holds all");
	summary_free(s);
	phase_map_free(map);
	phase_rules_free(rules);
	profile_free(p);
}
