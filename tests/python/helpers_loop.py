# SPDX-License-Identifier: MIT
# A training loop in the main thread beside what a PyTorch job has idle
# throughout: helper threads (pin memory, queue feeders) and two worker
# processes that wait. Each step waits for its batch (load_batch: 2 units
# asleep), then runs model_forward (3 units of CPU) and model_backward
# (BACKWARD units, default 2). A unit is 5 ms of the thread's CPU clock.
#   helpers_loop.py SECONDS [BACKWARD] [--launch]
# --launch: the same in a child process, waited for (a launcher's wait).
import os
import subprocess
import sys
import threading
import time

UNIT = 0.005


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def load_batch():
    time.sleep(2 * UNIT)


def model_forward():
    spin(3 * UNIT)


def model_backward(units):
    spin(units * UNIT)


def main():
    if "--launch" in sys.argv:
        args = [a for a in sys.argv[1:] if a != "--launch"]
        sys.exit(subprocess.run([sys.executable, __file__] + args).returncode)
    seconds = float(sys.argv[1])
    backward = float(sys.argv[2]) if len(sys.argv) > 2 else 2
    done = threading.Event()
    helpers = [threading.Thread(target=done.wait, name="helper%d" % i) for i in range(4)]
    for t in helpers:
        t.start()
    r, w = os.pipe()
    workers = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)  # waits until the loop ends
            os._exit(0)
        workers.append(pid)
    os.close(r)
    steps, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        load_batch()
        model_forward()
        model_backward(backward)
        steps += 1
    os.close(w)
    for pid in workers:
        os.waitpid(pid, 0)
    done.set()
    for t in helpers:
        t.join()
    print("steps", steps)


if __name__ == "__main__":
    main()
