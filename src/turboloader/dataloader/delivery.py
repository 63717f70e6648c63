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
        if self.device.type == "cuda":
            self.stream = torch.cuda.Stream(self.device)

    def start(self, batch: list[torch.Tensor]) -> list[torch.Tensor]:
        if self.stream is None:
            return [t.to(self.device, non_blocking=True) for t in batch]
        with torch.cuda.stream(self.stream):
            return [t.to(self.device, non_blocking=True) for t in batch]

    def finish(self, moved: list[torch.Tensor]) -> list[torch.Tensor]:
        if self.stream is not None:
            current = torch.cuda.current_stream(self.device)
            current.wait_stream(self.stream)
            for t in moved:
                t.record_stream(current)
        return moved
