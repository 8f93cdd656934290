# SPDX-License-Identifier: MIT
# N processes (this one and N - 1 forked) each spinning on the CPU for
# SECONDS of wall time: more than the CPUs, and they queue for them.
#   spinners.py N SECONDS
import multiprocessing
import sys
import time


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


if __name__ == "__main__":
    n, seconds = int(sys.argv[1]), float(sys.argv[2])
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=spin, args=(seconds,)) for _ in range(n - 1)]
    for p in procs:
        p.start()
    spin(seconds)
    for p in procs:
        p.join()
