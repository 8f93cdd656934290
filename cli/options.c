// SPDX-License-Identifier: MIT
/* Command-line options of record, attach and report. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"

enum {
	OPT_NO_IDLE = 256,
	OPT_STATS,
	OPT_VERSION,
	OPT_PID,
	OPT_STACK_BYTES,
	OPT_UNWIND_QUEUE,
	OPT_NATIVE_LINES,
	OPT_NATIVE,
	OPT_NATIVE_ALL,
	OPT_FUNCTION,
	OPT_FULL_FILENAMES,
	OPT_INVERTED,
	OPT_TID,
	OPT_THREAD,
	OPT_FROM,
	OPT_TO,
	OPT_TOP,
	OPT_LINES,
	OPT_GPU,
	OPT_GPU_FLAMEGRAPH,
	OPT_NONBLOCKING,
	OPT_TRACE_MAX_SLICES,
	OPT_NO_SUBPROCESSES,
	OPT_PROCESS,
	OPT_PHASE,
	OPT_GROUP_BY,
	OPT_PHASES,
	OPT_SUMMARY,
	OPT_TIME,
	OPT_STEPS,
	OPT_FINDINGS,
};

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "rate", required_argument, NULL, 'r' },
	{ "duration", required_argument, NULL, 'd' },
	{ "threads", no_argument, NULL, 't' },
	{ "idle", no_argument, NULL, 'i' },
	{ "no-idle", no_argument, NULL, OPT_NO_IDLE },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "stack-bytes", required_argument, NULL, OPT_STACK_BYTES },
	{ "unwind-queue", required_argument, NULL, OPT_UNWIND_QUEUE },
	{ "native-lines", no_argument, NULL, OPT_NATIVE_LINES },
	{ "native", no_argument, NULL, OPT_NATIVE },
	{ "native-all", no_argument, NULL, OPT_NATIVE_ALL },
	{ "gil", no_argument, NULL, 'g' },
	{ "function", no_argument, NULL, OPT_FUNCTION },
	{ "full-filenames", no_argument, NULL, OPT_FULL_FILENAMES },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "thread", required_argument, NULL, OPT_THREAD },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "gpu", optional_argument, NULL, OPT_GPU },
	{ "gpu-flamegraph", required_argument, NULL, OPT_GPU_FLAMEGRAPH },
	{ "nonblocking", no_argument, NULL, OPT_NONBLOCKING },
	{ "trace-max-slices", required_argument, NULL, OPT_TRACE_MAX_SLICES },
	{ "subprocesses", no_argument, NULL, 's' },
	{ "no-subprocesses", no_argument, NULL, OPT_NO_SUBPROCESSES },
	{ "process", required_argument, NULL, OPT_PROCESS },
	{ "phase", required_argument, NULL, OPT_PHASE },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "phases", required_argument, NULL, OPT_PHASES },
	{ "summary", no_argument, NULL, OPT_SUMMARY },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "steps", required_argument, NULL, OPT_STEPS },
	{ "findings", no_argument, NULL, OPT_FINDINGS },
	{ NULL, 0, NULL, 0 },
};

static void defaults(struct cli_options *o)
{
	memset(o, 0, sizeof(*o));
	o->rate_hz = 100;
	o->stack_bytes = 64 * 1024;
	o->to_s = -1;
	o->subprocesses = -1;
	/* About 150 MB of JSON, which Perfetto's UI and chrome://tracing
	 * still open; a 10-minute 1 kHz run can hold 20 times that. */
	o->trace_max_slices = 1000000;
}

static int parse_double(const char *s, const char *what, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
		cli_error("%s must be a number from %g to %g, not '%s'", what, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* --steps A:B, A: or A (that step alone); steps count from 1. */
static int parse_steps(const char *s, struct cli_options *o)
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
	return -1;
}

static int parse_pid(const char *s, pid_t *out)
{
	if (pid_parse(s, out) < 0) {
		cli_error("'%s' is not a process id", s);
		return -1;
	}
	return 0;
}

static int parse_size(const char *s, size_t *out)
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
		return -1;
	}
	*out = (size_t)v;
	return 0;
}

static int add_output(struct cli_options *o, const char *path)
{
	if (o->noutputs == MAX_OUTPUTS) {
		cli_error("at most %d outputs", MAX_OUTPUTS);
		return -1;
	}
	o->outputs[o->noutputs++].path = path;
	return 0;
}

/* The options both forms share; returns 1 for help/version, -1 on error. */
static int parse_common(int c, const char *arg, struct cli_options *o)
{
	switch (c) {
	case 'o':
		return add_output(o, arg);
	case 'f':
		if (!output_writer_by_name(arg)) {
			char names[256];

			output_writers_list(names, sizeof(names), false, ", ", ", ");
			cli_error("unknown format '%s' (%s)", arg, names);
			return -1;
		}
		o->format = arg;
		return 0;
	case 'r':
		return parse_double(arg, "--rate", 0.1, 10000, &o->rate_hz);
	case 'd':
		return parse_double(arg, "--duration", 0, 1e9, &o->duration_s);
	case 't':
		o->threads = true;
		return 0;
	case 'i':
		o->idle = true;
		o->idle_given = true;
		return 0;
	case OPT_NO_IDLE:
		o->idle = false;
		o->idle_given = true;
		return 0;
	case OPT_STATS:
		o->stats = true;
		return 0;
	case 'g':
		o->gil_only = true;
		return 0;
	case OPT_FUNCTION:
		o->by_function = true;
		return 0;
	case OPT_FULL_FILENAMES:
		o->full_filenames = true;
		return 0;
	case OPT_INVERTED:
		o->inverted = true;
		return 0;
	case OPT_TID:
		return parse_pid(arg, &o->tid);
	case OPT_THREAD:
		o->thread = arg;
		return 0;
	case OPT_PROCESS:
		o->process = arg;
		return 0;
	case OPT_PHASE:
		o->phase = arg;
		return 0;
	case OPT_GROUP_BY:
		o->group_by = arg;
		return 0;
	case OPT_PHASES:
		o->phases_file = arg;
		return 0;
	case OPT_SUMMARY:
		o->summary = true;
		return 0;
	case OPT_FINDINGS:
		o->findings = true;
		return 0;
	case OPT_TIME:
		if (o->ntimes == MAX_TIMES) {
			cli_error("at most %d --time functions", MAX_TIMES);
			return -1;
		}
		o->times[o->ntimes++] = arg;
		return 0;
	case OPT_STEPS:
		return parse_steps(arg, o);
	case OPT_FROM:
		return parse_double(arg, "--from", 0, 1e9, &o->from_s);
	case OPT_TO:
		return parse_double(arg, "--to", 0, 1e9, &o->to_s);
	case OPT_TOP: {
		double v;

		if (parse_double(arg, "--top", 1, 100000, &v) < 0 || v != (unsigned)v) {
			cli_error("--top takes a number of rows from 1 to 100000, not '%s'", arg);
			return -1;
		}
		o->top = (unsigned)v;
		return 0;
	}
	case OPT_LINES:
		o->lines = true;
		return 0;
	case OPT_GPU:
		if (!arg || !strcmp(arg, "on"))
			o->gpu = CLI_GPU_ON;
		else if (!strcmp(arg, "auto"))
			o->gpu = CLI_GPU_AUTO;
		else if (!strcmp(arg, "off"))
			o->gpu = CLI_GPU_OFF;
		else {
			cli_error("--gpu takes auto, on or off, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_GPU_FLAMEGRAPH:
		if (add_output(o, arg) < 0)
			return -1;
		o->outputs[o->noutputs - 1].gpu = true;
		return 0;
	case OPT_NATIVE_LINES:
		o->native_lines = true;
		return 0;
	case OPT_NATIVE:
		o->native = true;
		return 0;
	case OPT_NATIVE_ALL:
		o->native = true;
		o->native_all = true;
		return 0;
	case OPT_NONBLOCKING:
		o->nonblocking = true;
		return 0;
	case OPT_TRACE_MAX_SLICES: {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-') {
			cli_error("--trace-max-slices takes a number of slices (0: no limit), not '%s'",
				  arg);
			return -1;
		}
		o->trace_max_slices = v;
		return 0;
	}
	case 'q':
		o->quiet = true;
		return 0;
	case 's':
		o->subprocesses = 1;
		return 0;
	case OPT_NO_SUBPROCESSES:
		o->subprocesses = 0;
		return 0;
	case OPT_STACK_BYTES:
		return parse_size(arg, &o->stack_bytes);
	case OPT_UNWIND_QUEUE: {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 1000000) {
			cli_error("--unwind-queue takes a number of copies from 1 to 1000000, not '%s'", arg);
			return -1;
		}
		o->queue_copies = v;
		return 0;
	}
	case OPT_PID:
		return parse_pid(arg, &o->pid);
	case 'h':
		usage(stdout);
		return 1;
	case OPT_VERSION:
		printf("trainsample %s\n", TRAINSAMPLE_VERSION);
		return 1;
	default:
		return -1;
	}
}

static int getopt_loop(int argc, char **argv, const char *shortopts, struct cli_options *o)
{
	int c, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, long_options, NULL)) != -1) {
		if (c == '?' || c == ':') {
			if (optopt && strchr("ofrd", optopt))
				cli_error("option -%c needs a value", optopt);
			else if (optopt)
				cli_error("unknown option -%c", optopt);
			else
				cli_error("unknown or incomplete option '%s'", argv[optind - 1]);
			return -1;
		}
		ret = parse_common(c, optarg, o);
		if (ret)
			return ret;
	}
	return 0;
}

int options_parse_record(int argc, char **argv, bool attach, struct cli_options *o)
{
	int ret;

	defaults(o);
	/* record stops at the command ('+'); attach takes PID anywhere. */
	ret = getopt_loop(argc, argv, attach ? "o:f:r:d:tigqsh" : "+o:f:r:d:tigqsh", o);
	if (ret)
		return ret;
	if (o->top || o->lines) {
		cli_error("--top and --lines are options of diff");
		return -1;
	}
	if (o->process || o->phase) {
		cli_error("--%s is an option of report and diff (a recording keeps every sample)",
			  o->process ? "process" : "phase");
		return -1;
	}
	if (o->summary || o->findings) {
		cli_error("--%s is an option of report: record prints it at the end (unless -q)",
			  o->summary ? "summary" : "findings");
		return -1;
	}
	if (phases_check_options(o) < 0)
		return -1;
	if (attach) {
		if (o->pid) {
			cli_error("attach takes the PID as its argument, not --pid");
			return -1;
		}
		if (optind != argc - 1) {
			cli_error(optind >= argc ? "attach needs a PID" : "attach takes one PID");
			return -1;
		}
		return parse_pid(argv[optind], &o->pid);
	}
	if (o->from_s > 0 || o->to_s >= 0 || o->steps_from) {
		cli_error("--from, --to and --steps are options of report (a recording is cut when rendered)");
		return -1;
	}
	if (optind < argc)
		o->command = argv + optind;
	if (o->command && o->pid) {
		cli_error("give either a command (after --) or --pid, not both");
		return -1;
	}
	if (!o->command && !o->pid) {
		cli_error("record needs a command (record -- CMD ARGS) or --pid PID");
		return -1;
	}
	return 0;
}

/* What report and diff share: the options, the diff-only ones only for
 * diff, and a window that makes sense. The positional arguments are left
 * at optind. */
static int parse_rendering(int argc, char **argv, struct cli_options *o, bool diff)
{
	int ret;

	defaults(o);
	ret = getopt_loop(argc, argv, "o:f:r:d:tigqh", o);
	if (ret)
		return ret;
	if (o->subprocesses >= 0) {
		cli_error("--subprocesses and --no-subprocesses are options of record and attach");
		return -1;
	}
	if (phases_check_options(o) < 0)
		return -1;
	if (!diff && (o->top || o->lines)) {
		cli_error("--top and --lines are options of diff");
		return -1;
	}
	if (o->to_s >= 0 && o->to_s <= o->from_s) {
		cli_error("--to must come after --from");
		return -1;
	}
	if (o->steps_from && (o->from_s > 0 || o->to_s >= 0)) {
		cli_error("give either --steps or --from/--to, not both");
		return -1;
	}
	return 0;
}

int options_parse_report(int argc, char **argv, struct cli_options *o)
{
	int ret = parse_rendering(argc, argv, o, false);

	if (ret)
		return ret;
	if (optind >= argc) {
		cli_error("report needs a .tsprof file");
		return -1;
	}
	/* Several: merged into one profile (several ranks, several machines). */
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	o->input = argv[optind];
	return 0;
}

int options_parse_diff(int argc, char **argv, struct cli_options *o)
{
	int ret = parse_rendering(argc, argv, o, true);

	if (ret)
		return ret;
	if (optind != argc - 2) {
		cli_error("diff takes two recordings: diff OLDER.tsprof NEWER.tsprof [-o DIFF.svg]");
		return -1;
	}
	if (o->phase || o->group_by || o->summary || o->findings || o->ntimes) {
		cli_error("--phase, --group-by, --summary, --findings and --time are options of report: diff compares "
			  "whole recordings (--steps A:B and --phases FILE apply to both)");
		return -1;
	}
	o->baseline = argv[optind];
	o->input = argv[optind + 1];
	if (!o->top)
		o->top = 20;
	/* Lines move between two versions of the code; functions stay. */
	o->by_function = !o->lines;
	return 0;
}
