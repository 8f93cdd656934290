// SPDX-License-Identifier: MIT
/* The command line's error and warning lines, one each, on stderr. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("trainsample: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("trainsample: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
