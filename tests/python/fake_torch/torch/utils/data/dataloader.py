# Stand-in for torch's DataLoader (the path and qualified names the
# built-in data rules match): making its iterator takes `start` seconds of
# CPU (a real one's workers starting), each batch `cpu` seconds, and the
# end of a pass `stop` seconds blocked in _shutdown_workers (a real one
# joining its workers).
import time


def _spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self.loader, self.left = loader, loader.batches

    def __iter__(self):
        return self

    def __next__(self):
        if not self.left:
            self._shutdown_workers()
            raise StopIteration
        self.left -= 1
        _spin(self.loader.cpu)
        return self.left


    def _shutdown_workers(self):
        if self.loader.stop:
            time.sleep(self.loader.stop)


class DataLoader:
    def __init__(self, batches, cpu, start, stop=0.0):
        self.batches, self.cpu, self.start, self.stop = batches, cpu, start, stop

    def __iter__(self):
        _spin(self.start)
        return _BaseDataLoaderIter(self)
