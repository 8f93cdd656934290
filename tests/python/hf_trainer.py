# SPDX-License-Identifier: MIT
# Hugging Face Trainer for real, offline: a tiny GPT-2 built from a config
# (nothing downloaded) trained for a few steps on a synthetic dataset, on
# the CPU. A callback measures the truth in-process: the steps, and the
# median time from one step's start to the next's. Prints
#   steps N step_p50_ms F
#   hf_trainer.py STEPS OUTDIR
import statistics
import sys
import time

import torch
from torch.utils.data import Dataset
from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback,
                          TrainingArguments)


class Tokens(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        ids = torch.arange(i, i + 64) % 500
        return {"input_ids": ids, "labels": ids}


class StepClock(TrainerCallback):
    def __init__(self):
        self.starts = []

    def on_step_begin(self, args, state, control, **kwargs):
        self.starts.append(time.perf_counter())


def main():
    steps, out = int(sys.argv[1]), sys.argv[2]
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=500, n_positions=64, n_embd=128, n_layer=2,
                                       n_head=2, bos_token_id=0,
                                       eos_token_id=0))
    clock = StepClock()
    args = TrainingArguments(output_dir=out, max_steps=steps, per_device_train_batch_size=8,
                             learning_rate=1e-4, logging_steps=1000, save_strategy="no",
                             report_to=[], use_cpu=True, dataloader_num_workers=0,
                             disable_tqdm=True)
    Trainer(model=model, args=args, train_dataset=Tokens(), callbacks=[clock]).train()
    gaps = [b - a for a, b in zip(clock.starts, clock.starts[1:])]
    print("steps %d step_p50_ms %.3f" % (len(clock.starts), statistics.median(gaps) * 1000))


main()
