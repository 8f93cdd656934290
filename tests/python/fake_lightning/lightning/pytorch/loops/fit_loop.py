from lightning.pytorch.loops.evaluation_loop import _EvaluationLoop
from lightning.pytorch.loops.fetchers import _PrefetchDataFetcher
from lightning.pytorch.loops.training_epoch_loop import _TrainingEpochLoop


class _FitLoop:
    def __init__(self, trainer):
        self.trainer = trainer
        self.epoch_loop = _TrainingEpochLoop(trainer)

    def run(self, epochs, steps_per_epoch):
        for _ in range(epochs):
            self.epoch_loop.run(_PrefetchDataFetcher(steps_per_epoch))
            for cb in self.trainer.callbacks:
                cb.on_train_epoch_end(self.trainer, self.trainer.module)


class Trainer:
    def __init__(self, module, optimizer, callbacks):
        self.module, self.optimizer, self.callbacks = module, optimizer, callbacks
        self.steps = 0
        self.fit_loop = _FitLoop(self)

    def validate(self):
        _EvaluationLoop().run(self.module)

    def fit(self, epochs, steps_per_epoch):
        self.fit_loop.run(epochs, steps_per_epoch)
