// SPDX-License-Identifier: MIT
/*
 * The benchmark's CPU-bound target: waits for one byte on stdin (so the
 * profiler can attach first), then runs a fixed amount of work in a few
 * nested functions, so a sampled stack has some depth.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static uint64_t inner(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

__attribute__((noinline)) static uint64_t middle(uint64_t x, uint64_t n)
{
	for (int i = 0; i < 100; i++)
		x = inner(x, n / 100);
	return x;
}

__attribute__((noinline)) static uint64_t outer(uint64_t rounds, uint64_t n)
{
	uint64_t x = 1;

	for (uint64_t r = 0; r < rounds; r++)
		x = middle(x, n);
	return x;
}

/* Keeps the work from being optimized away. */
static volatile uint64_t sink;

int main(int argc, char **argv)
{
	uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 100;
	char go;

	if (read(0, &go, 1) != 1)
		return 1;
	sink = outer(rounds, 4000000);
	return 0;
}
