# SPDX-License-Identifier: MIT
# A Lightning-shaped training run on stand-ins with Lightning's own
# qualified names and files (fake_lightning/): its fetcher takes 4 units a
# batch, the model's forward 3, backward 2, the optimizer 1, a log call 0.2,
# in Lightning's call structure (the training step inside the optimizer's
# closure); an evaluation of 2 batches every 8 steps and a checkpoint at
# each epoch's end. Prints "steps N".
#   lightning_loop.py EPOCHS STEPS_PER_EPOCH
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_lightning"))

from lightning.pytorch.callbacks.model_checkpoint import ModelCheckpoint  # noqa: E402
from lightning.pytorch.core.module import LightningModule  # noqa: E402
from lightning.pytorch.loops.fit_loop import Trainer  # noqa: E402
from torch._tensor import Tensor  # noqa: E402
from torch.optim.sgd import SGD  # noqa: E402
from torch.spin import spin  # noqa: E402


class LitModel(LightningModule):
    def forward(self, batch):
        spin(3)
        return Tensor()

    def training_step(self, batch):
        loss = self(batch)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch):
        self(batch)


def main():
    epochs, per_epoch = int(sys.argv[1]), int(sys.argv[2])
    trainer = Trainer(LitModel(), SGD(), [ModelCheckpoint()])
    trainer.fit(epochs, per_epoch)
    print("steps %d" % trainer.steps)


main()
