// SPDX-License-Identifier: MIT
/* Output format names and file extensions. */
#include <string.h>
#include <strings.h>

#include "formats/formats.h"

struct format_name {
	const char *name;
	enum output_format format;
};

/* Names and aliases that -f accepts; the first of each is its own name. */
static const struct format_name format_names[] = {
	{ "folded", OUTPUT_FOLDED },
	{ "txt", OUTPUT_FOLDED },
	{ "collapsed", OUTPUT_FOLDED },
	{ "tsprof", OUTPUT_TSPROF },
	{ "raw", OUTPUT_TSPROF },
	{ "svg", OUTPUT_SVG },
	{ "flamegraph", OUTPUT_SVG },
	{ "speedscope", OUTPUT_SPEEDSCOPE },
	{ "pprof", OUTPUT_PPROF },
	{ "trace", OUTPUT_TRACE },
	{ "chrome", OUTPUT_TRACE },
	{ "perfetto", OUTPUT_TRACE },
};

static const struct format_name format_extensions[] = {
	{ "folded", OUTPUT_FOLDED },
	{ "txt", OUTPUT_FOLDED },
	{ "tsprof", OUTPUT_TSPROF },
	{ "svg", OUTPUT_SVG },
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static enum output_format lookup(const struct format_name *table, size_t n,
				 const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(table[i].name, name))
			return table[i].format;
	return OUTPUT_UNKNOWN;
}

enum output_format output_format_parse(const char *name)
{
	if (!name)
		return OUTPUT_UNKNOWN;
	return lookup(format_names, COUNT(format_names), name);
}

enum output_format output_format_from_path(const char *path)
{
	const char *base, *dot;

	if (!path)
		return OUTPUT_UNKNOWN;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* Two-part extensions first. */
	if (strlen(base) > 16 && !strcasecmp(base + strlen(base) - 16, ".speedscope.json"))
		return OUTPUT_SPEEDSCOPE;
	if (strlen(base) > 6 && !strcasecmp(base + strlen(base) - 6, ".pb.gz"))
		return OUTPUT_PPROF;
	if (strlen(base) > 11 && !strcasecmp(base + strlen(base) - 11, ".trace.json"))
		return OUTPUT_TRACE;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		return OUTPUT_UNKNOWN;
	return lookup(format_extensions, COUNT(format_extensions), dot + 1);
}

const char *output_format_name(enum output_format f)
{
	switch (f) {
	case OUTPUT_FOLDED:
		return "folded";
	case OUTPUT_TSPROF:
		return "tsprof";
	case OUTPUT_SVG:
		return "flamegraph";
	case OUTPUT_SPEEDSCOPE:
		return "speedscope";
	case OUTPUT_PPROF:
		return "pprof";
	case OUTPUT_TRACE:
		return "trace";
	case OUTPUT_UNKNOWN:
		break;
	}
	return "unknown";
}

const char *output_format_extension(enum output_format f)
{
	switch (f) {
	case OUTPUT_FOLDED:
		return "folded";
	case OUTPUT_TSPROF:
		return "tsprof";
	case OUTPUT_SVG:
		return "svg";
	case OUTPUT_SPEEDSCOPE:
		return "speedscope.json";
	case OUTPUT_PPROF:
		return "pb.gz";
	case OUTPUT_TRACE:
		return "trace.json";
	case OUTPUT_UNKNOWN:
		break;
	}
	return NULL;
}
