"""Getting batches to where the model is: pinned host memory, then the device.

``pin`` mirrors torch: pinned only where an accelerator exists.  ``DeviceFeed``
starts each batch's copy to the device on a side stream one batch ahead, so
the copy overlaps the training step; ``finish`` makes the consumer's stream
wait for it and marks the tensors as used there (so the caching allocator
does not recycle them early).
"""
from __future__ import annotations

import torch


def accelerator_available() -> bool:
    acc = getattr(torch, "accelerator", None)
    return bool(acc and acc.is_available())


class DeviceFeed:
    def __init__(self, device):
        self.device = torch.device(device)
        self.stream = None
        #: whether start() has read the host tensors when it returns (a copy from
        #: pageable memory to a CUDA device, or none): NOTE [ From the slot to the device ]
        self.reads_host_at_once = self.device.type in ("cuda", "cpu")
        if self.device.type == "cuda":
            self.stream = torch.cuda.Stream(self.device)

    def start(self, batch: list) -> list:
        if self.stream is None:
            return map_tensors(batch, lambda t: t.to(self.device, non_blocking=True))
        with torch.cuda.stream(self.stream):
            return map_tensors(batch, lambda t: t.to(self.device, non_blocking=True))

    def finish(self, moved: list) -> list:
        if self.stream is not None:
            current = torch.cuda.current_stream(self.device)
            current.wait_stream(self.stream)
            map_tensors(moved, lambda t: t.record_stream(current))
        return moved


def map_tensors(batch, fn):
    """``batch`` with fn applied to every tensor in it (lists, tuples, dicts)."""
    if isinstance(batch, torch.Tensor):
        return fn(batch)
    if isinstance(batch, (list, tuple)):
        return type(batch)(map_tensors(b, fn) for b in batch)
    if isinstance(batch, dict):
        return {k: map_tensors(v, fn) for k, v in batch.items()}
    return batch
