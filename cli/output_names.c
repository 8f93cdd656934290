// SPDX-License-Identifier: MIT
/*
 * Fields in output names, so that one command line serves every process
 * of a launch (srun, torchrun, mpirun), each writing its own files:
 *   -o prof-{host}-{rank}.tsprof   -o worker-{pid}.svg
 * {host} is this machine's name, {rank} the target's RANK (as torchrun
 * and most launchers set it; 0 when it has none), {pid} the target's PID.
 * Only record and attach fill them in: report and diff refuse them.
 * For a command that is started, its PID exists only once it is: {pid} may
 * then name the file but not its folder (the file is prepared in its
 * folder before the command starts) and is filled in right after.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/common.h"


void target_env_value(pid_t pid, const char *name, char *buf, size_t len)
{
	enum { ENV_MAX = 65536 };
	size_t nlen = strlen(name);
	char *env;
	const char *v;
	char path[64];
	ssize_t n;
	FILE *f;

	buf[0] = 0;
	if (!pid) {
		v = getenv(name);
		snprintf(buf, len, "%s", v ? v : "");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	env = f ? malloc(ENV_MAX) : NULL;
	if (!env) {
		if (f)
			fclose(f);
		return;
	}
	n = (ssize_t)fread(env, 1, ENV_MAX - 1, f);
	fclose(f);
	env[n > 0 ? n : 0] = 0;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(env + i) + 1)
		if (!strncmp(env + i, name, nlen) && env[i + (ssize_t)nlen] == '=') {
			snprintf(buf, len, "%s", env + i + nlen + 1);
			break;
		}
	free(env);
}

/* tmpl with its fields filled in (a {pid} not yet known kept as it is),
 * in *out to free. -EINVAL for a field it does not know, said on stderr. */
static int expand(const char *tmpl, pid_t pid, const char *rank, const char *host, char **out)
{
	size_t braces = 0, room;
	char *s, *w, num[16];

	for (const char *p = tmpl; *p; p++)
		braces += *p == '{';
	/* Each field is replaced by at most the longest value. */
	room = strlen(tmpl) + braces * (strlen(rank) + strlen(host) + sizeof(num)) + 1;
	s = w = malloc(room);
	if (!s)
		return -ENOMEM;
	for (const char *p = tmpl; *p;) {
		const char *close = *p == '{' ? strchr(p, '}') : NULL, *v = NULL;
		size_t flen = close ? (size_t)(close - p) + 1 : 1;

		if (close && flen == 5 && !strncmp(p, "{pid}", 5)) {
			snprintf(num, sizeof(num), "%d", (int)pid);
			v = pid ? num : "{pid}";
		} else if (close && flen == 6 && !strncmp(p, "{rank}", 6)) {
			v = rank;
		} else if (close && flen == 6 && !strncmp(p, "{host}", 6)) {
			v = host;
		} else if (close && flen > 2 && flen < 16) {
			cli_error("-o %s: unknown field %.*s; output names may hold {pid}, {rank} and {host}",
				  tmpl, (int)flen, p);
			free(s);
			return -EINVAL;
		}
		if (!v)
			flen = 1;
		w += snprintf(w, room - (size_t)(w - s), "%.*s", v ? (int)strlen(v) : 1, v ? v : p);
		p += flen;
	}
	*out = s;
	return 0;
}

bool output_name_wants_pid(const char *path)
{
	return strstr(path, "{pid}") != NULL;
}

int output_names_refuse(const struct cli_options *o, const char *cmd)
{
	for (int i = 0; i < o->noutputs; i++)
		if (strchr(o->outputs[i].path, '{') && strchr(o->outputs[i].path, '}')) {
			cli_error("-o %s: {pid}, {rank} and {host} are filled in by record and attach, "
				  "not by %s; name the file", o->outputs[i].path, cmd);
			return -EINVAL;
		}
	return 0;
}

int output_names_expand(struct cli_options *o, pid_t pid)
{
	char host[256] = "", rank[64];

	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		snprintf(host, sizeof(host), "localhost");
	target_env_value(o->command ? 0 : pid, "RANK", rank, sizeof(rank));
	if (!rank[0])
		snprintf(rank, sizeof(rank), "0");
	for (int i = 0; i < o->noutputs; i++) {
		struct output *out = &o->outputs[i];
		const char *slash;
		char *path;
		int ret;

		if (!strchr(out->path, '{'))
			continue;
		ret = expand(out->path, pid, rank, host, &path);
		if (ret < 0)
			return ret;
		slash = strrchr(path, '/');
		if (!pid && slash && memmem(path, (size_t)(slash - path), "{pid}", 5)) {
			cli_error("-o %s: {pid} names the file, not its folder, when a command is started",
				  out->path);
			free(path);
			return -EINVAL;
		}
		if (o->owned_paths & (1u << i))
			free((char *)out->path);
		out->path = path;
		o->owned_paths |= 1u << i;
	}
	return 0;
}
