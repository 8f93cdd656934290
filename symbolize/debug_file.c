// SPDX-License-Identifier: MIT
/*
 * Separate debug files: a stripped library (Debian's libc has only
 * .dynsym) keeps its full .symtab in a debug file found by build-id,
 * /usr/lib/debug/.build-id/xx/rest.debug, or by its .gnu_debuglink name
 * beside it, in .debug/ or under /usr/lib/debug. Paths are looked up under
 * the target's root first, so containers find their own.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/internal.h"

#define BUILD_ID_MAX 64

struct build_id {
	unsigned char bytes[BUILD_ID_MAX];
	size_t len;
};

static void read_build_id(Elf *elf, struct build_id *id)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	id->len = 0;
	if (n > 0 && n <= BUILD_ID_MAX) {
		memcpy(id->bytes, p, (size_t)n);
		id->len = (size_t)n;
	}
}

/* A candidate is used only if it is ELF and, where both have one, its
 * build-id is the module's: a stale debug file gives wrong names. */
static int open_candidate(const char *path, const struct build_id *want, Elf **out)
{
	struct build_id got;
	Elf *elf;
	int fd = sym_open_regular(path);

	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	read_build_id(elf, &got);
	if (want->len && (got.len != want->len || memcmp(got.bytes, want->bytes, want->len))) {
		elf_end(elf);
		close(fd);
		return -ESTALE;
	}
	*out = elf;
	return fd;
}

static int try_path(const char *root, const char *path, const struct build_id *want, Elf **out)
{
	char full[PATH_MAX];
	int n;

	if (root && root[0]) {
		n = snprintf(full, sizeof(full), "%s%s", root, path);
		if (n > 0 && (size_t)n < sizeof(full)) {
			int fd = open_candidate(full, want, out);

			if (fd >= 0)
				return fd;
		}
	}
	return open_candidate(path, want, out);
}

static int by_build_id(const char *root, const struct build_id *id, Elf **out)
{
	static const char hex[] = "0123456789abcdef";
	char path[PATH_MAX], *p = path;

	if (id->len < 2)
		return -ENOENT;
	/* Hex by hand: sprintf's p += ... stopped gcc 12 -O3 with ASan/UBSan
	 * on a false "null destination pointer". */
	p = stpcpy(p, "/usr/lib/debug/.build-id/");
	for (size_t i = 0; i < id->len; i++) {
		*p++ = hex[id->bytes[i] >> 4];
		*p++ = hex[id->bytes[i] & 15];
		if (i == 0)
			*p++ = '/';
	}
	strcpy(p, ".debug");
	return try_path(root, path, id, out);
}

static int by_debuglink(const char *root, const char *module_path, Elf *elf,
			const struct build_id *id, Elf **out)
{
	static const char *const patterns[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(elf, &crc);
	char dir[PATH_MAX], path[PATH_MAX];
	const char *slash;

	if (!name || !name[0] || strchr(name, '/') || !module_path)
		return -ENOENT;
	slash = strrchr(module_path, '/');
	if (!slash || (size_t)(slash - module_path) >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, module_path, (size_t)(slash - module_path));
	dir[slash - module_path] = '\0';
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		int n = snprintf(path, sizeof(path), patterns[i], dir, name);
		int fd;

		if (n < 0 || (size_t)n >= sizeof(path) || !strcmp(path, module_path))
			continue;
		fd = try_path(root, path, id, out);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int sym_debug_file_open(Elf *elf, const char *root, const char *module_path, Elf **out)
{
	struct build_id id;
	int fd;

	read_build_id(elf, &id);
	fd = by_build_id(root, &id, out);
	if (fd < 0)
		fd = by_debuglink(root, module_path, elf, &id, out);
	return fd;
}
