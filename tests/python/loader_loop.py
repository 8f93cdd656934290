# SPDX-License-Identifier: MIT
# A training loop over two loaders, in pure Python: each training step
# fetches a batch from train_loader (2 units of CPU, then 2 units asleep
# waiting for it) and runs forward 3, backward 2 and optimizer 1 unit;
# every 8 steps an evaluation fetches 4 batches from val_loader (1 unit
# each) and runs forward (3 units each). A unit is 5 ms, of the thread's
# CPU clock where it computes. The loader classes are stand-ins whose
# __next__ the test's rules name as data. Prints the truth, in ms, each
# phase's wall time as the loop measures it (a loaded machine stretches
# the spun units), per training step and per evaluation batch:
#   train_steps N val_batches N data F forward F backward F optimizer F
#   wait F val_data F val_forward F
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
        self.waited = 0.0
        if self.wait:
            t = time.perf_counter()
            time.sleep(self.wait)
            self.waited = time.perf_counter() - t
        return self.left


def model_forward():
    spin(3 * UNIT)


def model_backward():
    spin(2 * UNIT)


def optimizer_step():
    spin(1 * UNIT)


spent = dict.fromkeys(("data", "forward", "backward", "optimizer", "wait", "val_data",
                       "val_forward"), 0.0)


def evaluate(val_loader):
    t = time.perf_counter()
    for batch in val_loader:
        t1 = time.perf_counter()
        model_forward()
        t2 = time.perf_counter()
        spent["val_data"] += t1 - t
        spent["val_forward"] += t2 - t1
        t = t2
    return t


def main():
    steps = int(sys.argv[1])
    train_loader = Loader(2 * UNIT, 2 * UNIT, steps)
    val_loader = Loader(1 * UNIT, 0, 4)
    evals = 0
    end = time.perf_counter()
    for step, batch in enumerate(train_loader):
        t0 = time.perf_counter()
        model_forward()
        t1 = time.perf_counter()
        model_backward()
        t2 = time.perf_counter()
        optimizer_step()
        t3 = time.perf_counter()
        spent["data"] += t0 - end
        spent["forward"] += t1 - t0
        spent["backward"] += t2 - t1
        spent["optimizer"] += t3 - t2
        spent["wait"] += train_loader.waited
        end = t3
        if step % 8 == 7:
            end = evaluate(val_loader)
            evals += 1
    batches = 4 * evals
    print("train_steps %d val_batches %d" % (steps, batches), " ".join(
        "%s %.3f" % (k, v * 1000 / (batches if k.startswith("val") else steps))
        for k, v in spent.items()))


main()
