// SPDX-License-Identifier: MIT
/*
 * --time FUNC: how long each call of a function took, from the timeline,
 * as a timing decorator would log it but with no change to the code. A
 * call is a run of one thread's samples whose stacks hold the function;
 * it is known to a sampling period at each end, and calls back to back
 * with nothing sampled between them count as one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/phase_impl.h"
#include "common/common.h"
#include "formats/formats.h"

struct open_call {
	uint32_t pid, tid;
	bool open;
	uint64_t start, end;
};

struct call_walk {
	const struct profile *p;
	const char *func, *file;  /* file: a "file:line" form's, else NULL */
	uint32_t line;
	uint8_t *stacks;          /* 0 unknown, 1 holds it, 2 does not */
	uint32_t nstacks;
	uint32_t *path, cap_path;
	struct open_call *threads;
	size_t nthreads, cap_threads;
	uint64_t *lengths;
	size_t nlengths, cap_lengths;
	int err;
};

static bool frame_is(const struct call_walk *w, uint32_t id)
{
	const struct frame *f = profile_frame(w->p, id);
	const char *file;
	size_t n, k;

	if (!w->file)
		return !strcmp(profile_string(w->p, f->name), w->func);
	if (f->line != w->line || !f->module)
		return false;
	/* file:line: the file named as the outputs show it, a path's end. */
	file = profile_string(w->p, f->module);
	n = strlen(file);
	k = strlen(w->file);
	return n >= k && !strcmp(file + n - k, w->file) && (n == k || file[n - k - 1] == '/');
}

static bool stack_holds(struct call_walk *w, uint32_t stack)
{
	int depth;
	bool found = false;

	if (!byte_cache_fit(&w->stacks, &w->nstacks, stack))
		return false;
	if (w->stacks[stack])
		return w->stacks[stack] == 1;
	depth = profile_stack_frames(w->p, stack, &w->path, &w->cap_path);
	for (int i = 0; i < depth && !found; i++)
		found = frame_is(w, w->path[i]);
	w->stacks[stack] = found ? 1 : 2;
	return found;
}

static int close_call(struct call_walk *w, struct open_call *c)
{
	if (!c->open)
		return 0;
	c->open = false;
	if (ARRAY_RESERVE(w->lengths, w->cap_lengths, w->nlengths + 1, 64) < 0)
		return -ENOMEM;
	w->lengths[w->nlengths++] = c->end - c->start;
	return 0;
}

static int walk_span(const struct profile_span *s, void *ctx)
{
	struct call_walk *w = ctx;
	struct open_call *c = NULL;

	if (s->flags & SAMPLE_GPU)
		return 0;
	for (size_t i = 0; i < w->nthreads; i++)
		if (w->threads[i].pid == s->pid && w->threads[i].tid == s->tid)
			c = &w->threads[i];
	if (!c) {
		if (ARRAY_RESERVE(w->threads, w->cap_threads, w->nthreads + 1, 16) < 0)
			return -ENOMEM;
		c = &w->threads[w->nthreads++];
		*c = (struct open_call){ .pid = s->pid, .tid = s->tid };
	}
	if (!stack_holds(w, s->stack))
		return close_call(w, c);
	if (!c->open) {
		c->open = true;
		c->start = s->start_ns;
	}
	c->end = s->end_ns;
	return 0;
}

int call_times_find(const struct profile *p, const char *func, struct call_times *out)
{
	struct call_walk w = { .p = p, .func = func };
	const char *colon = strrchr(func, ':');
	char *file = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	/* "file.py:42": a line of a file, else a function's name. */
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		file = strndup(func, (size_t)(colon - func));
		if (!file)
			return -ENOMEM;
		w.file = file;
		w.line = (uint32_t)strtoul(colon + 1, NULL, 10);
	}
	ret = profile_for_each_span(p, walk_span, &w);
	for (size_t i = 0; !ret && i < w.nthreads; i++)
		ret = close_call(&w, &w.threads[i]);
	if (!ret && w.nlengths) {
		u64_sort(w.lengths, w.nlengths);
		out->calls = w.nlengths;
		out->p50_ns = w.lengths[(w.nlengths - 1) / 2];
		out->p90_ns = w.lengths[(size_t)(0.9 * (double)(w.nlengths - 1) + 0.5)];
		out->max_ns = w.lengths[w.nlengths - 1];
		for (size_t i = 0; i < w.nlengths; i++)
			out->total_ns += w.lengths[i];
	}
	free(file);
	free(w.stacks);
	free(w.path);
	free(w.threads);
	free(w.lengths);
	return ret;
}
