"""Per-sample random parameters of the SSD training transform, the C plans that
execute them, and their replay through the reference operations.

``draw_ssd`` resolves SSDCropping's mode and window, the flip and
ColorJitter's order and factors from the counter-based stream (keyed by
epoch seed and dataset index, so any ``num_workers`` gives the same batch),
with the reference's distributions:

* crop: a mode uniform over the seven options; per attempt w, h ~ U(0.3, 1),
  rejected unless 0.5 <= w/h <= 2, left ~ U(0, 1 - w), top ~ U(0, 1 - h);
  accepted when every box's IoU with the window is inside the mode's bounds
  and some box centre lies strictly inside; a new mode after
  ``crop_iterations`` failed attempts.  The trials are evaluated vectorised,
  a chunk at a time, and the first success (in stream order) is taken.
* flip with probability p; ColorJitter: a uniformly random order of the four
  adjustments and uniform factors in each configured range.

``replay_ssd`` applies resolved parameters with PIL and torchvision's
functional ops, exactly as the reference transform does: the per-sample
Python path and the tests' reference.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F

from ...decoders.jpeg import FILTERS
from ...decoders.plans import Geometry, to_plans
from ..colour import (
    colour_program,
    jitter_factors,
    jitter_image,
    jitter_steps,
    permutations,
)
from ..random_stream import uniforms
from . import boxes as B
from .lower import STANDARD_SAMPLE_OPTIONS, LoweredSSD

FLIP_SLOT, ORDER_SLOTS, FACTOR_SLOTS, CROP_FIRST_SLOT = 0, 1, 4, 8
TRIALS_PER_CHUNK = 16
MAX_TRIALS = 4096  # after this many failed modes (never seen in practice) keep the image


@dataclass
class SSDDraw:
    """Resolved parameters for n samples."""

    mode: np.ndarray     # int64[n]: index into sample_options; 0 keeps the whole image
    window: np.ndarray   # float64[n, 4]: left, top, w, h of the accepted crop
    flip: np.ndarray     # bool[n]
    order: np.ndarray    # int32[n, 4]: ColorJitter's adjustment at each step
    factors: np.ndarray  # float32[n, 4]: brightness, contrast, saturation, hue (NaN: absent)
    # per sample, its (boxes, labels) after the crop (None when not cropped): the
    # window was confirmed by computing them, so they are kept, not recomputed
    cropped: list[tuple[torch.Tensor, torch.Tensor] | None]


_MIN_IOU = np.array([np.nan] + [o[0] if o[0] is not None else -np.inf
                                for o in STANDARD_SAMPLE_OPTIONS[1:]], dtype=np.float32)


def _accepts(boxes: np.ndarray, left, top, w, h, min_iou) -> np.ndarray:
    """Which windows (arrays of equal shape) SSDCropping accepts for these
    boxes (float32[N, 4]), in the reference's float32 arithmetic."""
    right, bottom = left + w, top + h  # float64, as Python computes them
    win = np.stack([left, top, right, bottom], axis=-1).astype(np.float32)[..., None, :]
    b = boxes.astype(np.float32)
    lt = np.maximum(b[:, :2], win[..., :2])
    rb = np.minimum(b[:, 2:], win[..., 2:])
    wh = np.maximum(rb - lt, np.float32(0))
    inter = wh[..., 0] * wh[..., 1]
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    area_w = (win[..., 2] - win[..., 0]) * (win[..., 3] - win[..., 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        ious = inter / (area_b + area_w - inter)
        iou_ok = (ious > min_iou[..., None]).all(axis=-1)
    xc = np.float32(0.5) * (b[:, 0] + b[:, 2])
    yc = np.float32(0.5) * (b[:, 1] + b[:, 3])
    f32 = lambda v: v.astype(np.float32)[..., None]
    inside = ((xc > f32(left)) & (xc < f32(right)) & (yc > f32(top))
              & (yc < f32(bottom))).any(axis=-1)
    ratio = w / h
    return (ratio >= 0.5) & (ratio <= 2) & iou_ok & inside


def _draw_crop(boxes: np.ndarray, labels: torch.Tensor, seed: int, index: int,
               iterations: int) -> tuple[int, np.ndarray, tuple | None]:
    """(mode, window (left, top, w, h), (kept boxes, kept labels) or None)."""
    stride = 1 + 4 * iterations
    for start in range(0, MAX_TRIALS, TRIALS_PER_CHUNK):
        u = uniforms(seed, [index], TRIALS_PER_CHUNK * stride,
                     first=CROP_FIRST_SLOT + start * stride)[0].reshape(TRIALS_PER_CHUNK, stride)
        mode = np.minimum((u[:, 0] * 7).astype(np.int64), 6)
        a = u[:, 1:].reshape(TRIALS_PER_CHUNK, iterations, 4)
        w = 0.3 + 0.7 * a[..., 0]
        h = 0.3 + 0.7 * a[..., 1]
        left = a[..., 2] * (1.0 - w)
        top = a[..., 3] * (1.0 - h)
        ok = _accepts(boxes, left, top, w, h, np.broadcast_to(_MIN_IOU[mode][:, None], w.shape))
        for t in range(TRIALS_PER_CHUNK):
            if mode[t] == 0:
                return 0, np.zeros(4), None
            for k in np.flatnonzero(ok[t]):
                window = np.array([left[t, k], top[t, k], w[t, k], h[t, k]])
                # Confirm with the exact operations used on the boxes.
                kept = B.crop_boxes_c(torch.from_numpy(boxes), labels, *map(float, window))
                if kept[0].size(0):
                    return int(mode[t]), window, kept
    return 0, np.zeros(4), None


def draw_ssd(lowered: LoweredSSD, boxes: list[np.ndarray], labels: list[torch.Tensor],
             seed: int, indices) -> SSDDraw:
    n = len(boxes)
    u = uniforms(seed, indices, CROP_FIRST_SLOT)
    mode = np.zeros(n, dtype=np.int64)
    window = np.zeros((n, 4))
    cropped = []
    for i in range(n):
        mode[i], window[i], kept = _draw_crop(boxes[i], labels[i], seed, int(indices[i]),
                                              lowered.crop_iterations)
        cropped.append(kept)
    order = permutations(u[:, ORDER_SLOTS:ORDER_SLOTS + 3])
    factors = jitter_factors(lowered.jitter, u[:, FACTOR_SLOTS:FACTOR_SLOTS + 4])
    return SSDDraw(mode, window, u[:, FLIP_SLOT] < lowered.flip_p, order, factors, cropped)


def crop_pixels(window: np.ndarray, htot: int, wtot: int) -> tuple[int, int, int, int]:
    """The reference's integer crop box (left, top, right, bottom) for a window."""
    left, top, w, h = (float(v) for v in window)
    return (int(left * wtot), int(top * htot), int((left + w) * wtot), int((top + h) * htot))


def plans_for(lowered: LoweredSSD, d: SSDDraw | None, json_hw: np.ndarray,
              dct_scaling: bool, skip: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """C plans for a batch and each sample's image size after the crop (int64[n, 2])."""
    n = len(json_hw)
    out_hw = json_hw.astype(np.int64).copy()
    crop = np.zeros((n, 4), dtype=np.int64)  # x, y, w, h
    crop[:, 2], crop[:, 3] = json_hw[:, 1], json_hw[:, 0]
    if d is not None:
        for i in np.flatnonzero(d.mode > 0):
            x0, y0, x1, y1 = crop_pixels(d.window[i], *json_hw[i])
            crop[i] = (x0, y0, x1 - x0, y1 - y0)
            out_hw[i] = (y1 - y0, x1 - x0)
    h, w = lowered.size
    zeros = np.zeros(n, dtype=np.int64)
    flip = np.zeros(n, dtype=bool) if d is None else d.flip
    g = Geometry(crop[:, 0], crop[:, 1], crop[:, 2], crop[:, 3], np.full(n, w), np.full(n, h),
                 zeros, zeros, flip, np.zeros(n, dtype=bool),
                 np.full(n, FILTERS["bilinear"], dtype=np.int32))
    skip = skip | (crop[:, 2] <= 0) | (crop[:, 3] <= 0)
    colour = None if d is None else \
        colour_program(jitter_steps(np.ones(n, dtype=bool), d.order, d.factors), n)
    plans = to_plans(g, json_hw[:, 1], json_hw[:, 0], dct_scaling, skip=skip,
                     colour=colour)
    return plans, out_hw


def boxes_for(d: SSDDraw, k: int, bboxes: torch.Tensor,
              labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample k's boxes after its crop and flip (before encoding)."""
    if d.cropped[k] is not None:
        bboxes, labels = d.cropped[k]
    if d.flip[k]:
        bboxes = B.flip_boxes(bboxes)
    return bboxes, labels


def replay_image(lowered: LoweredSSD, tensor_stage, d: SSDDraw | None, k: int,
                 image: Image.Image, json_hw) -> torch.Tensor:
    """Sample k's image through PIL and torchvision with the drawn parameters."""
    if d is not None:
        if d.mode[k] > 0:
            image = image.crop(crop_pixels(d.window[k], *json_hw))
        if d.flip[k]:
            image = image.transpose(Image.FLIP_LEFT_RIGHT)
    image = F.resize(image, list(lowered.size), InterpolationMode.BILINEAR, antialias=True)
    if d is not None:
        image = jitter_image(image, d.order[k], d.factors[k])
    for t in tensor_stage:
        image = t(image)
    return image
