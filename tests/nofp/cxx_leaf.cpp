// SPDX-License-Identifier: MIT
// A leaf reached through C++ calls, without frame pointers: its frame must
// show the demangled name, trainsample_test::Kernel<int>::spin(unsigned long).
#include <cstdint>
#include <cstdlib>
#include <ctime>

namespace trainsample_test {

template <typename T> struct Kernel {
	__attribute__((noinline)) static uint64_t spin(unsigned long n)
	{
		volatile uint64_t x = 1;

		for (unsigned long i = 0; i < n; i++)
			x = x * 6364136223846793005ull + i;
		return x;
	}
};

__attribute__((noinline)) uint64_t dispatch(unsigned long n)
{
	return Kernel<int>::spin(n) + 1;
}

} // namespace trainsample_test

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink += trainsample_test::dispatch(1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return 0;
}
