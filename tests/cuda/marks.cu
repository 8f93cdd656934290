// SPDX-License-Identifier: MIT
// Clock alignment: argv[1] rounds (default 200) of "note CLOCK_MONOTONIC,
// launch a kernel, wait for it, note the clock again"; prints each round as
// "mark BEFORE AFTER" in nanoseconds. The agent's record of the round's
// kernel must lie between the two marks (tests/cuda/gpu_records.py marks).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void marked(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	for (int k = 0; k < 32 && i < n; k++)
		x[i] = x[i] * 0.5f + 1.0f;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200, n = 1 << 16;
	float *x;

	if (cudaMalloc(&x, n * sizeof(float)) || cudaDeviceSynchronize()) {
		fprintf(stderr, "marks: no CUDA device\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		unsigned long long before = now_ns(), after;

		marked<<<n / 256, 256>>>(x, n);
		cudaDeviceSynchronize();
		after = now_ns();
		printf("mark %llu %llu\n", before, after);
	}
	return 0;
}
