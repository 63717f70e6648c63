"""A collate_fn's batch sent through the slot: its large tensors copied into the slot's
bytes, the rest pickled beside them.

NOTE [ A collate_fn's batch in the slot ]
A batch a user's collate_fn makes in a worker (DETR's NestedTensor) would travel as
torch's loader sends it: each tensor moved into a new shared-memory file, whose pages
the worker faults in as it copies and the main process again as it reads (for DETR,
more of a worker's time than the decode: docs/performance.md).  Where the layout gives
each sample a row of bytes, the batch is pickled with the storage of every plain CPU
tensor of at least MIN_BYTES copied into the slot once (64-byte aligned; views of it
stay views) and named by offset, dtype, shape and strides; the main process gets
views of the slot in their place.  Its pages stay mapped in both processes: one copy
a batch.  What does not fit, and tensor subclasses (their own metadata), are pickled
as torch pickles them; small tensors go by value; tensors a decoder wrote into the
slot itself are named in place.  The slot is held while the user holds any of the
batch (NOTE [ Handing out slots without copying ] in ring.py).
"""
from __future__ import annotations

import io
import math
import pickle
from dataclasses import dataclass

from multiprocessing.reduction import ForkingPickler

import numpy as np
import torch
import torch.multiprocessing  # noqa: F401 - registers torch's reductions with ForkingPickler

#: Tensors smaller than this are pickled by value: copying them costs less than a place.
MIN_BYTES = 64 << 10
_ALIGN = 64


@dataclass(frozen=True)
class SlotBatch:
    """A batch pickled with its large tensors in the slot; ``used``: the slot's bytes."""

    data: bytes
    used: int


class _Packer(ForkingPickler):
    """Pickles as torch's loader does (a tensor that does not fit: a shared-memory
    file), but for the plain tensors it places in the slot or carries by value."""

    def __init__(self, file, arena: np.ndarray, reserve=None, written: int = 0):
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.arena = torch.from_numpy(arena)
        self.reserve = reserve
        self.used = written
        self.placed: dict[int, int] = {}  # storage address -> offset in the arena

    def persistent_id(self, obj):
        if type(obj) is not torch.Tensor or obj.device.type != "cpu" or \
                obj.requires_grad or obj.layout != torch.strided or obj.is_quantized:
            return None
        storage = obj.untyped_storage()
        nbytes = storage.nbytes()
        if nbytes < MIN_BYTES:
            # a small tensor that is all of its storage goes by value (torch would make a
            # shared-memory file of it); views of shared storage as torch sends them
            whole = obj.is_contiguous() and obj.storage_offset() == 0 and \
                obj.numel() * obj.element_size() == nbytes
            return ("value", obj.numpy().tobytes(), obj.dtype, tuple(obj.shape)) if whole \
                else None
        at = self.placed.get(storage.data_ptr())
        within = storage.data_ptr() - self.arena.data_ptr()
        if at is None and 0 <= within and within + nbytes <= self.arena.numel():
            # already written into the slot (NOTE [ A collate_fn's batch made in the
            # slot ] in detection/slot_collates.py): named in place, not copied
            at = self.placed[storage.data_ptr()] = within
            self.used = max(self.used, at + nbytes)
        elif at is None:
            at = -(-self.used // _ALIGN) * _ALIGN
            if at + nbytes > self.arena.numel():
                return None
            if self.reserve is not None:
                self.reserve(self.arena[at:at + nbytes].numpy())
            self.arena[at:at + nbytes].copy_(torch.empty(0, dtype=torch.uint8).set_(storage))
            self.placed[storage.data_ptr()] = at
            self.used = at + nbytes
        return ("slot", at, nbytes, obj.dtype, tuple(obj.shape), obj.stride(),
                obj.storage_offset())


class _Unpacker(pickle.Unpickler):
    def __init__(self, file, arena: torch.Tensor):
        super().__init__(file)
        self.arena = arena

    def persistent_load(self, pid):
        if pid[0] == "value":
            _, data, dtype, shape = pid
            if not data:
                return torch.empty(shape, dtype=dtype)
            return torch.frombuffer(bytearray(data), dtype=dtype).view(shape)
        _, at, nbytes, dtype, shape, stride, offset = pid
        region = self.arena[at:at + nbytes].view(dtype)
        return region.as_strided(shape, stride, region.storage_offset() + offset)


def pack(batch, arena: np.ndarray, reserve=None, written: int = 0) -> SlotBatch | None:
    """``batch`` pickled with its large tensors written into ``arena`` (uint8, flat)
    after its first ``written`` bytes (tensors of the batch already there are named in
    place), ``reserve`` called with each one's place first; None when none of them
    went there (the batch then travels as it is)."""
    buffer = io.BytesIO()
    packer = _Packer(buffer, arena, reserve, written)
    packer.dump(batch)
    if not packer.placed:  # nothing in the slot: torch's own pickling, as it is
        return None
    return SlotBatch(buffer.getvalue(), packer.used)


def unpack(packed: SlotBatch, arena: torch.Tensor):
    """The batch, its large tensors views of ``arena`` (the slot's bytes, flat)."""
    return _Unpacker(io.BytesIO(packed.data), arena).load()


def rows(packed: SlotBatch, row_bytes: int) -> int:
    """The slot's rows the batch uses."""
    return max(1, math.ceil(packed.used / row_bytes))


__all__ = ["MIN_BYTES", "SlotBatch", "pack", "rows", "unpack"]
