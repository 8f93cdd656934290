# Fast recursion whose every possible stack is known: rec(d, d) descends
# d + 1 levels (d in 3, 7, 12) to a short leaf loop, again and again.
# tests/integration/stack_check.py tells possible stacks from torn ones.
# argv: seconds.
import sys
import time


def leaf(n):
    x = 0
    for i in range(n):
        x += i
    return x


def rec(d, depth):
    if depth == 0:
        return leaf(30)
    return rec(d, depth - 1)


def main(seconds):
    end = time.time() + seconds
    while time.time() < end:
        for d in (3, 7, 12):
            rec(d, d)


main(float(sys.argv[1]))
