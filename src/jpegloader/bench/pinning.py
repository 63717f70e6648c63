"""Pinning emulated on a machine without an accelerator: what ``pin_memory=True``
costs on a GPU host, for both loaders alike, in the tests and the benchmark.

On a GPU host pinning a batch is a copy of each tensor into page-locked memory from
torch's caching host allocator: a block is allocated (and locked) once, returns to the
cache when the tensors using it are gone, and is handed out again for a request of the
same rounded size, already resident.  ``emulated_pinning()`` reports an accelerator
present (so torch's loader and this one both pin) and makes pinning that copy into
ordinary memory from a cache that behaves alike (``HostBlocks``): ``Tensor.pin_memory``
copies into a cached block, ``torch.empty(..., pin_memory=True)`` allocates one, and
``Tensor.is_pinned`` is true of the tensors in them (whose ``pin_memory()`` is then
themselves, as torch has it).  ``emulated_pinning(cached=False)`` copies into fresh
memory instead (every page faulted in on each copy: what a host without the cache
would pay).  Only for measuring and testing in one process: it patches torch.
"""
from __future__ import annotations

import collections
import contextlib
import math

import numpy as np
import torch


class _Lease(np.ndarray):
    """A block's bytes lent to one tensor's storage; when the storage lets go of it,
    the block goes back to its cache."""

    def __del__(self):
        blocks, block = self.__dict__.pop("_home", (None, None))
        if blocks is not None:
            blocks.give_back(block)


class HostBlocks:
    """Host memory handed out in blocks rounded up to a power of two (as torch's
    caching host allocator rounds them), each reused once its tensors are gone
    (with ``reuse=False``, a new block each time, its pages not yet touched)."""
    SMALLEST = 4096

    def __init__(self, reuse: bool = True):
        self.reuse = reuse
        self.free: dict[int, collections.deque] = {}
        self.starts: set[int] = set()  # the blocks' addresses: what is "pinned"
        self.allocated = 0  # blocks made, for the tests

    def holds(self, t: torch.Tensor) -> bool:
        return t.untyped_storage().data_ptr() in self.starts

    def empty(self, shape, dtype: torch.dtype) -> torch.Tensor:
        shape = tuple(shape)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes == 0:
            return torch.empty(shape, dtype=dtype)
        size = max(self.SMALLEST, 1 << (nbytes - 1).bit_length())
        free = self.free.setdefault(size, collections.deque())
        try:
            block = free.pop()
        except IndexError:
            block = np.empty(size, dtype=np.uint8)
            if self.reuse:
                block.fill(0)  # resident from the start, as locked pages are
            self.starts.add(block.ctypes.data)
            self.allocated += 1
        lease = block[:nbytes].view(_Lease)
        lease._home = (self, block)
        return torch.from_numpy(lease).view(dtype).view(shape)

    def give_back(self, block: np.ndarray) -> None:
        if self.reuse:
            self.free.setdefault(block.size, collections.deque()).append(block)
        else:
            self.starts.discard(block.ctypes.data)


@contextlib.contextmanager
def emulated_pinning(cached: bool = True):
    acc = torch.accelerator
    saved = (acc.is_available, acc.current_device_index, acc.set_device_index,
             torch.Tensor.pin_memory, torch.Tensor.is_pinned, torch.empty)
    empty = torch.empty
    blocks = HostBlocks(reuse=cached)

    def empty_pinned(*args, pin_memory=False, **kwargs):
        if not pin_memory:
            return empty(*args, **kwargs)
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)) \
            else args
        return blocks.empty(shape, kwargs.get("dtype") or torch.get_default_dtype())

    def pin_memory(self, device=None):
        if blocks.holds(self):
            return self
        return blocks.empty(self.shape, self.dtype).copy_(self)

    def is_pinned(self, device=None):
        return blocks.holds(self)

    acc.is_available = lambda: True
    acc.current_device_index = lambda: 0
    acc.set_device_index = lambda index: None
    torch.Tensor.pin_memory = pin_memory
    torch.Tensor.is_pinned = is_pinned
    torch.empty = empty_pinned
    try:
        yield blocks
    finally:
        (acc.is_available, acc.current_device_index, acc.set_device_index,
         torch.Tensor.pin_memory, torch.Tensor.is_pinned, torch.empty) = saved
