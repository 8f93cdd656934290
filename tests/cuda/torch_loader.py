# A PyTorch training loop on the GPU fed by a DataLoader that cannot keep
# up: two worker processes whose __getitem__ takes 0.5 ms an item (64
# items a batch: 16 ms a batch from two workers) for a step of a few ms on
# the GPU, a .item() each step. argv[1] seconds. trainsample must name it
# data-bound, with the workers' time, and give the GPU's share.
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        time.sleep(0.0005)
        return torch.full((1024,), float(i % 7)), torch.tensor([float(i % 3)])


def train(seconds):
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 1)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    train_loader = DataLoader(Slow(), batch_size=64, num_workers=2)
    end = time.monotonic() + seconds
    steps = 0
    for x, y in train_loader:
        x, y = x.cuda(), y.cuda()
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        last = loss.item()
        steps += 1
        if time.monotonic() > end:
            break
    print("torch_loader: %d steps, loss %.3f" % (steps, last))


if __name__ == "__main__":
    train(float(sys.argv[1]) if len(sys.argv) > 1 else 8)
