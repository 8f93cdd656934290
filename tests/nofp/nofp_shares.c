// SPDX-License-Identifier: MIT
/*
 * Accuracy without frame pointers (-O2 -fomit-frame-pointer, here and in
 * libnofp.so): the main thread alternates leaf_a (about 2/3 of its CPU
 * time, in this program) and lib_leaf_b (1/3, in the library), timing each
 * with its own thread CPU clock and with the wall clock: "leaf_a NS
 * lib_leaf_b NS total NS sink N wall_a NS wall_b NS wall_total NS". The
 * wall clock's is the truth for a sampler of running and runnable threads
 * (on a busy machine, a thread preempted in leaf_a waits there).
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
__attribute__((noinline)) static uint64_t step(uint64_t *a, uint64_t *b, uint64_t *wa, uint64_t *wb)
{
	uint64_t w0 = wall_ns(), t0 = thread_cpu_ns(), t1, t2, w1, w2, sink;

	sink = leaf_a(4000000);
	t1 = thread_cpu_ns();
	w1 = wall_ns();
	sink += lib_entry(2000000);
	t2 = thread_cpu_ns();
	w2 = wall_ns();
	*a += t1 - t0;
	*b += t2 - t1;
	*wa += w1 - w0;
	*wb += w2 - w1;
	return sink;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 4.0;
	uint64_t end = wall_ns() + (uint64_t)(seconds * 1e9);
	uint64_t a = 0, b = 0, start = thread_cpu_ns(), sink = 0, wa = 0, wb = 0, wall_start = wall_ns();

	while (wall_ns() < end)
		sink += step(&a, &b, &wa, &wb);
	printf("leaf_a %llu lib_leaf_b %llu total %llu sink %llu wall_a %llu wall_b %llu wall_total %llu\n",
	       (unsigned long long)a, (unsigned long long)b, (unsigned long long)(thread_cpu_ns() - start),
	       (unsigned long long)(sink & 1), (unsigned long long)wa, (unsigned long long)wb,
	       (unsigned long long)(wall_ns() - wall_start));
	return 0;
}
