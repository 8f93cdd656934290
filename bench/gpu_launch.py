# The GPU agent's cost per launch: fake launches (tests/cuda_fake) from a
# Python stack DEPTH frames deep, timed with the agent collecting (it reads
# the Python stack at every launch) and without it. The fake's own cost and
# ctypes' are in both; the difference is the agent's. Figures only.
# argv: fake libcupti, launches, depth; env: as the bench script sets it.
import ctypes
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
n, depth = int(sys.argv[2]), int(sys.argv[3])
lib.fake_cuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                                 ctypes.c_int]
on = lib.fake_cuda_init()
launch = lib.fake_cuda_launch


def loop():
    t0 = time.perf_counter_ns()
    for _ in range(n):
        launch(b"k", 0, 1, 1000, 1)
    return time.perf_counter_ns() - t0


def nest(d):
    return nest(d - 1) if d > 1 else loop()


best = min(nest(depth) for _ in range(5))
print("%s %.2f" % ("agent" if on else "none", best / n / 1000))
