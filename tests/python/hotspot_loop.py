# SPDX-License-Identifier: MIT
# A training loop in pure Python (phase_loop.py's phases: data 4 units,
# forward 3, backward 2, optimizer 1, 5 ms of CPU each) that also writes
# its metrics as JSON every step: a json.dumps of a large record, about a
# third of the step, on the loop's own line. Prints "steps N".
#   hotspot_loop.py SECONDS
import json
import sys
import time

UNIT = 0.005
RECORD = {"step": 0, "history": [{"loss": i * 0.5, "lr": 1e-3, "tags": ["a", "b"]} for i in range(20000)]}


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def load_batch():
    spin(4 * UNIT)


def model_forward():
    spin(3 * UNIT)


def model_backward():
    spin(2 * UNIT)


def optimizer_step():
    spin(1 * UNIT)


def main():
    end = time.monotonic() + float(sys.argv[1])
    steps = 0
    while time.monotonic() < end:
        load_batch()
        model_forward()
        model_backward()
        optimizer_step()
        RECORD["step"] = steps
        line = json.dumps(RECORD)
        steps += 1
    print("steps %d bytes %d" % (steps, len(line)))


main()
