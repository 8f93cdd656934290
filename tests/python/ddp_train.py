# SPDX-License-Identifier: MIT
# A DDP training script as people write it for torchrun: the process
# group from the environment, a model wrapped in DistributedDataParallel,
# a DataLoader over the rank's shard (DistributedSampler), the usual
# step, and optionally the loss averaged over the ranks each step for
# logging (an explicit all_reduce). One rank can be made slow, in its data
# (a costlier __getitem__) or its compute (a deeper forward).
# Each rank clocks itself and prints, at the end, one line:
#   rank R pid P steps N step_ms S data_ms D compute_ms C comm_ms W
# each a step's average over the steps after the first: D around the
# loader's next(), C forward, backward's own work and the optimizer, W
# the waits for the other ranks (backward from the gradients' being
# ready, which a comm hook marks, to its return, and the metrics'
# all_reduce).
# With --hang-rank R --hang-after S, rank R's data loading hangs S seconds
# in (a read that never returns, as from storage gone away): the other
# ranks wait for it in their next collective, as a hung job does, until
# the job is stopped (it prints "rank R hangs at step N" first).
# With --die-rank R --die-after S, rank R exits with status 3 in its data
# loading S seconds in, as a rank whose process crashes.
# With --spawn N it starts its N ranks itself, as torch.multiprocessing's
# spawn does for people who launch without torchrun (no RANK in their
# environment: each is told its rank by spawn's process index).
#   python3 ddp_train.py SECONDS [--slow-rank R --slow data|compute] [--metrics]
#                        [--hang-rank R --hang-after S] [--die-rank R --die-after S]
#                        [--spawn N] [--workers N]
import argparse
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class Samples(Dataset):
    def __init__(self, cost):
        self.x = torch.randn(4096, 128)
        self.y = torch.randint(0, 10, (4096,))
        self.cost = cost
        self.hang_at = None
        self.die_at = None
        self.steps = 0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.hang_at is not None and time.monotonic() > self.hang_at:
            self.hang()
        if self.die_at is not None and time.monotonic() > self.die_at:
            os.write(1, b"rank %d dies at step %d\n" % (dist.get_rank(), self.steps))
            os._exit(3)
        spin(self.cost)  # decoding, augmenting
        return self.x[i], self.y[i]

    def hang(self):
        os.write(1, b"rank %d hangs at step %d\n" % (dist.get_rank(), self.steps))
        r, _ = os.pipe()
        os.read(r, 1)  # never written


class Net(nn.Module):
    # Every rank has the same parameters (DDP checks); a slow one runs its
    # body more times (a longer sequence, a bigger batch).
    def __init__(self, passes):
        super().__init__()
        self.inp = nn.Linear(128, 256)
        self.body = nn.Sequential(*[nn.Linear(256, 256) for _ in range(3)])
        self.out = nn.Linear(256, 10)
        self.passes = passes

    def forward(self, x):
        h = torch.relu(self.inp(x))
        for _ in range(self.passes):
            h = torch.relu(self.body(h))
        return self.out(h)


def grads_ready(state, bucket):
    state.setdefault("at", time.monotonic())
    return default_hooks.allreduce_hook(None, bucket)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("seconds", type=float)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow", choices=["data", "compute"])
    ap.add_argument("--metrics", action="store_true")
    ap.add_argument("--hang-rank", type=int, default=-1)
    ap.add_argument("--hang-after", type=float, default=0)
    ap.add_argument("--die-rank", type=int, default=-1)
    ap.add_argument("--die-after", type=float, default=0)
    ap.add_argument("--spawn", type=int, default=0)
    ap.add_argument("--workers", type=int, default=0)
    return ap.parse_args()


def spawned(rank, world_size, port, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    train(args)


def main():
    args = parse_args()
    if args.spawn:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mp.spawn(spawned, args=(args.spawn, port, args), nprocs=args.spawn)
        return
    dist.init_process_group("gloo")
    train(args)


def train(args):
    rank = dist.get_rank()
    torch.set_num_threads(1)
    torch.manual_seed(rank)
    slow = rank == args.slow_rank
    data = Samples(0.0012 if slow and args.slow == "data" else 0.0002)
    if rank == args.hang_rank:
        data.hang_at = time.monotonic() + args.hang_after
    if rank == args.die_rank:
        data.die_at = time.monotonic() + args.die_after
    loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data),
                        num_workers=args.workers)
    model = DDP(Net(5 if slow and args.slow == "compute" else 1))
    hook = {}
    model.register_comm_hook(hook, grads_ready)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    clock = {"data": 0.0, "compute": 0.0, "comm": 0.0}
    steps, start, first = 0, time.monotonic(), None
    done = False
    while not done:
        it = iter(loader)
        while True:
            t0 = time.monotonic()
            try:
                x, y = next(it)
            except StopIteration:
                break
            t1 = time.monotonic()
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            opt.zero_grad()
            hook.clear()
            loss.backward()
            t2 = time.monotonic()
            opt.step()
            t3 = time.monotonic()
            wait = t2 - hook["at"]
            # Every rank stops at the same step: the first whose time is
            # up says so (a rank that left alone would break the others').
            stop = torch.tensor([float(t3 - start > args.seconds)])
            if args.metrics:
                stats = torch.stack([loss.detach(), stop[0]])
                dist.all_reduce(stats)
                stop = stats[1:]
            else:
                dist.all_reduce(stop)
            t4 = time.monotonic()
            steps += 1
            data.steps = steps
            if first is None:
                first = t4  # the first step warms up: not clocked
            else:
                clock["data"] += t1 - t0
                clock["compute"] += (t3 - t1) - wait
                clock["comm"] += wait + (t4 - t3)
            if stop.item() > 0:
                done = True
                break
    n = max(steps - 1, 1)
    total = time.monotonic() - first
    os.write(1, b"rank %d pid %d steps %d step_ms %.2f data_ms %.2f compute_ms %.2f comm_ms %.2f\n" %
             (rank, os.getpid(), steps, total * 1e3 / n, clock["data"] * 1e3 / n,
              clock["compute"] * 1e3 / n, clock["comm"] * 1e3 / n))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
