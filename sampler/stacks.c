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
#include "symbolize/symbolize.h"
#include "syscall_names.h"

#define MAX_FRAMES 512

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

static int frame_for_addr(struct sampler *s, uint64_t addr, uint32_t *frame)
{
	struct addr_cache *c = s->addrs;
	struct sym_location loc;
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

/* Interns the stack of ips (leaf first); callers are looked up at ra - 1. */
static int stack_from_ips(struct sampler *s, const uint64_t *ips, int n,
			  uint32_t *stack)
{
	uint32_t id = 0, frame;
	int ret;

	for (int i = n - 1; i >= 0; i--) {
		uint64_t addr = i ? ips[i] - 1 : ips[i];

		ret = frame_for_addr(s, addr, &frame);
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

	/* Names change (pthread_setname_np after start): look again each second. */
	if (t->name_tick && s->tick - t->name_tick < (every ? every : 1))
		return;
	t->name_tick = s->tick;
	if (thread_read_name(s, t->tid, name, sizeof(name)) == 0)
		profile_set_thread(s->profile, (uint32_t)s->pid, (uint32_t)t->tid, name);
}

static int add_sample(struct sampler *s, pid_t tid, uint32_t stack,
		      uint32_t flags, uint64_t now, uint64_t weight)
{
	struct sample smp = {
		.time_ns = now,
		.pid = (uint32_t)s->pid,
		.tid = (uint32_t)tid,
		.stack = stack,
		.weight_ns = weight,
		.flags = flags,
	};
	int ret = profile_add_sample(s->profile, &smp);

	if (ret < 0) {
		s->st.errors++;
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
	if (sym_process_find(s->sym, pc) || s->maps_reread_tick == s->tick)
		return;
	s->maps_reread_tick = s->tick;
	sym_process_reload(s->sym);
}

int stacks_add_running(struct sampler *s, const struct stack_sample *c,
		       uint64_t now, uint64_t weight)
{
	struct thread *t = thread_find(s, c->tid);
	struct sym_stack_copy copy = { .base = c->regs.rsp, .data = c->data };
	uint64_t ips[MAX_FRAMES];
	uint32_t stack, flags = 0;
	bool truncated = false;
	int n, ret;

	leaf_maps_current(s, c->regs.rip);
	copy.len = trim_to_stack(s, t, c->regs.rsp, c->len);
	n = sym_unwind_fp(s->sym, c->regs.rip, c->regs.rsp, c->regs.rbp, &copy,
			  ips, MAX_FRAMES, &truncated);
	if (n <= 0) {
		ips[0] = c->regs.rip;
		n = 1;
		truncated = true;
	}
	ret = stack_from_ips(s, ips, n, &stack);
	if (ret < 0) {
		s->st.errors++;
		return ret;
	}
	if (truncated)
		flags |= SAMPLE_TRUNCATED;
	if (t)
		stacks_name_thread(s, t);
	return add_sample(s, c->tid, stack, flags, now, weight);
}

static int intern_idle_leaf(struct sampler *s, int64_t nr, uint32_t parent,
			    uint32_t *stack)
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

/* The stack is interned again only when (syscall, sp, pc) changed. */
int stacks_add_blocked(struct sampler *s, struct thread *t,
		       const struct blocked_state *b, uint64_t now, uint64_t weight)
{
	uint32_t stack;
	int ret;

	if (!t->blocked_valid || t->blocked_nr != b->nr || t->blocked_sp != b->sp ||
	    t->blocked_pc != b->pc) {
		leaf_maps_current(s, b->pc);
		ret = stack_from_ips(s, &b->pc, 1, &stack);
		if (!ret)
			ret = intern_idle_leaf(s, b->nr, stack, &stack);
		if (ret < 0) {
			s->st.errors++;
			return ret;
		}
		t->blocked_valid = true;
		t->blocked_nr = b->nr;
		t->blocked_sp = b->sp;
		t->blocked_pc = b->pc;
		t->blocked_stack = stack;
	}
	stacks_name_thread(s, t);
	return add_sample(s, t->tid, t->blocked_stack, SAMPLE_IDLE | SAMPLE_TRUNCATED, now, weight);
}
