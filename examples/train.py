"""A toy training job in pure Python, shaped like a real one: a loader
thread prepares batches into a queue; the main loop takes a batch, runs
forward, backward and an optimizer step on a tiny two-layer network of
lists of floats. With --workers N, N worker processes (as a DataLoader's)
make and augment the batches and the loader thread only collates them.
Run: python3 examples/train.py [SECONDS] [--workers N]"""
import math
import multiprocessing
import queue
import random
import sys
import threading
import time

# A step of about 100 ms (backward 20 ms, on a data worker's batch of
# 60-100 ms): each phase is seen for a few samples at make demo's 500 Hz
# even where a loaded machine has trainsample miss half its ticks, so the
# steps are counted (with 16 and 16, 7 ms steps were not).
DIM, HIDDEN, BATCH = 24, 64, 64


def make_batch():
    return [[random.gauss(0.0, 1.0) for _ in range(DIM)] for _ in range(BATCH)]


def augment(batch):
    # Per-sample work on the CPU, as image decoding or tokenizing would be:
    # here it is what the training loop waits for.
    for _ in range(320):
        batch = [[x * 0.9 + 0.1 * math.sin(x) for x in sample] for sample in batch]
    return batch


def loader(batches, stop):
    while not stop.is_set():
        batch = augment(make_batch())
        batches.put(batch)


def data_worker(worker_id, ready):
    # A process of its own, like a DataLoader worker; its thread is named
    # so a profile tells it from the training process's MainThread.
    threading.current_thread().name = "data worker %d" % worker_id
    random.seed(worker_id)
    while True:
        ready.put(augment(make_batch()))


def collate(batch):
    return [list(sample) for sample in batch]


def collating_loader(ready, batches, stop):
    while not stop.is_set():
        batches.put(collate(ready.get()))


def matvec(weights, x):
    return [sum(w * xi for w, xi in zip(row, x)) for row in weights]


def forward(model, batch):
    w1, w2 = model
    hidden = [[max(0.0, h) for h in matvec(w1, x)] for x in batch]
    out = [matvec(w2, h)[0] for h in hidden]
    return hidden, out


def backward(model, batch, hidden, out):
    w1, w2 = model
    g2 = [[0.0] * HIDDEN]
    g1 = [[0.0] * DIM for _ in range(HIDDEN)]
    for x, h, y in zip(batch, hidden, out):
        err = y - sum(x) * 0.1
        for j in range(HIDDEN):
            g2[0][j] += err * h[j]
            if h[j] > 0.0:
                d = err * w2[0][j]
                row = g1[j]
                for i in range(DIM):
                    row[i] += d * x[i]
    return g1, g2


def optimizer_step(model, grads, lr=1e-3):
    for weights, grad in zip(model, grads):
        for row, grow in zip(weights, grad):
            for i, g in enumerate(grow):
                row[i] -= lr * g


def train(seconds, workers=0):
    random.seed(0)
    model = ([[random.gauss(0.0, 0.3) for _ in range(DIM)] for _ in range(HIDDEN)],
             [[random.gauss(0.0, 0.3) for _ in range(HIDDEN)]])
    batches = queue.Queue(maxsize=4)
    stop = threading.Event()
    procs = []
    if workers:
        ctx = multiprocessing.get_context("fork")
        ready = ctx.Queue(maxsize=4)
        procs = [ctx.Process(target=data_worker, args=(i, ready), daemon=True)
                 for i in range(workers)]
        for p in procs:
            p.start()
        worker = threading.Thread(target=collating_loader, args=(ready, batches, stop),
                                  name="loader", daemon=True)
    else:
        worker = threading.Thread(target=loader, args=(batches, stop), name="loader", daemon=True)
    worker.start()
    steps, end = 0, time.time() + seconds
    while time.time() < end:
        batch = batches.get()
        hidden, out = forward(model, batch)
        grads = backward(model, batch, hidden, out)
        optimizer_step(model, grads)
        steps += 1
    stop.set()
    for p in procs:
        p.terminate()
        p.join()
    print("trained %d steps" % steps)


if __name__ == "__main__":
    args = sys.argv[1:]
    n = 0
    if "--workers" in args:
        i = args.index("--workers")
        n = int(args[i + 1])
        del args[i:i + 2]
    train(float(args[0]) if args else 3.0, n)
