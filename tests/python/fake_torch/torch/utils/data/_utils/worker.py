# SPDX-License-Identifier: MIT
# A stand-in for torch's DataLoader worker loop, same file path and
# function name and the worker_id argument in the same place, so the
# subprocess tests check the "DataLoader worker N" label without torch
# (tests/python/fake_workers.py). Not torch's code.
import time


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event,
                 auto_collation, collate_fn, drop_last, base_seed, init_fn, worker_id,
                 num_workers, persistent_workers, shared_seed):
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        dataset(worker_id)
