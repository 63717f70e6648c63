"""Stand-in images that hold no pixels, for code of torchvision's, Ultralytics' or the
user's that reads only an image's size, every pipeline's from here: torchvision's v2
wrapper and target steps (``canvas``, a tv_tensors.Image), Ultralytics' label code
(``opencv_image``, an array as cv2 holds one), a ConvertCocoPolysToMask that reads
``image.size`` (``SizeOnly``), and a collate_fn's image before the batch's own is set
(``EMPTY``)."""
from __future__ import annotations

import numpy as np
import torch
from torchvision import tv_tensors

#: An image with no pixels at all.
EMPTY = torch.empty(0, dtype=torch.uint8)


def canvas(h: int, w: int) -> tv_tensors.Image:
    """A 3 x h x w stand-in image: one zero byte, expanded."""
    return tv_tensors.Image(torch.zeros((), dtype=torch.uint8).expand(3, h, w))


def opencv_image(h: int, w: int) -> np.ndarray:
    """An h x w x 3 stand-in image: one zero byte, broadcast (read-only)."""
    return np.broadcast_to(np.zeros((), np.uint8), (h, w, 3))


class SizeOnly:
    """A stand-in PIL image of h x w: its ``size`` alone."""

    def __init__(self, h: int, w: int):
        self.size = (w, h)
