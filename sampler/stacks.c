// SPDX-License-Identifier: MIT
/*
 * The sampler's side of the after-resume path: a copy goes to the
 * builder (builder.c), which returns its sample; here the sample goes to
 * the profile with what the sampler knows of its thread (the ticks that
 * passed it by, a run-queue wait, its name, its blocked cache).
 */
#include <errno.h>
#include <stdlib.h>

#include "formats/formats.h"
#include "sampler/builder.h"
#include "sampler/internal.h"
#include "sampler/python/pysample.h"
#include "sampler/stacks.h"

int stacks_init(struct sampler *s)
{
	s->build = (struct sample_builder){
		.profile = s->profile,
		.idle = s->opt.idle,
		.native_lines = s->opt.native_lines,
		.native_all = s->opt.native_all,
		.name_python = pysample_name_frames,
		.name_ctx = s,
		.st = &s->st,
		.unwind_hist = &s->unwind_hist,
	};
	return addr_cache_new(&s->build.addrs);
}

void stacks_free(struct sampler *s)
{
	addr_cache_free(s->build.addrs);
	s->build.addrs = NULL;
}

/* The builder, in step with what changes under it: the symbols are
 * opened late (a follower's), or replaced (a launcher's child). */
struct sample_builder *stacks_builder(struct sampler *s)
{
	s->build.sym = s->sym;
	s->build.tick = s->tick;
	return &s->build;
}

void stacks_name_thread(struct sampler *s, struct thread *t)
{
	char name[64];
	uint64_t every = (uint64_t)s->opt.rate_hz;

	/* Python's threading names it; else names change (pthread_setname_np
	 * after start): look again each second. */
	if (t->py_named)
		return;
	if (t->name_tick && s->tick - t->name_tick < (every ? every : 1))
		return;
	t->name_tick = s->tick;
	if (thread_read_name(s, t->tid, name, sizeof(name)) == 0)
		profile_set_thread(s->profile, (uint32_t)s->pid, (uint32_t)t->tid, name);
}

void thread_passed_by(struct sampler *s, struct thread *t)
{
	s->threads_passed += !t->passed_ns;
	t->passed_ns += s->tick_weight;
}

int stacks_add_sample(struct sampler *s, pid_t tid, uint32_t stack,
		      uint32_t flags, uint64_t now, uint64_t weight)
{
	/* A run-queue wait read more than two periods ago says nothing now;
	 * no thread is looked up while none waits. */
	bool recent = s->cpu_wait_seen_at && s->cpu_wait_seen_at + 2 * s->period_ns >= s->tick_now;
	struct thread *t = (flags & SAMPLE_IDLE || !recent) && !s->threads_passed ? NULL :
			   thread_find(s, tid);
	bool waits = t && !(flags & SAMPLE_IDLE) && recent && t->cpu_wait &&
		     t->cpu_wait_at + 2 * s->period_ns >= s->tick_now;
	struct sample smp = {
		.time_ns = now,
		.pid = (uint32_t)s->pid,
		.tid = (uint32_t)tid,
		.stack = stack,
		.weight_ns = weight,
		.flags = flags | (waits ? SAMPLE_CPU_WAIT : 0),
	};
	int ret;

	if (t && t->passed_ns) {
		smp.weight_ns += t->passed_ns;
		t->passed_ns = 0;
		s->threads_passed--;
	}
	ret = profile_add_sample(s->profile, &smp);
	if (ret < 0) {
		stats_error(s, SAMPLER_ERR_MEMORY);
		return ret;
	}
	s->st.samples++;
	if (flags & SAMPLE_IDLE)
		s->st.idle_samples++;
	if (flags & SAMPLE_TRUNCATED)
		s->st.truncated++;
	return 0;
}

/*
 * The same syscall, sp and pc are not enough: two callers with frames of
 * one size reach the same wrapper at the same depth. A thread that has not
 * run at all since (its CPU time unchanged) cannot have changed its stack.
 */
bool stacks_blocked_unchanged(const struct thread *t, const struct blocked_state *b)
{
	return t->blocked_valid && t->blocked_nr == b->nr && t->blocked_sp == b->sp &&
	       t->blocked_pc == b->pc && b->runtime && t->blocked_runtime == b->runtime;
}

/* Unwound later, off the thread: its loader is not read (the line
 * tells the summary's loaders apart). */
static void loader_done(struct sampler *s, const struct stack_sample *c)
{
	if (c->has_py && s->py)
		s->py->loader_at = NULL;
}

int stacks_add_running(struct sampler *s, const struct stack_sample *c)
{
	struct thread *t = thread_find(s, c->tid);
	struct built_sample b;
	int ret = builder_stack(stacks_builder(s), c, t ? &t->stack : NULL, &b);

	loader_done(s, c);
	if (ret < 0)
		return ret;
	if (t)
		stacks_name_thread(s, t);
	return stacks_add_sample(s, b.tid, b.stack, b.flags, b.time_ns, b.weight_ns);
}

/*
 * A thread that sleeps on in the same place (syscall, sp, pc) keeps its
 * last stack (c == NULL) until it moves.
 */
int stacks_add_blocked(struct sampler *s, struct thread *t,
		       const struct blocked_state *b, const struct stack_sample *c)
{
	struct built_sample out;
	int ret;

	if (!c) {
		stacks_name_thread(s, t);
		return stacks_add_sample(s, t->tid, t->blocked_stack, t->blocked_flags, s->tick_now,
				  s->tick_weight);
	}
	ret = builder_stack(stacks_builder(s), c, t ? &t->stack : NULL, &out);
	loader_done(s, c);
	if (ret < 0 || !out.keep)
		return ret;
	if (t) {
		t->blocked_valid = true;
		t->blocked_nr = b->nr;
		t->blocked_sp = b->sp;
		t->blocked_pc = b->pc;
		t->blocked_stack = out.stack;
		t->blocked_flags = out.flags;
		t->blocked_runtime = b->runtime;
		stacks_name_thread(s, t);
	}
	return stacks_add_sample(s, out.tid, out.stack, out.flags, out.time_ns, out.weight_ns);
}
