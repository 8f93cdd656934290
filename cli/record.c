// SPDX-License-Identifier: MIT
/* record and attach: set up the outputs, sample, write everything. */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/common.h"
#include "formats/formats.h"
#include "sampler/sampler.h"

struct run {
	struct cli_options *o;
	struct profile *profile;
	struct sampler *sampler;
	struct tsprof_writer *writer;
	struct gpu_run *gpu;
	bool progress;        /* stderr is a terminal: a progress line may be drawn */
	bool progress_drawn;  /* ... and one is shown now */
	struct top_view *top; /* top's live view; NULL for record and attach */
};

/*
 * The program's own output would run into a line drawn without a newline,
 * so the line is drawn only while the target's output goes elsewhere (as
 * under attach from another terminal, or a command that redirects it), and
 * taken away once it does not.
 */
static void progress_line(struct run *r)
{
	struct sampler_stats st;

	if (record_target_shares_terminal(sampler_pid(r->sampler))) {
		if (r->progress_drawn)
			fputs("\r\033[K", stderr);
		r->progress_drawn = false;
		fflush(stderr);
		return;
	}
	r->progress_drawn = true;
	sampler_get_stats(r->sampler, &st);
	fprintf(stderr, "\r\033[Ktrainsample: %.1f s | %" PRIu64 " samples | %u threads | %" PRIu64
		" errors | %" PRIu64 " missed",
		(double)st.elapsed_ns / 1e9, st.samples, st.threads_live, st.errors, st.missed_ticks);
	fflush(stderr);
}

struct periodic_io {
	struct run *r;
	uint64_t now;
};

/* The GPU's records read, the recording's chunk written: I/O that a slow
 * file system can make wait (sampler_service_while). */
static int periodic_files(void *ctx)
{
	struct periodic_io *io = ctx;

	/* The first write error is kept by the writer and reported at the end. */
	gpu_run_poll(io->r->gpu, io->now);
	if (io->r->writer)
		tsprof_writer_tick(io->r->writer, io->now);
	return 0;
}

static void periodic(void *ctx, uint64_t now)
{
	struct run *r = ctx;
	struct periodic_io io = { r, now };

	sampler_service_while(r->sampler, periodic_files, &io);
	if (r->top && r->sampler)
		top_tick(r->top, r->sampler, now);
	else if (r->progress && r->sampler)
		progress_line(r);
}

static char *join_args(char **argv)
{
	size_t len = 1;
	char *s;

	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

static void target_name(const struct cli_options *o, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	if (o->command) {
		char *copy = strdup(o->command[0]);

		snprintf(buf, len, "%s", copy ? basename(copy) : "trainsample");
		free(copy);
		return;
	}
	snprintf(buf, len, "pid%d", (int)o->pid);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)o->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	for (char *c = buf; *c; c++)
		if (*c == '/' || *c == ' ')
			*c = '_';
}

/* Files created for a run that never started are removed again. */
static void discard_outputs(struct cli_options *o)
{
	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];

		if (out->file && out->file != stdout) {
			fclose(out->file);
			out->file = NULL;
		}
		if (out->stage)
			file_stage_close(out->stage);
	}
}

/*
 * The recording is written from its start on (a journal). One named with
 * {pid} for a command not started yet is opened once the command is; its
 * folder is tried first, so a command is still never started for a
 * recording that cannot be written.
 */
static int open_writer(struct run *r)
{
	char err[PATH_MAX + 128];
	struct file_stage stage;

	for (int i = 0; i < r->o->noutputs; i++) {
		struct output *out = &r->o->outputs[i];
		int fd;

		if (!out->writer->streams)
			continue;
		if (output_name_wants_pid(out->path)) {
			fd = file_stage_open(&stage, out->path, err, sizeof(err));
			if (fd < 0) {
				cli_error("%s", err);
				return -1;
			}
			close(fd);
			file_stage_close(&stage);
			continue;
		}
		if (tsprof_writer_open(&r->writer, out->path, r->profile, err, sizeof(err)) < 0) {
			cli_error("%s", err);
			return -1;
		}
	}
	return 0;
}

static int open_writer_io(void *ctx)
{
	return open_writer(ctx);
}

static int open_outputs(void *ctx)
{
	struct run *r = ctx;

	return outputs_open(r->o) < 0 || open_writer(r) < 0 ? -1 : 0;
}

/* Someone else's stop is left alone: continuing the target is theirs to do. */
static void warn_stopped(pid_t pid)
{
	cli_warn("PID %d is stopped (SIGSTOP/Ctrl-Z): it will not run until continued (kill -CONT %d)",
		 (int)pid, (int)pid);
}

/*
 * Whether the target sits in a job-control stop as sampling ends. A thread
 * let go from a group stop runs for a moment before it stops again ('T'),
 * so /proc is asked for a while (this is only asked when no sample came).
 */
static bool stopped_at_end(struct run *r)
{
	pid_t pid = sampler_pid(r->sampler);

	if (sampler_target_stopped(r->sampler))
		return true;
	for (int i = 0; i < 30; i++) {
		if (proc_job_stopped(pid) == 1)
			return true;
		usleep(10000);
	}
	return false;
}

static int start(struct run *r, const struct sampler_options *so)
{
	struct cli_options *o = r->o;
	char err[512] = "", privilege[32];
	int ret;

	if (!o->command && !o->quiet && proc_job_stopped(o->pid) == 1)
		warn_stopped(o->pid);

	if (o->command && !o->quiet &&
	    command_loses_privilege(o->command[0], privilege, sizeof(privilege)))
		cli_warn("%s runs without its %s privilege: the kernel withholds it from a traced program "
			 "(run trainsample as root to keep it)", o->command[0], privilege);
	if (o->command)
		ret = sampler_spawn(&r->sampler, o->command, r->profile, so, err, sizeof(err));
	else
		ret = sampler_attach(&r->sampler, o->pid, r->profile, so, err, sizeof(err));
	if (ret < 0) {
		cli_error("%s", err[0] ? err : strerror(-ret));
		if (o->command)
			return ret == -ENOENT ? 127 : 126;
		return 1;
	}
	return 0;
}

static const char *end_reason(enum sampler_end end)
{
	switch (end) {
	case SAMPLER_END_DURATION:
		return "duration";
	case SAMPLER_END_SIGNAL:
		return "signal";
	case SAMPLER_END_EXITED:
		return "exited";
	}
	return "?";
}

static int finish(struct run *r, enum sampler_end end)
{
	struct cli_options *o = r->o;
	struct sampler_stats st;
	int ret = 0;

	sampler_get_stats(r->sampler, &st);
	if (r->progress_drawn)
		fputs("\r\033[K", stderr);
	r->progress_drawn = false;
	gpu_run_finish(r->gpu, o->quiet, st.elapsed_ns);
	record_meta_end(r->profile, sampler_pid(r->sampler), &st, end_reason(end));
	if (o->live)
		return 0; /* top: the view was the output */
	if (outputs_write(o, r->profile) < 0)
		ret = 1;
	if (r->writer) {
		int wret = tsprof_writer_close(r->writer);

		r->writer = NULL;
		for (int i = 0; i < o->noutputs; i++) {
			if (!o->outputs[i].writer->streams)
				continue;
			if (wret < 0) {
				cli_error("writing %s: %s", o->outputs[i].path, strerror(-wret));
				ret = 1;
			} else {
				outputs_announce(&o->outputs[i], profile_sample_count(r->profile),
						 o->quiet);
			}
		}
	}
	if (st.samples && !o->quiet) {
		struct cli_phases cp;

		if (phases_open(o, r->profile, &cp) == 0) {
			phases_summary(&cp, false, 3, true, stderr);
			phases_close(&cp);
		}
	}
	if (st.samples)
		call_times_print(o, r->profile, stderr);
	if (st.processes_left && !o->quiet && !(o->subprocesses < 0 ? o->command != NULL : o->subprocesses))
		cli_warn("%" PRIu64 " child process%s not profiled; -s (--subprocesses) includes them",
			 st.processes_left, st.processes_left == 1 ? " was" : "es were");
	if (st.samples && !o->quiet)
		record_missed_warn(&st, o->rate_hz);
	if (o->stats)
		record_stats_print(&st);
	if (!st.samples && !o->quiet && stopped_at_end(r))
		warn_stopped(sampler_pid(r->sampler));
	else if (!st.samples && !o->quiet)
		cli_warn("no samples were taken%s", o->idle ? "" :
			 " (the process was never on a CPU at a tick; --idle keeps blocked threads)");
	return ret;
}

/* A followed process, as it starts or execs, or once the sampler finds
 * which DataLoader worker it is. */
static void label_process(void *ctx, pid_t pid, int worker, int rank)
{
	struct run *r = ctx;

	record_meta_process(r->profile, pid, worker, rank);
}

/* A followed process ended: how and when, for the summary's ranks. */
static void note_exit(void *ctx, pid_t pid, int status, uint64_t ns)
{
	struct run *r = ctx;

	record_meta_exit(r->profile, pid, status, ns);
}

/*
 * Everything a run needs before anything is opened: the target's process,
 * the outputs' names and formats, the profile and its metadata, the
 * sampler's options. 0, or the exit code.
 */

/* TRAINSAMPLE_DIE_AT_SIGNAL_STOP=SIG (a number; anything else: any
 * signal), for tests of what a SIGKILL of trainsample costs the target. */
static int die_at_signal_stop(void)
{
	const char *v = getenv("TRAINSAMPLE_DIE_AT_SIGNAL_STOP");
	int sig = v ? atoi(v) : 0;

	return !v ? 0 : sig > 0 && sig < 65 ? sig : -1;
}
static int prepare(struct run *r, bool attach, struct sampler_options *so,
		   char *name, size_t namelen)
{
	struct cli_options *o = r->o;
	char err[256], *what = NULL;

	if (o->pid) {
		pid_t tgid;

		if (sampler_resolve_pid(o->pid, &tgid, err, sizeof(err)) < 0) {
			cli_error("%s", err);
			return 1;
		}
		o->pid = tgid;
	}
	target_name(o, name, namelen);
	/* top writes no file. */
	if (!o->live &&
	    (output_names_expand(o, o->command ? 0 : o->pid) < 0 || outputs_resolve(o, name, true) < 0))
		return 2;
	r->profile = profile_new();
	if (o->command) {
		what = join_args(o->command);
	} else {
		/* Attached: the process's own command line, as the end's
		 * "PID N (...)" line and summary.json say it. */
		char cmdline[512];

		if (proc_command_line(o->pid, cmdline, sizeof(cmdline)) < 0 || !cmdline[0])
			snprintf(cmdline, sizeof(cmdline), "%s", name);
		what = strdup(cmdline);
	}
	/* The timeline always: the steps at the end are found in it (memory
	 * stays bounded: closed spans go to a temporary file). */
	if (!r->profile || !what || outputs_keep_timeline(o, r->profile) < 0 ||
	    (!o->live && profile_keep_timeline(r->profile) < 0)) {
		free(what);
		cli_error("out of memory");
		return 1;
	}
	record_meta_start(r->profile, o, attach, what);
	free(what);
	*so = (struct sampler_options){
		.rate_hz = o->rate_hz,
		.duration_s = o->duration_s,
		.stack_bytes = o->stack_bytes,
		.queue_copies = o->queue_copies,
		.idle = o->idle,
		.idle_python = !(o->idle_given && !o->idle),
		.python = true,
		.native = o->native,
		.native_all = o->native_all,
		.gil_only = o->gil_only,
		.nonblocking = o->nonblocking,
		.native_lines = o->native_lines,
		.trace_stops = getenv("TRAINSAMPLE_TRACE_STOPS") != NULL,
		.die_at_signal_stop = die_at_signal_stop(),
		.quiet = o->quiet,
		.periodic = periodic,
		.periodic_ctx = r,
		.subprocesses = o->subprocesses < 0 ? o->command != NULL : o->subprocesses,
		.process_seen = label_process,
		.process_exited = note_exit,
		.process_seen_ctx = r,
	};
	r->progress = !o->quiet && isatty(STDERR_FILENO);
	return 0;
}

/*
 * Opens the outputs and starts the GPU side and the sampler. A command is
 * started only once its outputs can be written; a running process is
 * attached first, since permission is what usually fails there, and then
 * the outputs are opened (before the first sample). 0, or the exit code.
 */
static int begin(struct run *r, const struct sampler_options *so)
{
	struct cli_options *o = r->o;
	int ret;

	if (o->command && (outputs_open(o) < 0 || open_writer(r) < 0))
		return 1;
	if (gpu_run_start(o, r->profile, &r->gpu) < 0) {
		cli_error("out of memory");
		return 1;
	}
	ret = start(r, so);
	if (ret)
		return ret;
	if (o->live && top_start(r->profile, o, &r->top) < 0) {
		cli_error("out of memory");
		return 1;
	}
	/* Attached: opening (a FIFO with no reader yet), creating and
	 * renaming (a large old recording evicted) may wait on the file
	 * system; the target's stops are answered meanwhile. */
	if (!o->command && sampler_service_while(r->sampler, open_outputs, r) < 0)
		return 1;
	/* A command's {pid} is known now; only a recording can still fail. */
	if (o->command && output_names_expand(o, sampler_pid(r->sampler)) == 0 && !r->writer &&
	    sampler_service_while(r->sampler, open_writer_io, r) < 0)
		cli_warn("the command runs on; only the other outputs will be written");
	return 0;
}

/* Whether pid ignores sig (SIG_IGN, say inherited from a shell that ran
 * us in the background): sending it would only cost 2 s. */
static bool ignores_signal(pid_t pid, int sig)
{
	char buf[32];

	return proc_status_field(pid, "SigIgn", buf, sizeof(buf)) == 0 &&
	       (strtoull(buf, NULL, 16) >> (sig - 1)) & 1;
}

/*
 * -d N with a command: when the time is up the command is ended, as py-spy
 * does, rather than waited for: SIGINT first (Python's KeyboardInterrupt,
 * so its finally blocks and atexit handlers run), SIGTERM and SIGKILL each
 * after 2 s more. A signal the command ignores is skipped. Its status is
 * returned as a shell gives it.
 */
static int end_command(struct run *r, const char *name, int *code)
{
	static const int signals[] = { SIGINT, SIGTERM, SIGKILL };
	static const size_t nsignals = sizeof(signals) / sizeof(signals[0]);
	pid_t pid = sampler_pid(r->sampler);
	const char *why = "the duration is up";
	int ret = -ETIMEDOUT, skipped = 0;

	for (size_t i = 0; i < nsignals && ret == -ETIMEDOUT; i++) {
		if (i + 1 < nsignals && ignores_signal(pid, signals[i])) {
			skipped = signals[i];
			continue;
		}
		if (!r->o->quiet)
			fprintf(stderr, "trainsample: %s; ending %s (PID %d) with SIG%s%s%s%s\n",
				why, name, (int)pid, sigabbrev_np(signals[i]),
				skipped ? " (it ignores SIG" : "", skipped ? sigabbrev_np(skipped) : "",
				skipped ? ")" : "");
		kill(pid, signals[i]);
		ret = sampler_wait_command(r->sampler, i + 1 < nsignals ? 2000 : -1, code);
		why = "still running 2 s later";
		skipped = 0;
	}
	return ret;
}

/* Samples to the end, writes every output; a command's exit status (as a
 * shell gives it) when one was started, else 0 or 1; 1 also when the
 * command succeeded but an output could not be written. */
static int sample(struct run *r, const char *name)
{
	struct cli_options *o = r->o;
	enum sampler_end end;
	int ret, signo, code;

	sampler_run(r->sampler, &end, &signo);
	top_end(r->top); /* the terminal as it was, before anything is said */
	r->top = NULL;
	if (end == SAMPLER_END_EXITED && !o->command && !o->quiet) {
		if (r->progress_drawn)
			fputs("\r\033[K", stderr);
		r->progress_drawn = false;
		fprintf(stderr, "trainsample: PID %d exited\n", (int)o->pid);
	}
	ret = finish(r, end);
	if (o->command && end == SAMPLER_END_DURATION) {
		if (end_command(r, name, &code) == 0)
			ret = code ? code : ret;
	} else if (o->command) {
		if (end != SAMPLER_END_EXITED && !o->quiet)
			fprintf(stderr, "trainsample: sampling stopped; waiting for %s (PID %d) to exit\n",
				name, (int)sampler_pid(r->sampler));
		if (sampler_wait_command(r->sampler, -1, &code) == 0)
			ret = code ? code : ret;
	}
	return ret;
}

static int record_run(int argc, char **argv, bool attach, bool live)
{
	struct cli_options o;
	struct run r = { .o = &o };
	struct sampler_options so = { 0 };
	char name[64];
	bool sampled = false;
	int ret;

	ret = options_parse_record(argc, argv, live ? CLI_TOP : attach ? CLI_ATTACH : CLI_RECORD, attach,
				   &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (live && o.noutputs) {
		cli_error("top draws in the terminal: it writes no file (-o is record's and attach's)");
		outputs_free(&o);
		return 2;
	}
	o.live = live;
	ret = prepare(&r, attach, &so, name, sizeof(name));
	if (!ret)
		ret = begin(&r, &so);
	if (!ret) {
		sampled = true;
		ret = sample(&r, name);
	}
	/* The one way out: nothing stays traced, and files made for a run
	 * that never sampled are removed again. */
	top_end(r.top);
	sampler_free(r.sampler);
	gpu_run_free(r.gpu);
	if (r.writer && sampled)
		tsprof_writer_close(r.writer);
	else if (r.writer)
		tsprof_writer_discard(r.writer);
	if (!sampled)
		discard_outputs(&o);
	outputs_free(&o);
	profile_free(r.profile);
	return ret;
}

int cmd_record(int argc, char **argv, bool attach)
{
	return record_run(argc, argv, attach, false);
}

/* top PID as attach PID does, top -- CMD as record -- CMD. */
int cmd_top(int argc, char **argv)
{
	bool command = false;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--") || !strcmp(argv[i], "--pid"))
			command = true;
	return record_run(argc, argv, !command, true);
}
