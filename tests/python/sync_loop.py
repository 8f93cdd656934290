# SPDX-License-Identifier: MIT
# A loop that waits for "the GPU" on a `.item()` line, without a GPU: its
# loss is a stand-in whose item() blocks in the kernel for 10 ms from C (as
# a CUDA tensor's does, waiting for its stream), so the thread is idle
# under the calling line with no Python frame of its own. Forward spins 3
# units of the thread's CPU, backward 2, the optimizer 1 (5 ms units).
# Prints "steps N sync_ms 10.0".
#   sync_loop.py STEPS
import functools
import sys
import time

UNIT = 0.005


def spin(units):
    end = time.thread_time() + units * UNIT
    while time.thread_time() < end:
        pass


class Loss:
    pass


def model_forward():
    spin(3)
    loss = Loss()
    loss.item = functools.partial(time.sleep, 2 * UNIT)
    return loss


def model_backward():
    spin(2)


def optimizer_step():
    spin(1)


def main():
    steps = int(sys.argv[1])
    for _ in range(steps):
        loss = model_forward()
        model_backward()
        optimizer_step()
        loss.item()
    print("steps %d sync_ms %.1f" % (steps, 2 * UNIT * 1000))


main()
