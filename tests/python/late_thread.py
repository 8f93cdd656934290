# A thread started well after threading's names were first read, busy for
# less than a second: it must still carry its name.
# argv: seconds before it starts, seconds it spins.
import sys
import threading
import time


def late_spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


time.sleep(float(sys.argv[1]))
t = threading.Thread(target=late_spin, args=(float(sys.argv[2]),), name="late-worker")
t.start()
t.join()
