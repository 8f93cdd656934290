// SPDX-License-Identifier: MIT
/*
 * The command line's parsing: getopt's arrays made from the option table
 * (option_table.c), then what each command checks of the whole.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"

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

int options_parse_pid(const char *s, pid_t *out)
{
	if (pid_parse(s, out) < 0) {
		cli_error("'%s' is not a process id", s);
		return -1;
	}
	return 0;
}

/* The table has fewer rows than this; getopt's arrays are this long. */
#define OPTIONS_MAX 64

/*
 * getopt's arrays for a command: every option of the family it belongs to
 * (record, attach, top, report and diff parse alike, and refuse the
 * options that are not theirs after, saying why; dump parses its own), a
 * name once. A long option's val is its row + 256, a short one's its letter.
 */
struct getopt_arrays {
	struct option longs[OPTIONS_MAX + 1];
	const struct cli_option *rows[OPTIONS_MAX];
	char shorts[3 * OPTIONS_MAX + 2];
	char need_value[OPTIONS_MAX + 1]; /* short options that take one */
};

static unsigned family_of(unsigned command)
{
	return command & CLI_DUMP ? CLI_DUMP : CLI_SAMPLING | CLI_RENDERING;
}

/* Two rows of one family with one name must parse alike, and a letter
 * names one option: a table that breaks this is refused, said. */
static bool same_parse(const struct cli_option *x, const struct cli_option *y)
{
	return x->short_name == y->short_name && x->arg == y->arg && x->apply == y->apply &&
	       x->field == y->field;
}

static int make_arrays(unsigned command, bool in_order, struct getopt_arrays *a)
{
	unsigned family = family_of(command);
	const struct cli_option *row;
	size_t n = 0, ns = 0, nv = 0;

	memset(a, 0, sizeof(*a));
	if (in_order)
		a->shorts[ns++] = '+';
	for (size_t i = 0; (row = cli_option_at(i)); i++) {
		const struct cli_option *twin = NULL;

		if (!(row->commands & family))
			continue;
		for (size_t j = 0; j < n; j++) {
			if (!strcmp(a->rows[j]->name, row->name) ||
			    (row->short_name && a->rows[j]->short_name == row->short_name))
				twin = a->rows[j];
		}
		if (twin && (strcmp(twin->name, row->name) || !same_parse(twin, row))) {
			cli_error("option table: --%s and --%s clash (cli/option_table.c)", twin->name,
				  row->name);
			return -EINVAL;
		}
		if (twin)
			continue;
		if (n == OPTIONS_MAX) {
			cli_error("option table: more than %d options (cli/options.c)", OPTIONS_MAX);
			return -EINVAL;
		}
		a->rows[n] = row;
		a->longs[n] = (struct option){ row->name,
					       row->arg == CLI_ARG_NONE	    ? no_argument
					       : row->arg == CLI_ARG_OPTIONAL ? optional_argument
									      : required_argument,
					       NULL, (int)n + 256 };
		if (row->short_name) {
			a->shorts[ns++] = row->short_name;
			if (row->arg != CLI_ARG_NONE)
				a->shorts[ns++] = ':';
			if (row->arg == CLI_ARG_OPTIONAL)
				a->shorts[ns++] = ':';
			if (row->arg == CLI_ARG_REQUIRED)
				a->need_value[nv++] = row->short_name;
		}
		n++;
	}
	return 0;
}

static int apply(const struct cli_option *row, const char *arg, struct cli_options *o)
{
	int ret;

	if (row->apply) {
		ret = row->apply(o, arg);
		return ret < 0 ? -1 : ret;
	}
	if (row->arg == CLI_ARG_NONE)
		*(bool *)((char *)o + row->field) = true;
	else
		*(const char **)((char *)o + row->field) = arg;
	return 0;
}

/* Returns 1 for help/version, -1 on error (said: bad_usage, where given,
 * for any mistake getopt finds). */
static int getopt_loop(int argc, char **argv, unsigned command, bool in_order,
		       const char *bad_usage, struct cli_options *o)
{
	struct getopt_arrays a;
	int c, ret;

	if (make_arrays(command, in_order, &a) < 0)
		return -1;
	o->parsing = command;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, a.shorts, a.longs, NULL)) != -1) {
		const struct cli_option *row = NULL;

		if (c == '?' || c == ':') {
			if (bad_usage)
				cli_error("%s", bad_usage);
			else if (optopt >= 256 && a.rows[optopt - 256]->arg == CLI_ARG_NONE)
				cli_error("option --%s takes no value", a.rows[optopt - 256]->name);
			else if (optopt >= 256)
				cli_error("option --%s needs a value", a.rows[optopt - 256]->name);
			else if (optopt && strchr(a.need_value, optopt))
				cli_error("option -%c needs a value", optopt);
			else if (optopt)
				cli_error("unknown option -%c", optopt);
			else
				cli_error("unknown or incomplete option '%s'", argv[optind - 1]);
			return -1;
		}
		if (c >= 256)
			row = a.rows[c - 256];
		for (size_t i = 0; !row && a.rows[i]; i++)
			if (a.rows[i]->short_name == c)
				row = a.rows[i];
		if (!row)
			return -1;
		ret = apply(row, optarg, o);
		if (ret)
			return ret;
	}
	return 0;
}

int options_parse_record(int argc, char **argv, unsigned command, bool attach,
			 struct cli_options *o)
{
	int ret;

	defaults(o);
	/* record stops at the command ('+'); attach takes PID anywhere. */
	ret = getopt_loop(argc, argv, command, !attach, NULL, o);
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
	if (o->summary || o->findings || o->ranks) {
		cli_error("--%s is an option of report: record prints it at the end (unless -q)",
			  o->summary ? "summary" : o->findings ? "findings" : "ranks");
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
		return options_parse_pid(argv[optind], &o->pid);
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
	ret = getopt_loop(argc, argv, diff ? CLI_DIFF : CLI_REPORT, false, NULL, o);
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
	if (o->phase || o->group_by || o->summary || o->findings || o->ranks || o->ntimes) {
		cli_error("--phase, --group-by, --summary, --findings, --ranks and --time are options of report: diff compares "
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

int options_parse_dump(int argc, char **argv, struct cli_options *o)
{
	int ret;

	defaults(o);
	ret = getopt_loop(argc, argv, CLI_DUMP, false,
			  "dump takes --pid PID [--native | --native-all] [--nonblocking] [--locals] [--json]",
			  o);
	if (ret)
		return ret;
	if (optind < argc && !o->pid) {
		/* dump PID, as attach takes it */
		if (options_parse_pid(argv[optind], &o->pid) < 0)
			return -1;
		optind++;
	}
	if (!o->pid || optind < argc) {
		cli_error(o->pid ? "dump takes one process" : "dump needs --pid PID");
		return -1;
	}
	return 0;
}
