# Launches real kernels from named Python functions (pylaunch.cu through
# ctypes): on a GPU, each kernel's time must land on its function's line.
# argv: path to libpylaunch.so, steps.
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
if lib.pl_init() != 0:
    print("pylaunch: no CUDA device", file=sys.stderr)
    sys.exit(2)


def forward():
    lib.pl_forward()


def backward():
    lib.pl_backward()


for _ in range(int(sys.argv[2])):
    forward()
    backward()
    lib.pl_sync()
print("pylaunch: done")
