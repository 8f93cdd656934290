// SPDX-License-Identifier: MIT
/* diff: how a newer recording differs from an older one, as a differential
 * flamegraph and a table of the largest changes on stdout. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static bool diffs(const struct output_writer *w)
{
	return w->diffs;
}

static int check_outputs(struct cli_options *o)
{
	for (int i = 0; i < o->noutputs; i++) {
		if (!o->outputs[i].writer->diffs) {
			const struct output_writer *w = output_writer_find(diffs);

			cli_error("diff writes a differential flamegraph (.%s or -f %s), not %s; "
				  "other formats come from each recording by report",
				  w ? w->extensions[0] : "?", w ? w->names[0] : "?", o->outputs[i].path);
			return -1;
		}
		if (!strcmp(o->outputs[i].path, "-")) {
			cli_error("the table goes to stdout: name a file for the flamegraph");
			return -1;
		}
	}
	return 0;
}

static int write_flamegraphs(struct cli_options *o, const struct profile *before,
			     const struct profile *after, const struct render_options *fo)
{
	struct output_job job = { .profile = after, .baseline = before, .options = fo };
	char err[256] = "";
	int failed = 0;

	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];
		int ret;

		job.file = out->file;
		ret = out->writer->write(&job, err, sizeof(err));
		if (outputs_finish(out, ret, err, sizeof(err)) < 0) {
			failed = 1;
			continue;
		}
		outputs_announce(out, outputs_samples_kept(after, fo), o->quiet);
	}
	return failed ? -1 : 0;
}

int cmd_diff(int argc, char **argv)
{
	struct cli_options o;
	struct render_options fo;
	struct profile *before = NULL, *after = NULL;
	char err[256] = "";
	int ret;

	ret = options_parse_diff(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (o.noutputs && (output_names_refuse(&o, "diff") < 0 || outputs_resolve(&o, "diff", false) < 0))
		return 2;
	if (check_outputs(&o) < 0) {
		outputs_free(&o);
		return 2;
	}
	if (!strcmp(o.baseline, o.input))
		cli_warn("comparing %s with itself", o.input);
	before = profile_new();
	after = profile_new();
	ret = 1;
	/* The steps of the phase table are found in time. */
	if (!before || !after || profile_keep_timeline(before) < 0 || profile_keep_timeline(after) < 0) {
		cli_error("out of memory");
		goto out;
	}
	if (recording_read(&o, o.baseline, before) < 0 || recording_read(&o, o.input, after) < 0 ||
	    outputs_check_kept(&o, before, o.baseline) < 0 ||
	    outputs_check_kept(&o, after, o.input) < 0 || outputs_open(&o) < 0)
		goto out;
	outputs_render_options(&o, &fo);
	if (write_flamegraphs(&o, before, after, &fo) < 0)
		goto out;
	if (diff_table_write(before, after, stdout, &fo, o.top, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		goto out;
	}
	if (phases_diff(&o, before, after, stdout) < 0) {
		cli_error("out of memory");
		goto out;
	}
	ret = fflush(stdout) ? 1 : 0;
out:
	outputs_free(&o);
	profile_free(before);
	profile_free(after);
	return ret;
}
