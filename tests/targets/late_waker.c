// SPDX-License-Identifier: MIT
/*
 * Threads that sleep long, then run: N threads blocked for good, one that
 * sleeps SLEEP seconds and then computes in woken_spin for RUN seconds
 * (ROUNDS times, 1 by default), while the main thread computes in
 * main_spin throughout.
 *   late_waker N SLEEP RUN [ROUNDS]
 * Prints the CPU time each spinner had (its thread clock), in ns:
 *   "woken NS main NS".
 * A profiler that asks long-blocked threads less often must still see the
 * late one run, nearly from its first tick.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static double sleep_s, run_s;
static int rounds = 1;
static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *blocked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return NULL;
}

static __attribute__((noinline)) void woken_spin(uint64_t until)
{
	while (clock_ns(CLOCK_MONOTONIC) < until)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i * i;
}

static __attribute__((noinline)) void main_spin(uint64_t until)
{
	while (clock_ns(CLOCK_MONOTONIC) < until)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i ^ (sink >> 3);
}

static void *late(void *arg)
{
	struct timespec nap = { (time_t)sleep_s, (long)((sleep_s - (time_t)sleep_s) * 1e9) };

	for (int i = 0; i < rounds; i++) {
		nanosleep(&nap, NULL);
		woken_spin(clock_ns(CLOCK_MONOTONIC) + (uint64_t)(run_s * 1e9));
	}
	*(uint64_t *)arg = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t woken_ns = 0, start;
	pthread_t t;
	int n;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s N SLEEP RUN [ROUNDS]\n", argv[0]);
		return 2;
	}
	if (argc == 5)
		rounds = atoi(argv[4]);
	n = atoi(argv[1]);
	sleep_s = atof(argv[2]);
	run_s = atof(argv[3]);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, NULL, blocked, NULL) != 0)
			return 1;
	start = clock_ns(CLOCK_MONOTONIC);
	if (pthread_create(&t, NULL, late, &woken_ns) != 0)
		return 1;
	main_spin(start + (uint64_t)((rounds * (sleep_s + run_s) + 0.3) * 1e9));
	pthread_join(t, NULL);
	printf("woken %llu main %llu\n", (unsigned long long)woken_ns,
	       (unsigned long long)clock_ns(CLOCK_THREAD_CPUTIME_ID));
	return 0;
}
