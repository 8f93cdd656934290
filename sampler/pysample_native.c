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
#include "sampler/internal.h"

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

	c->has_py = false;
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

enum native_role { ROLE_NATIVE, ROLE_EVAL, ROLE_HIDDEN };

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

struct merge {
	struct sampler *s;
	const struct stack_sample *c;
	uint32_t id;
	bool python;
	int gstart[MAX_GROUPS + 1]; /* group k: py[gstart[k] .. gstart[k+1]) */
	int ngroups;
};

static int push(struct merge *m, uint32_t frame)
{
	return profile_intern_stack(m->s->profile, m->id, frame, &m->id);
}

/* Python frames [from, to) of the copy, outermost first. */
static int push_python(struct merge *m, int from, int to)
{
	for (int j = to - 1; j >= from; j--) {
		uint32_t frame;
		int ret = pysample_frame(m->s, m->c->tid, &m->c->py[j], j == m->c->npy - 1, &frame);

		if (ret == -ENOENT)
			continue;
		if (!ret)
			ret = push(m, frame);
		if (ret < 0)
			return ret;
		m->python = true;
	}
	return 0;
}

static int push_marker(struct merge *m, const char *name)
{
	uint32_t frame;
	int ret = intern_marker_frame(m->s, name, &frame);

	return ret ? ret : push(m, frame);
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

int pysample_merge(struct sampler *s, const struct stack_sample *c, const uint64_t *pcs, int n,
		 const char *marker, uint32_t *stack, bool *python)
{
	struct merge *m = calloc(1, sizeof(*m));
	uint32_t *frames = calloc((size_t)n + 1, sizeof(*frames));
	uint8_t *roles = calloc((size_t)n + 1, 1);
	int nev = 0, k, ret = -ENOMEM;

	if (!m || !frames || !roles)
		goto out;
	m->s = s;
	m->c = c;
	for (int i = 0; i < n; i++) {
		ret = stacks_frame_for_addr(s, pcs[i], &frames[i]);
		if (ret < 0)
			goto out;
		roles[i] = (uint8_t)role_of(s, frames[i]);
		nev += roles[i] == ROLE_EVAL;
	}
	split_groups(m);
	if (c->py_end != PY_WALK_COMPLETE)
		s->st.errors++;
	ret = marker ? push_marker(m, marker) : 0;
	if (ret < 0)
		goto out;
	if (nev != m->ngroups && !(marker && nev < m->ngroups)) {
		/* Both halves as they are: native, then Python. */
		s->st.errors++;
		for (int i = n - 1; i >= 0 && !ret; i--)
			ret = push(m, frames[i]);
		if (!ret)
			ret = push_marker(m, "[unmerged]");
		if (!ret)
			ret = push_python(m, 0, c->npy);
		goto out;
	}
	/* The groups beyond a short native unwind's reach go first. */
	for (k = m->ngroups - 1; k >= nev && !ret; k--)
		ret = push_python(m, m->gstart[k], m->gstart[k + 1]);
	for (int i = n - 1; i >= 0 && !ret; i--) {
		if (roles[i] == ROLE_EVAL) {
			ret = push_python(m, m->gstart[k], m->gstart[k + 1]);
			k--;
		} else if (roles[i] == ROLE_NATIVE) {
			ret = push(m, frames[i]);
		}
	}
out:
	if (!ret) {
		*stack = m->id;
		*python = m->python;
	}
	free(m);
	free(frames);
	free(roles);
	return ret;
}
