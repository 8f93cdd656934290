# Named threads, each busy in its own function, and one asleep.
# argv: seconds; prints "ready" once every thread runs.
import sys
import threading
import time

seconds = float(sys.argv[1])
stop = time.time() + seconds


def spin_loader():
    x = 0
    while time.time() < stop:
        x += 1


def spin_trainer():
    x = 0
    while time.time() < stop:
        x += 1


def sleeper():
    time.sleep(seconds)


threads = [threading.Thread(target=f, name=n) for f, n in
           ((spin_loader, "loader"), (spin_trainer, "trainer"), (sleeper, "sleeper"))]
for t in threads:
    t.start()
print("ready", flush=True)
for t in threads:
    t.join()
