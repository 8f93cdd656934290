# SPDX-License-Identifier: MIT
# N worker processes (multiprocessing, fork), each in worker_spin for
# SECONDS: busy, or with "sleepy" mostly asleep in 1 ms naps. Prints the
# workers' pids on one line as soon as they run.
#   spin_workers.py N SECONDS [sleepy]
import multiprocessing as mp
import sys
import time


def worker_spin(seconds, sleepy):
    end = time.time() + seconds
    while time.time() < end:
        if sleepy:
            time.sleep(0.001)


if __name__ == "__main__":
    mp.set_start_method("fork")
    n, seconds, sleepy = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:] == ["sleepy"]
    ps = [mp.Process(target=worker_spin, args=(seconds, sleepy)) for _ in range(n)]
    [p.start() for p in ps]
    print(" ".join(str(p.pid) for p in ps), flush=True)
    [p.join() for p in ps]
