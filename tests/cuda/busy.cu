// SPDX-License-Identifier: MIT
// Keeps the GPU busy: holds argv[2] MiB (default 2048) of device memory and
// runs spinning kernels on every multiprocessor for argv[1] seconds (default
// 4). What NVML reports while it runs is compared with nvidia-smi; a long
// run is also a target to attach to.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void spin(long long cycles, float *sink)
{
	long long start = clock64();
	float v = threadIdx.x;

	while (clock64() - start < cycles)
		v = v * 0.999f + 0.001f;
	if (v == 12345.0f)
		sink[threadIdx.x] = v;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 4.0;
	size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 2048;
	cudaDeviceProp prop;
	float *mem;
	long kernels = 0;

	if (cudaGetDeviceProperties(&prop, 0) || cudaMalloc(&mem, mib << 20) ||
	    cudaMemset(mem, 0, mib << 20)) {
		fprintf(stderr, "busy: no CUDA device\n");
		return 2;
	}
	auto t0 = std::chrono::steady_clock::now();
	double secs = 0;
	/* About 5 ms per kernel at 1.5-2 GHz; a few queued at a time. */
	while (secs < seconds) {
		for (int i = 0; i < 4; i++, kernels++)
			spin<<<prop.multiProcessorCount * 4, 256>>>(8000000, mem);
		cudaDeviceSynchronize();
		secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	}
	printf("busy: %ld kernels in %.2f s holding %zu MiB\n", kernels, secs, mib);
	return 0;
}
