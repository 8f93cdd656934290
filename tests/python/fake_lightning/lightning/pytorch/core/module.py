from torch.nn.modules.module import Module
from torch.spin import spin


class LightningModule(Module):
    def backward(self, loss):
        loss.backward()

    def log(self, name, value):
        spin(0.2)
