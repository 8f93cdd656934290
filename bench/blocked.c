// SPDX-License-Identifier: MIT
/*
 * make bench: N threads blocked for good (a third each in a futex wait, a
 * pipe read and a sleep) and one busy thread, for SECONDS:
 *   blocked [N [SECONDS]]   (defaults 500 and 10)
 * The shape of a training process: hundreds of threads that exist, one
 * or two that run.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int pipefd[2];

static void *wait_futex(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return NULL;
}

static void *wait_read(void *arg)
{
	char c;

	(void)arg;
	for (;;)
		if (read(pipefd[0], &c, 1) <= 0)
			return NULL;
}

static void *wait_sleep(void *arg)
{
	(void)arg;
	for (;;)
		sleep(1000);
	return NULL;
}

__attribute__((noinline)) static uint64_t busy_spin(uint64_t x)
{
	for (int i = 0; i < 1000000; i++)
		x = x * 6364136223846793005ull + 1;
	return x;
}

int main(int argc, char **argv)
{
	void *(*kinds[])(void *) = { wait_futex, wait_read, wait_sleep };
	int n = argc > 1 ? atoi(argv[1]) : 500;
	double seconds = argc > 2 ? atof(argv[2]) : 10;
	struct timespec start, now;
	pthread_attr_t attr;
	uint64_t x = 1;

	if (pipe(pipefd) < 0)
		return 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, &attr, kinds[i % 3], NULL) != 0)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		x = busy_spin(x);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) +
		 (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	printf("%llu\n", (unsigned long long)(x & 1));
	return 0;
}
