# A small PyTorch training loop on the GPU: argv[1] steps of a two-layer
# MLP with an optimizer and a .item() sync each step. Under record its
# kernels must land on this file's lines (forward, loss, backward, step).
import sys
import time

import torch


def batch(n):
    x = torch.randn(n, 1024, device="cuda")
    return x, (x.sum(dim=1, keepdim=True) > 0).float()


def forward(model, x):
    return model(x)


def train(steps):
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 1)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    t0 = time.monotonic()
    for _ in range(steps):
        x, y = batch(512)
        loss = loss_fn(forward(model, x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        last = loss.item()
    print("torch_step: %d steps in %.2f s, loss %.3f" % (steps, time.monotonic() - t0, last))


train(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
