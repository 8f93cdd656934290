/* SPDX-License-Identifier: MIT */
/*
 * The target's signals, and ours: a stop we were asked for (our own
 * SIGINT, SIGTERM, Ctrl-Z), when the target last got each signal, and the
 * resumes held for a signal queued for the whole process
 * (shared_signals.c).
 */
#ifndef TRAINSAMPLE_SAMPLER_SIGNALS_H
#define TRAINSAMPLE_SAMPLER_SIGNALS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sampler;

/* The main thread's signal masks, as last read. */
struct signal_masks {
	bool valid;
	uint64_t read_ns;
	unsigned long long blocked, ignored, caught;
};

/* A queued signal, told from another: who sent it, why, with what. */
struct queued_signal {
	int signo, code, status;
	pid_t pid;
	bool set;
};

/* Resumes held for a signal queued for the process: the one nobody took
 * while a thread was held for it (not waited for again while it stays
 * queued), and the time spent holding in the current second, which has a
 * ceiling. */
struct signal_holds {
	struct queued_signal unclaimed;
	uint64_t second_start_ns, second_held_ns;
};

struct target_signals {
	bool stop_requested;
	int stop_signo;
	bool stop_from_user;    /* sent by kill(), not by the terminal */
	uint64_t target_signal_ns[65]; /* when the target last got each signal */
	bool tstp_requested;    /* Ctrl-Z: detach, stop ourselves, re-attach */
	struct signal_holds holds;
	struct signal_masks masks;
};

bool woke_only_because_traced(struct sampler *s, int sig);
/* At a signal-delivery stop, where nothing may wait: whether the program
 * drops the signal (ignored, or by default), from the masks last read
 * (read now only for a signal ignored by default, if never read), which
 * signal_masks_refresh reads again once the signal is passed on (if
 * older than 10 ms: a handler may have changed). Whether some thread
 * blocks it does not count here: the one at the stop takes it. (The
 * leader's mask read while it was in pthread_create, all blocked, once
 * made a SIGCHLD at a rewound sigwaitinfo "caught": the EINTR given back.) */
bool signal_traced_only_known(struct sampler *s, int sig);
void signal_masks_refresh(struct sampler *s);
/* Before resuming tid: a signal queued for the process only because we
 * trace is left a moment to the thread the kernel woke for it. */
void shared_signals_leave_to_woken(struct sampler *s, pid_t tid);

#endif
