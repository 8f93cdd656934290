# SPDX-License-Identifier: MIT
# A training loop in pure Python (phase_loop.py's phases: data 4 units,
# forward 3, backward 2, optimizer 1, 5 ms of CPU each, imported) that also writes
# its metrics as JSON every step: a json.dumps of a large record, about a
# third of the step, on the loop's own line. Prints "steps N".
#   hotspot_loop.py SECONDS
import json
import sys
import time

from phase_loop import load_batch, model_backward, model_forward, optimizer_step

RECORD = {"step": 0, "history": [{"loss": i * 0.5, "lr": 1e-3, "tags": ["a", "b"]} for i in range(20000)]}


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
