// SPDX-License-Identifier: MIT
/*
 * --native: one stack per sample, native frames with each evaluator frame
 * replaced by the Python frames it ran. The Python frames are read at the
 * same moment as the stack copy (while the thread is stopped, or blocked)
 * and merged after it runs again.
 *
 * Up to 3.10 every Python frame is one call of the evaluator. From 3.11
 * one call runs several frames, down to the first one it entered (marked
 * is_entry in 3.11, sitting on a shim frame from 3.12): the Python frames
 * split into groups at those marks, innermost group to innermost
 * evaluator frame. When the counts differ the halves are kept side by
 * side under an [unmerged] marker and an error is counted, except where
 * the native unwind stopped short: its missing outer evaluator frames are
 * the outer groups, which then go at the root.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "symbolize/symbolize.h"
#include "sampler/python/pysample.h"

#define MAX_GROUPS 1024

void pysample_threads_refresh(struct sampler *s)
{
	struct pysample *py = s->py;
	int n;

	if (!pysample_ready(s) || !s->opt.native)
		return;
	n = py_threads_read(&py->target, py->threads, PY_MAX_THREADS);
	py->nthreads = n > 0 ? n : 0;
	if (n > 0) {
		pysample_map_tids(s, n);
		pysample_names_refresh(s, n);
	}
}

void pysample_copy_frames(struct sampler *s, pid_t tid, struct stack_sample *c)
{
	struct pysample *py = s->py;
	const struct py_thread *pt;
	enum py_walk_end end;

	c->has_py = c->py_named = false;
	if (!pysample_ready(s) || !s->opt.native)
		return;
	pt = pysample_thread_of(py, py->nthreads, tid);
	if (!pt)
		return;
	if (!c->py && !(c->py = malloc(PY_NATIVE_DEPTH * sizeof(*c->py))))
		return;
	c->npy = py_frames_read(&py->target, pt->tstate, &py->scratch, c->py, PY_NATIVE_DEPTH,
				&end);
	if (s->opt.locals)
		pysample_locals_read(s, c->py, c->npy);
	c->py_end = (uint8_t)end;
	c->gil = pt->gil;
	c->has_py = true;
}

/*
 * Named in the tick that read them, as soon as the threads run again: by
 * the time a copy is unwound (seconds later when unwinding is behind) a
 * code object that was freed may hold another function (module code at
 * start-up: a callback's stack once showed `compare` where site.py's
 * <module> had been). dump --locals keeps its order of records: named at
 * the merge.
 */
void pysample_name_copies(struct sampler *s)
{
	struct copy_queue *q = &s->queue;

	if (!pysample_ready(s) || !s->opt.native || s->opt.locals)
		return;
	for (size_t k = 0; k < q->count; k++) {
		struct stack_sample *c = &q->slots[(q->head + k) % q->limit];

		if (!c->has_py || c->py_named || c->time_ns != s->tick_now)
			continue;
		if (!c->py_frames && !(c->py_frames = malloc(PY_NATIVE_DEPTH * sizeof(*c->py_frames))))
			return;
		py_code_prefetch(&s->py->target, s->py->codes, c->py, c->npy);
		for (int j = 0; j < c->npy; j++) {
			int ret = pysample_frame(s, c->tid, &c->py[j], j == c->npy - 1, &c->py_frames[j]);

			if (ret == -ENOENT) {
				c->py_frames[j] = UINT32_MAX;
			} else if (ret < 0) {
				py_code_prefetch_drop(s->py->codes);
				return;
			}
		}
		py_code_prefetch_drop(s->py->codes);
		c->py_named = true;
		/* Its loader, read right after the tick (the iterator's
		 * identity, not a stack that could have moved, decides). */
		if (s->py->loader_at) {
			struct thread *t = thread_find(s, c->tid);

			if (t)
				pysample_loader_note(s, t, c->py, c->npy, c->time_ns);
		}
		s->py->loader_at = NULL;
	}
}

/* ROLE_INTERPRETER: another frame of the evaluator's module (unless --native-all). */
enum native_role { ROLE_NATIVE, ROLE_EVAL, ROLE_HIDDEN, ROLE_INTERPRETER };

/* The evaluator (hot or .cold part) and the wrappers that only call it. */
static enum native_role role_of(struct sampler *s, uint32_t frame)
{
	const char *name = profile_string(s->profile, profile_frame(s->profile, frame)->name);

	if (!strncmp(name, "_PyEval_EvalFrameDefault", 24))
		return ROLE_EVAL;
	if (!strcmp(name, "PyEval_EvalFrameEx") || !strcmp(name, "_PyEval_EvalFrame"))
		return ROLE_HIDDEN;
	return ROLE_NATIVE;
}

/* The merged stack, outermost first, before it is interned. */
struct merge {
	struct sampler *s;
	const struct stack_sample *c;
	uint32_t *frames;
	uint8_t *kinds;     /* enum merged_kind */
	int n;
	bool python;
	int gstart[MAX_GROUPS + 1]; /* group k: py[gstart[k] .. gstart[k+1]) */
	int ngroups;
};

static void add(struct merge *m, uint32_t frame, enum merged_kind kind)
{
	m->frames[m->n] = frame;
	m->kinds[m->n++] = (uint8_t)kind;
}

/* Python frames [from, to) of the copy, outermost first. */
static int add_python(struct merge *m, int from, int to)
{
	for (int j = to - 1; j >= from; j--) {
		uint32_t frame = m->c->py_named ? m->c->py_frames[j] : UINT32_MAX;
		int ret = m->c->py_named ? (frame != UINT32_MAX ? 0 : -ENOENT) :
			  pysample_frame(m->s, m->c->tid, &m->c->py[j], j == m->c->npy - 1, &frame);

		if (ret == -ENOENT)
			continue;
		if (ret < 0)
			return ret;
		add(m, frame, MERGED_PYTHON);
		m->python = true;
	}
	return 0;
}

static int add_marker(struct merge *m, const char *name)
{
	uint32_t frame;
	int ret = intern_marker_frame(m->s, name, &frame);

	if (!ret)
		add(m, frame, MERGED_NATIVE);
	return ret;
}

static void split_groups(struct merge *m)
{
	const struct stack_sample *c = m->c;

	m->ngroups = 0;
	for (int j = 0; j < c->npy && m->ngroups < MAX_GROUPS; j++)
		if (j == 0 || c->py[j - 1].entry)
			m->gstart[m->ngroups++] = j;
	m->gstart[m->ngroups] = c->npy;
}

struct module_id {
	uint64_t inode;
	uint32_t major, minor;
};

#define MAX_INTERPRETERS 4

/*
 * The interpreter is whichever module holds the evaluator frames (the
 * python executable or libpython*.so): its other frames in the stack are
 * the interpreter's own, and so are those of a python executable whose
 * libpython holds the evaluator (main, _start). Told by file, not by
 * function name, so a stripped python3's nameless frames count too; a
 * program that embeds libpython keeps its own frames.
 */
static void mark_interpreter(struct sampler *s, const uint64_t *pcs, int n, uint8_t *roles)
{
	struct module_id ids[MAX_INTERPRETERS];
	int nids = 0;

	for (int i = 0; i < n && nids < MAX_INTERPRETERS; i++) {
		const struct sym_mapping *map;
		bool known = false;

		if (roles[i] != ROLE_EVAL || !(map = sym_process_find(s->sym, pcs[i])) || !map->inode)
			continue;
		for (int k = 0; k < nids; k++)
			known |= ids[k].inode == map->inode && ids[k].major == map->dev_major &&
				 ids[k].minor == map->dev_minor;
		if (!known)
			ids[nids++] = (struct module_id){ map->inode, map->dev_major, map->dev_minor };
	}
	for (int i = 0; i < n && nids; i++) {
		const struct sym_mapping *map;

		if (roles[i] != ROLE_NATIVE || !(map = sym_process_find(s->sym, pcs[i])))
			continue;
		for (int k = 0; k < nids; k++)
			if (ids[k].inode == map->inode && ids[k].major == map->dev_major &&
			    ids[k].minor == map->dev_minor)
				roles[i] = ROLE_INTERPRETER;
		if (map->inode && native_is_python_executable(map->path))
			roles[i] = ROLE_INTERPRETER;
	}
}

static int intern_merged(struct sampler *s, const struct merge *m, uint32_t *stack)
{
	uint32_t id = 0;

	for (int i = 0; i < m->n; i++) {
		int ret = profile_intern_stack(s->profile, id, m->frames[i], &id);

		if (ret < 0)
			return ret;
	}
	*stack = id;
	return 0;
}

int pysample_merge(struct sampler *s, const struct stack_sample *c, const uint64_t *pcs, int n,
		 const char *marker, uint32_t *stack, bool *python)
{
	struct merge *m = calloc(1, sizeof(*m));
	uint32_t *frames = calloc((size_t)n + 1, sizeof(*frames));
	uint8_t *roles = calloc((size_t)n + 1, 1);
	int nev = 0, k, ret = -ENOMEM;
	bool merged = true;

	if (!m || !frames || !roles)
		goto out;
	m->s = s;
	m->c = c;
	/* Every native frame, every Python one, a marker and [unmerged]. */
	m->frames = calloc((size_t)(n + c->npy + 2), sizeof(*m->frames));
	m->kinds = calloc((size_t)(n + c->npy + 2), 1);
	if (!m->frames || !m->kinds)
		goto out;
	for (int i = 0; i < n; i++) {
		ret = stacks_frame_for_addr(s, pcs[i], &frames[i]);
		if (ret < 0)
			goto out;
		roles[i] = (uint8_t)role_of(s, frames[i]);
		nev += roles[i] == ROLE_EVAL;
	}
	if (!s->opt.native_all)
		mark_interpreter(s, pcs, n, roles);
	split_groups(m);
	if (c->py_end != PY_WALK_COMPLETE)
		stats_error(s, SAMPLER_ERR_PYTHON);
	ret = marker ? add_marker(m, marker) : 0;
	if (ret < 0)
		goto out;
	if (nev != m->ngroups && !(marker && nev < m->ngroups)) {
		/* Both halves as they are: native, then Python. */
		stats_error(s, SAMPLER_ERR_MERGE);
		merged = false;
		for (int i = n - 1; i >= 0; i--)
			add(m, frames[i], MERGED_NATIVE);
		ret = add_marker(m, "[unmerged]");
		if (!ret)
			ret = add_python(m, 0, c->npy);
		goto out;
	}
	/* The groups beyond a short native unwind's reach go first. */
	for (k = m->ngroups - 1; k >= nev && !ret; k--)
		ret = add_python(m, m->gstart[k], m->gstart[k + 1]);
	for (int i = n - 1; i >= 0 && !ret; i--) {
		if (roles[i] == ROLE_EVAL) {
			ret = add_python(m, m->gstart[k], m->gstart[k + 1]);
			k--;
		} else if (roles[i] == ROLE_NATIVE) {
			add(m, frames[i], MERGED_NATIVE);
		} else if (roles[i] == ROLE_INTERPRETER) {
			add(m, frames[i], MERGED_INTERPRETER);
		}
	}
out:
	if (!ret && merged && !s->opt.native_all)
		m->n = native_hide_interpreter(m->frames, m->kinds, m->n);
	if (!ret)
		ret = intern_merged(s, m, stack);
	if (!ret)
		*python = m->python;
	/* Unwound later, off the thread: its loader is not read (the line
	 * tells the summary's loaders apart). */
	if (s->py)
		s->py->loader_at = NULL;
	if (m) {
		free(m->frames);
		free(m->kinds);
	}
	free(m);
	free(frames);
	free(roles);
	return ret;
}
