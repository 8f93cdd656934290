// SPDX-License-Identifier: MIT
/*
 * Records kept on disk rather than in memory: fixed-size records appended
 * to an anonymous temporary file (in $TMPDIR, else /tmp) and read back in
 * order. A long run's timeline grows with its length; this keeps the
 * profiler's memory at one buffer however long it runs. The file has no
 * name, so nothing is left behind whatever happens to the process.
 *
 * Records can also be read back sorted, by an external merge sort: runs of
 * SORT_RUN_BYTES sorted in memory and written to a second unnamed file,
 * then merged through a small buffer per run, so sorting millions of
 * records costs a few MiB.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/common.h"

#define SPILL_BUFFER_BYTES (256u << 10)
#define SORT_RUN_BYTES (8u << 20)
#define MERGE_BUFFER_BYTES (16u << 10)

struct spill {
	size_t size;         /* of a record */
	uint8_t *buf;
	size_t nbuf, capbuf; /* records in buf, and room for */
	int fd;              /* -1 until the buffer first fills */
	uint64_t written;    /* records in the file */
};

int temp_file_open(void)
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
		s->fd = temp_file_open();
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

static int read_all(int fd, uint8_t *p, size_t n, off_t at)
{
	while (n) {
		ssize_t r = pread(fd, p, n, at);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r, n -= (size_t)r, at += r;
	}
	return 0;
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

		ret = read_all(s->fd, tmp, (size_t)n * s->size, (off_t)(done * s->size));
		if (ret < 0)
			break;
		for (uint64_t i = 0; i < n && !ret; i++)
			ret = fn(tmp + i * s->size, ctx);
		done += n;
	}
	free(tmp);
	for (size_t i = 0; i < s->nbuf && !ret; i++)
		ret = fn(s->buf + i * s->size, ctx);
	return ret;
}

/* Records [from, from + n) into dst, from the file or the buffer. */
static int get_records(const struct spill *s, uint64_t from, uint64_t n, uint8_t *dst)
{
	if (from < s->written) {
		uint64_t k = s->written - from < n ? s->written - from : n;
		int ret = read_all(s->fd, dst, (size_t)k * s->size, (off_t)(from * s->size));

		if (ret < 0)
			return ret;
		from += k, n -= k, dst += k * s->size;
	}
	if (n)
		memcpy(dst, s->buf + (from - s->written) * s->size, (size_t)n * s->size);
	return 0;
}

struct run_cursor {
	uint64_t next, end; /* records of the runs' file still to read */
	uint8_t *buf;
	size_t have, pos;
};

struct merge {
	const struct spill *s;
	int fd; /* the sorted runs */
	struct run_cursor *c;
	uint32_t *heap, nheap;
	size_t per_buffer; /* records */
	int (*cmp)(const void *a, const void *b);
};

static const void *cursor_record(const struct merge *m, uint32_t i)
{
	return m->c[i].buf + m->c[i].pos * m->s->size;
}

static bool heap_less(const struct merge *m, uint32_t a, uint32_t b)
{
	int d = m->cmp(cursor_record(m, m->heap[a]), cursor_record(m, m->heap[b]));

	return d < 0;
}

static void heap_down(struct merge *m, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, min = i, tmp;

		if (l < m->nheap && heap_less(m, l, min))
			min = l;
		if (r < m->nheap && heap_less(m, r, min))
			min = r;
		if (min == i)
			return;
		tmp = m->heap[i], m->heap[i] = m->heap[min], m->heap[min] = tmp;
		i = min;
	}
}

/* The cursor's next record in its buffer; 1 when the run is done. */
static int cursor_fill(struct merge *m, struct run_cursor *c)
{
	uint64_t n;
	int ret;

	if (++c->pos < c->have)
		return 0;
	if (c->next == c->end)
		return 1;
	n = c->end - c->next < m->per_buffer ? c->end - c->next : m->per_buffer;
	ret = read_all(m->fd, c->buf, (size_t)n * m->s->size, (off_t)(c->next * m->s->size));
	if (ret < 0)
		return ret;
	c->next += n, c->have = (size_t)n, c->pos = 0;
	return 0;
}

/* Sorted runs of `per_run` records into m->fd. */
static int write_runs(struct merge *m, uint64_t total, uint64_t per_run, uint32_t nruns)
{
	const struct spill *s = m->s;
	uint8_t *block = malloc((size_t)per_run * s->size);
	int ret = block ? 0 : -ENOMEM;

	for (uint32_t r = 0; r < nruns && !ret; r++) {
		uint64_t from = r * per_run, n = total - from < per_run ? total - from : per_run;

		ret = get_records(s, from, n, block);
		if (ret < 0)
			break;
		array_sort(block, (size_t)n, s->size, m->cmp);
		ret = write_all(m->fd, block, (size_t)n * s->size, (off_t)(from * s->size));
		m->c[r] = (struct run_cursor){ .next = from, .end = from + n };
	}
	free(block);
	return ret;
}

int spill_for_each_sorted(const struct spill *s, int (*cmp)(const void *a, const void *b),
			  int (*fn)(const void *record, void *ctx), void *ctx)
{
	uint64_t total = spill_count(s), per_run = SORT_RUN_BYTES / s->size;
	struct merge m = { .s = s, .fd = -1, .cmp = cmp };
	uint32_t nruns;
	int ret;

	if (per_run < s->capbuf)
		per_run = s->capbuf;
	if (!total)
		return 0;
	nruns = (uint32_t)((total + per_run - 1) / per_run);
	m.per_buffer = MERGE_BUFFER_BYTES / s->size ? MERGE_BUFFER_BYTES / s->size : 1;
	m.c = calloc(nruns, sizeof(*m.c));
	m.heap = calloc(nruns, sizeof(*m.heap));
	m.fd = temp_file_open();
	ret = !m.c || !m.heap ? -ENOMEM : m.fd < 0 ? m.fd : 0;
	if (!ret)
		ret = write_runs(&m, total, per_run, nruns);
	for (uint32_t r = 0; r < nruns && !ret; r++) {
		m.c[r].buf = malloc(m.per_buffer * s->size);
		if (!m.c[r].buf)
			ret = -ENOMEM;
		m.c[r].pos = SIZE_MAX; /* cursor_fill moves to the first */
		if (!ret && (ret = cursor_fill(&m, &m.c[r])) == 0)
			m.heap[m.nheap++] = r;
	}
	for (uint32_t i = m.nheap / 2; i-- > 0 && ret >= 0;)
		heap_down(&m, i);
	while (m.nheap && !ret) {
		uint32_t r = m.heap[0];

		ret = fn(cursor_record(&m, r), ctx);
		if (ret)
			break;
		ret = cursor_fill(&m, &m.c[r]);
		if (ret == 1) {
			ret = 0;
			m.heap[0] = m.heap[--m.nheap];
		}
		if (ret < 0)
			break;
		heap_down(&m, 0);
	}
	for (uint32_t r = 0; m.c && r < nruns; r++)
		free(m.c[r].buf);
	free(m.c);
	free(m.heap);
	if (m.fd >= 0)
		close(m.fd);
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
