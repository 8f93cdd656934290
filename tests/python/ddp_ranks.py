# SPDX-License-Identifier: MIT
# A DDP training job on the CPU (gloo), two ranks started with
# mp.Process (torchrun of Debian's torch 1.13 fails on 3.11): rank 1's
# forward is slowed, so rank 0 waits in backward for the gradients'
# allreduce; rank 0 then computes metrics that rank 1 waits for in an
# explicit dist.all_reduce, and in an async one's work.wait(). Each rank
# clocks its own waits and prints
#   rank R pid P steps N comm_ms C total_ms T
# C: the time in the metrics' all_reduce, plus backward's wait for the
# gradients' allreduce (from a comm hook's call, when the gradients are
# ready, to backward's return: the model is one bucket); T: the time from
# the first backward's start to the last's, where trainsample counts its
# steps (by backward), and C within it.
#   python3 ddp_ranks.py SECONDS
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

SLOW_FORWARD = 1   # rank 1's extra matmuls in forward
SLOW_METRICS = 3    # rank 0's metrics' matmuls


class Net(nn.Module):
    def __init__(self, slow):
        super().__init__()
        self.fc1 = nn.Linear(256, 512)
        self.fc2 = nn.Linear(512, 10)
        # Not a buffer: DDP would broadcast it before each forward, a
        # wait the ranks do not clock.
        self.mix = torch.randn(512, 512) / 512 ** 0.5
        self.slow = slow

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        for _ in range(self.slow):
            h = torch.tanh(h @ self.mix)
        return self.fc2(h)


def metrics(out, rank):
    # Rank 0's own bookkeeping: rank 1 waits for it in all_reduce.
    m = out.detach()
    x = torch.randn(256, 256)
    for _ in range(SLOW_METRICS if rank == 0 else 0):
        x = torch.tanh(x @ x / 16)
    return torch.tensor([m.mean().item(), float(x[0, 0])])


def timed_allreduce(state, bucket):
    state.setdefault("ready", time.monotonic())
    return default_hooks.allreduce_hook(None, bucket)


def forever(loader):
    while True:
        yield from loader


def train(rank, seconds, store_path):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store_path, rank=rank,
                            world_size=2)
    model = DistributedDataParallel(Net(SLOW_FORWARD if rank == 1 else 0))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(512, 256), torch.randint(0, 10, (512,)))
    train_loader = DataLoader(data, batch_size=256)
    batches = forever(train_loader)
    hook = {}
    model.register_comm_hook(hook, timed_allreduce)
    dist.barrier()
    start = time.monotonic()
    comm, step_comm, steps, first = 0.0, 0.0, 0, None
    while True:
        steps += 1
        x, y = next(batches)
        opt.zero_grad()
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
        hook.clear()
        last = time.monotonic()
        first = first or last
        comm, step_comm = comm + step_comm, 0.0
        loss.backward()
        step_comm += time.monotonic() - hook["ready"]
        opt.step()
        # Metrics in two halves: one reduced by a blocking all_reduce,
        # the other by an async one and its handle's wait.
        m = metrics(out, rank)
        t = time.monotonic()
        dist.all_reduce(m)
        step_comm += time.monotonic() - t
        m = metrics(out, rank)
        done = torch.tensor([1.0 if time.monotonic() - start > seconds else 0.0])
        t = time.monotonic()
        work = dist.all_reduce(m, async_op=True)
        work.wait()
        dist.all_reduce(done)
        step_comm += time.monotonic() - t
        if done.item() > 0:
            break
    total = last - first
    # One write: the two ranks share the file.
    os.write(1, b"rank %d pid %d steps %d comm_ms %.0f total_ms %.0f\n" %
             (rank, os.getpid(), steps, comm * 1e3, total * 1e3))
    dist.destroy_process_group()


def main():
    seconds = float(sys.argv[1])
    with tempfile.TemporaryDirectory() as d:
        store = os.path.join(d, "store")
        # fork: torch is imported once (3.14's default is forkserver).
        ranks = [mp.get_context("fork").Process(target=train, args=(r, seconds, store)) for r in (0, 1)]
        for p in ranks:
            p.start()
        for p in ranks:
            p.join()
        sys.exit(max(p.exitcode for p in ranks))


if __name__ == "__main__":
    main()
