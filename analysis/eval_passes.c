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
 *   - a forward site is eval when a backward follows few of its calls
 *     before another forward (a third of the others at most), and it is met in at most
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
 * path (the tutorial's `for phase in ("train", "val"):` around one inner
 * loop) is told by its gaps instead: between two backward runs a training
 * loop runs its last forward line once (the loss, or the model); three
 * runs of it or more there are batches that no backward followed, and
 * all but the last (the next training batch, with its fetch) are a
 * validation's. After the last backward, three or more are one too.
 *
 * Only backward marks training here: an optimizer's zero_grad() may run
 * at the top of every batch, validation's included.
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
	uint64_t trained, untrained; /* forward: its runs followed by a backward
				      * before the next forward run, or not */
	uint64_t gaps, last_gap; /* forward: backward gaps it was met in */
	uint64_t eval_votes, train_votes; /* data: the forwards after it */
	bool eval;
};

struct eval_span {
	uint64_t start, end;
	uint8_t ph;        /* the row's phase */
	bool gap_eval;     /* a validation's, whatever its line says: a batch
			    * told by its gap, a fetch by the forward after it */
	uint32_t site;     /* index in sites, or NO_SITE */
	bool pass_end;     /* a loader's pass ending (its workers joined) */
	bool pass_start;   /* ... or starting (its iterator made) */
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
	e->pass_end = ph == PHASE_DATA && stack_epoch_edge(w->m, s->stack) == EPOCH_STOP;
	e->pass_start = ph == PHASE_DATA && stack_epoch_edge(w->m, s->stack) == EPOCH_START;
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
	return ph == PHASE_BACKWARD;
}

/*
 * Forward sites: how many of their runs a backward followed before the
 * next forward run, how many not, and in how many gaps between backward
 * runs each is met. Returns the gaps. Votes, not one sight: under load a
 * training forward can go unsampled, and the validation's last forward is
 * then the one seen before a backward.
 */
static uint64_t vote_forwards(struct eval_walk *w)
{
	uint64_t gap = 0;
	uint32_t run = NO_SITE; /* the forward run open, not voted yet */
	bool in_train = false, ended = false;

	for (size_t i = 0; i < w->nspans; i++) {
		const struct eval_span *e = &w->spans[i];

		if (training_phase(e->ph)) {
			if (run != NO_SITE)
				w->sites[run].trained++;
			run = NO_SITE;
			gap += !in_train;
			in_train = true;
			continue;
		}
		in_train = false;
		ended |= e->ph != PHASE_FORWARD;
		if (e->ph == PHASE_FORWARD && e->site != NO_SITE) {
			struct site_votes *v = &w->sites[e->site];

			/* A new run: another line, or the call returned since. */
			if (run != NO_SITE && (run != e->site || ended))
				w->sites[run].untrained++;
			run = e->site;
			ended = false;
			if (v->last_gap != gap) {
				v->last_gap = gap;
				v->gaps++;
			}
		}
	}
	return gap + 1;
}

/* A fetching line is eval's when the forwards after its fetches mostly
 * are; a fetch whose next forward is eval's is, whatever its line (one
 * line fetching for both: `for x, y in loaders[phase]:`). */
static void vote_data(struct eval_walk *w)
{
	uint32_t pending[8];
	size_t npending = 0, first = SIZE_MAX;
	bool after_eval = false;

	for (size_t i = 0; i < w->nspans; i++) {
		struct eval_span *e = &w->spans[i];

		if (e->site == NO_SITE)
			continue;
		/* A loader's pass ends after its last batch: that batch's. */
		if (e->pass_end) {
			e->gap_eval = after_eval;
			continue;
		}
		if (e->ph == PHASE_DATA) {
			size_t k = 0;

			first = first == SIZE_MAX ? i : first;
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
		for (size_t k = first; w->sites[e->site].eval && k < i; k++)
			if (w->spans[k].ph == PHASE_DATA)
				w->spans[k].gap_eval = true;
		npending = 0;
		first = SIZE_MAX;
		after_eval = w->sites[e->site].eval;
	}
	for (size_t i = 0; i < w->nsites; i++)
		if (!w->sites[i].forward)
			w->sites[i].eval = w->sites[i].eval_votes > w->sites[i].train_votes;
}

static bool eval_span(const struct eval_walk *w, const struct eval_span *e)
{
	return e->ph == PHASE_EVAL || e->gap_eval || (e->site != NO_SITE && w->sites[e->site].eval);
}

/* Runs of forward at site since span `from` (a run: its spans with
 * nothing else between; a call of the model returns before anything else
 * of the loop runs, its fetch unseen or not); *last the last run's first
 * span. */
static size_t runs_of(const struct eval_walk *w, size_t from, size_t to, uint32_t site, size_t *last)
{
	size_t runs = 0;
	bool in = false;

	for (size_t i = from; i < to; i++) {
		const struct eval_span *e = &w->spans[i];

		if (e->ph == PHASE_FORWARD && e->site == site) {
			if (!in) {
				runs++;
				*last = i;
			}
			in = true;
		} else {
			in = false;
		}
	}
	return runs;
}

/* Marks a gap's batches before `keep` (the training batch's forward; to
 * for none) as a validation's, but the fetch that feeds `keep`. */
static void gap_mark(struct eval_walk *w, size_t from, size_t keep)
{
	size_t feed = keep;

	/* Its fetch, and what lies between; a loader's pass ending is the
	 * batch's before. */
	while (feed > from && w->spans[feed - 1].ph != PHASE_FORWARD && !w->spans[feed - 1].pass_end)
		feed--;
	for (size_t i = from; i < feed; i++)
		if ((w->spans[i].ph == PHASE_FORWARD || w->spans[i].ph == PHASE_DATA) &&
		    !eval_span(w, &w->spans[i]))
			w->spans[i].gap_eval = true;
}

struct gap {
	size_t from, to, keep, runs;
	uint64_t ns, forward_ns;
	bool loader_pass; /* a loader's pass started or ended in it */
};

static int by_runs(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;

	return (x->runs > y->runs) - (x->runs < y->runs);
}

static int by_ns(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;

	return (x->ns > y->ns) - (x->ns < y->ns);
}

static int by_forward_ns(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;

	return (x->forward_ns > y->forward_ns) - (x->forward_ns < y->forward_ns);
}

/*
 * The gaps between backward runs that hold a validation on the training
 * lines (see the top): three runs of the gap's last forward line or more,
 * and over twice the usual (a step that runs its model on several chunks
 * before one backward does so at every step). Quick batches back to back
 * are seen as one run (their fetches and losses unsampled): two runs or
 * more whose forward time is three times the usual gap's are one too
 * (two is a step whose backward went unsampled); after the last backward,
 * forward time twice the usual, or two runs in three times the usual gap;
 * either only where a loader's pass starts or ends in the gap.
 */
static int vote_gaps(struct eval_walk *w)
{
	struct gap *gaps = NULL, *sorted;
	size_t n = 0, cap = 0, from = 0, usual;
	uint64_t usual_ns, usual_fwd;
	uint32_t site = NO_SITE, last_fwd = NO_SITE;

	for (size_t i = 0; i <= w->nspans; i++) {
		bool end = i == w->nspans;
		struct gap g = { .from = from, .to = i };

		if (!end && w->spans[i].ph == PHASE_FORWARD && !eval_span(w, &w->spans[i]))
			last_fwd = w->spans[i].site;
		if (!end && !training_phase(w->spans[i].ph))
			continue;
		/* After the last backward: the training lines of the gaps before. */
		if (end)
			last_fwd = site;
		/* Before the first backward: the start, not a gap to judge. */
		if (last_fwd != NO_SITE && from > 0) {
			g.runs = runs_of(w, from, i, last_fwd, &g.keep);
			g.ns = i > from ? w->spans[i - 1].end - w->spans[from].start : 0;
			for (size_t k = from; k < i; k++) {
				if (w->spans[k].ph == PHASE_FORWARD && !eval_span(w, &w->spans[k]))
					g.forward_ns += w->spans[k].end - w->spans[k].start;
				g.loader_pass |= w->spans[k].pass_start || w->spans[k].pass_end;
			}
			if (end)
				g.keep = i;
			if (ARRAY_RESERVE(gaps, cap, n + 1, 64) < 0) {
				free(gaps);
				return -ENOMEM;
			}
			gaps[n++] = g;
		}
		site = last_fwd != NO_SITE ? last_fwd : site;
		last_fwd = NO_SITE;
		while (i + 1 < w->nspans && training_phase(w->spans[i + 1].ph))
			i++;
		from = i + 1;
	}
	sorted = n ? malloc(n * sizeof(*sorted)) : NULL;
	if (n && !sorted) {
		free(gaps);
		return -ENOMEM;
	}
	if (n) {
		memcpy(sorted, gaps, n * sizeof(*sorted));
		array_sort(sorted, n, sizeof(*sorted), by_runs);
	}
	usual = n ? sorted[n / 2].runs : 0;
	if (n)
		array_sort(sorted, n, sizeof(*sorted), by_ns);
	usual_ns = n ? sorted[n / 2].ns : 0;
	if (n)
		array_sort(sorted, n, sizeof(*sorted), by_forward_ns);
	usual_fwd = n ? sorted[n / 2].forward_ns : 0;
	for (size_t k = 0; k < n; k++) {
		const struct gap *g = &gaps[k];
		bool last = g->keep == g->to && g->to == w->nspans;

		/* Runs merged are told by time only where a loader's pass
		 * starts or ends in the gap (a validation makes its iterator;
		 * a machine so loaded that backward went unsampled for steps
		 * on end does not). */
		bool merged = usual <= 1 && g->loader_pass &&
			      ((g->runs >= 2 && g->forward_ns >= 3 * usual_fwd) ||
			       (last && g->runs >= 1 && g->forward_ns >= 2 * usual_fwd) ||
			       (last && g->runs >= 2 && g->ns >= 3 * usual_ns));

		if ((g->runs >= 3 && g->runs > 2 * usual) || merged)
			gap_mark(w, gaps[k].from, gaps[k].keep);
	}
	free(sorted);
	free(gaps);
	return 0;
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

		/* Mostly not followed by a backward (a validation's last batch
		 * may be, where the training forward after it went unseen). */
		v->eval = v->forward && v->trained * 3 <= v->untrained && v->gaps * 2 <= gaps;
		any |= v->eval;
	}
	vote_data(&w);
	ret = vote_gaps(&w);
	if (ret < 0)
		goto done;
	for (size_t i = 0; !any && i < w.nspans; i++)
		any = eval_span(&w, &w.spans[i]);
	if (!any)
		goto done;
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
