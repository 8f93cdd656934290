/* SPDX-License-Identifier: MIT */
/*
 * analysis/ — what a person asks of a profile, computed from its stacks
 * alone: the training phase each sample is in (data loading, forward,
 * backward, optimizer, ...) and the split of a process's time between them.
 * Pure functions of the profile model (formats/); no ptrace, no files but
 * a rules file the user names and the program's source lines that name
 * its DataLoaders.
 */
#ifndef TRAINSAMPLE_ANALYSIS_H
#define TRAINSAMPLE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;
struct profile_aggregate;

enum phase {
	PHASE_OTHER,
	PHASE_DATA,       /* waiting on or running the DataLoader, collate, workers */
	PHASE_FORWARD,    /* a torch.nn.Module call, not under backward */
	PHASE_BACKWARD,   /* Tensor.backward, autograd, its engine's threads */
	PHASE_OPTIMIZER,  /* Optimizer.step, zero_grad, LR schedulers, clipping */
	PHASE_SYNC,       /* waiting for the GPU: synchronize, .item() (--native) */
	PHASE_CHECKPOINT, /* torch.save, save_pretrained */
	PHASE_EVAL,       /* an evaluation loop, with its forward and data */
	PHASE_LOGGING,    /* loggers, tracker clients */
	PHASE_COMM,       /* collectives, point-to-point calls and their waits
			   * (torch.distributed, DDP's gradient allreduce, FSDP) */
	PHASE_KINDS
};

/* "data", "forward", ...; "other" for PHASE_OTHER. */
const char *phase_name(enum phase ph);
/* -EINVAL for a name that is no phase. */
int phase_by_name(const char *name, enum phase *out);
/* The phase names, PHASE_KINDS of them, in enum order. */
const char *const *phase_names(void);

/* Rules: a phase for a frame whose function (and file) match, or for a
 * thread by name. The built-in ones cover plain PyTorch loops, Hugging
 * Face Trainer and accelerate, and Lightning. */
struct phase_rules;

int phase_rules_new(struct phase_rules **out);
/*
 * Adds the rules of a text file, checked before the built-in ones (a
 * rule there overrides one here). One rule a line:
 *   PHASE FUNCTION [FILE]     FUNCTION and FILE are shell patterns (*, ?)
 *   PHASE thread:NAME         every sample of threads so named
 * '#' starts a comment. An error names the file and line.
 */
int phase_rules_load(struct phase_rules *r, const char *path, char *err, size_t errlen);
void phase_rules_free(struct phase_rules *r);

/* The rules applied to one profile, each stack's phase found once. */
struct phase_map;

int phase_map_new(const struct phase_rules *r, const struct profile *p, struct phase_map **out);
/*
 * The phase of a row: its thread's rule if one names it, else its
 * frames', innermost match first, except that a forward inside backward,
 * optimizer or eval is theirs and data or sync inside eval is eval's.
 */
enum phase phase_of_row(struct phase_map *m, const struct profile_aggregate *row);
/* A span's phase: its row's, or eval inside a validation pass of its
 * thread's loop (found by steps_find or steps_starts of that thread; a
 * checkpoint or logging there stays what it is). */
struct profile_span;
enum phase phase_of_span(struct phase_map *m, const struct profile_span *s);
void phase_map_free(struct phase_map *m);

/* The training loop's steps in one thread (steps.c). */
struct step_stats {
	uint32_t pid, tid;
	enum phase beat;      /* the phase whose runs mark the steps */
	uint64_t steps;       /* runs of the beat */
	uint64_t timed;       /* steps with a next one: steps - 1 */
	uint64_t span_ns;     /* first step's start to the last one's */
	uint64_t first_ns, last_ns; /* the first and last steps' starts */
	uint64_t thread_first_ns;   /* the thread's first sample's span */
	uint64_t before_ns[PHASE_KINDS]; /* by phase, before the first step */
	uint64_t p50_ns, p90_ns, max_ns; /* step time */
	uint64_t phase_ns[PHASE_KINDS];  /* over span_ns, by phase */
	uint64_t beat_ns;     /* a run of the beat, on average: steps are
			       * counted right only when it lasts two
			       * sampling periods or more */
	/* The same in samples (a late tick's weight stretches time, not
	 * counts): every beat run's, and all from the first step's start to
	 * the last's. */
	uint64_t beat_samples, span_samples;
	/* Steps 1.5 times the median or longer that hold a tick late by a
	 * beat or more: each may be two, its beat unseen. */
	uint64_t maybe_merged;
	/* Evaluation passes in the loop (a validation inside it): their
	 * time is not the steps'. How many, their time between the first
	 * step's start and the last's (taken out of the step times and
	 * phase_ns), and all of the thread's time in them by the phase its
	 * stacks have alone (data, forward, ...: now eval's). */
	uint64_t eval_passes, eval_ns;
	uint64_t eval_taken_ns[PHASE_KINDS];
};

/*
 * Steps from the profile's timeline (profile_keep_timeline, or a
 * recording read back): a step starts where a run of the thread's
 * backward samples does (else optimizer, forward, data: the first of
 * them it has). 0 steps when the thread has none of them or no timeline.
 */
int steps_find(struct phase_map *m, uint32_t pid, uint32_t tid, struct step_stats *out);
/* The same, and each step's start (*starts, *n of them, the caller
 * frees it) and the thread's last sample's time. */
int steps_starts(struct phase_map *m, uint32_t pid, uint32_t tid, struct step_stats *out,
		 uint64_t **starts, size_t *n, uint64_t *end_ns);

/*
 * report --steps A:B: the time from step A's start to step B's end (steps
 * counted from 1; B 0 for the last) in the main training loop, the
 * process with the most samples whose loop has steps counted.
 * -ENOENT (err says why) when there is none, or fewer steps than asked.
 */
struct steps_window {
	uint32_t pid, tid;
	uint64_t steps;          /* in that loop */
	uint64_t from_ns, to_ns; /* sample times: those within are kept */
};

int steps_window_find(struct phase_map *m, uint64_t first, uint64_t last,
		      struct steps_window *out, char *err, size_t errlen);

/* --time FUNC (call_times.c): each call's duration from the timeline. */
struct call_times {
	uint64_t calls, p50_ns, p90_ns, max_ns, total_ns;
};

/*
 * func is a function's name as the outputs show it ("Trainer.step",
 * "matmul") or a line, "FILE:LINE" ("train.py:42", the file's path or its
 * end). A call is a run of one thread's consecutive samples whose stacks
 * hold it: known to a sampling period at each end, and calls back to
 * back with no sample between them are one.
 */
int call_times_find(const struct profile *p, const char *func, struct call_times *out);

/*
 * The run's summary (summary.c): per process and thread busy, idle and
 * GIL time; the training loop's phases, steps and DataLoaders; top
 * functions; compute share; GPU busy time. Built once from a profile.
 */
struct summary;

int summary_build(struct phase_map *m, struct summary **out);
/* Its processes (most samples first), and the i-th one's training loop
 * thread where its steps were counted: false if none. */
size_t summary_process_count(const struct summary *s);
bool summary_loop_of(const struct summary *s, size_t i, uint32_t *pid, uint32_t *tid);
/* The same, or where its steps were not counted (too short for the rate,
 * no timeline) the thread that computes (forward, backward, optimizer),
 * not a DataLoader worker's: false if none. */
bool summary_loop_thread_of(const struct summary *s, size_t i, uint32_t *pid, uint32_t *tid);
/* For a terminal (summary_text.c): a line per process and its details;
 * gpu adds a line per GPU (record prints its own). */
int summary_text_write(const struct summary *s, bool gpu, FILE *out);
/* Findings (findings.c): the bottlenecks the summary shows (data-bound,
 * host syncs, logging, a slow start, workers restarted each epoch, GIL
 * contention), each with its cost, evidence and a hint; the costliest
 * max of them. max SIZE_MAX (report --findings: all) says so in a line
 * where there is none. */
int findings_write(const struct summary *s, size_t max, FILE *out);
/* report --ranks (summary_ranks.c): a distributed job's ranks side by
 * side, a line each; -ENOENT (nothing written) with fewer than two ranks
 * whose steps were counted. */
int summary_ranks_write(const struct summary *s, FILE *out);
/* summary.json (summary_json.c; docs/summary.schema.json). */
int summary_json_write(const struct summary *s, FILE *out);
void summary_free(struct summary *s);
/* diff (summary_diff.c): the main loops of two runs side by side, each
 * phase's time a step and the step times; nothing where either has no
 * loop. */
int summary_diff_write(const struct summary *older, const struct summary *newer, FILE *out);

#endif
