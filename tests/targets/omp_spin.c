// SPDX-License-Identifier: MIT
/*
 * An OpenMP program whose team spins: a parallel loop, then a serial part
 * during which the other threads wait at the next region's barrier
 * (OMP_WAIT_POLICY=active: spinning in libgomp, busy on a CPU). Runs
 * argv[1] seconds (2 by default) with OMP_NUM_THREADS threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 2.0), sink = 0;

	while (now() < end) {
#pragma omp parallel for reduction(+ : sink) schedule(static)
		for (int i = 0; i < 200000; i++)
			sink += i * 0.5;
		for (volatile int k = 0; k < 300000; k++)
			;
	}
	printf("%f\n", sink);
	return 0;
}
