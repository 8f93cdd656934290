// SPDX-License-Identifier: MIT
// A CUDA graph of three kernels captured from a stream and launched argv[1]
// times (default 100): every node's kernel must carry the graph launch's
// stack.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void node_a(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void node_b(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void node_c(float *x) { x[threadIdx.x] -= 1.0f; }

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 100;
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
	for (int i = 0; i < launches; i++)
		cudaGraphLaunch(e, s);
	cudaStreamSynchronize(s);
	printf("graph: %d launches of 3 nodes\n", launches);
	return 0;
}
