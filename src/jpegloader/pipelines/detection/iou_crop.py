"""RandomIoUCrop's make_params (torchvision v2) with its box arithmetic in numpy.

NOTE [ RandomIoUCrop's draws, fast ]
RandomIoUCrop redraws until a window keeps enough of the boxes: tens of trials per
sample, each a dozen small torch operations, about 3 ms per sample after a zoom-out.
``params`` keeps every draw a torch draw (the same calls, in the same order, on the
same generator) and does the arithmetic in numpy in float32, step for step as
make_params does it, so it returns the same window.  ``agrees`` runs both on random
boxes and sizes once per object and the loader uses this only where they agree
(tests/pipelines/detection/ check them on the real boxes too).
"""
from __future__ import annotations

import weakref

import numpy as np
import torch
from torchvision import tv_tensors
from torchvision.transforms.v2 import functional as F

from ..random_stream import generators_kept
from ..stand_ins import canvas

_F32 = np.float32


def xyxy(boxes: tv_tensors.BoundingBoxes) -> np.ndarray:
    """The boxes in XYXY as make_params converts them."""
    return F.convert_bounding_box_format(boxes.as_subclass(torch.Tensor), boxes.format,
                                         tv_tensors.BoundingBoxFormat.XYXY).numpy()


def params(t, boxes: np.ndarray, h: int, w: int) -> dict:
    """``t.make_params`` for an h x w image and its XYXY ``boxes`` (numpy)."""
    dt = boxes.dtype.type
    scale0, span = _F32(t.min_scale), _F32(t.max_scale - t.min_scale)
    cx = dt(0.5) * (boxes[:, 0] + boxes[:, 2])
    cy = dt(0.5) * (boxes[:, 1] + boxes[:, 3])
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    while True:
        min_overlap = t.options[int(torch.randint(low=0, high=len(t.options), size=(1,)))]
        if min_overlap >= 1.0:
            return {}
        for _ in range(t.trials):
            r = scale0 + span * torch.rand(2).numpy()
            new_w, new_h = int(_F32(w) * r[0]), int(_F32(h) * r[1])
            if not (t.min_aspect_ratio <= new_w / new_h <= t.max_aspect_ratio):
                continue
            r = torch.rand(2).numpy()
            left, top = int(_F32(w - new_w) * r[0]), int(_F32(h - new_h) * r[1])
            right, bottom = left + new_w, top + new_h
            if left == right or top == bottom:
                continue
            inside = (dt(left) < cx) & (cx < dt(right)) & (dt(top) < cy) & (cy < dt(bottom))
            if not inside.any():
                continue
            if _max_iou(boxes[inside], area[inside], left, top, right, bottom) < dt(min_overlap):
                continue
            return {"top": top, "left": left, "height": new_h, "width": new_w,
                    "is_within_crop_area": torch.from_numpy(inside)}


def _max_iou(boxes, area, left, top, right, bottom):
    """torchvision's box_iou of each box with the window, its largest: in the boxes' type,
    in its order of operations."""
    dt = boxes.dtype.type
    window = np.array([left, top, right, bottom], dtype=boxes.dtype)
    window_area = (window[2] - window[0]) * (window[3] - window[1])
    lt = np.maximum(boxes[:, :2], window[:2])
    rb = np.minimum(boxes[:, 2:], window[2:])
    wh = np.maximum(rb - lt, dt(0))
    inter = wh[:, 0] * wh[:, 1]
    return (inter / (area + window_area - inter)).max()


_AGREES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def agrees(t, trials: int = 32) -> bool:
    """Whether ``params`` gives ``t.make_params``' windows for random boxes and sizes (once
    per object)."""
    if t in _AGREES:
        return _AGREES[t]
    rng = np.random.default_rng(0)
    ok = True
    with generators_kept():
        for k in range(trials):
            h, w = (int(v) for v in rng.integers(16, 2000, 2))
            n = int(rng.integers(1, 12))
            x0, y0 = rng.uniform(0, w - 1, n), rng.uniform(0, h - 1, n)
            raw = np.stack([x0, y0, rng.uniform(x0 + 0.5, w), rng.uniform(y0 + 0.5, h)], 1)
            boxes = tv_tensors.BoundingBoxes(torch.tensor(raw, dtype=torch.float32),
                                             format="XYXY", canvas_size=(h, w))
            image = canvas(h, w)
            torch.manual_seed(k)
            theirs = t.make_params([image, boxes])
            torch.manual_seed(k)
            ours = params(t, xyxy(boxes), h, w)
            if theirs.keys() != ours.keys() or any(
                    not torch.equal(v, ours[key]) if isinstance(v, torch.Tensor) else
                    v != ours[key] for key, v in theirs.items()):
                ok = False
                break
    _AGREES[t] = ok
    return ok
