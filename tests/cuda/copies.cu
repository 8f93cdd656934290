// SPDX-License-Identifier: MIT
// Copies to the GPU in argv[1]'s way, argv[2] rounds of argv[3] MiB, each
// round a copy in and a small kernel on it:
//   pageable       cudaMemcpy from malloc'd memory (the host waits)
//   pageable-async cudaMemcpyAsync from malloc'd memory on a stream of its own
//   pinned         cudaMemcpyAsync from cudaMallocHost'd memory on a stream
//                  of its own, synchronized every 8 rounds
//   null           the same on the NULL (legacy default) stream
//   per-thread     the same on cudaStreamPerThread
// What CUPTI records of each (memory kinds, flags, stream ids) and what
// trainsample's findings say of each are compared in gpu_check_findings.sh.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__global__ void touch(float *p, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		p[i] += 1.0f;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pageable";
	int rounds = argc > 2 ? atoi(argv[2]) : 100;
	size_t bytes = (argc > 3 ? strtoul(argv[3], NULL, 10) : 32) << 20;
	size_t n = bytes / sizeof(float);
	bool pinned = strcmp(mode, "pageable") && strcmp(mode, "pageable-async");
	cudaStream_t stream = 0;
	float *host, *dev;

	if (cudaMalloc(&dev, bytes)) {
		fprintf(stderr, "copies: no CUDA device\n");
		return 2;
	}
	if (pinned ? cudaMallocHost(&host, bytes) != cudaSuccess : !(host = (float *)malloc(bytes)))
		return 2;
	memset(host, 0, bytes);
	if (!strcmp(mode, "per-thread"))
		stream = cudaStreamPerThread;
	else if (strcmp(mode, "null") && strcmp(mode, "pageable"))
		cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < rounds; i++) {
		if (!strcmp(mode, "pageable"))
			cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
		else
			cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream);
		touch<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(dev, n);
		if (i % 8 == 7)
			cudaStreamSynchronize(stream);
	}
	cudaDeviceSynchronize();
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	printf("copies %s: %d rounds of %zu MiB in %.3f s (%.1f GB/s)\n", mode, rounds, bytes >> 20,
	       secs, (double)rounds * (double)bytes / secs / 1e9);
	return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
