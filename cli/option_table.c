// SPDX-License-Identifier: MIT
/*
 * Every option of every command, in one table: what it is called, what it
 * takes, which commands take it, what --help and docs/options.md say of
 * it, and what it sets. The parser (options.c) makes getopt's arrays from
 * it; help.c prints it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"

/* ---- what the options set, where a field is not enough ---- */

static int parse_double(const char *s, const char *what, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
		cli_error("%s must be a number from %g to %g, not '%s'", what, lo, hi, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int add_output(struct cli_options *o, const char *path)
{
	if (o->noutputs == MAX_OUTPUTS) {
		cli_error("at most %d outputs", MAX_OUTPUTS);
		return -EINVAL;
	}
	o->outputs[o->noutputs++].path = path;
	return 0;
}

static int apply_output(struct cli_options *o, const char *arg)
{
	return add_output(o, arg);
}

static int apply_format(struct cli_options *o, const char *arg)
{
	if (!output_writer_by_name(arg)) {
		char names[256];

		output_writers_list(names, sizeof(names), false, ", ", ", ");
		cli_error("unknown format '%s' (%s)", arg, names);
		return -EINVAL;
	}
	o->format = arg;
	return 0;
}

static int apply_rate(struct cli_options *o, const char *arg)
{
	return parse_double(arg, "--rate", 0.1, 10000, &o->rate_hz);
}

static int apply_duration(struct cli_options *o, const char *arg)
{
	return parse_double(arg, "--duration", 0, 1e9, &o->duration_s);
}

static int apply_subprocesses(struct cli_options *o, const char *arg)
{
	(void)arg;
	o->subprocesses = 1;
	return 0;
}

static int apply_no_subprocesses(struct cli_options *o, const char *arg)
{
	(void)arg;
	o->subprocesses = 0;
	return 0;
}

static int apply_idle(struct cli_options *o, const char *arg)
{
	(void)arg;
	o->idle = true;
	o->idle_given = true;
	return 0;
}

static int apply_no_idle(struct cli_options *o, const char *arg)
{
	(void)arg;
	o->idle = false;
	o->idle_given = true;
	return 0;
}

static int apply_native_all(struct cli_options *o, const char *arg)
{
	(void)arg;
	o->native = true;
	o->native_all = true;
	return 0;
}

static int apply_time(struct cli_options *o, const char *arg)
{
	if (o->ntimes == MAX_TIMES) {
		cli_error("at most %d --time functions", MAX_TIMES);
		return -EINVAL;
	}
	o->times[o->ntimes++] = arg;
	return 0;
}

static int apply_trace_max_slices(struct cli_options *o, const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-') {
		cli_error("--trace-max-slices takes a number of slices (0: no limit), not '%s'", arg);
		return -EINVAL;
	}
	o->trace_max_slices = v;
	return 0;
}

static int apply_gpu(struct cli_options *o, const char *arg)
{
	if (!arg || !strcmp(arg, "on"))
		o->gpu = CLI_GPU_ON;
	else if (!strcmp(arg, "auto"))
		o->gpu = CLI_GPU_AUTO;
	else if (!strcmp(arg, "off"))
		o->gpu = CLI_GPU_OFF;
	else {
		cli_error("--gpu takes auto, on or off, not '%s'", arg);
		return -EINVAL;
	}
	return 0;
}

static int apply_gpu_flamegraph(struct cli_options *o, const char *arg)
{
	if (add_output(o, arg) < 0)
		return -EINVAL;
	o->outputs[o->noutputs - 1].gpu = true;
	return 0;
}

static int apply_stack_bytes(struct cli_options *o, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!errno && end != s) {
		if (*end == 'k' || *end == 'K')
			v <<= 10, end++;
		else if (*end == 'm' || *end == 'M')
			v <<= 20, end++;
	}
	if (errno || end == s || *end || v < 512 || v > (64ull << 20)) {
		cli_error("--stack-bytes must be from 512 to 64M, not '%s'", s);
		return -EINVAL;
	}
	o->stack_bytes = (size_t)v;
	return 0;
}

static int apply_unwind_queue(struct cli_options *o, const char *arg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > 1000000) {
		cli_error("--unwind-queue takes a number of copies from 1 to 1000000, not '%s'", arg);
		return -EINVAL;
	}
	o->queue_copies = v;
	return 0;
}

static int apply_pid(struct cli_options *o, const char *arg)
{
	return options_parse_pid(arg, &o->pid) < 0 ? -EINVAL : 0;
}

static int apply_tid(struct cli_options *o, const char *arg)
{
	return options_parse_pid(arg, &o->tid) < 0 ? -EINVAL : 0;
}

static int apply_from(struct cli_options *o, const char *arg)
{
	return parse_double(arg, "--from", 0, 1e9, &o->from_s);
}

static int apply_to(struct cli_options *o, const char *arg)
{
	return parse_double(arg, "--to", 0, 1e9, &o->to_s);
}

/* --steps A:B, A: or A (that step alone); steps count from 1. */
static int apply_steps(struct cli_options *o, const char *s)
{
	unsigned long long a, b = 0;
	int n = 0, m = 0;

	if (!isdigit((unsigned char)*s) || sscanf(s, "%llu%n", &a, &n) != 1 || !a)
		goto bad;
	if (!s[n])
		b = a;
	else if (s[n] != ':' || (s[n + 1] && (!isdigit((unsigned char)s[n + 1]) ||
					      sscanf(s + n + 1, "%llu%n", &b, &m) != 1 ||
					      s[n + 1 + m] || b < a)))
		goto bad;
	o->steps_from = a;
	o->steps_to = b;
	return 0;
bad:
	cli_error("--steps takes A:B (steps A to B, from 1), A: (from A on) or A, not '%s'", s);
	return -EINVAL;
}

static int apply_top(struct cli_options *o, const char *arg)
{
	double v;

	if (parse_double(arg, "--top", 1, 100000, &v) < 0 || v != (unsigned)v) {
		cli_error("--top takes a number of rows from 1 to 100000, not '%s'", arg);
		return -EINVAL;
	}
	o->top = (unsigned)v;
	return 0;
}

static int apply_help(struct cli_options *o, const char *arg)
{
	(void)arg;
	usage_command(stdout, o->parsing);
	return 1;
}

static int apply_version(struct cli_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	printf("trainsample %s\n", TRAINSAMPLE_VERSION);
	return 1;
}

/* ---- texts made from the writers' table ---- */

/* -o: every extension the writers' table knows, and what it holds. */
static void describe_output(FILE *f, bool md)
{
	const char *q = md ? "`" : "";
	const struct output_writer *w;
	size_t defaults = 0;

	fprintf(f, "write FILE; its format comes from the extension: ");
	for (size_t i = 0; (w = output_writer_at(i)); i++) {
		fputs(i ? ", " : "", f);
		for (size_t j = 0; j < OUTPUT_EXTENSIONS_MAX && w->extensions[j]; j++) {
			bool last = j + 1 == OUTPUT_EXTENSIONS_MAX || !w->extensions[j + 1];

			fprintf(f, "%s%s.%s%s", !j ? "" : last ? " or " : ", ", q, w->extensions[j], q);
		}
		if (w->contents)
			fprintf(f, " (%s)", w->contents);
	}
	fprintf(f, "; repeatable (one %s.tsprof%s per run); %s is stdout. Default: %s write ", q, q,
		md ? "`-`" : "'-'", md ? "`record` and `attach`" : "record and attach");
	for (size_t i = 0; (w = output_writer_at(i)); i++)
		if (w->record_default)
			fprintf(f, defaults++ ? " and %s.%s%s" : "%sNAME-YYYYmmdd-HHMMSS.%s%s", q,
				w->extensions[0], q);
	fprintf(f, "%s; %s, folded stacks on stdout",
		md ? " in the current directory, NAME being the command or the process's name" : "",
		md ? "`report`" : "report");
}

/* -f: every format's -f names. */
static void describe_format(FILE *f, bool md)
{
	const struct output_writer *w;
	char names[256];

	if (!md) {
		output_writers_list(names, sizeof(names), false, ", ", " or ");
		fprintf(f, "%s, for outputs whose name does not say", names);
		return;
	}
	for (size_t i = 0; (w = output_writer_at(i)); i++) {
		fprintf(f, "%s`%s`", !i ? "" : output_writer_at(i + 1) ? ", " : " or ", w->names[0]);
		for (size_t j = 1; j < OUTPUT_NAMES_MAX && w->names[j]; j++)
			fprintf(f, "%s`%s`%s", j == 1 ? " (or " : ", ", w->names[j],
				j + 1 == OUTPUT_NAMES_MAX || !w->names[j + 1] ? ")" : "");
	}
	fputs(", for outputs whose name does not say (also the single default output when no "
	      "`-o` is given)",
	      f);
}

/* ---- the table ---- */

#define FIELD(name) offsetof(struct cli_options, name)
#define NONE CLI_ARG_NONE
#define REQ CLI_ARG_REQUIRED
#define OPT CLI_ARG_OPTIONAL

static const struct cli_option options[] = {
	{ "output", 'o', REQ, "FILE", CLI_RECORD | CLI_ATTACH | CLI_RENDERING, NULL, NULL,
	  describe_output, apply_output, 0 },
	{ "format", 'f', REQ, "FORMAT", CLI_RECORD | CLI_ATTACH | CLI_RENDERING, NULL, NULL,
	  describe_format, apply_format, 0 },
	{ "rate", 'r', REQ, "HZ", CLI_SAMPLING,
	  "samples per second per thread (default 100, up to 10000)", NULL, NULL, apply_rate, 0 },
	{ "duration", 'd', REQ, "SEC", CLI_SAMPLING,
	  "stop after SEC seconds (fractions allowed; default: until Ctrl-C or the process "
	  "exits); a command started is then ended: SIGINT, then SIGTERM and SIGKILL 2 s apart",
	  "stop after SEC seconds (default: until Ctrl-C or the process exits). A command "
	  "`record` started is then ended, as py-spy does: SIGINT, then SIGTERM and SIGKILL 2 s "
	  "apart",
	  NULL, apply_duration, 0 },
	{ "subprocesses", 's', NONE, NULL, CLI_SAMPLING,
	  "follow child processes too (DataLoader workers, multiprocessing, torchrun's ranks): "
	  "those alive at attach and each one started; record -- CMD does by default",
	  "follow child processes too (DataLoader workers, multiprocessing, torchrun's ranks): "
	  "those alive at attach and each one started; `record -- CMD` does by default",
	  NULL, apply_subprocesses, 0 },
	{ "no-subprocesses", 0, NONE, NULL, CLI_RECORD | CLI_TOP,
	  "record -- CMD: the command's own process only",
	  "`record -- CMD`: the command's own process only", NULL, apply_no_subprocesses, 0 },
	{ "threads", 't', NONE, NULL, CLI_RECORD | CLI_ATTACH | CLI_RENDERING,
	  "a 'thread TID (name)' root frame per thread", "a `thread TID (name)` root frame per thread",
	  NULL, NULL, FIELD(threads) },
	{ "idle", 'i', NONE, NULL, CLI_SAMPLING | CLI_RENDERING,
	  "keep samples of every thread blocked in the kernel, and show them all in the flamegraph "
	  "and folded stacks",
	  "keep the samples of every thread blocked in the kernel, and show them all in the "
	  "flamegraph and folded stacks ([which waits the pictures "
	  "show](outputs.md#which-waits-the-pictures-show)); `report`: every wait the recording holds",
	  NULL, apply_idle, 0 },
	{ "no-idle", 0, NONE, NULL, CLI_SAMPLING | CLI_RENDERING,
	  "drop them all. Default: those of Python threads only, ending in '[idle: SYSCALL]' (a "
	  "wait on a queue, a lock, .item()); the flamegraph and folded stacks show the training "
	  "loop's waits",
	  "drop them all. By default those of threads with Python frames are recorded (a wait on a "
	  "DataLoader queue, a lock, `.item()` is what one hunts) and those of threads without "
	  "(OpenMP, CUDA helpers, native programs) dropped; the flamegraph and folded stacks then "
	  "show only the training loop's waits. Kept ones end in an `[idle: SYSCALL]` frame such as "
	  "`[idle: futex]`",
	  NULL, apply_no_idle, 0 },
	{ "native", 0, NONE, NULL, CLI_SAMPLING,
	  "Python targets: native frames too, each evaluator frame replaced by the Python frames it "
	  "ran (stops running threads); the interpreter's own frames above the innermost Python "
	  "frame are hidden",
	  "Python targets: native frames too, each evaluator frame replaced by the Python frames it "
	  "ran. The interpreter's own frames between and above Python frames are hidden; those below "
	  "the innermost Python frame and every other module's stay (see [Python "
	  "programs](usage.md#python-programs)). Running threads are then stopped to copy their "
	  "stacks",
	  NULL, NULL, FIELD(native) },
	{ "native-all", 0, NONE, NULL, CLI_SAMPLING,
	  "--native, keeping the interpreter's frames between Python's",
	  "`--native`, keeping the interpreter's frames between and above Python frames too", NULL,
	  apply_native_all, 0 },
	{ "gil", 'g', NONE, NULL, CLI_SAMPLING | CLI_RENDERING,
	  "only samples of the thread holding Python's GIL", NULL, NULL, NULL, FIELD(gil_only) },
	{ "nonblocking", 0, NONE, NULL, CLI_SAMPLING,
	  "Python: never stop a thread, not even the GIL holder for its walk; its stacks may then "
	  "be torn (counted in --stats)",
	  "Python targets: never stop a thread, not even the GIL holder for its walk; its stacks may "
	  "be torn (see [Python programs](usage.md#python-programs))",
	  NULL, NULL, FIELD(nonblocking) },
	{ "function", 0, NONE, NULL, CLI_RECORD | CLI_ATTACH | CLI_REPORT,
	  "Python frames by function, without line numbers", NULL, NULL, NULL, FIELD(by_function) },
	{ "full-filenames", 0, NONE, NULL, CLI_RECORD | CLI_ATTACH | CLI_RENDERING,
	  "Python files with their whole path (default: below site-packages/, the standard library "
	  "or the script's folder)",
	  "Python files with their whole path (default: what follows `site-packages/` or "
	  "`dist-packages/`, the standard library's path below `lib/python3.X/`, or the path below "
	  "the script's folder)",
	  NULL, NULL, FIELD(full_filenames) },
	{ "inverted", 0, NONE, NULL, CLI_RECORD | CLI_ATTACH | CLI_RENDERING,
	  "the flamegraph as an icicle: the outermost frames on top", NULL, NULL, NULL,
	  FIELD(inverted) },
	{ "native-lines", 0, NONE, NULL, CLI_SAMPLING,
	  "native frames as 'function (file:line)', from debug info",
	  "native frames as `function (file:line)`, from the debug information (the debug file's, "
	  "else the module's own)",
	  NULL, NULL, FIELD(native_lines) },
	{ "phases", 0, REQ, "FILE", CLI_SAMPLING | CLI_RENDERING,
	  "training-phase rules added to the built-in ones: a line 'PHASE FUNCTION [FILE]' or "
	  "'PHASE thread:NAME' (shell patterns)",
	  "training-phase rules added to the built-in ones: a line `PHASE FUNCTION [FILE]` or "
	  "`PHASE thread:NAME` (shell patterns); see [analysis.md](analysis.md#phases). `diff`: "
	  "for both recordings",
	  NULL, NULL, FIELD(phases_file) },
	{ "group-by", 0, REQ, "phase", CLI_RECORD | CLI_ATTACH | CLI_REPORT,
	  "a '[phase: NAME]' root per training phase (data, forward, backward, optimizer, sync, "
	  "checkpoint, eval, logging, comm, other)",
	  "a `[phase: NAME]` root per training phase in the flamegraph and folded stacks (`data`, "
	  "`forward`, `backward`, `optimizer`, `sync`, `checkpoint`, `eval`, `logging`, `comm`, `other`)",
	  NULL, NULL, FIELD(group_by) },
	{ "time", 0, REQ, "FUNC", CLI_RECORD | CLI_ATTACH | CLI_REPORT,
	  "each call's duration at the end: count, p50, p90, max, total (FUNC as outputs name it, "
	  "Class.method, or FILE:LINE; repeatable)",
	  "each call's duration at the end: count, p50, p90, max, total (FUNC as outputs name it, "
	  "`Class.method`, or `FILE:LINE`; repeatable); see "
	  "[analysis.md](analysis.md#call-timings---time-func)",
	  NULL, apply_time, 0 },
	{ "trace-max-slices", 0, REQ, "N", CLI_RECORD | CLI_ATTACH | CLI_RENDERING,
	  "the most CPU slices a .trace.json holds (default 1000000, 0: no limit); past it the "
	  "shortest are left out",
	  "the most CPU slices a `.trace.json` holds (default 1,000,000, about 150 MB; 0: no "
	  "limit). Past it the shortest slices are left out, and the file and the command line say "
	  "how many and below what duration",
	  NULL, apply_trace_max_slices, 0 },
	{ "gpu", 0, OPT, "MODE", CLI_SAMPLING,
	  "auto (default): CUDA programs get the GPU agent (kernels, copies, launch stacks); on: "
	  "the same, saying why when it cannot; off",
	  "`auto`, `on` or `off`: CUDA programs get the GPU agent: kernels, copies and their "
	  "launching Python stacks in every output. `auto` (default) loads it where CUDA starts; "
	  "`on` (also `--gpu` alone) also says why there is no GPU data when there is none; `off` "
	  "loads nothing",
	  NULL, apply_gpu, 0 },
	{ "gpu-flamegraph", 0, REQ, "FILE.svg", CLI_RECORD | CLI_ATTACH,
	  "GPU time on the Python stacks that launched it (an .svg output named gpu.svg is one too)",
	  "a flamegraph of GPU time on the stacks that launched it; an `.svg` output named "
	  "`gpu.svg` (or ending `-gpu.svg`, `.gpu.svg`, `_gpu.svg`) is one too",
	  NULL, apply_gpu_flamegraph, 0 },
	{ "stack-bytes", 0, REQ, "N", CLI_SAMPLING,
	  "bytes of stack copied per sample (default 64K; K and M suffixes)",
	  "bytes of stack copied per sample, K and M suffixes (default 64K); frames beyond it are "
	  "cut, under a `[truncated: beyond the stack copy]` root frame",
	  NULL, apply_stack_bytes, 0 },
	{ "unwind-queue", 0, REQ, "N", CLI_SAMPLING,
	  "copies that may wait to be unwound (default: 32 MiB of them); when unwinding falls "
	  "behind, new samples are dropped and counted",
	  "copies that may wait to be unwound (default: 32 MiB of them); when unwinding falls "
	  "behind, new samples are dropped and counted rather than the target stopped or memory "
	  "grown",
	  NULL, apply_unwind_queue, 0 },
	{ "pid", 0, REQ, "PID", CLI_RECORD | CLI_TOP,
	  "profile a running process (a thread id names its process)",
	  "profile a running process; a thread id names its process", NULL, apply_pid, 0 },
	{ "stats", 0, NONE, NULL, CLI_RECORD | CLI_ATTACH, "print sampling statistics at the end",
	  "print sampling statistics at the end ([what each line "
	  "means](outputs.md#statistics---stats))",
	  NULL, NULL, FIELD(stats) },
	{ "quiet", 'q', NONE, NULL, CLI_SAMPLING, "no progress line and no summary", NULL, NULL,
	  NULL, FIELD(quiet) },
	/* report and diff */
	{ "pid", 0, REQ, "PID", CLI_RENDERING, "keep this process's samples", NULL, NULL, apply_pid,
	  0 },
	{ "tid", 0, REQ, "TID", CLI_RENDERING, "keep this thread's samples", NULL, NULL, apply_tid,
	  0 },
	{ "thread", 0, REQ, "NAME", CLI_RENDERING,
	  "keep the threads so named in the recording (for example by Python's threading)",
	  "keep the threads so named in the recording (for example by Python's `threading`)", NULL,
	  NULL, FIELD(thread) },
	{ "process", 0, REQ, "LABEL", CLI_RENDERING,
	  "keep the processes so labelled ('rank 0', 'DataLoader worker 1', or a prefix of words: "
	  "'DataLoader worker')",
	  "keep the processes so labelled (`rank 0`, `DataLoader worker 1`, or its first words: "
	  "`DataLoader worker`)",
	  NULL, NULL, FIELD(process) },
	{ "phase", 0, REQ, "NAME", CLI_REPORT,
	  "keep one training phase's samples (data, forward, backward, optimizer, sync, "
	  "checkpoint, eval, logging, comm, other)",
	  "keep one training phase's samples (`data`, `forward`, `backward`, `optimizer`, `sync`, "
	  "`checkpoint`, `eval`, `logging`, `comm`, `other`)",
	  NULL, NULL, FIELD(phase) },
	{ "from", 0, REQ, "SEC", CLI_RENDERING,
	  "keep the samples from SEC seconds after the first sample on",
	  "keep the samples from SEC seconds after the recording's first sample on. Rows of a "
	  "recording that `report` re-encoded carry no time and are left out of a window",
	  NULL, apply_from, 0 },
	{ "to", 0, REQ, "SEC", CLI_RENDERING, "keep the samples up to SEC seconds after the first sample",
	  "keep the samples up to SEC seconds after the recording's first sample", NULL, apply_to, 0 },
	{ "steps", 0, REQ, "A:B", CLI_RENDERING,
	  "steps A to B of the main training loop, from 1 (A: from A on)",
	  "steps A to B of the main training loop, from 1 (`A:` from A on); `diff`: of both "
	  "recordings",
	  NULL, apply_steps, 0 },
	{ "summary", 0, NONE, NULL, CLI_REPORT,
	  "the lines record ends with, again: per process, its threads, phases and steps (alone: "
	  "on stdout, and no picture)",
	  "the lines `record` ends with, again: per process, its threads, phases and steps (alone: "
	  "on stdout, and no picture)",
	  NULL, NULL, FIELD(summary) },
	{ "ranks", 0, NONE, NULL, CLI_REPORT,
	  "a distributed job's ranks side by side: steps, step p50/p90, each phase's ms a step, "
	  "the comm wait (alone: on stdout, and no picture)",
	  "a distributed job's ranks side by side: steps, step p50/p90, each phase's ms a step, "
	  "the comm wait (alone: on stdout, and no picture)",
	  NULL, NULL, FIELD(ranks) },
	{ "findings", 0, NONE, NULL, CLI_REPORT,
	  "every bottleneck found, with its evidence and a hint (one line where there is none)", NULL,
	  NULL, NULL, FIELD(findings) },
	{ "quiet", 'q', NONE, NULL, CLI_RENDERING,
	  "no 'wrote' lines, nor notes such as the waits left out (errors are still told)",
	  "no `wrote` lines, nor notes such as the waits left out (errors are still told)", NULL,
	  NULL, FIELD(quiet) },
	/* diff */
	{ "top", 0, REQ, "N", CLI_DIFF, "rows of the table (default 20)", NULL, NULL, apply_top, 0 },
	{ "lines", 0, NONE, NULL, CLI_DIFF,
	  "compare Python frames by line (by default by function, as lines move between versions "
	  "of the code)",
	  NULL, NULL, NULL, FIELD(lines) },
	/* dump */
	{ "pid", 'p', REQ, "PID", CLI_DUMP, "the process (or give PID as the argument)", NULL, NULL,
	  apply_pid, 0 },
	{ "native", 0, NONE, NULL, CLI_DUMP, "native frames too; traces every running thread", NULL,
	  NULL, NULL, FIELD(native) },
	{ "native-all", 0, NONE, NULL, CLI_DUMP, "--native, keeping the interpreter's own frames",
	  "`--native`, keeping the interpreter's own frames", NULL, apply_native_all, 0 },
	{ "nonblocking", 0, NONE, NULL, CLI_DUMP,
	  "stop no thread, not even a running GIL holder for its walk", NULL, NULL, NULL,
	  FIELD(nonblocking) },
	{ "locals", 0, NONE, NULL, CLI_DUMP, "each Python frame's local, cell and free variables",
	  NULL, NULL, NULL, FIELD(locals) },
	{ "json", 0, NONE, NULL, CLI_DUMP, "JSON instead of text", NULL, NULL, NULL, FIELD(json) },
	/* every command */
	{ "help", 'h', NONE, NULL, CLI_SAMPLING | CLI_RENDERING | CLI_DUMP, "this text",
	  "print the command's options", NULL, apply_help, 0 },
	{ "version", 0, NONE, NULL, CLI_SAMPLING | CLI_RENDERING, "print the version", NULL, NULL,
	  apply_version, 0 },
};

const struct cli_option *cli_option_at(size_t i)
{
	return i < sizeof(options) / sizeof(options[0]) ? &options[i] : NULL;
}

static const struct cli_command_info commands[] = {
	{ CLI_RECORD, "record", "record [OPTIONS] -- COMMAND [ARG...]\nrecord [OPTIONS] --pid PID",
	  "start COMMAND and profile it, or profile a running process" },
	{ CLI_ATTACH, "attach", "attach PID [OPTIONS]", "the same as record --pid PID" },
	{ CLI_TOP, "top", "top PID\ntop [OPTIONS] -- COMMAND",
	  "a live view, redrawn every second: phases, threads, the hottest functions; keys 1-4 "
	  "sort, p process, t thread, q quit" },
	{ CLI_REPORT, "report", "report IN.tsprof... [-o OUT] [-f FORMAT]",
	  "render saved recordings again (several: merged into one profile)" },
	{ CLI_DIFF, "diff", "diff OLDER.tsprof NEWER.tsprof [-o DIFF.svg]",
	  "the largest changes, and a differential flamegraph (red grew, blue shrank)" },
	{ CLI_DUMP, "dump", "dump --pid PID [OPTIONS]\ndump PID [OPTIONS]",
	  "print every thread's stack once" },
	{ 0, "env", "env",
	  "the variable that loads the GPU agent, dormant until attach switches it on" },
};

const struct cli_command_info *cli_command_at(size_t i)
{
	return i < sizeof(commands) / sizeof(commands[0]) ? &commands[i] : NULL;
}
