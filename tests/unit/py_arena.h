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

struct arena {
	uint8_t *mem;
	size_t used;
};

static ssize_t arena_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct arena *a = ctx;
	uint64_t base = (uint64_t)(uintptr_t)a->mem;

	if (addr < base || addr >= base + ARENA)
		return -EFAULT;
	if (len > base + ARENA - addr)
		len = (size_t)(base + ARENA - addr);
	memcpy(buf, (void *)(uintptr_t)addr, len);
	return (ssize_t)len;
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
