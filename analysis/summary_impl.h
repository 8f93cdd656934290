/* SPDX-License-Identifier: MIT */
/* The run's summary as figures (summary.c), for its two writers:
 * summary_text.c (the terminal) and summary_json.c (summary.json). */
#ifndef TRAINSAMPLE_ANALYSIS_SUMMARY_IMPL_H
#define TRAINSAMPLE_ANALYSIS_SUMMARY_IMPL_H

#include <stdio.h>

#include "common/common.h"
#include "analysis/phase_impl.h"

#define SUMMARY_TOP 8
#define LOOP_STARTUP PHASE_KINDS /* loop_ns's slot for startup */

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

struct summary_thread {
	uint32_t tid;
	uint64_t samples, busy_ns, idle_ns, gil_ns;
	uint64_t cpu_wait_ns;      /* of busy_ns: runnable, waiting for a CPU */
	uint64_t phase_ns[PHASE_KINDS];
	uint64_t compute_samples;  /* in forward, backward or the optimizer */
};

/* A function: its name and file, over all its lines. */
struct summary_func {
	uint32_t name, file; /* string ids; file 0 for a native one */
	uint64_t self_ns, total_ns;
};

/*
 * A DataLoader of the loop thread, told apart by its object or by the
 * line that fetches from it. Training: the steps that fetched from it last, and their time
 * by phase; evaluation: its batches (runs of forward inside eval) and
 * their data and forward time.
 */
struct summary_loader {
	uint32_t site;         /* frame id of the fetching line */
	int object;            /* the recorder's number of the DataLoader object
				* (its "dataloader.PID.TID" tracks); -1 unknown */
	uint64_t steps;
	uint64_t step_ns[PHASE_KINDS];
	uint64_t wait_ns;      /* data time spent blocked: waiting for a batch */
	uint64_t val_batches, val_data_ns, val_forward_ns;
	bool train, val;
	/* Training passes started (runs of its *.__iter__), and the time
	 * they took and their ends (_shutdown_workers) took. */
	uint64_t epochs, epoch_start_ns, epoch_stop_ns;
	/* Its iterators that forked worker processes (summary_workers.c):
	 * two or more, its workers are started again at each pass. */
	uint64_t worker_starts;
};

/* The loop thread making a loader's iterator (a run of *.__iter__ data
 * samples), training or evaluation: its workers fork inside it. */
struct summary_iter_start {
	uint64_t start_ns, end_ns;
	uint32_t site;  /* the loop's line that makes it; FRAME_NONE */
	int loader;     /* index in the process's loaders; -1 unknown */
};

/*
 * A DataLoader worker process of a loop's process, and its loading
 * thread: the one that runs _worker_loop and __getitem__ (its main
 * thread), not QueueFeederThread or the others, which mostly sleep.
 */
struct summary_worker {
	uint32_t pid, tid;
	uint64_t first_ns;      /* its first sample */
	uint32_t site;          /* its inherited frames' line that made its
				 * loader's iterator; FRAME_NONE */
	int loader;             /* index in the process's loaders; -1 unknown */
	int start;              /* index in iter_starts; -1 unknown */
	uint64_t busy_ns, all_ns; /* the loading thread's */
	uint64_t cpu_wait_ns;     /* ... of busy_ns: waiting for a CPU */
	uint32_t hottest;       /* its process's hottest line */
	uint64_t hottest_ns;
};

/* A site's phase, or SITE_OTHER_INNER: the innermost Python frame of the
 * loop's time in no phase (the function that spends it); SITE_CPU_COPY:
 * the innermost Python frame above ATen's copies and conversions. */
#define SITE_OTHER_INNER PHASE_KINDS
#define SITE_CPU_COPY (PHASE_KINDS + 1)

struct summary_site {
	int phase;      /* enum phase, or SITE_OTHER_INNER */
	uint32_t frame; /* the line that calls into it; for PHASE_OTHER, the
			 * loop body's line the time is spent under */
	uint64_t ns;
};

struct summary_process {
	uint32_t pid;
	uint64_t samples, busy_ns, idle_ns, gil_ns;
	uint64_t cpu_wait_ns;              /* of busy_ns: waiting for a CPU */
	struct summary_thread *threads;
	size_t nthreads, cap_threads;
	struct hash_table tids;            /* tid -> threads[] */
	const struct summary_thread *loop; /* the training loop's thread; NULL */
	struct step_stats steps;           /* steps.timed 0: none counted */
	bool steps_too_short;              /* the beat is under two periods */
	uint64_t startup_ns;               /* the loop thread before its first step */
	uint64_t epochs;                   /* DataLoader passes started (runs of
					    * *.__iter__ data frames) */
	uint64_t epoch_start_ns;           /* ... and the time they took */
	uint64_t epoch_stop_ns;            /* ending passes: their workers joined */
	/* Where the loop's steps sync and log: the calling lines' time. */
	struct summary_site *sites;
	size_t nsites, cap_sites;
	/* The loop thread's time by phase, its time before the first step
	 * (where steps were counted) as startup, in the last slot. */
	uint64_t loop_ns[PHASE_KINDS + 1];
	uint32_t hottest;                  /* the leaf frame (with its line) with
					    * the most busy time; 0 none */
	uint64_t hottest_ns;
	struct summary_func top_self[SUMMARY_TOP], top_total[SUMMARY_TOP];
	size_t ntop_self, ntop_total;
	/* Busy time of samples with native frames, and of those in compute
	 * libraries (ATen, BLAS, oneDNN, CUDA's launch API). */
	uint64_t native_ns, compute_ns;
	uint64_t cpu_copy_ns;              /* of native_ns: in ATen's copies and conversions */
	uint64_t omp_runtime_ns;           /* ... at a leaf in the OpenMP runtime itself
					    * (its threads waiting, spinning at barriers) */
	struct summary_loader *loaders;
	size_t nloaders, cap_loaders;
	struct summary_iter_start *iter_starts;
	size_t niter_starts, cap_iter_starts;
	struct summary_worker *workers;    /* its DataLoader worker processes */
	size_t nworkers, cap_workers;
	/* Its GPU work: the first kernel's start (as summary_gpu's first_ns),
	 * all activities' time summed. */
	uint64_t gpu_first_ns, gpu_work_ns;
	bool gpu_kernel_seen;
	uint64_t gpu_data_ns;              /* the loop's data wait since then */
	/* Over the steps: its other threads' busy comm time (a backend's
	 * threads, seen by their native frames), and the part of it while
	 * the loop thread was not in comm (summary_comm.c). */
	uint64_t comm_busy_ns, comm_hidden_ns;
};

struct summary_gpu {
	uint32_t device;
	uint64_t busy_ns, kernels; /* busy: kernels', copies' and memsets' union */
	uint64_t first_ns;         /* its first kernel's start (its first work's
				    * without kernels): the run before it (imports,
				    * setup, weights copied in) is not the GPU's */
	uint64_t short_kernels;    /* under 10 us: launch overhead rules them */
	uint64_t kernel_ns;        /* the kernels' own time, summed */
	uint64_t comm_ns;          /* ... of which communication's (NCCL's kernels:
				    * the comm rules' "[kernel] nccl*") */
	uint32_t launch_stack;     /* the stack that launched the most kernels */
	uint64_t launch_count;
	/* Copies between the host and this GPU; "slow" ones are the host's
	 * burden: from or to pageable memory, or synchronous. */
	uint64_t copies, copy_ns, copy_bytes;
	uint64_t pageable_copies, pageable_bytes, sync_copies, null_copies;
	uint64_t slow_ns, slow_call_ns; /* slow copies' GPU time, and their API calls' */
	uint64_t null_ns;          /* copies on the NULL stream: no overlap with kernels */
	uint32_t copy_stack;       /* the stack that made the most slow copies */
	uint64_t copy_count;
	double energy_j;           /* its NVML power readings over time; */
	bool have_energy;          /* ... none without them */
	uint64_t power_at;         /* the last reading's time, its watts */
	double power_w;
};

struct launch_tally {
	uint32_t device, stack;
	uint64_t count;
};

/* Stacks that launched GPU work, by device: the first 256 seen. */
struct launch_tallies {
	struct launch_tally *v;
	size_t n, cap;
};

struct summary {
	struct phase_map *m;
	const struct profile *p;
	struct summary_process *procs; /* most samples first */
	size_t nprocs, cap_procs;
	uint64_t samples, period_ns;
	uint64_t start_ns, end_ns;     /* the timeline's; 0 without one */
	unsigned int cpus;             /* the target's CPUs (its affinity); 0 unknown */
	uint64_t target_cpu_ns, target_wait_ns; /* its threads' schedstat totals; 0 unknown */
	double runnable;               /* its threads runnable at a tick, on average; 0 unknown */
	double machine_runnable;       /* the machine's, all processes' (from
					* /proc/loadavg); < 0 unknown */
	unsigned int machine_cpus;     /* the CPUs they share; 0 unknown */
	struct summary_gpu *gpus;
	size_t ngpus, cap_gpus;
	struct launch_tallies kernel_sites, copy_sites; /* kernels, slow copies */
};

/* Adds ns to the process's site (kind, frame). */
int summary_site_add(struct summary_process *sp, int kind, uint32_t frame, uint64_t ns);

/* summary_gpu.c: the devices' figures and each process's GPU work and
 * data wait since its first kernel (after the processes are found). */
int summary_gpus_find(struct summary *s);

/* The time from a GPU's first kernel to the run's end; 0 unknown. */
uint64_t summary_gpu_window(const struct summary *s, const struct summary_gpu *g);
/* Its busy time's share of that window (work before it counted, at most 1). */
double summary_gpu_busy_share(const struct summary *s, const struct summary_gpu *g);
/* A process's GPU work's share of the time since its first: 0 with none. */
double summary_process_gpu_busy(const struct summary *s, const struct summary_process *sp);

/* findings.c: every finding as a JSON array, for summary.json. */
int findings_json_write(const struct summary *s, struct json_out *j);

/* summary_loaders.c: the loop thread's DataLoaders and their figures. */
int summary_loaders_find(struct summary *s, struct summary_process *sp);
/* A loader's name: the variable its line iterates over, else "0", "1",
 * ... by first use in the process. */
void summary_loader_name(const struct summary *s, const struct summary_process *sp, size_t i,
			 char *buf, size_t len);

/* summary_comm.c: the process's comm threads' time beside its loop's
 * steps (after steps_find). */
int summary_comm_find(struct summary *s, struct summary_process *sp);

/* summary_workers.c: the process's DataLoader worker processes, each
 * with its loading thread's time and the loader whose iterator made it
 * (after summary_loaders_find). */
int summary_workers_find(struct summary *s, struct summary_process *sp);

/* summary_ranks.c: a distributed job's ranks side by side. */
#define RANKS_MAX 256
struct rank_row {
	const struct summary_process *sp;
	long rank;
	/* ms a step, each over the rank's own steps: by phase, all of them,
	 * its comm wait, and the rest (its own work) */
	double phase_ms[PHASE_KINDS];
	double step_ms, comm_ms, work_ms;
	uint64_t stopped_early_ns; /* its last step began so long before the
				    * last rank's last step; 0 it did not */
	const char *exit;          /* how it ended ("status 3", "signal 9");
				    * NULL not seen to */
	uint64_t exit_ns;
};
/* A process's launch rank (its "rank.PID"), false none. */
bool summary_rank_of(const struct summary *s, uint32_t pid, long *rank);
/* How it ended ("status 3", "signal 9"; its time into *ns, 0 unknown),
 * NULL not seen to end; summary_exit_failed whether that was a failure:
 * not status 0, nor a user's Ctrl-C (SIGINT reaches every rank at once:
 * none of them failed first). */
const char *summary_exit_of(const struct summary *s, uint32_t pid, uint64_t *ns);
bool summary_exit_failed(const char *exit);
/* The processes with a launch rank and steps counted, by rank: how many
 * (max at most). */
size_t summary_ranks(const struct summary *s, struct rank_row *rows, size_t max);
/* ranks_clocks.c: a rank's host as its label says ("rank 1 on HOST"),
 * NULL the first recording's; and how far other's machine's clock runs
 * ahead of ref's, by the ends of their collectives (known false: too few
 * steps where both were seen waiting). */
struct clock_skew {
	bool known;
	double ahead_ms, uncertainty_ms;
	size_t steps; /* comm waits matched */
};
const char *rank_host(const struct summary *s, const struct rank_row *r);
int ranks_clock_skew(const struct summary *s, const struct rank_row *ref,
		     const struct rank_row *other, struct clock_skew *out);
struct json_out;
void summary_ranks_text(const struct summary *s, FILE *out);
void summary_ranks_json(const struct summary *s, struct json_out *j);

#endif
