# SPDX-License-Identifier: MIT
# A loop whose logging costs a third of each step: forward, backward and
# the optimizer spin 10, 5 and 5 ms of the thread's CPU, then a log call
# whose handler spends 10 ms formatting (Python's logging module, which the
# built-in rules know). Prints "steps N".
#   logging_loop.py STEPS
import logging
import sys
import time


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class SlowHandler(logging.Handler):
    def emit(self, record):
        spin(0.010)
        self.format(record)


log = logging.getLogger("train")
log.addHandler(SlowHandler())
log.setLevel(logging.INFO)


def model_forward():
    spin(0.010)


def model_backward():
    spin(0.005)


def optimizer_step():
    spin(0.005)


def main():
    steps = int(sys.argv[1])
    for step in range(steps):
        model_forward()
        model_backward()
        optimizer_step()
        log.info("step %d loss %.3f", step, 1.0 / (step + 1))
    print("steps %d" % steps)


main()
