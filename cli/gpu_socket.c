// SPDX-License-Identifier: MIT
/*
 * attach's side of the dormant agent's switch, trusting nothing it finds:
 * the folder must be the target user's own (a real directory, theirs, mode
 * 0700: another user could have made it first, as a link or open to all),
 * the socket theirs, and the peer the target process itself (SO_PEERCRED),
 * so no other program can answer for the agent. A conversation has one
 * deadline, however the other end trickles, and only printable text from
 * it reaches the terminal.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/common.h"

#define AGENT_DEADLINE_MS 5000

/* Sockets left by processes that are gone (a dormant process killed
 * before its exit handlers ran), in a folder found trusted. */
static void remove_stale_sockets(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	char path[PATH_MAX];
	pid_t pid;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char name[sizeof(e->d_name)];
		char *dot;

		snprintf(name, sizeof(name), "%s", e->d_name);
		dot = strstr(name, ".sock");
		if (!dot || dot[5])
			continue;
		*dot = 0;
		if (pid_parse(name, &pid) < 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

static int folder_trusted(const char *dir, unsigned uid, char *why, size_t len)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return errbuf_set(why, len, -EPERM, "%s is a link, not the agent's folder", dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077))
		return errbuf_set(why, len, -EPERM, "%s is not uid %u's private folder (owner %u, "
				  "mode %03o)", dir, uid, (unsigned)st.st_uid,
				  (unsigned)(st.st_mode & 0777));
	return 0;
}

int gpu_agent_open(pid_t pid, unsigned uid, char *socket_path, size_t len, char *why,
		   size_t whylen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[64];
	struct ucred peer;
	socklen_t plen = sizeof(peer);
	struct stat st;
	int fd, ret;

	snprintf(dir, sizeof(dir), "/tmp/trainsample-%u", uid);
	snprintf(socket_path, len, "%s/%d.sock", dir, (int)pid);
	ret = folder_trusted(dir, uid, why, whylen);
	if (ret < 0)
		return ret;
	remove_stale_sockets(dir);
	if (lstat(socket_path, &st) < 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != uid)
		return errbuf_set(why, whylen, -EPERM, "%s is not a socket of uid %u", socket_path, uid);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 && errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) < 0 || peer.pid != pid ||
	    peer.uid != uid) {
		close(fd);
		return errbuf_set(why, whylen, -EPERM, "%s is held by process %d, not by %d's own "
				  "agent", socket_path, (int)peer.pid, (int)pid);
	}
	return fd;
}

/* What the agent said, as printable ASCII (all it ever writes): never a
 * control sequence, C1 ones (0x9b, an 8-bit CSI, raw or in UTF-8) too. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

int gpu_agent_say(int fd, const char *command, char *answer, size_t len)
{
	uint64_t deadline = monotonic_ns() + AGENT_DEADLINE_MS * 1000000ull;
	size_t got = 0, sent = 0, want = strlen(command);
	bool closed = false;
	int err = 0;

	/* MSG_NOSIGNAL: the agent may answer and close before reading (a
	 * refusal); its answer is still read. */
	while (!closed && got + 1 < len && !memchr(answer, '\n', got)) {
		uint64_t now = monotonic_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN | (sent < want ? POLLOUT : 0) };
		ssize_t n;

		if (now >= deadline) {
			err = ETIMEDOUT;
			break;
		}
		if (poll(&p, 1, (int)((deadline - now) / 1000000 + 1)) < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		if (sent < want && (p.revents & POLLOUT)) {
			n = send(fd, command + sent, want - sent, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN)
				sent = want, err = errno;
			else if (n > 0)
				sent += (size_t)n;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(fd, answer + got, len - 1 - got);
			if (n > 0)
				got += (size_t)n;
			else if (n == 0 || errno != EAGAIN)
				closed = true;
		}
		answer[got] = 0;
	}
	answer[got] = 0;
	answer[strcspn(answer, "\n")] = 0;
	printable(answer);
	if (!got)
		snprintf(answer, len, "no answer (%s)", err ? strerror(err) : "closed");
	return strcmp(answer, "ok") ? -1 : 0;
}
