# SPDX-License-Identifier: MIT
# For bench/many_functions.sh: code that makes a new function for every
# call (exec of a fresh def, which runs about a millisecond), on short threads WIDTH at a time (default
# 4), for SECONDS seconds (default 30): a profile of a million distinct
# functions and thousands of threads.
#   newfuncs.py [SECONDS [WIDTH]]
import sys
import threading
import time


def burst(seed, count):
    for i in range(count):
        scope = {}
        exec("def f_%d_%d(n):\n    x = 0\n    for i in range(n):\n        x += i\n    return x\n"
             % (seed, i), scope)
        scope["f_%d_%d" % (seed, i)](20000)


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 30
    width = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    start = time.monotonic()
    end, seed = start + secs, 0
    while time.monotonic() < end:
        threads = [threading.Thread(target=burst, args=(seed + j, 100)) for j in range(width)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seed += width
    print("threads %d functions %d in %.2f s" % (seed, seed * 100, time.monotonic() - start))


if __name__ == "__main__":
    main()
