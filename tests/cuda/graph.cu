// SPDX-License-Identifier: MIT
// A CUDA graph of three kernels captured from a stream and launched 100
// times: every node's kernel must carry the graph launch's stack.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void node_a(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void node_b(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void node_c(float *x) { x[threadIdx.x] -= 1.0f; }

int main()
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t e;
	float *x;

	if (cudaMalloc(&x, 256 * sizeof(float)) || cudaStreamCreate(&s)) {
		fprintf(stderr, "graph: no CUDA device\n");
		return 2;
	}
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	node_a<<<1, 256, 0, s>>>(x);
	node_b<<<1, 256, 0, s>>>(x);
	node_c<<<1, 256, 0, s>>>(x);
	cudaStreamEndCapture(s, &g);
	cudaGraphInstantiate(&e, g, 0);
	for (int i = 0; i < 100; i++)
		cudaGraphLaunch(e, s);
	cudaStreamSynchronize(s);
	printf("graph: 100 launches of 3 nodes\n");
	return 0;
}
