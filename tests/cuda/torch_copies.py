# A PyTorch training loop whose batches come from host memory, as a
# DataLoader's do: argv[1] "pageable" copies each batch with .to("cuda")
# from ordinary memory, "pinned" from pinned memory with non_blocking=True.
# argv[2] steps. trainsample's copies finding must name the first, with the
# line that copies, and say nothing of pageable memory on the second.
import sys
import time

import torch


def batches(n, pinned):
    xs = [torch.randn(8192, 1024) for _ in range(n)]
    return [x.pin_memory() for x in xs] if pinned else xs


def to_gpu(x, pinned):
    return x.to("cuda", non_blocking=pinned)


def train(mode, steps):
    pinned = mode == "pinned"
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = batches(8, pinned)
    t0 = time.monotonic()
    for i in range(steps):
        x = to_gpu(data[i % len(data)], pinned)
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i % 10 == 9:
            last = loss.item()
    torch.cuda.synchronize()
    print("torch_copies %s: %d steps in %.2f s, loss %.3f" % (mode, steps, time.monotonic() - t0, last))


train(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300)
