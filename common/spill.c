// SPDX-License-Identifier: MIT
/*
 * Records kept on disk rather than in memory: fixed-size records appended
 * to an anonymous temporary file (in $TMPDIR, else /tmp) and read back in
 * order. A long run's timeline grows with its length; this keeps the
 * profiler's memory at one buffer however long it runs. The file has no
 * name, so nothing is left behind whatever happens to the process.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/common.h"

#define SPILL_BUFFER_BYTES (256u << 10)

struct spill {
	size_t size;         /* of a record */
	uint8_t *buf;
	size_t nbuf, capbuf; /* records in buf, and room for */
	int fd;              /* -1 until the buffer first fills */
	uint64_t written;    /* records in the file */
};

static int temp_folder_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd < 0 ? -errno : fd;
	/* A file system without O_TMPFILE: a named file, removed at once. */
	if ((size_t)snprintf(path, sizeof(path), "%s/.trainsample-spill.XXXXXX", dir) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

int spill_new(struct spill **out, size_t record_size)
{
	struct spill *s;

	if (!out || !record_size || record_size > SPILL_BUFFER_BYTES)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->size = record_size;
	s->capbuf = SPILL_BUFFER_BYTES / record_size;
	s->fd = -1;
	*out = s;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n, off_t at)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, at);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w, n -= (size_t)w, at += w;
	}
	return 0;
}

static int spill_flush(struct spill *s)
{
	int ret;

	if (!s->nbuf)
		return 0;
	if (s->fd < 0) {
		s->fd = temp_folder_open();
		if (s->fd < 0) {
			ret = s->fd;
			s->fd = -1;
			return ret;
		}
	}
	ret = write_all(s->fd, s->buf, s->nbuf * s->size, (off_t)(s->written * s->size));
	if (ret < 0)
		return ret;
	s->written += s->nbuf;
	s->nbuf = 0;
	return 0;
}

int spill_append(struct spill *s, const void *record)
{
	int ret;

	if (!s->buf) {
		s->buf = malloc(s->capbuf * s->size);
		if (!s->buf)
			return -ENOMEM;
	}
	if (s->nbuf == s->capbuf && (ret = spill_flush(s)) < 0)
		return ret;
	memcpy(s->buf + s->nbuf * s->size, record, s->size);
	s->nbuf++;
	return 0;
}

uint64_t spill_count(const struct spill *s)
{
	return s ? s->written + s->nbuf : 0;
}

int spill_for_each(const struct spill *s, int (*fn)(const void *record, void *ctx), void *ctx)
{
	size_t block = s->capbuf * s->size;
	uint8_t *tmp = NULL;
	uint64_t done = 0;
	int ret = 0;

	if (s->written && !(tmp = malloc(block)))
		return -ENOMEM;
	while (done < s->written && !ret) {
		uint64_t n = s->written - done < s->capbuf ? s->written - done : s->capbuf;
		size_t got = 0, want = (size_t)n * s->size;

		while (got < want) {
			ssize_t r = pread(s->fd, tmp + got, want - got,
					  (off_t)(done * s->size + got));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				free(tmp);
				return r < 0 ? -errno : -EIO;
			}
			got += (size_t)r;
		}
		for (uint64_t i = 0; i < n && !ret; i++)
			ret = fn(tmp + i * s->size, ctx);
		done += n;
	}
	free(tmp);
	for (size_t i = 0; i < s->nbuf && !ret; i++)
		ret = fn(s->buf + i * s->size, ctx);
	return ret;
}

void spill_free(struct spill *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s);
}
