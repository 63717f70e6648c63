"""Tensors sent from a worker to the main process by value: a detection target's,
a YOLO sample's labels.

NOTE [ Packed targets ]
A target is a dict of boxes, labels, ids, masks and the JSON's own values (a YOLO
sample's: classes, boxes, segments, masks).  Sent as torch sends tensors, each small
tensor would cost a shared-memory file and a descriptor passed between processes;
packed, a tensor travels by value as a numpy array with its class and its tv_tensor
metadata (a BoundingBoxes' format, canvas_size, clamping_mode), and is rebuilt in the
main process as the same class with the same metadata.  Detection's tensors above
``BY_VALUE_BYTES`` (masks of many instances) stay tensors, in shared memory, as torch
sends them; YOLO's labels all go by value.  Anything that is not a tensor (ints, the
JSON's lists) travels as it is.
"""
from __future__ import annotations

import torch

#: Larger tensors go through shared memory rather than the result pipe.
BY_VALUE_BYTES = 256 << 10


class ByValue:
    """One tensor by value: its numpy array, class and tv_tensor metadata."""

    __slots__ = ("array", "cls", "meta")

    def __init__(self, t: torch.Tensor):
        self.array = t.detach().as_subclass(torch.Tensor).numpy()
        self.cls = type(t)
        self.meta = dict(t.__dict__) if self.cls is not torch.Tensor else None

    def __getstate__(self):
        return self.array, self.cls, self.meta

    def __setstate__(self, state):
        self.array, self.cls, self.meta = state

    def unpack(self) -> torch.Tensor:
        t = torch.from_numpy(self.array)
        if self.cls is torch.Tensor:
            return t
        t = t.as_subclass(self.cls)
        t.__dict__.update(self.meta)
        return t


def _pack_value(v, limit: int | None):
    if isinstance(v, torch.Tensor) and v.device.type == "cpu" and not v.requires_grad \
            and (limit is None or v.nbytes <= limit) and not v.is_sparse:
        return ByValue(v)
    return v


def pack(target, limit: int | None = BY_VALUE_BYTES):
    """A target (dict or other) ready to travel in a batch's report: its tensors of
    at most ``limit`` bytes (None: all of them) by value."""
    if isinstance(target, dict):
        return {k: _pack_value(v, limit) for k, v in target.items()}
    return _pack_value(target, limit)


def unpack(packed):
    """The target as the worker had it."""
    if isinstance(packed, dict):
        return {k: v.unpack() if isinstance(v, ByValue) else v for k, v in packed.items()}
    return packed.unpack() if isinstance(packed, ByValue) else packed
