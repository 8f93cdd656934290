/* SPDX-License-Identifier: MIT */
/* Shared between the files of analysis/ only. */
#ifndef TRAINSAMPLE_ANALYSIS_PHASE_IMPL_H
#define TRAINSAMPLE_ANALYSIS_PHASE_IMPL_H

#include "analysis/analysis.h"

struct profile_span;

struct phase_rule {
	enum phase phase;
	bool thread;          /* func is a thread name's pattern */
	const char *func;     /* shell pattern */
	const char *file;     /* shell pattern; NULL: any file */
	bool barrier;         /* frames further out do not take over what is
			       * inside it (phase unused): an optimizer's
			       * closure that runs the whole training step */
};

struct phase_rules {
	struct phase_rule *user; /* from files, checked first */
	size_t nuser, cap_user;
};

struct phase_map {
	const struct phase_rules *rules;
	const struct profile *p;
	uint8_t *stacks, *frames, *inner; /* caches: 0 not looked at, else phase + 1 */
	uint32_t nstacks, nframes, ninner;
	uint8_t *sync_lines; /* per frame: 0 not read, else enum wait_line + 1 */
	uint32_t nsync_lines;
	uint8_t *waits;      /* per stack: 0 not looked at, else enum stack_wait + 1 */
	uint32_t nwaits;
	struct comm_procs *comm; /* comm.c's, found at its first question */
	uint8_t *epoch_stacks; /* per stack: 0 not looked at, 1 no, 2 starts an epoch */
	uint32_t nepoch_stacks;
	uint32_t *path;
	uint32_t cap_path;
	struct eval_passes *evals; /* per loop thread, found on demand */
	size_t nevals, cap_evals;
};

/* The phase of the first rule a frame matches (file may be NULL), or of a
 * thread's name; -1 none, PHASE_BARRIER a barrier. */
#define PHASE_BARRIER (-2)
int phase_rules_frame(const struct phase_rules *r, const char *func, const char *file);
int phase_rules_thread(const struct phase_rules *r, const char *name);
/* The built-in rules, one by one (NULL past the last): their tests. */
const struct phase_rule *phase_rules_builtin(size_t i);

/* A stack's phase inside an evaluation (its eval frames passed over:
 * data, forward); the frame that calls the outermost frame of phase ph
 * (the loop's line that fetches a batch, that logs), or the line a sync
 * is known by; 0 none. */
enum phase phase_inside_eval(struct phase_map *m, uint32_t stack);
/* Where a stack is in a DataLoader's pass: starting it (a data frame
 * named *.__iter__: DataLoader.__iter__, accelerate's DataLoaderShard's),
 * its workers started then, or ending it (*._shutdown_workers: the
 * workers joined, up to seconds each), else neither. */
enum epoch_edge { EPOCH_NONE, EPOCH_START, EPOCH_STOP };
enum epoch_edge stack_epoch_edge(struct phase_map *m, uint32_t stack);
/* "No frame": frame ids start at 0, which is a real frame (often the
 * first sample's root, or an attach's loop line). */
#define FRAME_NONE UINT32_MAX
/* The frame whose line calls into the phase's code; FRAME_NONE if none. */
uint32_t phase_call_site(struct phase_map *m, uint32_t stack, enum phase ph);
/* The same call as a path: the stack node from the root down to that
 * frame (one line reached two ways is two); FRAME_NONE if none. */
uint32_t phase_call_node(struct phase_map *m, uint32_t stack, enum phase ph);

/* How a stack waits, with Python frames alone: not (running, or native
 * frames show what it waits for), blocked, or blocked under a line that
 * calls an async handle's `.wait(`. */
enum stack_wait { STACK_WAIT_NONE, STACK_WAIT_BLOCKED, STACK_WAIT_HANDLE };
enum stack_wait stack_wait_of(struct phase_map *m, uint32_t stack);

/* comm.c: a row's phase where a collective's wait shows no frame: DDP's
 * gradient allreduce at the end of backward, a handle's wait; ph else. */
struct comm_procs;
enum phase comm_hidden_wait(struct phase_map *m, const struct profile_aggregate *row,
			    enum phase ph);
void comm_procs_free(struct comm_procs *c);

/* eval_passes.c: a training loop thread's evaluation passes, found from
 * its timeline (a validation loop of plain PyTorch has no frame of its
 * own to match): each pass's time, in time order. */
struct eval_pass {
	uint64_t start_ns, end_ns;
};

struct eval_passes {
	uint32_t pid, tid;
	struct eval_pass *v;
	size_t n, cap;
};

int eval_passes_find(struct phase_map *m, uint32_t pid, uint32_t tid, struct eval_passes *out);
/* Whether a span from start_ns to end_ns lies in one of the passes. */
bool eval_passes_hold(const struct eval_passes *e, uint64_t start_ns, uint64_t end_ns);
/* Finds the thread's passes once (phases.c keeps them in the map), so
 * that phase_of_span sees them. */
int phase_map_find_evals(struct phase_map *m, uint32_t pid, uint32_t tid);
/* The passes found in a thread: 0 before phase_map_find_evals. */
size_t eval_pass_count(const struct phase_map *m, uint32_t pid, uint32_t tid);

/* source_lines.c: a Python frame's line of source; false if unreadable. */
bool source_line_of(const struct profile *p, uint32_t frame, char *buf, size_t len);
/* The closest line before a frame's, in its file, that makes an iterator
 * called name ("it = iter(train_loader)"): how `next(it)` is named by its
 * loader where no object told it. */
bool source_iterator_made(const struct profile *p, uint32_t frame, const char *name, char *buf,
			  size_t len);

/* phases.c: a per-id byte cache grown (zero-filled) to hold index i,
 * false when out of memory; sorting durations. */
bool byte_cache_fit(uint8_t **cache, uint32_t *n, uint32_t i);
void u64_sort(uint64_t *v, size_t n);

#endif
