// SPDX-License-Identifier: MIT
/*
 * What a recording says of itself (its metadata): how it was made, where
 * (host, clock, the launcher's rank), each followed process's label, and
 * at the end how it went. report reads it back to title, label and merge
 * recordings.
 */
#include <inttypes.h>
#include <sched.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/common.h"
#include "formats/formats.h"
#include "sampler/sampler.h"

static void set_meta_u64(struct profile *p, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	profile_set_meta(p, key, buf);
}

static const char *const launch_vars[][2] = {
	{ "RANK", "rank" }, { "LOCAL_RANK", "local_rank" }, { "WORLD_SIZE", "world_size" },
};

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000ll + t->tv_nsec;
}

/*
 * The wall clock less the monotonic one, read between two monotonic
 * reads: half their gap is how well (*err). TRAINSAMPLE_TEST_CLOCK_SKEW_NS
 * adds to it as if this machine's wall clock were that far ahead (tests
 * of recordings from machines whose clocks disagree).
 */
static void clock_offset(long long *offset, long long *err)
{
	struct timespec m1, real, m2;
	const char *skew = getenv("TRAINSAMPLE_TEST_CLOCK_SKEW_NS");

	clock_gettime(CLOCK_MONOTONIC, &m1);
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &m2);
	*offset = ns_of(&real) - (ns_of(&m1) + ns_of(&m2)) / 2;
	*err = (ns_of(&m2) - ns_of(&m1) + 1) / 2;
	if (skew)
		*offset += strtoll(skew, NULL, 10);
}

void record_meta_start(struct profile *p, const struct cli_options *o, bool attach,
		       const char *what)
{
	char buf[256];
	time_t now = time(NULL);
	long long offset, offset_err;
	struct tm tm;

	profile_set_meta(p, "trainsample_version", TRAINSAMPLE_VERSION);
	profile_set_meta(p, "mode", attach ? "attach" : "record");
	profile_set_meta(p, "command", what);
	snprintf(buf, sizeof(buf), "%g", o->rate_hz);
	profile_set_meta(p, "rate_hz", buf);
	set_meta_u64(p, "period_ns", (uint64_t)(1e9 / o->rate_hz));
	set_meta_u64(p, "stack_bytes", o->stack_bytes);
	profile_set_meta(p, "idle", o->idle ? "1" : "0");
	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	profile_set_meta(p, "start_time", buf);
	if (gethostname(buf, sizeof(buf)) == 0) {
		buf[sizeof(buf) - 1] = '\0';
		profile_set_meta(p, "hostname", buf);
	}
	/* Wall clock minus the samples' monotonic clock: recordings from
	 * several machines are put on one time line by it (report A B). */
	clock_offset(&offset, &offset_err);
	snprintf(buf, sizeof(buf), "%lld", offset);
	profile_set_meta(p, "clock_offset_ns", buf);
	set_meta_u64(p, "clock_offset_err_ns", (uint64_t)offset_err);
	/* Where a launcher (torchrun, srun) placed it, to tell ranks apart. */
	for (size_t i = 0; i < sizeof(launch_vars) / sizeof(launch_vars[0]); i++) {
		target_env_value(o->command ? 0 : o->pid, launch_vars[i][0], buf, sizeof(buf));
		if (buf[0])
			profile_set_meta(p, launch_vars[i][1], buf);
	}
}

void record_meta_end(struct profile *p, pid_t pid, const struct sampler_stats *st,
		     const char *why)
{
	char key[32], label[256];
	cpu_set_t cpus;

	set_meta_u64(p, "pid", (uint64_t)pid);
	/* The CPUs the target may run on (its own, else ours, which a
	 * started command inherits): more runnable threads than these wait. */
	if (sched_getaffinity(pid, sizeof(cpus), &cpus) == 0 ||
	    sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		set_meta_u64(p, "cpus", (uint64_t)CPU_COUNT(&cpus));
	snprintf(key, sizeof(key), "process.%d", (int)pid);
	process_label(profile_meta(p, "command"), profile_meta(p, "rank"), NULL, label, sizeof(label));
	profile_set_meta(p, key, label);
	/* A rank recorded by a trainsample of its own (torchrun --no-python
	 * trainsample record ...): its rank as a followed rank's. */
	if (profile_meta(p, "rank")) {
		snprintf(key, sizeof(key), "rank.%d", (int)pid);
		profile_set_meta(p, key, profile_meta(p, "rank"));
	}
	set_meta_u64(p, "duration_ns", st->elapsed_ns);
	set_meta_u64(p, "samples", st->samples);
	set_meta_u64(p, "missed_ticks", st->missed_ticks);
	set_meta_u64(p, "errors", st->errors);
	set_meta_u64(p, "target_cpu_ns", st->target_cpu_ns);
	set_meta_u64(p, "target_wait_ns", st->target_wait_ns);
	if (st->runnable_ticks)
		set_meta_u64(p, "runnable_milli", st->runnable_sum * 1000 / st->runnable_ticks);
	/* Every process's, and the CPUs they share: others' load. */
	if (st->machine_runnable_reads) {
		set_meta_u64(p, "machine_runnable_milli",
			     st->machine_runnable_sum * 1000 / st->machine_runnable_reads);
		set_meta_u64(p, "machine_cpus", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	}
	profile_set_meta(p, "end", why);
}

void record_meta_exit(struct profile *p, pid_t pid, int status, uint64_t ns)
{
	char key[32], buf[32];

	snprintf(key, sizeof(key), "exit.%d", (int)pid);
	if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "signal %d", WTERMSIG(status));
	else
		snprintf(buf, sizeof(buf), "status %d", WIFEXITED(status) ? WEXITSTATUS(status) : 0);
	profile_set_meta(p, key, buf);
	snprintf(key, sizeof(key), "exit_ns.%d", (int)pid);
	set_meta_u64(p, key, ns);
}

/* PID's parent (its status's PPid); 0 when unreadable. */
static pid_t parent_of(pid_t pid)
{
	char ppid[32];

	return proc_status_field(pid, "PPid", ppid, sizeof(ppid)) == 0 ? (pid_t)atoi(ppid) : 0;
}

/* The rank recorded for PID's parent into rank ("" none). */
static void parent_rank(const struct profile *p, pid_t pid, char *rank, size_t len)
{
	pid_t ppid = parent_of(pid);
	const char *r;
	char key[32];

	snprintf(key, sizeof(key), "rank.%d", (int)ppid);
	r = ppid > 0 ? profile_meta(p, key) : NULL;
	snprintf(rank, len, "%s", r ? r : "");
}

void record_meta_process(struct profile *p, pid_t pid, int worker, int spawn_rank)
{
	char rank[32], command[256], label[256], key[32], buf[32];

	target_env_value(pid, "RANK", rank, sizeof(rank));
	/* No launcher's RANK: torch.multiprocessing.spawn's process index;
	 * for a DataLoader worker that such a rank spawned (no RANK, no
	 * spawn frame of its own), its parent's. */
	if (!rank[0] && spawn_rank >= 0)
		snprintf(rank, sizeof(rank), "%d", spawn_rank);
	if (!rank[0] && worker >= 0)
		parent_rank(p, pid, rank, sizeof(rank));
	if (rank[0]) {
		snprintf(key, sizeof(key), "rank.%d", (int)pid);
		profile_set_meta(p, key, rank);
	}
	if (worker >= 0) {
		snprintf(key, sizeof(key), "worker.%d", (int)pid);
		snprintf(buf, sizeof(buf), "%d", worker);
		profile_set_meta(p, key, buf);
		snprintf(label, sizeof(label), "DataLoader worker %d%s%s", worker,
			 rank[0] ? " of rank " : "", rank);
	} else {
		if (proc_command_line(pid, command, sizeof(command)) < 0)
			return;
		process_label(command, rank, NULL, label, sizeof(label));
		/* A fork that kept its parent's command line (a forkserver's
		 * child, a Pool worker) is not what that line names: the
		 * summary tells the forkserver from the training it starts. */
		{
			pid_t ppid = parent_of(pid);
			const char *plabel;

			snprintf(key, sizeof(key), "process.%d", (int)ppid);
			plabel = ppid > 0 ? profile_meta(p, key) : NULL;
			if (plabel && !strcmp(plabel, label)) {
				snprintf(key, sizeof(key), "fork_of.%d", (int)pid);
				snprintf(buf, sizeof(buf), "%d", (int)ppid);
				profile_set_meta(p, key, buf);
			}
		}
	}
	snprintf(key, sizeof(key), "process.%d", (int)pid);
	profile_set_meta(p, key, label);
}
