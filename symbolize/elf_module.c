// SPDX-License-Identifier: MIT
/*
 * One ELF file: its PT_LOAD headers (for load biases) and its function
 * symbols (read by elf_symbols.c, from the file, its debug file or its
 * MiniDebugInfo), copied out so the file and its Elf handle are closed
 * once loaded — a profiled process can map hundreds of modules — and
 * lookups in them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "symbolize/elf_module_impl.h"
#include "symbolize/internal.h"

/* The kernel and ld.so map segments at this granularity on x86-64. */
#define SYM_PAGE_SIZE 4096ULL
/* How far back a lookup looks for a symbol that encloses a smaller one. */
#define ENCLOSING_LOOKBACK 4

static int read_loads(Elf *elf, struct sym_module *m)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	m->loads = calloc(n ? n : 1, sizeof(*m->loads));
	if (!m->loads)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct sym_load *l = &m->loads[m->load_count];

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		l->offset = ph.p_offset;
		l->vaddr = ph.p_vaddr;
		l->filesz = ph.p_filesz;
		l->exec = ph.p_flags & PF_X;
		m->load_count++;
	}
	return 0;
}

/* .symtab, or .dynsym where the file was stripped of it. */
static int read_symbols(Elf *elf, struct sym_module *m, bool *full)
{
	return elf_symbols_read(&elf, 1, m, full);
}

/* Takes the symbols of other when they are a full table. */
static bool take_full_symbols(struct sym_module *m, struct sym_module *other,
			      bool full)
{
	bool take = full && other->symbol_count;

	if (take) {
		free(m->symbols);
		free(m->names);
		m->symbols = other->symbols;
		m->names = other->names;
		m->names_len = other->names_len;
		m->symbol_count = other->symbol_count;
	} else {
		free(other->symbols);
		free(other->names);
	}
	return take;
}

/*
 * A stripped file's full symbol table, from its debug file. The debug file
 * is linked at the same addresses, so the module's own PT_LOADs (and so its
 * biases) apply to these symbols unchanged. False where none was found.
 */
static bool read_debug_symbols(Elf *elf, struct sym_module *m,
			       const char *root, const char *path)
{
	struct sym_module dbg = { 0 };
	Elf *delf;
	bool full, taken;
	int fd = sym_debug_file_open(elf, root, path, &delf);

	if (fd < 0)
		return false;
	taken = take_full_symbols(m, &dbg,
				  read_symbols(delf, &dbg, &full) == 0 && full);
	elf_end(delf);
	close(fd);
	return taken;
}

/*
 * MiniDebugInfo: the .symtab in .gnu_debugdata holds only the functions
 * .dynsym lacks (Fedora's recipe), so the two together are the symbols.
 * It is linked at the same addresses, like a debug file.
 */
static void read_mini_symbols(Elf *elf, struct sym_module *m)
{
	struct sym_module mini = { 0 };
	Elf *both[2] = { elf, NULL };
	void *image;
	bool full;

	if (sym_minidebuginfo_open(elf, &both[1], &image))
		return;
	take_full_symbols(m, &mini,
			  elf_symbols_read(both, 2, &mini, &full) == 0 && full);
	elf_end(both[1]);
	free(image);
}

static int load_elf(Elf *elf, struct sym_module *m, const char *root,
		    const char *path, char *err, size_t errlen)
{
	bool full = false;
	int ret;

	if (elf_kind(elf) != ELF_K_ELF)
		return errbuf_set(err, errlen, -ENOEXEC, "%s: not an ELF file", path);
	ret = read_loads(elf, m);
	if (!ret)
		ret = read_symbols(elf, m, &full);
	if (ret)
		return errbuf_set(err, errlen, ret, "%s: %s", path,
				  ret == -ENOEXEC ? elf_errmsg(-1) : strerror(-ret));
	if (!full && !read_debug_symbols(elf, m, root, path))
		read_mini_symbols(elf, m);
	return 0;
}

int sym_module_open_memory(const uint8_t *data, size_t len, const char *name,
			   struct sym_module **out, char *err, size_t errlen)
{
	struct sym_module *m;
	char *copy;
	Elf *elf;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	/* elf_memory wants a writable buffer; it is only read. */
	copy = malloc(len);
	m = calloc(1, sizeof(*m));
	if (!copy || !m) {
		free(copy);
		free(m);
		return -ENOMEM;
	}
	memcpy(copy, data, len);
	elf = elf_memory(copy, len);
	ret = elf ? load_elf(elf, m, "", name, err, errlen) : -ENOEXEC;
	elf_end(elf);
	free(copy);
	if (ret) {
		sym_module_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

int sym_module_open_in(const char *root, const char *path, const char *open_path,
		       struct sym_module **out, char *err, size_t errlen)
{
	struct sym_module *m;
	Elf *elf;
	int fd, ret;

	if (!path || !out)
		return -EINVAL;
	if (!open_path)
		open_path = path;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errbuf_set(err, errlen, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
	sym_sigbus_guard();
	fd = sym_open_regular(open_path);
	if (fd < 0) {
		ret = fd;
		return errbuf_set(err, errlen, ret, "open %s: %s", open_path, strerror(-ret));
	}
	m = calloc(1, sizeof(*m));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!m || !elf) {
		ret = m ? -ENOEXEC : -ENOMEM;
		errbuf_set(err, errlen, 0, "%s: %s", path,
			   m ? elf_errmsg(-1) : strerror(ENOMEM));
	} else {
		size_t size = 0;
		char *raw;

		ret = load_elf(elf, m, root, path, err, errlen);
		/* The file shrank while we read it: what was read is not it. */
		raw = elf_rawfile(elf, &size);
		if (!ret && raw && sym_sigbus_lost(raw, size)) {
			errbuf_set(err, errlen, 0, "%s: changed while read", path);
			ret = -EIO;
		}
	}
	elf_end(elf);
	close(fd);
	if (ret) {
		sym_module_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

void sym_module_free(struct sym_module *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->readable && i < m->symbol_count; i++) {
		char *r = m->readable[i];

		if (r && (r < m->names || r >= m->names + m->names_len))
			free(r);
	}
	free(m->readable);
	free(m->loads);
	free(m->symbols);
	free(m->names);
	free(m);
}

/* The demangled name of symbol i, made once; the raw one if that fails. */
static const char *readable_name(const struct sym_module *cm, size_t i)
{
	/* The cache is the module's own state, not its contents. */
	struct sym_module *m = (struct sym_module *)cm;
	char *raw = m->names + m->symbols[i].name, *out;

	if (!m->readable && !(m->readable = calloc(m->symbol_count, sizeof(*m->readable))))
		return raw;
	if (!m->readable[i])
		m->readable[i] = sym_demangle(raw, strlen(raw), &out) == 0 ? out : raw;
	return m->readable[i];
}

static uint64_t first_page(const struct sym_load *l)
{
	return l->offset & ~(SYM_PAGE_SIZE - 1);
}

/* Whether a mapping at file offset pgoff can be (part of) this segment. */
static bool load_backs(const struct sym_load *l, uint64_t pgoff)
{
	return pgoff == first_page(l) ||
	       (pgoff > first_page(l) && pgoff < l->offset + l->filesz);
}

/*
 * Candidates are the PT_LOADs whose file pages hold pgoff. A candidate
 * whose page-aligned offset is pgoff itself beats one that merely contains
 * it (that is a mapping split by mprotect, as RELRO does), the hint beats
 * both, and among equals the one whose PF_X matches the mapping wins.
 */
int sym_module_bias_hint(const struct sym_module *m, uint64_t map_start,
			 uint64_t pgoff, bool exec, const uint64_t *hint,
			 uint64_t *bias)
{
	int best_score = -1;
	uint64_t best = 0;

	if (!m || !bias)
		return -EINVAL;
	for (size_t i = 0; i < m->load_count; i++) {
		const struct sym_load *l = &m->loads[i];
		uint64_t b = map_start - pgoff - (l->vaddr - l->offset);
		int score;

		if (!load_backs(l, pgoff))
			continue;
		score = (hint && *hint == b) * 4 +
			(first_page(l) == pgoff) * 2 +
			(l->exec == exec);
		if (score > best_score) {
			best_score = score;
			best = b;
		}
	}
	if (best_score < 0)
		return -ENOENT;
	*bias = best;
	return 0;
}

static bool symbol_covers(const struct sym_symbol *s, uint64_t vaddr)
{
	if (s->size == 0)
		return vaddr == s->addr;
	return vaddr - s->addr < s->size;
}

const char *sym_module_function(const struct sym_module *m, uint64_t vaddr,
				uint64_t *offset)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	hi = m->symbol_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->symbols[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* symbols[lo - 1] starts at or below vaddr; a few before it may
	 * enclose it when it ends early (a nested label, say). */
	for (size_t k = 0; k < ENCLOSING_LOOKBACK && k < lo; k++) {
		const struct sym_symbol *s = &m->symbols[lo - 1 - k];

		if (symbol_covers(s, vaddr)) {
			if (offset)
				*offset = vaddr - s->addr;
			return readable_name(m, lo - 1 - k);
		}
	}
	return NULL;
}
