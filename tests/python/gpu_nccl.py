# SPDX-License-Identifier: MIT
# A rank's GPU work through the fake libcupti (tests/cuda_fake): each
# step's backward launches a 4 ms compute kernel and, on a stream of its
# own, NCCL's allreduce kernel for 3 ms, as DDP's buckets do; the
# optimizer a 1 ms kernel.
#   python3 gpu_nccl.py FAKE_LIBCUPTI STEPS
import ctypes
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
steps = int(sys.argv[2])
lib.fake_cuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                                 ctypes.c_int]


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def backward():
    lib.fake_cuda_launch(b"backward_kernel", 0, 7, 4000000, 1)
    lib.fake_cuda_launch(b"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                         0, 9, 3000000, 1)
    spin(0.004)


def optimizer():
    lib.fake_cuda_launch(b"sgd_kernel", 0, 7, 1000000, 1)
    spin(0.001)


print("init", lib.fake_cuda_init(), flush=True)
for _ in range(steps):
    backward()
    optimizer()
lib.fake_cuda_synchronize()
