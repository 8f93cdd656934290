# SPDX-License-Identifier: MIT
# torchrun for a torch built without libuv (Debian's): its static
# rendezvous makes a TCPStore with libuv unconditionally, which such a
# build refuses, so the store is made without; everything else is
# torch.distributed.run itself. Run with USE_LIBUV=0 (the ranks' own
# stores read it).
import functools
import runpy

import torch.distributed
import torch.distributed.elastic.rendezvous.static_tcp_rendezvous as static

static.TCPStore = functools.partial(torch.distributed.TCPStore, use_libuv=False)
runpy.run_module("torch.distributed.run", run_name="__main__")
