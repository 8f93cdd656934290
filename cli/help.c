// SPDX-License-Identifier: MIT
/*
 * --help and docs/options.md, both printed from the option table
 * (option_table.c): trainsample --help lists every option once, grouped by
 * command; a command's --help lists its own; --help-markdown prints the
 * options page.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Option descriptions start in this column, and wrap before the next. */
#define USAGE_COLUMN 24
#define USAGE_WIDTH 90

/*
 * The groups trainsample --help and the options page show, in order: an
 * option is described in the first group that has it, and named in the
 * next ones. The page's text around each table is its own.
 */
static const struct group {
	unsigned commands;
	const char *title;    /* plain */
	const char *md_title; /* the page's section */
	const char *md_intro; /* the page's text above the table, Markdown */
} groups[] = {
	{ CLI_RECORD | CLI_ATTACH, "record and attach", "`record` and `attach`",
	  "`record [OPTIONS] -- COMMAND [ARG...]`, `record [OPTIONS] --pid PID`,\n"
	  "`attach PID [OPTIONS]`." },
	{ CLI_TOP, "top", "`top`",
	  "`top PID` and `top [OPTIONS] -- COMMAND` sample as `attach` and `record`\n"
	  "do, and draw a live view in the terminal instead of writing files." },
	{ CLI_REPORT, "report", "`report`",
	  "`report IN.tsprof... [OPTIONS]`: several recordings are merged into one\n"
	  "profile. Without `-o` it writes folded stacks to stdout. A `.tsprof`\n"
	  "output re-encodes the recording, which repairs a damaged one." },
	{ CLI_DIFF, "diff", "`diff`",
	  "`diff OLDER.tsprof NEWER.tsprof [OPTIONS]`: `-o FILE.svg` is the\n"
	  "differential flamegraph (optional); the filters, `--steps A:B` and\n"
	  "`--phases FILE` apply to both recordings; a second table compares the\n"
	  "main loops' phases and steps." },
	{ CLI_DUMP, "dump", "`dump`",
	  "`dump --pid PID [OPTIONS]` (or `dump PID [OPTIONS]`): every thread's\n"
	  "stack, once." },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

static const char md_header[] =
	"<!-- Made by `make docs-options` (build/trainsample --help-markdown) from\n"
	"     cli/option_table.c: edit that, not this page. -->\n"
	"# Options\n"
	"\n"
	"Every command's options, one table per command; an option told in an\n"
	"earlier table is only named in the next ones. The commands and what\n"
	"they do are in [usage.md](usage.md); the [README](../README.md) has one\n"
	"example of each. Each command's `--help` lists its own.\n";

static const char md_footer[] =
	"\n"
	"## `env`\n"
	"\n"
	"`env` takes no options. It prints the variable that loads the GPU agent,\n"
	"dormant until `attach` switches it on (see\n"
	"[GPU programs](usage.md#gpu-cuda-programs)).\n";

/* text from column col on, wrapped at spaces before USAGE_WIDTH, the next
 * lines from column indent; then a newline. */
static void put_wrapped(FILE *f, const char *text, size_t col, size_t indent)
{
	size_t start = col;

	while (*text) {
		size_t word = strcspn(text, " ");

		if (col > start && col + 1 + word > USAGE_WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = start = indent;
		} else if (col > start) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, word, f);
		col += word;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

/* The commands of bits, "record and attach" (Markdown: in backquotes). */
static void put_commands(FILE *f, unsigned bits, bool md)
{
	const struct cli_command_info *c;
	unsigned left = bits;

	for (size_t i = 0; (c = cli_command_at(i)); i++) {
		if (!(c->bit & bits))
			continue;
		left &= ~c->bit;
		fprintf(f, "%s%s%s%s", left == bits - c->bit ? "" : left ? ", " : " and ", md ? "`" : "",
			c->name, md ? "`" : "");
	}
}

/* An option's text: its help (its doc on the page), and which of group's
 * commands take it, where not all do. Returned malloc'd; NULL: no memory. */
static char *option_text(const struct cli_option *row, unsigned group, bool md)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	if (row->describe)
		row->describe(m, md);
	else
		fputs(md && row->doc ? row->doc : row->help, m);
	if ((row->commands & group) != group) {
		fputs(" (", m);
		put_commands(m, row->commands & group, md);
		fputs(md ? " only)" : ")", m);
	}
	if (fclose(m) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* "-o, --output FILE", "--gpu[=MODE]" */
static void option_label(const struct cli_option *row, char *buf, size_t len)
{
	int n = row->short_name ? snprintf(buf, len, "-%c, ", row->short_name) : 0;

	snprintf(buf + n, len - (size_t)n, "--%s%s%s%s", row->name,
		 row->arg == CLI_ARG_OPTIONAL ? "[=" : row->arg ? " " : "",
		 row->arg ? row->arg_name : "", row->arg == CLI_ARG_OPTIONAL ? "]" : "");
}

/* "  -o, --output FILE     TEXT", the text wrapped. */
static void put_option(FILE *f, const struct cli_option *row, unsigned group)
{
	char label[64];
	char *text = option_text(row, group, false);
	int n;

	option_label(row, label, sizeof(label));
	n = fprintf(f, "%s%s", row->short_name ? "  " : "      ", label);
	if (n >= 0 && n <= USAGE_COLUMN - 2)
		n += fprintf(f, "%*s", USAGE_COLUMN - n, "");
	else if (n >= 0)
		n += fprintf(f, "  ");
	put_wrapped(f, text ? text : row->help ? row->help : "", n > 0 ? (size_t)n : USAGE_COLUMN,
		    USAGE_COLUMN);
	free(text);
}

static bool in_earlier_group(const struct cli_option *row, size_t g)
{
	for (size_t i = 0; i < g; i++)
		if (row->commands & groups[i].commands)
			return true;
	return false;
}

/* Whether group g has options no earlier group told. */
static bool has_new(size_t g)
{
	const struct cli_option *row;

	for (size_t i = 0; (row = cli_option_at(i)); i++)
		if ((row->commands & groups[g].commands) && !in_earlier_group(row, g))
			return true;
	return false;
}

/* The names of group g's options told in an earlier group, joined by
 * ", "; malloc'd, NULL when there are none (or no memory). */
static char *told_names(size_t g, bool md)
{
	const struct cli_option *row;
	char *text = NULL;
	size_t len = 0, n = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	for (size_t i = 0; (row = cli_option_at(i)); i++)
		if ((row->commands & groups[g].commands) && in_earlier_group(row, g))
			fprintf(m, "%s%s--%s%s", n++ ? ", " : "", md ? "`" : "", row->name, md ? "`" : "");
	if (fclose(m) != 0 || !n) {
		free(text);
		return NULL;
	}
	return text;
}

/* A command's usage lines, "trainsample " before each. */
static void put_synopsis(FILE *f, const struct cli_command_info *c, const char *first,
			 const char *next)
{
	const char *s = c->synopsis;
	bool one = true;

	while (*s) {
		size_t n = strcspn(s, "\n");

		fprintf(f, "%strainsample %.*s\n", one ? first : next, (int)n, s);
		one = false;
		s += n;
		s += *s == '\n';
	}
}

void usage(FILE *f)
{
	const struct cli_command_info *c;
	const struct cli_option *row;

	for (size_t i = 0; (c = cli_command_at(i)); i++) {
		put_synopsis(f, c, i ? "       " : "usage: ", "       ");
		fprintf(f, "%*s", USAGE_COLUMN, "");
		put_wrapped(f, c->what, USAGE_COLUMN, USAGE_COLUMN);
	}
	for (size_t g = 0; g < NGROUPS; g++) {
		char *told = told_names(g, false);

		fprintf(f, "\noptions of %s:\n", groups[g].title);
		if (told) {
			char line[1024];

			snprintf(line, sizeof(line), "as above: %s%s", told, has_new(g) ? "; and:" : "");
			fputs("  ", f);
			put_wrapped(f, line, 2, 2);
		}
		free(told);
		for (size_t i = 0; (row = cli_option_at(i)); i++)
			if ((row->commands & groups[g].commands) && !in_earlier_group(row, g))
				put_option(f, row, groups[g].commands);
	}
	fputs("\nEach command's --help lists its own options; docs/options.md tells more.\n", f);
}

void usage_command(FILE *f, unsigned command)
{
	const struct cli_command_info *c;
	const struct cli_option *row;

	for (size_t i = 0; (c = cli_command_at(i)); i++) {
		if (c->bit != command)
			continue;
		put_synopsis(f, c, "usage: ", "       ");
		put_wrapped(f, c->what, 0, 0);
	}
	fputs("\noptions:\n", f);
	for (size_t i = 0; (row = cli_option_at(i)); i++)
		if (row->commands & command)
			put_option(f, row, command);
}

/* Markdown: a '|' would end the cell. */
static void put_cell(FILE *f, const char *text)
{
	for (; *text; text++) {
		if (*text == '|')
			fputc('\\', f);
		fputc(*text, f);
	}
}

void usage_markdown(FILE *f)
{
	const struct cli_option *row;

	fputs(md_header, f);
	for (size_t g = 0; g < NGROUPS; g++) {
		char *told = told_names(g, true);

		fprintf(f, "\n## %s\n\n%s\n", groups[g].md_title, groups[g].md_intro);
		if (told)
			fprintf(f, "\nAnd, as above: %s.\n", told);
		free(told);
		for (size_t i = 0, n = 0; (row = cli_option_at(i)); i++) {
			char label[64];
			char *text;

			if (!(row->commands & groups[g].commands) || in_earlier_group(row, g))
				continue;
			if (!n++)
				fputs("\n| option | meaning |\n|---|---|\n", f);
			option_label(row, label, sizeof(label));
			text = option_text(row, groups[g].commands, true);
			fprintf(f, "| `%s` | ", label);
			put_cell(f, text ? text : row->help ? row->help : "");
			fputs(" |\n", f);
			free(text);
		}
	}
	fputs(md_footer, f);
}
