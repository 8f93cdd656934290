class Module:
    def _call_impl(self, *args):
        return self.forward(*args)

    def _wrapped_call_impl(self, *args):
        return self._call_impl(*args)

    __call__ = _wrapped_call_impl
