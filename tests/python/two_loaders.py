# SPDX-License-Identifier: MIT
# One line fetches from two loaders: run_epoch(loader) is called with a
# training loader (each batch 10 ms of CPU, then forward 15, backward 10,
# optimizer 5 ms) and, from evaluate(), with a validation loader (each
# batch 16 ms, forward 15 ms). The loaders are stand-ins with torch's file
# and names (fake_torch/), so the built-in data rules apply; the summary
# tells them apart by the object each one is. Prints, as the loop's own
# clock measures them (ms): steps N train_data F val_batches N val_data F
#   two_loaders.py EPOCHS STEPS_PER_EPOCH VAL_BATCHES [TRAIN_START]
# TRAIN_START: seconds the training loader's __iter__ takes (its workers
# starting, as a loader with num_workers does at each epoch), while the
# validation loader's (no workers) returns at once.
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_torch"))

from torch.utils.data.dataloader import DataLoader  # noqa: E402


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def model_forward():
    spin(0.015)


def model_backward():
    spin(0.010)


def optimizer_step():
    spin(0.005)


spent = {"train": [0.0, 0], "val": [0.0, 0]}


def run_epoch(loader, train):
    t = time.perf_counter()
    for batch in loader:
        got = spent["train" if train else "val"]
        got[0] += time.perf_counter() - t
        got[1] += 1
        model_forward()
        if train:
            model_backward()
            optimizer_step()
        t = time.perf_counter()


def evaluate(loader):
    run_epoch(loader, False)


def main():
    epochs, steps, batches = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    start = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    train_loader = DataLoader(steps, 0.010, start)
    # A validation batch takes 16 ms: its batches are counted as runs of
    # the model's forward, so each fetch needs samples of its own; at
    # 4 ms, one trainsample preempted for 4 ms at 1 kHz merged two (a
    # fresh clone's make test, twice in one day).
    val_loader = DataLoader(batches, 0.016, 0.0)
    for epoch in range(epochs):
        run_epoch(train_loader, True)
        evaluate(val_loader)
    print("steps %d train_data %.3f val_batches %d val_data %.3f" % (
        spent["train"][1], spent["train"][0] * 1000 / spent["train"][1],
        spent["val"][1], spent["val"][0] * 1000 / spent["val"][1]))


main()
