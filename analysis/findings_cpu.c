// SPDX-License-Identifier: MIT
/*
 * The findings about the CPUs a run had: threads taking turns at the GIL,
 * more runnable threads than CPUs (the run queue, OpenMP's spinning), and
 * time in tensor copies on the CPU (with --native). Each from the
 * summary's per-process and per-thread figures.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/findings_impl.h"
#include "analysis/summary_impl.h"
#include "formats/formats.h"

/* Threads of one process that take turns holding the GIL: each holds it a
 * fifth of its time or more, and together they hold it nearly always. */
void findings_gil_contention(const struct summary *s, const struct summary_process *sp,
			     struct finding_list *l)
{
	uint64_t held = 0, longest = 0;
	size_t n = 0;
	struct finding *f;

	for (size_t i = 0; i < sp->nthreads; i++) {
		const struct summary_thread *t = &sp->threads[i];
		uint64_t all = t->busy_ns + t->idle_ns;

		longest = all > longest ? all : longest;
		if (all && t->gil_ns * 5 >= all) {
			n++;
			held += t->gil_ns;
		}
	}
	if (n < 2 || !longest || held * 10 < longest * 8)
		return;
	f = finding_add(l, "gil-contention", 1.0 - 1.0 / (double)n, sp->pid,
			"move CPU work into processes (DataLoader workers, multiprocessing) or into native "
			"code that releases the GIL; threads help only while they wait");
	if (!f)
		return;
	snprintf(f->title, sizeof(f->title), "%zu threads take turns holding the GIL (held %.0f%% of "
		 "the time): they run one at a time", n, 100.0 * (double)held / (double)longest);
	for (size_t i = 0; i < sp->nthreads; i++) {
		const struct summary_thread *t = &sp->threads[i];
		uint64_t all = t->busy_ns + t->idle_ns;
		const char *name = profile_thread_name(s->p, sp->pid, t->tid);

		if (all && t->gil_ns * 5 >= all)
			finding_evidence(f, "%s (%" PRIu32 ") held it %.0f%% of its time, was on a CPU %.0f%%",
					 name && *name ? name : "thread", t->tid,
					 100.0 * (double)t->gil_ns / (double)all,
					 100.0 * (double)t->busy_ns / (double)all);
	}
}

/*
 * Whose threads the waiting is for: the job's own, or other processes'
 * on the machine (recorded as /proc/loadavg's runnable threads, a second
 * apart). From averages: of the threads runnable beyond the CPUs, the
 * part the job's own make up (its runnable less its CPUs) is its own
 * doing, the rest others', counted on the job's CPUs in proportion to
 * the machine's. Without the machine's figure, it says so. The job's
 * own share, -1 unknown.
 */
static double whose_wait(const struct summary *s, double runnable, uint64_t waits,
			 struct finding *f)
{
	double others, excess, own;

	if (s->machine_runnable < 0) {
		finding_evidence(f, "how much of it is other processes' load is not known: the "
				 "recording has no machine-wide figure (made by an older trainsample)");
		return -1;
	}
	others = s->machine_runnable - runnable;
	others = others > 0 ? others : 0;
	if (s->machine_cpus > s->cpus)
		others = others * (double)s->cpus / (double)s->machine_cpus;
	excess = runnable + others - (double)s->cpus;
	own = runnable > (double)s->cpus ? runnable - (double)s->cpus : 0;
	own = excess > 0 ? (own < excess ? own / excess : 1.0) : 1.0;
	finding_evidence(f, "the machine: %.1f threads runnable on average (every process's, "
			 "/proc/loadavg), %.1f of them other processes' on these CPUs",
			 s->machine_runnable, others);
	finding_evidence(f, "of the %.2f s waiting, about %.2f s (%.0f%%) is the job's own threads "
			 "outnumbering its CPUs, %.2f s (%.0f%%) other processes' load",
			 (double)waits / 1e9, own * (double)waits / 1e9, 100.0 * own,
			 (1 - own) * (double)waits / 1e9, 100.0 * (1 - own));
	return own;
}

/*
 * More runnable threads than CPUs: the target's threads spend a fifth of
 * their busy time or more waiting on a run queue, and it has more of them
 * runnable on average than it may use CPUs. Others' load alone (a busy
 * machine) is not the target's to fix and is not reported.
 */
void findings_cpu_oversubscribed(const struct summary *s, struct finding_list *l)
{
	uint64_t busy = 0, wait = 0, omp = 0, all, waits;
	uint64_t wall = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	const struct summary_process *wp[2] = { NULL, NULL };
	const struct summary_thread *wt[2] = { NULL, NULL };
	double runnable, cost, own;
	bool queued, spinning;
	unsigned int team = 0; /* threads busy a tenth of the run or more */
	struct finding *f;

	for (size_t i = 0; i < s->nprocs; i++) {
		const struct summary_process *sp = &s->procs[i];

		busy += sp->busy_ns;
		wait += sp->cpu_wait_ns;
		omp += sp->omp_runtime_ns;
		for (size_t k = 0; k < sp->nthreads; k++) {
			const struct summary_thread *t = &sp->threads[k];

			team += t->busy_ns * 10 >= wall;
			if (!wt[0] || t->cpu_wait_ns > wt[0]->cpu_wait_ns) {
				wt[1] = wt[0], wp[1] = wp[0];
				wt[0] = t, wp[0] = sp;
			} else if (!wt[1] || t->cpu_wait_ns > wt[1]->cpu_wait_ns) {
				wt[1] = t, wp[1] = sp;
			}
		}
	}
	/* The threads' own counters where recorded: a thread kept off the
	 * CPUs can miss its samples, not its run-queue wait. */
	if (s->target_cpu_ns + s->target_wait_ns) {
		all = s->target_cpu_ns + s->target_wait_ns;
		waits = s->target_wait_ns;
	} else {
		all = busy;
		waits = wait;
	}
	if (!busy || !all || !wall || !s->cpus)
		return;
	/* Counted at each tick where recorded: threads in our stops are
	 * runnable too, where their counters show neither running nor
	 * waiting. */
	runnable = s->runnable ? s->runnable : (double)all / (double)wall;
	queued = waits * 5 >= all && runnable > (double)s->cpus;
	/* An OpenMP team larger than the CPUs: its runtime throttles the
	 * spinning, so few wait on a run queue, but the team's time goes
	 * into the runtime itself (waking, spinning, sleeping at barriers). */
	spinning = omp * 5 >= busy && team > s->cpus;
	if (!queued && !spinning)
		return;
	cost = queued ? (double)waits / (double)all : 0;
	if (spinning && (double)omp / (double)busy > cost)
		cost = (double)omp / (double)busy;
	f = finding_add(l, "cpu-oversubscribed", cost, 0,
			"fewer runnable threads than CPUs: num_workers at most the CPUs less one for the "
			"main process; torch.set_num_threads(n) or OMP_NUM_THREADS=n in each process, "
			"n times the processes at most the CPUs");
	if (!f)
		return;
	if (queued)
		snprintf(f->title, sizeof(f->title), "%.1f threads runnable on average for %u CPUs: "
			 "%.0f%% of their busy time waiting for a CPU", runnable, s->cpus,
			 100.0 * (double)waits / (double)all);
	else
		snprintf(f->title, sizeof(f->title), "%u busy threads for %u CPUs", team, s->cpus);
	if (spinning)
		snprintf(f->title + strlen(f->title), sizeof(f->title) - strlen(f->title),
			 ", %.0f%% of their busy time inside the OpenMP runtime",
			 100.0 * (double)omp / (double)busy);
	finding_evidence(f, "busy %.2f s in %.2f s, of which %.2f s waiting on a run queue (schedstat)",
			 (double)all / 1e9, (double)wall / 1e9, (double)waits / 1e9);
	if (queued && (own = whose_wait(s, runnable, waits, f)) >= 0 && own < 0.5)
		finding_hint(f, "most of the waiting is other processes': CPUs of its own "
			     "(taskset, a quieter machine) help more than fewer threads");
	if (omp * 20 >= busy)
		finding_evidence(f, "%.0f%% of the busy time inside the OpenMP runtime (its threads "
				 "waiting at barriers, spinning: OMP_WAIT_POLICY=passive stops the spin)",
				 100.0 * (double)omp / (double)busy);
	for (int k = 0; k < 2; k++) {
		const char *name, *label;

		if (!wt[k] || !wt[k]->cpu_wait_ns)
			continue;
		name = profile_thread_name(s->p, wp[k]->pid, wt[k]->tid);
		label = process_label_of(s->p, wp[k]->pid);
		finding_evidence(f, "waiting most: PID %" PRIu32 "%s%s%s thread %" PRIu32 "%s%s: %.0f%% of "
				 "its busy time", wp[k]->pid, label ? " (" : "", label ? label : "",
				 label ? ")," : ",", wt[k]->tid, name ? " " : "", name ? name : "",
				 100.0 * (double)wt[k]->cpu_wait_ns / (double)wt[k]->busy_ns);
	}
}

/* Tensor copies and dtype or device conversions on the CPU (with
 * --native: ATen's copy_, _to_copy, clone): a tenth of the process's busy
 * time or more. */
void findings_cpu_copies(const struct summary *s, const struct summary_process *sp,
			 struct finding_list *l)
{
	struct finding *f;
	bool used[64] = { false };
	char line[160];

	if (!sp->native_ns || sp->cpu_copy_ns * 10 < sp->busy_ns)
		return;
	f = finding_add(l, "cpu-copies", (double)sp->cpu_copy_ns / (double)sp->busy_ns, sp->pid,
			"make tensors in the dtype and on the device they are used in; move .to(), "
			".float(), .contiguous() and clones out of the step or onto the GPU; "
			"pin_memory=True with non_blocking=True for copies to the GPU");
	if (!f)
		return;
	snprintf(f->title, sizeof(f->title), "tensor copies and conversions on the CPU take %.0f%% "
		 "of its busy time", 100.0 * f->cost);
	finding_evidence(f, "%.2f s of %.2f s busy in ATen's copy_, _to_copy and clone "
			 "(native frames)", (double)sp->cpu_copy_ns / 1e9, (double)sp->busy_ns / 1e9);
	for (int k = 0; k < 3; k++) {
		int i = finding_heaviest_site(sp, SITE_CPU_COPY, used);

		if (i < 0 || sp->sites[i].ns * 100 < sp->busy_ns)
			break;
		finding_line_text(s->p, sp->sites[i].frame, line, sizeof(line));
		finding_evidence(f, "called from %s: %.0f%% of busy time", line,
				 100.0 * (double)sp->sites[i].ns / (double)sp->busy_ns);
	}
}
