// SPDX-License-Identifier: MIT
/*
 * Frame-pointer unwinding of a copied stack (x86-64). Code built with frame
 * pointers keeps at rbp a frame record: [saved rbp, return address]. The
 * walk reads only the copy and trusts nothing in it: records must be
 * aligned, inside the copy and ever higher, and return addresses must point
 * into executable mappings; the first violation ends the walk, marked
 * truncated.
 */
#include <errno.h>
#include <string.h>

#include "symbolize/internal.h"

/* Below the first page, or above the largest (5-level) user address,
 * a word cannot be code: rejected without a maps lookup. */
#define USER_ADDR_MIN 0x1000ULL
#define USER_ADDR_END (1ULL << 56)

struct fp_walk {
	struct sym_process *p;
	const struct sym_stack_copy *stack;
	uint64_t *ips;
	int count;
	int max;
	bool *truncated;
};

static bool read_word(const struct sym_stack_copy *s, uint64_t addr,
		      uint64_t *out)
{
	uint64_t at;

	if (addr < s->base)
		return false;
	at = addr - s->base;
	if (at > s->len || s->len - at < sizeof(*out))
		return false;
	memcpy(out, s->data + at, sizeof(*out)); /* data may be unaligned */
	return true;
}

static bool read_record(const struct sym_stack_copy *s, uint64_t bp,
			uint64_t *next_bp, uint64_t *ra)
{
	if (bp % 8 || bp > UINT64_MAX - 16)
		return false;
	return read_word(s, bp, next_bp) && read_word(s, bp + 8, ra);
}

static bool is_code(struct sym_process *p, uint64_t addr)
{
	const struct sym_mapping *m;

	if (addr < USER_ADDR_MIN || addr >= USER_ADDR_END)
		return false;
	m = sym_process_mapping(p, addr);
	return m && m->exec;
}

static bool push_ip(struct fp_walk *w, uint64_t ip)
{
	if (w->count == w->max) {
		*w->truncated = true;
		return false;
	}
	w->ips[w->count++] = ip;
	return true;
}

/*
 * Follows the chain from bp, which must be at or above floor. Each record
 * lies strictly above the one before and inside the copy, so the walk ends
 * within len / 8 steps even before max_ips caps it.
 */
static void walk_chain(struct fp_walk *w, uint64_t bp, uint64_t floor)
{
	while (bp != 0) {
		uint64_t next, ra;

		if (bp < floor || !read_record(w->stack, bp, &next, &ra) ||
		    !is_code(w->p, ra)) {
			*w->truncated = true;
			return;
		}
		if (!push_ip(w, ra))
			return;
		floor = bp + 1; /* strictly increasing */
		bp = next;
	}
}

static bool start_walk(struct fp_walk *w, struct sym_process *p,
		       const struct sym_stack_copy *stack, uint64_t ip,
		       uint64_t *ips, int max_ips, bool *truncated)
{
	if (!p || !stack || (!stack->data && stack->len) || !ips ||
	    max_ips < 1 || !truncated)
		return false;
	*truncated = false;
	*w = (struct fp_walk){
		.p = p,
		.stack = stack,
		.ips = ips,
		.max = max_ips,
		.truncated = truncated,
	};
	push_ip(w, ip);
	return true;
}

int sym_unwind_fp(struct sym_process *p, uint64_t ip, uint64_t sp,
		  uint64_t bp, const struct sym_stack_copy *stack,
		  uint64_t *ips, int max_ips, bool *truncated)
{
	struct fp_walk w;

	if (!start_walk(&w, p, stack, ip, ips, max_ips, truncated))
		return -EINVAL;
	walk_chain(&w, bp, sp);
	return w.count;
}
