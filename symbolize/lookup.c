// SPDX-License-Identifier: MIT
/*
 * Symbols by name: where a process has a given variable (the Python
 * reader's _PyRuntime, Py_Version, PyCode_Type). Rare lookups, so the
 * file's tables are scanned each time rather than indexed.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/process_impl.h"

/* name, or name@VERSION / name@@VERSION */
static bool same_name(const char *sym, const char *name, size_t len)
{
	return !strncmp(sym, name, len) && (sym[len] == 0 || sym[len] == '@');
}

static int find_in(Elf *elf, Elf64_Word type, const char *name, uint64_t *value)
{
	size_t len = strlen(name);
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && same_name(n, name, len)) {
				*value = s.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int sym_process_symbol(struct sym_process *p, const struct sym_mapping *m,
		       const char *name, uint64_t *addr)
{
	struct mapping_state *s;
	struct module_entry *e;
	uint64_t value;
	Elf *elf;
	int fd, ret;

	if (!m || m->path[0] != '/' || !(e = module_entry_at(p, m, &s)) || !e->open_path)
		return -ENOENT;
	fd = sym_open_regular(e->open_path);
	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	ret = find_in(elf, SHT_DYNSYM, name, &value);
	if (ret == -ENOENT)
		ret = find_in(elf, SHT_SYMTAB, name, &value);
	elf_end(elf);
	close(fd);
	if (!ret)
		*addr = s->bias + value;
	return ret;
}

const struct sym_maps *sym_process_maps(struct sym_process *p)
{
	return p->maps;
}
