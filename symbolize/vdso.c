// SPDX-License-Identifier: MIT
/*
 * [vdso] has no file: its image is read out of the target, once per
 * process (a few pages, after the target is resumed), and its symbols and
 * .eh_frame come from that copy. The kernel maps the same image into every
 * 64-bit process, so where the target cannot be read trainsample's own
 * (at AT_SYSINFO_EHDR) stands in for it.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/uio.h>

#include "symbolize/internal.h"

#define VDSO_MAX (64 * 1024)

/* The image's length: its section headers come last. 0 if not an ELF. */
static size_t vdso_image_len(const uint8_t *p, size_t avail)
{
	Elf64_Ehdr eh;
	uint64_t end;

	if (avail < sizeof(eh))
		return 0;
	memcpy(&eh, p, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
	if (end < sizeof(eh) || end > avail)
		return 0;
	return (size_t)end;
}

int sym_vdso_bytes(const uint8_t **data, size_t *len)
{
	const uint8_t *p = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);

	if (!p)
		return -ENOENT;
	/* Our own vdso is mapped whole, so its header can be trusted. */
	*len = vdso_image_len(p, VDSO_MAX);
	if (!*len)
		return -ENOEXEC;
	*data = p;
	return 0;
}

int sym_vdso_read(int pid, uint64_t start, uint64_t end, uint8_t **data,
		  size_t *len)
{
	size_t want = end - start;
	struct iovec local, remote;
	uint8_t *buf;
	ssize_t n;

	if (end <= start || want > VDSO_MAX)
		return -EINVAL;
	buf = malloc(want);
	if (!buf)
		return -ENOMEM;
	local = (struct iovec){ .iov_base = buf, .iov_len = want };
	remote = (struct iovec){ .iov_base = (void *)(uintptr_t)start,
				 .iov_len = want };
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0 || !(*len = vdso_image_len(buf, (size_t)n))) {
		int ret = n < 0 ? -errno : -ENOEXEC;

		free(buf);
		return ret;
	}
	*data = buf;
	return 0;
}
