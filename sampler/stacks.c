// SPDX-License-Identifier: MIT
/*
 * Copies to profile stacks: unwind, symbolize each address once (cached
 * until the maps change), and walk the stack trie from the outermost frame.
 * Runs after the target has been resumed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "sampler/internal.h"
#include "sampler/python/pysample.h"
#include "sampler/stacks.h"
#include "sampler/tick.h"
#include "symbolize/symbolize.h"
#include "syscall_names.h"

#define MAX_FRAMES 1024

struct addr_cache {
	uint64_t generation;
	uint64_t *keys;   /* address + 1, so 0 marks a free slot */
	uint32_t *frames;
	size_t cap, used;
};

int addr_cache_new(struct addr_cache **out)
{
	struct addr_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->cap = 4096;
	c->keys = calloc(c->cap, sizeof(*c->keys));
	c->frames = calloc(c->cap, sizeof(*c->frames));
	if (!c->keys || !c->frames) {
		addr_cache_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void addr_cache_free(struct addr_cache *c)
{
	if (!c)
		return;
	free(c->keys);
	free(c->frames);
	free(c);
}

static size_t slot_of(const struct addr_cache *c, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (c->cap - 1);

	while (c->keys[i] && c->keys[i] != key)
		i = (i + 1) & (c->cap - 1);
	return i;
}

static int cache_grow(struct addr_cache *c)
{
	struct addr_cache n = { .cap = c->cap * 2 };

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.frames = calloc(n.cap, sizeof(*n.frames));
	if (!n.keys || !n.frames) {
		free(n.keys);
		free(n.frames);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->keys[i])
			continue;
		j = slot_of(&n, c->keys[i]);
		n.keys[j] = c->keys[i];
		n.frames[j] = c->frames[i];
	}
	free(c->keys);
	free(c->frames);
	c->keys = n.keys;
	c->frames = n.frames;
	c->cap = n.cap;
	return 0;
}

static void cache_clear(struct addr_cache *c)
{
	memset(c->keys, 0, c->cap * sizeof(*c->keys));
	c->used = 0;
}

static int intern_native(struct profile *p, const char *name, const char *module,
			 uint32_t *frame)
{
	struct frame f = { .kind = FRAME_NATIVE };
	int ret;

	ret = profile_intern_string(p, name, &f.name);
	if (!ret)
		ret = profile_intern_string(p, module, &f.module);
	if (!ret)
		ret = profile_intern_frame(p, &f, frame);
	return ret;
}

/* With --native-lines: the frame of one source line, its file as module. */
static int intern_native_line(struct profile *p, const char *name, const char *file,
			      uint32_t line, uint32_t *frame)
{
	struct frame f = { .kind = FRAME_NATIVE, .line = line };
	int ret;

	ret = profile_intern_string(p, name, &f.name);
	if (!ret)
		ret = profile_intern_string(p, file, &f.module);
	if (!ret)
		ret = profile_intern_frame(p, &f, frame);
	return ret;
}

int stacks_frame_for_addr(struct sampler *s, uint64_t addr, uint32_t *frame)
{
	struct addr_cache *c = s->addrs;
	struct sym_location loc;
	const char *file;
	uint32_t line;
	char unknown[128];
	size_t i;
	int ret;

	if (c->generation != sym_process_generation(s->sym)) {
		cache_clear(c);
		c->generation = sym_process_generation(s->sym);
	}
	i = slot_of(c, addr + 1);
	if (c->keys[i]) {
		*frame = c->frames[i];
		return 0;
	}
	ret = sym_process_resolve(s->sym, addr, &loc);
	if (ret < 0)
		return ret;
	if (!loc.function)
		snprintf(unknown, sizeof(unknown), "0x%" PRIx64 " (%s)", loc.vaddr, loc.module);
	if (s->opt.native_lines && loc.function &&
	    sym_process_line(s->sym, addr, &file, &line) == 0 && line)
		ret = intern_native_line(s->profile, loc.function, file, line, frame);
	else
		ret = intern_native(s->profile, loc.function ? loc.function : unknown, loc.module, frame);
	if (ret < 0)
		return ret;
	/* Resolving may have re-read the maps: the cache starts again then. */
	if (c->generation != sym_process_generation(s->sym))
		return 0;
	if ((c->used + 1) * 4 > c->cap * 3 && cache_grow(c) < 0)
		return 0;
	i = slot_of(c, addr + 1);
	c->keys[i] = addr + 1;
	c->frames[i] = *frame;
	c->used++;
	return 0;
}

/*
 * Where an unwind stopped short, the stack starts with a marker saying why,
 * so a cut stack is never taken for a whole one.
 */
static const char *end_marker(enum sym_unwind_end end)
{
	switch (end) {
	case SYM_UNWIND_COMPLETE:
		return NULL;
	case SYM_UNWIND_NEEDS_REGISTERS:
		return "[truncated: needs registers of a stopped thread]";
	case SYM_UNWIND_COPY_END:
		return "[truncated: beyond the stack copy]";
	case SYM_UNWIND_FRAME_LIMIT:
		return "[truncated: frame limit]";
	case SYM_UNWIND_NO_INFO:
		break;
	}
	return "[truncated: no unwind info]";
}

/* Interns the stack of pcs (leaf first, already the addresses to look up)
 * under the marker for how the unwind ended. */
static int stack_from_pcs(struct sampler *s, const uint64_t *pcs, int n,
			  enum sym_unwind_end end, uint32_t *stack)
{
	const char *marker = end_marker(end);
	uint32_t id = 0, frame;
	int ret;

	if (marker) {
		ret = intern_native(s->profile, marker, "", &frame);
		if (!ret)
			ret = profile_intern_stack(s->profile, 0, frame, &id);
		if (ret < 0)
			return ret;
	}
	for (int i = n - 1; i >= 0; i--) {
		ret = stacks_frame_for_addr(s, pcs[i], &frame);
		if (!ret)
			ret = profile_intern_stack(s->profile, id, frame, &id);
		if (ret < 0)
			return ret;
	}
	*stack = id;
	return 0;
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

/* Learns the thread's stack mapping and drops bytes copied beyond it. */
static size_t trim_to_stack(struct sampler *s, struct thread *t, uint64_t sp, size_t len)
{
	const struct sym_mapping *m;

	if (!t || sp < t->stack_lo || sp >= t->stack_hi) {
		m = sym_process_mapping(s->sym, sp);
		if (!m)
			return len;
		if (t) {
			t->stack_lo = m->start;
			t->stack_hi = m->end;
		}
		if (m->end - sp < len)
			len = (size_t)(m->end - sp);
		return len;
	}
	return t->stack_hi - sp < len ? (size_t)(t->stack_hi - sp) : len;
}

/*
 * A thread executes only mapped code: a leaf outside the maps means they
 * changed (a library loaded just now); read them again, once a tick.
 */
static void leaf_maps_current(struct sampler *s, uint64_t pc)
{
	if (sym_process_find(s->sym, pc) || s->pass.maps_reread_tick == s->tick)
		return;
	s->pass.maps_reread_tick = s->tick;
	sym_process_reload(s->sym);
}

static void regs_from_user(const struct user_regs_struct *u, struct sym_regs *r)
{
	r->r[SYM_REG_RAX] = u->rax;
	r->r[SYM_REG_RDX] = u->rdx;
	r->r[SYM_REG_RCX] = u->rcx;
	r->r[SYM_REG_RBX] = u->rbx;
	r->r[SYM_REG_RSI] = u->rsi;
	r->r[SYM_REG_RDI] = u->rdi;
	r->r[SYM_REG_RBP] = u->rbp;
	r->r[SYM_REG_RSP] = u->rsp;
	r->r[SYM_REG_R8] = u->r8;
	r->r[SYM_REG_R9] = u->r9;
	r->r[SYM_REG_R10] = u->r10;
	r->r[SYM_REG_R11] = u->r11;
	r->r[SYM_REG_R12] = u->r12;
	r->r[SYM_REG_R13] = u->r13;
	r->r[SYM_REG_R14] = u->r14;
	r->r[SYM_REG_R15] = u->r15;
	r->r[SYM_REG_RIP] = u->rip;
	r->known = (1u << SYM_REG_COUNT) - 1;
	r->syscall = (int64_t)u->orig_rax;
}

/* Unwinds a copy and interns its stack, merged with the Python frames
 * read with it; *flags gets SAMPLE_TRUNCATED and SAMPLE_GIL, *python
 * whether there were Python frames. */
static int unwind_copy(struct sampler *s, struct thread *t, const struct sym_regs *regs,
		       const struct stack_sample *c, uint32_t *stack, uint32_t *flags,
		       bool *python)
{
	struct sym_stack_copy copy = {
		.base = regs->r[SYM_REG_RSP] - c->below,
		.data = c->data,
		.capped = c->capped,
	};
	enum sym_unwind_end end;
	uint64_t pcs[MAX_FRAMES];
	uint64_t t0 = monotonic_ns();
	int n;

	leaf_maps_current(s, regs->r[SYM_REG_RIP]);
	copy.len = trim_to_stack(s, t, copy.base, c->len);
	n = sym_unwind(s->sym, regs, &copy, pcs, MAX_FRAMES, &end);
	if (n <= 0) {
		pcs[0] = regs->r[SYM_REG_RIP];
		n = 1;
		end = SYM_UNWIND_NO_INFO;
	}
	stats_unwind_time(s, monotonic_ns() - t0);
	if (end != SYM_UNWIND_COMPLETE)
		*flags |= SAMPLE_TRUNCATED;
	*python = false;
	if (!c->has_py)
		return stack_from_pcs(s, pcs, n, end, stack);
	if (c->gil)
		*flags |= SAMPLE_GIL;
	return pysample_merge(s, c, pcs, n, end_marker(end), stack, python);
}

int stacks_add_running(struct sampler *s, const struct stack_sample *c)
{
	struct thread *t = thread_find(s, c->tid);
	struct sym_regs regs;
	uint32_t stack, flags = 0;
	bool python;
	int ret;

	regs_from_user(&c->regs, &regs);
	ret = unwind_copy(s, t, &regs, c, &stack, &flags, &python);
	if (ret < 0) {
		stats_error(s, SAMPLER_ERR_UNWIND);
		return ret;
	}
	if (t)
		stacks_name_thread(s, t);
	return stacks_add_sample(s, c->tid, stack, flags, c->time_ns, c->weight_ns);
}

int stacks_idle_leaf(struct sampler *s, int64_t nr, uint32_t parent, uint32_t *stack)
{
	const size_t nnames = sizeof(syscall_names) / sizeof(syscall_names[0]);
	struct frame f = { .kind = FRAME_IDLE };
	char name[64];
	uint32_t frame;
	int ret;

	if (nr >= 0 && (size_t)nr < nnames && syscall_names[nr])
		snprintf(name, sizeof(name), "[idle: %s]", syscall_names[nr]);
	else if (nr >= 0)
		snprintf(name, sizeof(name), "[idle: syscall %" PRId64 "]", nr);
	else
		snprintf(name, sizeof(name), "[idle]");
	ret = profile_intern_string(s->profile, name, &f.name);
	if (!ret)
		ret = profile_intern_frame(s->profile, &f, &frame);
	if (!ret)
		ret = profile_intern_stack(s->profile, parent, frame, stack);
	return ret;
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

/*
 * A blocked thread unwound from pc and sp alone: frames whose rules need
 * another register end in a marker. A thread that sleeps on in the same
 * place (syscall, sp, pc) keeps its last stack (c == NULL) until it moves.
 */
int stacks_add_blocked(struct sampler *s, struct thread *t,
		       const struct blocked_state *b, const struct stack_sample *c)
{
	uint32_t stack, flags = SAMPLE_IDLE;
	bool python = false;
	int ret;

	if (!c) {
		stacks_name_thread(s, t);
		return stacks_add_sample(s, t->tid, t->blocked_stack, t->blocked_flags, s->tick_now,
				  s->tick_weight);
	}
	{
		struct sym_regs regs = { .known = 1u << SYM_REG_RIP | 1u << SYM_REG_RSP };

		regs.r[SYM_REG_RIP] = b->pc;
		regs.r[SYM_REG_RSP] = b->sp;
		ret = unwind_copy(s, t, &regs, c, &stack, &flags, &python);
	}
	/* Kept for Python threads by default; for every thread with --idle. */
	if (!ret && !python && !s->opt.idle)
		return 0;
	if (!ret)
		ret = stacks_idle_leaf(s, b->nr, stack, &stack);
	if (ret < 0) {
		stats_error(s, SAMPLER_ERR_MEMORY);
		return ret;
	}
	if (t) {
		t->blocked_valid = true;
		t->blocked_nr = b->nr;
		t->blocked_sp = b->sp;
		t->blocked_pc = b->pc;
		t->blocked_stack = stack;
		t->blocked_flags = flags;
		t->blocked_runtime = b->runtime;
		stacks_name_thread(s, t);
	}
	return stacks_add_sample(s, c->tid, stack, flags, c->time_ns, c->weight_ns);
}

int intern_marker_frame(struct sampler *s, const char *name, uint32_t *frame)
{
	return intern_native(s->profile, name, "", frame);
}

int stacks_marker(struct sampler *s, const char *name, uint32_t parent, uint32_t *stack)
{
	uint32_t frame;
	int ret = intern_native(s->profile, name, "", &frame);

	return ret ? ret : profile_intern_stack(s->profile, parent, frame, stack);
}
