# SPDX-License-Identifier: MIT
# A training loop over two loaders, in pure Python: each training step
# fetches a batch from train_loader (2 units of CPU, then 2 units asleep
# waiting for it) and runs forward 3, backward 2 and optimizer 1 unit;
# every 8 steps an evaluation fetches 4 batches from val_loader (1 unit
# each) and runs forward (3 units each). A unit is 5 ms, of the thread's
# CPU clock where it computes. The loader classes are stand-ins whose
# __next__ the test's rules name as data. Prints the truth, in ms:
#   train_steps N val_batches N sleep_ms F
#   loader_loop.py STEPS
import sys
import time

UNIT = 0.005


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class Loader:
    def __init__(self, cpu, wait, n):
        self.cpu, self.wait, self.n = cpu, wait, n

    def __iter__(self):
        self.left = self.n
        return self

    def __next__(self):
        if self.left == 0:
            raise StopIteration
        self.left -= 1
        spin(self.cpu)
        if self.wait:
            time.sleep(self.wait)
        return self.left


def model_forward():
    spin(3 * UNIT)


def model_backward():
    spin(2 * UNIT)


def optimizer_step():
    spin(1 * UNIT)


def evaluate(val_loader):
    for batch in val_loader:
        model_forward()


def main():
    steps = int(sys.argv[1])
    train_loader = Loader(2 * UNIT, 2 * UNIT, steps)
    val_loader = Loader(1 * UNIT, 0, 4)
    evals = 0
    for step, batch in enumerate(train_loader):
        model_forward()
        model_backward()
        optimizer_step()
        if step % 8 == 7:
            evaluate(val_loader)
            evals += 1
    print("train_steps %d val_batches %d sleep_ms %.1f" % (steps, 4 * evals, 2 * UNIT * 1000))


main()
