/* SPDX-License-Identifier: MIT */
/*
 * Shared between the files of sampler/ only: a thread and struct sampler,
 * the core that holds each concern's state. Each concern declares its
 * state and calls in its own header (tick.h, waits.h, quiet.h, storm.h,
 * procs.h, signals.h, service.h, queue.h, stacks.h, builder.h: a copied
 * stack, struct stack_sample, is the builder's input); a file includes
 * those it uses. The calls left here are the core's:
 * threads, remote reads, attaching, stops, figures.
 */
#ifndef TRAINSAMPLE_SAMPLER_INTERNAL_H
#define TRAINSAMPLE_SAMPLER_INTERNAL_H

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "common/common.h"
#include "sampler/builder.h"
#include "sampler/histogram.h"
#include "sampler/procs.h"
#include "sampler/queue.h"
#include "sampler/quiet.h"
#include "sampler/sampler.h"
#include "sampler/service.h"
#include "sampler/signals.h"
#include "sampler/storm.h"
#include "sampler/syscall_watch.h"
#include "sampler/tick.h"
#include "sampler/waits.h"
#include "symbolize/python/python.h"

struct profile;
struct sym_process;

/* What trainsample last did to a thread, as far as ptrace is concerned. */
struct thread {
	pid_t tid;
	int loader_shown;     /* 1 + the DataLoader last put on its track; 0 none */
	int loader_iterated;  /* 1 + the DataLoader whose __iter__ it was last
			       * seen in, no fetch seen since; 0 none */
	pid_t ns_tid;         /* its id in the target's own PID namespace, as
			       * the target itself names it (Python's
			       * native_thread_id); 0 not read yet */
	int stat_fd;          /* /proc/PID/task/TID/stat, kept open */
	int syscall_fd;       /* /proc/PID/task/TID/syscall, opened on demand */
	int schedstat_fd;     /* /proc/PID/task/TID/schedstat, likewise */
	bool listening;       /* in a group stop, resumed with PTRACE_LISTEN */
	bool interrupt_sent;  /* PTRACE_INTERRUPT sent; its next stop, of any
			       * kind, is the one we asked for */
	bool counted;         /* ... and this tick waits for it */
	bool want_copy;       /* copy registers and stack at that stop */
	bool want_py_walk;    /* ... or, Python-only, walk its Python frames */
	bool pause_pending;   /* copied: record the pause once resumed */
	bool detaching;       /* detach at its next stop */
	bool gone;            /* exited or detached; removed after the pass */
	bool untraced;        /* memory-only: listed from /proc, not seized */
	bool walk_once;       /* memory-only: seized for one walk, let go at
			       * the stop that walks it */
	struct syscall_watch watch; /* syscall_watch.h: its waits watched */
	uint64_t interrupt_ns;/* when the interrupt was sent (pause figure) */
	uint64_t passed_ns;   /* ticks that passed it by while it sat in a
			       * ptrace stop of its own (a fork's event
			       * being handled): its next sample
			       * stands for them too, or that time is lost */
	uint64_t name_tick;   /* tick at which the name was last read; 0 never */
	struct stack_span stack; /* the mapping its sp was last seen in */
	int cpu;              /* where it last ran, from its stat */
	/* Blocked-thread cache: the stack of the last idle sample. */
	bool blocked_valid;
	int64_t blocked_nr;
	uint64_t blocked_sp, blocked_pc;
	uint32_t blocked_stack;
	uint32_t blocked_flags;
	uint64_t blocked_runtime; /* CPU time it had run then (schedstat) */
	/* Python-only ticks: the last idle sample, which stands while the
	 * thread does not run (its CPU time unchanged) */
	bool py_idle_valid;
	uint64_t py_idle_runtime;
	uint64_t py_active_ns; /* last seen running, or its CPU time moved */
	uint32_t py_idle_stack, py_idle_flags;
	bool py_named;        /* named by Python's threading: not by the OS */
	/* Blocked-thread checks (thread_poll_state): schedstat before stat */
	bool seen_blocked;    /* its stat last said S or D */
	char seen_state;      /* ... which */
	bool still_blocked;   /* this tick: not switched in since then */
	uint64_t seen_switches;  /* times it had been switched in then */
	uint64_t quiet_since_ns; /* blocked, not switched in, since; 0 if not */
	uint64_t confirmed_switches; /* ... when its blocked cache was last
				      * found to match its syscall file */
	uint64_t schedstat_tick; /* the tick its schedstat was last read at */
	uint64_t schedstat_switches; /* ... its switches in then */
	bool schedstat_known;    /* ... and whether that read said anything */
	uint64_t runtime_tick;   /* the tick runtime_ns was read at; 0 never */
	uint64_t runtime_ns;     /* its CPU time then (schedstat) */
	/* Waiting for a CPU: its run-queue wait (schedstat's second field)
	 * grew by half the time since the read before, as of cpu_wait_at. */
	uint64_t run_delay_ns, run_delay_at;
	uint64_t runtime_at_delay; /* runtime_ns at run_delay_at */
	uint64_t cpu_wait_at;    /* tick_now of the read that set cpu_wait */
	bool cpu_wait;
};

struct pysample;       /* sampler/python/pysample.h */

struct sampler {
	pid_t pid;
	struct proc_tree tree; /* procs.h: the processes followed */
	bool spawned;         /* we started it: it is our child */
	pid_t child;          /* spawned: the command we started, whose exit
			       * status is the run's; pid itself unless we
			       * followed its launcher into a child */
	bool follow_launcher; /* pid was reached from a launcher and has not
			       * exec'd since: its forks are followed too */
	bool memory_only;     /* seize nothing but a running GIL holder for
			       * its walk (opt.memory_only, until a native
			       * tick needs every thread seized) */
	pid_t tracer;         /* memory-only: the process's tracer; 0 none */
	bool other_pidns;     /* the target lives in a PID namespace below
			       * ours (a container): its own thread ids
			       * differ from the ones we trace */
	bool exited;          /* the whole process is gone */
	int exit_status;      /* wait status of the spawned child, if reaped */
	bool exit_reaped;
	struct sampler_options opt;
	uint64_t period_ns;
	struct profile *profile;
	struct sym_process *sym;
	struct sample_builder build; /* builder.h: the after-resume path (stacks.c) */
	struct pysample *py;    /* NULL: not looked for */

	struct thread **threads;
	size_t nthreads, cap_threads;
	size_t threads_gone;  /* removed since the last sweep */

	sigset_t old_mask;    /* the caller's mask, restored on free */
	struct rlimit old_nofile; /* the caller's descriptor limit, likewise */
	unsigned long old_timer_slack; /* and its timer slack */
	int old_nice;         /* and its nice value, where we raised ours */
	bool nice_raised;
	int sigfd;
	int timerfd;
	struct waits_state waits; /* waits.h */
	struct quiet_state quiet; /* quiet.h */
	uint64_t schedstat_cost_ns; /* a schedstat read, smoothed (threads.c) */
	struct target_signals signals; /* signals.h */
	bool detaching_all;   /* threads that show up now are let go at once */
	struct storm_state storm; /* storm.h */

	struct copy_queue queue; /* queue.h */
	uint64_t exec_seq;    /* execs seen; copies of older images are dropped */
	uint64_t tick_now, tick_weight; /* the current tick's time and weight */
	size_t threads_passed;          /* threads whose passed_ns is not 0 */
	uint64_t cpu_wait_seen_at;      /* the last tick a thread waited for a CPU */
	struct tick_pass pass; /* tick.h: this tick's pass */
	struct service_state service; /* service.h */

	uint64_t tick;
	uint64_t last_tick_ns;
	uint64_t machine_read_ns; /* the last /proc/loadavg read (tick.c) */
	uint64_t start_ns, end_ns;
	uint64_t settled_at_ns, settled_cpu_ns; /* a second into sampling: when,
						 * and our CPU time then */
	uint64_t end_cpu_ns;  /* ... and at end_ns, before letting go */
	uint64_t rng;
	struct sampler_stats st;
	struct duration_histogram pause_hist, unwind_hist;
};

/* sampler.c */
int sampler_new(struct sampler **out, struct profile *p,
		const struct sampler_options *o, char *err, size_t errlen);
/* Opens the symbolizer and the Python reader; on failure the caller frees
 * the sampler, which lets go of what was seized. */
int sampler_open_symbols(struct sampler *s, char *err, size_t errlen);

/* threads.c */
struct thread *thread_find(struct sampler *s, pid_t tid);
/* Reads its schedstat now (a running GIL holder's, which the Python
 * sampler does not poll otherwise): cpu_wait up to date. */
void thread_note_cpu_wait(struct sampler *s, struct thread *t);
struct thread *thread_add(struct sampler *s, pid_t tid);
/* The thread the target knows as ns_tid in its own PID namespace (what
 * gettid() returned there); the same as thread_find outside containers. */
struct thread *thread_find_ns(struct sampler *s, pid_t ns_tid);
/* Notes whether the target is in a PID namespace below ours. */
void threads_note_namespace(struct sampler *s);
/* thread_add for a tid a clone event named: NULL with *foreign set when
 * it is a new process rather than a thread of ours. */
struct thread *thread_adopt(struct sampler *s, pid_t tid, bool *foreign);
void thread_remove(struct sampler *s, struct thread *t);
void threads_sweep(struct sampler *s);
void threads_free(struct sampler *s);
/* State letter from /proc/PID/task/TID/stat ('R', 'S', ...), 0 if gone. */
char thread_state(struct sampler *s, struct thread *t);
/* The same at a tick, where a thread last seen blocked that has not been
 * switched in since is blocked still, its stat not read (sets
 * still_blocked); one blocked for long is asked only every QUIET_CHECK_NS. */
char thread_poll_state(struct sampler *s, struct thread *t);
/* Its schedstat (switches in, to *switches if not NULL), read once a tick;
 * 0, or -EIO when it says nothing. */
int thread_schedstat(struct sampler *s, struct thread *t, uint64_t *switches);

/* -EAGAIN when the thread is running rather than blocked. */
int thread_blocked_state(struct sampler *s, struct thread *t,
			 struct blocked_state *b);
int thread_read_name(struct sampler *s, pid_t tid, char *buf, size_t len);
/* The CPU time the thread has run, ns (schedstat); 0 when unknown. Read
 * once a tick: a value from earlier in it is lower if anything, which only
 * makes a thread look as if it ran. */
uint64_t thread_runtime(struct sampler *s, struct thread *t);
bool traced_by_us(pid_t tid);
/* The process's name (comm); "" when gone. */
void proc_comm(pid_t pid, char *buf, size_t len);

/* remote.c */
ssize_t remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);
ssize_t remote_readv(pid_t pid, const struct iovec *local, const struct iovec *remote, int n);
int regs_get(pid_t tid, struct user_regs_struct *regs);
int regs_set(pid_t tid, const struct user_regs_struct *regs);
int proc_is_64bit(pid_t pid);

/* sampler.c: trainsample's own CPU time, ns */
uint64_t own_cpu_ns(void);
/* sampler.c: a line on stderr for the user, unless quiet */
void sampler_notice(const struct sampler *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* stops.c: the ptrace state machine */
void stops_log(const struct sampler *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void stops_handle(struct sampler *s, pid_t tid, int status);

/* attach.c */
int attach_threads(struct sampler *s, char *err, size_t errlen);
void detach_threads(struct sampler *s);
int attach_explain_failure(pid_t pid, int error, char *err, size_t errlen);
/* The same for a process whose memory cannot be read (a tracer is no
 * reason then). */
int attach_explain_no_access(pid_t pid, int error, char *err, size_t errlen);

/* unseized.c: memory-only sampling (dump without --native) */
int unseized_attach(struct sampler *s, char *err, size_t errlen);
/* Seizes t, running and holding the GIL, for the one walk of this tick.
 * -EBUSY: another tracer holds the process. */
int unseized_seize_for_walk(struct sampler *s, struct thread *t);

/* The root of s's process tree (procs.h): s itself in the root. */
static inline struct sampler *sampler_root(struct sampler *s)
{
	return s->tree.root ? s->tree.root : s;
}
/*
 * How far apart to make a periodic chore that cost cost_ns last time so it
 * takes a quarter percent of a core at most: a chore whose cost grows with
 * the target's threads or maps (a walk of every traced thread, the process
 * CPU clock, the maps) must not grow trainsample's share with them.
 */
static inline uint64_t spaced_for_cost(uint64_t cost_ns, uint64_t least_ns, uint64_t most_ns)
{
	uint64_t every = cost_ns * 400;

	return every < least_ns ? least_ns : every > most_ns ? most_ns : every;
}

/* setid.c: at an exec stop, a set-user-ID, set-group-ID or
 * file-capability program whose privilege the kernel withheld from the
 * traced exec is made to exec again and is to be let go (true, only when
 * may_let_go), or the lost privilege is said in one line (false: it stays
 * followed); a program trainsample may not read gets a line and is let
 * go when may_let_go. */
bool setid_at_exec(struct sampler *s, bool may_let_go);

/* follow.c: record -- unshare -p -f CMD, the sampler moves from the
 * launcher it started to the child it forked into a new PID namespace */
bool follow_wanted(struct sampler *s, pid_t child);
/* Makes child the target and lets the launcher go (its thread stopped,
 * at a stop now, is left to the caller to detach). The child's thread,
 * or NULL when it cannot be followed (nothing has changed then). */
struct thread *follow_child(struct sampler *s, pid_t child, struct thread *stopped);

/* sampler.c: the figures */
void stats_pause(struct sampler *s, uint64_t ns);
/* Counts a stop whose registers say the thread trapped on its way out of
 * a syscall or fault it entered itself (orig_rax >= 0), not where our
 * interrupt reached it: such samples lean onto that code. */
void stats_trap_entry(struct sampler *s, const struct user_regs_struct *regs);
/* One more error of that kind in the stats. */
void stats_error(struct sampler *s, enum sampler_error_kind kind);

#endif
