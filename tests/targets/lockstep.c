// SPDX-License-Identifier: MIT
/*
 * Periodic work in step with the sampler: each PERIOD_MS window of
 * CLOCK_MONOTONIC starts with SHARE of it in lockstep_short, the rest in
 * lockstep_long, for SECONDS. Both spin on the clock, so the split holds
 * in wall time even while the thread is preempted. A sampler ticking at
 * exactly that period catches it at one phase; a good one's consecutive
 * samples are as independent as the target's phase allows.
 *   lockstep PERIOD_MS SHARE SECONDS
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void lockstep_short(uint64_t until)
{
	while (wall_ns() < until)
		__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void lockstep_long(uint64_t until)
{
	while (wall_ns() < until)
		__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	uint64_t period = (uint64_t)((argc > 1 ? atof(argv[1]) : 10.0) * 1e6);
	double share = argc > 2 ? atof(argv[2]) : 0.2;
	uint64_t end = wall_ns() + (uint64_t)((argc > 3 ? atof(argv[3]) : 3.0) * 1e9);

	for (uint64_t now = wall_ns(); now < end; now = wall_ns()) {
		uint64_t window = now - now % period;

		if (now < window + (uint64_t)(share * (double)period))
			lockstep_short(window + (uint64_t)(share * (double)period));
		else
			lockstep_long(window + period);
	}
	return 0;
}
