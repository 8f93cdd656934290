// SPDX-License-Identifier: MIT
/*
 * An ELF file's function symbols: its .symtab, else .dynsym, sorted, one
 * per address (the strongest binding, then the fewest leading
 * underscores), names copied out without @VERSION, and the unnamed cold
 * parts of a few functions named after them (cold_parts.c).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "symbolize/elf_module_impl.h"
#include "symbolize/internal.h"

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

int elf_symbols_read(Elf *const *elfs, size_t elf_count, struct sym_module *m, bool *full)
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
		array_sort(raw, n, sizeof(*raw), compare_raw);
		ret = keep_one_per_address(m, raw, n);
	}
	free(raw);
	return ret;
}
