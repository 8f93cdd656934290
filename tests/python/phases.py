# Phases in a known order: load, train, load, train, each spinning for a
# fixed time on the main thread, so a timeline can be checked against it.
# argv: seconds per phase; prints "ready" first.
import sys
import time

phase = float(sys.argv[1])


def spin(until):
    x = 0
    while time.monotonic() < until:
        x += 1


def load():
    spin(time.monotonic() + phase)


def train():
    spin(time.monotonic() + phase)


print("ready", flush=True)
for _ in range(2):
    load()
    train()
