# SPDX-License-Identifier: MIT
# A PyTorch loop on the CPU that measures its own phases in-process: the
# wall time in next() on the DataLoader (data), the model's call
# (forward), loss.backward() (backward) and zero_grad + step (optimizer).
#   torch_phases.py data SECONDS     slow __getitem__, 2 workers: data-bound
#   torch_phases.py compute SECONDS  a wider model, no workers: compute-bound
# Prints the truth: "data S forward S backward S optimizer S steps N" in
# seconds, the first fetch (the workers' start) in data.
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Items(Dataset):
    def __init__(self, slow):
        self.slow = slow

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        if self.slow:
            time.sleep(0.002)  # a slow decode: 16 items, 32 ms a batch a worker
        return torch.full((256,), float(i % 7)), torch.tensor([float(i % 3)])


class MLP(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.a = torch.nn.Linear(256, width)
        self.b = torch.nn.Linear(width, 1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def main():
    mode, seconds = sys.argv[1], float(sys.argv[2])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    data = mode == "data"
    model = MLP(256 if data else 2048)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    loader = DataLoader(Items(data), batch_size=16 if data else 64, num_workers=2 if data else 0)
    spent = {"data": 0.0, "forward": 0.0, "backward": 0.0, "optimizer": 0.0}
    t0 = time.perf_counter()
    it = iter(loader)
    next(it)
    spent["data"] += time.perf_counter() - t0
    steps, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        x, y = next(it)
        t1 = time.perf_counter()
        out = model(x)
        t2 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(out, y)
        t3 = time.perf_counter()
        loss.backward()
        t4 = time.perf_counter()
        opt.step()
        opt.zero_grad()
        t5 = time.perf_counter()
        spent["data"] += t1 - t0
        spent["forward"] += t2 - t1
        spent["backward"] += t4 - t3
        spent["optimizer"] += t5 - t4
        steps += 1
    print(" ".join("%s %.6f" % kv for kv in spent.items()), "steps", steps)


if __name__ == "__main__":
    main()
