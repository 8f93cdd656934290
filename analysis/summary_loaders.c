// SPDX-License-Identifier: MIT
/*
 * The DataLoaders of a training loop and each one's time per step, the
 * figures training frameworks log as profile/train/dl_{loader}/time_*_ms.
 * A loader is told apart by the object it is, where the recording says
 * (the counter track "dataloader.PID.TID": the number of the loader the
 * thread fetched from, from its time on; the name of the variable holding
 * it in the meta "dataloader.PID.N"), so one line fetching from a
 * training and a validation loader gives two. Else by the loop's line
 * that fetches from it, named by the variable the line iterates over,
 * read from the program's source where it can be (as a traceback reads
 * it). Else its number in order of first use.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

/* The loop thread's loader changes, in time order. */
struct loader_change {
	uint64_t time_ns;
	int object;
};

struct loader_walk {
	struct summary *s;
	struct summary_process *sp;
	char track[48];           /* "dataloader.PID.TID" of the loop */
	struct loader_change *changes;
	size_t nchanges, cap_changes, next_change;
	int object;               /* the loader fetched from at the span: -1 */
	int cur, val_cur;         /* the loader fetched from last; -1 none */
	bool in_beat, in_val_forward, in_epoch_start;
	uint32_t loop_name, loop_file; /* the loop's function: where the beat is called */
	uint32_t *path;
	uint32_t cap_path;
};

/* By its object where known, else by its line (a sample whose object was
 * not read joins the first loader of its line; a loader met by its line
 * first is the object's that its line meets next). */
static int loader_at(struct summary_process *sp, uint32_t site, int object)
{
	for (size_t i = 0; i < sp->nloaders; i++)
		if (object >= 0 ? sp->loaders[i].object == object : sp->loaders[i].site == site)
			return (int)i;
	for (size_t i = 0; object >= 0 && i < sp->nloaders; i++)
		if (sp->loaders[i].object < 0 && sp->loaders[i].site == site) {
			sp->loaders[i].object = object;
			return (int)i;
		}
	if (ARRAY_RESERVE(sp->loaders, sp->cap_loaders, sp->nloaders + 1, 4) < 0)
		return -ENOMEM;
	sp->loaders[sp->nloaders] = (struct summary_loader){ .site = site, .object = object };
	return (int)sp->nloaders++;
}

static int change_add(const struct counter_sample *c, void *ctx)
{
	struct loader_walk *w = ctx;

	if (strcmp(profile_string(w->s->p, c->track), w->track))
		return 0;
	if (ARRAY_RESERVE(w->changes, w->cap_changes, w->nchanges + 1, 16) < 0)
		return -ENOMEM;
	w->changes[w->nchanges++] = (struct loader_change){ c->time_ns, (int)c->value };
	return 0;
}

/* None where not recorded (--native, older recordings): by line then. */
static int changes_read(struct loader_walk *w)
{
	snprintf(w->track, sizeof(w->track), "dataloader.%u.%u", w->sp->pid, w->sp->loop->tid);
	return profile_for_each_counter(w->s->p, change_add, w);
}

/* The loader of a span: the last change by its last sample's time (spans
 * come in time order per thread). */
static int object_at(struct loader_walk *w, uint64_t end_ns)
{
	while (w->next_change < w->nchanges && w->changes[w->next_change].time_ns <= end_ns)
		w->object = w->changes[w->next_change++].object;
	return w->object;
}

/*
 * The loader a data span fetches from; fallback (the one fetched from
 * last) where neither its object nor its line is known: a Python stack
 * cut short has a marker ("[error]") where the loop's frames were, which
 * is no line of the program, and one such sample made a loader of its own.
 */
static int loader_of_span(struct loader_walk *w, const struct profile_span *span, int fallback)
{
	uint32_t site = phase_call_site(w->s->m, span->stack, PHASE_DATA);
	const struct frame *f = site != FRAME_NONE ? profile_frame(w->s->p, site) : NULL;
	int object = object_at(w, span->end_ns);

	if (object < 0 && (!f || f->kind != FRAME_PYTHON))
		return fallback >= 0 ? fallback : -ENOENT;
	return loader_at(w->sp, site, object);
}

int summary_site_add(struct summary_process *sp, int ph, uint32_t frame, uint64_t ns)
{
	for (size_t i = 0; i < sp->nsites; i++)
		if (sp->sites[i].phase == ph && sp->sites[i].frame == frame) {
			sp->sites[i].ns += ns;
			return 0;
		}
	if (ARRAY_RESERVE(sp->sites, sp->cap_sites, sp->nsites + 1, 8) < 0)
		return -ENOMEM;
	sp->sites[sp->nsites++] = (struct summary_site){ ph, frame, ns };
	return 0;
}

/* The loop's function: the one whose line calls the beat (backward). */
static void loop_function(struct loader_walk *w, uint32_t stack)
{
	uint32_t site = phase_call_site(w->s->m, stack, w->sp->steps.beat);
	const struct frame *f = site != FRAME_NONE ? profile_frame(w->s->p, site) : NULL;

	if (f && f->kind == FRAME_PYTHON) {
		w->loop_name = f->name;
		w->loop_file = f->module;
	}
}

/* The loop's time in no phase: under which line of the loop's body, and
 * in which function at the top of the Python stack. */
static int other_sites(struct loader_walk *w, uint32_t stack, uint64_t len)
{
	const struct profile *p = w->s->p;
	int depth = profile_stack_frames(p, stack, &w->path, &w->cap_path), body = -1, inner = -1;
	int ret;

	if (depth < 0)
		return depth;
	for (int i = 0; i < depth; i++) {
		const struct frame *f = profile_frame(p, w->path[i]);

		if (f->kind != FRAME_PYTHON)
			continue;
		inner = i;
		if (f->name == w->loop_name && f->module == w->loop_file)
			body = i;
	}
	if (body < 0)
		return 0;
	ret = summary_site_add(w->sp, PHASE_OTHER, w->path[body], len);
	return ret < 0 ? ret : summary_site_add(w->sp, SITE_OTHER_INNER, w->path[inner], len);
}

/* The loop making an iterator: a run of such spans is one. */
static int iter_start_add(struct loader_walk *w, const struct profile_span *span, int loader)
{
	struct summary_process *sp = w->sp;

	if (w->in_epoch_start && sp->niter_starts) {
		sp->iter_starts[sp->niter_starts - 1].end_ns = span->end_ns;
		return 0;
	}
	if (ARRAY_RESERVE(sp->iter_starts, sp->cap_iter_starts, sp->niter_starts + 1, 8) < 0)
		return -ENOMEM;
	sp->iter_starts[sp->niter_starts++] = (struct summary_iter_start){
		.start_ns = span->start_ns, .end_ns = span->end_ns, .loader = loader,
		.site = phase_call_site(w->s->m, span->stack, PHASE_DATA),
	};
	return 0;
}

static int walk_span(const struct profile_span *span, void *ctx)
{
	struct loader_walk *w = ctx;
	struct summary_process *sp = w->sp;
	const struct step_stats *st = &sp->steps;
	struct profile_aggregate row = { .pid = span->pid, .tid = span->tid,
					 .stack = span->stack, .flags = span->flags };
	uint64_t len = span->end_ns - span->start_ns;
	enum phase ph, own, inner;
	enum epoch_edge edge;
	int at, made = -1; /* the loader of a data span: its iterator's */

	if (span->pid != sp->pid || span->tid != sp->loop->tid || span->flags & SAMPLE_GPU)
		return 0;
	own = phase_of_row(w->s->m, &row);
	ph = phase_of_span(w->s->m, span);
	/* A pass found by its shape: the stack's own phase. */
	inner = own == PHASE_EVAL ? phase_inside_eval(w->s->m, span->stack) : own;
	/* Where the loop makes a loader's iterator (its workers fork then),
	 * training or evaluation; an epoch starts where it is a training
	 * loader's, and ends, with workers, where it joins them. */
	edge = ph == PHASE_DATA || (ph == PHASE_EVAL && inner == PHASE_DATA) ?
	       stack_epoch_edge(w->s->m, span->stack) : EPOCH_NONE;
	if (ph == PHASE_DATA) {
		at = loader_of_span(w, span, w->cur);
		if (at < 0 && at != -ENOENT)
			return at;
		if (at >= 0) {
			w->cur = at;
			sp->loaders[at].train = true;
			made = at;
		}
		if (edge == EPOCH_START) {
			sp->epochs += !w->in_epoch_start;
			sp->epoch_start_ns += len;
			if (at >= 0) {
				sp->loaders[at].epochs += !w->in_epoch_start;
				sp->loaders[at].epoch_start_ns += len;
			}
		} else if (edge == EPOCH_STOP) {
			sp->epoch_stop_ns += len;
			if (w->cur >= 0)
				sp->loaders[w->cur].epoch_stop_ns += len;
		}
	}
	if (ph == PHASE_EVAL) {
		if (inner == PHASE_DATA) {
			at = loader_of_span(w, span, w->val_cur);
			if (at < 0 && at != -ENOENT)
				return at;
			if (at >= 0) {
				w->val_cur = at;
				made = at;
				sp->loaders[at].val = true;
				sp->loaders[at].val_data_ns += len;
			}
		}
		if (inner == PHASE_FORWARD && w->val_cur >= 0) {
			/* A batch is a run of the model's forward. */
			sp->loaders[w->val_cur].val_batches += !w->in_val_forward;
			sp->loaders[w->val_cur].val_forward_ns += len;
		}
		w->in_val_forward = inner == PHASE_FORWARD;
	} else {
		w->in_val_forward = false;
	}
	if (edge == EPOCH_START) {
		int ret = iter_start_add(w, span, made);

		if (ret < 0)
			return ret;
	}
	w->in_epoch_start = edge == EPOCH_START;
	/* A step belongs to the loader its data came from last. */
	if (ph == st->beat && !w->in_beat && w->cur >= 0 && span->start_ns >= st->first_ns &&
	    span->start_ns < st->last_ns)
		sp->loaders[w->cur].steps++;
	w->in_beat = ph == st->beat;
	if (span->start_ns < st->first_ns || span->start_ns >= st->last_ns)
		return 0;
	if (ph == PHASE_SYNC || ph == PHASE_LOGGING) {
		int ret = summary_site_add(sp, ph, phase_call_site(w->s->m, span->stack, ph), len);

		if (ret < 0)
			return ret;
	}
	if (ph == st->beat && !w->loop_name)
		loop_function(w, span->stack);
	if (ph == PHASE_OTHER && w->loop_name) {
		int ret = other_sites(w, span->stack, len);

		if (ret < 0)
			return ret;
	}
	if (w->cur < 0)
		return 0;
	sp->loaders[w->cur].step_ns[ph] += len;
	if (ph == PHASE_DATA && span->flags & SAMPLE_IDLE)
		sp->loaders[w->cur].wait_ns += len;
	return 0;
}

static void loader_add(struct summary_loader *to, struct summary_loader *from)
{
	to->steps += from->steps;
	for (int k = 0; k < PHASE_KINDS; k++)
		to->step_ns[k] += from->step_ns[k];
	to->wait_ns += from->wait_ns;
	to->val_batches += from->val_batches;
	to->val_data_ns += from->val_data_ns;
	to->val_forward_ns += from->val_forward_ns;
	to->train |= from->train;
	to->val |= from->val;
	to->epochs += from->epochs;
	to->epoch_start_ns += from->epoch_start_ns;
	to->epoch_stop_ns += from->epoch_stop_ns;
	to->worker_starts += from->worker_starts;
	*from = (struct summary_loader){ .site = from->site, .object = from->object };
}

/* A loader told by its line whose name is a known object's is that
 * object: `next(it)` read where the object was not (--native reads it
 * after the tick, when the frame may have moved on), named from the line
 * that made `it`. Its figures join the object's. */
static void merge_same_named(struct summary *s, struct summary_process *sp)
{
	char a[64], b[64];

	for (size_t i = 0; i < sp->nloaders; i++) {
		if (sp->loaders[i].object >= 0)
			continue;
		summary_loader_name(s, sp, i, a, sizeof(a));
		for (size_t j = 0; j < sp->nloaders; j++) {
			if (sp->loaders[j].object < 0)
				continue;
			summary_loader_name(s, sp, j, b, sizeof(b));
			if (!strcmp(a, b)) {
				loader_add(&sp->loaders[j], &sp->loaders[i]);
				break;
			}
		}
	}
}

int summary_loaders_find(struct summary *s, struct summary_process *sp)
{
	struct loader_walk w = { .s = s, .sp = sp, .cur = -1, .val_cur = -1, .object = -1 };
	int ret = changes_read(&w);

	if (!ret)
		ret = profile_for_each_span(s->p, walk_span, &w);
	if (!ret)
		merge_same_named(s, sp);
	free(w.path);
	free(w.changes);
	return ret;
}

/* The variable a source line fetches batches from: "for b in NAME",
 * "next(NAME)" or "iter(NAME)", through calls that wrap it
 * ("enumerate(tqdm(NAME))"); false if none. */
static bool variable_of_line(const char *line, char *buf, size_t len)
{
	static const char *const after[] = { " in ", "next(", "iter(" };
	const char *at = NULL, *end;

	for (size_t i = 0; i < sizeof(after) / sizeof(after[0]) && !at; i++) {
		at = strstr(line, after[i]);
		if (at)
			at += strlen(after[i]);
	}
	for (; at; at = end + 1) {
		while (*at == ' ')
			at++;
		for (end = at; isalnum((unsigned char)*end) || *end == '_' || *end == '.'; end++)
			;
		if (end == at || !(isalpha((unsigned char)*at) || *at == '_'))
			return false;
		if (*end != '(')
			break;
	}
	if (!at || (size_t)(end - at) >= len)
		return false;
	/* self.train_loader: the attribute's name is the loader's. */
	if (memchr(at, '.', (size_t)(end - at)))
		at = (const char *)memrchr(at, '.', (size_t)(end - at)) + 1;
	snprintf(buf, len, "%.*s", (int)(end - at), at);
	return *buf != '\0';
}

void summary_loader_name(const struct summary *s, const struct summary_process *sp, size_t i,
			 char *buf, size_t len)
{
	const char *recorded = NULL;
	char line[512], key[64];

	if (sp->loaders[i].object >= 0) {
		snprintf(key, sizeof(key), "dataloader.%u.%d", sp->pid, sp->loaders[i].object);
		recorded = profile_meta(s->p, key);
	}
	if (recorded && *recorded) {
		snprintf(buf, len, "%s", recorded);
		return;
	}
	if (source_line_of(s->p, sp->loaders[i].site, line, sizeof(line)) &&
	    variable_of_line(line, buf, len)) {
		char made[512], loader[64];

		/* next(it): the loader `it = iter(...)` was made from. */
		if (source_iterator_made(s->p, sp->loaders[i].site, buf, made, sizeof(made)) &&
		    variable_of_line(strchr(made, '=') + 1, loader, sizeof(loader)))
			snprintf(buf, len, "%s", loader);
		return;
	}
	snprintf(buf, len, "%zu", i);
}
