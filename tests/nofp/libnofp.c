// SPDX-License-Identifier: MIT
/* A shared library built without frame pointers, for the DWARF tests. */
#include <stdint.h>

__attribute__((noinline)) uint64_t lib_leaf_b(uint64_t n)
{
	volatile uint64_t x = 3;

	for (uint64_t i = 0; i < n; i++)
		x = x * 2862933555777941757ull + i;
	return x;
}

/* Keeps lib_leaf_b one call below the caller, as library code often is. */
__attribute__((noinline)) uint64_t lib_entry(uint64_t n)
{
	return lib_leaf_b(n) + 1;
}
