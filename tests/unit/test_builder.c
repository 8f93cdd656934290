// SPDX-License-Identifier: MIT
/*
 * The after-resume path alone (sampler/builder.h): this thread's own
 * registers and stack, copied as a tick copies a stopped thread's, built
 * into a sample of the test's own functions; no ptrace, no sampler.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "formats/formats.h"
#include "sampler/builder.h"
#include "sampler/histogram.h"
#include "self_helpers.h"

#define COPY_BYTES (16 * 1024)

struct fixture {
	struct profile *profile;
	struct sym_process *sym;
	struct sampler_stats st;
	struct duration_histogram hist;
	struct sample_builder b;
	struct stack_sample c;
};

static void fixture_open(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->profile = profile_new();
	cr_assert(f->profile);
	f->sym = open_self();
	f->b = (struct sample_builder){
		.profile = f->profile, .sym = f->sym, .st = &f->st, .unwind_hist = &f->hist,
	};
	cr_assert_eq(addr_cache_new(&f->b.addrs), 0);
	f->c.data = calloc(1, COPY_BYTES);
	cr_assert(f->c.data);
}

static void fixture_close(struct fixture *f)
{
	addr_cache_free(f->b.addrs);
	sym_process_free(f->sym);
	profile_free(f->profile);
	free(f->c.data);
}

/*
 * The registers unwinding needs (sp, the frame pointer, the callee-saved
 * ones, the pc of the asm itself) and the stack above sp, read inside this
 * function so its frame, its callers' return addresses and saved
 * registers are live when copied. Bounded by the stack's mapping. Read a
 * word at a time, uninstrumented: under ASan the callers' frames hold
 * poisoned red zones, which a tick's copy of a target reads as well.
 */
__attribute__((noinline, noclone, no_sanitize_address)) void builder_test_copy(struct stack_sample *c,
							  struct sym_process *sym)
{
	struct user_regs_struct *u = &c->regs;
	const struct sym_mapping *m;
	size_t len = COPY_BYTES;

	__asm__ volatile("movq %%rsp, %c[sp](%[u])\n\t"
			 "movq %%rbp, %c[bp](%[u])\n\t"
			 "movq %%rbx, %c[bx](%[u])\n\t"
			 "movq %%r12, %c[r12](%[u])\n\t"
			 "movq %%r13, %c[r13](%[u])\n\t"
			 "movq %%r14, %c[r14](%[u])\n\t"
			 "movq %%r15, %c[r15](%[u])\n\t"
			 "leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, %c[ip](%[u])\n\t"
			 :
			 : [u] "r"(u), [sp] "i"(offsetof(struct user_regs_struct, rsp)),
			   [bp] "i"(offsetof(struct user_regs_struct, rbp)),
			   [bx] "i"(offsetof(struct user_regs_struct, rbx)),
			   [r12] "i"(offsetof(struct user_regs_struct, r12)),
			   [r13] "i"(offsetof(struct user_regs_struct, r13)),
			   [r14] "i"(offsetof(struct user_regs_struct, r14)),
			   [r15] "i"(offsetof(struct user_regs_struct, r15)),
			   [ip] "i"(offsetof(struct user_regs_struct, rip))
			 : "rax", "memory");
	u->orig_rax = (unsigned long long)-1;
	m = sym_process_mapping(sym, u->rsp);
	cr_assert(m, "no mapping holds sp");
	if (m->end - u->rsp < len)
		len = (size_t)(m->end - u->rsp);
	len &= ~(size_t)7;
	for (size_t i = 0; i < len / 8; i++)
		((uint64_t *)c->data)[i] = ((const volatile uint64_t *)(uintptr_t)u->rsp)[i];
	c->len = len;
	c->capped = len == COPY_BYTES;
}

/* Two callers of the copy, so the built stack has an order to check; the
 * empty asm after each call keeps it from being a tail call. */
__attribute__((noinline, noclone)) void builder_test_inner(struct stack_sample *c,
							   struct sym_process *sym)
{
	builder_test_copy(c, sym);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, noclone)) void builder_test_outer(struct stack_sample *c,
							   struct sym_process *sym)
{
	builder_test_inner(c, sym);
	__asm__ volatile("" ::: "memory");
}

static void copy_here(struct fixture *f)
{
	f->c.tid = (pid_t)syscall(SYS_gettid);
	f->c.time_ns = 1234;
	f->c.weight_ns = 10000000;
	builder_test_outer(&f->c, f->sym);
}

static const char *frame_name(const struct profile *p, uint32_t frame)
{
	return profile_string(p, profile_frame(p, frame)->name);
}

/* The depth from the leaf (0) of the first frame named name; -1 none. */
static int depth_of(const struct profile *p, uint32_t stack, const char *name)
{
	for (int d = 0; stack; d++) {
		const struct stack_node *node = profile_stack(p, stack);

		if (!strcmp(frame_name(p, node->frame), name))
			return d;
		stack = node->parent;
	}
	return -1;
}

Test(builder, a_copy_of_our_own_stack_names_our_functions)
{
	struct fixture f;
	struct stack_span span = { 0 };
	struct built_sample out;
	int copy, inner, outer;

	fixture_open(&f);
	copy_here(&f);
	cr_assert_eq(builder_stack(&f.b, &f.c, &span, &out), 0);
	cr_expect(out.keep);
	cr_expect_eq(out.tid, f.c.tid);
	cr_expect_eq(out.time_ns, 1234);
	cr_expect_eq(out.weight_ns, 10000000);
	cr_expect(!(out.flags & SAMPLE_IDLE));
	cr_expect(!out.python);
	copy = depth_of(f.profile, out.stack, "builder_test_copy");
	inner = depth_of(f.profile, out.stack, "builder_test_inner");
	outer = depth_of(f.profile, out.stack, "builder_test_outer");
	cr_expect_eq(copy, 0, "the leaf is at depth %d", copy);
	cr_expect(inner == copy + 1 && outer == inner + 1, "depths %d %d %d", copy, inner, outer);
	/* The thread's stack mapping was learned, and holds sp. */
	cr_expect(span.lo <= f.c.regs.rsp && f.c.regs.rsp < span.hi);
	cr_expect_eq(f.st.unwinds, 1);
	cr_expect_eq(f.st.errors, 0);
	fixture_close(&f);
}

/* Read without a stop: pc and sp only, the idle leaf on top; kept only
 * with --idle where there are no Python frames. */
Test(builder, a_blocked_copy_gets_its_idle_leaf)
{
	struct fixture f;
	struct built_sample out;
	const struct stack_node *leaf;

	fixture_open(&f);
	copy_here(&f);
	f.c.blocked = true;
	f.c.state = (struct blocked_state){ .nr = SYS_read, .pc = f.c.regs.rip, .sp = f.c.regs.rsp };
	cr_assert_eq(builder_stack(&f.b, &f.c, NULL, &out), 0);
	cr_expect(!out.keep, "a blocked native stack is kept without --idle");

	f.b.idle = true;
	cr_assert_eq(builder_stack(&f.b, &f.c, NULL, &out), 0);
	cr_expect(out.keep);
	cr_expect(out.flags & SAMPLE_IDLE);
	leaf = profile_stack(f.profile, out.stack);
	cr_expect_str_eq(frame_name(f.profile, leaf->frame), "[idle: read]");
	cr_expect_eq(depth_of(f.profile, out.stack, "builder_test_copy"), 1);
	fixture_close(&f);
}

/* The address cache across its growth: each address, asked twice, gives
 * its own function's frame. */
Test(builder, cached_frames_stay_with_their_addresses)
{
	void (*fns[])(struct stack_sample *, struct sym_process *) = {
		builder_test_copy, builder_test_inner, builder_test_outer,
	};
	const char *names[] = { "builder_test_copy", "builder_test_inner", "builder_test_outer" };
	struct fixture f;

	fixture_open(&f);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 3; i++) {
			for (uint64_t off = 0; off < 8; off++) {
				uint32_t frame;

				cr_assert_eq(builder_frame_for_addr(&f.b, addr_of((const void *)fns[i]) + off,
								    &frame), 0);
				cr_assert_str_eq(frame_name(f.profile, frame), names[i],
						 "pass %d, %s+%lu", pass, names[i], (unsigned long)off);
			}
		}
	}
	/* Far more addresses than the table starts with (64 slots), asked
	 * again after it grew: the frames a builder with a cache of its own
	 * resolves once each. */
	{
		struct sample_builder fresh = f.b;
		uint64_t base = addr_of((const void *)builder_test_copy) - 2000;

		cr_assert_eq(addr_cache_new(&fresh.addrs), 0);
		for (uint64_t k = 0; k < 4000; k++) {
			uint32_t frame;

			cr_assert_eq(builder_frame_for_addr(&f.b, base + k, &frame), 0);
		}
		for (uint64_t k = 0; k < 4000; k++) {
			uint32_t frame, want;

			cr_assert_eq(builder_frame_for_addr(&f.b, base + k, &frame), 0);
			cr_assert_eq(builder_frame_for_addr(&fresh, base + k, &want), 0);
			cr_assert_eq(frame, want, "at %#lx: %s, want %s", (unsigned long)(base + k),
				     frame_name(f.profile, frame), frame_name(f.profile, want));
		}
		addr_cache_free(fresh.addrs);
	}
	fixture_close(&f);
}
