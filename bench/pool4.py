# SPDX-License-Identifier: MIT
# make bench (bench/subprocesses.sh): a fixed amount of CPU work split over
# 4 worker processes (a multiprocessing Pool, fork), 32 tasks of pure-Python
# arithmetic. Prints the work's result so none of it can be skipped.
import multiprocessing as mp
import sys


def task(seed):
    x = seed
    for i in range(300_000):
        x = (x * 1103515245 + 12345 + i) % 2147483648
    return x


if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(4) as pool:
        print(sum(pool.map(task, range(int(sys.argv[1]) if len(sys.argv) > 1 else 32))))
