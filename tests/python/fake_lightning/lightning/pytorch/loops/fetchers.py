from torch.spin import spin


class _PrefetchDataFetcher:
    def __init__(self, batches):
        self.left = batches

    def __iter__(self):
        return self

    def __next__(self):
        if not self.left:
            raise StopIteration
        self.left -= 1
        spin(4)
        return self.left
