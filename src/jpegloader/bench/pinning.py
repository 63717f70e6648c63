"""Pinning emulated on a machine without an accelerator: what ``pin_memory=True``
costs on a GPU host, for both loaders alike, in the tests and the benchmark.

On a GPU host pinning a batch is a copy of each tensor into fresh page-locked host
memory.  ``emulated_pinning()`` reports an accelerator present (so torch's loader
and this one both pin) and makes pinning that copy into fresh ordinary memory:
``Tensor.pin_memory`` clones, ``torch.empty(..., pin_memory=True)`` allocates
unpinned.  Only for measuring and testing in one process: it patches torch.
"""
from __future__ import annotations

import contextlib

import torch


@contextlib.contextmanager
def emulated_pinning():
    acc = torch.accelerator
    saved = (acc.is_available, acc.current_device_index, acc.set_device_index,
             torch.Tensor.pin_memory, torch.empty)
    empty = torch.empty

    def empty_unpinned(*args, pin_memory=False, **kwargs):
        return empty(*args, **kwargs)

    def pin_memory(self, device=None):
        return self.clone()

    acc.is_available = lambda: True
    acc.current_device_index = lambda: 0
    acc.set_device_index = lambda index: None
    torch.Tensor.pin_memory = pin_memory
    torch.empty = empty_unpinned
    try:
        yield
    finally:
        (acc.is_available, acc.current_device_index, acc.set_device_index,
         torch.Tensor.pin_memory, torch.empty) = saved
