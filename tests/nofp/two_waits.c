// SPDX-License-Identifier: MIT
/*
 * Two call sites with frames of one size sleep in the same libc wrapper at
 * the same depth, alternately, ROUNDS times: a blocked thread's cached
 * stack must not be reused across them.
 */
#include <stdlib.h>
#include <time.h>

static void nap(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void wait_header(void)
{
	nap();
	__asm__ volatile("");
}

__attribute__((noinline)) void wait_body(void)
{
	nap();
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;

	for (int i = 0; i < rounds; i++) {
		wait_header();
		wait_body();
	}
	return 0;
}
