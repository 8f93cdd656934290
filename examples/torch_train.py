# A PyTorch training loop on the CPU as people write it: an MLP, a
# DataLoader with two worker processes whose __getitem__ is slow (so the
# main thread waits for data), forward, backward and an SGD step.
#   torch_train.py SECONDS
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        time.sleep(0.001)  # a slow decode: 32 items = 32 ms a batch per worker
        return torch.full((128,), float(i % 7)), torch.tensor([float(i % 3)])


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(128, 512)
        self.b = torch.nn.Linear(512, 1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def train(seconds):
    torch.set_num_threads(1)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    loader = DataLoader(Slow(), batch_size=32, num_workers=2)
    end = time.monotonic() + seconds
    for x, y in loader:
        for _ in range(4):  # enough compute that the loop is not all waiting
            loss = torch.nn.functional.mse_loss(model(x.repeat(8, 1)), y.repeat(8, 1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        if time.monotonic() > end:
            break


if __name__ == "__main__":
    train(float(sys.argv[1]))
