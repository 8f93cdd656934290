// SPDX-License-Identifier: MIT
// One vector add, the smallest CUDA program: copies in, a kernel, a copy
// out; argv[1] times over (default once), a target to attach to.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
	const int n = 1 << 20;
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	float *a, *b, *c, *ha = new float[n];

	for (int i = 0; i < n; i++)
		ha[i] = (float)i;
	if (cudaMalloc(&a, n * sizeof(float)) || cudaMalloc(&b, n * sizeof(float)) ||
	    cudaMalloc(&c, n * sizeof(float))) {
		fprintf(stderr, "vector_add: no CUDA device\n");
		return 2;
	}
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 8; i++)
			ha[i] = (float)i;
		cudaMemcpy(a, ha, n * sizeof(float), cudaMemcpyHostToDevice);
		cudaMemcpy(b, ha, n * sizeof(float), cudaMemcpyHostToDevice);
		vector_add<<<(n + 255) / 256, 256>>>(a, b, c, n);
		cudaMemcpy(ha, c, n * sizeof(float), cudaMemcpyDeviceToHost);
	}
	printf("vector_add: c[7] = %.0f\n", ha[7]);
	return ha[7] == 14.0f ? 0 : 1;
}
