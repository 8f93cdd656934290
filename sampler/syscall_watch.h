/* SPDX-License-Identifier: MIT */
/*
 * Watching a thread's waits to their end (syscall_watch.c): a thread seen
 * in a wait that fails with EINTR instead of restarting is resumed with
 * PTRACE_SYSCALL, so an EINTR that only our tracing caused can be turned
 * back into the call at its exit stop.
 */
#ifndef TRAINSAMPLE_SAMPLER_SYSCALL_WATCH_H
#define TRAINSAMPLE_SAMPLER_SYSCALL_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct sampler;
struct thread;

struct syscall_watch {
	bool on;          /* resumed with PTRACE_SYSCALL */
	bool rewound;     /* an EINTR turned back into the call, the call not
			   * entered again yet */
	bool at_syscall_stop; /* being handled at one of its syscall stops */
	unsigned long long rewound_rip; /* ... pointing at its syscall instruction */
	uint8_t others;   /* other syscalls entered since its last wait */
	uint64_t second_ns;  /* the current second's start, and its stops */
	unsigned second_stops;
	uint64_t checked_ns;  /* its syscall last read for a start */
};

/* The thread is stopped at regs, in or just out of a wait that fails
 * with EINTR (not restarted) and has no timeout: watch it from now on. */
void syscall_watch_start(struct sampler *s, struct thread *t, const struct user_regs_struct *regs);
/* t, not stopped, is blocked in such a wait: stopped once to start. */
void syscall_watch_blocked(struct sampler *s, struct thread *t);
/* t, seized and not stopped, was found asleep: its syscall read (at most
 * every 100 ms) and, in such a wait, syscall_watch_blocked. */
void syscall_watch_check(struct sampler *s, struct thread *t);
/* PTRACE_SYSCALL for a watched thread, PTRACE_CONT otherwise. */
int syscall_watch_request(const struct thread *t);
/* A syscall-entry or -exit stop of a watched thread (interrupted: the
 * stop answers our interrupt); the caller resumes it. */
void syscall_watch_stop(struct sampler *s, struct thread *t, bool interrupted);
/* A signal-delivery stop: a signal that will not be ignored gives the
 * call we rewound back its EINTR, as it would have had untraced. */
void syscall_watch_signal(struct sampler *s, struct thread *t, bool ignored);
/* Our interrupt woke a non-restarting call, at an interrupt or
 * signal-delivery stop: the kernel restarts it unless a handler runs
 * (only a call without a timeout, if only_untimed); then watched. */
void syscall_undo_eintr(struct sampler *s, struct thread *t,
			struct user_regs_struct *regs, bool only_untimed);
/* Whether a call of these registers is one a watch is for. */
bool syscall_watch_wanted(const struct user_regs_struct *regs);

#endif
