// SPDX-License-Identifier: MIT
/* N threads (default 16) spin in busy_worker for SECONDS (default 1). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds;

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void busy_worker(void)
{
	uint64_t end = wall_ns() + (uint64_t)(seconds * 1e9);
	volatile uint64_t x = 1;

	while (wall_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + (uint64_t)i;
}

static void *worker(void *arg)
{
	busy_worker();
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16;
	pthread_t th[256];

	seconds = argc > 2 ? atof(argv[2]) : 1.0;
	if (n < 1 || n > 256)
		return 2;
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("%d threads done\n", n);
	return 0;
}
