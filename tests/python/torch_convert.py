# SPDX-License-Identifier: MIT
# A PyTorch loop on the CPU that converts its batch each step, as code that
# keeps data in float64 and trains in float32 does: a 4M-element tensor
# turned float32 and made contiguous from a transposed view, then a small
# MLP step on a slice of it. Most of the loop's time is in ATen's copies.
#   torch_convert.py SECONDS
import sys
import time

import torch


def main():
    torch.set_num_threads(1)
    data = torch.randn(2048, 2048, dtype=torch.float64)
    model = torch.nn.Sequential(torch.nn.Linear(2048, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    end = time.monotonic() + float(sys.argv[1])
    steps = 0
    while time.monotonic() < end:
        x = data.t().to(torch.float32).contiguous()
        loss = model(x[:64]).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
    print("steps %d" % steps)


main()
