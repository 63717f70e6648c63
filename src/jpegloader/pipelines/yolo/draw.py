"""Each sample's geometry, from its image size and the user's LetterBox: no random
draws in validation, the size ``load_image`` resizes it to and the letterbox around
it; and the C core's plan for it."""
from __future__ import annotations

import math

import numpy as np

from ...decoders.jpeg import FILTER_OPENCV_LINEAR, PAD_MODES
from ...decoders.plans import Geometry, to_plans
from ..stand_ins import opencv_image
from .recognise import YoloSource, imgsz


def resized_hw(dataset, h0: int, w0: int) -> tuple[int, int]:
    """The size ``load_image`` gives an h0 x w0 photo: scaled by imgsz over its long
    side, each side rounded up and held to imgsz; as it is where the long side is
    imgsz already (the scale computed first, as a float, then applied to each side)."""
    size = imgsz(dataset)
    if max(h0, w0) == size:
        return h0, w0
    scale = size / max(h0, w0)
    h, w = (min(size, math.ceil(side * scale)) for side in (h0, w0))
    return h, w


def letterbox_params(source: YoloSource, index: int, h: int, w: int) -> dict:
    """The user's LetterBox's parameters for sample ``index`` at h x w."""
    labels = {"img": opencv_image(h, w)}
    if source.dataset.rect:
        labels["rect_shape"] = rect_shape(source.dataset, index)
    return source.letterbox.get_params(labels)


def rect_shape(dataset, index: int):
    return dataset.batch_shapes[dataset.batch[index]]


def rect_hw(dataset, index: int) -> tuple[int, int]:
    """Sample ``index``'s rect batch shape as (h, w) ints."""
    h, w = rect_shape(dataset, index)
    return int(h), int(w)


def padded_hw(params: dict) -> tuple[int, int]:
    """The letterboxed image's (height, width)."""
    w, h = params["new_unpad"]
    return h + params["top"] + params["bottom"], w + params["left"] + params["right"]


def letterbox_plans(photos: list[tuple[tuple[int, int], tuple[int, int], dict]],
                    fill: int) -> np.ndarray:
    """A plan for each (size, resized size, LetterBox parameters) of ``photos``: the
    whole image of that size (h, w), resized to the second with OpenCV's INTER_LINEAR
    as ``load_image`` resizes it, padded with ``fill`` into its letterbox (NOTE [ A
    letterbox ] in csrc/letterbox.c); built for all of them at once."""
    n = len(photos)
    sizes = np.array([(*ori, *resized) for ori, resized, _ in photos], np.int64).reshape(n, 4)
    pads = np.array([(p["left"], p["top"], *padded_hw(p)) for _, _, p in photos],
                    np.int64).reshape(n, 4)
    h, w, rh, rw = sizes.T
    zero = np.zeros(n, np.int64)
    g = Geometry(zero, zero, w, h, rw, rh, zero, zero, np.zeros(n, bool), np.zeros(n, bool),
                 np.full(n, FILTER_OPENCV_LINEAR, np.int32), pad_mode=PAD_MODES["constant"],
                 pad_fill=fill, pad_x=pads[:, (0, 3)], pad_y=pads[:, (1, 2)])
    return to_plans(g, w, h, dct_scaling=False)
