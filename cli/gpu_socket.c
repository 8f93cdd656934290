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
#include <fcntl.h>
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
 * before its exit handlers ran), in the folder held open and found
 * trusted: removed in it, never by a path its owner could have changed. */
static void remove_stale_sockets(int dir)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;
	pid_t pid;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
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
		if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode))
			unlinkat(dir, e->d_name, 0);
	}
	closedir(d);
}

/* The agent's folder, held open (never through a link) and checked as
 * it was opened: the descriptor, or -errno with why set. */
static int folder_trusted(const char *dir, unsigned uid, char *why, size_t len)
{
	struct stat st;
	int fd = open(dir, O_PATH | O_NOFOLLOW | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (S_ISLNK(st.st_mode)) {
		close(fd);
		return errbuf_set(why, len, -EPERM, "%s is a link, not the agent's folder", dir);
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077)) {
		close(fd);
		return errbuf_set(why, len, -EPERM, "%s is not uid %u's private folder (owner %u, "
				  "mode %03o)", dir, uid, (unsigned)st.st_uid,
				  (unsigned)(st.st_mode & 0777));
	}
	return fd; /* O_PATH: enough to work in, and to list through "." */
}

int gpu_agent_open(pid_t pid, unsigned uid, char *socket_path, size_t len, char *why,
		   size_t whylen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[64];
	struct ucred peer;
	socklen_t plen = sizeof(peer);
	struct stat st;
	int fd, dfd, ret;
	char name[32];

	snprintf(dir, sizeof(dir), "/tmp/trainsample-%u", uid);
	snprintf(socket_path, len, "%s/%d.sock", dir, (int)pid);
	dfd = folder_trusted(dir, uid, why, whylen);
	if (dfd < 0)
		return dfd;
	remove_stale_sockets(dfd);
	snprintf(name, sizeof(name), "%d.sock", (int)pid);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != uid) {
		close(dfd);
		return errbuf_set(why, whylen, -EPERM, "%s is not a socket of uid %u", socket_path, uid);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	/* Through the folder held (its peer is checked below either way). */
	snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d/%s", dfd, name);
	ret = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ? -errno : 0;
	if (ret == -ENOENT) {
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path);
		ret = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ? -errno : 0;
	}
	close(dfd);
	if (ret < 0 && ret != -EINPROGRESS) {
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
