import time

UNIT = 0.005  # 5 ms of the thread's CPU


def spin(units):
    end = time.thread_time() + units * UNIT
    while time.thread_time() < end:
        pass
