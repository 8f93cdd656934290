// SPDX-License-Identifier: MIT
/*
 * Frame-pointer unwinding of stack copies: tests/unit/test_unwind_fp.c.
 * Synthetic copies hold frame records whose return addresses point into
 * this binary's own code; a last test unwinds a copy of its own stack.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"

#define WORDS 64
#define MAX_IPS 32

static __attribute__((noipa)) int code_a(int x)
{
	return x + 1;
}

static __attribute__((noipa)) int code_b(int x)
{
	return x + 2;
}

static __attribute__((noipa)) int code_c(int x)
{
	return x + 3;
}

/* A return address: a few bytes into one of the functions above. */
static uint64_t ra(int (*fn)(int))
{
	return (uint64_t)(uintptr_t)fn + 4;
}

struct fake_stack {
	uint64_t words[WORDS];
	struct sym_stack_copy copy;
	struct sym_process *p;
	uint64_t ips[MAX_IPS];
	bool truncated;
};

/* The copy's target addresses are those of the buffer itself: memory
 * that is surely mapped and not executable. */
static uint64_t at(const struct fake_stack *s, int word)
{
	return s->copy.base + (uint64_t)word * 8;
}

/* Clears the stack; the process is opened once (s starts zeroed). */
static void fake_init(struct fake_stack *s)
{
	struct sym_process *p = s->p;
	char err[256] = "";

	memset(s, 0, sizeof(*s));
	s->copy.base = (uint64_t)(uintptr_t)s->words;
	s->copy.data = (const uint8_t *)s->words;
	s->copy.len = sizeof(s->words);
	s->p = p;
	if (!p)
		cr_assert_eq(sym_process_open(getpid(), &s->p, err,
					      sizeof(err)), 0, "%s", err);
}

/* A frame record at word i: [saved bp, return address]. */
static void record(struct fake_stack *s, int i, uint64_t next_bp,
		   uint64_t ret)
{
	s->words[i] = next_bp;
	s->words[i + 1] = ret;
}

/* Three records, at words 4, 12 and 20; the last ends with bp == 0. */
static void three_frames(struct fake_stack *s)
{
	fake_init(s);
	s->words[0] = 7;
	s->words[1] = 0x1234;
	record(s, 4, at(s, 12), ra(code_a));
	record(s, 12, at(s, 20), ra(code_b));
	record(s, 20, 0, ra(code_c));
}

static int unwind(struct fake_stack *s, uint64_t bp, int max)
{
	return sym_unwind_fp(s->p, 0x4242, s->copy.base, bp, &s->copy,
			     s->ips, max, &s->truncated);
}

static void check_ips(const struct fake_stack *s, int n,
		      const uint64_t *want, int want_n, bool truncated)
{
	cr_assert_eq(n, want_n, "%d addresses, want %d", n, want_n);
	for (int i = 0; i < n; i++)
		cr_assert_eq(s->ips[i], want[i], "ips[%d]", i);
	cr_assert_eq(s->truncated, truncated);
}

Test(unwind_fp, whole_chain)
{
	struct fake_stack s = { 0 };
	uint64_t want[] = { 0x4242, ra(code_a), ra(code_b), ra(code_c) };

	three_frames(&s);
	check_ips(&s, unwind(&s, at(&s, 4), MAX_IPS), want, 4, false);
	sym_process_free(s.p);
}

Test(unwind_fp, zero_bp_is_a_clean_end)
{
	struct fake_stack s = { 0 };
	uint64_t want[] = { 0x4242 };

	three_frames(&s);
	check_ips(&s, unwind(&s, 0, MAX_IPS), want, 1, false);
	sym_process_free(s.p);
}

Test(unwind_fp, broken_chains)
{
	struct fake_stack s = { 0 };
	uint64_t two[] = { 0x4242, ra(code_a), ra(code_b) };
	uint64_t one[] = { 0x4242, ra(code_a) };
	uint64_t none[] = { 0x4242 };

	three_frames(&s); /* next bp outside the copy */
	s.words[12] = at(&s, 20) + 4096;
	check_ips(&s, unwind(&s, at(&s, 4), MAX_IPS), two, 3, true);

	s.words[12] = at(&s, 4); /* going back down */
	check_ips(&s, unwind(&s, at(&s, 4), MAX_IPS), two, 3, true);
	s.words[12] = at(&s, 12); /* pointing at itself */
	check_ips(&s, unwind(&s, at(&s, 4), MAX_IPS), two, 3, true);

	three_frames(&s); /* misaligned */
	s.words[4] = at(&s, 12) + 4;
	check_ips(&s, unwind(&s, at(&s, 4), MAX_IPS), one, 2, true);

	three_frames(&s); /* return address into data, then into nothing */
	s.words[13] = (uint64_t)(uintptr_t)&s;
	check_ips(&s, unwind(&s, at(&s, 4), MAX_IPS), one, 2, true);
	s.words[13] = 0x10;
	check_ips(&s, unwind(&s, at(&s, 4), MAX_IPS), one, 2, true);

	three_frames(&s); /* the first bp below sp, or past the copy */
	check_ips(&s, unwind(&s, at(&s, 0) - 16, MAX_IPS), none, 1, true);
	check_ips(&s, unwind(&s, at(&s, WORDS - 1), MAX_IPS), none, 1, true);
	sym_process_free(s.p);
	sym_process_free(NULL);
}

Test(unwind_fp, capped_copy_and_max_ips)
{
	struct fake_stack s = { 0 };
	uint64_t two[] = { 0x4242, ra(code_a), ra(code_b) };

	three_frames(&s);
	/* The copy ends inside the third record. */
	s.copy.len = 21 * 8;
	check_ips(&s, unwind(&s, at(&s, 4), MAX_IPS), two, 3, true);

	/* Room for three addresses of four. */
	s.copy.len = sizeof(s.words);
	check_ips(&s, unwind(&s, at(&s, 4), 3), two, 3, true);
	/* Room for exactly four: complete. */
	cr_assert_eq(unwind(&s, at(&s, 4), 4), 4);
	cr_assert(!s.truncated);
	cr_assert_eq(unwind(&s, at(&s, 4), 0), -EINVAL);
	sym_process_free(s.p);
}

/* ---- a real stack: this test's own ---- */

#define REAL_COPY_MAX (64 * 1024)

struct captured {
	struct sym_process *p;
	uint64_t ip, sp, bp;
	uint8_t copy[REAL_COPY_MAX];
	size_t len;
};

/* What a sampler does to a stopped thread: registers, then the stack
 * from sp to the end of its mapping (bounded). */
static __attribute__((noipa)) void capture(struct captured *c)
{
	const struct sym_mapping *m;

	__asm__ volatile("lea 0(%%rip), %0\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2"
			 : "=r"(c->ip), "=r"(c->sp), "=r"(c->bp));
	m = sym_process_mapping(c->p, c->sp);
	cr_assert_not_null(m);
	c->len = m->end - c->sp;
	if (c->len > REAL_COPY_MAX)
		c->len = REAL_COPY_MAX;
	memcpy(c->copy, (const void *)(uintptr_t)c->sp, c->len);
	/* No tail call: memcpy must run below this frame, not over it. */
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noipa)) int chain_leaf(struct captured *c)
{
	capture(c);
	return 1;
}

static __attribute__((noipa)) int chain_middle(struct captured *c)
{
	return chain_leaf(c) + 1;
}

static __attribute__((noipa)) int chain_top(struct captured *c)
{
	return chain_middle(c) + 1;
}

Test(unwind_fp, own_stack)
{
	static const char *const want[] = { "capture", "chain_leaf",
					    "chain_middle", "chain_top" };
	struct captured *c = calloc(1, sizeof(*c));
	struct sym_stack_copy copy;
	uint64_t ips[MAX_IPS];
	bool truncated;
	int n;

	cr_assert_eq(sym_process_open(getpid(), &c->p, NULL, 0), 0);
	cr_assert_eq(chain_top(c), 3);
	copy = (struct sym_stack_copy){ .base = c->sp, .data = c->copy, .len = c->len };
	n = sym_unwind_fp(c->p, c->ip, c->sp, c->bp, &copy, ips, MAX_IPS,
			  &truncated);
	cr_assert_geq(n, 5, "only %d frames", n);
	for (int i = 0; i < 5; i++) {
		struct sym_location loc;

		/* Callers at ra - 1: the call, not what follows it. */
		cr_assert_eq(sym_process_resolve(c->p, i ? ips[i] - 1 : ips[i],
						 &loc), 0);
		cr_assert_not_null(loc.function, "frame %d at %#lx", i,
				   (unsigned long)ips[i]);
		if (i < 4)
			cr_assert_str_eq(loc.function, want[i], "frame %d", i);
		else /* Criterion names the test's body *_impl */
			cr_assert_not_null(strstr(loc.function, "own_stack"),
					   "frame 4 is %s", loc.function);
	}
	sym_process_free(c->p);
	free(c);
}
