// SPDX-License-Identifier: MIT
/*
 * A leaf inside a signal handler: a timer signal every 10 ms runs a handler
 * that spins in handler_spin for about 4 ms, interrupting interrupted_loop.
 * Samples in the handler must unwind through the signal frame to the
 * interrupted code and on to main. Runs SECONDS (default 3).
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void handler_spin(void)
{
	uint64_t end = wall_ns() + 4000000;

	while (wall_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 6364136223846793005ull + (uint64_t)i;
}

static void on_timer(int sig)
{
	(void)sig;
	handler_spin();
}

__attribute__((noinline)) static void interrupted_loop(uint64_t end)
{
	while (wall_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 2862933555777941757ull + (uint64_t)i;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_timer;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	interrupted_loop(wall_ns() + (uint64_t)(seconds * 1e9));
	return 0;
}
