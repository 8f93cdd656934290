# SPDX-License-Identifier: MIT
# A tree of processes, each busy in a function of its own for about a
# second: a multiprocessing child (mp_child_spin), a Python program started
# by subprocess (popen_child_spin), a non-Python program (argv[1], exec'd by
# subprocess), three children left zombies for a while, and the parent
# itself (parent_spin). Prints "done" at the end.
import multiprocessing as mp
import os
import subprocess
import sys
import time


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def mp_child_spin():
    spin(1.0)


def parent_spin():
    spin(1.0)


POPEN_CHILD = """
import time
def popen_child_spin():
    end = time.thread_time() + 1.0
    while time.thread_time() < end:
        pass
popen_child_spin()
"""


def main():
    mp.set_start_method("fork")
    child = mp.Process(target=mp_child_spin)
    child.start()
    popen = subprocess.Popen([sys.executable, "-c", POPEN_CHILD])
    native = subprocess.Popen(sys.argv[1:]) if len(sys.argv) > 1 else None
    zombies = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        zombies.append(pid)
    parent_spin()
    for pid in zombies:
        os.waitpid(pid, 0)
    child.join()
    popen.wait()
    if native:
        native.wait()
    print("done", flush=True)


if __name__ == "__main__":
    main()
