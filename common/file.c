// SPDX-License-Identifier: MIT
/*
 * Outputs written beside their final name and renamed into place: a reader
 * never sees half a file, and a link at the name is replaced, never
 * followed to overwrite what it points to (another user's is refused).
 * Where the file system allows, the file has no name until it is complete
 * (O_TMPFILE, linked in at the end): a run killed with kill -9 leaves
 * nothing behind.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

/* A staged file without a name (O_TMPFILE) is known by its descriptor. */
#define ANONYMOUS_PREFIX "/proc/self/fd/"

/* A link at the name is replaced by the output, never followed; another
 * user's (planted in a shared folder) is refused. */
static int check_link(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
		return 0;
	if (st.st_uid != getuid() && st.st_uid != 0)
		return errbuf_set(err, errlen, -EPERM,
				  "%s is a link owned by another user (uid %u): not followed",
				  path, (unsigned)st.st_uid);
	return 0;
}

/*
 * The process's own descriptors by name (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N): written as they are, like "-". Followed as links
 * they lead to a pipe's name, which exists nowhere, or to the file a
 * shell opened for appending, which a rename would replace.
 */
static int own_descriptor(const char *path)
{
	const char *n = NULL;
	char *end;
	long fd;

	if (!strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	if (!n || !*n)
		return -1;
	fd = strtol(n, &end, 10);
	return *end || fd < 0 || fd > INT_MAX ? -1 : (int)fd;
}

int file_stage_open(const char *path, char *staged, size_t len, char *err, size_t errlen)
{
	const char *slash, *base;
	struct stat st;
	mode_t mask;
	int fd, ret;

	staged[0] = 0;
	fd = own_descriptor(path);
	if (fd >= 0) {
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? errbuf_set(err, errlen, -errno, "cannot write %s: %s", path,
					   strerror(errno)) : fd;
	}
	ret = check_link(path, err, errlen);
	if (ret < 0)
		return ret;
	/* Told now, not after the run that was to fill it. */
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return errbuf_set(err, errlen, -EISDIR, "cannot write %s: it is a directory", path);
	/* A device or a pipe (/dev/null, a FIFO) is written as it is. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		return fd < 0 ? errbuf_set(err, errlen, -errno, "cannot write %s: %s", path,
					   strerror(errno)) : fd;
	}
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if ((size_t)snprintf(staged, len, "%.*s", slash ? (int)(base - path) : 1,
			     slash ? path : ".") < len) {
		fd = open(staged, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
		if (fd >= 0) {
			snprintf(staged, len, ANONYMOUS_PREFIX "%d", fd);
			return fd;
		}
	}
	if ((size_t)snprintf(staged, len, "%.*s.%s.XXXXXX", slash ? (int)(base - path) : 0, path,
			     base) >= len) {
		staged[0] = 0;
		return errbuf_set(err, errlen, -ENAMETOOLONG, "cannot write %s: name too long", path);
	}
	fd = mkostemp(staged, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		staged[0] = 0;
		return errbuf_set(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	/* mkostemp makes it 0600: the mode a plain create would have given. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0) {
		ret = -errno;
		close(fd);
		unlink(staged);
		staged[0] = 0;
		return errbuf_set(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	return fd;
}

/* The anonymous file given a name beside path (a fresh one: linkat does
 * not replace), in named. */
static int name_anonymous(const char *staged, const char *path, char *named, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	uint64_t r = monotonic_ns() ^ ((uint64_t)getpid() << 32);

	for (int i = 0; i < 100; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		if ((size_t)snprintf(named, len, "%.*s.%s.%06x", slash ? (int)(base - path) : 0,
				     path, base, (unsigned)(r >> 40)) >= len)
			return -ENAMETOOLONG;
		if (linkat(AT_FDCWD, staged, AT_FDCWD, named, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int file_stage_publish(char *staged, const char *path, char *err, size_t errlen)
{
	char named[PATH_MAX];
	const char *from = staged;
	int ret;

	if (!staged[0])
		return 0; /* written in place */
	ret = check_link(path, err, errlen);
	if (!ret && !strncmp(staged, ANONYMOUS_PREFIX, strlen(ANONYMOUS_PREFIX))) {
		ret = name_anonymous(staged, path, named, sizeof(named));
		if (ret < 0)
			errbuf_set(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
		from = named;
	}
	/* Over a link, rename replaces the link itself. */
	if (!ret && rename(from, path) < 0) {
		ret = errbuf_set(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
		if (from == named)
			unlink(named);
	}
	if (ret < 0)
		file_stage_discard(staged);
	staged[0] = 0;
	return ret;
}

void file_stage_discard(char *staged)
{
	/* An anonymous file goes with its descriptor. */
	if (staged[0] && strncmp(staged, ANONYMOUS_PREFIX, strlen(ANONYMOUS_PREFIX)))
		unlink(staged);
	staged[0] = 0;
}
