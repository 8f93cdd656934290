// SPDX-License-Identifier: MIT
/* trainsample: subcommand dispatch, and the one place that exits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/*
 * What a command printed on stdout (a summary, a table, a dump) is
 * flushed here, where a full disk or a closed file is still told: a
 * command that lost its output does not end with 0 and nothing said.
 */
static int stdout_checked(int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	cli_error("writing the standard output: %s", errno ? strerror(errno) : "write error");
	return rc ? rc : 1;
}

static int run_command(const char *cmd, int argc, char **argv)
{
	if (!strcmp(cmd, "record"))
		return cmd_record(argc - 1, argv + 1, false);
	if (!strcmp(cmd, "attach"))
		return cmd_record(argc - 1, argv + 1, true);
	if (!strcmp(cmd, "top"))
		return cmd_top(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(cmd, "env"))
		return cmd_env(argc - 1, argv + 1);
	if (!strcmp(cmd, "diff"))
		return cmd_diff(argc - 1, argv + 1);
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc - 1, argv + 1);
	cli_error("unknown command '%s' (try: trainsample --help)", cmd);
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--help-markdown")) {
		/* docs/options.md (make docs-options) */
		usage_markdown(stdout);
		return stdout_checked(0);
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("trainsample %s\n", TRAINSAMPLE_VERSION);
		return stdout_checked(0);
	}
	return stdout_checked(run_command(cmd, argc, argv));
}
