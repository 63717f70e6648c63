"""Stand-in images that hold no pixels, for code of torchvision's or the user's that
reads only an image's size: the v2 wrapper and target steps (``canvas``), and a
ConvertCocoPolysToMask that reads ``image.size`` (``SizeOnly``)."""
from __future__ import annotations

import torch
from torchvision import tv_tensors


def canvas(h: int, w: int) -> tv_tensors.Image:
    """A stand-in image of h x w: one zero byte, expanded."""
    return tv_tensors.Image(torch.zeros((), dtype=torch.uint8).expand(3, h, w))


class SizeOnly:
    """A stand-in PIL image of h x w: its ``size`` alone."""

    def __init__(self, h: int, w: int):
        self.size = (w, h)
