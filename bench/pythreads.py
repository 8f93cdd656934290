# SPDX-License-Identifier: MIT
# Reads per tick (docs/performance.md): THREADS threads (default 8), each
# 10 calls deep, spinning for SECONDS (default 2) and contending for the
# GIL, so that each tick walks the holder and the threads that ran.
#   strace -c -e trace=process_vm_readv build/trainsample record -r 100 -- \
#       python3 bench/pythreads.py [THREADS [SECONDS]]
import sys
import threading
import time


def deep(n, end):
    if n:
        return deep(n - 1, end)
    while time.time() < end:
        pass


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    end = time.time() + (float(sys.argv[2]) if len(sys.argv) > 2 else 2.0)
    threads = [threading.Thread(target=deep, args=(10, end)) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


main()
