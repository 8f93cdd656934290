// SPDX-License-Identifier: MIT
/*
 * Perf map files: JITs (CPython 3.12 -X perf, V8, LuaJIT...) name the code
 * they generate in /tmp/perf-PID.map, one "START SIZE name" line per
 * function (hex without 0x; the name runs to the end of the line and may
 * hold spaces). PID is the target's pid in its own pid namespace and /tmp
 * its own /tmp, so the file is read through /proc/PID/root.
 *
 * The file grows while the process runs: only what was appended since the
 * last read is parsed (a partial last line waits for the next read). JITs
 * reuse memory, so a later entry wins over an earlier one where they
 * overlap: the entries are kept as sorted, non-overlapping segments, each
 * naming the latest entry that covers it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "symbolize/internal.h"

#define PERF_MAP_REREAD_NS (100 * 1000 * 1000ULL)
#define PERF_MAP_LINE_MAX 4096      /* longer lines are skipped */
#define PERF_MAP_CHUNK (64 * 1024)  /* bytes read at once; > PERF_MAP_LINE_MAX */
#define PERF_MAP_FILE_MAX (256ULL << 20)
#define PERF_MAP_ENTRIES_MAX (1U << 20)
#define NAME_BLOCK_SIZE (64 * 1024)

struct perf_entry {
	uint64_t start;
	uint64_t end;
	const char *name;
};

/* A piece of the address space and the latest entry covering it. */
struct perf_segment {
	uint64_t start;
	uint64_t end;
	uint32_t entry;
};

/* Names are never moved, so they stay valid while entries are added. */
struct name_block {
	struct name_block *next;
	size_t used;
	size_t cap;
	char data[];
};

struct sym_perf_map {
	char path[PATH_MAX];
	uint64_t read_ns;
	bool read_once;
	dev_t dev;
	ino_t ino;
	uint64_t offset; /* bytes of whole lines consumed */
	bool skipping;   /* the rest of a line too long to keep comes next */
	struct perf_entry *entries;
	size_t entry_count;
	size_t entry_cap;
	struct perf_segment *segments;
	size_t segment_count;
	struct name_block *names;
};

/* The pid the process sees itself as, and so names its perf map by. */
static int namespace_pid(int pid)
{
	pid_t inner;
	int levels;

	return proc_ns_tid(pid, pid, &inner, &levels) ? pid : (int)inner;
}

int sym_perf_map_open(const char *root, int pid, struct sym_perf_map **out)
{
	struct sym_perf_map *pm = calloc(1, sizeof(*pm));
	int n;

	if (!pm)
		return -ENOMEM;
	n = snprintf(pm->path, sizeof(pm->path), "%s/tmp/perf-%d.map", root,
		     namespace_pid(pid));
	if (n < 0 || (size_t)n >= sizeof(pm->path)) {
		free(pm);
		return -ENAMETOOLONG;
	}
	*out = pm;
	return 0;
}

static void drop_entries(struct sym_perf_map *pm)
{
	while (pm->names) {
		struct name_block *next = pm->names->next;

		free(pm->names);
		pm->names = next;
	}
	free(pm->entries);
	free(pm->segments);
	pm->entries = NULL;
	pm->segments = NULL;
	pm->entry_count = pm->entry_cap = pm->segment_count = 0;
	pm->offset = 0;
	pm->skipping = false;
}

void sym_perf_map_free(struct sym_perf_map *pm)
{
	if (!pm)
		return;
	drop_entries(pm);
	free(pm);
}

static const char *keep_name(struct sym_perf_map *pm, const char *s, size_t len)
{
	struct name_block *b = pm->names;
	char *copy;

	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > NAME_BLOCK_SIZE ? len + 1 : NAME_BLOCK_SIZE;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = pm->names;
		b->used = 0;
		b->cap = cap;
		pm->names = b;
	}
	copy = b->data + b->used;
	memcpy(copy, s, len);
	copy[len] = '\0';
	b->used += len + 1;
	return copy;
}

static bool parse_hex(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*s = p;
	*out = v;
	return true;
}

static bool skip_blanks(const char **s, const char *end)
{
	const char *p = *s;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == *s)
		return false;
	*s = p;
	return true;
}

/* "START SIZE name"; a line that is not that is skipped. */
static int add_line(struct sym_perf_map *pm, const char *s, const char *end)
{
	struct perf_entry *e;
	uint64_t start, size;
	const char *name;

	if (end > s && end[-1] == '\r')
		end--;
	if (end - s > PERF_MAP_LINE_MAX || pm->entry_count >= PERF_MAP_ENTRIES_MAX)
		return 0;
	if (!parse_hex(&s, end, &start) || !skip_blanks(&s, end) ||
	    !parse_hex(&s, end, &size) || !skip_blanks(&s, end) || s == end ||
	    size == 0 || start + size < start)
		return 0;
	if (ARRAY_RESERVE(pm->entries, pm->entry_cap, pm->entry_count + 1, 256) < 0)
		return -ENOMEM;
	name = keep_name(pm, s, (size_t)(end - s));
	if (!name)
		return -ENOMEM;
	e = &pm->entries[pm->entry_count++];
	e->start = start;
	e->end = start + size;
	e->name = name;
	return 0;
}

/* The whole lines of buf; returns how many bytes they took. A line too
 * long to be kept is consumed too, and its rest skipped later. */
static ssize_t add_lines(struct sym_perf_map *pm, const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len, *nl;
	int ret;

	while ((nl = memchr(s, '\n', (size_t)(end - s)))) {
		if (pm->skipping)
			pm->skipping = false;
		else if ((ret = add_line(pm, s, nl)) < 0)
			return ret;
		s = nl + 1;
	}
	if (end - s >= PERF_MAP_LINE_MAX) {
		pm->skipping = true;
		s = end;
	}
	return s - buf;
}

/* A file that shrank or was replaced starts again from its beginning. */
static bool same_file(struct sym_perf_map *pm, const struct stat *st)
{
	return st->st_dev == pm->dev && st->st_ino == pm->ino &&
	       (uint64_t)st->st_size >= pm->offset;
}

/* Reads what was appended since the last read. */
static int read_appended(struct sym_perf_map *pm, bool *reset)
{
	char *buf;
	struct stat st;
	uint64_t limit;
	int fd, ret = 0;

	fd = open(pm->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	if (!same_file(pm, &st)) {
		*reset = pm->entry_count > 0;
		drop_entries(pm);
		pm->dev = st.st_dev;
		pm->ino = st.st_ino;
	}
	limit = (uint64_t)st.st_size < PERF_MAP_FILE_MAX ? (uint64_t)st.st_size : PERF_MAP_FILE_MAX;
	buf = malloc(PERF_MAP_CHUNK);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (pm->offset < limit) {
		size_t want = limit - pm->offset < PERF_MAP_CHUNK ? limit - pm->offset : PERF_MAP_CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)pm->offset), used;

		if (n <= 0)
			break;
		used = add_lines(pm, buf, (size_t)n);
		if (used <= 0) {
			ret = used < 0 ? (int)used : 0;
			break; /* a partial last line, or out of memory */
		}
		pm->offset += (uint64_t)used;
	}
	free(buf);
	close(fd);
	return ret;
}

/* ---- segments: where entries overlap, the later one wins ---- */

struct sweep {
	struct perf_segment *items; /* old segments and new entries, by start */
	uint32_t *heap;             /* item indexes, latest entry on top */
	size_t heap_len;
	struct perf_segment *out;
	size_t out_len;
};

static int compare_start(const void *a, const void *b)
{
	const struct perf_segment *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static bool heap_above(const struct sweep *w, size_t i, size_t j)
{
	return w->items[w->heap[i]].entry > w->items[w->heap[j]].entry;
}

static void heap_swap(struct sweep *w, size_t i, size_t j)
{
	uint32_t t = w->heap[i];

	w->heap[i] = w->heap[j];
	w->heap[j] = t;
}

static void heap_push(struct sweep *w, uint32_t item)
{
	size_t i = w->heap_len++;

	w->heap[i] = item;
	for (; i > 0 && heap_above(w, i, (i - 1) / 2); i = (i - 1) / 2)
		heap_swap(w, i, (i - 1) / 2);
}

static void heap_pop(struct sweep *w)
{
	size_t i = 0;

	w->heap[0] = w->heap[--w->heap_len];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, top = i;

		if (l < w->heap_len && heap_above(w, l, top))
			top = l;
		if (r < w->heap_len && heap_above(w, r, top))
			top = r;
		if (top == i)
			return;
		heap_swap(w, i, top);
		i = top;
	}
}

static void emit(struct sweep *w, uint64_t start, uint64_t end, uint32_t entry)
{
	struct perf_segment *last = w->out_len ? &w->out[w->out_len - 1] : NULL;

	if (last && last->end == start && last->entry == entry) {
		last->end = end;
		return;
	}
	w->out[w->out_len++] = (struct perf_segment){ start, end, entry };
}

/*
 * A sweep over the items by address with the covering ones in a heap: each
 * piece between two boundaries goes to the latest entry that covers it.
 * Every piece ends at an item's start or end, so there are at most 2n.
 */
static void sweep(struct sweep *w, size_t n)
{
	size_t i = 0;
	uint64_t pos = 0;

	while (i < n || w->heap_len) {
		const struct perf_segment *top;
		uint64_t next;

		if (!w->heap_len)
			pos = w->items[i].start;
		while (i < n && w->items[i].start <= pos)
			heap_push(w, (uint32_t)i++);
		while (w->heap_len && w->items[w->heap[0]].end <= pos)
			heap_pop(w);
		if (!w->heap_len)
			continue;
		top = &w->items[w->heap[0]];
		next = top->end;
		if (i < n && w->items[i].start < next)
			next = w->items[i].start;
		emit(w, pos, next, top->entry);
		pos = next;
	}
}

/* The common case: new entries after every known one, in order. */
static bool append_only(const struct sym_perf_map *pm, size_t first_new)
{
	uint64_t end = pm->segment_count ? pm->segments[pm->segment_count - 1].end : 0;

	for (size_t i = first_new; i < pm->entry_count; i++) {
		if (pm->entries[i].start < end)
			return false;
		end = pm->entries[i].end;
	}
	return true;
}

static int add_segments(struct sym_perf_map *pm, size_t first_new)
{
	size_t added = pm->entry_count - first_new, n = pm->segment_count + added;
	struct sweep w = { 0 };
	bool fast = append_only(pm, first_new);
	struct perf_segment *bigger;

	w.items = malloc(n * sizeof(*w.items));
	if (!fast)
		w.heap = malloc(n * sizeof(*w.heap));
	w.out = malloc((fast ? n : 2 * n) * sizeof(*w.out));
	if (!w.items || (!fast && !w.heap) || !w.out) {
		free(w.items);
		free(w.heap);
		free(w.out);
		return -ENOMEM;
	}
	/* No segments yet: segments is NULL, which memcpy may not be given. */
	if (pm->segment_count)
		memcpy(w.items, pm->segments, pm->segment_count * sizeof(*w.items));
	for (size_t i = 0; i < added; i++) {
		const struct perf_entry *e = &pm->entries[first_new + i];

		w.items[pm->segment_count + i] = (struct perf_segment){
			e->start, e->end, (uint32_t)(first_new + i)
		};
	}
	if (fast) {
		memcpy(w.out, w.items, n * sizeof(*w.out));
		w.out_len = n;
	} else {
		array_sort(w.items, n, sizeof(*w.items), compare_start);
		sweep(&w, n);
	}
	free(w.items);
	free(w.heap);
	bigger = realloc(w.out, (w.out_len ? w.out_len : 1) * sizeof(*bigger));
	free(pm->segments);
	pm->segments = bigger ? bigger : w.out;
	pm->segment_count = w.out_len;
	return 0;
}

static const struct perf_segment *find_segment(const struct sym_perf_map *pm,
					       uint64_t addr)
{
	size_t lo = 0, hi = pm->segment_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->segments[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= pm->segments[lo - 1].end)
		return NULL;
	return &pm->segments[lo - 1];
}

/* Re-reads the file; *changed when what it names changed. */
static void refresh(struct sym_perf_map *pm, bool *changed)
{
	size_t first_new;
	bool reset = false;

	pm->read_ns = monotonic_ns();
	pm->read_once = true;
	first_new = pm->entry_count;
	read_appended(pm, &reset);
	if (reset) {
		*changed = true;
		first_new = 0;
	}
	if (pm->entry_count > first_new) {
		if (add_segments(pm, first_new) == 0) {
			*changed = true;
		} else {
			/* Unnamed rather than half-named: read it all again later. */
			*changed = true;
			drop_entries(pm);
		}
	}
}

int sym_perf_map_find(struct sym_perf_map *pm, uint64_t addr,
		      const char **name, uint64_t *offset, bool *changed)
{
	const struct perf_segment *s = find_segment(pm, addr);

	*changed = false;
	if (!s && (!pm->read_once || monotonic_ns() - pm->read_ns >= PERF_MAP_REREAD_NS)) {
		refresh(pm, changed);
		s = find_segment(pm, addr);
	}
	if (!s)
		return -ENOENT;
	*name = pm->entries[s->entry].name;
	*offset = addr - pm->entries[s->entry].start;
	return 0;
}

void sym_perf_map_refresh(struct sym_perf_map *pm, bool *changed)
{
	*changed = false;
	if (!pm->read_once || monotonic_ns() - pm->read_ns >= PERF_MAP_REREAD_NS)
		refresh(pm, changed);
}

/*
 * After an exec: the new image writes its entries after the old ones (a
 * JIT opens the file to append), over addresses the old one used: forget
 * every entry so far and read only what comes after.
 */
void sym_perf_map_forget(struct sym_perf_map *pm)
{
	bool changed, skipping;
	uint64_t offset;

	refresh(pm, &changed);
	offset = pm->offset;
	skipping = pm->skipping;
	drop_entries(pm);
	pm->offset = offset;
	pm->skipping = skipping;
}
