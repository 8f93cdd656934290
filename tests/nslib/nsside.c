// SPDX-License-Identifier: MIT
/*
 * Built twice, with SIDE=root and SIDE=host: the container's copy and the
 * host's of one library, installed at the same path in the container's root
 * and on the host. The two differ only in a name of the same length, so
 * their code lies at the same addresses: a frame named spin_in_host in a
 * container's profile means the host's file was read instead of the
 * root's.
 */
#include <time.h>

#define CAT(a, b) a##b
#define SPIN(side) CAT(spin_in_, side)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static long SPIN(SIDE)(double seconds)
{
	double end = now() + seconds;
	long n = 0;

	while (now() < end)
		n++;
	return n;
}

/* Busy for seconds; called from Python through ctypes. */
long nsside_spin(double seconds)
{
	return SPIN(SIDE)(seconds);
}
