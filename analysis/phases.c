// SPDX-License-Identifier: MIT
/*
 * Each row's phase, from its thread's name or its frames, and each
 * process's split of time between phases. A stack's phase is found once
 * (a frame's match is cached too): rows share stacks, stacks share frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/phase_impl.h"
#include "common/common.h"
#include "formats/formats.h"

static const char *const names[PHASE_KINDS] = {
	[PHASE_OTHER] = "other",         [PHASE_DATA] = "data",
	[PHASE_FORWARD] = "forward",     [PHASE_BACKWARD] = "backward",
	[PHASE_OPTIMIZER] = "optimizer", [PHASE_SYNC] = "sync",
	[PHASE_CHECKPOINT] = "checkpoint", [PHASE_EVAL] = "eval",
	[PHASE_LOGGING] = "logging",     [PHASE_COMM] = "comm",
};

const char *phase_name(enum phase ph)
{
	return ph < PHASE_KINDS ? names[ph] : "?";
}

const char *const *phase_names(void)
{
	return names;
}

int phase_by_name(const char *name, enum phase *out)
{
	for (int i = 0; i < PHASE_KINDS; i++)
		if (!strcmp(name, names[i])) {
			*out = (enum phase)i;
			return 0;
		}
	return -EINVAL;
}

/* Cache entries: 0 not looked at yet, else the phase + 1 (or NONE, or
 * BARRIER). */
#define NONE 0xff
#define BARRIER 0xfe


int phase_map_new(const struct phase_rules *r, const struct profile *p, struct phase_map **out)
{
	struct phase_map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->rules = r;
	m->p = p;
	*out = m;
	return 0;
}

void phase_map_free(struct phase_map *m)
{
	if (!m)
		return;
	free(m->stacks);
	free(m->frames);
	free(m->inner);
	free(m->sync_lines);
	free(m->waits);
	comm_procs_free(m->comm);
	free(m->epoch_stacks);
	free(m->path);
	for (size_t i = 0; i < m->nevals; i++)
		free(m->evals[i].v);
	free(m->evals);
	free(m);
}

bool byte_cache_fit(uint8_t **cache, uint32_t *n, uint32_t i)
{
	uint32_t want = *n ? *n : 256;
	uint8_t *grown;

	if (i < *n)
		return true;
	while (want <= i)
		want *= 2;
	grown = realloc(*cache, want);
	if (!grown)
		return false;
	memset(grown + *n, 0, want - *n);
	*cache = grown;
	*n = want;
	return true;
}

static int frame_phase(struct phase_map *m, uint32_t id)
{
	const struct frame *f;
	int ph;

	if (byte_cache_fit(&m->frames, &m->nframes, id) && m->frames[id])
		return m->frames[id] == NONE ? -1 : m->frames[id] == BARRIER ? PHASE_BARRIER :
		       m->frames[id] - 1;
	f = profile_frame(m->p, id);
	ph = phase_rules_frame(m->rules, profile_string(m->p, f->name),
			       f->module ? profile_string(m->p, f->module) : NULL);
	if (id < m->nframes)
		m->frames[id] = ph == PHASE_BARRIER ? BARRIER : ph < 0 ? NONE : (uint8_t)(ph + 1);
	return ph;
}

/* Whether a match further out takes over an inner one: a module called
 * under backward (recomputation), an optimizer's closure or an evaluation
 * belongs to them; an evaluation's data and waits are the evaluation's. */
static bool contains(int outer, int inner)
{
	switch (outer) {
	case PHASE_BACKWARD:
	case PHASE_OPTIMIZER:
		return inner == PHASE_FORWARD;
	case PHASE_EVAL:
		return inner == PHASE_FORWARD || inner == PHASE_DATA || inner == PHASE_SYNC ||
		       inner == PHASE_COMM;
	default:
		return false;
	}
}

/*
 * Without native frames, a wait shows as a thread blocked in the kernel
 * (an idle sample) under the Python line that asked for it: for the GPU,
 * `loss.item()`, `.cpu()`, `.tolist()`, `.numpy()`,
 * `torch.cuda.synchronize()`; for a collective, an async handle's
 * `work.wait()` (a C++ method: no frame of its own). Read from the
 * program's source.
 */
enum wait_line { LINE_NONE, LINE_SYNC, LINE_WAIT };

static enum wait_line wait_line(struct phase_map *m, uint32_t frame)
{
	static const char *const calls[] = { ".item(", ".cpu(", ".tolist(", ".numpy(",
					     "synchronize(" };
	enum wait_line kind = LINE_NONE;
	char line[512];

	/* Cached as the kind + 1; 0 not read. */
	if (byte_cache_fit(&m->sync_lines, &m->nsync_lines, frame) && m->sync_lines[frame])
		return (enum wait_line)(m->sync_lines[frame] - 1);
	if (source_line_of(m->p, frame, line, sizeof(line))) {
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]) && !kind; i++)
			if (strstr(line, calls[i]))
				kind = LINE_SYNC;
		if (!kind && strstr(line, ".wait("))
			kind = LINE_WAIT;
	}
	if (frame < m->nsync_lines)
		m->sync_lines[frame] = (uint8_t)(kind + 1);
	return kind;
}

static bool sync_line(struct phase_map *m, uint32_t frame)
{
	return wait_line(m, frame) == LINE_SYNC;
}

/* The innermost Python frame of a blocked stack (its leaf an idle frame);
 * -1 for a running one. */
static int blocked_python_frame(struct phase_map *m, int depth)
{
	if (depth < 1 || profile_frame(m->p, m->path[depth - 1])->kind != FRAME_IDLE)
		return -1;
	for (int i = depth - 2; i >= 0; i--)
		if (profile_frame(m->p, m->path[i])->kind == FRAME_PYTHON)
			return i;
	return -1;
}

enum stack_wait stack_wait_of(struct phase_map *m, uint32_t stack)
{
	enum stack_wait w = STACK_WAIT_NONE;
	int depth, waiting;

	if (byte_cache_fit(&m->waits, &m->nwaits, stack) && m->waits[stack])
		return (enum stack_wait)(m->waits[stack] - 1);
	depth = profile_stack_frames(m->p, stack, &m->path, &m->cap_path);
	waiting = blocked_python_frame(m, depth);
	if (waiting >= 0) {
		w = wait_line(m, m->path[waiting]) == LINE_WAIT ? STACK_WAIT_HANDLE :
		    STACK_WAIT_BLOCKED;
		for (int i = 0; i < depth && w; i++)
			if (profile_frame(m->p, m->path[i])->kind == FRAME_NATIVE)
				w = STACK_WAIT_NONE;
	}
	if (stack < m->nwaits)
		m->waits[stack] = (uint8_t)(w + 1);
	return w;
}

/* inside_eval: what an evaluation's stack does inside it (its data or
 * forward), its eval frames passed over. */
static enum phase stack_phase(struct phase_map *m, uint32_t stack, bool inside_eval)
{
	int depth = profile_stack_frames(m->p, stack, &m->path, &m->cap_path), ph = -1;
	int waiting = blocked_python_frame(m, depth);

	/* Innermost first: path[depth - 1] is the leaf. */
	for (int i = depth - 1; i >= 0; i--) {
		int f = frame_phase(m, m->path[i]);

		if (i == waiting && f == -1 && sync_line(m, m->path[i]))
			f = PHASE_SYNC;
		/* What ran inside a barrier is settled there, even as nothing. */
		if (f == PHASE_BARRIER)
			break;
		if (f < 0 || (inside_eval && f == PHASE_EVAL))
			continue;
		if (ph < 0 || contains(f, ph))
			ph = f;
	}
	return ph < 0 ? PHASE_OTHER : (enum phase)ph;
}

enum phase phase_inside_eval(struct phase_map *m, uint32_t stack)
{
	if (byte_cache_fit(&m->inner, &m->ninner, stack) && m->inner[stack])
		return (enum phase)(m->inner[stack] - 1);
	enum phase ph = stack_phase(m, stack, true);
	if (stack < m->ninner)
		m->inner[stack] = (uint8_t)(ph + 1);
	return ph;
}

static bool name_ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	/* ".__iter__" is also Python 3.10's unqualified "__iter__". */
	return (n > k && !strcmp(name + n - k, suffix)) || (suffix[0] == '.' && !strcmp(name, suffix + 1));
}

enum epoch_edge stack_epoch_edge(struct phase_map *m, uint32_t stack)
{
	enum epoch_edge edge = EPOCH_NONE;
	int depth;

	/* Cached as the edge + 1; 0 not looked at. */
	if (byte_cache_fit(&m->epoch_stacks, &m->nepoch_stacks, stack) && m->epoch_stacks[stack])
		return (enum epoch_edge)(m->epoch_stacks[stack] - 1);
	depth = profile_stack_frames(m->p, stack, &m->path, &m->cap_path);
	for (int i = 0; i < depth && edge == EPOCH_NONE; i++) {
		const char *name = profile_string(m->p, profile_frame(m->p, m->path[i])->name);

		if (frame_phase(m, m->path[i]) != PHASE_DATA)
			continue;
		if (name_ends(name, ".__iter__"))
			edge = EPOCH_START;
		else if (name_ends(name, "._shutdown_workers"))
			edge = EPOCH_STOP;
	}
	if (stack < m->nepoch_stacks)
		m->epoch_stacks[stack] = (uint8_t)(edge + 1);
	return edge;
}

/* The index in m->path of the frame that calls into the phase's code
 * (outermost first), or -1; *depth the stack's depth. */
static int call_index(struct phase_map *m, uint32_t stack, enum phase ph, int *depth)
{
	*depth = profile_stack_frames(m->p, stack, &m->path, &m->cap_path);
	/* Outermost first: the frame that calls into the library; for
	 * logging, past the logging module's own callers (Logger.info for
	 * _log): a loader or model may live in the program's own file. */
	for (int i = 0; i < *depth; i++) {
		uint32_t file;

		if (frame_phase(m, m->path[i]) != (int)ph)
			continue;
		file = profile_frame(m->p, m->path[i])->module;
		while (ph == PHASE_LOGGING && i > 0 && file &&
		       profile_frame(m->p, m->path[i - 1])->module == file)
			i--;
		return i - 1;
	}
	return -1;
}

uint32_t phase_call_site(struct phase_map *m, uint32_t stack, enum phase ph)
{
	int depth, i = call_index(m, stack, ph, &depth), waiting;

	if (i >= 0)
		return m->path[i];
	for (int k = 0; k < depth; k++)
		if (frame_phase(m, m->path[k]) == (int)ph)
			return FRAME_NONE; /* the outermost frame of the stack */
	/* A sync known by its line: that line. */
	waiting = ph == PHASE_SYNC ? blocked_python_frame(m, depth) : -1;
	return waiting >= 0 && sync_line(m, m->path[waiting]) ? m->path[waiting] : FRAME_NONE;
}

uint32_t phase_call_node(struct phase_map *m, uint32_t stack, enum phase ph)
{
	int depth, i = call_index(m, stack, ph, &depth);
	uint32_t node = stack;

	if (i < 0)
		return FRAME_NONE;
	/* The caller is frame i: its stack has i + 1 frames. */
	while (node && profile_stack(m->p, node)->depth > (uint32_t)i + 1)
		node = profile_stack(m->p, node)->parent;
	return node;
}

enum phase phase_of_row(struct phase_map *m, const struct profile_aggregate *row)
{
	int th = phase_rules_thread(m->rules, profile_thread_name(m->p, row->pid, row->tid));
	enum phase ph;

	if (th >= 0)
		return (enum phase)th;
	if (byte_cache_fit(&m->stacks, &m->nstacks, row->stack) && m->stacks[row->stack])
		return comm_hidden_wait(m, row, (enum phase)(m->stacks[row->stack] - 1));
	ph = stack_phase(m, row->stack, false);
	if (row->stack < m->nstacks)
		m->stacks[row->stack] = (uint8_t)(ph + 1);
	return comm_hidden_wait(m, row, ph);
}

int phase_map_find_evals(struct phase_map *m, uint32_t pid, uint32_t tid)
{
	int ret;

	for (size_t i = 0; i < m->nevals; i++)
		if (m->evals[i].pid == pid && m->evals[i].tid == tid)
			return 0;
	if (ARRAY_RESERVE(m->evals, m->cap_evals, m->nevals + 1, 4) < 0)
		return -ENOMEM;
	ret = eval_passes_find(m, pid, tid, &m->evals[m->nevals]);
	if (ret == 0)
		m->nevals++;
	return ret;
}

size_t eval_pass_count(const struct phase_map *m, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < m->nevals; i++)
		if (m->evals[i].pid == pid && m->evals[i].tid == tid)
			return m->evals[i].n;
	return 0;
}

enum phase phase_of_span(struct phase_map *m, const struct profile_span *s)
{
	struct profile_aggregate row = { .pid = s->pid, .tid = s->tid, .stack = s->stack,
					 .flags = s->flags, .count = s->count };
	enum phase ph = phase_of_row(m, &row);

	/* A checkpoint or a log call after a validation is still that. */
	if (ph == PHASE_CHECKPOINT || ph == PHASE_LOGGING)
		return ph;
	for (size_t i = 0; ph != PHASE_EVAL && i < m->nevals; i++)
		if (m->evals[i].pid == s->pid && m->evals[i].tid == s->tid)
			return eval_passes_hold(&m->evals[i], s->start_ns, s->end_ns) ? PHASE_EVAL : ph;
	return ph;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void u64_sort(uint64_t *v, size_t n)
{
	array_sort(v, n, sizeof(*v), cmp_u64);
}
