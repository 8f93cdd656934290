// SPDX-License-Identifier: MIT
/*
 * A training loop's DataLoader worker processes, and which loader each
 * works for. A worker's own figures are its loading thread's (the main
 * thread, which runs _worker_loop and the dataset's __getitem__): a
 * worker's process also has QueueFeederThread and others that sleep
 * nearly always, and averaging them in read 31% busy for workers whose
 * loading threads were busy 91% and 97%.
 *
 * A worker is forked inside its loader's iterator (DataLoader.__iter__),
 * so its stack keeps the frames it was forked under: the loop's line
 * that made that iterator. The loop thread's runs of __iter__ (its
 * iter_starts, found by summary_loaders.c) have that line too, and the
 * loader: the worker belongs to the one whose line it shares, nearest in
 * time to its first sample (one line can make two loaders' iterators:
 * run_epoch(train_loader), then run_epoch(val_loader)). A validation
 * pass's workers live inside it, and are the val loader's that way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

static bool is_worker(const struct summary *s, uint32_t pid)
{
	const char *label = process_label_of(s->p, pid);

	return label && !strncmp(label, "DataLoader worker", 17);
}

/* A worker of this process where both have the same launch rank (or
 * neither has one): a worker inherits its parent's environment. */
static bool same_rank(const struct summary *s, uint32_t a, uint32_t b)
{
	char key[32];
	const char *ra, *rb;

	snprintf(key, sizeof(key), "rank.%u", a);
	ra = profile_meta(s->p, key);
	snprintf(key, sizeof(key), "rank.%u", b);
	rb = profile_meta(s->p, key);
	return (!ra && !rb) || (ra && rb && !strcmp(ra, rb));
}

/* The loading thread: the one with the most data time, else the main. */
static const struct summary_thread *loading_thread(const struct summary_process *w)
{
	const struct summary_thread *best = NULL;

	for (size_t i = 0; i < w->nthreads; i++) {
		const struct summary_thread *t = &w->threads[i];

		if (t->phase_ns[PHASE_DATA] && (!best || t->phase_ns[PHASE_DATA] >
							      best->phase_ns[PHASE_DATA]))
			best = t;
	}
	for (size_t i = 0; !best && i < w->nthreads; i++)
		if (w->threads[i].tid == w->pid)
			best = &w->threads[i];
	return best;
}

struct worker_walk {
	struct summary *s;
	struct summary_process *sp;
};

/* Each worker's first sample, and the line its loading thread's stack
 * inherited from the loop (the call of its outermost data frame). */
static int worker_span(const struct profile_span *span, void *ctx)
{
	struct worker_walk *w = ctx;
	struct summary_process *sp = w->sp;

	if (span->flags & SAMPLE_GPU)
		return 0;
	for (size_t i = 0; i < sp->nworkers; i++) {
		struct summary_worker *k = &sp->workers[i];

		if (k->pid != span->pid)
			continue;
		if (!k->first_ns || span->start_ns < k->first_ns)
			k->first_ns = span->start_ns;
		if (k->site == FRAME_NONE && span->tid == k->tid)
			k->site = phase_call_site(w->s->m, span->stack, PHASE_DATA);
		break;
	}
	return 0;
}

/* How far a time lies from an iterator's run: 0 inside it. */
static uint64_t distance(const struct summary_iter_start *it, uint64_t t)
{
	if (t < it->start_ns)
		return it->start_ns - t;
	return t > it->end_ns ? t - it->end_ns : 0;
}

/* The iterator that made a worker: of those made at its inherited line
 * (all of them where none is), the nearest to its first sample. */
static int maker_of(const struct summary_process *sp, const struct summary_worker *k)
{
	bool any_site = false;
	int best = -1;

	for (size_t i = 0; i < sp->niter_starts; i++)
		any_site |= k->site != FRAME_NONE && sp->iter_starts[i].site == k->site;
	for (size_t i = 0; i < sp->niter_starts; i++) {
		const struct summary_iter_start *it = &sp->iter_starts[i];

		if (any_site && it->site != k->site)
			continue;
		if (best < 0 || distance(it, k->first_ns) < distance(&sp->iter_starts[best], k->first_ns))
			best = (int)i;
	}
	return best;
}

int summary_workers_find(struct summary *s, struct summary_process *sp)
{
	struct worker_walk w = { .s = s, .sp = sp };
	bool *counted;
	int ret;

	if (is_worker(s, sp->pid))
		return 0;
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct summary_process *wp = &s->procs[i];
		const struct summary_thread *t;

		if (!is_worker(s, wp->pid) || !same_rank(s, sp->pid, wp->pid) ||
		    !(t = loading_thread(wp)))
			continue;
		if (ARRAY_RESERVE(sp->workers, sp->cap_workers, sp->nworkers + 1, 8) < 0)
			return -ENOMEM;
		sp->workers[sp->nworkers++] = (struct summary_worker){
			.pid = wp->pid, .tid = t->tid, .site = FRAME_NONE, .loader = -1,
			.start = -1, .busy_ns = t->busy_ns, .all_ns = t->busy_ns + t->idle_ns,
			.cpu_wait_ns = t->cpu_wait_ns,
			.hottest = wp->hottest, .hottest_ns = wp->hottest_ns,
		};
	}
	if (!sp->nworkers || !sp->niter_starts || !profile_keeps_timeline(s->p))
		return 0;
	ret = profile_for_each_span(s->p, worker_span, &w);
	if (ret < 0)
		return ret;
	counted = calloc(sp->niter_starts, sizeof(*counted));
	if (!counted)
		return -ENOMEM;
	for (size_t i = 0; i < sp->nworkers; i++) {
		struct summary_worker *k = &sp->workers[i];

		k->start = maker_of(sp, k);
		if (k->start < 0)
			continue;
		k->loader = sp->iter_starts[k->start].loader;
		/* Each iterator that forked workers counts once. */
		if (k->loader >= 0 && !counted[k->start]) {
			counted[k->start] = true;
			sp->loaders[k->loader].worker_starts++;
		}
	}
	free(counted);
	return 0;
}
