// SPDX-License-Identifier: MIT
/* diff: how a newer recording differs from an older one, as a differential
 * flamegraph and a table of the largest changes on stdout. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
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

/* One recording's side: its loops' threads, whose waits it keeps. */
struct diff_side {
	struct cli_phases cp;
	struct thread_ref *keep;
	size_t nkeep;
	struct render_options fo, loop;
};

static int side_open(struct cli_options *o, const struct profile *p, struct diff_side *d)
{
	int ret = phases_open(o, p, &d->cp);

	if (ret < 0)
		return ret;
	ret = phases_find_loops(&d->cp);
	if (!ret)
		ret = phases_idle_keep(&d->cp, p, &d->keep, &d->nkeep);
	if (ret < 0)
		return ret;
	outputs_render_options(o, &d->fo);
	d->fo.idle_keep = d->keep;
	d->fo.nidle_keep = d->nkeep;
	d->fo.idle_kept_only = outputs_idle_kept_only(o, p, output_writer_of(OUTPUT_SVG));
	/* The loop thread alone, its waits (its step time) in. */
	d->loop = d->fo;
	d->loop.idle_kept_only = false;
	if (d->cp.nloops) {
		d->loop.pid = d->cp.loops[0].pid;
		d->loop.tid = d->cp.loops[0].tid;
	}
	return 0;
}

static void side_close(struct diff_side *d)
{
	free(d->keep);
	phases_close(&d->cp);
}

/*
 * The table: the training loops' threads first where both runs have one
 * (a change there is a change of the step), then every thread's work and
 * the loops' waits, as the flamegraph shows them.
 */
static int write_tables(struct cli_options *o, const struct profile *before,
			const struct profile *after, struct diff_side *b, struct diff_side *a,
			char *err, size_t errlen)
{
	int ret;

	if (b->cp.nloops && a->cp.nloops && !o->pid && !o->tid) {
		printf("the training loop's thread: older PID %" PRIu32 " thread %" PRIu32
		       ", newer PID %" PRIu32 " thread %" PRIu32 "\n",
		       b->loop.pid, b->loop.tid, a->loop.pid, a->loop.tid);
		a->loop.baseline = &b->loop;
		ret = diff_table_write(before, after, stdout, &a->loop, o->top, err, errlen);
		if (ret < 0)
			return ret;
		printf("\nall threads%s:\n", a->fo.idle_kept_only ?
		       " (their work; of the waits, the loops' only: --idle keeps every wait)" : "");
	}
	a->fo.baseline = &b->fo;
	return diff_table_write(before, after, stdout, &a->fo, o->top, err, errlen);
}

int cmd_diff(int argc, char **argv)
{
	struct cli_options o;
	struct diff_side b = { 0 }, a = { 0 };
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
	if (side_open(&o, before, &b) < 0 || side_open(&o, after, &a) < 0) {
		cli_error("out of memory");
		goto out;
	}
	a.fo.baseline = &b.fo;
	if (write_flamegraphs(&o, before, after, &a.fo) < 0)
		goto out;
	if (a.fo.idle_kept_only)
		outputs_say_idle_left_out(outputs_idle_left_out(before, &b.fo) +
					  outputs_idle_left_out(after, &a.fo), o.quiet);
	if (write_tables(&o, before, after, &b, &a, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		goto out;
	}
	if (phases_diff(&o, before, after, stdout) < 0) {
		cli_error("out of memory");
		goto out;
	}
	ret = fflush(stdout) ? 1 : 0;
out:
	side_close(&b);
	side_close(&a);
	outputs_free(&o);
	profile_free(before);
	profile_free(after);
	return ret;
}
