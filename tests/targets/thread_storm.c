// SPDX-License-Identifier: MIT
/*
 * A thread storm: starts N short threads (default 100000), WIDTH at a
 * time (default 4), each running storm_work for WORK rounds (default
 * 2000, a few microseconds) and handing back a checksum of its
 * own. Prints the number of threads and the sum of their checksums, which
 * the program checks against the sum computed here without threads: a
 * profiler that disturbs a thread shows as a wrong sum or a failed start.
 *
 *   thread_storm [N [WIDTH [WORK]]]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long work_rounds = 2000;

/* Known work, in a function of its own, that every sample of a storm
 * thread should show. */
__attribute__((noinline)) static uint64_t storm_work(uint64_t seed)
{
	volatile uint64_t x = seed * 2654435761u + 1;

	for (long i = 0; i < work_rounds; i++)
		x = x * 6364136223846793005ull + (uint64_t)i;
	return x;
}

static void *storm_thread(void *arg)
{
	uint64_t *slot = arg;

	*slot = storm_work(*slot);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int width = argc > 2 ? atoi(argv[2]) : 4;
	uint64_t sum = 0, want = 0, slot[64];
	pthread_t th[64];
	long started = 0, failed = 0;

	if (argc > 3)
		work_rounds = atol(argv[3]);
	if (n < 1 || width < 1 || width > 64 || work_rounds < 0)
		return 2;
	while (started < n) {
		int k = 0;

		for (; k < width && started + k < n; k++) {
			slot[k] = (uint64_t)(started + k);
			if (pthread_create(&th[k], NULL, storm_thread, &slot[k]) != 0) {
				failed++;
				break;
			}
		}
		for (int i = 0; i < k; i++) {
			pthread_join(th[i], NULL);
			sum += slot[i];
		}
		started += k;
		if (failed)
			break;
	}
	for (long i = 0; i < n; i++)
		want += storm_work((uint64_t)i);
	printf("threads %ld checksum %s\n", started, !failed && sum == want ? "ok" : "BAD");
	return failed || sum != want;
}
