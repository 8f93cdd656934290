// SPDX-License-Identifier: MIT
/*
 * MiniDebugInfo: build/tests/libsymtest_mini.so is libsymtest.so stripped,
 * with the functions .dynsym lacks (symtest_static) in an xz-compressed
 * .symtab-only ELF in .gnu_debugdata (tests/unit/symtest_variant.sh).
 * Runs from the repository root.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/internal.h"
#include "symbolize/symbolize.h"
#include "tests/unit/self_helpers.h"

#define LIB_FULL "build/tests/libsymtest.so"
#define LIB_MINI "build/tests/libsymtest_mini.so"

/* A symbol's value in the unstripped library. */
static uint64_t full_symbol(const char *name)
{
	int fd = open(LIB_FULL, O_RDONLY);
	Elf_Scn *scn = NULL;
	uint64_t value = 0;
	Elf *elf;

	cr_assert_geq(fd, 0, "%s: build the symtest libraries first", LIB_FULL);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	while (!value && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			gelf_getsym(d, (int)i, &s);
			if (!strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name)) {
				value = s.st_value;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	cr_assert_neq(value, 0, "%s has no symbol %s", LIB_FULL, name);
	return value;
}

/* Where a section's contents are in a file; 0 when it has none. */
static uint64_t section_offset(const char *path, const char *want, size_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	uint64_t offset = 0;
	size_t shstrndx;
	Elf *elf;

	cr_assert_geq(fd, 0, "%s: build the symtest libraries first", path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type == SHT_SYMTAB && !strcmp(want, ".symtab"))
			offset = sh.sh_offset;
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), want)) {
			offset = sh.sh_offset;
			*size = sh.sh_size;
		}
	}
	elf_end(elf);
	close(fd);
	return offset;
}

static struct sym_module *open_module(const char *path)
{
	struct sym_module *m = NULL;
	char err[256] = "";

	cr_assert_eq(sym_module_open_in("", path, NULL, &m, err, sizeof(err)), 0, "%s", err);
	return m;
}

static void expect_function(struct sym_module *m, const char *name)
{
	uint64_t vaddr = full_symbol(name), off = 99;
	const char *got = sym_module_function(m, vaddr + 1, &off);

	cr_assert_not_null(got, "no symbol for %s", name);
	cr_expect_str_eq(got, name);
	cr_expect_eq(off, 1);
}

Test(minidebuginfo, the_test_library_is_what_it_should_be)
{
	size_t size = 0;

	cr_assert_eq(section_offset(LIB_MINI, ".symtab", &size), 0,
		     "%s still has a .symtab", LIB_MINI);
	cr_assert_neq(section_offset(LIB_MINI, ".gnu_debugdata", &size), 0);
	cr_assert_gt(size, 0);
}

Test(minidebuginfo, symbols_of_dynsym_and_debugdata_together)
{
	struct sym_module *m = open_module(LIB_MINI);

	expect_function(m, "symtest_static");  /* only in .gnu_debugdata */
	expect_function(m, "symtest_alpha");   /* only in .dynsym */
	expect_function(m, "symtest_beta");
	sym_module_free(m);
}

Test(minidebuginfo, through_a_process)
{
	void *h = dlopen(LIB_MINI, RTLD_NOW | RTLD_LOCAL);
	struct sym_process *p = NULL;
	struct sym_location loc;
	void *(*static_address)(void);
	char err[256] = "";

	cr_assert_not_null(h, "dlopen %s: %s", LIB_MINI, dlerror());
	*(void **)&static_address = dlsym(h, "symtest_static_address");
	cr_assert_not_null(static_address);
	cr_assert_eq(sym_process_open(getpid(), &p, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(sym_process_resolve(p, (uint64_t)(uintptr_t)static_address(),
					 &loc), 0);
	cr_expect_str_eq(loc.module, "libsymtest_mini.so");
	cr_assert_not_null(loc.function);
	cr_expect_str_eq(loc.function, "symtest_static");
	sym_process_free(p);
	dlclose(h);
}

/* Damaged xz data: no crash, and the .dynsym symbols still there. */
Test(minidebuginfo, damaged_data_leaves_dynsym)
{
	char path[] = "/tmp/libsymtest-mini-XXXXXX";
	int fd = mkstemp(path);
	size_t size = 0;
	uint64_t off = section_offset(LIB_MINI, ".gnu_debugdata", &size);
	const char *cut_at[] = { "middle", "header" };
	struct sym_module *m;
	uint64_t unused;

	cr_assert_geq(fd, 0);
	close(fd);
	for (int i = 0; i < 2; i++) {
		char junk[64];

		copy_file(LIB_MINI, path);
		memset(junk, 0x5a, sizeof(junk));
		fd = open(path, O_WRONLY);
		cr_assert_geq(fd, 0);
		cr_assert_eq(pwrite(fd, junk, sizeof(junk),
				    (off_t)(off + (i == 0 ? size / 2 : 0))),
			     (ssize_t)sizeof(junk), "%s", cut_at[i]);
		close(fd);
		m = open_module(path);
		expect_function(m, "symtest_alpha");
		cr_expect_null(sym_module_function(m, full_symbol("symtest_static"),
						   &unused), "%s", cut_at[i]);
		sym_module_free(m);
	}
	unlink(path);
}
