// SPDX-License-Identifier: MIT
/*
 * Accuracy target: the main thread alternates between hot_a (about 2/3 of
 * its CPU time) and hot_b (1/3) for SECONDS, timing each with its own
 * thread CPU clock and with the wall clock, and prints the truth:
 * "hot_a NS hot_b NS total NS sink N wall_a NS wall_b NS wall_total NS".
 * On a busy machine the two differ: a thread preempted in hot_a spends
 * wall time there, waiting for a CPU, which a sampler of running and
 * runnable threads counts as hot_a's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

__attribute__((noinline)) static uint64_t hot_a(uint64_t n)
{
	volatile uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

__attribute__((noinline)) static uint64_t hot_b(uint64_t n)
{
	volatile uint64_t x = 3;

	for (uint64_t i = 0; i < n; i++)
		x = x * 2862933555777941757ull + i;
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 4.0;
	uint64_t end = wall_ns() + (uint64_t)(seconds * 1e9);
	uint64_t a = 0, b = 0, start = thread_cpu_ns(), sink = 0;
	uint64_t wa = 0, wb = 0, wall_start = wall_ns();

	/* Phases of a few milliseconds: the clock reads between them are noise. */
	while (wall_ns() < end) {
		uint64_t w0 = wall_ns(), t0 = thread_cpu_ns(), t1, t2, w1, w2;

		sink += hot_a(4000000);
		t1 = thread_cpu_ns();
		w1 = wall_ns();
		sink += hot_b(2000000);
		t2 = thread_cpu_ns();
		w2 = wall_ns();
		a += t1 - t0;
		b += t2 - t1;
		wa += w1 - w0;
		wb += w2 - w1;
	}
	printf("hot_a %llu hot_b %llu total %llu sink %llu wall_a %llu wall_b %llu wall_total %llu\n",
	       (unsigned long long)a, (unsigned long long)b, (unsigned long long)(thread_cpu_ns() - start),
	       (unsigned long long)(sink & 1), (unsigned long long)wa, (unsigned long long)wb,
	       (unsigned long long)(wall_ns() - wall_start));
	return 0;
}
