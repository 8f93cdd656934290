/* SPDX-License-Identifier: MIT */
/*
 * findings*.c's shared parts: the list a rule adds to, and the helpers
 * that word evidence. Inside analysis/ only.
 */
#ifndef TRAINSAMPLE_ANALYSIS_FINDINGS_IMPL_H
#define TRAINSAMPLE_ANALYSIS_FINDINGS_IMPL_H

#include "analysis/analysis.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct summary;
struct summary_process;

#define FINDINGS_MAX 16
#define EVIDENCE_MAX 6

struct finding {
	const char *id;
	double cost;   /* share of the step (or of the run) it costs */
	uint32_t pid;
	char title[256];
	char evidence[EVIDENCE_MAX][256];
	int nevidence;
	char hint[400];
};

struct finding_list {
	struct finding v[FINDINGS_MAX];
	size_t n;
};

/* A finding with its cost and hint (copied; NULL: none yet, for
 * finding_hint to build); NULL when the list is full. Its title is the
 * caller's to write. */
struct finding *finding_add(struct finding_list *l, const char *id, double cost, uint32_t pid,
			    const char *hint);
/* One more part of the hint, after a "; ". */
void __attribute__((format(printf, 2, 3))) finding_hint(struct finding *f, const char *fmt, ...);
/* Whether a finding of this id is in the list already. */
bool finding_listed(const struct finding_list *l, const char *id);
/* One line of evidence; none past EVIDENCE_MAX, none on a NULL finding. */
void __attribute__((format(printf, 2, 3))) finding_evidence(struct finding *f, const char *fmt,
							     ...);
/* "function (file.py:LINE)", as the pictures name a frame. */
void finding_line_text(const struct profile *p, uint32_t frame, char *buf, size_t len);
/* The innermost Python frame of a stack, else its innermost frame. */
uint32_t finding_python_leaf(const struct summary *s, uint32_t stack);

/* The heaviest of a process's sites of a kind (enum phase, SITE_*) not
 * yet used, marking it used; -1 none. used has 64 entries. */
int finding_heaviest_site(const struct summary_process *sp, int kind, bool *used);

/* findings_cpu.c */
/* findings.c: a process's steps and their figures, for the rules. */
bool finding_phase_of_loop(const struct summary_process *sp, enum phase ph, uint64_t *ns,
			   uint64_t *base);
void finding_cost_text(const struct summary_process *sp, uint64_t ns, uint64_t base, char *buf,
		       size_t len);
/* findings_data.c: data-bound and worker-restart. */
void findings_data_bound(const struct summary *s, const struct summary_process *sp,
			 struct finding_list *l);
void findings_worker_restarts(const struct summary *s, const struct summary_process *sp,
			      struct finding_list *l);
void findings_gil_contention(const struct summary *s, const struct summary_process *sp,
			     struct finding_list *l);
void findings_cpu_oversubscribed(const struct summary *s, struct finding_list *l);
void findings_cpu_copies(const struct summary *s, const struct summary_process *sp,
			 struct finding_list *l);

/* findings.c: whether a process's loop had its steps counted. */
bool finding_steps_counted(const struct summary_process *sp);
/* summary_ranks.c: the rank that holds the others back. */
void findings_straggler(const struct summary *s, struct finding_list *l);
/* ranks_stuck.c: the rank a hung job waits for. */
void findings_ranks_stuck(const struct summary *s, struct finding_list *l);

/* findings_gpu.c */
void findings_gpu_underused(const struct summary *s, struct finding_list *l);
void findings_host_copies(const struct summary *s, struct finding_list *l);

#endif
