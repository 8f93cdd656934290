// SPDX-License-Identifier: MIT
/*
 * One tick: decide from /proc which threads run, stop only those, copy
 * their registers and stack and resume them at once; read blocked threads
 * without stopping them; unwind and symbolize after everyone runs again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "sampler/internal.h"
#include "symbolize/symbolize.h"

/* How long a tick waits for interrupted threads before checking on them. */
#define TRAP_WAIT_MS 20
#define TRAP_GIVE_UP_NS 1000000000ull

static struct stack_sample *copy_slot(struct sampler *s)
{
	struct stack_sample *c;

	if (s->ncopies == s->cap_copies) {
		size_t cap = s->cap_copies ? s->cap_copies * 2 : 8;
		struct stack_sample *n = realloc(s->copies, cap * sizeof(*n));

		if (!n)
			return NULL;
		memset(n + s->cap_copies, 0, (cap - s->cap_copies) * sizeof(*n));
		s->copies = n;
		s->cap_copies = cap;
	}
	c = &s->copies[s->ncopies];
	if (!c->data) {
		c->data = malloc(s->opt.stack_bytes);
		if (!c->data)
			return NULL;
	}
	s->ncopies++;
	return c;
}

/*
 * The bytes from sp to the end of the thread's stack mapping, capped. The
 * mapping is the one seen last time; a thread seen for the first time gets
 * the whole cap (the read stops at the first unmapped page) and is trimmed
 * after it runs again, so the maps are never re-read while it is stopped.
 */
static size_t stack_copy_len(struct sampler *s, struct thread *t, uint64_t sp)
{
	size_t cap = s->opt.stack_bytes;

	if (sp >= t->stack_lo && sp < t->stack_hi && t->stack_hi - sp < cap)
		return (size_t)(t->stack_hi - sp);
	return cap;
}

/* Called by the stop handler while t sits in our interrupt trap. */
void tick_copy_stopped(struct sampler *s, struct thread *t)
{
	struct stack_sample *c = copy_slot(s);
	ssize_t n;
	int ret;

	if (!c) {
		s->st.errors++;
		return;
	}
	c->tid = t->tid;
	c->ok = false;
	c->len = 0;
	ret = regs_get(t->tid, &c->regs);
	if (ret < 0) {
		if (ret != -ESRCH)
			s->st.errors++;
		s->ncopies--;
		return;
	}
	syscall_undo_eintr(s, t->tid, &c->regs);
	n = remote_read(s->pid, c->regs.rsp, c->data, stack_copy_len(s, t, c->regs.rsp));
	if (n > 0)
		c->len = (size_t)n;
	else if (n != -ESRCH)
		s->st.errors++;
	c->ok = true;
}

static void interrupt(struct sampler *s, struct thread *t)
{
	t->interrupt_ns = monotonic_ns();
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) < 0) {
		if (errno != ESRCH)
			s->st.errors++;
		return;
	}
	t->interrupt_sent = true;
	t->want_copy = true;
	s->pending_traps++;
}

/* Threads that died between the interrupt and the trap never trap. */
static void forget_dead_traps(struct sampler *s, uint64_t since)
{
	bool give_up = monotonic_ns() - since > TRAP_GIVE_UP_NS;

	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];
		char c;

		if (t->gone || !t->interrupt_sent)
			continue;
		c = thread_state(s, t);
		if (c == 0 || c == 'Z' || c == 'X') {
			thread_remove(s, t);
		} else if (give_up) {
			/* Its trap is handled as a plain resume when it comes. */
			t->interrupt_sent = t->want_copy = false;
			s->pending_traps--;
			s->st.errors++;
		}
	}
}

static void collect_traps(struct sampler *s)
{
	uint64_t since = monotonic_ns();

	while (s->pending_traps > 0 && !s->exited) {
		if (stops_wait(s, TRAP_WAIT_MS) == 0)
			forget_dead_traps(s, since);
	}
	s->pending_traps = 0;
}

static bool same_blocked(const struct thread *t, const struct blocked_state *b)
{
	return t->blocked_valid && t->blocked_nr == b->nr &&
	       t->blocked_sp == b->sp && t->blocked_pc == b->pc;
}

/*
 * A blocked thread's user stack cannot change while it sleeps: read it
 * without stopping it, then check it still sleeps in the same place. If it
 * woke meanwhile, the copy may be torn: it goes to the running ones.
 */
static bool sample_blocked(struct sampler *s, struct thread *t, uint8_t *buf,
			   uint64_t now, uint64_t weight)
{
	struct blocked_state b, again;
	const struct sym_mapping *m;
	size_t len = s->opt.stack_bytes;
	ssize_t n;
	int ret;

	ret = thread_blocked_state(s, t, &b);
	if (ret == -EAGAIN)
		return false;
	if (ret < 0)
		return true; /* gone */
	if (same_blocked(t, &b)) {
		stacks_add_blocked(s, t, &b, NULL, 0, now, weight);
		return true;
	}
	m = sym_process_mapping(s->sym, b.sp);
	if (m && m->end - b.sp < len)
		len = (size_t)(m->end - b.sp);
	n = remote_read(s->pid, b.sp, buf, len);
	if (n < 0)
		n = 0;
	ret = thread_blocked_state(s, t, &again);
	if (ret == -EAGAIN || (ret == 0 && (again.nr != b.nr || again.sp != b.sp || again.pc != b.pc)))
		return false;
	if (ret < 0)
		return true;
	stacks_add_blocked(s, t, &b, buf, (size_t)n, now, weight);
	return true;
}

static int grow_list(struct thread ***list, size_t *cap, size_t need)
{
	struct thread **n;

	if (need <= *cap)
		return 0;
	n = realloc(*list, need * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*list = n;
	*cap = need;
	return 0;
}

void tick_sample(struct sampler *s, uint64_t now)
{
	uint64_t weight = s->last_tick_ns ? now - s->last_tick_ns : s->period_ns;
	size_t nblocked = 0, nlate = 0;

	s->last_tick_ns = now;
	s->tick++;
	s->st.ticks++;
	s->ncopies = 0;
	if (grow_list(&s->blocked, &s->cap_blocked, s->nthreads) < 0) {
		s->st.errors++;
		return;
	}
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];
		char c;

		if (t->gone || t->listening || t->interrupt_sent || t->detaching)
			continue;
		c = thread_state(s, t);
		if (c == 'R')
			interrupt(s, t);
		else if ((c == 'S' || c == 'D') && s->opt.idle)
			s->blocked[nblocked++] = t;
	}
	collect_traps(s);

	/* Everyone runs again; now the threads that never stopped. */
	if (nblocked && !s->blocked_buf)
		s->blocked_buf = malloc(s->opt.stack_bytes);
	for (size_t i = 0; i < nblocked && s->blocked_buf; i++) {
		struct thread *t = s->blocked[i];

		if (!t->gone && !sample_blocked(s, t, s->blocked_buf, now, weight))
			s->blocked[nlate++] = t;
	}
	for (size_t i = 0; i < nlate; i++)
		if (!s->blocked[i]->gone)
			interrupt(s, s->blocked[i]);
	if (nlate)
		collect_traps(s);

	for (size_t i = 0; i < s->ncopies; i++) {
		struct stack_sample *c = &s->copies[i];

		if (c->ok)
			stacks_add_running(s, c, now, weight);
	}
	s->ncopies = 0;
	threads_sweep(s);
}
