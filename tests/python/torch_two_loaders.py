# SPDX-License-Identifier: MIT
# Real PyTorch, one line fetching from two DataLoaders (2 workers each):
# run_epoch(loader) trains on train_loader and, from evaluate(), runs
# val_loader under no_grad. Each __getitem__ spins; a step is two Linear
# layers, backward and SGD. Prints, by the loop's own clock (ms):
#   steps N train_data F val_batches N val_data F
#   torch_two_loaders.py EPOCHS
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class Slow(Dataset):
    def __init__(self, n, cost):
        self.n, self.cost = n, cost

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        spin(self.cost)
        return torch.randn(512), torch.randn(512)


model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.Linear(512, 512))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
spent = {"train": [0.0, 0], "val": [0.0, 0]}


def run_epoch(loader, train):
    t = time.perf_counter()
    for x, y in loader:
        got = spent["train" if train else "val"]
        got[0] += time.perf_counter() - t
        got[1] += 1
        loss = torch.nn.functional.mse_loss(model(x), y)
        if train:
            opt.zero_grad()
            loss.backward()
            opt.step()
        spin(0.004)
        t = time.perf_counter()


def evaluate(loader):
    with torch.no_grad():
        run_epoch(loader, False)


def main():
    torch.set_num_threads(1)
    train_loader = DataLoader(Slow(640, 0.0005), batch_size=32, num_workers=2)
    val_loader = DataLoader(Slow(160, 0.0002), batch_size=32, num_workers=2)
    for epoch in range(int(sys.argv[1])):
        run_epoch(train_loader, True)
        evaluate(val_loader)
    print("steps %d train_data %.3f val_batches %d val_data %.3f" % (
        spent["train"][1], spent["train"][0] * 1000 / spent["train"][1],
        spent["val"][1], spent["val"][0] * 1000 / spent["val"][1]))


if __name__ == "__main__":
    main()
