// SPDX-License-Identifier: MIT
/*
 * Accuracy without frame pointers (-O2 -fomit-frame-pointer, here and in
 * libnofp.so): the main thread alternates leaf_a (about 2/3 of its CPU
 * time, in this program) and lib_leaf_b (1/3, in the library), timing each
 * with its own thread CPU clock: "leaf_a NS lib_leaf_b NS total NS".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t lib_entry(uint64_t n);

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t leaf_a(uint64_t n)
{
	volatile uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

/* A frame between main and the leaves, with locals of its own. */
__attribute__((noinline)) static uint64_t step(uint64_t *a, uint64_t *b)
{
	uint64_t t0 = thread_cpu_ns(), t1, t2, sink;

	sink = leaf_a(4000000);
	t1 = thread_cpu_ns();
	sink += lib_entry(2000000);
	t2 = thread_cpu_ns();
	*a += t1 - t0;
	*b += t2 - t1;
	return sink;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 4.0;
	uint64_t end = wall_ns() + (uint64_t)(seconds * 1e9);
	uint64_t a = 0, b = 0, start = thread_cpu_ns(), sink = 0;

	while (wall_ns() < end)
		sink += step(&a, &b);
	printf("leaf_a %llu lib_leaf_b %llu total %llu sink %llu\n", (unsigned long long)a,
	       (unsigned long long)b, (unsigned long long)(thread_cpu_ns() - start),
	       (unsigned long long)(sink & 1));
	return 0;
}
