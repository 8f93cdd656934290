// SPDX-License-Identifier: MIT
/* Whether a command would run with more privilege than we have, which the
 * kernel withholds from a traced exec unless the tracer may ptrace anyone. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "cli/cli.h"

#define CAP_SYS_PTRACE_BIT 19

/* The file execvp would run: cmd itself when it holds a '/', else the
 * first executable of that name in PATH. */
static int command_file(const char *cmd, char *path, size_t len)
{
	const char *dirs = getenv("PATH"), *end;

	if (strchr(cmd, '/'))
		return (size_t)snprintf(path, len, "%s", cmd) < len ? 0 : -ENAMETOOLONG;
	if (!dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	for (; *dirs; dirs = *end ? end + 1 : end) {
		int n;

		end = strchrnul(dirs, ':');
		n = snprintf(path, len, "%.*s/%s", end > dirs ? (int)(end - dirs) : 1,
			     end > dirs ? dirs : ".", cmd);
		if (n > 0 && (size_t)n < len && access(path, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/* A tracer with CAP_SYS_PTRACE (root) keeps a traced exec's privilege. */
static bool may_ptrace_anyone(void)
{
	char line[256];
	unsigned long long caps;
	bool yes = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			yes = caps >> CAP_SYS_PTRACE_BIT & 1;
			break;
		}
	fclose(f);
	return yes;
}

bool command_loses_privilege(const char *cmd, char *what, size_t len)
{
	char path[PATH_MAX];
	struct stat st;

	if (may_ptrace_anyone() || command_file(cmd, path, sizeof(path)) < 0 ||
	    stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	if (st.st_mode & S_ISUID && st.st_uid != geteuid())
		snprintf(what, len, "setuid");
	else if (st.st_mode & S_ISGID && st.st_mode & S_IXGRP && st.st_gid != getegid())
		snprintf(what, len, "setgid");
	else if (getxattr(path, "security.capability", NULL, 0) > 0)
		snprintf(what, len, "file capability");
	else
		return false;
	return true;
}
