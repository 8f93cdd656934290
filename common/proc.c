// SPDX-License-Identifier: MIT
/* What /proc says about a process's state. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

int proc_job_stopped(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int stopped = 0, running = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char state;

		if (e->d_name[0] == '.')
			continue;
		state = task_state(pid, e->d_name);
		if (state == 'T')
			stopped++;
		else if (state && state != 'Z' && state != 'X')
			running++; /* a zombie thread never runs again anyway */
	}
	closedir(d);
	return stopped && !running;
}
