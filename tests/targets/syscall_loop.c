// SPDX-License-Identifier: MIT
/*
 * A loop of short computing and, with "sys", a getppid() after each few
 * microseconds of it ("user": none), for SECONDS. A thread that enters
 * the kernel this often is often there, or just leaving, when an
 * interrupt reaches it: trainsample --stats counts the stops that came at
 * a syscall's end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t compute(uint64_t n)
{
	volatile uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

int main(int argc, char **argv)
{
	int sys;
	double end;

	if (argc != 3 || (strcmp(argv[1], "sys") && strcmp(argv[1], "user"))) {
		fprintf(stderr, "usage: syscall_loop sys|user SECONDS\n");
		return 2;
	}
	sys = !strcmp(argv[1], "sys");
	end = now() + atof(argv[2]);
	while (now() < end) {
		for (int i = 0; i < 64; i++) {
			compute(2000);
			if (sys)
				syscall(SYS_getppid);
		}
	}
	return 0;
}
