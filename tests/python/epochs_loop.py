# SPDX-License-Identifier: MIT
# Epochs over a stand-in DataLoader (fake_torch/: torch's file and names):
# each pass starts with START (20 ms) of CPU making the iterator (workers starting),
# each batch 10 ms; a step's forward, backward and optimizer spin 15, 10
# and 5 ms of the thread's CPU; each pass ends with STOP seconds blocked
# joining its workers (0 by default). Prints "epochs N steps N".
#   epochs_loop.py EPOCHS STEPS_PER_EPOCH [START [STOP]]
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


def main():
    epochs, per_epoch = int(sys.argv[1]), int(sys.argv[2])
    loader = DataLoader(per_epoch, 0.010, float(sys.argv[3]) if len(sys.argv) > 3 else 0.020,
                        float(sys.argv[4]) if len(sys.argv) > 4 else 0.0)
    for epoch in range(epochs):
        for batch in loader:
            model_forward()
            model_backward()
            optimizer_step()
    print("epochs %d steps %d" % (epochs, epochs * per_epoch))


main()
