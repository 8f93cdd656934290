// SPDX-License-Identifier: MIT
/* report: render a saved .tsprof recording again. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "formats/formats.h"

/* Recording `index` of a merge (0 the first) into p, cut by --from/--to. */
static int recording_read_merge(const struct cli_options *o, const char *path, uint32_t index,
				struct profile *p)
{
	uint64_t from = (uint64_t)(o->from_s * 1e9), to = o->to_s < 0 ? UINT64_MAX : (uint64_t)(o->to_s * 1e9);
	struct tsprof_read_info info;
	char err[512] = "";
	bool none;
	int ret;

	/* --steps: each recording's own loop's steps. */
	if (o->steps_from && phases_steps_window(o, path, &from, &to) < 0)
		return -ENOENT;
	ret = tsprof_read_merge(path, p, index, from, to, &info, err, sizeof(err));
	if (ret < 0) {
		cli_error("%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	/* Damaged, or cut (a kill -9), before its first sample: an empty
	 * picture would pass for a result. With --from or --to, a window
	 * that kept none of the samples read is the filters' to tell
	 * (outputs_check_kept); no sample read at all is not. */
	none = !info.samples && ((!from && to == UINT64_MAX) || !info.first_sample_ns);
	if (info.damaged && none) {
		cli_error("%s: %s; no sample could be read before it", path, info.note);
		return -EIO;
	}
	if (!info.complete && none) {
		cli_error("%s: the recording ends before its first sample (was trainsample killed?)", path);
		return -EIO;
	}
	if (info.damaged)
		cli_warn("%s: %s; writing what was read", path, info.note);
	else if (!info.complete)
		cli_warn("%s: the recording has no end mark (was trainsample killed?); writing what was read",
			 path);
	return 0;
}

int recording_read(const struct cli_options *o, const char *path, struct profile *p)
{
	return recording_read_merge(o, path, 0, p);
}

/* The same recording given twice (by any names) would count its samples
 * twice over: refused. Names that cannot be read are the reader's to
 * report. */
static int inputs_distinct(const struct cli_options *o)
{
	for (int i = 1; i < o->ninputs; i++) {
		struct stat a;

		if (stat(o->inputs[i], &a) < 0)
			continue;
		for (int j = 0; j < i; j++) {
			struct stat b;

			if (stat(o->inputs[j], &b) == 0 && a.st_dev == b.st_dev &&
			    a.st_ino == b.st_ino) {
				cli_error("%s and %s are the same recording: merged, every sample would "
					  "count twice; give each recording once", o->inputs[j],
					  o->inputs[i]);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct cli_options o;
	struct tsprof_writer *w = NULL;
	struct profile *p;
	char err[512] = "";
	int ret;

	ret = options_parse_report(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	/* --summary, --findings, --ranks or --time alone write no picture. */
	if (inputs_distinct(&o) < 0 || output_names_refuse(&o, "report") < 0 ||
	    ((!(o.summary || o.findings || o.ranks || o.ntimes) || o.noutputs) &&
	     outputs_resolve(&o, "report", false) < 0))
		return 2;
	p = profile_new();
	/* The steps of --summary and the calls of --time are found in the
	 * timeline. */
	if (!p || outputs_keep_timeline(&o, p) < 0 ||
	    ((o.summary || o.findings || o.ranks || o.ntimes) && profile_keep_timeline(p) < 0)) {
		cli_error("out of memory");
		return 1;
	}
	if (outputs_open(&o) < 0) {
		ret = 1;
		goto out;
	}
	/* A .tsprof output re-encodes the recording (repairing a damaged one). */
	for (int i = 0; i < o.noutputs; i++) {
		if (!o.outputs[i].writer->streams)
			continue;
		if (tsprof_writer_open(&w, o.outputs[i].path, p, err, sizeof(err)) < 0) {
			cli_error("%s", err);
			ret = 1;
			goto out;
		}
	}
	for (int i = 0; i < o.ninputs; i++) {
		if (recording_read_merge(&o, o.inputs[i], (uint32_t)i, p) < 0) {
			ret = 1;
			goto out;
		}
	}
	if (outputs_check_kept(&o, p, o.input) < 0) {
		/* An empty file under the name would pass for a result. */
		if (w)
			tsprof_writer_discard(w);
		w = NULL;
		ret = 1;
		goto out;
	}
	ret = outputs_write(&o, p) < 0 ? 1 : 0;
	if (o.summary || o.findings) {
		struct cli_phases cp;

		/* --summary: the end's lines and its top findings; --findings
		 * every finding. */
		if (phases_open(&o, p, &cp) == 0) {
			phases_summary(&cp, true, o.findings ? SIZE_MAX : 3, o.summary, stdout);
			phases_close(&cp);
		}
	}
	if (o.ranks) {
		struct cli_phases cp;

		if (phases_open(&o, p, &cp) == 0) {
			phases_ranks(&cp, stdout);
			phases_close(&cp);
		}
	}
	call_times_print(&o, p, stdout);
	if (!o.summary && !o.ranks && o.ninputs > 1 && !o.quiet) {
		/* Several recordings: one line per process says what each holds. */
		struct cli_phases cp;

		if (phases_open(&o, p, &cp) == 0) {
			phases_summary(&cp, false, 0, true, stderr);
			phases_close(&cp);
		}
	}
	if (w) {
		int wret = tsprof_writer_close(w);

		w = NULL;
		for (int i = 0; i < o.noutputs; i++) {
			if (!o.outputs[i].writer->streams)
				continue;
			if (wret < 0) {
				cli_error("writing %s: %s", o.outputs[i].path, strerror(-wret));
				ret = 1;
			} else {
				/* The recording's samples, whatever the filters. */
				outputs_announce(&o.outputs[i], profile_sample_count(p), o.quiet);
			}
		}
	}
out:
	if (w)
		tsprof_writer_close(w);
	outputs_free(&o);
	profile_free(p);
	return ret;
}
