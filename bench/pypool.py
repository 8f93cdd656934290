# SPDX-License-Identifier: MIT
# A thread pool as programs use one (docs/performance.md): 64 workers,
# each task sleeping 0 to 0.3 s and then hashing 10 MB (hashlib releases
# the GIL), six rounds of 64 tasks.
#   build/trainsample record -r 100 --stats -- python3 bench/pypool.py
import hashlib
import time
from concurrent.futures import ThreadPoolExecutor

DATA = b"x" * (10 << 20)


def job(i):
    time.sleep(0.05 * (i % 7))
    return hashlib.sha256(DATA).hexdigest()


with ThreadPoolExecutor(64) as ex:
    for _ in range(6):
        list(ex.map(job, range(64)))
print("done")
