// SPDX-License-Identifier: MIT
/*
 * What record tells the user besides its outputs: the --stats block at
 * the end, and whether the target writes to our terminal (the progress
 * line is drawn only when it does not).
 */
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sampler/sampler.h"

/* Whether the target writes to our terminal: its fd 1 or 2 is the
 * character device our stderr is. */
bool record_target_shares_terminal(pid_t pid)
{
	struct stat ours, theirs;
	char path[64];

	if (fstat(STDERR_FILENO, &ours) < 0)
		return true;
	for (int fd = 1; fd <= 2; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		if (stat(path, &theirs) == 0 && S_ISCHR(theirs.st_mode) &&
		    theirs.st_rdev == ours.st_rdev)
			return true;
	}
	return false;
}

void record_stats_print(const struct sampler_stats *st)
{
	double secs = (double)st->elapsed_ns / 1e9;
	char python[256], kinds[160], storm[128] = "", settled[64] = "", quiet[160] = "";
	char share[64], cold[48], exits[64] = "";

	if (st->python[0])
		snprintf(python, sizeof(python), "%s", st->python);
	else if (st->python_refused[0])
		snprintf(python, sizeof(python), "none (native stacks): %s", st->python_refused);
	else
		snprintf(python, sizeof(python), "none (native stacks): no interpreter seen");
	sampler_errors_describe(st, kinds, sizeof(kinds));
	if (st->settled_ns)
		snprintf(settled, sizeof(settled), "; %.1f%% after the first second",
			 100.0 * (double)st->cpu_settled_ns / (double)st->settled_ns);
	if (st->quiet_ticks)
		snprintf(quiet, sizeof(quiet), "; those blocked for long re-read at %" PRIu64
			 " of %" PRIu64 " ticks (the process CPU clock read %" PRIu64 " times)",
			 st->quiet_asks, st->quiet_ticks, st->quiet_clock_reads);
	/* Start-up (symbols read, the interpreter found) over a run of a
	 * few milliseconds is no share of anything. */
	if (secs >= 0.5)
		snprintf(share, sizeof(share), "%.1f%% of one core", 100.0 * (double)st->cpu_ns / 1e9 / secs);
	else
		snprintf(share, sizeof(share), "a run of %.2f s: too short for a share", secs);
	/* The root process's first unwind; its children's are not timed. */
	if (st->unwind_first_ns)
		snprintf(cold, sizeof(cold), "%.1f us", (double)st->unwind_first_ns / 1e3);
	else
		snprintf(cold, sizeof(cold), st->unwinds ? "none in the first process" : "none");
	/* A thread that enters the kernel by itself before our interrupt
	 * reaches it traps on the way out: samples lean onto that code. */
	if (st->stops_at_kernel_exit)
		snprintf(exits, sizeof(exits), "; %.1f%% of them at a syscall's or fault's end",
			 st->stops ? 100.0 * (double)st->stops_at_kernel_exit / (double)st->stops : 0.0);
	if (st->storm_ns)
		snprintf(storm, sizeof(storm),
			 "; a thread storm from %.2f s: %" PRIu64 " threads found at ticks",
			 (double)st->storm_ns / 1e9, st->storm_seized);

	fprintf(stderr,
		"trainsample: stats\n"
		"  duration         %.2f s\n"
		"  ticks            %" PRIu64 " (missed %" PRIu64 "); %" PRIu64 " waitpid(-1) walks of every traced thread\n"
		"  samples          %" PRIu64 " (idle %" PRIu64 ", truncated %" PRIu64 ", dropped %" PRIu64 ")\n"
		"  processes        %" PRIu64 " sampled, %" PRIu64 " child processes not\n"
		"  threads          %" PRIu64 " seen, %u live at the end%s%s\n"
		"  errors           %" PRIu64 "%s%s%s\n"
		"  target pause     p50 %.1f us, p99 %.1f us, max %.1f us (%" PRIu64 " stops%s); "
		"its own stops unanswered at most %.1f ms\n"
		"  unwind           p50 %.1f us, p99 %.1f us, first (cold) %s (%" PRIu64 " stacks)\n"
		"  kept intact      %" PRIu64 " syscalls restarted after EINTR, %" PRIu64 " waits watched to their end (%" PRIu64
		" of them made again after EINTR), %" PRIu64 " signals passed on, %" PRIu64 " resumes held for them\n"
		"  target cpu       %.3f s on a CPU, %.3f s waiting for one (its threads' schedstat); "
		"%.1f threads runnable at a tick\n"
		"  trainsample cpu  %.3f s (%s%s)\n"
		"  python           %s\n"
		"  python walks     %" PRIu64 " of the GIL holder while stopped (%" PRIu64 " of them redone so:"
		" it held the GIL once read); %" PRIu64 " redone and %"
		PRIu64  " given up as torn (the thread moved while read)\n",
		secs, st->ticks, st->missed_ticks, st->stop_walks, st->samples, st->idle_samples, st->truncated,
		st->dropped, st->processes, st->processes_left,
		st->threads_seen, st->threads_live, quiet, storm, st->errors, kinds[0] ? " (" : "", kinds,
		kinds[0] ? ")" : "",
		(double)st->pause_p50_ns / 1e3, (double)st->pause_p99_ns / 1e3,
		(double)st->pause_max_ns / 1e3, st->stops, exits, (double)st->unanswered_max_ns / 1e6,
		(double)st->unwind_p50_ns / 1e3,
		(double)st->unwind_p99_ns / 1e3, cold, st->unwinds,
		st->syscalls_restarted, st->waits_watched, st->waits_rewound,
		st->signals_forwarded, st->signal_holds, (double)st->target_cpu_ns / 1e9,
		(double)st->target_wait_ns / 1e9,
		st->runnable_ticks ? (double)st->runnable_sum / (double)st->runnable_ticks : 0.0,
		(double)st->cpu_ns / 1e9, share, settled,
		python,
		st->py_holder_walks, st->py_walks_redone_stopped, st->py_walks_retried, st->py_walks_torn);
}

/* A sample is weighted by the time since its thread's previous one, so
 * shares survive missed ticks; what they cost is resolution, which a
 * person reading "10 ms" per sample would not guess. A twentieth: the
 * drawn gaps alone never miss that many on a machine that keeps up. */
void record_missed_warn(const struct sampler_stats *st, double rate_hz)
{
	uint64_t deadlines = st->ticks + st->missed_ticks;
	double period_ms = rate_hz > 0 ? 1e3 / rate_hz : 0;
	double mean_ms = st->ticks ? (double)st->elapsed_ns / 1e6 / (double)st->ticks : 0;

	if (!deadlines || st->missed_ticks * 20 <= deadlines)
		return;
	cli_warn("%" PRIu64 " of %" PRIu64 " ticks were missed (%.0f%%; the machine or trainsample "
		 "was too busy): samples stand for %.3g ms each on average, not %.3g ms; shares "
		 "stay right, but calls shorter than that may be missed (a lower -r misses fewer)",
		 st->missed_ticks, deadlines, 100.0 * (double)st->missed_ticks / (double)deadlines,
		 mean_ms, period_ms);
}
