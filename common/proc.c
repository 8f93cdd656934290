// SPDX-License-Identifier: MIT
/* What /proc says about a process's state. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"

/* The state letter of /proc/PID/task/TID/stat: after the last ')', since
 * the name between parentheses may hold anything. */
static char task_state(pid_t pid, const char *tid)
{
	char path[300], buf[512], *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

int proc_tids(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	struct dirent *e;
	pid_t *v = NULL;
	size_t cnt = 0, cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (ARRAY_RESERVE(v, cap, cnt + 1, 64) < 0) {
			free(v);
			closedir(d);
			return -ENOMEM;
		}
		v[cnt++] = (pid_t)strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	*tids = v;
	*n = cnt;
	return 0;
}

int proc_job_stopped(pid_t pid)
{
	int stopped = 0, running = 0;
	pid_t *tids;
	size_t n;
	int ret = proc_tids(pid, &tids, &n);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		char name[16], state;

		snprintf(name, sizeof(name), "%d", (int)tids[i]);
		state = task_state(pid, name);
		if (state == 'T')
			stopped++;
		else if (state && state != 'Z' && state != 'X')
			running++; /* a zombie thread never runs again anyway */
	}
	free(tids);
	return stopped && !running;
}

/* Long enough for any status file's head: NSpid comes before the
 * signal masks and memory figures, after at most a long Groups line. */
#define STATUS_MAX 8192

int proc_ns_tid(pid_t pid, pid_t tid, pid_t *inner, int *levels)
{
	char path[64], text[STATUS_MAX];
	const char *line, *end;
	ssize_t n;
	int fd, count = 0;
	pid_t last = tid;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	text[n] = '\0';
	*inner = tid;
	*levels = 1;
	line = strstr(text, "\nNSpid:");
	if (!line)
		return 0;
	end = strchr(line + 1, '\n');
	if (!end)
		return -EIO; /* cut short: the last field may be too */
	for (const char *s = line + 7; s < end; s++) {
		char *after;
		long v;

		if (*s < '0' || *s > '9' || (s[-1] >= '0' && s[-1] <= '9'))
			continue;
		v = strtol(s, &after, 10);
		if (after > end || v <= 0 || v > INT_MAX)
			return -EIO;
		last = (pid_t)v;
		count++;
	}
	if (!count)
		return -EIO;
	*inner = last;
	*levels = count;
	return 0;
}

int proc_status_field(pid_t pid, const char *field, char *buf, size_t len)
{
	char path[64], line[512];
	size_t flen = strlen(field);
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *v;

		if (strncmp(line, field, flen) != 0 || line[flen] != ':')
			continue;
		v = line + flen + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int proc_command_line(pid_t pid, char *buf, size_t len)
{
	char path[64], raw[1024], *arg0, *slash;
	size_t n = 0, at = 0;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = read(fd, raw, sizeof(raw) - 1);
	close(fd);
	if (got <= 0 || !len)
		return got < 0 ? -errno : -ENOENT;
	raw[got] = '\0';
	arg0 = raw;
	slash = strrchr(arg0, '/');
	if (slash)
		at = (size_t)(slash + 1 - raw);
	while (at < (size_t)got && n + 1 < len) {
		char c = raw[at++];

		buf[n++] = c ? c : ' ';
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return n ? 0 : -ENOENT;
}
