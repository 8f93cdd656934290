// SPDX-License-Identifier: MIT
/*
 * Source lines of native code, from a module's DWARF line tables with
 * libdw: the separate debug file's when there is one (a stripped library
 * keeps its DWARF there), else the file's own. Opened on the first request
 * for a module and kept open, since the file names libdw returns live in
 * its Dwarf; answers are cached by address, as a profile asks about the
 * same few addresses over and over.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "symbolize/internal.h"

/* A power of two; the cache starts again when three quarters full. */
#define LINE_CACHE_SLOTS 4096
#define CU_RANGES_MAX (1U << 20)

struct line_slot {
	uint64_t key; /* vaddr + 1; 0 marks a free slot */
	const char *file; /* NULL: no line there */
	uint32_t line;
};

/* Where .debug_aranges is missing (clang emits none), the ranges of the
 * compile units, read once. */
struct cu_range {
	uint64_t start;
	uint64_t end;
	Dwarf_Die cu;
};

struct sym_lines {
	int fd;
	Elf *elf;
	Dwarf *dwarf;
	bool ranges_read;
	struct cu_range *ranges;
	size_t range_count;
	struct line_slot *cache;
	size_t cache_used;
	bool lost;  /* the file shrank under the mapping */
};

static int open_elf(const char *path, int *fd, Elf **elf)
{
	sym_sigbus_guard();
	*fd = sym_open_regular(path);
	if (*fd < 0)
		return *fd;
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		elf_end(*elf);
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

/* The debug file's DWARF, if it has a debug file with any. */
static Dwarf *debug_file_dwarf(Elf *elf, const char *root, const char *path,
			       int *fd, Elf **delf)
{
	Dwarf *dwarf;

	*fd = sym_debug_file_open(elf, root, path, delf);
	if (*fd < 0)
		return NULL;
	dwarf = dwarf_begin_elf(*delf, DWARF_C_READ, NULL);
	if (!dwarf) {
		elf_end(*delf);
		close(*fd);
	}
	return dwarf;
}

int sym_lines_open(const char *root, const char *path, const char *open_path,
		   struct sym_lines **out)
{
	struct sym_lines *l;
	Elf *elf = NULL, *delf = NULL;
	int fd = -1, dfd = -1, ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	ret = open_elf(open_path, &fd, &elf);
	if (ret)
		return ret;
	l = calloc(1, sizeof(*l));
	if (!l || !(l->cache = calloc(LINE_CACHE_SLOTS, sizeof(*l->cache)))) {
		free(l);
		elf_end(elf);
		close(fd);
		return -ENOMEM;
	}
	l->dwarf = debug_file_dwarf(elf, root, path, &dfd, &delf);
	if (l->dwarf) {
		elf_end(elf);
		close(fd);
		l->elf = delf;
		l->fd = dfd;
	} else {
		l->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		l->elf = elf;
		l->fd = fd;
	}
	if (!l->dwarf) {
		sym_lines_free(l);
		return -ENOENT;
	}
	*out = l;
	return 0;
}

void sym_lines_free(struct sym_lines *l)
{
	if (!l)
		return;
	dwarf_end(l->dwarf);
	elf_end(l->elf);
	close(l->fd);
	free(l->ranges);
	free(l->cache);
	free(l);
}

static int add_range(struct sym_lines *l, size_t *cap, uint64_t start,
		     uint64_t end, const Dwarf_Die *cu)
{
	if (l->range_count >= CU_RANGES_MAX)
		return -E2BIG;
	if (ARRAY_RESERVE(l->ranges, *cap, l->range_count + 1, 256) < 0)
		return -ENOMEM;
	l->ranges[l->range_count++] = (struct cu_range){ start, end, *cu };
	return 0;
}

static int compare_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void read_ranges(struct sym_lines *l)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t type;
	size_t cap = 0;
	int ret = 0;

	l->ranges_read = true;
	while (!ret && dwarf_get_units(l->dwarf, cu, &cu, &version, &type,
				       &cudie, NULL) == 0) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;
		while (!ret && (off = dwarf_ranges(&cudie, off, &base, &start,
						   &end)) > 0)
			if (end > start)
				ret = add_range(l, &cap, start, end, &cudie);
	}
	array_sort(l->ranges, l->range_count, sizeof(*l->ranges), compare_range);
}

static bool find_cu(struct sym_lines *l, uint64_t vaddr, Dwarf_Die *cu)
{
	size_t lo = 0, hi;

	if (dwarf_addrdie(l->dwarf, vaddr, cu))
		return true;
	if (!l->ranges_read)
		read_ranges(l);
	hi = l->range_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->ranges[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= l->ranges[lo - 1].end)
		return false;
	*cu = l->ranges[lo - 1].cu;
	return true;
}

static void look_up(struct sym_lines *l, uint64_t vaddr, struct line_slot *out)
{
	Dwarf_Die cu;
	Dwarf_Line *dl;
	const char *file;
	int line;

	out->file = NULL;
	out->line = 0;
	if (!find_cu(l, vaddr, &cu))
		return;
	dl = dwarf_getsrc_die(&cu, vaddr);
	if (!dl || dwarf_lineno(dl, &line) || line <= 0)
		return;
	file = dwarf_linesrc(dl, NULL, NULL);
	if (!file)
		return;
	out->file = file;
	out->line = (uint32_t)line;
}

static struct line_slot *cache_slot(struct sym_lines *l, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (LINE_CACHE_SLOTS - 1);

	while (l->cache[i].key && l->cache[i].key != key)
		i = (i + 1) & (LINE_CACHE_SLOTS - 1);
	return &l->cache[i];
}

/* The file shrank under libdw's mapping: no more lines from it. */
static bool lines_lost(struct sym_lines *l)
{
	size_t size = 0;
	char *raw = l->elf ? elf_rawfile(l->elf, &size) : NULL;

	if (!l->lost && raw && sym_sigbus_lost(raw, size)) {
		l->lost = true;
		memset(l->cache, 0, LINE_CACHE_SLOTS * sizeof(*l->cache));
		l->cache_used = 0;
	}
	return l->lost;
}

int sym_lines_find(struct sym_lines *l, uint64_t vaddr, const char **file,
		   uint32_t *line)
{
	struct line_slot *s;

	if (l->lost)
		return -ENOENT;
	s = cache_slot(l, vaddr + 1);
	if (!s->key) {
		if ((l->cache_used + 1) * 4 > LINE_CACHE_SLOTS * 3) {
			memset(l->cache, 0, LINE_CACHE_SLOTS * sizeof(*l->cache));
			l->cache_used = 0;
			s = cache_slot(l, vaddr + 1);
		}
		look_up(l, vaddr, s);
		s->key = vaddr + 1;
		l->cache_used++;
		if (lines_lost(l))
			return -ENOENT;
	}
	if (!s->file)
		return -ENOENT;
	*file = s->file;
	*line = s->line;
	return 0;
}
