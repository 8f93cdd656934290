# SPDX-License-Identifier: MIT
# A training loop in pure Python whose phases take known shares of each
# step: load_batch 40%, model_forward 30%, model_backward 20%,
# optimizer_step 10% of the thread's CPU time, each timed by the thread's
# own CPU clock (a phase spun by the wall clock would end while preempted,
# and its samples, taken as the thread runs again, would lean to the
# next). Prints the truth, in ns: "data N forward N backward N optimizer N
# steps N step_p50 N backward_p50 N", the median step's wall time from
# one backward's start to the next's (as steps are found from a timeline)
# and the median backward call's.
#   phase_loop.py SECONDS [STARTUP]   STARTUP: seconds of CPU before the loop
import sys
import time

UNIT = 0.005  # 5 ms of CPU: a step is 10 units


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


def build_model(seconds):
    spin(seconds)  # a slow start: imports, the model built


def main():
    seconds = float(sys.argv[1])
    if len(sys.argv) > 2:
        build_model(float(sys.argv[2]))
    truth = {"data": 0, "forward": 0, "backward": 0, "optimizer": 0}
    steps, end, beats, walls = 0, time.monotonic() + seconds, [], []
    while time.monotonic() < end:
        for phase, step in (("data", load_batch), ("forward", model_forward),
                            ("backward", model_backward), ("optimizer", optimizer_step)):
            w0 = time.monotonic_ns()
            if phase == "backward":
                beats.append(w0)
            t0 = time.thread_time_ns()
            step()
            truth[phase] += time.thread_time_ns() - t0
            if phase == "backward":
                walls.append(time.monotonic_ns() - w0)
        steps += 1
    lengths = sorted(b - a for a, b in zip(beats, beats[1:]))
    walls.sort()
    print(" ".join("%s %d" % kv for kv in truth.items()), "steps", steps,
          "step_p50", lengths[len(lengths) // 2] if lengths else 0,
          "backward_p50", walls[len(walls) // 2] if walls else 0, flush=True)


if __name__ == "__main__":
    main()
