# A named thread busy in a native library (argv[1], through ctypes) and one
# asleep, for the container tests. argv: library, seconds; prints "ready".
import ctypes
import sys
import threading
import time

lib = ctypes.CDLL(sys.argv[1])
lib.nsside_spin.argtypes = [ctypes.c_double]
seconds = float(sys.argv[2])
stop = time.time() + seconds


def native_worker():
    while time.time() < stop:
        lib.nsside_spin(0.05)


def sleeper():
    time.sleep(seconds)


threads = [threading.Thread(target=native_worker, name="native_worker"),
           threading.Thread(target=sleeper, name="sleeper")]
for t in threads:
    t.start()
print("ready", flush=True)
for t in threads:
    t.join()
