/* SPDX-License-Identifier: MIT */
/* Shared by elf_module.c and elf_symbols.c only: a module as loaded. */
#ifndef TRAINSAMPLE_SYMBOLIZE_ELF_MODULE_IMPL_H
#define TRAINSAMPLE_SYMBOLIZE_ELF_MODULE_IMPL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * The function symbols of one or more files linked at the same addresses
 * (a module's .dynsym and its MiniDebugInfo .symtab), each file's .symtab
 * or else .dynsym, one per address, into m. *full: some came from a
 * .symtab, not only .dynsym.
 */
int elf_symbols_read(Elf *const *elfs, size_t elf_count, struct sym_module *m, bool *full);

#endif
