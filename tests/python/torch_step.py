# A small CPU training step in PyTorch, for --native on the sid root's
# Python 3.14 (make sid-root-torch): matmul forward, backward, SGD step.
#   torch_step.py SECONDS
import sys
import time

import torch


def forward(model, x):
    return model(x).square().mean()


def train(seconds):
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(512, 256)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        loss = forward(model, x)
        opt.zero_grad()
        loss.backward()
        opt.step()


train(float(sys.argv[1]))
