# A loop of short Python work and, with "sys", an os.getppid() (a real
# syscall, not the vDSO) after each few microseconds of it ("user": none),
# for SECONDS: trainsample --stats counts the stops that came at a
# syscall's end.
import os
import sys
import time

mode = sys.argv[1]
end = time.monotonic() + float(sys.argv[2])


def work():
    x = 0
    for i in range(100):
        x += i * i
    return x


while time.monotonic() < end:
    for _ in range(64):
        work()
        if mode == "sys":
            os.getppid()
