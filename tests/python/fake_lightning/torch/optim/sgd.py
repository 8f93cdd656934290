from torch.spin import spin


class SGD:
    def step(self, closure):
        loss = closure()
        spin(1)
        return loss

    def zero_grad(self):
        pass
