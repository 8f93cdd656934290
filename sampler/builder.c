// SPDX-License-Identifier: MIT
/*
 * Copies to profile stacks: unwind, symbolize each address once (cached
 * until the maps change), and walk the stack trie from the outermost frame.
 * Runs after the target has been resumed; touches neither the target nor
 * the sampler, only what struct sample_builder holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/formats.h"
#include "sampler/builder.h"
#include "sampler/histogram.h"
#include "sampler/python/pysample.h"
#include "symbolize/symbolize.h"
#include "syscall_names.h"

#define MAX_FRAMES 1024

/*
 * Looked up for every native frame of every sample. The one hash table
 * (common/hash_table.c) indexes entries kept here: a hit costs some 15 ns
 * more than a table of its own (the comparison is a call, the entries a
 * second array), against about 2 us to unwind the frame, so it is not
 * seen in a sample's time.
 */
struct addr_entry {
	uint64_t addr;
	uint32_t frame;
};

struct addr_cache {
	uint64_t generation;       /* of the maps the entries were resolved in */
	struct hash_table index;   /* addr -> entries[] */
	struct addr_entry *entries;
	size_t n, cap;
};

struct addr_key {
	const struct addr_entry *entries;
	uint64_t addr;
};

static bool same_addr(const void *key, uint32_t id)
{
	const struct addr_key *k = key;

	return k->entries[id].addr == k->addr;
}

/* Code addresses share their high bits: a multiplicative hash's top half
 * spreads them. */
static uint32_t hash_of_addr(uint64_t addr)
{
	return (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 32);
}

int addr_cache_new(struct addr_cache **out)
{
	struct addr_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*out = c;
	return 0;
}

void addr_cache_free(struct addr_cache *c)
{
	if (!c)
		return;
	hash_table_free(&c->index);
	free(c->entries);
	free(c);
}

static void cache_clear(struct addr_cache *c)
{
	hash_table_free(&c->index);
	c->n = 0;
}

/* The cached frame of addr; false when not cached. */
static bool cache_find(const struct addr_cache *c, uint64_t addr, uint32_t *frame)
{
	struct addr_key key = { c->entries, addr };
	const struct hash_slot *slot;

	if (!c->n)
		return false;
	slot = hash_table_find(&c->index, hash_of_addr(addr), same_addr, &key);
	if (!slot->ref)
		return false;
	*frame = c->entries[slot->ref - 1].frame;
	return true;
}

/* Out of memory, the address is only not cached. */
static void cache_add(struct addr_cache *c, uint64_t addr, uint32_t frame)
{
	struct addr_key key;
	struct hash_slot *slot;
	uint32_t hash = hash_of_addr(addr);

	if (c->n >= UINT32_MAX || hash_table_reserve(&c->index) < 0 ||
	    ARRAY_RESERVE(c->entries, c->cap, c->n + 1, 1024) < 0)
		return;
	key = (struct addr_key){ c->entries, addr };
	slot = hash_table_find(&c->index, hash, same_addr, &key);
	if (slot->ref)
		return;
	c->entries[c->n] = (struct addr_entry){ addr, frame };
	hash_table_fill(&c->index, slot, hash, (uint32_t)c->n++);
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

int builder_frame_for_addr(struct sample_builder *b, uint64_t addr, uint32_t *frame)
{
	struct addr_cache *c = b->addrs;
	struct sym_location loc;
	const char *file;
	uint32_t line;
	char unknown[128];
	int ret;

	if (c->generation != sym_process_generation(b->sym)) {
		cache_clear(c);
		c->generation = sym_process_generation(b->sym);
	}
	if (cache_find(c, addr, frame))
		return 0;
	ret = sym_process_resolve(b->sym, addr, &loc);
	if (ret < 0)
		return ret;
	if (!loc.function)
		snprintf(unknown, sizeof(unknown), "0x%" PRIx64 " (%s)", loc.vaddr, loc.module);
	if (b->native_lines && loc.function &&
	    sym_process_line(b->sym, addr, &file, &line) == 0 && line)
		ret = intern_native_line(b->profile, loc.function, file, line, frame);
	else
		ret = intern_native(b->profile, loc.function ? loc.function : unknown, loc.module, frame);
	if (ret < 0)
		return ret;
	/* Resolving may have re-read the maps: the cache starts again then. */
	if (c->generation == sym_process_generation(b->sym))
		cache_add(c, addr, *frame);
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
static int stack_from_pcs(struct sample_builder *b, const uint64_t *pcs, int n,
			  enum sym_unwind_end end, uint32_t *stack)
{
	const char *marker = end_marker(end);
	uint32_t id = 0, frame;
	int ret;

	if (marker) {
		ret = intern_native(b->profile, marker, "", &frame);
		if (!ret)
			ret = profile_intern_stack(b->profile, 0, frame, &id);
		if (ret < 0)
			return ret;
	}
	for (int i = n - 1; i >= 0; i--) {
		ret = builder_frame_for_addr(b, pcs[i], &frame);
		if (!ret)
			ret = profile_intern_stack(b->profile, id, frame, &id);
		if (ret < 0)
			return ret;
	}
	*stack = id;
	return 0;
}

void builder_error(struct sample_builder *b, enum sampler_error_kind kind)
{
	b->st->errors++;
	b->st->errors_by_kind[kind]++;
}

static void unwind_time(struct sample_builder *b, uint64_t ns)
{
	histogram_add(b->unwind_hist, ns);
	if (!b->st->unwinds++)
		b->st->unwind_first_ns = ns;
}

/* Learns the thread's stack mapping and drops bytes copied beyond it. */
static size_t trim_to_stack(struct sample_builder *b, struct stack_span *span, uint64_t sp,
			    size_t len)
{
	const struct sym_mapping *m;

	if (!span || sp < span->lo || sp >= span->hi) {
		m = sym_process_mapping(b->sym, sp);
		if (!m)
			return len;
		if (span) {
			span->lo = m->start;
			span->hi = m->end;
		}
		if (m->end - sp < len)
			len = (size_t)(m->end - sp);
		return len;
	}
	return span->hi - sp < len ? (size_t)(span->hi - sp) : len;
}

/*
 * A thread executes only mapped code: a leaf outside the maps means they
 * changed (a library loaded just now); read them again, once a tick.
 */
static void leaf_maps_current(struct sample_builder *b, uint64_t pc)
{
	if (sym_process_find(b->sym, pc) || b->maps_reread_tick == b->tick)
		return;
	b->maps_reread_tick = b->tick;
	sym_process_reload(b->sym);
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
static int unwind_copy(struct sample_builder *b, struct stack_span *span,
		       const struct sym_regs *regs, const struct stack_sample *c,
		       uint32_t *stack, uint32_t *flags, bool *python)
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

	leaf_maps_current(b, regs->r[SYM_REG_RIP]);
	copy.len = trim_to_stack(b, span, copy.base, c->len);
	n = sym_unwind(b->sym, regs, &copy, pcs, MAX_FRAMES, &end);
	if (n <= 0) {
		pcs[0] = regs->r[SYM_REG_RIP];
		n = 1;
		end = SYM_UNWIND_NO_INFO;
	}
	unwind_time(b, monotonic_ns() - t0);
	if (end != SYM_UNWIND_COMPLETE)
		*flags |= SAMPLE_TRUNCATED;
	*python = false;
	if (!c->has_py)
		return stack_from_pcs(b, pcs, n, end, stack);
	if (c->gil)
		*flags |= SAMPLE_GIL;
	return pysample_merge(b, c, pcs, n, end_marker(end), stack, python);
}

/*
 * A blocked thread is unwound from pc and sp alone (frames whose rules
 * need another register end in a marker) and gets the idle leaf of its
 * syscall; kept for Python threads by default, for every thread with
 * --idle.
 */
int builder_stack(struct sample_builder *b, const struct stack_sample *c,
		  struct stack_span *span, struct built_sample *out)
{
	struct sym_regs regs = { .known = 1u << SYM_REG_RIP | 1u << SYM_REG_RSP };
	int ret;

	*out = (struct built_sample){
		.tid = c->tid,
		.time_ns = c->time_ns,
		.weight_ns = c->weight_ns,
		.flags = c->blocked ? SAMPLE_IDLE : 0,
		.keep = true,
	};
	if (c->blocked) {
		regs.r[SYM_REG_RIP] = c->state.pc;
		regs.r[SYM_REG_RSP] = c->state.sp;
	} else {
		regs_from_user(&c->regs, &regs);
	}
	ret = unwind_copy(b, span, &regs, c, &out->stack, &out->flags, &out->python);
	if (!ret && c->blocked && !out->python && !b->idle) {
		out->keep = false;
		return 0;
	}
	if (!ret && c->blocked)
		ret = builder_idle_leaf(b, c->state.nr, out->stack, &out->stack);
	if (ret < 0)
		builder_error(b, c->blocked ? SAMPLER_ERR_MEMORY : SAMPLER_ERR_UNWIND);
	return ret;
}

int builder_idle_leaf(struct sample_builder *b, int64_t nr, uint32_t parent, uint32_t *stack)
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
	ret = profile_intern_string(b->profile, name, &f.name);
	if (!ret)
		ret = profile_intern_frame(b->profile, &f, &frame);
	if (!ret)
		ret = profile_intern_stack(b->profile, parent, frame, stack);
	return ret;
}

int builder_marker_frame(struct sample_builder *b, const char *name, uint32_t *frame)
{
	return intern_native(b->profile, name, "", frame);
}

int builder_marker(struct sample_builder *b, const char *name, uint32_t parent, uint32_t *stack)
{
	uint32_t frame;
	int ret = intern_native(b->profile, name, "", &frame);

	return ret ? ret : profile_intern_stack(b->profile, parent, frame, stack);
}
