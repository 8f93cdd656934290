// SPDX-License-Identifier: MIT
/*
 * Without frame pointers: a thread blocked in epoll_wait (in blocked_waiter)
 * while the main thread spins, for SECONDS. Sampled from pc and sp alone,
 * the blocked thread's stack unwinds whole through CFI.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void blocked_waiter(void)
{
	int ep = epoll_create1(0);
	struct epoll_event ev;

	for (;;)
		epoll_wait(ep, &ev, 1, -1);
}

static void *waiter_thread(void *arg)
{
	blocked_waiter();
	return arg;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	uint64_t end = wall_ns() + (uint64_t)(seconds * 1e9);
	pthread_t th;

	pthread_create(&th, NULL, waiter_thread, NULL);
	while (wall_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 6364136223846793005ull + (uint64_t)i;
	return 0;
}
