// SPDX-License-Identifier: MIT
/*
 * A plain PyTorch validation pass inside a training loop: `model.eval()`,
 * `with torch.no_grad():`, a second DataLoader, inline or in a function.
 * None of that is on the stack (eval() and no_grad() return at once), so
 * no frame rule can see it; its shape in time can. A training forward is
 * followed by a backward (or an optimizer step) before the next forward;
 * a validation forward never is. The forward is told by its call path,
 * the stack down to the line that calls the model (`evaluate()` called
 * from the loop, then `model(x)` in it; or the loop's own validation
 * line), so each line that runs the model in one context is one site:
 *
 *   - a forward site is eval when no backward or optimizer ever follows
 *     one of its calls before another forward, and it is met in at most
 *     half of the gaps between backward runs (a teacher's no-grad forward
 *     runs at every step: it is part of the step, not a validation);
 *   - a data site (the line that fetches a batch) is eval when the
 *     forwards that follow its fetches are mostly at eval sites;
 *   - a pass starts at the first eval span and lasts until the loop does
 *     something of training again (a training fetch or forward, a
 *     backward, an optimizer step): its `.item()` calls, metrics and the
 *     bookkeeping between batches are the pass's.
 *
 * A loop whose train and validation batches share one line and one call
 * path (a `for phase in ("train", "val")` loop) is not told apart here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/phase_impl.h"
#include "common/common.h"
#include "formats/formats.h"

#define NO_SITE UINT32_MAX

struct site_votes {
	uint32_t node;          /* the call path's stack node */
	bool forward;           /* a forward site, else a data site */
	bool trained;           /* forward: a backward or step followed it */
	uint64_t gaps, last_gap; /* forward: backward gaps it was met in */
	uint64_t eval_votes, train_votes; /* data: the forwards after it */
	bool eval;
};

struct eval_span {
	uint64_t start, end;
	uint8_t ph;        /* the row's phase */
	uint32_t site;     /* index in sites, or NO_SITE */
};

struct eval_walk {
	struct phase_map *m;
	uint32_t pid, tid;
	struct eval_span *spans;
	size_t nspans, cap_spans;
	struct site_votes *sites;
	size_t nsites, cap_sites;
};

static uint32_t call_path(struct eval_walk *w, uint32_t stack, enum phase ph)
{
	uint32_t node = phase_call_node(w->m, stack, ph);

	return node == FRAME_NONE ? NO_SITE : node;
}

static uint32_t site_index(struct eval_walk *w, uint32_t node, bool forward)
{
	for (size_t i = 0; i < w->nsites; i++)
		if (w->sites[i].node == node && w->sites[i].forward == forward)
			return (uint32_t)i;
	if (ARRAY_RESERVE(w->sites, w->cap_sites, w->nsites + 1, 16) < 0)
		return NO_SITE;
	w->sites[w->nsites] = (struct site_votes){ .node = node, .forward = forward,
						   .last_gap = UINT64_MAX };
	return (uint32_t)w->nsites++;
}

static int collect(const struct profile_span *s, void *ctx)
{
	struct eval_walk *w = ctx;
	struct profile_aggregate row = { .pid = s->pid, .tid = s->tid, .stack = s->stack,
					 .flags = s->flags, .count = s->count };
	struct eval_span *e;
	enum phase ph;

	if (s->pid != w->pid || s->tid != w->tid || s->flags & SAMPLE_GPU)
		return 0;
	if (ARRAY_RESERVE(w->spans, w->cap_spans, w->nspans + 1, 256) < 0)
		return -ENOMEM;
	ph = phase_of_row(w->m, &row);
	e = &w->spans[w->nspans++];
	*e = (struct eval_span){ .start = s->start_ns, .end = s->end_ns, .ph = (uint8_t)ph,
				 .site = NO_SITE };
	if (ph == PHASE_FORWARD || ph == PHASE_DATA) {
		uint32_t node = call_path(w, s->stack, ph);

		if (node != NO_SITE) {
			e->site = site_index(w, node, ph == PHASE_FORWARD);
			if (e->site == NO_SITE)
				return -ENOMEM;
		}
	}
	return 0;
}

static bool training_phase(int ph)
{
	return ph == PHASE_BACKWARD || ph == PHASE_OPTIMIZER;
}

/* Forward sites: followed by training, and in how many gaps between
 * backward runs each is met. Returns the gaps. */
static uint64_t vote_forwards(struct eval_walk *w)
{
	uint64_t gap = 0;
	uint32_t last = NO_SITE;
	bool in_train = false;

	for (size_t i = 0; i < w->nspans; i++) {
		const struct eval_span *e = &w->spans[i];

		if (training_phase(e->ph)) {
			if (last != NO_SITE)
				w->sites[last].trained = true;
			last = NO_SITE;
			gap += !in_train;
			in_train = true;
			continue;
		}
		in_train = false;
		if (e->ph == PHASE_FORWARD && e->site != NO_SITE) {
			struct site_votes *v = &w->sites[e->site];

			last = e->site;
			if (v->last_gap != gap) {
				v->last_gap = gap;
				v->gaps++;
			}
		}
	}
	return gap + 1;
}

static void vote_data(struct eval_walk *w)
{
	uint32_t pending[8];
	size_t npending = 0;

	for (size_t i = 0; i < w->nspans; i++) {
		const struct eval_span *e = &w->spans[i];

		if (e->site == NO_SITE)
			continue;
		if (e->ph == PHASE_DATA) {
			size_t k = 0;

			while (k < npending && pending[k] != e->site)
				k++;
			if (k == npending && npending < sizeof(pending) / sizeof(pending[0]))
				pending[npending++] = e->site;
			continue;
		}
		/* A forward: the fetches before it fed it. */
		for (size_t k = 0; k < npending; k++) {
			if (w->sites[e->site].eval)
				w->sites[pending[k]].eval_votes++;
			else
				w->sites[pending[k]].train_votes++;
		}
		npending = 0;
	}
	for (size_t i = 0; i < w->nsites; i++)
		if (!w->sites[i].forward)
			w->sites[i].eval = w->sites[i].eval_votes > w->sites[i].train_votes;
}

static bool eval_span(const struct eval_walk *w, const struct eval_span *e)
{
	return e->ph == PHASE_EVAL || (e->site != NO_SITE && w->sites[e->site].eval);
}

static bool training_span(const struct eval_walk *w, const struct eval_span *e)
{
	return training_phase(e->ph) ||
	       ((e->ph == PHASE_FORWARD || e->ph == PHASE_DATA) && !eval_span(w, e));
}

static int passes_add(struct eval_passes *out, uint64_t start, uint64_t end)
{
	if (end <= start)
		return 0;
	if (ARRAY_RESERVE(out->v, out->cap, out->n + 1, 8) < 0)
		return -ENOMEM;
	out->v[out->n].start_ns = start;
	out->v[out->n].end_ns = end;
	out->n++;
	return 0;
}

static int passes_make(struct eval_walk *w, struct eval_passes *out)
{
	uint64_t start = 0, last_end = 0;
	bool open = false;

	for (size_t i = 0; i < w->nspans; i++) {
		const struct eval_span *e = &w->spans[i];

		if (!open && eval_span(w, e)) {
			open = true;
			start = e->start;
		} else if (open && training_span(w, e)) {
			open = false;
			if (passes_add(out, start, e->start) < 0)
				return -ENOMEM;
		}
		if (open && eval_span(w, e))
			last_end = e->end;
	}
	/* A last pass with no training after it ends with its last batch. */
	return open ? passes_add(out, start, last_end) : 0;
}

int eval_passes_find(struct phase_map *m, uint32_t pid, uint32_t tid, struct eval_passes *out)
{
	struct eval_walk w = { .m = m, .pid = pid, .tid = tid };
	uint64_t gaps;
	bool any = false;
	int ret;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->tid = tid;
	ret = profile_for_each_span(m->p, collect, &w);
	if (ret < 0)
		goto done;
	gaps = vote_forwards(&w);
	/* Without training (an inference loop) there is nothing to set apart. */
	if (gaps < 2)
		goto done;
	for (size_t i = 0; i < w.nsites; i++) {
		struct site_votes *v = &w.sites[i];

		v->eval = v->forward && !v->trained && v->gaps * 2 <= gaps;
		any |= v->eval;
	}
	for (size_t i = 0; !any && i < w.nspans; i++)
		any = w.spans[i].ph == PHASE_EVAL;
	if (!any)
		goto done;
	vote_data(&w);
	ret = passes_make(&w, out);
done:
	free(w.spans);
	free(w.sites);
	if (ret < 0) {
		free(out->v);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}

bool eval_passes_hold(const struct eval_passes *e, uint64_t start_ns, uint64_t end_ns)
{
	size_t lo = 0, hi = e->n;

	/* The first pass that ends after the span starts. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (e->v[mid].end_ns <= start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->n && e->v[lo].start_ns <= start_ns && end_ns <= e->v[lo].end_ns;
}
