// SPDX-License-Identifier: MIT
/*
 * The dormant agent's control channel: a UNIX socket,
 * /tmp/trainsample-UID/PID.sock, in a folder only its user may enter
 * (created 0700, refused if it is anything else). attach connects and
 * sends "start DIR"; the agent answers "ok" or "error: WHY" and, once
 * collecting, holds the connection as a lease: "stop" on it, or the
 * connection closing (trainsample gone), stops it. Only a peer of the
 * process's own user is obeyed (its credentials are the kernel's,
 * SO_PEERCRED); the thread that serves it sleeps in accept otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cuda/agent/agent.h"

/* MSG_NOSIGNAL: a peer gone already must not SIGPIPE the process. */
static void reply(int fd, const char *text)
{
	char line[400];
	int n = snprintf(line, sizeof(line), "%s\n", text);

	if (send(fd, line, (size_t)n, MSG_NOSIGNAL) != n)
		return;
}

static ssize_t read_line(int fd, char *line, size_t len)
{
	ssize_t n = read(fd, line, len - 1);

	if (n <= 0)
		return n;
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	return n;
}

/* Collecting for this peer until it says stop or goes away. */
static void lease(int fd)
{
	struct timeval forever = { 0 };
	char line[64];
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
	do
		n = read_line(fd, line, sizeof(line));
	while (n < 0 && errno == EINTR);
	agent_collect_stop();
	if (n > 0 && !strcmp(line, "stop"))
		reply(fd, "ok");
	else
		agent_out_unlink(); /* trainsample is gone: nobody reads it */
}

static void serve(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval patience = { .tv_sec = 2 };
	char line[512], why[300], answer[320];

	/* A peer that says nothing does not hold the channel. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid()) {
		reply(fd, "error: only the process's own user may switch its GPU agent");
		return;
	}
	if (read_line(fd, line, sizeof(line)) <= 0)
		return;
	if (!strncmp(line, "start ", 6)) {
		if (agent_collect_start(line + 6, 0, why, sizeof(why)) < 0) {
			/* attach hears why on the socket: the file with the same
			 * words is nobody's (unless collecting went on). */
			if (!agent.collecting)
				agent_out_unlink();
			snprintf(answer, sizeof(answer), "error: %s", why);
			reply(fd, answer);
			return;
		}
		reply(fd, "ok");
		lease(fd);
	} else if (!strcmp(line, "stop")) {
		agent_collect_stop();
		reply(fd, "ok");
	} else {
		reply(fd, "error: unknown command");
	}
}

static void *control_main(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept4(agent.control_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		serve(fd);
		close(fd);
	}
}

/* /tmp/trainsample-UID, made if absent, trusted only if it is a real
 * folder of this user that nobody else may enter. */
static int private_dir(char *dir, size_t len)
{
	struct stat st;

	snprintf(dir, len, "/tmp/trainsample-%u", (unsigned)geteuid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

void agent_control_start(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[64];
	int fd;

	if (private_dir(dir, sizeof(dir)) < 0)
		return;
	snprintf(agent.control_path, sizeof(agent.control_path), "%s/%d.sock", dir, (int)getpid());
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", agent.control_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	unlink(agent.control_path); /* a dead process's, with our pid */
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 4) < 0) {
		close(fd);
		return;
	}
	agent.control_fd = fd;
	if (agent_thread_start(&agent.control, control_main, "trainsample-ctl") < 0) {
		agent_control_stop();
		return;
	}
	pthread_detach(agent.control);
}

void agent_control_stop(void)
{
	if (agent.control_fd < 0)
		return;
	unlink(agent.control_path);
	shutdown(agent.control_fd, SHUT_RDWR);
}
