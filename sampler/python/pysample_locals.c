// SPDX-License-Identifier: MIT
/*
 * dump --locals: each Python frame's variables, read at the same moment as
 * the frames themselves (the GIL holder's while it is stopped, another
 * thread's inside its walk, which is redone if the thread called or
 * returned meanwhile), so a frame's locals are those of the frame shown.
 * A raw frame carries the number of its record; when the frame enters a
 * thread's stack, the record joins that thread's list, in the stack's
 * order, outermost first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "sampler/python/pysample.h"

void pysample_locals_read(struct sampler *s, struct py_raw_frame *frames, int n)
{
	struct pysample *py = s->py;
	/* About 250 KiB: not on the stack. */
	struct py_local *buf = malloc(PY_LOCALS_MAX * sizeof(*buf));

	if (!buf)
		return;
	for (int i = 0; i < n; i++) {
		struct py_raw_frame *f = &frames[i];
		struct locals_record *r;
		struct py_code *c;
		int count;

		f->locals = 0;
		if (py_code_get(&py->target, py->codes, f->code, &c) < 0)
			continue; /* not a Python function's frame: no variables */
		/* Record 0 means none: the array starts at 1. */
		if (ARRAY_RESERVE(py->locals, py->locals_cap, py->nlocals + 2, 64) < 0)
			break;
		if (!py->nlocals)
			py->nlocals = 1;
		r = &py->locals[py->nlocals];
		r->vars = NULL;
		count = py_frame_locals(&py->target, f->addr, f->code, buf, PY_LOCALS_MAX);
		r->n = count;
		if (count > 0) {
			r->vars = malloc((size_t)count * sizeof(*r->vars));
			if (!r->vars)
				break;
			memcpy(r->vars, buf, (size_t)count * sizeof(*r->vars));
		} else if (count < 0) {
			stats_error(s, SAMPLER_ERR_PYTHON);
		}
		f->locals = py->nlocals++;
	}
	free(buf);
}

void pysample_locals_use(struct sampler *s, pid_t tid, const struct py_raw_frame *raw)
{
	struct pysample *py = s->py;

	/* Every Python frame takes its place, with a record or without one
	 * (0: none was read), so the ones after it keep theirs. */
	if (ARRAY_RESERVE(py->locals_uses, py->locals_uses_cap, py->nlocals_uses + 1, 64) < 0)
		return;
	py->locals_uses[py->nlocals_uses++] =
		(struct locals_use){ tid, raw->locals < py->nlocals ? raw->locals : 0 };
}

void pysample_locals_free(struct pysample *py)
{
	for (uint32_t i = 1; i < py->nlocals; i++)
		free(py->locals[i].vars);
	free(py->locals);
	free(py->locals_uses);
}

int sampler_frame_locals(const struct sampler *s, pid_t tid, uint32_t index,
			 void (*fn)(void *ctx, const char *name, const char *type,
				    const char *value),
			 void *ctx)
{
	const struct pysample *py = s->py;

	if (!py)
		return -ENOENT;
	for (size_t i = 0; i < py->nlocals_uses; i++) {
		const struct locals_record *r;

		if (py->locals_uses[i].tid != tid || index--)
			continue;
		if (!py->locals_uses[i].record)
			return -ENOENT;
		r = &py->locals[py->locals_uses[i].record];
		for (int k = 0; fn && k < r->n; k++)
			fn(ctx, r->vars[k].name, r->vars[k].type[0] ? r->vars[k].type : NULL,
			   r->vars[k].value);
		return r->n;
	}
	return -ENOENT;
}
