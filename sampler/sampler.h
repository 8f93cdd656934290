/* SPDX-License-Identifier: MIT */
/*
 * sampler/ — attaching to a process with ptrace and sampling every thread's
 * stack at a steady rate into a profile model.
 *
 * Rules it keeps (see docs/design.md): every thread is seized once; a
 * tick reads each thread's state from /proc first and interrupts only the
 * running ones, just long enough to copy registers and stack; blocked
 * threads are never stopped; every stop is resumed as the kernel expects
 * (signals re-injected, group stops respected); every exit path detaches.
 *
 * The sampler blocks SIGCHLD, SIGINT, SIGTERM, SIGHUP and SIGTSTP in the
 * calling thread while it exists and reads them from a signalfd: Ctrl-C,
 * SIGTERM and SIGHUP end sampling; SIGTSTP detaches, stops trainsample, and
 * re-attaches when it is continued. A started command gets the signal mask
 * trainsample had.
 */
#ifndef TRAINSAMPLE_SAMPLER_H
#define TRAINSAMPLE_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct profile;

struct sampler_options {
	double rate_hz;       /* samples per second per thread; default 100 */
	double duration_s;    /* 0: until a signal or the target's exit */
	size_t stack_bytes;   /* cap of each stack copy; default 64 KiB */
	size_t queue_copies;  /* copies waiting to be unwound; 0: 32 MiB worth */
	bool idle;            /* keep samples of blocked threads, all of them */
	bool idle_python;     /* keep those of threads with Python frames */
	bool python;          /* look for a CPython and sample its stacks */
	bool native;          /* with Python: native frames too, merged */
	bool native_all;      /* ... keeping the interpreter's frames between and
			       * above Python frames too */
	bool gil_only;        /* Python: only the GIL holder's samples */
	bool nonblocking;     /* Python: never stop the GIL holder for its walk
			       * (its stack may then be torn; counted) */
	bool locals;          /* Python: each frame's variables, read with its
			       * frames (dump; see sampler_frame_locals) */
	bool memory_only;     /* sampler_sample_once only: seize no thread but a
			       * running GIL holder, for its walk, and none
			       * while another tracer holds the process; a
			       * process without Python is seized whole */
	bool native_lines;    /* source file:line of native frames, from DWARF */
	bool trace_stops;     /* log every ptrace stop to stderr (debugging) */
	int die_at_signal_stop; /* SIGKILL ourselves at the first delivery
				 * stop of this signal (-1 any), before passing
				 * it on: a test of what our death costs */
	bool quiet;           /* no notices on stderr */
	bool subprocesses;    /* follow every descendant: those alive at
			       * attach, and each fork, vfork or clone of a
			       * process while sampling (a process of its own,
			       * with its own symbols and Python reader) */
	/* Called when a process starts to be followed or a followed one
	 * execs (not for the first process), so the caller can label it;
	 * worker and rank are -1 then. Called again, for any process, with
	 * the id of the DataLoader worker it was found to be (torch's
	 * _worker_loop), or the rank torch.multiprocessing.spawn gave it (its
	 * _wrap's process index; -1 where none is on its stack). */
	void (*process_seen)(void *ctx, pid_t pid, int worker, int rank);
	/* Called when a followed process (the first included) ends: its wait
	 * status and when (CLOCK_MONOTONIC), as the samples' times. */
	void (*process_exited)(void *ctx, pid_t pid, int status, uint64_t ns);
	void *process_seen_ctx;
	/* Called from the sampling loop about every 100 ms, between ticks. */
	void (*periodic)(void *ctx, uint64_t now_ns);
	void *periodic_ctx;
};

/* What an error counted in sampler_stats.errors was. */
enum sampler_error_kind {
	SAMPLER_ERR_UNWIND,  /* a stack copy that did not unwind */
	SAMPLER_ERR_READ,    /* the target's memory (its stack) not read */
	SAMPLER_ERR_PTRACE,  /* registers, interrupt, resume or detach failed */
	SAMPLER_ERR_NO_STOP, /* a thread that never stopped for its copy */
	SAMPLER_ERR_PYTHON,  /* a Python walk that failed or ended early */
	SAMPLER_ERR_MERGE,   /* native and Python frames that did not match */
	SAMPLER_ERR_MEMORY,  /* trainsample's own memory */
	SAMPLER_ERR_KINDS
};

struct sampler_stats {
	uint64_t elapsed_ns;       /* first tick to end of sampling */
	uint64_t ticks;
	uint64_t missed_ticks;     /* deadlines that passed without a tick */
	uint64_t samples;          /* samples added to the profile */
	uint64_t idle_samples;
	uint64_t dropped;          /* copies not taken or not unwound: unwinding fell behind */
	uint64_t errors;           /* failed reads, unwinds or ptrace calls */
	uint64_t errors_by_kind[SAMPLER_ERR_KINDS];
	uint64_t truncated;        /* stacks that ended early */
	uint64_t threads_seen;
	uint32_t threads_live;
	uint64_t storm_ns;         /* how long after the start clones came so
				    * fast that new threads were found at
				    * ticks instead; 0 never */
	uint64_t storm_seized;     /* threads seized so, at a tick */
	uint64_t quiet_ticks;      /* ticks with threads blocked for long ... */
	uint64_t quiet_asks;       /* ... and those of them where the process's
				    * CPU clock said one may have run: all read */
	uint64_t quiet_clock_reads; /* reads of that clock */
	uint64_t stop_walks;       /* waitpid(-1) calls that found no stop:
				    * each walks every traced thread */
	uint64_t stops;            /* threads interrupted to copy */
	uint64_t pause_p50_ns;     /* time a thread stayed stopped per copy */
	uint64_t pause_p99_ns;
	uint64_t pause_max_ns;
	uint64_t unanswered_max_ns; /* the longest the target's stops could go
				     * unanswered: trainsample busy elsewhere
				     * (unwinding, symbols, a tick's work) */
	uint64_t stops_at_kernel_exit; /* ... that came as the thread left a
					* syscall or fault, not by our interrupt */
	uint64_t unwinds;          /* stacks unwound (after the target ran on) */
	uint64_t unwind_p50_ns;
	uint64_t unwind_p99_ns;
	uint64_t unwind_first_ns;  /* the run's first unwind: cold caches */
	uint64_t syscalls_restarted; /* EINTR undone after an interrupt */
	uint64_t waits_watched;    /* waits followed to their end (syscall_watch.c) */
	uint64_t waits_rewound;    /* ... whose EINTR was turned back into the call */
	uint64_t signals_forwarded;  /* signal-delivery stops re-injected */
	uint64_t signal_holds;     /* resumes held for another thread's signal */
	uint64_t py_holder_walks;  /* GIL holder's walks made while it was stopped */
	uint64_t py_walks_retried; /* walks of a running thread redone: it moved */
	uint64_t py_walks_torn;    /* ... and given up on: an [error] sample */
	uint64_t py_walks_redone_stopped; /* walks of a thread that took the GIL
					   * as it was read, made again stopped */
	uint64_t target_cpu_ns;    /* the target's threads' CPU time and run-queue */
	uint64_t target_wait_ns;   /* wait (schedstat), between the reads made */
	uint64_t runnable_sum;     /* its threads found runnable (R, or in our stop), */
	uint64_t runnable_ticks;   /* ... summed over these ticks */
	uint64_t machine_runnable_sum;   /* the machine's runnable threads, every */
	uint64_t machine_runnable_reads; /* process's, at these reads (a second apart) */
	uint64_t cpu_ns;           /* trainsample's own CPU time */
	uint64_t cpu_settled_ns;   /* ... of it from the first second of sampling
				    * to its end (not the letting go, the writing) */
	uint64_t settled_ns;       /* ... which lasted this long; 0: never reached */
	uint64_t processes;        /* processes sampled, the first included */
	uint64_t processes_left;   /* child processes not followed (forks seen
				    * without subprocesses, and those let go) */
	char python[96];           /* "Python 3.11 (libpython3.11.so.1.0)"; "" none */
	char python_refused[192];  /* why an interpreter seen was refused; "" */
};

enum sampler_end {
	SAMPLER_END_DURATION,
	SAMPLER_END_SIGNAL,   /* Ctrl-C, SIGTERM or SIGHUP */
	SAMPLER_END_EXITED,   /* the target exited */
};

struct sampler;

/*
 * Starts argv as a child, traced from before its exec. A command that
 * cannot be executed is an error: -ENOENT, -EACCES, ... with a message.
 */
int sampler_spawn(struct sampler **out, char *const argv[],
		  struct profile *p, const struct sampler_options *o,
		  char *err, size_t errlen);
/* Seizes every thread of a running process (pid may be any of its tids). */
int sampler_attach(struct sampler **out, pid_t pid, struct profile *p,
		   const struct sampler_options *o, char *err, size_t errlen);
/*
 * Samples until the duration passes, a stop signal arrives or the target
 * exits; detaches from every thread before returning. `signo` receives the
 * signal that ended it (0 if none). What fails on the way (a read, an
 * unwind, a thread gone) is counted in the stats, never fatal.
 */
void sampler_run(struct sampler *s, enum sampler_end *end, int *signo);
/* fn(ctx) on a thread of its own while this one, the tracer, answers the
 * target's stops: for what can block on I/O while the target is traced
 * (fn must not touch the sampler or the profile). fn's result. */
int sampler_service_while(struct sampler *s, int (*fn)(void *ctx), void *ctx);
/*
 * One tick, then detach: every thread's stack once (trainsample dump).
 * While a Python interpreter starts (no thread state or frame yet) it
 * waits up to a second for one. Memory-only, a process with no Python to
 * read that another tracer holds is an error (-EBUSY), with a message.
 */
int sampler_sample_once(struct sampler *s, char *err, size_t errlen);
/*
 * After sampler_run on a spawned command: waits for it to exit (SIGTERM and
 * SIGHUP sent to trainsample are passed on to it), at most timeout_ms (-1:
 * no limit; then -ETIMEDOUT), and gives its status as a shell would: the
 * exit code, or 128 + N when killed by signal N.
 */
/* Ends sampler_run at its next turn as a signal would (SAMPLER_END_SIGNAL,
 * signo 0), nothing passed on to a command: top's q. */
void sampler_request_stop(struct sampler *s);
int sampler_wait_command(struct sampler *s, int timeout_ms, int *exit_code);
void sampler_get_stats(const struct sampler *s, struct sampler_stats *st);
/* Whether every thread still sampled is in a group stop (SIGSTOP, Ctrl-Z):
 * the target cannot run until someone continues it. */
bool sampler_target_stopped(const struct sampler *s);
/* The kinds of st's errors with their counts, "unwind 20, read 4", into
 * buf; empty when there were none. */
void sampler_errors_describe(const struct sampler_stats *st, char *buf, size_t len);
pid_t sampler_pid(const struct sampler *s);
void sampler_free(struct sampler *s);

/*
 * With the locals option, after sampler_sample_once: fn gets each
 * variable of the index-th Python frame (outermost first, as its sample's
 * stack lists them) of thread tid, in the code's order: its name, its
 * type's name (NULL when unreadable) and its rendering (see struct
 * py_local; fn may be NULL, to ask only whether they were read).
 * Returns how many, -ENOENT when none were read for that
 * frame, or the negative errno of a read that failed.
 */
int sampler_frame_locals(const struct sampler *s, pid_t tid, uint32_t index,
			 void (*fn)(void *ctx, const char *name, const char *type,
				    const char *value),
			 void *ctx);

/* The process a pid or tid belongs to, with a clear error when none. */
int sampler_resolve_pid(pid_t pid_or_tid, pid_t *tgid, char *err,
			size_t errlen);

#endif
