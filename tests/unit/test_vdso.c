// SPDX-License-Identifier: MIT
/*
 * The [vdso] image is read out of the target: from another process, at
 * the address it maps it, and only when it holds an ELF image.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/internal.h"

#define MAP_LEN (64 * 1024)

/* A child whose copy of buf differs from ours at byte at; its pid. */
static pid_t child_changing(uint8_t *buf, size_t at, uint8_t value)
{
	int ready[2];
	pid_t pid;
	char c = 0;

	cr_assert_eq(pipe(ready), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		buf[at] = value;
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(ready[1]);
	return pid;
}

static void child_end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

Test(vdso, the_image_is_read_from_the_target)
{
	const uint8_t *ours;
	uint8_t *buf, *copy = NULL;
	size_t len, got = 0, at;
	pid_t pid;

	cr_assert_eq(sym_vdso_bytes(&ours, &len), 0);
	cr_assert_leq(len, MAP_LEN);
	buf = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(buf, MAP_FAILED);
	memcpy(buf, ours, len);
	at = len / 2;
	pid = child_changing(buf, at, (uint8_t)~ours[at]);
	cr_assert_eq(sym_vdso_read(pid, (uintptr_t)buf,
				   (uintptr_t)buf + MAP_LEN, &copy, &got), 0);
	child_end(pid);
	cr_expect_eq(got, len, "the image's length from its ELF header");
	cr_expect_eq(copy[at], (uint8_t)~ours[at], "the target's bytes");
	cr_expect_eq(memcmp(copy, ours, at), 0);
	free(copy);
	munmap(buf, MAP_LEN);
}

Test(vdso, memory_without_an_elf_image_is_refused)
{
	uint8_t *buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *copy = NULL;
	size_t got = 0;
	pid_t pid;

	cr_assert_neq(buf, MAP_FAILED);
	memset(buf, 0x7f, 8192);
	pid = child_changing(buf, 0, 0);
	cr_expect_eq(sym_vdso_read(pid, (uintptr_t)buf, (uintptr_t)buf + 8192,
				   &copy, &got), -ENOEXEC);
	cr_expect_null(copy);
	cr_expect_eq(sym_vdso_read(pid, (uintptr_t)buf,
				   (uintptr_t)buf + 1024 * 1024, &copy, &got),
		     -EINVAL, "more than a vdso's size is not read");
	child_end(pid);
	cr_expect_eq(sym_vdso_read(pid, (uintptr_t)buf, (uintptr_t)buf + 8192,
				   &copy, &got), -ESRCH, "a process gone");
	munmap(buf, 8192);
}
