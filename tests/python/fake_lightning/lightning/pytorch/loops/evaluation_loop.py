from lightning.pytorch.loops.fetchers import _PrefetchDataFetcher


class _EvaluationLoop:
    def run(self, module):
        for batch in _PrefetchDataFetcher(2):
            module.validation_step(batch)
