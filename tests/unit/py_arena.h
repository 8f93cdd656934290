/* SPDX-License-Identifier: MIT */
/*
 * A fake target's memory for the CPython reader's unit tests: one block,
 * read by the reader through arena_read (a read outside it fails, as a
 * read of an unmapped address does), objects placed in it with alloc
 * (zeroed, 16-byte aligned). The including test defines ARENA, the size.
 */
#ifndef TRAINSAMPLE_TESTS_PY_ARENA_H
#define TRAINSAMPLE_TESTS_PY_ARENA_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

struct arena {
	uint8_t *mem;
	size_t used;
	int reads, readvs; /* calls, as a target's syscalls */
};

static ssize_t arena_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct arena *a = ctx;
	uint64_t base = (uint64_t)(uintptr_t)a->mem;

	a->reads++;
	if (addr < base || addr >= base + ARENA)
		return -EFAULT;
	if (len > base + ARENA - addr)
		len = (size_t)(base + ARENA - addr);
	memcpy(buf, (void *)(uintptr_t)addr, len);
	return (ssize_t)len;
}

/* As process_vm_readv: ranges in order into one buffer, up to the first
 * that is not all readable. */
static inline ssize_t arena_readv(void *ctx, const struct iovec *local, const struct iovec *remote, int n)
{
	struct arena *a = ctx;
	uint64_t base = (uint64_t)(uintptr_t)a->mem;
	size_t done = 0;

	a->readvs++;
	for (int i = 0; i < n; i++) {
		uint64_t addr = (uint64_t)(uintptr_t)remote[i].iov_base;

		if (addr < base || addr + remote[i].iov_len > base + ARENA ||
		    done + remote[i].iov_len > local->iov_len)
			break;
		memcpy((uint8_t *)local->iov_base + done, remote[i].iov_base, remote[i].iov_len);
		done += remote[i].iov_len;
	}
	return (ssize_t)done;
}

static uint64_t alloc(struct arena *a, size_t len)
{
	uint64_t at = (uint64_t)(uintptr_t)(a->mem + a->used);

	a->used += (len + 15) & ~(size_t)15;
	cr_assert(a->used <= ARENA);
	memset((void *)(uintptr_t)at, 0, len);
	return at;
}

#endif
