// SPDX-License-Identifier: MIT
/*
 * The main thread calls pthread_exit and stays a zombie while a worker
 * spins in spin_worker for SECONDS: /proc/PID/maps reads empty and the
 * process id no longer reads memory, but the process is alive.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds;

__attribute__((noinline)) static void spin_worker(void)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

static void *worker(void *arg)
{
	spin_worker();
	printf("worker done\n");
	fflush(stdout);
	exit(0);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t th;

	seconds = argc > 1 ? atof(argv[1]) : 3;
	pthread_create(&th, NULL, worker, NULL);
	pthread_exit(NULL);
}
