# SPDX-License-Identifier: MIT
# A small CNN trained on the CPU the way people write it: two DataLoaders
# with worker processes, a validation pass every few steps (model.eval(),
# torch.no_grad()), the loop in one of the shapes real scripts have.
# It times itself with its own clock and prints, at the end, one line:
#   truth steps N epochs N loop_s F val_s F data_ms F forward_ms F backward_ms F
# (loop_s: from the first training step's start, the workers' start before
# it left out; data/forward/backward: ms per training step, validation
# excluded).
#
#   train_cnn.py [--loop for|next|gen|attr|enumerate|phases] [--val none|inline|function]
#                [--bound data|compute] [--steps N] [--val-every N]
import argparse
import itertools
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    """Random images; a data-bound run makes each item cost CPU time."""

    def __init__(self, n, work_s):
        self.n = n
        self.work_s = work_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(1, 28, 28, generator=g)
        if self.work_s:
            end = time.thread_time() + self.work_s
            while time.thread_time() < end:
                x = x * 1.0000001
        return x, i % 10


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv1 = nn.Conv2d(1, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)
        self.fc = nn.Linear(width * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


clock = {"data": 0.0, "forward": 0.0, "backward": 0.0, "val": 0.0, "first": 0.0}


def evaluate(model, loader):
    t = time.perf_counter()
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    model.train()
    clock["val"] += time.perf_counter() - t
    return correct


def train_step(model, opt, x, y):
    t = time.perf_counter()
    if not clock["first"]:
        clock["first"] = t
        clock["data"] = 0.0  # the first fetch, workers starting: not a step's
    loss = F.cross_entropy(model(x), y)
    t2 = time.perf_counter()
    opt.zero_grad()
    loss.backward()
    opt.step()
    clock["forward"] += t2 - t
    clock["backward"] += time.perf_counter() - t2
    return loss


class Trainer:
    def __init__(self, model, opt, train_loader, val_loader):
        self.model, self.opt = model, opt
        self.train_loader, self.val_loader = train_loader, val_loader


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loop", default="for")
    ap.add_argument("--val", default="function")
    ap.add_argument("--bound", default="compute")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--val-every", type=int, default=15)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)

    data_bound = args.bound == "data"
    model = Net(16 if data_bound else 32)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batch = 32
    train_loader = DataLoader(Images(batch * args.steps, 0.002 if data_bound else 0.0),
                              batch_size=batch, shuffle=True, num_workers=args.workers,
                              persistent_workers=args.workers > 0)
    val_loader = DataLoader(Images(batch * 4, 0.002 if data_bound else 0.0),
                            batch_size=batch, num_workers=args.workers)
    trainer = Trainer(model, opt, train_loader, val_loader)

    def batches():
        for xy in train_loader:
            yield xy

    def validate():
        if args.val == "function":
            evaluate(model, val_loader)
        elif args.val == "inline":
            t = time.perf_counter()
            model.eval()
            correct = 0
            with torch.no_grad():
                for vx, vy in val_loader:
                    correct += (model(vx).argmax(1) == vy).sum().item()
            model.train()
            clock["val"] += time.perf_counter() - t

    steps = 0
    t0 = time.perf_counter()
    if args.loop == "for":
        t = time.perf_counter()
        for x, y in train_loader:
            clock["data"] += time.perf_counter() - t
            train_step(model, opt, x, y)
            steps += 1
            if steps % args.val_every == 0:
                validate()
            t = time.perf_counter()
    elif args.loop == "enumerate":
        t = time.perf_counter()
        for i, (x, y) in enumerate(itertools.islice(trainer.train_loader, args.steps)):
            clock["data"] += time.perf_counter() - t
            train_step(trainer.model, trainer.opt, x, y)
            steps += 1
            if (i + 1) % args.val_every == 0:
                validate()
            t = time.perf_counter()
    elif args.loop == "phases":
        # The tutorial's shape: one inner loop for both, by phase, the
        # same lines fetching and running the model.
        dataloaders = {"train": train_loader, "val": val_loader}
        limit = {"train": args.val_every, "val": None}
        for epoch in range(args.steps // args.val_every):
            for phase in ("train", "val"):
                model.train(phase == "train")
                t = time.perf_counter()
                tv = t
                for x, y in itertools.islice(dataloaders[phase], limit[phase]):
                    t2 = time.perf_counter()
                    opt.zero_grad()
                    with torch.set_grad_enabled(phase == "train"):
                        loss = F.cross_entropy(model(x), y)
                        if phase == "train":
                            t3 = time.perf_counter()
                            loss.backward()
                            opt.step()
                            if steps:  # the first fetch started the workers
                                clock["data"] += t2 - t
                            clock["first"] = clock["first"] or t2
                            clock["forward"] += t3 - t2
                            clock["backward"] += time.perf_counter() - t3
                            steps += 1
                    t = time.perf_counter()
                if phase == "val":
                    clock["val"] += time.perf_counter() - tv
    elif args.loop in ("next", "gen", "attr"):
        it = {"next": lambda: iter(train_loader), "gen": batches,
              "attr": lambda: iter(trainer.train_loader)}[args.loop]()
        for _ in range(args.steps):
            t = time.perf_counter()
            x, y = next(it)
            clock["data"] += time.perf_counter() - t
            train_step(model, opt, x, y)
            steps += 1
            if steps % args.val_every == 0:
                validate()
    loop_s = time.perf_counter() - (clock["first"] or t0)
    n = max(steps - 1, 1)
    epochs = args.steps // args.val_every if args.loop == "phases" else 1
    print("truth steps %d epochs %d loop_s %.3f val_s %.3f data_ms %.1f forward_ms %.1f "
          "backward_ms %.1f" % (steps, epochs, loop_s, clock["val"], 1000 * clock["data"] / n,
                                1000 * clock["forward"] / n, 1000 * clock["backward"] / n),
          flush=True)


if __name__ == "__main__":
    main()
