# "Launches" GPU work through the fake libcupti (tests/cuda_fake): a
# training-like loop whose forward() launches a 2 ms kernel, backward() a
# 4 ms one and a graph of three 1 ms kernels, optimizer() a host-to-device
# copy and a 1 ms kernel from a thread without Python (like autograd's),
# and a loader thread launching copies of its own; then a sync. The
# fake plays the driver: fake_cuda_init loads CUDA_INJECTION64_PATH.
# argv: path to the fake libcupti, steps [, "exit" to end with os._exit,
# or "dormant": wait for a line on stdin before and after the steps, and
# say at the end whether CUPTI is still subscribed].
import ctypes
import os
import sys
import threading
import time

lib = ctypes.CDLL(sys.argv[1])
steps = int(sys.argv[2])
lib.fake_cuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                                 ctypes.c_int]
lib.fake_cuda_graph_launch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                       ctypes.c_longlong]
lib.fake_cuda_memcpy.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_int,
                                 ctypes.c_longlong]


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def forward():
    lib.fake_cuda_launch(b"_Z11gemm_kernelPfS_S_i", 0, 7, 2000000, 1)
    spin(0.002)


def backward():
    lib.fake_cuda_launch(b"backward_kernel", 0, 7, 4000000, 1)
    lib.fake_cuda_graph_launch(b"graph_node_kernel", 3, 0, 7, 1000000)
    spin(0.004)


def optimizer():
    lib.fake_cuda_memcpy(0, 13, 1 << 20, 1, 500000)  # 1 MiB host to device
    lib.fake_cuda_launch_from_native_thread(b"autograd-dev", b"native_kernel", 0, 9, 1000000)


def loader():
    for _ in range(steps):
        lib.fake_cuda_memcpy(0, 14, 1 << 16, 1, 100000)
        time.sleep(0.01)


dormant = len(sys.argv) > 3 and sys.argv[3] == "dormant"
print("init", lib.fake_cuda_init(), flush=True)
if dormant:
    sys.stdin.readline()
t = threading.Thread(target=loader, name="loader")
t.start()
for _ in range(steps):
    forward()
    backward()
    optimizer()
t.join()
lib.fake_cuda_synchronize()
if len(sys.argv) > 3 and sys.argv[3] == "exit":
    os._exit(0)
if dormant:
    print("steps done", flush=True)
    sys.stdin.readline()
    print("subscribed", lib.fake_cupti_subscribed(), flush=True)
