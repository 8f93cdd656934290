// SPDX-License-Identifier: MIT
/*
 * Outputs written beside their final name and renamed into place: a reader
 * never sees half a file, and a link planted at the name (say, at the next
 * second's default name in a shared folder) is replaced, never followed to
 * overwrite what it points to.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

/* The name to write: a link of this user's or root's (/dev/stdout) is
 * followed, another user's is refused. */
static int resolve(const char *path, char *real, size_t len, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode)) {
		snprintf(real, len, "%s", path);
		return 0;
	}
	if (st.st_uid != getuid() && st.st_uid != 0)
		return errbuf_set(err, errlen, -EPERM,
				  "%s is a link owned by another user (uid %u): not followed",
				  path, (unsigned)st.st_uid);
	if (!realpath(path, real)) {
		/* A dangling link is not made to create its target. */
		return errbuf_set(err, errlen, errno == ENOENT ? -ENOENT : -errno,
				  "%s is a link to nothing that exists: not followed", path);
	}
	return 0;
}

int file_stage_open(const char *path, char *staged, size_t len, char *err, size_t errlen)
{
	char real[PATH_MAX];
	const char *slash, *base;
	struct stat st;
	mode_t mask;
	int fd, ret;

	staged[0] = 0;
	ret = resolve(path, real, sizeof(real), err, errlen);
	if (ret < 0)
		return ret;
	/* A device or a pipe (/dev/null, a FIFO) is written as it is. */
	if (stat(real, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		fd = open(real, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		return fd < 0 ? errbuf_set(err, errlen, -errno, "cannot write %s: %s", path,
					   strerror(errno)) : fd;
	}
	slash = strrchr(real, '/');
	base = slash ? slash + 1 : real;
	if ((size_t)snprintf(staged, len, "%.*s.%s.XXXXXX", slash ? (int)(base - real) : 0, real,
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

int file_stage_publish(char *staged, const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX];
	int ret;

	if (!staged[0])
		return 0; /* written in place */
	ret = resolve(path, real, sizeof(real), err, errlen);
	if (!ret && rename(staged, real) < 0)
		ret = errbuf_set(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	if (ret < 0)
		unlink(staged);
	staged[0] = 0;
	return ret;
}

void file_stage_discard(char *staged)
{
	if (staged[0])
		unlink(staged);
	staged[0] = 0;
}
