// SPDX-License-Identifier: MIT
/*
 * Outputs written where another user may be changing the names (issue 30):
 * nothing is checked by name and then used by name again. The folder is
 * reached once, a name at a time (openat with O_NOFOLLOW), and held; the
 * name in it is pinned with O_PATH and looked at (fstat) before anything is
 * opened for writing, and what is opened is that inode. A file is staged
 * beside its name (O_TMPFILE, else O_CREAT | O_EXCL) and renamed onto it
 * within the held folder: a link at the name is replaced, never followed.
 * Where the file system allows, the staged file has no name until it is
 * complete: a run killed with kill -9 leaves nothing behind.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

/* Links followed on the way to one folder, as the kernel's own limit. */
#define LINKS_MAX 40

static bool owner_ok(uid_t uid)
{
	return uid == geteuid() || uid == 0;
}

/* A folder no other user can change a name in: this user's or root's,
 * open to others' writing only with the sticky bit (/tmp). */
static bool folder_trusted(const struct stat *st)
{
	return owner_ok(st->st_uid) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX));
}

struct walk {
	const char *path; /* for messages */
	char *err;
	size_t errlen;
	int links;
	bool trusted;
};

static int walk_fail(struct walk *w, int ret, const char *what)
{
	return errbuf_set(w->err, w->errlen, ret, "cannot write %s: %s: %s", w->path, what,
			  strerror(-ret));
}

/*
 * The folder `dir` names, from the folder `at` (dir relative) or from /,
 * one name at a time, each opened without following a link. A link is
 * followed (its target walked the same way) only when it and the folder
 * holding it are this user's or root's: another user's could point
 * anywhere, and in another user's folder any name can be swapped.
 * Returns an O_PATH descriptor or -errno with err set.
 */
static int walk(struct walk *w, int at, const char *dir)
{
	char name[NAME_MAX + 1];
	struct stat st, in;
	int cur, next, ret;

	if (*dir == '/' || at == AT_FDCWD)
		cur = open(*dir == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else
		cur = fcntl(at, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return walk_fail(w, -errno, *dir == '/' ? "/" : ".");
	if (fstat(cur, &st) < 0) {
		ret = -errno;
		close(cur);
		return walk_fail(w, ret, dir);
	}
	if (!folder_trusted(&st))
		w->trusted = false;
	while (*dir) {
		size_t n = strcspn(dir, "/");

		if (!n) {
			dir++;
			continue;
		}
		if (n > NAME_MAX) {
			close(cur);
			return errbuf_set(w->err, w->errlen, -ENAMETOOLONG, "cannot write %s: a name "
					  "in it is too long", w->path);
		}
		memcpy(name, dir, n);
		name[n] = 0;
		dir += n;
		if (!strcmp(name, "."))
			continue;
		next = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &st) < 0 || fstat(cur, &in) < 0) {
			ret = -errno;
			if (next >= 0)
				close(next);
			close(cur);
			return walk_fail(w, ret, name);
		}
		if (S_ISDIR(st.st_mode)) {
			if (!folder_trusted(&st))
				w->trusted = false;
			close(cur);
			cur = next;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(next);
			close(cur);
			return walk_fail(w, -ENOTDIR, name);
		}
		if (!owner_ok(st.st_uid) || !owner_ok(in.st_uid)) {
			close(next);
			close(cur);
			return errbuf_set(w->err, w->errlen, -EPERM,
					  "cannot write %s: %s is a link %s uid %u owns: not followed "
					  "(name the folder it leads to)", w->path, name,
					  owner_ok(st.st_uid) ? "in a folder" : "that",
					  (unsigned)(owner_ok(st.st_uid) ? in.st_uid : st.st_uid));
		}
		if (++w->links > LINKS_MAX) {
			close(next);
			close(cur);
			return walk_fail(w, -ELOOP, name);
		}
		{
			char *target = malloc(PATH_MAX);
			ssize_t len = target ? readlinkat(next, "", target, PATH_MAX - 1) : -1;

			ret = len < 0 ? -errno : 0;
			close(next);
			if (!ret) {
				target[len] = 0;
				/* The link's own target, from the folder holding it. */
				next = walk(w, cur, target);
			}
			free(target);
			close(cur);
			if (ret)
				return walk_fail(w, ret, name);
			if (next < 0)
				return next;
			cur = next;
		}
	}
	return cur;
}

int file_folder_open(const char *path, bool *trusted, char *err, size_t errlen)
{
	struct walk w = { .path = path, .err = err, .errlen = errlen, .trusted = true };
	int fd = walk(&w, AT_FDCWD, path);

	if (trusted)
		*trusted = fd >= 0 && w.trusted;
	return fd;
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

static const char *kind(mode_t mode)
{
	return S_ISFIFO(mode) ? "FIFO" : S_ISCHR(mode) || S_ISBLK(mode) ? "device"
	       : S_ISSOCK(mode) ? "socket" : "file";
}

/*
 * A FIFO or device written in place: the inode pinned at `at` (O_PATH,
 * checked by the caller) opened for writing through /proc/self/fd, so it
 * is that inode and no other, without blocking where it can; a FIFO with
 * no reader yet is then waited for, as a FIFO is. Where /proc is missing,
 * the name is opened again (never through a link, without blocking) and
 * must be the same inode.
 */
static int open_in_place(struct file_stage *s, int at, const struct stat *was, const char *path,
			 char *err, size_t errlen)
{
	char self[40];
	struct stat st;
	int fd, flags, ret;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
	fd = open(self, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENXIO && S_ISFIFO(was->st_mode))
		fd = open(self, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		fd = openat(s->dir, s->leaf, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW |
			    O_CLOEXEC);
	if (fd < 0)
		return errbuf_set(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_dev != was->st_dev || st.st_ino != was->st_ino ||
	    (st.st_mode & S_IFMT) != (was->st_mode & S_IFMT)) {
		close(fd);
		return errbuf_set(err, errlen, -EAGAIN, "cannot write %s: it changed while it was "
				  "opened (another user's doing?): not written", path);
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		ret = -errno;
		close(fd);
		return errbuf_set(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	s->in_place = true;
	return fd;
}

/* A fresh name beside the output's, ".NAME.XXXXXX", into s->staged. */
static void staged_name(struct file_stage *s, unsigned attempt)
{
	uint64_t r = monotonic_ns() ^ ((uint64_t)getpid() << 32) ^ ((uint64_t)attempt << 20);

	r = r * 6364136223846793005ull + 1442695040888963407ull;
	snprintf(s->staged, sizeof(s->staged), ".%.*s.%06x", NAME_MAX - 9, s->leaf,
		 (unsigned)(r >> 40));
}

/* The staged file: with no name (O_TMPFILE) where the file system has it,
 * else made new (O_EXCL: never an existing file, never through a link). */
static int stage(struct file_stage *s, const char *path, char *err, size_t errlen)
{
	int fd = openat(s->dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);

	s->staged[0] = 0;
	for (unsigned i = 0; fd < 0 && i < 100; i++) {
		staged_name(s, i);
		fd = openat(s->dir, s->staged, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY |
			    O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		s->staged[0] = 0;
		return errbuf_set(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	}
	return fd;
}

static int open_output(struct file_stage *s, const char *path, char *err, size_t errlen)
{
	struct walk w = { .path = path, .err = err, .errlen = errlen, .trusted = true };
	const char *slash = strrchr(path, '/'), *leaf = slash ? slash + 1 : path;
	struct stat st, in;
	char *folder;
	int fd, at;

	memset(s, 0, sizeof(*s));
	s->dir = s->fd = -1;
	fd = own_descriptor(path);
	if (fd >= 0) {
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return errbuf_set(err, errlen, -errno, "cannot write %s: %s", path,
					  strerror(errno));
		s->in_place = true;
		return s->fd = fd;
	}
	if (!*leaf || !strcmp(leaf, ".") || !strcmp(leaf, ".."))
		return errbuf_set(err, errlen, -EISDIR, "cannot write %s: it names a directory", path);
	if (strlen(leaf) > NAME_MAX)
		return errbuf_set(err, errlen, -ENAMETOOLONG, "cannot write %s: name too long", path);
	folder = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!folder)
		return errbuf_set(err, errlen, -ENOMEM, "cannot write %s: out of memory", path);
	s->dir = walk(&w, AT_FDCWD, folder);
	free(folder);
	if (s->dir < 0)
		return s->dir;
	s->open = true;
	snprintf(s->leaf, sizeof(s->leaf), "%s", leaf);
	if (fstat(s->dir, &in) < 0)
		return errbuf_set(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	/* What is at the name now, pinned: what is checked is what is used. */
	at = openat(s->dir, s->leaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (at < 0 && errno != ENOENT)
		return errbuf_set(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	if (at >= 0 && fstat(at, &st) < 0) {
		close(at);
		return errbuf_set(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	}
	if (at >= 0 && S_ISDIR(st.st_mode)) {
		close(at);
		/* Told now, not after the run that was to fill it. */
		return errbuf_set(err, errlen, -EISDIR, "cannot write %s: it is a directory", path);
	}
	if (at >= 0 && S_ISLNK(st.st_mode) && !owner_ok(st.st_uid)) {
		close(at);
		return errbuf_set(err, errlen, -EPERM,
				  "%s is a link owned by another user (uid %u): not followed",
				  path, (unsigned)st.st_uid);
	}
	if (at >= 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		/* In a folder another user owns, only their own FIFO: a device
		 * there could be a link to any device of the machine's. */
		if (!folder_trusted(&in) &&
		    (!S_ISFIFO(st.st_mode) || (st.st_uid != in.st_uid && st.st_uid != geteuid()))) {
			close(at);
			return errbuf_set(err, errlen, -EPERM, "cannot write %s: a %s of uid %u in a "
					  "folder uid %u owns: not written", path, kind(st.st_mode),
					  (unsigned)st.st_uid, (unsigned)in.st_uid);
		}
		fd = open_in_place(s, at, &st, path, err, errlen);
		close(at);
		return fd < 0 ? fd : (s->fd = fd);
	}
	if (at >= 0)
		close(at);
	fd = stage(s, path, err, errlen);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		int ret = -errno;

		close(fd);
		return errbuf_set(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return s->fd = fd;
}

int file_stage_open(struct file_stage *s, const char *path, char *err, size_t errlen)
{
	int fd = open_output(s, path, err, errlen);

	if (fd < 0)
		file_stage_close(s); /* the folder let go, a staged file removed */
	return fd;
}

/* The anonymous file given a fresh name beside the output's (linkat does
 * not replace), in s->staged. */
static int name_anonymous(struct file_stage *s)
{
	char self[40];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", s->fd);
	for (unsigned i = 0; i < 100; i++) {
		staged_name(s, i);
		if (linkat(AT_FDCWD, self, s->dir, s->staged, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno == ENOENT && linkat(s->fd, "", s->dir, s->staged, AT_EMPTY_PATH) == 0)
			return 0;
		if (errno != EEXIST) {
			s->staged[0] = 0;
			return -errno;
		}
	}
	s->staged[0] = 0;
	return -EEXIST;
}

int file_stage_publish(struct file_stage *s, const char *path, char *err, size_t errlen)
{
	const char *leaf;
	struct stat st;
	int ret = 0;

	if (!s->open || s->in_place || s->published)
		return 0;
	/* The name may have been filled in since (a command's {pid}): in
	 * the folder held, whatever its path now names. */
	leaf = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (!*leaf || strlen(leaf) > NAME_MAX)
		ret = errbuf_set(err, errlen, -EINVAL, "cannot write %s: not a file's name", path);
	else
		snprintf(s->leaf, sizeof(s->leaf), "%s", leaf);
	if (!ret && fstatat(s->dir, s->leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
	    !owner_ok(st.st_uid))
		ret = errbuf_set(err, errlen, -EPERM,
				 "%s is a link owned by another user (uid %u): not followed",
				 path, (unsigned)st.st_uid);
	if (!ret && !s->staged[0]) {
		ret = name_anonymous(s);
		if (ret < 0)
			errbuf_set(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	/* Over a link, rename replaces the link itself. */
	if (!ret && renameat(s->dir, s->staged, s->dir, s->leaf) < 0)
		ret = errbuf_set(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	if (ret < 0) {
		if (s->staged[0])
			unlinkat(s->dir, s->staged, 0);
		s->staged[0] = 0;
		return ret;
	}
	s->staged[0] = 0;
	s->published = true;
	return 0;
}

void file_stage_remove(struct file_stage *s)
{
	struct stat st;

	if (!s->open || !s->published)
		return;
	if (fstatat(s->dir, s->leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == s->dev &&
	    st.st_ino == s->ino)
		unlinkat(s->dir, s->leaf, 0);
	s->published = false;
}

void file_stage_close(struct file_stage *s)
{
	if (s->open) {
		/* An anonymous file goes with its descriptor. */
		if (!s->published && s->staged[0])
			unlinkat(s->dir, s->staged, 0);
		close(s->dir);
	}
	memset(s, 0, sizeof(*s));
	s->dir = s->fd = -1;
}
