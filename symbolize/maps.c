// SPDX-License-Identifier: MIT
/*
 * /proc/PID/maps: one line per mapping,
 *   start-end perms pgoff major:minor inode [path]
 * The path is whatever follows the inode after padding, so it may hold
 * spaces; the kernel appends " (deleted)" to files that were unlinked.
 * Lines are parsed in place in a private copy of the text, so paths need
 * no allocation of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "symbolize/internal.h"

#define DELETED_SUFFIX " (deleted)"
#define MAPS_READ_CHUNK (64 * 1024)

struct sym_maps {
	struct sym_mapping *mappings;
	size_t count;
	char *text; /* owned copy; paths point into it */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* At least one blank, then any more. */
static bool skip_blanks(const char **s, const char *end)
{
	const char *p = *s;

	while (p < end && is_blank(*p))
		p++;
	if (p == *s)
		return false;
	*s = p;
	return true;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool parse_hex(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int d;

	while (p < end && (d = hex_digit(*p)) >= 0) {
		if (v >> 60)
			return false; /* would overflow */
		v = v << 4 | (uint64_t)d;
		p++;
	}
	if (p == *s)
		return false;
	*s = p;
	*out = v;
	return true;
}

static bool parse_dec(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	while (p < end && *p >= '0' && *p <= '9') {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		p++;
	}
	if (p == *s)
		return false;
	*s = p;
	*out = v;
	return true;
}

static bool expect(const char **s, const char *end, char c)
{
	if (*s >= end || **s != c)
		return false;
	(*s)++;
	return true;
}

static bool parse_perms(const char **s, const char *end,
			struct sym_mapping *m)
{
	const char *p = *s;

	if (end - p < 4)
		return false;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 's' && p[3] != 'p'))
		return false;
	m->read = p[0] == 'r';
	m->write = p[1] == 'w';
	m->exec = p[2] == 'x';
	m->shared = p[3] == 's';
	*s = p + 4;
	return true;
}

/* The rest of the line after the inode; writes NULs into the line. */
static void parse_path(char *p, char *end, struct sym_mapping *m)
{
	size_t len, suffix = strlen(DELETED_SUFFIX);

	while (p < end && is_blank(*p))
		p++;
	len = (size_t)(end - p);
	if (len > suffix && !memcmp(end - suffix, DELETED_SUFFIX, suffix)) {
		m->deleted = true;
		len -= suffix;
	}
	p[len] = '\0';
	m->path = p;
}

/* One line, NUL-terminated at end. Returns false for a malformed line. */
static bool parse_line(char *line, char *end, struct sym_mapping *m)
{
	const char *s = line;
	uint64_t major, minor;

	memset(m, 0, sizeof(*m));
	if (!parse_hex(&s, end, &m->start) || !expect(&s, end, '-') ||
	    !parse_hex(&s, end, &m->end) || !skip_blanks(&s, end) ||
	    !parse_perms(&s, end, m) || !skip_blanks(&s, end) ||
	    !parse_hex(&s, end, &m->pgoff) || !skip_blanks(&s, end) ||
	    !parse_hex(&s, end, &major) || !expect(&s, end, ':') ||
	    !parse_hex(&s, end, &minor) || !skip_blanks(&s, end) ||
	    !parse_dec(&s, end, &m->inode))
		return false;
	if (m->start >= m->end || major > UINT32_MAX || minor > UINT32_MAX)
		return false;
	if (s < end && !is_blank(*s))
		return false; /* junk glued to the inode */
	m->dev_major = (uint32_t)major;
	m->dev_minor = (uint32_t)minor;
	parse_path(line + (s - line), end, m); /* s, writable again */
	return true;
}

static int compare_start(const void *a, const void *b)
{
	const struct sym_mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static size_t count_lines(const char *text, size_t len)
{
	const char *end = text + len;
	size_t n = 1;

	for (const char *p = text; (p = memchr(p, '\n', (size_t)(end - p)));
	     p++)
		n++;
	return n;
}

/* Takes ownership of text, which holds len bytes and room for a NUL. */
static int parse_owned(char *text, size_t len, struct sym_maps **out)
{
	struct sym_maps *m = calloc(1, sizeof(*m));
	size_t pos = 0;

	if (m)
		m->mappings = calloc(count_lines(text, len),
				     sizeof(*m->mappings));
	if (!m || !m->mappings) {
		free(m);
		free(text);
		return -ENOMEM;
	}
	text[len] = '\0';
	m->text = text;
	while (pos < len) {
		char *line = text + pos;
		char *nl = memchr(line, '\n', len - pos);
		char *end = nl ? nl : text + len;

		*end = '\0';
		if (parse_line(line, end, &m->mappings[m->count]))
			m->count++;
		pos = (size_t)(end - text) + 1;
	}
	array_sort(m->mappings, m->count, sizeof(*m->mappings), compare_start);
	*out = m;
	return 0;
}

/* The whole file: maps of a big process run to hundreds of KiB. */
static int read_all(int fd, char **out, size_t *outlen)
{
	size_t cap = MAPS_READ_CHUNK, len = 0;
	char *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *bigger = realloc(buf, cap * 2 + 1);

			if (!bigger) {
				free(buf);
				return -ENOMEM;
			}
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int ret = -errno;

			free(buf);
			return ret;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

int sym_maps_read_path(const char *path, struct sym_maps **out, char *err,
		       size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return errbuf_set(err, errlen, ret, "open %s: %s", path, strerror(-ret));
	}
	ret = read_all(fd, &text, &len);
	close(fd);
	if (ret)
		return errbuf_set(err, errlen, ret, "read %s: %s", path, strerror(-ret));
	ret = parse_owned(text, len, out);
	if (ret)
		errbuf_set(err, errlen, ret, "parse %s: %s", path, strerror(-ret));
	return ret;
}

void sym_maps_free(struct sym_maps *m)
{
	if (!m)
		return;
	free(m->mappings);
	free(m->text);
	free(m);
}

size_t sym_maps_count(const struct sym_maps *m)
{
	return m ? m->count : 0;
}

const struct sym_mapping *sym_maps_at(const struct sym_maps *m, size_t i)
{
	if (!m || i >= m->count)
		return NULL;
	return &m->mappings[i];
}

const struct sym_mapping *sym_maps_find(const struct sym_maps *m,
					uint64_t addr)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	/* The last mapping that starts at or below addr. */
	hi = m->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->mappings[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= m->mappings[lo - 1].end)
		return NULL;
	return &m->mappings[lo - 1];
}
