// SPDX-License-Identifier: MIT
/*
 * --native: one stack per sample, native frames with each evaluator frame
 * replaced by the Python frames it ran. The Python frames are read at the
 * same moment as the stack copy (while the thread is stopped, or blocked)
 * and merged after it runs again.
 *
 * Here the sampler's half: reading and naming the Python frames, telling
 * what each native frame is (the evaluator, the interpreter's module);
 * where each frame goes is merge.c's, a pure function of those arrays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "symbolize/symbolize.h"
#include "sampler/python/pysample.h"
#include "sampler/builder.h"

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

/* The evaluator (hot or .cold part) and the wrappers that only call it. */
static enum merge_role role_of(const struct profile *p, uint32_t frame)
{
	const char *name = profile_string(p, profile_frame(p, frame)->name);

	if (!strncmp(name, "_PyEval_EvalFrameDefault", 24))
		return MERGE_ROLE_EVAL;
	if (!strcmp(name, "PyEval_EvalFrameEx") || !strcmp(name, "_PyEval_EvalFrame"))
		return MERGE_ROLE_HIDDEN;
	return MERGE_ROLE_NATIVE;
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
static void mark_interpreter(struct sym_process *sym, const uint64_t *pcs, int n,
			     uint8_t *roles)
{
	struct module_id ids[MAX_INTERPRETERS];
	int nids = 0;

	for (int i = 0; i < n && nids < MAX_INTERPRETERS; i++) {
		const struct sym_mapping *map;
		bool known = false;

		if (roles[i] != MERGE_ROLE_EVAL || !(map = sym_process_find(sym, pcs[i])) ||
		    !map->inode)
			continue;
		for (int k = 0; k < nids; k++)
			known |= ids[k].inode == map->inode && ids[k].major == map->dev_major &&
				 ids[k].minor == map->dev_minor;
		if (!known)
			ids[nids++] = (struct module_id){ map->inode, map->dev_major, map->dev_minor };
	}
	for (int i = 0; i < n && nids; i++) {
		const struct sym_mapping *map;

		if (roles[i] != MERGE_ROLE_NATIVE || !(map = sym_process_find(sym, pcs[i])))
			continue;
		for (int k = 0; k < nids; k++)
			if (ids[k].inode == map->inode && ids[k].major == map->dev_major &&
			    ids[k].minor == map->dev_minor)
				roles[i] = MERGE_ROLE_INTERPRETER;
		if (map->inode && native_is_python_executable(map->path))
			roles[i] = MERGE_ROLE_INTERPRETER;
	}
}

/* The builder's name_python: a copy's Python frames not named at its
 * tick (dump --locals), outermost first as its records are written. */
int pysample_name_frames(void *ctx, const struct stack_sample *c, uint32_t *frames)
{
	struct sampler *s = ctx;

	for (int j = c->npy - 1; j >= 0; j--) {
		int ret = pysample_frame(s, c->tid, &c->py[j], j == c->npy - 1, &frames[j]);

		if (ret == -ENOENT)
			frames[j] = MERGE_NO_FRAME;
		else if (ret < 0)
			return ret;
	}
	return 0;
}

/* The copy's Python frames as profile frames, innermost first
 * (MERGE_NO_FRAME: not a function's): named at the tick, or now. */
static int python_frames(struct sample_builder *b, const struct stack_sample *c,
			 uint32_t *frames)
{
	if (!c->py_named)
		return b->name_python ? b->name_python(b->name_ctx, c, frames) : -EINVAL;
	for (int j = 0; j < c->npy; j++)
		frames[j] = c->py_frames[j];
	return 0;
}

static int intern_merged(struct profile *p, const struct merge_output *m, uint32_t *stack)
{
	uint32_t id = 0;

	for (int i = 0; i < m->n; i++) {
		int ret = profile_intern_stack(p, id, m->frames[i], &id);

		if (ret < 0)
			return ret;
	}
	*stack = id;
	return 0;
}

/* Looks up what each native frame is, names the Python frames, and lets
 * merge_frames (merge.c) place them; interns the result. */
int pysample_merge(struct sample_builder *b, const struct stack_sample *c, const uint64_t *pcs,
		   int n, const char *marker, uint32_t *stack, bool *python)
{
	uint32_t *native = calloc((size_t)n + 1, sizeof(*native));
	uint8_t *roles = calloc((size_t)n + 1, 1);
	uint32_t *py = calloc((size_t)c->npy + 1, sizeof(*py));
	/* Every native frame, every Python one, a marker and [unmerged]. */
	struct merge_output out = {
		.frames = calloc((size_t)(n + c->npy + 2), sizeof(*out.frames)),
		.kinds = calloc((size_t)(n + c->npy + 2), 1),
	};
	struct merge_input in = {
		.native = native, .roles = roles, .n = n,
		.python = py, .raw = c->py, .npy = c->npy,
		.end_marker = MERGE_NO_FRAME, .native_all = b->native_all,
	};
	int ret = -ENOMEM;

	if (!native || !roles || !py || !out.frames || !out.kinds)
		goto out;
	for (int i = 0; i < n; i++) {
		ret = builder_frame_for_addr(b, pcs[i], &native[i]);
		if (ret < 0)
			goto out;
		roles[i] = (uint8_t)role_of(b->profile, native[i]);
	}
	if (!b->native_all)
		mark_interpreter(b->sym, pcs, n, roles);
	if (c->py_end != PY_WALK_COMPLETE)
		builder_error(b, SAMPLER_ERR_PYTHON);
	ret = marker ? builder_marker_frame(b, marker, &in.end_marker) : 0;
	if (!ret)
		ret = python_frames(b, c, py);
	if (ret < 0)
		goto out;
	merge_frames(&in, &out);
	if (out.unmerged) {
		builder_error(b, SAMPLER_ERR_MERGE);
		for (int i = 0; i < out.n && !ret; i++)
			if (out.frames[i] == MERGE_UNMERGED)
				ret = builder_marker_frame(b, "[unmerged]", &out.frames[i]);
	}
	if (!ret)
		ret = intern_merged(b->profile, &out, stack);
	if (!ret)
		*python = out.python;
out:
	free(native);
	free(roles);
	free(py);
	free(out.frames);
	free(out.kinds);
	return ret;
}
