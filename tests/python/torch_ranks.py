# SPDX-License-Identifier: MIT
# A torchrun job on the CPU (gloo): each rank runs a small all-reduce loop
# for SECONDS in rank_work. Prints "rank R done".
#   torchrun --nproc-per-node 2 torch_ranks.py SECONDS
import functools
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.rendezvous

# Debian's torch is built without libuv, which the agent's store client
# asks for regardless of USE_LIBUV (see torchrun_nolibuv.py).
sys.modules["torch.distributed.rendezvous"].TCPStore = functools.partial(dist.TCPStore,
                                                                        use_libuv=False)


def rank_work(seconds):
    t = torch.ones(256)
    end = time.monotonic() + seconds
    while True:
        x = torch.randn(64, 64)
        for _ in range(20):
            x = x @ x.t() / 64
        dist.all_reduce(t)
        # Every rank stops at the same step: the first whose time is up
        # says so (a rank that left alone would break the other's call).
        done = torch.tensor([1.0 if time.monotonic() > end else 0.0])
        dist.all_reduce(done)
        if done.item() > 0:
            break


def main():
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    rank_work(float(sys.argv[1]))
    print("rank %d done" % dist.get_rank(), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
