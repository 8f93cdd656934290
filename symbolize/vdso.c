// SPDX-License-Identifier: MIT
/*
 * [vdso] has no file. The kernel maps one and the same vdso image into
 * every 64-bit process, so trainsample's own (at AT_SYSINFO_EHDR) is the
 * target's: its symbols and its .eh_frame come from there, and the target
 * is never read.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>

#include "symbolize/internal.h"

#define VDSO_MAX (64 * 1024)

int sym_vdso_bytes(const uint8_t **data, size_t *len)
{
	const uint8_t *p = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	Elf64_Ehdr eh;
	uint64_t end;

	if (!p)
		return -ENOENT;
	memcpy(&eh, p, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	/* The section headers come last in the image. */
	end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
	if (end < sizeof(eh) || end > VDSO_MAX)
		return -ENOEXEC;
	*data = p;
	*len = (size_t)end;
	return 0;
}
