// SPDX-License-Identifier: MIT
/*
 * Stopping at most the GIL holder, for a Python tick (pysample_tick.c).
 * The GIL holder, when it runs, is stopped and its frames walked at the
 * stop (pysample_walk_stopped). While it is stopped no other thread can
 * take the GIL it holds, so nothing the walk reads changes under it; the
 * threads that ran lately are walked in that same stop. The holder the
 * thread list named is asked again before its interrupt and in its stop,
 * for the GIL passes on every switch interval; a tick that stopped none
 * gives its one stop to a thread found holding the GIL once read.
 */
#include <errno.h>

#include "sampler/python/pysample.h"
#include "sampler/tick.h"

static bool holds_gil(struct pysample *py, const struct py_thread *pt)
{
	uint64_t holder;

	return py_gil_holder(&py->target, pt->interp, &holder) == 0 && holder == pt->tstate;
}

/*
 * The other threads chosen (choose_prewalks), walked while the holder is
 * stopped: none of them can take the GIL it holds, so each stack is one
 * that was. Read after the holder runs again, a thread that took the GIL
 * meanwhile and returned to the same frame addresses would pass the
 * head's re-read torn (0.1-1% of a 3-thread recursion's stacks).
 */
static void prewalk_others(struct sampler *s)
{
	struct pysample *py = s->py;
	int at = 0;

	for (int k = 0; k < py->npre_idx; k++) {
		const struct py_thread *pt = &py->threads[py->pre_idx[k]];
		enum py_walk_end end;
		int n = py_frames_read(&py->target, pt->tstate, &py->scratch, py->pre_frames + at,
				       PY_PREWALK_FRAMES - at, &end);

		/* Deeper than the room left: walked again as it runs. */
		if (n < 0 || n >= PY_PREWALK_FRAMES - at)
			continue;
		py->pre[py->npre].tid = py->tids[py->pre_idx[k]];
		py->pre[py->npre].n = n;
		py->pre[py->npre].at = at;
		py->pre[py->npre].end = end;
		py->npre++;
		at += n;
	}
}

void pysample_walk_stopped(struct sampler *s, struct thread *t)
{
	struct pysample *py = s->py;
	const struct py_thread *pt = pysample_thread_of(py, py->nthreads, t->tid);

	if (!pt)
		return;
	py->nheld = py_frames_read(&py->target, pt->tstate, &py->scratch, py->held,
				   PY_MAX_DEPTH, &py->held_end);
	if (s->opt.locals)
		pysample_locals_read(s, py->held, py->nheld);
	else if (py->npre_idx && holds_gil(py, pt))
		prewalk_others(s);
	/* Else it let the GIL go before it stopped: the others are read as
	 * they run, the tick's one stop spent. */
	py->held_tid = t->tid;
	s->st.py_holder_walks++;
}

/*
 * A tick that stopped no holder (the GIL was between two threads, or its
 * holder was not running) reads the threads as they run. One that holds
 * the GIL once read may have run Python during the read, which no re-read
 * of its head tells when it returned and called again to the same
 * addresses: it is walked again, stopped (the tick's one stop), and runs
 * from then on, whatever its state said before. One that took the GIL
 * and let it go within the read is not seen. Returns 1 when walked so,
 * 0 when not, -ESTALE when the process was left for another meanwhile
 * (follow.c: s->py is not the one read).
 */
int pysample_walk_new_holder(struct sampler *s, struct thread *t, const struct py_thread *pt)
{
	struct pysample *py = s->py;

	if (s->opt.nonblocking || s->opt.locals || py->stop_tried ||
	    t->gone || t->listening || t->interrupt_sent || t->detaching)
		return 0;
	/* Asked, then asked again last, as near the interrupt as can be:
	 * most threads do not hold it, and the state costs a read of /proc. */
	if (!holds_gil(py, pt) || thread_state(s, t) != 'R' || !holds_gil(py, pt))
		return 0;
	py->stop_tried = true;
	if (t->untraced && unseized_seize_for_walk(s, t) < 0)
		return 0;
	tick_interrupt(s, t, true);
	tick_collect_traps(s);
	if (s->py != py)
		return -ESTALE;
	if (py->held_tid != t->tid)
		return 0;
	s->st.py_walks_redone_stopped++;
	return 1;
}

/*
 * The threads other than the holder (entry h) to walk during its stop:
 * those that ran lately, which may take the GIL as soon as it goes (a
 * thread waiting for it sleeps, so its state says nothing). One that has
 * not run for a while is read after the stop, as it sleeps on: its walk
 * would lengthen the holder's pause for a stack that does not move.
 */
static void choose_prewalks(struct sampler *s, int n, int h)
{
	struct pysample *py = s->py;

	for (int i = 0; i < n && py->npre_idx < PY_PREWALK_THREADS; i++) {
		struct thread *t;

		if (i == h || !py->tids[i])
			continue;
		t = thread_find(s, py->tids[i]);
		if (t && !t->gone && s->tick_now - t->py_active_ns < PY_PREWALK_ACTIVE_NS)
			py->pre_idx[py->npre_idx++] = i;
	}
}

void pysample_walk_holder(struct sampler *s, int n)
{
	struct pysample *py = s->py;

	for (int i = 0; i < n; i++) {
		struct thread *t;

		if (!py->threads[i].gil || !py->tids[i])
			continue;
		t = thread_find(s, py->tids[i]);
		if (!t || t->gone || t->listening || t->interrupt_sent || t->detaching ||
		    thread_state(s, t) != 'R')
			return;
		choose_prewalks(s, n, i);
		/* Let go since the listing (a handoff): no holder to stop; the
		 * one that holds it once read is stopped then. Asked last, as
		 * near the interrupt as can be. */
		if (!holds_gil(py, &py->threads[i])) {
			py->npre_idx = 0;
			return;
		}
		py->stop_tried = true;
		/* Memory-only: seized for this walk alone; another tracer
		 * leaves it running, its walk checked as it runs. */
		if (t->untraced && unseized_seize_for_walk(s, t) < 0)
			return;
		tick_interrupt(s, t, true);
		tick_collect_traps(s);
		return;
	}
}
