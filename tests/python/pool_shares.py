# SPDX-License-Identifier: MIT
# Subprocess accuracy target: a multiprocessing Pool (start method argv[1])
# whose workers spend about 2/3 of their CPU time in heavy() and 1/3 in
# light(), each timed by the worker's own thread CPU clock; the parent
# prints the workers' truth: "heavy NS light NS pids P,Q".
import multiprocessing as mp
import os
import sys
import time


def heavy(until):
    x = 0
    while time.thread_time_ns() < until:
        x += 1
    return x


def light(until):
    x = 0
    while time.thread_time_ns() < until:
        x += 1
    return x


def task(seconds):
    h = l = 0
    end = time.thread_time_ns() + int(seconds * 1e9)
    while time.thread_time_ns() < end:
        t0 = time.thread_time_ns()
        heavy(t0 + 20_000_000)
        t1 = time.thread_time_ns()
        light(t1 + 10_000_000)
        t2 = time.thread_time_ns()
        h += t1 - t0
        l += t2 - t1
    return h, l, os.getpid()


def main():
    mp.set_start_method(sys.argv[1])
    with mp.Pool(2) as pool:
        results = pool.map(task, [0.75] * 4, chunksize=1)
    pids = sorted({r[2] for r in results})
    print("heavy %d light %d pids %s" % (sum(r[0] for r in results), sum(r[1] for r in results),
                                         ",".join(map(str, pids))), flush=True)


if __name__ == "__main__":
    main()
