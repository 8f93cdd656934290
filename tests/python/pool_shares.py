# SPDX-License-Identifier: MIT
# Subprocess accuracy target: a multiprocessing Pool (start method argv[1])
# whose workers spend about 2/3 of their CPU time in heavy() and 1/3 in
# light(), each timed by the worker's own thread CPU clock and by the wall
# clock; the parent prints the workers' truth:
# "heavy NS light NS wall_heavy NS wall_light NS pids P,Q". On a busy
# machine the two differ: a worker preempted in heavy() waits there for a
# CPU, wall time a sampler of running and runnable threads counts.
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
    h = l = wh = wl = 0
    end = time.thread_time_ns() + int(seconds * 1e9)
    while time.thread_time_ns() < end:
        w0, t0 = time.perf_counter_ns(), time.thread_time_ns()
        heavy(t0 + 20_000_000)
        t1, w1 = time.thread_time_ns(), time.perf_counter_ns()
        light(t1 + 10_000_000)
        t2, w2 = time.thread_time_ns(), time.perf_counter_ns()
        h += t1 - t0
        l += t2 - t1
        wh += w1 - w0
        wl += w2 - w1
    return h, l, os.getpid(), wh, wl


def main():
    mp.set_start_method(sys.argv[1])
    with mp.Pool(2) as pool:
        results = pool.map(task, [0.75] * 4, chunksize=1)
    pids = sorted({r[2] for r in results})
    print("heavy %d light %d wall_heavy %d wall_light %d pids %s" % (
        sum(r[0] for r in results), sum(r[1] for r in results), sum(r[3] for r in results),
        sum(r[4] for r in results), ",".join(map(str, pids))), flush=True)


if __name__ == "__main__":
    main()
