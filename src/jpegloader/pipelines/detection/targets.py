"""A detection batch's targets, packed in a worker and unpacked in the main process.

NOTE [ Packed targets ]
A target is a dict of boxes, labels, ids, masks and the JSON's own values.  Sent
as torch sends tensors, each small tensor would cost a shared-memory file and a
descriptor passed between processes; packed, a tensor travels by value as a
numpy array with its class and its tv_tensor metadata (a BoundingBoxes' format,
canvas_size, clamping_mode), and is rebuilt in the main process as the same
class with the same metadata.  Tensors above ``BY_VALUE_BYTES`` (masks of many
instances) stay tensors, in shared memory, as torch sends them.  Anything that
is not a tensor (ints, the JSON's lists) travels as it is.
"""
from __future__ import annotations

import torch

#: Larger tensors go through shared memory rather than the result pipe.
BY_VALUE_BYTES = 256 << 10


class _Packed:
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


def _pack_value(v):
    if isinstance(v, torch.Tensor) and v.device.type == "cpu" and not v.requires_grad \
            and v.nbytes <= BY_VALUE_BYTES and not v.is_sparse:
        return _Packed(v)
    return v


def pack(target):
    """A target (dict or other) ready to travel in a batch's report."""
    if isinstance(target, dict):
        return {k: _pack_value(v) for k, v in target.items()}
    return _pack_value(target)


def unpack(packed):
    """The target as the worker had it."""
    if isinstance(packed, dict):
        return {k: v.unpack() if isinstance(v, _Packed) else v for k, v in packed.items()}
    return packed.unpack() if isinstance(packed, _Packed) else packed


def zips(fn) -> bool:
    """Is ``fn`` the references' ``collate_fn``, ``tuple(zip(*batch))`` (it is cheap
    enough to run in the main process on the samples as they come out of the ring)?
    Tried on stand-in samples: the result must hold the very objects, in order."""
    samples = [(object(), object()) for _ in range(3)]
    try:
        result = fn(samples)
    except Exception:  # noqa: BLE001 - not a zip, then
        return False
    columns = ([s[0] for s in samples], [s[1] for s in samples])
    return isinstance(result, tuple) and len(result) == 2 and all(
        isinstance(got, tuple) and len(got) == 3 and all(a is b for a, b in zip(got, want))
        for got, want in zip(result, columns))


__all__ = ["BY_VALUE_BYTES", "pack", "unpack", "zips"]
