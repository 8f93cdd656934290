class Closure:
    def __init__(self, step_fn, backward_fn):
        self._step_fn, self._backward_fn = step_fn, backward_fn

    def closure(self):
        loss = self._step_fn()
        self._backward_fn(loss)
        return loss

    def __call__(self):
        return self.closure()


class _AutomaticOptimization:
    def run(self, optimizer, module, batch):
        closure = Closure(lambda: self._training_step(module, batch), module.backward)
        self._optimizer_step(optimizer, closure)

    def _optimizer_step(self, optimizer, closure):
        optimizer.step(closure)
        optimizer.zero_grad()

    def _training_step(self, module, batch):
        return module.training_step(batch)
