// SPDX-License-Identifier: MIT
/*
 * The lines printed at the end of a run (and by report of several
 * recordings): one per process, so that a job of many processes (ranks,
 * merged recordings) shows at once where its samples are.
 *
 *   PID 4242 (rank 0): 2,994 samples, busy 81%, idle 19%; hottest: forward (model.py:42) 23%
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/formats.h"

void process_label(const char *command, const char *rank, const char *host, char *buf,
		   size_t len)
{
	const char *arg0_end, *slash = NULL;

	/* The program by its name, as ps shows it: "python3 train.py". */
	if (command && *command) {
		arg0_end = command + strcspn(command, " ");
		for (const char *c = command; c < arg0_end; c++)
			if (*c == '/')
				slash = c;
		if (slash && slash + 1 < arg0_end)
			command = slash + 1;
	}
	if (rank && *rank)
		snprintf(buf, len, "rank %s%s%s", rank, host && *host ? " on " : "",
			 host && *host ? host : "");
	else
		snprintf(buf, len, "%.80s%s%s", command && *command ? command : "?",
			 host && *host ? " on " : "", host && *host ? host : "");
	for (char *c = buf; *c; c++)
		if (*c == '\n' || *c == '\t')
			*c = ' ';
}

const char *process_label_of(const struct profile *p, uint32_t pid)
{
	char key[32];

	snprintf(key, sizeof(key), "process.%" PRIu32, pid);
	return profile_meta(p, key);
}

struct proc_row {
	uint32_t pid;
	uint64_t samples, busy, idle; /* weights, ns */
};

struct leaf_row {
	uint32_t pid, frame;
	uint64_t weight;
};

struct tally {
	const struct profile *p;
	struct proc_row *procs;
	size_t nprocs, cap_procs;
	struct leaf_row *leaves;
	size_t nleaves, cap_leaves;
	int err;
};

static int tally_row(const struct profile_aggregate *row, void *ctx)
{
	struct tally *t = ctx;
	struct proc_row *pr = NULL;
	uint32_t frame;

	if (row->flags & SAMPLE_GPU)
		return 0;
	for (size_t i = 0; i < t->nprocs && !pr; i++)
		if (t->procs[i].pid == row->pid)
			pr = &t->procs[i];
	if (!pr) {
		if (ARRAY_RESERVE(t->procs, t->cap_procs, t->nprocs + 1, 8) < 0)
			return t->err = -ENOMEM;
		pr = &t->procs[t->nprocs++];
		*pr = (struct proc_row){ .pid = row->pid };
	}
	pr->samples += row->count;
	if (row->flags & SAMPLE_IDLE) {
		pr->idle += row->weight_ns;
		return 0;
	}
	pr->busy += row->weight_ns;
	if (!row->stack)
		return 0;
	frame = profile_stack(t->p, row->stack)->frame;
	for (size_t i = 0; i < t->nleaves; i++)
		if (t->leaves[i].pid == row->pid && t->leaves[i].frame == frame) {
			t->leaves[i].weight += row->weight_ns;
			return 0;
		}
	if (ARRAY_RESERVE(t->leaves, t->cap_leaves, t->nleaves + 1, 64) < 0)
		return t->err = -ENOMEM;
	t->leaves[t->nleaves++] = (struct leaf_row){ row->pid, frame, row->weight_ns };
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

#define SUMMARY_MAX 12

static int by_samples(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void frame_text(const struct profile *p, uint32_t id, char *buf, size_t len)
{
	const struct frame *f = profile_frame(p, id);
	const char *file = f->module ? profile_string(p, f->module) : NULL;
	const char *base = file ? strrchr(file, '/') : NULL;

	if (f->kind == FRAME_PYTHON && file && f->line)
		snprintf(buf, len, "%s (%s:%" PRIu32 ")", profile_string(p, f->name),
			 base ? base + 1 : file, f->line);
	else
		snprintf(buf, len, "%s", profile_string(p, f->name));
}

int summary_write(const struct profile *p, FILE *out)
{
	struct tally t = { .p = p };
	char label[160], leaf[256];
	uint64_t rest = 0;
	size_t shown;

	profile_for_each_aggregate(p, tally_row, &t);
	if (t.err) {
		free(t.procs);
		free(t.leaves);
		return t.err;
	}
	/* A job of many short processes (a shell's commands): the busiest
	 * SUMMARY_MAX, in PID order, and a line for the rest. */
	shown = t.nprocs;
	if (shown > SUMMARY_MAX) {
		qsort(t.procs, t.nprocs, sizeof(*t.procs), by_samples);
		shown = SUMMARY_MAX;
		for (size_t i = shown; i < t.nprocs; i++)
			rest += t.procs[i].samples;
	}
	qsort(t.procs, shown, sizeof(*t.procs), by_pid);
	for (size_t i = 0; i < shown; i++) {
		const struct proc_row *pr = &t.procs[i];
		const struct leaf_row *top = NULL;
		const char *l = process_label_of(p, pr->pid);
		uint64_t all = pr->busy + pr->idle;

		for (size_t k = 0; k < t.nleaves; k++)
			if (t.leaves[k].pid == pr->pid && (!top || t.leaves[k].weight > top->weight))
				top = &t.leaves[k];
		snprintf(label, sizeof(label), "%s%s%s", l ? " (" : "", l ? l : "", l ? ")" : "");
		if (top)
			frame_text(p, top->frame, leaf, sizeof(leaf));
		fprintf(out, "trainsample: PID %" PRIu32 "%s: %" PRIu64 " samples, busy %.0f%%, idle %.0f%%",
			pr->pid, label, pr->samples, all ? 100.0 * (double)pr->busy / (double)all : 0.0,
			all ? 100.0 * (double)pr->idle / (double)all : 0.0);
		if (top)
			fprintf(out, "; hottest: %s %.0f%%", leaf,
				100.0 * (double)top->weight / (double)(pr->busy ? pr->busy : 1));
		fputc('\n', out);
	}
	if (shown < t.nprocs)
		fprintf(out, "trainsample: and %zu more processes with %" PRIu64 " samples in all\n",
			t.nprocs - shown, rest);
	free(t.procs);
	free(t.leaves);
	return 0;
}
