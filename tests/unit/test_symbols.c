// SPDX-License-Identifier: MIT
/*
 * ELF modules and process symbolization: tests/unit/test_symbols.c.
 * Runs from the repository root, next to build/tests/libsymtest*.so.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/internal.h"
#include "symbolize/symbolize.h"
#include "tests/unit/self_helpers.h"

#define LIB_BFD "build/tests/libsymtest.so"
#define LIB_LLD "build/tests/libsymtest_lld.so"

static void *open_lib(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	cr_assert_not_null(h, "dlopen %s: %s (run from the repo root after "
			      "building the symtest libraries)", path,
			   dlerror());
	return h;
}

static void *lib_symbol(void *h, const char *name)
{
	void *s = dlsym(h, name);

	cr_assert_not_null(s, "dlsym %s", name);
	return s;
}

/* The value of a symbol as the file itself says (any symbol table). */
static uint64_t elf_symbol_value(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t value = 0;

	cr_assert_geq(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	while (!value && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			gelf_getsym(d, (int)i, &s);
			if (!strcmp(elf_strptr(elf, sh.sh_link, s.st_name),
				    name) && s.st_value) {
				value = s.st_value;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	cr_assert_neq(value, 0, "%s has no symbol %s", path, name);
	return value;
}

/* ---- (a) the test binary itself, a PIE ---- */

static __attribute__((noipa)) int own_static_function(int x)
{
	return x * 41 + 7;
}

Test(symbols, own_static_function)
{
	struct sym_process *p = open_self();
	struct sym_location loc;
	uint64_t fn = addr_of((void *)own_static_function);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	cr_assert_eq(sym_process_resolve(p, fn, &loc), 0);
	cr_assert_str_eq(loc.function, "own_static_function");
	cr_assert_str_eq(loc.module, strrchr(exe, '/') + 1);
	cr_assert_eq(loc.offset, 0);
	cr_assert_eq(loc.vaddr, elf_symbol_value(exe, "own_static_function"));

	cr_assert_eq(sym_process_resolve(p, fn + 3, &loc), 0);
	cr_assert_str_eq(loc.function, "own_static_function");
	cr_assert_eq(loc.offset, 3);
	cr_assert_eq(own_static_function(1), 48);
	sym_process_free(p);
}

/* ---- (b) the two symtest libraries ---- */

/* The lld layout: a PT_LOAD at an unaligned offset on a page it shares
 * with another PT_LOAD (otherwise the lld test proves nothing). */
static bool has_shared_page_segment(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	size_t n = 0;
	bool shared = false;

	cr_assert_geq(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	elf_getphdrnum(elf, &n);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr a, b;

		gelf_getphdr(elf, (int)i, &a);
		if (a.p_type != PT_LOAD || !(a.p_offset & 4095))
			continue;
		for (size_t j = 0; j < n; j++) {
			gelf_getphdr(elf, (int)j, &b);
			if (j != i && b.p_type == PT_LOAD &&
			    (b.p_offset & ~4095ULL) == (a.p_offset & ~4095ULL))
				shared = true;
		}
	}
	elf_end(elf);
	close(fd);
	return shared;
}

static void check_function(struct sym_process *p, void *h, const char *lib,
			   const char *name, uint64_t fbase)
{
	uint64_t addr = addr_of(lib_symbol(h, name));
	uint64_t value = elf_symbol_value(lib, name);
	struct sym_location loc;

	cr_assert_eq(sym_process_resolve(p, addr, &loc), 0);
	cr_assert_str_eq(loc.function, name, "%s in %s", name, lib);
	cr_assert_str_eq(loc.module, strrchr(lib, '/') + 1);
	cr_assert_eq(loc.offset, 0);
	cr_assert_eq(loc.vaddr, value, "%s: vaddr %#lx, ELF says %#lx", name,
		     (unsigned long)loc.vaddr, (unsigned long)value);
	cr_assert_eq(addr - loc.vaddr, fbase, "%s: bias", name);
}

/* Every mapping of the library resolves with the bias dladdr gives. */
static int check_every_mapping(struct sym_process *p, const char *lib,
			       uint64_t fbase)
{
	char real[PATH_MAX];
	struct sym_maps *maps = NULL;
	int seen = 0;

	cr_assert_not_null(realpath(lib, real));
	cr_assert_eq(sym_maps_read_path("/proc/self/maps", &maps, NULL, 0), 0);
	for (size_t i = 0; i < sym_maps_count(maps); i++) {
		const struct sym_mapping *m = sym_maps_at(maps, i);
		uint64_t probes[2] = { m->start, m->end - 1 };

		if (strcmp(m->path, real))
			continue;
		seen++;
		for (int k = 0; k < 2; k++) {
			struct sym_location loc;

			cr_assert_eq(sym_process_resolve(p, probes[k], &loc),
				     0);
			cr_assert_eq(probes[k] - loc.vaddr, fbase,
				     "%s mapping %d (%c%c%c pgoff %#lx)", lib,
				     seen, m->read ? 'r' : '-',
				     m->write ? 'w' : '-', m->exec ? 'x' : '-',
				     (unsigned long)m->pgoff);
		}
	}
	sym_maps_free(maps);
	return seen;
}

static void check_library(const char *lib)
{
	void *h = open_lib(lib);
	void *(*static_address)(void) = lib_symbol(h, "symtest_static_address");
	struct sym_process *p = open_self();
	struct sym_location loc;
	Dl_info info;
	uint64_t alpha = addr_of(lib_symbol(h, "symtest_alpha"));
	uint64_t fbase;

	cr_assert_neq(dladdr((void *)(uintptr_t)alpha, &info), 0);
	fbase = addr_of(info.dli_fbase);
	check_function(p, h, lib, "symtest_alpha", fbase);
	check_function(p, h, lib, "symtest_beta", fbase);
	check_function(p, h, lib, "symtest_asm_after", fbase);

	/* Inside a function, and a static one known only to .symtab. */
	cr_assert_eq(sym_process_resolve(p, alpha + 5, &loc), 0);
	cr_assert_str_eq(loc.function, "symtest_alpha");
	cr_assert_eq(loc.offset, 5);
	cr_assert_eq(sym_process_resolve(p, addr_of(static_address()), &loc),
		     0);
	cr_assert_str_eq(loc.function, "symtest_static");
	cr_assert_eq(loc.offset, 0);

	/* The four PT_LOADs give at least four file mappings. */
	cr_assert_geq(check_every_mapping(p, lib, fbase), 4);
	sym_process_free(p);
	dlclose(h);
}

Test(symbols, gnu_ld_library)
{
	check_library(LIB_BFD);
}

Test(symbols, lld_library)
{
	cr_assert(has_shared_page_segment(LIB_LLD),
		  "lld did not share pages between segments");
	check_library(LIB_LLD);
}

Test(symbols, module_bias_of_exec_mapping)
{
	void *h = open_lib(LIB_LLD);
	uint64_t alpha = addr_of(lib_symbol(h, "symtest_alpha"));
	struct sym_module *mod = NULL;
	struct sym_maps *maps = NULL;
	const struct sym_mapping *m;
	Dl_info info;
	uint64_t bias, off;

	cr_assert_neq(dladdr((void *)(uintptr_t)alpha, &info), 0);
	cr_assert_eq(sym_module_open_in("", LIB_LLD, NULL, &mod, NULL, 0), 0);
	cr_assert_eq(sym_maps_read_path("/proc/self/maps", &maps, NULL, 0), 0);
	m = sym_maps_find(maps, alpha);
	cr_assert(m && m->exec);
	cr_assert_eq(sym_module_bias_hint(mod, m->start, m->pgoff, m->exec, NULL, &bias),
		     0);
	cr_assert_eq(bias, addr_of(info.dli_fbase));
	cr_assert_str_eq(sym_module_function(mod, alpha - bias, &off), "symtest_alpha");
	cr_assert_eq(off, 0);
	sym_maps_free(maps);
	sym_module_free(mod);
	dlclose(h);
}

/* ---- (e) synthetic ELF files: exact layouts and symbol tables ---- */

struct fake_symbol {
	const char *name;
	uint64_t value;
	uint64_t size;
	unsigned char bind;
	unsigned char type;
	bool undefined;
};

struct fake_elf {
	uint16_t type; /* ET_DYN, ET_EXEC */
	const Elf64_Phdr *loads;
	size_t load_count;
	const struct fake_symbol *symtab; /* NULL: no .symtab */
	size_t symtab_count;
	const struct fake_symbol *dynsym; /* NULL: no .dynsym */
	size_t dynsym_count;
	bool reverse; /* write the symbols in the other order */
};

static char *add_string(char *strtab, size_t *len, const char *s,
			uint32_t *off)
{
	size_t n = strlen(s) + 1;

	strtab = realloc(strtab, *len + n);
	cr_assert_not_null(strtab);
	memcpy(strtab + *len, s, n);
	*off = (uint32_t)*len;
	*len += n;
	return strtab;
}

/* A symbol table section and its string table; buffers go to *keep. */
static void add_symbols(Elf *elf, Elf64_Word type, const struct fake_symbol *f,
			size_t n, bool reverse, void **keep)
{
	Elf_Scn *str = elf_newscn(elf), *sym = elf_newscn(elf);
	Elf64_Sym *syms = calloc(n + 1, sizeof(*syms));
	char *strtab = calloc(1, 1);
	size_t str_len = 1;
	Elf_Data *d;
	Elf64_Shdr *sh;

	for (size_t i = 0; i < n; i++) {
		const struct fake_symbol *s = &f[reverse ? n - 1 - i : i];
		Elf64_Sym *e = &syms[i + 1];

		strtab = add_string(strtab, &str_len, s->name, &e->st_name);
		e->st_value = s->value;
		e->st_size = s->size;
		e->st_info = ELF64_ST_INFO(s->bind, s->type);
		e->st_shndx = s->undefined ? SHN_UNDEF : 1;
	}
	d = elf_newdata(str);
	d->d_buf = strtab;
	d->d_size = str_len;
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	sh = elf64_getshdr(str);
	sh->sh_type = SHT_STRTAB;

	d = elf_newdata(sym);
	d->d_buf = syms;
	d->d_size = (n + 1) * sizeof(*syms);
	d->d_type = ELF_T_SYM;
	d->d_align = 8;
	sh = elf64_getshdr(sym);
	sh->sh_type = type;
	sh->sh_link = (Elf64_Word)elf_ndxscn(str);
	sh->sh_entsize = sizeof(Elf64_Sym);
	keep[0] = strtab;
	keep[1] = syms;
}

/* Writes the file; returns its path in path (a mkstemp template). */
static void write_fake_elf(const struct fake_elf *f, char *path)
{
	int fd = mkstemp(path);
	void *keep[4] = { 0 };
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf *elf;

	cr_assert_geq(fd, 0);
	cr_assert_neq(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	cr_assert_not_null(elf);
	eh = elf64_newehdr(elf);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_machine = EM_X86_64;
	eh->e_type = f->type;
	eh->e_version = EV_CURRENT;
	ph = elf64_newphdr(elf, f->load_count);
	memcpy(ph, f->loads, f->load_count * sizeof(*ph));
	if (f->symtab)
		add_symbols(elf, SHT_SYMTAB, f->symtab, f->symtab_count,
			    f->reverse, keep);
	if (f->dynsym)
		add_symbols(elf, SHT_DYNSYM, f->dynsym, f->dynsym_count,
			    f->reverse, keep + 2);
	cr_assert_geq(elf_update(elf, ELF_C_WRITE), 0, "%s", elf_errmsg(-1));
	elf_end(elf);
	close(fd);
	for (int i = 0; i < 4; i++)
		free(keep[i]);
}

static struct sym_module *open_fake(const struct fake_elf *f)
{
	char path[] = "/tmp/symtest-fake-XXXXXX";
	struct sym_module *m = NULL;
	char err[256] = "";

	write_fake_elf(f, path);
	cr_assert_eq(sym_module_open_in("", path, NULL, &m, err, sizeof(err)), 0, "%s",
		     err);
	unlink(path);
	return m;
}

#define LOAD(off, va, size, flags)                                         \
	{ .p_type = PT_LOAD, .p_offset = (off), .p_vaddr = (va),           \
	  .p_paddr = (va), .p_filesz = (size), .p_memsz = (size),          \
	  .p_flags = (flags), .p_align = 0x1000 }

/* The layout lld gave libsymtest_lld.so: every segment on file page 0. */
static const Elf64_Phdr lld_loads[] = {
	LOAD(0x000, 0x0000, 0x6dc, PF_R),
	LOAD(0x6e0, 0x16e0, 0x1c0, PF_R | PF_X),
	LOAD(0x8a0, 0x28a0, 0x188, PF_R | PF_W),
	LOAD(0xa40, 0x3a40, 0x848, PF_R | PF_W),
};

/* GNU ld's: RELRO splits the last segment's mapping at page 0x3000. */
static const Elf64_Phdr bfd_loads[] = {
	LOAD(0x0000, 0x0000, 0x4c8, PF_R),
	LOAD(0x1000, 0x1000, 0x135, PF_R | PF_X),
	LOAD(0x2e38, 0x3e38, 0x13a0, PF_R | PF_W),
};

/* A non-PIE executable at 0x400000. */
static const Elf64_Phdr exec_loads[] = {
	LOAD(0x0000, 0x400000, 0x500, PF_R),
	LOAD(0x1000, 0x401000, 0x800, PF_R | PF_X),
};

static uint64_t bias_of(const struct sym_module *m, uint64_t start,
			uint64_t pgoff, bool exec)
{
	uint64_t bias = 0;

	cr_assert_eq(sym_module_bias_hint(m, start, pgoff, exec, NULL, &bias), 0,
		     "no segment for %#lx pgoff %#lx", (unsigned long)start,
		     (unsigned long)pgoff);
	return bias;
}

Test(symbols, module_bias_hand_checked)
{
	struct fake_elf lld = { ET_DYN, lld_loads, 4, 0, 0, 0, 0, 0 };
	struct fake_elf bfd = { ET_DYN, bfd_loads, 3, 0, 0, 0, 0, 0 };
	struct fake_elf exe = { ET_EXEC, exec_loads, 2, 0, 0, 0, 0, 0 };
	struct sym_module *m = open_fake(&lld);
	uint64_t base = 0x7f1234560000, bias;

	/* r-x at base+0x1000, pgoff 0: the PF_X segment,
	 * bias = start - pgoff - (0x16e0 - 0x6e0) = base. */
	cr_assert_eq(bias_of(m, base + 0x1000, 0, true), base);
	/* r-- at base, pgoff 0: the first non-executable segment. */
	cr_assert_eq(bias_of(m, base, 0, false), base);
	cr_assert_eq(sym_module_bias_hint(m, base, 0x5000, false, NULL, &bias), -ENOENT);
	sym_module_free(m);

	/* rw- at base+0x4000, pgoff 0x3000: inside the RW segment (file
	 * 0x2e38..0x41d8), bias = start - 0x3000 - (0x3e38 - 0x2e38). */
	m = open_fake(&bfd);
	cr_assert_eq(bias_of(m, base + 0x4000, 0x3000, false), base);
	cr_assert_eq(bias_of(m, base + 0x3000, 0x2000, false), base);
	cr_assert_eq(bias_of(m, base + 0x1000, 0x1000, true), base);
	cr_assert_eq(bias_of(m, base, 0, false), base);
	sym_module_free(m);

	/* Non-PIE: 0x401000 - 0x1000 - (0x401000 - 0x1000) = 0. */
	m = open_fake(&exe);
	cr_assert_eq(bias_of(m, 0x401000, 0x1000, true), 0);
	cr_assert_eq(bias_of(m, 0x400000, 0, false), 0);
	sym_module_free(m);
}

static const struct fake_symbol fake_symtab[] = {
	/* Aliases at 0x1000: the GLOBAL with fewest underscores, then the
	 * shortest, wins; the alias sizes cover the longest. */
	{ "a_local", 0x1000, 0x40, STB_LOCAL, STT_FUNC, false },
	{ "__x_global", 0x1000, 0x10, STB_GLOBAL, STT_FUNC, false },
	{ "_x_global_long", 0x1000, 0x10, STB_GLOBAL, STT_FUNC, false },
	{ "_y_global", 0x1000, 0x10, STB_GLOBAL, STT_FUNC, false },
	{ "b_weak", 0x1000, 0x10, STB_WEAK, STT_FUNC, false },
	{ "local_fn", 0x2000, 0x10, STB_LOCAL, STT_FUNC, false },
	{ "weak_fn", 0x2000, 0x10, STB_WEAK, STT_FUNC, false },
	{ "versioned_fn@@VERS_1.0", 0x3000, 0x10, STB_GLOBAL, STT_FUNC, false },
	{ "old_fn@VERS_0.9", 0x3100, 0x10, STB_GLOBAL, STT_FUNC, false },
	{ "sizeless", 0x4000, 0, STB_GLOBAL, STT_FUNC, false },
	{ "ifunc_fn", 0x5000, 8, STB_GLOBAL, STT_GNU_IFUNC, false },
	{ "data_object", 0x6000, 0x100, STB_GLOBAL, STT_OBJECT, false },
	{ "undefined_fn", 0, 0, STB_GLOBAL, STT_FUNC, true },
	{ "zero_fn", 0, 0x10, STB_GLOBAL, STT_FUNC, false },
	{ "outer", 0x7000, 0x100, STB_GLOBAL, STT_FUNC, false },
	{ "inner", 0x7010, 0x10, STB_LOCAL, STT_FUNC, false },
};

static const struct fake_symbol fake_dynsym[] = {
	{ "from_dynsym", 0x1000, 0x10, STB_GLOBAL, STT_FUNC, false },
};

static const char *function_at(const struct sym_module *m, uint64_t vaddr,
			       uint64_t *offset)
{
	*offset = 0xdead;
	return sym_module_function(m, vaddr, offset);
}

static void check_fake_symbols(const struct sym_module *m)
{
	uint64_t off;

	/* 0x1000, 0x2000, 0x3000, 0x3100, 0x4000, 0x5000, 0x7000, 0x7010 */
	cr_assert_str_eq(function_at(m, 0x1000, &off), "_y_global");
	cr_assert_eq(off, 0);
	cr_assert_str_eq(function_at(m, 0x103f, &off), "_y_global");
	cr_assert_eq(off, 0x3f);
	cr_assert_null(function_at(m, 0x1040, &off));
	cr_assert_null(function_at(m, 0xfff, &off));
	cr_assert_str_eq(function_at(m, 0x2008, &off), "weak_fn");
	cr_assert_str_eq(function_at(m, 0x3000, &off), "versioned_fn");
	cr_assert_str_eq(function_at(m, 0x310f, &off), "old_fn");
	cr_assert_null(function_at(m, 0x3110, &off));
	cr_assert_str_eq(function_at(m, 0x4000, &off), "sizeless");
	cr_assert_null(function_at(m, 0x4001, &off));
	cr_assert_str_eq(function_at(m, 0x5007, &off), "ifunc_fn");
	cr_assert_null(function_at(m, 0x6000, &off));
	cr_assert_null(function_at(m, 0, &off));
	cr_assert_str_eq(function_at(m, 0x7015, &off), "inner");
	cr_assert_str_eq(function_at(m, 0x7080, &off), "outer");
	cr_assert_eq(off, 0x80);
	cr_assert_null(function_at(m, 0x7100, &off));
}

Test(symbols, symbol_table_rules)
{
	struct fake_elf f = {
		ET_DYN, lld_loads, 4, fake_symtab,
		sizeof(fake_symtab) / sizeof(fake_symtab[0]), fake_dynsym, 1,
		false,
	};
	struct sym_module *m = open_fake(&f);

	check_fake_symbols(m); /* .symtab wins over .dynsym */
	sym_module_free(m);
	f.reverse = true;      /* the same choices whatever the order */
	m = open_fake(&f);
	check_fake_symbols(m);
	sym_module_free(m);
}

Test(symbols, dynsym_when_no_symtab)
{
	struct fake_elf f = { ET_DYN, lld_loads, 4, NULL, 0, fake_dynsym, 1,
			      false };
	struct sym_module *m = open_fake(&f);
	uint64_t off;

	cr_assert_str_eq(function_at(m, 0x1004, &off), "from_dynsym");
	cr_assert_eq(off, 4);
	sym_module_free(m);

	f.dynsym = NULL; /* no symbols at all: still a module */
	m = open_fake(&f);
	cr_assert_null(function_at(m, 0x1004, &off));
	sym_module_free(m);
}

/* ---- (c) an address past a symbol's .size ---- */

Test(symbols, past_symbol_size)
{
	const char *libs[] = { LIB_BFD, LIB_LLD };

	for (int i = 0; i < 2; i++) {
		void *h = open_lib(libs[i]);
		uint64_t shrt = addr_of(lib_symbol(h, "symtest_asm_short"));
		uint64_t after = addr_of(lib_symbol(h, "symtest_asm_after"));
		struct sym_process *p = open_self();
		struct sym_location loc;

		cr_assert_gt(after, shrt + 1);
		cr_assert_eq(sym_process_resolve(p, shrt, &loc), 0);
		cr_assert_str_eq(loc.function, "symtest_asm_short");
		for (uint64_t a = shrt + 1; a < after; a++) {
			cr_assert_eq(sym_process_resolve(p, a, &loc), 0);
			cr_assert_null(loc.function, "%s: %#lx is %s",
				       libs[i], (unsigned long)(a - shrt),
				       loc.function);
			cr_assert_eq(loc.offset, 0);
			cr_assert_str_eq(loc.module, strrchr(libs[i], '/') + 1);
		}
		cr_assert_eq(sym_process_resolve(p, after, &loc), 0);
		cr_assert_str_eq(loc.function, "symtest_asm_after");
		sym_process_free(p);
		dlclose(h);
	}
}

/* ---- (d) libc, which has only .dynsym and versioned names ---- */

Test(symbols, libc_function)
{
	struct sym_process *p = open_self();
	struct sym_location loc;
	uint64_t fn = addr_of(dlsym(RTLD_DEFAULT, "getpid"));

	cr_assert_neq(fn, 0);
	cr_assert_eq(sym_process_resolve(p, fn, &loc), 0);
	cr_assert_not_null(loc.function);
	cr_assert_null(strchr(loc.function, '@'), "%s", loc.function);
	cr_assert_not_null(strstr(loc.function, "getpid"), "%s",
			   loc.function);
	cr_assert_eq(strncmp(loc.module, "libc", 4), 0, "%s", loc.module);
	sym_process_free(p);
}

/* ---- (f) no mapping, anonymous, non-ELF and deleted files ---- */

Test(symbols, unknown_and_anonymous)
{
	size_t len = 4 * 4096;
	uint8_t *anon = mmap(NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sym_process *p;
	struct sym_location loc;

	cr_assert_neq(anon, MAP_FAILED);
	p = open_self();
	cr_assert_eq(sym_process_resolve(p, 0x10, &loc), 0);
	cr_assert_str_eq(loc.module, "[unknown]");
	cr_assert_null(loc.function);
	cr_assert_eq(loc.vaddr, 0x10);

	cr_assert_eq(sym_process_resolve(p, addr_of(anon + 100), &loc), 0);
	cr_assert_str_eq(loc.module, "[anon]");
	cr_assert_null(loc.function);
	cr_assert_eq(loc.vaddr, addr_of(anon + 100));
	sym_process_free(p);
	munmap(anon, len);
}

Test(symbols, file_that_is_not_elf)
{
	char path[] = "/tmp/symtest-notelf-XXXXXX";
	int fd = mkstemp(path);
	char text[8192];
	uint8_t *map;
	struct sym_process *p;
	struct sym_location loc;

	cr_assert_geq(fd, 0);
	memset(text, 'x', sizeof(text));
	cr_assert_eq(write(fd, text, sizeof(text)), (ssize_t)sizeof(text));
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	cr_assert_neq(map, MAP_FAILED);
	p = open_self();
	for (int i = 0; i < 2; i++) { /* the second from the cache */
		cr_assert_eq(sym_process_resolve(p, addr_of(map + 16), &loc),
			     0);
		cr_assert_str_eq(loc.module, strrchr(path, '/') + 1);
		cr_assert_null(loc.function);
		cr_assert_eq(loc.vaddr, 4096 + 16); /* the file offset */
	}
	sym_process_free(p);
	munmap(map, 4096);
	close(fd);
	unlink(path);
}

Test(symbols, deleted_library)
{
	char path[] = "/tmp/libsymtest-deleted-XXXXXX";
	int fd = mkstemp(path);
	struct sym_process *p;
	struct sym_location loc;
	uint64_t alpha;
	void *h;

	cr_assert_geq(fd, 0);
	close(fd);
	copy_file(LIB_BFD, path);
	h = open_lib(path);
	alpha = addr_of(lib_symbol(h, "symtest_alpha"));
	unlink(path);
	p = open_self();
	cr_assert_eq(sym_process_resolve(p, alpha + 2, &loc), 0);
	cr_assert_str_eq(loc.module, strrchr(path, '/') + 1);
	cr_assert_str_eq(loc.function, "symtest_alpha");
	cr_assert_eq(loc.offset, 2);
	sym_process_free(p);
	dlclose(h);
}

static void sleep_ms(long ms)
{
	/* (tv_nsec must stay under a second: 1050 ms as nanoseconds made
	 * nanosleep fail at once with EINVAL.) */
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

Test(symbols, maps_reread_rate_limited)
{
	struct sym_process *p = open_self();
	uint64_t gen = sym_process_generation(p), t0, t1;
	uint8_t *fresh;
	bool seen_at_once, reused, moved;
	int attempt = 0;

	cr_assert_eq(gen, 1);
	/* Code mappings unchanged: the generation stands. */
	cr_assert_eq(sym_process_reload(p), 0);
	cr_assert_eq(sym_process_generation(p), 1);

	/*
	 * Executable (JIT-like) memory is code: its arrival is a change, but
	 * an unknown address just after a read waits for the next 100 ms.
	 * (Maps that changed in the last second, the first read's included,
	 * are re-read every 1 ms: that second is waited out.) An attempt
	 * this test took 50 ms or more over (preempted on a busy machine)
	 * proves nothing and is made again.
	 */
	for (;;) {
		sleep_ms(1050);
		gen = sym_process_generation(p);
		t0 = now_ns();
		cr_assert_eq(sym_process_reload(p), 0);
		moved = sym_process_generation(p) != gen;
		gen = sym_process_generation(p);
		fresh = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
		cr_assert_neq(fresh, MAP_FAILED);
		/* (Criterion's own thread may have unmapped, since the read,
		 * the range the kernel gives us: then it is known already.) */
		reused = sym_process_find(p, addr_of(fresh)) != NULL;
		seen_at_once = sym_process_mapping(p, addr_of(fresh)) != NULL;
		t1 = now_ns();
		/* (Nor if code was mapped or unmapped during the sleep, by
		 * Criterion or the sanitizers: then this read starts another
		 * second of 1 ms re-reads.) */
		if (!reused && !moved && t1 - t0 < 50 * 1000000ULL)
			break;
		munmap(fresh, 4096);
		cr_assert_lt(++attempt, 10, "every attempt took 50 ms or more or got a known range");
	}
	cr_assert_not(seen_at_once, "found at once, %llu us after a read",
		      (unsigned long long)((t1 - t0) / 1000));
	cr_assert_eq(sym_process_generation(p), gen);
	sleep_ms(120);
	cr_assert_not_null(sym_process_mapping(p, addr_of(fresh)));
	cr_assert_eq(sym_process_generation(p), gen + 1);
	/* Known now. (A miss right after this re-read would wait 1 ms only:
	 * the maps have just changed.) */
	cr_assert_not_null(sym_process_mapping(p, addr_of(fresh)));
	sym_process_free(p);
	munmap(fresh, 4096);
}

Test(symbols, open_errors)
{
	struct sym_module *mod = NULL;
	struct sym_process *p = NULL;
	char err[256] = "";

	cr_assert_eq(sym_module_open_in("", "/nonexistent/lib.so", NULL, &mod, err,
				     sizeof(err)), -ENOENT);
	cr_assert_neq(err[0], '\0');
	err[0] = '\0';
	cr_assert_eq(sym_module_open_in("", "/proc/self/status", NULL, &mod, err,
				     sizeof(err)), -ENOEXEC);
	cr_assert_neq(err[0], '\0');
	cr_assert_lt(sym_process_open(0x7ffffff0, &p, err, sizeof(err)), 0);
	cr_assert_null(p);
}
