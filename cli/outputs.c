// SPDX-License-Identifier: MIT
/* Output files: names, formats, writing them from the profile. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "common/common.h"

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

static int add_default(struct cli_options *o, const char *stem, const struct output_writer *w)
{
	char *path = default_name(stem, w->extensions[0]);

	if (!path)
		return -ENOMEM;
	o->outputs[o->noutputs].path = path;
	o->outputs[o->noutputs].writer = w;
	o->owned_paths |= 1u << o->noutputs;
	o->noutputs++;
	return 0;
}

/* Same file: same path, or an existing file reached by two names. */
/* The folder a path names a file in, and the file's name there. */
static void split_path(const char *path, char *dir, size_t len, const char **base)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	if (!slash)
		snprintf(dir, len, ".");
	else
		snprintf(dir, len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* One file under two names: the same inode, or, for a file not made yet,
 * the same name in the same folder ("out.dat" and "./out.dat"). */
static bool same_file(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX];
	const char *ba, *bb;
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	split_path(a, da, sizeof(da), &ba);
	split_path(b, db, sizeof(db), &bb);
	return !strcmp(ba, bb) && stat(da, &sa) == 0 && stat(db, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Two outputs into one file, or an output over the recording being read,
 * would destroy what is written or read. */
static int outputs_distinct(const struct cli_options *o)
{
	for (int i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i].path;

		for (int k = 0; k < (o->ninputs ? o->ninputs : 1); k++) {
			const char *in = o->ninputs ? o->inputs[k] : o->input;

			if (in && same_file(path, in)) {
				cli_error("output %s is a recording being read; name another file", path);
				return -EINVAL;
			}
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

/* gpu.svg, NAME-gpu.svg, NAME.gpu.svg, NAME_gpu.svg: the GPU variant of
 * a format that has one. */
static bool gpu_name(const char *path, const struct output_writer *w)
{
	const char *base = strrchr(path, '/');
	char name[64];
	size_t n, e;

	base = base ? base + 1 : path;
	n = strlen(base);
	for (size_t j = 0; j < OUTPUT_EXTENSIONS_MAX && w->extensions[j]; j++) {
		e = (size_t)snprintf(name, sizeof(name), "gpu.%s", w->extensions[j]);
		if (e >= sizeof(name))
			continue;
		if (!strcmp(base, name) ||
		    (n > e + 1 && strchr("-._", base[n - e - 1]) && !strcmp(base + n - e, name)))
			return true;
	}
	return false;
}

static bool has_gpu_variant(const struct output_writer *w)
{
	return w->gpu_variant;
}

static bool is_stdout_default(const struct output_writer *w)
{
	return w->stdout_default;
}

static int unknown_format(const char *path)
{
	char extensions[512], names[256];

	output_writers_list(extensions, sizeof(extensions), true, ", ", " or ");
	output_writers_list(names, sizeof(names), false, "|", "|");
	cli_error("cannot tell the format of '%s' from its name: end it in %s, or give -f %s",
		  path, extensions, names);
	return -EINVAL;
}

int outputs_resolve(struct cli_options *o, const char *stem, bool recording)
{
	const struct output_writer *fallback = o->format ? output_writer_by_name(o->format) : NULL;
	const struct output_writer *w, *streamed = NULL;
	int nstreamed = 0;

	if (!o->noutputs && !recording) {
		o->outputs[o->noutputs++].path = "-";
	} else if (!o->noutputs) {
		if (fallback)
			return add_default(o, stem, fallback);
		for (size_t i = 0; (w = output_writer_at(i)); i++)
			if (w->record_default && add_default(o, stem, w) < 0)
				return -ENOMEM;
		return 0;
	}
	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];

		out->writer = output_writer_by_path(out->path);
		if (out->writer && out->writer->gpu_variant && gpu_name(out->path, out->writer))
			out->gpu = true;
		if (!out->writer)
			out->writer = fallback;
		if (!out->writer && !strcmp(out->path, "-"))
			out->writer = output_writer_find(is_stdout_default);
		if (!out->writer)
			return unknown_format(out->path);
		w = out->writer;
		if (w->streams && !strcmp(out->path, "-")) {
			cli_error("a .%s recording cannot go to stdout; name a file", w->extensions[0]);
			return -EINVAL;
		}
		if (out->gpu && !w->gpu_variant) {
			w = output_writer_find(has_gpu_variant);
			cli_error("--gpu-flamegraph %s: a GPU flamegraph is an .%s", out->path,
				  w ? w->extensions[0] : "?");
			return -EINVAL;
		}
		if (w->streams) {
			streamed = w;
			nstreamed++;
		}
	}
	/* record and report attach one tsprof_writer */
	if (nstreamed > 1) {
		cli_error("only one .%s output per run", streamed->extensions[0]);
		return -EINVAL;
	}
	return outputs_distinct(o);
}

int outputs_open(struct cli_options *o)
{
	char err[PATH_MAX + 128];
	int fd, ret;

	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];

		if (out->writer->streams)
			continue;
		if (!strcmp(out->path, "-")) {
			out->file = stdout;
			continue;
		}
		out->stage = calloc(1, sizeof(*out->stage));
		if (!out->stage) {
			cli_error("cannot write %s: %s", out->path, strerror(ENOMEM));
			return -ENOMEM;
		}
		fd = file_stage_open(out->stage, out->path, err, sizeof(err));
		if (fd < 0) {
			cli_error("%s", err);
			return fd;
		}
		out->file = fdopen(fd, "w");
		if (!out->file) {
			ret = -errno;
			close(fd);
			file_stage_close(out->stage);
			cli_error("cannot write %s: %s", out->path, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

void outputs_announce(const struct output *out, uint64_t samples, bool quiet)
{
	if (quiet || !strcmp(out->path, "-"))
		return;
	fprintf(stderr, "trainsample: wrote %s (%s, %llu samples)\n", out->path,
		out->writer->name, (unsigned long long)samples);
}

struct kept_count {
	const struct profile *p;
	const struct render_options *o;
	uint64_t n;
};

static int count_kept(const struct profile_aggregate *row, void *ctx)
{
	struct kept_count *k = ctx;

	if (render_keeps(k->p, k->o, row))
		k->n += row->count;
	return 0;
}

uint64_t outputs_samples_kept(const struct profile *p, const struct render_options *fo)
{
	struct kept_count k = { .p = p, .o = fo };

	render_for_each_row(p, fo, count_kept, &k);
	return k.n;
}

/* Whether report's filters (--thread, --pid, --tid, --from, --to, --no-idle,
 * -g) were given. */
static bool outputs_filtered(const struct cli_options *o)
{
	return o->thread || o->process || o->phase || (o->input && o->pid) || o->tid || o->from_s > 0 || o->to_s >= 0 ||
	       (o->idle_given && !o->idle) || o->gil_only;
}

int outputs_check_kept(const struct cli_options *o, const struct profile *p, const char *path)
{
	struct render_options fo;
	uint64_t kept;

	struct cli_phases cp;

	if (!outputs_filtered(o))
		return 0;
	if (phases_open(o, p, &cp) < 0)
		return -EINVAL;
	/* --phase eval keeps validation passes, found with the steps */
	if (o->phase && profile_keeps_timeline(p) && phases_find_steps(&cp) < 0) {
		phases_close(&cp);
		cli_error("out of memory");
		return -ENOMEM;
	}
	outputs_render_options(o, &fo);
	phases_render_options(o, &cp, &fo);
	kept = outputs_samples_kept(p, &fo);
	fo.gpu = true; /* GPU time on launching stacks counts too */
	kept += outputs_samples_kept(p, &fo);
	phases_close(&cp);
	if (kept)
		return 0;
	/* --from/--to cut while reading: what they kept is what is counted. */
	cli_error("%s: no sample is left after the filters (%llu %s); nothing written",
		  path, (unsigned long long)profile_sample_count(p),
		  o->from_s > 0 || o->to_s >= 0 ? "in the --from/--to window" : "before them");
	return -ENOENT;
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
		.pid = o->input ? (uint32_t)o->pid : 0, /* record's --pid is its target */
		.tid = (uint32_t)o->tid,
		.thread = o->thread,
		.process = o->process,
		.max_slices = o->trace_max_slices,
	};
}

/* A recording made with --idle asked for every wait: report keeps them. */
static bool recorded_with_idle(const struct profile *p)
{
	const char *idle = profile_meta(p, "idle");

	return idle && !strcmp(idle, "1");
}

struct left_out {
	const struct profile *p;
	const struct render_options *all, *kept;
	uint64_t weight_ns;
};

static int count_left_out(const struct profile_aggregate *row, void *ctx)
{
	struct left_out *l = ctx;

	if (row->flags & SAMPLE_IDLE && render_keeps(l->p, l->all, row) &&
	    !render_keeps(l->p, l->kept, row))
		l->weight_ns += row->weight_ns;
	return 0;
}

/* The waits the pictures leave out by default: the time of every thread's
 * but the loops' (idle_keep). */
uint64_t outputs_idle_left_out(const struct profile *p, const struct render_options *fo)
{
	struct render_options all = *fo;
	struct left_out l = { .p = p, .all = &all, .kept = fo };

	all.idle_kept_only = false;
	profile_for_each_aggregate(p, count_left_out, &l);
	return l.weight_ns;
}

void outputs_say_idle_left_out(uint64_t weight_ns, bool quiet)
{
	if (!quiet && weight_ns)
		fprintf(stderr, "trainsample: left out %.1f s of idle threads' time: helper threads' "
			"and idle processes' waits (--idle keeps it)\n", (double)weight_ns / 1e9);
}

/* The pictures that show where the job's time goes (flamegraph, folded):
 * every thread's work and the loops' waits, unless --idle (or a recording
 * made with it) asks for every wait, or --thread, --tid, --pid or
 * --process chose the threads. */
bool outputs_idle_kept_only(const struct cli_options *o, const struct profile *p,
			    const struct output_writer *w)
{
	bool every_wait = o->idle_given ? o->idle : recorded_with_idle(p);

	/* A picture of chosen threads shows what they did, waits too. */
	if (o->thread || o->tid || (o->input && o->pid) || o->process)
		every_wait = !(o->idle_given && !o->idle);

	return !every_wait && (w->format == OUTPUT_SVG || w->format == OUTPUT_FOLDED);
}

int outputs_write(struct cli_options *o, const struct profile *p)
{
	struct render_options fo;
	struct output_job job = { .profile = p, .options = &fo };
	char err[256] = "";
	int failed = 0, ret = 0;
	bool left_out = false;

	struct cli_phases cp;
	struct thread_shares busy;
	struct thread_ref *keep = NULL;
	size_t nkeep = 0;

	if (phases_open(o, p, &cp) < 0)
		return -EINVAL;
	if (thread_shares_find(p, &busy) < 0) {
		phases_close(&cp);
		return -ENOMEM;
	}
	/* The trace marks the steps on the loops' phase tracks; --group-by
	 * phase puts what came before the first step under startup, and it
	 * and --phase class validation passes (found with the steps) eval. */
	for (int i = 0; !ret && i < o->noutputs; i++)
		if ((o->outputs[i].writer->format == OUTPUT_TRACE || o->group_by || o->phase) &&
		    profile_keeps_timeline(p) && !cp.nmarks)
			ret = phases_find_steps(&cp);
	/* The loops' threads: whose waits the pictures keep, the thread
	 * speedscope opens on. */
	if (!ret)
		ret = phases_find_loops(&cp);
	if (!ret)
		ret = phases_idle_keep(&cp, p, &keep, &nkeep);
	if (ret < 0) {
		thread_shares_free(&busy);
		phases_close(&cp);
		return -ENOMEM;
	}
	outputs_render_options(o, &fo);
	phases_render_options(o, &cp, &fo);
	/* A tree of processes: each under a root of its own. */
	fo.processes = !fo.pid && profile_process_count(p, 2) > 1;
	/* Thread roots say how busy each was. */
	fo.thread_busy = &busy;
	fo.busy_roots = true;
	fo.idle_keep = keep;
	fo.nidle_keep = nkeep;
	if (cp.nloops) {
		fo.open_pid = cp.loops[0].pid;
		fo.open_tid = cp.loops[0].tid;
	}
	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];

		if (out->writer->streams || !out->file)
			continue;
		fo.gpu = out->gpu; /* only where the format has the variant (outputs_resolve) */
		fo.idle_kept_only = outputs_idle_kept_only(o, p, out->writer);
		left_out |= fo.idle_kept_only && !fo.gpu;
		job.file = out->file;
		err[0] = 0;
		ret = out->writer->write(&job, err, sizeof(err));
		if (outputs_finish(out, ret, err, sizeof(err)) < 0) {
			failed = 1;
			continue;
		}
		outputs_announce(out, outputs_samples_kept(p, &fo), o->quiet);
		/* A writer that succeeded may leave a note (what a limit left out). */
		if (err[0] && !o->quiet)
			fprintf(stderr, "trainsample: %s: %s\n", out->path, err);
	}
	if (left_out) {
		fo.gpu = false;
		fo.idle_kept_only = true;
		outputs_say_idle_left_out(outputs_idle_left_out(p, &fo), o->quiet);
	}
	free(keep);
	thread_shares_free(&busy);
	phases_close(&cp);
	return failed ? -EIO : 0;
}

int outputs_finish(struct output *out, int ret, char *err, size_t errlen)
{
	errno = 0;
	if (fflush(out->file) != 0 && (!ret || (ret == -EIO && errno && errno != EIO))) {
		/* The write's own reason (a full disk) rather than the writer's EIO. */
		ret = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
	}
	/* Published while open: an anonymous staged file goes with its fd. */
	if (!ret && out->stage)
		ret = file_stage_publish(out->stage, out->path, err, errlen);
	if (out->stage)
		file_stage_close(out->stage);
	if (out->file != stdout && fclose(out->file) != 0 && !ret)
		ret = -errno;
	out->file = NULL;
	if (ret < 0)
		cli_error("writing %s: %s", out->path, err[0] ? err : strerror(-ret));
	return ret;
}

int outputs_keep_timeline(const struct cli_options *o, struct profile *p)
{
	for (int i = 0; i < o->noutputs; i++) {
		const struct output_writer *w = o->outputs[i].writer;
		int ret;

		if (w->needs_gpu_activities)
			profile_keep_gpu_activities(p);
		if (w->needs_timeline && (ret = profile_keep_timeline(p)) < 0)
			return ret;
	}
	return 0;
}

void outputs_free(struct cli_options *o)
{
	for (int i = 0; i < o->noutputs; i++) {
		if (o->outputs[i].file && o->outputs[i].file != stdout)
			fclose(o->outputs[i].file);
		if (o->outputs[i].stage) {
			file_stage_close(o->outputs[i].stage); /* never finished: removed */
			free(o->outputs[i].stage);
			o->outputs[i].stage = NULL;
		}
		if (o->owned_paths & (1u << i))
			free((char *)o->outputs[i].path);
	}
	o->noutputs = 0;
}
