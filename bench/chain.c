// SPDX-License-Identifier: MIT
/*
 * The benchmark's deep target: waits for one byte on stdin (so the
 * profiler can attach first), then calls ROUNDS times into libchain's
 * 13-frame chain, which computes at the bottom. No frame pointers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t chain_entry(uint64_t x, uint64_t n);

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 100;
	char go;

	if (read(0, &go, 1) != 1)
		return 1;
	for (uint64_t r = 0; r < rounds; r++)
		sink += chain_entry(r, 4000000);
	return 0;
}
