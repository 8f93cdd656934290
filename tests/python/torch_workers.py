# SPDX-License-Identifier: MIT
# DataLoader workers for the subprocess tests: a dataset whose
# __getitem__ is slow, two workers, epochs until SECONDS have passed; with
# "persistent" the workers live through every epoch, with "transient"
# torch starts two new ones each epoch; three epochs at least, however
# long the workers take to start. Prints "epochs N".
#   torch_workers.py SECONDS persistent|transient
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class SlowItems(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        end = time.thread_time() + 0.002  # a decode that uses the CPU
        while time.thread_time() < end:
            pass
        return torch.full((16,), float(i))


def main():
    seconds, mode = float(sys.argv[1]), sys.argv[2]
    torch.set_num_threads(1)
    loader = DataLoader(SlowItems(), batch_size=8, num_workers=2,
                        persistent_workers=(mode == "persistent"))
    end, epochs = time.monotonic() + seconds, 0
    while epochs < 3 or time.monotonic() < end:
        for batch in loader:
            batch.sum()
        epochs += 1
    print("epochs %d" % epochs, flush=True)


if __name__ == "__main__":
    main()
