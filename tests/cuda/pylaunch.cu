// SPDX-License-Identifier: MIT
// A shared library Python calls through ctypes (pylaunch.py): kernels
// launched from Python functions, to check launch stacks on a real GPU.
#include <cuda_runtime.h>

__global__ void py_forward_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = x[i] * 1.5f + 1.0f;
}

__global__ void py_backward_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	for (int k = 0; k < 64 && i < n; k++)
		x[i] = x[i] * 0.999f;
}

static float *buf;
static const int n = 1 << 20;

extern "C" int pl_init(void)
{
	return cudaMalloc(&buf, n * sizeof(float)) == cudaSuccess ? 0 : -1;
}

extern "C" void pl_forward(void)
{
	py_forward_kernel<<<n / 256, 256>>>(buf, n);
}

extern "C" void pl_backward(void)
{
	py_backward_kernel<<<n / 256, 256>>>(buf, n);
}

extern "C" void pl_sync(void)
{
	cudaDeviceSynchronize();
}
