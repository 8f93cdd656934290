// SPDX-License-Identifier: MIT
/*
 * A long-running target for attach tests: the main thread computes and
 * writes a growing counter to FILE; a second thread sleeps in epoll_wait.
 * Runs for SECONDS (default: until killed), then prints "done N".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t beat_work(uint64_t x)
{
	volatile uint64_t v = x;

	for (int i = 0; i < 2000000; i++)
		v = v * 6364136223846793005ull + 1;
	return v;
}

static void *sleeper(void *arg)
{
	int ep = epoll_create1(0);
	struct epoll_event ev;

	(void)arg;
	for (;;)
		epoll_wait(ep, &ev, 1, 100);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/tmp/heartbeat";
	double seconds = argc > 2 ? atof(argv[2]) : 0;
	uint64_t end = seconds > 0 ? wall_ns() + (uint64_t)(seconds * 1e9) : 0, x = 1;
	unsigned long beats = 0;
	char tmp[4096];
	pthread_t th;

	pthread_create(&th, NULL, sleeper, NULL);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	while (!end || wall_ns() < end) {
		FILE *f;

		x = beat_work(x);
		beats++;
		if (beats % 16)
			continue;
		/* Renamed into place so a reader never sees a half-written file. */
		f = fopen(tmp, "w");
		if (f) {
			fprintf(f, "%lu\n", beats);
			fclose(f);
			rename(tmp, path);
		}
	}
	printf("done %lu %llu\n", beats, (unsigned long long)(x & 0));
	return 0;
}
