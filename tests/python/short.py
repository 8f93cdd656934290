# A launch that runs briefly: 50 ms of Python work, then exits.
import time

def brief():
    end = time.time() + 0.05
    while time.time() < end:
        pass

brief()
