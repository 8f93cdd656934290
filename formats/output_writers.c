// SPDX-License-Identifier: MIT
/*
 * The table of outputs: one row per format. The command line parses -f
 * and file names, lists formats in usage and errors, and writes outputs
 * from these rows alone; a new output is a new row here.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "formats/formats.h"

/* The writers take different arguments; the table calls them all alike. */

static int write_folded(const struct output_job *job, char *err, size_t errlen)
{
	return folded_write(job->profile, job->file, job->options, err, errlen);
}

static int write_flamegraph(const struct output_job *job, char *err, size_t errlen)
{
	if (job->baseline)
		return flamegraph_diff_write(job->baseline, job->profile, job->file, job->options,
					     err, errlen);
	return flamegraph_write(job->profile, job->file, job->options, err, errlen);
}

static int write_speedscope(const struct output_job *job, char *err, size_t errlen)
{
	return speedscope_write(job->profile, job->file, job->options, err, errlen);
}

static int write_pprof(const struct output_job *job, char *err, size_t errlen)
{
	return pprof_write(job->profile, job->file, job->options, err, errlen);
}

static int write_trace(const struct output_job *job, char *err, size_t errlen)
{
	return trace_write(job->profile, job->file, job->options, err, errlen);
}

static int write_summary(const struct output_job *job, char *err, size_t errlen)
{
	if (!job->options->summary) {
		snprintf(err, errlen, "no summary can be made here");
		return -ENOTSUP;
	}
	return job->options->summary(job->options->summary_ctx, job->file);
}

/* In the order usage and error messages list them. */
static const struct output_writer writers[] = {
	{
		.format = OUTPUT_SVG,
		.name = "flamegraph",
		.names = { "svg", "flamegraph" },
		.extensions = { "svg" },
		.contents = "flamegraph",
		.write = write_flamegraph,
		.gpu_variant = true,
		.diffs = true,
		.record_default = true,
		/* the loops' threads, whose waits it keeps, by their steps */
		.needs_timeline = true,
	},
	{
		.format = OUTPUT_SPEEDSCOPE,
		.name = "speedscope",
		.names = { "speedscope" },
		.extensions = { "speedscope.json" },
		.write = write_speedscope,
		/* it draws the GPU streams, and each thread's samples, in time */
		.needs_gpu_activities = true,
		.needs_timeline = true,
	},
	{
		.format = OUTPUT_TRACE,
		.name = "trace",
		.names = { "trace", "chrome", "perfetto" },
		.extensions = { "trace.json" },
		.contents = "Chrome/Perfetto timeline",
		.write = write_trace,
		.needs_timeline = true,
	},
	{
		.format = OUTPUT_PPROF,
		.name = "pprof",
		.names = { "pprof" },
		.extensions = { "pb.gz" },
		.contents = "pprof",
		.write = write_pprof,
	},
	{
		.format = OUTPUT_SUMMARY,
		.name = "summary",
		.names = { "summary" },
		.extensions = { "summary.json" },
		.contents = "phases, steps and figures",
		.write = write_summary,
		/* steps are found in time */
		.needs_timeline = true,
		/* the name people give it, as the docs call it */
		.names_files = true,
	},
	{
		.format = OUTPUT_FOLDED,
		.name = "folded",
		.names = { "folded", "txt", "collapsed" },
		.extensions = { "folded", "txt" },
		.contents = "folded stacks",
		.write = write_folded,
		.stdout_default = true,
		/* the loops' threads, whose waits it keeps, by their steps */
		.needs_timeline = true,
	},
	{
		.format = OUTPUT_TSPROF,
		.name = "tsprof",
		.names = { "tsprof", "raw" },
		.extensions = { "tsprof" },
		.contents = "raw recording",
		.streams = true,
		.record_default = true,
	},
};

const struct output_writer *output_writer_at(size_t i)
{
	return i < sizeof(writers) / sizeof(writers[0]) ? &writers[i] : NULL;
}
