# SPDX-License-Identifier: MIT
# Two worker processes (multiprocessing, fork) that run a stand-in of
# torch's worker loop (fake_torch/) with worker_id 0 and 1, each busy in
# fetch_item for a second. Prints their pids: "pids P Q".
import multiprocessing as mp
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_torch"))
from torch.utils.data._utils.worker import _worker_loop  # noqa: E402


def fetch_item(worker_id):
    x = 0
    for i in range(2000):
        x += i * worker_id


def run(worker_id):
    _worker_loop(None, fetch_item, None, None, None, False, None, False, 0, None, worker_id,
                 2, False, None)


if __name__ == "__main__":
    mp.set_start_method("fork")
    ps = [mp.Process(target=run, args=(i,)) for i in range(2)]
    [p.start() for p in ps]
    print("pids", " ".join(str(p.pid) for p in ps), flush=True)
    [p.join() for p in ps]
