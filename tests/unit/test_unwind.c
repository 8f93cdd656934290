// SPDX-License-Identifier: MIT
/*
 * sym_unwind on a real stack: a child blocked in read(), its registers
 * and stack copied under ptrace, unwound through libc's CFI. The copy may
 * be unwound after the process ended (record's last samples, a dump of a
 * process that finishes meanwhile): its /proc root is gone then, and the
 * files must still be found.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/symbolize.h"

#define COPY_BYTES (32 * 1024)

__attribute__((noinline)) static void blocked_in_read(int fd)
{
	char c;

	/* Returns only when the parent writes, which it never does. */
	if (read(fd, &c, 1) < 0)
		_exit(3);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void child_main(int fd)
{
	blocked_in_read(fd);
	_exit(0);
}

static void regs_of(const struct user_regs_struct *u, struct sym_regs *r)
{
	const uint64_t v[SYM_REG_COUNT] = {
		[SYM_REG_RAX] = u->rax, [SYM_REG_RDX] = u->rdx, [SYM_REG_RCX] = u->rcx,
		[SYM_REG_RBX] = u->rbx, [SYM_REG_RSI] = u->rsi, [SYM_REG_RDI] = u->rdi,
		[SYM_REG_RBP] = u->rbp, [SYM_REG_RSP] = u->rsp, [SYM_REG_R8] = u->r8,
		[SYM_REG_R9] = u->r9,   [SYM_REG_R10] = u->r10, [SYM_REG_R11] = u->r11,
		[SYM_REG_R12] = u->r12, [SYM_REG_R13] = u->r13, [SYM_REG_R14] = u->r14,
		[SYM_REG_R15] = u->r15, [SYM_REG_RIP] = u->rip,
	};

	memcpy(r->r, v, sizeof(v));
	r->known = (1u << SYM_REG_COUNT) - 1;
	r->syscall = (int64_t)u->orig_rax;
}

struct copied {
	pid_t pid;
	struct sym_regs regs;
	uint8_t data[COPY_BYTES];
	size_t len;
};

/* Starts the child, waits until it sleeps in read, copies its registers
 * and stack; the child is left running, untraced. */
static void copy_blocked_child(struct copied *c)
{
	struct user_regs_struct u;
	int fds[2], status;
	char state = 0;

	cr_assert_eq(pipe(fds), 0);
	c->pid = fork();
	cr_assert_geq(c->pid, 0);
	if (c->pid == 0) {
		close(fds[1]);
		child_main(fds[0]);
	}
	close(fds[0]);
	for (int i = 0; i < 500 && state != 'S'; i++) {
		char path[64], buf[256], *p;
		FILE *f;

		usleep(2000);
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)c->pid);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
			state = p[2];
		if (f)
			fclose(f);
	}
	cr_assert_eq(state, 'S');
	cr_assert_eq(ptrace(PTRACE_SEIZE, c->pid, 0, 0), 0);
	cr_assert_eq(ptrace(PTRACE_INTERRUPT, c->pid, 0, 0), 0);
	cr_assert_eq(waitpid(c->pid, &status, __WALL), c->pid);
	cr_assert_eq(ptrace(PTRACE_GETREGS, c->pid, 0, &u), 0);
	regs_of(&u, &c->regs);
	{
		struct iovec local = { c->data, sizeof(c->data) };
		struct iovec remote = { (void *)(uintptr_t)u.rsp, sizeof(c->data) };
		ssize_t n = process_vm_readv(c->pid, &local, 1, &remote, 1, 0);

		cr_assert_gt(n, 0);
		c->len = (size_t)n;
	}
	cr_assert_eq(ptrace(PTRACE_DETACH, c->pid, 0, 0), 0);
}

/* Named by our own symbols: the child is a fork of this process, its code
 * where ours is (an instrumented build's functions are long). */
static bool has_frame_named(const uint64_t *pcs, int n, const char *fn)
{
	struct sym_process *self = NULL;
	struct sym_location loc;
	char err[256] = "";
	bool found = false;

	cr_assert_eq(sym_process_open(getpid(), &self, err, sizeof(err)), 0, "%s", err);
	for (int i = 0; i < n && !found; i++)
		found = sym_process_resolve(self, pcs[i], &loc) == 0 && loc.function &&
			!strcmp(loc.function, fn);
	sym_process_free(self);
	return found;
}

static void unwind_and_check(struct sym_process *p, struct copied *c)
{
	struct sym_stack_copy stack = {
		.base = c->regs.r[SYM_REG_RSP],
		.data = c->data,
		.len = c->len,
		.capped = false,
	};
	enum sym_unwind_end end;
	uint64_t pcs[64];
	int n = sym_unwind(p, &c->regs, &stack, pcs, 64, &end);

	/* read's frame, blocked_in_read, child_main, the test's callers. */
	cr_assert_eq(end, SYM_UNWIND_COMPLETE, "%d frames, end %d", n, (int)end);
	cr_assert_geq(n, 3, "%d frames", n);
	cr_assert(has_frame_named(pcs, n, "blocked_in_read"), "no blocked_in_read in %d frames", n);
	cr_assert(has_frame_named(pcs, n, "child_main"), "no child_main in %d frames", n);
}

Test(unwind, blocked_child_through_libc)
{
	static struct copied c;
	struct sym_process *p = NULL;
	char err[256] = "";

	copy_blocked_child(&c);
	cr_assert_eq(sym_process_open(c.pid, &p, err, sizeof(err)), 0, "%s", err);
	unwind_and_check(p, &c);
	kill(c.pid, SIGKILL);
	waitpid(c.pid, NULL, 0);
	sym_process_free(p);
}

/* The modules were named while it ran (its maps read, its symbols
 * resolved), its stack is unwound after it ended. */
Test(unwind, after_the_process_ended)
{
	static struct copied c;
	struct sym_process *p = NULL;
	struct sym_location loc;
	char err[256] = "";

	copy_blocked_child(&c);
	cr_assert_eq(sym_process_open(c.pid, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sym_process_resolve(p, c.regs.r[SYM_REG_RIP], &loc), 0);
	cr_assert_eq(sym_process_resolve(p, (uint64_t)(uintptr_t)child_main, &loc), 0);
	cr_assert_str_eq(loc.function, "child_main");
	kill(c.pid, SIGKILL);
	cr_assert_eq(waitpid(c.pid, NULL, 0), c.pid);
	unwind_and_check(p, &c);
	sym_process_free(p);
}
