// SPDX-License-Identifier: MIT
/*
 * Starts and joins threads back to back for SECONDS (default 20): the
 * target is forever in clone(), whose event stop swallows a pending
 * PTRACE_INTERRUPT. A profiler that waits for that interrupt's own trap
 * never finishes its tick.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *noop(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 20;
	struct timespec t0, t;
	long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		pthread_t th;

		if (pthread_create(&th, NULL, noop, NULL) == 0)
			pthread_join(th, NULL);
		n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	printf("threads %ld\n", n);
	return 0;
}
