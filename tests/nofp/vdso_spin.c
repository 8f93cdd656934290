// SPDX-License-Identifier: MIT
/* Spins in clock_gettime, which runs in the vdso, for SECONDS (default 2). */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static uint64_t read_clock_loop(double seconds)
{
	struct timespec ts, start;
	uint64_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		n++;
	} while ((double)(ts.tv_sec - start.tv_sec) + (double)(ts.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return n;
}

int main(int argc, char **argv)
{
	return read_clock_loop(argc > 1 ? atof(argv[1]) : 2.0) ? 0 : 1;
}
