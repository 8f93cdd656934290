// SPDX-License-Identifier: MIT
/*
 * Computes until SIGINT or SIGTERM arrives, keeps going 300 ms more (so a
 * duplicate would be counted), prints "sigint N sigterm N" and exits 0.
 * Gives up after 20 s with exit 1.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t sigints, sigterms;

static void on_signal(int sig)
{
	if (sig == SIGINT)
		sigints++;
	else
		sigterms++;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t busy(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ull + 1;
	return x;
}

int main(void)
{
	struct sigaction sa;
	uint64_t give_up = wall_ns() + 20000000000ull, x = 1, until = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (wall_ns() < give_up) {
		x = busy(x);
		if (!until && (sigints || sigterms))
			until = wall_ns() + 300000000ull;
		if (until && wall_ns() > until) {
			printf("sigint %d sigterm %d\n", (int)sigints, (int)sigterms);
			return (int)(x & 0);
		}
	}
	return 1;
}
