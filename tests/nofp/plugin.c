// SPDX-License-Identifier: MIT
/* A plugin built twice (NAME=alpha, NAME=betaa): same layout, other names. */
#include <stdint.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

__attribute__((noinline)) uint64_t CAT(NAME, _inner)(uint64_t n)
{
	volatile uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

__attribute__((noinline)) uint64_t CAT(NAME, _entry)(uint64_t n)
{
	return CAT(NAME, _inner)(n) + 1;
}

uint64_t entry(uint64_t n)
{
	return CAT(NAME, _entry)(n) + 2;
}
