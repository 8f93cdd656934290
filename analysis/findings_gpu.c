// SPDX-License-Identifier: MIT
/*
 * The GPU's findings, from the summary's per-device figures: a GPU left
 * idle (launch-bound when its kernels are tiny) and copies the host waits
 * for or that cannot overlap the kernels. Each device's time is counted
 * from its first kernel: the run before it is not the GPU's to use.
 */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/findings_impl.h"
#include "analysis/summary_impl.h"
#include "formats/formats.h"

/* A GPU busy less than half the time since its first kernel, for
 * reasons other than the loop waiting for data (data-bound says that):
 * launch-bound when its kernels are mostly tiny (launch overhead, not
 * work, sets the pace), else idle while the CPU does something else. */
void findings_gpu_underused(const struct summary *s, struct finding_list *l)
{
	for (size_t i = 0; i < s->ngpus; i++) {
		const struct summary_gpu *g = &s->gpus[i];
		uint64_t wall = summary_gpu_window(s, g);
		bool tiny = g->kernels >= 1000 && g->short_kernels * 2 >= g->kernels;
		double busy = summary_gpu_busy_share(s, g), data = 0;
		struct finding *f;
		char line[200];

		for (size_t k = 0; k < s->nprocs && wall; k++)
			if ((double)s->procs[k].gpu_data_ns / (double)wall > data)
				data = (double)s->procs[k].gpu_data_ns / (double)wall;
		if (!g->kernels || !wall || busy >= 0.5 || 1.0 - busy - data < 0.25)
			continue;
		f = finding_add(l, tiny ? "launch-bound" : "gpu-idle", 1.0 - busy - data, 0, tiny ?
				"fewer, larger kernels: larger batches, CUDA graphs or torch.compile, "
				"fused or foreach optimizers" :
				"see what the CPU does meanwhile (the phases: data, sync, Python work); overlap "
				"copies with compute (pin_memory, non_blocking=True)");
		if (!f)
			return;
		snprintf(f->title, sizeof(f->title), "GPU %" PRIu32 " is busy %.0f%% of the time "
			 "since its first kernel%s", g->device, 100.0 * busy,
			 tiny ? ", its kernels mostly tiny" : "");
		finding_evidence(f, "%" PRIu64 " kernels, %.0f%% of them under 10 us, %.1f us each on average; "
				 "busy %.3f s of the %.3f s since its first kernel", g->kernels,
				 100.0 * (double)g->short_kernels / (double)g->kernels,
				 (double)g->kernel_ns / 1e3 / (double)g->kernels, (double)g->busy_ns / 1e9,
				 (double)wall / 1e9);
		if (data >= 0.05)
			finding_evidence(f, "the loop waits for data %.0f%% of that time (data-bound); the "
					 "other %.0f%% idle is counted here", 100.0 * data, 100.0 * f->cost);
		if (g->launch_stack) {
			finding_line_text(s->p, finding_python_leaf(s, g->launch_stack), line, sizeof(line));
			finding_evidence(f, "launched most from %s (%" PRIu64 " kernels)", line, g->launch_count);
		}
	}
}

static void bytes_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1ull << 30)
		snprintf(buf, len, "%.2f GiB", (double)bytes / (double)(1ull << 30));
	else
		snprintf(buf, len, "%.1f MiB", (double)bytes / (double)(1ull << 20));
}

/* Copies the host waits for (from or to pageable memory, or synchronous),
 * or copies on the NULL stream that take a large share of the run: the
 * GPU cannot overlap them with kernels. */
void findings_host_copies(const struct summary *s, struct finding_list *l)
{
	for (size_t i = 0; i < s->ngpus; i++) {
		const struct summary_gpu *g = &s->gpus[i];
		uint64_t wall = summary_gpu_window(s, g);
		uint64_t slow = g->slow_ns > g->slow_call_ns ? g->slow_ns : g->slow_call_ns;
		bool slow_costs = (double)slow >= 0.02 * (double)wall;
		bool null_costs = (double)g->null_ns >= 0.10 * (double)wall;
		struct finding *f;
		char b[32], line[200];
		double cost;

		if (!wall || !g->copies || (!slow_costs && !null_costs))
			continue;
		cost = (double)(slow_costs ? slow : g->null_ns) / (double)wall;
		f = finding_add(l, "copies", cost < 1.0 ? cost : 1.0, 0, slow_costs ?
				"pin the host's memory (DataLoader(pin_memory=True), tensor.pin_memory()) and "
				"copy with .to(device, non_blocking=True); then copy on a side stream to "
				"overlap the copies with compute" :
				"copy the next batch on a side stream (torch.cuda.Stream, then "
				"wait_stream before using it) so copies overlap the current step's kernels");
		if (!f)
			return;
		if (slow_costs)
			snprintf(f->title, sizeof(f->title), "copies between the host and GPU %" PRIu32
				 " that the host waits for take %.0f%% of the time since its first "
				 "kernel", g->device, 100.0 * f->cost);
		else
			snprintf(f->title, sizeof(f->title), "copies on GPU %" PRIu32 "'s default "
				 "stream take %.0f%% of the time since its first kernel, not overlapped "
				 "with its kernels",
				 g->device, 100.0 * f->cost);
		bytes_text(g->copy_bytes, b, sizeof(b));
		finding_evidence(f, "%" PRIu64 " copies between host and GPU, %s, %.3f s on the GPU", g->copies,
				 b, (double)g->copy_ns / 1e9);
		/* The default stream's variant: pinned copies that could overlap;
		 * a few pageable ones (weights moved once) are beside the point. */
		if (slow_costs && g->pageable_copies) {
			bytes_text(g->pageable_bytes, b, sizeof(b));
			finding_evidence(f, "%" PRIu64 " from or to pageable memory (%s): the driver stages "
					 "them through a pinned buffer while the host waits", g->pageable_copies, b);
		}
		if (slow_costs && g->sync_copies)
			finding_evidence(f, "%" PRIu64 " synchronous for the host", g->sync_copies);
		if (slow_costs && g->slow_call_ns >= 1000000)
			finding_evidence(f, "the host spent %.3f s in the calls that made the pageable or "
					 "synchronous ones", (double)g->slow_call_ns / 1e9);
		if (g->null_copies)
			finding_evidence(f, "%" PRIu64 " on the default (NULL) stream, %.3f s, which runs "
					 "nothing else meanwhile", g->null_copies, (double)g->null_ns / 1e9);
		if (slow_costs && g->copy_stack) {
			finding_line_text(s->p, finding_python_leaf(s, g->copy_stack), line, sizeof(line));
			finding_evidence(f, "copied most from %s (%" PRIu64 " copies)", line, g->copy_count);
		}
	}
}
