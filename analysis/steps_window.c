// SPDX-License-Identifier: MIT
/*
 * report --steps A:B: steps A to B of the main training loop as a window
 * of sample times, so that a picture or summary leaves out the warm-up
 * (as scheduled profilers skip their first steps). The loop is the one
 * the summary finds: in the process with the most samples that has one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

int steps_window_find(struct phase_map *m, uint64_t first, uint64_t last,
		      struct steps_window *out, char *err, size_t errlen)
{
	const struct summary_process *sp = NULL;
	struct step_stats st;
	struct summary *s;
	uint64_t *starts = NULL, end = 0;
	size_t n = 0;
	int ret = summary_build(m, &s);

	if (ret < 0)
		return errbuf_set(err, errlen, ret, "out of memory");
	for (size_t i = 0; i < s->nprocs && !sp; i++)
		if (s->procs[i].loop && s->procs[i].steps.timed && !s->procs[i].steps_too_short)
			sp = &s->procs[i];
	if (!sp) {
		ret = errbuf_set(err, errlen, -ENOENT, "--steps: no training loop's steps were found "
				 "in the recording (report --summary says what was)");
		goto out;
	}
	ret = steps_starts(m, sp->pid, sp->loop->tid, &st, &starts, &n, &end);
	if (ret < 0) {
		errbuf_set(err, errlen, ret, "out of memory");
		goto out;
	}
	if (!last)
		last = n;
	if (!first || first > last || last > n) {
		ret = errbuf_set(err, errlen, -ENOENT, "--steps %" PRIu64 ":%" PRIu64 ": the loop of PID "
				 "%" PRIu32 " (thread %" PRIu32 ") has steps 1 to %zu", first, last,
				 sp->pid, sp->loop->tid, n);
		goto out;
	}
	/* A span starts at the time of the thread's sample before it (its
	 * first sample's weight is the time since that tick): a step's last
	 * sample is at the next step's start, its first one after its own. */
	*out = (struct steps_window){
		.pid = sp->pid, .tid = sp->loop->tid, .steps = n,
		.from_ns = starts[first - 1] + 1,
		.to_ns = last < n ? starts[last] : end,
	};
out:
	free(starts);
	summary_free(s);
	return ret;
}
