// SPDX-License-Identifier: MIT
/*
 * One ELF file: its PT_LOAD headers (for load biases) and its function
 * symbols, copied out so the file and its Elf handle are closed once
 * loaded — a profiled process can map hundreds of modules.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "symbolize/internal.h"

/* The kernel and ld.so map segments at this granularity on x86-64. */
#define SYM_PAGE_SIZE 4096ULL
/* How far back a lookup looks for a symbol that encloses a smaller one. */
#define ENCLOSING_LOOKBACK 4

struct sym_load {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	bool exec;
};

struct sym_symbol {
	uint64_t addr;
	uint64_t size;
	size_t name; /* offset into names */
};

struct sym_module {
	struct sym_load *loads;
	size_t load_count;
	struct sym_symbol *symbols;
	size_t symbol_count;
	char *names;
	size_t names_len;
	/* Readable names, made on first lookup: demangling every symbol of a
	 * large C++ library at load took as long as reading it. Each is a
	 * string of its own or, where nothing demangles, the name in names. */
	char **readable;
};

/* A symbol as read, its name still in the Elf's string table. */
struct raw_symbol {
	uint64_t addr;
	uint64_t size;
	const char *name;
	size_t len; /* without any @VERSION */
	int rank;   /* binding preference, lower wins */
};

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
static Elf_Scn *find_symbol_table(Elf *elf, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL, *dynsym = NULL;
	GElf_Shdr sh, dynsym_sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			*out = sh;
			return scn;
		}
		if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsym_sh = sh;
		}
	}
	if (dynsym)
		*out = dynsym_sh;
	return dynsym;
}

static int binding_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

static bool is_function(const GElf_Sym *s)
{
	unsigned char type = GELF_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       s->st_shndx != SHN_UNDEF && s->st_value != 0;
}

static size_t leading_underscores(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] == '_')
		n++;
	return n;
}

/* By address; at one address the preferred alias first, deterministically. */
static int compare_raw(const void *a, const void *b)
{
	const struct raw_symbol *x = a, *y = b;
	size_t ux, uy;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	ux = leading_underscores(x->name, x->len);
	uy = leading_underscores(y->name, y->len);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp(x->name, y->name, x->len);
	if (c)
		return c;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* Appends the functions of one symbol table to *out (*count of them). */
static int collect_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			   struct raw_symbol **out, size_t *count)
{
	size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *data = elf_getdata(scn, NULL);
	struct raw_symbol *raw;
	size_t n, kept = *count;

	if (!data || !entsize)
		return -ENOEXEC;
	n = data->d_size / entsize;
	raw = realloc(*out, (kept + n + 1) * sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	*out = raw;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(data, (int)i, &s) || !is_function(&s))
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !name[0] || name[0] == '@')
			continue;
		raw[kept++] = (struct raw_symbol){
			.addr = s.st_value,
			.size = s.st_size,
			.name = name,
			.len = strcspn(name, "@"),
			.rank = binding_rank(GELF_ST_BIND(s.st_info)),
		};
	}
	*count = kept;
	return 0;
}

/* ---- names (demangled on first lookup, see sym_module_function) ---- */

struct name_buffer {
	char *text;
	size_t len;
	size_t cap;
};

static int append_name(struct name_buffer *b, const char *name, size_t len)
{
	if (ARRAY_RESERVE(b->text, b->cap, b->len + len + 1, 4096) < 0)
		return -ENOMEM;
	memcpy(b->text + b->len, name, len);
	b->text[b->len + len] = '\0';
	b->len += len + 1;
	return 0;
}

static int store_name(struct name_buffer *b, const struct raw_symbol *r)
{
	return append_name(b, r->name, r->len);
}

/* Keeps the first (preferred) name at each address; copies the names. */
static int keep_one_per_address(struct sym_module *m,
				const struct raw_symbol *raw, size_t n)
{
	struct name_buffer names = { 0 };
	int ret;

	m->symbols = calloc(n ? n : 1, sizeof(*m->symbols));
	if (!m->symbols)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct sym_symbol *s;

		if (i > 0 && raw[i].addr == raw[i - 1].addr) {
			/* An alias: it covers as far as the longest one. */
			s = &m->symbols[m->symbol_count - 1];
			if (raw[i].size > s->size)
				s->size = raw[i].size;
			continue;
		}
		s = &m->symbols[m->symbol_count++];
		s->addr = raw[i].addr;
		s->size = raw[i].size;
		s->name = names.len;
		ret = store_name(&names, &raw[i]);
		if (ret) {
			free(names.text);
			return ret;
		}
	}
	m->names = names.text;
	m->names_len = names.len;
	return 0;
}

/*
 * Functions whose cold part is named NAME.cold when the file does not name
 * it: the CPython evaluator, whose frames --native tells by name (see
 * cold_parts.c for why a stripped build hides them).
 */
static const char *const cold_wanted[] = { "_PyEval_EvalFrameDefault" };

struct raw_list {
	const struct raw_symbol *raw;
	size_t n;
};

static bool starts_a_symbol(void *ctx, uint64_t lo, uint64_t hi)
{
	const struct raw_list *l = ctx;

	for (size_t i = 0; i < l->n; i++)
		if (l->raw[i].addr >= lo && l->raw[i].addr < hi)
			return true;
	return false;
}

/* Adds NAME.cold for each wanted function whose cold part elf does not
 * name. Best effort: a part not found stays nameless. */
static int add_cold_parts(Elf *elf, struct raw_symbol **raw, size_t *n)
{
	static const char *const cold_names[] = { "_PyEval_EvalFrameDefault.cold" };

	for (size_t w = 0; w < sizeof(cold_wanted) / sizeof(cold_wanted[0]); w++) {
		size_t len = strlen(cold_wanted[w]);
		struct raw_list list = { *raw, *n };
		struct raw_symbol *grown;
		uint64_t lo, hi;
		size_t i;

		for (i = 0; i < *n; i++)
			if ((*raw)[i].len == len && !memcmp((*raw)[i].name, cold_wanted[w], len))
				break;
		if (i == *n || sym_cold_part(elf, (*raw)[i].addr, (*raw)[i].size,
					     starts_a_symbol, &list, &lo, &hi) < 0)
			continue;
		grown = realloc(*raw, (*n + 1) * sizeof(**raw));
		if (!grown)
			return -ENOMEM;
		*raw = grown;
		(*raw)[(*n)++] = (struct raw_symbol){
			.addr = lo,
			.size = hi - lo,
			.name = cold_names[w],
			.len = strlen(cold_names[w]),
			.rank = (*raw)[i].rank,
		};
	}
	return 0;
}

/*
 * The symbols of one or more files linked at the same addresses (a
 * module's .dynsym and its MiniDebugInfo .symtab), each file's .symtab or
 * else .dynsym. *full: some came from a .symtab, not only .dynsym.
 */
static int read_symbols_of(Elf *const *elfs, size_t elf_count,
			   struct sym_module *m, bool *full)
{
	struct raw_symbol *raw = NULL;
	size_t n = 0;
	int ret = 0;

	*full = false;
	for (size_t i = 0; i < elf_count && !ret; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = find_symbol_table(elfs[i], &sh);

		if (!scn)
			continue; /* no symbols at all is still a module */
		*full |= sh.sh_type == SHT_SYMTAB;
		ret = collect_symbols(elfs[i], scn, &sh, &raw, &n);
	}
	/* The first file has the code (a debug file has none). */
	if (!ret && raw && elf_count)
		ret = add_cold_parts(elfs[0], &raw, &n);
	if (!ret && raw) {
		qsort(raw, n, sizeof(*raw), compare_raw);
		ret = keep_one_per_address(m, raw, n);
	}
	free(raw);
	return ret;
}

static int read_symbols(Elf *elf, struct sym_module *m, bool *full)
{
	return read_symbols_of(&elf, 1, m, full);
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
			  read_symbols_of(both, 2, &mini, &full) == 0 && full);
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

int sym_module_open(const char *path, struct sym_module **out, char *err,
		    size_t errlen)
{
	return sym_module_open_in("", path, NULL, out, err, errlen);
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

size_t sym_module_symbol_count(const struct sym_module *m)
{
	return m ? m->symbol_count : 0;
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

int sym_module_bias(const struct sym_module *m, uint64_t map_start,
		    uint64_t pgoff, bool exec, uint64_t *bias)
{
	return sym_module_bias_hint(m, map_start, pgoff, exec, NULL, bias);
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
