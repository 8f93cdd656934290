// SPDX-License-Identifier: MIT
/* --help: what each command takes. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Option descriptions start in this column, and wrap before the next. */
#define USAGE_COLUMN 24
#define USAGE_WIDTH 90

/* text from USAGE_COLUMN on, wrapped at spaces; a '\n' in it breaks the line. */
static void put_wrapped(FILE *f, const char *text)
{
	size_t col = USAGE_COLUMN;

	while (*text) {
		size_t word = strcspn(text, " \n");

		if (col > USAGE_COLUMN && col + 1 + word > USAGE_WIDTH) {
			fprintf(f, "\n%*s", USAGE_COLUMN, "");
			col = USAGE_COLUMN;
		} else if (col > USAGE_COLUMN) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, word, f);
		col += word;
		text += word;
		if (*text == '\n') {
			fprintf(f, "\n%*s", USAGE_COLUMN, "");
			col = USAGE_COLUMN;
		}
		text += strspn(text, " \n");
	}
	fputc('\n', f);
}

/* -o's text: every extension the table knows, and what it holds. */
static void describe_output(FILE *f)
{
	const struct output_writer *w;
	size_t defaults = 0;

	fputs("write FILE; the format comes from the extension: ", f);
	for (size_t i = 0; (w = output_writer_at(i)); i++) {
		fputs(i ? ", " : "", f);
		for (size_t j = 0; j < OUTPUT_EXTENSIONS_MAX && w->extensions[j]; j++) {
			bool last = j + 1 == OUTPUT_EXTENSIONS_MAX || !w->extensions[j + 1];

			fprintf(f, "%s.%s", !j ? "" : last ? " or " : ", ", w->extensions[j]);
		}
		if (w->contents)
			fprintf(f, " (%s)", w->contents);
	}
	fputs("; repeatable; '-' is stdout.\nDefault:", f);
	for (size_t i = 0; (w = output_writer_at(i)); i++)
		if (w->record_default)
			fprintf(f, defaults++ ? " and .%s" : " NAME-YYYYmmdd-HHMMSS.%s", w->extensions[0]);
}

/* -f's text: every format's name. */
static void describe_format(FILE *f)
{
	char names[256];

	output_writers_list(names, sizeof(names), false, ", ", " or ");
	fprintf(f, "%s, for outputs whose name does not say", names);
}

/* "  OPTION   DESCRIPTION", the description wrapped. */
static void put_option(FILE *f, const char *option, void (*describe)(FILE *f))
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	fprintf(f, "  %-*s", USAGE_COLUMN - 2, option);
	if (!m) {
		describe(f); /* unwrapped, rather than not at all */
		fputc('\n', f);
		return;
	}
	describe(m);
	if (fclose(m) == 0)
		put_wrapped(f, text);
	else
		fputc('\n', f);
	free(text);
}

void usage(FILE *f)
{
	fputs(
"usage: trainsample record [OPTIONS] -- COMMAND [ARG...]   start COMMAND and profile it\n"
"       trainsample record [OPTIONS] --pid PID             profile a running process\n"
"       trainsample attach PID [OPTIONS]                   the same as record --pid PID\n"
"       trainsample top PID | top [OPTIONS] -- COMMAND    a live view, redrawn every second:\n"
"                                                 phases, threads, the hottest functions;\n"
"                                                 keys 1-4 sort, p process, t thread, q quit\n"
"       trainsample report IN.tsprof... [-o OUT] [-f FORMAT]  render saved recordings again\n"
"       trainsample diff OLDER.tsprof NEWER.tsprof [-o DIFF.svg]\n"
"                                                 the largest changes, and a differential\n"
"                                                 flamegraph (red grew, blue shrank)\n"
"       trainsample dump --pid PID [--native | --native-all] [--nonblocking]\n"
"                                 [--locals] [--json]\n"
"                                                 print every thread's stack once\n"
"       trainsample env                                    the variable that loads the GPU\n"
"                                                 agent, dormant until attach switches it on\n"
"\n"
"options of record and attach:\n",
	      f);
	put_option(f, "-o, --output FILE", describe_output);
	put_option(f, "-f, --format FORMAT", describe_format);
	fputs(
"  -r, --rate HZ         samples per second (default 100)\n"
"  -d, --duration SEC    stop after SEC seconds (fractions allowed; default: until\n"
"                        Ctrl-C or the process exits); a command started is then\n"
"                        ended: SIGINT, then SIGTERM and SIGKILL 2 s apart\n"
"  -s, --subprocesses    follow child processes too (DataLoader workers, multiprocessing,\n"
"                        torchrun's ranks): those alive at attach and each one started;\n"
"                        record -- CMD does by default\n"
"      --no-subprocesses record -- CMD: the command's own process only\n"
"  -t, --threads         a 'thread TID (name)' root frame per thread\n"
"  -i, --idle            keep samples of every thread blocked in the kernel, and show\n"
"                        them all in the flamegraph and folded stacks\n"
"      --no-idle         drop them all. Default: those of Python threads only,\n"
"                        ending in '[idle: SYSCALL]' (a wait on a queue, a lock, .item());\n"
"                        the flamegraph and folded stacks show the training loop's waits\n"
"      --native          Python targets: native frames too, each evaluator frame\n"
"                        replaced by the Python frames it ran (stops running threads);\n"
"                        the interpreter's own frames above the innermost Python\n"
"                        frame are hidden\n"
"      --native-all      --native, keeping the interpreter's frames between Python's\n"
"  -g, --gil             only samples of the thread holding Python's GIL\n"
"  --nonblocking         Python: never stop a thread, not even the GIL holder for\n"
"                        its walk; its stacks may then be torn (counted in --stats)\n"
"      --function        Python frames by function, without line numbers\n"
"      --full-filenames  Python files with their whole path (default: below\n"
"                        site-packages/, the standard library or the script's folder)\n"
"      --inverted        flamegraph as an icicle: the outermost frames on top\n"
"      --native-lines    native frames as 'function (file:line)', from debug info\n"
"      --phases FILE     training-phase rules added to the built-in ones: a line\n"
"                        'PHASE FUNCTION [FILE]' or 'PHASE thread:NAME' (shell patterns)\n"
"      --group-by phase  a '[phase: NAME]' root per training phase (data, forward,\n"
"                        backward, optimizer, sync, checkpoint, eval, logging, other)\n"
"      --time FUNC       each call's duration at the end: count, p50, p90, max, total\n"
"                        (FUNC as outputs name it, Class.method, or FILE:LINE; repeatable)\n"
"      --trace-max-slices N  the most CPU slices a .trace.json holds (default\n"
"                        1000000, 0: no limit); past it the shortest are left out\n"
"      --gpu[=MODE]      auto (default): CUDA programs get the GPU agent (kernels, copies,\n"
"                        launch stacks); on: the same, saying why when it cannot; off\n"
"      --gpu-flamegraph FILE.svg  GPU time on the Python stacks that launched it\n"
"                        (an .svg output named gpu.svg is one too)\n"
"      --stack-bytes N   bytes of stack copied per sample (default 64K; K and M suffixes)\n"
"      --unwind-queue N  copies that may wait to be unwound (default: 32 MiB of them);\n"
"                        when unwinding falls behind, new samples are dropped and counted\n"
"      --pid PID         profile a running process (a thread id names its process)\n"
"      --stats           print sampling statistics at the end\n"
"  -q, --quiet           no progress line and no summary\n"
"  -h, --help            this text\n"
"      --version         print the version\n"
"\n"
"options of report: -o/--output, -f/--format, -t/--threads, -i/--idle, --no-idle,\n"
"  -g/--gil, --function, --full-filenames, --inverted, --trace-max-slices, -q, and filters: --pid PID, --tid TID,\n"
"  --thread NAME, --process LABEL ('rank 0', 'DataLoader worker 1', or a prefix of\n"
"  words: 'DataLoader worker'), --phase NAME, --from SEC, --to SEC (seconds after the\n"
"  first sample), --steps A:B (steps A to B of the main loop, from 1; A: from A on);\n"
"  and --phases FILE, --group-by phase, --time FUNC, --summary (the lines record ends\n"
"  with: per process, its threads, phases and steps; alone, on stdout and no picture),\n"
"  --findings (every bottleneck found, with its evidence and a hint)\n"
"\n"
"options of diff: those of report, and --top N (rows of the table, default 20),\n"
"  --lines (Python frames by line; by default by function, as lines move between\n"
"  versions of the code); a second table compares the main loops' phases and steps\n",
	      f);
}
