from lightning.pytorch.loops.optimization.automatic import _AutomaticOptimization


class _TrainingEpochLoop:
    def __init__(self, trainer):
        self.trainer = trainer
        self.automatic_optimization = _AutomaticOptimization()

    def run(self, fetcher):
        for batch in fetcher:
            self.advance(batch)

    def advance(self, batch):
        t = self.trainer
        self.automatic_optimization.run(t.optimizer, t.module, batch)
        t.steps += 1
        if t.steps % 8 == 0:
            t.validate()
