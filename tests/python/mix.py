# Two functions sharing the main thread in a given proportion, in slices
# of 10 ms of CPU time: two runs with different proportions make a known
# difference. (CPU time, not wall time: on a busy machine a wall-clock slice
# loses an unknown part of itself to other processes.)
# argv: seconds, share of heavy() (0..1).
import sys
import time

seconds, share = float(sys.argv[1]), float(sys.argv[2])


def spin(t):
    end = time.thread_time() + t
    x = 0
    while time.thread_time() < end:
        x += 1


def heavy(t):
    spin(t)


def light(t):
    spin(t)


def step():
    heavy(0.01 * share)
    light(0.01 * (1 - share))


stop = time.monotonic() + seconds
while time.monotonic() < stop:
    step()
