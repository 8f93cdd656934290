// SPDX-License-Identifier: MIT
/*
 * A recursion DEPTH frames deep (default 500), each frame with 200 bytes
 * of locals (about 240 bytes of stack), spinning at the bottom for SECONDS:
 * the whole stack is about 120 KiB, beyond the default 64 KiB copy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void bottom_spin(uint64_t end)
{
	while (wall_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 6364136223846793005ull + (uint64_t)i;
}

__attribute__((noinline)) static void recurse(int depth, uint64_t end)
{
	volatile char pad[200];

	pad[depth % 200] = (char)depth;
	if (depth > 1)
		recurse(depth - 1, end);
	else
		bottom_spin(end);
	sink += (uint64_t)pad[depth % 200];
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 500;
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;

	recurse(depth, wall_ns() + (uint64_t)(seconds * 1e9));
	return 0;
}
