// SPDX-License-Identifier: MIT
/*
 * DWARF unwinding of a copied stack with libunwind's remote interface and
 * our own accessors, the way perf unwinds its DWARF samples: registers
 * from the sample, stack words from the copy, .eh_frame_hdr/.eh_frame from
 * the module's mapped file (image.c), procedure info from the module's
 * binary-search table through dwarf_search_unwind_table. libunwind's
 * global cache keeps parsed FDEs between samples; it is flushed when the
 * maps change. The target is never read here.
 */
#include <errno.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "symbolize/internal.h"

/* Exported by libunwind without a public prototype. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define UNWIND_CACHE_SIZE 4096

struct sym_unwinder {
	unw_addr_space_t as;
	uint64_t generation;
};

/* What one unwind reads from. */
struct unwind_ctx {
	struct sym_process *p;
	const struct sym_regs *regs;
	const struct sym_stack_copy *stack;
	/* The module of the last read: most reads fall in one. */
	const struct sym_image *img;
	uint64_t bias, lo, hi;
	bool needed_register;
	bool read_past_copy;
	bool no_info;         /* the frame being stepped has no CFI */
	unsigned reads_left;  /* bounds libunwind on crafted tables */
};

static int image_at(struct unwind_ctx *c, uint64_t addr)
{
	if (c->img && addr >= c->lo && addr < c->hi)
		return 0;
	c->img = NULL;
	return sym_process_image(c->p, addr, &c->img, &c->bias, &c->lo, &c->hi);
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct unwind_ctx *c = arg;
	const struct sym_eh_table *eh;
	unw_dyn_info_t di;
	int ret;

	if (image_at(c, ip) < 0 || !(eh = sym_image_eh_table(c->img))) {
		c->no_info = true;
		return -UNW_ENOINFO;
	}
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = eh->text_start + c->bias;
	di.end_ip = eh->text_end + c->bias;
	di.u.rti.segbase = eh->hdr_vaddr + c->bias;
	di.u.rti.table_data = eh->table_vaddr + c->bias;
	/* In unw_word_t units, not entries: each entry is two 4-byte words. */
	di.u.rti.table_len = eh->fde_count * 8 / sizeof(unw_word_t);
	ret = _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	if (ret == -UNW_ENOINFO)
		c->no_info = true;
	return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* libunwind frees table-format info itself. */
	(void)as;
	(void)pi;
	(void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
		      void *arg)
{
	struct unwind_ctx *c = arg;
	const struct sym_stack_copy *s = c->stack;

	(void)as;
	if (write)
		return -UNW_EINVAL;
	/* A CFI expression can loop (DW_OP_skip back to itself) and libunwind
	 * sets no limit: every byte it evaluates comes through here. */
	if (!c->reads_left)
		return -UNW_EINVAL;
	c->reads_left--;
	if (addr >= s->base && addr - s->base <= s->len && s->len - (addr - s->base) >= sizeof(*val)) {
		memcpy(val, s->data + (addr - s->base), sizeof(*val));
		return 0;
	}
	if (addr >= s->base && s->capped && addr - s->base < s->len + (1u << 20)) {
		c->read_past_copy = true;
		return -UNW_EINVAL;
	}
	if (image_at(c, addr) == 0 && sym_image_read(c->img, addr - c->bias, val, sizeof(*val)) == 0)
		return 0;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
		      void *arg)
{
	struct unwind_ctx *c = arg;

	(void)as;
	if (write)
		return -UNW_EREADONLYREG;
	if (reg < 0 || reg >= SYM_REG_COUNT)
		return -UNW_EBADREG;
	if (!(c->regs->known & (1u << reg))) {
		c->needed_register = true;
		return -UNW_EBADREG;
	}
	*val = c->regs->r[reg];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cursor, void *arg)
{
	(void)as;
	(void)cursor;
	(void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	/* Names come from symbolize's own tables, not from here. */
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)off;
	(void)arg;
	return -UNW_ENOINFO;
}

static const unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	unw_destroy_addr_space(u->as);
	free(u);
}

static struct sym_unwinder *unwinder_of(struct sym_process *p)
{
	struct sym_unwinder **slot = sym_process_unwinder(p), *u = *slot;

	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return NULL;
		/* libunwind copies the table; it never writes through it. */
		u->as = unw_create_addr_space((unw_accessors_t *)&accessors, 0);
		if (!u->as) {
			free(u);
			return NULL;
		}
		unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
		unw_set_cache_size(u->as, UNWIND_CACHE_SIZE, 0);
		u->generation = sym_process_generation(p);
		*slot = u;
	}
	/* Cached FDEs are keyed by address: stale once the maps changed. */
	if (u->generation != sym_process_generation(p)) {
		unw_flush_cache(u->as, 0, 0);
		u->generation = sym_process_generation(p);
	}
	return u;
}

/*
 * The x86-64 signal trampoline (glibc's and musl's __restore_rt) is
 * "mov $15, %rax; syscall" (rt_sigreturn). libunwind's own check wants a
 * particular byte after it, which this glibc does not have.
 */
static bool is_sigreturn(struct unwind_ctx *c, uint64_t ip)
{
	static const unsigned char code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	unw_word_t w[2];

	if (access_mem(NULL, ip, &w[0], 0, c) < 0 || access_mem(NULL, ip + 8, &w[1], 0, c) < 0)
		return false;
	return !memcmp(w, code, sizeof(code));
}

static bool is_code(struct sym_process *p, uint64_t ip)
{
	const struct sym_mapping *m = sym_process_mapping(p, ip);

	return m && m->exec;
}

static enum sym_unwind_end why_stopped(const struct unwind_ctx *c)
{
	if (c->needed_register)
		return SYM_UNWIND_NEEDS_REGISTERS;
	if (c->read_past_copy)
		return SYM_UNWIND_COPY_END;
	return SYM_UNWIND_NO_INFO;
}

/* A word of the copy, nothing else: a frame record must lie in it. */
static bool copy_word(const struct sym_stack_copy *s, uint64_t addr, uint64_t *val)
{
	if (addr < s->base || addr - s->base > s->len || s->len - (addr - s->base) < 8)
		return false;
	memcpy(val, s->data + (addr - s->base), 8);
	return true;
}

/*
 * Right after a clone syscall glibc's clone and clone3 have no CFI: they
 * end the parent's before the syscall and start the child's, whose
 * undefined return address marks the outermost frame, a few instructions
 * later. A thread stopped at the instruction after the syscall is told by
 * its registers: the syscall it made was a clone, and the two bytes before
 * pc are the syscall instruction (0f 05). Returns 1 for the new thread
 * (rax 0, the child's return value: it starts there, on an empty stack,
 * and has no caller), 2 for the thread that called clone (in its clone
 * event stop, or a clone our interrupt will restart), 0 otherwise.
 */
static int after_clone(struct unwind_ctx *c, const struct sym_regs *r)
{
	uint64_t pc = r->r[SYM_REG_RIP];
	unw_word_t code;

	if (!(r->known & (1u << SYM_REG_RAX)) || pc < 2)
		return 0;
	if (r->syscall != SYS_clone && r->syscall != SYS_clone3)
		return 0;
	if (access_mem(NULL, pc - 2, &code, 0, c) < 0 || (code & 0xffff) != 0x050f)
		return 0;
	return r->r[SYM_REG_RAX] == 0 ? 1 : 2;
}

/* The process's first frame: ld.so's _start has no CFI (image.c). */
static bool at_entry(struct unwind_ctx *c, uint64_t ip)
{
	return image_at(c, ip) == 0 && sym_image_at_entry(c->img, ip - c->bias, NULL);
}

/* The caller, unwound from its call instruction (ra - 1): the three
 * registers a return address, a stack pointer and a frame pointer give. */
static void caller_regs(struct sym_regs *next, uint64_t ra, uint64_t sp, uint64_t bp)
{
	memset(next, 0, sizeof(*next));
	next->r[SYM_REG_RIP] = ra - 1;
	next->r[SYM_REG_RSP] = sp;
	next->r[SYM_REG_RBP] = bp;
	next->known = 1u << SYM_REG_RIP | 1u << SYM_REG_RSP | 1u << SYM_REG_RBP;
}

/* The caller of clone's parent side: the wrappers push nothing before the
 * syscall, so the return address is the word at sp. */
static bool clone_parent_step(struct unwind_ctx *c, uint64_t sp, uint64_t bp,
			      struct sym_regs *next)
{
	uint64_t ra;

	if (!copy_word(c->stack, sp, &ra) || !is_code(c->p, ra))
		return false;
	caller_regs(next, ra, sp + 8, bp);
	return true;
}

/*
 * Where a frame has no CFI (JIT code, hand-written assembly), its frame
 * pointer is followed: the record [saved rbp, return address] must lie in
 * the copy above sp, and the return address must be code. libunwind's own
 * guesses there (the word at sp, a loosely checked rbp) are not used: they
 * show callers that are not there. The caller is then unwound from its
 * call instruction (ra - 1), with the three registers this gives.
 */
static bool frame_pointer_step(struct unwind_ctx *c, uint64_t sp, uint64_t bp,
			       struct sym_regs *next)
{
	uint64_t saved_bp, ra;

	if (bp < sp || bp % 8 || !copy_word(c->stack, bp, &saved_bp) ||
	    !copy_word(c->stack, bp + 8, &ra) || !is_code(c->p, ra))
		return false;
	caller_regs(next, ra, bp + 16, saved_bp);
	return true;
}

/* Reads allowed to libunwind for one unwind (a frame takes a few dozen). */
#define UNWIND_READ_BUDGET 200000

int sym_unwind(struct sym_process *p, const struct sym_regs *regs,
	       const struct sym_stack_copy *stack, uint64_t *pcs, int max_pcs,
	       enum sym_unwind_end *end)
{
	struct unwind_ctx c = {
		.p = p,
		.regs = regs,
		.stack = stack,
		.reads_left = UNWIND_READ_BUDGET,
	};
	struct sym_regs resumed[2];
	struct sym_unwinder *u;
	unw_cursor_t cursor;
	int n = 0, ret = 0, fallbacks = 0;

	if (!p || !regs || !stack || !pcs || max_pcs < 1 || !(regs->known & (1u << SYM_REG_RIP)))
		return -EINVAL;
	pcs[n++] = regs->r[SYM_REG_RIP];
	*end = SYM_UNWIND_NO_INFO;
	u = unwinder_of(p);
	if (!u || unw_init_remote(&cursor, u->as, &c) < 0) {
		*end = why_stopped(&c);
		return n;
	}
	for (uint64_t prev = pcs[0];;) {
		unw_word_t ip = 0, sp = 0, bp = 0, new_sp = 0;
		bool exact, after_signal, have_fp;
		int clone_side;

		/* The frame after a signal frame was interrupted, not calling. */
		after_signal = exact = is_sigreturn(&c, prev);
		have_fp = unw_get_reg(&cursor, UNW_X86_64_RSP, &sp) == 0 &&
			  unw_get_reg(&cursor, UNW_X86_64_RBP, &bp) == 0;
		c.needed_register = false;
		c.no_info = false;
		ret = unw_step(&cursor);
		clone_side = c.no_info && n == 1 ? after_clone(&c, regs) : 0;
		if (clone_side == 1) {
			ret = 0; /* a new thread: the outermost frame */
			break;
		}
		if (c.no_info && at_entry(&c, prev)) {
			ret = 0; /* the process's first frame */
			break;
		}
		if (c.no_info) {
			/* libunwind guessed for a frame without CFI: use ours. */
			ret = -UNW_ENOINFO;
			if (have_fp && (clone_side == 2 ?
					clone_parent_step(&c, sp, bp, &resumed[fallbacks % 2]) :
					frame_pointer_step(&c, sp, bp, &resumed[fallbacks % 2]))) {
				c.regs = &resumed[fallbacks++ % 2];
				if (n == max_pcs) {
					*end = SYM_UNWIND_FRAME_LIMIT;
					return n;
				}
				pcs[n++] = c.regs->r[SYM_REG_RIP];
				prev = c.regs->r[SYM_REG_RIP] + 1;
				if (unw_init_remote(&cursor, u->as, &c) < 0) {
					ret = -UNW_EUNSPEC;
					break;
				}
				continue;
			}
		}
		if (ret > 0 && (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || !ip))
			ret = 0;
		/* A caller runs code, and lives above its callee on the stack
		 * (but after a signal, which may have switched stacks). */
		if (ret > 0 && (!is_code(p, ip) ||
				(!after_signal && (unw_get_reg(&cursor, UNW_X86_64_RSP, &new_sp) < 0 ||
						   new_sp <= sp))))
			ret = -UNW_EBADFRAME;
		if (ret <= 0)
			break;
		/* The signal trampoline itself is "returned to" at its first
		 * byte: looked up at ra - 1 it would land before it. */
		if (is_sigreturn(&c, ip))
			exact = true;
		prev = ip;
		if (n == max_pcs) {
			*end = SYM_UNWIND_FRAME_LIMIT;
			return n;
		}
		pcs[n++] = exact ? ip : ip - 1;
	}
	*end = ret == 0 ? SYM_UNWIND_COMPLETE : why_stopped(&c);
	return n;
}
