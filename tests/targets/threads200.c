// SPDX-License-Identifier: MIT
/* Starts and joins 200 threads, 20 at a time, each doing a little work. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define WAVES 10
#define PER_WAVE 20

__attribute__((noinline)) static uint64_t worker_spin(uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 3000000; i++)
		x = x * 6364136223846793005ull + 1;
	return x;
}

static void *worker(void *arg)
{
	uint64_t *out = arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%llu", (unsigned long long)(*out % 1000));
	pthread_setname_np(pthread_self(), name);
	*out = worker_spin(*out) & 1;
	return NULL;
}

int main(void)
{
	uint64_t results[WAVES * PER_WAVE];
	int done = 0;

	for (int w = 0; w < WAVES; w++) {
		pthread_t th[PER_WAVE];

		for (int i = 0; i < PER_WAVE; i++) {
			results[w * PER_WAVE + i] = (uint64_t)(w * PER_WAVE + i);
			if (pthread_create(&th[i], NULL, worker, &results[w * PER_WAVE + i]) != 0)
				return 1;
		}
		for (int i = 0; i < PER_WAVE; i++) {
			pthread_join(th[i], NULL);
			done++;
		}
	}
	printf("joined %d threads\n", done);
	return 0;
}
