// SPDX-License-Identifier: MIT
// A stand-in for ATen's copies, for the cpu-copies finding without
// PyTorch: functions with ATen's namespaces and names (at::native::copy_,
// at::native::_to_copy) that spin, and a compute function that is not a
// copy (at::native::addmm), each called from Python through ctypes by the
// C wrappers at the end. Built as tests' libfake_aten.so.
#include <ctime>

static void spin(double seconds)
{
	timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

namespace at {
namespace native {
__attribute__((noinline)) void copy_(double seconds) { spin(seconds); }
__attribute__((noinline)) void _to_copy(double seconds) { copy_(seconds); }
__attribute__((noinline)) void addmm(double seconds) { spin(seconds); }
} // namespace native
} // namespace at

extern "C" void fake_aten_to(double seconds) { at::native::_to_copy(seconds); }
extern "C" void fake_aten_addmm(double seconds) { at::native::addmm(seconds); }
