// SPDX-License-Identifier: MIT
/*
 * Findings whose evidence and advice are true: a training loop written
 * as a user writes one (a train_loader with two workers, a val_loader
 * whose workers start at each validation pass), built in memory tick by
 * tick, with its worker processes beside it, each with its loading
 * thread and a feeder thread that sleeps.
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

#define DL "/v/torch/utils/data/dataloader.py"
#define WK "/v/torch/utils/data/_utils/worker.py"
#define MS 1000000ull
#define LOOP 100

/*
 * train.py, as a user writes it:
 *
 *   9   for x, y in train_loader:          # 2 workers
 *  11       loss = loss_fn(model(x), y)
 *  12       loss.backward()
 *  13       opt.step()
 *  14       if step % 15 == 0: evaluate(model, val_loader)
 *  30   def evaluate(...): for x, y in val_loader:    # 2 workers, each pass
 *  31       model(x)
 */
static const struct py_test_frame train_iter[] = { { "main", "train.py", 9 }, { "DataLoader.__iter__", DL, 430 } };
static const struct py_test_frame train_next[] = { { "main", "train.py", 9 },
					{ "_BaseDataLoaderIter.__next__", DL, 700 } };
static const struct py_test_frame fwd[] = { { "main", "train.py", 11 },
				 { "Module._call_impl", "/v/torch/nn/modules/module.py", 1500 } };
static const struct py_test_frame bwd[] = { { "main", "train.py", 12 }, { "Tensor.backward", "/v/torch/_tensor.py", 520 } };
static const struct py_test_frame opt[] = { { "main", "train.py", 13 }, { "SGD.step", "/v/torch/optim/sgd.py", 80 } };
static const struct py_test_frame val_iter[] = { { "main", "train.py", 14 }, { "evaluate", "train.py", 30 },
				      { "DataLoader.__iter__", DL, 430 } };
static const struct py_test_frame val_next[] = { { "main", "train.py", 14 }, { "evaluate", "train.py", 30 },
				      { "_BaseDataLoaderIter.__next__", DL, 700 } };
static const struct py_test_frame val_fwd[] = { { "main", "train.py", 14 }, { "evaluate", "train.py", 31 },
				     { "Module._call_impl", "/v/torch/nn/modules/module.py", 1500 } };
/* A worker's loading thread keeps the frames it was forked under. */
static const struct py_test_frame load_tail[] = { { "_worker_loop", WK, 300 }, { "Images.__getitem__", "train.py", 38 } };
static const struct py_test_frame wait_tail[] = { { "_worker_loop", WK, 280 }, { "Queue.get", "/usr/lib/python3/queues.py", 100 } };
static const struct py_test_frame feeder[] = { { "Thread._bootstrap", "/usr/lib/python3/threading.py", 990 },
				    { "_feed", "/usr/lib/python3/queues.py", 230 } };

struct worker {
	uint32_t pid;
	bool val;
	int tick;
};

struct job {
	struct profile *p;
	uint64_t t;
	uint32_t track;
	uint32_t s_train_iter, s_train_next, s_fwd, s_bwd, s_opt, s_val_iter, s_val_next, s_val_fwd;
	uint32_t s_load[2], s_wait[2], s_feeder; /* [0] train's, [1] val's */
	struct worker w[8];
	int nw;
	uint32_t next_pid;
	int steps;      /* each half of an epoch, around its validation */
	bool starved;   /* the workers wait for a CPU half their busy time */
};

static uint32_t inherited(struct profile *p, const struct py_test_frame *outer, int n, const struct py_test_frame *tail)
{
	struct py_test_frame all[5];

	memcpy(all, outer, (size_t)n * sizeof(*outer));
	memcpy(all + n, tail, 2 * sizeof(*tail));
	return python_stack(p, all, n + 2);
}

static void job_init(struct job *j)
{
	struct profile *p = profile_new();

	cr_assert(p);
	cr_assert_eq(profile_keep_timeline(p), 0);
	*j = (struct job){ .p = p, .t = 1000 * MS, .next_pid = 200, .steps = 15 };
	j->s_train_iter = python_stack(p, train_iter, 2);
	j->s_train_next = python_stack(p, train_next, 2);
	j->s_fwd = python_stack(p, fwd, 2);
	j->s_bwd = python_stack(p, bwd, 2);
	j->s_opt = python_stack(p, opt, 2);
	j->s_val_iter = python_stack(p, val_iter, 3);
	j->s_val_next = python_stack(p, val_next, 3);
	j->s_val_fwd = python_stack(p, val_fwd, 3);
	j->s_load[0] = inherited(p, train_iter, 2, load_tail);
	j->s_wait[0] = inherited(p, train_iter, 2, wait_tail);
	j->s_load[1] = inherited(p, val_iter, 3, load_tail);
	j->s_wait[1] = inherited(p, val_iter, 3, wait_tail);
	j->s_feeder = python_stack(p, feeder, 2);
	cr_assert_eq(profile_intern_string(p, "dataloader.100.100", &j->track), 0);
	cr_assert_eq(profile_set_meta(p, "period_ns", "1000000"), 0);
	cr_assert_eq(profile_set_meta(p, "dataloader.100.0", "train_loader"), 0);
	cr_assert_eq(profile_set_meta(p, "dataloader.100.1", "val_loader"), 0);
}

static void add(struct job *j, uint32_t pid, uint32_t tid, uint32_t stack, uint32_t flags)
{
	struct sample s = { .time_ns = j->t, .pid = pid, .tid = tid, .stack = stack,
			    .weight_ns = MS, .flags = flags };

	cr_assert_eq(profile_add_sample(j->p, &s), 0);
}

/* The loop thread fetches from this loader from now on (the recorder's
 * track, written when it changes). */
static void loader(struct job *j, int object)
{
	struct counter_sample c = { .time_ns = j->t, .track = j->track, .value = object };

	cr_assert_eq(profile_add_counter(j->p, &c), 0);
}

/* n ticks of the loop thread in a stack; every live worker beside it:
 * its loading thread busy 9 ticks of 10, its feeder thread asleep. */
static void ticks(struct job *j, uint32_t stack, uint32_t flags, int n)
{
	for (int i = 0; i < n; i++) {
		j->t += MS;
		add(j, LOOP, LOOP, stack, flags);
		for (int k = 0; k < j->nw; k++) {
			struct worker *w = &j->w[k];
			bool busy = w->tick++ % 10 != 9;

			add(j, w->pid, w->pid, busy ? j->s_load[w->val] : j->s_wait[w->val],
			    !busy ? SAMPLE_IDLE : j->starved && w->tick % 2 ? SAMPLE_CPU_WAIT : 0);
			add(j, w->pid, w->pid + 1, j->s_feeder, SAMPLE_IDLE);
		}
	}
}

static void fork_worker(struct job *j, bool val)
{
	char key[32], label[32];

	cr_assert_lt(j->nw, 8);
	j->w[j->nw++] = (struct worker){ .pid = j->next_pid, .val = val };
	snprintf(key, sizeof(key), "process.%u", j->next_pid);
	snprintf(label, sizeof(label), "DataLoader worker %d", (j->nw - 1) % 2);
	cr_assert_eq(profile_set_meta(j->p, key, label), 0);
	j->next_pid += 10;
}

/* An iterator made: its two workers fork while the loop is in __iter__
 * (with workers; 20 ms), or none (persistent ones kept: 1 ms). */
static void make_iter(struct job *j, bool val, bool workers)
{
	uint32_t stack = val ? j->s_val_iter : j->s_train_iter;

	loader(j, val);
	if (!workers) {
		ticks(j, stack, 0, 1);
		return;
	}
	ticks(j, stack, 0, 5);
	fork_worker(j, val);
	ticks(j, stack, 0, 5);
	fork_worker(j, val);
	ticks(j, stack, 0, 10);
}

/* Steps waiting for data most of the time (blocked: the workers are
 * slower than the step). */
static void steps(struct job *j, int n)
{
	for (int i = 0; i < n; i++) {
		ticks(j, j->s_train_next, SAMPLE_IDLE, 12);
		ticks(j, j->s_fwd, 0, 3);
		ticks(j, j->s_bwd, 0, 3);
		ticks(j, j->s_opt, 0, 2);
	}
}

/* A validation pass: its loader's workers start, 4 batches, they exit. */
static void validate(struct job *j)
{
	int kept = 0;

	make_iter(j, true, true);
	for (int b = 0; b < 4; b++) {
		ticks(j, j->s_val_next, SAMPLE_IDLE, 3);
		ticks(j, j->s_val_fwd, 0, 3);
	}
	for (int k = 0; k < j->nw; k++)
		if (!j->w[k].val)
			j->w[kept++] = j->w[k];
	j->nw = kept;
	loader(j, 0);
}

/* epochs passes over train_loader, its workers started at each
 * (restart) or kept (persistent_workers=True); a validation pass every
 * 15 steps. */
static void train(struct job *j, int epochs, bool restart)
{
	for (int e = 0; e < epochs; e++) {
		if (restart) {
			int kept = 0;

			for (int k = 0; k < j->nw; k++)
				if (j->w[k].val)
					j->w[kept++] = j->w[k];
			j->nw = kept;
		}
		make_iter(j, false, restart || e == 0);
		steps(j, j->steps);
		validate(j);
		steps(j, j->steps);
	}
}

/*
 * The workers' figures are their loading threads', per loader: the
 * training workers busy 90%, the validation ones too, each told to its
 * loader by the iterator that forked it. It read "its 6 worker processes
 * busy 45% of the time", the sleeping feeder threads averaged in and the
 * validation pass's workers with the training ones.
 */
Test(findings, data_bound_gives_each_loaders_workers_loading_threads)
{
	struct job j;
	char *text;

	job_init(&j);
	train(&j, 2, false);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "data-bound"), "%s", text);
	cr_assert(strstr(text, "fetched from train_loader at main (train.py:9)\n"), "%s", text);
	cr_assert(strstr(text, "train_loader's 2 workers: their loading threads busy 90% and 90% of "
			 "the time; hottest: Images.__getitem__ (train.py:38)\n"), "%s", text);
	cr_assert(strstr(text, "val_loader's 4 workers (started at each of 2 passes): their loading "
			 "threads busy 92%, 92%, 91% and 91% of the time"), "%s", text);
	cr_assert_null(strstr(text, "not told"), "%s", text);
	free(text);
	profile_free(j.p);
}

/*
 * What to try follows what was recorded: workers kept across epochs
 * (persistent_workers=True already) get no persistent_workers, a job
 * with no GPU no pin_memory; workers started again at each epoch do.
 */
Test(findings, hints_follow_the_recording)
{
	struct job j;
	char *text;

	job_init(&j);
	train(&j, 2, false);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "try: more DataLoader workers (num_workers); less work in __getitem__"),
		  "%s", text);
	cr_assert_null(strstr(text, "persistent_workers"), "%s", text);
	cr_assert_null(strstr(text, "pin_memory"), "%s", text);
	free(text);
	profile_free(j.p);

	job_init(&j);
	train(&j, 2, true);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "try: more DataLoader workers (num_workers); persistent_workers=True "
			 "(its workers start again at each pass); less work"), "%s", text);
	cr_assert_null(strstr(text, "pin_memory"), "%s", text);
	free(text);
	profile_free(j.p);
}

/* Workers kept off the CPUs (a machine others load): their loading
 * threads' busy time is 5 ticks in 9 waiting for a CPU, and more workers would
 * wait too. */
Test(findings, workers_waiting_for_a_cpu_get_no_more_workers)
{
	struct job j;
	char *text;

	job_init(&j);
	j.starved = true;
	train(&j, 2, false);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "train_loader's 2 workers: their loading threads busy 90% and 90% of "
			 "the time, 56% of that waiting for a CPU; hottest:"), "%s", text);
	cr_assert(strstr(text, "try: not more workers: its workers wait for a CPU 56% of their busy "
			 "time"), "%s", text);
	free(text);
	profile_free(j.p);
}

/* The restarting loader is named, in the title and the hint (short
 * epochs: their starts weigh). */
Test(findings, worker_restart_names_its_loader)
{
	struct job j;
	char *text;

	job_init(&j);
	j.steps = 3;
	train(&j, 3, true);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "worker-restart, PID 100: each epoch starts train_loader again: 3 epochs"),
		  "%s", text);
	cr_assert(strstr(text, "try: persistent_workers=True on train_loader keeps its workers"), "%s",
		  text);
	free(text);
	profile_free(j.p);
}

/* Oversubscribed CPUs: the waiting split into the job's own threads' and
 * other processes', and data-bound advises no more workers. */
Test(findings, oversubscribed_says_whose_threads_wait)
{
	struct job j;
	char *text;

	job_init(&j);
	cr_assert_eq(profile_set_meta(j.p, "cpus", "2"), 0);
	cr_assert_eq(profile_set_meta(j.p, "target_cpu_ns", "1500000000"), 0);
	cr_assert_eq(profile_set_meta(j.p, "target_wait_ns", "1000000000"), 0);
	cr_assert_eq(profile_set_meta(j.p, "runnable_milli", "2500"), 0);
	train(&j, 2, false);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "cpu-oversubscribed: 2.5 threads runnable on average for 2 CPUs: 40%"),
		  "%s", text);
	cr_assert(strstr(text, "is other processes' load is not known: the recording has no "
			 "machine-wide figure"), "%s", text);
	cr_assert(strstr(text, "try: not more workers: the CPUs are oversubscribed"), "%s", text);
	cr_assert_null(strstr(text, "try: more DataLoader workers"), "%s", text);
	free(text);
	/* 4.5 runnable on the machine's 2 CPUs: 2 of them others'; of the
	 * 2.5 beyond the CPUs, the job's own 0.5. */
	cr_assert_eq(profile_set_meta(j.p, "machine_runnable_milli", "4500"), 0);
	cr_assert_eq(profile_set_meta(j.p, "machine_cpus", "2"), 0);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(strstr(text, "the machine: 4.5 threads runnable on average (every process's, "
			 "/proc/loadavg), 2.0 of them other processes' on these CPUs\n"), "%s", text);
	cr_assert(strstr(text, "of the 1.00 s waiting, about 0.20 s (20%) is the job's own threads "
			 "outnumbering its CPUs, 0.80 s (80%) other processes' load\n"), "%s", text);
	cr_assert(strstr(text, "most of the waiting is other processes'"), "%s", text);
	free(text);
	profile_free(j.p);
}

/* A loop that computes and hardly waits: report --findings says there is
 * none, in one line; the end of record (its top three) stays silent. */
Test(findings, none_is_said_when_all_are_asked_for)
{
	struct job j;
	char *text;

	job_init(&j);
	loader(&j, 0);
	for (int i = 0; i < 40; i++) {
		ticks(&j, j.s_train_next, 0, 1);
		ticks(&j, j.s_fwd, 0, 8);
		ticks(&j, j.s_bwd, 0, 8);
		ticks(&j, j.s_opt, 0, 3);
	}
	text = summary_part_of(j.p, SUMMARY_FINDINGS, SIZE_MAX);
	cr_assert(!strncmp(text, "trainsample: no findings: ", 26) && !strchr(text, '\n')[1], "%s",
		  text);
	free(text);
	text = summary_part_of(j.p, SUMMARY_FINDINGS, 3);
	cr_assert_str_eq(text, "");
	free(text);
	profile_free(j.p);
}
