// SPDX-License-Identifier: MIT
/* Output files: names, formats, writing them from the profile. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"

static char *default_name(const char *stem, const char *ext)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	char *path;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (asprintf(&path, "%s-%s.%s", stem, stamp, ext) < 0)
		return NULL;
	return path;
}

static int add_default(struct cli_options *o, const char *stem, enum output_format f)
{
	char *path = default_name(stem, output_format_extension(f));

	if (!path)
		return -ENOMEM;
	o->outputs[o->noutputs].path = path;
	o->outputs[o->noutputs].format = f;
	o->owned_paths |= 1u << o->noutputs;
	o->noutputs++;
	return 0;
}

/* Same file: same path, or an existing file reached by two names. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Two outputs into one file, or an output over the recording being read,
 * would destroy what is written or read. */
static int outputs_distinct(const struct cli_options *o)
{
	for (int i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i].path;

		if (o->input && same_file(path, o->input)) {
			cli_error("output %s is the recording being read; name another file", path);
			return -EINVAL;
		}
		for (int j = 0; j < i; j++) {
			if (same_file(path, o->outputs[j].path)) {
				cli_error("%s is named as an output twice", path);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* gpu.svg, NAME-gpu.svg, NAME.gpu.svg, NAME_gpu.svg: a GPU flamegraph. */
static bool gpu_name(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	return !strcmp(base, "gpu.svg") ||
	       (n > 8 && strchr("-._", base[n - 8]) && !strcmp(base + n - 7, "gpu.svg"));
}

int outputs_resolve(struct cli_options *o, const char *stem, bool recording)
{
	enum output_format fallback = o->format ? output_format_parse(o->format) : OUTPUT_UNKNOWN;
	int tsprof = 0;

	if (!o->noutputs && !recording) {
		o->outputs[o->noutputs++].path = "-";
	} else if (!o->noutputs) {
		if (fallback != OUTPUT_UNKNOWN)
			return add_default(o, stem, fallback);
		if (add_default(o, stem, OUTPUT_TSPROF) < 0 || add_default(o, stem, OUTPUT_SVG) < 0)
			return -ENOMEM;
		return 0;
	}
	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];

		out->format = output_format_from_path(out->path);
		if (out->format == OUTPUT_SVG && gpu_name(out->path))
			out->gpu = true;
		if (out->format == OUTPUT_UNKNOWN)
			out->format = fallback;
		if (out->format == OUTPUT_UNKNOWN && !strcmp(out->path, "-"))
			out->format = OUTPUT_FOLDED;
		if (out->format == OUTPUT_UNKNOWN) {
			cli_error("cannot tell the format of '%s' from its name: end it in .svg, "
				  ".speedscope.json, .trace.json, .pb.gz, .folded, .txt or .tsprof, or "
				  "give -f svg|speedscope|trace|pprof|folded|tsprof", out->path);
			return -EINVAL;
		}
		if (out->format == OUTPUT_TSPROF && !strcmp(out->path, "-")) {
			cli_error("a .tsprof recording cannot go to stdout; name a file");
			return -EINVAL;
		}
		if (out->gpu && out->format != OUTPUT_SVG) {
			cli_error("--gpu-flamegraph %s: a GPU flamegraph is an .svg", out->path);
			return -EINVAL;
		}
		tsprof += out->format == OUTPUT_TSPROF;
	}
	if (tsprof > 1) {
		cli_error("only one .tsprof output per run");
		return -EINVAL;
	}
	return outputs_distinct(o);
}

int outputs_open(struct cli_options *o)
{
	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];

		if (out->format == OUTPUT_TSPROF)
			continue;
		out->file = strcmp(out->path, "-") ? fopen(out->path, "we") : stdout;
		if (!out->file) {
			cli_error("cannot write %s: %s", out->path, strerror(errno));
			return -errno;
		}
		out->created = out->file != stdout;
	}
	return 0;
}

void outputs_announce(const struct output *out, const struct profile *p, bool quiet)
{
	if (quiet || !strcmp(out->path, "-"))
		return;
	fprintf(stderr, "trainsample: wrote %s (%s, %llu samples)\n", out->path,
		output_format_name(out->format), (unsigned long long)profile_sample_count(p));
}

void outputs_render_options(const struct cli_options *o, struct render_options *fo)
{
	/* What was recorded idle is shown, unless --no-idle says otherwise. */
	*fo = (struct render_options){
		.threads = o->threads,
		.include_idle = !(o->idle_given && !o->idle),
		.gil_only = o->gil_only,
		.by_function = o->by_function,
		.full_filenames = o->full_filenames,
		.inverted = o->inverted,
		.pid = (uint32_t)o->pid,
		.tid = (uint32_t)o->tid,
		.thread = o->thread,
	};
}

int outputs_write(struct cli_options *o, const struct profile *p)
{
	struct render_options fo;
	char err[256] = "";
	int failed = 0;

	outputs_render_options(o, &fo);
	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];
		int ret;

		if (out->format == OUTPUT_TSPROF || !out->file)
			continue;
		fo.gpu = out->gpu; /* only ever an .svg (outputs_resolve) */
		if (out->format == OUTPUT_SVG)
			ret = flamegraph_write(p, out->file, &fo, err, sizeof(err));
		else if (out->format == OUTPUT_SPEEDSCOPE)
			ret = speedscope_write(p, out->file, &fo, err, sizeof(err));
		else if (out->format == OUTPUT_PPROF)
			ret = pprof_write(p, out->file, &fo, err, sizeof(err));
		else if (out->format == OUTPUT_TRACE)
			ret = trace_write(p, out->file, &fo, err, sizeof(err));
		else
			ret = folded_write(p, out->file, &fo, err, sizeof(err));
		if (fflush(out->file) != 0 && !ret)
			ret = -errno;
		if (out->file != stdout && fclose(out->file) != 0 && !ret)
			ret = -errno;
		out->file = NULL;
		if (ret < 0) {
			cli_error("writing %s: %s", out->path, err[0] ? err : strerror(-ret));
			failed = 1;
			continue;
		}
		outputs_announce(out, p, o->quiet);
	}
	return failed ? -EIO : 0;
}

int outputs_keep_timeline(const struct cli_options *o, struct profile *p)
{
	for (int i = 0; i < o->noutputs; i++)
		if (o->outputs[i].format == OUTPUT_SPEEDSCOPE)
			profile_keep_gpu_activities(p);
	for (int i = 0; i < o->noutputs; i++)
		if (o->outputs[i].format == OUTPUT_TRACE)
			return profile_keep_timeline(p);
	return 0;
}

void outputs_free(struct cli_options *o)
{
	for (int i = 0; i < o->noutputs; i++) {
		if (o->outputs[i].file && o->outputs[i].file != stdout)
			fclose(o->outputs[i].file);
		if (o->owned_paths & (1u << i))
			free((char *)o->outputs[i].path);
	}
	o->noutputs = 0;
}
