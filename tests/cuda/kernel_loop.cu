// SPDX-License-Identifier: MIT
// A loop of small kernels with copies both ways, the shape of a training
// step: argv[1] iterations (default 20000). Prints launches per second.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void scale(float *x, int n, float f)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= f;
}

__global__ void shift(float *x, int n, float d)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] += d;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 20000, n = 4096;
	float *x, host[4096] = { 0 };
	cudaStream_t s;

	if (cudaMalloc(&x, n * sizeof(float)) || cudaStreamCreate(&s)) {
		fprintf(stderr, "kernel_loop: no CUDA device\n");
		return 2;
	}
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < iters; i++) {
		if (i % 100 == 0)
			cudaMemcpyAsync(x, host, sizeof(host), cudaMemcpyHostToDevice, s);
		scale<<<n / 256, 256, 0, s>>>(x, n, 1.0001f);
		shift<<<n / 256, 256, 0, s>>>(x, n, 0.5f);
		if (i % 100 == 99)
			cudaMemcpyAsync(host, x, sizeof(host), cudaMemcpyDeviceToHost, s);
	}
	cudaStreamSynchronize(s);
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	printf("kernel_loop: %d launches in %.3f s (%.0f per second)\n", 2 * iters, secs,
	       2 * iters / secs);
	return 0;
}
