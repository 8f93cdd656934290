// SPDX-License-Identifier: MIT
/* Reading the target: memory without stopping it, registers of a stopped thread. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sampler/internal.h"

/* One syscall for the whole range; a short read at the end of a mapping is
 * normal and returns the bytes read. */
ssize_t remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n < 0 ? -errno : n;
}

/* Several ranges in one syscall; it stops at the first that faults. */
ssize_t remote_readv(pid_t pid, const struct iovec *local, const struct iovec *remote, int n)
{
	ssize_t got = process_vm_readv(pid, local, 1, remote, (unsigned long)n, 0);

	return got < 0 ? -errno : got;
}

int regs_get(pid_t tid, struct user_regs_struct *regs)
{
	struct iovec iov = { .iov_base = regs, .iov_len = sizeof(*regs) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	/* A 32-bit (compat) tracee answers with the shorter i386 layout. */
	if (iov.iov_len != sizeof(*regs))
		return -ENOEXEC;
	return 0;
}

int regs_set(pid_t tid, const struct user_regs_struct *regs)
{
	struct iovec iov = { .iov_base = (void *)regs, .iov_len = sizeof(*regs) };

	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	return 0;
}

/* Whether the program the process runs is 64-bit: 1, 0, or -errno. */
int proc_is_64bit(pid_t pid)
{
	char path[64];
	unsigned char ident[5];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, ident, sizeof(ident));
	close(fd);
	if (n != sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	return ident[EI_CLASS] == ELFCLASS64;
}
